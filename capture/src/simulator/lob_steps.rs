//! LOB changes (logminer.md §3 "LOBs", §6): how LOB content reaches the redo.
//!
//! - An INSERT of a row with a non-NULL LOB writes `EMPTY_CLOB()` / `EMPTY_BLOB()` in the INSERT
//!   (ROW_ID `AAAAAAAAAAAAAAAAAA`), then the content: up to [`INLINE_LOB_BYTES`] bytes as a
//!   follow-up `update ... set "C" = '...' where <logged columns> and ROWID = '...';` (corpus #9,
//!   #11), larger content as a SEL_LOB_LOCATOR row and LOB_WRITE rows of at most
//!   [`LOB_WRITE_CHARS`] UTF-16 code units (bytes for BLOB) each; the steps' offsets,
//!   amounts and lengths count the same units, as DBMS_LOB does ([`Content`]).
//! - `lob_write`, `lob_trim` and `lob_erase` steps write a SEL_LOB_LOCATOR row, then LOB_WRITE
//!   pieces, one LOB_TRIM or one LOB_ERASE (code 29) row.
//!
//! The SEL_LOB_LOCATOR text is the 19c block verbatim (buffer width 6156), with a where clause of
//! the key columns (all non-LOB columns without a key) and no ROWID, as in the one real capture
//! known. The LOB_WRITE, LOB_TRIM and LOB_ERASE whitespace is UNVERIFIED; the capture's parser
//! ignores whitespace. LOB changes have SQL_UNDO NULL; their undo rows restore the old content
//! with an UPDATE (UNVERIFIED).

use std::fmt::Write as _;
use std::sync::Arc;

use super::database::{PENDING, Transaction, Version};
use super::render::{write_condition, write_hex, write_literal, write_unistr, write_value};
use super::scenario::{Dml, LobChange, Values};
use super::{ScenarioError, Simulator};
use crate::dictionary::{LobKind, OracleType};
use crate::source::OperationCode;
use crate::value::{Value, binary};

/// LOB content up to this many bytes is logged inline (as an UPDATE), like Oracle's in-row LOBs.
pub(crate) const INLINE_LOB_BYTES: usize = 3964;
/// UTF-16 code units (CLOB, NCLOB) or bytes (BLOB) per LOB_WRITE row.
pub(crate) const LOB_WRITE_CHARS: usize = 6000;

impl Simulator {
    /// The content of a LOB column just inserted as `EMPTY_*()`.
    pub(super) fn write_lob_value(
        &mut self,
        tx: &mut Transaction,
        t: usize,
        number: u64,
        column: usize,
        value: Value,
    ) {
        let size = match &value {
            Value::Text(text) => text.len(),
            Value::Bytes(bytes) => bytes.len(),
            _ => 0,
        };
        if size <= INLINE_LOB_BYTES {
            self.update_row(tx, t, number, &mut [(column, value)], true);
            return;
        }
        let Some(row_id) = self.set_lob(tx, t, number, column, value.clone()) else {
            return;
        };
        self.write_locator(tx, t, number, column, &row_id);
        self.write_pieces(tx, t, column, &row_id, &value, 1);
    }

