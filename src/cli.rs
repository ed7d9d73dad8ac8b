//! The command line, mirroring Kafka's verbs so operators feel at home.
//!
//! `ferrokraft start [-c FILE]` runs a node (`kafka-server-start`); `format`, `info` and
//! `random-uuid` are `kafka-storage`'s verbs with its flags; `dump` is `kafka-dump-log`'s. Every failure exits 1 with a
//! one-line cause on stderr, as Kafka's scripts do (clap's usage errors included).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// A KRaft controller node, wire- and disk-compatible with Apache Kafka 4.x.
#[derive(Debug, Parser)]
#[command(name = "ferrokraft", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The verbs.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a controller node. Without -c: a single-voter development quorum on
    /// 127.0.0.1:9093 with data under ./ferrokraft-data, formatted on first start.
    Start(StartArgs),
    /// Format the node's log directories (as `kafka-storage format`).
    Format(FormatArgs),
    /// Describe the node's log directories (as `kafka-storage info`).
    Info(InfoArgs),
    /// Print a new random cluster or directory id (as `kafka-storage random-uuid`).
    RandomUuid,
    /// Print what a metadata log segment, a snapshot (.checkpoint) or a whole metadata
    /// directory holds: batches, control records, decoded metadata records, and the image
    /// they add up to (as `kafka-dump-log --cluster-metadata-decoder`).
    Dump(DumpArgs),
}

/// Arguments of `dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// A `.log` segment, a `.checkpoint` file, or a directory (a log directory, or its
    /// `__cluster_metadata-0`).
    pub path: PathBuf,
    /// One JSON document instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `start`.
#[derive(Debug, Args)]
pub struct StartArgs {
    /// The server.properties file.
    #[arg(short = 'c', long = "config")]
    pub config: Option<PathBuf>,
    /// The server.properties file, given as `kafka-server-start.sh` takes it (first and
    /// alone: `ferrokraft start server.properties --override k=v`).
    #[arg(value_name = "SERVER_PROPERTIES", conflicts_with = "config")]
    pub config_file: Option<PathBuf>,
    /// Override a property: key=value (applied after the file, as kafka.Kafka --override).
    #[arg(long = "override", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Where a start configured from the environment (`KAFKA_PROCESS_ROLES` set, no file)
    /// looks for a mounted `server.properties`, as the apache/kafka image does.
    #[arg(
        long = "mounted-configs-dir",
        value_name = "DIR",
        default_value = "/mnt/shared/config"
    )]
    pub mounted_configs_dir: PathBuf,
    /// Test/benchmark workload: while leader, append this many records per second
    /// (NoOpRecords, like Kafka's TestRaftServer workload; 0 = off).
    #[arg(long = "workload-records-per-sec", default_value_t = 0)]
    pub workload_records_per_sec: u64,
    /// Size in bytes of each workload record.
    #[arg(long = "workload-record-bytes", default_value_t = 256)]
    pub workload_record_bytes: usize,
}

impl StartArgs {
    /// The properties file, given with `-c` or positionally.
    pub fn config_path(&self) -> Option<&PathBuf> {
        self.config.as_ref().or(self.config_file.as_ref())
    }
}

/// Arguments of `format`.
#[derive(Debug, Args)]
pub struct FormatArgs {
    /// The server.properties file.
    #[arg(short = 'c', long = "config")]
    pub config: PathBuf,
    /// The cluster id (22 base64url characters, e.g. from random-uuid).
    #[arg(short = 't', long = "cluster-id")]
    pub cluster_id: String,
    /// The metadata.version to bootstrap with, e.g. 4.1 or 4.1-IV1 (default: the latest
    /// production version of the pinned Kafka release).
    #[arg(short = 'r', long = "release-version")]
    pub release_version: Option<String>,
    /// Skip directories that are already formatted instead of failing.
    #[arg(short = 'g', long = "ignore-formatted")]
    pub ignore_formatted: bool,
    /// Format as the single voter of a new dynamic quorum.
    #[arg(short = 's', long = "standalone", group = "quorum_mode")]
    pub standalone: bool,
    /// The initial voters of a new dynamic quorum: id@host:port:directoryId,...
    #[arg(short = 'I', long = "initial-controllers", group = "quorum_mode")]
    pub initial_controllers: Option<String>,
    /// Join an existing dynamic quorum later (no bootstrap voter set).
    #[arg(short = 'N', long = "no-initial-controllers", group = "quorum_mode")]
    pub no_initial_controllers: bool,
    /// A feature level to bootstrap with: name=level (repeatable).
    #[arg(short = 'f', long = "feature", value_name = "NAME=LEVEL")]
    pub features: Vec<String>,
    /// A SCRAM credential to bootstrap with (repeatable), as kafka-storage:
    /// 'SCRAM-SHA-256=[name=alice,password=alice-secret]', or salt=…,saltedpassword=…
    /// (base64) instead of the password; iterations=N (default 4096).
    #[arg(
        short = 'S',
        long = "add-scram",
        value_name = "MECHANISM=[name=…,password=…]"
    )]
    pub add_scram: Vec<String>,
}

/// Arguments of `info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The server.properties file.
    #[arg(short = 'c', long = "config")]
    pub config: PathBuf,
}

/// Parses argv; help and version print and exit 0, any usage error exits 1 (Kafka's convention).
pub fn parse() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            let code = match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => 0,
                _ => 1,
            };
            let _ = e.print();
            std::process::exit(code);
        }
    }
}
