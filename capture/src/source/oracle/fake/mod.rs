//! A model of Oracle's SQL surface, for the client's tests: what a database answers to each
//! statement the client sends, in the container the session is in.
//!
//! It models the parts of Oracle the client's own decisions depend on, including the
//! inconvenient ones:
//! - a CDB's root does not see a PDB's tables (`ALL_TAB_COLS` and friends return nothing there, a
//!   flashback read or the flush table is ORA-00942), and LogMiner cannot start inside a PDB on
//!   19c (ORA-65040);
//! - `ALTER SESSION SET CONTAINER` needs the SET CONTAINER privilege (ORA-01031) and an existing
//!   container (ORA-65011), and pooled sessions keep their container and NLS settings;
//! - a client whose locale's decimal character is a comma renders `TO_CHAR(n, 'TM9')` with a
//!   comma until the session sets `NLS_NUMERIC_CHARACTERS`;
//! - an UPDATE of no row writes no redo;
//! - flashback reads evaluate their WHERE clause, order and row limit ([`flashback`]), and an
//!   index-organised table's rows have logical ROWIDs that `CHARTOROWID` refuses.
//!
//! A statement it does not model is ORA-00900, so a new statement in the client fails its tests
//! until the model says what Oracle does with it.

use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex, MutexGuard};

mod flashback;

use super::error::Failure;
use super::session::{Bind, Cell, Fetch, ROOT_CONTAINER, SessionPool, SqlSession};
use super::sql;

/// A column of a modelled table: name, `DATA_TYPE`, precision, scale.
#[derive(Clone, Debug)]
pub struct FakeColumn {
    pub name: &'static str,
    pub data_type: &'static str,
    pub precision: Option<u32>,
    pub scale: Option<i32>,
}

/// A table with its key and rows (numbers as exact decimal text, `None` for NULL).
#[derive(Clone, Debug)]
pub struct FakeTable {
    pub owner: &'static str,
    pub name: &'static str,
    pub columns: Vec<FakeColumn>,
    pub key: Vec<&'static str>,
    pub rows: Vec<Vec<Option<String>>>,
    /// An IOT: its rows have logical ROWIDs.
    pub index_organized: bool,
}

/// A container: the root or a PDB.
#[derive(Clone, Debug)]
pub struct FakeContainer {
    pub name: String,
    pub con_id: u32,
    pub open_mode: &'static str,
    pub tables: Vec<FakeTable>,
    /// The flush table's rows; `None` while it does not exist.
    pub flush_rows: Option<u64>,
    /// Start SCNs of the transactions open in this container.
    pub open_transactions: Vec<u64>,
}

impl FakeContainer {
    pub fn new(name: &str, con_id: u32) -> Self {
        Self {
            name: name.to_owned(),
            con_id,
            open_mode: "READ WRITE",
            tables: Vec::new(),
            flush_rows: None,
            open_transactions: Vec::new(),
        }
    }

    fn table(&self, owner: &str, name: &str) -> Option<&FakeTable> {
        self.tables
            .iter()
            .find(|table| table.owner == owner && table.name == name)
    }
}

/// One statement as the database saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issued {
    pub session: u32,
    pub container: String,
    pub sql: String,
}

/// The database's state, shared by the pool and its sessions.
#[derive(Debug)]
pub struct FakeDatabase {
    pub version: &'static str,
    pub cdb: bool,
    /// The container a new session starts in (what the service name connects to).
    pub connect_container: String,
    /// The root first, then the PDBs (a non-CDB has one container, named as the database).
    pub containers: Vec<FakeContainer>,
    pub privileges: BTreeSet<String>,
    /// The client's locale has a comma as decimal character (`NLS_LANG=GERMAN_GERMANY...`).
    pub decimal_comma_client: bool,
    pub max_sessions: usize,
    /// The next this many START_LOGMNR calls find the registered logs short of the range
    /// (ORA-01291), as when a listed online log was reused before the start.
    pub missing_logfile_starts: u32,
    /// Statements over views the capture user was not granted (ORA-00942).
    pub ungranted: BTreeSet<&'static str>,
    /// Log files ADD_LOGFILE cannot open (ORA-01284): deleted or moved since the listing.
    pub unreadable_logs: BTreeSet<String>,
    /// The capture user has a quota on its default tablespace `USERS`. Without one, CREATE
    /// TABLE still works (deferred segment creation) and the first INSERT is ORA-01950.
    pub tablespace_quota: bool,
    /// Committed updates that wrote redo (changed at least one row), per container.
    pub redo_writing_flushes: Vec<(String, u64)>,
    /// What `TO_CHAR(SYSTIMESTAMP, 'TZH:TZM')` answers: the host's offset from UTC.
    pub host_utc_offset: &'static str,
    pub issued: Vec<Issued>,
    idle: Vec<SessionState>,
    open_sessions: usize,
    next_session: u32,
}

