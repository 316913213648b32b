//! The real Oracle boundary, on the `oracle` crate (ODPI-C over Oracle Instant Client).
//!
//! - **Sessions** come from one pool of at most `maxConnections`. Every session gets the call
//!   timeout `statementTimeoutSeconds` (per round trip, so a long fetch is fine while each array
//!   fetch answers in time). The LogMiner session is held across windows on a connection of its
//!   own, with the fixed NLS settings of [`crate::value::nls`] applied when it is acquired so
//!   SQL_REDO literals render the same way every time. Catalog queries format dates explicitly
//!   and need no NLS.
//! - **Mining mode.** On a non-CDB, or connected to `CDB$ROOT`, the client registers the window's
//!   logs with `ADD_LOGFILE` and filters rows by `SRC_CON_NAME` when a PDB is named. Connected to
//!   a PDB on 21c or later, it mines inside the PDB: `START_LOGMNR` finds the logs itself and
//!   returns only that PDB's redo. A PDB connection on 19c or earlier cannot mine (ORA-65040) and
//!   is refused as a configuration error naming the fix.
//! - **Fetching.** The contents query ([`sql::contents_query`]) is fetched with a large array
//!   ([`CONTENTS_FETCH_ROWS`]) so one round trip carries thousands of rows.
//! - **Errors** are classified once ([`error::classify`]); DPI-1047 (no client library) becomes
//!   CDC-2004 with install guidance through [`SourceError::stop`].
//!
//! All SQL lives in [`sql`], all row mapping in [`mapping`]; both are unit-tested without a
//! server. This module is the thin part that needs one.

pub mod error;
pub mod mapping;
pub mod sql;

use std::fmt;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;

use jiff::civil;
use oracle::pool::{Pool, PoolBuilder};
use oracle::sql_type::ToSql;
use oracle::{Connection, Row};

use self::error::{
    Failure, ORA_INVALID_SCN, ORA_MISSING_LOGFILE, ORA_NO_LOGMINER_SESSION, ORA_NO_SUCH_TABLE,
    ORA_SNAPSHOT_TOO_OLD, action_query_failure, classify,
};
use self::mapping::{CellReader, FlashbackCell, SharedNames};
use super::{
    CatalogTable, DatabaseCatalog, DatabaseInfo, FlashbackReader, FlashbackRow, LogMinerRow,
    MiningWindow, OpenTransaction, PdbIncarnation, RedoLog, RedoLogKind, RedoMiner, RedoThread,
    SessionId, SessionPrivileges, SourceError,
};
use crate::dictionary::{Column, LobKind, TableSchema};
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
    Err(SourceError::Database {
        call: "choose mining mode",
        code: Some("ORA-65040".to_owned()),
        message: format!(
            "Oracle {version} cannot run LogMiner inside PDB {session_container}; connect to \
             CDB$ROOT with a common user (C##...) and name the PDB, or upgrade to 21c"
        ),
    })
}

/// The real Oracle boundary.
pub struct OracleClient {
    pool: Pool,
    options: ConnectOptions,
    /// The LogMiner session, held across windows.
    mining: Option<Connection>,
    mode: Option<MiningMode>,
    window: Option<MiningWindow>,
    names: SharedNames,
}

