//! The bookmark: where the capture stands, stored with the data it describes.
//!
//! One bookmark record per capture lives in the compacted offsets topic
//! (`<prefix>.redoline.offsets`), keyed by the capture's identity (`namespace/name`). Every page
//! carries a fresh bookmark inside its Kafka transaction, so the bookmark a `read_committed`
//! reader finds last is exactly the position of the last page that became visible.
//!
//! The value is JSON with a `format` version (seed 001's field names, snake case):
//!
//! ```json
//! {"format":1,"commit_scn":2146951,"restart_scn":2146790,
//!  "committed_xids":["07000C00F3010000"],
//!  "released":[{"con_id":3,"xid":"0A000B0057030000","reason":"orphan-released","released_at_scn":2146900}],
//!  "resetlogs_scn":1,"pdb_incarnation_scn":1920345,"journal_generation":4,
//!  "commit_time":"2024-01-02T03:04:05Z",
//!  "snapshot":{"scn":2146790,"completed":false,"tables":[
//!    {"table":"APP.ORDERS","scn":2146790,"after_row_id":"AAAR3sAAEAAAACXAAA","rows":10000,"done":false}]}}
//! ```
//!
//! `snapshot` is present while an initial snapshot runs and after it (docs/snapshot.md).
//! `incremental` is present once a streaming run has started (incremental snapshots: the known
//! tables, the queued requests with the chunk plan of the table being read, the finished ids);
//! it is an addition within format 1, absent in bookmarks written before it.
//!
//! `reposition` (`{"id":"restore-1","scn":2140000}`) names the last `spec.reposition` applied
//! (`engine::reposition`): a spec naming the same id is not applied again. The move and the id
//! are written together, in one Kafka transaction, so a move applies exactly once. An addition
//! within format 1, like `commit_time`: older bookmarks lack it.
//!
//! `commit_time` is the database time of `commit_scn` as a UTC instant (RFC 3339): the commit
//! time of the last emitted transaction, or, once a heartbeat moved the bookmark over a quiet
//! stretch, the time of the SCN mining reached. It says how recent the stored position is when
//! no capture runs to report a lag (`redoline-capture doctor`, the operator's estimate). It is
//! an addition within format 1: bookmarks written before it lack it (and read as before), and
//! an older redoline ignores it. It only moves forward, and never past the true time of
//! `commit_scn`, so a lag counted from it errs towards more lag, never less.
//!
//! Resume rule (seed 001): a transaction committed below `commit_scn`, or at `commit_scn` and
//! listed in `committed_xids`, was emitted and is skipped ([`Bookmark::already_emitted`]); mining
//! restarts at `restart_scn`, the first SCN of the oldest transaction open at the bookmark (or,
//! once that transaction is journaled, the position its journal covers).
//!
//! A value that cannot be decoded, or that a newer redoline wrote, is never taken for "no
//! bookmark": it stops the capture with CDC-5002 naming the topic, partition and offset, because
//! starting from `current` instead would silently lose every change in between.

use std::collections::BTreeSet;

use jiff::Timestamp;
use redoline_crds::StopCode;
use serde::{Deserialize, Serialize};

use crate::buffer::ReleasedLedger;
use crate::record_location::{RecordLocation, unreadable};
use crate::snapshot::SnapshotState;
use crate::snapshot::incremental::IncrementalState;
use crate::source::Xid;
use crate::stop::Stop;

/// The bookmark format this build writes, and the newest it reads.
pub const BOOKMARK_FORMAT: u32 = 1;

