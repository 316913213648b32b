use std::collections::HashMap;

use super::*;
use crate::dictionary::{Column, ObjectNumbers, OracleType};
use crate::schema_history::object_row::resolve;
use crate::source::row::DDL_ROW_ID;
use crate::value::internal::DatabaseFormats;

#[derive(Default)]
struct Tables {
    tables: HashMap<(String, String), Arc<TableSchema>>,
    refreshed: Vec<String>,
    /// Versions of tables by object number, for rows LogMiner names by number.
    history: crate::schema_history::SchemaHistory,
}

impl TableLookup for Tables {
    fn table(
        &mut self,
        owner: &str,
        table: &str,
        _object: Option<u64>,
    ) -> Option<Arc<TableSchema>> {
        self.tables
            .get(&(owner.to_owned(), table.to_owned()))
            .cloned()
    }
    fn refresh(&mut self, owner: &str, table: &str) -> Result<(), String> {
        self.refreshed.push(format!("{owner}.{table}"));
        Ok(())
    }
    fn numbered_row(
        &mut self,
        object_id: u64,
        scn: u64,
        values: &[NumberedValue],
    ) -> Option<Result<ResolvedRow, ObjectRowError>> {
        self.history.knows_object(object_id).then(|| {
            resolve(
                &self.history,
                object_id,
                scn,
                values,
                &Ok(DatabaseFormats::new(jiff::tz::Offset::UTC)),
            )
        })
    }
}

fn tables() -> Tables {
    let docs = TableSchema::new(
        "APP",
        "DOCS",
        vec![
            Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1),
            Column::new("TITLE", OracleType::parse("VARCHAR2(20)").unwrap()),
            Column::new("BODY", OracleType::parse("CLOB").unwrap()),
            Column::new("PIC", OracleType::parse("BLOB").unwrap()),
        ],
    )
    .unwrap();
    let notes = TableSchema::new(
        "APP",
        "NOTES",
        vec![
            Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1),
            Column::new("TXT", OracleType::parse("VARCHAR2(32767)").unwrap()),
            Column::new("BIN", OracleType::parse("RAW(5000)").unwrap()),
        ],
    )
    .unwrap();
    let mut tables = Tables::default();
    // HR.JOBS, object 45522, before and after an ADD COLUMN at SCN 300.
    tables.history.insert(jobs(false), 10);
    tables.history.insert(jobs(true), 300);
    tables
        .tables
        .insert(("APP".into(), "DOCS".into()), Arc::new(docs));
    tables
        .tables
        .insert(("APP".into(), "NOTES".into()), Arc::new(notes));
    tables
}

const JOBS_OBJECT: u64 = 45_522;

/// Oracle's example table of a row rendered without a dictionary (Utilities, "LogMiner
/// Configuration"): HR.JOBS, columns numbered 1 to 4, and a fifth once `added`.
fn jobs(added: bool) -> Arc<TableSchema> {
    let column = |name: &str, declaration: &str, number: u16| {
        Column::new(name, OracleType::parse(declaration).unwrap()).segment(number)
    };
    let mut columns = vec![
        column("JOB_ID", "VARCHAR2(10)", 1).key(1),
        column("JOB_TITLE", "VARCHAR2(35)", 2),
        column("MIN_SALARY", "NUMBER(6)", 3),
        column("MAX_SALARY", "NUMBER(6)", 4),
    ];
    if added {
        columns.push(column("GRADE", "NUMBER(2)", 5));
    }
    Arc::new(
        TableSchema::new("HR", "JOBS", columns)
            .unwrap()
            .with_object(ObjectNumbers {
                object_id: JOBS_OBJECT,
                data_object_id: Some(JOBS_OBJECT),
            }),
    )
}

/// A row of object `object` as LogMiner writes it when the dictionary no longer fits (STATUS 2).
fn numbered_row(operation: OperationCode, object: u64, sql: &str) -> LogMinerRow {
    let sql = sql.replace("OBJ#", &format!("OBJ# {object}"));
    LogMinerRow {
        seg_owner: Some(Arc::from("UNKNOWN")),
        table_name: Some(Arc::from(format!("OBJ# {object}").as_str())),
        status: 2,
        ..row(operation, ROWID, &sql)
    }
}

