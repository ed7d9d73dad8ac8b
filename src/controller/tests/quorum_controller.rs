//! QuorumControllerTest: the write path, commit-gated replies, failover.
#![allow(clippy::unwrap_used)]

use super::context::{bootstrap, registration, Ctx, CLUSTER_ID};
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::{errors, ControllerConfig, QuorumController};
use crate::raft::types::OffsetAndEpoch;
use crate::raft::LogReader;

#[test]
fn replies_wait_for_the_commit_of_their_records() {
    let mut ctx = Ctx::active(27);
    let id = ctx.send(RequestBody::BrokerRegistration(registration(1, None)), 4);
    assert!(ctx.answer(id).is_none(), "not answered before commit");
    assert!(ctx.c.speculative_image().unwrap().brokers.contains_key(&1));
    assert!(!ctx.image().brokers.contains_key(&1), "not committed yet");
    ctx.commit();
    let Some(ResponseBody::BrokerRegistration(r)) = ctx.answer(id) else {
        panic!("answered after commit")
    };
    assert_eq!(r.error_code, 0);
    // A heartbeat that writes nothing waits for the writes before it.
    let id = ctx.send(RequestBody::BrokerRegistration(registration(2, None)), 4);
    let hb = kafka_protocol::messages::BrokerHeartbeatRequest::default()
        .with_broker_id(kafka_protocol::messages::BrokerId(1))
        .with_broker_epoch(r.broker_epoch)
        .with_current_metadata_offset(0)
        .with_want_fence(true);
    let hb_id = ctx.send(RequestBody::BrokerHeartbeat(hb), 1);
    assert!(ctx.answer(hb_id).is_none());
    ctx.commit();
    assert!(ctx.answer(id).is_some() && ctx.answer(hb_id).is_some());
}

/// Kafka's ControllerWriteEvent with no records completes at once when no write is pending
/// (`deferredEventQueue.highestPendingOffset()` is empty): a heartbeat after everything
/// committed must not wait for the next commit (the next NoOpRecord, up to 500 ms later).
/// Found by the controller benchmark (#17): every heartbeat reply took about 250 ms.
#[test]
fn a_reply_with_nothing_pending_is_released_at_once() {
    let mut ctx = Ctx::active(27);
    let epoch = ctx.register_unfenced(1, None);
    let offset = ctx.log.end();
    let hb = kafka_protocol::messages::BrokerHeartbeatRequest::default()
        .with_broker_id(kafka_protocol::messages::BrokerId(1))
        .with_broker_epoch(epoch)
        .with_current_metadata_offset(offset);
    let id = ctx.send(RequestBody::BrokerHeartbeat(hb), 1);
    let Some(ResponseBody::BrokerHeartbeat(r)) = ctx.answer(id) else {
        panic!("a heartbeat with nothing pending is answered without a commit")
    };
    assert_eq!((r.error_code, r.is_fenced), (0, false));
}

/// Broker 1 registered, a snapshot at the log's end then (made of the log's own batches,
/// which replay to the same image), broker 2 registered after it: (the snapshot's offset, the
/// log's end).
fn snapshot_between_two_registrations(ctx: &mut Ctx) -> (i64, i64) {
    ctx.register_unfenced(1, None);
    let at = ctx.log.end();
    let bytes = ctx.log.read(0, usize::MAX).unwrap();
    let id = OffsetAndEpoch {
        offset: at,
        epoch: ctx.epoch,
    };
    ctx.log.log.add_snapshot(id, bytes);
    ctx.register_unfenced(2, None);
    (at, ctx.log.end())
}

/// KafkaRaftClientSnapshotTest.testLeaderListenerNotified with the entire log kept: a new
/// listener starts from the latest snapshot even when the log still holds every batch before
/// it (a controller restarted with metadata.max.retention.bytes=-1), as
/// KafkaRaftClient.updateListenersProgress hands it; the tail after the snapshot is replayed
/// from the log. Found while building the controller benchmark's cold start (#17).
#[test]
fn a_new_listener_loads_the_latest_snapshot_even_with_the_entire_log() {
    let mut ctx = Ctx::active(27);
    let (at, end) = snapshot_between_two_registrations(&mut ctx);
    assert_eq!(ctx.log.log_start_offset(), 0, "the whole log is kept");

    let mut restarted = QuorumController::new(ControllerConfig::new(1, CLUSTER_ID), bootstrap(27));
    // No high watermark known yet: nothing to hand over.
    let none = restarted.replay_committed(&ctx.log, 0).unwrap();
    assert!(!none.loaded_snapshot && none.log_bytes == 0);
    assert_eq!(restarted.snapshot_loads(), 0);
    let done = restarted.replay_committed(&ctx.log, end).unwrap();
    assert!(
        done.loaded_snapshot,
        "a new listener starts from the latest snapshot"
    );
    assert_eq!(restarted.snapshot_loads(), 1, "HandleLoadSnapshotCount");
    let tail = ctx.log.read(at, usize::MAX).unwrap().len() as u64;
    assert_eq!(
        done.log_bytes, tail,
        "only the batches after the snapshot are replayed"
    );
    let image = restarted.committed_image();
    assert_eq!(image.next_offset, end);
    assert_eq!(image.brokers, ctx.image().brokers);
    assert_eq!(image.features, ctx.image().features);
}

