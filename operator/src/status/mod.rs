//! Status: what the operator observed, turned into `OracleCapture.status` and Events.
//!
//! [`compute`] is a pure function of an [`Observation`] (the StatefulSet's rollout, the capture
//! pod's containers with their termination messages, the capture's `/status` answer), the previous
//! status and the current time. It writes the conditions of the contracts:
//!
//! | condition | True when | False / Unknown |
//! |---|---|---|
//! | `Ready` | streaming with a ready pod, or suspended (the desired zero pods are reached) | starting, snapshotting, stalled |
//! | `PrerequisitesMet` | the doctor init container passed | it reported CDC-1002 (message lists each failing check and its fix); Unknown before it ran |
//! | `Stalled` | a typed stop (or a configuration problem) needs a person; reason = stop reason, message starts with the code | none, or a new pod streams again |
//! | `Reconciling` | the StatefulSet is being created or rolled out | rolled out, or `Blocked` by a configuration problem (kstatus then reports the failure) |
//! | `LagWithinSLA` | only with `spec.sla`: lag ≤ maxLagSeconds, live or, while no capture streams, estimated from the stored position's time ([`lag`]) | `LagSLABreached`, or Unknown while no lag is known |
//!
//! Every condition carries `observedGeneration`; `lastTransitionTime` moves only when the status
//! value changes. [`Transition`]s say which changes deserve an Event.

mod conditions;
mod lag;
mod mounts;
mod observation;
mod polls;
mod termination;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use redoline_crds::capture::CaptureState;
use redoline_crds::v1alpha1::{
    ArchivedRedoStatus, LastStop, OracleCaptureStatus, Phase, Position, RepositionState,
    RepositionStatus, SnapshotProgress, SnapshotRequestState, condition_type as ct,
};

use conditions::{Facts, activity, condition_now};

pub use mounts::mount_problem;
pub use observation::{
    CaptureReport, ConfigurationProblem, ContainerObservation, ContainerState, Observation,
    PodObservation, Terminated, WorkloadObservation,
};
pub use polls::{KEPT_FOR_FAILED_POLLS, StatusPolls, Unanswered};
pub use termination::{FailedCheck, StopReport};

/// A change worth an Event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    pub warning: bool,
    pub reason: String,
    pub note: String,
}

const TRUE: &str = "True";
const FALSE: &str = "False";
const UNKNOWN: &str = "Unknown";

/// The new status and the Events it calls for.
pub fn compute(
    observation: &Observation,
    previous: Option<&OracleCaptureStatus>,
    now: &Time,
) -> (OracleCaptureStatus, Vec<Transition>) {
    let facts = Facts::of(observation, previous, now);
    let stalled = facts.stalled();
    let position = position(observation, previous, facts.stopped_at());
    // Only the live figure is `status.lagSeconds`; the estimate is in the condition alone.
    let lag_seconds = observation.capture.as_ref().and_then(|c| c.lag_seconds);
    let lag = facts.lag_within_sla(lag_seconds, position.as_ref());
    let phase = facts.phase(&stalled);
    let ready = facts.ready(&stalled);
    let reconciling = facts.reconciling(&stalled);
    let mut conditions = vec![ready, facts.prerequisites_met(), stalled, reconciling];
    conditions.extend(lag);
    let status = OracleCaptureStatus {
        observed_generation: observation.generation,
        conditions,
        phase: Some(phase),
        position,
        lag_seconds,
        last_stop: last_stop(facts.stop(), previous, now),
        active_stop: facts.active_stop(),
        snapshot: snapshot_status(observation, previous, phase),
        reposition: reposition(observation, previous),
        archived_redo: archived_redo(observation, previous, now),
    };
    let transitions = transitions(previous, &status);
    (status, transitions)
}

