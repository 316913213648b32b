//! The captured tables' dictionary: the schema history, read through the boundary only where the
//! history has nothing yet, and extended after each DDL. With the schema and table lists of
//! `spec.filters`, the tables they select are added at start and whenever the engine lists the
//! catalog again ([`CapturedTables::add_listed`]).
//!
//! A transaction is typed with the structure in force at its commit SCN
//! ([`CapturedTables::at_commit`]), so a capture resumed before a DDL decodes the rows written
//! before it with the old structure, and mining the DDL again finds the new one in the history.
//!
//! While a window streams, the boundary is busy (the row stream borrows it), so a DDL row cannot
//! read the catalog on the spot. [`CapturedTables::refresh`] marks the table stale instead; the
//! mining loop then ends the window right after the DDL's transaction, reads the structure
//! ([`CapturedTables::reload_stale`]) unless the history already holds it, and mines on from the
//! DDL's commit SCN. When the catalog is already past a later DDL (the capture is behind), the
//! columns an `ADD` / `DROP` gives the structure before it are taken instead.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::assemble::TableLookup;
use crate::dictionary::TableSchema;
use crate::dictionary::ddl::alter_columns;
use crate::doctor::{self, Report};
use crate::error::CaptureError;
use crate::filter::{Filters, TableSelection};
use crate::redo::parse_ddl;
use crate::schema_history::object_row::{NumberedValue, ObjectRowError, ResolvedRow, resolve};
use crate::schema_history::{ChangeKind, NewVersion, SchemaHistory};
use crate::source::{DatabaseCatalog, SourceError, StorageFormatError, SupplementalLogging};
use crate::value::internal::DatabaseFormats;

/// Captured tables by `(owner, table)`; only these are ever assembled.
#[derive(Debug)]
pub struct CapturedTables {
    /// What the configuration captures, for tables LogMiner names otherwise when mining.
    selection: TableSelection,
    /// How the database stores values, for rows LogMiner names by object number; what the
    /// decoders cannot read is named when such a row needs it.
    formats: Result<DatabaseFormats, StorageFormatError>,
    names: BTreeSet<(String, String)>,
    history: SchemaHistory,
    /// The commit SCN of the transaction being assembled: which versions are in force.
    commit_scn: u64,
    stale: BTreeSet<(String, String)>,
    /// The last answer of [`TableLookup::table`]: a transaction's rows come in runs of one
    /// table, and each lookup otherwise builds four owned names. Cleared by every method that can
    /// change an answer (a new commit SCN, new tables, a reload).
    last_lookup: Option<LastLookup>,
    /// Whether the capture has warned that captured tables lack object numbers.
    warned_unnumbered: bool,
}

impl Default for CapturedTables {
    fn default() -> Self {
        Self {
            selection: TableSelection::default(),
            formats: Err(StorageFormatError::NotRead),
            names: BTreeSet::new(),
            history: SchemaHistory::default(),
            commit_scn: 0,
            stale: BTreeSet::new(),
            last_lookup: None,
            warned_unnumbered: false,
        }
    }
}

#[derive(Debug)]
struct LastLookup {
    owner: String,
    table: String,
    object: Option<u64>,
    found: Option<Arc<TableSchema>>,
}

/// A captured table a DDL changed, after [`CapturedTables::reload_stale`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloaded {
    /// The structure after the DDL (the last one when the table was dropped).
    pub table: Arc<TableSchema>,
    pub dropped: bool,
    /// The name the table had before the DDL, when the DDL renamed it.
    pub renamed_from: Option<String>,
}

impl Reloaded {
    /// A table the DDL changed, neither dropped nor renamed.
    fn changed(table: Arc<TableSchema>) -> Self {
        Self {
            table,
            dropped: false,
            renamed_from: None,
        }
    }
}

/// Adds the structure `table` to `history` from `from_scn`, and to `recorded` for the schema
/// history topic.
fn record(
    history: &mut SchemaHistory,
    recorded: &mut Vec<NewVersion>,
    table: Arc<TableSchema>,
    from_scn: u64,
    kind: ChangeKind,
    ddl: Option<String>,
) {
    history.insert(Arc::clone(&table), from_scn);
    recorded.push(NewVersion {
        table,
        from_scn,
        kind,
        ddl,
    });
}

impl CapturedTables {
    /// With the configuration's selection of tables ([`TableSelection`]).
    pub fn with_selection(mut self, selection: TableSelection) -> Self {
        self.selection = selection;
        self
    }

    /// With the database's storage formats (`DatabaseCatalog::storage_settings`), which rows
    /// named by object number are decoded with.
    pub fn with_formats(mut self, formats: Result<DatabaseFormats, StorageFormatError>) -> Self {
        self.formats = formats;
        self
    }