/// A snapshot larger than one call's replay budget is loaded alone: the log after it (and
/// so an activation) waits for the next call, made with the time then (a 10M-partition
/// snapshot took 19 s to load, and a controller that activated in the same round started
/// every broker's session 19 s in the past, #41).
#[test]
fn a_snapshot_over_the_replay_budget_leaves_the_log_to_the_next_call() {
    let mut ctx = Ctx::active(27);
    let (at, end) = snapshot_between_two_registrations(&mut ctx);

    let mut restarted = QuorumController::new(ControllerConfig::new(1, CLUSTER_ID), bootstrap(27));
    restarted.set_replay_budget_bytes(1);
    let first = restarted.replay_committed(&ctx.log, end).unwrap();
    assert!(first.loaded_snapshot && first.more);
    assert_eq!(
        first.log_bytes, 0,
        "nothing of the log in the snapshot's call"
    );
    assert_eq!(restarted.committed_image().next_offset, at);
    let mut calls = 1;
    while restarted.committed_image().next_offset < end {
        let next = restarted.replay_committed(&ctx.log, end).unwrap();
        assert!(!next.loaded_snapshot);
        calls += 1;
        assert!(calls < 100, "the log never caught up");
    }
    assert_eq!(restarted.committed_image().brokers, ctx.image().brokers);
    let last = restarted.replay_committed(&ctx.log, end).unwrap();
    assert!(!last.more && !last.changed, "caught up: nothing more");
}

#[test]
fn test_renounce_fails_waiting_replies_and_resets_to_the_committed_image() {
    let mut ctx = Ctx::active(27);
    let id = ctx.send(RequestBody::BrokerRegistration(registration(1, None)), 4);
    ctx.lose_leadership(2);
    let Some(ResponseBody::BrokerRegistration(r)) = ctx.answer(id) else {
        panic!("answered at resignation")
    };
    assert_eq!(r.error_code, errors::NOT_CONTROLLER);
    assert!(!ctx.c.is_active());
    assert!(ctx.c.speculative_image().is_none());
    // A standby refuses writes, naming the leader.
    let id = ctx.send(RequestBody::BrokerRegistration(registration(1, None)), 4);
    let Some(ResponseBody::BrokerRegistration(r)) = ctx.answer(id) else {
        panic!()
    };
    assert_eq!(r.error_code, errors::NOT_CONTROLLER);
}

#[test]
fn a_new_leader_gives_every_unfenced_broker_a_fresh_session() {
    let mut ctx = Ctx::active(27);
    ctx.register_unfenced(1, None);
    ctx.advance(8_000);
    ctx.lose_leadership(2);
    // Leadership comes back 8 s later: the broker last heartbeated 8 s ago, yet keeps its
    // session for a whole timeout from the activation (KAFKA-18138).
    ctx.now_ms += 1_000;
    ctx.become_leader(3);
    ctx.advance(8_000);
    assert!(!ctx.image().brokers[&1].fenced);
    ctx.advance(1_001);
    assert!(
        ctx.image().brokers[&1].fenced,
        "fenced once its new session expired"
    );
}

#[test]
fn activation_writes_the_bootstrap_records_once() {
    let ctx = Ctx::active(27);
    assert_eq!(ctx.image().metadata_version(), Some(27));
    let end = ctx.log.end();
    let mut ctx = ctx;
    ctx.lose_leadership(2);
    ctx.become_leader(3);
    assert_eq!(ctx.log.end(), end + 1, "only the new LeaderChange batch");
}

