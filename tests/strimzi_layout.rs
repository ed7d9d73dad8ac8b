//! ferrokraft under Strimzi, without a cluster (#40): dist/strimzi's run, liveness and
//! readiness scripts on pod filesystems laid out as Strimzi 1.0.0 lays them, a 3-controller
//! quorum they start serving a real Kafka 4.1.2 broker, the probes' exit codes, a voter and
//! the leader restarted with quorum-state deleted as Strimzi's run deletes it, and
//! `${strimzienv:…}` / `${strimzisecrets:…}` placeholders resolved against a local HTTPS
//! stand-in for the Kubernetes API (tests/support/kube_api.rs).
//!
//! Each pod is a directory `pods/<pod name>/` holding what Strimzi mounts (paths from
//! strimzi-kafka-operator 1.0.0: KafkaCluster.java, VolumeUtils.java, kafka_run.sh):
//!   opt/kafka/custom-config/{server.config,cluster.id,metadata.version}  (the node's ConfigMap)
//!   opt/kafka/{kafka_run.sh,kafka_liveness.sh,kafka_readiness.sh,ferrokraft_common.sh} (the image)
//!   tmp/                                        (the strimzi-tmp emptyDir)
//!   var/lib/kafka/data-0/kafka-log<id>/         (the JBOD volume 0 of the node)
//!   var/run/secrets/kubernetes.io/serviceaccount/{token,ca.crt,namespace}
//! and the scripts are pointed at it with FERROKRAFT_POD_ROOT and KAFKA_HOME. What cannot be
//! per pod on one machine differs from a real pod: each controller listens on its own
//! loopback port instead of 9090, and serves /metrics and /ready on its own port instead of
//! 9404 (FERROKRAFT_METRICS_PORT); the Kubernetes API is found through fabric8's variables
//! instead of the pod's KUBERNETES_SERVICE_HOST on 443.

// Integration tests drive real processes: unwrapping and wall-clock waits are fine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::broker::BROKER_JVM;
use support::clients::{TOPIC_COMMAND, UNFENCED_LOG};
use support::cluster::{format_node, Impl};
use support::kafka::{free_port, kafka, send_signal, Artifacts};
use support::kube_api::{KubeApi, Secrets};
use support::tls::{Ca, Leaf};

const CLUSTER: &str = "my-cluster";
const NAMESPACE: &str = "myproject";
const CLUSTER_ID: &str = "2Vbg8-4mQ1aFp3kT0d9jQw";
const TOKEN: &str = "sa-token-5e1f0c7b9a";
const LISTENER: &str = "CONTROLPLANE-9090";

fn pod_name(id: i32) -> String {
    format!("{CLUSTER}-controllers-{id}")
}

/// One controller pod: its directory, environment and the running server (the run script's
/// process, which execs ferrokraft).
struct Pod {
    id: i32,
    root: PathBuf,
    metrics: u16,
    env: Vec<(String, String)>,
    run: Option<Child>,
    starts: usize,
    art_dir: PathBuf,
}

impl Pod {
    fn script(&self, name: &str) -> Command {
        let mut c = Command::new("bash");
        c.arg(self.root.join("opt/kafka").join(name))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        c
    }

    /// Runs kafka_run.sh as the container's command; its output goes to `pod<id>-<n>.log`.
    fn start(&mut self) {
        self.starts += 1;
        let log = self
            .art_dir
            .join(format!("pod{}-{}.log", self.id, self.starts));
        let out = fs::File::create(&log).unwrap();
        let child = self
            .script("kafka_run.sh")
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap();
        self.run = Some(child);
    }

    fn run_log(&self) -> String {
        fs::read_to_string(
            self.art_dir
                .join(format!("pod{}-{}.log", self.id, self.starts)),
        )
        .unwrap_or_default()
    }

    /// The kubelet's SIGTERM, then the exit.
    fn stop(&mut self) {
        let mut child = self.run.take().expect("running");
        send_signal(child.id(), "TERM");
        let deadline = Instant::now() + Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "pod {} did not stop", self.id);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn probe(&self, name: &str) -> bool {
        self.script(name)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success()
    }

    fn quorum_state(&self) -> PathBuf {
        self.root.join(format!(
            "var/lib/kafka/data-0/kafka-log{}/__cluster_metadata-0/quorum-state",
            self.id
        ))
    }