    /// The captured tables as of `from_scn`, from `history`. A table the history lacks is read
    /// from the current catalog and returned as a version to record from `from_scn`; a missing
    /// table is [`SourceError::NoSuchTable`] (CDC-1001). `resumed` (a bookmark exists) makes a
    /// lacking table a warning: its rows before a later DDL would be typed with today's
    /// structure.
    pub fn start<S: DatabaseCatalog>(
        source: &mut S,
        names: &[(String, String)],
        mut history: SchemaHistory,
        from_scn: u64,
        resumed: bool,
    ) -> Result<(Self, Vec<NewVersion>), SourceError> {
        let mut recorded = Vec::new();
        for (owner, table) in names {
            if history.knows(owner, table) {
                continue;
            }
            let catalog = source.table(owner, table)?;
            if resumed {
                tracing::warn!(
                    table = %catalog.schema.qualified_name(),
                    from_scn,
                    "the schema history has no structure of this table: the current catalog is \
                     recorded from the resume SCN; rows written before a later DDL would not fit it"
                );
            }
            let (table, kind) = (catalog.schema, ChangeKind::Create);
            record(&mut history, &mut recorded, table, from_scn, kind, None);
        }
        let tables = Self {
            names: names.iter().cloned().collect(),
            history,
            commit_scn: from_scn,
            ..Self::default()
        };
        Ok((tables, recorded))
    }

    /// Types the next transaction with the versions in force at its commit SCN.
    pub fn at_commit(&mut self, commit_scn: u64) {
        self.commit_scn = commit_scn;
        self.last_lookup = None;
    }

    /// Captures the tables of `names` not captured yet, each with its structure in force from
    /// `from_scn`: the history's when an earlier run recorded it, else the catalog's, returned as
    /// a version to record. One dropped since it was listed is left out.
    pub fn add_listed<S: DatabaseCatalog>(
        &mut self,
        source: &mut S,
        names: Vec<(String, String)>,
        from_scn: u64,
    ) -> Result<Vec<NewVersion>, SourceError> {
        self.last_lookup = None;
        let mut recorded = Vec::new();
        for name in names {
            if self.names.contains(&name) {
                continue;
            }
            if !self.history.knows(&name.0, &name.1) {
                match source.table(&name.0, &name.1) {
                    Ok(catalog) => {
                        let (table, kind) = (catalog.schema, ChangeKind::Create);
                        record(
                            &mut self.history,
                            &mut recorded,
                            table,
                            from_scn,
                            kind,
                            None,
                        );
                    }
                    Err(SourceError::NoSuchTable { .. }) => continue,
                    Err(error) => return Err(error),
                }
            }
            tracing::info!(
                table = %format!("{}.{}", name.0, name.1),
                from_scn,
                "a table the filters select is captured from here on (its rows are read as an incremental snapshot unless snapshot.tablesAdded is skip)"
            );
            self.names.insert(name);
        }
        Ok(recorded)
    }

    /// The structure each captured table has for the next transaction, for the start check of
    /// column types ([`crate::filter::unsupported`]).
    pub fn structures(&self) -> Vec<Arc<TableSchema>> {
        self.names
            .iter()
            .filter_map(|(owner, table)| self.history.in_force(owner, table, self.commit_scn))
            .collect()
    }

    /// The captured tables' names, sorted: what mining asks LogMiner for.
    pub fn names(&self) -> Vec<(String, String)> {
        self.names.iter().cloned().collect()
    }

