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
//! - each thread has a log buffer and a written SCN: redo above the written SCN is still in the
//!   instance's log buffer and invisible to LogMiner. LGWR writes the whole buffer (every change
//!   of the thread so far, whichever session made it) at a commit or rollback on the thread, a
//!   log switch, a `checkpoint` step, the flush write (a commit on thread 1), and once the oldest
//!   redo in the buffer is [`LGWR_TIMEOUT`] old on the simulated clock. `V$THREAD.LAST_REDO_CHANGE#`
//!   is the written SCN, or the current SCN while the buffer is empty (nothing is unwritten).
//!   A capture that mines past the lowest of them misses redo; `CHECKPOINT_CHANGE#` is reported
//!   as the written SCN too (see the deviations in `docs/simulator.md`).
//! - rows are kept in generation order, which is SCN order (each step has one SCN, rows of one
//!   step are in redo order), so a window is a binary search plus a filtered scan.
//! - a RESETLOGS starts a new incarnation: sequences restart at 1 and the old incarnation's logs
//!   are no longer listed or mined.

use std::collections::HashSet;
use std::sync::Arc;

use jiff::{SignedDuration, civil};

use super::at_mining::{
    AtMining, MISMATCH_INFO, NUMBERED_OWNER, RowObject, at_mining, numbered_sql, renamed_sql,
};
use super::database::{Catalog, FastSet, Table, TableText, host_local_time};
use super::render::{split_pieces, write_condition, write_rowid_condition};
use super::scenario::TableLogging;
use super::statement::{logged_columns, render_update_undo};
use crate::source::row::SEQUENCELESS_XIDSQN;
use crate::source::{
    Completion, LogMinerRow, OperationCode, RedoAddress, RedoLog, RedoLogKind, RedoThread,
    ThreadEnabled, Xid,
};
use crate::value::Value;
use crate::value::internal::DatabaseFormats;

/// One stored row with what the window view needs besides the row itself.
#[derive(Clone, Debug)]
pub(crate) struct StoredRow {
    /// The row with `sql_redo` and `sql_undo` always `None` and an empty `rs_id`: SQL_REDO is
    /// in its chunk's text at `redo` (offset, length), SQL_UNDO in `undo`, and `RS_ID` is
    /// written from `address` when the row is streamed (the text is short-lived there).
    pub row: LogMinerRow,
    pub address: RedoAddress,
    pub redo: Option<(u32, u32)>,
    pub undo: StoredUndo,
    pub incarnation: u32,
    pub sequence: u32,
    /// The interned `(owner, table)` for rows on a table, as it was named when written.
    pub name_id: Option<u32>,
    /// The table and its dictionary version when written: what decides the form the row takes
    /// when mined ([`super::at_mining`]).
    pub object: Option<RowObject>,
    /// For undo rows: the SCN of the change undone (sequence-less XID when it is before the
    /// window).
    pub undoes_scn: Option<u64>,
}

/// A stored row's SQL_UNDO: the view fills it in only for a window that asks for it
/// ([`crate::source::MiningWindow::with_sql_undo`]).
#[derive(Clone, Debug)]
pub(crate) enum StoredUndo {
    None,
    Text(String),
    /// Rendered when a window asks for it; what [`Redo::write`] was told its length is.
    Deferred(DeferredUndo),
}

/// What a DML row's SQL_UNDO is rendered from: shared row versions and the table's text, so
/// keeping it costs reference counts, not rendering. Only for text that fits one row (the
/// writer checks the length it is given).
#[derive(Clone, Debug)]
pub(crate) enum DeferredUndo {
    /// SQL_UNDO of an INSERT: `delete from … where` every non-LOB column `and ROWID = …;`.
    Delete {
        text: Arc<TableText>,
        values: Arc<[Value]>,
    },
    /// SQL_UNDO of an UPDATE: the before values of the `set` columns (a bit per column
    /// position), where the logged columns (under `logging`) hold the after values.
    Update {
        text: Arc<TableText>,
        set: u64,
        logging: TableLogging,
        before: Arc<[Value]>,
        after: Arc<[Value]>,
    },
}

