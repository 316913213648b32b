//! Whether a table's supplemental logging puts its key in every change (seed 001: "A table that
//! logs no key columns is rejected at startup"). One judgement, made by `doctor` for each
//! captured table and by the capture at start and for each table the listing adds (CDC-1002).
//!
//! What Oracle logs (Oracle Database Utilities, "Supplemental Logging": "Database-Level
//! Identification Key Logging" and "Table-Level Identification Key Logging"):
//! - ALL: every column (LONG and LOB excepted) of the changed row, always;
//! - PRIMARY KEY: the primary key's columns whenever a row is updated; for a table with no primary
//!   key, "one of the unique index keys" of its non-null unique indexes (which one is not
//!   documented), and with neither, every column but LONG and LOB, "equivalent to specifying ALL";
//! - UNIQUE: the unique key's columns only when one of them changes (the log group is
//!   CONDITIONAL), so an update of another column does not carry the key;
//! - a user-defined log group: columns this check does not read.
//!
//! A log group counts only when `ALWAYS` (unconditional); database-level PK and ALL logging
//! (`V$DATABASE.SUPPLEMENTAL_LOG_DATA_PK` / `_ALL`) count for every table. The key is the
//! table's (primary key, or unique index: [`super::unique_key`]) unless
//! `columns.messageKeyColumns` names other columns for it, which must then be logged instead.

use super::grant::sql_name;
use super::{CatalogTable, LogGroupType, SupplementalLogging, TableKey};

/// A table whose changes carry its key: what the pass says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyLogged {
    /// Every column is logged: full before images.
    AllColumns,
    /// The key is logged; before images hold the key and the changed columns.
    Key,
    /// No key, and primary-key logging, which Oracle then widens to every column.
    AllColumnsForLackOfKey,
}

impl KeyLogged {
    pub fn describe(self) -> &'static str {
        match self {
            Self::AllColumns => "all columns are logged: full before images",
            Self::Key => {
                "key columns are logged; before images hold the key and changed columns only \
                 (log all columns for full before images)"
            }
            Self::AllColumnsForLackOfKey => {
                "the table has no key, and primary-key logging logs every column but LONG and \
                 LOB ones for it: full before images"
            }
        }
    }
}

/// A table whose changes may lack its key: why, and the statement that fixes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyNotLogged {
    pub message: String,
    pub fix: String,
}

