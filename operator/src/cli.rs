//! The command line of `redoline-operator`.

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use redoline_crds::logging::LoggingArgs;

/// Kubernetes operator for redoline's OracleCapture resources.
#[derive(Debug, Parser)]
#[command(name = "redoline-operator", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub logging: LoggingArgs,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Reconcile OracleCaptures until SIGTERM or SIGINT. The cluster comes from KUBECONFIG,
    /// ~/.kube/config or the in-cluster service account, in that order.
    Run(RunArgs),
    /// Print the version and exit.
    Version,
}

/// Options of `redoline-operator run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Watch only this namespace; repeat for several. Without it, all namespaces are watched.
    #[arg(
        long = "namespace",
        value_name = "NAMESPACE",
        env = "REDOLINE_NAMESPACES",
        value_delimiter = ','
    )]
    pub namespaces: Vec<String>,

    /// The capture image for resources without `spec.image`; defaults to the image of this
    /// operator's version.
    #[arg(long, value_name = "IMAGE", env = "REDOLINE_DEFAULT_IMAGE")]
    pub default_image: Option<String>,

    /// How often each running capture's `/status` is polled for lag and position (e.g. `30s`,
    /// `2m`, `500ms`; a bare number is seconds).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub status_poll_interval: Duration,

    /// Most reconciles running at once (per watched namespace).
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,

    /// This replica's name in Events and its identity in the leader Lease (the pod name when
    /// running in a pod; otherwise the host name and process id).
    #[arg(long, value_name = "NAME", env = "POD_NAME")]
    pub instance: Option<String>,

    /// Where `/metrics`, `/healthz` and `/readyz` are served.
    #[arg(
        long,
        value_name = "ADDRESS",
        env = "REDOLINE_METRICS_ADDR",
        default_value = "0.0.0.0:8080"
    )]
    pub metrics_addr: SocketAddr,

    /// Reconcile only while holding the leader Lease, so that several replicas can run
    /// (`--leader-election=false` for a single replica without a Lease).
    #[arg(
        long,
        value_name = "BOOL",
        env = "REDOLINE_LEADER_ELECTION",
        default_value_t = true,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true"
    )]
    pub leader_election: bool,

    /// The namespace of the leader Lease: the operator's own (from the pod, or the current
    /// context's namespace outside a cluster).
    #[arg(long, value_name = "NAMESPACE", env = "POD_NAMESPACE")]
    pub lease_namespace: Option<String>,

    /// Run every capture on the Oracle simulator instead of a database, each following the
    /// scenario `<DIR>/<namespace>.<name>.jsonl` on its node (mounted read-only). For demos and
    /// tests on a cluster without Oracle; never in production.
    #[arg(long, value_name = "DIR", env = "REDOLINE_SIMULATOR_SCENARIOS")]
    pub simulator_scenarios: Option<String>,

    /// The name of the leader Lease; replicas with the same Lease elect one leader.
    #[arg(long, value_name = "NAME", default_value = crate::leader::DEFAULT_LEASE_NAME)]
    pub lease_name: String,
}

impl RunArgs {
    /// This replica's identity: `--instance` (the pod name), else `<host name>-<process id>`.
    pub fn identity(&self) -> String {
        if let Some(instance) = self.instance.as_deref().filter(|i| !i.is_empty()) {
            return instance.to_owned();
        }
        let host = std::env::var("HOSTNAME")
            .ok()
            .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "redoline-operator".to_owned());
        format!("{host}-{}", std::process::id())
    }
}

/// The image of the capture that matches this operator's version.
pub fn default_capture_image() -> String {
    format!("ghcr.io/redoline/redoline-capture:{}", crate::VERSION)
}

/// Reads `500ms`, `30s`, `2m`, `1h` or a bare number of seconds.
///
/// Ours rather than `humantime::parse_duration` (well kept, chronotope; not in the tree): the
/// documented grammar (docs/operator.md, the chart's values.yaml) takes a bare number as seconds,
/// which humantime refuses ("time unit needed"), and stops at hours, while humantime also takes
/// days, weeks, months, years and sums such as `1h 30m`. Wrapping it to keep the grammar would be
/// as long as these lines, for a new dependency.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration such as 30s, 2m or 500ms"))?;
    let duration = match unit {
        "" | "s" => Duration::from_secs(value),
        "ms" => Duration::from_millis(value),
        "m" => Duration::from_secs(value.saturating_mul(60)),
        "h" => Duration::from_secs(value.saturating_mul(3600)),
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?}; use ms, s, m or h"
            ));
        }
    };
    if duration.is_zero() {
        return Err("the duration must be positive".into());
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("3d").is_err());
    }

    #[test]
    fn namespaces_repeat() {
        let cli = Cli::try_parse_from([
            "redoline-operator",
            "run",
            "--namespace",
            "a",
            "--namespace",
            "b",
            "--status-poll-interval",
            "5s",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run");
        };
        assert_eq!(args.namespaces, ["a", "b"]);
        assert_eq!(args.status_poll_interval, Duration::from_secs(5));
        assert_eq!(args.concurrency, 16);
        assert_eq!(args.default_image, None);
        assert_eq!(args.metrics_addr, "0.0.0.0:8080".parse().unwrap());
        assert!(args.leader_election);
        assert_eq!(args.lease_name, "redoline-operator");
    }

    #[test]
    fn leader_election_can_be_turned_off() {
        for off in [
            &["--leader-election=false"][..],
            &["--leader-election", "false"],
        ] {
            let cli = Cli::try_parse_from(
                ["redoline-operator", "run"]
                    .into_iter()
                    .chain(off.iter().copied()),
            )
            .unwrap();
            let Command::Run(args) = cli.command else {
                panic!("not run");
            };
            assert!(!args.leader_election);
        }
        let cli = Cli::try_parse_from([
            "redoline-operator",
            "run",
            "--leader-election",
            "--instance",
            "op-0",
            "--metrics-addr",
            "127.0.0.1:9090",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run");
        };
        assert!(args.leader_election);
        assert_eq!(args.identity(), "op-0");
        assert_eq!(args.metrics_addr.port(), 9090);
    }
}
