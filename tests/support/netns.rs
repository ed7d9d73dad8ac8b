#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]
//! One Linux network namespace per node on a bridge the test makes, so that the links
//! between nodes can be cut (both ways or one way) and slowed while the processes run.
//!
//! Layout: a bridge `fk<tag>br` in the test's own namespace holds `10.<s>.0.254/24` (the
//! test process and every client tool it starts reach the nodes through it); node `id` gets
//! namespace `fk<tag>n<id>` with a veth whose inside end is `eth0` at `10.<s>.0.<id>`, and is
//! started with `ip netns exec`. Node ids stay below 254 (controllers 1..=5, brokers 100..).
//!
//! Faults, with what this kernel offers (no netem, no tc actions; routes and htb work):
//! - a cut `a → b` is a blackhole route to `b` in `a`'s namespace: `a`'s packets to `b` are
//!   dropped (TCP keeps them queued and retransmits them after the heal; a new connect fails
//!   at once), while `b`'s packets still reach `a`, so a one-way cut is the real thing and a
//!   two-way cut is two of them. [`OUTSIDE`] stands for the test process and its clients: the
//!   route back is a blackhole in the test's namespace.
//! - a slow node gets an htb qdisc on its `eth0` with one low rate for everything it sends.
//!
//! [`Net::new`] returns `None` where namespaces cannot be made (not root, no `ip`): callers
//! then run on loopback without link faults and say so. Drop deletes every namespace, the
//! bridge and the routes (processes in the namespaces are the caller's to stop first).

use std::collections::BTreeSet;
use std::process::Command;
use std::sync::Mutex;

/// The id that stands for the test's own namespace (the test process and the Kafka client
/// tools it starts), as a peer of [`Net::cut`].
pub const OUTSIDE: i32 = 254;

pub struct Net {
    tag: String,
    subnet: u8,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    nodes: BTreeSet<i32>,
    cuts: BTreeSet<(i32, i32)>,
    slow: BTreeSet<i32>,
}

/// Runs `ip`/`tc` with `args`; the error text when it fails.
fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn must(program: &str, args: &[&str]) {
    if let Err(e) = run(program, args) {
        panic!("{e}");
    }
}

impl Net {
    /// A bridge for this test process, or `None` (with the reason printed) where network
    /// namespaces are not available.
    pub fn new() -> Option<Net> {
        let pid = std::process::id();
        let tag = format!("{}", pid % 100_000);
        // 10.<s>.0.0/24 with s from the pid, so that two test processes at once rarely share
        // a subnet (each has its own bridge and names, from the pid, either way).
        let subnet = 100 + (pid % 150) as u8;
        let net = Net {
            tag,
            subnet,
            state: Mutex::new(State::default()),
        };
        let bridge = net.bridge();
        let _ = run("ip", &["link", "del", &bridge]);
        let made = run("ip", &["link", "add", &bridge, "type", "bridge"])
            .and_then(|()| {
                run(
                    "ip",
                    &[
                        "addr",
                        "add",
                        &format!("{}/24", net.ip(OUTSIDE)),
                        "dev",
                        &bridge,
                    ],
                )
            })
            .and_then(|()| run("ip", &["link", "set", &bridge, "up"]));
        // A namespace with a veth into the bridge, made and removed, so that a machine that
        // can make bridges but not namespaces (or veths) falls back here, not half-way.
        let made = made.and_then(|()| {
            let probe = format!("fk{}probe", net.tag);
            let outer = format!("fk{}vp", net.tag);
            let _ = run("ip", &["netns", "del", &probe]);
            let r = run("ip", &["netns", "add", &probe]).and_then(|()| {
                run(
                    "ip",
                    &[
                        "link", "add", &outer, "type", "veth", "peer", "name", "eth0", "netns",
                        &probe,
                    ],
                )
            });
            let _ = run("ip", &["link", "del", &outer]);
            let _ = run("ip", &["netns", "del", &probe]);
            r
        });
        match made {
            Ok(()) => Some(net),
            Err(e) => {
                eprintln!("network namespaces are not available here ({e}): loopback only");
                let _ = run("ip", &["link", "del", &bridge]);
                None
            }
        }
    }

    fn bridge(&self) -> String {
        format!("fk{}br", self.tag)
    }

    /// The namespace of node `id`.
    pub fn ns(&self, id: i32) -> String {
        format!("fk{}n{id}", self.tag)
    }

