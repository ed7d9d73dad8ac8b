//! The Markdown report: one table per measurement, ferrokraft and Kafka side by side with
//! their ratio (ferrokraft / Kafka: below 1 is better for times and memory, above 1 for
//! rates).

use std::fmt::Write as _;

use super::failover::FailoverRun;
use super::heartbeats::HeartbeatRun;
use super::phases::SizeRun;
use super::procs::Kind;
use super::propagation::median;
use super::{Params, Results};

/// fk / kafka; "–" when it means nothing (Kafka's figure 0, or a signed time at or below 0).
fn ratio(fk: f64, kafka: f64) -> String {
    if kafka > f64::EPSILON && fk >= 0.0 && fk.is_finite() && kafka.is_finite() {
        format!("{:.3}", fk / kafka)
    } else {
        "–".into()
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn pair<T>(
    runs: &[T],
    kind: impl Fn(&T) -> Kind,
    key: impl Fn(&T) -> bool,
) -> (Option<&T>, Option<&T>) {
    let fk = runs.iter().find(|r| kind(r) == Kind::Ferrokraft && key(r));
    let kafka = runs
        .iter()
        .find(|r| kind(r) == Kind::KafkaController && key(r));
    (fk, kafka)
}

/// One row: a label, ferrokraft's and Kafka's figure, their ratio.
fn row(out: &mut String, label: &str, unit: &str, fk: Option<f64>, kafka: Option<f64>) {
    let cell = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.1}"));
    let r = match (fk, kafka) {
        (Some(a), Some(b)) => ratio(a, b),
        _ => "–".into(),
    };
    let _ = writeln!(
        out,
        "| {label} ({unit}) | {} | {} | {r} |",
        cell(fk),
        cell(kafka)
    );
}

/// The report of `r`.
pub fn markdown(r: &Results, p: &Params, kafka_version: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Controller benchmark: ferrokraft and Apache Kafka {kafka_version}\n\n\
         Single-voter controllers; fake brokers (3 per 10k partitions, up to 300) register and \
         heartbeat every 2 s; topics of {} partitions, RF 3, {} topics a request, {} requests \
         in flight, append linger {}. Kafka heap {}. Every time is read from the committed \
         log (the high watermark passing the last record needed). Ratio: ferrokraft / Kafka.\n",
        p.partitions_per_topic,
        p.topics_per_request,
        p.in_flight,
        p.linger_ms
            .map_or("25 ms (Kafka's default)".to_string(), |l| format!("{l} ms")),
        p.kafka_heap
    );
    let _ = writeln!(
        out,
        "The machine's floors, measured first in the same run:\n\n{}",
        super::storage_measure::floors_table(&r.floors, &r.loopback_rtt)
    );
    let mut sizes: Vec<usize> = r.sizes.iter().map(|s| s.partitions).collect();
    sizes.dedup();
    for size in sizes {
        let (fk, kafka) = pair(&r.sizes, |s: &SizeRun| s.kind, |s| s.partitions == size);
        let brokers = fk.or(kafka).map_or(0, |s| s.brokers);
        let _ = writeln!(
            out,
            "## {size} partitions, {brokers} brokers\n\n\
             | Measurement | ferrokraft | Kafka | ratio |\n|---|---|---|---|"
        );
        let f = |g: &dyn Fn(&SizeRun) -> f64| (fk.map(g), kafka.map(g));
        let (a, b) = f(&|s| s.create.rate());
        row(&mut out, "1. CreateTopics, committed", "partitions/s", a, b);
        let (a, b) = f(&|s| s.create.seconds);
        row(&mut out, "1. CreateTopics, all committed", "s", a, b);
        let (a, b) = f(&|s| s.fence.fence_ms);
        row(
            &mut out,
            "2. broker dies: session expiry to fenced",
            "ms",
            a,
            b,
        );
        let (a, b) = f(&|s| s.fence.moved_ms);
        row(
            &mut out,
            "2. broker dies: expiry to last leader move",
            "ms",
            a,
            b,
        );
        let (a, b) = f(&|s| s.fence.leaders_moved as f64);
        row(&mut out, "2. leaderships it had", "partitions", a, b);
        let (a, b) = f(&|s| s.shutdown.moved_ms);
        row(
            &mut out,
            "3. controlled shutdown: request to last move",
            "ms",
            a,
            b,
        );
        let (a, b) = f(&|s| s.shutdown.should_shut_down_ms);
        row(
            &mut out,
            "3. controlled shutdown: request to shouldShutDown",
            "ms",
            a,
            b,
        );
        let (a, b) = f(&|s| s.shutdown.led as f64);
        row(&mut out, "3. leaderships it had", "partitions", a, b);
        let (a, b) = f(&|s| s.cold_start.from_log_ms);
        row(
            &mut out,
            "5. cold start on the whole log: exec to serving",
            "ms",
            a,
            b,
        );
        let (a, b) = f(&|s| s.cold_start.from_snapshot_ms);
        row(
            &mut out,
            "5. cold start on a snapshot: exec to serving",
            "ms",
            a,
            b,
        );
        let (a, b) = f(&|s| s.cold_start.snapshot_write_ms);
        row(
            &mut out,
            "5. snapshot write: its last record committed to .checkpoint in place",
            "ms",
            a,
            b,
        );
        let (a, b) = f(&|s| s.cold_start.snapshot_bytes as f64 / 1024.0);
        row(&mut out, "5. snapshot size", "KiB", a, b);
        let (a, b) = f(&|s| mib(s.cold_start.rss_kib));
        row(&mut out, "5. RSS serving from the snapshot", "MiB", a, b);
        let observers = fk.or(kafka).map_or(0, |s| s.propagation.observers);
        let (a, b) = f(&|s| s.propagation.medians().0);
        row(
            &mut out,
            &format!(
                "7. propagation: CreateTopics answer to {observers} observers fetched it, median"
            ),
            "ms",
            a,
            b,
        );
        let (a, b) = f(&|s| s.propagation.medians().1);
        row(
            &mut out,
            &format!(
                "7. propagation: CreateTopics answer to {observers} observers saw it committed, median"
            ),
            "ms",
            a,
            b,
        );
        let (a, b) = f(&|s| mib(s.rss_idle_kib));
        row(&mut out, "RSS idle", "MiB", a, b);
        let (a, b) = f(&|s| mib(s.rss_created_kib));
        row(&mut out, "RSS with the partitions", "MiB", a, b);
        let (a, b) = f(&|s| mib(s.rss_end_kib));
        row(&mut out, "RSS at the end", "MiB", a, b);
        let (a, b) = f(&|s| s.spurious_fencings as f64);
        row(&mut out, "spurious fencings (must be 0)", "brokers", a, b);
        out.push('\n');
        per_record(&mut out, fk, kafka, &r.floors);
        for s in r.stopped.iter().filter(|s| s.partitions == size) {
            let _ = writeln!(
                out,
                "**{} stopped at {size} partitions** (heap {}): {}\n",
                s.kind.label(),
                s.heap,
                s.why
            );
        }
    }
    failover_tables(&mut out, &r.failovers);
    let mut counts: Vec<usize> = r.heartbeats.iter().map(|h| h.brokers).collect();
    counts.dedup();
    for brokers in counts {
        let (fk, kafka) = pair(
            &r.heartbeats,
            |h: &HeartbeatRun| h.kind,
            |h| h.brokers == brokers,
        );
        let secs = fk.or(kafka).map_or(0, |h| h.seconds);
        let _ = writeln!(
            out,
            "## 6. {brokers} brokers heartbeating every 2 s for {secs} s\n\n\
             | Measurement | ferrokraft | Kafka | ratio |\n|---|---|---|---|"
        );
        let f = |g: &dyn Fn(&HeartbeatRun) -> f64| (fk.map(g), kafka.map(g));
        let (a, b) = f(&|h| h.heartbeats as f64);
        row(&mut out, "heartbeats answered", "count", a, b);
        let (a, b) = f(&|h| h.p50_ms);
        row(&mut out, "reply p50", "ms", a, b);
        let (a, b) = f(&|h| h.p99_ms);
        row(&mut out, "reply p99", "ms", a, b);
        let (a, b) = f(&|h| h.max_ms);
        row(&mut out, "reply max", "ms", a, b);
        let (a, b) = f(&|h| h.cpu_seconds);
        row(&mut out, "controller CPU", "s", a, b);
        let (a, b) = f(&|h| mib(h.rss_kib));
        row(&mut out, "RSS", "MiB", a, b);
        let (a, b) = f(&|h| h.spurious_fencings as f64);
        row(&mut out, "spurious fencings (must be 0)", "brokers", a, b);
        out.push('\n');
    }
    metrics_cost_table(&mut out, &r.metrics_cost, p.scrape_secs);
    out
}

