#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Rows Oracle printed, collected by others, read by the real Oracle client's row mapping and the
//! SQL_REDO parsers.
//!
//! Every fixture line under `fixtures/oracle_field_rows/` names its `source` (repository, commit,
//! path and line, or the address) and holds the row as it was printed there, with what
//! the capture must read from it (`expect`). None of the rows was written by this project.
//!
//! - `kind: contents`: a whole `V$LOGMNR_CONTENTS` row. The test builds the cells the contents
//!   query ([`CONTENTS_COLUMNS`]) would fetch for it: numbers as decimal text, the XID column as
//!   `XIDUSN.XIDSLT.XIDSQN`, `TIMESTAMP` as `YYYY-MM-DD HH24:MI:SS`. The rows at hand were
//!   copied by Confluent's connector, which renamed `SESSION#`/`SERIAL#`/`THREAD#` to
//!   `SESSION_NUM`/`SERIAL_NUM`/`THREAD_NUM`, printed DATE columns as epoch milliseconds (read
//!   back as UTC here: the SQL_REDO timestamps of the same rows agree), `ROLLBACK` and `CSF` as
//!   booleans, and `CON_ID` as a boolean (its schema's type, not Oracle's value: that cell is
//!   left NULL). The raw `XID` bytes are left out of the fixtures (the console consumer prints
//!   them lossily); `expect.xid_hex` is what the parts make in LogMiner's little-endian layout.
//! - `kind: sql_redo`: a SQL_REDO text alone, quoted in a test or an issue thread.
//!
//! `expect.sql` is what the parser must return: `{"dml": ..., "table": [owner, name], "values" |
//! "set" | "where": [[column, value], ...], "rowid": ...}`, `{"lob": "locator", ...}`, `{"ddl":
//! kind, "object": [owner, name]}`, or `null` for rows the capture does not parse (COMMIT, XML
//! DOC rows). Values: `null` is NULL, a string is text, `{"call": NAME, "args": [...]}` a call,
//! `{"unsupported": true}` LogMiner's `Unsupported Type`.
//!
//! A row marked `known_failure` is real output the capture refuses; its `expect.parse_error`
//! pins how, so a change in that behaviour is seen and the marking revisited.

use std::path::Path;

use redoline_capture::redo::{
    DdlKind, DmlStatement, LobKind, LobStatement, RawValue, TableRef, parse_ddl, parse_dml,
    parse_lob,
};
use redoline_capture::source::oracle::mapping::{SharedNames, contents_row};
use redoline_capture::source::oracle::sql::{CONTENTS_COLUMNS, XID_PARTS};
use redoline_capture::source::{LogMinerRow, RedoAddress};
use serde_json::{Value, json};

const MINIMUM_ROWS: usize = 25;

struct Fixture {
    file: String,
    line: usize,
    row: Value,
}

impl Fixture {
    fn name(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

fn fixtures() -> Vec<Fixture> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oracle_field_rows");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the fixture directory is readable")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut rows = Vec::new();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).expect("a fixture file is readable");
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let row: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{file}:{}: not JSON: {e}", index + 1));
            let source = row["source"].as_str().unwrap_or_default();
            assert!(
                source.len() > 40 && (source.contains(" @ ") || source.starts_with("https://")),
                "{file}:{}: `source` must cite repository @ commit path line, or an address",
                index + 1
            );
            rows.push(Fixture {
                file: file.clone(),
                line: index + 1,
                row,
            });
        }
    }
    rows
}

/// Oracle's name of a column as the connector that printed the row spelled it.
fn printed<'a>(printed: &'a Value, oracle_name: &str) -> &'a Value {
    let renamed = match oracle_name {
        "SESSION#" => "SESSION_NUM",
        "SERIAL#" => "SERIAL_NUM",
        "THREAD#" => "THREAD_NUM",
        other => other,
    };
    printed.get(oracle_name).unwrap_or(&printed[renamed])
}

/// The text Oracle would fetch for one printed value.
fn cell(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::Bool(flag) => Some(if *flag { "1" } else { "0" }.to_owned()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        other => panic!("no cell for {other}"),
    }
}

