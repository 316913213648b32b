//! The transaction buffer's rules one by one: keys and the all-zero XID, undo rows, staged-record
//! limits, the released ledger, orphans and the maximum age (fake clock, fake database lists),
//! start-up clean-up, configuration and metrics.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use crate::buffer_support;

use buffer_support::*;
use redoline_capture::buffer::{
    BufferMetrics, BufferSettings, OpsEvent, OrphanCheck, Pushed, ReleaseReason, ReleasedLedger,
    TransactionBuffer, TransactionKey, spill_file_name,
};
use redoline_capture::config::BufferConfig;
use redoline_capture::source::row::SEQUENCELESS_XIDSQN;
use redoline_capture::source::{OpenTransaction, OperationCode, SessionId, Xid};
use redoline_crds::StopCode;
use redoline_crds::v1alpha1::{MaxAgeAction, OrphanAction, TransactionsSpec};
use serde_json::{Value, json};

const ROW_A: &str = "AAAR9JAAHAAAACFAAA";
const ROW_B: &str = "AAAR9JAAHAAAACFAAB";

/// A buffer that spills what exceeds `memory_max` heap bytes.
fn buffer_with_budget(memory_max: u64) -> (tempfile::TempDir, TransactionBuffer, BufferMetrics) {
    let dir = tempfile::tempdir().unwrap();
    let (buffer, metrics) = buffer(config(dir.path(), memory_max, 1 << 30));
    (dir, buffer, metrics)
}

fn heap_buffer() -> (tempfile::TempDir, TransactionBuffer, BufferMetrics) {
    buffer_with_budget(1 << 30)
}

#[test]
fn an_all_zero_xid_never_creates_an_entry() {
    let (_dir, mut buffer, _) = heap_buffer();
    let zero = Xid([0; 8]);
    for operation in [
        OperationCode::Start,
        OperationCode::Insert,
        OperationCode::Commit,
    ] {
        let pushed = buffer.push(row(zero, operation, 10), t0()).unwrap();
        assert!(matches!(pushed, Pushed::Ignored), "{pushed:?}");
    }
    assert_eq!(buffer.open_transactions(), 0);
}

#[test]
fn a_change_without_start_opens_its_transaction_and_commit_keeps_redo_order() {
    let (_dir, mut buffer, metrics) = heap_buffer();
    let (a, b) = (xid(1, 1), xid(2, 1));
    hold(&mut buffer, change(a, 10, ROW_A, 5));
    hold(&mut buffer, row(b, OperationCode::Start, 11));
    hold(&mut buffer, change(b, 12, ROW_A, 5));
    hold(&mut buffer, change(a, 13, ROW_B, 5));
    // A SELECT_FOR_UPDATE or an internal row changes no data.
    assert!(matches!(
        buffer
            .push(row(a, OperationCode::SelectForUpdate, 14), t0())
            .unwrap(),
        Pushed::Ignored
    ));
    assert_eq!(
        (buffer.open_transactions(), buffer.buffered_events()),
        (2, 3)
    );
    assert_eq!(buffer.oldest_first_scn(), Some(10));
    assert_eq!(metrics.open_transactions.get(), 2);
    assert_eq!(metrics.buffered_events.get(), 3);
    assert!(metrics.heap_bytes.get() > 0);
    let committed = committed(&mut buffer, commit(a, 20));
    assert_eq!(committed.commit_row().scn, 20);
    assert_eq!(committed.summary().first_scn, 10);
    assert_eq!(scns(&drain(&mut buffer, committed)), [10, 13]);
    assert!(matches!(
        buffer
            .push(row(b, OperationCode::Rollback, 21), t0())
            .unwrap(),
        Pushed::RolledBack
    ));
    assert_eq!(
        (
            buffer.heap_bytes(),
            buffer.buffered_events(),
            buffer.open_transactions()
        ),
        (0, 0, 0)
    );
    // An end for a transaction never buffered.
    assert!(matches!(
        buffer.push(commit(xid(9, 9), 30), t0()).unwrap(),
        Pushed::Ignored
    ));
}

#[test]
fn heap_bytes_count_what_the_rows_own() {
    let (_dir, mut buffer, _) = heap_buffer();
    let row = change(xid(1, 1), 10, ROW_A, 10_000);
    let slot = std::mem::size_of::<redoline_capture::source::LogMinerRow>() as u64;
    // SQL_REDO's capacity, and ROW_ID and RS_ID with their two reference counts each.
    let owned = row.sql_redo.as_ref().unwrap().capacity() as u64
        + (row.row_id.len() + row.rs_id.len()) as u64
        + 4 * std::mem::size_of::<usize>() as u64;
    hold(&mut buffer, row);
    let heap = buffer.heap_bytes();
    // One vector slot at least, and the few a growing vector allocates at once at most.
    assert!((owned + slot..=owned + 4 * slot).contains(&heap), "{heap}");
    // Owner, table and user are shared with other rows: not charged per row.
    hold(&mut buffer, change(xid(1, 1), 11, ROW_A, 10_000));
    assert!(buffer.heap_bytes() <= 2 * owned + 4 * slot);
}

