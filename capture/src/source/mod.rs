//! The Oracle boundary: everything the capture asks of Oracle, as three small traits.
//!
//! - [`DatabaseCatalog`]: identity and state (`V$DATABASE`, incarnations, `V$THREAD`), open
//!   transactions and sessions (for orphan detection), SCN-to-time, the dictionary of captured
//!   tables and the facts `doctor` checks.
//! - [`RedoMiner`]: which logs hold an SCN range, a LogMiner session over a window, the rows of
//!   `V$LOGMNR_CONTENTS`, and the flush write that makes LGWR write out the redo buffer.
//! - [`FlashbackReader`]: a table's chunks ([`chunks`]: ROWID ranges of its extents) and
//!   `SELECT ... AS OF SCN` over each, or batch by batch after a ROWID, for snapshots.
//!
//! Everything crossing the boundary is plain data ([`LogMinerRow`], [`DatabaseInfo`], ...), so the
//! mining loop, buffer and sink are tested without Oracle. Two implementations exist: the real one
//! on the `oracle` crate ([`oracle`]) and the simulator ([`crate::simulator`]). Calls are blocking:
//! the `oracle` crate is synchronous, and the capture runs mining on a thread of its own.
//!
//! [`csf`] rejoins a statement LogMiner split over continuation rows (`CSF = 1`), first thing
//! after the rows cross the boundary, so everything downstream sees one row per change.

pub mod archive_retention;
pub mod chunk_plan;
pub mod chunks;
pub mod csf;
pub mod fixtures;
pub mod grant;
pub mod key_logging;
pub mod logs;
pub mod oracle;
pub mod row;
pub mod storage;
pub mod unique_key;
pub mod window;
pub mod window_size;

use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::sync::Arc;

use jiff::civil;
use redoline_crds::StopCode;

use crate::dictionary::TableSchema;
use crate::stop::Stop;
use crate::value::Row;
pub use chunks::RowRange;
pub use logs::{Completion, LogPlan, RedoLog, RedoLogKind, plan_logs};
pub use row::{LogMinerRow, OperationCode, RedoAddress, Xid, XidError, missing_scn_range};
pub use storage::{StorageFormatError, StorageSettings};

/// `V$DATABASE.LOG_MODE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogMode {
    Archivelog,
    NoArchivelog,
    /// `MANUAL` (legacy) or anything else: not ARCHIVELOG.
    Other,
}

/// `V$DATABASE.SUPPLEMENTAL_LOG_DATA_MIN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinimalLogging {
    No,
    Yes,
    /// Implied by PK/UI/ALL logging at database level.
    Implicit,
}

/// Database-level supplemental logging (`V$DATABASE.SUPPLEMENTAL_LOG_DATA_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SupplementalLogging {
    pub min: MinimalLogging,
    pub primary_key: bool,
    pub unique: bool,
    pub foreign_key: bool,
    pub all: bool,
}

/// Identity and state of the database, from `V$DATABASE` (and `V$VERSION`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatabaseInfo {
    pub dbid: u64,
    pub name: String,
    /// The banner version, e.g. `19.0.0.0.0`.
    pub version: String,
    pub log_mode: LogMode,
    pub supplemental: SupplementalLogging,
    pub current_scn: u64,
    /// `RESETLOGS_CHANGE#`: identifies the database incarnation.
    pub resetlogs_scn: u64,
    pub resetlogs_time: civil::DateTime,
    /// Whether this is a container database.
    pub cdb: bool,
}

/// The current incarnation of a PDB (`V$PDB_INCARNATION`, STATUS `CURRENT`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PdbIncarnation {
    pub pdb: String,
    pub con_id: u32,
    pub db_incarnation: u32,
    pub pdb_incarnation: u32,
    /// `INCARNATION_SCN`: the SCN the PDB incarnation began at (a PDB point-in-time recovery
    /// or flashback starts a new one).
    pub incarnation_scn: u64,
}

