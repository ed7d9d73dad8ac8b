//! Real Apache Kafka brokers and clients on a controller quorum: three brokers register and
//! unfence, a replicated topic is created and a config of it altered, Kafka's VerifiableProducer (acks=all, idempotent)
//! and VerifiableConsumer move data through it, and every acked message is read back, also
//! across a SIGKILLed broker (fenced, its ISR membership and leaderships moved, restarted on
//! its directory, back in every ISR) and a SIGTERMed one (controlled shutdown). Default Kafka
//! 4.1.2; `KAFKA_VERSION` selects another. Needs Java 17 + Maven.
//!
//! The controllers are [`controllers`]: three ferrokraft controllers, or three Kafka
//! controllers with `BROKER_TEST_CONTROLLERS=kafka` (the same scenario, the reference).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::time::{Duration, Instant};

use support::broker::Broker;
use support::clients::{
    bootstrap_servers, check_delivery, parse_describe, parse_endpoints, Acked, Consumed,
    PartitionState, ProduceSpec, BROKER_IDS, CONTROLLED_SHUTDOWN_LOG,
    CONTROLLED_SHUTDOWN_TIMED_OUT,
};
use support::cluster::{serial, tail, AllowedError, Cluster, Impl};

/// The controller quorum the brokers run against (node ids 1..=3, static voters): three
/// ferrokraft controllers; `BROKER_TEST_CONTROLLERS=kafka` runs the same scenario on three
/// Kafka controllers, the reference it was first validated against.
fn controllers() -> [Impl; 3] {
    match std::env::var("BROKER_TEST_CONTROLLERS").as_deref() {
        Ok("kafka") => [Impl::Kafka; 3],
        _ => [Impl::Ferrokraft; 3],
    }
}

const TOPIC: &str = "verified";
/// What a Kafka broker logs when its registration succeeds.
const REGISTERED_LOG: &str = "Successfully registered broker";
const PARTITIONS: i32 = 3;
const MIN_ISR: &str = "2";

/// Exceptions Kafka brokers log in this scenario for understood reasons (all at INFO or
/// WARN: no broker logs an ERROR here), whichever implementation the controllers are.
const BROKER_ERRORS: &[AllowedError] = &[
    AllowedError {
        cause: "broker 101 is SIGKILLed while leading a partition: its followers' replica \
                fetchers lose the connection, then fail to reconnect (each once at INFO from \
                FetchSessionHandler and once at WARN from ReplicaFetcherThread, every retry \
                backoff) until the controller fences 101 after broker.session.timeout.ms (9 s) \
                and moves leadership",
        contains: &[
            "leaderId=101, fetcherId=",
            "fetch request",
            "(id: 101 rack: null isFenced: false) failed.",
        ],
    },
    AllowedError {
        cause: "the same, in the words of Kafka 3.9's brokers (BROKER_KAFKA_VERSION=3.9.1), \
                whose Node prints no isFenced",
        contains: &[
            "leaderId=101, fetcherId=",
            "fetch request",
            "(id: 101 rack: null) failed.",
        ],
    },
    AllowedError {
        cause: "the same kill: the fetch in flight when 101 died",
        contains: &[
            "leaderId=101, fetcherId=",
            "fetch request",
            "java.io.IOException: Connection to 101 was disconnected before the response was read",
        ],
    },
    AllowedError {
        cause: "broker 102's controlled shutdown moves its leaderships away and stops its \
                fetchers: a replica fetcher removed with a fetch in flight (on 102, or on a \
                follower of a partition 102 led) closes its client and logs this at INFO",
        contains: &[
            "[ReplicaFetcher replicaId=",
            "Error sending fetch request",
            "java.io.IOException: Client was shutdown before response was read",
        ],
    },
];

