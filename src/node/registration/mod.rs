//! KIP-919 controller registration on both sides, and the metadata image it reads.
//!
//! ```text
//!   committed batches (HighWatermark output) ─▶ image.replay ─▶ metadata.version, registrations
//!   ControllerRegistration request ─▶ (leader) RegisterControllerRecord appended ─▶ answered on commit
//!   own registration: leader ─▶ appends its own record; follower ─▶ request to the leader
//! ```
//!
//! As in Kafka, a controller registers once metadata.version allows it (3.7-IV0+), and again
//! whenever the log does not hold a registration with this process's incarnation id. The
//! driver owns one [`Registrations`] and is the only caller.

use bytes::Bytes;
use kafka_protocol::messages::ControllerRegistrationRequest;

use crate::metadata::controller::{
    ControllerEndpoint, ControllerFeature, ControllerRegistration, SECURITY_PROTOCOLS,
};
use crate::metadata::image::MetadataImage;
use crate::metadata::record::MetadataRecord;
use crate::metadata::wire::TaggedFields;
use crate::raft::{errors, Destination, LogReader};

/// Correlation ids of our own registration requests (the core's ids stay far below).
pub const CORRELATION_BASE: u64 = 1 << 62;
/// Bytes read from the log per replay step.
const REPLAY_READ_BYTES: usize = 1 << 20;
/// Kafka's registration resend backoff: 100 ms doubling up to 120 s.
const RETRY_BACKOFF_MS: u64 = 100;
const RETRY_BACKOFF_MAX_MS: u64 = 120_000;
/// After an acknowledged registration, how long to wait for it to show up in the image
/// before asking again.
const ACKNOWLEDGED_RECHECK_MS: u64 = 5_000;

/// Who waits for a registration record to commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiter {
    /// A request from another controller (the driver's request id).
    Request(u64),
    /// This node's own registration, appended as leader.
    Own,
}

/// What to do about our own registration now.
#[derive(Debug)]
pub enum OwnAction {
    /// Nothing.
    None,
    /// Append this record value as leader.
    Append(Bytes),
    /// Send this request to the leader.
    Send {
        /// Correlation id (≥ [`CORRELATION_BASE`]).
        correlation_id: u64,
        /// The leader.
        destination: Destination,
        /// The request.
        request: ControllerRegistrationRequest,
    },
}

/// What [`Registrations::catch_up`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CatchUp {
    /// The image changed (a snapshot loaded or batches replayed).
    pub changed: bool,
    /// The latest snapshot was loaded first.
    pub loaded_snapshot: bool,
    /// Bytes of log batches replayed.
    pub log_bytes: u64,
}

/// The image plus both sides of controller registration.
#[derive(Debug)]
pub struct Registrations {
    /// What the committed log says.
    pub image: MetadataImage,
    own: ControllerRegistration,
    waiters: Vec<(i64, Waiter)>,
    own_in_flight: bool,
    own_correlation_id: Option<u64>,
    own_failures: u32,
    own_next_attempt_ms: u64,
    next_correlation_id: u64,
}

impl Registrations {
    /// Our registration: `endpoints` are the controller listeners as advertised.
    pub fn new(
        node_id: i32,
        incarnation_id: uuid::Uuid,
        endpoints: Vec<(String, String, u16)>,
        features: &[(&str, i16, i16)],
    ) -> Self {
        let own = ControllerRegistration {
            controller_id: node_id,
            incarnation_id,
            zk_migration_ready: false,
            end_points: endpoints
                .into_iter()
                .map(|(name, host, port)| ControllerEndpoint {
                    name,
                    host,
                    port,
                    security_protocol: 0,
                    unknown_tagged: TaggedFields::default(),
                })
                .collect(),
            features: features
                .iter()
                .map(|(name, min, max)| ControllerFeature {
                    name: (*name).to_string(),
                    min_supported_version: *min,
                    max_supported_version: *max,
                    unknown_tagged: TaggedFields::default(),
                })
                .collect(),
            unknown_tagged: TaggedFields::default(),
        };
        Self {
            image: MetadataImage::default(),
            own,
            waiters: Vec::new(),
            own_in_flight: false,
            own_correlation_id: None,
            own_failures: 0,
            own_next_attempt_ms: 0,
            next_correlation_id: CORRELATION_BASE,
        }
    }

    /// This process's incarnation id.
    pub fn incarnation_id(&self) -> uuid::Uuid {
        self.own.incarnation_id
    }

