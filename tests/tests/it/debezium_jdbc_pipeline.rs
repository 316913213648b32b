//! What a Debezium user runs, end to end: redoline's Debezium-format records, read by Kafka Connect
//! (standalone, `connect-runtime` 4.1.2 as the broker) with `JsonConverter` (`schemas.enable=true`
//! for keys and values) and written by Debezium's own JDBC sink connector (3.6.0.Final) into a
//! real PostgreSQL, must leave there exactly the rows the simulated Oracle database holds.
//!
//! One simulated workload, captured four times, in Debezium's default modes and in
//! `decimal.handling.mode` `double` and `string`, and in the default modes again in Avro through a
//! real schema registry (`format.encoding: avro`, Apicurio Registry from `tests/env/registry.sh`,
//! read by the worker with Apicurio's Kafka Connect `AvroConverter` in Confluent's wire format),
//! each into topics of its own and a PostgreSQL database of its own: an initial snapshot (rows committed before the capture's first run), then,
//! appended to the scenario and streamed by a second run, inserts, updates, deletes, a change of a
//! primary key and a rolled back transaction, and on APP.ACCOUNTS an ADD COLUMN and later a DROP
//! COLUMN with rows written before, between and after them; the second run also re-reads
//! APP.ALL_TYPES as an incremental snapshot while it streams. The second run starts only after all
//! of it is written, so it mines every row after both DDLs are in the dictionary: a capture
//! lagging behind its DDLs. The tables hold the Oracle types of Debezium's own Oracle datatype
//! test that the simulator supports. The JDBC sink takes Debezium envelopes as they are (its
//! documentation: no `ExtractNewRecordState` needed, it reads `op`, `before` and `after` itself),
//! so no SMT runs.
//!
//! Before the sink runs, the APP.ACCOUNTS events and the schema change events of each capture are
//! read back from Kafka through Debezium's `JsonConverter` (`tests/env/jsonconverter`): the value
//! schema of each event must be the table's structure in force at the event's SCN (none of the
//! added column before the ADD, the dropped column gone after the DROP, each switch at its DDL's
//! SCN), and the schema change topic must hold one event per DDL, in order, with the table's
//! columns after it (`jdbc_pipeline/schema_versions.rs`). The Avro capture registers one version
//! of APP.ACCOUNTS' value schema per structure (before the ADD, after it, after the DROP) under
//! its subject, and the registry must hold exactly those three.
//!
//! The comparison is row by row and column by column against `Simulator::committed_rows` of the
//! same scenario applied in-process (the dropped column, which the sink keeps, as the sink's
//! upserts leave it: see `dropped_column_values`), with the PostgreSQL column types the sink
//! creates from the Connect schemas (`numeric` for `Decimal`, `double precision` for
//! `VariableScaleDecimal` and float64, `text` for strings, `timestamp`/`timestamptz` for the time
//! types, `interval` for `MicroDuration`) and the values Debezium's semantics give: exact decimals
//! padded to the scale, floats equal as binary floats, times to PostgreSQL's microsecond, zoned
//! times as instants.
//!
//! The harness: `tests/env/jdbc-pipeline/run.sh` (Maven, cached); PostgreSQL: the one
//! `REDOLINE_POSTGRES_URL` names (`tests/env/test-all.sh` starts one), otherwise one this test
//! starts with `tests/env/postgres.sh`; Kafka: `REDOLINE_KAFKA_BOOTSTRAP` or a broker of its own.
//! Nothing is skipped: a missing service that cannot be started fails the test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use redoline_capture::simulator::Simulator;
use redoline_capture::sink::KafkaClientSettings;
use redoline_capture::sink::kafka::reader::read_to_end;
use redoline_capture::value::Value;
use redoline_tests::kafka::{KafkaEnv, unique_prefix};
use redoline_tests::process::free_port;
use redoline_tests::registry::RegistryEnv;

mod schema_versions;

/// The PostgreSQL server: `postgresql://user@host:port/db` of a superuser with trust access.
const POSTGRES_ENV: &str = "REDOLINE_POSTGRES_URL";

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

// ----- the workload ---------------------------------------------------------------------------

/// How a column's values read back from PostgreSQL.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// An integer NUMBER(p,s), s <= 0: int8/16/32/64 in precise mode.
    Int,
    /// NUMBER(p,0) too wide for int64: a Connect Decimal of scale 0 in precise mode.
    WideInt,
    /// NUMBER(p,s), s > 0: Decimal in precise mode.
    Decimal(u32),
    /// NUMBER and FLOAT(b): VariableScaleDecimal in precise mode.
    Variable,
    Float32,
    Float64,
    Text,
    Bytes,
    /// DATE and TIMESTAMP(n): a wall-clock reading.
    Timestamp,
    /// TIMESTAMP WITH (LOCAL) TIME ZONE: an instant.
    Zoned,
    /// Kept for the expectations of INTERVAL, which the workload leaves out (see `ALL_TYPES`).
    #[allow(dead_code)]
    Interval,
}

/// The columns of APP.ALL_TYPES: name, Oracle type, kind, and whether Debezium gives it a
/// zero-scale NUMBER schema (float64 / string in the double / string decimal modes, Debezium ≥ 2.7).
const ALL_TYPES: &[(&str, &str, Kind)] = &[
    ("ID", "NUMBER(10)", Kind::Int),
    ("FLAG", "NUMBER(1)", Kind::Int),
    ("N_INT18", "NUMBER(18)", Kind::Int),
    ("N_WIDE", "NUMBER(25)", Kind::WideInt),
    ("N_DEC", "NUMBER(10,2)", Kind::Decimal(2)),
    ("N_NEG_SCALE", "NUMBER(5,-2)", Kind::Int),
    ("N_FLOATING", "NUMBER", Kind::Variable),
    ("F_FLOAT", "FLOAT(126)", Kind::Variable),
    ("BF", "BINARY_FLOAT", Kind::Float32),
    ("BD", "BINARY_DOUBLE", Kind::Float64),
    ("C", "CHAR(10)", Kind::Text),
    ("NC", "NCHAR(3)", Kind::Text),
    ("VC", "VARCHAR2(20 CHAR)", Kind::Text),
    ("NVC", "NVARCHAR2(10)", Kind::Text),
    ("RW", "RAW(8)", Kind::Bytes),
    ("D", "DATE", Kind::Timestamp),
    ("TS0", "TIMESTAMP(0)", Kind::Timestamp),
    ("TS3", "TIMESTAMP(3)", Kind::Timestamp),
    ("TS6", "TIMESTAMP", Kind::Timestamp),
    ("TS9", "TIMESTAMP(9)", Kind::Timestamp),
    ("TSTZ", "TIMESTAMP(6) WITH TIME ZONE", Kind::Zoned),
    ("TSLTZ", "TIMESTAMP(3) WITH LOCAL TIME ZONE", Kind::Zoned),
    // INTERVAL YEAR TO MONTH / DAY TO SECOND are left out: in Debezium's default
    // `interval.handling.mode=numeric` they are `io.debezium.time.MicroDuration` float64 values,
    // and the JDBC sink's PostgreSQL `IntervalType` binds only a long; the float it gets is
    // bound as `cast(? as interval)` of a double, which PostgreSQL refuses ("cannot cast type
    // double precision to interval") and the sink task dies. The same holds behind Debezium's
    // own Oracle connector, whose MicroDuration is float64 too.
];