#[test]
fn undo_rows_cancel_the_latest_earlier_change_of_the_rowid_on_heap_and_on_disk() {
    for memory_max in [1 << 30, 0] {
        let (_dir, mut buffer, metrics) = buffer_with_budget(memory_max);
        let a = xid(1, 1);
        // Oracle's sequence for a savepoint rollback: changes, then undo rows in reverse order.
        hold(&mut buffer, change(a, 10, ROW_A, 5));
        hold(&mut buffer, change(a, 11, ROW_B, 5));
        hold(&mut buffer, change(a, 12, ROW_B, 5));
        hold(&mut buffer, change(a, 13, ROW_A, 5));
        hold(&mut buffer, undo(a, 14, ROW_A)); // cancels 13
        hold(
            &mut buffer,
            undo(Xid::from_parts(1, 1, SEQUENCELESS_XIDSQN), 15, ROW_B),
        ); // cancels 12
        hold(&mut buffer, change(a, 16, ROW_B, 5));
        let c = committed(&mut buffer, commit(a, 20));
        assert_eq!(c.is_spilled(), memory_max == 0);
        assert_eq!(
            scns(&drain(&mut buffer, c)),
            [10, 11, 16],
            "budget {memory_max}"
        );
        assert_eq!(metrics.unmatched_undo_rows.get(), 0);
    }
}

#[test]
fn an_undo_row_matching_nothing_is_counted_not_an_error() {
    for memory_max in [1 << 30, 0] {
        let (_dir, mut buffer, metrics) = buffer_with_budget(memory_max);
        let a = xid(1, 1);
        hold(&mut buffer, change(a, 10, ROW_A, 5));
        let _ = buffer.push(undo(a, 11, ROW_B), t0()).unwrap();
        // No open transaction at all for these.
        assert!(matches!(
            buffer.push(undo(xid(5, 1), 12, ROW_A), t0()).unwrap(),
            Pushed::Ignored
        ));
        assert!(matches!(
            buffer
                .push(
                    undo(Xid::from_parts(1, 7, SEQUENCELESS_XIDSQN), 13, ROW_A),
                    t0()
                )
                .unwrap(),
            Pushed::Ignored
        ));
        let c = committed(&mut buffer, commit(a, 20));
        assert_eq!(scns(&drain(&mut buffer, c)), [10]);
        assert_eq!(metrics.unmatched_undo_rows.get(), 3, "budget {memory_max}");
    }
}

#[test]
fn a_sequenceless_undo_row_needs_the_same_container() {
    let (_dir, mut buffer, metrics) = heap_buffer();
    let a = xid(1, 1);
    hold(&mut buffer, change(a, 10, ROW_A, 5));
    let mut other_container = undo(Xid::from_parts(1, 1, SEQUENCELESS_XIDSQN), 11, ROW_A);
    other_container.con_id = Some(CON_ID + 1);
    assert!(matches!(
        buffer.push(other_container, t0()).unwrap(),
        Pushed::Ignored
    ));
    assert_eq!(metrics.unmatched_undo_rows.get(), 1);
    assert_eq!(buffer.buffered_events(), 1);
}

#[test]
fn the_same_xid_in_two_containers_is_two_transactions() {
    let (_dir, mut buffer, _) = heap_buffer();
    let a = xid(1, 1);
    hold(&mut buffer, change(a, 10, ROW_A, 5));
    let mut elsewhere = change(a, 11, ROW_A, 5);
    elsewhere.con_id = Some(CON_ID + 1);
    hold(&mut buffer, elsewhere);
    assert_eq!(buffer.open_transactions(), 2);
    let c = committed(&mut buffer, commit(a, 20));
    assert_eq!(scns(&drain(&mut buffer, c)), [10]);
}

#[test]
fn rollback_deletes_the_spill_file() {
    let dir = tempfile::tempdir().unwrap();
    let (mut buffer, metrics) = buffer(config(dir.path(), 0, 1 << 30));
    let a = xid(1, 1);
    for i in 0..5 {
        hold(&mut buffer, change(a, 10 + i, ROW_A, 100));
    }
    assert_eq!(buffer.spilled_transactions(), 1);
    assert!(dir.path().join(spill_file_name(1, a)).exists());
    assert!(matches!(
        buffer
            .push(row(a, OperationCode::Rollback, 20), t0())
            .unwrap(),
        Pushed::RolledBack
    ));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert_eq!(
        (buffer.spilled_bytes(), buffer.spilled_transactions()),
        (0, 0)
    );
    assert_eq!(
        (
            metrics.spilled_bytes.get(),
            metrics.spilled_transactions.get()
        ),
        (0, 0)
    );
}

#[test]
fn the_largest_transaction_spills_first_and_later_rows_follow_it_to_disk() {
    let dir = tempfile::tempdir().unwrap();
    let (mut buffer, metrics) = buffer(config(dir.path(), 40_000, 1 << 30));
    let (small, large) = (xid(1, 1), xid(2, 1));
    hold(&mut buffer, change(small, 10, ROW_A, 5_000));
    hold(&mut buffer, change(large, 11, ROW_A, 20_000));
    assert_eq!(buffer.spilled_transactions(), 0);
    hold(&mut buffer, change(small, 12, ROW_B, 20_000)); // over budget: `small` is now larger
    assert_eq!(buffer.spilled_transactions(), 1);
    assert!(dir.path().join(spill_file_name(1, small)).exists());
    let heap_before = buffer.heap_bytes();
    hold(&mut buffer, change(small, 13, ROW_B, 20_000));
    assert_eq!(
        buffer.heap_bytes(),
        heap_before,
        "a spilled transaction never grows the heap"
    );
    assert!(
        metrics.spill_write_bytes.get() == 0,
        "still in the write buffer"
    );
    let c = committed(&mut buffer, commit(small, 20));
    assert!(c.is_spilled());
    assert_eq!(scns(&drain(&mut buffer, c)), [10, 12, 13]);
    assert!(metrics.spill_write_bytes.get() > 40_000);
    assert_eq!(
        metrics.spill_read_bytes.get(),
        metrics.spill_write_bytes.get()
    );
    let c = committed(&mut buffer, commit(large, 21));
    assert!(!c.is_spilled());
    assert_eq!(scns(&drain(&mut buffer, c)), [11]);
}

