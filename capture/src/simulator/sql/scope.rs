//! Names as Oracle resolves them in a statement, and what an expression is evaluated over: an
//! unquoted identifier folds to upper case, a table or function name is `[OWNER.]NAME`, a
//! literal or a bind is a value, and the relations of a `FROM` list side by side are a
//! [`Scope`] in which each column has its position in the joined row. Both evaluators read
//! names through here: the compiler ([`super::compiled`]) once per statement, the tree-walking
//! evaluator ([`super::engine`]) per row.

use sqlparser::ast::{Ident, ObjectName, Value};

use super::OraError;
use super::datum::{Datum, Number};

/// Bind values by placeholder (`:1`).
pub type Binds = std::collections::HashMap<String, Datum>;

/// An identifier as the dictionary stores it: unquoted names fold to upper case.
pub fn identifier(ident: &Ident) -> String {
    match ident.quote_style {
        Some(_) => ident.value.clone(),
        None => ident.value.to_uppercase(),
    }
}

/// `(owner, name)` of a table reference.
pub fn object_name(name: &ObjectName) -> Result<(Option<String>, String), OraError> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|part| {
            part.as_ident()
                .map(identifier)
                .ok_or_else(|| OraError::invalid_sql("a table name"))
        })
        .collect::<Result<_, _>>()?;
    match parts.as_slice() {
        [table] => Ok((None, table.clone())),
        [owner, table] => Ok((Some(owner.clone()), table.clone())),
        _ => Err(OraError::new(942, "table or view does not exist")),
    }
}

/// A function's name: `NAME`, or `PACKAGE.NAME` for a packaged function (`DBMS_ROWID.ROWID_CREATE`).
pub fn function_name(name: &ObjectName) -> Result<String, OraError> {
    Ok(match object_name(name)? {
        (Some(package), name) => format!("{package}.{name}"),
        (None, name) => name,
    })
}

/// A literal's or a bind's value.
pub fn literal(value: &Value, binds: &Binds) -> Result<Datum, OraError> {
    match value {
        Value::Null => Ok(Datum::Null),
        Value::Number(text, _) => Number::parse(text)
            .map(Datum::Number)
            .ok_or_else(|| OraError::new(1722, "invalid number")),
        Value::SingleQuotedString(text) => Ok(Datum::text(text.clone())),
        Value::Placeholder(name) => binds
            .get(name)
            .cloned()
            .ok_or_else(|| OraError::new(1008, "not all variables bound")),
        other => Err(OraError::invalid_sql(&format!("the literal {other}"))),
    }
}

/// The relations of a `FROM` list, side by side: each column is found by its relation's
/// qualifier (alias or name) and its own name.
#[derive(Default)]
pub struct Scope {
    sources: Vec<Source>,
}

struct Source {
    qualifier: String,
    columns: Vec<String>,
    offset: usize,
}

/// The scope of an expression outside any `FROM` list (an offset, a row limit, an UPDATE's new
/// value): no column.
static EMPTY: Scope = Scope {
    sources: Vec::new(),
};

impl Scope {
    /// The scope of one relation, `qualifier` with `columns`.
    #[cfg(test)]
    pub fn of(qualifier: &str, columns: &[&str]) -> Self {
        let mut scope = Self::default();
        scope.push(
            qualifier.to_owned(),
            columns.iter().map(|c| (*c).to_owned()).collect(),
        );
        scope
    }

    /// Adds a relation of the `FROM` list, its columns after those of the relations before it.
    pub fn push(&mut self, qualifier: String, columns: Vec<String>) {
        let offset = self.width();
        self.sources.push(Source {
            qualifier,
            columns,
            offset,
        });
    }

    /// How many relations the scope holds.
    pub fn relations(&self) -> usize {
        self.sources.len()
    }

    /// How many columns a joined row has.
    pub fn width(&self) -> usize {
        self.sources
            .last()
            .map_or(0, |s| s.offset + s.columns.len())
    }

    /// Every column as `(qualifier, name)`, in the joined row's order (what `*` selects).
    pub fn columns(&self) -> impl Iterator<Item = (&str, &str)> {
        self.sources.iter().flat_map(|source| {
            (source.columns.iter()).map(|column| (source.qualifier.as_str(), column.as_str()))
        })
    }

    /// The position in a joined row of a column, `qualifier.name` or `name`.
    pub fn column(&self, qualifier: Option<&str>, name: &str) -> Result<Option<usize>, OraError> {
        let mut found = None;
        for source in &self.sources {
            if qualifier.is_some_and(|q| q != source.qualifier) {
                continue;
            }
            if let Some(index) = source.columns.iter().position(|c| c == name) {
                if found.is_some() {
                    return Err(OraError::new(918, "column ambiguously defined"));
                }
                found = Some(source.offset + index);
            }
        }
        if found.is_none()
            && qualifier.is_some_and(|q| !self.sources.iter().any(|s| s.qualifier == q))
        {
            return Err(OraError::invalid_identifier(&format!(
                "{}.{name}",
                qualifier.unwrap_or_default()
            )));
        }
        Ok(found)
    }

    /// A frame for one joined row of this scope.
    pub fn row<'a>(&'a self, row: &'a [Datum]) -> Frame<'a> {
        Frame {
            scope: self,
            row,
            group: None,
        }
    }

    /// A frame for a group of a grouped query: its rows (`row` the first, or none), and its
    /// `GROUP BY` expressions (as text) with their values.
    pub fn group<'a>(
        &'a self,
        row: &'a [Datum],
        members: &'a [Vec<Datum>],
        keys: &'a [(String, Datum)],
    ) -> Frame<'a> {
        Frame {
            scope: self,
            row,
            group: Some((members, keys)),
        }
    }
}

/// A group of a grouped query: its rows, and its `GROUP BY` expressions (as text) with their
/// values.
pub type Group<'a> = (&'a [Vec<Datum>], &'a [(String, Datum)]);

/// What an expression is evaluated over: one joined row, or a group of them.
#[derive(Clone, Copy)]
pub struct Frame<'a> {
    scope: &'a Scope,
    pub row: &'a [Datum],
    /// The group's rows and its `GROUP BY` expressions with their values, in a grouped query.
    group: Option<Group<'a>>,
}

impl<'a> Frame<'a> {
    /// The frame of an expression outside any `FROM` list.
    pub fn empty() -> Frame<'static> {
        EMPTY.row(&[])
    }

    pub fn scope(&self) -> &'a Scope {
        self.scope
    }

    /// The group, in a grouped query.
    pub fn group(&self) -> Option<Group<'a>> {
        self.group
    }

    /// The frame of one row of this frame's group.
    pub fn member(&self, row: &'a [Datum]) -> Frame<'a> {
        self.scope.row(row)
    }
}
