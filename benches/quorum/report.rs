//! Statistics and the Markdown report: every row shows ferrokraft's figure, Kafka's, and the
//! ratio ferrokraft / Kafka, with min / median / max where there are trials.

use super::phases::{LatencyRun, Stop};
use super::procs::{Kind, KAFKA_JVM_FLAGS};
use super::{Params, Results};

/// Min, median, p99 and max of a series.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spread {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub p99: f64,
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (all zero when empty).
    pub fn of(values: &[f64]) -> Spread {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return Spread::default();
        }
        v.sort_by(f64::total_cmp);
        let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        Spread {
            n: v.len(),
            min: v[0],
            median: at(0.5),
            p99: at(0.99),
            max: v[v.len() - 1],
        }
    }

    fn cell(&self, unit: &str) -> String {
        if self.n == 1 {
            return format!("{:.1} {unit}", self.median);
        }
        format!(
            "{:.1} / **{:.1}** / {:.1} {unit} (n={})",
            self.min, self.median, self.max, self.n
        )
    }
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 && a.is_finite() && b.is_finite() {
        format!("{:.3}", a / b)
    } else {
        "—".into()
    }
}

fn median_of(series: &[(Kind, Vec<f64>)], kind: Kind) -> Spread {
    series
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, v)| Spread::of(v))
        .unwrap_or_default()
}

fn row(out: &mut String, what: &str, f: Spread, k: Spread, unit: &str) {
    out.push_str(&format!(
        "| {what} | {} | {} | {} |\n",
        f.cell(unit),
        k.cell(unit),
        ratio(f.median, k.median)
    ));
}

fn rss_row(out: &mut String, what: &str, f: &[(u64, u64)], k: &[(u64, u64)]) {
    let max_rss = |v: &[(u64, u64)]| v.iter().map(|r| r.0).max().unwrap_or(0) as f64 / 1024.0;
    let max_hwm = |v: &[(u64, u64)]| v.iter().map(|r| r.1).max().unwrap_or(0) as f64 / 1024.0;
    out.push_str(&format!(
        "| {what} | {:.1} MiB (peak {:.1}) | {:.1} MiB (peak {:.1}) | {} |\n",
        max_rss(f),
        max_hwm(f),
        max_rss(k),
        max_hwm(k),
        ratio(max_rss(f), max_rss(k))
    ));
}

fn latency_rows(out: &mut String, runs: &[LatencyRun], p: &Params) {
    if runs.is_empty() {
        return;
    }
    let rate_label = |r: u64| {
        if r >= super::MAX_RATE {
            "unpaced (note)".to_string()
        } else {
            format!("{r}/s")
        }
    };
    out.push_str(
        "\n| rate, linger | impl | committed records/s | p50 ms | p75 ms | p99 ms | p99.9 ms | CPU s per 10⁶ records (3 voters) | leader RSS |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in runs {
        let records = r.records_per_sec(p.record_bytes);
        let cpu_per_million = if records > 0.0 {
            r.cpu_seconds / (records * r.seconds / 1e6)
        } else {
            f64::NAN
        };
        let rss = r.rss.iter().map(|x| x.0).max().unwrap_or(0) as f64 / 1024.0;
        out.push_str(&format!(
            "| {}, {} ms | {} | {:.0} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} MiB |\n",
            rate_label(r.rate),
            r.linger_ms,
            r.kind.label(),
            records,
            if r.summary.p50_ms.is_nan() {
                "—".to_string()
            } else {
                format!("{:.2}", r.summary.p50_ms)
            },
            r.summary.p75_ms,
            r.summary.p99_ms,
            r.summary.p999_ms,
            cpu_per_million,
            rss
        ));
    }
    out.push_str("\n| rate, linger | records/s ratio | p99 ratio | CPU per record ratio |\n|---|---|---|---|\n");
    for pair in runs.chunks(2) {
        let [f, k] = pair else { continue };
        let cpu = |r: &LatencyRun| r.cpu_seconds / (r.records_per_sec(p.record_bytes) * r.seconds);
        out.push_str(&format!(
            "| {}, {} ms | {} | {} | {} |\n",
            rate_label(f.rate),
            f.linger_ms,
            ratio(
                f.records_per_sec(p.record_bytes),
                k.records_per_sec(p.record_bytes)
            ),
            ratio(f.summary.p99_ms, k.summary.p99_ms),
            ratio(cpu(f), cpu(k))
        ));
    }
}