/// APP.ACCOUNTS before the DDLs, the column the first adds, and the one the second drops.
const ACCOUNTS: &[(&str, &str, Kind)] = &[
    ("ID", "NUMBER(10)", Kind::Int),
    ("NAME", "VARCHAR2(40)", Kind::Text),
    ("BALANCE", "NUMBER(12,2)", Kind::Decimal(2)),
];
const ACCOUNTS_ADDED: (&str, &str, Kind) = ("NOTE", "VARCHAR2(50)", Kind::Text);
const ACCOUNTS_ADD: &str = "ALTER TABLE APP.ACCOUNTS ADD (NOTE VARCHAR2(50))";
const ACCOUNTS_DROPPED: &str = "NAME";
const ACCOUNTS_DROP: &str = "ALTER TABLE APP.ACCOUNTS DROP COLUMN NAME";

/// APP.DOCS: LOBs, inserted and deleted only. An update leaving a LOB alone carries Debezium's
/// unavailable-value placeholder for it, which the JDBC sink would write as the value (as it
/// does behind Debezium's own connector), so the workload does not update this table.
const DOCS: &[(&str, &str, Kind)] = &[
    ("ID", "NUMBER(10)", Kind::Int),
    ("CL", "CLOB", Kind::Text),
    ("NCL", "NCLOB", Kind::Text),
    ("BL", "BLOB", Kind::Bytes),
];

fn table_line(name: &str, columns: &[(&str, &str, Kind)]) -> String {
    let columns: Vec<serde_json::Value> = columns
        .iter()
        .map(|(column, oracle_type, _)| {
            let mut c = serde_json::json!({"name": column, "type": oracle_type});
            if *column == "ID" {
                c["key"] = true.into();
            }
            c
        })
        .collect();
    serde_json::json!({"table": name, "columns": columns, "logging": "all"}).to_string() + "\n"
}

fn step(value: serde_json::Value) -> String {
    value.to_string() + "\n"
}

/// The rows committed before the capture first runs: its initial snapshot reads them.
fn snapshot_part() -> String {
    use serde_json::json;
    let mut s = String::new();
    s += &table_line("APP.ALL_TYPES", ALL_TYPES);
    s += &table_line("APP.ACCOUNTS", ACCOUNTS);
    s += &table_line("APP.DOCS", DOCS);
    s += &step(json!({"tx":"s1","insert":"APP.ALL_TYPES","values":{
    "ID":1,"FLAG":1,"N_INT18":"-123456789012345678","N_WIDE":"1234567890123456789012345",
    "N_DEC":"10.50","N_NEG_SCALE":12300,"N_FLOATING":"0.3333333333333333333333333333333333333333",
    "F_FLOAT":"-29669.9","BF":1.5,"BD":123.456,"C":"ab","NC":"xyz",
    "VC":"héllo wörld","NVC":"Привет","RW":"00ff10",
    "D":"2024-01-02 03:04:05","TS0":"2024-01-02 03:04:05","TS3":"2021-09-14 07:36:46.478",
    "TS6":"2021-09-14 07:36:46.123456","TS9":"2021-09-14 07:36:46.123456789",
    "TSTZ":"2024-01-02 03:04:05.123456 +01:00","TSLTZ":"2024-01-02 03:04:05.123",
    }}));
    s += &step(json!({"tx":"s1","insert":"APP.ALL_TYPES","values":{
        "ID":2,"FLAG":0,"N_INT18":"999999999999999999","N_WIDE":"-9999999999999999999999999",
        "N_DEC":"-0.05","N_NEG_SCALE":-99900,"N_FLOATING":"-0.00000000015","F_FLOAT":"12345678.875",
        "BF":-0.25,"BD":-1.0e300,"C":"x","NC":"é","VC":"O'Brien \\ \"quoted\"","NVC":"日本",
        "RW":"deadbeef","D":"1969-12-31 23:59:59","TS0":"1900-01-01 00:00:00",
        "TS3":"1969-12-31 23:59:59.999","TS6":"1969-12-31 23:59:59.999999",
        "TS9":"2000-02-29 12:00:00.000000001","TSTZ":"1999-12-31 20:30:00 -05:30",
        "TSLTZ":"1970-01-01 00:00:00"}}));
    for (id, name, balance) in [
        (1, "alice", "100.00"),
        (2, "bob", "20.50"),
        (3, "carol", "3.33"),
        (4, "dave", "-4.00"),
        (5, "erin", "0.01"),
    ] {
        s += &step(
            json!({"tx":"s1","insert":"APP.ACCOUNTS","values":{"ID":id,"NAME":name,"BALANCE":balance}}),
        );
    }
    s += &step(json!({"tx":"s1","insert":"APP.DOCS","values":{
        "ID":1,"CL":"a snapshot CLOB","NCL":"ünïcödé NCLOB","BL":"cafebabe"}}));
    s += &step(json!({"tx":"s1","commit":true}));
    s += &step(json!({"advance_seconds":5}));
    s
}

/// What happens after the snapshot: streamed by the capture's second run. All of it is written
/// while the capture is stopped, so that run mines every row after both DDLs on APP.ACCOUNTS are
/// in the dictionary: the capture lags behind them, and the rows before each DDL must be typed
/// with the structure their SCN had, not the catalog's.
fn streaming_part() -> String {
    streaming_before_drop() + &streaming_from_drop()
}

/// The streamed steps up to the DROP COLUMN.
fn streaming_before_drop() -> String {
    use serde_json::json;
    let mut s = String::new();
    // Before the ADD.
    s += &step(
        json!({"tx":"a","update":"APP.ACCOUNTS","where":{"ID":1},"set":{"BALANCE":"150.25"}}),
    );
    s += &step(json!({"tx":"a","delete":"APP.ACCOUNTS","where":{"ID":2}}));
    // A change of the primary key: a delete, a tombstone and a create.
    s += &step(json!({"tx":"a","update":"APP.ACCOUNTS","where":{"ID":3},"set":{"ID":30}}));
    s += &step(
        json!({"tx":"a","insert":"APP.ACCOUNTS","values":{"ID":6,"NAME":"frank","BALANCE":"6.60"}}),
    );
    s += &step(json!({"tx":"a","commit":true}));
    // Rolled back: never reaches PostgreSQL.
    s += &step(
        json!({"tx":"r","update":"APP.ACCOUNTS","where":{"ID":4},"set":{"BALANCE":"999.99"}}),
    );
    s += &step(json!({"tx":"r","delete":"APP.ACCOUNTS","where":{"ID":5}}));
    s += &step(json!({"tx":"r","rollback":true}));
    // Schema evolution: a new column (the sink's `schema.evolution=basic` adds it), then rows
    // using it.
    s += &step(json!({"ddl": ACCOUNTS_ADD}));
    s += &step(
        json!({"tx":"b","insert":"APP.ACCOUNTS","values":{"ID":7,"NAME":"grace","BALANCE":"7.00","NOTE":"added later"}}),
    );
    s += &step(
        json!({"tx":"b","update":"APP.ACCOUNTS","where":{"ID":4},"set":{"NOTE":"noted","BALANCE":"-4.50"}}),
    );
    s +=
        &step(json!({"tx":"b","update":"APP.ACCOUNTS","where":{"ID":30},"set":{"NAME":"carol 2"}}));
    s += &step(json!({"tx":"b","commit":true}));
    // Between the ADD and the DROP: both columns written.
    s += &step(
        json!({"tx":"b2","update":"APP.ACCOUNTS","where":{"ID":6},"set":{"NAME":"frank 2","NOTE":"before the drop"}}),
    );
    s += &step(
        json!({"tx":"b2","insert":"APP.ACCOUNTS","values":{"ID":8,"NAME":"heidi","BALANCE":"8.00","NOTE":"re-keyed later"}}),
    );
    s += &step(json!({"tx":"b2","commit":true}));
    // Every type streamed: a row of NULLs first, in a transaction still open at the DROP (on
    // another table: Oracle takes the DDL's lock on APP.ACCOUNTS alone).
    s += &step(json!({"tx":"c","insert":"APP.ALL_TYPES","values":{"ID":3}}));
    s
}

