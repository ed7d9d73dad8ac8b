//! `ferrokraft dump`: what a `__cluster_metadata` segment, a snapshot (`.checkpoint`, the
//! bootstrap file included) or a whole metadata directory holds — batches, control records and
//! decoded metadata records — as text or JSON, like Kafka's `kafka-dump-log
//! --cluster-metadata-decoder` but over our own record descriptions.
//!
//! ```text
//!   path ─▶ files (dir: bootstrap.checkpoint, snapshots, segments in offset order)
//!        ─▶ BatchFramer ─▶ DumpedBatch { header, records: control | metadata | error }
//!        ─▶ text / JSON;  the image (every part, image/) from the replayed data
//! ```
//!
//! Nothing here stops at a bad record: each record that does not decode is shown with its error,
//! and how framing ended (clean, torn tail, corrupt) closes each file.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::uuid::uuid_to_kafka_string;
use crate::metadata::image::MetadataImage;
use crate::metadata::record::ApiMessageAndVersion;
use crate::records::control::ControlRecord;
use crate::records::framer::{BatchFramer, FrameEnd};
use crate::records::view::BatchView;
use crate::snapshot::SnapshotId;

/// The partition directory of the metadata log inside a log directory.
pub const METADATA_PARTITION_DIR: &str = "__cluster_metadata-0";

/// Failures finding or reading the files to dump.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// A file or directory could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A directory holds nothing to dump.
    #[error("{0}: no .log or .checkpoint files (and no {METADATA_PARTITION_DIR} directory)")]
    Empty(PathBuf),
}

/// One record of a batch.
#[derive(Debug, Clone)]
pub enum DumpedRecord {
    /// A KRaft control record (control batches).
    Control {
        /// Its offset.
        offset: i64,
        /// The record, or why it does not decode.
        record: Result<ControlRecord, String>,
    },
    /// A metadata record (data batches).
    Metadata {
        /// Its offset.
        offset: i64,
        /// The raw value (the frame and body).
        value: Vec<u8>,
        /// The record, or why it does not decode.
        record: Result<ApiMessageAndVersion, String>,
    },
    /// A record the batch could not even split out.
    Broken {
        /// Why.
        error: String,
    },
}

/// One batch with its records.
#[derive(Debug, Clone)]
pub struct DumpedBatch {
    /// Byte position in the file.
    pub position: u64,
    /// Base offset.
    pub base_offset: i64,
    /// Last offset.
    pub last_offset: i64,
    /// Partition leader epoch.
    pub epoch: i32,
    /// Record count from the header.
    pub count: i32,
    /// Control or data batch.
    pub control: bool,
    /// Size in bytes.
    pub size_bytes: usize,
    /// First timestamp.
    pub base_timestamp: i64,
    /// Max timestamp.
    pub max_timestamp: i64,
    /// The records.
    pub records: Vec<DumpedRecord>,
}

/// One dumped file.
#[derive(Debug, Clone)]
pub struct DumpedFile {
    /// The file.
    pub path: PathBuf,
    /// Its batches, in file order.
    pub batches: Vec<DumpedBatch>,
    /// How framing ended.
    pub end: FrameEnd,
}

