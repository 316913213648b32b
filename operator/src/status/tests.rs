use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use redoline_crds::capture::CaptureState;
use redoline_crds::v1alpha1::{OracleCaptureStatus, Phase, condition_type as ct};
use serde_json::json;

use super::*;

fn at(s: &str) -> Time {
    Time(s.parse().unwrap())
}

fn t0() -> Time {
    at("2026-11-29T10:00:00Z")
}

fn t1() -> Time {
    at("2026-11-29T10:05:00Z")
}

fn rolled_out() -> WorkloadObservation {
    WorkloadObservation {
        generation: Some(1),
        observed_generation: Some(1),
        replicas: 1,
        updated_replicas: 1,
        current_revision: Some("r1".into()),
        update_revision: Some("r1".into()),
    }
}

fn doctor_passed() -> ContainerObservation {
    ContainerObservation {
        state: ContainerState::Terminated(Terminated {
            exit_code: 0,
            message: None,
        }),
        last_terminated: None,
    }
}

fn stopped(message: &str) -> Terminated {
    Terminated {
        exit_code: 3,
        message: Some(message.into()),
    }
}

fn streaming(lag: f64) -> Observation {
    Observation {
        generation: Some(1),
        sla_max_lag_seconds: Some(120),
        workload: Some(rolled_out()),
        pod: Some(PodObservation {
            doctor: doctor_passed(),
            capture: ContainerObservation {
                state: ContainerState::Running { ready: true },
                last_terminated: None,
            },
        }),
        capture: Some(CaptureReport {
            state: Some(CaptureState::Streaming),
            commit_scn: Some(5000),
            commit_time: None,
            restart_scn: Some(4000),
            lag_seconds: Some(lag),
            snapshot: None,
            reposition: None,
            archived_redo: None,
        }),
        ..Observation::default()
    }
}

/// Streaming with the position's database time on `/status`.
fn streaming_at(lag: f64, commit_time: &str) -> Observation {
    let mut observation = streaming(lag);
    if let Some(report) = observation.capture.as_mut() {
        report.commit_time = Some(at(commit_time));
    }
    observation
}

/// The same capture after `stop` ended its container: no `/status` any more.
fn stopped_with(observation: &Observation, stop: &str) -> Observation {
    let mut observation = observation.clone();
    observation.capture = None;
    if let Some(pod) = observation.pod.as_mut() {
        pod.capture.state = ContainerState::Terminated(stopped(stop));
    }
    observation
}

const SPILL_STOP: &str = r#"{"code":"CDC-4001","reason":"SpillCapacityExceeded","message":"spill cap of 10Gi exceeded","at":"2026-11-29T09:59:00Z","details":{"transactions":[{"xid":"0a001b00c2030000","user":"BATCH","firstScn":1200,"events":5000000,"heapBytes":1024,"diskBytes":10737418240}]}}"#;
const DOCTOR_STOP: &str = r#"{"code":"CDC-1002","reason":"PrerequisitesNotMet","message":"1 of 4 checks failed","at":"2026-11-29T09:59:00Z","details":{"checks":[{"name":"supplemental_logging","ok":false,"message":"minimal supplemental logging is off","fix":"ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;"}]}}"#;
const RELEASED_STOP: &str = r#"{"code":"CDC-7001","reason":"ReleasedTransactionCommitted","message":"COMMIT of released transaction 0a001b00c2030000 at SCN 9000","at":"2026-11-29T09:59:00Z"}"#;

fn cond<'a>(status: &'a OracleCaptureStatus, type_: &str) -> &'a Condition {
    status
        .condition(type_)
        .unwrap_or_else(|| panic!("no {type_}"))
}

#[test]
fn first_visit_sets_every_condition_with_the_generation() {
    let observation = Observation {
        generation: Some(3),
        ..Observation::default()
    };
    let (status, events) = compute(&observation, None, &t0());
    assert_eq!(status.observed_generation, Some(3));
    let types: Vec<&str> = status.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(
        types,
        [
            ct::READY,
            ct::PREREQUISITES_MET,
            ct::STALLED,
            ct::RECONCILING
        ]
    );
    assert!(
        status
            .conditions
            .iter()
            .all(|c| c.observed_generation == Some(3))
    );
    assert_eq!(cond(&status, ct::READY).status, "False");
    assert_eq!(cond(&status, ct::PREREQUISITES_MET).status, "Unknown");
    assert_eq!(cond(&status, ct::STALLED).status, "False");
    assert_eq!(cond(&status, ct::RECONCILING).reason, "Creating");
    assert_eq!(status.phase, Some(Phase::Pending));
    assert!(events.is_empty(), "{events:?}");
}

