//! What a new leader appends before anything else, from its image alone (Kafka 4.1's
//! `ActivationRecordsGenerator`), once it has replayed everything committed before its epoch.
//!
//! ```text
//!   image without metadata.version (empty log, or only an unfinished bootstrap):
//!     [AbortTransaction "Controller failover"]   if a transaction is open
//!     [BeginTransaction "Bootstrap records"]     if the bootstrap metadata.version has them
//!     bootstrap records (bootstrap.checkpoint / the 0-0 snapshot)
//!     [ConfigRecord BROKER "" min.insync.replicas]  if eligible.leader.replicas.version ≥ 1
//!     [EndTransaction]
//!   image with metadata.version:
//!     [AbortTransaction "Controller failover"]   if a transaction is open
//! ```

use bytes::Bytes;

use crate::common::release::METADATA_VERSION_FEATURE;
use crate::metadata::image::{transactions_supported, MetadataImage, ELR_FEATURE};
use crate::metadata::record::MetadataRecord;
use crate::metadata::records::{
    AbortTransactionRecord, BeginTransactionRecord, ConfigRecord, EndTransactionRecord,
};
use crate::metadata::MetadataError;
use crate::records::feature_level::parse_feature_level_record;

/// `ConfigResource.Type` id of a broker (the empty name is the cluster default).
const BROKER_RESOURCE: i8 = 4;

/// Why activation cannot go on (Kafka throws and the controller does not activate).
#[derive(Debug, thiserror::Error)]
pub enum ActivationError {
    /// An open transaction under a metadata.version without transactions.
    #[error(
        "Detected an in-progress metadata transaction, but metadata.version {0} does not \
         support transactions. Cannot continue."
    )]
    TransactionsUnsupported(i16),
    /// The bootstrap records name no metadata.version.
    #[error("the bootstrap records set no metadata.version")]
    NoBootstrapMetadataVersion,
    /// A record could not be encoded.
    #[error(transparent)]
    Encode(#[from] MetadataError),
}

/// The records to append and the message Kafka logs with them ("Performing controller
/// activation. …"); `None` when there is nothing to append.
pub fn activation_records(
    image: &MetadataImage,
    bootstrap: &[Bytes],
    min_insync_replicas: i32,
) -> Result<Option<(Vec<Bytes>, String)>, ActivationError> {
    let in_transaction = image.open_transaction.is_some();
    let abort = || {
        encode(MetadataRecord::AbortTransaction(AbortTransactionRecord {
            reason: Some("Controller failover".into()),
            ..Default::default()
        }))
    };
    if let Some(level) = image.metadata_version() {
        if !in_transaction {
            return Ok(None);
        }
        if !transactions_supported(level) {
            return Err(ActivationError::TransactionsUnsupported(level));
        }
        return Ok(Some((
            vec![abort()?],
            "Performing controller activation. Aborting in-progress metadata transaction.".into(),
        )));
    }
    if bootstrap.is_empty() {
        return Ok(None);
    }
    let feature = |name: &str| {
        bootstrap
            .iter()
            .filter_map(|v| parse_feature_level_record(v))
            .find(|(n, _)| n == name)
            .map(|(_, level)| level)
    };
    let level =
        feature(METADATA_VERSION_FEATURE).ok_or(ActivationError::NoBootstrapMetadataVersion)?;
    let transactional = transactions_supported(level);
    let mut records = Vec::new();
    let mut message = String::from("Performing controller activation. ");
    if in_transaction {
        if !transactional {
            return Err(ActivationError::TransactionsUnsupported(level));
        }
        message.push_str(&format!(
            "Aborting partial bootstrap records transaction. Re-appending {} bootstrap record(s) \
             in new metadata transaction ",
            bootstrap.len()
        ));
        records.push(abort()?);
    } else {
        message.push_str(&format!(
            "The metadata log appears to be empty. Appending {} bootstrap record(s) ",
            bootstrap.len()
        ));
        if transactional {
            message.push_str("in metadata transaction ");
        }
    }
    message.push_str(&format!("at metadata.version level {level}."));
    if transactional {
        records.push(encode(MetadataRecord::BeginTransaction(
            BeginTransactionRecord {
                name: Some("Bootstrap records".into()),
                ..Default::default()
            },
        ))?);
    }
    records.extend(bootstrap.iter().cloned());
    if feature(ELR_FEATURE).is_some_and(|l| l > 0) {
        records.push(encode(MetadataRecord::Config(ConfigRecord {
            resource_type: BROKER_RESOURCE,
            resource_name: String::new(),
            name: "min.insync.replicas".into(),
            value: Some(min_insync_replicas.to_string()),
            ..Default::default()
        }))?);
    }
    if transactional {
        records.push(encode(MetadataRecord::EndTransaction(
            EndTransactionRecord::default(),
        ))?);
    }
    Ok(Some((records, message)))
}

fn encode(record: MetadataRecord) -> Result<Bytes, MetadataError> {
    record.encode_at(0).map(Bytes::from)
}

