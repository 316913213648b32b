#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! A database whose host is not in UTC (issue 31, N5): LogMiner's TIMESTAMP and
//! COMMIT_TIMESTAMP are the host's local time, and the events must still carry the true UTC
//! instants, across a DST switch inside one run, with the lag counted in UTC.

use serde_json::Value;

use crate::run_support;

use run_support::{Capture, Running};

const TABLE: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"STATUS","type":"VARCHAR2(16)"}],"logging":"all"}
"#;

/// Europe/Berlin moves from +01:00 to +02:00 at 2024-03-31 01:00:00 UTC.
const BEFORE_SPRING_SWITCH_MS: i64 = 1_711_846_798_000; // 2024-03-31T00:59:58Z, 01:59:58 local
const AFTER_SPRING_SWITCH_MS: i64 = 1_711_846_803_000; // 2024-03-31T01:00:03Z, 03:00:03 local

/// A database whose host is in `zone` with its clock at `time` (local), and a committed
/// transaction `a` inserting the row with `status`.
fn scenario(zone: &str, time: &str, status: &str) -> String {
    format!(
        "{{\"database\":{{\"time_zone\":\"{zone}\",\"time\":\"{time}\"}}}}\n\
         {TABLE}\
         {{\"tx\":\"a\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":1,\"STATUS\":\"{status}\"}}}}\n\
         {{\"tx\":\"a\",\"commit\":true}}\n"
    )
}

/// A Debezium-format capture (it carries `source.ts_ms`) of a followed scenario, on `port`;
/// `extra` is appended to the config.
fn capture(scenario: &str, port: u16, extra: &str) -> Capture {
    let capture = Capture::new(
        &["APP.ORDERS"],
        scenario,
        &format!("format: {{type: debezium, schemas: false}}\nhttp: {{port: {port}}}\n{extra}"),
    );
    let config = std::fs::read_to_string(capture.path("capture.yaml"))
        .unwrap()
        .replace("format: {type: compact}\n", "")
        .replace(
            "{simulator: {scenario: scenario.jsonl}}",
            "{simulator: {scenario: scenario.jsonl, follow: true}}",
        );
    std::fs::write(capture.path("capture.yaml"), config).unwrap();
    capture
}

fn rows(capture: &Capture) -> Vec<Value> {
    capture
        .committed_events()
        .into_iter()
        .filter(|line| line["topic"] == "redoline.APP.ORDERS")
        .map(|line| line["value"].clone())
        .collect()
}

fn wait_for_rows(child: &mut Running, capture: &Capture, count: usize) -> Vec<Value> {
    child.wait_until(
        &format!("{count} rows"),
        std::time::Duration::from_secs(40),
        std::time::Duration::from_millis(100),
        |_| rows(capture).len() >= count,
    );
    rows(capture)
}

/// The capture mines a transaction committed at 01:59:58 Berlin time (+01:00), the clock then
/// crosses the spring switch, and one committed at 03:00:03 (+02:00) is mined in a later window
/// of the same run: both events carry their true UTC commit instants (LogMiner's DATEs read as
/// UTC would put them one and two hours late), and the lag is the seconds it really is.
#[test]
fn event_times_are_utc_across_a_dst_switch_of_the_database_host() {
    let port = run_support::free_port();
    let scenario = scenario("Europe/Berlin", "2024-03-31T00:59:58", "winter");
    let capture = capture(&scenario, port, "");
    let mut child = capture.start();
    let first = wait_for_rows(&mut child, &capture, 1);
    assert_eq!(first[0]["after"]["STATUS"], "winter");
    assert_eq!(
        first[0]["source"]["ts_ms"], BEFORE_SPRING_SWITCH_MS,
        "{}",
        first[0]
    );

    // The clock crosses the switch while the capture runs.
    capture.append(
        "{\"advance_seconds\":5}\n\
         {\"tx\":\"b\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":2,\"STATUS\":\"summer\"}}\n\
         {\"tx\":\"b\",\"commit\":true}\n",
    );
    let both = wait_for_rows(&mut child, &capture, 2);
    assert_eq!(both[1]["after"]["STATUS"], "summer");
    assert_eq!(
        both[1]["source"]["ts_ms"], AFTER_SPRING_SWITCH_MS,
        "{}",
        both[1]
    );
    assert_eq!(both[1]["source"]["commit_ts_ms"], AFTER_SPRING_SWITCH_MS);
    // The simulator's clock stands still between steps: the capture has caught up with the
    // database's clock, whatever the host's offset.
    let status = child.wait_for(port, "a lag", |s| s["lagSeconds"].is_number());
    let lag = status["lagSeconds"].as_f64().unwrap();
    assert!(lag < 5.0, "lag {lag} s: {status}");
    assert_eq!(child.terminate().code(), Some(0));
}

/// A database host in a zone west of UTC with half an hour (Newfoundland, -02:30 in summer):
/// a run to the end gives the UTC instant, not the local time read as UTC.
#[test]
fn event_times_are_utc_for_a_host_west_of_utc() {
    let scenario = scenario("America/St_Johns", "2024-07-01T12:00:00", "x");
    let capture = Capture::new(&["APP.ORDERS"], &scenario, "");
    let (status, stderr) = capture.run();
    assert_eq!(status, 0, "{stderr}");
    let events = capture.events();
    assert_eq!(events.len(), 1, "{events:?}");
    // The compact format's `ts` is the commit time in UTC.
    assert_eq!(events[0]["ts"], "2024-07-01T12:00:00", "{}", events[0]);
}

/// The lag counts from the emitted commit's UTC instant: committed at 01:59:50 Berlin time
/// (+01:00) and mined then, with the database's clock at 03:00:03 (+02:00) after the spring
/// switch, the capture is 13 s behind, where the difference of the two local times says an hour
/// and 13 s and breaks any LagWithinSLA threshold. `readOnly` keeps the capture's own flush
/// commits out, so the emitted commit stays the one before the switch.
#[test]
fn lag_is_counted_in_utc_across_a_dst_switch() {
    let port = run_support::free_port();
    let mut scenario = scenario("Europe/Berlin", "2024-03-31T00:59:50", "winter");
    // The clock moves past LGWR's 3-second timeout so the commit is on disk for a read-only
    // capture, still before the switch.
    scenario.push_str("{\"advance_seconds\":4}\n");
    let capture = capture(&scenario, port, "mining: {readOnly: true}\n");
    let mut child = capture.start();
    let first = wait_for_rows(&mut child, &capture, 1);
    assert_eq!(
        first[0]["source"]["ts_ms"], 1_711_846_790_000_i64,
        "{}",
        first[0]
    );
    capture.append("{\"advance_seconds\":9}\n");
    // Lag is polled at most every 15 s: the next poll sees the clock past the switch.
    let status = child.wait_for(port, "a lag of 13 s", |s| {
        s["lagSeconds"].as_f64().is_some_and(|lag| lag > 10.0)
    });
    let lag = status["lagSeconds"].as_f64().unwrap();
    assert!((12.0..=14.0).contains(&lag), "lag {lag} s: {status}");
    assert_eq!(child.terminate().code(), Some(0));
}
