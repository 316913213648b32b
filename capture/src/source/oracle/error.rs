//! Oracle and ODPI-C errors, classified once into [`SourceError`].
//!
//! The classification is a pure function of the codes and message so it is tested without a
//! client library. Transient classes (unreachable, timed out, log switched under the reader) are
//! retried by the caller; the rest either become a typed stop or carry their `ORA-` code upward.

use crate::source::SourceError;

/// The facts of one failure: the `ORA-` number, the `DPI-` number, and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub ora: Option<i32>,
    pub dpi: Option<i32>,
    pub message: String,
}

impl From<&oracle::Error> for Failure {
    fn from(error: &oracle::Error) -> Self {
        Self {
            ora: error.oci_code(),
            dpi: error.dpi_code(),
            message: error.to_string(),
        }
    }
}

/// ODPI-C: the client library cannot be loaded (1047) or is too old (1072).
const DPI_CLIENT_MISSING: [i32; 2] = [1047, 1072];
/// ODPI-C: the call timeout expired.
const DPI_CALL_TIMEOUT: i32 = 1067;
/// ODPI-C: not connected (1010), connection closed (1080).
const DPI_DISCONNECTED: [i32; 2] = [1010, 1080];
/// ORA-03156: OCI call timed out.
const ORA_CALL_TIMEOUT: i32 = 3156;
/// Connection lost or refused, instance down or starting, listener problems.
const ORA_UNAVAILABLE: [i32; 14] = [
    1033, 1034, 1089, 1090, 1092, 3113, 3114, 3135, 12170, 12514, 12528, 12537, 12541, 12547,
];
/// ORA-00310: an online log was reused by a log switch while it was mined.
pub const ORA_LOG_SWITCHED: i32 = 310;
/// ORA-01291: missing log file (LogMiner has no log for part of the window).
pub const ORA_MISSING_LOGFILE: i32 = 1291;
/// ORA-01307: no LogMiner session is active (ending twice).
pub const ORA_NO_LOGMINER_SESSION: i32 = 1307;
/// ORA-00942: table or view does not exist (GV$ not granted, flush table missing).
pub const ORA_NO_SUCH_TABLE: i32 = 942;
/// ORA-08181: not a valid SCN (outside SCN_TO_TIMESTAMP's mapping).
pub const ORA_INVALID_SCN: i32 = 8181;
/// ORA-01555: snapshot too old (flashback past the undo retention).
pub const ORA_SNAPSHOT_TOO_OLD: i32 = 1555;

/// Classifies a failure of `call`; `timeout_seconds` is the configured call timeout.
pub fn classify(call: &'static str, failure: &Failure, timeout_seconds: u64) -> SourceError {
    if let Some(dpi) = failure.dpi {
        if DPI_CLIENT_MISSING.contains(&dpi) {
            return SourceError::ClientMissing {
                message: failure.message.clone(),
            };
        }
        if dpi == DPI_CALL_TIMEOUT {
            return SourceError::Timeout {
                call,
                seconds: timeout_seconds,
            };
        }
        if DPI_DISCONNECTED.contains(&dpi) {
            return SourceError::Unavailable {
                message: failure.message.clone(),
            };
        }
    }
    match failure.ora {
        Some(ORA_CALL_TIMEOUT) => SourceError::Timeout {
            call,
            seconds: timeout_seconds,
        },
        Some(code) if ORA_UNAVAILABLE.contains(&code) => SourceError::Unavailable {
            message: failure.message.clone(),
        },
        Some(ORA_LOG_SWITCHED) => SourceError::LogSwitched {
            message: failure.message.clone(),
        },
        code => SourceError::Database {
            call,
            code: code.map(|code| format!("ORA-{code:05}")),
            message: failure.message.clone(),
        },
    }
}

/// A failed heartbeat action query: what the database refused is the user's statement (CDC-1001
/// naming the field); a lost connection or a timeout stays transient.
pub fn action_query_failure(error: SourceError) -> SourceError {
    match error {
        SourceError::Database { message, .. } => SourceError::ActionQueryRefused { message },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_action_query_names_the_field_and_a_lost_connection_is_retried() {
        let refused = action_query_failure(classify(
            "heartbeat action query",
            &failure(Some(942), None, "ORA-00942: table or view does not exist"),
            600,
        ));
        let stop = refused.stop().unwrap();
        assert_eq!(stop.code, redoline_crds::StopCode::InvalidConfiguration);
        assert!(
            stop.message.starts_with("spec.heartbeat.actionQuery:")
                && stop.message.contains("ORA-00942"),
            "{}",
            stop.message
        );
        let lost = action_query_failure(classify(
            "heartbeat action query",
            &failure(
                Some(3113),
                None,
                "ORA-03113: end-of-file on communication channel",
            ),
            600,
        ));
        assert!(lost.is_transient(), "{lost}");
    }

    fn failure(ora: Option<i32>, dpi: Option<i32>, message: &str) -> Failure {
        Failure {
            ora,
            dpi,
            message: message.to_owned(),
        }
    }

    #[test]
    fn missing_client_library_is_the_typed_stop_with_install_guidance() {
        let error = classify(
            "connect",
            &failure(
                None,
                Some(1047),
                "DPI-1047: Cannot locate a 64-bit Oracle Client library: \"libclntsh.so: cannot open shared object file\"",
            ),
            30,
        );
        assert!(matches!(error, SourceError::ClientMissing { .. }));
        let stop = error.stop().unwrap();
        assert_eq!(stop.code.code(), "CDC-2004");
        assert!(
            stop.message.contains("Instant Client") && stop.message.contains("LD_LIBRARY_PATH")
        );
    }

    #[test]
    fn transient_failures_are_retried_not_stopped() {
        for error in [
            classify(
                "query",
                &failure(
                    None,
                    Some(1067),
                    "DPI-1067: call timeout of 30000 ms exceeded",
                ),
                30,
            ),
            classify(
                "query",
                &failure(
                    Some(3113),
                    None,
                    "ORA-03113: end-of-file on communication channel",
                ),
                30,
            ),
            classify(
                "query",
                &failure(
                    None,
                    Some(1080),
                    "DPI-1080: connection was closed by ORA-3113",
                ),
                30,
            ),
            classify(
                "fetch",
                &failure(
                    Some(310),
                    None,
                    "ORA-00310: archived log contains sequence 7; sequence 6 required",
                ),
                30,
            ),
        ] {
            assert!(error.is_transient(), "{error}");
            assert_eq!(error.stop(), None);
        }
        assert_eq!(
            classify("query", &failure(Some(3156), None, "ORA-03156"), 12),
            SourceError::Timeout {
                call: "query",
                seconds: 12
            }
        );
    }

    #[test]
    fn other_errors_keep_their_code() {
        let error = classify(
            "privileges",
            &failure(Some(1031), None, "ORA-01031: insufficient privileges"),
            30,
        );
        assert_eq!(
            error,
            SourceError::Database {
                call: "privileges",
                code: Some("ORA-01031".to_owned()),
                message: "ORA-01031: insufficient privileges".to_owned()
            }
        );
        assert!(!error.is_transient());
    }
}
