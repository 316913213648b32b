//! [`SimulatorPool`]: the client's [`SessionPool`] over a simulator. Each statement is parsed and
//! evaluated ([`super::statement`], [`super::engine`]) against the views of [`super::views`], in
//! the container the session is in, with what a session carries in Oracle: its container (kept
//! when a pooled session is handed out again under its tag), the logs registered with
//! `DBMS_LOGMNR.ADD_LOGFILE`, its LogMiner session, and its uncommitted flush-table change.
//!
//! Every session runs on one instance, whose redo thread its commits write: a pooled session on
//! instance 1 (the service connects there), one of [`SessionPool::connect_instance`] on the
//! instance its connect string names. So a flush reaches only the instance it was committed on,
//! as in Oracle, where each RAC instance has a log writer of its own.

use std::collections::{BTreeMap, HashMap};
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex, MutexGuard};

use jiff::civil;
use sqlparser::ast::{AssignmentTarget, FromTable, Statement as Sql, TableFactor, TableObject};

use super::datum::Datum;
use super::engine::Evaluator;
use super::scope::{Binds, object_name};
use super::statement::{self, Argument, Statement};
use super::views::{self, ViewContext};
use super::{Database, OraError, Relation};
use crate::simulator::Simulator;
use crate::source::oracle::error::Failure;
use crate::source::oracle::session::{Bind, Cell, Fetch, ROOT_CONTAINER, SessionPool, SqlSession};
use crate::source::{LogMinerRow, MiningWindow, RedoLog, RedoMiner, SourceError};

/// The pool: sessions of one simulated database.
#[derive(Clone, Debug)]
pub struct SimulatorPool {
    shared: Arc<Mutex<Shared>>,
}

#[derive(Debug)]
struct Shared {
    simulator: Simulator,
    /// Where a new session starts: the root of a CDB, or the non-CDB.
    connect_container: String,
    idle: Vec<SessionState>,
    next_session: u32,
    /// The flush table per container: `(owner, name, rows)`.
    flush_tables: BTreeMap<String, (String, String, u64)>,
    /// The session whose LogMiner session is the simulator's (one at a time).
    mining_session: Option<u32>,
    /// Every statement run: `(session, container, text)`.
    issued: Vec<(u32, String, String)>,
    /// Changes made to views on purpose ([`SimulatorPool::alter_view`]).
    alterations: Vec<Alteration>,
    /// Errors the next use of a view or procedure raises ([`SimulatorPool::fail_next`]).
    faults: Vec<(String, OraError)>,
    /// Statements parsed before, by text: Oracle keeps a parsed statement in its shared pool
    /// and runs it again without parsing it (a soft parse), and the client sends the same few
    /// texts window after window.
    parsed: HashMap<String, Arc<Parsed>>,
}

/// The most statements [`Shared::parsed`] keeps; past it the cache starts again empty.
const PARSED_STATEMENTS: usize = 256;

/// A statement as parsed once: its bind placeholders in order, and its tree or the error
/// parsing it raised.
#[derive(Debug)]
struct Parsed {
    placeholders: Result<Vec<String>, OraError>,
    statement: Result<Statement, OraError>,
}

/// A change a test makes to what a view answers: another release's column name, a value in
/// another format.
struct Alteration {
    view: String,
    change: Box<dyn Fn(&mut Relation) + Send>,
}

impl std::fmt::Debug for Alteration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Alteration of {}", self.view)
    }
}

#[derive(Clone, Debug)]
struct SessionState {
    id: u32,
    container: String,
    tag: String,
    /// Logs registered with ADD_LOGFILE, for the next START_LOGMNR.
    registered: Vec<RedoLog>,
    /// An uncommitted change of the flush table (its commit writes redo).
    flush_pending: bool,
    /// The instance the session runs on, which is the number of the redo thread it writes.
    instance: u16,
    /// The session's server process memory (`session pga memory`) and its peak (`session pga
    /// memory max`): see [`SessionState::grow_pga`].
    pga_bytes: u64,
    pga_max_bytes: u64,
}

