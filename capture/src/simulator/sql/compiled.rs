//! An expression of a query block compiled once per statement run, as Oracle resolves a
//! statement's names when it parses it rather than for each row: a column becomes its position
//! in the joined row, a literal or bind its value, `a || b || c` one concatenation. Each row is
//! then evaluated on its values where they are, borrowed, so a condition over a view's rows
//! neither looks a name up nor copies a value per row, and a row `WHERE` rejects is never copied.
//!
//! The semantics are [`super::operators`]', the same the tree-walking evaluator uses. What does
//! not compile this way (a name that is no column of the `FROM` list, a subquery, an aggregate,
//! anything the model refuses) stays [`Compiled::Interpreted`] and is evaluated per row by
//! [`Evaluator::eval`], which raises the same errors as before for it.

use std::borrow::Cow;

use sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, InTarget, UnaryOperator,
};

use super::OraError;
use super::datum::Datum;
use super::engine::{Binds, Evaluator, Frame, Scope, function_name, identifier, literal};
use super::functions;
use super::operators;

/// A compiled expression; `'q` is the statement's parse tree.
#[derive(Debug)]
pub enum Compiled<'q> {
    /// A column of the joined row, by position.
    Column(usize),
    /// A literal or a bind: the same for every row of this run.
    Constant(Datum),
    Unary(&'q UnaryOperator, Box<Compiled<'q>>),
    Binary(&'q BinaryOperator, Box<Compiled<'q>>, Box<Compiled<'q>>),
    /// A chain of `||`.
    Concat(Vec<Compiled<'q>>),
    /// `IS NULL`, or `IS NOT NULL` when `true`.
    IsNull(Box<Compiled<'q>>, bool),
    InList {
        expr: Box<Compiled<'q>>,
        list: Vec<Compiled<'q>>,
        negated: bool,
    },
    Between {
        expr: Box<Compiled<'q>>,
        low: Box<Compiled<'q>>,
        high: Box<Compiled<'q>>,
        negated: bool,
    },
    Like {
        expr: Box<Compiled<'q>>,
        pattern: Box<Compiled<'q>>,
        escape: Option<Box<Compiled<'q>>>,
        negated: bool,
    },
    /// A scalar function with its name resolved (`TO_CHAR`, `NVL`, ...).
    Function {
        name: String,
        args: Vec<Compiled<'q>>,
    },
    /// Evaluated per row from the parse tree.
    Interpreted(&'q Expr),
}

/// Compiles `expr` for rows of `scope`, with the statement's `binds`.
pub fn compile<'q>(expr: &'q Expr, scope: &Scope, binds: &Binds) -> Compiled<'q> {
    let boxed = |expr: &'q Expr| Box::new(compile(expr, scope, binds));
    match expr {
        Expr::Identifier(ident) => match scope.column(None, &identifier(ident)) {
            Ok(Some(index)) => Compiled::Column(index),
            _ => Compiled::Interpreted(expr),
        },
        Expr::CompoundIdentifier(parts) => match parts.as_slice() {
            [qualifier, name] => {
                match scope.column(Some(&identifier(qualifier)), &identifier(name)) {
                    Ok(Some(index)) => Compiled::Column(index),
                    _ => Compiled::Interpreted(expr),
                }
            }
            _ => Compiled::Interpreted(expr),
        },
        Expr::Value(value) => match literal(&value.value, binds) {
            Ok(datum) => Compiled::Constant(datum),
            Err(_) => Compiled::Interpreted(expr),
        },
        Expr::Nested(inner) => compile(inner, scope, binds),
        Expr::UnaryOp { op, expr } => Compiled::Unary(op, boxed(expr)),
        Expr::BinaryOp {
            op: BinaryOperator::StringConcat,
            ..
        } => {
            let mut operands = Vec::new();
            concat_operands(expr, &mut operands);
            Compiled::Concat(
                operands
                    .into_iter()
                    .map(|operand| compile(operand, scope, binds))
                    .collect(),
            )
        }
        Expr::BinaryOp { left, op, right } => Compiled::Binary(op, boxed(left), boxed(right)),
        Expr::IsNull(inner) => Compiled::IsNull(boxed(inner), false),
        Expr::IsNotNull(inner) => Compiled::IsNull(boxed(inner), true),
        Expr::In {
            expr,
            target: InTarget::List(list),
            negated,
            ..
        } => Compiled::InList {
            expr: boxed(expr),
            list: list
                .iter()
                .map(|item| compile(item, scope, binds))
                .collect(),
            negated: *negated,
        },
        Expr::Between {
            expr,
            negated,
            low,
            high,
        } => Compiled::Between {
            expr: boxed(expr),
            low: boxed(low),
            high: boxed(high),
            negated: *negated,
        },
        Expr::Like {
            negated,
            any: false,
            expr,
            pattern,
            escape_char,
        } => Compiled::Like {
            expr: boxed(expr),
            pattern: boxed(pattern),
            escape: escape_char.as_deref().map(boxed),
            negated: *negated,
        },
        Expr::Function(function) => {
            let name = function_name(&function.name);
            let args: Option<Vec<&Expr>> = match &function.args {
                FunctionArguments::None => Some(Vec::new()),
                FunctionArguments::List(list) => list
                    .args
                    .iter()
                    .map(|arg| match arg {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(expr)) => Some(expr),
                        _ => None,
                    })
                    .collect(),
                FunctionArguments::Subquery(_) => None,
            };
            match (name, args) {
                (Ok(name), Some(args)) if !functions::is_aggregate(&name) => Compiled::Function {
                    name,
                    args: args
                        .into_iter()
                        .map(|arg| compile(arg, scope, binds))
                        .collect(),
                },
                _ => Compiled::Interpreted(expr),
            }
        }
        _ => Compiled::Interpreted(expr),
    }
}

