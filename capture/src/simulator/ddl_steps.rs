//! DDL steps: the rows LogMiner writes (START, a DDL row, COMMIT; logminer.md §3) and the change
//! to the simulated dictionary, so later rows use the new shape.
//!
//! The DDL row: OPERATION_CODE 5, ROW_ID `AAAAAAAAAAAAAAAAAB`, INFO `USER DDL (PlSql=0
//! RecDep=0)`, SEG_OWNER/TABLE_NAME the table, SQL_REDO the statement as written plus `;`,
//! SQL_UNDO NULL. The internal DML on `SYS.OBJ$`, `SYS.COL$`, ... that a real DDL also writes is
//! left out: no capture mines SYS tables.
//!
//! Dictionary changes understood (anything else is written to the redo and otherwise ignored):
//! `CREATE TABLE t (c type [PRIMARY KEY] [NOT NULL], ..., [PRIMARY KEY (c, ...)])`,
//! `ALTER TABLE t ADD (c type, ...)` / `ADD c type`, `ALTER TABLE t DROP COLUMN c` /
//! `DROP (c, ...)`, `ALTER TABLE t ADD SUPPLEMENTAL LOG DATA (ALL|PRIMARY KEY) COLUMNS`,
//! `ALTER TABLE t RENAME COLUMN a TO b`, `ALTER TABLE t MODIFY (c type ...)`, `ALTER TABLE t
//! RENAME TO u` and `RENAME t TO u`, `DROP TABLE t [PURGE]` (without PURGE into the recycle
//! bin, under a `BIN$` name), `TRUNCATE TABLE t`. Each column change is a new dictionary
//! version of the table: rows written before it are rendered by number when mined after it
//! (`at_mining`). Column defaults are not modelled (added columns are NULL
//! in existing rows). A DDL on a table with uncommitted changes is refused (ORA-00054).

use std::sync::Arc;

use super::at_mining::RowObject;
use super::database::Version;
use super::scenario::TableLogging;
use super::{ScenarioError, Simulator};
use crate::dictionary::ddl::{
    alter_columns, column_definition, identifier, paren_body, renamed_column, split_top_level,
};
use crate::dictionary::{Column, TableSchema};
use crate::redo::{DdlKind, parse_ddl};
use crate::source::OperationCode;
use crate::source::row::DDL_ROW_ID;
use crate::value::Value;

/// What a DDL does to the dictionary, decided before anything is written.
enum Effect {
    Create(TableSchema, TableLogging),
    Replace(usize, Vec<Column>),
    Logging(usize, TableLogging),
    /// `DROP TABLE`, and whether with PURGE.
    Drop(usize, bool),
    Truncate(usize),
    /// A new name in the same schema.
    Rename(usize, String),
    Nothing,
}