#[test]
fn streaming_within_the_sla_is_ready() {
    let (status, _) = compute(&streaming(12.0), None, &t0());
    assert_eq!(cond(&status, ct::READY).status, "True");
    assert_eq!(cond(&status, ct::READY).reason, "Streaming");
    assert_eq!(cond(&status, ct::PREREQUISITES_MET).status, "True");
    assert_eq!(cond(&status, ct::RECONCILING).status, "False");
    assert_eq!(cond(&status, ct::LAG_WITHIN_SLA).status, "True");
    assert_eq!(status.lag_seconds, Some(12.0));
    assert_eq!(status.position.as_ref().unwrap().commit_scn, Some(5000));
    assert_eq!(status.phase, Some(Phase::Streaming));
}

#[test]
fn failing_prerequisites_stall_with_the_fix_statements() {
    let mut observation = streaming(1.0);
    observation.capture = None;
    observation.pod = Some(PodObservation {
        doctor: ContainerObservation {
            state: ContainerState::Waiting {
                reason: "CrashLoopBackOff".into(),
            },
            last_terminated: Some(stopped(DOCTOR_STOP)),
        },
        capture: ContainerObservation::default(),
    });
    let (status, events) = compute(&observation, None, &t0());
    let prerequisites = cond(&status, ct::PREREQUISITES_MET);
    assert_eq!(prerequisites.status, "False");
    assert!(
        prerequisites
            .message
            .contains("Fix: ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;")
    );
    let stalled = cond(&status, ct::STALLED);
    assert_eq!(
        (stalled.status.as_str(), stalled.reason.as_str()),
        ("True", "PrerequisitesNotMet")
    );
    assert!(stalled.message.starts_with("CDC-1002: "));
    assert_eq!(status.last_stop.as_ref().unwrap().code, "CDC-1002");
    assert_eq!(status.phase, Some(Phase::Stalled));
    let reasons: Vec<&str> = events.iter().map(|e| e.reason.as_str()).collect();
    // The pod runs the current spec: its first rollout is done, though its doctor fails.
    assert_eq!(reasons, ["PrerequisitesNotMet", "RolledOut"]);
    assert!(events[0].warning && !events[1].warning);
}

#[test]
fn a_spill_stop_names_the_largest_transactions() {
    let (before, _) = compute(&streaming(1.0), None, &t0());
    let mut observation = streaming(1.0);
    observation.capture = None;
    if let Some(pod) = observation.pod.as_mut() {
        pod.capture.state = ContainerState::Terminated(stopped(SPILL_STOP));
    }
    let (status, events) = compute(&observation, Some(&before), &t1());
    let stalled = cond(&status, ct::STALLED);
    assert_eq!(stalled.reason, "SpillCapacityExceeded");
    assert!(
        stalled
            .message
            .starts_with("CDC-4001: spill cap of 10Gi exceeded")
    );
    assert!(stalled.message.contains("xid 0a001b00c2030000 user BATCH"));
    assert_eq!(stalled.last_transition_time, t1());
    let ready = cond(&status, ct::READY);
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "SpillCapacityExceeded")
    );
    let last = status.last_stop.as_ref().unwrap();
    assert_eq!(last.code, "CDC-4001");
    assert_eq!(last.at, at("2026-11-29T09:59:00Z"));
    // The position of the last poll stays visible after the stop.
    assert_eq!(status.position.as_ref().unwrap().commit_scn, Some(5000));
    assert_eq!(
        events,
        [Transition {
            warning: true,
            reason: "SpillCapacityExceeded".into(),
            note: stalled.message.clone(),
        }]
    );
}

#[test]
fn a_different_stop_while_stalled_is_a_new_event() {
    let mut doctor_failed = streaming(1.0);
    doctor_failed.capture = None;
    if let Some(pod) = doctor_failed.pod.as_mut() {
        pod.doctor.state = ContainerState::Terminated(stopped(DOCTOR_STOP));
    }
    let (before, _) = compute(&doctor_failed, None, &t0());
    let mut spill = streaming(1.0);
    spill.capture = None;
    if let Some(pod) = spill.pod.as_mut() {
        pod.capture.state = ContainerState::Terminated(stopped(SPILL_STOP));
    }
    let (after, events) = compute(&spill, Some(&before), &t1());
    let reasons: Vec<&str> = events.iter().map(|e| e.reason.as_str()).collect();
    assert_eq!(reasons, ["SpillCapacityExceeded", "PrerequisitesMet"]);
    // The same stop seen again is no news.
    let (_, again) = compute(&spill, Some(&after), &t1());
    assert!(again.is_empty(), "{again:?}");
}