fn limited(
    max_staged_records: u64,
    max_staged_records_total: u64,
) -> (tempfile::TempDir, TransactionBuffer) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), 1 << 30, 1 << 30);
    config.transactions = TransactionsSpec {
        max_staged_records,
        max_staged_records_total,
        ..TransactionsSpec::default()
    };
    let (buffer, _) = buffer(config);
    (dir, buffer)
}

#[test]
fn staged_record_limits_stop_with_cdc_4003() {
    let (_dir, mut buffer) = limited(3, 100);
    let a = xid(1, 1);
    for i in 0..3 {
        hold(&mut buffer, change(a, 10 + i, ROW_A, 5));
    }
    let error = buffer.push(change(a, 13, ROW_A, 5), t0()).unwrap_err();
    let stop = error.stop().unwrap();
    assert_eq!(stop.code, StopCode::StagedRecordsExceeded);
    assert_eq!(stop.details["limit"], 3);
    assert_eq!(stop.details["transactions"][0]["events"], 3);
    assert!(
        stop.message.contains("maxStagedRecords (3)"),
        "{}",
        stop.message
    );

    let (_dir, mut buffer) = limited(100, 4);
    for i in 0..4u16 {
        hold(&mut buffer, change(xid(i, 1), 10 + u64::from(i), ROW_A, 5));
    }
    let error = buffer
        .push(change(xid(9, 1), 20, ROW_A, 5), t0())
        .unwrap_err();
    let stop = error.stop().unwrap();
    assert_eq!(stop.code, StopCode::StagedRecordsExceeded);
    assert!(
        stop.message.contains("maxStagedRecordsTotal (4)"),
        "{}",
        stop.message
    );
    assert_eq!(stop.details["transactions"].as_array().unwrap().len(), 4);
}

#[test]
fn lob_pieces_count_as_staged_records_and_spilled_undo_rows_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), 0, 1 << 30);
    config.transactions.max_staged_records = 3;
    let (mut buffer, _) = buffer(config);
    let a = xid(1, 1);
    hold(&mut buffer, change(a, 10, ROW_A, 5));
    hold(&mut buffer, row(a, OperationCode::LobWrite, 11));
    hold(&mut buffer, undo(a, 12, ROW_A));
    let error = buffer
        .push(row(a, OperationCode::LobWrite, 13), t0())
        .unwrap_err();
    assert_eq!(code(&error), StopCode::StagedRecordsExceeded);
}

/// A heap buffer whose released ledger holds `xid`, released for `reason` at SCN 50.
fn ledgered_buffer(xid: Xid, reason: ReleaseReason) -> (tempfile::TempDir, TransactionBuffer) {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = ReleasedLedger::new();
    ledger
        .insert(
            redoline_capture::buffer::LedgerEntry {
                con_id: Some(CON_ID),
                xid,
                reason,
                released_at_scn: 50,
            },
            1,
        )
        .unwrap();
    let metrics = BufferMetrics::new(&prometheus::Registry::new()).unwrap();
    let config = config(dir.path(), 1 << 30, 1 << 30);
    let buffer = TransactionBuffer::new(config, ledger, metrics).unwrap();
    (dir, buffer)
}

#[test]
fn a_commit_of_a_released_transaction_stops_with_cdc_7001_and_hands_out_nothing() {
    let a = xid(1, 1);
    let (_dir, mut buffer) = ledgered_buffer(a, ReleaseReason::Discarded);
    // Rows mined after the release are not buffered.
    assert!(matches!(
        buffer.push(change(a, 60, ROW_A, 5), t0()).unwrap(),
        Pushed::Ignored
    ));
    assert_eq!(buffer.open_transactions(), 0);
    let error = buffer.push(commit(a, 70), t0()).unwrap_err();
    let stop = error.stop().unwrap();
    assert_eq!(stop.code, StopCode::ReleasedTransactionCommitted);
    assert_eq!(stop.details["xid"], a.to_lower_hex());
    assert_eq!(stop.details["ledgerEntry"]["reason"], "discarded");
    assert!(
        stop.message.starts_with(&format!(
            "a COMMIT arrived for transaction {} in container 3, which was discarded",
            a.to_lower_hex()
        )),
        "names the transaction as the other stops do: {}",
        stop.message
    );
}

#[test]
fn ledger_entries_expire_when_the_undo_slot_is_reused_or_the_transaction_rolls_back() {
    let a = xid(1, 1);
    let (_dir, mut buffer) = ledgered_buffer(a, ReleaseReason::OrphanReleased);
    hold(&mut buffer, change(xid(1, 2), 60, ROW_A, 5)); // same slot, next sequence
    assert!(buffer.ledger().is_empty());
    assert!(matches!(
        buffer.push(commit(a, 70), t0()).unwrap(),
        Pushed::Ignored
    ));

    let (_dir, mut buffer) = ledgered_buffer(a, ReleaseReason::OrphanReleased);
    assert!(matches!(
        buffer
            .push(row(a, OperationCode::Rollback, 60), t0())
            .unwrap(),
        Pushed::Ignored
    ));
    assert!(buffer.ledger().is_empty());
}

