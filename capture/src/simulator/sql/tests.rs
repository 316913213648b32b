//! The two doors of the simulator agree: every boundary call answered through the real client
//! over [`SimulatorPool`] (the client's SQL, evaluated; its row mapping) equals the simulator's
//! own answer, on every scenario of the field corpus and the examples. And every statement the
//! client sends is evaluated, not matched.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use super::*;
use crate::simulator::Simulator;
use crate::source::oracle::{ConnectOptions, OracleClient, SessionPool, SqlSession};
use crate::source::{
    DatabaseCatalog, FlashbackReader, LogMinerRow, MiningWindow, RedoMiner, SourceError,
    oracle::Bind, oracle::Fetch,
};

fn options(pdb: Option<&str>) -> ConnectOptions {
    ConnectOptions {
        username: "REDOLINE".to_owned(),
        password: "unused".to_owned(),
        connect_string: "simulator:1521/SIMULATOR".to_owned(),
        max_connections: 4,
        statement_timeout: None,
        pdb: pdb.map(str::to_owned),
        flush_table: "LOG_MINING_FLUSH".to_owned(),
    }
}

/// The real client over the SQL door of `simulator`.
pub fn client(simulator: Simulator) -> OracleClient<SimulatorPool> {
    let pdb = simulator.catalog.pdb.as_deref().map(str::to_owned);
    OracleClient::over(SimulatorPool::new(simulator), options(pdb.as_deref()))
        .expect("the client connects through the SQL door")
}

fn scenarios() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join("tests/fixtures/field"))
        .expect("the field corpus")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    paths.push(root.join("../examples/orders.jsonl"));
    paths.sort();
    paths
}

/// Where a window's rows come from: one door's `stream_rows`.
type RowSource<'a> =
    dyn FnMut(&mut dyn FnMut(LogMinerRow) -> ControlFlow<()>) -> Result<u64, SourceError> + 'a;

fn rows(source: &mut RowSource<'_>) -> Result<Vec<LogMinerRow>, SourceError> {
    let mut rows = Vec::new();
    source(&mut |row| {
        rows.push(row);
        ControlFlow::Continue(())
    })?;
    Ok(rows)
}

/// A table as the dictionary can describe it: a length declared without BYTE or CHAR is
/// stored with the database's default semantics, BYTE (`CHAR_USED = 'B'`), so the dictionary
/// never says "default".
fn comparable(table: crate::source::CatalogTable) -> String {
    let schema = &table.schema;
    format!(
        "{}.{} {:?} {:?} {:?}",
        schema.schema(),
        schema.table(),
        schema.columns(),
        table.log_groups,
        table.key
    )
    .replace("semantics: Default", "semantics: Byte")
}

/// Whether the model reads every column of `table` in a flashback query: time zones,
/// intervals, binary floats and XMLTYPE are not modelled yet.
fn read_back_by_the_model(table: &crate::dictionary::TableSchema) -> bool {
    use crate::dictionary::OracleType as T;
    table.columns().iter().all(|column| {
        !matches!(
            column.data_type,
            T::BinaryFloat
                | T::BinaryDouble
                | T::TimestampWithTimeZone { .. }
                | T::TimestampWithLocalTimeZone { .. }
                | T::IntervalYearToMonth { .. }
                | T::IntervalDayToSecond { .. }
                | T::XmlType
        )
    })
}

/// Whether two boundary errors are the same kind of error (messages differ: one is Oracle's).
fn same_kind(a: &SourceError, b: &SourceError) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// Each call answers the same through the real client as through the model directly, both
/// without error; a difference names the context and the call.
macro_rules! agree {
    ($client:ident, $direct:ident, $context:expr; $($call:ident($($arg:expr),*)),+) => {
        $(assert_eq!(
            $client.$call($($arg),*).unwrap(),
            $direct.$call($($arg),*).unwrap(),
            "{}: {}",
            $context,
            stringify!($call)
        );)+
    };
}

#[test]
fn every_scenario_reads_the_same_through_the_real_client_as_through_the_simulator() {
    let mut compared = 0;
    let mut flashback_rows = 0;
    let mut scenarios_read = 0;
    for path in scenarios() {
        scenarios_read += 1;
        let name = path.display().to_string();
        let Ok(mut direct) = Simulator::from_scenario_file(&path) else {
            continue;
        };
        let through_sql = Simulator::from_scenario_file(&path).expect(&name);
        let mut client = client(through_sql);
        agree!(client, direct, name;
            database(), threads(), open_transactions(), sessions(), privileges());
        let tables = direct.list_tables().unwrap();
        assert_eq!(client.list_tables().unwrap(), tables, "{name}");
        for (owner, table) in &tables {
            assert_eq!(
                comparable(client.table(owner, table).unwrap()),
                comparable(direct.table(owner, table).unwrap()),
                "{name}: {owner}.{table}"
            );
            agree!(client, direct, name; row_estimate(owner, table));
        }
        // Snapshot reads as of the current SCN, whole and in pages of two rows.
        let scn = direct.current_scn().unwrap();
        for (owner, table) in &tables {
            let schema = direct.schema(owner, table).expect(&name);
            let whole = direct.flashback_batch(&schema, scn, None, None, usize::MAX);
            let Ok(whole) = whole else {
                continue;
            };
            if !read_back_by_the_model(&schema) {
                continue;
            }
            let mut paged = Vec::new();
            loop {
                let after = paged
                    .last()
                    .map(|row: &crate::source::FlashbackRow| row.position.clone());
                let page = client
                    .flashback_batch(&schema, scn, after.as_deref(), None, 2)
                    .unwrap_or_else(|error| panic!("{name}: {owner}.{table}: {error}"));
                let last = page.len() < 2;
                paged.extend(page);
                if last {
                    break;
                }
            }
            flashback_rows += paged.len();
            assert_eq!(paged, whole, "{name}: {owner}.{table} as of {scn}");
            // And in chunks of a block: the same ranges from the extents either way, and
            // together the same rows.
            let ranges = client
                .table_chunks(&schema, 1)
                .unwrap_or_else(|error| panic!("{name}: {owner}.{table}: {error}"));
            assert_eq!(ranges, direct.table_chunks(&schema, 1).unwrap(), "{name}");
            let mut chunked = Vec::new();
            for range in &ranges {
                let rows = client.flashback_range(&schema, scn, range, None).unwrap();
                assert_eq!(
                    rows,
                    direct.flashback_range(&schema, scn, range, None).unwrap(),
                    "{name}: {owner}.{table} {range:?}"
                );
                chunked.extend(rows);
            }
            assert_eq!(
                chunked, whole,
                "{name}: {owner}.{table} in chunks as of {scn}"
            );
        }
        let current = direct.current_scn().unwrap();
        assert_eq!(client.current_scn().unwrap(), current, "{name}");
        for scn in [crate::simulator::database::FIRST_SCN, current] {
            agree!(client, direct, format!("{name}: SCN {scn}"); scn_to_timestamp(scn));
        }
        agree!(client, direct, name; database_utc_offset(), storage_settings());
        // One window over the whole redo, as the capture's first window would be.
        // The listing has no ORDER BY: the planner orders the logs.
        let sorted = |mut logs: Vec<crate::source::RedoLog>| {
            logs.sort_by(|a, b| {
                (a.thread, a.sequence, &a.name).cmp(&(b.thread, b.sequence, &b.name))
            });
            logs
        };
        let logs = direct.redo_logs(0).unwrap();
        assert_eq!(
            sorted(client.redo_logs(0).unwrap()),
            sorted(logs.clone()),
            "{name}"
        );
        let start_scn = logs
            .iter()
            .map(|log| log.first_scn)
            .min()
            .unwrap_or(current);
        let pdb = direct.catalog.pdb.as_deref().map(str::to_owned);
        let plan = direct.logs_covering(start_scn);
        let window = MiningWindow {
            start_scn,
            end_scn: current,
            logs: plan
                .as_ref()
                .map(|plan| plan.logs.clone())
                .unwrap_or_default(),
            objects: Vec::new(),
            tables: tables.clone(),
            pdb,
            with_sql_undo: false,
        };
        let expected = direct
            .start_mining(&window)
            .and_then(|()| rows(&mut |visit| direct.stream_rows(visit)));
        let found = client
            .start_mining(&window)
            .and_then(|()| rows(&mut |visit| client.stream_rows(visit)));
        match (found, expected) {
            (Ok(found), Ok(expected)) => {
                compared += expected.len();
                assert_eq!(found, expected, "{name}");
            }
            (Err(found), Err(expected)) => {
                assert!(same_kind(&found, &expected), "{name}: {found} / {expected}");
            }
            (found, expected) => panic!("{name}: through SQL {found:?}, directly {expected:?}"),
        }
        client.end_mining().unwrap();
    }
    assert!(
        scenarios_read >= 25 && compared >= 500 && flashback_rows >= 50,
        "{scenarios_read} scenarios, {compared} rows mined, {flashback_rows} rows read as of an SCN"
    );
}

