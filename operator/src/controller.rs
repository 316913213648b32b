//! The reconciler: drives every OracleCapture towards its desired state and reports what it sees.
//!
//! ```text
//! trigger ─▶ build (pure) ─▶ apply: SA, ConfigMap, Service, StatefulSet
//!         ─▶ observe: StatefulSet, pod <name>-capture-0 and its FailedMount Events,
//!            GET <podIP>:8080/status
//!         ─▶ status::compute (pure) ─▶ apply status (only when changed) ─▶ Events
//! ```
//!
//! The StatefulSet, the pod and the kubelet's Events are read from watch caches ([`watch::Caches`]) fed by
//! the same watches that trigger reconciles, and a child is applied only when its desired state
//! changed or its cached copy is not the one last applied ([`apply::AppliedChildren`]): a
//! reconcile of an idle capture makes no API call. A new spill size replaces the StatefulSet
//! ([`resize`]). One reconcile is a short driver over these steps, each a function failing with
//! its own [`Error`] variant (`reconcile.rs`).
//!
//! # Triggers
//! A reconcile runs when the OracleCapture changes, when an object it owns changes (StatefulSet,
//! ConfigMap, Service, ServiceAccount: found through their controller owner reference), when its
//! capture pod changes (pods labelled `app.kubernetes.io/name=redoline-capture`, mapped back
//! through `app.kubernetes.io/instance`), and when the kubelet reports that the capture pod's
//! volume cannot be mounted (a `FailedMount` Event about `<name>-capture-0`). While a capture
//! pod runs it also requeues every `status_poll_interval`, which is how `status.lagSeconds` stays
//! fresh; otherwise it resyncs every [`RESYNC_INTERVAL`] as a safety net, or sooner when no
//! capture streams and the lag estimated from the stored position will cross `spec.sla` before
//! then ([`crate::status::lag_breach_in`]).
//!
//! # Secrets
//! The operator reads no Secret and holds no permission on them: it only names them in the pod
//! template. A missing Secret or key keeps the pod in `ContainerCreating`, and the kubelet says
//! why in `FailedMount` Events about the pod; those become `Stalled` with reason
//! `SecretNotFound` or `SecretKeyMissing` and a message naming the spec field
//! ([`crate::status::mount_problem`]), a problem the user fixes, not an error to retry. Once the
//! Secret is there, the kubelet's next mount attempt starts the pod. A changed credential needs no
//! rollout: the kubelet refreshes the mounted files and the capture, which follows them, ends
//! cleanly and is started again with them (`redoline_capture::rotation`).
//!
//! # Status writes
//! The status is written with server-side apply on the status subresource, and only when it
//! differs from the last one, so an idle capture costs no writes. The last status this process
//! wrote is remembered per object and is what transitions are computed against: the watch cache
//! may still hold the one before it, and comparing against that would repeat the Events of a
//! transition already published.
//!
//! # Errors
//! API errors back off per object, doubling from [`BACKOFF_BASE`] to [`BACKOFF_MAX`], and publish
//! a Warning Event with the error's [`Error::reason`]. A spec the builders refuse, or a child the
//! API server refuses as invalid (HTTP 422, such as a change to the StatefulSet's selector), is no
//! error but a `Stalled` condition (reason `InvalidSpec` or
//! `ApplyRejected`), as retrying the same object cannot fix it; the status still follows the
//! generation, so GitOps tools see the failure instead of waiting.

pub mod apply;
mod memory;
pub mod observe;
mod reconcile;
pub mod resize;
pub mod watch;

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use futures::future::{BoxFuture, FutureExt, Shared};
use k8s_openapi::api::core::v1::{Event, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client, Resource, ResourceExt};
use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::OracleCaptureStatus;

use crate::build::OperatorSettings;
use crate::events::EventPublisher;
use crate::status::failing;
use memory::Memory;

/// Label every capture pod carries; the operator watches pods by it.
pub const CAPTURE_POD_SELECTOR: &str = "app.kubernetes.io/name=redoline-capture";
/// Label naming the OracleCapture a pod belongs to.
const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
/// Label on every child the operator writes; owned objects are watched by it.
const MANAGED_SELECTOR: &str = "app.kubernetes.io/managed-by=redoline-operator";

