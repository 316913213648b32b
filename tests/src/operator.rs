//! What the operator's integration tests share: the sample OracleCapture, its Secrets, and the
//! operator run in this process over one test namespace.
//!
//! * [`SAMPLE`], [`sample_in`], [`create_sample`]: `crds/examples/oraclecapture.yaml` (named
//!   [`NAME`]) placed in a namespace, and the Secrets it references ([`create_sample_secrets`]);
//!   [`apply`] for objects the tests server-side apply themselves.
//! * [`controller_settings`]: controller settings watching only the test namespace, with the image
//!   the tests expect; each test sets its own knobs on top (status port and poll interval,
//!   identity, metrics).
//! * [`Controller`] and [`Harness`]: the controller spawned on the test's runtime, stopped through
//!   its shutdown signal and joined with a bound; [`Harness`] adds the admin client, the CRD and a
//!   fresh namespace. [`elected`] runs the controller behind leader election instead.
//! * [`wait_for_capture`]: bounded polling (`crate::wait`) of an
//!   OracleCapture, failing with its last status; [`event_with_reason`]: an Event about the
//!   sample.
//! * [`has_condition`], [`observes_its_generation`]: what the tests read in a status.
//! * [`write_pod_status`] with [`container_status`], [`terminated`] and [`ready_pod_status`]:
//!   the capture pod's status as the kubelet writes it, for tests that stand in for the kubelet:
//!   they reach every state the operator reads (an OOMKill, any termination message) at once,
//!   which the real node (`crate::node`, `tests/tests/it/real_pods.rs`) gives only slowly or not on
//!   demand; [`StatusServer`]: a stand-in for the capture's
//!   `/status`, which the operator polls and `kubectl redoline status` reads.
//!
//! Everything returns [`anyhow::Result`]; the tests decide what a failure means.

use std::fmt;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, Secret};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, Resource};
use redoline_crds::{ByteQuantity, OracleCapture};
use redoline_operator::build::OperatorSettings;
use redoline_operator::controller::{self, ControllerSettings, WatchScope};
use redoline_operator::leader::{self, LeaderError, LeaderSettings, RoleCell};
use redoline_operator::metrics::Metrics;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::k8s::{KubeEnv, TestNamespace, apply_crd};

/// The sample OracleCapture, `crds/examples/oraclecapture.yaml`.
pub const SAMPLE: &str = include_str!("../../crds/examples/oraclecapture.yaml");
/// The sample's name.
pub const NAME: &str = "orders";
/// The capture image the tests run the operator with.
pub const CAPTURE_IMAGE: &str = "ghcr.io/redoline/redoline-capture:0.1.0";
/// How long a stopped controller may take to end.
pub const STOP_WITHIN: Duration = Duration::from_secs(30);

/// The sample OracleCapture as written.
pub fn sample() -> anyhow::Result<OracleCapture> {
    serde_norway::from_str(SAMPLE).context("the sample OracleCapture")
}

/// The sample OracleCapture, moved into `namespace`.
pub fn sample_in(namespace: &str) -> anyhow::Result<OracleCapture> {
    let mut sample = sample()?;
    sample.metadata.namespace = Some(namespace.to_owned());
    Ok(sample)
}

/// Sets the fields of `block` (a JSON object) in `capture`'s `spec.kafka`, keeping the others:
/// the sample with one more Kafka setting, as a user writes it.
pub fn set_kafka_fields(
    capture: &mut OracleCapture,
    block: &serde_json::Value,
) -> anyhow::Result<()> {
    let mut kafka = serde_json::to_value(&capture.spec.kafka)?;
    let (Some(fields), Some(added)) = (kafka.as_object_mut(), block.as_object()) else {
        anyhow::bail!("spec.kafka and {block} must both be JSON objects");
    };
    fields.extend(added.clone());
    capture.spec.kafka = serde_json::from_value(kafka).context("spec.kafka with the block")?;
    Ok(())
}

/// Creates `capture` in its namespace and returns it as stored.
pub async fn create_capture(
    client: &Client,
    capture: &OracleCapture,
) -> anyhow::Result<OracleCapture> {
    let namespace = capture
        .metadata
        .namespace
        .as_deref()
        .context("the OracleCapture has no namespace")?;
    Api::<OracleCapture>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), capture)
        .await
        .context("creating the OracleCapture")
}

/// Creates the sample OracleCapture in `namespace`.
pub async fn create_sample(client: &Client, namespace: &str) -> anyhow::Result<OracleCapture> {
    create_capture(client, &sample_in(namespace)?).await
}

