use proptest::prelude::*;
use redoline_crds::v1alpha1::{ColumnsSpec, FiltersSpec, MessageKeyColumns};

use super::*;

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn columns_excluding(patterns: &[&str]) -> Filters {
    let spec = FiltersSpec {
        column_exclude_list: strings(patterns),
        ..FiltersSpec::default()
    };
    Filters::new(&spec, &ColumnsSpec::default()).unwrap()
}

#[test]
fn patterns_match_whole_names_only() {
    let list = PatternList::compile("f", &strings(&["APP\\.ORD.*", "HR\\.EMP"])).unwrap();
    assert!(list.matches("APP.ORDERS"));
    assert!(list.matches("HR.EMP"));
    assert!(
        !list.matches("HR.EMPLOYEES"),
        "no implicit trailing wildcard"
    );
    assert!(!list.matches("XAPP.ORDERS"), "no implicit leading wildcard");
    assert!(!list.matches("app.orders"), "case-sensitive");
    // An alternation stays inside the anchors.
    let alternation = PatternList::compile("f", &strings(&["A|B"])).unwrap();
    assert!(alternation.matches("A") && alternation.matches("B"));
    assert!(!alternation.matches("AB") && !alternation.matches("XA"));
}

#[test]
fn a_bad_pattern_names_its_field_and_index() {
    let spec = FiltersSpec {
        column_exclude_list: strings(&["APP\\..*", "APP\\.(ORDERS"]),
        ..FiltersSpec::default()
    };
    let error = Filters::new(&spec, &ColumnsSpec::default()).unwrap_err();
    assert_eq!(error.field, "filters.columnExcludeList[1]");
    assert!(
        error.problem.contains("APP\\\\.(ORDERS"),
        "{}",
        error.problem
    );
    let backreference = PatternList::compile("x", &strings(&["(A)\\1"])).unwrap_err();
    assert_eq!(backreference.field, "x[0]");
    let keys = ColumnsSpec {
        message_key_columns: vec![MessageKeyColumns {
            table: "[".to_owned(),
            columns: strings(&["ID"]),
        }],
        ..ColumnsSpec::default()
    };
    let error = Filters::new(&FiltersSpec::default(), &keys).unwrap_err();
    assert_eq!(error.field, "columns.messageKeyColumns[0].table");
}

#[test]
fn include_and_exclude_lists_are_exclusive() {
    let both_users = FiltersSpec {
        username_include_list: strings(&["APP"]),
        username_exclude_list: strings(&["ETL"]),
        ..FiltersSpec::default()
    };
    let error = Filters::new(&both_users, &ColumnsSpec::default()).unwrap_err();
    assert_eq!(error.field, "filters.usernameIncludeList");
    let both_columns = FiltersSpec {
        column_include_list: strings(&["A"]),
        column_exclude_list: strings(&["B"]),
        ..FiltersSpec::default()
    };
    let error = Filters::new(&both_columns, &ColumnsSpec::default()).unwrap_err();
    assert_eq!(error.field, "filters.columnIncludeList");
}

#[test]
fn users_are_compared_without_case() {
    let include = Filters::new(
        &FiltersSpec {
            username_include_list: strings(&["app"]),
            ..FiltersSpec::default()
        },
        &ColumnsSpec::default(),
    )
    .unwrap();
    assert!(include.admits_user(Some("APP")));
    assert!(!include.admits_user(Some("ETL")));
    assert!(!include.admits_user(None));
    let exclude = Filters::new(
        &FiltersSpec {
            username_exclude_list: strings(&["ETL"]),
            ..FiltersSpec::default()
        },
        &ColumnsSpec::default(),
    )
    .unwrap();
    assert!(!exclude.admits_user(Some("etl")));
    assert!(exclude.admits_user(Some("APP")));
    assert!(exclude.admits_user(None));
    assert!(Filters::default().admits_user(None));
}

