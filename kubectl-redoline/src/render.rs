//! The `status` screen: a headline, then one short section per concern. Pure: a
//! [`StatusView`] in, text out. A section with nothing to say is left out, except where its
//! absence is news (no stop, no live figures).

use std::fmt::Write;

use redoline_crds::v1alpha1::{ArchivedRedoStatus, RepositionState};

use crate::view::{Source, StatusView};

/// The screen for `view`.
pub fn screen(view: &StatusView) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_screen(&mut out, view);
    out
}

fn write_screen(out: &mut String, view: &StatusView) -> std::fmt::Result {
    let ready = view.condition("Ready");
    let headline = match (view.phase.as_deref(), ready) {
        (Some(phase), Some(r)) => format!("{phase} (Ready {}: {})", r.status, r.reason),
        (Some(phase), None) => phase.to_owned(),
        (None, _) => "no status yet (the operator has not reported on it)".to_owned(),
    };
    writeln!(out, "OracleCapture {}/{}", view.namespace, view.name)?;
    writeln!(out, "Phase:       {headline}")?;
    match &view.source {
        Source::Capture { pod, port } => writeln!(
            out,
            "Live from:   the capture's /status (pod {pod}, port {port}, through the API server)"
        )?,
        Source::ResourceOnly { reason } => writeln!(
            out,
            "Live from:   nowhere: {reason}; showing the OracleCapture status only"
        )?,
    }

    writeln!(out, "\nStop")?;
    match &view.stop {
        Some(stop) => {
            let when = stop.at.as_deref().unwrap_or("unknown time");
            let standing = if stop.in_force {
                "in force"
            } else {
                "latest, no longer in force"
            };
            writeln!(out, "  {} {} ({standing}, {when})", stop.code, stop.reason)?;
            writeln!(out, "  {}", stop.message)?;
            writeln!(out, "  Runbook: {}", stop.runbook)?;
        }
        None => writeln!(out, "  none")?,
    }

    let p = &view.position;
    writeln!(out, "\nPosition")?;
    let scn = |value: Option<u64>| value.map_or("unknown".to_owned(), |v| v.to_string());
    match &p.commit_time {
        Some(time) => writeln!(out, "  Commit SCN:   {} ({time})", scn(p.commit_scn))?,
        None => writeln!(out, "  Commit SCN:   {}", scn(p.commit_scn))?,
    }
    writeln!(out, "  Restart SCN:  {}", scn(p.restart_scn))?;
    match p.lag_seconds {
        Some(lag) => writeln!(out, "  Lag:          {lag:.1} s")?,
        None => writeln!(out, "  Lag:          unknown")?,
    }
    if let Some(state) = &p.capture_state {
        writeln!(out, "  Capture:      {state}")?;
    }
    for thread in &view.threads {
        let kind = if thread.archived {
            "archived"
        } else {
            "online"
        };
        writeln!(
            out,
            "  Thread {}:     log sequence {} ({kind}, from SCN {})",
            thread.thread, thread.sequence, thread.first_scn
        )?;
    }

    write_archived_redo(out, view.archived_redo.as_ref())?;

    writeln!(out, "\nTransactions")?;
    match &view.transactions {
        Some(t) => {
            let count = |value: Option<u64>| value.map_or("?".to_owned(), |v| v.to_string());
            writeln!(
                out,
                "  Open: {}   Spilled: {} ({})   Journaled: {}",
                count(t.open),
                count(t.spilled),
                bytes(t.spilled_bytes),
                count(t.journaled)
            )?;
            writeln!(
                out,
                "  Buffered: {} events, {} in memory",
                count(t.buffered_events),
                bytes(t.heap_bytes)
            )?;
            if let Some(oldest) = &t.oldest {
                let opened = oldest
                    .opened_at
                    .as_ref()
                    .map_or(String::new(), |at| format!(", open since {}", at.0));
                writeln!(
                    out,
                    "  Oldest: {} from SCN {}{opened}",
                    oldest.xid, oldest.first_scn
                )?;
            }
        }
        None => writeln!(out, "  unknown without the capture's /status")?,
    }

    if view.snapshot.initial.is_some() || !view.snapshot.requests.is_empty() {
        writeln!(out, "\nSnapshots")?;
        if let Some(initial) = &view.snapshot.initial {
            let figure = |key: &str| initial.get(key).and_then(serde_json::Value::as_u64);
            writeln!(
                out,
                "  Initial: {} of {} tables done, {} rows read{}",
                figure("tablesDone").map_or("?".into(), |v| v.to_string()),
                figure("tablesTotal").map_or("?".into(), |v| v.to_string()),
                figure("rowsScanned").map_or("?".into(), |v| v.to_string()),
                figure("rowsRemainingEstimate")
                    .map_or(String::new(), |v| format!(", about {v} left"))
            )?;
        }
        for request in &view.snapshot.requests {
            let state = request.state.as_deref().unwrap_or("not reported yet");
            writeln!(out, "  {}: {state}", request.id)?;
            if let Some(message) = &request.message {
                writeln!(out, "    {message}")?;
            }
            for table in &request.tables {
                let progress = match (table.rows_read, table.rows_estimate) {
                    (Some(read), Some(estimate)) if estimate > 0 => {
                        format!(
                            "{read} of ~{estimate} rows ({}%)",
                            (read.saturating_mul(100) / estimate).min(100)
                        )
                    }
                    (Some(read), _) => format!("{read} rows"),
                    (None, _) => String::new(),
                };
                let state = table.state.as_deref().unwrap_or("-");
                writeln!(out, "    {:<30} {state:<9} {progress}", table.table)?;
            }
        }
    }

    if view.reposition.requested.is_some() || view.reposition.decided.is_some() {
        writeln!(out, "\nReposition")?;
        if let Some(requested) = &view.reposition.requested {
            writeln!(
                out,
                "  Requested: {} to SCN {}",
                requested.get("id").and_then(|v| v.as_str()).unwrap_or("?"),
                requested
                    .get("scn")
                    .and_then(|v| v.as_u64())
                    .map_or("?".into(), |v| v.to_string())
            )?;
        }
        match &view.reposition.decided {
            Some(decided) => {
                let state = match decided.state {
                    RepositionState::Applied => "Applied",
                    RepositionState::Refused => "Refused",
                };
                let at = decided
                    .at
                    .as_ref()
                    .map_or(String::new(), |at| format!(" at {}", at.0));
                writeln!(out, "  {state}: {} to SCN {}{at}", decided.id, decided.scn)?;
                if let Some(message) = &decided.message {
                    writeln!(out, "  {message}")?;
                }
            }
            None => writeln!(
                out,
                "  not decided yet (the capture applies it at its next start)"
            )?,
        }
    }

    if !view.conditions.is_empty() {
        writeln!(out, "\nConditions")?;
        for c in &view.conditions {
            let message = if c.message.is_empty() {
                String::new()
            } else {
                format!(": {}", c.message)
            };
            writeln!(
                out,
                "  {:<17} {:<7} {}{message}",
                c.type_, c.status, c.reason
            )?;
        }
    }
    Ok(())
}