/// Creates a Secret `name` in `namespace` with `string_data` (a JSON object).
pub async fn create_secret(
    client: &Client,
    namespace: &str,
    name: &str,
    string_data: serde_json::Value,
) -> anyhow::Result<Secret> {
    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": name}, "stringData": string_data}))?;
    Api::<Secret>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &secret)
        .await
        .with_context(|| format!("creating the Secret {name}"))
}

/// The two Secrets the sample references, with every key it reads.
pub async fn create_sample_secrets(client: &Client, namespace: &str) -> anyhow::Result<()> {
    for (name, keys) in [
        ("orders-db-cdc", json!({"username": "u", "password": "p"})),
        ("orders-kafka-client", json!({"client.properties": ""})),
    ] {
        create_secret(client, namespace, name, keys).await?;
    }
    Ok(())
}

/// Server-side applies `object` through `api` as `field_manager` (forcing conflicts), as the
/// operator applies its children.
pub async fn apply<K>(api: &Api<K>, field_manager: &str, object: &K) -> anyhow::Result<K>
where
    K: Resource<DynamicType = ()> + Clone + fmt::Debug + Serialize + DeserializeOwned,
{
    let name = object
        .meta()
        .name
        .clone()
        .context("the object has no name")?;
    api.patch(
        &name,
        &PatchParams::apply(field_manager).force(),
        &Patch::Apply(object),
    )
    .await
    .with_context(|| format!("{} {name} refused", K::kind(&())))
}

/// Controller settings for a test: only `namespace` is watched, with [`CAPTURE_IMAGE`]; the rest
/// are the defaults, for the test to adjust.
pub fn controller_settings(namespace: &str) -> ControllerSettings {
    let mut settings = ControllerSettings::new(OperatorSettings {
        default_image: CAPTURE_IMAGE.into(),
        simulator_scenarios: None,
    });
    settings.scope = WatchScope::Namespaces(vec![namespace.to_owned()]);
    settings
}

/// A controller running in this process.
#[derive(Debug)]
pub struct Controller {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Controller {
    /// Spawns the controller with `settings` on the current runtime.
    pub fn start(client: Client, settings: ControllerSettings) -> Controller {
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(controller::run(client, settings, async move {
            let _ = stopped.await;
        }));
        Controller { stop, task }
    }

    /// Sends the shutdown signal and waits (at most [`STOP_WITHIN`]) for the controller to end.
    pub async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        tokio::time::timeout(STOP_WITHIN, self.task)
            .await
            .context("the controller stops on its shutdown signal")?
            .context("controller task")
    }
}

/// Spawns the controller behind leader election with `election`: it runs while this process
/// holds the Lease. Sending on (or dropping) the returned sender shuts it down gracefully.
pub fn elected(
    client: Client,
    settings: ControllerSettings,
    election: LeaderSettings,
    role: RoleCell,
    metrics: Option<Arc<Metrics>>,
) -> (oneshot::Sender<()>, JoinHandle<Result<(), LeaderError>>) {
    let (stop, stopped) = oneshot::channel::<()>();
    let controller_client = client.clone();
    let task = tokio::spawn(leader::run_elected(
        client,
        election,
        role,
        metrics,
        async move {
            let _ = stopped.await;
        },
        move |stop| controller::run(controller_client, settings, stop),
    ));
    (stop, task)
}

/// The admin client, after applying the OracleCapture CRD, and a fresh namespace for `test`.
pub async fn admin_and_namespace(test: &str) -> anyhow::Result<(Client, TestNamespace)> {
    let env = KubeEnv::shared()?;
    let client = env.client().await?;
    apply_crd(&client, &redoline_crds::crd()).await?;
    let ns = env.namespace(test).await?;
    Ok((client, ns))
}

/// A controller running in this process over one fresh namespace.
pub struct Harness {
    /// The admin client.
    pub client: Client,
    pub ns: TestNamespace,
    /// The OracleCaptures of the namespace.
    pub captures: Api<OracleCapture>,
    controller: Controller,
}

impl fmt::Debug for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Harness")
            .field("ns", &self.ns)
            .field("controller", &self.controller)
            .finish_non_exhaustive()
    }
}

impl Harness {
    /// Makes a namespace for `test` and starts the controller over it, with
    /// [`controller_settings`] as changed by `configure`.
    pub async fn start(
        test: &str,
        configure: impl FnOnce(&mut ControllerSettings),
    ) -> anyhow::Result<Harness> {
        let (client, ns) = admin_and_namespace(test).await?;
        let mut settings = controller_settings(&ns.name);
        configure(&mut settings);
        let controller = Controller::start(client.clone(), settings);
        let captures = Api::namespaced(client.clone(), &ns.name);
        Ok(Harness {
            client,
            ns,
            captures,
            controller,
        })
    }

