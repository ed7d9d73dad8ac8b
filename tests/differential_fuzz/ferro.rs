//! ferrokraft's side: the sans-IO `QuorumController` on an in-memory log that commits every
//! append at once (as the Java side's single-node LocalLogManager does).
//!
//! ```text
//!   Step ─▶ request (this side's broker epochs) ─▶ QuorumController::handle_request
//!        ─▶ appender keeps each record value ─▶ replay_committed(log end) ─▶ the answer
//!   Time ─▶ poll(now) (session expiry fencing) ─▶ replay_committed ─▶ records
//! ```

use bytes::Bytes;
use ferrokraft::codec::{RequestBody, ResponseBody};
use ferrokraft::common::offset_epoch::OffsetAndEpoch;
use ferrokraft::controller::{
    ControllerConfig, ControllerOutput, KRaftVersionAccessor, MetadataAppender, QuorumController,
};
use ferrokraft::raft::{
    InboundRequest, LogReadError, LogReader, ProposeError, Sender, SnapshotChunk,
    UpgradeKRaftVersionError,
};
use ferrokraft::records::batch::{build_control_batch, build_data_batch};
use ferrokraft::records::control::ControlRecord;
use ferrokraft::records::feature_level::feature_level_record;

/// metadata.version 4.1-IV1, the level the Java side bootstraps with.
pub const METADATA_VERSION: i16 = 27;

/// One batch: its first and last offset and its bytes.
struct Batch {
    last: i64,
    bytes: Bytes,
}

/// The log: batches in order, every one committed as soon as it is appended.
#[derive(Default)]
pub struct Log {
    batches: Vec<Batch>,
    end: i64,
    epoch: i32,
    leader: bool,
    /// Record values appended since the last [`Log::take`], in order.
    fresh: Vec<Bytes>,
}

impl Log {
    fn push(&mut self, bytes: Vec<u8>, count: i64) {
        self.end += count;
        self.batches.push(Batch {
            last: self.end - 1,
            bytes: Bytes::from(bytes),
        });
    }

    pub fn take(&mut self) -> Vec<Bytes> {
        std::mem::take(&mut self.fresh)
    }
}

impl LogReader for Log {
    fn log_start_offset(&self) -> i64 {
        0
    }
    fn end_offset(&self) -> OffsetAndEpoch {
        OffsetAndEpoch {
            offset: self.end,
            epoch: self.epoch,
        }
    }
    fn end_offset_for_epoch(&self, _epoch: i32) -> OffsetAndEpoch {
        self.end_offset()
    }
    fn read(&self, offset: i64, _max_bytes: usize) -> Result<Bytes, LogReadError> {
        let mut out = Vec::new();
        for b in self.batches.iter().filter(|b| b.last >= offset) {
            out.extend_from_slice(&b.bytes);
        }
        Ok(Bytes::from(out))
    }
    fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        None
    }
    fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        None
    }
    fn read_snapshot(&self, _: OffsetAndEpoch, _: i64, _: usize) -> Option<SnapshotChunk> {
        None
    }
}

impl KRaftVersionAccessor for Log {
    fn kraft_version(&self) -> i16 {
        0
    }
    fn upgrade_kraft_version(
        &mut self,
        _epoch: i32,
        _version: i16,
        _validate_only: bool,
    ) -> Result<(), UpgradeKRaftVersionError> {
        Ok(())
    }
}

impl MetadataAppender for Log {
    fn next_write_offset(&self) -> Option<i64> {
        self.leader.then_some(self.end)
    }
    fn append(&mut self, epoch: i32, records: Vec<Bytes>) -> Result<i64, ProposeError> {
        if !self.leader || epoch != self.epoch {
            return Err(ProposeError::NotLeader {
                epoch,
                current_epoch: self.epoch,
            });
        }
        let values: Vec<&[u8]> = records.iter().map(|r| r.as_ref()).collect();
        let batch = build_data_batch(self.end, epoch, 0, &values).expect("a batch of records");
        self.push(batch, records.len() as i64);
        self.fresh.extend(records);
        Ok(self.end - 1)
    }
    fn resign(&mut self, _epoch: i32) {
        self.leader = false;
    }
}

/// The controller, its log and its clock.
pub struct Ferro {
    pub c: QuorumController,
    pub log: Log,
    pub now_ms: u64,
    next_id: u64,
}

impl Ferro {
    /// Node 0 leading epoch 1 of a fresh log, activated; the activation records.
    pub fn new(cluster_id: &str) -> (Ferro, Vec<Bytes>) {
        let mut cfg = ControllerConfig::new(0, cluster_id);
        cfg.quorum_node_ids = vec![0];
        cfg.rng_seed = 7;
        // The Java side runs without the periodic preferred-leader election (Kafka's
        // builder default when no interval is given).
        cfg.auto_leader_rebalance_enable = false;
        let bootstrap = vec![Bytes::from(feature_level_record(
            "metadata.version",
            METADATA_VERSION,
        ))];
        let mut f = Ferro {
            c: QuorumController::new(cfg, bootstrap),
            log: Log::default(),
            now_ms: 1_000,
            next_id: 1,
        };
        f.log.epoch = 1;
        f.log.leader = true;
        let lc = ControlRecord::LeaderChange(Default::default());
        let batch = build_control_batch(0, 1, 0, &[lc]).expect("a LeaderChange batch");
        f.log.push(batch, 1);
        f.c.handle_leader_change(1, Some(0), Some(0));
        f.commit();
        f.c.poll(f.now_ms, &mut f.log);
        f.commit();
        assert!(f.c.is_active(), "ferrokraft's controller activated");
        let records = f.log.take();
        (f, records)
    }

    fn commit(&mut self) -> Vec<ResponseBody> {
        let end = self.log.end;
        self.c
            .replay_committed(&self.log, end)
            .expect("replay of the controller's own records");
        let mut answers = Vec::new();
        while let Some(out) = self.c.poll_output() {
            if let ControllerOutput::Respond { body, .. } = out {
                answers.push(body);
            }
        }
        answers
    }

    /// Handles one request; its answer and the records it wrote.
    pub fn request(&mut self, body: RequestBody, version: i16) -> (ResponseBody, Vec<Bytes>) {
        let request_id = self.next_id;
        self.next_id += 1;
        self.c.handle_request(
            self.now_ms,
            &mut self.log,
            InboundRequest {
                request_id,
                api_version: version,
                listener_name: "CONTROLLER".into(),
                forwarded: false,
                sender: Some(Sender::anonymous_local()),
                forwarded_by: None,
                body,
            },
        );
        let mut answers = self.commit();
        assert_eq!(answers.len(), 1, "one answer per request once committed");
        (answers.remove(0), self.log.take())
    }

    /// Time passes; the records the controller wrote meanwhile (fencing).
    pub fn advance(&mut self, ms: u64) -> Vec<Bytes> {
        self.now_ms += ms;
        self.c.poll(self.now_ms, &mut self.log);
        self.commit();
        self.log.take()
    }
}
