//! The conditions of `OracleCapture.status`, one function each (the table in the module docs of
//! [`super`] says what each means): every function reads the [`Facts`] of one observation and
//! builds its condition, the way Stackable's operators give each condition its own builder.
//! `status.phase` and `status.activeStop`, summaries of the same facts, are read here too.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use redoline_crds::capture::CaptureState;
use redoline_crds::v1alpha1::{OracleCaptureStatus, Phase, Position, condition_type as ct};

use super::observation::{Observation, WorkloadObservation};
use super::termination::StopReport;
use super::{FALSE, TRUE, UNKNOWN, lag};

/// What the conditions are judged from: one observation, what follows from it, and the previous
/// status whose transition times a condition keeps while its value holds.
pub(super) struct Facts<'a> {
    observation: &'a Observation,
    previous: Option<&'a OracleCaptureStatus>,
    now: &'a Time,
    /// The stop the doctor init container reported: a failed prerequisite.
    doctor_stop: Option<StopReport>,
    /// The stop in force, the doctor's or the capture's. It stays until a new pod streams again
    /// (a configuration problem is not a stop: it stays until it is fixed).
    stop: Option<StopReport>,
    /// Where the capture's typed stop says it stood, stop in force or not (an older stop stays
    /// in the pod's last state after the capture went on).
    stopped_at: Option<Position>,
    streaming: bool,
    snapshotting: bool,
}

impl<'a> Facts<'a> {
    pub(super) fn of(
        observation: &'a Observation,
        previous: Option<&'a OracleCaptureStatus>,
        now: &'a Time,
    ) -> Self {
        let pod = observation.pod.as_ref();
        let doctor_stop = pod.and_then(|p| p.doctor.stop());
        let capture_stop = pod.and_then(|p| p.capture.stop());
        let stopped_at = capture_stop.as_ref().and_then(StopReport::position);
        let streaming = streaming(observation);
        let stop = if observation.suspend || streaming {
            None
        } else {
            doctor_stop.clone().or(capture_stop)
        };
        let snapshotting = observation
            .capture
            .as_ref()
            .is_some_and(|c| c.state == Some(CaptureState::Snapshotting));
        Self {
            observation,
            previous,
            now,
            doctor_stop,
            stop,
            stopped_at,
            streaming,
            snapshotting,
        }
    }

    pub(super) fn stop(&self) -> Option<&StopReport> {
        self.stop.as_ref()
    }

    pub(super) fn stopped_at(&self) -> Option<Position> {
        self.stopped_at.clone()
    }

    /// `status.activeStop`: the code of the stop in force, none while a configuration problem
    /// stalls the capture (`lastStop` keeps the latest stop after recovery).
    pub(super) fn active_stop(&self) -> Option<String> {
        match (&self.observation.configuration_problem, &self.stop) {
            (None, Some(stop)) => Some(stop.code.clone()),
            _ => None,
        }
    }

    /// `Stalled`: a configuration problem, else the stop in force.
    pub(super) fn stalled(&self) -> Condition {
        match (&self.observation.configuration_problem, &self.stop) {
            (Some(problem), _) => self.condition(
                ct::STALLED,
                TRUE,
                problem.reason(),
                problem.message().to_owned(),
            ),
            (None, Some(stop)) => {
                self.condition(ct::STALLED, TRUE, &stop.reason, stop.condition_message())
            }
            (None, None) => self.condition(ct::STALLED, FALSE, "NoStop", String::new()),
        }
    }

    /// `PrerequisitesMet`: what the doctor init container found, Unknown before it finished.
    pub(super) fn prerequisites_met(&self) -> Condition {
        let doctor = self.observation.pod.as_ref().map(|p| &p.doctor);
        match (&self.doctor_stop, doctor) {
            (Some(report), _) => self.condition(
                ct::PREREQUISITES_MET,
                FALSE,
                "PrerequisitesNotMet",
                report.condition_message(),
            ),
            (None, Some(doctor)) if doctor.passed() => self.condition(
                ct::PREREQUISITES_MET,
                TRUE,
                "PrerequisitesMet",
                "redoline-capture doctor passed every check".into(),
            ),
            _ => self.condition(
                ct::PREREQUISITES_MET,
                UNKNOWN,
                "NotChecked",
                "the doctor init container has not finished yet".into(),
            ),
        }
    }

    /// `Reconciling`: the StatefulSet's rollout, unless `stalled` blocks it.
    pub(super) fn reconciling(&self, stalled: &Condition) -> Condition {
        let rolling_out =
            (self.observation.workload.as_ref()).map(WorkloadObservation::rolling_out);
        // kstatus and Flux read Reconciling before Stalled: a rollout blocked on a stop or on the
        // user must not look like progress, or GitOps tools wait for their timeout instead of
        // reporting the failure.
        match rolling_out {
            Some(true) | None if stalled.status == TRUE => self.condition(
                ct::RECONCILING,
                FALSE,
                "Blocked",
                "the rollout waits until the problem in Stalled is fixed".into(),
            ),
            None => self.condition(
                ct::RECONCILING,
                TRUE,
                "Creating",
                "creating the capture StatefulSet".into(),
            ),
            Some(true) => self.condition(
                ct::RECONCILING,
                TRUE,
                "RollingOut",
                "rolling out the capture pod".into(),
            ),
            Some(false) => self.condition(ct::RECONCILING, FALSE, "RolledOut", String::new()),
        }
    }