/// The capture's position. See the module documentation for the rules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bookmark {
    /// The version of this layout ([`BOOKMARK_FORMAT`]).
    pub format: u32,
    /// The commit SCN of the last emitted transaction.
    pub commit_scn: u64,
    /// Where mining restarts: the oldest position an open transaction still needs.
    pub restart_scn: u64,
    /// The transactions committed at exactly `commit_scn` that were emitted (upper-case hex).
    pub committed_xids: BTreeSet<Xid>,
    /// The buffer's released ledger: transactions dropped without a COMMIT (orphans, discards); a
    /// later COMMIT for one of them stops the capture with CDC-7001 instead of publishing part
    /// of it.
    #[serde(default)]
    pub released: ReleasedLedger,
    /// `V$DATABASE.RESETLOGS_CHANGE#`: the database incarnation the SCNs belong to; 0 (or absent)
    /// when not recorded, and then bound to the current incarnation at start with a warning.
    #[serde(default)]
    pub resetlogs_scn: u64,
    /// The PDB's incarnation SCN when mining per PDB (`V$PDB_INCARNATION`).
    #[serde(default)]
    pub pdb_incarnation_scn: Option<u64>,
    /// The journal generation of the run that wrote this bookmark (see `sink::journal`).
    pub journal_generation: u64,
    /// The initial snapshot's progress (`crate::snapshot`): absent for a capture that never
    /// took one; kept once completed, because a table re-read at a later SCN after ORA-01555
    /// still filters its streamed changes up to that SCN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotState>,
    /// The database time of `commit_scn` (UTC), when known: see the module documentation.
    /// Absent in a bookmark written before redoline recorded it, and until the time of a fresh
    /// capture's start position is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_time: Option<Timestamp>,
    /// Incremental snapshots (`crate::snapshot::incremental`): the tables known to the capture,
    /// the requests queued with each table's cursor, and every finished request id. Absent in a
    /// bookmark written before redoline had them: the first streaming run then knows every
    /// table it captures, and queues the spec's requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incremental: Option<IncrementalState>,
    /// The last `spec.reposition` applied; absent until one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reposition: Option<AppliedReposition>,
}

/// A `spec.reposition` the bookmark moved to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedReposition {
    pub id: String,
    pub scn: u64,
}

/// A transaction reported committed before the bookmark's last one: emitting it would break
/// commit order, so the caller has a bug or the source went backwards.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "transaction {xid} committed at SCN {commit_scn}, below the bookmark's commit SCN {bookmark_scn}"
)]
pub struct CommitOutOfOrder {
    pub xid: Xid,
    pub commit_scn: u64,
    pub bookmark_scn: u64,
}

impl Bookmark {
    /// The bookmark of a capture that has emitted nothing yet, starting at `start_scn`.
    pub fn initial(
        start_scn: u64,
        resetlogs_scn: u64,
        pdb_incarnation_scn: Option<u64>,
        journal_generation: u64,
    ) -> Self {
        Self {
            format: BOOKMARK_FORMAT,
            commit_scn: start_scn,
            restart_scn: start_scn,
            committed_xids: BTreeSet::new(),
            released: ReleasedLedger::new(),
            resetlogs_scn,
            pdb_incarnation_scn,
            journal_generation,
            snapshot: None,
            commit_time: None,
            incremental: None,
            reposition: None,
        }
    }

    /// Moves the position to `scn` for the reposition `id`, as `startPosition: scn` places a
    /// fresh capture: transactions committed at or after `scn` are emitted, mining restarts at
    /// `scn`. What the old position knew of single transactions (those emitted at its commit
    /// SCN, the released ledger) describes another stretch of redo and is dropped; the
    /// incarnation, the journal generation and the snapshot record stay.
    pub fn reposition(&mut self, id: &str, scn: u64) {
        self.commit_scn = scn;
        self.restart_scn = scn;
        self.committed_xids.clear();
        self.released = ReleasedLedger::new();
        self.commit_time = None;
        self.reposition = Some(AppliedReposition {
            id: id.to_owned(),
            scn,
        });
    }

    /// The bookmark an earlier run stored, checked against the database it resumes on (its
    /// RESETLOGS SCN and, mining a PDB, the PDB's incarnation SCN): one of another incarnation
    /// is CDC-2003 (its SCNs mean other changes there), one that cannot be read CDC-5002. One
    /// written without the incarnation is bound to the current one, with a warning, since a
    /// recovery before it was recorded cannot be detected.
    pub fn resume(
        stored: serde_json::Value,
        resetlogs_scn: u64,
        pdb_incarnation_scn: Option<u64>,
    ) -> Result<Self, Stop> {
        let mut bookmark: Bookmark = serde_json::from_value(stored).map_err(|error| {
            Stop::new(
                StopCode::BookmarkUnreadable,
                format!("the stored bookmark cannot be read: {error}"),
            )
        })?;
        bookmark.bind_unrecorded_incarnation(resetlogs_scn, pdb_incarnation_scn);
        if bookmark.resetlogs_scn != resetlogs_scn
            || (pdb_incarnation_scn.is_some()
                && bookmark.pdb_incarnation_scn.is_some()
                && bookmark.pdb_incarnation_scn != pdb_incarnation_scn)
        {
            return Err(Stop::new(
                StopCode::IncarnationMismatch,
                format!(
                    "the bookmark belongs to incarnation RESETLOGS SCN {} (PDB {:?}), the \
                     database is at RESETLOGS SCN {} (PDB {:?}); take a new snapshot and reset \
                     the bookmark",
                    bookmark.resetlogs_scn,
                    bookmark.pdb_incarnation_scn,
                    resetlogs_scn,
                    pdb_incarnation_scn
                ),
            ));
        }
        Ok(bookmark)
    }

