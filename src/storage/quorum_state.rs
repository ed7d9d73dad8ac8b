//! `__cluster_metadata-0/quorum-state`: the election state (epoch, leader, vote) as one line of
//! compact JSON, fields in schema order with `data_version` last, exactly as Kafka's
//! `FileQuorumStateStore` writes it:
//!
//! ```text
//! v0: {"clusterId":"","leaderId":L,"leaderEpoch":E,"votedId":V,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}
//! v1: {"leaderId":L,"leaderEpoch":E,"votedId":V,"votedDirectoryId":"<uuid>","data_version":1}
//! ```
//!
//! Reads take only the first line, need every field of the version, and ignore unknown fields.
//! Writes go through `quorum-state.tmp` + fsync + rename + dir fsync.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use uuid::Uuid;

use super::StorageError;
use crate::common::uuid::{parse_kafka_uuid, uuid_to_kafka_string, ZERO_UUID};
use crate::durable::write_atomic;

/// File name inside the partition directory.
pub const QUORUM_STATE_FILE: &str = "quorum-state";

/// Which JSON schema version to write (chosen by kraft.version: 0 → V0, 1 → V1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuorumStateVersion {
    /// kraft.version 0: clusterId, appliedOffset, currentVoters.
    V0,
    /// kraft.version 1: votedDirectoryId instead.
    V1,
}

/// The persisted election state. −1 means unknown for ids and epochs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumStateData {
    /// Schema version the state was read as / will be written as.
    pub data_version: QuorumStateVersion,
    /// v0 only; Kafka writes "".
    pub cluster_id: String,
    /// Known leader of `leader_epoch`, or −1.
    pub leader_id: i32,
    /// Current epoch.
    pub leader_epoch: i32,
    /// Candidate voted for in `leader_epoch`, or −1.
    pub voted_id: i32,
    /// v1 only; ZERO when there is no vote (Kafka always writes the field).
    pub voted_directory_id: Uuid,
    /// v0 only; Kafka writes 0.
    pub applied_offset: i64,
    /// v0 only; `None` writes JSON null.
    pub current_voters: Option<Vec<i32>>,
}

impl QuorumStateData {
    /// A v1 state (kraft.version 1).
    pub fn v1(leader_epoch: i32, leader_id: i32, voted_id: i32, voted_directory_id: Uuid) -> Self {
        QuorumStateData {
            data_version: QuorumStateVersion::V1,
            cluster_id: String::new(),
            leader_id,
            leader_epoch,
            voted_id,
            voted_directory_id,
            applied_offset: 0,
            current_voters: None,
        }
    }

    /// A v0 state (kraft.version 0) with the static voter ids.
    pub fn v0(leader_epoch: i32, leader_id: i32, voted_id: i32, voters: Vec<i32>) -> Self {
        QuorumStateData {
            data_version: QuorumStateVersion::V0,
            cluster_id: String::new(),
            leader_id,
            leader_epoch,
            voted_id,
            voted_directory_id: ZERO_UUID,
            applied_offset: 0,
            current_voters: Some(voters),
        }
    }

    /// The one-line JSON Kafka writes (no trailing newline).
    pub fn to_json(&self) -> String {
        let s = |v: &str| Value::String(v.to_string()).to_string();
        match self.data_version {
            QuorumStateVersion::V0 => {
                let voters = match &self.current_voters {
                    None => "null".to_string(),
                    Some(v) => format!(
                        "[{}]",
                        v.iter()
                            .map(|id| format!("{{\"voterId\":{id}}}"))
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                };
                format!(
                    "{{\"clusterId\":{},\"leaderId\":{},\"leaderEpoch\":{},\"votedId\":{},\"appliedOffset\":{},\"currentVoters\":{},\"data_version\":0}}",
                    s(&self.cluster_id), self.leader_id, self.leader_epoch, self.voted_id,
                    self.applied_offset, voters
                )
            }
            QuorumStateVersion::V1 => format!(
                "{{\"leaderId\":{},\"leaderEpoch\":{},\"votedId\":{},\"votedDirectoryId\":{},\"data_version\":1}}",
                self.leader_id,
                self.leader_epoch,
                self.voted_id,
                s(&uuid_to_kafka_string(&self.voted_directory_id))
            ),
        }
    }

    /// Parses the first line of a quorum-state file.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let line = text.lines().next().ok_or("empty file")?;
        let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        let obj = v.as_object().ok_or("not a JSON object")?;
        let version = obj
            .get("data_version")
            .and_then(Value::as_i64)
            .ok_or("no data_version field")?;
        let data_version = match version {
            0 => QuorumStateVersion::V0,
            1 => QuorumStateVersion::V1,
            other => return Err(format!("data_version {other} is not 0 or 1")),
        };
        let mut st = QuorumStateData {
            data_version,
            cluster_id: String::new(),
            leader_id: int32(obj, "leaderId")?,
            leader_epoch: int32(obj, "leaderEpoch")?,
            voted_id: int32(obj, "votedId")?,
            voted_directory_id: ZERO_UUID,
            applied_offset: 0,
            current_voters: None,
        };
        match data_version {
            QuorumStateVersion::V0 => {
                st.cluster_id = obj
                    .get("clusterId")
                    .and_then(Value::as_str)
                    .ok_or("missing string clusterId")?
                    .to_string();
                st.applied_offset = obj
                    .get("appliedOffset")
                    .and_then(Value::as_i64)
                    .ok_or("missing int64 appliedOffset")?;
                st.current_voters = match obj.get("currentVoters") {
                    None => return Err("missing currentVoters".into()),
                    Some(Value::Null) => None,
                    Some(Value::Array(a)) => Some(
                        a.iter()
                            .map(|e| {
                                e.as_object()
                                    .ok_or_else(|| "voter is not an object".to_string())
                                    .and_then(|o| int32(o, "voterId"))
                            })
                            .collect::<Result<_, _>>()?,
                    ),
                    Some(_) => return Err("currentVoters is not an array".into()),
                };
            }
            QuorumStateVersion::V1 => {
                let s = obj
                    .get("votedDirectoryId")
                    .and_then(Value::as_str)
                    .ok_or("missing string votedDirectoryId")?;
                st.voted_directory_id = parse_kafka_uuid(s).map_err(|e| e.to_string())?;
            }
        }
        Ok(st)
    }
}

