//! Every metadata record type Kafka 4.x writes, described field by field (`metadata_struct!`,
//! see `describe.rs`) and collected into [`MetadataRecord`] by the table below: api key,
//! variant, body type, highest version known.
//!
//! Adding a record version: add its fields (with `[N+ …]`) to the struct, raise the version in
//! the table, regenerate the oracle vectors (docs/metadata-records.md).

pub mod broker;
pub mod cluster;
pub mod security;
pub mod text;
pub mod topic;

use bytes::Bytes;
use serde_json::Value;

use super::field::Field as _;
use super::wire::Reader;
use super::MetadataError;

pub use broker::*;
pub use cluster::*;
pub use security::*;
pub use topic::*;

/// Builds [`MetadataRecord`] and its dispatch from the table of record types.
macro_rules! metadata_records {
    ($( $key:literal => $variant:ident($ty:ident) max $max:literal, )*) => {
        /// A metadata record body, by type. The version it was read at, or is to be written
        /// at, travels beside it ([`super::record::ApiMessageAndVersion`]).
        #[derive(Debug, Clone, PartialEq)]
        pub enum MetadataRecord {
            $(
                #[doc = concat!("`", stringify!($ty), "` (api key ", stringify!($key), ").")]
                $variant($ty),
            )*
            /// A record type this table does not know (a newer Kafka's), kept as bytes so it
            /// can be shown and written back unchanged.
            Other {
                /// Its api key.
                api_key: u16,
                /// Its body, after the frame.
                body: Bytes,
            },
        }

        /// Every known record type: (api key, name, highest version).
        pub const RECORD_TYPES: &[(u16, &str, u16)] = &[$(($key, stringify!($ty), $max),)*];

        impl MetadataRecord {
            /// The record's api key (`MetadataRecordType` id).
            pub fn api_key(&self) -> u16 {
                match self {
                    $(Self::$variant(_) => $key,)*
                    Self::Other { api_key, .. } => *api_key,
                }
            }

            /// Kafka's name for the record type (`Other` for unknown ones).
            pub fn name(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => stringify!($ty),)*
                    Self::Other { .. } => "Other",
                }
            }

            /// Reads a body of type `api_key` at `version`, up to the end of `r`.
            pub(crate) fn read_body(
                api_key: u16,
                version: u16,
                r: &mut Reader<'_>,
            ) -> Result<Self, MetadataError> {
                match api_key {
                    $(
                        $key => {
                            if version > $max {
                                return Err(MetadataError::UnsupportedVersion {
                                    record: stringify!($ty),
                                    api_key,
                                    version,
                                    max: $max,
                                });
                            }
                            let body = <$ty>::read(r, version, stringify!($ty))?;
                            r.finish(stringify!($ty))?;
                            Ok(Self::$variant(body))
                        }
                    )*
                    _ => {
                        let rest = r.bytes(r.remaining(), "record body")?;
                        Ok(Self::Other { api_key, body: Bytes::copy_from_slice(rest) })
                    }
                }
            }

            /// The first field set to a non-default value that `version` does not carry.
            pub fn field_missing_at(&self, version: u16) -> Option<&'static str> {
                match self {
                    $(Self::$variant(body) => body.field_missing_at(version),)*
                    Self::Other { .. } => None,
                }
            }

            /// Writes the body at `version` (which the caller has checked is known).
            pub(crate) fn write_body(&self, version: u16, out: &mut Vec<u8>) {
                match self {
                    $(Self::$variant(body) => body.write(out, version),)*
                    Self::Other { body, .. } => out.extend_from_slice(body),
                }
            }

            /// The body as Kafka's generated `toString` shows it, after the record's name.
            pub(crate) fn body_kafka_string(&self, version: u16, out: &mut String) {
                match self {
                    $(Self::$variant(body) => text::field_kafka_string(body, version, out),)*
                    Self::Other { api_key, body } => {
                        out.push_str(&format!("Other(apiKey={api_key}, bytes={})", body.len()))
                    }
                }
            }

            /// The body's fields as JSON (field names in snake case, ids in Kafka's base64).
            pub fn body_json(&self, version: u16) -> Value {
                match self {
                    $(Self::$variant(body) => body.to_json(version),)*
                    Self::Other { body, .. } => serde_json::json!({ "unknown_body_bytes": body.len() }),
                }
            }
        }
    };
}

metadata_records! {
    0 => RegisterBroker(RegisterBrokerRecord) max 4,
    1 => UnregisterBroker(UnregisterBrokerRecord) max 0,
    2 => Topic(TopicRecord) max 0,
    3 => Partition(PartitionRecord) max 2,
    4 => Config(ConfigRecord) max 0,
    5 => PartitionChange(PartitionChangeRecord) max 2,
    7 => FenceBroker(FenceBrokerRecord) max 0,
    8 => UnfenceBroker(UnfenceBrokerRecord) max 0,
    9 => RemoveTopic(RemoveTopicRecord) max 0,
    10 => DelegationToken(DelegationTokenRecord) max 0,
    11 => UserScramCredential(UserScramCredentialRecord) max 0,
    12 => FeatureLevel(FeatureLevelRecord) max 0,
    14 => ClientQuota(ClientQuotaRecord) max 0,
    15 => ProducerIds(ProducerIdsRecord) max 0,
    17 => BrokerRegistrationChange(BrokerRegistrationChangeRecord) max 3,
    18 => AccessControlEntry(AccessControlEntryRecord) max 0,
    19 => RemoveAccessControlEntry(RemoveAccessControlEntryRecord) max 0,
    20 => NoOp(NoOpRecord) max 0,
    21 => ZkMigrationState(ZkMigrationStateRecord) max 0,
    22 => RemoveUserScramCredential(RemoveUserScramCredentialRecord) max 0,
    23 => BeginTransaction(BeginTransactionRecord) max 0,
    24 => EndTransaction(EndTransactionRecord) max 0,
    25 => AbortTransaction(AbortTransactionRecord) max 0,
    26 => RemoveDelegationToken(RemoveDelegationTokenRecord) max 0,
    27 => RegisterController(RegisterControllerRecord) max 0,
    28 => ClearElr(ClearElrRecord) max 0,
    29 => UnregisterController(UnregisterControllerRecord) max 0,
}

/// The highest version known for `api_key`, `None` for an unknown type.
pub fn max_version(api_key: u16) -> Option<u16> {
    RECORD_TYPES
        .iter()
        .find(|(key, _, _)| *key == api_key)
        .map(|(_, _, max)| *max)
}

#[cfg(test)]
mod tests;
