//! The change event model and its encoders.
//!
//! A [`ChangeEvent`] is one committed change of one row (or one DDL / TRUNCATE), with typed
//! before and after images ([`Row`]) and where it came from in the redo ([`SourceInfo`]).
//! Encoders are functions of an event (plus, for Debezium, its options, the processing time and,
//! with transaction metadata, the events of its transaction before it), so the same events always
//! encode to the same bytes:
//!
//! - [`compact`]: one small JSON object per change (the contracts' `compact` format);
//! - [`debezium`]: Debezium-compatible keys, values and topics, with or without the Kafka Connect
//!   `schema`/`payload` envelope.
//!
//! Invariants the producer of events keeps (the engine, the snapshot):
//! - `before` and `after` rows have one slot per column of `table`;
//! - `Create`/`Read` carry `after`; `Delete` carries `before`; `Update` carries both, `after`
//!   complete (unchanged columns merged in from the before image); `Truncate` and `Ddl` neither.

pub mod compact;
pub mod debezium;
pub mod heartbeat;
pub(crate) mod json;
pub mod record;
pub mod record_encoder;

pub use record::{EncodeError, Record};
pub use record_encoder::RecordEncoder;

use std::sync::Arc;

use crate::dictionary::TableSchema;
use crate::source::Xid;
use crate::value::{Row, Value};

/// What happened to the row or table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
    /// A row read by the initial snapshot.
    Read,
    Truncate,
    /// A DDL statement on the table, as issued.
    Ddl {
        sql: String,
    },
}

/// Where an event stands in a snapshot (Debezium's `source.snapshot`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SnapshotMarker {
    /// Streamed from the redo.
    #[default]
    False,
    True,
    First,
    FirstInDataCollection,
    LastInDataCollection,
    Last,
    Incremental,
}

impl SnapshotMarker {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::False => "false",
            Self::True => "true",
            Self::First => "first",
            Self::FirstInDataCollection => "first_in_data_collection",
            Self::LastInDataCollection => "last_in_data_collection",
            Self::Last => "last",
            Self::Incremental => "incremental",
        }
    }
}

/// Where a change came from in the redo.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceInfo {
    /// SCN of the change.
    pub scn: u64,
    /// SCN of the transaction's commit (none for snapshot reads).
    pub commit_scn: Option<u64>,
    pub xid: Option<Xid>,
    /// `RS_ID`, the redo record address (`0x000007.000228b9.0010`), trimmed.
    pub rs_id: Option<String>,
    /// `SSN`, the statement's sequence within the redo record.
    pub ssn: u64,
    /// `THREAD#`, the RAC redo thread.
    pub redo_thread: u16,
    pub user_name: Option<String>,
    pub row_id: Option<String>,
    /// When the change was made (`TIMESTAMP`), converted to an instant by the source.
    pub change_time: Option<jiff::Timestamp>,
    /// When its transaction committed (`COMMIT_TIMESTAMP`).
    pub commit_time: Option<jiff::Timestamp>,
    /// Where its transaction began: the SCN and time of the transaction's first change, as
    /// Debezium's `start_scn` / `start_ts_ms` take them (none for snapshot reads and DDL).
    pub transaction_start: Option<TransactionStart>,
    /// The change's 1-based place among its transaction's changes (Debezium's `txSeq`).
    pub transaction_sequence: Option<u64>,
    pub snapshot: SnapshotMarker,
}

/// The first change of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransactionStart {
    pub scn: u64,
    pub time: Option<jiff::Timestamp>,
}

/// A data event's place in its transaction (Debezium's `transaction` block), counted by the
/// encoder over the records it writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransactionInfo {
    pub id: String,
    /// 1-based position among all events of the transaction.
    pub total_order: u64,
    /// 1-based position among the transaction's events of this table.
    pub data_collection_order: u64,
}

/// One committed change.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangeEvent {
    pub op: Operation,
    pub table: Arc<TableSchema>,
    pub before: Option<Row>,
    pub after: Option<Row>,
    pub source: SourceInfo,
}

impl ChangeEvent {
    /// Whether an update changed the columns `key` lists (the message key; then Debezium sends
    /// delete, tombstone, create).
    pub fn key_changed(&self, key: &[usize]) -> bool {
        let (Some(before), Some(after)) = (&self.before, &self.after) else {
            return false;
        };
        self.op == Operation::Update
            && key.iter().any(|&i| match (before.get(i), after.get(i)) {
                (Some(b), Some(a)) => !same_value(b, a),
                _ => false,
            })
    }
}

/// Equality for key comparison: NaN equals NaN, so a NaN key is not a key change.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::BinaryFloat(x), Value::BinaryFloat(y)) => x.to_bits() == y.to_bits(),
        (Value::BinaryDouble(x), Value::BinaryDouble(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xid_hex_round_trips() {
        let xid = Xid::from_hex("07000c00f3010000").unwrap();
        assert_eq!(xid.to_upper_hex(), "07000C00F3010000");
        assert_eq!(xid.to_lower_hex(), "07000c00f3010000");
        assert!(Xid::from_hex("07000C00").is_err());
        assert!(Xid::from_hex("zz000C00F3010000").is_err());
    }
}