#[test]
fn a_stop_clears_only_when_a_new_pod_streams_and_last_stop_stays() {
    // Restarted after the stop: running, ready only once it streams again.
    let restarted = |capture: Option<CaptureReport>| {
        let mut observation = streaming(1.0);
        if let Some(pod) = observation.pod.as_mut() {
            pod.capture.last_terminated = Some(stopped(RELEASED_STOP));
            pod.capture.state = ContainerState::Running {
                ready: capture.is_some(),
            };
        }
        observation.capture = capture;
        observation
    };
    let (stalled, _) = compute(&restarted(None), None, &t0());
    assert_eq!(cond(&stalled, ct::STALLED).status, "True");
    assert!(
        cond(&stalled, ct::STALLED)
            .message
            .contains("released transaction 0a001b00c2030000")
    );

    let (cleared, events) = compute(&restarted(streaming(1.0).capture), Some(&stalled), &t1());
    assert_eq!(cond(&cleared, ct::STALLED).status, "False");
    assert_eq!(cond(&cleared, ct::READY).status, "True");
    assert_eq!(cleared.last_stop.as_ref().unwrap().code, "CDC-7001");
    // The Stop column shows only a stop in force.
    assert_eq!(stalled.active_stop.as_deref(), Some("CDC-7001"));
    assert_eq!(cleared.active_stop, None);
    assert!(events.iter().all(|e| !e.warning), "{events:?}");
}

#[test]
fn sla_breach_and_recovery_are_events() {
    let (ok, _) = compute(&streaming(10.0), None, &t0());
    let (breached, events) = compute(&streaming(300.0), Some(&ok), &t1());
    let lag = cond(&breached, ct::LAG_WITHIN_SLA);
    assert_eq!(
        (lag.status.as_str(), lag.reason.as_str()),
        ("False", "LagSLABreached")
    );
    assert_eq!(lag.message, "lag 300.0s exceeds the SLA of 120s");
    assert_eq!(events.len(), 1);
    assert!(events[0].warning && events[0].reason == "LagSLABreached");
    // Ready does not depend on the SLA.
    assert_eq!(cond(&breached, ct::READY).status, "True");

    let (recovered, events) = compute(&streaming(5.0), Some(&breached), &t1());
    assert_eq!(cond(&recovered, ct::LAG_WITHIN_SLA).status, "True");
    assert_eq!(events.len(), 1);
    assert!(!events[0].warning && events[0].reason == "LagSLARecovered");

    let mut unknown = streaming(5.0);
    unknown.capture.as_mut().unwrap().lag_seconds = None;
    let (status, _) = compute(&unknown, Some(&recovered), &t1());
    assert_eq!(cond(&status, ct::LAG_WITHIN_SLA).status, "Unknown");
}

#[test]
fn transition_time_moves_only_on_change() {
    let (first, _) = compute(&streaming(1.0), None, &t0());
    let (second, events) = compute(&streaming(2.0), Some(&first), &t1());
    for c in &second.conditions {
        assert_eq!(c.last_transition_time, t0(), "{} moved", c.type_);
    }
    assert!(events.is_empty());
}

#[test]
fn a_first_status_that_finds_the_first_rollout_done_announces_it() {
    let (status, events) = compute(&streaming(1.0), None, &t0());
    assert_eq!(cond(&status, ct::RECONCILING).reason, "RolledOut");
    assert_eq!(
        events.iter().map(|e| e.reason.as_str()).collect::<Vec<_>>(),
        ["PrerequisitesMet", "RolledOut"]
    );
}

#[test]
fn rollout_is_reconciling_then_rolled_out() {
    let mut rolling = streaming(1.0);
    rolling.generation = Some(2);
    if let Some(w) = rolling.workload.as_mut() {
        w.generation = Some(2);
        w.update_revision = Some("r2".into());
    }
    let (status, _) = compute(&rolling, None, &t0());
    assert_eq!(cond(&status, ct::RECONCILING).status, "True");
    assert_eq!(cond(&status, ct::RECONCILING).reason, "RollingOut");
    assert_eq!(status.observed_generation, Some(2));
    let (done, events) = compute(&streaming(1.0), Some(&status), &t1());
    assert_eq!(cond(&done, ct::RECONCILING).status, "False");
    assert_eq!(
        events.iter().map(|e| e.reason.as_str()).collect::<Vec<_>>(),
        ["RolledOut"]
    );
}

#[test]
fn suspended_is_ready_with_zero_pods() {
    let observation = Observation {
        generation: Some(1),
        suspend: true,
        workload: Some(WorkloadObservation {
            replicas: 0,
            updated_replicas: 0,
            ..rolled_out()
        }),
        ..Observation::default()
    };
    let (status, _) = compute(&observation, None, &t0());
    let ready = cond(&status, ct::READY);
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "Suspended")
    );
    assert_eq!(cond(&status, ct::RECONCILING).status, "False");
    assert_eq!(status.phase, Some(Phase::Suspended));

    // Suspended long after it streamed: a pause on purpose is no SLA breach, which GitOps tools
    // would report as a failure.
    let (streamed, _) = compute(&streaming_at(2.0, "2026-11-29T09:00:00Z"), None, &t0());
    let suspended = Observation {
        sla_max_lag_seconds: Some(120),
        ..observation
    };
    let (status, events) = compute(&suspended, Some(&streamed), &t1());
    let lag = cond(&status, ct::LAG_WITHIN_SLA);
    assert_eq!(
        (lag.status.as_str(), lag.reason.as_str()),
        ("Unknown", "LagUnknown")
    );
    assert!(
        lag.message.starts_with("spec.suspend is true"),
        "{}",
        lag.message
    );
    assert!(events.iter().all(|e| !e.warning), "{events:?}");
}

