//! Typed steps: DML and transaction ends built in Rust with values already typed, for generated
//! workloads (benchmarks, property tests) that would otherwise write JSON only for the simulator
//! to parse and type it again.
//!
//! A [`TypedStep`] names its table by a [`TableHandle`] resolved once
//! ([`Simulator::table_handle`]) and its columns by position ([`Simulator::column_position`]).
//! It goes through the same checks as a scenario step: each value must be the variant its
//! column stores and fit it (CHAR values are blank-padded, empty text becomes NULL), NOT NULL,
//! unique keys, matching and locked rows, known transactions; errors name the step's ordinal as
//! the line, like [`Simulator::apply`]. A handle taken before a DDL on its table (or its drop)
//! is refused: column positions may have moved.

use super::scenario::Dml;
use super::transaction::End;
use super::{ScenarioError, Simulator, values};
use crate::value::Value;

/// A table resolved once; valid until the next DDL on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableHandle {
    index: usize,
    ddl_scn: u64,
}

/// One step with typed values; see the module docs.
#[derive(Clone, Debug, PartialEq)]
pub enum TypedStep {
    /// An INSERT of one value per column, in column order.
    Insert {
        tx: String,
        table: TableHandle,
        values: Vec<Value>,
    },
    /// An UPDATE of the rows whose columns (by position) hold the `where_` values.
    Update {
        tx: String,
        table: TableHandle,
        where_: Vec<(usize, Value)>,
        set: Vec<(usize, Value)>,
    },
    /// A DELETE of the rows whose columns (by position) hold the `where_` values.
    Delete {
        tx: String,
        table: TableHandle,
        where_: Vec<(usize, Value)>,
    },
    Commit {
        tx: String,
    },
    Rollback {
        tx: String,
    },
}

impl Simulator {
    /// The handle of a live table; `None` when there is none of that name.
    pub fn table_handle(&self, owner: &str, table: &str) -> Option<TableHandle> {
        let index = *self.table_index.get(&format!("{owner}.{table}"))?;
        let ddl_scn = self.tables.get(index)?.ddl_scn;
        Some(TableHandle { index, ddl_scn })
    }

    /// The position of a column of the handle's table.
    pub fn column_position(&self, table: TableHandle, column: &str) -> Option<usize> {
        self.tables
            .get(table.index)
            .and_then(|t| t.column_positions.get(column).copied())
    }

    /// Applies one typed step; errors name its ordinal as the line.
    pub fn apply_typed(&mut self, step: TypedStep) -> Result<(), ScenarioError> {
        self.steps += 1;
        let line = self.steps;
        self.catalog.scn += 1;
        let dml = |tx: String| Dml {
            tx,
            table: String::new(),
            fails: false,
            user: None,
        };
        match step {
            TypedStep::Insert {
                tx,
                table,
                mut values,
            } => {
                let t = self.handle(line, "insert", table)?;
                let columns = self.tables[t].schema.columns();
                if values.len() != columns.len() {
                    return Err(ScenarioError::new(
                        line,
                        "values",
                        format!(
                            "{} values for the {} columns of {}",
                            values.len(),
                            columns.len(),
                            self.tables[t].schema.qualified_name()
                        ),
                    ));
                }
                for (i, value) in values.iter_mut().enumerate() {
                    *value =
                        self.checked(line, "values", t, i, std::mem::replace(value, Value::Null))?;
                }
                self.insert_values(line, t, &dml(tx), values)
            }
            TypedStep::Update {
                tx,
                table,
                where_,
                set,
            } => {
                let (mut conditions, mut assignments) = (where_, set);
                let t = self.handle(line, "update", table)?;
                self.check_columns(line, "where", t, &mut conditions)?;
                self.check_columns(line, "set", t, &mut assignments)?;
                self.update_values(line, t, &dml(tx), &conditions, assignments)
            }
            TypedStep::Delete {
                tx,
                table,
                mut where_,
            } => {
                let t = self.handle(line, "delete", table)?;
                self.check_columns(line, "where", t, &mut where_)?;
                self.delete_values(line, t, &dml(tx), &where_)
            }
            TypedStep::Commit { tx } => self.end_transaction(line, &tx, End::Commit),
            TypedStep::Rollback { tx } => self.end_transaction(line, &tx, End::Rollback),
        }
    }