impl FakeDatabase {
    /// A 19c CDB entered at the root, with one PDB.
    pub fn cdb(pdb: FakeContainer) -> Self {
        let mut root = FakeContainer::new(ROOT_CONTAINER, 1);
        root.open_mode = "READ WRITE";
        let mut seed = FakeContainer::new("PDB$SEED", 2);
        seed.open_mode = "READ ONLY";
        Self::new(true, ROOT_CONTAINER, vec![root, seed, pdb])
    }

    /// A non-CDB named `ORCL` holding `tables`.
    pub fn non_cdb(tables: Vec<FakeTable>) -> Self {
        let mut database = FakeContainer::new("ORCL", 0);
        database.tables = tables;
        database.flush_rows = Some(1);
        Self::new(false, "ORCL", vec![database])
    }

    fn new(cdb: bool, connect_container: &str, containers: Vec<FakeContainer>) -> Self {
        Self {
            version: "19.0.0.0.0",
            cdb,
            connect_container: connect_container.to_owned(),
            containers,
            privileges: [
                "CREATE SESSION",
                "SET CONTAINER",
                "LOGMINING",
                "SELECT ANY TRANSACTION",
                "FLASHBACK ANY TABLE",
                "CREATE TABLE",
            ]
            .into_iter()
            .map(str::to_owned)
            .collect(),
            decimal_comma_client: false,
            max_sessions: 4,
            missing_logfile_starts: 0,
            ungranted: BTreeSet::new(),
            unreadable_logs: BTreeSet::new(),
            tablespace_quota: true,
            redo_writing_flushes: Vec::new(),
            host_utc_offset: "+00:00",
            issued: Vec::new(),
            idle: Vec::new(),
            open_sessions: 0,
            next_session: 1,
        }
    }

    pub fn container(&self, name: &str) -> Option<&FakeContainer> {
        self.containers.iter().find(|c| c.name == name)
    }

    fn container_mut(&mut self, name: &str) -> Option<&mut FakeContainer> {
        self.containers.iter_mut().find(|c| c.name == name)
    }

    /// The containers statements matching `sql_start` ran in.
    pub fn containers_of(&self, sql_start: &str) -> BTreeSet<String> {
        self.issued
            .iter()
            .filter(|issued| issued.sql.starts_with(sql_start))
            .map(|issued| issued.container.clone())
            .collect()
    }
}

/// The pool: hands out sessions of the shared database.
#[derive(Clone, Debug)]
pub struct FakeOracle(pub Arc<Mutex<FakeDatabase>>);

impl FakeOracle {
    pub fn new(database: FakeDatabase) -> Self {
        Self(Arc::new(Mutex::new(database)))
    }

    pub fn state(&self) -> MutexGuard<'_, FakeDatabase> {
        match self.0.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

#[derive(Clone, Debug)]
struct SessionState {
    id: u32,
    container: String,
    nls: bool,
    tag: String,
    mining: bool,
}

/// A session of [`FakeOracle`].
#[derive(Debug)]
pub struct FakeSession {
    oracle: FakeOracle,
    state: SessionState,
    tag_found: bool,
    retag: Option<String>,
}

impl Drop for FakeSession {
    fn drop(&mut self) {
        let mut database = self.oracle.state();
        // As OCI: a retagged session is pooled under its new tag, one handed out set up goes
        // back as it is, any other is closed.
        match self.retag.take() {
            Some(tag) => {
                self.state.tag = tag;
                database.idle.push(self.state.clone());
            }
            None if self.tag_found => database.idle.push(self.state.clone()),
            None => database.open_sessions -= 1,
        }
    }
}

impl SessionPool for FakeOracle {
    type Session = FakeSession;

