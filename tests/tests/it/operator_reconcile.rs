//! The reconciler against a real control plane: the controller runs in this process, watching one
//! test namespace, while kube-apiserver and kube-controller-manager do what they do in a cluster.
//!
//! The pods do not run here (they do not tolerate the test node's taint): the tests stand in for the
//! kubelet, which reaches every state at once (a real pod on the node is `real_pods.rs`'s): they
//! write the capture pod's status through
//! the `pods/status` subresource (an init container that failed with a CDC-1002 report, a capture
//! container that stopped with CDC-4001, a running capture on 127.0.0.1 whose `/status` a small
//! HTTP server in the test answers) and assert the conditions, `lastStop`, `lagSeconds` and Events
//! the operator derives. After every change they check kstatus' rule: `observedGeneration`, on the
//! status and on every condition, equals `metadata.generation`.
//!
//! Every wait is bounded by [`WAIT`].

// Test files may panic: a failed expectation here is a failed test.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::net::TcpListener;
use std::ops::Deref;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::LastStop;
use redoline_operator::build::CONFIG_HASH_ANNOTATION;
use redoline_operator::controller;
use redoline_tests::k8s::KubeEnv;
use redoline_tests::operator::{
    self, NAME, container_status, has_condition, observes_its_generation, ready_pod_status,
    terminated,
};
use redoline_tests::wait;
use serde_json::json;

const POD: &str = "orders-capture-0";
const WAIT: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(250);

const DOCTOR_REPORT: &str = r#"{"code":"CDC-1002","reason":"PrerequisitesNotMet","message":"1 of 4 checks failed","at":"2026-11-29T10:00:00Z","details":{"checks":[{"name":"archivelog","ok":true,"message":"ARCHIVELOG mode","fix":""},{"name":"supplemental_logging","ok":false,"message":"minimal supplemental logging is off","fix":"ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;"}]}}"#;
const SPILL_STOP: &str = r#"{"code":"CDC-4001","reason":"SpillCapacityExceeded","message":"spill cap of 20Gi exceeded","at":"2026-11-29T11:00:00Z","details":{"transactions":[{"xid":"0a001b00c2030000","user":"BATCH","firstScn":1200,"events":5000000,"heapBytes":1024,"diskBytes":21474836480}]}}"#;

const RELEASED_STOP: &str = r#"{"code":"CDC-7001","reason":"ReleasedTransactionCommitted","message":"COMMIT of released transaction 0a001b00c2030000 at SCN 9000","at":"2026-11-29T12:00:00Z"}"#;

/// A controller running in this process over one fresh namespace, and what these tests do with it.
struct Harness(operator::Harness);

impl Deref for Harness {
    type Target = operator::Harness;

    fn deref(&self) -> &operator::Harness {
        &self.0
    }
}

impl Harness {
    /// Starts the controller; `status_port` is where it polls a running capture's `/status`.
    async fn start(test: &str, status_port: u16) -> Harness {
        let h = operator::Harness::start(test, |settings| {
            settings.status_poll_interval = Duration::from_millis(500);
            settings.status_port = status_port;
            settings.status_timeout = Duration::from_secs(1);
        })
        .await
        .expect("controller started over a fresh namespace");
        Harness(h)
    }

    async fn create_secret(&self, name: &str, keys: &[&str]) {
        let data: serde_json::Map<String, serde_json::Value> = keys
            .iter()
            .map(|k| ((*k).to_owned(), json!(format!("{k}-value"))))
            .collect();
        operator::create_secret(&self.client, &self.ns.name, name, data.into())
            .await
            .expect("Secret created");
    }

    /// Both Secrets the sample references.
    async fn create_sample_secrets(&self) {
        self.create_secret("orders-db-cdc", &["username", "password"])
            .await;
        self.create_secret("orders-kafka-client", &["client.properties"])
            .await;
    }

