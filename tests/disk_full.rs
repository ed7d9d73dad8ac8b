//! Write failures are fatal and loud, never silent loss. A real write error comes from a file
//! size limit: the writer runs in a child process under `ulimit -f` with SIGXFSZ ignored, so
//! a write past the limit fails with EFBIG exactly as a full disk fails with ENOSPC.
//!
//! - library: `FileLog` appends hit the limit → `LogError::Io` naming the segment; every
//!   flushed batch is intact after reopening, and the file ends on a batch boundary.
//! - node: `ferrokraft start` with a workload hits the limit → exit 1 with one fatal line
//!   naming the segment and the durable offset; restarted without the limit it has every
//!   record below that offset, byte for byte, and keeps going.
//! - node: a quorum-state write that fails → exit 1 naming quorum-state; the old file stays.

// Integration tests drive real processes: unwrapping and wall-clock deadlines are fine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod local;
use local::free_port;

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use ferrokraft::log::{FileLog, LocalLog, LogConfig, LogError};
use ferrokraft::records::batch::MAX_BATCH_SIZE_BYTES;
use ferrokraft::records::{build_data_batch, BatchFramer, BatchView};

/// Set in the child run of a test: the directory to write in.
const CHILD_DIR_ENV: &str = "FERROKRAFT_DISK_FULL_CHILD_DIR";
/// `ulimit -f` counts 1024-byte blocks in bash.
const LIMIT_KIB: u64 = 64;

/// `argv` run under a file size limit of `limit_kib` KiB with SIGXFSZ ignored.
fn limited(limit_kib: u64, argv: &[&std::ffi::OsStr]) -> Command {
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(r#"trap "" XFSZ; ulimit -f "$1" || exit 99; shift; exec "$@""#)
        .arg("bash")
        .arg(limit_kib.to_string())
        .args(argv);
    c
}

/// The value of batch `i`: deterministic, so the parent can check what the child wrote.
fn batch_values(i: i64) -> Vec<Vec<u8>> {
    (0..4)
        .map(|r| {
            let mut v = format!("batch {i} record {r} ").into_bytes();
            v.resize(200, (i % 251) as u8);
            v
        })
        .collect()
}

fn batch_bytes(i: i64, base_offset: i64) -> Vec<u8> {
    let values = batch_values(i);
    let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
    build_data_batch(base_offset, 1, 1_700_000_000_000 + i, &refs).unwrap()
}

/// Child side: append batch after batch, flushing every third, until a write fails.
/// Reports `flushed <offset>` after each flush and `error <debug>` at the end.
fn child_append_until_failure(dir: &Path) {
    let (mut log, _) = FileLog::open(dir, LogConfig::default()).unwrap();
    log.initialize_leader_epoch(1).unwrap();
    for i in 0.. {
        let r = log.append_as_leader(&batch_bytes(i, 0), 1).and_then(|_| {
            if i % 3 == 2 {
                log.flush()?;
                println!("CHILD flushed {}", log.flushed_offset());
            }
            Ok(())
        });
        if let Err(e) = r {
            match &e {
                LogError::Io { path, .. } => {
                    println!("CHILD error-path {}", path.display());
                    println!("CHILD error-display {e}");
                }
                other => println!("CHILD unexpected {other:?}"),
            }
            return;
        }
        assert!(i < 100_000, "no write failed under the file size limit");
    }
}

fn child_lines(stdout: &str, key: &str) -> Vec<String> {
    let prefix = format!("CHILD {key} ");
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix).map(str::to_string))
        .collect()
}

/// Every batch of the log from its start to its end, in order.
fn all_batches(log: &FileLog) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut offset = log.start_offset();
    while offset < log.end_offset() {
        let read = log.read(offset, 1 << 20).unwrap();
        assert!(!read.bytes.is_empty(), "empty read at {offset}");
        for (_, view) in BatchFramer::new(&read.bytes, 0, MAX_BATCH_SIZE_BYTES) {
            offset = view.next_offset();
            out.push(view.as_bytes().to_vec());
        }
    }
    out
}

