//! DML steps: INSERT, UPDATE and DELETE rows with SQL_REDO and SQL_UNDO (logminer.md §3).
//!
//! Every change appends one row version and one [`Change`] (its undo) and writes one logical
//! row. The where clause of an UPDATE holds the before-image columns the logging level puts in
//! the redo ([`logged_columns`]); a DELETE always carries every column (its before image comes
//! from undo, corpus #3); an INSERT names every column, LOB columns as `EMPTY_*()` followed by
//! their content (`lob.rs`).

use std::sync::Arc;

use super::database::{Change, PENDING, Table, TableRow, Transaction, Undo, Version};
use super::render::{write_condition, write_rowid_condition, write_value};
use super::scenario::{Dml, TableLogging, Values};
use super::{ScenarioError, Simulator, values};
use crate::source::OperationCode;
use crate::source::row::PLACEHOLDER_ROW_ID;
use crate::value::Value;

impl Simulator {
    /// Types scenario values for table `t`; errors name `field.COLUMN`.
    pub(super) fn typed(
        &self,
        line: usize,
        field: &str,
        t: usize,
        values: Values,
    ) -> Result<Vec<(usize, Value)>, ScenarioError> {
        let table = &self.tables[t];
        let schema = &table.schema;
        values
            .into_iter()
            .map(|(name, json)| {
                let at = || format!("{field}.{name}");
                let index = table.column_positions.get(&name).copied().ok_or_else(|| {
                    ScenarioError::new(
                        line,
                        &at(),
                        format!("{} has no column {name}", schema.qualified_name()),
                    )
                })?;
                let value = values::to_value(json, &schema.columns()[index].data_type)
                    .map_err(|message| ScenarioError::new(line, &at(), message))?;
                Ok((index, value))
            })
            .collect()
    }

    fn check_not_null(
        &self,
        line: usize,
        field: &str,
        t: usize,
        row: &[Value],
    ) -> Result<(), ScenarioError> {
        for (column, value) in self.tables[t].schema.columns().iter().zip(row) {
            if value.is_null() && !column.nullable {
                return Err(ScenarioError::new(
                    line,
                    &format!("{field}.{}", column.name),
                    "cannot be NULL (ORA-01400)",
                ));
            }
        }
        Ok(())
    }

    /// The rows whose current values match every condition; at least one, none locked by
    /// another transaction.
    pub(super) fn matching_rows(
        &self,
        line: usize,
        t: usize,
        conditions: &[(usize, Value)],
        tx: &str,
    ) -> Result<Vec<u64>, ScenarioError> {
        let table = &self.tables[t];
        let key = table.schema.key_indexes();
        let by_key = !key.is_empty()
            && conditions.len() == key.len()
            && key.iter().all(|k| conditions.iter().any(|(i, _)| i == k));
        let found: Vec<u64> = if by_key {
            table
                .key_of_conditions(conditions)
                .and_then(|k| table.key_index.get(&k).copied())
                .into_iter()
                .collect()
        } else {
            table
                .rows
                .starting_at(0)
                .filter(|(_, row)| {
                    row.current().is_some_and(|values| {
                        conditions.iter().all(|(i, v)| values.get(*i) == Some(v))
                    })
                })
                .map(|(number, _)| number)
                .collect()
        };
        if found.is_empty() {
            return Err(ScenarioError::new(
                line,
                "where",
                format!("no row of {} matches", table.schema.qualified_name()),
            ));
        }
        let own = self.transactions.get(tx).map(|t| t.id);
        for number in &found {
            if let Some(holder) = table.rows.get(number).and_then(|r| r.locked_by)
                && Some(holder) != own
            {
                return Err(ScenarioError::new(
                    line,
                    "where",
                    "the row is locked by another open transaction (Oracle would wait)",
                ));
            }
        }
        Ok(found)
    }

