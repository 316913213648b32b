//! The redo: threads, their online and archived logs, and the `V$LOGMNR_CONTENTS` rows the redo
//! holds, with the mining-window view over them.
//!
//! Model (one entry per RAC redo thread):
//! - the current online log of a thread holds the redo since its first SCN; a log switch (a
//!   `log_switch` step, or a log reaching `log_switch_records` records) closes it at the switch
//!   SCN, archives it at once in ARCHIVELOG mode, and makes the next group current. A thread has
//!   `online_log_groups` groups: the oldest closed log is overwritten by the switch (in
//!   NOARCHIVELOG mode its redo is then gone). `archive_purge_before_scn` deletes archived logs
//!   that end at or before the SCN. The rows of a log that is neither online nor archived are
//!   dropped, so memory stays bounded when a long workload purges.
//! - each thread has a written SCN (`V$THREAD.CHECKPOINT_CHANGE#` here): redo above it is still
//!   in the instance's log buffer and invisible to LogMiner. A commit writes its thread (LGWR on
//!   commit), so does a log switch and a `checkpoint` step; `flush_redo` writes every open
//!   thread. An idle RAC thread's checkpoint therefore trails: the capture must not mine past
//!   the lowest checkpoint or it misses that thread's redo.
//! - rows are kept in generation order, which is SCN order (each step has one SCN, rows of one
//!   step are in redo order), so a window is a binary search plus a filtered scan.
//! - a RESETLOGS starts a new incarnation: sequences restart at 1 and the old incarnation's logs
//!   are no longer listed or mined.

use std::collections::HashSet;
use std::sync::Arc;

use jiff::civil;

use super::render::split_pieces;
use crate::event::Xid;
use crate::source::row::SEQUENCELESS_XIDSQN;
use crate::source::{
    LogMinerRow, OperationCode, RedoAddress, RedoLog, RedoLogKind, RedoThread, ThreadEnabled,
};

/// One stored row with what the window view needs besides the row itself.
#[derive(Clone, Debug)]
pub(crate) struct StoredRow {
    pub row: LogMinerRow,
    pub incarnation: u32,
    pub sequence: u32,
    /// The interned `(owner, table)` for rows on a table.
    pub name_id: Option<u32>,
    /// For undo rows: the SCN of the change undone (sequence-less XID when it is before the
    /// window).
    pub undoes_scn: Option<u64>,
}

/// Rows per chunk of the row store.
const CHUNK_ROWS: usize = 8192;

/// The stored rows in generation (SCN) order, in fixed-size chunks: appending never copies the
/// rows already stored, as one growing vector would (rows are written by the million).
#[derive(Debug, Default)]
pub(crate) struct RowStore {
    chunks: Vec<Vec<StoredRow>>,
}

impl RowStore {
    fn push(&mut self, row: StoredRow) {
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < CHUNK_ROWS => chunk.push(row),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK_ROWS);
                chunk.push(row);
                self.chunks.push(chunk);
            }
        }
    }

    fn retain(&mut self, mut keep: impl FnMut(&StoredRow) -> bool) {
        for chunk in &mut self.chunks {
            chunk.retain(&mut keep);
        }
        self.chunks.retain(|chunk| !chunk.is_empty());
    }

    /// The rows from the first with an SCN at or above `scn` on.
    pub fn starting_at_scn(&self, scn: u64) -> impl Iterator<Item = &StoredRow> {
        let first = self
            .chunks
            .partition_point(|chunk| chunk.last().is_some_and(|row| row.row.scn < scn));
        self.chunks[first..]
            .iter()
            .flatten()
            .skip_while(move |row| row.row.scn < scn)
    }
}

/// A log file (its online group and/or its archived copy).
#[derive(Clone, Debug)]
pub(crate) struct LogFile {
    pub thread: u16,
    pub sequence: u32,
    pub incarnation: u32,
    pub first_scn: u64,
    pub next_scn: Option<u64>,
    /// The online group still holds this sequence.
    pub online: bool,
    pub archived: bool,
}

#[derive(Debug)]
pub(crate) struct Thread {
    pub number: u16,
    pub enable_scn: u64,
    pub sequence: u32,
    pub block: u32,
    pub records_in_log: u64,
    pub last_record_scn: u64,
    pub written_scn: u64,
}

