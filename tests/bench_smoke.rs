//! The storage benchmark (benches/storage) at tiny sizes, so it keeps compiling and its
//! measurements keep checking what they measure.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../benches/storage/measure.rs"]
#[allow(dead_code)]
mod measure;

#[test]
fn storage_benchmark_runs_at_smoke_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let p = measure::Params::smoke();
    let report = measure::run(tmp.path(), &p).unwrap();
    assert!(report.floors.fsync_4k.p50 > std::time::Duration::ZERO);
    assert!(report.floors.seq_write_mb_s > 0.0 && report.floors.memcpy_mb_s > 0.0);
    assert_eq!(report.appends.len(), p.batch_sizes.len());
    for (a, n) in report.appends.iter().zip(&p.batch_sizes) {
        assert_eq!(a.batch_records, *n);
        assert!(a.batches >= 3 && a.records_per_s > 0.0);
        assert!(a.batch_bytes > n * p.record_bytes);
    }
    assert!(report.read.segments > 1, "{:?}", report.read);
    assert!(report.read.log_bytes >= p.read_log_bytes);
    assert!(report.read.reads >= (report.read.log_bytes / p.fetch_bytes as u64) as usize);
    let table = measure::markdown(&report);
    assert_eq!(
        table.lines().count(),
        2 + 3 + p.batch_sizes.len() + 2,
        "{table}"
    );
    // Nothing left behind.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}
