//! Bad input at the codec (issue #36, "Bad input"): each request of a sequence, damaged, is
//! handed to Kafka 4.1.2's request parser (`AbstractRequest.parseRequest`, what
//! `RequestContext.parseRequest` runs before a controller sees anything) and to ferrokraft's
//! (`codec::request::decode_request` and `parse_check`, what the listener runs). Both must
//! refuse it (Kafka closes the connection; so does ferrokraft), or both accept it and read
//! the same request: each side's reading, re-encoded at the version, must be the same bytes
//! (unless Kafka cannot write its reading back: then acceptance alone is compared).
//!
//! ```text
//!   step ─requests.rs─▶ body ─damage(seed)─▶ body' ─┬─▶ PARSE api ver body' (JVM) ─▶ refused | bytes
//!                                                  └─▶ header + body' ─▶ decode_request
//!                                                       + parse_check ─▶ refused | bytes
//! ```
//!
//! The damage: a truncation, a byte replaced, a byte inserted, bytes appended (trailing bytes
//! are ignored by both), a byte set to 0xff (lengths and varints that claim too much), or a
//! random body. The requests are built against an empty image (their bytes, not their
//! meaning, are the point here).

use bytes::Bytes;
use ferrokraft::codec::request::{decode_request, encode_request, parse_check, InboundRequest};
use ferrokraft::metadata::image::MetadataImage;
use ferrokraft::raft::Rng;

use crate::compare::Ids;
use crate::gen::Step;
use crate::kafka_side::{hex, Answer, KafkaSide};

/// How a body was damaged (for the report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Damage {
    Truncated,
    Replaced,
    Inserted,
    Appended,
    Saturated,
    Random,
}

fn damage(rng: &mut Rng, body: &[u8]) -> (Damage, Vec<u8>) {
    let mut b = body.to_vec();
    let at = |rng: &mut Rng, n: usize| rng.below(n.max(1) as u64) as usize;
    let kind = match rng.below(6) {
        0 if !b.is_empty() => {
            let n = at(rng, b.len());
            b.truncate(n);
            Damage::Truncated
        }
        1 if !b.is_empty() => {
            let i = at(rng, b.len());
            b[i] = rng.below(256) as u8;
            Damage::Replaced
        }
        2 => {
            let i = at(rng, b.len() + 1);
            b.insert(i.min(b.len()), rng.below(256) as u8);
            Damage::Inserted
        }
        3 => {
            for _ in 0..1 + rng.below(8) {
                b.push(rng.below(256) as u8);
            }
            Damage::Appended
        }
        4 if !b.is_empty() => {
            let i = at(rng, b.len());
            b[i] = 0xff;
            Damage::Saturated
        }
        _ => {
            b = (0..rng.below(40)).map(|_| rng.below(256) as u8).collect();
            Damage::Random
        }
    };
    (kind, b)
}

/// ferrokraft's reading of `body` as a request of `api` at `version`: the body re-encoded,
/// or the refusal.
fn ferrokraft_reads(
    template: &Bytes,
    body_len: usize,
    body: &[u8],
    version: i16,
) -> Result<Vec<u8>, String> {
    // The template frame: size prefix, header, the undamaged body.
    let header = &template[4..template.len() - body_len];
    let mut frame = header.to_vec();
    frame.extend_from_slice(body);
    match decode_request(Bytes::from(frame)) {
        Ok(InboundRequest::Request { body, .. }) => {
            parse_check(&body)?;
            let mut out = bytes::BytesMut::new();
            body.encode(version, &mut out)
                .map_err(|e| format!("re-encode: {e:?}"))?;
            Ok(out.to_vec())
        }
        Ok(other) => Err(format!("not a request: {other:?}")),
        Err(e) => Err(format!("{e}")),
    }
}

/// Per damage kind: (bodies compared, refused by both).
pub type BadTally = std::collections::BTreeMap<Damage, (usize, usize)>;