#[test]
fn file_log_append_past_a_file_size_limit_is_an_io_error_and_flushed_data_survives() {
    if let Some(dir) = std::env::var_os(CHILD_DIR_ENV) {
        child_append_until_failure(Path::new(&dir));
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("__cluster_metadata-0");
    let exe = std::env::current_exe().unwrap();
    let out = limited(
        LIMIT_KIB,
        &[
            exe.as_os_str(),
            "--exact".as_ref(),
            "file_log_append_past_a_file_size_limit_is_an_io_error_and_flushed_data_survives"
                .as_ref(),
            "--nocapture".as_ref(),
            "--test-threads=1".as_ref(),
        ],
    )
    .env(CHILD_DIR_ENV, &dir)
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        child_lines(&stdout, "unexpected").is_empty(),
        "not an Io error: {stdout}"
    );
    let segment = dir.join("00000000000000000000.log");
    assert_eq!(
        child_lines(&stdout, "error-path"),
        vec![segment.display().to_string()],
        "{stdout}"
    );
    let display = child_lines(&stdout, "error-display").join("\n");
    assert!(
        display.contains("append") && display.contains("File too large"),
        "{display}"
    );
    let flushed: i64 = child_lines(&stdout, "flushed")
        .last()
        .expect("some flushes succeeded before the limit")
        .parse()
        .unwrap();
    assert!(flushed >= 4 * 30, "only {flushed} records were flushed");

    // The failed append was cut back: the file holds whole batches only, within the limit.
    let len = fs::metadata(&segment).unwrap().len();
    assert!(len <= LIMIT_KIB * 1024, "{len}");
    let (log, report) = FileLog::open(&dir, LogConfig::default()).unwrap();
    assert!(report.cuts.is_empty(), "{:?}", report.cuts);
    assert!(log.end_offset() >= flushed);
    let batches = all_batches(&log);
    for (i, b) in batches.iter().enumerate() {
        let view = BatchView::new(b).unwrap();
        let expected = batch_bytes(i as i64, view.base_offset());
        // Leader appends restamp the partition leader epoch (outside the CRC) to 1, as built.
        assert_eq!(b, &expected, "batch {i} differs");
        assert_eq!(view.base_offset(), 4 * i as i64);
    }
    assert_eq!(4 * batches.len() as i64, log.end_offset());
}

// ---- node level -------------------------------------------------------------------------

fn ferrokraft() -> &'static std::ffi::OsStr {
    env!("CARGO_BIN_EXE_ferrokraft").as_ref()
}

/// A formatted single-voter node in a temp dir.
struct NodeDir {
    _tmp: tempfile::TempDir,
    props: PathBuf,
    partition_dir: PathBuf,
}

impl NodeDir {
    fn new() -> NodeDir {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let props = tmp.path().join("node.properties");
        let port = free_port();
        fs::write(
            &props,
            format!(
                "process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@127.0.0.1:{port}\nlisteners=CONTROLLER://127.0.0.1:{port}\ncontroller.listener.names=CONTROLLER\nlog.dirs={}\n",
                data.display()
            ),
        )
        .unwrap();
        let out = Command::new(ferrokraft())
            .args(["format", "-t", "MkU3OEVBNTcwNTJENDM2Qk", "-c"])
            .arg(&props)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "format failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        NodeDir {
            partition_dir: data.join("__cluster_metadata-0"),
            _tmp: tmp,
            props,
        }
    }

    fn start_args<'a>(&'a self, workload: &'a str) -> Vec<&'a std::ffi::OsStr> {
        vec![
            ferrokraft(),
            "start".as_ref(),
            "-c".as_ref(),
            self.props.as_os_str(),
            "--workload-records-per-sec".as_ref(),
            workload.as_ref(),
        ]
    }
}

/// A running node; stdout/stderr are pipes (a file size limit would apply to log files).
struct Running {
    child: Child,
    stderr: std::thread::JoinHandle<String>,
}

impl Running {
    fn spawn(mut cmd: Command) -> Running {
        let mut child = cmd
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = pipe.read_to_string(&mut s);
            s
        });
        Running { child, stderr }
    }

    /// Waits for exit (killing it after `timeout`); returns the status and stderr.
    fn wait(mut self, timeout: Duration) -> (ExitStatus, String) {
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let status = self.child.wait().unwrap();
                let err = self.stderr.join().unwrap();
                panic!("node did not exit within {timeout:?} ({status}): {err}");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        (status, self.stderr.join().unwrap())
    }

    fn terminate(self) -> (ExitStatus, String) {
        let ok = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
        self.wait(Duration::from_secs(20))
    }
}

