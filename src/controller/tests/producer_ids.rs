//! ProducerIdControlManagerTest.
#![allow(clippy::unwrap_used)]

use kafka_protocol::messages::{AllocateProducerIdsRequest, AllocateProducerIdsResponse, BrokerId};

use super::context::Ctx;
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::errors;

fn allocate(ctx: &mut Ctx, id: i32, epoch: i64) -> AllocateProducerIdsResponse {
    let req = AllocateProducerIdsRequest::default()
        .with_broker_id(BrokerId(id))
        .with_broker_epoch(epoch);
    match ctx.call(RequestBody::AllocateProducerIds(req), 0) {
        ResponseBody::AllocateProducerIds(r) => r,
        other => panic!("{other:?}"),
    }
}

#[test]
fn test_initial_result_and_monotonic_blocks() {
    let mut ctx = Ctx::active(27);
    let epoch = ctx.register_unfenced(1, None);
    let first = allocate(&mut ctx, 1, epoch);
    assert_eq!(
        (
            first.error_code,
            first.producer_id_start.0,
            first.producer_id_len
        ),
        (0, 0, 1000)
    );
    let second = allocate(&mut ctx, 1, epoch);
    assert_eq!(second.producer_id_start.0, 1000);
    assert_eq!(ctx.image().next_producer_id, 2000);
}

#[test]
fn test_unknown_broker_epoch() {
    let mut ctx = Ctx::active(27);
    let epoch = ctx.register_unfenced(1, None);
    assert_eq!(
        allocate(&mut ctx, 1, epoch + 1).error_code,
        errors::STALE_BROKER_EPOCH
    );
    // An unregistered broker gets STALE_BROKER_EPOCH too, not BROKER_ID_NOT_REGISTERED.
    assert_eq!(
        allocate(&mut ctx, 7, 1).error_code,
        errors::STALE_BROKER_EPOCH
    );
    assert_eq!(ctx.image().next_producer_id, -1, "nothing handed out");
}

/// A refusal is Kafka's `AllocateProducerIdsRequest.getErrorResponse`: a fresh response data
/// with only the error code set, so ProducerIdStart is the schema's default 0, not -1
/// (differential fuzz against 4.1.2).
#[test]
fn a_refused_allocation_answers_producer_id_start_0() {
    let mut ctx = Ctx::active(27);
    let epoch = ctx.register_unfenced(1, None);
    let r = allocate(&mut ctx, 1, epoch + 1);
    assert_eq!(
        (r.error_code, r.producer_id_start.0, r.producer_id_len),
        (errors::STALE_BROKER_EPOCH, 0, 0)
    );
}
