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
//! bookmark is resumed), compact and debezium, with the default `kafka.transactions` (many
//! database transactions per Kafka transaction: 100 ms, 100,000 records, 16 MiB) and with
//! `maxRecords: 1` (a Kafka transaction per database transaction;
//! `REDOLINE_BENCH_E2E_KAFKA_PAGE_TRANSACTIONS` transactions, default 2,000, since each is a
//! broker round trip). After each round the data topic is read back with a
//! `read_committed` consumer and its records counted: the figure printed is what a consumer sees,
//! not what the capture meant to write. With the default bounds, each format's rounds are
//! preceded by a run of one transaction, whose time (topics created, transactions initialised,
//! the bookmark, schema history and journal topics read back) is a run's fixed cost; the default
//! case prints its rate with that subtracted too ("running"), the rate a capture keeps once
//! started. The records of the last round are
//! then written again by a plain producer (the same client settings, no transactions, no
//! bookmark) to a fresh topic, and its rate is printed beside the capture's. Targets (issue 17):
//! 100,000 events per second to Kafka, capture alone, and at least 90% of the plain producer's
//! rate for the same records.
//!
//! Knobs for comparisons: `REDOLINE_BENCH_E2E_FORMATS` (`compact`, `debezium` or both, the
//! default), `REDOLINE_BENCH_E2E_FILE=0` (Kafka only), `REDOLINE_BENCH_E2E_KAFKA_ROUNDS` (default
//! 3), `REDOLINE_BENCH_E2E_KAFKA_PAGE_TRANSACTIONS=0` (no `maxRecords: 1` case) and
//! `REDOLINE_BENCH_E2E_KAFKA_FIELDS` (fields added to the default case's `kafka:`, e.g.
//! `", transactions: {maxDelayMillis: 1000}"`).
//!
//! **Memory** (issue 15), instead of the figures above when `REDOLINE_BENCH_MEMORY_SIZES` is set:
//!
//! ```sh
//! REDOLINE_BENCH_MEMORY_SIZES=256Mi cargo bench -p redoline-capture --bench capture_e2e
//! REDOLINE_BENCH_MEMORY_SIZES=256Mi,1Gi,4Gi REDOLINE_KAFKA_BOOTSTRAP=127.0.0.1:9092 \
//!     cargo bench -p redoline-capture --bench capture_e2e
//! ```
//!
//! For each size, rows of 6,000 characters (three columns) adding up to that size go through the whole capture
//! (simulator → capture → sink, `--exit-at-end`, heap budget 64 MiB, `batchSize: 0`) twice: as
//! one transaction, and as transactions of 100 rows. Each run is a child process (this benchmark
//! run again), so each has its own peak RSS (`VmHWM`); the simulator holds the same redo in both,
//! so the difference is what the one large transaction costs the capture. File sink always, Kafka
//! sink (exactly once) with `REDOLINE_KAFKA_BOOTSTRAP`. Target: the difference at most the budget
//! + 32 MiB, on both sinks, flat from 256 MiB to 4 GiB. Printed, never asserted.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use rdkafka::producer::{DefaultProducerContext, Producer, ThreadedProducer};
use redoline_capture::run;
use redoline_capture::simulator::Simulator;
use redoline_capture::sink::kafka::reader::read_to_end;
use redoline_capture::sink::kafka::topics::{RequiredTopic, ensure_topics_retrying};
use redoline_capture::sink::{KafkaClientSettings, send_waiting};

const DEFAULT_TRANSACTIONS: u64 = 20_000;
const TARGET_EVENTS_PER_SECOND: f64 = 200_000.0;
const KAFKA_TARGET_EVENTS_PER_SECOND: f64 = 100_000.0;
/// The capture's rate to Kafka against a plain producer's for the same records (issue 17).
const PLAIN_PRODUCER_TARGET_PERCENT: f64 = 90.0;
const DEFAULT_KAFKA_PAGE_TRANSACTIONS: u64 = 2_000;

