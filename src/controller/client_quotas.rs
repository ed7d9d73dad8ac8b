//! Client quotas (Kafka's `ClientQuotaControlManager`): AlterClientQuotas turns each entity's
//! quota changes into ClientQuotaRecords, all of the request's in one atomic batch. The image
//! keeps the quotas (`MetadataImage::client_quotas`); brokers read them from the log and
//! enforce them (the controller enforces none).
//!
//! ```text
//!   entry ─ a key twice, or an entity already seen? ─▶ INVALID_REQUEST "Ignoring duplicate entity …"
//!     └─ entity types user / client-id / ip, names not empty ─ ip alone, a valid address
//!          └─ per key (Java's HashMap order): removal of a held key ─▶ remove record
//!                known key, value > 0, integral where the key is LONG/INT ─▶ record if changed
//!                anything else ─▶ INVALID_REQUEST, none of this entity's records
//! ```
//!
//! Kafka parses the request's entities into `HashMap`s (a type named twice keeps the last
//! name) and answers from a `HashMap` keyed by entity; those iteration orders are rebuilt
//! here (`codec::java_order`), so records, results and messages list entities as Kafka does.

use std::collections::BTreeMap;
// `core::net` holds the address types only (no sockets).
use core::net::IpAddr;

use kafka_protocol::messages::alter_client_quotas_request::EntityData as RequestEntity;
use kafka_protocol::messages::alter_client_quotas_response::{
    EntityData as ResponseEntity, EntryData as ResponseEntry,
};
use kafka_protocol::messages::{AlterClientQuotasRequest, AlterClientQuotasResponse};
use kafka_protocol::protocol::StrBytes;

use super::errors::{self, ApiError};
use super::result::{ControllerResult, RecordOut};
use crate::common::java::{
    java_hash_map_order, java_hash_map_order_by_hash, java_string_hash, Built,
};
use crate::metadata::image::{ClientQuotaEntity, MetadataImage};
use crate::metadata::record::MetadataRecord;
use crate::metadata::records::{ClientQuotaEntity as RecordEntity, ClientQuotaRecord};

/// The entity types Kafka's `ClientQuotaEntity` knows.
pub const USER: &str = "user";
/// The client-id entity type.
pub const CLIENT_ID: &str = "client-id";
/// The ip entity type.
pub const IP: &str = "ip";

/// A quota key's `ConfigDef` type, which bounds its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QuotaType {
    Long,
    Int,
    Double,
}

/// Kafka's `QuotaConfig.userAndClientQuotaConfigs()`.
const USER_AND_CLIENT_KEYS: &[(&str, QuotaType)] = &[
    ("producer_byte_rate", QuotaType::Long),
    ("consumer_byte_rate", QuotaType::Long),
    ("request_percentage", QuotaType::Double),
    ("controller_mutation_rate", QuotaType::Double),
];

/// Kafka's `QuotaConfig.ipConfigs()`.
const IP_KEYS: &[(&str, QuotaType)] = &[("connection_creation_rate", QuotaType::Int)];

/// An entity as Kafka's request parsing builds it: type → name (`None`: the default entity),
/// in the iteration order of the `HashMap` it fills.
#[derive(Debug, Clone)]
struct Entity {
    entries: Vec<(String, Option<String>)>,
}

impl Entity {
    fn from_request(data: &[RequestEntity]) -> Self {
        let mut entries: Vec<(String, Option<String>)> = Vec::new();
        for d in data {
            let name = d.entity_name.as_ref().map(|n| n.to_string());
            match entries
                .iter_mut()
                .find(|(t, _)| t.as_str() == d.entity_type.as_str())
            {
                Some(entry) => entry.1 = name,
                None => entries.push((d.entity_type.to_string(), name)),
            }
        }
        // `new HashMap<>(entity.size())`: sized for the entries given, duplicates included.
        java_hash_map_order(&mut entries, Built::Capacity(data.len()), |(t, _)| {
            t.as_str()
        });
        Self { entries }
    }

    /// The image's key: equal entities are equal maps, whatever their order.
    fn key(&self) -> ClientQuotaEntity {
        self.entries.iter().cloned().collect()
    }

    /// `ClientQuotaEntity.hashCode()`: `Objects.hash(entries)`, a map's hash being the sum of
    /// its entries' `key.hashCode() ^ value.hashCode()` (0 for null).
    fn java_hash(&self) -> i32 {
        let map = self.entries.iter().fold(0i32, |sum, (t, n)| {
            let value = n.as_deref().map_or(0, java_string_hash);
            sum.wrapping_add(java_string_hash(t) ^ value)
        });
        31i32.wrapping_add(map)
    }

