//! The buffer's errors and the typed stop each one becomes.
//!
//! Every variant but [`BufferError::HandOffIncomplete`] needs an operator and maps to its stop code
//! in [`BufferError::stop`] (spill errors by their kind: CDC-3001, CDC-3002 or CDC-4001), an
//! exhaustive match, so a new variant forces a decision.
//! `HandOffIncomplete` is a caller bug (a receipt asked for before every row was read) and maps to
//! no stop: the process ends as an internal error.

use redoline_crds::StopCode;
use redoline_crds::quantity::QuantityError;
use serde_json::{Value, json};

use crate::stop::Stop;

use super::ledger::LedgerEntry;
use super::spill::SpillError;
use super::transaction::{TransactionKey, TransactionSummary};

/// How many transactions CDC-4001 names.
pub const LARGEST_LISTED: usize = 10;
/// How many of the released ledger's entries CDC-7003 names.
pub const OLDEST_LEDGER_ENTRIES_LISTED: usize = 10;

#[derive(Debug, thiserror::Error)]
pub enum BufferError {
    #[error("{field} is not a valid size: {source}")]
    InvalidSize {
        field: &'static str,
        #[source]
        source: QuantityError,
    },
    /// Spill I/O (CDC-3001) or a damaged spill file (CDC-3002).
    #[error(transparent)]
    Spill(SpillError),
    /// The OS reported the spill volume full (CDC-4001).
    #[error("{source}")]
    VolumeFull {
        #[source]
        source: SpillError,
        largest: Vec<TransactionSummary>,
    },
    /// Writing would take the spill files past `buffer.spill.maxBytes` (CDC-4001).
    #[error(
        "the spill files would exceed spec.buffer.spill.maxBytes ({cap} bytes): {on_disk} bytes \
         are on disk and {needed} more are needed"
    )]
    CapacityExceeded {
        cap: u64,
        on_disk: u64,
        needed: u64,
        largest: Vec<TransactionSummary>,
    },
    #[error(
        "transaction {key} buffers more than spec.transactions.maxStagedRecords ({limit}) changes"
    )]
    StagedRecordsExceeded {
        key: TransactionKey,
        limit: u64,
        transaction: TransactionSummary,
    },
    #[error(
        "open transactions together buffer more than spec.transactions.maxStagedRecordsTotal \
         ({limit}) changes"
    )]
    StagedRecordsTotalExceeded {
        limit: u64,
        largest: Vec<TransactionSummary>,
    },
    #[error(
        "a COMMIT arrived for transaction {}, which was {} at SCN {}; publishing it would \
         publish only the part mined afterwards",
        TransactionKey { con_id: entry.con_id, xid: entry.xid }, reason_text(entry),
        entry.released_at_scn
    )]
    ReleasedTransactionCommitted { entry: LedgerEntry },
    /// A release found the released ledger full (CDC-7003).
    #[error("{0}")]
    ReleasedLedgerFull(Box<FullLedger>),
    #[error(
        "transaction {key} is orphaned: absent from GV$TRANSACTION since SCN {first_absence_scn}, \
         mined through SCN {mined_through_scn} without its end, and its session is gone"
    )]
    Orphaned {
        key: TransactionKey,
        transaction: TransactionSummary,
        first_absence_scn: u64,
        mined_through_scn: u64,
    },
    #[error(
        "transaction {key} has been open in the buffer for {age_seconds} s, more than \
         spec.transactions.maxAgeSeconds ({max_age_seconds} s)"
    )]
    TooOld {
        key: TransactionKey,
        transaction: TransactionSummary,
        age_seconds: i64,
        max_age_seconds: u64,
    },
    #[error("the release receipt of transaction {key} was asked for before all its rows were read")]
    HandOffIncomplete { key: TransactionKey },
}

/// A release refused because the released ledger is full, and what the stop names.
#[derive(Debug)]
pub struct FullLedger {
    pub key: TransactionKey,
    pub transaction: TransactionSummary,
    pub refused: LedgerEntry,
    pub limit: u64,
    /// The ledger's first entries, in release order.
    pub oldest: Vec<LedgerEntry>,
    pub orphans_released: usize,
    pub discarded: usize,
}

