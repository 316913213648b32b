//! Which redo logs to register for a mining window: the pure planning step shared by the real
//! client and the simulator.
//!
//! The inputs are what `V$LOG`/`V$ARCHIVED_LOG` and `V$THREAD` say; the rules follow how LogMiner
//! fails when they are broken (`logminer.md` §2):
//! - a log present both online and archived is registered once, from the archive (registering
//!   both is ORA-01289, and the online copy can be overwritten by a later switch);
//! - per thread, the logs from the one holding `from_scn` to the current one must be consecutive
//!   sequences, else LogMiner silently returns a MISSING_SCN row: a gap is reported as
//!   [`SourceError::RedoMissing`] with the SCN range that is gone;
//! - private and disabled threads are not mined; a thread enabled after `from_scn` may start later.

use std::collections::BTreeMap;

use super::{RedoThread, SourceError, ThreadEnabled};

/// Where a log lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RedoLogKind {
    Online,
    Archived,
}

/// One redo log file (an online log group's member or an archived copy).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedoLog {
    /// File name to register with `ADD_LOGFILE`.
    pub name: String,
    pub thread: u16,
    pub sequence: u32,
    /// `FIRST_CHANGE#` (inclusive).
    pub first_scn: u64,
    /// `NEXT_CHANGE#` (exclusive); `None` for the current online log, still being written.
    pub next_scn: Option<u64>,
    pub kind: RedoLogKind,
    /// When archiving it completed, for an archived copy whose view says so; `None` online.
    pub completion: Option<Completion>,
}

/// When an archived log was archived, on the database host's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// `V$ARCHIVED_LOG.COMPLETION_TIME`: a DATE, the host's local time.
    pub time: jiff::civil::DateTime,
    /// `SYSDATE - COMPLETION_TIME` when the logs were listed: the log's age then, on the
    /// database's clock.
    pub age: jiff::SignedDuration,
}

impl RedoLog {
    /// Whether the log holds redo at or after `scn`.
    fn reaches(&self, scn: u64) -> bool {
        self.next_scn.is_none_or(|next| next > scn)
    }
}

/// The logs to register, ordered by thread and sequence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogPlan {
    pub logs: Vec<RedoLog>,
}

