//! The capture's HTTP face (contracts, "Capture HTTP endpoints"), on `http.port` (8080):
//!
//! | path | answer |
//! |---|---|
//! | `/metrics` | the capture's registry in the Prometheus text format |
//! | `/healthz` | 200 while the process is alive and not wedged: the mining loop beat within [`StatusBoard::wedged_after`]; 503 `wedged` otherwise, so the kubelet restarts it |
//! | `/readyz` | 200 once streaming; 503 with the state before (starting, snapshotting) and after (stopping) |
//! | `/status` | the JSON position and buffer figures the operator polls |
//!
//! The engine writes into a [`StatusBoard`]; handlers only read it.

use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use jiff::{SignedDuration, Timestamp};
use prometheus::Registry;
use redoline_crds::metrics_endpoint;

pub use redoline_crds::capture::{CaptureState, StatusReport};

use crate::sink::SinkStatus;

#[derive(Debug)]
struct Board {
    report: StatusReport,
    last_beat: Timestamp,
    /// Read at every report: the sink changes it while it retries inside a page commit, when
    /// the mining loop cannot update the board.
    sink: Option<SinkStatus>,
}

/// The status the engine publishes and the endpoints read.
#[derive(Clone, Debug)]
pub struct StatusBoard {
    inner: Arc<Mutex<Board>>,
    wedged_after: SignedDuration,
}

impl StatusBoard {
    /// A board in state `starting`; `/healthz` fails once the loop has not beaten for
    /// `wedged_after` (choose it above the longest legitimate pause, such as a call timeout).
    pub fn new(started_at: Timestamp, wedged_after: SignedDuration) -> Self {
        let report = StatusReport {
            state: CaptureState::Starting,
            commit_scn: None,
            commit_time: None,
            restart_scn: None,
            lag_seconds: None,
            open_transactions: 0,
            buffered_events: 0,
            heap_bytes: 0,
            spilled_transactions: 0,
            spilled_bytes: 0,
            journaled_transactions: 0,
            started_at: started_at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
            version: crate::VERSION,
            producer: None,
            snapshot: Default::default(),
            oldest_transaction: None,
            threads: Vec::new(),
            reposition: None,
            archived_redo: None,
            config_file: None,
        };
        Self {
            inner: Arc::new(Mutex::new(Board {
                report,
                last_beat: started_at,
                sink: None,
            })),
            wedged_after,
        }
    }

    pub fn wedged_after(&self) -> SignedDuration {
        self.wedged_after
    }

    /// Changes the report (and counts as a heartbeat at `now`).
    pub fn update(&self, now: Timestamp, change: impl FnOnce(&mut StatusReport)) {
        let mut board = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        change(&mut board.report);
        board.last_beat = now;
    }

    /// The mining loop is alive at `now`.
    pub fn beat(&self, now: Timestamp) {
        self.update(now, |_| {});
    }

    /// Shows the Kafka producer's state in every later report.
    pub fn attach_sink(&self, status: SinkStatus) {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .sink = Some(status);
    }

    pub fn report(&self) -> StatusReport {
        let board = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let mut report = board.report.clone();
        report.producer = board.sink.as_ref().map(SinkStatus::get);
        report
    }

    fn wedged(&self, now: Timestamp) -> bool {
        let last = self
            .inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last_beat;
        now.duration_since(last) > self.wedged_after
    }
}

#[derive(Clone, Debug)]
struct Shared {
    board: StatusBoard,
    registry: Registry,
}

/// The router with the four endpoints.
pub fn router(board: StatusBoard, registry: Registry) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/status", get(status))
        .with_state(Shared { board, registry })
}

async fn metrics(State(shared): State<Shared>) -> Response {
    metrics_endpoint::response(metrics_endpoint::render(&shared.registry))
}

async fn healthz(State(shared): State<Shared>) -> (StatusCode, &'static str) {
    if shared.board.wedged(Timestamp::now()) {
        (StatusCode::SERVICE_UNAVAILABLE, "wedged\n")
    } else {
        (StatusCode::OK, "ok\n")
    }
}

async fn readyz(State(shared): State<Shared>) -> (StatusCode, &'static str) {
    match shared.board.report().state {
        CaptureState::Streaming => (StatusCode::OK, "streaming\n"),
        CaptureState::Starting => (StatusCode::SERVICE_UNAVAILABLE, "starting\n"),
        CaptureState::Snapshotting => (StatusCode::SERVICE_UNAVAILABLE, "snapshotting\n"),
        CaptureState::Stopping => (StatusCode::SERVICE_UNAVAILABLE, "stopping\n"),
    }
}

