//! The model of what Oracle committed, and the comparison of a sink's events with it.
//!
//! The generator ([`super::generator`]) fills the model from its own decisions: every change it
//! asks of the database, minus what a savepoint rollback, a failed statement or a rollback
//! undoes. Nothing here reads the simulator's state, so a simulator bug and a capture bug cannot
//! cancel out.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// One row change as a compact event shows it, without the positions (`scn`, `commit_scn`,
/// `xid`, `ts`) the model cannot know in advance.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// `i`, `u`, `d`, `ddl` or `truncate`.
    pub op: &'static str,
    pub table: &'static str,
    /// The row image the event must carry: `after` for inserts and updates, `before` for
    /// deletes, `{"sql": ...}` for a DDL.
    pub image: BTreeMap<String, Value>,
}

/// A committed transaction: its name in the scenario and its changes in redo order.
#[derive(Clone, Debug, PartialEq)]
pub struct Committed {
    pub name: String,
    pub changes: Vec<Change>,
}

/// A change read back from a sink, with the transaction it came in (`xid`, `commit_scn`).
#[derive(Clone, Debug, PartialEq)]
pub struct Emitted {
    pub transaction: (String, u64),
    pub change: Change,
}

/// Reads compact events (`docs/events.md`) into [`Emitted`] changes.
pub fn emitted(events: &[Value]) -> Result<Vec<Emitted>, String> {
    events.iter().map(read_event).collect()
}

fn read_event(event: &Value) -> Result<Emitted, String> {
    let text = |key: &str| {
        event[key]
            .as_str()
            .ok_or_else(|| format!("event without `{key}`: {event}"))
    };
    let op = match text("op")? {
        "i" => "i",
        "u" => "u",
        "d" => "d",
        "ddl" => "ddl",
        "truncate" => "truncate",
        other => return Err(format!("unexpected op {other:?}: {event}")),
    };
    let table = match text("table")? {
        "ORDERS" => "ORDERS",
        "DOCS" => "DOCS",
        "TAGS" => "TAGS",
        other => return Err(format!("unexpected table {other:?}: {event}")),
    };
    let image = match op {
        "ddl" => BTreeMap::from([("sql".to_owned(), event["sql"].clone())]),
        "truncate" => BTreeMap::new(),
        "d" => object(&event["before"]),
        _ => object(&event["after"]),
    };
    let xid = text("xid")?.to_owned();
    let commit_scn = event["commit_scn"]
        .as_u64()
        .ok_or_else(|| format!("event without `commit_scn`: {event}"))?;
    Ok(Emitted {
        transaction: (xid, commit_scn),
        change: Change { op, table, image },
    })
}