fn row(operation: OperationCode, row_id: &str, sql: &str) -> LogMinerRow {
    LogMinerRow {
        scn: 100,
        timestamp: Some(jiff::civil::date(2024, 1, 2).at(3, 4, 5, 0)),
        xid: Xid::from_parts(3, 14, 716),
        operation,
        row_id: Arc::from(row_id),
        rs_id: Arc::from(" 0x000007.000228b7.0010 "),
        seg_owner: Some(Arc::from("APP")),
        table_name: Some(Arc::from("DOCS")),
        username: Some(Arc::from("APPUSER")),
        session: Some(1),
        serial: Some(2),
        thread: 1,
        sql_redo: Some(sql.to_owned()),
        ..Default::default()
    }
}

const ROWID: &str = "AAAR32AAHAAAAFcAAA";
const LOCATOR: &str = "DECLARE \n loc_c CLOB; \n buf_c VARCHAR2(6156); \n loc_b BLOB; \n buf_b RAW(6156); \n loc_nc NCLOB; \n buf_nc NVARCHAR2(6156); \nBEGIN\n select \"BODY\" into loc_c from \"APP\".\"DOCS\" where \"ID\" = '4' for update;";

fn write(text: &str, amount: usize, offset: usize) -> String {
    format!(" buf_c := '{text}'; \n  dbms_lob.write(loc_c, {amount}, {offset}, buf_c);")
}

fn assemble(
    rows: Vec<LogMinerRow>,
    on_unsupported: OnUnsupported,
) -> (
    Result<AssembleStats, AssembleError>,
    Vec<ChangeEvent>,
    Tables,
) {
    let mut lookup = tables();
    let mut events = Vec::new();
    let commit = CommitInfo {
        xid: Xid::from_parts(3, 14, 716),
        commit_scn: 200,
        commit_time: None,
    };
    let result = (|| {
        let mut assembler =
            TransactionAssembler::new(&mut lookup, commit, on_unsupported, TimeZone::UTC);
        for row in rows {
            assembler.push(row, &mut |event| events.push(event))?;
        }
        assembler.finish(&mut |event| events.push(event))
    })();
    (result, events, lookup)
}

fn value(event: &ChangeEvent, image: &str, column: &str) -> Option<Value> {
    let row = if image == "before" {
        &event.before
    } else {
        &event.after
    };
    let index = event.table.column_index(column)?;
    row.as_ref().and_then(|row| row.get(index).cloned())
}

fn text(value: &str) -> Option<Value> {
    Some(Value::Text(value.to_owned()))
}

#[test]
fn row_changes_become_events_in_redo_order() {
    let rows = vec![
        row(
            OperationCode::Start,
            "AAAAAAAAAAAAAAAAAA",
            "set transaction read write;",
        ),
        row(
            OperationCode::Insert,
            ROWID,
            "insert into \"APP\".\"DOCS\"(\"ID\",\"TITLE\") values ('1','a');",
        ),
        row(
            OperationCode::Update,
            ROWID,
            &format!(
                "update \"APP\".\"DOCS\" set \"TITLE\" = 'b' where \"ID\" = '1' and \"TITLE\" = 'a' and \"BODY\" = 'x' and ROWID = '{ROWID}';"
            ),
        ),
        row(
            OperationCode::Delete,
            ROWID,
            &format!(
                "delete from \"APP\".\"DOCS\" where \"ID\" = '1' and \"TITLE\" = 'b' and ROWID = '{ROWID}';"
            ),
        ),
        row(OperationCode::Commit, "AAAAAAAAAAAAAAAAAA", "commit;"),
    ];
    // START at SCN 100, the changes at 101, 102 and 103.
    let rows = rows
        .into_iter()
        .zip(100..)
        .map(|(row, scn)| LogMinerRow { scn, ..row })
        .collect();
    let (stats, events, _) = assemble(rows, OnUnsupported::Fail);
    assert_eq!(stats.unwrap().events, 3);
    // Debezium's `txSeq` counts the transaction's changes from 1; its `start_scn` is the first
    // change's SCN (not the START row's).
    let sequences: Vec<_> = events
        .iter()
        .map(|e| e.source.transaction_sequence)
        .collect();
    assert_eq!(sequences, [Some(1), Some(2), Some(3)]);
    for event in &events {
        let start = event.source.transaction_start.unwrap();
        assert_eq!(start.scn, 101);
        assert_eq!(start.time, events[0].source.change_time);
    }
    let ops: Vec<_> = events.iter().map(|e| e.op.clone()).collect();
    assert_eq!(
        ops,
        [Operation::Create, Operation::Update, Operation::Delete]
    );
    let update = &events[1];
    assert_eq!(value(update, "before", "TITLE"), text("a"));
    assert_eq!(value(update, "after", "TITLE"), text("b"));
    assert_eq!(
        value(update, "before", "BODY"),
        None,
        "before never holds LOB columns"
    );
    assert_eq!(value(update, "after", "BODY"), text("x"));
    assert_eq!(
        events[0].source.xid.map(|x| x.to_lower_hex()).as_deref(),
        Some("03000e00cc020000")
    );
    assert_eq!(events[0].source.commit_scn, Some(200));
    assert_eq!(
        events[0].source.rs_id.as_deref(),
        Some("0x000007.000228b7.0010")
    );
    assert!(events[0].source.change_time.is_some());
}

