//! Transactions: their XIDs, sessions and control rows (START, COMMIT, ROLLBACK), and undo.
//!
//! A transaction gets its XID (a free undo slot, see `SlotPool`) and writes its START row at
//! its first change. Undoing a change (savepoint rollback, failed statement, rollback) pops its
//! row version and writes the undo row: the inverse operation, same ROW_ID, `ROLLBACK = 1`,
//! SQL_REDO with only the ROWID predicate (an undo INSERT carries the old values), SQL_UNDO NULL.
//! A killed session's transaction is undone without any row (no end record, contracts).

use std::sync::Arc;

use super::at_mining::RowObject;
use super::database::{Change, PENDING, Started, TableRow, Transaction, Undo};
use super::redo_log::RowSpec;
use super::render::write_rowid_condition;
use super::statement::{render_insert, write_set};
use super::{ScenarioError, Simulator};
use crate::source::row::PLACEHOLDER_ROW_ID;
use crate::source::{OperationCode, SessionId, Xid};

impl Simulator {
    /// The transaction named `name`, removed from the map while a step works on it; a new one
    /// (with its session, on the current thread) when it does not exist.
    pub(super) fn take_transaction(
        &mut self,
        name: &str,
        user: Option<&str>,
    ) -> (String, Transaction) {
        if let Some(entry) = self.transactions.remove_entry(name) {
            return entry;
        }
        let transaction = self.new_transaction(
            user.map_or_else(|| Arc::clone(&self.catalog.default_user), Arc::from),
        );
        (name.to_owned(), transaction)
    }

    fn new_transaction(&mut self, user: Arc<str>) -> Transaction {
        let sid = self.next_session;
        self.next_session += 1;
        let id = self.next_transaction;
        self.next_transaction += 1;
        Transaction {
            id,
            thread: self.thread,
            user,
            session: SessionId {
                thread: self.thread,
                sid,
                serial: 10_000 + sid.wrapping_mul(7919) % 50_000,
            },
            started: None,
            changes: Vec::with_capacity(16),
            savepoints: Vec::new(),
        }
    }

    /// Gives the transaction its XID at its first change and writes the START row.
    pub(super) fn ensure_started(&mut self, tx: &mut Transaction) {
        if tx.started.is_some() {
            return;
        }
        let xid = self.slots.take();
        tx.started = Some(Started {
            xid,
            start_scn: self.catalog.scn,
        });
        let placeholder = Arc::clone(&self.placeholder);
        let mut spec = self.tx_spec(tx, OperationCode::Start, placeholder, None);
        spec.sql_redo = Some(self.sql_text("set transaction read write;"));
        self.redo.write(spec);
    }

    /// `text` in a recycled SQL_REDO buffer.
    fn sql_text(&mut self, text: &str) -> String {
        let mut sql = self.redo.buffer();
        sql.push_str(text);
        sql
    }

    /// A row of `tx` at the current SCN; SQL columns empty.
    pub(super) fn tx_spec(
        &self,
        tx: &Transaction,
        operation: OperationCode,
        row_id: Arc<str>,
        table: Option<usize>,
    ) -> RowSpec {
        let xid = tx.started.map_or(Xid([0; 8]), |s| s.xid);
        let mut spec = self.spec(xid, Some(Arc::clone(&tx.user)), operation, row_id, table);
        spec.session = Some((tx.session.sid, tx.session.serial));
        spec.thread = tx.thread;
        spec
    }

    pub(super) fn spec(
        &self,
        xid: Xid,
        user: Option<Arc<str>>,
        operation: OperationCode,
        row_id: Arc<str>,
        table: Option<usize>,
    ) -> RowSpec {
        RowSpec {
            scn: self.catalog.scn,
            time: self.catalog.now,
            xid,
            operation,
            rollback: false,
            row_id,
            table: table.map(|t| {
                let table = &self.tables[t];
                (
                    Arc::clone(&table.owner),
                    Arc::clone(&table.name),
                    table.name_id,
                )
            }),
            object: table.map(|t| RowObject {
                table: t as u32,
                version: self.tables[t].dictionary_version(),
                object_id: self.tables[t].object_id,
            }),
            user,
            session: None,
            thread: self.thread,
            info: None,
            sql_redo: None,
            sql_undo: None,
            deferred_undo: None,
            start_scn: None,
            commit_scn: None,
            commit_time: None,
            undoes_scn: None,
        }
    }

    /// Undoes the transaction's changes after the first `keep`, newest first, restoring the
    /// rows; writes the undo rows when `write` (not for a killed session).
    pub(super) fn undo_changes(&mut self, tx: &mut Transaction, keep: usize, write: bool) {
        while tx.changes.len() > keep {
            let Some(change) = tx.changes.pop() else {
                break;
            };
            if write {
                self.write_undo_row(tx, &change);
            }
            let table = &mut self.tables[change.table];
            let Some(row) = table.rows.get_mut(&change.row) else {
                continue;
            };
            let before = row.current().cloned();
            row.versions.pop();
            let after = row.current().cloned();
            if row.versions.is_empty() {
                table.rows.remove(&change.row);
            } else if !row.versions.iter().any(|v| v.scn == PENDING) {
                row.locked_by = None;
            }
            table.reindex(change.row, before.as_deref(), after.as_deref());
        }
    }

