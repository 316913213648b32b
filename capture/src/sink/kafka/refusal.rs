//! The broker refusing the capture, as typed stops: a refused authentication (CDC-1004) and a
//! missing permission (CDC-5004). Neither passes by waiting, so neither is retried: the sink,
//! the topic check and the read-back of bookmark, journal and schema history stop at once with
//! a message saying what was refused, instead of retrying a timeout for the whole budget.
//!
//! A refused authentication does not come back as the failure of a call: librdkafka reports it
//! through the client's error callback and keeps reconnecting, while the call waits until it
//! times out. So the clients' contexts record what the callback said ([`Refusals`]), and a
//! failed call looks there before it retries. librdkafka reports a SASL failure (wrong password,
//! no Kerberos ticket, an OAUTHBEARER token the broker rejects) as `_AUTHENTICATION` and a failed
//! TLS handshake (a broker certificate the configured CA did not sign, a host name it does not
//! name, a client certificate the broker does not trust) as `_SSL`.
//!
//! A missing permission comes back as the call's error code, one per resource kind Kafka's
//! authorizer knows (`TOPIC_AUTHORIZATION_FAILED`, `GROUP_…`, `TRANSACTIONAL_ID_…`,
//! `CLUSTER_…`); the code names the kind, the caller names the resource and the operation it
//! was attempting, as far as it knows them. One refusal does not: a transaction's
//! AddPartitionsToTxn refused for a topic fails the transaction inside librdkafka, and the
//! producer's callers then see only their records purged (`_PURGE_QUEUE`) and an abort the
//! broker rejects. librdkafka says what happened only in its log ("Failed to add partition
//! "TOPIC" [0] to transaction: Broker: Topic authorization failed", "… (TOPIC_AUTHORIZATION_FAILED)"),
//! so the producer's log callback records it too ([`authorization_in_log`]).

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use rdkafka::error::KafkaError;
use rdkafka::types::RDKafkaErrorCode;
use redoline_crds::StopCode;

use crate::stop::Stop;

/// A Kafka ACL resource kind, as `kafka-acls.sh` and Strimzi name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    Topic,
    Group,
    TransactionalId,
    Cluster,
}

impl Resource {
    /// The resource kind a `*_AUTHORIZATION_FAILED` code is about.
    pub fn of(code: RDKafkaErrorCode) -> Option<Resource> {
        match code {
            RDKafkaErrorCode::TopicAuthorizationFailed => Some(Resource::Topic),
            RDKafkaErrorCode::GroupAuthorizationFailed => Some(Resource::Group),
            RDKafkaErrorCode::TransactionalIdAuthorizationFailed => Some(Resource::TransactionalId),
            RDKafkaErrorCode::ClusterAuthorizationFailed => Some(Resource::Cluster),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Resource::Topic => "topic",
            Resource::Group => "group",
            Resource::TransactionalId => "transactional id",
            Resource::Cluster => "cluster",
        }
    }
}

/// What the capture was doing when a permission was missing: the Kafka ACL operation, and the
/// resource's name when the caller knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempted<'a> {
    /// The ACL operation (`Write`, `Read`, `Describe`, `Create`, `DescribeConfigs`,
    /// `IdempotentWrite`).
    pub operation: &'static str,
    pub name: Option<&'a str>,
}

/// CDC-5004 when `error` says a permission is missing, naming the resource kind from the code
/// and the operation and name from `attempted`.
pub fn not_authorized(error: &KafkaError, attempted: Attempted<'_>) -> Option<Stop> {
    // rust-rdkafka gives no code for an admin operation's error: it carries its own.
    let code = match error {
        KafkaError::AdminOp(code) => Some(*code),
        other => other.rdkafka_error_code(),
    };
    let resource = Resource::of(code?)?;
    // The cluster's only operation the capture needs is IdempotentWrite (an idempotent producer
    // without transactional id); the code says the cluster, whatever the call was.
    let (operation, name) = match resource {
        Resource::Cluster => ("IdempotentWrite", Some("kafka-cluster")),
        _ => (attempted.operation, attempted.name),
    };
    let what = match name {
        Some(name) => format!("{} {name}", resource.name()),
        None => format!("a {}", resource.name()),
    };
    let mut stop = Stop::new(
        StopCode::KafkaNotAuthorized,
        format!(
            "Kafka refused {operation} on {what}: {error}. Grant the capture's principal the \
             ACLs `redoline-capture acls` prints (docs/kafka.md); the capture resumes from the \
             bookmark"
        ),
    )
    .with_detail("resource", resource.name())
    .with_detail("operation", operation);
    if let Some(name) = name {
        stop = stop.with_detail("name", name);
    }
    Some(stop)
}

