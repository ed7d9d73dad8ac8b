//! Differential fuzzing: random well-formed controller request sequences run through
//! ferrokraft's sans-IO `QuorumController` and through Apache Kafka 4.1.2's own
//! `QuorumController` (in one JVM, on a LocalLogManager, mock time), compared answer by answer
//! and record by record, in order (issue #36 part 2).
//!
//! ```text
//!   seed ─gen─▶ steps ─requests.rs (each side's epochs and ids)─┬─▶ ferro.rs: QuorumController
//!                                                   + in-memory log ─▶ answer, records
//!                                        └─▶ kafka_side.rs: JVM (stdin/stdout) ─▶ answer, records
//!   compare.rs: decode both (kafka-protocol, the metadata record codec), normalise what is
//!   not behaviour (listed there), compare; a divergence is shrunk by dropping steps and
//!   printed with both answers and both record lists.
//! ```
//!
//! Covered now: BrokerRegistration, BrokerHeartbeat, session expiry through time steps,
//! CreateTopics, DeleteTopics, CreatePartitions, Incremental and legacy AlterConfigs (TOPIC,
//! BROKER, cluster default, GROUP, CLIENT_METRICS), AllocateProducerIds, UnregisterBroker,
//! ElectLeaders and AlterPartition, reassignments, UpdateFeatures, failovers (gen_partitions.rs), CreateAcls,
//! DeleteAcls, AlterClientQuotas, AlterUserScramCredentials and the delegation-token APIs
//! (gen_security.rs), and bad input at the codec (bad_input.rs: every request damaged once,
//! read by both parsers); docs/testing.md lists each API's cases, the normalisations, the
//! named exceptions (X1–X4) and what is not compared.
//!
//! `DIFF_SEEDS` (sequences, default 300: a few seconds once the JVM runs, so `cargo test` and CI
//! run it) and `DIFF_SEED_BASE` (first seed, default 1) choose the
//! work; the test ends by printing `differential fuzz: N sequences, M requests, 0 divergences`.
//! `DIFF_TRACE=<API>` (e.g. `AlterPartition`) prints every step of that API with ferrokraft's
//! answer, to see which paths a generator reaches (`DIFF_TRACE=*`: every step).

// The shared test support reads the clock (waits with deadlines); the fuzz itself does not.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod support;

#[path = "differential_fuzz/bad_input.rs"]
mod bad_input;
#[path = "differential_fuzz/compare.rs"]
mod compare;
#[path = "differential_fuzz/compare_partitions.rs"]
mod compare_partitions;
#[path = "differential_fuzz/ferro.rs"]
mod ferro;
#[path = "differential_fuzz/gen.rs"]
mod gen;
#[path = "differential_fuzz/gen_partitions.rs"]
mod gen_partitions;
#[path = "differential_fuzz/gen_security.rs"]
mod gen_security;
#[path = "differential_fuzz/kafka_side.rs"]
mod kafka_side;
#[path = "differential_fuzz/requests.rs"]
mod requests;
#[path = "differential_fuzz/requests_partitions.rs"]
mod requests_partitions;
#[path = "differential_fuzz/requests_security.rs"]
mod requests_security;

use std::collections::BTreeMap;

use bytes::Bytes;
use compare::{Ids, Outcome};
use ferrokraft::codec::ResponseBody;
use gen::Step;
use kafka_protocol::messages::ApiKey;
use kafka_side::{Answer, KafkaSide};

/// Where the two sides first differ in one sequence.
#[derive(Debug)]
struct Divergence {
    /// Index of the step (None: activation).
    step: Option<usize>,
    what: String,
    ferrokraft: Outcome,
    kafka: Outcome,
}

/// One side's state across a sequence.
#[derive(Default)]
struct Side {
    epochs: BTreeMap<i32, i64>,
    ids: Ids,
}

fn bytes_of(records: Vec<Bytes>) -> Vec<Vec<u8>> {
    records.into_iter().map(|b| b.to_vec()).collect()
}

