//! The schema history: every structure of every captured table, each with the SCN from which it
//! applies, so that a capture resumed at any SCN types redo with the structure in force when it
//! was written (Debezium's `schema.history.internal`).
//!
//! A version applies to transactions committed at or after its `from_scn`:
//! - at the capture's first start, every captured table's catalog structure, from the bookmark's
//!   restart SCN (in every snapshot mode);
//! - at each DDL on a captured table committed at SCN `c`, the catalog structure read right
//!   after it, from `c + 1` (Oracle's DDL lock means no transaction writing the table is open
//!   across the DDL, so a transaction committed after it was written with the new structure).
//!
//! Where it is kept: the compacted topic `<prefix>.redoline.schema-history` with Kafka, written in
//! the page (Kafka transaction) of the DDL's transaction, before the bookmark that passes it; the
//! side file `<data file>.schema-history` with the file sink, synced before that page's
//! bookmark. Each version has a key of its own (`{"table": <id>, "scn": "<from_scn>"}`), so
//! compaction never removes a version: it only folds the copies a restart writes when it mines a
//! DDL again (same key, same value). A resumable bookmark can therefore always find the version
//! in force at its restart SCN. The value is Debezium's history record shape (see
//! [`HistoryRecord`]).
//!
//! The history is read back whole at start; a record that cannot be read stops the capture with
//! CDC-5002 (the record's place in the message), because typing redo with a guessed structure
//! would emit wrong rows.

pub mod object_row;
pub mod structure;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::dictionary::TableSchema;
use crate::record_location::{RecordLocation, unreadable};
use crate::redo::ddl::{DdlKind, parse_ddl};
use crate::stop::Stop;
pub use structure::{ColumnStructure, StructureError, TableStructure};

/// `tableChanges[].type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ChangeKind {
    Create,
    Alter,
    Drop,
}

impl ChangeKind {
    /// What a DDL statement did to its table: `CREATE TABLE` and `DROP TABLE` by name, anything
    /// else that changed a captured table (ALTER, RENAME, ...) is an alteration.
    pub fn of_ddl(sql: &str) -> Self {
        match parse_ddl(sql).map(|ddl| ddl.kind) {
            Ok(DdlKind::CreateTable) => Self::Create,
            Ok(DdlKind::DropTable) => Self::Drop,
            _ => Self::Alter,
        }
    }
}

/// One entry of `tableChanges`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableChange {
    #[serde(rename = "type")]
    pub kind: ChangeKind,
    /// `"DB"."SCHEMA"."TABLE"`.
    pub id: String,
    pub table: TableStructure,
}

impl TableChange {
    pub fn new(kind: ChangeKind, database: &str, table: &TableSchema) -> Self {
        Self {
            kind,
            id: table_id(database, table.schema(), table.table()),
            table: TableStructure::of(table),
        }
    }
}

/// A `tableChanges` entry of a schema change event, as Debezium's Connect serializer writes it
/// ([`structure::ConnectTableStructure`]).
#[derive(Debug, Serialize)]
pub struct ConnectTableChange<'a> {
    #[serde(rename = "type")]
    kind: ChangeKind,
    id: &'a str,
    table: structure::ConnectTableStructure<'a>,
}

impl TableChange {
    /// The form schema change events carry.
    pub fn connect_form(&self) -> ConnectTableChange<'_> {
        ConnectTableChange {
            kind: self.kind,
            id: &self.id,
            table: self.table.connect_form(),
        }
    }
}

/// Debezium's table identifier, `"DB"."SCHEMA"."TABLE"`.
pub fn table_id(database: &str, owner: &str, table: &str) -> String {
    format!("\"{database}\".\"{owner}\".\"{table}\"")
}

/// `(owner, table)` of a [`table_id`] (Oracle names cannot contain a double quote).
fn parse_table_id(id: &str) -> Option<(String, String)> {
    let inner = id.strip_prefix('"')?.strip_suffix('"')?;
    let parts: Vec<&str> = inner.split("\".\"").collect();
    match parts.as_slice() {
        [_, owner, table] => Some(((*owner).to_owned(), (*table).to_owned())),
        _ => None,
    }
}

