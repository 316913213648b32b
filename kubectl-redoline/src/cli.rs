//! The command line, as kubectl passes it on (`kubectl redoline ARGS` runs
//! `kubectl-redoline ARGS`).

use clap::{Parser, Subcommand, ValueEnum};

/// Status and spec edits for redoline's OracleCapture resources.
#[derive(Debug, Parser)]
#[command(name = "kubectl redoline", bin_name = "kubectl redoline", version)]
pub struct Cli {
    /// The namespace (default: the kubeconfig context's).
    #[arg(short = 'n', long, global = true)]
    pub namespace: Option<String>,
    /// The kubeconfig context to use (default: the current one).
    #[arg(long, global = true)]
    pub context: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// One screen about a capture: phase, stop, position, lag, transactions, snapshots,
    /// reposition. Reads the capture's /status through the API server's pod proxy, or the
    /// OracleCapture status alone when that is unreachable.
    Status {
        /// The OracleCapture.
        name: String,
        #[arg(short = 'o', long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Reads tables again while streaming goes on: adds an entry to spec.snapshot.requests.
    Snapshot {
        /// The OracleCapture.
        name: String,
        /// The tables, OWNER.TABLE as in spec.tables.
        #[arg(required = true)]
        tables: Vec<String>,
        /// A SQL condition on the rows to read (as a spec.snapshot.selectOverrides value).
        #[arg(long = "where")]
        condition: Option<String>,
        /// The request's id (default: snapshot-<UTC time>).
        #[arg(long)]
        id: Option<String>,
    },
    /// Moves the capture's position to an SCN, once: sets spec.reposition.
    Reposition {
        /// The OracleCapture.
        name: String,
        /// The SCN to continue from.
        #[arg(long)]
        scn: u64,
        /// The move's id (default: reposition-<UTC time>).
        #[arg(long)]
        id: Option<String>,
    },
}

/// How `status` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Output {
    Text,
    Json,
}
