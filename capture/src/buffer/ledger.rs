//! The released ledger: transactions the buffer dropped without their end record.
//!
//! An orphan released or a transaction discarded for its age is gone from the buffer, but its
//! COMMIT may still be mined later (the orphan check was wrong, or the discarded transaction simply
//! went on). Publishing that COMMIT would publish only the part mined after the drop, so the
//! ledger remembers the id and a later COMMIT stops with CDC-7001. The Kafka sink carries the
//! ledger in the bookmark (it is `serde`), so the promise survives a restart.
//!
//! # Expiry
//! Oracle gives a transaction an undo slot (undo segment `USN` and `SLOT`) and the slot a new
//! sequence (`XIDSQN`) each time it is reused; a slot holds one transaction at a time. So once any
//! row of a transaction on the same container, USN and slot with a *higher* sequence is mined, the
//! transaction that held the slot before has ended in the database, and no COMMIT for it can follow
//! in the redo after that point: its entry may go. [`ReleasedLedger::observe`] applies this rule to
//! every mined row; sequence-less undo rows (XIDSQN 0xFFFFFFFF) never expire anything. The
//! container is part of the slot because PDBs in local undo mode have undo segments of their own.
//! It follows that the ledger holds at most one entry per slot.
//!
//! A ROLLBACK mined for a ledgered transaction also removes it: its end is known and harmless.
//!
//! As a last resort the ledger holds at most [`LEDGER_MAX_ENTRIES`] entries (it travels in every
//! bookmark); past that the oldest entry is evicted with a warning. The trade-off: if the
//! evicted transaction's COMMIT arrived afterwards (its slot never reused meanwhile, thousands of
//! releases later), the capture would publish the part mined after the release instead of
//! stopping. Reaching the cap means thousands of transactions released and their slots never
//! reused, which points at a broken orphan setting worth the warning.
//!
//! Sequences wrap after 2^32 reuses of one slot; the comparison ignores that (a wrapped slot makes
//! an entry live longer, never shorter).

use std::collections::HashMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::source::Xid;

/// Most entries kept: the ledger is part of every bookmark.
pub const LEDGER_MAX_ENTRIES: usize = 4096;

/// Why a transaction joined the ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReleaseReason {
    /// Released as an orphan (`transaction-orphan-released`).
    OrphanReleased,
    /// Dropped for its age (`transaction-discarded`).
    Discarded,
}

/// One released or discarded transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub con_id: Option<u32>,
    pub xid: Xid,
    pub reason: ReleaseReason,
    /// The highest SCN mined when it was released.
    pub released_at_scn: u64,
}

type SlotKey = (Option<u32>, u16, u16);

fn slot_key(con_id: Option<u32>, xid: &Xid) -> SlotKey {
    (con_id, xid.usn(), xid.slot())
}

/// Released and discarded transactions, at most one per undo slot (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReleasedLedger {
    /// Entry and its release order (for eviction and a stable serialised order).
    by_slot: HashMap<SlotKey, (u64, LedgerEntry)>,
    releases: u64,
}

impl ReleasedLedger {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.by_slot.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_slot.is_empty()
    }

    /// Records a release; returns the entry evicted to stay within [`LEDGER_MAX_ENTRIES`].
    pub fn insert(&mut self, entry: LedgerEntry) -> Option<LedgerEntry> {
        let key = slot_key(entry.con_id, &entry.xid);
        if let Some((_, held)) = self.by_slot.get(&key)
            && held.xid.sequence() > entry.xid.sequence()
        {
            // A later holder of the slot is already here: this one ended before it.
            return None;
        }
        self.releases += 1;
        self.by_slot.insert(key, (self.releases, entry));
        if self.by_slot.len() <= LEDGER_MAX_ENTRIES {
            return None;
        }
        let oldest = self
            .by_slot
            .iter()
            .min_by_key(|(_, (order, _))| *order)
            .map(|(key, _)| *key)?;
        let (_, evicted) = self.by_slot.remove(&oldest)?;
        tracing::warn!(
            xid = %evicted.xid,
            limit = LEDGER_MAX_ENTRIES,
            "The released ledger is full; its oldest entry is forgotten, so a late COMMIT of that \
             transaction would no longer stop the capture."
        );
        Some(evicted)
    }

    /// The entry for exactly this transaction.
    pub fn get(&self, con_id: Option<u32>, xid: &Xid) -> Option<&LedgerEntry> {
        self.by_slot
            .get(&slot_key(con_id, xid))
            .map(|(_, entry)| entry)
            .filter(|entry| entry.xid == *xid)
    }

    /// Removes the entry for exactly this transaction (its ROLLBACK was mined).
    pub fn remove(&mut self, con_id: Option<u32>, xid: &Xid) -> Option<LedgerEntry> {
        self.get(con_id, xid)?;
        self.by_slot
            .remove(&slot_key(con_id, xid))
            .map(|(_, entry)| entry)
    }

    /// Applies the expiry rule to a mined row's transaction id.
    pub fn observe(&mut self, con_id: Option<u32>, xid: &Xid) {
        if xid.is_sequenceless() || self.by_slot.is_empty() {
            return;
        }
        let key = slot_key(con_id, xid);
        if let Some((_, held)) = self.by_slot.get(&key)
            && held.xid.sequence() < xid.sequence()
        {
            tracing::debug!(released = %held.xid, reuse = %xid, "A released transaction's undo slot was reused; its ledger entry expires.");
            self.by_slot.remove(&key);
        }
    }

    /// Entries in release order.
    pub fn entries(&self) -> Vec<&LedgerEntry> {
        let mut entries: Vec<_> = self.by_slot.values().collect();
        entries.sort_by_key(|(order, _)| *order);
        entries.into_iter().map(|(_, entry)| entry).collect()
    }
}