    async fn create_sample(&self) -> OracleCapture {
        self.0.create_sample().await.expect("OracleCapture created")
    }

    async fn patch_spec(&self, spec: serde_json::Value) -> i64 {
        self.0.patch_spec(spec).await.expect("spec patched")
    }

    /// Writes the capture pod's status, as the kubelet would.
    async fn write_pod_status(&self, status: serde_json::Value) {
        operator::write_pod_status(&self.api::<Pod>(), POD, status)
            .await
            .unwrap_or_else(|e| panic!("{e:#}"));
    }

    /// Waits until the status describes the current generation and `accept` holds.
    async fn wait_current(
        &self,
        what: &str,
        accept: impl Fn(&OracleCapture) -> bool,
    ) -> OracleCapture {
        let capture = operator::wait_for_capture(&self.captures, NAME, what, WAIT, POLL, |c| {
            observes_its_generation(c) && accept(c)
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        assert_kstatus_generations(&capture);
        capture
    }

    /// Waits until the status describes the current generation with condition `type_` at
    /// `status` for `reason`.
    async fn wait_condition(&self, type_: &str, status: &str, reason: &str) -> OracleCapture {
        self.wait_current(&format!("{type_}={status} ({reason})"), |c| {
            has_condition(c, type_, status, reason)
        })
        .await
    }

    /// An Event about the OracleCapture with this reason, waiting for it to appear.
    async fn event(&self, reason: &str) -> Event {
        wait::eventually(&format!("an Event {reason}"), WAIT, POLL, || async {
            self.event_with_reason(reason).await.expect("events")
        })
        .await
        .unwrap_or_else(|e| panic!("no Event with reason {reason}: {e}"))
    }

    async fn stateful_set_where(
        &self,
        what: &str,
        accept: impl Fn(&StatefulSet) -> bool,
    ) -> StatefulSet {
        let api = self.api::<StatefulSet>();
        let (api, accept) = (&api, &accept);
        wait::eventually(
            &format!("the StatefulSet: {what}"),
            WAIT,
            POLL,
            || async move {
                api.get_opt("orders-capture")
                    .await
                    .expect("get")
                    .filter(|sts| accept(sts))
            },
        )
        .await
        .expect("the StatefulSet")
    }

    async fn wait_for_pod(&self) {
        let pods = self.api::<Pod>();
        wait::eventually("the capture pod", WAIT, POLL, || async {
            pods.get_opt(POD).await.expect("get pod")
        })
        .await
        .expect("no capture pod");
    }

    /// Stops the controller (graceful) and deletes the namespace.
    async fn finish(self) {
        self.0.finish().await.expect("controller stopped");
    }
}

fn condition<'a>(capture: &'a OracleCapture, type_: &str) -> Option<&'a Condition> {
    capture.status.as_ref()?.condition(type_)
}

/// The message of condition `type_`, which must be there.
fn message_of<'a>(capture: &'a OracleCapture, type_: &str) -> &'a str {
    &condition(capture, type_)
        .unwrap_or_else(|| panic!("no condition {type_}"))
        .message
}

/// `status.lastStop`, which must be there.
fn last_stop_of(capture: &OracleCapture) -> LastStop {
    capture
        .status
        .as_ref()
        .and_then(|s| s.last_stop.clone())
        .expect("lastStop")
}

/// `kubectl wait` reads each condition's own observedGeneration first: all must be current.
fn assert_kstatus_generations(capture: &OracleCapture) {
    let generation = capture.metadata.generation;
    let status = capture.status.as_ref().expect("status");
    assert_eq!(status.observed_generation, generation);
    for c in &status.conditions {
        assert_eq!(c.observed_generation, generation, "condition {}", c.type_);
    }
}