/// CDC-1004 when a client error callback says the broker refused the capture's authentication.
/// `reason` is librdkafka's text, which names the broker and the mechanism but no secret.
/// librdkafka also reports a connection lost in the middle of a SASL handshake as an
/// authentication error ("… handshake failed: Local: Broker transport failure"): that is an
/// outage, not a refusal.
pub fn authentication_refused(error: &KafkaError, reason: &str) -> Option<Stop> {
    const LOST_CONNECTION: &[&str] = &[
        "Broker transport failure",
        "Timed out",
        "Connection refused",
    ];
    if LOST_CONNECTION.iter().any(|lost| reason.contains(lost)) {
        return None;
    }
    let what = match error.rdkafka_error_code()? {
        RDKafkaErrorCode::Authentication | RDKafkaErrorCode::SaslAuthenticationFailed => "SASL",
        RDKafkaErrorCode::SSL => "TLS",
        _ => return None,
    };
    Some(
        Stop::new(
            StopCode::KafkaAuthenticationFailed,
            format!(
                "Kafka refused the capture's {what} authentication: {reason}. Check the client \
                 settings and credentials of spec.kafka; the capture does not retry them"
            ),
        )
        .with_detail("field", "spec.kafka")
        .with_detail("layer", what),
    )
}

/// The authorization failure a librdkafka log line reports, with the topic when the line names
/// one (the transaction manager's lines, see the module docs).
pub fn authorization_in_log(line: &str) -> Option<(RDKafkaErrorCode, Option<String>)> {
    const CODES: &[(&str, RDKafkaErrorCode)] = &[
        (
            "TOPIC_AUTHORIZATION_FAILED",
            RDKafkaErrorCode::TopicAuthorizationFailed,
        ),
        (
            "GROUP_AUTHORIZATION_FAILED",
            RDKafkaErrorCode::GroupAuthorizationFailed,
        ),
        (
            "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
            RDKafkaErrorCode::TransactionalIdAuthorizationFailed,
        ),
        (
            "CLUSTER_AUTHORIZATION_FAILED",
            RDKafkaErrorCode::ClusterAuthorizationFailed,
        ),
    ];
    if line.contains("Topic authorization failed")
        && let Some(rest) = line.split("Failed to add partition \"").nth(1)
        && let Some(topic) = rest.split('"').next()
    {
        return Some((
            RDKafkaErrorCode::TopicAuthorizationFailed,
            Some(topic.to_owned()),
        ));
    }
    CODES
        .iter()
        .find(|(name, _)| line.contains(&format!("({name})")))
        .map(|(_, code)| (*code, None))
}

/// What the error callback of one client has said that retrying cannot mend: the last refused
/// authentication, and when. librdkafka reconnects a refused client with a backoff of at most
/// `reconnect.backoff.max.ms` (10 s) and reports the refusal again each time, at least every
/// [`Refusals::RECENT`] even when it suppresses repeated log lines; a refusal older than that
/// was followed by a connection that worked.
#[derive(Debug, Default)]
pub struct Refusals {
    authentication: Mutex<Option<(Instant, Stop)>>,
    /// The last authorization failure librdkafka logged (see [`authorization_in_log`]).
    denied: Mutex<Option<(RDKafkaErrorCode, Option<String>)>>,
}

impl Refusals {
    /// How long a recorded refusal counts.
    pub const RECENT: Duration = Duration::from_secs(60);

    /// Called from a client context's error callback.
    pub fn record(&self, error: &KafkaError, reason: &str) {
        if let Some(stop) = authentication_refused(error, reason) {
            *self
                .authentication
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some((Instant::now(), stop));
        }
    }

    /// Called from a client context's log callback.
    pub fn record_log(&self, line: &str) {
        if let Some((code, topic)) = authorization_in_log(line) {
            let mut denied = self.denied.lock().unwrap_or_else(PoisonError::into_inner);
            // The line naming the topic comes first; the summary after it must not forget it.
            let topic = topic.or_else(|| {
                denied
                    .as_ref()
                    .filter(|(earlier, _)| *earlier == code)
                    .and_then(|(_, topic)| topic.clone())
            });
            *denied = Some((code, topic));
        }
    }