/// The formats measured: `REDOLINE_BENCH_E2E_FORMATS` (comma-separated), default both.
fn formats() -> Vec<String> {
    std::env::var("REDOLINE_BENCH_E2E_FORMATS")
        .unwrap_or_else(|_| "compact,debezium".to_owned())
        .split(',')
        .map(|format| format.trim().to_owned())
        .filter(|format| !format.is_empty())
        .collect()
}

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

/// A config streaming `scenario` in `dir` from its oldest redo, without snapshot, to `sink` (a
/// `file:` or `kafka:` line).
fn config_with(dir: &Path, scenario: &str, format: &str, sink: &str, batch_size: u64) -> String {
    let start = format!(
        "snapshot: {{mode: never}}\n\
         startPosition: {{type: earliest}}\n\
         mining: {{batchSize: {batch_size}}}\n"
    );
    support::bench_config(dir, scenario, format, sink, &start)
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

/// A record read back: key and value.
type ReadBack = (Option<Vec<u8>>, Option<Vec<u8>>);

/// Records (and tombstones among them) of `topic` as a `read_committed` consumer sees them; the
/// records themselves too when `keep`, for the plain producer to send again.
fn committed_records(
    bootstrap: &str,
    topic: &str,
    keep: bool,
) -> Result<(u64, u64, Vec<ReadBack>), String> {
    let settings = KafkaClientSettings::with_bootstrap(bootstrap);
    let (mut records, mut tombstones, mut kept) = (0u64, 0u64, Vec::new());
    read_to_end(&settings, topic, Duration::from_secs(60), |record| {
        records += 1;
        tombstones += u64::from(record.value.is_none());
        if keep {
            kept.push((record.key, record.value));
        }
        Ok(())
    })
    .map_err(|error| error.to_string())?;
    Ok((records, tombstones, kept))
}

/// The time a plain producer (the capture's client settings, no transactions, no bookmark)
/// takes to write `records` to a fresh topic and have every one acknowledged: the rate the
/// broker allows for exactly these records, the yardstick of the capture's own.
fn plain_producer_time(
    bootstrap: &str,
    topic: &str,
    records: &[ReadBack],
) -> Result<Duration, String> {
    let settings = KafkaClientSettings::with_bootstrap(bootstrap);
    ensure_topics_retrying(
        &settings,
        &[RequiredTopic::plain(topic, "bench", "data")],
        Duration::from_secs(30),
        Duration::from_secs(60),
    )
    .map_err(|error| error.to_string())?;
    let producer: ThreadedProducer<DefaultProducerContext> = settings
        .producer_config(None)
        .create()
        .map_err(|error| error.to_string())?;
    let started = Instant::now();
    for (key, value) in records {
        send_waiting(&producer, topic, key.as_deref(), value.as_deref())
            .map_err(|error| error.to_string())?;
    }
    producer
        .flush(Duration::from_secs(120))
        .map_err(|error| error.to_string())?;
    Ok(started.elapsed())
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
    // Extra `kafka:` fields for the default case, to compare settings (`", compression: lz4"`).
    let extra_fields = std::env::var("REDOLINE_BENCH_E2E_KAFKA_FIELDS").unwrap_or_default();
    let default_fields = extra_fields.as_str();
    let (one, _) = scenario(1);
    std::fs::write(dir.join("scenario-one.jsonl"), &one).expect("the scenario is written");
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
        (
            "default",
            default_fields,
            "the default kafka.transactions, many database transactions per Kafka transaction",
            "scenario.jsonl",
            transactions,
            load,
            events,
        ),
        (
            "single",
            ", transactions: {maxRecords: 1}",
            "kafka.transactions.maxRecords: 1, a Kafka transaction per database transaction",
            "scenario-page.jsonl",
            page_transactions,
            small_load,
            small_events,
        ),
    ];
    for (case, kafka_fields, label, file, transactions, load, events) in cases {
        if transactions == 0 {
            continue;
        }
        println!(
            "  {label}: {transactions} transactions, {events} events, load (simulator only) {:.3} s",
            load.as_secs_f64()
        );
        for format in formats() {
            // One run of `scenario` to a fresh topic prefix: its wall time.
            let timed_run = |scenario: &str, prefix: &str| {
                let config_path = dir.join(format!("kafka-{format}-{case}.yaml"));
                let sink = format!(
                    "kafka: {{bootstrapServers: \"{bootstrap}\", topicPrefix: {prefix}, exactlyOnce: true{kafka_fields}}}"
                );
                std::fs::write(
                    &config_path,
                    config_with(dir, scenario, &format, &sink, 1000),
                )
                .expect("the config is written");
                support::timed_run(&config_path)
            };
            // A run's fixed cost (topics created, transactions initialised, the bookmark, schema
            // history and journal topics read back), the fastest of `rounds` runs of one
            // transaction (the first on a fresh broker also creates its transaction state topic):
            // the default case also prints its rate with this subtracted, the rate a running
            // capture keeps.
            let startup = (case == "default").then(|| {
                (0..rounds)
                    .map(|round| {
                        let prefix = format!(
                            "bench-e2e-{}-{stamp:x}-{format}-startup-r{round}",
                            std::process::id()
                        );
                        timed_run("scenario-one.jsonl", &prefix)
                    })
                    .min()
                    .unwrap_or_default()
            });
            let mut results = Vec::new();
            for round in 0..rounds {
                let prefix = format!(
                    "bench-e2e-{}-{stamp:x}-{format}-{case}-r{round}",
                    std::process::id()
                );
                let cpu_before = support::cpu_seconds();
                let elapsed = timed_run(file, &prefix);
                let cpu = support::cpu_seconds() - cpu_before;
                // The default case's records are kept, for the plain producer.
                let keep = case == "default" && round + 1 == rounds;
                let counted = committed_records(bootstrap, &format!("{prefix}.BENCH.T"), keep);
                results.push((elapsed, cpu, counted));
            }
            let plain = results.last().and_then(|(_, _, counted)| match counted {
                Ok((_, _, kept)) if !kept.is_empty() => {
                    let topic =
                        format!("bench-e2e-{}-{stamp:x}-{format}-plain", std::process::id());
                    Some(plain_producer_time(bootstrap, &topic, kept))
                }
                _ => None,
            });
            let Some((run_time, cpu, counted)) = results.into_iter().min_by_key(|r| r.0) else {
                continue;
            };
            let (records, tombstones, _) = match counted {
                Ok(counted) => counted,
                Err(error) => {
                    println!("    {format:<9} the topic could not be read back: {error}");
                    continue;
                }
            };
            let measured = RunRate::of(events, run_time, load, cpu);
            let (capture_only, rate) = (measured.capture_seconds, measured.rate);
            println!(
                "    {format:<9} {:>8.3} s  {records} records read ({tombstones} tombstones) for {events} events  {} and librdkafka  target {} {}",
                run_time.as_secs_f64(),
                measured.words,
                KAFKA_TARGET_EVENTS_PER_SECOND,
                if records < events {
                    "MISSED (records missing)"
                } else {
                    support::verdict(rate, KAFKA_TARGET_EVENTS_PER_SECOND)
                }
            );
            // A fixed cost near the whole run leaves nothing to measure a rate on.
            let startup = startup.filter(|startup| {
                let measurable = startup.as_secs_f64() < 0.5 * capture_only;
                if !measurable {
                    println!(
                        "    {format:<9} running: not measured, a run's fixed cost ({:.3} s) is over half the run",
                        startup.as_secs_f64()
                    );
                }
                measurable
            });
            let steady = startup.map(|startup| {
                let steady_time = run_time.saturating_sub(load).saturating_sub(startup);
                let steady_rate = events as f64 / steady_time.as_secs_f64().max(1e-9);
                println!(
                    "    {format:<9} running (a run's fixed {:.3} s subtracted): {steady_rate:>9.0} events/s  target {} {}",
                    startup.as_secs_f64(),
                    KAFKA_TARGET_EVENTS_PER_SECOND,
                    support::verdict(steady_rate, KAFKA_TARGET_EVENTS_PER_SECOND)
                );
                steady_rate
            });
            match plain {
                Some(Ok(plain_time)) => {
                    let plain_rate = events as f64 / plain_time.as_secs_f64().max(1e-9);
                    let share = 100.0 * steady.unwrap_or(rate) / plain_rate;
                    println!(
                        "    {format:<9} plain producer, the same {records} records: {:>8.3} s  {plain_rate:>9.0} events/s; the capture reaches {share:.0}% of it (running)  target {}% {}",
                        plain_time.as_secs_f64(),
                        PLAIN_PRODUCER_TARGET_PERCENT,
                        support::verdict(share, PLAIN_PRODUCER_TARGET_PERCENT)
                    );
                }
                Some(Err(error)) => println!("    {format:<9} plain producer failed: {error}"),
                None => {}
            }
        }
    }
}

