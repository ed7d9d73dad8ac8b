//! TLS and SASL on the controller listener (#16), against real Apache Kafka controllers:
//! certificates made by the test (one CA for every node, `ssl.client.auth=required`), a mixed
//! quorum on `CONTROLLER:SASL_SSL` with SASL/PLAIN elects, replicates and fails over both ways;
//! and a ferrokraft SSL listener refuses bad peers (a certificate from another CA, an expired
//! one, plaintext Kafka requests, handshakes cut short, garbage), logs each once with the peer,
//! writes nothing for them, and keeps serving good clients.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use support::cluster::{serial, Cluster, Impl};
use support::tls::{
    api_versions, api_versions_request, client_config, client_hello, closed_by_peer, connect_from,
    tls_over, try_connect_from, Ca, Pki,
};

/// SASL/PLAIN on the controller listener, for Kafka and ferrokraft alike: the users each node
/// accepts, and the one it authenticates to its peers as.
const SASL_PLAIN: &[(&str, &str)] = &[
    ("listener.security.protocol.map", "CONTROLLER:SASL_SSL"),
    ("sasl.enabled.mechanisms", "PLAIN"),
    ("sasl.mechanism.controller.protocol", "PLAIN"),
    (
        "listener.name.controller.plain.sasl.jaas.config",
        "org.apache.kafka.common.security.plain.PlainLoginModule required \
         username=\"controller\" password=\"controller-secret\" \
         user_controller=\"controller-secret\" user_admin=\"admin-secret\";",
    ),
    ("connections.max.reauth.ms", "10000"),
];

/// The admin client's SASL half (after its TLS keys).
const ADMIN_SASL: &str = "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n\
    sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \
    username=\"admin\" password=\"admin-secret\";\n";

fn props(pki: &Pki, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut p = pki.server_props();
    p.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    p
}

