//! The data dictionary as the capture sees it: tables, their columns and Oracle types, and the
//! key that identifies a row. Pure data, shared by the Oracle boundary (which reads it from the
//! catalog), the simulator (from scenario files) and the typing of redo values.
//!
//! Invariants of a [`TableSchema`], checked by [`TableSchema::new`]:
//! - column names are unique (exactly as in the dictionary: case-sensitive, unquoted);
//! - the key is the primary key in key-position order, or the configured key columns (Debezium's
//!   `message.key.columns`) in the order given; every key column exists; an empty key means the
//!   table has none (Debezium then sends a null message key).

pub mod ddl;
mod oracle_type;

use std::collections::HashMap;

pub use oracle_type::{
    LengthSemantics, LobKind, MAX_NUMBER_PRECISION, OracleType, OracleTypeError,
    OracleTypeErrorKind,
};

/// One column of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The name as in the dictionary (what SQL_REDO writes inside the double quotes).
    pub name: String,
    pub data_type: OracleType,
    pub nullable: bool,
    /// 1-based position in the primary key, when the column is part of it.
    pub key_position: Option<u16>,
    /// `ALL_TAB_COLS.SEGMENT_COLUMN_ID`: the column's place in the stored row, which is the
    /// number LogMiner writes as `"COL n"` when it cannot name the column: without a matching
    /// dictionary it has only the redo, whose column data is in segment order (OpenLogReplicator
    /// keys redo columns by `COL$.SEGCOL#`). `None` when not known (a history record written
    /// before the capture read it). A DROP COLUMN renumbers the columns after it, so the number
    /// holds for one table version only.
    pub segment_column: Option<u16>,
}

impl Column {
    /// A nullable, non-key column.
    pub fn new(name: impl Into<String>, data_type: OracleType) -> Self {
        Self {
            name: name.into(),
            data_type,
            nullable: true,
            key_position: None,
            segment_column: None,
        }
    }

    /// Sets the column's segment column number ([`Column::segment_column`]).
    #[must_use]
    pub fn segment(mut self, number: u16) -> Self {
        self.segment_column = Some(number);
        self
    }

    /// Marks the column as the `position`-th (1-based) primary key column; key columns are
    /// NOT NULL.
    #[must_use]
    pub fn key(mut self, position: u16) -> Self {
        self.key_position = Some(position);
        self.nullable = false;
        self
    }

    /// Sets whether the column accepts NULL.
    #[must_use]
    pub fn nullable(mut self, nullable: bool) -> Self {
        self.nullable = nullable;
        self
    }

    pub fn is_primary_key(&self) -> bool {
        self.key_position.is_some()
    }
}

/// A captured table: owner, name, columns in table order and the row key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableSchema {
    schema: String,
    table: String,
    columns: Vec<Column>,
    /// Indexes into `columns`, in key order.
    key: Vec<usize>,
    by_name: HashMap<String, usize>,
    /// The table's object numbers when known.
    object: Option<ObjectNumbers>,
}

/// A table's numbers in the dictionary (`ALL_OBJECTS`, Oracle Database Reference 19c): what a
/// row LogMiner cannot name carries instead of the name (`"UNKNOWN"."OBJ# n"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ObjectNumbers {
    /// `OBJECT_ID`: fixed for the table's life, kept across renames and ALTERs.
    pub object_id: u64,
    /// `DATA_OBJECT_ID`: the segment's number, new after a TRUNCATE or MOVE; `None` for a
    /// table without a segment of its own (partitioned).
    pub data_object_id: Option<u64>,
}

/// A table definition that breaks an invariant of [`TableSchema`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    #[error("table {schema}.{table} has no columns")]
    NoColumns { schema: String, table: String },
    #[error("table {schema}.{table} has column {column} twice")]
    DuplicateColumn {
        schema: String,
        table: String,
        column: String,
    },
    #[error("table {schema}.{table} has key position {position} twice")]
    DuplicateKeyPosition {
        schema: String,
        table: String,
        position: u16,
    },
    #[error("key column {column} is not a column of {schema}.{table}")]
    UnknownKeyColumn {
        schema: String,
        table: String,
        column: String,
    },
}

