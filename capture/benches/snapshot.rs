#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The initial snapshot: simulator table → flashback batches → `r` events → file sink or Kafka,
//! in-process (`redoline-capture run --exit-at-end`), for the 5-column table of `capture_e2e`.
//!
//! ```sh
//! cargo bench -p redoline-capture --bench snapshot
//! REDOLINE_BENCH_SNAPSHOT_ROWS=500000 REDOLINE_KAFKA_BOOTSTRAP=127.0.0.1:29092 \
//!   cargo bench -p redoline-capture --bench snapshot
//! ```
//!
//! A scenario of `ROWS` committed rows is written (not timed). Each figure is the best of three
//! rounds of a fresh capture (`snapshot.mode: initial`, `fetchSize` 10,000, so a page and a
//! bookmark per 10,000 rows):
//! - `load`: the simulator replaying the scenario (the test double's cost, not the capture's);
//! - `run`: the whole run: the same load, the snapshot, and the (empty) streaming hand-off.
//!
//! Printed: rows per second of the capture alone (rows / (run − load)) and rows per CPU second
//! of the capture alone ((run CPU − load CPU), all threads: librdkafka's included), which is the
//! per-core figure. With `REDOLINE_KAFKA_BOOTSTRAP`, the Kafka runs (`exactlyOnce: true`, a
//! fresh `topicPrefix` per round) are read back with a `read_committed` consumer and the records
//! counted. Printed, never asserted.
//!
//! First, not timed: the size a bookmark gives a table's plan of chunks, for a table of 100
//! million rows at the default `fetchSize` (10,000 rows, so about 10,000 chunks) with extents
//! as Oracle's automatic allocation sizes them, as the JSON list bookmarks held before plans
//! were packed and as the packed text they hold now (`source::chunk_plan`), whole and halfway.
//!
//! Then the chunks: the table's plan (`table_chunks`, 10,000 rows a chunk) read chunk by chunk
//! with `flashback_range`, on the simulator itself and through the real client over the SQL
//! door, with the time of each chunk printed in deciles over the course of the table (a read
//! whose cost grows with its position would show rising deciles); and whole runs through the
//! real client with `snapshot.maxThreads` 1 and 4 (`database.maxConnections` 5), rows per
//! second and per CPU second. Through the door every statement is parsed and evaluated by the
//! model, which also serialises the sessions (one simulated database behind a lock): those
//! figures are the model's, and four readers cannot beat one there.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use redoline_capture::simulator::Simulator;
use redoline_capture::simulator::sql::SimulatorPool;
use redoline_capture::sink::KafkaClientSettings;
use redoline_capture::sink::kafka::reader::read_to_end;
use redoline_capture::source::FlashbackReader;

const DEFAULT_ROWS: u64 = 200_000;

