//! The pause between windows while the database gives the capture nothing to do.
//!
//! Every window starts with a flush commit (so LGWR writes the redo up to the window's end), and
//! that commit is itself redo: the next window always has something to mine, if only the flush's
//! own START and COMMIT rows. Without a pause the loop would mine its own flush back to back, a
//! LogMiner session and a commit thousands of times a second on an idle database. So a window
//! that brought the capture no work ([`WindowYield::is_idle`]) is followed by a pause: short at
//! first (a tenth of the poll interval, doubling to it), longer while the database stays idle,
//! back to none as soon as a window brings work, so a busy capture mines window after window as
//! before.
//!
//! Debezium 3.x does the same with `log.mining.sleep.time.*` (AbstractLogMinerStreamingChangeEventSource,
//! up to 3.4: `calculateUpperBounds` calls `incrementSleepTime` when the window reached the
//! current SCN and `decrementSleepTime` when it was cut by the batch size; the loop then sleeps
//! the current time, `pauseBetweenMiningSessions`). Its defaults: 1 s at start, +200 ms per
//! caught-up iteration, at most 3 s, down by 200 ms per iteration that is behind. Two
//! differences, on purpose: Debezium sleeps after every iteration, also with work waiting, which
//! adds up to a second to every change's latency under load; here a window that brought work
//! is followed by the next at once, and the pauses start short again after it (not stepped
//! down), so a burst after a quiet night is not answered at the slowest pace.
//!
//! Under load the windows are spaced instead ([`IdlePacer::busy_pause`]): a window that brought
//! work and reached the current SCN is followed by the next a third of the poll interval after
//! its start, not at once, so the statements per change stay near Debezium's.
//!
//! Pure: the caller says what each window brought and sleeps what it is told
//! ([`pause_unless_stopped`] sleeps in slices, so a stop request is honoured within 100 ms).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use jiff::Timestamp;

use crate::http::StatusBoard;

/// How far the pause grows while idle, as a multiple of the poll interval (Debezium: 3 s at most
/// for a 1 s default).
const CEILING_POLLS: u32 = 3;
/// The first pause after a window with work, as a fraction of the poll interval, doubling up to
/// the poll interval. Under load a window can come up empty between two commits a few
/// milliseconds apart; a whole poll interval then would hold the next commit back that long (the
/// latency bench at 2,000 transactions a second showed it: p99 above a second). Doubling from a
/// tenth reaches the poll interval after four idle windows (1.5 intervals in all), so an idle
/// database still settles at one poll per interval and beyond.
const FIRST_PAUSE_DIVISOR: u32 = 10;
/// The growth per idle window, as a fraction of the poll interval (Debezium: 200 ms for 1 s).
const STEP_DIVISOR: u32 = 5;
/// Under load, once caught up: the shortest time from one window's start to the next one's, as
/// a fraction of the poll interval (333 ms for the default 1 s). Every window costs the database
/// the same handful of statements (the current SCN, the flush commit, `V$THREAD`, START_LOGMNR,
/// the contents query, the session's memory) however few changes it brings; mined back to back
/// against a steady 2,000 transactions a second that was 20 to 40 windows and 100 to 170
/// statements per 1,000 changes, where Debezium's one-second sleep gives about 8. A third of the
/// interval brings that to about 10 (`cargo bench --bench database_load`) while a commit waits
/// at most a third of a second more for its window (`cargo bench --bench latency`: p99 within
/// the 500 ms target). A capture behind (a window cut by `maxScnWindow`) never waits.
const BUSY_SPACING_DIVISOR: u32 = 3;

/// What a window gave the capture, counted while its rows were pushed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowYield {
    /// Rows other than transaction control (START, COMMIT, ROLLBACK): a change, a DDL, a LOB or
    /// extended-string piece, or anything else the contents query returns for a captured table.
    pub changes: u64,
    /// Transactions committed with at least one change to publish.
    pub emitted: u64,
}

impl WindowYield {
    /// A window is idle when it brought no change and published nothing: only START / COMMIT /
    /// ROLLBACK rows of transactions without a captured change. The contents query returns
    /// those for every transaction (the buffer tracks each one, for the orphan check and the
    /// bookmark), so the capture's own flush commit, and any commit on tables not captured,
    /// still make a window idle. Nothing is lost by pausing after one: whatever commits during
    /// the pause is mined by the next window, at most one pause later. A window that only
    /// buffered changes of a still-open transaction is not idle: the transaction is likely to
    /// go on, and its commit should be published promptly.
    pub fn is_idle(&self) -> bool {
        self.changes == 0 && self.emitted == 0
    }
}

/// The pause after each window.
#[derive(Clone, Debug)]
pub struct IdlePacer {
    poll: Duration,
    ceiling: Duration,
    step: Duration,
    /// The pause the next idle window takes; `None` after a window with work.
    next: Option<Duration>,
}