async fn status(State(shared): State<Shared>) -> Response {
    match serde_json::to_vec(&shared.board.report()) {
        Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(error) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{error}\n")).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use redoline_crds::capture::SnapshotProgress;
    use tower::ServiceExt;

    async fn get_path(router: &Router, path: &str) -> (StatusCode, String) {
        let request = Request::get(path).body(Body::empty()).unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn endpoints_follow_the_board() {
        let registry = Registry::new();
        let counter = prometheus::IntCounter::new("redoline_capture_test_total", "a test").unwrap();
        registry.register(Box::new(counter.clone())).unwrap();
        counter.inc();
        let board = StatusBoard::new(Timestamp::now(), SignedDuration::from_secs(60));
        let router = router(board.clone(), registry);

        assert_eq!(
            get_path(&router, "/healthz").await,
            (StatusCode::OK, "ok\n".into())
        );
        assert_eq!(
            get_path(&router, "/readyz").await.0,
            StatusCode::SERVICE_UNAVAILABLE
        );
        let (_, metrics) = get_path(&router, "/metrics").await;
        assert!(
            metrics.contains("redoline_capture_test_total 1"),
            "{metrics}"
        );

        board.update(Timestamp::now(), |report| {
            report.state = CaptureState::Streaming;
            report.commit_scn = Some(2_146_951);
            report.lag_seconds = Some(1.5);
        });
        assert_eq!(
            get_path(&router, "/readyz").await,
            (StatusCode::OK, "streaming\n".into())
        );
        let (_, status) = get_path(&router, "/status").await;
        let status: serde_json::Value = serde_json::from_str(&status).unwrap();
        assert_eq!(status["state"], "streaming");
        assert_eq!(status["commitScn"], 2_146_951);
        assert_eq!(status["restartScn"], serde_json::Value::Null);
        assert_eq!(
            status["commitTime"],
            serde_json::Value::Null,
            "not known yet"
        );
        assert_eq!(status["lagSeconds"], 1.5);
        for field in [
            "openTransactions",
            "bufferedEvents",
            "heapBytes",
            "spilledTransactions",
            "spilledBytes",
            "commitTime",
            "startedAt",
            "version",
        ] {
            assert!(status.get(field).is_some(), "{field} missing from {status}");
        }
    }

    #[tokio::test]
    async fn a_loop_that_stops_beating_is_wedged() {
        let long_ago = Timestamp::now() - SignedDuration::from_secs(600);
        let board = StatusBoard::new(long_ago, SignedDuration::from_secs(60));
        let router = router(board.clone(), Registry::new());
        assert_eq!(
            get_path(&router, "/healthz").await.0,
            StatusCode::SERVICE_UNAVAILABLE
        );
        board.beat(Timestamp::now());
        assert_eq!(get_path(&router, "/healthz").await.0, StatusCode::OK);
    }

    /// The capture's `/status` read by the operator's reader, for every state and with the
    /// snapshot's figures and an incremental snapshot's progress.
    #[tokio::test]
    async fn the_operator_reads_the_status_the_capture_serves() {
        use redoline_crds::capture::{CaptureReport, Time};
        use redoline_crds::v1alpha1;
        let board = StatusBoard::new(Timestamp::now(), SignedDuration::from_secs(60));
        let router = router(board.clone(), Registry::new());
        let request = v1alpha1::SnapshotRequestStatus {
            id: "reread-orders-1".into(),
            state: v1alpha1::SnapshotRequestState::Running,
            started_at: Some(Time("2024-01-02T03:04:05Z".parse().unwrap())),
            finished_at: None,
            message: None,
            tables: vec![v1alpha1::SnapshotTableStatus {
                table: "APP.ORDERS".into(),
                state: v1alpha1::SnapshotRequestState::Running,
                rows_read: 1200,
                rows_estimate: Some(50_000),
            }],
        };
        for state in [
            CaptureState::Starting,
            CaptureState::Snapshotting,
            CaptureState::Streaming,
            CaptureState::Stopping,
        ] {
            board.update(Timestamp::now(), |report| {
                report.state = state;
                report.commit_scn = Some(5000);
                report.commit_time = Some(Time("2024-01-02T03:04:05.9Z".parse().unwrap()));
                report.restart_scn = Some(4000);
                report.lag_seconds = Some(2.5);
                report.snapshot.initial = Some(SnapshotProgress {
                    tables_total: 3,
                    tables_done: 1,
                    rows_scanned: 1200,
                    rows_remaining_estimate: Some(4800),
                });
                report.snapshot.requests = vec![request.clone()];
            });
            let (_, served) = get_path(&router, "/status").await;
            let read: CaptureReport = serde_json::from_str(&served).unwrap();
            let snapshot = v1alpha1::SnapshotProgress {
                tables_total: Some(3),
                tables_done: Some(1),
                rows_scanned: Some(1200),
                rows_remaining_estimate: Some(4800),
                requests: vec![request.clone()],
            };
            assert_eq!(
                read,
                CaptureReport {
                    state: Some(state),
                    commit_scn: Some(5000),
                    // Whole seconds, rounded down: never later than the position's time.
                    commit_time: Some(Time("2024-01-02T03:04:05Z".parse().unwrap())),
                    restart_scn: Some(4000),
                    lag_seconds: Some(2.5),
                    snapshot: Some(snapshot),
                    reposition: None,
                    archived_redo: None,
                },
                "{served}"
            );
        }
    }
}
