//! Config providers in a real node (#37): a `server.properties` whose `listeners` comes from
//! Kafka's `FileConfigProvider` and whose `controller.quorum.voters` comes from its
//! `EnvVarConfigProvider` formats, starts, becomes leader and answers ApiVersions on that
//! listener, and a secret resolved the same way never reaches the log. A provider class
//! ferrokraft does not implement, and a path outside `allowed.paths`, are refused by `format`
//! and `start` with a non-zero exit and Kafka's message, and nothing is written.

// Integration tests drive real processes: unwrapping and wall-clock waits are fine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod local;
use local::free_port;
use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferrokraft::codec::messages::{RequestBody, ResponseBody};
use ferrokraft::codec::request::encode_request;
use ferrokraft::codec::response::decode_response;
use kafka_protocol::messages::{ApiKey, ApiVersionsRequest};
use kafka_protocol::protocol::StrBytes;

const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";
const FILE: &str = "org.apache.kafka.common.config.provider.FileConfigProvider";
const ENV: &str = "org.apache.kafka.common.config.provider.EnvVarConfigProvider";
/// A value only the secrets file holds: it must not appear in anything the node prints.
const TOKEN_SECRET: &str = "fk-token-secret-7f3a9c2e51d8";

fn ferrokraft(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
        .args(args)
        .envs(env.iter().copied())
        .env("RUST_LOG", "debug")
        .output()
        .expect("ferrokraft runs")
}

struct Node(Child);

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let code = text.split_whitespace().nth(1)?.parse().ok()?;
    Some((code, text))
}

/// Whether `port` answers an ApiVersions v3 request without error.
fn api_versions_answered(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let frame = encode_request(
        &RequestBody::ApiVersions(
            ApiVersionsRequest::default()
                .with_client_software_name(StrBytes::from_static_str("config-providers-test"))
                .with_client_software_version(StrBytes::from_static_str("1.0")),
        ),
        3,
        7,
        "config-providers-test",
    )
    .unwrap();
    if s.write_all(&frame).is_err() {
        return false;
    }
    let mut size = [0u8; 4];
    if s.read_exact(&mut size).is_err() {
        return false;
    }
    let mut body = vec![0; i32::from_be_bytes(size).max(0) as usize];
    if s.read_exact(&mut body).is_err() {
        return false;
    }
    matches!(
        decode_response(Bytes::from(body), ApiKey::ApiVersions, 3),
        Ok((7, ResponseBody::ApiVersions(r))) if r.error_code == 0
    )
}

/// A one-voter controller's properties: `listeners` and the delegation token key from
/// `secrets`, the voters from `FK_TEST_VOTERS`.
fn provider_properties(path: &Path, secrets: &Path, dir: &Path, metrics: u16) {
    fs::write(
        path,
        format!(
            "process.roles=controller\nnode.id=1\ncontroller.listener.names=CONTROLLER\n\
             log.dirs={dir}\nferrokraft.metrics.listener=127.0.0.1:{metrics}\n\
             config.providers=file,env\n\
             config.providers.file.class={FILE}\n\
             config.providers.env.class={ENV}\n\
             config.providers.env.param.allowlist.pattern=FK_TEST_.*\n\
             listeners=${{file:{secrets}:controller.listener}}\n\
             controller.quorum.voters=${{env:FK_TEST_VOTERS}}\n\
             delegation.token.secret.key=${{file:{secrets}:token.secret}}\n",
            dir = dir.display(),
            secrets = secrets.display(),
        ),
    )
    .unwrap();
}

