//! Strimzi's `io.strimzi.kafka.KubernetesSecretConfigProvider`: `${name:<namespace>/<secret>:<key>}`
//! resolved from a Kubernetes Secret, read through the Kubernetes API with the pod's service
//! account, as Strimzi's provider (kafka-kubernetes-config-provider 1.2) reads it through the
//! fabric8 client.
//!
//! ```text
//!   path "<ns>/<secret>" (or "<secret>": the pod's namespace) ──checked against Strimzi's pattern
//!   env ─▶ ApiAccess { host:port, bearer token, CA }  (fabric8's variables, else the pod's)
//!   GET https://host:port/api/v1/namespaces/<ns>/secrets/<secret>   (rustls over a std TcpStream)
//!       ─▶ 200: .data, each value base64-decoded ─▶ each key asked for is a glob over the data's
//!          keys: the matching values, by key, joined with `separator` ("\n" unless set)
//!       ─▶ 404: "Secret … not found";  anything else: "Failed to retrieve Secret …"
//! ```
//!
//! Where the API is and who we are, in the order fabric8 looks (environment variables only;
//! ferrokraft has no Java system properties and reads no kubeconfig): `KUBERNETES_MASTER`
//! (`https://host:port`), else `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` (set in
//! every pod); the token `KUBERNETES_AUTH_TOKEN`, else the file `KUBERNETES_AUTH_SERVICEACCOUNT_TOKEN`,
//! else the service account's token file; the CA `KUBERNETES_CERTS_CA_FILE`, else the service
//! account's `ca.crt`; the default namespace `KUBERNETES_NAMESPACE`, else the service account's
//! `namespace` file. The token and the Secret's values are never logged, nor put in an error.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use regex::Regex;
use rustls_pki_types::pem::PemObject as _;
use tokio_rustls::rustls;

use super::properties::ConfigError;

/// The Java class name `config.providers.<name>.class` gives.
pub const CLASS_NAME: &str = "io.strimzi.kafka.KubernetesSecretConfigProvider";

/// Where a pod's service account token, CA and namespace are mounted.
const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// fabric8's default connect and request timeouts (10 s each).
const TIMEOUT: Duration = Duration::from_secs(10);

/// A Secret holds at most 1 MiB of data; its JSON, base64 and metadata included, stays well
/// under this. A bigger answer is not a Secret and is refused rather than buffered.
const MAX_RESPONSE: usize = 4 << 20;

/// Strimzi's check of the path (`KubernetesResourceIdentifier`), whole-string.
const PATH_PATTERN: &str = r"^([a-z0-9.-]+/)?[a-z0-9.-]+$";

/// The configured provider: its separator and how to reach the API.
pub(super) struct KubernetesSecretProvider {
    separator: String,
    access: ApiAccess,
}

/// How to reach the API, from the environment at configure time; files are read at `get`.
#[derive(Debug, Clone)]
struct ApiAccess {
    /// `host:port` (an IPv6 host in brackets), or `None` when the environment names no API.
    authority: Option<String>,
    token: TokenSource,
    ca_file: String,
    namespace: NamespaceSource,
}

#[derive(Clone)]
enum TokenSource {
    Value(String),
    File(String),
}

// Hand-written so that a `{:?}` never shows a token.
impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Value(_) => f.write_str("Value([hidden])"),
            Self::File(p) => f.debug_tuple("File").field(p).finish(),
        }
    }
}

#[derive(Debug, Clone)]
enum NamespaceSource {
    Value(String),
    File(String),
}

impl KubernetesSecretProvider {
    /// `configure`: the `separator` param (Java's `System.lineSeparator()`, "\n", unless set)
    /// and the API access from `env`.
    pub(super) fn configure(
        params: &BTreeMap<String, String>,
        env: &BTreeMap<String, String>,
    ) -> Self {
        // Params are no secrets (the class, the separator); Strimzi logs them too.
        tracing::info!(
            "Configuring Kubernetes Secret config provider with configuration {params:?}"
        );
        let separator = params
            .get("separator")
            .cloned()
            .unwrap_or_else(|| "\n".to_string());
        KubernetesSecretProvider {
            separator,
            access: ApiAccess::from_env(env),
        }
    }

