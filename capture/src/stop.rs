//! Typed stops and the pod termination message.
//!
//! A [`Stop`] is the only way the capture ends because an operator must act. `main` turns it into
//! the termination message (one JSON object, at most [`TERMINATION_MESSAGE_MAX`] bytes, at
//! `/dev/termination-log` or `$REDOLINE_TERMINATION_LOG`) and exit status [`crate::exit::STOPPED`].
//! Kubernetes copies that file into the pod status, where the operator reads it.
//!
//! Fitting the limit never touches `code` or `reason`: list members in `details` go first (from the
//! end of the longest list), then whole `details` members, and only then the tail of `message`.

use std::io::Write;
use std::path::{Path, PathBuf};

use redoline_crds::StopCode;
use redoline_crds::capture::TerminationMessage;
use serde_json::{Map, Value};

/// Kubernetes keeps at most 4096 bytes of a container's termination message.
pub const TERMINATION_MESSAGE_MAX: usize = 4096;
/// Where Kubernetes reads the termination message unless the pod says otherwise.
pub const DEFAULT_TERMINATION_LOG: &str = "/dev/termination-log";
/// Overrides the termination message path (for local runs and tests).
pub const TERMINATION_LOG_ENV: &str = "REDOLINE_TERMINATION_LOG";

/// A stop that needs an operator: a code from the runbook, what happened, and structured details.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code} {}: {message}", code.reason())]
pub struct Stop {
    pub code: StopCode,
    pub message: String,
    pub details: Map<String, Value>,
}

impl Stop {
    pub fn new(code: StopCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: Map::new(),
        }
    }

    /// Adds a member to `details`.
    pub fn with_detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// The termination message for a stop at `at`, trimmed to [`TERMINATION_MESSAGE_MAX`] bytes.
    pub fn termination_message(&self, at: jiff::Timestamp) -> String {
        let at = at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
        let mut details = self.details.clone();
        let mut message = self.message.clone();
        loop {
            let json = render(self.code, &message, &at, &details);
            if json.len() <= TERMINATION_MESSAGE_MAX {
                return json;
            }
            if !trim_longest_list(&mut details) && !drop_largest_member(&mut details) {
                let excess = json.len() - TERMINATION_MESSAGE_MAX;
                // JSON escaping can make a character cost more than its bytes: cut at least 1.
                let keep = message.len().saturating_sub(excess.max(1) + '…'.len_utf8());
                let cut = floor_char_boundary(&message, keep);
                message.truncate(cut);
                message.push('…');
            }
        }
    }

    /// Writes the termination message to `path`, replacing what was there.
    pub fn write_termination_log(&self, path: &Path, at: jiff::Timestamp) -> std::io::Result<()> {
        let mut file = std::fs::File::create(path)?;
        file.write_all(self.termination_message(at).as_bytes())?;
        file.sync_all()
    }
}

/// The termination message path: `$REDOLINE_TERMINATION_LOG` or Kubernetes' default.
pub fn termination_log_path() -> PathBuf {
    std::env::var_os(TERMINATION_LOG_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_TERMINATION_LOG))
}

fn render(code: StopCode, message: &str, at: &str, details: &Map<String, Value>) -> String {
    let msg = TerminationMessage {
        code: code.code().to_owned(),
        reason: code.reason().to_owned(),
        message: message.to_owned(),
        at: Some(at.to_owned()),
        details: Value::Object(details.clone()),
    };
    // Serialising strings and JSON values cannot fail; fall back to the bare code if it ever did.
    serde_json::to_string(&msg).unwrap_or_else(|_| {
        format!(
            r#"{{"code":"{}","reason":"{}","message":"","at":"{at}"}}"#,
            code.code(),
            code.reason()
        )
    })
}

