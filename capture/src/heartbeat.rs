//! Heartbeats (Debezium's `heartbeat.interval.ms`, `topic.heartbeat.prefix`,
//! `heartbeat.action.query`; `spec.heartbeat`).
//!
//! Every `intervalSeconds` the capture runs the action query (if any) and writes a heartbeat
//! record ([`crate::event::heartbeat`]) to `<heartbeat topic prefix>.<topic prefix>` (`__debezium-heartbeat.<prefix>` by
//! default), in a page of its own whose bookmark moves to the SCN mining has reached when no
//! transaction is open. So on a database whose captured tables are quiet (or with
//! `mining.readOnly`, where no flush row is written) the bookmark, the lag and the archived redo
//! a restart needs keep up with the database. The record is Debezium's: key
//! `{"serverName": <topic prefix>}` (`io.debezium.connector.common.ServerNameKey`), value
//! `{"ts_ms": <when>}` (`io.debezium.connector.common.Heartbeat`), wrapped in
//! `{"schema","payload"}` when the Debezium format has schemas enabled.

use std::time::Duration;

use jiff::Timestamp;

/// When the next heartbeat is due.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeartbeatClock {
    interval: Option<Duration>,
    last: Timestamp,
}

impl HeartbeatClock {
    /// A clock started at `now`; `interval_seconds` 0 is off.
    pub fn new(interval_seconds: u64, now: Timestamp) -> Self {
        Self {
            interval: (interval_seconds > 0).then(|| Duration::from_secs(interval_seconds)),
            last: now,
        }
    }

    /// Whether a heartbeat is due at `now`: a whole interval since the last one (or the start).
    pub fn due(&self, now: Timestamp) -> bool {
        self.interval.is_some_and(|interval| {
            now.duration_since(self.last)
                .try_into()
                .is_ok_and(|elapsed: Duration| elapsed >= interval)
        })
    }

    /// Records a heartbeat sent at `now`.
    pub fn sent(&mut self, now: Timestamp) {
        self.last = now;
    }
}

/// The heartbeat topic: `<heartbeat prefix>.<topic prefix>`.
pub fn heartbeat_topic(heartbeat_prefix: &str, topic_prefix: &str) -> String {
    format!("{heartbeat_prefix}.{topic_prefix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    #[test]
    fn heartbeats_are_due_once_per_interval() {
        let mut clock = HeartbeatClock::new(10, at(0));
        assert!(!clock.due(at(9)));
        assert!(clock.due(at(10)));
        clock.sent(at(12));
        assert!(!clock.due(at(21)));
        assert!(clock.due(at(22)));
        let off = HeartbeatClock::new(0, at(0));
        assert!(!off.due(at(1_000_000)), "0 is off");
    }

    #[test]
    fn the_topic_is_the_heartbeat_prefix_then_the_topic_prefix() {
        let topic = heartbeat_topic("__debezium-heartbeat", "sales");
        assert_eq!(topic, "__debezium-heartbeat.sales");
    }
}
