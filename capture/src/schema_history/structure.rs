//! A table's structure in Debezium's shape (`io.debezium.connector.schema.Table`): the `table`
//! object of a schema change event's `tableChanges`, and of a schema history record.
//!
//! The type round-trips through `typeExpression`, the canonical form of [`OracleType`]
//! (`NUMBER(10)`, `VARCHAR2(16 CHAR)`, `TIMESTAMP(6) WITH TIME ZONE`), so a structure read back
//! from the history types redo values exactly as the catalog's did. The primary key round-trips
//! through `primaryKeyColumnNames` (in key order). What the dictionary model does not hold
//! (defaults, comments, identity columns, charsets) is written as Debezium writes an absent
//! value: `null` or `false`.
//!
//! The numbers a row carries when LogMiner cannot name its table (`"UNKNOWN"."OBJ# n"`, `"COL
//! n"`) round-trip too: the object numbers as the table attributes `OBJECT_ID` and
//! `DATA_OBJECT_ID`, the names Debezium's Oracle connector gives them
//! (`OracleDatabaseSchema.ATTRIBUTE_OBJECT_ID`, written by `OracleConnection.getAttributeDetails`),
//! and each column's segment column number as `segmentColumnId`, a field of ours that is left
//! out when unknown. A record written before either existed reads back without them.

use serde::{Deserialize, Serialize};

use crate::dictionary::{Column, ObjectNumbers, OracleType, TableSchema};

/// `tableChanges[].table`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TableStructure {
    pub default_charset_name: Option<String>,
    pub primary_key_column_names: Vec<String>,
    pub columns: Vec<ColumnStructure>,
    pub comment: Option<String>,
    #[serde(default)]
    pub attributes: Vec<TableAttribute>,
}

/// `tableChanges[].table.attributes[]` (none are written; kept so a record with some is read).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableAttribute {
    pub name: String,
    pub value: Option<String>,
}

/// `tableChanges[].table.columns[]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnStructure {
    pub name: String,
    /// `java.sql.Types` code as Oracle's JDBC driver reports the type.
    pub jdbc_type: i32,
    pub native_type: Option<i32>,
    /// The type's name without its size (`VARCHAR2`, `NUMBER`, `TIMESTAMP(6) WITH TIME ZONE`
    /// keeps its precision, as the catalog writes it).
    pub type_name: String,
    /// The full type: the form the structure is read back from.
    pub type_expression: String,
    pub charset_name: Option<String>,
    /// Precision of numbers, length of character and RAW types.
    pub length: Option<i32>,
    /// Scale of numbers, fractional precision of timestamps and intervals.
    pub scale: Option<i32>,
    /// 1-based position in the table.
    pub position: i32,
    pub optional: bool,
    pub auto_incremented: bool,
    pub generated: bool,
    pub comment: Option<String>,
    pub has_default_value: bool,
    pub default_value_expression: Option<String>,
    pub enum_values: Option<Vec<String>>,
    /// `ALL_TAB_COLS.SEGMENT_COLUMN_ID` ([`Column::segment_column`]); absent when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment_column_id: Option<u16>,
}

/// The structure as Debezium's Connect serializer writes it into schema change events: the
/// history's form without `attributes` and `hasDefaultValue`, which only Debezium's JSON
/// history document carries (`ConnectTableChangeSerializer` beside `JsonTableChangeSerializer`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectTableStructure<'a> {
    default_charset_name: Option<&'a str>,
    primary_key_column_names: &'a [String],
    columns: Vec<ConnectColumnStructure<'a>>,
    comment: Option<&'a str>,
}

/// A column of [`ConnectTableStructure`].
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ConnectColumnStructure<'a> {
    name: &'a str,
    jdbc_type: i32,
    native_type: Option<i32>,
    type_name: &'a str,
    type_expression: &'a str,
    charset_name: Option<&'a str>,
    length: Option<i32>,
    scale: Option<i32>,
    position: i32,
    optional: bool,
    auto_incremented: bool,
    generated: bool,
    comment: Option<&'a str>,
    default_value_expression: Option<&'a str>,
    enum_values: Option<&'a [String]>,
}

