//! Applying steps: the dispatch of every step, table declarations and the operational steps
//! (threads, logs, clock, incarnations, catalog settings). DML is in `dml_steps.rs`, transaction
//! control in `transaction.rs`, LOB steps in `lob_steps.rs`, DDL in `ddl_steps.rs`.

use std::sync::Arc;

use serde_json::Value as Json;

use super::database::{Table, Transaction};
use super::scenario::{DatabaseSettings, Step, TableLogging, UniqueDecl};
use super::transaction::{End, unknown_transaction};
use super::{ScenarioError, Simulator, values};
use crate::dictionary::{Column, OracleType, TableSchema};
use crate::source::row::PLACEHOLDER_ROW_ID;
use crate::source::{MinimalLogging, OperationCode, Xid};
use crate::value::Value;

impl Simulator {
    pub(super) fn apply_numbered(&mut self, line: usize, step: Step) -> Result<(), ScenarioError> {
        self.catalog.scn += 1;
        match step {
            Step::Table {
                name,
                columns,
                logging,
                unique,
                layout,
            } => {
                let mut schema_columns = Vec::with_capacity(columns.len());
                let mut key_position = 0;
                for (index, column) in columns.into_iter().enumerate() {
                    let field = format!("columns[{index}].type");
                    // The simulated database, like a real one, has types the capture cannot
                    // decode (`MDSYS.SDO_GEOMETRY`, `VECTOR`): kept by name, as the catalog
                    // reports them.
                    let data_type = OracleType::parse_catalog(&column.data_type)
                        .map_err(|e| ScenarioError::new(line, &field, e.to_string()))?;
                    if data_type == OracleType::XmlType {
                        return Err(ScenarioError::new(line, &field, "XMLTYPE is not simulated"));
                    }
                    let mut built = Column::new(column.name, data_type).nullable(column.nullable);
                    if column.key {
                        key_position += 1;
                        built = built.key(key_position);
                    }
                    schema_columns.push(built);
                }
                let (owner, table) = self.split_name(&name);
                let schema = TableSchema::new(owner, table, schema_columns)
                    .map_err(|e| ScenarioError::new(line, "columns", e.to_string()))?;
                for (index, constraint) in unique.iter().enumerate() {
                    if let Some(missing) =
                        (constraint.columns.iter()).find(|column| schema.column(column).is_none())
                    {
                        return Err(ScenarioError::new(
                            line,
                            &format!("unique[{index}]"),
                            format!("no column {missing} (ORA-00904: invalid identifier)"),
                        ));
                    }
                }
                self.create_table(line, "table", schema, logging, unique)?;
                let next_object = &mut self.next_data_object;
                if let Some(table) = self.tables.last_mut() {
                    table
                        .lay_out(&layout, next_object)
                        .map_err(|message| ScenarioError::new(line, "range", message))?;
                }
                Ok(())
            }
            Step::Insert { dml, values } => self.insert(line, dml, values),
            Step::Update { dml, where_, set } => self.update(line, dml, where_, set),
            Step::Delete { dml, where_ } => self.delete(line, dml, where_),
            Step::Savepoint { tx, name } => {
                let (key, mut transaction) = self.take_transaction(&tx, None);
                transaction
                    .savepoints
                    .retain(|(existing, _)| *existing != name);
                transaction
                    .savepoints
                    .push((name, transaction.changes.len()));
                self.transactions.insert(key, transaction);
                Ok(())
            }
            Step::RollbackTo { tx, name } => {
                let Some((key, mut transaction)) = self.transactions.remove_entry(&tx) else {
                    return Err(unknown_transaction(line, "tx", &tx));
                };
                let Some(index) = transaction.savepoints.iter().rposition(|(n, _)| *n == name)
                else {
                    self.transactions.insert(key, transaction);
                    return Err(ScenarioError::new(
                        line,
                        "rollback_to",
                        format!("transaction {tx} has no savepoint {name} (ORA-01086)"),
                    ));
                };
                let position = transaction.savepoints[index].1;
                transaction.savepoints.truncate(index + 1);
                self.undo_changes(&mut transaction, position, true);
                self.transactions.insert(key, transaction);
                Ok(())
            }
            Step::Commit { tx } => self.end_transaction(line, &tx, End::Commit),
            Step::Rollback { tx } => self.end_transaction(line, &tx, End::Rollback),
            Step::Kill { tx } => self.end_transaction(line, &tx, End::Kill),
            Step::Lob {
                dml,
                where_,
                column,
                change,
            } => self.lob_step(line, dml, where_, &column, change),
            Step::Ddl { statement, user } => self.ddl(line, &statement, user.as_deref()),
            Step::Truncate { table } => {
                let t = self.table_named(line, "truncate", &table)?;
                let statement = format!(
                    "TRUNCATE TABLE {}.{}",
                    self.tables[t].owner, self.tables[t].name
                );
                self.ddl(line, &statement, None)
            }
            Step::Unsupported { tx, table } => {
                let t = self.table_named(line, "unsupported", &table)?;
                match tx {
                    Some(name) => {
                        let (key, mut transaction) = self.take_transaction(&name, None);
                        self.ensure_started(&mut transaction);
                        self.write_unsupported(&transaction, t);
                        self.transactions.insert(key, transaction);
                    }
                    None => {
                        let user = Arc::clone(&self.catalog.default_user);
                        self.autonomous(user, |sim, transaction| {
                            sim.write_unsupported(transaction, t)
                        });
                    }
                }
                Ok(())
            }
            Step::Internal { table, start } => {
                let t = self.table_named(line, "internal", &table)?;
                let zero = Xid([0; 8]);
                if start {
                    let mut spec = self.spec(
                        zero,
                        None,
                        OperationCode::Start,
                        PLACEHOLDER_ROW_ID.into(),
                        None,
                    );
                    spec.sql_redo = Some("set transaction read write;".to_owned());
                    self.redo.write(spec);
                }
                let spec = self.spec(
                    zero,
                    None,
                    OperationCode::Internal,
                    PLACEHOLDER_ROW_ID.into(),
                    Some(t),
                );
                self.redo.write(spec);
                Ok(())
            }
            Step::LogSwitch { all_threads } => {
                let scn = self.catalog.scn;
                let threads: Vec<u16> = if all_threads {
                    self.redo.threads.iter().map(|t| t.number).collect()
                } else {
                    vec![self.thread]
                };
                for thread in threads {
                    self.redo.switch(thread, scn, self.catalog.now);
                }
                Ok(())
            }
            Step::ArchivePurgeBeforeScn(scn) => {
                self.redo.purge_archives(scn);
                Ok(())
            }
            Step::AdvanceSeconds(seconds) => {
                let now = self
                    .catalog
                    .now
                    .checked_add(jiff::SignedDuration::from_secs(seconds))
                    .map_err(|e| ScenarioError::new(line, "advance_seconds", e.to_string()))?;
                self.set_clock(now);
                Ok(())
            }
            Step::Thread(thread) => {
                self.redo
                    .ensure_thread(thread, self.catalog.scn, self.catalog.now);
                self.thread = thread;
                Ok(())
            }
            Step::Checkpoint => {
                let scn = self.catalog.scn;
                if let Some(thread) = self
                    .redo
                    .threads
                    .iter_mut()
                    .find(|t| t.number == self.thread)
                {
                    thread.write_out(scn);
                }
                Ok(())
            }
            Step::ArchiverRace(races) => {
                self.catalog.archiver_races = races;
                Ok(())
            }
            Step::UndoLost => {
                self.catalog.undo_kept_from_scn = self.catalog.scn;
                Ok(())
            }
            Step::Resetlogs => {
                let open: Vec<String> = self.transactions.keys().cloned().collect();
                for name in open {
                    self.end_transaction(line, &name, End::Kill)?;
                }
                self.catalog.incarnation += 1;
                self.catalog.resetlogs_scn = self.catalog.scn;
                self.catalog.resetlogs_time = self.catalog.now;
                self.redo.resetlogs(self.catalog.scn, self.catalog.now);
                Ok(())
            }
            Step::PdbIncarnation => {
                if self.catalog.pdb.is_none() {
                    return Err(ScenarioError::new(
                        line,
                        "pdb_incarnation",
                        "no PDB is declared",
                    ));
                }
                self.catalog.pdb_incarnation += 1;
                self.catalog.pdb_incarnation_scn = self.catalog.scn;
                Ok(())
            }
            Step::Database(settings) => self.configure(line, *settings),
            Step::Grant(name) => {
                let set = if name.ends_with("_ROLE") {
                    &mut self.catalog.roles
                } else {
                    &mut self.catalog.privileges
                };
                set.insert(name);
                Ok(())
            }
            Step::Revoke(name) => {
                let set = if name.ends_with("_ROLE") {
                    &mut self.catalog.roles
                } else {
                    &mut self.catalog.privileges
                };
                if set.remove(&name) {
                    Ok(())
                } else {
                    Err(ScenarioError::new(
                        line,
                        "revoke",
                        format!("{name} is not granted"),
                    ))
                }
            }
            Step::TableLogging { table, logging } => {
                let t = self.table_named(line, "table_logging", &table)?;
                self.tables[t].logging = logging;
                Ok(())
            }
        }
    }

