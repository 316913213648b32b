//! The operator's own HTTP endpoints, on `--metrics-addr` (default `0.0.0.0:8080`):
//!
//! | path | answer |
//! |---|---|
//! | `/metrics` | the [`Metrics`] registry in the Prometheus text format |
//! | `/healthz` | 200 `ok` while the process runs (liveness) |
//! | `/readyz` | 200 `leader` or `standby` while this replica takes part in the election; 503 `starting` before it could read the Lease, and `stopping` once it shuts down or lost leadership |
//!
//! Readiness deliberately includes a healthy standby: a Deployment rollout waits for new pods to
//! become ready, and a standby could never become leader while the old pods hold the Lease. Which
//! replica leads is the `redoline_operator_leader` gauge (and the Lease's `holderIdentity`).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use redoline_crds::metrics_endpoint;

use crate::leader::{Role, RoleCell};
use crate::metrics::Metrics;

/// What the handlers read.
#[derive(Clone, Debug)]
struct Shared {
    metrics: Arc<Metrics>,
    role: RoleCell,
}

/// The router with `/metrics`, `/healthz` and `/readyz`.
pub fn router(metrics: Arc<Metrics>, role: RoleCell) -> Router {
    Router::new()
        .route("/metrics", get(serve_metrics))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .with_state(Shared { metrics, role })
}

async fn serve_metrics(State(shared): State<Shared>) -> Response {
    metrics_endpoint::response(shared.metrics.render().map(String::into_bytes))
}

async fn readyz(State(shared): State<Shared>) -> (StatusCode, &'static str) {
    match shared.role.get() {
        Role::Leader => (StatusCode::OK, "leader\n"),
        Role::Standby => (StatusCode::OK, "standby\n"),
        Role::Starting => (StatusCode::SERVICE_UNAVAILABLE, "starting\n"),
        Role::Stopping => (StatusCode::SERVICE_UNAVAILABLE, "stopping\n"),
    }
}

/// Binds `address`; done before anything else so a taken port fails the start at once.
pub async fn bind(address: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(address).await
}

/// Serves `router` on `listener` until `shutdown` resolves, then finishes open requests.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Registry;

    /// One request on a fresh connection (blocking std I/O on the blocking pool).
    async fn get_path(address: SocketAddr, path: &str) -> String {
        let path = path.to_owned();
        tokio::task::spawn_blocking(move || {
            use std::io::{Read, Write};
            let mut stream = std::net::TcpStream::connect(address).unwrap();
            let request = format!("GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
            stream.write_all(request.as_bytes()).unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).unwrap();
            answer
        })
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn endpoints_answer_and_the_server_stops() {
        let metrics = Metrics::new(&Registry::new()).unwrap();
        let role = RoleCell::default();
        let listener = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(listener, router(metrics, role.clone()), async move {
            let _ = stopped.await;
        }));

        assert!(
            get_path(address, "/healthz")
                .await
                .starts_with("HTTP/1.1 200")
        );
        let ready = get_path(address, "/readyz").await;
        assert!(
            ready.starts_with("HTTP/1.1 503") && ready.ends_with("starting\n"),
            "{ready}"
        );
        role.set(Role::Standby);
        let ready = get_path(address, "/readyz").await;
        assert!(
            ready.starts_with("HTTP/1.1 200") && ready.ends_with("standby\n"),
            "{ready}"
        );
        role.set(Role::Leader);
        assert!(get_path(address, "/readyz").await.ends_with("leader\n"));
        let metrics = get_path(address, "/metrics").await;
        assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
        assert!(metrics.contains("redoline_operator_leader 0"), "{metrics}");
        assert!(
            get_path(address, "/nothing")
                .await
                .starts_with("HTTP/1.1 404")
        );

        stop.send(()).unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(5), server)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
    }
}
