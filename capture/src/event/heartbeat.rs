//! Debezium's heartbeat record (`crate::heartbeat` decides when one is written and where): key
//! `{"serverName": <topic prefix>}`, value `{"ts_ms": <when>}`, wrapped in `{"schema","payload"}`
//! when the Debezium format has schemas enabled. The compact format writes it unwrapped.

use jiff::Timestamp;

use super::Record;
use super::json;

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
    fn the_record_has_debeziums_shape() {
        let topic = "__debezium-heartbeat.sales";
        let plain = heartbeat_record(topic, "sales", false, at(0));
        assert_eq!(plain.topic, topic);
        let key: Value = serde_json::from_slice(plain.key.as_deref().unwrap()).unwrap();
        assert_eq!(key, json!({"serverName": "sales"}));
        let value: Value = serde_json::from_slice(plain.value.as_deref().unwrap()).unwrap();
        assert_eq!(value, json!({"ts_ms": 1_700_000_000_000i64}));

        let wrapped = heartbeat_record(topic, "sales", true, at(0));
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
