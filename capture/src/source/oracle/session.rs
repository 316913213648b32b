//! Sessions: the one seam between the client's logic and the `oracle` crate.
//!
//! The client ([`super::OracleClient`]) asks a [`SessionPool`] for a session set up for a
//! [`SessionSetup`] (a container and the fixed NLS settings), and runs SQL on it through
//! [`SqlSession`]. The real pool ([`OraclePool`]) is ODPI-C's session pool; in tests a model of
//! Oracle's SQL surface stands in (`fake.rs`), so the decisions made here and in the client (which
//! container a call runs in, what a failed statement means) are tested without a server.
//!
//! **Setup is remembered with OCI session tags.** A pooled session keeps its state (container,
//! NLS) when it goes back to the pool. Each setup has a tag; the pool hands out a session with
//! the wanted tag when it has one, and otherwise any session, which is then set up and re-tagged
//! when it is released. A session whose setup failed halfway is dropped, not pooled, so no session
//! carries a tag that does not describe it.

use std::ops::ControlFlow;
use std::time::Duration;

use oracle::pool::{Pool, PoolOptions};
use oracle::sql_type::ToSql;
use oracle::{Connection, conn::CloseMode};

use super::error::Failure;

/// The root container of a CDB.
pub const ROOT_CONTAINER: &str = "CDB$ROOT";

/// A bind value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bind<'a> {
    Text(&'a str),
    Number(u64),
}

/// One fetched value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    Null,
    Text(String),
    Bytes(Vec<u8>),
}

impl Cell {
    /// The value as text (`None` for NULL; bytes are never asked for as text).
    pub fn into_text(self) -> Option<String> {
        match self {
            Self::Null => None,
            Self::Text(text) => Some(text),
            Self::Bytes(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        }
    }
}

/// How a query's rows are fetched.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fetch<'a> {
    /// Rows per round trip (0: the driver's default).
    pub array_rows: u32,
    /// Columns (0-based) fetched as bytes (BLOBs); the others as text.
    pub byte_columns: &'a [usize],
}

/// What a session is set up for before it is used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSetup {
    /// `ALTER SESSION SET CONTAINER` target; `None` leaves the session where it connected
    /// (a non-CDB, or a session connected to the PDB itself).
    pub container: Option<String>,
}

impl SessionSetup {
    /// The OCI session tag of this setup.
    pub fn tag(&self) -> String {
        match &self.container {
            Some(container) => format!("REDOLINE_NLS=1;REDOLINE_CONTAINER={container}"),
            None => "REDOLINE_NLS=1".to_owned(),
        }
    }

    /// The statements that set a session up, in order: the container first, since switching
    /// containers starts the session's settings afresh in the new container, then the fixed NLS
    /// settings every query's text shapes rely on (`value::nls`).
    pub fn statements(&self) -> Vec<String> {
        let mut statements = Vec::with_capacity(6);
        if let Some(container) = &self.container {
            statements.push(set_container(container));
        }
        statements.extend(
            crate::value::nls::ALTER_SESSION_STATEMENTS
                .iter()
                .map(|statement| (*statement).to_owned()),
        );
        statements
    }
}

/// `ALTER SESSION SET CONTAINER = <name>`. The name comes from `V$CONTAINERS` (or is
/// `CDB$ROOT`), so it is an identifier in dictionary case; it is quoted unless it is one Oracle
/// would fold to itself, since a container cannot be a bind variable.
pub fn set_container(container: &str) -> String {
    let plain = container
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase())
        && container
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || matches!(c, '_' | '$' | '#'));
    if plain {
        format!("ALTER SESSION SET CONTAINER = {container}")
    } else {
        format!(
            "ALTER SESSION SET CONTAINER = \"{}\"",
            container.replace('"', "")
        )
    }
}

