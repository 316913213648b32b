//! The metric names redoline really exports, for the checks of what refers to them (the Grafana
//! dashboards, the chart's alerts): read from the operator's and the capture's own registries, not
//! from a copy.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use anyhow::{Context, bail};
use prometheus::Encoder as _;
use redoline_operator::metrics::{ALL, Metrics, Registry};

/// The operator's metric families (`name` -> Prometheus type: `counter`, `gauge`, `histogram`),
/// from a fresh registry as `/metrics` renders it. One failed reconcile is recorded first, so that
/// the labelled error counter has a series and shows up.
pub fn operator_families() -> anyhow::Result<BTreeMap<String, String>> {
    let registry = Registry::new();
    let metrics = Metrics::new(&registry).context("creating the operator metrics")?;
    metrics
        .reconcile
        .record(Duration::from_millis(1), Some("ApplyFailed"));
    let text = metrics.render().context("rendering the operator metrics")?;
    families_of(&text, &ALL, "metrics::ALL")
}

/// The capture's metric families (engine, buffer and Kafka sink), as its `/metrics` renders them.
/// Each labelled family gets one series first so that it shows up.
pub fn capture_families() -> anyhow::Result<BTreeMap<String, String>> {
    use redoline_capture::buffer::BufferMetrics;
    use redoline_capture::dictionary::{Column, OracleType, TableSchema};
    use redoline_capture::event::Operation;
    use redoline_capture::metrics::{EngineMetrics, SkipReason};
    use redoline_capture::sink::SinkMetrics;

    let registry = Registry::new();
    let engine = EngineMetrics::new(&registry).context("creating the engine metrics")?;
    BufferMetrics::new(&registry).context("creating the buffer metrics")?;
    SinkMetrics::new(&registry).context("creating the sink metrics")?;
    let orders = TableSchema::new("APP", "ORDERS", vec![Column::new("ID", OracleType::Date)])
        .context("building a table")?;
    engine.event(&Operation::Create, &std::sync::Arc::new(orders));
    engine.skipped(SkipReason::Unsupported);
    engine.roundtrip("start LogMiner");
    engine.stopped("CDC-4001");
    engine.retried("database_unavailable");
    let mut text = Vec::new();
    prometheus::TextEncoder::new()
        .encode(&registry.gather(), &mut text)
        .context("rendering the capture metrics")?;
    let text = String::from_utf8(text).context("the capture metrics are not UTF-8")?;
    families_of(
        &text,
        &redoline_capture::metrics::ALL,
        "the capture's metrics::ALL",
    )
}

/// The families (`name` -> type) declared by the `# TYPE` lines of a Prometheus text exposition,
/// failing when a name of `all` (the list named `all_name`) is not among them.
fn families_of(
    text: &str,
    all: &[&str],
    all_name: &str,
) -> anyhow::Result<BTreeMap<String, String>> {
    let families: BTreeMap<String, String> = text
        .lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .filter_map(|line| line.split_once(' '))
        .map(|(name, kind)| (name.to_owned(), kind.to_owned()))
        .collect();
    for name in all {
        if !families.contains_key(*name) {
            bail!("{name} is in {all_name} but not rendered");
        }
    }
    Ok(families)
}

/// Whether `series` belongs to one of `families`, counting a histogram's `_bucket`, `_sum` and
/// `_count` series.
pub fn is_exported(families: &BTreeMap<String, String>, series: &str) -> bool {
    families.contains_key(series)
        || ["_bucket", "_sum", "_count"].iter().any(|suffix| {
            series
                .strip_suffix(suffix)
                .and_then(|base| families.get(base))
                .is_some_and(|kind| kind == "histogram")
        })
}

/// Every identifier starting with `redoline_` in a PromQL expression.
pub fn redoline_names(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = expr;
    while let Some(at) = rest.find("redoline_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        names.insert(tail[..end].to_owned());
        rest = &tail[end..];
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_expressions() {
        assert_eq!(
            redoline_names(
                "histogram_quantile(0.9, sum by (le) (rate(redoline_operator_x_bucket{a=\"b\"}[5m]))) / redoline_y"
            ),
            BTreeSet::from([
                "redoline_operator_x_bucket".to_owned(),
                "redoline_y".to_owned()
            ])
        );
    }

    #[test]
    fn histogram_series_count_as_exported() {
        let families = operator_families().unwrap();
        assert!(is_exported(
            &families,
            "redoline_operator_reconcile_duration_seconds_bucket"
        ));
        assert!(is_exported(&families, "redoline_operator_leader"));
        assert!(!is_exported(&families, "redoline_operator_leader_count"));
        assert!(!is_exported(&families, "redoline_operator_nope"));
    }
}
