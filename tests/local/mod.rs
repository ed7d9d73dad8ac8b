//! Small helpers for the tests that run the ferrokraft binary alone (no Kafka): a free
//! loopback port and a plain HTTP status probe of `/ready` or `/metrics`. Kept apart from
//! `tests/support`, which builds the whole Kafka harness into every test that names it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{Read, Write};
use std::time::Duration;

/// A loopback port free at the time of asking.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
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