impl IdlePacer {
    /// `poll`: `mining.pollIntervalSeconds`. The pause grows to three polls at most, and never
    /// beyond half the lag SLA (`sla.maxLagSeconds`: a change committed at the start of a pause
    /// waits the pause and a window, so the SLA stays reachable on a quiet database) nor beyond
    /// the heartbeat interval (heartbeats are written between windows and must stay on time).
    /// Neither bound shortens the first pause below the poll interval.
    pub fn new(poll: Duration, max_lag: Option<Duration>, heartbeat: Option<Duration>) -> Self {
        let mut ceiling = poll * CEILING_POLLS;
        for bound in [max_lag.map(|lag| lag / 2), heartbeat]
            .into_iter()
            .flatten()
        {
            ceiling = ceiling.min(bound);
        }
        Self {
            poll,
            ceiling: ceiling.max(poll),
            step: poll / STEP_DIVISOR,
            next: None,
        }
    }

    /// The pause after a window that brought `what`: none after work; after an idle window a
    /// tenth of the poll interval, doubling per further idle window up to the poll interval,
    /// then growing by a fifth of it per idle window up to the ceiling.
    pub fn after_window(&mut self, what: WindowYield) -> Duration {
        if !what.is_idle() {
            self.next = None;
            return Duration::ZERO;
        }
        let pause = self.next.unwrap_or(self.poll / FIRST_PAUSE_DIVISOR);
        let next = if pause < self.poll {
            (pause * 2).min(self.poll)
        } else {
            (pause + self.step).min(self.ceiling)
        };
        self.next = Some(next);
        pause
    }

    /// The pause after a window that brought work and reached the current SCN, `since` its
    /// start: what is left of [`BUSY_SPACING_DIVISOR`]'s share of the poll interval.
    pub fn busy_pause(&self, since: Duration) -> Duration {
        (self.poll / BUSY_SPACING_DIVISOR).saturating_sub(since)
    }

    /// The pause when the planner found nothing to mine at all (the current SCN not past the
    /// last window): the same pacing as an idle window.
    pub fn nothing_to_mine(&mut self) -> Duration {
        self.after_window(WindowYield::default())
    }
}

/// Sleeps for `pause` unless a stop is requested meanwhile (then `true`), in slices of at most
/// 100 ms, beating the status board so that a long pause is not taken for a wedged process.
pub fn pause_unless_stopped(pause: Duration, stop: &AtomicBool, board: &StatusBoard) -> bool {
    let deadline = Instant::now() + pause;
    loop {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        board.beat(Timestamp::now());
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: WindowYield = WindowYield {
        changes: 0,
        emitted: 0,
    };
    const WORK: WindowYield = WindowYield {
        changes: 3,
        emitted: 1,
    };

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn work_means_no_pause_and_idle_grows_from_the_poll_interval_to_three_polls() {
        let mut pacer = IdlePacer::new(secs(1), None, None);
        assert_eq!(pacer.after_window(WORK), Duration::ZERO);
        let pauses: Vec<u128> = (0..18)
            .map(|_| pacer.after_window(IDLE).as_millis())
            .collect();
        assert_eq!(
            pauses,
            [
                100, 200, 400, 800, 1000, 1200, 1400, 1600, 1800, 2000, 2200, 2400, 2600, 2800,
                3000, 3000, 3000, 3000
            ]
        );
    }

    #[test]
    fn a_busy_window_is_spaced_a_third_of_the_poll_interval_from_the_next() {
        let pacer = IdlePacer::new(secs(3), None, None);
        assert_eq!(pacer.busy_pause(Duration::ZERO), secs(1));
        assert_eq!(
            pacer.busy_pause(Duration::from_millis(400)),
            Duration::from_millis(600)
        );
        assert_eq!(pacer.busy_pause(secs(2)), Duration::ZERO);
    }

    #[test]
    fn a_window_with_work_resets_the_pause_at_once() {
        let mut pacer = IdlePacer::new(secs(2), None, None);
        for _ in 0..20 {
            pacer.after_window(IDLE);
        }
        assert_eq!(pacer.after_window(IDLE), secs(6));
        assert_eq!(pacer.after_window(WORK), Duration::ZERO);
        assert_eq!(pacer.after_window(IDLE), Duration::from_millis(200));
    }

    #[test]
    fn changes_of_an_open_transaction_are_work_and_control_rows_alone_are_not() {
        let buffered_only = WindowYield {
            changes: 1,
            emitted: 0,
        };
        assert!(!buffered_only.is_idle());
        assert!(IDLE.is_idle());
    }

    #[test]
    fn the_ceiling_keeps_half_the_lag_sla_and_the_heartbeat_but_never_cuts_the_poll() {
        let mut pacer = IdlePacer::new(secs(1), Some(secs(4)), None);
        let longest = (0..30).map(|_| pacer.after_window(IDLE)).max();
        assert_eq!(longest, Some(secs(2)));
        let mut pacer = IdlePacer::new(secs(1), None, Some(Duration::from_millis(1500)));
        let longest = (0..30).map(|_| pacer.after_window(IDLE)).max();
        assert_eq!(longest, Some(Duration::from_millis(1500)));
        let mut pacer = IdlePacer::new(secs(5), Some(secs(2)), Some(secs(1)));
        let longest = (0..30).map(|_| pacer.after_window(IDLE)).max();
        assert_eq!(longest, Some(secs(5)));
        assert_eq!(pacer.after_window(WORK), Duration::ZERO);
        assert_eq!(pacer.after_window(IDLE), Duration::from_millis(500));
    }
}
