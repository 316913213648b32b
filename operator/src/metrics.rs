//! The operator's own Prometheus metrics, served on `/metrics` by [`crate::http`].
//!
//! One [`Metrics`] per process, registered against a [`Registry`] the caller owns (there is no
//! global registry, so every test builds its own). Every name is a constant below and carries the
//! contract prefix `redoline_operator_`; [`ALL`] lists them for the test that renders a registry.
//!
//! | name | type | labels |
//! |---|---|---|
//! | `redoline_operator_reconciles_total` | counter | `result` = `success` / `error` |
//! | `redoline_operator_reconcile_errors_total` | counter | `reason` = the controller error's reason |
//! | `redoline_operator_reconcile_duration_seconds` | histogram | |
//! | `redoline_operator_captures` | gauge | `phase` = `Pending` ... `Stalled`, `Unknown` |
//! | `redoline_operator_leader` | gauge | |
//!
//! Label values are bounded: two results, the handful of [`crate::controller::Error::reason`]
//! names, and the phases. Nothing is labelled by object name.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use kube::runtime::reflector::Store;
use prometheus::{
    Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
};
use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::Phase;

/// Re-exported so that callers (and the tests crate) need no direct `prometheus` dependency.
pub use prometheus::{Error as MetricsError, Registry};

/// Reconciles finished, by `result` (`success` or `error`).
pub const RECONCILES_TOTAL: &str = "redoline_operator_reconciles_total";
/// Failed reconciles, by `reason` (the stable reason of the controller's error).
pub const RECONCILE_ERRORS_TOTAL: &str = "redoline_operator_reconcile_errors_total";
/// Time one reconcile took, successful or not.
pub const RECONCILE_DURATION_SECONDS: &str = "redoline_operator_reconcile_duration_seconds";
/// OracleCaptures this replica manages, by the `phase` of their status (`Unknown` before the first
/// status is written).
pub const CAPTURES: &str = "redoline_operator_captures";
/// 1 while this replica holds the leader Lease (or runs without leader election), else 0.
pub const LEADER: &str = "redoline_operator_leader";

/// Every metric name above.
pub const ALL: [&str; 5] = [
    RECONCILES_TOTAL,
    RECONCILE_ERRORS_TOTAL,
    RECONCILE_DURATION_SECONDS,
    CAPTURES,
    LEADER,
];

/// The `phase` label of a capture without a status yet.
pub const UNKNOWN_PHASE: &str = "Unknown";

/// Upper bounds of the reconcile duration buckets, in seconds. A reconcile is a handful of API
/// calls and at most one `/status` poll (3 s timeout by default).
const DURATION_BUCKETS: [f64; 11] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

/// Every phase, so that each `phase` series exists (at 0) from the first scrape.
const PHASES: [Phase; 5] = [
    Phase::Pending,
    Phase::Snapshotting,
    Phase::Streaming,
    Phase::Suspended,
    Phase::Stalled,
];

fn phase_label(phase: Option<Phase>) -> &'static str {
    match phase {
        None => UNKNOWN_PHASE,
        Some(Phase::Pending) => "Pending",
        Some(Phase::Snapshotting) => "Snapshotting",
        Some(Phase::Streaming) => "Streaming",
        Some(Phase::Suspended) => "Suspended",
        Some(Phase::Stalled) => "Stalled",
    }
}

/// The operator's metrics; share it as `Arc<Metrics>`.
pub struct Metrics {
    registry: Registry,
    pub reconcile: ReconcileMetrics,
    captures: IntGaugeVec,
    leader: IntGauge,
    /// The controllers' caches of OracleCaptures; the `captures` gauge is counted from them when
    /// the registry is rendered, so a deleted resource leaves the count at once.
    stores: Mutex<Vec<Store<OracleCapture>>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// What the reconciler records.
#[derive(Debug)]
pub struct ReconcileMetrics {
    success: IntCounter,
    error: IntCounter,
    errors: IntCounterVec,
    duration: Histogram,
}

impl ReconcileMetrics {
    /// Records one finished reconcile; `error_reason` is `None` when it succeeded.
    pub fn record(&self, elapsed: Duration, error_reason: Option<&str>) {
        self.duration.observe(elapsed.as_secs_f64());
        match error_reason {
            None => self.success.inc(),
            Some(reason) => {
                self.error.inc();
                self.errors.with_label_values(&[reason]).inc();
            }
        }
    }
}

impl Metrics {
    /// Creates every metric and registers it with `registry`.
    pub fn new(registry: &Registry) -> Result<Arc<Self>, prometheus::Error> {
        let reconciles = IntCounterVec::new(
            Opts::new(
                RECONCILES_TOTAL,
                "OracleCapture reconciles finished, by result.",
            ),
            &["result"],
        )?;
        let errors = IntCounterVec::new(
            Opts::new(
                RECONCILE_ERRORS_TOTAL,
                "Failed OracleCapture reconciles, by the error's reason.",
            ),
            &["reason"],
        )?;
        let duration = Histogram::with_opts(
            HistogramOpts::new(
                RECONCILE_DURATION_SECONDS,
                "Time one OracleCapture reconcile took, in seconds.",
            )
            .buckets(DURATION_BUCKETS.to_vec()),
        )?;
        let captures = IntGaugeVec::new(
            Opts::new(
                CAPTURES,
                "OracleCaptures managed by this replica, by status phase.",
            ),
            &["phase"],
        )?;
        let leader = IntGauge::new(
            LEADER,
            "1 while this replica is the leader that reconciles, else 0.",
        )?;
        registry.register(Box::new(reconciles.clone()))?;
        registry.register(Box::new(errors.clone()))?;
        registry.register(Box::new(duration.clone()))?;
        registry.register(Box::new(captures.clone()))?;
        registry.register(Box::new(leader.clone()))?;
        for phase in PHASES.map(Some).into_iter().chain([None]) {
            captures.with_label_values(&[phase_label(phase)]).set(0);
        }
        Ok(Arc::new(Self {
            registry: registry.clone(),
            reconcile: ReconcileMetrics {
                success: reconciles.with_label_values(&["success"]),
                error: reconciles.with_label_values(&["error"]),
                errors,
                duration,
            },
            captures,
            leader,
            stores: Mutex::new(Vec::new()),
        }))
    }

