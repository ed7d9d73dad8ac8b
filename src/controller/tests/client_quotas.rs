//! ClientQuotaControlManagerTest (Kafka's tests of the controller's client quotas), against
//! the whole controller: requests in, committed records and answers out.
#![allow(clippy::unwrap_used)]

use kafka_protocol::messages::alter_client_quotas_request::{EntityData, EntryData, OpData};
use kafka_protocol::messages::{AlterClientQuotasRequest, AlterClientQuotasResponse};
use kafka_protocol::protocol::StrBytes;

use super::context::Ctx;
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::errors;
use crate::metadata::record::MetadataRecord;

const MV: i16 = crate::common::release::mv::V4_1_IV1;

/// (entity, value) pairs of the records written.
type Written = Vec<(Vec<(String, Option<String>)>, f64)>;

fn entity(parts: &[(&str, Option<&str>)]) -> Vec<EntityData> {
    parts
        .iter()
        .map(|(t, n)| {
            EntityData::default()
                .with_entity_type(StrBytes::from_string(t.to_string()))
                .with_entity_name(n.map(|n| StrBytes::from_string(n.to_string())))
        })
        .collect()
}

/// `Some(v)` sets the key, `None` removes it.
fn ops(parts: &[(&str, Option<f64>)]) -> Vec<OpData> {
    parts
        .iter()
        .map(|(k, v)| {
            OpData::default()
                .with_key(StrBytes::from_string(k.to_string()))
                .with_value(v.unwrap_or(0.0))
                .with_remove(v.is_none())
        })
        .collect()
}

fn entry(e: &[(&str, Option<&str>)], o: &[(&str, Option<f64>)]) -> EntryData {
    EntryData::default().with_entity(entity(e)).with_ops(ops(o))
}

fn alter_with(
    ctx: &mut Ctx,
    entries: Vec<EntryData>,
    validate_only: bool,
) -> AlterClientQuotasResponse {
    let req = AlterClientQuotasRequest::default()
        .with_entries(entries)
        .with_validate_only(validate_only);
    match ctx.call(RequestBody::AlterClientQuotas(req), 1) {
        ResponseBody::AlterClientQuotas(r) => r,
        other => panic!("{other:?}"),
    }
}

fn alter(ctx: &mut Ctx, entries: Vec<EntryData>) -> AlterClientQuotasResponse {
    alter_with(ctx, entries, false)
}

/// (error code, message) of the answer's only entry.
fn only(r: &AlterClientQuotasResponse) -> (i16, Option<String>) {
    assert_eq!(r.entries.len(), 1, "{r:?}");
    let e = &r.entries[0];
    (
        e.error_code,
        e.error_message.as_ref().map(|m| m.to_string()),
    )
}

/// The quotas the committed image holds for an entity.
fn held(ctx: &Ctx, e: &[(&str, Option<&str>)]) -> Option<Vec<(String, f64)>> {
    let key = e
        .iter()
        .map(|(t, n)| (t.to_string(), n.map(str::to_string)))
        .collect();
    ctx.image()
        .client_quotas
        .get(&key)
        .map(|q| q.iter().map(|(k, v)| (k.clone(), *v)).collect())
}

/// The ClientQuotaRecords written since log offset `from`.
fn quota_records(ctx: &Ctx, from: i64) -> Vec<crate::metadata::records::ClientQuotaRecord> {
    ctx.log
        .records_from(from)
        .into_iter()
        .filter_map(|r| match r {
            MetadataRecord::ClientQuota(q) => Some(q),
            _ => None,
        })
        .collect()
}

const USER_1: &[(&str, Option<&str>)] = &[("user", Some("user-1"))];

fn assert_invalid(ctx: &mut Ctx, e: &[(&str, Option<&str>)], o: &[(&str, Option<f64>)]) {
    let from = ctx.log.end();
    let r = alter(ctx, vec![entry(e, o)]);
    assert_eq!(only(&r).0, errors::INVALID_REQUEST, "{e:?} {o:?}: {r:?}");
    assert!(quota_records(ctx, from).is_empty());
}

