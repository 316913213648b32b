//! Scale benchmark of `redoline-operator`: creates many OracleCaptures at once against the local
//! control plane (see `redoline_tests::k8s`) and prints how long the operator takes to give every
//! one its StatefulSet, ConfigMap and Service and a status at the current generation, how many
//! reconciles per second it ran meanwhile, and its peak RSS. Figures are printed, never asserted.
//!
//! The operator runs as the built binary (`redoline-operator run`), so its RSS is its own:
//!
//! ```sh
//! cargo build --release -p redoline-operator -p redoline-tests --bin redoline-operator \
//!     --bin operator_scale_bench
//! target/release/operator_scale_bench [COUNT]      # COUNT defaults to 1000
//! ```
//!
//! The operator binary is looked up next to this one, or at `REDOLINE_OPERATOR_BIN`. The control
//! plane is started in a temporary directory unless `REDOLINE_KUBECONFIG` names one. Reconciles
//! are counted from the operator's debug log line `reconciled` (it runs with
//! `RUST_LOG=redoline_operator::controller=debug`); peak RSS is `VmHWM` from `/proc/<pid>/status`.
//! `REDOLINE_OPERATOR_ARGS` passes more options to the operator, e.g. `--concurrency 64`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use kube::api::{Api, ListParams, ObjectMeta, PostParams};
use redoline_crds::OracleCapture;
use redoline_testenv::usage::{Memory, Process, cpu_seconds, memory};
use redoline_tests::k8s::KubeEnv;
use redoline_tests::operator;
/// Concurrent creations.
const CREATORS: usize = 16;
/// Give up after this long.
const LIMIT: Duration = Duration::from_secs(600);

