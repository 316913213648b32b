//! The lag the `LagWithinSLA` condition judges: live while a capture streams, estimated from the
//! stored position while none does.
//!
//! - **Live**: the streaming capture's `/status` `lagSeconds` (the database time of its current
//!   SCN minus that of the last emitted commit, both from the database's clock). This is also
//!   `status.lagSeconds`, which is only ever the live figure.
//! - **Estimated**: when no capture streams (stalled after a typed stop, crash-looping, not
//!   started yet), nobody measures the lag, yet it grows, and that is exactly when an SLA is
//!   breached. The capture stores the database time of its position with the bookmark
//!   (`commit_time`) and reports it on `/status` (`commitTime`), which the operator keeps in
//!   `status.position.commitTime`; the lag is then at most about `now - commitTime`. The stored
//!   time never lies after the position's true time (it is rounded down and only moves forward),
//!   so the estimate errs towards more lag; it also carries the difference between the database
//!   host's clock and the operator's.
//! - **Unknown**: a streaming capture that reports no lag (its lag query fails, or the position
//!   is older than Oracle's SCN-to-time mapping; or `/status` does not answer), or no capture
//!   streams and no position time is known: the capture has not streamed since the
//!   OracleCapture was created (or last stored its position with a redoline that did not record
//!   the time). Nothing is pretended then.
//!
//! - **Not judged** while `spec.suspend` holds the capture at zero pods on purpose: its lag grows
//!   by design, and a breach would make GitOps tools (Flux's `failed` expression, Argo CD's
//!   Degraded) report a deliberate pause as a failure.
//!
//! [`judge`] is a pure function of the time, the live lag, what the capture is doing and the
//! stored position.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use redoline_crds::v1alpha1::Position;

/// The lag to judge the SLA by.
#[derive(Clone, Debug, PartialEq)]
pub enum Lag {
    /// Reported by the streaming capture.
    Live { seconds: f64 },
    /// No capture streams: `now - since`, `since` being the stored position's database time.
    Estimated { seconds: f64, since: Time },
    /// Neither: why not.
    Unknown { why: Unknown },
}

/// What the capture is doing, as far as the lag is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activity {
    /// A capture streams: it measures the lag.
    Streaming,
    /// `spec.suspend`: no pod on purpose.
    Suspended,
    /// Stalled, crash-looping, starting, snapshotting: nothing measures the lag.
    NotStreaming,
}

/// Why no lag can be judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// The capture is suspended on purpose.
    Suspended,
    /// A capture streams but reports no lag (yet).
    NotReported,
    /// No capture streams, and none has reported a position since the OracleCapture was
    /// created.
    NoPosition,
    /// No capture streams, and the last one reported its position without its time: it stopped
    /// before it knew it (during its initial snapshot, or before its first lag poll), or it is a
    /// redoline-capture older than this operator.
    PositionWithoutTime { commit_scn: Option<u64> },
}

/// The lag at `now`: the live figure while a capture streams, else the estimate from the time of
/// the last known position. A clock behind the database's counts as no lag, not a negative one.
pub fn judge(
    now: &Time,
    live: Option<f64>,
    activity: Activity,
    position: Option<&Position>,
) -> Lag {
    let why = match (live, activity, position) {
        (Some(seconds), _, _) => return Lag::Live { seconds },
        (None, Activity::Streaming, _) => Unknown::NotReported,
        (None, Activity::Suspended, _) => Unknown::Suspended,
        (None, Activity::NotStreaming, None) => Unknown::NoPosition,
        (None, Activity::NotStreaming, Some(position)) => match &position.commit_time {
            Some(since) => {
                return Lag::Estimated {
                    seconds: now.0.duration_since(since.0).as_secs_f64().max(0.0),
                    since: since.clone(),
                };
            }
            None => Unknown::PositionWithoutTime {
                commit_scn: position.commit_scn,
            },
        },
    };
    Lag::Unknown { why }
}

