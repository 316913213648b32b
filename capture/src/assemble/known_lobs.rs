//! The LOB values a transaction set, for rebuilding a later piece-wise change of the same LOB.
//!
//! An append, a trim or a write above offset 1 needs the LOB's value before it. LogMiner logs
//! only the pieces, and the row's earlier change may be many rows back (another row changed in
//! between, so the event holding the value was already emitted). Keeping every LOB value of a
//! transaction would grow with the transaction (which may be gigabytes streamed from a spill
//! file), so [`KnownLobs`] keeps the most recently set values up to a fixed budget,
//! [`KNOWN_LOB_BUDGET_BYTES`], and forgets the oldest first. A change whose earlier value was
//! never set in the transaction, or was forgotten, cannot be rebuilt: the capture stops with
//! CDC-6002 (or skips) as before, never emitting a guessed value. The transaction is assembled
//! again from its first row after a restart, so what is known at each row is the same every time.
//!
//! Values are keyed by table, ROWID and column. A deleted row's values are forgotten; DDL
//! forgets everything (a TRUNCATE empties the table, other DDL may change the columns).

use std::collections::{HashMap, VecDeque};

use crate::value::Value;

/// Bytes of LOB values (and their keys) one transaction's assembly keeps at most.
pub const KNOWN_LOB_BUDGET_BYTES: usize = 16 << 20;

/// Bookkeeping bytes counted per value besides its content and key.
const ENTRY_OVERHEAD: usize = 96;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct LobKey {
    table: String,
    row_id: String,
    column: usize,
}

#[derive(Debug)]
struct Entry {
    value: Value,
    size: usize,
    /// When it was set, to tell its place in `order` from older places of the same key.
    stamp: u64,
}

/// The latest LOB values of a transaction, within a byte budget.
#[derive(Debug)]
pub struct KnownLobs {
    budget: usize,
    entries: HashMap<LobKey, Entry>,
    /// Keys oldest first, with the stamp they were set at; a stale stamp is a replaced value.
    order: VecDeque<(LobKey, u64)>,
    bytes: usize,
    next_stamp: u64,
}

impl Default for KnownLobs {
    fn default() -> Self {
        Self::with_budget(KNOWN_LOB_BUDGET_BYTES)
    }
}

impl KnownLobs {
    pub fn with_budget(budget: usize) -> Self {
        Self {
            budget,
            entries: HashMap::new(),
            order: VecDeque::new(),
            bytes: 0,
            next_stamp: 0,
        }
    }

    /// Records `value` as the LOB's current value; only LOB contents are kept (an
    /// `EMPTY_CLOB()` placeholder is an empty value, NULL is kept as NULL).
    pub fn remember(&mut self, table: &str, row_id: &str, column: usize, value: &Value) {
        let content = match value {
            Value::Text(text) => text.len(),
            Value::Bytes(bytes) => bytes.len(),
            Value::LobPlaceholder(_) | Value::Null => 0,
            _ => return,
        };
        let key = LobKey {
            table: table.to_owned(),
            row_id: row_id.to_owned(),
            column,
        };
        self.remove(&key);
        let size = content + table.len() + row_id.len() + ENTRY_OVERHEAD;
        if size > self.budget {
            return;
        }
        while self.bytes + size > self.budget {
            let Some((oldest, stamp)) = self.order.pop_front() else {
                break;
            };
            if self.entries.get(&oldest).is_some_and(|e| e.stamp == stamp) {
                self.remove(&oldest);
            }
        }
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        self.bytes += size;
        self.order.push_back((key.clone(), stamp));
        self.entries.insert(
            key,
            Entry {
                value: value.clone(),
                size,
                stamp,
            },
        );
        // Replaced values leave stale places behind; drop them before they outnumber the
        // values, so `order` stays proportional to what is kept.
        if self.order.len() > 2 * self.entries.len() + 16 {
            let entries = &self.entries;
            self.order
                .retain(|(key, stamp)| entries.get(key).is_some_and(|e| e.stamp == *stamp));
        }
    }

    /// The LOB's value, when it was set in the transaction and is still kept.
    pub fn get(&self, table: &str, row_id: &str, column: usize) -> Option<&Value> {
        let key = LobKey {
            table: table.to_owned(),
            row_id: row_id.to_owned(),
            column,
        };
        self.entries.get(&key).map(|entry| &entry.value)
    }

    /// Forgets the LOB values of a deleted row.
    pub fn forget_row(&mut self, table: &str, row_id: &str, columns: usize) {
        for column in 0..columns {
            self.remove(&LobKey {
                table: table.to_owned(),
                row_id: row_id.to_owned(),
                column,
            });
        }
    }

    /// Forgets everything (after DDL).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.order.clear();
        self.bytes = 0;
    }

    fn remove(&mut self, key: &LobKey) {
        if let Some(entry) = self.entries.remove(key) {
            self.bytes -= entry.size;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &str) -> Value {
        Value::Text(value.to_owned())
    }

    #[test]
    fn the_latest_value_of_each_lob_is_kept_until_the_row_is_deleted() {
        let mut known = KnownLobs::default();
        known.remember("APP.DOCS", "R1", 2, &text("old"));
        known.remember("APP.DOCS", "R1", 2, &text("new"));
        known.remember("APP.DOCS", "R2", 2, &text("other"));
        known.remember("APP.DOCS", "R1", 1, &Value::BinaryDouble(1.0));
        assert_eq!(known.get("APP.DOCS", "R1", 2), Some(&text("new")));
        assert_eq!(known.get("APP.DOCS", "R1", 1), None, "not a LOB value");
        known.forget_row("APP.DOCS", "R1", 4);
        assert_eq!(known.get("APP.DOCS", "R1", 2), None);
        assert_eq!(known.get("APP.DOCS", "R2", 2), Some(&text("other")));
        known.clear();
        assert_eq!(known.get("APP.DOCS", "R2", 2), None);
    }

    #[test]
    fn the_oldest_values_are_forgotten_beyond_the_budget() {
        let one = 1_000 + "T".len() + "R0".len() + ENTRY_OVERHEAD;
        let mut known = KnownLobs::with_budget(3 * one);
        for n in 0..5 {
            known.remember("T", &format!("R{n}"), 0, &text(&"x".repeat(1_000)));
        }
        assert!(known.bytes <= 3 * one);
        assert_eq!(known.get("T", "R1", 0), None);
        assert!(known.get("T", "R2", 0).is_some() && known.get("T", "R4", 0).is_some());
        // A value larger than the whole budget is not kept, and its older value is dropped.
        known.remember("T", "R4", 0, &text(&"y".repeat(4 * one)));
        assert_eq!(known.get("T", "R4", 0), None);
        // Replacing one value over and over keeps the bookkeeping small.
        for n in 0..1_000 {
            known.remember("T", "R2", 0, &text(&n.to_string()));
        }
        assert!(known.order.len() <= 2 * known.entries.len() + 16);
    }
}