    /// Node `id`'s address (or the test's own on the bridge, for [`OUTSIDE`]).
    pub fn ip(&self, id: i32) -> String {
        assert!((1..=254).contains(&id), "node id {id} has no address here");
        format!("10.{}.0.{id}", self.subnet)
    }

    /// Makes node `id`'s namespace and its link to the bridge (once; later calls are no-ops).
    pub fn add_node(&self, id: i32) {
        let mut st = self.state.lock().unwrap();
        if !st.nodes.insert(id) {
            return;
        }
        let ns = self.ns(id);
        let outer = format!("fk{}v{id}", self.tag);
        let _ = run("ip", &["netns", "del", &ns]);
        must("ip", &["netns", "add", &ns]);
        must(
            "ip",
            &[
                "link", "add", &outer, "type", "veth", "peer", "name", "eth0", "netns", &ns,
            ],
        );
        must(
            "ip",
            &["link", "set", &outer, "master", &self.bridge(), "up"],
        );
        let addr = format!("{}/24", self.ip(id));
        must("ip", &["-n", &ns, "addr", "add", &addr, "dev", "eth0"]);
        must("ip", &["-n", &ns, "link", "set", "eth0", "up"]);
        must("ip", &["-n", &ns, "link", "set", "lo", "up"]);
    }

    /// Drops what `from` sends to `to` (both node ids, or [`OUTSIDE`]).
    pub fn cut(&self, from: i32, to: i32) {
        let mut st = self.state.lock().unwrap();
        if from == to || st.cuts.contains(&(from, to)) {
            return;
        }
        let args = self.route_args("add", from, to);
        must("ip", &args.iter().map(String::as_str).collect::<Vec<_>>());
        st.cuts.insert((from, to));
    }

    /// Both ways between `a` and `b`.
    pub fn cut_both(&self, a: i32, b: i32) {
        self.cut(a, b);
        self.cut(b, a);
    }

    fn route_args(&self, verb: &str, from: i32, to: i32) -> Vec<String> {
        let mut args: Vec<String> = Vec::new();
        if from != OUTSIDE {
            args.extend(["-n".to_string(), self.ns(from)]);
        }
        args.extend([
            "route".to_string(),
            verb.to_string(),
            "blackhole".to_string(),
            format!("{}/32", self.ip(to)),
        ]);
        args
    }

    /// Every cut in place now, as (from, to).
    pub fn cuts(&self) -> Vec<(i32, i32)> {
        self.state.lock().unwrap().cuts.iter().copied().collect()
    }

    /// Limits everything node `id` sends to `kbit` kbit/s.
    pub fn slow(&self, id: i32, kbit: u32) {
        let mut st = self.state.lock().unwrap();
        if !st.slow.insert(id) {
            return;
        }
        let ns = self.ns(id);
        let rate = format!("{kbit}kbit");
        let tc = |args: &[&str]| {
            let mut full = vec!["netns", "exec", &ns, "tc"];
            full.extend(args);
            must("ip", &full);
        };
        tc(&[
            "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "1",
        ]);
        tc(&[
            "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:1", "htb", "rate", &rate,
            "burst", "4k",
        ]);
    }

    /// Takes back every cut and every slowed link.
    pub fn heal(&self) {
        let mut st = self.state.lock().unwrap();
        for (from, to) in std::mem::take(&mut st.cuts) {
            let args = self.route_args("del", from, to);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            must("ip", &args);
        }
        for id in std::mem::take(&mut st.slow) {
            must(
                "ip",
                &[
                    "netns",
                    "exec",
                    &self.ns(id),
                    "tc",
                    "qdisc",
                    "del",
                    "dev",
                    "eth0",
                    "root",
                ],
            );
        }
    }

    /// The command line prefix that runs a program in node `id`'s namespace.
    pub fn exec_prefix(&self, id: i32) -> Vec<String> {
        vec!["netns".into(), "exec".into(), self.ns(id)]
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        let st = std::mem::take(self.state.get_mut().unwrap_or_else(|e| e.into_inner()));
        for (from, to) in st.cuts {
            if from == OUTSIDE {
                let args = self.route_args("del", from, to);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let _ = run("ip", &args);
            }
        }
        for id in &st.nodes {
            let _ = run("ip", &["netns", "del", &self.ns(*id)]);
        }
        let _ = run("ip", &["link", "del", &self.bridge()]);
    }
}
