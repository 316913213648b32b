#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The harness of the end-to-end tests (`run_support::Running`) on a capture that cannot start:
//! its HTTP port is taken, as when two tests were handed one port. The wait must fail at once
//! with what the capture said, not poll a dead process's port until its patience runs out.

use std::net::{TcpListener, TcpStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use crate::run_support;

use run_support::Capture;

#[test]
fn a_wait_on_a_capture_that_exited_fails_at_once_with_its_account() {
    // The port taken the way a busy machine takes one: the local end of a connection.
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = TcpStream::connect(server.local_addr().unwrap()).unwrap();
    let port = client.local_addr().unwrap().port();
    let capture = Capture::new(
        &["APP.ORDERS"],
        r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}
"#,
        &format!("http: {{port: {port}}}\n"),
    );
    let mut running = capture.start();
    let started = Instant::now();
    let failure = catch_unwind(AssertUnwindSafe(|| {
        running.wait_for(port, "streaming", |status| status["state"] == "streaming")
    }))
    .expect_err("a capture without its port never streams");
    let waited = started.elapsed();
    let message = failure
        .downcast_ref::<String>()
        .expect("a formatted panic message");
    assert!(
        waited < run_support::STATUS_PATIENCE / 2,
        "failed after {waited:?}: {message}"
    );
    assert!(message.contains("the capture exited"), "{message}");
    assert!(message.contains("streaming"), "what was awaited: {message}");
    assert!(message.contains("none answered"), "{message}");
    // The capture's own account, on its stderr (a failure to listen is not a typed stop: the pod
    // restarts, and no termination message is written).
    assert!(
        message.contains(&format!("cannot listen on port {port}")),
        "{message}"
    );
    assert!(message.contains("termination message: none"), "{message}");
    drop(client);
}
