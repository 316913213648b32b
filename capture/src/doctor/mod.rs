//! `doctor`: the prerequisite check, through the same boundary the capture mines with.
//!
//! Each check asks the database one question and answers with a [`Check`]: a name, whether it
//! passed, what was found, and for a failure the exact statement that fixes it. A failing boundary
//! call is a failed check carrying the error, not an abort, so one run reports everything that is
//! wrong. The report renders as a table for people, as JSON (`--json`), and as the termination
//! message CDC-1002 with `details.checks`.
//!
//! What is checked (seed 001, "Database prerequisites"):
//! - with `spec.database.walletSecret`, before connecting: that the Oracle client reads its
//!   configuration and wallet from the mounted Secret ([`crate::source::oracle::net_config`]);
//! - the database answers (client library, credentials, network) and its release;
//! - ARCHIVELOG mode; minimal supplemental logging at the database;
//! - per captured table (named in `spec.tables` or selected by the filter lists): visible, and
//!   its changes carry its key ([`key_logging_check`], the check the capture also makes at
//!   start; a table that logs no key columns is rejected);
//! - the capture user's privileges and roles;
//! - the views the capture reads: `V$LOG`/`V$ARCHIVED_LOG`, `GV$TRANSACTION`, `V$PDB_INCARNATION`
//!   (when a PDB is named);
//! - the flush table can be written (created when missing), and on RAC from every instance;
//! - the first-contact probe ([`probe`]): every other read the capture makes, recent redo
//!   included, answered and mapped by the capture's own code.
//!
//! Beside the checks, the report shows the stored position and its lag ([`StoredPosition`]).

mod position;
mod probe;
mod report;

use std::collections::BTreeSet;
use std::sync::Arc;

pub use position::StoredPosition;
pub use report::{Check, Report};

use crate::dictionary::TableSchema;
use crate::filter::{Filters, TableSelection, unsupported};
use crate::source::grant::{grant_statements, sql_name};
use crate::source::key_logging;
use crate::source::oracle::net_config::{NetConfig, NetConfigError};
use crate::source::oracle::sql;
use crate::source::{
    CatalogTable, DatabaseCatalog, DatabaseInfo, FlashbackReader, LogMode, MinimalLogging,
    RedoMiner, SessionPrivileges, SourceError, SupplementalLogging,
};

/// The name of the wallet check.
const WALLET_CHECK: &str = "wallet";

/// What doctor needs to know besides the database.
#[derive(Clone, Debug)]
pub struct DoctorRequest {
    /// The capture user (for GRANT statements).
    pub user: String,
    /// The tables `spec.tables` names, as `(owner, table)`; the tables the filter lists select
    /// are added to them from the catalog.
    pub tables: Vec<(String, String)>,
    /// `mining.flushTable`: the capture's own table, which the filter lists never select.
    pub flush_table: String,
    /// The PDB whose incarnation is checked, when mining from CDB$ROOT for a PDB.
    pub pdb: Option<String>,
    /// Whether snapshots will run (FLASHBACK is then needed).
    pub snapshots: bool,
    /// `mining.readOnly`: the flush table is not written, so it is not checked.
    pub read_only: bool,
    /// The compiled column lists: a column of a type the capture cannot decode must be
    /// excluded, as the start check requires.
    pub filters: Filters,
}

/// System privileges the capture needs (seed 001): sessions, the flush table, LogMiner and
/// reading other sessions' transactions.
const PRIVILEGES: [&str; 4] = [
    "CREATE SESSION",
    "CREATE TABLE",
    "LOGMINING",
    "SELECT ANY TRANSACTION",
];
/// Roles: the V$ views and DBMS_LOGMNR.
const ROLES: [&str; 2] = ["SELECT_CATALOG_ROLE", "EXECUTE_CATALOG_ROLE"];
/// What EXECUTE_CATALOG_ROLE is needed for, which a DBA may grant alone.
const EXECUTE_LOGMNR: &str = "EXECUTE ON SYS.DBMS_LOGMNR";

impl DoctorRequest {
    /// `GRANT <what> TO <user>;` for each, with `CONTAINER=ALL` when a PDB is named: the capture
    /// user is then a common user (`C##...`) working in the root and in the PDB, and a grant
    /// made in the root alone does not reach the PDB.
    fn grants(&self, what: &[&str]) -> String {
        grant_statements(what, &self.user, self.pdb.is_some())
    }

