//! The real Kubernetes node of the test environment: a kubelet with containerd and runc, and
//! kube-scheduler, started by `tests/env/node.sh` beside the control plane (see docs/testing.md),
//! and the images built here by `tests/env/build-images.sh` from the project's Dockerfiles.
//!
//! `make test` (tests/env/test-all.sh) and `make demo` (examples/demo-k8s.sh) start the node and
//! build and import the images, then tell the tests about them through the environment variables
//! below; a test that needs the node fails (it is never skipped) when they are missing, naming
//! how to get them.
//!
//! What the node looks like to a test:
//! - node `127.0.0.1`, tainted `redoline.io/real-node=true:NoSchedule`, so that only pods that
//!   tolerate it run (every other test shares the apiserver and expects its pods to stay
//!   Pending);
//! - pods have network namespaces of their own on a bridge; the host is `host_ip` from a pod:
//!   Kafka's pod listener and the apiserver are there (there is no kube-proxy, so a pod that talks
//!   to the apiserver is given its address instead of the `kubernetes` Service's);
//! - the images are in containerd already (`imagePullPolicy: Never`);
//! - local PersistentVolumes of the StorageClass `redoline-local` are made by the test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{
    ContainerStatus, LocalVolumeSource, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
    ObjectReference, PersistentVolume, PersistentVolumeSpec, Pod, Toleration, VolumeNodeAffinity,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use redoline_capture::sink::KafkaClientSettings;
use redoline_capture::sink::kafka::reader::read_to_end;
use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::ImagePullPolicy;
use redoline_operator::build::scenario_file_name;
use serde_json::{Value, json};

use crate::demo::workload::Workload;
use crate::helm::Helm;
use crate::k8s::{KubeEnv, TestNamespace, apply_crd};
use crate::kafka::KafkaEnv;
use crate::wait::eventually;

/// The taint the node registers with; pods that run on it tolerate it.
pub const TAINT_KEY: &str = "redoline.io/real-node";
/// The StorageClass of the node's local volumes (no provisioner, bound when a pod is scheduled).
pub const STORAGE_CLASS: &str = "redoline-local";
/// The spill claim of the demo's OracleCapture (`orders`): the StatefulSet's claim template
/// `spill` for its pod `orders-capture-0`.
pub const DEMO_SPILL_CLAIM: &str = "spill-orders-capture-0";
/// Bound for the operator's pods to be Ready: a cold start on a loaded 2-core machine is slow.
const OPERATOR_READY_WITHIN: Duration = Duration::from_secs(180);
/// The user the images run as; volumes the pods read must be readable by it.
pub const IMAGE_UID: u32 = 65532;
/// How often the waits below look at the pod or the topic.
const POLL: Duration = Duration::from_millis(500);

/// The node and the images, as the environment describes them.
#[derive(Clone, Debug)]
pub struct NodeEnv {
    /// The node's name (`REDOLINE_NODE_NAME`).
    pub name: String,
    /// The host's address as pods see it (`REDOLINE_NODE_HOST_IP`).
    pub host_ip: String,
    /// The apiserver as pods reach it, `host:port` (`REDOLINE_NODE_APISERVER`).
    pub apiserver: String,
    /// Where local volumes go on the node (`REDOLINE_NODE_VOLUMES`).
    pub volumes: PathBuf,
    /// Kafka as pods reach it (`REDOLINE_KAFKA_POD_BOOTSTRAP`).
    pub kafka_bootstrap: String,
    /// The images built from images/*.Dockerfile, in the node's containerd
    /// (`REDOLINE_CAPTURE_IMAGE`, `REDOLINE_OPERATOR_IMAGE`).
    pub capture_image: String,
    pub operator_image: String,
}

