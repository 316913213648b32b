//! The real Oracle boundary, on the `oracle` crate (ODPI-C over Oracle Instant Client).
//!
//! - **Sessions** come from one pool of at most `maxConnections` ([`session`]). Every session
//!   gets the call timeout `statementTimeoutSeconds` (per round trip, so a long fetch is fine
//!   while each array fetch answers in time) and, before its first use, the fixed NLS settings of
//!   [`crate::value::nls`], so SQL_REDO literals and flashback values render one way whatever
//!   the client's locale. The LogMiner session is held across windows.
//! - **Containers.** Connected to `CDB$ROOT` with a PDB named, mining and the instance-wide views
//!   stay in the root, and every call about the PDB's objects (dictionary, flashback reads, the
//!   flush table, the heartbeat action) runs on a session switched to the PDB ([`Place`],
//!   [`topology`]). Pooled sessions keep their container, so every session is set up for the
//!   place it is taken for, remembered by an OCI session tag.
//! - **Mining mode.** On a non-CDB, or connected to `CDB$ROOT`, the client registers the window's
//!   logs with `ADD_LOGFILE` and filters rows by `SRC_CON_NAME` when a PDB is named. Connected to
//!   a PDB on 21c or later, it mines inside the PDB: `START_LOGMNR` finds the logs itself and
//!   returns only that PDB's redo. A PDB connection on 19c or earlier cannot mine (ORA-65040) and
//!   is refused as a configuration error naming the fix.
//! - **RAC.** The flush commits on every open instance, each through a session of its own on
//!   that instance, so a quiet instance's log writer does not hold the window back
//!   ([`instances`]).
//! - **Fetching.** The contents query ([`sql::contents_query`]) is fetched with a large array
//!   ([`CONTENTS_FETCH_ROWS`]) so one round trip carries thousands of rows.
//! - **Errors** are classified once ([`error::classify`]); DPI-1047 (no client library) becomes
//!   CDC-2004 with install guidance through [`SourceError::stop`].
//!
//! All SQL lives in [`sql`], all row mapping in [`mapping`]. The client's own decisions run over
//! the [`SessionPool`] seam, which the tests fill with a model of Oracle's SQL surface (a CDB
//! whose root does not see PDB objects, sessions that keep their container and NLS settings), so
//! everything but the ODPI-C calls in [`session`] is tested without a server.

pub mod error;
#[cfg(test)]
mod fake;
pub mod instances;
pub mod mapping;
pub mod net_config;
pub mod session;
pub mod sql;
#[cfg(test)]
mod tests;

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use jiff::civil;
use oracle::pool::PoolBuilder;

use self::error::{
    Failure, ORA_CANNOT_OPEN_ARCHIVED_LOG, ORA_CANNOT_OPEN_LOG, ORA_INSUFFICIENT_PRIVILEGES,
    ORA_INVALID_SCN, ORA_MISSING_LOGFILE, ORA_NO_LOGMINER_SESSION, ORA_NO_SUCH_TABLE,
    ORA_NO_TABLESPACE_QUOTA, ORA_NOT_ALLOWED_IN_PDB, ORA_QUOTA_EXCEEDED, ORA_SNAPSHOT_TOO_OLD,
    action_query_failure, classify,
};
use self::mapping::{CellReader, SharedNames};
pub use self::session::{
    Bind, Cell, Fetch, OraclePool, ROOT_CONTAINER, SessionPool, SessionSetup, SqlSession,
};
use super::grant::{grant_statements, sql_name};
use super::unique_key::{self, UniqueIndexColumn};
use super::{
    CatalogTable, DatabaseCatalog, DatabaseInfo, FlashbackReader, FlashbackRow, FlushShortfall,
    LogMinerRow, MiningWindow, OpenTransaction, PdbIncarnation, RedoLog, RedoMiner, RedoThread,
    RowRange, SessionId, SessionMemory, SessionPrivileges, SourceError, StorageSettings, TableKey,
    chunks,
};
use crate::config::validate;
use crate::dictionary::{LobKind, ObjectNumbers, OracleType, TableSchema};
use crate::value::Row as ValueRow;

/// Rows per array fetch of the contents query. Each row reserves about 4.5 KB of fetch buffer
/// (SQL_REDO is VARCHAR2(4000)), so 2,000 rows keep the buffer near 9 MB.
pub const CONTENTS_FETCH_ROWS: u32 = 2_000;
/// Rows per array fetch of flashback reads (rows are usually narrower than SQL_REDO).
const FLASHBACK_FETCH_ROWS: u32 = 1_000;

/// How to reach the database. The password comes from a file or the environment, never from
/// the config file, and never appears in `Debug` output.
#[derive(Clone)]
pub struct ConnectOptions {
    pub username: String,
    pub password: String,
    /// EZConnect (`host:port/service`) or a TNS descriptor.
    pub connect_string: String,
    pub max_connections: u32,
    /// Per-round-trip call timeout; `None` disables it.
    pub statement_timeout: Option<Duration>,
    /// The PDB whose changes are wanted when mining from `CDB$ROOT`.
    pub pdb: Option<String>,
    /// The flush table (`NAME` or `OWNER.NAME`).
    pub flush_table: String,
}

impl fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectOptions")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .field("connect_string", &self.connect_string)
            .field("max_connections", &self.max_connections)
            .field("statement_timeout", &self.statement_timeout)
            .field("pdb", &self.pdb)
            .field("flush_table", &self.flush_table)
            .finish()
    }
}

/// The EZConnect string for host, port and service name.
pub fn ez_connect(host: &str, port: u16, service_name: &str) -> String {
    if host.contains(':') {
        // An IPv6 literal needs brackets in EZConnect.
        format!("[{host}]:{port}/{service_name}")
    } else {
        format!("{host}:{port}/{service_name}")
    }
}

/// Where LogMiner runs and how rows are narrowed to the wanted PDB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MiningMode {
    /// Register logs with `ADD_LOGFILE`; filter by `SRC_CON_NAME` when a PDB is named.
    Classic { container: Option<String> },
    /// Inside a PDB on 21c+: no log registration, only this PDB's redo comes back.
    PerPdb,
}

/// Chooses the mining mode from the release, whether the database is a CDB, and the container
/// the session is connected to (`SYS_CONTEXT('USERENV', 'CON_NAME')`).
pub fn mining_mode(
    version: &str,
    cdb: bool,
    session_container: &str,
    pdb: Option<&str>,
) -> Result<MiningMode, SourceError> {
    let major: u32 = version
        .split('.')
        .next()
        .and_then(|major| major.parse().ok())
        .ok_or_else(|| SourceError::Malformed {
            what: "V$INSTANCE.VERSION".to_owned(),
            message: format!("{version:?} is not a release number"),
        })?;
    if !cdb {
        return Ok(MiningMode::Classic { container: None });
    }
    if session_container.eq_ignore_ascii_case("CDB$ROOT") {
        return Ok(MiningMode::Classic {
            container: pdb.map(str::to_owned),
        });
    }
    if major >= 21 {
        return Ok(MiningMode::PerPdb);
    }
    // Refused here, at connect, rather than left to START_LOGMNR's ORA-65040: the same refusal
    // would come back at every restart, and doctor reports it before the capture starts.
    Err(SourceError::MiningInPdbUnsupported {
        version: version.to_owned(),
        container: session_container.to_owned(),
    })
}

/// Where a call runs in a CDB: the root (mining, redo logs, instance-wide views) or the captured
/// PDB (its dictionary, its data, the flush table, the heartbeat action).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Root,
    Pdb,
}

/// The database's layout as found at connect: the mining mode and how sessions are set up for
/// each [`Place`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    pub mode: MiningMode,
    pub root: SessionSetup,
    pub pdb: SessionSetup,
    /// The named PDB's `CON_ID` when mining it from the root: instance-wide views read there
    /// list every container's rows, and open transactions are narrowed to this one.
    pub pdb_con_id: Option<u32>,
}

/// A row of `V$CONTAINERS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Container {
    pub name: String,
    pub open_mode: String,
    pub con_id: u32,
}

impl Topology {
    fn setup(&self, place: Place) -> &SessionSetup {
        match place {
            Place::Root => &self.root,
            Place::Pdb => &self.pdb,
        }
    }
}