/// Whether `id` is listed registered and fenced; brokers of 3.x (`BROKER_KAFKA_VERSION`)
/// cannot list fenced brokers, so there it is only not listed as unfenced.
fn registered_fenced(listed: &[support::clients::BrokerEndpoint], id: i32) -> bool {
    if support::kafka::broker_kafka_version().starts_with("3.") {
        !listed.iter().any(|e| e.id == id)
    } else {
        listed.iter().any(|e| e.id == id && e.fenced)
    }
}

fn sorted(v: &[i32]) -> Vec<i32> {
    let mut v = v.to_vec();
    v.sort();
    v
}

/// Every partition has a leader, all three brokers as replicas, and all of them in sync.
fn fully_replicated(parts: &[PartitionState]) -> bool {
    parts.len() == PARTITIONS as usize
        && parts.iter().all(|p| {
            p.leader.is_some() && sorted(&p.replicas) == BROKER_IDS && sorted(&p.isr) == BROKER_IDS
        })
}

/// `gone` is in no ISR and leads no partition; every partition still has a leader and
/// `min.insync.replicas` (2) replicas in sync.
fn without(gone: i32) -> impl Fn(&[PartitionState]) -> bool {
    move |parts| {
        parts.len() == PARTITIONS as usize
            && parts.iter().all(|p| {
                !p.isr.contains(&gone)
                    && p.leader.is_some_and(|l| l != gone && p.isr.contains(&l))
                    && p.isr.len() == 2
            })
    }
}

struct Clock(Instant);

impl Clock {
    fn step(&self, what: &str) {
        eprintln!("[{:6.1} s] {what}", self.0.elapsed().as_secs_f64());
    }
}

