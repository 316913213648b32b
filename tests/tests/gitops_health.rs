#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The GitOps health checks of docs/gitops/ run as Argo CD and Flux run them, on fixture objects
//! for every health case (tests/fixtures/gitops/cases.yaml):
//!
//! - the Argo CD Lua script in gopher-lua, the interpreter Argo CD embeds, with the libraries Argo
//!   CD opens for health scripts (no `string` library);
//! - the Flux `healthCheckExprs` with cel-go in the environment of fluxcd/pkg/runtime/cel,
//!   evaluated in Flux's order.
//!
//! Both run in a small Go harness (tests/env/gitops-health/), built once with the Go toolchain and
//! cached under ~/.cache/redoline like the other test tools; a missing Go toolchain fails the test.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[derive(Debug, Deserialize)]
struct Case {
    name: String,
    why: String,
    argocd: ArgoExpect,
    /// `Current`, `InProgress`, `Failed`, or `EvaluationError` (Flux keeps polling).
    flux: String,
    object: Value,
}

#[derive(Debug, Deserialize)]
struct ArgoExpect {
    status: String,
    /// A substring of the health message.
    message: String,
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(repo().join("tests/fixtures/gitops/cases.yaml")).unwrap();
    serde_norway::from_str(&text).unwrap()
}

/// Builds the harness (cached) and returns its path.
fn harness() -> PathBuf {
    let output = Command::new("bash")
        .arg(repo().join("tests/env/gitops-health/build.sh"))
        .output()
        .expect("running tests/env/gitops-health/build.sh");
    assert!(
        output.status.success(),
        "building the GitOps health harness failed (Go is needed):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

#[test]
fn argocd_and_flux_health_for_every_case() {
    let cases = cases();
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for case in &cases {
        let path = dir.path().join(format!("{}.json", case.name));
        std::fs::write(&path, serde_json::to_vec(&case.object).unwrap()).unwrap();
        files.push(path);
    }
    let output = Command::new(harness())
        .arg(repo().join("docs/gitops/argocd-health.lua"))
        .arg(repo().join("docs/gitops/flux-kustomization.yaml"))
        .args(&files)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "harness failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(results.len(), cases.len());

    let mut failures = Vec::new();
    for (case, result) in cases.iter().zip(&results) {
        let argo_status = result["argocd"]["status"].as_str();
        let argo_message = result["argocd"]["message"].as_str().unwrap_or("");
        if argo_status != Some(case.argocd.status.as_str())
            || !argo_message.contains(&case.argocd.message)
        {
            failures.push(format!(
                "{} ({}): Argo CD expected {} with message containing {:?}, got {result}",
                case.name, case.why, case.argocd.status, case.argocd.message
            ));
        }
        let flux = match (&result["flux"], &result["fluxError"]) {
            (Value::String(s), _) => s.clone(),
            (_, Value::String(_)) => "EvaluationError".to_owned(),
            _ => "?".to_owned(),
        };
        if flux != case.flux {
            failures.push(format!(
                "{} ({}): Flux expected {}, got {result}",
                case.name, case.why, case.flux
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // Every Argo CD status the check can give, and every Flux verdict, is exercised.
    let argo: BTreeSet<_> = cases.iter().map(|c| c.argocd.status.as_str()).collect();
    assert_eq!(
        argo,
        BTreeSet::from(["Degraded", "Healthy", "Progressing", "Suspended"])
    );
    let flux: BTreeSet<_> = cases.iter().map(|c| c.flux.as_str()).collect();
    for verdict in ["Current", "InProgress", "Failed"] {
        assert!(flux.contains(verdict), "no case for Flux {verdict}");
    }
}

/// A Degraded capture after a typed stop names the stop code, as `kubectl describe` does.
#[test]
fn degraded_messages_carry_the_stop_code() {
    for case in cases() {
        let Some(message) = case.object["status"]["lastStop"]["code"].as_str() else {
            continue;
        };
        assert!(case.argocd.message.contains(message), "{}", case.name);
    }
}

/// The argocd-cm snippet in docs/ carries exactly the tested script.
#[test]
fn the_argocd_configmap_embeds_the_tested_script() {
    let script = std::fs::read_to_string(repo().join("docs/gitops/argocd-health.lua")).unwrap();
    let cm: Value = serde_norway::from_str(
        &std::fs::read_to_string(repo().join("docs/gitops/argocd-cm.yaml")).unwrap(),
    )
    .unwrap();
    assert_eq!(cm["kind"], "ConfigMap");
    assert_eq!(cm["metadata"]["name"], "argocd-cm");
    assert_eq!(
        cm["data"]["resource.customizations.health.redoline.io_OracleCapture"]
            .as_str()
            .expect("the health key is set"),
        script,
        "docs/gitops/argocd-cm.yaml is out of date: paste docs/gitops/argocd-health.lua into it"
    );
}
