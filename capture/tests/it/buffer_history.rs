//! Reading an open transaction's rows so far (`TransactionBuffer::history`, what the journal
//! writes first): from the heap or the spill file, in batches, and pushing them into an empty
//! buffer rebuilds a transaction that commits the same rows.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use crate::buffer_support;

use buffer_support::*;
use redoline_capture::buffer::{BufferError, TransactionKey};
use redoline_capture::source::row::SEQUENCELESS_XIDSQN;
use redoline_capture::source::{LogMinerRow, Xid};

const ROW_A: &str = "AAAR9JAAHAAAACFAAA";
const ROW_B: &str = "AAAR9JAAHAAAACFAAB";

#[test]
fn history_rebuilds_an_open_transaction_from_the_heap_or_its_spill_file() {
    for memory_max in [1 << 30, 0] {
        let dir = tempfile::tempdir().unwrap();
        let (mut original, _) = buffer(config(&dir.path().join("a"), memory_max, 1 << 30));
        let a = xid(1, 1);
        hold(&mut original, change(a, 10, ROW_A, 5));
        hold(&mut original, change(a, 11, ROW_B, 5));
        hold(&mut original, change(a, 12, ROW_A, 5));
        hold(&mut original, undo(a, 13, ROW_A)); // cancels 12
        hold(&mut original, change(a, 14, ROW_B, 5));
        let key = TransactionKey {
            con_id: Some(3),
            xid: a,
        };
        assert_eq!(original.open_first_scns().collect::<Vec<_>>(), [(key, 10)]);

        let mut batches = Vec::new();
        let open = original
            .history(&key, 2, |rows: &[LogMinerRow]| {
                batches.push(rows.to_vec());
                Ok::<(), BufferError>(())
            })
            .unwrap();
        assert!(open);
        assert!(batches.iter().all(|batch| batch.len() <= 2));
        let rows: Vec<LogMinerRow> = batches.into_iter().flatten().collect();

        let (mut rebuilt, _) = buffer(config(&dir.path().join("b"), memory_max, 1 << 30));
        for row in rows {
            rebuilt.push(row, t0()).unwrap();
        }
        let done = committed(&mut original, commit(a, 20));
        let expected = scns(&drain(&mut original, done));
        let done = committed(&mut rebuilt, commit(a, 20));
        let again = scns(&drain(&mut rebuilt, done));
        assert_eq!(expected, [10, 11, 14], "budget {memory_max}");
        assert_eq!(again, expected, "budget {memory_max}");
    }
}

#[test]
fn history_of_a_transaction_not_open_is_false_and_undo_rows_find_their_owner() {
    let dir = tempfile::tempdir().unwrap();
    let (mut buffer, _) = buffer(config(dir.path(), 1 << 30, 1 << 30));
    let a = xid(3, 7);
    hold(&mut buffer, change(a, 10, ROW_A, 5));
    let missing = TransactionKey {
        con_id: Some(3),
        xid: xid(4, 1),
    };
    let visited = buffer
        .history(&missing, 10, |_: &[LogMinerRow]| Ok::<(), BufferError>(()))
        .unwrap();
    assert!(!visited);
    let sequenceless = undo(Xid::from_parts(1, 3, SEQUENCELESS_XIDSQN), 11, ROW_A);
    assert_eq!(
        buffer.owner_of(&sequenceless),
        Some(TransactionKey {
            con_id: Some(3),
            xid: a
        })
    );
    assert_eq!(buffer.owner_of(&change(xid(9, 9), 12, ROW_B, 1)), None);
}