fn orphan_buffer(action: OrphanAction) -> (tempfile::TempDir, TransactionBuffer, BufferMetrics) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), 0, 1 << 30);
    config.transactions.orphan_check_interval_seconds = 300;
    config.transactions.orphan_action = action;
    let (buffer, metrics) = buffer(config);
    (dir, buffer, metrics)
}

const SESSION: SessionId = SessionId {
    thread: 1,
    sid: 100,
    serial: 7,
};

fn open_list(xid: Xid) -> Vec<OpenTransaction> {
    vec![OpenTransaction {
        xid,
        instance: 1,
        start_scn: 10,
        status: "ACTIVE".into(),
        con_id: Some(CON_ID),
    }]
}

fn check<'a>(
    seconds: i64,
    current_scn: u64,
    mined: u64,
    open: &'a [OpenTransaction],
    sessions: &'a [SessionId],
) -> OrphanCheck<'a> {
    OrphanCheck {
        now: at(seconds),
        current_scn,
        mined_through_scn: mined,
        open_transactions: open,
        sessions,
    }
}

#[test]
fn an_orphan_is_released_only_when_all_three_conditions_hold() {
    let (dir, mut buffer, metrics) = orphan_buffer(OrphanAction::Release);
    let a = xid(1, 1);
    hold(&mut buffer, row(a, OperationCode::Start, 10));
    hold(&mut buffer, change(a, 11, ROW_A, 50));
    assert!(dir.path().join(spill_file_name(1, a)).exists());
    let gone: Vec<OpenTransaction> = Vec::new();
    let alive = [SESSION];
    assert!(buffer.orphan_check_due(at(0)));
    // Too young to be checked: the absence does not count.
    assert_eq!(
        buffer
            .check_orphans(check(100, 1000, 1000, &gone, &[]))
            .unwrap(),
        []
    );
    assert!(!buffer.orphan_check_due(at(399)));
    assert!(buffer.orphan_check_due(at(400)));
    // Absent once (first absence at SCN 1000), then listed again: the count starts over.
    assert_eq!(
        buffer
            .check_orphans(check(400, 1000, 1000, &gone, &[]))
            .unwrap(),
        []
    );
    assert_eq!(
        buffer
            .check_orphans(check(700, 1100, 1100, &open_list(a), &[]))
            .unwrap(),
        []
    );
    // Absent twice from SCN 2000 on, but not yet mined past 2000.
    assert_eq!(
        buffer
            .check_orphans(check(1000, 2000, 1500, &gone, &[]))
            .unwrap(),
        []
    );
    assert_eq!(
        buffer
            .check_orphans(check(1300, 2100, 2000, &gone, &[]))
            .unwrap(),
        []
    );
    // Mined past it, but the session lives.
    assert_eq!(
        buffer
            .check_orphans(check(1600, 2200, 2001, &gone, &alive))
            .unwrap(),
        []
    );
    assert_eq!(buffer.open_transactions(), 1);
    // All three hold.
    let events = buffer
        .check_orphans(check(1900, 2300, 2001, &gone, &[]))
        .unwrap();
    assert_eq!(buffer.open_transactions(), 0);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert_eq!(metrics.orphans_released.get(), 1);
    assert_eq!(
        (metrics.open_transactions.get(), metrics.spilled_bytes.get()),
        (0, 0)
    );
    let [OpsEvent::TransactionOrphanReleased { .. }] = events.as_slice() else {
        panic!("{events:?}")
    };
    let event = serde_json::to_value(&events[0]).unwrap();
    assert_eq!(event["type"], "transaction-orphan-released");
    assert_eq!(event["xid"], a.to_lower_hex());
    assert_eq!(event["conId"], CON_ID);
    assert_eq!(event["events"], 1);
    assert_eq!(event["firstScn"], 10);
    assert_eq!(event["firstAbsenceScn"], 2000);
    assert_eq!(event["minedThroughScn"], 2001);
    assert_eq!(event["bufferedSince"], "2026-11-29T10:00:00Z");
    assert!(event["diskBytes"].as_u64().unwrap() > 0);
    // Its COMMIT, should it come after all, stops the capture.
    let error = buffer.push(commit(a, 2400), t0()).unwrap_err();
    assert_eq!(code(&error), StopCode::ReleasedTransactionCommitted);
}

#[test]
fn a_session_on_another_instance_does_not_keep_an_orphan_alive_but_one_without_session_is_never_an_orphan()
 {
    let (_dir, mut buffer, _) = orphan_buffer(OrphanAction::Release);
    let (a, b) = (xid(1, 1), xid(2, 1));
    hold(&mut buffer, change(a, 10, ROW_A, 5));
    let mut anonymous = change(b, 11, ROW_A, 5);
    (anonymous.session, anonymous.serial) = (None, None);
    hold(&mut buffer, anonymous);
    let elsewhere = [SessionId {
        thread: 2,
        ..SESSION
    }];
    let gone: Vec<OpenTransaction> = Vec::new();
    buffer
        .check_orphans(check(300, 1000, 1000, &gone, &elsewhere))
        .unwrap();
    let events = buffer
        .check_orphans(check(600, 1100, 1001, &gone, &elsewhere))
        .unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(
        buffer.open_transactions(),
        1,
        "the transaction naming no session stays"
    );
}