/// `V$THREAD.ENABLED`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadEnabled {
    Public,
    /// An instance's own thread (`ENABLE PRIVATE THREAD`): mined like a public one.
    Private,
    Disabled,
}

/// One redo thread (one per RAC instance), from `V$THREAD`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedoThread {
    pub thread: u16,
    /// `STATUS = 'OPEN'`.
    pub open: bool,
    pub enabled: ThreadEnabled,
    /// `CHECKPOINT_CHANGE#`: the last checkpoint (moves at log switches and full checkpoints).
    pub checkpoint_scn: u64,
    /// `LAST_REDO_CHANGE#`: the SCN of the newest redo the log writer (LGWR) has written to this
    /// thread's online log. Redo above it may still be in the instance's log buffer, where
    /// LogMiner cannot see it; the window planner stops below it ([`window`]).
    pub last_redo_scn: u64,
    /// `SEQUENCE#`: the current log sequence.
    pub sequence: u32,
    /// `ENABLE_CHANGE#`.
    pub enable_scn: u64,
}

/// A transaction the database reports open (`GV$TRANSACTION`, or `V$TRANSACTION`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenTransaction {
    pub xid: Xid,
    /// `INST_ID` (1 from `V$TRANSACTION`).
    pub instance: u16,
    pub start_scn: u64,
    /// `STATUS`: `ACTIVE`, `INACTIVE`, `PREPARED`, ...
    pub status: String,
    pub con_id: Option<u32>,
}

/// A database session (`GV$SESSION`): the identity a START row names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId {
    /// The redo thread of the session's instance (`GV$INSTANCE.THREAD#`), which is what a
    /// LogMiner row names (`THREAD#`). It is not `INST_ID`: thread and instance numbers agree by
    /// custom only, and an instance can be given any thread.
    pub thread: u16,
    /// `SID` (`SESSION#` in LogMiner rows).
    pub sid: u32,
    /// `SERIAL#`.
    pub serial: u32,
}

/// `ALL_LOG_GROUPS.LOG_GROUP_TYPE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogGroupType {
    AllColumn,
    PrimaryKey,
    UniqueKey,
    ForeignKey,
    User,
}

/// One supplemental log group of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogGroup {
    pub kind: LogGroupType,
    /// `ALWAYS = 'ALWAYS'` (unconditional).
    pub always: bool,
}

/// A captured table as the catalog describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogTable {
    /// The columns, with the key's positions ([`TableKey`] says where the key comes from).
    pub schema: Arc<TableSchema>,
    pub log_groups: Vec<LogGroup>,
    pub key: TableKey,
}

/// Where a table's key comes from ([`unique_key`]); what supplemental logging must log for it
/// ([`key_logging`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableKey {
    /// Its primary key.
    Primary,
    /// No primary key: the first by name of its unique indexes on NOT NULL columns; `candidates`
    /// is how many such indexes it has.
    Unique { index: String, candidates: usize },
    /// Neither: no key.
    None,
}

impl TableKey {
    /// The key of a table with or without a primary key whose usable unique indexes are
    /// `unique`, the key's first ([`unique_key::usable_unique_keys`]).
    pub fn of(has_primary_key: bool, unique: &[unique_key::UniqueKey]) -> Self {
        match unique.first() {
            _ if has_primary_key => Self::Primary,
            Some(first) => Self::Unique {
                index: first.index.clone(),
                candidates: unique.len(),
            },
            None => Self::None,
        }
    }
}

/// What the capture's database user may do, upper case: system privileges (`SESSION_PRIVS`)
/// and object privileges on the packages it calls (`EXECUTE ON SYS.DBMS_LOGMNR`, from
/// `ALL_TAB_PRIVS`) in `privileges`, roles (`SESSION_ROLES`) in `roles`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionPrivileges {
    pub privileges: BTreeSet<String>,
    pub roles: BTreeSet<String>,
    /// The user's default tablespace (`USER_USERS`), where the flush table is created.
    pub default_tablespace: Option<String>,
}

