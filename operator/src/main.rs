//! `redoline-operator`: the command line, the tokio runtime and signal handling around
//! [`redoline_operator::controller::run`].
//!
//! Exit status: 0 after a graceful shutdown (SIGTERM or SIGINT: running reconciles finish, no new
//! ones start, the leader Lease is released), 2 for a usage error (from clap), 3 when no cluster
//! configuration is found, 4 when the runtime, the signal handlers, the metrics or the HTTP
//! listener cannot be set up, 5 when this replica lost the leader Lease (the pod restarts as a
//! standby).

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use futures::FutureExt;
use redoline_operator::VERSION;
use redoline_operator::build::OperatorSettings;
use redoline_operator::cli::{Cli, Command, RunArgs, default_capture_image};
use redoline_operator::controller::{self, ControllerSettings, WatchScope};
use redoline_operator::http;
use redoline_operator::leader::{self, LeaderError, LeaderSettings, Role, RoleCell};
use redoline_operator::metrics::{Metrics, MetricsError, Registry};
use tokio::signal::unix::{SignalKind, signal};

/// Why the operator ended without a graceful shutdown.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("no Kubernetes cluster configuration (KUBECONFIG, ~/.kube/config or in-cluster): {0}")]
    Cluster(#[source] kube::Error),
    #[error("setting up: {0}")]
    Setup(#[source] std::io::Error),
    #[error("setting up the metrics: {0}")]
    Metrics(#[source] MetricsError),
    #[error(transparent)]
    Leadership(LeaderError),
}

impl Failure {
    fn exit_code(&self) -> ExitCode {
        match self {
            Failure::Cluster(_) => ExitCode::from(3),
            Failure::Setup(_) | Failure::Metrics(_) => ExitCode::from(4),
            Failure::Leadership(LeaderError::Settings(_)) => ExitCode::from(2),
            Failure::Leadership(LeaderError::Lost { .. }) => ExitCode::from(5),
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
        }
        .boxed()
        .shared();

        let registry = Registry::new();
        let metrics = Metrics::new(&registry).map_err(Failure::Metrics)?;
        let role = RoleCell::default();
        let listener = http::bind(args.metrics_addr)
            .await
            .map_err(Failure::Setup)?;
        // The server stops last, once the controller has stopped (after the shutdown signal, or
        // when leadership is lost): probes and scrapes keep answering while reconciles drain.
        let (stop_server, server_stopped) = tokio::sync::oneshot::channel::<()>();
        let server_shutdown = async move {
            let _ = server_stopped.await;
        };
        let server = tokio::spawn(http::serve(
            listener,
            http::router(metrics.clone(), role.clone()),
            server_shutdown,
        ));
        tracing::info!(address = %args.metrics_addr, "serving /metrics, /healthz and /readyz");

        let client = kube::Client::try_default()
            .await
            .map_err(Failure::Cluster)?;
        let identity = args.identity();
        let mut settings = ControllerSettings::new(OperatorSettings {
            default_image: args.default_image.unwrap_or_else(default_capture_image),
            simulator_scenarios: args.simulator_scenarios,
        });
        settings.scope = if args.namespaces.is_empty() {
            WatchScope::AllNamespaces
        } else {
            WatchScope::Namespaces(args.namespaces)
        };
        settings.status_poll_interval = args.status_poll_interval;
        settings.concurrency = args.concurrency;
        settings.instance = Some(identity.clone());
        settings.metrics = Some(metrics.clone());
        tracing::info!(version = VERSION, scope = ?settings.scope, %identity, "redoline-operator starting");
        let result = if args.leader_election {
            let namespace = args
                .lease_namespace
                .unwrap_or_else(|| client.default_namespace().to_owned());
            let mut election = LeaderSettings::new(namespace, identity);
            election.lease_name = args.lease_name;
            let controller_client = client.clone();
            leader::run_elected(
                client,
                election,
                role,
                Some(metrics),
                shutdown,
                move |stop| controller::run(controller_client, settings, stop),
            )
            .await
            .map_err(Failure::Leadership)
        } else {
            role.set(Role::Leader);
            metrics.set_leader(true);
            let controller = controller::run(client, settings, shutdown.clone());
            let drain_limit = async move {
                shutdown.await;
                tokio::time::sleep(leader::DRAIN_TIMEOUT).await;
            };
            tokio::select! {
                _ = controller => {}
                _ = drain_limit => tracing::warn!(
                    timeout = ?leader::DRAIN_TIMEOUT,
                    "the controller did not stop in time; abandoning it"
                ),
            }
            role.set(Role::Stopping);
            metrics.set_leader(false);
            Ok(())
        };
        let _ = stop_server.send(());
        match tokio::time::timeout(Duration::from_secs(5), server).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(error))) => tracing::warn!(%error, "the HTTP server failed"),
            Ok(Err(error)) => tracing::warn!(%error, "the HTTP server task failed"),
            Err(_) => tracing::warn!("the HTTP server did not stop within 5 s"),
        }
        if result.is_ok() {
            tracing::info!("redoline-operator stopped");
        }
        result
    })
}