    /// The table index of a handle still valid.
    fn handle(
        &self,
        line: usize,
        field: &str,
        handle: TableHandle,
    ) -> Result<usize, ScenarioError> {
        match self.tables.get(handle.index) {
            Some(table) if !table.dropped && table.ddl_scn == handle.ddl_scn => Ok(handle.index),
            _ => Err(ScenarioError::new(
                line,
                field,
                "the table handle predates a DDL on its table (or its drop): resolve it again",
            )),
        }
    }

    /// `value` checked for column `column` of table `t`; errors name `field.COLUMN`.
    fn checked(
        &self,
        line: usize,
        field: &str,
        t: usize,
        column: usize,
        value: Value,
    ) -> Result<Value, ScenarioError> {
        let columns = self.tables[t].schema.columns();
        let Some(declared) = columns.get(column) else {
            return Err(ScenarioError::new(
                line,
                field,
                format!(
                    "{} has no column at position {column}",
                    self.tables[t].schema.qualified_name()
                ),
            ));
        };
        values::check_value(value, &declared.data_type).map_err(|message| {
            ScenarioError::new(line, &format!("{field}.{}", declared.name), message)
        })
    }

    /// Checks `(column position, value)` pairs in place.
    fn check_columns(
        &self,
        line: usize,
        field: &str,
        t: usize,
        values: &mut [(usize, Value)],
    ) -> Result<(), ScenarioError> {
        for (i, value) in values.iter_mut() {
            *value = self.checked(line, field, t, *i, std::mem::replace(value, Value::Null))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{DatabaseCatalog, LogMinerRow, MiningWindow, RedoMiner};
    use crate::value::OracleNumber;

    const TABLE: &str = r#"{"table":"APP.T","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"CODE","type":"CHAR(4)"},{"name":"AMOUNT","type":"NUMBER(6,2)"}],"logging":"all"}"#;

    fn number(text: &str) -> Value {
        Value::Number(OracleNumber::parse(text).unwrap())
    }

    fn rows(sim: &mut Simulator, with_sql_undo: bool) -> Vec<LogMinerRow> {
        let end = sim.current_scn().unwrap();
        sim.flush_redo().unwrap();
        let window = MiningWindow {
            start_scn: 0,
            end_scn: end,
            logs: sim.logs_covering(0).unwrap().logs,
            objects: Vec::new(),
            tables: vec![("APP".to_owned(), "T".to_owned())],
            pdb: None,
            with_sql_undo,
        };
        sim.mined_rows(&window).unwrap()
    }

    fn json_simulator() -> Simulator {
        let mut sim = Simulator::new();
        for line in [
            TABLE,
            r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"CODE":"ab","AMOUNT":"1.50"}}"#,
            r#"{"tx":"a","insert":"APP.T","values":{"ID":2,"CODE":"","AMOUNT":null}}"#,
            r#"{"tx":"a","update":"APP.T","where":{"ID":1},"set":{"AMOUNT":"2.25","CODE":"x"}}"#,
            r#"{"tx":"a","delete":"APP.T","where":{"ID":2}}"#,
            r#"{"tx":"a","commit":true}"#,
            r#"{"tx":"b","update":"APP.T","where":{"ID":1},"set":{"AMOUNT":null}}"#,
            r#"{"tx":"b","rollback":true}"#,
        ] {
            sim.apply_line(line).unwrap();
        }
        sim
    }

    fn typed_simulator() -> Simulator {
        let mut sim = Simulator::new();
        sim.apply_line(TABLE).unwrap();
        let table = sim.table_handle("APP", "T").unwrap();
        let tx = |name: &str| name.to_owned();
        for step in [
            TypedStep::Insert {
                tx: tx("a"),
                table,
                values: vec![number("1"), Value::Text("ab".to_owned()), number("1.50")],
            },
            TypedStep::Insert {
                tx: tx("a"),
                table,
                values: vec![number("2"), Value::Text(String::new()), Value::Null],
            },
            TypedStep::Update {
                tx: tx("a"),
                table,
                where_: vec![(0, number("1"))],
                set: vec![(2, number("2.25")), (1, Value::Text("x".to_owned()))],
            },
            TypedStep::Delete {
                tx: tx("a"),
                table,
                where_: vec![(0, number("2"))],
            },
            TypedStep::Commit { tx: tx("a") },
            TypedStep::Update {
                tx: tx("b"),
                table,
                where_: vec![(0, number("1"))],
                set: vec![(2, Value::Null)],
            },
            TypedStep::Rollback { tx: tx("b") },
        ] {
            sim.apply_typed(step).unwrap();
        }
        sim
    }