impl fmt::Debug for OracleClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OracleClient")
            .field("options", &self.options)
            .field("mode", &self.mode)
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl OracleClient {
    /// Builds the pool and opens one session, so a missing client library, a bad password or an
    /// unreachable listener shows at start.
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
        let client = Self {
            pool,
            options,
            mining: None,
            mode: None,
            window: None,
            names: SharedNames::default(),
        };
        let session = client.session("connect")?;
        session
            .ping()
            .map_err(|error| client.fail("connect", &error))?;
        Ok(client)
    }

    fn fail(&self, call: &'static str, error: &oracle::Error) -> SourceError {
        classify(call, &Failure::from(error), timeout_seconds(&self.options))
    }

    fn session(&self, call: &'static str) -> Result<Connection, SourceError> {
        let connection = self.pool.get().map_err(|error| self.fail(call, &error))?;
        connection
            .set_call_timeout(self.options.statement_timeout)
            .map_err(|error| self.fail(call, &error))?;
        Ok(connection)
    }

    /// Runs a small catalog query and returns its rows as text cells.
    fn rows(
        &self,
        call: &'static str,
        sql: &str,
        params: &[&dyn ToSql],
    ) -> Result<Vec<Vec<Option<String>>>, SourceError> {
        let session = self.session(call)?;
        query_cells(&session, sql, params).map_err(|error| self.fail(call, &error))
    }

    fn first_row(
        &self,
        call: &'static str,
        sql: &str,
        params: &[&dyn ToSql],
    ) -> Result<Vec<Option<String>>, SourceError> {
        self.rows(call, sql, params)?
            .into_iter()
            .next()
            .ok_or_else(|| SourceError::Malformed {
                what: call.to_owned(),
                message: "the query returned no row".to_owned(),
            })
    }

    /// Rows of `sql`, or of `fallback` when the first view is not granted (ORA-00942).
    fn rows_or_local(
        &self,
        call: &'static str,
        sql: &str,
        fallback: &str,
    ) -> Result<Vec<Vec<Option<String>>>, SourceError> {
        let session = self.session(call)?;
        match query_cells(&session, sql, &[]) {
            Err(error) if error.oci_code() == Some(ORA_NO_SUCH_TABLE) => {
                // Seed 001: the local view serves, with a warning, since on RAC it sees only the
                // connected instance's transactions and sessions.
                tracing::warn!(
                    call,
                    "the GV$ view is not granted: reading the V$ view of the connected instance \
                     only; on RAC, grant SELECT on the GV_$ views so transactions of the other \
                     instances are seen"
                );
                query_cells(&session, fallback, &[]).map_err(|error| self.fail(call, &error))
            }
            other => other.map_err(|error| self.fail(call, &error)),
        }
    }

    fn mining_session(&mut self) -> Result<&Connection, SourceError> {
        if self.mining.is_none() {
            let session = self.session("start LogMiner")?;
            for statement in crate::value::nls::ALTER_SESSION_STATEMENTS {
                session
                    .execute(statement, &[])
                    .map_err(|error| self.fail("set session NLS", &error))?;
            }
            self.mining = Some(session);
        }
        self.mining
            .as_ref()
            .ok_or_else(|| SourceError::Unavailable {
                message: "the LogMiner session was lost".to_owned(),
            })
    }

    fn mode(&mut self) -> Result<MiningMode, SourceError> {
        if let Some(mode) = &self.mode {
            return Ok(mode.clone());
        }
        let info = self.database()?;
        let mut container = self.first_row(
            "read session container",
            "SELECT SYS_CONTEXT('USERENV', 'CON_NAME') FROM DUAL",
            &[],
        )?;
        let session_container = container
            .get_mut(0)
            .and_then(Option::take)
            .unwrap_or_default();
        let mode = mining_mode(
            &info.version,
            info.cdb,
            &session_container,
            self.options.pdb.as_deref(),
        )?;
        self.mode = Some(mode.clone());
        Ok(mode)
    }

    /// Drops the LogMiner session after a failure, so the next window starts on a fresh one.
    fn forget_mining_session(&mut self) {
        self.mining = None;
        self.window = None;
    }
}

fn timeout_seconds(options: &ConnectOptions) -> u64 {
    options.statement_timeout.map_or(0, |d| d.as_secs())
}

fn row_cells(row: &Row) -> Result<Vec<Option<String>>, oracle::Error> {
    (0..row.sql_values().len())
        .map(|index| row.get::<usize, Option<String>>(index))
        .collect()
}

fn query_cells(
    session: &Connection,
    sql: &str,
    params: &[&dyn ToSql],
) -> Result<Vec<Vec<Option<String>>>, oracle::Error> {
    let rows = session.query(sql, params)?;
    rows.map(|row| row_cells(&row?)).collect()
}