/// A response rendered for comparison, topic ids mapped by name; its broker epoch if it is
/// a successful registration.
fn render(body: &ResponseBody, ids: &Ids) -> (String, Option<i64>) {
    match body {
        ResponseBody::BrokerRegistration(r) => (
            format!("{r:?}"),
            (r.error_code == 0).then_some(r.broker_epoch),
        ),
        ResponseBody::BrokerHeartbeat(r) => (format!("{r:?}"), None),
        ResponseBody::CreateTopics(r) => {
            let mut r = r.clone();
            for t in &mut r.topics {
                if ids.name_of(&t.topic_id) == Some(&t.name.0.to_string()) {
                    // Random on both sides: the id this side gave the topic of this name.
                    t.topic_id = uuid::Uuid::from_u128(u128::from(u64::MAX));
                } else if !t.topic_id.is_nil() && ids.name_of(&t.topic_id).is_none() {
                    // A topic that validate-only accepted: both sides draw a fresh random id
                    // that no record holds (Kafka: `Uuid.randomUuid()` before the
                    // validate-only return). Nil stays nil and an id of another topic stays
                    // as it is, so those still diverge.
                    t.topic_id = uuid::Uuid::from_u128(u128::from(u64::MAX) - 1);
                }
            }
            (format!("{r:?}"), None)
        }
        ResponseBody::IncrementalAlterConfigs(r) => {
            // The answers ControllerApis gives itself (unknown resource types, duplicates)
            // come first in request order; the controller's results follow in the order of
            // a HashMap keyed by ConfigResource, whose hash mixes in the enum's identity hash
            // (random per JVM): that tail is compared sorted, the head as it is.
            let mut r = r.clone();
            sort_after_kafka_refusals(&mut r.responses, |x| {
                (
                    x.error_code,
                    x.error_message.as_deref().unwrap_or(""),
                    x.resource_type,
                    x.resource_name.as_str(),
                )
            });
            (format!("{r:?}"), None)
        }
        ResponseBody::AlterConfigs(r) => {
            // As IncrementalAlterConfigs: Kafka's own refusals first, then the controller's
            // results in the order of a HashMap keyed by ConfigResource (random per JVM).
            let mut r = r.clone();
            sort_after_kafka_refusals(&mut r.responses, |x| {
                (
                    x.error_code,
                    x.error_message.as_deref().unwrap_or(""),
                    x.resource_type,
                    x.resource_name.as_str(),
                )
            });
            (format!("{r:?}"), None)
        }
        ResponseBody::AlterPartition(r) => {
            // Topic ids shown as the names they stand for on this side.
            let mut text = format!("{r:?}");
            for t in &r.topics {
                if let Some(name) = ids.name_of(&t.topic_id) {
                    text = text.replace(&t.topic_id.to_string(), &format!("<id of {name}>"));
                }
            }
            (text, None)
        }
        ResponseBody::DeleteTopics(r) => {
            // Kafka shuffles the results (`Collections.shuffle`, so that positions tell
            // nothing), ferrokraft too with its own generator: compared as a sorted list, each
            // known topic id shown as the name it stands for.
            let mut lines: Vec<String> = r
                .responses
                .iter()
                .map(|t| {
                    let id = match ids.name_of(&t.topic_id) {
                        Some(name) => format!("<id of {name}>"),
                        None => t.topic_id.to_string(),
                    };
                    format!(
                        "name {:?} id {id} error {} {:?}",
                        t.name.as_ref().map(|n| n.0.to_string()),
                        t.error_code,
                        t.error_message.as_ref().map(|m| m.to_string())
                    )
                })
                .collect();
            lines.sort();
            (
                format!(
                    "DeleteTopicsResponse throttle {} {lines:?}",
                    r.throttle_time_ms
                ),
                None,
            )
        }
        ResponseBody::CreateDelegationToken(r) => {
            // compare.rs: the token id by creation order, the HMAC checked and named.
            let mut r = r.clone();
            let id = r.token_id.to_string();
            let name = ids.names.get(&id).cloned();
            let hmac_ok = !id.is_empty() && compare::token_config().hmac(&id) == r.hmac.to_vec();
            if let Some(name) = name {
                r.token_id =
                    kafka_protocol::protocol::StrBytes::from_string(format!("<id of {name}>"));
                if hmac_ok {
                    r.hmac = Bytes::from_static(b"<hmac of the token>");
                }
            }
            (format!("{r:?}"), None)
        }
        ResponseBody::DeleteAcls(r) => {
            // compare.rs: each filter's matching ACLs come in the order of Kafka's HashMap
            // keyed by random ACL ids.
            let mut r = r.clone();
            for f in &mut r.filter_results {
                f.matching_acls.sort_by_key(|a| format!("{a:?}"));
            }
            (format!("{r:?}"), None)
        }
        other => (format!("{other:?}"), None),
    }
}