fn template_annotation(sts: &StatefulSet, key: &str) -> String {
    sts.spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.annotations.as_ref())
        .and_then(|a| a.get(key))
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_follow_the_spec_and_suspend_scales_to_zero() {
    let h = Harness::start("operator-reconcile-lifecycle", 1).await;
    h.create_sample_secrets().await;
    h.create_sample().await;

    // (a) The children appear and the first status is written for the first generation.
    let first = h.stateful_set_where("created", |_| true).await;
    assert_eq!(first.spec.as_ref().unwrap().replicas, Some(1));
    let config_maps = h.api::<ConfigMap>();
    let config = config_maps
        .get("orders-capture-config")
        .await
        .expect("ConfigMap");
    let capture = h
        .wait_current("a first status", |c| {
            has_condition(c, "Ready", "False", "Starting") && condition(c, "Reconciling").is_some()
        })
        .await;
    for type_ in ["PrerequisitesMet", "Stalled", "LagWithinSLA"] {
        assert!(condition(&capture, type_).is_some(), "{type_} missing");
    }
    assert!(has_condition(&capture, "Stalled", "False", "NoStop"));

    // (b) A spec change reaches the ConfigMap and rolls the pod template.
    let generation = h
        .patch_spec(json!({"mining": {"pollIntervalSeconds": 7}}))
        .await;
    h.wait_current("the new generation", |c| {
        c.metadata.generation == Some(generation)
    })
    .await;
    let changed = config_maps
        .get("orders-capture-config")
        .await
        .expect("ConfigMap");
    let rendered = |cm: &ConfigMap| cm.data.as_ref().unwrap()["capture.yaml"].clone();
    assert_ne!(rendered(&config), rendered(&changed));
    assert!(
        rendered(&changed).contains("pollIntervalSeconds: 7"),
        "{}",
        rendered(&changed)
    );
    let config_hash = template_annotation(&first, CONFIG_HASH_ANNOTATION);
    let rolled = h
        .stateful_set_where("the new config hash", |s| {
            template_annotation(s, CONFIG_HASH_ANNOTATION) != config_hash
        })
        .await;
    assert_eq!(
        template_annotation(&rolled, CONFIG_HASH_ANNOTATION),
        changed.metadata.annotations.as_ref().unwrap()[CONFIG_HASH_ANNOTATION]
    );

    // Nothing on the pod template follows a Secret: the operator reads none, and a changed
    // credential reaches the pod through the kubelet's refresh of its volume (real_credentials.rs).
    let annotations = rolled
        .spec
        .as_ref()
        .and_then(|s| s.template.metadata.as_ref())
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default();
    assert_eq!(
        annotations.keys().collect::<Vec<_>>(),
        [CONFIG_HASH_ANNOTATION],
        "no digest of a Secret"
    );

    // Suspend: zero replicas, Ready=True with reason Suspended.
    h.patch_spec(json!({"suspend": true})).await;
    h.stateful_set_where("zero replicas", |s| {
        s.spec.as_ref().and_then(|s| s.replicas) == Some(0)
    })
    .await;
    let suspended = h.wait_condition("Ready", "True", "Suspended").await;
    assert_eq!(
        suspended.status.as_ref().unwrap().phase,
        Some(redoline_crds::v1alpha1::Phase::Suspended)
    );

    // A new spill size changes volumeClaimTemplates, which Kubernetes refuses to update: the
    // StatefulSet is replaced (the sample's StorageClass "standard" does not exist here, so by
    // recreation; tests/operator_resize.rs covers both ways).
    h.patch_spec(json!({"buffer": {"spill": {"size": "30Gi"}}}))
        .await;
    h.stateful_set_where("the new spill size", |s| {
        controller::resize::SpillTemplate::of(s).and_then(|t| t.bytes) == Some(30 << 30)
    })
    .await;
    h.event("SpillVolumeRecreated").await;
    h.wait_current("Suspended after the resize", |c| {
        has_condition(c, "Ready", "True", "Suspended")
            && has_condition(c, "Stalled", "False", "NoStop")
    })
    .await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_stops_become_conditions_last_stop_and_events() {
    let h = Harness::start("operator-reconcile-stops", 1).await;
    h.create_sample_secrets().await;
    h.create_sample().await;
    h.wait_for_pod().await;

    // (c) The doctor init container failed with a CDC-1002 report.
    h.write_pod_status(json!({
        "phase": "Pending",
        "initContainerStatuses": [container_status("doctor", terminated(1, DOCTOR_REPORT), false)],
        "containerStatuses": [container_status("capture", json!({"waiting": {"reason": "PodInitializing"}}), false)],
    }))
    .await;
    let capture = h
        .wait_condition("PrerequisitesMet", "False", "PrerequisitesNotMet")
        .await;
    let prerequisites = condition(&capture, "PrerequisitesMet").unwrap();
    assert!(
        prerequisites
            .message
            .contains("supplemental_logging: minimal supplemental logging is off Fix: ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;"),
        "{}",
        prerequisites.message
    );
    assert!(!prerequisites.message.contains("archivelog"));
    let stalled = condition(&capture, "Stalled").unwrap();
    assert_eq!(
        (stalled.status.as_str(), stalled.reason.as_str()),
        ("True", "PrerequisitesNotMet")
    );
    assert!(
        stalled.message.starts_with("CDC-1002"),
        "{}",
        stalled.message
    );
    assert!(has_condition(
        &capture,
        "Ready",
        "False",
        "PrerequisitesNotMet"
    ));
    let event = h.event("PrerequisitesNotMet").await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(event.action.as_deref(), Some("Reconcile"));
    assert!(
        event
            .note
            .unwrap_or_default()
            .contains("ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;")
    );

    // (d) The doctor passed after a fix; the capture stopped with CDC-4001.
    h.write_pod_status(json!({
        "phase": "Running",
        "initContainerStatuses": [container_status("doctor", terminated(0, ""), false)],
        "containerStatuses": [container_status("capture", terminated(1, SPILL_STOP), false)],
    }))
    .await;
    let capture = h
        .wait_condition("Stalled", "True", "SpillCapacityExceeded")
        .await;
    assert!(has_condition(
        &capture,
        "PrerequisitesMet",
        "True",
        "PrerequisitesMet"
    ));
    let stalled = message_of(&capture, "Stalled");
    assert!(
        stalled.starts_with("CDC-4001: spill cap of 20Gi exceeded"),
        "{stalled}"
    );
    assert!(
        stalled.contains("xid 0a001b00c2030000 user BATCH"),
        "{stalled}"
    );
    let last_stop = last_stop_of(&capture);
    assert_eq!(last_stop.code, "CDC-4001");
    assert_eq!(last_stop.reason, "SpillCapacityExceeded");
    assert_eq!(last_stop.at.0.to_string(), "2026-11-29T11:00:00Z");
    assert_eq!(
        capture.status.as_ref().unwrap().phase,
        Some(redoline_crds::v1alpha1::Phase::Stalled)
    );
    h.event("SpillCapacityExceeded").await;
    h.event("PrerequisitesMet").await;

    // The restarted capture stopped again, with CDC-7001: the kubelet shows it as the last state
    // of a container waiting to restart. A different stop is a new Event.
    h.write_pod_status(json!({
        "phase": "Running",
        "initContainerStatuses": [container_status("doctor", terminated(0, ""), false)],
        "containerStatuses": [{
            "name": "capture",
            "image": "ghcr.io/redoline/redoline-capture:0.1.0",
            "imageID": "",
            "ready": false,
            "restartCount": 1,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": terminated(1, RELEASED_STOP),
        }],
    }))
    .await;
    let capture = h
        .wait_condition("Stalled", "True", "ReleasedTransactionCommitted")
        .await;
    let stalled = message_of(&capture, "Stalled");
    assert!(
        stalled.starts_with("CDC-7001: COMMIT of released transaction 0a001b00c2030000"),
        "{stalled}"
    );
    assert_eq!(last_stop_of(&capture).code, "CDC-7001");
    h.event("ReleasedTransactionCommitted").await;
    h.finish().await;
}

/// A stand-in for the capture's `/status` on 127.0.0.1, answering with `body`.
fn status_server(body: Arc<Mutex<String>>) -> operator::StatusServer {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    operator::StatusServer::start(listener, body).unwrap_or_else(|e| panic!("{e:#}"))
}

fn report(lag_seconds: f64) -> String {
    json!({
        "state": "streaming", "commitScn": 5000, "restartScn": 4900, "lagSeconds": lag_seconds,
        "openTransactions": 1, "bufferedEvents": 10, "heapBytes": 4096, "spilledTransactions": 0,
        "spilledBytes": 0, "startedAt": "2026-11-29T10:00:00Z", "version": "0.1.0",
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lag_comes_from_the_capture_status_and_follows_the_sla() {
    let body = Arc::new(Mutex::new(report(4.5)));
    let server = status_server(body.clone());
    let h = Harness::start("operator-reconcile-lag", server.port()).await;
    h.create_sample_secrets().await;
    h.create_sample().await;
    h.wait_for_pod().await;

    // (e) A running, ready capture on loopback that streams within the SLA (120 s).
    h.write_pod_status(ready_pod_status("127.0.0.1")).await;

    // First the initial snapshot: its progress shows in status.snapshot.
    let streaming_report = body.lock().unwrap().clone();
    *body.lock().unwrap() = json!({
        "state": "snapshotting", "commitScn": null, "lagSeconds": null,
        "snapshot": {"tablesTotal": 3, "tablesDone": 1, "rowsScanned": 1200,
                     "rowsRemainingEstimate": 4800},
    })
    .to_string();
    let capture = h.wait_condition("Ready", "False", "Snapshotting").await;
    let snapshot = capture.status.as_ref().unwrap().snapshot.clone();
    let snapshot = snapshot.expect("status.snapshot while snapshotting");
    assert_eq!(
        (
            snapshot.tables_done,
            snapshot.tables_total,
            snapshot.rows_scanned
        ),
        (Some(1), Some(3), Some(1200))
    );
    assert_eq!(snapshot.rows_remaining_estimate, Some(4800));
    *body.lock().unwrap() = streaming_report;

    let capture = h.wait_condition("Ready", "True", "Streaming").await;
    assert_eq!(capture.status.as_ref().unwrap().snapshot, None);
    let status = capture.status.as_ref().unwrap();
    assert_eq!(status.lag_seconds, Some(4.5));
    assert_eq!(status.position.as_ref().unwrap().commit_scn, Some(5000));
    assert!(has_condition(
        &capture,
        "LagWithinSLA",
        "True",
        "LagWithinSLA"
    ));

    // What a GitOps pipeline runs: kubectl wait sees Ready at the current generation.
    KubeEnv::shared()
        .unwrap()
        .kubectl_wait_ready(&h.ns.name, NAME)
        .await
        .unwrap();

    // Breach: lag above the SLA.
    *body.lock().unwrap() = report(500.0);
    let capture = h
        .wait_condition("LagWithinSLA", "False", "LagSLABreached")
        .await;
    assert_eq!(capture.status.as_ref().unwrap().lag_seconds, Some(500.0));
    assert!(has_condition(&capture, "Ready", "True", "Streaming"));
    let breach = h.event("LagSLABreached").await;
    assert_eq!(breach.type_.as_deref(), Some("Warning"));

    // Recovery.
    *body.lock().unwrap() = report(2.0);
    h.wait_condition("LagWithinSLA", "True", "LagWithinSLA")
        .await;
    let recovered = h.event("LagSLARecovered").await;
    assert_eq!(recovered.type_.as_deref(), Some("Normal"));

    // The capture reports its position's database time, 100 s ago, then stops with CDC-4001:
    // nothing measures the lag any more. The operator estimates it from that time and says so,
    // within the SLA of 120 s at first, and turns LagWithinSLA False once the estimate crosses
    // the SLA, with nothing else changing to wake it.
    let position_time = Timestamp::now() - SignedDuration::from_secs(100);
    *body.lock().unwrap() = report_at(2.0, position_time);
    h.wait_current("the position's time", |c| {
        c.status
            .as_ref()
            .and_then(|s| s.position.as_ref())
            .is_some_and(|p| p.commit_time.is_some())
    })
    .await;
    h.write_pod_status(json!({
        "phase": "Running",
        "initContainerStatuses": [container_status("doctor", terminated(0, ""), false)],
        "containerStatuses": [container_status("capture", terminated(3, SPILL_STOP), false)],
    }))
    .await;
    let estimated = |c: &OracleCapture| {
        message_of(c, "LagWithinSLA").starts_with(&format!(
            "no capture is streaming; estimated from the last stored position at {}: the lag ",
            position_time.strftime("%Y-%m-%dT%H:%M:%SZ")
        ))
    };
    let capture = h
        .wait_current("an estimated lag within the SLA", |c| {
            has_condition(c, "LagWithinSLA", "True", "LagWithinSLA") && estimated(c)
        })
        .await;
    assert!(has_condition(
        &capture,
        "Stalled",
        "True",
        "SpillCapacityExceeded"
    ));
    assert_eq!(
        capture.status.as_ref().unwrap().lag_seconds,
        None,
        "lagSeconds is only the live lag"
    );
    let capture = h
        .wait_current("an estimated lag over the SLA", |c| {
            has_condition(c, "LagWithinSLA", "False", "LagSLABreached") && estimated(c)
        })
        .await;
    let message = message_of(&capture, "LagWithinSLA");
    let crossing = position_time + SignedDuration::from_secs(120);
    assert!(
        message.ends_with(&format!(
            "the lag has exceeded the SLA of 120s since {}",
            crossing.strftime("%Y-%m-%dT%H:%M:%SZ")
        )),
        "{message}"
    );
    h.finish().await;
}

/// [`report`] with the position's database time.
fn report_at(lag_seconds: f64, commit_time: Timestamp) -> String {
    let mut report: serde_json::Value = serde_json::from_str(&report(lag_seconds)).unwrap();
    report["commitTime"] = json!(commit_time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
    report.to_string()
}

/// A Secret or key the pod cannot mount: the kubelet keeps the pod in ContainerCreating and says
/// why in `FailedMount` Events, posted here in its words as it would; the operator, which reads
/// no Secret, turns them into the status it has always shown, naming the spec field. Once a
/// container of the pod started, the Events are history.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_the_pod_cannot_mount_stalls_until_the_pod_starts() {
    let h = Harness::start("operator-reconcile-secrets", 1).await;
    h.create_secret("orders-kafka-client", &["client.properties"])
        .await;
    h.create_sample().await;
    // The operator does not look for the Secret: the StatefulSet and its pod are made.
    h.stateful_set_where("created", |_| true).await;
    h.wait_for_pod().await;
    let pod = h.api::<Pod>().get(POD).await.expect("the capture pod");
    let first = Timestamp::now();
    operator::post_failed_mount(
        &h.client,
        &pod,
        "MountVolume.SetUp failed for volume \"database-credentials\" : secret \"orders-db-cdc\" not found",
        first,
    )
    .await
    .expect("Event posted");

    let capture = h.wait_condition("Stalled", "True", "SecretNotFound").await;
    let message = message_of(&capture, "Stalled");
    assert_eq!(
        message,
        "Secret \"orders-db-cdc\" named by spec.database.credentialsSecret does not exist"
    );
    assert!(has_condition(&capture, "Ready", "False", "SecretNotFound"));
    h.event("SecretNotFound").await;

    // Created since without the password key: the kubelet's next attempt says so.
    operator::post_failed_mount(
        &h.client,
        &pod,
        &format!(
            "MountVolume.SetUp failed for volume \"database-credentials\" : couldn't find key password in Secret {}/orders-db-cdc",
            h.ns.name
        ),
        first + SignedDuration::from_secs(10),
    )
    .await
    .expect("Event posted");
    let capture = h
        .wait_condition("Stalled", "True", "SecretKeyMissing")
        .await;
    let message = message_of(&capture, "Stalled");
    assert!(message.contains("\"password\""), "{message}");
    assert!(
        message.contains("spec.database.credentialsSecret.passwordKey"),
        "{message}"
    );

    // Fixed: the volumes mount and the doctor starts; the Events are history.
    h.write_pod_status(json!({
        "phase": "Pending",
        "initContainerStatuses": [container_status("doctor", json!({"running": {}}), false)],
    }))
    .await;
    h.wait_condition("Stalled", "False", "NoStop").await;
    h.finish().await;
}

/// A refusal that lasts (here a ValidatingAdmissionPolicy that forbids the StatefulSet, as a
/// policy engine or webhook would) is said in the status: after a few failed reconciles, Stalled
/// True with the refusal, for the current generation, so the object never keeps a stale
/// `observedGeneration` and GitOps tools report the failure. It clears once the refusal ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lasting_refusal_is_stalled_in_the_status_for_the_current_generation() {
    use k8s_openapi::api::admissionregistration::v1::{
        ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding,
    };
    let h = Harness::start("operator-reconcile-refused", 1).await;
    let name = format!("freeze-{}", h.ns.name);
    let policies: kube::Api<ValidatingAdmissionPolicy> = kube::Api::all(h.client.clone());
    let bindings: kube::Api<ValidatingAdmissionPolicyBinding> = kube::Api::all(h.client.clone());
    let policy: ValidatingAdmissionPolicy = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{
                "apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["statefulsets"]}]},
            "validations": [{"expression": "false", "reason": "Forbidden",
                             "message": "statefulsets are frozen in this namespace"}]
        }
    }))
    .unwrap();
    let binding: ValidatingAdmissionPolicyBinding = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchLabels": {
                "kubernetes.io/metadata.name": h.ns.name}}}
        }
    }))
    .unwrap();
    policies
        .create(&Default::default(), &policy)
        .await
        .expect("policy");
    bindings
        .create(&Default::default(), &binding)
        .await
        .expect("binding");
    // The policy takes effect once the apiserver's policy cache has it: probe with a dry run.
    let probe: StatefulSet = serde_json::from_value(json!({
        "metadata": {"name": "probe"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
            "metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}}
    }))
    .unwrap();
    let statefulsets = h.api::<StatefulSet>();
    wait::eventually("the policy in force", WAIT, POLL, || async {
        let dry = kube::api::PostParams {
            dry_run: true,
            ..Default::default()
        };
        statefulsets.create(&dry, &probe).await.err().map(|_| ())
    })
    .await
    .expect("the policy never applied");

    h.create_sample_secrets().await;
    h.create_sample().await;
    let capture = h.wait_condition("Stalled", "True", "ApplyFailed").await;
    let message = message_of(&capture, "Stalled");
    assert!(message.contains("frozen in this namespace"), "{message}");
    assert!(has_condition(&capture, "Ready", "False", "ApplyFailed"));
    assert!(has_condition(
        &capture,
        "Reconciling",
        "False",
        "ApplyFailed"
    ));

    // The refusal ends: the next reconcile creates the StatefulSet and the stall clears.
    bindings
        .delete(&name, &Default::default())
        .await
        .expect("binding deleted");
    policies
        .delete(&name, &Default::default())
        .await
        .expect("policy deleted");
    h.stateful_set_where("created once the policy is gone", |_| true)
        .await;
    h.wait_condition("Stalled", "False", "NoStop").await;
    h.finish().await;
}