impl TableStructure {
    /// The form schema change events carry ([`ConnectTableStructure`]).
    pub fn connect_form(&self) -> ConnectTableStructure<'_> {
        ConnectTableStructure {
            default_charset_name: self.default_charset_name.as_deref(),
            primary_key_column_names: &self.primary_key_column_names,
            columns: self
                .columns
                .iter()
                .map(|c| ConnectColumnStructure {
                    name: &c.name,
                    jdbc_type: c.jdbc_type,
                    native_type: c.native_type,
                    type_name: &c.type_name,
                    type_expression: &c.type_expression,
                    charset_name: c.charset_name.as_deref(),
                    length: c.length,
                    scale: c.scale,
                    position: c.position,
                    optional: c.optional,
                    auto_incremented: c.auto_incremented,
                    generated: c.generated,
                    comment: c.comment.as_deref(),
                    default_value_expression: c.default_value_expression.as_deref(),
                    enum_values: c.enum_values.as_deref(),
                })
                .collect(),
            comment: self.comment.as_deref(),
        }
    }
}

/// A structure that cannot be turned back into a table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StructureError {
    #[error("column {column}: type `{expression}`: {message}")]
    Type {
        column: String,
        expression: String,
        message: String,
    },
    #[error("primary key column {0} is not a column of the table")]
    UnknownKeyColumn(String),
    #[error("table attribute {name} is not a number: {value:?}")]
    Attribute { name: String, value: String },
    #[error("{0}")]
    Table(#[from] crate::dictionary::SchemaError),
}

impl TableStructure {
    /// The structure of `table`.
    pub fn of(table: &TableSchema) -> Self {
        Self {
            default_charset_name: None,
            primary_key_column_names: table.key_columns().map(|c| c.name.clone()).collect(),
            columns: table
                .columns()
                .iter()
                .zip(1..)
                .map(|(column, position)| ColumnStructure::of(column, position))
                .collect(),
            comment: None,
            attributes: table
                .object()
                .map(|object| {
                    vec![
                        TableAttribute {
                            name: OBJECT_ID.to_owned(),
                            value: Some(object.object_id.to_string()),
                        },
                        TableAttribute {
                            name: DATA_OBJECT_ID.to_owned(),
                            value: object.data_object_id.map(|id| id.to_string()),
                        },
                    ]
                })
                .unwrap_or_default(),
        }
    }

    /// The `OBJECT_ID` and `DATA_OBJECT_ID` attributes; `None` without `OBJECT_ID`.
    fn object(&self) -> Result<Option<ObjectNumbers>, StructureError> {
        let Some(object_id) = self.number_attribute(OBJECT_ID)? else {
            return Ok(None);
        };
        Ok(Some(ObjectNumbers {
            object_id,
            data_object_id: self.number_attribute(DATA_OBJECT_ID)?,
        }))
    }

    /// A numeric attribute; `None` when absent or null.
    fn number_attribute(&self, name: &str) -> Result<Option<u64>, StructureError> {
        let Some(value) = self
            .attributes
            .iter()
            .find(|a| a.name == name)
            .and_then(|a| a.value.as_ref())
        else {
            return Ok(None);
        };
        value
            .parse()
            .map(Some)
            .map_err(|_| StructureError::Attribute {
                name: name.to_owned(),
                value: value.clone(),
            })
    }

