//! Quorums of one implementation on loopback: ferrokraft nodes, Apache Kafka controllers
//! (`kafka.Kafka`, process.roles=controller) or Kafka's raft benchmark server
//! (`kafka.tools.TestRaftServer`), each node with its own directory, properties and log file
//! under the run's folder. Kafka runs with the JVM flags `kafka-server-start.sh` uses by
//! default. Every process is killed when its `Quorum` is dropped.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// What runs a quorum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `ferrokraft start`.
    Ferrokraft,
    /// `kafka.Kafka` as a controller.
    KafkaController,
    /// `kafka.tools.TestRaftServer` (Kafka's raft layer with its own workload).
    KafkaTestRaft,
}

impl Kind {
    /// Short label for tables.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Ferrokraft => "ferrokraft",
            Kind::KafkaController => "Kafka controller",
            Kind::KafkaTestRaft => "Kafka TestRaftServer",
        }
    }
}

/// Kafka's defaults from `kafka-server-start.sh` / `kafka-run-class.sh`.
pub const KAFKA_JVM_FLAGS: &[&str] = &[
    "-Xmx1G",
    "-Xms1G",
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:MaxInlineLevel=15",
    "-Djava.awt.headless=true",
];

/// Where the programs are.
#[derive(Debug, Clone)]
pub struct Env {
    /// The ferrokraft binary.
    pub ferrokraft: PathBuf,
    /// The Kafka jars (for `kafka.Kafka` and the storage tool).
    pub kafka_lib: PathBuf,
    /// The Kafka jars for `TestRaftServer` (a release that honours --throughput).
    pub test_raft_lib: PathBuf,
    /// log4j2 configuration for Kafka servers.
    pub log4j: PathBuf,
}

/// Raft timers, the same for both implementations.
#[derive(Debug, Clone, Copy)]
pub struct Timers {
    /// controller.quorum.election.timeout.ms
    pub election_timeout_ms: u64,
    /// controller.quorum.fetch.timeout.ms
    pub fetch_timeout_ms: u64,
    /// controller.quorum.election.backoff.max.ms
    pub election_backoff_max_ms: u64,
    /// controller.quorum.request.timeout.ms
    pub request_timeout_ms: u64,
}

impl Timers {
    /// Kafka's defaults.
    pub const DEFAULT: Timers = Timers {
        election_timeout_ms: 1000,
        fetch_timeout_ms: 2000,
        election_backoff_max_ms: 1000,
        request_timeout_ms: 2000,
    };

    /// The election timers 10× shorter (election timeout, fetch timeout, election backoff).
    /// The request timeout is a network setting, not an election timer, and stays: at 200 ms
    /// it would cut off Kafka's 500 ms long-poll Fetch every time.
    pub fn tenth(self) -> Timers {
        Timers {
            election_timeout_ms: self.election_timeout_ms / 10,
            fetch_timeout_ms: self.fetch_timeout_ms / 10,
            election_backoff_max_ms: self.election_backoff_max_ms / 10,
            request_timeout_ms: self.request_timeout_ms,
        }
    }
}

/// How a quorum is set up.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Voters.
    pub voters: usize,
    /// Timers.
    pub timers: Timers,
    /// controller.quorum.append.linger.ms (None: the default, 25).
    pub linger_ms: Option<u64>,
    /// Records per second and bytes per record for the workload (ferrokraft's workload mode,
    /// TestRaftServer's --throughput/--record-size); None for a controller without one.
    pub workload: Option<(u64, usize)>,
}

/// `metadata.log.max.record.bytes.between.snapshots` that no run reaches: an empty voter
/// fetching at offset 0 is sent the leader's latest snapshot (Kafka's rule), so a generated
/// snapshot would turn the log catch-up into a snapshot transfer.
const NO_SNAPSHOTS: i64 = i64::MAX;

/// One node.
pub struct NodeProc {
    /// node.id
    pub id: i32,
    /// Its controller listener port.
    pub port: u16,
    /// Its data directory.
    pub dir: PathBuf,
    props: PathBuf,
    /// Its current log (stdout and stderr).
    pub log: PathBuf,
    starts: usize,
    child: Option<Child>,
}

