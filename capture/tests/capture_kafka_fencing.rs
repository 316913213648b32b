#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Two capture processes with one identity: the second one's `init_transactions` fences the
//! first, which stops with CDC-5001 (its termination message says so) instead of writing on;
//! the second carries on from the last committed bookmark, and a `read_committed` consumer sees
//! every transaction once.

mod kafka_support;

use std::time::Duration;

use kafka_support::{
    Capture, TABLES, bootstrap, free_port, ids, insert, read_values, status, wait_for,
};

#[test]
fn a_second_instance_fences_the_first_which_stops_with_cdc_5001() {
    let bootstrap = bootstrap();
    // Enough one-row transactions (a Kafka transaction each) that the first instance is still
    // writing when the second one starts.
    let mut scenario = String::from(TABLES);
    let mut expected = Vec::new();
    for id in 1..=3000u64 {
        scenario.push_str(&insert(&format!("t{id}"), id, "x"));
        scenario.push_str(&format!("{{\"tx\":\"t{id}\",\"commit\":true}}\n"));
        expected.push(id);
    }
    let prefix = kafka_support::unique_prefix("fencing");
    let capture = Capture::new(&scenario, &bootstrap, &prefix, "");
    let (first_port, second_port) = (free_port(), free_port());
    capture.write_config("first.yaml", &bootstrap, &prefix, first_port, "");
    capture.write_config("second.yaml", &bootstrap, &prefix, second_port, "");

    let mut first = capture.spawn("first.yaml", false, "first");
    wait_for(
        "the first instance to commit",
        Duration::from_secs(60),
        || {
            status(first_port).is_some_and(|report| {
                report["producer"]["state"] == "ready"
                    && report["commitScn"]
                        .as_u64()
                        .is_some_and(|scn| scn > 1_000_100)
            })
        },
    );
    let second = capture.spawn("second.yaml", true, "second");

    let mut exited = None;
    wait_for(
        "the first instance to stop",
        Duration::from_secs(60),
        || {
            exited = first.try_wait().unwrap();
            exited.is_some()
        },
    );
    let stderr = std::io::read_to_string(first.stderr.take().unwrap()).unwrap();
    assert_eq!(exited.unwrap().code(), Some(3), "a typed stop: {stderr}");
    let message = capture.termination("first").expect("a termination message");
    assert_eq!(message["code"], "CDC-5001", "{message}");
    assert!(
        message["details"]["transactionalId"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{prefix}/test")),
        "{message}"
    );

    let output = second.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen = ids(&read_values(&bootstrap, &format!("{prefix}.APP.ITEMS")));
    assert_eq!(seen, expected, "every transaction once across the takeover");
}