    /// An API of the test namespace.
    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
    {
        Api::namespaced(self.client.clone(), &self.ns.name)
    }

    /// Creates the sample OracleCapture in the test namespace.
    pub async fn create_sample(&self) -> anyhow::Result<OracleCapture> {
        create_sample(&self.client, &self.ns.name).await
    }

    /// Merge-patches the sample's spec with `spec` (a JSON object) and returns the generation
    /// that makes.
    pub async fn patch_spec(&self, spec: serde_json::Value) -> anyhow::Result<i64> {
        let patched = self
            .captures
            .patch(
                NAME,
                &PatchParams::default(),
                &Patch::Merge(json!({ "spec": spec })),
            )
            .await
            .context("patching the spec")?;
        patched
            .metadata
            .generation
            .context("the patched OracleCapture has no generation")
    }

    /// An Event about the sample with this reason, if there is one yet.
    pub async fn event_with_reason(&self, reason: &str) -> anyhow::Result<Option<Event>> {
        event_with_reason(&self.client, &self.ns.name, reason).await
    }

    /// Stops the controller (graceful) and deletes the namespace.
    pub async fn finish(self) -> anyhow::Result<()> {
        self.controller.stop().await?;
        self.ns.delete().await;
        Ok(())
    }
}

/// Polls OracleCapture `name` every `every` until `accept` holds and returns it; once `within`
/// has passed, fails naming `what` and showing the last status it read.
pub async fn wait_for_capture(
    captures: &Api<OracleCapture>,
    name: &str,
    what: &str,
    within: Duration,
    every: Duration,
    accept: impl Fn(&OracleCapture) -> bool,
) -> anyhow::Result<OracleCapture> {
    let last = Mutex::new(None);
    let (last, accept) = (&last, &accept);
    let found = crate::wait::eventually(what, within, every, || async move {
        let capture = captures.get(name).await.ok()?;
        if accept(&capture) {
            return Some(capture);
        }
        if let Ok(mut last) = last.lock() {
            *last = capture.status;
        }
        None
    })
    .await;
    found.map_err(|e| {
        let status = last
            .lock()
            .ok()
            .and_then(|last| serde_json::to_string_pretty(&*last).ok())
            .unwrap_or_default();
        anyhow::anyhow!("{e}; status: {status}")
    })
}

/// Whether the status describes the OracleCapture's current generation (kstatus' rule).
pub fn observes_its_generation(capture: &OracleCapture) -> bool {
    capture.status.as_ref().and_then(|s| s.observed_generation) == capture.metadata.generation
}

/// Whether condition `type_` of the status has `status` and `reason`.
pub fn has_condition(capture: &OracleCapture, type_: &str, status: &str, reason: &str) -> bool {
    capture
        .status
        .as_ref()
        .and_then(|s| s.condition(type_))
        .is_some_and(|c| c.status == status && c.reason == reason)
}

/// An Event in `namespace` about the sample OracleCapture ([`NAME`]) with this reason, if any.
pub async fn event_with_reason(
    client: &Client,
    namespace: &str,
    reason: &str,
) -> anyhow::Result<Option<Event>> {
    Ok(sample_events(client, namespace)
        .await?
        .into_iter()
        .find(|e| e.reason.as_deref() == Some(reason)))
}

/// The reasons of the Events in `namespace` about the sample OracleCapture ([`NAME`]), oldest
/// first.
pub async fn event_reasons(client: &Client, namespace: &str) -> anyhow::Result<Vec<String>> {
    let mut events = sample_events(client, namespace).await?;
    events.sort_by(|a, b| a.event_time.cmp(&b.event_time));
    Ok(events.into_iter().filter_map(|e| e.reason).collect())
}

async fn sample_events(client: &Client, namespace: &str) -> anyhow::Result<Vec<Event>> {
    let events = Api::<Event>::namespaced(client.clone(), namespace)
        .list(&ListParams::default())
        .await
        .context("listing Events")?;
    Ok(events
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(NAME))
        .collect())
}

/// The storage a claim requests, in bytes (the apiserver may write the quantity in another form).
pub fn requested_storage(claim: &PersistentVolumeClaim) -> Option<u64> {
    let quantity = claim
        .spec
        .as_ref()?
        .resources
        .as_ref()?
        .requests
        .as_ref()?
        .get("storage")?;
    ByteQuantity::quantity(&quantity.0).bytes().ok()
}