#[test]
fn a_small_lob_update_folds_into_its_insert() {
    let rows = vec![
        row(
            OperationCode::Insert,
            PLACEHOLDER_ROW_ID,
            "insert into \"APP\".\"DOCS\"(\"ID\",\"TITLE\",\"BODY\",\"PIC\") values ('1','t',EMPTY_CLOB(),EMPTY_BLOB());",
        ),
        row(
            OperationCode::Update,
            ROWID,
            "update \"APP\".\"DOCS\" set \"BODY\" = 'small text' where \"ID\" = '1';",
        ),
        row(
            OperationCode::Update,
            ROWID,
            "update \"APP\".\"DOCS\" set \"PIC\" = HEXTORAW('cafe') where \"ID\" = '1';",
        ),
    ];
    let (stats, events, _) = assemble(rows, OnUnsupported::Fail);
    assert_eq!(stats.unwrap().events, 1);
    let insert = &events[0];
    assert_eq!(insert.op, Operation::Create);
    assert_eq!(value(insert, "after", "BODY"), text("small text"));
    assert_eq!(
        value(insert, "after", "PIC"),
        Some(Value::Bytes(vec![0xca, 0xfe]))
    );
    assert_eq!(
        insert.source.row_id.as_deref(),
        Some(ROWID),
        "the real ROWID replaces the placeholder"
    );
}

#[test]
fn lob_pieces_rebuild_the_inserted_value() {
    let rows = vec![
        row(
            OperationCode::Insert,
            PLACEHOLDER_ROW_ID,
            "insert into \"APP\".\"DOCS\"(\"ID\",\"TITLE\",\"BODY\") values ('4','t',EMPTY_CLOB());",
        ),
        row(OperationCode::SelectLobLocator, ROWID, LOCATOR),
        row(OperationCode::LobWrite, ROWID, &write("hello ", 6, 1)),
        row(OperationCode::LobWrite, ROWID, &write("world", 5, 7)),
        row(OperationCode::LobTrim, ROWID, "dbms_lob.trim(loc_c, 11);"),
        row(
            OperationCode::Insert,
            ROWID,
            "insert into \"APP\".\"DOCS\"(\"ID\",\"TITLE\") values ('5','next');",
        ),
    ];
    let (stats, events, _) = assemble(rows, OnUnsupported::Fail);
    let stats = stats.unwrap();
    assert_eq!((stats.events, stats.lob_pieces), (2, 3));
    assert_eq!(value(&events[0], "after", "BODY"), text("hello world"));
    assert_eq!(
        value(&events[1], "after", "ID").map(|v| v.to_string()),
        Some("5".to_owned())
    );
}

#[test]
fn a_lob_write_to_another_row_is_an_update_of_that_row() {
    let rows = vec![
        row(OperationCode::SelectLobLocator, ROWID, LOCATOR),
        row(OperationCode::LobWrite, ROWID, &write("whole", 5, 1)),
    ];
    let (stats, events, _) = assemble(rows, OnUnsupported::Fail);
    assert_eq!(stats.unwrap().events, 1);
    assert_eq!(events[0].op, Operation::Update);
    assert_eq!(value(&events[0], "after", "BODY"), text("whole"));
    assert_eq!(value(&events[0], "before", "BODY"), None);
}

