//! The evaluator's two paths agree: an expression compiled once per statement
//! ([`super::compiled`]) evaluates, on every row, as the parse tree does.

use std::borrow::Cow;

use sqlparser::dialect::OracleDialect;
use sqlparser::parser::Parser;

use super::super::{Database, Relation};
use super::*;
use crate::simulator::sql::compiled::{Compiled, compile};

/// A database with nothing but the session's functions.
struct Functions;

impl Database for Functions {
    fn relation(&mut self, _: Option<&str>, _: &str, _: Option<u64>) -> Result<Relation, OraError> {
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
            let frame = scope.row(row);
            let found = evaluator
                .value(&compiled, frame)
                .map(Cow::into_owned)
                .map_err(|error| error.code);
            let expected = evaluator.eval(&expr, frame).map_err(|error| error.code);
            assert_eq!(found, expected, "{text} over {row:?}");
        }
    }
}
