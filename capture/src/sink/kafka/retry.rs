//! Retrying transient Kafka faults: capped exponential backoff inside a budget, and the producer
//! state `/status` shows meanwhile.
//!
//! A broker that is unreachable or briefly away is not a stop (contracts: transient faults are
//! retried and logged). The sink is a blocking API, so while it retries the mining thread waits
//! in it: mining pauses and the buffer does not grow. The delay doubles from
//! [`RetryPolicy::initial_backoff`] up to [`RetryPolicy::max_backoff`]; once a fault has lasted
//! [`RetryPolicy::budget`] the sink gives up with `SinkError::RetriesExhausted`, the typed stop
//! CDC-5003 (`KafkaUnavailable`). The same policy type bounds the engine's restarts after
//! transient database faults ([`crate::outage`]): the schedule is written once, here.
//!
//! Why not `backon` (in the tree through kube-runtime; 1.6 read for this): its
//! `ExponentialBuilder` yields delays one after another from an iterator, while both users need
//! the pause of retry number `n` of an outage that resets when a window completes
//! ([`RetryPolicy::backoff`], taken at any `n`, `u32::MAX` included); it multiplies in `f32`
//! seconds (`Duration::try_from_secs_f32`), so the doubling is not exact in milliseconds as the
//! tests state it; and its `with_total_delay` sums the sleeps, while the budget here is the
//! wall time since the fault began, the failed calls' own time included
//! ([`RetryPolicy::allows`]). Adapting it would take more code than the two functions below.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

pub use redoline_crds::capture::ProducerState;

/// How transient faults are retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// How long one fault may last before the sink gives up.
    pub budget: Duration,
}

impl Default for RetryPolicy {
    /// 200 ms doubling to 30 s, for at most 10 minutes.
    fn default() -> Self {
        Self {
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(30),
            budget: Duration::from_secs(600),
        }
    }
}

impl RetryPolicy {
    /// The pause before retry number `attempt` (1 for the first retry).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(31);
        self.initial_backoff
            .saturating_mul(1 << doublings)
            .min(self.max_backoff)
    }

    /// Whether a fault that has lasted `elapsed` may be retried once more, pausing `pause`.
    pub fn allows(&self, elapsed: Duration, pause: Duration) -> bool {
        elapsed.saturating_add(pause) <= self.budget
    }
}

/// The producer state shared with the HTTP server: cheap to clone, read with [`Self::get`].
#[derive(Clone, Debug)]
pub struct SinkStatus(Arc<Mutex<ProducerState>>);

impl Default for SinkStatus {
    fn default() -> Self {
        Self(Arc::new(Mutex::new(ProducerState::Starting)))
    }
}

impl SinkStatus {
    pub fn get(&self) -> ProducerState {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(super) fn set(&self, state: ProducerState) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = state;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let policy = RetryPolicy::default();
        let delays: Vec<u128> = (1..=10).map(|a| policy.backoff(a).as_millis()).collect();
        assert_eq!(
            delays,
            [200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]
        );
        assert_eq!(policy.backoff(u32::MAX), policy.max_backoff);
    }

    #[test]
    fn the_budget_bounds_the_time_spent_retrying() {
        let policy = RetryPolicy {
            budget: Duration::from_secs(10),
            ..RetryPolicy::default()
        };
        assert!(policy.allows(Duration::from_secs(9), Duration::from_secs(1)));
        assert!(!policy.allows(Duration::from_secs(9), Duration::from_secs(2)));
    }

    #[test]
    fn states_serialise_for_status() {
        let state = ProducerState::Retrying {
            action: "commit".into(),
            attempt: 3,
            error: "broker down".into(),
        };
        assert_eq!(
            serde_json::to_value(&state).unwrap(),
            serde_json::json!({"state":"retrying","action":"commit","attempt":3,"error":"broker down"})
        );
        assert!(ProducerState::LABELS.contains(&state.label()));
    }
}