    /// `get(path, keys)`: the Secret at `path`, each key a glob over its data's keys.
    pub(super) fn get(
        &self,
        path: &str,
        keys: &BTreeSet<String>,
    ) -> Result<BTreeMap<String, String>, ConfigError> {
        let invalid_path = || {
            ConfigError::Message(format!(
                "Invalid path {path}. It has to be in format <namespace>/<secret> (or <secret> for default namespace)."
            ))
        };
        let pattern = Regex::new(PATH_PATTERN)
            .map_err(|e| ConfigError::Message(format!("secret path pattern: {e}")))?;
        if !pattern.is_match(path) {
            return Err(invalid_path());
        }
        let (namespace, name) = match path.split_once('/') {
            Some((ns, name)) => (ns.to_string(), name.to_string()),
            None => (self.access.namespace()?, path.to_string()),
        };
        tracing::info!("Retrieving configuration from Secret {name} in namespace {namespace}");
        let data = self.access.secret_data(&namespace, &name)?;
        let mut out = BTreeMap::new();
        for key in keys {
            let glob = glob_regex(key)?;
            // The data is a BTreeMap: the matches come sorted by key, as Strimzi sorts them.
            let joined: Vec<&str> = data
                .iter()
                .filter(|(k, _)| glob.is_match(k))
                .map(|(_, v)| v.as_str())
                .collect();
            out.insert(key.clone(), joined.join(&self.separator));
        }
        Ok(out)
    }
}

impl ApiAccess {
    fn from_env(env: &BTreeMap<String, String>) -> Self {
        let var = |k: &str| env.get(k).filter(|v| !v.is_empty()).cloned();
        let authority = match var("KUBERNETES_MASTER") {
            Some(url) => Some(
                url.trim_start_matches("https://")
                    .trim_end_matches('/')
                    .to_string(),
            ),
            None => var("KUBERNETES_SERVICE_HOST").map(|host| {
                let port = var("KUBERNETES_SERVICE_PORT").unwrap_or_else(|| "443".to_string());
                if host.contains(':') {
                    format!("[{host}]:{port}")
                } else {
                    format!("{host}:{port}")
                }
            }),
        };
        let token = match var("KUBERNETES_AUTH_TOKEN") {
            Some(t) => TokenSource::Value(t),
            None => TokenSource::File(
                var("KUBERNETES_AUTH_SERVICEACCOUNT_TOKEN")
                    .unwrap_or_else(|| format!("{SERVICE_ACCOUNT_DIR}/token")),
            ),
        };
        let ca_file = var("KUBERNETES_CERTS_CA_FILE")
            .unwrap_or_else(|| format!("{SERVICE_ACCOUNT_DIR}/ca.crt"));
        let namespace = match var("KUBERNETES_NAMESPACE") {
            Some(ns) => NamespaceSource::Value(ns),
            None => NamespaceSource::File(format!("{SERVICE_ACCOUNT_DIR}/namespace")),
        };
        ApiAccess {
            authority,
            token,
            ca_file,
            namespace,
        }
    }

    /// The default namespace (a path without one).
    fn namespace(&self) -> Result<String, ConfigError> {
        match &self.namespace {
            NamespaceSource::Value(ns) => Ok(ns.clone()),
            NamespaceSource::File(file) => std::fs::read_to_string(file)
                .map(|s| s.trim().to_string())
                .map_err(|e| {
                    ConfigError::Message(format!(
                        "No namespace given and the service account's namespace file {file} could not be read: {e}"
                    ))
                }),
        }
    }

