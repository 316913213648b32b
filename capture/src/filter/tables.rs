//! Which tables are captured: the names of `spec.tables`, and those the schema and table lists
//! of `spec.filters` select, never the capture's own flush table (`mining.flushTable`). The
//! decision is made before assembly: the engine's captured tables (engine/captured_tables.rs)
//! only ever type rows of a table this selects, so a change of another table never becomes an
//! event.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::Filters;

/// Which names the configuration captures: `spec.tables`, and the names the schema and table
/// lists of `spec.filters` select (the capture's flush table never). A table is captured under a
/// name for as long as it has that name: rows of a table since renamed are matched to it by
/// object number, and captured when the name it had then is selected, whether or not the table
/// still exists under that name.
#[derive(Clone, Debug, Default)]
pub struct TableSelection {
    named: BTreeSet<(String, String)>,
    filters: Arc<Filters>,
    flush: (Option<String>, String),
}

impl TableSelection {
    pub fn new(named: &[(String, String)], filters: &Arc<Filters>, flush_table: &str) -> Self {
        Self {
            named: named.iter().cloned().collect(),
            filters: Arc::clone(filters),
            flush: flush_name(flush_table),
        }
    }

    /// Whether `owner.table` is captured.
    pub fn selects(&self, owner: &str, table: &str) -> bool {
        self.named.contains(&(owner.to_owned(), table.to_owned()))
            || !self
                .from_catalog(&[(owner.to_owned(), table.to_owned())])
                .is_empty()
    }

    /// Lists the catalog with `list_tables` (called only when the schema or table lists are in
    /// use) and returns the tables they select, the flush table left out. The listing is the
    /// caller's (a database's catalog), so the selection itself stays free of I/O.
    pub fn list<E>(
        &self,
        list_tables: impl FnOnce() -> Result<Vec<(String, String)>, E>,
    ) -> Result<Vec<(String, String)>, E> {
        if !self.filters.selects_from_catalog() {
            return Ok(Vec::new());
        }
        let chosen = self.from_catalog(&list_tables()?);
        if chosen.is_empty() {
            tracing::warn!("the schema and table lists select no table yet");
        }
        Ok(chosen)
    }

    /// Every captured table: `named` (`spec.tables`, in spec order, which the snapshot reads
    /// them in), then those the lists select ([`Self::list`]) that `named` lacks.
    pub fn captured<E>(
        &self,
        list_tables: impl FnOnce() -> Result<Vec<(String, String)>, E>,
        named: Vec<(String, String)>,
    ) -> Result<Vec<(String, String)>, E> {
        let mut tables = named;
        for listed in self.list(list_tables)? {
            if !tables.contains(&listed) {
                tables.push(listed);
            }
        }
        Ok(tables)
    }

    /// The catalog's `listed` tables that the schema and table lists select, the flush table
    /// left out (empty without lists).
    pub fn from_catalog(&self, listed: &[(String, String)]) -> Vec<(String, String)> {
        self.filters
            .catalog_tables(listed, |owner, table| self.is_flush(owner, table))
    }

    fn is_flush(&self, owner: &str, table: &str) -> bool {
        let (flush_owner, flush_table) = &self.flush;
        table == flush_table && flush_owner.as_deref().is_none_or(|o| o == owner)
    }
}

/// `(owner, table)` of `mining.flushTable` (owner optional), upper-cased as Oracle folds it.
fn flush_name(flush_table: &str) -> (Option<String>, String) {
    let upper = flush_table.to_uppercase();
    match upper.split_once('.') {
        Some((owner, table)) => (Some(owner.to_owned()), table.to_owned()),
        None => (None, upper),
    }
}
