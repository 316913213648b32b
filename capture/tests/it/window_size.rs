#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Mining windows made smaller while they cost the database too much (issue 32, "Session
//! lifetime"), on the real Oracle client over the simulator's SQL door, whose sessions grow their
//! PGA with each `START_LOGMNR` and row and give it back only when they end: with a PGA bound
//! below what any session holds, every window breaches it, so each is followed by a fresh
//! session and a halved cap, down to `mining.minScnWindow`, and every transaction of the backlog
//! is still emitted exactly once.

use crate::load_support;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use load_support::config_text;
use redoline_capture::config::{self, CaptureConfig};
use redoline_capture::run::{RunSettings, run_with, through_sql};
use redoline_capture::simulator::Simulator;
use redoline_capture::simulator::sql::{OraError, SimulatorPool};
use redoline_crds::ByteQuantity;

/// Committed single-row transactions waiting when the capture starts.
const BACKLOG: u64 = 600;
const MAX_WINDOW: u64 = 400;
const MIN_WINDOW: u64 = 10;

fn backlog() -> String {
    let mut lines = String::from(
        r#"{"table":"APP.T","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}
"#,
    );
    for id in 0..BACKLOG {
        lines.push_str(&format!(
            "{{\"tx\":\"t{id}\",\"insert\":\"APP.T\",\"values\":{{\"ID\":{id}}}}}\n\
             {{\"tx\":\"t{id}\",\"commit\":true}}\n"
        ));
    }
    lines
}

struct Outcome {
    /// How many times each ID was emitted.
    emitted: BTreeMap<u64, u32>,
    windows: usize,
    metrics: String,
}

/// Runs a capture of the backlog until every transaction is out (at most 60 s), with `adjust`
/// applied to its config after it is read (below the CRD's minimums, as the SQL door's sessions
/// hold only a few MiB) and `prepare` given the pool before the run (faults to inject).
fn run(adjust: impl FnOnce(&mut CaptureConfig), prepare: impl FnOnce(&SimulatorPool)) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let scenario = backlog();
    std::fs::write(dir.path().join("scenario.jsonl"), &scenario).unwrap();
    let text = config_text(
        dir.path(),
        "APP.T",
        &format!(
            "mining: {{pollIntervalSeconds: 1, maxScnWindow: 1000, minScnWindow: {MIN_WINDOW}}}\n"
        ),
    );
    let mut config = config::parse(&text, &[]).unwrap();
    config.mining.max_scn_window = MAX_WINDOW;
    adjust(&mut config);
    let pool = SimulatorPool::new(Simulator::from_reader(scenario.as_bytes()).unwrap());
    prepare(&pool);
    let settings = RunSettings::new(false);
    let registry = settings.registry.clone();
    let stop = settings.stop.clone();
    let run = {
        let pool = pool.clone();
        let database = config.clone();
        thread::spawn(move || run_with(config, || through_sql(&database, pool.clone()), settings))
    };
    let out = dir.path().join("out.jsonl");
    let lines = || std::fs::read_to_string(&out).unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(60);
    while lines().lines().count() < BACKLOG as usize && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    let result = run.join().unwrap();
    assert!(result.is_ok(), "the run failed: {result:?}");
    let mut emitted = BTreeMap::new();
    for line in lines().lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = record["after"]["ID"]
            .as_u64()
            .unwrap_or_else(|| panic!("no after.ID in {line}"));
        *emitted.entry(id).or_insert(0) += 1;
    }
    let windows = pool
        .issued()
        .iter()
        .filter(|s| s.contains("START_LOGMNR"))
        .count();
    let metrics = prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .unwrap();
    Outcome {
        emitted,
        windows,
        metrics,
    }
}

/// The value of the metric line `series` (name and labels as rendered) in Prometheus text.
fn metric(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("{series} missing:\n{text}"))
}

fn each_once(outcome: &Outcome) {
    let expected: BTreeMap<u64, u32> = (0..BACKLOG).map(|id| (id, 1)).collect();
    assert_eq!(outcome.emitted, expected, "every transaction exactly once");
}

#[test]
fn windows_over_the_pga_bound_get_smaller_and_every_transaction_is_emitted_once() {
    let unbounded = run(
        |config| config.mining.session_pga_max_bytes = ByteQuantity::Bytes(0),
        |_| {},
    );
    each_once(&unbounded);
    assert_eq!(
        metric(&unbounded.metrics, "redoline_capture_window_max_scns"),
        MAX_WINDOW as f64
    );

    // Below the 3 MiB a fresh session of the SQL door holds: every window breaches.
    let bounded = run(
        |config| config.mining.session_pga_max_bytes = ByteQuantity::Bytes(1 << 20),
        |_| {},
    );
    each_once(&bounded);
    let text = &bounded.metrics;
    assert_eq!(
        metric(text, "redoline_capture_window_max_scns"),
        MIN_WINDOW as f64,
        "down to mining.minScnWindow"
    );
    // 400, 200, 100, 50, 25, 12, then the floor: six halvings, and none once there.
    assert_eq!(
        metric(
            text,
            r#"redoline_capture_window_shrinks_total{reason="pga"}"#
        ),
        6.0
    );
    assert_eq!(
        metric(
            text,
            r#"redoline_capture_window_shrinks_total{reason="duration"}"#
        ),
        0.0
    );
    assert_eq!(metric(text, "redoline_capture_window_grows_total"), 0.0);
    // A fresh session after each window.
    let recycled = metric(
        text,
        r#"redoline_capture_logminer_sessions_recycled_total{reason="pga"}"#,
    );
    assert!(recycled >= 6.0, "{recycled} sessions recycled:\n{text}");
    // Each transaction spans two SCNs (its insert, its commit): at 10 SCNs a window, the last
    // of the backlog takes at least a window per five transactions, where windows of 400 SCNs
    // took a handful.
    let halvings_covered = (MAX_WINDOW + 200 + 100 + 50 + 25 + 12) / 2;
    let at_the_floor = (BACKLOG - halvings_covered.min(BACKLOG)) / (MIN_WINDOW / 2);
    assert!(
        bounded.windows as u64 >= at_the_floor,
        "{} windows with the PGA bound, {} without",
        bounded.windows,
        unbounded.windows
    );
    assert!(
        bounded.windows > 3 * unbounded.windows,
        "{} windows with the PGA bound, {} without",
        bounded.windows,
        unbounded.windows
    );
}

/// ORA-04030 in the first window: the window is mined again on a fresh session, the next windows
/// are half as large, and windows as large as allowed and well within the (default) bounds
/// double the cap back.
#[test]
fn a_window_out_of_memory_halves_the_next_and_cheap_windows_grow_them_back() {
    let outcome = run(
        |config| config.mining.max_scn_window = 100,
        |pool| {
            pool.fail_next(
                "V$LOGMNR_CONTENTS",
                OraError::new(
                    4030,
                    "out of process memory when trying to allocate 1048 bytes",
                ),
            )
        },
    );
    each_once(&outcome);
    let text = &outcome.metrics;
    assert_eq!(
        metric(
            text,
            r#"redoline_capture_window_shrinks_total{reason="out_of_memory"}"#
        ),
        1.0
    );
    assert_eq!(
        metric(
            text,
            r#"redoline_capture_logminer_sessions_recycled_total{reason="memory"}"#
        ),
        1.0
    );
    // 100 SCNs, then 50 for four windows, then 100 again for the rest of the backlog.
    assert_eq!(metric(text, "redoline_capture_window_grows_total"), 1.0);
    assert_eq!(metric(text, "redoline_capture_window_max_scns"), 100.0);
}
