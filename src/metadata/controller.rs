//! Controller registrations (KIP-919): the `RegisterControllerRecord` v0 body, which a
//! `ControllerRegistration` request (API 70 v0) carries field for field.
//!
//! ```text
//!   ControllerId int32 | IncarnationId uuid | ZkMigrationReady bool
//!   | EndPoints  compact[ Name string | Host string | Port uint16 | SecurityProtocol int16 | tags ]
//!   | Features   compact[ Name string | MinSupportedVersion int16 | MaxSupportedVersion int16 | tags ]
//!   | tags
//! ```

use uuid::Uuid;

use super::wire::{put_compact_array_len, put_compact_string, Reader, TaggedFields};
use super::MetadataError;

/// Security protocol ids Kafka knows (`SecurityProtocol.forId`).
pub const SECURITY_PROTOCOLS: [(i16, &str); 4] = [
    (0, "PLAINTEXT"),
    (1, "SSL"),
    (2, "SASL_PLAINTEXT"),
    (3, "SASL_SSL"),
];

/// One endpoint of a controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerEndpoint {
    /// Listener name.
    pub name: String,
    /// Host.
    pub host: String,
    /// Port.
    pub port: u16,
    /// Security protocol id.
    pub security_protocol: i16,
    /// Tagged fields as read.
    pub tagged: TaggedFields,
}

/// One supported feature range of a controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerFeature {
    /// Feature name.
    pub name: String,
    /// Lowest supported level.
    pub min_supported_version: i16,
    /// Highest supported level.
    pub max_supported_version: i16,
    /// Tagged fields as read.
    pub tagged: TaggedFields,
}

/// A controller's registration as the metadata log records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerRegistration {
    /// Node id.
    pub controller_id: i32,
    /// Random id of the registering process (a restart registers again with a new one).
    pub incarnation_id: Uuid,
    /// Always false since Kafka 4.0.
    pub zk_migration_ready: bool,
    /// Endpoints by listener, in registration order.
    pub endpoints: Vec<ControllerEndpoint>,
    /// Supported feature ranges.
    pub features: Vec<ControllerFeature>,
    /// Tagged fields as read.
    pub tagged: TaggedFields,
}

impl ControllerRegistration {
    /// Reads the v0 body.
    pub fn read(r: &mut Reader<'_>) -> Result<Self, MetadataError> {
        let controller_id = r.i32()?;
        let incarnation_id = r.uuid()?;
        let zk_migration_ready = r.bool()?;
        let n = r.compact_array_len("EndPoints")?;
        let mut endpoints = Vec::with_capacity(n);
        for _ in 0..n {
            endpoints.push(ControllerEndpoint {
                name: r.compact_string("EndPoints.Name")?,
                host: r.compact_string("EndPoints.Host")?,
                port: r.u16()?,
                security_protocol: r.i16()?,
                tagged: r.tagged_fields()?,
            });
        }
        let n = r.compact_array_len("Features")?;
        let mut features = Vec::with_capacity(n);
        for _ in 0..n {
            features.push(ControllerFeature {
                name: r.compact_string("Features.Name")?,
                min_supported_version: r.i16()?,
                max_supported_version: r.i16()?,
                tagged: r.tagged_fields()?,
            });
        }
        let tagged = r.tagged_fields()?;
        Ok(Self {
            controller_id,
            incarnation_id,
            zk_migration_ready,
            endpoints,
            features,
            tagged,
        })
    }

    /// Writes the v0 body.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.controller_id.to_be_bytes());
        out.extend_from_slice(self.incarnation_id.as_bytes());
        out.push(u8::from(self.zk_migration_ready));
        put_compact_array_len(out, self.endpoints.len());
        for e in &self.endpoints {
            put_compact_string(out, &e.name);
            put_compact_string(out, &e.host);
            out.extend_from_slice(&e.port.to_be_bytes());
            out.extend_from_slice(&e.security_protocol.to_be_bytes());
            e.tagged.write(out);
        }
        put_compact_array_len(out, self.features.len());
        for f in &self.features {
            put_compact_string(out, &f.name);
            out.extend_from_slice(&f.min_supported_version.to_be_bytes());
            out.extend_from_slice(&f.max_supported_version.to_be_bytes());
            f.tagged.write(out);
        }
        self.tagged.write(out);
    }

    /// The endpoint on `listener`, if registered.
    pub fn endpoint(&self, listener: &str) -> Option<&ControllerEndpoint> {
        self.endpoints.iter().find(|e| e.name == listener)
    }
}
