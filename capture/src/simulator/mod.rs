//! An Oracle database simulator behind the capture's Oracle boundary: it implements
//! [`DatabaseCatalog`], [`RedoMiner`] and [`FlashbackReader`] and writes, for every scenario step,
//! exactly the `V$LOGMNR_CONTENTS` rows LogMiner would (facts and sources in
//! `../shared/reference/logminer.md`; the scenario format and every modelling choice in
//! `docs/simulator.md`).
//!
//! ```text
//! scenario JSON Lines ─ scenario::parse_step ─┐
//! Rust (Step values) ─────────────────────────┴─ apply ─┬─ database: tables, row versions,
//! Rust (TypedStep: typed values) ─ apply_typed ─────────┤  transactions, undo slots, catalog
//!                                                       └─ render → redo: rows per thread/log
//! RedoMiner::start_mining (plan_logs) → stream_rows: window filter over the stored rows
//! ```
//!
//! Design:
//! - Rows are rendered once, when the step is applied (as Oracle writes redo once), and kept in
//!   SCN order; a mining window is a binary search and a filter, and a window's view changes only
//!   the XID of undo rows whose original change lies before the window (the sequence-less XID).
//!   SQL_UNDO is the exception: the Oracle client never selects it, so a DML row keeps what its
//!   SQL_UNDO is made of (shared row versions) and its length (the redo address needs it), and
//!   the view renders it only for a window with `with_sql_undo`.
//! - Generated workloads (benchmarks, property tests) can skip JSON: [`TypedStep`]s carry typed
//!   values and a resolved [`TableHandle`], checked by the same Oracle rules as scenario values.
//! - Each step takes one SCN: all rows of a step share it and keep redo order (distinct `RS_ID`s;
//!   CSF continuation rows share theirs).
//! - Steps can be appended at any time ([`Simulator::apply`], [`Simulator::apply_line`]), also
//!   between mining windows, so a capture can mine a workload as it is fed.
//! - A step that is malformed or impossible (unknown table or column, no matching row, a locked
//!   row, a value that does not fit its column, an unknown transaction or savepoint) is a
//!   [`ScenarioError`] naming line and field; the checks run before the state changes, except
//!   that the step's SCN is spent.

mod action;
mod apply;
mod at_mining;
mod database;
mod ddl_steps;
mod dml_steps;
mod follow;
mod lob_steps;
mod predicate;
mod redo_log;
mod render;
pub mod scenario;
pub mod sql;
mod statement;
mod transaction;
pub mod typed;
mod values;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::io::BufRead;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use jiff::civil;

use crate::dictionary::{ObjectNumbers, TableSchema};
use crate::source::unique_key::{usable_unique_keys, with_key};
use crate::source::{
    CatalogTable, DatabaseCatalog, DatabaseInfo, FlashbackReader, FlashbackRow, LogGroup,
    LogGroupType, LogMinerRow, LogMode, MiningWindow, OpenTransaction, PdbIncarnation, RedoLog,
    RedoMiner, RedoThread, RowRange, SessionId, SessionPrivileges, SourceError, StorageSettings,
    TableKey, chunks, plan_logs,
};
use crate::value::{Row, Value};
use database::{Catalog, FastMap, SlotPool, Table, Transaction};
use redo_log::{MiningSession, Redo};
pub use scenario::{ScenarioError, Step, TableLogging};
pub use typed::{TableHandle, TypedStep};

