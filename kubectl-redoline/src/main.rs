//! `kubectl-redoline`: found on PATH by kubectl, run as `kubectl redoline ...`.

use std::process::ExitCode;

use clap::Parser;
use kubectl_redoline::cli::Cli;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut stdout = std::io::stdout().lock();
    match kubectl_redoline::run::run(cli, &mut stdout).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
