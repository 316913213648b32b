//! Which structure each change event of a table must carry, and every way the events Debezium's
//! `JsonConverter` read back (the `row schema` and `table change` lines of
//! `tests/env/jsonconverter`) differ from it.
//!
//! The structures and the SCNs that separate them come from the simulated database itself: the
//! workload is applied step by step and, around each DDL on the table, the database's current SCN
//! is read before and after and the table's columns after. The DDL's own SCN lies between the
//! two, so an event at an SCN up to the first was written under the older structure and an event
//! past the second under the newer one; an event between them cannot be a row of this table (the
//! DDL holds its lock), and is reported. The capture's schema history applies a structure from
//! the SCN after its DDL's commit (docs/kafka.md), which is the same cut.

use std::collections::BTreeMap;

use redoline_capture::simulator::Simulator;
use redoline_capture::source::DatabaseCatalog;

/// A structure of the table: its columns and key in order, and the DDL that made it.
#[derive(Clone, Debug, PartialEq)]
pub struct TableVersion {
    /// `None` for the structure the table had before the first DDL of the workload.
    pub ddl: Option<DdlBounds>,
    pub columns: Vec<String>,
    pub key: Vec<String>,
}

/// A DDL statement and the database's current SCN right before and right after it.
#[derive(Clone, Debug, PartialEq)]
pub struct DdlBounds {
    pub statement: String,
    pub scn_before: u64,
    pub scn_after: u64,
}

/// Every structure `owner.table` has had in a workload, in order, with the SCN bounds of the DDL
/// that made each: the scenario's lines applied one by one to a simulator of their own.
pub fn table_versions(scenario: &str, owner: &str, table: &str) -> Vec<TableVersion> {
    let mut sim = Simulator::new();
    let mut versions: Vec<TableVersion> = Vec::new();
    let qualified = format!("{owner}.{table}");
    for line in scenario.lines() {
        let statement = serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|step| step.get("ddl").and_then(|d| d.as_str()).map(str::to_owned))
            .filter(|statement| statement.contains(&qualified));
        let scn_before = sim.current_scn().expect("the simulator's SCN");
        sim.apply_line(line).expect("the scenario is valid");
        let Some(schema) = sim.schema(owner, table) else {
            continue;
        };
        let structure = |ddl| TableVersion {
            ddl,
            columns: schema.columns().iter().map(|c| c.name.clone()).collect(),
            key: schema.key_columns().map(|c| c.name.clone()).collect(),
        };
        if versions.is_empty() {
            versions.push(structure(None));
        }
        if let Some(statement) = statement {
            let scn_after = sim.current_scn().expect("the simulator's SCN");
            versions.push(structure(Some(DdlBounds {
                statement,
                scn_before,
                scn_after,
            })));
        }
    }
    versions
}

/// A change event as the converter read it (`row schema` line).
#[derive(Clone, Debug, PartialEq)]
pub struct RowSchema {
    pub topic: String,
    pub op: String,
    /// `source.scn`: the change's own SCN (the snapshot's for a read).
    pub scn: u64,
    /// The envelope's schema name and version, `<topic>.Envelope/2`.
    pub envelope: String,
    /// The row schema's name, `<topic>.Value`.
    pub value: String,
    pub fields: Vec<String>,
    pub key: Vec<String>,
}

/// One `tableChanges` entry of a schema change event (`table change` line).
#[derive(Clone, Debug, PartialEq)]
pub struct TableChange {
    pub scn: u64,
    pub kind: String,
    pub id: String,
    /// Column names with their `position`.
    pub columns: Vec<(String, u32)>,
    pub key: Vec<String>,
}

/// A schema change event: its `ddl` and its table changes.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaChange {
    pub ddl: String,
    pub tables: Vec<TableChange>,
}

fn list(text: &str) -> Vec<String> {
    text.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `name=value` items of a line after its leading words, by name.
fn items<'a>(words: impl Iterator<Item = &'a str>) -> BTreeMap<&'a str, &'a str> {
    words.filter_map(|w| w.split_once('=')).collect()
}