#[test]
fn an_orphan_with_action_fail_stops_with_cdc_7002() {
    let (_dir, mut buffer, _) = orphan_buffer(OrphanAction::Fail);
    let a = xid(1, 1);
    hold(&mut buffer, change(a, 10, ROW_A, 5));
    let gone: Vec<OpenTransaction> = Vec::new();
    buffer
        .check_orphans(check(300, 1000, 1000, &gone, &[]))
        .unwrap();
    let error = buffer
        .check_orphans(check(600, 1100, 1001, &gone, &[]))
        .unwrap_err();
    let stop = error.stop().unwrap();
    assert_eq!(stop.code, StopCode::OrphanedTransaction);
    assert_eq!(stop.details["transactions"][0]["xid"], a.to_lower_hex());
    assert_eq!(stop.details["firstAbsenceScn"], 1000);
    assert_eq!(buffer.open_transactions(), 1, "nothing dropped");
}

fn aged_buffer(
    max_age: Option<u64>,
    action: MaxAgeAction,
) -> (tempfile::TempDir, TransactionBuffer, BufferMetrics) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), 1 << 30, 1 << 30);
    config.transactions.max_age_seconds = max_age;
    config.transactions.max_age_action = action;
    let (buffer, metrics) = buffer(config);
    (dir, buffer, metrics)
}

#[test]
fn max_age_fail_stops_with_cdc_4004() {
    let (_dir, mut buffer, _) = aged_buffer(Some(60), MaxAgeAction::Fail);
    hold(&mut buffer, change(xid(1, 1), 10, ROW_A, 5));
    assert_eq!(buffer.enforce_max_age(at(60)).unwrap(), []);
    let stop = buffer.enforce_max_age(at(61)).unwrap_err().stop().unwrap();
    assert_eq!(stop.code, StopCode::TransactionTooOld);
    assert_eq!(
        (
            stop.details["ageSeconds"].clone(),
            stop.details["maxAgeSeconds"].clone()
        ),
        (json!(61), json!(60))
    );
}

#[test]
fn the_age_counts_from_the_start_in_the_database_so_a_new_buffer_does_not_reset_it() {
    // A restart: a new buffer sees the START row of a transaction that began 120 s ago on the
    // database's clock.
    let database_now = jiff::civil::date(2024, 1, 2).at(12, 0, 0, 0);
    let mut start = row(xid(1, 1), OperationCode::Start, 10);
    start.timestamp = Some(database_now - jiff::SignedDuration::from_secs(120));
    let key = TransactionKey::of(&start);
    let (_dir, mut buffer, _) = aged_buffer(Some(60), MaxAgeAction::Fail);
    buffer.push(start, at(0)).unwrap();
    assert_eq!(
        buffer.open_transaction(&key).unwrap().0,
        at(0),
        "without the database's clock, the process's"
    );
    assert_eq!(buffer.enforce_max_age(at(0)).unwrap(), []);
    buffer.observe_database_clock(at(0), database_now);
    assert_eq!(
        buffer.open_transaction(&key).unwrap().0,
        at(-120),
        "the journal threshold counts from the start too"
    );
    // One that started when the clock was read is as old as this process has seen it.
    let mut later = row(xid(2, 1), OperationCode::Start, 11);
    later.timestamp = Some(database_now);
    let later_key = TransactionKey::of(&later);
    buffer.push(later, at(1)).unwrap();
    assert_eq!(buffer.open_transaction(&later_key).unwrap().0, at(1));
    let stop = buffer.enforce_max_age(at(1)).unwrap_err().stop().unwrap();
    assert_eq!(stop.code, StopCode::TransactionTooOld);
    assert_eq!(stop.details["ageSeconds"], json!(121));
}

#[test]
fn max_age_discard_returns_the_ops_event_and_dlq_record_and_ledgers_the_id() {
    let (_dir, mut buffer, metrics) = aged_buffer(Some(60), MaxAgeAction::Discard);
    let (old, young) = (xid(1, 1), xid(2, 1));
    hold(&mut buffer, change(old, 10, ROW_A, 5));
    buffer.push(change(young, 11, ROW_A, 5), at(30)).unwrap();
    let discarded = buffer.enforce_max_age(at(61)).unwrap();
    assert_eq!(discarded.len(), 1);
    assert_eq!(buffer.open_transactions(), 1);
    assert_eq!(metrics.transactions_discarded.get(), 1);
    let ops: Value = serde_json::to_value(&discarded[0].ops_event).unwrap();
    assert_eq!(ops["type"], "transaction-discarded");
    assert_eq!(ops["xid"], old.to_lower_hex());
    assert_eq!(ops["ageSeconds"], 61);
    let dlq: Value = serde_json::to_value(&discarded[0].dlq_record).unwrap();
    assert_eq!(dlq["reason"], "transaction-discarded");
    assert_eq!(dlq["events"], 1);
    assert_eq!(
        buffer.ledger().entries()[0].reason,
        ReleaseReason::Discarded
    );
    let error = buffer.push(commit(old, 100), t0()).unwrap_err();
    assert_eq!(code(&error), StopCode::ReleasedTransactionCommitted);
}

#[test]
fn max_age_unset_is_unlimited() {
    let (_dir, mut buffer, _) = aged_buffer(None, MaxAgeAction::Fail);
    hold(&mut buffer, change(xid(1, 1), 10, ROW_A, 5));
    assert_eq!(buffer.enforce_max_age(at(10_000_000)).unwrap(), []);
}