/// AlterConfigs answers (both APIs): the answers ControllerApis gives itself (unknown
/// resource types, duplicates) stay first in request order; the controller's results after
/// them, in the order of a HashMap keyed by ConfigResource (random per JVM), are sorted by
/// resource. `view` gives (error code, message, resource type, name).
fn sort_after_kafka_refusals<T>(items: &mut [T], view: impl Fn(&T) -> (i16, &str, i8, &str)) {
    let head = items
        .iter()
        .take_while(|x| {
            let (code, m, _, _) = view(x);
            (code == 35 && m.starts_with("Unknown resource type"))
                || (code == 42 && m == "Duplicate resource.")
        })
        .count();
    items[head..].sort_by(|a, b| {
        let (_, _, at, an) = view(a);
        let (_, _, bt, bn) = view(b);
        (at, an).cmp(&(bt, bn))
    });
}

fn decode_kafka(key: i16, version: i16, hex: &str) -> ResponseBody {
    let mut buf = Bytes::from(kafka_side::unhex(hex));
    let api = ApiKey::try_from(key).expect("an API key");
    ResponseBody::decode(api, version, &mut buf).expect("decode Kafka's answer")
}

/// ferrokraft's answer as it goes on the wire, decoded back (what a client sees).
fn on_the_wire(body: ResponseBody, version: i16) -> ResponseBody {
    let mut buf = bytes::BytesMut::new();
    body.encode(version, &mut buf).expect("encode");
    ResponseBody::decode(body.api_key(), version, &mut buf.freeze()).expect("decode")
}

/// The records of a step with each run of `kind` records in topic-name order (compare.rs
/// says for which steps and why).
fn by_topic(o: Outcome, kind: &str) -> Outcome {
    Outcome {
        response: o.response,
        records: compare::topic_order_normalised(o.records, kind),
    }
}

/// Exception X2 (compare.rs): an ElectLeaders answer's results sorted by topic. The answer
/// was rendered with `{:?}`; its results are re-sorted as text, one `ReplicaElectionResult`
/// each.
fn sorted_elections(o: Outcome) -> Outcome {
    let response = o.response.map(|text| {
        let Some(start) = text.find("replica_election_results: [") else {
            return text;
        };
        let body_start = start + "replica_election_results: [".len();
        let Some(end) = text.rfind("], unknown_tagged_fields") else {
            return text;
        };
        let mut items: Vec<String> = text[body_start..end]
            .split("ReplicaElectionResult {")
            .filter(|x| !x.trim().is_empty())
            .map(|x| format!("ReplicaElectionResult {{{}", x.trim_end_matches([',', ' '])))
            .collect();
        items.sort();
        format!(
            "{}{}{}",
            &text[..body_start],
            items.join(", "),
            &text[end..]
        )
    });
    Outcome {
        response,
        records: o.records,
    }
}

/// Exception X3 (compare.rs): a placement that picked a usable broker which may not join an
/// ISR, on either side.
fn placement_dependent(step: &Step, fo: &Outcome, ko: &Outcome) -> bool {
    const NOT_ACTIVE: &str = "All brokers are currently fenced or in controlled shutdown.";
    matches!(
        step,
        Step::CreateTopics { .. } | Step::CreatePartitions { .. }
    ) && [fo, ko].iter().any(|o| {
        o.response
            .as_deref()
            .is_some_and(|r| r.contains(NOT_ACTIVE))
    })
}