/// The hours of archived redo left before CDC-2001, with the log they count from.
fn write_archived_redo(out: &mut String, redo: Option<&ArchivedRedoStatus>) -> std::fmt::Result {
    let Some(redo) = redo else {
        return writeln!(
            out,
            "  Archived redo: unknown (not reported by the capture)"
        );
    };
    match (redo.hours_left, redo.retention_hours, &redo.oldest_needed) {
        (Some(hours), Some(_), Some(_)) if hours <= 0.0 => writeln!(
            out,
            "  Archived redo: 0 h left before CDC-2001: the oldest log a restart needs is past \
             the retention and may be deleted at any time"
        )?,
        (Some(hours), Some(retention), Some(_)) => writeln!(
            out,
            "  Archived redo: {hours:.1} h left before CDC-2001 (retention {retention} h)"
        )?,
        // Without a needed archived log, 0 h is redo already gone, any other figure a restart
        // SCN still in the online logs.
        (Some(hours), _, None) if hours <= 0.0 => writeln!(
            out,
            "  Archived redo: none left: the redo at the restart SCN is gone (CDC-2001 at the \
             next restart)"
        )?,
        (Some(_), Some(retention), None) => writeln!(
            out,
            "  Archived redo: {retention} h or more left before CDC-2001 (the restart SCN is \
             in the online logs; retention {retention} h)"
        )?,
        (_, None, _) | (None, Some(_), _) => writeln!(
            out,
            "  Archived redo: hours left unknown (declare spec.mining.archiveRetentionHours)"
        )?,
    }
    if let Some(log) = &redo.oldest_needed {
        let archived = log
            .completed_at
            .as_ref()
            .map_or(String::new(), |at| format!(", archived {}", at.0));
        writeln!(
            out,
            "    oldest needed: thread {} sequence {}{archived}",
            log.thread, log.sequence
        )?;
    }
    Ok(())
}