#[test]
fn test_invalid_entity_types() {
    let mut ctx = Ctx::active(MV);
    let rate = [("producer_byte_rate", Some(10000.0))];
    assert_invalid(&mut ctx, &[("foo", Some("bar"))], &rate);
    assert_invalid(
        &mut ctx,
        &[("user", Some("user-1")), ("foo", Some("bar"))],
        &rate,
    );
    assert_invalid(
        &mut ctx,
        &[("foo", Some("bar")), ("ip", Some("1.2.3.4"))],
        &rate,
    );
    assert_invalid(
        &mut ctx,
        &[("user", Some("user-1")), ("ip", Some("1.2.3.4"))],
        &rate,
    );
    assert_invalid(
        &mut ctx,
        &[("client-id", Some("user-1")), ("ip", Some("1.2.3.4"))],
        &rate,
    );
    assert_invalid(&mut ctx, &[], &rate);
    assert!(ctx.image().client_quotas.is_empty());
}

#[test]
fn test_invalid_quota_keys() {
    let mut ctx = Ctx::active(MV);
    assert_invalid(
        &mut ctx,
        USER_1,
        &[
            ("not.a.quota.key", Some(0.0)),
            ("request_percentage", Some(99.9)),
        ],
    );
    assert_invalid(
        &mut ctx,
        USER_1,
        &[
            ("request_percentage", Some(99.9)),
            ("not.a.quota.key", Some(0.0)),
        ],
    );
    // An ip key on a user entity, a user key on an ip entity.
    assert_invalid(&mut ctx, USER_1, &[("connection_creation_rate", Some(5.0))]);
    assert_invalid(
        &mut ctx,
        &[("ip", Some("1.2.3.4"))],
        &[("producer_byte_rate", Some(5.0))],
    );
    assert!(ctx.image().client_quotas.is_empty());
}

#[test]
fn test_alter_and_remove() {
    let mut ctx = Ctx::active(MV);
    let ok = |r: &AlterClientQuotasResponse| assert_eq!(only(r), (errors::NONE, None), "{r:?}");
    ok(&alter(
        &mut ctx,
        vec![entry(USER_1, &[("producer_byte_rate", Some(10000.0))])],
    ));
    assert_eq!(
        held(&ctx, USER_1),
        Some(vec![("producer_byte_rate".into(), 10000.0)])
    );

    // Replace it and add another.
    ok(&alter(
        &mut ctx,
        vec![entry(
            USER_1,
            &[
                ("producer_byte_rate", Some(10001.0)),
                ("consumer_byte_rate", Some(20000.0)),
            ],
        )],
    ));
    assert_eq!(
        held(&ctx, USER_1),
        Some(vec![
            ("consumer_byte_rate".into(), 20000.0),
            ("producer_byte_rate".into(), 10001.0)
        ])
    );

    // Remove one; the other stays.
    ok(&alter(
        &mut ctx,
        vec![entry(USER_1, &[("producer_byte_rate", None)])],
    ));
    assert_eq!(
        held(&ctx, USER_1),
        Some(vec![("consumer_byte_rate".into(), 20000.0)])
    );

    // Removing a quota not held changes nothing and writes nothing.
    let from = ctx.log.end();
    ok(&alter(
        &mut ctx,
        vec![entry(USER_1, &[("request_percentage", None)])],
    ));
    assert!(quota_records(&ctx, from).is_empty());
    assert_eq!(
        held(&ctx, USER_1),
        Some(vec![("consumer_byte_rate".into(), 20000.0)])
    );

    // The last quota removed takes the entity out of the image.
    ok(&alter(
        &mut ctx,
        vec![entry(USER_1, &[("consumer_byte_rate", None)])],
    ));
    assert_eq!(held(&ctx, USER_1), None);
    ok(&alter(
        &mut ctx,
        vec![entry(USER_1, &[("consumer_byte_rate", None)])],
    ));
    assert_eq!(held(&ctx, USER_1), None);

    // Mixed update.
    ok(&alter(
        &mut ctx,
        vec![entry(
            USER_1,
            &[
                ("request_percentage", Some(99.0)),
                ("controller_mutation_rate", None),
                ("producer_byte_rate", Some(10002.0)),
                ("consumer_byte_rate", Some(20001.0)),
            ],
        )],
    ));
    assert_eq!(
        held(&ctx, USER_1),
        Some(vec![
            ("consumer_byte_rate".into(), 20001.0),
            ("producer_byte_rate".into(), 10002.0),
            ("request_percentage".into(), 99.0)
        ])
    );
}

#[test]
fn an_unchanged_value_writes_no_record() {
    let mut ctx = Ctx::active(MV);
    alter(
        &mut ctx,
        vec![entry(USER_1, &[("producer_byte_rate", Some(100.0))])],
    );
    let from = ctx.log.end();
    let r = alter(
        &mut ctx,
        vec![entry(USER_1, &[("producer_byte_rate", Some(100.0))])],
    );
    assert_eq!(only(&r), (errors::NONE, None));
    assert!(quota_records(&ctx, from).is_empty());
}

