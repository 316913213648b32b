use proptest::prelude::*;

use super::*;
use crate::dictionary::ddl::alter_columns;
use crate::dictionary::{Column, ObjectNumbers, OracleType};
use crate::source::StorageSettings;
use crate::value::Value;

const OBJECT: u64 = 74_103;

fn formats() -> Result<DatabaseFormats, StorageFormatError> {
    Ok(DatabaseFormats::new(jiff::tz::Offset::UTC))
}

fn version(owner_table: (&str, &str), columns: Vec<Column>) -> Arc<TableSchema> {
    Arc::new(
        TableSchema::new(owner_table.0, owner_table.1, columns)
            .unwrap()
            .with_object(ObjectNumbers {
                object_id: OBJECT,
                data_object_id: Some(OBJECT),
            }),
    )
}

/// Oracle's own example of a row rendered without a dictionary (Utilities, "LogMiner
/// Configuration"): HR.JOBS with four columns numbered 1 to 4.
fn jobs() -> Arc<TableSchema> {
    let column = |name: &str, declaration: &str, number: u16| {
        Column::new(name, OracleType::parse(declaration).unwrap()).segment(number)
    };
    version(
        ("HR", "JOBS"),
        vec![
            column("JOB_ID", "VARCHAR2(10)", 1).key(1),
            column("JOB_TITLE", "VARCHAR2(35)", 2),
            column("MIN_SALARY", "NUMBER(6)", 3),
            column("MAX_SALARY", "NUMBER(6)", 4),
        ],
    )
}

fn hex(text: &str) -> Option<Vec<u8>> {
    Some(crate::value::binary::decode_hex(text).unwrap())
}

fn numbered(column: u16, bytes: Option<Vec<u8>>) -> NumberedValue {
    NumberedValue { column, bytes }
}

#[test]
fn names_logminer_writes_without_a_dictionary_are_read_as_numbers() {
    assert_eq!(object_number("OBJ# 45522"), Some(45_522));
    assert_eq!(column_number("COL 4"), Some(4));
    for other in ["JOBS", "OBJ#45522", "OBJ# ", "OBJ# 45x", "OBJ# -1"] {
        assert_eq!(object_number(other), None, "{other}");
    }
    for other in ["COL", "COL ", "COL1", "COL 1a", "COL 70000", "JOB_ID"] {
        assert_eq!(column_number(other), None, "{other}");
    }
}

#[test]
fn a_parsed_statement_on_an_object_number_gives_numbered_values() {
    use crate::redo::ast::DmlStatement;
    use crate::redo::parse_dml;
    let insert = parse_dml(
        "insert into \"UNKNOWN\".\"OBJ# 45522\"(\"COL 1\",\"COL 2\",\"COL 3\") values \
         (HEXTORAW('45465f4748'),NULL,HEXTORAW('c229'));",
    )
    .unwrap();
    let DmlStatement::Insert { table, values } = insert else {
        panic!("an insert");
    };
    assert_eq!(object_number(&table.table), Some(45_522));
    assert_eq!(
        NumberedValue::from_parsed(&values).unwrap(),
        [
            numbered(1, hex("45465f4748")),
            numbered(2, None),
            numbered(3, hex("c229")),
        ]
    );
    let update = parse_dml(
        "update \"UNKNOWN\".\"OBJ# 45522\" set \"COL 3\" = HEXTORAW('c22a') where \
         \"COL 1\" = HEXTORAW('45465f4748') and ROWID = 'AAAMxJAAEAAAAKTAAA';",
    )
    .unwrap();
    let DmlStatement::Update { set, where_, .. } = update else {
        panic!("an update");
    };
    assert_eq!(
        NumberedValue::from_parsed(&set).unwrap(),
        [numbered(3, hex("c22a"))]
    );
    assert_eq!(
        NumberedValue::from_parsed(&where_).unwrap(),
        [numbered(1, hex("45465f4748"))]
    );
    // A rendered value or a named column is not such a row.
    let rendered = parse_dml(
        "insert into \"UNKNOWN\".\"OBJ# 45522\"(\"COL 1\",\"JOB_ID\") values ('x',NULL);",
    )
    .unwrap();
    let DmlStatement::Insert { values, .. } = rendered else {
        panic!("an insert");
    };
    let error = NumberedValue::from_parsed(&values).unwrap_err();
    assert_eq!(error.column, "COL 1");
    assert!(NumberedValue::from_parsed(&values[1..]).is_err());
}