    /// `/ready`'s answer: (leader, high watermark) when ready.
    fn ready(&self) -> Option<(i32, i64)> {
        let mut s = TcpStream::connect(("127.0.0.1", self.metrics)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
        write!(s, "GET /ready HTTP/1.0\r\n\r\n").ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        // "ready: leader L epoch E high watermark H"
        let body = text.split("\r\n\r\n").nth(1)?;
        let words: Vec<&str> = body.split_whitespace().collect();
        if words.first() != Some(&"ready:") {
            return None;
        }
        Some((words.get(2)?.parse().ok()?, words.get(7)?.parse().ok()?))
    }
}

impl Drop for Pod {
    fn drop(&mut self) {
        if let Some(mut c) = self.run.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// server.config as Strimzi 1.0.0's KafkaBrokerConfigurationBuilder writes it for a
/// controller-only node (sections and keys in its order; ports and paths made per pod).
fn server_config(id: i32, voters: &str, port: u16, data: &Path) -> String {
    let pod = pod_name(id);
    let secret = |name: &str, key: &str| format!("${{strimzisecrets:{NAMESPACE}/{name}:{key}}}");
    let l = LISTENER.to_lowercase();
    format!(
        "##########\n# Node / Broker ID\n##########\nnode.id={id}\n\n\
         ##########\n# Kafka message logs configuration\n##########\nlog.dirs={log}\n\n\
         ##########\n# KRaft configuration\n##########\nprocess.roles=controller\n\
         controller.listener.names={LISTENER}\ncontroller.quorum.voters={voters}\n\n\
         ##########\n# KRaft metadata log dir configuration\n##########\nmetadata.log.dir={log}\n\n\
         ##########\n# Control Plane listener\n##########\n\
         listener.name.{l}.ssl.keystore.certificate.chain={chain}\n\
         listener.name.{l}.ssl.keystore.key={key}\n\
         listener.name.{l}.ssl.keystore.type=PEM\n\
         listener.name.{l}.ssl.truststore.certificates={trust}\n\
         listener.name.{l}.ssl.truststore.type=PEM\n\
         listener.name.{l}.ssl.client.auth=required\n\n\
         ##########\n# Common listener configuration\n##########\n\
         listener.security.protocol.map={LISTENER}:SSL\n\
         listeners={LISTENER}://127.0.0.1:{port}\n\
         advertised.listeners={LISTENER}://127.0.0.1:{port}\n\
         sasl.enabled.mechanisms=\nssl.endpoint.identification.algorithm=HTTPS\n\n\
         ##########\n# Config providers\n##########\n\
         # Configuration providers configured by the user and by Strimzi\n\
         config.providers=strimzienv,strimzisecrets\n\
         config.providers.strimzienv.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n\
         config.providers.strimzienv.param.allowlist.pattern=.*\n\
         config.providers.strimzisecrets.class=io.strimzi.kafka.KubernetesSecretConfigProvider\n\n\
         ##########\n# User provided configuration\n##########\n\
         controller.quorum.election.timeout.ms=${{strimzienv:TEST_ELECTION_TIMEOUT_MS}}\n",
        log = data.join(format!("kafka-log{id}")).display(),
        chain = secret(&pod, &format!("{pod}.crt")),
        key = secret(&pod, &format!("{pod}.key")),
        trust = secret(&format!("{CLUSTER}-trustbundle"), "cluster-ca.crt"),
    )
}

/// The pods' Secrets as the operator creates them: each node's certificate and key under the
/// pod's name, the cluster CA in the trust bundle.
fn secrets(ca: &Ca, leaves: &BTreeMap<i32, Leaf>) -> Secrets {
    let mut s = Secrets::new();
    for (id, leaf) in leaves {
        let pod = pod_name(*id);
        s.insert(
            (NAMESPACE.into(), pod.clone()),
            BTreeMap::from([
                (format!("{pod}.crt"), leaf.cert_pem.clone()),
                (format!("{pod}.key"), leaf.key_pem.clone()),
            ]),
        );
    }
    s.insert(
        (NAMESPACE.into(), format!("{CLUSTER}-trustbundle")),
        BTreeMap::from([("cluster-ca.crt".to_string(), ca.cert_pem.clone())]),
    );
    s
}

fn lay_out_pod(art: &Artifacts, api: &KubeApi, id: i32, voters: &str, port: u16) -> Pod {
    let root = art.path(&format!("pods/{}", pod_name(id)));
    let kafka_home = root.join("opt/kafka");
    let custom = kafka_home.join("custom-config");
    let data = root.join("var/lib/kafka/data-0");
    for d in [&custom, &data, &root.join("tmp")] {
        fs::create_dir_all(d).unwrap();
    }
    let dist = Path::new(env!("CARGO_MANIFEST_DIR")).join("dist/strimzi");
    for script in [
        "kafka_run.sh",
        "kafka_liveness.sh",
        "kafka_readiness.sh",
        "ferrokraft_common.sh",
    ] {
        fs::copy(dist.join(script), kafka_home.join(script)).unwrap();
    }
    fs::write(
        custom.join("server.config"),
        server_config(id, voters, port, &data),
    )
    .unwrap();
    fs::write(custom.join("cluster.id"), CLUSTER_ID).unwrap();
    fs::write(custom.join("metadata.version"), "4.1-IV1").unwrap();
    let sa = api.service_account(
        &root.join("var/run/secrets/kubernetes.io/serviceaccount"),
        NAMESPACE,
    );
    let metrics = free_port();
    let mut env: Vec<(String, String)> = vec![
        // What the operator sets on a Kafka container (KafkaCluster.getEnvVars).
        ("KAFKA_JMX_EXPORTER_ENABLED".into(), "false".into()),
        ("STRIMZI_KAFKA_GC_LOG_ENABLED".into(), "false".into()),
        ("KAFKA_CLUSTER_NAME".into(), CLUSTER.into()),
        ("KAFKA_HEAP_OPTS".into(), "-Xms128M".into()),
        ("HOSTNAME".into(), pod_name(id)),
        // The image's.
        ("KAFKA_HOME".into(), kafka_home.display().to_string()),
        // The test's: the pod root, the binary, the per-pod metrics port.
        ("FERROKRAFT_POD_ROOT".into(), root.display().to_string()),
        (
            "FERROKRAFT_BIN".into(),
            env!("CARGO_BIN_EXE_ferrokraft").into(),
        ),
        ("FERROKRAFT_METRICS_PORT".into(), metrics.to_string()),
        // A user-provided variable the config reads through ${strimzienv:…}.
        ("TEST_ELECTION_TIMEOUT_MS".into(), "1000".into()),
    ];
    env.extend(api.env(&sa));
    Pod {
        id,
        root,
        metrics,
        env,
        run: None,
        starts: 0,
        art_dir: art.dir.clone(),
    }
}

fn wait_for(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every pod in `pods` ready, agreeing on one leader, with a high watermark at least `min_hw`;
/// returns (leader, high watermark).
fn wait_quorum(pods: &[Pod], min_hw: i64, timeout: Duration) -> (i32, i64) {
    let mut seen = (-1, -1);
    wait_for("a ready quorum", timeout, || {
        let answers: Vec<Option<(i32, i64)>> = pods.iter().map(Pod::ready).collect();
        let Some(Some(first)) = answers.first().copied() else {
            return false;
        };
        seen = first;
        answers
            .iter()
            .all(|a| matches!(a, Some((l, hw)) if *l == first.0 && *hw >= min_hw))
    });
    seen
}

fn topics(art: &Artifacts, bootstrap: &str, name: &str, args: &[&str]) -> String {
    let mut full = vec!["--bootstrap-server", bootstrap];
    full.extend(args);
    let out = kafka().tool(art, name, TOPIC_COMMAND, &full);
    out.assert_ok(name);
    out.stdout
}

#[test]
fn strimzi_pods_run_a_ferrokraft_quorum_serving_a_kafka_broker() {
    let started = Instant::now();
    let art = Artifacts::new("strimzi_layout");
    let ca = Ca::new("cluster-ca");
    let leaves: BTreeMap<i32, Leaf> = (1..=3).map(|id| (id, ca.leaf(&pod_name(id)))).collect();
    let api = KubeApi::start(secrets(&ca, &leaves), TOKEN);
    let ports: Vec<u16> = (1..=3).map(|_| free_port()).collect();
    let voters = (1..=3)
        .map(|id| format!("{id}@127.0.0.1:{}", ports[(id - 1) as usize]))
        .collect::<Vec<_>>()
        .join(",");
    let mut pods: Vec<Pod> = (1..=3)
        .map(|id| lay_out_pod(&art, &api, id, &voters, ports[(id - 1) as usize]))
        .collect();

    // Before the start: not alive, not ready (no /tmp/strimzi.properties yet).
    assert!(!pods[0].probe("kafka_liveness.sh"));
    assert!(!pods[0].probe("kafka_readiness.sh"));
    for p in &mut pods {
        p.start();
    }
    let (first_leader, hw) = wait_quorum(&pods, 1, Duration::from_secs(30));
    for p in &pods {
        let log = p.run_log();
        assert!(log.contains("KRaft storage formatting is done"), "{log}");
        assert!(p.root.join("tmp/strimzi.properties").is_file());
        assert!(p.probe("kafka_liveness.sh"), "pod {} alive", p.id);
        assert!(p.probe("kafka_readiness.sh"), "pod {} ready", p.id);
        // The TLS material came through the API and never reached the output.
        let key = &leaves[&p.id].key_pem;
        let key_line = key.lines().nth(1).unwrap();
        assert!(!log.contains(key_line), "pod {} printed its key", p.id);
    }
    let reads = api.requests.lock().unwrap().clone();
    assert!(
        reads.iter().all(|(_, authorized)| *authorized)
            && reads.iter().any(|(line, _)| line.contains(&format!(
                "/api/v1/namespaces/{NAMESPACE}/secrets/{CLUSTER}-trustbundle"
            ))),
        "{reads:?}"
    );

    // A Kafka 4.1.2 broker on the quorum, over the SSL control plane listener.
    let broker_leaf = ca.leaf("my-cluster-brokers-100");
    let pem_dir = art.path("broker-tls");
    fs::create_dir_all(&pem_dir).unwrap();
    let keystore = pem_dir.join("broker.pem");
    fs::write(
        &keystore,
        format!("{}{}", broker_leaf.key_pem, broker_leaf.cert_pem),
    )
    .unwrap();
    let truststore = pem_dir.join("ca.pem");
    fs::write(&truststore, &ca.cert_pem).unwrap();
    let broker_port = free_port();
    let broker_props = art.path("broker100.properties");
    let l = LISTENER.to_lowercase();
    fs::write(
        &broker_props,
        format!(
            "process.roles=broker\nnode.id=100\ncontroller.quorum.voters={voters}\n\
             controller.listener.names={LISTENER}\n\
             listeners=PLAINTEXT://127.0.0.1:{broker_port}\n\
             advertised.listeners=PLAINTEXT://127.0.0.1:{broker_port}\n\
             inter.broker.listener.name=PLAINTEXT\n\
             listener.security.protocol.map={LISTENER}:SSL,PLAINTEXT:PLAINTEXT\n\
             listener.name.{l}.ssl.keystore.type=PEM\nlistener.name.{l}.ssl.keystore.location={}\n\
             listener.name.{l}.ssl.truststore.type=PEM\nlistener.name.{l}.ssl.truststore.location={}\n\
             ssl.endpoint.identification.algorithm=HTTPS\n\
             log.dirs={}\nnum.network.threads=1\nnum.io.threads=1\n\
             offsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n\
             transaction.state.log.min.isr=1\n",
            keystore.display(),
            truststore.display(),
            art.path("broker100").display()
        ),
    )
    .unwrap();
    format_node(&art, Impl::Kafka, &broker_props, CLUSTER_ID, &[]);
    let mut broker =
        kafka().start_server_in(None, &[], &art, "broker100", &broker_props, BROKER_JVM);
    broker.wait_for_log(UNFENCED_LOG, Duration::from_secs(60));
    let bootstrap = format!("127.0.0.1:{broker_port}");
    topics(
        &art,
        &bootstrap,
        "create-before",
        &[
            "--create",
            "--topic",
            "before-restarts",
            "--partitions",
            "3",
            "--replication-factor",
            "1",
        ],
    );
    let (_, hw_before) = wait_quorum(&pods, hw, Duration::from_secs(20));

    // A voter, then the leader, restarted as Strimzi restarts a pod: SIGTERM, and the run
    // script again, which deletes quorum-state before the server starts.
    for what in ["voter", "leader"] {
        // Who leads now, just before the restart.
        let (current, _) = wait_quorum(&pods, hw_before, Duration::from_secs(20));
        let id = match what {
            "voter" => (1..=3).find(|id| *id != current).unwrap(),
            _ => current,
        };
        let i = (id - 1) as usize;
        pods[i].stop();
        assert!(
            !pods[i].probe("kafka_liveness.sh"),
            "{what} {id} stopped: not alive"
        );
        assert!(
            !pods[i].probe("kafka_readiness.sh"),
            "{what} {id} stopped: not ready"
        );
        assert!(
            pods[i].quorum_state().is_file(),
            "{what} {id} left a quorum-state"
        );
        pods[i].start();
        wait_for(
            "the restarted node's server",
            Duration::from_secs(20),
            || {
                pods[i].run_log().contains("Removing quorum-state file")
                    && pods[i].probe("kafka_liveness.sh")
            },
        );
        let (new_leader, hw_now) = wait_quorum(&pods, hw_before, Duration::from_secs(30));
        assert!(
            hw_now >= hw_before,
            "{what} restart: the committed offset went back"
        );
        if what == "leader" {
            assert!((1..=3).contains(&new_leader));
        }
        assert!(
            pods[i].probe("kafka_readiness.sh"),
            "{what} {id} ready again"
        );
        // The quorum commits after the restart: a topic created through the broker.
        let topic = format!("after-{what}-restart");
        topics(
            &art,
            &bootstrap,
            &format!("create-{topic}"),
            &[
                "--create",
                "--topic",
                &topic,
                "--partitions",
                "1",
                "--replication-factor",
                "1",
            ],
        );
    }
    let listed = topics(&art, &bootstrap, "list", &["--list"]);
    for t in [
        "before-restarts",
        "after-voter-restart",
        "after-leader-restart",
    ] {
        assert!(
            listed.lines().any(|l| l.trim() == t),
            "topic {t} kept: {listed}"
        );
    }
    broker.kill();
    eprintln!(
        "strimzi layout test took {:?}; first leader {first_leader}; topics:\n{listed}",
        started.elapsed()
    );
}

#[test]
fn the_secret_provider_reads_secrets_through_the_kubernetes_api() {
    use ferrokraft::config::providers::resolve_with_env;
    let mut s = Secrets::new();
    s.insert(
        ("ns1".into(), "creds".into()),
        BTreeMap::from([
            ("a.crt".to_string(), "A".to_string()),
            ("b.crt".to_string(), "B".to_string()),
            ("password".to_string(), "pa55-wörd".to_string()),
        ]),
    );
    let api = KubeApi::start(s, TOKEN);
    let art = Artifacts::new("strimzi_secret_provider");
    let sa = api.service_account(&art.path("sa"), "ns1");
    let mut env: BTreeMap<String, String> = api.env(&sa).into_iter().collect();
    env.insert("KUBERNETES_NAMESPACE".into(), "ns1".into());
    let raw = |pairs: &[(&str, &str)]| -> ferrokraft::config::Properties {
        let mut p: ferrokraft::config::Properties = [
            ("config.providers", "s"),
            (
                "config.providers.s.class",
                "io.strimzi.kafka.KubernetesSecretConfigProvider",
            ),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        p.extend(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        p
    };
    // By key, by glob (sorted by key, joined with the separator), in the default namespace.
    let r = resolve_with_env(
        &raw(&[
            ("x", "${s:ns1/creds:password}"),
            ("y", "${s:creds:*.crt}"),
            ("z", "${s:ns1/creds:none}"),
        ]),
        &env,
    )
    .unwrap();
    assert_eq!(r.props["x"], "pa55-wörd");
    assert_eq!(r.props["y"], "A\nB");
    assert_eq!(
        r.props["z"], "",
        "a key matching nothing resolves to nothing"
    );
    let r = resolve_with_env(
        &raw(&[
            ("y", "${s:ns1/creds:*.crt}"),
            ("config.providers.s.param.separator", ","),
        ]),
        &env,
    )
    .unwrap();
    assert_eq!(r.props["y"], "A,B");
    // Strimzi's messages: a Secret the API does not have, and one it will not give.
    let missing = resolve_with_env(&raw(&[("x", "${s:ns1/other:k}")]), &env).unwrap_err();
    assert_eq!(
        missing.to_string(),
        "Secret other in namespace ns1 not found"
    );
    fs::write(sa.join("token"), "wrong-token").unwrap();
    let refused = resolve_with_env(&raw(&[("x", "${s:ns1/creds:password}")]), &env).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "Failed to retrieve Secret creds from Kubernetes namespace ns1"
    );
    let requests = api.requests.lock().unwrap().clone();
    assert_eq!(requests.last().map(|r| r.1), Some(false), "{requests:?}");
    assert!(requests
        .iter()
        .all(|(line, _)| line.starts_with("GET /api/v1/namespaces/ns1/secrets/")));
}
