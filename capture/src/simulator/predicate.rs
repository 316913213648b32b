//! The conditions of `snapshot.selectOverrides` the simulator evaluates, with Oracle's meaning,
//! for a documented subset (docs/simulator.md, "Snapshot conditions"):
//!
//! ```text
//! condition  := comparison ( AND comparison )*
//! comparison := column op literal | column IS [NOT] NULL
//! op         := = | <> | != | < | <= | > | >=
//! column     := NAME (folded to upper case) | "Quoted Name"
//! literal    := number (-12, 3.5) | 'text' ('' for a quote)
//! ```
//!
//! As in Oracle, a comparison with NULL is unknown, so a row with NULL in a compared column is
//! not selected. Numbers compare with NUMBER columns, text with character columns; anything else
//! (OR, functions, other column types) is refused with an error naming what is supported.

use std::cmp::Ordering;

use crate::dictionary::TableSchema;
use crate::value::{OracleNumber, Value};

/// A parsed condition: comparisons that must all hold.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Condition {
    comparisons: Vec<Comparison>,
}

#[derive(Clone, Debug, PartialEq)]
struct Comparison {
    /// Index of the column in the table's columns.
    column: usize,
    test: Test,
}

#[derive(Clone, Debug, PartialEq)]
enum Test {
    IsNull,
    IsNotNull,
    Compare(Op, Literal),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Debug, PartialEq)]
enum Literal {
    Number(OracleNumber),
    Text(String),
}

/// A condition outside the subset, or naming an unknown column.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the simulator cannot evaluate the snapshot condition {condition:?} on {table}: {reason}; it \
     supports `COLUMN op literal` and `COLUMN IS [NOT] NULL` joined by AND, op one of = <> != < \
     <= > >=, a literal a number or a 'quoted' text"
)]
pub(super) struct ConditionError {
    pub condition: String,
    pub table: String,
    pub reason: String,
}

impl Condition {
    /// Parses `text` against the columns of `table`.
    pub fn parse(text: &str, table: &TableSchema) -> Result<Self, ConditionError> {
        let fail = |reason: String| ConditionError {
            condition: text.to_owned(),
            table: table.qualified_name(),
            reason,
        };
        let tokens = tokenize(text).map_err(fail)?;
        let mut comparisons = Vec::new();
        let mut rest = tokens.as_slice();
        loop {
            let (comparison, after) = comparison(rest, table).map_err(fail)?;
            comparisons.push(comparison);
            match after {
                [] => break,
                [Token::Word(word), tail @ ..] if word == "AND" => rest = tail,
                [other, ..] => return Err(fail(format!("{other} where AND or the end belongs"))),
            }
        }
        Ok(Self { comparisons })
    }

    /// Whether a row (values in the table's column order) is selected.
    pub fn selects(&self, values: &[Value]) -> bool {
        self.comparisons.iter().all(|comparison| {
            let value = values.get(comparison.column).unwrap_or(&Value::Null);
            match &comparison.test {
                Test::IsNull => value.is_null(),
                Test::IsNotNull => !value.is_null(),
                Test::Compare(op, literal) => {
                    compare(value, literal).is_some_and(|ordering| op.holds(ordering))
                }
            }
        })
    }
}

impl Op {
    fn holds(self, ordering: Ordering) -> bool {
        match self {
            Self::Eq => ordering == Ordering::Equal,
            Self::Ne => ordering != Ordering::Equal,
            Self::Lt => ordering == Ordering::Less,
            Self::Le => ordering != Ordering::Greater,
            Self::Gt => ordering == Ordering::Greater,
            Self::Ge => ordering != Ordering::Less,
        }
    }
}

/// The value against the literal; `None` (unknown) for NULL or a type the literal does not fit.
fn compare(value: &Value, literal: &Literal) -> Option<Ordering> {
    match (value, literal) {
        (Value::Number(number), Literal::Number(wanted)) => Some(compare_numbers(number, wanted)),
        (Value::Text(text), Literal::Text(wanted)) => Some(text.as_str().cmp(wanted.as_str())),
        _ => None,
    }
}

