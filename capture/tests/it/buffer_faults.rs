//! Spill faults, one behaviour per test: a flipped bit, a truncated or deleted file end in
//! CDC-3002 with nothing of the transaction handed on; a full volume (a real ENOSPC from
//! `/dev/full`) and the spill cap end in CDC-4001 naming the largest transactions.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use crate::buffer_support;

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use buffer_support::*;
use redoline_capture::buffer::{
    BufferError, Corruption, Pushed, SpillError, TransactionBuffer, encode_row, spill_file_name,
};
use redoline_capture::source::Xid;
use redoline_crds::StopCode;
use serde_json::{Value, json};

const A: u16 = 1;
const B: u16 = 2;

/// Spills transaction A (budget 0) with `rows` changes, then writes one row of B so that A's
/// bytes leave the shared write buffer for its file. Returns A's file.
fn spill_a(buffer: &mut TransactionBuffer, dir: &Path, rows: u64, with_undo: bool) -> PathBuf {
    for i in 0..rows {
        hold(
            buffer,
            change(xid(A, 1), 100 + i, &format!("AAAR9JAAHAAAACF{i:03}"), 200),
        );
    }
    if with_undo {
        hold(buffer, undo(xid(A, 1), 100 + rows, "AAAR9JAAHAAAACF000"));
    }
    hold(buffer, change(xid(B, 1), 900, "AAAR9JAAHAAAACFBBB", 10));
    let path = dir.join(spill_file_name(1, xid(A, 1)));
    assert!(path.metadata().unwrap().len() > 0, "A's file is on disk");
    path
}

/// What a consumer hands on: every row until the first error, and the error. Nothing counts as
/// published unless `finish` gives a receipt.
fn consume(pushed: Result<Pushed, BufferError>) -> (usize, BufferError) {
    let mut committed = match pushed {
        Err(error) => return (0, error),
        Ok(Pushed::Committed(committed)) => *committed,
        Ok(other) => panic!("{other:?}"),
    };
    let mut received = 0;
    for row in committed.by_ref() {
        match row {
            Ok(_) => received += 1,
            Err(error) => {
                assert!(committed.next().is_none(), "nothing after the error");
                let refused = committed.finish().unwrap_err();
                assert!(
                    refused.stop().is_none(),
                    "a receipt for a damaged transaction is a bug"
                );
                return (received, error);
            }
        }
    }
    panic!("the damaged transaction was read to its end")
}

fn assert_damaged(error: &BufferError, expected: impl Fn(&Corruption) -> bool) {
    let stop = error.stop().unwrap();
    assert_eq!(stop.code, StopCode::SpillCorrupted, "{error}");
    match error {
        BufferError::Spill(SpillError::Corrupted { problem, .. }) => {
            assert!(expected(problem), "{problem:?}")
        }
        other => panic!("{other:?}"),
    }
    assert!(stop.details.contains_key("path"));
}

fn flip_bit(path: &Path, offset: u64) {
    flip_bits(path, offset, 0x10);
}

fn flip_bits(path: &Path, offset: u64, mask: u8) {
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut byte = [0u8; 1];
    file.seek(SeekFrom::Start(offset)).unwrap();
    file.read_exact(&mut byte).unwrap();
    byte[0] ^= mask;
    file.seek(SeekFrom::Start(offset)).unwrap();
    file.write_all(&byte).unwrap();
}

#[test]
fn a_flipped_bit_fails_its_crc_and_the_stream_ends_in_cdc_3002() {
    let dir = tempfile::tempdir().unwrap();
    let (mut buffer, _) = buffer(config(dir.path(), 0, u64::MAX / 2));
    let path = spill_a(&mut buffer, dir.path(), 50, false);
    let len = path.metadata().unwrap().len();
    flip_bit(&path, len - 20);
    let pushed = buffer.push(commit(xid(A, 1), 1000), t0());
    let (received, error) = consume(pushed);
    // Streamed: earlier rows reached the consumer, which must abort them (see committed.rs).
    assert_eq!(received, 49);
    assert_damaged(&error, |p| matches!(p, Corruption::Checksum { .. }));
}

