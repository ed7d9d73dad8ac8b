//! The verbs behind the command line. Errors are `anyhow` here only: each becomes one line on
//! stderr and exit code 1.

use anyhow::{Context, Result};
use tokio_util::sync::CancellationToken;

use ferrokraft::cli::{FormatArgs, InfoArgs, StartArgs};
use ferrokraft::config::{self, Config};
use ferrokraft::node;

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

pub fn start(args: StartArgs) -> Result<()> {
    let config = match &args.config {
        Some(path) => Config::load(path, &args.overrides)?,
        None => {
            let mut props = development_properties();
            config::apply_overrides(&mut props, &args.overrides)?;
            Config::from_properties(&props)?
        }
    };
    config.warn_unknown_keys();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let bound = node::bind(&config).await?;
        let shutdown = CancellationToken::new();
        let signals = shutdown.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            signals.cancel();
        });
        tracing::info!(node_id = config.node_id, "Kafka Server started");
        node::run(&config, bound, shutdown).await;
        tracing::info!(node_id = config.node_id, "shut down completed");
        Ok(())
    })
}

/// Waits for SIGTERM or SIGINT and logs it the way Kafka does.
async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::error!("cannot install signal handlers; stop the node with SIGKILL");
        return std::future::pending().await;
    };
    let name = tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    };
    tracing::info!("Terminating process due to signal {name}");
}

pub fn format(_args: FormatArgs) -> Result<()> {
    anyhow::bail!("format: not wired yet")
}

pub fn info(_args: InfoArgs) -> Result<()> {
    anyhow::bail!("info: not wired yet")
}

pub fn random_uuid() -> Result<()> {
    anyhow::bail!("random-uuid: not wired yet")
}
