//! Mining-window arithmetic: how far the next LogMiner session may reach.
//!
//! A window runs from the first SCN not yet mined to the lowest of:
//! - `start + maxScnWindow - 1`, so one session never reads an unbounded range;
//! - the database's current SCN (after the flush write, the redo up to it is in the online log);
//! - with more than one open redo thread (RAC), the lowest checkpoint SCN of the open threads:
//!   the flush reaches only the connected instance, and another instance's redo below its
//!   checkpoint is the only redo known to be complete. A quiet instance checkpoints only on a log
//!   switch, so it can hold capture back; [`WindowPlanner`] reports the delay once it has lasted a
//!   minute, with the remedy (`ARCHIVE_LAG_TARGET`).
//!
//! Pure: the caller passes the current SCN, the threads and the time.

use jiff::{SignedDuration, Timestamp};

use super::RedoThread;

/// How long RAC checkpoints may hold capture back before a warning.
pub const RAC_DELAY_WARNING: SignedDuration = SignedDuration::from_secs(60);

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
    /// The lowest checkpoint of the open RAC threads, and which thread holds it.
    ThreadCheckpoint {
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

/// A warning that RAC checkpoints hold capture back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RacDelay {
    pub thread: u16,
    pub held_for: SignedDuration,
    pub behind_scns: u64,
}

impl RacDelay {
    pub fn message(&self) -> String {
        format!(
            "redo thread {} has not checkpointed for {}s, holding capture {} SCNs behind the \
             current SCN; set ARCHIVE_LAG_TARGET (for example ALTER SYSTEM SET \
             ARCHIVE_LAG_TARGET = 60 SCOPE=BOTH) to make every instance switch logs regularly",
            self.thread,
            self.held_for.as_secs(),
            self.behind_scns
        )
    }
}

/// Plans windows and watches for RAC delay.
#[derive(Clone, Debug)]
pub struct WindowPlanner {
    max_window: u64,
    held_since: Option<Timestamp>,
    warned: bool,
}

impl WindowPlanner {
    pub fn new(max_window: u64) -> Self {
        Self {
            max_window: max_window.max(1),
            held_since: None,
            warned: false,
        }
    }

    /// The next window from `next_scn` (the first SCN not mined yet); with a warning when RAC
    /// checkpoints have held capture back for a minute (reported once per episode).
    pub fn plan(
        &mut self,
        next_scn: u64,
        current_scn: u64,
        threads: &[RedoThread],
        now: Timestamp,
    ) -> (Plan, Option<RacDelay>) {
        let mut end = next_scn.saturating_add(self.max_window - 1);
        let mut bound = Bound::MaxWindow;
        if current_scn < end {
            end = current_scn;
            bound = Bound::CurrentScn;
        }
        let open: Vec<&RedoThread> = threads.iter().filter(|thread| thread.open).collect();
        let mut delay = None;
        let lowest = open
            .iter()
            .min_by_key(|thread| thread.checkpoint_scn)
            .filter(|_| open.len() > 1);
        match lowest {
            Some(thread) if thread.checkpoint_scn < end => {
                end = thread.checkpoint_scn;
                bound = Bound::ThreadCheckpoint {
                    thread: thread.thread,
                };
                let since = *self.held_since.get_or_insert(now);
                let held_for = now.duration_since(since);
                if held_for >= RAC_DELAY_WARNING && !self.warned {
                    self.warned = true;
                    delay = Some(RacDelay {
                        thread: thread.thread,
                        held_for,
                        behind_scns: current_scn.saturating_sub(thread.checkpoint_scn),
                    });
                }
            }
            _ => {
                self.held_since = None;
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

    fn thread(number: u16, checkpoint_scn: u64, open: bool) -> RedoThread {
        RedoThread {
            thread: number,
            open,
            enabled: ThreadEnabled::Public,
            checkpoint_scn,
            sequence: 1,
            enable_scn: 0,
        }
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    #[test]
    fn windows_stop_at_the_size_limit_or_the_current_scn() {
        let mut planner = WindowPlanner::new(1000);
        let single = [thread(1, 10, true)];
        assert_eq!(
            planner.plan(100, 5000, &single, at(0)).0,
            Plan::Mine {
                window: Window {
                    start_scn: 100,
                    end_scn: 1099
                },
                bound: Bound::MaxWindow
            }
        );
        assert_eq!(
            planner.plan(100, 400, &single, at(0)).0,
            Plan::Mine {
                window: Window {
                    start_scn: 100,
                    end_scn: 400
                },
                bound: Bound::CurrentScn
            }
        );
        assert_eq!(planner.plan(401, 400, &single, at(0)).0, Plan::Idle);
    }

    #[test]
    fn rac_windows_never_pass_the_lowest_open_checkpoint_and_warn_after_a_minute() {
        let mut planner = WindowPlanner::new(1000);
        let threads = [
            thread(1, 900, true),
            thread(2, 300, true),
            thread(3, 10, false),
        ];
        let (plan, warning) = planner.plan(100, 950, &threads, at(0));
        assert_eq!(
            plan,
            Plan::Mine {
                window: Window {
                    start_scn: 100,
                    end_scn: 300
                },
                bound: Bound::ThreadCheckpoint { thread: 2 }
            }
        );
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
        let caught_up = [thread(1, 990, true), thread(2, 990, true)];
        assert!(matches!(
            planner.plan(301, 950, &caught_up, at(100)).0,
            Plan::Mine { .. }
        ));
    }
}
