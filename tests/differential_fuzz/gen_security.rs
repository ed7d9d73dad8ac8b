//! Generators for the security and quota steps (issue #36 part 2): CreateAcls, DeleteAcls,
//! AlterClientQuotas and AlterUserScramCredentials. requests_security.rs turns each into a
//! request (the same on both sides: none of them carries an epoch or a topic id).
//!
//! ```text
//!   gen.rs step() ──(some draws)──▶ step() here ─▶ Step::Sec(SecStep)
//! ```
//!
//! The values come from small sets so that requests meet what earlier ones stored (a
//! DeleteAcls filter that matches, a quota removed, a credential replaced), and include
//! every refusal the controller makes: ANY/MATCH enums in a creation, the CLUSTER resource's
//! one name, empty names, a principal without a colon, unknown filter enums, duplicate quota
//! keys and entities, bad entity types and values, unknown SCRAM mechanisms, too few or too
//! many iterations, a user named twice, enum codes no enum defines (Kafka reads them as
//! UNKNOWN and its controller refuses them). The code 0 (UNKNOWN itself), which Kafka's
//! request parser refuses, is left to bad_input.rs: such a request never reaches a controller.

use ferrokraft::raft::Rng;

/// One CreateAcls creation or DeleteAcls filter, as codes and strings.
#[derive(Debug, Clone)]
pub struct AclSpec {
    pub resource_type: i8,
    /// None: a filter's "any name" (creations always carry a name).
    pub name: Option<String>,
    pub pattern_type: i8,
    pub principal: Option<String>,
    pub host: Option<String>,
    pub operation: i8,
    pub permission: i8,
}

/// One AlterClientQuotas entry: its entity's (type, name) parts and (key, value or remove).
#[derive(Debug, Clone)]
pub struct QuotaEntry {
    pub entity: Vec<(String, Option<String>)>,
    pub ops: Vec<(String, f64, bool)>,
}

/// One SCRAM upsertion.
#[derive(Debug, Clone)]
pub struct Upsertion {
    pub user: String,
    pub mechanism: i8,
    pub iterations: i32,
    pub salt: Vec<u8>,
    pub salted_password: Vec<u8>,
}

#[derive(Debug, Clone)]
pub enum SecStep {
    CreateAcls {
        creations: Vec<AclSpec>,
        version: i16,
    },
    DeleteAcls {
        filters: Vec<AclSpec>,
        version: i16,
    },
    AlterClientQuotas {
        entries: Vec<QuotaEntry>,
        validate_only: bool,
        version: i16,
    },
    AlterScram {
        deletions: Vec<(String, i8)>,
        upsertions: Vec<Upsertion>,
        version: i16,
    },
    /// The owner (type, name) when one is asked for (v3); renewers (type, name).
    CreateToken {
        owner: Option<(Option<String>, String)>,
        renewers: Vec<(String, String)>,
        max_lifetime_ms: i64,
        version: i16,
    },
    /// The k-th token this side created (modulo), or None: an HMAC no token has.
    RenewToken {
        token: Option<usize>,
        renew_period_ms: i64,
        version: i16,
    },
    ExpireToken {
        token: Option<usize>,
        expiry_period_ms: i64,
        version: i16,
    },
}

impl SecStep {
    pub fn kind(&self) -> &'static str {
        match self {
            SecStep::CreateAcls { .. } => "CreateAcls",
            SecStep::DeleteAcls { .. } => "DeleteAcls",
            SecStep::AlterClientQuotas { .. } => "AlterClientQuotas",
            SecStep::AlterScram { .. } => "AlterUserScramCredentials",
            SecStep::CreateToken { .. } => "CreateDelegationToken",
            SecStep::RenewToken { .. } => "RenewDelegationToken",
            SecStep::ExpireToken { .. } => "ExpireDelegationToken",
        }
    }
}

fn pick<T: Clone>(rng: &mut Rng, items: &[T]) -> T {
    items[rng.below(items.len() as u64) as usize].clone()
}

fn chance(rng: &mut Rng, percent: u64) -> bool {
    rng.below(100) < percent
}

