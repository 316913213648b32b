//! Kubernetes Events about OracleCaptures, written through the events.k8s.io API.
//!
//! Events are what `kubectl describe ocap` shows under the conditions: the history the status
//! cannot keep. The reconciler publishes one for each [`Transition`] the status module reports (a
//! typed stop, prerequisites failed or met, the lag SLA breached or recovered, a rollout finished)
//! and one for each failed reconcile, with the error's stable reason.
//!
//! kube's [`Recorder`] folds repeats of the same (type, reason, action, object) into an
//! EventSeries, so a reconcile that reports the same transition twice costs a counter, not a new
//! Event. Publishing is best effort: an Event that cannot be written is logged and never fails the
//! reconcile, because the status (the contract) was already written.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Client;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

use crate::status::Transition;

/// The `reportingController` of every Event: the field manager's name, so both tell one story.
pub const REPORTING_CONTROLLER: &str = "redoline-operator";

/// The action of Events about what a reconcile observed.
pub const RECONCILE_ACTION: &str = "Reconcile";

/// The API server refuses notes over 1 KiB; longer ones are cut at a character boundary.
const MAX_NOTE_BYTES: usize = 1024;

/// Publishes Events about OracleCaptures.
#[derive(Clone)]
pub struct EventPublisher {
    recorder: Recorder,
}

impl std::fmt::Debug for EventPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventPublisher").finish_non_exhaustive()
    }
}

impl EventPublisher {
    /// `instance` tells replicas of the operator apart (the pod name, when it runs in a pod).
    pub fn new(client: Client, instance: Option<String>) -> Self {
        let reporter = Reporter {
            controller: REPORTING_CONTROLLER.to_owned(),
            instance,
        };
        Self {
            recorder: Recorder::new(client, reporter),
        }
    }

    /// One Event per status transition, in order.
    pub async fn transitions(&self, regarding: &ObjectReference, transitions: &[Transition]) {
        for transition in transitions {
            let type_ = if transition.warning {
                EventType::Warning
            } else {
                EventType::Normal
            };
            self.publish(regarding, type_, &transition.reason, &transition.note)
                .await;
        }
    }

    /// A Warning Event for a reconcile that failed; `reason` is the error's stable CamelCase name.
    pub async fn reconcile_failed(&self, regarding: &ObjectReference, reason: &str, note: &str) {
        self.publish(regarding, EventType::Warning, reason, note)
            .await;
    }

    async fn publish(
        &self,
        regarding: &ObjectReference,
        type_: EventType,
        reason: &str,
        note: &str,
    ) {
        let event = Event {
            type_,
            reason: reason.to_owned(),
            note: (!note.is_empty()).then(|| truncate(note, MAX_NOTE_BYTES).to_owned()),
            action: RECONCILE_ACTION.to_owned(),
            secondary: None,
        };
        if let Err(error) = self.recorder.publish(&event, regarding).await {
            tracing::warn!(
                object = regarding.name.as_deref().unwrap_or(""),
                namespace = regarding.namespace.as_deref().unwrap_or(""),
                reason,
                %error,
                "could not publish an Event"
            );
        }
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends at a character boundary.
fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::truncate;

    #[test]
    fn notes_are_cut_at_character_boundaries() {
        assert_eq!(truncate("short", 1024), "short");
        let long = "é".repeat(600); // 1200 bytes
        let cut = truncate(&long, 1024);
        assert_eq!(cut.len(), 1024);
        assert!(cut.chars().all(|c| c == 'é'));
        assert_eq!(truncate("aé", 2), "a");
    }
}