impl Simulator {
    pub(super) fn ddl(
        &mut self,
        line: usize,
        statement: &str,
        user: Option<&str>,
    ) -> Result<(), ScenarioError> {
        let error = |message: String| ScenarioError::new(line, "ddl", message);
        let parsed = parse_ddl(statement).map_err(|e| error(e.to_string()))?;
        let user: Arc<str> = user.map_or_else(|| Arc::clone(&self.catalog.default_user), Arc::from);
        let object = parsed.object.map(|o| {
            (
                o.schema
                    .map_or_else(|| user.to_string(), |s| s.into_owned()),
                o.name.into_owned(),
            )
        });
        let existing = object
            .as_ref()
            .and_then(|(owner, name)| self.table_index.get(&format!("{owner}.{name}")).copied());
        let effect = match (parsed.kind, &object, existing) {
            (DdlKind::CreateTable, Some((owner, name)), None) => {
                let (columns, logging) = create_columns(statement).map_err(error)?;
                Effect::Create(
                    TableSchema::new(owner.clone(), name.clone(), columns)
                        .map_err(|e| error(e.to_string()))?,
                    logging,
                )
            }
            (DdlKind::CreateTable, Some((owner, name)), Some(_)) => {
                return Err(error(format!("table {owner}.{name} exists (ORA-00955)")));
            }
            (DdlKind::Other, _, _) => Effect::Nothing,
            (_, Some((owner, name)), None) => {
                return Err(error(format!("unknown table {owner}.{name} (ORA-00942)")));
            }
            (_, _, Some(t)) => {
                if self.tables[t].rows.values().any(|r| r.locked_by.is_some()) {
                    return Err(error(
                        "the table has uncommitted changes (ORA-00054)".to_owned(),
                    ));
                }
                match (parsed.kind, parsed.renamed_to.as_deref()) {
                    (DdlKind::DropTable, _) => {
                        let purge = statement
                            .to_ascii_uppercase()
                            .split_whitespace()
                            .any(|word| word.trim_end_matches(';') == "PURGE");
                        Effect::Drop(t, purge)
                    }
                    (DdlKind::TruncateTable, _) => Effect::Truncate(t),
                    (_, Some(new_name)) => {
                        let owner = &self.tables[t].owner;
                        if self
                            .table_index
                            .contains_key(&format!("{owner}.{new_name}"))
                        {
                            return Err(error(format!(
                                "name {owner}.{new_name} is already used (ORA-00955)"
                            )));
                        }
                        Effect::Rename(t, new_name.to_owned())
                    }
                    _ => alter(statement, self.tables[t].schema.columns(), t).map_err(error)?,
                }
            }
            (_, None, _) => Effect::Nothing,
        };
        let name_id = object.as_ref().map(|name| {
            let next = self.names.len() as u32;
            *self.names.entry(name.clone()).or_insert(next)
        });
        if let Effect::Replace(t, columns) = &effect {
            let table = &self.tables[*t];
            TableSchema::new(table.owner.as_ref(), table.name.as_ref(), columns.clone())
                .map_err(|e| error(e.to_string()))?;
        }
        let text = format!("{statement};");
        self.autonomous(Arc::clone(&user), |sim, tx| {
            let mut spec = sim.tx_spec(tx, OperationCode::Ddl, DDL_ROW_ID.into(), None);
            spec.table = object.as_ref().zip(name_id).map(|((owner, name), id)| {
                (Arc::from(owner.as_str()), Arc::from(name.as_str()), id)
            });
            spec.object = existing.map(|t| RowObject {
                table: t as u32,
                version: sim.tables[t].dictionary_version(),
                object_id: sim.tables[t].object_id,
            });
            spec.info = Some(Arc::from("USER DDL (PlSql=0 RecDep=0)"));
            spec.sql_redo = Some(text);
            sim.redo.write(spec);
        });
        let scn = self.catalog.scn;
        match effect {
            Effect::Create(schema, logging) => {
                self.create_table(line, "ddl", schema, logging, Vec::new())?
            }
            Effect::Replace(t, columns) => {
                let table = &mut self.tables[t];
                let old = Arc::clone(&table.schema);
                let schema = TableSchema::new(old.schema(), old.table(), columns)
                    .map_err(|e| error(e.to_string()))?;
                // Each column's values by name; a renamed column's under its old name.
                let renamed = renamed_column(statement);
                let mapping: Vec<Option<usize>> = schema
                    .columns()
                    .iter()
                    .map(|c| {
                        let before = match &renamed {
                            Some((from, to)) if *to == c.name => from.as_str(),
                            _ => c.name.as_str(),
                        };
                        old.column_index(before)
                    })
                    .collect();
                for row in table.rows.values_mut() {
                    for version in row.versions.iter_mut() {
                        if let Some(values) = &version.values {
                            let reshaped: Vec<Value> = mapping
                                .iter()
                                .map(|i| {
                                    i.and_then(|i| values.get(i).cloned())
                                        .unwrap_or(Value::Null)
                                })
                                .collect();
                            version.values = Some(Arc::from(reshaped));
                        }
                    }
                }
                table.schema = Arc::new(schema);
                table.versions.push(Arc::clone(&table.schema));
                table.refresh_columns();
                table.ddl_scn = scn;
            }
            Effect::Rename(t, new_name) => {
                let (owner, old_key) = {
                    let table = &self.tables[t];
                    (
                        Arc::clone(&table.owner),
                        format!("{}.{}", table.owner, table.name),
                    )
                };
                let next = self.names.len() as u32;
                let name_id = *self
                    .names
                    .entry((owner.to_string(), new_name.clone()))
                    .or_insert(next);
                self.table_index.remove(&old_key);
                self.table_index.insert(format!("{owner}.{new_name}"), t);
                let table = &mut self.tables[t];
                let schema = TableSchema::new(
                    owner.as_ref(),
                    new_name.as_str(),
                    table.schema.columns().to_vec(),
                )
                .map_err(|e| error(e.to_string()))?;
                table.schema = Arc::new(schema);
                table.name = Arc::from(new_name.as_str());
                table.name_id = name_id;
                table.refresh_columns();
            }
            Effect::Logging(t, logging) => self.tables[t].logging = logging,
            Effect::Drop(t, purge) => {
                let table = &mut self.tables[t];
                table.dropped = true;
                table.purged = purge;
                let key = format!("{}.{}", table.owner, table.name);
                self.table_index.remove(&key);
            }
            Effect::Truncate(t) => {
                let table = &mut self.tables[t];
                for row in table.rows.values_mut() {
                    if row.current().is_some() {
                        row.versions.push(Version { scn, values: None });
                    }
                }
                table.key_index.clear();
                table.ddl_scn = scn;
            }
            Effect::Nothing => {}
        }
        Ok(())
    }
}