    /// `OWNER.TABLE`, or a bare name in the default user's schema.
    pub(super) fn split_name(&self, name: &str) -> (String, String) {
        match name.split_once('.') {
            Some((owner, table)) => (owner.to_owned(), table.to_owned()),
            None => (self.catalog.default_user.to_string(), name.to_owned()),
        }
    }

    pub(super) fn table_named(
        &self,
        line: usize,
        field: &str,
        name: &str,
    ) -> Result<usize, ScenarioError> {
        let found = if name.contains('.') {
            self.table_index.get(name)
        } else {
            let (owner, table) = self.split_name(name);
            self.table_index.get(&format!("{owner}.{table}"))
        };
        found
            .copied()
            .ok_or_else(|| ScenarioError::new(line, field, format!("unknown table {name}")))
    }

    pub(super) fn create_table(
        &mut self,
        line: usize,
        field: &str,
        schema: TableSchema,
        logging: TableLogging,
        unique: Vec<UniqueDecl>,
    ) -> Result<(), ScenarioError> {
        let qualified = schema.qualified_name();
        if !self.catalog.max_string_size_extended {
            // Oracle refuses a string column longer than the standard limits unless
            // MAX_STRING_SIZE = EXTENDED.
            for column in schema.columns() {
                let limit = match column.data_type {
                    OracleType::Varchar2 { .. } => 4000,
                    OracleType::NVarchar2 { .. } => 2000,
                    OracleType::Raw { .. } => 2000,
                    _ => continue,
                };
                if column
                    .data_type
                    .max_length()
                    .is_some_and(|length| length > limit)
                {
                    return Err(ScenarioError::new(
                        line,
                        field,
                        format!(
                            "column {} is longer than {limit} with MAX_STRING_SIZE = STANDARD \
                             (ORA-00910: specified length too long for its datatype)",
                            column.name
                        ),
                    ));
                }
            }
        }
        if self.table_index.contains_key(&qualified) {
            return Err(ScenarioError::new(
                line,
                field,
                format!("table {qualified} exists (ORA-00955)"),
            ));
        }
        let key = (schema.schema().to_owned(), schema.table().to_owned());
        let next_name = self.names.len() as u32;
        let name_id = *self.names.entry(key).or_insert(next_name);
        self.next_data_object += 1;
        let table = Table::new(
            schema,
            logging,
            unique,
            name_id,
            self.next_data_object,
            self.catalog.scn,
        );
        self.table_index.insert(qualified, self.tables.len());
        self.tables.push(table);
        Ok(())
    }

