//! The `ferrokraft` binary: parse the command line, run the verb, exit 0 or 1.
use std::process::ExitCode;

use ferrokraft::cli::{self, Command};

mod commands;

fn main() -> ExitCode {
    let cli = cli::parse();
    ferrokraft::logging::init();
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
            eprintln!("{e:#}");
            ExitCode::FAILURE
        }
    }
}
