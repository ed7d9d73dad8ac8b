//! The oracle: Apache Kafka's own classes (protocol-tests/oracle, a Maven project), built once
//! per test process and under a file lock across processes, run as `java ... Oracle ARGS`.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use super::vectors::{kafka_version, tests_dir};

pub(crate) struct Oracle {
    classpath: String,
}

static ORACLE: OnceLock<Result<Oracle, String>> = OnceLock::new();

pub(crate) fn oracle() -> &'static Oracle {
    match ORACLE.get_or_init(build_oracle) {
        Ok(oracle) => oracle,
        Err(e) => panic!("the Kafka oracle is unavailable: {e}"),
    }
}

fn require_tool(tool: &str, arg: &str) -> Result<(), String> {
    match Command::new(tool).arg(arg).output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "`{tool} {arg}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )),
        Err(e) => Err(format!(
            "`{tool}` is not runnable ({e}); these tests need Java 17+ and Maven 3 on PATH \
             (Debian: apt-get install openjdk-17-jdk-headless maven)"
        )),
    }
}

pub(crate) fn tail(out: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

fn build_oracle() -> Result<Oracle, String> {
    require_tool("java", "-version")?;
    require_tool("mvn", "-v")?;
    let dir = tests_dir().join("oracle");
    let target = dir.join("target");
    fs::create_dir_all(&target).map_err(|e| format!("{}: {e}", target.display()))?;
    let lock = File::create(target.join(".build.lock")).map_err(|e| format!("lock file: {e}"))?;
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|e| format!("locking the oracle build: {e}"))?;

    // Rebuild when the pom, the sources or the Kafka version changed since the last build.
    let version = kafka_version();
    let mut inputs = fs::read(dir.join("pom.xml")).map_err(|e| format!("pom.xml: {e}"))?;
    let mut sources = Vec::new();
    collect_files(&dir.join("src"), &mut sources);
    sources.sort();
    for path in &sources {
        inputs.extend(fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?);
    }
    let stamp = format!("kafka {version} inputs {:08x}\n", crc32c::crc32c(&inputs));
    let stamp_path = target.join("ferrokraft.stamp");
    let classpath_file = target.join("classpath.txt");
    let fresh = fs::read_to_string(&stamp_path).is_ok_and(|s| s == stamp)
        && classpath_file.exists()
        && target
            .join("classes/ferrokraft/oracle/Oracle.class")
            .exists();
    if !fresh {
        let _ = fs::remove_file(&stamp_path);
        let _ = fs::remove_dir_all(target.join("classes"));
        let mvn = |offline: bool| {
            let mut cmd = Command::new("mvn");
            cmd.current_dir(&dir).args(["-B", "-q"]);
            if offline {
                cmd.arg("-o");
            }
            cmd.arg(format!("-Dkafka.version={version}")).arg("package");
            cmd.output().map_err(|e| format!("running mvn: {e}"))
        };
        // Offline first (everything is in ~/.m2 after the first build), then online.
        let out = mvn(true)?;
        if !out.status.success() {
            let online = mvn(false)?;
            if !online.status.success() {
                return Err(format!(
                    "`mvn package` in {} failed (offline, then online):\n{}",
                    dir.display(),
                    tail(&online)
                ));
            }
        }
        fs::write(&stamp_path, &stamp).map_err(|e| format!("stamp: {e}"))?;
    }
    let deps = fs::read_to_string(&classpath_file)
        .map_err(|e| format!("{}: {e}", classpath_file.display()))?;
    let classpath = format!("{}:{}", target.join("classes").display(), deps.trim());
    Ok(Oracle { classpath })
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                collect_files(&path, out);
            } else {
                out.push(path);
            }
        }
    }
}

impl Oracle {
    pub(crate) fn run(&self, args: &[String]) -> Output {
        Command::new("java")
            .arg("-cp")
            .arg(&self.classpath)
            .arg("ferrokraft.oracle.Oracle")
            .args(args)
            .output()
            .expect("running java")
    }
}