    /// The Secret's `.data`, each value base64-decoded (UTF-8, malformed bytes replaced, as
    /// Java's `new String(bytes, UTF_8)`).
    fn secret_data(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<BTreeMap<String, String>, ConfigError> {
        let failed = |reason: String| {
            // Strimzi logs the cause and throws the bare message; the cause stays in the log.
            tracing::error!(
                "Failed to retrieve Secret {name} from Kubernetes namespace {namespace}: {reason}"
            );
            ConfigError::Message(format!(
                "Failed to retrieve Secret {name} from Kubernetes namespace {namespace}"
            ))
        };
        let (status, body) = self
            .get(&format!("/api/v1/namespaces/{namespace}/secrets/{name}"))
            .map_err(failed)?;
        if status == 404 {
            return Err(ConfigError::Message(format!(
                "Secret {name} in namespace {namespace} not found"
            )));
        }
        if status != 200 {
            return Err(failed(format!(
                "the API answered HTTP {status}: {}",
                String::from_utf8_lossy(&body[..body.len().min(300)])
            )));
        }
        let secret: SecretJson = serde_json::from_slice(&body)
            .map_err(|e| failed(format!("the answer is not a Secret: {e}")))?;
        let engine = base64::engine::general_purpose::STANDARD;
        let mut data = BTreeMap::new();
        for (k, v) in secret.data.unwrap_or_default() {
            let bytes = engine
                .decode(v.as_bytes())
                .map_err(|e| failed(format!("the value of key {k} is not base64: {e}")))?;
            data.insert(k, String::from_utf8_lossy(&bytes).into_owned());
        }
        Ok(data)
    }

    /// One HTTPS GET with the bearer token: the status and the body.
    fn get(&self, target: &str) -> Result<(u16, Vec<u8>), String> {
        let authority = self.authority.as_deref().ok_or_else(|| {
            "no Kubernetes API: neither KUBERNETES_MASTER nor KUBERNETES_SERVICE_HOST is set"
                .to_string()
        })?;
        let token = match &self.token {
            TokenSource::Value(t) => t.clone(),
            TokenSource::File(file) => std::fs::read_to_string(file)
                .map_err(|e| format!("cannot read the service account token {file}: {e}"))?
                .trim()
                .to_string(),
        };
        let ca_pem = std::fs::read(&self.ca_file)
            .map_err(|e| format!("cannot read the CA file {}: {e}", self.ca_file))?;
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_pki_types::CertificateDer::pem_slice_iter(&ca_pem) {
            let cert = cert.map_err(|e| format!("the CA file {}: {e}", self.ca_file))?;
            roots
                .add(cert)
                .map_err(|e| format!("the CA file {}: {e}", self.ca_file))?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let host = host_of(authority);
        let server_name = rustls_pki_types::ServerName::try_from(host.to_string())
            .map_err(|e| format!("{host} is not a valid TLS server name: {e}"))?;
        let conn = rustls::ClientConnection::new(Arc::new(config), server_name)
            .map_err(|e| e.to_string())?;
        let addr = authority
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve {authority}: {e}"))?
            .next()
            .ok_or_else(|| format!("{authority} resolves to no address"))?;
        let sock = TcpStream::connect_timeout(&addr, TIMEOUT)
            .map_err(|e| format!("cannot connect to {authority}: {e}"))?;
        sock.set_read_timeout(Some(TIMEOUT))
            .and_then(|()| sock.set_write_timeout(Some(TIMEOUT)))
            .map_err(|e| e.to_string())?;
        let mut tls = rustls::StreamOwned::new(conn, sock);
        let request = format!(
            "GET {target} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {token}\r\n\
             Accept: application/json\r\nUser-Agent: ferrokraft\r\nConnection: close\r\n\r\n"
        );
        tls.write_all(request.as_bytes())
            .and_then(|()| tls.flush())
            .map_err(|e| format!("sending the request to {authority}: {e}"))?;
        let mut response = Vec::new();
        let mut buf = [0u8; 16 << 10];
        loop {
            match tls.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    response.extend_from_slice(&buf[..n]);
                    if response.len() > MAX_RESPONSE {
                        return Err(format!("the answer is over {MAX_RESPONSE} bytes"));
                    }
                }
                // A server closing without close_notify after a complete answer: the body's
                // framing (length or chunks) says whether it is complete.
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(format!("reading the answer from {authority}: {e}")),
            }
        }
        parse_response(&response)
    }
}

/// The host of `host:port` (brackets of an IPv6 address removed).
fn host_of(authority: &str) -> &str {
    let host = match authority.rfind(':') {
        Some(i) if !authority[i..].contains(']') => &authority[..i],
        _ => authority,
    };
    host.trim_start_matches('[').trim_end_matches(']')
}

/// The part of a Secret read: `.data`, key → base64.
#[derive(serde::Deserialize)]
struct SecretJson {
    data: Option<BTreeMap<String, String>>,
}

/// An HTTP/1.1 answer: the status and the body, by `Content-Length`, chunks or the close.
fn parse_response(raw: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the answer ended inside its headers")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let body = &raw[end + 4..];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("not an HTTP status line: {status_line}"))?;
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        } else if name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse::<usize>()
                    .map_err(|_| format!("Content-Length {value} is not a number"))?,
            );
        }
    }
    if chunked {
        return dechunk(body).map(|b| (status, b));
    }
    match length {
        Some(n) if body.len() < n => Err(format!(
            "the answer ended after {} of its {n} bytes",
            body.len()
        )),
        Some(n) => Ok((status, body[..n].to_vec())),
        None => Ok((status, body.to_vec())),
    }
}

/// A chunked body, put back together.
fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("the answer ended inside a chunk size")?;
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("{size_text} is not a chunk size"))?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if body.len() < size {
            return Err("the answer ended inside a chunk".to_string());
        }
        out.extend_from_slice(&body[..size]);
        body = body.get(size + 2..).unwrap_or_default();
    }
}