/// Everything about a row but its redo address, CSF and storage.
#[derive(Debug)]
pub(crate) struct RowSpec {
    pub scn: u64,
    pub time: civil::DateTime,
    pub xid: Xid,
    pub operation: OperationCode,
    pub rollback: bool,
    pub row_id: Arc<str>,
    pub table: Option<(Arc<str>, Arc<str>, u32)>,
    pub user: Option<Arc<str>>,
    pub session: Option<(u32, u32)>,
    pub thread: u16,
    pub info: Option<Arc<str>>,
    pub sql_redo: Option<String>,
    pub sql_undo: Option<String>,
    pub start_scn: Option<u64>,
    pub commit_scn: Option<u64>,
    pub commit_time: Option<civil::DateTime>,
    pub undoes_scn: Option<u64>,
}

#[derive(Debug)]
pub(crate) struct Redo {
    pub threads: Vec<Thread>,
    pub logs: Vec<LogFile>,
    pub rows: RowStore,
    pub online_groups: usize,
    pub switch_records: u64,
    pub archivelog: bool,
    pub incarnation: u32,
    pub container: Option<(Arc<str>, u32)>,
}

impl Redo {
    pub fn new(scn: u64) -> Self {
        let mut redo = Self {
            threads: Vec::new(),
            logs: Vec::new(),
            rows: RowStore::default(),
            online_groups: 3,
            switch_records: 100_000,
            archivelog: true,
            incarnation: 1,
            container: None,
        };
        redo.ensure_thread(1, scn);
        redo
    }

    pub fn ensure_thread(&mut self, number: u16, scn: u64) -> usize {
        if let Some(index) = self.threads.iter().position(|t| t.number == number) {
            return index;
        }
        self.threads.push(Thread {
            number,
            enable_scn: scn,
            sequence: 1,
            block: 2,
            records_in_log: 0,
            last_record_scn: 0,
            written_scn: scn,
        });
        self.logs.push(LogFile {
            thread: number,
            sequence: 1,
            incarnation: self.incarnation,
            first_scn: scn,
            next_scn: None,
            online: true,
            archived: false,
        });
        self.threads.len() - 1
    }

    /// Closes the current log of `thread` at `scn`, archives it (ARCHIVELOG) and starts the next
    /// sequence; the group overwritten loses its old sequence.
    pub fn switch(&mut self, thread: u16, scn: u64) {
        let incarnation = self.incarnation;
        let Some(state) = self.threads.iter_mut().find(|t| t.number == thread) else {
            return;
        };
        let closed = state.sequence;
        state.sequence += 1;
        state.block = 2;
        state.records_in_log = 0;
        state.written_scn = state.written_scn.max(scn);
        let next_sequence = state.sequence;
        let archivelog = self.archivelog;
        for log in &mut self.logs {
            if log.thread == thread && log.incarnation == incarnation && log.sequence == closed {
                log.next_scn = Some(scn);
                log.archived = archivelog;
            }
            // The group taking the new sequence held `next - groups`.
            if log.thread == thread
                && log.incarnation == incarnation
                && log.online
                && u64::from(log.sequence) + self.online_groups as u64 <= u64::from(next_sequence)
            {
                log.online = false;
            }
        }
        self.logs.push(LogFile {
            thread,
            sequence: next_sequence,
            incarnation,
            first_scn: scn,
            next_scn: None,
            online: true,
            archived: false,
        });
        self.drop_lost_logs();
    }

    /// Deletes archived logs ending at or before `scn`.
    pub fn purge_archives(&mut self, scn: u64) {
        for log in &mut self.logs {
            if log.next_scn.is_some_and(|next| next <= scn) {
                log.archived = false;
            }
        }
        self.drop_lost_logs();
    }

    /// Starts a new incarnation at `scn`: every thread starts sequence 1.
    pub fn resetlogs(&mut self, scn: u64) {
        for log in &mut self.logs {
            log.online = false;
            if log.next_scn.is_none() {
                log.next_scn = Some(scn);
                log.archived = self.archivelog;
            }
        }
        self.incarnation += 1;
        let incarnation = self.incarnation;
        for thread in &mut self.threads {
            thread.sequence = 1;
            thread.block = 2;
            thread.records_in_log = 0;
            thread.written_scn = scn;
            self.logs.push(LogFile {
                thread: thread.number,
                sequence: 1,
                incarnation,
                first_scn: scn,
                next_scn: None,
                online: true,
                archived: false,
            });
        }
        self.drop_lost_logs();
    }

