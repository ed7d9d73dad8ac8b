//! The kraft.version upgrade on the leader (KIP-853: a static quorum becomes dynamic; Kafka
//! 4.1's `KafkaRaftClient.upgradeKRaftVersion` and `LeaderState.maybeAppendUpgradedKRaftVersion`).
//!
//! ```text
//!   controller (UpdateFeatures kraft.version=N, UPGRADE) ─▶ upgrade_kraft_version(epoch, N)
//!     leader? ─▶ epoch current? ─▶ upgrade appended in this epoch? ─▶ already N? downgrade?
//!     ─▶ volatile voters (kraft.version 0) ─▶ same ids as the log's ─▶ all support N
//!     ─▶ all have a directory id ─▶ [validate only: stop] ─▶ control batch
//!        [KRaftVersionRecord N, VotersRecord of the volatile voters if they differ]
//! ```
//!
//! The batch takes effect when appended (the voter history applies it at once), so AddRaftVoter
//! and RemoveRaftVoter see kraft.version N right away; like any batch it is lost if the epoch
//! ends before it commits. The controller answers UpdateFeatures only once its own record,
//! written after this batch, is committed.

use super::core::RaftCore;
use super::errors::UpgradeKRaftVersionError;
use super::log::LogReader;
use super::state::{KRaftVersionUpgrade, Role};
use super::types::VoterSet;
use super::voter_changes::LOCAL_KRAFT_VERSION_MAX;
use super::voters::voter_set_to_record;
use crate::records::control::ControlRecord;

/// Kafka's `KRaftVersion` as its enum name prints (`KRAFT_VERSION_1`).
fn kraft_version_name(level: i16) -> String {
    format!("KRAFT_VERSION_{level}")
}

/// Voter ids as Kafka prints a `Set<Integer>` of small ids (ascending).
fn ids_text(voters: &VoterSet) -> String {
    let ids: Vec<String> = voters.ids().map(|id| id.to_string()).collect();
    format!("[{}]", ids.join(", "))
}

impl RaftCore {
    /// Upgrades kraft.version to `version` as the leader of `epoch`: appends the control batch
    /// (unless `validate_only`) and returns whether it did; `Ok(false)` when there is nothing
    /// to do (already at `version`, or the same upgrade already appended). The checks and
    /// messages are Kafka 4.1's, in its order.
    pub fn upgrade_kraft_version(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        epoch: i32,
        version: i16,
        validate_only: bool,
    ) -> Result<bool, UpgradeKRaftVersionError> {
        self.now_ms = self.now_ms.max(now_ms);
        self.begin_call(log);
        let result =
            self.maybe_append_upgraded_kraft_version(now_ms, log, epoch, version, validate_only);
        self.poll_roles(now_ms, log);
        result
    }

    fn maybe_append_upgraded_kraft_version(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        epoch: i32,
        version: i16,
        validate_only: bool,
    ) -> Result<bool, UpgradeKRaftVersionError> {
        if !(0..=LOCAL_KRAFT_VERSION_MAX).contains(&version) {
            // Kafka's controller turns the level into a KRaftVersion first
            // (`KRaftVersion.fromFeatureLevel`); it has checked the range before, so this is
            // for other callers.
            return Err(UpgradeKRaftVersionError::IllegalArgument(format!(
                "Unknown KRaft feature level: {version}"
            )));
        }
        let Role::Leader(l) = &self.role else {
            return Err(UpgradeKRaftVersionError::NotLeader(
                "Upgrade kraft version failed because the replica is not the current leader".into(),
            ));
        };
        // LeaderState.validateEpoch.
        if epoch < l.epoch {
            return Err(UpgradeKRaftVersionError::NotLeader(format!(
                "Upgrade kraft version failed because the given epoch {epoch} is stale. Current leader epoch is {}",
                l.epoch
            )));
        }
        if epoch > l.epoch {
            return Err(UpgradeKRaftVersionError::IllegalArgument(format!(
                "Attempt to append from epoch {epoch} which is larger than the current epoch of {}",
                l.epoch
            )));
        }
        let requested = kraft_version_name(version);
        if let KRaftVersionUpgrade::Version(pending) = l.kraft_upgrade {
            if pending == version {
                return Ok(false);
            }
            return Err(UpgradeKRaftVersionError::InvalidUpdateVersion(format!(
                "Invalid concurrent upgrade of kraft.version from version Version[kraftVersion={}] to {requested}",
                kraft_version_name(pending)
            )));
        }
        let persisted = self.history.kraft_version();
        if persisted == version {
            return Ok(false);
        }
        if persisted > version {
            return Err(UpgradeKRaftVersionError::InvalidUpdateVersion(format!(
                "Invalid upgrade of kraft.version from version {} to {requested} because the new version is a downgrade",
                kraft_version_name(persisted)
            )));
        }
        let Some(voters) = l.kraft_upgrade.voters().cloned() else {
            return Err(UpgradeKRaftVersionError::InvalidUpdateVersion(format!(
                "Invalid upgrade of kraft.version from version {} to {requested}",
                kraft_version_name(persisted)
            )));
        };
        let persisted_voters = self.history.voters().clone();
        if !voters.ids().eq(persisted_voters.ids()) {
            return Err(UpgradeKRaftVersionError::IllegalState(format!(
                "Unable to update kraft.version to {requested} due to missing voters {} compared to {}",
                ids_text(&voters),
                ids_text(&persisted_voters)
            )));
        }
        if !voters.supports_kraft_version(version) {
            tracing::info!(
                node_id = self.local.id,
                "Not all voters support kraft version {requested}: {voters:?}"
            );
            return Err(UpgradeKRaftVersionError::InvalidUpdateVersion(format!(
                "Invalid upgrade of kraft.version to {requested} because not all of the voters support it"
            )));
        }
        if voters.nodes().any(|n| n.key.directory_id.is_nil()) {
            return Err(UpgradeKRaftVersionError::IllegalState(format!(
                "Directory id must be known for all of the voters: {}",
                voters.java_voter_keys_string()
            )));
        }
        if validate_only {
            return Ok(true);
        }
        if let Role::Leader(l) = &mut self.role {
            l.kraft_upgrade = KRaftVersionUpgrade::Version(version);
        }
        let mut records = vec![ControlRecord::kraft_version(version)];
        if voters != persisted_voters {
            records.push(ControlRecord::Voters(voter_set_to_record(&voters)));
        }
        tracing::info!(
            node_id = self.local.id,
            "Appending kraft.version {requested} with {} voters record(s) to the log",
            records.len() - 1
        );
        match self.append_control_records(now_ms, log, &records) {
            Some(_) => Ok(true),
            None => Err(UpgradeKRaftVersionError::IllegalState(
                "cannot build the kraft.version control batch".into(),
            )),
        }
    }

    /// Kafka's `RaftClient.resign(epoch)`: the leader of `epoch` steps down at once (the
    /// controller fails over after an unexpected error); otherwise nothing happens.
    pub fn resign(&mut self, now_ms: u64, log: &dyn LogReader, epoch: i32) {
        self.now_ms = self.now_ms.max(now_ms);
        self.begin_call(log);
        if matches!(&self.role, Role::Leader(l) if l.epoch == epoch) {
            tracing::info!(
                node_id = self.local.id,
                "Resigning from epoch {epoch} as asked"
            );
            self.transition_to_resigned(now_ms, log);
        }
        self.poll_roles(now_ms, log);
    }
}
