//! The image as JSON and as text, for `ferrokraft dump` (ids in Kafka's base64 form, records
//! through their own JSON view).

use std::fmt::Write as _;

use serde_json::{json, Map, Value};
use uuid::Uuid;

use super::configs::config_resource_type_name;
use super::security::scram_mechanism_name;
use super::MetadataImage;
use crate::common::uuid::uuid_to_kafka_string;
use crate::metadata::field::Field as _;

/// Records in the image show every field they can hold.
const ALL_FIELDS: u16 = u16::MAX;

fn ids(v: &[Uuid]) -> Vec<String> {
    v.iter().map(uuid_to_kafka_string).collect()
}

impl MetadataImage {
    /// The whole image as one JSON document.
    pub fn to_json(&self) -> Value {
        let topics: Vec<Value> = self
            .topics
            .values()
            .map(|t| {
                json!({
                    "name": t.name,
                    "topic_id": uuid_to_kafka_string(&t.id),
                    "partitions": t.partitions.iter().map(|(id, p)| json!({
                        "partition_id": id,
                        "replicas": p.replicas(),
                        "directories": ids(&p.directories()),
                        "isr": p.isr(),
                        "removing_replicas": p.removing_replicas(),
                        "adding_replicas": p.adding_replicas(),
                        "leader": p.leader,
                        "leader_recovery_state": p.leader_recovery_state,
                        "leader_epoch": p.leader_epoch,
                        "partition_epoch": p.partition_epoch,
                        "eligible_leader_replicas": p.elr(),
                        "last_known_elr": p.last_known_elr(),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let configs: Vec<Value> = self
            .configs
            .iter()
            .map(|(r, keys)| {
                json!({
                    "resource_type": config_resource_type_name(r.resource_type),
                    "resource_name": r.resource_name,
                    "configs": keys,
                })
            })
            .collect();
        let quotas: Vec<Value> = self
            .client_quotas
            .iter()
            .map(|(entity, q)| {
                let quotas: Map<String, Value> =
                    q.iter().map(|(k, v)| (k.clone(), v.to_json(0))).collect();
                json!({"entity": entity, "quotas": quotas})
            })
            .collect();
        let scram: Vec<Value> = self
            .scram
            .values()
            .map(|c| {
                json!({
                    "mechanism": scram_mechanism_name(c.mechanism),
                    "name": c.name,
                    "iterations": c.iterations,
                })
            })
            .collect();
        json!({
            "features": self.features,
            "brokers": self.brokers.values().map(|b| b.to_json(ALL_FIELDS)).collect::<Vec<_>>(),
            "controllers": self.controllers.values().map(|c| json!({
                "controller_id": c.controller_id,
                "incarnation_id": uuid_to_kafka_string(&c.incarnation_id),
                "end_points": c.end_points.iter().map(|e| {
                    format!("{}://{}:{}", e.name, e.host, e.port)
                }).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "topics": topics,
            "configs": configs,
            "client_quotas": quotas,
            "next_producer_id": self.next_producer_id,
            "acls": self.acls.values().map(|a| a.to_json(ALL_FIELDS)).collect::<Vec<_>>(),
            // Salts and keys are secrets' material: the dump shows who has a credential only.
            "scram_credentials": scram,
            "delegation_tokens": self.delegation_tokens.values().map(|t| {
                t.to_json(ALL_FIELDS)
            }).collect::<Vec<_>>(),
            "open_transaction_records": self.open_transaction.as_ref().map(Vec::len),
            "refused_records": self.refused_records,
            "undecodable_records": self.undecodable_records,
        })
    }

    /// The image as text: one line per feature, broker, controller, partition, config
    /// resource, quota entity, ACL, credential and token.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "Image:");
        for (name, level) in &self.features {
            let _ = writeln!(out, "  feature {name}={level}");
        }
        for b in self.brokers.values() {
            let _ = writeln!(
                out,
                "  broker {} epoch {} fenced {} in_controlled_shutdown {} rack {:?} \
                 listeners [{}] dirs {:?}",
                b.broker_id,
                b.broker_epoch,
                b.fenced,
                b.in_controlled_shutdown,
                b.rack,
                b.end_points
                    .iter()
                    .map(|e| format!("{}://{}:{}", e.name, e.host, e.port))
                    .collect::<Vec<_>>()
                    .join(","),
                ids(&b.log_dirs)
            );
        }
        for c in self.controllers.values() {
            let _ = writeln!(
                out,
                "  controller {} incarnation {} listeners [{}]",
                c.controller_id,
                uuid_to_kafka_string(&c.incarnation_id),
                c.end_points
                    .iter()
                    .map(|e| format!("{}://{}:{}", e.name, e.host, e.port))
                    .collect::<Vec<_>>()
                    .join(",")
            );
        }
        for t in self.topics.values() {
            let _ = writeln!(
                out,
                "  topic {} id {} partitions {}",
                t.name,
                uuid_to_kafka_string(&t.id),
                t.partitions.len()
            );
            for (id, p) in &t.partitions {
                let _ = writeln!(
                    out,
                    "    partition {id} replicas {:?} isr {:?} leader {} leader_epoch {} \
                     partition_epoch {} elr {:?} last_known_elr {:?} recovery {}",
                    p.replicas(),
                    p.isr(),
                    p.leader,
                    p.leader_epoch,
                    p.partition_epoch,
                    p.elr(),
                    p.last_known_elr(),
                    p.leader_recovery_state
                );
            }
        }
        for (r, keys) in &self.configs {
            let _ = writeln!(
                out,
                "  config {} {:?} {:?}",
                config_resource_type_name(r.resource_type),
                r.resource_name,
                keys
            );
        }
        for (entity, q) in &self.client_quotas {
            let _ = writeln!(out, "  quota {entity:?} {q:?}");
        }
        let _ = writeln!(out, "  next_producer_id {}", self.next_producer_id);
        for a in self.acls.values() {
            let _ = writeln!(out, "  acl {}", a.to_json(ALL_FIELDS));
        }
        for c in self.scram.values() {
            let _ = writeln!(
                out,
                "  scram {} {} iterations {}",
                scram_mechanism_name(c.mechanism),
                c.name,
                c.iterations
            );
        }
        for t in self.delegation_tokens.values() {
            let _ = writeln!(
                out,
                "  delegation_token {} owner {} expires {}",
                t.token_id, t.owner, t.expiration_timestamp
            );
        }
        if let Some(pending) = &self.open_transaction {
            let _ = writeln!(out, "  open transaction: {} records", pending.len());
        }
        if self.refused_records + self.undecodable_records > 0 {
            let _ = writeln!(
                out,
                "  refused records {} undecodable records {}",
                self.refused_records, self.undecodable_records
            );
        }
        out
    }
}
