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
/// Connection lost or refused, instance down or starting, listener problems; a session killed
/// (00028), logged off (01012), idle too long (02396) or ended by an internal error (00603); the
/// listener out of handlers (12516, 12519, 12520) or not knowing the instance a RAC flush session
/// names (12521: down, or not registered yet); the instance out of shared memory (04031);
/// LogMiner unable to open or read a log it was given, as while a log is being archived (01284,
/// 01343). Debezium's `OracleErrorHandler` retries 01089, 01284, 01343, 03135 and 04030 of these;
/// the others are sessions and listeners Oracle documents as ended or busy, not as failed calls.
/// A server process out of its own memory (04030) is transient too, but answered in place with
/// a fresh mining session ([`SourceError::SessionMemory`]) before a restart from the bookmark.
const ORA_UNAVAILABLE: [i32; 26] = [
    28, 603, 1012, 1033, 1034, 1089, 1090, 1092, 1284, 1343, 2396, 3113, 3114, 3135, 4031, 12170,
    12514, 12516, 12519, 12520, 12521, 12528, 12537, 12541, 12547, 12571,
];
/// The login itself refused: invalid username or password (01017), account locked (28000),
/// password expired (28001), no CREATE SESSION (01045). Retrying the same credentials cannot
/// succeed, and every failed attempt counts toward the profile's `FAILED_LOGIN_ATTEMPTS`, after
/// which Oracle locks the account: these are typed stops at once (CDC-1003).
const ORA_LOGIN_REFUSED: [i32; 4] = [1017, 1045, 28000, 28001];
/// ORA-00310: an online log was reused by a log switch while it was mined.
pub const ORA_LOG_SWITCHED: i32 = 310;
/// ORA-04030: the server process ran out of memory (PGA) for an allocation: in a LogMiner
/// session, the session's memory has outgrown what the process may take.
const ORA_OUT_OF_PROCESS_MEMORY: i32 = 4030;
/// ORA-01284: a file LogMiner was given cannot be opened.
pub const ORA_CANNOT_OPEN_LOG: i32 = 1284;
/// ORA-00308: cannot open archived log.
pub const ORA_CANNOT_OPEN_ARCHIVED_LOG: i32 = 308;
/// ORA-01291: missing log file (LogMiner has no log for part of the window).
pub const ORA_MISSING_LOGFILE: i32 = 1291;
/// ORA-01307: no LogMiner session is active (ending twice).
pub const ORA_NO_LOGMINER_SESSION: i32 = 1307;
/// ORA-00942: table or view does not exist (GV$ not granted, flush table missing).
pub const ORA_NO_SUCH_TABLE: i32 = 942;
/// ORA-01031: insufficient privileges (a container switch without SET CONTAINER).
pub const ORA_INSUFFICIENT_PRIVILEGES: i32 = 1031;
/// ORA-01950: no privileges on tablespace (the user has no quota there).
pub const ORA_NO_TABLESPACE_QUOTA: i32 = 1950;
/// ORA-01536: space quota exceeded for tablespace.
pub const ORA_QUOTA_EXCEEDED: i32 = 1536;
/// ORA-65040: operation not allowed from within a pluggable database (LogMiner in a PDB before
/// 21c).
pub const ORA_NOT_ALLOWED_IN_PDB: i32 = 65040;
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
        Some(ORA_OUT_OF_PROCESS_MEMORY) => SourceError::SessionMemory {
            message: failure.message.clone(),
        },
        Some(code) if ORA_LOGIN_REFUSED.contains(&code) => SourceError::LoginRefused {
            code: format!("ORA-{code:05}"),
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
    fn a_refused_login_is_a_typed_stop_never_a_retry() {
        for (code, message) in [
            (1017, "ORA-01017: invalid username/password; logon denied"),
            (28000, "ORA-28000: The account is locked."),
            (28001, "ORA-28001: the password has expired"),
            (
                1045,
                "ORA-01045: user REDOLINE lacks CREATE SESSION privilege; logon denied",
            ),
        ] {
            let error = classify("connect", &failure(Some(code), None, message), 30);
            assert!(!error.is_transient(), "{error}");
            let stop = error.stop().unwrap();
            assert_eq!(stop.code, redoline_crds::StopCode::DatabaseLoginRefused);
            assert!(
                stop.message.contains(message) && stop.message.contains("credentialsSecret"),
                "{}",
                stop.message
            );
        }
    }

    #[test]
    fn sessions_ended_by_the_database_and_busy_listeners_are_retried() {
        for code in [
            28, 603, 1012, 1284, 1343, 2396, 4030, 4031, 12516, 12519, 12520,
        ] {
            let error = classify("query", &failure(Some(code), None, "ORA-"), 30);
            assert!(error.is_transient(), "ORA-{code:05}: {error}");
        }
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