/// Bytes in binary units, as Kubernetes quantities read.
fn bytes(value: Option<u64>) -> String {
    let Some(value) = value else {
        return "?".to_owned();
    };
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut scaled = value as f64;
    let mut unit = 0;
    while scaled >= 1024.0 && unit < UNITS.len() - 1 {
        scaled /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value} B")
    } else {
        format!("{scaled:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_as_quantities() {
        assert_eq!(bytes(Some(0)), "0 B");
        assert_eq!(bytes(Some(1536)), "1.5 KiB");
        assert_eq!(bytes(Some(20 << 30)), "20.0 GiB");
        assert_eq!(bytes(None), "?");
    }

    fn archived_redo_line(redo: Option<ArchivedRedoStatus>) -> String {
        let mut out = String::new();
        write_archived_redo(&mut out, redo.as_ref()).unwrap();
        out
    }

    #[test]
    fn archived_redo_says_the_hours_left_and_why_they_are_unknown() {
        use redoline_crds::capture::Time;
        use redoline_crds::v1alpha1::NeededArchivedLog;
        let needed = NeededArchivedLog {
            thread: 1,
            sequence: 812,
            completed_at: Some(Time("2026-12-05T09:00:00Z".parse().unwrap())),
        };
        let counted = ArchivedRedoStatus {
            retention_hours: Some(24),
            hours_left: Some(17.25),
            deletable_from: Some(Time("2026-12-06T09:00:00Z".parse().unwrap())),
            oldest_needed: Some(needed.clone()),
        };
        assert_eq!(
            archived_redo_line(Some(counted.clone())),
            "  Archived redo: 17.2 h left before CDC-2001 (retention 24 h)\n    oldest needed: \
             thread 1 sequence 812, archived 2026-12-05T09:00:00Z\n"
        );
        let past = ArchivedRedoStatus {
            hours_left: Some(0.0),
            ..counted.clone()
        };
        assert!(archived_redo_line(Some(past)).contains("0 h left"));
        let online = ArchivedRedoStatus {
            hours_left: Some(24.0),
            oldest_needed: None,
            deletable_from: None,
            ..counted
        };
        assert!(archived_redo_line(Some(online)).contains("24 h or more left"));
        let gone = ArchivedRedoStatus {
            retention_hours: Some(24),
            hours_left: Some(0.0),
            ..ArchivedRedoStatus::default()
        };
        assert!(archived_redo_line(Some(gone)).contains("is gone"));
        let undeclared = ArchivedRedoStatus {
            oldest_needed: Some(needed),
            ..ArchivedRedoStatus::default()
        };
        let text = archived_redo_line(Some(undeclared));
        assert!(text.contains("archiveRetentionHours"), "{text}");
        assert!(text.contains("sequence 812"), "{text}");
        assert!(archived_redo_line(None).contains("not reported"));
    }
}
