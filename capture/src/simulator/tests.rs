//! Golden tests: for each kind of step, the exact rows, checked against the facts of
//! `logminer.md` (corpus numbers refer to its §3 "Verbatim SQL_REDO corpus", rendered under the
//! capture's fixed NLS), and every SQL_REDO parsed back with the capture's parsers.

use std::ops::ControlFlow;

use super::database::FIRST_SCN;
use super::*;
use crate::assemble::lob::{LobBuilder, LobFlavor};
use crate::redo::{DdlKind, LobData, LobStatement, parse_ddl, parse_dml, parse_lob};
use crate::source::row::{DDL_ROW_ID, PLACEHOLDER_ROW_ID, SEQUENCELESS_XIDSQN};
use crate::source::{OperationCode as Op, RedoAddress, Xid};

mod windows;

fn simulator(lines: &[&str]) -> Simulator {
    let mut sim = Simulator::new();
    for line in lines {
        sim.apply_line(line).unwrap();
    }
    sim
}

/// Every row from `start` to the current SCN (redo flushed first; the flush transaction's own
/// rows lie after the window) for the given tables.
fn mine_from(sim: &mut Simulator, start: u64, tables: &[&str]) -> Vec<LogMinerRow> {
    let end = sim.current_scn().unwrap();
    sim.flush_redo().unwrap();
    mine_window(sim, start, end, tables).unwrap()
}

fn mine_window(
    sim: &mut Simulator,
    start: u64,
    end: u64,
    tables: &[&str],
) -> Result<Vec<LogMinerRow>, SourceError> {
    let plan = sim.logs_covering(start)?;
    let window = MiningWindow {
        start_scn: start,
        end_scn: end,
        logs: plan.logs,
        objects: Vec::new(),
        tables: tables
            .iter()
            .map(|t| {
                let (owner, table) = t.split_once('.').unwrap();
                (owner.to_owned(), table.to_owned())
            })
            .collect(),
        pdb: None,
        with_sql_undo: true,
    };
    let rows = sim.mined_rows(&window)?;
    sim.end_mining()?;
    assert_parses(&rows);
    Ok(rows)
}

fn mine(sim: &mut Simulator, tables: &[&str]) -> Vec<LogMinerRow> {
    mine_from(sim, FIRST_SCN, tables)
}

