//! The command line of `redoline-operator`.

use clap::{Parser, Subcommand};
use redoline_crds::logging::LogFormat;

/// Kubernetes operator for redoline's OracleCapture resources.
#[derive(Debug, Parser)]
#[command(name = "redoline-operator", version, about, long_about = None)]
pub struct Cli {
    /// Log line format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text, env = "REDOLINE_LOG_FORMAT")]
    pub log_format: LogFormat,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the version and exit.
    Version,
}
