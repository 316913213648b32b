//! Orphaned and too old transactions: the two ways a transaction leaves the buffer without its
//! end record. Pure logic: the caller passes the clock and the lists it read from the database.
//!
//! # Orphans (seed 000, "Orphaned transactions")
//! A transaction can vanish from the database without LogMiner ever returning its COMMIT or
//! ROLLBACK (its session was killed in a way that left no end record in the redo mined so far).
//! Every `orphanCheckIntervalSeconds` ([`TransactionBuffer::orphan_check_due`]) the caller reads
//! `GV$TRANSACTION` and `GV$SESSION` and calls [`TransactionBuffer::check_orphans`]. Only
//! transactions buffered for longer than the interval are checked. A transaction is an orphan when
//! all three hold:
//! 1. it was absent from the open-transaction list in two consecutive checks (a check that finds
//!    it resets the count);
//! 2. everything up to an SCN past the database SCN of the first of those absences has been mined
//!    (`mined_through_scn > first_absence_scn`) and its end was not among it;
//! 3. the session its START row named (`SESSION#`, `SERIAL#`, and `THREAD#` as the instance) is
//!    not in the session list. Without a START row the first row naming a session stands in; a
//!    transaction whose rows name no session is never taken for an orphan (nothing proves its
//!    session gone), and only the maximum age can drop it.
//!
//! A listed transaction matches by XID and, when both sides name one, by container, so a match
//! errs towards "present". With `orphanAction: release` the orphan is dropped like a ROLLBACK, its
//! id joins the released ledger and a `transaction-orphan-released` [`OpsEvent`] is returned for
//! the caller to publish; with `fail` the check stops with CDC-7002.
//!
//! # Maximum age (seed 000, "Long transactions")
//! [`TransactionBuffer::enforce_max_age`] finds transactions buffered longer than `maxAgeSeconds`.
//! `fail` stops with CDC-4004 naming the oldest; `discard` drops each after producing a
//! `transaction-discarded` [`OpsEvent`] and a [`DlqRecord`], and its id joins the ledger.
//! Nothing is dropped without those values reaching the caller.
//!
//! Either drop first enters the transaction in the released ledger; a full ledger
//! (`transactions.releasedLedgerMaxEntries`, `ledger.rs`) stops with CDC-7003 and the transaction
//! stays buffered.

use std::collections::{HashMap, HashSet};

use jiff::Timestamp;
use redoline_crds::v1alpha1::{MaxAgeAction, OrphanAction};
use serde::Serialize;

use crate::source::{OpenTransaction, SessionId, Xid};

use super::error::{FullLedger, OLDEST_LEDGER_ENTRIES_LISTED};
use super::ledger::{LedgerEntry, LedgerFull, ReleaseReason};
use super::transaction::{Transaction, TransactionKey, TransactionSummary};
use super::{BufferError, TransactionBuffer};

/// One orphan check's view of the database, read by the caller.
#[derive(Clone, Copy, Debug)]
pub struct OrphanCheck<'a> {
    pub now: Timestamp,
    /// `V$DATABASE.CURRENT_SCN` when the lists were read.
    pub current_scn: u64,
    /// Every row up to this SCN has been given to the buffer.
    pub mined_through_scn: u64,
    pub open_transactions: &'a [OpenTransaction],
    pub sessions: &'a [SessionId],
}

/// A transaction dropped without its end record, as the ops topic and the DLQ show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DroppedTransaction {
    /// When it was dropped (RFC 3339).
    pub at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub con_id: Option<u32>,
    #[serde(flatten)]
    pub transaction: TransactionSummary,
    /// When the buffer first saw it (RFC 3339).
    pub buffered_since: String,
}

/// An event for the ops topic.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum OpsEvent {
    TransactionOrphanReleased {
        #[serde(flatten)]
        transaction: DroppedTransaction,
        first_absence_scn: u64,
        mined_through_scn: u64,
    },
    TransactionDiscarded {
        #[serde(flatten)]
        transaction: DroppedTransaction,
        age_seconds: i64,
        max_age_seconds: u64,
    },
}

/// The DLQ record of a transaction discarded for its age.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DlqRecord {
    /// Always `transaction-discarded`.
    pub reason: &'static str,
    #[serde(flatten)]
    pub transaction: DroppedTransaction,
    pub age_seconds: i64,
    pub max_age_seconds: u64,
}

/// A transaction discarded for its age: both values must be published.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discarded {
    pub ops_event: OpsEvent,
    pub dlq_record: DlqRecord,
}

fn seconds_between(since: Timestamp, now: Timestamp) -> i64 {
    now.as_second().saturating_sub(since.as_second())
}

/// XIDs listed open, with the containers they were listed in.
struct Listed(HashMap<Xid, Vec<Option<u32>>>);

impl Listed {
    fn new(open: &[OpenTransaction]) -> Self {
        let mut listed: HashMap<Xid, Vec<Option<u32>>> = HashMap::new();
        for transaction in open {
            listed
                .entry(transaction.xid)
                .or_default()
                .push(transaction.con_id);
        }
        Self(listed)
    }

    fn contains(&self, key: &TransactionKey) -> bool {
        self.0.get(&key.xid).is_some_and(|containers| {
            containers
                .iter()
                .any(|con| con.is_none() || key.con_id.is_none() || *con == key.con_id)
        })
    }
}

impl TransactionBuffer {
    /// Whether `orphanCheckIntervalSeconds` has passed since the last orphan check.
    pub fn orphan_check_due(&self, now: Timestamp) -> bool {
        let interval = self.config.transactions.orphan_check_interval_seconds;
        self.last_orphan_check
            .is_none_or(|last| seconds_between(last, now) >= interval as i64)
    }

