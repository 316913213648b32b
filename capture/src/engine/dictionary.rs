//! The captured tables' dictionary, read through the boundary and reloaded after DDL.
//!
//! While a window streams, the boundary is busy (the row stream borrows it), so a DDL row cannot
//! reload its table on the spot. [`CapturedTables::refresh`] marks the table stale instead; the
//! mining loop then ends the window right after the DDL's transaction, reloads the stale tables
//! ([`CapturedTables::reload_stale`]) and mines on from the DDL's commit SCN, so every later row
//! is typed by the new columns.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::assemble::TableLookup;
use crate::dictionary::TableSchema;
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
