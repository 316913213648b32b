//! The key of a table without a primary key: one of its unique indexes, chosen as Debezium
//! chooses it, kept only when every column is NOT NULL.
//!
//! Debezium (`JdbcConnection.readPrimaryKeyOrUniqueIndexNames`, debezium-core) takes the primary
//! key and, when there is none, `readTableUniqueIndices`: the rows of JDBC's
//! `DatabaseMetaData.getIndexInfo(..., unique = true, ...)`, which the JDBC contract orders by
//! `NON_UNIQUE, TYPE, INDEX_NAME, ORDINAL_POSITION`, and keeps the first index (by name) none of
//! whose columns the connector excludes. The Oracle connector
//! (`OracleConnection.isTableUniqueIndexIncluded`) excludes an index with a column named like
//! `SYS_NC...$` (the hidden column of a function-based or descending index), an object type
//! attribute (`"TYPE"."ATTRIBUTE"`) or `M_ROW$$` (a materialized view log's): none of them is a
//! column of the table a change can carry. Here the same rule is "every column of the index is one
//! of the table's user columns" ([`crate::source::oracle::sql::TABLE_COLUMNS`]).
//!
//! One addition to Debezium: every column must be NOT NULL. A unique index lets any number of
//! rows hold NULL in all its columns, so a nullable "key" can give different rows the same message
//! key, and log compaction would then keep only one of them. It is also Oracle's own rule for
//! identifying a row: with primary-key supplemental logging and no primary key, Oracle logs "one
//! of the unique index keys" of the non-null unique indexes (Oracle Database Utilities, "Database-
//! Level Identification Key Logging"), see [`super::key_logging`].

use crate::dictionary::Column;

/// One row of [`crate::source::oracle::sql::UNIQUE_INDEXES`]: a column of a unique index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UniqueIndexColumn {
    pub index: String,
    pub column: String,
    /// 1-based position in the index.
    pub position: u16,
}

/// A unique index usable as the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UniqueKey {
    pub index: String,
    /// Column names in index order.
    pub columns: Vec<String>,
}

/// The unique indexes a table's key can come from: those whose every column is one of `columns`
/// and NOT NULL, ordered by index name (the first is the key). `rows` may come in any order.
pub fn usable_unique_keys(rows: &[UniqueIndexColumn], columns: &[Column]) -> Vec<UniqueKey> {
    let mut names: Vec<&str> = rows.iter().map(|row| row.index.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .filter_map(|index| {
            let mut members: Vec<&UniqueIndexColumn> =
                rows.iter().filter(|row| row.index == index).collect();
            members.sort_by_key(|row| row.position);
            let usable = members.iter().all(|member| {
                columns
                    .iter()
                    .any(|column| column.name == member.column && !column.nullable)
            });
            usable.then(|| UniqueKey {
                index: index.to_owned(),
                columns: members.iter().map(|row| row.column.clone()).collect(),
            })
        })
        .collect()
}

/// `columns` with the key positions of `key` set (the table has no primary key).
pub fn with_key(columns: Vec<Column>, key: &UniqueKey) -> Vec<Column> {
    columns
        .into_iter()
        .map(|column| {
            match key.columns.iter().position(|name| *name == column.name) {
                // An index has at most 32 columns; the position always fits.
                Some(position) => column.key(u16::try_from(position + 1).unwrap_or(u16::MAX)),
                None => column,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dictionary::OracleType;

    fn row(index: &str, column: &str, position: u16) -> UniqueIndexColumn {
        UniqueIndexColumn {
            index: index.to_owned(),
            column: column.to_owned(),
            position,
        }
    }

    fn column(name: &str, nullable: bool) -> Column {
        Column::new(name, OracleType::parse("NUMBER(10)").unwrap()).nullable(nullable)
    }

    #[test]
    fn the_first_index_by_name_whose_columns_are_not_null_user_columns_is_the_key() {
        let columns = [
            column("CODE", false),
            column("REGION", false),
            column("EMAIL", true),
        ];
        let rows = [
            // Out of order on purpose: the choice is by name, columns by position.
            row("UK_B", "REGION", 2),
            row("UK_B", "CODE", 1),
            row("UK_A_EMAIL", "EMAIL", 1),
            row("UK_0_FUNC", "SYS_NC00004$", 1),
            row("UK_C", "REGION", 1),
        ];
        let keys = usable_unique_keys(&rows, &columns);
        assert_eq!(
            keys,
            [
                UniqueKey {
                    index: "UK_B".to_owned(),
                    columns: vec!["CODE".to_owned(), "REGION".to_owned()],
                },
                UniqueKey {
                    index: "UK_C".to_owned(),
                    columns: vec!["REGION".to_owned()],
                },
            ],
            "a nullable column and a function-based index's hidden column rule an index out"
        );
        let keyed = with_key(columns.to_vec(), &keys[0]);
        assert_eq!(
            keyed.iter().map(|c| c.key_position).collect::<Vec<_>>(),
            [Some(1), Some(2), None]
        );
        assert!(usable_unique_keys(&[], &columns).is_empty());
    }
}
