//! The driver's metadata side, I/O only: writing the snapshots the node state machine asks
//! for, and cleaning the log.
//!
//! ```text
//!   NodeOutput::WriteSnapshot (the machine's SnapshotGenerator said due; a copy of the image)
//!     ─▶ writer thread: records encoded and streamed into .part batch by batch, fsync,
//!        rename ─▶ Event::SnapshotWritten
//!     ─▶ store.add_snapshot (served by FetchSnapshot from then on)
//!   every 60 s ─▶ store.maybe_clean (retention) ─▶ log start moves, old snapshots deleted
//! ```
//!
//! Encoding the records and writing the file happen off the raft thread (Kafka's snapshot
//! generator has its own thread too), so a large snapshot never delays a Fetch answer, a
//! heartbeat or an election; streaming them holds one batch, not the whole snapshot.

use std::path::{Path, PathBuf};

use super::{now_ms, Driver, DriverError, Event};
use crate::metadata::image::{ImageWriteError, MetadataImage};
use crate::snapshot::{SnapshotHeaderInfo, SnapshotId, SnapshotRecordWriter};

impl Driver {
    /// Hands snapshot `id` of `image` to a writer thread.
    pub(super) fn start_snapshot(
        &mut self,
        id: SnapshotId,
        header: SnapshotHeaderInfo,
        image: Box<MetadataImage>,
        reason: &str,
    ) {
        tracing::info!(
            "Creating new KRaft snapshot file {} because {reason}.",
            id.file_stem()
        );
        let now = now_ms();
        let dir = self.store.partition_dir().to_path_buf();
        let events = self.events.clone();
        let spawned = std::thread::Builder::new()
            .name("snapshot-writer".into())
            .spawn(move || {
                let result = write_image(&dir, id, &header, &image, now as i64)
                    .map(|path| std::fs::metadata(path).map(|m| m.len()).unwrap_or_default());
                // The copy's partitions are freed here, not on the raft thread.
                drop(image);
                // The raft thread may be gone (shutdown): the frozen file is found on start.
                let _ = events.send(Event::SnapshotWritten { id, result });
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the snapshot writer: {e}");
            self.machine.snapshot_written();
        }
    }

    /// A writer thread finished snapshot `id`.
    pub(super) fn snapshot_written(
        &mut self,
        id: SnapshotId,
        result: Result<u64, String>,
    ) -> Result<(), DriverError> {
        self.machine.snapshot_written();
        match result {
            Ok(size_bytes) => {
                self.store
                    .add_snapshot(id)
                    .map_err(|e| self.storage_failure(e))?;
                tracing::info!(
                    "Successfully wrote snapshot {} ({size_bytes} bytes)",
                    id.file_stem()
                );
                let now = super::now_ms();
                if let Ok(mut m) = self.metrics.lock() {
                    m.latest_snapshot_bytes = size_bytes;
                    m.latest_snapshot_at_ms = Some(now);
                }
            }
            // Kafka's snapshot generator reports the fault and goes on; the log keeps
            // everything, so nothing is lost.
            Err(message) => tracing::error!("{message}"),
        }
        Ok(())
    }

    /// Kafka's log cleaner cadence: `maybeClean` every 60 s.
    pub(super) fn run_log_cleaner(&mut self) -> Result<(), DriverError> {
        let now = now_ms();
        if now < self.next_clean_ms {
            return Ok(());
        }
        self.next_clean_ms = now + super::CLEAN_INTERVAL_MS;
        self.store
            .maybe_clean(now as i64, self.settings.retention)
            .map_err(|e| self.storage_failure(e))?;
        Ok(())
    }
}

/// Encodes `image` into snapshot `id` in `dir` record by record, holding one batch at a
/// time, and returns the file's path; on failure, Kafka's message (the unfinished `.part`
/// file is removed as the writer drops).
pub fn write_image(
    dir: &Path,
    id: SnapshotId,
    header: &SnapshotHeaderInfo,
    image: &MetadataImage,
    append_timestamp_ms: i64,
) -> Result<PathBuf, String> {
    let written = |e: &dyn std::fmt::Display| {
        format!(
            "Encountered error while writing snapshot {}: {e}",
            id.file_stem()
        )
    };
    let mut writer = SnapshotRecordWriter::create(dir, id, header, append_timestamp_ms)
        .map_err(|e| written(&e))?;
    let encoded = image.write_snapshot_records(&mut |value| {
        writer
            .push(&value)
            .map_err(|e| ImageWriteError::Output(e.to_string()))
    });
    match encoded {
        Ok(()) => writer.finish().map_err(|e| written(&e)),
        Err(ImageWriteError::Output(e)) => Err(written(&e)),
        Err(e) => Err(e.generation_message(&id.file_stem())),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::metadata::image::write_tests::{image_of, rich_records};
    use crate::metadata::record::MetadataRecord as R;
    use crate::metadata::records::{ConfigRecord, FeatureLevelRecord};

    const ID: SnapshotId = SnapshotId {
        end_offset: 5000,
        epoch: 3,
    };

    fn header() -> SnapshotHeaderInfo {
        SnapshotHeaderInfo {
            last_contained_log_timestamp_ms: 1_700_000_000_000,
            kraft_version: Some(0),
            voters: None,
        }
    }

    /// 2,500 topic ConfigRecords: three data batches before the security section.
    fn configs() -> impl Iterator<Item = R> {
        (0..2500).map(|i| {
            R::Config(ConfigRecord {
                resource_type: 4,
                resource_name: String::new(),
                name: format!("key.{i:04}"),
                value: Some("v".into()),
                ..Default::default()
            })
        })
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Streaming the records batch by batch writes the same bytes as writing them collected.
    #[test]
    fn a_streamed_snapshot_is_the_collected_one_byte_for_byte() {
        let image = image_of(rich_records(27).into_iter().chain(configs()).collect());
        let streamed = tempfile::tempdir().unwrap();
        let path = write_image(streamed.path(), ID, &header(), &image, 42).unwrap();
        let collected = tempfile::tempdir().unwrap();
        let values = image.snapshot_records().unwrap();
        let expected =
            crate::snapshot::write_snapshot(collected.path(), ID, &header(), &values, 42).unwrap();
        assert_eq!(
            std::fs::read(path).unwrap(),
            std::fs::read(expected).unwrap()
        );
        assert_eq!(
            files(streamed.path()),
            vec![ID.path_in(Path::new("")).display().to_string()]
        );
    }

    /// A loss found after batches were streamed (SCRAM credentials at 3.4-IV0, after 2,500
    /// configs) fails with Kafka's generation message and leaves no file behind.
    #[test]
    fn a_loss_found_while_streaming_leaves_no_file() {
        let mut records = vec![R::FeatureLevel(FeatureLevelRecord {
            name: "metadata.version".into(),
            feature_level: 10,
            ..Default::default()
        })];
        records.extend(configs());
        records.extend(
            rich_records(27)
                .into_iter()
                .filter(|r| matches!(r, R::UserScramCredential(_))),
        );
        let image = image_of(records);
        let dir = tempfile::tempdir().unwrap();
        let e = write_image(dir.path(), ID, &header(), &image, 42).unwrap_err();
        assert!(
            e.starts_with("KRaft snapshot file generation error for 00000000000000005000-0000000003: metadata.version 10 cannot hold"),
            "{e}"
        );
        assert!(files(dir.path()).is_empty(), "{:?}", files(dir.path()));
    }

    /// An I/O failure while streaming (the directory is gone) is a write error.
    #[test]
    fn a_write_failure_is_reported_as_one() {
        let image = image_of(rich_records(27));
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let e = write_image(&gone, ID, &header(), &image, 42).unwrap_err();
        assert!(
            e.starts_with(
                "Encountered error while writing snapshot 00000000000000005000-0000000003: "
            ),
            "{e}"
        );
    }
}
