use std::process::ExitCode;

use clap::Parser;
use redoline_capture::cli::{Cli, Command, RedoCommand};
use redoline_capture::error::{CaptureError, Disposition};
use redoline_capture::run;
use redoline_capture::{VERSION, exit};

fn main() -> ExitCode {
    let cli = Cli::parse();
    cli.logging.init();
    match cli.command {
        Command::Run {
            config,
            exit_at_end,
        } => return finish(run::run(&config, exit_at_end)),
        Command::Doctor { config, json } => {
            let report = match run::doctor(&config) {
                Ok(report) => report,
                Err(error) => return finish(Err(error)),
            };
            if json {
                println!("{}", report.to_json());
            } else {
                println!("{report}");
            }
            return match report.stop() {
                Some(stop) => finish(Err(stop.into())),
                None => ExitCode::from(exit::OK),
            };
        }
        Command::Acls {
            config,
            principal,
            format,
            legacy_idempotent_write,
        } => match run::acls(&config, &principal, format, legacy_idempotent_write) {
            Ok(text) => print!("{text}"),
            Err(error) => return finish(Err(error)),
        },
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

/// The exit status of a command; a typed stop also writes the termination message.
fn finish(result: Result<(), CaptureError>) -> ExitCode {
    let error = match result {
        Ok(()) => return ExitCode::from(exit::OK),
        Err(error) => error,
    };
    match error.disposition() {
        Disposition::Stop(stop) => {
            eprintln!("{stop}");
            let path = redoline_capture::stop::termination_log_path();
            if let Err(error) = stop.write_termination_log(&path, jiff::Timestamp::now()) {
                eprintln!(
                    "cannot write the termination message to {}: {error}",
                    path.display()
                );
            }
            ExitCode::from(exit::STOPPED)
        }
        // A transient fault outside the run's retries (there are none today) fails the process
        // like any other: Kubernetes starts it again.
        Disposition::Retry { .. } | Disposition::Restart => {
            eprintln!("redoline-capture: {error}");
            ExitCode::from(exit::INTERNAL_ERROR)
        }
    }
}
