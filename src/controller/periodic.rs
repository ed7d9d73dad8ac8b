//! The active controller's periodic tasks (Kafka's `PeriodicTaskControlManager` and the
//! events it schedules): fencing brokers whose session expired, the preferred-leader
//! balancing, the expired delegation-token sweep. Each writes its records through the one
//! write path with no reply; `QuorumController::handle_timeout` runs them and
//! `poll_timeout` says when they are next due.
//!
//! ```text
//!   any write, leaders imbalanced ─▶ balancing due after leader.imbalance.check.interval
//!        ─▶ handle_timeout past it ─▶ preferred elections (≤ 1,000; more: again in 10 ms)
//!   session expired ─▶ first expired entry in Kafka's map order fenced (its own batch) or
//!        dropped ─▶ the next run 10 ms later (Kafka's maybeFenceStaleBroker)
//!   token sweep due ─▶ RemoveDelegationTokenRecord per expired token, next sweep scheduled
//!   any write, some partition leaderless ─▶ unclean elections due after
//!        unclean.leader.election.interval.ms ─▶ UNCLEAN election of each leaderless partition
//!        whose topic allows it (≤ 1,000; more: again in 10 ms)
//! ```

use super::active::ActiveController;
use super::config::ControllerConfig;
use super::delegation_tokens;
use super::io::MetadataAppender;
use super::replication;
use crate::metadata::image::MetadataImage;

/// Kafka's delay of a balancing run rescheduled at once (10 ms, so that queued events go
/// first).
const BALANCE_AGAIN_MS: u64 = 10;

/// Kafka's delay of the stale-broker fencing after a run that found an expired entry (the
/// `PeriodicTask` default immediate period, 10 ms).
const FENCE_AGAIN_MS: u64 = 10;

impl ActiveController {
    /// Kafka 4.1's periodic `maybeFenceStaleBroker`: takes the first expired contact entry
    /// (in the order of Kafka's tracker map) and fences its broker, or drops the entry when it
    /// is of an unknown broker or an older epoch. Having found one, the task runs again only
    /// 10 ms later, so a second expired entry waits for that run even when the first was
    /// dropped without records (a heartbeat meanwhile still saves its broker).
    pub(super) fn fence_stale_brokers(
        &mut self,
        now_ms: u64,
        cfg: &ControllerConfig,
        appender: &mut dyn MetadataAppender,
    ) {
        if self.fence_again_at_ms.is_some_and(|at| now_ms < at) || self.lost_leadership {
            return;
        }
        self.fence_again_at_ms = None;
        let Some((broker_id, epoch)) = self
            .heartbeats
            .remove_first_expired(now_ms, cfg.broker_session_timeout_ms)
        else {
            return;
        };
        self.fence_again_at_ms = Some(now_ms + FENCE_AGAIN_MS);
        // Kafka 4.1's maybeFenceOneStaleBroker drops an entry of an unknown broker or of an
        // older epoch, and fences any other, also one already fenced (a fenced broker that
        // heartbeated and then went quiet gets its fencing record again).
        let current = self.image.brokers.get(&broker_id);
        match current {
            Some(b) if b.broker_epoch == epoch => {}
            _ => return,
        }
        tracing::info!(
            "Fencing broker {broker_id} at epoch {epoch} because its session has timed out."
        );
        let records = replication::broker_fenced(&self.image, cfg, broker_id);
        self.heartbeats.fence(broker_id);
        self.write_unanswered(appender, records);
    }

    /// After a write (Kafka's `maybeScheduleNextBalancePartitionLeaders`): with balancing on,
    /// none due yet and some partition not led by its preferred replica, the balancing is due
    /// after the check interval (10 ms when the last run hit its limit).
    pub(super) fn maybe_schedule_balance(&mut self, now_ms: u64, cfg: &ControllerConfig) {
        if self.balance_at_ms.is_some() || self.balanced_at_offset == Some(self.last_write_offset) {
            return;
        }
        let Some(interval_ms) = cfg.leader_imbalance_check_interval_ms() else {
            return;
        };
        if !replication::are_partition_leaders_imbalanced(&self.image) {
            self.balanced_at_offset = Some(self.last_write_offset);
            return;
        }
        let delay_ms = if self.balance_again_soon {
            BALANCE_AGAIN_MS
        } else {
            interval_ms
        };
        self.balance_at_ms = Some(now_ms.saturating_add(delay_ms));
    }