/// Exact decimal order: sign, then integer digits, then fraction digits.
fn compare_numbers(a: &OracleNumber, b: &OracleNumber) -> Ordering {
    let parts = |n: &OracleNumber| {
        let plain = n.to_plain_string(0);
        let unsigned = plain.trim_start_matches('-').to_owned();
        let (int, frac) = unsigned.split_once('.').unwrap_or((&unsigned, ""));
        (
            n.is_negative() && !n.is_zero(),
            int.trim_start_matches('0').to_owned(),
            frac.trim_end_matches('0').to_owned(),
        )
    };
    let (a_negative, a_int, a_frac) = parts(a);
    let (b_negative, b_int, b_frac) = parts(b);
    let magnitude = a_int
        .len()
        .cmp(&b_int.len())
        .then_with(|| a_int.cmp(&b_int))
        .then_with(|| a_frac.cmp(&b_frac));
    match (a_negative, b_negative) {
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    /// An unquoted word, upper-cased.
    Word(String),
    Quoted(String),
    Number(String),
    Text(String),
    Op(Op),
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Word(word) => write!(f, "{word}"),
            Self::Quoted(name) => write!(f, "\"{name}\""),
            Self::Number(number) => write!(f, "{number}"),
            Self::Text(text) => write!(f, "'{text}'"),
            Self::Op(op) => write!(f, "operator {op:?}"),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphabetic() {
            let mut word = String::new();
            while let Some(&(_, c)) = chars.peek() {
                if !(c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '#')) {
                    break;
                }
                word.push(c.to_ascii_uppercase());
                chars.next();
            }
            tokens.push(Token::Word(word));
        } else if c.is_ascii_digit() || c == '-' || c == '.' {
            let mut number = String::new();
            while let Some(&(_, c)) = chars.peek() {
                if !(c.is_ascii_digit() || c == '.' || (c == '-' && number.is_empty())) {
                    break;
                }
                number.push(c);
                chars.next();
            }
            tokens.push(Token::Number(number));
        } else if c == '\'' || c == '"' {
            chars.next();
            let mut content = String::new();
            loop {
                match chars.next() {
                    Some((_, q)) if q == c => {
                        // A doubled quote inside text stands for one quote.
                        if c == '\'' && chars.peek().is_some_and(|&(_, next)| next == '\'') {
                            content.push('\'');
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    Some((_, other)) => content.push(other),
                    None => return Err(format!("the quote at position {start} is not closed")),
                }
            }
            tokens.push(if c == '\'' {
                Token::Text(content)
            } else {
                Token::Quoted(content)
            });
        } else {
            chars.next();
            let next = chars.peek().map(|&(_, n)| n);
            let op = match (c, next) {
                ('<', Some('=')) => Some((Op::Le, true)),
                ('<', Some('>')) | ('!', Some('=')) => Some((Op::Ne, true)),
                ('>', Some('=')) => Some((Op::Ge, true)),
                ('<', _) => Some((Op::Lt, false)),
                ('>', _) => Some((Op::Gt, false)),
                ('=', _) => Some((Op::Eq, false)),
                _ => None,
            };
            let Some((op, two)) = op else {
                return Err(format!("{c:?} at position {start} is not supported"));
            };
            if two {
                chars.next();
            }
            tokens.push(Token::Op(op));
        }
    }
    Ok(tokens)
}

fn comparison<'t>(
    tokens: &'t [Token],
    table: &TableSchema,
) -> Result<(Comparison, &'t [Token]), String> {
    let (name, rest) = match tokens {
        [Token::Word(name), rest @ ..] | [Token::Quoted(name), rest @ ..] => (name, rest),
        [other, ..] => return Err(format!("{other} where a column name belongs")),
        [] => return Err("a column name is missing".to_owned()),
    };
    let column = table
        .column_index(name)
        .ok_or_else(|| format!("the table has no column {name}"))?;
    let word = |token: &Token, wanted: &str| matches!(token, Token::Word(w) if w == wanted);
    match rest {
        [is, not, null, rest @ ..] if word(is, "IS") && word(not, "NOT") && word(null, "NULL") => {
            Ok((
                Comparison {
                    column,
                    test: Test::IsNotNull,
                },
                rest,
            ))
        }
        [is, null, rest @ ..] if word(is, "IS") && word(null, "NULL") => Ok((
            Comparison {
                column,
                test: Test::IsNull,
            },
            rest,
        )),
        [Token::Op(op), literal, rest @ ..] => {
            let literal = match literal {
                Token::Number(text) => Literal::Number(
                    OracleNumber::parse(text).map_err(|_| format!("{text} is not a number"))?,
                ),
                Token::Text(text) => Literal::Text(text.clone()),
                other => return Err(format!("{other} where a literal belongs")),
            };
            Ok((
                Comparison {
                    column,
                    test: Test::Compare(*op, literal),
                },
                rest,
            ))
        }
        [Token::Op(_)] => Err(format!("no literal after the operator on column {name}")),
        [other, ..] => Err(format!("{other} after column {name}")),
        [] => Err(format!("nothing after column {name}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dictionary::{Column, OracleType};

    fn table() -> TableSchema {
        TableSchema::new(
            "APP",
            "ORDERS",
            vec![
                Column::new("ID", OracleType::parse("NUMBER(10)").unwrap()).key(1),
                Column::new("STATUS", OracleType::parse("VARCHAR2(16)").unwrap()),
                Column::new("Note", OracleType::parse("VARCHAR2(16)").unwrap()),
            ],
        )
        .unwrap()
    }

    fn row(id: &str, status: Option<&str>) -> Vec<Value> {
        vec![
            Value::Number(OracleNumber::parse(id).unwrap()),
            status.map_or(Value::Null, |s| Value::Text(s.to_owned())),
            Value::Null,
        ]
    }

    fn selects(condition: &str, values: &[Value]) -> bool {
        Condition::parse(condition, &table())
            .unwrap()
            .selects(values)
    }

    #[test]
    fn comparisons_follow_oracle() {
        let new = row("10", Some("NEW"));
        assert!(selects("ID = 10", &new));
        assert!(selects("id >= 10 and status = 'NEW'", &new));
        assert!(!selects("ID > 10", &new));
        assert!(selects("ID > 9.5", &new));
        assert!(selects("ID < 10.01", &new));
        assert!(selects("ID > -3", &new));
        assert!(!selects("ID <> 10", &new));
        assert!(selects("STATUS != 'OLD'", &new));
        assert!(selects("STATUS < 'O'", &new), "text compares as bytes");
        assert!(selects("\"Note\" IS NULL AND STATUS IS NOT NULL", &new));
        assert!(selects("STATUS = 'it''s'", &row("1", Some("it's"))));
        let no_status = row("10", None);
        assert!(
            !selects("STATUS <> 'NEW'", &no_status),
            "NULL compares as unknown"
        );
        assert!(
            !selects("ID = 'NEW'", &new),
            "a text literal never matches a number"
        );
        assert!(selects("ID > -11", &row("-10", None)));
        assert!(!selects("ID > -9", &row("-10", None)));
    }

    proptest::proptest! {
        /// Any text either parses or is refused with the subset named; it never panics.
        #[test]
        fn any_text_parses_or_is_refused(text in "[A-Za-z0-9 '\"<>=!.()-]{0,40}") {
            if let Err(error) = Condition::parse(&text, &table()) {
                proptest::prop_assert!(error.to_string().contains("joined by AND"));
            }
        }
    }

    #[test]
    fn anything_else_is_refused_naming_the_subset() {
        for (condition, reason) in [
            ("ID = 1 OR ID = 2", "OR where AND"),
            ("UPPER(STATUS) = 'A'", "'(' at position 5"),
            ("PRICE > 3", "no column PRICE"),
            ("ID >", "no literal after"),
            ("ID", "nothing after"),
            ("STATUS = 'open", "not closed"),
            ("ID = STATUS", "STATUS where a literal"),
        ] {
            let error = Condition::parse(condition, &table()).unwrap_err();
            assert!(error.reason.contains(reason), "{condition}: {error}");
            assert!(error.to_string().contains("joined by AND"), "{error}");
        }
    }
}