/// Reconcile of an idle capture, in case a trigger was missed.
pub const RESYNC_INTERVAL: Duration = Duration::from_secs(600);
/// First retry after a failed reconcile.
pub const BACKOFF_BASE: Duration = Duration::from_secs(1);
/// Longest wait between retries of a failing reconcile.
pub const BACKOFF_MAX: Duration = Duration::from_secs(300);
/// Longest wait of a reconcile for the watch caches' first lists.
const CACHE_READY_LIMIT: Duration = Duration::from_secs(30);
/// Failed reconciles in a row (about 15 s with the backoff) after which the status says so.
const STALL_AFTER_FAILURES: u32 = 5;
/// The Event reason when the capture's `/status` stops answering the operator's polls.
pub const STATUS_UNANSWERED: &str = "StatusUnanswered";

/// Which namespaces the operator watches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchScope {
    AllNamespaces,
    /// Only these namespaces (one set of watches each).
    Namespaces(Vec<String>),
}

/// How the controller runs.
#[derive(Clone, Debug)]
pub struct ControllerSettings {
    pub build: OperatorSettings,
    pub scope: WatchScope,
    /// How often a running capture's `/status` is polled.
    pub status_poll_interval: Duration,
    /// The port of the capture's `/status`; [`crate::build::HTTP_PORT`] except in tests that
    /// stand in for a capture on loopback.
    pub status_port: u16,
    /// Upper bound of one `/status` poll.
    pub status_timeout: Duration,
    /// Most reconciles running at once (per watched namespace); also bounds concurrent polls.
    pub concurrency: u16,
    /// Tells replicas apart in Events (the pod name when running in a pod).
    pub instance: Option<String>,
    /// Where reconciles are counted and timed; none in tests that do not look.
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
}

impl ControllerSettings {
    pub fn new(build: OperatorSettings) -> Self {
        Self {
            build,
            scope: WatchScope::AllNamespaces,
            status_poll_interval: Duration::from_secs(30),
            status_port: crate::build::HTTP_PORT as u16,
            status_timeout: Duration::from_secs(3),
            concurrency: 16,
            instance: None,
            metrics: None,
        }
    }
}

/// Why a reconcile failed: one variant per step of the reconcile that can fail, in their order.
/// The reconcile is retried with backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the OracleCapture's identity (and the builders reading its metadata).
    #[error("the OracleCapture has no {0}")]
    MissingMetadata(&'static str),
    /// Waiting for the watch caches' first lists.
    #[error("the watch caches did not fill within {CACHE_READY_LIMIT:?}; see the operator's log")]
    CachesNotReady,
    /// Replacing the StatefulSet for a new spill size, before applying it.
    #[error("resizing the spill volume: {0}")]
    Resize(#[source] kube::Error),
    /// Applying the children.
    #[error(transparent)]
    Apply(apply::ApplyError),
    /// Writing the status.
    #[error(transparent)]
    WriteStatus(apply::ApplyError),
}

impl Error {
    /// A stable CamelCase name: the reason of the Warning Event about this failure.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::MissingMetadata(_) => "MissingMetadata",
            Error::CachesNotReady => "CachesNotReady",
            Error::Resize(_) => "ResizeFailed",
            Error::Apply(_) => "ApplyFailed",
            // A server-side apply too: the reason the docs, dashboards and alerts already name.
            Error::WriteStatus(_) => "ApplyFailed",
        }
    }
}

/// What every reconcile of one controller shares.
struct Context {
    client: Client,
    settings: ControllerSettings,
    events: EventPublisher,
    captures: Store<OracleCapture>,
    /// StatefulSets, Pods, FailedMount Events and the other children, as the watches last saw
    /// them.
    caches: watch::Caches,
    memory: Mutex<Memory>,
}