fn wait_until(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The last stderr line, which must be the fatal message.
fn fatal_line(stderr: &str) -> &str {
    let line = stderr.trim_end().lines().last().unwrap_or_default();
    println!("fatal line: {line}");
    assert!(
        !line.starts_with('['),
        "the last line is a log line, not the fatal message: {stderr}"
    );
    line
}

#[test]
fn node_stops_with_exit_1_when_the_log_hits_a_write_error_and_recovers_every_flushed_record() {
    let node = NodeDir::new();
    let segment = node.partition_dir.join("00000000000000000000.log");
    let run = Running::spawn(limited(256, &node.start_args("3000")));
    let (status, stderr) = run.wait(Duration::from_secs(60));
    assert_eq!(status.code(), Some(1), "{stderr}");
    let line = fatal_line(&stderr);
    assert!(
        line.contains(&segment.display().to_string()) && line.contains("File too large"),
        "{line}"
    );
    let durable_end: i64 = line
        .split("durable below offset ")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no durable offset in {line}"));
    assert!(durable_end > 100, "{line}");

    // What was on disk when it died: every record below the durable offset, cleanly framed.
    let copy = tempfile::tempdir().unwrap();
    for e in fs::read_dir(&node.partition_dir).unwrap() {
        let e = e.unwrap();
        fs::copy(e.path(), copy.path().join(e.file_name())).unwrap();
    }
    let (log, report) = FileLog::open(copy.path(), LogConfig::default()).unwrap();
    assert!(report.cuts.is_empty(), "{:?}", report.cuts);
    assert!(log.end_offset() >= durable_end);
    let before: Vec<Vec<u8>> = all_batches(&log)
        .into_iter()
        .filter(|b| BatchView::new(b).unwrap().base_offset() < durable_end)
        .collect();
    let covered = BatchView::new(before.last().unwrap())
        .unwrap()
        .next_offset();
    assert!(covered >= durable_end);
    drop(log);

    // Restarted without the limit: it recovers, keeps every flushed batch and appends more.
    let size_at_failure = fs::metadata(&segment).unwrap().len();
    let run = Running::spawn(plain(&node.start_args("3000")));
    wait_until("appends after the restart", Duration::from_secs(30), || {
        fs::metadata(&segment).unwrap().len() > size_at_failure + 64 * 1024
    });
    let (status, stderr) = run.terminate();
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains("cutting the metadata log"), "{stderr}");
    let (log, report) = FileLog::open(&node.partition_dir, LogConfig::default()).unwrap();
    assert!(report.cuts.is_empty(), "{:?}", report.cuts);
    let after = all_batches(&log);
    assert!(after.len() > before.len());
    assert_eq!(&after[..before.len()], &before[..]);
    assert!(log.end_offset() > durable_end);
}

#[test]
fn node_stops_with_exit_1_when_quorum_state_cannot_be_written_and_the_old_file_stays() {
    let node = NodeDir::new();
    let quorum_state = node.partition_dir.join("quorum-state");
    let run = Running::spawn(plain(&node.start_args("0")));
    wait_until("leadership", Duration::from_secs(30), || {
        fs::read_to_string(&quorum_state).is_ok_and(|s| s.contains("\"leaderId\":1"))
    });
    let (status, stderr) = run.terminate();
    assert!(status.success(), "{stderr}");
    let before = fs::read(&quorum_state).unwrap();

    // No file may grow at all: the first quorum-state write of the next election fails.
    let run = Running::spawn(limited(0, &node.start_args("0")));
    let (status, stderr) = run.wait(Duration::from_secs(60));
    assert_eq!(status.code(), Some(1), "{stderr}");
    let line = fatal_line(&stderr);
    assert!(
        line.contains(&quorum_state.display().to_string()) && line.contains("File too large"),
        "{line}"
    );
    assert_eq!(fs::read(&quorum_state).unwrap(), before);
    assert!(!node.partition_dir.join("quorum-state.tmp").exists());
}

/// `argv` run as is.
fn plain(argv: &[&std::ffi::OsStr]) -> Command {
    let mut c = Command::new(argv[0]);
    c.args(&argv[1..]);
    c
}