/// A history record's value: Debezium's history record (`source`, `position`, `ts_ms`,
/// `databaseName`, `schemaName`, `ddl`, `tableChanges`) holding one table's version;
/// `position.scn` is the version's `from_scn`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryRecord {
    pub source: HistorySource,
    pub position: HistoryPosition,
    #[serde(rename = "ts_ms")]
    pub ts_ms: i64,
    pub database_name: String,
    pub schema_name: String,
    /// The DDL that made this version; `null` for a structure read at the first start.
    pub ddl: Option<String>,
    pub table_changes: Vec<TableChange>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistorySource {
    /// The topic prefix (Debezium's `topic.prefix`, written as `server`).
    pub server: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryPosition {
    /// Decimal, as Debezium writes SCNs.
    pub scn: String,
}

#[derive(Serialize, Deserialize)]
struct HistoryKey {
    table: String,
    scn: String,
}

/// A version to write to the history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewVersion {
    pub table: Arc<TableSchema>,
    pub from_scn: u64,
    pub kind: ChangeKind,
    pub ddl: Option<String>,
}

impl NewVersion {
    /// The history record's key and value.
    pub fn encode(
        &self,
        topic_prefix: &str,
        database: &str,
        at: jiff::Timestamp,
    ) -> (String, String) {
        let id = table_id(database, self.table.schema(), self.table.table());
        let key = HistoryKey {
            table: id,
            scn: self.from_scn.to_string(),
        };
        let record = HistoryRecord {
            source: HistorySource {
                server: topic_prefix.to_owned(),
            },
            position: HistoryPosition {
                scn: self.from_scn.to_string(),
            },
            ts_ms: at.as_millisecond(),
            database_name: database.to_owned(),
            schema_name: self.table.schema().to_owned(),
            ddl: self.ddl.clone(),
            table_changes: vec![TableChange::new(self.kind, database, &self.table)],
        };
        // Strings, integers and lists only: serialising cannot fail.
        (
            serde_json::to_string(&key).unwrap_or_default(),
            serde_json::to_string(&record).unwrap_or_default(),
        )
    }
}

/// Every known version of every table, by `(owner, table)` then `from_scn`, and the versions
/// that know their object number by `OBJECT_ID` then `from_scn` too: a row LogMiner writes as
/// `"UNKNOWN"."OBJ# n"` names only that number, which a rename keeps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchemaHistory {
    tables: HashMap<(String, String), BTreeMap<u64, Arc<TableSchema>>>,
    objects: HashMap<u64, BTreeMap<u64, Arc<TableSchema>>>,
}

impl SchemaHistory {
    /// Folds in one record read back from `at`: a version, or with a null value (a tombstone
    /// written by hand) the removal of the version its key names. Unreadable: CDC-5002.
    pub fn load(
        &mut self,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        at: &RecordLocation,
    ) -> Result<(), Stop> {
        let refuse = |why: String| {
            unreadable(
                at,
                &format!(
                    "it is not a schema history record: {why}; restore the record or, if the \
                     history is lost, start a new capture (new kafka.topicPrefix) with a snapshot"
                ),
            )
        };
        let Some(value) = value else {
            let key: HistoryKey = serde_json::from_slice(key.unwrap_or_default())
                .map_err(|e| refuse(format!("a tombstone with an unreadable key: {e}")))?;
            let (owner, table) = parse_table_id(&key.table)
                .ok_or_else(|| refuse(format!("the table id {} is malformed", key.table)))?;
            let scn = parse_scn(&key.scn).map_err(refuse)?;
            if let Some(removed) = self
                .tables
                .get_mut(&(owner, table))
                .and_then(|versions| versions.remove(&scn))
            {
                self.forget_object_version(&removed, scn);
            }
            return Ok(());
        };
        let record: HistoryRecord =
            serde_json::from_slice(value).map_err(|e| refuse(e.to_string()))?;
        let from_scn = parse_scn(&record.position.scn).map_err(refuse)?;
        for change in &record.table_changes {
            let (owner, name) = parse_table_id(&change.id)
                .ok_or_else(|| refuse(format!("the table id {} is malformed", change.id)))?;
            let table = change
                .table
                .to_table(&owner, &name)
                .map_err(|e| refuse(format!("table {owner}.{name}: {e}")))?;
            self.insert(Arc::new(table), from_scn);
        }
        Ok(())
    }

