//! The captured tables' dictionary, read through the boundary and reloaded after DDL. With the
//! schema and table lists of `spec.filters`, the tables they select are added at start and
//! whenever the engine lists the catalog again ([`CapturedTables::add_listed`]).
//!
//! While a window streams, the boundary is busy (the row stream borrows it), so a DDL row cannot
//! reload its table on the spot. [`CapturedTables::refresh`] marks the table stale instead; the
//! mining loop then ends the window right after the DDL's transaction, reloads the stale tables
//! ([`CapturedTables::reload_stale`]) and mines on from the DDL's commit SCN, so every later row
//! is typed by the new columns.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::assemble::TableLookup;
use crate::dictionary::TableSchema;
use crate::filter::Filters;
use crate::source::{DatabaseCatalog, SourceError};

/// Captured tables by `(owner, table)`; only these are ever assembled.
#[derive(Debug, Default)]
pub struct CapturedTables {
    tables: HashMap<(String, String), Arc<TableSchema>>,
    stale: BTreeSet<(String, String)>,
}

impl CapturedTables {
    /// Reads every captured table; a missing one is [`SourceError::NoSuchTable`] (CDC-1001).
    pub fn load<S: DatabaseCatalog>(
        source: &mut S,
        names: &[(String, String)],
    ) -> Result<Self, SourceError> {
        let mut tables = HashMap::with_capacity(names.len());
        for (owner, table) in names {
            let catalog = source.table(owner, table)?;
            tables.insert((owner.clone(), table.clone()), catalog.schema);
        }
        Ok(Self {
            tables,
            stale: BTreeSet::new(),
        })
    }