/// Requests per kind: (sent, that wrote records) — what a run covered.
type Tally = BTreeMap<&'static str, (usize, usize)>;

/// Runs `steps` on both sides; the number of requests, or the first divergence.
fn run(steps: &[Step], kafka: &mut KafkaSide, tally: &mut Tally) -> Result<usize, Box<Divergence>> {
    let Answer::Ok(cluster_id, k_records) = kafka.call("NEW") else {
        panic!("NEW answered PLACEMENT")
    };
    let (mut f, f_records) = ferro::Ferro::new(&cluster_id);
    let (mut fs, mut ks) = (Side::default(), Side::default());
    let fo = fs.ids.unanswered(&bytes_of(f_records));
    let ko = ks.ids.unanswered(&k_records);
    if fo != ko {
        return Err(Box::new(Divergence {
            step: None,
            what: "activation records".into(),
            ferrokraft: fo,
            kafka: ko,
        }));
    }
    let mut requests = 0;
    for (i, step) in steps.iter().enumerate() {
        let (fo, ko) = match step {
            Step::Time(ms) => {
                let fr = bytes_of(f.advance(*ms));
                let Answer::Ok(_, kr) = kafka.call(&format!("TIME {ms}")) else {
                    panic!("TIME answered PLACEMENT")
                };
                (fs.ids.unanswered(&fr), ks.ids.unanswered(&kr))
            }
            Step::Part(gen_partitions::PartStep::Failover { restart }) => {
                let fr = bytes_of(f.failover(*restart));
                let line = format!("FAILOVER {}", if *restart { "restart" } else { "resign" });
                let Answer::Ok(_, kr) = kafka.call(&line) else {
                    panic!("FAILOVER answered PLACEMENT")
                };
                (fs.ids.unanswered(&fr), ks.ids.unanswered(&kr))
            }
            _ => {
                requests += 1;
                let image = f.c.committed_image();
                let (fbody, version) =
                    requests::request(step, &cluster_id, &fs.epochs, &fs.ids, image).unwrap();
                let (kbody, _) =
                    requests::request(step, &cluster_id, &ks.epochs, &ks.ids, image).unwrap();
                let (key, kbytes) = requests::encode(&kbody, version);
                let (fresp, fr) = f.request(fbody, version);
                let fresp = on_the_wire(fresp, version);
                let fr = bytes_of(fr);
                let hint = match step {
                    Step::CreateTopics { topics, .. } => {
                        let placed: Vec<String> = topics
                            .iter()
                            .filter(|t| t.assignments.is_none())
                            .map(|t| t.name.clone())
                            .collect();
                        compare::placement_hint(&fr, &placed)
                    }
                    Step::CreatePartitions { topics, .. } => {
                        let explicit: Vec<String> = topics
                            .iter()
                            .filter(|t| t.assignments.is_some())
                            .filter_map(|t| fs.ids.latest.get(&t.name))
                            .map(ferrokraft::common::uuid::uuid_to_kafka_string)
                            .collect();
                        compare::new_partitions_hint(&fr, &explicit)
                    }
                    _ => None,
                };
                let line = format!(
                    "REQ {key} {version} {}{}",
                    kafka_side::hex(&kbytes),
                    hint.map(|h| format!(" {h}")).unwrap_or_default()
                );
                let frecords = fs.ids.records(&fr);
                let (fshown, fepoch) = compare_partitions::render(step, &fresp)
                    .map_or_else(|| render(&fresp, &fs.ids), |r| (r, None));
                let fo = Outcome {
                    response: Some(fshown),
                    records: frecords,
                };
                let (khex, kr) = match kafka.call(&line) {
                    Answer::Ok(h, r) => (h, r),
                    Answer::Placement(why) => {
                        if placement_dependent(step, &fo, &fo) {
                            // Exception X3 (compare.rs): ferrokraft placed some partitions of
                            // a topic before one it refused; Kafka's placer, given those,
                            // places the whole topic at once.
                            tally.entry("inconclusive (X3)").or_default().0 += 1;
                            return Ok(requests);
                        }
                        return Err(Box::new(Divergence {
                            step: Some(i),
                            what: format!("ferrokraft's placement breaks Kafka's placer: {why}"),
                            ferrokraft: fo,
                            kafka: Outcome::default(),
                        }));
                    }
                };
                let kresp = decode_kafka(key, version, &khex);
                let krecords = ks.ids.records(&kr);
                let (kshown, kepoch) = compare_partitions::render(step, &kresp)
                    .map_or_else(|| render(&kresp, &ks.ids), |r| (r, None));
                if let (Step::Register { broker, .. }, Some(e)) = (step, fepoch) {
                    fs.epochs.insert(*broker, e);
                }
                if let (Step::Register { broker, .. }, Some(e)) = (step, kepoch) {
                    ks.epochs.insert(*broker, e);
                }
                (
                    fo,
                    Outcome {
                        response: Some(kshown),
                        records: krecords,
                    },
                )
            }
        };
        let (fo, ko) = if step.is_broker_level() {
            (
                by_topic(fo, "PartitionChangeRecord"),
                by_topic(ko, "PartitionChangeRecord"),
            )
        } else if matches!(
            step,
            Step::IncrementalAlterConfigs { .. } | Step::AlterConfigs { .. }
        ) {
            let (fo, ko) = (compare::by_resource(fo), compare::by_resource(ko));
            match step {
                // Exception X1 (compare.rs).
                Step::AlterConfigs { resources, .. } => {
                    let explicit = |t: i64, n: &str, key: &str| {
                        resources.iter().any(|r| {
                            i64::from(r.resource_type) == t
                                && r.name == n
                                && r.configs.iter().any(|(k, _, _)| k == key)
                        })
                    };
                    (
                        compare::implicit_deletions_sorted(fo, explicit),
                        compare::implicit_deletions_sorted(ko, explicit),
                    )
                }
                _ => (fo, ko),
            }
        } else if matches!(
            step,
            Step::ElectLeaders {
                partitions: None,
                ..
            }
        ) {
            // Exception X2 (compare.rs).
            (
                by_topic(sorted_elections(fo), "PartitionChangeRecord"),
                by_topic(sorted_elections(ko), "PartitionChangeRecord"),
            )
        } else if matches!(step, Step::DeleteTopics { .. }) {
            (
                by_topic(fo, "RemoveTopicRecord"),
                by_topic(ko, "RemoveTopicRecord"),
            )
        } else if matches!(step, Step::Sec(gen_security::SecStep::DeleteAcls { .. })) {
            // compare.rs: Kafka's removals come from a HashSet of records.
            (compare::records_sorted(fo), compare::records_sorted(ko))
        } else {
            (fo, ko)
        };
        let (fo, ko) = (
            compare::runs_sorted(fo, "RemoveDelegationTokenRecord"),
            compare::runs_sorted(ko, "RemoveDelegationTokenRecord"),
        );
        if std::env::var("DIFF_TRACE").is_ok_and(|k| k == step.kind() || k == "*") {
            eprintln!("TRACE {step:?}\n  -> {:?}", fo.response);
        }
        if step.is_request() {
            let e = tally.entry(step.kind()).or_default();
            e.0 += 1;
            e.1 += usize::from(!fo.records.is_empty());
        }
        if fo != ko && placement_dependent(step, &fo, &ko) {
            // Exception X3 (compare.rs): the rest of the sequence compares nothing.
            tally.entry("inconclusive (X3)").or_default().0 += 1;
            return Ok(requests);
        }
        if fo != ko {
            return Err(Box::new(Divergence {
                step: Some(i),
                what: "answer or records".into(),
                ferrokraft: fo,
                kafka: ko,
            }));
        }
    }
    Ok(requests)
}