    /// The grants the client names for its call `call` ([`sql::grants_for`]).
    fn grants_for_calls(&self, calls: &[&str]) -> String {
        let what: Vec<&str> = (calls.iter())
            .flat_map(|call| sql::grants_for(call).unwrap_or_default().iter().copied())
            .collect();
        self.grants(&what)
    }

    /// For statements about the PDB's own objects, which run in the PDB: the container switch
    /// that goes before them, or nothing outside a CDB.
    fn in_pdb(&self) -> String {
        self.pdb
            .as_deref()
            .map(|pdb| format!("ALTER SESSION SET CONTAINER = {}; ", sql_name(pdb)))
            .unwrap_or_default()
    }
}

/// Runs every check.
pub fn run<S: DatabaseCatalog + RedoMiner + FlashbackReader>(
    source: &mut S,
    request: &DoctorRequest,
) -> Report {
    let database = match source.database() {
        Ok(database) => database,
        Err(error) => return connection_failed(&error),
    };
    let mut checks = vec![
        connection_check(&database),
        archivelog_check(&database),
        supplemental_logging_check(&database),
    ];
    let (request, listing_check) = with_captured_tables(source, request);
    let request = &request;
    checks.extend(listing_check);
    let (table_checks, schemas) = table_checks(source, request, &database.supplemental);
    checks.extend(table_checks);
    checks.push(storage_check(source, request));
    let granted = source.privileges();
    checks.extend(privilege_checks(&granted, request));
    // Snapshots read in chunks planned from the table's extents (DBA_EXTENTS, DBA_OBJECTS):
    // tried on the first table, as every table's plan is the same statement.
    if request.snapshots
        && let Some(schema) = schemas.first()
    {
        checks.push(extents_check(source, request, schema));
    }
    checks.push(redo_logs_check(source, request, database.current_scn));
    checks.push(open_transactions_check(source, request));
    if let Some(pdb) = &request.pdb {
        checks.push(pdb_incarnation_check(source, request, pdb));
    }
    checks.extend(probe::checks(source, request, &database));
    let tablespace = granted.ok().and_then(|g| g.default_tablespace);
    checks.extend(flush_checks(source, request, tablespace));
    Report {
        checks,
        position: None,
    }
}

fn connection_check(database: &DatabaseInfo) -> Check {
    let container = if database.cdb {
        ", a container database"
    } else {
        ""
    };
    Check::pass(
        "connection",
        format!(
            "connected to {} (DBID {}), Oracle {}{container}",
            database.name, database.dbid, database.version,
        ),
    )
}

fn archivelog_check(database: &DatabaseInfo) -> Check {
    match database.log_mode {
        LogMode::Archivelog => Check::pass("archivelog", "the database is in ARCHIVELOG mode"),
        _ => Check::fail(
            "archivelog",
            "the database is not in ARCHIVELOG mode: redo is overwritten before it can be mined",
            "SHUTDOWN IMMEDIATE; STARTUP MOUNT; ALTER DATABASE ARCHIVELOG; ALTER DATABASE OPEN;",
        ),
    }
}

fn supplemental_logging_check(database: &DatabaseInfo) -> Check {
    match database.supplemental.min {
        MinimalLogging::Yes | MinimalLogging::Implicit => Check::pass(
            "supplemental logging",
            "minimal supplemental logging is on at the database",
        ),
        MinimalLogging::No => Check::fail(
            "supplemental logging",
            "minimal supplemental logging is off: LogMiner cannot render changes completely",
            "ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;",
        ),
    }
}

/// The request with every table the capture would capture: those named and those the filter
/// lists select; when the catalog cannot list them, the request as it is and the failed check.
fn with_captured_tables<S: DatabaseCatalog>(
    source: &mut S,
    request: &DoctorRequest,
) -> (DoctorRequest, Option<Check>) {
    let filters = Arc::new(request.filters.clone());
    let selection = TableSelection::new(&[], &filters, &request.flush_table);
    match selection.captured(|| source.list_tables(), request.tables.clone()) {
        Ok(tables) => {
            let request = DoctorRequest {
                tables,
                ..request.clone()
            };
            (request, None)
        }
        Err(error) => {
            let check = Check::fail(
                "table list",
                error_text(&error),
                request.grants(&["SELECT_CATALOG_ROLE"]),
            );
            (request.clone(), Some(check))
        }
    }
}