#[test]
fn oracles_example_row_is_typed_with_the_version_in_force() {
    let mut history = SchemaHistory::default();
    history.insert(jobs(), 100);
    // insert into "UNKNOWN"."OBJ# 45522"("COL 1","COL 2","COL 3","COL 4") values
    // (HEXTORAW('45465f4748'),HEXTORAW('546563686e6963616c20577269746572'),
    // HEXTORAW('c229'),HEXTORAW('c3020b')); the first value's bytes spell EF_GH although the
    // guide's statement says IT_WT.
    let values = [
        numbered(1, hex("45465f4748")),
        numbered(2, hex("546563686e6963616c20577269746572")),
        numbered(3, hex("c229")),
        numbered(4, hex("c3020b")),
    ];
    let resolved = resolve(&history, OBJECT, 150, &values, &formats()).unwrap();
    assert_eq!(resolved.table.table(), "JOBS");
    let number =
        |text: &str| Value::Number(crate::value::number::OracleNumber::parse(text).unwrap());
    assert_eq!(resolved.row.get(0), Some(&Value::Text("EF_GH".to_owned())));
    assert_eq!(
        resolved.row.get(1),
        Some(&Value::Text("Technical Writer".to_owned()))
    );
    assert_eq!(resolved.row.get(2), Some(&number("4000")));
    assert_eq!(resolved.row.get(3), Some(&number("11000")));
    // A column the row does not carry stays absent; NULL is NULL.
    let partial = resolve(&history, OBJECT, 150, &[numbered(3, None)], &formats()).unwrap();
    assert_eq!(partial.row.get(0), None);
    assert_eq!(partial.row.get(2), Some(&Value::Null));
}

#[test]
fn what_cannot_be_rendered_is_an_error_naming_scn_and_object() {
    let mut history = SchemaHistory::default();
    history.insert(jobs(), 100);
    let one = [numbered(3, hex("c229"))];
    let error = resolve(&history, OBJECT, 99, &one, &formats()).unwrap_err();
    assert_eq!(
        error,
        ObjectRowError::NoVersion {
            scn: 99,
            object_id: OBJECT
        }
    );
    assert!(error.to_string().contains("SCN 99") && error.to_string().contains("74103"));
    assert!(matches!(
        resolve(&history, 1, 150, &one, &formats()),
        Err(ObjectRowError::NoVersion { object_id: 1, .. })
    ));
    let error = resolve(&history, OBJECT, 150, &[numbered(5, None)], &formats()).unwrap_err();
    assert!(
        matches!(
            error,
            ObjectRowError::UnknownColumn {
                column: 5,
                scn: 150,
                ..
            }
        ),
        "{error}"
    );
    // 0x66 is no base-100 digit: the decoder's refusal, with the column named.
    let error = resolve(
        &history,
        OBJECT,
        150,
        &[numbered(3, hex("c266"))],
        &formats(),
    )
    .unwrap_err();
    match &error {
        ObjectRowError::Value { column, .. } => assert_eq!(column, "MIN_SALARY"),
        other => panic!("{other}"),
    }
    // A character set without a decoder matters only when a value must be decoded.
    let unsupported = StorageSettings {
        character_set: "JA16SJIS".to_owned(),
        national_character_set: "AL16UTF16".to_owned(),
        database_time_zone: "+00:00".to_owned(),
    }
    .formats();
    assert!(resolve(&history, OBJECT, 150, &[numbered(1, None)], &unsupported).is_ok());
    let error = resolve(&history, OBJECT, 150, &one, &unsupported).unwrap_err();
    assert!(error.to_string().contains("JA16SJIS"), "{error}");
    // A version recorded before column numbers were read cannot say which column is which.
    let mut old = SchemaHistory::default();
    let unnumbered: Vec<Column> = jobs()
        .columns()
        .iter()
        .map(|c| Column {
            segment_column: None,
            ..c.clone()
        })
        .collect();
    old.insert(version(("HR", "JOBS"), unnumbered), 100);
    assert!(matches!(
        resolve(&old, OBJECT, 150, &one, &formats()),
        Err(ObjectRowError::NoColumnNumbers { .. })
    ));
}