#[test]
fn a_node_serves_the_listener_and_voters_its_providers_resolve() {
    let tmp = tempfile::tempdir().unwrap();
    let (port, metrics) = (free_port(), free_port());
    let dir = tmp.path().join("data");
    let secrets = tmp.path().join("secrets.properties");
    fs::write(
        &secrets,
        format!("controller.listener=CONTROLLER://127.0.0.1:{port}\ntoken.secret={TOKEN_SECRET}\n"),
    )
    .unwrap();
    let props = tmp.path().join("server.properties");
    provider_properties(&props, &secrets, &dir, metrics);
    let voters = format!("1@127.0.0.1:{port}");
    let env = [("FK_TEST_VOTERS", voters.as_str())];

    let out = ferrokraft(
        &["format", "-t", CLUSTER_ID, "-c", props.to_str().unwrap()],
        &env,
    );
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "format: {printed}");
    assert!(!printed.contains(TOKEN_SECRET), "format printed the secret");

    let log_path = tmp.path().join("node.log");
    let log = fs::File::create(&log_path).unwrap();
    let node = Node(
        Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
            .args(["start", "-c"])
            .arg(&props)
            .envs(env)
            .env("RUST_LOG", "debug")
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(8);
    loop {
        let ready = http_get(metrics, "/ready");
        if matches!(&ready, Some((200, text)) if text.contains("ready: leader 1")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never ready ({ready:?}):\n{}",
            fs::read_to_string(&log_path).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        api_versions_answered(port),
        "no ApiVersions answer on the listener from the file"
    );
    drop(node);
    let text = fs::read_to_string(&log_path).unwrap();
    assert!(!text.contains(TOKEN_SECRET), "the log shows the secret");
    assert!(
        !text.contains("isn't a known config"),
        "provider keys warned about:\n{text}"
    );
}

/// Every file under `dir` with its bytes (nothing when `dir` does not exist).
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.push((p.display().to_string(), Vec::new()));
            out.extend(snapshot(&p));
        } else {
            out.push((p.display().to_string(), fs::read(&p).unwrap()));
        }
    }
    out.sort();
    out
}

/// `format` then `start` with `props`: both refused with `wanted` on stderr, `dir` unchanged.
fn refused_by_format_and_start(props: &Path, dir: &Path, wanted: &str) -> String {
    let before = snapshot(dir);
    let mut all = String::new();
    for args in [
        vec!["format", "-t", CLUSTER_ID, "-c", props.to_str().unwrap()],
        vec!["start", "-c", props.to_str().unwrap()],
    ] {
        let out = ferrokraft(&args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!out.status.success(), "{} accepted it: {stderr}", args[0]);
        assert!(stderr.contains(wanted), "{} said: {stderr}", args[0]);
        assert_eq!(snapshot(dir), before, "{} touched the log dir", args[0]);
        all.push_str(&stderr);
    }
    all
}

#[test]
fn an_unknown_provider_class_and_a_path_outside_allowed_paths_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    let dir = tmp.path().join("data");
    let base = format!(
        "process.roles=controller\nnode.id=1\ncontroller.listener.names=CONTROLLER\n\
         controller.quorum.voters=1@127.0.0.1:{port}\nlog.dirs={}\n",
        dir.display()
    );
    let props = tmp.path().join("server.properties");

    fs::write(
        &props,
        format!(
            "{base}listeners=CONTROLLER://127.0.0.1:{port}\nconfig.providers=vault\n\
             config.providers.vault.class=com.example.VaultConfigProvider\n"
        ),
    )
    .unwrap();
    refused_by_format_and_start(
        &props,
        &dir,
        "Invalid value com.example.VaultConfigProvider for configuration config.providers.vault.class: Could not load config provider class or one of its dependencies (ferrokraft offers org.apache.kafka.common.config.provider.FileConfigProvider, org.apache.kafka.common.config.provider.DirectoryConfigProvider, org.apache.kafka.common.config.provider.EnvVarConfigProvider, io.strimzi.kafka.EnvVarConfigProvider, io.strimzi.kafka.KubernetesSecretConfigProvider)",
    );

    // Kafka only warns about a path outside allowed.paths and leaves the variable as
    // written, which the listener parser then refuses.
    let allowed = tmp.path().join("allowed");
    fs::create_dir(&allowed).unwrap();
    let outside = tmp.path().join("outside.properties");
    fs::write(
        &outside,
        format!("listener=CONTROLLER://127.0.0.1:{port}\n"),
    )
    .unwrap();
    let placeholder = format!("${{file:{}:listener}}", outside.display());
    fs::write(
        &props,
        format!(
            "{base}listeners={placeholder}\nconfig.providers=file\n\
             config.providers.file.class={FILE}\n\
             config.providers.file.param.allowed.paths={}\n",
            allowed.display()
        ),
    )
    .unwrap();
    let stderr = refused_by_format_and_start(
        &props,
        &dir,
        &format!("Invalid value {placeholder} for configuration listeners"),
    );
    assert!(
        stderr.contains(&format!(
            "The path {} is not allowed to be accessed",
            outside.display()
        )),
        "{stderr}"
    );
}