#[test]
fn columns_are_selected_by_qualified_name() {
    let exclude = columns_excluding(&["APP\\.ORDERS\\.(SSN|CARD)"]);
    assert!(!exclude.admits_column("APP", "ORDERS", "SSN"));
    assert!(!exclude.admits_column("APP", "ORDERS", "CARD"));
    assert!(exclude.admits_column("APP", "ORDERS", "ID"));
    assert!(exclude.admits_column("APP", "OTHER", "SSN"));
    let include = Filters::new(
        &FiltersSpec {
            column_include_list: strings(&["APP\\.ORDERS\\.ID"]),
            ..FiltersSpec::default()
        },
        &ColumnsSpec::default(),
    )
    .unwrap();
    assert!(include.admits_column("APP", "ORDERS", "ID"));
    assert!(!include.admits_column("APP", "ORDERS", "STATUS"));
    assert!(Filters::default().admits_column("APP", "ORDERS", "SSN"));
}

#[test]
fn the_first_matching_key_entry_wins() {
    let keys = ColumnsSpec {
        message_key_columns: vec![
            MessageKeyColumns {
                table: "APP\\.ORDERS".to_owned(),
                columns: strings(&["CODE"]),
            },
            MessageKeyColumns {
                table: "APP\\..*".to_owned(),
                columns: strings(&["A", "B"]),
            },
        ],
        ..ColumnsSpec::default()
    };
    let filters = Filters::new(&FiltersSpec::default(), &keys).unwrap();
    assert_eq!(
        filters.key_columns("APP", "ORDERS"),
        Some(strings(&["CODE"]).as_slice())
    );
    assert_eq!(
        filters.key_columns("APP", "LINES"),
        Some(strings(&["A", "B"]).as_slice())
    );
    assert_eq!(filters.key_columns("HR", "EMP"), None);
}

#[test]
fn published_columns_are_decided_once_per_table() {
    use redoline_crds::v1alpha1::LengthRule;

    use crate::dictionary::{Column, OracleType, TableSchema};

    let table = TableSchema::new(
        "APP",
        "ORDERS",
        vec![
            Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1),
            Column::new("CODE", OracleType::parse("VARCHAR2(8)").unwrap()),
            Column::new("SSN", OracleType::parse("VARCHAR2(11)").unwrap()),
            Column::new("NOTE", OracleType::parse("VARCHAR2(40)").unwrap()),
        ],
    )
    .unwrap();
    let filters = |columns: ColumnsSpec| {
        Filters::new(
            &FiltersSpec {
                column_exclude_list: strings(&["APP\\.ORDERS\\.SSN"]),
                ..FiltersSpec::default()
            },
            &columns,
        )
        .unwrap()
    };
    let all = Filters::default().published_columns(&table).unwrap();
    assert_eq!((all.key, all.values), (vec![0], vec![0, 1, 2, 3]));
    assert!(all.masks.iter().all(Option::is_none));
    assert!(all.source_types.iter().all(Vec::is_empty));

    let shaped = filters(ColumnsSpec {
        message_key_columns: vec![MessageKeyColumns {
            table: "APP\\.ORDERS".to_owned(),
            columns: strings(&["CODE", "SSN"]),
        }],
        truncate_to_chars: vec![LengthRule {
            length: 4,
            columns: strings(&["APP\\.ORDERS\\.NOTE"]),
        }],
        propagate_source_type: strings(&["APP\\.ORDERS\\.CODE"]),
        ..ColumnsSpec::default()
    })
    .published_columns(&table)
    .unwrap();
    // The configured key replaces the primary key, and keeps a column the values leave out.
    assert_eq!(shaped.key, [1, 2]);
    assert_eq!(shaped.values, [0, 1, 3]);
    assert_eq!(
        shaped.masks,
        [None, None, None, Some(mask::ColumnMask::Truncate(4))]
    );
    assert_eq!(
        shaped.source_types[1].first(),
        Some(&("__debezium.source.column.type", "VARCHAR2".to_owned()))
    );
    assert!(shaped.source_types[3].is_empty());

    let unknown = filters(ColumnsSpec {
        message_key_columns: vec![MessageKeyColumns {
            table: "APP\\..*".to_owned(),
            columns: strings(&["NOPE"]),
        }],
        ..ColumnsSpec::default()
    })
    .published_columns(&table)
    .unwrap_err();
    assert_eq!(
        unknown,
        UnknownKeyColumn {
            table: "APP.ORDERS".to_owned(),
            column: "NOPE".to_owned(),
        }
    );
}