    /// The object numbers of the captured tables, sorted: what mining asks LogMiner for besides
    /// the names, so rows LogMiner names otherwise when mining (after a rename, a drop into the
    /// recycle bin, or by number) are not filtered out.
    pub fn object_ids(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .names
            .iter()
            .flat_map(|(owner, table)| self.history.object_ids(owner, table))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Whether a DDL left a table to reload.
    pub fn has_stale(&self) -> bool {
        !self.stale.is_empty()
    }

    /// The tables a DDL committed at `ddl_scn` changed: each one's structure from `ddl_scn + 1`,
    /// taken from the history when a run before this one recorded it, else read from the
    /// catalog and returned in `recorded` for the history. A dropped table keeps its last
    /// structure: no later row of it can exist.
    ///
    /// A rename keeps the columns and the object: the structure before it under the new name
    /// (from the history when recorded), captured from here on when the configuration selects
    /// the new name ([`TableSelection`]). A dropped table stops being mined.
    pub fn reload_stale<S: DatabaseCatalog>(
        &mut self,
        source: &mut S,
        ddl_scn: u64,
        ddl: impl Fn(&str, &str) -> Option<String>,
    ) -> Result<(Vec<Reloaded>, Vec<NewVersion>), SourceError> {
        self.last_lookup = None;
        let from_scn = ddl_scn.saturating_add(1);
        let mut reloaded = Vec::new();
        let mut recorded = Vec::new();
        for (owner, name) in std::mem::take(&mut self.stale) {
            let statement = ddl(&owner, &name);
            let renamed_to = statement.as_deref().and_then(|sql| {
                parse_ddl(sql)
                    .ok()
                    .and_then(|parsed| parsed.renamed_to.map(|new| new.into_owned()))
            });
            if let Some(new_name) = renamed_to {
                let Some(table) =
                    self.renamed(&owner, &name, &new_name, ddl_scn, statement, &mut recorded)
                else {
                    continue;
                };
                if self.selection.selects(&owner, &new_name) {
                    self.names.insert((owner.clone(), new_name));
                } else {
                    tracing::warn!(
                        table = %format!("{owner}.{name}"),
                        renamed_to = %format!("{owner}.{new_name}"),
                        scn = ddl_scn,
                        "a captured table was renamed to a name that spec.tables and the filters                          do not select: its changes from this SCN on are not captured; add the new                          name to capture them"
                    );
                }
                reloaded.push(Reloaded {
                    renamed_from: Some(name),
                    ..Reloaded::changed(table)
                });
                continue;
            }
            if let Some(table) = self.history.version_from(&owner, &name, from_scn) {
                reloaded.push(Reloaded::changed(table));
                continue;
            }
            let dropped = match statement.as_deref() {
                Some(statement) => is_drop_table(statement),
                // Without its statement, a table missing from the catalog was dropped.
                None => matches!(
                    source.table(&owner, &name),
                    Err(SourceError::NoSuchTable { .. })
                ),
            };
            if dropped {
                // No later row of it can exist, so it is no longer asked for. A table created
                // again under the name is captured as a new one.
                self.names.remove(&(owner.clone(), name.clone()));
                if let Some(table) = self.history.in_force(&owner, &name, ddl_scn) {
                    reloaded.push(Reloaded {
                        dropped: true,
                        ..Reloaded::changed(table)
                    });
                }
                continue;
            }
            match source.table(&owner, &name) {
                Ok(catalog) => {
                    let previous = self.history.in_force(&owner, &name, ddl_scn);
                    let table = structure_after(catalog.schema, previous, statement.as_deref());
                    let kind = (statement.as_deref()).map_or(ChangeKind::Alter, ChangeKind::of_ddl);
                    let history = &mut self.history;
                    record(
                        history,
                        &mut recorded,
                        Arc::clone(&table),
                        from_scn,
                        kind,
                        statement,
                    );
                    reloaded.push(Reloaded::changed(table));
                }
                Err(SourceError::NoSuchTable { .. }) => {
                    // Gone from the catalog since this DDL (a later DROP or rename the capture
                    // has not mined yet): the structure it made is derived from the one before.
                    let previous = self.history.in_force(&owner, &name, ddl_scn);
                    let derived = previous
                        .as_ref()
                        .zip(statement.as_deref())
                        .and_then(|(previous, statement)| derived_structure(previous, statement));
                    let table = match (derived, previous) {
                        (Some(derived), _) => {
                            let table = Arc::new(derived);
                            let (history, kind) = (&mut self.history, ChangeKind::Alter);
                            let copy = Arc::clone(&table);
                            record(history, &mut recorded, copy, from_scn, kind, statement);
                            table
                        }
                        // A DDL that changes no column: the structure stays.
                        (None, Some(previous)) => previous,
                        (None, None) => continue,
                    };
                    reloaded.push(Reloaded::changed(table));
                }
                Err(error) => return Err(error),
            }
        }
        Ok((reloaded, recorded))
    }
}

/// Whether `statement` is a `DROP TABLE`.
fn is_drop_table(statement: &str) -> bool {
    parse_ddl(statement).is_ok_and(|ddl| ddl.kind == crate::redo::DdlKind::DropTable)
}

impl CapturedTables {
    /// Whether rows of this version of a table are captured: its name is captured now, or the
    /// configuration selects it (a name the table had before a rename).
    fn captures(&self, version: &TableSchema) -> bool {
        self.names
            .contains(&(version.schema().to_owned(), version.table().to_owned()))
            || self.selection.selects(version.schema(), version.table())
    }

