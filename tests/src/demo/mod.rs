//! The Kubernetes demo (`make demo`) and its end-to-end test (`tests/tests/it/demo_e2e.rs`): one flow,
//! narrated for a person or asserted by the test.
//!
//! ```text
//! Kafka broker + control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler)
//! + a real node (kubelet, containerd, runc) running the images built from images/*.Dockerfile
//! operator: Deployment from the Helm chart, 2 replicas, one leader
//!   └─ OracleCapture examples/demo/oraclecapture.yaml
//!        └─ ConfigMap, StatefulSet ─ Pod orders-capture-0 on the node, spill volume a local PV
//! capture pod: doctor init container, then the capture, on the Oracle simulator following the
//!     workload's scenario file on the node (workload.rs; the operator's --simulator-scenarios)
//! capture ── Kafka topics <prefix>.SALES.* ; /status ── operator ── status, Events
//! ```
//!
//! Steps: the capture goes Ready through its probes and its events arrive in Kafka; a quiet RAC
//! instance holds capture back until the lag breaches the SLA (LagWithinSLA False), and the
//! remedy (ARCHIVE_LAG_TARGET) brings it back; a batch job's transaction overflows the spill cap
//! and the capture stops with CDC-4001, whose termination message the kubelet reads and the status
//! shows. Every step waits with a bound and fails naming what did not happen.

pub mod workload;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Context;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::PostParams;
use redoline_capture::sink::KafkaClientSettings;
use redoline_capture::sink::kafka::reader::read_to_end;
use redoline_crds::OracleCapture;
use redoline_operator::build::{CAPTURE_CONTAINER, scenario_file_name};
use serde_json::json;

use crate::helm::Helm;
use crate::k8s::{KubeEnv, apply_crd};
use crate::kafka::KafkaEnv;
use crate::node::{self, NodeEnv, OperatorInstall, Terminated};
use crate::operator::create_secret;
use workload::{Incident, Workload};

/// The demo's OracleCapture.
pub const CAPTURE: &str = include_str!("../../../examples/demo/oraclecapture.yaml");
/// Its name, and its pod's.
const NAME: &str = "orders";
const POD: &str = "orders-capture-0";
/// The tables it captures, as topic suffixes.
const TABLES: [&str; 3] = ["SALES.CUSTOMERS", "SALES.ORDERS", "SALES.ORDER_LINES"];
/// The operator polls the capture's `/status` this often (30 s by default; shorter to keep the
/// demo brisk).
const STATUS_POLL: &str = "2s";
/// The operator's Helm release, and its Deployment's name.
const RELEASE: &str = "redoline";
/// Operator replicas: one leader, one standby.
const OPERATOR_REPLICAS: u32 = 2;
/// Bound of each step.
const STEP_WITHIN: Duration = Duration::from_secs(120);
/// The batch job: more rows of 4,000 bytes than the 16 MiB heap and 32 MiB spill cap hold.
const BATCH_JOB: Incident = Incident::BatchJob {
    rows: 14_000,
    note_bytes: 4_000,
};

/// How to run the demo.
#[derive(Clone, Debug)]
pub struct Options {
    /// Print each step and what it shows (the demo); the test leaves it off.
    pub narrate: bool,
    /// Keep the namespace and the scenario directory instead of removing them.
    pub keep: bool,
}

/// What the demo saw, for the test to assert.
#[derive(Debug)]
pub struct Report {
    /// Events read back from each table topic (read_committed) once the capture was Ready.
    pub events_by_topic: BTreeMap<String, usize>,
    /// One event value, as written.
    pub sample_event: Option<String>,
    /// The Ready condition's message when it went True.
    pub ready_message: String,
    /// LagWithinSLA's message when it went False, and once restored.
    pub breach_message: String,
    pub restored_message: String,
    /// The capture pod as the kubelet ran it while streaming: node, image, container id.
    pub running_pod: RunningPod,
    /// The capture container's end, as the kubelet reports it (exit code, termination message).
    pub stop: Terminated,
    /// `status.lastStop.code` and the Stalled condition's message after the stop.
    pub last_stop_code: Option<String>,
    pub stalled_message: String,
    /// Reasons of the Events about the OracleCapture, in order.
    pub event_reasons: Vec<String>,
    /// `kubectl describe oraclecapture` at Ready, at the breach and after the stop.
    pub describe_ready: String,
    pub describe_breach: String,
    pub describe_stopped: String,
}

