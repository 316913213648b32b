//! A stand-in for the kubelet, which this machine lacks: it runs the capture pod that the
//! StatefulSet controller created, as local processes, and reports on it in the Pod's status the
//! way the kubelet does, so the operator observes a real pod.
//!
//! What it does like the kubelet: mounts the pod's Secret and ConfigMap volumes (as files in a
//! work directory), runs the `doctor` init container and then the `capture` container with their
//! arguments and environment (paths under a mount moved to its directory), writes the container
//! states, the pod IP and readiness (from `/readyz`, the pod's readiness probe), and puts a
//! container's termination message (`terminationMessagePath`) into its terminated state.
//!
//! What it changes, because there is no Oracle here: the capture config's `database` becomes the
//! Oracle simulator following the demo's workload file, and the capture listens on a free local
//! port instead of the pod's 8080 (the operator is told that port).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use k8s_openapi::api::core::v1::{ConfigMap, Container, Pod, Secret};
use kube::Api;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::sync::Mutex;

use redoline_operator::build::{CAPTURE_CONTAINER, CONFIG_FILE, DOCTOR_CONTAINER, SPILL_VOLUME};

use crate::operator::write_pod_status;

/// The pod's address as the kubelet reports it: the processes run on this machine.
const POD_IP: &str = "127.0.0.1";
/// How often the readiness probe runs.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// How a container ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Terminated {
    pub exit_code: i32,
    /// The termination message the container wrote, if any.
    pub message: Option<String>,
}

/// The capture pod, running.
#[derive(Debug)]
pub struct PodRun {
    pods: Api<Pod>,
    name: String,
    capture: Arc<Mutex<Child>>,
    termination_log: PathBuf,
    probe: tokio::task::JoinHandle<()>,
}

/// Everything the stand-in needs to run one pod.
pub struct Kubelet {
    pub client: kube::Client,
    pub namespace: String,
    /// The `redoline-capture` binary the pod's image would hold.
    pub capture_binary: PathBuf,
    /// Where volumes, logs and the rewritten config go.
    pub work_dir: PathBuf,
    /// The scenario file the simulated database follows.
    pub workload: PathBuf,
    /// The port the capture's HTTP server listens on.
    pub http_port: u16,
}

impl std::fmt::Debug for Kubelet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kubelet")
            .field("namespace", &self.namespace)
            .field("work_dir", &self.work_dir)
            .field("http_port", &self.http_port)
            .finish_non_exhaustive()
    }
}

impl Kubelet {
    /// Runs pod `name`: its init container to the end (an error if it fails), then its capture
    /// container, reported Running and, once `/readyz` answers 200, Ready.
    pub async fn run_pod(&self, name: &str) -> anyhow::Result<(Terminated, PodRun)> {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        let pod = pods
            .get(name)
            .await
            .with_context(|| format!("reading pod {name}"))?;
        let spec = pod.spec.clone().context("the pod has no spec")?;
        let mounts = self.mount_volumes(&pod).await?;
        let init = spec
            .init_containers
            .as_deref()
            .unwrap_or_default()
            .iter()
            .find(|c| c.name == DOCTOR_CONTAINER)
            .context("the pod has no doctor init container")?;
        let capture = spec
            .containers
            .iter()
            .find(|c| c.name == CAPTURE_CONTAINER)
            .context("the pod has no capture container")?;

        write_pod_status(
            &pods,
            name,
            json!({"phase": "Pending", "podIP": POD_IP, "podIPs": [{"ip": POD_IP}],
                "initContainerStatuses": [waiting(DOCTOR_CONTAINER, "PodInitializing")],
                "containerStatuses": [waiting(CAPTURE_CONTAINER, "PodInitializing")]}),
        )
        .await?;
        let doctor_log = self.work_dir.join("doctor.termination-log");
        let mut doctor = self.spawn(init, &mounts, &doctor_log, "doctor")?;
        let status = doctor.wait().await.context("waiting for doctor")?;
        let doctor_end = Terminated {
            exit_code: status.code().unwrap_or(-1),
            message: read_message(&doctor_log),
        };
        write_pod_status(
            &pods,
            name,
            json!({"initContainerStatuses": [terminated(DOCTOR_CONTAINER, &doctor_end)]}),
        )
        .await?;
        if doctor_end.exit_code != 0 {
            return Err(anyhow::anyhow!(
                "the doctor init container failed ({}); its log is in {}",
                doctor_end.message.as_deref().unwrap_or("no message"),
                self.work_dir.join("doctor.log").display()
            ));
        }

        let termination_log = self.work_dir.join("capture.termination-log");
        let child = self.spawn(capture, &mounts, &termination_log, "capture")?;
        write_pod_status(
            &pods,
            name,
            json!({"phase": "Running",
                "conditions": [{"type": "Ready", "status": "False"}],
                "containerStatuses": [running(false)]}),
        )
        .await?;
        let capture = Arc::new(Mutex::new(child));
        let probe = tokio::spawn(probe_readiness(
            pods.clone(),
            name.to_owned(),
            self.http_port,
            Arc::clone(&capture),
            termination_log.clone(),
        ));
        Ok((
            doctor_end,
            PodRun {
                pods,
                name: name.to_owned(),
                capture,
                termination_log,
                probe,
            },
        ))
    }