/// Reading a scenario file failed.
#[derive(Debug, thiserror::Error)]
pub enum SimulatorError {
    #[error("cannot read scenario {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}

/// The simulated database; see the module docs.
#[derive(Debug)]
pub struct Simulator {
    catalog: Catalog,
    tables: Vec<Table>,
    /// `OWNER.TABLE` → index in `tables` of the live table of that name.
    table_index: FastMap<String, usize>,
    /// Interned `(owner, table)` names (stable across drop and re-create).
    names: HashMap<(String, String), u32>,
    transactions: FastMap<String, Transaction>,
    next_transaction: u64,
    next_session: u32,
    next_data_object: u32,
    slots: SlotPool,
    redo: Redo,
    mining: Option<MiningSession>,
    /// The redo thread later steps run on.
    thread: u16,
    /// Steps (lines) applied so far.
    steps: usize,
    /// A reused buffer for text measured, not kept.
    scratch: String,
    /// [`PLACEHOLDER_ROW_ID`](crate::source::row::PLACEHOLDER_ROW_ID), shared by control rows.
    placeholder: Arc<str>,
    /// The scenario file whose appended lines are applied as they come.
    follow: Option<follow::FollowedScenario>,
}

impl Default for Simulator {
    fn default() -> Self {
        Self::new()
    }
}

impl Simulator {
    /// An empty database: no tables, ARCHIVELOG, minimal supplemental logging, one redo thread,
    /// SCN 1,000,000 at 2024-01-02 00:00:00.
    pub fn new() -> Self {
        let catalog = Catalog::new();
        let redo = Redo::new(catalog.scn, catalog.now);
        Self {
            catalog,
            tables: Vec::new(),
            table_index: FastMap::default(),
            names: HashMap::new(),
            transactions: FastMap::default(),
            next_transaction: 1,
            next_session: 21,
            next_data_object: 73_000,
            slots: SlotPool::new(),
            redo,
            mining: None,
            thread: 1,
            steps: 0,
            scratch: String::new(),
            placeholder: Arc::from(crate::source::row::PLACEHOLDER_ROW_ID),
            follow: None,
        }
    }

    /// A simulator with every step of a scenario file applied.
    pub fn from_scenario_file(path: impl AsRef<Path>) -> Result<Self, SimulatorError> {
        let path = path.as_ref();
        let read_error = |source| SimulatorError::Read {
            path: path.display().to_string(),
            source,
        };
        let file = std::fs::File::open(path).map_err(read_error)?;
        let mut simulator = Self::new();
        simulator
            .apply_reader(std::io::BufReader::new(file))
            .map_err(|e| match e {
                SimulatorError::Read { source, .. } => read_error(source),
                other => other,
            })?;
        Ok(simulator)
    }

    /// A simulator with every step read from `reader` applied.
    pub fn from_reader(reader: impl BufRead) -> Result<Self, SimulatorError> {
        let mut simulator = Self::new();
        simulator.apply_reader(reader)?;
        Ok(simulator)
    }

    /// Applies more JSON Lines steps; line numbers continue from the steps applied so far.
    pub fn apply_reader(&mut self, reader: impl BufRead) -> Result<(), SimulatorError> {
        for line in reader.lines() {
            let line = line.map_err(|source| SimulatorError::Read {
                path: "(reader)".to_owned(),
                source,
            })?;
            self.apply_line(&line)?;
        }
        Ok(())
    }

    /// Applies one JSON Lines step (a blank line, or a comment: a line whose first non-blank
    /// character is `#`, only counts as a line).
    pub fn apply_line(&mut self, text: &str) -> Result<(), ScenarioError> {
        let line = self.steps + 1;
        let text_start = text.trim_start();
        if text_start.is_empty() || text_start.starts_with('#') {
            self.steps = line;
            return Ok(());
        }
        let step = scenario::parse_step(line, text);
        self.steps = line;
        self.apply_numbered(line, step?)
    }

    /// Applies one step built in Rust; errors name its ordinal as the line.
    pub fn apply(&mut self, step: Step) -> Result<(), ScenarioError> {
        self.steps += 1;
        self.apply_numbered(self.steps, step)
    }

    /// The committed rows of a table as of the current SCN, in ROWID order: `(ROWID, values in
    /// column order)`. `None` for an unknown table.
    pub fn committed_rows(&self, owner: &str, table: &str) -> Option<Vec<(String, Vec<Value>)>> {
        let table = self.live_table(owner, table)?;
        Some(
            table
                .rows
                .values()
                .filter_map(|row| {
                    row.as_of(self.catalog.scn)
                        .map(|values| (row.row_id.to_string(), values.to_vec()))
                })
                .collect(),
        )
    }

    /// The current dictionary entry of a table.
    pub fn schema(&self, owner: &str, table: &str) -> Option<Arc<TableSchema>> {
        self.live_table(owner, table).map(|t| Arc::clone(&t.schema))
    }

    /// The database user the capture logs in as.
    pub fn capture_user(&self) -> String {
        self.catalog.capture_user.to_string()
    }

    /// The scenario names of the transactions still open.
    pub fn open_transaction_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.transactions.keys().cloned().collect();
        names.sort();
        names
    }