/// Why the flush reaches only one of a RAC database's instances, and what lets it reach each:
/// until fixed, a quiet instance holds capture back until it writes redo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlushShortfall {
    pub problem: String,
    pub fix: String,
}

/// Where and what to mine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MiningWindow {
    /// First SCN mined (inclusive).
    pub start_scn: u64,
    /// Last SCN mined (inclusive).
    pub end_scn: u64,
    /// The logs to register (classic mode); ignored when mining inside a PDB (21c+), where
    /// START_LOGMNR finds them itself.
    pub logs: Vec<RedoLog>,
    /// Captured tables as `(owner, table)`, as in the dictionary.
    pub tables: Vec<(String, String)>,
    /// The object numbers (`ALL_OBJECTS.OBJECT_ID`) the schema history knows for the captured
    /// tables: their rows are mined whatever name LogMiner gives them when mining (after a
    /// rename, a drop into the recycle bin, or as `"UNKNOWN"."OBJ# n"`).
    pub objects: Vec<u64>,
    /// The PDB whose changes are wanted (`SRC_CON_NAME`); `None` on a non-CDB.
    pub pdb: Option<String>,
    /// Whether rows carry SQL_UNDO. The Oracle client ignores it: it never selects SQL_UNDO
    /// (`oracle/sql.rs`), so its rows always have `None`. The simulator renders SQL_UNDO only
    /// when this is true (tests that check SQL_UNDO); otherwise its rows have `None` too.
    pub with_sql_undo: bool,
}

/// The memory of the database session LogMiner runs on, as `V$MYSTAT` reports it (Oracle
/// Database Reference, "Statistics Descriptions": `session pga memory`, `session pga memory
/// max`), the figures Debezium's metrics show (`captureJdbcSessionMemoryStatistics`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionMemory {
    pub pga_bytes: u64,
    pub pga_max_bytes: u64,
}

/// One row of a flashback read: its position in the read order and its values in column order.
#[derive(Clone, Debug, PartialEq)]
pub struct FlashbackRow {
    /// Where a later batch resumes after this row: the ROWID of a heap table's row, the primary
    /// key of an index-organised table's row (opaque text the same reader understands).
    pub position: String,
    pub values: Row,
}

