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
//! # Bound
//! The ledger travels in every bookmark, so it holds at most `transactions.releasedLedgerMaxEntries`
//! entries (the caller passes it to [`ReleasedLedger::insert`]). It never forgets an entry to make
//! room: an entry only goes once its transaction is proven unable to commit, since forgetting one
//! would let a late COMMIT be published in part. A release that finds the ledger full is refused
//! and the capture stops with CDC-7003 before anything is dropped. A ledger read from a bookmark is
//! kept whole even above the bound (it was lowered meanwhile): it can only shrink, and the next
//! release stops. Reaching the bound means thousands of transactions released whose slots were
//! never seen reused, which points at an orphan or age setting that drops live transactions.
//!
//! Sequences wrap after 2^32 reuses of one slot; the comparison ignores that (a wrapped slot makes
//! an entry live longer, never shorter).

use std::collections::HashMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::source::Xid;

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
    /// Entry and its release order (for a stable serialised order and the oldest in CDC-7003).
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

    /// Records a release, within `max_entries` entries; a release that would add one more is
    /// refused and the ledger left as it was (see "Bound" in the module docs).
    pub fn insert(&mut self, entry: LedgerEntry, max_entries: u64) -> Result<(), LedgerFull> {
        let key = slot_key(entry.con_id, &entry.xid);
        let adds_one = !self.by_slot.contains_key(&key);
        if adds_one && self.len() as u64 >= max_entries {
            return Err(LedgerFull {
                entry,
                limit: max_entries,
            });
        }
        self.record(entry);
        Ok(())
    }

    /// Records a release without a bound.
    fn record(&mut self, entry: LedgerEntry) {
        let key = slot_key(entry.con_id, &entry.xid);
        if let Some((_, held)) = self.by_slot.get(&key)
            && held.xid.sequence() > entry.xid.sequence()
        {
            // A later holder of the slot is already here: this one ended before it.
            return;
        }
        self.releases += 1;
        self.by_slot.insert(key, (self.releases, entry));
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

/// A release refused because the ledger holds `limit` entries already.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerFull {
    /// The entry that was not recorded.
    pub entry: LedgerEntry,
    pub limit: u64,
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
            ledger.record(entry);
        }
        Ok(ledger)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(usn: u16, slot: u16, sequence: u32) -> LedgerEntry {
        LedgerEntry {
            con_id: Some(3),
            xid: Xid::from_parts(usn, slot, sequence),
            reason: ReleaseReason::OrphanReleased,
            released_at_scn: 100,
        }
    }

    /// Far from any bound.
    const ROOMY: u64 = 100;

    #[test]
    fn a_higher_sequence_on_the_same_slot_expires_the_entry() {
        let mut ledger = ReleasedLedger::new();
        ledger.insert(entry(1, 2, 10), ROOMY).unwrap();
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
        ledger.insert(entry(1, 2, 10), ROOMY).unwrap();
        assert!(ledger.get(Some(3), &Xid::from_parts(1, 2, 11)).is_none());
        assert!(ledger.remove(Some(3), &Xid::from_parts(1, 2, 9)).is_none());
        assert!(ledger.remove(Some(3), &Xid::from_parts(1, 2, 10)).is_some());
        assert!(ledger.is_empty());
    }

    #[test]
    fn a_full_ledger_refuses_a_release_and_forgets_nothing() {
        let mut ledger = ReleasedLedger::new();
        for usn in 0..4 {
            ledger.insert(entry(usn, 0, 1), 4).unwrap();
        }
        let before = ledger.clone();
        assert_eq!(
            ledger.insert(entry(9, 9, 1), 4),
            Err(LedgerFull {
                entry: entry(9, 9, 1),
                limit: 4
            })
        );
        assert_eq!(ledger, before, "nothing evicted, nothing added");
        // A later holder of a slot already held replaces its entry (the slot was reused), and an
        // earlier one adds nothing: neither needs room.
        ledger.insert(entry(0, 0, 2), 4).unwrap();
        ledger.insert(entry(1, 0, 0), 4).unwrap();
        assert_eq!(ledger.len(), 4);
        assert!(ledger.get(Some(3), &Xid::from_parts(0, 0, 2)).is_some());
        assert!(ledger.get(Some(3), &Xid::from_parts(1, 0, 1)).is_some());
        // Once an entry expires there is room again.
        ledger.observe(Some(3), &Xid::from_parts(2, 0, 5));
        ledger.insert(entry(9, 9, 1), 4).unwrap();
    }

    #[test]
    fn a_bookmark_over_a_lowered_bound_is_read_whole() {
        let mut ledger = ReleasedLedger::new();
        for usn in 0..3 {
            ledger.insert(entry(usn, 0, 1), ROOMY).unwrap();
        }
        let back: ReleasedLedger =
            serde_json::from_value(serde_json::to_value(&ledger).unwrap()).unwrap();
        assert_eq!(back.len(), 3);
        let mut back = back;
        assert!(back.insert(entry(9, 9, 1), 2).is_err());
        assert_eq!(back.len(), 3);
    }

    /// The ledger at the largest bound, every entry as long as it can be, stays within the
    /// producer's default `message.max.bytes` (1,000,000) with room for the rest of a bookmark.
    #[test]
    fn a_full_ledger_of_the_largest_entries_fits_a_kafka_message() {
        let limit = redoline_crds::v1alpha1::RELEASED_LEDGER_MAX_ENTRIES;
        let mut ledger = ReleasedLedger::new();
        for i in 0..limit {
            let i = u16::try_from(i).unwrap();
            ledger
                .insert(
                    LedgerEntry {
                        con_id: Some(u32::MAX),
                        xid: Xid::from_parts(i, u16::MAX, u32::MAX - 1),
                        reason: ReleaseReason::OrphanReleased,
                        released_at_scn: u64::MAX,
                    },
                    limit,
                )
                .unwrap();
        }
        let bytes = serde_json::to_vec(&ledger).unwrap().len();
        assert!(bytes <= 950_000, "{bytes} bytes");
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(LedgerEntry),
        Observe(Option<u32>, Xid),
        Remove(Option<u32>, Xid),
    }

    fn xid_in_few_slots() -> impl Strategy<Value = Xid> {
        (0u16..3, 0u16..3, prop_oneof![0u32..4, Just(u32::MAX)])
            .prop_map(|(usn, slot, sequence)| Xid::from_parts(usn, slot, sequence))
    }

    fn container() -> impl Strategy<Value = Option<u32>> {
        prop_oneof![Just(None), Just(Some(3)), Just(Some(4))]
    }

    fn op() -> impl Strategy<Value = Op> {
        let reason = prop_oneof![
            Just(ReleaseReason::OrphanReleased),
            Just(ReleaseReason::Discarded)
        ];
        prop_oneof![
            (container(), xid_in_few_slots(), reason, 0u64..1000).prop_map(
                |(con_id, xid, reason, released_at_scn)| Op::Insert(LedgerEntry {
                    con_id,
                    xid,
                    reason,
                    released_at_scn,
                })
            ),
            (container(), xid_in_few_slots()).prop_map(|(con, xid)| Op::Observe(con, xid)),
            (container(), xid_in_few_slots()).prop_map(|(con, xid)| Op::Remove(con, xid)),
        ]
    }

    fn same_slot(entry: &LedgerEntry, con_id: Option<u32>, xid: &Xid) -> bool {
        entry.con_id == con_id && entry.xid.usn() == xid.usn() && entry.xid.slot() == xid.slot()
    }

    proptest! {
        /// Against a list in release order: an entry goes only when its slot is seen reused
        /// (a higher sequence mined or released) or its ROLLBACK is mined; a release that finds
        /// the ledger full is refused; the serialised form reads back the same.
        #[test]
        fn the_ledger_forgets_only_what_is_proven_ended(
            max_entries in 1u64..6,
            ops in proptest::collection::vec(op(), 0..60),
        ) {
            let mut ledger = ReleasedLedger::new();
            let mut model: Vec<LedgerEntry> = Vec::new();
            for op in ops {
                match op {
                    Op::Insert(entry) => {
                        let held = model
                            .iter()
                            .position(|e| same_slot(e, entry.con_id, &entry.xid));
                        let result = ledger.insert(entry.clone(), max_entries);
                        match held {
                            Some(i) if model[i].xid.sequence() > entry.xid.sequence() => {
                                prop_assert_eq!(result, Ok(()));
                            }
                            Some(i) => {
                                prop_assert_eq!(result, Ok(()));
                                model.remove(i);
                                model.push(entry);
                            }
                            None if model.len() as u64 >= max_entries => {
                                prop_assert_eq!(result, Err(LedgerFull { entry, limit: max_entries }));
                            }
                            None => {
                                prop_assert_eq!(result, Ok(()));
                                model.push(entry);
                            }
                        }
                    }
                    Op::Observe(con_id, xid) => {
                        ledger.observe(con_id, &xid);
                        if !xid.is_sequenceless() {
                            model.retain(|e| {
                                !(same_slot(e, con_id, &xid) && e.xid.sequence() < xid.sequence())
                            });
                        }
                    }
                    Op::Remove(con_id, xid) => {
                        let removed = ledger.remove(con_id, &xid);
                        let at = model.iter().position(|e| e.con_id == con_id && e.xid == xid);
                        prop_assert_eq!(removed, at.map(|i| model.remove(i)));
                    }
                }
                prop_assert_eq!(ledger.entries(), model.iter().collect::<Vec<_>>());
                prop_assert!(ledger.len() as u64 <= max_entries);
            }
            let back: ReleasedLedger =
                serde_json::from_value(serde_json::to_value(&ledger).unwrap()).unwrap();
            prop_assert_eq!(back.entries(), ledger.entries());
        }
    }

    #[test]
    fn serde_round_trips_in_release_order() {
        let mut ledger = ReleasedLedger::new();
        ledger.insert(entry(5, 1, 7), ROOMY).unwrap();
        ledger
            .insert(
                LedgerEntry {
                    con_id: None,
                    reason: ReleaseReason::Discarded,
                    ..entry(1, 1, 7)
                },
                ROOMY,
            )
            .unwrap();
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
