//! The metadata log keys (Kafka's MetadataLogConfig, with `log.dirs` and `metadata.log.dir`):
//! where the log lives, how large and old its segments grow, how long it is retained, and
//! when snapshots are taken.

use std::path::PathBuf;

use super::properties::{get, invalid, list, parse_num, ConfigError, Properties};

const MIB: u64 = 1024 * 1024;
const WEEK_MS: u64 = 7 * 24 * 60 * 60 * 1000;

/// `log.dirs` (or `log.dir`), `metadata.log.dir` and the segment size.
pub(super) struct LogDirs {
    pub(super) log_dirs: Vec<PathBuf>,
    pub(super) metadata_log_dir: PathBuf,
    pub(super) segment_bytes: u64,
}

/// Reads the directories and the segment size (`metadata.log.segment.bytes`, at least 8 MiB,
/// or the internal test override).
pub(super) fn log_dirs(props: &Properties) -> Result<LogDirs, ConfigError> {
    let log_dirs: Vec<PathBuf> = list(
        get(props, "log.dirs")
            .or_else(|| get(props, "log.dir"))
            .unwrap_or("/tmp/kafka-logs"),
    )
    .into_iter()
    .map(PathBuf::from)
    .collect();
    if log_dirs.is_empty() {
        return Err(invalid(
            "log.dirs",
            "",
            "at least one directory is required",
        ));
    }
    let metadata_log_dir = match get(props, "metadata.log.dir") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => log_dirs[0].clone(),
    };

    // Kafka 4.1.2's MetadataLogConfig: metadata.log.segment.bytes is bounded at 8 MiB by its
    // ConfigDef whatever else is set; internal.metadata.log.segment.bytes (test-only, no
    // bound) replaces it when given. Kafka 4.0 named a different override
    // metadata.log.segment.min.bytes (a lower bound); 4.1 dropped it, so it is an unknown key.
    let bytes = parse_num(props, "metadata.log.segment.bytes", 1024 * MIB)?;
    if bytes < 8 * MIB {
        return Err(invalid(
            "metadata.log.segment.bytes",
            &bytes.to_string(),
            "Value must be at least 8388608",
        ));
    }
    let segment_bytes = match get(props, "internal.metadata.log.segment.bytes") {
        Some(v) => v.parse().map_err(|_| {
            invalid(
                "internal.metadata.log.segment.bytes",
                v,
                "not a valid number",
            )
        })?,
        None => bytes,
    };
    Ok(LogDirs {
        log_dirs,
        metadata_log_dir,
        segment_bytes,
    })
}

/// Kafka's ConfigDef bound of `metadata.log.max.record.bytes.between.snapshots` (LONG,
/// atLeast(1)), on the number given rather than its spelling; Kafka's message shows the
/// parsed value.
pub(super) fn check_snapshot_bytes(props: &Properties) -> Result<(), ConfigError> {
    const KEY: &str = "metadata.log.max.record.bytes.between.snapshots";
    let bytes: i64 = parse_num(props, KEY, 20 * MIB as i64)?;
    if bytes < 1 {
        return Err(invalid(KEY, &bytes.to_string(), "Value must be at least 1"));
    }
    Ok(())
}

/// Segment age, retention, snapshot cadence and the NoOpRecord cadence.
pub(super) struct Limits {
    pub(super) segment_ms: u64,
    pub(super) max_retention_bytes: i64,
    pub(super) max_retention_ms: i64,
    pub(super) max_record_bytes_between_snapshots: u64,
    pub(super) max_snapshot_interval_ms: u64,
    pub(super) max_idle_interval_ms: u64,
}

/// Reads the limits, with Kafka's defaults.
pub(super) fn limits(props: &Properties) -> Result<Limits, ConfigError> {
    Ok(Limits {
        segment_ms: parse_num(props, "metadata.log.segment.ms", WEEK_MS)?,
        max_retention_bytes: parse_num(props, "metadata.max.retention.bytes", 100 * MIB as i64)?,
        max_retention_ms: parse_num(props, "metadata.max.retention.ms", WEEK_MS as i64)?,
        max_record_bytes_between_snapshots: parse_num(
            props,
            "metadata.log.max.record.bytes.between.snapshots",
            20 * MIB,
        )?,
        max_snapshot_interval_ms: parse_num(
            props,
            "metadata.log.max.snapshot.interval.ms",
            3_600_000,
        )?,
        max_idle_interval_ms: parse_num(props, "metadata.max.idle.interval.ms", 500)?,
    })
}