/// A run of `events` events measured against the simulator's load alone.
struct RunRate {
    /// The run less the load: the capture's own seconds.
    capture_seconds: f64,
    /// Events per second of the capture alone.
    rate: f64,
    /// The rates alone and with the simulator, and the CPU per event, which includes the
    /// simulator's: the words every run's line prints.
    words: String,
}

impl RunRate {
    fn of(events: u64, run_time: Duration, load: Duration, cpu_seconds: f64) -> Self {
        let capture_seconds = run_time.saturating_sub(load).as_secs_f64().max(1e-9);
        let rate = events as f64 / capture_seconds;
        let words = format!(
            "capture alone {rate:>9.0} events/s  (with the simulator {:>9.0} events/s)  cpu {:.2} us/event incl. the simulator",
            events as f64 / run_time.as_secs_f64(),
            cpu_seconds / events as f64 * 1e6,
        );
        Self {
            capture_seconds,
            rate,
            words,
        }
    }
}

/// The heap budget of the memory runs, and the margin above it the target allows.
const MEMORY_BUDGET_MIB: u64 = 64;
const MEMORY_MARGIN_MIB: u64 = 32;
/// Each row of the memory runs has three text columns of this many characters: 6,000 bytes a
/// row keeps 4 GiB under `transactions.maxStagedRecords`' maximum of 1,000,000 rows.
const MEMORY_COLUMN_CHARS: usize = 2000;
const MEMORY_ROW_CHARS: usize = 3 * MEMORY_COLUMN_CHARS;
/// Set in a child process: the config it runs; it prints its peak RSS as `peak_rss_bytes=N`.
const MEMORY_CHILD_ENV: &str = "REDOLINE_BENCH_MEMORY_CHILD";