    pub(super) fn insert(
        &mut self,
        line: usize,
        dml: Dml,
        values: Values,
    ) -> Result<(), ScenarioError> {
        let t = self.table_named(line, "insert", &dml.table)?;
        let mut row = vec![Value::Null; self.tables[t].schema.columns().len()];
        for (index, value) in self.typed(line, "values", t, values)? {
            row[index] = value;
        }
        self.check_not_null(line, "values", t, &row)?;
        let table = &self.tables[t];
        let key = table.key_of(&row);
        if !dml.fails
            && key
                .as_ref()
                .is_some_and(|key| table.key_index.contains_key(key))
        {
            return Err(ScenarioError::new(
                line,
                "values",
                "unique constraint violated (ORA-00001); add \"fails\": true to model the failed insert",
            ));
        }
        let (name, mut tx) = self.take_transaction(&dml.tx, dml.user.as_deref());
        let first = tx.changes.len();
        self.ensure_started(&mut tx);
        self.insert_row(&mut tx, t, row, key);
        if dml.fails {
            self.undo_changes(&mut tx, first, true);
        }
        self.transactions.insert(name, tx);
        Ok(())
    }

    /// Inserts one row (`key`: its key-index entry) and writes its INSERT row.
    fn insert_row(&mut self, tx: &mut Transaction, t: usize, row: Vec<Value>, key: Option<String>) {
        let scn = self.catalog.scn;
        let table = &mut self.tables[t];
        let (number, row_id) = table.allocate_row();
        let columns = table.schema.columns();
        let lobs: Vec<usize> = (0..columns.len())
            .filter(|&i| columns[i].data_type.lob_kind().is_some() && !row[i].is_null())
            .collect();
        // Sized for typical values so the text is written without reallocating.
        let mut redo = String::with_capacity(96 + row.len() * 48);
        redo.push_str("insert into ");
        redo.push_str(&table.quoted_table);
        redo.push('(');
        for (i, name) in table.quoted_columns.iter().enumerate() {
            if i > 0 {
                redo.push(',');
            }
            redo.push_str(name);
        }
        redo.push_str(") values (");
        for (i, (value, column)) in row.iter().zip(columns).enumerate() {
            if i > 0 {
                redo.push(',');
            }
            match column.data_type.lob_kind() {
                Some(kind) if !value.is_null() => {
                    write_value(&mut redo, &Value::LobPlaceholder(kind), &column.data_type)
                }
                _ => write_value(&mut redo, value, &column.data_type),
            }
        }
        redo.push_str(");");
        let mut undo = String::with_capacity(redo.len() * 2);
        undo.push_str("delete from ");
        undo.push_str(&table.quoted_table);
        let mut first = true;
        for (i, (value, column)) in row.iter().zip(columns).enumerate() {
            if !column.data_type.is_lob_like() {
                write_condition(
                    &mut undo,
                    &table.quoted_columns[i],
                    value,
                    &column.data_type,
                    first,
                );
                first = false;
            }
        }
        write_rowid_condition(&mut undo, &row_id, first);
        undo.push(';');
        let mut stored = row;
        let lob_values: Vec<(usize, Value)> = lobs
            .iter()
            .map(|&i| (i, std::mem::replace(&mut stored[i], Value::Null)))
            .collect();
        let stored: Arc<[Value]> = Arc::from(stored);
        // A failing duplicate insert must not take the key from the row that holds it.
        if let Some(key) = key {
            table.key_index.entry(key).or_insert(number);
        }
        table.rows.insert(
            number,
            TableRow {
                row_id: Arc::clone(&row_id),
                versions: vec![Version {
                    scn: PENDING,
                    values: Some(stored),
                }],
                locked_by: Some(tx.id),
            },
        );
        let shown_row_id: Arc<str> = if lobs.is_empty() {
            Arc::clone(&row_id)
        } else {
            PLACEHOLDER_ROW_ID.into()
        };
        tx.changes.push(Change {
            table: t,
            row: number,
            row_id,
            scn,
            undo: Undo::Delete,
        });
        let mut spec = self.tx_spec(tx, OperationCode::Insert, shown_row_id, Some(t));
        spec.sql_redo = Some(redo);
        spec.sql_undo = Some(undo);
        self.redo.write(spec);
        for (column, value) in lob_values {
            self.write_lob_value(tx, t, number, column, value);
        }
    }

