//! The capture's HTTP face as the end-to-end tests reach it: a free port to serve it on, and
//! `GET /status` and `GET /metrics`. Shared by `run_support` and `kafka_support`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

/// A free loopback port for the HTTP face.
pub use redoline_testenv::process::free_port;

/// The body of `GET path` of a capture on `port`, or `None` while it does not answer.
fn get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    Some(response.split_once("\r\n\r\n")?.1.to_owned())
}

/// `GET /status` of a capture on `port`, or `None` while it does not answer.
pub fn status(port: u16) -> Option<Value> {
    serde_json::from_str(&get(port, "/status")?).ok()
}

/// The value of an unlabelled metric from `GET /metrics` of a capture on `port`, or `None` while
/// it does not answer or has no such sample.
#[allow(dead_code)] // not every test binary using this module reads metrics
pub fn metric(port: u16, name: &str) -> Option<f64> {
    get(port, "/metrics")?.lines().find_map(|line| {
        let (sample, value) = line.split_once(' ')?;
        (sample == name).then(|| value.trim().parse().ok())?
    })
}
