//! ACLs, authorization, client quotas and delegation tokens on the controller (#16), against
//! real Apache Kafka 4.1.2: a mixed quorum (two ferrokraft controllers, one Kafka controller)
//! and a Kafka broker, every node with `authorizer.class.name=StandardAuthorizer` and
//! `delegation.token.secret.key`, SASL_SSL on every listener (certificates made by the test,
//! client certificates required on the controller listener; PLAIN, and SCRAM-SHA-256 too on
//! the broker for token authentication), the controllers and the broker authenticating as the
//! super user `controller`. Leadership moves ferrokraft → Kafka → ferrokraft on the way:
//! - the broker registers and is unfenced (its CLUSTER_ACTION RPCs pass ferrokraft's checks);
//! - `kafka-acls --add` through the broker reaches ferrokraft as a forwarded CreateAcls,
//!   lands in its log, and both `kafka-acls --list` through the broker and
//!   `--bootstrap-controller` (DescribeAcls served by ferrokraft) show it;
//! - alice, allowed CREATE on one topic, creates it through the broker (a forwarded
//!   CreateTopics authorized by ferrokraft against alice's principal) and is refused another
//!   with the very error the Kafka controller gives once it leads; mallory is refused both;
//! - DescribeAcls straight to a controller as alice is refused by ferrokraft as by Kafka;
//! - `kafka-configs --entity-type users --add-config producer_byte_rate=…` through the broker is
//!   a forwarded AlterClientQuotas: ClientQuotaRecords in ferrokraft's log, described by the
//!   broker; alice (no ALTER_CONFIGS on the cluster) and a fractional byte rate are refused in
//!   the words of the Kafka controller;
//! - `kafka-delegation-tokens --create` through the broker is a forwarded
//!   CreateDelegationToken: the token in ferrokraft's log, its HMAC (ferrokraft's, from the
//!   shared secret) the one the broker describes, a client authenticates with it (SCRAM
//!   `tokenauth`) to the broker and to the ferrokraft and Kafka controllers alike, its renewer
//!   renews it and a stranger may not, the owner expires it,
//!   and a short-lived token is swept by ferrokraft's expiry check;
//! - `kafka-configs --add-config SCRAM-SHA-256=[…]` through the broker reaches ferrokraft, and
//!   the user authenticates to the broker with it;
//! - `kafka-acls --remove` deletes the ACL from the log.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::time::{Duration, Instant};

use support::cluster::{serial, AllowedError, Cluster, Impl};
use support::kafka::ToolOutput;
use support::tls::Pki;

const AUTHORIZER: &str = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
const ACL_COMMAND: &str = "org.apache.kafka.tools.AclCommand";
const TOKEN_COMMAND: &str = "org.apache.kafka.tools.DelegationTokenCommand";

/// The delegation-token settings every node shares: the secret, and an expiry check every
/// 5 s so that the sweep is seen within the test.
const TOKEN_PROPS: &[(&str, &str)] = &[
    ("delegation.token.secret.key", "token-secret"),
    ("delegation.token.expiry.check.interval.ms", "5000"),
];

/// Who exists on every listener (PLAIN, from JAAS), and who the nodes are to one another.
const USERS: &str = "user_controller=\"controller-secret\" user_admin=\"admin-secret\" \
    user_alice=\"alice-secret\" user_mallory=\"mallory-secret\"";

