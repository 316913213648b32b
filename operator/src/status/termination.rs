//! Reading the capture's termination message: the one JSON object a typed stop writes
//! (`{"code","reason","message","at","details"}`, at most 4096 bytes), also written by `doctor` with
//! code CDC-1002 and `details.checks`.
//!
//! Kubernetes hands the operator whatever the file held, so anything else (an empty message, a
//! truncated or foreign text) is kept as an unreadable report rather than trusted or dropped.

use redoline_crds::capture::TerminationMessage;
use redoline_crds::v1alpha1::Position;
use redoline_crds::{StopCode, is_condition_reason, is_stop_code_shaped};
use serde::Deserialize;
use serde_json::Value;

/// A typed stop as reported in a termination message.
#[derive(Clone, Debug, PartialEq)]
pub struct StopReport {
    /// The code as written; [`StopReport::stop_code`] gives it typed when it is a known one.
    pub code: String,
    pub reason: String,
    pub message: String,
    /// RFC 3339 time of the stop, as written by the capture.
    pub at: Option<String>,
    pub details: Value,
}

/// A failing prerequisite from a CDC-1002 report.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct FailedCheck {
    pub name: String,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub fix: String,
}

impl StopReport {
    /// Reads a termination message; `None` when it is not a stop report.
    pub fn parse(text: &str) -> Option<Self> {
        let wire: TerminationMessage = serde_json::from_str(text.trim()).ok()?;
        // The status takes only what the CRD and the condition schema accept: one bad field
        // would make the apiserver refuse the whole status.
        if !is_stop_code_shaped(&wire.code) {
            return None;
        }
        let reason = match wire.code.parse::<StopCode>() {
            Ok(code) => code.reason().to_owned(),
            Err(_) if is_condition_reason(&wire.reason) => wire.reason,
            Err(_) => "UnknownStop".to_owned(),
        };
        Some(Self {
            code: wire.code,
            reason,
            message: wire.message,
            at: wire.at,
            details: wire.details,
        })
    }

    /// Where the capture stood when it stopped (`details.position`, as on `/status`), when it
    /// had read its bookmark.
    pub fn position(&self) -> Option<Position> {
        let position: Position =
            serde_json::from_value(self.details.get("position")?.clone()).ok()?;
        position.commit_scn.is_some().then_some(position)
    }

    pub fn stop_code(&self) -> Option<StopCode> {
        self.code.parse().ok()
    }

    /// The failing checks of a CDC-1002 report, in report order.
    pub fn failed_checks(&self) -> Vec<FailedCheck> {
        let Some(checks) = self.details.get("checks").and_then(Value::as_array) else {
            return Vec::new();
        };
        checks
            .iter()
            .filter(|c| c.get("ok").and_then(Value::as_bool) == Some(false))
            .filter_map(|c| serde_json::from_value(c.clone()).ok())
            .collect()
    }