#[test]
fn lob_pieces_continue_a_value_set_before_another_rows_change() {
    let insert = |id: &str, body: &str| {
        [
            row(
                OperationCode::Insert,
                PLACEHOLDER_ROW_ID,
                &format!(
                    "insert into \"APP\".\"DOCS\"(\"ID\",\"TITLE\",\"BODY\") values ('{id}','t',EMPTY_CLOB());"
                ),
            ),
            row(
                OperationCode::Update,
                &format!("AAAR32AAHAAAAFcAA{id}"),
                &format!("update \"APP\".\"DOCS\" set \"BODY\" = '{body}' where \"ID\" = '{id}';"),
            ),
        ]
    };
    let row_4 = "AAAR32AAHAAAAFcAA4";
    let mut rows: Vec<LogMinerRow> = insert("4", "abc").into_iter().collect();
    rows.extend(insert("5", "other"));
    // Row 4's CLOB appended to after row 5's insert; then appended to again, after a delete of
    // row 5 and an update of row 4 that does not set the CLOB (the pieces join that update).
    rows.push(row(OperationCode::SelectLobLocator, row_4, LOCATOR));
    rows.push(row(OperationCode::LobWrite, row_4, &write("de", 2, 4)));
    rows.push(row(
        OperationCode::Delete,
        "AAAR32AAHAAAAFcAA5",
        "delete from \"APP\".\"DOCS\" where \"ID\" = '5';",
    ));
    rows.push(row(
        OperationCode::Update,
        row_4,
        "update \"APP\".\"DOCS\" set \"TITLE\" = 'u' where \"ID\" = '4';",
    ));
    rows.push(row(OperationCode::SelectLobLocator, row_4, LOCATOR));
    rows.push(row(OperationCode::LobWrite, row_4, &write("f", 1, 6)));
    let (stats, events, _) = assemble(rows, OnUnsupported::Fail);
    assert_eq!(stats.unwrap().events, 5);
    let ops: Vec<Operation> = events.iter().map(|e| e.op.clone()).collect();
    use Operation::{Create, Delete, Update};
    assert_eq!(ops, [Create, Create, Update, Delete, Update]);
    assert_eq!(value(&events[2], "after", "BODY"), text("abcde"));
    assert_eq!(value(&events[4], "after", "BODY"), text("abcdef"));
    assert_eq!(value(&events[4], "after", "TITLE"), text("u"));
    assert_eq!(
        value(&events[4], "before", "ID").map(|v| v.to_string()),
        Some("4".to_owned())
    );
}

#[test]
fn a_partial_lob_write_stops_or_is_skipped_never_padded() {
    let rows = || {
        vec![
            row(OperationCode::SelectLobLocator, ROWID, LOCATOR),
            row(OperationCode::LobWrite, ROWID, &write("tail", 4, 100)),
        ]
    };
    let (result, events, _) = assemble(rows(), OnUnsupported::Fail);
    let error = result.unwrap_err();
    assert_eq!(error.stop().code.code(), "CDC-6002");
    assert!(error.to_string().contains("APP.DOCS.BODY"), "{error}");
    assert!(events.is_empty());
    let (result, events, _) = assemble(rows(), OnUnsupported::Skip);
    assert_eq!(result.unwrap().skipped, 1);
    assert!(events.is_empty());
}

