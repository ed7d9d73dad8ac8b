//! Running the real Apache Kafka jars from tests.
//!
//! Jars are resolved with `interop/kafka/fetch.sh` (Maven). Tools log WARN+ to stderr
//! (`interop/kafka/log4j2-tools.properties`); servers log INFO to a file
//! (`interop/kafka/log4j2-server.properties`). Every process started here is killed by a
//! Drop guard, also when the test panics. Each test gets an `Artifacts` folder; it is deleted
//! on success and kept (its path printed) on failure.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use ferrokraft::codec::versions::Release;

/// The resolved Kafka installation.
pub struct Kafka {
    pub lib: PathBuf,
    pub repo: PathBuf,
    /// `KAFKA_VERSION`, default 4.1.2.
    pub version: String,
}

/// The Kafka version under test: `KAFKA_VERSION`, default 4.1.2.
pub fn kafka_version() -> String {
    std::env::var("KAFKA_VERSION")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "4.1.2".to_string())
}

/// `KAFKA_DEFAULT_FORMAT=1`: every node, ferrokraft's too, is formatted by Kafka's
/// `kafka-storage format` with that Kafka version's defaults (a Kafka 4.4.0 cluster at
/// metadata.version 4.4-IV2), not pinned to a release ferrokraft's own formatter knows.
pub fn kafka_default_format() -> bool {
    std::env::var("KAFKA_DEFAULT_FORMAT").is_ok_and(|v| v == "1")
}

/// The release line (`4.0` … `4.4`) of the Kafka under test, when ferrokraft presents it.
fn presented_release() -> Option<Release> {
    let v = kafka_version();
    Release::ALL
        .into_iter()
        .find(|r| v.starts_with(&format!("{}.", r.name())))
}

/// The `--release-version` every node of a mixed cluster is formatted with, so the bootstrap
/// metadata.version is one both implementations run. `None`: both defaults, equal for every
/// release ferrokraft presents (4.0.x formats at 4.0-IV3, 4.3.x at 4.3-IV0, …); 3.9.x (whose
/// brokers run on ferrokraft controllers) at 3.9, another Kafka at 4.1.
pub fn cluster_release_version() -> Option<&'static str> {
    // 3.9 brokers (BROKER_KAFKA_VERSION) run at metadata.version 3.9-IV0 at most.
    if broker_kafka_version().starts_with("3.9.") {
        return Some("3.9");
    }
    if kafka_default_format() || presented_release().is_some() {
        None
    } else if kafka_version().starts_with("3.9.") {
        Some("3.9")
    } else {
        Some("4.1")
    }
}

/// The `ferrokraft.kafka.release` ferrokraft nodes get: the release of the Kafka under test
/// (4.3 for 4.3.2), else 4.1.
pub fn ferrokraft_release() -> Release {
    presented_release().unwrap_or(Release::Kafka4_1)
}

/// Resolves the jars once per test binary. Panics with a clear message when Java or Maven is
/// missing: these tests are part of the suite and never skip.
pub fn kafka() -> &'static Kafka {
    static K: OnceLock<Kafka> = OnceLock::new();
    K.get_or_init(|| resolve(kafka_version()))
}

/// The Kafka version of the brokers: `BROKER_KAFKA_VERSION` (say 3.9.1, whose tools lack what
/// the harness runs), else the version under test. Tools and clients stay `KAFKA_VERSION`'s.
pub fn broker_kafka_version() -> String {
    std::env::var("BROKER_KAFKA_VERSION")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(kafka_version)
}

/// The jars the brokers run from ([`broker_kafka_version`]).
pub fn broker_kafka() -> &'static Kafka {
    static K: OnceLock<Kafka> = OnceLock::new();
    if broker_kafka_version() == kafka_version() {
        return kafka();
    }
    K.get_or_init(|| resolve(broker_kafka_version()))
}