    /// The table `owner.name` with this structure.
    pub fn to_table(&self, owner: &str, name: &str) -> Result<TableSchema, StructureError> {
        let mut columns = Vec::with_capacity(self.columns.len());
        let mut ordered: Vec<&ColumnStructure> = self.columns.iter().collect();
        ordered.sort_by_key(|c| c.position);
        for column in ordered {
            // The history holds what the catalog reported, unsupported types included.
            let data_type =
                OracleType::parse_catalog(&column.type_expression).map_err(|error| {
                    StructureError::Type {
                        column: column.name.clone(),
                        expression: column.type_expression.clone(),
                        message: error.to_string(),
                    }
                })?;
            let mut read = Column::new(column.name.clone(), data_type).nullable(column.optional);
            read.segment_column = column.segment_column_id;
            columns.push(read);
        }
        for (name, position) in self.primary_key_column_names.iter().zip(1u16..) {
            let column = columns
                .iter_mut()
                .find(|c| &c.name == name)
                .ok_or_else(|| StructureError::UnknownKeyColumn(name.clone()))?;
            column.key_position = Some(position);
            column.nullable = false;
        }
        let table = TableSchema::new(owner, name, columns)?;
        Ok(match self.object()? {
            Some(object) => table.with_object(object),
            None => table,
        })
    }
}

impl ColumnStructure {
    fn of(column: &Column, position: i32) -> Self {
        let (length, scale) = size(&column.data_type);
        Self {
            name: column.name.clone(),
            jdbc_type: jdbc_type(&column.data_type),
            native_type: None,
            type_name: type_name(&column.data_type),
            type_expression: column.data_type.to_string(),
            charset_name: None,
            length,
            scale,
            position,
            optional: column.nullable,
            auto_incremented: false,
            generated: false,
            comment: None,
            has_default_value: false,
            default_value_expression: None,
            enum_values: None,
            segment_column_id: column.segment_column,
        }
    }
}

/// Debezium's attribute names for a table's object numbers.
const OBJECT_ID: &str = "OBJECT_ID";
const DATA_OBJECT_ID: &str = "DATA_OBJECT_ID";

/// The `java.sql.Types` (or `oracle.jdbc.OracleTypes`) code Oracle's driver reports.
fn jdbc_type(data_type: &OracleType) -> i32 {
    match data_type {
        OracleType::Number { .. } => 2,
        OracleType::Float { .. } => 6,
        OracleType::BinaryFloat => 100,
        OracleType::BinaryDouble => 101,
        OracleType::Char { .. } => 1,
        OracleType::NChar { .. } => -15,
        OracleType::Varchar2 { .. } => 12,
        OracleType::NVarchar2 { .. } => -9,
        OracleType::Long => -1,
        OracleType::Clob => 2005,
        OracleType::NClob => 2011,
        OracleType::Blob => 2004,
        OracleType::Raw { .. } => -3,
        OracleType::LongRaw => -4,
        // The driver reports DATE as TIMESTAMP (it carries a time of day).
        OracleType::Date | OracleType::Timestamp { .. } => 93,
        OracleType::TimestampWithTimeZone { .. } => -101,
        OracleType::TimestampWithLocalTimeZone { .. } => -102,
        OracleType::IntervalYearToMonth { .. } => -103,
        OracleType::IntervalDayToSecond { .. } => -104,
        OracleType::RowId | OracleType::URowId { .. } => -8,
        OracleType::XmlType => 2009,
        // oracle.jdbc.OracleTypes.JSON and java.sql.Types.BOOLEAN.
        OracleType::Json => 2016,
        OracleType::Boolean => 16,
        // java.sql.Types.OTHER: the capture does not know what the driver would say.
        OracleType::Unsupported { .. } => 1111,
    }
}

/// The type's name as the catalog's `DATA_TYPE` writes it.
fn type_name(data_type: &OracleType) -> String {
    let full = data_type.to_string();
    match data_type {
        OracleType::Timestamp { .. }
        | OracleType::TimestampWithTimeZone { .. }
        | OracleType::TimestampWithLocalTimeZone { .. }
        | OracleType::IntervalYearToMonth { .. }
        | OracleType::IntervalDayToSecond { .. } => full,
        _ => full
            .split_once('(')
            .map_or(full.as_str(), |(name, _)| name)
            .to_owned(),
    }
}