/// A boundary call that failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// DPI-1047: the Oracle client library cannot be loaded.
    #[error("the Oracle client library cannot be loaded: {message}")]
    ClientMissing { message: String },
    /// The redo of a thread is gone between two SCNs (purged archive, missing sequence).
    #[error(
        "redo of thread {thread} from SCN {from_scn} to SCN {to_scn} is not available (purged or never archived)"
    )]
    RedoMissing {
        thread: u16,
        from_scn: u64,
        to_scn: u64,
    },
    /// LogMiner could not use the window's logs although the listing had them: a registered
    /// file cannot be opened (ORA-01284, ORA-00308 at ADD_LOGFILE; `log` names it) or the
    /// registered logs do not cover the range (ORA-01291 at START_LOGMNR). Both happen while a
    /// log is being archived or an online log reused between the listing and the start: the
    /// window is tried again with a fresh listing, and only a gap that persists is
    /// [`SourceError::RedoMissing`].
    #[error("LogMiner cannot use the listed logs: {message}")]
    LogsChanged {
        log: Option<RedoLog>,
        message: String,
    },
    /// The online log being read was reused by a log switch mid-fetch (ORA-00310): mine the
    /// window again.
    #[error("an online log was overwritten while it was mined: {message}")]
    LogSwitched { message: String },
    /// The server process of the mining session ran out of memory (ORA-04030): LogMiner's
    /// memory in a long session grows until it does. A fresh session frees it, so the window is
    /// mined again on one.
    #[error("the mining session ran out of process memory: {message}")]
    SessionMemory { message: String },
    /// A flashback read older than the undo retention (ORA-01555, ORA-08181).
    #[error("the flashback read at SCN {scn} is older than the undo kept: {message}")]
    SnapshotTooOld { scn: u64, message: String },
    /// A call did not answer within `statementTimeoutSeconds`.
    #[error("{call} did not answer within {seconds} s")]
    Timeout { call: &'static str, seconds: u64 },
    /// The connection is gone or cannot be made (network, listener, instance down): retried.
    #[error("cannot reach the database: {message}")]
    Unavailable { message: String },
    /// A table named in the config does not exist or is not visible to the capture user.
    #[error("table {owner}.{table} does not exist or is not visible to the capture user")]
    NoSuchTable { owner: String, table: String },
    /// The PDB named in the config is not a container of the database.
    #[error("the database has no PDB named {pdb}: {known}")]
    NoSuchPdb { pdb: String, known: String },
    /// The capture user lacks a privilege a call needs; `fix` is the statement that grants it.
    #[error("{what} was refused: {message}")]
    NotGranted {
        what: String,
        message: String,
        fix: String,
    },
    /// The service connects to a PDB of a release that cannot run LogMiner there (ORA-65040:
    /// before 21c, `DBMS_LOGMNR` works only in `CDB$ROOT`). Retrying meets the same refusal, so
    /// this is a configuration stop naming the service to connect to instead.
    #[error(
        "Oracle {version} cannot run LogMiner inside PDB {container} (ORA-65040: before 21c \
         LogMiner runs only in CDB$ROOT)"
    )]
    MiningInPdbUnsupported { version: String, container: String },
    /// The PDB named in the config exists but is not open (`MOUNTED`): retried, since opening
    /// it is routine work, and doctor names the statement.
    #[error("PDB {pdb} is not open (OPEN_MODE MOUNTED)")]
    PdbNotOpen { pdb: String },
    /// A row or value that does not have the expected shape.
    #[error("unexpected value in {what}: {message}")]
    Malformed { what: String, message: String },
    /// The database refused the heartbeat action query (`spec.heartbeat.actionQuery`).
    #[error("the heartbeat action query failed: {message}")]
    ActionQueryRefused { message: String },
    /// The database refused the login (ORA-01017, 28000, 28001, 01045): a typed stop, since
    /// each retry with the same credentials is one more failed login toward a locked account.
    #[error("the database refused the login ({code}): {message}")]
    LoginRefused { code: String, message: String },
    /// Any other database error, with its code (`ORA-01031`) when there is one.
    #[error("{call} failed: {message}")]
    Database {
        call: &'static str,
        code: Option<String>,
        message: String,
    },
}

impl SourceError {
    /// Whether retrying the call (after backoff, on a fresh session) can succeed.
    pub fn is_transient(&self) -> bool {
        self.retry_cause().is_some()
    }

