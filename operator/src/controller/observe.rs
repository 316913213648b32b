//! Reading the world for one OracleCapture: its StatefulSet and pod, and the capture's own
//! `/status` endpoint (the Secrets it references: [`super::secrets`]).
//!
//! Everything here only reads, and the Kubernetes objects come from the watch caches
//! ([`Caches`], set up by [`watch`]), so observing costs no API call. What it returns is plain
//! data for the pure status module ([`crate::status`]); a capture that does not answer its
//! `/status` poll is not an error: it simply gives no report, and the status says the lag is
//! unknown.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::{BoxStream, Stream};
use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, Service, ServiceAccount};
use kube::api::PartialObjectMeta;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource};
use redoline_crds::OracleCapture;

use crate::status::{CaptureReport, ContainerState, PodObservation, WorkloadObservation};

/// The largest `/status` answer read; the real one is a few hundred bytes.
const MAX_STATUS_BYTES: usize = 64 * 1024;
/// Longest life of a poll's connection task, even if the capture never closes the socket.
const POLL_CONNECTION_LIFETIME: Duration = Duration::from_secs(30);

/// The caches the reconciler reads instead of asking the API server: one reflector per watched
/// kind, fed by the same watches that trigger reconciles, so reading them costs no API call.
///
/// To keep the operator small with many captures, what is cached is trimmed to what the
/// reconciler reads: no `managedFields` anywhere, no pod template spec in StatefulSets, no pod
/// spec in Pods. Secrets are watched as metadata only (their values never reach the cache), and
/// ConfigMaps, Services and ServiceAccounts are kept as metadata only.
#[derive(Clone)]
pub struct Caches {
    pub stateful_sets: Store<StatefulSet>,
    pub pods: Store<Pod>,
    /// Metadata only: [`super::secrets`] reads a referenced Secret when its version moves.
    pub secrets: Store<PartialObjectMeta<Secret>>,
    pub config_maps: Store<PartialObjectMeta<ConfigMap>>,
    pub services: Store<PartialObjectMeta<Service>>,
    pub service_accounts: Store<PartialObjectMeta<ServiceAccount>>,
}

impl std::fmt::Debug for Caches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caches")
            .field("stateful_sets", &self.stateful_sets.len())
            .field("pods", &self.pods.len())
            .field("secrets", &self.secrets.len())
            .finish_non_exhaustive()
    }
}

/// A watch already passed through its cache, ready to trigger reconciles.
pub type Feed<K> = BoxStream<'static, Result<K, watcher::Error>>;

/// The watch streams behind [`Caches`]; each must be polled (by the controller) for its cache to
/// fill.
pub struct Feeds {
    pub stateful_sets: Feed<StatefulSet>,
    pub pods: Feed<Pod>,
    pub secrets: Feed<PartialObjectMeta<Secret>>,
    pub config_maps: Feed<PartialObjectMeta<ConfigMap>>,
    pub services: Feed<PartialObjectMeta<Service>>,
    pub service_accounts: Feed<PartialObjectMeta<ServiceAccount>>,
}

impl std::fmt::Debug for Feeds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feeds").finish_non_exhaustive()
    }
}

impl Caches {
    /// Waits until every cache holds its initial list (immediate once they did), for at most
    /// `limit`; false when some cache is still empty then (its watch keeps failing, e.g. for want
    /// of a permission).
    pub async fn ready(&self, limit: Duration) -> bool {
        let all = async {
            futures::join!(
                self.stateful_sets.wait_until_ready(),
                self.pods.wait_until_ready(),
                self.secrets.wait_until_ready(),
                self.config_maps.wait_until_ready(),
                self.services.wait_until_ready(),
                self.service_accounts.wait_until_ready(),
            )
        };
        // An error inside means the watch was dropped: the controller is shutting down.
        tokio::time::timeout(limit, all).await.is_ok()
    }
}