#[test]
fn unrenderable_changes_stop_with_their_codes() {
    let unsupported = row(OperationCode::Unsupported, ROWID, "Unsupported");
    let (result, _, _) = assemble(vec![unsupported.clone()], OnUnsupported::Fail);
    assert_eq!(result.unwrap_err().stop().code.code(), "CDC-6001");
    let (result, _, _) = assemble(vec![unsupported], OnUnsupported::Skip);
    assert_eq!(result.unwrap().skipped, 1);

    let unsupported_type = row(
        OperationCode::Insert,
        ROWID,
        "insert into \"APP\".\"DOCS\"(\"ID\",\"TITLE\") values ('1',Unsupported Type);",
    );
    let (result, _, _) = assemble(vec![unsupported_type], OnUnsupported::Fail);
    assert_eq!(result.unwrap_err().stop().code.code(), "CDC-6001");

    let mut invalid = row(
        OperationCode::Insert,
        ROWID,
        "insert into \"UNKNOWN\".\"OBJ# 45522\"(\"COL 1\") values (HEXTORAW('45'));",
    );
    invalid.status = 2;
    let (result, _, _) = assemble(vec![invalid], OnUnsupported::Fail);
    assert_eq!(result.unwrap_err().stop().code.code(), "CDC-2002");

    let misfit = row(
        OperationCode::Insert,
        ROWID,
        "insert into \"APP\".\"DOCS\"(\"ID\",\"TITLE\") values ('1.5','a');",
    );
    let (result, _, _) = assemble(vec![misfit], OnUnsupported::Fail);
    assert_eq!(result.unwrap_err().stop().code.code(), "CDC-2002");
}

#[test]
fn ddl_and_truncate_are_events_and_ddl_reloads_the_table() {
    let rows = vec![
        row(
            OperationCode::Ddl,
            DDL_ROW_ID,
            "  alter table DOCS add (\n    country VARCHAR(50)\n  );",
        ),
        row(OperationCode::Ddl, DDL_ROW_ID, "truncate table DOCS;"),
    ];
    let (stats, events, lookup) = assemble(rows, OnUnsupported::Fail);
    assert_eq!(stats.unwrap().events, 2);
    assert_eq!(
        events[0].op,
        Operation::Ddl {
            sql: "  alter table DOCS add (\n    country VARCHAR(50)\n  )".to_owned()
        }
    );
    assert_eq!(events[1].op, Operation::Truncate);
    assert_eq!(lookup.refreshed, ["APP.DOCS"]);
}

/// DDL Oracle runs itself (INFO `INTERNAL DDL`, here the recycle-bin rename a DROP TABLE
/// without PURGE makes) is neither an event nor a reload; the user's DDL next to it still is.
#[test]
fn internal_ddl_is_neither_an_event_nor_a_reload() {
    let mut internal = row(
        OperationCode::Ddl,
        DDL_ROW_ID,
        "ALTER TABLE \"APP\".\"DOCS\" RENAME TO \"BIN$8zXQ7mVQRnKgU0iFqMAKfw==$0\" ;",
    );
    internal.info = Some(Arc::from("INTERNAL DDL (PlSql=0 RecDep=0)"));
    let mut user = row(OperationCode::Ddl, DDL_ROW_ID, "drop table DOCS;");
    user.info = Some(Arc::from("USER DDL (PlSql=0 RecDep=0)"));
    let (stats, events, lookup) = assemble(vec![internal, user], OnUnsupported::Fail);
    assert_eq!(stats.unwrap().events, 1);
    assert_eq!(
        events[0].op,
        Operation::Ddl {
            sql: "drop table DOCS".to_owned()
        }
    );
    assert_eq!(lookup.refreshed, ["APP.DOCS"]);
}

#[test]
fn other_tables_and_undo_rows_produce_nothing() {
    let mut other = row(
        OperationCode::Insert,
        ROWID,
        "insert into \"APP\".\"OTHER\"(\"ID\") values ('1');",
    );
    other.table_name = Some(Arc::from("OTHER"));
    let mut undo = row(
        OperationCode::Delete,
        ROWID,
        &format!("delete from \"APP\".\"DOCS\" where ROWID = '{ROWID}';"),
    );
    undo.rollback = true;
    let (stats, events, _) = assemble(vec![other, undo], OnUnsupported::Fail);
    assert_eq!(stats.unwrap().events, 0);
    assert!(events.is_empty());
}

fn notes(operation: OperationCode, row_id: &str, sql: &str) -> LogMinerRow {
    LogMinerRow {
        table_name: Some(Arc::from("NOTES")),
        ..row(operation, row_id, sql)
    }
}

/// The 32K_BEGIN shape of Debezium's `ExtendedStringParserTest` (logminer.md §3).
fn begin_32k(column: &str, id: u32) -> String {
    format!(
        "DECLARE \n TempLob CLOB;\n buf_c   VARCHAR2(32767);\n Stmt    CLOB;\nBEGIN\n DBMS_LOB.CreateTemporary(TempLob, FALSE);\n Stmt := 'update \"APP\".\"NOTES\" a set a.\"{column}\" = :{column} where a.\"ID\" = ''{id}'';';"
    )
}

