//! A real Apache Kafka broker forwards `kafka-metadata-quorum --bootstrap-server` requests
//! (DescribeQuorum, AddRaftVoter, RemoveRaftVoter) to a ferrokraft active controller inside
//! Envelope (API 58). Default Kafka 4.1.2; `KAFKA_VERSION` selects another. Needs Java 17 +
//! Maven.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::time::{Duration, Instant};

use support::broker::Broker;
use support::cluster::{serial, AllowedError, Cluster, Impl};

const BROKER_ID: i32 = 100;

/// The broker of this test logs no ERROR: since ferrokraft serves BrokerHeartbeat (API 63)
/// the broker keeps its session with whichever controller leads. (Until then it logged two
/// "The node does not support BROKER_HEARTBEAT" entries every heartbeat interval.)
const BROKER_BESIDE_FERROKRAFT: &[AllowedError] = &[];

/// Lines of `describe --status` that do not move while the quorum idles (the high watermark
/// and the lag fields do).
fn stable_status(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| {
            ["ClusterId:", "LeaderId:", "LeaderEpoch:", "CurrentVoters:"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(str::to_string)
        .collect()
}

/// `describe --replication` rows as (node id, status), sorted: the offsets and lags move.
fn replication_roles(out: &str) -> Vec<(i32, String)> {
    let mut rows: Vec<(i32, String)> = out
        .lines()
        .skip(1)
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            Some((cols.first()?.parse().ok()?, cols.last()?.to_string()))
        })
        .collect();
    rows.sort();
    rows
}

/// Asks the broker and then the controller `via` directly until both agree on `what`
/// (`status` or `replication`), compared by `key`; returns the broker's output.
fn agree_via_broker_and_directly<T: PartialEq + std::fmt::Debug>(
    c: &Cluster,
    broker: &Broker,
    via: i32,
    what: &str,
    key: impl Fn(&str) -> T,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut last = String::new();
    while Instant::now() < deadline {
        let through_broker = c.describe_via_broker(broker, what);
        let direct = c.describe(via, what);
        if let (true, Some(direct)) = (through_broker.status.success(), direct) {
            let (b, d) = (key(&through_broker.stdout), key(&direct));
            if b == d {
                return through_broker.stdout;
            }
            last = format!("via broker: {b:?}\ndirect: {d:?}");
        } else {
            last = format!(
                "broker tool: {:?}\n{}\n{}",
                through_broker.status.code(),
                through_broker.stdout,
                through_broker.stderr
            );
        }
        std::thread::sleep(Duration::from_millis(1000));
    }
    panic!("describe --{what} via the broker never agreed with node {via}:\n{last}");
}

fn field(out: &str, name: &str) -> Option<i64> {
    out.lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.split(':').nth(1))
        .and_then(|v| v.trim().parse().ok())
}

/// #7 Envelope: a Kafka controller formatted `--standalone` leads, two ferrokraft controllers
/// are added, a Kafka broker registers with the Kafka leader; leadership moves to ferrokraft;
/// `kafka-metadata-quorum --bootstrap-server <broker>` then describes the quorum (status and
/// replication, as the controllers answer directly), removes the Kafka voter and adds it back,
/// every request going broker → Envelope → ferrokraft.
#[test]
fn a_kafka_broker_forwards_metadata_quorum_requests_to_a_ferrokraft_leader() {
    let _serial = serial();
    let mut c = Cluster::kafka_standalone_then_two_ferrokraft("envelope-broker");

    // The broker registers while Kafka leads: ferrokraft does not serve BrokerRegistration.
    let mut broker = c.start_broker(BROKER_ID);
    broker.wait_for_log(
        "The broker has been unfenced. Transitioning from RECOVERY to RUNNING",
        Duration::from_secs(120),
    );
    let out = agree_via_broker_and_directly(&c, &broker, 1, "status", stable_status);
    assert_eq!(field(&out, "LeaderId:"), Some(1), "{out}");

    let leader = c.make_leader_kind(Impl::Ferrokraft, Duration::from_secs(240));
    c.wait_caught_up(leader, Duration::from_secs(60));

    let status = agree_via_broker_and_directly(&c, &broker, leader, "status", stable_status);
    assert_eq!(
        field(&status, "LeaderId:"),
        Some(i64::from(leader)),
        "{status}"
    );
    let replication =
        agree_via_broker_and_directly(&c, &broker, leader, "replication", replication_roles);
    let roles = replication_roles(&replication);
    assert!(
        roles.contains(&(BROKER_ID, "Observer".to_string())),
        "the broker fetches from ferrokraft as an observer: {roles:?}"
    );
    assert!(roles.contains(&(leader, "Leader".to_string())), "{roles:?}");

    // Voter changes through the broker: remove the Kafka voter, then add it back.
    let kafka_dir = c.directory_id(1);
    c.remove_controller_via_broker(&broker, 1, &kafka_dir)
        .assert_ok("remove-controller 1 via the broker");
    c.wait_voters(leader, &[2, 3], Duration::from_secs(60));
    c.wait_caught_up(leader, Duration::from_secs(60));
    c.add_controller_via_broker(&broker, 1)
        .assert_ok("add-controller 1 via the broker");
    let voters = c.wait_voters(leader, &[1, 2, 3], Duration::from_secs(60));
    assert!(voters.contains(&(1, kafka_dir)), "{voters:?}");
    let status = agree_via_broker_and_directly(&c, &broker, leader, "status", stable_status);
    assert_eq!(
        field(&status, "LeaderId:"),
        Some(i64::from(leader)),
        "{status}"
    );

    broker.assert_errors_explained(BROKER_BESIDE_FERROKRAFT);
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
}
