//! Where the capture stands: the resume rule of seed 001 ("Bookmark").
//!
//! - `commit_scn`: the commit SCN of the last emitted transaction; `committed_xids` the
//!   transactions emitted at exactly that SCN (several can commit at one SCN). A transaction
//!   committed below `commit_scn`, or at it and listed, was emitted and is skipped when mining
//!   produces it again.
//! - `restart_scn`: where mining restarts: the first SCN of the oldest transaction open when the
//!   position was taken, or the commit SCN itself when none was open. Everything a restart must see
//!   again (the beginning of every open transaction) lies at or after it.
//! - The incarnation (`resetlogs_scn`, `pdb_incarnation_scn`): a position belongs to one database
//!   incarnation; resuming it on another (after a point-in-time recovery or flashback) is CDC-2003.
//!
//! A fresh capture anchored at an SCN starts with `commit_scn` one above the anchor and nothing
//! listed, so every transaction committed at or below the anchor counts as emitted, and with
//! `restart_scn` at the start of the oldest transaction then open, so those are captured whole.

use serde::{Deserialize, Serialize};

use crate::buffer::ReleasedLedger;
use crate::event::Xid;

/// The capture's position, stored with every page it emits.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub commit_scn: u64,
    pub restart_scn: u64,
    pub committed_xids: Vec<Xid>,
    pub resetlogs_scn: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdb_incarnation_scn: Option<u64>,
    /// Released and discarded transactions (the buffer's ledger).
    #[serde(default)]
    pub released: ReleasedLedger,
}

impl Position {
    /// A fresh position anchored at `anchor_scn`, restarting at `restart_scn` (at most the anchor).
    pub fn anchored(anchor_scn: u64, restart_scn: u64) -> Self {
        Self {
            commit_scn: anchor_scn.saturating_add(1),
            restart_scn: restart_scn.min(anchor_scn),
            ..Self::default()
        }
    }

    /// Whether the transaction committed at `commit_scn` was emitted already.
    pub fn already_emitted(&self, commit_scn: u64, xid: &Xid) -> bool {
        commit_scn < self.commit_scn
            || (commit_scn == self.commit_scn && self.committed_xids.contains(xid))
    }

    /// Records an emitted transaction; `oldest_open_scn` is the first SCN of the oldest
    /// transaction still open after it.
    pub fn emitted(&mut self, commit_scn: u64, xid: Xid, oldest_open_scn: Option<u64>) {
        if commit_scn == self.commit_scn {
            self.committed_xids.push(xid);
        } else {
            self.commit_scn = commit_scn;
            self.committed_xids = vec![xid];
        }
        self.restart_scn = oldest_open_scn.map_or(commit_scn, |open| open.min(commit_scn));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resume_rule_skips_below_and_listed_at_the_commit_scn() {
        let (a, b, c) = (Xid::from_parts(1, 1, 1), Xid::from_parts(2, 2, 2), Xid::from_parts(3, 3, 3));
        let mut position = Position::anchored(99, 50);
        assert_eq!((position.commit_scn, position.restart_scn), (100, 50));
        assert!(position.already_emitted(99, &a), "committed at the anchor");
        assert!(!position.already_emitted(100, &a));
        position.emitted(100, a, Some(80));
        position.emitted(100, b, Some(80));
        assert_eq!(position.restart_scn, 80);
        assert!(position.already_emitted(100, &b));
        assert!(!position.already_emitted(100, &c), "same SCN, not listed");
        position.emitted(120, c, None);
        assert_eq!((position.commit_scn, position.restart_scn), (120, 120));
        assert_eq!(position.committed_xids, [c]);
    }

    #[test]
    fn positions_round_trip_as_json() {
        let mut position = Position::anchored(10, 10);
        position.resetlogs_scn = Some(1);
        position.emitted(12, Xid::from_parts(3, 14, 716), Some(11));
        let json = serde_json::to_value(&position).unwrap();
        assert_eq!(json["committed_xids"][0], "03000E00CC020000");
        let back: Position = serde_json::from_value(json).unwrap();
        assert_eq!(back, position);
    }
}
