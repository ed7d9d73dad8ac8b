//! The GROUP config check of each release presented (4.0 … 4.4) against the answers of that
//! release's own controller check: `tests/group_configs/cases.txt` holds the cases (the
//! group's whole config after the change), `kafka-<version>.txt` what
//! `interop/java/GroupConfigOracle.java` printed for each against that release's jars
//! (`tests/interop_group_configs.rs` re-runs it). Each case goes through IncrementalAlterConfigs
//! (validate only) on a controller presenting the release; code and message must be Kafka's.
#![allow(clippy::unwrap_used)]

use super::configs_4_4::{alter_one, ctx};
use crate::codec::versions::Release;
use crate::controller::configs::resource::GROUP;
use crate::controller::errors;

const CASES: &str = include_str!("../../../tests/group_configs/cases.txt");

/// Each release and the answers its jars gave.
const ANSWERS: &[(Release, &str)] = &[
    (
        Release::Kafka4_0,
        include_str!("../../../tests/group_configs/kafka-4.0.2.txt"),
    ),
    (
        Release::Kafka4_1,
        include_str!("../../../tests/group_configs/kafka-4.1.2.txt"),
    ),
    (
        Release::Kafka4_2,
        include_str!("../../../tests/group_configs/kafka-4.2.2.txt"),
    ),
    (
        Release::Kafka4_3,
        include_str!("../../../tests/group_configs/kafka-4.3.2.txt"),
    ),
    (
        Release::Kafka4_4,
        include_str!("../../../tests/group_configs/kafka-4.4.0.txt"),
    ),
];

/// A case: its id, the group's name and its whole config.
type Case = (
    &'static str,
    &'static str,
    Vec<(&'static str, &'static str)>,
);

/// Each case line.
fn cases() -> Vec<Case> {
    CASES
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut f = l.split('\t');
            let (id, name, pairs) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
            let pairs = pairs
                .split('|')
                .filter(|p| !p.is_empty())
                .map(|p| p.split_once('=').unwrap())
                .collect();
            (id, name, pairs)
        })
        .collect()
}

/// Kafka's answer to a case as (error code, message): `OK`, or the exception Kafka's
/// `ApiError.fromThrowable` maps to a code.
fn kafka_answer(line: &str) -> (&str, (i16, String)) {
    let mut f = line.splitn(3, '\t');
    let id = f.next().unwrap();
    let answer = match (f.next().unwrap(), f.next()) {
        ("OK", None) => (0, String::new()),
        ("InvalidRequestException", Some(m)) => (errors::INVALID_REQUEST, m.to_string()),
        ("InvalidConfigurationException" | "ConfigException", Some(m)) => {
            (errors::INVALID_CONFIG, m.to_string())
        }
        other => panic!("unexpected answer {other:?}"),
    };
    (id, answer)
}

