//! Source lag (seed 001, "Source lag"): how far the capture is behind the database, in seconds.
//!
//! Lag is the time of the database's current SCN minus the commit time of the last emitted
//! `commit_scn`, both as UTC instants: `SCN_TO_TIMESTAMP` gives the database host's local time,
//! which the engine makes UTC with the host's offset read at the same poll; the emitted commit's
//! time is the one its events carried (converted when it was mined) or, before this run emitted
//! one, `SCN_TO_TIMESTAMP` of the bookmark's SCN with the current offset. A difference of two
//! local times would be an hour off while a DST switch lies between them. SCN distances are not events, so nothing else is
//! reported. An SCN older than Oracle's SCN-to-time mapping (ORA-08181) makes the lag unknown. The
//! lag is polled on the first page, then at most every [`LAG_POLL_INTERVAL`], and once more when
//! the capture stops. A failing lag query is logged once (until one succeeds again) and reports
//! no lag: lag never fails the run.

use jiff::{SignedDuration, Timestamp};

/// The shortest time between two lag queries.
pub const LAG_POLL_INTERVAL: SignedDuration = SignedDuration::from_secs(15);

/// The lag of a position whose database time is `emitted` when the database's current SCN is at
/// `current`: never negative (two SCN_TO_TIMESTAMP readings a little out of order are no lag).
pub fn seconds_behind(current: Timestamp, emitted: Timestamp) -> f64 {
    current.duration_since(emitted).as_secs_f64().max(0.0)
}

/// When to ask for the lag, and what it was.
#[derive(Clone, Debug, Default)]
pub struct LagTracker {
    last_poll: Option<Timestamp>,
    failing: bool,
    lag_seconds: Option<f64>,
}

impl LagTracker {
    /// Whether a page emitted at `now` should poll: the first page, then every 15 s at most;
    /// `stopping` always polls.
    pub fn due(&self, now: Timestamp, stopping: bool) -> bool {
        stopping
            || self
                .last_poll
                .is_none_or(|last| now.duration_since(last) >= LAG_POLL_INTERVAL)
    }

    /// Records a poll: the times of the current SCN and of the emitted commit SCN (`None` when
    /// Oracle no longer maps the SCN).
    pub fn record(
        &mut self,
        now: Timestamp,
        current: Option<Timestamp>,
        emitted: Option<Timestamp>,
    ) {
        self.last_poll = Some(now);
        self.failing = false;
        self.lag_seconds = match (current, emitted) {
            (Some(current), Some(emitted)) => Some(seconds_behind(current, emitted)),
            _ => None,
        };
    }

    /// Records a failed poll; returns whether to log it (the first failure of a run of them).
    pub fn record_failure(&mut self, now: Timestamp) -> bool {
        self.last_poll = Some(now);
        self.lag_seconds = None;
        !std::mem::replace(&mut self.failing, true)
    }

    /// The latest lag, `None` when unknown.
    pub fn lag_seconds(&self) -> Option<f64> {
        self.lag_seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::{DateTime, date};

    fn utc(time: DateTime) -> Option<Timestamp> {
        time.to_zoned(jiff::tz::TimeZone::UTC)
            .ok()
            .map(|z| z.timestamp())
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    #[test]
    fn polls_first_then_every_fifteen_seconds_and_at_stop() {
        let mut lag = LagTracker::default();
        assert!(lag.due(at(0), false));
        lag.record(at(0), None, None);
        assert!(!lag.due(at(14), false));
        assert!(lag.due(at(14), true));
        assert!(lag.due(at(15), false));
    }

    #[test]
    fn lag_is_the_difference_of_commit_times_or_unknown() {
        let mut lag = LagTracker::default();
        let current = date(2024, 1, 2).at(3, 4, 35, 0);
        let emitted = date(2024, 1, 2).at(3, 4, 5, 0);
        lag.record(at(0), utc(current), utc(emitted));
        assert_eq!(lag.lag_seconds(), Some(30.0));
        lag.record(at(20), utc(current), None);
        assert_eq!(lag.lag_seconds(), None, "ORA-08181: unknown");
    }

    #[test]
    fn a_failing_query_is_logged_once_and_reports_no_lag() {
        let mut lag = LagTracker::default();
        lag.record(
            at(0),
            utc(date(2024, 1, 1).at(0, 0, 9, 0)),
            utc(date(2024, 1, 1).at(0, 0, 0, 0)),
        );
        assert!(lag.record_failure(at(15)));
        assert_eq!(lag.lag_seconds(), None);
        assert!(!lag.record_failure(at(30)));
        lag.record(at(45), None, None);
        assert!(lag.record_failure(at(60)), "logged again after a success");
    }
}