    /// `start_mining` of `window` and every row `stream_rows` then gives: for the tests and
    /// benchmarks that look at the rows themselves rather than at a capture of them.
    pub fn mined_rows(&mut self, window: &MiningWindow) -> Result<Vec<LogMinerRow>, SourceError> {
        self.start_mining(window)?;
        let mut rows = Vec::new();
        self.stream_rows(&mut |row| {
            rows.push(row);
            ControlFlow::Continue(())
        })?;
        Ok(rows)
    }

    fn live_table(&self, owner: &str, table: &str) -> Option<&Table> {
        self.table_index
            .get(&format!("{owner}.{table}"))
            .and_then(|&index| self.tables.get(index))
    }
}

impl DatabaseCatalog for Simulator {
    /// The simulator's statistics are always fresh: the live row count.
    fn row_estimate(&mut self, owner: &str, table: &str) -> Result<Option<u64>, SourceError> {
        let scn = self.catalog.scn;
        Ok(self.live_table(owner, table).map(|found| {
            found
                .rows
                .starting_at(0)
                .filter(|(_, row)| row.as_of(scn).is_some())
                .count() as u64
        }))
    }

    fn database(&mut self) -> Result<DatabaseInfo, SourceError> {
        let catalog = &self.catalog;
        Ok(DatabaseInfo {
            dbid: catalog.dbid,
            name: catalog.name.clone(),
            version: catalog.version.clone(),
            log_mode: if catalog.archivelog {
                LogMode::Archivelog
            } else {
                LogMode::NoArchivelog
            },
            supplemental: catalog.supplemental,
            current_scn: catalog.scn,
            resetlogs_scn: catalog.resetlogs_scn,
            resetlogs_time: catalog.resetlogs_time,
            cdb: catalog.pdb.is_some(),
        })
    }

    fn current_scn(&mut self) -> Result<u64, SourceError> {
        // A followed scenario's new steps are the database's activity since the last look.
        self.apply_appended()?;
        Ok(self.catalog.scn)
    }

    fn pdb_incarnation(&mut self, pdb: &str) -> Result<Option<PdbIncarnation>, SourceError> {
        let catalog = &self.catalog;
        if catalog.ungranted_views.contains("V$PDB_INCARNATION") {
            return Err(SourceError::Database {
                call: "read PDB incarnation",
                code: Some("ORA-00942".to_owned()),
                message: "ORA-00942: table or view does not exist".to_owned(),
            });
        }
        Ok(catalog
            .pdb
            .as_deref()
            .filter(|name| *name == pdb)
            .map(|name| PdbIncarnation {
                pdb: name.to_owned(),
                con_id: catalog.con_id,
                db_incarnation: catalog.incarnation,
                pdb_incarnation: catalog.pdb_incarnation,
                incarnation_scn: catalog.pdb_incarnation_scn,
            }))
    }

    fn threads(&mut self) -> Result<Vec<RedoThread>, SourceError> {
        Ok(self.redo.thread_views(self.catalog.scn))
    }

    fn open_transactions(&mut self) -> Result<Vec<OpenTransaction>, SourceError> {
        let con_id = self.catalog.pdb.as_ref().map(|_| self.catalog.con_id);
        let mut open: Vec<OpenTransaction> = self
            .transactions
            .values()
            .filter_map(|tx| {
                tx.started.map(|started| OpenTransaction {
                    xid: started.xid,
                    instance: tx.thread,
                    start_scn: started.start_scn,
                    status: "ACTIVE".to_owned(),
                    con_id,
                })
            })
            .collect();
        open.sort_by_key(|tx| tx.start_scn);
        Ok(open)
    }

    fn sessions(&mut self) -> Result<Vec<SessionId>, SourceError> {
        let mut sessions: Vec<SessionId> = self.transactions.values().map(|t| t.session).collect();
        sessions.sort();
        Ok(sessions)
    }

    fn scn_to_timestamp(&mut self, scn: u64) -> Result<Option<civil::DateTime>, SourceError> {
        Ok(self.catalog.time_of(scn))
    }

    fn database_utc_offset(&mut self) -> Result<jiff::tz::Offset, SourceError> {
        Ok(self.catalog.host_now().offset())
    }

