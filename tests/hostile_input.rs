//! Hostile input against running ferrokraft processes (#19): frames of minimal array elements
//! stay within their memory bounds (peak RSS read from /proc), floods of idle connections lock
//! no one out (the quorum keeps electing and replicating, clients are answered), per-address
//! limits refuse as Kafka does, and warnings about bad peers are rate-limited.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferrokraft::codec::messages::{RequestBody, ResponseBody};
use ferrokraft::codec::reproducers;
use ferrokraft::codec::request::encode_request;
use ferrokraft::codec::response::decode_response;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::{ApiKey, ApiVersionsRequest, CreateTopicsRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use support::cluster::{Cluster, Impl};

const MIB: u64 = 1024 * 1024;

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

fn api_versions_frame(correlation_id: i32) -> Bytes {
    let body = ApiVersionsRequest::default()
        .with_client_software_name(StrBytes::from_static_str("hostile-input-test"))
        .with_client_software_version(StrBytes::from_static_str("1.0"));
    encode_request(
        &RequestBody::ApiVersions(body),
        3,
        correlation_id,
        "hostile",
    )
    .unwrap()
}

fn read_frame(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut size = [0u8; 4];
    s.read_exact(&mut size).ok()?;
    let mut body = vec![0; i32::from_be_bytes(size).max(0) as usize];
    s.read_exact(&mut body).ok()?;
    Some(body)
}

/// Whether a fresh connection to `port` gets its ApiVersions answered within 5 s.
fn api_versions_answered(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(&addr(port), Duration::from_secs(5)) else {
        return false;
    };
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    if s.write_all(&api_versions_frame(77)).is_err() {
        return false;
    }
    let Some(resp) = read_frame(&mut s) else {
        return false;
    };
    matches!(
        decode_response(Bytes::from(resp), ApiKey::ApiVersions, 3),
        Ok((77, ResponseBody::ApiVersions(r))) if r.error_code == 0
    )
}

#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Closed,
    Answered,
}

