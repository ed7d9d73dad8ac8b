//! Kafka's `RuntimeLoggerManagerTest` (node id 5) and the BROKER_LOGGER rules around it.

use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::protocol::StrBytes;

use super::*;

const NODE: i32 = 5;
/// A logger that exists (Kafka's tests use their own class's logger).
const LOG: &str = "ferrokraft.controller.configs.broker_logger";

fn resource(name: &str, ops: &[(&str, i8, Option<&str>)]) -> AlterConfigsResource {
    AlterConfigsResource::default()
        .with_resource_type(8)
        .with_resource_name(StrBytes::from_string(name.to_string()))
        .with_configs(
            ops.iter()
                .map(|(n, op, v)| {
                    AlterableConfig::default()
                        .with_name(StrBytes::from_string(n.to_string()))
                        .with_config_operation(*op)
                        .with_value(v.map(|v| StrBytes::from_string(v.to_string())))
                })
                .collect(),
        )
}

fn validate(ops: &[(&str, i8, Option<&str>)]) -> Result<(), ApiError> {
    let mut levels = LogLevels::default();
    let before = levels.clone();
    let out = apply_changes_for_resource(&mut levels, NODE, true, &resource("5", ops));
    assert_eq!(levels, before, "validate_only changes nothing");
    out.map(|changes| assert!(changes.is_empty()))
}

fn error(code: i16, message: &str) -> Result<(), ApiError> {
    Err(ApiError::new(code, message))
}

#[test]
fn test_validate_set_log_level_config() {
    assert_eq!(validate(&[(LOG, OP_SET, Some("TRACE"))]), Ok(()));
}

#[test]
fn test_validate_delete_log_level_config() {
    assert_eq!(validate(&[(LOG, OP_DELETE, Some(""))]), Ok(()));
}

#[test]
fn test_operation_not_allowed() {
    for (op, name) in [(OP_APPEND, "APPEND"), (OP_SUBTRACT, "SUBTRACT")] {
        assert_eq!(
            validate(&[(LOG, op, Some("TRACE"))]),
            error(
                errors::INVALID_REQUEST,
                &format!("{name} operation is not allowed for the BROKER_LOGGER resource")
            )
        );
    }
}

#[test]
fn test_validate_bogus_log_level_name_not_allowed() {
    assert_eq!(
        validate(&[(LOG, OP_SET, Some("BOGUS"))]),
        error(
            errors::INVALID_CONFIG,
            &format!(
                "Cannot set the log level of {LOG} to BOGUS as it is not a supported log level. \
                 Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN"
            )
        )
    );
    // Kafka's level names are matched exactly, and a null value is "null".
    for (value, shown) in [
        (Some("debug"), "debug"),
        (Some("OFF"), "OFF"),
        (None, "null"),
    ] {
        let e = validate(&[(LOG, OP_SET, value)]).unwrap_err();
        assert_eq!(e.code, errors::INVALID_CONFIG);
        assert!(
            e.message
                .as_deref()
                .is_some_and(|m| m.contains(&format!("to {shown} as"))),
            "{e:?}"
        );
    }
}

#[test]
fn test_validate_set_root_log_level_config() {
    assert_eq!(validate(&[(ROOT_LOGGER, OP_SET, Some("TRACE"))]), Ok(()));
}

#[test]
fn test_validate_remove_root_log_level_config_not_allowed() {
    assert_eq!(
        validate(&[(ROOT_LOGGER, OP_DELETE, Some(""))]),
        error(
            errors::INVALID_REQUEST,
            "Removing the log level of the root logger is not allowed"
        )
    );
}

#[test]
fn unknown_loggers_do_not_exist() {
    for op in [OP_SET, OP_DELETE] {
        assert_eq!(
            validate(&[("no.such.logger", op, Some("DEBUG"))]),
            error(
                errors::INVALID_CONFIG,
                "Logger no.such.logger does not exist!"
            )
        );
    }
}

#[test]
fn unknown_op_types_are_unexpected_errors() {
    assert_eq!(
        validate(&[(LOG, 4, Some("DEBUG"))]),
        error(
            errors::UNKNOWN_SERVER_ERROR,
            "The server experienced an unexpected error when processing the request."
        )
    );
}

