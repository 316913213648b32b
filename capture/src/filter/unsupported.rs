//! Columns of a type the capture cannot decode (`SDO_GEOMETRY`, `VECTOR`, object types, ...).
//!
//! The dictionary keeps such a column as [`OracleType::Unsupported`] so that its table loads and
//! SQL_REDO naming the column parses; its values are dropped. That is only honest when the
//! column is not emitted, so the capture refuses to start (CDC-1001, before mining) while a
//! captured table has such a column that the column lists still select, and names the exclusion
//! that fixes it. `doctor` reports the same columns before the first start.
//!
//! [`OracleType::Unsupported`]: crate::dictionary::OracleType::Unsupported

use redoline_crds::StopCode;

use super::Filters;
use crate::dictionary::TableSchema;
use crate::stop::Stop;

/// A selected column of a captured table whose type the capture cannot decode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedColumn {
    /// `OWNER.TABLE.COLUMN`, as the column lists match it.
    pub column: String,
    /// The type as the catalog names it (`MDSYS.SDO_GEOMETRY`).
    pub data_type: String,
}

impl UnsupportedColumn {
    /// The `spec.filters.columnExcludeList` entry that excludes exactly this column: the lists
    /// are regular expressions, so the dots (and any other special character) are escaped.
    pub fn exclusion(&self) -> String {
        regex::escape(&self.column)
    }
}

/// The columns of `table` of a type the capture cannot decode that the column lists select.
pub fn unsupported_columns(table: &TableSchema, filters: &Filters) -> Vec<UnsupportedColumn> {
    table
        .columns()
        .iter()
        .filter(|c| c.data_type.is_unsupported())
        .filter(|c| filters.admits_column(table.schema(), table.table(), &c.name))
        .map(|c| UnsupportedColumn {
            column: format!("{}.{}", table.qualified_name(), c.name),
            data_type: c.data_type.to_string(),
        })
        .collect()
}

/// What to do about `columns`, in words: the exclusions to add.
pub fn fix(columns: &[UnsupportedColumn]) -> String {
    let entries: Vec<String> = columns
        .iter()
        .map(|c| format!("'{}'", c.exclusion()))
        .collect();
    format!(
        "add {} to spec.filters.columnExcludeList (or, with spec.filters.columnIncludeList, leave \
         the column out of it; the column lists need spec.format.type debezium); the column's \
         values are then dropped and the rest of the row is captured",
        entries.join(", ")
    )
}

/// The columns as a finding names them: `OWNER.TABLE.COLUMN (TYPE)`, in order.
pub fn named(columns: &[UnsupportedColumn]) -> Vec<String> {
    columns
        .iter()
        .map(|c| format!("{} ({})", c.column, c.data_type))
        .collect()
}

/// The typed stop (CDC-1001) for selected columns the capture cannot decode; `None` when there
/// are none.
pub fn stop(columns: &[UnsupportedColumn]) -> Option<Stop> {
    if columns.is_empty() {
        return None;
    }
    let named = named(columns);
    Some(
        Stop::new(
            StopCode::InvalidConfiguration,
            format!(
                "spec.filters.columnExcludeList: the capture cannot decode the type of {}; {}",
                named.join(", "),
                fix(columns)
            ),
        )
        .with_detail("field", "spec.filters.columnExcludeList")
        .with_detail(
            "columns",
            columns
                .iter()
                .map(|c| serde_json::Value::from(c.column.clone()))
                .collect::<Vec<_>>(),
        ),
    )
}

#[cfg(test)]
mod tests {
    use redoline_crds::v1alpha1::{ColumnsSpec, FiltersSpec};

    use super::*;
    use crate::dictionary::{Column, OracleType};

    fn shapes() -> TableSchema {
        TableSchema::new(
            "APP",
            "SHAPES",
            vec![
                Column::new(
                    "ID",
                    OracleType::Number {
                        precision: Some(10),
                        scale: Some(0),
                    },
                )
                .key(1),
                Column::new(
                    "SHAPE",
                    OracleType::parse_catalog("MDSYS.SDO_GEOMETRY").unwrap_or(OracleType::Json),
                ),
                Column::new("DOC", OracleType::Json),
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    fn filters(exclude: &[&str]) -> Filters {
        Filters::new(
            &FiltersSpec {
                column_exclude_list: exclude.iter().map(|s| (*s).to_owned()).collect(),
                ..FiltersSpec::default()
            },
            &ColumnsSpec::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_selected_column_of_an_unknown_type_stops_with_the_exclusion() {
        let columns = unsupported_columns(&shapes(), &filters(&[]));
        assert_eq!(
            columns,
            [UnsupportedColumn {
                column: "APP.SHAPES.SHAPE".to_owned(),
                data_type: "MDSYS.SDO_GEOMETRY".to_owned(),
            }]
        );
        let stop = stop(&columns).unwrap_or_else(|| panic!("no stop"));
        assert_eq!(stop.code, StopCode::InvalidConfiguration);
        assert!(
            stop.message
                .contains("APP.SHAPES.SHAPE (MDSYS.SDO_GEOMETRY)")
                && stop.message.contains(r"'APP\.SHAPES\.SHAPE'")
                && stop.message.contains("spec.filters.columnExcludeList"),
            "{}",
            stop.message
        );
    }

    #[test]
    fn an_excluded_column_of_an_unknown_type_is_fine() {
        // The exclusion the stop names, taken as written, is enough.
        let exclusion = UnsupportedColumn {
            column: "APP.SHAPES.SHAPE".to_owned(),
            data_type: String::new(),
        }
        .exclusion();
        assert!(unsupported_columns(&shapes(), &filters(&[&exclusion])).is_empty());
        assert!(stop(&[]).is_none());
    }
}