/// The files `path` stands for: itself if a file; for a directory, its own (or its
/// `__cluster_metadata-0`'s) `bootstrap.checkpoint`, snapshots and segments, in offset order.
pub fn files_to_dump(path: &Path) -> Result<Vec<PathBuf>, DumpError> {
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| DumpError::Io { path: p, source }
    };
    if !fs::metadata(path).map_err(io(path))?.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let bootstrap = path.join("bootstrap.checkpoint");
    if bootstrap.is_file() {
        files.push(bootstrap);
    }
    let partition = path.join(METADATA_PARTITION_DIR);
    let dir = if partition.is_dir() {
        partition
    } else {
        path.to_path_buf()
    };
    let mut snapshots = Vec::new();
    let mut segments = Vec::new();
    for entry in fs::read_dir(&dir).map_err(io(&dir))? {
        let entry = entry.map_err(io(&dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(id) = SnapshotId::parse_file_name(&name) {
            snapshots.push((id, entry.path()));
        } else if let Some(base) = name
            .strip_suffix(".log")
            .and_then(|b| b.parse::<i64>().ok())
        {
            segments.push((base, entry.path()));
        }
    }
    snapshots.sort();
    segments.sort();
    files.extend(snapshots.into_iter().map(|(_, p)| p));
    files.extend(segments.into_iter().map(|(_, p)| p));
    if files.is_empty() {
        return Err(DumpError::Empty(path.to_path_buf()));
    }
    Ok(files)
}

/// Splits `bytes` (a segment or snapshot) into batches and decodes every record.
pub fn dump_bytes(bytes: &[u8]) -> (Vec<DumpedBatch>, FrameEnd) {
    let mut framer = BatchFramer::new(bytes, 0, usize::MAX);
    let mut batches = Vec::new();
    for (position, batch) in framer.by_ref() {
        batches.push(dump_batch(position, &batch));
    }
    let end = framer.end().cloned().unwrap_or(FrameEnd::Clean);
    (batches, end)
}

fn dump_batch(position: u64, batch: &BatchView<'_>) -> DumpedBatch {
    let control = batch.is_control();
    let records = batch
        .records()
        .map(|r| match r {
            Err(e) => DumpedRecord::Broken {
                error: e.to_string(),
            },
            Ok(r) if control => DumpedRecord::Control {
                offset: r.offset,
                record: r.control_record().map_err(|e| e.to_string()),
            },
            Ok(r) => DumpedRecord::Metadata {
                offset: r.offset,
                value: r.value.to_vec(),
                record: ApiMessageAndVersion::decode(r.value).map_err(|e| e.to_string()),
            },
        })
        .collect();
    DumpedBatch {
        position,
        base_offset: batch.base_offset(),
        last_offset: batch.last_offset(),
        epoch: batch.partition_leader_epoch(),
        count: batch.record_count(),
        control,
        size_bytes: batch.size_bytes(),
        base_timestamp: batch.base_timestamp(),
        max_timestamp: batch.max_timestamp(),
        records,
    }
}

/// Reads and dumps one file.
pub fn dump_file(path: &Path) -> Result<DumpedFile, DumpError> {
    let bytes = fs::read(path).map_err(|source| DumpError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let (batches, end) = dump_bytes(&bytes);
    Ok(DumpedFile {
        path: path.to_path_buf(),
        batches,
        end,
    })
}

/// Dumps every file `path` stands for ([`files_to_dump`]).
pub fn dump_path(path: &Path) -> Result<Vec<DumpedFile>, DumpError> {
    files_to_dump(path)?.iter().map(|p| dump_file(p)).collect()
}

/// The image the dumped data adds up to: the newest snapshot (if any), then the segments'
/// batches past it. The bootstrap checkpoint only counts when nothing else holds data.
pub fn image_of(files: &[DumpedFile]) -> MetadataImage {
    let mut image = MetadataImage::default();
    let name = |f: &DumpedFile| {
        f.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let newest_snapshot = files
        .iter()
        .filter_map(|f| SnapshotId::parse_file_name(&name(f)).map(|id| (id, f)))
        .max_by_key(|(id, _)| *id);
    let segments: Vec<&DumpedFile> = files.iter().filter(|f| name(f).ends_with(".log")).collect();
    match newest_snapshot {
        Some((id, f)) => {
            replay_all(&mut image, f);
            image.next_offset = id.end_offset;
            image.last_epoch = id.epoch;
        }
        None if segments.is_empty() => {
            for f in files {
                replay_all(&mut image, f);
            }
        }
        None => {}
    }
    for f in segments {
        for b in &f.batches {
            if b.last_offset < image.next_offset {
                continue;
            }
            replay_batch(&mut image, b);
            image.next_offset = b.last_offset + 1;
            image.last_epoch = b.epoch;
            image.last_contained_log_time_ms = b.max_timestamp;
        }
    }
    image
}

fn replay_all(image: &mut MetadataImage, f: &DumpedFile) {
    for b in &f.batches {
        replay_batch(image, b);
    }
}

fn replay_batch(image: &mut MetadataImage, b: &DumpedBatch) {
    for r in &b.records {
        if let DumpedRecord::Metadata { record: Ok(r), .. } = r {
            image.replay_logged(r.message.clone(), "dump");
        }
    }
}

fn control_json(record: &ControlRecord) -> Value {
    match record {
        ControlRecord::LeaderChange(m) => json!({
            "type": "LeaderChange",
            "leader_id": m.leader_id.0,
            "voters": m.voters.iter().map(|v| v.voter_id).collect::<Vec<_>>(),
            "granting_voters": m.granting_voters.iter().map(|v| v.voter_id).collect::<Vec<_>>(),
        }),
        ControlRecord::SnapshotHeader(h) => json!({
            "type": "SnapshotHeader",
            "version": h.version,
            "last_contained_log_timestamp": h.last_contained_log_timestamp,
        }),
        ControlRecord::SnapshotFooter(f) => json!({"type": "SnapshotFooter", "version": f.version}),
        ControlRecord::KRaftVersion(k) => json!({
            "type": "KRaftVersion",
            "version": k.version,
            "kraft_version": k.k_raft_version,
        }),
        ControlRecord::Voters(v) => json!({
            "type": "Voters",
            "version": v.version,
            "voters": v.voters.iter().map(|voter| json!({
                "voter_id": voter.voter_id.0,
                "voter_directory_id": uuid_to_kafka_string(&voter.voter_directory_id),
                "endpoints": voter.endpoints.iter().map(|e| {
                    format!("{}://{}:{}", e.name.as_str(), e.host.as_str(), e.port)
                }).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        }),
    }
}

fn record_json(record: &DumpedRecord) -> Value {
    match record {
        DumpedRecord::Control { offset, record } => match record {
            Ok(c) => json!({"offset": offset, "control": control_json(c)}),
            Err(e) => json!({"offset": offset, "error": e}),
        },
        DumpedRecord::Metadata { offset, record, .. } => match record {
            Ok(r) => json!({
                "offset": offset,
                "type": r.message.name(),
                "api_key": r.message.api_key(),
                "version": r.version,
                "data": r.message.body_json(r.version),
            }),
            Err(e) => json!({"offset": offset, "error": e}),
        },
        DumpedRecord::Broken { error } => json!({"error": error}),
    }
}

fn end_text(end: &FrameEnd) -> String {
    match end {
        FrameEnd::Clean => "clean".to_string(),
        FrameEnd::TornTail {
            position,
            available_bytes,
        } => {
            format!("torn tail at position {position} ({available_bytes} bytes of the last batch)")
        }
        FrameEnd::Corrupt { position, reason } => {
            format!("corrupt at position {position}: {reason}")
        }
    }
}

/// The whole dump as one JSON document.
pub fn to_json(files: &[DumpedFile]) -> Value {
    json!({
        "files": files.iter().map(|f| json!({
            "path": f.path.display().to_string(),
            "end": end_text(&f.end),
            "batches": f.batches.iter().map(|b| json!({
                "position": b.position,
                "base_offset": b.base_offset,
                "last_offset": b.last_offset,
                "epoch": b.epoch,
                "count": b.count,
                "control": b.control,
                "size_bytes": b.size_bytes,
                "base_timestamp": b.base_timestamp,
                "records": b.records.iter().map(record_json).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "image": image_of(files).to_json(),
    })
}

/// The whole dump as text: a line per batch, an indented line per record (its fields as
/// compact JSON), a closing line per file, then the whole image.
pub fn to_text(files: &[DumpedFile]) -> String {
    let mut out = String::new();
    for f in files {
        let _ = writeln!(out, "Dumping {}", f.path.display());
        for b in &f.batches {
            let _ = writeln!(
                out,
                "baseOffset: {} lastOffset: {} count: {} epoch: {} {} position: {} size: {} \
                 baseTimestamp: {}",
                b.base_offset,
                b.last_offset,
                b.count,
                b.epoch,
                if b.control { "control" } else { "data" },
                b.position,
                b.size_bytes,
                b.base_timestamp
            );
            for r in &b.records {
                let _ = match record_json(r) {
                    Value::Object(mut m) => {
                        let offset = m.remove("offset").unwrap_or(Value::Null);
                        match (m.remove("type"), m.remove("version"), m.remove("data")) {
                            (Some(Value::String(t)), Some(v), Some(data)) => {
                                writeln!(out, "  | offset: {offset} {t} v{v} {data}")
                            }
                            _ => writeln!(out, "  | offset: {offset} {}", Value::Object(m)),
                        }
                    }
                    other => writeln!(out, "  | {other}"),
                };
            }
        }
        let _ = writeln!(
            out,
            "End of {}: {} batches, {}",
            f.path.display(),
            f.batches.len(),
            end_text(&f.end)
        );
    }
    out.push_str(&image_of(files).to_text());
    out
}