/// The metrics' cost (#39): ferrokraft's heartbeat runs with the metrics listener off and on,
/// a pair at a time side by side in one window, then per pair the CPU per heartbeat answered with the listener on over the
/// one with it off, and the mean of those pair differences with its 95 % confidence interval.
fn metrics_cost_table(out: &mut String, runs: &[HeartbeatRun], scrape_secs: u64) {
    let mut counts: Vec<usize> = runs.iter().map(|h| h.brokers).collect();
    counts.dedup();
    for brokers in counts {
        let these: Vec<&HeartbeatRun> = runs.iter().filter(|h| h.brokers == brokers).collect();
        let secs = these.first().map_or(0, |h| h.seconds);
        let _ = writeln!(
            out,
            "## 6b. Metrics cost: ferrokraft, {brokers} brokers heartbeating for {secs} s, \
             metrics listener off and on side by side (scraped every {} s), in pairs\n\n\
             | Run | metrics | heartbeats answered | reply p99 (ms) | controller CPU (s) | \
             CPU per heartbeat (µs) | scrapes | bytes per scrape |\n|---|---|---|---|---|---|---|---|",
            scrape_secs
        );
        for (i, h) in these.iter().enumerate() {
            let (on, scrapes, per) = match h.scrapes {
                Some((n, bytes)) => ("on", n.to_string(), (bytes / n.max(1)).to_string()),
                None => ("off", "–".into(), "–".into()),
            };
            let _ = writeln!(
                out,
                "| {} | {on} | {} | {:.1} | {:.2} | {:.2} | {scrapes} | {per} |",
                i + 1,
                h.heartbeats,
                h.p99_ms,
                h.cpu_seconds,
                cpu_per_heartbeat_us(h),
            );
        }
        // Each pair is two consecutive runs, measured in one window: one off, one on.
        let shares: Vec<f64> = these
            .chunks(2)
            .filter_map(|pair| {
                let off = pair.iter().find(|h| h.scrapes.is_none())?;
                let on = pair.iter().find(|h| h.scrapes.is_some())?;
                let off_us = cpu_per_heartbeat_us(off);
                (off_us > 0.0).then(|| (cpu_per_heartbeat_us(on) / off_us - 1.0) * 100.0)
            })
            .collect();
        if shares.is_empty() {
            continue;
        }
        let listed: Vec<String> = shares.iter().map(|s| format!("{s:+.1} %")).collect();
        let (mean, half_width) = mean_and_ci95(&shares);
        let interval = if half_width.is_finite() {
            format!(
                ", 95 % confidence interval {:+.2} % to {:+.2} %",
                mean - half_width,
                mean + half_width
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "\nCPU per heartbeat, on over off, per pair: {}.\n\
             Mean over {} pairs: {mean:+.2} %{interval}.\n",
            listed.join(", "),
            shares.len(),
        );
    }
}

/// The controller's CPU per heartbeat answered in the measured window, in µs.
fn cpu_per_heartbeat_us(h: &HeartbeatRun) -> f64 {
    if h.heartbeats == 0 {
        return 0.0;
    }
    h.cpu_seconds * 1e6 / h.heartbeats as f64
}

/// The mean of `xs` and the half-width of its 95 % confidence interval (Student's t with
/// n − 1 degrees of freedom; infinite for one value).
fn mean_and_ci95(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, f64::INFINITY);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, t_975(n - 1) * (var / n as f64).sqrt())
}