fn resolve(version: String) -> Kafka {
    {
        let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let java = Command::new("java").arg("-version").output();
        assert!(
            java.is_ok_and(|o| o.status.success()),
            "Kafka tool tests need `java` (JDK 17+) on PATH; install it (e.g. apt-get install openjdk-17-jdk-headless)"
        );
        let out = Command::new(repo.join("interop/kafka/fetch.sh"))
            .arg(&version)
            .output()
            .expect("run interop/kafka/fetch.sh (needs bash and Maven `mvn` on PATH)");
        assert!(
            out.status.success(),
            "interop/kafka/fetch.sh failed (is Maven installed and Maven Central reachable?):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lib = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_string());
        assert!(
            lib.join(format!("kafka-clients-{version}.jar")).exists(),
            "no kafka-clients-{version}.jar in {lib:?}"
        );
        Kafka { lib, repo, version }
    }
}

/// JVM options for Kafka servers (controllers; brokers add C1-only, see
/// `broker::BROKER_JVM`): a small heap and the serial collector.
pub const SERVER_JVM: &[&str] = &["-Xmx256m", "-XX:+UseSerialGC"];

/// JVM options for short-lived client JVMs (admin tools, VerifiableProducer/Consumer) on a
/// small shared machine: a small heap, the serial collector and C1 only, which halves a
/// tool's CPU time to start (about 1.1 s instead of 2.1 s of user time for TopicCommand).
pub const CLIENT_JVM: &[&str] = &["-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"];

/// kafka-metadata-shell's main class.
pub const METADATA_SHELL: &str = "org.apache.kafka.shell.MetadataShell";

/// Output of a finished tool run.
#[derive(Debug)]
pub struct ToolOutput {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl ToolOutput {
    /// Panics with the tool's output unless it exited 0.
    pub fn assert_ok(&self, what: &str) {
        assert!(
            self.status.success(),
            "{what} failed ({:?}):\n{}\n{}",
            self.status.code(),
            self.stdout,
            self.stderr
        );
    }
}

/// A per-test folder kept on failure.
pub struct Artifacts {
    pub dir: PathBuf,
}

impl Artifacts {
    pub fn new(test: &str) -> Artifacts {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis();
        let dir = std::env::temp_dir()
            .join("ferrokraft-tool-tests")
            .join(format!("{test}-{}-{stamp}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        Artifacts { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Artifacts {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept test output in {}", self.dir.display());
        } else {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// Kills and reaps a child process when dropped.
pub struct ProcessGuard {
    child: Child,
    pub log: PathBuf,
}

impl ProcessGuard {
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits until the log contains `needle`; panics (with the log tail) on timeout or exit.
    pub fn wait_for_log(&mut self, needle: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let text = fs::read_to_string(&self.log).unwrap_or_default();
            if text.contains(needle) {
                return;
            }
            if !self.is_running() || Instant::now() > deadline {
                let tail: String = text
                    .lines()
                    .rev()
                    .take(40)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("\n");
                let running = self.is_running();
                panic!(
                    "`{needle}` did not appear in {} (running: {running}):\n{tail}",
                    self.log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` (e.g. "STOP", "CONT", "TERM") to the process.
    pub fn signal(&self, signal: &str) {
        send_signal(self.child.id(), signal);
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits up to `timeout` for the process to exit on its own; its status, or `None` if it
    /// still runs.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for ProcessGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `kill -<signal> <pid>`; panics if it fails.
pub fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -{signal} {pid} failed");
}

impl Kafka {
    /// Compiles the repository's Java `source` (a path under the repository) against these
    /// jars into `art`'s directory `classes`; the class path to run it with.
    pub fn compile(&self, art: &Artifacts, source: &str, classes: &str) -> String {
        let classes = art.path(classes);
        fs::create_dir_all(&classes).unwrap();
        let cp = format!("{}/*", self.lib.display());
        let out = Command::new("javac")
            .args(["-cp", &cp, "-d"])
            .arg(&classes)
            .arg(self.repo.join(source))
            .output()
            .expect("javac (JDK 17+)");
        assert!(
            out.status.success(),
            "javac {source} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        format!("{}:{cp}", classes.display())
    }

    /// The first of `candidates` (fully qualified class names) present in the Kafka jars:
    /// tools move between versions (e.g. DumpLogSegments from `kafka.tools` in 4.0–4.3 to
    /// `org.apache.kafka.tools` in 4.4). A jar's central directory stores entry names
    /// uncompressed, so a byte search finds them.
    pub fn class(&self, candidates: &[&'static str]) -> &'static str {
        self.find_class(candidates)
            .unwrap_or_else(|| panic!("none of {candidates:?} in the Kafka {} jars", self.version))
    }

    /// The first of `candidates` the jars hold, if any.
    pub fn find_class(&self, candidates: &[&'static str]) -> Option<&'static str> {
        let jars: Vec<Vec<u8>> = fs::read_dir(&self.lib)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with("kafka") && n.ends_with(".jar")
            })
            .filter_map(|e| fs::read(e.path()).ok())
            .collect();
        for class in candidates {
            let entry = format!("{}.class", class.replace('.', "/"));
            let needle = entry.as_bytes();
            // A whole entry name, not the tail of a longer path (`kafka/tools/X.class` is
            // also the end of `org/apache/kafka/tools/X.class`).
            let names_entry = |j: &Vec<u8>| {
                j.windows(needle.len())
                    .enumerate()
                    .any(|(p, w)| w == needle && (p == 0 || j[p - 1] != b'/'))
            };
            if jars.iter().any(names_entry) {
                return Some(class);
            }
        }
        None
    }

    /// The DumpLogSegments tool class of this version.
    pub fn dump_log_class(&self) -> &'static str {
        static C: OnceLock<&'static str> = OnceLock::new();
        C.get_or_init(|| {
            self.class(&[
                "kafka.tools.DumpLogSegments",
                "org.apache.kafka.tools.DumpLogSegments",
            ])
        })
    }

    fn java_with(&self, jvm: &[&str], log4j: &str, class: &str, args: &[&str]) -> Command {
        self.java_in(None, jvm, log4j, class, args)
    }

    /// As `java_with`, in network namespace `netns` (`ip netns exec`, which execs the JVM:
    /// the child's pid is the JVM's) when one is given.
    fn java_in(
        &self,
        netns: Option<&str>,
        jvm: &[&str],
        log4j: &str,
        class: &str,
        args: &[&str],
    ) -> Command {
        let mut c = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "java"]);
                c
            }
            None => Command::new("java"),
        };
        c.args(jvm);
        c.arg(format!(
            "-Dlog4j2.configurationFile={}",
            self.repo.join("interop/kafka").join(log4j).display()
        ))
        .arg("-cp")
        .arg(format!("{}/*", self.lib.display()))
        .arg(class)
        .args(args);
        c
    }

    /// Runs a tool to completion (2-minute limit). stdout/stderr are also saved in `art`.
    pub fn tool(&self, art: &Artifacts, name: &str, class: &str, args: &[&str]) -> ToolOutput {
        self.tool_within(art, name, class, args, Duration::from_secs(120))
            .unwrap_or_else(|| panic!("{class} {args:?} timed out"))
    }

    /// `kafka-metadata-shell --snapshot FILE <command>`, run again (up to three times) when a
    /// run hangs. Kafka's shell can wait forever on any snapshot, its own included: its
    /// `SnapshotFileReader` makes the high watermark known only when it reaches the last
    /// batch, the footer, and if the `MetadataLoader` has already applied the last metadata
    /// batch by then, it never publishes, so `waitUntilCaughtUp` spins on a last applied
    /// offset that stays 0. KAFKA-15371 (apache/kafka PR #19419) narrowed this race to
    /// snapshots whose last batch is a control batch, which is every snapshot.
    pub fn metadata_shell(&self, art: &Artifacts, name: &str, args: &[&str]) -> ToolOutput {
        for attempt in 1..=3 {
            let run = format!("{name}-{attempt}");
            if let Some(out) =
                self.tool_within(art, &run, METADATA_SHELL, args, Duration::from_secs(45))
            {
                return out;
            }
            eprintln!("{METADATA_SHELL} {args:?} hung (attempt {attempt}; KAFKA-15371's race)");
        }
        panic!("{METADATA_SHELL} {args:?} hung three times");
    }

    /// Runs a tool to completion; `None` (the process killed) if it outlives `limit`.
    fn tool_within(
        &self,
        art: &Artifacts,
        name: &str,
        class: &str,
        args: &[&str],
        limit: Duration,
    ) -> Option<ToolOutput> {
        self.tool_with_jvm(art, name, &[], class, args, limit)
    }

    /// A client tool (admin tools, VerifiableProducer/Consumer) run to completion with
    /// [`CLIENT_JVM`] options; `None` (the process killed) if it outlives `limit`.
    pub fn client_tool(
        &self,
        art: &Artifacts,
        name: &str,
        class: &str,
        args: &[&str],
        limit: Duration,
    ) -> Option<ToolOutput> {
        self.tool_with_jvm(art, name, CLIENT_JVM, class, args, limit)
    }

    /// Starts a client tool with [`CLIENT_JVM`] options in the background: stdout goes to
    /// `art/<name>.stdout` (the guard's `log`), stderr (WARN+) to `art/<name>.stderr`.
    pub fn spawn_client_tool(
        &self,
        art: &Artifacts,
        name: &str,
        class: &str,
        args: &[&str],
    ) -> ProcessGuard {
        let out_path = art.path(&format!("{name}.stdout"));
        let err_path = art.path(&format!("{name}.stderr"));
        let child = self
            .java_with(CLIENT_JVM, "log4j2-tools.properties", class, args)
            .stdin(Stdio::null())
            .stdout(File::create(&out_path).unwrap())
            .stderr(File::create(err_path).unwrap())
            .spawn()
            .expect("start java");
        ProcessGuard {
            child,
            log: out_path,
        }
    }

    fn tool_with_jvm(
        &self,
        art: &Artifacts,
        name: &str,
        jvm: &[&str],
        class: &str,
        args: &[&str],
        limit: Duration,
    ) -> Option<ToolOutput> {
        let out_path = art.path(&format!("{name}.stdout"));
        let err_path = art.path(&format!("{name}.stderr"));
        let mut child = self
            .java_with(jvm, "log4j2-tools.properties", class, args)
            .stdin(Stdio::null())
            .stdout(File::create(&out_path).unwrap())
            .stderr(File::create(&err_path).unwrap())
            .spawn()
            .expect("start java");
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        Some(ToolOutput {
            status,
            stdout: fs::read_to_string(out_path).unwrap_or_default(),
            stderr: fs::read_to_string(err_path).unwrap_or_default(),
        })
    }

    /// Starts `kafka.Kafka <props>` with a small heap; its log goes to `art/<name>.log`.
    pub fn start_server(&self, art: &Artifacts, name: &str, props: &Path) -> ProcessGuard {
        self.start_server_with(art, name, props, SERVER_JVM)
    }

    /// As [`Kafka::start_server`], with the JVM options `jvm`.
    pub fn start_server_with(
        &self,
        art: &Artifacts,
        name: &str,
        props: &Path,
        jvm: &[&str],
    ) -> ProcessGuard {
        self.start_server_in(None, &[], art, name, props, jvm)
    }

    /// As [`Kafka::start_server_with`], in network namespace `netns` when one is given, with
    /// `env` added to its environment.
    pub fn start_server_in(
        &self,
        netns: Option<&str>,
        env: &[(String, String)],
        art: &Artifacts,
        name: &str,
        props: &Path,
        jvm: &[&str],
    ) -> ProcessGuard {
        let log = art.path(&format!("{name}.log"));
        let child = self
            .java_in(
                netns,
                jvm,
                "log4j2-server.properties",
                "kafka.Kafka",
                &[props.to_str().unwrap()],
            )
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(File::create(&log).unwrap())
            .stderr(Stdio::from(
                File::options().append(true).open(&log).unwrap(),
            ))
            .spawn()
            .expect("start kafka.Kafka");
        ProcessGuard { child, log }
    }
}

pub use super::local::free_port;