    /// `ClientQuotaEntity.toString()`.
    fn display(&self) -> String {
        let parts: Vec<String> = self
            .entries
            .iter()
            .map(|(t, n)| format!("{t}={}", n.as_deref().unwrap_or("null")))
            .collect();
        format!("ClientQuotaEntity(entries={{{}}})", parts.join(", "))
    }
}

fn invalid(message: String) -> ApiError {
    ApiError::new(errors::INVALID_REQUEST, message)
}

/// The results keyed by entity, in insertion order (a later answer for an entity replaces
/// the earlier one in place, as `HashMap.put` does).
#[derive(Default)]
struct Results(Vec<(Entity, ApiError)>);

impl Results {
    fn contains(&self, entity: &Entity) -> bool {
        let key = entity.key();
        self.0.iter().any(|(e, _)| e.key() == key)
    }

    fn put(&mut self, entity: &Entity, error: ApiError) {
        let key = entity.key();
        match self.0.iter_mut().find(|(e, _)| e.key() == key) {
            Some(slot) => slot.1 = error,
            None => self.0.push((entity.clone(), error)),
        }
    }
}

/// Kafka's `alterClientQuotas`: every entity validated on its own, the records of those that
/// pass written atomically; with `validate_only` the same answers and no records.
pub fn alter_client_quotas(
    image: &MetadataImage,
    req: &AlterClientQuotasRequest,
) -> ControllerResult<AlterClientQuotasResponse> {
    let mut records = Vec::new();
    let mut results = Results::default();
    for entry in &req.entries {
        let entity = Entity::from_request(&entry.entity);
        let mut alterations: Vec<(String, Option<f64>)> = Vec::new();
        for op in &entry.ops {
            let key = op.key.to_string();
            if alterations.iter().any(|(k, _)| *k == key) {
                results.put(
                    &entity,
                    invalid(format!(
                        "Duplicate quota key {key} not updating quota for this entity {}",
                        entity.display()
                    )),
                );
            } else {
                alterations.push((key, (!op.remove).then_some(op.value)));
            }
        }
        // Kafka's quirk kept: a duplicate key is reported as a duplicate entity, since its
        // error is already in the results when the entity is looked up there.
        if results.contains(&entity) {
            results.put(
                &entity,
                invalid(format!("Ignoring duplicate entity {}", entity.display())),
            );
            continue;
        }
        java_hash_map_order(
            &mut alterations,
            Built::Capacity(entry.ops.len()),
            |(k, _)| k.as_str(),
        );
        let outcome = alter_entity(image, &entity, &alterations);
        match outcome {
            Ok(mut entity_records) => {
                records.append(&mut entity_records);
                results.put(&entity, ApiError::code(errors::NONE));
            }
            Err(e) => results.put(&entity, e),
        }
    }
    if req.validate_only {
        records.clear();
    }
    let mut answered = results.0;
    java_hash_map_order_by_hash(&mut answered, Built::Default, |(e, _)| e.java_hash());
    let entries = answered
        .into_iter()
        .map(|(entity, error)| {
            ResponseEntry::default()
                .with_error_code(error.code)
                .with_error_message(error.message.map(StrBytes::from_string))
                .with_entity(response_entity(&entity))
        })
        .collect();
    ControllerResult::of(
        records,
        AlterClientQuotasResponse::default().with_entries(entries),
    )
}

fn response_entity(entity: &Entity) -> Vec<ResponseEntity> {
    entity
        .entries
        .iter()
        .map(|(t, n)| {
            ResponseEntity::default()
                .with_entity_type(StrBytes::from_string(t.clone()))
                .with_entity_name(n.clone().map(StrBytes::from_string))
        })
        .collect()
}

