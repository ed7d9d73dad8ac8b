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
    /// The kraft.version an UpdateFeatures set (as Kafka's LocalLogManager keeps it).
    kraft_version: i16,
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
        self.kraft_version
    }
    fn upgrade_kraft_version(
        &mut self,
        _epoch: i32,
        version: i16,
        validate_only: bool,
    ) -> Result<(), UpgradeKRaftVersionError> {
        // Kafka's LocalLogManager.upgradeKRaftVersion: takes any level, keeps it unless
        // validate-only.
        if !validate_only {
            self.kraft_version = version;
        }
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
    /// Controllers started so far (a restarted one draws other topic ids).
    starts: u64,
}

impl Ferro {
    /// Node 0 leading epoch 1 of a fresh log, activated; the activation records.
    pub fn new(cluster_id: &str) -> (Ferro, Vec<Bytes>) {
        let mut f = Ferro {
            c: Self::controller(cluster_id, 7),
            log: Log::default(),
            now_ms: 1_000,
            next_id: 1,
            starts: 1,
        };
        f.new_epoch(1, true);
        f.c.handle_leader_change(1, Some(0), Some(0));
        f.commit();
        f.c.poll(f.now_ms, &mut f.log);
        f.commit();
        assert!(f.c.is_active(), "ferrokraft's controller activated");
        let records = f.log.take();
        (f, records)
    }

    /// A standby controller as the Java side configures its own.
    fn controller(cluster_id: &str, seed: u64) -> QuorumController {
        let mut cfg = ControllerConfig::new(0, cluster_id);
        cfg.quorum_node_ids = vec![0];
        cfg.rng_seed = seed;
        // The Java side runs without the periodic preferred-leader election (Kafka's
        // builder default when no interval is given).
        cfg.auto_leader_rebalance_enable = false;
        // The StandardAuthorizer, so that the ACL APIs reach the controller (the Java side
        // calls its QuorumController's ACL methods as the authorizer's AclMutator does);
        // the requests' principal is a super user there, as every check passes on the Java
        // side, which calls the controller without ControllerApis' authorization.
        cfg.authorizer = Some(
            ferrokraft::metadata::authorizer::AuthorizerConfig::parse(Some("User:ANONYMOUS"), None)
                .expect("a super user"),
        );
        // Delegation tokens as the Java side configures them (compare.rs token_config).
        cfg.delegation_tokens = Some(crate::compare::token_config());
        let bootstrap = vec![Bytes::from(feature_level_record(
            "metadata.version",
            METADATA_VERSION,
        ))];
        QuorumController::new(cfg, bootstrap)
    }

    /// A LeaderChange control batch opening `epoch` (led by this node or by none).
    fn new_epoch(&mut self, epoch: i32, leader: bool) {
        self.log.epoch = epoch;
        self.log.leader = leader;
        let lc = ControlRecord::LeaderChange(Default::default());
        let batch =
            build_control_batch(self.log.end, epoch, 0, &[lc]).expect("a LeaderChange batch");
        self.log.push(batch, 1);
    }

    /// The active controller loses leadership as Kafka's LocalLogManager makes it: the
    /// leader resigns (epoch + 1, no leader) and the only node is elected again (epoch + 2).
    /// `restart`: a new controller replays the log and takes over (the old one is dropped);
    /// else the same controller renounces and reclaims. The records written on activation.
    pub fn failover(&mut self, restart: bool) -> Vec<Bytes> {
        let epoch = self.log.epoch;
        self.new_epoch(epoch + 1, false);
        if restart {
            self.starts += 1;
            let cluster_id = self.c.config().cluster_id.clone();
            self.c = Self::controller(&cluster_id, 7 * self.starts);
            self.c.set_kraft_version(self.log.kraft_version);
        } else {
            self.c.handle_leader_change(epoch + 1, None, None);
        }
        self.commit();
        let start = self.log.end;
        self.new_epoch(epoch + 2, true);
        self.c.handle_leader_change(epoch + 2, Some(0), Some(start));
        self.commit();
        self.c.poll(self.now_ms, &mut self.log);
        self.commit();
        assert!(
            self.c.is_active(),
            "ferrokraft's controller activated again"
        );
        self.log.take()
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
                // Over SASL_PLAINTEXT: ControllerApis refuses token requests over PLAINTEXT
                // before the controller, and the Java side calls the controller directly.
                sender: Some(Sender {
                    security_protocol:
                        ferrokraft::common::security_protocol::SecurityProtocol::SaslPlaintext,
                    ..Sender::anonymous_local()
                }),
                forwarded_by: None,
                body,
            },
        );
        let mut answers = self.commit();
        // The driver tells the controller the Raft layer's kraft.version (an UpdateFeatures
        // may have upgraded it, even one that was refused after).
        self.c.set_kraft_version(self.log.kraft_version);
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
