//! NOT_CONTROLLER as Kafka's controller words it, and a parked success answer rewritten as
//! NOT_CONTROLLER when leadership is lost before commit. (Every API's plain error answer is
//! the codec's: `codec::error_response`.)

use super::errors::{self, ApiError};
use crate::codec::ResponseBody;

/// NOT_CONTROLLER as Kafka's controller words it.
pub fn not_controller(leader_id: Option<i32>) -> ApiError {
    match leader_id {
        Some(id) => ApiError::new(
            errors::NOT_CONTROLLER,
            format!("The active controller appears to be node {id}."),
        ),
        None => ApiError::new(
            errors::NOT_CONTROLLER,
            "No controller appears to be active.",
        ),
    }
}

/// NOT_CONTROLLER in the shape of `body`'s API.
pub(super) fn not_controller_body(body: &ResponseBody, error: &ApiError) -> ResponseBody {
    use kafka_protocol::protocol::StrBytes;
    let message = || error.message.clone().map(StrBytes::from_string);
    match body.clone() {
        ResponseBody::BrokerRegistration(r) => {
            ResponseBody::BrokerRegistration(r.with_error_code(error.code).with_broker_epoch(-1))
        }
        ResponseBody::BrokerHeartbeat(r) => ResponseBody::BrokerHeartbeat(
            r.with_error_code(error.code)
                .with_is_caught_up(false)
                .with_is_fenced(true)
                .with_should_shut_down(false),
        ),
        ResponseBody::UnregisterBroker(r) => ResponseBody::UnregisterBroker(
            r.with_error_code(error.code).with_error_message(message()),
        ),
        ResponseBody::ControllerRegistration(r) => ResponseBody::ControllerRegistration(
            r.with_error_code(error.code).with_error_message(message()),
        ),
        ResponseBody::UnregisterController(r) => ResponseBody::UnregisterController(
            r.with_error_code(error.code).with_error_message(message()),
        ),
        ResponseBody::AllocateProducerIds(r) => ResponseBody::AllocateProducerIds(
            // Kafka's getErrorResponse sets only the error code (ProducerIdStart 0).
            r.with_error_code(error.code)
                .with_producer_id_start(kafka_protocol::messages::ProducerId(0))
                .with_producer_id_len(0),
        ),
        ResponseBody::AlterPartition(r) => {
            ResponseBody::AlterPartition(r.with_error_code(error.code).with_topics(Vec::new()))
        }
        ResponseBody::AssignReplicasToDirs(r) => ResponseBody::AssignReplicasToDirs(
            r.with_error_code(error.code).with_directories(Vec::new()),
        ),
        ResponseBody::UpdateFeatures(r) => ResponseBody::UpdateFeatures(
            r.with_error_code(error.code)
                .with_error_message(message())
                .with_results(Vec::new()),
        ),
        ResponseBody::AlterPartitionReassignments(mut r) => {
            r.error_code = error.code;
            r.error_message = message();
            for p in r.responses.iter_mut().flat_map(|t| t.partitions.iter_mut()) {
                p.error_code = error.code;
                p.error_message = message();
            }
            ResponseBody::AlterPartitionReassignments(r)
        }
        ResponseBody::IncrementalAlterConfigs(mut r) => {
            for t in &mut r.responses {
                t.error_code = error.code;
                t.error_message = message();
            }
            ResponseBody::IncrementalAlterConfigs(r)
        }
        ResponseBody::AlterConfigs(mut r) => {
            for t in &mut r.responses {
                t.error_code = error.code;
                t.error_message = message();
            }
            ResponseBody::AlterConfigs(r)
        }
        ResponseBody::DeleteTopics(mut r) => {
            for t in &mut r.responses {
                t.error_code = error.code;
                t.error_message = None;
            }
            ResponseBody::DeleteTopics(r)
        }
        ResponseBody::CreatePartitions(mut r) => {
            for t in &mut r.results {
                t.error_code = error.code;
                t.error_message = message();
            }
            ResponseBody::CreatePartitions(r)
        }
        ResponseBody::AlterUserScramCredentials(mut r) => {
            for t in &mut r.results {
                t.error_code = error.code;
                t.error_message = message();
            }
            ResponseBody::AlterUserScramCredentials(r)
        }
        ResponseBody::CreateTopics(mut r) => {
            for t in &mut r.topics {
                t.error_code = error.code;
                t.error_message = message();
                t.topic_id = uuid::Uuid::nil();
                t.num_partitions = -1;
                t.replication_factor = -1;
                t.configs = None;
            }
            ResponseBody::CreateTopics(r)
        }
        ResponseBody::CreateAcls(mut r) => {
            for c in &mut r.results {
                c.error_code = error.code;
                c.error_message = message();
            }
            ResponseBody::CreateAcls(r)
        }
        ResponseBody::DeleteAcls(mut r) => {
            for f in &mut r.filter_results {
                f.error_code = error.code;
                f.error_message = message();
                f.matching_acls.clear();
            }
            ResponseBody::DeleteAcls(r)
        }
        other => other,
    }
}
