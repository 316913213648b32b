//! The DML grammar: `insert`, `update` and `delete` statements of SQL_REDO into [`DmlStatement`].
//!
//! The value, table and where-clause rules here are shared with the LOB parsers ([`super::lob`]).

use std::borrow::Cow;

use super::ast::{COLUMNS_UP_FRONT, ColumnValue, DmlStatement, RawValue, TableRef};
use super::error::{ParseError, ParseErrorKind};
use super::lex::Cursor;

/// How deep function calls may nest in a value (`TO_DATE(TO_CHAR(..))` is depth 2). LogMiner
/// never nests more than a couple of levels; the bound keeps hostile input from exhausting the
/// stack.
pub const MAX_CALL_DEPTH: usize = 32;

/// [`super::parse_dml`] by the general grammar alone (kept out of `parse_dml`, which inlines the fast path).
#[inline(never)]
pub(crate) fn parse_general(sql: &str) -> Result<DmlStatement<'_>, ParseError> {
    let mut cursor = Cursor::new(sql);
    let statement = if cursor.eat_keyword("insert")? {
        insert(&mut cursor)?
    } else if cursor.eat_keyword("update")? {
        update(&mut cursor)?
    } else if cursor.eat_keyword("delete")? {
        delete(&mut cursor)?
    } else {
        return Err(cursor.error(ParseErrorKind::UnknownStatement(
            "an insert, update or delete statement",
        )));
    };
    cursor.finish()?;
    Ok(statement)
}

/// `into TABLE ( "C", ... ) values ( v, ... )` after `insert`.
fn insert<'a>(cursor: &mut Cursor<'a>) -> Result<DmlStatement<'a>, ParseError> {
    cursor.expect_keyword("into", "`into`")?;
    let table = table_ref(cursor)?;
    cursor.expect(b'(', "`(` before the column list")?;
    // Room for typical tables up front: growing the vector costs more than the parse of a value.
    let mut values: Vec<ColumnValue<'a>> = Vec::with_capacity(COLUMNS_UP_FRONT);
    loop {
        let column = cursor.quoted_identifier()?;
        values.push((column, RawValue::Null));
        if !cursor.eat(b',')? {
            break;
        }
    }
    cursor.expect(b')', "`,` or `)` in the column list")?;
    cursor.expect_keyword("values", "`values`")?;
    cursor.skip_trivia()?;
    let values_start = cursor.pos();
    cursor.expect(b'(', "`(` before the value list")?;
    let columns = values.len();
    let mut count = 0;
    loop {
        let value = value(cursor, 0)?;
        match values.get_mut(count) {
            Some(slot) => slot.1 = value,
            None => {
                // Count the rest so the error says how many there were.
                count += 1;
                while cursor.eat(b',')? {
                    let _ = self::value(cursor, 0)?;
                    count += 1;
                }
                return Err(cursor.error_at(
                    ParseErrorKind::ValueCountMismatch {
                        columns,
                        values: count,
                    },
                    values_start,
                ));
            }
        }
        count += 1;
        if !cursor.eat(b',')? {
            break;
        }
    }
    cursor.expect(b')', "`,` or `)` in the value list")?;
    if count != columns {
        return Err(cursor.error_at(
            ParseErrorKind::ValueCountMismatch {
                columns,
                values: count,
            },
            values_start,
        ));
    }
    Ok(DmlStatement::Insert { table, values })
}

/// `TABLE [alias] set "C" = v, ... [where ...]` after `update`.
fn update<'a>(cursor: &mut Cursor<'a>) -> Result<DmlStatement<'a>, ParseError> {
    let table = table_ref(cursor)?;
    let alias = alias(cursor, "set")?;
    cursor.expect_keyword("set", "`set`")?;
    let mut set = Vec::with_capacity(COLUMNS_UP_FRONT);
    loop {
        cursor.skip_trivia()?;
        let at = cursor.pos();
        let column = match column_ref(cursor, alias)? {
            ColumnRef::Column(column) => column,
            ColumnRef::Rowid => {
                return Err(cursor.error_at(ParseErrorKind::Expected("a quoted column name"), at));
            }
        };
        cursor.expect(b'=', "`=`")?;
        set.push((column, value(cursor, 0)?));
        if !cursor.eat(b',')? {
            break;
        }
    }
    let (where_, rowid) = if cursor.eat_keyword("where")? {
        conditions(cursor, alias)?
    } else {
        (Vec::new(), None)
    };
    Ok(DmlStatement::Update {
        table,
        set,
        where_,
        rowid,
    })
}

