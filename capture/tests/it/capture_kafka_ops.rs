#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The buffer's operational events and dead letters reach their topics: a transaction older than
//! `transactions.maxAgeSeconds` with `maxAgeAction: discard` is dropped, its ops event goes to
//! `<prefix>.redoline.ops` and its dead letter to `<prefix>.redoline.dlq`, in a page whose
//! bookmark lists it in the released ledger.

use crate::kafka_support;

use std::time::Duration;

use kafka_support::{Capture, POLL, TABLES, bootstrap, ids, insert, read_values};

#[test]
fn a_discarded_transaction_is_published_to_the_ops_and_dlq_topics() {
    let bootstrap = bootstrap();
    let mut scenario = String::from(TABLES);
    scenario.push_str(&insert("stuck", 1, "never committed"));
    scenario.push_str(&insert("done", 2, "x"));
    scenario.push_str("{\"tx\":\"done\",\"commit\":true}\n");
    let prefix = kafka_support::unique_prefix("ops");
    let capture = Capture::new(
        &scenario,
        &bootstrap,
        &prefix,
        "transactions: {maxAgeSeconds: 1, maxAgeAction: discard}\n\
         mining: {pollIntervalSeconds: 1}\n",
    );
    let mut child = capture.spawn("capture.yaml", false, "ops");
    let ops_topic = format!("{prefix}.redoline.ops");
    child.wait_until("the ops event", Duration::from_secs(60), POLL, |_| {
        kafka_support::try_read_values(&bootstrap, &ops_topic).is_some_and(|ops| !ops.is_empty())
    });
    child.kill();

    let ops = read_values(&bootstrap, &ops_topic);
    assert_eq!(ops.len(), 1, "{ops:?}");
    assert_eq!(ops[0]["type"], "transaction-discarded", "{ops:?}");
    let xid = ops[0]["xid"].as_str().unwrap().to_owned();
    let dlq = read_values(&bootstrap, &format!("{prefix}.redoline.dlq"));
    assert_eq!(dlq.len(), 1, "{dlq:?}");
    assert_eq!(dlq[0]["reason"], "transaction-discarded");
    assert_eq!(dlq[0]["xid"], xid.as_str());
    let bookmarks = read_values(&bootstrap, &format!("{prefix}.redoline.offsets"));
    let released = &bookmarks.last().unwrap()["released"];
    assert!(
        released
            .as_array()
            .unwrap()
            .iter()
            .any(|entry| entry["xid"].as_str().unwrap().eq_ignore_ascii_case(&xid)),
        "the bookmark's ledger lists it: {released}"
    );
    assert_eq!(
        ids(&read_values(&bootstrap, &format!("{prefix}.APP.ITEMS"))),
        [2]
    );
}