impl NodeEnv {
    /// The node of this run, from the environment `make test` and `make demo` set.
    pub fn from_env() -> anyhow::Result<NodeEnv> {
        let var = |name: &str| -> anyhow::Result<String> {
            std::env::var(name)
                .ok()
                .filter(|v| !v.is_empty())
                .with_context(|| {
                    format!(
                        "{name} is not set: the tests on a real node run under `make test` \
                     (tests/env/test-all.sh starts the node with tests/env/node.sh and builds the \
                     images with tests/env/build-images.sh); see docs/testing.md"
                    )
                })
        };
        Ok(NodeEnv {
            name: var("REDOLINE_NODE_NAME")?,
            host_ip: var("REDOLINE_NODE_HOST_IP")?,
            apiserver: var("REDOLINE_NODE_APISERVER")?,
            volumes: PathBuf::from(var("REDOLINE_NODE_VOLUMES")?),
            kafka_bootstrap: var("REDOLINE_KAFKA_POD_BOOTSTRAP")?,
            capture_image: var("REDOLINE_CAPTURE_IMAGE")?,
            operator_image: var("REDOLINE_OPERATOR_IMAGE")?,
        })
    }

    /// The toleration of the node's taint.
    pub fn toleration() -> Toleration {
        Toleration {
            key: Some(TAINT_KEY.into()),
            operator: Some("Exists".into()),
            effect: Some("NoSchedule".into()),
            ..Toleration::default()
        }
    }

