//! Evaluates a parsed `SELECT` against the model's relations, as Oracle evaluates it: the
//! cartesian product of the `FROM` list filtered by `WHERE` (the client joins in `WHERE`, never
//! with `JOIN`), `GROUP BY` with aggregates, the select list, `UNION ALL`, `ORDER BY` with
//! Oracle's NULL placement, and `FETCH FIRST n ROWS ONLY`.
//!
//! Names resolve as Oracle resolves them: an unquoted identifier is upper case, a column that no
//! relation of the `FROM` list has is ORA-00904, one that two have without a qualifier ORA-00918,
//! a column outside an aggregate that is not grouped ORA-00979. Three-valued logic throughout:
//! a comparison with NULL is unknown, and `WHERE` keeps only rows where the condition is true.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, GroupByExpr, Ident, InTarget,
    LimitClause, OffsetRows, OrderByExpr, OrderByKind, OrderBySort, Query, Select, SelectItem,
    SetExpr, SetOperator, SetQuantifier, TableFactor, Value,
};

use super::compiled::{self, Compiled};
use super::datum::Datum;
use super::functions;
use super::operators::{self, truth};
use super::scope::{Binds, Frame, Scope, function_name, identifier, literal, object_name};
use super::{Database, OraError, Relation};

/// A group being collected: its key and its rows.
type GroupRows = (Vec<(String, Datum)>, Vec<Vec<Datum>>);

/// Evaluates queries for one statement.
pub struct Evaluator<'a> {
    pub database: &'a mut dyn Database,
    pub binds: &'a Binds,
    /// The row limit of `AS OF SCN` reads: the SCN of a flashback query's table.
    pub as_of_scn: Option<u64>,
}