    /// The last authorization failure logged: its code and the topic when known.
    pub fn denied(&self) -> Option<(RDKafkaErrorCode, Option<String>)> {
        self.denied
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The refusal recorded within [`Self::RECENT`], if any.
    pub fn get(&self) -> Option<Stop> {
        self.authentication
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .filter(|(at, _)| at.elapsed() <= Self::RECENT)
            .map(|(_, stop)| stop.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_authorization_code_names_its_resource() {
        let attempted = Attempted {
            operation: "Write",
            name: Some("sales.APP.ITEMS"),
        };
        let topic = not_authorized(
            &KafkaError::MessageProduction(RDKafkaErrorCode::TopicAuthorizationFailed),
            attempted,
        )
        .unwrap();
        assert_eq!(topic.code, StopCode::KafkaNotAuthorized);
        assert_eq!(topic.details["resource"], "topic");
        assert_eq!(topic.details["operation"], "Write");
        assert_eq!(topic.details["name"], "sales.APP.ITEMS");
        assert!(
            topic.message.contains("Write on topic sales.APP.ITEMS"),
            "{topic}"
        );

        let create = not_authorized(
            &KafkaError::AdminOp(RDKafkaErrorCode::TopicAuthorizationFailed),
            Attempted {
                operation: "Create",
                name: Some("sales.APP.ITEMS"),
            },
        )
        .unwrap();
        assert_eq!(create.details["operation"], "Create");

        let cluster = not_authorized(
            &KafkaError::Global(RDKafkaErrorCode::ClusterAuthorizationFailed),
            attempted,
        )
        .unwrap();
        assert_eq!(cluster.details["resource"], "cluster");
        assert_eq!(cluster.details["operation"], "IdempotentWrite");

        let group = not_authorized(
            &KafkaError::MetadataFetch(RDKafkaErrorCode::GroupAuthorizationFailed),
            Attempted {
                operation: "Read",
                name: None,
            },
        )
        .unwrap();
        assert!(group.message.contains("Read on a group"), "{group}");
        assert!(group.details.get("name").is_none());

        let transactional = not_authorized(
            &KafkaError::Global(RDKafkaErrorCode::TransactionalIdAuthorizationFailed),
            Attempted {
                operation: "Write",
                name: Some("redoline/sales/orders"),
            },
        )
        .unwrap();
        assert_eq!(transactional.details["resource"], "transactional id");

        assert!(
            not_authorized(
                &KafkaError::Global(RDKafkaErrorCode::AllBrokersDown),
                attempted
            )
            .is_none(),
            "an outage is no refusal"
        );
    }

    #[test]
    fn a_refused_add_partitions_is_read_from_librdkafka_s_log() {
        let refusals = Refusals::default();
        refusals.record_log("TxnCoordinator/1: Failed to add partition \"sales.redoline.offsets\" [0] to transaction: Broker: Topic authorization failed");
        refusals.record_log("Current transaction failed in state InTransaction: Failed to add partition(s) to transaction on broker TxnCoordinator/1: Broker: Topic authorization failed (after 0 ms) (TOPIC_AUTHORIZATION_FAILED)");
        assert_eq!(
            refusals.denied(),
            Some((
                RDKafkaErrorCode::TopicAuthorizationFailed,
                Some("sales.redoline.offsets".to_owned())
            ))
        );
        assert_eq!(
            authorization_in_log("Failed to init: (TRANSACTIONAL_ID_AUTHORIZATION_FAILED)"),
            Some((RDKafkaErrorCode::TransactionalIdAuthorizationFailed, None))
        );
        assert_eq!(authorization_in_log("Broker: Not coordinator"), None);
    }

    #[test]
    fn refused_authentication_is_recorded_and_outages_are_not() {
        let refusals = Refusals::default();
        refusals.record(
            &KafkaError::Global(RDKafkaErrorCode::AllBrokersDown),
            "1/1 brokers are down",
        );
        assert!(refusals.get().is_none());
        refusals.record(
            &KafkaError::Global(RDKafkaErrorCode::Authentication),
            "GroupCoordinator: SASL SCRAM-SHA-512 mechanism handshake failed: Local: Broker \
             transport failure: broker's supported mechanisms: (n/a)",
        );
        assert!(refusals.get().is_none(), "a connection lost mid-handshake");
        refusals.record(
            &KafkaError::Global(RDKafkaErrorCode::SSL),
            "ssl://b:9093/bootstrap: SSL handshake failed",
        );
        refusals.record(
            &KafkaError::Global(RDKafkaErrorCode::Authentication),
            "sasl_ssl://b:9093/bootstrap: SASL authentication error: invalid credentials",
        );
        let stop = refusals.get().unwrap();
        assert_eq!(stop.code, StopCode::KafkaAuthenticationFailed);
        assert_eq!(stop.details["layer"], "SASL");
        assert!(stop.message.contains("invalid credentials"), "{stop}");
    }
}