    /// The `cause` label of `redoline_capture_retries_total` for a transient error; `None` for
    /// the others.
    pub fn retry_cause(&self) -> Option<&'static str> {
        match self {
            Self::Unavailable { .. } | Self::PdbNotOpen { .. } => Some("database_unavailable"),
            Self::Timeout { .. } => Some("database_timeout"),
            Self::LogSwitched { .. } => Some("log_switched"),
            Self::SessionMemory { .. } => Some("session_memory"),
            Self::LogsChanged { .. } => Some("logs_changed"),
            Self::ClientMissing { .. }
            | Self::RedoMissing { .. }
            | Self::SnapshotTooOld { .. }
            | Self::NoSuchTable { .. }
            | Self::NoSuchPdb { .. }
            | Self::MiningInPdbUnsupported { .. }
            | Self::NotGranted { .. }
            | Self::Malformed { .. }
            | Self::ActionQueryRefused { .. }
            | Self::LoginRefused { .. }
            | Self::Database { .. } => None,
        }
    }

    /// Whether the database refused to show a view or table to the capture user (ORA-00942,
    /// ORA-01031): a missing grant, not a fault.
    pub fn is_not_granted(&self) -> bool {
        matches!(self, Self::Database { code: Some(code), .. } if code == "ORA-00942" || code == "ORA-01031")
    }

    /// The typed stop for an error that needs an operator; `None` for transient errors, which
    /// the caller retries within its budget.
    pub fn stop(&self) -> Option<Stop> {
        match self {
            Self::ClientMissing { .. } => Some(Stop::new(
                StopCode::OracleClientMissing,
                format!(
                    "{self}. Install Oracle Instant Client (Basic or Basic Light, 19c or later) and \
                     put its directory on LD_LIBRARY_PATH, or use the redoline-capture image, \
                     which ships it"
                ),
            )),
            Self::RedoMissing {
                thread,
                from_scn,
                to_scn,
            } => Some(
                Stop::new(
                    StopCode::RedoMissing,
                    format!(
                        "{self}. Restore the archived logs of that range (RMAN) or start the \
                         capture again from a new snapshot"
                    ),
                )
                .with_detail("thread", *thread)
                .with_detail("fromScn", from_scn.to_string())
                .with_detail("toScn", to_scn.to_string()),
            ),
            Self::NoSuchTable { .. } => Some(Stop::new(
                StopCode::InvalidConfiguration,
                format!("{self}; fix spec.tables or grant SELECT on the table"),
            )),
            Self::NoSuchPdb { .. } => Some(Stop::new(
                StopCode::InvalidConfiguration,
                format!(
                    "spec.database.pdb: {self}. Name one of them; an unquoted name is folded to \
                     upper case, as Oracle does, and a quoted one (\"MyPdb\") is kept as written"
                ),
            )),
            Self::MiningInPdbUnsupported { container, .. } => Some(
                Stop::new(
                    StopCode::InvalidConfiguration,
                    format!(
                        "spec.database: {self}. Connect to the service of the CDB root \
                         (spec.database.serviceName or connectString naming the CDB's service, \
                         not the PDB's) as a common user (C##...), and set spec.database.pdb: \
                         {container}; or upgrade the database to 21c or later"
                    ),
                )
                .with_detail("pdb", container.clone()),
            ),
            Self::NotGranted { fix, .. } => Some(
                Stop::new(
                    StopCode::PrerequisitesNotMet,
                    format!(
                        "{self}. Run as a DBA: {fix} (`redoline-capture doctor` checks every grant)"
                    ),
                )
                .with_detail("fix", fix.clone()),
            ),
            Self::ActionQueryRefused { .. } => Some(Stop::new(
                StopCode::InvalidConfiguration,
                format!(
                    "spec.heartbeat.actionQuery: {self}; fix the query, or grant the capture user \
                     the right to run it"
                ),
            )),
            Self::LoginRefused { code, .. } => Some(
                Stop::new(
                    StopCode::DatabaseLoginRefused,
                    format!(
                        "{self}. Check the username and password in the Secret that \
                         spec.database.credentialsSecret names; a locked account needs \
                         `ALTER USER <user> ACCOUNT UNLOCK`, an expired password `ALTER USER \
                         <user> IDENTIFIED BY <new password>`, a missing privilege `GRANT CREATE \
                         SESSION TO <user>`. The capture does not log in again with the same \
                         credentials: change the Secret (or delete the marker file named in \
                         the log) to try again"
                    ),
                )
                .with_detail("oracleError", code.clone()),
            ),
            Self::Timeout { .. } | Self::Unavailable { .. } | Self::LogSwitched { .. } => None,
            Self::SessionMemory { .. } => None,
            Self::LogsChanged { .. } | Self::PdbNotOpen { .. } => None,
            Self::SnapshotTooOld { .. } | Self::Malformed { .. } | Self::Database { .. } => None,
        }
    }
}