    /// Whether the committed log holds our registration with this incarnation.
    pub fn registered(&self) -> bool {
        self.image
            .controllers
            .get(&self.own.controller_id)
            .is_some_and(|r| r.incarnation_id == self.own.incarnation_id)
    }

    /// Replays what is committed below `high_watermark` (loading the latest snapshot first
    /// when the log no longer holds the next offset).
    pub fn catch_up(&mut self, log: &dyn LogReader, high_watermark: i64) -> CatchUp {
        let mut done = CatchUp::default();
        if let Some(id) = log.latest_snapshot_id() {
            if self.image.next_offset < log.log_start_offset() && id.offset > self.image.next_offset
            {
                done.loaded_snapshot = self.load_snapshot(log, id);
            }
        }
        while self.image.next_offset < high_watermark {
            let bytes = log.read(self.image.next_offset, REPLAY_READ_BYTES);
            let (replayed, replayed_bytes) =
                self.image
                    .replay_batches(&bytes, high_watermark, "metadata log");
            if replayed == 0 {
                break;
            }
            done.log_bytes += replayed_bytes;
        }
        done.changed = done.loaded_snapshot || done.log_bytes > 0;
        done
    }

    fn load_snapshot(
        &mut self,
        log: &dyn LogReader,
        id: crate::raft::types::OffsetAndEpoch,
    ) -> bool {
        let Some(chunk) = log.read_snapshot(id, 0, usize::MAX) else {
            return false;
        };
        let mut image = MetadataImage::default();
        image.load_snapshot(&chunk.bytes, id.offset, "snapshot");
        self.image = image;
        true
    }

    /// Waiters whose record is now below the high watermark.
    pub fn committed(&mut self, high_watermark: i64) -> Vec<Waiter> {
        let (done, waiting): (Vec<_>, Vec<_>) = self
            .waiters
            .drain(..)
            .partition(|(offset, _)| *offset < high_watermark);
        self.waiters = waiting;
        done.into_iter()
            .map(|(_, w)| {
                if w == Waiter::Own {
                    self.own_in_flight = false;
                    self.own_failures = 0;
                }
                w
            })
            .collect()
    }

    /// Leadership ended: every waiter fails (Kafka answers NOT_CONTROLLER).
    pub fn leadership_lost(&mut self, now_ms: u64) -> Vec<Waiter> {
        let lost: Vec<Waiter> = self.waiters.drain(..).map(|(_, w)| w).collect();
        if lost.contains(&Waiter::Own) {
            self.own_failed(now_ms);
        }
        lost
    }

    /// Checks a request as Kafka's active controller does (`ClusterControlManager
    /// .registerController`) and builds its record; `Err` is (error code, message).
    pub fn record_for_request(
        &self,
        is_leader: bool,
        leader_id: Option<i32>,
        req: &ControllerRegistrationRequest,
    ) -> Result<Bytes, (i16, String)> {
        if !is_leader {
            let msg = match leader_id {
                Some(id) => format!("The active controller appears to be node {id}."),
                None => "No controller appears to be active.".to_string(),
            };
            return Err((errors::NOT_CONTROLLER, msg));
        }
        if !self.image.controller_registration_supported() {
            return Err((
                errors::UNSUPPORTED_VERSION,
                "The current MetadataVersion is too old to support controller registrations."
                    .into(),
            ));
        }
        let mut endpoints: Vec<ControllerEndpoint> = Vec::new();
        for l in &req.listeners {
            if !SECURITY_PROTOCOLS
                .iter()
                .any(|(id, _)| *id == l.security_protocol)
            {
                return Err((
                    errors::UNKNOWN_SERVER_ERROR,
                    format!(
                        "Unknown security protocol {} in listener {}",
                        l.security_protocol, l.name
                    ),
                ));
            }
            let endpoint = ControllerEndpoint {
                name: l.name.to_string(),
                host: l.host.to_string(),
                port: l.port,
                security_protocol: l.security_protocol,
                unknown_tagged: TaggedFields::default(),
            };
            // Kafka keys listeners by name (a later duplicate replaces the earlier in place).
            match endpoints.iter_mut().find(|e| e.name == endpoint.name) {
                Some(e) => *e = endpoint,
                None => endpoints.push(endpoint),
            }
        }
        let registration = ControllerRegistration {
            controller_id: req.controller_id,
            incarnation_id: req.incarnation_id,
            zk_migration_ready: false,
            end_points: endpoints,
            features: req
                .features
                .iter()
                .map(|f| ControllerFeature {
                    name: f.name.to_string(),
                    min_supported_version: f.min_supported_version,
                    max_supported_version: f.max_supported_version,
                    unknown_tagged: TaggedFields::default(),
                })
                .collect(),
            unknown_tagged: TaggedFields::default(),
        };
        MetadataRecord::RegisterController(registration)
            .encode_at(0)
            .map(Bytes::from)
            .map_err(|e| (errors::UNKNOWN_SERVER_ERROR, e.to_string()))
    }

