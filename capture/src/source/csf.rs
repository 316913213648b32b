//! Joining CSF continuation rows.
//!
//! LogMiner splits a SQL_REDO longer than 4000 bytes over consecutive rows of the same change
//! (same XID, RS_ID and SSN); every row but the last has `CSF = 1`. [`ContinuationJoiner`] turns
//! them back into one row before anything parses or buffers them, so an undo row or a LOB piece is
//! always one logical row. A partial row still waiting for its end is held per (XID, RS_ID, SSN):
//! rows of other transactions may come between the parts and are passed through.

use std::collections::HashMap;
use std::sync::Arc;

use crate::source::{LogMinerRow, Xid};

type ChangeKey = (Xid, Arc<str>, u64);

/// Holds the leading parts of split rows until their last part arrives.
#[derive(Debug, Default)]
pub struct ContinuationJoiner {
    pending: HashMap<ChangeKey, LogMinerRow>,
}

impl ContinuationJoiner {
    /// Feeds one row; returns the complete row when `row` completes one (or is complete itself).
    pub fn push(&mut self, row: LogMinerRow) -> Option<LogMinerRow> {
        let key = (row.xid, Arc::clone(&row.rs_id), row.ssn);
        match self.pending.remove(&key) {
            Some(mut head) => {
                append(&mut head.sql_redo, row.sql_redo);
                append(&mut head.sql_undo, row.sql_undo);
                head.csf = row.csf;
                if head.csf {
                    self.pending.insert(key, head);
                    None
                } else {
                    Some(head)
                }
            }
            None if row.csf => {
                self.pending.insert(key, row);
                None
            }
            None => Some(row),
        }
    }

    /// Rows whose last part has not arrived (at the end of a window they continue in the next).
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

fn append(head: &mut Option<String>, tail: Option<String>) {
    match (head.as_mut(), tail) {
        (Some(head), Some(tail)) => head.push_str(&tail),
        (None, Some(tail)) => *head = Some(tail),
        (_, None) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::OperationCode;

    fn part(xid: u32, rs: &str, text: &str, csf: bool) -> LogMinerRow {
        LogMinerRow {
            scn: 1,
            xid: Xid::from_parts(1, 2, xid),
            operation: OperationCode::Insert,
            row_id: Arc::from("AAAAAAAAAAAAAAAAAA"),
            rs_id: Arc::from(rs),
            csf,
            thread: 1,
            sql_redo: Some(text.to_owned()),
            ..Default::default()
        }
    }

    #[test]
    fn parts_are_joined_in_order_across_interleaved_rows() {
        let mut joiner = ContinuationJoiner::default();
        assert_eq!(joiner.push(part(1, " 0x1 ", "insert into ", true)), None);
        let other = joiner.push(part(2, " 0x2 ", "commit;", false)).unwrap();
        assert_eq!(other.sql_redo.as_deref(), Some("commit;"));
        assert_eq!(joiner.push(part(1, " 0x1 ", "\"A\".\"B\"", true)), None);
        assert_eq!(joiner.pending(), 1);
        let whole = joiner
            .push(part(1, " 0x1 ", " values ('1');", false))
            .unwrap();
        assert_eq!(
            whole.sql_redo.as_deref(),
            Some("insert into \"A\".\"B\" values ('1');")
        );
        assert!(!whole.csf);
        assert_eq!(joiner.pending(), 0);
    }
}