#[test]
fn a_flipped_bit_in_the_first_frame_hands_out_no_row() {
    let dir = tempfile::tempdir().unwrap();
    let (mut buffer, _) = buffer(config(dir.path(), 0, u64::MAX / 2));
    let path = spill_a(&mut buffer, dir.path(), 5, false);
    flip_bit(&path, 8 + 8 + 3); // magic, frame header, then the payload
    let pushed = buffer.push(commit(xid(A, 1), 1000), t0());
    let (received, error) = consume(pushed);
    assert_eq!(received, 0);
    assert_damaged(&error, |p| matches!(p, Corruption::Checksum { .. }));
}

#[test]
fn a_flipped_bit_in_a_transaction_with_undo_rows_fails_the_commit_itself() {
    let dir = tempfile::tempdir().unwrap();
    let (mut buffer, _) = buffer(config(dir.path(), 0, u64::MAX / 2));
    let path = spill_a(&mut buffer, dir.path(), 50, true);
    let len = path.metadata().unwrap().len();
    flip_bit(&path, len - 20);
    // The undo pass reads every frame before a single row is handed out.
    let error = buffer.push(commit(xid(A, 1), 1000), t0()).unwrap_err();
    assert_damaged(&error, |p| matches!(p, Corruption::Checksum { .. }));
}

#[test]
fn a_damaged_frame_length_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let (mut buffer, _) = buffer(config(dir.path(), 0, u64::MAX / 2));
    let path = spill_a(&mut buffer, dir.path(), 3, false);
    flip_bit(&path, 8 + 3); // the high byte of the first frame's length
    let pushed = buffer.push(commit(xid(A, 1), 1000), t0());
    let (received, error) = consume(pushed);
    assert_eq!(received, 0);
    assert_damaged(&error, |p| matches!(p, Corruption::FrameTooLong(_)));
}

#[test]
fn a_truncated_file_fails_the_commit_before_any_row() {
    for cut in [1, 30] {
        let dir = tempfile::tempdir().unwrap();
        let (mut buffer, _) = buffer(config(dir.path(), 0, u64::MAX / 2));
        let path = spill_a(&mut buffer, dir.path(), 20, false);
        let len = path.metadata().unwrap().len();
        OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len - cut)
            .unwrap();
        let error = buffer.push(commit(xid(A, 1), 1000), t0()).unwrap_err();
        assert_damaged(&error, |p| {
            *p == Corruption::Length {
                expected: len,
                actual: len - cut,
            }
        });
    }
}

#[test]
fn a_deleted_file_fails_the_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (mut buffer, _) = buffer(config(dir.path(), 0, u64::MAX / 2));
    let path = spill_a(&mut buffer, dir.path(), 20, false);
    std::fs::remove_file(&path).unwrap();
    let error = buffer.push(commit(xid(A, 1), 1000), t0()).unwrap_err();
    assert_damaged(&error, |p| *p == Corruption::Missing);
}

#[test]
fn a_full_volume_stops_with_cdc_4001_and_the_os_message() {
    let dir = tempfile::tempdir().unwrap();
    let (mut buffer, _) = buffer(config(dir.path(), 0, u64::MAX / 2));
    // The next spill file is /dev/full: every write fails with ENOSPC.
    std::os::unix::fs::symlink("/dev/full", dir.path().join(spill_file_name(1, xid(A, 1))))
        .unwrap();
    for i in 0..10 {
        hold(
            &mut buffer,
            change(xid(A, 1), 100 + i, "AAAR9JAAHAAAACFAAA", 100),
        );
    }
    let error = buffer.push(commit(xid(A, 1), 1000), t0()).unwrap_err();
    let stop = error.stop().unwrap();
    assert_eq!(stop.code, StopCode::SpillCapacityExceeded);
    assert!(
        stop.message.contains("No space left on device"),
        "{}",
        stop.message
    );
    let listed = stop.details["transactions"].as_array().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["xid"], xid(A, 1).to_lower_hex());
    assert_eq!(listed[0]["events"], 10);
    let message: Value = serde_json::from_str(&stop.termination_message(t0())).unwrap();
    assert_eq!(message["reason"], "SpillCapacityExceeded");
}

/// The bytes a spilled transaction's rows take on disk: magic plus one frame per row.
fn file_len(rows: &[redoline_capture::source::LogMinerRow]) -> u64 {
    8 + rows
        .iter()
        .map(|row| {
            let mut payload = Vec::new();
            encode_row(row, &mut payload);
            8 + payload.len() as u64
        })
        .sum::<u64>()
}

