//! `make demo`: the Kubernetes demo, narrated (see `redoline_tests::demo`).

use std::process::ExitCode;

use clap::Parser;
use redoline_tests::demo::{self, Options};

/// Runs redoline on a local Kubernetes control plane, node and Kafka broker, with the Oracle
/// simulator standing in for the database, and shows each step. examples/demo-k8s.sh starts them
/// and builds the images first (`make demo`).
#[derive(Debug, Parser)]
#[command(name = "redoline-demo")]
struct Args {
    /// Keep the namespace and the workload afterwards.
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
    let runtime = tokio::runtime::Runtime::new()?;
    let report = runtime.block_on(demo::run(&Options {
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