    fn storage_settings(&mut self) -> Result<StorageSettings, SourceError> {
        if self
            .catalog
            .ungranted_views
            .contains("NLS_DATABASE_PARAMETERS")
        {
            return Err(SourceError::Database {
                call: "read the database's character sets and time zone",
                code: Some("ORA-00942".to_owned()),
                message: "ORA-00942: table or view does not exist".to_owned(),
            });
        }
        Ok(StorageSettings {
            character_set: self.catalog.character_set.clone(),
            national_character_set: self.catalog.national_character_set.clone(),
            database_time_zone: self.catalog.dbtimezone.clone(),
        })
    }

    fn table(&mut self, owner: &str, table: &str) -> Result<CatalogTable, SourceError> {
        let found = self
            .live_table(owner, table)
            .ok_or_else(|| SourceError::NoSuchTable {
                owner: owner.to_owned(),
                table: table.to_owned(),
            })?;
        let kind = match found.logging {
            TableLogging::All => Some(LogGroupType::AllColumn),
            TableLogging::PrimaryKey => Some(LogGroupType::PrimaryKey),
            TableLogging::None => None,
        };
        // The key as the Oracle client derives it from the catalog views.
        let unique = usable_unique_keys(&found.unique_index_columns(), found.schema.columns());
        let key = TableKey::of(found.schema.has_key(), &unique);
        // Each column's segment column number is its position: the model renumbers columns at
        // DROP COLUMN, as Oracle does, and has no SET UNUSED or hidden columns.
        let numbered = found
            .schema
            .columns()
            .iter()
            .zip(1u16..)
            .map(|(column, number)| column.clone().segment(number))
            .collect();
        let columns = match (&key, unique.first()) {
            (TableKey::Unique { .. }, Some(first)) => with_key(numbered, first),
            _ => numbered,
        };
        let schema = TableSchema::new(owner, table, columns)
            .map_err(|error| SourceError::Malformed {
                what: format!("dictionary of {owner}.{table}"),
                message: error.to_string(),
            })?
            .with_object(ObjectNumbers {
                object_id: u64::from(found.object_id),
                data_object_id: found.table_data_object().map(u64::from),
            });
        let schema = Arc::new(schema);
        Ok(CatalogTable {
            schema,
            log_groups: kind
                .map(|kind| LogGroup { kind, always: true })
                .into_iter()
                .collect(),
            key,
        })
    }

    fn list_tables(&mut self) -> Result<Vec<(String, String)>, SourceError> {
        let mut names: Vec<(String, String)> = self
            .tables
            .iter()
            .filter(|table| !table.dropped)
            .map(|table| (table.owner.to_string(), table.name.to_string()))
            .collect();
        names.sort_unstable();
        Ok(names)
    }

    fn privileges(&mut self) -> Result<SessionPrivileges, SourceError> {
        Ok(SessionPrivileges {
            privileges: self.catalog.privileges.clone(),
            roles: self.catalog.roles.clone(),
            default_tablespace: Some("USERS".to_owned()),
        })
    }
}

impl RedoMiner for Simulator {
    fn redo_logs(&mut self, from_scn: u64) -> Result<Vec<RedoLog>, SourceError> {
        Ok(self.redo.listed_logs(from_scn, &self.catalog))
    }

    /// The flush-table write as the client makes it: on every instance, one small committed
    /// transaction of the capture user each (its START and COMMIT rows appear in the redo, as
    /// the real flush transactions' do), whose commit makes that instance's LGWR write its
    /// thread's whole log buffer.
    fn flush_redo(&mut self) -> Result<(), SourceError> {
        let open: Vec<u16> = self
            .redo
            .thread_views(self.catalog.scn)
            .iter()
            .filter(|thread| thread.open)
            .map(|thread| thread.thread)
            .collect();
        for thread in open {
            self.flush_redo_on(thread);
        }
        Ok(())
    }

    fn heartbeat_action(&mut self, sql: &str) -> Result<(), SourceError> {
        let refused = |message: String| SourceError::ActionQueryRefused { message };
        let tx = format!("__heartbeat_{}", self.catalog.scn);
        for step in action::action_steps(sql, &tx).map_err(refused)? {
            self.apply_line(&step)
                .map_err(|error| refused(error.message))?;
        }
        Ok(())
    }