/// Prints a step for a person.
struct Narrator {
    on: bool,
    started: Instant,
}

impl Narrator {
    fn step(&self, text: &str) {
        if self.on {
            println!(
                "\n\x1b[1m== [{:>4.0}s] {text}\x1b[0m",
                self.started.elapsed().as_secs_f64()
            );
        }
    }

    fn show(&self, text: &str) {
        if self.on {
            println!("{}", text.trim_end());
        }
    }

    /// `kubectl describe` from its Status on (the spec above it is what was applied).
    fn describe(&self, describe: &str) {
        let status = describe
            .find("\nStatus:")
            .map_or(describe, |start| &describe[start + 1..]);
        self.show(&format!(
            "$ kubectl describe oraclecapture {NAME}   (Status and Events)\n{status}"
        ));
    }
}

/// The capture pod as the kubelet runs it.
#[derive(Clone, Debug)]
pub struct RunningPod {
    pub node: String,
    pub pod_ip: String,
    pub image: String,
    pub container_id: String,
    pub restarts: i32,
}

/// Runs the whole demo and cleans up after it, whether it succeeded or not.
pub async fn run(options: &Options) -> anyhow::Result<Report> {
    let say = Narrator {
        on: options.narrate,
        started: Instant::now(),
    };
    let node = NodeEnv::from_env()?;
    say.step("a Kafka broker (KRaft, one node), a Kubernetes control plane and a node: kubelet, containerd, runc");
    let kafka = tokio::task::spawn_blocking(KafkaEnv::shared).await??;
    let kube_env = tokio::task::spawn_blocking(KubeEnv::shared).await??;
    say.show(&format!(
        "Kafka on {} (pods: {}); kube-apiserver with kubeconfig {}; images {} and {}",
        kafka.bootstrap_servers(),
        node.kafka_bootstrap,
        kube_env.kubeconfig_path().display(),
        node.operator_image,
        node.capture_image,
    ));
    let client = kube_env.client().await?;
    apply_crd(&client, &redoline_crds::crd()).await?;
    let namespace = kube_env.namespace("redoline-demo").await?;
    let scenarios = node.scenario_dir("demo")?;
    let helm = Helm::new()?;

    let scene = Scene {
        say: &say,
        client: client.clone(),
        namespace: namespace.name.clone(),
        kube_env,
        kafka,
        node: &node,
        helm: &helm,
        scenarios: scenarios.path(),
    };
    let result = scene.play().await;

    say.step("cleaning up: the operator's release and the namespace");
    if options.keep || result.is_err() {
        let kept = scenarios.keep();
        let note = format!(
            "kept: namespace {} and the workload in {}",
            namespace.name,
            kept.display()
        );
        match &result {
            Err(error) => eprintln!("the demo failed ({error:#}); {note}"),
            Ok(_) => say.show(&note),
        }
        return result;
    }
    let uninstalled = helm.uninstall(RELEASE, &namespace.name, kube_env.kubeconfig_path());
    namespace.delete().await;
    let report = result?;
    uninstalled?;
    Ok(report)
}

/// The demo's cast.
struct Scene<'a> {
    say: &'a Narrator,
    client: kube::Client,
    namespace: String,
    kube_env: &'static KubeEnv,
    kafka: &'static KafkaEnv,
    node: &'a NodeEnv,
    helm: &'a Helm,
    scenarios: &'a std::path::Path,
}