/// Removes the last element of the longest list in `details`; false when no list has elements.
fn trim_longest_list(details: &mut Map<String, Value>) -> bool {
    let longest = details
        .values_mut()
        .filter_map(Value::as_array_mut)
        .filter(|list| !list.is_empty())
        .max_by_key(|list| list.len());
    match longest {
        Some(list) => {
            list.pop();
            true
        }
        None => false,
    }
}

/// Removes the member of `details` with the longest rendering; false when `details` is empty.
fn drop_largest_member(details: &mut Map<String, Value>) -> bool {
    let largest = details
        .iter()
        .max_by_key(|(_, v)| v.to_string().len())
        .map(|(k, _)| k.clone());
    largest.is_some_and(|key| details.remove(&key).is_some())
}

fn floor_char_boundary(s: &str, index: usize) -> usize {
    let mut i = index.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn at() -> jiff::Timestamp {
        "2026-11-29T10:00:00Z".parse().unwrap()
    }

    #[test]
    fn renders_the_contract_shape() {
        let stop = Stop::new(
            StopCode::SpillCapacityExceeded,
            "spill cap of 10Gi exceeded",
        )
        .with_detail("transactions", json!([{"xid": "0a001b00c2030000"}]));
        let v: Value = serde_json::from_str(&stop.termination_message(at())).unwrap();
        assert_eq!(
            v,
            json!({
                "code": "CDC-4001",
                "reason": "SpillCapacityExceeded",
                "message": "spill cap of 10Gi exceeded",
                "at": "2026-11-29T10:00:00Z",
                "details": {"transactions": [{"xid": "0a001b00c2030000"}]}
            })
        );
    }

    #[test]
    fn trims_details_before_the_message() {
        let txs: Vec<Value> = (0..200)
            .map(|i| json!({"xid": format!("{i:016x}"), "user": "APP", "firstScn": i, "events": 1_000_000, "heapBytes": 1, "diskBytes": 2}))
            .collect();
        let stop = Stop::new(StopCode::SpillCapacityExceeded, "cap exceeded")
            .with_detail("transactions", txs);
        let out = stop.termination_message(at());
        assert!(out.len() <= TERMINATION_MESSAGE_MAX);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["message"], "cap exceeded");
        let kept = v["details"]["transactions"].as_array().unwrap();
        assert!(!kept.is_empty() && kept.len() < 200);
        // The first (largest) transactions are the ones kept.
        assert_eq!(kept[0]["xid"], "0000000000000000");
    }

    #[test]
    fn a_huge_message_is_cut_but_code_and_reason_stay() {
        let stop = Stop::new(StopCode::InvalidConfiguration, "é\"".repeat(5000))
            .with_detail("field", "spec.tables");
        let out = stop.termination_message(at());
        assert!(out.len() <= TERMINATION_MESSAGE_MAX, "{}", out.len());
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["code"], "CDC-1001");
        assert_eq!(v["reason"], "InvalidConfiguration");
        assert!(v["message"].as_str().unwrap().ends_with('…'));
        assert!(v.get("details").is_none());
    }

    #[test]
    fn writes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("termination-log");
        std::fs::write(&path, "stale content that is longer than the new message").unwrap();
        let stop = Stop::new(StopCode::ProducerFenced, "fenced");
        stop.write_termination_log(&path, at()).unwrap();
        let v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["code"], "CDC-5001");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn always_fits_and_parses(message in "\\PC{0,6000}", n in 0usize..100, width in 0usize..200) {
            let list: Vec<Value> = (0..n).map(|i| json!({"i": i, "pad": "x".repeat(width)})).collect();
            let stop = Stop::new(StopCode::OrphanedTransaction, message)
                .with_detail("transactions", list)
                .with_detail("note", "y".repeat(width * 10));
            let out = stop.termination_message(at());
            prop_assert!(out.len() <= TERMINATION_MESSAGE_MAX);
            let v: Value = serde_json::from_str(&out).unwrap();
            prop_assert_eq!(&v["code"], "CDC-7002");
            prop_assert_eq!(&v["reason"], "OrphanedTransaction");
        }
    }
}