/// Identity, state, dictionary and prerequisites.
pub trait DatabaseCatalog {
    /// `V$DATABASE` (and the version banner).
    fn database(&mut self) -> Result<DatabaseInfo, SourceError>;
    /// `V$DATABASE.CURRENT_SCN`.
    fn current_scn(&mut self) -> Result<u64, SourceError>;
    /// The current incarnation of a PDB; `None` on a non-CDB or an unknown PDB.
    fn pdb_incarnation(&mut self, pdb: &str) -> Result<Option<PdbIncarnation>, SourceError>;
    /// `V$THREAD`: one entry per redo thread.
    fn threads(&mut self) -> Result<Vec<RedoThread>, SourceError>;
    /// Open transactions of the captured database (of the named PDB only, in a CDB):
    /// `GV$TRANSACTION`, falling back to `V$TRANSACTION` where GV$ is not granted.
    fn open_transactions(&mut self) -> Result<Vec<OpenTransaction>, SourceError>;
    /// Live sessions (`GV$SESSION`).
    fn sessions(&mut self) -> Result<Vec<SessionId>, SourceError>;
    /// `SCN_TO_TIMESTAMP`; `None` when Oracle no longer maps the SCN (ORA-08181).
    fn scn_to_timestamp(&mut self, scn: u64) -> Result<Option<civil::DateTime>, SourceError>;
    /// The database host's current offset from UTC: the offset `SYSTIMESTAMP` carries, which is
    /// the host operating system's time zone at this moment. LogMiner's `TIMESTAMP` and
    /// `COMMIT_TIMESTAMP`, and `SCN_TO_TIMESTAMP`, are local times in that zone without an
    /// offset; the engine subtracts this one to make them UTC instants. It changes at a DST
    /// switch, so it is read again before every window.
    fn database_utc_offset(&mut self) -> Result<jiff::tz::Offset, SourceError>;
    /// The database's character sets (`NLS_DATABASE_PARAMETERS`) and time zone
    /// (`DBTIMEZONE`), read in the captured database (the PDB in a CDB): what decoding the
    /// internal-format values of an `OBJ# n` row needs ([`storage`]).
    fn storage_settings(&mut self) -> Result<StorageSettings, SourceError>;
    /// Columns, types, key and log groups of a table; [`SourceError::NoSuchTable`] when absent.
    fn table(&mut self, owner: &str, table: &str) -> Result<CatalogTable, SourceError>;
    /// Every table the capture user can read outside Oracle-maintained schemas, as
    /// `(owner, table)` in dictionary case (`ALL_TABLES`): what the schema and table lists of
    /// `spec.filters` choose from.
    fn list_tables(&mut self) -> Result<Vec<(String, String)>, SourceError>;
    /// The capture user's privileges and roles.
    fn privileges(&mut self) -> Result<SessionPrivileges, SourceError>;
    /// The optimizer's row count of a table (`ALL_TABLES.NUM_ROWS`), for the snapshot's
    /// estimate of the rows left; `None` when the table has no statistics.
    fn row_estimate(&mut self, owner: &str, table: &str) -> Result<Option<u64>, SourceError>;
}