impl Scene<'_> {
    async fn play(&self) -> anyhow::Result<Report> {
        let say = self.say;
        let captures: Api<OracleCapture> = Api::namespaced(self.client.clone(), &self.namespace);
        let prefix = self.kafka.unique_prefix("demo");

        say.step(&format!(
            "installing the operator with the Helm chart: a Deployment of {OPERATOR_REPLICAS} replicas from the image built here, electing a leader"
        ));
        self.node
            .install_operator(
                self.helm,
                self.kube_env,
                &OperatorInstall {
                    release: RELEASE,
                    namespace: &self.namespace,
                    replicas: OPERATOR_REPLICAS,
                    status_poll_interval: STATUS_POLL,
                    scenarios: self.scenarios,
                },
            )
            .await?;
        say.show(&self.kubectl(&["get", "deployment,pods,lease", "-o", "wide"])?);

        say.step("starting the workload: an order a second on the simulated Oracle database (the scenario file the pod follows)");
        let workload = Workload::start(
            &self
                .scenarios
                .join(scenario_file_name(&self.namespace, NAME)),
            Duration::from_secs(1),
        )?;
        let played = self.streaming(&captures, &workload, &prefix).await;
        let stopped = workload.stop();
        let report = played?;
        stopped?;
        Ok(report)
    }

    async fn streaming(
        &self,
        captures: &Api<OracleCapture>,
        workload: &Workload,
        prefix: &str,
    ) -> anyhow::Result<Report> {
        let say = self.say;
        say.step("applying the OracleCapture examples/demo/oraclecapture.yaml, its spill volume a local PersistentVolume of the node");
        create_secret(
            &self.client,
            &self.namespace,
            "orders-db-cdc",
            json!({"username": "C##CDC", "password": "not-used-by-the-simulator"}),
        )
        .await?;
        self.node
            .local_volume(
                &self.client,
                &self.namespace,
                &format!("{}-spill", self.namespace),
                "1Gi",
            )
            .await?;
        let capture = self.node.capture(&self.namespace, prefix)?;
        captures
            .create(&PostParams::default(), &capture)
            .await
            .context("creating the OracleCapture")?;
        say.show(&format!(
            "topic prefix {prefix}, Kafka {} as the pod reaches it",
            self.node.kafka_bootstrap
        ));

        say.step("the operator creates the ConfigMap, StatefulSet, Service and ServiceAccount; the scheduler puts the pod on the node, whose kubelet runs the doctor init container, then the capture");
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        let running_pod = wait_for("the capture pod to be Ready", STEP_WITHIN, || async {
            let pod = pods.get_opt(POD).await.ok().flatten()?;
            node::is_ready(&pod).then(|| running_pod(&pod)).flatten()
        })
        .await?;
        say.show(&self.kubectl(&[
            "get",
            "configmap,statefulset,service,serviceaccount,pvc,pod",
            "-o",
            "wide",
        ])?);
        say.show(&format!(
            "pod {POD} on node {}, IP {}: image {}, container {}, restarts {}",
            running_pod.node,
            running_pod.pod_ip,
            running_pod.image,
            running_pod.container_id,
            running_pod.restarts
        ));

        say.step("waiting for the OracleCapture to be Ready");
        let ready_message = wait_for_condition(captures, "Ready", "True").await?;
        let describe_ready = self.kubectl(&["describe", "oraclecapture", NAME])?;
        say.show(&self.kubectl(&["get", "oraclecapture"])?);
        say.describe(&describe_ready);

        say.step("events arriving in Kafka (read_committed)");
        let (events_by_topic, sample_event) =
            wait_for("events in every table topic", STEP_WITHIN, || async {
                let counted = self.count_events(prefix).await.ok()?;
                counted.0.values().all(|&n| n > 0).then_some(counted)
            })
            .await?;
        for (topic, count) in &events_by_topic {
            say.show(&format!("{count:>6} events in {topic}"));
        }
        if let Some(event) = &sample_event {
            say.show(&format!("one of them: {event}"));
        }
        say.show(&format!("{} orders committed so far", workload.orders()));
        say.show(&format!(
            "$ kubectl logs {POD} -c {CAPTURE_CONTAINER} --tail 3\n{}",
            self.kubectl(&["logs", POD, "-c", CAPTURE_CONTAINER, "--tail", "3"])?
        ));

        say.step("a second RAC instance commits once and goes quiet: the capture mines read-only (no flush write), so mining cannot pass what the quiet instance's log writer last wrote, and the lag grows past the 10 s SLA");
        workload.cause(Incident::QuietInstance)?;
        let breach_message = wait_for_condition(captures, "LagWithinSLA", "False").await?;
        let describe_breach = self.kubectl(&["describe", "oraclecapture", NAME])?;
        say.describe(&describe_breach);

        say.step("the remedy (the capture names it when a quiet instance holds it back for a minute): ARCHIVE_LAG_TARGET=5, every instance switches logs every 5 s");
        workload.cause(Incident::ArchiveLagTarget { every_seconds: 5 })?;
        let restored_message = wait_for_condition(captures, "LagWithinSLA", "True").await?;
        say.show(&format!("LagWithinSLA: {restored_message}"));

        say.step("a batch job inserts 14,000 rows of 4 KB in one transaction: more than the 16 MiB heap and the 32 MiB spill cap hold");
        workload.cause(BATCH_JOB)?;
        let stop = wait_for(
            "the capture container to end with a termination message",
            STEP_WITHIN,
            || async {
                let pod = pods.get_opt(POD).await.ok().flatten()?;
                node::last_termination(&pod, CAPTURE_CONTAINER)
                    .filter(|end| end.exit_code != 0 && end.message.is_some())
            },
        )
        .await?;
        say.show(&format!(
            "the kubelet reports the capture exited {} ({}) with the termination message:\n{}",
            stop.exit_code,
            stop.reason.as_deref().unwrap_or("no reason"),
            stop.message.as_deref().unwrap_or("(none)")
        ));
        let stalled_message = wait_for_condition(captures, "Stalled", "True").await?;
        let stored = captures.get(NAME).await?;
        let last_stop_code = stored
            .status
            .as_ref()
            .and_then(|s| s.last_stop.as_ref())
            .map(|stop| stop.code.clone());
        let describe_stopped = self.kubectl(&["describe", "oraclecapture", NAME])?;
        say.describe(&describe_stopped);
        say.show(&self.kubectl(&["get", "pod", POD, "-o", "wide"])?);
        let event_reasons = crate::operator::event_reasons(&self.client, &self.namespace).await?;
        Ok(Report {
            events_by_topic,
            sample_event,
            ready_message,
            breach_message,
            restored_message,
            running_pod,
            stop,
            last_stop_code,
            stalled_message,
            event_reasons,
            describe_ready,
            describe_breach,
            describe_stopped,
        })
    }

    /// Counts the events of every table topic a read_committed consumer sees, and gives one.
    async fn count_events(
        &self,
        prefix: &str,
    ) -> anyhow::Result<(BTreeMap<String, usize>, Option<String>)> {
        let settings = KafkaClientSettings::with_bootstrap(self.kafka.bootstrap_servers());
        let prefix = prefix.to_owned();
        tokio::task::spawn_blocking(move || {
            let mut counts = BTreeMap::new();
            let mut sample = None;
            for table in TABLES {
                let topic = format!("{prefix}.{table}");
                let mut count = 0;
                read_to_end(&settings, &topic, Duration::from_secs(20), |record| {
                    if let Some(value) = &record.value {
                        count += 1;
                        if sample.is_none() {
                            sample = Some(String::from_utf8_lossy(value).into_owned());
                        }
                    }
                    Ok(())
                })
                .with_context(|| format!("reading {topic}"))?;
                counts.insert(topic, count);
            }
            Ok((counts, sample))
        })
        .await?
    }

    /// `kubectl <args> -n <namespace>`, its output.
    fn kubectl(&self, args: &[&str]) -> anyhow::Result<String> {
        let mut args = args.to_vec();
        args.extend(["-n", &self.namespace]);
        self.kube_env.kubectl_stdout(&args)
    }
}