    /// A record was appended at `last_offset` for `waiter`.
    pub fn await_commit(&mut self, last_offset: i64, waiter: Waiter) {
        self.waiters.push((last_offset, waiter));
    }

    /// What to do about our own registration at `now_ms`.
    pub fn own_action(
        &mut self,
        now_ms: u64,
        is_leader: bool,
        leader: Option<Destination>,
    ) -> OwnAction {
        if self.own_in_flight
            || now_ms < self.own_next_attempt_ms
            || !self.image.controller_registration_supported()
            || self.registered()
        {
            return OwnAction::None;
        }
        if is_leader {
            let Some(value) = MetadataRecord::RegisterController(self.own.clone())
                .encode_at(0)
                .ok()
            else {
                return OwnAction::None;
            };
            self.own_in_flight = true;
            return OwnAction::Append(Bytes::from(value));
        }
        let Some(destination) = leader else {
            return OwnAction::None;
        };
        let correlation_id = self.next_correlation_id;
        self.next_correlation_id += 1;
        self.own_in_flight = true;
        self.own_correlation_id = Some(correlation_id);
        tracing::info!(
            "Registering controller {} (incarnation {}) with the active controller {}",
            self.own.controller_id,
            self.own.incarnation_id,
            destination.node_id
        );
        OwnAction::Send {
            correlation_id,
            destination,
            request: self.own_request(),
        }
    }

    fn own_request(&self) -> ControllerRegistrationRequest {
        use kafka_protocol::messages::controller_registration_request::{Feature, Listener};
        ControllerRegistrationRequest::default()
            .with_controller_id(self.own.controller_id)
            .with_incarnation_id(self.own.incarnation_id)
            .with_zk_migration_ready(false)
            .with_listeners(
                self.own
                    .end_points
                    .iter()
                    .map(|e| {
                        Listener::default()
                            .with_name(e.name.clone().into())
                            .with_host(e.host.clone().into())
                            .with_port(e.port)
                            .with_security_protocol(e.security_protocol)
                    })
                    .collect(),
            )
            .with_features(
                self.own
                    .features
                    .iter()
                    .map(|f| {
                        Feature::default()
                            .with_name(f.name.clone().into())
                            .with_min_supported_version(f.min_supported_version)
                            .with_max_supported_version(f.max_supported_version)
                    })
                    .collect(),
            )
    }

    /// Our own append as leader landed at `last_offset` (`None`: not leader after all).
    pub fn own_appended(&mut self, now_ms: u64, last_offset: Option<i64>) {
        match last_offset {
            Some(offset) => self.await_commit(offset, Waiter::Own),
            None => self.own_failed(now_ms),
        }
    }

    /// Whether `correlation_id` is our own registration request.
    pub fn is_own_correlation(&self, correlation_id: u64) -> bool {
        correlation_id >= CORRELATION_BASE
    }

    /// The active controller answered our request (`None`: no answer).
    pub fn own_response(&mut self, now_ms: u64, correlation_id: u64, error: Option<(i16, String)>) {
        if self.own_correlation_id != Some(correlation_id) {
            return;
        }
        self.own_correlation_id = None;
        self.own_in_flight = false;
        match error {
            None => {
                tracing::info!("The active controller acknowledged our registration");
                self.own_failures = 0;
                self.own_next_attempt_ms = now_ms + ACKNOWLEDGED_RECHECK_MS;
            }
            Some((code, message)) => {
                tracing::info!(
                    "Controller registration failed with error {code} ({message}); retrying"
                );
                self.own_failed(now_ms);
            }
        }
    }

    fn own_failed(&mut self, now_ms: u64) {
        self.own_in_flight = false;
        self.own_correlation_id = None;
        let backoff = RETRY_BACKOFF_MS
            .saturating_mul(1u64 << self.own_failures.min(20))
            .min(RETRY_BACKOFF_MAX_MS);
        self.own_failures = self.own_failures.saturating_add(1);
        self.own_next_attempt_ms = now_ms + backoff;
    }
}

#[cfg(test)]
mod tests;
