//! Commit-to-visible latency with the default settings (issue 17): how long after a database
//! transaction commits its change is readable by a `read_committed` Kafka consumer.
//!
//! ```sh
//! REDOLINE_KAFKA_BOOTSTRAP=127.0.0.1:9092 cargo bench -p redoline-capture --bench latency
//! ```
//!
//! A writer appends one-row transactions to a simulator scenario that the capture follows
//! (`simulator: {follow: true}`), at a steady `REDOLINE_BENCH_LATENCY_TPS` transactions per second
//! (default 2,000) for `REDOLINE_BENCH_LATENCY_SECONDS` (default 20), noting when each COMMIT line
//! was written. The capture binary runs with the default configuration otherwise (Debezium format
//! with schemas, `kafka.transactions` defaults, `mining.pollIntervalSeconds: 1`). A consumer notes
//! when each row's record arrives. `REDOLINE_BENCH_LATENCY_KAFKA_FIELDS` adds fields to `kafka:`
//! for a comparison (`", transactions: {maxRecords: 1}"`: a Kafka transaction per database
//! transaction). `REDOLINE_BENCH_LATENCY_THROUGH=sql` runs the capture with the real Oracle
//! client over the simulator's SQL door (`database.simulator.through: sql`: every window's
//! statements are parsed and evaluated by the SQL model) instead of the simulator's own
//! boundary. The first 3 seconds are warm-up and left out. Printed: p50,
//! p99 and the maximum; target p99 ≤ 500 ms. Printed, never asserted.
//!
//! Incremental snapshot: with `REDOLINE_BENCH_LATENCY_SNAPSHOT_ROWS=N`, the scenario also holds
//! a table `BENCH.BIG` of N committed rows (loaded before the capture starts, which streams from
//! the current SCN), and the bench runs twice: without a snapshot request, then with
//! `snapshot.requests` re-reading `BENCH.BIG` (`fetchSize` from
//! `REDOLINE_BENCH_LATENCY_SNAPSHOT_FETCH`, default 10,000) while the workload runs; each run
//! prints its lag figures, and the second the rows the request read by the end (from `/status`).
//!
//! ```sh
//! REDOLINE_KAFKA_BOOTSTRAP=127.0.0.1:9092 REDOLINE_BENCH_LATENCY_SNAPSHOT_ROWS=10000000 \
//!   cargo bench -p redoline-capture --bench latency
//! ```

mod support;

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::{Offset, TopicPartitionList};
use redoline_testenv::process::free_port;
use support::env_number;

const BINARY: &str = env!("CARGO_BIN_EXE_redoline-capture");
const WARM_UP: Duration = Duration::from_secs(3);
const TARGET_P99: Duration = Duration::from_millis(500);

/// What a round reads besides the workload: `BENCH.BIG`'s rows, and whether a request re-reads
/// it while the workload runs (with its chunk size).
#[derive(Clone, Copy)]
struct Snapshot {
    rows: u64,
    request: Option<u64>,
}

fn config(dir: &Path, settings: (&str, &str, &str, &str), snapshot: Snapshot, port: u16) -> String {
    let (bootstrap, prefix, kafka_fields, through) = settings;
    let (tables, start, snapshot) = match snapshot {
        Snapshot { rows: 0, .. } => ("BENCH.L", "earliest", "{mode: never}".to_owned()),
        Snapshot { request: None, .. } => {
            ("BENCH.L, BENCH.BIG", "current", "{mode: never}".to_owned())
        }
        Snapshot {
            request: Some(fetch),
            ..
        } => (
            "BENCH.L, BENCH.BIG",
            "current",
            format!(
                "{{mode: never, fetchSize: {fetch}, requests: [{{id: bench-reread, tables: [BENCH.BIG]}}]}}"
            ),
        ),
    };
    format!(
        "name: latency-bench\n\
         database: {{simulator: {{scenario: {}, follow: true, through: {through}}}}}\n\
         tables: [{tables}]\n\
         kafka: {{bootstrapServers: \"{bootstrap}\", topicPrefix: {prefix}{kafka_fields}}}\n\
         snapshot: {snapshot}\n\
         startPosition: {{type: {start}}}\n\
         buffer: {{spill: {{dir: {}}}}}\n\
         http: {{port: {port}}}\n",
        dir.join("scenario.jsonl").display(),
        dir.join("spill").display()
    )
}