/// The streamed steps from the DROP COLUMN on.
fn streaming_from_drop() -> String {
    use serde_json::json;
    let long_clob: String = "0123456789abcdef".repeat(600); // 9,600 characters: LOB pieces
    let mut s = String::new();
    s += &step(json!({"ddl": ACCOUNTS_DROP}));
    // After the DROP: a new row, an update of a row written before it, a delete, a key change
    // (a delete and a create), and a row deleted here and inserted again below.
    s += &step(
        json!({"tx":"f","insert":"APP.ACCOUNTS","values":{"ID":9,"BALANCE":"9.99","NOTE":"after the drop"}}),
    );
    s += &step(json!({"tx":"f","update":"APP.ACCOUNTS","where":{"ID":7},"set":{"BALANCE":"7.77"}}));
    s += &step(json!({"tx":"f","delete":"APP.ACCOUNTS","where":{"ID":5}}));
    s += &step(json!({"tx":"f","update":"APP.ACCOUNTS","where":{"ID":8},"set":{"ID":80}}));
    s += &step(json!({"tx":"f","commit":true}));
    s += &step(json!({"tx":"c","insert":"APP.ALL_TYPES","values":{
    "ID":4,"FLAG":1,"N_INT18":"0","N_WIDE":"1","N_DEC":"99999999.99","N_NEG_SCALE":100,
    "N_FLOATING":"123456789012345678901234567890","F_FLOAT":"0.1","BF":3.4028235e38,
    "BD":5e-324,"C":"full     x","NC":"abc","VC":"tab\there","NVC":"ß","RW":"0102030405060708",
    "D":"9999-12-31 23:59:59","TS0":"2024-02-29 00:00:00","TS3":"2024-02-29 00:00:00.001",
    "TS6":"2024-02-29 00:00:00.000001","TS9":"2024-02-29 00:00:00.999999999",
    "TSTZ":"2024-06-30 23:59:59.999999 +14:00","TSLTZ":"2038-01-19 03:14:08.000 +00:00",
    }}));
    s += &step(
        json!({"tx":"c","update":"APP.ALL_TYPES","where":{"ID":1},"set":{
        "N_DEC":"-12345678.90","VC":"changed","TS6":"2025-05-05 05:05:05.050505",
        "BD":-0.5,"N_FLOATING":"7","RW":null,"TSTZ":"2025-01-01 00:00:00 +00:00"}}),
    );
    s += &step(json!({"tx":"c","update":"APP.ALL_TYPES","where":{"ID":2},"set":{"ID":20}}));
    s += &step(json!({"tx":"c","commit":true}));
    s += &step(
        json!({"tx":"g","insert":"APP.ACCOUNTS","values":{"ID":5,"BALANCE":"5.55","NOTE":"back again"}}),
    );
    s += &step(
        json!({"tx":"g","update":"APP.ACCOUNTS","where":{"ID":1},"set":{"NOTE":"still alice"}}),
    );
    s += &step(json!({"tx":"g","commit":true}));
    s += &step(
        json!({"tx":"d","insert":"APP.DOCS","values":{"ID":2,"CL":long_clob,"NCL":"𝄞 outside the BMP","BL":"00"}}),
    );
    s += &step(
        json!({"tx":"d","insert":"APP.DOCS","values":{"ID":3,"CL":null,"NCL":null,"BL":null}}),
    );
    s += &step(
        json!({"tx":"d","insert":"APP.DOCS","values":{"ID":4,"CL":"gone","NCL":"gone","BL":"ff"}}),
    );
    s += &step(json!({"tx":"d","commit":true}));
    s += &step(json!({"tx":"e","delete":"APP.DOCS","where":{"ID":4}}));
    s += &step(json!({"tx":"e","commit":true}));
    s
}

// ----- modes ----------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Precise,
    Double,
    String,
}

/// How a capture of the workload writes its records.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Encoding {
    Json,
    /// Avro through the schema registry (TopicNameStrategy, auto-registration).
    Avro,
}

/// The captures of the workload: each decimal mode in JSON, and Debezium's default modes in Avro.
const RUNS: [(Mode, Encoding); 4] = [
    (Mode::Precise, Encoding::Json),
    (Mode::Double, Encoding::Json),
    (Mode::String, Encoding::Json),
    (Mode::Precise, Encoding::Avro),
];

/// A capture's name in directories, topic prefixes and database names.
fn run_name(mode: Mode, encoding: Encoding) -> String {
    match encoding {
        Encoding::Json => mode.name().to_owned(),
        Encoding::Avro => format!("{}_avro", mode.name()),
    }
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Precise => "precise",
            Mode::Double => "double",
            Mode::String => "string",
        }
    }
}

/// The PostgreSQL column type the JDBC sink creates for a column of `kind` (its dialect's names
/// for the Connect schema Debezium's Oracle connector gives the column in `mode`).
fn expected_pg_type(kind: Kind, oracle_type: &str, mode: Mode) -> &'static str {
    let numeric = |precise: &'static str| match mode {
        Mode::Precise => precise,
        Mode::Double => "double precision",
        Mode::String => "text",
    };
    match kind {
        // NUMBER(5,-2) keeps an integer schema in every mode (only scale 0 turns into a float or
        // string, Debezium's OracleValueConverters).
        Kind::Int if oracle_type.contains(",-") => "integer",
        Kind::Int => numeric(match oracle_type {
            "NUMBER(1)" => "smallint", // int8: PostgreSQL has no one-byte integer
            "NUMBER(10)" | "NUMBER(18)" => "bigint",
            other => panic!("no integer width for {other}"),
        }),
        Kind::WideInt | Kind::Decimal(_) => numeric("numeric"),
        // VariableScaleDecimal: the sink uses the dialect's double (it has no precision to use).
        Kind::Variable => numeric("double precision"),
        Kind::Float32 => "real",
        Kind::Float64 => "double precision",
        Kind::Text => "text",
        Kind::Bytes => "bytea",
        Kind::Timestamp => "timestamp without time zone",
        Kind::Zoned => "timestamp with time zone",
        Kind::Interval => "interval",
    }
}

// ----- expected values ------------------------------------------------------------------------

/// A value as PostgreSQL must hold it.
#[derive(Clone, Debug, PartialEq)]
enum Expected {
    Null,
    /// Compared as text (integers, exact decimals, strings, hex bytes, times, interval seconds).
    Exact(String),
    /// Compared as binary floats (PostgreSQL prints the shortest text that reads back exactly).
    F64(f64),
    F32(f32),
}