/// Each captured table's checks, and the dictionaries that could be read.
fn table_checks<S: DatabaseCatalog>(
    source: &mut S,
    request: &DoctorRequest,
    database: &SupplementalLogging,
) -> (Vec<Check>, Vec<Arc<TableSchema>>) {
    let mut checks = Vec::new();
    let mut schemas = Vec::new();
    for (owner, table) in &request.tables {
        let (check, schema) = table_check(source, request, owner, table, database);
        checks.push(check);
        checks.extend(
            (schema.as_ref()).and_then(|schema| column_type_check(schema, &request.filters)),
        );
        schemas.extend(schema);
    }
    (checks, schemas)
}

fn extents_check<S: FlashbackReader>(
    source: &mut S,
    request: &DoctorRequest,
    schema: &TableSchema,
) -> Check {
    const NAME: &str = "table extents visible";
    // Chunks never span two segments: planned without a row limit, there is one chunk per
    // segment that has extents, a few statements however large the table.
    match source.table_chunks(schema, u64::MAX) {
        Ok(chunks) => Check::pass(
            NAME,
            format!(
                "DBA_EXTENTS and DBA_OBJECTS show the extents of {} ({} segment(s))",
                schema.qualified_name(),
                chunks.len()
            ),
        ),
        Err(error) => Check::fail(
            NAME,
            error_text(&error),
            probe::fix_for(&error, request.grants_for_calls(&["read table extents"])),
        ),
    }
}

fn redo_logs_check<S: RedoMiner>(
    source: &mut S,
    request: &DoctorRequest,
    current_scn: u64,
) -> Check {
    const NAME: &str = "redo logs visible";
    let fix = || request.grants_for_calls(&["list redo logs", "read V$THREAD"]);
    match source.redo_logs(current_scn) {
        Ok(logs) if !logs.is_empty() => Check::pass(
            NAME,
            format!("V$LOG and V$ARCHIVED_LOG list {} log(s)", logs.len()),
        ),
        Ok(_) => Check::fail(NAME, "V$LOG lists no log reaching the current SCN", fix()),
        Err(error) => Check::fail(NAME, error_text(&error), probe::fix_for(&error, fix())),
    }
}

fn open_transactions_check<S: DatabaseCatalog>(source: &mut S, request: &DoctorRequest) -> Check {
    const NAME: &str = "open transactions visible";
    match source.open_transactions() {
        Ok(open) => Check::pass(
            NAME,
            format!("GV$TRANSACTION lists {} open transaction(s)", open.len()),
        ),
        Err(error) => Check::fail(
            NAME,
            error_text(&error),
            probe::fix_for(
                &error,
                request.grants_for_calls(&["read open transactions"]),
            ),
        ),
    }
}

fn pdb_incarnation_check<S: DatabaseCatalog>(
    source: &mut S,
    request: &DoctorRequest,
    pdb: &str,
) -> Check {
    const NAME: &str = "PDB incarnation visible";
    match source.pdb_incarnation(pdb) {
        Ok(Some(incarnation)) => Check::pass(
            NAME,
            format!(
                "PDB {pdb} is in incarnation {} since SCN {}",
                incarnation.pdb_incarnation, incarnation.incarnation_scn
            ),
        ),
        Ok(None) => Check::fail(
            NAME,
            format!("V$PDB_INCARNATION has no current incarnation of PDB {pdb}: check the name"),
            "SELECT NAME FROM V$CONTAINERS;".to_owned(),
        ),
        // Seed 001: a user who cannot read it skips the check, with a warning.
        Err(error) if error.is_not_granted() => Check::pass(
            NAME,
            format!(
                "not readable ({}): the capture runs without checking its bookmark against the \
                 PDB's incarnation; {} checks it",
                error_text(&error),
                request.grants(&["SELECT ON V_$PDB_INCARNATION"])
            ),
        ),
        Err(error) => Check::fail(
            NAME,
            error_text(&error),
            request.grants(&["SELECT ON V_$PDB_INCARNATION"]),
        ),
    }
}

/// The flush table, written and committed, and on RAC reaching every instance, or a quiet one
/// holds capture back; not used at all under `mining.readOnly`. `tablespace`: the capture
/// user's default one, for the fix.
fn flush_checks<S: RedoMiner>(
    source: &mut S,
    request: &DoctorRequest,
    tablespace: Option<String>,
) -> Vec<Check> {
    const NAME: &str = "flush table";
    if request.read_only {
        return vec![Check::pass(
            NAME,
            "not used (mining.readOnly): windows see the redo the log writer has written",
        )];
    }
    let mut checks = vec![match source.flush_redo() {
        Ok(()) => Check::pass(NAME, "the flush table is written and committed"),
        Err(error) => Check::fail(
            NAME,
            error_text(&error),
            flush_table_fix(request, tablespace),
        ),
    }];
    if let Some(shortfall) = source.flush_shortfall() {
        checks.push(Check::fail(
            "RAC flush",
            format!(
                "{}: the flush reaches one instance only, so a quiet instance holds capture back \
                 until it writes redo",
                shortfall.problem
            ),
            shortfall.fix,
        ));
    }
    checks
}