/// The judgement for one table, from its catalog entry, the database-level logging and the key
/// columns `columns.messageKeyColumns` configures for it, if any (they are the record key then,
/// so they are what every change must carry).
pub fn judge(
    table: &CatalogTable,
    database: &SupplementalLogging,
    configured_key: Option<&[String]>,
) -> Result<KeyLogged, KeyNotLogged> {
    let always = |kind: LogGroupType| {
        table
            .log_groups
            .iter()
            .any(|group| group.always && group.kind == kind)
    };
    if database.all || always(LogGroupType::AllColumn) {
        return Ok(KeyLogged::AllColumns);
    }
    let primary_key_logging = database.primary_key || always(LogGroupType::PrimaryKey);
    let qualified = format!(
        "{}.{}",
        sql_name(table.schema.schema()),
        sql_name(table.schema.table())
    );
    let statement =
        |what: &str| format!("ALTER TABLE {qualified} ADD SUPPLEMENTAL LOG DATA ({what}) COLUMNS;");
    if let Some(configured) = configured_key {
        // What primary-key logging logs of this table: its key when Oracle's choice is known to
        // be it (a primary key, a sole unique key), every column without a key.
        let identification_key: Vec<&str> = match &table.key {
            TableKey::Primary | TableKey::Unique { candidates: 1, .. } => table
                .schema
                .key_columns()
                .map(|c| c.name.as_str())
                .collect(),
            TableKey::Unique { .. } => Vec::new(),
            TableKey::None if primary_key_logging => {
                return Ok(KeyLogged::AllColumnsForLackOfKey);
            }
            TableKey::None => Vec::new(),
        };
        if primary_key_logging
            && configured
                .iter()
                .all(|column| identification_key.contains(&column.as_str()))
        {
            return Ok(KeyLogged::Key);
        }
        return Err(KeyNotLogged {
            message: format!(
                "the key columns columns.messageKeyColumns names for the table ({}) are not all \
                 logged, so updates cannot carry their record key: it is rejected",
                configured.join(", ")
            ),
            fix: statement("ALL"),
        });
    }
    match &table.key {
        TableKey::Primary if primary_key_logging => Ok(KeyLogged::Key),
        TableKey::Unique { candidates: 1, .. } if primary_key_logging => Ok(KeyLogged::Key),
        TableKey::None if primary_key_logging => Ok(KeyLogged::AllColumnsForLackOfKey),
        TableKey::Unique { index, candidates } if primary_key_logging => Err(KeyNotLogged {
            message: format!(
                "the table has no primary key and {candidates} unique indexes on NOT NULL \
                 columns; its key is {index}, but primary-key logging logs one of them that \
                 Oracle does not name, so updates may not carry the key: it is rejected"
            ),
            fix: statement("ALL"),
        }),
        TableKey::Primary => Err(KeyNotLogged {
            message: "the table logs no key columns, so updates cannot name their row: it is \
                      rejected (log its primary key, or all columns for full before images)"
                .to_owned(),
            fix: statement("PRIMARY KEY"),
        }),
        TableKey::Unique { index, candidates } => Err(KeyNotLogged {
            message: format!(
                "the table's key is its unique index {index} (it has no primary key) and it \
                 logs no key columns, so updates cannot name their row: it is rejected"
            ),
            // Primary-key logging logs the unique key only when it is the table's only one.
            fix: statement(if *candidates == 1 {
                "PRIMARY KEY"
            } else {
                "ALL"
            }),
        }),
        TableKey::None => Err(KeyNotLogged {
            message: "the table has no primary key or unique index on NOT NULL columns and does \
                      not log all columns, so a change cannot be matched to its row: it is \
                      rejected"
                .to_owned(),
            fix: statement("ALL"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::dictionary::{Column, OracleType, TableSchema};
    use crate::source::{LogGroup, MinimalLogging};

    fn table(key: TableKey, groups: &[(LogGroupType, bool)]) -> CatalogTable {
        let id = Column::new("ID", OracleType::parse("NUMBER(10)").unwrap());
        let id = match key {
            TableKey::None => id,
            _ => id.key(1),
        };
        CatalogTable {
            schema: Arc::new(TableSchema::new("APP", "A", vec![id]).unwrap()),
            log_groups: groups
                .iter()
                .map(|&(kind, always)| LogGroup { kind, always })
                .collect(),
            key,
        }
    }

    fn database(primary_key: bool, all: bool) -> SupplementalLogging {
        SupplementalLogging {
            min: MinimalLogging::Yes,
            primary_key,
            unique: false,
            foreign_key: false,
            all,
        }
    }

    fn unique(candidates: usize) -> TableKey {
        TableKey::Unique {
            index: "UK_A".to_owned(),
            candidates,
        }
    }

    #[test]
    fn all_or_identification_key_logging_at_either_level_logs_the_key() {
        use LogGroupType as G;
        let none = database(false, false);
        for key in [TableKey::Primary, unique(1), unique(3), TableKey::None] {
            assert_eq!(
                judge(&table(key.clone(), &[(G::AllColumn, true)]), &none, None),
                Ok(KeyLogged::AllColumns)
            );
            assert_eq!(
                judge(&table(key, &[]), &database(false, true), None),
                Ok(KeyLogged::AllColumns)
            );
        }
        for logged in [
            judge(
                &table(TableKey::Primary, &[(G::PrimaryKey, true)]),
                &none,
                None,
            ),
            judge(&table(TableKey::Primary, &[]), &database(true, false), None),
            judge(&table(unique(1), &[(G::PrimaryKey, true)]), &none, None),
            judge(&table(unique(1), &[]), &database(true, false), None),
        ] {
            assert_eq!(logged, Ok(KeyLogged::Key));
        }
        assert_eq!(
            judge(&table(TableKey::None, &[]), &database(true, false), None),
            Ok(KeyLogged::AllColumnsForLackOfKey)
        );
    }

    #[test]
    fn a_table_that_logs_no_key_is_rejected_with_the_statement_that_fixes_it() {
        use LogGroupType as G;
        let none = database(false, false);
        let fix = |key: TableKey, groups: &[(LogGroupType, bool)]| {
            judge(&table(key, groups), &none, None).map_err(|rejected| rejected.fix)
        };
        let pk = "ALTER TABLE APP.A ADD SUPPLEMENTAL LOG DATA (PRIMARY KEY) COLUMNS;";
        let all = "ALTER TABLE APP.A ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;";
        assert_eq!(fix(TableKey::Primary, &[]), Err(pk.to_owned()));
        // Conditional groups and UNIQUE logging (conditional) do not carry the key on every
        // update.
        assert_eq!(
            fix(
                TableKey::Primary,
                &[(G::PrimaryKey, false), (G::AllColumn, false)]
            ),
            Err(pk.to_owned())
        );
        assert_eq!(fix(unique(1), &[(G::UniqueKey, false)]), Err(pk.to_owned()));
        assert_eq!(fix(unique(2), &[]), Err(all.to_owned()));
        assert_eq!(
            fix(unique(2), &[(G::PrimaryKey, true)]),
            Err(all.to_owned()),
            "Oracle logs one of several unique keys, not necessarily the one chosen"
        );
        assert_eq!(fix(TableKey::None, &[(G::User, true)]), Err(all.to_owned()));
    }

    /// `columns.messageKeyColumns` makes other columns the record key: primary-key logging
    /// carries them only when they are among the columns it logs.
    #[test]
    fn configured_key_columns_must_be_logged_too() {
        use LogGroupType as G;
        let pk_logged = [(G::PrimaryKey, true)];
        let none = database(false, false);
        let id = vec!["ID".to_owned()];
        let other = vec!["NOTE".to_owned()];
        assert_eq!(
            judge(&table(TableKey::Primary, &pk_logged), &none, Some(&id)),
            Ok(KeyLogged::Key)
        );
        let rejected = judge(&table(TableKey::Primary, &pk_logged), &none, Some(&other));
        assert_eq!(
            rejected.map_err(|rejected| rejected.fix),
            Err("ALTER TABLE APP.A ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;".to_owned())
        );
        assert_eq!(
            judge(
                &table(TableKey::Primary, &[]),
                &database(false, true),
                Some(&other)
            ),
            Ok(KeyLogged::AllColumns)
        );
        // Without a key, primary-key logging logs every column.
        assert_eq!(
            judge(&table(TableKey::None, &pk_logged), &none, Some(&other)),
            Ok(KeyLogged::AllColumnsForLackOfKey)
        );
        assert!(judge(&table(TableKey::None, &[]), &none, Some(&other)).is_err());
    }
}