    /// See [`Bookmark::resume`]: the incarnation a bookmark written without it belongs to.
    fn bind_unrecorded_incarnation(&mut self, resetlogs_scn: u64, pdb_incarnation: Option<u64>) {
        if self.resetlogs_scn == 0 {
            tracing::warn!(
                resetlogs_scn,
                "the bookmark records no database incarnation: it is bound to the current one; \
                 reset the bookmark if the database was recovered to a point in time since it \
                 was written"
            );
            self.resetlogs_scn = resetlogs_scn;
        }
        if self.pdb_incarnation_scn.is_none() && pdb_incarnation.is_some() {
            tracing::warn!(
                pdb_incarnation_scn = pdb_incarnation,
                "the bookmark records no PDB incarnation: it is bound to the current one; reset \
                 the bookmark if the PDB was recovered or flashed back since it was written"
            );
            self.pdb_incarnation_scn = pdb_incarnation;
        }
    }

    /// Where mining restarts once a page commits. While transactions are open, `pin` (the
    /// first SCN of the oldest, or where its journal ends once it is journaled), so a restart
    /// mines each from its beginning. With none open: the last commit when the page carries
    /// transactions, and no move for a page of journal records alone.
    pub fn move_restart(&mut self, pin: Option<u64>, page_has_transactions: bool) {
        match pin {
            Some(pin) => self.restart_scn = pin,
            None if page_has_transactions => self.restart_scn = self.commit_scn,
            None => {}
        }
    }

    /// The resume rule: whether a transaction committed at `commit_scn` was emitted already.
    pub fn already_emitted(&self, commit_scn: u64, xid: &Xid) -> bool {
        commit_scn < self.commit_scn
            || (commit_scn == self.commit_scn && self.committed_xids.contains(xid))
    }

    /// Moves the bookmark past one more emitted transaction. Transactions must come in commit
    /// order; several may share a commit SCN (they then all join `committed_xids`).
    pub fn record_commit(&mut self, commit_scn: u64, xid: Xid) -> Result<(), CommitOutOfOrder> {
        if commit_scn < self.commit_scn {
            return Err(CommitOutOfOrder {
                xid,
                commit_scn,
                bookmark_scn: self.commit_scn,
            });
        }
        if commit_scn > self.commit_scn {
            self.commit_scn = commit_scn;
            self.committed_xids.clear();
        }
        self.committed_xids.insert(xid);
        Ok(())
    }

    /// Moves the bookmark to `scn` on a quiet database: mining has given every row at or below
    /// `scn` to the buffer and no transaction is open, so a restart has nothing to mine below it
    /// and every transaction committed below it was emitted (or touched no captured table). One
    /// committed at `scn` itself already moved the bookmark there and is listed, so it stays
    /// listed. `time` is the database time of `scn` when it could be read; without it the
    /// commit time stays where it was, which only makes the position look older. Never moves
    /// backwards.
    pub fn pass_idle(&mut self, scn: u64, time: Option<Timestamp>) {
        if scn > self.commit_scn {
            self.commit_scn = scn;
            self.committed_xids.clear();
        }
        self.restart_scn = self.restart_scn.max(scn);
        if let Some(time) = time {
            self.reached_time(time);
        }
    }

