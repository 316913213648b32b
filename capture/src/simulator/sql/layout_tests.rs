//! Partitioned and index-organised tables read in chunks through the real client: its extent,
//! `ROWID_CREATE`, key-boundary and read statements evaluated against the model's segments,
//! chunk by chunk, equal a whole read.

use std::ops::ControlFlow;
use std::sync::Arc;

use super::SimulatorPool;
use super::tests::client;
use crate::dictionary::TableSchema;
use crate::simulator::Simulator;
use crate::source::oracle::{Bind, Fetch, SessionPool, SqlSession};
use crate::source::{DatabaseCatalog, FlashbackReader, FlashbackRow, RowRange, chunks};

/// Scenario lines: `table` declared, `count` rows inserted in an order that interleaves the
/// partitions (ids `id(n)`), every 7th deleted; the SCN after that, and the lines with later
/// updates, which a read as of that SCN must not see.
fn scenario(table: &str, count: u64, id: impl Fn(u64) -> String) -> (Vec<String>, u64) {
    let mut lines = vec![table.to_owned()];
    for n in 0..count {
        lines.push(format!(
            r#"{{"tx":"t{}","insert":"APP.T","values":{}}}"#,
            n / 400,
            id(n)
        ));
        if n % 400 == 399 || n + 1 == count {
            lines.push(format!(r#"{{"tx":"t{}","commit":true}}"#, n / 400));
        }
    }
    for n in (0..count).step_by(7) {
        lines.push(format!(
            r#"{{"tx":"d","delete":"APP.T","where":{}}}"#,
            id(n)
        ));
    }
    lines.push(r#"{"tx":"d","commit":true}"#.to_owned());
    let scn = Simulator::from_reader(lines.join("\n").as_bytes())
        .unwrap()
        .current_scn()
        .unwrap();
    for n in (1..count).step_by(11).filter(|n| n % 7 != 0) {
        lines.push(format!(
            r#"{{"tx":"u","update":"APP.T","where":{},"set":{{"V":"later"}}}}"#,
            id(n)
        ));
    }
    lines.push(r#"{"tx":"u","commit":true}"#.to_owned());
    (lines, scn)
}

/// The model of `lines` read directly, not through the SQL door: the model, the structure of
/// `APP.T`, and its rows as of `scn` (the current SCN when `None`).
fn read_directly(
    lines: &[String],
    scn: Option<u64>,
) -> (Simulator, Arc<TableSchema>, Vec<FlashbackRow>) {
    let mut direct = Simulator::from_reader(lines.join("\n").as_bytes()).unwrap();
    let schema = direct.schema("APP", "T").unwrap();
    let scn = scn.unwrap_or_else(|| direct.current_scn().unwrap());
    let rows = direct
        .flashback_batch(&schema, scn, None, None, usize::MAX)
        .unwrap();
    (direct, schema, rows)
}

/// Rows of a statement through the SQL door, as text.
fn query(pool: &SimulatorPool, sql: &str, binds: &[Bind<'_>]) -> Vec<Vec<Option<String>>> {
    let mut session = pool.get("").unwrap();
    let mut found = Vec::new();
    session
        .query(sql, binds, Fetch::default(), &mut |cells| {
            found.push(cells.into_iter().map(|c| c.into_text()).collect());
            ControlFlow::Continue(())
        })
        .unwrap_or_else(|error| panic!("{sql}: {error:?}"));
    found
}

/// The partitioned table of the tests: ranges below 1000, 2000, 3000 (left empty) and
/// MAXVALUE, rows placed round-robin over the three others.
const PARTITIONED: &str = r#"{"table":"APP.T","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"V","type":"VARCHAR2(20)"}],"logging":"all","range":{"column":"ID","partitions":[{"name":"P1","below":1000},{"name":"P2","below":2000},{"name":"P3","below":3000},{"name":"PMAX"}]}}"#;

fn partitioned_id(n: u64) -> String {
    let id = match n % 3 {
        0 => n / 3,
        1 => 1_000 + n / 3,
        _ => 5_000 + n / 3,
    };
    format!(r#"{{"ID":{id},"V":"v{id}"}}"#)
}

/// The same partitions, each divided by range on G (range-range composite partitioning):
/// every partition's rows in subpartitions, the empty partition's one subpartition empty too.
const SUBPARTITIONED: &str = r#"{"table":"APP.T","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"V","type":"VARCHAR2(20)"},{"name":"G","type":"NUMBER(3)"}],"logging":"all","range":{"column":"ID","subcolumn":"G","partitions":[{"name":"P1","below":1000,"subpartitions":[{"name":"P1_LO","below":5},{"name":"P1_HI"}]},{"name":"P2","below":2000,"subpartitions":[{"name":"P2_ALL"}]},{"name":"P3","below":3000,"subpartitions":[{"name":"P3_ALL"}]},{"name":"PMAX","subpartitions":[{"name":"PMAX_LO","below":3},{"name":"PMAX_MID","below":6},{"name":"PMAX_HI"}]}]}}"#;

fn subpartitioned_id(n: u64) -> String {
    let id = match n % 3 {
        0 => n / 3,
        1 => 1_000 + n / 3,
        _ => 5_000 + n / 3,
    };
    format!(r#"{{"ID":{id},"V":"v{id}","G":{}}}"#, n % 10)
}

/// A subpartition is a segment of its own (`TABLE SUBPARTITION`, its name in PARTITION_NAME);
/// its partition is an object without a segment. Each row's ROWID carries its subpartition's
/// data object id.
#[test]
fn subpartitions_are_segments_and_their_partitions_are_not() {
    let (lines, _) = scenario(SUBPARTITIONED, 2_400, subpartitioned_id);
    let pool = SimulatorPool::new(Simulator::from_reader(lines.join("\n").as_bytes()).unwrap());
    let objects = query(
        &pool,
        "SELECT SUBOBJECT_NAME, OBJECT_TYPE, DATA_OBJECT_ID FROM DBA_OBJECTS \
         WHERE OWNER = 'APP' AND OBJECT_NAME = 'T' AND SUBOBJECT_NAME IS NOT NULL \
         ORDER BY OBJECT_ID",
        &[],
    );
    let kinds: Vec<(&str, &str, bool)> = objects
        .iter()
        .map(|row| {
            (
                row[0].as_deref().unwrap(),
                row[1].as_deref().unwrap(),
                row[2].is_some(),
            )
        })
        .collect();
    let (p, s) = ("TABLE PARTITION", "TABLE SUBPARTITION");
    assert_eq!(
        kinds,
        [
            ("P1", p, false),
            ("P1_LO", s, true),
            ("P1_HI", s, true),
            ("P2", p, false),
            ("P2_ALL", s, true),
            ("P3", p, false),
            ("P3_ALL", s, true),
            ("PMAX", p, false),
            ("PMAX_LO", s, true),
            ("PMAX_MID", s, true),
            ("PMAX_HI", s, true),
        ]
    );
    let extents = query(
        &pool,
        "SELECT PARTITION_NAME, SEGMENT_TYPE FROM DBA_EXTENTS \
         WHERE OWNER = 'APP' AND SEGMENT_NAME = 'T' GROUP BY PARTITION_NAME, SEGMENT_TYPE \
         ORDER BY PARTITION_NAME",
        &[],
    );
    let names: Vec<_> = extents
        .iter()
        .map(|row| row[0].as_deref().unwrap())
        .collect();
    assert_eq!(
        names,
        ["P1_HI", "P1_LO", "P2_ALL", "PMAX_HI", "PMAX_LO", "PMAX_MID"]
    );
    assert!(extents.iter().all(|row| row[1].as_deref() == Some(s)));
    let object_of = |name: &str| -> u64 {
        let row = objects.iter().find(|row| row[0].as_deref() == Some(name));
        row.and_then(|row| row[2].as_deref())
            .unwrap()
            .parse()
            .unwrap()
    };
    let (_, _, rows) = read_directly(&lines, None);
    for row in rows {
        let (object, ..) = chunks::row_id_parts(&row.position).unwrap();
        let number = |index| -> i64 { row.values.get(index).unwrap().to_string().parse().unwrap() };
        let subpartition = match (number(0), number(2)) {
            (..1_000, ..5) => "P1_LO",
            (..1_000, _) => "P1_HI",
            (1_000..2_000, _) => "P2_ALL",
            (_, ..3) => "PMAX_LO",
            (_, 3..6) => "PMAX_MID",
            _ => "PMAX_HI",
        };
        assert_eq!(object, object_of(subpartition), "{:?}", row.values);
    }
}

/// Each partition is a segment of its own, as DBA_EXTENTS and DBA_OBJECTS show it, its rows'
/// ROWIDs carry its data object id, and the empty partition has no extents.
#[test]
fn partitions_are_segments_with_their_own_data_object_ids() {
    let (lines, _) = scenario(PARTITIONED, 2_400, partitioned_id);
    let pool = SimulatorPool::new(Simulator::from_reader(lines.join("\n").as_bytes()).unwrap());
    let objects = query(
        &pool,
        "SELECT SUBOBJECT_NAME, OBJECT_TYPE, DATA_OBJECT_ID FROM DBA_OBJECTS \
         WHERE OWNER = 'APP' AND OBJECT_NAME = 'T' ORDER BY OBJECT_ID",
        &[],
    );
    let text = |s: &str| Some(s.to_owned());
    assert_eq!(objects.len(), 5, "{objects:?}");
    assert_eq!(objects[0][..2], [None, text("TABLE")]);
    assert_eq!(objects[0][2], None, "a partitioned table has no segment");
    let partitions: Vec<(Option<String>, u64)> = objects[1..]
        .iter()
        .map(|row| {
            assert_eq!(row[1], text("TABLE PARTITION"));
            (row[0].clone(), row[2].as_deref().unwrap().parse().unwrap())
        })
        .collect();
    let names: Vec<_> = partitions.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(names, [text("P1"), text("P2"), text("P3"), text("PMAX")]);
    let extents = query(
        &pool,
        "SELECT PARTITION_NAME, SEGMENT_TYPE, COUNT(*) FROM DBA_EXTENTS \
         WHERE OWNER = 'APP' AND SEGMENT_NAME = 'T' GROUP BY PARTITION_NAME, SEGMENT_TYPE \
         ORDER BY PARTITION_NAME",
        &[],
    );
    // 800 rows a partition: 8 blocks of 100 rows from block 131, two 8-block extents.
    assert_eq!(
        extents,
        [
            vec![text("P1"), text("TABLE PARTITION"), text("2")],
            vec![text("P2"), text("TABLE PARTITION"), text("2")],
            vec![text("PMAX"), text("TABLE PARTITION"), text("2")],
        ]
    );
    let (_, _, rows) = read_directly(&lines, None);
    for row in rows {
        let (object, ..) = chunks::row_id_parts(&row.position).unwrap();
        let id: i64 = row.values.get(0).unwrap().to_string().parse().unwrap();
        let partition = match id {
            ..1_000 => 0,
            1_000..2_000 => 1,
            2_000..3_000 => 2,
            _ => 3,
        };
        assert_eq!(object, partitions[partition].1, "row {id}");
    }
}

/// Rows of chunked reads of `range`s through `read`, in order.
fn chunked(
    ranges: &[RowRange],
    read: impl FnMut(&RowRange) -> Vec<FlashbackRow>,
) -> Vec<FlashbackRow> {
    ranges.iter().flat_map(read).collect()
}

/// A partitioned table read in chunks of ROWID ranges through the real client gives every row
/// once, as a whole read does, at several chunk sizes; no chunk spans two partitions. A wrong
/// data object (the table's, not the partition's) or a dropped partition join would lose rows.
#[test]
fn a_partitioned_table_read_in_rowid_chunks_through_the_client_equals_a_whole_read() {
    chunked_equals_whole(PARTITIONED, &partitioned_id, 3);
}

/// The same with subpartitions: six of them hold rows, and no chunk spans two.
#[test]
fn a_subpartitioned_table_read_in_rowid_chunks_through_the_client_equals_a_whole_read() {
    chunked_equals_whole(SUBPARTITIONED, &subpartitioned_id, 6);
}

/// A table declared by `table` read whole and in chunks through the client and the model's
/// own reader, `segments` of its segments holding rows.
fn chunked_equals_whole(table: &str, id: &dyn Fn(u64) -> String, segments: usize) {
    let (lines, scn) = scenario(table, 2_400, id);
    let (mut direct, schema, whole) = read_directly(&lines, Some(scn));
    assert_eq!(whole.len(), 2_400 - (0..2_400).step_by(7).count());
    let mut client = client(Simulator::from_reader(lines.join("\n").as_bytes()).unwrap());
    for rows_per_chunk in [1, 150, 700, 100_000] {
        let ranges = client.table_chunks(&schema, rows_per_chunk).unwrap();
        assert_eq!(
            ranges,
            direct.table_chunks(&schema, rows_per_chunk).unwrap(),
            "{rows_per_chunk}"
        );
        for range in &ranges {
            let RowRange::RowId { lo, hi } = range else {
                panic!("{range:?}")
            };
            let (lo, hi) = (chunks::row_id_parts(lo), chunks::row_id_parts(hi));
            assert_eq!(lo.map(|p| p.0), hi.map(|p| p.0), "one partition a chunk");
        }
        // Every segment with rows is at least one chunk.
        assert!(
            ranges.len() >= segments,
            "{rows_per_chunk}: {}",
            ranges.len()
        );
        let rows = chunked(&ranges, |range| {
            client.flashback_range(&schema, scn, range, None).unwrap()
        });
        assert_eq!(rows, whole, "{rows_per_chunk} rows per chunk");
        let rows = chunked(&ranges, |range| {
            direct.flashback_range(&schema, scn, range, None).unwrap()
        });
        assert_eq!(
            rows, whole,
            "{rows_per_chunk} rows per chunk, the model's own read"
        );
    }
}

/// A row that maps to no partition is refused (ORA-14400), and an update that would move a
/// row to another partition too (ORA-14402, no row movement).
#[test]
fn partition_bounds_are_enforced() {
    let bounded = PARTITIONED.replace(r#",{"name":"PMAX"}"#, "");
    let insert = r#"{"tx":"a","insert":"APP.T","values":{"ID":3000,"V":"x"}}"#;
    let error = Simulator::from_reader(format!("{bounded}\n{insert}").as_bytes()).unwrap_err();
    assert!(error.to_string().contains("ORA-14400"), "{error}");
    let moved = r#"{"tx":"a","insert":"APP.T","values":{"ID":5,"V":"x"}}
{"tx":"a","update":"APP.T","where":{"ID":5},"set":{"ID":1500}}"#;
    let error = Simulator::from_reader(format!("{PARTITIONED}\n{moved}").as_bytes()).unwrap_err();
    assert!(error.to_string().contains("ORA-14402"), "{error}");
}

/// The index-organised table of the tests: a composite key (NUMBER, VARCHAR2).
const IOT: &str = r#"{"table":"APP.T","columns":[{"name":"A","type":"NUMBER(10)","key":true},{"name":"B","type":"VARCHAR2(10)","key":true},{"name":"V","type":"VARCHAR2(20)"}],"logging":"all","organization":"index"}"#;

fn iot_id(n: u64) -> String {
    // Keys inserted out of order: A cycles, B is a string whose order is not its number's.
    let a = (n * 37) % 50;
    let b = n % 23;
    format!(r#"{{"A":{a},"B":"b{b}","V":"v{n}"}}"#)
}

/// An IOT is `IOT_TYPE = 'IOT'`, its segment the key index `SYS_IOT_TOP_<object id>` (type
/// INDEX), and its rows have logical ROWIDs, which CHARTOROWID refuses.
#[test]
fn an_iot_is_kept_in_its_key_index() {
    let (lines, _) = scenario(IOT, 1_150, iot_id);
    let pool = SimulatorPool::new(Simulator::from_reader(lines.join("\n").as_bytes()).unwrap());
    let tables = query(
        &pool,
        "SELECT IOT_TYPE FROM ALL_TABLES WHERE OWNER = 'APP' AND TABLE_NAME = 'T'",
        &[],
    );
    assert_eq!(tables, [vec![Some("IOT".to_owned())]]);
    let objects = query(
        &pool,
        "SELECT OBJECT_ID, DATA_OBJECT_ID FROM DBA_OBJECTS \
         WHERE OWNER = 'APP' AND OBJECT_NAME = 'T' AND OBJECT_TYPE = 'TABLE'",
        &[],
    );
    assert_eq!(objects.len(), 1);
    assert_eq!(objects[0][1], None, "the table has no segment of its own");
    let index = format!("SYS_IOT_TOP_{}", objects[0][0].as_deref().unwrap());
    let extents = query(
        &pool,
        "SELECT SEGMENT_TYPE, COUNT(*) FROM DBA_EXTENTS WHERE OWNER = 'APP' \
         AND SEGMENT_NAME = :1 GROUP BY SEGMENT_TYPE",
        &[Bind::Text(&index)],
    );
    assert_eq!(
        extents,
        [vec![Some("INDEX".to_owned()), Some("2".to_owned())]]
    );
    let table_extents = query(
        &pool,
        crate::source::oracle::sql::TABLE_EXTENTS,
        &[Bind::Text("APP"), Bind::Text("T")],
    );
    assert!(
        table_extents.is_empty(),
        "no heap segment: {table_extents:?}"
    );
}

/// An IOT's declaration, its rows' values by number, and its number of key columns.
type Case<'a> = (&'a str, &'a dyn Fn(u64) -> String, usize);

/// An IOT read in key chunks through the real client (its key-boundary walk and key-bounded
/// reads evaluated by the model) gives every row once, in key order, as a whole read does,
/// with a composite key and a single one, at several chunk sizes.
#[test]
fn an_iot_read_in_key_chunks_through_the_client_equals_a_whole_read() {
    let single = IOT.replace(
        r#""type":"VARCHAR2(10)","key":true"#,
        r#""type":"VARCHAR2(10)""#,
    );
    let single_id = |n: u64| format!(r#"{{"A":{n},"B":"b{}","V":"v{n}"}}"#, n % 23);
    let cases: [Case<'_>; 2] = [(IOT, &iot_id, 2), (&single, &single_id, 1)];
    for (table, id, key_columns) in cases {
        let (lines, scn) = scenario(table, 600, id);
        let (_, schema, whole) = read_directly(&lines, Some(scn));
        let mut whole: Vec<_> = whole.into_iter().map(|row| row.values).collect();
        assert_eq!(whole.len(), 600 - (0..600).step_by(7).count());
        let key = |row: &crate::value::Row| {
            let a: i64 = row.get(0).unwrap().to_string().parse().unwrap();
            let b = if key_columns == 2 {
                row.get(1).unwrap().to_string()
            } else {
                String::new()
            };
            (a, b)
        };
        whole.sort_by_key(key);
        let mut client = client(Simulator::from_reader(lines.join("\n").as_bytes()).unwrap());
        for rows_per_chunk in [2_u64, 97, 257, 100_000] {
            let ranges = client.table_chunks(&schema, rows_per_chunk).unwrap();
            // Boundaries come from the current rows (not as of the read's SCN): one chunk per
            // `rows_per_chunk` of them, and a last one unbounded above.
            let current = 600 - (0..600).step_by(7).count() as u64;
            assert_eq!(
                ranges.len() as u64,
                current / rows_per_chunk + 1,
                "{rows_per_chunk}"
            );
            let rows: Vec<_> = chunked(&ranges, |range| {
                client.flashback_range(&schema, scn, range, None).unwrap()
            })
            .into_iter()
            .map(|row| row.values)
            .collect();
            assert_eq!(
                rows, whole,
                "{key_columns} key columns, {rows_per_chunk} rows per chunk"
            );
        }
    }
}