fn date_cell(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::Number(millis) => {
            let at = millis
                .as_i64()
                .and_then(|m| jiff::Timestamp::from_millisecond(m).ok())
                .unwrap_or_else(|| panic!("{millis} is not epoch milliseconds"));
            Some(at.strftime("%Y-%m-%d %H:%M:%S").to_string())
        }
        Value::String(text) => Some(text.clone()),
        other => panic!("no DATE cell for {other}"),
    }
}

/// The cells of the contents query, in [`CONTENTS_COLUMNS`] order.
fn contents_cells(row: &Value) -> Vec<Option<String>> {
    CONTENTS_COLUMNS
        .iter()
        .map(|column| match *column {
            c if c == XID_PARTS => Some(format!(
                "{}.{}.{}",
                row["XIDUSN"], row["XIDSLT"], row["XIDSQN"]
            )),
            c if c.starts_with("TO_CHAR(TIMESTAMP") => date_cell(&row["TIMESTAMP"]),
            c if c.starts_with("TO_CHAR(COMMIT_TIMESTAMP") => date_cell(&row["COMMIT_TIMESTAMP"]),
            "CON_ID" => printed(row, "CON_ID").as_u64().map(|n| n.to_string()),
            name => cell(printed(row, name)),
        })
        .collect()
}

fn check_contents(name: &str, fixture: &Value) -> LogMinerRow {
    let mut cells = contents_cells(&fixture["printed"]);
    let row = contents_row(&mut cells, &mut SharedNames::default())
        .unwrap_or_else(|e| panic!("{name}: the mapping refused the row: {e}"));
    let e = &fixture["expect"];
    let text = |v: &Option<std::sync::Arc<str>>| v.as_deref().map(str::to_owned);
    let got = json!({
        "scn": row.scn,
        "start_scn": row.start_scn,
        "commit_scn": row.commit_scn,
        "timestamp": row.timestamp.map(|t| t.strftime("%Y-%m-%dT%H:%M:%S").to_string()),
        "xid": row.xid.to_decimal_parts(),
        "xid_hex": row.xid.to_upper_hex(),
        "operation": row.operation.name(),
        "rollback": row.rollback,
        "row_id": &*row.row_id,
        "redo_address": row.redo_address().map(|a| vec![u64::from(a.sequence), u64::from(a.block), u64::from(a.offset)]),
        "seg_owner": text(&row.seg_owner),
        "table_name": text(&row.table_name),
        "username": text(&row.username),
        "session": row.session,
        "serial": row.serial,
        "thread": row.thread,
        "info": text(&row.info),
        "status": row.status,
        "src_con_name": text(&row.src_con_name),
    });
    for (key, expected) in e.as_object().unwrap() {
        if key == "sql" {
            continue;
        }
        assert_eq!(&got[key], expected, "{name}: {key}");
    }
    // RS_ID prints back exactly as LogMiner wrote it, spaces included.
    let rs_id = fixture["printed"]["RS_ID"].as_str().unwrap();
    assert_eq!(
        RedoAddress::parse(rs_id).map(|a| a.to_string()).as_deref(),
        Some(rs_id),
        "{name}: RS_ID"
    );
    assert_eq!(
        row.sql_redo.as_deref(),
        fixture["printed"]["SQL_REDO"].as_str(),
        "{name}: SQL_REDO"
    );
    row
}

fn raw_json(value: &RawValue<'_>) -> Value {
    match value {
        RawValue::Null => Value::Null,
        RawValue::Text(text) => json!(text),
        RawValue::Unsupported => json!({"unsupported": true}),
        RawValue::Call { name, args } => {
            json!({"call": name, "args": args.iter().map(raw_json).collect::<Vec<_>>()})
        }
    }
}

fn pairs_json(pairs: &[(std::borrow::Cow<'_, str>, RawValue<'_>)]) -> Value {
    pairs
        .iter()
        .map(|(column, value)| json!([column, raw_json(value)]))
        .collect()
}

fn table_json(table: &TableRef<'_>) -> Value {
    json!([table.schema, table.table])
}

