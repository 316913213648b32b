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
        "EARLY" => "EARLY",
        "LATER" => "LATER",
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

/// A table's rows by ID: column name to compact value.
pub type Rows = BTreeMap<i64, BTreeMap<String, Value>>;

/// A table that joined the capture while it ran: how many of its committed transactions came
/// before (never streamed: their effect reaches the sink as `r` events), and its rows then.
#[derive(Clone, Debug)]
pub struct Joined {
    pub table: &'static str,
    pub before: usize,
    pub rows: Rows,
}

/// Where `table` joined the capture, as the sink shows it: its streamed changes must be its
/// committed changes from one transaction on, in commit order, each once. That transaction is
/// the one whose suffix has as many changes as the sink streamed, if it is among the first
/// `at_most + 1` (the capture never ran without the table from `at_most` on); otherwise
/// `at_most`, and the comparison with the model names what differs. The rows are the table as
/// those earlier transactions left it.
pub fn joined(
    expected: &[Committed],
    events: &[Value],
    table: &'static str,
    at_most: usize,
) -> Joined {
    let history = projected(expected, table);
    let streamed = events
        .iter()
        .filter(|event| event["table"] == table && event["op"] != "r")
        .count();
    // The changes of the transactions from `before` on; each transaction has at least one, so
    // at most one `before` has as many as the sink streamed.
    let limit = at_most.min(history.len());
    let mut remaining: usize = history.iter().map(|c| c.changes.len()).sum();
    let mut before = limit;
    for index in 0..=limit {
        if remaining == streamed {
            before = index;
            break;
        }
        remaining -= history.get(index).map_or(0, |c| c.changes.len());
    }
    let mut rows = Rows::new();
    for change in history[..before].iter().flat_map(|c| &c.changes) {
        apply(&mut rows, change);
    }
    Joined {
        table,
        before,
        rows,
    }
}

/// A committed change applied to a table's rows (a DDL changes none that the model compares).
fn apply(rows: &mut Rows, change: &Change) {
    let key = change.image.get("ID").and_then(Value::as_i64);
    match (change.op, key) {
        ("i", Some(key)) => {
            rows.insert(key, change.image.clone());
        }
        ("u", Some(key)) => rows.entry(key).or_default().extend(change.image.clone()),
        ("d", Some(key)) => {
            rows.remove(&key);
        }
        ("truncate", _) => rows.clear(),
        _ => {}
    }
}

/// The transactions the sink must stream: the model's, less the changes of each joined table
/// in its transactions before it joined (a transaction left with no change is left out).
pub fn streamed(expected: &[Committed], joined: &[Joined]) -> Vec<Committed> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut kept = Vec::new();
    for committed in expected {
        let mut changes = committed.changes.clone();
        for join in joined {
            if committed.changes.iter().any(|c| c.table == join.table) {
                let count = seen.entry(join.table).or_default();
                if *count < join.before {
                    changes.retain(|c| c.table != join.table);
                }
                *count += 1;
            }
        }
        if !changes.is_empty() {
            kept.push(Committed {
                name: committed.name.clone(),
                changes,
            });
        }
    }
    kept
}

/// Checks the `r` events among `events` (one sink's, in order), table by table, and returns
/// how many each table has. The model of which rows must appear and where, for a table re-read
/// by a request and for one that joined the capture (`joined`, with its rows when it joined):
///
/// - The stream's changes before an `r` event build the table as of its chunk's SCN (every
///   change committed at or below it comes first, none above it), starting from the rows a
///   joined table had when it joined. The row read must be the row they built (on the columns
///   both know: a DDL may have added or dropped some since).
/// - A row read twice must have been deleted or inserted in between (a new ROWID, read again by
///   a later chunk).
/// - Every row standing from the first read to the last, untouched, must be read, since a
///   request runs to its end; for a joined table also every row it had when it joined and that
///   stood untouched until the last read (until the end when nothing was read).
pub fn check_reads(events: &[Value], joined: &[Joined]) -> Result<BTreeMap<String, usize>, String> {
    let mut tables: BTreeSet<&str> = events
        .iter()
        .filter(|event| event["op"] == "r")
        .filter_map(|event| event["table"].as_str())
        .collect();
    // A joined table is checked even when the sink has none of its events (nothing read).
    tables.extend(joined.iter().map(|join| join.table));
    let mut reads = BTreeMap::new();
    for table in tables {
        let of_table: Vec<&Value> = events.iter().filter(|e| e["table"] == table).collect();
        let join = joined.iter().find(|join| join.table == table);
        let count = check_table_reads(table, &of_table, join.map(|join| &join.rows))?;
        reads.insert(table.to_owned(), count);
    }
    Ok(reads)
}

