//! The storage benchmark's measurements, shared by `benches/storage/main.rs` (full sizes,
//! release build) and `tests/bench_smoke.rs` (tiny sizes, so the bench cannot rot).
//!
//! ```text
//!   floors:  fsync of a 4 KiB append · sequential write + fsync MB/s · memcpy MB/s
//!   append:  FileLog.append_as_leader(batch of N × 256-byte records) + flush, repeated
//!   read:    FileLog.read(offset, 8 MiB) over a multi-segment log, warm and cold page cache
//! ```

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

use ferrokraft::log::{FileLog, LocalLog, LogConfig};
use ferrokraft::records::batch::MAX_BATCH_SIZE_BYTES;
use ferrokraft::records::{build_data_batch, BatchFramer};
use ferrokraft::server::workload::no_op_record;

/// Sizes of one run.
#[derive(Debug, Clone)]
pub struct Params {
    /// Record value size.
    pub record_bytes: usize,
    /// Records per batch, one append + fsync per batch.
    pub batch_sizes: Vec<usize>,
    /// Stop an append series after this long…
    pub append_time: Duration,
    /// …or after this many records, whichever comes first.
    pub append_max_records: usize,
    /// Fetch size of the reads.
    pub fetch_bytes: usize,
    /// Size of the log the reads scan.
    pub read_log_bytes: u64,
    /// Segment size of that log.
    pub read_segment_bytes: u64,
    /// 4 KiB append + fsync rounds of the fsync floor.
    pub fsync_rounds: usize,
    /// Bytes of the sequential write floor.
    pub seq_write_bytes: usize,
    /// Bytes copied by the memcpy floor.
    pub memcpy_bytes: usize,
}

impl Params {
    /// The full run.
    pub fn full() -> Params {
        Params {
            record_bytes: 256,
            batch_sizes: vec![1, 10, 100, 1000],
            append_time: Duration::from_secs(4),
            append_max_records: 2_000_000,
            fetch_bytes: 8 * 1024 * 1024,
            read_log_bytes: 512 * 1024 * 1024,
            read_segment_bytes: 64 * 1024 * 1024,
            fsync_rounds: 500,
            seq_write_bytes: 512 * 1024 * 1024,
            memcpy_bytes: 4 * 1024 * 1024 * 1024,
        }
    }

    /// Tiny sizes for the smoke test.
    pub fn smoke() -> Params {
        Params {
            record_bytes: 256,
            batch_sizes: vec![1, 10],
            append_time: Duration::from_millis(200),
            append_max_records: 200,
            fetch_bytes: 64 * 1024,
            read_log_bytes: 1024 * 1024,
            read_segment_bytes: 256 * 1024,
            fsync_rounds: 5,
            seq_write_bytes: 1024 * 1024,
            memcpy_bytes: 4 * 1024 * 1024,
        }
    }
}

/// Latency distribution of repeated operations.
#[derive(Debug, Clone, Copy, Default)]
pub struct Latency {
    /// Median.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// Mean.
    pub mean: Duration,
}

impl Latency {
    fn of(mut samples: Vec<Duration>) -> Latency {
        if samples.is_empty() {
            return Latency::default();
        }
        samples.sort_unstable();
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        let total: Duration = samples.iter().sum();
        Latency {
            p50: at(0.5),
            p99: at(0.99),
            mean: total / samples.len() as u32,
        }
    }
}

/// The machine's floors.
#[derive(Debug, Clone, Copy, Default)]
pub struct Floors {
    /// 4 KiB append + fsync.
    pub fsync_4k: Latency,
    /// Sequential 1 MiB writes then one fsync, MB/s (10^6 bytes).
    pub seq_write_mb_s: f64,
    /// memcpy of 64 MiB blocks, MB/s.
    pub memcpy_mb_s: f64,
}

/// One append series.
#[derive(Debug, Clone, Copy)]
pub struct AppendResult {
    /// Record value size.
    pub record_bytes: usize,
    /// Records per batch.
    pub batch_records: usize,
    /// Batch size on disk.
    pub batch_bytes: usize,
    /// Batches appended.
    pub batches: usize,
    /// Append + flush per batch.
    pub latency: Latency,
    /// Records per second.
    pub records_per_s: f64,
    /// Log bytes per second.
    pub mb_s: f64,
}

