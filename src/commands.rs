//! The verbs behind the command line. Errors are `anyhow` here only: each becomes one line on
//! stderr and exit code 1.

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use ferrokraft::cli::{DumpArgs, FormatArgs, InfoArgs, StartArgs};
use ferrokraft::config::{self, environment, Config};
use std::sync::Arc;

use ferrokraft::common::uuid::{random_kafka_uuid, uuid_to_kafka_string};
use ferrokraft::launch;
use ferrokraft::network::http;
use ferrokraft::network::peers::PeerConfig;
use ferrokraft::node::snapshot_policy::{MetadataLogSettings, Retention};
use ferrokraft::server::driver::{self, Event};
use ferrokraft::server::metrics::MetricsSource;
use ferrokraft::server::workload::Workload;
use ferrokraft::server::Handler;
use ferrokraft::tools::format::{self, DynamicVoter, FormatMode, FormatRequest, ListenerEndpoint};

/// Properties of the development quorum `ferrokraft start` runs without a file.
fn development_properties() -> config::Properties {
    [
        ("process.roles", "controller"),
        ("node.id", "1"),
        ("controller.quorum.voters", "1@127.0.0.1:9093"),
        ("listeners", "CONTROLLER://127.0.0.1:9093"),
        ("controller.listener.names", "CONTROLLER"),
        ("log.dirs", "ferrokraft-data"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// How a start without a properties file formats its directory the first time.
enum FirstStart {
    /// The development quorum: a random cluster id, announced.
    Development,
    /// The apache/kafka image's way: `CLUSTER_ID` (or the image's default).
    Environment { cluster_id: String },
}

/// Formats the directories of a start without a properties file when none holds a
/// `meta.properties` yet (static voters, as `kafka-storage format -t <id>` would). Run after
/// every socket is bound, so a start refused for a taken port writes nothing.
fn format_on_first_start(config: &Config, first: FirstStart) -> Result<()> {
    let mut dirs = config.log_dirs.clone();
    dirs.push(config.metadata_log_dir.clone());
    if let Some(formatted) = dirs.iter().find(|d| d.join("meta.properties").exists()) {
        if matches!(first, FirstStart::Environment { .. }) {
            tracing::info!(
                "Log directory {} is already formatted: starting without formatting",
                formatted.display()
            );
        }
        return Ok(());
    }
    let (cluster_id, announce) = match first {
        FirstStart::Development => (uuid_to_kafka_string(&random_kafka_uuid()), true),
        FirstStart::Environment { cluster_id } => (cluster_id, false),
    };
    if config.quorum_voters.is_empty() {
        // What `kafka-storage format` answers the image's launch for a dynamic quorum.
        anyhow::bail!(
            "Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers."
        );
    }
    let report = format::format(&FormatRequest {
        node_id: config.node_id,
        log_dirs: config.log_dirs.clone(),
        metadata_log_dir: Some(config.metadata_log_dir.clone()),
        cluster_id: cluster_id.clone(),
        mode: FormatMode::StaticVoters,
        release_version: None,
        kafka_release: config.kafka_release.unwrap_or_default(),
        feature_overrides: Vec::new(),
        ignore_formatted: false,
        scram_arguments: Vec::new(),
        now_unix_ms: now_unix_ms(),
    })?;
    for line in report.lines {
        tracing::info!("{line}");
    }
    if announce {
        tracing::info!(
            "Formatted a development quorum with cluster id {} (brokers joining it need it in their meta.properties)",
            cluster_id
        );
    }
    Ok(())
}

/// The development node's configuration: its properties with the `--override`s applied,
/// read as a file's are (providers resolved, unknown keys warned about).
fn development_config(overrides: &[String]) -> Result<Config> {
    let mut props = development_properties();
    config::apply_overrides(&mut props, overrides)?;
    Ok(Config::from_raw_properties(&props)?)
}

/// The process's environment (variables that are not UTF-8 cannot name a Kafka key and are
/// left out).
fn process_environment() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// The configuration of a start without a properties file: the apache/kafka image's
/// environment when `KAFKA_PROCESS_ROLES` is set, else the development quorum.
fn configuration_without_file(args: &StartArgs) -> Result<(Config, FirstStart)> {
    let env = process_environment();
    if !environment::requested(&env) {
        return Ok((
            development_config(&args.overrides)?,
            FirstStart::Development,
        ));
    }
    let from_env = environment::from_environment(&env, &args.mounted_configs_dir)?;
    if from_env.default_cluster_id {
        tracing::info!(
            "CLUSTER_ID not set. Setting it to default value: \"{}\"",
            from_env.cluster_id
        );
    }
    if from_env.mounted_file {
        tracing::info!(
            "Configuration from {} and the KAFKA_* environment variables",
            args.mounted_configs_dir.join("server.properties").display()
        );
    } else {
        tracing::info!("Configuration from the KAFKA_* environment variables");
    }
    let mut props = from_env.properties;
    config::apply_overrides(&mut props, &args.overrides)?;
    let config = Config::from_raw_properties(&props)?;
    Ok((
        config,
        FirstStart::Environment {
            cluster_id: from_env.cluster_id,
        },
    ))
}

/// Bound on a graceful shutdown, as Kafka's raft driver (`client.shutdown(5000)`).
const SHUTDOWN_TIMEOUT_MS: u64 = 5000;

pub fn start(args: StartArgs) -> Result<()> {
    let (config, first_start) = match args.config_path() {
        Some(path) => (Config::load(path, &args.overrides)?, None),
        None => {
            let (config, first) = configuration_without_file(&args)?;
            (config, Some(first))
        }
    };
    ferrokraft::logging::set_node_id(config.node_id);
    let now = now_unix_ms() as u64;
    let seed = now ^ (u64::from(std::process::id()) << 32);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let workload = Workload {
        records_per_sec: args.workload_records_per_sec,
        record_bytes: args.workload_record_bytes,
    };
    let node_id = config.node_id;
    let result = runtime.block_on(async move {
        let stop_signals = install_stop_signals();
        // Every socket bound and every store opened before the log directory is touched: a
        // start that fails here leaves the directory as it was.
        let bound = launch::bind(&config).await?;
        // Without a metrics listener nothing reads the request metrics: none are kept.
        let net_stats = Arc::new(match config.metrics_listener {
            Some(_) => ferrokraft::network::stats::NetStats::default(),
            None => ferrokraft::network::stats::NetStats::without_request_metrics(),
        });
        let peer_config = PeerConfig {
            client_id: format!("raft-client-{node_id}"),
            request_timeout_ms: config.quorum_request_timeout_ms,
            tls: launch::peer_tls(&config)?,
            sasl: config.sasl_client.clone(),
            channel: Some(net_stats.raft_channel.clone()),
        };
        let metrics_listener = match config.metrics_listener {
            Some(addr) => Some((
                addr,
                tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("cannot bind ferrokraft.metrics.listener {addr}"))?,
            )),
            None => None,
        };
        if let Some(first) = first_start {
            format_on_first_start(&config, first)?;
        }
        let opened = launch::start::open(&config, now, seed)?;
        let launch::start::Opened {
            dir,
            core,
            store,
            voters,
            cluster_id,
            registrations,
            controller,
            release,
        } = opened;
        let (raft, thread) = driver::spawn(
            core,
            store,
            registrations,
            controller,
            peer_config,
            workload,
            MetadataLogSettings {
                max_idle_interval_ms: config.metadata_max_idle_interval_ms,
                snapshot_max_new_record_bytes: config
                    .metadata_log_max_record_bytes_between_snapshots,
                snapshot_max_interval_ms: config.metadata_log_max_snapshot_interval_ms,
                retention: Retention {
                    max_bytes: config.metadata_max_retention_bytes,
                    max_ms: config.metadata_max_retention_ms,
                },
                min_insync_replicas: config.min_insync_replicas,
            },
            tokio::runtime::Handle::current(),
        )?;
        if config.metrics_listener.is_none() {
            // Nothing reads the raft thread's metrics either: it skips them.
            if let Ok(mut m) = raft.metrics.lock() {
                m.recording = false;
            }
        }
        let handler = Arc::new(Handler::new(
            node_id,
            cluster_id,
            voters,
            Some(raft.clone()),
            release,
        ));
        let metrics_shutdown = CancellationToken::new();
        if let Some((addr, listener)) = metrics_listener {
            tracing::info!("Serving /metrics and /ready on http://{addr}");
            let source = Arc::new(MetricsSource::new(
                node_id,
                raft.metrics.clone(),
                net_stats.clone(),
            ));
            tokio::spawn(http::serve(listener, source, metrics_shutdown.clone()));
        }
        let shutdown = CancellationToken::new();
        let listeners = tokio::spawn({
            let shutdown = shutdown.clone();
            let config = config.clone();
            async move { launch::serve(handler, &config, bound, net_stats, shutdown).await }
        });
        tracing::info!(node_id, "Kafka Server started");
        launch::systemd::notify("READY=1");
        let thread_done = tokio::task::spawn_blocking(move || thread.join());
        tokio::pin!(thread_done);
        let outcome = tokio::select! {
            () = wait_for_signal(stop_signals) => {
                launch::systemd::notify("STOPPING=1");
                raft.try_send(Event::Shutdown { timeout_ms: SHUTDOWN_TIMEOUT_MS });
                match tokio::time::timeout(std::time::Duration::from_millis(SHUTDOWN_TIMEOUT_MS + 1000), &mut thread_done).await {
                    Ok(joined) => joined,
                    Err(_) => {
                        tracing::warn!("raft thread did not stop in time");
                        Ok(Ok(Ok(())))
                    }
                }
            }
            joined = &mut thread_done => joined,
        };
        shutdown.cancel();
        metrics_shutdown.cancel();
        let _ = listeners.await;
        drop(dir);
        let outcome: Result<()> = match outcome {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(anyhow::anyhow!("the raft thread stopped: {e}")),
            Ok(Err(_)) => Err(anyhow::anyhow!("the raft thread panicked")),
            Err(e) => Err(anyhow::anyhow!("cannot join the raft thread: {e}")),
        };
        tracing::info!(node_id, "shut down completed");
        outcome
    });
    result
}

/// SIGTERM and SIGINT caught from the moment this is made (before the node says it is ready,
/// so a stop that follows readiness at once still shuts down gracefully).
type StopSignals = Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>;

fn install_stop_signals() -> StopSignals {
    use tokio::signal::unix::{signal, SignalKind};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(term), Ok(int)) => Some((term, int)),
        _ => {
            tracing::error!("cannot install signal handlers; stop the node with SIGKILL");
            None
        }
    }
}