/// SASL_SSL on the controller listener: the test CA's node certificate and key inline (client
/// certificates required), PLAIN on top; the StandardAuthorizer; the token secret.
fn controller_props(pki: &Pki) -> Vec<(String, String)> {
    let jaas = format!(
        "org.apache.kafka.common.security.plain.PlainLoginModule required \
         username=\"controller\" password=\"controller-secret\" {USERS};"
    );
    let sasl: Vec<(String, String)> = [
        ("listener.security.protocol.map", "CONTROLLER:SASL_SSL"),
        // PLAIN among the nodes; SCRAM too for clients' delegation tokens.
        ("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256"),
        (
            "listener.name.controller.scram-sha-256.sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        ),
        ("sasl.mechanism.controller.protocol", "PLAIN"),
        (
            "listener.name.controller.plain.sasl.jaas.config",
            jaas.as_str(),
        ),
        ("authorizer.class.name", AUTHORIZER),
        ("super.users", "User:controller;User:admin"),
    ]
    .iter()
    .chain(TOKEN_PROPS)
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    // The protocol map's last value wins (Java's Properties, ferrokraft's reader alike).
    let mut props = pki.server_props_inline();
    props.extend(sasl);
    props
}

/// A client's TLS half: it trusts the test CA and presents the node certificate (the
/// controller listener requires one; on SASL_SSL the principal is the SASL user).
fn client_tls(pki: &Pki) -> String {
    format!(
        "ssl.truststore.type=PEM\nssl.truststore.location={}\n\
         ssl.keystore.type=PEM\nssl.keystore.location={}\n",
        pki.truststore.display(),
        pki.keystore.display()
    )
}

fn client(c: &Cluster, pki: &Pki, user: &str) -> String {
    let path = c.art.path(&format!("{user}.properties"));
    std::fs::write(
        &path,
        format!(
            "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n\
             sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \
             username=\"{user}\" password=\"{user}-secret\";\n\
             default.api.timeout.ms=15000\nrequest.timeout.ms=8000\n{}",
            client_tls(pki)
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// Node `id`'s whole log replayed into an image.
fn image_of(c: &Cluster, id: i32) -> ferrokraft::metadata::image::MetadataImage {
    let mut image = ferrokraft::metadata::image::MetadataImage::default();
    image.replay_batches(&c.nodes[(id - 1) as usize].log_bytes(), i64::MAX, "test");
    image
}

/// The ACLs in node `id`'s log, as (resource type, name, principal, operation) codes.
fn acls_in_log(c: &Cluster, id: i32) -> Vec<(i8, String, String, i8)> {
    image_of(c, id)
        .acls
        .values()
        .map(|r| {
            (
                r.resource_type,
                r.resource_name.clone(),
                r.principal.clone(),
                r.operation,
            )
        })
        .collect()
}

fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "timed out: {what}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn tool(c: &Cluster, name: &str, class: &str, args: &[&str]) -> support::kafka::ToolOutput {
    support::kafka::kafka().tool(&c.art, name, class, args)
}

/// The line of a failed tool's output that names the refusal.
/// The client's authorization error line. A cluster refusal reads "Request <request> needs
/// <OPERATION> permission." where Kafka prints its request object (processor, connection id,
/// buffer); that part is replaced by `<request>`, the rest must match. A log line's timestamp
/// is cut.
fn refusal(out: &support::kafka::ToolOutput) -> String {
    let text = format!("{}{}", out.stdout, out.stderr);
    let line = text
        .lines()
        .find(|l| l.contains("AuthorizationException"))
        // From the exception's class on (tool log lines start with a timestamp).
        .map(|l| {
            l[l.find("org.apache.kafka").unwrap_or(0)..]
                .trim()
                .to_string()
        })
        .unwrap_or_else(|| panic!("no authorization error in:\n{text}"));
    match (line.find("Request Request("), line.rfind(" needs ")) {
        (Some(start), Some(end)) if start < end => {
            format!("{}Request <request>{}", &line[..start], &line[end..])
        }
        _ => line,
    }
}

#[test]
fn acls_through_a_broker_authorize_clients_as_a_kafka_controller_does() {
    let _serial = serial();
    let pki = Pki::new();
    let props = controller_props(&pki);
    let refs: Vec<(&str, &str)> = props
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let mut c = Cluster::new(
        "acls-through-broker",
        &[Impl::Ferrokraft, Impl::Ferrokraft, Impl::Kafka],
        &refs,
    );
    // admin.properties is also what the cluster's own quorum tools use.
    let admin = client(&c, &pki, "admin");
    c.start_all();
    let leader = c.make_leader_kind(Impl::Ferrokraft, Duration::from_secs(180));
    eprintln!("ferrokraft node {leader} leads");

    let broker_jaas = format!(
        "org.apache.kafka.common.security.plain.PlainLoginModule required \
         username=\"controller\" password=\"controller-secret\" {USERS};"
    );
    let controller_jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required \
         username=\"controller\" password=\"controller-secret\";";
    // SASL_SSL on every listener: to the controllers (presenting the node certificate) and
    // for the broker's own clients; the same keys serve both.
    let tls: Vec<(String, String)> = pki
        .server_props_inline()
        .into_iter()
        .filter(|(k, _)| k.starts_with("ssl."))
        .collect();
    let mut broker_props: Vec<(&str, &str)> =
        tls.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    broker_props.extend_from_slice(&[
        (
            "listener.security.protocol.map",
            "CONTROLLER:SASL_SSL,PLAINTEXT:SASL_SSL",
        ),
        ("sasl.enabled.mechanisms", "PLAIN"),
        ("sasl.mechanism.inter.broker.protocol", "PLAIN"),
        ("sasl.mechanism.controller.protocol", "PLAIN"),
        (
            "listener.name.controller.plain.sasl.jaas.config",
            controller_jaas,
        ),
        (
            "listener.name.plaintext.plain.sasl.jaas.config",
            &broker_jaas,
        ),
        ("authorizer.class.name", AUTHORIZER),
        ("super.users", "User:controller;User:admin"),
        // Token authentication (SCRAM with tokenauth) on the client listener.
        (
            "listener.name.plaintext.sasl.enabled.mechanisms",
            "PLAIN,SCRAM-SHA-256",
        ),
        (
            "listener.name.plaintext.scram-sha-256.sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        ),
        TOKEN_PROPS[0],
        TOKEN_PROPS[1],
    ]);
    let broker = c.start_broker_with(100, &broker_props);
    broker.wait_for_log_text(
        support::clients::UNFENCED_LOG,
        Instant::now() + Duration::from_secs(120),
    );
    let bootstrap = broker.bootstrap();

    // admin adds alice's ACL through the broker: a forwarded CreateAcls, served by ferrokraft.
    let out = tool(
        &c,
        "add-acl",
        ACL_COMMAND,
        &[
            "--bootstrap-server",
            &bootstrap,
            "--command-config",
            &admin,
            "--add",
            "--allow-principal",
            "User:alice",
            "--operation",
            "Create",
            "--topic",
            "alice-topic",
        ],
    );
    out.assert_ok("kafka-acls --add as admin");
    let alice_create = (
        2i8,
        "alice-topic".to_string(),
        "User:alice".to_string(),
        5i8,
    );
    wait_until(
        "alice's ACL in the leader's log",
        Duration::from_secs(30),
        || acls_in_log(&c, leader).contains(&alice_create),
    );
    // Listed by the broker (from its metadata image) and by ferrokraft itself.
    wait_until(
        "the broker lists alice's ACL",
        Duration::from_secs(30),
        || {
            let out = tool(
                &c,
                "list-acls-broker",
                ACL_COMMAND,
                &[
                    "--bootstrap-server",
                    &bootstrap,
                    "--command-config",
                    &admin,
                    "--list",
                ],
            );
            out.status.success() && out.stdout.contains("principal=User:alice")
        },
    );
    let listed = tool(
        &c,
        "list-acls-controller",
        ACL_COMMAND,
        &[
            "--bootstrap-controller",
            &c.controller_address(leader),
            "--command-config",
            &admin,
            "--list",
        ],
    );
    listed.assert_ok("kafka-acls --bootstrap-controller --list as admin");
    assert!(
        listed
            .stdout
            .contains("(principal=User:alice, host=*, operation=CREATE, permissionType=ALLOW)")
            && listed.stdout.contains(
                "ResourcePattern(resourceType=TOPIC, name=alice-topic, patternType=LITERAL)"
            ),
        "{}",
        listed.stdout
    );

    // alice creates her topic through the broker; another one and mallory are refused.
    let alice = client(&c, &pki, "alice");
    let mallory = client(&c, &pki, "mallory");
    let create = |c: &Cluster, name: &str, config: &str, topic: &str| {
        tool(
            c,
            name,
            support::clients::TOPIC_COMMAND,
            &[
                "--bootstrap-server",
                &bootstrap,
                "--command-config",
                config,
                "--create",
                "--topic",
                topic,
                "--partitions",
                "1",
                "--replication-factor",
                "1",
            ],
        )
    };
    create(&c, "alice-creates", &alice, "alice-topic").assert_ok("alice creates alice-topic");
    let ours_other = create(&c, "alice-other", &alice, "other-topic");
    assert!(!ours_other.status.success(), "alice created other-topic");
    let ours_mallory = create(&c, "mallory-creates", &mallory, "alice-topic-2");
    assert!(!ours_mallory.status.success(), "mallory created a topic");
    let topics = |c: &Cluster| -> Vec<String> {
        image_of(c, leader)
            .topics
            .values()
            .map(|t| t.name.clone())
            .collect()
    };
    let held = topics(&c);
    assert!(held.contains(&"alice-topic".to_string()), "{held:?}");
    assert!(
        !held
            .iter()
            .any(|t| t == "other-topic" || t == "alice-topic-2"),
        "{held:?}"
    );

    // DescribeAcls straight to a controller as alice: refused by ferrokraft as by Kafka.
    let describe_as_alice = |via: i32| {
        tool(
            &c,
            &format!("list-acls-alice-{via}"),
            ACL_COMMAND,
            &[
                "--bootstrap-controller",
                &c.controller_address(via),
                "--command-config",
                &alice,
                "--list",
            ],
        )
    };
    let (ours, kafkas) = (describe_as_alice(leader), describe_as_alice(3));
    assert!(!ours.status.success() && !kafkas.status.success());
    assert_eq!(refusal(&ours), refusal(&kafkas), "DescribeAcls as alice");

    let quota_refusals = client_quotas(&c, leader, &bootstrap, &admin, &alice, "ferrokraft");
    delegation_tokens(&c, &pki, leader, &bootstrap, &admin, &alice, &mallory);
    scram_through_the_broker(&c, &pki, leader, &bootstrap, &admin);

    // With the Kafka controller active, alice's refused creation reads the same.
    let kafka_leader = c.make_leader_kind(Impl::Kafka, Duration::from_secs(120));
    let kafkas_other = create(&c, "alice-other-kafka", &alice, "other-topic");
    assert!(
        !kafkas_other.status.success(),
        "Kafka let alice create other-topic"
    );
    assert_eq!(
        refusal(&ours_other),
        refusal(&kafkas_other),
        "alice's refused CreateTopics"
    );
    assert_eq!(
        refusal(&ours_mallory).replace("alice-topic-2", "T"),
        refusal(&create(&c, "mallory-kafka", &mallory, "alice-topic-3"))
            .replace("alice-topic-3", "T"),
        "mallory's refused CreateTopics"
    );
    let kafkas_quota_refusals =
        client_quotas(&c, kafka_leader, &bootstrap, &admin, &alice, "kafka");
    assert_eq!(
        quota_refusals, kafkas_quota_refusals,
        "refused AlterClientQuotas, ferrokraft then Kafka"
    );

    // Back to ferrokraft: admin removes the ACL through the broker (a forwarded DeleteAcls).
    let leader = c.make_leader_kind(Impl::Ferrokraft, Duration::from_secs(120));
    let out = tool(
        &c,
        "remove-acl",
        ACL_COMMAND,
        &[
            "--bootstrap-server",
            &bootstrap,
            "--command-config",
            &admin,
            "--remove",
            "--force",
            "--allow-principal",
            "User:alice",
            "--operation",
            "Create",
            "--topic",
            "alice-topic",
        ],
    );
    out.assert_ok("kafka-acls --remove as admin");
    wait_until(
        "alice's ACL gone from the log",
        Duration::from_secs(30),
        || !acls_in_log(&c, leader).contains(&alice_create),
    );
    c.assert_kafka_errors_explained(&[AllowedError {
        cause: "the test sends DescribeAcls as alice straight to the Kafka controller; its \
                ControllerApis logs the refusal of the admin client's DescribeCluster at ERROR",
        contains: &[
            "apiKey=DESCRIBE_CLUSTER",
            "principal=User:alice",
            "ClusterAuthorizationException: Request Request(",
            "needs ALTER permission.",
        ],
    }]);
    drop(broker);
}

/// The quotas in node `id`'s log for an entity of one type and name.
fn quotas_in_log(c: &Cluster, id: i32, entity_type: &str, name: &str) -> Vec<(String, f64)> {
    let key = [(entity_type.to_string(), Some(name.to_string()))]
        .into_iter()
        .collect();
    image_of(c, id)
        .client_quotas
        .get(&key)
        .map(|q| q.iter().map(|(k, v)| (k.clone(), *v)).collect())
        .unwrap_or_default()
}

/// A Kafka tool of `class` through the broker as the client of `command_config`.
fn via_broker(
    c: &Cluster,
    class: &str,
    name: &str,
    command_config: &str,
    bootstrap: &str,
    args: &[&str],
) -> support::kafka::ToolOutput {
    let mut all = vec![
        "--bootstrap-server",
        bootstrap,
        "--command-config",
        command_config,
    ];
    all.extend_from_slice(args);
    tool(c, name, class, &all)
}

fn configs(c: &Cluster, name: &str, cfg: &str, bootstrap: &str, args: &[&str]) -> ToolOutput {
    via_broker(
        c,
        support::clients::config_command(),
        name,
        cfg,
        bootstrap,
        args,
    )
}

/// The line of a failed tool's output naming the exception, from its class on.
fn exception_line(out: &support::kafka::ToolOutput) -> String {
    let text = format!("{}{}", out.stdout, out.stderr);
    text.lines()
        .find(|l| l.contains("Exception:"))
        .map(|l| {
            l[l.find("org.apache.kafka").unwrap_or(0)..]
                .trim()
                .to_string()
        })
        .unwrap_or_else(|| panic!("no exception in:\n{text}"))
}

/// Client quotas through the broker while node `leader` (of `kind`) is active: admin sets and
/// changes alice's byte rates (a forwarded AlterClientQuotas), the broker describes them;
/// alice's own attempt and a fractional byte rate are refused. The refusals, for comparison
/// with the other implementation.
fn client_quotas(
    c: &Cluster,
    leader: i32,
    bootstrap: &str,
    admin: &str,
    alice: &str,
    kind: &str,
) -> Vec<String> {
    let user = format!("quota-{kind}");
    let rates = "producer_byte_rate=1024,consumer_byte_rate=2048";
    configs(
        c,
        &format!("quota-add-{kind}"),
        admin,
        bootstrap,
        &[
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            &user,
            "--add-config",
            rates,
        ],
    )
    .assert_ok("kafka-configs --add-config byte rates as admin");
    let expected = vec![
        ("consumer_byte_rate".to_string(), 2048.0),
        ("producer_byte_rate".to_string(), 1024.0),
    ];
    wait_until(
        "the quotas in the leader's log",
        Duration::from_secs(30),
        || quotas_in_log(c, leader, "user", &user) == expected,
    );
    wait_until(
        "the broker describes the quotas",
        Duration::from_secs(30),
        || {
            let out = configs(
                c,
                &format!("quota-describe-{kind}"),
                admin,
                bootstrap,
                &[
                    "--describe",
                    "--entity-type",
                    "users",
                    "--entity-name",
                    &user,
                ],
            );
            out.status.success()
            && out.stdout.contains(&format!(
                "Quota configs for user-principal '{user}' are consumer_byte_rate=2048.0, producer_byte_rate=1024.0"
            ))
        },
    );
    configs(
        c,
        &format!("quota-remove-{kind}"),
        admin,
        bootstrap,
        &[
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            &user,
            "--delete-config",
            "consumer_byte_rate",
        ],
    )
    .assert_ok("kafka-configs --delete-config consumer_byte_rate as admin");
    wait_until(
        "one quota removed from the log",
        Duration::from_secs(30),
        || quotas_in_log(c, leader, "user", &user) == expected[1..],
    );
    let alices = configs(
        c,
        &format!("quota-alice-{kind}"),
        alice,
        bootstrap,
        &[
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            "alice",
            "--add-config",
            "producer_byte_rate=1",
        ],
    );
    assert!(!alices.status.success(), "alice altered a quota");
    let fraction = configs(
        c,
        &format!("quota-fraction-{kind}"),
        admin,
        bootstrap,
        &[
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            &user,
            "--add-config",
            "producer_byte_rate=1.5",
        ],
    );
    assert!(
        !fraction.status.success(),
        "a fractional byte rate was taken"
    );
    assert!(quotas_in_log(c, leader, "user", "alice").is_empty());
    vec![
        refusal(&alices),
        exception_line(&fraction).replace(&user, "<user>"),
    ]
}

fn tokens(c: &Cluster, name: &str, cfg: &str, bootstrap: &str, args: &[&str]) -> ToolOutput {
    via_broker(c, TOKEN_COMMAND, name, cfg, bootstrap, args)
}

/// (token id, HMAC in base64) from `kafka-delegation-tokens --create`'s table.
fn created_token(out: &support::kafka::ToolOutput) -> (String, String) {
    let id = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("Created delegation token with tokenId : "))
        .unwrap_or_else(|| panic!("no token id in:\n{}", out.stdout))
        .trim()
        .to_string();
    let hmac = out
        .stdout
        .lines()
        .find(|l| l.starts_with(&id))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_else(|| panic!("no HMAC in:\n{}", out.stdout))
        .to_string();
    (id, hmac)
}

/// The delegation tokens in node `id`'s log: (token id, owner, renewers).
fn tokens_in_log(c: &Cluster, id: i32) -> Vec<(String, String, Vec<String>)> {
    image_of(c, id)
        .delegation_tokens
        .values()
        .map(|t| (t.token_id.clone(), t.owner.clone(), t.renewers.clone()))
        .collect()
}

/// Delegation tokens through the broker, ferrokraft node `leader` active.
fn delegation_tokens(
    c: &Cluster,
    pki: &Pki,
    leader: i32,
    bootstrap: &str,
    admin: &str,
    alice: &str,
    mallory: &str,
) {
    let out = tokens(
        c,
        "token-create",
        admin,
        bootstrap,
        &[
            "--create",
            "--max-life-time-period",
            "-1",
            "--renewer-principal",
            "User:alice",
        ],
    );
    out.assert_ok("kafka-delegation-tokens --create as admin");
    let (id, hmac) = created_token(&out);
    wait_until(
        "the token in the leader's log",
        Duration::from_secs(30),
        || {
            tokens_in_log(c, leader).contains(&(
                id.clone(),
                "User:admin".to_string(),
                vec!["User:alice".to_string()],
            ))
        },
    );
    // The broker computes each token's HMAC from its own copy of the secret: the same one.
    wait_until(
        "the broker describes the token",
        Duration::from_secs(30),
        || {
            // Without --owner-principal the tool asks for an empty owner list: no tokens.
            let out = tokens(
                c,
                "token-describe",
                admin,
                bootstrap,
                &["--describe", "--owner-principal", "User:admin"],
            );
            out.status.success()
                && out.stdout.lines().any(|l| {
                    l.starts_with(&id) && l.split_whitespace().nth(1) == Some(hmac.as_str())
                })
        },
    );
    // A client authenticates to the broker with the token (SCRAM, tokenauth).
    let token_client = c.art.path("token-client.properties");
    std::fs::write(
        &token_client,
        format!(
            "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n{}\
             sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"{id}\" password=\"{hmac}\" tokenauth=\"true\";\n\
             default.api.timeout.ms=15000\nrequest.timeout.ms=8000\n",
            client_tls(pki)
        ),
    )
    .unwrap();
    let listed = tool(
        c,
        "token-client-lists-topics",
        support::clients::TOPIC_COMMAND,
        &[
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            &token_client.display().to_string(),
            "--list",
        ],
    );
    listed.assert_ok("kafka-topics --list authenticated with the token");
    // The same token authenticates to the controllers themselves: ferrokraft's listener
    // finds it in its committed image as Kafka's does (the owner admin is a super user).
    for via in [leader, 3] {
        let out = tool(
            c,
            &format!("token-client-describes-quorum-via-{via}"),
            "org.apache.kafka.tools.MetadataQuorumCommand",
            &[
                "--bootstrap-controller",
                &c.controller_address(via),
                "--command-config",
                &token_client.display().to_string(),
                "describe",
                "--status",
            ],
        );
        out.assert_ok(&format!("kafka-metadata-quorum via {via} with the token"));
    }

    // alice (a renewer) renews it; mallory may not (ferrokraft's owner check).
    let renewed = tokens(
        c,
        "token-renew",
        alice,
        bootstrap,
        &["--renew", "--hmac", &hmac, "--renew-time-period", "3600000"],
    );
    renewed.assert_ok("kafka-delegation-tokens --renew as alice");
    assert!(
        renewed.stdout.contains("Completed renew operation"),
        "{}",
        renewed.stdout
    );
    let stranger = tokens(
        c,
        "token-renew-mallory",
        mallory,
        bootstrap,
        &["--renew", "--hmac", &hmac, "--renew-time-period", "3600000"],
    );
    assert!(!stranger.status.success(), "mallory renewed admin's token");
    assert!(
        exception_line(&stranger).contains("DelegationTokenOwnerMismatchException"),
        "{}",
        exception_line(&stranger)
    );
    // The owner expires it at once.
    tokens(
        c,
        "token-expire",
        admin,
        bootstrap,
        &["--expire", "--hmac", &hmac, "--expiry-time-period", "-1"],
    )
    .assert_ok("kafka-delegation-tokens --expire as admin");
    wait_until(
        "the token gone from the log",
        Duration::from_secs(30),
        || !tokens_in_log(c, leader).iter().any(|t| t.0 == id),
    );

    // A token of two seconds is removed by ferrokraft's sweep (every 5 s here).
    let out = tokens(
        c,
        "token-create-short",
        admin,
        bootstrap,
        &["--create", "--max-life-time-period", "2000"],
    );
    out.assert_ok("kafka-delegation-tokens --create (2 s) as admin");
    let (short, _) = created_token(&out);
    wait_until(
        "the short token in the log",
        Duration::from_secs(30),
        || tokens_in_log(c, leader).iter().any(|t| t.0 == short),
    );
    wait_until("the short token swept", Duration::from_secs(30), || {
        !tokens_in_log(c, leader).iter().any(|t| t.0 == short)
    });
}

/// `kafka-configs --add-config SCRAM-SHA-256=…` through the broker (a forwarded
/// AlterUserScramCredentials served by ferrokraft node `leader`), then carol authenticates to
/// the broker with it over SASL_SSL.
fn scram_through_the_broker(c: &Cluster, pki: &Pki, leader: i32, bootstrap: &str, admin: &str) {
    configs(
        c,
        "scram-add-carol",
        admin,
        bootstrap,
        &[
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            "carol",
            "--add-config",
            "SCRAM-SHA-256=[iterations=8192,password=carol-secret]",
        ],
    )
    .assert_ok("kafka-configs --add-config SCRAM-SHA-256 for carol as admin");
    wait_until(
        "carol's credential in the leader's log",
        Duration::from_secs(30),
        || {
            image_of(c, leader)
                .scram
                .values()
                .any(|r| r.name == "carol" && r.iterations == 8192)
        },
    );
    let carol = c.art.path("carol.properties");
    std::fs::write(
        &carol,
        format!(
            "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n\
             sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
             username=\"carol\" password=\"carol-secret\";\n\
             default.api.timeout.ms=15000\nrequest.timeout.ms=8000\n{}",
            client_tls(pki)
        ),
    )
    .unwrap();
    wait_until(
        "carol authenticates to the broker",
        Duration::from_secs(30),
        || {
            tool(
                c,
                "carol-lists-topics",
                support::clients::TOPIC_COMMAND,
                &[
                    "--bootstrap-server",
                    bootstrap,
                    "--command-config",
                    &carol.display().to_string(),
                    "--list",
                ],
            )
            .status
            .success()
        },
    );
}