/// A new server process's PGA: a few MB in a real instance.
const SESSION_PGA_START: u64 = 3 << 20;
/// What a START_LOGMNR adds, and each row LogMiner renders: LogMiner keeps its structures in
/// the session's process, and they are not all given back by END_LOGMNR, which is why a long
/// session grows (the ORA-04030 field problem Debezium's `log.mining.session.max.ms` answers).
/// The figures are a model's, for tests to see growth and a reset, not Oracle's.
const PGA_PER_START: u64 = 256 << 10;
const PGA_PER_ROW: u64 = 512;

impl SessionState {
    /// A new session in `container` on `instance`, with a new server process's memory.
    fn new(id: u32, container: String, instance: u16) -> Self {
        Self {
            id,
            container,
            tag: String::new(),
            registered: Vec::new(),
            flush_pending: false,
            instance,
            pga_bytes: SESSION_PGA_START,
            pga_max_bytes: SESSION_PGA_START,
        }
    }

    fn grow_pga(&mut self, bytes: u64) {
        self.pga_bytes += bytes;
        self.pga_max_bytes = self.pga_max_bytes.max(self.pga_bytes);
    }
}

/// Takes the fault waiting for `name`, if any.
fn take_fault(shared: &mut Shared, name: &str) -> Option<OraError> {
    let index = shared.faults.iter().position(|(n, _)| n == name)?;
    Some(shared.faults.remove(index).1)
}

impl SimulatorPool {
    /// A pool whose sessions connect to the CDB root (or to the non-CDB).
    pub fn new(simulator: Simulator) -> Self {
        let connect_container = match &simulator.catalog.pdb {
            Some(_) => ROOT_CONTAINER.to_owned(),
            None => simulator.catalog.name.clone(),
        };
        Self::connected_to(simulator, connect_container)
    }