/// Student's t 0.975 quantile for `df` degrees of freedom (a table; beyond 30, the normal's).
fn t_975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    T.get(df.wrapping_sub(1)).copied().unwrap_or(1.960)
}

/// Measurement 4, one table per size.
fn failover_tables(out: &mut String, runs: &[FailoverRun]) {
    let mut sizes: Vec<usize> = runs.iter().map(|f| f.partitions).collect();
    sizes.dedup();
    for size in sizes {
        let (fk, kafka) = pair(runs, |f: &FailoverRun| f.kind, |f| f.partitions == size);
        let brokers = fk.or(kafka).map_or(0, |f| f.brokers);
        let _ = writeln!(
            out,
            "## 4. Active-controller failover: 3 voters, {size} partitions, {brokers} brokers, \
             SIGKILL of the leader\n\n\
             | Measurement | ferrokraft | Kafka | ratio |\n|---|---|---|---|"
        );
        let f = |g: &dyn Fn(&FailoverRun) -> f64| (fk.map(g), kafka.map(g));
        let trials = fk.or(kafka).map_or(0, |f| f.to_create_ms.len());
        let (a, b) = f(&|f| median(&f.to_create_ms));
        row(
            out,
            &format!("SIGKILL to a CreateTopics answered, median of {trials}"),
            "ms",
            a,
            b,
        );
        let (a, b) = f(&|f| median(&f.to_epoch_committed_ms));
        row(
            out,
            &format!("SIGKILL to the new epoch's first record committed, median of {trials}"),
            "ms",
            a,
            b,
        );
        let (a, b) = f(&|f| median(&f.to_fleet_ms));
        row(
            out,
            &format!(
                "SIGKILL to every broker heartbeating with the new leader, median of {trials}"
            ),
            "ms",
            a,
            b,
        );
        let (a, b) = f(&|f| f.spurious_fencings as f64);
        row(out, "brokers fenced (must be 0)", "brokers", a, b);
        out.push('\n');
    }
}