/// `(length, scale)` as Debezium reports them.
fn size(data_type: &OracleType) -> (Option<i32>, Option<i32>) {
    let int = |v: u32| i32::try_from(v).ok();
    match data_type {
        OracleType::Number { precision, scale } => (
            precision.map(i32::from),
            scale.map(i32::from).or(precision.map(|_| 0)),
        ),
        OracleType::Float { binary_precision } => (Some(i32::from(*binary_precision)), None),
        OracleType::Timestamp {
            fractional_precision,
        }
        | OracleType::TimestampWithTimeZone {
            fractional_precision,
        }
        | OracleType::TimestampWithLocalTimeZone {
            fractional_precision,
        } => (None, Some(i32::from(*fractional_precision))),
        OracleType::IntervalYearToMonth { year_precision } => {
            (Some(i32::from(*year_precision)), None)
        }
        OracleType::IntervalDayToSecond {
            day_precision,
            fractional_precision,
        } => (
            Some(i32::from(*day_precision)),
            Some(i32::from(*fractional_precision)),
        ),
        other => (other.max_length().and_then(int), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn orders() -> TableSchema {
        let t = |s| OracleType::parse(s).unwrap();
        TableSchema::new(
            "APP",
            "ORDERS",
            vec![
                Column::new("REGION", t("VARCHAR2(8 CHAR)")).key(2),
                Column::new("ID", t("NUMBER(10)")).key(1),
                Column::new("TOTAL", t("NUMBER(12,2)")).nullable(false),
                Column::new("AT", t("TIMESTAMP(3) WITH TIME ZONE")),
                Column::new("BODY", t("CLOB")),
            ],
        )
        .unwrap()
    }

    #[test]
    fn a_structure_round_trips_to_the_same_table() {
        let table = orders();
        let structure = TableStructure::of(&table);
        assert_eq!(structure.primary_key_column_names, ["ID", "REGION"]);
        let json = serde_json::to_string(&structure).unwrap();
        let read: TableStructure = serde_json::from_str(&json).unwrap();
        assert_eq!(read.to_table("APP", "ORDERS").unwrap(), table);
    }

    #[test]
    fn columns_are_described_like_debezium() {
        let structure = TableStructure::of(&orders());
        let json = serde_json::to_value(&structure.columns[2]).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "name": "TOTAL", "jdbcType": 2, "nativeType": null, "typeName": "NUMBER",
                "typeExpression": "NUMBER(12,2)", "charsetName": null, "length": 12, "scale": 2,
                "position": 3, "optional": false, "autoIncremented": false, "generated": false,
                "comment": null, "hasDefaultValue": false, "defaultValueExpression": null,
                "enumValues": null
            })
        );
        let region = &structure.columns[0];
        assert_eq!(
            (region.type_name.as_str(), region.length, region.jdbc_type),
            ("VARCHAR2", Some(8), 12)
        );
        let at = &structure.columns[3];
        assert_eq!(
            (at.type_name.as_str(), at.scale, at.jdbc_type),
            ("TIMESTAMP(3) WITH TIME ZONE", Some(3), -101)
        );
    }

    #[test]
    fn a_damaged_structure_is_refused() {
        let mut structure = TableStructure::of(&orders());
        structure.columns[1].type_expression = "NUMBER(99)".into();
        assert!(matches!(
            structure.to_table("APP", "ORDERS"),
            Err(StructureError::Type { column, .. }) if column == "ID"
        ));
        let mut structure = TableStructure::of(&orders());
        structure.primary_key_column_names.push("NOPE".into());
        assert!(matches!(
            structure.to_table("APP", "ORDERS"),
            Err(StructureError::UnknownKeyColumn(name)) if name == "NOPE"
        ));
    }
}
