//! Which buffered changes an undo row cancels: the rules shared by heap transactions
//! (`transaction.rs`) and the commit-time passes over spill files (`committed.rs`).
//!
//! An undo row (ROLLBACK = 1, from a rollback to a savepoint or a failed statement) names only a
//! ROWID and the inverse operation (MOS 462948.1: its SQL_REDO carries just the ROWID predicate).
//! It cancels the latest statement of its transaction on that ROWID that is not cancelled yet:
//! - an undo DELETE cancels the latest INSERT of the row, and every later change of the same
//!   ROWID with it (the LOB rows the INSERT statement wrote; later statements on the row were
//!   undone already, since Oracle undoes newest first);
//! - an undo INSERT cancels the latest DELETE of the row;
//! - an undo UPDATE cancels the latest UPDATE of the row, or the latest LOB write on it: a
//!   SEL_LOB_LOCATOR with the LOB_WRITE / LOB_TRIM / LOB_ERASE rows that follow it, or the latest
//!   extended string written to it: a 32K_BEGIN with the 32K_WRITE / 32K_END rows that follow it.
//!
//! # The placeholder ROWID of LOB inserts
//! LogMiner gives the INSERT of a row with LOB columns the placeholder ROWID
//! `AAAAAAAAAAAAAAAAAA`: the real ROWID first appears on the LOB rows the same statement writes
//! next (an UPDATE setting the LOB inline, or SEL_LOB_LOCATOR and LOB_WRITE rows), while the
//! undo DELETE of that INSERT names the real ROWID (logminer.md §2 ROW_ID, corpus #9 and #11;
//! Debezium's LogMiner DML parser and OpenLogReplicator see the same rowid on the follow-up rows).
//! So the buffer *ties* a placeholder INSERT to the ROWID of the very next change its transaction
//! makes when that change is on the same table with a real ROWID ([`ties_to`]). An undo DELETE that
//! finds no INSERT of its ROWID falls back to the latest placeholder INSERT of the same table
//! left untied (an INSERT whose LOB columns were all NULL or empty writes no LOB row to tie to).
//! On the heap the tie rewrites the INSERT's ROWID; a spill file is append-only, so its passes
//! tie as they read and the INSERT streams out with its placeholder (the assembler takes the
//! ROWID from the LOB rows that follow, as it does for any placeholder INSERT).

use std::sync::Arc;

use crate::source::row::PLACEHOLDER_ROW_ID;
use crate::source::{LogMinerRow, OperationCode};

/// How many of a ROWID's not yet cancelled changes, newest first, `undo` cancels; `None` when
/// none of them is the change it undoes.
pub(super) fn undone_count(
    undo: OperationCode,
    newest_first: impl IntoIterator<Item = OperationCode>,
) -> Option<usize> {
    let mut changes = newest_first.into_iter();
    match undo {
        OperationCode::Delete => position_inclusive(changes, OperationCode::Insert),
        OperationCode::Insert => position_inclusive(changes, OperationCode::Delete),
        OperationCode::Update => match changes.next()? {
            OperationCode::Update | OperationCode::SelectLobLocator => Some(1),
            OperationCode::ExtendedStringBegin => Some(1),
            OperationCode::LobWrite | OperationCode::LobTrim | OperationCode::LobErase => {
                // The LOB write's pieces back to its locator (all of them when it is not there:
                // the locator row was cancelled or never mined).
                let mut count = 1;
                for change in changes {
                    match change {
                        OperationCode::LobWrite
                        | OperationCode::LobTrim
                        | OperationCode::LobErase => {
                            count += 1;
                        }
                        OperationCode::SelectLobLocator => return Some(count + 1),
                        _ => break,
                    }
                }
                Some(count)
            }
            // An extended string (32K_BEGIN, its 32K_WRITE pieces, 32K_END) is one column change
            // of one statement, as a LOB write is: its undo cancels the whole group back to the
            // begin row (Debezium keeps the group together as one merge, TransactionCommitConsumer).
            OperationCode::ExtendedStringWrite | OperationCode::ExtendedStringEnd => {
                let mut count = 1;
                for change in changes {
                    match change {
                        OperationCode::ExtendedStringWrite | OperationCode::ExtendedStringEnd => {
                            count += 1;
                        }
                        OperationCode::ExtendedStringBegin => return Some(count + 1),
                        _ => break,
                    }
                }
                Some(count)
            }
            _ => None,
        },
        // Other undo rows (XML, LOB operations themselves) cancel the latest change as before.
        _ => changes.next().map(|_| 1),
    }
}

