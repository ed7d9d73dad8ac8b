//! The quorum and cluster tools of the differential script (#20), with brokers present:
//! `kafka-metadata-quorum describe` through a broker (which forwards DescribeQuorum to the
//! controller in an Envelope) and through the controller, where both brokers show as
//! observers; `kafka-cluster cluster-id` and `list-endpoints` (with and without
//! `--include-fenced-brokers`); `kafka-configs --describe` of the controller's own broker
//! resource and of the cluster defaults through the controller listener. Values that depend
//! on timing (epochs, offsets, lags, times) are recorded as `N`.

use std::time::{Duration, Instant};

use super::{Run, Step};
use crate::support::clients::config_command;

const QUORUM: &str = "org.apache.kafka.tools.MetadataQuorumCommand";
const CLUSTER: &str = "org.apache.kafka.tools.ClusterTool";

impl Run<'_> {
    fn controller(&self) -> String {
        format!("127.0.0.1:{}", self.c.nodes[0].port)
    }

    /// A tool through the brokers (`--bootstrap-server`) or the controller
    /// (`--bootstrap-controller`); kafka-cluster takes the option after its subcommand.
    fn cluster_tool(&self, what: &str, class: &str, via_controller: bool, args: &[&str]) -> Step {
        let (option, bootstrap) = if via_controller {
            ("--bootstrap-controller", self.controller())
        } else {
            ("--bootstrap-server", self.bootstrap.clone())
        };
        let out = if class == CLUSTER {
            // ClusterTool's `--config` goes after the subcommand too.
            let config = self.c.admin_config();
            let mut full = vec![args[0], option, bootstrap.as_str(), "--config", &config];
            full.extend_from_slice(&args[1..]);
            let name: String = what
                .chars()
                .map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '-' })
                .collect();
            super::kafka()
                .client_tool(&self.c.art, &name, class, &full, Duration::from_secs(90))
                .unwrap_or_else(|| panic!("{what}: the tool timed out"))
        } else {
            self.tool_via(what, class, option, &bootstrap, args)
        };
        let stderr = out
            .stderr
            .lines()
            .filter(|l| !l.contains(" WARN ") && !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        Step {
            what: what.to_string(),
            exit: out.status.code(),
            stdout: out.stdout,
            stderr,
        }
    }

    /// Records `step` with its stdout passed through `shape`, after the run-specific values
    /// these tools print that the script's other tools do not were named: the cluster id,
    /// ports printed as a column, the brokers' directory ids (named as the image's
    /// normalisation names them).
    fn record_shaped(&mut self, mut step: Step, shape: fn(&str) -> String) {
        let mut text = step.stdout.replace(&self.c.cluster_id, "<cluster id>");
        let controller = (self.c.nodes[0].port, "controller".to_string());
        for (port, name) in broker_ports(self).into_iter().chain([controller]) {
            text = text.replace(&format!(" {port} "), &format!(" <port of {name}> "));
        }
        for (id, dir) in broker_dirs(self) {
            text = text.replace(&dir, &format!("<dir 0 of broker {id}>"));
        }
        step.stdout = shape(&text);
        self.log(&format!("{}: exit {:?}", step.what, step.exit));
        self.steps.push(step);
    }
}

/// Each broker's (client port, `broker <id>`), from its properties.
fn broker_ports(run: &Run<'_>) -> Vec<(u16, String)> {
    super::BROKERS
        .iter()
        .filter_map(|id| {
            let props = std::fs::read_to_string(run.c.art.path(&format!("broker{id}.properties")));
            let port = props
                .ok()?
                .lines()
                .find_map(|l| l.strip_prefix("listeners=PLAINTEXT://127.0.0.1:"))?
                .trim()
                .parse()
                .ok()?;
            Some((port, format!("broker {id}")))
        })
        .collect()
}

/// Each broker's (id, directory id), from its meta.properties.
fn broker_dirs(run: &Run<'_>) -> Vec<(i32, String)> {
    super::BROKERS
        .iter()
        .filter_map(|id| {
            let meta = run
                .c
                .art
                .path(&format!("broker{id}"))
                .join("meta.properties");
            let text = std::fs::read_to_string(meta).ok()?;
            let dir = text.lines().find_map(|l| l.strip_prefix("directory.id="))?;
            Some((*id, dir.trim().to_string()))
        })
        .collect()
}

/// A `describe` step: its name, whether through the controller, the arguments and the shape.
type Describe = (
    &'static str,
    bool,
    &'static [&'static str],
    fn(&str) -> String,
);