    fn drop_lost_logs(&mut self) {
        let lost: HashSet<(u32, u16, u32)> = self
            .logs
            .iter()
            .filter(|log| !log.online && !log.archived)
            .map(|log| (log.incarnation, log.thread, log.sequence))
            .collect();
        if lost.is_empty() {
            return;
        }
        self.logs.retain(|log| log.online || log.archived);
        self.rows
            .retain(|r| !lost.contains(&(r.incarnation, r.row.thread, r.sequence)));
    }

    /// Stores the rows of one logical change: one row, or several with CSF when SQL_REDO or
    /// SQL_UNDO is longer than 4000 bytes.
    pub fn write(&mut self, spec: RowSpec) {
        let Some(index) = self.threads.iter().position(|t| t.number == spec.thread) else {
            return;
        };
        let needs_switch = {
            let thread = &self.threads[index];
            thread.records_in_log >= self.switch_records && spec.scn > thread.last_record_scn
        };
        if needs_switch {
            self.switch(spec.thread, spec.scn);
        }
        let thread = &mut self.threads[index];
        let address = RedoAddress {
            sequence: thread.sequence,
            block: thread.block,
            offset: 0x10,
        };
        let length = spec.sql_redo.as_ref().map_or(0, String::len)
            + spec.sql_undo.as_ref().map_or(0, String::len);
        thread.block += 1 + (length / 512) as u32;
        thread.records_in_log += 1;
        thread.last_record_scn = spec.scn;
        let sequence = thread.sequence;
        let (seg_owner, table_name, name_id) = match spec.table {
            Some((owner, table, id)) => (Some(owner), Some(table), Some(id)),
            None => (None, None, None),
        };
        let (src_con_name, con_id) = match &self.container {
            Some((name, id)) => (Some(Arc::clone(name)), Some(*id)),
            None => (None, None),
        };
        let row = LogMinerRow {
            scn: spec.scn,
            start_scn: spec.start_scn,
            commit_scn: spec.commit_scn,
            timestamp: Some(spec.time),
            commit_timestamp: spec.commit_time,
            xid: spec.xid,
            operation: spec.operation,
            rollback: spec.rollback,
            row_id: spec.row_id,
            rs_id: rs_id(address),
            ssn: 0,
            csf: false,
            seg_owner,
            table_name,
            username: spec.user,
            session: spec.session.map(|s| s.0),
            serial: spec.session.map(|s| s.1),
            thread: spec.thread,
            info: spec.info,
            status: 0,
            sql_redo: None,
            sql_undo: None,
            src_con_name,
            con_id,
        };
        let incarnation = self.incarnation;
        let stored = |row: LogMinerRow| StoredRow {
            row,
            incarnation,
            sequence,
            name_id,
            undoes_scn: spec.undoes_scn,
        };
        let too_long = |text: &Option<String>| {
            text.as_ref()
                .is_some_and(|t| t.len() > super::render::MAX_SQL_BYTES)
        };
        if !too_long(&spec.sql_redo) && !too_long(&spec.sql_undo) {
            let mut row = row;
            row.sql_redo = spec.sql_redo;
            row.sql_undo = spec.sql_undo;
            self.rows.push(stored(row));
            return;
        }
        let redo = spec
            .sql_redo
            .as_deref()
            .map(split_pieces)
            .unwrap_or_default();
        let undo = spec
            .sql_undo
            .as_deref()
            .map(split_pieces)
            .unwrap_or_default();
        let count = redo.len().max(undo.len());
        for piece in 0..count {
            let mut part = row.clone();
            part.sql_redo = redo.get(piece).map(|s| (*s).to_owned());
            part.sql_undo = undo.get(piece).map(|s| (*s).to_owned());
            part.csf = piece + 1 < count;
            self.rows.push(stored(part));
        }
    }

