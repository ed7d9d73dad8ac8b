//! Both sides' answers and records, decoded and normalised, then compared field by field.
//!
//! Normalisations (each is a difference that is not behaviour):
//! - Topic ids are random on both sides (Kafka: `Uuid.randomUuid()`; ferrokraft: its seeded
//!   generator): every id a side assigned in a TopicRecord is replaced, wherever it appears in
//!   that side's records and CreateTopics answers, by `<id of NAME>`. A validate-only
//!   CreateTopics writes no TopicRecord yet answers each accepted topic with a fresh random id
//!   on both sides: a non-nil id that no record of that side holds is shown as one
//!   placeholder (D9); nil, or the id of another topic, is shown as it is.
//! - Replica placement is random on both sides with different generators: ferrokraft's choice
//!   is handed to Kafka as a hint (see kafka_side.rs); Kafka's placer still runs and decides
//!   every refusal, and the hint is used only if it keeps the placer's invariants (count,
//!   distinct, usable, unfenced leader, no fenced replica while enough unfenced brokers), so
//!   everything downstream of the replicas is compared exactly.
//! - Heartbeat metadata offsets are symbolic (caught up: 2^40, behind: 0), and broker epochs in
//!   requests are each side's own last answer, because the two logs hold different control
//!   records (the LeaderChange batch) at different offsets.
//! - Broker-level operations (a fencing by heartbeat or session expiry, a controlled shutdown,
//!   an unfencing, an unclean re-registration, an unregistration) visit the partitions of a
//!   broker through Kafka's `BrokersToIsrs`: a `TimelineHashMap` keyed by topic id per broker
//!   (4.1.2's `PartitionsOnReplicaIterator` walks `topicMap.entrySet()`), so Kafka writes their
//!   PartitionChangeRecords topic by topic in the hash order of its random `Uuid`s, which
//!   changes from run to run; ferrokraft goes in its own topic-id order. Within a topic Kafka
//!   goes in the order of its `int[]` of that broker's partitions, the order in which the
//!   broker joined their ISRs (exception X4: ferrokraft keeps no such history and goes by
//!   partition id). In such a step each run of consecutive PartitionChangeRecords is compared
//!   sorted by (topic name, partition) ([`topic_order_normalised`]); every record keeps its
//!   content, so a record that differs or is missing still diverges.
//! - DeleteTopics: Kafka answers in a shuffled order (`Collections.shuffle` in
//!   `ControllerApis.deleteTopics`; ferrokraft shuffles with its own generator), so the
//!   results are compared sorted; it removes the topics in the order of a `HashMap` keyed by
//!   their random ids (`idToName.keySet()`), so the run of RemoveTopicRecords is compared in
//!   topic-name order ([`topic_order_normalised`]).
//! - CreatePartitions: the new partitions' placement is handed to Kafka as for CreateTopics
//!   ([`new_partitions_hint`]).
//! - IncrementalAlterConfigs: Kafka alters the resources in the order of a `HashMap` keyed
//!   by `ConfigResource`, whose `hashCode` mixes in `Type.hashCode()`, an enum's identity
//!   hash (random per JVM): the results after ControllerApis' own refusals and the runs of
//!   ConfigRecords are compared in resource order ([`by_resource`]); the records of one
//!   resource keep their order (a HashMap of config names: not random).
//! - Named exception X1, legacy AlterConfigs: the ConfigRecords that delete the stored keys a
//!   resource's new set leaves out come in the order of Kafka's stored `TimelineHashMap` of
//!   that resource, which depends on the keys' insertion and removal history; ferrokraft's
//!   image keeps no such history and writes them in name order. They are compared sorted by
//!   name ([`implicit_deletions_sorted`]); the explicit records keep their (HashMap) order.
//! - Named exception X2, ElectLeaders over every partition: Kafka walks `topicsByName`, a
//!   `TimelineHashMap` whose slots' entries come last-created first; ferrokraft's image keeps
//!   no creation order (name order stands for it, src/controller/replication/elect_leaders.rs),
//!   so topics sharing a slot may come in another order. The results are compared sorted by
//!   topic and the partition changes in topic-name order (each topic's own order kept).
//! - Named exception X3, placement onto a broker that may not join an ISR: Kafka's placer
//!   takes the brokers whose heartbeat session is not shutting down, but a new partition's ISR
//!   takes only active registrations; a broker whose session left controlled shutdown (a
//!   re-registration of the same incarnation restarts it) while its registration is still in
//!   controlled shutdown is placed on, randomly, and the partition (CreateTopics) or the rest
//!   of the topic (CreatePartitions, after the partitions placed before it) is refused with
//!   "All brokers are currently fenced or in controlled shutdown.". ferrokraft does the same,
//!   but the two random choices differ and a refused placement writes nothing to hand to
//!   Kafka's placer (or, for CreatePartitions, only the partitions before the refused one,
//!   which Kafka's placer, placing the topic's new partitions at once, cannot take). A
//!   CreateTopics or CreatePartitions step whose answers or records differ, or whose hint
//!   Kafka's placer cannot take, while either side gave that refusal ends its sequence as
//!   inconclusive (counted in the `covered:` line), not as a divergence.
//! - ACL ids are random on both sides (Kafka: `Uuid.randomUuid()` in
//!   `AclControlManager.newAclId`): an AccessControlEntryRecord's id is shown, there and in
//!   later RemoveAccessControlEntryRecords, as `<id of acl {the binding's fields}>`.
//! - DeleteAcls: Kafka collects the removal records in a `HashSet` and each filter's matches
//!   by walking `idToAcl`, a `HashMap` keyed by the random ids: the step's records
//!   ([`records_sorted`]) and each filter's matching ACLs are compared sorted.
//! - Delegation-token ids are random on both sides (Kafka: `Uuid.randomUuid().toString()`): a
//!   token id is shown as `<id of token N>`, N its creation order on that side, in records
//!   and answers; a CreateDelegationToken answer's HMAC is shown as `<hmac of the token>` when
//!   it is HMAC-SHA512 of the token id under the shared secret (computed by the test for both
//!   sides, so Kafka's HMAC checks ferrokraft's computation), else as it is. Renewals and
//!   expiries carry each side's own HMAC of its N-th token.
//! - The expired-token sweep: Kafka walks `DelegationTokenCache.tokens()`, the values of a
//!   `ConcurrentHashMap` keyed by the random token ids, so each run of
//!   RemoveDelegationTokenRecords is compared sorted ([`runs_sorted`]).
//! - Nothing else: record versions, every record field and every response field are compared.