#[test]
fn every_case_is_answered_as_each_release_answers_it() {
    let cases = cases();
    assert!(cases.len() >= 100, "{}", cases.len());
    let mut differences = Vec::new();
    for (release, answers) in ANSWERS {
        let answers: Vec<_> = answers.lines().map(kafka_answer).collect();
        assert_eq!(answers.len(), cases.len(), "{release:?}");
        let mut c = ctx(*release);
        for ((id, name, pairs), (answer_id, expected)) in cases.iter().zip(&answers) {
            assert_eq!(id, answer_id, "{release:?}: the answers follow the cases");
            let got = alter_one(&mut c, GROUP, name, pairs);
            if got != *expected {
                differences.push(format!(
                    "{release:?} {id}: ferrokraft {got:?}, Kafka {expected:?}"
                ));
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// The number of GROUP keys each release knows: every key of 4.4 set alone, counted where it
/// is accepted (each `key:` case sets one to a value 4.4 accepts).
#[test]
fn group_keys_per_release() {
    for (release, count) in [
        (Release::Kafka4_0, 6),
        (Release::Kafka4_1, 10),
        (Release::Kafka4_2, 11),
        (Release::Kafka4_3, 17),
        (Release::Kafka4_4, 27),
    ] {
        let mut c = ctx(release);
        let accepted = cases()
            .iter()
            .filter(|(id, _, _)| id.starts_with("key:"))
            .filter(|(_, name, pairs)| alter_one(&mut c, GROUP, name, pairs).0 == 0)
            .count();
        assert_eq!(accepted, count, "{release:?}");
    }
}

/// One per release, spelled out: a key the release does not know, a bound it words its own
/// way, and the order of its checks.
#[test]
fn unknown_keys_bounds_and_order_per_release() {
    let refused = |release, pairs: &[(&str, &str)]| alter_one(&mut ctx(release), GROUP, "g", pairs);
    let config = |m: &str| (errors::INVALID_CONFIG, m.to_string());
    // 4.0 has no streams groups.
    assert_eq!(
        refused(
            Release::Kafka4_0,
            &[("streams.session.timeout.ms", "50000")]
        ),
        config("Unknown group config name: streams.session.timeout.ms")
    );
    // 4.1 has no initial rebalance delay; 4.2 bounds it by its ConfigDef alone.
    assert_eq!(
        refused(
            Release::Kafka4_1,
            &[("streams.initial.rebalance.delay.ms", "0")]
        ),
        config("Unknown group config name: streams.initial.rebalance.delay.ms")
    );
    assert_eq!(
        refused(
            Release::Kafka4_2,
            &[("streams.initial.rebalance.delay.ms", "-1")]
        ),
        config(
            "Invalid value -1 for configuration streams.initial.rebalance.delay.ms: Value must \
             be at least 0"
        )
    );
    // 4.3 names the broker bound of its new keys, 4.4 gives the range.
    assert_eq!(
        refused(Release::Kafka4_3, &[("share.delivery.count.limit", "11")]),
        config(
            "share.delivery.count.limit must be less than or equal to \
             group.share.max.delivery.count.limit"
        )
    );
    assert_eq!(
        refused(Release::Kafka4_4, &[("share.delivery.count.limit", "11")]),
        config("share.delivery.count.limit must be in the range 2 to 10 inclusive.")
    );
    // 4.3 does not know 4.4's keys.
    assert_eq!(
        refused(Release::Kafka4_3, &[("streams.num.warmup.replicas", "1")]),
        config("Unknown group config name: streams.num.warmup.replicas")
    );
    // Order: every value parses before any bound is checked (4.0 as 4.4), and the bounds
    // follow validateValues' order (the record lock before the delivery count in 4.3).
    assert_eq!(
        refused(
            Release::Kafka4_0,
            &[
                ("consumer.session.timeout.ms", "44999"),
                ("share.record.lock.duration.ms", "999")
            ]
        ),
        config(
            "Invalid value 999 for configuration share.record.lock.duration.ms: Value must be at \
             least 1000"
        )
    );
    assert_eq!(
        refused(
            Release::Kafka4_3,
            &[
                ("share.delivery.count.limit", "11"),
                ("share.record.lock.duration.ms", "1000")
            ]
        ),
        config(
            "share.record.lock.duration.ms must be greater than or equal to \
             group.share.min.record.lock.duration.ms"
        )
    );
    // 4.0 writes the duration format with a stray dot.
    assert_eq!(
        refused(Release::Kafka4_0, &[("share.auto.offset.reset", "LATEST")]),
        config(
            "Invalid value LATEST for configuration share.auto.offset.reset: Invalid value \
             `LATEST` for configuration share.auto.offset.reset. The value must be either \
             'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS.>'."
        )
    );
}

/// DescribeConfigs of a GROUP lists the release's keys (4.4's internal ones left out); from
/// 4.3 each key with a broker config names it as its last synonym, with the broker's value
/// (`streams.assignor.name` shows `group.streams.assignors`' `sticky`). As each release's
/// controller answered `tests/interop_group_configs.rs`.
#[test]
fn group_describe_per_release() {
    use super::describe_configs::describe;
    for (release, count) in [
        (Release::Kafka4_0, 6),
        (Release::Kafka4_1, 10),
        (Release::Kafka4_2, 11),
        (Release::Kafka4_3, 17),
        (Release::Kafka4_4, 21),
    ] {
        let mut c2 = ctx(release);
        // Stored for real (alter_one only validates).
        let r = super::configuration::alter(
            &mut c2,
            vec![super::configuration::res(
                GROUP,
                "g",
                &[(
                    "consumer.session.timeout.ms",
                    super::configuration::SET,
                    Some("50000"),
                )],
            )],
            false,
        );
        assert_eq!(r.responses[0].error_code, 0);
        let d = describe(&mut c2, &[(GROUP, "g", None)], true);
        let configs = &d.results[0].configs;
        assert_eq!(configs.len(), count, "{release:?}");
        let shown = |name: &str| {
            let e = configs.iter().find(|e| e.name.as_str() == name).unwrap();
            let synonyms: Vec<String> = e
                .synonyms
                .iter()
                .map(|s| {
                    format!(
                        "{}={}/{}",
                        s.name.as_str(),
                        s.value.as_ref().map_or("", |v| v.as_str()),
                        s.source
                    )
                })
                .collect();
            (
                e.value.as_ref().map_or("", |v| v.as_str()).to_string(),
                e.config_source,
                synonyms.join(" "),
            )
        };
        let broker_synonyms = release >= Release::Kafka4_3;
        assert_eq!(
            shown("consumer.session.timeout.ms"),
            (
                "50000".to_string(),
                8,
                if broker_synonyms {
                    "consumer.session.timeout.ms=50000/8 group.consumer.session.timeout.ms=45000/5"
                } else {
                    "consumer.session.timeout.ms=50000/8"
                }
                .to_string()
            ),
            "{release:?}"
        );
        assert_eq!(
            shown("share.auto.offset.reset"),
            (
                "latest".to_string(),
                5,
                "share.auto.offset.reset=latest/5".to_string()
            )
        );
        if release == Release::Kafka4_4 {
            assert_eq!(
                shown("streams.assignor.name"),
                (
                    "sticky".to_string(),
                    5,
                    "group.streams.assignors=sticky/5".to_string()
                )
            );
            assert!(!configs
                .iter()
                .any(|e| e.name.as_str() == "streams.num.warmup.replicas"));
        }
    }
}
