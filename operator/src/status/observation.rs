//! What the operator observes of one capture, in plain data, so status logic is tested without a
//! cluster. [`PodObservation::from_pod`] reads a Pod object (pure); the reconciler fills the rest
//! from the StatefulSet and the capture's `/status` endpoint.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
pub use redoline_crds::capture::CaptureReport;

use super::StopReport;
use crate::build::{CAPTURE_CONTAINER, DOCTOR_CONTAINER};

/// Everything [`super::compute`] needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Observation {
    /// `metadata.generation` of the OracleCapture.
    pub generation: Option<i64>,
    pub suspend: bool,
    pub sla_max_lag_seconds: Option<u64>,
    /// `None` until the StatefulSet exists.
    pub workload: Option<WorkloadObservation>,
    /// `None` while there is no capture pod.
    pub pod: Option<PodObservation>,
    /// The capture's latest `/status` answer, kept for a few failed polls
    /// ([`super::StatusPolls`]).
    pub capture: Option<CaptureReport>,
    /// `/status` has not answered for several polls in a row.
    pub status_unanswered: Option<super::Unanswered>,
    /// A problem the user must fix before the capture can run, such as a missing Secret or key.
    pub configuration_problem: Option<ConfigurationProblem>,
}

/// A problem the user must fix before the capture can run: retrying the same reconcile cannot
/// fix it, so it is no error but a `Stalled` condition with [`ConfigurationProblem::reason`].
/// Each carries the condition message, which names the spec field at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigurationProblem {
    /// A referenced Secret does not exist.
    SecretNotFound(String),
    /// A referenced Secret lacks a key the capture reads.
    SecretKeyMissing(String),
    /// The builders refuse the spec.
    InvalidSpec(String),
    /// The API server refused a child as invalid (HTTP 422), such as a change to the
    /// StatefulSet's selector.
    ApplyRejected(String),
}

impl ConfigurationProblem {
    /// The condition and Event reason.
    pub fn reason(&self) -> &'static str {
        match self {
            ConfigurationProblem::SecretNotFound(_) => "SecretNotFound",
            ConfigurationProblem::SecretKeyMissing(_) => "SecretKeyMissing",
            ConfigurationProblem::InvalidSpec(_) => "InvalidSpec",
            ConfigurationProblem::ApplyRejected(_) => "ApplyRejected",
        }
    }

    /// The condition message.
    pub fn message(&self) -> &str {
        match self {
            ConfigurationProblem::SecretNotFound(message)
            | ConfigurationProblem::SecretKeyMissing(message)
            | ConfigurationProblem::InvalidSpec(message)
            | ConfigurationProblem::ApplyRejected(message) => message,
        }
    }
}

/// The StatefulSet's rollout state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkloadObservation {
    pub generation: Option<i64>,
    pub observed_generation: Option<i64>,
    pub replicas: i32,
    pub updated_replicas: i32,
    pub current_revision: Option<String>,
    pub update_revision: Option<String>,
}

impl WorkloadObservation {
    pub fn from_stateful_set(sts: &StatefulSet) -> Self {
        let status = sts.status.clone().unwrap_or_default();
        Self {
            generation: sts.metadata.generation,
            observed_generation: status.observed_generation,
            replicas: sts.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1),
            updated_replicas: status.updated_replicas.unwrap_or(0),
            current_revision: status.current_revision,
            update_revision: status.update_revision,
        }
    }

    /// The StatefulSet controller has not yet caught up with the latest spec.
    pub fn rolling_out(&self) -> bool {
        self.observed_generation < self.generation
            || self.updated_replicas < self.replicas
            || (self.replicas > 0 && self.current_revision != self.update_revision)
    }
}

/// The capture pod's two containers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodObservation {
    pub doctor: ContainerObservation,
    pub capture: ContainerObservation,
}

/// One container: its state now and how it last ended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContainerObservation {
    pub state: ContainerState,
    pub last_terminated: Option<Terminated>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub enum ContainerState {
    #[default]
    NotStarted,
    Waiting {
        reason: String,
    },
    Running {
        ready: bool,
    },
    Terminated(Terminated),
}

/// A container that ended, with its termination message.
#[derive(Clone, Debug, PartialEq)]
pub struct Terminated {
    pub exit_code: i32,
    pub message: Option<String>,
}

impl PodObservation {
    /// Reads the doctor and capture containers of a capture pod.
    pub fn from_pod(pod: &Pod) -> Self {
        let status = pod.status.clone().unwrap_or_default();
        let find = |statuses: Option<Vec<ContainerStatus>>, name: &str| {
            statuses
                .unwrap_or_default()
                .into_iter()
                .find(|c| c.name == name)
                .map(|c| ContainerObservation::from_status(&c))
                .unwrap_or_default()
        };
        Self {
            doctor: find(status.init_container_statuses, DOCTOR_CONTAINER),
            capture: find(status.container_statuses, CAPTURE_CONTAINER),
        }
    }
}

impl ContainerObservation {
    fn from_status(status: &ContainerStatus) -> Self {
        let terminated = |t: &k8s_openapi::api::core::v1::ContainerStateTerminated| Terminated {
            exit_code: t.exit_code,
            message: t.message.clone(),
        };
        let state = match &status.state {
            Some(s) if s.terminated.is_some() => s
                .terminated
                .as_ref()
                .map(|t| ContainerState::Terminated(terminated(t)))
                .unwrap_or_default(),
            Some(s) if s.running.is_some() => ContainerState::Running {
                ready: status.ready,
            },
            Some(s) => s
                .waiting
                .as_ref()
                .map(|w| ContainerState::Waiting {
                    reason: w.reason.clone().unwrap_or_default(),
                })
                .unwrap_or_default(),
            None => ContainerState::NotStarted,
        };
        Self {
            state,
            last_terminated: status
                .last_state
                .as_ref()
                .and_then(|s| s.terminated.as_ref())
                .map(terminated),
        }
    }

    /// The typed stop this container reported, now or when it last ended. A running container's
    /// earlier stop still counts: it clears only once the capture streams again.
    pub fn stop(&self) -> Option<StopReport> {
        let current = match &self.state {
            ContainerState::Terminated(t) => Some(t),
            _ => None,
        };
        current
            .into_iter()
            .chain(self.last_terminated.as_ref())
            .filter(|t| t.exit_code != 0)
            .find_map(|t| t.message.as_deref().and_then(StopReport::parse))
    }

    /// An init container that finished successfully (and stays so while the pod lives).
    pub fn passed(&self) -> bool {
        matches!(&self.state, ContainerState::Terminated(t) if t.exit_code == 0)
    }

    pub fn is_running_ready(&self) -> bool {
        matches!(self.state, ContainerState::Running { ready: true })
    }
}
