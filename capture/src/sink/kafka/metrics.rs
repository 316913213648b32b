//! The Kafka sink's metrics, registered on a registry the caller owns (no global registry).
//!
//! | name | type | meaning |
//! |---|---|---|
//! | `redoline_capture_kafka_transactions_committed_total` | counter | pages committed (transactions, or acknowledged pages in at-least-once mode) |
//! | `redoline_capture_kafka_transactions_aborted_total` | counter | Kafka transactions aborted (each abandons its page: the capture mines it again from the bookmark, or stops) |
//! | `redoline_capture_kafka_transaction_duration_seconds` | histogram | from begin to commit of a page, retries included |
//! | `redoline_capture_kafka_records_sent_total` | counter | records of committed pages (bookmarks included) |
//! | `redoline_capture_kafka_bytes_sent_total` | counter | key and value bytes of committed pages |
//! | `redoline_capture_kafka_retries_total` | counter | retries of transient faults |
//! | `redoline_capture_kafka_producer_state` | gauge, `state` label | 1 for the current state, 0 for the others |
//! | `redoline_capture_kafka_held_records_max` | gauge | the most records the sink held at once since start: waiting in its page, or unsent or unacknowledged in librdkafka's queue |
//!
//! Counters move once per page, never per record, and no label carries an xid or SCN. The held
//! records gauge shows that pages stream: it stays near `queue.buffering.max.messages` whatever
//! the size of the transactions (it would follow the largest page if pages were collected).

use prometheus::{Histogram, HistogramOpts, IntCounter, IntGauge, IntGaugeVec, Opts, Registry};

use super::retry::ProducerState;

/// Metric names, in one place so a test can check the registry renders each.
pub mod names {
    pub const COMMITTED: &str = "redoline_capture_kafka_transactions_committed_total";
    pub const ABORTED: &str = "redoline_capture_kafka_transactions_aborted_total";
    pub const DURATION: &str = "redoline_capture_kafka_transaction_duration_seconds";
    pub const RECORDS: &str = "redoline_capture_kafka_records_sent_total";
    pub const BYTES: &str = "redoline_capture_kafka_bytes_sent_total";
    pub const RETRIES: &str = "redoline_capture_kafka_retries_total";
    pub const PRODUCER_STATE: &str = "redoline_capture_kafka_producer_state";
    pub const HELD_MAX: &str = "redoline_capture_kafka_held_records_max";
}

/// The sink's metric handles (cheap to clone).
#[derive(Clone, Debug)]
pub struct SinkMetrics {
    pub(super) committed: IntCounter,
    pub(super) aborted: IntCounter,
    pub(super) duration: Histogram,
    pub(super) records: IntCounter,
    pub(super) bytes: IntCounter,
    pub(super) retries: IntCounter,
    held_max: IntGauge,
    /// One gauge per state, bound once.
    states: Vec<(&'static str, IntGauge)>,
}

impl SinkMetrics {
    /// Creates the metrics and registers them on `registry`.
    pub fn new(registry: &Registry) -> Result<Self, prometheus::Error> {
        let counter = |name: &str, help: &str| -> Result<IntCounter, prometheus::Error> {
            let counter = IntCounter::new(name, help)?;
            registry.register(Box::new(counter.clone()))?;
            Ok(counter)
        };
        let duration = Histogram::with_opts(
            HistogramOpts::new(
                names::DURATION,
                "Seconds from the begin to the commit of a page, retries included.",
            )
            .buckets(vec![
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
            ]),
        )?;
        registry.register(Box::new(duration.clone()))?;
        let state = IntGaugeVec::new(
            Opts::new(
                names::PRODUCER_STATE,
                "1 for the Kafka producer's current state (starting, ready, retrying, fenced, failed).",
            ),
            &["state"],
        )?;
        registry.register(Box::new(state.clone()))?;
        let held_max = IntGauge::new(
            names::HELD_MAX,
            "The most records the Kafka sink held at once: in its page or in librdkafka's queue.",
        )?;
        registry.register(Box::new(held_max.clone()))?;
        let states = ProducerState::LABELS
            .iter()
            .map(|label| (*label, state.with_label_values(&[*label])))
            .collect();
        let metrics = Self {
            committed: counter(names::COMMITTED, "Pages committed to Kafka.")?,
            aborted: counter(names::ABORTED, "Kafka transactions aborted.")?,
            duration,
            records: counter(names::RECORDS, "Records of committed pages.")?,
            bytes: counter(names::BYTES, "Key and value bytes of committed pages.")?,
            retries: counter(names::RETRIES, "Retries of transient Kafka faults.")?,
            held_max,
            states,
        };
        metrics.set_state(&ProducerState::Starting);
        Ok(metrics)
    }

    /// The sink holds `records` records now: raises the high-water mark if above it.
    pub(super) fn held(&self, records: usize) {
        let records = i64::try_from(records).unwrap_or(i64::MAX);
        if records > self.held_max.get() {
            self.held_max.set(records);
        }
    }

    pub(super) fn set_state(&self, state: &ProducerState) {
        for (label, gauge) in &self.states {
            gauge.set(i64::from(*label == state.label()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus::Encoder;

    #[test]
    fn every_metric_is_registered_and_rendered() {
        let registry = Registry::new();
        let metrics = SinkMetrics::new(&registry).unwrap();
        metrics.set_state(&ProducerState::Ready);
        metrics.duration.observe(0.01);
        let mut text = Vec::new();
        prometheus::TextEncoder::new()
            .encode(&registry.gather(), &mut text)
            .unwrap();
        let text = String::from_utf8(text).unwrap();
        for name in [
            names::COMMITTED,
            names::ABORTED,
            names::DURATION,
            names::RECORDS,
            names::BYTES,
            names::RETRIES,
            names::PRODUCER_STATE,
            names::HELD_MAX,
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
        assert!(text.contains(r#"redoline_capture_kafka_producer_state{state="ready"} 1"#));
        assert!(text.contains(r#"redoline_capture_kafka_producer_state{state="starting"} 0"#));
    }
}