proptest! {
    /// A literal (escaped) pattern selects exactly the one name it spells, and an exclude list
    /// selects exactly what the same include list does not.
    #[test]
    fn literal_patterns_select_exactly_their_name(
        name in "[A-Z][A-Z0-9_$#]{0,10}\\.[A-Z][A-Z0-9_$#]{0,10}\\.[A-Z][A-Z0-9_]{0,6}",
        other in "[A-Z][A-Z0-9_$#]{0,10}\\.[A-Z][A-Z0-9_$#]{0,10}\\.[A-Z][A-Z0-9_]{0,6}",
    ) {
        let pattern = vec![regex::escape(&name)];
        let list = PatternList::compile("f", &pattern).unwrap();
        prop_assert!(list.matches(&name));
        prop_assert_eq!(list.matches(&other), other == name);
        let parts: Vec<&str> = other.split('.').collect();
        let include = Filters::new(
            &FiltersSpec { column_include_list: pattern.clone(), ..FiltersSpec::default() },
            &ColumnsSpec::default(),
        ).unwrap();
        let exclude = Filters::new(
            &FiltersSpec { column_exclude_list: pattern, ..FiltersSpec::default() },
            &ColumnsSpec::default(),
        ).unwrap();
        prop_assert_ne!(
            include.admits_column(parts[0], parts[1], parts[2]),
            exclude.admits_column(parts[0], parts[1], parts[2])
        );
    }
}

fn names(items: &[&str]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|n| {
            let (owner, table) = n.split_once('.').unwrap();
            (owner.to_owned(), table.to_owned())
        })
        .collect()
}

#[test]
fn schema_and_table_lists_choose_catalog_tables() {
    let catalog = names(&[
        "APP.ORDERS",
        "APP.LINES",
        "APP.TMP_X",
        "HR.EMP",
        "REDOLINE.REDOLINE_LOGMNR_FLUSH",
    ]);
    let flush = |owner: &str, table: &str| owner == "REDOLINE" && table == "REDOLINE_LOGMNR_FLUSH";
    let filters = |spec: FiltersSpec| Filters::new(&spec, &ColumnsSpec::default()).unwrap();
    let only_explicit = Filters::default();
    assert!(!only_explicit.selects_from_catalog());
    assert!(only_explicit.catalog_tables(&catalog, flush).is_empty());
    let app = filters(FiltersSpec {
        schema_include_list: strings(&["APP"]),
        table_exclude_list: strings(&["APP\\.TMP_.*"]),
        ..FiltersSpec::default()
    });
    assert!(app.selects_from_catalog());
    assert_eq!(
        app.catalog_tables(&catalog, flush),
        names(&["APP.ORDERS", "APP.LINES"])
    );
    let all_but_hr = filters(FiltersSpec {
        schema_exclude_list: strings(&["HR"]),
        ..FiltersSpec::default()
    });
    assert_eq!(
        all_but_hr.catalog_tables(&catalog, flush),
        names(&["APP.ORDERS", "APP.LINES", "APP.TMP_X"]),
        "never the flush table"
    );
    let by_table = filters(FiltersSpec {
        table_include_list: strings(&["APP\\.ORDERS", "HR\\..*"]),
        ..FiltersSpec::default()
    });
    assert_eq!(
        by_table.catalog_tables(&catalog, flush),
        names(&["APP.ORDERS", "HR.EMP"])
    );
    let both = FiltersSpec {
        table_include_list: strings(&["A"]),
        table_exclude_list: strings(&["B"]),
        ..FiltersSpec::default()
    };
    assert_eq!(
        Filters::new(&both, &ColumnsSpec::default())
            .unwrap_err()
            .field,
        "filters.tableIncludeList"
    );
}
