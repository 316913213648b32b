//! The typed stops of `redoline-capture`.
//!
//! A stop code is API: the capture writes it into the pod's termination message, the operator
//! copies it into `status.lastStop` and the `Stalled` condition, dashboards alert on it and every
//! code has a runbook entry in `docs/runbook.md`. This table is the one place the code, its
//! CamelCase reason and its meaning are written down; capture, operator and the runbook test all
//! read it from here.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! stop_codes {
    ($($variant:ident = $code:literal, $summary:literal;)+) => {
        /// A typed stop: why the capture ended and needs an operator.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum StopCode {
            $(#[doc = $summary] $variant,)+
        }

        impl StopCode {
            /// Every stop code, in code order.
            pub const ALL: &'static [StopCode] = &[$(StopCode::$variant,)+];

            /// The code as written in messages and status, such as `CDC-4001`.
            pub const fn code(self) -> &'static str {
                match self { $(StopCode::$variant => $code,)+ }
            }

            /// The CamelCase reason used as the condition and Event reason.
            pub const fn reason(self) -> &'static str {
                match self { $(StopCode::$variant => stringify!($variant),)+ }
            }

            /// One sentence saying when this stop happens.
            pub const fn summary(self) -> &'static str {
                match self { $(StopCode::$variant => $summary,)+ }
            }
        }
    };
}

stop_codes! {
    InvalidConfiguration = "CDC-1001", "The configuration is invalid; the message names the field.";
    PrerequisitesNotMet = "CDC-1002", "A database prerequisite checked by `doctor` is not met; the message carries the statements that fix it.";
    DatabaseLoginRefused = "CDC-1003", "The database refused the capture user's login (wrong credentials, locked or expired account, no CREATE SESSION); the capture does not try the same credentials again.";
    KafkaAuthenticationFailed = "CDC-1004", "The Kafka brokers refused the capture's authentication (wrong credentials, an untrusted or mismatched certificate, a Kerberos ticket or OAuth token the broker refuses); the capture does not retry them.";
    SchemaRegistryAuthenticationFailed = "CDC-1005", "The schema registry refused the capture's credentials (HTTP 401 or 403), or its TLS certificate is not trusted; the capture does not retry them.";
    RedoMissing = "CDC-2001", "Redo needed to resume is no longer available; the message names the missing SCN range.";
    DictionaryMismatch = "CDC-2002", "Redo written before a DDL cannot be rendered with the current dictionary.";
    IncarnationMismatch = "CDC-2003", "The bookmark belongs to another database or PDB incarnation.";
    OracleClientMissing = "CDC-2004", "The Oracle client library cannot be loaded (DPI-1047).";
    DatabaseUnavailable = "CDC-2005", "The database could not be reached, or kept timing out, for the whole retry budget.";
    SpillIoError = "CDC-3001", "A spill file cannot be written or read for a reason other than a full volume.";
    SpillCorrupted = "CDC-3002", "A spill frame fails its CRC32 check or a spill file is truncated.";
    SpillCapacityExceeded = "CDC-4001", "The spill cap is exceeded or the spill volume is full.";
    JournalGap = "CDC-4002", "The journal of long transactions has a gap in its chunk numbers.";
    StagedRecordsExceeded = "CDC-4003", "A transaction, or all open transactions together, buffer more changes than allowed.";
    TransactionTooOld = "CDC-4004", "A transaction exceeded the maximum age and the age action is `fail`.";
    ProducerFenced = "CDC-5001", "Another instance with the same transactional id took over the Kafka producer.";
    BookmarkUnreadable = "CDC-5002", "The stored bookmark or journal cannot be read or decoded.";
    KafkaUnavailable = "CDC-5003", "The Kafka brokers could not be reached, or a Kafka transaction could not be completed, within the retry budget.";
    KafkaNotAuthorized = "CDC-5004", "The Kafka brokers refused an operation for lack of a permission (an ACL); the message names the resource and the operation.";
    SchemaRegistryUnavailable = "CDC-5005", "The schema registry could not be reached, answered with a server error or kept timing out for the whole retry budget; nothing was written without its schema.";
    UnsupportedChange = "CDC-6001", "LogMiner could not render a change and `onUnsupported` is `fail`.";
    PartialLobWrite = "CDC-6002", "A LOB write cannot be reassembled into a whole value.";
    SchemaIncompatible = "CDC-6003", "The schema registry refused a new key or value schema under the subject's compatibility rule; the message names the subject, the rule and the change that broke it.";
    SchemaNotRegistered = "CDC-6004", "Registration is off (`schemaRegistry.autoRegister: false`) and the subject does not have the schema a record needs; the message names the subject.";
    ReleasedTransactionCommitted = "CDC-7001", "A COMMIT arrived for a transaction that was released or discarded earlier.";
    OrphanedTransaction = "CDC-7002", "An orphaned transaction was found and the orphan action is `fail`.";
    ReleasedLedgerFull = "CDC-7003", "A transaction was to be released or discarded, but the released ledger already holds `transactions.releasedLedgerMaxEntries` entries not yet proven safe to forget.";
}