/// The shortest sequence (dropping steps one at a time while it still diverges), from the
/// divergence `first` the whole sequence showed. One that does not come again when the
/// sequence is run again is reported as it was, marked as such: it depends on something
/// random that no normalisation covers yet.
fn shrink(
    mut steps: Vec<Step>,
    first: Box<Divergence>,
    kafka: &mut KafkaSide,
) -> (Vec<Step>, Box<Divergence>) {
    if let Some(at) = first.step {
        steps.truncate(at + 1);
    }
    let mut last = match run(&steps, kafka, &mut Tally::new()) {
        Err(d) => d,
        Ok(_) => {
            let mut first = first;
            first.what += "; it did not come again when the sequence was run again";
            return (steps, first);
        }
    };
    if let Some(at) = last.step {
        steps.truncate(at + 1);
    }
    let mut i = 0;
    while i < steps.len() {
        let mut candidate = steps.clone();
        candidate.remove(i);
        match run(&candidate, kafka, &mut Tally::new()) {
            Err(d) => {
                steps = candidate;
                if let Some(at) = d.step {
                    steps.truncate(at + 1);
                }
                last = d;
            }
            Ok(_) => i += 1,
        }
    }
    (steps, last)
}

fn report(seed: u64, steps: &[Step], d: &Divergence) -> String {
    let mut out = format!("seed {seed}: divergence ({}) ", d.what);
    match d.step {
        Some(i) => out += &format!("at step {i} of this shortest sequence:\n"),
        None => out += "at activation\n",
    }
    for (i, s) in steps.iter().enumerate() {
        out += &format!("  {i}: {s:?}\n");
    }
    for (who, o) in [("ferrokraft", &d.ferrokraft), ("Kafka 4.1.2", &d.kafka)] {
        out += &format!("{who} answered: {}\n", o.response.as_deref().unwrap_or("-"));
        out += &format!("{who} wrote {} records:\n", o.records.len());
        for r in &o.records {
            out += &format!("    {r}\n");
        }
    }
    out
}

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a number")),
        Err(_) => default,
    }
}

