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
//!
//! With `REDOLINE_KAFKA_BOOTSTRAP` set (a broker: `tests/env/kafka.sh start DIR PORT CTRL_PORT`),
//! the same runs also go to Kafka (`exactlyOnce: true`, a fresh `topicPrefix` per round so no
//! bookmark is resumed), compact and debezium, with `mining.batchSize: 0` (pages aggregated up to
//! 100,000 changes) and `batchSize: 1000` (a page, so a Kafka transaction, per database
//! transaction; `REDOLINE_BENCH_E2E_KAFKA_PAGE_TRANSACTIONS` transactions, default 2,000, since
//! each is a broker round trip). After each round the data topic is read back with a
//! `read_committed` consumer and its records counted: the figure printed is what a consumer sees,
//! not what the capture meant to write. Target: 100,000 events per second to Kafka, capture alone.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use redoline_capture::run::{self, Outcome};
use redoline_capture::sink::KafkaClientSettings;
use redoline_capture::sink::reader::read_to_end;
use redoline_capture::source::simulator::Simulator;

const DEFAULT_TRANSACTIONS: u64 = 20_000;
const TARGET_EVENTS_PER_SECOND: f64 = 200_000.0;
const KAFKA_TARGET_EVENTS_PER_SECOND: f64 = 100_000.0;
const DEFAULT_KAFKA_PAGE_TRANSACTIONS: u64 = 2_000;

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
    config_with(
        dir,
        "scenario.jsonl",
        format,
        &format!(
            "file: {{path: {}}}",
            dir.join(format!("out-{format}.jsonl")).display()
        ),
        0,
    )
}

/// A config reading `scenario` in `dir`, writing to `sink` (a `file:` or `kafka:` line).
fn config_with(dir: &Path, scenario: &str, format: &str, sink: &str, batch_size: u64) -> String {
    format!(
        "name: bench\n\
         database: {{simulator: {{scenario: {}}}}}\n\
         tables: [BENCH.T]\n\
         {sink}\n\
         format: {{type: {format}}}\n\
         snapshot: {{mode: never}}\n\
         startPosition: {{type: earliest}}\n\
         mining: {{batchSize: {batch_size}}}\n\
         buffer: {{memoryMaxBytes: 64Mi, spill: {{dir: {}, maxBytes: 1Gi}}}}\n\
         http: {{port: 0}}\n",
        dir.join(scenario).display(),
        dir.join("spill").display()
    )
}

fn best<F: FnMut() -> Duration>(mut f: F) -> Duration {
    (0..3).map(|_| f()).min().unwrap_or_default()
}

/// The simulator's own time to load a scenario file: best of three.
fn load_time(path: &Path) -> Duration {
    best(|| {
        let started = Instant::now();
        let simulator = Simulator::from_scenario_file(path).expect("the scenario loads");
        std::hint::black_box(simulator);
        started.elapsed()
    })
}

/// Records (and tombstones among them) of `topic` as a `read_committed` consumer sees them.
fn committed_records(bootstrap: &str, topic: &str) -> Result<(u64, u64), String> {
    let settings = KafkaClientSettings::with_bootstrap(bootstrap);
    let (mut records, mut tombstones) = (0u64, 0u64);
    read_to_end(&settings, topic, Duration::from_secs(60), |record| {
        records += 1;
        tombstones += u64::from(record.value.is_none());
        Ok(())
    })
    .map_err(|error| error.to_string())?;
    Ok((records, tombstones))
}

