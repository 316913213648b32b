use std::process::ExitCode;

use clap::Parser;
use redoline_crds::logging;
use redoline_operator::VERSION;
use redoline_operator::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.log_format);
    match cli.command {
        Command::Version => println!("redoline-operator {VERSION}"),
    }
    ExitCode::SUCCESS
}