impl Evaluator<'_> {
    pub fn query(&mut self, query: &Query) -> Result<Relation, OraError> {
        // Oracle's row limiting clause is `[OFFSET n ROWS] [FETCH ...]` (SQL Language
        // Reference, SELECT, row_limiting_clause): the offset is the only limit clause it has.
        let offset = match &query.limit_clause {
            None => None,
            Some(LimitClause::LimitOffset {
                limit: None,
                offset: Some(offset),
                limit_by,
            }) if limit_by.is_empty() && offset.rows != OffsetRows::None => Some(&offset.value),
            Some(_) => return Err(OraError::invalid_sql("LIMIT")),
        };
        if query.with.is_some() || !query.locks.is_empty() {
            return Err(OraError::invalid_sql("WITH and FOR UPDATE"));
        }
        let order: Vec<OrderByExpr> = match &query.order_by {
            None => Vec::new(),
            Some(order_by) => match &order_by.kind {
                OrderByKind::Expressions(expressions) => expressions.clone(),
                OrderByKind::All(_) => return Err(OraError::invalid_sql("ORDER BY ALL")),
            },
        };
        let mut relation = match query.body.as_ref() {
            SetExpr::Select(select) => self.select(select, &order)?,
            other => {
                let mut relation = self.set_expr(other)?;
                sort_output(&mut relation, &order)?;
                relation
            }
        };
        if let Some(offset) = offset {
            // The rows skipped are the first of the ordered result; a negative or NULL
            // offset is none (row_limiting_clause).
            let skip = self.eval(offset, Frame::empty())?.to_u64()?.unwrap_or(0);
            let skip = usize::try_from(skip).unwrap_or(usize::MAX);
            relation.rows.drain(..skip.min(relation.rows.len()));
        }
        if let Some(fetch) = &query.fetch {
            if fetch.percent || fetch.with_ties {
                return Err(OraError::invalid_sql("FETCH PERCENT or WITH TIES"));
            }
            let limit = match &fetch.quantity {
                None => 1,
                Some(quantity) => self.eval(quantity, Frame::empty())?.to_u64()?.unwrap_or(0),
            };
            relation
                .rows
                .truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        Ok(relation)
    }

    /// An expression outside any query (an UPDATE's new value).
    pub fn scalar(&mut self, expr: &Expr) -> Result<Datum, OraError> {
        self.eval(expr, Frame::empty())
    }

    fn set_expr(&mut self, body: &SetExpr) -> Result<Relation, OraError> {
        match body {
            SetExpr::Select(select) => self.select(select, &[]),
            SetExpr::Query(query) => self.query(query),
            SetExpr::SetOperation {
                left,
                op: SetOperator::Union,
                set_quantifier: SetQuantifier::All,
                right,
            } => {
                let mut left = self.set_expr(left)?;
                let right = self.set_expr(right)?;
                if left.columns.len() != right.columns.len() {
                    return Err(OraError::new(
                        1789,
                        "query block has incorrect number of result columns",
                    ));
                }
                left.rows.extend(right.rows);
                Ok(left)
            }
            _ => Err(OraError::invalid_sql("set operations other than UNION ALL")),
        }
    }

    fn from(&mut self, select: &Select) -> Result<(Scope, Vec<Vec<Datum>>), OraError> {
        let mut scope = Scope::default();
        let mut rows: Vec<Vec<Datum>> = vec![Vec::new()];
        for table in &select.from {
            if !table.joins.is_empty() {
                return Err(OraError::invalid_sql("JOIN"));
            }
            let (relation, qualifier) = match &table.relation {
                TableFactor::Table {
                    name, alias, args, ..
                } => {
                    if args.is_some() {
                        return Err(OraError::invalid_sql("a table function"));
                    }
                    let (owner, table_name) = object_name(name)?;
                    let relation =
                        self.database
                            .relation(owner.as_deref(), &table_name, self.as_of_scn)?;
                    let qualifier = alias
                        .as_ref()
                        .map_or(table_name, |alias| identifier(&alias.name));
                    (relation, qualifier)
                }
                TableFactor::Derived {
                    subquery, alias, ..
                } => {
                    let relation = self.query(subquery)?;
                    let qualifier = alias
                        .as_ref()
                        .map(|alias| identifier(&alias.name))
                        .unwrap_or_default();
                    (relation, qualifier)
                }
                _ => return Err(OraError::invalid_sql("this kind of FROM item")),
            };
            scope.push(qualifier, relation.columns);
            // The first relation's rows are the rows so far, as they are; each further one
            // multiplies them.
            if scope.relations() == 1 {
                rows = relation.rows;
                continue;
            }
            let mut joined = Vec::with_capacity(rows.len() * relation.rows.len());
            for left in &rows {
                for right in &relation.rows {
                    let mut row = Vec::with_capacity(left.len() + right.len());
                    row.extend_from_slice(left);
                    row.extend_from_slice(right);
                    joined.push(row);
                }
            }
            rows = joined;
        }
        if select.from.is_empty() {
            return Err(OraError::new(923, "FROM keyword not found where expected"));
        }
        Ok((scope, rows))
    }

    fn select(&mut self, select: &Select, order: &[OrderByExpr]) -> Result<Relation, OraError> {
        if select.distinct.is_some()
            || select.having.is_some()
            || select.top.is_some()
            || select.into.is_some()
            || !select.connect_by.is_empty()
            || !select.lateral_views.is_empty()
            || select.qualify.is_some()
            || !select.named_window.is_empty()
        {
            return Err(OraError::invalid_sql(
                "DISTINCT, HAVING, INTO, CONNECT BY, WINDOW or QUALIFY",
            ));
        }
        let (scope, rows) = self.from(select)?;
        // The condition is compiled once; a row it rejects is dropped where it is, and a kept
        // one moved, never copied.
        let condition = select
            .selection
            .as_ref()
            .map(|condition| compiled::compile(condition, &scope, self.binds));
        let mut kept = Vec::with_capacity(rows.len());
        for row in rows {
            let keep = match &condition {
                None => true,
                Some(condition) => truth(self.value(condition, scope.row(&row))?.as_ref()),
            };
            if keep {
                kept.push(row);
            }
        }
        let group_by = match &select.group_by {
            GroupByExpr::Expressions(expressions, modifiers) if modifiers.is_empty() => {
                expressions.clone()
            }
            _ => return Err(OraError::invalid_sql("GROUP BY ALL or a modifier")),
        };
        let projection = projection(select, &scope)?;
        let aggregated =
            !group_by.is_empty() || projection.iter().any(|(expr, _)| has_aggregate(expr));
        self.resolve_names(select, &scope, &projection, &group_by, order, aggregated)?;
        let mut output: Vec<(Vec<Datum>, Vec<Datum>)> = Vec::new();
        if aggregated {
            let mut groups: Vec<GroupRows> = Vec::new();
            let mut index: HashMap<String, usize> = HashMap::new();
            for row in kept {
                let frame = scope.row(&row);
                let mut key = Vec::with_capacity(group_by.len());
                for expr in &group_by {
                    key.push((expr.to_string(), self.eval(expr, frame)?));
                }
                let text = format!("{:?}", key.iter().map(|(_, v)| v).collect::<Vec<_>>());
                match index.get(&text) {
                    Some(&at) => groups[at].1.push(row),
                    None => {
                        index.insert(text, groups.len());
                        groups.push((key, vec![row]));
                    }
                }
            }
            // An aggregate without GROUP BY has one group, even over no rows.
            if group_by.is_empty() && groups.is_empty() {
                groups.push((Vec::new(), Vec::new()));
            }
            for (key, members) in &groups {
                let first = members.first().map(Vec::as_slice).unwrap_or(&[]);
                output.push(self.project(&projection, order, scope.group(first, members, key))?);
            }
        } else {
            // Each kept row is projected with the select list compiled once, then dropped.
            let compiled: Vec<Compiled<'_>> = projection
                .iter()
                .map(|(expr, _)| compiled::compile(expr, &scope, self.binds))
                .collect();
            output.reserve(kept.len());
            for row in kept {
                let frame = scope.row(&row);
                let mut values = Vec::with_capacity(compiled.len());
                for expr in &compiled {
                    values.push(self.value(expr, frame)?.into_owned());
                }
                let keys = self.order_keys(&projection, order, &values, frame)?;
                output.push((values, keys));
            }
        }
        if !order.is_empty() {
            output.sort_by(|(_, a), (_, b)| compare_keys(a, b, order));
        }
        Ok(Relation {
            columns: projection.into_iter().map(|(_, name)| name).collect(),
            rows: output.into_iter().map(|(row, _)| row).collect(),
        })
    }

    /// Oracle resolves every name when it parses a statement, whatever rows there are: each
    /// expression is evaluated once over a row of NULLs, and only the errors of names and
    /// shape (an unknown column or function, an ambiguous or ungrouped column, a wrong number
    /// of arguments, an expression the model does not evaluate) are kept.
    fn resolve_names(
        &mut self,
        select: &Select,
        scope: &Scope,
        projection: &[(Expr, String)],
        group_by: &[Expr],
        order: &[OrderByExpr],
        aggregated: bool,
    ) -> Result<(), OraError> {
        let nulls = vec![Datum::Null; scope.width()];
        let row_frame = scope.row(&nulls);
        let keys: Vec<(String, Datum)> = group_by
            .iter()
            .map(|expr| (expr.to_string(), Datum::Null))
            .collect();
        let members = [nulls.clone()];
        let output_frame = if aggregated {
            scope.group(&nulls, &members, &keys)
        } else {
            row_frame
        };
        let shape_only = |result: Result<Datum, OraError>| match result {
            Err(error) if matches!(error.code, 900 | 904 | 909 | 918 | 937 | 979) => Err(error),
            _ => Ok(()),
        };
        if let Some(condition) = &select.selection {
            shape_only(self.eval(condition, row_frame))?;
        }
        for expr in group_by {
            shape_only(self.eval(expr, row_frame))?;
        }
        for (expr, _) in projection {
            shape_only(self.eval(expr, output_frame))?;
        }
        for item in order {
            match self.eval(&item.expr, output_frame) {
                Err(error)
                    if error.code == 904
                        && output_column(&item.expr, projection, &nulls).is_some() => {}
                other => shape_only(other)?,
            }
        }
        Ok(())
    }

    /// The select list's values and the `ORDER BY` keys of one group.
    fn project(
        &mut self,
        projection: &[(Expr, String)],
        order: &[OrderByExpr],
        frame: Frame<'_>,
    ) -> Result<(Vec<Datum>, Vec<Datum>), OraError> {
        let mut values = Vec::with_capacity(projection.len());
        for (expr, _) in projection {
            values.push(self.eval(expr, frame)?);
        }
        let keys = self.order_keys(projection, order, &values, frame)?;
        Ok((values, keys))
    }

    /// The `ORDER BY` keys of one row or group whose select list is `values`. An `ORDER BY`
    /// name that is no column of the `FROM` list may name a select-list column (its alias).
    fn order_keys(
        &mut self,
        projection: &[(Expr, String)],
        order: &[OrderByExpr],
        values: &[Datum],
        frame: Frame<'_>,
    ) -> Result<Vec<Datum>, OraError> {
        let mut keys = Vec::with_capacity(order.len());
        for item in order {
            let key = match self.eval(&item.expr, frame) {
                Err(error) if error.code == 904 => output_column(&item.expr, projection, values)
                    .ok_or(error)?
                    .clone(),
                other => other?,
            };
            keys.push(key);
        }
        Ok(keys)
    }

    /// Evaluates `expr` from the parse tree, looking its names up: for a group, for an
    /// expression evaluated once, and for what [`compiled`] leaves to it.
    pub(super) fn eval(&mut self, expr: &Expr, frame: Frame<'_>) -> Result<Datum, OraError> {
        if let Some((_, keys)) = frame.group() {
            let text = expr.to_string();
            if let Some((_, value)) = keys.iter().find(|(key, _)| *key == text) {
                return Ok(value.clone());
            }
        }
        match expr {
            Expr::Identifier(ident) => self.column(None, ident, frame),
            Expr::CompoundIdentifier(parts) => match parts.as_slice() {
                [qualifier, name] => self.column(Some(&identifier(qualifier)), name, frame),
                _ => Err(OraError::invalid_identifier(&expr.to_string())),
            },
            Expr::Value(value) => literal(&value.value, self.binds),
            Expr::Nested(inner) => self.eval(inner, frame),
            Expr::UnaryOp { op, expr } => operators::unary(op, Cow::Owned(self.eval(expr, frame)?)),
            Expr::BinaryOp { left, op, right } => {
                let a = self.eval(left, frame)?;
                let b = self.eval(right, frame)?;
                operators::binary(op, &a, &b)
            }
            Expr::IsNull(inner) => Ok(operators::boolean(self.eval(inner, frame)?.is_null())),
            Expr::IsNotNull(inner) => Ok(operators::boolean(!self.eval(inner, frame)?.is_null())),
            Expr::In {
                expr,
                target: InTarget::List(list),
                negated,
                ..
            } => {
                let value = self.eval(expr, frame)?;
                let mut candidates = Vec::with_capacity(list.len());
                for item in list {
                    candidates.push(self.eval(item, frame)?);
                }
                operators::membership(&value, &candidates, *negated)
            }
            Expr::In {
                expr,
                target: InTarget::Subquery(subquery),
                negated,
                ..
            } => {
                let value = self.eval(expr, frame)?;
                let relation = self.query(subquery)?;
                if relation.columns.len() != 1 {
                    return Err(OraError::new(913, "too many values"));
                }
                let candidates: Vec<Datum> = relation
                    .rows
                    .into_iter()
                    .filter_map(|row| row.into_iter().next())
                    .collect();
                operators::membership(&value, &candidates, *negated)
            }
            Expr::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let value = self.eval(expr, frame)?;
                let low = self.eval(low, frame)?;
                let high = self.eval(high, frame)?;
                operators::between(&value, &low, &high, *negated)
            }
            Expr::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => {
                let value = self.eval(expr, frame)?;
                let pattern = self.eval(pattern, frame)?;
                let escape = match escape_char {
                    None => None,
                    Some(escape) => Some(self.eval(escape, frame)?),
                };
                Ok(operators::like_condition(
                    &value,
                    &pattern,
                    escape.as_ref(),
                    *negated,
                ))
            }
            Expr::Subquery(query) => {
                let relation = self.query(query)?;
                match relation.rows.len() {
                    0 => Ok(Datum::Null),
                    1 => Ok(relation
                        .rows
                        .into_iter()
                        .flatten()
                        .next()
                        .unwrap_or(Datum::Null)),
                    _ => Err(OraError::new(
                        1427,
                        "single-row subquery returns more than one row",
                    )),
                }
            }
            Expr::Function(function) => self.function(function, frame),
            _ => Err(OraError::invalid_sql(&format!("the expression {expr}"))),
        }
    }

    /// The value of a compiled expression for the row of `frame` (a row frame, never a
    /// group's): a column's or a constant's borrowed, a computed one owned. Operands are
    /// evaluated left to right, each one, as [`Self::eval`] does over the parse tree.
    pub(super) fn value<'a>(
        &mut self,
        compiled: &'a Compiled<'_>,
        frame: Frame<'a>,
    ) -> Result<Cow<'a, Datum>, OraError> {
        Ok(match compiled {
            Compiled::Column(index) => match frame.row.get(*index) {
                Some(value) => Cow::Borrowed(value),
                None => Cow::Owned(Datum::Null),
            },
            Compiled::Constant(value) => Cow::Borrowed(value),
            Compiled::Unary(op, inner) => {
                Cow::Owned(operators::unary(op, self.value(inner, frame)?)?)
            }
            Compiled::Binary(op, left, right) => {
                let a = self.value(left, frame)?;
                let b = self.value(right, frame)?;
                Cow::Owned(operators::binary(op, &a, &b)?)
            }
            Compiled::Concat(operands) => {
                // `||` as [`operators::concat`]: NULL adds nothing, an empty result is NULL.
                let mut text = String::new();
                for operand in operands {
                    self.value(operand, frame)?.push_text(&mut text);
                }
                Cow::Owned(Datum::text(text))
            }
            Compiled::IsNull(inner, negated) => Cow::Owned(operators::boolean(
                self.value(inner, frame)?.is_null() != *negated,
            )),
            Compiled::InList {
                expr,
                list,
                negated,
            } => {
                let value = self.value(expr, frame)?;
                let mut found = Some(false);
                for item in list {
                    let candidate = self.value(item, frame)?;
                    found = operators::member(found, &value, &candidate)?;
                }
                Cow::Owned(operators::in_list(found, *negated))
            }
            Compiled::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let value = self.value(expr, frame)?;
                let low = self.value(low, frame)?;
                let high = self.value(high, frame)?;
                Cow::Owned(operators::between(&value, &low, &high, *negated)?)
            }
            Compiled::Like {
                expr,
                pattern,
                escape,
                negated,
            } => {
                let value = self.value(expr, frame)?;
                let pattern = self.value(pattern, frame)?;
                let escape = match escape {
                    None => None,
                    Some(escape) => Some(self.value(escape, frame)?),
                };
                Cow::Owned(operators::like_condition(
                    &value,
                    &pattern,
                    escape.as_deref(),
                    *negated,
                ))
            }
            Compiled::Function { name, args } => {
                let mut values = Vec::with_capacity(args.len());
                for arg in args {
                    values.push(self.value(arg, frame)?.into_owned());
                }
                Cow::Owned(functions::scalar(name, values, self.database)?)
            }
            Compiled::Interpreted(expr) => Cow::Owned(self.eval(expr, frame)?),
        })
    }

    fn column(
        &mut self,
        qualifier: Option<&str>,
        ident: &Ident,
        frame: Frame<'_>,
    ) -> Result<Datum, OraError> {
        let name = identifier(ident);
        match frame.scope().column(qualifier, &name)? {
            Some(index) => {
                if frame.group().is_some() {
                    // A column outside an aggregate that is not a GROUP BY expression.
                    return Err(OraError::new(979, "not a GROUP BY expression"));
                }
                Ok(frame.row.get(index).cloned().unwrap_or(Datum::Null))
            }
            // Functions without parentheses, and pseudo-columns no view has as a column.
            None if qualifier.is_none() && ident.quote_style.is_none() => match name.as_str() {
                "USER" => Ok(Datum::text(self.database.user())),
                // Both are the host's clock in its zone; only SYSTIMESTAMP carries the offset.
                "SYSDATE" => Ok(Datum::Date(self.database.now().datetime())),
                "SYSTIMESTAMP" => {
                    let now = self.database.now();
                    Ok(Datum::TimestampTz(now.datetime(), now.offset()))
                }
                // VARCHAR2: the offset or region name as set (SQL Language Reference).
                "DBTIMEZONE" => Ok(Datum::text(self.database.dbtimezone())),
                _ => Err(OraError::invalid_identifier(&name)),
            },
            None => Err(OraError::invalid_identifier(&name)),
        }
    }

    fn function(&mut self, function: &Function, frame: Frame<'_>) -> Result<Datum, OraError> {
        let name = function_name(&function.name)
            .map_err(|_| OraError::invalid_identifier(&function.name.to_string()))?;
        let args: Vec<&FunctionArg> = match &function.args {
            FunctionArguments::None => Vec::new(),
            FunctionArguments::List(list) => list.args.iter().collect(),
            FunctionArguments::Subquery(_) => {
                return Err(OraError::invalid_sql("a subquery as argument"));
            }
        };
        if functions::is_aggregate(&name) {
            let Some((members, _)) = frame.group() else {
                return Err(OraError::new(937, "not a single-group group function"));
            };
            let mut values = Vec::with_capacity(members.len());
            for row in members {
                let member = frame.member(row);
                values.push(match args.as_slice() {
                    [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] => Datum::number(1),
                    [FunctionArg::Unnamed(FunctionArgExpr::Expr(expr))] => {
                        self.eval(expr, member)?
                    }
                    _ => return Err(OraError::new(909, "invalid number of arguments")),
                });
            }
            return functions::aggregate(&name, values);
        }
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            match arg {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(expr)) => {
                    values.push(self.eval(expr, frame)?);
                }
                _ => return Err(OraError::invalid_sql("a named or wildcard argument")),
            }
        }
        functions::scalar(&name, values, self.database)
    }
}