fn object(value: &Value) -> BTreeMap<String, Value> {
    value
        .as_object()
        .map(|map| map.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// Checks the `r` events of an incremental snapshot of ORDERS among `events` (one sink's, in
/// order) and returns how many there are. The model of which rows must appear and where: the
/// stream's changes before an `r` event build the table as of its chunk's SCN (every change
/// committed at or below it comes first, none above it), so the row read must be the row they
/// built (on the columns both know: a DDL may have added or dropped some since); a row read
/// twice must have been deleted or inserted in between (a new ROWID, read again by a later
/// chunk); and every row standing from the first read to the last, untouched, must be read,
/// since the request runs to its end.
pub fn check_reads(events: &[Value]) -> Result<usize, String> {
    let id = |image: &Value| image["ID"].as_i64();
    let orders: Vec<&Value> = events.iter().filter(|e| e["table"] == "ORDERS").collect();
    let mut table: BTreeMap<i64, BTreeMap<String, Value>> = BTreeMap::new();
    // Keys read since their last insert or delete.
    let mut read: BTreeSet<i64> = BTreeSet::new();
    let mut reads = 0;
    for event in &orders {
        match event["op"].as_str().unwrap_or_default() {
            "r" => {
                let key =
                    id(&event["after"]).ok_or_else(|| format!("a read without ID: {event}"))?;
                let Some(row) = table.get(&key) else {
                    return Err(format!(
                        "a read of ORDERS {key}, which the stream has not inserted (or has \
                         deleted): {event}"
                    ));
                };
                for (column, value) in object(&event["after"]) {
                    if let Some(built) = row.get(&column)
                        && *built != value
                    {
                        return Err(format!(
                            "the read of ORDERS {key} has {column}={value}, the stream before it \
                             left {built}: it is not placed at its SCN"
                        ));
                    }
                }
                if !read.insert(key) {
                    return Err(format!(
                        "ORDERS {key} read twice with no insert or delete between"
                    ));
                }
                reads += 1;
            }
            "i" | "u" => {
                if let Some(before) = id(&event["before"])
                    && Some(before) != id(&event["after"])
                {
                    table.remove(&before);
                    read.remove(&before);
                }
                let key =
                    id(&event["after"]).ok_or_else(|| format!("a change without ID: {event}"))?;
                if event["op"] == "i" {
                    read.remove(&key);
                }
                table.insert(key, object(&event["after"]));
            }
            "d" => {
                let key =
                    id(&event["before"]).ok_or_else(|| format!("a delete without ID: {event}"))?;
                table.remove(&key);
                read.remove(&key);
            }
            "truncate" => {
                table.clear();
                read.clear();
            }
            _ => {}
        }
    }
    // Completeness: the rows standing at the first read and untouched until the last.
    let (Some(first), Some(last)) = (
        orders.iter().position(|e| e["op"] == "r"),
        orders.iter().rposition(|e| e["op"] == "r"),
    ) else {
        return Ok(0);
    };
    let during = &orders[first..=last];
    if during.iter().any(|e| e["op"] == "truncate") {
        return Ok(reads);
    }
    let mut standing: BTreeSet<i64> = BTreeSet::new();
    for event in &orders[..first] {
        match event["op"].as_str().unwrap_or_default() {
            "i" | "u" => {
                if let Some(before) = id(&event["before"]) {
                    standing.remove(&before);
                }
                standing.extend(id(&event["after"]));
            }
            "d" => {
                if let Some(key) = id(&event["before"]) {
                    standing.remove(&key);
                }
            }
            "truncate" => standing.clear(),
            _ => {}
        }
    }
    let touched: BTreeSet<i64> = during
        .iter()
        .filter(|e| e["op"] != "r")
        .flat_map(|e| [id(&e["after"]), id(&e["before"])])
        .flatten()
        .collect();
    let ever_read: BTreeSet<i64> = during
        .iter()
        .filter(|e| e["op"] == "r")
        .filter_map(|e| id(&e["after"]))
        .collect();
    match standing
        .iter()
        .find(|key| !touched.contains(key) && !ever_read.contains(key))
    {
        Some(missed) => Err(format!(
            "ORDERS {missed} stood through the whole read, untouched, and was never read"
        )),
        None => Ok(reads),
    }
}

/// The sink's changes cut into transactions: runs of consecutive changes of one
/// `(xid, commit_scn)`. A transaction split by another one shows up as two runs.
pub fn transactions(changes: &[Emitted]) -> Vec<Vec<Change>> {
    let mut runs: Vec<(&(String, u64), Vec<Change>)> = Vec::new();
    for emitted in changes {
        match runs.last_mut() {
            Some((transaction, run)) if *transaction == &emitted.transaction => {
                run.push(emitted.change.clone());
            }
            _ => runs.push((&emitted.transaction, vec![emitted.change.clone()])),
        }
    }
    runs.into_iter().map(|(_, run)| run).collect()
}

/// The expected transactions projected on one table (a Kafka topic holds one table's events):
/// each transaction's changes of that table, transactions without any left out.
pub fn projected(expected: &[Committed], table: &str) -> Vec<Committed> {
    expected
        .iter()
        .map(|committed| Committed {
            name: committed.name.clone(),
            changes: committed
                .changes
                .iter()
                .filter(|change| change.table == table)
                .cloned()
                .collect(),
        })
        .filter(|committed| !committed.changes.is_empty())
        .collect()
}

/// Compares the sink's transactions with the model's, in order; `None` when they are equal,
/// otherwise the first divergence in words: which transaction is missing, duplicated, partial,
/// out of order, or published though it was never committed.
pub fn first_divergence(expected: &[Committed], seen: &[Vec<Change>]) -> Option<String> {
    let position = |changes: &[Change]| expected.iter().position(|c| c.changes == changes);
    for index in 0..expected.len().max(seen.len()) {
        let (want, got) = (expected.get(index), seen.get(index));
        let (want, got) = match (want, got) {
            (Some(want), Some(got)) if want.changes == *got => continue,
            (Some(want), None) => {
                return Some(format!(
                    "missing: transaction {} (#{index} in commit order, {} changes) and the {} \
                     after it never reached the sink",
                    want.name,
                    want.changes.len(),
                    expected.len() - index - 1
                ));
            }
            (None, Some(got)) => {
                return Some(match position(got) {
                    Some(earlier) => format!(
                        "duplicated: transaction {} (#{earlier}) appears again after the last one",
                        expected[earlier].name
                    ),
                    None => format!(
                        "unexpected: {} changes after the last committed transaction, never \
                         committed so: {}",
                        got.len(),
                        describe(got)
                    ),
                });
            }
            (Some(want), Some(got)) => (want, got),
            (None, None) => return None,
        };
        let verdict = if let Some(at) = position(got) {
            if at < index {
                format!(
                    "duplicated: transaction {} (#{at}) appears again",
                    expected[at].name
                )
            } else {
                format!(
                    "missing or out of order: transaction {} (#{index}) expected, transaction {} \
                     (#{at}) found",
                    want.name, expected[at].name
                )
            }
        } else if got.len() < want.changes.len() && want.changes.starts_with(got) {
            format!(
                "partial: transaction {} (#{index}) has {} of its {} changes here",
                want.name,
                got.len(),
                want.changes.len()
            )
        } else {
            let differs = want
                .changes
                .iter()
                .zip(got.iter())
                .position(|(w, g)| w != g)
                .unwrap_or(want.changes.len().min(got.len()));
            format!(
                "different: transaction {} (#{index}) expected {} changes, the sink has {}; first \
                 difference at change {differs}: expected {}, found {}",
                want.name,
                want.changes.len(),
                got.len(),
                want.changes
                    .get(differs)
                    .map_or("nothing".to_owned(), |c| describe(std::slice::from_ref(c))),
                got.get(differs)
                    .map_or("nothing".to_owned(), |c| describe(std::slice::from_ref(c))),
            )
        };
        return Some(verdict);
    }
    None
}

/// A short rendering of changes for failure messages (long values cut).
fn describe(changes: &[Change]) -> String {
    let shown: Vec<String> = changes
        .iter()
        .take(3)
        .map(|change| {
            let image: Vec<String> = change
                .image
                .iter()
                .map(|(column, value)| {
                    let text = value.to_string();
                    let cut: String = text.chars().take(40).collect();
                    if cut.len() < text.len() {
                        format!("{column}={cut}…")
                    } else {
                        format!("{column}={cut}")
                    }
                })
                .collect();
            format!("{} {} {{{}}}", change.op, change.table, image.join(", "))
        })
        .collect();
    let more = changes.len().saturating_sub(3);
    if more > 0 {
        format!("[{}, … {more} more]", shown.join("; "))
    } else {
        format!("[{}]", shown.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(id: i64) -> Change {
        Change {
            op: "i",
            table: "ORDERS",
            image: BTreeMap::from([("ID".to_owned(), Value::from(id))]),
        }
    }

    fn committed(name: &str, ids: &[i64]) -> Committed {
        Committed {
            name: name.to_owned(),
            changes: ids.iter().copied().map(change).collect(),
        }
    }

    fn runs(ids: &[&[i64]]) -> Vec<Vec<Change>> {
        ids.iter()
            .map(|run| run.iter().copied().map(change).collect())
            .collect()
    }

    #[test]
    fn each_kind_of_divergence_is_named() {
        let expected = [committed("a", &[1, 2]), committed("b", &[3])];
        assert_eq!(first_divergence(&expected, &runs(&[&[1, 2], &[3]])), None);
        let verdict = |seen: &[&[i64]]| first_divergence(&expected, &runs(seen)).unwrap();
        assert!(verdict(&[&[1, 2]]).starts_with("missing: transaction b"));
        assert!(verdict(&[&[1, 2], &[1, 2], &[3]]).starts_with("duplicated: transaction a"));
        assert!(verdict(&[&[1], &[3]]).starts_with("partial: transaction a"));
        assert!(verdict(&[&[3], &[1, 2]]).starts_with("missing or out of order"));
        assert!(verdict(&[&[1, 2], &[3], &[9]]).starts_with("unexpected"));
        assert!(verdict(&[&[1, 9], &[3]]).starts_with("different"));
    }

    #[test]
    fn a_split_transaction_is_two_runs() {
        let event = |xid: &str, id: i64| Emitted {
            transaction: (xid.to_owned(), 7),
            change: change(id),
        };
        let seen = transactions(&[event("a", 1), event("b", 3), event("a", 2)]);
        assert_eq!(seen.len(), 3);
        let expected = [committed("a", &[1, 2]), committed("b", &[3])];
        assert!(
            first_divergence(&expected, &seen)
                .unwrap()
                .starts_with("partial")
        );
    }
}