/// The read series.
#[derive(Debug, Clone, Copy)]
pub struct ReadResult {
    /// Segments of the log.
    pub segments: usize,
    /// Bytes of the log.
    pub log_bytes: u64,
    /// Reads done per pass.
    pub reads: usize,
    /// MB/s with the log in the page cache.
    pub warm_mb_s: f64,
    /// MB/s after dropping the log's pages (fadvise DONTNEED).
    pub cold_mb_s: f64,
}

/// Everything measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// Floors.
    pub floors: Floors,
    /// One per batch size.
    pub appends: Vec<AppendResult>,
    /// Reads.
    pub read: ReadResult,
}

#[allow(clippy::disallowed_methods)] // a benchmark reads the clock
fn now() -> Instant {
    Instant::now()
}

fn mb_s(bytes: u64, elapsed: Duration) -> f64 {
    bytes as f64 / 1e6 / elapsed.as_secs_f64().max(1e-9)
}

fn io<T>(what: &str, r: std::io::Result<T>) -> Result<T, String> {
    r.map_err(|e| format!("{what}: {e}"))
}

/// fsync of a 4 KiB append, sequential write MB/s and memcpy MB/s, measured in `dir`.
pub fn floors(dir: &Path, p: &Params) -> Result<Floors, String> {
    let path = dir.join("floor-fsync");
    let f = io(
        "create",
        OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path),
    )?;
    let block = vec![0x5au8; 4096];
    let mut samples = Vec::with_capacity(p.fsync_rounds);
    for i in 0..p.fsync_rounds {
        let t = now();
        io("write", f.write_all_at(&block, (i * 4096) as u64))?;
        io("fsync", f.sync_all())?;
        samples.push(t.elapsed());
    }
    drop(f);
    io("remove", std::fs::remove_file(&path))?;

    let path = dir.join("floor-seq");
    let mut f = io("create", File::create(&path))?;
    let chunk = vec![0xa5u8; 1024 * 1024];
    let t = now();
    let mut written = 0;
    while written < p.seq_write_bytes {
        io("write", f.write_all(&chunk))?;
        written += chunk.len();
    }
    io("fsync", f.sync_all())?;
    let seq_write_mb_s = mb_s(written as u64, t.elapsed());
    drop(f);
    io("remove", std::fs::remove_file(&path))?;

    let src = vec![1u8; (64 * 1024 * 1024usize).min(p.memcpy_bytes.max(1))];
    let mut dst = vec![0u8; src.len()];
    let rounds = (p.memcpy_bytes / src.len()).max(1);
    dst.copy_from_slice(&src); // fault the pages in first
    let t = now();
    for _ in 0..rounds {
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&mut dst);
    }
    let memcpy_mb_s = mb_s((rounds * src.len()) as u64, t.elapsed());
    Ok(Floors {
        fsync_4k: Latency::of(samples),
        seq_write_mb_s,
        memcpy_mb_s,
    })
}

/// Round trips of 64 bytes over a loopback TCP connection (the network floor of the quorum and
/// controller benchmarks, whose peers all talk over loopback).
pub fn loopback_rtt(rounds: usize) -> Result<Latency, String> {
    let listener = io("bind", TcpListener::bind("127.0.0.1:0"))?;
    let addr = io("local_addr", listener.local_addr())?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut s, _) = listener.accept()?;
        s.set_nodelay(true)?;
        let mut buf = [0u8; 64];
        while s.read_exact(&mut buf).is_ok() {
            s.write_all(&buf)?;
        }
        Ok(())
    });
    let mut s = io("connect", TcpStream::connect(addr))?;
    io("nodelay", s.set_nodelay(true))?;
    let mut buf = [7u8; 64];
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = now();
        io("write", s.write_all(&buf))?;
        io("read", s.read_exact(&mut buf))?;
        samples.push(t.elapsed());
    }
    drop(s);
    let _ = echo.join();
    Ok(Latency::of(samples))
}