impl Lag {
    /// Whether the lag is within `max` seconds; `None` when unknown.
    pub fn within(&self, max: u64) -> Option<bool> {
        match self {
            Lag::Live { seconds } | Lag::Estimated { seconds, .. } => Some(*seconds <= max as f64),
            Lag::Unknown { .. } => None,
        }
    }

    /// An estimate within `max` seconds: the time until it exceeds them (it grows by a second
    /// a second), rounded up to the next whole second past the SLA.
    pub fn estimate_breached_in(&self, max: u64) -> Option<Duration> {
        match self {
            Lag::Estimated { seconds, .. } if *seconds <= max as f64 => Some(Duration::from_secs(
                (max as f64 - seconds).floor() as u64 + 1,
            )),
            _ => None,
        }
    }

    /// The `LagWithinSLA` message against an SLA of `max` seconds. An estimate's message names
    /// the time the SLA is (or was) crossed rather than a running figure: that would change at
    /// every reconcile, and every status write triggers another reconcile.
    pub fn message(&self, max: u64) -> String {
        match self {
            Lag::Live { seconds } if *seconds <= max as f64 => {
                format!("lag {seconds:.1}s is within the SLA of {max}s")
            }
            Lag::Live { seconds } => format!("lag {seconds:.1}s exceeds the SLA of {max}s"),
            Lag::Estimated { seconds, since } => {
                let crossing = i64::try_from(max)
                    .ok()
                    .and_then(|max| since.0.checked_add(SignedDuration::from_secs(max)).ok())
                    .map_or_else(|| "a time too far to tell".to_owned(), rfc3339);
                let (verdict, when) = if *seconds <= max as f64 {
                    ("is within", "until")
                } else {
                    ("has exceeded", "since")
                };
                format!(
                    "no capture is streaming; estimated from the last stored position at {}: \
                     the lag {verdict} the SLA of {max}s {when} {crossing}",
                    rfc3339(since.0)
                )
            }
            Lag::Unknown {
                why: Unknown::NotReported,
            } => "no lag is known yet".to_owned(),
            Lag::Unknown {
                why: Unknown::Suspended,
            } => "spec.suspend is true: the lag is not judged while the capture is suspended"
                .to_owned(),
            Lag::Unknown {
                why: Unknown::NoPosition,
            } => "no capture is streaming and no position is known to estimate the lag from: \
                  the capture has not streamed since this OracleCapture was created"
                .to_owned(),
            Lag::Unknown {
                why: Unknown::PositionWithoutTime { commit_scn },
            } => format!(
                "no capture is streaming and the last position (commit SCN {}) came without its \
                 time, so the lag cannot be estimated: the capture stopped before it knew the \
                 time (during its initial snapshot, or before its first lag poll), or it runs a \
                 redoline-capture older than the operator",
                commit_scn.map_or_else(|| "unknown".to_owned(), |scn| scn.to_string())
            ),
        }
    }
}