#[test]
fn files_of_an_earlier_run_are_removed_at_start_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("000001-0100010001000000.spill"), b"stale").unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"keep").unwrap();
    let spill_dir = dir.path().join("nested").join("capture");
    std::fs::create_dir_all(&spill_dir).unwrap();
    std::fs::write(spill_dir.join("x.spill"), b"stale").unwrap();
    let _ = buffer(config(dir.path(), 0, 1 << 30));
    let _ = buffer(config(&spill_dir, 0, 1 << 30));
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["nested", "notes.txt"]);
    assert_eq!(std::fs::read_dir(&spill_dir).unwrap().count(), 0);
}

#[test]
fn config_comes_from_the_capture_config_with_its_defaults() {
    let dir = redoline_capture::config::default_spill_dir("orders");
    assert!(dir.ends_with("redoline-spill/orders"));
    let config = BufferSettings::from_config(
        &BufferConfig::default(),
        &TransactionsSpec::default(),
        dir.clone(),
    )
    .unwrap();
    assert_eq!(config.memory_max_bytes, 256 << 20);
    assert_eq!(config.spill_max_bytes, 10 << 30);
    assert_eq!(config.transactions.max_staged_records, 1_000_000);
    let mut spec = BufferConfig::default();
    spec.spill.max_bytes = redoline_crds::ByteQuantity::quantity("lots");
    let error = BufferSettings::from_config(&spec, &TransactionsSpec::default(), dir).unwrap_err();
    let stop = error.stop().unwrap();
    assert_eq!(stop.code, StopCode::InvalidConfiguration);
    assert_eq!(stop.details["field"], "spec.buffer.spill.maxBytes");
}

#[test]
fn a_receipt_needs_every_row_read() {
    let (_dir, mut buffer, _) = heap_buffer();
    let a = xid(1, 1);
    hold(&mut buffer, change(a, 10, ROW_A, 5));
    hold(&mut buffer, change(a, 11, ROW_A, 5));
    let mut c = committed(&mut buffer, commit(a, 20));
    assert!(c.next().is_some());
    let error = c.finish().unwrap_err();
    assert!(
        error.stop().is_none(),
        "a caller bug, not an operator's stop"
    );
}

/// The rows the simulator mines for `scenario`, all of it.
fn simulated_rows(scenario: &str) -> Vec<redoline_capture::source::LogMinerRow> {
    use redoline_capture::simulator::Simulator;
    use redoline_capture::source::{DatabaseCatalog, MiningWindow, RedoMiner};
    let mut sim = Simulator::from_reader(scenario.as_bytes()).unwrap();
    let end = sim.current_scn().unwrap();
    let window = MiningWindow {
        start_scn: 1,
        end_scn: end,
        logs: sim.logs_covering(1).unwrap().logs,
        objects: Vec::new(),
        tables: vec![("APP".to_owned(), "DOCS".to_owned())],
        pdb: None,
        with_sql_undo: false,
    };
    sim.mined_rows(&window).unwrap()
}

/// The committed rows of the one transaction of `rows`, pushed through a buffer of `memory_max`
/// heap bytes, as (operation, SQL_REDO). (ROWIDs left out: a placeholder INSERT streams from a
/// spill file with its placeholder, the assembler takes the ROWID from its LOB rows.)
fn committed_rows(
    rows: Vec<redoline_capture::source::LogMinerRow>,
    memory_max: u64,
) -> (Vec<(OperationCode, String)>, u64, bool) {
    let (_dir, mut buffer, metrics) = buffer_with_budget(memory_max);
    let mut out = Vec::new();
    let mut spilled = false;
    for row in rows {
        if let Pushed::Committed(transaction) = buffer.push(row, t0()).unwrap() {
            spilled = transaction.is_spilled();
            out.extend(
                drain(&mut buffer, *transaction)
                    .into_iter()
                    .map(|row| (row.operation, row.sql_redo.unwrap_or_default())),
            );
        }
    }
    (out, metrics.unmatched_undo_rows.get(), spilled)
}

/// Savepoint rollbacks and failed statements undo INSERTs of rows with LOB columns (LogMiner
/// gives such an INSERT the placeholder ROWID, its undo DELETE the real one), with the LOB
/// inline, written in pieces or NULL, and a LOB written in pieces over an existing row: on the
/// heap and from a spill file, exactly the rows of the one statement kept remain.
#[test]
fn undo_rows_cancel_lob_inserts_and_whole_lob_writes_on_heap_and_on_disk() {
    const DOCS: &str = r#"{"table":"APP.DOCS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"BODY","type":"CLOB"},{"name":"PIC","type":"BLOB"}],"logging":"all"}
"#;
    // Characters outside the BMP, so pieces split inside UTF-16 pairs' reach.
    let big = "ab\u{1F600}".repeat(3_000);
    let insert = |id: u32, values: &str, fails: bool| {
        format!(
            "{{\"tx\":\"a\",\"insert\":\"APP.DOCS\",\"values\":{{\"ID\":{id}{values}}}{}}}\n",
            if fails { ",\"fails\":true" } else { "" }
        )
    };
    let kept = insert(1, ",\"BODY\":\"kept\"", false);
    let mut scenario = format!("{DOCS}{kept}{{\"tx\":\"a\",\"savepoint\":\"s\"}}\n");
    scenario.push_str(&insert(2, ",\"BODY\":\"short\"", false));
    scenario.push_str(&insert(3, &format!(",\"BODY\":\"{big}\""), false));
    scenario.push_str(&insert(4, ",\"PIC\":\"cafe\"", false));
    scenario.push_str(&insert(5, "", false));
    scenario.push_str("{\"tx\":\"a\",\"rollback_to\":\"s\"}\n");
    scenario.push_str(&insert(6, ",\"BODY\":\"x\"", true));
    scenario.push_str(&insert(7, &format!(",\"BODY\":\"{big}\""), true));
    scenario.push_str("{\"tx\":\"a\",\"savepoint\":\"s2\"}\n");
    scenario.push_str(&format!(
        "{{\"tx\":\"a\",\"lob_write\":\"APP.DOCS\",\"where\":{{\"ID\":1}},\"column\":\"BODY\",\"offset\":1,\"data\":\"{big}\"}}\n"
    ));
    scenario.push_str(
        "{\"tx\":\"a\",\"update\":\"APP.DOCS\",\"where\":{\"ID\":1},\"set\":{\"BODY\":\"inline\"}}\n",
    );
    scenario.push_str("{\"tx\":\"a\",\"rollback_to\":\"s2\"}\n{\"tx\":\"a\",\"commit\":true}\n");
    let all = simulated_rows(&scenario);
    assert!(
        all.iter().any(|row| row.rollback),
        "the scenario writes undo rows"
    );
    let expected = committed_rows(
        simulated_rows(&format!("{DOCS}{kept}{{\"tx\":\"a\",\"commit\":true}}\n")),
        1 << 30,
    )
    .0;
    assert!(
        expected.len() >= 2,
        "the INSERT and its LOB row: {expected:?}"
    );
    for memory_max in [1 << 30, 0] {
        let (rows, unmatched, spilled) = committed_rows(all.clone(), memory_max);
        assert_eq!(spilled, memory_max == 0);
        assert_eq!(rows, expected, "budget {memory_max}");
        assert_eq!(
            unmatched, 0,
            "every undo row found its change (budget {memory_max})"
        );
    }
}

