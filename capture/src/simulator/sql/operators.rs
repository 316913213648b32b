//! Oracle's operators and conditions on values (SQL Language Reference 19c, "Operators" and
//! "Conditions"), shared by the two ways an expression is evaluated: walked from the parse tree
//! ([`super::engine`]) or compiled once per statement ([`super::compiled`]). Three-valued logic:
//! a condition is carried as a value, `1` true, `0` false and NULL unknown.

use std::borrow::Cow;
use std::cmp::Ordering;

use sqlparser::ast::{BinaryOperator, UnaryOperator};

use super::OraError;
use super::datum::Datum;

/// `left op right` on both sides' values. AND and OR take both sides, evaluated: a model of a
/// database that may evaluate in any order, so both must be valid.
pub fn binary(op: &BinaryOperator, a: &Datum, b: &Datum) -> Result<Datum, OraError> {
    let compared = |wanted: fn(Ordering) -> bool| -> Result<Datum, OraError> {
        Ok(match a.compare(b)? {
            None => Datum::Null,
            Some(order) => boolean(wanted(order)),
        })
    };
    match op {
        BinaryOperator::And => Ok(option_boolean(and(tri(a), tri(b)))),
        BinaryOperator::Or => Ok(option_boolean(or(tri(a), tri(b)))),
        BinaryOperator::Eq => compared(|o| o == Ordering::Equal),
        BinaryOperator::NotEq => compared(|o| o != Ordering::Equal),
        BinaryOperator::Lt => compared(|o| o == Ordering::Less),
        BinaryOperator::LtEq => compared(|o| o != Ordering::Greater),
        BinaryOperator::Gt => compared(|o| o == Ordering::Greater),
        BinaryOperator::GtEq => compared(|o| o != Ordering::Less),
        BinaryOperator::StringConcat => Ok(concat([a, b])),
        BinaryOperator::Plus | BinaryOperator::Minus => {
            let (Some(x), Some(y)) = (a.to_number()?, b.to_number()?) else {
                return Ok(Datum::Null);
            };
            let whole = |n: &super::datum::Number| {
                n.to_i128()
                    .ok_or_else(|| OraError::invalid_sql("arithmetic on fractions"))
            };
            let (x, y) = (whole(&x)?, whole(&y)?);
            let result = if *op == BinaryOperator::Plus {
                x.checked_add(y)
            } else {
                x.checked_sub(y)
            };
            result
                .map(Datum::number)
                .ok_or_else(|| OraError::new(1426, "numeric overflow"))
        }
        _ => Err(OraError::invalid_sql(&format!("the operator {op}"))),
    }
}

/// `||` over any number of operands: NULL is the empty string, and an empty result is NULL
/// (SQL Language Reference, Concatenation Operator), so `a || b || c` is their texts joined.
pub fn concat<'a>(operands: impl IntoIterator<Item = &'a Datum>) -> Datum {
    let mut text = String::new();
    for operand in operands {
        operand.push_text(&mut text);
    }
    Datum::text(text)
}

/// `NOT x`, `-x`, `+x`.
pub fn unary(op: &UnaryOperator, value: Cow<'_, Datum>) -> Result<Datum, OraError> {
    match op {
        UnaryOperator::Not => Ok(match tri(&value) {
            Some(b) => boolean(!b),
            None => Datum::Null,
        }),
        UnaryOperator::Minus => Ok(match value.to_number()? {
            None => Datum::Null,
            Some(n) => Datum::Number(n.negated()),
        }),
        UnaryOperator::Plus => Ok(value.into_owned()),
        _ => Err(OraError::invalid_sql("this unary operator")),
    }
}

/// `value [NOT] IN (candidates)`: true when one is equal, unknown when none is and one
/// comparison was unknown.
pub fn membership<'a>(
    value: &Datum,
    candidates: impl IntoIterator<Item = &'a Datum>,
    negated: bool,
) -> Result<Datum, OraError> {
    let mut found = Some(false);
    for candidate in candidates {
        found = member(found, value, candidate)?;
    }
    Ok(in_list(found, negated))
}

/// One candidate of an IN list compared: what is `found` so far, with this candidate.
pub fn member(
    found: Option<bool>,
    value: &Datum,
    candidate: &Datum,
) -> Result<Option<bool>, OraError> {
    Ok(or(
        found,
        value.compare(candidate)?.map(|o| o == Ordering::Equal),
    ))
}

