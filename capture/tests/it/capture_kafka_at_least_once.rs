#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! `kafka.exactlyOnce: false`: an idempotent producer without transactions; each page's data is
//! acknowledged before its bookmark is written, so a clean run publishes everything once and a
//! second run resumes after it without repeating.

use crate::kafka_support;

use kafka_support::{Capture, TABLES, bootstrap, ids, insert, read_values};

#[test]
fn at_least_once_publishes_every_transaction_and_resumes_after_the_bookmark() {
    let bootstrap = bootstrap();
    let mut scenario = String::from(TABLES);
    let mut expected = Vec::new();
    for id in 1..=200u64 {
        scenario.push_str(&insert(&format!("t{id}"), id, "x"));
        if id % 7 == 0 {
            scenario.push_str(&format!("{{\"tx\":\"t{id}\",\"rollback\":true}}\n"));
        } else {
            scenario.push_str(&format!("{{\"tx\":\"t{id}\",\"commit\":true}}\n"));
            expected.push(id);
        }
    }
    let prefix = kafka_support::unique_prefix("at-least-once");
    let capture = Capture::new(&scenario, &bootstrap, &prefix, "");
    capture.write_config_with(
        "capture.yaml",
        &bootstrap,
        &prefix,
        0,
        ", exactlyOnce: false",
        "",
    );
    for _ in 0..2 {
        let (code, stderr) = capture.run("capture.yaml");
        assert_eq!(code, 0, "{stderr}");
        let seen = ids(&read_values(&bootstrap, &format!("{prefix}.APP.ITEMS")));
        assert_eq!(seen, expected);
    }
}