    /// `V$LOG` ∪ `V$ARCHIVED_LOG` of the current incarnation reaching `from_scn`.
    pub fn listed_logs(&self, from_scn: u64, name: &str) -> Vec<RedoLog> {
        let mut listed = Vec::new();
        for log in self.logs.iter().filter(|log| {
            log.incarnation == self.incarnation && log.next_scn.is_none_or(|next| next > from_scn)
        }) {
            let entry = |kind: RedoLogKind| RedoLog {
                name: self.log_name(log, kind, name),
                thread: log.thread,
                sequence: log.sequence,
                first_scn: log.first_scn,
                next_scn: log.next_scn,
                kind,
            };
            if log.online {
                listed.push(entry(RedoLogKind::Online));
            }
            if log.archived {
                listed.push(entry(RedoLogKind::Archived));
            }
        }
        listed
    }

    pub fn log_name(&self, log: &LogFile, kind: RedoLogKind, database: &str) -> String {
        match kind {
            RedoLogKind::Online => {
                let group = (log.sequence as usize - 1) % self.online_groups
                    + 1
                    + (usize::from(log.thread) - 1) * self.online_groups;
                format!("/u01/app/oracle/oradata/{database}/redo{group:02}.log")
            }
            RedoLogKind::Archived => format!(
                "/u01/app/oracle/fra/{database}/archivelog/{}_{}_{}.arc",
                log.thread, log.sequence, log.incarnation
            ),
        }
    }

    pub fn thread_views(&self) -> Vec<RedoThread> {
        self.threads
            .iter()
            .map(|t| RedoThread {
                thread: t.number,
                open: true,
                enabled: ThreadEnabled::Public,
                checkpoint_scn: t.written_scn,
                sequence: t.sequence,
                enable_scn: t.enable_scn,
            })
            .collect()
    }
}

/// An active LogMiner session: the window and the logs registered for it.
#[derive(Debug)]
pub(crate) struct MiningSession {
    pub start_scn: u64,
    pub end_scn: u64,
    pub tables: HashSet<u32>,
    pub pdb: Option<String>,
    pub incarnation: u32,
    /// `(thread, sequence)` of every registered log.
    pub registered: HashSet<(u16, u32)>,
    /// Registered online logs: mining fails (ORA-00310) once a switch overwrote one.
    pub online: Vec<(u16, u32)>,
}

impl MiningSession {
    /// Whether `stored` belongs in this window (see the filter rules in `docs/simulator.md`).
    pub fn shows(&self, stored: &StoredRow, written: &[(u16, u64)]) -> bool {
        let row = &stored.row;
        if stored.incarnation != self.incarnation
            || !self.registered.contains(&(row.thread, stored.sequence))
            || !written
                .iter()
                .any(|(thread, scn)| *thread == row.thread && row.scn <= *scn)
        {
            return false;
        }
        if let Some(pdb) = &self.pdb
            && row.src_con_name.as_deref() != Some(pdb.as_str())
        {
            return false;
        }
        match row.operation {
            OperationCode::Start
            | OperationCode::Commit
            | OperationCode::Rollback
            | OperationCode::MissingScn => true,
            _ => stored.name_id.is_some_and(|id| self.tables.contains(&id)),
        }
    }

    /// The row as this window shows it: an undo row of a change made before the window carries
    /// the sequence-less XID.
    pub fn view(&self, stored: &StoredRow) -> LogMinerRow {
        let mut row = stored.row.clone();
        if stored.undoes_scn.is_some_and(|scn| scn < self.start_scn) {
            row.xid = Xid::from_parts(row.xid.usn(), row.xid.slot(), SEQUENCELESS_XIDSQN);
        }
        row
    }
}

/// `RS_ID` text (as [`RedoAddress`]'s `Display` writes it) with one allocation: rows are
/// written by the million.
fn rs_id(address: RedoAddress) -> Arc<str> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = *b" 0x000000.00000000.0000 ";
    let mut put = |end: usize, width: usize, mut value: u64| {
        for at in (end - width..end).rev() {
            text[at] = HEX[(value & 0xf) as usize];
            value >>= 4;
        }
    };
    put(9, 6, u64::from(address.sequence));
    put(18, 8, u64::from(address.block));
    put(23, 4, u64::from(address.offset));
    Arc::from(std::str::from_utf8(&text).unwrap_or(" 0x000000.00000000.0000 "))
}
