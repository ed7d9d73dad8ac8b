//! A bounded mutation fuzzer of the listener (#19): Kafka's own request vectors of every API and
//! version (`protocol-tests/golden`), mutated (byte flips, truncations, inflated lengths, lying
//! size prefixes, header confusion, pipelining, slow senders) and sent to a running ferrokraft
//! process, which must stay alive and answering, with bounded peak RSS and rate-limited
//! warnings. Seeded and repeatable: `FUZZ_SEED` and `FUZZ_FRAMES` choose the run (CI runs a
//! short one; docs/architecture.md records a long one).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_protocol::messages::ApiKey;
use support::cluster::{Cluster, Impl};

/// A small, fast, seedable generator (xorshift64*), so a run is replayed from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Request frames (header + body, no size prefix) from Kafka's vectors.
fn kafka_request_frames() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol-tests/golden");
    let mut frames = Vec::new();
    for file in ["kafka-4.1.2.vectors", "kafka-4.4.0-rpc.vectors"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            // `key version request [variant] hex`
            let (key, version, hex) = match cols[..] {
                [key, version, "request", hex] | [key, version, "request", _, hex] => {
                    (key, version, hex)
                }
                _ => continue,
            };
            let (Ok(key), Ok(version)) = (key.parse::<i16>(), version.parse::<i16>()) else {
                continue;
            };
            let Ok(api) = ApiKey::try_from(key) else {
                continue;
            };
            let body: Vec<u8> = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
                .collect();
            let mut f = Vec::new();
            f.extend_from_slice(&key.to_be_bytes());
            f.extend_from_slice(&version.to_be_bytes());
            f.extend_from_slice(&7i32.to_be_bytes());
            f.extend_from_slice(&4i16.to_be_bytes());
            f.extend_from_slice(b"fuzz");
            if api.request_header_version(version) >= 2 {
                f.push(0);
            }
            f.extend_from_slice(&body);
            frames.push(f);
        }
    }
    assert!(frames.len() > 150, "vectors loaded ({})", frames.len());
    frames
}

fn prefixed(frame: &[u8]) -> Vec<u8> {
    let mut out = (frame.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(frame);
    out
}

/// One case: the bytes to send and whether to send them slowly.
fn mutate(rng: &mut Rng, frames: &[Vec<u8>]) -> (Vec<u8>, bool) {
    let mut frame = frames[rng.below(frames.len())].clone();
    let slow = rng.below(100) == 0;
    let bytes = match rng.below(8) {
        0 => prefixed(&frame), // valid, as Kafka wrote it
        1 => {
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(frame.len());
                frame[i] ^= 1 << rng.below(8);
            }
            prefixed(&frame)
        }
        2 => {
            frame.truncate(rng.below(frame.len()));
            prefixed(&frame)
        }
        3 => {
            // An inflated length or count somewhere in the body.
            if frame.len() > 12 {
                let i = 8 + rng.below(frame.len() - 12);
                let v: [u8; 4] = match rng.below(3) {
                    0 => [0x7f, 0xff, 0xff, 0xff],
                    1 => [0xff, 0xff, 0xff, 0xfe],
                    _ => (rng.next() as u32).to_be_bytes(),
                };
                frame[i..i + 4].copy_from_slice(&v);
            }
            prefixed(&frame)
        }
        4 => {
            // A size prefix that lies (longer: the node waits; shorter: the rest is a frame).
            let mut out = prefixed(&frame);
            let lie = match rng.below(3) {
                0 => frame.len() as u32 + 1 + rng.below(1000) as u32,
                1 => rng.below(frame.len()) as u32,
                _ => rng.next() as u32,
            };
            out[..4].copy_from_slice(&lie.to_be_bytes());
            out
        }
        5 => {
            // Header confusion: another API key or version on the same body.
            let key = (rng.below(110) as i16) - 5;
            let version = (rng.below(24) as i16) - 2;
            frame[0..2].copy_from_slice(&key.to_be_bytes());
            frame[2..4].copy_from_slice(&version.to_be_bytes());
            prefixed(&frame)
        }
        6 => {
            // Pipelining: several frames in one write, some mutated.
            let mut out = Vec::new();
            for _ in 0..2 + rng.below(8) {
                let mut f = frames[rng.below(frames.len())].clone();
                if rng.below(3) == 0 {
                    let i = rng.below(f.len());
                    f[i] = rng.next() as u8;
                }
                out.extend(prefixed(&f));
            }
            out
        }
        _ => {
            // Random bytes after a plausible prefix.
            let n = rng.below(64);
            let mut out = (n as u32).to_be_bytes().to_vec();
            out.extend((0..n).map(|_| rng.next() as u8));
            out
        }
    };
    (bytes, slow)
}