impl Expected {
    fn matches(&self, actual: Option<&str>) -> bool {
        match (self, actual) {
            (Expected::Null, None) => true,
            (Expected::Exact(e), Some(a)) => e == a,
            (Expected::F64(e), Some(a)) => a
                .parse::<f64>()
                .is_ok_and(|a| a == *e && a.is_sign_negative() == e.is_sign_negative()),
            (Expected::F32(e), Some(a)) => a.parse::<f32>().is_ok_and(|a| a == *e),
            _ => false,
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

/// `YYYY-MM-DDTHH:MI:SS.ffffff` of microseconds since the epoch (the SQL side's `to_char`).
fn format_micros(micros: i64) -> String {
    let days = micros.div_euclid(86_400_000_000);
    let rest = micros.rem_euclid(86_400_000_000);
    let (y, m, d) = civil_from_days(days);
    let secs = rest / 1_000_000;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:06}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        rest % 1_000_000
    )
}

/// Nanoseconds since the epoch of a civil date-time (jiff's, inside the capture's `Value`; a
/// macro, so this crate needs no jiff of its own to name its type) read as UTC.
macro_rules! civil_nanos {
    ($t:expr) => {{
        let t = $t;
        wall_clock_nanos(
            i64::from(t.year()),
            i64::from(t.month()),
            i64::from(t.day()),
            i64::from(t.hour()),
            i64::from(t.minute()),
            i64::from(t.second()),
            i64::from(t.subsec_nanosecond()),
        )
    }};
}

/// Nanoseconds since the epoch of a wall-clock reading taken as UTC.
fn wall_clock_nanos(year: i64, month: i64, day: i64, h: i64, mi: i64, s: i64, ns: i64) -> i128 {
    let secs = days_from_civil(year, month, day) * 86_400 + h * 3600 + mi * 60 + s;
    i128::from(secs) * 1_000_000_000 + i128::from(ns)
}

/// PostgreSQL keeps microseconds: the driver rounds a finer fraction to the nearest one.
fn nanos_to_pg_micros(nanos: i128) -> i64 {
    i64::try_from((nanos + 500).div_euclid(1000)).unwrap()
}

/// The decimal text of `number` with at least `scale` fraction digits (Debezium's BigDecimal at
/// the column's scale).
fn decimal_text(value: &Value, scale: u32) -> String {
    match value {
        Value::Number(n) => n.to_plain_string(scale),
        other => panic!("not a NUMBER: {other:?}"),
    }
}

fn expected(kind: Kind, mode: Mode, value: &Value) -> Expected {
    if value.is_null() {
        return Expected::Null;
    }
    let number = |scale: u32, precise: fn(String) -> Expected| match mode {
        Mode::Precise => precise(decimal_text(value, scale)),
        Mode::Double => Expected::F64(decimal_text(value, 0).parse().unwrap()),
        Mode::String => Expected::Exact(decimal_text(value, scale)),
    };
    match (kind, value) {
        (Kind::Int, _) if mode == Mode::Precise => Expected::Exact(decimal_text(value, 0)),
        (Kind::Int | Kind::WideInt, _) => number(0, Expected::Exact),
        (Kind::Decimal(scale), _) => number(scale, Expected::Exact),
        (Kind::Variable, _) => number(0, |text| Expected::F64(text.parse().unwrap())),
        (Kind::Float32, Value::BinaryFloat(f)) => Expected::F32(*f),
        (Kind::Float64, Value::BinaryDouble(f)) => Expected::F64(*f),
        (Kind::Text, Value::Text(t)) => Expected::Exact(t.clone()),
        (Kind::Bytes, Value::Bytes(b)) => {
            Expected::Exact(b.iter().fold(String::new(), |mut s, b| {
                let _ = write!(s, "{b:02x}");
                s
            }))
        }
        (Kind::Timestamp, Value::Date(t) | Value::Timestamp(t)) => {
            Expected::Exact(format_micros(nanos_to_pg_micros(civil_nanos!(t))))
        }
        (Kind::Zoned, Value::TimestampTz { local, offset }) => {
            let nanos = civil_nanos!(local) - i128::from(offset.seconds()) * 1_000_000_000;
            Expected::Exact(format_micros(nanos_to_pg_micros(nanos)))
        }
        (Kind::Zoned, Value::TimestampLtz(instant)) => {
            Expected::Exact(format_micros(nanos_to_pg_micros(instant.as_nanosecond())))
        }
        // MicroDuration: Debezium counts a month as 365.25 / 12 days; the sink binds seconds, and
        // PostgreSQL's extract(epoch) of the interval gives them back.
        (Kind::Interval, Value::IntervalYearToMonth { months }) => {
            let micros = i128::from(*months) * 2_629_800_000_000;
            Expected::Exact(seconds_text(micros))
        }
        (Kind::Interval, Value::IntervalDayToSecond { nanoseconds }) => {
            Expected::Exact(seconds_text(nanoseconds / 1000))
        }
        (kind, value) => panic!("no expectation for {kind:?} {value:?}"),
    }
}

/// Seconds with six fraction digits, as `extract(epoch from interval)` prints them.
fn seconds_text(micros: i128) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let m = micros.abs();
    format!("{sign}{}.{:06}", m / 1_000_000, m % 1_000_000)
}

/// What PostgreSQL holds in the columns the source no longer has: by table and column, the value
/// of each row by key.
type Dropped = BTreeMap<(&'static str, &'static str), BTreeMap<String, Value>>;