/// SQL on one session.
pub trait SqlSession {
    /// Whether the pool handed out a session already set up with the tag asked for.
    fn tag_found(&self) -> bool;
    /// After a successful setup: release the session to the pool under `tag`.
    fn retag_on_release(&mut self, tag: String);
    /// Close the session when it is released instead of pooling it (its state is unknown).
    fn discard(&mut self);
    /// Runs a query and hands each row to `visit`, which may stop early.
    fn query(
        &mut self,
        sql: &str,
        binds: &[Bind<'_>],
        fetch: Fetch<'_>,
        visit: &mut dyn FnMut(Vec<Cell>) -> ControlFlow<()>,
    ) -> Result<(), Failure>;
    /// Runs a statement (DML, DDL or PL/SQL); returns the rows it changed.
    fn execute(&mut self, sql: &str, binds: &[Bind<'_>]) -> Result<u64, Failure>;
    fn commit(&mut self) -> Result<(), Failure>;
}

/// Where sessions come from.
pub trait SessionPool: Send + Clone {
    type Session: SqlSession + Send;
    /// A session, preferably one released under `tag`.
    fn get(&self, tag: &str) -> Result<Self::Session, Failure>;
    /// A session of its own, outside the pool, on the one instance `connect_string` names
    /// ([`super::instance_connect_string`]): what flushes a RAC instance's log writer. Closed when
    /// dropped; never set up (the caller runs [`SessionSetup::statements`] on it).
    fn connect_instance(&self, connect_string: &str) -> Result<Self::Session, Failure>;
    /// Caps the pooled sessions at `max`, so the pool and the sessions of
    /// [`SessionPool::connect_instance`] together stay within `maxConnections`.
    fn set_max_sessions(&self, max: u32) -> Result<(), Failure>;
}

/// ODPI-C's session pool, and the credentials a session outside it connects with. A clone
/// shares the pool (and its `maxConnections`).
#[derive(Clone)]
pub struct OraclePool {
    pub pool: Pool,
    /// Per-round-trip call timeout; `None` disables it.
    pub call_timeout: Option<Duration>,
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for OraclePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OraclePool")
            .field("call_timeout", &self.call_timeout)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

impl SessionPool for OraclePool {
    type Session = OracleSession;

    fn get(&self, tag: &str) -> Result<OracleSession, Failure> {
        let options = PoolOptions::new().tag(tag).match_any_tag(true);
        let connection = self
            .pool
            .get_with_options(&options)
            .map_err(|error| Failure::from(&error))?;
        connection
            .set_call_timeout(self.call_timeout)
            .map_err(|error| Failure::from(&error))?;
        let tag_found = connection.tag_found() && connection.tag() == tag;
        Ok(OracleSession {
            connection,
            tag_found,
            release: if tag_found {
                Release::AsIs
            } else {
                Release::Drop
            },
        })
    }

    fn connect_instance(&self, connect_string: &str) -> Result<OracleSession, Failure> {
        let connection = Connection::connect(&self.username, &self.password, connect_string)
            .map_err(|error| Failure::from(&error))?;
        connection
            .set_call_timeout(self.call_timeout)
            .map_err(|error| Failure::from(&error))?;
        Ok(OracleSession {
            connection,
            tag_found: false,
            release: Release::Standalone,
        })
    }

    fn set_max_sessions(&self, max: u32) -> Result<(), Failure> {
        self.pool
            .reconfigure(1, max, 1)
            .map_err(|error| Failure::from(&error))
    }
}

/// How a session goes back to the pool.
#[derive(Debug)]
enum Release {
    /// Unchanged (it was handed out already set up).
    AsIs,
    /// Set up: kept under this tag.
    Retag(String),
    /// Set up partly or not at all: closed, so no pooled session is in an unknown state.
    Drop,
    /// Not from the pool ([`SessionPool::connect_instance`]): closed.
    Standalone,
}

/// A session of [`OraclePool`].
#[derive(Debug)]
pub struct OracleSession {
    connection: Connection,
    tag_found: bool,
    release: Release,
}

impl Drop for OracleSession {
    fn drop(&mut self) {
        let mode = match &self.release {
            Release::AsIs => return,
            Release::Retag(tag) => CloseMode::Retag(tag),
            Release::Drop => CloseMode::Drop,
            Release::Standalone => CloseMode::Default,
        };
        // Closing returns the session to the pool; a failure leaves it to the pool's own cleanup.
        if let Err(error) = self.connection.close_with_mode(mode) {
            tracing::debug!(%error, "a session could not be released with its tag");
        }
    }
}

fn to_sql<'a>(binds: &'a [Bind<'a>]) -> Vec<&'a dyn ToSql> {
    binds
        .iter()
        .map(|bind| match bind {
            Bind::Text(text) => text as &dyn ToSql,
            Bind::Number(number) => number as &dyn ToSql,
        })
        .collect()
}

impl SqlSession for OracleSession {
    fn tag_found(&self) -> bool {
        self.tag_found
    }

    fn retag_on_release(&mut self, tag: String) {
        self.release = Release::Retag(tag);
    }

    fn discard(&mut self) {
        if !matches!(self.release, Release::Standalone) {
            self.release = Release::Drop;
        }
    }

    fn query(
        &mut self,
        sql: &str,
        binds: &[Bind<'_>],
        fetch: Fetch<'_>,
        visit: &mut dyn FnMut(Vec<Cell>) -> ControlFlow<()>,
    ) -> Result<(), Failure> {
        let failure = |error: oracle::Error| Failure::from(&error);
        let mut builder = self.connection.statement(sql);
        if fetch.array_rows > 0 {
            builder.fetch_array_size(fetch.array_rows);
        }
        let mut statement = builder.build().map_err(failure)?;
        let params = to_sql(binds);
        let rows = statement.query(&params).map_err(failure)?;
        for row in rows {
            let row = row.map_err(failure)?;
            let mut cells = Vec::with_capacity(row.sql_values().len());
            for index in 0..row.sql_values().len() {
                let cell = if fetch.byte_columns.contains(&index) {
                    row.get::<usize, Option<Vec<u8>>>(index)
                        .map_err(failure)?
                        .map_or(Cell::Null, Cell::Bytes)
                } else {
                    row.get::<usize, Option<String>>(index)
                        .map_err(failure)?
                        .map_or(Cell::Null, Cell::Text)
                };
                cells.push(cell);
            }
            if visit(cells).is_break() {
                break;
            }
        }
        Ok(())
    }

    fn execute(&mut self, sql: &str, binds: &[Bind<'_>]) -> Result<u64, Failure> {
        let params = to_sql(binds);
        let statement = self
            .connection
            .execute(sql, &params)
            .map_err(|error| Failure::from(&error))?;
        statement.row_count().map_err(|error| Failure::from(&error))
    }

    fn commit(&mut self) -> Result<(), Failure> {
        self.connection
            .commit()
            .map_err(|error| Failure::from(&error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setups_switch_container_before_nls_and_are_told_apart_by_tag() {
        let root = SessionSetup {
            container: Some(ROOT_CONTAINER.to_owned()),
        };
        let pdb = SessionSetup {
            container: Some("ORCLPDB1".to_owned()),
        };
        let plain = SessionSetup { container: None };
        assert_eq!(
            root.statements()[0],
            "ALTER SESSION SET CONTAINER = CDB$ROOT"
        );
        assert_eq!(
            pdb.statements()[0],
            "ALTER SESSION SET CONTAINER = ORCLPDB1"
        );
        assert_eq!(pdb.statements().len(), 6);
        assert!(plain.statements()[0].contains("NLS_DATE_FORMAT"));
        let tags = [root.tag(), pdb.tag(), plain.tag()];
        assert!(tags[0] != tags[1] && tags[1] != tags[2] && tags[0] != tags[2]);
        assert_eq!(
            set_container("My Pdb"),
            "ALTER SESSION SET CONTAINER = \"My Pdb\""
        );
    }
}