/// `256Mi`, `1Gi`, `4Gi` (binary units, as the CRDs write them).
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit())?);
    let unit = match unit {
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        _ => return None,
    };
    digits.parse::<u64>().ok().map(|n| n * unit)
}

/// A scenario of rows adding up to `bytes` of column text, in one transaction or in transactions
/// of 100 rows; written line by line (a 4 GiB scenario does not fit a `String` comfortably).
fn write_memory_scenario(path: &Path, bytes: u64, one_transaction: bool) -> u64 {
    use std::io::Write;
    let file = std::fs::File::create(path).expect("the scenario is created");
    let mut out = std::io::BufWriter::new(file);
    writeln!(
        out,
        r#"{{"table":"BENCH.M","columns":[{{"name":"ID","type":"NUMBER(10)","key":true}},{{"name":"A","type":"VARCHAR2(4000)"}},{{"name":"B","type":"VARCHAR2(4000)"}},{{"name":"C","type":"VARCHAR2(4000)"}}],"logging":"all"}}"#
    )
    .expect("the scenario is written");
    let rows = bytes.div_ceil(MEMORY_ROW_CHARS as u64);
    let note = "m".repeat(MEMORY_COLUMN_CHARS);
    let tx = |row: u64| if one_transaction { 0 } else { row / 100 };
    for row in 0..rows {
        writeln!(
            out,
            r#"{{"tx":"t{}","insert":"BENCH.M","values":{{"ID":{row},"A":"{note}","B":"{note}","C":"{note}"}}}}"#,
            tx(row)
        )
        .expect("the scenario is written");
        if tx(row + 1) != tx(row) || row + 1 == rows {
            writeln!(out, r#"{{"tx":"t{}","commit":true}}"#, tx(row)).expect("written");
        }
    }
    out.flush().expect("the scenario is written");
    rows
}

/// In a child process: runs `config` to the end and prints the peak RSS.
fn memory_child(config: &Path) {
    match run::run(config, true) {
        Ok(_) => {}
        Err(error) => panic!("the memory run failed: {error}"),
    }
    println!(
        "peak_rss_bytes={}",
        support::peak_rss_bytes().unwrap_or_default()
    );
}

/// Runs `config` in a child process; its peak RSS in MiB and the time it took.
fn child_peak_rss_mib(config: &Path) -> Result<(f64, Duration), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let started = Instant::now();
    let output = std::process::Command::new(exe)
        .env(MEMORY_CHILD_ENV, config)
        .env_remove("REDOLINE_BENCH_MEMORY_SIZES")
        .output()
        .map_err(|e| e.to_string())?;
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .find_map(|line| line.strip_prefix("peak_rss_bytes="))
        .and_then(|bytes| bytes.parse::<u64>().ok())
        .map(|bytes| (bytes as f64 / f64::from(1 << 20), elapsed))
        .ok_or_else(|| {
            format!(
                "the child failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .last()
                    .unwrap_or_default()
            )
        })
}