impl Context {
    fn memory(&self) -> std::sync::MutexGuard<'_, Memory> {
        // A panic while holding the lock cannot leave the maps half-updated in a harmful way.
        self.memory.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Runs the controller until `shutdown` resolves, then lets running reconciles finish.
pub async fn run(
    client: Client,
    settings: ControllerSettings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let shutdown: Shared<BoxFuture<'static, ()>> = shutdown.boxed().shared();
    let events = EventPublisher::new(client.clone(), settings.instance.clone());
    let namespaces = match &settings.scope {
        WatchScope::AllNamespaces => vec![None],
        WatchScope::Namespaces(names) => names.iter().cloned().map(Some).collect(),
    };
    let controllers = namespaces.into_iter().map(|namespace| {
        run_one(
            client.clone(),
            settings.clone(),
            events.clone(),
            namespace,
            shutdown.clone(),
        )
    });
    futures::future::join_all(controllers).await;
}

fn api<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
{
    match namespace {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    }
}

/// One controller with its watches over one namespace, or over all of them.
async fn run_one(
    client: Client,
    settings: ControllerSettings,
    events: EventPublisher,
    namespace: Option<String>,
    shutdown: Shared<BoxFuture<'static, ()>>,
) {
    let ns = namespace.as_deref();
    // Lists may come from the API server's watch cache (`any_semantic`): a slightly old start is
    // fine for a level-based reconciler, and it keeps restarts cheap for etcd. The children,
    // pods and FailedMount Events are watched once each, feeding both the triggers and the caches the
    // reconciler reads (see `watch::watch`).
    let (caches, feeds) = watch::watch(&client, ns);
    let (captures, capture_feed) = watch::watch_captures(&client, ns);
    let controller = Controller::for_stream(capture_feed, captures.clone());
    if let Some(metrics) = &settings.metrics {
        metrics.track_captures(captures.clone());
    }
    let config = controller::Config::default().concurrency(settings.concurrency);
    let context = Arc::new(Context {
        client: client.clone(),
        settings,
        events,
        captures,
        caches,
        memory: Mutex::new(Memory::default()),
    });
    tracing::info!(namespace = ns.unwrap_or("*"), "watching OracleCaptures");
    controller
        .with_config(config)
        .owns_stream(feeds.stateful_sets)
        .owns_stream(feeds.config_maps)
        .owns_stream(feeds.services)
        .owns_stream(feeds.service_accounts)
        .watches_stream(feeds.pods, capture_of_pod)
        .watches_stream(feeds.mount_failures, capture_of_mount_failure)
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, context)
        .for_each(|result| async move {
            match result {
                Ok((object, _)) => tracing::debug!(%object, "reconciled"),
                Err(controller::Error::ReconcilerFailed(error, object)) => {
                    tracing::warn!(%object, %error, "reconcile failed")
                }
                Err(error) => tracing::warn!(%error, "controller error"),
            }
        })
        .await;
    tracing::info!(namespace = ns.unwrap_or("*"), "controller stopped");
}

/// The OracleCapture a capture pod belongs to.
fn capture_of_pod(pod: Pod) -> Option<ObjectRef<OracleCapture>> {
    let instance = pod.labels().get(INSTANCE_LABEL)?;
    let namespace = pod.namespace()?;
    Some(ObjectRef::new(instance).within(&namespace))
}

/// The OracleCapture whose pod a `FailedMount` Event is about: the pod is `<name>-capture-0`
/// (the Event carries no labels). An Event about another pod maps to no capture, or to one whose
/// reconcile finds no such Event of its own pod and changes nothing.
fn capture_of_mount_failure(event: Event) -> Option<ObjectRef<OracleCapture>> {
    let object = &event.involved_object;
    let name = object.name.as_deref()?.strip_suffix("-capture-0")?;
    let namespace = object
        .namespace
        .as_deref()
        .or(event.metadata.namespace.as_deref())?;
    Some(ObjectRef::new(name).within(namespace))
}

fn object_key(capture: &OracleCapture) -> String {
    format!(
        "{}/{}",
        capture.metadata.namespace.as_deref().unwrap_or(""),
        capture.metadata.name.as_deref().unwrap_or("")
    )
}

async fn reconcile(capture: Arc<OracleCapture>, context: Arc<Context>) -> Result<Action, Error> {
    let started = std::time::Instant::now();
    let result = reconcile::reconcile_capture(&capture, &context).await;
    if let Some(metrics) = &context.settings.metrics {
        let reason = result.as_ref().err().map(Error::reason);
        metrics.reconcile.record(started.elapsed(), reason);
    }
    match &result {
        Ok(_) => {
            context.memory().failures.remove(&object_key(&capture));
        }
        Err(error) => {
            context
                .events
                .reconcile_failed(&capture.object_ref(&()), error.reason(), &error.to_string())
                .await;
            let failures = {
                let mut memory = context.memory();
                let count = memory.failures.entry(object_key(&capture)).or_insert(0);
                *count = count.saturating_add(1);
                *count
            };
            if failures >= STALL_AFTER_FAILURES {
                write_failing_status(&capture, &context, error).await;
            }
        }
    }
    result
}

