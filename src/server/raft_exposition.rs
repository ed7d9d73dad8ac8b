//! `kafka.server:type=raft-metrics` as Strimzi's JMX exporter rules render it
//! (`kafka_server_raftmetrics_<attribute>`, hyphens to underscores), plus ferrokraft's per-voter
//! lag. Reads a [`MetricsView`]; computes nothing.

use std::fmt::Error;

use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;

use super::exposition::{gauge, label, labelled};
use super::metrics::MetricsView;

/// Appends the raft series of `m`.
pub fn encode_raft(enc: &mut DescriptorEncoder, m: &MetricsView) -> Result<(), Error> {
    let p = "kafka_server_raftmetrics_";
    // Kafka's current-state is a string attribute; the rule makes it one series whose label
    // is the state and whose value is 1.
    labelled(
        enc,
        &format!("{p}current_state"),
        "The current state of this member; possible values are leader, prospective, prospective-voted, candidate, unattached-voted, follower, observer, unattached",
        MetricType::Gauge,
        &[(vec![label("current_state", m.current_state)], 1.0)],
    )?;
    let rows: [(&str, &str, f64); 17] = [
        ("current_leader", "The current quorum leader's id; -1 indicates unknown", f64::from(m.current_leader)),
        ("current_vote", "The current voted leader's id; -1 indicates not voted for anyone", f64::from(m.current_vote)),
        ("current_epoch", "The current quorum epoch.", f64::from(m.current_epoch)),
        ("high_watermark", "The high watermark maintained on this member; -1 if it is unknown", m.high_watermark as f64),
        ("log_end_offset", "The current raft log end offset.", m.log_end_offset as f64),
        ("log_end_epoch", "The current raft log end epoch.", f64::from(m.log_end_epoch)),
        ("number_unknown_voter_connections", "Number of unknown voters whose connection information is not cached; would never be larger than quorum-size.", m.unknown_voter_connections as f64),
        ("number_of_voters", "Number of voters for a KRaft topic partition.", m.number_of_voters as f64),
        ("number_of_observers", "Number of observers being tracked by the KRaft topic partition leader.", m.number_of_observers as f64),
        ("uncommitted_voter_change", "1 if there is a voter change that has not been committed, 0 otherwise.", f64::from(u8::from(m.uncommitted_voter_change))),
        ("commit_latency_avg", "The average time in milliseconds to commit an entry in the raft log.", m.commit_latency.0),
        ("commit_latency_max", "The maximum time in milliseconds to commit an entry in the raft log.", m.commit_latency.1),
        ("election_latency_avg", "The average time in milliseconds spent on electing a new leader.", m.election_latency.0),
        ("election_latency_max", "The maximum time in milliseconds spent on electing a new leader.", m.election_latency.1),
        ("fetch_records_rate", "The average number of records fetched from the leader of the raft quorum.", m.fetch_records_rate),
        ("append_records_rate", "The average number of records appended per sec by the leader of the raft quorum.", m.append_records_rate),
        ("poll_idle_ratio_avg", "The ratio of time the Raft IO thread is idle as opposed to doing work (e.g. handling requests or replicating from the leader)", m.poll_idle_ratio_avg),
    ];
    for (name, help, value) in rows {
        gauge(enc, &format!("{p}{name}"), help, value)?;
    }
    // kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent, a meter:
    // the `Percent…><>MeanRate` rule makes its mean rate `…avgidle_percent`; the generic
    // `<>Count` rule makes its count `…avgidlepercent_count` (typed gauge to keep that name).
    let pool = "kafka_server_kafkarequesthandlerpool_requesthandleravgidle";
    gauge(
        enc,
        &format!("{pool}_percent"),
        "Share of time the raft thread (Kafka: the request handler threads) was idle since it started",
        m.handler_idle_mean,
    )?;
    gauge(
        enc,
        &format!("{pool}percent_count"),
        "Nanoseconds the raft thread was idle since it started",
        m.handler_idle_ns as f64,
    )?;
    let lag = |f: fn(&super::metrics::VoterLag) -> i64| {
        m.voter_lag
            .iter()
            .map(|(id, l)| (vec![label("voter_id", id)], f(l) as f64))
            .collect::<Vec<_>>()
    };
    labelled(
        enc,
        "ferrokraft_raft_voter_lag_records",
        "Records each voter is behind the leader's log end offset (leader only).",
        MetricType::Gauge,
        &lag(|l| l.records),
    )?;
    labelled(
        enc,
        "ferrokraft_raft_voter_lag_ms",
        "Milliseconds since each voter was last caught up with the leader (leader only; -1 never).",
        MetricType::Gauge,
        &lag(|l| l.ms),
    )
}
