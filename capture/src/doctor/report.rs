//! The doctor report: checks, a table for people, JSON, and the CDC-1002 stop.

use std::fmt;

use redoline_crds::StopCode;
use serde::Serialize;

use super::StoredPosition;
use crate::stop::Stop;

/// One prerequisite, as the contracts' termination message lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    pub message: String,
    /// The exact statement to run, for a failed check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    pub fn pass(name: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ok: true,
            message: message.into(),
            fix: None,
        }
    }

    pub fn fail(
        name: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            ok: false,
            message: message.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Every check of one doctor run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
    /// The stored position and its lag; `None` when doctor could not ask (no database).
    pub position: Option<StoredPosition>,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|check| check.ok)
    }

    pub fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|check| !check.ok)
    }

    /// The JSON report (`doctor --json`).
    pub fn to_json(&self) -> serde_json::Value {
        let mut report = serde_json::json!({ "ok": self.passed(), "checks": self.checks });
        if let Some(position) = &self.position {
            report["position"] = serde_json::to_value(position).unwrap_or_default();
        }
        report
    }

    /// CDC-1002 with `details.checks` (the failing ones first, so trimming keeps them).
    pub fn stop(&self) -> Option<Stop> {
        if self.passed() {
            return None;
        }
        let failing: Vec<&Check> = self.failures().collect();
        let summary = failing
            .iter()
            .map(|check| check.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let mut ordered: Vec<&Check> = failing;
        ordered.extend(self.checks.iter().filter(|check| check.ok));
        Some(
            Stop::new(
                StopCode::PrerequisitesNotMet,
                format!(
                    "prerequisites not met: {summary}; run the fix statements in details.checks"
                ),
            )
            .with_detail(
                "checks",
                serde_json::to_value(ordered).unwrap_or(serde_json::Value::Null),
            ),
        )
    }
}

impl fmt::Display for Report {
    /// A fixed-width table; each failure is followed by its fix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = self
            .checks
            .iter()
            .map(|check| check.name.len())
            .max()
            .unwrap_or(5)
            .max(5);
        writeln!(f, "{:<6} {:<width$}  DETAILS", "RESULT", "CHECK")?;
        for check in &self.checks {
            let result = if check.ok { "ok" } else { "FAIL" };
            writeln!(f, "{result:<6} {:<width$}  {}", check.name, check.message)?;
            if let Some(fix) = &check.fix {
                writeln!(f, "{:<6} {:<width$}  fix: {fix}", "", "")?;
            }
        }
        if let Some(position) = &self.position {
            writeln!(f, "{position}")?;
        }
        let failed = self.failures().count();
        if failed == 0 {
            write!(f, "all {} checks passed", self.checks.len())
        } else {
            write!(f, "{failed} of {} checks failed", self.checks.len())
        }
    }
}