    pub(super) fn update(
        &mut self,
        line: usize,
        dml: Dml,
        where_: Values,
        set: Values,
    ) -> Result<(), ScenarioError> {
        let t = self.table_named(line, "update", &dml.table)?;
        let conditions = self.typed(line, "where", t, where_)?;
        let mut assignments = self.typed(line, "set", t, set)?;
        assignments.sort_by_key(|(i, _)| *i);
        assignments.dedup_by_key(|(i, _)| *i);
        let columns = self.tables[t].schema.columns();
        if let Some((i, _)) = assignments
            .iter()
            .find(|(i, v)| v.is_null() && !columns[*i].nullable)
        {
            let field = format!("set.{}", columns[*i].name);
            return Err(ScenarioError::new(
                line,
                &field,
                "cannot be NULL (ORA-01407)",
            ));
        }
        let rows = self.matching_rows(line, t, &conditions, &dml.tx)?;
        let (key, mut tx) = self.take_transaction(&dml.tx, dml.user.as_deref());
        let first = tx.changes.len();
        self.ensure_started(&mut tx);
        for number in rows {
            self.update_row(&mut tx, t, number, &assignments);
        }
        if dml.fails {
            self.undo_changes(&mut tx, first, true);
        }
        self.transactions.insert(key, tx);
        Ok(())
    }

    /// Updates one row and writes its UPDATE row; shared with LOB content written inline.
    pub(super) fn update_row(
        &mut self,
        tx: &mut Transaction,
        t: usize,
        number: u64,
        assignments: &[(usize, Value)],
    ) {
        let scn = self.catalog.scn;
        let logging = self.catalog.effective_logging(self.tables[t].logging);
        let table = &mut self.tables[t];
        let Some(row) = table.rows.get_mut(&number) else {
            return;
        };
        let Some(before) = row.current().cloned() else {
            return;
        };
        // Collected straight into the `Arc`: one allocation per version.
        let after: Arc<[Value]> = before
            .iter()
            .enumerate()
            .map(|(i, old)| {
                assignments
                    .iter()
                    .find(|(j, _)| *j == i)
                    .map_or_else(|| old.clone(), |(_, new)| new.clone())
            })
            .collect();
        row.versions.push(Version {
            scn: PENDING,
            values: Some(Arc::clone(&after)),
        });
        row.locked_by = Some(tx.id);
        let row_id = Arc::clone(&row.row_id);
        let key = table.schema.key_indexes();
        if assignments.iter().any(|(i, _)| key.contains(i)) {
            table.reindex(number, Some(&before), Some(&after));
        }
        let set_columns: Vec<usize> = assignments.iter().map(|(i, _)| *i).collect();
        let logged = logged_columns(table, logging, &set_columns);
        let redo = render_update(table, &set_columns, &after, &logged, &before, &row_id);
        let undo = render_update(table, &set_columns, &before, &logged, &after, &row_id);
        tx.changes.push(Change {
            table: t,
            row: number,
            row_id: Arc::clone(&row_id),
            scn,
            undo: Undo::Update {
                columns: set_columns,
                before,
            },
        });
        let mut spec = self.tx_spec(tx, OperationCode::Update, row_id, Some(t));
        spec.sql_redo = Some(redo);
        spec.sql_undo = Some(undo);
        self.redo.write(spec);
    }