/// The character sets and database time zone: informative, since they matter only for rows
/// LogMiner writes by object number after an ALTER TABLE (`OBJ# n`, values as internal bytes).
fn storage_check<S: DatabaseCatalog>(source: &mut S, request: &DoctorRequest) -> Check {
    const NAME: &str = "character sets";
    match source.storage_settings() {
        Ok(settings) => {
            let shown = format!(
                "NLS_CHARACTERSET {}, NLS_NCHAR_CHARACTERSET {}, DBTIMEZONE {}",
                settings.character_set,
                settings.national_character_set,
                settings.database_time_zone
            );
            match settings.formats() {
                Ok(_) => Check::pass(NAME, shown),
                // Not a failure: most captures never meet such a row.
                Err(error) => Check::pass(
                    NAME,
                    format!(
                        "{shown}; {error}: a row LogMiner can write only by object number \
                         (after an ALTER TABLE while the capture lags) would stop the capture"
                    ),
                ),
            }
        }
        Err(error) => Check::fail(
            NAME,
            error_text(&error),
            probe::fix_for(
                &error,
                request.grants(&["SELECT ON SYS.NLS_DATABASE_PARAMETERS"]),
            ),
        ),
    }
}

/// What lets the capture user create and fill the flush table: CREATE TABLE and a quota on its
/// default tablespace (`USERS` when it could not be read), in the PDB when one is named.
fn flush_table_fix(request: &DoctorRequest, tablespace: Option<String>) -> String {
    format!(
        "{} {}ALTER USER {} QUOTA 1M ON {};",
        request.grants(&["CREATE TABLE"]),
        request.in_pdb(),
        sql_name(&request.user),
        tablespace.map_or_else(|| "USERS".to_owned(), |tablespace| sql_name(&tablespace))
    )
}

/// Whether a failed connect is answered with a report ([`connection_failed`]) rather than
/// ending doctor with the error: a database not reached or a PDB not open (transient), and a
/// connection the capture could never mine on (a PDB service before 21c), which doctor names
/// with its fix before the capture starts and stops on it.
pub fn reported_at_connect(error: &SourceError) -> bool {
    error.is_transient() || matches!(error, SourceError::MiningInPdbUnsupported { .. })
}

/// The report when the database cannot be reached or the connection cannot be set up (the PDB
/// not open, say): the one failed check, with what fixes it.
pub fn connection_failed(error: &SourceError) -> Report {
    Report {
        checks: vec![Check::fail(
            "connection",
            error_text(error),
            connection_fix(error),
        )],
        position: None,
    }
}

/// The check of the Oracle client's configuration directory when a wallet is mounted: what the
/// client will read there ([`NetConfig`]'s text names the files and the wallet).
pub fn wallet_used(net: &NetConfig) -> Check {
    Check::pass(WALLET_CHECK, net.to_string())
}

/// The report when the client would not use the mounted wallet (the capture stops with CDC-1001
/// for the same reason): the one failed check, naming the file and what to change. Nothing is
/// asked of the database, which would be reached without the TLS settings intended, if at all.
pub fn wallet_failed(error: &NetConfigError) -> Report {
    Report {
        checks: vec![Check::fail(WALLET_CHECK, error.to_string(), error.fix())],
        position: None,
    }
}

/// The same finding as the capture's start check (CDC-1001): the table's selected columns of a
/// type the capture cannot decode, with the exclusions to add. `None` when there are none.
fn column_type_check(table: &TableSchema, filters: &Filters) -> Option<Check> {
    let columns = unsupported::unsupported_columns(table, filters);
    if columns.is_empty() {
        return None;
    }
    let named = unsupported::named(&columns);
    Some(Check::fail(
        format!("column types of {}", table.qualified_name()),
        format!(
            "the capture cannot decode the type of {}: it would stop with CDC-1001 at start",
            named.join(", ")
        ),
        unsupported::fix(&columns),
    ))
}