/// The Kafka half: compact and debezium, aggregated pages and a page per transaction.
fn kafka(bootstrap: &str, dir: &Path, transactions: u64, load: Duration, events: u64) {
    let rounds: usize = std::env::var("REDOLINE_BENCH_E2E_KAFKA_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let page_transactions: u64 = std::env::var("REDOLINE_BENCH_E2E_KAFKA_PAGE_TRANSACTIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_KAFKA_PAGE_TRANSACTIONS);
    let (small, small_events) = scenario(page_transactions);
    std::fs::write(dir.join("scenario-page.jsonl"), &small).expect("the scenario is written");
    let small_load = load_time(&dir.join("scenario-page.jsonl"));
    println!(
        "Kafka ({bootstrap}, exactlyOnce: true, read back read_committed; best of {rounds} rounds, a fresh topicPrefix each):"
    );
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let cases = [
        (0u64, "scenario.jsonl", transactions, load, events),
        (
            1000,
            "scenario-page.jsonl",
            page_transactions,
            small_load,
            small_events,
        ),
    ];
    for (batch_size, file, transactions, load, events) in cases {
        println!(
            "  batchSize {batch_size} ({}): {transactions} transactions, {events} events, load (simulator only) {:.3} s",
            if batch_size == 0 {
                "aggregated pages"
            } else {
                "a page per transaction"
            },
            load.as_secs_f64()
        );
        for format in ["compact", "debezium"] {
            let mut results = Vec::new();
            for round in 0..rounds {
                let prefix = format!(
                    "bench-e2e-{}-{stamp:x}-{format}-b{batch_size}-r{round}",
                    std::process::id()
                );
                let config_path = dir.join(format!("kafka-{format}-{batch_size}.yaml"));
                let sink = format!(
                    "kafka: {{bootstrapServers: \"{bootstrap}\", topicPrefix: {prefix}, exactlyOnce: true}}"
                );
                std::fs::write(
                    &config_path,
                    config_with(dir, file, format, &sink, batch_size),
                )
                .expect("the config is written");
                let cpu_before = support::cpu_seconds();
                let started = Instant::now();
                match run::run(&config_path, true) {
                    Outcome::Done => {}
                    other => panic!("the Kafka run failed: {other:?}"),
                }
                let elapsed = started.elapsed();
                let cpu = support::cpu_seconds() - cpu_before;
                let counted = committed_records(bootstrap, &format!("{prefix}.BENCH.T"));
                results.push((elapsed, cpu, counted));
            }
            let Some((run_time, cpu, counted)) = results.into_iter().min_by_key(|r| r.0) else {
                continue;
            };
            let (records, tombstones) = match counted {
                Ok(counted) => counted,
                Err(error) => {
                    println!("    {format:<9} the topic could not be read back: {error}");
                    continue;
                }
            };
            let capture_only = (run_time.saturating_sub(load)).as_secs_f64().max(1e-9);
            let rate = events as f64 / capture_only;
            println!(
                "    {format:<9} {:>8.3} s  {records} records read ({tombstones} tombstones) for {events} events  capture alone {:>9.0} events/s  (with the simulator {:>9.0} events/s)  cpu {:.2} us/event incl. the simulator and librdkafka  target {} {}",
                run_time.as_secs_f64(),
                rate,
                events as f64 / run_time.as_secs_f64(),
                cpu / events as f64 * 1e6,
                KAFKA_TARGET_EVENTS_PER_SECOND,
                if records < events {
                    "MISSED (records missing)"
                } else if rate >= KAFKA_TARGET_EVENTS_PER_SECOND {
                    "met"
                } else {
                    "MISSED"
                }
            );
        }
    }
}

fn main() {
    let transactions = transactions();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (text, events) = scenario(transactions);
    std::fs::write(dir.path().join("scenario.jsonl"), &text).expect("the scenario is written");
    println!(
        "capture end to end: {transactions} transactions x 10 changes (6 inserts, 3 updates, 1 delete), 5-column table, ALL logging, file sink, batchSize 0, heap budget 64 MiB"
    );
    let load = load_time(&dir.path().join("scenario.jsonl"));
    println!("  load (simulator only) {:>8.3} s", load.as_secs_f64());
    for format in ["compact", "debezium"] {
        let config_path = dir.path().join(format!("{format}.yaml"));
        std::fs::write(&config_path, config(dir.path(), format)).expect("the config is written");
        let mut cpu = 0.0;
        let run_time = best(|| {
            let _ = std::fs::remove_file(dir.path().join(format!("out-{format}.jsonl")));
            let _ = std::fs::remove_file(dir.path().join(format!("out-{format}.jsonl.bookmark")));
            let cpu_before = support::cpu_seconds();
            let started = Instant::now();
            match run::run(&config_path, true) {
                Outcome::Done => {}
                other => panic!("the run failed: {other:?}"),
            }
            let elapsed = started.elapsed();
            cpu = support::cpu_seconds() - cpu_before;
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
        support::peak_rss_bytes().map_or(0.0, |bytes| bytes as f64 / (1024.0 * 1024.0))
    );
    match std::env::var("REDOLINE_KAFKA_BOOTSTRAP") {
        Ok(bootstrap) => kafka(&bootstrap, dir.path(), transactions, load, events),
        Err(_) => println!("Kafka: skipped (REDOLINE_KAFKA_BOOTSTRAP unset)"),
    }
}
