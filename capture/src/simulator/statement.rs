//! The statements of DML rows as LogMiner writes them: the INSERT and UPDATE text of SQL_REDO
//! (and of an UPDATE's deferred SQL_UNDO), with the columns the logging level puts in a where
//! clause. Shared by the DML steps and the redo rows that render undo late.

use std::borrow::Cow;

use super::database::TableText;
use super::render::{write_condition, write_rowid_condition, write_value};
use super::scenario::TableLogging;
use crate::value::Value;

/// The before-image columns the where clause of an UPDATE carries (logminer.md §3, corpus #2):
/// ALL logging: every column; PK logging: the key and the changed columns (the changed
/// columns' old values come from undo); no logging: the changed columns only. LOB and LONG
/// columns never appear.
pub(super) fn logged_columns<'a>(
    table: &'a TableText,
    logging: TableLogging,
    changed: &[usize],
) -> Cow<'a, [usize]> {
    let columns = table.schema.columns();
    let key = &table.identification_key;
    if logging == TableLogging::All || (logging == TableLogging::PrimaryKey && key.is_empty()) {
        return Cow::Borrowed(&table.non_lob);
    }
    (0..columns.len())
        .filter(|&i| !columns[i].data_type.is_lob_like())
        .filter(|i| match logging {
            TableLogging::All => true,
            TableLogging::PrimaryKey if key.is_empty() => true,
            TableLogging::PrimaryKey => key.contains(i) || changed.contains(i),
            TableLogging::None => changed.contains(i),
        })
        .collect()
}

/// `write(out, i)` for each column index `i` of `columns`, with `separator` between them.
fn write_list(
    out: &mut String,
    columns: &[usize],
    separator: &str,
    mut write: impl FnMut(&mut String, usize),
) {
    for (n, &i) in columns.iter().enumerate() {
        if n > 0 {
            out.push_str(separator);
        }
        write(out, i);
    }
}

/// ` set "A" = v, "B" = v`.
pub(super) fn write_set(out: &mut String, table: &TableText, columns: &[usize], values: &[Value]) {
    out.push_str(" set ");
    write_list(out, columns, ", ", |out, i| {
        out.push_str(&table.quoted_columns[i]);
        out.push_str(" = ");
        write_value(out, &values[i], &table.schema.columns()[i].data_type);
    });
}

/// ` where "A" = v and "B" IS NULL and ROWID = '...';`
pub(super) fn write_where(
    out: &mut String,
    table: &TableText,
    columns: &[usize],
    values: &[Value],
    row_id: &str,
) {
    for (n, &i) in columns.iter().enumerate() {
        write_condition(
            out,
            &table.quoted_columns[i],
            &values[i],
            &table.schema.columns()[i].data_type,
            n == 0,
        );
    }
    write_rowid_condition(out, row_id, columns.is_empty());
    out.push(';');
}

/// The length of an UPDATE's SQL_UNDO: its redo with the set columns' values swapped, before
/// for after (in the set list) and after for before (in the where clause).
pub(super) fn update_undo_length(
    text: &TableText,
    set: &[usize],
    logged: &[usize],
    (before, after): (&[Value], &[Value]),
    redo_length: usize,
    scratch: &mut String,
) -> usize {
    let columns = text.schema.columns();
    let mut length = redo_length as isize;
    let mut rendered = |value: &Value, column: usize| {
        scratch.clear();
        write_value(scratch, value, &columns[column].data_type);
        scratch.len() as isize
    };
    for &c in set {
        let (old, new) = (rendered(&before[c], c), rendered(&after[c], c));
        length += old - new;
        if logged.contains(&c) {
            let condition = |value: &Value, rendered: isize| {
                if value.is_null() {
                    " IS NULL".len() as isize
                } else {
                    " = ".len() as isize + rendered
                }
            };
            length += condition(&after[c], new) - condition(&before[c], old);
        }
    }
    length.max(0) as usize
}

/// An UPDATE's SQL_UNDO: its set columns back to their `before` values where they hold `after`.
pub(super) fn render_update_undo(
    table: &TableText,
    set: &[usize],
    logged: &[usize],
    (before, after): (&[Value], &[Value]),
    row_id: &str,
) -> String {
    let mut sql = String::with_capacity(96 + (set.len() + logged.len()) * 48);
    write_update(&mut sql, table, set, before, logged, after, row_id);
    sql
}

/// `update "O"."T" set … where …;` appended to `out`.
pub(super) fn write_update(
    out: &mut String,
    table: &TableText,
    set: &[usize],
    new: &[Value],
    logged: &[usize],
    old: &[Value],
    row_id: &str,
) {
    out.push_str("update ");
    out.push_str(&table.quoted_table);
    write_set(out, table, set, new);
    write_where(out, table, logged, old, row_id);
}

pub(super) fn render_insert(table: &TableText, values: &[Value], columns: &[usize]) -> String {
    let mut sql = String::with_capacity(96 + columns.len() * 48);
    sql.push_str("insert into ");
    sql.push_str(&table.quoted_table);
    sql.push('(');
    write_list(&mut sql, columns, ",", |sql, i| {
        sql.push_str(&table.quoted_columns[i]);
    });
    sql.push_str(") values (");
    write_list(&mut sql, columns, ",", |sql, i| {
        write_value(sql, &values[i], &table.schema.columns()[i].data_type);
    });
    sql.push_str(");");
    sql
}
