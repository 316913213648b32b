//! Reading the world for one OracleCapture: its StatefulSet and pod, the kubelet's
//! `FailedMount` Events about the pod (a Secret or key it cannot mount), and the capture's own
//! `/status` endpoint.
//!
//! Everything here only reads, and the Kubernetes objects come from the watch caches
//! ([`super::watch::Caches`]), so observing costs no API call. What it returns is plain
//! data for the pure status module ([`crate::status`]); a capture that does not answer its
//! `/status` poll is not an error: it simply gives no report, and the status says the lag is
//! unknown.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Event, Pod};
use k8s_openapi::jiff::Timestamp;
use kube::runtime::reflector::{ObjectRef, Store};

use crate::status::{CaptureReport, ContainerState, PodObservation, WorkloadObservation};

/// The largest `/status` answer read; the real one is a few hundred bytes.
const MAX_STATUS_BYTES: usize = 64 * 1024;
/// Longest life of a poll's connection task, even if the capture never closes the socket.
const POLL_CONNECTION_LIFETIME: Duration = Duration::from_secs(30);

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

/// The messages of the kubelet's `FailedMount` Events about the pod with `pod_uid` (this pod, not
/// an earlier one of the same name), newest first.
pub fn mount_failures(events: &Store<Event>, namespace: &str, pod_uid: &str) -> Vec<String> {
    let mut found: Vec<(Option<Timestamp>, String)> = events
        .state()
        .iter()
        .filter(|event| event.metadata.namespace.as_deref() == Some(namespace))
        .filter(|event| event.involved_object.uid.as_deref() == Some(pod_uid))
        .filter_map(|event| Some((last_seen(event), event.message.clone()?)))
        .collect();
    found.sort_by_key(|(seen, _)| std::cmp::Reverse(*seen));
    found.into_iter().map(|(_, message)| message).collect()
}

/// When an Event was last seen: its series, its `lastTimestamp` (core/v1 writers such as the
/// kubelet), its `eventTime`, or when it was created.
fn last_seen(event: &Event) -> Option<Timestamp> {
    event
        .series
        .as_ref()
        .and_then(|series| series.last_observed_time.as_ref())
        .map(|time| time.0)
        .or_else(|| event.last_timestamp.as_ref().map(|time| time.0))
        .or_else(|| event.event_time.as_ref().map(|time| time.0))
        .or_else(|| {
            event
                .metadata
                .creation_timestamp
                .as_ref()
                .map(|time| time.0)
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
        assert_eq!(
            report.state,
            Some(redoline_crds::capture::CaptureState::Streaming)
        );
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