/// The floors as the Markdown table the quorum and controller reports open with.
pub fn floors_table(f: &Floors, loopback_rtt: &Latency) -> String {
    format!(
        "| floor | value |\n|---|---|\n\
         | 4 KiB append + fsync | p50 {} · p99 {} |\n\
         | sequential write | {:.0} MB/s |\n\
         | memcpy (64 MiB blocks) | {:.0} MB/s |\n\
         | loopback round trip (64 B) | p50 {} · p99 {} |\n",
        us(f.fsync_4k.p50),
        us(f.fsync_4k.p99),
        f.seq_write_mb_s,
        f.memcpy_mb_s,
        us(loopback_rtt.p50),
        us(loopback_rtt.p99),
    )
}

fn batch(records: usize, record_bytes: usize) -> Result<Vec<u8>, String> {
    let value = no_op_record(record_bytes);
    let values: Vec<&[u8]> = (0..records).map(|_| &value[..]).collect();
    build_data_batch(0, 0, 1_700_000_000_000, &values).map_err(|e| e.to_string())
}

/// Appends batches of `batch_records` records to a fresh log in `dir`, flushing after each.
pub fn append_series(dir: &Path, p: &Params, batch_records: usize) -> Result<AppendResult, String> {
    let (mut log, _) = FileLog::open(dir, LogConfig::default()).map_err(|e| e.to_string())?;
    log.initialize_leader_epoch(1).map_err(|e| e.to_string())?;
    let bytes = batch(batch_records, p.record_bytes)?;
    let max_batches = (p.append_max_records / batch_records).max(3);
    let mut samples = Vec::new();
    let start = now();
    while samples.len() < max_batches && (samples.len() < 3 || start.elapsed() < p.append_time) {
        let t = now();
        log.append_as_leader(&bytes, 1).map_err(|e| e.to_string())?;
        log.flush().map_err(|e| e.to_string())?;
        samples.push(t.elapsed());
    }
    let elapsed = start.elapsed();
    let batches = samples.len();
    if log.end_offset() != (batches * batch_records) as i64 {
        return Err(format!(
            "log end {} after {batches} batches",
            log.end_offset()
        ));
    }
    Ok(AppendResult {
        record_bytes: p.record_bytes,
        batch_records,
        batch_bytes: bytes.len(),
        batches,
        latency: Latency::of(samples),
        records_per_s: (batches * batch_records) as f64 / elapsed.as_secs_f64().max(1e-9),
        mb_s: mb_s((batches * bytes.len()) as u64, elapsed),
    })
}

/// Reads the whole log from its start with `fetch_bytes` reads; returns bytes read and reads.
fn read_pass(log: &FileLog, fetch_bytes: usize) -> Result<(u64, usize), String> {
    let mut offset = log.start_offset();
    let (mut total, mut reads) = (0u64, 0usize);
    while offset < log.end_offset() {
        let r = log.read(offset, fetch_bytes).map_err(|e| e.to_string())?;
        let (_, last) = BatchFramer::new(&r.bytes, 0, MAX_BATCH_SIZE_BYTES)
            .last()
            .ok_or_else(|| format!("empty read at {offset}"))?;
        offset = last.next_offset();
        total += r.bytes.len() as u64;
        reads += 1;
    }
    Ok((total, reads))
}

