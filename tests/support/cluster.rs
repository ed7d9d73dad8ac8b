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

use super::kafka::{free_port, kafka, Artifacts, ProcessGuard};

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
    pub port: u16,
    pub props: PathBuf,
    pub dir: PathBuf,
    pub log: PathBuf,
    /// Extra arguments for `ferrokraft start`.
    pub extra_args: Vec<String>,
    process: Option<Proc>,
    starts: usize,
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

    pub fn is_running(&mut self) -> bool {
        match &mut self.process {
            Some(Proc::Kafka(g)) => g.is_running(),
            Some(Proc::Ferrokraft(c)) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// SIGKILL.
    pub fn kill(&mut self) {
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
                let guard = kafka().start_server(art, &name, &self.props);
                self.log = guard.log.clone();
                self.process = Some(Proc::Kafka(guard));
            }
            Impl::Ferrokraft => {
                let log = art.path(&format!("{name}.log"));
                let child = Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
                    .args(["start", "-c"])
                    .arg(&self.props)
                    .args(&self.extra_args)
                    .env("RUST_LOG", "info")
                    .stdin(Stdio::null())
                    .stdout(File::create(&log).unwrap())
                    .stderr(Stdio::from(
                        File::options().append(true).open(&log).unwrap(),
                    ))
                    .spawn()
                    .expect("start ferrokraft");
                self.log = log;
                self.process = Some(Proc::Ferrokraft(child));
            }
        }
    }
}

/// A static-voter quorum.
pub struct Cluster {
    pub art: Artifacts,
    pub nodes: Vec<Node>,
    pub cluster_id: String,
}

impl Cluster {
    /// Formats one node per entry of `kinds` (ids 1..) with `extra` properties on every node.
    pub fn new(test: &str, kinds: &[Impl], extra: &[(&str, &str)]) -> Cluster {
        let art = Artifacts::new(test);
        let ports: Vec<u16> = kinds.iter().map(|_| free_port()).collect();
        let voters = ports
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{}@127.0.0.1:{p}", i + 1))
            .collect::<Vec<_>>()
            .join(",");
        let out = Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
            .arg("random-uuid")
            .output()
            .unwrap();
        let cluster_id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let mut nodes = Vec::new();
        for (i, kind) in kinds.iter().enumerate() {
            let id = i as i32 + 1;
            let dir = art.path(&format!("data{id}"));
            let props = art.path(&format!("node{id}.properties"));
            let mut text = format!(
                "process.roles=controller\nnode.id={id}\ncontroller.quorum.voters={voters}\nlisteners=CONTROLLER://127.0.0.1:{port}\ncontroller.listener.names=CONTROLLER\nlog.dirs={}\nnum.network.threads=1\nnum.io.threads=1\n",
                dir.display(),
                port = ports[i]
            );
            for (k, v) in extra {
                text.push_str(&format!("{k}={v}\n"));
            }
            fs::write(&props, text).unwrap();
            format_node(&art, *kind, &props, &cluster_id);
            nodes.push(Node {
                id,
                kind: *kind,
                port: ports[i],
                props,
                dir,
                log: PathBuf::new(),
                extra_args: Vec::new(),
                process: None,
                starts: 0,
            });
        }
        Cluster {
            art,
            nodes,
            cluster_id,
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
        let port = self.nodes[(via - 1) as usize].port;
        let bootstrap = format!("127.0.0.1:{port}");
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

fn format_node(art: &Artifacts, kind: Impl, props: &Path, cluster_id: &str) {
    match kind {
        Impl::Kafka => {
            let out = kafka().tool(
                art,
                "format",
                "kafka.tools.StorageTool",
                &["format", "-t", cluster_id, "-c", props.to_str().unwrap()],
            );
            assert!(
                out.status.success(),
                "kafka-storage format failed: {}{}",
                out.stdout,
                out.stderr
            );
        }
        Impl::Ferrokraft => {
            let out = Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
                .args(["format", "-t", cluster_id, "-c"])
                .arg(props)
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