impl super::QuorumController {
    pub(super) fn activate(
        &mut self,
        now_ms: u64,
        epoch: i32,
        appender: &mut dyn super::io::MetadataAppender,
    ) {
        let mut active = super::active::ActiveController::new(
            epoch,
            &self.committed,
            &self.registration_offsets,
            now_ms,
            !self.cfg.release.guards_last_known_leader(),
        );
        match activation_records(
            &self.committed,
            &self.bootstrap,
            self.cfg.min_insync_replicas,
        ) {
            Ok(Some((records, message))) => {
                tracing::info!("{message}");
                if let Err(e) = active.write_records(appender, records) {
                    tracing::error!("Controller activation failed: {e}");
                    return;
                }
            }
            Ok(None) => {}
            // Kafka's controller does not activate then; the node keeps leading the quorum.
            Err(e) => {
                tracing::error!("Controller activation failed: {e}");
                return;
            }
        }
        tracing::info!(
            "Becoming the active controller at epoch {epoch}, next write offset {}",
            appender.next_write_offset().unwrap_or(-1)
        );
        // Kafka schedules the periodic tasks once the activation records are applied.
        active.maybe_schedule_balance(now_ms, &self.cfg);
        active.maybe_schedule_unclean(now_ms, &self.cfg);
        active.maybe_schedule_token_sweep(now_ms, &self.cfg);
        self.leadership = super::Leadership::Active(Box::new(active));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::feature_level::feature_level_record;

    fn bootstrap(mv: i16, elr: i16) -> Vec<Bytes> {
        vec![
            Bytes::from(feature_level_record(METADATA_VERSION_FEATURE, mv)),
            Bytes::from(feature_level_record(ELR_FEATURE, elr)),
        ]
    }

    fn names(records: &[Bytes]) -> Vec<&'static str> {
        records
            .iter()
            .map(|r| MetadataRecord::decode(r).unwrap().name())
            .collect()
    }

    /// ActivationRecordsGeneratorTest.testActivationMessageForEmptyLog with ELR (4.1's
    /// default): bootstrap records in a transaction, plus the cluster min.insync.replicas.
    #[test]
    fn test_activation_for_empty_log_with_elr() {
        let (records, message) = activation_records(&MetadataImage::new(), &bootstrap(27, 1), 2)
            .unwrap()
            .unwrap();
        assert_eq!(
            names(&records),
            [
                "BeginTransactionRecord",
                "FeatureLevelRecord",
                "FeatureLevelRecord",
                "ConfigRecord",
                "EndTransactionRecord"
            ]
        );
        assert!(message.contains(
            "appears to be empty. Appending 2 bootstrap record(s) in metadata transaction"
        ));
        let MetadataRecord::Config(c) = MetadataRecord::decode(&records[3]).unwrap() else {
            panic!("not a ConfigRecord");
        };
        assert_eq!(
            (
                c.resource_type,
                c.resource_name.as_str(),
                c.name.as_str(),
                c.value.as_deref()
            ),
            (4, "", "min.insync.replicas", Some("2"))
        );
        // The image Kafka's replay makes of it holds the config and the features.
        let mut image = MetadataImage::new();
        for r in &records {
            image.replay(MetadataRecord::decode(r).unwrap()).unwrap();
        }
        assert_eq!(image.metadata_version(), Some(27));
        assert!(image.open_transaction.is_none());
        assert_eq!(image.configs.len(), 1);
    }

    /// Below 3.6-IV1 there are no transactions; without ELR no ConfigRecord.
    #[test]
    fn test_activation_for_empty_log_without_transactions() {
        let (records, _) = activation_records(&MetadataImage::new(), &bootstrap(12, 0), 1)
            .unwrap()
            .unwrap();
        assert_eq!(
            names(&records),
            ["FeatureLevelRecord", "FeatureLevelRecord"]
        );
    }

    /// testActivationMessageForEmptyLogWithPartialTransaction: a failed-over bootstrap is
    /// aborted and written again.
    #[test]
    fn test_activation_after_partial_bootstrap_transaction() {
        let mut image = MetadataImage::new();
        image
            .replay(MetadataRecord::BeginTransaction(
                BeginTransactionRecord::default(),
            ))
            .unwrap();
        let (records, message) = activation_records(&image, &bootstrap(27, 0), 1)
            .unwrap()
            .unwrap();
        assert_eq!(
            names(&records),
            [
                "AbortTransactionRecord",
                "BeginTransactionRecord",
                "FeatureLevelRecord",
                "FeatureLevelRecord",
                "EndTransactionRecord"
            ]
        );
        assert!(message.contains("Aborting partial bootstrap records transaction"));
        // Old metadata.version without transactions: Kafka refuses to continue.
        assert!(matches!(
            activation_records(&image, &bootstrap(12, 0), 1),
            Err(ActivationError::TransactionsUnsupported(12))
        ));
    }

    /// testActivationMessageForNonEmptyLog…: nothing to write, or an abort of the open
    /// transaction.
    #[test]
    fn test_activation_for_non_empty_log() {
        let mut image = MetadataImage::new();
        for r in bootstrap(27, 0) {
            image.replay(MetadataRecord::decode(&r).unwrap()).unwrap();
        }
        assert!(activation_records(&image, &bootstrap(27, 0), 1)
            .unwrap()
            .is_none());
        image
            .replay(MetadataRecord::BeginTransaction(
                BeginTransactionRecord::default(),
            ))
            .unwrap();
        let (records, _) = activation_records(&image, &bootstrap(27, 0), 1)
            .unwrap()
            .unwrap();
        assert_eq!(names(&records), ["AbortTransactionRecord"]);
    }
}