/// Discards one more transaction for its age than the released ledger holds by default, none of
/// their undo slots ever reused, then mines a late row and the COMMIT of the first one discarded.
/// The buffer must never hand that COMMIT out (only its late row would be published): it stops,
/// at the discard that finds the ledger full (CDC-7003) or at the COMMIT (CDC-7001). Before, the
/// ledger evicted its oldest entry with a warning and the COMMIT was handed out in part.
#[test]
fn a_late_commit_after_more_releases_than_the_ledger_holds_is_never_handed_out_in_part() {
    let (_dir, mut buffer, metrics) = aged_buffer(Some(60), MaxAgeAction::Discard);
    let cap = TransactionsSpec::default().released_ledger_max_entries;
    let cap_slots = u16::try_from(cap).unwrap();
    for slot in 0..=cap_slots {
        hold(&mut buffer, change(xid(slot, 1), 10, ROW_A, 5));
    }
    let first = xid(0, 1);
    let outcome = buffer.enforce_max_age(at(61)).and_then(|discarded| {
        assert_eq!(discarded.len(), usize::from(cap_slots) + 1);
        buffer.push(change(first, 20, ROW_B, 5), at(62))?;
        buffer.push(commit(first, 21), at(62))
    });
    match outcome {
        Err(error) => {
            let stop = error.stop().unwrap();
            assert_eq!(stop.code.code(), "CDC-7003", "{stop}");
            assert_eq!(stop.code.reason(), "ReleasedLedgerFull");
            assert_eq!(stop.details["limit"], cap);
            // The last of them in the order of discarding (age, then key).
            let refused = (0..=cap_slots)
                .map(|slot| xid(slot, 1))
                .find(|x| x.to_lower_hex() == stop.details["transactions"][0]["xid"])
                .expect("names the transaction it could not discard");
            assert!(buffer.ledger().get(Some(CON_ID), &refused).is_none());
            assert_eq!(stop.details["releaseReason"], "discarded");
            assert_eq!(
                stop.details["entries"],
                json!({"orphanReleased": 0, "discarded": cap})
            );
            let oldest = stop.details["oldest"].as_array().unwrap();
            assert_eq!(oldest.len(), 10);
            assert_eq!(
                oldest[0]["xid"],
                first.to_string(),
                "names the oldest entries, the first discarded first"
            );
            assert!(
                stop.message.contains("releasedLedgerMaxEntries (4096)"),
                "{}",
                stop.message
            );
            assert_eq!(
                buffer.ledger().len(),
                usize::from(cap_slots),
                "nothing forgotten"
            );
            assert_eq!(buffer.open_transactions(), 1, "the refused one stays");
            assert_eq!(metrics.transactions_discarded.get(), cap);
        }
        Ok(pushed) => panic!("the late COMMIT of a discarded transaction went on: {pushed:?}"),
    }
}

/// The bound is a setting, and orphans count against it like discards: with room for one, the
/// second orphan stops the capture and stays buffered; a reused slot makes room again.
#[test]
fn released_ledger_max_entries_bounds_orphans_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), 0, 1 << 30);
    config.transactions.orphan_check_interval_seconds = 300;
    config.transactions.released_ledger_max_entries = 1;
    let (mut buffer, metrics) = buffer(config);
    let (a, b) = (xid(1, 1), xid(2, 1));
    hold(&mut buffer, row(a, OperationCode::Start, 10));
    hold(&mut buffer, row(b, OperationCode::Start, 11));
    let gone = [];
    buffer
        .check_orphans(check(300, 1000, 1000, &gone, &[]))
        .unwrap();
    let error = buffer
        .check_orphans(check(600, 1100, 1100, &gone, &[]))
        .unwrap_err();
    let stop = error.stop().unwrap();
    assert_eq!(stop.code, StopCode::ReleasedLedgerFull);
    assert_eq!(stop.details["limit"], 1);
    assert_eq!(stop.details["releaseReason"], "orphan-released");
    assert_eq!(stop.details["transactions"][0]["xid"], b.to_lower_hex());
    assert_eq!(stop.details["oldest"][0]["xid"], a.to_string());
    assert_eq!(metrics.orphans_released.get(), 1);
    assert_eq!(buffer.open_transactions(), 1, "b stays buffered");
    assert!(buffer.ledger().get(Some(CON_ID), &a).is_some());

    // a's slot reused: its entry goes, and b can be released.
    hold(&mut buffer, change(xid(1, 2), 1200, ROW_A, 5));
    let events = buffer
        .check_orphans(check(900, 1300, 1300, &gone, &[]))
        .unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(buffer.open_transactions(), 1, "only the new one");
}