    /// Counts the OracleCaptures of this controller cache in the `captures` gauge.
    pub fn track_captures(&self, store: Store<OracleCapture>) {
        self.stores
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(store);
    }

    /// Sets the `leader` gauge.
    pub fn set_leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// Recounts the `captures` gauge from the tracked caches.
    fn refresh_captures(&self) {
        let mut counts: Vec<(&'static str, i64)> = PHASES
            .map(Some)
            .into_iter()
            .chain([None])
            .map(|phase| (phase_label(phase), 0))
            .collect();
        let stores = self.stores.lock().unwrap_or_else(PoisonError::into_inner);
        for store in stores.iter() {
            for capture in store.state() {
                let label = phase_label(capture.status.as_ref().and_then(|s| s.phase));
                if let Some((_, count)) = counts.iter_mut().find(|(l, _)| *l == label) {
                    *count += 1;
                }
            }
        }
        for (label, count) in counts {
            self.captures.with_label_values(&[label]).set(count);
        }
    }

    /// The registry in the Prometheus text format (what `/metrics` serves).
    pub fn render(&self) -> Result<String, prometheus::Error> {
        self.refresh_captures();
        let text = redoline_crds::metrics_endpoint::render(&self.registry)?;
        String::from_utf8(text).map_err(|e| prometheus::Error::Msg(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::fixtures;
    use kube::runtime::watcher;
    use redoline_crds::v1alpha1::OracleCaptureStatus;

    #[test]
    fn every_metric_is_rendered_with_the_contract_prefix() {
        let registry = Registry::new();
        let metrics = Metrics::new(&registry).unwrap();
        metrics
            .reconcile
            .record(Duration::from_millis(20), Some("ApplyFailed"));
        metrics.reconcile.record(Duration::from_millis(5), None);
        metrics.set_leader(true);
        let text = metrics.render().unwrap();
        for name in ALL {
            assert!(name.starts_with("redoline_operator_"), "{name}");
            assert!(
                text.contains(&format!("# TYPE {name} ")),
                "{name} missing:\n{text}"
            );
        }
        assert!(text.contains(r#"redoline_operator_reconciles_total{result="success"} 1"#));
        assert!(text.contains(r#"redoline_operator_reconciles_total{result="error"} 1"#));
        assert!(
            text.contains(r#"redoline_operator_reconcile_errors_total{reason="ApplyFailed"} 1"#)
        );
        assert!(text.contains("redoline_operator_reconcile_duration_seconds_count 2"));
        assert!(text.contains("redoline_operator_leader 1"));
    }

    #[test]
    fn captures_are_counted_by_phase_from_the_cache() {
        let registry = Registry::new();
        let metrics = Metrics::new(&registry).unwrap();
        let (store, mut writer) = kube::runtime::reflector::store::<OracleCapture>();
        metrics.track_captures(store);
        let fresh = fixtures::sample();
        let mut streaming = fixtures::sample();
        streaming.metadata.name = Some("invoices".into());
        streaming.status = Some(OracleCaptureStatus {
            phase: Some(Phase::Streaming),
            ..OracleCaptureStatus::default()
        });
        for capture in [fresh, streaming] {
            writer.apply_watcher_event(&watcher::Event::Apply(capture));
        }
        let text = metrics.render().unwrap();
        assert!(
            text.contains(r#"redoline_operator_captures{phase="Streaming"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"redoline_operator_captures{phase="Unknown"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"redoline_operator_captures{phase="Stalled"} 0"#),
            "{text}"
        );
    }

    #[test]
    fn a_registry_takes_one_set_of_metrics() {
        let registry = Registry::new();
        assert!(Metrics::new(&registry).is_ok());
        assert!(Metrics::new(&registry).is_err());
    }
}
