//! systemd's readiness protocol (`sd_notify`, `Type=notify` units): one datagram
//! `READY=1` to the socket `NOTIFY_SOCKET` names once the listeners serve, `STOPPING=1` when
//! a signal starts the shutdown. Without `NOTIFY_SOCKET` (not started by systemd) nothing is
//! sent. A name starting `@` is a socket in the abstract namespace.

use std::ffi::OsStr;
use std::os::unix::net::UnixDatagram;

/// The variable systemd sets for a `Type=notify` service.
pub const NOTIFY_SOCKET_VAR: &str = "NOTIFY_SOCKET";

/// Sends `state` (`READY=1`, `STOPPING=1`, …) to the socket `NOTIFY_SOCKET` names, if any.
/// A failure is logged once and otherwise ignored: systemd then times the start out, which
/// says more than a node that refuses to run.
pub fn notify(state: &str) {
    let Some(socket) = std::env::var_os(NOTIFY_SOCKET_VAR) else {
        return;
    };
    if let Err(e) = send(&socket, state) {
        tracing::warn!(
            "Cannot tell systemd {state} on {}: {e}",
            socket.to_string_lossy()
        );
    }
}

fn send(socket: &OsStr, state: &str) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let sender = UnixDatagram::unbound()?;
    let name = socket.as_bytes();
    match name.strip_prefix(b"@") {
        Some(abstract_name) => {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(abstract_name)?;
            sender.send_to_addr(state.as_bytes(), &addr)?;
        }
        None => {
            sender.send_to(state.as_bytes(), std::path::Path::new(socket))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_reaches_a_path_socket_and_an_abstract_one() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("notify");
        let receiver = UnixDatagram::bind(&path).unwrap_or_else(|e| panic!("{e}"));
        send(path.as_os_str(), "READY=1").unwrap_or_else(|e| panic!("{e}"));
        let mut buf = [0u8; 64];
        let n = receiver.recv(&mut buf).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&buf[..n], b"READY=1");

        use std::os::linux::net::SocketAddrExt;
        let name = format!("ferrokraft-notify-test-{}", std::process::id());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        let receiver = UnixDatagram::bind_addr(&addr).unwrap_or_else(|e| panic!("{e}"));
        send(OsStr::new(&format!("@{name}")), "STOPPING=1").unwrap_or_else(|e| panic!("{e}"));
        let n = receiver.recv(&mut buf).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&buf[..n], b"STOPPING=1");
    }
}