#[test]
fn a_configuration_problem_stalls() {
    let observation = Observation {
        generation: Some(1),
        configuration_problem: Some(ConfigurationProblem::SecretNotFound(
            "Secret orders-db-cdc (spec.database.credentialsSecret) does not exist".into(),
        )),
        ..Observation::default()
    };
    let (status, events) = compute(&observation, None, &t0());
    assert_eq!(cond(&status, ct::STALLED).reason, "SecretNotFound");
    assert_eq!(cond(&status, ct::READY).reason, "SecretNotFound");
    // Not "in progress" for kstatus, which reads Reconciling before Stalled.
    assert_eq!(cond(&status, ct::RECONCILING).status, "False");
    assert_eq!(events[0].reason, "SecretNotFound");

    // A rollout that a missing Secret blocks did not roll out.
    let rolling = Observation {
        generation: Some(1),
        ..Observation::default()
    };
    let (before, _) = compute(&rolling, None, &t0());
    assert_eq!(cond(&before, ct::RECONCILING).status, "True");
    let (_, events) = compute(&observation, Some(&before), &t1());
    let reasons: Vec<&str> = events.iter().map(|e| e.reason.as_str()).collect();
    assert_eq!(reasons, ["SecretNotFound"]);
}

#[test]
fn reads_containers_from_a_pod() {
    let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
        "metadata": {"name": "orders-capture-0"},
        "status": {
            "initContainerStatuses": [{
                "name": "doctor", "image": "i", "imageID": "", "ready": false, "restartCount": 0,
                "state": {"terminated": {"exitCode": 0}}
            }],
            "containerStatuses": [{
                "name": "capture", "image": "i", "imageID": "", "ready": false, "restartCount": 2,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 3, "message": SPILL_STOP}}
            }]
        }
    }))
    .unwrap();
    let observed = PodObservation::from_pod(&pod);
    assert!(observed.doctor.passed());
    assert_eq!(
        observed.capture.state,
        ContainerState::Waiting {
            reason: "CrashLoopBackOff".into()
        }
    );
    assert_eq!(observed.capture.stop().unwrap().code, "CDC-4001");
}

/// Streaming with `requests` as the capture's `/status` reports them.
fn streaming_with_requests(requests: serde_json::Value) -> Observation {
    let mut observation = streaming(1.0);
    if let Some(report) = observation.capture.as_mut() {
        report.snapshot = Some(serde_json::from_value(json!({"requests": requests})).unwrap());
    }
    observation
}

fn reasons(transitions: &[Transition]) -> Vec<&str> {
    transitions.iter().map(|t| t.reason.as_str()).collect()
}

#[test]
fn incremental_snapshots_are_copied_and_their_changes_are_events() {
    let running = json!([
        {"id": "reread-1", "state": "Running", "startedAt": "2024-01-02T03:04:05Z",
         "tables": [{"table": "APP.ORDERS", "state": "Running", "rowsRead": 1200,
                     "rowsEstimate": 50000}]},
        {"id": "reread-2", "state": "Pending",
         "tables": [{"table": "APP.ITEMS", "state": "Pending", "rowsRead": 0}]}
    ]);
    let (first, events) = compute(&streaming_with_requests(running.clone()), None, &t0());
    assert_eq!(
        serde_json::to_value(&first).unwrap()["snapshot"],
        json!({"requests": running}),
        "copied as reported, without the initial snapshot's figures"
    );
    assert!(reasons(&events).contains(&"SnapshotStarted"));
    assert_eq!(
        reasons(&events)
            .iter()
            .filter(|r| r.starts_with("Snapshot"))
            .count(),
        1,
        "the pending one is not news yet"
    );
    // The same report again: nothing new.
    let (same, events) = compute(&streaming_with_requests(running), Some(&first), &t1());
    assert!(!reasons(&events).iter().any(|r| r.starts_with("Snapshot")));
    // The first done, the second failed at once: four Events, one per change.
    let over = json!([
        {"id": "reread-1", "state": "Done", "finishedAt": "2024-01-02T03:05:05Z",
         "tables": [{"table": "APP.ORDERS", "state": "Done", "rowsRead": 50210}]},
        {"id": "reread-2", "state": "Failed", "message": "ORA-00904: \"NOPE\": invalid identifier",
         "tables": [{"table": "APP.ITEMS", "state": "Failed", "rowsRead": 0}]}
    ]);
    let (done, events) = compute(&streaming_with_requests(over), Some(&same), &t1());
    let snapshot_events: Vec<&Transition> = events
        .iter()
        .filter(|t| t.reason.starts_with("Snapshot"))
        .collect();
    assert_eq!(
        snapshot_events
            .iter()
            .map(|t| t.reason.as_str())
            .collect::<Vec<_>>(),
        ["SnapshotFinished", "SnapshotStarted", "SnapshotFailed"]
    );
    assert!(snapshot_events[0].note.contains("50210 rows of APP.ORDERS"));
    assert!(snapshot_events[2].warning && snapshot_events[2].note.contains("ORA-00904"));
    // A capture restarting (no report yet) keeps the requests shown.
    let mut restarting = streaming(1.0);
    restarting.capture = None;
    let (kept, _) = compute(&restarting, Some(&done), &t1());
    assert_eq!(kept.snapshot, done.snapshot);
    // Removed from the spec while running: cancelled.
    let cancelled = json!([
        {"id": "reread-3", "state": "Cancelled", "finishedAt": "2024-01-02T03:06:05Z",
         "tables": [{"table": "APP.ORDERS", "state": "Cancelled", "rowsRead": 10}]}
    ]);
    let mut previous = done.clone();
    if let Some(snapshot) = previous.snapshot.as_mut() {
        snapshot.requests[0].id = "reread-3".into();
        snapshot.requests[0].state = SnapshotRequestState::Running;
    }
    let (_, events) = compute(&streaming_with_requests(cancelled), Some(&previous), &t1());
    assert_eq!(
        reasons(&events)
            .iter()
            .filter(|r| r.starts_with("Snapshot"))
            .collect::<Vec<_>>(),
        [&"SnapshotCancelled"]
    );
}