    fn get(&self, tag: &str) -> Result<FakeSession, Failure> {
        let mut database = self.state();
        let position = database
            .idle
            .iter()
            .position(|session| session.tag == tag)
            .or(if database.idle.is_empty() {
                None
            } else {
                Some(0)
            });
        let (state, tag_found) = match position {
            Some(index) => {
                let state = database.idle.remove(index);
                let found = state.tag == tag && !tag.is_empty();
                (state, found)
            }
            None if database.open_sessions < database.max_sessions => {
                database.open_sessions += 1;
                let id = database.next_session;
                database.next_session += 1;
                let state = SessionState {
                    id,
                    container: database.connect_container.clone(),
                    nls: false,
                    tag: String::new(),
                    mining: false,
                };
                (state, false)
            }
            None => return Err(failure(24418, "cannot open further sessions")),
        };
        drop(database);
        Ok(FakeSession {
            oracle: self.clone(),
            state,
            tag_found,
            retag: None,
        })
    }

    /// The fake is one instance: no connect string names another (ORA-12521).
    fn connect_instance(&self, _connect_string: &str) -> Result<FakeSession, Failure> {
        Err(failure(
            12521,
            "TNS:listener does not currently know of instance requested in connect descriptor",
        ))
    }

    fn set_max_sessions(&self, _max: u32) -> Result<(), Failure> {
        Ok(())
    }
}

fn failure(ora: i32, message: &str) -> Failure {
    Failure {
        ora: Some(ora),
        dpi: None,
        message: format!("ORA-{ora:05}: {message}"),
    }
}

/// The table a flashback read names (`FROM "OWNER"."TABLE" AS OF`).
fn flashback_table<'a>(container: &'a FakeContainer, sql: &str) -> Result<&'a FakeTable, Failure> {
    let missing = || failure(942, "table or view does not exist");
    let from = sql.find(" FROM \"").ok_or_else(missing)?;
    let mut names = sql[from + 7..].split('"');
    let owner = names.next().ok_or_else(missing)?;
    let name = names.nth(1).ok_or_else(missing)?;
    container.table(owner, name).ok_or_else(missing)
}

/// The bytes of a hex text, as the model stores RAW, LONG RAW and BLOB values.
fn decode_hex(hex: &str) -> Result<Vec<u8>, Failure> {
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let bytes = hex.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return Err(failure(1465, "invalid hex number"));
    }
    bytes
        .chunks(2)
        .map(|pair| match (digit(pair[0]), digit(pair[1])) {
            (Some(high), Some(low)) => Ok(high << 4 | low),
            _ => Err(failure(1465, "invalid hex number")),
        })
        .collect()
}

fn text(value: impl ToString) -> Cell {
    Cell::Text(value.to_string())
}

fn bind_text<'a>(binds: &[Bind<'a>], index: usize) -> &'a str {
    match binds.get(index) {
        Some(Bind::Text(text)) => text,
        _ => "",
    }
}

impl FakeSession {
    fn record(&self, database: &mut FakeDatabase, sql: &str) {
        database.issued.push(Issued {
            session: self.state.id,
            container: self.state.container.clone(),
            sql: sql.to_owned(),
        });
    }

    fn in_root(&self, database: &FakeDatabase) -> bool {
        !database.cdb || self.state.container == ROOT_CONTAINER
    }

    /// LogMiner runs in the root of a CDB only before 21c.
    fn logminer_allowed(&self, database: &FakeDatabase) -> Result<(), Failure> {
        let release: u32 = (database.version.split('.').next())
            .and_then(|major| major.parse().ok())
            .unwrap_or(0);
        if self.in_root(database) || release >= 21 {
            Ok(())
        } else {
            Err(failure(
                65040,
                "operation not allowed from within a pluggable database",
            ))
        }
    }

