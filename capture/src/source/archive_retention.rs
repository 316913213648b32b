//! How long the archived redo a restart needs is kept: the hours left before CDC-2001.
//!
//! A restart mines from the bookmark's restart SCN, so on every redo thread the log holding that
//! SCN, and every later one, must still exist. Online logs are overwritten only after they are
//! archived; archived logs are deleted by the database's own policy, which Oracle does not
//! expose as a time: RMAN's `CONFIGURE ARCHIVELOG DELETION POLICY` counts backups and standby
//! applies, not hours (`V$RMAN_CONFIGURATION`), a cron job or an RMAN `DELETE ARCHIVELOG ...
//! COMPLETED BEFORE 'SYSDATE-n'` is invisible to the database, and Amazon RDS keeps its
//! `archivelog retention hours` in its own package. So the retention is declared
//! (`spec.mining.archiveRetentionHours`), and the age of the logs is read from the database
//! with the listing the capture already makes (`V$ARCHIVED_LOG.COMPLETION_TIME` against
//! `SYSDATE`, [`super::oracle::sql::REDO_LOGS`]). Pure: the listing, the SCN and the times in,
//! the figure out.

use jiff::SignedDuration;

use super::{Completion, RedoLog, RedoLogKind, RedoThread};

/// The archived log a restart needs whose deadline comes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NeededLog {
    pub thread: u16,
    pub sequence: u32,
    pub completion: Completion,
}

/// What a restart at the restart SCN needs of the archived logs, by the listing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needed {
    /// On every thread the restart SCN is still in an online log: the deletion policy's clock
    /// has not started for any log a restart needs.
    OnlineOnly,
    /// Of the archived logs holding the restart SCN (one per thread at most), the one archived
    /// first: it reaches the end of the retention first.
    Archived(NeededLog),
    /// A thread that was enabled at the restart SCN has no listed log holding it: the redo a
    /// restart needs is gone already (a restart stops with CDC-2001).
    Gone { thread: u16 },
}

/// What a restart at `restart_scn` needs, from a listing of the logs reaching `listed_from` on
/// `threads`. `None` when the listing cannot say: it starts after the restart SCN.
///
/// Per thread, the log holding the SCN is the one whose range `[FIRST_CHANGE#, NEXT_CHANGE#)`
/// contains it. When it is both online and archived the archived copy's clock runs; several
/// archived copies (several destinations) count by the one completed first, the first a policy
/// deletes. A thread enabled after the restart SCN (`ENABLE_CHANGE#`) needs nothing before it.
pub fn needed(
    threads: &[RedoThread],
    logs: &[RedoLog],
    listed_from: u64,
    restart_scn: u64,
) -> Option<Needed> {
    if restart_scn < listed_from {
        return None;
    }
    let mut oldest: Option<NeededLog> = None;
    for thread in threads {
        let holding: Vec<&RedoLog> = logs
            .iter()
            .filter(|log| {
                log.thread == thread.thread
                    && log.first_scn <= restart_scn
                    && log.next_scn.is_none_or(|next| next > restart_scn)
            })
            .collect();
        if holding.is_empty() {
            if thread.enable_scn <= restart_scn && logs.iter().any(|l| l.thread == thread.thread) {
                return Some(Needed::Gone {
                    thread: thread.thread,
                });
            }
            continue;
        }
        let archived = holding
            .iter()
            .filter(|log| log.kind == RedoLogKind::Archived)
            .filter_map(|log| log.completion.map(|completion| (log, completion)))
            .max_by_key(|(_, completion)| completion.age);
        if let Some((log, completion)) = archived
            && oldest.is_none_or(|o| completion.age > o.completion.age)
        {
            oldest = Some(NeededLog {
                thread: log.thread,
                sequence: log.sequence,
                completion,
            });
        }
    }
    Some(oldest.map_or(Needed::OnlineOnly, Needed::Archived))
}

