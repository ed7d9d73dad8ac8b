//! The RPC versions ferrokraft advertises only when it presents Kafka 4.4
//! (`ferrokraft.kafka.release=4.4`: ApiVersions v5, BrokerHeartbeat v2, AddRaftVoter v1, UnregisterController
//! v0), checked
//! against Kafka 4.4.0's own bytes whatever `KAFKA_VERSION` says: the 4.1.2 oracle cannot
//! write them. `golden/kafka-4.4.0-rpc.vectors` is `Oracle generate 18:5-5 63:2-2 80:1-1 94:0-0` run
//! against kafka-clients 4.4.0 (README.md, "Regenerating").

use std::collections::BTreeSet;

use ferrokraft::codec::versions::{Release, ADVERTISED};

use super::vectors::{byte_diff, parse_vectors, tests_dir, Label, Vector};
use super::{labels_of, reencode};

fn vectors() -> Vec<Vector> {
    let path = tests_dir().join("golden").join("kafka-4.4.0-rpc.vectors");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse_vectors(&text)
}

/// What the 4.4 table adds: (api key, version) pairs not in 4.1.2's table.
fn added() -> Vec<(kafka_protocol::messages::ApiKey, i16)> {
    let mut out = Vec::new();
    for r in Release::Kafka4_4.advertised() {
        for version in r.min_version..=r.max_version {
            let in_4_1 = ADVERTISED
                .iter()
                .any(|o| o.api_key == r.api_key && o.contains(version));
            if !in_4_1 {
                out.push((r.api_key, version));
            }
        }
    }
    out
}

#[test]
fn kafka_4_4_rpc_vectors_round_trip_through_our_codec() {
    let mut failures = Vec::new();
    let all = vectors();
    for v in &all {
        match reencode(v) {
            Ok(ours) if ours == v.bytes => {}
            Ok(ours) => failures.push(format!("{}: {}", v.text, byte_diff(&v.bytes, &ours))),
            Err(e) => failures.push(format!("{}: {e}", v.text)),
        }
    }
    assert!(!all.is_empty());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn kafka_4_4_rpc_vectors_cover_exactly_what_the_4_4_table_adds() {
    let have: BTreeSet<Label> = vectors().into_iter().map(|v| v.label).collect();
    let mut wanted = BTreeSet::new();
    for (api, version) in added() {
        wanted.extend(labels_of(api, version));
    }
    assert_eq!(have, wanted, "regenerate golden/kafka-4.4.0-rpc.vectors");
}