/// The memory section (see the module docs).
fn memory(sizes: &str) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let bootstrap = std::env::var("REDOLINE_KAFKA_BOOTSTRAP").ok();
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    println!(
        "capture memory: one transaction vs transactions of 100 rows, rows of {MEMORY_ROW_CHARS} characters, heap budget {MEMORY_BUDGET_MIB} MiB, batchSize 0; peak RSS of the whole process (VmHWM), the simulator's copy of the redo cancels out in the difference; target difference <= {} MiB",
        MEMORY_BUDGET_MIB + MEMORY_MARGIN_MIB
    );
    for size in sizes.split(',') {
        let Some(bytes) = parse_size(size) else {
            println!("  {size}: not a size (256Mi, 1Gi, 4Gi)");
            continue;
        };
        let mut rows = 0;
        for (shape, one) in [("one", true), ("small", false)] {
            rows = write_memory_scenario(
                &dir.path().join(format!("memory-{shape}.jsonl")),
                bytes,
                one,
            );
        }
        let mut sinks = vec![("file", None)];
        if let Some(bootstrap) = &bootstrap {
            sinks.push(("kafka", Some(bootstrap.clone())));
        }
        for (sink_name, bootstrap) in sinks {
            let mut peaks = Vec::new();
            for shape in ["one", "small"] {
                let sink = match &bootstrap {
                    None => format!(
                        "file: {{path: {}}}",
                        dir.path().join(format!("out-{shape}.jsonl")).display()
                    ),
                    Some(bootstrap) => format!(
                        "kafka: {{bootstrapServers: \"{bootstrap}\", topicPrefix: bench-mem-{}-{stamp:x}-{size}-{shape}, exactlyOnce: true}}",
                        std::process::id()
                    ),
                };
                let config_path = dir.path().join(format!("memory-{sink_name}-{shape}.yaml"));
                let config = config_with(
                    dir.path(),
                    &format!("memory-{shape}.jsonl"),
                    "compact",
                    &sink,
                    0,
                )
                .replace("tables: [BENCH.T]", "tables: [BENCH.M]")
                .replace(
                    "memoryMaxBytes: 64Mi",
                    &format!("memoryMaxBytes: {MEMORY_BUDGET_MIB}Mi"),
                )
                .replace("maxBytes: 1Gi", "maxBytes: 20Gi")
                    + "transactions: {maxStagedRecords: 1000000, maxStagedRecordsTotal: 1000000}\n";
                std::fs::write(&config_path, config).expect("the config is written");
                let _ = std::fs::remove_file(dir.path().join(format!("out-{shape}.jsonl")));
                let _ =
                    std::fs::remove_file(dir.path().join(format!("out-{shape}.jsonl.bookmark")));
                peaks.push(child_peak_rss_mib(&config_path));
            }
            match (&peaks[0], &peaks[1]) {
                (Ok((one, one_time)), Ok((small, small_time))) => {
                    let difference = one - small;
                    println!(
                        "  {size:>5} ({rows} rows) {sink_name:<5}  one transaction {one:>8.1} MiB ({:.1} s)  small transactions {small:>8.1} MiB ({:.1} s)  difference {difference:>7.1} MiB  target <= {} MiB {}",
                        one_time.as_secs_f64(),
                        small_time.as_secs_f64(),
                        MEMORY_BUDGET_MIB + MEMORY_MARGIN_MIB,
                        if difference <= (MEMORY_BUDGET_MIB + MEMORY_MARGIN_MIB) as f64 {
                            "met"
                        } else {
                            "MISSED"
                        }
                    );
                }
                (one, small) => println!("  {size:>5} {sink_name:<5}  failed: {one:?} / {small:?}"),
            }
        }
    }
}