    /// The structure of `owner.name` renamed to `new_name` at `ddl_scn`: the history's when an
    /// earlier run recorded it, else the structure in force before the rename under the new name
    /// (a rename changes no column and keeps the object numbers), recorded. `None` when the
    /// history has no structure of the table.
    fn renamed(
        &mut self,
        owner: &str,
        name: &str,
        new_name: &str,
        ddl_scn: u64,
        statement: Option<String>,
        recorded: &mut Vec<NewVersion>,
    ) -> Option<Arc<TableSchema>> {
        let from_scn = ddl_scn.saturating_add(1);
        if let Some(known) = self.history.version_from(owner, new_name, from_scn) {
            return Some(known);
        }
        let previous = self.history.in_force(owner, name, ddl_scn)?;
        let renamed = TableSchema::new(owner, new_name, previous.columns().to_vec()).ok()?;
        let renamed = Arc::new(match previous.object() {
            Some(object) => renamed.with_object(object),
            None => renamed,
        });
        let (history, kind) = (&mut self.history, ChangeKind::Alter);
        record(
            history,
            recorded,
            Arc::clone(&renamed),
            from_scn,
            kind,
            statement,
        );
        Some(renamed)
    }
}

/// The structure a DDL made. The catalog's, unless its columns are not those the statement gives
/// the structure before it (`ADD` / `DROP` of columns): then the catalog is already past later DDL
/// (the capture is behind), and the derived columns are the DDL's.
fn structure_after(
    catalog: Arc<TableSchema>,
    previous: Option<Arc<TableSchema>>,
    statement: Option<&str>,
) -> Arc<TableSchema> {
    let derived = previous
        .zip(statement)
        .and_then(|(previous, statement)| derived_structure(&previous, statement));
    let names = |table: &TableSchema| -> Vec<String> {
        table.columns().iter().map(|c| c.name.clone()).collect()
    };
    match derived {
        Some(derived) if names(&derived) != names(&catalog) => {
            tracing::warn!(
                table = %catalog.qualified_name(),
                "the catalog is already past a later DDL of this table: its structure after the \
                 DDL being mined is derived from the statement"
            );
            Arc::new(derived)
        }
        _ => catalog,
    }
}

/// The columns `statement` (an ALTER of columns) gives `previous`; `None` when it changes no
/// column or is not understood. ADD, DROP, RENAME and MODIFY COLUMN keep the object and its
/// segment (only TRUNCATE and MOVE make a new DATA_OBJECT_ID).
fn derived_structure(previous: &TableSchema, statement: &str) -> Option<TableSchema> {
    let columns = alter_columns(statement, previous.columns()).ok()??;
    let derived = TableSchema::new(previous.schema(), previous.table(), columns).ok()?;
    Some(match previous.object() {
        Some(object) => derived.with_object(object),
        None => derived,
    })
}

/// The catalog as the schema and table lists of `spec.filters` see it: listed at start and then
/// every `mining.tableListingIntervalSeconds`, between mining windows (a table created later that
/// the lists select is captured from the first window after the listing that finds it). Idle
/// without those lists.
#[derive(Debug)]
pub struct TableListing {
    filters: Arc<Filters>,
    /// The lists' choice, the capture's flush table left out (no named tables: those are
    /// captured without a listing).
    selection: TableSelection,
    /// The database-level logging, against which an added table's key logging is checked.
    supplemental: SupplementalLogging,
    interval: Duration,
    next: Option<Instant>,
}

impl TableListing {
    pub fn new(
        filters: &Arc<Filters>,
        flush_table: &str,
        supplemental: SupplementalLogging,
        interval: Duration,
    ) -> Self {
        Self {
            filters: Arc::clone(filters),
            selection: TableSelection::new(&[], filters, flush_table),
            supplemental,
            interval,
            next: None,
        }
    }

    /// Whether the lists are in use and the last listing is older than the interval.
    pub fn due(&self) -> bool {
        self.next.is_some_and(|next| Instant::now() >= next)
    }

    /// The tables the schema and table lists select now (none without lists), the capture's
    /// flush table left out; starts the interval to the next listing.
    pub fn select<S: DatabaseCatalog>(
        &mut self,
        source: &mut S,
    ) -> Result<Vec<(String, String)>, SourceError> {
        if !self.filters.selects_from_catalog() {
            return Ok(Vec::new());
        }
        let chosen = self.selection.list(|| source.list_tables())?;
        // An interval too long to add never comes round.
        self.next = Instant::now().checked_add(self.interval);
        Ok(chosen)
    }

    /// Every captured table ([`TableSelection::captured`]); starts the interval to the next
    /// listing.
    pub fn captured<S: DatabaseCatalog>(
        &mut self,
        source: &mut S,
        named: Vec<(String, String)>,
    ) -> Result<Vec<(String, String)>, SourceError> {
        let tables = self.selection.captured(|| source.list_tables(), named)?;
        if self.filters.selects_from_catalog() {
            self.next = Instant::now().checked_add(self.interval);
        }
        Ok(tables)
    }