/// A quorum of one kind.
pub struct Quorum {
    /// What runs it.
    pub kind: Kind,
    /// The cluster id it was formatted with.
    // Read by the controller benchmark (its fake brokers register with it), not this one.
    #[allow(dead_code)]
    pub cluster_id: String,
    /// The heap of its Kafka processes (`-Xmx`/`-Xms`), instead of the default 1 GiB.
    pub kafka_heap: Option<String>,
    /// Its nodes, ids 1..
    pub nodes: Vec<NodeProc>,
    root: PathBuf,
    env: Env,
    setup: Setup,
}

impl Drop for Quorum {
    /// Kills every node and deletes its data directory (logs stay for diagnosis): a full run
    /// writes tens of GB of logs over its measurements.
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
            let _ = fs::remove_dir_all(&self.nodes[i].dir);
        }
    }
}

/// Resolves Kafka `version`'s jars with interop/kafka/fetch.sh.
pub fn kafka_lib(version: &str) -> Result<PathBuf, String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(repo.join("interop/kafka/fetch.sh"))
        .arg(version)
        .output()
        .map_err(|e| format!("interop/kafka/fetch.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "interop/kafka/fetch.sh {version} failed (Maven and Java 17 needed): {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// A fresh directory for a run, under `base` (default: the system's temporary directory).
pub fn run_dir(base: Option<PathBuf>, prefix: &str) -> Result<tempfile::TempDir, String> {
    let base = base.unwrap_or_else(std::env::temp_dir);
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(&base)
        .map_err(|e| format!("cannot create a directory in {}: {e}", base.display()))
}

/// A free loopback port.
pub fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

fn run(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Env {
    fn java(&self, lib: &Path, class: &str) -> Command {
        self.java_with_heap(lib, class, None)
    }

    /// [`Env::java`] with `heap` (e.g. `4G`) for -Xmx and -Xms; the JVM takes the last.
    fn java_with_heap(&self, lib: &Path, class: &str, heap: Option<&str>) -> Command {
        let mut c = Command::new("java");
        c.args(KAFKA_JVM_FLAGS);
        if let Some(heap) = heap {
            c.arg(format!("-Xmx{heap}")).arg(format!("-Xms{heap}"));
        }
        c.arg(format!(
            "-Dlog4j2.configurationFile={}",
            self.log4j.display()
        ))
        .arg("-cp")
        .arg(format!("{}/*", lib.display()))
        .arg(class);
        c
    }

    /// A fresh cluster id / directory id.
    pub fn random_uuid(&self) -> Result<String, String> {
        run(
            Command::new(&self.ferrokraft).arg("random-uuid"),
            "ferrokraft random-uuid",
        )
    }
}

impl Quorum {
    /// Writes the properties of `setup.voters` nodes of `kind` under `root/name` and formats
    /// them (Kafka controllers with Kafka's storage tool, ferrokraft with its own; Kafka's
    /// TestRaftServer needs no format). Nothing is started.
    pub fn create(
        env: &Env,
        root: &Path,
        name: &str,
        kind: Kind,
        setup: &Setup,
    ) -> Result<Quorum, String> {
        let root = root.join(name);
        fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
        let ports = (0..setup.voters)
            .map(|_| free_port())
            .collect::<Result<Vec<_>, _>>()?;
        let voters = ports
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{}@127.0.0.1:{p}", i + 1))
            .collect::<Vec<_>>()
            .join(",");
        let cluster_id = env.random_uuid()?;
        let t = setup.timers;
        let mut nodes = Vec::new();
        for (i, port) in ports.iter().enumerate() {
            let id = i as i32 + 1;
            let dir = root.join(format!("data{id}"));
            let props = root.join(format!("node{id}.properties"));
            let mut text = format!(
                "process.roles=controller\nnode.id={id}\ncontroller.quorum.voters={voters}\n\
                 listeners=CONTROLLER://127.0.0.1:{port}\ncontroller.listener.names=CONTROLLER\n\
                 log.dirs={}\n\
                 controller.quorum.election.timeout.ms={}\ncontroller.quorum.fetch.timeout.ms={}\n\
                 controller.quorum.election.backoff.max.ms={}\ncontroller.quorum.request.timeout.ms={}\n\
                 metadata.max.retention.bytes=-1\nmetadata.max.retention.ms=-1\n\
                 metadata.log.max.record.bytes.between.snapshots={NO_SNAPSHOTS}\n\
                 metadata.log.max.snapshot.interval.ms=0\n",
                dir.display(),
                t.election_timeout_ms,
                t.fetch_timeout_ms,
                t.election_backoff_max_ms,
                t.request_timeout_ms,
            );
            if let Some(linger) = setup.linger_ms {
                text.push_str(&format!("controller.quorum.append.linger.ms={linger}\n"));
            }
            fs::write(&props, text).map_err(|e| format!("{}: {e}", props.display()))?;
            let props_s = props.to_string_lossy().to_string();
            match kind {
                Kind::Ferrokraft => {
                    run(
                        Command::new(&env.ferrokraft).args([
                            "format",
                            "-t",
                            &cluster_id,
                            "-c",
                            &props_s,
                        ]),
                        "ferrokraft format",
                    )?;
                }
                Kind::KafkaController => {
                    run(
                        env.java(&env.kafka_lib, "kafka.tools.StorageTool").args([
                            "format",
                            "-t",
                            &cluster_id,
                            "-c",
                            &props_s,
                        ]),
                        "kafka-storage format",
                    )?;
                }
                Kind::KafkaTestRaft => {
                    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?
                }
            }
            nodes.push(NodeProc {
                id,
                port: *port,
                dir,
                props,
                log: PathBuf::new(),
                starts: 0,
                child: None,
            });
        }
        Ok(Quorum {
            kind,
            cluster_id,
            kafka_heap: None,
            nodes,
            root,
            env: env.clone(),
            setup: setup.clone(),
        })
    }

    /// Starts node index `i`.
    pub fn start(&mut self, i: usize) -> Result<(), String> {
        let env = &self.env;
        let node = &mut self.nodes[i];
        if node.child.is_some() {
            return Ok(());
        }
        node.starts += 1;
        node.log = self
            .root
            .join(format!("node{}-{}.log", node.id, node.starts));
        let mut cmd = match self.kind {
            Kind::Ferrokraft => {
                let mut c = Command::new(&env.ferrokraft);
                c.arg("start").arg("-c").arg(&node.props);
                if let Some((rate, bytes)) = self.setup.workload {
                    c.arg("--workload-records-per-sec")
                        .arg(rate.to_string())
                        .arg("--workload-record-bytes")
                        .arg(bytes.to_string());
                }
                // INFO as an operator runs it, unless the run's own RUST_LOG says otherwise
                // (how the cost of the log lines is measured).
                c.env(
                    "RUST_LOG",
                    std::env::var("RUST_LOG").unwrap_or_else(|_| "info".to_string()),
                );
                c
            }
            Kind::KafkaController => {
                let mut c =
                    env.java_with_heap(&env.kafka_lib, "kafka.Kafka", self.kafka_heap.as_deref());
                c.arg(&node.props);
                c
            }
            Kind::KafkaTestRaft => {
                let (rate, bytes) = self.setup.workload.unwrap_or((20_000, 256));
                let mut c = env.java(&env.test_raft_lib, "kafka.tools.TestRaftServer");
                c.arg("--config")
                    .arg(&node.props)
                    .arg("--replica-directory-id")
                    .arg(env.random_uuid()?)
                    .arg("--throughput")
                    .arg(rate.to_string())
                    .arg("--record-size")
                    .arg(bytes.to_string());
                c
            }
        };
        let out = File::create(&node.log).map_err(|e| format!("{}: {e}", node.log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("{}: {e}", node.log.display()))?;
        let child = cmd
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("start {}: {e}", self.kind.label()))?;
        node.child = Some(child);
        Ok(())
    }

    /// Sets `key` in node index `i`'s properties for its next start (a later line wins, in
    /// Kafka's properties and in ferrokraft's). Used by the controller benchmark.
    #[allow(dead_code)]
    pub fn set_prop(&mut self, i: usize, key: &str, value: &str) -> Result<(), String> {
        let path = &self.nodes[i].props;
        let mut text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        text.push_str(&format!("{key}={value}\n"));
        fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Starts every node.
    pub fn start_all(&mut self) -> Result<(), String> {
        (0..self.nodes.len()).try_for_each(|i| self.start(i))
    }

    /// The process id of node index `i`, if running.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.nodes[i].child.as_ref().map(|c| c.id())
    }

    /// SIGKILLs node index `i` and reaps it.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut c) = self.nodes[i].child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Sends SIGTERM to node index `i` (it keeps running until it has shut down).
    pub fn signal_term(&mut self, i: usize) {
        if let Some(c) = self.nodes[i].child.as_ref() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(c.id().to_string())
                .status();
        }
    }

    /// Waits up to `timeout` for node index `i` to exit, then SIGKILLs it.
    pub fn reap(&mut self, i: usize, timeout: Duration) {
        let Some(mut c) = self.nodes[i].child.take() else {
            return;
        };
        let deadline = super::now() + timeout;
        while super::now() < deadline {
            if let Ok(Some(_)) = c.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = c.kill();
        let _ = c.wait();
    }

    /// SIGTERM, then [`Quorum::reap`].
    pub fn terminate(&mut self, i: usize, timeout: Duration) {
        self.signal_term(i);
        self.reap(i, timeout);
    }

    /// Whether node index `i` is still running.
    pub fn running(&mut self, i: usize) -> bool {
        match self.nodes[i].child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// The text of node index `i`'s current log.
    pub fn log_text(&self, i: usize) -> String {
        fs::read(&self.nodes[i].log)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }
}

/// VmRSS and VmHWM of `pid` in KiB.
pub fn rss_kib(pid: u32) -> Option<(u64, u64)> {
    let text = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Pins every thread of `pid` to the CPUs in `cpus` (a `taskset` list such as `1` or `0-2`).
#[allow(dead_code)] // the controller benchmark's; this file is shared with the quorum one
pub fn pin(pid: u32, cpus: &str) -> Result<(), String> {
    let out = Command::new("taskset")
        .args(["-a", "-p", "-c", cpus, &pid.to_string()])
        .output()
        .map_err(|e| format!("taskset: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "taskset -a -p -c {cpus} {pid}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Pins every thread of `pid` to all CPUs but `cpu` (the one a process under test gets).
#[allow(dead_code)] // the controller benchmark's; this file is shared with the quorum one
pub fn pin_all_but(pid: u32, cpu: usize) -> Result<(), String> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let others: Vec<String> = (0..cpus)
        .filter(|&c| c != cpu)
        .map(|c| c.to_string())
        .collect();
    if cpu >= cpus || others.is_empty() {
        return Err(format!(
            "--pin-controller {cpu}: needs a CPU below {cpus} and at least one other"
        ));
    }
    pin(pid, &others.join(","))
}

/// CPU seconds (user + system) `pid` has used so far.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces; the fields after it are space-separated.
    let after = text.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after ")" (state = 1).
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / clock_ticks_per_sec())
}

fn clock_ticks_per_sec() -> f64 {
    // USER_HZ is 100 on every Linux this runs on; `getconf CLK_TCK` confirms it when present.
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// Copies the directory tree `from` to `to`.
/// fsyncs every file under `dir` (and the directories): a copy's write-back is then done
/// before a measurement starts, instead of inside the first fsync the measured process makes.
pub fn sync_tree(dir: &Path) -> Result<(), String> {
    for e in fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let e = e.map_err(|e| e.to_string())?;
        if e.file_type().map_err(|e| e.to_string())?.is_dir() {
            sync_tree(&e.path())?;
        } else {
            fs::File::open(e.path())
                .and_then(|f| f.sync_all())
                .map_err(|err| format!("fsync {}: {err}", e.path().display()))?;
        }
    }
    fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| format!("fsync {}: {e}", dir.display()))
}

pub fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for e in fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let e = e.map_err(|e| e.to_string())?;
        let target = to.join(e.file_name());
        if e.file_type().map_err(|e| e.to_string())?.is_dir() {
            copy_dir(&e.path(), &target)?;
        } else {
            fs::copy(e.path(), &target).map_err(|err| format!("{}: {err}", e.path().display()))?;
        }
    }
    Ok(())
}