/// Says in the status that reconciles keep failing ([`failing`]). Best effort: when the status
/// write is refused too, the Events and the log are all there is.
async fn write_failing_status(capture: &OracleCapture, context: &Context, error: &Error) {
    let (Some(name), Some(namespace), Some(uid)) = (
        capture.metadata.name.as_deref(),
        capture.metadata.namespace.as_deref(),
        capture.metadata.uid.clone(),
    ) else {
        return;
    };
    let status = failing(
        capture.status.as_ref(),
        capture.metadata.generation,
        error.reason(),
        &error.to_string(),
        &now(),
    );
    if capture.status.as_ref() == Some(&status) {
        return;
    }
    let api = Api::namespaced(context.client.clone(), namespace);
    match apply::status(&api, name, &status).await {
        Ok(()) => remember(context, uid, status),
        Err(refused) => tracing::warn!(
            capture = name,
            namespace,
            error = %refused,
            "the status saying that reconciles fail was refused too"
        ),
    }
}

fn error_policy(capture: Arc<OracleCapture>, error: &Error, context: Arc<Context>) -> Action {
    // Counted by `reconcile`, which always runs first.
    let failures = context
        .memory()
        .failures
        .get(&object_key(&capture))
        .copied()
        .unwrap_or(1);
    let delay = backoff(failures);
    tracing::warn!(
        object = %object_key(&capture),
        reason = error.reason(),
        %error,
        failures,
        retry_in = ?delay,
        "reconcile failed"
    );
    Action::requeue(delay)
}

/// Wait before retry number `failures` (1 for the first): doubling, capped.
fn backoff(failures: u32) -> Duration {
    let exponent = failures.saturating_sub(1).min(16);
    BACKOFF_BASE
        .saturating_mul(1u32 << exponent)
        .min(BACKOFF_MAX)
}

/// The current time at the precision the API keeps (whole seconds), so a status read back
/// compares equal to the one written.
fn now() -> Time {
    let now = Timestamp::now();
    Time(Timestamp::from_second(now.as_second()).unwrap_or(now))
}

/// Records a written status, forgetting objects that are gone once the map outgrows the store.
fn remember(context: &Context, uid: String, status: OracleCaptureStatus) {
    let mut memory = context.memory();
    memory.capture(&uid).written = Some(status);
    let live = context.captures.state();
    if memory.captures.len() > live.len() + 64 {
        memory.keep_only(&live);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(2), Duration::from_secs(2));
        assert_eq!(backoff(5), Duration::from_secs(16));
        assert_eq!(backoff(30), BACKOFF_MAX);
        assert_eq!(backoff(u32::MAX), BACKOFF_MAX);
    }

    #[test]
    fn a_capture_pod_maps_to_its_owner() {
        let pod = Pod {
            metadata: ObjectMeta {
                name: Some("orders-capture-0".into()),
                namespace: Some("sales".into()),
                labels: Some(
                    [
                        (
                            "app.kubernetes.io/name".to_owned(),
                            "redoline-capture".to_owned(),
                        ),
                        (INSTANCE_LABEL.to_owned(), "orders".to_owned()),
                    ]
                    .into(),
                ),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        };
        assert_eq!(
            capture_of_pod(pod),
            Some(ObjectRef::new("orders").within("sales"))
        );
        assert_eq!(capture_of_pod(Pod::default()), None);
    }

    #[test]
    fn a_failed_mount_maps_to_the_capture_of_the_pod() {
        use k8s_openapi::api::core::v1::ObjectReference;
        let event = |name: &str| Event {
            metadata: ObjectMeta {
                namespace: Some("sales".into()),
                ..ObjectMeta::default()
            },
            involved_object: ObjectReference {
                kind: Some("Pod".into()),
                name: Some(name.into()),
                namespace: Some("sales".into()),
                ..ObjectReference::default()
            },
            reason: Some("FailedMount".into()),
            ..Event::default()
        };
        assert_eq!(
            capture_of_mount_failure(event("orders-capture-0")),
            Some(ObjectRef::new("orders").within("sales"))
        );
        assert_eq!(capture_of_mount_failure(event("web-7f9c")), None);
    }

    #[test]
    fn now_has_whole_seconds() {
        assert_eq!(now().0.subsec_nanosecond(), 0);
    }
}
