//! Snapshot transfer: an empty voter joins a leader whose log starts at a large snapshot and
//! downloads it with FetchSnapshot.
//!
//! ```text
//!   ferrokraft writer quorum (nodes 1, 2) writes a short log ─▶ its image (features,
//!     registrations) + synthetic topic ConfigRecords up to the target size, written by
//!     ferrokraft's snapshot writer at (log end offset, last epoch) into nodes 1 and 2; their
//!     segments removed, so on start both restart the log at the snapshot (Kafka's
//!     truncateToLatestSnapshot)
//!   per implementation: the catch-up trial — start 1 and 2, then the empty node 3, timed from
//!     its first `.checkpoint.part` until the `.checkpoint` is there ─▶ MB/s, and the
//!     receiver's peak RSS (it loads the snapshot into its image, as both implementations do)
//! ```
//!
//! Topic configs of topics that do not exist are valid metadata both implementations keep in
//! their image and no controller acts on, which makes them a neutral filler.

use std::fs;
use std::path::{Path, PathBuf};

use ferrokraft::snapshot::{write_snapshot, SnapshotHeaderInfo, SnapshotId};
use ferrokraft::tools::dump;

use super::catchup::{trial, write_big_log, CatchUpResults, Watch};
use super::procs::Kind;
use super::{Env, Params};

/// Bytes of each filler config value.
const FILLER_VALUE_BYTES: usize = 200;

/// Builds the snapshot in copies of the writer's directories; returns them and the snapshot's
/// size in bytes.
fn snapshot_templates(
    env: &Env,
    root: &Path,
    p: &Params,
) -> Result<(Vec<PathBuf>, SnapshotId, u64), String> {
    let templates = write_big_log(env, root, "snapshot", 1024 * 1024, p.record_bytes)?;
    let partition = |t: &Path| t.join("__cluster_metadata-0");
    let files = dump::dump_path(&partition(&templates[0])).map_err(|e| e.to_string())?;
    let mut image = dump::image_of(&files);
    let value = "x".repeat(FILLER_VALUE_BYTES);
    let mut n = 0u64;
    let mut filler_bytes = 0u64;
    while filler_bytes < p.snapshot_bytes {
        let resource = ferrokraft::metadata::image::ConfigResource {
            resource_type: 2,
            resource_name: format!("bench-topic-{:06}", n / 1000),
        };
        let key = format!("bench.config.{n:09}");
        filler_bytes += (key.len() + value.len() + resource.resource_name.len() + 8) as u64;
        image
            .configs
            .entry(resource)
            .or_default()
            .insert(key, value.clone());
        n += 1;
    }
    let values = image.snapshot_records().map_err(|e| e.to_string())?;
    let id = SnapshotId {
        end_offset: image.next_offset,
        epoch: image.last_epoch,
    };
    let header = SnapshotHeaderInfo {
        last_contained_log_timestamp_ms: image.last_contained_log_time_ms,
        kraft_version: Some(0),
        voters: None,
    };
    let mut size = 0;
    for t in &templates[..2] {
        let dir = partition(t);
        let path = write_snapshot(&dir, id, &header, &values, image.last_contained_log_time_ms)
            .map_err(|e| e.to_string())?;
        size = fs::metadata(&path).map_err(|e| e.to_string())?.len();
        for entry in fs::read_dir(&dir).map_err(|e| e.to_string())?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let segment_file = [".log", ".index", ".timeindex"]
                .iter()
                .any(|s| name.ends_with(s));
            if segment_file || name == "leader-epoch-checkpoint" {
                fs::remove_file(entry.path()).map_err(|e| e.to_string())?;
            }
        }
    }
    eprintln!(
        "snapshot {} of {n} filler configs: {size} bytes",
        id.file_stem()
    );
    Ok((templates, id, size))
}

/// FetchSnapshot of a `p.snapshot_bytes` snapshot by an empty voter, both implementations,
/// alternating.
pub fn snapshot_transfer(env: &Env, root: &Path, p: &Params) -> Result<CatchUpResults, String> {
    let (templates, id, bytes) = snapshot_templates(env, root, p)?;
    let watch = Watch::Snapshot(id.file_name());
    let mut results: CatchUpResults =
        vec![(Kind::Ferrokraft, vec![]), (Kind::KafkaController, vec![])];
    for n in 0..p.catchup_trials {
        for (kind, trials) in results.iter_mut() {
            let name = format!("snapshot-{}-{n}", kind.label().replace(' ', "-"));
            trials.push(trial(env, root, *kind, &name, &templates, bytes, &watch)?);
        }
    }
    for t in &templates {
        let _ = fs::remove_dir_all(t);
    }
    Ok(results)
}
