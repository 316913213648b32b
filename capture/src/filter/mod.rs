//! Which tables, changes and columns the capture emits: the schema and table lists (Debezium's
//! `schema.include.list` / `schema.exclude.list` / `table.include.list` / `table.exclude.list`,
//! against the owner and `OWNER.TABLE`), the username lists (Debezium's
//! `log.mining.username.include.list` / `exclude.list`), the column lists (`column.include.list`
//! / `column.exclude.list`), the message key columns (`message.key.columns`), and the compiled
//! masking rules of [`mask`].
//!
//! Every pattern must match the whole name, as Debezium's lists do: each is compiled as
//! `^(?:pattern)$` with the `regex` crate (RE2 syntax, which covers POSIX extended expressions
//! except backreferences), case-sensitively. Names are in dictionary case (`APP.ORDERS.ID`).
//! User names are compared without regard to case, as Debezium upper-cases both sides.
//!
//! # The filter stage: why a change is not published
//!
//! Every row of a transaction still reaches the buffer (its commit, rollback and the rows that
//! end it keep the buffer correct); what is not published is decided here, at three points of
//! the pipeline, and nowhere else:
//!
//! 1. **Tables** ([`TableSelection`], `tables.rs`): before assembly. A row of a table that
//!    neither `spec.tables` names nor the schema and table lists select (or of the flush table)
//!    is never typed into an event. The engine lists the catalog again between windows
//!    (`engine::captured_tables::TableListing`) and asks this module which tables to add.
//! 2. **Changes** ([`Filters::withheld`], giving a [`Withheld`] reason): after assembly, before
//!    encoding, in the pipeline's event writer (engine/pipeline.rs): the username lists, and the
//!    changes a table's snapshot read already holds. A DDL's schema change is still written.
//! 3. **Columns and keys** ([`Filters::published_columns`], `columns.rs`, with the rules of
//!    [`mask`]): once per table structure, when the encoder builds the table's plan
//!    (event/debezium). This module decides the key columns, the columns of values, each
//!    column's mask and source type parameters; the encoder only applies the answer.

mod columns;
pub mod mask;
mod tables;
pub mod unsupported;

pub use columns::{PublishedColumns, UnknownKeyColumn};
pub use tables::TableSelection;

use std::collections::HashSet;

use redoline_crds::v1alpha1::{ColumnsSpec, FiltersSpec};
use regex::Regex;

use self::mask::ColumnRules;

/// A pattern or list that cannot be used; names the field to fix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct FilterError {
    /// The dotted config field (`filters.columnExcludeList[1]`).
    pub field: String,
    pub problem: String,
}

/// Regular expressions of which at least one must match a whole name.
#[derive(Clone, Debug, Default)]
pub struct PatternList(Vec<Regex>);

impl PatternList {
    /// Compiles `patterns`, each anchored at both ends; `field` names the list in errors.
    pub fn compile(field: &str, patterns: &[String]) -> Result<Self, FilterError> {
        patterns
            .iter()
            .enumerate()
            .map(|(index, pattern)| {
                Regex::new(&format!("^(?:{pattern})$")).map_err(|error| FilterError {
                    field: format!("{field}[{index}]"),
                    problem: format!(
                        "{pattern:?} is not a valid regular expression (RE2 syntax, no \
                         backreferences): {error}"
                    ),
                })
            })
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// Whether one pattern matches the whole of `name`.
    pub fn matches(&self, name: &str) -> bool {
        self.0.iter().any(|regex| regex.is_match(name))
    }
}

/// An include list, an exclude list, or neither (everything is selected).
#[derive(Clone, Debug, Default)]
enum Selection {
    #[default]
    All,
    Include(PatternList),
    Exclude(PatternList),
}

impl Selection {
    fn compile(
        include_field: &str,
        include: &[String],
        exclude_field: &str,
        exclude: &[String],
    ) -> Result<Self, FilterError> {
        match (include.is_empty(), exclude.is_empty()) {
            (true, true) => Ok(Self::All),
            (false, true) => Ok(Self::Include(PatternList::compile(include_field, include)?)),
            (true, false) => Ok(Self::Exclude(PatternList::compile(exclude_field, exclude)?)),
            (false, false) => Err(FilterError {
                field: include_field.to_owned(),
                problem: format!("set at most one of {include_field} and {exclude_field}"),
            }),
        }
    }

    fn selects(&self, name: &str) -> bool {
        match self {
            Self::All => true,
            Self::Include(list) => list.matches(name),
            Self::Exclude(list) => !list.matches(name),
        }
    }
}

/// Database users whose changes are emitted.
#[derive(Clone, Debug, Default)]
enum Users {
    #[default]
    All,
    Include(HashSet<String>),
    Exclude(HashSet<String>),
}

/// Why a change of a captured table is not published (stage 2 of the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Withheld {
    /// The username lists leave its user out.
    User,
    /// Its table was read by the initial snapshot at an SCN at or above the change's commit
    /// (after ORA-01555, a table read again later): the read event already holds it.
    SnapshotCovered,
}

