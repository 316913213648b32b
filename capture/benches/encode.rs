//! Throughput of the per-change path, one thread: the SQL_REDO of one INSERT is parsed
//! ([`parse_dml`]), its values typed by their columns ([`typed_row`]) and the event encoded, per
//! format. `typing only` starts from already parsed values, to separate the costs.
//!
//! ```sh
//! cargo bench -p redoline-capture --bench encode
//! taskset -c 1 cargo bench -p redoline-capture --bench encode   # pinned to one core
//! ```
//!
//! Tables of 5 and 20 columns cycle through NUMBER(10) (the key), VARCHAR2, NUMBER(12,2),
//! `TO_DATE(..)`, `TO_TIMESTAMP(..)` (TIMESTAMP(6)), BINARY_DOUBLE and RAW via `HEXTORAW`.
//! Formats: `compact`, `debezium` without envelope, `debezium` with the `schema`/`payload`
//! envelope, and the latter with connector options (transaction metadata, a hashed column, a
//! left-out column, source type parameters). The last row writes the enveloped records through
//! the file sink (`{"topic","key","value"}` lines, to a file in the temporary directory that is
//! removed afterwards), a synced page with its bookmark every 10 events (`file/10`: a page per
//! 10-change transaction, the default `mining.batchSize`) or every 100,000 (`file/100k`:
//! `batchSize: 0`): the issue 17 target "Debezium encoder to the file sink ≥ 300,000 events/s"
//! without the simulator and mining.
//!
//! A second table compares the encodings alone on the same typed row (the event built, then
//! encoded): Debezium JSON without and with the envelope (`schemas.enable`), and Avro
//! (`format.encoding: avro`, Confluent's wire format, ids from the in-memory registry model),
//! with the key and value bytes of each event side by side.
//! Figures are printed, never asserted.

use std::borrow::Cow;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use redoline_capture::dictionary::{Column, OracleType, TableSchema};
use redoline_capture::event::debezium::{DebeziumEncoder, DebeziumOptions, Encoding};
use redoline_capture::event::{ChangeEvent, Operation, SourceInfo, compact};
use redoline_capture::filter::Filters;
use redoline_capture::redo::ast::{ColumnValue, DmlStatement, RawValue};
use redoline_capture::redo::parse_dml;
use redoline_capture::registry::memory::MemoryRegistry;
use redoline_capture::sink::file::{FileSink, bookmark_path};
use redoline_capture::source::Xid;
use redoline_capture::value::{Row, typed_row};
use redoline_crds::v1alpha1::{ColumnsSpec, FiltersSpec, HashAlgorithm, HashMask};

const WARM_UP: Duration = Duration::from_millis(300);
const MEASURE: Duration = Duration::from_millis(1500);
/// Events per committed (synced) page of the file sink rows: 10 is a page per 10-change
/// transaction (`mining.batchSize` other than 0, the default), 100,000 an aggregated page
/// (`batchSize: 0`, as in `capture_e2e`).
const FILE_PAGE_EVENTS: [usize; 2] = [10, 100_000];

const TYPES: [&str; 7] = [
    "NUMBER(10)",
    "VARCHAR2(40)",
    "NUMBER(12,2)",
    "DATE",
    "TIMESTAMP(6)",
    "BINARY_DOUBLE",
    "RAW(16)",
];

fn text(s: &str) -> RawValue<'static> {
    RawValue::Text(Cow::Owned(s.to_owned()))
}

fn call(name: &str, args: &[&str]) -> RawValue<'static> {
    RawValue::Call {
        name: Cow::Owned(name.to_owned()),
        args: args.iter().map(|a| text(a)).collect(),
    }
}

fn table(columns: usize) -> Arc<TableSchema> {
    let columns = (0..columns)
        .map(|i| {
            let data_type = OracleType::parse(TYPES[i % TYPES.len()]).unwrap_or(OracleType::Date);
            let column = Column::new(format!("C{}", i + 1), data_type);
            if i == 0 { column.key(1) } else { column }
        })
        .collect();
    match TableSchema::new("BENCH", "T", columns) {
        Ok(t) => Arc::new(t),
        Err(e) => panic_free_exit(&e.to_string()),
    }
}

fn raw_values(columns: usize) -> Vec<ColumnValue<'static>> {
    (0..columns)
        .map(|i| {
            let raw = match i % TYPES.len() {
                0 => text(&(1_000_000 + i).to_string()),
                1 => text("a customer name of some length"),
                2 => text("12345.67"),
                3 => call("TO_DATE", &["2024-01-02 03:04:05", "YYYY-MM-DD HH24:MI:SS"]),
                4 => call("TO_TIMESTAMP", &["2024-01-02 03:04:05.123456000"]),
                5 => text("3.141592653589793"),
                _ => call("HEXTORAW", &["00112233445566778899aabbccddeeff"]),
            };
            (Cow::Owned(format!("C{}", i + 1)), raw)
        })
        .collect()
}

