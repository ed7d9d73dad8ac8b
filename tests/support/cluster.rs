#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]
//! Mixed quorums on loopback: Kafka controllers (`kafka.Kafka`) and ferrokraft nodes side by
//! side, static voters, each with its own directory and log in the test's `Artifacts` folder.
//! Every process is killed when the test ends (Drop guards), also on panic.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::kafka::{
    cluster_release_version, free_port, kafka, send_signal, Artifacts, ProcessGuard,
};

/// Which implementation runs a voter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Impl {
    Kafka,
    Ferrokraft,
}

/// A running (or stopped) node of a mixed quorum.
pub struct Node {
    pub id: i32,
    pub kind: Impl,
    /// The address it listens on: loopback, or its namespace's (see [`Cluster::net`]).
    pub host: String,
    pub port: u16,
    /// The network namespace it runs in, if any.
    pub netns: Option<String>,
    /// Added to its environment at every start.
    pub env: Vec<(String, String)>,
    pub props: PathBuf,
    pub dir: PathBuf,
    pub log: PathBuf,
    /// Extra arguments for `ferrokraft start`.
    pub extra_args: Vec<String>,
    /// Every log this node wrote (one per start), oldest first.
    pub logs: Vec<PathBuf>,
    /// ferrokraft only: `--workload-records-per-sec`/`--workload-record-bytes` for the next
    /// start (None = off).
    pub workload: Option<(u64, usize)>,
    process: Option<Proc>,
    starts: usize,
    stopped: bool,
}