/// Picks the logs that cover `from_scn` onwards on every mined thread.
pub fn plan_logs(
    threads: &[RedoThread],
    logs: Vec<RedoLog>,
    from_scn: u64,
) -> Result<LogPlan, SourceError> {
    let mut by_thread: BTreeMap<u16, BTreeMap<u32, RedoLog>> = BTreeMap::new();
    for log in logs.into_iter().filter(|log| log.reaches(from_scn)) {
        let sequences = by_thread.entry(log.thread).or_default();
        match sequences.get(&log.sequence) {
            Some(kept) if kept.kind == RedoLogKind::Archived => {}
            _ => {
                sequences.insert(log.sequence, log);
            }
        }
    }

    let mut plan = LogPlan::default();
    for thread in threads {
        let logs: Vec<RedoLog> = by_thread
            .remove(&thread.thread)
            .map(|sequences| sequences.into_values().collect())
            .unwrap_or_default();
        let needed_from = from_scn.max(thread.enable_scn);
        let missing = |from_scn: u64, to_scn: u64| SourceError::RedoMissing {
            thread: thread.thread,
            from_scn,
            to_scn,
        };
        // A PUBLIC or PRIVATE thread is the redo of an instance (an instance opened with a
        // PRIVATE thread writes its normal redo there) and must be covered from the start. A
        // thread disabled since still holds the redo it wrote before: its logs that reach the
        // start are mined, and one with none left has nothing to give.
        let enabled = thread.enabled != ThreadEnabled::Disabled;
        let Some(first) = logs.first() else {
            if enabled && thread.open {
                return Err(missing(needed_from, thread.checkpoint_scn));
            }
            continue;
        };
        if enabled && first.first_scn > needed_from {
            return Err(missing(needed_from, first.first_scn));
        }
        for pair in logs.windows(2) {
            let (earlier, later) = (&pair[0], &pair[1]);
            if later.sequence != earlier.sequence + 1 {
                let from = earlier.next_scn.unwrap_or(earlier.first_scn);
                return Err(missing(from, later.first_scn));
            }
        }
        plan.logs.extend(logs);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed of the PRIVATE-thread fix: an instance using a PRIVATE thread writes its normal redo
    /// there, so its logs are mined and a gap in them is missing redo; a disabled thread's logs
    /// that reach the start are mined too, and without any it is left alone.
    #[test]
    fn private_threads_are_mined_and_disabled_ones_give_what_they_still_hold() {
        let private = RedoThread {
            enabled: ThreadEnabled::Private,
            ..thread(2)
        };
        let disabled = RedoThread {
            enabled: ThreadEnabled::Disabled,
            open: false,
            ..thread(3)
        };
        let logs = vec![
            log(1, 4, 50, None, RedoLogKind::Online),
            log(2, 9, 60, None, RedoLogKind::Online),
            log(3, 2, 40, Some(90), RedoLogKind::Archived),
        ];
        let plan = plan_logs(&[thread(1), private.clone(), disabled.clone()], logs, 70).unwrap();
        let mined: Vec<u16> = plan.logs.iter().map(|log| log.thread).collect();
        assert_eq!(mined, [1, 2, 3]);
        let gap = plan_logs(
            &[thread(1), private, disabled],
            vec![
                log(1, 4, 50, None, RedoLogKind::Online),
                log(2, 9, 80, None, RedoLogKind::Online),
            ],
            70,
        )
        .unwrap_err();
        assert!(
            matches!(
                gap,
                SourceError::RedoMissing {
                    thread: 2,
                    from_scn: 70,
                    to_scn: 80
                }
            ),
            "{gap}"
        );
    }

    fn thread(number: u16) -> RedoThread {
        crate::source::fixtures::redo_thread(number, 0)
    }

    fn log(
        thread: u16,
        sequence: u32,
        first: u64,
        next: Option<u64>,
        kind: RedoLogKind,
    ) -> RedoLog {
        RedoLog {
            name: format!("/redo/t{thread}_{sequence}_{kind:?}.log"),
            thread,
            sequence,
            first_scn: first,
            next_scn: next,
            kind,
            completion: None,
        }
    }

    #[test]
    fn archive_wins_over_online_copy_and_old_logs_are_left_out() {
        let logs = vec![
            log(1, 1, 1, Some(100), RedoLogKind::Archived),
            log(1, 2, 100, Some(200), RedoLogKind::Online),
            log(1, 2, 100, Some(200), RedoLogKind::Archived),
            log(1, 3, 200, None, RedoLogKind::Online),
        ];
        let plan = plan_logs(&[thread(1)], logs, 150).unwrap();
        let picked: Vec<_> = plan.logs.iter().map(|l| (l.sequence, l.kind)).collect();
        assert_eq!(
            picked,
            vec![(2, RedoLogKind::Archived), (3, RedoLogKind::Online)]
        );
    }

    #[test]
    fn purged_beginning_and_sequence_gaps_name_the_missing_range() {
        let logs = vec![
            log(1, 5, 300, Some(400), RedoLogKind::Archived),
            log(1, 6, 400, None, RedoLogKind::Online),
        ];
        assert_eq!(
            plan_logs(&[thread(1)], logs.clone(), 250),
            Err(SourceError::RedoMissing {
                thread: 1,
                from_scn: 250,
                to_scn: 300
            })
        );
        let gap = vec![
            log(2, 5, 300, Some(400), RedoLogKind::Archived),
            log(2, 7, 500, None, RedoLogKind::Online),
        ];
        assert_eq!(
            plan_logs(&[thread(2)], gap, 350),
            Err(SourceError::RedoMissing {
                thread: 2,
                from_scn: 400,
                to_scn: 500
            })
        );
    }

    #[test]
    fn every_enabled_thread_is_planned_from_its_enable_scn() {
        let mut private = thread(3);
        private.enabled = ThreadEnabled::Disabled;
        private.open = false;
        let mut late = thread(2);
        late.enable_scn = 500;
        let logs = vec![
            log(1, 1, 1, None, RedoLogKind::Online),
            log(2, 1, 500, None, RedoLogKind::Online),
        ];
        let plan = plan_logs(&[thread(1), late, private], logs, 10).unwrap();
        assert_eq!(plan.logs.len(), 2);
        let empty_open = plan_logs(
            &[thread(1), thread(4)],
            vec![log(1, 1, 1, None, RedoLogKind::Online)],
            10,
        );
        assert!(matches!(
            empty_open,
            Err(SourceError::RedoMissing { thread: 4, .. })
        ));
    }
}