/// The 1-based position of the first `wanted` in `changes`.
fn position_inclusive(
    mut changes: impl Iterator<Item = OperationCode>,
    wanted: OperationCode,
) -> Option<usize> {
    changes.position(|change| change == wanted).map(|at| at + 1)
}

/// Whether `row` is an INSERT still carrying the placeholder ROWID.
pub(super) fn is_placeholder_insert(row: &LogMinerRow) -> bool {
    !row.rollback && row.operation == OperationCode::Insert && &*row.row_id == PLACEHOLDER_ROW_ID
}

/// Whether `next`, the change that directly follows the placeholder INSERT `insert` in its
/// transaction, gives that INSERT its real ROWID (see the module docs).
pub(super) fn ties_to(insert: &LogMinerRow, next: &LogMinerRow) -> bool {
    !next.rollback
        && &*next.row_id != PLACEHOLDER_ROW_ID
        && same_table(insert, next)
        && matches!(
            next.operation,
            OperationCode::Update
                | OperationCode::SelectLobLocator
                | OperationCode::LobWrite
                | OperationCode::LobTrim
                | OperationCode::LobErase
                | OperationCode::ExtendedStringBegin
                | OperationCode::ExtendedStringWrite
        )
}

/// Whether two rows are of the same table.
pub(super) fn same_table(a: &LogMinerRow, b: &LogMinerRow) -> bool {
    a.seg_owner == b.seg_owner && a.table_name == b.table_name
}

/// A row's table as `(SEG_OWNER, TABLE_NAME)`.
pub(super) type TableName = (Option<Arc<str>>, Option<Arc<str>>);

pub(super) fn table_name(row: &LogMinerRow) -> TableName {
    (row.seg_owner.clone(), row.table_name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use OperationCode::{Delete, Insert, LobErase, LobWrite, SelectLobLocator, Update};

    #[test]
    fn an_undo_delete_cancels_the_insert_and_the_lob_rows_after_it() {
        assert_eq!(undone_count(Delete, [Insert]), Some(1));
        assert_eq!(
            undone_count(
                Delete,
                [LobWrite, LobWrite, SelectLobLocator, Insert, Update]
            ),
            Some(4)
        );
        assert_eq!(undone_count(Delete, [Update, LobWrite]), None);
    }

    #[test]
    fn an_undo_update_cancels_one_update_or_one_whole_lob_write() {
        assert_eq!(undone_count(Update, [Update, Update]), Some(1));
        assert_eq!(
            undone_count(Update, [LobWrite, LobWrite, SelectLobLocator, LobWrite]),
            Some(3)
        );
        assert_eq!(undone_count(Update, [LobErase, Update]), Some(1));
        assert_eq!(undone_count(Update, [LobWrite, LobWrite]), Some(2));
        assert_eq!(undone_count(Update, [Insert]), None);
        assert_eq!(undone_count(Update, []), None);
    }

    #[test]
    fn an_undo_update_cancels_one_whole_extended_string() {
        use OperationCode::{ExtendedStringBegin, ExtendedStringEnd, ExtendedStringWrite};
        assert_eq!(
            undone_count(
                Update,
                [
                    ExtendedStringEnd,
                    ExtendedStringWrite,
                    ExtendedStringWrite,
                    ExtendedStringBegin,
                    ExtendedStringEnd
                ]
            ),
            Some(4)
        );
        assert_eq!(undone_count(Update, [ExtendedStringBegin, Update]), Some(1));
        assert_eq!(
            undone_count(
                Delete,
                [
                    ExtendedStringEnd,
                    ExtendedStringWrite,
                    ExtendedStringBegin,
                    Insert
                ]
            ),
            Some(4)
        );
    }

    #[test]
    fn an_undo_insert_cancels_the_latest_delete() {
        assert_eq!(undone_count(Insert, [Delete]), Some(1));
        assert_eq!(undone_count(Insert, [Update]), None);
    }
}