    /// The condition message: the code first, then the capture's message, then what the details
    /// name (the failing checks with their fixes, the largest open transactions).
    pub fn condition_message(&self) -> String {
        let mut message = format!("{}: {}", self.code, self.message);
        for check in self.failed_checks() {
            message.push_str(&format!("\n- {}: {}", check.name, check.message));
            if !check.fix.is_empty() {
                message.push_str(&format!(" Fix: {}", check.fix));
            }
        }
        if let Some(transactions) = self.details.get("transactions").and_then(Value::as_array) {
            message.push_str("\nLargest open transactions:");
            for tx in transactions.iter().take(10) {
                let field = |k: &str| tx.get(k).map(value_text).unwrap_or_else(|| "?".into());
                message.push_str(&format!(
                    "\n- xid {} user {} first SCN {}: {} events, {} heap bytes, {} disk bytes",
                    field("xid"),
                    field("user"),
                    field("firstScn"),
                    field("events"),
                    field("heapBytes"),
                    field("diskBytes"),
                ));
            }
        }
        message
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_spill_stop_with_its_transactions() {
        let text = r#"{"code":"CDC-4001","reason":"SpillCapacityExceeded","message":"spill cap of 10Gi exceeded","at":"2026-11-29T10:00:00Z","details":{"transactions":[{"xid":"0a001b00c2030000","user":"BATCH","firstScn":1200,"events":5000000,"heapBytes":1024,"diskBytes":10737418240}]}}"#;
        let stop = StopReport::parse(text).unwrap();
        assert_eq!(stop.stop_code(), Some(StopCode::SpillCapacityExceeded));
        assert_eq!(
            stop.condition_message(),
            "CDC-4001: spill cap of 10Gi exceeded\nLargest open transactions:\n- xid 0a001b00c2030000 user BATCH first SCN 1200: 5000000 events, 1024 heap bytes, 10737418240 disk bytes"
        );
    }

    #[test]
    fn lists_failing_prerequisites_with_their_fixes() {
        let text = r#"{"code":"CDC-1002","reason":"PrerequisitesNotMet","message":"2 of 5 checks failed","at":"2026-11-29T10:00:00Z","details":{"checks":[
            {"name":"archivelog","ok":true,"message":"ARCHIVELOG mode","fix":""},
            {"name":"supplemental_logging","ok":false,"message":"minimal supplemental logging is off","fix":"ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;"},
            {"name":"table_logging:SALES.ORDERS","ok":false,"message":"no ALL COLUMNS log group","fix":"ALTER TABLE SALES.ORDERS ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;"}]}}"#;
        let stop = StopReport::parse(text).unwrap();
        assert_eq!(stop.failed_checks().len(), 2);
        let message = stop.condition_message();
        assert!(message.starts_with("CDC-1002: 2 of 5 checks failed\n- supplemental_logging"));
        assert!(
            message
                .contains("Fix: ALTER TABLE SALES.ORDERS ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;")
        );
        assert!(!message.contains("archivelog"));
    }

    #[test]
    fn the_codes_added_since_the_contracts_are_known_stops() {
        for (text, code, reason) in [
            (
                r#"{"code":"CDC-2005","reason":"DatabaseUnavailable","message":"the database could not be used for 900 s","details":{"attempts":19}}"#,
                StopCode::DatabaseUnavailable,
                "DatabaseUnavailable",
            ),
            (
                r#"{"code":"CDC-5003","reason":"KafkaUnavailable","message":"gave up trying to commit a page"}"#,
                StopCode::KafkaUnavailable,
                "KafkaUnavailable",
            ),
            (
                r#"{"code":"CDC-7003","reason":"ReleasedLedgerFull","message":"the released ledger is full","details":{"limit":4096}}"#,
                StopCode::ReleasedLedgerFull,
                "ReleasedLedgerFull",
            ),
        ] {
            let stop = StopReport::parse(text).unwrap();
            assert_eq!(stop.stop_code(), Some(code));
            assert_eq!(stop.reason, reason);
        }
    }

    #[test]
    fn a_stop_names_where_the_capture_stood() {
        let text = r#"{"code":"CDC-6001","reason":"UnsupportedChange","message":"m","details":{"position":{"commitScn":9000,"restartScn":8900,"commitTime":"2026-11-29T09:59:40Z"}}}"#;
        let position = StopReport::parse(text).unwrap().position().unwrap();
        assert_eq!(
            (position.commit_scn, position.restart_scn),
            (Some(9000), Some(8900))
        );
        assert_eq!(
            position.commit_time.map(|t| t.0.to_string()),
            Some("2026-11-29T09:59:40Z".to_owned())
        );
        // None, or one that cannot be read: no position.
        for details in [
            r#"{}"#,
            r#"{"position":{"commitScn":"x"}}"#,
            r#"{"position":{}}"#,
        ] {
            let text = format!(
                r#"{{"code":"CDC-6001","reason":"UnsupportedChange","message":"m","details":{details}}}"#
            );
            assert_eq!(
                StopReport::parse(&text).unwrap().position(),
                None,
                "{details}"
            );
        }
    }

    #[test]
    fn unknown_codes_keep_their_reason_and_junk_is_not_a_stop() {
        let stop = StopReport::parse(r#"{"code":"CDC-8001","reason":"FutureThing","message":"m"}"#)
            .unwrap();
        assert_eq!(stop.stop_code(), None);
        assert_eq!(stop.reason, "FutureThing");
        assert_eq!(StopReport::parse(""), None);
        assert_eq!(StopReport::parse("panicked at src/main.rs"), None);
        assert_eq!(StopReport::parse(r#"{"code":"E42"}"#), None);
    }

    #[test]
    fn only_what_the_crd_accepts_reaches_the_status() {
        // The CRD requires ^CDC-[0-9]{4}$: a code of another shape would fail the status write.
        for code in ["CDC-", "CDC-12345", "CDC-ABCD", "CDC-1001 "] {
            let text = format!(r#"{{"code":"{code}","reason":"X","message":"m"}}"#);
            assert_eq!(StopReport::parse(&text), None, "{code:?}");
        }
        // A reason the condition schema refuses gives way to UnknownStop.
        let stop = StopReport::parse(r#"{"code":"CDC-8001","reason":"spill full!","message":"m"}"#)
            .unwrap();
        assert_eq!(stop.reason, "UnknownStop");
    }
}