/// Waits for SIGTERM or SIGINT and logs it the way Kafka does.
async fn wait_for_signal(signals: StopSignals) {
    let Some((mut term, mut int)) = signals else {
        return std::future::pending().await;
    };
    let name = tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    };
    tracing::info!("Terminating process due to signal {name}");
}

#[allow(clippy::disallowed_methods)] // CLI verbs stamp files with wall-clock time, as Kafka's do
fn now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The quorum mode `kafka-storage format` would use for these flags and this config.
fn format_mode(args: &FormatArgs, config: &Config) -> Result<FormatMode> {
    let dynamic_flag =
        args.standalone || args.initial_controllers.is_some() || args.no_initial_controllers;
    if !config.quorum_voters.is_empty() {
        if dynamic_flag {
            anyhow::bail!(
                "You cannot use --standalone, --initial-controllers or --no-initial-controllers when controller.quorum.voters is set."
            );
        }
        return Ok(FormatMode::StaticVoters);
    }
    let listener = config
        .controller_listener_names
        .first()
        .cloned()
        .unwrap_or_else(|| "CONTROLLER".to_string());
    if args.standalone {
        let advertised = config
            .advertised_listeners
            .iter()
            .find(|l| l.name == listener)
            .context("the first controller listener has no advertised address")?;
        let host = if advertised.host.is_empty() {
            "localhost".to_string()
        } else {
            advertised.host.clone()
        };
        return Ok(FormatMode::Standalone {
            endpoint: ListenerEndpoint {
                name: listener,
                host,
                port: advertised.port,
            },
        });
    }
    if let Some(list) = &args.initial_controllers {
        return Ok(FormatMode::InitialControllers {
            controller_listener_name: listener,
            voters: DynamicVoter::parse_list(list)?,
        });
    }
    if args.no_initial_controllers {
        return Ok(FormatMode::NoInitialControllers);
    }
    anyhow::bail!(
        "Because controller.quorum.voters is not set on this controller, you must specify one of the following: --standalone, --initial-controllers, or --no-initial-controllers."
    )
}