/// The select list as `(expression, column name)`; `*` expands to every column in order.
fn projection(select: &Select, scope: &Scope) -> Result<Vec<(Expr, String)>, OraError> {
    let mut items = Vec::with_capacity(select.projection.len());
    for item in &select.projection {
        match item {
            SelectItem::UnnamedExpr(expr) => {
                let name = match expr {
                    Expr::Identifier(ident) => identifier(ident),
                    Expr::CompoundIdentifier(parts) => {
                        parts.last().map(identifier).unwrap_or_default()
                    }
                    other => other.to_string().to_uppercase(),
                };
                items.push((expr.clone(), name));
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                items.push((expr.clone(), identifier(alias)));
            }
            SelectItem::Wildcard(_) => {
                for (qualifier, column) in scope.columns() {
                    let expr = Expr::CompoundIdentifier(vec![
                        Ident::with_quote('"', qualifier),
                        Ident::with_quote('"', column),
                    ]);
                    items.push((expr, column.to_owned()));
                }
            }
            SelectItem::QualifiedWildcard(..) | SelectItem::ExprWithAliases { .. } => {
                return Err(OraError::invalid_sql("a qualified * or several aliases"));
            }
        }
    }
    Ok(items)
}

/// An `ORDER BY` item that names a select-list column by alias, or by position.
fn output_column<'v>(
    expr: &Expr,
    projection: &[(Expr, String)],
    values: &'v [Datum],
) -> Option<&'v Datum> {
    match expr {
        Expr::Identifier(ident) => {
            let name = identifier(ident);
            let index = projection.iter().position(|(_, column)| *column == name)?;
            values.get(index)
        }
        Expr::Value(value) => match &value.value {
            Value::Number(text, _) => values.get(text.parse::<usize>().ok()?.checked_sub(1)?),
            _ => None,
        },
        _ => None,
    }
}