/// The rows PostgreSQL must hold for `table` in `mode`, by key (the ID column's canonical text):
/// the simulator's committed rows, and for a column the table no longer has, its value in
/// `dropped`.
fn expected_rows(
    sim: &Simulator,
    table: &'static str,
    columns: &[(&'static str, &str, Kind)],
    mode: Mode,
    dropped: &Dropped,
) -> BTreeMap<String, Vec<Expected>> {
    let schema = sim.schema("APP", table).expect("the table exists");
    let rows = sim.committed_rows("APP", table).expect("the table exists");
    rows.into_iter()
        .map(|(_, values)| {
            let id = decimal_text(&values[0], 0);
            let expected: Vec<Expected> = columns
                .iter()
                .map(|(name, _, kind)| {
                    let value = match schema.column_index(name) {
                        Some(i) => &values[i],
                        None => dropped
                            .get(&(table, *name))
                            .and_then(|held| held.get(&id))
                            .unwrap_or_else(|| panic!("{table}.{name} ID={id}: no value")),
                    };
                    expected(*kind, mode, value)
                })
                .collect();
            (id, expected)
        })
        .collect()
}

/// What PostgreSQL holds, after the workload, in the column the DROP removed from APP.ACCOUNTS,
/// evaluated over the steps from the DROP on (`from_drop`) from the column's committed values
/// just before it (`before_drop`).
///
/// The sink never drops a column: `schema.evolution=basic` alters a table only to add the fields
/// a record has and the table lacks (`JdbcChangeEventSink.alterTableIfNeeded` in
/// debezium-connector-jdbc: `resolveMissingFields`, then `getAlterTableStatement` for those).
/// Its upsert names the record's fields alone (`PostgresDatabaseDialect.getUpsertStatement`:
/// `INSERT INTO t (<key fields>, <value fields>) VALUES (...) ON CONFLICT (<key fields>) DO
/// UPDATE SET <value field>=EXCLUDED.<value field>, ...`). So a row the sink only updates after
/// the DROP keeps what the column held, and a row it inserts after it (a new row, a row deleted
/// first, the new key of a key change, which Debezium sends as a delete and a create) has NULL
/// there. A delete removes the row. Rolled back transactions reach nothing.
fn dropped_column_values(before_drop: &Simulator, from_drop: &str) -> BTreeMap<String, Value> {
    let schema = before_drop.schema("APP", "ACCOUNTS").unwrap();
    let index = schema.column_index(ACCOUNTS_DROPPED).unwrap();
    let mut held: BTreeMap<String, Value> = before_drop
        .committed_rows("APP", "ACCOUNTS")
        .unwrap()
        .into_iter()
        .map(|(_, values)| (decimal_text(&values[0], 0), values[index].clone()))
        .collect();
    let key = |row: &serde_json::Value| {
        let map = row.as_object().unwrap();
        assert!(
            map.keys().all(|k| k == "ID"),
            "a row named by more than its key: {row}"
        );
        map["ID"].to_string()
    };
    let mut open: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for line in from_drop.lines() {
        let step: serde_json::Value = serde_json::from_str(line).unwrap();
        let Some(tx) = step.get("tx").and_then(|t| t.as_str()) else {
            continue; // a DDL
        };
        if step.get("rollback").is_some() {
            open.remove(tx);
        } else if step.get("commit").is_none() {
            open.entry(tx.to_owned()).or_default().push(step);
            continue;
        }
        for change in open.remove(tx).unwrap_or_default() {
            let on_accounts =
                |op: &str| change.get(op).and_then(|t| t.as_str()) == Some("APP.ACCOUNTS");
            if on_accounts("insert") {
                held.insert(change["values"]["ID"].to_string(), Value::Null);
            } else if on_accounts("delete") {
                held.remove(&key(&change["where"]));
            } else if on_accounts("update")
                && let Some(new_key) = change["set"].get("ID")
            {
                held.remove(&key(&change["where"]));
                held.insert(new_key.to_string(), Value::Null);
            }
        }
    }
    held
}

// ----- PostgreSQL -----------------------------------------------------------------------------

struct Postgres {
    /// `postgresql://user@host:port/`
    base: String,
    host: String,
    port: u16,
    user: String,
    _dir: Option<tempfile::TempDir>,
}

/// `REDOLINE_POSTGRES_URL`, or a server started for this test binary (stopped by the script's
/// watchdog when the test process exits).
fn postgres() -> &'static Postgres {
    static PG: OnceLock<Postgres> = OnceLock::new();
    PG.get_or_init(|| {
        let (url, dir) = match std::env::var(POSTGRES_ENV) {
            Ok(url) if !url.is_empty() => (url, None),
            _ => {
                let dir = tempfile::tempdir().unwrap();
                // The server runs as the postgres user when we are root: it must reach the dir.
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
                    .unwrap();
                let port = free_port();
                let script = repo_root().join("tests/env/postgres.sh");
                let data = dir.path().join("pg");
                let pid = std::process::id().to_string();
                let port_text = port.to_string();
                for args in [
                    vec!["start", data.to_str().unwrap(), &port_text, &pid],
                    vec!["wait", data.to_str().unwrap(), &port_text, "60"],
                ] {
                    redoline_tests::process::run_script(
                        &script,
                        &args,
                        &[],
                        Duration::from_secs(120),
                    )
                    .unwrap_or_else(|e| {
                        panic!("PostgreSQL could not start ({POSTGRES_ENV} unset): {e:#}")
                    });
                }
                (
                    format!("postgresql://postgres@127.0.0.1:{port}/postgres"),
                    Some(dir),
                )
            }
        };
        let rest = url
            .strip_prefix("postgresql://")
            .or_else(|| url.strip_prefix("postgres://"))
            .unwrap_or_else(|| {
                panic!("{POSTGRES_ENV}={url}: expected postgresql://user@host:port/db")
            });
        let (authority, _) = rest.split_once('/').unwrap_or((rest, ""));
        let (user, hostport) = authority.split_once('@').unwrap_or(("postgres", authority));
        let (host, port) = hostport.rsplit_once(':').unwrap_or((hostport, "5432"));
        Postgres {
            base: format!("postgresql://{user}@{host}:{port}/"),
            host: host.to_owned(),
            port: port.parse().unwrap(),
            user: user.to_owned(),
            _dir: dir,
        }
    })
}

/// Runs `sql` in `db`; rows of fields separated by U+001F, NULL as U+0000-free marker `\N`.
fn psql(db: &str, sql: &str) -> Result<Vec<Vec<Option<String>>>, String> {
    let pg = postgres();
    // Bounded like every process of the test: a server that stops answering fails the call.
    let output = Command::new("timeout")
        .args(["60", "psql"])
        .arg(format!("{}{db}", pg.base))
        .args([
            "-X",
            "-q",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-F",
            "\u{1f}",
            "-R",
            "\u{1e}",
        ])
        .args(["-P", "null=\u{1d}", "-c", sql])
        .output()
        .map_err(|e| format!("psql: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    let text = String::from_utf8(output.stdout).map_err(|e| format!("psql output: {e}"))?;
    let text = text.strip_suffix('\n').unwrap_or(&text);
    Ok(text
        .split('\u{1e}')
        .filter(|r| !r.is_empty())
        .map(|r| {
            r.split('\u{1f}')
                .map(|f| (f != "\u{1d}").then(|| f.to_owned()))
                .collect()
        })
        .collect())
}

/// A table's column types and its rows by key, as PostgreSQL holds them.
type PgTable = (Vec<String>, BTreeMap<String, Vec<Option<String>>>);
/// A table's columns: name, Oracle type, kind.
type Columns = Vec<(&'static str, &'static str, Kind)>;

// ----- comparing ------------------------------------------------------------------------------

/// What PostgreSQL holds of `table`: its column types and its rows by `id`, each column rendered
/// canonically for its type. `None` while the sink has not created the table.
fn pg_table(db: &str, table: &str, columns: &[&str]) -> Option<PgTable> {
    let lower = table.to_lowercase();
    let types = psql(
        db,
        &format!("select column_name, data_type from information_schema.columns where table_schema = 'public' and table_name = '{lower}'"),
    )
    .ok()?;
    if types.is_empty() {
        return None;
    }
    let by_name: BTreeMap<String, String> = types
        .into_iter()
        .map(|r| {
            (
                r[0].clone().unwrap_or_default(),
                r[1].clone().unwrap_or_default(),
            )
        })
        .collect();
    let mut column_types = Vec::new();
    let mut exprs = Vec::new();
    for column in columns {
        let name = column.to_lowercase();
        let Some(data_type) = by_name.get(&name) else {
            column_types.push("(missing)".to_owned());
            exprs.push("null".to_owned());
            continue;
        };
        column_types.push(data_type.clone());
        exprs.push(match data_type.as_str() {
            "bytea" => format!("encode({name}, 'hex')"),
            "timestamp without time zone" => {
                format!("to_char({name}, 'YYYY-MM-DD\"T\"HH24:MI:SS.US')")
            }
            "timestamp with time zone" => {
                format!("to_char({name} at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US')")
            }
            "interval" => format!("extract(epoch from {name})::numeric(30,6)::text"),
            _ => format!("{name}::text"),
        });
    }
    let rows = psql(
        db,
        &format!("select id::text, {} from {lower}", exprs.join(", ")),
    )
    .ok()?;
    let rows = rows
        .into_iter()
        .map(|mut r| {
            let id = r.remove(0).unwrap_or_default();
            // The key as the expected rows spell it (a float key reads `1` in every mode).
            let id = id.parse::<f64>().map_or(id, |f| format!("{f}"));
            (id, r)
        })
        .collect();
    Some((column_types, rows))
}

/// Every difference between what PostgreSQL holds and what it must hold, one line each.
fn differences(
    table: &str,
    columns: &[(&str, &str, Kind)],
    mode: Mode,
    actual_types: &[String],
    actual: &BTreeMap<String, Vec<Option<String>>>,
    expected: &BTreeMap<String, Vec<Expected>>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (name, oracle_type, kind)) in columns.iter().enumerate() {
        let want = expected_pg_type(*kind, oracle_type, mode);
        if actual_types.get(i).map(String::as_str) != Some(want) {
            out.push(format!(
                "{table}.{name} ({oracle_type}): PostgreSQL type {:?}, Debezium's schema gives {want:?}",
                actual_types.get(i)
            ));
        }
    }
    for (id, want) in expected {
        let Some(got) = actual.get(id) else {
            out.push(format!("{table} ID={id}: missing"));
            continue;
        };
        for (i, w) in want.iter().enumerate() {
            let g = got.get(i).and_then(|g| g.as_deref());
            if !w.matches(g) {
                out.push(format!(
                    "{table} ID={id} {}: PostgreSQL {g:?}, expected {w:?}",
                    columns[i].0
                ));
            }
        }
    }
    for id in actual.keys() {
        if !expected.contains_key(id) {
            out.push(format!("{table} ID={id}: unexpected row"));
        }
    }
    out
}

// ----- the pipeline ---------------------------------------------------------------------------

/// The capture's `kafka.topicPrefix` (and name) for one capture (`run_name`) of a run.
fn topic_prefix(run_id: &str, name: &str) -> String {
    format!("{run_id}-{name}").replace('_', "-")
}

/// The APP.ACCOUNTS change events and the schema change events of each capture (by topic
/// prefix), read back from Kafka (`read_committed`) and through Debezium's JsonConverter
/// (`tests/env/jsonconverter/check.sh`, which fails on any record it cannot convert).
fn read_back_with_json_converter(
    bootstrap: &str,
    prefixes: &[String],
    dir: &Path,
) -> (
    Vec<schema_versions::RowSchema>,
    BTreeMap<String, Vec<schema_versions::SchemaChange>>,
) {
    let settings = KafkaClientSettings::with_bootstrap(bootstrap);
    let raw = |bytes: &Option<Vec<u8>>| {
        bytes.as_ref().map_or_else(
            || "null".to_owned(),
            |b| String::from_utf8(b.clone()).unwrap(),
        )
    };
    let mut changes = BTreeMap::new();
    let mut rows = Vec::new();
    for prefix in prefixes {
        let mut lines = String::new();
        for topic in [prefix.clone(), format!("{prefix}.APP.ACCOUNTS")] {
            read_to_end(&settings, &topic, Duration::from_secs(30), |record| {
                let topic_json = serde_json::Value::from(topic.as_str());
                let _ = writeln!(
                    lines,
                    r#"{{"topic":{topic_json},"key":{},"value":{}}}"#,
                    raw(&record.key),
                    raw(&record.value)
                );
                Ok(())
            })
            .unwrap_or_else(|e| panic!("reading {topic} back: {e}"));
        }
        let input = dir.join(format!("{prefix}.records.jsonl"));
        std::fs::write(&input, &lines).unwrap();
        let script = repo_root().join("tests/env/jsonconverter/check.sh");
        let output =
            redoline_tests::process::run_script(&script, &[&input], &[], Duration::from_secs(600))
                .unwrap_or_else(|e| panic!("JsonConverter refused the records of {prefix}: {e:#}"));
        let (mut read, ddl) = schema_versions::parse_check_output(&output)
            .unwrap_or_else(|e| panic!("{e}\n{output}"));
        rows.append(&mut read);
        changes.insert(prefix.clone(), ddl);
    }
    (rows, changes)
}

fn capture_config(
    bootstrap: &str,
    prefix: &str,
    name: &str,
    mode: Mode,
    encoding: Encoding,
    registry: &RegistryEnv,
) -> String {
    let decimal = match mode {
        Mode::Precise => String::new(),
        other => format!(", decimalHandlingMode: {}", other.name()),
    };
    let avro = match encoding {
        Encoding::Json => String::new(),
        Encoding::Avro => format!(
            ", encoding: avro}}\nschemaRegistry: {{url: \"{}\"",
            registry.url
        ),
    };
    format!(
        "name: {name}\n\
         namespace: jdbc-pipeline\n\
         database: {{simulator: {{scenario: scenario.jsonl}}}}\n\
         tables: [APP.ALL_TYPES, APP.ACCOUNTS, APP.DOCS]\n\
         kafka: {{bootstrapServers: \"{bootstrap}\", topicPrefix: {prefix}}}\n\
         format: {{type: debezium{decimal}{avro}}}\n\
         snapshot: {{mode: initial}}\n\
         http: {{port: 0}}\n"
    )
}

/// One run of the capture to the end of the scenario, killed after a deadline.
fn run_capture(binary: &Path, dir: &Path, what: &str) {
    let config = dir.join("capture.yaml");
    let termination = dir.join(format!("{what}.termination"));
    let config = config.to_str().unwrap();
    redoline_tests::process::run_script(
        binary,
        &["run", "--exit-at-end", "--config", config],
        &[
            ("REDOLINE_TERMINATION_LOG", termination.to_str().unwrap()),
            ("RUST_LOG", "warn"),
        ],
        Duration::from_secs(300),
    )
    .unwrap_or_else(|e| panic!("the capture's {what} run failed: {e:#}"));
}

struct Connect {
    child: Child,
    log: PathBuf,
}

impl Connect {
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(80)..].join("\n")
    }
}

