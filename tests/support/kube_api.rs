#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]
//! A stand-in for the Kubernetes API server, as much of it as Strimzi's Secret provider uses:
//! `GET /api/v1/namespaces/<ns>/secrets/<name>` over HTTPS (a test CA's certificate for
//! 127.0.0.1), a bearer token checked on every request (401 and a `Status` otherwise, as the
//! API server answers), 404 and a `Status` for a Secret it does not hold, and the Secret's
//! `data` base64-encoded. Answers alternate between `Content-Length` and chunked bodies, the
//! two framings the real server uses. It also lays out a service-account directory (token,
//! ca.crt, namespace) as the kubelet mounts it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, ServerConfig, ServerConnection, StreamOwned};

use super::tls::Ca;

/// `(namespace, name)` → key → value (plain; encoded when served).
pub type Secrets = BTreeMap<(String, String), BTreeMap<String, String>>;

pub struct KubeApi {
    pub port: u16,
    pub ca_pem: String,
    pub token: String,
    /// Every request line served, with whether its token was right, in order.
    pub requests: Arc<Mutex<Vec<(String, bool)>>>,
    stop: Arc<AtomicBool>,
}

impl KubeApi {
    /// Serves `secrets` to callers presenting `token`, until dropped.
    pub fn start(secrets: Secrets, token: &str) -> KubeApi {
        let ca = Ca::new("kubernetes test CA");
        let leaf = ca.leaf("kube-apiserver");
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(leaf.cert_pem.as_bytes())
                .collect::<Result<_, _>>()
                .unwrap();
        let key = PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = Arc::new(
            ServerConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(certs, key)
                .unwrap(),
        );
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, stopped, wanted) = (requests.clone(), stop.clone(), token.to_string());
        std::thread::spawn(move || {
            let mut served = 0usize;
            while !stopped.load(Ordering::Relaxed) {
                let sock = match listener.accept() {
                    Ok((s, _)) => s,
                    Err(_) => {
                        std::thread::sleep(std::time::Duration::from_millis(10));
                        continue;
                    }
                };
                sock.set_nonblocking(false).unwrap();
                sock.set_read_timeout(Some(std::time::Duration::from_secs(5)))
                    .unwrap();
                let conn = ServerConnection::new(config.clone()).unwrap();
                let tls = StreamOwned::new(conn, sock);
                served += 1;
                // A failed handshake (a client that does not trust us) just ends here.
                let _ = serve_one(tls, &secrets, &wanted, &log, served.is_multiple_of(2));
            }
        });
        KubeApi {
            port,
            ca_pem: ca.cert_pem,
            token: token.to_string(),
            requests,
            stop,
        }
    }

    /// A service-account directory under `dir` as the kubelet mounts it.
    pub fn service_account(&self, dir: &Path, namespace: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("token"), &self.token).unwrap();
        std::fs::write(dir.join("ca.crt"), &self.ca_pem).unwrap();
        std::fs::write(dir.join("namespace"), namespace).unwrap();
        dir.to_path_buf()
    }

    /// The variables that point Strimzi's provider (fabric8's names) at this server and the
    /// service-account directory `sa`.
    pub fn env(&self, sa: &Path) -> Vec<(String, String)> {
        vec![
            ("KUBERNETES_SERVICE_HOST".into(), "127.0.0.1".into()),
            ("KUBERNETES_SERVICE_PORT".into(), self.port.to_string()),
            (
                "KUBERNETES_AUTH_SERVICEACCOUNT_TOKEN".into(),
                sa.join("token").display().to_string(),
            ),
            (
                "KUBERNETES_CERTS_CA_FILE".into(),
                sa.join("ca.crt").display().to_string(),
            ),
        ]
    }
}

impl Drop for KubeApi {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn status(code: u16, reason: &str, message: &str) -> String {
    format!(
        r#"{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"{message}","reason":"{reason}","code":{code}}}"#
    )
}

fn serve_one(
    tls: StreamOwned<ServerConnection, std::net::TcpStream>,
    secrets: &Secrets,
    token: &str,
    log: &Mutex<Vec<(String, bool)>>,
    chunked: bool,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(tls);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut authorized = false;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("authorization")
                && value.trim() == format!("Bearer {token}")
            {
                authorized = true;
            }
        }
    }
    let request_line = request_line.trim_end().to_string();
    log.lock().unwrap().push((request_line.clone(), authorized));
    let path = request_line.split(' ').nth(1).unwrap_or_default();
    let (code, body) = if !authorized {
        (401, status(401, "Unauthorized", "Unauthorized"))
    } else {
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match parts.as_slice() {
            ["api", "v1", "namespaces", ns, "secrets", name] => {
                match secrets.get(&(ns.to_string(), name.to_string())) {
                    Some(data) => {
                        let engine = base64::engine::general_purpose::STANDARD;
                        let data: BTreeMap<&String, String> =
                            data.iter().map(|(k, v)| (k, engine.encode(v))).collect();
                        let body = serde_json::json!({
                            "kind": "Secret",
                            "apiVersion": "v1",
                            "metadata": {"name": name, "namespace": ns},
                            "data": data,
                            "type": "Opaque",
                        });
                        (200, body.to_string())
                    }
                    None => (
                        404,
                        status(
                            404,
                            "NotFound",
                            &format!("secrets \\\"{name}\\\" not found"),
                        ),
                    ),
                }
            }
            _ => (
                404,
                status(
                    404,
                    "NotFound",
                    "the server could not find the requested resource",
                ),
            ),
        }
    };
    let mut tls = reader.into_inner();
    let reason = match code {
        200 => "OK",
        401 => "Unauthorized",
        _ => "Not Found",
    };
    let mut out =
        format!("HTTP/1.1 {code} {reason}\r\nContent-Type: application/json\r\n").into_bytes();
    if chunked {
        out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
        for piece in body.as_bytes().chunks(100) {
            out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            out.extend_from_slice(piece);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
    } else {
        out.extend_from_slice(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }
    tls.write_all(&out)?;
    tls.flush()?;
    tls.conn.send_close_notify();
    tls.flush()
}