#[test]
fn the_cap_stops_with_cdc_4001_naming_the_ten_largest() {
    let dir = tempfile::tempdir().unwrap();
    // Twelve spilled transactions of 1..=12 rows with distinct sizes; then one row too many.
    let mut expected = Vec::new();
    let mut total = 0;
    let transactions: Vec<(Xid, Vec<_>)> = (1..=12u16)
        .map(|t| {
            let xid = Xid::from_parts(2, t, 5);
            let rows = (0..t as u64)
                .map(|i| {
                    change(
                        xid,
                        10 * t as u64 + i,
                        "AAAR9JAAHAAAACFAAA",
                        40 + t as usize,
                    )
                })
                .collect();
            (xid, rows)
        })
        .collect();
    for (xid, rows) in &transactions {
        let len = file_len(rows);
        total += len;
        expected.push(json!({"xid": xid.to_lower_hex(), "user": "APP", "firstScn": rows[0].scn, "events": rows.len(), "heapBytes": 0, "diskBytes": len}));
    }
    let (mut buffer, _) = buffer(config(dir.path(), 0, total + 10));
    for (_, rows) in &transactions {
        for row in rows {
            hold(&mut buffer, row.clone());
        }
    }
    assert_eq!(buffer.spilled_bytes(), total);
    let error = buffer
        .push(
            change(transactions[0].0, 999, "AAAR9JAAHAAAACFAAA", 40),
            t0(),
        )
        .unwrap_err();
    let stop = error.stop().unwrap();
    assert_eq!(stop.code, StopCode::SpillCapacityExceeded);
    expected.reverse();
    expected.truncate(10);
    assert_eq!(stop.details["transactions"], Value::Array(expected));
    assert!(
        stop.message.contains(&format!("{} bytes", total + 10)),
        "{}",
        stop.message
    );
}

#[test]
fn committed_files_count_towards_the_cap_until_released() {
    let dir = tempfile::tempdir().unwrap();
    let a_rows: Vec<_> = (0..5)
        .map(|i| change(xid(A, 1), 100 + i, "AAAR9JAAHAAAACFAAA", 100))
        .collect();
    let cap = file_len(&a_rows) + 100;
    let (mut buffer, metrics) = buffer(config(dir.path(), 0, cap));
    for row in &a_rows {
        hold(&mut buffer, row.clone());
    }
    let mut committed = committed(&mut buffer, commit(xid(A, 1), 200));
    assert!(committed.is_spilled());
    assert_eq!(committed.by_ref().map(Result::unwrap).count(), 5);
    let receipt = committed.finish().unwrap();
    // Not yet released: B cannot have the space.
    let error = buffer
        .push(change(xid(B, 1), 300, "AAAR9JAAHAAAACFBBB", 200), t0())
        .unwrap_err();
    assert_eq!(code(&error), StopCode::SpillCapacityExceeded);
    assert_eq!(metrics.spilled_bytes.get() as u64, file_len(&a_rows));

    let dir2 = tempfile::tempdir().unwrap();
    let (mut buffer, metrics) = buffer_support::buffer(config(dir2.path(), 0, cap));
    for row in &a_rows {
        hold(&mut buffer, row.clone());
    }
    let committed = buffer_support::committed(&mut buffer, commit(xid(A, 1), 200));
    assert_eq!(drain(&mut buffer, committed).len(), 5);
    assert_eq!(
        (buffer.spilled_bytes(), metrics.spilled_bytes.get()),
        (0, 0)
    );
    assert_eq!(std::fs::read_dir(dir2.path()).unwrap().count(), 0);
    hold(
        &mut buffer,
        change(xid(B, 1), 300, "AAAR9JAAHAAAACFBBB", 200),
    );
    drop(receipt);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// CRC32 catches every single-bit error: wherever the flip lands (magic, length, checksum or
    /// payload), the transaction ends in CDC-3002, never in a complete but different result.
    #[test]
    fn any_flipped_bit_ends_in_cdc_3002(position in 0.0f64..1.0, bit in 0u8..8, with_undo: bool) {
        let dir = tempfile::tempdir().unwrap();
        let (mut buffer, _) = buffer(config(dir.path(), 0, u64::MAX / 2));
        let path = spill_a(&mut buffer, dir.path(), 8, with_undo);
        let len = path.metadata().unwrap().len();
        flip_bits(&path, ((len as f64) * position) as u64, 1 << bit);
        let (_, error) = consume(buffer.push(commit(xid(A, 1), 1000), t0()));
        proptest::prop_assert_eq!(code(&error), StopCode::SpillCorrupted, "{}", error);
    }
}