    fn start_mining(&mut self, window: &MiningWindow) -> Result<(), SourceError> {
        if window.start_scn > window.end_scn {
            return Err(SourceError::Database {
                call: "DBMS_LOGMNR.START_LOGMNR",
                code: Some("ORA-01281".to_owned()),
                message: format!(
                    "SCN range specified is invalid: {} > {}",
                    window.start_scn, window.end_scn
                ),
            });
        }
        if self.catalog.archiver_races > 0 {
            self.catalog.archiver_races -= 1;
            return Err(SourceError::LogsChanged {
                log: None,
                message: "ORA-01291: missing logfile".to_owned(),
            });
        }
        let threads = self.redo.thread_views(self.catalog.scn);
        let registered: Vec<RedoLog> = if window.logs.is_empty() {
            // Per-PDB mining: START_LOGMNR finds the logs itself.
            let listed = self.redo.listed_logs(window.start_scn, &self.catalog);
            plan_logs(&threads, listed, window.start_scn)?.logs
        } else {
            // A log still exists when its file still holds its sequence (a switch since the
            // plan closes the current log but leaves its file in place).
            let listed = self.redo.listed_logs(0, &self.catalog);
            let exists = |log: &RedoLog| {
                listed.iter().any(|l| {
                    l.name == log.name && l.thread == log.thread && l.sequence == log.sequence
                })
            };
            // ADD_LOGFILE of a file gone since the listing: ORA-00308, which the client reports
            // as logs that changed, naming the log.
            if let Some(gone) = window.logs.iter().find(|log| !exists(log)) {
                return Err(SourceError::LogsChanged {
                    log: Some(gone.clone()),
                    message: format!("ORA-00308: cannot open archived log '{}'", gone.name),
                });
            }
            plan_logs(&threads, window.logs.clone(), window.start_scn)?.logs
        };
        let tables = window
            .tables
            .iter()
            .filter_map(|(owner, table)| self.names.get(&(owner.clone(), table.clone())).copied())
            .collect();
        self.mining = Some(MiningSession {
            start_scn: window.start_scn,
            end_scn: window.end_scn,
            tables,
            pdb: window.pdb.clone(),
            incarnation: self.redo.incarnation,
            registered: registered.iter().map(|l| (l.thread, l.sequence)).collect(),
            online: registered
                .iter()
                .filter(|l| l.kind == crate::source::RedoLogKind::Online)
                .map(|l| (l.thread, l.sequence))
                .collect(),
            with_sql_undo: window.with_sql_undo,
            objects: window.objects.iter().copied().collect(),
        });
        Ok(())
    }

    fn stream_rows(
        &mut self,
        visit: &mut dyn FnMut(LogMinerRow) -> ControlFlow<()>,
    ) -> Result<u64, SourceError> {
        let Some(session) = &self.mining else {
            return Err(SourceError::Database {
                call: "V$LOGMNR_CONTENTS",
                code: Some("ORA-01306".to_owned()),
                message: "dbms_logmnr.start_logmnr() must be invoked before selecting from \
                          v$logmnr_contents"
                    .to_owned(),
            });
        };
        let overwritten = session.online.iter().find(|(thread, sequence)| {
            !self.redo.logs.iter().any(|log| {
                log.online
                    && log.thread == *thread
                    && log.sequence == *sequence
                    && log.incarnation == session.incarnation
            })
        });
        if let Some((thread, sequence)) = overwritten {
            return Err(SourceError::LogSwitched {
                message: format!(
                    "ORA-00310: archived log contains sequence {}; sequence {sequence} required \
                     (thread {thread})",
                    sequence + self.redo.online_groups as u32
                ),
            });
        }
        let written: Vec<(u16, u64)> = self
            .redo
            .threads
            .iter()
            .map(|t| (t.number, t.written_scn))
            .collect();
        // The formats rows named by number are encoded in; with a character set the model has
        // no encoder for, such rows have no SQL_REDO (the capture must stop on them).
        let formats = StorageSettings {
            character_set: self.catalog.character_set.clone(),
            national_character_set: self.catalog.national_character_set.clone(),
            database_time_zone: self.catalog.dbtimezone.clone(),
        }
        .formats()
        .ok();
        let mut visited = 0;
        for (stored, text) in self.redo.rows.starting_at_scn(session.start_scn) {
            if stored.row.scn > session.end_scn {
                break;
            }
            if !session.shows(stored, &written, &self.tables) {
                continue;
            }
            visited += 1;
            if visit(session.view(stored, text, &self.tables, formats.as_ref())).is_break() {
                break;
            }
        }
        Ok(visited)
    }

    fn end_mining(&mut self) -> Result<(), SourceError> {
        self.mining = None;
        Ok(())
    }
}

