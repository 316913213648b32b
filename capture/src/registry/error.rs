//! Why a schema has no id, and what follows from each cause.
//!
//! | cause | what follows |
//! |---|---|
//! | not reached, a timeout, HTTP 5xx, 408 or 429 ([`RegistryError::Unavailable`]) | transient: the run starts again from the bookmark with backoff; CDC-5005 once the retry budget is spent |
//! | HTTP 401 or 403, or an untrusted certificate ([`RegistryError::AuthenticationFailed`]) | CDC-1005 at once |
//! | HTTP 409: the subject's compatibility rule refuses the schema ([`RegistryError::Incompatible`]) | CDC-6003 naming the subject, the rule and the change |
//! | lookup only and the subject lacks the schema ([`RegistryError::NotRegistered`]) | CDC-6004 naming the subject |
//! | HTTP 422: the registry finds the schema invalid ([`RegistryError::InvalidSchema`]) | a restart: the encoder made a schema the registry cannot read, a bug |
//! | an answer no Schema Registry API gives ([`RegistryError::NotARegistry`]) | CDC-1001 naming `schemaRegistry.url`: it is not the API's root |
//!
//! Nothing is written without its schema in any case: the encoder asks for the id before it
//! makes the record, and the error ends the run before the record reaches the sink.

use redoline_crds::StopCode;

use crate::stop::Stop;

/// Why a schema has no id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Registration is off (`autoRegister: false`) and the subject has no such schema.
    #[error(
        "the schema registry has no schema like this one under subject {subject}, and \
         registration is off (schemaRegistry.autoRegister: false); register it, or turn \
         registration on"
    )]
    NotRegistered { subject: String },
    /// The registry refused the schema under its compatibility rule for the subject.
    #[error("the schema registry refused the new schema of subject {subject} ({rule}): {reason}")]
    Incompatible {
        subject: String,
        rule: String,
        reason: String,
    },
    /// The registry could not be reached, timed out or failed on its side.
    #[error("the schema registry at {url} is unavailable: {reason}")]
    Unavailable { url: String, reason: String },
    /// The registry refused the credentials, or its certificate is not trusted.
    #[error("the schema registry at {url} refused the capture: {reason}")]
    AuthenticationFailed { url: String, reason: String },
    /// The registry cannot read the schema the encoder made.
    #[error("the schema registry finds the schema of subject {subject} invalid: {reason}")]
    InvalidSchema { subject: String, reason: String },
    /// An answer that is not the Schema Registry API's.
    #[error(
        "{url} did not answer as a Confluent-compatible schema registry API ({reason}); \
         schemaRegistry.url must be the API's root (Apicurio: .../apis/ccompat/v7)"
    )]
    NotARegistry { url: String, reason: String },
}

impl RegistryError {
    /// Whether the fault may pass: retried, with CDC-5005 once the budget is spent.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Unavailable { .. })
    }

    /// The typed stop, for the causes an operator must act on.
    pub fn stop(&self) -> Option<Stop> {
        let message = self.to_string();
        Some(match self {
            Self::NotRegistered { subject } => Stop::new(StopCode::SchemaNotRegistered, message)
                .with_detail("subject", subject.clone()),
            Self::Incompatible {
                subject,
                rule,
                reason,
            } => Stop::new(
                StopCode::SchemaIncompatible,
                format!(
                    "{message}. Make the change compatible (a new column needs a default to be \
                     BACKWARD compatible, and under FORWARD or FULL no column may be dropped or \
                     added without one), or have the subject's owner change its compatibility \
                     rule; the capture resumes from the bookmark"
                ),
            )
            .with_detail("subject", subject.clone())
            .with_detail("compatibility", rule.clone())
            .with_detail("reason", reason.clone()),
            Self::AuthenticationFailed { url, .. } => {
                Stop::new(StopCode::SchemaRegistryAuthenticationFailed, message)
                    .with_detail("url", url.clone())
            }
            Self::NotARegistry { url, .. } => Stop::new(StopCode::InvalidConfiguration, message)
                .with_detail("field", "schemaRegistry.url")
                .with_detail("url", url.clone()),
            Self::Unavailable { .. } | Self::InvalidSchema { .. } => return None,
        })
    }
}