/// `from TABLE [alias] [where ...]` after `delete`.
fn delete<'a>(cursor: &mut Cursor<'a>) -> Result<DmlStatement<'a>, ParseError> {
    cursor.expect_keyword("from", "`from`")?;
    let table = table_ref(cursor)?;
    let alias = alias(cursor, "where")?;
    let (where_, rowid) = if cursor.eat_keyword("where")? {
        conditions(cursor, alias)?
    } else {
        (Vec::new(), None)
    };
    Ok(DmlStatement::Delete {
        table,
        where_,
        rowid,
    })
}

/// `"OWNER"."TABLE"` or `"TABLE"`.
pub(crate) fn table_ref<'a>(cursor: &mut Cursor<'a>) -> Result<TableRef<'a>, ParseError> {
    let first = cursor.quoted_identifier()?;
    if cursor.eat(b'.')? {
        let table = cursor.quoted_identifier()?;
        Ok(TableRef {
            schema: Some(first),
            table,
        })
    } else {
        Ok(TableRef {
            schema: None,
            table: first,
        })
    }
}

/// The optional table alias after the table name: any unquoted word other than `next_keyword`
/// (and `where`, which may follow directly in a delete).
pub(crate) fn alias<'a>(
    cursor: &mut Cursor<'a>,
    next_keyword: &str,
) -> Result<Option<&'a str>, ParseError> {
    match cursor.peek_word()? {
        Some(word)
            if !word.eq_ignore_ascii_case(next_keyword) && !word.eq_ignore_ascii_case("where") =>
        {
            cursor.word()?;
            Ok(Some(word))
        }
        _ => Ok(None),
    }
}

/// A column in a set or where clause.
enum ColumnRef<'a> {
    Column(Cow<'a, str>),
    /// The bare `ROWID` pseudo-column.
    Rowid,
}

/// `"C"`, `a."C"`, `ROWID` or `a.ROWID`.
fn column_ref<'a>(
    cursor: &mut Cursor<'a>,
    alias: Option<&str>,
) -> Result<ColumnRef<'a>, ParseError> {
    if cursor.peek()? == Some(b'"') {
        return Ok(ColumnRef::Column(cursor.quoted_identifier()?));
    }
    let at = cursor.pos();
    let Some(word) = cursor.word()? else {
        return Err(cursor.error(ParseErrorKind::Expected("a quoted column name")));
    };
    if word.eq_ignore_ascii_case("rowid") {
        return Ok(ColumnRef::Rowid);
    }
    if !alias.is_some_and(|alias| alias.eq_ignore_ascii_case(word)) {
        return Err(cursor.error_at(ParseErrorKind::UnknownAlias, at));
    }
    cursor.expect(b'.', "`.` after the table alias")?;
    if cursor.peek()? == Some(b'"') {
        Ok(ColumnRef::Column(cursor.quoted_identifier()?))
    } else if cursor.eat_keyword("rowid")? {
        Ok(ColumnRef::Rowid)
    } else {
        Err(cursor.error(ParseErrorKind::Expected("a quoted column name")))
    }
}

/// A where clause after `where`: `"C" = v`, `"C" IS NULL` and `ROWID = '...'` joined by `and`.
/// Returns the columns in order and the rowid, if named.
pub(crate) fn conditions<'a>(
    cursor: &mut Cursor<'a>,
    alias: Option<&str>,
) -> Result<(Vec<ColumnValue<'a>>, Option<Cow<'a, str>>), ParseError> {
    let mut columns = Vec::with_capacity(COLUMNS_UP_FRONT);
    let mut rowid = None;
    loop {
        cursor.skip_trivia()?;
        let at = cursor.pos();
        match column_ref(cursor, alias)? {
            ColumnRef::Rowid => {
                cursor.expect(b'=', "`=` after ROWID")?;
                let value = cursor.string_literal()?;
                if rowid.replace(value).is_some() {
                    return Err(cursor.error_at(ParseErrorKind::DuplicateRowid, at));
                }
            }
            ColumnRef::Column(column) => {
                if cursor.eat(b'=')? {
                    columns.push((column, value(cursor, 0)?));
                } else if cursor.eat_keyword("is")? {
                    cursor.expect_keyword("null", "`NULL` after `IS`")?;
                    columns.push((column, RawValue::Null));
                } else {
                    return Err(cursor.error(ParseErrorKind::Expected("`=` or `IS NULL`")));
                }
            }
        }
        if !cursor.eat_keyword("and")? {
            break;
        }
    }
    Ok((columns, rowid))
}