// The boundary traits' signatures repeat in the Oracle client's implementations
// (`source/oracle/mod.rs`): the likeness ends there. The bodies answer from the model's own data,
// never by calling the client, since the simulator is what the client is checked against.
impl FlashbackReader for Simulator {
    fn flashback_batch(
        &mut self,
        table: &TableSchema,
        scn: u64,
        after: Option<&str>,
        condition: Option<&str>,
        max_rows: usize,
    ) -> Result<Vec<FlashbackRow>, SourceError> {
        let first = match after {
            _ if !self.found_table(table)?.rows_in_row_id_order() => 0,
            None => 0,
            Some(text) => {
                database::row_number(text).ok_or_else(|| SourceError::Malformed {
                    what: "ROWID".to_owned(),
                    message: format!("{text:?} is not a ROWID of this table"),
                })? + 1
            }
        };
        if !self.found_table(table)?.rows_in_row_id_order() {
            let mut rows = self.read_in_row_id_order(table, scn, condition)?;
            if let Some(after) = after {
                let after = Self::row_id_order(after);
                rows.retain(|row| Self::row_id_order(&row.position) > after);
            }
            rows.truncate(max_rows);
            return Ok(rows);
        }
        self.read_as_of(table, scn, first..u64::MAX, condition, max_rows)
    }

    fn table_chunks(
        &mut self,
        table: &TableSchema,
        rows_per_chunk: u64,
    ) -> Result<Vec<RowRange>, SourceError> {
        let views = &self.catalog.ungranted_views;
        if views.contains("DBA_EXTENTS") || views.contains("DBA_OBJECTS") {
            return Err(SourceError::Database {
                call: "read table extents",
                code: Some("ORA-00942".to_owned()),
                message: "ORA-00942: table or view does not exist".to_owned(),
            });
        }
        let found = self.found_table(table)?;
        if found.index_organized {
            // The model plans an IOT as one key range; the real client's key chunks are
            // evaluated by the SQL model (`sql::views`).
            return Ok(vec![RowRange::whole_key()]);
        }
        // Each segment's extents with its own data object id: one segment for a heap table,
        // one per partition.
        let extents: Vec<chunks::Extent> = (found.segments.iter())
            .flat_map(|segment| {
                Table::extents(segment)
                    .into_iter()
                    .map(|(file, block, blocks)| chunks::Extent {
                        data_object: u64::from(segment.data_object),
                        file,
                        block,
                        blocks,
                    })
            })
            .collect();
        let rows = self.row_estimate(table.schema(), table.table())?;
        let found = self.found_table(table)?;
        let target = chunks::blocks_per_chunk(rows_per_chunk, rows, Some(found.used_blocks()));
        chunks::plan(&extents, target)
            .into_iter()
            .map(|chunk| {
                let row_id = |at: chunks::BlockAddress, row| {
                    chunks::extended_row_id(chunk.data_object, at.file, at.block, row).ok_or_else(
                        || SourceError::Malformed {
                            what: table.qualified_name(),
                            message: format!("block {at:?} has no extended ROWID"),
                        },
                    )
                };
                Ok(RowRange::RowId {
                    lo: row_id(chunk.first, 0)?,
                    hi: row_id(chunk.last, chunks::LAST_ROW)?,
                })
            })
            .collect()
    }

    fn flashback_range(
        &mut self,
        table: &TableSchema,
        scn: u64,
        range: &RowRange,
        condition: Option<&str>,
    ) -> Result<Vec<FlashbackRow>, SourceError> {
        let index_organized = self.found_table(table)?.index_organized;
        let (lo, hi) = match range {
            RowRange::RowId { lo, hi } if !index_organized => (lo, hi),
            RowRange::Key {
                after: None,
                through: None,
            } if index_organized => return self.read_in_row_id_order(table, scn, condition),
            _ => {
                return Err(SourceError::Malformed {
                    what: table.qualified_name(),
                    message: format!("the range {range:?} is not one the model planned"),
                });
            }
        };
        let parts = |text: &str| {
            chunks::row_id_parts(text).ok_or_else(|| SourceError::Malformed {
                what: "ROWID".to_owned(),
                message: format!("{text:?} is not an extended ROWID"),
            })
        };
        let (lo, hi) = (parts(lo)?, parts(hi)?);
        if !self.found_table(table)?.rows_in_row_id_order() {
            let mut rows = self.read_in_row_id_order(table, scn, condition)?;
            rows.retain(|row| {
                chunks::row_id_parts(&row.position).is_some_and(|at| lo <= at && at <= hi)
            });
            return Ok(rows);
        }
        let rows = self.found_table(table)?.row_numbers_within(lo, hi);
        self.read_as_of(table, scn, rows, condition, usize::MAX)
    }
}