fn write_32k(piece: &str) -> String {
    format!("\n buf_c := '{piece}';\n DBMS_LOB.WriteAppend(TempLob, LENGTH(buf_c), buf_c);")
}

#[test]
fn extended_string_pieces_are_the_inserted_value() {
    let a = "a".repeat(4000);
    let b = "b".repeat(4000);
    let rows = vec![
        notes(
            OperationCode::Insert,
            PLACEHOLDER_ROW_ID,
            "insert into \"APP\".\"NOTES\"(\"ID\",\"TXT\") values ('1',NULL);",
        ),
        notes(
            OperationCode::ExtendedStringBegin,
            ROWID,
            &begin_32k("TXT", 1),
        ),
        notes(OperationCode::ExtendedStringWrite, ROWID, &write_32k(&a)),
        notes(OperationCode::ExtendedStringWrite, ROWID, &write_32k(&b)),
        notes(OperationCode::ExtendedStringEnd, ROWID, ""),
        // An extended string written to another row is an UPDATE of that row.
        notes(
            OperationCode::ExtendedStringBegin,
            ROWID,
            &begin_32k("TXT", 2),
        ),
        notes(
            OperationCode::ExtendedStringWrite,
            ROWID,
            &write_32k("it''s"),
        ),
        notes(OperationCode::ExtendedStringEnd, ROWID, ""),
    ];
    let (stats, events, _) = assemble(rows, OnUnsupported::Fail);
    let stats = stats.unwrap();
    assert_eq!(stats.events, 2);
    assert_eq!(events[0].op, Operation::Create);
    assert_eq!(value(&events[0], "after", "TXT"), text(&format!("{a}{b}")));
    assert_eq!(events[0].source.row_id.as_deref(), Some(ROWID));
    assert_eq!(events[1].op, Operation::Update);
    assert_eq!(value(&events[1], "after", "TXT"), text("it's"));
}

#[test]
fn an_extended_string_longer_than_its_column_or_without_begin_is_refused() {
    let hex = "ab".repeat(5001);
    let rows = vec![
        notes(
            OperationCode::Insert,
            PLACEHOLDER_ROW_ID,
            "insert into \"APP\".\"NOTES\"(\"ID\",\"BIN\") values ('1',NULL);",
        ),
        notes(
            OperationCode::ExtendedStringBegin,
            ROWID,
            &begin_32k("BIN", 1),
        ),
        notes(
            OperationCode::ExtendedStringWrite,
            ROWID,
            &format!(" buf_b := HEXTORAW('{hex}'); DBMS_LOB.WriteAppend(TempLob, 5001, buf_b);"),
        ),
        notes(OperationCode::ExtendedStringEnd, ROWID, ""),
    ];
    let (result, events, _) = assemble(rows, OnUnsupported::Fail);
    assert!(
        matches!(result, Err(AssembleError::DictionaryMismatch { .. })),
        "{result:?}"
    );
    assert!(events.is_empty());

    let rows = vec![notes(
        OperationCode::ExtendedStringWrite,
        ROWID,
        &write_32k("x"),
    )];
    let (result, _, _) = assemble(rows, OnUnsupported::Fail);
    assert!(
        matches!(result, Err(AssembleError::PartialLob { .. })),
        "{result:?}"
    );
}