/// Damages each request of `steps` once; the first disagreement, described.
pub fn check(
    seed: u64,
    steps: &[Step],
    kafka: &mut KafkaSide,
    tally: &mut BadTally,
) -> Result<(), String> {
    let mut rng = Rng::new(seed ^ 0x0bad_1e57);
    let image = MetadataImage::default();
    let (epochs, ids) = (Default::default(), Ids::default());
    for step in steps.iter().filter(|s| s.is_request()) {
        let Some((body, version)) =
            crate::requests::request(step, "difffuzz", &epochs, &ids, &image)
        else {
            continue;
        };
        let (key, bytes) = crate::requests::encode(&body, version);
        let template = encode_request(&body, version, 1, "difffuzz").expect("encode");
        let (kind, damaged) = damage(&mut rng, &bytes);
        let ours = ferrokraft_reads(&template, bytes.len(), &damaged, version);
        let Answer::Ok(theirs, _) = kafka.call(&format!("PARSE {key} {version} {}", hex(&damaged)))
        else {
            panic!("PARSE answered PLACEMENT")
        };
        let e = tally.entry(kind).or_default();
        e.0 += 1;
        let agree = match (&ours, theirs.as_str()) {
            (Err(_), t) if t.starts_with("refused:") => {
                e.1 += 1;
                true
            }
            (Ok(b), "-") => b.is_empty(),
            // Accepted by both; Kafka cannot write its reading back (an unknown tagged field
            // twice: Kafka keeps both, ferrokraft the last), so only acceptance is compared.
            (Ok(_), t) if t.starts_with("unwritable:") => true,
            (Ok(b), t) => !t.starts_with("refused:") && hex(b) == t,
            (Err(_), _) => false,
        };
        if !agree {
            return Err(format!(
                "seed {seed}: bad input ({kind:?}) read differently: {} v{version}\n  body: {}\n  \
                 ferrokraft: {}\n  Kafka 4.1.2: {theirs}",
                step.kind(),
                hex(&damaged),
                match &ours {
                    Ok(b) => format!("accepted, re-encoded {}", hex(b)),
                    Err(e) => format!("refused: {e}"),
                },
            ));
        }
    }
    Ok(())
}

/// Byte sequences that are not UTF-8, four bytes each: Kafka reads a string with Java's
/// `new String(bytes, UTF_8)`, which replaces what is malformed with U+FFFD (the request is
/// accepted); how many bytes one replacement covers is the JDK's rule, which ferrokraft's
/// decoder follows. Each is put in a CreateAcls resource name and both readings compared.
const NOT_UTF8: [[u8; 4]; 16] = [
    [0xed, 0xa0, 0x80, 0x41], // a surrogate, encoded
    [0x41, 0xed, 0xbf, 0xbf], // a surrogate at the end
    [0xe2, 0x82, 0x41, 0x42], // a 3-byte sequence broken after 2
    [0xe0, 0x80, 0x80, 0x41], // overlong, 3 bytes
    [0xc0, 0x80, 0x41, 0x42], // overlong, 2 bytes
    [0xc2, 0x41, 0x42, 0x43], // a 2-byte sequence broken after 1
    [0xf0, 0x80, 0x80, 0x80], // overlong, 4 bytes
    [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
    [0xf5, 0x80, 0x80, 0x80], // a lead byte no code point has
    [0xf8, 0x88, 0x80, 0x80], // a 5-byte form
    [0xf0, 0x90, 0x80, 0x41], // a 4-byte sequence broken after 3
    [0x41, 0x42, 0x43, 0xe2], // a 3-byte lead at the end
    [0x41, 0x42, 0xf0, 0x90], // a 4-byte sequence cut by the end after 2
    [0x41, 0xf0, 0x90, 0x80], // after 3
    [0x41, 0x42, 0x43, 0xff], // a byte UTF-8 never uses
    [0x80, 0xbf, 0x41, 0x42], // continuation bytes alone
];

/// Each of [`NOT_UTF8`] in a CreateAcls v1 (int16 lengths) and v2 (compact) resource name;
/// the first disagreement, described.
pub fn check_strings(kafka: &mut KafkaSide) -> Result<usize, String> {
    use ferrokraft::codec::RequestBody;
    use kafka_protocol::messages::create_acls_request::AclCreation;
    use kafka_protocol::messages::CreateAclsRequest;
    use kafka_protocol::protocol::StrBytes;
    let mut compared = 0;
    for version in [1, 2] {
        let body = RequestBody::CreateAcls(CreateAclsRequest::default().with_creations(vec![
            AclCreation::default()
                .with_resource_type(2)
                .with_resource_name(StrBytes::from_static_str("@@@@"))
                .with_resource_pattern_type(3)
                .with_principal(StrBytes::from_static_str("User:a"))
                .with_host(StrBytes::from_static_str("*"))
                .with_operation(3)
                .with_permission_type(3),
        ]));
        let (key, bytes) = crate::requests::encode(&body, version);
        let template = encode_request(&body, version, 1, "difffuzz").expect("encode");
        let at = bytes
            .windows(4)
            .position(|w| w == b"@@@@")
            .expect("the placeholder");
        for pattern in NOT_UTF8 {
            let mut damaged = bytes.clone();
            damaged[at..at + 4].copy_from_slice(&pattern);
            let ours = ferrokraft_reads(&template, bytes.len(), &damaged, version);
            let Answer::Ok(theirs, _) =
                kafka.call(&format!("PARSE {key} {version} {}", hex(&damaged)))
            else {
                panic!("PARSE answered PLACEMENT")
            };
            compared += 1;
            if ours.as_ref().map(|b| hex(b)).as_deref() != Ok(theirs.as_str()) {
                return Err(format!(
                    "a string of bytes {} in CreateAcls v{version} read differently:\n  \
                     ferrokraft: {ours:?}\n  Kafka 4.1.2: {theirs}",
                    hex(&pattern)
                ));
            }
        }
    }
    Ok(compared)
}
