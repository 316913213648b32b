//! Reading the world for one OracleCapture: the Secrets it references, its StatefulSet and pod,
//! and the capture's own `/status` endpoint.
//!
//! Everything here only reads. What it returns is plain data for the pure status module
//! ([`crate::status`]); errors of the API server are passed up (the reconcile backs off), while a
//! capture that does not answer its `/status` poll is not an error: it simply gives no report, and
//! the status says the lag is unknown.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use http_body_util::{BodyExt, Empty, Limited};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::Api;
use redoline_crds::v1alpha1::OracleCaptureSpec;
use sha2::{Digest, Sha256};

use crate::status::{CaptureReport, ContainerState, PodObservation, WorkloadObservation};

/// Condition reason: a referenced Secret does not exist.
pub const SECRET_NOT_FOUND: &str = "SecretNotFound";
/// Condition reason: a referenced Secret lacks a key the capture reads.
pub const SECRET_KEY_MISSING: &str = "SecretKeyMissing";

/// The largest `/status` answer read; the real one is a few hundred bytes.
const MAX_STATUS_BYTES: usize = 64 * 1024;
/// Longest life of a poll's connection task, even if the capture never closes the socket.
const POLL_CONNECTION_LIFETIME: Duration = Duration::from_secs(30);

/// What the referenced Secrets look like right now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretCheck {
    /// The first problem found, as (condition reason, message); the message names every problem
    /// and the spec field that references the Secret.
    pub problem: Option<(String, String)>,
    /// SHA-256 over each referenced Secret's name, uid and resourceVersion. It changes whenever a
    /// Secret is replaced or edited, without putting anything derived from the secret material on
    /// the pod template.
    pub digest: String,
}

/// One Secret the spec names, and the keys the capture needs from it.
struct SecretReference<'a> {
    field: &'static str,
    name: &'a str,
    /// (key, the spec field naming the key)
    keys: Vec<(&'a str, &'static str)>,
}

fn references(spec: &OracleCaptureSpec) -> Vec<SecretReference<'_>> {
    let credentials = &spec.database.credentials_secret;
    let mut references = vec![SecretReference {
        field: "spec.database.credentialsSecret",
        name: &credentials.name,
        keys: vec![
            (
                &credentials.username_key,
                "spec.database.credentialsSecret.usernameKey",
            ),
            (
                &credentials.password_key,
                "spec.database.credentialsSecret.passwordKey",
            ),
        ],
    }];
    if let Some(wallet) = &spec.database.wallet_secret {
        references.push(SecretReference {
            field: "spec.database.walletSecret",
            name: &wallet.name,
            keys: Vec::new(),
        });
    }
    if let Some(kafka) = &spec.kafka.config_secret {
        references.push(SecretReference {
            field: "spec.kafka.configSecret",
            name: &kafka.name,
            keys: Vec::new(),
        });
    }
    references
}

/// Whether the Secret named `secret` is one the spec references (used to map Secret watch events
/// to the captures that read them).
pub fn references_secret(spec: &OracleCaptureSpec, secret: &str) -> bool {
    references(spec).iter().any(|r| r.name == secret)
}

/// Reads every Secret the spec references and checks the keys the capture needs.
pub async fn check_secrets(
    secrets: &Api<Secret>,
    spec: &OracleCaptureSpec,
) -> Result<SecretCheck, kube::Error> {
    let mut problems: Vec<(&'static str, String)> = Vec::new();
    let mut digest = Sha256::new();
    for reference in references(spec) {
        let Some(secret) = secrets.get_opt(reference.name).await? else {
            problems.push((
                SECRET_NOT_FOUND,
                format!(
                    "Secret {:?} named by {} does not exist",
                    reference.name, reference.field
                ),
            ));
            continue;
        };
        digest.update(format!(
            "{}\t{}\t{}\t{}\n",
            reference.field,
            reference.name,
            secret.metadata.uid.as_deref().unwrap_or(""),
            secret.metadata.resource_version.as_deref().unwrap_or("")
        ));
        let has = |key: &str| {
            secret.data.as_ref().is_some_and(|d| d.contains_key(key))
                || secret
                    .string_data
                    .as_ref()
                    .is_some_and(|d| d.contains_key(key))
        };
        for (key, key_field) in &reference.keys {
            if !has(key) {
                problems.push((
                    SECRET_KEY_MISSING,
                    format!(
                        "Secret {:?} named by {} has no key {key:?} (set by {key_field})",
                        reference.name, reference.field
                    ),
                ));
            }
        }
    }
    let problem = problems.first().map(|(reason, _)| {
        let message = problems
            .iter()
            .map(|(_, message)| message.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        ((*reason).to_owned(), message)
    });
    Ok(SecretCheck {
        problem,
        digest: hex(&digest.finalize()),
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The StatefulSet's rollout state, `None` while it does not exist.
pub async fn workload(
    stateful_sets: &Api<StatefulSet>,
    name: &str,
) -> Result<Option<WorkloadObservation>, kube::Error> {
    Ok(stateful_sets
        .get_opt(name)
        .await?
        .as_ref()
        .map(WorkloadObservation::from_stateful_set))
}

/// The capture pod (the StatefulSet's only ordinal) and its IP, `None` while there is no pod.
pub async fn pod(
    pods: &Api<Pod>,
    workload_name: &str,
) -> Result<Option<(PodObservation, Option<IpAddr>)>, kube::Error> {
    let Some(pod) = pods.get_opt(&format!("{workload_name}-0")).await? else {
        return Ok(None);
    };
    let ip = pod
        .status
        .as_ref()
        .and_then(|s| s.pod_ip.as_deref())
        .and_then(|ip| ip.parse().ok());
    Ok(Some((PodObservation::from_pod(&pod), ip)))
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
    fn every_referenced_secret_is_known() {
        let spec = fixtures::sample().spec;
        assert!(references_secret(&spec, "orders-db-cdc"));
        assert!(references_secret(&spec, "orders-kafka-client"));
        assert!(!references_secret(&spec, "someone-else"));
        let fields: Vec<_> = references(&spec).iter().map(|r| r.field).collect();
        assert_eq!(
            fields,
            ["spec.database.credentialsSecret", "spec.kafka.configSecret"]
        );
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
