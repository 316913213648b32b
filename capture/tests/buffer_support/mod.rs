//! Rows, clocks and buffers for the transaction buffer tests.
// Each test binary uses part of this module.
#![allow(dead_code, unused_imports)]

use std::path::Path;
use std::sync::Arc;

use jiff::Timestamp;
use prometheus::Registry;
use redoline_capture::buffer::{
    BufferError, BufferMetrics, BufferSettings, CommittedTransaction, Pushed, ReleasedLedger,
    TransactionBuffer,
};
use redoline_capture::source::{LogMinerRow, OperationCode, Xid};
use redoline_crds::StopCode;
use redoline_crds::v1alpha1::TransactionsSpec;

pub use redoline_capture::source::fixtures::{CON_ID, row};

/// The fake clock's start.
pub fn t0() -> Timestamp {
    "2026-11-29T10:00:00Z".parse().unwrap()
}

pub fn at(seconds: i64) -> Timestamp {
    t0() + jiff::SignedDuration::from_secs(seconds)
}

/// An INSERT at `scn` of the row `row_id` with `len` bytes of SQL_REDO.
pub fn change(xid: Xid, scn: u64, row_id: &str, len: usize) -> LogMinerRow {
    let mut change = row(xid, OperationCode::Insert, scn);
    change.row_id = Arc::from(row_id);
    let values = "x".repeat(len);
    let mut sql = format!("insert into \"APP\".\"ORDERS\"(\"V\") values ('{values}');");
    // Capacity equal to the length, so heap figures are predictable.
    sql.shrink_to_fit();
    change.sql_redo = Some(sql);
    change
}

/// The undo row LogMiner writes for a change of `row_id` (a DELETE by ROWID).
pub fn undo(xid: Xid, scn: u64, row_id: &str) -> LogMinerRow {
    let mut undo = row(xid, OperationCode::Delete, scn);
    undo.rollback = true;
    undo.row_id = Arc::from(row_id);
    undo.sql_redo = Some(format!(
        "delete from \"APP\".\"ORDERS\" where ROWID = '{row_id}';"
    ));
    undo
}

pub fn commit(xid: Xid, scn: u64) -> LogMinerRow {
    row(xid, OperationCode::Commit, scn)
}

pub fn config(dir: &Path, memory_max_bytes: u64, spill_max_bytes: u64) -> BufferSettings {
    BufferSettings {
        memory_max_bytes,
        spill_dir: dir.to_owned(),
        spill_max_bytes,
        transactions: TransactionsSpec::default(),
    }
}

pub fn buffer(config: BufferSettings) -> (TransactionBuffer, BufferMetrics) {
    let metrics = BufferMetrics::new(&Registry::new()).unwrap();
    let buffer = TransactionBuffer::new(config, ReleasedLedger::new(), metrics.clone()).unwrap();
    (buffer, metrics)
}

/// Pushes a row that must be buffered.
pub fn hold(buffer: &mut TransactionBuffer, row: LogMinerRow) {
    let pushed = buffer.push(row, t0()).unwrap();
    assert!(matches!(pushed, Pushed::Buffered), "{pushed:?}");
}

/// Pushes a COMMIT that must hand out a transaction.
pub fn committed(buffer: &mut TransactionBuffer, row: LogMinerRow) -> CommittedTransaction {
    match buffer.push(row, t0()).unwrap() {
        Pushed::Committed(committed) => *committed,
        other => panic!("expected a committed transaction, got {other:?}"),
    }
}

/// Reads a committed transaction to its end and releases it; returns the rows.
pub fn drain(
    buffer: &mut TransactionBuffer,
    mut committed: CommittedTransaction,
) -> Vec<LogMinerRow> {
    let rows: Vec<_> = committed.by_ref().map(Result::unwrap).collect();
    buffer.release(committed.finish().unwrap()).unwrap();
    rows
}

/// The stop code of an error, which must have one.
pub fn code(error: &BufferError) -> StopCode {
    error.stop().unwrap().code
}

pub fn scns(rows: &[LogMinerRow]) -> Vec<u64> {
    rows.iter().map(|r| r.scn).collect()
}

pub fn xid(slot: u16, sequence: u32) -> Xid {
    Xid::from_parts(1, slot, sequence)
}