impl DeferredUndo {
    pub fn render(&self, row_id: &str) -> String {
        match self {
            Self::Delete { text, values } => {
                let columns = text.schema.columns();
                let mut sql = String::with_capacity(96 + values.len() * 48);
                sql.push_str("delete from ");
                sql.push_str(&text.quoted_table);
                let mut first = true;
                for (i, (value, column)) in values.iter().zip(columns).enumerate() {
                    if !column.data_type.is_lob_like() {
                        write_condition(
                            &mut sql,
                            &text.quoted_columns[i],
                            value,
                            &column.data_type,
                            first,
                        );
                        first = false;
                    }
                }
                write_rowid_condition(&mut sql, row_id, first);
                sql.push(';');
                sql
            }
            Self::Update {
                text,
                set,
                logging,
                before,
                after,
            } => {
                let set: Vec<usize> = (0..64).filter(|i| set & (1 << i) != 0).collect();
                let logged = logged_columns(text, *logging, &set);
                render_update_undo(text, &set, &logged, (before, after), row_id)
            }
        }
    }
}

/// Rows per chunk of the row store.
const CHUNK_ROWS: usize = 8192;

/// SQL_REDO bytes reserved per row of a chunk (typical DML text; a chunk's text grows past it).
const CHUNK_TEXT_PER_ROW: usize = 256;

/// Rows and, packed one after the other, their SQL_REDO text.
#[derive(Debug)]
struct Chunk {
    rows: Vec<StoredRow>,
    text: String,
}

/// The stored rows in generation (SCN) order, in fixed-size chunks: appending never copies the
/// rows already stored, as one growing vector would (rows are written by the million), and
/// SQL_REDO text is packed per chunk instead of a heap block per row.
#[derive(Debug, Default)]
pub(crate) struct RowStore {
    chunks: Vec<Chunk>,
}

impl RowStore {
    #[inline]
    fn push(&mut self, mut row: StoredRow, redo: Option<&str>) {
        if self
            .chunks
            .last()
            .is_none_or(|chunk| chunk.rows.len() >= CHUNK_ROWS)
        {
            self.chunks.push(Chunk {
                rows: Vec::with_capacity(CHUNK_ROWS),
                text: String::with_capacity(CHUNK_ROWS * CHUNK_TEXT_PER_ROW),
            });
        }
        let Some(chunk) = self.chunks.last_mut() else {
            return;
        };
        if let Some(text) = redo {
            row.redo = Some((chunk.text.len() as u32, text.len() as u32));
            chunk.text.push_str(text);
        }
        chunk.rows.push(row);
    }

    fn retain(&mut self, mut keep: impl FnMut(&StoredRow) -> bool) {
        for chunk in &mut self.chunks {
            chunk.rows.retain(&mut keep);
        }
        self.chunks.retain(|chunk| !chunk.rows.is_empty());
    }

    /// The rows from the first with an SCN at or above `scn` on, each with its chunk's text.
    pub fn starting_at_scn(&self, scn: u64) -> impl Iterator<Item = (&StoredRow, &str)> {
        let first = self
            .chunks
            .partition_point(|chunk| chunk.rows.last().is_some_and(|row| row.row.scn < scn));
        self.chunks[first..]
            .iter()
            .flat_map(|chunk| chunk.rows.iter().map(|row| (row, chunk.text.as_str())))
            .skip_while(move |(row, _)| row.row.scn < scn)
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
    /// The clock (UTC) when the log was started (`FIRST_TIME`, a scenario's first log: when the
    /// simulator started) and closed by a switch (`NEXT_TIME`).
    pub opened: civil::DateTime,
    pub closed: Option<civil::DateTime>,
}

/// How long the archiver takes to copy a closed log: `V$ARCHIVED_LOG.COMPLETION_TIME` is this
/// much after the switch (`NEXT_TIME`). A fixed figure of the model, not Oracle's (it depends on
/// the log's size and the destination), kept non-zero so the two columns differ as they do.
const ARCHIVER_COPY: SignedDuration = SignedDuration::from_secs(2);

impl LogFile {
    /// The log an online group starts at `first_scn` at `now`: current, open-ended, not
    /// archived yet.
    fn current(
        thread: u16,
        sequence: u32,
        incarnation: u32,
        first_scn: u64,
        now: civil::DateTime,
    ) -> Self {
        Self {
            thread,
            sequence,
            incarnation,
            first_scn,
            next_scn: None,
            online: true,
            archived: false,
            opened: now,
            closed: None,
        }
    }

