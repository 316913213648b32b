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
    /// Capture changes as the config file says (see docs/capture.md).
    Run {
        /// The capture config (YAML; fields can be overridden by REDOLINE__... variables).
        #[arg(long, value_name = "FILE")]
        config: std::path::PathBuf,
        /// With a simulated database: exit 0 once everything committed when the run began is
        /// emitted.
        #[arg(long)]
        exit_at_end: bool,
    },
    /// Check the database prerequisites; prints each failing check with the statement that
    /// fixes it; exit 0 when all pass.
    Doctor {
        #[arg(long, value_name = "FILE")]
        config: std::path::PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the Kafka ACLs the capture of a config needs (see docs/kafka.md, "ACLs").
    Acls {
        #[arg(long, value_name = "FILE")]
        config: std::path::PathBuf,
        /// The capture's Kafka principal, as `User:NAME`.
        #[arg(long, value_name = "User:NAME")]
        principal: String,
        #[arg(long, value_enum, default_value_t = AclFormat::KafkaAcls)]
        format: AclFormat,
        /// Add IdempotentWrite on the cluster, which brokers before Kafka 2.8 need for a capture
        /// with `kafka.exactlyOnce: false` (KIP-679 made it unnecessary).
        #[arg(long)]
        legacy_idempotent_write: bool,
    },
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

/// How `acls` prints the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AclFormat {
    /// `kafka-acls.sh --add` commands, one per rule.
    KafkaAcls,
    /// A Strimzi KafkaUser's `spec.authorization` block (YAML).
    Strimzi,
    /// A JSON array of rules, each with the reason the capture needs it.
    Json,
}

#[derive(Debug, Subcommand)]
pub enum RedoCommand {
    /// Parse JSON Lines of `{"sql_redo":"..."}` from stdin; write one JSON line per input line.
    Parse,
}