/// Each tool once, both brokers up and unfenced. (`tests/tool_parity.rs` runs the controller
/// side of `kafka-cluster` and `kafka-features` on three-voter quorums.)
pub(crate) fn script(run: &mut Run<'_>) {
    let describe: [Describe; 4] = [
        (
            "status via the brokers",
            false,
            &["describe", "--status"],
            status_shape,
        ),
        (
            "replication via the brokers",
            false,
            &["describe", "--replication"],
            replication_shape,
        ),
        (
            "status via the controller",
            true,
            &["describe", "--status"],
            status_shape,
        ),
        (
            "replication (human-readable) via the controller",
            true,
            &["describe", "--re", "--hu"],
            replication_shape,
        ),
    ];
    for (name, via_controller, args, shape) in describe {
        let what = format!("kafka-metadata-quorum describe {name}");
        let step = run.cluster_tool(&what, QUORUM, via_controller, args);
        run.record_shaped(step, shape);
    }
    for (args, via_controller) in [
        (&["cluster-id"][..], false),
        (&["list-endpoints"][..], false),
        (&["list-endpoints", "--include-fenced-brokers"][..], false),
        // Refused by the tool itself (only with --bootstrap-server).
        (&["list-endpoints", "--include-fenced-brokers"][..], true),
    ] {
        let via = if via_controller {
            "controller"
        } else {
            "brokers"
        };
        let what = format!("kafka-cluster {} via the {via}", args.join(" "));
        let step = run.cluster_tool(&what, CLUSTER, via_controller, args);
        run.record_shaped(step, str::to_string);
    }
}

/// `kafka-configs --describe` through the controller listener, after the script's config
/// changes: the controller's own broker resource and the cluster-wide broker defaults.
pub(crate) fn configs(run: &mut Run<'_>) {
    for (what, args) in [
        (
            "kafka-configs describe of the controller's broker resource",
            &[
                "--describe",
                "--entity-type",
                "brokers",
                "--entity-name",
                "1",
            ][..],
        ),
        (
            "kafka-configs describe of the broker defaults via the controller",
            &["--describe", "--entity-type", "brokers", "--entity-default"][..],
        ),
    ] {
        let step = run.cluster_tool(what, config_command(), true, args);
        run.record_shaped(step, str::to_string);
    }
}

/// Broker `id` is shut down: `list-endpoints --include-fenced-brokers` through the other
/// broker once it shows `id` fenced (the controller fences it when its session ends), and
/// without the option (it is not listed).
pub(crate) fn fenced(run: &mut Run<'_>, id: i32) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let what = format!("kafka-cluster list-endpoints --include-fenced-brokers with {id} down");
    loop {
        let step = run.cluster_tool(
            &what,
            CLUSTER,
            false,
            &["list-endpoints", "--include-fenced-brokers"],
        );
        let fenced = step
            .stdout
            .lines()
            .any(|l| l.starts_with(&format!("{id} ")) && l.contains(" fenced "));
        if fenced {
            run.record_shaped(step, str::to_string);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: broker {id} not fenced within 60 s:\n{}",
            step.stdout
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let what = format!("kafka-cluster list-endpoints with {id} down");
    let step = run.cluster_tool(&what, CLUSTER, false, &["list-endpoints"]);
    run.record_shaped(step, str::to_string);
}

/// `describe --status`: epochs, offsets and lags become `N`; the observers sorted (Kafka
/// lists them in the order of a hash map keyed by random directory ids).
fn status_shape(text: &str) -> String {
    const TIMING: [&str; 4] = [
        "LeaderEpoch:",
        "HighWatermark:",
        "MaxFollowerLag:",
        "MaxFollowerLagTimeMs:",
    ];
    text.lines()
        .map(|l| match TIMING.iter().find(|t| l.starts_with(*t)) {
            Some(t) => format!("{t} N\n"),
            None => format!("{}\n", sorted_observers(l)),
        })
        .collect()
}

/// `describe --replication` (also human-readable): the header, then each row's NodeId,
/// DirectoryId and Status (its offsets, lags and times are timing), sorted.
fn replication_shape(text: &str) -> String {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines.next().unwrap_or_default();
    let mut rows: Vec<String> = lines
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').map(str::trim).collect();
            let at = |i: usize| cols.get(i).copied().unwrap_or_default();
            format!(
                "{}\t{}\tN\t{}\n",
                at(0),
                at(1),
                cols.last().copied().unwrap_or_default()
            )
        })
        .collect();
    rows.sort();
    format!("{header}\n{}", rows.concat())
}

/// A `CurrentObservers: [{…}, {…}]` line with its entries sorted; any other line as it is.
fn sorted_observers(line: &str) -> String {
    let (Some(i), Some(j)) = (line.find("[{"), line.rfind("}]")) else {
        return line.to_string();
    };
    if !line.starts_with("CurrentObservers:") {
        return line.to_string();
    }
    let mut items: Vec<&str> = line[i + 2..j].split("}, {").collect();
    items.sort();
    format!(
        "{}{{{}}}{}",
        &line[..=i],
        items.join("}, {"),
        &line[j + 1..]
    )
}