/// A three-controller quorum (see [`controllers`]), three brokers, one topic (RF 3,
/// 3 partitions, min.insync.replicas=2): produce and consume; SIGKILL broker 101 while
/// producing, see it fenced and dropped from every ISR with leaders moved, restart it and
/// see it back in every ISR; SIGTERM broker 102 while producing and see a controlled
/// shutdown; SIGKILL the active controller while producing (a new one takes over, brokers
/// keep their sessions); finally a fresh consumer group reads every message any producer had
/// acked.
#[test]
fn brokers_keep_every_acked_message_across_broker_failures() {
    let _serial = serial();
    let clock = Clock(Instant::now());
    let mut c = Cluster::new("interop-brokers", &controllers(), &[]);
    c.start_all();
    clock.step("controllers formatted and started");
    let mut brokers = c.start_brokers(&BROKER_IDS);
    clock.step("brokers formatted and started");

    // All three register and are unfenced: each logs its own unfencing, and a broker's
    // metadata image (kafka-cluster list-endpoints) lists all three unfenced.
    let via: Vec<&Broker> = brokers.iter().collect();
    let listed = c.wait_brokers_unfenced(&via, &BROKER_IDS, Duration::from_secs(120));
    for b in &brokers {
        let e = listed.iter().find(|e| e.id == b.id).unwrap();
        assert_eq!(
            e.port, b.port,
            "broker {} advertises its listener: {listed:?}",
            b.id
        );
    }
    let (leader, epoch, _) = c.wait_for_leader_any(&[], 1, Duration::from_secs(30));
    clock.step(&format!(
        "brokers 100, 101, 102 registered and unfenced; controller {leader} leads (epoch {epoch})"
    ));

    let all = bootstrap_servers(&brokers);
    c.create_topic(
        &all,
        TOPIC,
        PARTITIONS,
        3,
        &[("min.insync.replicas", MIN_ISR)],
    );
    let parts = c.wait_topic(
        &all,
        TOPIC,
        "every partition led and fully in sync",
        Duration::from_secs(60),
        fully_replicated,
    );
    clock.step(&format!("topic {TOPIC} created: {parts:?}"));
    alter_and_describe_topic_config(&c, &all);
    clock.step("topic config altered through a broker and described back");
    assert!(
        parts.iter().any(|p| p.leader == Some(101)),
        "replica placement spreads leaders over the brokers, so 101 leads a partition: {parts:?}"
    );

    // 1. Produce and consume with every broker up.
    let p1 = c.produce(
        &all,
        &ProduceSpec {
            topic: TOPIC.into(),
            max_messages: 3000,
            throughput: 1000,
            value_prefix: 1,
        },
        Duration::from_secs(120),
    );
    assert_eq!(
        p1.acked.len(),
        3000,
        "every send acked: {:?}",
        p1.errors.first()
    );
    assert!(
        p1.errors.is_empty(),
        "{:?}",
        &p1.errors[..p1.errors.len().min(5)]
    );
    let r1 = c.consume(&all, TOPIC, "g1", &p1.acked, Duration::from_secs(60));
    let d1 = check_delivery(&p1.acked, &r1.records);
    clock.step(&format!(
        "3000 acked, consumed {:?}",
        (d1.consumed, d1.redelivered)
    ));
    d1.assert_ok("all brokers up");
    assert!(r1.failed_commits.is_empty(), "{:?}", r1.failed_commits);

    // 2. SIGKILL broker 101 while producing.
    let mut bg = background_producer(&c, &all, 2);
    bg.wait_acked(300, Duration::from_secs(60));
    brokers[1].kill();
    clock.step("broker 101 SIGKILLed");
    let survivors = bootstrap_servers(&brokers);
    let parts = c.wait_topic(
        &survivors,
        TOPIC,
        "101 out of every ISR and leading nothing",
        Duration::from_secs(60),
        without(101),
    );
    clock.step(&format!("101 dropped: {parts:?}"));
    let listed = c.list_brokers(&survivors).expect("list-endpoints");
    assert!(
        registered_fenced(&listed, 101) && listed.iter().filter(|e| !e.fenced).count() == 2,
        "101 stays registered, fenced: {listed:?}"
    );
    let acked = bg.report().acked.len();
    bg.wait_acked(acked + 300, Duration::from_secs(60));
    clock.step("300 more acked without 101");

    c.restart_broker(&mut brokers[1]);
    c.wait_brokers_unfenced(&[&brokers[1]], &BROKER_IDS, Duration::from_secs(90));
    let parts = c.wait_topic(
        &all,
        TOPIC,
        "101 back in every ISR",
        Duration::from_secs(90),
        fully_replicated,
    );
    clock.step(&format!(
        "101 restarted, unfenced, back in every ISR: {parts:?}"
    ));
    let acked = bg.report().acked.len();
    bg.wait_acked(acked + 150, Duration::from_secs(60));
    let p2 = bg.stop(Duration::from_secs(60));
    assert!(
        p2.errors.is_empty(),
        "{:?}",
        &p2.errors[..p2.errors.len().min(5)]
    );
    clock.step(&format!(
        "producer 2 stopped: {} acked, {} not sent at close",
        p2.acked.len(),
        p2.not_sent
    ));

    // 3. SIGTERM broker 102 (controlled shutdown) while producing.
    let mut bg = background_producer(&c, &all, 3);
    bg.wait_acked(300, Duration::from_secs(60));
    let status = brokers[2].terminate(Duration::from_secs(60));
    clock.step(&format!("broker 102 exited after SIGTERM: {status:?}"));
    let log = brokers[2].log_text();
    let mut from = 0;
    for line in CONTROLLED_SHUTDOWN_LOG {
        let at = log[from..].find(line).unwrap_or_else(|| {
            panic!(
                "broker 102's log lacks `{line}` (after the lines before it):\n{}",
                tail(&log, 30)
            )
        });
        from += at + line.len();
    }
    assert!(
        !log.contains(CONTROLLED_SHUTDOWN_TIMED_OUT),
        "the controller never approved 102's controlled shutdown"
    );
    let survivors = bootstrap_servers(&brokers);
    let parts = c.wait_topic(
        &survivors,
        TOPIC,
        "102 out of every ISR and leading nothing",
        Duration::from_secs(30),
        without(102),
    );
    clock.step(&format!("102 dropped: {parts:?}"));
    let listed = c.list_brokers(&survivors).expect("list-endpoints");
    assert!(
        registered_fenced(&listed, 102) && listed.iter().filter(|e| !e.fenced).count() == 2,
        "102 stays registered, fenced after its controlled shutdown: {listed:?}"
    );
    let acked = bg.report().acked.len();
    bg.wait_acked(acked + 300, Duration::from_secs(60));
    let p3 = bg.stop(Duration::from_secs(60));
    assert!(
        p3.errors.is_empty(),
        "{:?}",
        &p3.errors[..p3.errors.len().min(5)]
    );

    // 4. SIGKILL the active controller while producing: another controller takes over, the
    // brokers keep their registrations and sessions (none fenced, none registers again), and
    // producing goes on; the killed controller restarts and rejoins.
    let mut bg = background_producer(&c, &survivors, 4);
    bg.wait_acked(300, Duration::from_secs(60));
    let (old_leader, old_epoch, _) = c.wait_for_leader_any(&[], 1, Duration::from_secs(60));
    let registrations_before: Vec<usize> = brokers[..2]
        .iter()
        .map(|b| b.log_text().matches(REGISTERED_LOG).count())
        .collect();
    c.node(old_leader).kill();
    let (new_leader, new_epoch, _) =
        c.wait_for_leader_any(&[old_leader], 1, Duration::from_secs(60));
    assert!(new_leader != old_leader && new_epoch > old_epoch);
    clock.step(&format!(
        "active controller {old_leader} SIGKILLed; {new_leader} leads epoch {new_epoch}"
    ));
    // Longer than a broker session: a controller that lost the brokers' sessions would
    // fence them here.
    let acked = bg.report().acked.len();
    bg.wait_acked(acked + 3_000, Duration::from_secs(60));
    let listed = c.list_brokers(&survivors).expect("list-endpoints");
    assert!(
        listed.iter().filter(|e| !e.fenced).count() == 2,
        "100 and 101 stay unfenced across the failover: {listed:?}"
    );
    let registrations_after: Vec<usize> = brokers[..2]
        .iter()
        .map(|b| b.log_text().matches(REGISTERED_LOG).count())
        .collect();
    assert_eq!(
        registrations_before, registrations_after,
        "no broker had to register again with the new controller"
    );
    c.start(old_leader);
    c.wait_caught_up(new_leader, Duration::from_secs(60));
    let p4 = bg.stop(Duration::from_secs(60));
    assert!(
        p4.errors.is_empty(),
        "{:?}",
        &p4.errors[..p4.errors.len().min(5)]
    );
    clock.step(&format!(
        "producer 4 stopped: {} acked; controller {old_leader} restarted and caught up",
        p4.acked.len()
    ));

    // A new group reads the whole topic: every message any producer had acked is there once.
    let every: Vec<Acked> = [p1.acked, p2.acked, p3.acked, p4.acked].concat();
    let r = c.consume(
        &survivors,
        TOPIC,
        "g-final",
        &every,
        Duration::from_secs(90),
    );
    let d = check_delivery(&every, &r.records);
    clock.step(&format!(
        "final: {} acked, {} consumed, {} redelivered, {} unacked",
        d.acked, d.consumed, d.redelivered, d.unacked
    ));
    d.assert_ok("after the broker failures");
    assert!(r.failed_commits.is_empty(), "{:?}", r.failed_commits);

    for b in &mut brokers[..2] {
        b.assert_errors_explained(BROKER_ERRORS);
    }
    brokers[2].assert_logs_explained(BROKER_ERRORS);
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
    clock.step("done");
}

