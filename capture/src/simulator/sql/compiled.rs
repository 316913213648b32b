//! An expression of a query block compiled once per statement run, as Oracle resolves a
//! statement's names when it parses it rather than for each row: a column becomes its position
//! in the joined row, a literal or bind its value, `a || b || c` one concatenation. Each row is
//! then evaluated on its values where they are, borrowed, so a condition over a view's rows
//! neither looks a name up nor copies a value per row, and a row `WHERE` rejects is never copied.
//!
//! Compiling is translation only: the evaluator ([`super::engine`]) evaluates a compiled
//! expression with the same operators ([`super::operators`]) it applies to the parse tree. What
//! does not compile this way (a name that is no column of the `FROM` list, a subquery, an
//! aggregate, anything the model refuses) stays [`Compiled::Interpreted`] and is evaluated per
//! row from the parse tree, which raises the same errors as before for it.

use sqlparser::ast::{
    BinaryOperator, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, InTarget, UnaryOperator,
};

use super::datum::Datum;
use super::functions;
use super::scope::{Binds, Scope, function_name, identifier, literal};

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