#[test]
fn snapshot_progress_is_shown_only_while_snapshotting() {
    let report: CaptureReport = serde_json::from_value(json!({
        "state": "snapshotting", "commitScn": null, "lagSeconds": null, "openTransactions": 0,
        "snapshot": {"tablesTotal": 3, "tablesDone": 1, "rowsScanned": 120000,
                     "rowsRemainingEstimate": 480000}
    }))
    .unwrap();
    let mut observation = streaming(1.0);
    observation.capture = Some(report);
    let (status, _) = compute(&observation, None, &t0());
    assert_eq!(status.phase, Some(Phase::Snapshotting));
    let snapshot = status.snapshot.clone().expect("status.snapshot");
    assert_eq!(snapshot.tables_total, Some(3));
    assert_eq!(snapshot.tables_done, Some(1));
    assert_eq!(snapshot.rows_scanned, Some(120_000));
    assert_eq!(snapshot.rows_remaining_estimate, Some(480_000));
    assert_eq!(
        serde_json::to_value(&status).unwrap()["snapshot"],
        json!({"tablesTotal": 3, "tablesDone": 1, "rowsScanned": 120000,
               "rowsRemainingEstimate": 480000})
    );

    // A partial report keeps what it has.
    let partial: CaptureReport =
        serde_json::from_value(json!({"state": "snapshotting", "snapshot": {"rowsScanned": 5}}))
            .unwrap();
    observation.capture = Some(partial);
    let (status, _) = compute(&observation, Some(&status), &t1());
    let snapshot = status.snapshot.expect("status.snapshot");
    assert_eq!(snapshot.rows_scanned, Some(5));
    assert_eq!(snapshot.tables_total, None);

    // Streaming again: the snapshot is over and its progress leaves the status.
    let (status, _) = compute(&streaming(1.0), None, &t1());
    assert_eq!(status.phase, Some(Phase::Streaming));
    assert_eq!(status.snapshot, None);
    assert!(
        serde_json::to_value(&status)
            .unwrap()
            .get("snapshot")
            .is_none()
    );
}

#[test]
fn a_reposition_decision_is_kept_in_the_status_with_one_event() {
    let report =
        |json: serde_json::Value| -> CaptureReport { serde_json::from_value(json).unwrap() };
    let mut observation = streaming(1.0);
    observation.capture = Some(report(json!({
        "state": "streaming", "commitScn": 5000,
        "reposition": {"id": "restore-1", "scn": 4000, "state": "Refused",
                       "at": "2026-11-29T10:00:00Z",
                       "message": "the redo for SCN 4000 is gone: the oldest SCN still available is 4500"}
    })));
    let (refused, events) = compute(&observation, None, &t0());
    let kept = refused.reposition.clone().expect("status.reposition");
    assert_eq!(kept.state, RepositionState::Refused);
    let event = events
        .iter()
        .find(|e| e.reason == "RepositionRefused")
        .expect("a RepositionRefused Event");
    assert!(event.warning);
    assert!(
        event.note.contains("SCN 4000") && event.note.contains("4500"),
        "{}",
        event.note
    );

    // The same decision reported again is no news; the capture gone, the status keeps it.
    let (again, events) = compute(&observation, Some(&refused), &t1());
    assert!(events.iter().all(|e| !e.reason.starts_with("Reposition")));
    let gone = stopped_with(&observation, SPILL_STOP);
    let (after, _) = compute(&gone, Some(&again), &t1());
    assert_eq!(after.reposition, Some(kept));

    // A new id applied: a Normal Event; a later run's report of it keeps the first message.
    observation.capture = Some(report(json!({
        "state": "streaming", "commitScn": 4500,
        "reposition": {"id": "restore-2", "scn": 4600, "state": "Applied",
                       "message": "moved from commit SCN 5000 (restart SCN 4000) to SCN 4600"}
    })));
    let (applied, events) = compute(&observation, Some(&after), &t1());
    assert!(
        events
            .iter()
            .any(|e| e.reason == "RepositionApplied" && !e.warning)
    );
    observation.capture = Some(report(json!({
        "state": "streaming", "commitScn": 4700,
        "reposition": {"id": "restore-2", "scn": 4600, "state": "Applied",
                       "message": "applied by an earlier run (the bookmark records this id)"}
    })));
    let (later, _) = compute(&observation, Some(&applied), &t1());
    assert_eq!(
        later.reposition.and_then(|r| r.message).as_deref(),
        Some("moved from commit SCN 5000 (restart SCN 4000) to SCN 4600")
    );
}

