//! Prometheus metrics of the transaction buffer.
//!
//! Registered on a [`Registry`] the caller passes in (never the global one), so every test has its
//! own. Gauges mirror the buffer's own counters and are set when the buffer's state changes;
//! counters count bytes and events as they happen. No label carries an xid or an SCN.

use prometheus::{IntCounter, IntGauge, Opts, Registry};

/// Names and help texts, in one place (the docs list them too).
pub const METRICS: [(&str, &str); 14] = [
    (OPEN_TRANSACTIONS, "Transactions open in the buffer."),
    (
        BUFFERED_EVENTS,
        "Rows held by open transactions, on the heap or in spill files.",
    ),
    (HEAP_BYTES, "Bytes the buffered rows occupy on the heap."),
    (
        SPILLED_TRANSACTIONS,
        "Open transactions kept in spill files.",
    ),
    (
        SPILLED_BYTES,
        "Bytes of spill files, including committed files not yet released.",
    ),
    (SPILL_WRITE_BYTES, "Bytes written to spill files."),
    (SPILL_READ_BYTES, "Bytes read back from spill files."),
    (ORPHANS_RELEASED, "Orphaned transactions released."),
    (
        TRANSACTIONS_DISCARDED,
        "Transactions discarded for exceeding the maximum age.",
    ),
    (
        UNMATCHED_UNDO_ROWS,
        "Undo rows that matched no earlier change of their transaction.",
    ),
    (
        MEMORY_MAX_BYTES,
        "The heap budget (buffer.memoryMaxBytes), for dashboards and alerts.",
    ),
    (
        SPILL_MAX_BYTES,
        "The spill cap (buffer.spill.maxBytes), for dashboards and alerts.",
    ),
    (
        RELEASED_LEDGER_ENTRIES,
        "Transactions released or discarded whose COMMIT could still come (the released ledger).",
    ),
    (
        RELEASED_LEDGER_MAX_ENTRIES,
        "The released ledger's bound (transactions.releasedLedgerMaxEntries), for dashboards and alerts.",
    ),
];

pub const OPEN_TRANSACTIONS: &str = "redoline_capture_buffer_open_transactions";
pub const BUFFERED_EVENTS: &str = "redoline_capture_buffer_buffered_events";
pub const HEAP_BYTES: &str = "redoline_capture_buffer_heap_bytes";
pub const SPILLED_TRANSACTIONS: &str = "redoline_capture_buffer_spilled_transactions";
pub const SPILLED_BYTES: &str = "redoline_capture_buffer_spilled_bytes";
pub const SPILL_WRITE_BYTES: &str = "redoline_capture_buffer_spill_write_bytes_total";
pub const SPILL_READ_BYTES: &str = "redoline_capture_buffer_spill_read_bytes_total";
pub const ORPHANS_RELEASED: &str = "redoline_capture_buffer_orphans_released_total";
pub const TRANSACTIONS_DISCARDED: &str = "redoline_capture_buffer_transactions_discarded_total";
pub const UNMATCHED_UNDO_ROWS: &str = "redoline_capture_buffer_unmatched_undo_rows_total";
pub const MEMORY_MAX_BYTES: &str = "redoline_capture_buffer_memory_max_bytes";
pub const SPILL_MAX_BYTES: &str = "redoline_capture_buffer_spill_max_bytes";
pub const RELEASED_LEDGER_ENTRIES: &str = "redoline_capture_buffer_released_ledger_entries";
pub const RELEASED_LEDGER_MAX_ENTRIES: &str = "redoline_capture_buffer_released_ledger_max_entries";

/// The buffer's metrics; cloning shares them.
#[derive(Clone, Debug)]
pub struct BufferMetrics {
    pub open_transactions: IntGauge,
    pub buffered_events: IntGauge,
    pub heap_bytes: IntGauge,
    pub spilled_transactions: IntGauge,
    pub spilled_bytes: IntGauge,
    pub spill_write_bytes: IntCounter,
    pub spill_read_bytes: IntCounter,
    pub orphans_released: IntCounter,
    pub transactions_discarded: IntCounter,
    pub unmatched_undo_rows: IntCounter,
    pub memory_max_bytes: IntGauge,
    pub spill_max_bytes: IntGauge,
    pub released_ledger_entries: IntGauge,
    pub released_ledger_max_entries: IntGauge,
}

impl BufferMetrics {
    /// Creates the metrics and registers them on `registry`.
    pub fn new(registry: &Registry) -> Result<Self, prometheus::Error> {
        let help = |name: &str| {
            METRICS
                .iter()
                .find(|(n, _)| *n == name)
                .map_or("", |(_, help)| *help)
        };
        let gauge = |name: &str| -> Result<IntGauge, prometheus::Error> {
            let gauge = IntGauge::with_opts(Opts::new(name, help(name)))?;
            registry.register(Box::new(gauge.clone()))?;
            Ok(gauge)
        };
        let counter = |name: &str| -> Result<IntCounter, prometheus::Error> {
            let counter = IntCounter::with_opts(Opts::new(name, help(name)))?;
            registry.register(Box::new(counter.clone()))?;
            Ok(counter)
        };
        Ok(Self {
            open_transactions: gauge(OPEN_TRANSACTIONS)?,
            buffered_events: gauge(BUFFERED_EVENTS)?,
            heap_bytes: gauge(HEAP_BYTES)?,
            spilled_transactions: gauge(SPILLED_TRANSACTIONS)?,
            spilled_bytes: gauge(SPILLED_BYTES)?,
            spill_write_bytes: counter(SPILL_WRITE_BYTES)?,
            spill_read_bytes: counter(SPILL_READ_BYTES)?,
            orphans_released: counter(ORPHANS_RELEASED)?,
            transactions_discarded: counter(TRANSACTIONS_DISCARDED)?,
            unmatched_undo_rows: counter(UNMATCHED_UNDO_ROWS)?,
            memory_max_bytes: gauge(MEMORY_MAX_BYTES)?,
            spill_max_bytes: gauge(SPILL_MAX_BYTES)?,
            released_ledger_entries: gauge(RELEASED_LEDGER_ENTRIES)?,
            released_ledger_max_entries: gauge(RELEASED_LEDGER_MAX_ENTRIES)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_is_registered_once_with_its_help() {
        let registry = Registry::new();
        let metrics = BufferMetrics::new(&registry).unwrap();
        metrics.spill_write_bytes.inc_by(3);
        let families = registry.gather();
        let names: Vec<_> = families.iter().map(|f| f.name().to_owned()).collect();
        for (name, help) in METRICS {
            assert!(names.iter().any(|n| n == name), "{name} missing");
            assert!(!help.is_empty());
        }
        assert_eq!(families.len(), METRICS.len());
        // A second set on the same registry is refused: names are unique.
        assert!(BufferMetrics::new(&registry).is_err());
    }
}