/// The row schemas and schema change events of the checker's output, in its order.
pub fn parse_check_output(output: &str) -> Result<(Vec<RowSchema>, Vec<SchemaChange>), String> {
    let mut rows = Vec::new();
    let mut changes: Vec<SchemaChange> = Vec::new();
    for line in output.lines().map(str::trim) {
        let bad = || format!("unreadable checker line {line:?}");
        if let Some(rest) = line.strip_prefix("row schema ") {
            let mut words = rest.split(' ');
            let topic = words.next().ok_or_else(bad)?.to_owned();
            let op = words.next().ok_or_else(bad)?.to_owned();
            let named = items(words);
            let get = |name: &str| named.get(name).copied().ok_or_else(bad);
            rows.push(RowSchema {
                topic,
                op,
                scn: get("scn")?.parse().map_err(|_| bad())?,
                envelope: get("envelope")?.to_owned(),
                value: get("value")?.to_owned(),
                fields: list(get("fields")?),
                key: list(get("key")?),
            });
        } else if let Some(ddl) = line.strip_prefix("schema change ") {
            changes.push(SchemaChange {
                ddl: ddl.to_owned(),
                tables: Vec::new(),
            });
        } else if let Some(rest) = line.strip_prefix("table change ") {
            let mut words = rest.split(' ');
            let scn = words.next().and_then(|w| w.strip_prefix("scn="));
            let kind = words.next().ok_or_else(bad)?.to_owned();
            let id = words.next().ok_or_else(bad)?.to_owned();
            let named = items(words);
            let get = |name: &str| named.get(name).copied().ok_or_else(bad);
            let columns = list(get("columns")?)
                .into_iter()
                .map(|c| {
                    let (name, position) = c.rsplit_once('@').ok_or_else(bad)?;
                    Ok((name.to_owned(), position.parse().map_err(|_| bad())?))
                })
                .collect::<Result<_, String>>()?;
            let change = TableChange {
                scn: scn.and_then(|s| s.parse().ok()).ok_or_else(bad)?,
                kind,
                id,
                columns,
                key: list(get("key")?),
            };
            changes.last_mut().ok_or_else(bad)?.tables.push(change);
        }
    }
    Ok((rows, changes))
}

/// The index into `versions` of the structure in force at `scn`, or why there is none.
fn version_at(versions: &[TableVersion], scn: u64) -> Result<usize, String> {
    let mut index = 0;
    for (i, version) in versions.iter().enumerate() {
        let Some(ddl) = &version.ddl else { continue };
        if scn > ddl.scn_after {
            index = i;
        } else if scn > ddl.scn_before {
            return Err(format!(
                "lies within the SCNs of `{}` ({}..={})",
                ddl.statement,
                ddl.scn_before + 1,
                ddl.scn_after
            ));
        }
    }
    Ok(index)
}

fn describe(version: &TableVersion) -> String {
    match &version.ddl {
        None => "the structure before any DDL".to_owned(),
        Some(ddl) => format!("the structure after `{}`", ddl.statement),
    }
}

