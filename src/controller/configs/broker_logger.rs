//! The BROKER_LOGGER config resource (type 8): this node's log levels, changed and described
//! as Kafka 4.1's controller does (`RuntimeLoggerManager`, `ConfigHelper`). Sans-IO: the
//! levels are a [`LogLevels`] model the controller holds; the driver makes each new model the
//! process's tracing filter (`logging::apply`).
//!
//! ```text
//!   IncrementalAlterConfigs, each BROKER_LOGGER resource in request order (never sent to the
//!   controller's managers, answered on any controller, after the other resources' answers):
//!     (authorized: always, no authorizer yet) ─▶ the name is this node's id ─▶ every op
//!     checked (SET: logger exists, Kafka level; DELETE: exists, not root; APPEND/SUBTRACT
//!     refused) ─▶ unless validate_only, applied in order ─▶ changes for the driver
//!   DescribeConfigs BROKER_LOGGER <this node> ─▶ every logger with its effective level
//! ```
//!
//! One error per resource, the first op that fails; a resource that fails changes nothing.

use kafka_protocol::messages::describe_configs_response::DescribeConfigsResourceResult;
use kafka_protocol::messages::incremental_alter_configs_request::AlterConfigsResource;
use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::IncrementalAlterConfigsRequest;
use kafka_protocol::protocol::StrBytes;

use crate::controller::errors::{self, ApiError};
use crate::logging::{LogLevel, LogLevels, LoggerChange, ROOT_LOGGER};

/// `DescribeConfigsResponse.ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG`.
const DYNAMIC_BROKER_LOGGER_CONFIG: i8 = 6;

/// Kafka's `RuntimeLoggerManager.VALID_LOG_LEVELS_STRING` as its message shows it.
const VALID_LOG_LEVELS: &str = "DEBUG, ERROR, FATAL, INFO, TRACE, WARN";

/// `Errors.UNKNOWN_SERVER_ERROR.message()`, the fallback message of an unexpected failure.
const UNKNOWN_SERVER_ERROR_MESSAGE: &str =
    "The server experienced an unexpected error when processing the request.";

/// The BROKER_LOGGER resources of `req`, each applied to `levels` in request order (Kafka's
/// `ControllerApis`): their answers, and the changes made.
pub fn incremental_alter(
    levels: &mut LogLevels,
    node_id: i32,
    req: &IncrementalAlterConfigsRequest,
) -> (Vec<AlterConfigsResourceResponse>, Vec<LoggerChange>) {
    let mut answers = Vec::new();
    let mut changes = Vec::new();
    let loggers = req
        .resources
        .iter()
        .filter(|r| r.resource_type == super::resource::BROKER_LOGGER);
    for r in loggers {
        let answer = AlterConfigsResourceResponse::default()
            .with_resource_type(r.resource_type)
            .with_resource_name(r.resource_name.clone());
        answers.push(
            match apply_changes_for_resource(levels, node_id, req.validate_only, r) {
                Ok(mut made) => {
                    changes.append(&mut made);
                    answer
                        .with_error_code(errors::NONE)
                        .with_error_message(None)
                }
                Err(e) => {
                    tracing::info!(
                        "BROKER_LOGGER {} change refused: error {} ({:?})",
                        r.resource_name.as_str(),
                        e.code,
                        e.message
                    );
                    answer
                        .with_error_code(e.code)
                        .with_error_message(e.message.map(StrBytes::from_string))
                }
            },
        );
    }
    (answers, changes)
}

/// Kafka's `RuntimeLoggerManager.applyChangesForResource` for this node (`node_id`): checks
/// the resource and, unless `validate_only`, applies its ops to `levels` in order; the changes
/// made, or the resource's error.
pub fn apply_changes_for_resource(
    levels: &mut LogLevels,
    node_id: i32,
    validate_only: bool,
    resource: &AlterConfigsResource,
) -> Result<Vec<LoggerChange>, ApiError> {
    // Kafka checks CLUSTER_ACTION on the cluster first; without an authorizer all is allowed.
    validate_resource_name_is_node_id(node_id, resource.resource_name.as_str())?;
    let ops: Vec<(&str, i8, Option<&str>)> = resource
        .configs
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.config_operation,
                c.value.as_ref().map(|v| v.as_str()),
            )
        })
        .collect();
    validate_log_level_configs(levels, &ops)?;
    if validate_only {
        return Ok(Vec::new());
    }
    let mut changes = Vec::new();
    for (name, operation, value) in ops {
        let level = match operation {
            OP_SET => value.and_then(LogLevel::from_kafka_name),
            _ => None,
        };
        match level {
            Some(level) => levels.set(name, level),
            None => levels.unset(name),
        }
        changes.push(LoggerChange {
            name: name.to_string(),
            level,
        });
    }
    Ok(changes)
}

