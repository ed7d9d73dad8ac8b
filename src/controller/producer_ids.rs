//! Producer id blocks for brokers (Kafka's `ProducerIdControlManager`): blocks of 1000,
//! handed out in order; each block is a ProducerIdsRecord whose next id only grows.

use kafka_protocol::messages::{
    AllocateProducerIdsRequest, AllocateProducerIdsResponse, ProducerId,
};

use super::errors;
use super::result::{ControllerResult, RecordOut};
use crate::metadata::image::MetadataImage;
use crate::metadata::record::MetadataRecord;
use crate::metadata::records::ProducerIdsRecord;

/// Ids per block (`ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE`).
pub const PRODUCER_ID_BLOCK_SIZE: i64 = 1000;

/// Kafka's `generateNextProducerId`: the broker's epoch must be current, then the next block.
pub fn allocate(
    image: &MetadataImage,
    req: &AllocateProducerIdsRequest,
) -> ControllerResult<AllocateProducerIdsResponse> {
    let refused = |code: i16| {
        // Kafka's getErrorResponse: only the error code is set (ProducerIdStart stays 0).
        ControllerResult::response_only(
            AllocateProducerIdsResponse::default().with_error_code(code),
        )
    };
    if let Err(e) = image.check_broker_epoch(req.broker_id.0, req.broker_epoch) {
        return refused(e.code);
    }
    // An image without any block starts at 0.
    let first = image.next_producer_id.max(0);
    if first > i64::MAX - PRODUCER_ID_BLOCK_SIZE {
        tracing::error!(
            "Exhausted all producerIds as the next block's end producerId has exceeded the \
             int64 type limit"
        );
        return refused(errors::UNKNOWN_SERVER_ERROR);
    }
    let record = ProducerIdsRecord {
        broker_id: req.broker_id.0,
        broker_epoch: req.broker_epoch,
        next_producer_id: first + PRODUCER_ID_BLOCK_SIZE,
        ..Default::default()
    };
    ControllerResult::of(
        vec![RecordOut::new(MetadataRecord::ProducerIds(record), 0)],
        AllocateProducerIdsResponse::default()
            .with_producer_id_start(ProducerId(first))
            .with_producer_id_len(PRODUCER_ID_BLOCK_SIZE as i32),
    )
}