/// Java's glob `PathMatcher` on a single name (Secret keys have no `/`): `*` any run, `?` one
/// character, `[...]` a class (`!` negates), `{a,b}` alternatives, `\` escapes.
pub(super) fn glob_regex(glob: &str) -> Result<Regex, ConfigError> {
    let mut re = String::from("^");
    let mut in_group = false;
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => re.push_str("[^/]*"),
            '?' => re.push_str("[^/]"),
            '\\' => match chars.next() {
                Some(next) => re.push_str(&regex::escape(&next.to_string())),
                None => return Err(bad_glob(glob, "a trailing escape")),
            },
            '[' => {
                re.push('[');
                if chars.peek() == Some(&'!') {
                    chars.next();
                    re.push('^');
                }
                let mut closed = false;
                for c in chars.by_ref() {
                    if c == ']' {
                        closed = true;
                        break;
                    }
                    if matches!(c, '\\' | '[' | '&' | '~' | '^') {
                        re.push('\\');
                    }
                    re.push(c);
                }
                if !closed {
                    return Err(bad_glob(glob, "a [ without its ]"));
                }
                re.push(']');
            }
            '{' if !in_group => {
                in_group = true;
                re.push_str("(?:");
            }
            '{' => return Err(bad_glob(glob, "nested groups")),
            ',' if in_group => re.push('|'),
            '}' if in_group => {
                in_group = false;
                re.push(')');
            }
            other => re.push_str(&regex::escape(&other.to_string())),
        }
    }
    if in_group {
        return Err(bad_glob(glob, "a { without its }"));
    }
    re.push('$');
    Regex::new(&re).map_err(|e| bad_glob(glob, &e.to_string()))
}

fn bad_glob(glob: &str, why: &str) -> ConfigError {
    ConfigError::Message(format!("Invalid glob pattern {glob}: {why}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn globs_match_as_java_path_matchers_do() {
        let m = |g: &str, k: &str| glob_regex(g).unwrap().is_match(k);
        assert!(m("tls.crt", "tls.crt"));
        assert!(!m("tls.crt", "tlsxcrt"), "a dot is a dot");
        assert!(m("*.crt", "ca.crt") && !m("*.crt", "ca.key"));
        assert!(m("ca?.crt", "ca2.crt") && !m("ca?.crt", "ca.crt"));
        assert!(m("[ab]*", "a1") && !m("[!ab]*", "a1") && m("[!ab]*", "c1"));
        assert!(m("{ca,tls}.crt", "tls.crt") && !m("{ca,tls}.crt", "x.crt"));
        assert!(glob_regex("[ab").is_err() && glob_regex("{a,b").is_err());
    }

    #[test]
    fn a_path_is_checked_with_strimzis_pattern_and_message() {
        let p = KubernetesSecretProvider::configure(&BTreeMap::new(), &BTreeMap::new());
        let keys = BTreeSet::from(["k".to_string()]);
        for bad in ["", "My-Ns/secret", "a/b/c", "ns/"] {
            assert_eq!(
                p.get(bad, &keys).unwrap_err().to_string(),
                format!("Invalid path {bad}. It has to be in format <namespace>/<secret> (or <secret> for default namespace).")
            );
        }
        // A valid path with no API in the environment fails as a retrieval, naming no token.
        assert_eq!(
            p.get("ns/my-secret", &keys).unwrap_err().to_string(),
            "Failed to retrieve Secret my-secret from Kubernetes namespace ns"
        );
    }

    #[test]
    fn access_follows_fabric8s_variables_then_the_pods() {
        let env: BTreeMap<String, String> = [
            ("KUBERNETES_SERVICE_HOST", "fd00::1"),
            ("KUBERNETES_SERVICE_PORT", "6443"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let a = ApiAccess::from_env(&env);
        assert_eq!(a.authority.as_deref(), Some("[fd00::1]:6443"));
        assert_eq!(host_of("[fd00::1]:6443"), "fd00::1");
        assert_eq!(host_of("10.96.0.1:443"), "10.96.0.1");
        assert_eq!(a.ca_file, format!("{SERVICE_ACCOUNT_DIR}/ca.crt"));
        assert!(matches!(&a.token, TokenSource::File(f) if f.ends_with("/serviceaccount/token")));
        let mut env = env;
        env.insert("KUBERNETES_MASTER".into(), "https://127.0.0.1:8443/".into());
        env.insert("KUBERNETES_AUTH_TOKEN".into(), "s3cret-token".into());
        let a = ApiAccess::from_env(&env);
        assert_eq!(a.authority.as_deref(), Some("127.0.0.1:8443"));
        assert!(
            !format!("{a:?}").contains("s3cret"),
            "a token is never shown"
        );
    }

    #[test]
    fn answers_are_read_by_length_chunks_or_close() {
        let (s, b) = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}").unwrap();
        assert_eq!((s, b.as_slice()), (200, &b"{}"[..]));
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse_response(raw).unwrap().1, b"abcde");
        assert_eq!(
            parse_response(b"HTTP/1.1 404 Not Found\r\n\r\nno")
                .unwrap()
                .0,
            404
        );
        assert!(parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}").is_err());
        assert!(
            parse_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab")
                .is_err()
        );
    }
}
