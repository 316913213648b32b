//! `make demo`: the Kubernetes demo, narrated (see `redoline_tests::demo`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use redoline_tests::demo::{self, Options};

/// Runs redoline on a local Kubernetes control plane and Kafka broker, with the Oracle simulator
/// standing in for the database, and shows each step.
#[derive(Debug, Parser)]
#[command(name = "redoline-demo")]
struct Args {
    /// The redoline-capture binary; defaults to the one beside this program (`cargo build -p
    /// redoline-capture` puts it there).
    #[arg(long, value_name = "PATH")]
    capture: Option<PathBuf>,
    /// Keep the work directory (logs, volumes, workload) afterwards.
    #[arg(long)]
    keep: bool,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("redoline-demo: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let capture_binary = match args.capture {
        Some(path) => path,
        None => demo::capture_binary_beside(&std::env::current_exe()?)?,
    };
    let runtime = tokio::runtime::Runtime::new()?;
    let report = runtime.block_on(demo::run(&Options {
        capture_binary,
        narrate: true,
        keep: args.keep,
    }))?;
    println!(
        "\nDone: {} events read back from Kafka, Ready, the lag SLA breached and restored, and a \
         typed stop ({}) in the status.",
        report.events_by_topic.values().sum::<usize>(),
        report.last_stop_code.as_deref().unwrap_or("no code")
    );
    Ok(())
}
