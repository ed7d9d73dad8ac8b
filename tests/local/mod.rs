//! Small helpers for the tests that run the ferrokraft binary alone (no Kafka): a free
//! loopback port and a plain HTTP status probe of `/ready` or `/metrics`. Kept apart from
//! `tests/support`, which builds the whole Kafka harness into every test that names it (and
//! includes this module, so that the harness's ports come from the same `free_port`).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{Read, Write};
use std::time::Duration;

/// A loopback port free at the time of asking (bound then released), never one this process
/// was given before: the kernel may hand the port it just released to the next bind, and two
/// nodes of one cluster then shared a port (tool_parity's dynamic quorum, 2026-12-07: the
/// second node bound first and the first failed with "Address already in use").
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
        if given.insert(port) {
            return port;
        }
    }
}

/// The status code of `GET path` on `127.0.0.1:port`, `None` when nothing answers.
pub fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).ok()?;
    answer.split_whitespace().nth(1)?.parse().ok()
}