    /// Moves the clock; LGWR's timeout writes the log buffers that have waited long enough.
    fn set_clock(&mut self, now: jiff::civil::DateTime) {
        self.catalog.now = now;
        self.catalog.scn_times.push((self.catalog.scn, now));
        self.redo.lgwr_timeout(now, self.catalog.scn);
    }

    fn write_unsupported(&mut self, tx: &Transaction, t: usize) {
        let mut spec = self.tx_spec(
            tx,
            OperationCode::Unsupported,
            PLACEHOLDER_ROW_ID.into(),
            Some(t),
        );
        spec.sql_redo = Some("Unsupported".to_owned());
        spec.sql_undo = Some("Unsupported".to_owned());
        self.redo.write(spec);
    }

    fn configure(&mut self, line: usize, settings: DatabaseSettings) -> Result<(), ScenarioError> {
        let DatabaseSettings {
            log_mode_archivelog,
            supplemental,
            dbid,
            name,
            version,
            pdb,
            con_id,
            user,
            capture_user,
            scn,
            time,
            time_zone,
            online_log_groups,
            log_switch_records,
            scn_time_retention_seconds,
            ungranted_views,
            max_string_size_extended,
            character_set,
            national_character_set,
            dbtimezone,
        } = settings;
        if let Some(name) = character_set {
            self.catalog.character_set = name;
        }
        if let Some(name) = national_character_set {
            self.catalog.national_character_set = name;
        }
        if let Some(zone) = dbtimezone {
            // DBTIMEZONE is an offset or a region of the tz database (SQL Language
            // Reference, "DBTIMEZONE").
            let valid = crate::source::storage::parse_utc_offset(&zone).is_some()
                || jiff::tz::TimeZone::get(&zone).is_ok();
            if !valid {
                return Err(ScenarioError::new(
                    line,
                    "database.dbtimezone",
                    format!("{zone:?} is neither an offset ±HH:MM nor a time zone region"),
                ));
            }
            self.catalog.dbtimezone = zone;
        }
        if let Some(extended) = max_string_size_extended {
            self.catalog.max_string_size_extended = extended;
        }
        if let Some(scn) = scn {
            if scn < self.catalog.scn {
                return Err(ScenarioError::new(
                    line,
                    "database.scn",
                    format!("the SCN is already {}", self.catalog.scn),
                ));
            }
            self.catalog.scn = scn;
        }
        if let Some(time) = time {
            let parsed = values::to_value(
                Json::String(time),
                &OracleType::Timestamp {
                    fractional_precision: 9,
                },
            )
            .map_err(|message| ScenarioError::new(line, "database.time", message))?;
            if let Value::Timestamp(now) = parsed {
                self.set_clock(now);
            }
        }
        if let Some(name) = time_zone {
            // The host's zone changes how the clock is shown, never the clock: rows already
            // written keep the local times they were stamped with.
            let zone = jiff::tz::TimeZone::get(&name).map_err(|error| {
                ScenarioError::new(
                    line,
                    "database.time_zone",
                    format!("{name:?} is not a time zone of the system's tz database ({error})"),
                )
            })?;
            self.catalog.time_zone = zone.clone();
            self.redo.time_zone = zone;
        }
        if let Some(archivelog) = log_mode_archivelog {
            self.catalog.archivelog = archivelog;
            self.redo.archivelog = archivelog;
        }
        for (flag, setting) in supplemental {
            let yes = setting != "NO";
            let logging = &mut self.catalog.supplemental;
            match flag.as_str() {
                "min" => {
                    logging.min = match setting.as_str() {
                        "YES" => MinimalLogging::Yes,
                        "IMPLICIT" => MinimalLogging::Implicit,
                        _ => MinimalLogging::No,
                    };
                }
                "pk" => logging.primary_key = yes,
                "ui" => logging.unique = yes,
                "fk" => logging.foreign_key = yes,
                _ => logging.all = yes,
            }
        }
        if let Some(dbid) = dbid {
            self.catalog.dbid = dbid;
        }
        if let Some(name) = name {
            self.catalog.name = name;
        }
        if let Some(version) = version {
            self.catalog.version = version;
        }
        if pdb.is_some() || con_id.is_some() {
            let pdb: Arc<str> = pdb.map_or_else(
                || {
                    self.catalog
                        .pdb
                        .clone()
                        .unwrap_or_else(|| Arc::from("ORCLPDB1"))
                },
                Arc::from,
            );
            let con_id = con_id.unwrap_or(if self.catalog.con_id == 0 {
                3
            } else {
                self.catalog.con_id
            });
            self.catalog.pdb = Some(Arc::clone(&pdb));
            self.catalog.con_id = con_id;
            self.redo.container = Some((pdb, con_id));
            self.catalog.privileges.insert("SET CONTAINER".to_owned());
        }
        if let Some(user) = user {
            self.catalog.default_user = Arc::from(user);
        }
        if let Some(user) = capture_user {
            self.catalog.capture_user = Arc::from(user);
        }
        if let Some(groups) = online_log_groups {
            self.redo.online_groups = groups;
        }
        if let Some(records) = log_switch_records {
            self.redo.switch_records = records.max(1);
        }
        if let Some(seconds) = scn_time_retention_seconds {
            self.catalog.scn_time_retention_seconds = seconds;
        }
        if let Some(views) = ungranted_views {
            self.catalog.ungranted_views = views.into_iter().collect();
        }
        Ok(())
    }
}