/// Every way the events of `topic` and the schema change events on the capture's schema change
/// topic differ from the table's `versions`: a value schema other than the one in force at the
/// event's SCN (a structure switched early or late, or never), an envelope or key out of shape, a
/// structure no event carries (the check would be vacuous), and schema change events missing,
/// extra, out of order or with other columns, key, type or SCN than their DDL.
pub fn differences(
    versions: &[TableVersion],
    topic: &str,
    rows: &[RowSchema],
    changes: &[SchemaChange],
) -> Vec<String> {
    let mut out = Vec::new();
    let mut carried = vec![0usize; versions.len()];
    let envelope = format!("{topic}.Envelope/2");
    let value = format!("{topic}.Value");
    for row in rows.iter().filter(|r| r.topic == topic) {
        let event = format!("{topic} {} at SCN {}", row.op, row.scn);
        if row.envelope != envelope || row.value != value {
            out.push(format!(
                "{event}: envelope {} with rows {}, Debezium names them {envelope} and {value}",
                row.envelope, row.value
            ));
        }
        let index = match version_at(versions, row.scn) {
            Ok(index) => index,
            Err(why) => {
                out.push(format!("{event} {why}"));
                continue;
            }
        };
        let version = &versions[index];
        carried[index] += 1;
        if row.fields != version.columns {
            let carries = versions
                .iter()
                .position(|v| v.columns == row.fields)
                .map_or_else(
                    || "no structure of the table".to_owned(),
                    |i| describe(&versions[i]),
                );
            out.push(format!(
                "{event} has fields {:?} ({carries}), but in force at its SCN is {} with {:?}",
                row.fields,
                describe(version),
                version.columns
            ));
        }
        if row.key != version.key {
            out.push(format!(
                "{event} has key fields {:?}, the table's key is {:?}",
                row.key, version.key
            ));
        }
    }
    for (version, count) in versions.iter().zip(&carried) {
        if *count == 0 {
            out.push(format!(
                "no event of {topic} is written under {}: the workload does not test it",
                describe(version)
            ));
        }
    }

    let ddls: Vec<(&DdlBounds, &TableVersion)> = versions
        .iter()
        .filter_map(|v| v.ddl.as_ref().map(|d| (d, v)))
        .collect();
    if changes.len() != ddls.len() {
        out.push(format!(
            "{} schema change events, one per DDL makes {}: {:?}",
            changes.len(),
            ddls.len(),
            changes.iter().map(|c| &c.ddl).collect::<Vec<_>>()
        ));
    }
    for (i, (change, (ddl, version))) in changes.iter().zip(&ddls).enumerate() {
        let n = i + 1;
        if change.ddl.trim_end_matches(';') != ddl.statement.trim_end_matches(';') {
            out.push(format!(
                "schema change event {n} is for `{}`, the DDL {n} is `{}`",
                change.ddl, ddl.statement
            ));
        }
        let [table] = change.tables.as_slice() else {
            out.push(format!(
                "schema change event {n} has {} table changes, not one",
                change.tables.len()
            ));
            continue;
        };
        let suffix = topic.split_once('.').map_or(topic, |(_, rest)| rest);
        let id_suffix: String = suffix
            .split('.')
            .map(|part| format!(".\"{part}\""))
            .collect();
        if table.kind != "ALTER" || !table.id.ends_with(&id_suffix) {
            out.push(format!(
                "schema change event {n}: {} of {}, expected ALTER of \"<db>\"{id_suffix}",
                table.kind, table.id
            ));
        }
        if table.scn <= ddl.scn_before || table.scn > ddl.scn_after {
            out.push(format!(
                "schema change event {n} at SCN {}, its DDL lies in {}..={}",
                table.scn,
                ddl.scn_before + 1,
                ddl.scn_after
            ));
        }
        let names: Vec<String> = table.columns.iter().map(|(c, _)| c.clone()).collect();
        let positions: Vec<u32> = table.columns.iter().map(|(_, p)| *p).collect();
        let ordinal: Vec<u32> = (1..=u32::try_from(positions.len()).unwrap_or(0)).collect();
        if names != version.columns || positions != ordinal {
            out.push(format!(
                "schema change event {n} has columns {:?}, after `{}` the table has {:?} at 1..",
                table.columns, ddl.statement, version.columns
            ));
        }
        if table.key != version.key {
            out.push(format!(
                "schema change event {n} has key {:?}, the table's is {:?}",
                table.key, version.key
            ));
        }
    }
    out
}

