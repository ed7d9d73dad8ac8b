//! Storage benchmark: append + fsync throughput of KRaft-sized batches on `FileLog`, 8 MiB
//! Fetch reads from a multi-segment log, and the machine's floors measured in the same run.
//!
//! ```text
//! cargo bench --bench storage -- [--dir DIR] [--smoke]
//! ```
//!
//! DIR (default: a temp dir under the system temp dir) should be on the filesystem under test.
//! Results go to stdout as the Markdown table of docs/benchmarks.md.
#![allow(clippy::print_stdout, missing_docs)]

// loopback_rtt and floors_table serve the quorum and controller benchmarks.
#[allow(dead_code)]
mod measure;

use std::path::PathBuf;

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let mut dir: Option<PathBuf> = None;
    let mut params = measure::Params::full();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--dir" => dir = args.next().map(PathBuf::from),
            "--smoke" => params = measure::Params::smoke(),
            // cargo bench passes --bench; filters are meaningless here.
            _ => {}
        }
    }
    let base = dir.unwrap_or_else(std::env::temp_dir);
    let tmp = match tempfile::Builder::new()
        .prefix("ferrokraft-bench-")
        .tempdir_in(&base)
    {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot create a directory in {}: {e}", base.display());
            return std::process::ExitCode::FAILURE;
        }
    };
    eprintln!("benchmarking in {}", tmp.path().display());
    match measure::run(tmp.path(), &params) {
        Ok(report) => {
            println!("{}", measure::markdown(&report));
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
