//! The capture's one error: every way a command can end early, and what follows from each.
//!
//! Each part of the capture keeps its own error type (the boundary's [`SourceError`], the
//! buffer's [`BufferError`], the sinks', the encoder's ...), and each knows its typed stop. They
//! meet here, unconverted, so that a failure keeps its cause up to the one place that decides
//! what happens next: [`CaptureError::disposition`], an exhaustive match. Adding a variant
//! without deciding its disposition does not compile.
//!
//! - [`Disposition::Retry`]: a transient fault of the database or of Kafka ends one attempt, not
//!   the run; the run starts again from the bookmark within its budget ([`crate::outage`]).
//! - [`Disposition::Stop`]: a typed stop (`CDC-NNNN`); the operator must act, and the stop is
//!   written to the termination message.
//! - [`Disposition::Restart`]: anything else (a state no operator action is documented for, or a
//!   bug): the process exits with [`crate::exit::INTERNAL_ERROR`] and Kubernetes starts it again,
//!   from the bookmark.

use redoline_crds::quantity::QuantityError;

use crate::assemble::AssembleError;
use crate::buffer::BufferError;
use crate::config::ConfigError;
use crate::event::EncodeError;
use crate::registry::RegistryError;
use crate::sink::bookmark::CommitOutOfOrder;
use crate::sink::file::FileSinkError;
use crate::sink::journal;
use crate::sink::{OutputError, SinkError};
use crate::source::SourceError;
use crate::stop::Stop;