/// `status.position`: the position the capture reports; one that has not read its bookmark yet
/// (a restarted container starting up) reports none. Without a report, the furthest of the last
/// known one and `stopped_at`, the one the capture's typed stop names (where it stood when it
/// stopped, which may be past the last poll). Its time stays while a position of the same
/// commit SCN comes without one.
fn position(
    observation: &Observation,
    previous: Option<&OracleCaptureStatus>,
    stopped_at: Option<Position>,
) -> Option<Position> {
    let previous_position = previous.and_then(|p| p.position.as_ref());
    let reported = observation
        .capture
        .as_ref()
        .filter(|c| c.commit_scn.is_some())
        .map(|c| Position {
            commit_scn: c.commit_scn,
            restart_scn: c.restart_scn,
            commit_time: c.commit_time.clone(),
        });
    reported
        .or_else(|| {
            stopped_at
                .into_iter()
                .chain(previous_position.cloned())
                .max_by_key(|p| p.commit_scn)
        })
        .map(|mut position| {
            if position.commit_time.is_none() {
                position.commit_time = previous_position
                    .filter(|p| p.commit_scn == position.commit_scn)
                    .and_then(|p| p.commit_time.clone());
            }
            position
        })
}

/// `status.lastStop`: the stop in force, else the latest one stored.
fn last_stop(
    stop: Option<&StopReport>,
    previous: Option<&OracleCaptureStatus>,
    now: &Time,
) -> Option<LastStop> {
    stop.map(|s| LastStop {
        code: s.code.clone(),
        reason: s.reason.clone(),
        message: s.message.clone(),
        at: s
            .at
            .as_deref()
            .and_then(|at| at.parse().ok())
            .map(Time)
            .unwrap_or_else(|| now.clone()),
    })
    .or_else(|| previous.and_then(|p| p.last_stop.clone()))
}

/// `status.reposition`: what the capture decided about spec.reposition. A later run reports an
/// applied id again without the time and message of the move: the status keeps the first report
/// of a decision, and keeps the last one while no capture reports.
fn reposition(
    observation: &Observation,
    previous: Option<&OracleCaptureStatus>,
) -> Option<RepositionStatus> {
    let previous_reposition = previous.and_then(|p| p.reposition.as_ref());
    match observation
        .capture
        .as_ref()
        .and_then(|c| c.reposition.as_ref())
    {
        Some(reported) => match previous_reposition {
            Some(known) if known.id == reported.id && known.state == reported.state => {
                Some(known.clone())
            }
            _ => Some(reported.clone()),
        },
        None => previous_reposition.cloned(),
    }
}

/// `status.archivedRedo`: the capture's figures while it reports, else the last ones reported
/// with the hours left counted down to `deletableFrom` on the operator's clock: a capture that
/// does not run does not move its restart SCN, so the logs it needs only age.
fn archived_redo(
    observation: &Observation,
    previous: Option<&OracleCaptureStatus>,
    now: &Time,
) -> Option<ArchivedRedoStatus> {
    match observation
        .capture
        .as_ref()
        .and_then(|c| c.archived_redo.clone())
    {
        Some(reported) => Some(reported),
        None => previous
            .and_then(|p| p.archived_redo.clone())
            .map(|kept| archived_redo_at(kept, now)),
    }
}

/// `kept` with its hours left counted again at `now` from `deletableFrom` (unchanged without
/// it: unknown stays unknown, and a restart SCN in online logs keeps the full retention).
fn archived_redo_at(mut kept: ArchivedRedoStatus, now: &Time) -> ArchivedRedoStatus {
    if let Some(deletable_from) = &kept.deletable_from {
        let seconds = deletable_from.0.duration_since(now.0).as_secs_f64();
        kept.hours_left = Some((seconds / 3600.0).max(0.0));
    }
    kept
}

/// While no capture streams and the estimated lag is still within the SLA: how long until it
/// crosses it. Nothing else makes the operator look again before its resync (a stopped capture
/// has no `/status` to poll), so the reconcile comes back then, and `LagWithinSLA` turns False
/// when the SLA is breached rather than minutes later.
pub fn lag_breach_in(
    observation: &Observation,
    status: &OracleCaptureStatus,
    now: &Time,
) -> Option<std::time::Duration> {
    let max = observation.sla_max_lag_seconds?;
    lag::judge(
        now,
        status.lag_seconds,
        activity(observation),
        status.position.as_ref(),
    )
    .estimate_breached_in(max)
}