/// The compiled `spec.filters` and `spec.columns.messageKeyColumns`.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    /// Schema then table lists, when any is set: tables are also chosen from the catalog.
    catalog: Option<(Selection, Selection)>,
    users: Users,
    columns: Selection,
    key_columns: Vec<(PatternList, Vec<String>)>,
    rules: ColumnRules,
}

impl Filters {
    /// Compiles the lists; a bad pattern or two exclusive lists is a [`FilterError`].
    pub fn new(filters: &FiltersSpec, columns: &ColumnsSpec) -> Result<Self, FilterError> {
        let upper = |names: &[String]| names.iter().map(|n| n.to_uppercase()).collect();
        let users = match (
            filters.username_include_list.is_empty(),
            filters.username_exclude_list.is_empty(),
        ) {
            (true, true) => Users::All,
            (false, true) => Users::Include(upper(&filters.username_include_list)),
            (true, false) => Users::Exclude(upper(&filters.username_exclude_list)),
            (false, false) => {
                return Err(FilterError {
                    field: "filters.usernameIncludeList".to_owned(),
                    problem: "set at most one of filters.usernameIncludeList and \
                              filters.usernameExcludeList"
                        .to_owned(),
                });
            }
        };
        let schemas = Selection::compile(
            "filters.schemaIncludeList",
            &filters.schema_include_list,
            "filters.schemaExcludeList",
            &filters.schema_exclude_list,
        )?;
        let tables = Selection::compile(
            "filters.tableIncludeList",
            &filters.table_include_list,
            "filters.tableExcludeList",
            &filters.table_exclude_list,
        )?;
        let catalog = (!matches!((&schemas, &tables), (Selection::All, Selection::All)))
            .then_some((schemas, tables));
        let column_selection = Selection::compile(
            "filters.columnIncludeList",
            &filters.column_include_list,
            "filters.columnExcludeList",
            &filters.column_exclude_list,
        )?;
        let key_columns = columns
            .message_key_columns
            .iter()
            .enumerate()
            .map(|(index, entry)| {
                let field = format!("columns.messageKeyColumns[{index}].table");
                let pattern = PatternList::compile(&field, std::slice::from_ref(&entry.table))
                    .map_err(|error| FilterError { field, ..error })?;
                Ok((pattern, entry.columns.clone()))
            })
            .collect::<Result<_, FilterError>>()?;
        Ok(Self {
            catalog,
            users,
            columns: column_selection,
            key_columns,
            rules: ColumnRules::new(columns)?,
        })
    }

    /// Whether the schema or table lists choose tables from the catalog.
    pub fn selects_from_catalog(&self) -> bool {
        self.catalog.is_some()
    }

    /// The catalog's `listed` tables (Oracle-maintained schemas already left out) that the schema
    /// and table lists select, except those `never` names (the capture's own flush table).
    /// Empty without lists.
    pub fn catalog_tables(
        &self,
        listed: &[(String, String)],
        never: impl Fn(&str, &str) -> bool,
    ) -> Vec<(String, String)> {
        let Some((schemas, tables)) = &self.catalog else {
            return Vec::new();
        };
        listed
            .iter()
            .filter(|(owner, table)| {
                !never(owner, table)
                    && schemas.selects(owner)
                    && tables.selects(&format!("{owner}.{table}"))
            })
            .cloned()
            .collect()
    }

    /// Why a change by database user `user` is not published, or `None` when it is; `covered`
    /// says whether a snapshot read of its table already holds it, and is asked only when the
    /// user is admitted (it names the table, which costs an allocation per change).
    pub fn withheld(&self, user: Option<&str>, covered: impl FnOnce() -> bool) -> Option<Withheld> {
        if !self.admits_user(user) {
            Some(Withheld::User)
        } else if covered() {
            Some(Withheld::SnapshotCovered)
        } else {
            None
        }
    }

    /// Whether the changes of database user `user` are emitted. With an include list, a change
    /// without a user (LogMiner leaves USERNAME null for some internal changes) is not; with an
    /// exclude list it is.
    pub fn admits_user(&self, user: Option<&str>) -> bool {
        match (&self.users, user) {
            (Users::All, _) => true,
            (Users::Include(names), Some(user)) => names.contains(&user.to_uppercase()),
            (Users::Include(_), None) => false,
            (Users::Exclude(names), Some(user)) => !names.contains(&user.to_uppercase()),
            (Users::Exclude(_), None) => true,
        }
    }
}

#[cfg(test)]
mod tests;