    /// Lists the catalog and captures the newly selected tables from `from_scn` (where mining
    /// goes on); returns their structures to record in the schema history. A new table whose
    /// changes would lack its key stops the capture first ([`check_key_logging`]).
    pub fn refresh<S: DatabaseCatalog>(
        &mut self,
        source: &mut S,
        tables: &mut CapturedTables,
        from_scn: u64,
    ) -> Result<Vec<NewVersion>, CaptureError> {
        let chosen: Vec<(String, String)> = (self.select(source)?.into_iter())
            .filter(|name| !tables.names.contains(name))
            .collect();
        check_key_logging(source, &chosen, &self.supplemental, &self.filters)?;
        Ok(tables.add_listed(source, chosen, from_scn)?)
    }
}

/// Seed 001: "A table that logs no key columns is rejected at startup". Each of `names` is
/// judged as doctor judges it ([`doctor::key_logging_check`]); any failure is the stop CDC-1002
/// naming the tables and the statements that fix them, before a change of theirs is mined.
/// Without it an update would be emitted without its key (or fail to encode, with no stop code).
/// A table that no longer exists is left to the dictionary read that follows.
pub fn check_key_logging<S: DatabaseCatalog>(
    source: &mut S,
    names: &[(String, String)],
    database: &SupplementalLogging,
    filters: &Filters,
) -> Result<(), CaptureError> {
    let mut failed = Vec::new();
    for (owner, table) in names {
        let catalog = match source.table(owner, table) {
            Ok(catalog) => catalog,
            Err(SourceError::NoSuchTable { .. }) => continue,
            Err(error) => return Err(error.into()),
        };
        let check = doctor::key_logging_check(&catalog, database, filters);
        if !check.ok {
            failed.push(check);
        }
    }
    let findings: Vec<String> = (failed.iter())
        .map(|check| {
            format!(
                "{}: {}; fix: {}",
                check.name,
                check.message,
                check.fix.as_deref().unwrap_or_default()
            )
        })
        .collect();
    match (Report {
        checks: failed,
        position: None,
    })
    .stop()
    {
        Some(mut stop) => {
            stop.message = format!(
                "supplemental logging does not put the key in every change of {} table(s), so \
                 the capture stops before mining them: {}",
                findings.len(),
                findings.join(" / ")
            );
            Err(CaptureError::Stop(Box::new(stop)))
        }
        None => Ok(()),
    }
}

impl TableLookup for CapturedTables {
    /// By object number first: the version of the object in force at the commit SCN is the
    /// table the row changed, whatever LogMiner named it (a rename or a drop into the recycle
    /// bin since the row was written gives it the table's name at mining time). It is captured
    /// when that version's name is. By name for an object the history has no number for (a
    /// version recorded before the capture read object numbers, a source without `DATA_OBJ#`).
    fn table(&mut self, owner: &str, table: &str, object: Option<u64>) -> Option<Arc<TableSchema>> {
        if let Some(last) = &self.last_lookup
            && last.owner == owner
            && last.table == table
            && last.object == object
        {
            return last.found.clone();
        }
        let by_object = object
            .filter(|&object| object != 0)
            .and_then(|object| self.history.in_force_by_object(object, self.commit_scn));
        let found = match by_object {
            Some(version) => self.captures(&version).then_some(version),
            None if self.names.contains(&(owner.to_owned(), table.to_owned())) => {
                self.history.in_force(owner, table, self.commit_scn)
            }
            None => None,
        };
        self.last_lookup = Some(LastLookup {
            owner: owner.to_owned(),
            table: table.to_owned(),
            object,
            found: found.clone(),
        });
        found
    }

    fn refresh(&mut self, owner: &str, table: &str) -> Result<(), String> {
        let key = (owner.to_owned(), table.to_owned());
        if self.names.contains(&key) {
            self.stale.insert(key);
        }
        Ok(())
    }

