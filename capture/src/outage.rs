//! Riding out an outage: restarting the run after transient faults, within a retry budget.
//!
//! A lost connection, a call that times out or an online log reused mid-fetch
//! ([`SourceError::is_transient`]) is not a typed stop (contracts: transient faults are retried
//! with capped exponential backoff and logged). Nor is a Kafka page aborted by a transient fault
//! ([`SinkError::PageAborted`]): pages stream, so the page's records are gone from memory and
//! only mining its transactions again can write it. Either way the run starts again from the
//! sink's last committed bookmark after a pause that doubles from [`DATABASE_RETRY`]'s initial
//! backoff up to its cap. Faults count as one outage until a mining window completes; an outage
//! longer than the budget ends the run with CDC-2005 (`DatabaseUnavailable`) for the database,
//! CDC-5003 (`KafkaUnavailable`) for Kafka, CDC-5005 (`SchemaRegistryUnavailable`) for a schema
//! registry that could not give a record's schema id ([`crate::registry`]), naming the last error ([`Outage::exhausted`]). Which
//! errors are transient, and whose outage they are, is [`crate::error::CaptureError::disposition`].
//!
//! The policy is the sink's [`RetryPolicy`] (same doubling, same budget rule); [`RestartBudget`]
//! adds the outage bookkeeping and takes the time as an argument, so it is tested without
//! waiting.

use std::time::{Duration, Instant};

use redoline_crds::StopCode;

use std::fmt::Display;

use crate::error::Outage;
use crate::sink::RetryPolicy;
#[cfg(doc)]
use crate::sink::SinkError;
#[cfg(doc)]
use crate::source::SourceError;
use crate::stop::Stop;

/// 1 s doubling to 60 s, for at most 15 minutes of continuous failure. The spec has no field for
/// it: 15 minutes rides out a listener restart, a RAC instance failover or a short network
/// partition, and is short enough that a database that is really gone becomes a visible stop.
pub const DATABASE_RETRY: RetryPolicy = RetryPolicy {
    initial_backoff: Duration::from_secs(1),
    max_backoff: Duration::from_secs(60),
    budget: Duration::from_secs(15 * 60),
};

/// The restarts of one outage: when it began and how many restarts it has cost.
#[derive(Clone, Debug)]
pub struct RestartBudget {
    policy: RetryPolicy,
    /// When the first failure of the current outage happened; `None` while healthy.
    failing_since: Option<Instant>,
    attempts: u32,
}

/// What to do after a transient failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Wait this long, then start again (restart number `attempt` of the outage).
    RetryAfter { pause: Duration, attempt: u32 },
    /// The outage has lasted `elapsed` over `attempts` restarts: the budget is spent.
    Exhausted { elapsed: Duration, attempts: u32 },
}

impl RestartBudget {
    pub fn new(policy: RetryPolicy) -> Self {
        Self {
            policy,
            failing_since: None,
            attempts: 0,
        }
    }

    /// A window completed: the outage, if any, is over.
    pub fn succeeded(&mut self) {
        self.failing_since = None;
        self.attempts = 0;
    }

    /// A transient failure at `now`.
    pub fn failed(&mut self, now: Instant) -> Verdict {
        let since = *self.failing_since.get_or_insert(now);
        let elapsed = now.saturating_duration_since(since);
        let pause = self.policy.backoff(self.attempts + 1);
        if self.policy.allows(elapsed, pause) {
            self.attempts += 1;
            Verdict::RetryAfter {
                pause,
                attempt: self.attempts,
            }
        } else {
            Verdict::Exhausted {
                elapsed,
                attempts: self.attempts,
            }
        }
    }
}

impl Outage {
    /// The stop of an outage that spent the budget, `last` being the fault that ended it.
    pub fn exhausted(self, last: &impl Display, elapsed: Duration, attempts: u32) -> Stop {
        match self {
            Self::Database => database_unavailable(last, elapsed, attempts),
            Self::Kafka => kafka_unavailable(last, elapsed, attempts),
            Self::SchemaRegistry => registry_unavailable(last, elapsed, attempts),
        }
    }
}

/// CDC-5003 for pages aborted again and again until the budget was spent.
fn kafka_unavailable(last: &impl Display, elapsed: Duration, attempts: u32) -> Stop {
    Stop::new(
        StopCode::KafkaUnavailable,
        format!(
            "Kafka aborted the page being written again and again for {} s over {attempts} \
             restarts; the last error: {last}. Check the brokers and the capture's client \
             settings; the capture resumes from the bookmark",
            elapsed.as_secs()
        ),
    )
    .with_detail("lastError", last.to_string())
    .with_detail("attempts", attempts)
    .with_detail("retriedSeconds", elapsed.as_secs())
}

/// CDC-5005 for a schema registry that stayed out of reach, or failing, for the whole budget.
/// Nothing was written meanwhile: each attempt ended before the record needing the schema.
fn registry_unavailable(last: &impl Display, elapsed: Duration, attempts: u32) -> Stop {
    Stop::new(
        StopCode::SchemaRegistryUnavailable,
        format!(
            "the schema registry could not give a schema id for {} s over {attempts} restarts;              the last error: {last}. Nothing was written without its schema. Check that the              registry is up and reachable from the capture (schemaRegistry.url); the capture              resumes from the bookmark",
            elapsed.as_secs()
        ),
    )
    .with_detail("lastError", last.to_string())
    .with_detail("attempts", attempts)
    .with_detail("retriedSeconds", elapsed.as_secs())
}