/// Posts a `FailedMount` Event about `pod`, as the kubelet does when a volume of it cannot be
/// mounted (core/v1, `source.component: kubelet`, `message` in the kubelet's words), last seen
/// `at` (whole seconds, as the kubelet's `lastTimestamp`).
pub async fn post_failed_mount(
    client: &Client,
    pod: &Pod,
    message: &str,
    at: k8s_openapi::jiff::Timestamp,
) -> anyhow::Result<()> {
    let namespace = pod
        .metadata
        .namespace
        .as_deref()
        .context("the pod's namespace")?;
    let name = pod.metadata.name.as_deref().context("the pod's name")?;
    let at = at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let event: k8s_openapi::api::core::v1::Event = serde_json::from_value(json!({
        "metadata": {"generateName": format!("{name}.")},
        "involvedObject": {
            "kind": "Pod",
            "apiVersion": "v1",
            "namespace": namespace,
            "name": name,
            "uid": pod.metadata.uid,
        },
        "reason": "FailedMount",
        "type": "Warning",
        "message": message,
        "source": {"component": "kubelet", "host": "redoline-node"},
        "firstTimestamp": at,
        "lastTimestamp": at,
        "count": 1,
    }))?;
    Api::<k8s_openapi::api::core::v1::Event>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &event)
        .await
        .context("posting a FailedMount Event")?;
    Ok(())
}

/// Writes the status of pod `name`, as the kubelet would.
pub async fn write_pod_status(
    pods: &Api<Pod>,
    name: &str,
    status: serde_json::Value,
) -> anyhow::Result<()> {
    pods.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({ "status": status })),
    )
    .await
    .with_context(|| format!("writing the status of pod {name}"))?;
    Ok(())
}

/// A container's status in a capture pod, running [`CAPTURE_IMAGE`]; `state` is one of the
/// kubelet's (`{"waiting": ...}`, `{"running": ...}`, [`terminated`]).
pub fn container_status(name: &str, state: serde_json::Value, ready: bool) -> serde_json::Value {
    json!({
        "name": name,
        "image": CAPTURE_IMAGE,
        "imageID": "",
        "ready": ready,
        "restartCount": 0,
        "state": state,
    })
}

/// The state of a container that ended with `exit_code`, leaving `message` as its termination
/// message.
pub fn terminated(exit_code: i32, message: &str) -> serde_json::Value {
    json!({"terminated": {
        "exitCode": exit_code,
        "reason": if exit_code == 0 { "Completed" } else { "Error" },
        "message": message,
        "startedAt": "2026-11-29T10:00:00Z",
        "finishedAt": "2026-11-29T10:00:05Z",
    }})
}

/// The status of a capture pod at `ip` whose doctor passed and whose capture runs and is ready
/// (its `/readyz` passes, so it streams).
pub fn ready_pod_status(ip: &str) -> serde_json::Value {
    json!({
        "phase": "Running",
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "conditions": [{"type": "Ready", "status": "True"}],
        "initContainerStatuses": [container_status("doctor", terminated(0, ""), false)],
        "containerStatuses": [container_status(
            "capture",
            json!({"running": {"startedAt": "2026-11-29T10:00:06Z"}}),
            true,
        )],
    })
}

/// A stand-in for a capture's `/status`, on a thread of its own until dropped: answers
/// `GET /status` on its listener with the JSON in `body` at that moment, and 404 to anything
/// else. Dropping it closes the listener (within one accept poll), as when the capture's
/// `/status` goes away.
#[derive(Debug)]
pub struct StatusServer {
    port: u16,
    stop: Arc<AtomicBool>,
}

/// How often the server looks for a connection or for being dropped.
const ACCEPT_POLL: Duration = Duration::from_millis(20);
/// Bound of reading one request: a client that sends half a request does not hold the server.
const REQUEST_WITHIN: Duration = Duration::from_secs(5);

impl StatusServer {
    pub fn start(listener: TcpListener, body: Arc<Mutex<String>>) -> anyhow::Result<Self> {
        listener
            .set_nonblocking(true)
            .context("a non-blocking listener")?;
        let port = listener
            .local_addr()
            .context("the listener's address")?
            .port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                let Ok((stream, _)) = listener.accept() else {
                    std::thread::sleep(ACCEPT_POLL);
                    continue;
                };
                // A failed answer is the client's to notice, as with a real capture.
                let _ = answer(stream, &body);
            }
        });
        Ok(Self { port, stop })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for StatusServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Reads one request's head from `stream` and answers it (`Connection: close`).
fn answer(mut stream: TcpStream, body: &Mutex<String>) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(REQUEST_WITHIN))?;
    let mut request = Vec::new();
    let mut buffer = [0u8; 4096];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => request.extend_from_slice(&buffer[..n]),
        }
    }
    let (status, answer) = if request.starts_with(b"GET /status ") {
        ("200 OK", body.lock().map(|b| b.clone()).unwrap_or_default())
    } else {
        ("404 Not Found", "not found".to_owned())
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
        answer.len()
    )
}
