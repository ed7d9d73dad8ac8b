//! BROKER_LOGGER through the controller's request path (Kafka's `ControllerApisTest`
//! IncrementalAlterConfigs and legacy AlterConfigs cases): applied on the node that got the
//! request, answered after the controller's answers, on a standby too; the legacy API refuses
//! it. `configuration/broker_logger_tests.rs` has the per-op checks (RuntimeLoggerManagerTest).

use kafka_protocol::messages::alter_configs_request::{
    AlterConfigsResource as LegacyResource, AlterableConfig as LegacyConfig,
};
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::{AlterConfigsRequest, DescribeConfigsRequest};

use super::configuration::{alter, answers, ctx_with_topic, res, s, SET};
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::configs::resource::{BROKER, BROKER_LOGGER, TOPIC};
use crate::controller::errors;
use crate::logging::LogLevel;

const RAFT: &str = "ferrokraft.raft";

/// ControllerApisTest.testInvalidIncrementalAlterConfigsResources (no authorizer): the
/// BROKER_LOGGER resource is applied and answered NONE without a message, after the unknown
/// type, the duplicate and the controller's answers.
#[test]
fn test_invalid_incremental_alter_configs_resources() {
    let mut ctx = ctx_with_topic();
    let r = alter(
        &mut ctx,
        vec![
            res(BROKER_LOGGER, "1", &[(RAFT, SET, Some("DEBUG"))]),
            res(
                BROKER,
                "3",
                &[("log.cleaner.backoff.ms", SET, Some("100000"))],
            ),
            res(
                BROKER,
                "3",
                &[("log.cleaner.backoff.ms", SET, Some("100000"))],
            ),
            res(124, "foo", &[("foo", SET, Some("bar"))]),
            res(TOPIC, "mytopic", &[("retention.ms", SET, Some("1000"))]),
        ],
        false,
    );
    assert_eq!(
        answers(&r),
        [
            (
                BROKER,
                "3".into(),
                errors::INVALID_REQUEST,
                Some("Duplicate resource.".into())
            ),
            (
                124,
                "foo".into(),
                errors::UNSUPPORTED_VERSION,
                Some("Unknown resource type 124.".into())
            ),
            (TOPIC, "mytopic".into(), 0, None),
            (BROKER_LOGGER, "1".into(), 0, None),
        ]
    );
    assert_eq!(ctx.log_levels.len(), 1, "one change for the driver");
    assert_eq!(ctx.log_levels[0].effective(RAFT), LogLevel::Debug);
    assert_eq!(
        ctx.c.log_levels().effective("ferrokraft.raft.fetch"),
        LogLevel::Debug
    );
}

/// Only BROKER_LOGGER resources: Kafka's QuorumController completes the empty change map at
/// once, so any controller answers; with a resource for the controller a standby answers
/// NOT_CONTROLLER for all, though the levels changed already.
#[test]
fn a_standby_controller_changes_its_own_levels() {
    let mut ctx = ctx_with_topic();
    ctx.lose_leadership(2);
    let r = alter(
        &mut ctx,
        vec![
            res(BROKER_LOGGER, "1", &[(RAFT, SET, Some("TRACE"))]),
            res(BROKER_LOGGER, "2", &[("root", SET, Some("DEBUG"))]),
            res(
                BROKER_LOGGER,
                "1",
                &[("no.such.logger", SET, Some("DEBUG"))],
            ),
        ],
        false,
    );
    assert_eq!(
        answers(&r),
        [
            (BROKER_LOGGER, "1".into(), 0, None),
            (
                BROKER_LOGGER,
                "2".into(),
                errors::INVALID_REQUEST,
                Some("Unexpected node id. Expected 1, but received 2".into())
            ),
            (
                BROKER_LOGGER,
                "1".into(),
                errors::INVALID_CONFIG,
                Some("Logger no.such.logger does not exist!".into())
            ),
        ]
    );
    assert_eq!(ctx.c.log_levels().effective(RAFT), LogLevel::Trace);
    let r = alter(
        &mut ctx,
        vec![
            res(BROKER_LOGGER, "1", &[("root", SET, Some("WARN"))]),
            res(TOPIC, "mytopic", &[("retention.ms", SET, Some("1000"))]),
        ],
        false,
    );
    assert!(r
        .responses
        .iter()
        .all(|a| a.error_code == errors::NOT_CONTROLLER));
    assert_eq!(ctx.c.log_levels().effective("root"), LogLevel::Warn);
    assert_eq!(ctx.log_levels.len(), 2);
}

