//! Controller registrations (KIP-919): the `RegisterControllerRecord` v0 body (described in
//! `records/broker.rs`), which a `ControllerRegistration` request (API 70 v0) carries field for
//! field.

pub use super::records::broker::{ControllerEndpoint, ControllerFeature};

/// A controller's registration as the metadata log records it.
pub type ControllerRegistration = super::records::broker::RegisterControllerRecord;

impl ControllerRegistration {
    /// The endpoint on `listener`, if registered.
    pub fn endpoint(&self, listener: &str) -> Option<&ControllerEndpoint> {
        self.end_points.iter().find(|e| e.name == listener)
    }
}
