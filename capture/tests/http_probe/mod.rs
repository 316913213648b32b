//! The capture's HTTP face as the end-to-end tests reach it: a free port to serve it on, and
//! `GET /status` (or any path). Shared by `run_support` and `kafka_support`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

/// A free loopback port for the HTTP face.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET /status` of a capture on `port`, or `None` while it does not answer.
pub fn status(port: u16) -> Option<Value> {
    serde_json::from_str(&get(port, "/status")?).ok()
}

/// The body of `GET <path>` of a capture on `port`, or `None` while it does not answer.
pub fn get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
}