enum Proc {
    Kafka(ProcessGuard),
    Ferrokraft(Child),
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Node {
    pub fn partition_dir(&self) -> PathBuf {
        self.dir.join("__cluster_metadata-0")
    }

    pub fn segment(&self) -> Vec<u8> {
        fs::read(self.partition_dir().join("00000000000000000000.log")).unwrap_or_default()
    }

    /// Segment files (`<base offset>.log`), ascending.
    pub fn segment_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = fs::read_dir(self.partition_dir())
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "log"))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
    }

    /// All segments concatenated (the log from its first segment's base offset).
    pub fn log_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for f in self.segment_files() {
            out.extend(fs::read(f).unwrap_or_default());
        }
        out
    }

    /// Base offset of the first segment (0 when there is none).
    pub fn first_segment_base(&self) -> i64 {
        self.segment_files()
            .first()
            .and_then(|p| p.file_stem()?.to_str()?.parse().ok())
            .unwrap_or(0)
    }

    /// Snapshot files (`<offset>-<epoch>.checkpoint`, not the bootstrap one), ascending.
    pub fn checkpoints(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = fs::read_dir(self.partition_dir())
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| {
                        p.extension().is_some_and(|x| x == "checkpoint")
                            && !p
                                .file_name()
                                .is_some_and(|n| n.to_string_lossy().starts_with("bootstrap"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
    }

    /// SIGSTOP: the process freezes (timers, sockets and all) until [`Node::resume`].
    pub fn pause(&mut self) {
        let pid = self.pid().expect("node is running");
        send_signal(pid, "STOP");
        self.stopped = true;
    }

    /// SIGCONT.
    pub fn resume(&mut self) {
        if let Some(pid) = self.pid() {
            send_signal(pid, "CONT");
        }
        self.stopped = false;
    }

    /// Whether the process is SIGSTOPped.
    pub fn is_paused(&self) -> bool {
        self.stopped
    }

    /// The whole text of every log this node wrote.
    pub fn all_logs_text(&self) -> String {
        self.logs
            .iter()
            .map(|p| {
                fs::read(p)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn is_running(&mut self) -> bool {
        match &mut self.process {
            Some(Proc::Kafka(g)) => g.is_running(),
            Some(Proc::Ferrokraft(c)) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// SIGKILL.
    pub fn kill(&mut self) {
        self.stopped = false;
        match self.process.take() {
            Some(Proc::Kafka(mut g)) => g.kill(),
            Some(Proc::Ferrokraft(mut c)) => {
                let _ = c.kill();
                let _ = c.wait();
            }
            None => {}
        }
    }

    /// SIGTERM, then wait up to 15 s for the process to exit.
    pub fn terminate(&mut self) {
        let pid = match &self.process {
            Some(Proc::Kafka(g)) => g.pid(),
            Some(Proc::Ferrokraft(c)) => c.id(),
            None => return,
        };
        if self.stopped {
            self.resume();
        }
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.is_running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        self.kill();
    }

    /// The OS process id, when running.
    pub fn pid(&self) -> Option<u32> {
        match &self.process {
            Some(Proc::Kafka(g)) => Some(g.pid()),
            Some(Proc::Ferrokraft(c)) => Some(c.id()),
            None => None,
        }
    }

    pub fn log_text(&self) -> String {
        fs::read(&self.log)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    pub fn start(&mut self, art: &Artifacts) {
        assert!(self.process.is_none(), "node {} already running", self.id);
        self.starts += 1;
        let name = format!("node{}-{}", self.id, self.starts);
        match self.kind {
            Impl::Kafka => {
                let guard = kafka().start_server_in(
                    self.netns.as_deref(),
                    &self.env,
                    art,
                    &name,
                    &self.props,
                    super::kafka::SERVER_JVM,
                );
                self.log = guard.log.clone();
                self.logs.push(guard.log.clone());
                self.process = Some(Proc::Kafka(guard));
            }
            Impl::Ferrokraft => {
                let log = art.path(&format!("{name}.log"));
                let mut cmd = match &self.netns {
                    Some(ns) => {
                        let mut c = Command::new("ip");
                        c.args(["netns", "exec", ns, env!("CARGO_BIN_EXE_ferrokraft")]);
                        c
                    }
                    None => Command::new(env!("CARGO_BIN_EXE_ferrokraft")),
                };
                cmd.args(["start", "-c"])
                    .arg(&self.props)
                    .args(&self.extra_args);
                if let Some((rate, bytes)) = self.workload {
                    cmd.arg("--workload-records-per-sec")
                        .arg(rate.to_string())
                        .arg("--workload-record-bytes")
                        .arg(bytes.to_string());
                }
                let child = cmd
                    .env("RUST_LOG", "info")
                    .envs(self.env.iter().map(|(k, v)| (k, v)))
                    .stdin(Stdio::null())
                    .stdout(File::create(&log).unwrap())
                    .stderr(Stdio::from(
                        File::options().append(true).open(&log).unwrap(),
                    ))
                    .spawn()
                    .expect("start ferrokraft");
                self.logs.push(log.clone());
                self.log = log;
                self.process = Some(Proc::Ferrokraft(child));
            }
        }
    }
}

impl Cluster {
    /// `host:port` of controller `id`'s listener.
    pub fn controller_address(&self, id: i32) -> String {
        let n = &self.nodes[(id - 1) as usize];
        format!("{}:{}", n.host, n.port)
    }
}

/// How the nodes find the quorum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quorum {
    /// `controller.quorum.voters` lists every node (kraft.version 0).
    Static,
    /// KIP-853: `controller.quorum.bootstrap.servers` lists every node; this node is formatted
    /// `--standalone` (the only voter), the others `--no-initial-controllers` (observers).
    Dynamic { standalone: i32 },
    /// KIP-853: `controller.quorum.bootstrap.servers` lists every node; nodes 1..=`voters` are
    /// formatted `--initial-controllers` (each with a directory id chosen here), the others
    /// `--no-initial-controllers` (observers).
    InitialControllers { voters: i32 },
}

/// A quorum of Kafka and ferrokraft nodes.
pub struct Cluster {
    /// Dropped first (their processes killed), before the artifacts folder and `net`.
    pub nodes: Vec<Node>,
    pub art: Artifacts,
    pub cluster_id: String,
    pub quorum: Quorum,
    /// Every node (and broker) in a network namespace of its own, when set; dropped after
    /// the nodes, whose processes must end before their namespaces go.
    pub net: Option<std::sync::Arc<super::netns::Net>>,
}

impl Cluster {
    /// Formats one node per entry of `kinds` (ids 1..) with `extra` properties on every node.
    pub fn new(test: &str, kinds: &[Impl], extra: &[(&str, &str)]) -> Cluster {
        Self::with_quorum(test, kinds, extra, Quorum::Static)
    }

    /// As [`Cluster::new`], with the quorum configured as `quorum` says.
    pub fn with_quorum(
        test: &str,
        kinds: &[Impl],
        extra: &[(&str, &str)],
        quorum: Quorum,
    ) -> Cluster {
        Self::with_net(test, kinds, extra, quorum, None)
    }

    /// As [`Cluster::with_quorum`], every node in its own network namespace of `net` when
    /// given (brokers started later too).
    pub fn with_net(
        test: &str,
        kinds: &[Impl],
        extra: &[(&str, &str)],
        quorum: Quorum,
        net: Option<std::sync::Arc<super::netns::Net>>,
    ) -> Cluster {
        let art = Artifacts::new(test);
        let ports: Vec<u16> = kinds.iter().map(|_| free_port()).collect();
        let hosts: Vec<String> = (1..=kinds.len() as i32)
            .map(|id| match &net {
                Some(net) => {
                    net.add_node(id);
                    net.ip(id)
                }
                None => "127.0.0.1".to_string(),
            })
            .collect();
        let quorum_line = match quorum {
            Quorum::Static => format!(
                "controller.quorum.voters={}",
                ports
                    .iter()
                    .enumerate()
                    .map(|(i, p)| format!("{}@{}:{p}", i + 1, hosts[i]))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Quorum::Dynamic { .. } | Quorum::InitialControllers { .. } => format!(
                "controller.quorum.bootstrap.servers={}",
                ports
                    .iter()
                    .zip(&hosts)
                    .map(|(p, h)| format!("{h}:{p}"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        };
        let out = Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
            .arg("random-uuid")
            .output()
            .unwrap();
        let cluster_id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        // `--initial-controllers`: `id@host:port:directory-id` of every initial voter.
        let initial_controllers = match quorum {
            Quorum::InitialControllers { voters } => (1..=voters)
                .map(|id| {
                    let out = Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
                        .arg("random-uuid")
                        .output()
                        .unwrap();
                    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
                    let i = (id - 1) as usize;
                    format!("{id}@{}:{}:{dir}", hosts[i], ports[i])
                })
                .collect::<Vec<_>>()
                .join(","),
            _ => String::new(),
        };
        let mut nodes = Vec::new();
        for (i, kind) in kinds.iter().enumerate() {
            let id = i as i32 + 1;
            let dir = art.path(&format!("data{id}"));
            let props = art.path(&format!("node{id}.properties"));
            let mut text = format!(
                "process.roles=controller\nnode.id={id}\n{quorum_line}\nlisteners=CONTROLLER://{host}:{port}\ncontroller.listener.names=CONTROLLER\nlog.dirs={}\nnum.network.threads=1\nnum.io.threads=1\n",
                dir.display(),
                host = hosts[i],
                port = ports[i]
            );
            for (k, v) in extra {
                text.push_str(&format!("{k}={v}\n"));
            }
            // Formatted by Kafka's tool, ferrokraft picks the release from the bootstrap
            // metadata.version itself (no ferrokraft key in the file).
            if *kind == Impl::Ferrokraft && !crate::support::kafka::kafka_default_format() {
                text.push_str(&format!(
                    "ferrokraft.kafka.release={}\n",
                    crate::support::kafka::ferrokraft_release().name()
                ));
            }
            fs::write(&props, text).unwrap();
            let format_mode: &[&str] = match quorum {
                Quorum::Static => &[],
                Quorum::Dynamic { standalone } if standalone == id => &["--standalone"],
                Quorum::InitialControllers { voters } if id <= voters => {
                    &["--initial-controllers", &initial_controllers]
                }
                Quorum::Dynamic { .. } | Quorum::InitialControllers { .. } => {
                    &["--no-initial-controllers"]
                }
            };
            format_node(&art, *kind, &props, &cluster_id, format_mode);
            nodes.push(Node {
                id,
                kind: *kind,
                host: hosts[i].clone(),
                port: ports[i],
                netns: net.as_ref().map(|n| n.ns(id)),
                env: Vec::new(),
                props,
                dir,
                log: PathBuf::new(),
                extra_args: Vec::new(),
                logs: Vec::new(),
                workload: None,
                process: None,
                starts: 0,
                stopped: false,
            });
        }
        Cluster {
            nodes,
            art,
            cluster_id,
            quorum,
            net,
        }
    }

    pub fn start_all(&mut self) {
        for i in 0..self.nodes.len() {
            let art = &self.art;
            self.nodes[i].start(art);
        }
    }

    pub fn node(&mut self, id: i32) -> &mut Node {
        &mut self.nodes[(id - 1) as usize]
    }

    pub fn start(&mut self, id: i32) {
        let i = (id - 1) as usize;
        let art = &self.art;
        self.nodes[i].start(art);
    }

    /// `kafka-metadata-quorum --bootstrap-controller <node> describe --<what>` output.
    pub fn describe(&self, via: i32, what: &str) -> Option<String> {
        let bootstrap = self.controller_address(via);
        // Mid-election a controller answers DescribeCluster with no active controller; the
        // admin client then waits for a metadata refresh (5 min by default). Short timeouts
        // make each call fail fast so callers can poll again.
        let admin = self.art.path("admin.properties");
        if !admin.exists() {
            fs::write(
                &admin,
                "default.api.timeout.ms=8000\nrequest.timeout.ms=4000\nmetadata.max.age.ms=1000\n",
            )
            .unwrap();
        }
        let out = kafka().tool(
            &self.art,
            &format!("describe-{what}-via-{via}"),
            "org.apache.kafka.tools.MetadataQuorumCommand",
            &[
                "--bootstrap-controller",
                &bootstrap,
                "--command-config",
                admin.to_str().unwrap(),
                "describe",
                &format!("--{what}"),
            ],
        );
        out.status.success().then_some(out.stdout)
    }

    /// Polls `describe --status` through `via` until it reports a leader and a high watermark
    /// of at least `min_hw`; returns (leader id, epoch, high watermark).
    pub fn wait_for_leader(&self, via: i32, min_hw: i64, timeout: Duration) -> (i32, i32, i64) {
        let deadline = Instant::now() + timeout;
        let mut last = String::new();
        while Instant::now() < deadline {
            if let Some(out) = self.describe(via, "status") {
                let field = |name: &str| {
                    out.lines()
                        .find(|l| l.starts_with(name))
                        .and_then(|l| l.split(':').nth(1))
                        .and_then(|v| v.trim().parse::<i64>().ok())
                };
                if let (Some(leader), Some(epoch), Some(hw)) = (
                    field("LeaderId"),
                    field("LeaderEpoch"),
                    field("HighWatermark"),
                ) {
                    if leader >= 0 && hw >= min_hw {
                        return (leader as i32, epoch as i32, hw);
                    }
                }
                last = out;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        panic!("no leader with high watermark ≥ {min_hw} via node {via} within {timeout:?}; last status:\n{last}");
    }

    /// Per-replica log end offsets from `describe --replication` (id → LEO).
    pub fn replication(&self, via: i32) -> Vec<(i32, i64, String)> {
        let Some(out) = self.describe(via, "replication") else {
            return Vec::new();
        };
        out.lines()
            .skip(1)
            .filter_map(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                Some((
                    cols.first()?.parse().ok()?,
                    cols.get(2)?.parse().ok()?,
                    cols.last()?.to_string(),
                ))
            })
            .collect()
    }
}

pub fn format_node(art: &Artifacts, kind: Impl, props: &Path, cluster_id: &str, mode: &[&str]) {
    let mut args = vec!["format", "-t", cluster_id, "-c", props.to_str().unwrap()];
    args.extend(mode);
    if let Some(release) = cluster_release_version() {
        args.extend(["--release-version", release]);
    }
    let formatter = if crate::support::kafka::kafka_default_format() {
        Impl::Kafka
    } else {
        kind
    };
    match formatter {
        Impl::Kafka => {
            let out = kafka().tool(art, "format", "kafka.tools.StorageTool", &args);
            assert!(
                out.status.success(),
                "kafka-storage format failed: {}{}",
                out.stdout,
                out.stderr
            );
        }
        Impl::Ferrokraft => {
            let out = Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
                .args(&args)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "ferrokraft format failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// The bytes of `a` and `b` up to the shorter length, compared; returns the common length.
pub fn common_prefix_equal(a: &[u8], b: &[u8]) -> Result<usize, usize> {
    let n = a.len().min(b.len());
    match (0..n).find(|i| a[*i] != b[*i]) {
        None => Ok(n),
        Some(i) => Err(i),
    }
}

/// Length of the prefix of `log` (whole batches from the start of a log whose first batch
/// starts the log) holding only offsets below `hw`: the committed bytes.
pub fn committed_prefix(log: &[u8], hw: i64) -> usize {
    let mut pos = 0;
    while pos + 61 <= log.len() {
        let base = i64::from_be_bytes(log[pos..pos + 8].try_into().unwrap());
        let len = i32::from_be_bytes(log[pos + 8..pos + 12].try_into().unwrap()) as usize;
        let last_delta = i32::from_be_bytes(log[pos + 23..pos + 27].try_into().unwrap()) as i64;
        let end = pos + 12 + len;
        if end > log.len() || base + last_delta >= hw {
            break;
        }
        pos = end;
    }
    pos
}

/// One log entry (first line plus continuation lines) of a Kafka server log.
pub fn log_entries(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with('[') || out.is_empty() {
            out.push(line.to_string());
        } else if let Some(last) = out.last_mut() {
            last.push('\n');
            last.push_str(line);
        }
    }
    out
}

/// The entries of a Kafka log that are errors: level ERROR or FATAL, or anything mentioning an
/// exception.
pub fn kafka_error_entries(text: &str) -> Vec<String> {
    log_entries(text)
        .into_iter()
        .filter(|e| {
            let first = e.lines().next().unwrap_or("");
            first.contains("] ERROR ")
                || first.contains("] FATAL ")
                || e.contains("Exception")
                || !first.starts_with('[')
        })
        .collect()
}

/// A known cause of an ERROR (or exception) in a Kafka controller's log beside ferrokraft;
/// each is documented in docs/interop.md.
pub struct AllowedError {
    /// What causes it.
    pub cause: &'static str,
    /// The entry's text contains all of these.
    pub contains: &'static [&'static str],
}

/// Known, explained errors (see docs/interop.md "Allowed Kafka ERRORs").
pub const ALLOWED_KAFKA_ERRORS: &[AllowedError] = &[
    AllowedError {
        cause: "Kafka-internal race: a Kafka controller that just won the Raft election registers itself (API 70) before its QuorumController finished activating, and its own ControllerApis answers NotControllerException naming itself; it retries",
        contains: &["CONTROLLER_REGISTRATION", "NotControllerException: The active controller appears to be node"],
    },
    AllowedError {
        cause: "the INFO line of the same Kafka-internal registration race",
        contains: &["registerController: event failed with NotControllerException"],
    },
    AllowedError {
        cause: "the harness polls kafka-metadata-quorum before a freshly started Kafka controller has loaded metadata.version: ControllerApis refuses DescribeCluster and logs it at ERROR (Kafka alone does the same)",
        contains: &[
            "apiKey=DESCRIBE_CLUSTER",
            "Direct-to-controller communication is not supported with the current MetadataVersion",
        ],
    },
    AllowedError {
        cause: "the same refusal as Kafka 4.4 words it",
        contains: &[
            "apiKey=DESCRIBE_CLUSTER",
            "There is no finalized MetadataVersion, so direct-to-controller communication is not supported",
        ],
    },
    AllowedError {
        cause: "a Kafka follower sends UpdateRaftVoter to a leader (Kafka or ferrokraft, both follow UpdateVoterHandler) that has no high watermark in its epoch yet or a pending voter operation and answers REQUEST_TIMED_OUT; KafkaRaftClient logs it at ERROR and retries",
        contains: &["Unexpected error REQUEST_TIMED_OUT in UPDATE_RAFT_VOTER response"],
    },
    AllowedError {
        cause: "a Kafka controller's event took over 2 s (controller.performance.always.log.threshold.ms): its EventPerformanceMonitor logs that at ERROR; a measure of the machine's load (two cores running every JVM of the tests), not a fault",
        contains: &["Exceptionally slow controller event"],
    },
    AllowedError {
        cause: "a Kafka leader resigns (stopped with SIGTERM, or a newer epoch seen): the NoOpRecord its controller was writing fails with the Raft layer's NotLeaderException and the controller renounces (INFO); the next leader takes over",
        contains: &[
            "[QuorumController id=",
            "event failed with NotLeaderException (treated as NotControllerException)",
            "Renouncing leadership and reverting to the last committed offset",
        ],
    },
    AllowedError {
        cause: "the same resignation: QuorumController.renounce fails every write still waiting for its commit (DeferredEventQueue.failAll logs each at INFO)",
        contains: &["failAll(NotControllerException): failing"],
    },
    AllowedError {
        cause: "the same resignation from 4.1 on: each write failAll failed (the periodic NoOpRecord most often) is then logged by QuorumController.handleEventException at INFO, with the empty leader renounce passes",
        contains: &[
            "[QuorumController id=",
            ": event failed with NotControllerException in ",
            "Exception message: No controller appears to be active.",
        ],
    },
];

/// Error entries of `text` that no allow-list entry explains.
pub fn unexplained_errors(text: &str, extra: &[AllowedError]) -> Vec<String> {
    kafka_error_entries(text)
        .into_iter()
        .filter(|e| {
            !ALLOWED_KAFKA_ERRORS
                .iter()
                .chain(extra.iter())
                .any(|a| a.contains.iter().all(|c| e.contains(c)))
        })
        .collect()
}

impl Cluster {
    /// Asserts every Kafka node's logs (all starts) hold only explained errors, and that no
    /// Kafka controller exited on its own.
    pub fn assert_kafka_errors_explained(&self, extra: &[AllowedError]) {
        let mut bad = Vec::new();
        for n in &self.nodes {
            if n.kind != Impl::Kafka {
                continue;
            }
            for (i, log) in n.logs.iter().enumerate() {
                let text = fs::read(log)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                for e in unexplained_errors(&text, extra) {
                    let short: String = e.lines().take(6).collect::<Vec<_>>().join("\n");
                    bad.push(format!("node {} (start {}): {short}", n.id, i + 1));
                }
            }
        }
        assert!(
            bad.is_empty(),
            "{} unexplained ERROR/exception entries in Kafka logs (add a cause to ALLOWED_KAFKA_ERRORS and docs/interop.md only if it is understood):\n{}",
            bad.len(),
            bad.join("\n---\n")
        );
    }

    /// Asserts every Kafka node that should be running still is (no crash/exit).
    pub fn assert_kafka_alive(&mut self) {
        for n in &mut self.nodes {
            if n.kind == Impl::Kafka && n.process.is_some() {
                let id = n.id;
                assert!(
                    n.is_running(),
                    "Kafka node {id} exited:\n{}",
                    tail(&n.log_text(), 30)
                );
            }
        }
    }

    /// Ids of nodes that are running and not paused.
    pub fn live_ids(&mut self) -> Vec<i32> {
        let mut ids = Vec::new();
        for n in &mut self.nodes {
            if n.process.is_some() && !n.stopped && n.is_running() {
                ids.push(n.id);
            }
        }
        ids
    }

    /// Like [`Cluster::wait_for_leader`], asking the live nodes in turn (skipping `exclude`).
    pub fn wait_for_leader_any(
        &mut self,
        exclude: &[i32],
        min_hw: i64,
        timeout: Duration,
    ) -> (i32, i32, i64) {
        let deadline = Instant::now() + timeout;
        let mut turn = 0usize;
        loop {
            let ids: Vec<i32> = self
                .live_ids()
                .into_iter()
                .filter(|i| !exclude.contains(i))
                .collect();
            assert!(!ids.is_empty(), "no live node to ask");
            let via = ids[turn % ids.len()];
            turn += 1;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                panic!("no leader with high watermark ≥ {min_hw} within {timeout:?}");
            }
            if let Some(r) = self.try_leader(via, min_hw) {
                if !exclude.contains(&r.0) {
                    return r;
                }
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// One `describe --status` through `via`: (leader, epoch, hw) if it names a leader.
    pub fn try_leader(&self, via: i32, min_hw: i64) -> Option<(i32, i32, i64)> {
        let out = self.describe(via, "status")?;
        let field = |name: &str| {
            out.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split(':').nth(1))
                .and_then(|v| v.trim().parse::<i64>().ok())
        };
        let (leader, epoch, hw) = (
            field("LeaderId")?,
            field("LeaderEpoch")?,
            field("HighWatermark")?,
        );
        (leader >= 0 && hw >= min_hw).then_some((leader as i32, epoch as i32, hw))
    }

    /// SIGKILLs (and restarts) leaders that are not `want` until a `want` node leads; returns
    /// the leader id.
    pub fn make_leader_kind(&mut self, want: Impl, timeout: Duration) -> i32 {
        let deadline = Instant::now() + timeout;
        let mut leader = self.wait_for_leader_any(&[], 1, Duration::from_secs(90)).0;
        while self.node(leader).kind != want {
            assert!(
                Instant::now() < deadline,
                "no {want:?} node won an election"
            );
            self.node(leader).kill();
            let next = self
                .wait_for_leader_any(&[leader], 1, Duration::from_secs(60))
                .0;
            self.start(leader);
            leader = next;
            if self.node(leader).kind != want {
                // Let the restarted node catch up so it can vote for the next candidate.
                self.wait_caught_up(leader, Duration::from_secs(60));
            }
        }
        leader
    }

    /// Waits until every running node's log end offset reaches the leader's high watermark as
    /// seen through `via` (DescribeQuorum replication rows).
    pub fn wait_caught_up(&mut self, via: i32, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut rows = Vec::new();
        while Instant::now() < deadline {
            if let Some((_, _, hw)) = self.try_leader(via, 1) {
                rows = self.replication(via);
                let live = self.live_ids();
                if !rows.is_empty()
                    && live
                        .iter()
                        .all(|id| rows.iter().any(|r| r.0 == *id && r.1 >= hw))
                {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        panic!("replicas did not catch up within {timeout:?}: {rows:?}");
    }

    /// The committed log bytes now: (hw, bytes of `leader`'s log below hw). The leader has
    /// every committed entry, and committed entries are never truncated afterwards.
    pub fn committed(&mut self, via: i32) -> (i32, i64, Vec<u8>) {
        let (leader, _, hw) = self.wait_for_leader(via, 1, Duration::from_secs(60));
        let log = self.node(leader).log_bytes();
        let n = committed_prefix(&log, hw);
        (leader, hw, log[..n].to_vec())
    }

    /// Asserts each node's log starts with `committed` (nothing committed disappeared).
    pub fn assert_has_committed(&mut self, ids: &[i32], committed: &[u8], what: &str) {
        for &id in ids {
            let log = self.node(id).log_bytes();
            assert!(
                log.len() >= committed.len(),
                "{what}: node {id} has {} bytes, fewer than the {} committed",
                log.len(),
                committed.len()
            );
            if let Err(at) = common_prefix_equal(&log, committed) {
                panic!("{what}: node {id}'s log differs from the committed bytes at byte {at}");
            }
        }
    }

    /// Polls until every node in `ids` has the same bytes up to the current committed prefix
    /// (and agrees on everything they share); returns that prefix length.
    pub fn wait_converged(&mut self, via: i32, ids: &[i32], timeout: Duration) -> usize {
        let deadline = Instant::now() + timeout;
        loop {
            let (_, hw, committed) = self.committed(via);
            let mut problem = None;
            for &id in ids {
                let log = self.node(id).log_bytes();
                if log.len() < committed.len() {
                    problem = Some(format!(
                        "node {id}: {} < {} committed bytes (hw {hw})",
                        log.len(),
                        committed.len()
                    ));
                } else if let Err(at) = common_prefix_equal(&log, &committed) {
                    problem = Some(format!(
                        "node {id} differs from the committed log at byte {at} (hw {hw})"
                    ));
                }
            }
            match problem {
                None => return committed.len(),
                Some(p) if Instant::now() > deadline => panic!("logs did not converge: {p}"),
                Some(_) => std::thread::sleep(Duration::from_millis(500)),
            }
        }
    }
}

/// The last `n` lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// JVMs are heavy on 2 cores: one mixed quorum at a time per test binary (cargo runs test
/// binaries one after another).
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

impl Node {
    /// Appends `key=value` lines to this node's properties file (takes effect on next start).
    pub fn add_props(&self, props: &[(&str, &str)]) {
        let mut text = fs::read_to_string(&self.props).unwrap();
        for (k, v) in props {
            text.push_str(&format!("{k}={v}\n"));
        }
        fs::write(&self.props, text).unwrap();
    }
}

impl Cluster {
    /// Deletes a stopped node's directory and formats it again (a fresh replica, same id; in
    /// a dynamic quorum a new directory id and no initial controllers).
    pub fn wipe_and_format(&mut self, id: i32) {
        let i = (id - 1) as usize;
        assert!(self.nodes[i].process.is_none(), "node {id} must be stopped");
        let _ = fs::remove_dir_all(&self.nodes[i].dir);
        let mode: &[&str] = match self.quorum {
            Quorum::Static => &[],
            Quorum::Dynamic { .. } | Quorum::InitialControllers { .. } => {
                &["--no-initial-controllers"]
            }
        };
        format_node(
            &self.art,
            self.nodes[i].kind,
            &self.nodes[i].props,
            &self.cluster_id,
            mode,
        );
    }
}