impl TableSchema {
    /// A table whose key is its primary key (the columns with a `key_position`).
    pub fn new(
        schema: impl Into<String>,
        table: impl Into<String>,
        columns: Vec<Column>,
    ) -> Result<Self, SchemaError> {
        let schema = schema.into();
        let table = table.into();
        if columns.is_empty() {
            return Err(SchemaError::NoColumns { schema, table });
        }
        let mut by_name = HashMap::with_capacity(columns.len());
        for (index, column) in columns.iter().enumerate() {
            if by_name.insert(column.name.clone(), index).is_some() {
                return Err(SchemaError::DuplicateColumn {
                    schema,
                    table,
                    column: column.name.clone(),
                });
            }
        }
        let mut keyed: Vec<(u16, usize)> = columns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.key_position.map(|p| (p, i)))
            .collect();
        keyed.sort_unstable();
        if let Some(pair) = keyed.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(SchemaError::DuplicateKeyPosition {
                schema,
                table,
                position: pair[0].0,
            });
        }
        let key = keyed.into_iter().map(|(_, i)| i).collect();
        Ok(Self {
            schema,
            table,
            columns,
            key,
            by_name,
            object: None,
        })
    }

    /// The table with its object numbers.
    #[must_use]
    pub fn with_object(mut self, object: ObjectNumbers) -> Self {
        self.object = Some(object);
        self
    }

    /// The table's object numbers, when known.
    pub fn object(&self) -> Option<ObjectNumbers> {
        self.object
    }

    /// The column LogMiner names `"COL n"`: the one with segment column number `n`.
    pub fn column_by_segment(&self, number: u16) -> Option<&Column> {
        self.columns
            .iter()
            .find(|column| column.segment_column == Some(number))
    }

    /// Replaces the primary key by configured key columns (Debezium's `message.key.columns`);
    /// an empty list leaves the table without a key.
    pub fn with_key_columns<S: AsRef<str>>(mut self, names: &[S]) -> Result<Self, SchemaError> {
        let mut key = Vec::with_capacity(names.len());
        for name in names {
            let name = name.as_ref();
            match self.by_name.get(name) {
                Some(&i) if !key.contains(&i) => key.push(i),
                Some(_) => {
                    return Err(SchemaError::DuplicateColumn {
                        schema: self.schema,
                        table: self.table,
                        column: name.to_owned(),
                    });
                }
                None => {
                    return Err(SchemaError::UnknownKeyColumn {
                        schema: self.schema,
                        table: self.table,
                        column: name.to_owned(),
                    });
                }
            }
        }
        self.key = key;
        Ok(self)
    }

    /// The owner (Oracle schema).
    pub fn schema(&self) -> &str {
        &self.schema
    }

    pub fn table(&self) -> &str {
        &self.table
    }

    /// `OWNER.TABLE`.
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.schema, self.table)
    }

    /// The columns in table order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The position of a column in table order.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.column_index(name).and_then(|i| self.columns.get(i))
    }

    /// Positions of the key columns, in key order; empty when the table has no key.
    pub fn key_indexes(&self) -> &[usize] {
        &self.key
    }

    /// The key columns, in key order.
    pub fn key_columns(&self) -> impl Iterator<Item = &Column> {
        self.key.iter().filter_map(|&i| self.columns.get(i))
    }

    pub fn has_key(&self) -> bool {
        !self.key.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn orders() -> TableSchema {
        TableSchema::new(
            "APP",
            "ORDERS",
            vec![
                Column::new("REGION", OracleType::parse("VARCHAR2(8)").unwrap()).key(2),
                Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1),
                Column::new("NOTE", OracleType::parse("CLOB").unwrap()),
            ],
        )
        .unwrap()
    }

    #[test]
    fn key_follows_key_positions() {
        let t = orders();
        let key: Vec<_> = t.key_columns().map(|c| c.name.as_str()).collect();
        assert_eq!(key, ["ID", "REGION"]);
        assert_eq!(t.column_index("NOTE"), Some(2));
        assert!(t.column("note").is_none(), "names are case-sensitive");
        assert!(!t.column("ID").unwrap().nullable);
        assert_eq!(t.qualified_name(), "APP.ORDERS");
    }

    #[test]
    fn configured_key_columns_replace_the_primary_key() {
        let t = orders().with_key_columns(&["NOTE"]).unwrap();
        assert_eq!(t.key_indexes(), [2]);
        let t = orders().with_key_columns::<&str>(&[]).unwrap();
        assert!(!t.has_key());
        assert!(matches!(
            orders().with_key_columns(&["NOPE"]),
            Err(SchemaError::UnknownKeyColumn { .. })
        ));
    }

    #[test]
    fn invalid_tables_are_refused() {
        let n = || OracleType::parse("NUMBER").unwrap();
        assert!(matches!(
            TableSchema::new("A", "T", vec![]),
            Err(SchemaError::NoColumns { .. })
        ));
        assert!(matches!(
            TableSchema::new("A", "T", vec![Column::new("X", n()), Column::new("X", n())]),
            Err(SchemaError::DuplicateColumn { .. })
        ));
        assert!(matches!(
            TableSchema::new(
                "A",
                "T",
                vec![Column::new("X", n()).key(1), Column::new("Y", n()).key(1)]
            ),
            Err(SchemaError::DuplicateKeyPosition { position: 1, .. })
        ));
    }
}