    /// Records `time` as the database time of `commit_scn` or of an SCN below it (the commit
    /// time of the transaction just recorded, `SCN_TO_TIMESTAMP` of the position): the commit
    /// time moves to it unless it is already later.
    pub fn reached_time(&mut self, time: Timestamp) {
        if self.commit_time.is_none_or(|known| known < time) {
            self.commit_time = Some(time);
        }
    }

    /// The record value.
    pub fn encode(&self) -> String {
        // Only integers, strings and lists: serialising cannot fail, but never panic if it did.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads a record value found at `at`; anything unreadable is CDC-5002.
    pub fn decode(value: &[u8], at: &RecordLocation) -> Result<Self, Stop> {
        let bookmark: Bookmark = serde_json::from_slice(value)
            .map_err(|e| unreadable(at, &format!("it is not a bookmark: {e}")))?;
        if bookmark.format > BOOKMARK_FORMAT {
            return Err(unreadable(
                at,
                &format!(
                    "it has format {}, and this redoline reads formats up to {BOOKMARK_FORMAT}; \
                     run a newer redoline",
                    bookmark.format
                ),
            ));
        }
        Ok(bookmark)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::{LedgerEntry, ReleaseReason};
    use proptest::prelude::*;

    #[test]
    fn a_quiet_database_moves_the_bookmark_forward_only() {
        let xid = Xid::from_parts(7, 12, 1);
        let mut bookmark = Bookmark::initial(100, 1, None, 0);
        bookmark.record_commit(120, xid).unwrap();
        bookmark.pass_idle(150, None);
        assert_eq!((bookmark.commit_scn, bookmark.restart_scn), (150, 150));
        assert!(bookmark.committed_xids.is_empty());
        assert!(bookmark.already_emitted(149, &xid));
        bookmark.record_commit(150, xid).unwrap();
        bookmark.pass_idle(150, None);
        assert!(
            bookmark.already_emitted(150, &xid),
            "a commit at the SCN stays listed"
        );
        bookmark.pass_idle(140, None);
        assert_eq!((bookmark.commit_scn, bookmark.restart_scn), (150, 150));
        assert!(bookmark.already_emitted(150, &xid), "never backwards");
    }

    #[test]
    fn a_reposition_moves_both_positions_and_forgets_the_old_stretch() {
        let mut bookmark = Bookmark::initial(100, 1, None, 3);
        bookmark.record_commit(120, xid(1)).unwrap();
        bookmark.reached_time(time(10));
        bookmark.reposition("restore-1", 90);
        assert_eq!((bookmark.commit_scn, bookmark.restart_scn), (90, 90));
        assert!(bookmark.committed_xids.is_empty());
        assert_eq!(bookmark.commit_time, None);
        assert_eq!(bookmark.journal_generation, 3);
        // Commits at the SCN itself are emitted again, those below it are not.
        assert!(!bookmark.already_emitted(90, &xid(1)));
        assert!(bookmark.already_emitted(89, &xid(1)));
        assert_eq!(
            bookmark.reposition,
            Some(AppliedReposition {
                id: "restore-1".into(),
                scn: 90
            })
        );
    }

    #[test]
    fn a_bookmark_written_before_repositions_existed_still_loads() {
        let old = r#"{"format":1,"commit_scn":5,"restart_scn":4,"committed_xids":[],"journal_generation":0}"#;
        let bookmark = Bookmark::decode(old.as_bytes(), &at()).unwrap();
        assert_eq!(bookmark.reposition, None);
        assert!(!bookmark.encode().contains("reposition"));
    }

    fn time(second: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + second).unwrap()
    }

    #[test]
    fn the_commit_time_follows_commits_and_quiet_stretches_forward_only() {
        let mut bookmark = Bookmark::initial(100, 1, None, 0);
        assert_eq!(
            bookmark.commit_time, None,
            "a fresh position has no time yet"
        );
        bookmark.record_commit(120, xid(1)).unwrap();
        bookmark.reached_time(time(10));
        assert_eq!(bookmark.commit_time, Some(time(10)));
        // A heartbeat over a quiet stretch: the time of the SCN mining reached.
        bookmark.pass_idle(150, Some(time(70)));
        assert_eq!(
            (bookmark.commit_scn, bookmark.commit_time),
            (150, Some(time(70)))
        );
        // The time could not be read: the position moves, its time stays (older, never newer).
        bookmark.pass_idle(160, None);
        assert_eq!(
            (bookmark.commit_scn, bookmark.commit_time),
            (160, Some(time(70)))
        );
        // Never backwards (a RAC commit stamped a little earlier than the one before).
        bookmark.reached_time(time(65));
        assert_eq!(bookmark.commit_time, Some(time(70)));
        let decoded = Bookmark::decode(bookmark.encode().as_bytes(), &at()).unwrap();
        assert_eq!(decoded.commit_time, Some(time(70)));
        assert!(
            bookmark
                .encode()
                .contains(r#""commit_time":"2023-11-14T22:14:30Z""#),
            "{}",
            bookmark.encode()
        );
    }

    #[test]
    fn a_bookmark_written_before_incremental_snapshots_decodes_and_round_trips_them() {
        use crate::snapshot::incremental::IncrementalState;
        use crate::source::chunks::RowRange;
        let old = br#"{"format":1,"commit_scn":10,"restart_scn":9,"committed_xids":[],"resetlogs_scn":1,"journal_generation":0,"commit_time":"2023-11-14T22:13:20Z"}"#;
        let mut bookmark = Bookmark::decode(old, &at()).unwrap();
        assert_eq!(bookmark.incremental, None);
        assert!(
            !bookmark.encode().contains("incremental"),
            "absent stays absent"
        );
        let mut state = IncrementalState::new(["APP.A".to_owned()]);
        state.tables_joined(["APP.B".to_owned()], 11, true);
        let chunk = state.next_chunk().unwrap();
        let plan = vec![
            RowRange::RowId {
                lo: "AAAR3sAAEAAAACAAAA".into(),
                hi: "AAAR3sAAEAAAACfH/8".into(),
            },
            RowRange::whole_key(),
        ];
        state.plan(&chunk, plan, time(1));
        let chunk = state.next_chunk().unwrap();
        state.record_chunk(&chunk, 2, time(1));
        bookmark.incremental = Some(state);
        let again = Bookmark::decode(bookmark.encode().as_bytes(), &at()).unwrap();
        assert_eq!(again, bookmark);
    }

    #[test]
    fn a_bookmark_written_before_the_commit_time_still_decodes() {
        // What redoline wrote before `commit_time` existed (no `snapshot`, no `commit_time`).
        let old = br#"{"format":1,"commit_scn":2146951,"restart_scn":2146790,"committed_xids":["07000C00F3010000"],"released":[],"resetlogs_scn":1,"pdb_incarnation_scn":null,"journal_generation":4}"#;
        let bookmark = Bookmark::decode(old, &at()).unwrap();
        assert_eq!(
            (bookmark.commit_scn, bookmark.commit_time),
            (2_146_951, None)
        );
        assert!(
            !bookmark.encode().contains("commit_time"),
            "an unknown time is left out, as before"
        );
        let bad_time = br#"{"format":1,"commit_scn":1,"restart_scn":1,"committed_xids":[],"resetlogs_scn":1,"journal_generation":0,"commit_time":"yesterday"}"#;
        assert_eq!(
            Bookmark::decode(bad_time, &at()).unwrap_err().code,
            StopCode::BookmarkUnreadable
        );
    }

    fn at() -> RecordLocation {
        RecordLocation {
            topic: "sales.redoline.offsets".into(),
            partition: 0,
            offset: 41,
        }
    }

    fn xid(n: u32) -> Xid {
        Xid::from_parts(7, 12, n)
    }

    #[test]
    fn the_documented_example_decodes() {
        let text = r#"{"format":1,"commit_scn":2146951,"restart_scn":2146790,
            "committed_xids":["07000C00F3010000"],
            "released":[{"con_id":3,"xid":"0A000B0057030000","reason":"orphan-released","released_at_scn":2146900}],
            "resetlogs_scn":1,"pdb_incarnation_scn":1920345,"journal_generation":4,
            "commit_time":"2024-01-02T03:04:05Z"}"#;
        let bookmark = Bookmark::decode(text.as_bytes(), &at()).unwrap();
        assert_eq!(bookmark.commit_scn, 2_146_951);
        assert_eq!(
            bookmark.commit_time,
            Some("2024-01-02T03:04:05Z".parse().unwrap())
        );
        assert!(bookmark.already_emitted(2_146_951, &Xid::from_hex("07000C00F3010000").unwrap()));
        assert_eq!(
            bookmark.released.entries()[0].reason,
            crate::buffer::ReleaseReason::OrphanReleased
        );
        assert_eq!(
            Bookmark::decode(bookmark.encode().as_bytes(), &at()).unwrap(),
            bookmark
        );
    }

    #[test]
    fn garbage_is_cdc_5002_naming_the_record() {
        for value in [
            &b"not json"[..],
            br#"{"format":1}"#,
            br#"{"format":9,"commit_scn":1,"restart_scn":1,"committed_xids":[],"resetlogs_scn":1,"journal_generation":0}"#,
            br#"{"format":1,"commit_scn":1,"restart_scn":1,"committed_xids":["XYZ"],"resetlogs_scn":1,"journal_generation":0}"#,
            br#"{"format":1,"commit_scn":1,"restart_scn":1,"committed_xids":[],"resetlogs_scn":1,"journal_generation":0,"released":[{"xid":"12","released_at_scn":1,"reason":"discarded"}]}"#,
        ] {
            let stop = Bookmark::decode(value, &at()).unwrap_err();
            assert_eq!(stop.code, StopCode::BookmarkUnreadable);
            assert!(stop.message.contains("sales.redoline.offsets/0 offset 41"), "{stop}");
            assert_eq!(stop.details["offset"], 41);
        }
    }

    #[test]
    fn an_unrecorded_incarnation_is_bound_to_the_current_one() {
        let unrecorded = serde_json::to_value(Bookmark::initial(10, 0, None, 0)).unwrap();
        let bookmark = Bookmark::resume(unrecorded, 77, Some(5)).unwrap();
        assert_eq!(
            (bookmark.resetlogs_scn, bookmark.pdb_incarnation_scn),
            (77, Some(5))
        );
        let recorded = serde_json::to_value(Bookmark::initial(10, 3, Some(4), 0)).unwrap();
        let stop = Bookmark::resume(recorded, 77, Some(5)).unwrap_err();
        assert_eq!(
            stop.code,
            StopCode::IncarnationMismatch,
            "a recorded incarnation is kept, so the mismatch is caught"
        );
    }

    #[test]
    fn a_bookmark_resumes_only_on_its_own_incarnation() {
        let stored = serde_json::to_value(Bookmark::initial(10, 3, Some(4), 2)).unwrap();
        let resumed = Bookmark::resume(stored.clone(), 3, Some(4)).unwrap();
        assert_eq!(resumed, Bookmark::initial(10, 3, Some(4), 2));
        // Not mining a PDB: only the database incarnation counts.
        assert!(Bookmark::resume(stored.clone(), 3, None).is_ok());
        let flashed_back = Bookmark::resume(stored.clone(), 3, Some(9)).unwrap_err();
        assert_eq!(flashed_back.code, StopCode::IncarnationMismatch);
        let reset = Bookmark::resume(stored, 8, Some(4)).unwrap_err();
        assert_eq!(reset.code, StopCode::IncarnationMismatch);
        assert!(
            reset.message.contains("RESETLOGS SCN 3"),
            "{}",
            reset.message
        );
        let unreadable = Bookmark::resume(serde_json::json!({"format": "x"}), 3, None);
        assert_eq!(
            unreadable.map_err(|stop| stop.code),
            Err(StopCode::BookmarkUnreadable)
        );
    }

    #[test]
    fn the_restart_point_follows_the_pin_and_otherwise_the_last_commit() {
        let mut bookmark = Bookmark::initial(100, 1, None, 0);
        bookmark.record_commit(150, xid(1)).unwrap();
        // A transaction still open pins the restart at its start (or its journal's end).
        bookmark.move_restart(Some(120), true);
        assert_eq!(bookmark.restart_scn, 120);
        // A page of journal records alone, nothing open: the restart stays.
        bookmark.move_restart(None, false);
        assert_eq!(bookmark.restart_scn, 120);
        // Transactions committed and nothing open: the restart moves to the last commit.
        bookmark.move_restart(None, true);
        assert_eq!(bookmark.restart_scn, 150);
    }

    #[test]
    fn commits_at_one_scn_accumulate_and_a_higher_scn_resets_the_list() {
        let mut bookmark = Bookmark::initial(100, 1, None, 1);
        bookmark.record_commit(105, xid(1)).unwrap();
        bookmark.record_commit(105, xid(2)).unwrap();
        assert_eq!(bookmark.committed_xids.len(), 2);
        bookmark.record_commit(110, xid(3)).unwrap();
        assert_eq!(bookmark.committed_xids, BTreeSet::from([xid(3)]));
        assert!(bookmark.record_commit(109, xid(4)).is_err());
        assert!(bookmark.already_emitted(105, &xid(9)));
        assert!(bookmark.already_emitted(110, &xid(3)));
        assert!(!bookmark.already_emitted(110, &xid(4)));
        assert!(!bookmark.already_emitted(111, &xid(3)));
    }

    fn arb_bookmark() -> impl Strategy<Value = Bookmark> {
        let released = proptest::collection::vec(
            (
                any::<[u8; 8]>(),
                proptest::option::of(any::<u32>()),
                any::<u64>(),
                any::<bool>(),
            )
                .prop_map(|(xid, con_id, released_at_scn, orphan)| LedgerEntry {
                    con_id,
                    xid: Xid(xid),
                    reason: if orphan {
                        ReleaseReason::OrphanReleased
                    } else {
                        ReleaseReason::Discarded
                    },
                    released_at_scn,
                }),
            0..4,
        )
        .prop_map(|entries| {
            let mut ledger = ReleasedLedger::new();
            for entry in entries {
                // Four at most: always room.
                ledger.insert(entry, 4).unwrap();
            }
            ledger
        });
        (
            any::<u64>(),
            any::<u64>(),
            proptest::collection::btree_set(any::<[u8; 8]>().prop_map(Xid), 0..5),
            released,
            any::<u64>(),
            proptest::option::of(any::<u64>()),
            any::<u64>(),
            proptest::option::of(
                (0i64..4_000_000_000, 0i32..1_000_000_000)
                    .prop_map(|(second, nanos)| Timestamp::new(second, nanos).unwrap()),
            ),
        )
            .prop_map(
                |(
                    commit_scn,
                    restart_scn,
                    committed_xids,
                    released,
                    resetlogs,
                    pdb,
                    generation,
                    commit_time,
                )| {
                    Bookmark {
                        format: BOOKMARK_FORMAT,
                        commit_scn,
                        restart_scn,
                        committed_xids,
                        released,
                        resetlogs_scn: resetlogs,
                        pdb_incarnation_scn: pdb,
                        journal_generation: generation,
                        snapshot: None,
                        commit_time,
                        incremental: None,
                        reposition: (commit_scn % 2 == 0).then(|| AppliedReposition {
                            id: format!("move-{restart_scn}"),
                            scn: commit_scn,
                        }),
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn encode_decode_round_trips(bookmark in arb_bookmark()) {
            prop_assert_eq!(Bookmark::decode(bookmark.encode().as_bytes(), &at()).unwrap(), bookmark);
        }

        /// Emitting transactions in commit order and resuming from the bookmark after any prefix:
        /// exactly the prefix counts as emitted, whatever SCNs repeat.
        #[test]
        fn the_resume_rule_skips_exactly_the_emitted_prefix(
            steps in proptest::collection::vec(0u64..3, 1..40),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut scn = 1_000;
            let commits: Vec<(u64, Xid)> = steps
                .iter()
                .enumerate()
                .map(|(i, step)| {
                    scn += step;
                    (scn, xid(u32::try_from(i).unwrap()))
                })
                .collect();
            let emitted = cut.index(commits.len() + 1);
            let mut bookmark = Bookmark::initial(1_000, 1, None, 1);
            for (commit_scn, xid) in &commits[..emitted] {
                bookmark.record_commit(*commit_scn, *xid).unwrap();
            }
            let decoded = Bookmark::decode(bookmark.encode().as_bytes(), &at()).unwrap();
            for (i, (commit_scn, xid)) in commits.iter().enumerate() {
                prop_assert_eq!(decoded.already_emitted(*commit_scn, xid), i < emitted, "commit {}", i);
            }
        }
    }
}