fn id(image: &Value) -> Option<i64> {
    image["ID"].as_i64()
}

/// [`check_reads`] for the events of one table; `joined_with` the rows it had when it joined.
fn check_table_reads(
    table: &str,
    events: &[&Value],
    joined_with: Option<&Rows>,
) -> Result<usize, String> {
    let mut rows: Rows = joined_with.cloned().unwrap_or_default();
    // Keys read since their last insert or delete.
    let mut read: BTreeSet<i64> = BTreeSet::new();
    let mut reads = 0;
    for event in events {
        if event["op"] == "r" {
            let key = id(&event["after"]).ok_or_else(|| format!("a read without ID: {event}"))?;
            let Some(row) = rows.get(&key) else {
                return Err(format!(
                    "a read of {table} {key}, which the stream has not inserted (or has \
                     deleted){}: {event}",
                    if joined_with.is_some() {
                        " and which the table did not have when it joined"
                    } else {
                        ""
                    }
                ));
            };
            for (column, value) in object(&event["after"]) {
                if let Some(built) = row.get(&column)
                    && *built != value
                {
                    return Err(format!(
                        "the read of {table} {key} has {column}={value}, the stream before it \
                         left {built}: it is not placed at its SCN"
                    ));
                }
            }
            if !read.insert(key) {
                return Err(format!(
                    "{table} {key} read twice with no insert or delete between"
                ));
            }
            reads += 1;
        } else {
            replay(&mut rows, event, Some(&mut read));
        }
    }
    let last = events.iter().rposition(|e| e["op"] == "r");
    let first = events.iter().position(|e| e["op"] == "r");
    // Completeness: the rows standing at the start of a window and untouched until its end.
    let mut windows = Vec::new();
    if let (Some(first), Some(last)) = (first, last) {
        windows.push((first, last + 1, "through the whole read"));
    }
    if joined_with.is_some() {
        let end = last.map_or(events.len(), |last| last + 1);
        windows.push((0, end, "from when the table joined until the last read"));
    }
    for (start, end, since) in windows {
        let during = &events[start..end];
        if during.iter().any(|e| e["op"] == "truncate") {
            continue;
        }
        let mut standing: Rows = joined_with.cloned().unwrap_or_default();
        for event in &events[..start] {
            replay(&mut standing, event, None);
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
        if let Some(missed) = standing
            .keys()
            .find(|key| !touched.contains(key) && !ever_read.contains(key))
        {
            return Err(format!(
                "{table} {missed} stood {since}, untouched, and was never read ({reads} rows \
                 read)"
            ));
        }
    }
    Ok(reads)
}

/// A streamed event applied to a table's rows (`read`: the keys read since their last insert
/// or delete, which an insert or delete clears).
fn replay(rows: &mut Rows, event: &Value, mut read: Option<&mut BTreeSet<i64>>) {
    let mut forget = |key: i64| {
        if let Some(read) = read.as_deref_mut() {
            read.remove(&key);
        }
    };
    match event["op"].as_str().unwrap_or_default() {
        "i" | "u" => {
            if let Some(before) = id(&event["before"])
                && Some(before) != id(&event["after"])
            {
                rows.remove(&before);
                forget(before);
            }
            let Some(key) = id(&event["after"]) else {
                return;
            };
            if event["op"] == "i" {
                forget(key);
            }
            rows.insert(key, object(&event["after"]));
        }
        "d" => {
            if let Some(key) = id(&event["before"]) {
                rows.remove(&key);
                forget(key);
            }
        }
        "truncate" => {
            rows.clear();
            if let Some(read) = read {
                read.clear();
            }
        }
        _ => {}
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

    fn row(table: &'static str, op: &'static str, id: i64, qty: i64) -> Change {
        Change {
            op,
            table,
            image: BTreeMap::from([
                ("ID".to_owned(), Value::from(id)),
                ("QTY".to_owned(), Value::from(qty)),
            ]),
        }
    }

    /// A compact event of `change` (`r`: a read of its image).
    fn event(op: &str, change: &Change) -> Value {
        let image = Value::Object(change.image.clone().into_iter().collect());
        let (before, after) = if op == "d" {
            (image, Value::Null)
        } else {
            (Value::Null, image)
        };
        serde_json::json!({"op": op, "table": change.table, "before": before, "after": after,
                           "xid": "x", "commit_scn": 1})
    }

    /// EARLY: two transactions before it joined (rows 1 and 2, then 1 updated and 3 inserted),
    /// one after (2 deleted, 4 inserted); an ORDERS transaction in between.
    fn early_history() -> Vec<Committed> {
        vec![
            Committed {
                name: "a".to_owned(),
                changes: vec![row("EARLY", "i", 1, 10), row("EARLY", "i", 2, 20)],
            },
            Committed {
                name: "b".to_owned(),
                changes: vec![row("ORDERS", "i", 9, 0), row("EARLY", "u", 1, 11)],
            },
            Committed {
                name: "c".to_owned(),
                changes: vec![row("EARLY", "i", 3, 30)],
            },
            Committed {
                name: "d".to_owned(),
                changes: vec![row("EARLY", "d", 2, 20), row("EARLY", "i", 4, 40)],
            },
        ]
    }

    #[test]
    fn a_joined_table_streams_from_where_it_joined_and_is_read_as_it_stood() {
        let expected = early_history();
        // Joined after b: c and d streamed, reads placed after c.
        let events = [
            event("i", &row("EARLY", "i", 3, 30)),
            event("r", &row("EARLY", "r", 1, 11)),
            event("r", &row("EARLY", "r", 2, 20)),
            event("r", &row("EARLY", "r", 3, 30)),
            event("d", &row("EARLY", "d", 2, 20)),
            event("i", &row("EARLY", "i", 4, 40)),
        ];
        let join = joined(&expected, &events, "EARLY", 3);
        assert_eq!(join.before, 2);
        assert_eq!(join.rows.keys().copied().collect::<Vec<_>>(), [1, 2]);
        let reads = check_reads(&events, std::slice::from_ref(&join)).unwrap();
        assert_eq!(reads["EARLY"], 3);
        // b's ORDERS change stays; EARLY's changes of a and b go.
        let kept = streamed(&expected, std::slice::from_ref(&join));
        let names: Vec<&str> = kept.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["b", "c", "d"]);
        assert_eq!(kept[0].changes, [row("ORDERS", "i", 9, 0)]);
        // The capture never ran without EARLY from b on: a stream from c on is one too short.
        assert_eq!(joined(&expected, &events, "EARLY", 1).before, 1);
    }

    #[test]
    fn wrong_missing_or_repeated_reads_of_a_joined_table_are_named() {
        let expected = early_history();
        let check = |events: &[Value]| {
            let join = joined(&expected, events, "EARLY", 3);
            check_reads(events, &[join]).unwrap_err()
        };
        let after_join = [
            event("i", &row("EARLY", "i", 3, 30)),
            event("d", &row("EARLY", "d", 2, 20)),
            event("i", &row("EARLY", "i", 4, 40)),
        ];
        // Row 1 stood from the join to the end and nothing read it.
        let mut events = after_join.to_vec();
        assert!(check(&events).contains("EARLY 1 stood from when the table joined"));
        // Read with the value it had before b's update.
        events.insert(1, event("r", &row("EARLY", "r", 1, 10)));
        assert!(check(&events).contains("has QTY=10, the stream before it left 11"));
        // Read twice.
        events[1] = event("r", &row("EARLY", "r", 1, 11));
        events.insert(2, event("r", &row("EARLY", "r", 1, 11)));
        assert!(check(&events).contains("EARLY 1 read twice"));
        // A row the table never had.
        events[2] = event("r", &row("EARLY", "r", 7, 0));
        assert!(check(&events).contains("a read of EARLY 7"));
        // Row 2, deleted after the join, read after its delete.
        let events = [
            event("i", &row("EARLY", "i", 3, 30)),
            event("r", &row("EARLY", "r", 1, 11)),
            event("d", &row("EARLY", "d", 2, 20)),
            event("r", &row("EARLY", "r", 2, 20)),
        ];
        assert!(check(&events).contains("a read of EARLY 2"));
    }

    #[test]
    fn a_re_read_table_must_read_every_row_standing_untouched_through_the_read() {
        let insert = |id| event("i", &row("ORDERS", "i", id, 0));
        let read = |id| event("r", &row("ORDERS", "r", id, 0));
        let events = [insert(1), insert(2), insert(3), read(1), insert(4), read(4)];
        let error = check_reads(&events, &[]).unwrap_err();
        assert!(
            error.contains("ORDERS 2 stood through the whole read"),
            "{error}"
        );
        let events = [insert(1), read(1)];
        assert_eq!(check_reads(&events, &[]).unwrap()["ORDERS"], 1);
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