    /// A local PersistentVolume of `size` on the node, in a new directory of its own, for the
    /// claim [`DEMO_SPILL_CLAIM`] in `namespace` (of the StorageClass [`STORAGE_CLASS`]). Its name
    /// is `name`. The volume is bound to that claim ahead (`claimRef`): tests running side by side
    /// on the node each make one of the same class and size, and an unbound one would go to
    /// whichever claim the binder meets first (seen in CI: real_pods' claim took
    /// real_credentials' volume).
    pub async fn local_volume(
        &self,
        client: &kube::Client,
        namespace: &str,
        name: &str,
        size: &str,
    ) -> anyhow::Result<PathBuf> {
        let dir = self.volumes.join(name);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("creating the local volume {}", dir.display()))?;
        let volume = PersistentVolume {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            spec: Some(PersistentVolumeSpec {
                capacity: Some(BTreeMap::from([("storage".into(), Quantity(size.into()))])),
                access_modes: Some(vec!["ReadWriteOnce".into()]),
                persistent_volume_reclaim_policy: Some("Retain".into()),
                claim_ref: Some(ObjectReference {
                    namespace: Some(namespace.into()),
                    name: Some(DEMO_SPILL_CLAIM.into()),
                    ..ObjectReference::default()
                }),
                storage_class_name: Some(STORAGE_CLASS.into()),
                local: Some(LocalVolumeSource {
                    path: dir.to_string_lossy().into_owned(),
                    fs_type: None,
                }),
                node_affinity: Some(VolumeNodeAffinity {
                    required: Some(NodeSelector {
                        node_selector_terms: vec![NodeSelectorTerm {
                            match_expressions: Some(vec![NodeSelectorRequirement {
                                key: "kubernetes.io/hostname".into(),
                                operator: "In".into(),
                                values: Some(vec![self.name.clone()]),
                            }]),
                            match_fields: None,
                        }],
                    }),
                }),
                ..PersistentVolumeSpec::default()
            }),
            status: None,
        };
        Api::<PersistentVolume>::all(client.clone())
            .create(&PostParams::default(), &volume)
            .await
            .with_context(|| format!("creating PersistentVolume {name}"))?;
        Ok(dir)
    }

    /// The demo's OracleCapture (`examples/demo/oraclecapture.yaml`) in `namespace`, made to run
    /// on this node: the taint tolerated, the image already imported (`imagePullPolicy: Never`),
    /// its spill claim of [`STORAGE_CLASS`] (make the volume with [`NodeEnv::local_volume`]) and
    /// its topics under `topic_prefix` on the broker's pod listener.
    pub fn capture(&self, namespace: &str, topic_prefix: &str) -> anyhow::Result<OracleCapture> {
        let mut capture: OracleCapture = serde_norway::from_str(crate::demo::CAPTURE)
            .context("examples/demo/oraclecapture.yaml")?;
        capture.metadata.namespace = Some(namespace.to_owned());
        capture.spec.kafka.bootstrap_servers = self.kafka_bootstrap.clone();
        capture.spec.kafka.topic_prefix = topic_prefix.to_owned();
        capture.spec.buffer.spill.storage_class_name = Some(STORAGE_CLASS.into());
        capture.spec.pod.tolerations = vec![Self::toleration()];
        capture.spec.pod.image_pull_policy = Some(ImagePullPolicy::Never);
        Ok(capture)
    }

    /// A new directory for the simulator's scenarios (the operator's `--simulator-scenarios`),
    /// readable by the images' user.
    pub fn scenario_dir(&self, test: &str) -> anyhow::Result<tempfile::TempDir> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("redoline-scenarios-{test}-"))
            .tempdir()
            .context("creating a scenario directory")?;
        set_mode(dir.path(), 0o755)?;
        Ok(dir)
    }

    /// Installs the operator with the Helm chart (`charts/redoline`) into `namespace` as release
    /// `release`, from the operator image built here, watching `namespace`, its captures on the
    /// simulator of `scenarios` and the capture image built here. `replicas` above one elect a
    /// leader through the chart's Lease. Returns once every replica is Ready.
    pub async fn install_operator(
        &self,
        helm: &Helm,
        kube_env: &KubeEnv,
        install: &OperatorInstall<'_>,
    ) -> anyhow::Result<()> {
        let (api_host, api_port) = self.apiserver.rsplit_once(':').with_context(|| {
            format!(
                "REDOLINE_NODE_APISERVER={} is not host:port",
                self.apiserver
            )
        })?;
        let (operator_repository, operator_tag) = split_image(&self.operator_image)?;
        let (capture_repository, capture_tag) = split_image(&self.capture_image)?;
        let values = json!({
            "replicas": install.replicas,
            "image": {"repository": operator_repository, "tag": operator_tag, "pullPolicy": "Never"},
            "captureImage": {"repository": capture_repository, "tag": capture_tag},
            "watchNamespaces": [install.namespace],
            "operator": {
                "statusPollInterval": install.status_poll_interval,
                "logFormat": "json",
                "logLevel": "info",
                "extraArgs": [format!("--simulator-scenarios={}", install.scenarios.display())],
                // No kube-proxy on the test node: the `kubernetes` Service's address leads
                // nowhere, so the in-cluster configuration is pointed at the apiserver itself.
                "extraEnv": [
                    {"name": "KUBERNETES_SERVICE_HOST", "value": api_host},
                    {"name": "KUBERNETES_SERVICE_PORT", "value": api_port},
                ],
            },
            "tolerations": [Self::toleration()],
        });
        let values_file = tempfile::Builder::new()
            .prefix("redoline-operator-values-")
            .suffix(".yaml")
            .tempfile()
            .context("creating the chart values file")?;
        std::fs::write(values_file.path(), serde_json::to_string_pretty(&values)?)
            .context("writing the chart values file")?;
        let values_path = values_file.path().to_string_lossy().into_owned();
        helm.install(
            install.release,
            install.namespace,
            kube_env.kubeconfig_path(),
            &["--values", &values_path],
        )?;
        let deployments: Api<Deployment> =
            Api::namespaced(kube_env.client().await?, install.namespace);
        let replicas = i32::try_from(install.replicas).context("too many replicas")?;
        eventually(
            "the operator's replicas to be Ready",
            OPERATOR_READY_WITHIN,
            Duration::from_millis(500),
            || async {
                let status = deployments.get(install.release).await.ok()?.status?;
                (status.ready_replicas? == replicas).then_some(())
            },
        )
        .await
    }
}

