//! Heartbeats (Debezium's `heartbeat.interval.ms`, `topic.heartbeat.prefix`,
//! `heartbeat.action.query`; `spec.heartbeat`).
//!
//! Every `intervalSeconds` the capture runs the action query (if any) and writes a heartbeat
//! record to `<heartbeat topic prefix>.<topic prefix>` (`__debezium-heartbeat.<prefix>` by
//! default), in a page of its own whose bookmark moves to the SCN mining has reached when no
//! transaction is open. So on a database whose captured tables are quiet (or with
//! `mining.readOnly`, where no flush row is written) the bookmark, the lag and the archived redo
//! a restart needs keep up with the database. The record is Debezium's: key
//! `{"serverName": <topic prefix>}` (`io.debezium.connector.common.ServerNameKey`), value
//! `{"ts_ms": <when>}` (`io.debezium.connector.common.Heartbeat`), wrapped in
//! `{"schema","payload"}` when the Debezium format has schemas enabled.

use std::time::Duration;

use jiff::Timestamp;

use crate::event::Record;
use crate::event::json;

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

/// The Connect schema of heartbeat keys (`io.debezium.connector.common.ServerNameKey`).
pub const KEY_SCHEMA: &str = concat!(
    "{\"type\":\"struct\",\"fields\":[",
    "{\"type\":\"string\",\"optional\":false,\"field\":\"serverName\"}],",
    "\"optional\":false,\"name\":\"io.debezium.connector.common.ServerNameKey\",\"version\":1}"
);

/// The Connect schema of heartbeat values (`io.debezium.connector.common.Heartbeat`).
pub const VALUE_SCHEMA: &str = concat!(
    "{\"type\":\"struct\",\"fields\":[",
    "{\"type\":\"int64\",\"optional\":false,\"field\":\"ts_ms\"}],",
    "\"optional\":false,\"name\":\"io.debezium.connector.common.Heartbeat\",\"version\":1}"
);

/// Debezium's heartbeat record for the capture `server_name` (its topic prefix) at `at`.
pub fn heartbeat_record(
    topic: &str,
    server_name: &str,
    schemas_enabled: bool,
    at: Timestamp,
) -> Record {
    let mut key = String::with_capacity(128);
    let mut value = String::with_capacity(128);
    if schemas_enabled {
        key.push_str("{\"schema\":");
        key.push_str(KEY_SCHEMA);
        key.push_str(",\"payload\":");
        value.push_str("{\"schema\":");
        value.push_str(VALUE_SCHEMA);
        value.push_str(",\"payload\":");
    }
    key.push('{');
    json::key(&mut key, "serverName");
    json::string(&mut key, server_name);
    key.push('}');
    value.push('{');
    json::key(&mut value, "ts_ms");
    json::integer(&mut value, at.as_millisecond());
    value.push('}');
    if schemas_enabled {
        key.push('}');
        value.push('}');
    }
    Record {
        topic: topic.to_owned(),
        key: Some(key.into_bytes()),
        value: Some(value.into_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

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
    fn the_record_has_debeziums_shape() {
        let topic = heartbeat_topic("__debezium-heartbeat", "sales");
        assert_eq!(topic, "__debezium-heartbeat.sales");
        let plain = heartbeat_record(&topic, "sales", false, at(0));
        assert_eq!(plain.topic, topic);
        let key: Value = serde_json::from_slice(plain.key.as_deref().unwrap()).unwrap();
        assert_eq!(key, json!({"serverName": "sales"}));
        let value: Value = serde_json::from_slice(plain.value.as_deref().unwrap()).unwrap();
        assert_eq!(value, json!({"ts_ms": 1_700_000_000_000i64}));

        let wrapped = heartbeat_record(&topic, "sales", true, at(0));
        let key: Value = serde_json::from_slice(wrapped.key.as_deref().unwrap()).unwrap();
        assert_eq!(key["payload"], json!({"serverName": "sales"}));
        assert_eq!(
            key["schema"]["name"],
            "io.debezium.connector.common.ServerNameKey"
        );
        let value: Value = serde_json::from_slice(wrapped.value.as_deref().unwrap()).unwrap();
        assert_eq!(value["payload"], json!({"ts_ms": 1_700_000_000_000i64}));
        assert_eq!(
            value["schema"]["name"],
            "io.debezium.connector.common.Heartbeat"
        );
    }
}
