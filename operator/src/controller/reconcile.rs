//! One reconcile of one OracleCapture, in Stackable's shape: a short driver
//! ([`reconcile_capture`]) calls one function per step, each failing with its own [`Error`]
//! variant:
//!
//! ```text
//! apply_desired (build, resize, apply) ─▶ observe (with the pod's FailedMount Events)
//!               ─▶ status::compute (pure) ─▶ write_status
//! ```

use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Resource};
use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::OracleCaptureStatus;

use super::{
    CACHE_READY_LIMIT, Context, Error, RESYNC_INTERVAL, STATUS_UNANSWERED, apply, now, object_key,
    observe, remember, resize,
};
use crate::build::{BuildError, build, secret_volumes};
use crate::status::{
    ConfigurationProblem, ContainerState, Observation, PodObservation, Transition, compute,
    lag_breach_in, mount_problem,
};

/// One reconcile under way: the OracleCapture, with the metadata every step needs, and the
/// controller's context.
struct Reconcile<'a> {
    capture: &'a OracleCapture,
    context: &'a Context,
    name: &'a str,
    namespace: &'a str,
    uid: &'a str,
}

/// One reconcile, Stackable's shape: build and apply the children, observe, compute the status,
/// write it. Each step fails with its own [`Error`] variant; a problem the
/// user must fix is no error but a [`ConfigurationProblem`] in the status.
pub(super) async fn reconcile_capture(
    capture: &OracleCapture,
    context: &Context,
) -> Result<Action, Error> {
    let reconcile = Reconcile::of(capture, context)?;
    // The caches fill from the controller's watches; a reconcile before their first list would
    // apply children it has not seen yet and miss the pod's Events.
    if !context.caches.ready(CACHE_READY_LIMIT).await {
        return Err(Error::CachesNotReady);
    }
    let applied = reconcile.apply_desired().await?;
    let observed = reconcile.observe(applied.configuration_problem).await;
    let written = context.memory().capture(reconcile.uid).written.clone();
    let previous = written.or_else(|| capture.status.clone());
    let now = now();
    let (status, mut transitions) = compute(&observed.observation, previous.as_ref(), &now);
    transitions.extend(observed.unanswered);
    let lag_breach_in = lag_breach_in(&observed.observation, &status, &now);
    reconcile
        .write_status(previous.as_ref(), status, &transitions)
        .await?;
    let next = if applied.resize_waiting {
        resize::RESIZE_POLL
    } else if observed.running && !capture.spec.suspend {
        context.settings.status_poll_interval
    } else {
        RESYNC_INTERVAL
    };
    Ok(Action::requeue(
        lag_breach_in.map_or(next, |breach| next.min(breach)),
    ))
}

impl<'a> Reconcile<'a> {
    fn of(capture: &'a OracleCapture, context: &'a Context) -> Result<Self, Error> {
        let field =
            |value: &'a Option<String>, name| value.as_deref().ok_or(Error::MissingMetadata(name));
        let metadata = &capture.metadata;
        Ok(Self {
            capture,
            context,
            name: field(&metadata.name, "name")?,
            namespace: field(&metadata.namespace, "namespace")?,
            uid: field(&metadata.uid, "uid")?,
        })
    }

