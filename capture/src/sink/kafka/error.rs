//! The sink's errors, and the one place Kafka errors are classified.
//!
//! Every librdkafka error is put in exactly one [`Class`] by [`classify`]: fencing (CDC-5001),
//! fatal (the producer is unusable), abortable (the open transaction must be aborted), retriable
//! (repeat the call after a backoff) or definite (repeating cannot help, such as a record larger
//! than the broker accepts). The sink retries a transient call itself; a transient fault that
//! outlasts the sink's retry budget is CDC-5003 (`KafkaUnavailable`). A transient fault that loses
//! part of an open page is [`SinkError::PageAborted`]: pages stream, so the page cannot be sent
//! again from memory; the engine starts again from the stored bookmark (a retry, see
//! `crate::error::CaptureError::disposition`, within the restart budget of `crate::outage`). [`SinkError::stop`] says
//! whether an error is a typed stop.

use std::time::Duration;

use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;
use redoline_crds::StopCode;

use crate::stop::Stop;

/// A failure of the Kafka sink that its retries could not overcome.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    /// A typed stop found by the sink: invalid settings or topics (CDC-1001), an unreadable
    /// bookmark or journal (CDC-5002), a journal gap (CDC-4002).
    #[error(transparent)]
    Stop(Stop),
    /// Another instance took over the transactional id (CDC-5001).
    #[error(
        "the producer with transactional id {transactional_id} was fenced by another instance: {source}"
    )]
    Fenced {
        transactional_id: String,
        #[source]
        source: KafkaError,
    },
    /// A transient fault outlasted the retry budget (CDC-5003).
    #[error("gave up trying to {action} after {attempts} attempts over {elapsed:?}: {source}")]
    RetriesExhausted {
        action: &'static str,
        attempts: u32,
        elapsed: Duration,
        #[source]
        source: KafkaError,
    },
    /// A transient fault lost part of an open page (an abortable transaction error, a failed
    /// delivery): the page's Kafka transaction was aborted, nothing of it is visible, and its
    /// transactions must be mined again from the stored bookmark.
    #[error(
        "could not {action}: {source}; the page was aborted and is mined again from the bookmark"
    )]
    PageAborted {
        action: &'static str,
        #[source]
        source: KafkaError,
    },
    /// A fault retrying cannot fix (a fatal producer error, a record the broker refuses).
    #[error("could not {action}: {source}")]
    Kafka {
        action: &'static str,
        #[source]
        source: KafkaError,
    },
}

impl SinkError {
    /// The typed stop this error ends the capture with, or `None` when no stop code fits: the
    /// capture then exits non-zero without one and Kubernetes restarts it from the bookmark.
    /// A fault that retrying cannot fix ([`SinkError::Kafka`], such as a record larger than the
    /// broker accepts) is such a case: restarting from the bookmark is its only remedy.
    pub fn stop(&self) -> Option<Stop> {
        match self {
            SinkError::Stop(stop) => Some(stop.clone()),
            SinkError::Fenced {
                transactional_id, ..
            } => Some(
                Stop::new(StopCode::ProducerFenced, self.to_string())
                    .with_detail("transactionalId", transactional_id.clone()),
            ),
            SinkError::RetriesExhausted {
                action,
                attempts,
                elapsed,
                ..
            } => Some(
                Stop::new(
                    StopCode::KafkaUnavailable,
                    format!(
                        "{self}. Check that the brokers are up and reachable from the capture \
                         with its client settings; the capture resumes from the bookmark"
                    ),
                )
                .with_detail("action", *action)
                .with_detail("attempts", *attempts)
                .with_detail("retriedSeconds", elapsed.as_secs()),
            ),
            SinkError::PageAborted { .. } | SinkError::Kafka { .. } => None,
        }
    }
}

impl From<Stop> for SinkError {
    fn from(stop: Stop) -> Self {
        SinkError::Stop(stop)
    }
}

/// What to do about a Kafka error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Another instance with the same transactional id took over.
    Fenced,
    /// The producer cannot be used any more.
    Fatal,
    /// The open transaction must be aborted (and its page mined again).
    Abortable,
    /// The same call may succeed after a pause.
    Retriable,
    /// Repeating cannot help.
    Definite,
}