#[test]
fn parses_describe_and_endpoints() {
    let out = "Topic: t\tTopicId: abc\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: min.insync.replicas=2\n\
               \tTopic: t\tPartition: 1\tLeader: none\tReplicas: 100,101,102\tIsr: 101\tElr: 100\tLastKnownElr: \n\
               \tTopic: t\tPartition: 0\tLeader: 100\tReplicas: 100,101,102\tIsr: 100,101\tElr: \tLastKnownElr: \n";
    let p = parse_describe(out, "t");
    assert_eq!(p.len(), 2);
    assert_eq!(p[0].leader, Some(100));
    assert_eq!(p[0].isr, vec![100, 101]);
    assert_eq!(p[1].leader, None);
    assert_eq!(p[1].elr, vec![100]);
    let e = parse_endpoints(
        "ID         HOST         PORT       RACK       STATE      ENDPOINT_TYPE  \n\
         100        127.0.0.1    4000       null       unfenced   broker\n\
         101        127.0.0.1    4001       null       fenced     broker\n",
    );
    assert_eq!(e.len(), 2);
    assert!(!e[0].fenced && e[1].fenced);
    // Kafka 4.4 prints a deprecation notice first.
    let e = parse_endpoints(
        "Option --config has been deprecated and will be removed in a future version. Use --command-config instead.\n\
         ID         HOST      PORT       RACK       STATE      ENDPOINT_TYPE  \n\
         100        127.0.0.1 39507      null       unfenced   broker\n",
    );
    assert_eq!(e.len(), 1);
}