    pub(super) fn lob_step(
        &mut self,
        line: usize,
        dml: Dml,
        where_: Values,
        column_name: &str,
        change: LobChange,
    ) -> Result<(), ScenarioError> {
        let field = match change {
            LobChange::Write { .. } => "lob_write",
            LobChange::Trim { .. } => "lob_trim",
            LobChange::Erase { .. } => "lob_erase",
        };
        let t = self.table_named(line, field, &dml.table)?;
        let schema = Arc::clone(&self.tables[t].schema);
        let column = schema
            .column_index(column_name)
            .filter(|&i| schema.columns()[i].data_type.lob_kind().is_some())
            .ok_or_else(|| {
                ScenarioError::new(
                    line,
                    "column",
                    format!(
                        "{column_name} is not a LOB column of {}",
                        schema.qualified_name()
                    ),
                )
            })?;
        let data_type = &schema.columns()[column].data_type;
        let conditions = self.typed(line, "where", t, where_)?;
        let rows = self.matching_rows(line, t, &conditions, &dml.tx)?;
        let [number] = rows.numbers()[..] else {
            return Err(ScenarioError::new(
                line,
                "where",
                format!(
                    "matches {} rows; a LOB step changes one",
                    rows.numbers().len()
                ),
            ));
        };
        let current = self.tables[t]
            .rows
            .get(&number)
            .and_then(|r| r.current())
            .and_then(|v| v.get(column).cloned())
            .unwrap_or(Value::Null);
        let blob = *data_type == OracleType::Blob;
        let mut content: Vec<Content> = lob_units(&current);
        let (operation, piece) = match &change {
            LobChange::Write { offset, data } => {
                let written: Vec<Content> = if blob {
                    binary::decode_hex(data)
                        .map_err(|e| ScenarioError::new(line, "data", e.to_string()))?
                        .into_iter()
                        .map(Content::Byte)
                        .collect()
                } else {
                    data.encode_utf16().map(Content::Unit).collect()
                };
                let start = (*offset - 1) as usize;
                let filler = filler(blob);
                if content.len() < start {
                    content.resize(start, filler);
                }
                let end = (start + written.len()).min(content.len());
                content.splice(start..end, written.iter().copied());
                (
                    OperationCode::LobWrite,
                    Some((units_value(&written, blob), *offset)),
                )
            }
            LobChange::Trim { length } => {
                if *length as usize > content.len() {
                    return Err(ScenarioError::new(
                        line,
                        "length",
                        format!(
                            "{length} is beyond the LOB's length {} (ORA-22926)",
                            content.len()
                        ),
                    ));
                }
                content.truncate(*length as usize);
                (OperationCode::LobTrim, None)
            }
            LobChange::Erase { offset, amount } => {
                let start = (*offset - 1) as usize;
                let end = (start + *amount as usize).min(content.len());
                let filler = filler(blob);
                for unit in content.iter_mut().take(end).skip(start) {
                    *unit = filler;
                }
                (OperationCode::LobErase, None)
            }
        };
        let (key, mut tx) = self.take_transaction(&dml.tx, dml.user.as_deref());
        self.ensure_started(&mut tx);
        if let Some(row_id) = self.set_lob(&mut tx, t, number, column, units_value(&content, blob))
        {
            self.write_locator(&tx, t, number, column, &row_id);
            let loc = locator_variable(data_type);
            match (&change, piece) {
                (_, Some((written, offset))) => {
                    self.write_pieces(&tx, t, column, &row_id, &written, offset)
                }
                (LobChange::Trim { length }, _) => {
                    self.write_lob_row(
                        &tx,
                        t,
                        &row_id,
                        operation,
                        format!("dbms_lob.trim(loc_{loc}, {length});"),
                    );
                }
                (LobChange::Erase { offset, amount }, _) => {
                    self.write_lob_row(
                        &tx,
                        t,
                        &row_id,
                        operation,
                        format!("dbms_lob.erase(loc_{loc}, {amount}, {offset});"),
                    );
                }
                (LobChange::Write { .. }, None) => {}
            }
        }
        self.transactions.insert(key, tx);
        Ok(())
    }

    /// Sets a LOB column as a change of `tx`; the row's ROWID.
    fn set_lob(
        &mut self,
        tx: &mut Transaction,
        t: usize,
        number: u64,
        column: usize,
        value: Value,
    ) -> Option<Arc<str>> {
        let scn = self.catalog.scn;
        let row = self.tables[t].rows.get_mut(&number)?;
        let before = row.current().cloned()?;
        let mut after = before.to_vec();
        after[column] = value;
        row.versions.push(Version {
            scn: PENDING,
            values: Some(Arc::from(after)),
        });
        row.locked_by = Some(tx.id);
        let row_id = Arc::clone(&row.row_id);
        tx.record_update(t, number, &row_id, scn, &[column], before);
        Some(row_id)
    }