/// The redo and LogMiner.
pub trait RedoMiner {
    /// Every online and archived log of the current database incarnation whose range ends
    /// after `from_scn`, all threads (unplanned: see [`plan_logs`]).
    fn redo_logs(&mut self, from_scn: u64) -> Result<Vec<RedoLog>, SourceError>;
    /// The logs covering `from_scn` onwards on every thread, or [`SourceError::RedoMissing`].
    fn logs_covering(&mut self, from_scn: u64) -> Result<LogPlan, SourceError>
    where
        Self: DatabaseCatalog,
    {
        let threads = self.threads()?;
        let logs = self.redo_logs(from_scn)?;
        plan_logs(&threads, logs, from_scn)
    }
    /// Writes the flush table so LGWR writes the redo buffer out before a window is mined, on
    /// every instance of a RAC database.
    fn flush_redo(&mut self) -> Result<(), SourceError>;
    /// After a flush: why it reached only one of the database's instances, where it could not
    /// reach each (a RAC database with too few connections, say); `None` when it reached every
    /// one.
    fn flush_shortfall(&self) -> Option<FlushShortfall> {
        None
    }
    /// Runs and commits the heartbeat action query (`spec.heartbeat.actionQuery`), so a quiet
    /// database still writes redo; a refused query is [`SourceError::ActionQueryRefused`].
    fn heartbeat_action(&mut self, sql: &str) -> Result<(), SourceError>;
    /// Starts LogMiner over `[start_scn, end_scn]`, registering the window's logs first when
    /// they are not the ones already registered. The session is kept across windows: the next
    /// call starts it again over the next range without registering the same logs twice.
    fn start_mining(&mut self, window: &MiningWindow) -> Result<(), SourceError>;
    /// Streams the window's rows in `V$LOGMNR_CONTENTS` order (SCN order) to `visit`, which
    /// may stop early with `Break`. Returns the number of rows visited.
    fn stream_rows(
        &mut self,
        visit: &mut dyn FnMut(LogMinerRow) -> ControlFlow<()>,
    ) -> Result<u64, SourceError>;
    /// Ends the LogMiner session and forgets the logs registered (no session is not an error).
    fn end_mining(&mut self) -> Result<(), SourceError>;
    /// Ends the LogMiner session and the database session it runs on, so the next window starts
    /// on a fresh one whose server process has given its memory back.
    fn recycle_mining(&mut self) -> Result<(), SourceError> {
        self.end_mining()
    }
    /// The memory of the session LogMiner runs on; `None` when the source does not know it.
    fn mining_session_memory(&mut self) -> Result<Option<SessionMemory>, SourceError> {
        Ok(None)
    }
}

/// Flashback reads for snapshots.
pub trait FlashbackReader {
    /// Up to `max_rows` rows of `table` as of `scn`, in the table's read order (ROWID, or the
    /// primary key of an index-organised table), after the position `after` (a
    /// [`FlashbackRow::position`] this reader returned), and only those matching `condition` (`snapshot.selectOverrides`, a SQL condition) when given.
    /// Fewer than `max_rows` means the table is read to the end.
    fn flashback_batch(
        &mut self,
        table: &TableSchema,
        scn: u64,
        after: Option<&str>,
        condition: Option<&str>,
        max_rows: usize,
    ) -> Result<Vec<FlashbackRow>, SourceError>;
    /// The chunks `table` is read in, each of about `rows_per_chunk` rows by the optimizer's
    /// statistics, in read order, together covering every row the table can hold now or at
    /// any SCN since its last DDL ([`chunks`]): ROWID ranges of its extents for a heap table,
    /// key ranges for an index-organised one. A table without a segment has none.
    fn table_chunks(
        &mut self,
        table: &TableSchema,
        rows_per_chunk: u64,
    ) -> Result<Vec<RowRange>, SourceError>;
    /// Every row of `table` within `range` as of `scn`, in read order, and only those matching
    /// `condition` when given (as [`Self::flashback_batch`]).
    fn flashback_range(
        &mut self,
        table: &TableSchema,
        scn: u64,
        range: &RowRange,
        condition: Option<&str>,
    ) -> Result<Vec<FlashbackRow>, SourceError>;
    /// Another reader of the same database with the same connection settings, whose reads run
    /// on a database session of their own, on another thread (`snapshot.maxThreads`); `None`
    /// when the source has a single session to offer.
    fn parallel_reader(&self) -> Result<Option<Box<dyn FlashbackReader + Send>>, SourceError> {
        Ok(None)
    }
}

/// All of the boundary.
pub trait OracleSource: DatabaseCatalog + RedoMiner + FlashbackReader + Send {}

impl<T: DatabaseCatalog + RedoMiner + FlashbackReader + Send> OracleSource for T {}