impl DatabaseCatalog for OracleClient {
    fn database(&mut self) -> Result<DatabaseInfo, SourceError> {
        mapping::database(&mut self.first_row("read V$DATABASE", sql::DATABASE, &[])?)
    }

    fn current_scn(&mut self) -> Result<u64, SourceError> {
        let mut row = self.first_row("read current SCN", sql::CURRENT_SCN, &[])?;
        CellReader::new("V$DATABASE", &["CURRENT_SCN"], &mut row).required_number(0)
    }

    fn pdb_incarnation(&mut self, pdb: &str) -> Result<Option<PdbIncarnation>, SourceError> {
        let rows = self.rows("read PDB incarnation", sql::PDB_INCARNATION, &[&pdb])?;
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
        self.rows("read V$THREAD", sql::THREADS, &[])?
            .iter_mut()
            .map(|row| mapping::thread(row))
            .collect()
    }

    fn open_transactions(&mut self) -> Result<Vec<OpenTransaction>, SourceError> {
        self.rows_or_local(
            "read open transactions",
            sql::OPEN_TRANSACTIONS,
            sql::OPEN_TRANSACTIONS_LOCAL,
        )?
        .iter_mut()
        .map(|row| mapping::open_transaction(row))
        .collect()
    }

    fn sessions(&mut self) -> Result<Vec<SessionId>, SourceError> {
        self.rows_or_local("read sessions", sql::SESSIONS, sql::SESSIONS_LOCAL)?
            .iter_mut()
            .map(|row| mapping::session(row))
            .collect()
    }

    fn scn_to_timestamp(&mut self, scn: u64) -> Result<Option<civil::DateTime>, SourceError> {
        let session = self.session("SCN_TO_TIMESTAMP")?;
        match query_cells(&session, sql::SCN_TO_TIMESTAMP, &[&scn]) {
            Err(error) if error.oci_code() == Some(ORA_INVALID_SCN) => Ok(None),
            Err(error) => Err(self.fail("SCN_TO_TIMESTAMP", &error)),
            Ok(mut rows) => match rows.first_mut() {
                Some(row) => CellReader::new("DUAL", &["SCN_TO_TIMESTAMP"], row).date(0),
                None => Ok(None),
            },
        }
    }

    fn list_tables(&mut self) -> Result<Vec<(String, String)>, SourceError> {
        let mut rows = self.rows("list tables", sql::LIST_TABLES, &[])?;
        let mut names = Vec::with_capacity(rows.len());
        for row in &mut rows {
            let mut r = CellReader::new("ALL_TABLES", &["OWNER", "TABLE_NAME"], row);
            names.push((r.required_text(0)?, r.required_text(1)?));
        }
        Ok(names)
    }

    fn table(&mut self, owner: &str, table: &str) -> Result<CatalogTable, SourceError> {
        let params: [&dyn ToSql; 2] = [&owner, &table];
        let column_rows = self.rows("read table columns", sql::TABLE_COLUMNS, &params)?;
        if column_rows.is_empty() {
            return Err(SourceError::NoSuchTable {
                owner: owner.to_owned(),
                table: table.to_owned(),
            });
        }
        let mut key_rows = self.rows("read primary key", sql::PRIMARY_KEY, &params)?;
        let mut key = Vec::with_capacity(key_rows.len());
        for row in &mut key_rows {
            let mut r = CellReader::new("ALL_CONS_COLUMNS", &["COLUMN_NAME", "POSITION"], row);
            key.push((r.required_text(0)?, r.required_number::<u16>(1)?));
        }
        let mut columns = Vec::with_capacity(column_rows.len());
        for mut row in column_rows {
            let (name, data_type, nullable) = mapping::table_column(&mut row)?;
            let position = key.iter().find(|(k, _)| *k == name).map(|(_, p)| *p);
            let column = Column::new(name, data_type).nullable(nullable);
            columns.push(match position {
                Some(position) => column.key(position),
                None => column,
            });
        }
        let schema =
            TableSchema::new(owner, table, columns).map_err(|error| SourceError::Malformed {
                what: format!("dictionary of {owner}.{table}"),
                message: error.to_string(),
            })?;
        let log_groups = self
            .rows("read log groups", sql::LOG_GROUPS, &params)?
            .iter_mut()
            .map(|row| mapping::log_group(row))
            .collect::<Result<_, _>>()?;
        Ok(CatalogTable {
            schema: Arc::new(schema),
            log_groups,
        })
    }