    pub(super) fn delete(
        &mut self,
        line: usize,
        dml: Dml,
        where_: Values,
    ) -> Result<(), ScenarioError> {
        let t = self.table_named(line, "delete", &dml.table)?;
        let conditions = self.typed(line, "where", t, where_)?;
        let rows = self.matching_rows(line, t, &conditions, &dml.tx)?;
        let (key, mut tx) = self.take_transaction(&dml.tx, dml.user.as_deref());
        let first = tx.changes.len();
        self.ensure_started(&mut tx);
        for number in rows {
            self.delete_row(&mut tx, t, number);
        }
        if dml.fails {
            self.undo_changes(&mut tx, first, true);
        }
        self.transactions.insert(key, tx);
        Ok(())
    }

    fn delete_row(&mut self, tx: &mut Transaction, t: usize, number: u64) {
        let scn = self.catalog.scn;
        let table = &mut self.tables[t];
        let Some(row) = table.rows.get_mut(&number) else {
            return;
        };
        let Some(before) = row.current().cloned() else {
            return;
        };
        row.versions.push(Version {
            scn: PENDING,
            values: None,
        });
        row.locked_by = Some(tx.id);
        let row_id = Arc::clone(&row.row_id);
        table.reindex(number, Some(&before), None);
        let all: Vec<usize> = (0..before.len())
            .filter(|&i| !table.schema.columns()[i].data_type.is_lob_like())
            .collect();
        let mut redo = String::with_capacity(96 + before.len() * 48);
        redo.push_str("delete from ");
        redo.push_str(&table.quoted_table);
        write_where(&mut redo, table, &all, &before, &row_id);
        let undo = render_insert(table, &before, &all);
        tx.changes.push(Change {
            table: t,
            row: number,
            row_id: Arc::clone(&row_id),
            scn,
            undo: Undo::Insert(before),
        });
        let mut spec = self.tx_spec(tx, OperationCode::Delete, row_id, Some(t));
        spec.sql_redo = Some(redo);
        spec.sql_undo = Some(undo);
        self.redo.write(spec);
    }
}
/// The before-image columns the where clause of an UPDATE carries (logminer.md §3, corpus #2):
/// ALL logging: every column; PK logging: the key and the changed columns (the changed
/// columns' old values come from undo); no logging: the changed columns only. LOB and LONG
/// columns never appear.
pub(super) fn logged_columns(
    table: &Table,
    logging: TableLogging,
    changed: &[usize],
) -> Vec<usize> {
    let columns = table.schema.columns();
    let key = table.schema.key_indexes();
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

/// ` set "A" = v, "B" = v`.
pub(super) fn write_set(out: &mut String, table: &Table, columns: &[usize], values: &[Value]) {
    out.push_str(" set ");
    for (n, &i) in columns.iter().enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        out.push_str(&table.quoted_columns[i]);
        out.push_str(" = ");
        write_value(out, &values[i], &table.schema.columns()[i].data_type);
    }
}

/// ` where "A" = v and "B" IS NULL and ROWID = '...';`
pub(super) fn write_where(
    out: &mut String,
    table: &Table,
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

fn render_update(
    table: &Table,
    set: &[usize],
    new: &[Value],
    logged: &[usize],
    old: &[Value],
    row_id: &str,
) -> String {
    let mut sql = String::with_capacity(96 + (set.len() + logged.len()) * 48);
    sql.push_str("update ");
    sql.push_str(&table.quoted_table);
    write_set(&mut sql, table, set, new);
    write_where(&mut sql, table, logged, old, row_id);
    sql
}

pub(super) fn render_insert(table: &Table, values: &[Value], columns: &[usize]) -> String {
    let mut sql = String::with_capacity(96 + columns.len() * 48);
    sql.push_str("insert into ");
    sql.push_str(&table.quoted_table);
    sql.push('(');
    for (n, &i) in columns.iter().enumerate() {
        if n > 0 {
            sql.push(',');
        }
        sql.push_str(&table.quoted_columns[i]);
    }
    sql.push_str(") values (");
    for (n, &i) in columns.iter().enumerate() {
        if n > 0 {
            sql.push(',');
        }
        write_value(&mut sql, &values[i], &table.schema.columns()[i].data_type);
    }
    sql.push_str(");");
    sql
}