    /// When archiving the log completed (UTC): after its switch, once archived.
    pub fn completed(&self) -> Option<civil::DateTime> {
        self.closed
            .filter(|_| self.archived)
            .map(|closed| closed + ARCHIVER_COPY)
    }
}

/// LGWR writes a log buffer whose oldest redo has waited this long (Oracle's 3-second timeout).
pub(crate) const LGWR_TIMEOUT: SignedDuration = SignedDuration::from_secs(3);

#[derive(Debug)]
pub(crate) struct Thread {
    pub number: u16,
    pub enable_scn: u64,
    pub sequence: u32,
    pub block: u32,
    pub records_in_log: u64,
    pub last_record_scn: u64,
    /// Every change of this thread at or below it is in the online log.
    pub written_scn: u64,
    /// The clock time of the oldest change in the log buffer; `None` when the buffer is empty.
    pub buffered_since: Option<civil::DateTime>,
}

impl Thread {
    /// LGWR writes the whole log buffer: every change of the thread up to `scn` is on disk.
    pub fn write_out(&mut self, scn: u64) {
        self.written_scn = self.written_scn.max(scn);
        self.buffered_since = None;
    }
}

/// Everything about a row but its redo address, CSF and storage.
#[derive(Debug)]
pub(crate) struct RowSpec {
    pub scn: u64,
    /// The clock (UTC) when the change was made; the row shows it in the host's zone.
    pub time: civil::DateTime,
    pub xid: Xid,
    pub operation: OperationCode,
    pub rollback: bool,
    pub row_id: Arc<str>,
    pub table: Option<(Arc<str>, Arc<str>, u32)>,
    pub object: Option<RowObject>,
    pub user: Option<Arc<str>>,
    pub session: Option<(u32, u32)>,
    pub thread: u16,
    pub info: Option<Arc<str>>,
    pub sql_redo: Option<String>,
    pub sql_undo: Option<String>,
    /// SQL_UNDO rendered only when a window asks for it, with its length in bytes (used
    /// instead of `sql_undo` when set).
    pub deferred_undo: Option<(DeferredUndo, usize)>,
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
    /// The host's time zone (the catalog's): a row's TIMESTAMP is stamped in it when written,
    /// so rows written before and after a DST switch keep the local times they had.
    pub time_zone: jiff::tz::TimeZone,
    /// A written row's SQL_REDO buffer, handed out again by [`Redo::buffer`].
    spare: String,
    /// The empty text stored rows hold as `RS_ID`.
    blank: Arc<str>,
}

impl Redo {
    /// An empty buffer to render SQL_REDO into (the allocation of an earlier row's).
    pub fn buffer(&mut self) -> String {
        let mut buffer = std::mem::take(&mut self.spare);
        buffer.clear();
        buffer
    }

    fn recycle(&mut self, text: Option<String>) {
        if let Some(text) = text
            && text.capacity() > self.spare.capacity()
        {
            self.spare = text;
        }
    }

    pub fn new(scn: u64, now: civil::DateTime) -> Self {
        let mut redo = Self {
            threads: Vec::new(),
            logs: Vec::new(),
            rows: RowStore::default(),
            online_groups: 3,
            switch_records: 100_000,
            archivelog: true,
            incarnation: 1,
            container: None,
            time_zone: jiff::tz::TimeZone::UTC,
            spare: String::new(),
            blank: Arc::from(""),
        };
        redo.ensure_thread(1, scn, now);
        redo
    }