fn int32(obj: &Map<String, Value>, key: &str) -> Result<i32, String> {
    obj.get(key)
        .and_then(Value::as_i64)
        .and_then(|v| i32::try_from(v).ok())
        .ok_or_else(|| format!("missing int32 {key}"))
}

/// Reads and writes `quorum-state` in a partition directory.
#[derive(Debug, Clone)]
pub struct QuorumStateStore {
    path: PathBuf,
}

impl QuorumStateStore {
    /// The store for `<partition_dir>/quorum-state`.
    pub fn new(partition_dir: &Path) -> Self {
        QuorumStateStore {
            path: partition_dir.join(QUORUM_STATE_FILE),
        }
    }

    /// The file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the state; `Ok(None)` when the file does not exist (a new node).
    pub fn read(&self) -> Result<Option<QuorumStateData>, StorageError> {
        let text = match fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StorageError::io(&self.path, e)),
        };
        QuorumStateData::from_json(&text)
            .map(Some)
            .map_err(|reason| StorageError::Malformed {
                path: self.path.clone(),
                reason,
            })
    }

    /// Durably replaces the state (tmp, fsync, rename, dir fsync).
    pub fn write(&self, state: &QuorumStateData) -> Result<(), StorageError> {
        write_atomic(&self.path, state.to_json().as_bytes(), true)
            .map_err(|e| StorageError::io(&self.path, e))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn kafka_json_forms() {
        let v0 = QuorumStateData::v0(3, 1, -1, vec![1, 2]);
        assert_eq!(
            v0.to_json(),
            r#"{"clusterId":"","leaderId":1,"leaderEpoch":3,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2}],"data_version":0}"#
        );
        let v1 = QuorumStateData::v1(5, -1, 2, ZERO_UUID);
        assert_eq!(
            v1.to_json(),
            r#"{"leaderId":-1,"leaderEpoch":5,"votedId":2,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#
        );
        assert_eq!(QuorumStateData::from_json(&v0.to_json()).unwrap(), v0);
        assert_eq!(QuorumStateData::from_json(&v1.to_json()).unwrap(), v1);
    }

    #[test]
    fn reader_tolerates_unknown_fields_and_rejects_missing_ones() {
        let s = r#"{"leaderId":1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAQ","future":[1],"data_version":1}
second line ignored"#;
        let st = QuorumStateData::from_json(s).unwrap();
        assert_eq!((st.leader_id, st.leader_epoch, st.voted_id), (1, 2, 1));
        assert!(QuorumStateData::from_json(
            r#"{"leaderId":1,"leaderEpoch":2,"votedId":1,"data_version":1}"#
        )
        .is_err());
        assert!(QuorumStateData::from_json(
            r#"{"leaderId":1,"leaderEpoch":2,"votedId":1,"data_version":2}"#
        )
        .is_err());
        assert!(QuorumStateData::from_json("").is_err());
        let null_voters = r#"{"clusterId":"x","leaderId":1,"leaderEpoch":2,"votedId":1,"appliedOffset":0,"currentVoters":null,"data_version":0}"#;
        assert_eq!(
            QuorumStateData::from_json(null_voters)
                .unwrap()
                .current_voters,
            None
        );
    }

    #[test]
    fn store_round_trip_and_leftover_tmp() {
        let dir = tempfile::tempdir().unwrap();
        let store = QuorumStateStore::new(dir.path());
        assert_eq!(store.read().unwrap(), None);
        // A crash mid-write leaves a torn tmp file: it must not affect reads or later writes.
        fs::write(dir.path().join("quorum-state.tmp"), b"{\"leaderId").unwrap();
        assert_eq!(store.read().unwrap(), None);
        let a = QuorumStateData::v1(1, -1, -1, ZERO_UUID);
        store.write(&a).unwrap();
        assert_eq!(store.read().unwrap(), Some(a.clone()));
        fs::write(dir.path().join("quorum-state.tmp"), b"garbage").unwrap();
        assert_eq!(store.read().unwrap(), Some(a));
        let b = QuorumStateData::v1(2, 3, 3, ZERO_UUID);
        store.write(&b).unwrap();
        assert_eq!(store.read().unwrap(), Some(b));
        assert!(!dir.path().join("quorum-state.tmp").exists());
    }
}