/// Resource types: ANY (1, refused in a creation), TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID,
/// DELEGATION_TOKEN, USER.
const RESOURCE_TYPES: [i8; 8] = [1, 2, 2, 3, 4, 5, 6, 7];
const RESOURCE_NAMES: [&str; 7] = ["alpha", "al", "*", "kafka-cluster", "", "grp", "beta"];
/// Pattern types: ANY (1) and MATCH (2), refused in a creation; LITERAL; PREFIXED.
const PATTERN_TYPES: [i8; 6] = [1, 2, 3, 3, 3, 4];
const PRINCIPALS: [&str; 6] = [
    "User:alice",
    "User:bob",
    "User:*",
    "Group:ops",
    "alice",
    "User:",
];
const HOSTS: [&str; 4] = ["*", "*", "10.0.0.1", ""];
/// Operations 1 (ANY, refused in a creation) to 14 (CREATE_TOKENS).
const OPERATIONS: [i8; 9] = [1, 2, 3, 3, 4, 5, 7, 9, 14];
/// Permission types: ANY (1, refused in a creation), DENY, ALLOW.
const PERMISSIONS: [i8; 4] = [1, 2, 3, 3];

/// A code no enum defines (Kafka reads it as UNKNOWN, yet its parser only refuses 0): the
/// controller's validation refuses it.
fn out_of_range(rng: &mut Rng, mut spec: AclSpec) -> AclSpec {
    match rng.below(4) {
        0 => spec.resource_type = 42,
        1 => spec.pattern_type = 9,
        2 => spec.operation = 99,
        _ => spec.permission = 7,
    }
    spec
}

fn acl_creation(rng: &mut Rng) -> AclSpec {
    let spec = acl_creation_in_range(rng);
    if chance(rng, 4) {
        out_of_range(rng, spec)
    } else {
        spec
    }
}

fn acl_creation_in_range(rng: &mut Rng) -> AclSpec {
    AclSpec {
        resource_type: pick(rng, &RESOURCE_TYPES),
        name: Some(pick(rng, &RESOURCE_NAMES).to_string()),
        pattern_type: if chance(rng, 85) {
            pick(rng, &[3, 3, 4])
        } else {
            pick(rng, &PATTERN_TYPES)
        },
        principal: Some(pick(rng, &PRINCIPALS).to_string()),
        host: Some(pick(rng, &HOSTS).to_string()),
        operation: if chance(rng, 90) {
            pick(rng, &OPERATIONS[1..])
        } else {
            1
        },
        permission: if chance(rng, 90) {
            pick(rng, &[2, 3, 3])
        } else {
            1
        },
    }
}

fn acl_filter(rng: &mut Rng) -> AclSpec {
    let spec = acl_filter_in_range(rng);
    if chance(rng, 4) {
        out_of_range(rng, spec)
    } else {
        spec
    }
}

fn acl_filter_in_range(rng: &mut Rng) -> AclSpec {
    let any = |rng: &mut Rng| chance(rng, 45);
    AclSpec {
        resource_type: if any(rng) {
            1
        } else {
            pick(rng, &RESOURCE_TYPES)
        },
        name: (!any(rng)).then(|| pick(rng, &RESOURCE_NAMES).to_string()),
        pattern_type: if any(rng) {
            1
        } else {
            pick(rng, &PATTERN_TYPES)
        },
        principal: (!any(rng)).then(|| pick(rng, &PRINCIPALS).to_string()),
        host: (!any(rng)).then(|| pick(rng, &HOSTS).to_string()),
        operation: if any(rng) { 1 } else { pick(rng, &OPERATIONS) },
        permission: if any(rng) { 1 } else { pick(rng, &PERMISSIONS) },
    }
}

/// Entity parts: user, client-id, ip, each with valid, default (None) and bad names, and an
/// unknown type.
fn quota_entity(rng: &mut Rng) -> Vec<(String, Option<String>)> {
    if chance(rng, 65) {
        // A valid entity: a user, a client, both, or an IP (defaults included).
        let user = pick(rng, &[Some("alice"), Some("bob"), None]);
        let client = pick(rng, &[Some("app"), None]);
        let ip = pick(rng, &[Some("10.0.0.1"), None]);
        let part = |t: &str, n: Option<&str>| (t.to_string(), n.map(str::to_string));
        return match rng.below(4) {
            0 => vec![part("user", user)],
            1 => vec![part("client-id", client)],
            2 => vec![part("user", user), part("client-id", client)],
            _ => vec![part("ip", ip)],
        };
    }
    let mut parts = Vec::new();
    let n = pick(rng, &[1, 1, 1, 2, 2, 3, 0]);
    for _ in 0..n {
        let part = match rng.below(10) {
            0..=3 => (
                "user",
                pick(rng, &[Some("alice"), Some("bob"), None, Some("")]),
            ),
            4..=6 => ("client-id", pick(rng, &[Some("app"), None, Some("")])),
            7..=8 => (
                "ip",
                pick(
                    rng,
                    &[Some("10.0.0.1"), None, Some("not-an-ip"), Some("::1")],
                ),
            ),
            _ => ("tenant", Some("x")),
        };
        parts.push((part.0.to_string(), part.1.map(str::to_string)));
    }
    parts
}