impl std::fmt::Display for FullLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "transaction {} was to be {} at SCN {}, but the released ledger already holds \
             spec.transactions.releasedLedgerMaxEntries ({}) transactions whose COMMIT could \
             still come; forgetting one would let its late COMMIT be published in part",
            self.key,
            reason_text(&self.refused),
            self.refused.released_at_scn,
            self.limit
        )
    }
}

fn reason_text(entry: &LedgerEntry) -> &'static str {
    match entry.reason {
        super::ledger::ReleaseReason::OrphanReleased => "released as an orphan",
        super::ledger::ReleaseReason::Discarded => "discarded for its age",
    }
}

fn to_value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

impl BufferError {
    /// The typed stop; `None` only for a caller bug.
    pub fn stop(&self) -> Option<Stop> {
        let message = self.to_string();
        let stop = match self {
            Self::InvalidSize { field, .. } => {
                Stop::new(StopCode::InvalidConfiguration, message).with_detail("field", *field)
            }
            Self::Spill(SpillError::Io { path, .. }) => Stop::new(StopCode::SpillIoError, message)
                .with_detail("path", path.display().to_string()),
            Self::Spill(SpillError::Corrupted { path, offset, .. }) => {
                Stop::new(StopCode::SpillCorrupted, message)
                    .with_detail("path", path.display().to_string())
                    .with_detail("offset", *offset)
            }
            Self::Spill(SpillError::VolumeFull { .. }) => {
                Stop::new(StopCode::SpillCapacityExceeded, message)
            }
            Self::VolumeFull { largest, .. } | Self::CapacityExceeded { largest, .. } => {
                Stop::new(StopCode::SpillCapacityExceeded, message)
                    .with_detail("transactions", to_value(largest))
            }
            Self::StagedRecordsExceeded {
                limit, transaction, ..
            } => Stop::new(StopCode::StagedRecordsExceeded, message)
                .with_detail("limit", *limit)
                .with_detail("transactions", json!([to_value(transaction)])),
            Self::StagedRecordsTotalExceeded { limit, largest } => {
                Stop::new(StopCode::StagedRecordsExceeded, message)
                    .with_detail("limit", *limit)
                    .with_detail("transactions", to_value(largest))
            }
            Self::ReleasedTransactionCommitted { entry } => {
                Stop::new(StopCode::ReleasedTransactionCommitted, message)
                    .with_detail("xid", entry.xid.to_lower_hex())
                    .with_detail("ledgerEntry", to_value(entry))
            }
            Self::ReleasedLedgerFull(full) => Stop::new(StopCode::ReleasedLedgerFull, message)
                .with_detail("limit", full.limit)
                .with_detail("transactions", json!([to_value(&full.transaction)]))
                .with_detail("releaseReason", to_value(&full.refused.reason))
                .with_detail(
                    "entries",
                    json!({"orphanReleased": full.orphans_released, "discarded": full.discarded}),
                )
                .with_detail("oldest", to_value(&full.oldest)),
            Self::Orphaned {
                transaction,
                first_absence_scn,
                mined_through_scn,
                ..
            } => Stop::new(StopCode::OrphanedTransaction, message)
                .with_detail("transactions", json!([to_value(transaction)]))
                .with_detail("firstAbsenceScn", *first_absence_scn)
                .with_detail("minedThroughScn", *mined_through_scn),
            Self::TooOld {
                transaction,
                age_seconds,
                max_age_seconds,
                ..
            } => Stop::new(StopCode::TransactionTooOld, message)
                .with_detail("transactions", json!([to_value(transaction)]))
                .with_detail("ageSeconds", *age_seconds)
                .with_detail("maxAgeSeconds", *max_age_seconds),
            Self::HandOffIncomplete { .. } => return None,
        };
        Some(stop)
    }
}
