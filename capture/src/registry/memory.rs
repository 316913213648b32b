//! A schema registry held in memory: a model of Confluent's Schema Registry for tests and
//! benchmarks. Subjects follow `TopicNameStrategy` (`<topic>-key`, `<topic>-value`); one id per
//! distinct schema text across subjects, as the registry gives one id per schema. It registers
//! every schema it is asked for (`auto.register.schemas=true`).

use std::collections::{BTreeMap, BTreeSet};

use super::{RegistryError, SchemaRegistry, SchemaRole, SchemaUse};

#[derive(Debug, Default)]
pub struct MemoryRegistry {
    ids: BTreeMap<String, u32>,
    subjects: BTreeMap<String, BTreeSet<u32>>,
}

impl MemoryRegistry {
    /// The schema with `id`, if any.
    pub fn schema(&self, id: u32) -> Option<&str> {
        self.ids
            .iter()
            .find(|(_, known)| **known == id)
            .map(|(schema, _)| schema.as_str())
    }

    /// The ids registered under `subject`, in order.
    pub fn versions(&self, subject: &str) -> Vec<u32> {
        self.subjects
            .get(subject)
            .map(|ids| ids.iter().copied().collect())
            .unwrap_or_default()
    }
}

impl SchemaRegistry for MemoryRegistry {
    fn id(&mut self, usage: SchemaUse<'_>, schema: &str) -> Result<u32, RegistryError> {
        let suffix = match usage.role {
            SchemaRole::Key => "key",
            SchemaRole::Value => "value",
        };
        let subject = format!("{}-{suffix}", usage.topic);
        let known = self.ids.get(schema).copied();
        let registered = known.is_some_and(|id| {
            self.subjects
                .get(&subject)
                .is_some_and(|ids| ids.contains(&id))
        });
        if let (true, Some(id)) = (registered, known) {
            return Ok(id);
        }
        let next = u32::try_from(self.ids.len())
            .unwrap_or(u32::MAX)
            .saturating_add(1);
        let id = *self.ids.entry(schema.to_owned()).or_insert(next);
        self.subjects.entry(subject).or_default().insert(id);
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value_of(topic: &str) -> SchemaUse<'_> {
        SchemaUse {
            topic,
            record_name: "p.Envelope",
            role: SchemaRole::Value,
        }
    }

    #[test]
    fn one_id_per_schema_text_and_one_version_per_subject() {
        let mut registry = MemoryRegistry::default();
        let first = registry.id(value_of("a"), "{\"type\":\"int\"}").unwrap();
        let again = registry.id(value_of("a"), "{\"type\":\"int\"}").unwrap();
        let elsewhere = registry.id(value_of("b"), "{\"type\":\"int\"}").unwrap();
        let other = registry.id(value_of("a"), "{\"type\":\"long\"}").unwrap();
        assert_eq!((first, again, elsewhere), (1, 1, 1));
        assert_eq!(other, 2);
        assert_eq!(registry.versions("a-value"), vec![1, 2]);
        assert_eq!(registry.schema(2), Some("{\"type\":\"long\"}"));
    }
}