/// The IN condition once every candidate is compared ([`member`]).
pub fn in_list(found: Option<bool>, negated: bool) -> Datum {
    match found {
        None => Datum::Null,
        Some(b) => boolean(b != negated),
    }
}

/// `value [NOT] BETWEEN low AND high`.
pub fn between(value: &Datum, low: &Datum, high: &Datum, negated: bool) -> Result<Datum, OraError> {
    let above = value.compare(low)?.map(|o| o != Ordering::Less);
    let below = value.compare(high)?.map(|o| o != Ordering::Greater);
    Ok(match and(above, below) {
        None => Datum::Null,
        Some(b) => boolean(b != negated),
    })
}

/// `value [NOT] LIKE pattern [ESCAPE escape]`; NULL on either side is unknown.
pub fn like_condition(
    value: &Datum,
    pattern: &Datum,
    escape: Option<&Datum>,
    negated: bool,
) -> Datum {
    let escape = escape
        .and_then(Datum::text_of)
        .and_then(|e| e.chars().next());
    match (value.text_of(), pattern.text_of()) {
        (Some(value), Some(pattern)) => boolean(like(&value, &pattern, escape) != negated),
        _ => Datum::Null,
    }
}

/// `LIKE` with `%`, `_` and an optional escape character. Text that is all ASCII is matched
/// byte by byte, any other character by character.
pub fn like(value: &str, pattern: &str, escape: Option<char>) -> bool {
    fn matches<T: Copy + PartialEq>(v: &[T], p: &[T], escape: Option<T>, any: T, one: T) -> bool {
        match p.first() {
            None => v.is_empty(),
            Some(&c) if Some(c) == escape => match (p.get(1), v.first()) {
                (Some(literal), Some(first)) if literal == first => {
                    matches(&v[1..], &p[2..], escape, any, one)
                }
                _ => false,
            },
            Some(&c) if c == any => {
                (0..=v.len()).any(|skip| matches(&v[skip..], &p[1..], escape, any, one))
            }
            Some(&c) if c == one => !v.is_empty() && matches(&v[1..], &p[1..], escape, any, one),
            Some(c) => v.first() == Some(c) && matches(&v[1..], &p[1..], escape, any, one),
        }
    }
    if value.is_ascii() && pattern.is_ascii() && escape.is_none_or(|e| e.is_ascii()) {
        let escape = escape.and_then(|e| u8::try_from(e).ok());
        return matches(value.as_bytes(), pattern.as_bytes(), escape, b'%', b'_');
    }
    let value: Vec<char> = value.chars().collect();
    let pattern: Vec<char> = pattern.chars().collect();
    matches(&value, &pattern, escape, '%', '_')
}

/// A condition's value.
pub fn boolean(value: bool) -> Datum {
    Datum::number(i128::from(value))
}

fn option_boolean(value: Option<bool>) -> Datum {
    value.map_or(Datum::Null, boolean)
}

/// The truth of a value carried as a condition: NULL is unknown, a zero false.
pub fn tri(value: &Datum) -> Option<bool> {
    match value {
        Datum::Null => None,
        Datum::Number(n) => Some(!n.is_zero()),
        _ => Some(true),
    }
}

/// What `WHERE` keeps: rows where the condition is true, not unknown.
pub fn truth(value: &Datum) -> bool {
    tri(value) == Some(true)
}

pub fn and(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

pub fn or(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_matches_by_bytes_or_by_characters_alike() {
        assert!(like("OBJ# 74103", "OBJ#%", None));
        assert!(!like("ORDERS", "OBJ#%", None));
        assert!(like("INTERNAL DDL", "INTERNAL DDL%", None));
        assert!(like("A_B", "A!_B", Some('!')));
        assert!(!like("AXB", "A!_B", Some('!')));
        assert!(like("AXB", "A_B", None));
        assert!(like("Grüße", "Gr_ße", None));
        assert!(like("Grüße", "%ße", None));
        assert!(!like("Grüße", "Gr_e", None));
    }

    #[test]
    fn concatenation_treats_null_as_empty_and_empty_as_null() {
        let parts = [Datum::number(10), Datum::text("."), Datum::Null];
        assert_eq!(concat(&parts), Datum::text("10."));
        assert_eq!(concat(&[Datum::Null, Datum::Null]), Datum::Null);
    }
}
