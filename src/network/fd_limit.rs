//! The file-descriptor limit: raised to its hard maximum at start-up, as the JVM does for
//! Kafka (`-XX:+MaxFDLimit`), and the ceiling it puts on connections, so that accepting never
//! fails with EMFILE (which would shut everyone out, peers included) while `max.connections`
//! is Kafka's unlimited default.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Descriptors kept for everything but client connections: log segments and indexes,
/// snapshots, the node's own connections to its peers, the metrics listener.
pub const RESERVED_FDS: u64 = 256;

/// Raises the soft limit on open files to the hard one; returns the soft limit in force
/// (`None` if unlimited or unknown).
pub fn raise_open_files_limit() -> Option<u64> {
    let limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        let raised = Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        if setrlimit(Resource::Nofile, raised).is_ok() {
            return limit.maximum;
        }
    }
    limit.current
}

/// The most connections `max_connections` allows under a soft limit of `open_files`.
pub fn connection_ceiling(max_connections: usize, open_files: Option<u64>) -> usize {
    match open_files {
        None => max_connections,
        Some(n) => {
            let usable = n.saturating_sub(RESERVED_FDS).max(1);
            max_connections.min(usize::try_from(usable).unwrap_or(usize::MAX))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceiling_keeps_descriptors_for_the_node() {
        assert_eq!(connection_ceiling(i32::MAX as usize, Some(1024)), 768);
        assert_eq!(connection_ceiling(100, Some(1024)), 100);
        assert_eq!(connection_ceiling(100, None), 100);
        assert_eq!(connection_ceiling(100, Some(10)), 1);
    }

    #[test]
    fn raising_never_lowers() {
        let before = getrlimit(Resource::Nofile).current;
        let after = raise_open_files_limit();
        match (before, after) {
            (Some(b), Some(a)) => assert!(a >= b),
            (_, None) => {}
            (None, Some(_)) => panic!("an unlimited soft limit became limited"),
        }
    }
}