    pub fn ensure_thread(&mut self, number: u16, scn: u64, now: civil::DateTime) -> usize {
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
            buffered_since: None,
        });
        self.logs
            .push(LogFile::current(number, 1, self.incarnation, scn, now));
        self.threads.len() - 1
    }

    /// Closes the current log of `thread` at `scn`, archives it (ARCHIVELOG) and starts the next
    /// sequence at `now` (UTC); the group overwritten loses its old sequence.
    pub fn switch(&mut self, thread: u16, scn: u64, now: civil::DateTime) {
        let incarnation = self.incarnation;
        let Some(state) = self.threads.iter_mut().find(|t| t.number == thread) else {
            return;
        };
        let closed = state.sequence;
        state.sequence += 1;
        state.block = 2;
        state.records_in_log = 0;
        state.write_out(scn);
        let next_sequence = state.sequence;
        let archivelog = self.archivelog;
        for log in &mut self.logs {
            if log.thread == thread && log.incarnation == incarnation && log.sequence == closed {
                log.next_scn = Some(scn);
                log.closed = Some(now);
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
        self.logs.push(LogFile::current(
            thread,
            next_sequence,
            incarnation,
            scn,
            now,
        ));
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
    pub fn resetlogs(&mut self, scn: u64, now: civil::DateTime) {
        for log in &mut self.logs {
            log.online = false;
            if log.next_scn.is_none() {
                log.next_scn = Some(scn);
                log.closed = Some(now);
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
            thread.buffered_since = None;
            self.logs
                .push(LogFile::current(thread.number, 1, incarnation, scn, now));
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
            self.switch(spec.thread, spec.scn, spec.time);
        }
        let thread = &mut self.threads[index];
        let address = RedoAddress {
            sequence: thread.sequence,
            block: thread.block,
            offset: 0x10,
        };
        let undo_length = match &spec.deferred_undo {
            Some((_, length)) => *length,
            None => spec.sql_undo.as_ref().map_or(0, String::len),
        };
        let length = spec.sql_redo.as_ref().map_or(0, String::len) + undo_length;
        thread.block += 1 + (length / 512) as u32;
        thread.records_in_log += 1;
        thread.last_record_scn = spec.scn;
        if thread.buffered_since.is_none() {
            // Nothing was unwritten below this change: the position an empty buffer reported
            // (the current SCN) stays, so LAST_REDO_CHANGE# never goes back.
            thread.written_scn = thread.written_scn.max(spec.scn.saturating_sub(1));
            thread.buffered_since = Some(spec.time);
        }
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
            timestamp: Some(host_local_time(&self.time_zone, spec.time)),
            commit_timestamp: spec
                .commit_time
                .map(|time| host_local_time(&self.time_zone, time)),
            xid: spec.xid,
            operation: spec.operation,
            rollback: spec.rollback,
            row_id: spec.row_id,
            rs_id: Arc::clone(&self.blank),
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
            // LogMiner writes 0 for rows of no object (START, COMMIT).
            object_id: Some(spec.object.map_or(0, |object| u64::from(object.object_id))),
        };
        let incarnation = self.incarnation;
        let stored = |row: LogMinerRow, undo: StoredUndo| StoredRow {
            row,
            address,
            redo: None,
            undo,
            incarnation,
            sequence,
            name_id,
            object: spec.object,
            undoes_scn: spec.undoes_scn,
        };
        let too_long = |text: &Option<String>| {
            text.as_ref()
                .is_some_and(|t| t.len() > super::render::MAX_SQL_BYTES)
        };
        let mut sql_undo = spec.sql_undo;
        if let Some((deferred, length)) = spec.deferred_undo {
            #[cfg(debug_assertions)]
            assert_eq!(
                deferred.render(&row.row_id).len(),
                length,
                "deferred SQL_UNDO length"
            );
            if length <= super::render::MAX_SQL_BYTES && !too_long(&spec.sql_redo) {
                let redo = spec.sql_redo.as_deref();
                self.rows
                    .push(stored(row, StoredUndo::Deferred(deferred)), redo);
                self.recycle(spec.sql_redo);
                return;
            }
            sql_undo = Some(deferred.render(&row.row_id));
        }
        if !too_long(&spec.sql_redo) && !too_long(&sql_undo) {
            let undo = sql_undo.map_or(StoredUndo::None, StoredUndo::Text);
            self.rows.push(stored(row, undo), spec.sql_redo.as_deref());
            self.recycle(spec.sql_redo);
            return;
        }
        let redo = spec
            .sql_redo
            .as_deref()
            .map(split_pieces)
            .unwrap_or_default();
        let undo = sql_undo.as_deref().map(split_pieces).unwrap_or_default();
        let count = redo.len().max(undo.len());
        for piece in 0..count {
            let mut part = row.clone();
            let undo = undo
                .get(piece)
                .map_or(StoredUndo::None, |s| StoredUndo::Text((*s).to_owned()));
            part.csf = piece + 1 < count;
            self.rows.push(stored(part, undo), redo.get(piece).copied());
        }
    }

    /// `V$LOG` ∪ `V$ARCHIVED_LOG` of the current incarnation reaching `from_scn`, listed when
    /// `catalog`'s clock shows its `now`: an archived copy's completion in the host's local
    /// time, and its age as `SYSDATE - COMPLETION_TIME` has it (both local).
    pub fn listed_logs(&self, from_scn: u64, catalog: &Catalog) -> Vec<RedoLog> {
        let name = catalog.name.as_str();
        let local = |utc: civil::DateTime| host_local_time(&catalog.time_zone, utc);
        let sysdate = local(catalog.now);
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
                completion: match kind {
                    RedoLogKind::Archived => log.completed().map(|completed| Completion {
                        time: local(completed),
                        age: sysdate.duration_since(local(completed)),
                    }),
                    RedoLogKind::Online => None,
                },
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

    /// LGWR's timeout at clock time `now` (the current SCN is `scn`): every thread whose oldest
    /// buffered change has waited [`LGWR_TIMEOUT`] is written.
    pub fn lgwr_timeout(&mut self, now: civil::DateTime, scn: u64) {
        for thread in &mut self.threads {
            let due = thread
                .buffered_since
                .and_then(|since| since.checked_add(LGWR_TIMEOUT).ok())
                .is_some_and(|due| due <= now);
            if due {
                thread.write_out(scn);
            }
        }
    }

    /// `V$THREAD` at current SCN `scn`.
    pub fn thread_views(&self, scn: u64) -> Vec<RedoThread> {
        self.threads
            .iter()
            .map(|t| RedoThread {
                thread: t.number,
                open: true,
                enabled: ThreadEnabled::Public,
                checkpoint_scn: t.written_scn,
                // The last change LGWR wrote for this thread. The instance the capture is
                // connected to (thread 1) is never idle: with nothing buffered, all its redo up to
                // now is written. Another instance that writes nothing keeps its last write, so
                // a quiet RAC instance holds capture back until it writes again (its log
                // switches, ARCHIVE_LAG_TARGET).
                last_redo_scn: match t.buffered_since {
                    None if t.number == 1 => scn.max(t.written_scn),
                    _ => t.written_scn,
                },
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
    /// The interned names of the tables asked for.
    pub tables: FastSet<u32>,
    /// The object numbers asked for ([`crate::source::MiningWindow::objects`]).
    pub objects: FastSet<u64>,
    pub pdb: Option<String>,
    pub incarnation: u32,
    /// `(thread, sequence)` of every registered log.
    pub registered: FastSet<(u16, u32)>,
    /// Registered online logs: mining fails (ORA-00310) once a switch overwrote one.
    pub online: Vec<(u16, u32)>,
    /// The window selects SQL_UNDO ([`crate::source::MiningWindow::with_sql_undo`]).
    pub with_sql_undo: bool,
}

impl MiningSession {
    /// Whether `stored` belongs in this window (see the filter rules in `docs/simulator.md`):
    /// a row of a table by the name it has when mined, by its object number, or as a row
    /// named by number (what the client's contents query keeps).
    pub fn shows(&self, stored: &StoredRow, written: &[(u16, u64)], tables: &[Table]) -> bool {
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
            _ => {
                if stored
                    .object
                    .is_some_and(|o| self.objects.contains(&u64::from(o.object_id)))
                {
                    return true;
                }
                match at_mining(stored.object, stored.row.operation, stored.name_id, tables) {
                    AtMining::AsWritten => {
                        stored.name_id.is_some_and(|id| self.tables.contains(&id))
                    }
                    AtMining::Renamed { name_id, .. } => self.tables.contains(&name_id),
                    AtMining::Numbered { .. } => !self.tables.is_empty(),
                }
            }
        }
    }

    /// The row as this window shows it: an undo row of a change made before the window carries
    /// the sequence-less XID; SQL_UNDO only when the window selects it.
    pub fn view(
        &self,
        stored: &StoredRow,
        text: &str,
        tables: &[Table],
        formats: Option<&DatabaseFormats>,
    ) -> LogMinerRow {
        let row = &stored.row;
        let mut sql_redo = stored
            .redo
            .and_then(|(start, length)| text.get(start as usize..(start + length) as usize))
            .map(str::to_owned);
        let mut sql_undo = match &stored.undo {
            _ if !self.with_sql_undo => None,
            StoredUndo::None => None,
            StoredUndo::Text(text) => Some(text.clone()),
            StoredUndo::Deferred(deferred) => Some(deferred.render(&row.row_id)),
        };
        let (mut seg_owner, mut table_name) = (row.seg_owner.clone(), row.table_name.clone());
        let (mut status, mut info) = (row.status, row.info.clone());
        match at_mining(stored.object, stored.row.operation, stored.name_id, tables) {
            AtMining::AsWritten => {}
            AtMining::Renamed { owner, table, .. } => {
                if let (Some(old_owner), Some(old_table)) = (&row.seg_owner, &row.table_name) {
                    let written = (old_owner.as_ref(), old_table.as_ref());
                    let rename = |sql: String| renamed_sql(&sql, written, (&owner, &table));
                    sql_redo = sql_redo.map(rename);
                    sql_undo = sql_undo.map(rename);
                }
                (seg_owner, table_name) = (Some(owner), Some(table));
            }
            AtMining::Numbered { object_id, schema } => {
                let numbered = |sql: String| -> Option<String> {
                    let dml = matches!(
                        row.operation,
                        OperationCode::Insert | OperationCode::Update | OperationCode::Delete
                    );
                    // A statement continued over several rows cannot be rebuilt piece by piece
                    // (the last piece, with CSF 0, does not parse on its own).
                    if !dml || row.csf {
                        return None;
                    }
                    numbered_sql(&sql, object_id, &schema, formats?)
                };
                sql_redo = sql_redo.and_then(numbered);
                sql_undo = sql_undo.and_then(numbered);
                seg_owner = Some(Arc::from(NUMBERED_OWNER));
                table_name = Some(Arc::from(format!("OBJ# {object_id}").as_str()));
                status = 2;
                info = Some(Arc::from(MISMATCH_INFO));
            }
        }
        let xid = if stored.undoes_scn.is_some_and(|scn| scn < self.start_scn) {
            Xid::from_parts(row.xid.usn(), row.xid.slot(), SEQUENCELESS_XIDSQN)
        } else {
            row.xid
        };
        // Field by field rather than a clone: the stored RS_ID and SQL columns are not kept.
        LogMinerRow {
            scn: row.scn,
            start_scn: row.start_scn,
            commit_scn: row.commit_scn,
            timestamp: row.timestamp,
            commit_timestamp: row.commit_timestamp,
            xid,
            operation: row.operation,
            rollback: row.rollback,
            row_id: Arc::clone(&row.row_id),
            rs_id: rs_id(stored.address),
            ssn: row.ssn,
            csf: row.csf,
            seg_owner,
            table_name,
            username: row.username.clone(),
            session: row.session,
            serial: row.serial,
            thread: row.thread,
            info,
            status,
            sql_redo,
            sql_undo,
            src_con_name: row.src_con_name.clone(),
            con_id: row.con_id,
            object_id: row.object_id,
        }
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
