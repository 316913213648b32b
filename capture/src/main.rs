use std::process::ExitCode;

use clap::Parser;
use redoline_capture::cli::{Cli, Command, RedoCommand};
use redoline_capture::{VERSION, exit};

fn main() -> ExitCode {
    let cli = Cli::parse();
    cli.logging.init();
    match cli.command {
        Command::Version { json: false } => println!("redoline-capture {VERSION}"),
        Command::Version { json: true } => println!(
            "{}",
            serde_json::json!({"name": "redoline-capture", "version": VERSION})
        ),
        Command::Redo {
            command: RedoCommand::Parse,
        } => {
            if let Err(error) = redoline_capture::redo::cli::run_parse(
                std::io::stdin().lock(),
                std::io::stdout().lock(),
            ) {
                eprintln!("redo parse: cannot read input or write output: {error}");
                return ExitCode::from(exit::INTERNAL_ERROR);
            }
        }
    }
    ExitCode::from(exit::OK)
}
