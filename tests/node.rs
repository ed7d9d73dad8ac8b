//! A running ferrokraft quorum: three real processes on free loopback ports, observed through
//! their `/metrics` endpoints and through Apache Kafka's own `kafka-metadata-quorum`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use support::cluster::{common_prefix_equal, Cluster, Impl};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A three-node ferrokraft quorum with metrics endpoints; returns it and the metrics ports.
fn quorum(test: &str, workload: bool) -> (Cluster, Vec<u16>) {
    let ports: Vec<u16> = (0..3).map(|_| support::kafka::free_port()).collect();
    let mut c = Cluster::new(
        test,
        &[Impl::Ferrokraft, Impl::Ferrokraft, Impl::Ferrokraft],
        &[],
    );
    for (i, port) in ports.iter().enumerate() {
        let props = c.nodes[i].props.clone();
        let mut text = std::fs::read_to_string(&props).unwrap();
        text.push_str(&format!("ferrokraft.metrics.listener=127.0.0.1:{port}\n"));
        std::fs::write(&props, text).unwrap();
        if workload {
            c.nodes[i].extra_args = vec!["--workload-records-per-sec".into(), "200".into()];
        }
    }
    c.start_all();
    (c, ports)
}

/// GET `path` from 127.0.0.1:`port`; None when the node is down.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect_timeout(
        &format!("127.0.0.1:{port}").parse().unwrap(),
        Duration::from_secs(1),
    )
    .ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let code = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text.split("\r\n\r\n").nth(1)?.to_string();
    Some((code, body))
}

fn metrics(port: u16) -> Option<BTreeMap<String, f64>> {
    let (code, body) = http_get(port, "/metrics")?;
    if code != 200 {
        return None;
    }
    Some(
        body.lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let (k, v) = l.rsplit_once(' ')?;
                Some((k.to_string(), v.parse().ok()?))
            })
            .collect(),
    )
}

fn gauge(m: &BTreeMap<String, f64>, name: &str) -> f64 {
    *m.get(&format!("kafka_server_raftmetrics_{name}"))
        .unwrap_or(&f64::NAN)
}

/// Waits until every running node in `ports` agrees on one leader with a known HW; returns
/// (leader, epoch).
fn wait_agreed_leader(ports: &[u16], timeout: Duration) -> (i32, i32) {
    wait_leader_after(ports, 0, timeout)
}