/// Kafka's `alterClientQuotaEntity`: the entity's records, or the first error.
fn alter_entity(
    image: &MetadataImage,
    entity: &Entity,
    alterations: &[(String, Option<f64>)],
) -> Result<Vec<RecordOut>, ApiError> {
    let validated = validate_entity(entity)?;
    let keys = keys_for(&validated)?;
    let record_entity: Vec<RecordEntity> = validated
        .iter()
        .map(|(t, n)| RecordEntity {
            entity_type: t.clone(),
            entity_name: n.clone(),
            ..Default::default()
        })
        .collect();
    let current: Option<&BTreeMap<String, f64>> = image.client_quotas.get(&entity.key());
    let held = |key: &str| current.and_then(|q| q.get(key)).copied();
    let mut records = Vec::new();
    for (key, value) in alterations {
        let record = match value {
            None => held(key).map(|_| ClientQuotaRecord {
                entity: record_entity.clone(),
                key: key.clone(),
                remove: true,
                ..Default::default()
            }),
            Some(v) => {
                validate_value(keys, key, *v)?;
                // `Objects.equals` on boxed Doubles compares bits.
                (held(key).map(f64::to_bits) != Some(v.to_bits())).then(|| ClientQuotaRecord {
                    entity: record_entity.clone(),
                    key: key.clone(),
                    value: *v,
                    ..Default::default()
                })
            }
        };
        if let Some(r) = record {
            records.push(RecordOut::new(MetadataRecord::ClientQuota(r), 0));
        }
    }
    Ok(records)
}

/// Kafka's `validateEntity`: known types, no empty names; the validated map in its order (a
/// `HashMap` of capacity 3).
fn validate_entity(entity: &Entity) -> Result<Vec<(String, Option<String>)>, ApiError> {
    if entity.entries.is_empty() {
        return Err(invalid("Invalid empty client quota entity".into()));
    }
    let mut validated: Vec<(String, Option<String>)> = Vec::new();
    for (t, n) in &entity.entries {
        if validated.iter().any(|(v, _)| v == t) {
            return Err(invalid(format!(
                "Invalid client quota entity, duplicate entity entry {t}"
            )));
        }
        if !matches!(t.as_str(), USER | CLIENT_ID | IP) {
            return Err(invalid(format!("Unhandled client quota entity type: {t}")));
        }
        validated.push((t.clone(), n.clone()));
        if n.as_deref() == Some("") {
            return Err(invalid(format!("Empty {t} not supported")));
        }
    }
    java_hash_map_order(&mut validated, Built::Capacity(3), |(t, _)| t.as_str());
    Ok(validated)
}

/// Kafka's `configKeysForEntityType`: the combination allowed and its keys.
fn keys_for(
    validated: &[(String, Option<String>)],
) -> Result<&'static [(&'static str, QuotaType)], ApiError> {
    let name_of = |ty: &str| validated.iter().find(|(t, _)| t == ty).map(|(_, n)| n);
    let (user, client, ip) = (name_of(USER), name_of(CLIENT_ID), name_of(IP));
    match ip {
        Some(_) if user.is_some() || client.is_some() => Err(invalid(
            // Kafka's message, its missing space included.
            "Invalid quota entity combination, IP entity shouldnot be combined with User or \
             ClientId"
                .into(),
        )),
        Some(name) => match name {
            Some(address) if !valid_ip(address) => Err(invalid(format!(
                "{address} is not a valid IP or resolvable host."
            ))),
            _ => Ok(IP_KEYS),
        },
        None if user.is_some() || client.is_some() => Ok(USER_AND_CLIENT_KEYS),
        None => Err(invalid("Invalid empty client quota entity".into())),
    }
}

/// Kafka's `isValidIpEntity` resolves the name (`InetAddress.getByName`); the controller does
/// no I/O, so it takes address literals only (IPv6 in brackets too, as Java does).
fn valid_ip(name: &str) -> bool {
    let bare = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name);
    bare.parse::<IpAddr>().is_ok()
}

/// Kafka's `validateQuotaKeyValue`.
fn validate_value(
    keys: &[(&'static str, QuotaType)],
    key: &str,
    value: f64,
) -> Result<(), ApiError> {
    let Some((_, ty)) = keys.iter().find(|(k, _)| *k == key) else {
        return Err(invalid(format!("Invalid configuration key {key}")));
    };
    if value <= 0.0 {
        return Err(invalid(format!("Quota {key} must be greater than 0")));
    }
    let (limit, article, name) = match ty {
        QuotaType::Double => return Ok(()),
        QuotaType::Int => (f64::from(i32::MAX), "an", "INT"),
        // Java compares with the long widened to a double, as `as` does here.
        #[allow(clippy::cast_precision_loss)]
        QuotaType::Long => (i64::MAX as f64, "a", "LONG"),
    };
    if value > limit {
        return Err(invalid(format!(
            "Proposed value for {key} is too large for {article} {name}."
        )));
    }
    if (value % 1.0).abs() > 1e-6 {
        return Err(invalid(format!("{key} cannot be a fractional value.")));
    }
    Ok(())
}