const OP_SET: i8 = 0;
const OP_DELETE: i8 = 1;
const OP_APPEND: i8 = 2;
const OP_SUBTRACT: i8 = 3;

/// Kafka's `validateResourceNameIsNodeId`.
fn validate_resource_name_is_node_id(node_id: i32, name: &str) -> Result<(), ApiError> {
    let Ok(id) = name.parse::<i32>() else {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            format!("Node id must be an integer, but it is: {name}"),
        ));
    };
    if id != node_id {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            format!("Unexpected node id. Expected {node_id}, but received {id}"),
        ));
    }
    Ok(())
}

/// Kafka's `validateLogLevelConfigs`: the first op that fails decides.
fn validate_log_level_configs(
    levels: &LogLevels,
    ops: &[(&str, i8, Option<&str>)],
) -> Result<(), ApiError> {
    let exists = |name: &str| {
        if levels.exists(name) {
            Ok(())
        } else {
            Err(ApiError::new(
                errors::INVALID_CONFIG,
                format!("Logger {name} does not exist!"),
            ))
        }
    };
    for (name, operation, value) in ops {
        match *operation {
            OP_SET => {
                exists(name)?;
                if value.and_then(LogLevel::from_kafka_name).is_none() {
                    return Err(ApiError::new(
                        errors::INVALID_CONFIG,
                        format!(
                            "Cannot set the log level of {name} to {} as it is not a supported \
                             log level. Valid log levels are {VALID_LOG_LEVELS}",
                            value.unwrap_or("null")
                        ),
                    ));
                }
            }
            OP_DELETE => {
                exists(name)?;
                if *name == ROOT_LOGGER {
                    return Err(ApiError::new(
                        errors::INVALID_REQUEST,
                        "Removing the log level of the root logger is not allowed",
                    ));
                }
            }
            OP_APPEND | OP_SUBTRACT => {
                let verb = if *operation == OP_APPEND {
                    "APPEND"
                } else {
                    "SUBTRACT"
                };
                return Err(ApiError::new(
                    errors::INVALID_REQUEST,
                    format!("{verb} operation is not allowed for the BROKER_LOGGER resource"),
                ));
            }
            // Kafka's switch dereferences the unknown op type (a NullPointerException): an
            // unexpected error, its message withheld.
            _ => {
                return Err(ApiError::new(
                    errors::UNKNOWN_SERVER_ERROR,
                    UNKNOWN_SERVER_ERROR_MESSAGE,
                ))
            }
        }
    }
    Ok(())
}

/// DescribeConfigs of BROKER_LOGGER `name` on node `node_id` (Kafka's `ConfigHelper`): every
/// logger with its effective level.
pub fn describe(
    levels: &LogLevels,
    node_id: i32,
    name: &str,
) -> Result<Vec<DescribeConfigsResourceResult>, ApiError> {
    if name.is_empty() {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            "Broker id must not be empty",
        ));
    }
    let Ok(id) = name.parse::<i32>() else {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            format!("Broker id must be an integer, but it is: {name}"),
        ));
    };
    if id != node_id {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            format!("Unexpected broker id, expected {node_id} but received {name}"),
        ));
    }
    Ok(levels
        .loggers()
        .into_iter()
        .map(|(logger, level)| {
            DescribeConfigsResourceResult::default()
                .with_name(StrBytes::from_string(logger))
                .with_value(Some(StrBytes::from_static_str(level.name())))
                .with_config_source(DYNAMIC_BROKER_LOGGER_CONFIG)
                .with_is_sensitive(false)
                .with_read_only(false)
        })
        .collect())
}

#[cfg(test)]
#[path = "broker_logger_tests.rs"]
mod tests;