#[test]
fn random_sequences_match_kafkas_quorum_controller() {
    let seeds = env_u64("DIFF_SEEDS", 300);
    let base = env_u64("DIFF_SEED_BASE", 1);
    let mut kafka = KafkaSide::start();
    let mut requests = 0;
    let mut tally = Tally::new();
    let mut divergences = Vec::new();
    let mut bad = bad_input::BadTally::new();
    match bad_input::check_strings(&mut kafka) {
        Ok(n) => eprintln!("bad input: {n} strings that are not UTF-8 read alike"),
        Err(text) => divergences.push(text),
    }
    for seed in base..base + seeds {
        let steps = gen::sequence(seed);
        if let Err(text) = bad_input::check(seed, &steps, &mut kafka, &mut bad) {
            eprintln!("{text}");
            divergences.push(text);
        }
        match run(&steps, &mut kafka, &mut tally) {
            Ok(n) => requests += n,
            Err(first) => {
                let (short, d) = shrink(steps.clone(), first, &mut kafka);
                let text = report(seed, &short, &d);
                eprintln!("{text}");
                divergences.push(text);
                requests += steps.iter().filter(|s| s.is_request()).count();
            }
        }
        // A long run shows how far it got (stderr), so that one stopped early still says so.
        let done = seed - base + 1;
        if done.is_multiple_of(5_000) && done < seeds {
            eprintln!(
                "progress: {done} of {seeds} sequences, {requests} requests, {} divergences so far",
                divergences.len()
            );
        }
    }
    let covered: Vec<String> = tally
        .iter()
        .map(|(k, (n, w))| format!("{k} {n} ({w} wrote records)"))
        .collect();
    eprintln!("covered: {}", covered.join(", "));
    let bad: Vec<String> = bad
        .iter()
        .map(|(k, (n, r))| format!("{k:?} {n} ({r} refused by both)"))
        .collect();
    eprintln!("bad input: {}", bad.join(", "));
    println!(
        "differential fuzz: {seeds} sequences, {requests} requests, {} divergences",
        divergences.len()
    );
    assert!(
        divergences.is_empty(),
        "{} divergences; the first:\n{}",
        divergences.len(),
        divergences[0]
    );
}