#[test]
fn test_entity_types() {
    let mut ctx = Ctx::active(MV);
    type Case<'a> = (Vec<(&'a str, Option<&'a str>)>, f64);
    let cases: Vec<Case> = vec![
        (
            vec![("user", Some("user-1")), ("client-id", Some("client-id-1"))],
            50.50,
        ),
        (
            vec![("user", Some("user-2")), ("client-id", Some("client-id-1"))],
            51.51,
        ),
        (
            vec![("user", Some("user-3")), ("client-id", Some("client-id-2"))],
            52.52,
        ),
        (
            vec![("user", None), ("client-id", Some("client-id-1"))],
            53.53,
        ),
        (vec![("user", Some("user-1")), ("client-id", None)], 54.54),
        (vec![("user", Some("user-3")), ("client-id", None)], 55.55),
        (vec![("user", Some("user-1"))], 56.56),
        (vec![("user", Some("user-2"))], 57.57),
        (vec![("user", Some("user-3"))], 58.58),
        (vec![("user", None)], 59.59),
        (vec![("client-id", Some("client-id-2"))], 60.60),
    ];
    let from = ctx.log.end();
    let r = alter(
        &mut ctx,
        cases
            .iter()
            .map(|(e, v)| entry(e, &[("request_percentage", Some(*v))]))
            .collect(),
    );
    assert_eq!(r.entries.len(), cases.len());
    assert!(
        r.entries.iter().all(|e| e.error_code == errors::NONE),
        "{r:?}"
    );
    let mut written: Written = quota_records(&ctx, from)
        .into_iter()
        .map(|q| {
            assert_eq!(q.key, "request_percentage");
            assert!(!q.remove);
            let mut e: Vec<_> = q
                .entity
                .iter()
                .map(|d| (d.entity_type.clone(), d.entity_name.clone()))
                .collect();
            e.sort();
            (e, q.value)
        })
        .collect();
    written.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut expected: Written = cases
        .iter()
        .map(|(e, v)| {
            let mut e: Vec<_> = e
                .iter()
                .map(|(t, n)| (t.to_string(), n.map(str::to_string)))
                .collect();
            e.sort();
            (e, *v)
        })
        .collect();
    expected.sort_by(|a, b| a.1.total_cmp(&b.1));
    assert_eq!(written, expected);
    for (e, v) in &cases {
        assert_eq!(held(&ctx, e), Some(vec![("request_percentage".into(), *v)]));
    }
}

#[test]
fn test_config_keys_for_entity_type() {
    // testConfigKeysForEntityTypeWith{User,ClientId,UserAndClientId,Ip}: each key of the
    // combination is accepted.
    let mut ctx = Ctx::active(MV);
    let user_keys = [
        "producer_byte_rate",
        "consumer_byte_rate",
        "controller_mutation_rate",
        "request_percentage",
    ];
    let combos: [&[(&str, Option<&str>)]; 3] = [
        &[("user", Some("foo"))],
        &[("client-id", Some("foo"))],
        &[("client-id", Some("foo")), ("user", Some("foo"))],
    ];
    for e in combos {
        for key in user_keys {
            let r = alter(&mut ctx, vec![entry(e, &[(key, Some(1000.0))])]);
            assert_eq!(only(&r), (errors::NONE, None), "{e:?} {key}");
        }
    }
    let ip = [("ip", Some("127.0.0.1"))];
    let r = alter(
        &mut ctx,
        vec![entry(&ip, &[("connection_creation_rate", Some(10.0))])],
    );
    assert_eq!(only(&r), (errors::NONE, None));
    // The default ip entity is valid too (isValidIpEntity(null)).
    let r = alter(
        &mut ctx,
        vec![entry(
            &[("ip", None)],
            &[("connection_creation_rate", Some(10.0))],
        )],
    );
    assert_eq!(only(&r), (errors::NONE, None));
}

fn message(ctx: &mut Ctx, e: &[(&str, Option<&str>)], o: &[(&str, Option<f64>)]) -> String {
    let r = alter(ctx, vec![entry(e, o)]);
    let (code, message) = only(&r);
    assert_eq!(code, errors::INVALID_REQUEST);
    message.unwrap()
}