/// The layout from what the connect-time query found: the release, whether the database is a
/// CDB, the container the session connected to, the PDB named in the config, and the
/// containers `V$CONTAINERS` lists with their open mode.
///
/// Connected to `CDB$ROOT` with a PDB named, mining stays in the root (19c cannot mine inside a
/// PDB) while every call about the PDB's objects switches its session to the PDB: in the root,
/// `ALL_TABLES` and friends do not show PDB objects, and a flashback read or the flush table would
/// name tables that do not exist there (Debezium: `OracleConnection.setSessionToPdb` and
/// `resetSessionToCdb`).
pub fn topology(
    version: &str,
    cdb: bool,
    session_container: &str,
    pdb: Option<&str>,
    containers: &[Container],
) -> Result<Topology, SourceError> {
    let mode = mining_mode(version, cdb, session_container, pdb)?;
    let plain = SessionSetup { container: None };
    match (&mode, pdb) {
        (MiningMode::Classic { container: Some(_) }, Some(pdb)) => {
            let Some(container) = containers.iter().find(|c| c.name == pdb) else {
                let known: Vec<&str> = containers
                    .iter()
                    .map(|c| c.name.as_str())
                    .filter(|name| *name != ROOT_CONTAINER && *name != "PDB$SEED")
                    .collect();
                return Err(SourceError::NoSuchPdb {
                    pdb: pdb.to_owned(),
                    known: format!("V$CONTAINERS lists {}", known.join(", ")),
                });
            };
            if container.open_mode == "MOUNTED" {
                return Err(SourceError::PdbNotOpen {
                    pdb: pdb.to_owned(),
                });
            }
            Ok(Topology {
                mode,
                root: SessionSetup {
                    container: Some(ROOT_CONTAINER.to_owned()),
                },
                pdb: SessionSetup {
                    container: Some(pdb.to_owned()),
                },
                pdb_con_id: Some(container.con_id),
            })
        }
        (MiningMode::PerPdb, Some(pdb)) if pdb != session_container => {
            Err(SourceError::NoSuchPdb {
                pdb: pdb.to_owned(),
                known: format!(
                    "the service connects to PDB {session_container}; leave database.pdb \
                     unset or name that one"
                ),
            })
        }
        _ => Ok(Topology {
            mode,
            root: plain.clone(),
            pdb: plain,
            pdb_con_id: None,
        }),
    }
}

/// A registered log as LogMiner knows it: an online log's file keeps its name when it is reused
/// for a later sequence, so the sequence is part of what was registered.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LogKey {
    name: String,
    thread: u16,
    sequence: u32,
}

impl LogKey {
    fn of(log: &RedoLog) -> Self {
        Self {
            name: log.name.clone(),
            thread: log.thread,
            sequence: log.sequence,
        }
    }
}

/// The real Oracle boundary over a pool of sessions ([`OraclePool`] in production).
pub struct OracleClient<P: SessionPool = OraclePool> {
    pool: P,
    options: ConnectOptions,
    topology: Topology,
    /// The release (`V$INSTANCE.VERSION`) and the container the service connects to, as read
    /// at connect: what a LogMiner refusal inside a PDB (ORA-65040) is reported with.
    version: String,
    connected_to: String,
    /// The main session: in the root, held across windows; LogMiner runs on it.
    main: Option<P::Session>,
    window: Option<MiningWindow>,
    /// The logs registered with LogMiner on the main session (name, thread, sequence), kept
    /// across windows: `None` when none are (no session yet, or it was ended or lost).
    registered: Option<Vec<LogKey>>,
    names: SharedNames,
    /// How each table snapshotted so far is walked, by qualified name (an IOT stays one).
    row_orders: HashMap<String, sql::RowOrder>,
    /// The cluster's instances the flush reaches one by one.
    cluster: Cluster<P::Session>,
}

/// The instances of a RAC database, each with the session its flush commits on ([`instances`]).
/// Empty on a single instance, and where the instances cannot be reached one by one (then the
/// flush runs on a pooled session, and a quiet instance delays capture as the window planner
/// reports).
struct Cluster<S> {
    instances: Vec<instances::Instance>,
    sessions: HashMap<String, S>,
    /// The redo threads of the open instances when they were last read, in order: `None` before
    /// the first read; a thread opening or closing since ([`DatabaseCatalog::threads`]) reads
    /// them again.
    read_for: Option<Vec<u16>>,
    /// The open threads of the last `V$THREAD` read, in order.
    open_threads: Vec<u16>,
    /// Why the instances cannot be flushed one by one (warned once).
    shortfall: Option<FlushShortfall>,
    /// The instances the last flush did not reach, once warned (warned again when they change).
    failing: Vec<String>,
}

impl<S> Default for Cluster<S> {
    fn default() -> Self {
        Self {
            instances: Vec::new(),
            sessions: HashMap::new(),
            read_for: None,
            open_threads: Vec::new(),
            shortfall: None,
            failing: Vec::new(),
        }
    }
}

impl<P: SessionPool> fmt::Debug for OracleClient<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OracleClient")
            .field("options", &self.options)
            .field("topology", &self.topology)
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

/// A query's rows as text cells.
type TextRows = Vec<Vec<Option<String>>>;