/// Sends `body` as one frame on a fresh connection and waits (up to 60 s) for the node to close
/// the connection or answer.
fn send_frame(port: u16, body: &[u8]) -> Outcome {
    let mut s = TcpStream::connect(addr(port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut framed = (body.len() as u32).to_be_bytes().to_vec();
    framed.extend_from_slice(body);
    if s.write_all(&framed).is_err() {
        return Outcome::Closed;
    }
    match read_frame(&mut s) {
        Some(_) => Outcome::Answered,
        None => Outcome::Closed,
    }
}

fn status_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"));
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

/// Resets the peak RSS (VmHWM) of `pid` to its current RSS.
fn reset_peak(pid: u32) {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").unwrap();
}

/// Runs `send` and checks that the node's peak RSS rose at most `allowed` bytes above its RSS
/// before, and that it still answers.
fn assert_peak_within(pid: u32, port: u16, what: &str, allowed: u64, send: impl FnOnce()) {
    reset_peak(pid);
    let before = status_bytes(pid, "VmRSS:");
    send();
    let peak = status_bytes(pid, "VmHWM:");
    eprintln!(
        "{what}: peak RSS {} MiB above the {} MiB before (allowed {} MiB)",
        peak.saturating_sub(before) / MIB,
        before / MIB,
        allowed / MIB
    );
    assert!(
        peak.saturating_sub(before) <= allowed,
        "{what}: peak {peak}, before {before}"
    );
    assert!(
        api_versions_answered(port),
        "{what}: the node still answers"
    );
}

fn one_node(test: &str, extra: &[(&str, &str)]) -> Cluster {
    let mut c = Cluster::new(test, &[Impl::Ferrokraft], extra);
    c.start_all();
    let port = c.nodes[0].port;
    let deadline = Instant::now() + Duration::from_secs(20);
    while !api_versions_answered(port) {
        assert!(Instant::now() < deadline, "node answers ApiVersions");
        std::thread::sleep(Duration::from_millis(100));
    }
    c
}

#[test]
fn minimal_element_frames_stay_within_their_memory_bounds() {
    let _serial = support::cluster::serial();
    let c = one_node("hostile-memory", &[]);
    let port = c.nodes[0].port;
    let pid = c.nodes[0].pid().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let baseline = status_bytes(pid, "VmRSS:");
    // (what, frame, outcome, allowed peak above the RSS before it, per wire byte)
    let cases: Vec<(&str, Bytes, Outcome, f64)> = vec![
        (
            "DescribeQuorum v0, 8 MiB",
            reproducers::describe_quorum_minimal_topics(2_796_202),
            Outcome::Closed,
            2.0,
        ),
        (
            "DescribeQuorum v0, 95 MiB",
            reproducers::describe_quorum_minimal_topics(33_204_906),
            Outcome::Closed,
            1.5,
        ),
        (
            "Fetch v4, 95 MiB",
            reproducers::fetch_minimal_topics(16_600_000),
            Outcome::Closed,
            1.5,
        ),
        // Decodes (about 6 bytes per wire byte, inside the budget) and is answered
        // INVALID_REQUEST, as Kafka answers a Vote for more than one partition.
        (
            "Vote v0, 8 MiB",
            reproducers::vote_minimal_topics(299_593),
            Outcome::Answered,
            13.0,
        ),
    ];
    for (what, frame, outcome, per_wire_byte) in cases {
        let allowed = (frame.len() as f64 * per_wire_byte) as u64 + 32 * MIB;
        assert_peak_within(pid, port, what, allowed, || {
            assert_eq!(send_frame(port, &frame), outcome, "{what}");
        });
    }

    // Six 95 MiB frames at once (14.4 GB before the budget): they are read one at a time.
    let frame = reproducers::describe_quorum_minimal_topics(33_204_906);
    let allowed = 2 * frame.len() as u64 + 64 * MIB;
    assert_peak_within(pid, port, "six 95 MiB frames at once", allowed, || {
        let senders: Vec<_> = (0..6)
            .map(|_| {
                let frame = frame.clone();
                std::thread::spawn(move || send_frame(port, &frame))
            })
            .collect();
        for s in senders {
            assert_eq!(s.join().unwrap(), Outcome::Closed);
        }
    });

    // After the burst the memory goes back.
    std::thread::sleep(Duration::from_secs(2));
    let after = status_bytes(pid, "VmRSS:");
    eprintln!(
        "RSS: {} MiB at start, {} MiB after the burst",
        baseline / MIB,
        after / MIB
    );
    assert!(
        after <= baseline + 64 * MIB,
        "RSS {after} after the burst, {baseline} at start"
    );
}

#[test]
fn idle_connections_cost_little_memory_and_lock_no_one_out() {
    let _serial = support::cluster::serial();
    ferrokraft::network::fd_limit::raise_open_files_limit();
    let c = one_node("hostile-idle", &[]);
    let port = c.nodes[0].port;
    let pid = c.nodes[0].pid().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let before = status_bytes(pid, "VmRSS:");
    // More than the 4,096 connections that used to lock everyone out (Kafka's default is
    // unlimited, and so is ours now, up to the open-files limit).
    const N: u64 = 5_000;
    // Half of them announce a 64 KiB frame and send nothing more: four bytes must not buy the
    // buffer the prefix announces.
    let idle: Vec<TcpStream> = (0..N)
        .map(|i| {
            let mut s = TcpStream::connect(addr(port)).unwrap();
            if i % 2 == 0 {
                s.write_all(&65_536u32.to_be_bytes()).unwrap();
            }
            s
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    assert!(api_versions_answered(port), "a new client is answered");
    let after = status_bytes(pid, "VmRSS:");
    let per_connection = after.saturating_sub(before) / N;
    eprintln!(
        "{N} idle connections: RSS {} MiB → {} MiB ({per_connection} bytes each)",
        before / MIB,
        after / MIB
    );
    assert!(
        per_connection <= 16 * 1024,
        "{per_connection} bytes per idle connection"
    );
    drop(idle);
}

#[test]
fn a_large_frame_decodes_within_what_the_budget_reserved_for_it() {
    let _serial = support::cluster::serial();
    let c = one_node(
        "hostile-reserved-decode",
        &[
            ("socket.request.max.bytes", "1048576"),
            ("queued.max.request.bytes", "1048576"),
        ],
    );
    let port = c.nodes[0].port;
    // A legal CreateTopics of ~0.7 MiB with short names decodes to about 7 bytes per wire byte:
    // inside the per-frame rate (12), but not inside the 1 MiB budget, which is all it got.
    let topics = (0..50_000)
        .map(|i| {
            CreatableTopic::default()
                .with_name(TopicName(StrBytes::from_string(format!("t{i}"))))
                .with_num_partitions(1)
                .with_replication_factor(1)
        })
        .collect();
    let body = RequestBody::CreateTopics(CreateTopicsRequest::default().with_topics(topics));
    let frame = encode_request(&body, 7, 9, "hostile").unwrap();
    assert!(
        frame.len() < 1_048_576 && frame.len() > 600_000,
        "{}",
        frame.len()
    );
    assert_eq!(send_frame(port, &frame[4..]), Outcome::Closed);
    let log = c.nodes[0].log_text();
    assert!(log.contains("would decode to more than"), "{log}");
    assert!(api_versions_answered(port));
}

#[test]
fn a_slow_large_frame_cannot_hold_request_memory_for_ever() {
    // No serial lock: this test mostly waits, so it overlaps the others.
    let c = one_node(
        "hostile-slow-frame",
        &[
            ("socket.request.max.bytes", "1048576"),
            ("queued.max.request.bytes", "1048576"),
        ],
    );
    let port = c.nodes[0].port;
    // A announces a 1 MiB frame (its cost is more than the whole budget, so it takes all of
    // it) and sends nothing more.
    let mut a = TcpStream::connect(addr(port)).unwrap();
    a.write_all(&1_000_000u32.to_be_bytes()).unwrap();
    a.write_all(&[0; 100]).unwrap();
    // A is reserved as soon as the node reads its prefix; give a loaded machine ample time.
    std::thread::sleep(Duration::from_secs(1));
    // Small frames never wait for the budget.
    assert!(
        api_versions_answered(port),
        "a small request is answered at once"
    );
    // B's large frame (an ApiVersions with 200 KB of trailing bytes, which Kafka ignores)
    // waits until A is closed for being too slow.
    let mut framed = api_versions_frame(5).to_vec();
    framed.extend_from_slice(&[0; 200_000]);
    let len = (framed.len() - 4) as u32;
    framed[..4].copy_from_slice(&len.to_be_bytes());
    let mut b = TcpStream::connect(addr(port)).unwrap();
    b.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    b.write_all(&framed).unwrap();
    let answer = read_frame(&mut b).expect("the large request is answered once A is gone");
    assert!(matches!(
        decode_response(Bytes::from(answer), ApiKey::ApiVersions, 3),
        Ok((5, ResponseBody::ApiVersions(r))) if r.error_code == 0
    ));
    a.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut byte = [0u8; 1];
    assert!(matches!(a.read(&mut byte), Ok(0) | Err(_)), "A was closed");
    let log = c.nodes[0].log_text();
    assert!(
        log.contains(
            "a 1000000-byte request holding request memory did not arrive within 11000 ms"
        ),
        "{log}"
    );
}

/// Whether the node closed `s` (EOF), checked without blocking for long.
fn closed_by_node(s: &TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    let mut b = [0u8; 1];
    let mut reader = s;
    match reader.read(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
    }
}

#[test]
fn idle_connection_flood_locks_no_one_out() {
    let _serial = support::cluster::serial();
    const MAX: usize = 64;
    let max = MAX.to_string();
    let mut c = Cluster::new(
        "hostile-flood",
        &[Impl::Ferrokraft, Impl::Ferrokraft, Impl::Ferrokraft],
        &[("max.connections", &max)],
    );
    c.start_all();
    let (leader, epoch, _) = c.wait_for_leader(1, 1, Duration::from_secs(60));
    let ports: Vec<u16> = c.nodes.iter().map(|n| n.port).collect();
    // 200 silent connections to every node, three times what each accepts.
    let flood: Vec<Vec<TcpStream>> = ports
        .iter()
        .map(|p| {
            (0..200)
                .filter_map(|_| TcpStream::connect(addr(*p)).ok())
                .collect()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    for (i, p) in ports.iter().enumerate() {
        assert!(
            api_versions_answered(*p),
            "node {} answers a new client",
            i + 1
        );
    }
    // Kill the leader: the others must open new connections to each other to elect one.
    c.node(leader).kill();
    let via = if leader == 1 { 2 } else { 1 };
    let (new_leader, new_epoch, hw) = c.wait_for_leader(via, 1, Duration::from_secs(60));
    assert_ne!(new_leader, leader);
    assert!(new_epoch > epoch);
    // The old leader comes back into the flood and catches up.
    c.start(leader);
    c.wait_for_leader(via, hw + 1, Duration::from_secs(60));
    c.wait_caught_up(via, Duration::from_secs(60));
    for (i, conns) in flood.iter().enumerate() {
        if i as i32 + 1 == leader {
            continue; // restarted: its flood connections died with it
        }
        let open = conns.iter().filter(|s| !closed_by_node(s)).count();
        assert!(
            open <= MAX,
            "node {}: {open} flood connections still open",
            i + 1
        );
        let log = c.nodes[i].log_text();
        let evictions = log
            .lines()
            .filter(|l| l.contains("closed the least recently active connection"))
            .count();
        assert!(
            (1..=3).contains(&evictions),
            "node {}: {evictions} eviction warnings (rate-limited per address)",
            i + 1
        );
    }
}

#[test]
fn per_address_limit_refuses_and_bad_peers_are_logged_once() {
    let _serial = support::cluster::serial();
    let c = one_node(
        "hostile-per-ip",
        &[("max.connections.per.ip.overrides", "127.0.0.2:3")],
    );
    let port = c.nodes[0].port;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let from_127_0_0_2 = || -> TcpStream {
        rt.block_on(async {
            let s = tokio::net::TcpSocket::new_v4().unwrap();
            s.bind(SocketAddr::from(([127, 0, 0, 2], 0))).unwrap();
            let stream = s.connect(addr(port)).await.unwrap();
            let std = stream.into_std().unwrap();
            std.set_nonblocking(false).unwrap();
            std
        })
    };
    let mut admitted: Vec<TcpStream> = (0..3).map(|_| from_127_0_0_2()).collect();
    for s in &mut admitted {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(&api_versions_frame(1)).unwrap();
        assert!(read_frame(s).is_some(), "answered within the limit");
    }
    let mut fourth = from_127_0_0_2();
    fourth
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut b = [0u8; 1];
    assert!(
        matches!(fourth.read(&mut b), Ok(0) | Err(_)),
        "the fourth is closed"
    );
    // Other addresses are not limited.
    assert!(api_versions_answered(port));
    drop(admitted.pop());
    std::thread::sleep(Duration::from_millis(200));
    let mut again = from_127_0_0_2();
    again
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    again.write_all(&api_versions_frame(2)).unwrap();
    assert!(
        read_frame(&mut again).is_some(),
        "room again once one closed"
    );

    // 200 bad frames from one address: one warning in full, the rest counted.
    for _ in 0..200 {
        let mut s = TcpStream::connect(addr(port)).unwrap();
        let _ = s.write_all(&[0xff, 0xff, 0xff, 0xff]);
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = s.read(&mut b);
    }
    assert!(api_versions_answered(port));
    let log = c.nodes[0].log_text();
    let rejected = log
        .lines()
        .filter(|l| l.contains("Rejected connection from /127.0.0.2, address already has the configured maximum of 3 connections."))
        .count();
    assert_eq!(
        rejected, 1,
        "the refusal is logged as Kafka words it:\n{log}"
    );
    let bad_frames = log
        .lines()
        .filter(|l| l.contains("WARN") && l.contains("invalid frame size -1"))
        .count();
    assert_eq!(bad_frames, 1, "one warning for 200 bad frames:\n{log}");
}