/// The status of a capture whose reconciles keep failing (an API call refused for good: a
/// lasting 403, a rejecting webhook, a status the CRD refuses): the stored status with `Ready`
/// False, `Stalled` True and `Reconciling` False, each with the failure's `reason`, its message
/// and the generation it was for, so that the object does not keep a stale `observedGeneration`
/// and GitOps tools report the failure. The other fields stay as stored: they were accepted.
pub fn failing(
    stored: Option<&OracleCaptureStatus>,
    generation: Option<i64>,
    reason: &str,
    message: &str,
    now: &Time,
) -> OracleCaptureStatus {
    let mut status = stored.cloned().unwrap_or_default();
    let message = format!(
        "reconciling keeps failing: {message}; the operator retries with backoff (see its Events)"
    );
    for (type_, value) in [
        (ct::READY, FALSE),
        (ct::STALLED, TRUE),
        (ct::RECONCILING, FALSE),
    ] {
        let condition = condition_now(
            Some(&status),
            type_,
            value,
            reason,
            message.clone(),
            generation,
            now,
        );
        match status.conditions.iter_mut().find(|c| c.type_ == type_) {
            Some(existing) => *existing = condition,
            None => status.conditions.push(condition),
        }
    }
    status.observed_generation = generation;
    status.phase = Some(Phase::Stalled);
    status
}

/// Events for conditions that changed status since `previous`.
fn transitions(
    previous: Option<&OracleCaptureStatus>,
    status: &OracleCaptureStatus,
) -> Vec<Transition> {
    let changed = |type_: &str| {
        let now = status.condition(type_)?;
        let before = previous.and_then(|p| p.condition(type_));
        (before.map(|b| b.status.as_str()) != Some(now.status.as_str())).then_some(now)
    };
    let mut events = Vec::new();
    let mut push = |warning: bool, reason: &str, note: &str| {
        // A failed doctor stalls with the same reason: one Event says it.
        if events.iter().any(|e: &Transition| e.reason == reason) {
            return;
        }
        events.push(Transition {
            warning,
            reason: reason.to_owned(),
            note: note.to_owned(),
        })
    };
    // A stall is news when it starts, and when a different stop replaces the one reported.
    let stalled_anew = status.condition(ct::STALLED).filter(|c| {
        c.status == TRUE
            && previous
                .and_then(|p| p.condition(ct::STALLED))
                .is_none_or(|b| b.status != TRUE || b.reason != c.reason)
    });
    if let Some(c) = stalled_anew {
        push(true, &c.reason, &c.message);
    }
    if let Some(c) = changed(ct::PREREQUISITES_MET) {
        match c.status.as_str() {
            FALSE => push(true, "PrerequisitesNotMet", &c.message),
            TRUE => push(false, "PrerequisitesMet", &c.message),
            _ => {}
        }
    }
    if let Some(c) = changed(ct::LAG_WITHIN_SLA) {
        match c.status.as_str() {
            FALSE => push(true, "LagSLABreached", &c.message),
            TRUE if previous
                .and_then(|p| p.condition(ct::LAG_WITHIN_SLA))
                .is_some_and(|b| b.status == FALSE) =>
            {
                push(false, "LagSLARecovered", &c.message)
            }
            _ => {}
        }
    }
    // A rollout finished: Reconciling went from True, or from Blocked (a rollout held by a stop),
    // to RolledOut; or the first status finds the first rollout done already (a busy operator's
    // first look can come after the StatefulSet controller has created the pod).
    let was_rolling_out = previous.is_none_or(|p| {
        p.condition(ct::RECONCILING)
            .is_some_and(|c| c.status == TRUE || c.reason == "Blocked")
    });
    let rolled_out = status
        .condition(ct::RECONCILING)
        .is_some_and(|c| c.status == FALSE && c.reason == "RolledOut");
    if was_rolling_out && rolled_out {
        push(false, "RolledOut", "the capture pod runs the current spec");
    }
    let decided_anew = status.reposition.as_ref().filter(|now| {
        previous
            .and_then(|p| p.reposition.as_ref())
            .is_none_or(|before| before.id != now.id || before.state != now.state)
    });
    if let Some(reposition) = decided_anew {
        let (warning, reason) = match reposition.state {
            RepositionState::Applied => (false, "RepositionApplied"),
            RepositionState::Refused => (true, "RepositionRefused"),
        };
        let note = format!(
            "spec.reposition {} (SCN {}): {}",
            reposition.id,
            reposition.scn,
            reposition.message.as_deref().unwrap_or("")
        );
        push(warning, reason, &note);
    }
    events.extend(snapshot_transitions(previous, status));
    events
}