    /// Writes the pod's Secret and ConfigMap volumes into the work directory, plus an empty
    /// directory for every other volume (the spill claim); returns mount path → local directory
    /// for the capture container's mounts.
    async fn mount_volumes(&self, pod: &Pod) -> anyhow::Result<Vec<(String, PathBuf)>> {
        let spec = pod.spec.as_ref().context("the pod has no spec")?;
        let mut local: BTreeMap<String, PathBuf> = BTreeMap::new();
        for volume in spec.volumes.as_deref().unwrap_or_default() {
            let dir = self.work_dir.join("volumes").join(&volume.name);
            std::fs::create_dir_all(&dir)?;
            if let Some(secret) = &volume.secret {
                let name = secret
                    .secret_name
                    .as_deref()
                    .context("a secret volume without secretName")?;
                let secret = Api::<Secret>::namespaced(self.client.clone(), &self.namespace)
                    .get(name)
                    .await
                    .with_context(|| format!("the pod mounts Secret {name}"))?;
                for (key, value) in secret.data.unwrap_or_default() {
                    std::fs::write(dir.join(key), value.0)?;
                }
            } else if let Some(config_map) = &volume.config_map {
                let name = config_map.name.as_str();
                let config_map = Api::<ConfigMap>::namespaced(self.client.clone(), &self.namespace)
                    .get(name)
                    .await
                    .with_context(|| format!("the pod mounts ConfigMap {name}"))?;
                for (key, value) in config_map.data.unwrap_or_default() {
                    let value = if key == CONFIG_FILE {
                        self.local_config(&value)?
                    } else {
                        value
                    };
                    std::fs::write(dir.join(key), value)?;
                }
            }
            local.insert(volume.name.clone(), dir);
        }
        let capture = spec
            .containers
            .iter()
            .find(|c| c.name == CAPTURE_CONTAINER)
            .context("the pod has no capture container")?;
        let mut mounts: Vec<(String, PathBuf)> = capture
            .volume_mounts
            .as_deref()
            .unwrap_or_default()
            .iter()
            .filter_map(|m| Some((m.mount_path.clone(), local.get(&m.name)?.clone())))
            .collect();
        // The longest mount path first, so nested mounts win.
        mounts.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        Ok(mounts)
    }

    /// The rendered capture config with the demo's stand-ins: the simulator for Oracle, a local
    /// HTTP port, the spill volume's directory.
    fn local_config(&self, rendered: &str) -> anyhow::Result<String> {
        let mut config: Value =
            serde_norway::from_str(rendered).context("the ConfigMap's capture config")?;
        let fields = config
            .as_object_mut()
            .context("the capture config is not a mapping")?;
        fields.insert(
            "database".into(),
            json!({"simulator": {"scenario": self.workload, "follow": true}}),
        );
        fields.insert("http".into(), json!({"port": self.http_port}));
        // The spill volume is mounted where its claim's volume is written.
        if let Some(spill) = fields
            .get_mut("buffer")
            .and_then(|buffer| buffer.get_mut("spill"))
            .and_then(Value::as_object_mut)
        {
            let dir = self.work_dir.join("volumes").join(SPILL_VOLUME);
            spill.insert("dir".into(), json!(dir));
        }
        Ok(serde_norway::to_string(&config)?)
    }

    /// Starts a container's process: its args with mount paths moved, its environment, the
    /// termination message path, output to `<work dir>/<log>.log`.
    fn spawn(
        &self,
        container: &Container,
        mounts: &[(String, PathBuf)],
        termination_log: &Path,
        log: &str,
    ) -> anyhow::Result<Child> {
        let relocate = |value: &str| -> String {
            for (mount, dir) in mounts {
                if let Some(rest) = value.strip_prefix(mount.as_str()) {
                    return format!("{}{rest}", dir.display());
                }
            }
            value.to_owned()
        };
        let mut command = Command::new(&self.capture_binary);
        command.args(
            container
                .args
                .as_deref()
                .unwrap_or_default()
                .iter()
                .map(|a| relocate(a)),
        );
        command.env_clear();
        for key in ["PATH", "LD_LIBRARY_PATH", "RUST_BACKTRACE"] {
            if let Some(value) = std::env::var_os(key) {
                command.env(key, value);
            }
        }
        for var in container.env.as_deref().unwrap_or_default() {
            if let Some(value) = &var.value {
                command.env(&var.name, relocate(value));
            }
        }
        let _ = std::fs::remove_file(termination_log);
        command.env("REDOLINE_TERMINATION_LOG", termination_log);
        let output = std::fs::File::create(self.work_dir.join(format!("{log}.log")))?;
        command
            .stdin(Stdio::null())
            .stdout(output.try_clone()?)
            .stderr(output)
            .kill_on_drop(true);
        command
            .spawn()
            .with_context(|| format!("starting {}", self.capture_binary.display()))
    }
}