/// The table's logging check, and its dictionary when it could be read.
fn table_check<S: DatabaseCatalog>(
    source: &mut S,
    request: &DoctorRequest,
    owner: &str,
    table: &str,
    database: &SupplementalLogging,
) -> (Check, Option<Arc<TableSchema>>) {
    let name = format!("table {owner}.{table}");
    let qualified = format!("{}.{}", sql_name(owner), sql_name(table));
    let all_columns = format!("ALTER TABLE {qualified} ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;");
    let catalog = match source.table(owner, table) {
        Ok(catalog) => catalog,
        Err(error @ SourceError::NoSuchTable { .. }) => {
            return (
                Check::fail(
                    name,
                    error_text(&error),
                    format!(
                        "{}GRANT SELECT ON {qualified} TO {};",
                        request.in_pdb(),
                        sql_name(&request.user)
                    ),
                ),
                None,
            );
        }
        Err(error) => return (Check::fail(name, error_text(&error), all_columns), None),
    };
    (
        key_logging_check(&catalog, database, &request.filters),
        Some(catalog.schema),
    )
}

/// Whether the table's supplemental logging puts its key in every change
/// ([`key_logging::judge`]), as a check: doctor's for each captured table, and the capture's
/// at start and for each table the listing adds, which stops with CDC-1002 on a failure.
pub fn key_logging_check(
    table: &CatalogTable,
    database: &SupplementalLogging,
    filters: &Filters,
) -> Check {
    let name = format!("table {}", table.schema.qualified_name());
    let configured = filters.key_columns(table.schema.schema(), table.schema.table());
    match key_logging::judge(table, database, configured) {
        Ok(logged) => Check::pass(name, logged.describe()),
        Err(rejected) => Check::fail(name, rejected.message, rejected.fix),
    }
}

fn privilege_checks(
    granted: &Result<SessionPrivileges, SourceError>,
    request: &DoctorRequest,
) -> Vec<Check> {
    let granted = match granted {
        Ok(granted) => granted,
        Err(error) => {
            return vec![Check::fail(
                "privileges",
                error_text(error),
                request.grants(&["SELECT_CATALOG_ROLE"]),
            )];
        }
    };
    let mut wanted: BTreeSet<&str> = PRIVILEGES.into_iter().collect();
    if request.snapshots {
        wanted.insert("FLASHBACK ANY TABLE");
    }
    if request.read_only {
        // CREATE TABLE is only for the flush table.
        wanted.remove("CREATE TABLE");
    }
    if request.pdb.is_some() {
        // Dictionary, snapshot, flush and heartbeat work switch sessions to the PDB.
        wanted.insert("SET CONTAINER");
    }
    let mut checks = Vec::new();
    for privilege in wanted {
        checks.push(if granted.privileges.contains(privilege) {
            Check::pass(format!("privilege {privilege}"), "granted")
        } else {
            Check::fail(
                format!("privilege {privilege}"),
                "not granted",
                request.grants(&[privilege]),
            )
        });
    }
    for role in ROLES {
        checks.push(if granted.roles.contains(role) {
            Check::pass(format!("role {role}"), "granted")
        } else if role == "EXECUTE_CATALOG_ROLE" && granted.privileges.contains(EXECUTE_LOGMNR) {
            // The role is for DBMS_LOGMNR; EXECUTE on the package itself serves as well.
            Check::pass(
                format!("role {role}"),
                format!("not granted, but {EXECUTE_LOGMNR} is, which is what it is needed for"),
            )
        } else {
            Check::fail(
                format!("role {role}"),
                "not granted",
                request.grants(&[role]),
            )
        });
    }
    checks
}

fn connection_fix(error: &SourceError) -> String {
    match error {
        SourceError::ClientMissing { .. } => {
            "install Oracle Instant Client and add its directory to LD_LIBRARY_PATH".to_owned()
        }
        SourceError::PdbNotOpen { pdb } => {
            let pdb = sql_name(pdb);
            format!(
                "ALTER PLUGGABLE DATABASE {pdb} OPEN; ALTER PLUGGABLE DATABASE {pdb} SAVE STATE;"
            )
        }
        SourceError::MiningInPdbUnsupported { container, .. } => format!(
            "connect to the CDB root's service (CDB$ROOT, not the PDB's service) as a common \
             user (C##...) and set spec.database.pdb: {container}; or upgrade to 21c"
        ),
        SourceError::NoSuchPdb { .. } => {
            "name an existing PDB in spec.database.pdb (SELECT NAME FROM V$CONTAINERS;)".to_owned()
        }
        _ => "check spec.database (host, port, serviceName) and the credentials Secret".to_owned(),
    }
}

fn error_text(error: &SourceError) -> String {
    error.to_string()
}

#[cfg(test)]
mod tests;