impl Simulator {
    /// The live table a flashback read names, or the error Oracle gives for it.
    fn found_table(&self, table: &TableSchema) -> Result<&Table, SourceError> {
        self.live_table(table.schema(), table.table())
            .ok_or_else(|| SourceError::NoSuchTable {
                owner: table.schema().to_owned(),
                table: table.table().to_owned(),
            })
    }

    /// Every row of a table whose row numbers are not in ROWID order (partitions, an IOT) as
    /// of `scn`, in ROWID order: by partition data object, block and slot; an IOT's logical
    /// ROWIDs by key.
    fn read_in_row_id_order(
        &self,
        table: &TableSchema,
        scn: u64,
        condition: Option<&str>,
    ) -> Result<Vec<FlashbackRow>, SourceError> {
        let mut rows = self.read_as_of(table, scn, 0..u64::MAX, condition, usize::MAX)?;
        rows.sort_by_cached_key(|row| Self::row_id_order(&row.position));
        Ok(rows)
    }

    /// A ROWID's sort key: an extended ROWID's parts, else its text (a logical ROWID).
    fn row_id_order(row_id: &str) -> (Option<(u64, u64, u64, u64)>, String) {
        match chunks::row_id_parts(row_id) {
            Some(parts) => (Some(parts), String::new()),
            None => (None, row_id.to_owned()),
        }
    }

    /// Up to `max_rows` rows of `table` as of `scn` among the row numbers `rows` (in ROWID
    /// order), matching `condition`: ORA-08181 past the current SCN, ORA-01466 before the
    /// table's last DDL, ORA-01555 when a row needs undo older than the undo kept.
    fn read_as_of(
        &self,
        table: &TableSchema,
        scn: u64,
        rows: std::ops::Range<u64>,
        condition: Option<&str>,
        max_rows: usize,
    ) -> Result<Vec<FlashbackRow>, SourceError> {
        let found = self.found_table(table)?;
        if scn > self.catalog.scn {
            return Err(SourceError::Database {
                call: "flashback query",
                code: Some("ORA-08181".to_owned()),
                message: format!("specified number is not a valid system change number: {scn}"),
            });
        }
        if scn < found.ddl_scn {
            return Err(SourceError::Database {
                call: "flashback query",
                code: Some("ORA-01466".to_owned()),
                message: "unable to read data - table definition has changed".to_owned(),
            });
        }
        let within = |number: &u64| rows.contains(number);
        // Oracle raises ORA-01555 when a read visits a block whose change since `scn` its undo
        // no longer holds; the model, coarser, for any read of a table with such a row.
        if scn < self.catalog.undo_kept_from_scn
            && found
                .rows
                .starting_at(0)
                .any(|(_, row)| row.changed_after(scn))
        {
            return Err(SourceError::SnapshotTooOld {
                scn,
                message: "ORA-01555: snapshot too old: rollback segment too small".to_owned(),
            });
        }
        let condition = condition
            .map(|text| predicate::Condition::parse(text, table))
            .transpose()
            .map_err(|error| SourceError::Database {
                call: "flashback query",
                code: None,
                message: error.to_string(),
            })?;
        let columns: Vec<Option<usize>> = table
            .columns()
            .iter()
            .map(|c| found.schema.column_index(&c.name))
            .collect();
        Ok(found
            .rows
            .starting_at(rows.start)
            .take_while(|(number, _)| within(number))
            .filter_map(|(_, row)| {
                let values = row.as_of(scn)?;
                let values: Vec<Value> = columns
                    .iter()
                    .map(|index| {
                        index
                            .and_then(|i| values.get(i).cloned())
                            .unwrap_or(Value::Null)
                    })
                    .collect();
                if condition.as_ref().is_some_and(|c| !c.selects(&values)) {
                    return None;
                }
                Some(FlashbackRow {
                    position: row.row_id.to_string(),
                    values: Row::from_values(values),
                })
            })
            .take(max_rows)
            .collect())
    }
}
