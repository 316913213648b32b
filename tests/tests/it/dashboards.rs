#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The Grafana dashboards under dashboards/ are valid dashboard JSON whose queries use only metric
//! names the code really exports: the operator's and the capture's are read from their own
//! registries (`redoline_tests::metric_names`), not from a list kept by hand.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use redoline_tests::metric_names::{
    capture_families, is_exported, operator_families, redoline_names,
};
use serde_json::Value;

fn dashboard(name: &str) -> Value {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../dashboards")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every panel, rows' nested panels included.
fn panels(value: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for panel in value["panels"].as_array().into_iter().flatten() {
        out.push(panel);
        out.extend(panels(panel));
    }
    out
}

/// Every PromQL text of the dashboard: panel targets and template variable queries.
fn queries(dashboard: &Value) -> Vec<String> {
    let mut out: Vec<String> = panels(dashboard)
        .iter()
        .flat_map(|p| p["targets"].as_array().into_iter().flatten())
        .map(|t| {
            t["expr"]
                .as_str()
                .expect("a target without expr")
                .to_owned()
        })
        .collect();
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        if variable["type"] == "query" {
            let query = &variable["query"];
            let text = query["query"].as_str().or(query.as_str()).unwrap();
            out.push(text.to_owned());
        }
    }
    out
}

#[test]
fn operator_dashboard_uses_only_exported_metrics() {
    uses_only_exported_metrics(
        "operator.json",
        "redoline-operator",
        &operator_families().unwrap(),
    );
}

#[test]
fn capture_dashboard_uses_only_exported_metrics() {
    uses_only_exported_metrics(
        "capture.json",
        "redoline-capture",
        &capture_families().unwrap(),
    );
}

#[test]
fn operator_dashboard_panels_are_well_formed() {
    panels_are_well_formed("operator.json", &["datasource", "job", "namespace"]);
}

#[test]
fn capture_dashboard_panels_are_well_formed() {
    panels_are_well_formed(
        "capture.json",
        &["datasource", "job", "namespace", "capture"],
    );
}

/// Every query names only metrics of `families`, and every family has a panel.
fn uses_only_exported_metrics(
    name: &str,
    uid: &str,
    families: &std::collections::BTreeMap<String, String>,
) {
    let dashboard = dashboard(name);
    assert_eq!(dashboard["uid"], uid);
    assert!(dashboard["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(dashboard["schemaVersion"].as_u64().is_some_and(|v| v >= 36));

    let queries = queries(&dashboard);
    assert!(queries.len() >= 10, "{queries:?}");
    let mut used = BTreeSet::new();
    for query in &queries {
        let names = redoline_names(query);
        assert!(
            !names.is_empty(),
            "a query without a redoline metric: {query}"
        );
        for name in names {
            assert!(
                is_exported(families, &name),
                "{name} (in {query}) is not exported; exported: {:?}",
                families.keys().collect::<Vec<_>>()
            );
            used.insert(name);
        }
    }
    // Every exported metric has a panel.
    for family in families.keys() {
        assert!(
            used.iter().any(|u| u.starts_with(family.as_str())),
            "no panel shows {family}"
        );
    }
}

fn panels_are_well_formed(name: &str, expected_variables: &[&str]) {
    let dashboard = dashboard(name);
    let mut ids = BTreeSet::new();
    for panel in panels(&dashboard) {
        let id = panel["id"].as_u64().expect("panel id");
        assert!(ids.insert(id), "panel id {id} twice");
        let grid = &panel["gridPos"];
        for key in ["x", "y", "w", "h"] {
            assert!(grid[key].is_u64(), "panel {id}: gridPos.{key}");
        }
        assert!(grid["x"].as_u64().unwrap() + grid["w"].as_u64().unwrap() <= 24);
        if panel["type"] == "row" {
            continue;
        }
        assert!(panel["title"].as_str().is_some_and(|t| !t.is_empty()));
        assert!(
            panel["description"].as_str().is_some_and(|t| !t.is_empty()),
            "panel {id} has no description"
        );
        // Every query goes to the data source the user picks.
        assert_eq!(panel["datasource"]["uid"], "${datasource}", "panel {id}");
        let targets = panel["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "panel {id} has no query");
        let refs: BTreeSet<_> = targets
            .iter()
            .map(|t| t["refId"].as_str().unwrap())
            .collect();
        assert_eq!(refs.len(), targets.len(), "panel {id}: refIds repeat");
        for target in targets {
            let expr = target["expr"].as_str().unwrap();
            assert!(
                expr.contains("job=~\"$job\""),
                "panel {id}: {expr} ignores the job variable"
            );
        }
    }
    let variables: Vec<_> = dashboard["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(variables, expected_variables);
}