fn query_text<S: SqlSession>(
    session: &mut S,
    sql: &str,
    binds: &[Bind<'_>],
) -> Result<TextRows, Failure> {
    let mut rows = Vec::new();
    session.query(sql, binds, Fetch::default(), &mut |cells| {
        rows.push(cells.into_iter().map(Cell::into_text).collect());
        ControlFlow::Continue(())
    })?;
    Ok(rows)
}

impl OracleClient<OraclePool> {
    /// Builds the pool, opens one session, and reads the database's layout, so a missing client
    /// library, a bad password, an unreachable listener or a PDB name that matches no container
    /// shows at start.
    pub fn connect(options: ConnectOptions) -> Result<Self, SourceError> {
        let timeout = timeout_seconds(&options);
        let pool = PoolBuilder::new(
            options.username.as_str(),
            options.password.as_str(),
            options.connect_string.as_str(),
        )
        .min_connections(1)
        // The config refuses fewer than 2 (the mining session keeps one); a caller that passes
        // less still gets a pool that can serve a second call.
        .max_connections(options.max_connections.max(2))
        .build()
        .map_err(|error| classify("connect", &Failure::from(&error), timeout))?;
        let pool = OraclePool {
            pool,
            call_timeout: options.statement_timeout,
            username: options.username.clone(),
            password: options.password.clone(),
        };
        Self::over(pool, options)
    }
}

impl<P: SessionPool> OracleClient<P> {
    /// The client over `pool`: reads the layout on a session of the fresh pool, still where it
    /// connected ([`sql::TOPOLOGY`], [`sql::CONTAINERS`]).
    pub fn over(pool: P, options: ConnectOptions) -> Result<Self, SourceError> {
        let fail = |call, failure: Failure| source_error(call, &failure, &options);
        let mut session = pool.get("").map_err(|failure| fail("connect", failure))?;
        let mut layout = query_text(&mut session, sql::TOPOLOGY, &[])
            .map_err(|failure| fail("read database layout", failure))?
            .into_iter()
            .next()
            .ok_or_else(|| SourceError::Malformed {
                what: "read database layout".to_owned(),
                message: "the query returned no row".to_owned(),
            })?;
        let mut r = CellReader::new("V$DATABASE", &["CON_NAME", "VERSION", "CDB"], &mut layout);
        let session_container = r.required_text(0)?;
        let version = r.required_text(1)?;
        let cdb = r.text(2)?.as_deref() == Some("YES");
        let containers = if cdb && options.pdb.is_some() {
            let mut rows = query_text(&mut session, sql::CONTAINERS, &[])
                .map_err(|failure| fail("read V$CONTAINERS", failure))?;
            let mut containers = Vec::with_capacity(rows.len());
            for row in &mut rows {
                let mut r = CellReader::new("V$CONTAINERS", &["NAME", "OPEN_MODE", "CON_ID"], row);
                containers.push(Container {
                    name: r.required_text(0)?,
                    open_mode: r.required_text(1)?,
                    con_id: r.required_number(2)?,
                });
            }
            containers
        } else {
            Vec::new()
        };
        drop(session);
        let topology = topology(
            &version,
            cdb,
            &session_container,
            options.pdb.as_deref(),
            &containers,
        )?;
        let mut client = Self {
            pool,
            options,
            topology,
            version,
            connected_to: session_container,
            main: None,
            window: None,
            registered: None,
            names: SharedNames::default(),
            row_orders: HashMap::new(),
            cluster: Cluster::default(),
        };
        // The main session first, so it is never one taken over from PDB work.
        client.main_session("connect")?;
        Ok(client)
    }

    /// The layout found at connect.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    fn fail(&self, call: &'static str, failure: &Failure) -> SourceError {
        source_error(call, failure, &self.options)
    }

    /// A session set up for `place`: one the pool kept with that setup's tag, or another one
    /// set up now (container, then NLS) and released under the tag.
    fn session(&self, call: &'static str, place: Place) -> Result<P::Session, SourceError> {
        let setup = self.topology.setup(place);
        let tag = setup.tag();
        let mut session = self
            .pool
            .get(&tag)
            .map_err(|failure| self.fail(call, &failure))?;
        if !session.tag_found() {
            for statement in setup.statements() {
                session
                    .execute(&statement, &[])
                    .map_err(|failure| self.setup_failure(call, setup, &failure))?;
            }
            session.retag_on_release(tag);
        }
        Ok(session)
    }

    /// A failed session setup. A refused container switch is a missing grant (ORA-01031), the
    /// prerequisite stop naming the grant; the rest are classified as usual.
    fn setup_failure(
        &self,
        call: &'static str,
        setup: &SessionSetup,
        failure: &Failure,
    ) -> SourceError {
        match (&setup.container, failure.ora) {
            (Some(container), Some(ORA_INSUFFICIENT_PRIVILEGES)) => SourceError::NotGranted {
                what: format!("switching the session to container {container}"),
                message: failure.message.clone(),
                fix: grant_fix(&["SET CONTAINER"], &self.options),
            },
            _ => self.fail(call, failure),
        }
    }

    /// Runs `work` on a session for `place`. Root work runs on the held main session, where
    /// LogMiner runs too, so a pool of two sessions serves both places without switching a
    /// session back and forth; PDB work runs on a pooled session set up for the PDB. A transient
    /// failure on the main session drops it, so the next call starts on a fresh one.
    fn on_session<T>(
        &mut self,
        call: &'static str,
        place: Place,
        work: impl FnOnce(&mut P::Session) -> Result<T, Failure>,
    ) -> Result<T, SourceError> {
        let result = match place {
            Place::Root => work(self.main_session(call)?),
            Place::Pdb => work(&mut self.session(call, Place::Pdb)?),
        };
        result.map_err(|failure| {
            let error = self.fail(call, &failure);
            if place == Place::Root && error.is_transient() {
                self.forget_main_session();
            }
            error
        })
    }

    /// Runs a small query and returns its rows as text cells.
    fn rows(
        &mut self,
        call: &'static str,
        place: Place,
        sql: &str,
        binds: &[Bind<'_>],
    ) -> Result<TextRows, SourceError> {
        self.on_session(call, place, |session| query_text(session, sql, binds))
    }

    fn first_row(
        &mut self,
        call: &'static str,
        sql: &str,
        binds: &[Bind<'_>],
    ) -> Result<Vec<Option<String>>, SourceError> {
        self.rows(call, Place::Root, sql, binds)?
            .into_iter()
            .next()
            .ok_or_else(|| SourceError::Malformed {
                what: call.to_owned(),
                message: "the query returned no row".to_owned(),
            })
    }

    /// Rows of `sql`, or of `fallback` when the first view is not granted (ORA-00942).
    fn rows_or_local(
        &mut self,
        call: &'static str,
        sql: &str,
        fallback: &str,
        binds: &[Bind<'_>],
    ) -> Result<TextRows, SourceError> {
        self.on_session(call, Place::Root, |session| {
            match query_text(session, sql, binds) {
                Err(failure) if failure.ora == Some(ORA_NO_SUCH_TABLE) => {
                    // Seed 001: the local view serves, with a warning, since on RAC it sees only
                    // the connected instance's transactions and sessions.
                    tracing::warn!(
                        call,
                        "the GV$ view is not granted: reading the V$ view of the connected \
                         instance only; on RAC, grant SELECT on the GV_$ views so transactions \
                         of the other instances are seen"
                    );
                    query_text(session, fallback, binds)
                }
                other => other,
            }
        })
    }

    /// The main session: in the root, held across windows, where LogMiner runs.
    fn main_session(&mut self, call: &'static str) -> Result<&mut P::Session, SourceError> {
        if self.main.is_none() {
            self.main = Some(self.session(call, Place::Root)?);
        }
        self.main.as_mut().ok_or_else(|| SourceError::Unavailable {
            message: "the main session was lost".to_owned(),
        })
    }

    /// Drops the main session after a failure, so the next call starts on a fresh one. The
    /// session is closed rather than pooled: it may still hold a LogMiner session (and its
    /// memory), which is ended first when the connection still answers.
    fn forget_main_session(&mut self) {
        self.window = None;
        self.registered = None;
        if let Some(mut session) = self.main.take() {
            if let Err(failure) = session.execute(sql::END_LOGMNR, &[]) {
                tracing::debug!(message = %failure.message, "ending LogMiner on a failed session");
            }
            session.discard();
        }
    }
}

/// A failed call as a [`SourceError`]. A view or package the capture user may not use
/// (ORA-00942, ORA-01031) on a call that needs it is the prerequisite stop naming the grant,
/// rather than an error the capture would meet again at every restart; the rest is
/// [`classify`]'s.
fn source_error(call: &'static str, failure: &Failure, options: &ConnectOptions) -> SourceError {
    let refused = matches!(
        failure.ora,
        Some(ORA_NO_SUCH_TABLE | ORA_INSUFFICIENT_PRIVILEGES)
    );
    match sql::grants_for(call).filter(|_| refused) {
        Some(grants) => SourceError::NotGranted {
            what: call.to_owned(),
            message: failure.message.clone(),
            fix: grant_fix(grants, options),
        },
        None => classify(call, failure, timeout_seconds(options)),
    }
}

/// The GRANT statements for the connecting user. Oracle folds an unquoted user name to upper
/// case at login, so `c##cdc` is the user `C##CDC`; a PDB named means a common user.
fn grant_fix(privileges: &[&str], options: &ConnectOptions) -> String {
    let user = validate::dictionary_name(&options.username);
    let user = user.as_deref().unwrap_or(&options.username);
    grant_statements(privileges, user, options.pdb.is_some())
}

fn timeout_seconds(options: &ConnectOptions) -> u64 {
    options.statement_timeout.map_or(0, |d| d.as_secs())
}

impl<P: SessionPool> DatabaseCatalog for OracleClient<P> {
    fn database(&mut self) -> Result<DatabaseInfo, SourceError> {
        mapping::database(&mut self.first_row("read V$DATABASE", sql::DATABASE, &[])?)
    }

    fn current_scn(&mut self) -> Result<u64, SourceError> {
        let mut row = self.first_row("read current SCN", sql::CURRENT_SCN, &[])?;
        CellReader::new("V$DATABASE", &["CURRENT_SCN"], &mut row).required_number(0)
    }

    fn pdb_incarnation(&mut self, pdb: &str) -> Result<Option<PdbIncarnation>, SourceError> {
        let rows = self.rows(
            "read PDB incarnation",
            Place::Root,
            sql::PDB_INCARNATION,
            &[Bind::Text(pdb)],
        )?;
        let Some(mut row) = rows.into_iter().next() else {
            return Ok(None);
        };
        let names = [
            "CON_ID",
            "DB_INCARNATION#",
            "PDB_INCARNATION#",
            "INCARNATION_SCN",
        ];
        let mut r = CellReader::new("V$PDB_INCARNATION", &names, &mut row);
        Ok(Some(PdbIncarnation {
            pdb: pdb.to_owned(),
            con_id: r.required_number(0)?,
            db_incarnation: r.required_number(1)?,
            pdb_incarnation: r.required_number(2)?,
            incarnation_scn: r.required_number(3)?,
        }))
    }

    fn threads(&mut self) -> Result<Vec<RedoThread>, SourceError> {
        let threads: Vec<RedoThread> = self
            .rows("read V$THREAD", Place::Root, sql::THREADS, &[])?
            .iter_mut()
            .map(|row| mapping::thread(row))
            .collect::<Result<_, _>>()?;
        self.cluster.open_threads = threads
            .iter()
            .filter(|thread| thread.open)
            .map(|thread| thread.thread)
            .collect();
        self.cluster.open_threads.sort_unstable();
        Ok(threads)
    }

    fn open_transactions(&mut self) -> Result<Vec<OpenTransaction>, SourceError> {
        // In a CDB only the captured PDB's transactions hold the start back.
        let con_id = self
            .topology
            .pdb_con_id
            .map(|con_id| [Bind::Number(u64::from(con_id))]);
        let (statement, local, binds): (_, _, &[Bind<'_>]) = match &con_id {
            Some(binds) => (
                sql::OPEN_TRANSACTIONS_IN_CONTAINER,
                sql::OPEN_TRANSACTIONS_LOCAL_IN_CONTAINER,
                binds,
            ),
            None => (sql::OPEN_TRANSACTIONS, sql::OPEN_TRANSACTIONS_LOCAL, &[]),
        };
        self.rows_or_local("read open transactions", statement, local, binds)?
            .iter_mut()
            .map(|row| mapping::open_transaction(row))
            .collect()
    }

    fn sessions(&mut self) -> Result<Vec<SessionId>, SourceError> {
        self.rows_or_local("read sessions", sql::SESSIONS, sql::SESSIONS_LOCAL, &[])?
            .iter_mut()
            .map(|row| mapping::session(row))
            .collect()
    }

    fn scn_to_timestamp(&mut self, scn: u64) -> Result<Option<civil::DateTime>, SourceError> {
        let mut rows = self.on_session(
            "SCN_TO_TIMESTAMP",
            Place::Root,
            |session| match query_text(session, sql::SCN_TO_TIMESTAMP, &[Bind::Number(scn)]) {
                Err(failure) if failure.ora == Some(ORA_INVALID_SCN) => Ok(None),
                other => other.map(Some),
            },
        )?;
        match rows.as_deref_mut().and_then(<[_]>::first_mut) {
            Some(row) => CellReader::new("DUAL", &["SCN_TO_TIMESTAMP"], row).date(0),
            None => Ok(None),
        }
    }

    fn database_utc_offset(&mut self) -> Result<jiff::tz::Offset, SourceError> {
        let mut row = self.first_row(
            "read the database host's UTC offset",
            sql::DATABASE_UTC_OFFSET,
            &[],
        )?;
        CellReader::new("DUAL", &["SYSTIMESTAMP"], &mut row).required_utc_offset(0)
    }

    fn storage_settings(&mut self) -> Result<StorageSettings, SourceError> {
        let call = "read the database's character sets and time zone";
        // In the PDB: since 12.2 a PDB may keep the character set it was created with, and
        // DBTIMEZONE is set per PDB.
        let (mut set_rows, mut zone_rows) = self.on_session(call, Place::Pdb, |session| {
            let sets = query_text(session, sql::CHARACTER_SETS, &[])?;
            let zone = query_text(session, sql::DATABASE_TIME_ZONE, &[])?;
            Ok((sets, zone))
        })?;
        let mut character_set = None;
        let mut national_character_set = None;
        for row in &mut set_rows {
            let mut r = CellReader::new("NLS_DATABASE_PARAMETERS", &["PARAMETER", "VALUE"], row);
            let parameter = r.required_text(0)?;
            let value = r.required_text(1)?;
            match parameter.as_str() {
                "NLS_CHARACTERSET" => character_set = Some(value),
                "NLS_NCHAR_CHARACTERSET" => national_character_set = Some(value),
                _ => {}
            }
        }
        let missing = |parameter: &str| SourceError::Malformed {
            what: "NLS_DATABASE_PARAMETERS".to_owned(),
            message: format!("no {parameter} row"),
        };
        let Some(zone_row) = zone_rows.first_mut() else {
            return Err(SourceError::Malformed {
                what: call.to_owned(),
                message: "SELECT DBTIMEZONE returned no row".to_owned(),
            });
        };
        Ok(StorageSettings {
            character_set: character_set.ok_or_else(|| missing("NLS_CHARACTERSET"))?,
            national_character_set: national_character_set
                .ok_or_else(|| missing("NLS_NCHAR_CHARACTERSET"))?,
            database_time_zone: CellReader::new("DUAL", &["DBTIMEZONE"], zone_row)
                .required_text(0)?,
        })
    }

    fn list_tables(&mut self) -> Result<Vec<(String, String)>, SourceError> {
        let mut rows = self.rows("list tables", Place::Pdb, sql::LIST_TABLES, &[])?;
        let mut names = Vec::with_capacity(rows.len());
        for row in &mut rows {
            let mut r = CellReader::new("ALL_TABLES", &["OWNER", "TABLE_NAME"], row);
            names.push((r.required_text(0)?, r.required_text(1)?));
        }
        Ok(names)
    }

    fn table(&mut self, owner: &str, table: &str) -> Result<CatalogTable, SourceError> {
        let binds = [Bind::Text(owner), Bind::Text(table)];
        // One session for the dictionary queries, in the PDB; unique indexes only for a table
        // without a primary key, whose key comes from one of them.
        let (column_rows, mut key_rows, mut log_group_rows, mut unique_rows, mut object_rows) =
            self.on_session("read table dictionary", Place::Pdb, |session| {
                let key_rows = query_text(session, sql::PRIMARY_KEY, &binds)?;
                let unique_rows = if key_rows.is_empty() {
                    query_text(session, sql::UNIQUE_INDEXES, &binds)?
                } else {
                    Vec::new()
                };
                Ok((
                    query_text(session, sql::TABLE_COLUMNS, &binds)?,
                    key_rows,
                    query_text(session, sql::LOG_GROUPS, &binds)?,
                    unique_rows,
                    query_text(session, sql::TABLE_OBJECT, &binds)?,
                ))
            })?;
        if column_rows.is_empty() {
            return Err(SourceError::NoSuchTable {
                owner: owner.to_owned(),
                table: table.to_owned(),
            });
        }
        let mut key = Vec::with_capacity(key_rows.len());
        for row in &mut key_rows {
            let mut r = CellReader::new("ALL_CONS_COLUMNS", &["COLUMN_NAME", "POSITION"], row);
            key.push((r.required_text(0)?, r.required_number::<u16>(1)?));
        }
        let mut columns = Vec::with_capacity(column_rows.len());
        for mut row in column_rows {
            let column = mapping::table_column(&mut row)?;
            let position = key.iter().find(|(k, _)| *k == column.name).map(|(_, p)| *p);
            columns.push(match position {
                Some(position) => column.key(position),
                None => column,
            });
        }
        let mut unique_columns = Vec::with_capacity(unique_rows.len());
        for row in &mut unique_rows {
            let mut r = CellReader::new(
                "ALL_IND_COLUMNS",
                &["INDEX_NAME", "COLUMN_NAME", "COLUMN_POSITION"],
                row,
            );
            unique_columns.push(UniqueIndexColumn {
                index: r.required_text(0)?,
                column: r.required_text(1)?,
                position: r.required_number::<u16>(2)?,
            });
        }
        let unique = unique_key::usable_unique_keys(&unique_columns, &columns);
        let key_source = TableKey::of(!key.is_empty(), &unique);
        if let (TableKey::Unique { .. }, Some(first)) = (&key_source, unique.first()) {
            columns = unique_key::with_key(columns, first);
        }
        let mut schema =
            TableSchema::new(owner, table, columns).map_err(|error| SourceError::Malformed {
                what: format!("dictionary of {owner}.{table}"),
                message: error.to_string(),
            })?;
        if let Some(row) = object_rows.first_mut() {
            let mut r = CellReader::new("ALL_OBJECTS", &["OBJECT_ID", "DATA_OBJECT_ID"], row);
            schema = schema.with_object(ObjectNumbers {
                object_id: r.required_number(0)?,
                data_object_id: r.number(1)?,
            });
        }
        let log_groups = log_group_rows
            .iter_mut()
            .map(|row| mapping::log_group(row))
            .collect::<Result<_, _>>()?;
        Ok(CatalogTable {
            schema: Arc::new(schema),
            log_groups,
            key: key_source,
        })
    }

    fn row_estimate(&mut self, owner: &str, table: &str) -> Result<Option<u64>, SourceError> {
        let binds = [Bind::Text(owner), Bind::Text(table)];
        let mut rows = self.rows(
            "read table statistics",
            Place::Pdb,
            sql::ROW_ESTIMATE,
            &binds,
        )?;
        match rows.first_mut() {
            Some(row) => CellReader::new("ALL_TABLES", &["NUM_ROWS"], row).number(0),
            None => Ok(None),
        }
    }

    fn privileges(&mut self) -> Result<SessionPrivileges, SourceError> {
        let first_column = |rows: TextRows| -> BTreeSet<String> {
            rows.into_iter()
                .filter_map(|mut row| row.get_mut(0).and_then(Option::take))
                .collect()
        };
        // In the root, where LogMiner runs: a common user's grants for the PDB's work are given
        // with CONTAINER=ALL, which doctor's statements say.
        let mut privileges: BTreeSet<String> = first_column(self.rows(
            "read privileges",
            Place::Root,
            sql::SESSION_PRIVILEGES,
            &[],
        )?);
        privileges.extend(first_column(self.rows(
            "read object privileges",
            Place::Root,
            sql::PACKAGE_PRIVILEGES,
            &[],
        )?));
        let default_tablespace = first_column(self.rows(
            "read default tablespace",
            Place::Pdb,
            sql::DEFAULT_TABLESPACE,
            &[],
        )?)
        .into_iter()
        .next();
        Ok(SessionPrivileges {
            privileges,
            roles: first_column(self.rows("read roles", Place::Root, sql::SESSION_ROLES, &[])?),
            default_tablespace,
        })
    }
}

impl<P: SessionPool> RedoMiner for OracleClient<P> {
    fn redo_logs(&mut self, from_scn: u64) -> Result<Vec<RedoLog>, SourceError> {
        let mut rows = self.rows(
            "list redo logs",
            Place::Root,
            sql::REDO_LOGS,
            &[Bind::Number(from_scn), Bind::Number(from_scn)],
        )?;
        rows.iter_mut().map(|row| mapping::redo_log(row)).collect()
    }

    /// The flush on every open instance, each on its own session there, or on a pooled session
    /// when the database is one instance or its instances cannot be reached one by one.
    fn flush_redo(&mut self) -> Result<(), SourceError> {
        let table = sql::flush_table_name(&self.options.flush_table).ok_or_else(|| {
            SourceError::Malformed {
                what: "spec.mining.flushTable".to_owned(),
                message: format!("{:?} is not a table name", self.options.flush_table),
            }
        })?;
        let unread = match &self.cluster.read_for {
            None => true,
            // Before the first V$THREAD read nothing is known to have changed.
            Some(threads) => {
                !self.cluster.open_threads.is_empty() && *threads != self.cluster.open_threads
            }
        };
        if unread {
            self.read_instances();
        }
        if self.cluster.instances.is_empty() {
            let mut session = self.session("flush redo", Place::Pdb)?;
            return self.flush_on(&mut session, &table);
        }
        self.flush_every_instance(&table)
    }

    fn flush_shortfall(&self) -> Option<FlushShortfall> {
        self.cluster.shortfall.clone()
    }

    fn heartbeat_action(&mut self, sql: &str) -> Result<(), SourceError> {
        let statement = sql::action_statement(sql);
        let mut session = self.session("heartbeat action query", Place::Pdb)?;
        let fail =
            |failure: Failure| action_query_failure(self.fail("heartbeat action query", &failure));
        session.execute(statement, &[]).map_err(fail)?;
        session.commit().map_err(fail)
    }

    fn start_mining(&mut self, window: &MiningWindow) -> Result<(), SourceError> {
        let classic = matches!(self.topology.mode, MiningMode::Classic { .. });
        // Logs are registered only when the set differs from the one registered (a log switch,
        // an archived copy replacing an online log, a fresh session): START_LOGMNR may be called
        // again in the same LogMiner session with a new STARTSCN/ENDSCN over the logs already
        // added (Oracle Utilities, "Starting LogMiner": the session's log list stays until
        // END_LOGMNR or ADD_LOGFILE with NEW). Debezium does the same: its loop
        // (BufferedLogMinerStreamingChangeEventSource.executeLogMiningStreaming) re-adds logs
        // only when `collectLogsAndFinalUpperBoundary` finds the session's log list changed,
        // and otherwise calls START_LOGMNR alone. ADD_LOGFILE with NEW, the first of a new set,
        // ends the previous LogMiner session itself (DBMS_LOGMNR, ADD_LOGFILE constants).
        let wanted: Vec<LogKey> = window.logs.iter().map(LogKey::of).collect();
        let register = classic && self.registered.as_ref() != Some(&wanted);
        let session = self.main_session("start LogMiner")?;
        let result = (|| {
            if register {
                for (index, log) in window.logs.iter().enumerate() {
                    let statement = if index == 0 {
                        sql::ADD_FIRST_LOGFILE
                    } else {
                        sql::ADD_LOGFILE
                    };
                    session
                        .execute(statement, &[Bind::Text(&log.name)])
                        .map_err(|failure| (failure, Some(log)))?;
                }
            }
            session
                .execute(
                    sql::START_LOGMNR,
                    &[Bind::Number(window.start_scn), Bind::Number(window.end_scn)],
                )
                .map_err(|failure| (failure, None))?;
            Ok::<(), (Failure, Option<&RedoLog>)>(())
        })();
        let (failure, log) = match result {
            Ok(()) => {
                self.window = Some(window.clone());
                self.registered = Some(wanted);
                return Ok(());
            }
            Err(failed) => failed,
        };
        let error = match (failure.ora, log) {
            // The file of a listed log cannot be opened: archived or deleted since the listing.
            (Some(ORA_CANNOT_OPEN_LOG | ORA_CANNOT_OPEN_ARCHIVED_LOG), Some(log)) => {
                SourceError::LogsChanged {
                    log: Some(log.clone()),
                    message: failure.message,
                }
            }
            // The registered logs do not cover the range: an online log listed as holding a
            // sequence was reused before START_LOGMNR read it.
            (Some(ORA_MISSING_LOGFILE), None) => SourceError::LogsChanged {
                log: None,
                message: failure.message,
            },
            // LogMiner refused to run in this container: the configuration stop, not a restart
            // that meets the same refusal (connect normally refuses it first, from the release).
            (Some(ORA_NOT_ALLOWED_IN_PDB), _) => SourceError::MiningInPdbUnsupported {
                version: self.version.clone(),
                container: self.connected_to.clone(),
            },
            (_, Some(_)) => self.fail("register log", &failure),
            (_, None) => self.fail("start LogMiner", &failure),
        };
        self.forget_main_session();
        Err(error)
    }

    fn stream_rows(
        &mut self,
        visit: &mut dyn FnMut(LogMinerRow) -> ControlFlow<()>,
    ) -> Result<u64, SourceError> {
        let Some(window) = self.window.clone() else {
            return Err(SourceError::Database {
                call: "read V$LOGMNR_CONTENTS",
                code: Some("ORA-01306".to_owned()),
                message: "no LogMiner session: start_mining must come first".to_owned(),
            });
        };
        let container = match &self.topology.mode {
            MiningMode::Classic { container } => container.clone(),
            MiningMode::PerPdb => None,
        };
        let (query, binds) =
            sql::contents_query(&window.tables, &window.objects, container.as_deref());
        let mut params = vec![Bind::Number(window.start_scn), Bind::Number(window.end_scn)];
        params.extend(binds.iter().map(|bind| Bind::Text(bind)));
        let mut names = std::mem::take(&mut self.names);
        let mut visited = 0u64;
        let mut mapping_error = None;
        let fetch = Fetch {
            array_rows: CONTENTS_FETCH_ROWS,
            byte_columns: &[],
        };
        let fetched = match self.main_session("read V$LOGMNR_CONTENTS") {
            Ok(session) => session.query(&query, &params, fetch, &mut |cells| {
                let mut text: Vec<Option<String>> =
                    cells.into_iter().map(Cell::into_text).collect();
                match mapping::contents_row(&mut text, &mut names) {
                    Ok(row) => {
                        visited += 1;
                        visit(row)
                    }
                    Err(error) => {
                        mapping_error = Some(error);
                        ControlFlow::Break(())
                    }
                }
            }),
            Err(error) => {
                self.names = names;
                return Err(error);
            }
        };
        self.names = names;
        match fetched {
            Err(failure) => {
                let error = self.fail("read V$LOGMNR_CONTENTS", &failure);
                self.forget_main_session();
                Err(error)
            }
            Ok(()) => match mapping_error {
                Some(error) => Err(error),
                None => Ok(visited),
            },
        }
    }

    fn recycle_mining(&mut self) -> Result<(), SourceError> {
        // Debezium ends LogMiner and, with `log.mining.restart.connection`, closes the connection
        // (`prepareJdbcConnection(true)`): the server process, and the PGA it grew, go with it.
        self.forget_main_session();
        Ok(())
    }

    fn mining_session_memory(&mut self) -> Result<Option<SessionMemory>, SourceError> {
        if self.main.is_none() {
            return Ok(None);
        }
        let rows = self.rows("read session memory", Place::Root, sql::SESSION_MEMORY, &[])?;
        mapping::session_memory(rows).map(Some)
    }

    fn end_mining(&mut self) -> Result<(), SourceError> {
        self.window = None;
        self.registered = None;
        let Some(session) = self.main.as_mut() else {
            return Ok(());
        };
        match session.execute(sql::END_LOGMNR, &[]) {
            Ok(_) => Ok(()),
            Err(failure) if failure.ora == Some(ORA_NO_LOGMINER_SESSION) => Ok(()),
            Err(failure) => {
                let error = self.fail("end LogMiner", &failure);
                self.forget_main_session();
                Err(error)
            }
        }
    }
}

impl<P: SessionPool> OracleClient<P> {
    /// Reads the open instances (`GV$INSTANCE`) and sizes the pool so a session on each fits in
    /// `maxConnections`. Where the instances cannot be flushed one by one (one instance, no
    /// grant, a connect string that cannot name an instance, too few connections) the cluster is
    /// left empty, with a warning naming the fix when there are several instances.
    fn read_instances(&mut self) {
        self.cluster.read_for = Some(self.cluster.open_threads.clone());
        let found = self
            .rows("read instances", Place::Root, sql::INSTANCES, &[])
            .and_then(|mut rows| {
                rows.iter_mut()
                    .map(|row| mapping::instance(row))
                    .collect::<Result<Vec<_>, _>>()
            });
        if let Ok(instances) = &found {
            // What the next V$THREAD read is compared with: one open thread per open instance.
            let mut threads: Vec<u16> = instances.iter().map(|i| i.thread).collect();
            threads.sort_unstable();
            self.cluster.read_for = Some(threads);
            self.cluster
                .sessions
                .retain(|name, _| instances.iter().any(|i| i.name == *name));
        }
        let instances = match found {
            Ok(instances) if instances.len() > 1 => instances,
            Ok(_) => {
                self.cluster.instances.clear();
                self.cluster.shortfall = None;
                return;
            }
            // Only a database known to have several open threads is a RAC worth warning about.
            Err(error) if self.cluster.open_threads.len() > 1 => {
                self.cannot_flush_each(
                    format!("the instances cannot be read from GV$INSTANCE: {error}"),
                    grant_fix(&["SELECT ON GV_$INSTANCE"], &self.options),
                );
                return;
            }
            Err(_) => {
                self.cluster.instances.clear();
                return;
            }
        };
        let names: Vec<&str> = instances.iter().map(|i| i.name.as_str()).collect();
        if instances::instance_connect_string(&self.options.connect_string, names[0]).is_none() {
            self.cannot_flush_each(
                "the connect string cannot name an instance (a tnsnames.ora alias, or no service \
                 name)"
                    .to_owned(),
                "give spec.database host, port and serviceName, or a connect descriptor with \
                 CONNECT_DATA"
                    .to_owned(),
            );
            return;
        }
        let Some(pooled) = instances::pool_budget(self.options.max_connections, instances.len())
        else {
            self.cannot_flush_each(
                format!(
                    "spec.database.maxConnections {} leaves no session for each of the {} \
                     instances beside the two the capture needs",
                    self.options.max_connections,
                    instances.len(),
                ),
                format!(
                    "set spec.database.maxConnections to at least {}",
                    instances.len() + 2
                ),
            );
            return;
        };
        if let Err(failure) = self.pool.set_max_sessions(pooled) {
            self.cannot_flush_each(
                format!("the session pool cannot be resized: {}", failure.message),
                "restart the capture".to_owned(),
            );
            return;
        }
        tracing::info!(
            instances = ?names,
            pooled,
            "RAC: the flush commits on each instance, on a session of its own there"
        );
        self.cluster.instances = instances;
        self.cluster.shortfall = None;
    }

    /// Leaves the flush to a pooled session, which reaches one instance, and says why once.
    fn cannot_flush_each(&mut self, problem: String, fix: String) {
        self.cluster.instances.clear();
        let shortfall = FlushShortfall { problem, fix };
        if self.cluster.shortfall.as_ref() != Some(&shortfall) {
            tracing::warn!(
                "{}: the flush reaches one RAC instance only, so a quiet instance holds capture \
                 back until it writes redo; {}",
                shortfall.problem,
                shortfall.fix
            );
            self.cluster.shortfall = Some(shortfall);
        }
    }

    /// The flush on each instance, as Debezium's `RacCommitLogWriterFlushStrategy` does. An
    /// instance that cannot be flushed (down, unreachable) costs no more than a delay: the
    /// window still ends below what its log writer has written. It is warned about (once while
    /// the same instances fail), its session dropped, and the instances are read again at the
    /// next flush. A refusal that needs an
    /// operator (a missing grant) stops as on a single instance.
    fn flush_every_instance(&mut self, table: &str) -> Result<(), SourceError> {
        let mut failed = Vec::new();
        for instance in self.cluster.instances.clone() {
            let session = match self.cluster.sessions.remove(&instance.name) {
                Some(session) => Ok(session),
                None => self.instance_session(&instance),
            };
            let flushed = session.and_then(|mut session| {
                self.flush_on(&mut session, table)?;
                Ok(session)
            });
            match flushed {
                Ok(session) => {
                    self.cluster.sessions.insert(instance.name, session);
                }
                Err(error) if error.stop().is_some() => return Err(error),
                Err(error) => failed.push((instance.name, error)),
            }
        }
        if failed.len() == self.cluster.instances.len()
            && let Some((_, error)) = failed.pop()
        {
            self.cluster.read_for = None;
            return Err(error);
        }
        let failing: Vec<String> = failed.iter().map(|(name, _)| name.clone()).collect();
        if failing != self.cluster.failing {
            for (instance, error) in &failed {
                tracing::warn!(%instance, %error, "the flush did not reach this RAC instance");
            }
            self.cluster.failing = failing;
        }
        if !failed.is_empty() {
            self.cluster.read_for = None;
        }
        Ok(())
    }

    /// A session of its own on `instance`, set up for the flush table's container.
    fn instance_session(&self, instance: &instances::Instance) -> Result<P::Session, SourceError> {
        let call = "flush redo";
        let connect_string =
            instances::instance_connect_string(&self.options.connect_string, &instance.name)
                .ok_or_else(|| SourceError::Unavailable {
                    message: format!("no connect string reaches instance {}", instance.name),
                })?;
        let mut session = self
            .pool
            .connect_instance(&connect_string)
            .map_err(|failure| self.fail(call, &failure))?;
        let setup = self.topology.setup(Place::Pdb);
        for statement in setup.statements() {
            session
                .execute(&statement, &[])
                .map_err(|failure| self.setup_failure(call, setup, &failure))?;
        }
        Ok(session)
    }

    /// The flush write on `session`: update the flush table's row and commit, creating the
    /// table or giving it its one row when needed.
    fn flush_on(&self, session: &mut P::Session, table: &str) -> Result<(), SourceError> {
        let fail = |call, failure: Failure| self.fail(call, &failure);
        let repair = match session.execute(&sql::flush_update(table), &[]) {
            Err(failure) if failure.ora == Some(ORA_NO_SUCH_TABLE) => {
                if let Err(failure) = session.execute(&sql::flush_create(table), &[]) {
                    let call = "create flush table";
                    return Err(self.flush_table_refused(call, session, table, failure));
                }
                vec![sql::flush_insert(table)]
            }
            Err(failure) => return Err(fail("flush redo", failure)),
            Ok(1) => Vec::new(),
            // An UPDATE of no row writes no redo, so the flush would do nothing.
            Ok(0) => vec![sql::flush_insert(table)],
            // Several rows flush too, but each window would update them all: keep one.
            Ok(rows) => {
                tracing::warn!(
                    rows,
                    table,
                    "the flush table holds several rows: keeping one"
                );
                vec![sql::flush_delete(table), sql::flush_insert(table)]
            }
        };
        for statement in &repair {
            // With deferred segment creation (the default), CREATE TABLE takes no space: a
            // missing quota shows at this first INSERT.
            if let Err(failure) = session.execute(statement, &[]) {
                let call = "repair flush table";
                return Err(self.flush_table_refused(call, session, table, failure));
            }
        }
        session
            .commit()
            .map_err(|failure| fail("flush redo", failure))
    }

    /// A failed CREATE or first INSERT of the flush table. A missing privilege (ORA-01031) or
    /// tablespace quota (ORA-01950 none, ORA-01536 used up) is the prerequisite stop naming the
    /// statement that fixes it: the capture would meet the same refusal at every restart. The
    /// quota is named on the owner's default tablespace, read on the same session (in the PDB,
    /// where the table is created); the rest is classified as usual.
    fn flush_table_refused(
        &self,
        call: &'static str,
        session: &mut P::Session,
        table: &str,
        failure: Failure,
    ) -> SourceError {
        // An `OWNER.NAME` flush table of another schema is created with CREATE ANY TABLE and
        // takes its owner's quota.
        let owner = table.split_once('.').map(|(owner, _)| owner);
        let user = validate::dictionary_name(&self.options.username)
            .unwrap_or_else(|| self.options.username.clone());
        let other_owner = owner.filter(|owner| *owner != user);
        let (what, fix) = match failure.ora {
            Some(ORA_INSUFFICIENT_PRIVILEGES) => {
                let privilege = match other_owner {
                    Some(_) => "CREATE ANY TABLE",
                    None => "CREATE TABLE",
                };
                (
                    format!("creating the flush table {table}"),
                    grant_fix(&[privilege], &self.options),
                )
            }
            Some(code @ (ORA_NO_TABLESPACE_QUOTA | ORA_QUOTA_EXCEEDED)) => {
                let quota_user = other_owner.unwrap_or(&user);
                let tablespace = match other_owner {
                    // USER_USERS names the capture user's tablespace, not the owner's.
                    Some(_) => None,
                    None => query_text(session, sql::DEFAULT_TABLESPACE, &[])
                        .ok()
                        .and_then(|rows| rows.into_iter().next())
                        .and_then(|row| row.into_iter().next().flatten()),
                };
                let tablespace = tablespace
                    .map_or_else(|| "<its default tablespace>".to_owned(), |t| sql_name(&t));
                // None at all: a small one is plenty for one row; used up: more than before.
                let quota = if code == ORA_NO_TABLESPACE_QUOTA {
                    "1M"
                } else {
                    "UNLIMITED"
                };
                let in_pdb = (self.options.pdb.as_deref())
                    .map(|pdb| format!("ALTER SESSION SET CONTAINER = {}; ", sql_name(pdb)))
                    .unwrap_or_default();
                (
                    format!("writing the flush table {table}"),
                    format!(
                        "{in_pdb}ALTER USER {} QUOTA {quota} ON {tablespace};",
                        sql_name(quota_user)
                    ),
                )
            }
            _ => return self.fail(call, &failure),
        };
        SourceError::NotGranted {
            what,
            message: failure.message,
            fix,
        }
    }

    /// The order `table` is read in: by primary key when it is index-organised.
    fn row_order(&mut self, table: &TableSchema) -> Result<sql::RowOrder, SourceError> {
        let name = table.qualified_name();
        if let Some(order) = self.row_orders.get(&name) {
            return Ok(order.clone());
        }
        let binds = [Bind::Text(table.schema()), Bind::Text(table.table())];
        let rows = self.rows(
            "read table organization",
            Place::Pdb,
            sql::TABLE_ORGANIZATION,
            &binds,
        )?;
        let index_organized = rows
            .first()
            .and_then(|row| row.first())
            .is_some_and(|kind| kind.as_deref() == Some("IOT"));
        let order = if index_organized {
            let mut key: Vec<(u16, usize)> = (table.columns().iter().enumerate())
                .filter_map(|(index, column)| column.key_position.map(|p| (p, index)))
                .collect();
            if key.is_empty() {
                return Err(SourceError::Malformed {
                    what: name,
                    message: "an index-organised table without a primary key in the dictionary"
                        .to_owned(),
                });
            }
            key.sort_unstable();
            sql::RowOrder::PrimaryKey(key.into_iter().map(|(_, index)| index).collect())
        } else {
            sql::RowOrder::RowId
        };
        self.row_orders.insert(name, order.clone());
        Ok(order)
    }
}

impl<P: SessionPool> FlashbackReader for OracleClient<P> {
    fn flashback_batch(
        &mut self,
        table: &TableSchema,
        scn: u64,
        after: Option<&str>,
        condition: Option<&str>,
        max_rows: usize,
    ) -> Result<Vec<FlashbackRow>, SourceError> {
        let order = self.row_order(table)?;
        let malformed = |message: String| SourceError::Malformed {
            what: table.qualified_name(),
            message,
        };
        let query =
            sql::flashback_query(table, &order, after.is_some(), condition).map_err(malformed)?;
        // An IOT position is the last row's key values, as the select wrote them.
        let after_key: Vec<String> = match (&order, after) {
            (sql::RowOrder::PrimaryKey(key), Some(text)) => {
                let values: Vec<String> = serde_json::from_str(text)
                    .ok()
                    .filter(|values: &Vec<String>| values.len() == key.len())
                    .ok_or_else(|| {
                        malformed(format!(
                            "the snapshot position {text:?} is not a key of this \
                             index-organised table"
                        ))
                    })?;
                values
            }
            _ => Vec::new(),
        };
        let limit = max_rows as u64;
        let mut binds = vec![Bind::Number(scn)];
        match (&order, after) {
            (sql::RowOrder::RowId, Some(row_id)) => binds.push(Bind::Text(row_id)),
            (sql::RowOrder::PrimaryKey(_), Some(_)) => binds
                .extend((query.key_binds.iter()).map(|&position| Bind::Text(&after_key[position]))),
            (_, None) => {}
        }
        binds.push(Bind::Number(limit));
        self.read_rows(table, &order, &query.sql, &binds, scn, max_rows)
    }

    fn table_chunks(
        &mut self,
        table: &TableSchema,
        rows_per_chunk: u64,
    ) -> Result<Vec<RowRange>, SourceError> {
        match self.row_order(table)? {
            sql::RowOrder::RowId => self.row_id_chunks(table, rows_per_chunk),
            sql::RowOrder::PrimaryKey(key) => self.key_chunks(table, &key, rows_per_chunk),
        }
    }

    fn flashback_range(
        &mut self,
        table: &TableSchema,
        scn: u64,
        range: &RowRange,
        condition: Option<&str>,
    ) -> Result<Vec<FlashbackRow>, SourceError> {
        let order = self.row_order(table)?;
        let malformed = |message: String| SourceError::Malformed {
            what: table.qualified_name(),
            message,
        };
        let empty = Vec::new();
        let mut binds = vec![Bind::Number(scn)];
        let sql = match range {
            RowRange::RowId { lo, hi } => {
                let query = sql::read_query(table, &order, sql::ReadBounds::RowIds, condition)
                    .map_err(malformed)?;
                binds.extend([Bind::Text(lo), Bind::Text(hi)]);
                query.sql
            }
            RowRange::Key { after, through } => {
                let sql::RowOrder::PrimaryKey(key) = &order else {
                    return Err(malformed(
                        "a key range for a table that is not index-organised".to_owned(),
                    ));
                };
                let bounds = sql::ReadBounds::Keys {
                    after: after.is_some(),
                    through: through.is_some(),
                };
                let query = sql::read_query(table, &order, bounds, condition).map_err(malformed)?;
                let (after, through) = (
                    after.as_ref().unwrap_or(&empty),
                    through.as_ref().unwrap_or(&empty),
                );
                for &position in &query.key_binds {
                    let value = if position < key.len() {
                        after.get(position)
                    } else {
                        through.get(position - key.len())
                    };
                    let value = value.ok_or_else(|| {
                        malformed(format!(
                            "the chunk bound {range:?} is not a key of this index-organised table"
                        ))
                    })?;
                    binds.push(Bind::Text(value));
                }
                query.sql
            }
        };
        self.read_rows(table, &order, &sql, &binds, scn, usize::MAX)
    }
}

impl<P: SessionPool> OracleClient<P> {
    /// Runs a flashback read and maps its rows (at most `max_rows`, for the array fetch size).
    fn read_rows(
        &mut self,
        table: &TableSchema,
        order: &sql::RowOrder,
        statement: &str,
        binds: &[Bind<'_>],
        scn: u64,
        max_rows: usize,
    ) -> Result<Vec<FlashbackRow>, SourceError> {
        // A heap read selects the ROWID first; BLOB and LONG RAW columns come as bytes (the
        // select names them bare, [`sql::flashback_expression`]).
        let first_value = usize::from(*order == sql::RowOrder::RowId);
        let byte_columns: Vec<usize> = table
            .columns()
            .iter()
            .enumerate()
            .filter(|(_, column)| {
                column.data_type.lob_kind() == Some(LobKind::Blob)
                    || matches!(column.data_type, OracleType::LongRaw)
            })
            .map(|(index, _)| index + first_value)
            .collect();
        let fetch = Fetch {
            array_rows: FLASHBACK_FETCH_ROWS.min(max_rows.max(1).try_into().unwrap_or(u32::MAX)),
            byte_columns: &byte_columns,
        };
        let mut session = self.session("flashback read", Place::Pdb)?;
        let mut batch = Vec::with_capacity(max_rows.min(FLASHBACK_FETCH_ROWS as usize));
        let mut mapping_error = None;
        let fetched = session.query(statement, binds, fetch, &mut |cells| match flashback_row(
            table, order, cells,
        ) {
            Ok(row) => {
                batch.push(row);
                ControlFlow::Continue(())
            }
            Err(error) => {
                mapping_error = Some(error);
                ControlFlow::Break(())
            }
        });
        match fetched {
            Err(failure) if failure.ora == Some(ORA_SNAPSHOT_TOO_OLD) => {
                Err(SourceError::SnapshotTooOld {
                    scn,
                    message: failure.message,
                })
            }
            Err(failure) => Err(self.fail("flashback read", &failure)),
            Ok(()) => match mapping_error {
                Some(error) => Err(error),
                None => Ok(batch),
            },
        }
    }

    /// A heap table's chunks: its extents ([`sql::TABLE_EXTENTS`]) planned into ranges of
    /// blocks by its statistics ([`chunks`]), each range's ROWIDs built by Oracle
    /// ([`sql::CHUNK_ROW_IDS`]).
    fn row_id_chunks(
        &mut self,
        table: &TableSchema,
        rows_per_chunk: u64,
    ) -> Result<Vec<RowRange>, SourceError> {
        let names = [Bind::Text(table.schema()), Bind::Text(table.table())];
        let mut statistics = self.rows(
            "read table statistics",
            Place::Pdb,
            sql::TABLE_STATISTICS,
            &names,
        )?;
        let (num_rows, blocks) = match statistics.first_mut() {
            Some(row) => {
                let mut reader = CellReader::new("ALL_TABLES", &["NUM_ROWS", "BLOCKS"], row);
                (reader.number(0)?, reader.number(1)?)
            }
            None => (None, None),
        };
        let columns = ["DATA_OBJECT_ID", "RELATIVE_FNO", "BLOCK_ID", "BLOCKS"];
        let extents = self
            .rows("read table extents", Place::Pdb, sql::TABLE_EXTENTS, &names)?
            .into_iter()
            .map(|mut row| {
                let mut reader = CellReader::new("DBA_EXTENTS", &columns, &mut row);
                Ok(chunks::Extent {
                    data_object: reader.required_number(0)?,
                    file: reader.required_number(1)?,
                    block: reader.required_number(2)?,
                    blocks: reader.required_number(3)?,
                })
            })
            .collect::<Result<Vec<_>, SourceError>>()?;
        let target = chunks::blocks_per_chunk(rows_per_chunk, num_rows, blocks);
        let mut ranges = Vec::new();
        for chunk in chunks::plan(&extents, target) {
            let binds = [
                Bind::Number(chunk.data_object),
                Bind::Number(chunk.first.file),
                Bind::Number(chunk.first.block),
                Bind::Number(chunk.data_object),
                Bind::Number(chunk.last.file),
                Bind::Number(chunk.last.block),
            ];
            let mut rows =
                self.rows("read table extents", Place::Pdb, sql::CHUNK_ROW_IDS, &binds)?;
            let row = rows.first_mut().ok_or_else(|| SourceError::Malformed {
                what: "DUAL".to_owned(),
                message: "no row".to_owned(),
            })?;
            let mut reader = CellReader::new("DUAL", &["LO", "HI"], row);
            let lo = reader.text(0)?;
            let hi = reader.text(1)?;
            match (lo, hi) {
                (Some(lo), Some(hi)) => ranges.push(RowRange::RowId { lo, hi }),
                _ => {
                    return Err(SourceError::Malformed {
                        what: table.qualified_name(),
                        message: format!("no ROWID for the blocks {chunk:?}"),
                    });
                }
            }
        }
        Ok(ranges)
    }

    /// An index-organised table's chunks: key ranges of `rows_per_chunk` rows each, their
    /// bounds found by walking the key index ([`sql::key_boundary_query`]). Chosen over
    /// `NTILE` over the key, which sorts every key in one statement before answering, and over
    /// hashing, whose ranges are not key ranges and so cannot use the index.
    fn key_chunks(
        &mut self,
        table: &TableSchema,
        key: &[usize],
        rows_per_chunk: u64,
    ) -> Result<Vec<RowRange>, SourceError> {
        let malformed = |message: String| SourceError::Malformed {
            what: table.qualified_name(),
            message,
        };
        let step = rows_per_chunk.max(1) - 1;
        let mut ranges = Vec::new();
        let mut after: Option<Vec<String>> = None;
        loop {
            let query = sql::key_boundary_query(table, key, after.is_some()).map_err(malformed)?;
            let mut binds = Vec::with_capacity(query.key_binds.len() + 1);
            if let Some(values) = &after {
                for &position in &query.key_binds {
                    binds.push(Bind::Text(values.get(position).ok_or_else(|| {
                        malformed("a key bound of the wrong length".to_owned())
                    })?));
                }
            }
            binds.push(Bind::Number(step));
            let rows = self.rows("read table key", Place::Pdb, &query.sql, &binds)?;
            let Some(row) = rows.into_iter().next() else {
                ranges.push(RowRange::Key {
                    after: after.take(),
                    through: None,
                });
                return Ok(ranges);
            };
            let through: Vec<String> = row.into_iter().collect::<Option<_>>().ok_or_else(|| {
                malformed("a key column of an index-organised table is NULL".to_owned())
            })?;
            ranges.push(RowRange::Key {
                after: after.replace(through.clone()),
                through: Some(through),
            });
        }
    }
}

/// One fetched flashback row: its ROWID first when the table is read by ROWID, then the values
/// in column order; an IOT row's position is its key values as text.
fn flashback_row(
    table: &TableSchema,
    order: &sql::RowOrder,
    cells: Vec<Cell>,
) -> Result<FlashbackRow, SourceError> {
    let malformed = |message: &str| SourceError::Malformed {
        what: table.qualified_name(),
        message: message.to_owned(),
    };
    let mut cells = cells.into_iter();
    let mut position = match order {
        sql::RowOrder::RowId => cells
            .next()
            .and_then(Cell::into_text)
            .ok_or_else(|| malformed("a flashback row without its ROWID"))?,
        sql::RowOrder::PrimaryKey(_) => String::new(),
    };
    let mut key_values = Vec::new();
    let mut values = ValueRow::absent(table.columns().len());
    for (index, column) in table.columns().iter().enumerate() {
        let cell = cells.next().unwrap_or(Cell::Null);
        if column.key_position.is_some() && matches!(order, sql::RowOrder::PrimaryKey(_)) {
            match &cell {
                Cell::Text(text) => key_values.push((column.key_position, text.clone())),
                _ => {
                    return Err(malformed(
                        "a key column of an index-organised table is NULL",
                    ));
                }
            }
        }
        values.set(index, mapping::flashback_value(cell, column)?);
    }
    if let sql::RowOrder::PrimaryKey(_) = order {
        key_values.sort_by_key(|(key_position, _)| *key_position);
        let texts: Vec<&str> = key_values.iter().map(|(_, text)| text.as_str()).collect();
        position = serde_json::to_string(&texts)
            .map_err(|error| malformed(&format!("a key position cannot be written: {error}")))?;
    }
    Ok(FlashbackRow { position, values })
}
