//! DML steps: INSERT, UPDATE and DELETE rows with SQL_REDO and SQL_UNDO (logminer.md §3).
//!
//! Every change appends one row version and one [`Change`] (its undo) and writes one logical
//! row. The where clause of an UPDATE holds the before-image columns the logging level puts in
//! the redo ([`logged_columns`]); a DELETE always carries every column (its before image comes
//! from undo, corpus #3); an INSERT names every column, LOB columns as `EMPTY_*()` followed by
//! their content (`lob_steps.rs`).
//!
//! SQL_REDO is rendered into a recycled buffer and copied into the row store; the SQL_UNDO of an
//! INSERT or UPDATE is not rendered here: the row keeps a [`DeferredUndo`] (shared row versions)
//! and the text's length, computed from the values as rendered (`render::condition_length`), so
//! the redo address is what it would be. The typed entry points (`insert_values`,
//! `update_values`, `delete_values`) serve both the JSON steps and [`super::TypedStep`]s.

use std::sync::Arc;

use super::database::{Change, IndexKey, PENDING, TableRow, Transaction, Undo, Version, Versions};
use super::redo_log::DeferredUndo;
use super::render::{condition_length, rowid_condition_length, write_value};
use super::scenario::{Dml, Values};
use super::statement::{
    logged_columns, render_insert, render_update_undo, update_undo_length, write_update,
    write_where,
};
use super::{ScenarioError, Simulator, values};
use crate::dictionary::OracleType;
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
    ) -> Result<Matched, ScenarioError> {
        let table = &self.tables[t];
        let key = table.schema.key_indexes();
        let by_key = !key.is_empty()
            && conditions.len() == key.len()
            && key.iter().all(|k| conditions.iter().any(|(i, _)| i == k));
        let found = if by_key {
            match table
                .key_of_conditions(conditions)
                .and_then(|k| table.key_index.get(&k).copied())
            {
                Some(number) => Matched::One(number),
                None => Matched::Many(Vec::new()),
            }
        } else {
            Matched::Many(
                table
                    .rows
                    .starting_at(0)
                    .filter(|(_, row)| {
                        row.current().is_some_and(|values| {
                            conditions.iter().all(|(i, v)| values.get(*i) == Some(v))
                        })
                    })
                    .map(|(number, _)| number)
                    .collect(),
            )
        };
        if found.numbers().is_empty() {
            return Err(ScenarioError::new(
                line,
                "where",
                format!("no row of {} matches", table.schema.qualified_name()),
            ));
        }
        let own = self.transactions.get(tx).map(|t| t.id);
        for number in found.numbers() {
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
        self.insert_values(line, t, &dml, row)
    }

    /// An INSERT of typed values in column order (`dml.table` is not looked at: `t` is).
    pub(super) fn insert_values(
        &mut self,
        line: usize,
        t: usize,
        dml: &Dml,
        row: Vec<Value>,
    ) -> Result<(), ScenarioError> {
        self.check_not_null(line, "values", t, &row)?;
        let table = &self.tables[t];
        table
            .segment_for(&row)
            .map_err(|message| ScenarioError::new(line, "values", message))?;
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
    fn insert_row(
        &mut self,
        tx: &mut Transaction,
        t: usize,
        row: Vec<Value>,
        key: Option<IndexKey>,
    ) {
        let scn = self.catalog.scn;
        let table = &mut self.tables[t];
        let (number, row_id) = table.allocate_row(&row);
        let text = Arc::clone(&table.text);
        let columns = text.schema.columns();
        let lobs: Vec<usize> = (0..columns.len())
            .filter(|&i| columns[i].data_type.lob_kind().is_some() && !row[i].is_null())
            .collect();
        let extended: Vec<usize> = if self.catalog.max_string_size_extended {
            (0..columns.len())
                .filter(|&i| is_extended_string(&columns[i].data_type, &row[i]))
                .collect()
        } else {
            Vec::new()
        };
        let mut redo = self.redo.buffer();
        redo.push_str("insert into ");
        redo.push_str(&text.quoted_table);
        redo.push('(');
        for (i, name) in text.quoted_columns.iter().enumerate() {
            if i > 0 {
                redo.push(',');
            }
            redo.push_str(name);
        }
        redo.push_str(") values (");
        // SQL_UNDO (`delete from … where` the non-LOB columns `and ROWID = …;`) writes the same
        // values: its length follows from theirs, and the text waits until a window wants it.
        let mut undo_length = "delete from ".len() + text.quoted_table.len();
        let mut first = true;
        for (i, (value, column)) in row.iter().zip(columns).enumerate() {
            if i > 0 {
                redo.push(',');
            }
            let start = redo.len();
            match column.data_type.lob_kind() {
                Some(kind) if !value.is_null() => {
                    write_value(&mut redo, &Value::LobPlaceholder(kind), &column.data_type)
                }
                // An extended string's place holds NULL; the value follows in 32K rows
                // (UNVERIFIED placeholder: Debezium's merge starts from a null or
                // `LM_EMPTY_STRING` initial value, TransactionCommitConsumer).
                _ if extended.contains(&i) => redo.push_str("NULL"),
                _ => write_value(&mut redo, value, &column.data_type),
            }
            if !column.data_type.is_lob_like() {
                let mut length = redo.len() - start;
                if extended.contains(&i) {
                    // SQL_UNDO's condition carries the value itself, not the redo's NULL.
                    let mut rendered = String::new();
                    write_value(&mut rendered, value, &column.data_type);
                    length = rendered.len();
                }
                undo_length += condition_length(&text.quoted_columns[i], value, length, first);
                first = false;
            }
        }
        redo.push_str(");");
        undo_length += rowid_condition_length(&row_id, first) + ";".len();
        let mut stored = row;
        let lob_values: Vec<(usize, Value)> = lobs
            .iter()
            .map(|&i| (i, std::mem::replace(&mut stored[i], Value::Null)))
            .collect();
        let stored: Arc<[Value]> = Arc::from(stored);
        let extended_values: Vec<(usize, Value)> =
            extended.iter().map(|&i| (i, stored[i].clone())).collect();
        let undo = DeferredUndo::Delete {
            text,
            values: Arc::clone(&stored),
        };
        // A failing duplicate insert must not take the key from the row that holds it.
        if let Some(key) = key {
            table.key_index.entry(key).or_insert(number);
        }
        table.rows.insert(
            number,
            TableRow {
                row_id: Arc::clone(&row_id),
                versions: Versions::one(Version {
                    scn: PENDING,
                    values: Some(stored),
                }),
                locked_by: Some(tx.id),
            },
        );
        let shown_row_id: Arc<str> = if lobs.is_empty() && extended.is_empty() {
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
        spec.deferred_undo = Some((undo, undo_length));
        self.redo.write(spec);
        for (column, value) in extended_values {
            self.write_extended_string(tx, t, number, column, &value);
        }
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
        let assignments = self.typed(line, "set", t, set)?;
        self.update_values(line, t, &dml, &conditions, assignments)
    }

    /// An UPDATE with typed conditions and assignments by column position.
    pub(super) fn update_values(
        &mut self,
        line: usize,
        t: usize,
        dml: &Dml,
        conditions: &[(usize, Value)],
        mut assignments: Vec<(usize, Value)>,
    ) -> Result<(), ScenarioError> {
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
        let rows = self.matching_rows(line, t, conditions, &dml.tx)?;
        self.check_partition_kept(line, t, rows.numbers(), &assignments)?;
        let (key, mut tx) = self.take_transaction(&dml.tx, dml.user.as_deref());
        let first = tx.changes.len();
        self.ensure_started(&mut tx);
        let numbers = rows.numbers();
        for (n, &number) in numbers.iter().enumerate() {
            let last = n + 1 == numbers.len();
            self.update_row(&mut tx, t, number, &mut assignments, last);
        }
        if dml.fails {
            self.undo_changes(&mut tx, first, true);
        }
        self.transactions.insert(key, tx);
        Ok(())
    }

    /// Without `ENABLE ROW MOVEMENT` (the default, and the model's) an update that would move a
    /// row to another partition fails with ORA-14402 (SQL Language Reference, CREATE TABLE,
    /// row_movement_clause): a row keeps its ROWID for life.
    fn check_partition_kept(
        &self,
        line: usize,
        t: usize,
        numbers: &[u64],
        assignments: &[(usize, Value)],
    ) -> Result<(), ScenarioError> {
        let table = &self.tables[t];
        let Some(column) = table.partition_column else {
            return Ok(());
        };
        if !assignments.iter().any(|(i, _)| *i == column) {
            return Ok(());
        }
        for number in numbers {
            let Some(before) = table.rows.get(number).and_then(|row| row.current()) else {
                continue;
            };
            let mut after = before.to_vec();
            for (i, value) in assignments {
                if let Some(slot) = after.get_mut(*i) {
                    *slot = value.clone();
                }
            }
            if table.segment_for(before) != table.segment_for(&after) {
                return Err(ScenarioError::new(
                    line,
                    "set",
                    "updating partition key column would cause a partition change (ORA-14402)",
                ));
            }
        }
        Ok(())
    }

    /// Updates one row and writes its UPDATE row; shared with LOB content written inline. The
    /// new values are moved out of `assignments` for the `last` row, cloned for the others.
    pub(super) fn update_row(
        &mut self,
        tx: &mut Transaction,
        t: usize,
        number: u64,
        assignments: &mut [(usize, Value)],
        last: bool,
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
            .map(
                |(i, old)| match assignments.iter_mut().find(|(j, _)| *j == i) {
                    Some((_, new)) if last => std::mem::replace(new, Value::Null),
                    Some((_, new)) => new.clone(),
                    None => old.clone(),
                },
            )
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
        let text = Arc::clone(&table.text);
        // The set columns (ascending), on the stack for the usual few.
        let mut stack = [0usize; 16];
        let heap: Vec<usize>;
        let set_columns: &[usize] = if assignments.len() <= stack.len() {
            for (slot, (i, _)) in stack.iter_mut().zip(assignments.iter()) {
                *slot = *i;
            }
            &stack[..assignments.len()]
        } else {
            heap = assignments.iter().map(|(i, _)| *i).collect();
            &heap
        };
        let logged = logged_columns(&text, logging, set_columns);
        let mut redo = self.redo.buffer();
        write_update(
            &mut redo,
            &text,
            set_columns,
            &after,
            &logged,
            &before,
            &row_id,
        );
        // SQL_UNDO waits until a window wants it (its length is needed now, for the redo
        // address); a table too wide for the column bit set renders it at once.
        let set_bits = set_columns
            .iter()
            .try_fold(0u64, |bits, &i| (i < 64).then(|| bits | 1 << i));
        let (undo, deferred) = match set_bits {
            Some(set) => {
                let length = update_undo_length(
                    &text,
                    set_columns,
                    &logged,
                    (&before, &after),
                    redo.len(),
                    &mut self.scratch,
                );
                let deferred = DeferredUndo::Update {
                    text,
                    set,
                    logging,
                    before: Arc::clone(&before),
                    after,
                };
                (None, Some((deferred, length)))
            }
            None => (
                Some(render_update_undo(
                    &text,
                    set_columns,
                    &logged,
                    (&before, &after),
                    &row_id,
                )),
                None,
            ),
        };
        tx.record_update(t, number, &row_id, scn, set_columns, before);
        let mut spec = self.tx_spec(tx, OperationCode::Update, row_id, Some(t));
        spec.sql_redo = Some(redo);
        spec.sql_undo = undo;
        spec.deferred_undo = deferred;
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
        self.delete_values(line, t, &dml, &conditions)
    }

    /// A DELETE with typed conditions by column position.
    pub(super) fn delete_values(
        &mut self,
        line: usize,
        t: usize,
        dml: &Dml,
        conditions: &[(usize, Value)],
    ) -> Result<(), ScenarioError> {
        let rows = self.matching_rows(line, t, conditions, &dml.tx)?;
        let (key, mut tx) = self.take_transaction(&dml.tx, dml.user.as_deref());
        let first = tx.changes.len();
        self.ensure_started(&mut tx);
        for &number in rows.numbers() {
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
        redo.push_str(&table.text.quoted_table);
        write_where(&mut redo, &table.text, &all, &before, &row_id);
        let undo = render_insert(&table.text, &before, &all);
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
/// The rows a where clause matched: one when found through the key index.
pub(super) enum Matched {
    One(u64),
    Many(Vec<u64>),
}

impl Matched {
    pub fn numbers(&self) -> &[u64] {
        match self {
            Self::One(number) => std::slice::from_ref(number),
            Self::Many(numbers) => numbers,
        }
    }
}

/// Whether LogMiner logs `value` of a column of `data_type` as an extended string (32K rows)
/// rather than in the DML row: a VARCHAR2 / NVARCHAR2 value over 4000 bytes, a RAW over 2000.
pub(super) fn is_extended_string(data_type: &OracleType, value: &Value) -> bool {
    match (data_type, value) {
        (OracleType::Varchar2 { .. } | OracleType::NVarchar2 { .. }, Value::Text(text)) => {
            text.len() > 4000
        }
        (OracleType::Raw { .. }, Value::Bytes(bytes)) => bytes.len() > 2000,
        _ => false,
    }
}
