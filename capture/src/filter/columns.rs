//! Which columns of a table are published, and how (stage 3 of the filter stage, see the module
//! doc of [`super`]): the message key (the primary key, or `message.key.columns`), the columns
//! of event values (`column.include.list` / `column.exclude.list`), each column's mask in value
//! images and the source type parameters of its field schema ([`super::mask`]).
//!
//! [`Filters::published_columns`] decides all of it for one table structure; an encoder builds
//! its plan from the answer and only applies it, so "why is this column not in the record" is
//! answered here.

use super::mask::ColumnMask;
use super::{Filters, Selection};
use crate::dictionary::TableSchema;

/// The published columns of one table structure, as column indexes into its columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublishedColumns {
    /// The columns of the message key, in key order: the primary key, or the first
    /// `messageKeyColumns` entry that matches the table. Empty: the table has no key. Key columns
    /// are in keys whatever the column lists say, as in Debezium.
    pub key: Vec<usize>,
    /// The columns in event values (and value schemas), in table order.
    pub values: Vec<usize>,
    /// Each column's mask in value images (keys are never masked, as in Debezium).
    pub masks: Vec<Option<ColumnMask>>,
    /// Each column's source type parameters (`__debezium.source.column.*`); empty for a column
    /// no propagation rule names.
    pub source_types: Vec<Vec<(&'static str, String)>>,
}

/// A `messageKeyColumns` entry naming a column its table does not have.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{table}: spec.columns.messageKeyColumns names column {column}, which the table does not \
     have; fix the entry that matches {table}"
)]
pub struct UnknownKeyColumn {
    /// `OWNER.TABLE`.
    pub table: String,
    pub column: String,
}

impl Filters {
    /// The published columns of `table` under these filters; decided once per table structure.
    pub fn published_columns(
        &self,
        table: &TableSchema,
    ) -> Result<PublishedColumns, UnknownKeyColumn> {
        let (schema, name) = (table.schema(), table.table());
        let key = match self.key_columns(schema, name) {
            Some(names) => names
                .iter()
                .map(|column| {
                    table.column_index(column).ok_or_else(|| UnknownKeyColumn {
                        table: table.qualified_name(),
                        column: column.clone(),
                    })
                })
                .collect::<Result<Vec<usize>, UnknownKeyColumn>>()?,
            None => table.key_indexes().to_vec(),
        };
        let columns = table.columns();
        let values = columns
            .iter()
            .enumerate()
            .filter(|(_, c)| self.admits_column(schema, name, &c.name))
            .map(|(i, _)| i)
            .collect();
        let rules = &self.rules;
        Ok(PublishedColumns {
            key,
            values,
            masks: columns
                .iter()
                .map(|c| rules.mask(schema, name, c))
                .collect(),
            source_types: columns
                .iter()
                .map(|c| rules.source_type_parameters(schema, name, c))
                .collect(),
        })
    }

    /// Whether column `column` of `schema.table` is in event values.
    pub fn admits_column(&self, schema: &str, table: &str, column: &str) -> bool {
        matches!(self.columns, Selection::All)
            || self.columns.selects(&format!("{schema}.{table}.{column}"))
    }

    /// The configured key columns of `schema.table`: the first `messageKeyColumns` entry whose
    /// pattern matches.
    pub fn key_columns(&self, schema: &str, table: &str) -> Option<&[String]> {
        if self.key_columns.is_empty() {
            return None;
        }
        let name = format!("{schema}.{table}");
        self.key_columns
            .iter()
            .find(|(pattern, _)| pattern.matches(&name))
            .map(|(_, columns)| columns.as_slice())
    }
}