/// Sends one case on a fresh connection and reads whatever comes back until the node closes
/// the connection or goes quiet.
fn send_case(port: u16, bytes: &[u8], slow: bool) {
    let Ok(mut s) = TcpStream::connect(SocketAddr::from(([127, 0, 0, 1], port))) else {
        return;
    };
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    if slow {
        for chunk in bytes.chunks(3) {
            if s.write_all(chunk).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    } else if s.write_all(bytes).is_err() {
        return;
    }
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
    }
}

fn api_versions_answered(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(SocketAddr::from(([127, 0, 0, 1], port))) else {
        return false;
    };
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // ApiVersions v0 (header v1, empty body).
    let mut f = Vec::new();
    f.extend_from_slice(&18i16.to_be_bytes());
    f.extend_from_slice(&0i16.to_be_bytes());
    f.extend_from_slice(&99i32.to_be_bytes());
    f.extend_from_slice(&(-1i16).to_be_bytes());
    if s.write_all(&prefixed(&f)).is_err() {
        return false;
    }
    let mut head = [0u8; 10];
    s.read_exact(&mut head).is_ok() && head[4..8] == 99i32.to_be_bytes() && head[8..10] == [0, 0]
}

fn peak_rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

#[test]
fn mutated_kafka_requests_never_stop_the_node() {
    let _serial = support::cluster::serial();
    let seed: u64 = std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_1919);
    let total: usize = std::env::var("FUZZ_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2500);
    eprintln!("fuzzing with FUZZ_SEED={seed} FUZZ_FRAMES={total}");
    let frames = Arc::new(kafka_request_frames());
    let mut c = Cluster::new("fuzz-listener", &[Impl::Ferrokraft], &[]);
    c.start_all();
    let port = c.nodes[0].port;
    let pid = c.nodes[0].pid().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !api_versions_answered(port) {
        assert!(Instant::now() < deadline, "node answers before fuzzing");
        std::thread::sleep(Duration::from_millis(100));
    }
    let started = Instant::now();
    let sent = Arc::new(AtomicUsize::new(0));
    const THREADS: u64 = 4;
    const CHECK_EVERY: usize = 500;
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let frames = frames.clone();
            let sent = sent.clone();
            std::thread::spawn(move || {
                let mut rng = Rng(seed.wrapping_add(t.wrapping_mul(0x9e37_79b9_7f4a_7c15)) | 1);
                while sent.fetch_add(1, Ordering::Relaxed) < total {
                    let (bytes, slow) = mutate(&mut rng, &frames);
                    send_case(port, &bytes, slow);
                }
            })
        })
        .collect();
    let mut checked = 0;
    while workers.iter().any(|w| !w.is_finished()) {
        std::thread::sleep(Duration::from_millis(200));
        let now_sent = sent.load(Ordering::Relaxed);
        if now_sent / CHECK_EVERY > checked {
            checked = now_sent / CHECK_EVERY;
            assert!(c.nodes[0].is_running(), "node alive after {now_sent} cases");
            assert!(
                api_versions_answered(port),
                "node answers after {now_sent} cases"
            );
        }
    }
    for w in workers {
        w.join().unwrap();
    }
    assert!(c.nodes[0].is_running(), "node alive at the end");
    assert!(api_versions_answered(port), "node answers at the end");
    let peak = peak_rss_bytes(pid);
    let log = c.nodes[0].log_text();
    let warnings = log.lines().filter(|l| l.contains(" WARN ")).count();
    let secs = started.elapsed().as_secs();
    eprintln!(
        "{total} cases in {secs} s: peak RSS {} MiB, {warnings} WARN lines, {} log bytes",
        peak >> 20,
        log.len()
    );
    assert!(!log.contains("panicked"), "no panic:\n{log}");
    assert!(peak < 256 << 20, "peak RSS {peak} bounded");
    // Every bad connection came from 127.0.0.1: a handful of lines per minute, not one each.
    let allowed = 8 * (secs / 60 + 1) as usize;
    assert!(
        warnings <= allowed,
        "{warnings} WARN lines in {secs} s (allowed {allowed}):\n{}",
        support::cluster::tail(&log, 40)
    );
}