#[test]
fn test_config_keys_errors() {
    let mut ctx = Ctx::active(MV);
    let rate = [("producer_byte_rate", Some(1.0))];
    // testConfigKeysForEmptyEntity
    assert_eq!(
        message(&mut ctx, &[], &rate),
        "Invalid empty client quota entity"
    );
    // testConfigKeysForEntityTypeWithIpAndUser / WithIpAndClientId
    let combination =
        "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId";
    assert_eq!(
        message(
            &mut ctx,
            &[("ip", Some("127.0.0.1")), ("user", Some("foo"))],
            &rate
        ),
        combination
    );
    assert_eq!(
        message(
            &mut ctx,
            &[("ip", Some("127.0.0.1")), ("client-id", Some("foo"))],
            &rate
        ),
        combination
    );
    // testConfigKeysForUnresolvableIpEntity
    assert_eq!(
        message(
            &mut ctx,
            &[("ip", Some("example.invalid"))],
            &[("connection_creation_rate", Some(1.0))]
        ),
        "example.invalid is not a valid IP or resolvable host."
    );
    assert_eq!(
        message(&mut ctx, &[("foo", Some("bar"))], &rate),
        "Unhandled client quota entity type: foo"
    );
    assert_eq!(
        message(&mut ctx, &[("user", Some(""))], &rate),
        "Empty user not supported"
    );
}

#[test]
fn test_validate_quota_key_value() {
    let mut ctx = Ctx::active(MV);
    let client: &[(&str, Option<&str>)] = &[("client-id", Some("foo"))];
    // testValidateQuotaKeyValueForUnknownQuota
    assert_eq!(
        message(&mut ctx, client, &[("foobar", Some(1.0))]),
        "Invalid configuration key foobar"
    );
    // ForZeroQuota, ForNegativeQuota
    assert_eq!(
        message(&mut ctx, client, &[("producer_byte_rate", Some(0.0))]),
        "Quota producer_byte_rate must be greater than 0"
    );
    assert_eq!(
        message(&mut ctx, client, &[("consumer_byte_rate", Some(-2.0))]),
        "Quota consumer_byte_rate must be greater than 0"
    );
    // ForConsumerByteRateTooLarge
    assert_eq!(
        message(
            &mut ctx,
            client,
            &[("consumer_byte_rate", Some(36_893_488_147_419_103_232.4))]
        ),
        "Proposed value for consumer_byte_rate is too large for a LONG."
    );
    assert_eq!(
        message(
            &mut ctx,
            &[("ip", Some("10.0.0.1"))],
            &[("connection_creation_rate", Some(3_000_000_000.0))]
        ),
        "Proposed value for connection_creation_rate is too large for an INT."
    );
    // ForFractionalConsumerByteRate
    assert_eq!(
        message(&mut ctx, client, &[("consumer_byte_rate", Some(2.245))]),
        "consumer_byte_rate cannot be a fractional value."
    );
    // ForValidConsumerByteRate, ForValidConsumerByteRate2, ForValidRequestPercentage
    for (key, value) in [
        ("consumer_byte_rate", 1234.0),
        ("consumer_byte_rate", 1_235.000_000_1),
        ("request_percentage", 56.623_67),
    ] {
        let r = alter(&mut ctx, vec![entry(client, &[(key, Some(value))])]);
        assert_eq!(only(&r), (errors::NONE, None), "{key} {value}");
    }
}

#[test]
fn a_duplicate_key_or_entity_is_refused_as_kafka_words_it() {
    let mut ctx = Ctx::active(MV);
    let from = ctx.log.end();
    // A key twice: Kafka reports the entity as a duplicate (its duplicate-key error is in the
    // results already when the entity is looked up there).
    let r = alter(
        &mut ctx,
        vec![entry(
            USER_1,
            &[
                ("producer_byte_rate", Some(1.0)),
                ("producer_byte_rate", Some(2.0)),
            ],
        )],
    );
    assert_eq!(
        only(&r),
        (
            errors::INVALID_REQUEST,
            Some("Ignoring duplicate entity ClientQuotaEntity(entries={user=user-1})".into())
        )
    );
    // The same entity twice: the first is applied, the second refused.
    let r = alter(
        &mut ctx,
        vec![
            entry(USER_1, &[("producer_byte_rate", Some(1.0))]),
            entry(USER_1, &[("consumer_byte_rate", Some(2.0))]),
        ],
    );
    assert_eq!(only(&r).0, errors::INVALID_REQUEST);
    let records = quota_records(&ctx, from);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(
        held(&ctx, USER_1),
        Some(vec![("producer_byte_rate".into(), 1.0)])
    );
}