    fn rows(&mut self, sql: &str, binds: &[Bind<'_>]) -> Result<Vec<Vec<Cell>>, Failure> {
        let mut database = self.oracle.state();
        self.record(&mut database, sql);
        if database.ungranted.contains(sql) {
            return Err(failure(942, "table or view does not exist"));
        }
        let container = database
            .container(&self.state.container)
            .cloned()
            .ok_or_else(|| failure(65011, "pluggable database does not exist"))?;
        let rows = match sql {
            sql::TOPOLOGY => vec![vec![
                text(&self.state.container),
                text(database.version),
                text(if database.cdb { "YES" } else { "NO" }),
            ]],
            sql::CONTAINERS => database
                .containers
                .iter()
                // In a PDB the view shows that PDB only.
                .filter(|c| self.in_root(&database) || c.name == self.state.container)
                .map(|c| vec![text(&c.name), text(c.open_mode), text(c.con_id)])
                .collect(),
            sql::DATABASE => vec![vec![
                text(1_234_567),
                text("ORCL"),
                text(database.version),
                text("ARCHIVELOG"),
                text("YES"),
                text("NO"),
                text("NO"),
                text("NO"),
                text("NO"),
                text(5_000),
                text(1),
                text("2024-01-01 00:00:00"),
                text(if database.cdb { "YES" } else { "NO" }),
            ]],
            sql::CURRENT_SCN => vec![vec![text(5_000)]],
            sql::THREADS => vec![vec![
                text(1),
                text("OPEN"),
                text("PUBLIC"),
                text(4_000),
                text(7),
                text(1),
                text(4_990),
            ]],
            sql::REDO_LOGS => vec![vec![
                text("/u01/oradata/ORCL/redo01.log"),
                text(1),
                text(7),
                text(3_000),
                text("18446744073709551615"),
                text("CURRENT"),
                text("ONLINE"),
                Cell::Null,
                text("2026-12-05 10:00:00"),
            ]],
            sql::PDB_INCARNATION => database
                .containers
                .iter()
                .filter(|c| c.name == bind_text(binds, 0) && c.name != ROOT_CONTAINER)
                .filter(|c| self.in_root(&database) || c.name == self.state.container)
                .map(|c| vec![text(c.con_id), text(1), text(0), text(1)])
                .collect(),
            // From the root, every container's transactions; from a PDB, its own.
            sql::OPEN_TRANSACTIONS
            | sql::OPEN_TRANSACTIONS_IN_CONTAINER
            | sql::OPEN_TRANSACTIONS_LOCAL
            | sql::OPEN_TRANSACTIONS_LOCAL_IN_CONTAINER => database
                .containers
                .iter()
                .filter(|c| self.in_root(&database) || c.name == self.state.container)
                .filter(|c| {
                    !sql.ends_with("WHERE CON_ID = :1")
                        || binds.first() == Some(&Bind::Number(u64::from(c.con_id)))
                })
                .flat_map(|c| {
                    c.open_transactions.iter().enumerate().map(|(slot, start)| {
                        vec![
                            text(format!("10.{slot}.962")),
                            text(1),
                            text(start),
                            text("ACTIVE"),
                            text(c.con_id),
                        ]
                    })
                })
                .collect(),
            sql::SESSIONS | sql::SESSIONS_LOCAL => Vec::new(),
            // One instance: the flush needs no session of its own.
            sql::INSTANCES => vec![vec![text("orcl1"), text(1)]],
            sql::SESSION_PRIVILEGES => database.privileges.iter().map(|p| vec![text(p)]).collect(),
            sql::PACKAGE_PRIVILEGES => Vec::new(),
            sql::DEFAULT_TABLESPACE => vec![vec![text("USERS")]],
            sql::SESSION_ROLES => ["SELECT_CATALOG_ROLE", "EXECUTE_CATALOG_ROLE"]
                .iter()
                .map(|role| vec![text(role)])
                .collect(),
            sql::SCN_TO_TIMESTAMP => vec![vec![text("2024-01-01 00:00:00")]],
            sql::DATABASE_UTC_OFFSET => vec![vec![text(database.host_utc_offset)]],
            sql::CHARACTER_SETS => vec![
                vec![text("NLS_CHARACTERSET"), text("AL32UTF8")],
                vec![text("NLS_NCHAR_CHARACTERSET"), text("AL16UTF16")],
            ],
            sql::DATABASE_TIME_ZONE => vec![vec![text("+00:00")]],
            sql::LIST_TABLES => container
                .tables
                .iter()
                .map(|t| vec![text(t.owner), text(t.name)])
                .collect(),
            sql::TABLE_COLUMNS => container
                .table(bind_text(binds, 0), bind_text(binds, 1))
                .map(|table| {
                    table
                        .columns
                        .iter()
                        .zip(1..)
                        .map(|(c, segment_column)| {
                            let number = |n: Option<i64>| n.map_or(Cell::Null, text);
                            vec![
                                text(c.name),
                                text(c.data_type),
                                text(22),
                                number(c.precision.map(i64::from)),
                                number(c.scale.map(i64::from)),
                                Cell::Null,
                                Cell::Null,
                                text(if table.key.contains(&c.name) {
                                    "N"
                                } else {
                                    "Y"
                                }),
                                // DATA_TYPE_OWNER: the fake's types are all built in.
                                Cell::Null,
                                text(segment_column),
                            ]
                        })
                        .collect()
                })
                .unwrap_or_default(),
            // Object numbers from the table's place in its container, one object per table.
            sql::TABLE_OBJECT => (container.tables.iter())
                .position(|t| t.owner == bind_text(binds, 0) && t.name == bind_text(binds, 1))
                .map(|index| vec![vec![text(70_000 + index), text(70_000 + index)]])
                .unwrap_or_default(),
            sql::PRIMARY_KEY => container
                .table(bind_text(binds, 0), bind_text(binds, 1))
                .map(|table| {
                    (table.key.iter().enumerate())
                        .map(|(index, name)| vec![text(name), text(index + 1)])
                        .collect()
                })
                .unwrap_or_default(),
            // The fake's tables have no unique index besides their primary key's.
            sql::UNIQUE_INDEXES => Vec::new(),
            sql::LOG_GROUPS => container
                .table(bind_text(binds, 0), bind_text(binds, 1))
                .map(|_| vec![vec![text("ALL COLUMN LOGGING"), text("ALWAYS")]])
                .unwrap_or_default(),
            sql::ROW_ESTIMATE => Vec::new(),
            _ if sql.starts_with("SELECT SCN, START_SCN") => {
                self.logminer_allowed(&database)?;
                if !self.state.mining {
                    return Err(failure(1306, "dbms_logmnr.start_logmnr() must be invoked"));
                }
                Vec::new()
            }
            sql::TABLE_ORGANIZATION => container
                .table(bind_text(binds, 0), bind_text(binds, 1))
                .map(|table| {
                    vec![vec![if table.index_organized {
                        text("IOT")
                    } else {
                        Cell::Null
                    }]]
                })
                .unwrap_or_default(),
            _ if sql.contains(" AS OF SCN :1") => {
                let table = flashback_table(&container, sql)?;
                let decimal_comma = database.decimal_comma_client && !self.state.nls;
                flashback::read(table, sql, binds, decimal_comma)?
            }
            _ => {
                return Err(failure(
                    900,
                    &format!("invalid SQL statement (not modelled): {sql}"),
                ));
            }
        };
        Ok(rows)
    }

    fn run(&mut self, statement: &str, binds: &[Bind<'_>]) -> Result<u64, Failure> {
        let mut database = self.oracle.state();
        self.record(&mut database, statement);
        if let Some(target) = statement.strip_prefix("ALTER SESSION SET CONTAINER = ") {
            let target = target.trim_matches('"');
            if !database.privileges.contains("SET CONTAINER") {
                return Err(failure(1031, "insufficient privileges"));
            }
            if !database.cdb || database.container(target).is_none() {
                return Err(failure(65011, "pluggable database does not exist"));
            }
            self.state.container = target.to_owned();
            // A new container starts the session's settings afresh.
            self.state.nls = false;
            return Ok(0);
        }
        if statement.starts_with("ALTER SESSION SET NLS_NUMERIC_CHARACTERS") {
            self.state.nls = true;
            return Ok(0);
        }
        if statement.starts_with("ALTER SESSION SET ") {
            return Ok(0);
        }
        match statement {
            sql::ADD_FIRST_LOGFILE | sql::ADD_LOGFILE => {
                self.logminer_allowed(&database)?;
                if database.unreadable_logs.contains(bind_text(binds, 0)) {
                    return Err(failure(1284, "file cannot be opened"));
                }
                return Ok(0);
            }
            sql::START_LOGMNR => {
                self.logminer_allowed(&database)?;
                if database.missing_logfile_starts > 0 {
                    database.missing_logfile_starts -= 1;
                    return Err(failure(1291, "missing logfile"));
                }
                self.state.mining = true;
                return Ok(0);
            }
            sql::END_LOGMNR if self.state.mining => {
                self.state.mining = false;
                return Ok(0);
            }
            sql::END_LOGMNR => return Err(failure(1307, "no LogMiner session is active")),
            _ => {}
        }
        let flush = sql::flush_table_name("LOG_MINING_FLUSH").unwrap_or_default();
        let name = self.state.container.clone();
        let may_create = database.privileges.contains("CREATE TABLE");
        let quota = database.tablespace_quota;
        let container = database
            .container_mut(&name)
            .ok_or_else(|| failure(65011, "pluggable database does not exist"))?;
        if statement == sql::flush_update(&flush) {
            let rows = container
                .flush_rows
                .ok_or_else(|| failure(942, "table or view does not exist"))?;
            if rows > 0 {
                database.redo_writing_flushes.push((name, rows));
            }
            return Ok(rows);
        }
        if statement == sql::flush_create(&flush) {
            if !may_create {
                return Err(failure(1031, "insufficient privileges"));
            }
            if container.flush_rows.is_some() {
                return Err(failure(955, "name is already used by an existing object"));
            }
            container.flush_rows = Some(0);
            return Ok(0);
        }
        let exists = |container: &FakeContainer| {
            container
                .flush_rows
                .ok_or_else(|| failure(942, "table or view does not exist"))
        };
        if statement == sql::flush_insert(&flush) {
            let rows = exists(container)?;
            if !quota {
                return Err(failure(1950, "no privileges on tablespace 'USERS'"));
            }
            container.flush_rows = Some(rows + 1);
            return Ok(1);
        }
        if statement == sql::flush_delete(&flush) {
            let rows = exists(container)?;
            container.flush_rows = Some(0);
            return Ok(rows);
        }
        // A heartbeat action: `UPDATE OWNER.TABLE ...` of a table of this container.
        if let Some(rest) = statement.strip_prefix("UPDATE ") {
            let target = rest.split_whitespace().next().unwrap_or_default();
            let (owner, table) = target.split_once('.').unwrap_or(("", target));
            return match container.table(owner, table) {
                Some(table) => Ok(table.rows.len() as u64),
                None => Err(failure(942, "table or view does not exist")),
            };
        }
        Err(failure(
            900,
            &format!("invalid SQL statement (not modelled): {statement}"),
        ))
    }
}

impl SqlSession for FakeSession {
    fn tag_found(&self) -> bool {
        self.tag_found
    }

    fn retag_on_release(&mut self, tag: String) {
        self.retag = Some(tag);
    }

    fn discard(&mut self) {
        self.retag = None;
        self.tag_found = false;
    }

    fn query(
        &mut self,
        sql: &str,
        binds: &[Bind<'_>],
        fetch: Fetch<'_>,
        visit: &mut dyn FnMut(Vec<Cell>) -> ControlFlow<()>,
    ) -> Result<(), Failure> {
        for mut row in self.rows(sql, binds)? {
            // Columns asked for as bytes come as bytes: the model keeps binary values as hex.
            for &index in fetch.byte_columns {
                if let Some(cell) = row.get_mut(index)
                    && let Cell::Text(hex) = cell
                {
                    *cell = Cell::Bytes(decode_hex(hex)?);
                }
            }
            if visit(row).is_break() {
                break;
            }
        }
        Ok(())
    }

    fn execute(&mut self, sql: &str, binds: &[Bind<'_>]) -> Result<u64, Failure> {
        self.run(sql, binds)
    }

    fn commit(&mut self) -> Result<(), Failure> {
        Ok(())
    }
}
