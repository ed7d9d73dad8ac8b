//! KRaft control records: key = int16 version 0 + int16 type; value = the message body at
//! serialization version 0 (all five messages are flexible: compact strings/arrays, tag byte).
//! The message structs come from kafka-protocol, whose v0 bytes match Kafka's.
//! LeaderChangeMessage is always written at v0 (Kafka's `LEADER_CHANGE_CURRENT_VERSION`).

use bytes::Bytes;
use kafka_protocol::messages::{
    KRaftVersionRecord, LeaderChangeMessage, SnapshotFooterRecord, SnapshotHeaderRecord,
    VotersRecord,
};
use kafka_protocol::protocol::{Decodable, Encodable};

use super::RecordsError;

/// The control record types KRaft knows (`ControlRecordType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i16)]
pub enum ControlRecordType {
    /// Transaction abort marker (not used by KRaft).
    Abort = 0,
    /// Transaction commit marker (not used by KRaft).
    Commit = 1,
    /// LeaderChangeMessage, first record of every epoch.
    LeaderChange = 2,
    /// SnapshotHeaderRecord, first record of a snapshot.
    SnapshotHeader = 3,
    /// SnapshotFooterRecord, last record of a snapshot.
    SnapshotFooter = 4,
    /// KRaftVersionRecord.
    KRaftVersion = 5,
    /// VotersRecord.
    KRaftVoters = 6,
}

impl ControlRecordType {
    /// The type id.
    pub fn id(self) -> i16 {
        self as i16
    }

    /// Parses a control key (at least 4 bytes: version ≥ 0, type).
    pub fn parse_key(key: &[u8]) -> Result<Self, RecordsError> {
        if key.len() < 4 {
            return Err(RecordsError::Control(format!(
                "control key has {} bytes, needs 4",
                key.len()
            )));
        }
        let version = i16::from_be_bytes([key[0], key[1]]);
        if version < 0 {
            return Err(RecordsError::Control(format!(
                "control key version {version}"
            )));
        }
        let id = i16::from_be_bytes([key[2], key[3]]);
        Ok(match id {
            0 => Self::Abort,
            1 => Self::Commit,
            2 => Self::LeaderChange,
            3 => Self::SnapshotHeader,
            4 => Self::SnapshotFooter,
            5 => Self::KRaftVersion,
            6 => Self::KRaftVoters,
            other => {
                return Err(RecordsError::Control(format!(
                    "unknown control record type {other}"
                )))
            }
        })
    }
}

/// A decoded KRaft control record.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlRecord {
    /// LEADER_CHANGE (written at v0).
    LeaderChange(LeaderChangeMessage),
    /// SNAPSHOT_HEADER.
    SnapshotHeader(SnapshotHeaderRecord),
    /// SNAPSHOT_FOOTER.
    SnapshotFooter(SnapshotFooterRecord),
    /// KRAFT_VERSION.
    KRaftVersion(KRaftVersionRecord),
    /// KRAFT_VOTERS.
    Voters(VotersRecord),
}

/// Serialization version of every control value (Kafka's `*_CURRENT_VERSION` = 0).
const VALUE_VERSION: i16 = 0;

impl ControlRecord {
    /// A SNAPSHOT_HEADER with the given last contained log timestamp.
    pub fn snapshot_header(last_contained_log_timestamp_ms: i64) -> Self {
        ControlRecord::SnapshotHeader(
            SnapshotHeaderRecord::default()
                .with_version(0)
                .with_last_contained_log_timestamp(last_contained_log_timestamp_ms),
        )
    }

    /// A SNAPSHOT_FOOTER.
    pub fn snapshot_footer() -> Self {
        ControlRecord::SnapshotFooter(SnapshotFooterRecord::default().with_version(0))
    }

    /// A KRAFT_VERSION record for the given kraft.version level.
    pub fn kraft_version(level: i16) -> Self {
        ControlRecord::KRaftVersion(
            KRaftVersionRecord::default()
                .with_version(0)
                .with_k_raft_version(level),
        )
    }

    /// The record type.
    pub fn record_type(&self) -> ControlRecordType {
        match self {
            ControlRecord::LeaderChange(_) => ControlRecordType::LeaderChange,
            ControlRecord::SnapshotHeader(_) => ControlRecordType::SnapshotHeader,
            ControlRecord::SnapshotFooter(_) => ControlRecordType::SnapshotFooter,
            ControlRecord::KRaftVersion(_) => ControlRecordType::KRaftVersion,
            ControlRecord::Voters(_) => ControlRecordType::KRaftVoters,
        }
    }

    /// The 4-byte key: int16 version 0, int16 type.
    pub fn key_bytes(&self) -> [u8; 4] {
        let t = self.record_type().id().to_be_bytes();
        [0, 0, t[0], t[1]]
    }

    /// The value bytes at serialization version 0.
    pub fn encode_value(&self) -> Result<Vec<u8>, RecordsError> {
        let mut out = Vec::new();
        let r = match self {
            ControlRecord::LeaderChange(m) => m.encode(&mut out, VALUE_VERSION),
            ControlRecord::SnapshotHeader(m) => m.encode(&mut out, VALUE_VERSION),
            ControlRecord::SnapshotFooter(m) => m.encode(&mut out, VALUE_VERSION),
            ControlRecord::KRaftVersion(m) => m.encode(&mut out, VALUE_VERSION),
            ControlRecord::Voters(m) => m.encode(&mut out, VALUE_VERSION),
        };
        r.map_err(|e| RecordsError::Control(format!("encode {:?}: {e}", self.record_type())))?;
        Ok(out)
    }

    /// Decodes a control record from its key and value, as Kafka's KRaft reader does.
    pub fn decode(key: &[u8], value: &[u8]) -> Result<Self, RecordsError> {
        let kind = ControlRecordType::parse_key(key)?;
        let mut buf = Bytes::copy_from_slice(value);
        let err = |e: anyhow::Error| RecordsError::Control(format!("decode {kind:?}: {e}"));
        Ok(match kind {
            ControlRecordType::LeaderChange => ControlRecord::LeaderChange(
                LeaderChangeMessage::decode(&mut buf, VALUE_VERSION).map_err(err)?,
            ),
            ControlRecordType::SnapshotHeader => ControlRecord::SnapshotHeader(
                SnapshotHeaderRecord::decode(&mut buf, VALUE_VERSION).map_err(err)?,
            ),
            ControlRecordType::SnapshotFooter => ControlRecord::SnapshotFooter(
                SnapshotFooterRecord::decode(&mut buf, VALUE_VERSION).map_err(err)?,
            ),
            ControlRecordType::KRaftVersion => ControlRecord::KRaftVersion(
                KRaftVersionRecord::decode(&mut buf, VALUE_VERSION).map_err(err)?,
            ),
            ControlRecordType::KRaftVoters => {
                ControlRecord::Voters(VotersRecord::decode(&mut buf, VALUE_VERSION).map_err(err)?)
            }
            ControlRecordType::Abort | ControlRecordType::Commit => {
                return Err(RecordsError::Control(format!(
                    "control record type {kind:?} is not a KRaft record"
                )))
            }
        })
    }
}
