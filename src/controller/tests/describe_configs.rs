//! DescribeConfigs on the controller listener: ConfigHelper's answers as a Kafka 4.1.2
//! controller gives them (checked against its own classes), on an active controller or a
//! standby over an in-memory log.
#![allow(clippy::unwrap_used)]

use super::configuration::{alter, ctx_with_topic, res, s, SET};
use super::context::Ctx;
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::configs::resource::{BROKER, CLIENT_METRICS, GROUP, TOPIC};
use crate::controller::errors;

pub(super) fn describe(
    ctx: &mut Ctx,
    resources: &[(i8, &str, Option<&[&str]>)],
    include_synonyms: bool,
) -> kafka_protocol::messages::DescribeConfigsResponse {
    use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
    let req = kafka_protocol::messages::DescribeConfigsRequest::default()
        .with_include_synonyms(include_synonyms)
        .with_resources(
            resources
                .iter()
                .map(|(t, n, keys)| {
                    DescribeConfigsResource::default()
                        .with_resource_type(*t)
                        .with_resource_name(s(n))
                        .with_configuration_keys(keys.map(|k| k.iter().map(|k| s(k)).collect()))
                })
                .collect(),
        );
    match ctx.call(RequestBody::DescribeConfigs(req), 4) {
        ResponseBody::DescribeConfigs(r) => r,
        other => panic!("{other:?}"),
    }
}

/// ConfigHelper's topic describe on a controller (the entries a Kafka 4.1.2 controller gives,
/// checked against its own classes): every topic config, sources and synonyms, the override
/// first; unknown topics and bad names refused; keys filtered.
#[test]
fn describe_topic_configs_as_kafkas_config_helper() {
    let mut ctx = ctx_with_topic();
    alter(
        &mut ctx,
        vec![
            res(TOPIC, "mytopic", &[("retention.ms", SET, Some("1000"))]),
            res(BROKER, "", &[("log.cleanup.policy", SET, Some("compact"))]),
        ],
        false,
    );
    let r = describe(
        &mut ctx,
        &[
            (TOPIC, "mytopic", None),
            (TOPIC, "nope", None),
            (TOPIC, "bad name", None),
            (TOPIC, "mytopic", Some(&["retention.ms", "nope"])),
        ],
        true,
    );
    assert_eq!(r.results.len(), 4, "no de-duplication");
    let all = &r.results[0];
    assert_eq!(
        (all.error_code, all.error_message.as_deref()),
        (0, Some(""))
    );
    assert_eq!(all.configs.len(), 33, "Kafka 4.1.2 lists 33 topic configs");
    let get = |n: &str| all.configs.iter().find(|c| c.name.as_str() == n).unwrap();
    let retention = get("retention.ms");
    assert_eq!(
        (
            retention.value.as_deref(),
            retention.config_source,
            retention.config_type
        ),
        (Some("1000"), 1, 5)
    );
    assert_eq!(retention.synonyms.len(), 1);
    let cleanup = get("cleanup.policy");
    assert_eq!(
        (cleanup.value.as_deref(), cleanup.config_source),
        (Some("compact"), 3)
    );
    let syn: Vec<(&str, Option<&str>, i8)> = cleanup
        .synonyms
        .iter()
        .map(|x| (x.name.as_str(), x.value.as_deref(), x.source))
        .collect();
    assert_eq!(
        syn,
        [
            ("log.cleanup.policy", Some("compact"), 3),
            ("log.cleanup.policy", Some("delete"), 5)
        ]
    );
    let segment = get("segment.ms");
    assert_eq!(
        (segment.value.as_deref(), segment.config_source),
        (Some("604800000"), 5)
    );
    assert!(segment.synonyms.is_empty(), "log.roll.ms has no default");
    assert_eq!(
        (
            r.results[1].error_code,
            r.results[1].error_message.as_deref()
        ),
        (3, Some(""))
    );
    assert_eq!(r.results[2].error_code, errors::INVALID_TOPIC_EXCEPTION);
    let names: Vec<&str> = r.results[3]
        .configs
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["retention.ms"]);
}

/// BROKER, BROKER_LOGGER, CLIENT_METRICS and GROUP describes, and an unknown type failing the
/// whole request; a standby answers too.
#[test]
fn describe_other_resources() {
    let mut ctx = ctx_with_topic();
    alter(
        &mut ctx,
        vec![
            res(BROKER, "", &[("log.retention.ms", SET, Some("5000"))]),
            res(BROKER, "1", &[("log.retention.ms", SET, Some("6000"))]),
            res(
                CLIENT_METRICS,
                "sub1",
                &[("interval.ms", SET, Some("1000"))],
            ),
            res(
                GROUP,
                "g1",
                &[("consumer.session.timeout.ms", SET, Some("50000"))],
            ),
        ],
        false,
    );
    ctx.lose_leadership(2);
    let r = describe(
        &mut ctx,
        &[
            (BROKER, "", None),
            (BROKER, "1", None),
            (BROKER, "7", None),
            (BROKER, "x", None),
            (8, "", None),
            (8, "7", None),
            (CLIENT_METRICS, "sub1", None),
            (CLIENT_METRICS, "nosuch", None),
            (GROUP, "g1", None),
            (GROUP, "", None),
        ],
        false,
    );
    type Entry<'a> = (&'a str, Option<&'a str>, i8);
    let summary: Vec<(i16, Option<&str>, Vec<Entry<'_>>)> = r
        .results
        .iter()
        .map(|x| {
            (
                x.error_code,
                x.error_message.as_deref(),
                x.configs
                    .iter()
                    .filter(|c| c.config_source != 5)
                    .map(|c| (c.name.as_str(), c.value.as_deref(), c.config_source))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        summary[0],
        (0, Some(""), vec![("log.retention.ms", Some("5000"), 3)])
    );
    assert_eq!(
        summary[1],
        (0, Some(""), vec![("log.retention.ms", Some("6000"), 2)])
    );
    assert_eq!(
        summary[2].1,
        Some("Unexpected broker id, expected 1 or empty string, but received 7")
    );
    assert_eq!(
        summary[3].1,
        Some("Broker id must be an integer, but it is: x")
    );
    assert_eq!(summary[4].1, Some("Broker id must not be empty"));
    assert_eq!(
        summary[5].1,
        Some("Unexpected broker id, expected 1 but received 7")
    );
    assert_eq!(summary[6].2, vec![("interval.ms", Some("1000"), 7)]);
    assert_eq!(
        r.results[7].configs.len(),
        3,
        "defaults for a subscription not stored"
    );
    assert_eq!(
        summary[8].2,
        vec![("consumer.session.timeout.ms", Some("50000"), 8)]
    );
    assert_eq!(r.results[8].configs.len(), 10);
    assert_eq!(summary[9].1, Some("Group name must not be empty"));
    let r = describe(
        &mut ctx,
        &[(TOPIC, "mytopic", None), (0, "zz", None)],
        false,
    );
    assert!(r
        .results
        .iter()
        .all(|x| x.error_code == errors::INVALID_REQUEST));
}
