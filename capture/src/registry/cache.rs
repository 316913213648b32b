//! The ids the registry gave, per subject and schema text: a schema is sent to the registry once
//! per subject for the life of the client, whatever the encoder caches. Ids never change once
//! given (the registry's ids are immutable), so nothing is ever evicted; the entries are one per
//! table structure version and record kind.

use std::collections::HashMap;

/// Ids by subject, then by schema text.
#[derive(Debug, Default)]
pub struct IdCache {
    ids: HashMap<String, HashMap<String, u32>>,
}

impl IdCache {
    /// The id `schema` has under `subject`, when known.
    pub fn get(&self, subject: &str, schema: &str) -> Option<u32> {
        self.ids.get(subject)?.get(schema).copied()
    }

    /// Remembers the id of `schema` under `subject`.
    pub fn insert(&mut self, subject: &str, schema: &str, id: u32) {
        self.ids
            .entry(subject.to_owned())
            .or_default()
            .insert(schema.to_owned(), id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_kept_per_subject_and_schema() {
        let mut cache = IdCache::default();
        cache.insert("t-value", "{\"type\":\"int\"}", 7);
        assert_eq!(cache.get("t-value", "{\"type\":\"int\"}"), Some(7));
        // The same schema under another subject is another registration.
        assert_eq!(cache.get("u-value", "{\"type\":\"int\"}"), None);
        assert_eq!(cache.get("t-value", "{\"type\":\"long\"}"), None);
    }
}