    /// Builds the children (pure) and applies those that changed. The StatefulSet is left as it
    /// is while a spill resize holds it back. A spec the builders refuse, or a child the API server refuses as invalid, is
    /// a configuration problem: retrying the same object cannot succeed.
    async fn apply_desired(&self) -> Result<Applied, Error> {
        let (capture, context) = (self.capture, self.context);
        let mut applied = Applied {
            configuration_problem: None,
            resize_waiting: false,
        };
        let children = match build(capture, &context.settings.build) {
            Ok(children) => children,
            Err(BuildError::MissingMetadata(field)) => return Err(Error::MissingMetadata(field)),
            Err(invalid @ (BuildError::SpillSize(_) | BuildError::RenderConfig(_))) => {
                applied.configuration_problem =
                    Some(ConfigurationProblem::InvalidSpec(invalid.to_string()));
                return Ok(applied);
            }
        };
        // A new spill size cannot be applied to the StatefulSet: `resize` replaces it.
        let with_stateful_set = {
            let step = self.resize(&children).await?;
            applied.resize_waiting = step.pending;
            step.apply
        };
        let mut remembered = context.memory().capture(self.uid).applied.clone();
        let (client, caches) = (&context.client, &context.caches);
        let result = apply::children(
            client,
            self.namespace,
            &children,
            with_stateful_set,
            caches,
            &mut remembered,
        )
        .await;
        context.memory().capture(self.uid).applied = remembered;
        match result {
            Ok(0) => {}
            Ok(sent) => {
                tracing::debug!(
                    capture = self.name,
                    namespace = self.namespace,
                    sent,
                    "children applied"
                )
            }
            Err(refused) if refused.is_invalid() => {
                applied.configuration_problem.get_or_insert_with(|| {
                    ConfigurationProblem::ApplyRejected(refused.to_string())
                });
            }
            Err(error) => return Err(Error::Apply(error)),
        }
        Ok(applied)
    }

    /// Reads the StatefulSet, the pod and, while no container of the pod started, the kubelet's
    /// `FailedMount` Events about it from the caches (a missing Secret or key, when nothing else is
    /// wrong with the spec); while the capture runs, polls its `/status`. A poll that fails is no error: the last answer stands in for a few
    /// ([`crate::status::StatusPolls`]), then Ready follows the pod's readiness.
    async fn observe(&self, configuration_problem: Option<ConfigurationProblem>) -> Observed {
        let (capture, context) = (self.capture, self.context);
        let (name, namespace, settings) = (self.name, self.namespace, &context.settings);
        // The StatefulSet's name as `build` gives it; known even when the spec cannot be built.
        let workload_name = format!("{name}-capture");
        let workload = observe::workload(&context.caches.stateful_sets, namespace, &workload_name);
        let pod = observe::pod(&context.caches.pods, namespace, &workload_name);
        let configuration_problem = configuration_problem.or_else(|| {
            let pod = pod.as_ref().filter(|pod| !started(&pod.observation))?;
            let failures =
                observe::mount_failures(&context.caches.mount_failures, namespace, &pod.uid);
            mount_problem(
                &secret_volumes(capture),
                failures.iter().map(String::as_str),
            )
        });
        let running = pod
            .as_ref()
            .is_some_and(|pod| observe::capture_running(&pod.observation));
        let mut polls = std::mem::take(&mut context.memory().capture(self.uid).polls);
        let mut unanswered_now = false;
        if let Some(pod) = pod.as_ref().filter(|_| running) {
            let poll = match pod.ip {
                Some(ip) => observe::poll_status(ip, settings.status_port, settings.status_timeout)
                    .await
                    .map_err(|error| format!("{ip}:{}: {error}", settings.status_port)),
                None => Err("the pod has no IP address yet".to_owned()),
            };
            if let Err(error) = &poll {
                tracing::debug!(capture = name, namespace, %error, "no /status answer");
            }
            unanswered_now = polls.record(&pod.uid, poll);
        }
        let (report, status_unanswered) = if running {
            (polls.report().cloned(), polls.unanswered())
        } else {
            (None, None)
        };
        context.memory().capture(self.uid).polls = polls;
        let mut unanswered = None;
        if let Some(status_unanswered) = status_unanswered.as_ref().filter(|_| unanswered_now) {
            tracing::warn!(
                capture = name,
                namespace,
                polls = status_unanswered.polls,
                error = %status_unanswered.error,
                "the capture's /status does not answer: Ready follows the pod's readiness"
            );
            unanswered = Some(Transition {
                warning: true,
                reason: STATUS_UNANSWERED.to_owned(),
                note: status_unanswered.note(),
            });
        }
        let observation = Observation {
            generation: capture.metadata.generation,
            suspend: capture.spec.suspend,
            sla_max_lag_seconds: capture.spec.sla.as_ref().map(|sla| sla.max_lag_seconds),
            workload,
            pod: pod.map(|pod| pod.observation),
            capture: report,
            status_unanswered,
            configuration_problem,
        };
        Observed {
            observation,
            running,
            unanswered,
        }
    }

