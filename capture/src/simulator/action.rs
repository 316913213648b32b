//! The heartbeat action query on the simulator (`spec.heartbeat.actionQuery`).
//!
//! The simulator runs an `insert`, `update` or `delete` written in the SQL_REDO grammar (quoted
//! identifiers, literal values), such as
//! `update "APP"."BEAT" set "N" = '2' where "ID" = '1'`, as a transaction of its own on a
//! declared table: it goes through the same checks as a scenario step and writes its redo like
//! any other transaction (so a captured heartbeat table's change is emitted). Anything else (other
//! statements, function calls such as `SYSTIMESTAMP`, an update or delete without a where clause)
//! is refused with the reason, as a database would refuse a query it cannot run.

use serde_json::{Map, Value, json};

use crate::redo::{ColumnValue, DmlStatement, RawValue, TableRef, parse_dml};

/// The scenario lines of an action query run as transaction `tx`: the change, then its commit.
pub(super) fn action_steps(sql: &str, tx: &str) -> Result<[String; 2], String> {
    let sql = sql.trim();
    let sql = sql.strip_suffix(';').unwrap_or(sql);
    let statement = parse_dml(sql).map_err(|error| {
        format!(
            "the simulator runs only an insert, update or delete in the SQL_REDO grammar \
             (quoted identifiers, literal values): {error}"
        )
    })?;
    let change = match statement {
        DmlStatement::Insert { table, values } => json!({
            "tx": tx,
            "insert": table_name(&table),
            "values": values_object(&values)?,
        }),
        DmlStatement::Update {
            table, set, where_, ..
        } => json!({
            "tx": tx,
            "update": table_name(&table),
            "set": values_object(&set)?,
            "where": where_object(&where_)?,
        }),
        DmlStatement::Delete { table, where_, .. } => json!({
            "tx": tx,
            "delete": table_name(&table),
            "where": where_object(&where_)?,
        }),
    };
    let commit = json!({"tx": tx, "commit": true});
    Ok([change.to_string(), commit.to_string()])
}

fn table_name(table: &TableRef<'_>) -> String {
    match &table.schema {
        Some(owner) => format!("{owner}.{}", table.table),
        None => table.table.to_string(),
    }
}

fn where_object(values: &[ColumnValue<'_>]) -> Result<Value, String> {
    if values.is_empty() {
        return Err("the simulator needs a where clause naming the row to change".to_owned());
    }
    values_object(values)
}

fn values_object(values: &[ColumnValue<'_>]) -> Result<Value, String> {
    let mut object = Map::with_capacity(values.len());
    for (column, value) in values {
        let value = match value {
            RawValue::Null => Value::Null,
            RawValue::Text(text) => Value::String(text.to_string()),
            RawValue::Unsupported | RawValue::Call { .. } => {
                return Err(format!(
                    "column {column}: the simulator takes only literal values (quoted text, \
                     numbers, NULL)"
                ));
            }
        };
        object.insert(column.to_string(), value);
    }
    Ok(Value::Object(object))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_become_a_change_and_its_commit() {
        let [change, commit] = action_steps(
            r#"update "APP"."BEAT" set "N" = '2' where "ID" = '1';"#,
            "hb",
        )
        .unwrap();
        let change: Value = serde_json::from_str(&change).unwrap();
        assert_eq!(
            change,
            json!({"tx": "hb", "update": "APP.BEAT", "set": {"N": "2"}, "where": {"ID": "1"}})
        );
        assert_eq!(
            serde_json::from_str::<Value>(&commit).unwrap(),
            json!({"tx": "hb", "commit": true})
        );
        let [insert, _] =
            action_steps(r#"insert into "BEAT"("ID","N") values ('7',NULL)"#, "hb").unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&insert).unwrap(),
            json!({"tx": "hb", "insert": "BEAT", "values": {"ID": "7", "N": null}})
        );
    }

    #[test]
    fn what_the_simulator_cannot_run_is_refused_with_the_reason() {
        for (sql, reason) in [
            ("BEGIN beat; END;", "SQL_REDO grammar"),
            (r#"update "APP"."BEAT" set "N" = '2'"#, "where clause"),
            (
                r#"update "APP"."BEAT" set "AT" = SYSTIMESTAMP where "ID" = '1'"#,
                "literal values",
            ),
        ] {
            let error = action_steps(sql, "hb").unwrap_err();
            assert!(error.contains(reason), "{sql}: {error}");
        }
    }
}
