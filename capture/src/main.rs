use std::process::ExitCode;

use clap::Parser;
use redoline_capture::cli::{Cli, Command};
use redoline_capture::{VERSION, exit};
use redoline_crds::logging;

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.log_format);
    match cli.command {
        Command::Version { json: false } => println!("redoline-capture {VERSION}"),
        Command::Version { json: true } => println!(
            "{}",
            serde_json::json!({"name": "redoline-capture", "version": VERSION})
        ),
    }
    ExitCode::from(exit::OK)
}