/// Sets up the watches of one namespace (or all) and their caches.
pub fn watch(client: &Client, namespace: Option<&str>) -> (Caches, Feeds) {
    // Lists may come from the API server's watch cache (`any_semantic`): a slightly old start is
    // fine for a level-based reconciler, and it keeps restarts cheap for etcd.
    let owned = || {
        watcher::Config::default()
            .labels(super::MANAGED_SELECTOR)
            .any_semantic()
    };
    let (stateful_sets, stateful_set_feed) = cached(
        watcher(super::api(client, namespace), owned()),
        trim_stateful_set,
    );
    let (pods, pod_feed) = cached(
        watcher(
            super::api(client, namespace),
            watcher::Config::default()
                .labels(super::CAPTURE_POD_SELECTOR)
                .any_semantic(),
        ),
        trim_pod,
    );
    // Metadata only: no Secret value crosses the wire or sits in the cache.
    let (secrets, secret_feed) = cached(
        watcher(
            super::api::<PartialObjectMeta<Secret>>(client, namespace),
            watcher::Config::default().any_semantic(),
        ),
        trim_meta,
    );
    let (config_maps, config_map_feed) =
        cached(watcher(super::api(client, namespace), owned()), trim_meta);
    let (services, service_feed) =
        cached(watcher(super::api(client, namespace), owned()), trim_meta);
    let (service_accounts, service_account_feed) =
        cached(watcher(super::api(client, namespace), owned()), trim_meta);
    (
        Caches {
            stateful_sets,
            pods,
            secrets,
            config_maps,
            services,
            service_accounts,
        },
        Feeds {
            stateful_sets: stateful_set_feed,
            pods: pod_feed,
            secrets: secret_feed,
            config_maps: config_map_feed,
            services: service_feed,
            service_accounts: service_account_feed,
        },
    )
}

/// The watch of the OracleCaptures themselves and the controller's store of them, trimmed like
/// the other caches: no `managedFields`, no `kubectl.kubernetes.io/last-applied-configuration`
/// (nothing reads them, and with many resources they are most of the memory).
pub fn watch_captures(
    client: &Client,
    namespace: Option<&str>,
) -> (Store<OracleCapture>, Feed<OracleCapture>) {
    let (store, writer) = reflector::store();
    let feed = watcher(
        super::api(client, namespace),
        watcher::Config::default().any_semantic(),
    )
    .default_backoff()
    .modify(trim_capture)
    .reflect(writer)
    .applied_objects()
    .boxed();
    (store, feed)
}

fn trim_capture(capture: &mut OracleCapture) {
    trim_meta(capture);
    if let Some(annotations) = capture.metadata.annotations.as_mut() {
        annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
}

/// Trims each object, keeps it in a new cache, and passes every touched object (deletions
/// included, so a deleted child is put back) on as a trigger.
fn cached<K>(
    events: impl Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
    trim: fn(&mut K),
) -> (Store<K>, Feed<K>)
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    let (store, writer) = reflector::store();
    let feed = events
        .default_backoff()
        .modify(trim)
        .reflect(writer)
        .touched_objects()
        .boxed();
    (store, feed)
}

fn trim_meta<K: Resource>(object: &mut K) {
    object.meta_mut().managed_fields = None;
}

fn trim_stateful_set(sts: &mut StatefulSet) {
    trim_meta(sts);
    if let Some(spec) = sts.spec.as_mut() {
        spec.template.spec = None;
    }
}

fn trim_pod(pod: &mut Pod) {
    trim_meta(pod);
    pod.spec = None;
}

/// The StatefulSet's rollout state from the cache, `None` while it does not exist.
pub fn workload(
    stateful_sets: &Store<StatefulSet>,
    namespace: &str,
    name: &str,
) -> Option<WorkloadObservation> {
    stateful_sets
        .get(&ObjectRef::new(name).within(namespace))
        .map(|sts| WorkloadObservation::from_stateful_set(&sts))
}

/// The capture pod (the StatefulSet's only ordinal) and its IP from the cache, `None` while there
/// is no pod.
pub fn pod(pods: &Store<Pod>, namespace: &str, workload_name: &str) -> Option<CapturePod> {
    let pod = pods.get(&ObjectRef::new(&format!("{workload_name}-0")).within(namespace))?;
    let ip = pod
        .status
        .as_ref()
        .and_then(|s| s.pod_ip.as_deref())
        .and_then(|ip| ip.parse().ok());
    Some(CapturePod {
        observation: PodObservation::from_pod(&pod),
        ip,
        uid: pod.metadata.uid.clone().unwrap_or_default(),
    })
}

/// The capture pod as a reconcile sees it.
#[derive(Clone, Debug)]
pub struct CapturePod {
    pub observation: PodObservation,
    /// Where its `/status` answers, once it has an address.
    pub ip: Option<IpAddr>,
    /// Tells a new pod of the StatefulSet from the one before.
    pub uid: String,
}