    /// Adds a version; `false` when the same version is already known.
    pub fn insert(&mut self, table: Arc<TableSchema>, from_scn: u64) -> bool {
        let versions = self
            .tables
            .entry((table.schema().to_owned(), table.table().to_owned()))
            .or_default();
        match versions.get(&from_scn) {
            Some(known) if **known == *table => false,
            _ => {
                if let Some(replaced) = versions.insert(from_scn, Arc::clone(&table)) {
                    self.forget_object_version(&replaced, from_scn);
                }
                if let Some(object) = table.object() {
                    self.objects
                        .entry(object.object_id)
                        .or_default()
                        .insert(from_scn, table);
                }
                true
            }
        }
    }

    /// Drops `table`'s entry from the object index when it is the one held for `from_scn`.
    fn forget_object_version(&mut self, table: &Arc<TableSchema>, from_scn: u64) {
        let Some(object) = table.object() else {
            return;
        };
        if let Some(versions) = self.objects.get_mut(&object.object_id)
            && versions
                .get(&from_scn)
                .is_some_and(|held| Arc::ptr_eq(held, table))
        {
            versions.remove(&from_scn);
        }
    }

    /// Whether any version of a table with object number `object_id` is known.
    pub fn knows_object(&self, object_id: u64) -> bool {
        self.objects
            .get(&object_id)
            .is_some_and(|versions| !versions.is_empty())
    }

    /// The version of the table with object number `object_id` in force at `scn`, whatever the
    /// table was called then: the latest from at or before it. Unlike [`Self::in_force`], no
    /// version before the first: a row older than every version known for the object was
    /// written with a structure the history never saw.
    pub fn in_force_by_object(&self, object_id: u64, scn: u64) -> Option<Arc<TableSchema>> {
        self.objects
            .get(&object_id)?
            .range(..=scn)
            .next_back()
            .map(|(_, table)| Arc::clone(table))
    }

    /// The object numbers of every version of the table that knows its number: usually one,
    /// more when the name was dropped and created again.
    pub fn object_ids(&self, owner: &str, table: &str) -> Vec<u64> {
        let mut ids: Vec<u64> = self
            .tables
            .get(&(owner.to_owned(), table.to_owned()))
            .into_iter()
            .flat_map(BTreeMap::values)
            .filter_map(|version| version.object().map(|object| object.object_id))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Whether the history holds any version of the table.
    pub fn knows(&self, owner: &str, table: &str) -> bool {
        self.tables
            .get(&(owner.to_owned(), table.to_owned()))
            .is_some_and(|versions| !versions.is_empty())
    }

    /// The version recorded exactly from `from_scn`.
    pub fn version_from(
        &self,
        owner: &str,
        table: &str,
        from_scn: u64,
    ) -> Option<Arc<TableSchema>> {
        self.tables
            .get(&(owner.to_owned(), table.to_owned()))
            .and_then(|versions| versions.get(&from_scn))
            .cloned()
    }

    /// The version in force for a transaction committed at `scn`: the latest one from at or
    /// before it; before the first version, the first (the oldest structure known).
    pub fn in_force(&self, owner: &str, table: &str, scn: u64) -> Option<Arc<TableSchema>> {
        let versions = self.tables.get(&(owner.to_owned(), table.to_owned()))?;
        versions
            .range(..=scn)
            .next_back()
            .or_else(|| versions.iter().next())
            .map(|(_, table)| Arc::clone(table))
    }

    /// How many versions the history holds (all tables).
    pub fn len(&self) -> usize {
        self.tables.values().map(BTreeMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn parse_scn(text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("the SCN `{text}` is not a number"))
}

#[cfg(test)]
mod tests;
