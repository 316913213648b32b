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
//! was attempting, as far as it knows them.

use std::sync::{Mutex, PoisonError};

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
    let resource = Resource::of(error.rdkafka_error_code()?)?;
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
pub fn authentication_refused(error: &KafkaError, reason: &str) -> Option<Stop> {
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

/// What the error callback of one client has said that retrying cannot mend: the first refused
/// authentication since the client was made.
#[derive(Debug, Default)]
pub struct Refusals(Mutex<Option<Stop>>);

impl Refusals {
    /// Called from a client context's error callback.
    pub fn record(&self, error: &KafkaError, reason: &str) {
        if let Some(stop) = authentication_refused(error, reason) {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get_or_insert(stop);
        }
    }

    /// The recorded refusal, if any.
    pub fn get(&self) -> Option<Stop> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
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
    fn refused_authentication_is_recorded_once_and_outages_are_not() {
        let refusals = Refusals::default();
        refusals.record(
            &KafkaError::Global(RDKafkaErrorCode::AllBrokersDown),
            "1/1 brokers are down",
        );
        assert!(refusals.get().is_none());
        refusals.record(
            &KafkaError::Global(RDKafkaErrorCode::Authentication),
            "sasl_ssl://b:9093/bootstrap: SASL authentication error: invalid credentials",
        );
        refusals.record(
            &KafkaError::Global(RDKafkaErrorCode::SSL),
            "ssl://b:9093/bootstrap: SSL handshake failed",
        );
        let stop = refusals.get().unwrap();
        assert_eq!(stop.code, StopCode::KafkaAuthenticationFailed);
        assert_eq!(stop.details["layer"], "SASL");
        assert!(stop.message.contains("invalid credentials"), "{stop}");
    }
}
