#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! End to end: simulator rows → capture (buffer, assembly, encoding) → file sink, in-process, on
//! one thread, for a 5-column table and a mixed insert/update/delete workload.
//!
//! ```sh
//! cargo bench -p redoline-capture --bench capture_e2e
//! REDOLINE_BENCH_E2E_TRANSACTIONS=20000 cargo bench -p redoline-capture --bench capture_e2e
//! ```
//!
//! A scenario of `TRANSACTIONS` transactions of 10 changes (6 inserts, 3 updates, 1 delete) is
//! written to a file (not timed). Two figures, each the best of three rounds:
//! - `load`: the simulator reading the scenario and generating its redo (the test double's own
//!   cost, which a real database does not charge to the capture);
//! - `run`: `redoline-capture run --exit-at-end` in-process: the same load plus mining, buffering,
//!   assembling, encoding (compact and debezium) and writing JSON Lines with a bookmark per page.
//!
//! The capture's own rate is events / (run − load). CPU time comes from `/proc/self/stat`, peak
//! RSS from `VmHWM`; both are printed next to the configured heap budget. Printed, never asserted.
//! Targets (issue 7): at least 200,000 events per second per core to the file sink.

use std::path::Path;
use std::time::{Duration, Instant};

use redoline_capture::run::{self, Outcome};
use redoline_capture::source::simulator::Simulator;

const DEFAULT_TRANSACTIONS: u64 = 20_000;
const TARGET_EVENTS_PER_SECOND: f64 = 200_000.0;

fn transactions() -> u64 {
    std::env::var("REDOLINE_BENCH_E2E_TRANSACTIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_TRANSACTIONS)
}

/// The scenario and the number of events it must produce.
fn scenario(transactions: u64) -> (String, u64) {
    let mut text = String::from(
        r#"{"table":"BENCH.T","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"NAME","type":"VARCHAR2(40)"},{"name":"AMOUNT","type":"NUMBER(12,2)"},{"name":"CREATED","type":"DATE"},{"name":"UPDATED_AT","type":"TIMESTAMP(6)"}],"logging":"all"}"#,
    );
    text.push('\n');
    let mut next_id = 0u64;
    let mut live: Vec<u64> = Vec::new();
    let mut events = 0;
    for tx in 0..transactions {
        for change in 0..10u64 {
            let line = match change {
                0..=5 => {
                    next_id += 1;
                    live.push(next_id);
                    format!(
                        r#"{{"tx":"t{tx}","insert":"BENCH.T","values":{{"ID":{next_id},"NAME":"customer {next_id}","AMOUNT":"{}.{:02}","CREATED":"2024-01-02T03:04:05","UPDATED_AT":"2024-01-02T03:04:05.123456"}}}}"#,
                        next_id % 10_000,
                        next_id % 100
                    )
                }
                6..=8 => {
                    let id = live[(tx as usize * 7 + change as usize) % live.len()];
                    format!(
                        r#"{{"tx":"t{tx}","update":"BENCH.T","where":{{"ID":{id}}},"set":{{"AMOUNT":"{}.50","UPDATED_AT":"2024-01-02T03:04:06"}}}}"#,
                        tx % 1000
                    )
                }
                _ => {
                    let id = live.swap_remove((tx as usize * 13) % live.len());
                    format!(r#"{{"tx":"t{tx}","delete":"BENCH.T","where":{{"ID":{id}}}}}"#)
                }
            };
            text.push_str(&line);
            text.push('\n');
            events += 1;
        }
        text.push_str(&format!("{{\"tx\":\"t{tx}\",\"commit\":true}}\n"));
    }
    (text, events)
}

fn config(dir: &Path, format: &str) -> String {
    format!(
        "name: bench\n\
         database: {{simulator: {{scenario: {}}}}}\n\
         tables: [BENCH.T]\n\
         file: {{path: {}}}\n\
         format: {{type: {format}}}\n\
         snapshot: {{mode: never}}\n\
         startPosition: {{type: earliest}}\n\
         mining: {{batchSize: 0}}\n\
         buffer: {{memoryMaxBytes: 64Mi, spill: {{dir: {}, maxBytes: 1Gi}}}}\n\
         http: {{port: 0}}\n",
        dir.join("scenario.jsonl").display(),
        dir.join(format!("out-{format}.jsonl")).display(),
        dir.join("spill").display()
    )
}

/// Seconds of CPU this process used (user + system), from `/proc/self/stat`.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // After the command name: state is field 0, utime 11, stime 12 (clock ticks, 100 per second).
    (ticks(11) + ticks(12)) / 100.0
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn best<F: FnMut() -> Duration>(mut f: F) -> Duration {
    (0..3).map(|_| f()).min().unwrap_or_default()
}

fn main() {
    let transactions = transactions();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (text, events) = scenario(transactions);
    std::fs::write(dir.path().join("scenario.jsonl"), &text).expect("the scenario is written");
    println!(
        "capture end to end: {transactions} transactions x 10 changes (6 inserts, 3 updates, 1 delete), 5-column table, ALL logging, file sink, batchSize 0, heap budget 64 MiB"
    );
    let load = best(|| {
        let started = Instant::now();
        let simulator = Simulator::from_scenario_file(dir.path().join("scenario.jsonl"))
            .expect("the scenario loads");
        std::hint::black_box(simulator);
        started.elapsed()
    });
    println!("  load (simulator only) {:>8.3} s", load.as_secs_f64());
    for format in ["compact", "debezium"] {
        let config_path = dir.path().join(format!("{format}.yaml"));
        std::fs::write(&config_path, config(dir.path(), format)).expect("the config is written");
        let mut cpu = 0.0;
        let run_time = best(|| {
            let _ = std::fs::remove_file(dir.path().join(format!("out-{format}.jsonl")));
            let _ = std::fs::remove_file(dir.path().join(format!("out-{format}.jsonl.bookmark")));
            let cpu_before = cpu_seconds();
            let started = Instant::now();
            match run::run(&config_path, true) {
                Outcome::Done => {}
                other => panic!("the run failed: {other:?}"),
            }
            let elapsed = started.elapsed();
            cpu = cpu_seconds() - cpu_before;
            elapsed
        });
        let lines = std::fs::read_to_string(dir.path().join(format!("out-{format}.jsonl")))
            .map(|t| t.lines().count())
            .unwrap_or(0);
        let capture_only = (run_time.saturating_sub(load)).as_secs_f64().max(1e-9);
        let rate = events as f64 / capture_only;
        println!(
            "  run {format:<9} {:>8.3} s  {lines} lines  capture alone {:>9.0} events/s  (with the simulator {:>9.0} events/s)  cpu {:.2} us/event incl. the simulator  target {} {}",
            run_time.as_secs_f64(),
            rate,
            events as f64 / run_time.as_secs_f64(),
            cpu / events as f64 * 1e6,
            TARGET_EVENTS_PER_SECOND,
            if rate >= TARGET_EVENTS_PER_SECOND {
                "met"
            } else {
                "MISSED"
            }
        );
    }
    println!(
        "  peak RSS (VmHWM) {:.1} MiB with a 64 MiB heap budget (the simulator holds the whole scenario's redo in memory too)",
        peak_rss_mib()
    );
}