/// `BENCH.BIG` with `rows` rows committed 10,000 to a transaction.
fn big_table(rows: u64) -> String {
    let mut text = String::from(
        "{\"table\":\"BENCH.BIG\",\"columns\":[{\"name\":\"ID\",\"type\":\"NUMBER(10)\",\"key\":true},{\"name\":\"NOTE\",\"type\":\"VARCHAR2(100)\"}],\"logging\":\"all\"}\n",
    );
    for id in 1..=rows {
        let tx = id / 10_000;
        text.push_str(&format!(
            "{{\"tx\":\"b{tx}\",\"insert\":\"BENCH.BIG\",\"values\":{{\"ID\":{id},\"NOTE\":\"big row {id}\"}}}}\n"
        ));
        if id % 10_000 == 9_999 || id == rows {
            text.push_str(&format!("{{\"tx\":\"b{tx}\",\"commit\":true}}\n"));
        }
    }
    text
}

/// The capture's `/status` on `port`, when it answers.
fn status(port: u16) -> Option<serde_json::Value> {
    use std::io::Read;
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    stream
        .write_all(b"GET /status HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    serde_json::from_str(text.split("\r\n\r\n").nth(1)?).ok()
}

/// The row id in a Debezium key (`{"schema":...,"payload":{"ID":n}}` or `{"ID":n}`).
fn key_id(key: &[u8]) -> Option<u64> {
    let key: serde_json::Value = serde_json::from_slice(key).ok()?;
    let payload = key.get("payload").unwrap_or(&key);
    payload.get("ID")?.as_u64()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Ok(bootstrap) = std::env::var("REDOLINE_KAFKA_BOOTSTRAP") else {
        println!("latency: skipped (REDOLINE_KAFKA_BOOTSTRAP unset)");
        return Ok(());
    };
    let rate = env_number("REDOLINE_BENCH_LATENCY_TPS", 2_000).max(1);
    let seconds = env_number("REDOLINE_BENCH_LATENCY_SECONDS", 20).max(4);
    let rows = env_number("REDOLINE_BENCH_LATENCY_SNAPSHOT_ROWS", 0);
    // With a table to read: a round without a request, then one with.
    let requests = if rows == 0 {
        vec![None]
    } else {
        let fetch = env_number("REDOLINE_BENCH_LATENCY_SNAPSHOT_FETCH", 10_000).max(1);
        vec![None, Some(fetch)]
    };
    for request in requests {
        round(&bootstrap, rate, seconds, Snapshot { rows, request })?;
    }
    Ok(())
}

/// One run of the capture under the workload; prints its figures.
fn round(
    bootstrap: &str,
    rate: u64,
    seconds: u64,
    snapshot: Snapshot,
) -> Result<(), Box<dyn std::error::Error>> {
    let bootstrap = bootstrap.to_owned();
    let dir = tempfile::tempdir()?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let prefix = format!("bench-latency-{}-{stamp:x}", std::process::id());
    let scenario_path = dir.path().join("scenario.jsonl");
    let mut scenario = big_table(snapshot.rows);
    if snapshot.rows == 0 {
        scenario.clear();
    }
    scenario.push_str(
        "{\"table\":\"BENCH.L\",\"columns\":[{\"name\":\"ID\",\"type\":\"NUMBER(10)\",\"key\":true},{\"name\":\"NOTE\",\"type\":\"VARCHAR2(100)\"}],\"logging\":\"all\"}\n",
    );
    std::fs::write(&scenario_path, scenario)?;
    let port = free_port();
    let config_path = dir.path().join("capture.yaml");
    let kafka_fields = std::env::var("REDOLINE_BENCH_LATENCY_KAFKA_FIELDS").unwrap_or_default();
    let through =
        std::env::var("REDOLINE_BENCH_LATENCY_THROUGH").unwrap_or_else(|_| "boundary".to_owned());
    std::fs::write(
        &config_path,
        config(
            dir.path(),
            (&bootstrap, &prefix, &kafka_fields, &through),
            snapshot,
            port,
        ),
    )?;
    let mut capture = Command::new(BINARY)
        .args(["run", "--config"])
        .arg(&config_path)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;

    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", format!("{prefix}-reader"))
        .set("isolation.level", "read_committed")
        .set("enable.auto.commit", "false")
        .set("topic.metadata.refresh.interval.ms", "200")
        .create()?;
    let topic = format!("{prefix}.BENCH.L");
    let mut partitions = TopicPartitionList::new();
    partitions.add_partition_offset(&topic, 0, Offset::Beginning)?;

    // The big table loads before the capture streams: the workload starts once it does.
    if snapshot.rows > 0 {
        let loading = Instant::now();
        while status(port).is_none_or(|report| report["state"] != "streaming") {
            if loading.elapsed() > Duration::from_secs(1800) {
                return Err("the capture did not start streaming within 30 minutes".into());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        println!(
            "BENCH.BIG: {} rows loaded by the simulator in {:.1} s",
            snapshot.rows,
            loading.elapsed().as_secs_f64()
        );
    }
    // The writer: steady transactions, each COMMIT's write time noted.
    let written: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
    let started = Instant::now();
    let total = rate * seconds;
    let writer = {
        let written = Arc::clone(&written);
        let path = scenario_path.clone();
        std::thread::spawn(move || -> std::io::Result<()> {
            let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
            let mut next = 0u64;
            while next < total {
                let due = (started.elapsed().as_secs_f64() * rate as f64) as u64;
                let mut lines = String::new();
                let mut ids = Vec::new();
                while next < due.min(total) {
                    next += 1;
                    lines.push_str(&format!(
                        "{{\"tx\":\"t{next}\",\"insert\":\"BENCH.L\",\"values\":{{\"ID\":{next},\"NOTE\":\"n\"}}}}\n{{\"tx\":\"t{next}\",\"commit\":true}}\n"
                    ));
                    ids.push(next);
                }
                if !lines.is_empty() {
                    file.write_all(lines.as_bytes())?;
                    let now = Instant::now();
                    let mut written = written.lock().unwrap_or_else(|e| e.into_inner());
                    for id in ids {
                        written.insert(id, now);
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Ok(())
        })
    };

    // The reader, on this thread, until every row arrived (or a minute after the writer's end).
    let mut seen: HashMap<u64, Instant> = HashMap::new();
    let mut assigned = false;
    let deadline = started + Duration::from_secs(seconds + 60);
    while (seen.len() as u64) < total && Instant::now() < deadline {
        if !assigned {
            let metadata = consumer.fetch_metadata(Some(&topic), Duration::from_secs(2));
            let exists = metadata.is_ok_and(|m| {
                m.topics()
                    .iter()
                    .any(|t| t.name() == topic && t.error().is_none() && !t.partitions().is_empty())
            });
            if exists {
                consumer.assign(&partitions)?;
                assigned = true;
            } else {
                std::thread::sleep(Duration::from_millis(100));
            }
            continue;
        }
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(100))
            && message.payload().is_some()
            && let Some(id) = message.key().and_then(key_id)
        {
            seen.entry(id).or_insert_with(Instant::now);
        }
    }
    let _ = writer.join();
    let read = status(port).map(|report| {
        let request = &report["snapshot"]["requests"][0];
        (
            request["state"].as_str().unwrap_or("none").to_owned(),
            request["tables"][0]["rowsRead"].as_u64().unwrap_or(0),
        )
    });
    let _ = Command::new("kill")
        .args(["-TERM", &capture.id().to_string()])
        .status();
    let _ = capture.wait();

    let written = written.lock().unwrap_or_else(|e| e.into_inner());
    let mut latencies: Vec<Duration> = written
        .iter()
        .filter(|(_, at)| at.duration_since(started) >= WARM_UP)
        .filter_map(|(id, at)| seen.get(id).map(|got| got.saturating_duration_since(*at)))
        .collect();
    latencies.sort();
    let missing = total - seen.len() as u64;
    let p99 = percentile(&latencies, 0.99);
    let snapshot_note = match (snapshot, &read) {
        (Snapshot { rows: 0, .. }, _) => String::new(),
        (
            Snapshot {
                request: None,
                rows,
            },
            _,
        ) => format!(", BENCH.BIG of {rows} rows, no request"),
        (
            Snapshot {
                request: Some(fetch),
                rows,
            },
            Some((state, read)),
        ) => format!(
            ", BENCH.BIG of {rows} rows re-read in chunks of {fetch}: {read} rows read by the end ({state})"
        ),
        (
            Snapshot {
                request: Some(_),
                rows,
            },
            None,
        ) => {
            format!(", BENCH.BIG of {rows} rows re-read: /status unreachable at the end")
        }
    };
    println!(
        "commit to visible (read_committed), {rate} transactions/s of one row for {seconds} s, simulator through {through}, default settings{kafka_fields}, Debezium with schemas{snapshot_note}: \
         p50 {:.0} ms  p99 {:.0} ms  max {:.0} ms  ({} measured after {} s of warm-up, {missing} never seen)  target p99 {} ms {}",
        percentile(&latencies, 0.5).as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        latencies.len(),
        WARM_UP.as_secs(),
        TARGET_P99.as_millis(),
        if missing == 0 && p99 <= TARGET_P99 {
            "met"
        } else {
            "MISSED"
        }
    );
    Ok(())
}
