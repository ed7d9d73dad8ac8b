//! The `ferrokraft` binary: parse the command line, run the verb, exit 0 or 1.
use std::process::ExitCode;

use ferrokraft::cli::{self, Command};

mod commands;

fn main() -> ExitCode {
    let cli = cli::parse();
    // The apache/kafka image's log levels (`KAFKA_LOG4J_ROOT_LOGLEVEL`, `KAFKA_LOG4J_LOGGERS`)
    // when RUST_LOG does not say.
    ferrokraft::logging::init(ferrokraft::config::environment::log_directives(|name| {
        std::env::var(name).ok()
    }));
    let result = match cli.command {
        Command::Start(args) => commands::start(args),
        Command::Format(args) => commands::format(args),
        Command::Info(args) => commands::info(args),
        Command::RandomUuid => commands::random_uuid(),
        Command::Dump(args) => commands::dump(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", error_chain(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes, each cause once: an error whose message already ends with its
/// cause (`cannot bind …: Address in use (os error 98)`) is not followed by it again.
fn error_chain(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let message = cause.to_string();
        if text.contains(&message) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&message);
    }
    text
}