/// The review's N1: an open transaction in the captured PDB must be readable through the real
/// client. Selecting `RAWTOHEX(XID)` answers 16 hex digits in the host's byte order, which the
/// mapping refused, and every start of the capture failed on it.
/// A table without a primary key takes its key from a unique index on NOT NULL columns, the
/// first by name; the client finds it in the model's ALL_INDEXES / ALL_IND_COLUMNS and
/// ALL_TAB_COLS.NULLABLE as the simulator's own door does.
#[test]
fn a_unique_index_on_not_null_columns_is_the_key_of_a_table_without_a_primary_key() {
    use crate::source::TableKey;
    let scenario = r#"{"table":"APP.ONE","columns":[{"name":"CODE","type":"VARCHAR2(8)","nullable":false},{"name":"NOTE","type":"VARCHAR2(8)"}],"unique":[{"name":"UK_ONE","columns":["CODE"]}],"logging":"pk"}
{"table":"APP.TWO","columns":[{"name":"A","type":"NUMBER(4)","nullable":false},{"name":"B","type":"NUMBER(4)","nullable":false},{"name":"C","type":"NUMBER(4)","nullable":false}],"unique":[{"name":"UK_TWO_C","columns":["C"]},{"name":"UK_TWO_AB","columns":["B","A"]}],"logging":"all"}
{"table":"APP.NULLABLE","columns":[{"name":"EMAIL","type":"VARCHAR2(8)"}],"unique":[{"name":"UK_EMAIL","columns":["EMAIL"]}],"logging":"all"}
{"table":"APP.BOTH","columns":[{"name":"ID","type":"NUMBER(4)","key":true},{"name":"CODE","type":"VARCHAR2(8)","nullable":false}],"unique":[{"name":"UK_BOTH","columns":["CODE"]}],"logging":"all"}
"#;
    let mut direct = Simulator::from_reader(scenario.as_bytes()).unwrap();
    let mut client = client(Simulator::from_reader(scenario.as_bytes()).unwrap());
    let key = |table: &crate::source::CatalogTable| -> Vec<String> {
        table.schema.key_columns().map(|c| c.name.clone()).collect()
    };
    for (table, columns, source) in [
        (
            "ONE",
            vec!["CODE"],
            TableKey::Unique {
                index: "UK_ONE".to_owned(),
                candidates: 1,
            },
        ),
        (
            "TWO",
            vec!["B", "A"],
            TableKey::Unique {
                index: "UK_TWO_AB".to_owned(),
                candidates: 2,
            },
        ),
        ("NULLABLE", vec![], TableKey::None),
        ("BOTH", vec!["ID"], TableKey::Primary),
    ] {
        let through_sql = client.table("APP", table).unwrap();
        assert_eq!(key(&through_sql), columns, "{table}");
        assert_eq!(through_sql.key, source, "{table}");
        assert_eq!(
            comparable(through_sql),
            comparable(direct.table("APP", table).unwrap()),
            "{table}"
        );
    }
}

#[test]
fn an_open_transaction_is_read_through_the_real_client() {
    let scenario = "{\"database\":{\"pdb\":\"ORCLPDB1\",\"con_id\":3}}\n\
        {\"table\":\"APP.T\",\"columns\":[{\"name\":\"ID\",\"type\":\"NUMBER(10)\",\"key\":true}]}\n\
        {\"tx\":\"open\",\"insert\":\"APP.T\",\"values\":{\"ID\":1}}\n";
    let mut direct = Simulator::from_reader(scenario.as_bytes()).unwrap();
    let expected = direct.open_transactions().unwrap();
    assert_eq!(expected.len(), 1);
    let mut client = client(Simulator::from_reader(scenario.as_bytes()).unwrap());
    assert_eq!(client.open_transactions().unwrap(), expected);
    // What the old statement answered: the RAW in little-endian order.
    let pool = SimulatorPool::new(Simulator::from_reader(scenario.as_bytes()).unwrap());
    let mut session = pool.get("").unwrap();
    let mut answered = Vec::new();
    session
        .query(
            "SELECT RAWTOHEX(XID) FROM GV$TRANSACTION",
            &[],
            Fetch::default(),
            &mut |cells| {
                answered.push(cells);
                ControlFlow::Continue(())
            },
        )
        .unwrap();
    let xid = expected[0].xid;
    let mut raw = Vec::new();
    raw.extend_from_slice(&xid.usn().to_le_bytes());
    raw.extend_from_slice(&xid.slot().to_le_bytes());
    raw.extend_from_slice(&xid.sequence().to_le_bytes());
    assert_eq!(
        answered,
        [vec![crate::source::oracle::Cell::Text(
            crate::value::binary::encode_hex(&raw).to_ascii_uppercase()
        )]]
    );
}

/// The model answers from the statement as written: a column a view does not have is
/// ORA-00904, a view it does not know ORA-00942, a statement it cannot evaluate ORA-00900, and
/// binds are checked against the placeholders.
#[test]
fn statements_are_evaluated_not_matched() {
    let pool = SimulatorPool::new(Simulator::new());
    let mut session = pool.get("").unwrap();
    let mut code = |sql: &str, binds: &[Bind<'_>]| {
        session
            .query(sql, binds, Fetch::default(), &mut |_| {
                ControlFlow::Continue(())
            })
            .err()
            .and_then(|failure| failure.ora)
    };
    // V$TRANSACTION's slot column is XIDSLOT; XIDSLT is LogMiner's.
    assert_eq!(
        code("SELECT XIDUSN || '.' || XIDSLT FROM V$TRANSACTION", &[]),
        Some(904)
    );
    assert_eq!(
        code("SELECT XIDUSN || '.' || XIDSLOT FROM V$TRANSACTION", &[]),
        None
    );
    assert_eq!(code("SELECT X FROM V$NOTHING", &[]), Some(942));
    assert_eq!(
        code("SELECT CURRENT_SCN FROM V$DATABASE WHERE DBID = :1", &[]),
        Some(1008)
    );
    assert_eq!(
        code("SELECT CURRENT_SCN FROM V$DATABASE", &[Bind::Number(1)]),
        Some(1036)
    );
    assert_eq!(
        code("SELECT CURRENT_SCN FROM V$DATABASE CONNECT BY 1 = 1", &[]),
        Some(900)
    );
    assert_eq!(
        code("SELECT MIN(THREAD#), STATUS FROM V$THREAD", &[]),
        Some(979)
    );
    assert_eq!(
        code("SELECT TO_CHAR(CURRENT_SCN, '999') FROM V$DATABASE", &[]),
        Some(1481)
    );
    assert_eq!(code("SELECT NO_SUCH_FUNCTION(1) FROM DUAL", &[]), Some(904));
}