fn parse_features(features: &[String]) -> Result<Vec<(String, i16)>> {
    features
        .iter()
        .map(|f| {
            let (name, level) = f
                .split_once('=')
                .with_context(|| format!("Invalid feature {f}: expected name=level"))?;
            let level: i16 = level
                .trim()
                .parse()
                .with_context(|| format!("Invalid level in feature {f}"))?;
            Ok((name.trim().to_string(), level))
        })
        .collect()
}

pub fn format(args: FormatArgs) -> Result<()> {
    let config = Config::load(&args.config, &[])?;
    let request = FormatRequest {
        node_id: config.node_id,
        log_dirs: config.log_dirs.clone(),
        metadata_log_dir: Some(config.metadata_log_dir.clone()),
        cluster_id: args.cluster_id.clone(),
        mode: format_mode(&args, &config)?,
        release_version: args.release_version.clone(),
        kafka_release: config.kafka_release.unwrap_or_default(),
        feature_overrides: parse_features(&args.features)?,
        ignore_formatted: args.ignore_formatted,
        scram_arguments: args.add_scram.clone(),
        now_unix_ms: now_unix_ms(),
    };
    let report = format::format(&request)?;
    for line in report.lines {
        println!("{line}");
    }
    Ok(())
}

pub fn info(args: InfoArgs) -> Result<()> {
    let config = Config::load(&args.config, &[])?;
    let mut dirs = config.log_dirs.clone();
    if !dirs.contains(&config.metadata_log_dir) {
        dirs.push(config.metadata_log_dir.clone());
    }
    let (text, problem) = format::describe_dirs(&dirs);
    print!("{text}");
    if problem {
        anyhow::bail!("Found problems with the log directories.");
    }
    Ok(())
}