    /// `Ready`: streaming, or suspended on purpose; not while `stalled`, snapshotting or starting.
    pub(super) fn ready(&self, stalled: &Condition) -> Condition {
        let (status, reason, message) = if stalled.status == TRUE {
            (FALSE, stalled.reason.as_str(), stalled.message.clone())
        } else if self.observation.suspend {
            let message = "spec.suspend is true: the capture is scaled to zero";
            (TRUE, "Suspended", message.to_owned())
        } else if self.streaming && self.observation.capture.is_none() {
            let message = "the capture pod is ready, which it is only while streaming";
            (TRUE, "Streaming", self.unanswered_note(message.to_owned()))
        } else if self.streaming {
            (TRUE, "Streaming", "the capture is streaming".to_owned())
        } else if self.snapshotting {
            let message = "the capture is taking its initial snapshot";
            (FALSE, "Snapshotting", message.to_owned())
        } else {
            let message = "waiting for the capture pod to stream";
            (FALSE, "Starting", self.unanswered_note(message.to_owned()))
        };
        self.condition(ct::READY, status, reason, message)
    }

    /// `LagWithinSLA`, only with `spec.sla`: the live `lag_seconds`, or while no capture streams
    /// the lag estimated from `position`'s time.
    pub(super) fn lag_within_sla(
        &self,
        lag_seconds: Option<f64>,
        position: Option<&Position>,
    ) -> Option<Condition> {
        let max = self.observation.sla_max_lag_seconds?;
        let lag = lag::judge(self.now, lag_seconds, activity(self.observation), position);
        let message = lag.message(max);
        Some(match lag.within(max) {
            Some(true) => self.condition(ct::LAG_WITHIN_SLA, TRUE, "LagWithinSLA", message),
            Some(false) => self.condition(ct::LAG_WITHIN_SLA, FALSE, "LagSLABreached", message),
            None => self.condition(
                ct::LAG_WITHIN_SLA,
                UNKNOWN,
                "LagUnknown",
                self.unanswered_note(message),
            ),
        })
    }

    /// `status.phase`, the one-word summary of what `Ready` says.
    pub(super) fn phase(&self, stalled: &Condition) -> Phase {
        if stalled.status == TRUE {
            Phase::Stalled
        } else if self.observation.suspend {
            Phase::Suspended
        } else if self.streaming {
            Phase::Streaming
        } else if self.snapshotting {
            Phase::Snapshotting
        } else {
            Phase::Pending
        }
    }

    fn condition(&self, type_: &str, status: &str, reason: &str, message: String) -> Condition {
        let generation = self.observation.generation;
        condition_now(
            self.previous,
            type_,
            status,
            reason,
            message,
            generation,
            self.now,
        )
    }

    /// `message`, and why the capture's `/status` did not answer when it did not.
    fn unanswered_note(&self, message: String) -> String {
        match &self.observation.status_unanswered {
            Some(unanswered) => format!("{message}; {}", unanswered.note()),
            None => message,
        }
    }
}

/// Whether a capture streams. The pod is ready only while the capture streams (its readiness
/// probe is `/readyz`), so without a `/status` report the readiness decides: an unreachable
/// `/status` must not keep a streaming capture not-Ready.
fn streaming(observation: &Observation) -> bool {
    observation
        .pod
        .as_ref()
        .is_some_and(|p| p.capture.is_running_ready())
        && observation
            .capture
            .as_ref()
            .is_none_or(|c| c.state == Some(CaptureState::Streaming))
}

/// What the capture is doing, for the lag.
pub(super) fn activity(observation: &Observation) -> lag::Activity {
    if observation.suspend {
        lag::Activity::Suspended
    } else if streaming(observation) {
        lag::Activity::Streaming
    } else {
        lag::Activity::NotStreaming
    }
}

/// Condition `type_` as it is now. Its `lastTransitionTime` stays that of `previous` while the
/// status value is unchanged.
pub(super) fn condition_now(
    previous: Option<&OracleCaptureStatus>,
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    generation: Option<i64>,
    now: &Time,
) -> Condition {
    let last = previous
        .and_then(|p| p.condition(type_))
        .filter(|c| c.status == status)
        .map(|c| c.last_transition_time.clone());
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message,
        last_transition_time: last.unwrap_or_else(|| now.clone()),
        observed_generation: generation,
    }
}