#[test]
fn rows_named_by_object_number_are_changes_of_the_version_they_were_written_with() {
    // The statements of Oracle's example (Utilities, "LogMiner Configuration"), then an update
    // and a delete of the same row, all written before the ADD COLUMN at SCN 300.
    let rows = vec![
        numbered_row(
            OperationCode::Insert,
            JOBS_OBJECT,
            "insert into \"UNKNOWN\".\"OBJ#\"(\"COL 1\",\"COL 2\",\"COL 3\",\"COL 4\") values \
             (HEXTORAW('45465f4748'),HEXTORAW('546563686e6963616c20577269746572'),\
             HEXTORAW('c229'),HEXTORAW('c3020b'));",
        ),
        numbered_row(
            OperationCode::Update,
            JOBS_OBJECT,
            &format!(
                "update \"UNKNOWN\".\"OBJ#\" set \"COL 3\" = HEXTORAW('c22a') where \
                 \"COL 1\" = HEXTORAW('45465f4748') and \"COL 3\" = HEXTORAW('c229') and \
                 ROWID = '{ROWID}';"
            ),
        ),
        numbered_row(
            OperationCode::Delete,
            JOBS_OBJECT,
            &format!(
                "delete from \"UNKNOWN\".\"OBJ#\" where \"COL 1\" = HEXTORAW('45465f4748') and \
                 \"COL 2\" = HEXTORAW('546563686e6963616c20577269746572') and \
                 \"COL 3\" = HEXTORAW('c22a') and \"COL 4\" IS NULL and ROWID = '{ROWID}';"
            ),
        ),
        // Another object's row: not a captured table, nothing.
        numbered_row(
            OperationCode::Insert,
            99_999,
            "insert into \"UNKNOWN\".\"OBJ#\"(\"COL 1\") values (HEXTORAW('c102'));",
        ),
    ];
    let (result, events, _) = assemble(rows, OnUnsupported::Fail);
    result.unwrap();
    let number = |text: &str| {
        Some(Value::Number(
            crate::value::number::OracleNumber::parse(text).unwrap(),
        ))
    };
    assert_eq!(
        events.iter().map(|e| e.op.clone()).collect::<Vec<_>>(),
        [Operation::Create, Operation::Update, Operation::Delete]
    );
    for event in &events {
        assert_eq!(event.table.qualified_name(), "HR.JOBS");
        assert_eq!(
            event.table.columns().len(),
            4,
            "the version before the ADD COLUMN"
        );
        assert_eq!(event.source.xid, Some(Xid::from_parts(3, 14, 716)));
    }
    let [insert, update, delete] = &events[..] else {
        panic!("three events");
    };
    assert_eq!(value(insert, "after", "JOB_ID"), text("EF_GH"));
    assert_eq!(
        value(insert, "after", "JOB_TITLE"),
        text("Technical Writer")
    );
    assert_eq!(value(insert, "after", "MIN_SALARY"), number("4000"));
    assert_eq!(value(insert, "after", "MAX_SALARY"), number("11000"));
    assert_eq!(value(update, "before", "MIN_SALARY"), number("4000"));
    assert_eq!(value(update, "after", "MIN_SALARY"), number("4100"));
    assert_eq!(value(update, "after", "JOB_ID"), text("EF_GH"));
    assert_eq!(value(update, "after", "JOB_TITLE"), None, "not in the redo");
    assert_eq!(value(delete, "before", "MIN_SALARY"), number("4100"));
    assert_eq!(value(delete, "before", "MAX_SALARY"), Some(Value::Null));
    assert!(delete.after.is_none());
}

#[test]
fn a_captured_objects_row_that_cannot_be_matched_stops_even_under_skip() {
    let unknown_column = numbered_row(
        OperationCode::Insert,
        JOBS_OBJECT,
        "insert into \"UNKNOWN\".\"OBJ#\"(\"COL 1\",\"COL 9\") values \
         (HEXTORAW('45465f4748'),HEXTORAW('c102'));",
    );
    let rendered_value = numbered_row(
        OperationCode::Insert,
        JOBS_OBJECT,
        "insert into \"UNKNOWN\".\"OBJ#\"(\"COL 1\") values ('EF_GH');",
    );
    let lob = numbered_row(OperationCode::LobWrite, JOBS_OBJECT, "");
    for row in [unknown_column, rendered_value, lob] {
        for on_unsupported in [OnUnsupported::Fail, OnUnsupported::Skip] {
            let (result, events, _) = assemble(vec![row.clone()], on_unsupported);
            let error = result.unwrap_err();
            assert!(events.is_empty());
            let stop = error.stop();
            assert_eq!(stop.code, StopCode::DictionaryMismatch, "{error}");
            let xid = format!("transaction {}", Xid::from_parts(3, 14, 716));
            for named in ["SCN 100", "45522", xid.as_str()] {
                assert!(stop.message.contains(named), "{named} in {}", stop.message);
            }
        }
    }
}