use std::collections::BTreeMap;

use ferrokraft::metadata::record::ApiMessageAndVersion;
use serde_json::Value;

/// What one side did in one step, normalised, as text lines to compare and print.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    pub response: Option<String>,
    pub records: Vec<String>,
}

/// Per side: each topic id it assigned (Kafka's base64 form) and the topic's name.
#[derive(Debug, Default)]
pub struct Ids {
    pub names: BTreeMap<String, String>,
    /// The id of the latest topic of each name (requests that name a topic by id).
    pub latest: BTreeMap<String, uuid::Uuid>,
    /// The delegation tokens this side created, in order: their ids.
    pub tokens: Vec<String>,
}

/// The delegation-token settings of both sides (ferro.rs; the Java side's are the same).
pub fn token_config() -> ferrokraft::controller::delegation_tokens::DelegationTokenConfig {
    let mut c = ferrokraft::controller::delegation_tokens::DelegationTokenConfig::with_secret(
        "difffuzz-token-key",
    );
    c.max_lifetime_ms = 60_000;
    c.expiry_time_ms = 20_000;
    c.expiry_check_interval_ms = 5_000;
    c
}

impl Ids {
    fn map_value(&self, v: &mut Value) {
        match v {
            Value::String(s) => {
                if let Some(name) = self.names.get(s.as_str()) {
                    *s = format!("<id of {name}>");
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.map_value(x)),
            Value::Object(o) => o.values_mut().for_each(|x| self.map_value(x)),
            _ => {}
        }
    }

    /// Learns the topic ids in `records`, then renders each normalised.
    pub fn records(&mut self, records: &[Vec<u8>]) -> Vec<String> {
        let decoded: Vec<Result<ApiMessageAndVersion, String>> = records
            .iter()
            .map(|r| ApiMessageAndVersion::decode(r).map_err(|e| format!("{e:?}")))
            .collect();
        for r in decoded.iter().flatten() {
            if let ferrokraft::metadata::record::MetadataRecord::Topic(t) = &r.message {
                self.latest.insert(t.name.clone(), t.topic_id);
            }
            let json = r.message.body_json(r.version);
            if r.message.name() == "AccessControlEntryRecord" {
                // An ACL's id is random on both sides: shown as the binding it names.
                if let Some(Value::String(id)) = json.get("id") {
                    let mut binding = json.clone();
                    if let Value::Object(o) = &mut binding {
                        o.remove("id");
                    }
                    self.names.insert(id.clone(), format!("acl {binding}"));
                }
            }
            if r.message.name() == "DelegationTokenRecord" {
                // A token id is random on both sides: shown by creation order.
                if let Some(Value::String(id)) = json.get("token_id") {
                    if !self.tokens.contains(id) {
                        self.names
                            .insert(id.clone(), format!("token {}", self.tokens.len()));
                        self.tokens.push(id.clone());
                    }
                }
            }
            if r.message.name() == "TopicRecord" {
                if let (Some(Value::String(id)), Some(Value::String(name))) =
                    (json.get("topic_id"), json.get("name"))
                {
                    self.names.insert(id.clone(), name.clone());
                }
            }
        }
        decoded
            .into_iter()
            .zip(records)
            .map(|(r, raw)| match r {
                Ok(r) => {
                    let mut json = r.message.body_json(r.version);
                    self.map_value(&mut json);
                    format!("{} v{} {}", r.message.name(), r.version, json)
                }
                Err(e) => format!("undecodable record {} ({e})", crate::kafka_side::hex(raw)),
            })
            .collect()
    }

    /// What a step that answers nothing (time passing, a failover) did: its records.
    pub fn unanswered(&mut self, records: &[Vec<u8>]) -> Outcome {
        Outcome {
            response: None,
            records: self.records(records),
        }
    }

    /// The HMACs of this side's tokens, in creation order (as Kafka's DelegationTokenManager
    /// computes them from the shared secret; a CreateDelegationToken answer is compared with
    /// this too, see the render of its answer).
    pub fn token_hmacs(&self) -> Vec<Vec<u8>> {
        let cfg = token_config();
        self.tokens.iter().map(|id| cfg.hmac(id)).collect()
    }

    /// The name a topic id stands for on this side, if it assigned it.
    pub fn name_of(&self, id: &uuid::Uuid) -> Option<&String> {
        self.names
            .get(&ferrokraft::common::uuid::uuid_to_kafka_string(id))
    }
}

/// The placement hint for Kafka: the replicas ferrokraft chose, topic by topic, for the
/// topics of `placed` (names created without explicit assignments), in record order.
pub fn placement_hint(records: &[Vec<u8>], placed: &[String]) -> Option<String> {
    let mut order: Vec<String> = Vec::new();
    let mut parts: BTreeMap<String, Vec<(i64, Vec<i64>)>> = BTreeMap::new();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    for r in records
        .iter()
        .filter_map(|r| ApiMessageAndVersion::decode(r).ok())
    {
        let json = r.message.body_json(r.version);
        let id = json
            .get("topic_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        match (r.message.name(), id) {
            ("TopicRecord", Some(id)) => {
                let name = json.get("name").and_then(Value::as_str).unwrap_or("");
                if placed.iter().any(|p| p == name) {
                    order.push(id.clone());
                    names.insert(id, name.to_string());
                }
            }
            ("PartitionRecord", Some(id)) => {
                let p = json
                    .get("partition_id")
                    .and_then(Value::as_i64)
                    .unwrap_or(-1);
                let replicas = json
                    .get("replicas")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_i64).collect())
                    .unwrap_or_default();
                parts.entry(id).or_default().push((p, replicas));
            }
            _ => {}
        }
    }
    let topics: Vec<String> = order
        .iter()
        .filter_map(|id| parts.get(id))
        .map(|ps| {
            let mut ps = ps.clone();
            ps.sort();
            ps.iter()
                .map(|(_, rs)| {
                    rs.iter()
                        .map(|b| b.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .collect::<Vec<_>>()
                .join(";")
        })
        .collect();
    (!topics.is_empty()).then(|| topics.join("|"))
}

/// A run of consecutive `kind` records sorted by (topic name, partition) (see the module
/// docs: Kafka's order in a broker-level operation is the hash order of its random topic ids,
/// then the broker's ISR-join order). Records of other kinds stay where they are and end a
/// run.
pub fn topic_order_normalised(records: Vec<String>, kind: &str) -> Vec<String> {
    let prefix = format!("{kind} v");
    let topic_of = |r: &str| -> Option<(String, i64)> {
        let json = r.strip_prefix(prefix.as_str())?;
        let value: Value = serde_json::from_str(json.split_once(' ')?.1).ok()?;
        Some((
            value.get("topic_id")?.as_str()?.to_string(),
            value
                .get("partition_id")
                .and_then(Value::as_i64)
                .unwrap_or(-1),
        ))
    };
    let mut out = Vec::with_capacity(records.len());
    let mut run: Vec<((String, i64), String)> = Vec::new();
    let flush = |run: &mut Vec<((String, i64), String)>, out: &mut Vec<String>| {
        run.sort_by(|a, b| a.0.cmp(&b.0));
        out.extend(run.drain(..).map(|(_, r)| r));
    };
    for r in records {
        match topic_of(&r) {
            Some(topic) => run.push((topic, r)),
            None => {
                flush(&mut run, &mut out);
                out.push(r);
            }
        }
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
const PC: &str = "PartitionChangeRecord";

#[test]
fn topic_order_normalisation_sorts_by_topic_and_partition_and_keeps_content() {
    let pc = |t: &str, p: i32, leader: i32| {
        format!(
            "PartitionChangeRecord v2 {{\"leader\":{leader},\"partition_id\":{p},\"topic_id\":\"<id of {t}>\"}}"
        )
    };
    let change = "BrokerRegistrationChangeRecord v0 {\"broker_id\":1}".to_string();
    let kafka = vec![
        pc("zeta", 2, 1),
        pc("zeta", 0, 1),
        pc("beta", 1, 1),
        change.clone(),
    ];
    let ferro = vec![
        pc("beta", 1, 1),
        pc("zeta", 2, 1),
        pc("zeta", 0, 1),
        change.clone(),
    ];
    assert_eq!(
        topic_order_normalised(kafka.clone(), PC),
        topic_order_normalised(ferro, PC)
    );
    // Exception X4: the partitions of one topic in another order compare equal too.
    let swapped = vec![
        pc("beta", 1, 1),
        pc("zeta", 0, 1),
        pc("zeta", 2, 1),
        change.clone(),
    ];
    assert_eq!(
        topic_order_normalised(kafka.clone(), PC),
        topic_order_normalised(swapped, PC)
    );
    // Content still counts, and a record of another kind ends a run.
    let other = vec![
        pc("zeta", 2, 1),
        pc("zeta", 0, 2),
        pc("beta", 1, 1),
        change.clone(),
    ];
    assert_ne!(
        topic_order_normalised(kafka.clone(), PC),
        topic_order_normalised(other, PC)
    );
    let split = vec![pc("zeta", 2, 1), change.clone(), pc("beta", 1, 1)];
    assert_eq!(topic_order_normalised(split.clone(), PC), split);
}

/// The placement hint for a CreatePartitions: the replicas of the new partitions ferrokraft
/// placed, topic by topic in record order, leaving out the topics whose ids (Kafka's base64
/// form) are in `explicit` (given assignments: Kafka's placer is not asked for them).
pub fn new_partitions_hint(records: &[Vec<u8>], explicit: &[String]) -> Option<String> {
    let mut order: Vec<String> = Vec::new();
    let mut parts: BTreeMap<String, Vec<(i64, Vec<i64>)>> = BTreeMap::new();
    for r in records
        .iter()
        .filter_map(|r| ApiMessageAndVersion::decode(r).ok())
    {
        if r.message.name() != "PartitionRecord" {
            continue;
        }
        let json = r.message.body_json(r.version);
        let Some(id) = json.get("topic_id").and_then(Value::as_str) else {
            continue;
        };
        if explicit.iter().any(|e| e == id) {
            continue;
        }
        if !order.iter().any(|o| o == id) {
            order.push(id.to_string());
        }
        let p = json
            .get("partition_id")
            .and_then(Value::as_i64)
            .unwrap_or(-1);
        let replicas = json
            .get("replicas")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default();
        parts.entry(id.to_string()).or_default().push((p, replicas));
    }
    let topics: Vec<String> = order
        .iter()
        .filter_map(|id| parts.get(id))
        .map(|ps| {
            ps.iter()
                .map(|(_, rs)| {
                    rs.iter()
                        .map(|b| b.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                })
                .collect::<Vec<_>>()
                .join(";")
        })
        .collect();
    (!topics.is_empty()).then(|| topics.join("|"))
}

/// The records of an IncrementalAlterConfigs step with each run of ConfigRecords in
/// (resource type, resource name) order, the records of one resource kept in their order.
pub fn by_resource(o: Outcome) -> Outcome {
    let key = |r: &str| -> Option<(i64, String)> {
        let json = r.strip_prefix("ConfigRecord v")?;
        let value: Value = serde_json::from_str(json.split_once(' ')?.1).ok()?;
        Some((
            value.get("resource_type")?.as_i64()?,
            value.get("resource_name")?.as_str()?.to_string(),
        ))
    };
    let mut out = Vec::with_capacity(o.records.len());
    let mut run: Vec<((i64, String), String)> = Vec::new();
    let flush = |run: &mut Vec<((i64, String), String)>, out: &mut Vec<String>| {
        run.sort_by(|a, b| a.0.cmp(&b.0));
        out.extend(run.drain(..).map(|(_, r)| r));
    };
    for r in o.records {
        match key(&r) {
            Some(k) => run.push((k, r)),
            None => {
                flush(&mut run, &mut out);
                out.push(r);
            }
        }
    }
    flush(&mut run, &mut out);
    Outcome {
        response: o.response,
        records: out,
    }
}

/// Exception X1 (module docs): in each resource's run of ConfigRecords, the records of keys
/// not in `explicit(resource type, resource name)` (the request's keys) sorted by name.
pub fn implicit_deletions_sorted(
    o: Outcome,
    explicit: impl Fn(i64, &str, &str) -> bool,
) -> Outcome {
    let parse = |r: &str| -> Option<(i64, String, String)> {
        let json = r.strip_prefix("ConfigRecord v")?;
        let value: Value = serde_json::from_str(json.split_once(' ')?.1).ok()?;
        Some((
            value.get("resource_type")?.as_i64()?,
            value.get("resource_name")?.as_str()?.to_string(),
            value.get("name")?.as_str()?.to_string(),
        ))
    };
    let mut records = o.records;
    let mut i = 0;
    while i < records.len() {
        let Some((t, n, _)) = parse(&records[i]) else {
            i += 1;
            continue;
        };
        let mut j = i;
        while j < records.len() && parse(&records[j]).is_some_and(|(t2, n2, _)| t2 == t && n2 == n)
        {
            j += 1;
        }
        let group = &mut records[i..j];
        // Stable: explicit records first in their order, then the implicit ones by name.
        group.sort_by_key(|r| match parse(r) {
            Some((_, _, key)) if !explicit(t, &n, &key) => (1, key),
            _ => (0, String::new()),
        });
        i = j;
    }
    Outcome {
        response: o.response,
        records,
    }
}

/// A step's records compared as a set (DeleteAcls: Kafka's removals come from a `HashSet`).
pub fn records_sorted(mut o: Outcome) -> Outcome {
    o.records.sort();
    o
}

/// Each run of consecutive `kind` records compared sorted by its text (the delegation-token
/// sweep: Kafka walks `DelegationTokenCache.tokens()`, a `ConcurrentHashMap` keyed by the
/// random token ids).
pub fn runs_sorted(mut o: Outcome, kind: &str) -> Outcome {
    let prefix = format!("{kind} ");
    let mut i = 0;
    while i < o.records.len() {
        if !o.records[i].starts_with(&prefix) {
            i += 1;
            continue;
        }
        let start = i;
        while i < o.records.len() && o.records[i].starts_with(&prefix) {
            i += 1;
        }
        o.records[start..i].sort();
    }
    o
}
