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

/// The verdicts of Argo CD, Flux and kstatus on each object file, one JSON object each.
fn run_harness(files: &[PathBuf]) -> Vec<Value> {
    let output = Command::new(harness())
        .arg(repo().join("docs/gitops/argocd-health.lua"))
        .arg(repo().join("docs/gitops/flux-kustomization.yaml"))
        .args(files)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "harness failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
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
    let results = run_harness(&files);
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

// --- statuses the operator computes --------------------------------------------------------

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use redoline_crds::capture::CaptureState;
use redoline_operator::status::{
    CaptureReport, ConfigurationProblem, ContainerObservation, ContainerState, Observation,
    PodObservation, Terminated, Unanswered, WorkloadObservation, compute, failing,
};

const SPILL_STOP: &str = r#"{"code":"CDC-4001","reason":"SpillCapacityExceeded","message":"spill cap of 10Gi exceeded","at":"2026-11-29T09:59:00Z"}"#;
const DOCTOR_STOP: &str = r#"{"code":"CDC-1002","reason":"PrerequisitesNotMet","message":"1 of 4 checks failed","at":"2026-11-29T09:59:00Z","details":{"checks":[{"name":"archivelog","ok":false,"message":"NOARCHIVELOG","fix":"ALTER DATABASE ARCHIVELOG;"}]}}"#;

fn rolled_out(generation: i64) -> WorkloadObservation {
    WorkloadObservation {
        generation: Some(generation),
        observed_generation: Some(generation),
        replicas: 1,
        updated_replicas: 1,
        current_revision: Some("r1".into()),
        update_revision: Some("r1".into()),
    }
}

fn container(state: ContainerState) -> ContainerObservation {
    ContainerObservation {
        state,
        last_terminated: None,
    }
}

fn pod(capture: ContainerState) -> PodObservation {
    PodObservation {
        doctor: container(ContainerState::Terminated(Terminated {
            exit_code: 0,
            message: None,
        })),
        capture: container(capture),
    }
}

fn report(state: CaptureState, lag: f64) -> CaptureReport {
    CaptureReport {
        state: Some(state),
        commit_scn: Some(5000),
        commit_time: None,
        restart_scn: Some(4000),
        lag_seconds: Some(lag),
        snapshot: None,
        reposition: None,
        archived_redo: None,
    }
}

fn streaming(lag: f64) -> Observation {
    Observation {
        generation: Some(1),
        sla_max_lag_seconds: Some(120),
        workload: Some(rolled_out(1)),
        pod: Some(pod(ContainerState::Running { ready: true })),
        capture: Some(report(CaptureState::Streaming, lag)),
        ..Observation::default()
    }
}

fn stopped(message: &str) -> ContainerState {
    ContainerState::Terminated(Terminated {
        exit_code: 3,
        message: Some(message.into()),
    })
}

/// One operator state: the observation, and what Argo CD, Flux and kstatus must make of the
/// status `compute` writes for it.
struct OperatorState {
    name: &'static str,
    observation: Observation,
    /// The capture's `metadata.generation` (a spec newer than the status when it is higher).
    generation: i64,
    /// Whether the status is the one written after reconciles kept failing ([`failing`]).
    failing_reconciles: bool,
    argocd: &'static str,
    flux: &'static str,
    kstatus: &'static str,
}

fn operator_states() -> Vec<OperatorState> {
    let state = |name, observation: Observation, argocd, flux, kstatus| OperatorState {
        name,
        generation: observation.generation.unwrap_or(1),
        observation,
        failing_reconciles: false,
        argocd,
        flux,
        kstatus,
    };
    let mut creating = streaming(1.0);
    creating.workload = None;
    creating.pod = None;
    creating.capture = None;
    let mut rolling = streaming(1.0);
    rolling.generation = Some(2);
    rolling.workload = Some(WorkloadObservation {
        update_revision: Some("r2".into()),
        ..rolled_out(2)
    });
    let mut starting = streaming(1.0);
    starting.pod = Some(pod(ContainerState::Running { ready: false }));
    starting.capture = None;
    let mut snapshotting = streaming(1.0);
    snapshotting.pod = Some(pod(ContainerState::Running { ready: false }));
    snapshotting.capture = Some(report(CaptureState::Snapshotting, 0.0));
    let mut spill_stop = streaming(1.0);
    spill_stop.pod = Some(pod(stopped(SPILL_STOP)));
    spill_stop.capture = None;
    let mut stop_in_rollout = rolling.clone();
    stop_in_rollout.pod = Some(pod(stopped(SPILL_STOP)));
    stop_in_rollout.capture = None;
    let mut doctor_failed = streaming(1.0);
    doctor_failed.pod = Some(PodObservation {
        doctor: container(stopped(DOCTOR_STOP)),
        capture: container(ContainerState::NotStarted),
    });
    doctor_failed.capture = None;
    let mut secret_missing = streaming(1.0);
    secret_missing.configuration_problem = Some(ConfigurationProblem::SecretNotFound(
        "Secret \"orders-db-cdc\" named by spec.database.credentialsSecret does not exist".into(),
    ));
    let mut suspended = streaming(1.0);
    suspended.suspend = true;
    suspended.workload = Some(WorkloadObservation {
        replicas: 0,
        updated_replicas: 0,
        ..rolled_out(1)
    });
    suspended.pod = None;
    suspended.capture = None;
    let mut unanswered = streaming(1.0);
    unanswered.capture = None;
    unanswered.status_unanswered = Some(Unanswered {
        polls: 3,
        error: "10.0.0.7:8080: no answer within 3s".into(),
    });
    let mut spec_not_seen = state(
        "spec-not-yet-observed",
        streaming(1.0),
        "Progressing",
        "InProgress",
        "InProgress",
    );
    spec_not_seen.generation = 2;
    let mut failing_state = state(
        "reconciles-keep-failing",
        streaming(1.0),
        "Degraded",
        "Failed",
        "Failed",
    );
    failing_state.failing_reconciles = true;
    vec![
        state(
            "creating",
            creating,
            "Progressing",
            "InProgress",
            "InProgress",
        ),
        state(
            "rolling-out",
            rolling,
            "Progressing",
            "InProgress",
            "InProgress",
        ),
        state(
            "starting",
            starting,
            "Progressing",
            "InProgress",
            "InProgress",
        ),
        state(
            "snapshotting",
            snapshotting,
            "Progressing",
            "InProgress",
            "InProgress",
        ),
        state("streaming", streaming(1.0), "Healthy", "Current", "Current"),
        state(
            "lag-over-sla",
            streaming(300.0),
            "Degraded",
            "Failed",
            "Current",
        ),
        state("typed-stop", spill_stop, "Degraded", "Failed", "Failed"),
        state(
            "typed-stop-during-rollout",
            stop_in_rollout,
            "Degraded",
            "Failed",
            "Failed",
        ),
        state(
            "doctor-failed",
            doctor_failed,
            "Degraded",
            "Failed",
            "Failed",
        ),
        state(
            "secret-missing",
            secret_missing,
            "Degraded",
            "Failed",
            "Failed",
        ),
        state("suspended", suspended, "Suspended", "Current", "Current"),
        state(
            "status-unanswered",
            unanswered,
            "Healthy",
            "Current",
            "Current",
        ),
        spec_not_seen,
        failing_state,
    ]
}

/// Every state the operator's status logic produces, as `compute` (or `failing`) writes it,
/// through Argo CD's Lua, Flux's CEL and kstatus: the three agree with the operator's intent, and
/// a stop or failure is never reported as progress (which would make a GitOps tool wait for its
/// timeout).
#[test]
fn the_statuses_the_operator_writes_read_right_in_argocd_flux_and_kstatus() {
    let now = Time("2026-11-29T10:00:00Z".parse().unwrap());
    let states = operator_states();
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for state in &states {
        let (mut status, _) = compute(&state.observation, None, &now);
        if state.failing_reconciles {
            status = failing(
                Some(&status),
                Some(state.generation),
                "ApplyFailed",
                "applying the StatefulSet: admission webhook \"policy.example.com\" denied the request",
                &now,
            );
        }
        let mut capture = redoline_tests::operator::sample().unwrap();
        capture.metadata.namespace = Some("sales".into());
        capture.metadata.generation = Some(state.generation);
        capture.spec.suspend = state.observation.suspend;
        capture.metadata.uid = Some("3f0c2a52-8f3e-4c1e-9d55-0c1d2b3a4f5e".into());
        capture.status = Some(status);
        let path = dir.path().join(format!("{}.json", state.name));
        std::fs::write(&path, serde_json::to_vec(&capture).unwrap()).unwrap();
        files.push(path);
    }
    let results = run_harness(&files);
    assert_eq!(results.len(), states.len());
    let mut failures = Vec::new();
    for (state, result) in states.iter().zip(&results) {
        let got = (
            result["argocd"]["status"].as_str().unwrap_or("error"),
            result["flux"].as_str().unwrap_or("error"),
            result["kstatus"]["status"].as_str().unwrap_or("error"),
        );
        if got != (state.argocd, state.flux, state.kstatus) {
            failures.push(format!(
                "{}: expected Argo CD {}, Flux {}, kstatus {}; got {result}",
                state.name, state.argocd, state.flux, state.kstatus
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