/// `ORDER BY` of a `UNION ALL`: by output column name or position only.
fn sort_output(relation: &mut Relation, order: &[OrderByExpr]) -> Result<(), OraError> {
    if order.is_empty() {
        return Ok(());
    }
    let projection: Vec<(Expr, String)> = relation
        .columns
        .iter()
        .map(|name| (Expr::Identifier(Ident::new(name.clone())), name.clone()))
        .collect();
    let mut keyed = Vec::with_capacity(relation.rows.len());
    for row in relation.rows.drain(..) {
        let mut keys = Vec::with_capacity(order.len());
        for item in order {
            keys.push(
                output_column(&item.expr, &projection, &row)
                    .cloned()
                    .ok_or_else(|| {
                        OraError::new(904, "ORDER BY item must be a select-list column")
                    })?,
            );
        }
        keyed.push((row, keys));
    }
    keyed.sort_by(|(_, a), (_, b)| compare_keys(a, b, order));
    relation.rows = keyed.into_iter().map(|(row, _)| row).collect();
    Ok(())
}

/// Oracle's default: ascending with NULLs last, descending with NULLs first.
fn compare_keys(a: &[Datum], b: &[Datum], order: &[OrderByExpr]) -> Ordering {
    for ((x, y), item) in a.iter().zip(b).zip(order) {
        let descending = matches!(item.options.sort, Some(OrderBySort::Desc));
        let nulls_first = item.options.nulls_first.unwrap_or(descending);
        let ordering = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => {
                if nulls_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (false, true) => {
                if nulls_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            }
            (false, false) => {
                let ordering = x.sort_order(y);
                if descending {
                    ordering.reverse()
                } else {
                    ordering
                }
            }
        };
        if ordering != Ordering::Equal {
            return ordering;
        }
    }
    Ordering::Equal
}

fn has_aggregate(expr: &Expr) -> bool {
    match expr {
        Expr::Function(function) => {
            object_name(&function.name).is_ok_and(|(_, name)| functions::is_aggregate(&name))
                || match &function.args {
                    FunctionArguments::List(list) => list.args.iter().any(|arg| {
                        matches!(arg, FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) if has_aggregate(e))
                    }),
                    _ => false,
                }
        }
        Expr::BinaryOp { left, right, .. } => has_aggregate(left) || has_aggregate(right),
        Expr::Nested(inner) | Expr::UnaryOp { expr: inner, .. } => has_aggregate(inner),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
