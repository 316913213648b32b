//! The spec edits of `snapshot` and `reposition`: checked against the OracleCapture as read,
//! then written as a JSON merge patch of `spec` (what `kubectl edit` could write) carrying the
//! `resourceVersion` read, so an edit made by someone else in between is a conflict, not lost.
//! Pure: JSON in, a patch and a summary out.

use serde_json::{Value, json};

use crate::error::PluginError;

/// The most requests `spec.snapshot.requests` holds, and tables one request names (the CRD's
/// bounds).
const MAX_REQUESTS: usize = 32;
const MAX_REQUEST_TABLES: usize = 10;
/// The filter lists by which the capture chooses tables itself.
const TABLE_LISTS: [&str; 4] = [
    "schemaIncludeList",
    "schemaExcludeList",
    "tableIncludeList",
    "tableExcludeList",
];

/// A checked edit: the merge patch and what it changes, for the user.
#[derive(Clone, Debug, PartialEq)]
pub struct Edit {
    pub patch: Value,
    pub summary: String,
}

/// A default id: `<prefix>-<UTC time>`, unique enough for edits made by hand.
pub fn default_id(prefix: &str, now: jiff::Timestamp) -> String {
    format!("{prefix}-{}", now.strftime("%Y%m%d-%H%M%S"))
}

/// Ids are DNS labels (the CRD's pattern for requests; repositions also allow dots).
fn check_id(id: &str, dots: bool) -> Result<(), PluginError> {
    let inner_ok =
        |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || (dots && c == '.');
    let edge_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if id.is_empty()
        || id.len() > 63
        || !id.chars().all(inner_ok)
        || !edge_ok(id.chars().next())
        || !edge_ok(id.chars().last())
    {
        return Err(PluginError::Refused(format!(
            "id {id:?} is not allowed: use at most 63 lower-case letters, digits and '-'{}, \
             starting and ending with a letter or digit",
            if dots { " or '.'" } else { "" }
        )));
    }
    Ok(())
}

fn resource_version(capture: &Value) -> Result<&str, PluginError> {
    capture
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| PluginError::Unreadable("it has no metadata.resourceVersion".into()))
}

/// Adds `{id, tables, condition}` to `spec.snapshot.requests`.
pub fn snapshot(
    capture: &Value,
    tables: &[String],
    condition: Option<&str>,
    id: &str,
) -> Result<Edit, PluginError> {
    check_id(id, false)?;
    let requests: Vec<Value> = capture
        .pointer("/spec/snapshot/requests")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if requests
        .iter()
        .any(|r| r.get("id").and_then(Value::as_str) == Some(id))
    {
        return Err(PluginError::Refused(format!(
            "spec.snapshot.requests already has a request {id}: a finished id never runs again, \
             so give the new read a new id (or leave --id out)"
        )));
    }
    if requests.len() >= MAX_REQUESTS {
        return Err(PluginError::Refused(format!(
            "spec.snapshot.requests holds {MAX_REQUESTS} requests, the most it may: remove \
             finished ones first (kubectl edit)"
        )));
    }
    if tables.len() > MAX_REQUEST_TABLES {
        return Err(PluginError::Refused(format!(
            "one request reads at most {MAX_REQUEST_TABLES} tables: split them over several"
        )));
    }
    check_captured(capture, tables)?;
    if condition.is_some_and(|c| c.trim().is_empty() || c.len() > 4000) {
        return Err(PluginError::Refused(
            "--where must be a SQL condition of 1 to 4000 characters".into(),
        ));
    }
    let mut request = json!({"id": id, "tables": tables});
    if let Some(condition) = condition {
        request["condition"] = Value::String(condition.to_owned());
    }
    let mut all = requests;
    all.push(request.clone());
    let condition_note = condition.map_or(String::new(), |c| format!(" where {c}"));
    Ok(Edit {
        patch: json!({
            "metadata": {"resourceVersion": resource_version(capture)?},
            "spec": {"snapshot": {"requests": all}},
        }),
        summary: format!(
            "added spec.snapshot.requests {id}: read {}{condition_note} while streaming goes on",
            tables.join(", ")
        ),
    })
}