/// A value: one term, or several text terms joined with `||`.
pub(crate) fn value<'a>(cursor: &mut Cursor<'a>, depth: usize) -> Result<RawValue<'a>, ParseError> {
    cursor.skip_trivia()?;
    let first_at = cursor.pos();
    let first = term(cursor, depth)?;
    if !cursor.eat_pair(b"||")? {
        return Ok(first);
    }
    // `a || b || ...`: text joins; Oracle treats a NULL operand as empty text.
    let mut joined = None;
    join(&mut joined, first, first_at, cursor)?;
    loop {
        cursor.skip_trivia()?;
        let at = cursor.pos();
        let part = term(cursor, depth)?;
        join(&mut joined, part, at, cursor)?;
        if !cursor.eat_pair(b"||")? {
            break;
        }
    }
    Ok(joined.map_or(RawValue::Null, |text| RawValue::Text(Cow::Owned(text))))
}

/// Appends one `||` operand (found at byte `at`) to the joined text: text is appended, `NULL`
/// adds nothing, anything else is an error.
fn join(
    joined: &mut Option<String>,
    part: RawValue<'_>,
    at: usize,
    cursor: &Cursor<'_>,
) -> Result<(), ParseError> {
    match part {
        RawValue::Text(text) => {
            joined.get_or_insert_with(String::new).push_str(&text);
            Ok(())
        }
        RawValue::Null => Ok(()),
        RawValue::Unsupported | RawValue::Call { .. } => {
            Err(cursor.error_at(ParseErrorKind::NonTextConcatenation, at))
        }
    }
}

/// One operand: a literal, `NULL`, a bare number, `Unsupported Type`, `UNISTR('...')` (decoded)
/// or any other call `NAME(args)`.
fn term<'a>(cursor: &mut Cursor<'a>, depth: usize) -> Result<RawValue<'a>, ParseError> {
    match cursor.peek()? {
        Some(b'\'') => return Ok(RawValue::Text(cursor.string_literal()?)),
        Some(b'0'..=b'9' | b'.' | b'-' | b'+') => {
            if let Some(number) = cursor.number()? {
                return Ok(RawValue::Text(Cow::Borrowed(number)));
            }
            return Err(cursor.error(ParseErrorKind::Expected("a value")));
        }
        _ => {}
    }
    cursor.skip_trivia()?;
    let at = cursor.pos();
    let Some(word) = cursor.word()? else {
        return Err(cursor.error(ParseErrorKind::Expected("a value")));
    };
    if word.eq_ignore_ascii_case("null") {
        return Ok(RawValue::Null);
    }
    if word.eq_ignore_ascii_case("unsupported") {
        cursor.expect_keyword("type", "`Type` after `Unsupported`")?;
        return Ok(RawValue::Unsupported);
    }
    if !cursor.eat(b'(')? {
        return Err(cursor.error_at(ParseErrorKind::Expected("a value"), at));
    }
    if word.eq_ignore_ascii_case("unistr") {
        let literal_at = cursor.pos();
        let encoded = cursor.string_literal()?;
        let decoded = super::unistr::decode(encoded)
            .ok_or_else(|| cursor.error_at(ParseErrorKind::InvalidUnistr, literal_at))?;
        cursor.expect(b')', "`)` after the UNISTR literal")?;
        return Ok(RawValue::Text(decoded));
    }
    if depth >= MAX_CALL_DEPTH {
        return Err(cursor.error_at(ParseErrorKind::NestingTooDeep(MAX_CALL_DEPTH), at));
    }
    let mut args = Vec::new();
    if !cursor.eat(b')')? {
        loop {
            args.push(value(cursor, depth + 1)?);
            if !cursor.eat(b',')? {
                break;
            }
        }
        cursor.expect(b')', "`,` or `)` in the argument list")?;
    }
    Ok(RawValue::Call {
        name: Cow::Borrowed(word),
        args,
    })
}
