//! The first-contact probe: every read the capture makes is made once, before the capture
//! starts, and its answer mapped by the code the capture maps it with.
//!
//! The prerequisite checks ask whether the database is set up; the probe asks whether the
//! capture can read what this database answers. A statement the database refuses in a way no
//! grant explains, or an answer the mapping cannot read (a column another release names
//! differently, a value in an unexpected format), would otherwise surface as a restart loop on
//! the first window or the first open transaction. Here it is a failed check naming the
//! statement and the answer, with values read from user tables masked, and the request to report
//! it: such a finding is a defect of redoline, not of the database.

use std::ops::ControlFlow;

use super::{Check, DoctorRequest, error_text};
use crate::source::oracle::sql;
use crate::source::{DatabaseCatalog, DatabaseInfo, MiningWindow, RedoMiner, SourceError};

/// The rows of recent redo the probe reads through the contents mapping: enough to meet every
/// kind of row a busy database writes in a moment, few enough to cost nothing.
const PROBE_ROWS: u64 = 1_000;

/// How far below the current SCN the probe's mining window starts (kept inside the oldest
/// log the database still lists).
const PROBE_SCNS: u64 = 10_000;

/// What to do about a probe finding.
const REPORT_IT: &str = "This is a defect of redoline, not of your database: report this \
     check's message (it names the statement and the answer, with table data masked) to the \
     redoline maintainers. Until it is fixed the capture cannot read this database.";

/// The probe's checks: one passed check, or one failed check per read the capture could not
/// make or map.
pub fn checks<S: DatabaseCatalog + RedoMiner>(
    source: &mut S,
    request: &DoctorRequest,
    database: &DatabaseInfo,
) -> Vec<Check> {
    let mut findings = Vec::new();
    // Only answers the capture could not read, and errors it has no name for, are findings:
    // a missing grant, an outage and a typed stop (purged redo, a PDB that is not open) each
    // have their own check or runbook entry.
    let mut read = |what: &str, statement: &str, result: Result<(), SourceError>| {
        if let Err(error) = result
            && !error.is_not_granted()
            && matches!(
                error,
                SourceError::Malformed { .. } | SourceError::Database { .. }
            )
        {
            findings.push(finding(what, statement, &error));
        }
    };
    read(
        "current SCN",
        sql::CURRENT_SCN,
        source.current_scn().map(drop),
    );
    read("redo threads", sql::THREADS, source.threads().map(drop));
    read("sessions", sql::SESSIONS, source.sessions().map(drop));
    read(
        "SCN to time",
        sql::SCN_TO_TIMESTAMP,
        source.scn_to_timestamp(database.current_scn).map(drop),
    );
    read(
        "table list",
        sql::LIST_TABLES,
        source.list_tables().map(drop),
    );
    for (owner, table) in &request.tables {
        read(
            "row estimate",
            sql::ROW_ESTIMATE,
            source.row_estimate(owner, table).map(drop),
        );
    }
    read(
        "recent redo through LogMiner",
        "the contents query (sql::contents_query)",
        mine_recent(source, request),
    );
    let mut checks = Vec::with_capacity(findings.len().max(1));
    if findings.is_empty() {
        checks.push(Check::pass(
            "first-contact probe",
            "every read the capture makes was answered and read, recent redo included",
        ));
    }
    checks.extend(findings);
    checks
}

/// The fix of a failed read: a report when the capture could not read the answer, the grants
/// otherwise.
pub(super) fn fix_for(error: &SourceError, grants: String) -> String {
    match error {
        SourceError::Malformed { .. } => REPORT_IT.to_owned(),
        _ => grants,
    }
}

fn finding(what: &str, statement: &str, error: &SourceError) -> Check {
    let answer = match error {
        // Contents rows carry table data: the answer is named, its values are not shown.
        SourceError::Malformed { what: column, .. } if column.starts_with("V$LOGMNR_CONTENTS") => {
            mask_quoted(&error_text(error))
        }
        _ => error_text(error),
    };
    Check::fail(
        format!("first-contact probe: {what}"),
        format!("{statement} — {answer}"),
        REPORT_IT,
    )
}

/// Mines the last [`PROBE_SCNS`] of redo of the captured tables and reads up to [`PROBE_ROWS`]
/// rows through the contents mapping.
fn mine_recent<S: DatabaseCatalog + RedoMiner>(
    source: &mut S,
    request: &DoctorRequest,
) -> Result<(), SourceError> {
    let end_scn = source.current_scn()?;
    let oldest = source
        .redo_logs(end_scn.saturating_sub(PROBE_SCNS))?
        .iter()
        .map(|log| log.first_scn)
        .min()
        .unwrap_or(end_scn);
    let start_scn = end_scn.saturating_sub(PROBE_SCNS).max(oldest);
    let plan = source.logs_covering(start_scn)?;
    let window = MiningWindow {
        start_scn,
        end_scn,
        logs: plan.logs,
        objects: Vec::new(),
        tables: request.tables.clone(),
        pdb: request.pdb.clone(),
        with_sql_undo: false,
    };
    source.start_mining(&window)?;
    let mut seen = 0;
    let streamed = source.stream_rows(&mut |_| {
        seen += 1;
        if seen >= PROBE_ROWS {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    let ended = source.end_mining();
    streamed?;
    ended
}

/// Replaces every `"..."` in a message with its length, so a value read from a user table is
/// not copied into a report.
fn mask_quoted(text: &str) -> String {
    let mut masked = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('"') {
        masked.push_str(&rest[..start]);
        match rest[start + 1..].find('"') {
            Some(length) => {
                masked.push_str(&format!("<{length} characters masked>"));
                rest = &rest[start + length + 2..];
            }
            None => {
                rest = &rest[start..];
                break;
            }
        }
    }
    masked.push_str(rest);
    masked
}

#[cfg(test)]
mod tests {
    use super::mask_quoted;

    #[test]
    fn quoted_values_are_masked() {
        assert_eq!(
            mask_quoted("V$LOGMNR_CONTENTS.SCN: \"12a\" is not a whole number"),
            "V$LOGMNR_CONTENTS.SCN: <3 characters masked> is not a whole number"
        );
        assert_eq!(mask_quoted("no quotes"), "no quotes");
        assert_eq!(mask_quoted("one \" left"), "one \" left");
    }
}