/// Hours left before the needed redo may be deleted under a retention of `retention`, counted
/// `since_listing` after the listing that gave the logs' ages. Never below 0: a log past the
/// retention may still be on disk (a cron job runs when it runs), but it may go at any time.
pub fn hours_left(needed: Needed, retention: SignedDuration, since_listing: SignedDuration) -> f64 {
    let left = match needed {
        Needed::OnlineOnly => retention,
        Needed::Archived(log) => retention - log.completion.age - since_listing,
        Needed::Gone { .. } => SignedDuration::ZERO,
    };
    (left.as_secs_f64() / 3600.0).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::fixtures::redo_thread;
    use jiff::civil;

    fn log(
        thread: u16,
        sequence: u32,
        first: u64,
        next: Option<u64>,
        age_h: Option<i64>,
    ) -> RedoLog {
        RedoLog {
            name: format!("/redo/{thread}_{sequence}"),
            thread,
            sequence,
            first_scn: first,
            next_scn: next,
            kind: if age_h.is_some() {
                RedoLogKind::Archived
            } else {
                RedoLogKind::Online
            },
            completion: age_h.map(|hours| Completion {
                time: civil::date(2026, 12, 5).at(12, 0, 0, 0) - SignedDuration::from_hours(hours),
                age: SignedDuration::from_hours(hours),
            }),
        }
    }

    const HOUR: SignedDuration = SignedDuration::from_hours(1);

    #[test]
    fn the_oldest_archived_log_holding_the_restart_scn_over_the_threads_sets_the_hours() {
        let threads = [redo_thread(1, 0), redo_thread(2, 0)];
        let logs = [
            log(1, 7, 100, Some(200), Some(30)),
            log(1, 8, 200, Some(300), Some(5)),
            log(1, 9, 300, None, None),
            log(2, 3, 150, Some(260), Some(9)),
            log(2, 4, 260, None, None),
        ];
        // SCN 250: thread 1's sequence 8 (archived 5 h ago), thread 2's sequence 3 (9 h ago).
        let needed = needed(&threads, &logs, 100, 250).unwrap();
        let Needed::Archived(oldest) = needed else {
            panic!("{needed:?}")
        };
        assert_eq!((oldest.thread, oldest.sequence), (2, 3));
        let left = hours_left(needed, 24 * HOUR, SignedDuration::from_mins(30));
        assert!((left - 14.5).abs() < 1e-9, "{left}");
        // Past the retention: 0, not negative.
        assert_eq!(hours_left(needed, 8 * HOUR, SignedDuration::ZERO), 0.0);
    }

    #[test]
    fn a_restart_scn_still_online_keeps_the_full_retention() {
        let threads = [redo_thread(1, 0)];
        let logs = [
            log(1, 8, 200, Some(300), Some(5)),
            log(1, 9, 300, None, None),
        ];
        let needed = needed(&threads, &logs, 200, 320).unwrap();
        assert_eq!(needed, Needed::OnlineOnly);
        assert_eq!(hours_left(needed, 24 * HOUR, 3 * HOUR), 24.0);
    }

    #[test]
    fn an_online_copy_of_an_archived_log_does_not_hide_its_age_and_the_first_copy_counts() {
        let threads = [redo_thread(1, 0)];
        let mut online = log(1, 8, 200, Some(300), None);
        online.kind = RedoLogKind::Online;
        let logs = [
            online,
            log(1, 8, 200, Some(300), Some(2)),
            log(1, 8, 200, Some(300), Some(3)),
        ];
        let Some(Needed::Archived(oldest)) = needed(&threads, &logs, 200, 250) else {
            panic!()
        };
        assert_eq!(oldest.completion.age, 3 * HOUR);
    }

    #[test]
    fn redo_gone_on_an_enabled_thread_is_zero_and_a_later_thread_needs_nothing_before_it() {
        let logs = [log(1, 8, 200, None, None), log(2, 1, 400, None, None)];
        // Thread 2 was enabled at SCN 400: a restart at 250 needs nothing of it.
        assert_eq!(
            needed(&[redo_thread(1, 0), redo_thread(2, 400)], &logs, 200, 250),
            Some(Needed::OnlineOnly)
        );
        // Enabled from the start, its redo at 250 is no longer listed.
        let gone = needed(&[redo_thread(1, 0), redo_thread(2, 0)], &logs, 200, 250).unwrap();
        assert_eq!(gone, Needed::Gone { thread: 2 });
        assert_eq!(hours_left(gone, 24 * HOUR, SignedDuration::ZERO), 0.0);
        // A listing from after the restart SCN says nothing.
        assert_eq!(needed(&[redo_thread(1, 0)], &logs, 260, 250), None);
    }
}