/// Like `wait_agreed_leader`, for an epoch greater than `after_epoch`.
fn wait_leader_after(ports: &[u16], after_epoch: i32, timeout: Duration) -> (i32, i32) {
    let deadline = Instant::now() + timeout;
    loop {
        let views: Vec<(i32, i32, f64)> = ports
            .iter()
            .filter_map(|p| metrics(*p))
            .map(|m| {
                (
                    gauge(&m, "current_leader") as i32,
                    gauge(&m, "current_epoch") as i32,
                    gauge(&m, "high_watermark"),
                )
            })
            .collect();
        if !views.is_empty()
            && views[0].1 > after_epoch
            && views
                .iter()
                .all(|v| v.0 >= 0 && v.0 == views[0].0 && v.1 == views[0].1 && v.2 >= 0.0)
        {
            return (views[0].0, views[0].1);
        }
        assert!(
            Instant::now() < deadline,
            "no agreed leader within {timeout:?}: {views:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Parses the timestamp of the first log line containing `needle` (ms since midnight).
fn log_time_ms(log: &str, needle: &str) -> Option<u64> {
    let line = log.lines().find(|l| l.contains(needle))?;
    let ts = line.get(12..24)?; // "[YYYY-MM-DD HH:MM:SS,mmm]" → "HH:MM:SS,mmm"
    let (hms, ms) = ts.split_once(',')?;
    let mut it = hms.split(':').map(|x| x.parse::<u64>().ok());
    let (h, m, s) = (it.next()??, it.next()??, it.next()??);
    Some(((h * 60 + m) * 60 + s) * 1000 + ms.parse::<u64>().ok()?)
}

#[test]
fn three_nodes_elect_and_kafka_metadata_quorum_describes_them() {
    let _serial = serial();
    let (c, ports) = quorum("node-describe", false);
    let (leader, epoch) = wait_agreed_leader(&ports, Duration::from_secs(30));
    for via in 1..=3 {
        let status = c
            .describe(via, "status")
            .expect("describe --status works through every node");
        assert!(
            status.contains(&format!("LeaderId:               {leader}")),
            "{status}"
        );
        assert!(
            status.contains(&format!("LeaderEpoch:            {epoch}")),
            "{status}"
        );
        assert!(
            status.contains("\"id\": 1")
                && status.contains("\"id\": 2")
                && status.contains("\"id\": 3"),
            "{status}"
        );
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let rows = c.replication(1);
        if rows.len() == 3 && rows.iter().all(|r| r.1 == rows[0].1) {
            let leaders = rows.iter().filter(|r| r.2 == "Leader").count();
            assert_eq!(leaders, 1, "{rows:?}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "replication never showed lag 0: {rows:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let (code, body) = http_get(ports[0], "/ready").unwrap();
    assert_eq!(code, 200, "{body}");
    // No workload here: an active controller still appends a NoOpRecord every
    // metadata.max.idle.interval.ms (500 ms), so the high watermark keeps moving.
    let leader_port = ports[(leader - 1) as usize];
    let hw = || metrics(leader_port).map_or(-1.0, |m| gauge(&m, "high_watermark"));
    let before = hw();
    std::thread::sleep(Duration::from_secs(3));
    let after = hw();
    assert!(
        after >= before + 2.0,
        "idle leader's high watermark {before} → {after} in 3 s"
    );
}

#[test]
fn sigkill_leader_new_leader_elected_and_restart_catches_up() {
    let _serial = serial();
    let (mut c, ports) = quorum("node-sigkill", true);
    let (leader, epoch) = wait_agreed_leader(&ports, Duration::from_secs(30));
    std::thread::sleep(Duration::from_secs(2)); // let the workload commit records
    let before: Vec<u8> = c.node(leader).segment();
    let t0 = Instant::now();
    c.node(leader).kill();
    let others: Vec<u16> = (1..=3)
        .filter(|id| *id != leader)
        .map(|id| ports[(id - 1) as usize])
        .collect();
    let (next, next_epoch) = wait_leader_after(&others, epoch, Duration::from_secs(20));
    let took = t0.elapsed();
    assert_ne!(next, leader);
    assert!(next_epoch > epoch);
    // Upper election bound: fetch timeout (2 s) + a full election timeout range (2 s); allow 2×.
    assert!(took < Duration::from_secs(8), "new leader after {took:?}");
    println!("SIGKILL failover: node {next} leads epoch {next_epoch} after {took:?}");
    c.start(leader);
    let (_, _) = wait_agreed_leader(&ports, Duration::from_secs(30));
    // The restarted node catches up, and nothing it had before is lost or rewritten below the
    // point where the logs of all nodes agree.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ends: Vec<f64> = ports
            .iter()
            .filter_map(|p| metrics(*p))
            .map(|m| gauge(&m, "log_end_offset"))
            .collect();
        let hw: Vec<f64> = ports
            .iter()
            .filter_map(|p| metrics(*p))
            .map(|m| gauge(&m, "high_watermark"))
            .collect();
        let min_end = ends.iter().cloned().fold(f64::INFINITY, f64::min);
        if ends.len() == 3
            && hw.iter().all(|h| *h > 0.0)
            && min_end >= hw.iter().cloned().fold(0.0, f64::max) - 500.0
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "restarted node did not catch up: ends {ends:?} hw {hw:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let after = c.node(leader).segment();
    let committed_prefix = before.len().min(after.len()) / 2;
    assert!(
        common_prefix_equal(&before[..committed_prefix], &after[..committed_prefix]).is_ok(),
        "committed data kept"
    );
    for id in 1..=3 {
        let theirs = c.node(id).segment();
        let mine = c.node(next).segment();
        assert!(
            common_prefix_equal(&mine, &theirs).is_ok(),
            "node {id} agrees with the leader's log"
        );
    }
}

#[test]
fn sigterm_leader_hands_over_at_once() {
    let _serial = serial();
    let (mut c, ports) = quorum("node-sigterm", false);
    let (leader, epoch) = wait_agreed_leader(&ports, Duration::from_secs(30));
    std::thread::sleep(Duration::from_secs(1));
    c.node(leader).terminate();
    let others: Vec<u16> = (1..=3)
        .filter(|id| *id != leader)
        .map(|id| ports[(id - 1) as usize])
        .collect();
    let (next, next_epoch) = wait_leader_after(&others, epoch, Duration::from_secs(10));
    let resigned = log_time_ms(
        &c.node(leader).log_text(),
        "Terminating process due to signal SIGTERM",
    )
    .unwrap();
    let successor_log = c.node(next).log_text();
    let elected = log_time_ms(&successor_log, "Won the election").unwrap();
    // A figure for docs/interop.md, not a pass criterion: the machine is shared.
    println!(
        "SIGTERM handover: node {leader} → node {next} in {} ms, epoch {epoch} → {next_epoch}",
        elected.saturating_sub(resigned)
    );
    // "At once" means the election was started by the leader's EndQuorumEpoch, not by the
    // successor's fetch timeout, and that no epoch was lost on the way.
    assert!(
        successor_log.contains(&format!("Leader {leader} resigned epoch {epoch}")),
        "node {next} received the EndQuorumEpoch of node {leader}"
    );
    assert!(
        !successor_log.contains(&format!("No fetch from leader {leader} within")),
        "node {next} started its election from a fetch timeout, not the resignation"
    );
    assert!(c.node(leader).log_text().contains("shut down completed"));
    // A clean shutdown is quiet: answers arriving after the raft thread stopped are not a
    // full queue (#37).
    assert!(
        !c.node(leader).log_text().contains("queue full"),
        "a spurious queue-full warning at shutdown:\n{}",
        c.node(leader).log_text()
    );
}

#[test]
fn sigstop_follower_past_fetch_timeout_does_not_bump_the_epoch() {
    let _serial = serial();
    let (c, ports) = quorum("node-sigstop", false);
    let (leader, epoch) = wait_agreed_leader(&ports, Duration::from_secs(30));
    let follower = (1..=3).find(|id| *id != leader).unwrap();
    let pid = c.nodes[(follower - 1) as usize].pid().unwrap();
    Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status()
        .unwrap();
    std::thread::sleep(Duration::from_millis(3500)); // > fetch timeout (2 s)
    Command::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status()
        .unwrap();
    std::thread::sleep(Duration::from_secs(4));
    let (leader_after, epoch_after) = wait_agreed_leader(&ports, Duration::from_secs(10));
    assert_eq!(
        (leader_after, epoch_after),
        (leader, epoch),
        "pre-vote kept the epoch"
    );
}

#[test]
fn garbage_and_connection_churn_never_stop_a_node() {
    let _serial = serial();
    let (c, ports) = quorum("node-churn", true);
    let (leader, epoch) = wait_agreed_leader(&ports, Duration::from_secs(30));
    let hw0 = gauge(&metrics(ports[0]).unwrap(), "high_watermark");
    let targets: Vec<u16> = c.nodes.iter().map(|n| n.port).collect();
    let garbage: [&[u8]; 5] = [
        &[0xff, 0xff, 0xff, 0xff],
        &[0, 0, 0, 8, 0x7f, 0x7f, 1, 2, 3, 4, 5, 6],
        &[0, 0, 0, 2, 0, 18],
        b"GET / HTTP/1.1\r\n\r\n",
        &[0x10, 0, 0, 0],
    ];
    for round in 0..300 {
        let port = targets[round % targets.len()];
        if let Ok(mut s) = TcpStream::connect(format!("127.0.0.1:{port}")) {
            let _ = s.write_all(garbage[round % garbage.len()]);
            if round % 3 == 0 {
                drop(s); // churn
            }
        }
    }
    std::thread::sleep(Duration::from_secs(2));
    let (leader_after, epoch_after) = wait_agreed_leader(&ports, Duration::from_secs(10));
    assert_eq!((leader_after, epoch_after), (leader, epoch));
    let hw1 = gauge(&metrics(ports[0]).unwrap(), "high_watermark");
    assert!(hw1 > hw0, "the quorum kept committing ({hw0} → {hw1})");
}

/// A follower whose segment files are deleted (its leader-epoch-checkpoint and quorum-state
/// left) refuses to start, naming what shows it had data and the key that accepts the loss;
/// with `ferrokraft.recovery.accept.data.loss=true` it starts and catches up from the leader.
#[test]
fn a_voter_that_lost_its_log_refuses_to_start_until_the_loss_is_accepted() {
    let _serial = serial();
    let (mut c, ports) = quorum("node-lost-log", true);
    let (leader, _) = wait_agreed_leader(&ports, Duration::from_secs(30));
    std::thread::sleep(Duration::from_secs(2)); // let the workload commit records
    let victim = (1..=3).find(|id| *id != leader).unwrap();
    c.node(victim).terminate();
    // What the victim must get back: everything committed before it lost its log.
    let hw_before = gauge(
        &metrics(ports[(leader - 1) as usize]).unwrap(),
        "high_watermark",
    );
    assert!(hw_before > 0.0, "records were committed");
    let pdir = c.node(victim).partition_dir();
    for e in std::fs::read_dir(&pdir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".log") || name.ends_with(".index") || name.ends_with(".timeindex") {
            std::fs::remove_file(&p).unwrap();
        }
    }
    c.start(victim);
    let deadline = Instant::now() + Duration::from_secs(20);
    while c.node(victim).is_running() {
        assert!(Instant::now() < deadline, "the node kept running");
        std::thread::sleep(Duration::from_millis(100));
    }
    let text = c.node(victim).log_text();
    assert!(text.contains("refusing to start"), "{text}");
    assert!(
        text.contains("leader-epoch-checkpoint says epoch"),
        "{text}"
    );
    assert!(
        text.contains("ferrokraft.recovery.accept.data.loss=true"),
        "{text}"
    );
    // Nothing was touched: the evidence is still there for the next start.
    assert!(pdir.join("leader-epoch-checkpoint").exists());
    c.node(victim).kill(); // reap
    c.node(victim).extra_args = vec![
        "--override".into(),
        "ferrokraft.recovery.accept.data.loss=true".into(),
    ];
    c.start(victim);
    let port = ports[(victim - 1) as usize];
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let end = metrics(port).map(|m| gauge(&m, "log_end_offset"));
        if end.is_some_and(|end| end >= hw_before) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the node did not catch up: {}",
            c.node(victim).log_text()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(c.node(victim).log_text().contains("starting anyway"));
}