/// CDC-2005 for an outage that spent the budget; `last` is the error that ended it.
fn database_unavailable(last: &impl Display, elapsed: Duration, attempts: u32) -> Stop {
    Stop::new(
        StopCode::DatabaseUnavailable,
        format!(
            "the database could not be used for {} s over {attempts} restarts; the last error: \
             {last}. Check that the database and its listener are up and reachable from the \
             capture; it resumes from the bookmark",
            elapsed.as_secs()
        ),
    )
    .with_detail("lastError", last.to_string())
    .with_detail("attempts", attempts)
    .with_detail("retriedSeconds", elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{CaptureError, Disposition};
    use crate::sink::SinkError;
    use crate::source::SourceError;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(8),
            budget: Duration::from_secs(30),
        }
    }

    /// Fails at each pause's end, as the run does, until the budget says stop.
    fn outage(budget: &mut RestartBudget, start: Instant) -> (Vec<u64>, Verdict) {
        let mut now = start;
        let mut pauses = Vec::new();
        loop {
            match budget.failed(now) {
                Verdict::RetryAfter { pause, .. } => {
                    pauses.push(pause.as_secs());
                    now += pause;
                }
                exhausted => return (pauses, exhausted),
            }
        }
    }

    #[test]
    fn the_default_doubles_from_one_second_to_a_minute_for_fifteen_minutes() {
        let delays: Vec<u64> = (1..=8)
            .map(|a| DATABASE_RETRY.backoff(a).as_secs())
            .collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 60, 60]);
        assert_eq!(DATABASE_RETRY.budget, Duration::from_secs(900));
    }

    #[test]
    fn pauses_double_to_the_cap_until_the_budget_is_spent() {
        let mut budget = RestartBudget::new(policy());
        let (pauses, verdict) = outage(&mut budget, Instant::now());
        // 1+2+4+8+8 = 23 s; one more 8 s pause would end past 30 s.
        assert_eq!(pauses, [1, 2, 4, 8, 8]);
        assert_eq!(
            verdict,
            Verdict::Exhausted {
                elapsed: Duration::from_secs(23),
                attempts: 5
            }
        );
    }

    #[test]
    fn a_completed_window_starts_a_new_outage() {
        let mut budget = RestartBudget::new(policy());
        let start = Instant::now();
        assert!(matches!(budget.failed(start), Verdict::RetryAfter { .. }));
        assert!(matches!(
            budget.failed(start + Duration::from_secs(20)),
            Verdict::RetryAfter { attempt: 2, .. }
        ));
        budget.succeeded();
        // Long after the first failure, but a fresh outage: the full budget and the first pause.
        let later = start + Duration::from_secs(3600);
        assert_eq!(
            budget.failed(later),
            Verdict::RetryAfter {
                pause: Duration::from_secs(1),
                attempt: 1
            }
        );
        let (pauses, verdict) = outage(&mut budget, later + Duration::from_secs(1));
        assert_eq!(pauses, [2, 4, 8, 8]);
        assert!(matches!(verdict, Verdict::Exhausted { attempts: 5, .. }));
    }

    #[test]
    fn an_aborted_page_is_a_kafka_fault_and_its_spent_budget_is_cdc_5003() {
        let aborted = CaptureError::from(SinkError::PageAborted {
            action: "commit a page",
            source: rdkafka::error::KafkaError::MessageProduction(
                rdkafka::types::RDKafkaErrorCode::MessageTimedOut,
            ),
        });
        let Disposition::Retry { cause, outage } = aborted.disposition() else {
            panic!("an aborted page is retried");
        };
        assert_eq!(cause, "kafka_page_aborted");
        let stop = outage.exhausted(&aborted, Duration::from_secs(901), 12);
        assert_eq!(stop.code, StopCode::KafkaUnavailable);
        assert!(stop.message.contains("commit a page"), "{}", stop.message);
        assert_eq!(stop.details["attempts"], 12);
    }

    #[test]
    fn an_unreachable_registry_is_retried_and_its_spent_budget_is_cdc_5005() {
        let down = CaptureError::from(crate::registry::RegistryError::Unavailable {
            url: "http://registry:8081".to_owned(),
            reason: "Connection refused".to_owned(),
        });
        let Disposition::Retry { outage, .. } = down.disposition() else {
            panic!("an unreachable registry is retried");
        };
        let stop = outage.exhausted(&down, Duration::from_secs(903), 17);
        assert_eq!(stop.code.code(), "CDC-5005");
        assert!(
            stop.message.contains("Connection refused"),
            "{}",
            stop.message
        );
        assert_eq!(stop.details["attempts"], 17);
    }

    #[test]
    fn a_spent_budget_is_cdc_2005_naming_the_last_error() {
        let last = SourceError::Timeout {
            call: "start LogMiner",
            seconds: 30,
        };
        let stop = database_unavailable(&last, Duration::from_secs(905), 19);
        assert_eq!(stop.code, StopCode::DatabaseUnavailable);
        assert_eq!(stop.code.code(), "CDC-2005");
        assert!(
            stop.message
                .contains("start LogMiner did not answer within 30 s")
        );
        assert_eq!(stop.details["attempts"], 19);
        assert_eq!(stop.details["retriedSeconds"], 905);
    }
}