/// Whether the capture container runs, so that `/status` can answer.
pub fn capture_running(pod: &PodObservation) -> bool {
    matches!(pod.capture.state, ContainerState::Running { .. })
}

/// Why a `/status` poll gave no report.
#[derive(Debug, thiserror::Error)]
pub enum PollError {
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("connecting: {0}")]
    Connect(#[source] std::io::Error),
    #[error("HTTP: {0}")]
    Http(#[source] hyper::Error),
    #[error("building the request: {0}")]
    Request(#[source] hyper::http::Error),
    #[error("answered HTTP {0}")]
    Status(hyper::StatusCode),
    #[error("reading the body: {0}")]
    Body(String),
    #[error("the body is not a capture status: {0}")]
    Decode(#[source] serde_json::Error),
}

/// `GET http://<ip>:<port>/status` with an overall timeout.
///
/// One request per connection: polls are seconds apart, so keeping connections open would only
/// hold a socket per capture.
pub async fn poll_status(
    ip: IpAddr,
    port: u16,
    timeout: Duration,
) -> Result<CaptureReport, PollError> {
    tokio::time::timeout(timeout, poll_status_unbounded(SocketAddr::new(ip, port)))
        .await
        .map_err(|_| PollError::Timeout(timeout))?
}

async fn poll_status_unbounded(address: SocketAddr) -> Result<CaptureReport, PollError> {
    let stream = tokio::net::TcpStream::connect(address)
        .await
        .map_err(PollError::Connect)?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(PollError::Http)?;
    let request = hyper::Request::get("/status")
        .header(hyper::header::HOST, address.to_string())
        .header(hyper::header::ACCEPT, "application/json")
        .body(Empty::<Bytes>::new())
        .map_err(PollError::Request)?;
    // The connection drives the socket on its own task, bounded like the poll; it ends once the
    // answer is read and the sender is dropped, or when the poll gave up.
    let timeout = POLL_CONNECTION_LIFETIME;
    tokio::spawn(async move {
        let _ = tokio::time::timeout(timeout, connection).await;
    });
    let response = sender
        .send_request(request)
        .await
        .map_err(PollError::Http)?;
    if !response.status().is_success() {
        return Err(PollError::Status(response.status()));
    }
    let body = Limited::new(response.into_body(), MAX_STATUS_BYTES)
        .collect()
        .await
        .map_err(|e| PollError::Body(e.to_string()))?
        .to_bytes();
    serde_json::from_slice::<CaptureReport>(&body).map_err(PollError::Decode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::fixtures;

    #[test]
    fn cached_pods_and_stateful_sets_lose_their_specs() {
        let children = crate::build::build(&fixtures::sample(), &fixtures::settings()).unwrap();
        let mut sts = children.stateful_set;
        trim_stateful_set(&mut sts);
        let spec = sts.spec.as_ref().unwrap();
        assert!(spec.template.spec.is_none());
        assert!(spec.volume_claim_templates.is_some(), "kept for resizes");
        let mut pod = Pod {
            spec: Some(Default::default()),
            ..Pod::default()
        };
        trim_pod(&mut pod);
        assert!(pod.spec.is_none());
    }

    #[tokio::test]
    async fn a_status_poll_reads_the_capture_report() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut request = vec![0u8; 1024];
            let n = socket.read(&mut request).unwrap();
            let body = r#"{"state":"streaming","commitScn":42,"restartScn":40,"lagSeconds":1.5}"#;
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(answer.as_bytes()).unwrap();
            String::from_utf8_lossy(&request[..n]).into_owned()
        });
        let report = poll_status("127.0.0.1".parse().unwrap(), port, Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(report.state, "streaming");
        assert_eq!(report.commit_scn, Some(42));
        assert_eq!(report.lag_seconds, Some(1.5));
        assert!(
            server
                .join()
                .unwrap()
                .starts_with("GET /status HTTP/1.1\r\n")
        );
    }

    #[tokio::test]
    async fn a_silent_capture_times_out() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let _held = tokio::spawn(async move {
            let accepted = listener.accept().await;
            tokio::time::sleep(Duration::from_secs(10)).await;
            drop(accepted);
        });
        let error = poll_status(
            "127.0.0.1".parse().unwrap(),
            port,
            Duration::from_millis(200),
        )
        .await
        .unwrap_err();
        assert!(matches!(error, PollError::Timeout(_)), "{error}");
    }
}
