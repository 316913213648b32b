//! Flashback reads in the model: `SELECT ... FROM "OWNER"."TABLE" AS OF SCN :1 [WHERE ...]
//! ORDER BY ... FETCH FIRST :n ROWS ONLY`, evaluated as Oracle would rather than recognised by
//! shape, so a wrong comparison, conversion or order in the client's statement reads the wrong
//! rows here too.
//!
//! The WHERE clause is evaluated for the subset the client writes: comparisons (`=`, `>`, `>=`,
//! `<`, `<=`) joined by AND and OR with parentheses, between columns, `ROWID`, binds and the
//! conversions `TO_NUMBER(:n)`, `TO_DATE(:n, 'fmt')`, `TO_TIMESTAMP(:n, 'fmt')` and
//! `CHARTOROWID(:n)`. As in Oracle:
//! - a NUMBER column compared with text is ORA-01722 (the model does not convert implicitly,
//!   which Oracle would only do by the session's NLS settings);
//! - a heap row's ROWID is physical (`AAAR...`), an index-organised row's is logical (`*...`), and
//!   `CHARTOROWID` of a logical ROWID is ORA-01410;
//! - rows come in the ORDER BY's order and no more than the FETCH FIRST bound;
//! - a LONG or LONG RAW column inside a function (`RAWTOHEX("C")`) is ORA-00997, and a LONG RAW
//!   value fetched as text is its hex digits, as the driver renders RAW data.

use std::cmp::Ordering;

use super::super::error::Failure;
use super::super::session::{Bind, Cell};
use super::{FakeTable, failure, text};

/// A value the model compares.
#[derive(Clone, Debug, PartialEq)]
enum Datum {
    Number(f64),
    Text(String),
    RowId(String),
    Null,
}

impl Datum {
    fn compare(&self, other: &Self) -> Result<Option<Ordering>, Failure> {
        Ok(match (self, other) {
            (Self::Null, _) | (_, Self::Null) => None,
            (Self::Number(a), Self::Number(b)) => a.partial_cmp(b),
            (Self::Text(a), Self::Text(b)) | (Self::RowId(a), Self::RowId(b)) => Some(a.cmp(b)),
            (Self::Number(_), Self::Text(_)) | (Self::Text(_), Self::Number(_)) => {
                return Err(failure(1722, "invalid number"));
            }
            _ => return Err(failure(932, "inconsistent datatypes")),
        })
    }
}

/// The row ROWID the model gives row `index` of `table`.
pub(super) fn row_id(table: &FakeTable, index: usize) -> String {
    if table.index_organized {
        format!("*BAEAAB{index:06}")
    } else {
        format!("AAAR{index:012}")
    }
}

