//! KIP-919 controller registration, the client side (Kafka's `ControllerRegistrationManager`):
//! this node registers itself with the active controller.
//!
//! ```text
//!   committed image without our incarnation ─▶ own_action:
//!       leader ─▶ Local(request): the driver hands it to its own controller layer
//!       follower ─▶ Send(request) to the leader (Kafka or ferrokraft)
//!   answer ─▶ own_response: done, or retried with Kafka's 100 ms → 120 s backoff
//! ```
//!
//! As in Kafka, a controller registers once metadata.version allows it (3.7-IV0+), and again
//! whenever the log does not hold a registration with this process's incarnation id. The
//! server side (checks, the record) is `controller::cluster::register_controller`.

use kafka_protocol::messages::ControllerRegistrationRequest;

use crate::metadata::controller::{ControllerEndpoint, ControllerFeature, ControllerRegistration};
use crate::metadata::image::MetadataImage;
use crate::metadata::wire::TaggedFields;
use crate::raft::Destination;

/// Feature ranges this controller registers with (KIP-919): what `release` supports (also
/// its ApiVersions answer), in that release's registration order.
pub fn registered_features(
    release: crate::codec::versions::Release,
) -> Vec<(&'static str, i16, i16)> {
    release
        .registration_order()
        .iter()
        .filter_map(|name| release.supported_feature(name))
        .map(|f| (f.name, f.min_version, f.max_version))
        .collect()
}

/// Correlation ids of our own registration requests (the core's ids stay far below).
pub const CORRELATION_BASE: u64 = 1 << 62;
/// Kafka's registration resend backoff: 100 ms doubling up to 120 s.
const RETRY_BACKOFF_MS: u64 = 100;
const RETRY_BACKOFF_MAX_MS: u64 = 120_000;
/// After an acknowledged registration, how long to wait for it to show up in the image
/// before asking again.
const ACKNOWLEDGED_RECHECK_MS: u64 = 5_000;

/// What to do about our own registration now.
#[derive(Debug)]
pub enum OwnAction {
    /// Nothing.
    None,
    /// Hand this request to this node's own (active) controller.
    Local {
        /// Correlation id (≥ [`CORRELATION_BASE`]) the answer comes back with.
        correlation_id: u64,
        /// The request.
        request: ControllerRegistrationRequest,
    },
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

/// This node's registration and its progress.
#[derive(Debug)]
pub struct Registrations {
    own: ControllerRegistration,
    own_in_flight: bool,
    own_correlation_id: Option<u64>,
    own_failures: u32,
    own_next_attempt_ms: u64,
    next_correlation_id: u64,
}

impl Registrations {
    /// Our registration: `endpoints` are the controller listeners as advertised, each
    /// (name, host, port, security protocol id: 0 PLAINTEXT, 1 SSL).
    pub fn new(
        node_id: i32,
        incarnation_id: uuid::Uuid,
        endpoints: Vec<(String, String, u16, i16)>,
        features: &[(&str, i16, i16)],
    ) -> Self {
        let own = ControllerRegistration {
            controller_id: node_id,
            incarnation_id,
            zk_migration_ready: false,
            end_points: endpoints
                .into_iter()
                .map(|(name, host, port, security_protocol)| ControllerEndpoint {
                    name,
                    host,
                    port,
                    security_protocol,
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
            own,
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

    /// Whether `image` holds our registration with this incarnation.
    pub fn registered(&self, image: &MetadataImage) -> bool {
        image
            .controllers
            .get(&self.own.controller_id)
            .is_some_and(|r| r.incarnation_id == self.own.incarnation_id)
    }

    /// What to do about our own registration at `now_ms`, given the committed `image`.
    pub fn own_action(
        &mut self,
        now_ms: u64,
        image: &MetadataImage,
        is_leader: bool,
        leader: Option<Destination>,
    ) -> OwnAction {
        if self.own_in_flight
            || now_ms < self.own_next_attempt_ms
            || !image.controller_registration_supported()
            || self.registered(image)
        {
            return OwnAction::None;
        }
        let destination = match (is_leader, leader) {
            (true, _) => None,
            (false, Some(d)) => Some(d),
            (false, None) => return OwnAction::None,
        };
        let correlation_id = self.next_correlation_id;
        self.next_correlation_id += 1;
        self.own_in_flight = true;
        self.own_correlation_id = Some(correlation_id);
        let request = self.own_request();
        match destination {
            None => {
                tracing::info!(
                    "Registering this controller (incarnation {}) as the active controller",
                    self.own.incarnation_id
                );
                OwnAction::Local {
                    correlation_id,
                    request,
                }
            }
            Some(destination) => {
                tracing::info!(
                    "Registering controller {} (incarnation {}) with the active controller {}",
                    self.own.controller_id,
                    self.own.incarnation_id,
                    destination.node_id
                );
                OwnAction::Send {
                    correlation_id,
                    destination,
                    request,
                }
            }
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