/// The shape of a stop code in the API (`status.lastStop.code`, `status.activeStop`): what the
/// CRD's schema enforces, and what the operator checks before it copies a code out of a
/// termination message. A newer capture may write a code this table does not know yet; it is
/// kept when it has this shape.
pub const STOP_CODE_PATTERN: &str = r"^CDC-[0-9]{4}$";

/// Whether `code` matches [`STOP_CODE_PATTERN`].
pub fn is_stop_code_shaped(code: &str) -> bool {
    code.strip_prefix("CDC-")
        .is_some_and(|digits| digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `reason` is a valid Kubernetes condition reason (`metav1.Condition`: CamelCase,
/// `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`, at most 1024 bytes). The apiserver refuses a whole
/// status with one bad reason, so a reason read from outside is checked first.
pub fn is_condition_reason(reason: &str) -> bool {
    let bytes = reason.as_bytes();
    let inner = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b',' | b':');
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            bytes.len() <= 1024
                && first.is_ascii_alphabetic()
                && (last.is_ascii_alphanumeric() || *last == b'_')
                && bytes.iter().all(inner)
        }
        _ => false,
    }
}

/// The text is not one of the codes in [`StopCode::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a redoline stop code (expected CDC-NNNN from the runbook)")]
pub struct UnknownStopCode(pub String);

impl FromStr for StopCode {
    type Err = UnknownStopCode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        StopCode::ALL
            .iter()
            .copied()
            .find(|c| c.code() == s)
            .ok_or_else(|| UnknownStopCode(s.to_owned()))
    }
}

impl fmt::Display for StopCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl Serialize for StopCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for StopCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_reasons_match_the_contract() {
        assert_eq!(StopCode::SpillCapacityExceeded.code(), "CDC-4001");
        assert_eq!(
            StopCode::SpillCapacityExceeded.reason(),
            "SpillCapacityExceeded"
        );
        assert_eq!(StopCode::ReleasedTransactionCommitted.code(), "CDC-7001");
        assert_eq!(StopCode::ReleasedLedgerFull.code(), "CDC-7003");
        assert_eq!(StopCode::ReleasedLedgerFull.reason(), "ReleasedLedgerFull");
        assert_eq!(StopCode::DatabaseUnavailable.code(), "CDC-2005");
        assert_eq!(StopCode::KafkaUnavailable.code(), "CDC-5003");
        assert_eq!(StopCode::KafkaAuthenticationFailed.code(), "CDC-1004");
        assert_eq!(StopCode::KafkaNotAuthorized.code(), "CDC-5004");
        assert_eq!(
            StopCode::SchemaRegistryAuthenticationFailed.code(),
            "CDC-1005"
        );
        assert_eq!(StopCode::SchemaRegistryUnavailable.code(), "CDC-5005");
        assert_eq!(StopCode::SchemaIncompatible.code(), "CDC-6003");
        assert_eq!(StopCode::SchemaNotRegistered.code(), "CDC-6004");
        assert_eq!(StopCode::ALL.len(), 28);
    }

    #[test]
    fn codes_are_unique_sorted_and_round_trip() {
        for pair in StopCode::ALL.windows(2) {
            assert!(pair[0].code() < pair[1].code(), "{pair:?} out of order");
        }
        for code in StopCode::ALL {
            assert_eq!(code.code().parse::<StopCode>(), Ok(*code));
            let json = serde_json::to_string(code).unwrap();
            assert_eq!(serde_json::from_str::<StopCode>(&json).unwrap(), *code);
        }
        assert!("CDC-9999".parse::<StopCode>().is_err());
    }

    #[test]
    fn every_code_and_reason_has_the_shape_the_api_accepts() {
        for code in StopCode::ALL {
            assert!(is_stop_code_shaped(code.code()), "{code}");
            assert!(is_condition_reason(code.reason()), "{code}");
        }
        assert!(is_stop_code_shaped("CDC-9999"));
        for bad in [
            "CDC-",
            "CDC-12",
            "CDC-12345",
            "CDC-12a4",
            "cdc-1001",
            "XCDC-1001",
            "",
        ] {
            assert!(!is_stop_code_shaped(bad), "{bad:?}");
        }
        for good in ["A", "Spill_Full", "Kafka:Down", "a1"] {
            assert!(is_condition_reason(good), "{good:?}");
        }
        for bad in [
            "",
            "spill full",
            "1Spill",
            "Spill,",
            "Spill-Full",
            &"A".repeat(1025),
        ] {
            assert!(!is_condition_reason(bad), "{bad:?}");
        }
    }
}