/// How [`NodeEnv::install_operator`] installs the chart.
#[derive(Clone, Debug)]
pub struct OperatorInstall<'a> {
    pub release: &'a str,
    pub namespace: &'a str,
    pub replicas: u32,
    /// The operator's `--status-poll-interval` (`2s`).
    pub status_poll_interval: &'a str,
    /// The node's directory of simulator scenarios.
    pub scenarios: &'a Path,
}

/// How a container ended, as the kubelet reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Terminated {
    pub exit_code: i32,
    /// The kubelet's reason (`Completed`, `Error`, `OOMKilled`).
    pub reason: Option<String>,
    /// The termination message the container wrote (`terminationMessagePath`), if any.
    pub message: Option<String>,
    /// The container that ended, `containerd://…`.
    pub container_id: Option<String>,
}

/// The status of container `name` of `pod`.
pub fn container_status<'a>(pod: &'a Pod, name: &str) -> Option<&'a ContainerStatus> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .iter()
        .find(|c| c.name == name)
}

/// The last end of container `name`: its current state when it has ended, else the end before
/// its restart.
pub fn last_termination(pod: &Pod, name: &str) -> Option<Terminated> {
    let status = container_status(pod, name)?;
    let ended = status
        .state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .or_else(|| status.last_state.as_ref()?.terminated.as_ref())?;
    Some(Terminated {
        exit_code: ended.exit_code,
        reason: ended.reason.clone(),
        message: ended.message.clone(),
        container_id: ended.container_id.clone(),
    })
}

/// Whether the pod's Ready condition is True.
pub fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
        })
}

/// The pod `name` once it is Ready and is not the pod `replaced` (its uid), polled for at most
/// `within`.
pub async fn ready_pod(
    pods: &Api<Pod>,
    name: &str,
    replaced: Option<&str>,
    within: Duration,
) -> anyhow::Result<Pod> {
    eventually(
        &format!("the pod {name} to be Ready"),
        within,
        POLL,
        || async {
            let pod = pods.get_opt(name).await.ok().flatten()?;
            let is_new = pod.metadata.uid.as_deref() != replaced;
            (is_new && is_ready(&pod)).then_some(pod)
        },
    )
    .await
}

/// `repository:tag` → (repository, tag); a digest reference is refused (the images built here
/// are tagged).
fn split_image(image: &str) -> anyhow::Result<(&str, &str)> {
    match image.rsplit_once(':') {
        Some((repository, tag)) if !tag.contains('/') && !repository.contains('@') => {
            Ok((repository, tag))
        }
        _ => bail!("image {image} is not repository:tag"),
    }
}