/// One ALTER of the generated sequences: add a column, or drop the column at an index.
#[derive(Clone, Debug)]
enum Alter {
    Add,
    Drop(usize),
}

fn alters() -> impl Strategy<Value = Vec<Alter>> {
    prop::collection::vec(
        prop_oneof![Just(Alter::Add), (0usize..8).prop_map(Alter::Drop)],
        1..12,
    )
}

proptest! {
    /// Versions made by random ADD / DROP COLUMN sequences (each DDL one SCN apart, a rename
    /// among them), numbered as Oracle numbers them (`alter_columns`): a row written under any
    /// version, with every column by its number at that time, reads back as that version's row,
    /// whatever later DDL renumbered; a number the version lacks is refused.
    #[test]
    fn a_row_is_read_with_the_numbers_of_its_own_version(alters in alters(), pick in 0usize..64) {
        let varchar = OracleType::parse("VARCHAR2(20)").unwrap();
        let mut columns = vec![Column::new("C0", varchar.clone()).segment(1)];
        let mut versions = vec![(100u64, version(("APP", "T"), columns.clone()))];
        let mut next_name = 1;
        for (step, alter) in alters.iter().enumerate() {
            let statement = match alter {
                Alter::Add => {
                    next_name += 1;
                    format!("ALTER TABLE APP.T ADD (C{next_name} VARCHAR2(20))")
                }
                // Oracle refuses to drop the last column.
                Alter::Drop(_) if columns.len() == 1 => continue,
                Alter::Drop(at) => {
                    format!("ALTER TABLE APP.T DROP COLUMN {}", columns[at % columns.len()].name)
                }
            };
            columns = alter_columns(&statement, &columns).unwrap().unwrap();
            let name = if step % 3 == 2 { "RENAMED" } else { "T" };
            versions.push((200 + step as u64 * 10, version(("APP", name), columns.clone())));
        }
        let mut history = SchemaHistory::default();
        for (scn, table) in &versions {
            history.insert(Arc::clone(table), *scn);
        }
        let (from_scn, table) = &versions[pick % versions.len()];
        let scn = from_scn + 5;
        // Each value names its column, so a row read with another version's numbers differs.
        let values: Vec<NumberedValue> = table
            .columns()
            .iter()
            .map(|c| numbered(c.segment_column.unwrap(), Some(c.name.clone().into_bytes())))
            .collect();
        let resolved = resolve(&history, OBJECT, scn, &values, &formats()).unwrap();
        prop_assert_eq!(&resolved.table, table);
        for (index, column) in table.columns().iter().enumerate() {
            prop_assert_eq!(resolved.row.get(index), Some(&Value::Text(column.name.clone())));
        }
        // Numbers are 1..=n with no gap after any sequence, and n + 1 is no column.
        let mut numbers: Vec<u16> =
            table.columns().iter().map(|c| c.segment_column.unwrap()).collect();
        numbers.sort_unstable();
        prop_assert_eq!(numbers, (1..=table.columns().len() as u16).collect::<Vec<_>>());
        let beyond = table.columns().len() as u16 + 1;
        let refused = resolve(&history, OBJECT, scn, &[numbered(beyond, None)], &formats());
        let is_unknown_column = matches!(refused, Err(ObjectRowError::UnknownColumn { .. }));
        prop_assert!(is_unknown_column);
    }
}