fn main() -> anyhow::Result<()> {
    let count: usize = match std::env::args().nth(1) {
        Some(n) => n.parse().context("COUNT must be a number")?,
        None => 1000,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(bench(count))
}

/// Kills the operator when the benchmark ends, however it ends.
struct Operator(Child);

impl Drop for Operator {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// More operator options from `REDOLINE_OPERATOR_ARGS` (split at spaces), e.g.
/// `--concurrency 64`.
fn extra_args() -> Vec<String> {
    std::env::var("REDOLINE_OPERATOR_ARGS")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn operator_binary() -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os("REDOLINE_OPERATOR_BIN") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe()?;
    let path = exe
        .parent()
        .context("the benchmark binary has no directory")?
        .join("redoline-operator");
    if !path.is_file() {
        bail!(
            "{} not found: build it with `cargo build -p redoline-operator` (same profile), or \
             set REDOLINE_OPERATOR_BIN",
            path.display()
        );
    }
    Ok(path)
}

async fn bench(count: usize) -> anyhow::Result<()> {
    let env = KubeEnv::shared()?;
    let (client, ns) = operator::admin_and_namespace("operator-scale-bench").await?;
    let namespace = ns.name.clone();
    operator::create_sample_secrets(&client, &namespace).await?;

    // The operator, watching only the benchmark's namespace.
    let binary = operator_binary()?;
    let mut child = Command::new(&binary)
        .args([
            "run",
            "--namespace",
            &namespace,
            "--leader-election=false",
            "--metrics-addr",
            "127.0.0.1:0",
        ])
        .args(extra_args())
        .env("KUBECONFIG", env.kubeconfig_path())
        .env("RUST_LOG", "warn,redoline_operator::controller=debug")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    let pid = child.id();
    let reconciles = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    if let Some(stderr) = child.stderr.take() {
        let (reconciles, errors) = (reconciles.clone(), errors.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if line.contains("reconciled") {
                    reconciles.fetch_add(1, Ordering::Relaxed);
                } else if (line.contains("WARN") || line.contains("ERROR"))
                    && errors.fetch_add(1, Ordering::Relaxed) < 5
                {
                    eprintln!("operator: {line}");
                }
            }
        });
    }
    let operator = Operator(child);
    // Let it list and start its watches before the burst.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle_hwm = memory(Process::Pid(pid)).peak_kib;

    let mut sample = operator::sample()?;
    sample.metadata = ObjectMeta {
        namespace: Some(namespace.clone()),
        ..ObjectMeta::default()
    };
    let captures: Api<OracleCapture> = Api::namespaced(client.clone(), &namespace);
    let started = Instant::now();
    let mut creators = tokio::task::JoinSet::new();
    for creator in 0..CREATORS {
        let (captures, sample) = (captures.clone(), sample.clone());
        creators.spawn(async move {
            for i in (creator..count).step_by(CREATORS) {
                let mut capture = sample.clone();
                capture.metadata.name = Some(format!("capture-{i:04}"));
                captures.create(&PostParams::default(), &capture).await?;
            }
            anyhow::Ok(())
        });
    }
    while let Some(done) = creators.join_next().await {
        done??;
    }
    let created = started.elapsed();
    println!(
        "created {count} OracleCaptures in {:.1} s",
        created.as_secs_f64()
    );

    let stateful_sets: Api<StatefulSet> = Api::namespaced(client.clone(), &namespace);
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let services: Api<Service> = Api::namespaced(client.clone(), &namespace);
    let managed = ListParams::default().labels("app.kubernetes.io/managed-by=redoline-operator");
    let converged = loop {
        let current = captures
            .list(&ListParams::default())
            .await?
            .items
            .iter()
            .filter(|c| {
                c.status.as_ref().and_then(|s| s.observed_generation) == c.metadata.generation
            })
            .count();
        let sts = stateful_sets.list_metadata(&managed).await?.items.len();
        let cms = config_maps.list_metadata(&managed).await?.items.len();
        let svcs = services.list_metadata(&managed).await?.items.len();
        let elapsed = started.elapsed();
        eprintln!(
            "{:6.1} s: status current {current}/{count}, StatefulSets {sts}, ConfigMaps {cms}, \
             Services {svcs}, reconciles {}",
            elapsed.as_secs_f64(),
            reconciles.load(Ordering::Relaxed)
        );
        if current >= count && sts >= count && cms >= count && svcs >= count {
            break Some(elapsed);
        }
        if elapsed > LIMIT {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let done_reconciles = reconciles.load(Ordering::Relaxed);
    let hwm_at_convergence = memory(Process::Pid(pid)).peak_kib;
    let cpu_at_convergence = cpu_seconds(Process::Pid(pid));

    // A quiet minute afterwards: what an idle fleet costs (resyncs, pod and StatefulSet events).
    let before = reconciles.load(Ordering::Relaxed);
    let quiet = Duration::from_secs(30);
    tokio::time::sleep(quiet).await;
    let idle_reconciles = reconciles.load(Ordering::Relaxed) - before;
    let Memory {
        peak_kib: hwm,
        resident_kib: rss,
    } = memory(Process::Pid(pid));
    drop(operator);
    ns.delete().await;
    // Wait for the namespace controller to delete everything, so that a next run does not
    // compete with it.
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let deleting = Instant::now();
    while namespaces.get_opt(&namespace).await?.is_some() && deleting.elapsed() < LIMIT {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }

    println!("operator: {} {}", binary.display(), extra_args().join(" "));
    match converged {
        Some(t) => println!(
            "all {count} converged (StatefulSet, ConfigMap, Service, status.observedGeneration \
             current) after {:.1} s (target < 60 s)",
            t.as_secs_f64()
        ),
        None => println!("NOT converged within {} s", LIMIT.as_secs()),
    }
    let secs = converged.unwrap_or(LIMIT).as_secs_f64();
    println!(
        "reconciles until then: {done_reconciles} ({:.0}/s)",
        done_reconciles as f64 / secs
    );
    println!(
        "operator CPU time until then: {cpu_at_convergence:.1} s ({:.0}% of one core)",
        100.0 * cpu_at_convergence / secs
    );
    println!(
        "reconciles in the {} s after: {idle_reconciles}",
        quiet.as_secs()
    );
    println!(
        "operator warnings/errors logged: {}",
        errors.load(Ordering::Relaxed)
    );
    println!(
        "operator peak RSS (VmHWM): {:.1} MiB before the burst, {:.1} MiB at convergence, \
         {:.1} MiB at the end (target < 64 MiB); RSS at the end {:.1} MiB",
        idle_hwm as f64 / 1024.0,
        hwm_at_convergence as f64 / 1024.0,
        hwm as f64 / 1024.0,
        rss as f64 / 1024.0
    );
    Ok(())
}
