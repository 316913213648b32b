//! The command line of `redoline-capture` (see docs/capture.md).

use clap::{Parser, Subcommand};

use redoline_crds::logging::LoggingArgs;

/// Oracle LogMiner change data capture into Kafka, exactly once.
#[derive(Debug, Parser)]
#[command(name = "redoline-capture", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub logging: LoggingArgs,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the version and exit.
    Version {
        /// Print a JSON object instead of a line.
        #[arg(long)]
        json: bool,
    },
    /// Tools for LogMiner's SQL_REDO text.
    Redo {
        #[command(subcommand)]
        command: RedoCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum RedoCommand {
    /// Parse JSON Lines of `{"sql_redo":"..."}` from stdin; write one JSON line per input line.
    Parse,
}