    #[test]
    fn typed_steps_write_the_rows_json_steps_write() {
        let expected = rows(&mut json_simulator(), true);
        let typed = rows(&mut typed_simulator(), true);
        assert_eq!(typed, expected);
        assert!(typed.iter().any(|r| r.sql_undo.is_some()));
        // CHAR padded, empty text NULL, as JSON values are.
        let redo = |needle: &str| {
            typed.iter().any(|r| {
                r.sql_redo
                    .as_deref()
                    .is_some_and(|sql| sql.contains(needle))
            })
        };
        assert!(redo("values ('1','ab  ','1.5');") && redo("values ('2',NULL,NULL);"));
    }

    #[test]
    fn sql_undo_is_rendered_only_for_a_window_that_asks() {
        let with = rows(&mut typed_simulator(), true);
        let without = rows(&mut typed_simulator(), false);
        assert!(without.iter().all(|r| r.sql_undo.is_none()));
        let strip = |rows: Vec<LogMinerRow>| -> Vec<LogMinerRow> {
            rows.into_iter()
                .map(|mut r| {
                    r.sql_undo = None;
                    r
                })
                .collect()
        };
        assert_eq!(without, strip(with));
    }

    #[test]
    fn typed_values_are_checked_like_scenario_values() {
        let mut sim = Simulator::new();
        sim.apply_line(TABLE).unwrap();
        let table = sim.table_handle("APP", "T").unwrap();
        let insert = |values: Vec<Value>| TypedStep::Insert {
            tx: "a".to_owned(),
            table,
            values,
        };
        let error = sim
            .apply_typed(insert(vec![
                Value::Text("1".to_owned()),
                Value::Null,
                Value::Null,
            ]))
            .unwrap_err();
        assert_eq!((error.line, error.field.as_str()), (2, "values.ID"));
        let error = sim
            .apply_typed(insert(vec![number("1"), Value::Null, number("1.234")]))
            .unwrap_err();
        assert_eq!(error.field, "values.AMOUNT");
        assert!(error.message.contains("does not fit"), "{error}");
        let error = sim
            .apply_typed(insert(vec![number("1"), Value::Null]))
            .unwrap_err();
        assert_eq!(error.field, "values");
        let error = sim
            .apply_typed(insert(vec![Value::Null, Value::Null, Value::Null]))
            .unwrap_err();
        assert!(error.message.contains("ORA-01400"), "{error}");
        sim.apply_typed(insert(vec![number("1"), Value::Null, Value::Null]))
            .unwrap();
        let error = sim
            .apply_typed(insert(vec![number("1"), Value::Null, Value::Null]))
            .unwrap_err();
        assert!(error.message.contains("ORA-00001"), "{error}");
        let error = sim
            .apply_typed(TypedStep::Update {
                tx: "b".to_owned(),
                table,
                where_: vec![(0, number("1"))],
                set: vec![(7, Value::Null)],
            })
            .unwrap_err();
        assert_eq!(error.field, "set");
        let error = sim
            .apply_typed(TypedStep::Commit {
                tx: "nobody".to_owned(),
            })
            .unwrap_err();
        assert!(error.message.contains("unknown transaction"), "{error}");
    }

    #[test]
    fn a_handle_from_before_a_ddl_is_refused() {
        let mut sim = Simulator::new();
        sim.apply_line(TABLE).unwrap();
        let table = sim.table_handle("APP", "T").unwrap();
        assert_eq!(sim.column_position(table, "AMOUNT"), Some(2));
        sim.apply_line(r#"{"ddl":"ALTER TABLE APP.T ADD (NOTE VARCHAR2(10))"}"#)
            .unwrap();
        let step = TypedStep::Delete {
            tx: "a".to_owned(),
            table,
            where_: vec![(0, number("1"))],
        };
        let error = sim.apply_typed(step).unwrap_err();
        assert!(error.message.contains("resolve it again"), "{error}");
        assert_ne!(sim.table_handle("APP", "T"), Some(table));
    }
}