/// The serialised form (the bookmark's `released`): the entries as a list, in release order.
impl Serialize for ReleasedLedger {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.entries())
    }
}

impl<'de> Deserialize<'de> for ReleasedLedger {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut ledger = Self::new();
        for entry in Vec::<LedgerEntry>::deserialize(d)? {
            ledger.insert(entry);
        }
        Ok(ledger)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(usn: u16, slot: u16, sequence: u32) -> LedgerEntry {
        LedgerEntry {
            con_id: Some(3),
            xid: Xid::from_parts(usn, slot, sequence),
            reason: ReleaseReason::OrphanReleased,
            released_at_scn: 100,
        }
    }

    #[test]
    fn a_higher_sequence_on_the_same_slot_expires_the_entry() {
        let mut ledger = ReleasedLedger::new();
        ledger.insert(entry(1, 2, 10));
        let xid = Xid::from_parts(1, 2, 10);
        // Same sequence, a sequence-less undo row, another slot, another container: kept.
        for (con, other) in [
            (Some(3), xid),
            (Some(3), Xid::from_parts(1, 2, u32::MAX)),
            (Some(3), Xid::from_parts(1, 3, 99)),
            (Some(4), Xid::from_parts(1, 2, 99)),
            (Some(3), Xid::from_parts(1, 2, 9)),
        ] {
            ledger.observe(con, &other);
            assert!(ledger.get(Some(3), &xid).is_some(), "{other}");
        }
        ledger.observe(Some(3), &Xid::from_parts(1, 2, 11));
        assert!(ledger.get(Some(3), &xid).is_none());
        assert!(ledger.is_empty());
    }

    #[test]
    fn get_and_remove_need_the_exact_transaction() {
        let mut ledger = ReleasedLedger::new();
        ledger.insert(entry(1, 2, 10));
        assert!(ledger.get(Some(3), &Xid::from_parts(1, 2, 11)).is_none());
        assert!(ledger.remove(Some(3), &Xid::from_parts(1, 2, 9)).is_none());
        assert!(ledger.remove(Some(3), &Xid::from_parts(1, 2, 10)).is_some());
        assert!(ledger.is_empty());
    }

    #[test]
    fn the_cap_evicts_the_oldest() {
        let mut ledger = ReleasedLedger::new();
        for i in 0..LEDGER_MAX_ENTRIES {
            assert_eq!(ledger.insert(entry(i as u16, 0, 1)), None);
        }
        let evicted = ledger.insert(entry(u16::MAX, 1, 1)).unwrap();
        assert_eq!(evicted, entry(0, 0, 1));
        assert_eq!(ledger.len(), LEDGER_MAX_ENTRIES);
    }

    #[test]
    fn serde_round_trips_in_release_order() {
        let mut ledger = ReleasedLedger::new();
        ledger.insert(entry(5, 1, 7));
        ledger.insert(LedgerEntry {
            con_id: None,
            reason: ReleaseReason::Discarded,
            ..entry(1, 1, 7)
        });
        let json = serde_json::to_value(&ledger).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"con_id": 3, "xid": "0500010007000000", "reason": "orphan-released", "released_at_scn": 100},
                {"xid": "0100010007000000", "reason": "discarded", "released_at_scn": 100},
            ])
        );
        let back: ReleasedLedger = serde_json::from_value(json).unwrap();
        assert_eq!(back.entries(), ledger.entries());
        assert!(
            serde_json::from_str::<ReleasedLedger>(
                r#"[{"xid":"zz","reason":"discarded","released_at_scn":1}]"#
            )
            .is_err()
        );
    }
}
