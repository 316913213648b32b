//! `redoline-operator`: the command line, the tokio runtime and signal handling around
//! [`redoline_operator::controller::run`].
//!
//! Exit status: 0 after a graceful shutdown (SIGTERM or SIGINT: running reconciles finish, no new
//! ones start), 2 for a usage error (from clap), 3 when no cluster configuration is found, 4 when
//! the runtime or the signal handlers cannot be set up.

use std::process::ExitCode;

use clap::Parser;
use redoline_operator::VERSION;
use redoline_operator::build::OperatorSettings;
use redoline_operator::cli::{Cli, Command, RunArgs, default_capture_image};
use redoline_operator::controller::{self, ControllerSettings, WatchScope};
use tokio::signal::unix::{SignalKind, signal};

/// Why the operator ended without a graceful shutdown.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("no Kubernetes cluster configuration (KUBECONFIG, ~/.kube/config or in-cluster): {0}")]
    Cluster(#[source] kube::Error),
    #[error("setting up: {0}")]
    Setup(#[source] std::io::Error),
}

impl Failure {
    fn exit_code(&self) -> ExitCode {
        match self {
            Failure::Cluster(_) => ExitCode::from(3),
            Failure::Setup(_) => ExitCode::from(4),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cli.logging.init();
    let result = match cli.command {
        Command::Version => {
            println!("redoline-operator {VERSION}");
            Ok(())
        }
        Command::Run(args) => run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            tracing::error!(error = %failure, "redoline-operator stopped");
            failure.exit_code()
        }
    }
}

fn run(args: RunArgs) -> Result<(), Failure> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Failure::Setup)?;
    runtime.block_on(async {
        // Installed before anything else, so a signal during start-up is not lost.
        let mut terminate = signal(SignalKind::terminate()).map_err(Failure::Setup)?;
        let mut interrupt = signal(SignalKind::interrupt()).map_err(Failure::Setup)?;
        let shutdown = async move {
            tokio::select! {
                _ = terminate.recv() => tracing::info!("SIGTERM: shutting down"),
                _ = interrupt.recv() => tracing::info!("SIGINT: shutting down"),
            }
        };

        let client = kube::Client::try_default()
            .await
            .map_err(Failure::Cluster)?;
        let mut settings = ControllerSettings::new(OperatorSettings {
            default_image: args.default_image.unwrap_or_else(default_capture_image),
        });
        settings.scope = if args.namespaces.is_empty() {
            WatchScope::AllNamespaces
        } else {
            WatchScope::Namespaces(args.namespaces)
        };
        settings.status_poll_interval = args.status_poll_interval;
        settings.concurrency = args.concurrency;
        settings.instance = args.instance;
        tracing::info!(version = VERSION, scope = ?settings.scope, "redoline-operator starting");
        controller::run(client, settings, shutdown).await;
        tracing::info!("redoline-operator stopped");
        Ok(())
    })
}