impl Drop for Connect {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct ModeRun {
    mode: Mode,
    /// `run_name`: for messages.
    name: String,
    db: String,
    connector: String,
}

/// The connector's own converters for a capture in Avro (a connector may override the worker's):
/// Apicurio's `AvroConverter`, reading Confluent's framing (the 4-byte id is the registry's
/// content id, what its Confluent API hands out) and fetching each schema from the registry.
fn avro_converters(registry: &RegistryEnv) -> String {
    let mut out = String::new();
    for side in ["key", "value"] {
        let _ = write!(
            out,
            "{side}.converter=io.apicurio.registry.utils.converter.AvroConverter\n\
             {side}.converter.apicurio.registry.url={}\n\
             {side}.converter.apicurio.registry.as-confluent=true\n\
             {side}.converter.apicurio.registry.use-id=contentId\n",
            registry.apicurio_url
        );
    }
    out
}

/// The tables as PostgreSQL holds them: every column any structure of theirs had, since the sink
/// adds columns and never drops them.
fn tables() -> Vec<(&'static str, Columns)> {
    let mut accounts = ACCOUNTS.to_vec();
    accounts.push(ACCOUNTS_ADDED);
    vec![
        ("ALL_TYPES", ALL_TYPES.to_vec()),
        ("ACCOUNTS", accounts),
        ("DOCS", DOCS.to_vec()),
    ]
}

#[test]
fn debezium_jdbc_sink_writes_the_simulated_database_into_postgresql() {
    let started = Instant::now();
    let binary = redoline_tests::capture_binary_beside(&std::env::current_exe().unwrap())
        .expect("cargo test --workspace builds redoline-capture");
    let kafka = KafkaEnv::shared().unwrap_or_else(|e| panic!("no Kafka broker: {e:#}"));
    let bootstrap = kafka.bootstrap_servers().to_owned();
    let pg = postgres();
    let registry = RegistryEnv::shared().unwrap_or_else(|e| panic!("no schema registry: {e:#}"));
    // Underscores, not dashes: the run id begins PostgreSQL database names, unquoted identifiers
    // (topic_prefix turns them back into dashes).
    let run_id = unique_prefix("jdbc").replace('-', "_");
    let work = tempfile::tempdir().unwrap();

    // The simulator's own final state, from the same scenario applied in-process, and what the
    // sink keeps of the dropped column, from the state right before the DROP.
    let scenario_a = snapshot_part();
    let scenario_b = streaming_part();
    let sim = Simulator::from_reader(std::io::Cursor::new(format!("{scenario_a}{scenario_b}")))
        .expect("the scenario is valid");
    assert!(sim.open_transaction_names().is_empty());
    let before_drop = Simulator::from_reader(std::io::Cursor::new(format!(
        "{scenario_a}{}",
        streaming_before_drop()
    )))
    .expect("the scenario is valid");
    let dropped: Dropped = BTreeMap::from([(
        ("ACCOUNTS", ACCOUNTS_DROPPED),
        dropped_column_values(&before_drop, &streaming_from_drop()),
    )]);

    // Capture: the snapshot run, then the streaming run on the grown scenario.
    let mut runs = Vec::new();
    for (mode, encoding) in RUNS {
        let name = run_name(mode, encoding);
        let dir = work.path().join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        let prefix = topic_prefix(&run_id, &name);
        std::fs::write(
            dir.join("capture.yaml"),
            capture_config(&bootstrap, &prefix, &prefix, mode, encoding, registry),
        )
        .unwrap();
        std::fs::write(dir.join("scenario.jsonl"), &scenario_a).unwrap();
        run_capture(&binary, &dir, "snapshot");
        std::fs::write(
            dir.join("scenario.jsonl"),
            format!("{scenario_a}{scenario_b}"),
        )
        .unwrap();
        // The streaming run also re-reads APP.ALL_TYPES (an incremental snapshot, a chunk per
        // mining window of the smallest size): its `r` rows are upserted among the streamed
        // changes, so a row placed at the wrong SCN would leave PostgreSQL different.
        std::fs::write(
            dir.join("capture.yaml"),
            capture_config(&bootstrap, &prefix, &prefix, mode, encoding, registry).replace(
                "snapshot: {mode: initial}\n",
                "snapshot: {mode: initial, requests: [{id: jdbc-reread, tables: \
                 [APP.ALL_TYPES]}]}\nmining: {maxScnWindow: 1000}\n",
            ),
        )
        .unwrap();
        run_capture(&binary, &dir, "streaming");

        let db = format!("{run_id}_{name}").to_lowercase();
        psql("postgres", &format!("create database {db}")).unwrap();
        let converters = match encoding {
            Encoding::Json => String::new(),
            Encoding::Avro => avro_converters(registry),
        };
        let connector = format!(
            "{converters}name={prefix}-sink\n\
             connector.class=io.debezium.connector.jdbc.JdbcSinkConnector\n\
             tasks.max=1\n\
             topics.regex={}\\\\.APP\\\\..*\n\
             connection.url=jdbc:postgresql://{}:{}/{db}\n\
             connection.username={}\n\
             connection.password=\n\
             insert.mode=upsert\n\
             delete.enabled=true\n\
             primary.key.mode=record_key\n\
             schema.evolution=basic\n\
             collection.name.format=${{source.table}}\n\
             use.time.zone=UTC\n",
            prefix, pg.host, pg.port, pg.user
        );
        let file = work.path().join(format!("{name}.properties"));
        std::fs::write(&file, connector).unwrap();
        runs.push((
            ModeRun {
                mode,
                name,
                db,
                connector: file.display().to_string(),
            },
            sim_rows(&sim, mode, &dropped),
        ));
    }
    let captured = started.elapsed();

    // Each change event of APP.ACCOUNTS carries the structure in force at its SCN, and the schema
    // change topic one event per DDL, as Debezium's JsonConverter reads them.
    let versions =
        schema_versions::table_versions(&format!("{scenario_a}{scenario_b}"), "APP", "ACCOUNTS");
    assert_eq!(versions.len(), 3, "{versions:?}");
    let prefixes: Vec<String> = RUNS
        .iter()
        .filter(|(_, encoding)| *encoding == Encoding::Json)
        .map(|(mode, encoding)| topic_prefix(&run_id, &run_name(*mode, *encoding)))
        .collect();
    let (rows, changes) = read_back_with_json_converter(&bootstrap, &prefixes, work.path());
    let mut wrong = Vec::new();
    for prefix in &prefixes {
        let topic = format!("{prefix}.APP.ACCOUNTS");
        let changes = changes.get(prefix).map_or(&[][..], Vec::as_slice);
        wrong.extend(
            schema_versions::differences(&versions, &topic, &rows, changes)
                .into_iter()
                .map(|d| format!("[{prefix}] {d}")),
        );
    }
    assert!(
        wrong.is_empty(),
        "the events do not carry the structure in force at their SCN:\n{}",
        wrong.join("\n")
    );
    let accounts_events = rows
        .iter()
        .filter(|r| r.topic.ends_with(".APP.ACCOUNTS"))
        .count();

    // The Avro capture registered one value schema per structure of APP.ACCOUNTS, in order: the
    // ADD and the DROP each a new version of the subject (TopicNameStrategy), the key's one.
    let avro_prefix = topic_prefix(&run_id, &run_name(Mode::Precise, Encoding::Avro));
    let accounts = format!("{avro_prefix}.APP.ACCOUNTS");
    let value_versions = registry
        .subject_versions(&format!("{accounts}-value"))
        .unwrap();
    assert_eq!(
        value_versions,
        [1, 2, 3],
        "the versions of {accounts}-value"
    );
    let key_versions = registry
        .subject_versions(&format!("{accounts}-key"))
        .unwrap();
    assert_eq!(key_versions, [1], "the versions of {accounts}-key");
    let fields = |version: u32| -> Vec<String> {
        let text = registry
            .subject_schema(&format!("{accounts}-value"), version)
            .unwrap();
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        let before = &schema["fields"][0]["type"][1]["fields"];
        before
            .as_array()
            .unwrap_or_else(|| panic!("no row record in {text}"))
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(fields(1), ["ID", "NAME", "BALANCE"]);
    assert_eq!(fields(2), ["ID", "NAME", "BALANCE", "NOTE"]);
    assert_eq!(fields(3), ["ID", "BALANCE", "NOTE"]);

    // One Connect worker for all three modes.
    let script = repo_root().join("tests/env/jdbc-pipeline/run.sh");
    let plugins =
        redoline_tests::process::run_script(&script, &["path"], &[], Duration::from_secs(900))
            .unwrap_or_else(|e| panic!("the Connect harness could not be built: {e:#}"));
    let worker = work.path().join("worker.properties");
    std::fs::write(
        &worker,
        format!(
            "bootstrap.servers={bootstrap}\n\
             key.converter=org.apache.kafka.connect.json.JsonConverter\n\
             value.converter=org.apache.kafka.connect.json.JsonConverter\n\
             key.converter.schemas.enable=true\n\
             value.converter.schemas.enable=true\n\
             offset.storage.file.filename={}\n\
             offset.flush.interval.ms=1000\n\
             plugin.path={}\n\
             listeners=http://127.0.0.1:{}\n\
             consumer.isolation.level=read_committed\n\
             consumer.auto.offset.reset=earliest\n",
            work.path().join("connect.offsets").display(),
            plugins.trim(),
            free_port()
        ),
    )
    .unwrap();
    let log = work.path().join("connect.log");
    let log_file = std::fs::File::create(&log).unwrap();
    let child = Command::new("bash")
        .arg(&script)
        .arg("connect")
        .arg(&worker)
        .args(runs.iter().map(|(r, _)| r.connector.clone()))
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file)
        .spawn()
        .unwrap();
    let mut connect = Connect { child, log };

    // Wait until every mode's database holds exactly the expected rows.
    let deadline = Instant::now() + Duration::from_secs(240);
    let mut pending: Vec<String>;
    loop {
        pending = Vec::new();
        for (run, expected) in &runs {
            for (table, columns) in tables() {
                let names: Vec<&str> = columns.iter().map(|c| c.0).collect();
                match pg_table(&run.db, table, &names) {
                    None => pending.push(format!("[{}] {table}: no table yet", run.name)),
                    Some((types, rows)) => pending.extend(
                        differences(table, &columns, run.mode, &types, &rows, &expected[table])
                            .into_iter()
                            .map(|d| format!("[{}] {d}", run.name)),
                    ),
                }
            }
        }
        if pending.is_empty() {
            break;
        }
        if let Ok(Some(status)) = connect.child.try_wait() {
            panic!(
                "Kafka Connect exited ({status}) with differences left:\n{}\n--- connect log ---\n{}",
                pending.join("\n"),
                connect.log_tail()
            );
        }
        let log_text = std::fs::read_to_string(&connect.log).unwrap_or_default();
        if log_text.contains("Task threw an uncaught and unrecoverable exception")
            || log_text.contains("Failed to start connector")
        {
            panic!(
                "a sink task of Kafka Connect failed, with differences left:\n{}\n--- connect log ---\n{}",
                pending.join("\n"),
                connect.log_tail()
            );
        }
        if Instant::now() > deadline {
            panic!(
                "PostgreSQL does not hold the simulator's rows after {:?}:\n{}\n--- connect log ---\n{}",
                started.elapsed(),
                pending.join("\n"),
                connect.log_tail()
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    eprintln!(
        "jdbc pipeline: captured 4 times (3 modes in JSON, 1 in Avro) in {captured:?}, {accounts_events} APP.ACCOUNTS events \
         in 3 structures checked, PostgreSQL equal after {:?}",
        started.elapsed()
    );
    drop(connect);
}

fn sim_rows(
    sim: &Simulator,
    mode: Mode,
    dropped: &Dropped,
) -> BTreeMap<&'static str, BTreeMap<String, Vec<Expected>>> {
    tables()
        .into_iter()
        .map(|(table, columns)| (table, expected_rows(sim, table, &columns, mode, dropped)))
        .collect()
}

/// The comparator is not vacuous: a wrong value, a missing row, an extra row and a wrong column
/// type are each reported.
#[test]
fn the_comparator_reports_every_kind_of_difference() {
    let columns: &[(&str, &str, Kind)] = &[
        ("ID", "NUMBER(10)", Kind::Int),
        ("N_DEC", "NUMBER(10,2)", Kind::Decimal(2)),
        ("BD", "BINARY_DOUBLE", Kind::Float64),
    ];
    let types: Vec<String> = ["bigint", "numeric", "double precision"]
        .map(String::from)
        .to_vec();
    let actual: BTreeMap<String, Vec<Option<String>>> = BTreeMap::from([(
        "1".to_owned(),
        vec![
            Some("1".to_owned()),
            Some("10.50".to_owned()),
            Some("0.1".to_owned()),
        ],
    )]);
    let right: BTreeMap<String, Vec<Expected>> = BTreeMap::from([(
        "1".to_owned(),
        vec![
            Expected::Exact("1".into()),
            Expected::Exact("10.50".into()),
            Expected::F64(0.1),
        ],
    )]);
    assert_eq!(
        differences("T", columns, Mode::Precise, &types, &actual, &right),
        Vec::<String>::new()
    );

    // A value altered: 10.5 is not 10.50 (the scale is part of Debezium's Decimal), 0.1 is not
    // 0.1 as a float32.
    let mut altered = right.clone();
    altered.get_mut("1").unwrap()[1] = Expected::Exact("10.5".into());
    altered.get_mut("1").unwrap()[2] = Expected::F64(f64::from(0.1f32));
    let found = differences("T", columns, Mode::Precise, &types, &actual, &altered);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].contains("N_DEC") && found[1].contains("BD"),
        "{found:?}"
    );

    // A missing row and an unexpected one.
    let mut moved = BTreeMap::new();
    moved.insert("2".to_owned(), right["1"].clone());
    let found = differences("T", columns, Mode::Precise, &types, &actual, &moved);
    assert_eq!(
        found,
        vec![
            "T ID=2: missing".to_owned(),
            "T ID=1: unexpected row".to_owned()
        ]
    );

    // The same table is wrong in double mode: Debezium gives NUMBER(10,2) and NUMBER(10) float64.
    let found = differences("T", columns, Mode::Double, &types, &actual, &right);
    assert!(
        found
            .iter()
            .any(|d| d.contains("T.N_DEC") && d.contains("double precision")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|d| d.contains("T.ID") && d.contains("double precision")),
        "{found:?}"
    );

    // Expectations from simulator values follow Debezium's semantics per mode.
    let number =
        |text: &str| Value::Number(redoline_capture::value::OracleNumber::parse(text).unwrap());
    assert_eq!(
        expected(Kind::Decimal(2), Mode::Precise, &number("10.5")),
        Expected::Exact("10.50".into())
    );
    assert_eq!(
        expected(Kind::Decimal(2), Mode::String, &number("10.5")),
        Expected::Exact("10.50".into())
    );
    assert_eq!(
        expected(Kind::Decimal(2), Mode::Double, &number("10.5")),
        Expected::F64(10.5)
    );
    assert_eq!(
        expected(Kind::Int, Mode::Double, &number("42")),
        Expected::F64(42.0)
    );
    assert_eq!(
        expected(Kind::Int, Mode::String, &number("42")),
        Expected::Exact("42".into())
    );
    assert_eq!(format_micros(-1), "1969-12-31T23:59:59.999999");
    assert_eq!(nanos_to_pg_micros(1_999), 2);
    assert_eq!(seconds_text(-1_250_000), "-1.250000");
}
