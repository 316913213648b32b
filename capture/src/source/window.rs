//! Mining-window arithmetic: how far the next LogMiner session may reach.
//!
//! A window runs from the first SCN not yet mined to the lowest of:
//! - `start + maxScnWindow - 1`, so one session never reads an unbounded range (less while windows
//!   cost the database too much: [`super::window_size`]);
//! - the database's current SCN, read *before* the flush write: the flush commit makes LGWR write
//!   the instance's whole log buffer, so once it returns every change at or below an SCN read
//!   earlier is in the online log. Read after the flush, the SCN can include changes other
//!   sessions made in between, still in the buffer, and a window ending there would skip them
//!   for good (the next window starts above);
//! - the lowest `V$THREAD.LAST_REDO_CHANGE#` of the open redo threads, minus one, on a single
//!   instance too. Redo above what LGWR has written is invisible to LogMiner whatever the current
//!   SCN says: without a flush (`mining.readOnly`), on a RAC instance the flush cannot reach (the
//!   client flushes every instance it can open a session on, `oracle/instances.rs`), or
//!   when the flush wrote nothing. Minus one because several changes can share an SCN and LGWR
//!   may have written only some of them; Debezium also found that LogMiner widens the range it is
//!   given by one SCN at each end, so a range ending at the last written SCN asks for redo that is
//!   not in the logs yet. Debezium came to the same cap the hard way (DBZ-8055 for RAC, where each
//!   node's LGWR writes on its own schedule; DBZ-8503 for the minus one), and it too reads the
//!   current SCN before its flush (`calculateUpperBounds`, then the flush strategy). A quiet RAC instance writes only on its own
//!   commits, its LGWR timeout or a log switch, so it can hold capture back; [`WindowPlanner`]
//!   reports the delay once it has lasted a minute, with the remedy (`ARCHIVE_LAG_TARGET`).
//!
//! Pure: the caller passes the current SCN, the threads and the time.

use jiff::{SignedDuration, Timestamp};

use super::RedoThread;

/// How long unwritten redo of a thread may hold capture back before a warning.
pub const WRITE_DELAY_WARNING: SignedDuration = SignedDuration::from_secs(60);

/// An SCN range to mine, both ends inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub start_scn: u64,
    pub end_scn: u64,
}

/// What bounded a window (for metrics and logs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    MaxWindow,
    CurrentScn,
    /// Below the newest redo written by the open thread that has written least
    /// (`LAST_REDO_CHANGE# - 1`), and which thread that is.
    WrittenRedo {
        thread: u16,
    },
}

/// The next step of the mining loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Mine this window.
    Mine { window: Window, bound: Bound },
    /// Nothing new yet: wait `pollIntervalSeconds`.
    Idle,
}

/// A warning that a thread's unwritten redo holds capture back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteDelay {
    pub thread: u16,
    pub held_for: SignedDuration,
    pub behind_scns: u64,
}

impl WriteDelay {
    pub fn message(&self) -> String {
        format!(
            "redo thread {} has written no redo for {}s, holding capture {} SCNs behind the \
             current SCN; set ARCHIVE_LAG_TARGET (for example ALTER SYSTEM SET \
             ARCHIVE_LAG_TARGET = 60 SCOPE=BOTH) to make every instance switch logs regularly",
            self.thread,
            self.held_for.as_secs(),
            self.behind_scns
        )
    }
}

/// Plans windows and watches for threads that hold capture back.
#[derive(Clone, Debug)]
pub struct WindowPlanner {
    max_window: u64,
    /// The thread holding capture back, its `LAST_REDO_CHANGE#`, and since when it has not
    /// moved: a thread that keeps writing is only behind, not stuck.
    held: Option<(u16, u64, Timestamp)>,
    warned: bool,
}

impl WindowPlanner {
    pub fn new(max_window: u64) -> Self {
        Self {
            max_window: max_window.max(1),
            held: None,
            warned: false,
        }
    }

    /// Sets the largest window (`maxScnWindow`, or less while windows are made smaller:
    /// `window_size`).
    pub fn set_max_window(&mut self, max_window: u64) {
        self.max_window = max_window.max(1);
    }