/// The report of one run.
pub fn markdown(r: &Results, p: &Params, kafka_version: &str, test_raft_version: &str) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "Kafka {kafka_version} controllers (`kafka.Kafka`), Kafka {test_raft_version} `TestRaftServer` for commit latency; JVM flags `{}`.\n\n",
        KAFKA_JVM_FLAGS.join(" ")
    ));
    out.push_str(&super::storage_measure::floors_table(
        &r.floors,
        &r.loopback_rtt,
    ));
    out.push_str("\n| measurement | ferrokraft min / **median** / max | Kafka min / **median** / max | ratio of medians |\n|---|---|---|---|\n");
    let idle = |k: Kind| {
        r.failover
            .idle_rss
            .iter()
            .find(|(kind, _)| *kind == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    // Phases left out with --only have no rows.
    if !r.failover.idle_rss.is_empty() {
        rss_row(
            &mut out,
            &format!(
                "RSS of a voter, 3 voters idle {} s (largest voter)",
                p.idle_secs
            ),
            &idle(Kind::Ferrokraft),
            &idle(Kind::KafkaController),
        );
    }
    if let (Some(f), Some(k)) = (
        r.latency
            .iter()
            .find(|l| l.kind == Kind::Ferrokraft && l.rate == 20_000),
        r.latency
            .iter()
            .find(|l| l.kind == Kind::KafkaTestRaft && l.rate == 20_000),
    ) {
        rss_row(
            &mut out,
            &format!(
                "RSS of a voter under 20k records/s × {} B, linger {} ms (TestRaftServer for Kafka)",
                p.record_bytes, f.linger_ms
            ),
            &f.rss,
            &k.rss,
        );
    }
    for (kind_f, kind_k) in [(Kind::Ferrokraft, Kind::KafkaController)] {
        let sizes: Vec<u64> = r
            .startup
            .series
            .iter()
            .filter(|(k, _, _)| *k == kind_f)
            .map(|(_, b, _)| *b)
            .collect();
        for bytes in sizes {
            let get = |kind: Kind, pick: fn(&super::phases::StartupTrial) -> f64| {
                r.startup
                    .series
                    .iter()
                    .find(|(k, b, _)| *k == kind && *b == bytes)
                    .map(|(_, _, t)| Spread::of(&t.iter().map(pick).collect::<Vec<_>>()))
                    .unwrap_or_default()
            };
            let log = if bytes == 0 {
                "empty log".to_string()
            } else {
                format!("{:.0} MB log", bytes as f64 / 1e6)
            };
            row(
                &mut out,
                &format!("start-up to ApiVersions, {log}"),
                get(kind_f, |t| t.api_versions_ms),
                get(kind_k, |t| t.api_versions_ms),
                "ms",
            );
            row(
                &mut out,
                &format!("start-up to DescribeQuorum (leader), {log}"),
                get(kind_f, |t| t.describe_quorum_ms),
                get(kind_k, |t| t.describe_quorum_ms),
                "ms",
            );
        }
    }
    let labels: Vec<String> = p.timer_sets.iter().map(|(l, _)| l.clone()).collect();
    for label in labels {
        for stop in [Stop::Kill, Stop::Term] {
            let series: Vec<(Kind, Vec<f64>)> = r
                .failover
                .series
                .iter()
                .filter(|(l, s, _, _)| *l == label && *s == stop)
                .map(|(_, _, k, v)| (*k, v.clone()))
                .collect();
            if series.is_empty() {
                continue;
            }
            let what = match stop {
                Stop::Kill => "failover (SIGKILL leader → new leader, HW moving)",
                Stop::Term => "graceful handover (SIGTERM leader → new leader, HW moving)",
            };
            let f = median_of(&series, Kind::Ferrokraft);
            let k = median_of(&series, Kind::KafkaController);
            out.push_str(&format!(
                "| {what}, {label} timers | {} (p99 {:.1}) | {} (p99 {:.1}) | {} |\n",
                f.cell("ms"),
                f.p99,
                k.cell("ms"),
                k.p99,
                ratio(f.median, k.median)
            ));
        }
    }
    for (results, what) in [
        (
            &r.catchup,
            "follower catch-up, empty voter fetching the log",
        ),
        (
            &r.snapshot,
            "snapshot transfer, empty voter fetching a snapshot",
        ),
    ] {
        transfer_rows(&mut out, results, what);
    }
    for (kind, n, secs) in &r.failover.spurious {
        out.push_str(&format!(
            "| spurious elections, idle, {} timers, {:.0} s | {} | | |\n",
            p.timer_sets.last().map(|(l, _)| l.as_str()).unwrap_or(""),
            secs,
            format_args!("{}: {n}", kind.label())
        ));
    }
    latency_rows(&mut out, &r.latency, p);
    if r.latency.iter().any(|l| l.rate >= super::MAX_RATE) {
        out.push_str(
            "\nUnpaced rows are a note, not a capacity: ferrokraft's workload is a closed loop \
             (at most 64 Ki records uncommitted), Kafka's TestRaftServer appends as fast as its \
             workload thread can and commits far less than at a paced rate. The sweep below is \
             the throughput comparison.\n",
        );
    }
    sweep_rows(&mut out, &r.sweep);
    out
}

/// The rate sweep: each implementation's highest sustained committed rate, then every step.
fn sweep_rows(out: &mut String, sweeps: &[super::sweep::Sweep]) {
    use super::sweep::{KEEP_UP, MAX_P99_MS};
    if sweeps.is_empty() {
        return;
    }
    let best = |k: Kind| {
        sweeps
            .iter()
            .find(|s| s.kind == k)
            .and_then(|s| s.highest_sustained())
    };
    out.push_str(&format!(
        "\nHighest sustained committed rate: the highest offered rate of the sweep at which the \
         commit-latency p99 stays under {MAX_P99_MS:.0} ms and the committed rate (from the \
         leader's high watermark) is at least {:.0} % of the offered rate; linger {} ms.\n\n\
         | measurement | ferrokraft | Kafka TestRaftServer | ratio |\n|---|---|---|---|\n",
        KEEP_UP * 100.0,
        sweeps.first().map_or(0, |s| s.linger_ms)
    ));
    let (f, k) = (best(Kind::Ferrokraft), best(Kind::KafkaTestRaft));
    let cell = |s: Option<&super::sweep::SweepStep>, v: fn(&super::sweep::SweepStep) -> f64| {
        s.map_or("none sustained".to_string(), |s| {
            let x = v(s);
            if x < 100.0 {
                format!("{x:.1}")
            } else {
                format!("{x:.0}")
            }
        })
    };
    let ratio_of = |v: fn(&super::sweep::SweepStep) -> f64| match (f, k) {
        (Some(a), Some(b)) => ratio(v(a), v(b)),
        _ => "—".into(),
    };
    for (what, v) in [
        (
            "highest sustained rate, offered (records/s)",
            (|s: &super::sweep::SweepStep| s.rate as f64) as fn(&super::sweep::SweepStep) -> f64,
        ),
        ("committed there (records/s)", |s| s.committed_per_sec),
        ("commit p99 there (ms)", |s| s.p99_ms),
    ] {
        out.push_str(&format!(
            "| {what} | {} | {} | {} |\n",
            cell(f, v),
            cell(k, v),
            ratio_of(v)
        ));
    }
    out.push_str("\n| sweep step | impl | committed records/s | p99 ms | sustained |\n|---|---|---|---|---|\n");
    for s in sweeps {
        for step in &s.steps {
            out.push_str(&format!(
                "| {}/s | {} | {:.0} | {:.1} | {} |\n",
                step.rate,
                s.kind.label(),
                step.committed_per_sec,
                step.p99_ms,
                if step.sustained {
                    "yes".to_string()
                } else {
                    format!("no: {}", step.note)
                }
            ));
        }
    }
}

/// MB/s and the receiver's peak RSS of catch-up trials (log or snapshot).
fn transfer_rows(out: &mut String, results: &super::catchup::CatchUpResults, what: &str) {
    if results.iter().all(|(_, trials)| trials.is_empty()) {
        return;
    }
    let spread = |k: Kind, f: fn(&super::catchup::CatchUpTrial) -> f64| {
        results
            .iter()
            .find(|(kind, _)| *kind == k)
            .map(|(_, t)| Spread::of(&t.iter().map(f).collect::<Vec<_>>()))
            .unwrap_or_default()
    };
    let fetched_mb = results
        .iter()
        .flat_map(|(_, t)| t.iter().map(|x| x.bytes as f64 / 1e6))
        .fold(0.0, f64::max);
    row(
        out,
        &format!("{what}, {fetched_mb:.0} MB"),
        spread(Kind::Ferrokraft, |t| t.mb_per_sec()),
        spread(Kind::KafkaController, |t| t.mb_per_sec()),
        "MB/s",
    );
    row(
        out,
        &format!("peak RSS of the receiver ({what})"),
        spread(Kind::Ferrokraft, |t| {
            t.follower_peak_rss_kib as f64 / 1024.0
        }),
        spread(Kind::KafkaController, |t| {
            t.follower_peak_rss_kib as f64 / 1024.0
        }),
        "MiB",
    );
}
