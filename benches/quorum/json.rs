//! The raw results as JSON (`--json FILE`): every trial, for plots (`benches/quorum/plot.py`)
//! and for comparing runs. The Markdown report holds the summaries.

use serde_json::{json, Value};

use super::catchup::CatchUpResults;
use super::phases::Stop;
use super::Results;

fn transfers(results: &CatchUpResults) -> Value {
    Value::Array(
        results
            .iter()
            .map(|(kind, trials)| {
                json!({
                    "kind": kind.label(),
                    "mb_per_sec": trials.iter().map(|t| t.mb_per_sec()).collect::<Vec<_>>(),
                    "bytes": trials.iter().map(|t| t.bytes).collect::<Vec<_>>(),
                    "receiver_peak_rss_kib":
                        trials.iter().map(|t| t.follower_peak_rss_kib).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// Every measured value of `r`.
pub fn results_json(r: &Results) -> Value {
    let startup: Vec<Value> = r
        .startup
        .series
        .iter()
        .map(|(kind, log_bytes, trials)| {
            json!({
                "kind": kind.label(),
                "log_bytes": log_bytes,
                "api_versions_ms": trials.iter().map(|t| t.api_versions_ms).collect::<Vec<_>>(),
                "describe_quorum_ms":
                    trials.iter().map(|t| t.describe_quorum_ms).collect::<Vec<_>>(),
            })
        })
        .collect();
    let failover: Vec<Value> = r
        .failover
        .series
        .iter()
        .map(|(timers, stop, kind, ms)| {
            json!({
                "timers": timers,
                "stop": match stop { Stop::Kill => "SIGKILL", Stop::Term => "SIGTERM" },
                "kind": kind.label(),
                "ms": ms,
            })
        })
        .collect();
    let latency: Vec<Value> = r
        .latency
        .iter()
        .map(|run| {
            // NaN (Kafka prints no p50) is not JSON: null.
            let num = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
            json!({
                "kind": run.kind.label(),
                "rate": run.rate,
                "linger_ms": run.linger_ms,
                "bytes_per_sec": num(run.summary.bytes_per_sec),
                "p50_ms": num(run.summary.p50_ms),
                "p75_ms": num(run.summary.p75_ms),
                "p99_ms": num(run.summary.p99_ms),
                "p999_ms": num(run.summary.p999_ms),
                "cpu_seconds": run.cpu_seconds,
                "seconds": run.seconds,
            })
        })
        .collect();
    json!({
        "startup": startup,
        "failover": failover,
        "idle_rss_kib": r.failover.idle_rss.iter().map(|(k, v)| json!({
            "kind": k.label(),
            "rss_kib": v.iter().map(|(rss, _)| rss).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "spurious": r.failover.spurious.iter().map(|(k, n, secs)| json!({
            "kind": k.label(), "elections": n, "seconds": secs,
        })).collect::<Vec<_>>(),
        "latency": latency,
        "sweep": r.sweep.iter().map(|s| json!({
            "kind": s.kind.label(),
            "linger_ms": s.linger_ms,
            "highest_sustained_rate": s.highest_sustained().map(|x| x.rate),
            "steps": s.steps.iter().map(|x| json!({
                "rate": x.rate,
                "committed_per_sec": if x.committed_per_sec.is_finite() {
                    json!(x.committed_per_sec)
                } else {
                    Value::Null
                },
                "p99_ms": if x.p99_ms.is_finite() { json!(x.p99_ms) } else { Value::Null },
                "sustained": x.sustained,
                "note": x.note,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "catchup": transfers(&r.catchup),
        "snapshot": transfers(&r.snapshot),
    })
}