    /// The next window from `next_scn` (the first SCN not mined yet), given the current SCN read
    /// before the flush write and the threads read after it; with a warning when a thread that
    /// has written nothing for a minute holds capture back (reported once per episode).
    pub fn plan(
        &mut self,
        next_scn: u64,
        current_scn: u64,
        threads: &[RedoThread],
        now: Timestamp,
    ) -> (Plan, Option<WriteDelay>) {
        let mut end = next_scn.saturating_add(self.max_window - 1);
        let mut bound = Bound::MaxWindow;
        if current_scn < end {
            end = current_scn;
            bound = Bound::CurrentScn;
        }
        let mut delay = None;
        let least_written = threads
            .iter()
            .filter(|thread| thread.open)
            .min_by_key(|thread| thread.last_redo_scn);
        match least_written {
            Some(thread) if thread.last_redo_scn.saturating_sub(1) < end => {
                let written = thread.last_redo_scn.saturating_sub(1);
                end = written;
                bound = Bound::WrittenRedo {
                    thread: thread.thread,
                };
                let unchanged = (thread.thread, thread.last_redo_scn);
                let since = match self.held {
                    Some((number, last_redo, since)) if (number, last_redo) == unchanged => since,
                    _ => {
                        self.held = Some((thread.thread, thread.last_redo_scn, now));
                        self.warned = false;
                        now
                    }
                };
                let held_for = now.duration_since(since);
                if held_for >= WRITE_DELAY_WARNING && !self.warned {
                    self.warned = true;
                    delay = Some(WriteDelay {
                        thread: thread.thread,
                        held_for,
                        behind_scns: current_scn.saturating_sub(written),
                    });
                }
            }
            _ => {
                self.held = None;
                self.warned = false;
            }
        }
        let plan = if end < next_scn {
            Plan::Idle
        } else {
            Plan::Mine {
                window: Window {
                    start_scn: next_scn,
                    end_scn: end,
                },
                bound,
            }
        };
        (plan, delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::ThreadEnabled;

    /// A thread whose LGWR has written up to `last_redo_scn`; its checkpoint trails far behind.
    fn thread(number: u16, last_redo_scn: u64, open: bool) -> RedoThread {
        RedoThread {
            thread: number,
            open,
            enabled: ThreadEnabled::Public,
            checkpoint_scn: 10,
            last_redo_scn,
            sequence: 1,
            enable_scn: 0,
        }
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    fn mine(start_scn: u64, end_scn: u64, bound: Bound) -> Plan {
        Plan::Mine {
            window: Window { start_scn, end_scn },
            bound,
        }
    }

    #[test]
    fn windows_stop_at_the_size_limit_or_the_current_scn_read_before_the_flush() {
        let mut planner = WindowPlanner::new(1000);
        // After the flush write, LGWR has written past the SCN read before it.
        let flushed = [thread(1, 5001, true)];
        assert_eq!(
            planner.plan(100, 5000, &flushed, at(0)).0,
            mine(100, 1099, Bound::MaxWindow)
        );
        assert_eq!(
            planner.plan(100, 400, &flushed, at(0)).0,
            mine(100, 400, Bound::CurrentScn)
        );
        assert_eq!(planner.plan(401, 400, &flushed, at(0)).0, Plan::Idle);
        // Windows made smaller (`window_size`).
        planner.set_max_window(250);
        assert_eq!(
            planner.plan(100, 5000, &flushed, at(0)).0,
            mine(100, 349, Bound::MaxWindow)
        );
    }

    #[test]
    fn a_single_instance_window_ends_below_the_newest_redo_written() {
        let mut planner = WindowPlanner::new(1000);
        // No flush (mining.readOnly): LGWR last wrote at SCN 350, the current SCN is 400.
        let unflushed = [thread(1, 350, true)];
        assert_eq!(
            planner.plan(100, 400, &unflushed, at(0)).0,
            mine(100, 349, Bound::WrittenRedo { thread: 1 })
        );
        assert_eq!(
            planner.plan(350, 400, &unflushed, at(1)).0,
            Plan::Idle,
            "SCN 350 waits for a later write"
        );
        let written = [thread(1, 351, true)];
        assert_eq!(
            planner.plan(350, 400, &written, at(2)).0,
            mine(350, 350, Bound::WrittenRedo { thread: 1 })
        );
    }

    #[test]
    fn rac_windows_never_pass_the_least_written_open_thread_and_warn_after_a_minute() {
        let mut planner = WindowPlanner::new(1000);
        let threads = [
            thread(1, 951, true),
            thread(2, 301, true),
            thread(3, 10, false),
        ];
        let (plan, warning) = planner.plan(100, 950, &threads, at(0));
        assert_eq!(plan, mine(100, 300, Bound::WrittenRedo { thread: 2 }));
        assert_eq!(warning, None);
        assert_eq!(planner.plan(301, 950, &threads, at(30)), (Plan::Idle, None));
        let (_, warning) = planner.plan(301, 950, &threads, at(61));
        let warning = warning.unwrap();
        assert_eq!((warning.thread, warning.behind_scns), (2, 650));
        assert!(warning.message().contains("ARCHIVE_LAG_TARGET"));
        assert_eq!(
            planner.plan(301, 950, &threads, at(90)).1,
            None,
            "warned once"
        );
        // Behind but writing: no warning, however long it lasts.
        let mut writing = WindowPlanner::new(1000);
        for second in 0..120 {
            let threads = [thread(1, 951, true), thread(2, 301 + second as u64, true)];
            assert_eq!(writing.plan(100, 950, &threads, at(second)).1, None);
        }
        let caught_up = [thread(1, 991, true), thread(2, 991, true)];
        assert_eq!(
            planner.plan(301, 950, &caught_up, at(100)).0,
            mine(301, 950, Bound::CurrentScn)
        );
    }
}