    /// After a write (Kafka's `maybeScheduleNextElectUncleanLeaders`): with some partition
    /// leaderless and no run due yet, the unclean elections are due after
    /// `unclean.leader.election.interval.ms` (10 ms when the last run hit its limit). Kafka
    /// reschedules with its earliest-deadline rule, so a run already due keeps its time.
    pub(super) fn maybe_schedule_unclean(&mut self, now_ms: u64, cfg: &ControllerConfig) {
        if self.unclean_at_ms.is_some() || self.image.partition_stats.offline == 0 {
            return;
        }
        let delay_ms = if self.unclean_again_soon {
            BALANCE_AGAIN_MS
        } else {
            cfg.unclean_leader_election_interval_ms
        };
        self.unclean_at_ms = Some(now_ms.saturating_add(delay_ms));
    }

    /// The unclean elections, when due by `now_ms` (Kafka's `maybeElectUncleanLeaders`
    /// event): their records written unanswered, the next run scheduled if partitions stay
    /// leaderless.
    pub(super) fn maybe_elect_unclean(
        &mut self,
        now_ms: u64,
        cfg: &ControllerConfig,
        appender: &mut dyn MetadataAppender,
    ) {
        if self.lost_leadership || self.unclean_at_ms.is_none_or(|at| at > now_ms) {
            return;
        }
        self.unclean_at_ms = None;
        let result = replication::elect_unclean_leaders(
            &self.image,
            cfg,
            replication::elect_leaders::MAX_ELECTIONS_PER_IMBALANCE,
        );
        tracing::info!(
            "maybeElectUncleanLeaders: generated {} records.{}",
            result.records.len(),
            if result.response {
                " Rescheduling immediately."
            } else {
                ""
            }
        );
        self.unclean_again_soon = result.response;
        self.write_unanswered(appender, result.records);
        self.maybe_schedule_unclean(now_ms, cfg);
    }

    /// Schedules the expired-token sweep one check interval from `now_ms` when tokens are on
    /// and the image's metadata.version holds them (Kafka's
    /// `maybeScheduleNextExpiredDelegationTokenSweep`).
    pub(super) fn maybe_schedule_token_sweep(&mut self, now_ms: u64, cfg: &ControllerConfig) {
        let tokens = cfg.delegation_tokens.as_ref();
        self.token_sweep_at_ms = delegation_tokens::sweep_enabled(&self.image, tokens)
            .then(|| tokens.map(|t| now_ms.saturating_add(t.expiry_check_interval_ms)))
            .flatten();
    }

    /// The sweep, when due by `now_ms`: a RemoveDelegationTokenRecord for every committed
    /// token past its expiry, written unanswered; the next sweep scheduled first.
    pub(super) fn maybe_sweep_tokens(
        &mut self,
        now_ms: u64,
        cfg: &ControllerConfig,
        committed: &MetadataImage,
        appender: &mut dyn MetadataAppender,
    ) {
        if self.lost_leadership || self.token_sweep_at_ms.is_none_or(|at| at > now_ms) {
            return;
        }
        self.maybe_schedule_token_sweep(now_ms, cfg);
        let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
        let records = delegation_tokens::sweep_expired(committed, now);
        self.write_unanswered(appender, records);
    }

    /// The balancing, when due by `now_ms` (Kafka's `maybeBalancePartitionLeaders` event):
    /// preferred elections, their records written unanswered.
    pub(super) fn maybe_balance(
        &mut self,
        now_ms: u64,
        cfg: &ControllerConfig,
        appender: &mut dyn MetadataAppender,
    ) {
        if self.lost_leadership || self.balance_at_ms.is_none_or(|at| at > now_ms) {
            return;
        }
        self.balance_at_ms = None;
        let result = replication::balance_partition_leaders(
            &self.image,
            cfg,
            replication::elect_leaders::MAX_ELECTIONS_PER_IMBALANCE,
        );
        tracing::info!(
            "maybeBalancePartitionLeaders: generated {} records.{}",
            result.records.len(),
            if result.response {
                " Rescheduling immediately."
            } else {
                ""
            }
        );
        self.balance_again_soon = result.response;
        self.write_unanswered(appender, result.records);
        self.maybe_schedule_balance(now_ms, cfg);
    }
}