/// Every table must be captured: listed in `spec.tables`, or possibly chosen by the filter
/// lists (which only the capture can tell: it reports a table they do not choose as Failed).
fn check_captured(capture: &Value, tables: &[String]) -> Result<(), PluginError> {
    let listed: Vec<&str> = capture
        .pointer("/spec/tables")
        .and_then(Value::as_array)
        .map(|t| t.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let filters_choose = TABLE_LISTS.iter().any(|list| {
        capture
            .pointer(&format!("/spec/filters/{list}"))
            .and_then(Value::as_array)
            .is_some_and(|l| !l.is_empty())
    });
    for table in tables {
        if listed.contains(&table.as_str()) || filters_choose {
            continue;
        }
        let hint = listed
            .iter()
            .find(|t| t.eq_ignore_ascii_case(table))
            .map_or(String::new(), |t| {
                format!(" (did you mean {t}? names are written in dictionary case)")
            });
        return Err(PluginError::Refused(format!(
            "{table} is not captured by this OracleCapture{hint}: spec.tables lists {}",
            if listed.is_empty() {
                "nothing".to_owned()
            } else {
                listed.join(", ")
            }
        )));
    }
    Ok(())
}

/// Sets `spec.reposition` to `{id, scn}`.
pub fn reposition(capture: &Value, scn: u64, id: &str) -> Result<Edit, PluginError> {
    check_id(id, true)?;
    if scn == 0 {
        return Err(PluginError::Refused("--scn must be at least 1".into()));
    }
    let current = capture.pointer("/spec/reposition");
    if current.and_then(|r| r.get("id")).and_then(Value::as_str) == Some(id) {
        return Err(PluginError::Refused(format!(
            "spec.reposition already has id {id}: the capture applies each id once, so a new \
             move needs a new id (or leave --id out)"
        )));
    }
    let commit = capture
        .pointer("/status/position/commitScn")
        .and_then(Value::as_u64);
    let effect = match commit {
        Some(commit) if scn <= commit => format!(
            "back from commit SCN {commit}: consumers see the changes committed since SCN {scn} again"
        ),
        Some(commit) => format!(
            "forward from commit SCN {commit}: the changes committed before SCN {scn} are skipped"
        ),
        None => "from a position the status does not show yet".to_owned(),
    };
    let replaced = current.map_or(String::new(), |r| format!(" (was {r})"));
    Ok(Edit {
        patch: json!({
            "metadata": {"resourceVersion": resource_version(capture)?},
            "spec": {"reposition": {"id": id, "scn": scn}},
        }),
        summary: format!(
            "set spec.reposition {id} to SCN {scn}{replaced}: the capture restarts and moves \
             {effect}"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture() -> Value {
        json!({
            "metadata": {"name": "orders", "resourceVersion": "42"},
            "spec": {"tables": ["APP.ORDERS", "APP.ITEMS"],
                     "snapshot": {"requests": [{"id": "old", "tables": ["APP.ITEMS"]}]}},
            "status": {"position": {"commitScn": 500}}
        })
    }

    #[test]
    fn a_snapshot_request_is_appended_with_the_version_read() {
        let edit = snapshot(
            &capture(),
            &["APP.ORDERS".into()],
            Some("STATUS = 'OPEN'"),
            "reread-1",
        )
        .unwrap();
        assert_eq!(
            edit.patch,
            json!({"metadata": {"resourceVersion": "42"},
                   "spec": {"snapshot": {"requests": [
                       {"id": "old", "tables": ["APP.ITEMS"]},
                       {"id": "reread-1", "tables": ["APP.ORDERS"], "condition": "STATUS = 'OPEN'"}]}}})
        );
    }

    #[test]
    fn a_table_not_captured_or_a_used_id_is_refused() {
        let error = snapshot(&capture(), &["app.orders".into()], None, "r").unwrap_err();
        assert!(
            error.to_string().contains("did you mean APP.ORDERS"),
            "{error}"
        );
        let error = snapshot(&capture(), &["APP.ORDERS".into()], None, "old").unwrap_err();
        assert!(
            error.to_string().contains("already has a request old"),
            "{error}"
        );
        let error = snapshot(&capture(), &["APP.ORDERS".into()], None, "Bad_Id").unwrap_err();
        assert!(error.to_string().contains("not allowed"), "{error}");
        // The filter lists may choose it: the capture decides.
        let mut filtered = capture();
        filtered["spec"]["filters"] = json!({"schemaIncludeList": ["APP"]});
        assert!(snapshot(&filtered, &["APP.OTHER".into()], None, "r").is_ok());
    }

    #[test]
    fn a_reposition_says_which_way_it_moves() {
        let back = reposition(&capture(), 400, "restore-1").unwrap();
        assert_eq!(
            back.patch["spec"],
            json!({"reposition": {"id": "restore-1", "scn": 400}})
        );
        assert!(back.summary.contains("again"), "{}", back.summary);
        let forward = reposition(&capture(), 600, "skip-1").unwrap();
        assert!(forward.summary.contains("skipped"), "{}", forward.summary);
        let mut applied = capture();
        applied["spec"]["reposition"] = json!({"id": "restore-1", "scn": 400});
        assert!(reposition(&applied, 300, "restore-1").is_err());
    }

    #[test]
    fn default_ids_are_valid() {
        let id = default_id("snapshot", "2026-12-05T17:05:12Z".parse().unwrap());
        assert_eq!(id, "snapshot-20261205-170512");
        check_id(&id, false).unwrap();
    }
}