/// Joins CSF continuation rows and parses every statement with the capture's parsers.
fn assert_parses(rows: &[LogMinerRow]) {
    let (mut pending, mut pending_undo) = (String::new(), String::new());
    for row in rows {
        pending.push_str(row.sql_redo.as_deref().unwrap_or(""));
        pending_undo.push_str(row.sql_undo.as_deref().unwrap_or(""));
        if row.csf {
            continue;
        }
        let sql = std::mem::take(&mut pending);
        let undo = std::mem::take(&mut pending_undo);
        match row.operation {
            Op::Insert | Op::Update | Op::Delete => {
                parse_dml(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
            Op::SelectLobLocator | Op::LobWrite | Op::LobTrim | Op::LobErase => {
                parse_lob(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
            Op::Ddl => {
                parse_ddl(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
            Op::ExtendedStringBegin if !row.rollback => {
                crate::redo::parse_extended_begin(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
            Op::ExtendedStringWrite if !row.rollback => {
                crate::redo::parse_extended_write(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
            _ => {}
        }
        if !row.rollback && matches!(row.operation, Op::Insert | Op::Update | Op::Delete) {
            parse_dml(&undo).unwrap_or_else(|e| panic!("undo {undo}: {e}"));
        }
    }
}

fn redo(row: &LogMinerRow) -> &str {
    row.sql_redo.as_deref().unwrap_or("")
}

fn ops(rows: &[LogMinerRow]) -> Vec<(Op, bool)> {
    rows.iter().map(|r| (r.operation, r.rollback)).collect()
}

const JOBS: &str = r#"{"table":"HR.JOBS","columns":[{"name":"JOB_ID","type":"VARCHAR2(10)","key":true},{"name":"JOB_TITLE","type":"VARCHAR2(35)"},{"name":"MIN_SALARY","type":"NUMBER(6)"},{"name":"MAX_SALARY","type":"NUMBER(6)"}],"logging":"all"}"#;

#[test]
fn insert_start_and_commit_rows_match_corpus_1_and_16() {
    let mut sim = simulator(&[
        JOBS,
        r#"{"tx":"t1","insert":"HR.JOBS","values":{"JOB_ID":"9782","JOB_TITLE":"HR_ENTRY","MIN_SALARY":null}}"#,
        r#"{"tx":"t1","commit":true}"#,
    ]);
    let rows = mine(&mut sim, &["HR.JOBS"]);
    assert_eq!(
        ops(&rows),
        [(Op::Start, false), (Op::Insert, false), (Op::Commit, false)]
    );
    let (start, insert, commit) = (&rows[0], &rows[1], &rows[2]);
    assert_eq!(redo(start), "set transaction read write;");
    assert_eq!(start.seg_owner, None);
    assert_eq!(
        redo(insert),
        r#"insert into "HR"."JOBS"("JOB_ID","JOB_TITLE","MIN_SALARY","MAX_SALARY") values ('9782','HR_ENTRY',NULL,NULL);"#
    );
    let row_id = insert.row_id.to_string();
    assert_eq!(row_id.len(), 18);
    assert!(
        row_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
    );
    assert_eq!(
        insert.sql_undo.as_deref(),
        Some(format!(r#"delete from "HR"."JOBS" where "JOB_ID" = '9782' and "JOB_TITLE" = 'HR_ENTRY' and "MIN_SALARY" IS NULL and "MAX_SALARY" IS NULL and ROWID = '{row_id}';"#).as_str())
    );
    assert_eq!((insert.start_scn, insert.commit_scn), (None, None));
    assert_eq!(insert.seg_owner.as_deref(), Some("HR"));
    assert_eq!(insert.table_name.as_deref(), Some("JOBS"));
    assert_eq!(insert.username.as_deref(), Some("APP"));
    assert_eq!(insert.thread, 1);
    assert!(insert.session.is_some() && insert.serial.is_some());
    // Corpus #16: the COMMIT row.
    assert_eq!(redo(commit), "commit;");
    assert_eq!(&*commit.row_id, PLACEHOLDER_ROW_ID);
    assert_eq!(commit.seg_owner, None);
    assert_eq!(
        commit.scn,
        FIRST_SCN + 3,
        "the COMMIT row's SCN is the commit SCN"
    );
    assert_eq!(commit.commit_scn, Some(commit.scn));
    assert_eq!(commit.start_scn, Some(insert.scn));
    assert!(commit.commit_timestamp.is_some() && insert.commit_timestamp.is_none());
    assert!(start.xid == insert.xid && insert.xid == commit.xid);
    assert_eq!((start.scn, insert.scn), (FIRST_SCN + 2, FIRST_SCN + 2));
    for row in &rows {
        let address = row.redo_address().unwrap();
        assert_eq!(*row.rs_id, address.to_string());
        assert!(row.rs_id.starts_with(" 0x") && row.rs_id.ends_with(' '));
        assert_eq!((row.ssn, row.csf, row.status), (0, false, 0));
    }
    assert_ne!(rows[0].rs_id, rows[1].rs_id);
}

const ORDERS: &str = r#"{"table":"OE.ORDERS","columns":[{"name":"ORDER_ID","type":"NUMBER(12)","key":true},{"name":"ORDER_MODE","type":"VARCHAR2(8)"},{"name":"CUSTOMER_ID","type":"NUMBER(6)"},{"name":"ORDER_STATUS","type":"NUMBER(2)"},{"name":"ORDER_TOTAL","type":"NUMBER(8,2)"},{"name":"SALES_REP_ID","type":"NUMBER(6)"},{"name":"PROMOTION_ID","type":"NUMBER(6)"}],"logging":"pk"}"#;

#[test]
fn delete_carries_every_column_whatever_the_logging_corpus_3() {
    let mut sim = simulator(&[
        ORDERS,
        r#"{"tx":"a","insert":"OE.ORDERS","values":{"ORDER_ID":2413,"ORDER_MODE":"direct","CUSTOMER_ID":101,"ORDER_STATUS":5,"ORDER_TOTAL":"48552.00","SALES_REP_ID":161}}"#,
        r#"{"tx":"a","commit":true}"#,
        r#"{"tx":"b","delete":"OE.ORDERS","where":{"ORDER_ID":2413}}"#,
        r#"{"tx":"b","commit":true}"#,
    ]);
    let rows = mine(&mut sim, &["OE.ORDERS"]);
    let delete = rows.iter().find(|r| r.operation == Op::Delete).unwrap();
    assert_eq!(
        redo(delete),
        format!(
            r#"delete from "OE"."ORDERS" where "ORDER_ID" = '2413' and "ORDER_MODE" = 'direct' and "CUSTOMER_ID" = '101' and "ORDER_STATUS" = '5' and "ORDER_TOTAL" = '48552' and "SALES_REP_ID" = '161' and "PROMOTION_ID" IS NULL and ROWID = '{}';"#,
            delete.row_id
        )
    );
    assert_eq!(
        delete.sql_undo.as_deref(),
        Some(
            r#"insert into "OE"."ORDERS"("ORDER_ID","ORDER_MODE","CUSTOMER_ID","ORDER_STATUS","ORDER_TOTAL","SALES_REP_ID","PROMOTION_ID") values ('2413','direct','101','5','48552','161',NULL);"#
        )
    );
    assert_eq!(sim.committed_rows("OE", "ORDERS").unwrap(), vec![]);
}

/// Primary-key logging of a table without a primary key logs its unique index key on NOT NULL
/// columns, and with none every column (Oracle Database Utilities, "Database-Level
/// Identification Key Logging").
#[test]
fn primary_key_logging_without_a_primary_key_logs_the_unique_key_or_every_column() {
    let table = |unique: &str| {
        format!(
            r#"{{"table":"APP.U","columns":[{{"name":"CODE","type":"VARCHAR2(8)","nullable":false}},{{"name":"NAME","type":"VARCHAR2(8)"}},{{"name":"V","type":"NUMBER(4)"}}],"unique":[{unique}],"logging":"pk"}}"#
        )
    };
    for (unique, where_) in [
        (
            r#"{"name":"UK_CODE","columns":["CODE"]}"#,
            r#"where "CODE" = 'X' and "V" = '1' and ROWID"#,
        ),
        // A unique index on a nullable column identifies no row: every column is logged.
        (
            r#"{"name":"UK_NAME","columns":["NAME"]}"#,
            r#"where "CODE" = 'X' and "NAME" = 'n' and "V" = '1' and ROWID"#,
        ),
    ] {
        let mut sim = simulator(&[
            &table(unique),
            r#"{"tx":"a","insert":"APP.U","values":{"CODE":"X","NAME":"n","V":1}}"#,
            r#"{"tx":"a","update":"APP.U","where":{"CODE":"X"},"set":{"V":2}}"#,
            r#"{"tx":"a","commit":true}"#,
        ]);
        let rows = mine(&mut sim, &["APP.U"]);
        let update = rows.iter().find(|r| r.operation == Op::Update).unwrap();
        assert_eq!(
            redo(update),
            format!(
                r#"update "APP"."U" set "V" = '2' {where_} = '{}';"#,
                update.row_id
            ),
            "{unique}"
        );
    }
}

#[test]
fn a_unique_constraint_names_columns_of_its_table_in_a_checked_shape() {
    let declare = |unique: &str| {
        let mut sim = Simulator::new();
        sim.apply_line(&format!(
            r#"{{"table":"APP.U","columns":[{{"name":"CODE","type":"VARCHAR2(8)","nullable":false}}],"unique":{unique}}}"#
        ))
        .map(drop)
        .map_err(|error| (error.field, error.message))
    };
    assert_eq!(declare(r#"[{"name":"UK","columns":["CODE"]}]"#), Ok(()));
    let missing = declare(r#"[{"name":"UK","columns":["NOPE"]}]"#).unwrap_err();
    assert_eq!(missing.0, "unique[0]");
    assert!(missing.1.contains("ORA-00904"), "{}", missing.1);
    for malformed in [
        r#"{"name":"UK"}"#,
        r#"[{"name":"UK","columns":[]}]"#,
        r#"[{"name":"UK","columns":["CODE"],"extra":1}]"#,
        r#"[{"columns":["CODE"]}]"#,
    ] {
        assert!(
            declare(malformed).unwrap_err().0.starts_with("unique"),
            "{malformed}"
        );
    }
}

#[test]
fn update_where_clause_follows_the_logging_level() {
    let table = |logging: &str| {
        format!(
            r#"{{"table":"OE.PRODUCT_INFORMATION","columns":[{{"name":"PRODUCT_ID","type":"NUMBER(6)","key":true}},{{"name":"PRODUCT_NAME","type":"VARCHAR2(50)"}},{{"name":"WARRANTY_PERIOD","type":"INTERVAL YEAR(2) TO MONTH"}}],"logging":"{logging}"}}"#
        )
    };
    let expected = [
        // Corpus #2: the key and the changed column's old value.
        (
            "pk",
            r#"where "PRODUCT_ID" = '1799' and "WARRANTY_PERIOD" = TO_YMINTERVAL('+01-00') and ROWID"#,
        ),
        (
            "all",
            r#"where "PRODUCT_ID" = '1799' and "PRODUCT_NAME" = 'Widget' and "WARRANTY_PERIOD" = TO_YMINTERVAL('+01-00') and ROWID"#,
        ),
        (
            "none",
            r#"where "WARRANTY_PERIOD" = TO_YMINTERVAL('+01-00') and ROWID"#,
        ),
    ];
    for (logging, where_) in expected {
        let mut sim = simulator(&[
            &table(logging),
            r#"{"tx":"a","insert":"OE.PRODUCT_INFORMATION","values":{"PRODUCT_ID":1799,"PRODUCT_NAME":"Widget","WARRANTY_PERIOD":"+01-00"}}"#,
            r#"{"tx":"a","update":"OE.PRODUCT_INFORMATION","where":{"PRODUCT_ID":1799},"set":{"WARRANTY_PERIOD":"+05-00"}}"#,
            r#"{"tx":"a","commit":true}"#,
        ]);
        let rows = mine(&mut sim, &["OE.PRODUCT_INFORMATION"]);
        let update = rows.iter().find(|r| r.operation == Op::Update).unwrap();
        assert_eq!(
            redo(update),
            format!(
                r#"update "OE"."PRODUCT_INFORMATION" set "WARRANTY_PERIOD" = TO_YMINTERVAL('+05-00') {where_} = '{}';"#,
                update.row_id
            ),
            "{logging}"
        );
    }
}

#[test]
fn all_column_update_with_nulls_and_timestamps_corpus_7() {
    let mut sim = simulator(&[
        r#"{"table":"C##MYUSER.CUSTOMERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"CLUB_STATUS","type":"VARCHAR2(20)"},{"name":"UPDATE_TS","type":"TIMESTAMP(3)"},{"name":"COUNTRY","type":"VARCHAR2(50)"}],"logging":"all"}"#,
        r#"{"tx":"a","insert":"C##MYUSER.CUSTOMERS","values":{"ID":43,"CLUB_STATUS":"silver","UPDATE_TS":"2021-09-14T07:36:48","COUNTRY":""}}"#,
        r#"{"tx":"a","update":"C##MYUSER.CUSTOMERS","where":{"ID":43},"set":{"CLUB_STATUS":"gold","UPDATE_TS":"2021-09-14 07:36:49.000"}}"#,
        r#"{"tx":"a","commit":true}"#,
    ]);
    let rows = mine(&mut sim, &["C##MYUSER.CUSTOMERS"]);
    let update = &rows[2];
    assert_eq!(
        redo(update),
        format!(
            r#"update "C##MYUSER"."CUSTOMERS" set "CLUB_STATUS" = 'gold', "UPDATE_TS" = TO_TIMESTAMP(' 2021-09-14 07:36:49.000000000') where "ID" = '43' and "CLUB_STATUS" = 'silver' and "UPDATE_TS" = TO_TIMESTAMP(' 2021-09-14 07:36:48.000000000') and "COUNTRY" IS NULL and ROWID = '{}';"#,
            update.row_id
        )
    );
    assert_eq!(
        update.sql_undo.as_deref(),
        Some(format!(r#"update "C##MYUSER"."CUSTOMERS" set "CLUB_STATUS" = 'silver', "UPDATE_TS" = TO_TIMESTAMP(' 2021-09-14 07:36:48.000000000') where "ID" = '43' and "CLUB_STATUS" = 'gold' and "UPDATE_TS" = TO_TIMESTAMP(' 2021-09-14 07:36:49.000000000') and "COUNTRY" IS NULL and ROWID = '{}';"#, update.row_id).as_str())
    );
}

#[test]
fn value_renderings_dates_numbers_quotes_raw_unistr_char_padding() {
    let mut sim = simulator(&[
        r#"{"table":"HR.EMPLOYEES","columns":[{"name":"EMPLOYEE_ID","type":"NUMBER(6)","key":true},{"name":"FIRST_NAME","type":"VARCHAR2(20)"},{"name":"HIRE_DATE","type":"DATE"},{"name":"SALARY","type":"NUMBER(8,2)"},{"name":"COMMISSION_PCT","type":"NUMBER(2,2)"},{"name":"NOTE","type":"VARCHAR2(60)"},{"name":"TZ","type":"TIMESTAMP(6) WITH TIME ZONE"},{"name":"RAWCOL","type":"RAW(16)"},{"name":"NAME_N","type":"NVARCHAR2(10)"},{"name":"CODE","type":"CHAR(20)"},{"name":"ASCII_N","type":"NCHAR(3)"},{"name":"DELTA","type":"NUMBER"}],"logging":"all"}"#,
        r#"{"tx":"a","insert":"HR.EMPLOYEES","values":{"EMPLOYEE_ID":306,"FIRST_NAME":"Nandini","HIRE_DATE":"2012-01-10T13:34:43","SALARY":120000,"COMMISSION_PCT":0.05,"NOTE":"Bob's dog \\ rblaisdell30@rambler.ru\\","TZ":"2024-02-14T10:58:02.20259+01:00","RAWCOL":"45465F4748","NAME_N":"Вы","CODE":"1033263000011","ASCII_N":"ab","DELTA":"-0.5"}}"#,
    ]);
    let rows = mine(&mut sim, &["HR.EMPLOYEES"]);
    assert_eq!(
        redo(&rows[1]),
        r#"insert into "HR"."EMPLOYEES"("EMPLOYEE_ID","FIRST_NAME","HIRE_DATE","SALARY","COMMISSION_PCT","NOTE","TZ","RAWCOL","NAME_N","CODE","ASCII_N","DELTA") values ('306','Nandini',TO_DATE(' 2012-01-10 13:34:43', 'SYYYY-MM-DD HH24:MI:SS'),'120000','.05','Bob''s dog \ rblaisdell30@rambler.ru\',TO_TIMESTAMP_TZ(' 2024-02-14 10:58:02.202590000 +01:00'),HEXTORAW('45465f4748'),UNISTR('\0412\044B'),'1033263000011       ','ab ','-.5');"#
    );
}

#[test]
fn float_interval_local_time_zone_and_national_lob_renderings() {
    let mut sim = simulator(&[
        r#"{"table":"APP.V","columns":[{"name":"ID","type":"NUMBER(4)","key":true},{"name":"F","type":"BINARY_DOUBLE"},{"name":"G","type":"BINARY_FLOAT"},{"name":"I","type":"INTERVAL DAY(2) TO SECOND(6)"},{"name":"L","type":"TIMESTAMP(3) WITH LOCAL TIME ZONE"},{"name":"N","type":"NCLOB"},{"name":"B","type":"BLOB"}],"logging":"pk"}"#,
        r#"{"tx":"a","insert":"APP.V","values":{"ID":1,"F":1.5,"G":"-Inf","I":"+02 03:04:05.5","L":"2024-01-02T03:04:05.123+02:00","N":"Вы"}}"#,
        r#"{"tx":"a","lob_write":"APP.V","where":{"ID":1},"column":"B","offset":1,"data":"00ff"}"#,
    ]);
    let rows = mine(&mut sim, &["APP.V"]);
    assert_eq!(
        redo(&rows[1]),
        r#"insert into "APP"."V"("ID","F","G","I","L","N","B") values ('1','1.5','-Inf',TO_DSINTERVAL('+02 03:04:05.500000000'),TO_TIMESTAMP_TZ(' 2024-01-02 01:04:05.123000000 +00:00'),EMPTY_CLOB(),NULL);"#
    );
    let row_id = &rows[2].row_id;
    assert_eq!(
        redo(&rows[2]),
        format!(
            r#"update "APP"."V" set "N" = UNISTR('\0412\044B') where "ID" = '1' and ROWID = '{row_id}';"#
        )
    );
    assert!(
        redo(&rows[3])
            .contains(r#"select "B" into loc_b from "APP"."V" where "ID" = '1' for update;"#)
    );
    assert_eq!(
        redo(&rows[4]),
        " buf_b := HEXTORAW('00ff'); \n  dbms_lob.write(loc_b, 2, 1, buf_b);"
    );
}

#[test]
fn long_statements_continue_in_csf_rows_split_on_character_boundaries() {
    let mut sim = simulator(&[
        r#"{"table":"APP.NOTES","columns":[{"name":"ID","type":"NUMBER(4)","key":true},{"name":"A","type":"VARCHAR2(4000)"},{"name":"B","type":"VARCHAR2(4000 CHAR)"}]}"#,
    ]);
    let a = "x".repeat(2999);
    let b = "é".repeat(1500);
    sim.apply_line(&format!(
        r#"{{"tx":"t","insert":"APP.NOTES","values":{{"ID":1,"A":"{a}","B":"{b}"}}}}"#
    ))
    .unwrap();
    let rows = mine(&mut sim, &["APP.NOTES"]);
    let pieces: Vec<&LogMinerRow> = rows.iter().filter(|r| r.operation == Op::Insert).collect();
    assert_eq!(pieces.len(), 2);
    assert!(pieces[0].csf && !pieces[1].csf);
    assert!(
        pieces
            .iter()
            .all(|r| redo(r).len() <= 4000 && r.rs_id == pieces[0].rs_id && r.scn == pieces[0].scn)
    );
    let whole: String = pieces.iter().map(|r| redo(r)).collect();
    assert_eq!(
        whole,
        format!(r#"insert into "APP"."NOTES"("ID","A","B") values ('1','{a}','{b}');"#)
    );
    // SQL_UNDO continues alongside (it is as long).
    let undo: String = pieces
        .iter()
        .filter_map(|r| r.sql_undo.as_deref())
        .collect();
    assert!(
        undo.starts_with(r#"delete from "APP"."NOTES" where "ID" = '1'"#) && undo.ends_with("';")
    );
}

const T: &str = r#"{"table":"APP.T","columns":[{"name":"ID","type":"NUMBER(4)","key":true},{"name":"V","type":"NUMBER(4)"}],"logging":"all"}"#;

#[test]
fn savepoint_rollback_writes_undo_rows_in_reverse_order() {
    // The real sequence (logminer.md §3, oracdc): INSERT AAN(0), INSERT AAO(0), UPDATE AAO(0)×2,
    // UPDATE AAO(1)×2, DELETE AAO(1), DELETE AAN(1).
    let mut sim = simulator(&[
        T,
        r#"{"tx":"t","savepoint":"s1"}"#,
        r#"{"tx":"t","insert":"APP.T","values":{"ID":1,"V":1}}"#,
        r#"{"tx":"t","insert":"APP.T","values":{"ID":2,"V":1}}"#,
        r#"{"tx":"t","update":"APP.T","where":{"ID":2},"set":{"V":2}}"#,
        r#"{"tx":"t","update":"APP.T","where":{"ID":2},"set":{"V":3}}"#,
        r#"{"tx":"t","rollback_to":"s1"}"#,
        r#"{"tx":"t","insert":"APP.T","values":{"ID":1,"V":9}}"#,
        r#"{"tx":"t","commit":true}"#,
    ]);
    let rows = mine(&mut sim, &["APP.T"]);
    assert_eq!(
        ops(&rows),
        [
            (Op::Start, false),
            (Op::Insert, false),
            (Op::Insert, false),
            (Op::Update, false),
            (Op::Update, false),
            (Op::Update, true),
            (Op::Update, true),
            (Op::Delete, true),
            (Op::Delete, true),
            (Op::Insert, false),
            (Op::Commit, false),
        ]
    );
    let (aan, aao) = (&rows[1].row_id, &rows[2].row_id);
    let undo_ids: Vec<&Arc<str>> = rows[5..9].iter().map(|r| &r.row_id).collect();
    assert_eq!(undo_ids, [aao, aao, aao, aan]);
    assert_eq!(
        redo(&rows[5]),
        format!(r#"update "APP"."T" set "V" = '2' where ROWID = '{aao}';"#)
    );
    assert_eq!(
        redo(&rows[6]),
        format!(r#"update "APP"."T" set "V" = '1' where ROWID = '{aao}';"#)
    );
    assert_eq!(
        redo(&rows[8]),
        format!(r#"delete from "APP"."T" where ROWID = '{aan}';"#)
    );
    assert!(
        rows[5..9]
            .iter()
            .all(|r| r.sql_undo.is_none() && r.xid == rows[0].xid)
    );
    let state = sim.committed_rows("APP", "T").unwrap();
    assert_eq!(state.len(), 1);
    assert_eq!(
        state[0].1[1],
        Value::Number(crate::value::OracleNumber::parse("9").unwrap())
    );
}

#[test]
fn failed_statement_is_undone_at_once_and_the_transaction_stays_open() {
    let mut sim = simulator(&[
        T,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":1}}"#,
        r#"{"tx":"a","commit":true}"#,
        r#"{"tx":"b","insert":"APP.T","values":{"ID":1,"V":2},"fails":true}"#,
        r#"{"tx":"b","update":"APP.T","where":{"ID":1},"set":{"V":3},"fails":true}"#,
    ]);
    let rows = mine_from(&mut sim, FIRST_SCN + 4, &["APP.T"]);
    assert_eq!(
        ops(&rows),
        [
            (Op::Start, false),
            (Op::Insert, false),
            (Op::Delete, true),
            (Op::Update, false),
            (Op::Update, true)
        ]
    );
    assert_eq!(rows[1].row_id, rows[2].row_id);
    assert_eq!(sim.open_transaction_names(), ["b"]);
    assert_eq!(sim.open_transactions().unwrap().len(), 1);
    assert_eq!(sim.committed_rows("APP", "T").unwrap().len(), 1);
}

#[test]
fn undo_of_a_change_before_the_window_has_the_sequenceless_xid() {
    let mut sim = simulator(&[
        T,
        r#"{"tx":"t","savepoint":"s"}"#,
        r#"{"tx":"t","insert":"APP.T","values":{"ID":1,"V":1}}"#,
        r#"{"advance_seconds":1}"#,
        r#"{"tx":"t","rollback_to":"s"}"#,
    ]);
    let insert_scn = FIRST_SCN + 3;
    let undo_in = |rows: &[LogMinerRow]| rows.iter().find(|r| r.rollback).cloned().unwrap();
    let same_window = mine_from(&mut sim, FIRST_SCN, &["APP.T"]);
    let later_window = mine_from(&mut sim, insert_scn + 1, &["APP.T"]);
    let original = same_window[0].xid;
    assert_eq!(undo_in(&same_window).xid, original);
    let sequenceless = undo_in(&later_window).xid;
    assert_eq!(sequenceless.sequence(), SEQUENCELESS_XIDSQN);
    assert!(sequenceless.same_slot(&original));
    assert!(
        later_window
            .iter()
            .all(|r| r.operation != Op::Start || r.xid != original)
    );
}

#[test]
fn full_rollback_writes_undo_rows_then_the_rollback_row() {
    let mut sim = simulator(&[
        T,
        r#"{"tx":"t","insert":"APP.T","values":{"ID":1,"V":1}}"#,
        r#"{"tx":"t","update":"APP.T","where":{"ID":1},"set":{"V":2}}"#,
        r#"{"tx":"t","rollback":true}"#,
    ]);
    let rows = mine(&mut sim, &["APP.T"]);
    assert_eq!(
        ops(&rows),
        [
            (Op::Start, false),
            (Op::Insert, false),
            (Op::Update, false),
            (Op::Update, true),
            (Op::Delete, true),
            (Op::Rollback, false)
        ]
    );
    assert_eq!(redo(&rows[5]), "rollback;");
    assert_eq!(rows[5].seg_owner, None);
    assert!(sim.committed_rows("APP", "T").unwrap().is_empty());
    assert!(sim.open_transactions().unwrap().is_empty());
}

#[test]
fn killed_session_writes_no_end_row_and_disappears() {
    let mut sim = simulator(&[
        T,
        r#"{"tx":"t","insert":"APP.T","values":{"ID":1,"V":1}}"#,
        r#"{"tx":"u","insert":"APP.T","values":{"ID":2,"V":1}}"#,
    ]);
    assert_eq!(sim.sessions().unwrap().len(), 2);
    let t_session = sim.transactions["t"].session;
    sim.apply_line(r#"{"tx":"t","kill":true}"#).unwrap();
    let rows = mine(&mut sim, &["APP.T"]);
    let t_xid = rows[0].xid;
    assert!(
        rows.iter()
            .filter(|r| r.xid == t_xid)
            .all(|r| matches!(r.operation, Op::Start | Op::Insert))
    );
    assert!(!sim.sessions().unwrap().contains(&t_session));
    assert_eq!(sim.open_transactions().unwrap().len(), 1);
    assert_ne!(sim.open_transactions().unwrap()[0].xid, t_xid);
    assert!(sim.apply_line(r#"{"tx":"t","commit":true}"#).is_err());
}

const DOCS: &str = r#"{"table":"ADMIN.T","columns":[{"name":"ID","type":"NUMBER(8)","key":true},{"name":"C","type":"CLOB"},{"name":"B","type":"BLOB"}],"logging":"pk"}"#;

#[test]
fn lob_insert_is_empty_lob_then_the_content_corpus_9_and_11() {
    let mut sim = simulator(&[
        DOCS,
        r#"{"tx":"t","insert":"ADMIN.T","values":{"ID":1,"C":"a","B":"556e69"}}"#,
    ]);
    let rows = mine(&mut sim, &["ADMIN.T"]);
    assert_eq!(
        redo(&rows[1]),
        r#"insert into "ADMIN"."T"("ID","C","B") values ('1',EMPTY_CLOB(),EMPTY_BLOB());"#
    );
    assert_eq!(&*rows[1].row_id, PLACEHOLDER_ROW_ID);
    let row_id = &rows[2].row_id;
    assert_ne!(&**row_id, PLACEHOLDER_ROW_ID);
    assert_eq!(
        redo(&rows[2]),
        format!(r#"update "ADMIN"."T" set "C" = 'a' where "ID" = '1' and ROWID = '{row_id}';"#)
    );
    assert_eq!(
        redo(&rows[3]),
        format!(
            r#"update "ADMIN"."T" set "B" = HEXTORAW('556e69') where "ID" = '1' and ROWID = '{row_id}';"#
        )
    );
}

#[test]
fn large_lobs_and_lob_steps_write_locator_write_trim_and_erase_rows() {
    let mut sim = simulator(&[DOCS]);
    let big = "z".repeat(7000);
    sim.apply_line(&format!(
        r#"{{"tx":"t","insert":"ADMIN.T","values":{{"ID":4,"C":"{big}"}}}}"#
    ))
    .unwrap();
    sim.apply_line(
        r#"{"tx":"t","lob_write":"ADMIN.T","where":{"ID":4},"column":"C","offset":3,"data":"ab"}"#,
    )
    .unwrap();
    sim.apply_line(r#"{"tx":"t","lob_trim":"ADMIN.T","where":{"ID":4},"column":"C","length":10}"#)
        .unwrap();
    sim.apply_line(
        r#"{"tx":"t","lob_erase":"ADMIN.T","where":{"ID":4},"column":"C","offset":2,"amount":3}"#,
    )
    .unwrap();
    sim.apply_line(r#"{"tx":"t","commit":true}"#).unwrap();
    let rows = mine(&mut sim, &["ADMIN.T"]);
    let codes: Vec<u16> = rows.iter().map(|r| r.operation.code()).collect();
    assert_eq!(codes, [6, 1, 9, 10, 10, 10, 9, 10, 9, 11, 9, 29, 7]);
    assert_eq!(
        redo(&rows[2]),
        "DECLARE \n loc_c CLOB; \n buf_c VARCHAR2(6156); \n loc_b BLOB; \n buf_b RAW(6156); \n loc_nc NCLOB; \n buf_nc NVARCHAR2(6156); \nBEGIN\n select \"C\" into loc_c from \"ADMIN\".\"T\" where \"ID\" = '4' for update;"
    );
    assert!(rows[3].csf, "a 6000-character piece continues in a CSF row");
    assert_eq!(
        redo(&rows[7]),
        " buf_c := 'ab'; \n  dbms_lob.write(loc_c, 2, 3, buf_c);"
    );
    assert_eq!(redo(&rows[9]), "dbms_lob.trim(loc_c, 10);");
    assert_eq!(redo(&rows[11]), "dbms_lob.erase(loc_c, 3, 2);");
    let row_id = sim.committed_rows("ADMIN", "T").unwrap()[0].0.clone();
    assert!(rows[2..12].iter().all(|r| *r.row_id == *row_id));
    match parse_lob(redo(&rows[7])).unwrap() {
        LobStatement::Write(write) => assert_eq!((write.amount, write.offset), (2, 3)),
        other => panic!("{other:?}"),
    }
    let state = sim.committed_rows("ADMIN", "T").unwrap();
    assert_eq!(state[0].1[1], Value::Text("z   zzzzzz".to_owned()));
}

#[test]
fn lob_positions_count_utf16_code_units_outside_the_bmp() {
    // DBMS_LOB counts a CLOB in 2-byte units: each emoji below is two of them.
    let mut sim = simulator(&[
        DOCS,
        r#"{"tx":"s","insert":"ADMIN.T","values":{"ID":5,"C":"abcdefghij"}}"#,
        r#"{"tx":"s","commit":true}"#,
        r#"{"tx":"t","lob_write":"ADMIN.T","where":{"ID":5},"column":"C","offset":1,"data":"😀😀😀😀"}"#,
        r#"{"tx":"t","lob_trim":"ADMIN.T","where":{"ID":5},"column":"C","length":4}"#,
    ]);
    let state = sim.committed_rows("ADMIN", "T").unwrap();
    assert_eq!(state[0].1[1], Value::Text("abcdefghij".to_owned()));
    sim.apply_line(
        r#"{"tx":"t","lob_write":"ADMIN.T","where":{"ID":5},"column":"C","offset":5,"data":"xy"}"#,
    )
    .unwrap();
    sim.apply_line(r#"{"tx":"t","commit":true}"#).unwrap();
    let state = sim.committed_rows("ADMIN", "T").unwrap();
    assert_eq!(state[0].1[1], Value::Text("😀😀xy".to_owned()));

    // The capture's builder, started from the committed value, reads the redo to the same value.
    let rows = mine(&mut sim, &["ADMIN.T"]);
    let known = Value::Text("abcdefghij".to_owned());
    let mut lob = LobBuilder::new(LobFlavor::Character, Some(&known));
    let mut logged = Vec::new();
    for row in rows.iter().filter(|r| r.xid == rows.last().unwrap().xid) {
        match parse_lob(redo(row)) {
            Ok(LobStatement::Write(write)) => {
                logged.push(("write", write.amount, write.offset));
                let LobData::Text(text) = &write.data else {
                    panic!("{write:?}")
                };
                lob.write_text(text, write.offset).unwrap();
            }
            Ok(LobStatement::Trim { new_length, .. }) => {
                logged.push(("trim", new_length, 0));
                lob.trim(new_length);
            }
            _ => {}
        }
    }
    assert_eq!(logged, [("write", 8, 1), ("trim", 4, 0), ("write", 2, 5)]);
    assert_eq!(lob.finish().unwrap(), Value::Text("😀😀xy".to_owned()));
}

#[test]
fn ddl_rows_and_the_new_shape_of_later_rows() {
    let mut sim = simulator(&[
        T,
        r#"{"ddl":"ALTER TABLE APP.T ADD (PRIORITY NUMBER(1))"}"#,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":1,"PRIORITY":2}}"#,
        r#"{"tx":"a","commit":true}"#,
        r#"{"ddl":"alter table APP.T drop column V"}"#,
        r#"{"truncate":"APP.T"}"#,
    ]);
    let rows = mine(&mut sim, &["APP.T"]);
    assert_eq!(
        ops(&rows)[..3],
        [(Op::Start, false), (Op::Ddl, false), (Op::Commit, false)]
    );
    let ddl = &rows[1];
    assert_eq!(redo(ddl), "ALTER TABLE APP.T ADD (PRIORITY NUMBER(1));");
    assert_eq!(&*ddl.row_id, DDL_ROW_ID);
    assert_eq!(ddl.info.as_deref(), Some("USER DDL (PlSql=0 RecDep=0)"));
    assert_eq!(
        (ddl.seg_owner.as_deref(), ddl.table_name.as_deref()),
        (Some("APP"), Some("T"))
    );
    assert_eq!(ddl.sql_undo, None);
    // Written after the ADD, mined after the DROP COLUMN: by number, with the internal bytes of
    // NUMBER 1, 1 and 2 (exponent byte c1, one base-100 digit plus one).
    assert_eq!(
        redo(&rows[4]),
        r#"insert into "UNKNOWN"."OBJ# 73001"("COL 1","COL 2","COL 3") values (HEXTORAW('c102'),HEXTORAW('c102'),HEXTORAW('c103'));"#
    );
    assert_eq!(
        (rows[4].status, rows[4].info.as_deref(), rows[4].object_id),
        (2, Some("Dictionary Mismatch"), Some(73_001))
    );
    let truncate = rows.iter().rev().find(|r| r.operation == Op::Ddl).unwrap();
    assert_eq!(redo(truncate), "TRUNCATE TABLE APP.T;");
    assert_eq!(
        parse_ddl(redo(truncate)).unwrap().kind,
        DdlKind::TruncateTable
    );
    let columns: Vec<String> = sim
        .schema("APP", "T")
        .unwrap()
        .columns()
        .iter()
        .map(|c| c.name.clone())
        .collect();
    assert_eq!(columns, ["ID", "PRIORITY"]);
    assert!(sim.committed_rows("APP", "T").unwrap().is_empty());
    sim.apply_line(r#"{"ddl":"CREATE TABLE APP.NEW (ID NUMBER(8) PRIMARY KEY, C CLOB)"}"#)
        .unwrap();
    assert_eq!(sim.schema("APP", "NEW").unwrap().key_indexes(), [0]);
}

#[test]
fn unsupported_and_internal_rows() {
    let mut sim = simulator(&[
        T,
        r#"{"unsupported":"APP.T"}"#,
        r#"{"internal":"APP.T","start":true}"#,
    ]);
    let rows = mine(&mut sim, &["APP.T"]);
    assert_eq!(
        rows.iter().map(|r| r.operation.code()).collect::<Vec<_>>(),
        [6, 255, 7, 6, 0]
    );
    assert_eq!(redo(&rows[1]), "Unsupported");
    assert!(rows[3].xid.is_zero() && rows[4].xid.is_zero());
    assert!(!rows[0].xid.is_zero());
}

#[test]
fn comment_lines_are_skipped_and_still_count_as_lines() {
    let mut sim = Simulator::new();
    for line in [
        "# a fixture's description — reported: somewhere",
        T,
        "   # indented comment",
        "",
        r#"{"tx":"a","insert":"APP.T","values":{"ID":1}}"#,
        r#"{"tx":"a","commit":true}"#,
    ] {
        sim.apply_line(line).unwrap();
    }
    assert_eq!(sim.committed_rows("APP", "T").unwrap().len(), 1);
    // Line numbers count comments: the bad step is line 8.
    sim.apply_line("# one more comment").unwrap();
    let error = sim.apply_line(r#"{"tx":"b","commit":true}"#).unwrap_err();
    assert_eq!(error.line, 8, "{error}");
    // A `#` after other text is not a comment.
    assert!(sim.apply_line(r#"{"checkpoint":true} # no"#).is_err());
}

/// A BC date renders as LogMiner writes it under the session's SYYYY format, and reads back.
#[test]
fn bc_dates_render_with_their_sign() {
    use crate::dictionary::OracleType;
    let date = OracleType::parse("DATE").unwrap();
    let mut out = String::new();
    super::render::write_value(
        &mut out,
        &crate::value::Value::Date(jiff::civil::datetime(-43, 3, 15, 12, 0, 0, 0)),
        &date,
    );
    assert_eq!(
        out,
        "TO_DATE('-0044-03-15 12:00:00', 'SYYYY-MM-DD HH24:MI:SS')"
    );
}

#[test]
fn extended_strings_need_max_string_size_extended_and_are_logged_as_32k_rows() {
    let table = r#"{"table":"APP.NOTES","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"TXT","type":"VARCHAR2(32767)"}]}"#;
    let mut sim = Simulator::new();
    let error = sim.apply_line(table).unwrap_err();
    assert!(error.to_string().contains("ORA-00910"), "{error}");

    let mut sim = simulator(&[r#"{"database":{"max_string_size":"EXTENDED"}}"#, table]);
    let big = "x".repeat(9000);
    sim.apply_line(&format!(
        r#"{{"tx":"t","insert":"APP.NOTES","values":{{"ID":7,"TXT":"{big}"}}}}"#
    ))
    .unwrap();
    sim.apply_line(r#"{"tx":"t","insert":"APP.NOTES","values":{"ID":8,"TXT":"short"}}"#)
        .unwrap();
    sim.apply_line(r#"{"tx":"t","commit":true}"#).unwrap();
    // CSF parts joined: a long SQL_REDO or SQL_UNDO spans rows.
    let mut rows: Vec<LogMinerRow> = Vec::new();
    let mut redo = String::new();
    for mut row in mine(&mut sim, &["APP.NOTES"]) {
        redo.push_str(row.sql_redo.as_deref().unwrap_or(""));
        if row.csf || row.table_name.is_none() {
            continue;
        }
        row.sql_redo = Some(std::mem::take(&mut redo));
        rows.push(row);
    }
    let ops: Vec<Op> = rows.iter().map(|r| r.operation).collect();
    assert_eq!(
        ops,
        [
            Op::Insert,
            Op::ExtendedStringBegin,
            Op::ExtendedStringWrite,
            Op::ExtendedStringWrite,
            Op::ExtendedStringWrite,
            Op::ExtendedStringEnd,
            Op::Insert,
        ]
    );
    // The DML row has the placeholder ROWID and NULL in the column's place; the 32K rows the
    // row's real ROWID.
    assert_eq!(&*rows[0].row_id, PLACEHOLDER_ROW_ID);
    assert!(
        rows[0]
            .sql_redo
            .as_deref()
            .unwrap()
            .ends_with("values ('7',NULL);")
    );
    assert_ne!(&*rows[1].row_id, PLACEHOLDER_ROW_ID);
    assert!(rows[1..6].iter().all(|r| r.row_id == rows[1].row_id));
    assert!(rows[6].sql_redo.as_deref().unwrap().contains("'short'"));
}

/// The dictionary at mining time names the rows: a rename gives rows written before it the new
/// name, a drop into the recycle bin its `BIN$` name, a purge the number form; the object number
/// is kept throughout, and a window asking for the object finds them whatever their name.
#[test]
fn rows_are_named_with_the_dictionary_at_mining_time() {
    let mut sim = simulator(&[
        T,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":5}}"#,
        r#"{"tx":"a","commit":true}"#,
        r#"{"ddl":"ALTER TABLE APP.T RENAME TO T2"}"#,
    ]);
    let object = crate::source::DatabaseCatalog::table(&mut sim, "APP", "T2")
        .unwrap()
        .schema
        .object()
        .unwrap()
        .object_id;
    let insert = |rows: &[LogMinerRow]| {
        rows.iter()
            .find(|r| r.operation == Op::Insert)
            .cloned()
            .unwrap()
    };
    // Asked for by the old name only: the row is not found by name any more.
    assert!(
        mine(&mut sim, &["APP.T"])
            .iter()
            .all(|r| r.operation != Op::Insert)
    );
    let renamed = insert(&mine(&mut sim, &["APP.T2"]));
    assert_eq!(
        (renamed.seg_owner.as_deref(), renamed.table_name.as_deref()),
        (Some("APP"), Some("T2"))
    );
    assert_eq!(
        redo(&renamed),
        r#"insert into "APP"."T2"("ID","V") values ('1','5');"#
    );
    assert_eq!((renamed.status, renamed.object_id), (0, Some(object)));
    // By object number, whatever the name.
    let end = sim.current_scn().unwrap();
    sim.flush_redo().unwrap();
    let by_object = |sim: &mut Simulator| {
        let plan = sim.logs_covering(FIRST_SCN).unwrap();
        sim.start_mining(&MiningWindow {
            start_scn: FIRST_SCN,
            end_scn: end,
            logs: plan.logs,
            objects: vec![object],
            tables: Vec::new(),
            pdb: None,
            with_sql_undo: false,
        })
        .unwrap();
        let mut rows = Vec::new();
        sim.stream_rows(&mut |row| {
            rows.push(row);
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
        sim.end_mining().unwrap();
        insert(&rows)
    };
    assert_eq!(by_object(&mut sim).table_name.as_deref(), Some("T2"));
    sim.apply_line(r#"{"ddl":"DROP TABLE APP.T2"}"#).unwrap();
    let binned = by_object(&mut sim);
    assert!(
        binned
            .table_name
            .as_deref()
            .is_some_and(|n| n.starts_with("BIN$")),
        "{binned:?}"
    );
    assert!(redo(&binned).starts_with("insert into \"APP\".\"BIN$"));
    // Purged from the recycle bin (the model purges at the DROP): by number.
    let mut sim = simulator(&[
        T,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":5}}"#,
        r#"{"tx":"a","commit":true}"#,
    ]);
    let object = crate::source::DatabaseCatalog::table(&mut sim, "APP", "T")
        .unwrap()
        .schema
        .object()
        .unwrap()
        .object_id;
    sim.apply_line(r#"{"ddl":"DROP TABLE APP.T PURGE"}"#)
        .unwrap();
    let purged = insert(&mine(&mut sim, &["APP.T"]));
    assert_eq!(
        (
            purged.seg_owner.as_deref(),
            purged.status,
            purged.info.as_deref()
        ),
        (Some("UNKNOWN"), 2, Some("Dictionary Mismatch"))
    );
    assert_eq!(
        redo(&purged),
        format!(
            r#"insert into "UNKNOWN"."OBJ# {object}"("COL 1","COL 2") values (HEXTORAW('c102'),HEXTORAW('c106'));"#
        )
    );
}

/// A renamed column keeps its values: a later change logs them under the new name.
#[test]
fn a_renamed_column_keeps_its_values() {
    let mut sim = simulator(&[
        T,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":5}}"#,
        r#"{"tx":"a","commit":true}"#,
        r#"{"ddl":"ALTER TABLE APP.T RENAME COLUMN V TO W"}"#,
        r#"{"tx":"b","delete":"APP.T","where":{"ID":1}}"#,
        r#"{"tx":"b","commit":true}"#,
    ]);
    let rows = mine(&mut sim, &["APP.T"]);
    let delete = rows.iter().find(|r| r.operation == Op::Delete).unwrap();
    assert!(
        redo(delete).starts_with(r#"delete from "APP"."T" where "ID" = '1' and "W" = '5'"#),
        "{}",
        redo(delete)
    );
}