/// The INSERT LogMiner would write for [`raw_values`].
fn insert_sql(columns: usize) -> String {
    fn render(value: &RawValue) -> String {
        match value {
            RawValue::Null => "NULL".into(),
            RawValue::Unsupported => "Unsupported Type".into(),
            RawValue::Text(t) => format!("'{}'", t.replace('\'', "''")),
            RawValue::Call { name, args } => {
                let args: Vec<String> = args.iter().map(render).collect();
                format!("{name}({})", args.join(", "))
            }
        }
    }
    let raw = raw_values(columns);
    let names: Vec<String> = raw.iter().map(|(n, _)| format!("\"{n}\"")).collect();
    let values: Vec<String> = raw.iter().map(|(_, v)| render(v)).collect();
    format!(
        "insert into \"BENCH\".\"T\"({}) values ({});",
        names.join(","),
        values.join(",")
    )
}

/// The create event of `row`, with the source position every measurement uses.
fn insert_event(
    table: &Arc<TableSchema>,
    row: Row,
    xid: Option<Xid>,
    now: jiff::Timestamp,
) -> ChangeEvent {
    ChangeEvent {
        op: Operation::Create,
        table: Arc::clone(table),
        before: None,
        after: Some(row),
        source: SourceInfo {
            scn: 2_146_947,
            commit_scn: Some(2_146_951),
            xid,
            ssn: 1,
            redo_thread: 1,
            change_time: Some(now),
            commit_time: Some(now),
            ..SourceInfo::default()
        },
    }
}

fn panic_free_exit(message: &str) -> ! {
    eprintln!("encode bench: {message}");
    std::process::exit(1)
}

/// Runs `step` repeatedly and returns events per second.
fn measure(mut step: impl FnMut() -> usize) -> f64 {
    let start = Instant::now();
    while start.elapsed() < WARM_UP {
        black_box(step());
    }
    let start = Instant::now();
    let mut events = 0u64;
    let mut bytes = 0usize;
    while start.elapsed() < MEASURE {
        for _ in 0..64 {
            bytes = bytes.wrapping_add(step());
            events += 1;
        }
    }
    black_box(bytes);
    events as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let now: jiff::Timestamp = "2024-01-02T03:04:07Z"
        .parse()
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let xid = Xid::from_hex("07000C00F3010000").ok();
    println!(
        "{:<44} {:>8} {:>14} {:>12}",
        "format", "columns", "events/s", "µs/event"
    );
    for columns in [5usize, 20] {
        let table = table(columns);
        let raw = raw_values(columns);
        let event_of = |row| insert_event(&table, row, xid, now);
        let sql = insert_sql(columns);
        let parse_and_type = || match parse_dml(&sql) {
            Ok(DmlStatement::Insert { values, .. }) => match typed_row(&table, &values) {
                Ok(row) => row,
                Err(e) => panic_free_exit(&e.to_string()),
            },
            Ok(other) => panic_free_exit(&format!("not an insert: {other:?}")),
            Err(e) => panic_free_exit(&e.to_string()),
        };
        let mut plain = DebeziumEncoder::new(DebeziumOptions {
            schemas_enabled: false,
            ..DebeziumOptions::default()
        });
        let mut enveloped = DebeziumEncoder::new(DebeziumOptions::default());
        let mut avro = avro_encoder();
        // Connector options on: transaction metadata (each event numbered in one long
        // transaction), a hashed VARCHAR2, a left-out column and source type parameters.
        let options = ColumnsSpec {
            mask_hash: vec![HashMask {
                algorithm: HashAlgorithm::Sha256,
                salt: "salt".to_owned(),
                columns: vec!["BENCH\\.T\\.C2".to_owned()],
            }],
            datatype_propagate_source_type: vec!["NUMBER".to_owned()],
            ..ColumnsSpec::default()
        };
        let filters = FiltersSpec {
            column_exclude_list: vec!["BENCH\\.T\\.C3".to_owned()],
            ..FiltersSpec::default()
        };
        let filters = match Filters::new(&filters, &options) {
            Ok(filters) => Arc::new(filters),
            Err(e) => panic_free_exit(&e.to_string()),
        };
        let mut optioned = DebeziumEncoder::with_filters(
            DebeziumOptions {
                provide_transaction_metadata: true,
                ..DebeziumOptions::default()
            },
            filters,
        );
        let debezium = |encoder: &mut DebeziumEncoder| match encoder
            .encode(&event_of(parse_and_type()), now)
        {
            Ok(records) => records
                .iter()
                .map(|r| r.value.as_ref().map_or(0, Vec::len))
                .sum(),
            Err(e) => panic_free_exit(&e.to_string()),
        };
        // The enveloped records as the file sink's lines, committed (synced, with a bookmark)
        // every `page_events` events like pages of the capture.
        let mut to_file = |page_events: usize| {
            let path = std::env::temp_dir().join(format!(
                "redoline-encode-bench-{}-{columns}-{page_events}.jsonl",
                std::process::id()
            ));
            let mut sink = match FileSink::open(&path) {
                Ok((sink, _)) => sink,
                Err(e) => panic_free_exit(&e.to_string()),
            };
            let mut encoder = DebeziumEncoder::new(DebeziumOptions::default());
            let mut events = 0usize;
            let rate = measure(|| {
                let records = match encoder.encode(&event_of(parse_and_type()), now) {
                    Ok(records) => records,
                    Err(e) => panic_free_exit(&e.to_string()),
                };
                for record in &records {
                    let appended = sink.append_record_line(
                        &record.topic,
                        record.key.as_deref(),
                        record.value.as_deref(),
                    );
                    if let Err(e) = appended {
                        panic_free_exit(&e.to_string());
                    }
                }
                events += 1;
                if events.is_multiple_of(page_events)
                    && let Err(e) = sink.commit(&serde_json::json!({ "events": events }))
                {
                    panic_free_exit(&e.to_string());
                }
                records.len()
            });
            drop(sink);
            for path in [path.clone(), bookmark_path(&path)] {
                // Best effort: a leftover file in the temporary directory is harmless.
                let _ = std::fs::remove_file(path);
            }
            rate
        };
        let file_rates = FILE_PAGE_EVENTS.map(&mut to_file);
        let results = [
            (
                "typing only",
                measure(|| match typed_row(&table, &raw) {
                    Ok(row) => row.len(),
                    Err(e) => panic_free_exit(&e.to_string()),
                }),
            ),
            ("parse + type", measure(|| parse_and_type().len())),
            (
                "parse + type + compact",
                measure(|| compact::encode(&event_of(parse_and_type())).len()),
            ),
            (
                "parse + type + debezium (no envelope)",
                measure(|| debezium(&mut plain)),
            ),
            (
                "parse + type + debezium (envelope)",
                measure(|| debezium(&mut enveloped)),
            ),
            (
                "parse + type + debezium (env., options)",
                measure(|| debezium(&mut optioned)),
            ),
            (
                "parse + type + debezium (avro)",
                measure(|| debezium(&mut avro)),
            ),
            ("parse + type + debezium (env.) → file/10", file_rates[0]),
            ("parse + type + debezium (env.) → file/100k", file_rates[1]),
        ];
        for (name, per_second) in results {
            println!(
                "{name:<44} {columns:>8} {per_second:>14.0} {:>12.2}",
                1e6 / per_second
            );
        }
    }
    encodings_alone(now, xid);
}