#[test]
fn validate_only_answers_and_writes_nothing() {
    let mut ctx = Ctx::active(MV);
    let from = ctx.log.end();
    let r = alter_with(
        &mut ctx,
        vec![
            entry(USER_1, &[("producer_byte_rate", Some(1.0))]),
            entry(&[("foo", Some("x"))], &[("producer_byte_rate", Some(1.0))]),
        ],
        true,
    );
    let mut codes: Vec<i16> = r.entries.iter().map(|e| e.error_code).collect();
    codes.sort();
    assert_eq!(codes, vec![errors::NONE, errors::INVALID_REQUEST]);
    assert!(quota_records(&ctx, from).is_empty());
    assert!(ctx.image().client_quotas.is_empty());
}

#[test]
fn answers_list_entities_in_kafkas_hash_map_order() {
    // Kafka answers from a HashMap keyed by ClientQuotaEntity. The expected order is what
    // Java 17 iterates for these six entities put in this order (a HashMap<ClientQuotaEntity,
    // _> printed with Kafka 4.1.2's kafka-clients), whatever the request's order.
    let mut ctx = Ctx::active(MV);
    let rate = [("producer_byte_rate", Some(1.0))];
    let given = [
        ("user", "a"),
        ("client-id", "c"),
        ("user", "b"),
        ("user", "alice"),
        ("client-id", "producer-1"),
        ("ip", "10.0.0.1"),
    ];
    let r = alter(
        &mut ctx,
        given
            .iter()
            .map(|(t, n)| entry(&[(t, Some(n))], &rate))
            .collect(),
    );
    let names: Vec<String> = r
        .entries
        .iter()
        .map(|e| {
            let d = &e.entity[0];
            format!("{}={}", d.entity_type, d.entity_name.as_ref().unwrap())
        })
        .collect();
    assert_eq!(
        names,
        [
            "user=alice",
            "client-id=c",
            "client-id=producer-1",
            "ip=10.0.0.1",
            "user=b",
            "user=a"
        ]
    );
}

#[test]
fn records_name_user_then_client_id_as_kafka_does() {
    // A validated entity is a HashMap of capacity 3: Java iterates {client-id, user}.
    let mut ctx = Ctx::active(MV);
    let from = ctx.log.end();
    alter(
        &mut ctx,
        vec![entry(
            &[("user", Some("u")), ("client-id", Some("c"))],
            &[("producer_byte_rate", Some(1.0))],
        )],
    );
    let records = quota_records(&ctx, from);
    let types: Vec<&str> = records[0]
        .entity
        .iter()
        .map(|d| d.entity_type.as_str())
        .collect();
    assert_eq!(types, ["client-id", "user"]);
}

#[test]
fn not_controller_answers_every_entry_with_the_default_message() {
    let mut ctx = Ctx::active(MV);
    ctx.lose_leadership(2);
    let req = AlterClientQuotasRequest::default().with_entries(vec![
        entry(USER_1, &[("producer_byte_rate", Some(1.0))]),
        entry(
            &[("client-id", Some("c"))],
            &[("producer_byte_rate", Some(1.0))],
        ),
    ]);
    let id = ctx.send(RequestBody::AlterClientQuotas(req), 1);
    let Some(ResponseBody::AlterClientQuotas(r)) = ctx.answer(id) else {
        panic!("answered at once");
    };
    assert_eq!(r.entries.len(), 2);
    for e in &r.entries {
        assert_eq!(e.error_code, errors::NOT_CONTROLLER);
        assert_eq!(
            e.error_message.as_deref(),
            Some("This is not the correct controller for this cluster.")
        );
    }
    assert_eq!(r.entries[1].entity[0].entity_type.as_str(), "client-id");
}

#[test]
fn an_empty_request_is_answered_at_once_even_by_a_standby() {
    let mut ctx = Ctx::active(MV);
    ctx.lose_leadership(2);
    let id = ctx.send(
        RequestBody::AlterClientQuotas(AlterClientQuotasRequest::default()),
        1,
    );
    let Some(ResponseBody::AlterClientQuotas(r)) = ctx.answer(id) else {
        panic!("answered at once");
    };
    assert!(r.entries.is_empty());
    assert_eq!(r.throttle_time_ms, 0);
}