fn drop_page_cache(dir: &Path) -> Result<(), String> {
    for e in io("list", std::fs::read_dir(dir))? {
        let path = io("list", e)?.path();
        if path.extension().is_some_and(|x| x == "log") {
            let f = io("open", File::open(&path))?;
            rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed)
                .map_err(|e| format!("fadvise {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Builds a multi-segment log of 1000-record batches in `dir`, then times full passes of
/// `fetch_bytes` reads over it, warm then cold.
pub fn read_series(dir: &Path, p: &Params) -> Result<ReadResult, String> {
    let config = LogConfig {
        segment_bytes: p.read_segment_bytes,
        ..LogConfig::default()
    };
    let (mut log, _) = FileLog::open(dir, config).map_err(|e| e.to_string())?;
    log.initialize_leader_epoch(1).map_err(|e| e.to_string())?;
    let per_batch = (p.fetch_bytes / 8 / (p.record_bytes + 8)).clamp(1, 1000);
    let bytes = batch(per_batch, p.record_bytes)?;
    let mut written = 0u64;
    while written < p.read_log_bytes {
        log.append_as_leader(&bytes, 1).map_err(|e| e.to_string())?;
        written += bytes.len() as u64;
    }
    log.flush().map_err(|e| e.to_string())?;
    let (_, _) = read_pass(&log, p.fetch_bytes)?; // warm up
    let t = now();
    let (total, reads) = read_pass(&log, p.fetch_bytes)?;
    let warm_mb_s = mb_s(total, t.elapsed());
    if total != written {
        return Err(format!("read {total} of {written} bytes"));
    }
    drop_page_cache(dir)?;
    let t = now();
    let (cold_total, _) = read_pass(&log, p.fetch_bytes)?;
    let cold_mb_s = mb_s(cold_total, t.elapsed());
    Ok(ReadResult {
        segments: log.segment_bases().len(),
        log_bytes: written,
        reads,
        warm_mb_s,
        cold_mb_s,
    })
}

/// The whole benchmark in `dir` (each part in its own subdirectory).
pub fn run(dir: &Path, p: &Params) -> Result<Report, String> {
    let floors = floors(dir, p)?;
    let mut appends = Vec::new();
    for &n in &p.batch_sizes {
        let sub = dir.join(format!("append-{n}"));
        appends.push(append_series(&sub, p, n)?);
        io("cleanup", std::fs::remove_dir_all(&sub))?;
    }
    let sub = dir.join("read");
    let read = read_series(&sub, p)?;
    io("cleanup", std::fs::remove_dir_all(&sub))?;
    Ok(Report {
        floors,
        appends,
        read,
    })
}

fn us(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}

/// The report as the Markdown table of docs/benchmarks.md.
pub fn markdown(r: &Report) -> String {
    let f = &r.floors;
    let mut s = String::new();
    s.push_str("| measurement | result | floor | bound |\n|---|---|---|---|\n");
    s.push_str(&format!(
        "| floor: 4 KiB append + fsync | p50 {} · p99 {} · mean {} | — | device flush latency |\n",
        us(f.fsync_4k.p50),
        us(f.fsync_4k.p99),
        us(f.fsync_4k.mean)
    ));
    s.push_str(&format!(
        "| floor: sequential write (1 MiB writes + one fsync) | {:.0} MB/s | — | device bandwidth |\n",
        f.seq_write_mb_s
    ));
    s.push_str(&format!(
        "| floor: memcpy (64 MiB blocks) | {:.0} MB/s | — | memory bandwidth |\n",
        f.memcpy_mb_s
    ));
    for a in &r.appends {
        let fsync_share = f.fsync_4k.p50.as_secs_f64() / a.latency.p50.as_secs_f64().max(1e-9);
        let bw_share = a.mb_s / f.seq_write_mb_s.max(1e-9);
        let bound = if fsync_share >= bw_share {
            format!(
                "fsync latency: p50 batch = {:.2}× a 4 KiB fsync",
                1.0 / fsync_share
            )
        } else {
            format!(
                "write bandwidth: {:.0}% of sequential write",
                bw_share * 100.0
            )
        };
        s.push_str(&format!(
            "| append + fsync, {} × {} B records ({} B batch), {} batches | {:.0} records/s · {:.1} MB/s · p50 {} · p99 {} | {} (fsync p50) | {bound} |\n",
            a.batch_records,
            a.record_bytes,
            a.batch_bytes,
            a.batches,
            a.records_per_s,
            a.mb_s,
            us(a.latency.p50),
            us(a.latency.p99),
            us(f.fsync_4k.p50),
        ));
    }
    let rd = &r.read;
    s.push_str(&format!(
        "| read, 8 MiB fetches, warm page cache ({} MiB log, {} segments, {} reads/pass) | {:.0} MB/s | {:.0} MB/s (memcpy) | memory copies: {:.0}% of memcpy |\n",
        rd.log_bytes / (1024 * 1024),
        rd.segments,
        rd.reads,
        rd.warm_mb_s,
        f.memcpy_mb_s,
        rd.warm_mb_s / f.memcpy_mb_s.max(1e-9) * 100.0
    ));
    s.push_str(&format!(
        "| read, 8 MiB fetches, cold (fadvise DONTNEED first) | {:.0} MB/s | {:.0} MB/s (seq write) | device read bandwidth |\n",
        rd.cold_mb_s, f.seq_write_mb_s
    ));
    s
}