fn as_refs(p: &[(String, String)]) -> Vec<(&str, &str)> {
    p.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// Per-voter log end offsets through `via` once every voter has reached `min`.
fn wait_all_reach(c: &Cluster, via: i32, min: i64, timeout: Duration) -> Vec<(i32, i64, String)> {
    let deadline = Instant::now() + timeout;
    loop {
        let rows = c.replication(via);
        if rows.len() == 3 && rows.iter().all(|r| r.1 >= min) {
            return rows;
        }
        assert!(
            Instant::now() < deadline,
            "not every voter reached offset {min} via node {via}: {rows:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A mixed quorum over SASL_SSL: two Kafka controllers and one ferrokraft node, TLS with
/// client certificates required and SASL/PLAIN on top (every voter authenticates to every
/// other with Kafka's `sasl.mechanism.controller.protocol`), sessions re-authenticated within
/// 10 s (`connections.max.reauth.ms`). It elects and replicates (every voter's log end passes
/// the leader's high watermark), then fails over Kafka → ferrokraft (Kafka leaders are killed
/// until ferrokraft wins) and ferrokraft → Kafka (ferrokraft is killed; a Kafka node takes over
/// and ferrokraft, restarted, follows it). Keys and certificates are inline PEM in the
/// properties file. No authentication or re-authentication fails on either side.
#[test]
fn mixed_quorum_over_sasl_ssl_elects_replicates_and_fails_over_both_ways() {
    let _serial = serial();
    let pki = Pki::new();
    // Inline PEM in the properties file, read alike by Kafka and ferrokraft (the refusal test
    // below uses PEM files); SASL on top, the protocol map's last value winning.
    let mut p = pki.server_props_inline();
    p.extend(
        SASL_PLAIN
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let mut c = Cluster::new(
        "sasl-ssl-quorum",
        &[Impl::Kafka, Impl::Kafka, Impl::Ferrokraft],
        &as_refs(&p),
    );
    let admin = format!(
        "{}{ADMIN_SASL}",
        pki.admin_props().replace("security.protocol=SSL\n", "")
    );
    std::fs::write(c.art.path("admin.properties"), admin).unwrap();
    c.start_all();
    let (mut leader, _, hw) = c.wait_for_leader(3, 1, Duration::from_secs(90));
    wait_all_reach(&c, 3, hw, Duration::from_secs(60));

    // Kafka → ferrokraft.
    let deadline = Instant::now() + Duration::from_secs(150);
    while leader != 3 {
        assert!(
            Instant::now() < deadline,
            "ferrokraft never won an election over SASL_SSL"
        );
        c.node(leader).kill();
        let (next, _, _) = c.wait_for_leader(3, 1, Duration::from_secs(60));
        c.start(leader);
        leader = next;
        if leader != 3 {
            std::thread::sleep(Duration::from_secs(3));
        }
    }
    let (l, _, hw) = c.wait_for_leader(3, 1, Duration::from_secs(30));
    assert_eq!(l, 3, "ferrokraft leads");
    // The Kafka followers fetch from ferrokraft over TLS: the committed offset advances on all.
    let rows = wait_all_reach(&c, 3, hw + 1, Duration::from_secs(60));
    eprintln!("ferrokraft leading, replication: {rows:?}");

    // ferrokraft → Kafka.
    c.node(3).kill();
    let (next, _, hw) = c.wait_for_leader(1, 1, Duration::from_secs(60));
    assert!(next == 1 || next == 2, "a Kafka node took over, got {next}");
    c.start(3);
    let rows = wait_all_reach(&c, 1, hw + 1, Duration::from_secs(60));
    eprintln!("Kafka leading again, replication: {rows:?}");
    for id in [1, 2] {
        let log = c.node(id).log_text();
        assert!(!log.contains("Exiting Kafka"), "node {id} exited");
        assert!(
            !log.contains("SSLHandshakeException"),
            "node {id} saw a failed TLS handshake:\n{}",
            support::cluster::tail(&log, 40)
        );
        // Kafka's Selector logs each failed (re-)authentication at INFO, as "Failed
        // authentication with …" or "Failed re-authentication with …".
        assert!(
            !log.contains("authentication with"),
            "node {id} saw a failed SASL authentication:\n{}",
            support::cluster::tail(&log, 40)
        );
    }
    // Every Kafka ERROR (or exception) is one the allow-list explains: none from TLS.
    c.assert_kafka_errors_explained(&[]);
    // KIP-919 registrations name the listener with its protocol (SecurityProtocol SASL_SSL,
    // id 3), Kafka's and ferrokraft's alike.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let registrations = loop {
        let mut image = ferrokraft::metadata::image::MetadataImage::default();
        image.replay_batches(&c.node(3).log_bytes(), i64::MAX, "test");
        let seen: Vec<(i32, Vec<(String, i16)>)> = image
            .controllers
            .iter()
            .map(|(id, r)| {
                let endpoints = r
                    .end_points
                    .iter()
                    .map(|e| (e.name.clone(), e.security_protocol))
                    .collect();
                (*id, endpoints)
            })
            .collect();
        if seen.len() == 3 || std::time::Instant::now() > deadline {
            break seen;
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    let sasl_ssl = vec![("CONTROLLER".to_string(), 3)];
    assert_eq!(
        registrations,
        [(1, sasl_ssl.clone()), (2, sasl_ssl.clone()), (3, sasl_ssl)],
        "every controller registered its listener as SASL_SSL"
    );
    let ours = c.node(3).all_logs_text();
    for refusal in [
        "TLS handshake failed",
        "Failed authentication",
        "SASL authentication with",
    ] {
        assert!(
            !ours.contains(refusal),
            "ferrokraft refused a peer or was refused ({refusal}):\n{}",
            support::cluster::tail(&ours, 40)
        );
    }
}

/// The lines of `log` about a failed TLS handshake from `ip`.
fn refusals_from(log: &str, ip: Ipv4Addr) -> usize {
    let peer = format!("peer={ip}:");
    log.lines()
        .filter(|l| l.contains("TLS handshake failed") && l.contains(&peer))
        .count()
}

/// A single ferrokraft voter with an SSL listener, NoOpRecords off so that its log only grows
/// when something is written. Each bad peer (the ClientHello cut at every one of its bytes
/// among them) comes from its own loopback address: it is closed,
/// logged exactly once with its address, and a good client is served afterwards; the log did
/// not grow.
#[test]
fn ssl_listener_refuses_bad_peers_and_keeps_serving() {
    let _serial = serial();
    let pki = Pki::new();
    let slow = Ipv4Addr::new(127, 0, 0, 50);
    let p = props(
        &pki,
        &[
            ("metadata.max.idle.interval.ms", "0"),
            // One connection at a time from the address that stalls its handshake.
            ("max.connections.per.ip.overrides", "127.0.0.50:1"),
        ],
    );
    let mut c = Cluster::new("tls-refusals", &[Impl::Ferrokraft], &as_refs(&p));
    c.start_all();
    let server = SocketAddr::from(([127, 0, 0, 1], c.nodes[0].port));
    let good = client_config(&pki.ca.cert_pem, Some(&pki.node));

    // Wait until it serves a good TLS client (and has become leader: its log holds the
    // bootstrap records and the leader's first batch).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let served = try_connect_from(Ipv4Addr::new(127, 0, 0, 1), server)
            .ok()
            .and_then(|tcp| api_versions(&mut tls_over(tcp, good.clone()), 7).ok());
        if served == Some((7, 0)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "ferrokraft never served TLS:\n{}",
            c.nodes[0].log_text()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    std::thread::sleep(Duration::from_secs(3));
    let log_before = c.nodes[0].log_bytes().len();

    // A client that connects and never sends its ClientHello holds its connection slot (the
    // per-IP quota applies during the handshake: a second connection from it is closed at
    // once) until the handshake timeout closes it.
    let mut stalled = connect_from(slow, server);
    let stalled_at = Instant::now();
    let mut second = connect_from(slow, server);
    assert!(
        closed_by_peer(&mut second),
        "second connection from the quota'd address open"
    );
    assert!(
        stalled_at.elapsed() < Duration::from_secs(5),
        "the quota refusal came at once"
    );

    let foreign_ca = Ca::new("another CA");
    let foreign = foreign_ca.leaf("intruder");
    let expired = pki.ca.leaf_valid("expired", 2001, 2002);
    let hello = client_hello(good.clone());
    assert!(hello.len() > 100, "a ClientHello of {} bytes", hello.len());

    let mut cases: Vec<(Ipv4Addr, String)> = Vec::new();
    // Each bad peer from its own address in 127.0.1.0 and up (127.0.0.x: good and slow ones).
    let mut next_ip = 250u32;
    let mut ip = |what: &str| {
        next_ip += 1;
        let a = Ipv4Addr::new(127, 0, (next_ip / 250) as u8, (next_ip % 250 + 1) as u8);
        cases.push((a, what.to_string()));
        a
    };

    // A client certificate from another CA.
    {
        let from = ip("certificate from another CA");
        let mut s = tls_over(
            connect_from(from, server),
            client_config(&pki.ca.cert_pem, Some(&foreign)),
        );
        assert!(
            api_versions(&mut s, 1).is_err(),
            "a foreign CA's client was served"
        );
    }
    // An expired client certificate from the right CA.
    {
        let from = ip("expired certificate");
        let mut s = tls_over(
            connect_from(from, server),
            client_config(&pki.ca.cert_pem, Some(&expired)),
        );
        assert!(
            api_versions(&mut s, 1).is_err(),
            "an expired client was served"
        );
    }
    // No client certificate while one is required.
    {
        let from = ip("no client certificate");
        let mut s = tls_over(
            connect_from(from, server),
            client_config(&pki.ca.cert_pem, None),
        );
        assert!(
            api_versions(&mut s, 1).is_err(),
            "a client without a certificate was served"
        );
    }
    // A plaintext Kafka request on the TLS port, twice from one address: logged once.
    {
        let from = ip("plaintext ApiVersions");
        for _ in 0..2 {
            let mut s = connect_from(from, server);
            s.write_all(&api_versions_request(1)).unwrap();
            assert!(closed_by_peer(&mut s), "plaintext client left open");
        }
    }
    // The ClientHello cut at every byte (then the client closes).
    for cut in 1..hello.len() {
        let from = ip(&format!("handshake cut at byte {cut}"));
        let mut s = connect_from(from, server);
        s.write_all(&hello[..cut]).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        assert!(closed_by_peer(&mut s), "cut at {cut}: left open");
    }
    // Garbage, and a TLS record header announcing an impossible length.
    {
        let from = ip("garbage");
        let mut s = connect_from(from, server);
        let garbage: Vec<u8> = (0..2000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let _ = s.write_all(&garbage);
        assert!(closed_by_peer(&mut s), "garbage left open");
    }
    {
        let from = ip("oversized TLS record");
        let mut s = connect_from(from, server);
        let _ = s.write_all(&[0x16, 0x03, 0x03, 0xff, 0xff, 0x01]);
        assert!(closed_by_peer(&mut s), "oversized record left open");
    }

    // The stalled handshake is closed after the 10 s handshake timeout.
    assert!(closed_by_peer(&mut stalled), "stalled handshake left open");
    let waited = stalled_at.elapsed();
    assert!(
        waited >= Duration::from_secs(9) && waited < Duration::from_secs(14),
        "stalled handshake closed after {waited:?}"
    );
    // (Its timeout is not warned about again: the quota refusal was this address's one
    // warning of the interval, as for every bad peer.)

    // A good client is still served, and the log did not grow.
    let mut s = tls_over(
        connect_from(Ipv4Addr::new(127, 0, 0, 2), server),
        good.clone(),
    );
    assert_eq!(
        api_versions(&mut s, 9).unwrap(),
        (9, 0),
        "good client served after the refusals"
    );
    drop(s);
    assert!(c.nodes[0].is_running(), "ferrokraft still runs");
    std::thread::sleep(Duration::from_millis(500));
    let log = c.nodes[0].log_text();
    for line in log.lines().filter(|l| l.contains("TLS handshake failed")) {
        eprintln!("{line}");
    }
    for (from, what) in &cases {
        assert_eq!(
            refusals_from(&log, *from),
            1,
            "{what} from {from}: expected one warning; log:\n{}",
            support::cluster::tail(&log, 60)
        );
    }
    assert_eq!(
        refusals_from(&log, Ipv4Addr::new(127, 0, 0, 2)),
        0,
        "good client warned about"
    );
    let quota_lines = log
        .lines()
        .filter(|l| l.contains("Rejected connection from /127.0.0.50"))
        .count();
    assert_eq!(
        quota_lines, 1,
        "the per-IP refusal during a handshake is logged once"
    );
    assert_eq!(
        c.nodes[0].log_bytes().len(),
        log_before,
        "the refused peers wrote to the metadata log"
    );
}

fn keytool(args: &[&str]) {
    let out = std::process::Command::new("keytool")
        .args(args)
        .output()
        .expect("keytool (a JDK is needed for the Kafka tests anyway)");
    assert!(
        out.status.success(),
        "keytool {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// PKCS12 stores as Java's keytool writes them (a key entry; a trusted-certificate entry) are
/// read by ferrokraft and make a working acceptor and connector; a wrong store password is
/// refused naming the file.
#[test]
fn keytool_pkcs12_stores_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let ks = dir.path().join("node.p12");
    let ts = dir.path().join("trust.p12");
    let crt = dir.path().join("node.crt");
    let (ks_s, ts_s, crt_s) = (
        ks.to_str().unwrap(),
        ts.to_str().unwrap(),
        crt.to_str().unwrap(),
    );
    keytool(&[
        "-genkeypair",
        "-alias",
        "node",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=node",
        "-ext",
        "SAN=ip:127.0.0.1,dns:localhost",
        "-validity",
        "30",
        "-storetype",
        "PKCS12",
        "-keystore",
        ks_s,
        "-storepass",
        "changeit",
        "-keypass",
        "changeit",
    ]);
    keytool(&[
        "-exportcert",
        "-rfc",
        "-alias",
        "node",
        "-keystore",
        ks_s,
        "-storepass",
        "changeit",
        "-file",
        crt_s,
    ]);
    keytool(&[
        "-importcert",
        "-noprompt",
        "-alias",
        "node-ca",
        "-file",
        crt_s,
        "-storetype",
        "PKCS12",
        "-keystore",
        ts_s,
        "-storepass",
        "changeit",
    ]);
    let props = |store_password: &str| {
        let mut p = ferrokraft::config::Properties::new();
        for (k, v) in [
            ("process.roles", "controller"),
            ("node.id", "1"),
            ("controller.quorum.voters", "1@127.0.0.1:9093"),
            ("listeners", "CONTROLLER://127.0.0.1:9093"),
            ("controller.listener.names", "CONTROLLER"),
            ("listener.security.protocol.map", "CONTROLLER:SSL"),
            ("ssl.keystore.type", "PKCS12"),
            ("ssl.keystore.location", ks_s),
            ("ssl.keystore.password", store_password),
            ("ssl.truststore.type", "PKCS12"),
            ("ssl.truststore.location", ts_s),
            ("ssl.truststore.password", "changeit"),
            ("ssl.client.auth", "required"),
        ] {
            p.insert(k.to_string(), v.to_string());
        }
        ferrokraft::config::Config::from_properties(&p).unwrap()
    };
    let c = props("changeit");
    let ssl = &c.ssl["CONTROLLER"];
    let id =
        ferrokraft::network::tls_stores::load_identity(ssl.keystore.as_ref().unwrap()).unwrap();
    assert_eq!(id.chain.len(), 1);
    let trusted =
        ferrokraft::network::tls_stores::load_trusted(ssl.truststore.as_ref().unwrap()).unwrap();
    assert_eq!(trusted.len(), 1, "keytool's trustedCertEntry");
    ferrokraft::network::tls::acceptor(ssl).unwrap();
    ferrokraft::network::tls::connector(ssl).unwrap();
    let bad = props("wrong");
    let e = ferrokraft::network::tls::acceptor(&bad.ssl["CONTROLLER"])
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("node.p12") && e.contains("password"), "{e}");
}

/// SASL on the controller listener for the quorum and its brokers (PLAIN, users from JAAS)
/// and SCRAM-SHA-256 for everyone else, from the metadata: as Kafka's KAFKA-15513 advice
/// has it, the controllers cannot use SCRAM among themselves (no credential exists before
/// the first leader writes the bootstrap records).
const SASL_SCRAM: &[(&str, &str)] = &[
    (
        "listener.security.protocol.map",
        "CONTROLLER:SASL_PLAINTEXT",
    ),
    ("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256"),
    ("sasl.mechanism.controller.protocol", "PLAIN"),
    (
        "listener.name.controller.plain.sasl.jaas.config",
        "org.apache.kafka.common.security.plain.PlainLoginModule required \
         username=\"controller\" password=\"controller-secret\" \
         user_controller=\"controller-secret\";",
    ),
    (
        "listener.name.controller.scram-sha-256.sasl.jaas.config",
        "org.apache.kafka.common.security.scram.ScramLoginModule required;",
    ),
];

/// alice, bootstrapped by `format --add-scram` (ferrokraft's or kafka-storage's, whichever
/// node leads first writes its bootstrap records).
const ADD_SCRAM_ALICE: &str = "SCRAM-SHA-256=[name=alice,password=alice-secret]";

fn client_props(
    c: &Cluster,
    name: &str,
    protocol: &str,
    mechanism: &str,
    user: &str,
    password: &str,
) -> String {
    let module = if mechanism == "PLAIN" {
        "org.apache.kafka.common.security.plain.PlainLoginModule"
    } else {
        "org.apache.kafka.common.security.scram.ScramLoginModule"
    };
    let path = c.art.path(&format!("{name}.properties"));
    std::fs::write(
        &path,
        format!(
            "security.protocol={protocol}\nsasl.mechanism={mechanism}\n\
             sasl.jaas.config={module} required username=\"{user}\" password=\"{password}\";\n\
             default.api.timeout.ms=15000\nrequest.timeout.ms=8000\n"
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// `kafka-metadata-quorum --bootstrap-controller <node> describe --status` as a client.
fn quorum_status_as(c: &Cluster, via: i32, name: &str, config: &str) -> support::kafka::ToolOutput {
    support::kafka::kafka().tool(
        &c.art,
        &format!("status-{name}-via-{via}"),
        "org.apache.kafka.tools.MetadataQuorumCommand",
        &[
            "--bootstrap-controller",
            &c.controller_address(via),
            "--command-config",
            config,
            "describe",
            "--status",
        ],
    )
}

/// The line of a failed tool's output that carries the SASL error, its wording compared.
fn sasl_error(out: &support::kafka::ToolOutput) -> String {
    let text = format!("{}{}", out.stdout, out.stderr);
    text.lines()
        .find(|l| {
            l.contains("SaslAuthenticationException")
                || l.contains("UnsupportedSaslMechanismException")
                || l.contains("IllegalSaslStateException")
        })
        .map(|l| l.trim().to_string())
        .unwrap_or_else(|| panic!("no SASL error in:\n{text}"))
}

/// SCRAM credentials end to end through a Kafka 4.1.2 broker, with ferrokraft the active
/// controller of a mixed quorum (two ferrokraft nodes formatted by `ferrokraft format
/// --add-scram`, one Kafka controller by `kafka-storage format --add-scram`), every
/// controller listener SASL_PLAINTEXT (PLAIN among controllers and for the broker; SCRAM for
/// clients), the broker's own listener SASL_PLAINTEXT with SCRAM only:
/// - alice, bootstrapped at format, authenticates to the broker; as alice, `kafka-configs
///   --alter --add-config SCRAM-SHA-256=[iterations=8192,password=bob-secret]` reaches
///   ferrokraft as a forwarded AlterUserScramCredentials, and `--describe` shows it;
/// - bob then authenticates to the broker (its credential checked against ferrokraft's
///   stored and server keys), to a ferrokraft controller and to the Kafka controller (which
///   replayed ferrokraft's record);
/// - a wrong password and a mechanism the listener does not enable are refused by ferrokraft
///   with the very error the Kafka controller gives, each logged once with the peer;
/// - `--delete-config SCRAM-SHA-256` removes bob, who is refused from then on.
#[test]
fn scram_credentials_bootstrapped_altered_through_a_broker_and_served_by_ferrokraft() {
    let _serial = serial();
    let mut c = Cluster::new(
        "scram-through-broker",
        &[Impl::Ferrokraft, Impl::Ferrokraft, Impl::Kafka],
        SASL_SCRAM,
    );
    // Format again, with alice's credential in the bootstrap records.
    for i in 0..3 {
        let (kind, dir, props) = {
            let n = &c.nodes[i];
            (n.kind, n.dir.clone(), n.props.clone())
        };
        std::fs::remove_dir_all(&dir).unwrap();
        support::cluster::format_node(
            &c.art,
            kind,
            &props,
            &c.cluster_id,
            &["--add-scram", ADD_SCRAM_ALICE],
        );
    }
    let controller_plain = client_props(
        &c,
        "controller-plain",
        "SASL_PLAINTEXT",
        "PLAIN",
        "controller",
        "controller-secret",
    );
    std::fs::copy(&controller_plain, c.art.path("admin.properties")).unwrap();
    c.start_all();
    let leader = c.make_leader_kind(Impl::Ferrokraft, Duration::from_secs(180));
    eprintln!("ferrokraft node {leader} leads");

    let broker = c.start_broker_with(
        100,
        &[
            (
                "listener.security.protocol.map",
                "CONTROLLER:SASL_PLAINTEXT,PLAINTEXT:SASL_PLAINTEXT",
            ),
            ("sasl.enabled.mechanisms", "SCRAM-SHA-256"),
            ("sasl.mechanism.inter.broker.protocol", "SCRAM-SHA-256"),
            ("sasl.mechanism.controller.protocol", "PLAIN"),
            (
                "listener.name.controller.plain.sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required \
                 username=\"controller\" password=\"controller-secret\";",
            ),
            (
                "listener.name.plaintext.scram-sha-256.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required \
                 username=\"alice\" password=\"alice-secret\";",
            ),
        ],
    );
    broker.wait_for_log_text(
        support::clients::UNFENCED_LOG,
        Instant::now() + Duration::from_secs(120),
    );
    let bootstrap = broker.bootstrap();
    let alice = client_props(
        &c,
        "alice",
        "SASL_PLAINTEXT",
        "SCRAM-SHA-256",
        "alice",
        "alice-secret",
    );
    let configs = |name: &str, config: &str, args: &[&str]| {
        let mut full = vec![
            "--bootstrap-server",
            bootstrap.as_str(),
            "--command-config",
            config,
        ];
        full.extend(args);
        support::kafka::kafka().tool(&c.art, name, support::clients::config_command(), &full)
    };
    let bob_args = ["--entity-type", "users", "--entity-name", "bob"];
    let mut add = vec![
        "--alter",
        "--add-config",
        "SCRAM-SHA-256=[iterations=8192,password=bob-secret]",
    ];
    add.extend(bob_args);
    let out = configs("add-bob", &alice, &add);
    out.assert_ok("kafka-configs --add-config SCRAM-SHA-256 for bob, as alice");
    assert!(
        out.stdout
            .contains("Completed updating config for user bob."),
        "{}",
        out.stdout
    );
    // The credential is in ferrokraft's committed log, and the broker describes it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let bob_held = |c: &Cluster, id: i32| {
        let mut image = ferrokraft::metadata::image::MetadataImage::default();
        image.replay_batches(&c.nodes[(id - 1) as usize].log_bytes(), i64::MAX, "test");
        image
            .scram
            .get(&(1, "bob".to_string()))
            .map(|r| r.iterations)
    };
    while bob_held(&c, leader) != Some(8192) {
        assert!(
            Instant::now() < deadline,
            "bob's credential never reached the log"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let mut describe = vec!["--describe"];
    describe.extend(bob_args);
    let out = configs("describe-bob", &alice, &describe);
    out.assert_ok("kafka-configs --describe users bob");
    assert!(
        out.stdout.contains(
            "SCRAM credential configs for user-principal 'bob' are SCRAM-SHA-256=iterations=8192"
        ),
        "{}",
        out.stdout
    );

    // bob authenticates to the broker, to a ferrokraft controller and to the Kafka one.
    let bob = client_props(
        &c,
        "bob",
        "SASL_PLAINTEXT",
        "SCRAM-SHA-256",
        "bob",
        "bob-secret",
    );
    let out = configs("describe-as-bob", &bob, &describe);
    out.assert_ok("bob through the broker");
    let follower = if leader == 1 { 2 } else { 1 };
    for via in [leader, follower, 3] {
        quorum_status_as(&c, via, "bob", &bob).assert_ok(&format!("bob to controller {via}"));
    }
    quorum_status_as(&c, leader, "alice", &alice).assert_ok("alice to the active controller");

    // Refusals: ferrokraft answers as the Kafka controller does, and logs each once.
    let wrong = client_props(
        &c,
        "bob-wrong",
        "SASL_PLAINTEXT",
        "SCRAM-SHA-256",
        "bob",
        "not-bob",
    );
    let sha512 = client_props(
        &c,
        "bob-512",
        "SASL_PLAINTEXT",
        "SCRAM-SHA-512",
        "bob",
        "bob-secret",
    );
    let failures = |c: &Cluster| -> Vec<String> {
        c.nodes[(leader - 1) as usize]
            .all_logs_text()
            .lines()
            .filter(|l| l.contains("Failed authentication with"))
            .map(String::from)
            .collect()
    };
    let before = failures(&c).len();
    for (name, config) in [("wrong-password", &wrong), ("sha512", &sha512)] {
        let ours = quorum_status_as(&c, leader, name, config);
        let kafkas = quorum_status_as(&c, 3, name, config);
        assert!(
            !ours.status.success() && !kafkas.status.success(),
            "{name} let in"
        );
        assert_eq!(
            sasl_error(&ours),
            sasl_error(&kafkas),
            "{name}: the client's error"
        );
    }
    // The first refusal is logged with the peer and Kafka's reason; a second one from the
    // same address within a minute is only counted (the per-address limit on bad-peer lines).
    let logged = failures(&c)[before..].to_vec();
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert!(
        logged[0].contains("Failed authentication with /127.0.0.1 (Authentication failed during \
             authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256) peer=127.0.0.1:"),
        "{logged:?}"
    );

    // bob removed: refused by the broker and by ferrokraft from then on.
    let mut delete = vec!["--alter", "--delete-config", "SCRAM-SHA-256"];
    delete.extend(bob_args);
    configs("delete-bob", &alice, &delete).assert_ok("kafka-configs --delete-config for bob");
    let deadline = Instant::now() + Duration::from_secs(30);
    while bob_held(&c, leader).is_some() {
        assert!(
            Instant::now() < deadline,
            "bob's credential never left the log"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let out = quorum_status_as(&c, leader, "bob-deleted", &bob);
    assert!(!out.status.success(), "a deleted user let in");
    assert!(
        sasl_error(&out).contains("Authentication failed"),
        "{}",
        sasl_error(&out)
    );
    c.assert_kafka_errors_explained(&[]);
    drop(broker);
}

/// `ssl.principal.mapping.rules` on an SSL controller listener with the StandardAuthorizer: a
/// mixed quorum (two ferrokraft controllers, a Kafka one) whose nodes present `CN=controller`
/// (no rule matches it, so DEFAULT keeps the DN: the super user `User:CN=controller`), and two
/// clients whose certificates say `CN=Alice,O=Users` and `CN=Bob,O=Users`, which the rule
/// lowers to `alice` and `bob`. The super user grants `User:alice` ALTER on the cluster through
/// a ferrokraft controller; alice may then describe the quorum through every controller,
/// ferrokraft or Kafka, and bob is refused by each with the same error, each logging the
/// refusal of `User:bob`.
#[test]
fn ssl_clients_are_their_certificate_subjects_mapped_as_on_kafka() {
    let _serial = serial();
    let pki = Pki::new();
    let p = props(
        &pki,
        &[
            (
                "authorizer.class.name",
                "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            ),
            ("super.users", "User:CN=controller"),
            (
                "ssl.principal.mapping.rules",
                "RULE:^CN=([^,]+),O=Users$/$1/L,DEFAULT",
            ),
        ],
    );
    let mut c = Cluster::new(
        "ssl-principals",
        &[Impl::Ferrokraft, Impl::Kafka, Impl::Ferrokraft],
        &as_refs(&p),
    );
    std::fs::write(c.art.path("admin.properties"), pki.admin_props()).unwrap();
    c.start_all();
    c.wait_for_leader(1, 1, Duration::from_secs(90));
    let client = |name: &str, cn: &str| {
        let path = c.art.path(&format!("{name}.properties"));
        let leaf = pki.ca.client_leaf(cn, "Users");
        std::fs::write(&path, pki.client_props(name, &leaf)).unwrap();
        path.display().to_string()
    };
    let (alice, bob) = (client("alice", "Alice"), client("bob", "Bob"));

    // Before any ACL alice is refused too: she is not a super user.
    let before = quorum_status_as(&c, 1, "alice-before", &alice);
    assert!(!before.status.success(), "alice served without an ACL");

    let admin = c.art.path("admin.properties").display().to_string();
    support::kafka::kafka()
        .tool(
            &c.art,
            "grant-alice",
            "org.apache.kafka.tools.AclCommand",
            &[
                "--bootstrap-controller",
                &c.controller_address(1),
                "--command-config",
                &admin,
                "--add",
                "--allow-principal",
                "User:alice",
                "--operation",
                "Alter",
                "--cluster",
            ],
        )
        .assert_ok("kafka-acls --add as the super user (CN=controller)");
    // The ACL is committed on every controller, ferrokraft and Kafka alike.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut refusals = Vec::new();
    for via in [1, 2, 3] {
        loop {
            let out = quorum_status_as(&c, via, "alice", &alice);
            if out.status.success() {
                assert!(out.stdout.contains("LeaderId:"), "{}", out.stdout);
                break;
            }
            assert!(
                Instant::now() < deadline,
                "alice refused via node {via}:\n{}{}",
                out.stdout,
                out.stderr
            );
            std::thread::sleep(Duration::from_secs(1));
        }
        let out = quorum_status_as(&c, via, "bob", &bob);
        assert!(!out.status.success(), "bob served via node {via}");
        let text = format!("{}{}", out.stdout, out.stderr);
        let line = text
            .lines()
            .find(|l| l.contains("ClusterAuthorizationException"))
            .unwrap_or_else(|| panic!("bob via {via}: no authorization error in:\n{text}"));
        // Each controller, Kafka's too, logs the refusal of bob's certificate mapped to
        // `User:bob` (Kafka's authorizer logger and ferrokraft's audit line read alike).
        let log = c.node(via).all_logs_text();
        assert!(
            log.contains(
                "Principal = User:bob is Denied operation = ALTER from host = 127.0.0.1 on \
                 resource = Cluster:LITERAL:kafka-cluster"
            ),
            "node {via} did not refuse User:bob:\n{}",
            support::cluster::tail(&log, 30)
        );
        refusals.push(
            line[line.find("org.apache.kafka").unwrap_or(0)..line.find("Request(").unwrap_or(0)]
                .to_string(),
        );
    }
    assert!(
        refusals.windows(2).all(|w| w[0] == w[1]),
        "bob's refusals differ: {refusals:?}"
    );
    let ours = c.node(1).all_logs_text();
    assert!(
        !ours.contains("no principal for its certificate"),
        "a certificate found no principal:\n{}",
        support::cluster::tail(&ours, 40)
    );
    c.assert_kafka_errors_explained(&[support::cluster::AllowedError {
        cause: "bob (and alice before her ACL) ask the Kafka controller for DescribeCluster; \
                its ControllerApis logs each refusal at ERROR",
        contains: &[
            "apiKey=DESCRIBE_CLUSTER",
            "ClusterAuthorizationException: Request Request(",
            "needs ALTER permission.",
        ],
    }]);
}

/// A framed request: header (client id `t`) and body, encoded at `version`.
fn framed<T: kafka_protocol::protocol::Encodable>(
    key: kafka_protocol::messages::ApiKey,
    version: i16,
    correlation_id: i32,
    body: &T,
) -> Vec<u8> {
    let mut buf = bytes::BytesMut::new();
    ferrokraft::codec::header::encode_request_header(&mut buf, key, version, correlation_id, "t");
    body.encode(&mut buf, version).unwrap();
    let mut frame = (buf.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&buf);
    frame
}

/// A SASL exchange (SaslHandshake v1 for PLAIN, then SaslAuthenticate v2) as bytes on the wire.
fn plain_exchange(user: &str, password: &str) -> Vec<u8> {
    use kafka_protocol::messages::{ApiKey, SaslAuthenticateRequest, SaslHandshakeRequest};
    let mut bytes = framed(
        ApiKey::SaslHandshake,
        1,
        1,
        &SaslHandshakeRequest::default()
            .with_mechanism(kafka_protocol::protocol::StrBytes::from_static_str("PLAIN")),
    );
    let token = format!("\0{user}\0{password}");
    bytes.extend(framed(
        ApiKey::SaslAuthenticate,
        2,
        2,
        &SaslAuthenticateRequest::default().with_auth_bytes(bytes::Bytes::from(token)),
    ));
    bytes
}

/// A single ferrokraft voter on SASL_PLAINTEXT (PLAIN), NoOpRecords off: the SASL exchange cut
/// at every one of its bytes, a wrong password, an unknown mechanism, a request before the
/// handshake, garbage announcing a frame beyond `sasl.server.max.receive.size` — each from its
/// own loopback address — are each closed, logged at most once (the refusals exactly once)
/// with the address, and write nothing to the log; a good client authenticates afterwards.
#[test]
fn sasl_listener_refuses_cut_and_bad_exchanges_and_keeps_serving() {
    use kafka_protocol::messages::{ApiKey, SaslHandshakeRequest};
    let _serial = serial();
    let jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required \
                username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\";";
    let mut c = Cluster::new(
        "sasl-refusals",
        &[Impl::Ferrokraft],
        &[
            (
                "listener.security.protocol.map",
                "CONTROLLER:SASL_PLAINTEXT",
            ),
            ("sasl.enabled.mechanisms", "PLAIN"),
            ("sasl.mechanism.controller.protocol", "PLAIN"),
            ("listener.name.controller.plain.sasl.jaas.config", jaas),
            ("metadata.max.idle.interval.ms", "0"),
        ],
    );
    std::fs::write(
        c.art.path("admin.properties"),
        format!(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={jaas}\n"
        ),
    )
    .unwrap();
    c.start_all();
    let server = SocketAddr::from(([127, 0, 0, 1], c.nodes[0].port));
    // A good exchange, then ApiVersions answered: the node serves authenticated clients.
    let good = plain_exchange("admin", "admin-secret");
    let served = |from: Ipv4Addr| {
        let Ok(mut s) = try_connect_from(from, server) else {
            return false;
        };
        if s.write_all(&good).is_err() {
            return false;
        }
        let mut read_frame = || -> std::io::Result<Vec<u8>> {
            let mut size = [0u8; 4];
            std::io::Read::read_exact(&mut s, &mut size)?;
            let mut body = vec![0u8; i32::from_be_bytes(size) as usize];
            std::io::Read::read_exact(&mut s, &mut body)?;
            Ok(body)
        };
        // The handshake and authenticate answers, then ApiVersions.
        if read_frame().is_err() || read_frame().is_err() {
            return false;
        }
        api_versions(&mut s, 9).ok() == Some((9, 0))
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !served(Ipv4Addr::new(127, 0, 0, 1)) {
        assert!(
            Instant::now() < deadline,
            "ferrokraft never served a SASL client:\n{}",
            c.nodes[0].log_text()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    std::thread::sleep(Duration::from_secs(2));
    let log_before = c.nodes[0].log_bytes().len();

    let mut next = 250u32;
    let mut ip = || {
        next += 1;
        Ipv4Addr::new(127, 0, (next / 250) as u8, (next % 250 + 1) as u8)
    };
    let mut refused: Vec<(Ipv4Addr, &str)> = Vec::new();
    let mut quiet: Vec<Ipv4Addr> = Vec::new();
    // The exchange cut at every byte, then the client closes.
    for cut in 1..good.len() {
        let from = ip();
        let mut s = connect_from(from, server);
        s.write_all(&good[..cut]).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        assert!(closed_by_peer(&mut s), "cut at {cut}: left open");
        quiet.push(from);
    }
    let mut bad = |bytes: Vec<u8>, what: &'static str| {
        let from = ip();
        let mut s = connect_from(from, server);
        let _ = s.write_all(&bytes);
        assert!(closed_by_peer(&mut s), "{what}: left open");
        refused.push((from, what));
    };
    bad(plain_exchange("admin", "wrong"), "a wrong password");
    bad(
        framed(
            ApiKey::SaslHandshake,
            1,
            1,
            &SaslHandshakeRequest::default().with_mechanism(
                kafka_protocol::protocol::StrBytes::from_static_str("GSSAPI"),
            ),
        ),
        "an unknown mechanism",
    );
    bad(
        framed(
            ApiKey::DescribeQuorum,
            2,
            1,
            &kafka_protocol::messages::DescribeQuorumRequest::default(),
        ),
        "a request before the handshake",
    );
    bad(
        [0x7f, 0xff, 0xff, 0xff, 1, 2, 3, 4].to_vec(),
        "garbage announcing a huge frame",
    );

    // A request in place of SaslAuthenticate: Kafka answers it with its own error response,
    // ILLEGAL_SASL_STATE, then closes (and logs the failed authentication).
    {
        let from = ip();
        let mut s = connect_from(from, server);
        let mut bytes = framed(
            ApiKey::SaslHandshake,
            1,
            1,
            &SaslHandshakeRequest::default()
                .with_mechanism(kafka_protocol::protocol::StrBytes::from_static_str("PLAIN")),
        );
        bytes.extend(framed(
            ApiKey::DescribeQuorum,
            2,
            2,
            &kafka_protocol::messages::DescribeQuorumRequest::default(),
        ));
        s.write_all(&bytes).unwrap();
        let mut frames = Vec::new();
        for _ in 0..2 {
            let mut size = [0u8; 4];
            std::io::Read::read_exact(&mut s, &mut size).unwrap();
            let mut body = vec![0u8; i32::from_be_bytes(size) as usize];
            std::io::Read::read_exact(&mut s, &mut body).unwrap();
            frames.push(bytes::Bytes::from(body));
        }
        let (_, answer) = ferrokraft::codec::response::decode_response(
            frames[1].clone(),
            ApiKey::DescribeQuorum,
            2,
        )
        .unwrap();
        match answer {
            ferrokraft::codec::ResponseBody::DescribeQuorum(r) => {
                assert_eq!(r.error_code, 34, "ILLEGAL_SASL_STATE");
                assert_eq!(
                    r.error_message.as_deref(),
                    Some("Unexpected Kafka request of type DESCRIBE_QUORUM during SASL authentication.")
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(closed_by_peer(&mut s), "left open after the error answer");
        refused.push((from, "a request in place of SaslAuthenticate"));
    }

    assert!(
        served(Ipv4Addr::new(127, 0, 0, 2)),
        "a good client served after the refusals"
    );
    std::thread::sleep(Duration::from_millis(500));
    let log = c.nodes[0].log_text();
    let lines_from = |from: Ipv4Addr| {
        let (peer, slash) = (format!("peer={from}:"), format!("/{from} "));
        log.lines()
            .filter(|l| l.contains(&peer) || l.contains(&slash))
            .count()
    };
    for (from, what) in &refused {
        assert_eq!(
            lines_from(*from),
            1,
            "{what} from {from}: expected one line; log:\n{}",
            support::cluster::tail(&log, 40)
        );
    }
    for from in &quiet {
        assert!(
            lines_from(*from) <= 1,
            "a cut exchange from {from} logged twice"
        );
    }
    assert!(c.nodes[0].is_running(), "ferrokraft still runs");
    assert_eq!(
        c.nodes[0].log_bytes().len(),
        log_before,
        "the refused peers wrote to the metadata log"
    );
}