/// The capture's archived-redo figures are copied while it reports; once it stops reporting,
/// the last ones stay with the hours left counted down to `deletableFrom` on the operator's
/// clock (never below 0), and a figure without a deadline stays as it was.
#[test]
fn archived_redo_is_copied_and_counted_down_while_the_capture_does_not_report() {
    let report =
        |json: serde_json::Value| -> CaptureReport { serde_json::from_value(json).unwrap() };
    let mut observation = streaming(1.0);
    observation.capture = Some(report(json!({
        "state": "streaming", "commitScn": 5000,
        "archivedRedo": {"retentionHours": 24, "hoursLeft": 2.0,
                         "deletableFrom": "2026-11-29T12:00:00Z",
                         "oldestNeeded": {"thread": 1, "sequence": 7,
                                          "completedAt": "2026-11-28T12:00:00Z"}}
    })));
    let (reported, _) = compute(&observation, None, &t0());
    let copied = reported.archived_redo.clone().expect("status.archivedRedo");
    assert_eq!(copied.hours_left, Some(2.0));
    assert_eq!(copied.oldest_needed.as_ref().map(|l| l.sequence), Some(7));

    // The capture stopped: five minutes later, 1 h 55 min are left; after the deadline, none.
    let gone = stopped_with(&observation, SPILL_STOP);
    let (later, _) = compute(&gone, Some(&reported), &t1());
    let left = later.archived_redo.as_ref().and_then(|r| r.hours_left);
    assert!(
        left.is_some_and(|h| (h - (2.0 - 5.0 / 60.0)).abs() < 1e-9),
        "{left:?}"
    );
    assert_eq!(
        later.archived_redo.as_ref().map(|r| &r.oldest_needed),
        Some(&copied.oldest_needed)
    );
    let (past, _) = compute(&gone, Some(&later), &at("2026-11-29T13:00:00Z"));
    assert_eq!(past.archived_redo.and_then(|r| r.hours_left), Some(0.0));

    // Unknown hours (no retention declared) stay unknown.
    observation.capture = Some(report(json!({
        "state": "streaming", "commitScn": 5000,
        "archivedRedo": {"oldestNeeded": {"thread": 1, "sequence": 7}}
    })));
    let (undeclared, _) = compute(&observation, None, &t0());
    let (kept, _) = compute(&gone, Some(&undeclared), &t1());
    assert_eq!(kept.archived_redo, undeclared.archived_redo);
    assert_eq!(kept.archived_redo.and_then(|r| r.hours_left), None);
}

#[test]
fn an_unanswered_status_falls_back_to_the_pods_readiness() {
    let (answered, _) = compute(&streaming(1.0), None, &t0());
    let mut unanswered = streaming(1.0);
    unanswered.capture = None;
    unanswered.status_unanswered = Some(Unanswered {
        polls: 3,
        error: "10.0.0.7:8080: no answer within 3s".into(),
    });
    let (status, events) = compute(&unanswered, Some(&answered), &t1());
    let ready = cond(&status, ct::READY);
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "Streaming")
    );
    assert!(
        ready
            .message
            .contains("has not answered the last 3 polls (10.0.0.7:8080: no answer"),
        "{}",
        ready.message
    );
    // Ready holds: no transition time moves, no Event from the status module.
    assert_eq!(ready.last_transition_time, t0());
    let lag = cond(&status, ct::LAG_WITHIN_SLA);
    assert_eq!(lag.status, "Unknown");
    assert!(lag.message.contains("NetworkPolicy"), "{}", lag.message);
    assert_eq!(status.lag_seconds, None);
    assert_eq!(status.phase, Some(Phase::Streaming));
    assert!(events.is_empty(), "{events:?}");

    // Not ready and no answer: still starting, and the message says why nothing is known.
    if let Some(pod) = unanswered.pod.as_mut() {
        pod.capture.state = ContainerState::Running { ready: false };
    }
    let (starting, _) = compute(&unanswered, None, &t1());
    let ready = cond(&starting, ct::READY);
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "Starting")
    );
    assert!(
        ready.message.contains("has not answered"),
        "{}",
        ready.message
    );
}