    fn write_locator(
        &mut self,
        tx: &Transaction,
        t: usize,
        number: u64,
        column: usize,
        row_id: &Arc<str>,
    ) {
        let table = &self.tables[t];
        let Some(values) = table.rows.get(&number).and_then(|r| r.current()) else {
            return;
        };
        let columns = table.schema.columns();
        let key: Vec<usize> = if table.schema.has_key() {
            table.schema.key_indexes().to_vec()
        } else {
            (0..columns.len())
                .filter(|&i| !columns[i].data_type.is_lob_like())
                .collect()
        };
        let mut sql = String::from(
            "DECLARE \n loc_c CLOB; \n buf_c VARCHAR2(6156); \n loc_b BLOB; \n buf_b RAW(6156); \n \
             loc_nc NCLOB; \n buf_nc NVARCHAR2(6156); \nBEGIN\n select ",
        );
        let _ = write!(
            sql,
            "{} into loc_{} from {}",
            table.text.quoted_columns[column],
            locator_variable(&columns[column].data_type),
            table.text.quoted_table
        );
        for (n, &i) in key.iter().enumerate() {
            write_condition(
                &mut sql,
                &table.text.quoted_columns[i],
                &values[i],
                &columns[i].data_type,
                n == 0,
            );
        }
        sql.push_str(" for update;");
        self.write_lob_row(tx, t, row_id, OperationCode::SelectLobLocator, sql);
    }

    /// LOB_WRITE rows for `value` written at 1-based `offset`, in pieces.
    fn write_pieces(
        &mut self,
        tx: &Transaction,
        t: usize,
        column: usize,
        row_id: &Arc<str>,
        value: &Value,
        offset: u64,
    ) {
        let data_type = self.tables[t].schema.columns()[column].data_type.clone();
        let variable = locator_variable(&data_type);
        let mut at = offset;
        let units = lob_units(value);
        for piece in pieces(&units) {
            let mut sql = format!(" buf_{variable} := ");
            match units_value(piece, data_type == OracleType::Blob) {
                Value::Bytes(bytes) => {
                    sql.push_str("HEXTORAW('");
                    write_hex(&mut sql, &bytes);
                    sql.push_str("')");
                }
                Value::Text(text) if data_type == OracleType::NClob && !text.is_ascii() => {
                    write_unistr(&mut sql, &text)
                }
                Value::Text(text) => write_literal(&mut sql, &text),
                _ => sql.push_str("''"),
            }
            let _ = write!(
                sql,
                "; \n  dbms_lob.write(loc_{variable}, {}, {at}, buf_{variable});",
                piece.len()
            );
            self.write_lob_row(tx, t, row_id, OperationCode::LobWrite, sql);
            at += piece.len() as u64;
        }
    }

    /// The 32K_BEGIN, 32K_WRITE and 32K_END rows of an extended string written to a row
    /// (shapes: `redo::extended`, after Debezium's `ExtendedStringParser`, DBZ-8039).
    pub(super) fn write_extended_string(
        &mut self,
        tx: &Transaction,
        t: usize,
        number: u64,
        column: usize,
        value: &Value,
    ) {
        let table = &self.tables[t];
        let Some(stored) = table.rows.get(&number) else {
            return;
        };
        let row_id = Arc::clone(&stored.row_id);
        let values: Vec<Value> = stored.current().map(|v| v.to_vec()).unwrap_or_default();
        let columns = table.schema.columns();
        let mut update = format!(
            "update {} a set a.{} = :{}",
            table.text.quoted_table, table.text.quoted_columns[column], columns[column].name
        );
        let key: Vec<usize> = table.schema.key_indexes().to_vec();
        for (n, &i) in key.iter().enumerate() {
            update.push_str(if n == 0 { " where " } else { " and " });
            update.push_str("a.");
            update.push_str(&table.text.quoted_columns[i]);
            update.push_str(" = ");
            let mut literal = String::new();
            write_value(
                &mut literal,
                values.get(i).unwrap_or(&Value::Null),
                &columns[i].data_type,
            );
            update.push_str(&literal);
        }
        update.push(';');
        let mut begin = String::from(
            "DECLARE \n TempLob CLOB;\n buf_c   VARCHAR2(32767);\n Stmt    CLOB;\nBEGIN\n DBMS_LOB.CreateTemporary(TempLob, FALSE);\n Stmt := ",
        );
        write_literal(&mut begin, &update);
        begin.push(';');
        self.write_lob_row(tx, t, &row_id, OperationCode::ExtendedStringBegin, begin);
        match value {
            Value::Bytes(bytes) => {
                for piece in bytes.chunks(2000) {
                    let mut sql = String::from("\n buf_b := HEXTORAW('");
                    write_hex(&mut sql, piece);
                    let _ = write!(
                        sql,
                        "');\n DBMS_LOB.WriteAppend(TempLob, {}, buf_b);",
                        piece.len()
                    );
                    self.write_lob_row(tx, t, &row_id, OperationCode::ExtendedStringWrite, sql);
                }
            }
            Value::Text(text) => {
                let chars: Vec<char> = text.chars().collect();
                for piece in chars.chunks(4000) {
                    let piece: String = piece.iter().collect();
                    let mut sql = String::from("\n buf_c := ");
                    write_literal(&mut sql, &piece);
                    sql.push_str(";\n DBMS_LOB.WriteAppend(TempLob, LENGTH(buf_c), buf_c);");
                    self.write_lob_row(tx, t, &row_id, OperationCode::ExtendedStringWrite, sql);
                }
            }
            _ => {}
        }
        self.write_lob_row(
            tx,
            t,
            &row_id,
            OperationCode::ExtendedStringEnd,
            String::new(),
        );
    }