fn set_mode(path: &Path, mode: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("chmod {mode:o} {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::split_image;

    #[test]
    fn images_split_into_repository_and_tag() {
        assert_eq!(
            split_image("localhost/redoline-capture:3f9a").ok(),
            Some(("localhost/redoline-capture", "3f9a"))
        );
        assert_eq!(
            split_image("127.0.0.1:5000/redoline:1").ok(),
            Some(("127.0.0.1:5000/redoline", "1"))
        );
        assert!(split_image("127.0.0.1:5000/redoline").is_err());
    }
}

/// What every test of an operator-managed capture on the node starts from: the environments, a
/// namespace of its own, the chart installed there (one replica) with a scenario directory, and
/// a workload writing the scenario of the capture `capture` in that namespace.
#[derive(Debug)]
pub struct NodeStory {
    pub node: NodeEnv,
    pub kafka: &'static KafkaEnv,
    pub kube_env: &'static KubeEnv,
    pub namespace: TestNamespace,
    pub scenarios: tempfile::TempDir,
    pub helm: Helm,
    pub workload: Workload,
}

impl NodeStory {
    pub async fn start(test: &str, release: &str, capture: &str) -> anyhow::Result<Self> {
        let node = NodeEnv::from_env()?;
        let kafka = tokio::task::spawn_blocking(KafkaEnv::shared).await??;
        let kube_env = tokio::task::spawn_blocking(KubeEnv::shared).await??;
        let client = kube_env.client().await?;
        apply_crd(&client, &redoline_crds::crd()).await?;
        let namespace = kube_env.namespace(test).await?;
        let scenarios = node.scenario_dir(test)?;
        let helm = Helm::new()?;
        node.install_operator(
            &helm,
            kube_env,
            &OperatorInstall {
                release,
                namespace: &namespace.name,
                replicas: 1,
                status_poll_interval: "2s",
                scenarios: scenarios.path(),
            },
        )
        .await?;
        let workload = Workload::start(
            &scenarios
                .path()
                .join(scenario_file_name(&namespace.name, capture)),
            Duration::from_millis(500),
        )?;
        Ok(Self {
            node,
            kafka,
            kube_env,
            namespace,
            scenarios,
            helm,
            workload,
        })
    }
}

/// Waits (at most `within`) until `topic` holds a created order: the capture on the node
/// publishes.
pub async fn some_order(
    kafka: &'static KafkaEnv,
    topic: &str,
    within: Duration,
) -> anyhow::Result<()> {
    eventually("order events in Kafka", within, POLL, || async {
        match created_keys(kafka, topic).await {
            Ok(created) => (!created.is_empty()).then_some(Ok(())),
            Err(e) => Some(Err(e)),
        }
    })
    .await?
}

/// Waits (at most `within`) until `topic` holds as many created orders as the workload
/// committed, `orders` (ids 1 to `orders`, read `read_committed`), then fails unless each was
/// created exactly once: none twice, none lost, none invented.
pub async fn every_order_once(
    kafka: &'static KafkaEnv,
    topic: &str,
    orders: u64,
    within: Duration,
) -> anyhow::Result<()> {
    ensure!(orders > 0, "the workload placed no order");
    let created = eventually("every order in Kafka", within, POLL, || async {
        match created_keys(kafka, topic).await {
            Ok(created) => {
                let total: usize = created.values().sum();
                (total as u64 >= orders).then_some(Ok(created))
            }
            Err(e) => Some(Err(e)),
        }
    })
    .await??;
    let repeated: Vec<_> = created.iter().filter(|(_, n)| **n > 1).collect();
    ensure!(repeated.is_empty(), "orders created twice: {repeated:?}");
    let expected: Vec<u64> = (1..=orders).collect();
    let got: Vec<u64> = created.keys().copied().collect();
    ensure!(
        got == expected,
        "orders lost or invented: got {got:?}, committed {expected:?}"
    );
    Ok(())
}

/// Order ids of the `c` events in `topic` (read_committed), with how often each was created;
/// empty while the topic does not exist yet. A value that is not JSON, or a created event without
/// an order id, is an error.
pub async fn created_keys(
    kafka: &'static KafkaEnv,
    topic: &str,
) -> anyhow::Result<BTreeMap<u64, usize>> {
    let settings = KafkaClientSettings::with_bootstrap(kafka.bootstrap_servers());
    let topic = topic.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut created = BTreeMap::new();
        let mut undecodable = None;
        let read = read_to_end(&settings, &topic, Duration::from_secs(20), |record| {
            if let Some(value) = &record.value {
                let Ok(event) = serde_json::from_slice::<Value>(value) else {
                    undecodable = Some(String::from_utf8_lossy(value).into_owned());
                    return Ok(());
                };
                if event["op"] == "c" {
                    match event["after"]["ID"].as_u64() {
                        Some(id) => *created.entry(id).or_insert(0) += 1,
                        None => undecodable = Some(event.to_string()),
                    }
                }
            }
            Ok(())
        });
        if let Some(event) = undecodable {
            bail!("an event not read as an order in {topic}: {event}");
        }
        // Before the capture's first transaction the topic does not exist yet.
        if read.is_err() {
            created.clear();
        }
        Ok(created)
    })
    .await?
}
