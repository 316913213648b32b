//! The transaction buffer against a simple in-memory model: random interleavings of changes,
//! undo rows (also sequence-less ones), commits and rollbacks, under heap budgets from nothing
//! (every transaction spills at once) to plenty (nothing spills). The committed transactions must
//! equal the model's, in commit order, row for row.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use crate::buffer_support;

use std::collections::HashMap;

use buffer_support::*;
use proptest::prelude::*;
use redoline_capture::buffer::Pushed;
use redoline_capture::source::{LogMinerRow, OperationCode, row::SEQUENCELESS_XIDSQN};

const TRANSACTIONS: u16 = 4;
const ROW_IDS: [&str; 3] = [
    "AAAR9JAAHAAAACFAAA",
    "AAAR9JAAHAAAACFAAB",
    "AAAR9JAAHAAAACFAAC",
];

#[derive(Clone, Debug)]
enum Op {
    Start {
        tx: u16,
    },
    Change {
        tx: u16,
        row: usize,
        len: usize,
    },
    Undo {
        tx: u16,
        row: usize,
        sequenceless: bool,
    },
    Commit {
        tx: u16,
    },
    Rollback {
        tx: u16,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let tx = 0..TRANSACTIONS;
    let row = 0..ROW_IDS.len();
    prop_oneof![
        1 => tx.clone().prop_map(|tx| Op::Start { tx }),
        8 => (tx.clone(), row.clone(), 0usize..600).prop_map(|(tx, row, len)| Op::Change { tx, row, len }),
        3 => (tx.clone(), row, any::<bool>()).prop_map(|(tx, row, sequenceless)| Op::Undo { tx, row, sequenceless }),
        2 => tx.clone().prop_map(|tx| Op::Commit { tx }),
        1 => tx.prop_map(|tx| Op::Rollback { tx }),
    ]
}

/// What Oracle committed: per open transaction its changes (SCNs), undo rows applied at once.
#[derive(Default)]
struct Model {
    open: HashMap<u16, Vec<(usize, u64)>>,
}

impl Model {
    fn apply(&mut self, op: &Op, scn: u64) -> Option<Vec<u64>> {
        match *op {
            Op::Start { tx } => {
                self.open.entry(tx).or_default();
            }
            Op::Change { tx, row, .. } => self.open.entry(tx).or_default().push((row, scn)),
            Op::Undo { tx, row, .. } => {
                if let Some(changes) = self.open.get_mut(&tx)
                    && let Some(at) = changes.iter().rposition(|(r, _)| *r == row)
                {
                    changes.remove(at);
                }
            }
            Op::Commit { tx } => {
                return self
                    .open
                    .remove(&tx)
                    .map(|changes| changes.into_iter().map(|(_, scn)| scn).collect());
            }
            Op::Rollback { tx } => {
                self.open.remove(&tx);
            }
        }
        None
    }
}

fn to_row(op: &Op, generation: &HashMap<u16, u32>, scn: u64) -> LogMinerRow {
    let xid_of = |tx: u16| xid(tx, generation.get(&tx).copied().unwrap_or(1));
    match *op {
        Op::Start { tx } => row(xid_of(tx), OperationCode::Start, scn),
        Op::Change { tx, row, len } => change(xid_of(tx), scn, ROW_IDS[row], len),
        Op::Undo {
            tx,
            row,
            sequenceless,
        } => {
            let xid = if sequenceless {
                xid(tx, SEQUENCELESS_XIDSQN)
            } else {
                xid_of(tx)
            };
            undo(xid, scn, ROW_IDS[row])
        }
        Op::Commit { tx } => commit(xid_of(tx), scn),
        Op::Rollback { tx } => row(xid_of(tx), OperationCode::Rollback, scn),
    }
}

fn budget() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        100u64..5_000,
        5_000u64..60_000,
        Just(1 << 30)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn committed_transactions_equal_the_model(ops in proptest::collection::vec(op(), 1..120), memory_max in budget()) {
        let dir = tempfile::tempdir().unwrap();
        let (mut buffer, _) = buffer(config(dir.path(), memory_max, u64::MAX / 2));
        let mut model = Model::default();
        let mut generation: HashMap<u16, u32> = HashMap::new();
        for (i, op) in ops.iter().enumerate() {
            let scn = 1000 + i as u64;
            let expected = model.apply(op, scn);
            let pushed = buffer.push(to_row(op, &generation, scn), t0()).unwrap();
            match (expected, pushed) {
                (Some(expected), Pushed::Committed(committed)) => {
                    prop_assert_eq!(scns(&drain(&mut buffer, *committed)), expected);
                }
                (Some(expected), Pushed::Ignored) => prop_assert!(expected.is_empty(), "{:?}", expected),
                (Some(expected), other) => prop_assert!(false, "expected {:?}, got {:?}", expected, other),
                (None, Pushed::Committed(committed)) => prop_assert!(false, "unexpected commit {:?}", committed.key()),
                (None, _) => {}
            }
            if let Op::Commit { tx } | Op::Rollback { tx } = op {
                *generation.entry(*tx).or_insert(1) += 1;
            }
            prop_assert!(
                buffer.heap_bytes() <= memory_max
                    || buffer.spilled_transactions() as usize == buffer.open_transactions(),
                "heap {} over budget {} with transactions left on the heap", buffer.heap_bytes(), memory_max
            );
        }
        // Whatever is still open commits now, as the model says.
        let mut left: Vec<u16> = model.open.keys().copied().collect();
        left.sort();
        for (i, tx) in left.into_iter().enumerate() {
            let scn = 10_000 + i as u64;
            let expected = model.apply(&Op::Commit { tx }, scn).unwrap();
            match buffer.push(to_row(&Op::Commit { tx }, &generation, scn), t0()).unwrap() {
                Pushed::Committed(committed) => prop_assert_eq!(scns(&drain(&mut buffer, *committed)), expected),
                Pushed::Ignored => prop_assert!(expected.is_empty()),
                other => prop_assert!(false, "{:?}", other),
            }
        }
        prop_assert_eq!(buffer.open_transactions(), 0);
        prop_assert_eq!((buffer.heap_bytes(), buffer.buffered_events(), buffer.spilled_bytes()), (0, 0, 0));
        prop_assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