#[test]
fn a_stop_during_a_rollout_blocks_reconciling_so_gitops_tools_report_the_failure() {
    let mut observation = streaming(1.0);
    observation.generation = Some(2);
    observation.capture = None;
    if let Some(w) = observation.workload.as_mut() {
        w.generation = Some(2);
        w.update_revision = Some("r2".into());
    }
    if let Some(pod) = observation.pod.as_mut() {
        pod.capture.state = ContainerState::Terminated(stopped(SPILL_STOP));
    }
    let (status, _) = compute(&observation, None, &t0());
    assert_eq!(cond(&status, ct::STALLED).status, "True");
    let reconciling = cond(&status, ct::RECONCILING);
    assert_eq!(
        (reconciling.status.as_str(), reconciling.reason.as_str()),
        ("False", "Blocked")
    );
    assert_eq!(status.active_stop.as_deref(), Some("CDC-4001"));
}

#[test]
fn lasting_reconcile_failures_stall_with_the_current_generation() {
    let (stored, _) = compute(&streaming(1.0), None, &t0());
    let status = failing(
        Some(&stored),
        Some(2),
        "ApplyFailed",
        "applying the StatefulSet: admission webhook denied the request",
        &t1(),
    );
    assert_eq!(status.observed_generation, Some(2));
    assert_eq!(status.phase, Some(Phase::Stalled));
    for (type_, value) in [
        (ct::READY, "False"),
        (ct::STALLED, "True"),
        (ct::RECONCILING, "False"),
    ] {
        let c = cond(&status, type_);
        assert_eq!(
            (c.status.as_str(), c.reason.as_str()),
            (value, "ApplyFailed"),
            "{type_}"
        );
        assert_eq!(c.observed_generation, Some(2), "{type_}");
        assert!(
            c.message.contains("admission webhook denied"),
            "{}",
            c.message
        );
    }
    // Reconciling was False already: its transition time stays.
    assert_eq!(cond(&status, ct::RECONCILING).last_transition_time, t0());
    assert_eq!(cond(&status, ct::READY).last_transition_time, t1());
    // What was accepted before stays.
    assert_eq!(status.position, stored.position);
    assert_eq!(
        cond(&status, ct::PREREQUISITES_MET),
        cond(&stored, ct::PREREQUISITES_MET)
    );

    // The first status of an object that never got one.
    let first = failing(None, Some(1), "ResizeFailed", "forbidden", &t1());
    assert_eq!(first.conditions.len(), 3);
    assert_eq!(first.observed_generation, Some(1));
}

#[test]
fn a_stalled_capture_is_judged_by_the_time_of_its_last_position() {
    // Streamed at 09:59:40 (the position's database time), stopped; now is 10:05, the SLA 120 s.
    let (before, _) = compute(&streaming_at(2.0, "2026-11-29T09:59:40Z"), None, &t0());
    assert_eq!(
        before.position.as_ref().and_then(|p| p.commit_time.clone()),
        Some(at("2026-11-29T09:59:40Z"))
    );
    let stalled = stopped_with(&streaming_at(2.0, "2026-11-29T09:59:40Z"), SPILL_STOP);
    let (status, events) = compute(&stalled, Some(&before), &t1());
    let lag = cond(&status, ct::LAG_WITHIN_SLA);
    assert_eq!(
        (lag.status.as_str(), lag.reason.as_str()),
        ("False", "LagSLABreached")
    );
    assert_eq!(
        lag.message,
        "no capture is streaming; estimated from the last stored position at \
         2026-11-29T09:59:40Z: the lag has exceeded the SLA of 120s since 2026-11-29T10:01:40Z"
    );
    // Looked at again a little later: nothing new to write (every write triggers a reconcile).
    let (again, events_again) = compute(&stalled, Some(&status), &at("2026-11-29T10:05:07Z"));
    assert_eq!(again, status);
    assert!(events_again.is_empty(), "{events_again:?}");
    // `lagSeconds` is only ever the live figure.
    assert_eq!(status.lag_seconds, None);
    assert!(
        events
            .iter()
            .any(|e| e.warning && e.reason == "LagSLABreached" && e.note == lag.message),
        "{events:?}"
    );

    // Stopped a minute ago: still within the SLA, and said to be an estimate.
    let (recent, _) = compute(&stalled, Some(&before), &at("2026-11-29T10:00:40Z"));
    let lag = cond(&recent, ct::LAG_WITHIN_SLA);
    assert_eq!(
        (lag.status.as_str(), lag.reason.as_str()),
        ("True", "LagWithinSLA")
    );
    assert!(
        lag.message
            .ends_with("estimated from the last stored position at 2026-11-29T09:59:40Z: the lag is within the SLA of 120s until 2026-11-29T10:01:40Z"),
        "{}",
        lag.message
    );
}