    /// A pool whose sessions start in `container` (a service of that PDB).
    pub fn connected_to(simulator: Simulator, container: String) -> Self {
        Self {
            shared: Arc::new(Mutex::new(Shared {
                simulator,
                connect_container: container,
                idle: Vec::new(),
                next_session: 1,
                flush_tables: BTreeMap::new(),
                mining_session: None,
                issued: Vec::new(),
                alterations: Vec::new(),
                faults: Vec::new(),
                parsed: HashMap::new(),
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        match self.shared.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Runs `work` on the simulator (a test applying steps between windows).
    pub fn with_simulator<T>(&self, work: impl FnOnce(&mut Simulator) -> T) -> T {
        work(&mut self.lock().simulator)
    }

    /// From now on, `view` answers as `change` leaves it: for tests of what the client does
    /// with an answer unlike the model's (a renamed column, a value in another format).
    pub fn alter_view(&self, view: &str, change: impl Fn(&mut Relation) + Send + 'static) {
        self.lock().alterations.push(Alteration {
            view: view.to_owned(),
            change: Box::new(change),
        });
    }

    /// The next read of view `name` (`V$LOGMNR_CONTENTS`) or call of procedure `name`
    /// (`DBMS_LOGMNR.START_LOGMNR`) fails with `error` instead: for tests of what the client
    /// does with a fault Oracle raises there (ORA-04030 when a session's memory runs out).
    pub fn fail_next(&self, name: &str, error: OraError) {
        self.lock().faults.push((name.to_owned(), error));
    }

    /// Every statement the sessions ran, in order.
    pub fn issued(&self) -> Vec<String> {
        self.lock()
            .issued
            .iter()
            .map(|(_, _, sql)| sql.clone())
            .collect()
    }
}

// `SessionPool` and `SqlSession` have two more implementations that look much like this one:
// the client's own on ODPI-C (`source/oracle/session.rs`) and the client's unit-test model
// (`source/oracle/fake`). The likeness is the traits' shape and OCI's pool rules (a session
// retagged after its setup is pooled under the tag, one handed out set up goes back as it is,
// any other is closed). They are not merged on purpose: this model must evaluate those rules
// itself (OCISessionRelease: retag, or drop), rather than share the client's bookkeeping it checks.
impl SessionPool for SimulatorPool {
    type Session = SimulatorSession;

    fn get(&self, tag: &str) -> Result<SimulatorSession, Failure> {
        let mut shared = self.lock();
        let found = shared
            .idle
            .iter()
            .position(|s| !tag.is_empty() && s.tag == tag);
        let (state, tag_found) = match found {
            Some(index) => (shared.idle.remove(index), true),
            None => {
                let id = shared.next_session;
                shared.next_session += 1;
                let state = SessionState::new(id, shared.connect_container.clone(), 1);
                (state, false)
            }
        };
        Ok(SimulatorSession {
            pool: self.clone(),
            state,
            tag_found,
            release: if tag_found {
                Release::AsIs
            } else {
                Release::Close
            },
        })
    }

    /// A session on the instance an EZConnect string names (`host:port/service/instance`, Net
    /// Services Administrator's Guide, "Easy Connect"): the instances are those of `GV$INSTANCE`,
    /// instance N named after the database with N appended and running thread N. An instance
    /// that is not open is one the listener does not know (ORA-12521).
    fn connect_instance(&self, connect_string: &str) -> Result<SimulatorSession, Failure> {
        let mut shared = self.lock();
        let wanted = connect_string
            .split('?')
            .next()
            .and_then(|address| address.trim_start_matches("//").split('/').nth(2))
            .ok_or_else(|| {
                failure(&OraError::new(
                    12154,
                    "TNS:could not resolve the connect identifier specified",
                ))
            })?;
        let scn = shared.simulator.catalog.scn;
        let database = shared.simulator.catalog.name.to_lowercase();
        let thread = shared
            .simulator
            .redo
            .thread_views(scn)
            .into_iter()
            .find(|thread| {
                thread.open && wanted.eq_ignore_ascii_case(&format!("{database}{}", thread.thread))
            })
            .map(|thread| thread.thread)
            .ok_or_else(|| {
                failure(&OraError::new(
                    12521,
                    "TNS:listener does not currently know of instance requested in connect \
                     descriptor",
                ))
            })?;
        let id = shared.next_session;
        shared.next_session += 1;
        let state = SessionState::new(id, shared.connect_container.clone(), thread);
        Ok(SimulatorSession {
            pool: self.clone(),
            state,
            tag_found: false,
            release: Release::Close,
        })
    }

    /// The model does not limit its sessions.
    fn set_max_sessions(&self, _max: u32) -> Result<(), Failure> {
        Ok(())
    }
}

#[derive(Debug)]
enum Release {
    AsIs,
    Retag(String),
    Close,
}

/// A session of [`SimulatorPool`].
#[derive(Debug)]
pub struct SimulatorSession {
    pool: SimulatorPool,
    state: SessionState,
    tag_found: bool,
    release: Release,
}

impl Drop for SimulatorSession {
    fn drop(&mut self) {
        let mut shared = self.pool.lock();
        // A closed session ends its LogMiner session and loses its uncommitted change.
        let keep = match std::mem::replace(&mut self.release, Release::Close) {
            Release::AsIs => true,
            Release::Retag(tag) => {
                self.state.tag = tag;
                true
            }
            Release::Close => false,
        };
        if keep {
            shared.idle.push(self.state.clone());
        } else if shared.mining_session == Some(self.state.id) {
            shared.mining_session = None;
            let _ = shared.simulator.end_mining();
        }
    }
}

fn failure(error: &OraError) -> Failure {
    Failure {
        ora: Some(error.code),
        dpi: None,
        message: error.to_string(),
    }
}

impl SqlSession for SimulatorSession {
    fn tag_found(&self) -> bool {
        self.tag_found
    }

    fn retag_on_release(&mut self, tag: String) {
        self.release = Release::Retag(tag);
    }

    fn discard(&mut self) {
        self.release = Release::Close;
    }

    fn query(
        &mut self,
        sql: &str,
        binds: &[Bind<'_>],
        fetch: Fetch<'_>,
        visit: &mut dyn FnMut(Vec<Cell>) -> ControlFlow<()>,
    ) -> Result<(), Failure> {
        let relation = self.run_query(sql, binds).map_err(|e| failure(&e))?;
        for row in relation.rows {
            let cells = row
                .into_iter()
                .enumerate()
                .map(|(index, datum)| match datum {
                    Datum::Null => Cell::Null,
                    Datum::Raw(bytes) if fetch.byte_columns.contains(&index) => Cell::Bytes(bytes),
                    other => other.into_text().map_or(Cell::Null, Cell::Text),
                })
                .collect();
            if visit(cells).is_break() {
                break;
            }
        }
        Ok(())
    }

    fn execute(&mut self, sql: &str, binds: &[Bind<'_>]) -> Result<u64, Failure> {
        self.run_execute(sql, binds).map_err(|e| failure(&e))
    }

    fn commit(&mut self) -> Result<(), Failure> {
        if std::mem::take(&mut self.state.flush_pending) {
            let mut shared = self.pool.lock();
            shared.simulator.flush_redo_on(self.state.instance);
        }
        Ok(())
    }
}

/// The binds of a statement by placeholder: OCI binds by position, in order of appearance;
/// too few values is ORA-01008, too many ORA-01036.
fn bind_values(parsed: &Parsed, binds: &[Bind<'_>]) -> Result<Binds, OraError> {
    let names = parsed.placeholders.as_ref().map_err(Clone::clone)?;
    if binds.len() < names.len() {
        return Err(OraError::new(1008, "not all variables bound"));
    }
    if binds.len() > names.len() {
        return Err(OraError::new(1036, "illegal variable name/number"));
    }
    Ok(names
        .iter()
        .zip(binds)
        .map(|(name, bind)| {
            let value = match bind {
                Bind::Text(text) => Datum::text(*text),
                Bind::Number(number) => Datum::number(*number),
            };
            (name.clone(), value)
        })
        .collect())
}

/// What the views of a session's container are built with.
fn view_context<'a>(
    flush_tables: &'a BTreeMap<String, (String, String, u64)>,
    state: &'a SessionState,
    mined: Option<Vec<Vec<Datum>>>,
) -> ViewContext<'a> {
    let flush = flush_tables.get(&state.container);
    ViewContext {
        container: &state.container,
        flush_table: flush.map(|(owner, name, rows)| (owner.as_str(), name.as_str(), *rows)),
        mined,
        session: (state.id, state.pga_bytes, state.pga_max_bytes),
    }
}

/// The database as one session sees it, for the evaluator.
struct SessionDatabase<'a> {
    shared: &'a mut Shared,
    state: &'a SessionState,
    /// Rows LogMiner rendered for this statement (each read of `V$LOGMNR_CONTENTS` renders
    /// its rows anew, as Oracle reads the logs again for it).
    rendered: u64,
}

impl Database for SessionDatabase<'_> {
    fn relation(
        &mut self,
        owner: Option<&str>,
        name: &str,
        as_of_scn: Option<u64>,
    ) -> Result<Relation, OraError> {
        if owner.is_none_or(|owner| owner == "SYS" || owner == "PUBLIC") && as_of_scn.is_none() {
            if let Some(error) = take_fault(self.shared, name) {
                return Err(error);
            }
            let mined = match name {
                "V$LOGMNR_CONTENTS" => self.mine()?,
                _ => None,
            };
            let context = view_context(&self.shared.flush_tables, self.state, mined);
            match self.shared.simulator.view(name, context) {
                Err(error) if error.code == 942 && owner.is_none() => {}
                Ok(mut relation) => {
                    for alteration in &self.shared.alterations {
                        if alteration.view == name {
                            (alteration.change)(&mut relation);
                        }
                    }
                    return Ok(relation);
                }
                other => return other,
            }
        }
        let owner = owner.map_or_else(|| self.user(), str::to_owned);
        if let Some(scn) = as_of_scn {
            let context = view_context(&self.shared.flush_tables, self.state, None);
            return self.shared.simulator.flashback(&owner, name, scn, &context);
        }
        if self.shared.simulator.live_table(&owner, name).is_some() {
            // A read without AS OF sees the committed rows as of now (its statement's SCN).
            let context = view_context(&self.shared.flush_tables, self.state, None);
            let scn = self.shared.simulator.catalog.scn;
            return self.shared.simulator.flashback(&owner, name, scn, &context);
        }
        Err(OraError::new(942, "table or view does not exist"))
    }

    fn user(&self) -> String {
        self.shared.simulator.catalog.capture_user.to_string()
    }

    fn now(&self) -> jiff::Zoned {
        self.shared.simulator.catalog.host_now()
    }

    fn dbtimezone(&self) -> String {
        self.shared.simulator.catalog.dbtimezone.clone()
    }

    fn sys_context(&self, parameter: &str) -> Result<Datum, OraError> {
        let catalog = &self.shared.simulator.catalog;
        Ok(match parameter {
            "CON_NAME" => Datum::text(self.state.container.clone()),
            "CON_ID" => Datum::text(match &catalog.pdb {
                Some(pdb) if **pdb == *self.state.container => catalog.con_id.to_string(),
                Some(_) => "1".to_owned(),
                None => "0".to_owned(),
            }),
            "DB_NAME" => Datum::text(catalog.name.clone()),
            "SESSION_USER" | "CURRENT_USER" | "CURRENT_SCHEMA" => {
                Datum::text(catalog.capture_user.to_string())
            }
            _ => return Err(OraError::new(2003, "invalid USERENV parameter")),
        })
    }

    fn scn_to_timestamp(&self, scn: u64) -> Result<civil::DateTime, OraError> {
        self.shared.simulator.catalog.time_of(scn).ok_or_else(|| {
            OraError::new(8181, "specified number is not a valid system change number")
        })
    }
}

impl SessionDatabase<'_> {
    /// The rows of this session's LogMiner session as `V$LOGMNR_CONTENTS` rows, read when the
    /// query runs.
    fn mine(&mut self) -> Result<Option<Vec<Vec<Datum>>>, OraError> {
        if self.shared.mining_session != Some(self.state.id) {
            return Ok(None);
        }
        let mut rows = Vec::new();
        self.shared
            .simulator
            .stream_rows(&mut |row: LogMinerRow| {
                rows.push(views::contents_row(row));
                ControlFlow::Continue(())
            })
            .map_err(|error| OraError::of(&error))?;
        self.rendered += rows.len() as u64;
        Ok(Some(rows))
    }
}

impl SimulatorSession {
    fn record(&self, shared: &mut Shared, sql: &str) {
        shared
            .issued
            .push((self.state.id, self.state.container.clone(), sql.to_owned()));
    }

    /// The statement `sql` parsed, from the cache when it was parsed before.
    fn parsed(shared: &mut Shared, sql: &str) -> Arc<Parsed> {
        if let Some(parsed) = shared.parsed.get(sql) {
            return Arc::clone(parsed);
        }
        let parsed = Arc::new(Parsed {
            placeholders: statement::placeholders(sql),
            statement: statement::parse(sql),
        });
        if shared.parsed.len() >= PARSED_STATEMENTS {
            shared.parsed.clear();
        }
        shared.parsed.insert(sql.to_owned(), Arc::clone(&parsed));
        parsed
    }

    fn run_query(&mut self, sql: &str, binds: &[Bind<'_>]) -> Result<Relation, OraError> {
        let pool = self.pool.clone();
        let mut shared = pool.lock();
        self.record(&mut shared, sql);
        let parsed = Self::parsed(&mut shared, sql);
        let binds = bind_values(&parsed, binds)?;
        let Statement::Query { query, as_of_scn } =
            parsed.statement.as_ref().map_err(Clone::clone)?
        else {
            return Err(OraError::new(
                24374,
                "define not done before fetch or execute and fetch",
            ));
        };
        let mut database = SessionDatabase {
            shared: &mut shared,
            state: &self.state,
            rendered: 0,
        };
        let as_of_scn = match as_of_scn.as_deref() {
            Some(sqlparser::ast::Expr::Value(value)) => match &value.value {
                sqlparser::ast::Value::Placeholder(name) => {
                    binds.get(name).map(Datum::to_u64).transpose()?.flatten()
                }
                sqlparser::ast::Value::Number(text, _) => text.parse().ok(),
                _ => None,
            },
            _ => None,
        };
        let result = Evaluator {
            database: &mut database,
            binds: &binds,
            as_of_scn,
        }
        .query(query);
        let rendered = database.rendered;
        self.state.grow_pga(rendered * PGA_PER_ROW);
        result
    }

    fn run_execute(&mut self, sql: &str, binds: &[Bind<'_>]) -> Result<u64, OraError> {
        let pool = self.pool.clone();
        let mut shared = pool.lock();
        self.record(&mut shared, sql);
        let parsed = Self::parsed(&mut shared, sql);
        let values = bind_values(&parsed, binds)?;
        match parsed.statement.as_ref().map_err(Clone::clone)? {
            Statement::Query { .. } => Err(OraError::invalid_sql("a query run as a statement")),
            Statement::AlterSession { parameter, value } => self
                .alter_session(&mut shared, parameter, value.clone())
                .map(|()| 0),
            Statement::Call { procedure, args } => {
                self.call(&mut shared, procedure, args, &values).map(|()| 0)
            }
            Statement::Sql(statement) => self.dml(&mut shared, sql, statement, &values),
        }
    }

    fn alter_session(
        &mut self,
        shared: &mut Shared,
        parameter: &str,
        value: String,
    ) -> Result<(), OraError> {
        match parameter {
            "CONTAINER" => {
                let catalog = &shared.simulator.catalog;
                let Some(pdb) = catalog.pdb.as_deref() else {
                    return Err(OraError::new(
                        65090,
                        "operation only allowed in a container database",
                    ));
                };
                if !catalog.privileges.contains("SET CONTAINER") {
                    return Err(OraError::new(1031, "insufficient privileges"));
                }
                if value != ROOT_CONTAINER && value != pdb {
                    return Err(OraError::new(
                        65011,
                        &format!("Pluggable database {value} does not exist."),
                    ));
                }
                self.state.container = value;
                Ok(())
            }
            // The values are not modelled: every statement's text fixes its own formats
            // (`TO_CHAR` with a format model), so only the parameter's name is checked.
            p if p.starts_with("NLS_") || p == "TIME_ZONE" || p == "CURRENT_SCHEMA" => Ok(()),
            _ => Err(OraError::new(2248, "invalid option for ALTER SESSION")),
        }
    }

    /// The DBMS_LOGMNR procedures the client calls (Database PL/SQL Packages and Types
    /// Reference, DBMS_LOGMNR).
    fn call(
        &mut self,
        shared: &mut Shared,
        procedure: &str,
        args: &[(String, Argument)],
        binds: &Binds,
    ) -> Result<(), OraError> {
        let argument = |name: &str| -> Result<Option<Datum>, OraError> {
            match args.iter().find(|(n, _)| n == name).map(|(_, value)| value) {
                None => Ok(None),
                Some(Argument::Bind(bind)) => binds
                    .get(bind)
                    .cloned()
                    .map(Some)
                    .ok_or_else(|| OraError::new(1008, "not all variables bound")),
                Some(Argument::Number(text)) => {
                    Ok(super::datum::Number::parse(text).map(Datum::Number))
                }
                Some(Argument::Text(text)) => Ok(Some(Datum::text(text.clone()))),
                Some(Argument::Constant(name)) => Ok(Some(Datum::text(name.clone()))),
            }
        };
        let unknown_argument = args.iter().find(|(name, _)| {
            !matches!(
                name.as_str(),
                "LOGFILENAME" | "OPTIONS" | "STARTSCN" | "ENDSCN"
            )
        });
        if let Some((name, _)) = unknown_argument {
            return Err(OraError::new(
                6550,
                &format!(
                    "PLS-00306: wrong number or types of arguments in call to {procedure}: {name}"
                ),
            ));
        }
        if let Some(error) = take_fault(shared, procedure.trim_start_matches("SYS.")) {
            return Err(error);
        }
        let options = argument("OPTIONS")?.and_then(|v| v.to_text());
        let version_major: u32 = (shared.simulator.catalog.version.split('.').next())
            .and_then(|major| major.parse().ok())
            .unwrap_or(0);
        let in_pdb =
            shared.simulator.catalog.pdb.is_some() && self.state.container != ROOT_CONTAINER;
        match procedure {
            "SYS.DBMS_LOGMNR.ADD_LOGFILE" | "DBMS_LOGMNR.ADD_LOGFILE" => {
                if in_pdb {
                    return Err(OraError::new(
                        65040,
                        "operation not allowed from within a pluggable database",
                    ));
                }
                let name = argument("LOGFILENAME")?
                    .and_then(|v| v.to_text())
                    .ok_or_else(|| OraError::new(6550, "PLS-00306: LOGFILENAME is required"))?;
                match options.as_deref() {
                    // NEW ends the current LogMiner session, then starts a new log list
                    // (DBMS_LOGMNR, "Constants for ADD_LOGFILE Options Flag").
                    Some("SYS.DBMS_LOGMNR.NEW" | "DBMS_LOGMNR.NEW") => {
                        self.state.registered.clear();
                        if shared.mining_session == Some(self.state.id) {
                            shared.mining_session = None;
                            shared
                                .simulator
                                .end_mining()
                                .map_err(|e| OraError::of(&e))?;
                        }
                    }
                    Some("SYS.DBMS_LOGMNR.ADDFILE" | "DBMS_LOGMNR.ADDFILE") | None => {}
                    Some(other) => {
                        return Err(OraError::new(
                            6550,
                            &format!("PLS-00302: component {other} must be declared"),
                        ));
                    }
                }
                if self.state.registered.iter().any(|log| log.name == name) {
                    return Err(OraError::new(
                        1289,
                        &format!("cannot add duplicate logfile {name}"),
                    ));
                }
                let listed = shared
                    .simulator
                    .redo_logs(0)
                    .map_err(|e| OraError::of(&e))?;
                let log = listed
                    .into_iter()
                    .find(|log| log.name == name)
                    .ok_or_else(|| OraError::new(1284, &format!("file {name} cannot be opened")))?;
                self.state.registered.push(log);
                Ok(())
            }
            "SYS.DBMS_LOGMNR.START_LOGMNR" | "DBMS_LOGMNR.START_LOGMNR" => {
                if in_pdb && version_major < 21 {
                    return Err(OraError::new(
                        65040,
                        "operation not allowed from within a pluggable database",
                    ));
                }
                match options.as_deref() {
                    Some(
                        "SYS.DBMS_LOGMNR.DICT_FROM_ONLINE_CATALOG"
                        | "DBMS_LOGMNR.DICT_FROM_ONLINE_CATALOG",
                    ) => {}
                    other => {
                        return Err(OraError::invalid_sql(&format!(
                            "START_LOGMNR with OPTIONS {}",
                            other.unwrap_or("(none)")
                        )));
                    }
                }
                let scn = |name: &str| -> Result<u64, OraError> {
                    argument(name)?
                        .map(|v| v.to_u64())
                        .transpose()?
                        .flatten()
                        .ok_or_else(|| {
                            OraError::invalid_sql(&format!("START_LOGMNR without {name}"))
                        })
                };
                let (start_scn, end_scn) = (scn("STARTSCN")?, scn("ENDSCN")?);
                if !in_pdb && self.state.registered.is_empty() {
                    return Err(OraError::new(
                        1292,
                        "no log file has been specified for the current LogMiner session",
                    ));
                }
                // LogMiner shows every table's rows; the client's query chooses. Inside a PDB
                // (21c+) it shows that PDB's redo only. Every object number too: the rows of a
                // table renamed or dropped since, named as they were written (its DDL rows) or
                // as it is named now, are shown all the same.
                let tables = shared
                    .simulator
                    .tables
                    .iter()
                    .map(|t| (t.owner.to_string(), t.name.to_string()))
                    .collect();
                let objects = (shared.simulator.tables.iter())
                    .map(|t| u64::from(t.object_id))
                    .collect();
                let window = MiningWindow {
                    start_scn,
                    end_scn,
                    logs: if in_pdb {
                        Vec::new()
                    } else {
                        self.state.registered.clone()
                    },
                    objects,
                    tables,
                    pdb: in_pdb.then(|| self.state.container.clone()),
                    with_sql_undo: true,
                };
                shared
                    .simulator
                    .start_mining(&window)
                    .map_err(|e| OraError::of(&e))?;
                shared.mining_session = Some(self.state.id);
                self.state.grow_pga(PGA_PER_START);
                Ok(())
            }
            "SYS.DBMS_LOGMNR.END_LOGMNR" | "DBMS_LOGMNR.END_LOGMNR" => {
                if shared.mining_session != Some(self.state.id) {
                    return Err(OraError::new(
                        1307,
                        "no LogMiner session is currently active",
                    ));
                }
                shared.mining_session = None;
                self.state.registered.clear();
                shared.simulator.end_mining().map_err(|e| OraError::of(&e))
            }
            _ => Err(OraError::new(
                6550,
                &format!("PLS-00201: identifier '{procedure}' must be declared"),
            )),
        }
    }

    /// DML and DDL: the flush table's statements are evaluated here; any other change is the
    /// heartbeat action query, which the simulator runs as a transaction of its own.
    fn dml(
        &mut self,
        shared: &mut Shared,
        sql: &str,
        statement: &Sql,
        binds: &Binds,
    ) -> Result<u64, OraError> {
        let capture_user = shared.simulator.catalog.capture_user.to_string();
        let qualify = |name: &sqlparser::ast::ObjectName| -> Result<(String, String), OraError> {
            let (owner, table) = object_name(name)?;
            Ok((owner.unwrap_or_else(|| capture_user.clone()), table))
        };
        let container = self.state.container.clone();
        let flush = shared.flush_tables.get(&container).cloned();
        let is_flush = |target: &(String, String)| {
            flush
                .as_ref()
                .is_some_and(|(owner, name, _)| *owner == target.0 && *name == target.1)
        };
        match statement {
            Sql::CreateTable(create) => {
                let target = qualify(&create.name)?;
                if !shared.simulator.catalog.privileges.contains("CREATE TABLE") {
                    return Err(OraError::new(1031, "insufficient privileges"));
                }
                if flush.is_some() || shared.simulator.live_table(&target.0, &target.1).is_some() {
                    return Err(OraError::new(
                        955,
                        "name is already used by an existing object",
                    ));
                }
                shared
                    .flush_tables
                    .insert(container, (target.0, target.1, 0));
                Ok(0)
            }
            Sql::Update(update) => {
                let TableFactor::Table { name, .. } = &update.table.relation else {
                    return Err(OraError::invalid_sql("this UPDATE target"));
                };
                let target = qualify(name)?;
                if !is_flush(&target) {
                    return self.action(shared, sql, &target);
                }
                // The new value is evaluated, so a wrong column or view in it fails as in Oracle.
                for assignment in &update.assignments {
                    let AssignmentTarget::ColumnName(column) = &assignment.target else {
                        return Err(OraError::invalid_sql("a tuple assignment"));
                    };
                    let column = object_name(column)?.1;
                    if column != "LAST_SCN" {
                        return Err(OraError::invalid_identifier(&column));
                    }
                    let mut database = SessionDatabase {
                        shared,
                        state: &self.state,
                        rendered: 0,
                    };
                    let mut evaluator = Evaluator {
                        database: &mut database,
                        binds,
                        as_of_scn: None,
                    };
                    evaluator.scalar(&assignment.value)?;
                }
                let rows = flush.map_or(0, |(_, _, rows)| rows);
                self.state.flush_pending |= rows > 0;
                Ok(rows)
            }
            Sql::Insert(insert) => {
                let TableObject::TableName(name) = &insert.table else {
                    return Err(OraError::invalid_sql("this INSERT target"));
                };
                let target = qualify(name)?;
                if !is_flush(&target) {
                    return self.action(shared, sql, &target);
                }
                if let Some(entry) = shared.flush_tables.get_mut(&container) {
                    entry.2 += 1;
                }
                self.state.flush_pending = true;
                Ok(1)
            }
            Sql::Delete(delete) => {
                let tables = match &delete.from {
                    FromTable::WithFromKeyword(tables) | FromTable::WithoutKeyword(tables) => {
                        tables
                    }
                };
                let Some(TableFactor::Table { name, .. }) = tables.first().map(|t| &t.relation)
                else {
                    return Err(OraError::invalid_sql("this DELETE target"));
                };
                let target = qualify(name)?;
                if !is_flush(&target) {
                    return self.action(shared, sql, &target);
                }
                let rows = flush.map_or(0, |(_, _, rows)| rows);
                if let Some(entry) = shared.flush_tables.get_mut(&container) {
                    entry.2 = 0;
                }
                self.state.flush_pending |= rows > 0;
                Ok(rows)
            }
            _ => Err(OraError::invalid_sql("this statement")),
        }
    }

    /// The heartbeat action query, run by the simulator as a transaction of its own on one of
    /// its tables; any other table does not exist (ORA-00942), as the flush table before the
    /// client creates it.
    fn action(
        &mut self,
        shared: &mut Shared,
        sql: &str,
        target: &(String, String),
    ) -> Result<u64, OraError> {
        if shared.simulator.live_table(&target.0, &target.1).is_none() {
            return Err(OraError::new(942, "table or view does not exist"));
        }
        match shared.simulator.heartbeat_action(sql) {
            Ok(()) => Ok(1),
            Err(SourceError::ActionQueryRefused { message }) => Err(OraError::new(900, &message)),
            Err(other) => Err(OraError::of(&other)),
        }
    }
}