/// Quota keys: for users and clients, for IPs, an unknown one; values valid, fractional
/// where an integer is needed, negative, zero.
fn quota_ops(rng: &mut Rng, entity: &[(String, Option<String>)]) -> Vec<(String, f64, bool)> {
    let n = pick(rng, &[1, 1, 2, 3, 0]);
    (0..n)
        .map(|_| {
            if chance(rng, 60) {
                // A key and value valid for the entity's type.
                let key = if entity.iter().any(|(t, _)| t == "ip") {
                    "connection_creation_rate"
                } else {
                    pick(
                        rng,
                        &[
                            "producer_byte_rate",
                            "consumer_byte_rate",
                            "request_percentage",
                            "controller_mutation_rate",
                        ],
                    )
                };
                return (
                    key.to_string(),
                    pick(rng, &[1024.0, 200.0, 5.0]),
                    chance(rng, 25),
                );
            }
            let key = pick(
                rng,
                &[
                    "producer_byte_rate",
                    "consumer_byte_rate",
                    "request_percentage",
                    "controller_mutation_rate",
                    "connection_creation_rate",
                    "no_such_quota",
                ],
            );
            let value = pick(rng, &[1024.0, 10.5, 0.0, -1.0, 200.0]);
            (key.to_string(), value, chance(rng, 25))
        })
        .collect()
}

const USERS: [&str; 4] = ["alice", "bob", "", "carol"];
/// Mechanisms: SCRAM-SHA-256 (1), SCRAM-SHA-512 (2), unknown (0, 3).
const MECHANISMS: [i8; 6] = [1, 1, 2, 2, 0, 3];

fn upsertion(rng: &mut Rng) -> Upsertion {
    let bytes = |rng: &mut Rng, n: u64| (0..n).map(|_| rng.below(256) as u8).collect();
    Upsertion {
        user: pick(rng, &USERS).to_string(),
        mechanism: pick(rng, &MECHANISMS),
        iterations: pick(rng, &[4096, 4096, 8192, 4095, 16385, 16384]),
        salt: if chance(rng, 8) {
            Vec::new()
        } else {
            bytes(rng, 16)
        },
        salted_password: if chance(rng, 8) {
            Vec::new()
        } else {
            let n = pick(rng, &[32, 64]);
            bytes(rng, n)
        },
    }
}

/// A delegation-token step: the requester (User:ANONYMOUS) creates tokens for itself or for
/// another owner (then it may renew and expire them only as a renewer), with renewers of the
/// User type or not; renewals and expiries of its tokens or of an unknown HMAC, with periods
/// past, within and below the lifetimes (negative: expire at once). The controller's token
/// lifetimes are short (ferro.rs, the Java side), so that time steps expire tokens and the
/// sweep removes them.
fn token_step(rng: &mut Rng) -> SecStep {
    let token = |rng: &mut Rng| (!chance(rng, 10)).then(|| rng.below(4) as usize);
    match rng.below(10) {
        0..=3 => SecStep::CreateToken {
            owner: chance(rng, 35).then(|| {
                let name = pick(rng, &["bob", "ANONYMOUS", "alice"]).to_string();
                let kind = if chance(rng, 8) {
                    None
                } else {
                    Some(pick(rng, &["User", "User", "Group"]).to_string())
                };
                (kind, name)
            }),
            renewers: (0..pick(rng, &[0, 0, 1, 2]))
                .map(|_| {
                    let (t, n) = pick(
                        rng,
                        &[
                            ("User", "ANONYMOUS"),
                            ("User", "carol"),
                            ("User", "ANONYMOUS"),
                            ("Group", "ops"),
                        ],
                    );
                    (t.to_string(), n.to_string())
                })
                .collect(),
            max_lifetime_ms: pick(rng, &[-1, 0, 30_000, 90_000, 5_000]),
            version: 1 + rng.below(3) as i16,
        },
        4..=6 => SecStep::RenewToken {
            token: token(rng),
            renew_period_ms: pick(rng, &[-1, 0, 10_000, 40_000]),
            version: 1 + rng.below(2) as i16,
        },
        _ => SecStep::ExpireToken {
            token: token(rng),
            expiry_period_ms: pick(rng, &[-1, 0, 5_000, 40_000]),
            version: 1 + rng.below(2) as i16,
        },
    }
}