    fn write_lob_row(
        &mut self,
        tx: &Transaction,
        t: usize,
        row_id: &Arc<str>,
        operation: OperationCode,
        sql: String,
    ) {
        let mut spec = self.tx_spec(tx, operation, Arc::clone(row_id), Some(t));
        spec.sql_redo = Some(sql);
        self.redo.write(spec);
    }
}

/// One UTF-16 code unit (CLOB, NCLOB) or byte (BLOB) of LOB content: the units DBMS_LOB counts
/// offsets, amounts and lengths in. A CLOB in a varying-width database character set (AL32UTF8)
/// and every NCLOB (AL16UTF16) is stored as 2-byte Unicode, and a character outside the BMP
/// takes two of those units (Oracle "Application Developer's Guide - Large Objects", "Varying-Width
/// Character Data": "CLOB/NCLOB values are stored in the database using the fixed width 2 byte
/// Unicode character set if the database CHAR/NCHAR character set is varying-width"; ODPI-C's
/// dpiLob_writeBytes: "the number of characters ... is defined by the number of UCS-2
/// codepoints").
#[derive(Clone, Copy, Debug, PartialEq)]
enum Content {
    Unit(u16),
    Byte(u8),
}

/// What Oracle fills a gap or an erased range with: spaces in character LOBs, zero bytes in BLOBs.
fn filler(blob: bool) -> Content {
    if blob {
        Content::Byte(0)
    } else {
        Content::Unit(u16::from(b' '))
    }
}

/// `units` cut into LOB_WRITE pieces of at most [`LOB_WRITE_CHARS`] units, never between the
/// two halves of a surrogate pair (a piece's buffer is text).
fn pieces(units: &[Content]) -> Vec<&[Content]> {
    let mut pieces = Vec::new();
    let mut rest = units;
    while !rest.is_empty() {
        let mut end = rest.len().min(LOB_WRITE_CHARS);
        if end < rest.len()
            && matches!(rest[end - 1], Content::Unit(unit) if (0xD800..0xDC00).contains(&unit))
        {
            end -= 1;
        }
        let (piece, tail) = rest.split_at(end);
        pieces.push(piece);
        rest = tail;
    }
    pieces
}

fn lob_units(value: &Value) -> Vec<Content> {
    match value {
        Value::Text(text) => text.encode_utf16().map(Content::Unit).collect(),
        Value::Bytes(bytes) => bytes.iter().copied().map(Content::Byte).collect(),
        _ => Vec::new(),
    }
}

fn units_value(units: &[Content], blob: bool) -> Value {
    if units.is_empty() {
        return Value::Null;
    }
    if blob {
        Value::Bytes(
            units
                .iter()
                .map(|u| match u {
                    Content::Byte(b) => *b,
                    Content::Unit(_) => 0,
                })
                .collect(),
        )
    } else {
        let units: Vec<u16> = units
            .iter()
            .map(|u| match u {
                Content::Unit(unit) => *unit,
                Content::Byte(_) => u16::from(b' '),
            })
            .collect();
        // A trim or write that splits a surrogate pair leaves half a character, as in Oracle;
        // the text shows it as U+FFFD.
        Value::Text(String::from_utf16_lossy(&units))
    }
}

/// `c`, `nc` or `b`: the suffix of `loc_` / `buf_` for a LOB column.
fn locator_variable(data_type: &OracleType) -> &'static str {
    match data_type.lob_kind() {
        Some(LobKind::Blob) => "b",
        Some(LobKind::NClob) => "nc",
        Some(LobKind::Clob) | None => "c",
    }
}