/// A condition message's time: RFC 3339, UTC, whole seconds.
fn rfc3339(time: Timestamp) -> String {
    time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Time {
        Time(s.parse().unwrap())
    }

    fn now() -> Time {
        at("2026-11-29T10:05:00Z")
    }

    /// A position reported at commit SCN 5000 with `time`.
    fn position(time: Option<&str>) -> Position {
        Position {
            commit_scn: Some(5000),
            restart_scn: Some(4000),
            commit_time: time.map(at),
        }
    }

    #[test]
    fn a_streaming_capture_is_judged_by_its_live_lag() {
        let lag = judge(
            &now(),
            Some(4.5),
            Activity::Streaming,
            Some(&position(Some("2026-11-29T09:00:00Z"))),
        );
        assert_eq!(lag, Lag::Live { seconds: 4.5 });
        assert_eq!(lag.within(120), Some(true));
        assert_eq!(lag.message(120), "lag 4.5s is within the SLA of 120s");
    }

    #[test]
    fn a_stalled_capture_is_judged_by_the_time_of_its_last_position() {
        let old = judge(
            &now(),
            None,
            Activity::NotStreaming,
            Some(&position(Some("2026-11-29T10:00:00Z"))),
        );
        assert_eq!(
            old,
            Lag::Estimated {
                seconds: 300.0,
                since: at("2026-11-29T10:00:00Z")
            }
        );
        assert_eq!(old.within(120), Some(false));
        assert_eq!(
            old.message(120),
            "no capture is streaming; estimated from the last stored position at \
             2026-11-29T10:00:00Z: the lag has exceeded the SLA of 120s since 2026-11-29T10:02:00Z"
        );
        // The message does not move with the clock: a status write triggers a reconcile, which
        // must find nothing new to write.
        let later = judge(
            &at("2026-11-29T10:06:00Z"),
            None,
            Activity::NotStreaming,
            Some(&position(Some("2026-11-29T10:00:00Z"))),
        );
        assert_eq!(later.message(120), old.message(120));
        assert_eq!(old.estimate_breached_in(120), None, "breached already");
        let recent = judge(
            &now(),
            None,
            Activity::NotStreaming,
            Some(&position(Some("2026-11-29T10:04:30Z"))),
        );
        assert_eq!(recent.within(120), Some(true));
        // 30 s now: over 120 s in 91 s, when the operator looks again.
        assert_eq!(
            recent.estimate_breached_in(120),
            Some(Duration::from_secs(91))
        );
        assert_eq!(
            judge(&now(), Some(30.0), Activity::Streaming, None).estimate_breached_in(120),
            None,
            "a live lag is polled anyway"
        );
        assert_eq!(
            recent.message(120),
            "no capture is streaming; estimated from the last stored position at \
             2026-11-29T10:04:30Z: the lag is within the SLA of 120s until 2026-11-29T10:06:30Z"
        );
    }

    #[test]
    fn without_a_position_time_or_a_reported_lag_nothing_is_pretended() {
        let never = judge(&now(), None, Activity::NotStreaming, None);
        assert_eq!(
            never,
            Lag::Unknown {
                why: Unknown::NoPosition
            }
        );
        assert_eq!(never.within(120), None);
        assert!(never.message(120).contains("has not streamed"));
        // A position an older capture reported without its time.
        let untimed = judge(&now(), None, Activity::NotStreaming, Some(&position(None)));
        assert_eq!(untimed.within(120), None);
        assert!(
            untimed
                .message(120)
                .contains("the last position (commit SCN 5000) came without its time"),
            "{}",
            untimed.message(120)
        );
        // Streaming without a figure: the capture will report one; an old position time from
        // the status must not stand in for it.
        let streaming = judge(
            &now(),
            None,
            Activity::Streaming,
            Some(&position(Some("2026-11-29T09:00:00Z"))),
        );
        assert_eq!(
            streaming,
            Lag::Unknown {
                why: Unknown::NotReported
            }
        );
    }

    #[test]
    fn a_suspended_capture_is_not_judged() {
        let suspended = judge(
            &now(),
            None,
            Activity::Suspended,
            Some(&position(Some("2026-11-29T09:00:00Z"))),
        );
        assert_eq!(
            suspended,
            Lag::Unknown {
                why: Unknown::Suspended
            }
        );
        assert!(suspended.message(120).starts_with("spec.suspend is true"));
    }

    #[test]
    fn a_database_clock_ahead_of_the_operators_is_no_negative_lag() {
        let ahead = judge(
            &now(),
            None,
            Activity::NotStreaming,
            Some(&position(Some("2026-11-29T10:05:02Z"))),
        );
        assert_eq!(
            ahead,
            Lag::Estimated {
                seconds: 0.0,
                since: at("2026-11-29T10:05:02Z")
            }
        );
        assert_eq!(ahead.within(0), Some(true));
    }
}