pub fn random_uuid() -> Result<()> {
    println!("{}", uuid_to_kafka_string(&random_kafka_uuid()));
    Ok(())
}

/// `dump`: print the batches and records of a segment, snapshot or metadata directory.
pub fn dump(args: DumpArgs) -> Result<()> {
    use ferrokraft::tools::dump;
    let files = dump::dump_path(&args.path)?;
    let text = if args.json {
        format!("{:#}\n", dump::to_json(&files))
    } else {
        dump::to_text(&files)
    };
    use std::io::Write as _;
    // A closed pipe (`| head`) is not a failure worth a message.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    /// What the tracing events of `f` print at WARN and above.
    fn warnings(f: impl FnOnce()) -> String {
        ferrokraft::logging::captured(tracing::Level::WARN, f)
    }

    /// `ferrokraft start` without a file warns about an unknown `--override` key as a file's
    /// are warned about, and about nothing else.
    #[test]
    fn development_overrides_warn_about_unknown_keys() {
        let log = warnings(|| {
            let overrides = ["node.idd=1".to_string(), "num.io.threads=2".to_string()];
            let config = super::development_config(&overrides);
            assert!(config.is_ok(), "{config:?}");
        });
        assert!(
            log.contains(
                "The configuration 'node.idd' was supplied but isn't a known config; did you mean 'node.id'?"
            ),
            "{log}"
        );
        assert_eq!(log.matches("isn't a known config").count(), 1, "{log}");
        let quiet = warnings(|| {
            assert!(super::development_config(&[]).is_ok());
        });
        assert!(quiet.is_empty(), "{quiet}");
    }
}