/// How many rows `statement` returns on `session`; a failure panics naming the statement.
fn row_count(session: &mut SimulatorSession, statement: &str, binds: &[Bind<'_>]) -> usize {
    let mut count = 0;
    session
        .query(statement, binds, Fetch::default(), &mut |_| {
            count += 1;
            ControlFlow::Continue(())
        })
        .unwrap_or_else(|failure| panic!("{statement}: {failure:?}"));
    count
}

/// Every statement constant of `sql.rs` that reads (the LogMiner calls and the flush table's
/// statements run in the capture tests) parses and evaluates in the model, with its binds.
#[test]
fn every_read_of_the_client_is_evaluated_by_the_model() {
    use crate::source::oracle::sql;
    let scenario = "{\"database\":{\"pdb\":\"ORCLPDB1\",\"con_id\":3}}\n\
        {\"table\":\"APP.T\",\"columns\":[{\"name\":\"ID\",\"type\":\"NUMBER(10)\",\"key\":true}],\"logging\":\"all\"}\n\
        {\"tx\":\"open\",\"insert\":\"APP.T\",\"values\":{\"ID\":1}}\n";
    let pool = SimulatorPool::new(Simulator::from_reader(scenario.as_bytes()).unwrap());
    let mut session = pool.get("").unwrap();
    let owner_table = [Bind::Text("APP"), Bind::Text("T")];
    let reads: &[(&str, &[Bind<'_>], usize)] = &[
        (sql::DATABASE, &[], 1),
        (sql::TOPOLOGY, &[], 1),
        (sql::CONTAINERS, &[], 3),
        (sql::CURRENT_SCN, &[], 1),
        (sql::PDB_INCARNATION, &[Bind::Text("ORCLPDB1")], 1),
        (sql::THREADS, &[], 1),
        (sql::REDO_LOGS, &[Bind::Number(0), Bind::Number(0)], 1),
        (sql::OPEN_TRANSACTIONS, &[], 1),
        (sql::OPEN_TRANSACTIONS_LOCAL, &[], 1),
        (sql::OPEN_TRANSACTIONS_IN_CONTAINER, &[Bind::Number(3)], 1),
        (
            sql::OPEN_TRANSACTIONS_LOCAL_IN_CONTAINER,
            &[Bind::Number(3)],
            1,
        ),
        (sql::SESSIONS, &[], 1),
        (sql::SESSIONS_LOCAL, &[], 1),
        (sql::SCN_TO_TIMESTAMP, &[Bind::Number(1_000_000)], 1),
        (sql::DATABASE_UTC_OFFSET, &[], 1),
        (sql::CHARACTER_SETS, &[], 2),
        (sql::DATABASE_TIME_ZONE, &[], 1),
        (sql::SESSION_PRIVILEGES, &[], 8),
        (sql::SESSION_ROLES, &[], 2),
        (sql::PACKAGE_PRIVILEGES, &[], 0),
        (sql::DEFAULT_TABLESPACE, &[], 1),
    ];
    for (statement, binds, expected_rows) in reads {
        assert_eq!(
            row_count(&mut session, statement, binds),
            *expected_rows,
            "{statement}"
        );
    }
    // The dictionary reads run in the PDB, which holds the table.
    session
        .execute("ALTER SESSION SET CONTAINER = ORCLPDB1", &[])
        .unwrap();
    for (statement, expected_rows) in [
        (sql::TABLE_COLUMNS, 1),
        (sql::TABLE_OBJECT, 1),
        (sql::PRIMARY_KEY, 1),
        (sql::LOG_GROUPS, 1),
        (sql::ROW_ESTIMATE, 1),
        (sql::TABLE_STATISTICS, 1),
        (sql::TABLE_EXTENTS, 1),
        (sql::TABLE_ORGANIZATION, 1),
        (sql::LIST_TABLES, 1),
    ] {
        let binds: &[Bind<'_>] = if statement == sql::LIST_TABLES {
            &[]
        } else {
            &owner_table
        };
        assert_eq!(
            row_count(&mut session, statement, binds),
            expected_rows,
            "{statement}"
        );
    }
}

/// The full statements among `sql.rs`'s constants (`SELECT ...` and PL/SQL blocks; the other
/// constants are fragments of built statements), as `(name, text)`, read from the source so a
/// statement added there is found here without anyone listing it.
fn statement_constants() -> Vec<(String, String)> {
    let source = include_str!("../../source/oracle/sql.rs");
    let mut found = Vec::new();
    for (at, _) in source.match_indices("pub const ") {
        let rest = &source[at + "pub const ".len()..];
        let Some((name, rest)) = rest.split_once(": &str =") else {
            continue;
        };
        let Some(open) = rest.find('"') else {
            continue;
        };
        let body = &rest[open + 1..];
        let Some(close) = body.find("\";") else {
            continue;
        };
        // Undo the `\` line continuations of the Rust literal.
        let mut text = String::new();
        let mut lines = body[..close].split("\\\n");
        if let Some(first) = lines.next() {
            text.push_str(first);
        }
        for line in lines {
            text.push_str(line.trim_start());
        }
        if text.starts_with("SELECT ") || text.starts_with("BEGIN ") {
            found.push((name.trim().to_owned(), text));
        }
    }
    found
}

/// Every statement constant of the client reaches the model through the client's own calls
/// (the fallbacks for users without GV$ grants included), and the model evaluated each one: a
/// statement the model could only match, or one no call sends, fails here by name.
#[test]
fn every_statement_of_the_client_is_sent_to_the_model_by_the_client() {
    let constants = statement_constants();
    assert!(
        constants.len() >= 25,
        "{} statements read from sql.rs",
        constants.len()
    );
    let table = "{\"table\":\"APP.T\",\"columns\":[{\"name\":\"ID\",\"type\":\"NUMBER(10)\",\"key\":true}],\"logging\":\"all\"}\n\
        {\"table\":\"APP.U\",\"columns\":[{\"name\":\"CODE\",\"type\":\"VARCHAR2(8)\",\"nullable\":false}],\"unique\":[{\"name\":\"UK_U\",\"columns\":[\"CODE\"]}],\"logging\":\"pk\"}\n\
        {\"tx\":\"done\",\"insert\":\"APP.T\",\"values\":{\"ID\":1}}\n{\"tx\":\"done\",\"commit\":true}\n\
        {\"log_switch\":true}\n\
        {\"tx\":\"open\",\"insert\":\"APP.T\",\"values\":{\"ID\":2}}\n";
    let cdb = format!("{{\"database\":{{\"pdb\":\"ORCLPDB1\",\"con_id\":3}}}}\n{table}");
    let without_gv = format!(
        "{{\"database\":{{\"ungranted_views\":[\"GV$TRANSACTION\",\"GV$SESSION\"]}}}}\n{table}"
    );
    let cdb_without_gv = format!(
        "{{\"database\":{{\"pdb\":\"ORCLPDB1\",\"con_id\":3,\"ungranted_views\":[\"GV$TRANSACTION\"]}}}}\n{table}"
    );
    let mut issued = Vec::new();
    for (scenario, pdb) in [
        (cdb_without_gv.as_str(), Some("ORCLPDB1")),
        (cdb.as_str(), Some("ORCLPDB1")),
        (table, None),
        (without_gv.as_str(), None),
    ] {
        let simulator = Simulator::from_reader(scenario.as_bytes()).unwrap();
        let pool = SimulatorPool::new(simulator);
        let mut client = OracleClient::over(pool.clone(), options(pdb)).unwrap();
        client.database().unwrap();
        client.current_scn().unwrap();
        client.database_utc_offset().unwrap();
        client.storage_settings().unwrap();
        if let Some(pdb) = pdb {
            client.pdb_incarnation(pdb).unwrap();
        }
        client.threads().unwrap();
        client.open_transactions().unwrap();
        client.sessions().unwrap();
        client.scn_to_timestamp(1_000_000).unwrap();
        client.privileges().unwrap();
        let tables = client.list_tables().unwrap();
        let schema = client.table("APP", "T").unwrap().schema;
        // A table without a primary key: its unique indexes are read.
        client.table("APP", "U").unwrap();
        client.row_estimate("APP", "T").unwrap();
        let scn = client.current_scn().unwrap();
        client
            .flashback_batch(&schema, scn, None, None, 10)
            .unwrap();
        for range in client.table_chunks(&schema, 1).unwrap() {
            client.flashback_range(&schema, scn, &range, None).unwrap();
        }
        let plan = client.logs_covering(1_000_000).unwrap();
        let window = MiningWindow {
            start_scn: 1_000_000,
            end_scn: scn,
            logs: plan.logs,
            objects: Vec::new(),
            tables,
            pdb: pdb.map(str::to_owned),
            with_sql_undo: false,
        };
        client.start_mining(&window).unwrap();
        let rows = rows(&mut |visit| client.stream_rows(visit)).unwrap();
        assert!(rows.len() >= 3, "{} rows mined", rows.len());
        let memory = client.mining_session_memory().unwrap().unwrap();
        assert!(memory.pga_max_bytes >= memory.pga_bytes && memory.pga_bytes > 0);
        client.end_mining().unwrap();
        client.flush_redo().unwrap();
        issued.extend(pool.issued());
    }
    let missing: Vec<&str> = constants
        .iter()
        .filter(|(_, text)| !issued.contains(text))
        .map(|(name, _)| name.as_str())
        .collect();
    assert!(
        missing.is_empty(),
        "statements the client never sent to the model: {missing:?}"
    );
}

/// Oracle's limit on expression lists (SQL Language Reference, Expression Lists): an IN list
/// holds at most 1000 expressions, a list of sets any number of sets of at most 1000 each; one
/// more is ORA-01795, refused at parse whether or not a row is read.
#[test]
fn an_in_list_of_more_than_a_thousand_expressions_is_refused() {
    let pool = SimulatorPool::new(Simulator::new());
    let mut session = pool.get("").unwrap();
    let mut count = |sql: &str| {
        let mut rows = 0;
        session
            .query(sql, &[], Fetch::default(), &mut |_| {
                rows += 1;
                ControlFlow::Continue(())
            })
            .map(|()| rows)
            .map_err(|failure| failure.ora)
    };
    let list = |n: usize| {
        (1..=n)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sets = |n: usize, width: usize| {
        (1..=n)
            .map(|i| format!("({})", vec![i.to_string(); width].join(", ")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let in_list = |n: usize| format!("SELECT DUMMY FROM DUAL WHERE 1000 IN ({})", list(n));
    assert_eq!(count(&in_list(1000)), Ok(1));
    assert_eq!(count(&in_list(1001)), Err(Some(1795)));
    let none = |n: usize| format!("SELECT DUMMY FROM DUAL WHERE 1 = 0 AND 5 IN ({})", list(n));
    assert_eq!(
        count(&none(1001)),
        Err(Some(1795)),
        "refused before any row"
    );
    let pairs = format!(
        "SELECT DUMMY FROM DUAL WHERE (2000, 2000) IN ({})",
        sets(2000, 2)
    );
    // The model does not evaluate a row-value IN (ORA-00900, as any statement it cannot
    // evaluate), but 2000 sets are not what refuses it.
    assert_ne!(count(&pairs), Err(Some(1795)), "any number of sets");
    let wide = format!("SELECT DUMMY FROM DUAL WHERE (1) IN ({})", sets(1, 1001));
    assert_eq!(count(&wide), Err(Some(1795)), "a set of 1001");
    assert_eq!(
        count(&format!(
            "SELECT DUMMY FROM DUAL WHERE 'X' IN (SELECT DUMMY FROM DUAL) AND 3 IN ({})",
            list(3)
        )),
        Ok(1)
    );
}

/// The contents query for 10, 200 and 2,000 captured tables, mined through the real client over
/// the SQL door: the rows are those of the captured table whatever the others, and every IN list
/// stays within Oracle's 1000. Prints the statement's length and binds and the time the model
/// took to parse and evaluate it (figures for docs/oracle.md, "Many tables"; never asserted),
/// beside the earlier shape, an `(SEG_OWNER = :a AND TABLE_NAME = :b)` pair per table.
#[test]
fn a_capture_of_two_thousand_tables_is_mined_through_one_statement() {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/orders.jsonl");
    let simulator = || {
        let file = std::fs::File::open(&scenario).unwrap();
        Simulator::from_reader(std::io::BufReader::new(file)).unwrap()
    };
    let mut direct = simulator();
    let current = direct.current_scn().unwrap();
    let logs = direct.logs_covering(0).unwrap().logs;
    let start_scn = logs.iter().map(|log| log.first_scn).min().unwrap();
    let window = |tables: Vec<(String, String)>, objects: Vec<u64>| MiningWindow {
        start_scn,
        end_scn: current,
        logs: logs.clone(),
        objects,
        tables,
        pdb: None,
        with_sql_undo: false,
    };
    let captured = vec![("SALES".to_owned(), "ORDERS".to_owned())];
    direct
        .start_mining(&window(captured.clone(), Vec::new()))
        .unwrap();
    let expected = rows(&mut |visit| direct.stream_rows(visit)).unwrap();
    assert!(
        expected
            .iter()
            .any(|row| row.table_name.as_deref() == Some("ORDERS"))
    );
    for n in [10, 200, 2_000] {
        // The captured table among n - 1 others of two owners; at 2,000, SALES has 1,500 tables,
        // more than one IN list may hold, which the model refuses (ORA-01795).
        let mut tables = captured.clone();
        tables.extend((1..n).map(|i| {
            let owner = if i % 4 == 0 { "HR" } else { "SALES" };
            (owner.to_owned(), format!("TABLE_{i:04}"))
        }));
        // An object number per table as well (none of the example's: no row changes).
        let objects: Vec<u64> = (0..n).map(|i| 900_000 + i as u64).collect();
        let (sql, binds) = crate::source::oracle::sql::contents_query(&tables, &objects, None);
        let mut client = client(simulator());
        client
            .start_mining(&window(tables.clone(), objects))
            .unwrap();
        let began = std::time::Instant::now();
        let found = rows(&mut |visit| client.stream_rows(visit)).unwrap();
        let took = began.elapsed();
        assert_eq!(found, expected, "{n} tables");
        client.end_mining().unwrap();
        let grouped: usize = crate::source::oracle::sql::captured_rows(&tables, 3, &mut Vec::new())
            .iter()
            .map(|condition| " OR ".len() + condition.len())
            .sum();
        let pairs: usize = (0..tables.len())
            .map(|i| {
                format!(
                    " OR (SEG_OWNER = :{} AND TABLE_NAME = :{})",
                    2 * i + 3,
                    2 * i + 4
                )
                .len()
            })
            .sum();
        println!(
            "{n:>5} tables: {:>6} characters, {:>5} binds, parsed and evaluated in {:>8.2?} \
             over {} rows (a pair per table: {} characters, {} binds)",
            sql.len(),
            binds.len() + 2,
            took,
            found.len(),
            sql.len() - grouped + pairs,
            2 * tables.len() + 2,
        );
    }
}

/// Thread 2 commits once, then its instance writes nothing while thread 1 commits on.
const QUIET_SECOND_INSTANCE: &str = "\
    {\"table\":\"APP.T\",\"columns\":[{\"name\":\"ID\",\"type\":\"NUMBER(10)\",\"key\":true}]}\n\
    {\"thread\":2}\n\
    {\"tx\":\"b\",\"insert\":\"APP.T\",\"values\":{\"ID\":1}}\n\
    {\"tx\":\"b\",\"commit\":true}\n\
    {\"thread\":1}\n\
    {\"tx\":\"a\",\"insert\":\"APP.T\",\"values\":{\"ID\":2}}\n\
    {\"tx\":\"a\",\"commit\":true}\n\
    {\"tx\":\"c\",\"insert\":\"APP.T\",\"values\":{\"ID\":3}}\n\
    {\"tx\":\"c\",\"commit\":true}\n";

/// The model's half: a flush commit writes the log buffer of the instance its session runs on,
/// and no other. A pooled session runs on instance 1; one opened on `orcl2` writes thread 2.
#[test]
fn a_flush_reaches_only_the_instance_its_session_runs_on() {
    let simulator = Simulator::from_reader(QUIET_SECOND_INSTANCE.as_bytes()).unwrap();
    let pool = SimulatorPool::new(simulator);
    let written = |pool: &SimulatorPool| {
        pool.with_simulator(|simulator| {
            let threads = simulator.threads().unwrap();
            (threads[0].last_redo_scn, threads[1].last_redo_scn)
        })
    };
    let flush = |session: &mut SimulatorSession| {
        session
            .execute(
                "CREATE TABLE LOG_MINING_FLUSH (LAST_SCN NUMBER(19,0) NOT NULL)",
                &[],
            )
            .ok();
        session
            .execute("INSERT INTO LOG_MINING_FLUSH (LAST_SCN) VALUES (0)", &[])
            .unwrap();
        session.commit().unwrap();
    };
    let (_, quiet) = written(&pool);
    flush(&mut pool.get("").unwrap());
    let (first, second) = written(&pool);
    assert_eq!(
        second, quiet,
        "a pooled session's flush leaves thread 2 as it was"
    );
    assert!(first > quiet);
    let mut on_two = pool
        .connect_instance("simulator:1521/SIMULATOR/orcl2")
        .unwrap();
    flush(&mut on_two);
    assert!(
        written(&pool).1 > first,
        "the flush on orcl2 writes thread 2"
    );
    for unknown in ["simulator:1521/SIMULATOR/orcl9", "simulator:1521/SIMULATOR"] {
        assert!(pool.connect_instance(unknown).is_err(), "{unknown}");
    }
}

/// RAC, a quiet instance. Windows end below the lowest `LAST_REDO_CHANGE#` of the open threads;
/// a flush that reached only the instance the pool connects to left thread 2 where its last
/// commit put it, and thread 1's later commits waited for thread 2's next log switch. The
/// client flushes every instance, each on a session of its own there, so the window reaches the
/// current SCN read before the flush: every commit is mined.
#[test]
fn a_quiet_instance_does_not_hold_back_the_other_instances_commits() {
    use crate::source::window::{Bound, Plan, WindowPlanner};
    let simulator = Simulator::from_reader(QUIET_SECOND_INSTANCE.as_bytes()).unwrap();
    let pool = SimulatorPool::new(simulator);
    let mut client = OracleClient::over(pool.clone(), options(None)).unwrap();
    let mut planner = WindowPlanner::new(500_000);
    let mut next_scn = crate::simulator::database::FIRST_SCN;
    let mut mined = Vec::new();
    // Two windows, as the capture's loop runs them: the current SCN, the flush, the threads.
    for _ in 0..2 {
        let current = client.current_scn().unwrap();
        client.flush_redo().unwrap();
        let threads = client.threads().unwrap();
        let (plan, _) = planner.plan(next_scn, current, &threads, jiff::Timestamp::UNIX_EPOCH);
        let Plan::Mine { window, bound } = plan else {
            panic!("nothing to mine below {current}: {threads:?}");
        };
        assert_eq!(bound, Bound::CurrentScn, "{threads:?}");
        let logs = client.logs_covering(window.start_scn).unwrap().logs;
        client
            .start_mining(&MiningWindow {
                start_scn: window.start_scn,
                end_scn: window.end_scn,
                logs,
                objects: Vec::new(),
                tables: vec![("APP".to_owned(), "T".to_owned())],
                pdb: None,
                with_sql_undo: false,
            })
            .unwrap();
        mined.extend(rows(&mut |visit| client.stream_rows(visit)).unwrap());
        client.end_mining().unwrap();
        next_scn = window.end_scn + 1;
    }
    let inserted: Vec<(u16, &str)> = mined
        .iter()
        .filter(|row| row.table_name.as_deref() == Some("T"))
        .map(|row| (row.thread, row.sql_redo.as_deref().unwrap_or_default()))
        .collect();
    assert_eq!(inserted.len(), 3, "{inserted:?}");
    assert!(inserted.iter().any(|(thread, _)| *thread == 2));
    let statements = pool.issued();
    assert_eq!(
        statements
            .iter()
            .filter(|sql| *sql == crate::source::oracle::sql::INSTANCES)
            .count(),
        1,
        "the instances are read once while the threads stay as they are"
    );
}

/// With too few connections for a session on each instance beside the capture's two, or a
/// connect string that cannot name an instance, the flush falls back to one pooled session (one
/// instance) and the quiet instance bounds the window again, as the warning says: never more
/// sessions than `maxConnections`, never a skipped change.
#[test]
fn without_room_for_a_session_per_instance_the_quiet_instance_bounds_the_window() {
    for (max_connections, connect_string) in [(3, "simulator:1521/SIMULATOR"), (4, "ORCL_HIGH")] {
        let simulator = Simulator::from_reader(QUIET_SECOND_INSTANCE.as_bytes()).unwrap();
        let pool = SimulatorPool::new(simulator);
        let mut options = options(None);
        options.max_connections = max_connections;
        options.connect_string = connect_string.to_owned();
        let mut client = OracleClient::over(pool.clone(), options).unwrap();
        let (plan, _, _) = plan_after_flush(&mut client);
        assert_bounded_by_thread_2(&plan, connect_string);
    }
}

/// The first window's plan as the engine makes it: the current SCN, the flush, then the
/// threads' written redo; with the threads and the SCN read.
fn plan_after_flush(
    client: &mut OracleClient<SimulatorPool>,
) -> (
    crate::source::window::Plan,
    Vec<crate::source::RedoThread>,
    u64,
) {
    let current = client.current_scn().unwrap();
    client.flush_redo().unwrap();
    let threads = client.threads().unwrap();
    let (plan, _) = crate::source::window::WindowPlanner::new(500_000).plan(
        crate::simulator::database::FIRST_SCN,
        current,
        &threads,
        jiff::Timestamp::UNIX_EPOCH,
    );
    (plan, threads, current)
}

/// The plan mines up to what the quiet second instance (thread 2) has written.
fn assert_bounded_by_thread_2(plan: &crate::source::window::Plan, context: &str) {
    use crate::source::window::{Bound, Plan};
    assert!(
        matches!(
            plan,
            Plan::Mine {
                bound: Bound::WrittenRedo { thread: 2 },
                ..
            }
        ),
        "{context}: {plan:?}"
    );
}

/// An instance the flush cannot reach (here the listener does not know the name `GV$INSTANCE`
/// gives, ORA-12521) costs a delay, not a stop: the other instance is flushed and the
/// unreachable one bounds the window. Only when no instance can be reached does the flush fail,
/// as a transient error the caller retries.
#[test]
fn an_instance_the_flush_cannot_reach_delays_capture_without_stopping_it() {
    let renamed = |unknown: &'static [&'static str]| {
        move |relation: &mut Relation| {
            let name = relation
                .columns
                .iter()
                .position(|column| column == "INSTANCE_NAME")
                .unwrap();
            for (row, new) in relation.rows.iter_mut().zip(unknown) {
                if !new.is_empty() {
                    row[name] = super::datum::Datum::text(*new);
                }
            }
        }
    };
    let simulator = Simulator::from_reader(QUIET_SECOND_INSTANCE.as_bytes()).unwrap();
    let pool = SimulatorPool::new(simulator);
    pool.alter_view("GV$INSTANCE", renamed(&["", "gone2"]));
    let mut client = OracleClient::over(pool.clone(), options(None)).unwrap();
    let (plan, threads, current) = plan_after_flush(&mut client);
    assert!(threads[0].last_redo_scn > current, "instance 1 was flushed");
    assert_bounded_by_thread_2(&plan, "gone2 unreachable");

    let simulator = Simulator::from_reader(QUIET_SECOND_INSTANCE.as_bytes()).unwrap();
    let pool = SimulatorPool::new(simulator);
    pool.alter_view("GV$INSTANCE", renamed(&["gone1", "gone2"]));
    let mut client = OracleClient::over(pool, options(None)).unwrap();
    let error = client.flush_redo().unwrap_err();
    assert!(error.is_transient(), "{error}");
}

/// The door follows DBMS_LOGMNR's rules, so a client that calls it out of order fails here:
/// START_LOGMNR without logs is ORA-01292, a log added twice ORA-01289; START_LOGMNR may be
/// called again in the same session over the logs already added (what the client does between
/// windows); ADD_LOGFILE with NEW ends the session (V$LOGMNR_CONTENTS is then ORA-01306); and
/// END_LOGMNR without a session is ORA-01307 (DBMS_LOGMNR, ADD_LOGFILE constants, START_LOGMNR).
#[test]
fn the_door_enforces_the_dbms_logmnr_sequence() {
    use crate::source::oracle::sql;
    let scenario = "{\"table\":\"APP.T\",\"columns\":[{\"name\":\"ID\",\"type\":\"NUMBER(10)\",\"key\":true}],\"logging\":\"all\"}\n\
        {\"tx\":\"a\",\"insert\":\"APP.T\",\"values\":{\"ID\":1}}\n{\"tx\":\"a\",\"commit\":true}\n";
    let pool = SimulatorPool::new(Simulator::from_reader(scenario.as_bytes()).unwrap());
    let (log, end_scn) = pool.with_simulator(|simulator| {
        let log = simulator.redo_logs(0).unwrap().remove(0);
        (log.name, simulator.current_scn().unwrap())
    });
    let mut session = pool.get("").unwrap();
    let mut execute = |statement: &str, binds: &[Bind<'_>]| {
        session
            .execute(statement, binds)
            .err()
            .and_then(|failure| failure.ora)
    };
    let range = [Bind::Number(1), Bind::Number(end_scn)];
    assert_eq!(execute(sql::START_LOGMNR, &range), Some(1292));
    assert_eq!(execute(sql::ADD_FIRST_LOGFILE, &[Bind::Text(&log)]), None);
    assert_eq!(execute(sql::ADD_LOGFILE, &[Bind::Text(&log)]), Some(1289));
    assert_eq!(execute(sql::START_LOGMNR, &range), None);
    assert_eq!(
        execute(sql::START_LOGMNR, &[Bind::Number(2), Bind::Number(end_scn)]),
        None
    );
    let contents = |session: &mut SimulatorSession| {
        session
            .query(
                "SELECT SCN FROM V$LOGMNR_CONTENTS",
                &[],
                Fetch::default(),
                &mut |_| ControlFlow::Continue(()),
            )
            .err()
            .and_then(|failure| failure.ora)
    };
    assert_eq!(contents(&mut session), None);
    let ended = session.execute(sql::ADD_FIRST_LOGFILE, &[Bind::Text(&log)]);
    assert!(ended.is_ok(), "{ended:?}");
    assert_eq!(contents(&mut session), Some(1306));
    let no_session = session
        .execute(sql::END_LOGMNR, &[])
        .err()
        .and_then(|f| f.ora);
    assert_eq!(no_session, Some(1307));
}

/// The scenario's character sets and DBTIMEZONE reach the capture through both doors, and the
/// host's time zone is not the database's.
#[test]
fn the_database_character_sets_and_time_zone_are_read_as_set() {
    let scenario = "{\"database\":{\"character_set\":\"WE8MSWIN1252\",\"national_character_set\":\"UTF8\",\"dbtimezone\":\"-05:00\",\"time_zone\":\"Europe/Berlin\"}}\n";
    let mut direct = Simulator::from_reader(scenario.as_bytes()).unwrap();
    let mut through_sql = client(Simulator::from_reader(scenario.as_bytes()).unwrap());
    let settings = through_sql.storage_settings().unwrap();
    assert_eq!(settings, direct.storage_settings().unwrap());
    assert_eq!(settings.character_set, "WE8MSWIN1252");
    assert_eq!(settings.national_character_set, "UTF8");
    assert_eq!(settings.database_time_zone, "-05:00");
    let formats = settings.formats().unwrap();
    assert_eq!(
        formats.character_set,
        crate::value::internal::CharacterSet::We8MsWin1252
    );
    assert_eq!(formats.database_time_zone.seconds(), -5 * 3600);
    // A set the decoders do not read is read all the same; only decoding refuses it.
    let scenario = "{\"database\":{\"character_set\":\"JA16SJIS\"}}\n";
    let mut other = client(Simulator::from_reader(scenario.as_bytes()).unwrap());
    let error = other.storage_settings().unwrap().formats().unwrap_err();
    assert!(error.to_string().contains("JA16SJIS"), "{error}");
    // Oracle allows only two national character sets.
    let refused = Simulator::from_reader(
        "{\"database\":{\"national_character_set\":\"AL32UTF8\"}}\n".as_bytes(),
    )
    .unwrap_err();
    assert!(
        refused.to_string().contains("national_character_set"),
        "{refused}"
    );
}

/// The client reads each table's object numbers and each column's segment column number from
/// ALL_OBJECTS and ALL_TAB_COLS as the simulator's boundary gives them; a dropped column
/// renumbers the columns after it, and the object numbers stay.
#[test]
fn object_and_segment_column_numbers_are_read_from_the_catalog() {
    let scenario = "{\"table\":\"APP.T\",\"columns\":[{\"name\":\"ID\",\"type\":\"NUMBER(10)\",\"key\":true},{\"name\":\"A\",\"type\":\"VARCHAR2(8)\"},{\"name\":\"B\",\"type\":\"DATE\"}],\"logging\":\"all\"}\n\
        {\"table\":\"APP.U\",\"columns\":[{\"name\":\"ID\",\"type\":\"NUMBER(10)\",\"key\":true}],\"logging\":\"all\"}\n";
    let mut direct = Simulator::from_reader(scenario.as_bytes()).unwrap();
    let mut through_sql = client(Simulator::from_reader(scenario.as_bytes()).unwrap());
    let read = through_sql.table("APP", "T").unwrap();
    let given = direct.table("APP", "T").unwrap();
    assert_eq!(read.schema.object(), given.schema.object());
    assert_eq!(comparable(read.clone()), comparable(given));
    let read = read.schema;
    let numbers: Vec<(&str, Option<u16>)> = read
        .columns()
        .iter()
        .map(|c| (c.name.as_str(), c.segment_column))
        .collect();
    assert_eq!(numbers, [("ID", Some(1)), ("A", Some(2)), ("B", Some(3))]);
    let object = read.object().expect("object numbers read");
    let other = through_sql
        .table("APP", "U")
        .unwrap()
        .schema
        .object()
        .unwrap();
    assert_ne!(object.object_id, other.object_id);
    assert_eq!(object.data_object_id, Some(object.object_id));
    assert_eq!(
        read.column_by_segment(3).map(|c| c.name.as_str()),
        Some("B")
    );

    let dropped = format!("{scenario}{{\"ddl\":\"ALTER TABLE APP.T DROP COLUMN A\"}}\n");
    let mut through_sql = client(Simulator::from_reader(dropped.as_bytes()).unwrap());
    let after = through_sql.table("APP", "T").unwrap().schema;
    assert_eq!(after.object(), Some(object));
    assert_eq!(
        after.column_by_segment(2).map(|c| c.name.as_str()),
        Some("B")
    );
    assert_eq!(after.column_by_segment(3), None);
}

/// With the online catalog LogMiner writes a row of a table altered since by number,
/// `"UNKNOWN"."OBJ# n"` (Utilities, "LogMiner Dictionary Options"); the simulator renders the
/// orders example's rows written before its ALTER that way, and the view is given three more
/// rows here. The real client's contents query keeps every row named by number, evaluated by the
/// model, and not another `UNKNOWN` row or an `OBJ#`-looking name of another owner.
#[test]
fn the_contents_query_keeps_rows_named_by_object_number() {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/orders.jsonl");
    let file = std::fs::File::open(&scenario).unwrap();
    let mut direct = Simulator::from_reader(std::io::BufReader::new(file)).unwrap();
    let current = direct.current_scn().unwrap();
    let logs = direct.logs_covering(0).unwrap().logs;
    let start_scn = logs.iter().map(|log| log.first_scn).min().unwrap();
    let pool = SimulatorPool::new(direct);
    pool.alter_view("V$LOGMNR_CONTENTS", |relation: &mut Relation| {
        let at = |name: &str| relation.columns.iter().position(|c| c == name).unwrap();
        let (owner, table, segment, status, redo, code) = (
            at("SEG_OWNER"),
            at("TABLE_NAME"),
            at("SEG_NAME"),
            at("STATUS"),
            at("SQL_REDO"),
            at("OPERATION_CODE"),
        );
        let insert = relation
            .rows
            .iter()
            .find(|row| row[code] == super::datum::Datum::number(1))
            .unwrap()
            .clone();
        for (seg_owner, name) in [
            ("UNKNOWN", "OBJ# 74103"),
            ("UNKNOWN", "SOMETHING_ELSE"),
            ("HR", "OBJ# 74104"),
        ] {
            let mut row = insert.clone();
            row[owner] = super::datum::Datum::text(seg_owner);
            row[table] = super::datum::Datum::text(name);
            row[segment] = super::datum::Datum::text(name);
            row[status] = super::datum::Datum::number(2);
            row[redo] = super::datum::Datum::text(format!(
                "insert into \"{seg_owner}\".\"{name}\"(\"COL 1\") values (HEXTORAW('c102'));"
            ));
            relation.rows.push(row);
        }
    });
    let mut client = OracleClient::over(pool, options(None)).unwrap();
    client
        .start_mining(&MiningWindow {
            start_scn,
            end_scn: current,
            logs,
            objects: Vec::new(),
            tables: vec![("SALES".to_owned(), "ORDERS".to_owned())],
            pdb: None,
            with_sql_undo: false,
        })
        .unwrap();
    let found = rows(&mut |visit| client.stream_rows(visit)).unwrap();
    let numbered: Vec<_> = found
        .iter()
        .filter(|row| row.seg_owner.as_deref() != Some("SALES") && row.table_name.is_some())
        .map(|row| {
            (
                row.seg_owner.as_deref(),
                row.table_name.as_deref(),
                row.status,
            )
        })
        .collect();
    assert!(numbered.contains(&(Some("UNKNOWN"), Some("OBJ# 74103"), 2)));
    assert!(numbered.len() > 1, "the example's own rows by number");
    for (owner, name, status) in numbered {
        assert_eq!((owner, status), (Some("UNKNOWN"), 2));
        assert!(
            name.is_some_and(|name| name.starts_with("OBJ# ")),
            "{name:?}"
        );
    }
}

/// A table of 2,500 rows over four extents (8-block extents of 100-row blocks, from block 128,
/// rows from block 131), some deleted and some changed after the read's SCN: read in chunks of
/// about 150 rows (two blocks by its statistics) through the real client, whose extent query
/// and `ROWID_CREATE` calls the model evaluates, it gives every row once, as a whole read does.
/// A wrong column (FILE_ID for RELATIVE_FNO, OBJECT_ID for DATA_OBJECT_ID), a wrong
/// `ROWID_CREATE` argument or an off-by-one end block loses or repeats rows here.
#[test]
fn a_table_read_in_rowid_chunks_through_the_client_equals_a_whole_read() {
    let mut lines = vec![
        r#"{"table":"APP.BIG","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"V","type":"VARCHAR2(20)"}],"logging":"all"}"#.to_owned(),
    ];
    for id in 0..2_500 {
        lines.push(format!(
            r#"{{"tx":"t{}","insert":"APP.BIG","values":{{"ID":{id},"V":"v{id}"}}}}"#,
            id / 500
        ));
        if id % 500 == 499 {
            lines.push(format!(r#"{{"tx":"t{}","commit":true}}"#, id / 500));
        }
    }
    for id in (0..2_500).step_by(7) {
        lines.push(format!(
            r#"{{"tx":"d","delete":"APP.BIG","where":{{"ID":{id}}}}}"#
        ));
    }
    lines.push(r#"{"tx":"d","commit":true}"#.to_owned());
    // The read's SCN: the same in every simulator made from these lines.
    let scn = Simulator::from_reader(lines.join("\n").as_bytes())
        .unwrap()
        .current_scn()
        .unwrap();
    for id in (1..2_500).step_by(11).filter(|id| id % 7 != 0) {
        lines.push(format!(
            r#"{{"tx":"u","update":"APP.BIG","where":{{"ID":{id}}},"set":{{"V":"later"}}}}"#
        ));
    }
    lines.push(r#"{"tx":"u","commit":true}"#.to_owned());
    let mut direct = Simulator::from_reader(lines.join("\n").as_bytes()).unwrap();
    let schema = direct.schema("APP", "BIG").unwrap();
    let whole = direct
        .flashback_batch(&schema, scn, None, None, usize::MAX)
        .unwrap();
    assert_eq!(whole.len(), 2_500 - (0..2_500).step_by(7).count());
    let mut client = client(Simulator::from_reader(lines.join("\n").as_bytes()).unwrap());
    for rows_per_chunk in [1, 150, 1_000, 100_000] {
        let ranges = client.table_chunks(&schema, rows_per_chunk).unwrap();
        assert_eq!(
            ranges,
            direct.table_chunks(&schema, rows_per_chunk).unwrap(),
            "{rows_per_chunk}"
        );
        let mut chunked = Vec::new();
        for range in &ranges {
            chunked.extend(client.flashback_range(&schema, scn, range, None).unwrap());
        }
        assert_eq!(chunked, whole, "{rows_per_chunk} rows per chunk");
        let blocks = match rows_per_chunk {
            1 => 1,
            150 => 2,
            1_000 => 12,
            _ => 128 + 8,
        };
        // 25 blocks of rows in extents of 8 from block 128: blocks 128..160; 86 rows per
        // block by the statistics (2,143 rows in 25 blocks).
        assert_eq!(ranges.len(), 32_usize.div_ceil(blocks), "{rows_per_chunk}");
    }
    // A condition narrows each chunk.
    let ranges = client.table_chunks(&schema, 150).unwrap();
    let mut above = Vec::new();
    for range in &ranges {
        above.extend(
            client
                .flashback_range(&schema, scn, range, Some("ID > 1000"))
                .unwrap_or_else(|error| panic!("{error}")),
        );
    }
    assert_eq!(
        above.len(),
        whole.len() - 1_001 + (0..=1_000).step_by(7).count()
    );
}

/// `DBMS_ROWID.ROWID_CREATE` as the model evaluates it: the extended format, and a wrong
/// argument is a different ROWID.
#[test]
fn rowid_create_builds_extended_rowids() {
    let pool = SimulatorPool::new(Simulator::from_reader(&b""[..]).unwrap());
    let mut session = pool.get("").unwrap();
    let mut found = Vec::new();
    session
        .query(
            crate::source::oracle::sql::CHUNK_ROW_IDS,
            &[
                Bind::Number(73_545),
                Bind::Number(7),
                Bind::Number(133),
                Bind::Number(73_545),
                Bind::Number(7),
                Bind::Number(140),
            ],
            Fetch::default(),
            &mut |cells| {
                found.push(cells);
                ControlFlow::Continue(())
            },
        )
        .unwrap();
    let text = |cell: &crate::source::oracle::Cell| cell.clone().into_text();
    assert_eq!(found.len(), 1);
    assert_eq!(text(&found[0][0]).as_deref(), Some("AAAR9JAAHAAAACFAAA"));
    assert_eq!(text(&found[0][1]).as_deref(), Some("AAAR9JAAHAAAACMH//"));
}

/// The archived logs' completion times and ages reach the client through the real listing SQL,
/// evaluated over `V$ARCHIVED_LOG` rows whose FIRST_TIME, NEXT_TIME and COMPLETION_TIME are DATEs
/// in the host's zone: a log closed at 00:00:10 (Berlin, UTC+1 in January) is archived two
/// seconds later, and listed an hour and a half after that its age is that long, whatever the
/// zone. Reading NEXT_TIME or FIRST_TIME instead, or the capture's clock instead of SYSDATE,
/// gives other figures. The hours left follow from the same listing.
#[test]
fn archived_log_completion_times_and_ages_are_read_through_the_real_client() {
    use crate::source::RedoLogKind;
    use crate::source::archive_retention::{self, Needed};
    use jiff::{SignedDuration, civil};
    let scenario = "{\"database\":{\"time_zone\":\"Europe/Berlin\"}}\n\
        {\"table\":\"APP.T\",\"columns\":[{\"name\":\"ID\",\"type\":\"NUMBER(10)\",\"key\":true}],\"logging\":\"all\"}\n\
        {\"advance_seconds\":10}\n{\"log_switch\":true}\n\
        {\"advance_seconds\":3600}\n{\"tx\":\"a\",\"insert\":\"APP.T\",\"values\":{\"ID\":1}}\n\
        {\"tx\":\"a\",\"commit\":true}\n{\"log_switch\":true}\n\
        {\"advance_seconds\":1800}\n";
    let mut direct = Simulator::from_reader(scenario.as_bytes()).unwrap();
    let mut through_sql = client(Simulator::from_reader(scenario.as_bytes()).unwrap());
    let mut listed = through_sql.redo_logs(0).unwrap();
    listed.sort_by_key(|log| (log.sequence, log.kind));
    let mut modelled = direct.redo_logs(0).unwrap();
    modelled.sort_by_key(|log| (log.sequence, log.kind));
    assert_eq!(listed, modelled);
    let archived: Vec<(u32, civil::DateTime, SignedDuration)> = listed
        .iter()
        .filter(|log| log.kind == RedoLogKind::Archived)
        .map(|log| {
            let completion = log
                .completion
                .expect("an archived log has a completion time");
            (log.sequence, completion.time, completion.age)
        })
        .collect();
    // FIRST_TIME (2024-01-02 00:00 UTC) is 01:00 in Berlin.
    assert_eq!(
        archived,
        [
            (
                1,
                civil::date(2024, 1, 2).at(1, 0, 12, 0),
                SignedDuration::from_secs(3600 + 1800 - 2)
            ),
            (
                2,
                civil::date(2024, 1, 2).at(2, 0, 12, 0),
                SignedDuration::from_secs(1800 - 2)
            ),
        ]
    );
    assert!(
        listed
            .iter()
            .filter(|log| log.kind == RedoLogKind::Online)
            .all(|log| log.completion.is_none())
    );
    // A restart in sequence 1 needs it: 24 h of retention leave 24 - 1.5 h (and 2 s).
    let threads = through_sql.threads().unwrap();
    let first = listed[0].first_scn;
    let needed = archive_retention::needed(&threads, &listed, 0, first).unwrap();
    assert!(
        matches!(needed, Needed::Archived(log) if log.sequence == 1),
        "{needed:?}"
    );
    let left =
        archive_retention::hours_left(needed, SignedDuration::from_hours(24), SignedDuration::ZERO);
    assert!((left - (22.5 + 2.0 / 3600.0)).abs() < 1e-9, "{left}");
}