    fn row_estimate(&mut self, owner: &str, table: &str) -> Result<Option<u64>, SourceError> {
        let params: [&dyn ToSql; 2] = [&owner, &table];
        let mut rows = self.rows("read table statistics", sql::ROW_ESTIMATE, &params)?;
        match rows.first_mut() {
            Some(row) => CellReader::new("ALL_TABLES", &["NUM_ROWS"], row).number(0),
            None => Ok(None),
        }
    }

    fn privileges(&mut self) -> Result<SessionPrivileges, SourceError> {
        let first_column = |rows: Vec<Vec<Option<String>>>| {
            rows.into_iter()
                .filter_map(|mut row| row.get_mut(0).and_then(Option::take))
                .collect()
        };
        Ok(SessionPrivileges {
            privileges: first_column(self.rows("read privileges", sql::SESSION_PRIVILEGES, &[])?),
            roles: first_column(self.rows("read roles", sql::SESSION_ROLES, &[])?),
        })
    }
}

impl RedoMiner for OracleClient {
    fn redo_logs(&mut self, from_scn: u64) -> Result<Vec<RedoLog>, SourceError> {
        let mut logs = Vec::new();
        for (sql, kind) in [
            (sql::ONLINE_LOGS, RedoLogKind::Online),
            (sql::ARCHIVED_LOGS, RedoLogKind::Archived),
        ] {
            for mut row in self.rows("list redo logs", sql, &[&from_scn])? {
                logs.push(mapping::redo_log(&mut row, kind)?);
            }
        }
        Ok(logs)
    }

    fn flush_redo(&mut self) -> Result<(), SourceError> {
        let table = sql::flush_table_name(&self.options.flush_table).ok_or_else(|| {
            SourceError::Malformed {
                what: "spec.mining.flushTable".to_owned(),
                message: format!("{:?} is not a table name", self.options.flush_table),
            }
        })?;
        let session = self.session("flush redo")?;
        let update = sql::flush_update(&table);
        match session.execute(&update, &[]) {
            Err(error) if error.oci_code() == Some(ORA_NO_SUCH_TABLE) => {
                for statement in sql::flush_create(&table) {
                    session
                        .execute(&statement, &[])
                        .map_err(|error| self.fail("create flush table", &error))?;
                }
            }
            other => {
                other.map_err(|error| self.fail("flush redo", &error))?;
            }
        }
        session
            .commit()
            .map_err(|error| self.fail("flush redo", &error))
    }

    fn heartbeat_action(&mut self, sql: &str) -> Result<(), SourceError> {
        let statement = sql::action_statement(sql);
        let session = self.session("heartbeat action query")?;
        session
            .execute(statement, &[])
            .map_err(|error| action_query_failure(self.fail("heartbeat action query", &error)))?;
        session
            .commit()
            .map_err(|error| action_query_failure(self.fail("heartbeat action query", &error)))
    }