/// The active controller holds a topic once after its records commit: created topics (built
/// in both images from the same records) and changed ones (copied on their change) are
/// shared with the committed image again, and a change copies only the partitions it changes.
#[test]
fn written_topics_are_shared_with_the_committed_image_once_committed() {
    use std::sync::Arc;
    let mut ctx = Ctx::active(27);
    let e: Vec<i64> = (0..3).map(|id| ctx.register_unfenced(id, None)).collect();
    let create = kafka_protocol::messages::CreateTopicsRequest::default().with_topics(vec![
        super::context::topic("a", 6, 2),
        super::context::topic("b", 3, 2),
    ]);
    ctx.send(RequestBody::CreateTopics(create), 7);
    let speculative = |ctx: &Ctx| ctx.c.speculative_image().unwrap().clone();
    assert!(speculative(&ctx).topic_by_name("a").is_some());
    assert!(
        ctx.image().topic_by_name("a").is_none(),
        "not committed yet"
    );
    ctx.commit();
    let shared = |ctx: &Ctx| {
        let s = speculative(ctx);
        let c = ctx.image();
        assert_eq!(s.topics.len(), c.topics.len());
        s.topics
            .iter()
            .filter(|(id, t)| Arc::ptr_eq(t, &c.topics[*id]))
            .count()
    };
    assert_eq!(shared(&ctx), 2, "both created topics held once");
    // Broker 0's controlled shutdown moves its leaderships and ISR places: written, not
    // committed, the changed topics are copies in which only the changed partitions differ.
    let end = ctx.log.end();
    let hb = kafka_protocol::messages::BrokerHeartbeatRequest::default()
        .with_broker_id(kafka_protocol::messages::BrokerId(0))
        .with_broker_epoch(e[0])
        .with_current_metadata_offset(end)
        .with_want_shut_down(true);
    ctx.send(RequestBody::BrokerHeartbeat(hb), 1);
    let s = speculative(&ctx);
    let (mut changed, mut unchanged) = (0, 0);
    for (id, t) in &s.topics {
        for (p, reg) in &t.partitions {
            let committed = &ctx.image().topics[id].partitions[p];
            if **reg == **committed {
                assert!(
                    Arc::ptr_eq(reg, committed),
                    "{}-{p} equal but copied",
                    t.name
                );
                unchanged += 1;
            } else {
                assert!(!committed.isr().is_empty() && committed.isr().contains(&0));
                changed += 1;
            }
        }
    }
    assert!(
        changed > 0 && unchanged > 0,
        "{changed} changed, {unchanged} unchanged"
    );
    assert!(
        shared(&ctx) < 2,
        "a changed topic is a copy until committed"
    );
    ctx.commit();
    assert_eq!(shared(&ctx), 2, "shared again once committed");
    for t in ctx.image().topics.values() {
        assert!(t.partitions.values().all(|p| !p.isr().contains(&0)));
    }
}

/// A snapshot is loaded a part at a time (a part smaller than the batch it starts is read
/// again, larger) into the image that loading the whole file gives, so a cold start holds
/// one part of a 1.3 GiB snapshot, not all of it (#41).
#[test]
fn a_snapshot_loaded_in_parts_is_the_one_loaded_whole() {
    use crate::controller::replay::load_snapshot;
    let mut ctx = Ctx::active(27);
    let (at, _) = snapshot_between_two_registrations(&mut ctx);
    let id = OffsetAndEpoch {
        offset: at,
        epoch: ctx.epoch,
    };
    let bytes = ctx.log.read_snapshot(id, 0, usize::MAX).unwrap().bytes;
    let mut whole = crate::metadata::image::MetadataImage::new();
    whole.load_snapshot(&bytes, at, "snapshot");
    assert!(whole.brokers.contains_key(&1));
    for read_bytes in [0, 1, 100, 1000, bytes.len() - 1, bytes.len(), 16 << 20] {
        let (image, size_bytes) = load_snapshot(&ctx.log, id, read_bytes).unwrap().unwrap();
        assert_eq!(image, whole, "parts of {read_bytes} bytes");
        assert_eq!(size_bytes, bytes.len() as u64);
    }
}

/// A snapshot that can be opened but not read to its end fails the load (a committed read
/// that failed is fatal), rather than leaving half an image; one that cannot be opened loads
/// nothing.
#[test]
fn a_snapshot_unreadable_part_way_is_an_error() {
    use crate::controller::replay::load_snapshot;
    use crate::raft::{LogReadError, SnapshotChunk};
    /// The snapshot's first `readable` bytes can be read, nothing after them.
    struct CutShort<'a> {
        log: &'a dyn LogReader,
        readable: i64,
    }
    impl LogReader for CutShort<'_> {
        fn log_start_offset(&self) -> i64 {
            self.log.log_start_offset()
        }
        fn end_offset(&self) -> OffsetAndEpoch {
            self.log.end_offset()
        }
        fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch {
            self.log.end_offset_for_epoch(epoch)
        }
        fn read(&self, offset: i64, max_bytes: usize) -> Result<bytes::Bytes, LogReadError> {
            self.log.read(offset, max_bytes)
        }
        fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
            self.log.latest_snapshot_id()
        }
        fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
            self.log.earliest_snapshot_id()
        }
        fn read_snapshot(
            &self,
            id: OffsetAndEpoch,
            position: i64,
            max_bytes: usize,
        ) -> Option<SnapshotChunk> {
            // A read reaching past them fails, as a read of a bad disk block would.
            if position.saturating_add(max_bytes as i64) > self.readable {
                return None;
            }
            self.log.read_snapshot(id, position, max_bytes)
        }
    }
    let mut ctx = Ctx::active(27);
    let (at, _) = snapshot_between_two_registrations(&mut ctx);
    let id = OffsetAndEpoch {
        offset: at,
        epoch: ctx.epoch,
    };
    let size = ctx.log.read_snapshot(id, 0, 0).unwrap().size;
    let half = CutShort {
        log: &ctx.log,
        readable: size / 2,
    };
    let e = load_snapshot(&half, id, 64).unwrap_err();
    assert_eq!(e.offset, at);
    assert!(e.reason.contains("could not be read at position"), "{e}");
    let none = CutShort {
        log: &ctx.log,
        readable: 0,
    };
    assert!(load_snapshot(&none, id, 64).unwrap().is_none());
}