fn main() {
    if let Some(config) = std::env::var_os(MEMORY_CHILD_ENV) {
        memory_child(Path::new(&config));
        return;
    }
    if let Ok(sizes) = std::env::var("REDOLINE_BENCH_MEMORY_SIZES") {
        memory(&sizes);
        return;
    }
    let transactions = transactions();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (text, events) = scenario(transactions);
    std::fs::write(dir.path().join("scenario.jsonl"), &text).expect("the scenario is written");
    println!(
        "capture end to end: {transactions} transactions x 10 changes (6 inserts, 3 updates, 1 delete), 5-column table, ALL logging, file sink, batchSize 0, heap budget 64 MiB"
    );
    let load = load_time(&dir.path().join("scenario.jsonl"));
    println!("  load (simulator only) {:>8.3} s", load.as_secs_f64());
    // `REDOLINE_BENCH_E2E_FILE=0` leaves the file sink out (Kafka figures only).
    let file_formats = match std::env::var("REDOLINE_BENCH_E2E_FILE").as_deref() {
        Ok("0") => Vec::new(),
        _ => formats(),
    };
    for format in file_formats {
        let config_path = dir.path().join(format!("{format}.yaml"));
        std::fs::write(&config_path, config(dir.path(), &format)).expect("the config is written");
        let mut cpu = 0.0;
        let run_time = best(|| {
            let _ = std::fs::remove_file(dir.path().join(format!("out-{format}.jsonl")));
            let _ = std::fs::remove_file(dir.path().join(format!("out-{format}.jsonl.bookmark")));
            let cpu_before = support::cpu_seconds();
            let elapsed = support::timed_run(&config_path);
            cpu = support::cpu_seconds() - cpu_before;
            elapsed
        });
        let lines = std::fs::read_to_string(dir.path().join(format!("out-{format}.jsonl")))
            .map(|t| t.lines().count())
            .unwrap_or(0);
        let measured = RunRate::of(events, run_time, load, cpu);
        println!(
            "  run {format:<9} {:>8.3} s  {lines} lines  {}  target {} {}",
            run_time.as_secs_f64(),
            measured.words,
            TARGET_EVENTS_PER_SECOND,
            support::verdict(measured.rate, TARGET_EVENTS_PER_SECOND)
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