/// The capture container as the kubelet runs it, once it has a container id.
fn running_pod(pod: &Pod) -> Option<RunningPod> {
    let status = node::container_status(pod, CAPTURE_CONTAINER)?;
    let pod_status = pod.status.as_ref()?;
    Some(RunningPod {
        node: pod.spec.as_ref()?.node_name.clone()?,
        pod_ip: pod_status.pod_ip.clone()?,
        image: status.image.clone(),
        container_id: status.container_id.clone()?,
        restarts: status.restart_count,
    })
}

/// Waits until the OracleCapture's condition `type_` has `status`; returns its message.
async fn wait_for_condition(
    captures: &Api<OracleCapture>,
    type_: &str,
    status: &str,
) -> anyhow::Result<String> {
    wait_for(
        &format!("condition {type_}={status}"),
        STEP_WITHIN,
        || async {
            let capture = captures.get(NAME).await.ok()?;
            capture
                .status?
                .conditions
                .into_iter()
                .find(|c| c.type_ == type_ && c.status == status)
                .map(|c| c.message)
        },
    )
    .await
}

/// Polls `get` every half second until it gives a value; fails naming `what` after `within`.
async fn wait_for<T, F, Fut>(what: &str, within: Duration, get: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    crate::wait::eventually(what, within, Duration::from_millis(500), get).await
}