/// A command of the capture that cannot go on. See the module documentation.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// A typed stop found where it happened.
    #[error("{0}")]
    Stop(Box<Stop>),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Source(#[from] SourceError),
    /// Boxed, as [`Self::Sink`] is: the two largest causes would double every `Result`'s size.
    #[error(transparent)]
    Buffer(Box<BufferError>),
    #[error(transparent)]
    FileSink(#[from] FileSinkError),
    #[error(transparent)]
    Sink(Box<SinkError>),
    #[error("encoding an event failed: {0}")]
    Encode(#[from] EncodeError),
    /// The schema registry gave no id for a schema a record needs (`format.encoding: avro`).
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Assemble(#[from] AssembleError),
    #[error("writing to the journal failed: {0}")]
    Journal(#[from] journal::EncodeError),
    #[error(transparent)]
    CommitOutOfOrder(#[from] CommitOutOfOrder),
    #[error("the bookmark cannot be written as JSON: {0}")]
    BookmarkJson(#[source] serde_json::Error),
    #[error("the stored released ledger cannot be read: {0}")]
    LedgerUnreadable(#[source] serde_json::Error),
    #[error("a size of the configuration cannot be read: {0}")]
    Quantity(#[from] QuantityError),
    #[error("the metrics cannot be registered: {0}")]
    Metrics(#[from] prometheus::Error),
    #[error("the configuration names no sink (kafka or file)")]
    NoSink,
    #[error("the Kafka sink's metrics are not registered")]
    KafkaMetricsUnregistered,
    #[error("the database lists no redo log")]
    NoRedoLog,
    #[error(
        "the snapshot in progress reads {table}, which the capture no longer selects \
         (spec.tables, spec.filters); put it back until the snapshot completes, or reset the \
         bookmark to start a new snapshot"
    )]
    SnapshotTableUnselected { table: String },
    #[error("cannot start the runtime: {0}")]
    Runtime(#[source] std::io::Error),
    #[error("cannot listen on port {port}: {source}")]
    Listen {
        port: u16,
        #[source]
        source: std::io::Error,
    },
}

impl From<Stop> for CaptureError {
    fn from(stop: Stop) -> Self {
        Self::Stop(Box::new(stop))
    }
}

impl From<BufferError> for CaptureError {
    fn from(error: BufferError) -> Self {
        Self::Buffer(Box::new(error))
    }
}

impl From<OutputError> for CaptureError {
    fn from(error: OutputError) -> Self {
        match error {
            OutputError::File(error) => Self::FileSink(error),
            OutputError::Kafka(error) => Self::Sink(error),
            OutputError::BookmarkJson(error) => Self::BookmarkJson(error),
        }
    }
}

impl From<SinkError> for CaptureError {
    fn from(error: SinkError) -> Self {
        Self::Sink(Box::new(error))
    }
}

/// What follows from a [`CaptureError`].
#[derive(Clone, Debug, PartialEq)]
pub enum Disposition {
    /// Start again from the bookmark after a pause; `cause` labels
    /// `redoline_capture_retries_total`, and `outage` names the stop of a spent budget.
    Retry { cause: &'static str, outage: Outage },
    /// A typed stop: the operator must act.
    Stop(Stop),
    /// The process fails and is started again.
    Restart,
}

/// Whose outage a run of retries rides out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outage {
    /// CDC-2005 once the budget is spent.
    Database,
    /// CDC-5003 once the budget is spent.
    Kafka,
    /// CDC-5005 once the budget is spent.
    SchemaRegistry,
}

/// What follows from a schema registry's error, wherever it surfaces (here, or inside the
/// encoder's error): an unreachable registry is retried like the database, since the record
/// waiting for its schema id was not written and the run resumes from the bookmark; the other
/// causes stop, or restart for a schema the registry finds invalid (a bug of the encoder).
pub fn registry_disposition(error: &RegistryError) -> Disposition {
    if error.is_transient() {
        return Disposition::Retry {
            cause: "schema_registry_unavailable",
            outage: Outage::SchemaRegistry,
        };
    }
    error.stop().map_or(Disposition::Restart, Disposition::Stop)
}

impl CaptureError {
    /// What follows from this error. See the module documentation.
    pub fn disposition(&self) -> Disposition {
        let stop_or_restart =
            |stop: Option<Stop>| stop.map_or(Disposition::Restart, Disposition::Stop);
        match self {
            Self::Stop(stop) => Disposition::Stop((**stop).clone()),
            Self::Config(error) => Disposition::Stop(error.stop()),
            Self::Source(error) => match (error.stop(), error.retry_cause()) {
                (Some(stop), _) => Disposition::Stop(stop),
                (None, Some(cause)) => Disposition::Retry {
                    cause,
                    outage: Outage::Database,
                },
                (None, None) => Disposition::Restart,
            },
            Self::Buffer(error) => stop_or_restart(error.stop()),
            Self::FileSink(error) => stop_or_restart(error.stop()),
            Self::Sink(error) => match (error.stop(), &**error) {
                (Some(stop), _) => Disposition::Stop(stop),
                (None, SinkError::PageAborted { .. }) => Disposition::Retry {
                    cause: "kafka_page_aborted",
                    outage: Outage::Kafka,
                },
                (None, _) => Disposition::Restart,
            },
            // A configured key column the table lacks is the config's fault.
            Self::Encode(error @ EncodeError::UnknownKeyColumn { .. }) => Disposition::Stop(
                ConfigError::new("columns.messageKeyColumns", error.to_string()).stop(),
            ),
            // The registry's answer decides, whether the encoder or the client met it.
            Self::Encode(EncodeError::Registry(error)) | Self::Registry(error) => {
                registry_disposition(error)
            }
            Self::Encode(_) => Disposition::Restart,
            Self::Assemble(error) => Disposition::Stop(error.stop()),
            Self::Journal(_)
            | Self::CommitOutOfOrder(_)
            | Self::BookmarkJson(_)
            | Self::LedgerUnreadable(_)
            | Self::Quantity(_)
            | Self::Metrics(_)
            | Self::NoSink
            | Self::KafkaMetricsUnregistered
            | Self::NoRedoLog
            | Self::SnapshotTableUnselected { .. }
            | Self::Runtime(_)
            | Self::Listen { .. } => Disposition::Restart,
        }
    }

    /// The typed stop, when the disposition is one.
    pub fn stop(&self) -> Option<Stop> {
        match self.disposition() {
            Disposition::Stop(stop) => Some(stop),
            Disposition::Retry { .. } | Disposition::Restart => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use redoline_crds::StopCode;

    use super::*;

    #[test]
    fn transient_faults_are_retried_naming_their_outage() {
        let timeout = CaptureError::from(SourceError::Timeout {
            call: "start LogMiner",
            seconds: 30,
        });
        assert_eq!(
            timeout.disposition(),
            Disposition::Retry {
                cause: "database_timeout",
                outage: Outage::Database
            }
        );
        let timed_out = || {
            rdkafka::error::KafkaError::MessageProduction(
                rdkafka::types::RDKafkaErrorCode::MessageTimedOut,
            )
        };
        let aborted = CaptureError::from(SinkError::PageAborted {
            action: "commit a page",
            source: timed_out(),
        });
        assert_eq!(
            aborted.disposition(),
            Disposition::Retry {
                cause: "kafka_page_aborted",
                outage: Outage::Kafka
            }
        );
        // A record Kafka refuses outright fails the process instead.
        let refused = CaptureError::from(SinkError::Kafka {
            action: "write a page",
            source: timed_out(),
        });
        assert_eq!(refused.disposition(), Disposition::Restart);
    }

    #[test]
    fn registry_faults_are_retried_or_stop_by_their_cause() {
        let down = CaptureError::from(RegistryError::Unavailable {
            url: "http://registry:8081".to_owned(),
            reason: "Connection refused".to_owned(),
        });
        assert_eq!(
            down.disposition(),
            Disposition::Retry {
                cause: "schema_registry_unavailable",
                outage: Outage::SchemaRegistry
            }
        );
        // The encoder meets the registry when a table's schemas are first needed: same answer.
        let down_while_encoding =
            CaptureError::from(EncodeError::Registry(RegistryError::Unavailable {
                url: "http://registry:8081".to_owned(),
                reason: "Connection refused".to_owned(),
            }));
        assert_eq!(down_while_encoding.disposition(), down.disposition());
        let code = |error: RegistryError| CaptureError::from(error).stop().map(|stop| stop.code);
        assert_eq!(
            code(RegistryError::AuthenticationFailed {
                url: "u".to_owned(),
                reason: "HTTP 401".to_owned()
            }),
            Some(StopCode::SchemaRegistryAuthenticationFailed)
        );
        let incompatible = CaptureError::from(RegistryError::Incompatible {
            subject: "orders.APP.T-value".to_owned(),
            rule: "FULL".to_owned(),
            reason: "The field 'NOTE' in the new schema has no default value".to_owned(),
        })
        .stop();
        assert_eq!(
            incompatible.as_ref().map(|stop| stop.code),
            Some(StopCode::SchemaIncompatible)
        );
        assert!(incompatible.is_some_and(|stop| {
            ["orders.APP.T-value", "FULL", "'NOTE'"]
                .iter()
                .all(|part| stop.message.contains(part))
        }));
        assert_eq!(
            code(RegistryError::NotRegistered {
                subject: "t-key".to_owned()
            }),
            Some(StopCode::SchemaNotRegistered)
        );
        assert_eq!(
            code(RegistryError::NotARegistry {
                url: "u".to_owned(),
                reason: "HTTP 404".to_owned()
            }),
            Some(StopCode::InvalidConfiguration)
        );
        let invalid = CaptureError::from(RegistryError::InvalidSchema {
            subject: "s".to_owned(),
            reason: "HTTP 422".to_owned(),
        });
        assert_eq!(invalid.disposition(), Disposition::Restart);
    }

    #[test]
    fn errors_with_a_typed_stop_stop_and_the_rest_restart() {
        let missing = CaptureError::from(SourceError::NoSuchTable {
            owner: "APP".to_owned(),
            table: "T".to_owned(),
        });
        assert_eq!(
            missing.stop().map(|stop| stop.code),
            Some(StopCode::InvalidConfiguration)
        );
        let key = CaptureError::from(EncodeError::UnknownKeyColumn {
            table: "APP.T".to_owned(),
            column: "C".to_owned(),
        });
        let stop = key.stop();
        assert_eq!(
            stop.as_ref().map(|stop| stop.code),
            Some(StopCode::InvalidConfiguration)
        );
        assert!(
            stop.is_some_and(|stop| stop.message.contains("columns.messageKeyColumns")),
            "the stop names the field"
        );
        let malformed = CaptureError::from(SourceError::Malformed {
            what: "V$DATABASE".to_owned(),
            message: "no row".to_owned(),
        });
        assert_eq!(malformed.disposition(), Disposition::Restart);
        assert_eq!(CaptureError::NoRedoLog.disposition(), Disposition::Restart);
    }
}