/// The operands of a chain of `||`, left to right.
fn concat_operands<'q>(expr: &'q Expr, operands: &mut Vec<&'q Expr>) {
    match expr {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::StringConcat,
            right,
        } => {
            concat_operands(left, operands);
            concat_operands(right, operands);
        }
        Expr::Nested(inner) => concat_operands(inner, operands),
        other => operands.push(other),
    }
}

impl Compiled<'_> {
    /// The value for the row of `frame` (a row frame, never a group's): a column's or a
    /// constant's borrowed, a computed one owned. Operands are evaluated left to right, each
    /// one, as the tree-walking evaluator does.
    pub fn value<'a>(
        &'a self,
        evaluator: &mut Evaluator<'_>,
        frame: Frame<'a>,
    ) -> Result<Cow<'a, Datum>, OraError> {
        Ok(match self {
            Self::Column(index) => match frame.row.get(*index) {
                Some(value) => Cow::Borrowed(value),
                None => Cow::Owned(Datum::Null),
            },
            Self::Constant(value) => Cow::Borrowed(value),
            Self::Unary(op, inner) => {
                Cow::Owned(operators::unary(op, inner.value(evaluator, frame)?)?)
            }
            Self::Binary(op, left, right) => {
                let a = left.value(evaluator, frame)?;
                let b = right.value(evaluator, frame)?;
                Cow::Owned(operators::binary(op, &a, &b)?)
            }
            Self::Concat(operands) => {
                // `||` as [`operators::concat`]: NULL adds nothing, an empty result is NULL.
                let mut text = String::new();
                for operand in operands {
                    operand.value(evaluator, frame)?.push_text(&mut text);
                }
                Cow::Owned(Datum::text(text))
            }
            Self::IsNull(inner, negated) => Cow::Owned(operators::boolean(
                inner.value(evaluator, frame)?.is_null() != *negated,
            )),
            Self::InList {
                expr,
                list,
                negated,
            } => {
                let value = expr.value(evaluator, frame)?;
                let mut found = Some(false);
                for item in list {
                    let candidate = item.value(evaluator, frame)?;
                    found = operators::member(found, &value, &candidate)?;
                }
                Cow::Owned(operators::in_list(found, *negated))
            }
            Self::Between {
                expr,
                low,
                high,
                negated,
            } => {
                let value = expr.value(evaluator, frame)?;
                let low = low.value(evaluator, frame)?;
                let high = high.value(evaluator, frame)?;
                Cow::Owned(operators::between(&value, &low, &high, *negated)?)
            }
            Self::Like {
                expr,
                pattern,
                escape,
                negated,
            } => {
                let value = expr.value(evaluator, frame)?;
                let pattern = pattern.value(evaluator, frame)?;
                let escape = match escape {
                    None => None,
                    Some(escape) => Some(escape.value(evaluator, frame)?),
                };
                Cow::Owned(operators::like_condition(
                    &value,
                    &pattern,
                    escape.as_deref(),
                    *negated,
                ))
            }
            Self::Function { name, args } => {
                let mut values = Vec::with_capacity(args.len());
                for arg in args {
                    values.push(arg.value(evaluator, frame)?.into_owned());
                }
                Cow::Owned(functions::scalar(name, values, evaluator.database)?)
            }
            Self::Interpreted(expr) => Cow::Owned(evaluator.eval(expr, frame)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::OracleDialect;
    use sqlparser::parser::Parser;

    use super::super::{Database, Relation};
    use super::*;

    /// A database with nothing but the session's functions.
    struct Functions;

    impl Database for Functions {
        fn relation(
            &mut self,
            _: Option<&str>,
            _: &str,
            _: Option<u64>,
        ) -> Result<Relation, OraError> {
            Err(OraError::new(942, "table or view does not exist"))
        }
        fn user(&self) -> String {
            "REDOLINE".to_owned()
        }
        fn now(&self) -> jiff::Zoned {
            jiff::Timestamp::UNIX_EPOCH.to_zoned(jiff::tz::TimeZone::UTC)
        }
        fn dbtimezone(&self) -> String {
            "+00:00".to_owned()
        }
        fn sys_context(&self, _: &str) -> Result<Datum, OraError> {
            Ok(Datum::Null)
        }
        fn scn_to_timestamp(&self, _: u64) -> Result<jiff::civil::DateTime, OraError> {
            Err(OraError::new(
                8181,
                "specified number is not a valid system change number",
            ))
        }
    }

    /// Every expression gives, on every row, what the tree-walking evaluator gives: the same
    /// value, or the same error.
    #[test]
    fn a_compiled_expression_evaluates_as_the_parse_tree_does() {
        let expressions = [
            "A = 1",
            "A <> B",
            "A >= :1 AND A <= :2",
            "A IN (1, 2, NULL)",
            "A NOT IN (1, 2)",
            "B LIKE 'x%'",
            "B NOT LIKE 'OBJ#%'",
            "B LIKE 'a!_b' ESCAPE '!'",
            "A BETWEEN 1 AND 3",
            "A NOT BETWEEN 1 AND 3",
            "A || '.' || B || C",
            "(A || B) || ('-' || C)",
            "NOT (A > 1)",
            "-A",
            "A + 1 - :1",
            "A IS NULL",
            "C IS NOT NULL",
            "TO_CHAR(D, 'YYYY-MM-DD HH24:MI:SS')",
            "NVL(C, 'none')",
            "USER",
            "(A = 1 OR B = 'x') AND C IS NULL",
            "T.A = 1",
            "NOPE = 1",
            "Q.A = 1",
            "A = 'x'",
            "A = :9",
            "COUNT(A)",
            "NO_SUCH_FUNCTION(A)",
        ];
        let rows = [
            vec![
                Datum::number(1),
                Datum::text("x"),
                Datum::Null,
                Datum::Date(jiff::civil::date(2024, 1, 2).at(3, 4, 5, 0)),
            ],
            vec![
                Datum::number(2),
                Datum::text("a_b"),
                Datum::text("c"),
                Datum::Null,
            ],
            vec![Datum::Null, Datum::text("OBJ# 7"), Datum::Null, Datum::Null],
        ];
        let scope = Scope::of("T", &["A", "B", "C", "D"]);
        let binds: Binds = [
            (":1".to_owned(), Datum::number(1)),
            (":2".to_owned(), Datum::number(2)),
        ]
        .into_iter()
        .collect();
        let mut database = Functions;
        let mut evaluator = Evaluator {
            database: &mut database,
            binds: &binds,
            as_of_scn: None,
        };
        for text in expressions {
            let expr = Parser::new(&OracleDialect {})
                .try_with_sql(text)
                .and_then(|mut parser| parser.parse_expr())
                .unwrap();
            let compiled = compile(&expr, &scope, &binds);
            if text == "A >= :1 AND A <= :2" {
                // Names and binds are resolved once: nothing is left to look up per row.
                let Compiled::Binary(_, left, _) = &compiled else {
                    panic!("{compiled:?}")
                };
                assert!(
                    matches!(left.as_ref(), Compiled::Binary(_, a, b)
                        if matches!(a.as_ref(), Compiled::Column(0))
                            && matches!(b.as_ref(), Compiled::Constant(_))),
                    "{compiled:?}"
                );
            }
            for row in &rows {
                let frame = scope.frame(row);
                let found = compiled
                    .value(&mut evaluator, frame)
                    .map(Cow::into_owned)
                    .map_err(|error| error.code);
                let expected = evaluator.eval(&expr, frame).map_err(|error| error.code);
                assert_eq!(found, expected, "{text} over {row:?}");
            }
        }
    }
}