fn rows() -> u64 {
    std::env::var("REDOLINE_BENCH_SNAPSHOT_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_ROWS)
}

/// `rows` rows committed 1,000 to a transaction.
fn scenario(rows: u64) -> String {
    let mut text = String::from(
        r#"{"table":"BENCH.T","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"NAME","type":"VARCHAR2(40)"},{"name":"AMOUNT","type":"NUMBER(12,2)"},{"name":"CREATED","type":"DATE"},{"name":"UPDATED_AT","type":"TIMESTAMP(6)"}],"logging":"all"}"#,
    );
    text.push('\n');
    for id in 1..=rows {
        let tx = id / 1000;
        text.push_str(&format!(
            r#"{{"tx":"t{tx}","insert":"BENCH.T","values":{{"ID":{id},"NAME":"customer {id}","AMOUNT":"{}.{:02}","CREATED":"2024-01-02T03:04:05","UPDATED_AT":"2024-01-02T03:04:05.123456"}}}}"#,
            id % 10_000,
            id % 100
        ));
        text.push('\n');
        if id % 1000 == 999 || id == rows {
            text.push_str(&format!("{{\"tx\":\"t{tx}\",\"commit\":true}}\n"));
        }
    }
    text
}

fn config(dir: &Path, format: &str, sink: &str) -> String {
    let start = "snapshot: {mode: initial, fetchSize: 10000}\n";
    support::bench_config(dir, "scenario.jsonl", format, sink, start)
}

/// The best of three rounds of `f`, by wall time: (wall, CPU seconds).
fn best<F: FnMut(usize) -> Duration>(mut f: F) -> (Duration, f64) {
    (0..3)
        .map(|round| {
            let cpu = support::cpu_seconds();
            let wall = f(round);
            (wall, support::cpu_seconds() - cpu)
        })
        .min_by_key(|r| r.0)
        .unwrap_or_default()
}

fn report(label: &str, rows: u64, run: (Duration, f64), load: (Duration, f64), extra: &str) {
    let wall = run.0.saturating_sub(load.0).as_secs_f64().max(1e-9);
    let cpu = (run.1 - load.1).max(1e-9);
    println!(
        "  {label:<16} run {:>7.3} s  capture alone {:>9.0} rows/s  {:>9.0} rows per CPU second{extra}",
        run.0.as_secs_f64(),
        rows as f64 / wall,
        rows as f64 / cpu,
    );
}

fn main() {
    plan_sizes();
    let rows = rows();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let dir = dir.path();
    std::fs::write(dir.join("scenario.jsonl"), scenario(rows)).expect("the scenario is written");
    let load = best(|_| {
        let started = Instant::now();
        let simulator =
            Simulator::from_scenario_file(dir.join("scenario.jsonl")).expect("the scenario loads");
        std::hint::black_box(simulator);
        started.elapsed()
    });
    println!(
        "snapshot of {rows} rows (5 columns), fetchSize 10000; load (simulator only) {:.3} s, {:.2} CPU s",
        load.0.as_secs_f64(),
        load.1
    );
    println!("file sink (JSON Lines, a bookmark per batch):");
    for format in ["compact", "debezium"] {
        let out = dir.join(format!("out-{format}.jsonl"));
        let config_path = dir.join(format!("file-{format}.yaml"));
        let result = best(|_| {
            let _ = std::fs::remove_file(&out);
            let _ = std::fs::remove_file(dir.join(format!("out-{format}.jsonl.bookmark")));
            std::fs::write(
                &config_path,
                config(dir, format, &format!("file: {{path: {}}}", out.display())),
            )
            .expect("the config is written");
            support::timed_run(&config_path)
        });
        let lines = std::fs::read_to_string(&out)
            .map(|text| text.lines().count())
            .unwrap_or(0);
        assert_eq!(lines as u64, rows, "every row once");
        report(format, rows, result, load, "");
    }
    chunk_deciles(dir, rows);
    println!("through the real client over the SQL door, file sink (compact):");
    for threads in [1, 4] {
        let out = dir.join(format!("out-threads-{threads}.jsonl"));
        let config_path = dir.join(format!("threads-{threads}.yaml"));
        let result = best(|_| {
            let _ = std::fs::remove_file(&out);
            let _ = std::fs::remove_file(dir.join(format!("out-threads-{threads}.jsonl.bookmark")));
            let text = config(
                dir,
                "compact",
                &format!("file: {{path: {}}}", out.display()),
            )
            .replace(
                "fetchSize: 10000}",
                &format!("fetchSize: 10000, maxThreads: {threads}}}"),
            )
            .replace(".jsonl}}", ".jsonl, through: sql}, maxConnections: 5}");
            std::fs::write(&config_path, text).expect("the config is written");
            support::timed_run(&config_path)
        });
        let lines = std::fs::read_to_string(&out)
            .map(|text| text.lines().count())
            .unwrap_or(0);
        assert_eq!(lines as u64, rows, "every row once");
        report(&format!("maxThreads {threads}"), rows, result, load, "");
    }
    let Ok(bootstrap) = std::env::var("REDOLINE_KAFKA_BOOTSTRAP") else {
        println!("Kafka: skipped (set REDOLINE_KAFKA_BOOTSTRAP)");
        return;
    };
    println!(
        "Kafka ({bootstrap}, exactlyOnce: true, a transaction per batch, read back read_committed):"
    );
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    for format in ["compact", "debezium"] {
        let mut prefixes = Vec::new();
        let config_path = dir.join(format!("kafka-{format}.yaml"));
        let result = best(|round| {
            let prefix = format!(
                "bench-snapshot-{}-{stamp:x}-{format}-r{round}",
                std::process::id()
            );
            std::fs::write(
                &config_path,
                config(
                    dir,
                    format,
                    &format!(
                        "kafka: {{bootstrapServers: \"{bootstrap}\", topicPrefix: {prefix}, exactlyOnce: true}}"
                    ),
                ),
            )
            .expect("the config is written");
            let elapsed = support::timed_run(&config_path);
            prefixes.push(prefix);
            elapsed
        });
        let settings = KafkaClientSettings::with_bootstrap(&bootstrap);
        let mut records = 0u64;
        let topic = format!("{}.BENCH.T", prefixes.last().expect("a round ran"));
        let read = read_to_end(&settings, &topic, Duration::from_secs(60), |_| {
            records += 1;
            Ok(())
        });
        let extra = match read {
            Ok(()) => format!("  ({records} records read back)"),
            Err(error) => format!("  (the topic could not be read back: {error})"),
        };
        report(format, rows, result, load, &extra);
    }
}

/// The plan of the table and the time of each chunk read, directly and through the client, in
/// deciles of the chunks' order.
fn chunk_deciles(dir: &Path, rows: u64) {
    let load =
        || Simulator::from_scenario_file(dir.join("scenario.jsonl")).expect("the scenario loads");
    let mut direct = load();
    let schema = direct.schema("BENCH", "T").expect("the bench table");
    let scn = redoline_capture::source::DatabaseCatalog::current_scn(&mut direct)
        .expect("the current SCN");
    let config = redoline_capture::config::parse(
        "name: bench\ndatabase: {simulator: {scenario: x}}\ntables: [BENCH.T]\nfile: {path: x}\n",
        &[],
    )
    .expect("a config");
    let mut client = redoline_capture::run::through_sql(&config, SimulatorPool::new(load()))
        .expect("the client over the SQL door");
    let readers: [(&str, &mut dyn FlashbackReader); 2] =
        [("simulator", &mut direct), ("client over SQL", &mut client)];
    for (label, reader) in readers {
        let plan = reader.table_chunks(&schema, 10_000).expect("a plan");
        let mut times = Vec::with_capacity(plan.len());
        let mut read = 0;
        for range in &plan {
            let started = Instant::now();
            read += reader
                .flashback_range(&schema, scn, range, None)
                .expect("a chunk")
                .len();
            times.push(started.elapsed());
        }
        assert_eq!(read as u64, rows, "every row once");
        let deciles: Vec<String> = (1..=10)
            .map(|decile| {
                let slice = &times[(times.len() * (decile - 1) / 10)..(times.len() * decile / 10)];
                let mean = slice.iter().sum::<Duration>().as_secs_f64() / slice.len().max(1) as f64;
                format!("{:.1}", mean * 1e3)
            })
            .collect();
        println!(
            "chunks ({label}): {} chunks of about 10000 rows; ms per chunk by decile of the table: {}",
            plan.len(),
            deciles.join(" ")
        );
    }
}

/// The bytes a bookmark spends on the plan of a 100-million-row table (module doc).
fn plan_sizes() {
    use redoline_capture::source::RowRange;
    use redoline_capture::source::chunk_plan::ChunkPlan;
    use redoline_capture::source::chunks::{
        Extent, LAST_ROW, blocks_per_chunk, extended_row_id, plan,
    };

    const ROWS: u64 = 100_000_000;
    const BLOCKS: u64 = 1_000_000;
    // Automatic extent allocation: 16 extents of 64 KB (8 blocks of 8 KB), 63 of 1 MB, 120 of
    // 8 MB, then 64 MB ones, from block 128 of file 7.
    let mut extents = Vec::new();
    let mut block = 128;
    let mut allocated = 0;
    for (count, size) in [(16, 8), (63, 128), (120, 1024), (u64::MAX, 8192)] {
        for _ in 0..count {
            if allocated >= BLOCKS {
                break;
            }
            extents.push(Extent {
                data_object: 73_545,
                file: 7,
                block,
                blocks: size,
            });
            block += size;
            allocated += size;
        }
    }
    let chunks = plan(&extents, blocks_per_chunk(10_000, Some(ROWS), Some(BLOCKS)));
    let ranges: Vec<RowRange> = chunks
        .iter()
        .map(|c| RowRange::RowId {
            lo: extended_row_id(c.data_object, c.first.file, c.first.block, 0).expect("a ROWID"),
            hi: extended_row_id(c.data_object, c.last.file, c.last.block, LAST_ROW)
                .expect("a ROWID"),
        })
        .collect();
    let json = serde_json::to_string(&ranges).expect("JSON").len();
    let mut packed = ChunkPlan::new(ranges);
    let whole = serde_json::to_string(&packed).expect("JSON").len();
    packed.forget_before(packed.len() / 2);
    let half = serde_json::to_string(&packed).expect("JSON").len();
    println!(
        "bookmark plan of a {ROWS}-row table, fetchSize 10000 ({} chunks): JSON list {json} bytes; \
         packed {whole} bytes, {half} bytes halfway",
        chunks.len()
    );
}