/// `ALTER TABLE ... ADD SUPPLEMENTAL LOG DATA ...`, or a column change
/// ([`crate::dictionary::ddl::alter_columns`]).
fn alter(statement: &str, columns: &[Column], t: usize) -> Result<Effect, String> {
    let upper = statement.to_ascii_uppercase();
    if let Some(at) = upper.find("SUPPLEMENTAL LOG DATA") {
        let rest = &upper[at..];
        let logging = if rest.contains("(ALL)") {
            TableLogging::All
        } else if rest.contains("PRIMARY KEY") {
            TableLogging::PrimaryKey
        } else {
            return Ok(Effect::Nothing);
        };
        return Ok(if upper.contains(" DROP SUPPLEMENTAL") {
            Effect::Logging(t, TableLogging::None)
        } else {
            Effect::Logging(t, logging)
        });
    }
    Ok(match alter_columns(statement, columns)? {
        Some(columns) => Effect::Replace(t, columns),
        None => Effect::Nothing,
    })
}

/// The columns of `CREATE TABLE name (...)` and its logging clause.
fn create_columns(statement: &str) -> Result<(Vec<Column>, TableLogging), String> {
    let open = statement
        .find('(')
        .ok_or("CREATE TABLE without a column list")?;
    let body = paren_body(&statement[open..]).ok_or("unbalanced parentheses")?;
    let mut columns = Vec::new();
    let mut key_names: Vec<String> = Vec::new();
    let mut logging = TableLogging::None;
    for item in split_top_level(body) {
        let upper = item.trim().to_ascii_uppercase();
        if upper.starts_with("SUPPLEMENTAL LOG DATA") {
            logging = if upper.contains("(ALL)") {
                TableLogging::All
            } else {
                TableLogging::PrimaryKey
            };
        } else if upper.starts_with("PRIMARY KEY") || upper.starts_with("CONSTRAINT") {
            if let Some(at) = upper.find("PRIMARY KEY") {
                let list = paren_body(item.trim()[at..].trim_start_matches(|c: char| c != '('))
                    .unwrap_or_default();
                key_names.extend(split_top_level(list).into_iter().map(identifier));
            }
        } else {
            let (column, primary) = column_definition(item)?;
            if primary {
                key_names.push(column.name.clone());
            }
            columns.push(column);
        }
    }
    for (position, name) in key_names.iter().enumerate() {
        let column = columns
            .iter_mut()
            .find(|c| c.name == *name)
            .ok_or_else(|| format!("key column {name} is not a column"))?;
        *column = column.clone().key(position as u16 + 1);
    }
    Ok((columns, logging))
}