    /// Runs one orphan check; returns the `transaction-orphan-released` events to publish.
    pub fn check_orphans(&mut self, check: OrphanCheck<'_>) -> Result<Vec<OpsEvent>, BufferError> {
        self.last_orphan_check = Some(check.now);
        let interval = self.config.transactions.orphan_check_interval_seconds as i64;
        let listed = Listed::new(check.open_transactions);
        let sessions: HashSet<&SessionId> = check.sessions.iter().collect();
        let mut orphans = Vec::new();
        for transaction in self.open.values_mut() {
            if seconds_between(transaction.buffered_since, check.now) < interval {
                continue;
            }
            transaction
                .orphan
                .record(listed.contains(&transaction.key), check.current_scn);
            let session_gone = transaction
                .session
                .is_some_and(|session| !sessions.contains(&session));
            if transaction
                .orphan
                .is_orphan(check.mined_through_scn, session_gone)
            {
                orphans.push(transaction.key);
            }
        }
        orphans.sort();
        let mut events = Vec::with_capacity(orphans.len());
        for key in orphans {
            let Some(transaction) = self.open.get(&key) else {
                continue;
            };
            let first_absence_scn = transaction.orphan.first_absence_scn.unwrap_or_default();
            if self.config.transactions.orphan_action == OrphanAction::Fail {
                return Err(BufferError::Orphaned {
                    key,
                    transaction: transaction.summary(),
                    first_absence_scn,
                    mined_through_scn: check.mined_through_scn,
                });
            }
            let record = dropped(transaction, check.now);
            self.drop_without_end(
                key,
                &record.transaction,
                ReleaseReason::OrphanReleased,
                check.mined_through_scn,
            )?;
            self.metrics.orphans_released.inc();
            tracing::warn!(%key, first_absence_scn, "Released an orphaned transaction: it left the database without an end record in the redo.");
            events.push(OpsEvent::TransactionOrphanReleased {
                transaction: record,
                first_absence_scn,
                mined_through_scn: check.mined_through_scn,
            });
        }
        Ok(events)
    }

    /// Applies `maxAgeSeconds`; returns what the `discard` action dropped, for publishing.
    pub fn enforce_max_age(&mut self, now: Timestamp) -> Result<Vec<Discarded>, BufferError> {
        let Some(max_age) = self.config.transactions.max_age_seconds else {
            return Ok(Vec::new());
        };
        let mut too_old: Vec<&Transaction> = self
            .open
            .values()
            .filter(|t| seconds_between(self.opened_at(t), now) > max_age as i64)
            .collect();
        too_old.sort_by_key(|t| (self.opened_at(t), t.key));
        let too_old: Vec<TransactionKey> = too_old.iter().map(|t| t.key).collect();
        let mut discarded = Vec::with_capacity(too_old.len());
        for key in too_old {
            let Some(transaction) = self.open.get(&key) else {
                continue;
            };
            let age_seconds = seconds_between(self.opened_at(transaction), now);
            if self.config.transactions.max_age_action == MaxAgeAction::Fail {
                return Err(BufferError::TooOld {
                    key,
                    transaction: transaction.summary(),
                    age_seconds,
                    max_age_seconds: max_age,
                });
            }
            let record = dropped(transaction, now);
            self.drop_without_end(
                key,
                &record.transaction,
                ReleaseReason::Discarded,
                self.mined_scn,
            )?;
            self.metrics.transactions_discarded.inc();
            tracing::warn!(%key, age_seconds, max_age, "Discarded a transaction older than the maximum age.");
            discarded.push(Discarded {
                ops_event: OpsEvent::TransactionDiscarded {
                    transaction: record.clone(),
                    age_seconds,
                    max_age_seconds: max_age,
                },
                dlq_record: DlqRecord {
                    reason: "transaction-discarded",
                    transaction: record,
                    age_seconds,
                    max_age_seconds: max_age,
                },
            });
        }
        Ok(discarded)
    }

    /// Enters a transaction in the released ledger and drops it like a ROLLBACK. A full ledger
    /// stops with CDC-7003 and drops nothing: the transaction stays buffered.
    fn drop_without_end(
        &mut self,
        key: TransactionKey,
        transaction: &TransactionSummary,
        reason: ReleaseReason,
        released_at_scn: u64,
    ) -> Result<(), BufferError> {
        let entry = LedgerEntry {
            con_id: key.con_id,
            xid: key.xid,
            reason,
            released_at_scn,
        };
        let limit = self.config.transactions.released_ledger_max_entries;
        if let Err(full) = self.ledger.insert(entry, limit) {
            return Err(self.ledger_full(key, transaction, full));
        }
        self.discard(&key)?;
        self.refresh_gauges();
        Ok(())
    }

    fn ledger_full(
        &self,
        key: TransactionKey,
        transaction: &TransactionSummary,
        full: LedgerFull,
    ) -> BufferError {
        let entries = self.ledger.entries();
        let orphans_released = entries
            .iter()
            .filter(|e| e.reason == ReleaseReason::OrphanReleased)
            .count();
        BufferError::ReleasedLedgerFull(Box::new(FullLedger {
            key,
            transaction: transaction.clone(),
            limit: full.limit,
            oldest: entries
                .iter()
                .take(OLDEST_LEDGER_ENTRIES_LISTED)
                .map(|e| (*e).clone())
                .collect(),
            orphans_released,
            discarded: entries.len() - orphans_released,
            refused: full.entry,
        }))
    }
}

fn dropped(transaction: &Transaction, now: Timestamp) -> DroppedTransaction {
    DroppedTransaction {
        at: now.to_string(),
        con_id: transaction.key.con_id,
        transaction: transaction.summary(),
        buffered_since: transaction.buffered_since.to_string(),
    }
}