    fn start_mining(&mut self, window: &MiningWindow) -> Result<(), SourceError> {
        let mode = self.mode()?;
        let session = self.mining_session()?;
        let result = (|| {
            if let MiningMode::Classic { .. } = mode {
                for (index, log) in window.logs.iter().enumerate() {
                    let statement = if index == 0 {
                        sql::ADD_FIRST_LOGFILE
                    } else {
                        sql::ADD_LOGFILE
                    };
                    session
                        .execute(statement, &[&log.name])
                        .map_err(|error| (error, "register log"))?;
                }
            }
            session
                .execute(sql::START_LOGMNR, &[&window.start_scn, &window.end_scn])
                .map_err(|error| (error, "start LogMiner"))?;
            Ok::<(), (oracle::Error, &'static str)>(())
        })();
        match result {
            Ok(()) => {
                self.window = Some(window.clone());
                Ok(())
            }
            Err((error, call)) => {
                self.forget_mining_session();
                if error.oci_code() == Some(ORA_MISSING_LOGFILE) {
                    return Err(SourceError::RedoMissing {
                        thread: window.logs.first().map_or(1, |log| log.thread),
                        from_scn: window.start_scn,
                        to_scn: window.end_scn,
                    });
                }
                Err(self.fail(call, &error))
            }
        }
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
        let container = match self.mode()? {
            MiningMode::Classic { container } => container,
            MiningMode::PerPdb => None,
        };
        let (query, binds) = sql::contents_query(&window.tables, container.as_deref());
        let mut params: Vec<&dyn ToSql> = vec![&window.start_scn, &window.end_scn];
        params.extend(binds.iter().map(|bind| bind as &dyn ToSql));
        let fetched = (|| {
            let session = self.mining_session().map_err(Err)?;
            let mut statement = session
                .statement(&query)
                .fetch_array_size(CONTENTS_FETCH_ROWS)
                .build()
                .map_err(Ok)?;
            let rows = statement.query(&params).map_err(Ok)?;
            let mut visited = 0u64;
            for row in rows {
                let mut cells = row_cells(&row.map_err(Ok)?).map_err(Ok)?;
                let row = mapping::contents_row(&mut cells, &mut self.names).map_err(Err)?;
                visited += 1;
                if visit(row).is_break() {
                    break;
                }
            }
            Ok::<u64, Result<oracle::Error, SourceError>>(visited)
        })();
        match fetched {
            Ok(visited) => Ok(visited),
            Err(Ok(error)) => {
                self.forget_mining_session();
                Err(self.fail("read V$LOGMNR_CONTENTS", &error))
            }
            Err(Err(error)) => Err(error),
        }
    }

    fn end_mining(&mut self) -> Result<(), SourceError> {
        self.window = None;
        let Some(session) = self.mining.as_ref() else {
            return Ok(());
        };
        match session.execute(sql::END_LOGMNR, &[]) {
            Ok(_) => Ok(()),
            Err(error) if error.oci_code() == Some(ORA_NO_LOGMINER_SESSION) => Ok(()),
            Err(error) => {
                let failure = self.fail("end LogMiner", &error);
                self.forget_mining_session();
                Err(failure)
            }
        }
    }
}

impl FlashbackReader for OracleClient {
    fn flashback_batch(
        &mut self,
        table: &TableSchema,
        scn: u64,
        after_row_id: Option<&str>,
        condition: Option<&str>,
        max_rows: usize,
    ) -> Result<Vec<FlashbackRow>, SourceError> {
        let query =
            sql::flashback_query(table, after_row_id.is_some(), condition).ok_or_else(|| {
                SourceError::Malformed {
                    what: table.qualified_name(),
                    message: "a name holds a double quote".to_owned(),
                }
            })?;
        let limit = max_rows as u64;
        let params: Vec<&dyn ToSql> = match &after_row_id {
            Some(after) => vec![&scn, after, &limit],
            None => vec![&scn, &limit],
        };
        let session = self.session("flashback read")?;
        let fail = |error: oracle::Error| {
            if error.oci_code() == Some(ORA_SNAPSHOT_TOO_OLD) {
                SourceError::SnapshotTooOld {
                    scn,
                    message: error.to_string(),
                }
            } else {
                self.fail("flashback read", &error)
            }
        };
        let mut statement = session
            .statement(&query)
            .fetch_array_size(FLASHBACK_FETCH_ROWS.min(max_rows.max(1) as u32))
            .build()
            .map_err(fail)?;
        let rows = statement.query(&params).map_err(fail)?;
        let mut batch = Vec::with_capacity(max_rows.min(FLASHBACK_FETCH_ROWS as usize));
        for row in rows {
            let row = row.map_err(fail)?;
            let row_id: String = row.get(0).map_err(fail)?;
            let mut values = ValueRow::absent(table.columns().len());
            for (index, column) in table.columns().iter().enumerate() {
                let cell = if column.data_type.lob_kind() == Some(LobKind::Blob) {
                    row.get::<usize, Option<Vec<u8>>>(index + 1)
                        .map_err(fail)?
                        .map_or(FlashbackCell::Null, FlashbackCell::Bytes)
                } else {
                    row.get::<usize, Option<String>>(index + 1)
                        .map_err(fail)?
                        .map_or(FlashbackCell::Null, FlashbackCell::Text)
                };
                values.set(index, mapping::flashback_value(cell, column)?);
            }
            batch.push(FlashbackRow { row_id, values });
        }
        Ok(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mining_mode_follows_release_and_container() {
        assert_eq!(
            mining_mode("19.0.0.0.0", false, "ORCL", None).unwrap(),
            MiningMode::Classic { container: None }
        );
        assert_eq!(
            mining_mode("19.0.0.0.0", true, "CDB$ROOT", Some("PDB1")).unwrap(),
            MiningMode::Classic {
                container: Some("PDB1".to_owned())
            }
        );
        assert_eq!(
            mining_mode("21.0.0.0.0", true, "PDB1", None).unwrap(),
            MiningMode::PerPdb
        );
        let refused = mining_mode("19.0.0.0.0", true, "PDB1", None).unwrap_err();
        assert!(refused.to_string().contains("CDB$ROOT"), "{refused}");
        assert!(mining_mode("nineteen", true, "PDB1", None).is_err());
    }

    #[test]
    fn connect_strings_and_secrets() {
        assert_eq!(
            ez_connect("db.example", 1521, "ORCLPDB1"),
            "db.example:1521/ORCLPDB1"
        );
        assert_eq!(ez_connect("fd00::1", 1521, "X"), "[fd00::1]:1521/X");
        let options = ConnectOptions {
            username: "C##CDC".to_owned(),
            password: "s3cret-value".to_owned(),
            connect_string: "db:1521/ORCL".to_owned(),
            max_connections: 2,
            statement_timeout: Some(Duration::from_secs(30)),
            pdb: None,
            flush_table: "LOG_MINING_FLUSH".to_owned(),
        };
        assert!(!format!("{options:?}").contains("s3cret"));
    }

    /// Without Oracle Instant Client on the machine, connecting is the typed stop CDC-2004,
    /// never a panic. (Where a client library is installed the connect fails differently, on
    /// the unreachable address; both are typed.)
    #[test]
    fn connecting_without_a_client_library_or_server_is_typed() {
        let options = ConnectOptions {
            username: "cdc".to_owned(),
            password: "x".to_owned(),
            connect_string: "127.0.0.1:9/NOPE".to_owned(),
            max_connections: 2,
            statement_timeout: Some(Duration::from_secs(2)),
            pdb: None,
            flush_table: "LOG_MINING_FLUSH".to_owned(),
        };
        let error = OracleClient::connect(options).unwrap_err();
        if std::env::var_os("ORACLE_HOME").is_none() && !client_library_present() {
            assert!(
                matches!(error, SourceError::ClientMissing { .. }),
                "{error}"
            );
            assert_eq!(error.stop().unwrap().code.code(), "CDC-2004");
        }
    }

    fn client_library_present() -> bool {
        std::env::var("LD_LIBRARY_PATH")
            .unwrap_or_default()
            .split(':')
            .chain(["/usr/lib", "/usr/lib64", "/usr/lib/x86_64-linux-gnu"])
            .any(|dir| std::path::Path::new(dir).join("libclntsh.so").exists())
    }
}