    /// The history holds only captured tables, so an object it knows is captured, and one it
    /// does not know is another application's (its DDL makes such rows common, e.g. a work table
    /// dropped with PURGE). A captured table whose version in force was recorded without object
    /// numbers (by a redoline before they were read) cannot claim its rows until its next DDL
    /// the capture mines records them: stopping on every foreign `OBJ#` row instead would leave
    /// an upgraded capture no way forward, so it is warned about once (docs/limits.md).
    fn numbered_row(
        &mut self,
        object_id: u64,
        scn: u64,
        values: &[NumberedValue],
    ) -> Option<Result<ResolvedRow, ObjectRowError>> {
        if self.history.knows_object(object_id) {
            // A table renamed to a name the configuration does not select is no longer captured.
            if let Some(version) = self.history.in_force_by_object(object_id, scn)
                && !self.captures(&version)
            {
                return None;
            }
            return Some(resolve(
                &self.history,
                object_id,
                scn,
                values,
                &self.formats,
            ));
        }
        if !self.warned_unnumbered {
            let unnumbered: Vec<String> = (self.names.iter())
                .filter(|(owner, table)| {
                    self.history
                        .in_force(owner, table, scn)
                        .is_none_or(|version| version.object().is_none())
                })
                .map(|(owner, table)| format!("{owner}.{table}"))
                .collect();
            if !unnumbered.is_empty() {
                self.warned_unnumbered = true;
                tracing::warn!(
                    object_id,
                    scn,
                    tables = %unnumbered.join(", "),
                    "a row LogMiner names by object number belongs to no table whose object \
                     number the schema history recorded, so it is taken as another \
                     application's; these captured tables were recorded without object numbers \
                     (before redoline read them) and get them at their next DDL the capture \
                     mines: until then their rows named by number are not captured"
                );
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use redoline_crds::v1alpha1::{ColumnsSpec, FiltersSpec};

    use super::*;
    use crate::dictionary::{Column, OracleType};
    use crate::simulator::Simulator;

    #[test]
    fn a_listing_adds_the_tables_the_lists_select_once() {
        let mut sim = Simulator::new();
        for line in [
            ORDERS,
            r#"{"table":"HR.EMP","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}"#,
            r#"{"table":"APP.REDOLINE_LOGMNR_FLUSH","columns":[{"name":"N","type":"NUMBER(10)"}],"logging":"all"}"#,
        ] {
            sim.apply_line(line).unwrap();
        }
        let spec = FiltersSpec {
            schema_include_list: vec!["APP".to_owned()],
            ..FiltersSpec::default()
        };
        let filters = Arc::new(Filters::new(&spec, &ColumnsSpec::default()).unwrap());
        let mut listing = TableListing::new(
            &filters,
            "redoline_logmnr_flush",
            logged(),
            Duration::from_secs(60),
        );
        let mut tables = CapturedTables::default();
        assert!(!listing.due(), "not listed yet");
        listing.refresh(&mut sim, &mut tables, 1).unwrap();
        assert_eq!(
            tables.names(),
            [("APP".to_owned(), "ORDERS".to_owned())],
            "not HR, never the flush table"
        );
        assert!(!listing.due(), "the next listing waits for the interval");
        sim.apply_line(
            r#"{"ddl":"CREATE TABLE APP.LATER (ID NUMBER(8) PRIMARY KEY, SUPPLEMENTAL LOG DATA (PRIMARY KEY) COLUMNS)"}"#,
        )
        .unwrap();
        let recorded = listing.refresh(&mut sim, &mut tables, 100).unwrap();
        assert_eq!(
            recorded.len(),
            1,
            "the new table's structure goes to the history"
        );
        assert_eq!(recorded[0].from_scn, 100);
        assert_eq!(
            tables.names(),
            [
                ("APP".to_owned(), "LATER".to_owned()),
                ("APP".to_owned(), "ORDERS".to_owned())
            ]
        );
        tables.at_commit(100);
        assert!(tables.table("APP", "LATER", None).is_some());
    }

    /// APP.ORDERS with its key logged, as a scenario line.
    const ORDERS: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}"#;

    /// A model holding [`ORDERS`].
    fn with_orders() -> Simulator {
        let mut sim = Simulator::new();
        sim.apply_line(ORDERS).unwrap();
        sim
    }

    /// The database-level logging of the simulator (minimal only).
    fn logged() -> SupplementalLogging {
        Simulator::new().database().unwrap().supplemental
    }

    #[test]
    fn a_listed_table_that_logs_no_key_stops_the_capture_before_it_is_captured() {
        let mut sim = with_orders();
        let spec = FiltersSpec {
            schema_include_list: vec!["APP".to_owned()],
            ..FiltersSpec::default()
        };
        let filters = Arc::new(Filters::new(&spec, &ColumnsSpec::default()).unwrap());
        let mut listing = TableListing::new(&filters, "F", logged(), Duration::from_secs(60));
        let mut tables = CapturedTables::default();
        listing.refresh(&mut sim, &mut tables, 1).unwrap();
        // Created later, without supplemental logging: its updates would carry no key.
        sim.apply_line(r#"{"ddl":"CREATE TABLE APP.LATER (ID NUMBER(8) PRIMARY KEY)"}"#)
            .unwrap();
        let Err(CaptureError::Stop(stop)) = listing.refresh(&mut sim, &mut tables, 100) else {
            panic!("the listing adds a table that logs no key columns");
        };
        assert_eq!(stop.code.code(), "CDC-1002");
        assert!(stop.message.contains("table APP.LATER"), "{}", stop.message);
        let fix = "ALTER TABLE APP.LATER ADD SUPPLEMENTAL LOG DATA (PRIMARY KEY) COLUMNS;";
        assert!(stop.message.contains(fix), "{}", stop.message);
        assert_eq!(stop.details["checks"][0]["name"], "table APP.LATER");
        assert_eq!(stop.details["checks"][0]["fix"], fix);
        assert_eq!(
            tables.names(),
            [("APP".to_owned(), "ORDERS".to_owned())],
            "not captured"
        );
    }

    #[test]
    fn without_lists_nothing_is_listed() {
        let mut sim = with_orders();
        let mut listing = TableListing::new(
            &Arc::new(Filters::default()),
            "F",
            logged(),
            Duration::from_secs(60),
        );
        let mut tables = CapturedTables::default();
        listing.refresh(&mut sim, &mut tables, 1).unwrap();
        assert!(tables.names().is_empty());
        assert!(!listing.due());
    }

    fn table(extra: &[&str]) -> Arc<TableSchema> {
        let mut columns = vec![Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1)];
        for name in extra {
            columns.push(Column::new(*name, OracleType::parse("NUMBER(1)").unwrap()));
        }
        Arc::new(TableSchema::new("APP", "ORDERS", columns).unwrap())
    }

    #[test]
    fn the_catalog_is_taken_unless_it_is_past_a_later_ddl() {
        let add = Some("ALTER TABLE APP.ORDERS ADD (P NUMBER(1))");
        // Current: the catalog has exactly what the DDL made (its types are authoritative).
        let catalog = table(&["P"]);
        assert!(Arc::ptr_eq(
            &structure_after(Arc::clone(&catalog), Some(table(&[])), add),
            &catalog
        ));
        // Behind: the catalog also has Q, added later.
        let after = structure_after(table(&["P", "Q"]), Some(table(&[])), add);
        assert_eq!(after, table(&["P"]));
        assert_eq!(after.key_indexes(), [0], "the key is kept");
        let dropped = structure_after(
            table(&[]),
            Some(table(&["P", "Q"])),
            Some("ALTER TABLE APP.ORDERS DROP COLUMN Q"),
        );
        assert_eq!(dropped, table(&["P"]));
        // A MODIFY keeps the names: behind a later ADD, the derived columns are taken.
        let modified = structure_after(
            table(&["P", "Q"]),
            Some(table(&["P"])),
            Some("ALTER TABLE APP.ORDERS MODIFY (P NUMBER(2))"),
        );
        assert!(modified.column_index("P").is_some() && modified.column_index("Q").is_none());
        // Statements that change no column, or that are not understood, keep the catalog.
        for statement in [
            "ALTER TABLE APP.ORDERS ADD CONSTRAINT U UNIQUE (P)",
            "ALTER TABLE APP.ORDERS ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS",
            "ALTER TABLE APP.ORDERS DROP PRIMARY KEY",
        ] {
            let catalog = table(&["P", "Q"]);
            assert!(
                Arc::ptr_eq(
                    &structure_after(Arc::clone(&catalog), Some(table(&["P"])), Some(statement)),
                    &catalog
                ),
                "{statement}"
            );
        }
        assert!(Arc::ptr_eq(
            &structure_after(Arc::clone(&catalog), None, add),
            &catalog
        ));
    }

    /// A row named by object number is resolved for an object the history knows; another
    /// object's row is nothing, also while a captured table has no object number (warned once).
    /// A table with one key column and object number 7.
    fn numbered_table(name: &str) -> Arc<TableSchema> {
        use crate::dictionary::ObjectNumbers;
        Arc::new(
            TableSchema::new(
                "APP",
                name,
                vec![
                    Column::new("ID", OracleType::parse("NUMBER(10)").unwrap())
                        .key(1)
                        .segment(1),
                ],
            )
            .unwrap()
            .with_object(ObjectNumbers {
                object_id: 7,
                data_object_id: Some(7),
            }),
        )
    }

    /// Captures `APP.T` (object 7) from SCN 10, with `named` as `spec.tables`.
    fn captured_t(named: &[&str]) -> CapturedTables {
        let mut history = SchemaHistory::default();
        history.insert(numbered_table("T"), 10);
        let named: Vec<(String, String)> = named
            .iter()
            .map(|name| ("APP".to_owned(), (*name).to_owned()))
            .collect();
        CapturedTables {
            names: [("APP".to_owned(), "T".to_owned())].into(),
            history,
            ..CapturedTables::default()
        }
        .with_selection(TableSelection::new(
            &named,
            &Arc::new(Filters::default()),
            "REDOLINE_LOGMNR_FLUSH",
        ))
    }

    #[test]
    fn a_renamed_tables_rows_are_matched_by_object_number() {
        let mut sim = Simulator::new();
        sim.apply_line(
            r#"{"table":"APP.T2","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}"#,
        )
        .unwrap();
        let rename = "ALTER TABLE APP.T RENAME TO T2;";
        // Selected under its new name: followed from the rename on.
        let mut tables = captured_t(&["T", "T2"]);
        tables.at_commit(20);
        // Written before the rename, mined after it: the new name, the same object.
        assert_eq!(
            tables
                .table("APP", "T2", Some(7))
                .map(|t| t.table().to_owned()),
            Some("T".to_owned())
        );
        assert_eq!(tables.table("APP", "OTHER", Some(8)), None, "not captured");
        tables.refresh("APP", "T").unwrap();
        let (reloaded, recorded) = tables
            .reload_stale(&mut sim, 30, |_, _| Some(rename.to_owned()))
            .unwrap();
        assert_eq!(reloaded[0].renamed_from.as_deref(), Some("T"));
        assert_eq!(reloaded[0].table.table(), "T2");
        assert_eq!(recorded[0].from_scn, 31);
        assert_eq!(recorded[0].table.object().map(|o| o.object_id), Some(7));
        assert!(
            tables
                .names()
                .contains(&("APP".to_owned(), "T2".to_owned()))
        );
        assert_eq!(tables.object_ids(), [7]);
        tables.at_commit(40);
        assert_eq!(
            tables
                .table("APP", "T2", Some(7))
                .map(|t| t.table().to_owned()),
            Some("T2".to_owned())
        );
        // Renamed to a name nothing selects: rows before the rename still are captured (as
        // T), rows after it are not, named or by number.
        let mut tables = captured_t(&["T"]);
        tables.refresh("APP", "T").unwrap();
        tables
            .reload_stale(&mut sim, 30, |_, _| Some(rename.to_owned()))
            .unwrap();
        assert!(
            !tables
                .names()
                .contains(&("APP".to_owned(), "T2".to_owned()))
        );
        tables.at_commit(20);
        assert!(tables.table("APP", "T2", Some(7)).is_some());
        tables.at_commit(40);
        assert_eq!(tables.table("APP", "T2", Some(7)), None);
        let formats = crate::value::internal::DatabaseFormats::new(jiff::tz::Offset::UTC);
        let mut tables = tables.with_formats(Ok(formats));
        let one = [crate::schema_history::object_row::NumberedValue {
            column: 1,
            bytes: Some(vec![0xc1, 0x02]),
        }];
        assert!(tables.numbered_row(7, 20, &one).is_some());
        assert!(tables.numbered_row(7, 40, &one).is_none());
    }

    #[test]
    fn a_dropped_table_is_no_longer_mined() {
        let mut sim = Simulator::new();
        let mut tables = captured_t(&["T"]);
        tables.refresh("APP", "T").unwrap();
        let (reloaded, recorded) = tables
            .reload_stale(&mut sim, 30, |_, _| {
                Some("DROP TABLE APP.T PURGE;".to_owned())
            })
            .unwrap();
        assert!(reloaded[0].dropped && recorded.is_empty());
        assert!(tables.names().is_empty());
        assert!(tables.object_ids().is_empty());
        // An ALTER of a table dropped since (the capture is behind the DROP): not a drop, the
        // structure it made is derived from the statement.
        let mut tables = captured_t(&["T"]);
        tables.refresh("APP", "T").unwrap();
        let (reloaded, recorded) = tables
            .reload_stale(&mut sim, 30, |_, _| {
                Some("ALTER TABLE APP.T ADD (NOTE VARCHAR2(10));".to_owned())
            })
            .unwrap();
        assert!(!reloaded[0].dropped);
        assert_eq!(recorded[0].table.columns().len(), 2);
        assert_eq!(recorded[0].table.object().map(|o| o.object_id), Some(7));
        assert_eq!(tables.names(), [("APP".to_owned(), "T".to_owned())]);
    }

    #[test]
    fn rows_named_by_number_are_matched_to_captured_objects_only() {
        use crate::dictionary::ObjectNumbers;
        use crate::schema_history::object_row::NumberedValue;
        let table = |name: &str, object_id: Option<u64>| {
            let schema = TableSchema::new(
                "APP",
                name,
                vec![
                    Column::new("ID", OracleType::parse("NUMBER(10)").unwrap())
                        .key(1)
                        .segment(1),
                ],
            )
            .unwrap();
            Arc::new(match object_id {
                Some(object_id) => schema.with_object(ObjectNumbers {
                    object_id,
                    data_object_id: Some(object_id),
                }),
                None => schema,
            })
        };
        let one = [NumberedValue {
            column: 1,
            bytes: Some(vec![0xc1, 0x02]),
        }];
        let mut history = SchemaHistory::default();
        history.insert(table("T", Some(7)), 10);
        let mut tables = CapturedTables {
            names: [("APP".to_owned(), "T".to_owned())].into(),
            history,
            ..CapturedTables::default()
        };
        // The storage settings not read: the captured object's row says so.
        let error = tables.numbered_row(7, 20, &one).unwrap().unwrap_err();
        assert!(error.to_string().contains("not read"), "{error}");
        let mut tables = tables.with_formats(Ok(crate::value::internal::DatabaseFormats::new(
            jiff::tz::Offset::UTC,
        )));
        let resolved = tables.numbered_row(7, 20, &one).unwrap().unwrap();
        assert_eq!(resolved.table.table(), "T");
        assert!(tables.numbered_row(8, 20, &one).is_none(), "not captured");
        // A captured table recorded without object numbers (an upgraded capture) cannot claim
        // object 8: it stays another application's, with a warning, never a stop on every
        // foreign row.
        tables.names.insert(("APP".to_owned(), "U".to_owned()));
        tables.history.insert(table("U", None), 10);
        assert!(tables.numbered_row(8, 20, &one).is_none());
        assert!(tables.warned_unnumbered);
    }
}
