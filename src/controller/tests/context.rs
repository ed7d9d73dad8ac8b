//! A controller in a known state (Kafka's `QuorumControllerTestEnv` / the manager tests'
//! builders): an in-memory log, an appender, commits on demand, requests and their answers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use kafka_protocol::messages::broker_registration_request::{Feature, Listener};
use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_protocol::messages::{
    BrokerHeartbeatRequest, BrokerHeartbeatResponse, BrokerId, BrokerRegistrationRequest,
    BrokerRegistrationResponse, CreateTopicsRequest, CreateTopicsResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use crate::codec::{RequestBody, ResponseBody};
use crate::controller::{
    ControllerConfig, ControllerOutput, KRaftVersionAccessor, MetadataAppender, QuorumController,
};
use crate::metadata::image::{MetadataImage, PartitionRegistration};
use crate::raft::tests::mem_log::MemLog;
use crate::raft::{InboundRequest, LogReader, ProposeError, UpgradeKRaftVersionError};
use crate::records::batch::{build_control_batch, build_data_batch};
use crate::records::control::ControlRecord;
use crate::records::feature_level::feature_level_record;

pub const CLUSTER_ID: &str = "q1Sh-9_ISia_zwGINzRvyQ";

/// The log: the Raft tests' in-memory log (the conformance-tested `log::MemLog` with
/// Kafka's metadata-log reads), and the epoch this node leads, if any.
#[derive(Debug, Default)]
pub struct TestLog {
    pub log: MemLog,
    /// Whether this node leads (appends are refused otherwise).
    pub leader_epoch: Option<i32>,
    /// The Raft layer's kraft.version.
    pub kraft_version: i16,
    /// What the Raft layer answers the next kraft.version upgrade (`None`: it upgrades).
    pub kraft_upgrade_refusal: Option<UpgradeKRaftVersionError>,
    /// Each upgrade handed to the Raft layer: (epoch, level, validate_only).
    pub kraft_upgrades: Vec<(i32, i16, bool)>,
    /// Epochs the controller resigned.
    pub resigned: Vec<i32>,
}

impl TestLog {
    pub fn end(&self) -> i64 {
        self.log.end_offset().offset
    }

    /// The metadata records at offsets `from` and later, in log order (the log replayed
    /// into a fresh image, which also checks it replays).
    pub fn records_from(&self, from: i64) -> Vec<crate::metadata::record::MetadataRecord> {
        let mut image = MetadataImage::new();
        let mut out = Vec::new();
        let bytes = self.read(0, usize::MAX).unwrap();
        image.replay_batches_observed(&bytes, i64::MAX, "test log", &mut |_, offset, record| {
            if offset >= from {
                out.push(record.clone());
            }
        });
        out
    }

    /// This node leads `epoch` from now on: its LeaderChange batch; the epoch's first offset.
    pub fn push_leader_change(&mut self, epoch: i32) -> i64 {
        let start = self.end();
        let lc = ControlRecord::LeaderChange(Default::default());
        let batch = build_control_batch(start, epoch, 0, &[lc]).unwrap();
        self.log.append(&Bytes::from(batch));
        self.leader_epoch = Some(epoch);
        start
    }
}

crate::raft::tests::mem_log::delegate_log_reader!(TestLog, log);

impl MetadataAppender for TestLog {
    fn next_write_offset(&self) -> Option<i64> {
        self.leader_epoch.map(|_| self.end())
    }
    fn append(&mut self, epoch: i32, records: Vec<Bytes>) -> Result<i64, ProposeError> {
        match self.leader_epoch {
            Some(e) if e == epoch => {}
            current => {
                return Err(ProposeError::NotLeader {
                    epoch,
                    current_epoch: current.unwrap_or(-1),
                })
            }
        }
        let base = self.end();
        let values: Vec<&[u8]> = records.iter().map(|r| r.as_ref()).collect();
        let batch = build_data_batch(base, epoch, 0, &values).unwrap();
        self.log.append(&Bytes::from(batch));
        Ok(base + records.len() as i64 - 1)
    }

    fn resign(&mut self, epoch: i32) {
        self.resigned.push(epoch);
        if self.leader_epoch == Some(epoch) {
            self.leader_epoch = None;
        }
    }
}

/// A Raft layer that upgrades by appending KRaftVersionRecord (+ an empty VotersRecord), as
/// the core does, unless told to refuse.
impl KRaftVersionAccessor for TestLog {
    fn kraft_version(&self) -> i16 {
        self.kraft_version
    }

    fn upgrade_kraft_version(
        &mut self,
        epoch: i32,
        version: i16,
        validate_only: bool,
    ) -> Result<(), UpgradeKRaftVersionError> {
        self.kraft_upgrades.push((epoch, version, validate_only));
        if let Some(e) = self.kraft_upgrade_refusal.take() {
            return Err(e);
        }
        if validate_only || version == self.kraft_version {
            return Ok(());
        }
        let records = [
            ControlRecord::kraft_version(version),
            ControlRecord::Voters(Default::default()),
        ];
        let batch = build_control_batch(self.end(), epoch, 0, &records).unwrap();
        self.log.append(&Bytes::from(batch));
        self.kraft_version = version;
        Ok(())
    }
}

/// An active controller on an in-memory log.
pub struct Ctx {
    pub c: QuorumController,
    pub log: TestLog,
    pub now_ms: u64,
    pub epoch: i32,
    next_request_id: u64,
    pub answers: Vec<(u64, ResponseBody)>,
    /// Requests are sent as if a broker forwarded them in an Envelope.
    pub forwarded: bool,
    /// Who sends the requests (the forwarded client's principal when `forwarded_by` is set).
    pub sender: crate::raft::Sender,
    /// The broker forwarding them, as the Envelope's sender.
    pub forwarded_by: Option<crate::raft::Sender>,
    /// The log levels the controller asked the driver to apply, in order.
    pub log_levels: Vec<crate::logging::LogLevels>,
}

pub fn bootstrap(mv: i16) -> Vec<Bytes> {
    vec![Bytes::from(feature_level_record("metadata.version", mv))]
}

/// Bootstrap records at metadata.version `mv` with eligible leader replicas on (KIP-966).
pub fn elr_bootstrap(mv: i16) -> Vec<Bytes> {
    vec![
        Bytes::from(feature_level_record("metadata.version", mv)),
        Bytes::from(feature_level_record("eligible.leader.replicas.version", 1)),
    ]
}

impl Ctx {
    /// Node 1, leader of epoch 1 on an empty log bootstrapped at metadata.version `mv`,
    /// activated and committed.
    pub fn active(mv: i16) -> Ctx {
        let mut cfg = ControllerConfig::new(1, CLUSTER_ID);
        cfg.rng_seed = 42;
        Self::with_config(cfg, mv)
    }

    pub fn with_config(cfg: ControllerConfig, mv: i16) -> Ctx {
        Self::with_bootstrap(cfg, bootstrap(mv))
    }

    /// As [`Ctx::with_config`], bootstrapped with `records` (feature levels).
    pub fn with_bootstrap(cfg: ControllerConfig, records: Vec<Bytes>) -> Ctx {
        let mut ctx = Ctx {
            c: QuorumController::new(cfg, records),
            log: TestLog::default(),
            now_ms: 1_000,
            epoch: 0,
            next_request_id: 1,
            answers: Vec::new(),
            forwarded: false,
            sender: crate::raft::Sender::anonymous_local(),
            forwarded_by: None,
            log_levels: Vec::new(),
        };
        ctx.become_leader(1);
        ctx
    }

    /// Leads `epoch`: its LeaderChange batch, committed, then activation, committed.
    pub fn become_leader(&mut self, epoch: i32) {
        self.epoch = epoch;
        let start = self.log.push_leader_change(epoch);
        self.c.handle_leader_change(epoch, Some(1), Some(start));
        self.commit();
        self.c.poll(self.now_ms, &mut self.log);
        assert!(self.c.is_active(), "activated");
        self.commit();
    }

    /// Another node leads `epoch` now.
    pub fn lose_leadership(&mut self, epoch: i32) {
        self.log.leader_epoch = None;
        self.c.handle_leader_change(epoch, Some(2), None);
        self.drain();
    }

    /// Everything written so far commits.
    pub fn commit(&mut self) {
        let hw = self.log.end();
        self.c.replay_committed(&self.log, hw).unwrap();
        self.drain();
    }

    /// Time passes by `ms`, the controller polled at every deadline it names on the way (as
    /// the driver polls it); whatever it writes then commits.
    pub fn advance(&mut self, ms: u64) {
        let target = self.now_ms + ms;
        while let Some(due) = self
            .c
            .poll_timeout()
            .filter(|due| *due > self.now_ms && *due < target)
        {
            self.now_ms = due;
            self.c.poll(self.now_ms, &mut self.log);
            self.commit();
        }
        self.now_ms = target;
        self.c.poll(self.now_ms, &mut self.log);
        self.commit();
    }

    fn drain(&mut self) {
        while let Some(output) = self.c.poll_output() {
            match output {
                ControllerOutput::Respond { request_id, body } => {
                    self.answers.push((request_id, body))
                }
                ControllerOutput::SetLogLevels { levels, .. } => self.log_levels.push(levels),
            }
        }
    }

    /// Sends `body` at `version`; its request id.
    pub fn send(&mut self, body: RequestBody, version: i16) -> u64 {
        let request_id = self.next_request_id;
        self.next_request_id += 1;
        self.c.handle_request(
            self.now_ms,
            &mut self.log,
            InboundRequest {
                request_id,
                api_version: version,
                listener_name: "CONTROLLER".into(),
                forwarded: self.forwarded,
                sender: Some(self.sender.clone()),
                forwarded_by: self.forwarded_by.clone(),
                body,
            },
        );
        self.drain();
        request_id
    }

    /// The answer to `request_id`, if given.
    pub fn answer(&mut self, request_id: u64) -> Option<ResponseBody> {
        let i = self.answers.iter().position(|(id, _)| *id == request_id)?;
        Some(self.answers.remove(i).1)
    }

    /// Sends, commits, and returns the answer.
    pub fn call(&mut self, body: RequestBody, version: i16) -> ResponseBody {
        let id = self.send(body, version);
        self.commit();
        self.answer(id).expect("answered after commit")
    }

    pub fn image(&self) -> &MetadataImage {
        self.c.committed_image()
    }

    pub fn partition(&self, topic: &str, partition: i32) -> PartitionRegistration {
        (*self.image().topic_by_name(topic).unwrap().partitions[&partition]).clone()
    }

    pub fn register(&mut self, req: BrokerRegistrationRequest) -> BrokerRegistrationResponse {
        match self.call(RequestBody::BrokerRegistration(req), 4) {
            ResponseBody::BrokerRegistration(r) => r,
            other => panic!("{other:?}"),
        }
    }

    /// Registers broker `id` (rack `rack`) and heartbeats it unfenced; its epoch.
    pub fn register_unfenced(&mut self, id: i32, rack: Option<&str>) -> i64 {
        let resp = self.register(registration(id, rack));
        assert_eq!(resp.error_code, 0, "registered {id}");
        let epoch = resp.broker_epoch;
        let offset = self.log.end();
        let hb = self.heartbeat(id, epoch, offset, false, false);
        assert!(!hb.is_fenced, "broker {id} unfenced");
        epoch
    }

    pub fn heartbeat(
        &mut self,
        id: i32,
        epoch: i64,
        offset: i64,
        want_fence: bool,
        want_shut_down: bool,
    ) -> BrokerHeartbeatResponse {
        let req = BrokerHeartbeatRequest::default()
            .with_broker_id(BrokerId(id))
            .with_broker_epoch(epoch)
            .with_current_metadata_offset(offset)
            .with_want_fence(want_fence)
            .with_want_shut_down(want_shut_down);
        match self.call(RequestBody::BrokerHeartbeat(req), 1) {
            ResponseBody::BrokerHeartbeat(r) => r,
            other => panic!("{other:?}"),
        }
    }

    pub fn create_topic(&mut self, name: &str, partitions: i32, rf: i16) -> CreateTopicsResponse {
        self.create_topics(vec![topic(name, partitions, rf)], false)
    }

    pub fn create_topics(
        &mut self,
        topics: Vec<CreatableTopic>,
        validate_only: bool,
    ) -> CreateTopicsResponse {
        let req = CreateTopicsRequest::default()
            .with_topics(topics)
            .with_validate_only(validate_only);
        match self.call(RequestBody::CreateTopics(req), 7) {
            ResponseBody::CreateTopics(r) => r,
            other => panic!("{other:?}"),
        }
    }
}

/// A BrokerRegistration as a Kafka 4.1 broker sends it.
pub fn registration(id: i32, rack: Option<&str>) -> BrokerRegistrationRequest {
    BrokerRegistrationRequest::default()
        .with_broker_id(BrokerId(id))
        .with_cluster_id(StrBytes::from_static_str(CLUSTER_ID))
        .with_incarnation_id(Uuid::from_u128(1000 + id as u128))
        .with_listeners(vec![Listener::default()
            .with_name(StrBytes::from_static_str("PLAINTEXT"))
            .with_host(StrBytes::from_static_str("localhost"))
            .with_port(9092 + id as u16)
            .with_security_protocol(0)])
        .with_features(vec![
            Feature::default()
                .with_name(StrBytes::from_static_str("metadata.version"))
                .with_min_supported_version(7)
                .with_max_supported_version(27),
            Feature::default()
                .with_name(StrBytes::from_static_str(
                    "eligible.leader.replicas.version",
                ))
                .with_min_supported_version(0)
                .with_max_supported_version(1),
        ])
        .with_rack(rack.map(|r| StrBytes::from_string(r.to_string())))
        .with_log_dirs(vec![Uuid::from_u128((u128::from(id as u32 + 1) << 64) | 7)])
        .with_previous_broker_epoch(-1)
}

pub fn topic(name: &str, partitions: i32, rf: i16) -> CreatableTopic {
    CreatableTopic::default()
        .with_name(TopicName(StrBytes::from_string(name.to_string())))
        .with_num_partitions(partitions)
        .with_replication_factor(rf)
}

pub fn topic_config(name: &str, value: Option<&str>) -> CreatableTopicConfig {
    CreatableTopicConfig::default()
        .with_name(StrBytes::from_string(name.to_string()))
        .with_value(value.map(|v| StrBytes::from_string(v.to_string())))
}