/// The checker is not vacuous: an early switch, a missing one, a structure no event is written
/// under, and a schema change event missing, out of order or wrong are each reported.
#[test]
fn schema_version_differences_are_reported() {
    let version = |ddl: Option<(&str, u64, u64)>, columns: &[&str]| TableVersion {
        ddl: ddl.map(|(statement, scn_before, scn_after)| DdlBounds {
            statement: statement.to_owned(),
            scn_before,
            scn_after,
        }),
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        key: vec!["ID".to_owned()],
    };
    let add = "ALTER TABLE APP.T ADD (NOTE VARCHAR2(5))";
    let drop = "ALTER TABLE APP.T DROP COLUMN NAME";
    let versions = vec![
        version(None, &["ID", "NAME"]),
        version(Some((add, 100, 103)), &["ID", "NAME", "NOTE"]),
        version(Some((drop, 200, 202)), &["ID", "NOTE"]),
    ];
    let topic = "p.APP.T";
    let row = |op: &str, scn: u64, fields: &[&str]| RowSchema {
        topic: topic.to_owned(),
        op: op.to_owned(),
        scn,
        envelope: format!("{topic}.Envelope/2"),
        value: format!("{topic}.Value"),
        fields: fields.iter().map(|c| (*c).to_owned()).collect(),
        key: vec!["ID".to_owned()],
    };
    let change = |ddl: &str, scn: u64, columns: &[&str]| SchemaChange {
        ddl: ddl.to_owned(),
        tables: vec![TableChange {
            scn,
            kind: "ALTER".to_owned(),
            id: "\"DB\".\"APP\".\"T\"".to_owned(),
            columns: columns
                .iter()
                .zip(1..)
                .map(|(c, p)| ((*c).to_owned(), p))
                .collect(),
            key: vec!["ID".to_owned()],
        }],
    };
    let rows = vec![
        row("r", 50, &["ID", "NAME"]),
        row("u", 100, &["ID", "NAME"]),
        row("c", 104, &["ID", "NAME", "NOTE"]),
        row("u", 200, &["ID", "NAME", "NOTE"]),
        row("d", 203, &["ID", "NOTE"]),
    ];
    let changes = vec![
        change(add, 102, &["ID", "NAME", "NOTE"]),
        change(&format!("{drop};"), 201, &["ID", "NOTE"]),
    ];
    assert_eq!(
        differences(&versions, topic, &rows, &changes),
        Vec::<String>::new()
    );

    // The new structure one event early (the DROP's, on the last row before it).
    let mut early = rows.clone();
    early[3].fields = vec!["ID".to_owned(), "NOTE".to_owned()];
    let found = differences(&versions, topic, &early, &changes);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("u at SCN 200"), "{found:?}");

    // No switch at the ADD: the first event after it carries the old fields.
    let mut missing = rows.clone();
    missing[2].fields = vec!["ID".to_owned(), "NAME".to_owned()];
    let found = differences(&versions, topic, &missing, &changes);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("c at SCN 104"), "{found:?}");
    // No event between the ADD and the DROP: the workload would not test that structure.
    let mut sparse = rows.clone();
    sparse.drain(2..4);
    let found = differences(&versions, topic, &sparse, &changes);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("no event") && found[0].contains(add),
        "{found:?}"
    );

    // An event inside a DDL's SCNs.
    let mut inside = rows.clone();
    inside[2].scn = 101;
    let found = differences(&versions, topic, &inside, &changes);
    assert!(found.iter().any(|d| d.contains("within")), "{found:?}");

    // A schema change event missing, then the two swapped, then the DROP's with NAME kept.
    let found = differences(&versions, topic, &rows, &changes[..1]);
    assert_eq!(found.len(), 1, "{found:?}");
    let swapped = vec![changes[1].clone(), changes[0].clone()];
    let found = differences(&versions, topic, &rows, &swapped);
    assert!(found.len() >= 4, "{found:?}");
    let mut kept = changes.clone();
    kept[1] = change(drop, 201, &["ID", "NAME", "NOTE"]);
    let found = differences(&versions, topic, &rows, &kept);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("event 2 has columns"), "{found:?}");

    // The checker's lines read back.
    let output = "checked 3 records\n\
        row schema p.APP.T c scn=104 envelope=p.APP.T.Envelope/2 value=p.APP.T.Value fields=ID,NAME,NOTE key=ID\n\
        decimal u N=1.00\n\
        schema change ALTER TABLE APP.T ADD (NOTE VARCHAR2(5))\n\
        table change scn=102 ALTER \"DB\".\"APP\".\"T\" columns=ID@1,NAME@2,NOTE@3 key=ID\n";
    let (parsed_rows, parsed_changes) = parse_check_output(output).unwrap();
    assert_eq!(parsed_rows, vec![rows[2].clone()]);
    assert_eq!(parsed_changes, vec![changes[0].clone()]);
}