/// validate_only checks and changes nothing; a refused resource changes nothing.
#[test]
fn validate_only_and_refusals_change_no_level() {
    let mut ctx = ctx_with_topic();
    let before = ctx.c.log_levels().clone();
    let r = alter(
        &mut ctx,
        vec![res(BROKER_LOGGER, "1", &[(RAFT, SET, Some("DEBUG"))])],
        true,
    );
    assert_eq!(answers(&r), [(BROKER_LOGGER, "1".into(), 0, None)]);
    let r = alter(
        &mut ctx,
        vec![res(
            BROKER_LOGGER,
            "1",
            &[(RAFT, SET, Some("DEBUG")), ("root", 1, None)],
        )],
        false,
    );
    assert_eq!(
        answers(&r),
        [(
            BROKER_LOGGER,
            "1".into(),
            errors::INVALID_REQUEST,
            Some("Removing the log level of the root logger is not allowed".into())
        )]
    );
    assert_eq!(ctx.c.log_levels(), &before);
    assert!(ctx.log_levels.is_empty());
}

/// The legacy AlterConfigs refuses BROKER_LOGGER in Kafka's authorization step (after the
/// duplicate check), and a request with nothing else is answered by a standby too.
#[test]
fn legacy_alter_configs_refuse_broker_logger() {
    let mut ctx = ctx_with_topic();
    ctx.lose_leadership(2);
    let legacy = |name: &str| {
        LegacyResource::default()
            .with_resource_type(BROKER_LOGGER)
            .with_resource_name(s(name))
            .with_configs(vec![LegacyConfig::default()
                .with_name(s("root"))
                .with_value(Some(s("DEBUG")))])
    };
    let req = AlterConfigsRequest::default().with_resources(vec![
        legacy("1"),
        legacy("2"),
        legacy("2"),
        legacy("2"),
    ]);
    let r = match ctx.call(RequestBody::AlterConfigs(req), 2) {
        ResponseBody::AlterConfigs(r) => r,
        other => panic!("{other:?}"),
    };
    let got: Vec<(String, i16, Option<String>)> = r
        .responses
        .iter()
        .map(|x| {
            (
                x.resource_name.to_string(),
                x.error_code,
                x.error_message.as_ref().map(|m| m.to_string()),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "2".into(),
                errors::INVALID_REQUEST,
                Some("Duplicate resource.".into())
            ),
            (
                "1".into(),
                errors::INVALID_REQUEST,
                Some("Unexpected resource type BROKER_LOGGER.".into())
            ),
        ]
    );
    assert_eq!(ctx.c.log_levels().effective("root"), LogLevel::Info);
}

/// DescribeConfigs shows the levels as changed, with Kafka's source 6.
#[test]
fn describe_follows_the_changes() {
    let mut ctx = ctx_with_topic();
    alter(
        &mut ctx,
        vec![res(BROKER_LOGGER, "1", &[(RAFT, SET, Some("DEBUG"))])],
        false,
    );
    let req =
        DescribeConfigsRequest::default().with_resources(vec![DescribeConfigsResource::default()
            .with_resource_type(BROKER_LOGGER)
            .with_resource_name(s("1"))
            .with_configuration_keys(Some(vec![s(RAFT), s("root")]))]);
    let r = match ctx.call(RequestBody::DescribeConfigs(req), 4) {
        ResponseBody::DescribeConfigs(r) => r,
        other => panic!("{other:?}"),
    };
    let got: Vec<(&str, Option<&str>, i8)> = r.results[0]
        .configs
        .iter()
        .map(|c| (c.name.as_str(), c.value.as_deref(), c.config_source))
        .collect();
    assert_eq!(got, [(RAFT, Some("DEBUG"), 6), ("root", Some("INFO"), 6)]);
}