/// One security or quota step.
pub fn step(rng: &mut Rng) -> SecStep {
    if chance(rng, 30) {
        return token_step(rng);
    }
    match rng.below(10) {
        0..=2 => SecStep::CreateAcls {
            creations: (0..pick(rng, &[1, 1, 2, 3]))
                .map(|_| acl_creation(rng))
                .collect(),
            version: 1 + rng.below(3) as i16,
        },
        3..=4 => SecStep::DeleteAcls {
            filters: (0..pick(rng, &[1, 1, 2]))
                .map(|_| acl_filter(rng))
                .collect(),
            version: 1 + rng.below(3) as i16,
        },
        5..=7 => SecStep::AlterClientQuotas {
            entries: (0..pick(rng, &[1, 1, 2, 3]))
                .map(|_| {
                    let entity = quota_entity(rng);
                    let ops = quota_ops(rng, &entity);
                    QuotaEntry { entity, ops }
                })
                .collect(),
            validate_only: chance(rng, 10),
            version: rng.below(2) as i16,
        },
        _ => SecStep::AlterScram {
            deletions: (0..pick(rng, &[0, 0, 1, 2]))
                .map(|_| (pick(rng, &USERS).to_string(), pick(rng, &MECHANISMS)))
                .collect(),
            upsertions: (0..pick(rng, &[0, 1, 1, 2]))
                .map(|_| upsertion(rng))
                .collect(),
            version: 0,
        },
    }
}

/// A filter that matches `acl` with some of its fields widened to "any".
fn filter_of(rng: &mut Rng, acl: &AclSpec) -> AclSpec {
    let mut f = acl.clone();
    if chance(rng, 30) {
        f.resource_type = 1;
    }
    if chance(rng, 30) {
        f.name = None;
    }
    if chance(rng, 30) {
        // ANY, or MATCH (literal, wildcard and prefixed patterns that match the name).
        f.pattern_type = pick(rng, &[1, 2]);
    }
    if chance(rng, 30) {
        f.principal = None;
    }
    if chance(rng, 30) {
        f.host = None;
    }
    if chance(rng, 30) {
        f.operation = 1;
    }
    if chance(rng, 30) {
        f.permission = 1;
    }
    f
}

/// Sometimes (6 %) a scenario: ACLs created, then deleted by filters made from them (so that
/// filters match), with a quota set and removed around it.
pub fn scenario(rng: &mut Rng) -> Option<Vec<crate::gen::Step>> {
    use crate::gen::Step;
    if chance(rng, 4) {
        return Some(token_scenario(rng));
    }
    if !chance(rng, 6) {
        return None;
    }
    let creations: Vec<AclSpec> = (0..1 + rng.below(3)).map(|_| acl_creation(rng)).collect();
    let mut steps = vec![Step::Sec(SecStep::CreateAcls {
        creations: creations.clone(),
        version: 1 + rng.below(3) as i16,
    })];
    if chance(rng, 50) {
        steps.push(Step::Sec(step(rng)));
    }
    let filters = (0..1 + rng.below(2))
        .map(|_| {
            let acl = pick(rng, &creations);
            filter_of(rng, &acl)
        })
        .collect();
    steps.push(Step::Sec(SecStep::DeleteAcls {
        filters,
        version: 1 + rng.below(3) as i16,
    }));
    Some(steps)
}

/// Tokens created, then renewed and expired with time passing between (past the 20 s renewal
/// period and the 60 s lifetime at times, so that renewals of expired tokens are refused and
/// the sweep removes them).
fn token_scenario(rng: &mut Rng) -> Vec<crate::gen::Step> {
    use crate::gen::Step;
    let mut steps = Vec::new();
    for _ in 0..1 + rng.below(2) {
        steps.push(Step::Sec(SecStep::CreateToken {
            owner: None,
            renewers: Vec::new(),
            max_lifetime_ms: pick(rng, &[-1, 30_000, 90_000]),
            version: 1 + rng.below(3) as i16,
        }));
    }
    for _ in 0..2 + rng.below(4) {
        let step = match rng.below(3) {
            0 => Step::Time(pick(rng, &[4_000, 9_000, 10_000, 10_000])),
            1 => Step::Sec(SecStep::RenewToken {
                token: Some(rng.below(3) as usize),
                renew_period_ms: pick(rng, &[-1, 10_000, 40_000]),
                version: 1 + rng.below(2) as i16,
            }),
            _ => Step::Sec(SecStep::ExpireToken {
                token: Some(rng.below(3) as usize),
                expiry_period_ms: pick(rng, &[-1, 5_000, 40_000]),
                version: 1 + rng.below(2) as i16,
            }),
        };
        steps.push(step);
    }
    steps
}