    /// Writes `status` and publishes the Events of its `transitions`, unless it is both the last
    /// one written (`previous`) and the stored one. Written when only the stored copy differs, so
    /// a status changed by someone else is put back; the transitions come from `previous`, so that
    /// costs no repeated Event.
    async fn write_status(
        &self,
        previous: Option<&OracleCaptureStatus>,
        status: OracleCaptureStatus,
        transitions: &[Transition],
    ) -> Result<(), Error> {
        let (capture, context) = (self.capture, self.context);
        if previous == Some(&status) && capture.status.as_ref() == Some(&status) {
            return Ok(());
        }
        let api = Api::namespaced(context.client.clone(), self.namespace);
        apply::status(&api, self.name, &status)
            .await
            .map_err(Error::WriteStatus)?;
        remember(context, self.uid.to_owned(), status);
        context
            .events
            .transitions(&capture.object_ref(&()), transitions)
            .await;
        Ok(())
    }

    /// The spill resize part of a reconcile (see [`resize`]): starts or follows a resize, publishes
    /// its Event, and says whether the StatefulSet may be applied.
    async fn resize(
        &self,
        children: &crate::build::CaptureChildren,
    ) -> Result<ResizeDecision, Error> {
        let (capture, context, namespace, uid) =
            (self.capture, self.context, self.namespace, self.uid);
        let existing = context.caches.stateful_sets.get(
            &ObjectRef::new(
                children
                    .stateful_set
                    .metadata
                    .name
                    .as_deref()
                    .unwrap_or_default(),
            )
            .within(namespace),
        );
        let pending = context.memory().capture(uid).resizing.take();
        let step = resize::step(
            &context.client,
            namespace,
            existing.as_deref(),
            &children.stateful_set,
            pending,
        )
        .await
        .map_err(Error::Resize)?;
        if let Some(event) = &step.event {
            tracing::info!(
                object = %object_key(capture),
                reason = %event.reason,
                note = %event.note,
                "spill resize"
            );
            context
                .events
                .transitions(&capture.object_ref(&()), std::slice::from_ref(event))
                .await;
        }
        let pending = step.pending.is_some();
        if let Some(resizing) = step.pending {
            let mut memory = context.memory();
            let remembered = memory.capture(uid);
            remembered.resizing = Some(resizing);
            remembered.applied.forget_stateful_set();
        }
        Ok(ResizeDecision {
            apply: step.apply,
            pending,
        })
    }
}

/// Whether a container of the pod has started: its volumes were mounted, so the pod's
/// `FailedMount` Events are history.
fn started(pod: &PodObservation) -> bool {
    [&pod.doctor, &pod.capture].iter().any(|container| {
        matches!(
            container.state,
            ContainerState::Running { .. } | ContainerState::Terminated(_)
        ) || container.last_terminated.is_some()
    })
}

/// What applying the desired state leaves for the rest of the reconcile.
struct Applied {
    /// From the builders or the API server.
    configuration_problem: Option<ConfigurationProblem>,
    /// A spill resize is under way: look again soon.
    resize_waiting: bool,
}

/// What a reconcile observed of the capture.
struct Observed {
    observation: Observation,
    /// The capture container runs, so its `/status` is polled.
    running: bool,
    /// The Event saying that `/status` stopped answering, when this poll was the one.
    unanswered: Option<Transition>,
}

/// What [`resize_step`] decided.
struct ResizeDecision {
    /// Apply the StatefulSet now.
    apply: bool,
    /// A resize is under way: look again soon.
    pending: bool,
}