    /// Loads the tables of `names` not captured yet; one dropped since it was listed is left
    /// out. Returns the names added.
    pub fn add_listed<S: DatabaseCatalog>(
        &mut self,
        source: &mut S,
        names: Vec<(String, String)>,
    ) -> Result<Vec<(String, String)>, SourceError> {
        let mut added = Vec::new();
        for name in names {
            if self.tables.contains_key(&name) {
                continue;
            }
            match source.table(&name.0, &name.1) {
                Ok(catalog) => {
                    self.tables.insert(name.clone(), catalog.schema);
                    added.push(name);
                }
                Err(SourceError::NoSuchTable { .. }) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(added)
    }

    /// The captured tables' names, sorted: what mining asks LogMiner for.
    pub fn names(&self) -> Vec<(String, String)> {
        let mut names: Vec<(String, String)> = self.tables.keys().cloned().collect();
        names.sort_unstable();
        names
    }

    /// Whether a DDL left a table to reload.
    pub fn has_stale(&self) -> bool {
        !self.stale.is_empty()
    }

    /// Reloads the tables a DDL changed. A dropped table keeps its last shape: no later row of
    /// it can exist.
    pub fn reload_stale<S: DatabaseCatalog>(&mut self, source: &mut S) -> Result<(), SourceError> {
        for key in std::mem::take(&mut self.stale) {
            match source.table(&key.0, &key.1) {
                Ok(catalog) => {
                    self.tables.insert(key, catalog.schema);
                }
                Err(SourceError::NoSuchTable { .. }) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}

/// How often the catalog is listed again for the schema and table lists: a table created later
/// that the lists select is captured from the first window after the listing that finds it.
pub const TABLE_LIST_INTERVAL: Duration = Duration::from_secs(60);

/// The catalog as the schema and table lists of `spec.filters` see it: listed at start and then
/// every [`TABLE_LIST_INTERVAL`], between mining windows. Idle without those lists.
#[derive(Debug)]
pub struct TableListing {
    filters: Arc<Filters>,
    /// The flush table (`mining.flushTable`, owner optional): the capture's own, never captured.
    flush: (Option<String>, String),
    next: Option<Instant>,
}

impl TableListing {
    pub fn new(filters: &Arc<Filters>, flush_table: &str) -> Self {
        let upper = flush_table.to_uppercase();
        let flush = match upper.split_once('.') {
            Some((owner, table)) => (Some(owner.to_owned()), table.to_owned()),
            None => (None, upper),
        };
        Self {
            filters: Arc::clone(filters),
            flush,
            next: None,
        }
    }

    /// Whether the lists are in use and the last listing is older than the interval.
    pub fn due(&self) -> bool {
        self.next.is_some_and(|next| Instant::now() >= next)
    }

    /// Lists the catalog and adds the newly selected tables to `tables`; `from_scn` is where
    /// mining goes on (for the log line), `None` at start.
    pub fn refresh<S: DatabaseCatalog>(
        &mut self,
        source: &mut S,
        tables: &mut CapturedTables,
        from_scn: Option<u64>,
    ) -> Result<(), SourceError> {
        if !self.filters.selects_from_catalog() {
            return Ok(());
        }
        let listed = source.list_tables()?;
        let (flush_owner, flush_table) = &self.flush;
        let chosen = self.filters.catalog_tables(&listed, |owner, table| {
            table == flush_table && flush_owner.as_deref().is_none_or(|o| o == owner)
        });
        let added = tables.add_listed(source, chosen)?;
        if let Some(scn) = from_scn {
            for (owner, table) in &added {
                tracing::info!(
                    table = %format!("{owner}.{table}"),
                    from_scn = scn,
                    "a table the filters select is captured from here on, without a snapshot"
                );
            }
        }
        if tables.names().is_empty() {
            tracing::warn!("the schema and table lists select no table yet");
        }
        self.next = Some(Instant::now() + TABLE_LIST_INTERVAL);
        Ok(())
    }
}

impl TableLookup for CapturedTables {
    fn table(&mut self, owner: &str, table: &str) -> Option<Arc<TableSchema>> {
        self.tables
            .get(&(owner.to_owned(), table.to_owned()))
            .cloned()
    }

    fn refresh(&mut self, owner: &str, table: &str) -> Result<(), String> {
        let key = (owner.to_owned(), table.to_owned());
        if self.tables.contains_key(&key) {
            self.stale.insert(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use redoline_crds::v1alpha1::{ColumnsSpec, FiltersSpec};

    use super::*;
    use crate::source::simulator::Simulator;

    #[test]
    fn a_listing_adds_the_tables_the_lists_select_once() {
        let mut sim = Simulator::new();
        for line in [
            r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}"#,
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
        let mut listing = TableListing::new(&filters, "redoline_logmnr_flush");
        let mut tables = CapturedTables::default();
        assert!(!listing.due(), "not listed yet");
        listing.refresh(&mut sim, &mut tables, None).unwrap();
        assert_eq!(
            tables.names(),
            [("APP".to_owned(), "ORDERS".to_owned())],
            "not HR, never the flush table"
        );
        assert!(!listing.due(), "the next listing waits for the interval");
        sim.apply_line(r#"{"ddl":"CREATE TABLE APP.LATER (ID NUMBER(8) PRIMARY KEY)"}"#)
            .unwrap();
        listing.refresh(&mut sim, &mut tables, Some(100)).unwrap();
        assert_eq!(
            tables.names(),
            [
                ("APP".to_owned(), "LATER".to_owned()),
                ("APP".to_owned(), "ORDERS".to_owned())
            ]
        );
        assert!(tables.table("APP", "LATER").is_some());
    }

    #[test]
    fn without_lists_nothing_is_listed() {
        let mut sim = Simulator::new();
        sim.apply_line(
            r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}"#,
        )
        .unwrap();
        let mut listing = TableListing::new(&Arc::new(Filters::default()), "F");
        let mut tables = CapturedTables::default();
        listing.refresh(&mut sim, &mut tables, None).unwrap();
        assert!(tables.names().is_empty());
        assert!(!listing.due());
    }
}