/// What the parsers read from a SQL_REDO text, in the fixtures' notation.
fn parsed(expect: &Value, sql: &str) -> Result<Value, String> {
    if expect.get("lob").is_some() {
        let statement = parse_lob(sql).map_err(|e| format!("{} at {}", e.kind, e.offset))?;
        let LobStatement::Locator(locator) = statement else {
            return Ok(json!({"lob": format!("{statement:?}")}));
        };
        let kind = match locator.kind {
            LobKind::Clob => "Clob",
            LobKind::Nclob => "Nclob",
            LobKind::Blob => "Blob",
        };
        return Ok(json!({
            "lob": "locator",
            "column": locator.column,
            "kind": kind,
            "table": table_json(&locator.table),
            "where": pairs_json(&locator.where_),
            "rowid": locator.rowid,
        }));
    }
    if expect.get("ddl").is_some() {
        let statement = parse_ddl(sql).map_err(|e| format!("{} at {}", e.kind, e.offset))?;
        let kind = match statement.kind {
            DdlKind::CreateTable => "CreateTable",
            DdlKind::AlterTable => "AlterTable",
            DdlKind::DropTable => "DropTable",
            DdlKind::TruncateTable => "TruncateTable",
            DdlKind::RenameTable => "RenameTable",
            DdlKind::Other => "Other",
        };
        let object = statement.object.map(|o| json!([o.schema, o.name]));
        return Ok(json!({"ddl": kind, "object": object}));
    }
    let statement = parse_dml(sql).map_err(|e| format!("{} at {}", e.kind, e.offset))?;
    Ok(match statement {
        DmlStatement::Insert { table, values } => {
            json!({"dml": "insert", "table": table_json(&table), "values": pairs_json(&values)})
        }
        DmlStatement::Update {
            table,
            set,
            where_,
            rowid,
        } => json!({
            "dml": "update",
            "table": table_json(&table),
            "set": pairs_json(&set),
            "where": pairs_json(&where_),
            "rowid": rowid,
        }),
        DmlStatement::Delete {
            table,
            where_,
            rowid,
        } => json!({
            "dml": "delete",
            "table": table_json(&table),
            "where": pairs_json(&where_),
            "rowid": rowid,
        }),
    })
}

fn check_sql(name: &str, fixture: &Value, sql: Option<&str>) {
    let expect = &fixture["expect"];
    let expect_sql = expect.get("sql").unwrap_or(expect);
    if expect_sql.is_null() {
        return;
    }
    let sql = sql.unwrap_or_else(|| panic!("{name}: no SQL_REDO to parse"));
    let result = parsed(expect_sql, sql);
    if let Some(error) = expect_sql.get("parse_error") {
        assert!(
            fixture["known_failure"].is_string(),
            "{name}: an expected parse error must say why under known_failure"
        );
        assert_eq!(
            result.as_ref().err().map(|e| json!(e)).as_ref(),
            Some(error),
            "{name}: this known failure changed: {result:?}"
        );
        return;
    }
    let got = result.unwrap_or_else(|e| panic!("{name}: the parser refused {sql:?}: {e}"));
    assert_eq!(&got, expect_sql, "{name}: {sql}");
}

#[test]
fn every_field_row_reads_as_expected() {
    let fixtures = fixtures();
    assert!(
        fixtures.len() >= MINIMUM_ROWS,
        "{} field rows, at least {MINIMUM_ROWS} expected",
        fixtures.len()
    );
    let mut known_failures = 0;
    for fixture in &fixtures {
        let name = fixture.name();
        let row = &fixture.row;
        known_failures += usize::from(row["known_failure"].is_string());
        match row["kind"].as_str() {
            Some("contents") => {
                let mapped = check_contents(&name, row);
                check_sql(&name, row, mapped.sql_redo.as_deref());
            }
            Some("sql_redo") => check_sql(&name, row, row["sql_redo"].as_str()),
            other => panic!("{name}: unknown kind {other:?}"),
        }
    }
    // The count is part of the record: a fixed known failure must lose its marking.
    assert_eq!(known_failures, 1, "known failures changed");
}