/// Two transactions of six rows, then ten of four rows, in a buffer with the given heap budget and
/// spill cap.
fn six_six_and_ten_fours(
    dir: &std::path::Path,
    memory_max: u64,
    spill_max: u64,
) -> (TransactionBuffer, [Xid; 2], Vec<Xid>) {
    let sixes = [xid(100, 1), xid(101, 1)];
    let fours: Vec<Xid> = (0..10).map(|slot| xid(slot, 1)).collect();
    let (mut buffer, _) = buffer(config(dir, memory_max, spill_max));
    let mut scn = 10;
    let mut push = |buffer: &mut TransactionBuffer, xid: Xid| {
        scn += 1;
        hold(buffer, change(xid, scn, ROW_A, 10));
    };
    for xid in sixes {
        for _ in 0..6 {
            push(&mut buffer, xid);
        }
    }
    for _ in 0..4 {
        for &xid in &fours {
            push(&mut buffer, xid);
        }
    }
    (buffer, sixes, fours)
}

/// The two six-row transactions spill (largest first, once the heap passes its budget near the
/// end, and once more), the ten others stay on the heap; a row weighs about twice as much on the
/// heap as on disk, so each heap one is larger by heap plus disk bytes than each spilled one.
/// Then one more row for a spilled one passes the spill cap.
#[test]
fn cdc_4001_names_the_transactions_on_disk_first() {
    let dir = tempfile::tempdir().unwrap();
    let (probe, ..) = six_six_and_ten_fours(dir.path(), 1 << 30, 1 << 30);
    let (total, six) = (probe.heap_bytes(), probe.largest(1)[0].heap_bytes);
    drop(probe);
    let budget = total - six - six / 12;
    let (probe, spilled, on_heap) = six_six_and_ten_fours(dir.path(), budget, 1 << 30);
    assert_eq!(probe.spilled_transactions(), 2, "the setup spills two");
    let on_disk = probe.spilled_bytes();
    let four = probe.heap_bytes() / 10;
    assert!(
        on_disk / 2 < four,
        "each spilled one ({on_disk} bytes on disk together) is smaller than a heap one ({four})"
    );
    drop(probe);

    let (mut buffer, ..) = six_six_and_ten_fours(dir.path(), budget, on_disk);
    let error = buffer
        .push(change(spilled[0], 100, ROW_A, 10), t0())
        .unwrap_err();
    let stop = error.stop().unwrap();
    assert_eq!(stop.code, StopCode::SpillCapacityExceeded);
    let listed = stop.details["transactions"].as_array().unwrap();
    assert_eq!(listed.len(), 10);
    let hex = |xid: &Xid| Value::from(xid.to_lower_hex());
    let mut first_two: Vec<Value> = listed[..2].iter().map(|t| t["xid"].clone()).collect();
    first_two.sort_by_key(Value::to_string);
    assert_eq!(
        first_two,
        spilled.iter().map(hex).collect::<Vec<_>>(),
        "the spilled transactions first: {listed:?}"
    );
    assert!(
        listed[..2]
            .iter()
            .all(|t| t["diskBytes"].as_u64() > Some(0))
    );
    assert!(
        listed[2..]
            .iter()
            .all(|t| t["diskBytes"] == 0 && on_heap.iter().map(hex).any(|x| x == t["xid"])),
        "then the largest on the heap: {listed:?}"
    );

    // Trimmed to fit the termination message, the list keeps its head: what is on disk.
    let padded = stop.with_detail("pad", "p".repeat(3_000));
    let message: Value = serde_json::from_str(&padded.termination_message(t0())).unwrap();
    let kept = message["details"]["transactions"].as_array().unwrap();
    assert!(!kept.is_empty() && kept.len() < 10, "{kept:?}");
    assert!(kept[0]["diskBytes"].as_u64() > Some(0), "{kept:?}");
}

#[test]
fn the_ledger_and_its_bound_are_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path(), 1 << 30, 1 << 30);
    config.transactions.max_age_seconds = Some(60);
    config.transactions.max_age_action = MaxAgeAction::Discard;
    config.transactions.released_ledger_max_entries = 7;
    let (mut buffer, metrics) = buffer(config);
    assert_eq!(metrics.released_ledger_max_entries.get(), 7);
    hold(&mut buffer, change(xid(1, 1), 10, ROW_A, 5));
    hold(&mut buffer, change(xid(2, 1), 11, ROW_A, 5));
    buffer.enforce_max_age(at(61)).unwrap();
    assert_eq!(metrics.released_ledger_entries.get(), 2);
    // xid(1, 1)'s slot reused.
    hold(&mut buffer, change(xid(1, 2), 12, ROW_A, 5));
    assert_eq!(metrics.released_ledger_entries.get(), 1);
}