#[test]
fn the_resource_name_must_be_this_node_id() {
    let mut levels = LogLevels::default();
    let ops = [(ROOT_LOGGER, OP_SET, Some("DEBUG"))];
    let mut run = |name: &str| {
        apply_changes_for_resource(&mut levels, NODE, false, &resource(name, &ops)).map(|_| ())
    };
    assert_eq!(
        run("abc"),
        error(
            errors::INVALID_REQUEST,
            "Node id must be an integer, but it is: abc"
        )
    );
    assert_eq!(
        run(""),
        error(
            errors::INVALID_REQUEST,
            "Node id must be an integer, but it is: "
        )
    );
    assert_eq!(
        run("+6"),
        error(
            errors::INVALID_REQUEST,
            "Unexpected node id. Expected 5, but received 6"
        )
    );
    // Java's Integer.parseInt reads "+5" and "05" as 5.
    assert_eq!(run("+5"), Ok(()));
    assert_eq!(run("05"), Ok(()));
}

#[test]
fn ops_apply_in_order_and_a_failing_op_applies_none() {
    let mut levels = LogLevels::default();
    let changes = apply_changes_for_resource(
        &mut levels,
        NODE,
        false,
        &resource(
            "5",
            &[
                ("ferrokraft.raft", OP_SET, Some("DEBUG")),
                (LOG, OP_SET, Some("WARN")),
                (LOG, OP_DELETE, None),
            ],
        ),
    )
    .unwrap();
    assert_eq!(
        changes,
        vec![
            LoggerChange {
                name: "ferrokraft.raft".into(),
                level: Some(LogLevel::Debug)
            },
            LoggerChange {
                name: LOG.into(),
                level: Some(LogLevel::Warn)
            },
            LoggerChange {
                name: LOG.into(),
                level: None
            },
        ]
    );
    assert_eq!(levels.effective("ferrokraft.raft.fetch"), LogLevel::Debug);
    assert_eq!(levels.effective(LOG), LogLevel::Info);
    let before = levels.clone();
    let refused = apply_changes_for_resource(
        &mut levels,
        NODE,
        false,
        &resource(
            "5",
            &[
                (ROOT_LOGGER, OP_SET, Some("ERROR")),
                (ROOT_LOGGER, OP_DELETE, None),
            ],
        ),
    );
    assert_eq!(refused.unwrap_err().code, errors::INVALID_REQUEST);
    assert_eq!(levels, before);
}

#[test]
fn describe_lists_every_logger_with_its_effective_level() {
    let mut levels = LogLevels::default();
    levels.set("ferrokraft.raft", LogLevel::Debug);
    let entries = describe(&levels, NODE, "5").unwrap();
    let level = |name: &str| {
        entries
            .iter()
            .find(|e| e.name.as_str() == name)
            .and_then(|e| e.value.as_ref().map(|v| v.to_string()))
    };
    assert_eq!(level(ROOT_LOGGER).as_deref(), Some("INFO"));
    assert_eq!(level("ferrokraft.raft.fetch").as_deref(), Some("DEBUG"));
    assert_eq!(level("ferrokraft.node").as_deref(), Some("INFO"));
    assert_eq!(entries.len(), FERROKRAFT_LOGGER_COUNT + 1);
    assert!(entries.iter().all(|e| e.config_source == 6
        && !e.read_only
        && !e.is_sensitive
        && e.synonyms.is_empty()
        && e.config_type == 0));
    let refused = |name: &str| describe(&levels, NODE, name).unwrap_err().message;
    assert_eq!(refused("").as_deref(), Some("Broker id must not be empty"));
    assert_eq!(
        refused("x").as_deref(),
        Some("Broker id must be an integer, but it is: x")
    );
    assert_eq!(
        refused("6").as_deref(),
        Some("Unexpected broker id, expected 5 but received 6")
    );
}

const FERROKRAFT_LOGGER_COUNT: usize = crate::logging::loggers::FERROKRAFT_LOGGERS.len();