impl PodRun {
    /// Waits (at most `within`) for the capture container to end and returns how it ended, as
    /// written into the pod's status.
    pub async fn wait_terminated(&self, within: Duration) -> anyhow::Result<Terminated> {
        let started = tokio::time::Instant::now();
        loop {
            if let Some(status) = self.capture.lock().await.try_wait()? {
                // The probe task writes the terminated state; give it a moment.
                tokio::time::sleep(PROBE_EVERY * 2).await;
                return Ok(Terminated {
                    exit_code: status.code().unwrap_or(-1),
                    message: read_message(&self.termination_log),
                });
            }
            if started.elapsed() > within {
                bail!("the capture container did not end within {within:?}");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Kills the capture (the pod is deleted) and stops reporting on it.
    pub async fn kill(self) {
        self.probe.abort();
        let _ = self.capture.lock().await.kill().await;
        let _ = write_pod_status(
            &self.pods,
            &self.name,
            json!({"phase": "Succeeded", "conditions": [{"type": "Ready", "status": "False"}]}),
        )
        .await;
    }
}

/// The readiness probe: `GET /readyz` every second while the capture runs; when it ends, its
/// terminated state with the termination message, and the restart back-off the kubelet would
/// enter (the stand-in does not restart it).
async fn probe_readiness(
    pods: Api<Pod>,
    name: String,
    port: u16,
    capture: Arc<Mutex<Child>>,
    termination_log: PathBuf,
) {
    let mut ready = false;
    loop {
        tokio::time::sleep(PROBE_EVERY).await;
        let exited = capture.lock().await.try_wait().ok().flatten();
        if let Some(status) = exited {
            let end = Terminated {
                exit_code: status.code().unwrap_or(-1),
                message: read_message(&termination_log),
            };
            let mut state = terminated(CAPTURE_CONTAINER, &end);
            state["lastState"] = state["state"].take();
            state["state"] = json!({"waiting": {"reason": "CrashLoopBackOff",
                "message": "back-off restarting failed container capture"}});
            state["restartCount"] = json!(1);
            let _ = write_pod_status(
                &pods,
                &name,
                json!({"conditions": [{"type": "Ready", "status": "False"}],
                    "containerStatuses": [state]}),
            )
            .await;
            return;
        }
        let now_ready = readyz(port).await;
        if now_ready != ready {
            ready = now_ready;
            let status = if ready { "True" } else { "False" };
            let _ = write_pod_status(
                &pods,
                &name,
                json!({"conditions": [{"type": "Ready", "status": status}],
                    "containerStatuses": [running(ready)]}),
            )
            .await;
        }
    }
}

/// Whether `GET /readyz` on the capture answers 200.
async fn readyz(port: u16) -> bool {
    let probe = async {
        let mut stream = tokio::net::TcpStream::connect((POD_IP, port)).await?;
        stream
            .write_all(b"GET /readyz HTTP/1.0\r\nHost: capture\r\n\r\n")
            .await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        Ok::<bool, std::io::Error>(
            answer.starts_with(b"HTTP/1.1 200") || answer.starts_with(b"HTTP/1.0 200"),
        )
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(2), probe).await,
        Ok(Ok(true))
    )
}

fn read_message(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .filter(|text| !text.trim().is_empty())
}

fn now() -> String {
    k8s_openapi::jiff::Timestamp::now().to_string()
}

fn waiting(name: &str, reason: &str) -> Value {
    json!({"name": name, "image": "redoline-capture", "imageID": "", "ready": false,
        "restartCount": 0, "state": {"waiting": {"reason": reason}}})
}

fn running(ready: bool) -> Value {
    json!({"name": CAPTURE_CONTAINER, "image": "redoline-capture", "imageID": "",
        "ready": ready, "started": true, "restartCount": 0,
        "state": {"running": {"startedAt": now()}}})
}

fn terminated(name: &str, end: &Terminated) -> Value {
    let mut state = json!({"exitCode": end.exit_code,
        "reason": if end.exit_code == 0 { "Completed" } else { "Error" },
        "startedAt": now(), "finishedAt": now()});
    if let Some(message) = &end.message {
        state["message"] = json!(message);
    }
    json!({"name": name, "image": "redoline-capture", "imageID": "", "ready": false,
        "restartCount": 0, "state": {"terminated": state}})
}