/// A Debezium encoder writing Avro, its schema ids from the in-memory registry.
fn avro_encoder() -> DebeziumEncoder {
    DebeziumEncoder::with_registry(
        DebeziumOptions {
            encoding: Encoding::Avro,
            ..DebeziumOptions::default()
        },
        Arc::new(Filters::default()),
        Box::new(MemoryRegistry::default()),
    )
}

/// The encoders alone on one typed row per table shape: events/s and key + value bytes/event.
fn encodings_alone(now: jiff::Timestamp, xid: Option<Xid>) {
    println!();
    println!(
        "{:<44} {:>8} {:>14} {:>12} {:>12}",
        "encoding alone", "columns", "events/s", "µs/event", "bytes/event"
    );
    for columns in [5usize, 20] {
        let table = table(columns);
        let row = match typed_row(&table, &raw_values(columns)) {
            Ok(row) => row,
            Err(e) => panic_free_exit(&e.to_string()),
        };
        let event = insert_event(&table, row, xid, now);
        let encoders = [
            (
                "debezium json (no envelope)",
                DebeziumEncoder::new(DebeziumOptions {
                    schemas_enabled: false,
                    ..DebeziumOptions::default()
                }),
            ),
            (
                "debezium json (envelope)",
                DebeziumEncoder::new(DebeziumOptions::default()),
            ),
            ("debezium avro", avro_encoder()),
        ];
        for (name, mut encoder) in encoders {
            let mut bytes = 0usize;
            let mut encode = || match encoder.encode(&event.clone(), now) {
                Ok(records) => records
                    .iter()
                    .map(|r| {
                        r.key.as_ref().map_or(0, Vec::len) + r.value.as_ref().map_or(0, Vec::len)
                    })
                    .sum::<usize>(),
                Err(e) => panic_free_exit(&e.to_string()),
            };
            bytes = bytes.max(encode());
            let per_second = measure(encode);
            println!(
                "{name:<44} {columns:>8} {per_second:>14.0} {:>12.2} {bytes:>12}",
                1e6 / per_second
            );
        }
    }
}