    fn write_undo_row(&mut self, tx: &Transaction, change: &Change) {
        let table = &self.tables[change.table];
        let mut sql = String::with_capacity(96);
        let operation = match &change.undo {
            Undo::Delete => {
                sql.push_str("delete from ");
                sql.push_str(&table.text.quoted_table);
                write_rowid_condition(&mut sql, &change.row_id, true);
                sql.push(';');
                OperationCode::Delete
            }
            Undo::Insert(values) => {
                let all: Vec<usize> = (0..values.len()).collect();
                sql = render_insert(&table.text, values, &all);
                OperationCode::Insert
            }
            Undo::Update { columns, before } => {
                sql.push_str("update ");
                sql.push_str(&table.text.quoted_table);
                write_set(&mut sql, &table.text, &columns.to_vec(), before);
                write_rowid_condition(&mut sql, &change.row_id, true);
                sql.push(';');
                OperationCode::Update
            }
        };
        let mut spec = self.tx_spec(
            tx,
            operation,
            Arc::clone(&change.row_id),
            Some(change.table),
        );
        spec.rollback = true;
        spec.sql_redo = Some(sql);
        spec.undoes_scn = Some(change.scn);
        self.redo.write(spec);
    }

    pub(super) fn end_transaction(
        &mut self,
        line: usize,
        name: &str,
        end: End,
    ) -> Result<(), ScenarioError> {
        let Some((_, mut tx)) = self.transactions.remove_entry(name) else {
            let what = match end {
                End::Commit => "commit",
                End::Rollback => "rollback",
                End::Kill => "kill",
            };
            return Err(unknown_transaction(line, what, name));
        };
        let Some(started) = tx.started else {
            return Ok(());
        };
        let scn = self.catalog.scn;
        match end {
            End::Commit => {
                for change in &tx.changes {
                    if let Some(row) = self.tables[change.table].rows.get_mut(&change.row) {
                        stamp(row, scn);
                    }
                }
                let placeholder = Arc::clone(&self.placeholder);
                let mut spec = self.tx_spec(&tx, OperationCode::Commit, placeholder, None);
                spec.sql_redo = Some(self.sql_text("commit;"));
                spec.start_scn = Some(started.start_scn);
                spec.commit_scn = Some(scn);
                spec.commit_time = Some(self.catalog.now);
                self.redo.write(spec);
                self.mark_written(tx.thread);
            }
            End::Rollback => {
                self.undo_changes(&mut tx, 0, true);
                let mut spec = self.tx_spec(
                    &tx,
                    OperationCode::Rollback,
                    PLACEHOLDER_ROW_ID.into(),
                    None,
                );
                spec.sql_redo = Some("rollback;".to_owned());
                self.redo.write(spec);
                self.mark_written(tx.thread);
            }
            End::Kill => self.undo_changes(&mut tx, 0, false),
        }
        self.slots.release(started.xid);
        Ok(())
    }

    /// A commit or rollback: LGWR writes the thread's whole log buffer, other sessions' changes
    /// included.
    fn mark_written(&mut self, thread: u16) {
        let scn = self.catalog.scn;
        if let Some(state) = self.redo.threads.iter_mut().find(|t| t.number == thread) {
            state.write_out(scn);
        }
    }

    /// Runs `body` in a transaction of its own (START … COMMIT at the current SCN), as DDL and
    /// the flush write are.
    pub(super) fn autonomous(
        &mut self,
        user: Arc<str>,
        body: impl FnOnce(&mut Self, &Transaction),
    ) {
        let mut tx = self.new_transaction(user);
        self.ensure_started(&mut tx);
        body(self, &tx);
        let started = tx.started.map_or(0, |s| s.start_scn);
        let mut spec = self.tx_spec(&tx, OperationCode::Commit, PLACEHOLDER_ROW_ID.into(), None);
        spec.sql_redo = Some("commit;".to_owned());
        spec.start_scn = Some(started);
        spec.commit_scn = Some(self.catalog.scn);
        spec.commit_time = Some(self.catalog.now);
        self.redo.write(spec);
        self.mark_written(tx.thread);
        if let Some(started) = tx.started {
            self.slots.release(started.xid);
        }
    }

    /// The capture's flush write on the instance running `thread`: a commit there, which makes
    /// that instance's LGWR write its thread's redo and no other. Another RAC instance's redo
    /// stays unwritten until it commits (a flush of its own among them), checkpoints or switches
    /// logs. Takes an SCN like a step, but is no scenario line: line numbers stay those of the
    /// file.
    pub fn flush_redo_on(&mut self, thread: u16) {
        self.catalog.scn += 1;
        let user = Arc::clone(&self.catalog.capture_user);
        let current = self.thread;
        self.thread = thread;
        self.autonomous(user, |_, _| {});
        self.thread = current;
    }
}

pub(super) enum End {
    Commit,
    Rollback,
    Kill,
}

pub(super) fn unknown_transaction(line: usize, field: &str, name: &str) -> ScenarioError {
    ScenarioError::new(
        line,
        field,
        format!("{field} of an unknown transaction {name:?}"),
    )
}

/// Stamps a row's pending versions with the commit SCN and keeps only the last of them.
fn stamp(row: &mut TableRow, scn: u64) {
    let mut first = None;
    for (index, version) in row.versions.iter_mut().enumerate().rev() {
        if version.scn != PENDING {
            break;
        }
        version.scn = scn;
        first = Some(index);
    }
    if let Some(first) = first {
        let last = row.versions.len() - 1;
        row.versions.remove(first..last);
    }
    row.locked_by = None;
}