/// Classifies a Kafka error (see the module docs).
pub fn classify(error: &KafkaError) -> Class {
    let code = error.rdkafka_error_code();
    if code.is_some_and(is_fencing) {
        return Class::Fenced;
    }
    if let KafkaError::Transaction(txn) = error {
        if txn.is_fatal() {
            return Class::Fatal;
        }
        if txn.txn_requires_abort() {
            return Class::Abortable;
        }
        if txn.is_retriable() {
            return Class::Retriable;
        }
    }
    match code {
        Some(code) if is_transient(code) => Class::Retriable,
        _ => Class::Definite,
    }
}

fn is_fencing(code: RDKafkaErrorCode) -> bool {
    matches!(
        code,
        RDKafkaErrorCode::Fenced
            | RDKafkaErrorCode::ProducerFenced
            | RDKafkaErrorCode::InvalidProducerEpoch
    )
}

/// Broker or network conditions that pass: a broker away, a coordinator moving, a timeout.
fn is_transient(code: RDKafkaErrorCode) -> bool {
    matches!(
        code,
        RDKafkaErrorCode::BrokerTransportFailure
            | RDKafkaErrorCode::Resolve
            | RDKafkaErrorCode::MessageTimedOut
            | RDKafkaErrorCode::AllBrokersDown
            | RDKafkaErrorCode::OperationTimedOut
            | RDKafkaErrorCode::QueueFull
            | RDKafkaErrorCode::WaitingForCoordinator
            | RDKafkaErrorCode::TimedOutQueue
            | RDKafkaErrorCode::Retry
            | RDKafkaErrorCode::LeaderNotAvailable
            | RDKafkaErrorCode::NotLeaderForPartition
            | RDKafkaErrorCode::RequestTimedOut
            | RDKafkaErrorCode::NetworkException
            | RDKafkaErrorCode::CoordinatorLoadInProgress
            | RDKafkaErrorCode::CoordinatorNotAvailable
            | RDKafkaErrorCode::NotCoordinator
            | RDKafkaErrorCode::NotEnoughReplicas
            | RDKafkaErrorCode::NotEnoughReplicasAfterAppend
            | RDKafkaErrorCode::ConcurrentTransactions
            | RDKafkaErrorCode::UnknownTopicOrPartition
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fencing_codes_are_cdc_5001() {
        for code in [
            RDKafkaErrorCode::Fenced,
            RDKafkaErrorCode::ProducerFenced,
            RDKafkaErrorCode::InvalidProducerEpoch,
        ] {
            let error = KafkaError::MessageProduction(code);
            assert_eq!(classify(&error), Class::Fenced);
            let stop = SinkError::Fenced {
                transactional_id: "redoline/sales/orders".into(),
                source: error,
            }
            .stop()
            .unwrap();
            assert_eq!(stop.code, StopCode::ProducerFenced);
            assert_eq!(stop.details["transactionalId"], "redoline/sales/orders");
        }
    }

    #[test]
    fn broker_outages_are_retried_and_refused_records_are_not() {
        assert_eq!(
            classify(&KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut)),
            Class::Retriable
        );
        assert_eq!(
            classify(&KafkaError::MessageProduction(
                RDKafkaErrorCode::AllBrokersDown
            )),
            Class::Retriable
        );
        assert_eq!(
            classify(&KafkaError::MessageProduction(
                RDKafkaErrorCode::MessageSizeTooLarge
            )),
            Class::Definite
        );
        let exhausted = SinkError::RetriesExhausted {
            action: "commit a page",
            attempts: 12,
            elapsed: Duration::from_secs(600),
            source: KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut),
        };
        let stop = exhausted.stop().unwrap();
        assert_eq!(stop.code, StopCode::KafkaUnavailable);
        assert_eq!(stop.details["action"], "commit a page");
        assert_eq!(stop.details["attempts"], 12);
        assert_eq!(stop.details["retriedSeconds"], 600);
        assert!(stop.message.contains("gave up trying to commit a page"));
        let refused = SinkError::Kafka {
            action: "send a record",
            source: KafkaError::MessageProduction(RDKafkaErrorCode::MessageSizeTooLarge),
        };
        assert!(
            refused.stop().is_none(),
            "a refused record is not an outage"
        );
    }
}