/// Each measurement per record, beside what the machine's floors allow for the same bytes
/// (#41): the distance to the floor is the room left.
fn per_record(
    out: &mut String,
    fk: Option<&SizeRun>,
    kafka: Option<&SizeRun>,
    floors: &super::storage_measure::Floors,
) {
    let Some(any) = fk.or(kafka) else {
        return;
    };
    let partitions = any.partitions.max(1) as f64;
    // A partition's share of the snapshot: the bytes a controller must at least encode,
    // copy and write for it.
    let record_bytes = any.cold_start.snapshot_bytes as f64 / partitions;
    let floor_us = |mb_s: f64| {
        if mb_s > 0.0 {
            record_bytes / mb_s
        } else {
            f64::NAN
        }
    };
    let _ = writeln!(
        out,
        "Per record ({record_bytes:.0} bytes of snapshot a partition; its memcpy floor \
         {:.3} µs, its sequential-write floor {:.3} µs, one 4 KiB fsync p50 {:.0} µs):\n\n\
         | Cost | ferrokraft | Kafka | ratio |\n|---|---|---|---|",
        floor_us(floors.memcpy_mb_s),
        floor_us(floors.seq_write_mb_s),
        floors.fsync_4k.p50.as_secs_f64() * 1e6,
    );
    let f = |g: &dyn Fn(&SizeRun) -> f64| (fk.map(g), kafka.map(g));
    let per = |ms: f64, n: usize| {
        if n == 0 {
            f64::NAN
        } else {
            ms * 1000.0 / n as f64
        }
    };
    let (a, b) = f(&|s| s.create.seconds * 1e6 / s.create.partitions.max(1) as f64);
    row(out, "1. CreateTopics per partition committed", "µs", a, b);
    let (a, b) = f(&|s| per(s.fence.moved_ms, s.fence.leaders_moved));
    row(out, "2. broker dies per leadership moved", "µs", a, b);
    let (a, b) = f(&|s| per(s.shutdown.moved_ms, s.shutdown.led));
    row(
        out,
        "3. controlled shutdown per leadership moved",
        "µs",
        a,
        b,
    );
    let (a, b) = f(&|s| s.cold_start.from_snapshot_ms * 1000.0 / s.partitions.max(1) as f64);
    row(out, "5. cold start on a snapshot per partition", "µs", a, b);
    let (a, b) = f(&|s| {
        s.rss_created_kib.saturating_sub(s.rss_idle_kib) as f64 * 1024.0
            / s.partitions.max(1) as f64
    });
    row(
        out,
        "RSS the partitions added, per partition",
        "bytes",
        a,
        b,
    );
    let (a, b) = f(&|s| s.cold_start.rss_kib as f64 * 1024.0 / s.partitions.max(1) as f64);
    row(
        out,
        "RSS serving from the snapshot, per partition",
        "bytes",
        a,
        b,
    );
    out.push('\n');
}