/// The rows of a flashback read of `table`.
pub(super) fn read(
    table: &FakeTable,
    sql: &str,
    binds: &[Bind<'_>],
    decimal_comma: bool,
) -> Result<Vec<Vec<Cell>>, Failure> {
    let not_modelled = || failure(900, &format!("invalid SQL statement (not modelled): {sql}"));
    let long_in_function = (table.columns.iter())
        .filter(|column| matches!(column.data_type, "LONG" | "LONG RAW"))
        .any(|column| sql.contains(&format!("(\"{}\"", column.name)));
    if long_in_function {
        return Err(failure(997, "illegal use of LONG datatype"));
    }
    let order_at = sql.find(" ORDER BY ").ok_or_else(not_modelled)?;
    let fetch_at = sql.find(" FETCH FIRST :").ok_or_else(not_modelled)?;
    let condition = sql[..order_at]
        .find(" WHERE ")
        .map(|at| &sql[at + 7..order_at]);
    let ordering: Vec<&str> = sql[order_at + 10..fetch_at].split(", ").collect();
    let limit = match binds.last() {
        Some(Bind::Number(limit)) => *limit as usize,
        _ => return Err(failure(1008, "not all variables bound")),
    };
    let tokens = condition.map(tokenize).transpose()?;
    let mut selected = Vec::new();
    for (index, row) in table.rows.iter().enumerate() {
        let keep = match &tokens {
            Some(tokens) => {
                let mut parser = Parser {
                    tokens,
                    at: 0,
                    table,
                    row,
                    row_id: row_id(table, index),
                    binds,
                };
                let keep = parser.disjunction()?;
                if parser.at != tokens.len() {
                    return Err(not_modelled());
                }
                keep == Some(true)
            }
            None => true,
        };
        if keep {
            selected.push(index);
        }
    }
    let mut sort_error = None;
    selected.sort_by(|&a, &b| {
        for name in &ordering {
            let (left, right) = match *name {
                "ROWID" => (
                    Datum::RowId(row_id(table, a)),
                    Datum::RowId(row_id(table, b)),
                ),
                quoted => match (
                    column(table, &table.rows[a], quoted),
                    column(table, &table.rows[b], quoted),
                ) {
                    (Ok(left), Ok(right)) => (left, right),
                    (Err(error), _) | (_, Err(error)) => {
                        sort_error = Some(error);
                        return Ordering::Equal;
                    }
                },
            };
            match left.compare(&right) {
                Ok(Some(Ordering::Equal)) | Ok(None) => continue,
                Ok(Some(ordering)) => return ordering,
                Err(error) => {
                    sort_error = Some(error);
                    return Ordering::Equal;
                }
            }
        }
        Ordering::Equal
    });
    if let Some(error) = sort_error {
        return Err(error);
    }
    let with_row_id = sql.starts_with("SELECT ROWIDTOCHAR(ROWID)");
    Ok(selected
        .into_iter()
        .take(limit)
        .map(|index| {
            let mut cells = Vec::with_capacity(table.columns.len() + 1);
            if with_row_id {
                cells.push(text(row_id(table, index)));
            }
            cells.extend(table.rows[index].iter().map(|value| match value {
                None => Cell::Null,
                Some(value) if decimal_comma => text(value.replace('.', ",")),
                Some(value) => text(value),
            }));
            cells
        })
        .collect())
}

/// The value of the column `quoted` (`"NAME"`) in `row`: a number for NUMBER columns.
fn column(table: &FakeTable, row: &[Option<String>], quoted: &str) -> Result<Datum, Failure> {
    let name = quoted.trim_matches('"');
    let index = (table.columns.iter())
        .position(|column| column.name == name)
        .ok_or_else(|| failure(904, &format!("\"{name}\": invalid identifier")))?;
    Ok(match &row[index] {
        None => Datum::Null,
        Some(value) if table.columns[index].data_type == "NUMBER" => {
            Datum::Number(value.parse().map_err(|_| failure(1722, "invalid number"))?)
        }
        Some(value) => Datum::Text(value.clone()),
    })
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Word(String),
    Quoted(String),
    Literal(String),
    Bind(usize),
    Symbol(&'static str),
}

fn tokenize(condition: &str) -> Result<Vec<Token>, Failure> {
    let mut tokens = Vec::new();
    let mut chars = condition.char_indices().peekable();
    let not_modelled = |what: &str| failure(900, &format!("not modelled in a condition: {what}"));
    while let Some((at, c)) = chars.next() {
        match c {
            ' ' => {}
            '(' => tokens.push(Token::Symbol("(")),
            ')' => tokens.push(Token::Symbol(")")),
            ',' => tokens.push(Token::Symbol(",")),
            '=' => tokens.push(Token::Symbol("=")),
            '>' | '<' => {
                let equal = chars.next_if(|(_, next)| *next == '=').is_some();
                tokens.push(Token::Symbol(match (c, equal) {
                    ('>', true) => ">=",
                    ('>', false) => ">",
                    (_, true) => "<=",
                    _ => "<",
                }));
            }
            '"' | '\'' => {
                let end = condition[at + 1..]
                    .find(c)
                    .ok_or_else(|| not_modelled("an unclosed quote"))?;
                let inner = condition[at + 1..at + 1 + end].to_owned();
                tokens.push(if c == '"' {
                    Token::Quoted(inner)
                } else {
                    Token::Literal(inner)
                });
                while chars
                    .next_if(|(next_at, _)| *next_at <= at + 1 + end)
                    .is_some()
                {}
            }
            ':' => {
                let mut number = String::new();
                while let Some((_, digit)) = chars.next_if(|(_, next)| next.is_ascii_digit()) {
                    number.push(digit);
                }
                let position = number.parse().map_err(|_| not_modelled("a named bind"))?;
                tokens.push(Token::Bind(position));
            }
            c if c.is_ascii_alphanumeric() || c == '_' => {
                let mut word = c.to_string();
                while let Some((_, next)) =
                    chars.next_if(|(_, next)| next.is_ascii_alphanumeric() || *next == '_')
                {
                    word.push(next);
                }
                tokens.push(Token::Word(word));
            }
            other => return Err(not_modelled(&other.to_string())),
        }
    }
    Ok(tokens)
}

/// A recursive-descent evaluator of the condition for one row; `None` is SQL's unknown.
struct Parser<'a> {
    tokens: &'a [Token],
    at: usize,
    table: &'a FakeTable,
    row: &'a [Option<String>],
    row_id: String,
    binds: &'a [Bind<'a>],
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn expect(&mut self, symbol: &'static str) -> Result<(), Failure> {
        if self.peek() == Some(&Token::Symbol(symbol)) {
            self.at += 1;
            Ok(())
        } else {
            Err(failure(907, &format!("missing {symbol}")))
        }
    }

    fn word(&mut self, word: &str) -> bool {
        let found = matches!(self.peek(), Some(Token::Word(w)) if w == word);
        self.at += usize::from(found);
        found
    }

    fn disjunction(&mut self) -> Result<Option<bool>, Failure> {
        let mut value = self.conjunction()?;
        while self.word("OR") {
            let right = self.conjunction()?;
            value = match (value, right) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            };
        }
        Ok(value)
    }

    fn conjunction(&mut self) -> Result<Option<bool>, Failure> {
        let mut value = self.comparison()?;
        while self.word("AND") {
            let right = self.comparison()?;
            value = match (value, right) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
        }
        Ok(value)
    }

    fn comparison(&mut self) -> Result<Option<bool>, Failure> {
        if self.peek() == Some(&Token::Symbol("(")) {
            self.at += 1;
            let value = self.disjunction()?;
            self.expect(")")?;
            return Ok(value);
        }
        let left = self.operand()?;
        if self.word("IS") {
            let negated = self.word("NOT");
            if !self.word("NULL") {
                return Err(failure(908, "missing NULL keyword"));
            }
            return Ok(Some((left == Datum::Null) != negated));
        }
        let operator = match self.peek() {
            Some(Token::Symbol(symbol)) => *symbol,
            _ => return Err(failure(920, "invalid relational operator")),
        };
        self.at += 1;
        let right = self.operand()?;
        let ordering = left.compare(&right)?;
        Ok(ordering.map(|ordering| match operator {
            "=" => ordering == Ordering::Equal,
            ">" => ordering == Ordering::Greater,
            ">=" => ordering != Ordering::Less,
            "<" => ordering == Ordering::Less,
            _ => ordering != Ordering::Greater,
        }))
    }

    fn bind(&mut self) -> Result<String, Failure> {
        match self.tokens.get(self.at) {
            Some(Token::Bind(position)) => {
                self.at += 1;
                match self.binds.get(position.saturating_sub(1)) {
                    Some(Bind::Text(value)) => Ok((*value).to_owned()),
                    Some(Bind::Number(value)) => Ok(value.to_string()),
                    _ => Err(failure(1008, "not all variables bound")),
                }
            }
            _ => Err(failure(936, "missing expression")),
        }
    }

    fn operand(&mut self) -> Result<Datum, Failure> {
        let token = self
            .tokens
            .get(self.at)
            .cloned()
            .ok_or_else(|| failure(936, "missing expression"))?;
        self.at += 1;
        match token {
            Token::Quoted(name) => column(self.table, self.row, &format!("\"{name}\"")),
            Token::Literal(value) => Ok(Datum::Text(value)),
            Token::Bind(_) => {
                self.at -= 1;
                Ok(Datum::Text(self.bind()?))
            }
            Token::Word(word) if word == "ROWID" => Ok(Datum::RowId(self.row_id.clone())),
            Token::Word(word) if word.chars().all(|c| c.is_ascii_digit()) => word
                .parse()
                .map(Datum::Number)
                .map_err(|_| failure(1722, "invalid number")),
            Token::Word(function) => {
                self.expect("(")?;
                let argument = self.bind()?;
                if self.peek() == Some(&Token::Symbol(",")) {
                    self.at += 1;
                    match self.tokens.get(self.at) {
                        Some(Token::Literal(_)) => self.at += 1,
                        _ => return Err(failure(936, "missing expression")),
                    }
                }
                self.expect(")")?;
                match function.as_str() {
                    "TO_NUMBER" => argument
                        .parse()
                        .map(Datum::Number)
                        .map_err(|_| failure(1722, "invalid number")),
                    "TO_DATE" | "TO_TIMESTAMP" => Ok(Datum::Text(argument)),
                    "CHARTOROWID" if argument.starts_with('*') => {
                        Err(failure(1410, "invalid ROWID"))
                    }
                    "CHARTOROWID" => Ok(Datum::RowId(argument)),
                    other => Err(failure(
                        900,
                        &format!("not modelled in a condition: {other}"),
                    )),
                }
            }
            Token::Symbol(symbol) => Err(failure(936, &format!("missing expression at {symbol}"))),
        }
    }
}