/// `status.snapshot`: the initial snapshot's figures only while snapshotting (a finished
/// snapshot's numbers would read as work still going on), and the incremental snapshots as the
/// capture reports them. A capture that does not stream yet (starting, restarting on a new
/// spec) reports none: the last known ones stay until it does.
fn snapshot_status(
    observation: &Observation,
    previous: Option<&OracleCaptureStatus>,
    phase: Phase,
) -> Option<SnapshotProgress> {
    let reported = observation.capture.as_ref();
    let initial = reported
        .filter(|_| phase == Phase::Snapshotting)
        .and_then(|c| c.snapshot.clone())
        .map(|snapshot| SnapshotProgress {
            requests: Vec::new(),
            ..snapshot
        });
    let requests = match reported {
        Some(capture) if capture.state == Some(CaptureState::Streaming) => capture
            .snapshot
            .as_ref()
            .map(|s| s.requests.clone())
            .unwrap_or_default(),
        _ => previous
            .and_then(|p| p.snapshot.as_ref())
            .map(|s| s.requests.clone())
            .unwrap_or_default(),
    };
    match initial {
        Some(initial) => Some(SnapshotProgress {
            requests,
            ..initial
        }),
        None if requests.is_empty() => None,
        None => Some(SnapshotProgress {
            requests,
            ..SnapshotProgress::default()
        }),
    }
}

/// Events for incremental snapshots that changed state: `SnapshotStarted` when one is first
/// seen running (or already over), then `SnapshotFinished`, `SnapshotFailed` (a Warning, with
/// the capture's message) or `SnapshotCancelled`. One Event per request and change, so two
/// requests finishing at once are two Events.
fn snapshot_transitions(
    previous: Option<&OracleCaptureStatus>,
    status: &OracleCaptureStatus,
) -> Vec<Transition> {
    let requests = |s: Option<&OracleCaptureStatus>| {
        s.and_then(|s| s.snapshot.as_ref())
            .map(|s| s.requests.clone())
            .unwrap_or_default()
    };
    let before = requests(previous);
    let mut events = Vec::new();
    for request in requests(Some(status)) {
        let was = before.iter().find(|b| b.id == request.id).map(|b| b.state);
        if was == Some(request.state) {
            continue;
        }
        let tables = request
            .tables
            .iter()
            .map(|t| t.table.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let rows: u64 = request.tables.iter().map(|t| t.rows_read).sum();
        let started = matches!(was, None | Some(SnapshotRequestState::Pending))
            && request.state != SnapshotRequestState::Pending
            && request.state != SnapshotRequestState::Cancelled;
        if started {
            events.push(Transition {
                warning: false,
                reason: "SnapshotStarted".into(),
                note: format!("incremental snapshot {} reads {tables}", request.id),
            });
        }
        let (warning, reason, note) = match request.state {
            SnapshotRequestState::Done => (
                false,
                "SnapshotFinished",
                format!(
                    "incremental snapshot {} read {rows} rows of {tables}",
                    request.id
                ),
            ),
            SnapshotRequestState::Failed => (
                true,
                "SnapshotFailed",
                format!(
                    "incremental snapshot {} failed: {}",
                    request.id,
                    request.message.as_deref().unwrap_or("no reason given")
                ),
            ),
            SnapshotRequestState::Cancelled => (
                false,
                "SnapshotCancelled",
                format!(
                    "incremental snapshot {} was removed from the spec after {rows} rows",
                    request.id
                ),
            ),
            SnapshotRequestState::Pending | SnapshotRequestState::Running => continue,
        };
        events.push(Transition {
            warning,
            reason: reason.into(),
            note,
        });
    }
    events
}

#[cfg(test)]
mod tests;