#[test]
fn delivery_check_finds_loss_and_duplicates() {
    let a = |p, o, v: &str| Acked {
        partition: p,
        offset: o,
        value: v.into(),
    };
    let c = |p, o, v: &str| Consumed {
        partition: p,
        offset: o,
        value: v.into(),
    };
    let acked = [a(0, 0, "1.0"), a(0, 1, "1.1"), a(1, 0, "1.2")];
    let d = check_delivery(&acked, &[c(0, 0, "1.0"), c(0, 1, "1.9"), c(1, 0, "1.2")]);
    assert_eq!(d.lost, vec![a(0, 1, "1.1")]);
    let d = check_delivery(
        &acked,
        &[
            c(0, 0, "1.0"),
            c(0, 1, "1.1"),
            c(0, 2, "1.1"),
            c(1, 0, "1.2"),
            c(1, 0, "1.2"),
        ],
    );
    assert!(d.lost.is_empty());
    assert_eq!(d.duplicated.len(), 1);
    assert_eq!(d.redelivered, 1);
}

/// A producer of 300 messages/s to the topic (values prefixed `prefix`), until stopped.
/// `kafka-configs --alter` of a topic config through a broker (forwarded to the active
/// controller as IncrementalAlterConfigs), then `--describe` until the brokers' metadata shows
/// it.
fn alter_and_describe_topic_config(c: &Cluster, all: &str) {
    let class = support::clients::config_command();
    let target = ["--entity-type", "topics", "--entity-name", TOPIC];
    let out = c.admin_tool(
        all,
        "alter-topic-config",
        class,
        &[
            &target[..],
            &["--alter", "--add-config", "retention.ms=3600000"],
        ]
        .concat(),
    );
    out.assert_ok("kafka-configs --alter --add-config retention.ms=3600000");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = c.admin_tool(
            all,
            "describe-topic-config",
            class,
            &[&target[..], &["--describe"]].concat(),
        );
        if out.status.success() && out.stdout.contains("retention.ms=3600000") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "kafka-configs --describe never showed retention.ms=3600000:\n{}{}",
            out.stdout,
            out.stderr
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn background_producer(c: &Cluster, bootstrap: &str, prefix: u32) -> support::clients::Producer {
    c.start_producer(
        bootstrap,
        &ProduceSpec {
            topic: TOPIC.into(),
            max_messages: 100_000,
            throughput: 300,
            value_prefix: prefix,
        },
    )
}

/// The topic (RF 3, min.insync.replicas=2) fully in sync, and a producer (values prefixed
/// `prefix`) that has 300 acks.
fn topic_with_producer(c: &Cluster, all: &str, prefix: u32) -> support::clients::Producer {
    c.create_topic(
        all,
        TOPIC,
        PARTITIONS,
        3,
        &[("min.insync.replicas", MIN_ISR)],
    );
    c.wait_topic(
        all,
        TOPIC,
        "every partition led and fully in sync",
        Duration::from_secs(60),
        fully_replicated,
    );
    let mut bg = background_producer(c, all, prefix);
    bg.wait_acked(300, Duration::from_secs(60));
    bg
}

/// Stops the producer (no errors), reads the topic back in a new `group` (every acked message
/// once), and checks the Kafka controllers' health and logs.
fn stop_and_read_back(
    c: &mut Cluster,
    all: &str,
    mut bg: support::clients::Producer,
    group: &str,
    clock: &Clock,
) {
    let p = bg.stop(Duration::from_secs(60));
    assert!(
        p.errors.is_empty(),
        "{:?}",
        &p.errors[..p.errors.len().min(5)]
    );
    let r = c.consume(all, TOPIC, group, &p.acked, Duration::from_secs(90));
    let d = check_delivery(&p.acked, &r.records);
    clock.step(&format!(
        "final: {} acked, {} consumed, {} redelivered",
        d.acked, d.consumed, d.redelivered
    ));
    d.assert_ok(group);
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(KAFKA_CONTROLLER_FAILOVER);
}

/// Mixed quorums with brokers (scenario e): `kinds` controllers, three brokers, leadership
/// moved to ferrokraft, to Kafka and back while a producer runs; every acked message is read
/// back, and no Kafka controller faults on what ferrokraft wrote (their logs hold no ERROR
/// outside the allow-list).
fn mixed_quorum_with_brokers(test: &str, kinds: [Impl; 3]) {
    let _serial = serial();
    let clock = Clock(Instant::now());
    let mut c = Cluster::new(test, &kinds, &[]);
    // The second follower to time out wins after a Kafka leader dies (see
    // tests/interop_snapshots.rs): with two Kafka nodes, a longer fetch timeout lets the
    // ferrokraft one take over at once (with two ferrokraft nodes it would keep Kafka from
    // ever winning).
    let kafka_nodes = kinds.iter().filter(|k| **k == Impl::Kafka).count();
    for (i, kind) in kinds.iter().enumerate() {
        if *kind == Impl::Ferrokraft && kafka_nodes == 2 {
            c.node(i as i32 + 1)
                .add_props(&[("controller.quorum.fetch.timeout.ms", "3500")]);
        }
    }
    c.start_all();
    let brokers = c.start_brokers(&BROKER_IDS);
    let via: Vec<&Broker> = brokers.iter().collect();
    c.wait_brokers_unfenced(&via, &BROKER_IDS, Duration::from_secs(120));
    let leader = c.make_leader_kind(Impl::Ferrokraft, Duration::from_secs(120));
    clock.step(&format!(
        "{kinds:?}: brokers unfenced; ferrokraft {leader} leads"
    ));
    let all = bootstrap_servers(&brokers);
    let mut bg = topic_with_producer(&c, &all, 5);
    for want in [Impl::Kafka, Impl::Ferrokraft] {
        let leader = c.make_leader_kind(want, Duration::from_secs(120));
        let acked = bg.report().acked.len();
        bg.wait_acked(acked + 600, Duration::from_secs(60));
        clock.step(&format!(
            "{want:?} controller {leader} leads; producing goes on"
        ));
    }
    // The brokers stayed registered and unfenced through every failover.
    let listed = c.list_brokers(&all).expect("list-endpoints");
    assert!(
        listed.iter().filter(|e| !e.fenced).count() == 3,
        "every broker unfenced after the failovers: {listed:?}"
    );
    stop_and_read_back(&mut c, &all, bg, "g-mixed", &clock);
}

/// What Kafka controllers log at ERROR during the leadership changes of a mixed quorum, for
/// understood reasons.
const KAFKA_CONTROLLER_FAILOVER: &[AllowedError] = &[
    AllowedError {
        cause: "a broker's heartbeat reaches a Kafka controller while it is not the active \
            controller (it just lost the leadership, or won it and has not activated yet): \
            Kafka's ControllerApis logs the NotControllerException it answers with at ERROR; \
            the broker retries with the active controller. Kafka-only quorums log the same \
            at every failover",
        contains: &[
            "Unexpected error handling request RequestHeader(apiKey=BROKER_HEARTBEAT",
            // "The active controller appears to be node N." or, between leaders,
            // "No controller appears to be active."
            "NotControllerException: ",
        ],
    },
    AllowedError {
        cause: "the same leadership change seen from Kafka's QuorumController: a broker request \
            (forwarded CreateTopics, AllocateProducerIds, …) reaches a Kafka controller that \
            is no longer active; it logs at INFO that the event failed with \
            NotControllerException and the broker retries with the active controller",
        contains: &[
            "[QuorumController id=",
            "event failed with NotControllerException",
        ],
    },
    AllowedError {
        cause: "a Kafka controller stopping (SIGTERM, scenario f) still answers a broker's \
            heartbeat with NOT_CONTROLLER after its request metrics were removed: Kafka's \
            RequestChannel hits a NullPointerException updating the error meter (a \
            Kafka-internal shutdown race; the broker retries elsewhere)",
        contains: &[
            "Exception when handling request",
            "RequestMetrics$ErrorMeter.getOrCreateMeter()",
        ],
    },
];

#[test]
fn two_kafka_and_one_ferrokraft_controller_serve_brokers_whichever_leads() {
    mixed_quorum_with_brokers(
        "interop-brokers-2k1f",
        [Impl::Kafka, Impl::Kafka, Impl::Ferrokraft],
    );
}

#[test]
fn one_kafka_and_two_ferrokraft_controllers_serve_brokers_whichever_leads() {
    mixed_quorum_with_brokers(
        "interop-brokers-1k2f",
        [Impl::Ferrokraft, Impl::Kafka, Impl::Ferrokraft],
    );
}

/// Rolling replacement in a live cluster (scenario f): three Kafka controllers serving three
/// brokers and a topic; while a producer runs, each Java controller is stopped and replaced by
/// ferrokraft on its own directory (a ferrokraft-only quorum then serves the brokers), then
/// each is replaced back by Kafka; every broker stays unfenced and every acked message is
/// consumed.
#[test]
fn controllers_are_replaced_one_by_one_under_load_and_back() {
    let _serial = serial();
    let clock = Clock(Instant::now());
    let mut c = Cluster::new("interop-brokers-rolling", &[Impl::Kafka; 3], &[]);
    c.start_all();
    let brokers = c.start_brokers(&BROKER_IDS);
    let via: Vec<&Broker> = brokers.iter().collect();
    c.wait_brokers_unfenced(&via, &BROKER_IDS, Duration::from_secs(120));
    let all = bootstrap_servers(&brokers);
    let mut bg = topic_with_producer(&c, &all, 6);
    clock.step("Kafka controllers serve three brokers and the topic");
    for to in [Impl::Ferrokraft, Impl::Kafka] {
        for id in 1..=3 {
            c.node(id).terminate();
            c.node(id).kind = to;
            c.start(id);
            let (leader, _, _) = c.wait_for_leader_any(&[], 1, Duration::from_secs(90));
            c.wait_caught_up(leader, Duration::from_secs(90));
            let acked = bg.report().acked.len();
            bg.wait_acked(acked + 300, Duration::from_secs(60));
            clock.step(&format!(
                "controller {id} replaced by {to:?} on its directory; {leader} leads; producing goes on"
            ));
        }
        let listed = c.list_brokers(&all).expect("list-endpoints");
        assert!(
            listed.iter().filter(|e| !e.fenced).count() == 3,
            "every broker unfenced with {to:?} controllers: {listed:?}"
        );
    }
    stop_and_read_back(&mut c, &all, bg, "g-rolling", &clock);
}