#[test]
fn a_crash_looping_capture_keeps_its_last_position_and_is_estimated() {
    let (before, _) = compute(&streaming_at(2.0, "2026-11-29T09:59:40Z"), None, &t0());
    // Restarted after a crash (no typed stop): running, not ready, `/status` says starting and
    // has not read its bookmark yet.
    let mut restarting = streaming(1.0);
    if let Some(pod) = restarting.pod.as_mut() {
        pod.capture.state = ContainerState::Running { ready: false };
    }
    restarting.capture = Some(CaptureReport {
        state: Some(CaptureState::Starting),
        ..CaptureReport::default()
    });
    let (status, _) = compute(&restarting, Some(&before), &t1());
    assert_eq!(status.position, before.position, "the last position stays");
    let lag = cond(&status, ct::LAG_WITHIN_SLA);
    assert_eq!(
        (lag.status.as_str(), lag.reason.as_str()),
        ("False", "LagSLABreached")
    );
    // It read its bookmark (an older redoline's: no time): same commit SCN, the time stays.
    restarting.capture = Some(CaptureReport {
        state: Some(CaptureState::Starting),
        commit_scn: Some(5000),
        restart_scn: Some(4000),
        ..CaptureReport::default()
    });
    let (status, _) = compute(&restarting, Some(&before), &t1());
    assert_eq!(
        status.position.and_then(|p| p.commit_time),
        Some(at("2026-11-29T09:59:40Z"))
    );
}

#[test]
fn a_capture_that_never_streamed_has_no_lag_to_estimate() {
    let mut never = streaming(1.0);
    never.capture = None;
    if let Some(pod) = never.pod.as_mut() {
        pod.capture.state = ContainerState::Waiting {
            reason: "CrashLoopBackOff".into(),
        };
    }
    let (status, _) = compute(&never, None, &t1());
    let lag = cond(&status, ct::LAG_WITHIN_SLA);
    assert_eq!(
        (lag.status.as_str(), lag.reason.as_str()),
        ("Unknown", "LagUnknown")
    );
    assert!(
        lag.message
            .contains("has not streamed since this OracleCapture was created"),
        "{}",
        lag.message
    );
    // A position an older capture reported without its time: nothing to estimate from, and the
    // message says why.
    let (streamed, _) = compute(&streaming(1.0), None, &t0());
    let (status, _) = compute(
        &stopped_with(&streaming(1.0), SPILL_STOP),
        Some(&streamed),
        &t1(),
    );
    let lag = cond(&status, ct::LAG_WITHIN_SLA);
    assert_eq!(lag.status, "Unknown");
    assert!(
        lag.message
            .contains("the last position (commit SCN 5000) came without its time"),
        "{}",
        lag.message
    );
}

#[test]
fn a_typed_stop_names_the_position_it_stopped_at() {
    // Polled at commit SCN 5000 (09:59:40); it went on to 5100 (10:00:30) and stopped there.
    let (before, _) = compute(&streaming_at(2.0, "2026-11-29T09:59:40Z"), None, &t0());
    let stop = r#"{"code":"CDC-6001","reason":"UnsupportedChange","message":"m","at":"2026-11-29T10:00:31Z","details":{"position":{"commitScn":5100,"restartScn":5050,"commitTime":"2026-11-29T10:00:30Z"}}}"#;
    let stalled = stopped_with(&streaming(1.0), stop);
    let (status, _) = compute(&stalled, Some(&before), &t1());
    let position = status.position.clone().unwrap();
    assert_eq!(
        (position.commit_scn, position.commit_time),
        (Some(5100), Some(at("2026-11-29T10:00:30Z")))
    );
    assert!(
        cond(&status, ct::LAG_WITHIN_SLA)
            .message
            .contains("at 2026-11-29T10:00:30Z: the lag has exceeded the SLA of 120s since 2026-11-29T10:02:30Z"),
        "{}",
        cond(&status, ct::LAG_WITHIN_SLA).message
    );

    // Restarted, it streamed on to 5200, then crashed without a typed stop: the old stop in the
    // container's last state does not take the position back.
    let (streamed, _) = compute(
        &streaming_at(2.0, "2026-11-29T10:03:00Z"),
        Some(&status),
        &t1(),
    );
    let mut crashed = streaming(1.0);
    crashed.capture = None;
    if let Some(pod) = crashed.pod.as_mut() {
        pod.capture.state = ContainerState::Waiting {
            reason: "CrashLoopBackOff".into(),
        };
        pod.capture.last_terminated = Some(stopped(stop));
    }
    let mut newer = streamed.clone();
    if let Some(position) = newer.position.as_mut() {
        position.commit_scn = Some(5200);
    }
    let (after, _) = compute(&crashed, Some(&newer), &t1());
    assert_eq!(after.position.and_then(|p| p.commit_scn), Some(5200));
}
