//! The fast path of [`super::parse_dml`]: the exact text LogMiner writes, read without the general
//! grammar's trivia skipping, case folding and error plumbing.
//!
//! ```text
//! insert into "S"."T"("A","B") values ('1',NULL);
//! update "S"."T" set "A" = '1', "B" = TO_DATE('..', '..') where "A" = '0' and "B" IS NULL and ROWID = '..';
//! delete from "S"."T" where "A" = '1' and ROWID = '..';
//! ```
//!
//! It accepts a subset of the general grammar ([`super::parse`]): keywords in LogMiner's spelling,
//! single spaces where LogMiner writes them, values that are literals, `NULL` or one-level calls
//! of literals and `NULL`. On anything else (comments, other spacing, `||`, `UNISTR`, bare
//! numbers, aliases, errors) it returns `None` and `parse_dml` runs the general grammar, so a
//! statement parses to the same [`DmlStatement`] either way (property-tested below).
//! Quotes are read by the same [`scan_quoted`] as the general grammar's.
//!
//! The shape is LogMiner's as documented in `DBMS_LOGMNR`'s examples (lower-case keywords, quoted
//! owner and table, `"C" = 'v'` pairs joined by ` and `, `IS NULL`, a trailing `ROWID` predicate)
//! and as Debezium's `LogMinerDmlParser` expects it, whose own fast scan assumes the same
//! spelling; anything LogMiner writes differently still parses, by the general grammar.

use std::borrow::Cow;

use super::ast::{COLUMNS_UP_FRONT, ColumnValue, DmlStatement, RawValue, TableRef};
use super::lex::{is_word_byte, scan_quoted};

/// `sql` as a statement, when it is in the exact shape LogMiner writes. The statement rules are
/// inlined into this function, and it into `parse_dml`: returned from calls, the statement and
/// its table went through the stack and stalled the loads that copied them on.
#[inline(always)]
pub(crate) fn parse(sql: &str) -> Option<DmlStatement<'_>> {
    let mut scan = Scan {
        source: sql,
        bytes: sql.as_bytes(),
        pos: 0,
    };
    match sql.as_bytes().first()? {
        b'i' => {
            scan.token(b"insert into ")?;
            scan.insert()
        }
        b'u' => {
            scan.token(b"update ")?;
            scan.update()
        }
        b'd' => {
            scan.token(b"delete from ")?;
            scan.delete()
        }
        _ => None,
    }
}

struct Scan<'a> {
    source: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Scan<'a> {
    /// The general grammar's end: an optional `;`, then nothing (trailing trivia goes the slow
    /// way). Checked by each rule before it builds its statement, so the statement is built once,
    /// in place.
    #[inline(always)]
    fn finish(&mut self) -> Option<()> {
        self.eat(b';');
        (self.pos == self.bytes.len()).then_some(())
    }

    /// Consumes `text` if it comes next, exactly.
    #[inline]
    fn eat_bytes(&mut self, text: &[u8]) -> bool {
        let found = self
            .bytes
            .get(self.pos..)
            .is_some_and(|rest| rest.starts_with(text));
        if found {
            self.pos += text.len();
        }
        found
    }

    /// Consumes `text`, or gives up on the fast path.
    #[inline]
    fn token(&mut self, text: &[u8]) -> Option<()> {
        self.eat_bytes(text).then_some(())
    }

    #[inline]
    fn eat(&mut self, byte: u8) -> bool {
        let found = self.bytes.get(self.pos) == Some(&byte);
        if found {
            self.pos += 1;
        }
        found
    }

    /// A list separator: `,` and any spaces after it (LogMiner writes `, ` in SET and calls).
    #[inline]
    fn separator(&mut self) -> bool {
        if !self.eat(b',') {
            return false;
        }
        while self.eat(b' ') {}
        true
    }

    /// A `quote`d name or literal starting here. Inlined with [`Self::value`] into each list
    /// loop: as calls, their results went through the stack and stalled the loads after them.
    #[inline(always)]
    fn quoted(&mut self, quote: u8) -> Option<Cow<'a, str>> {
        if self.bytes.get(self.pos) != Some(&quote) {
            return None;
        }
        scan_quoted(self.source, &mut self.pos, quote)
    }

    /// The unquoted word starting here (possibly empty).
    #[inline]
    fn word(&mut self) -> Option<&'a str> {
        let start = self.pos;
        while self.bytes.get(self.pos).copied().is_some_and(is_word_byte) {
            self.pos += 1;
        }
        self.source.get(start..)?.get(..self.pos - start)
    }

    #[inline(always)]
    fn table(&mut self) -> Option<TableRef<'a>> {
        let first = self.quoted(b'"')?;
        Some(if self.eat(b'.') {
            TableRef {
                schema: Some(first),
                table: self.quoted(b'"')?,
            }
        } else {
            TableRef {
                schema: None,
                table: first,
            }
        })
    }

    /// `TABLE("A","B") values ('1','2')` after `insert into `.
    #[inline(always)]
    fn insert(&mut self) -> Option<DmlStatement<'a>> {
        let table = self.table()?;
        self.token(b"(")?;
        // A slot for each pair of quotes before the first `)`: exact for LogMiner's names (a name
        // holding `"` or `)` only makes it a guess), so wide inserts do not grow the vector.
        let names = self
            .bytes
            .get(self.pos..)?
            .iter()
            .take_while(|&&byte| byte != b')')
            .filter(|&&byte| byte == b'"')
            .count()
            / 2;
        let mut values: Vec<ColumnValue<'a>> = Vec::with_capacity(names);
        loop {
            values.push((self.quoted(b'"')?, RawValue::Null));
            if !self.separator() {
                break;
            }
        }
        self.token(b") values (")?;
        // As many values as columns, or the general grammar reports the mismatch.
        for (index, (_, value)) in values.iter_mut().enumerate() {
            if index > 0 && !self.separator() {
                return None;
            }
            *value = self.value()?;
        }
        self.token(b")")?;
        self.finish()?;
        Some(DmlStatement::Insert { table, values })
    }

    /// `TABLE set "A" = '1', ... [where ...]` after `update `.
    #[inline(always)]
    fn update(&mut self) -> Option<DmlStatement<'a>> {
        let table = self.table()?;
        self.token(b" set ")?;
        let mut set = Vec::with_capacity(COLUMNS_UP_FRONT);
        loop {
            let column = self.quoted(b'"')?;
            self.token(b" = ")?;
            set.push((column, self.value()?));
            if !self.separator() {
                break;
            }
        }
        let (where_, rowid) = self.where_clause()?;
        self.finish()?;
        Some(DmlStatement::Update {
            table,
            set,
            where_,
            rowid,
        })
    }

    /// `TABLE [where ...]` after `delete from `.
    #[inline(always)]
    fn delete(&mut self) -> Option<DmlStatement<'a>> {
        let table = self.table()?;
        let (where_, rowid) = self.where_clause()?;
        self.finish()?;
        Some(DmlStatement::Delete {
            table,
            where_,
            rowid,
        })
    }

    /// ` where "A" = '1' and "B" IS NULL and ROWID = '..'`, or nothing.
    #[allow(clippy::type_complexity)]
    fn where_clause(&mut self) -> Option<(Vec<ColumnValue<'a>>, Option<Cow<'a, str>>)> {
        if !self.eat_bytes(b" where ") {
            return Some((Vec::new(), None));
        }
        let mut columns = Vec::with_capacity(COLUMNS_UP_FRONT);
        let mut rowid = None;
        loop {
            if self.eat_bytes(b"ROWID = ") {
                // A second ROWID is an error the general grammar reports.
                if rowid.replace(self.quoted(b'\'')?).is_some() {
                    return None;
                }
            } else {
                let column = self.quoted(b'"')?;
                let value = if self.eat_bytes(b" = ") {
                    self.value()?
                } else {
                    self.token(b" IS NULL")?;
                    RawValue::Null
                };
                columns.push((column, value));
            }
            if !self.eat_bytes(b" and ") {
                break;
            }
        }
        Some((columns, rowid))
    }

    /// A literal, `NULL`, or a call whose arguments are literals or `NULL`. What follows is left
    /// to the caller, which accepts only a separator or keyword LogMiner writes there (so `||`
    /// sends the statement the general way).
    #[inline(always)]
    fn value(&mut self) -> Option<RawValue<'a>> {
        let byte = *self.bytes.get(self.pos)?;
        if byte == b'\'' {
            return Some(RawValue::Text(self.quoted(b'\'')?));
        }
        if !byte.is_ascii_alphabetic() {
            return None;
        }
        let name = self.word()?;
        if name.eq_ignore_ascii_case("null") {
            return Some(RawValue::Null);
        }
        if name.eq_ignore_ascii_case("unistr") || name.eq_ignore_ascii_case("unsupported") {
            return None;
        }
        self.token(b"(")?;
        let mut args = Vec::with_capacity(2);
        if !self.eat(b')') {
            loop {
                args.push(self.argument()?);
                if !self.separator() {
                    break;
                }
            }
            self.token(b")")?;
        }
        Some(RawValue::Call {
            name: Cow::Borrowed(name),
            args,
        })
    }

    /// A call argument: a literal or `NULL` (nested calls go the general way).
    #[inline]
    fn argument(&mut self) -> Option<RawValue<'a>> {
        if self.bytes.get(self.pos) == Some(&b'\'') {
            return Some(RawValue::Text(self.quoted(b'\'')?));
        }
        self.word()?
            .eq_ignore_ascii_case("null")
            .then_some(RawValue::Null)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use proptest::prelude::*;

    use super::super::parse::parse_general;
    use super::*;

    /// A value as LogMiner writes it, and whether the fast path reads it.
    fn value() -> impl Strategy<Value = (String, bool)> {
        let literal = "[a-zA-Z0-9 '\"é,()|/*=;]{0,10}"
            .prop_map(|text| (format!("'{}'", text.replace('\'', "''")), true));
        prop_oneof![
            4 => literal,
            1 => Just(("NULL".to_owned(), true)),
            1 => Just(("null".to_owned(), true)),
            1 => Just(("TO_DATE('2024-01-02 03:04:05', 'YYYY-MM-DD HH24:MI:SS')".to_owned(), true)),
            1 => Just(("TO_TIMESTAMP('2024-01-02 03:04:05.123')".to_owned(), true)),
            1 => Just(("EMPTY_CLOB()".to_owned(), true)),
            1 => Just(("HEXTORAW(NULL,'ab')".to_owned(), true)),
            1 => Just(("UNISTR('\\00e9')".to_owned(), false)),
            1 => Just(("'a' || 'b'".to_owned(), false)),
            1 => Just(("42".to_owned(), false)),
            1 => Just(("Unsupported Type".to_owned(), false)),
            1 => Just(("TO_CHAR(TO_DATE('x'))".to_owned(), false)),
            1 => Just(("NULLX".to_owned(), false)),
        ]
    }

    fn name() -> impl Strategy<Value = String> {
        prop_oneof![
            "[A-Z][A-Z0-9_#$]{0,6}",
            "[a-z ']{0,4}",
            Just("A\"\"B".to_owned()),
            Just("ROWID".to_owned()),
        ]
        .prop_map(|name| format!("\"{name}\""))
    }

    fn table() -> impl Strategy<Value = String> {
        (prop::option::weighted(0.8, name()), name()).prop_map(|(schema, table)| match schema {
            Some(schema) => format!("{schema}.{table}"),
            None => table,
        })
    }

    /// `"C" = v` / `"C" IS NULL` / `ROWID = '..'` conditions joined by ` and `.
    fn where_clause() -> impl Strategy<Value = (String, bool)> {
        let condition = prop_oneof![
            4 => (name(), value()).prop_map(|(name, (value, fast))| (format!("{name} = {value}"), fast)),
            1 => name().prop_map(|name| (format!("{name} IS NULL"), true)),
            1 => Just(("ROWID = 'AAAS5KAAEAAAAGFAAA'".to_owned(), true)),
        ];
        prop::collection::vec(condition, 0..5).prop_map(|conditions| {
            if conditions.is_empty() {
                return (String::new(), true);
            }
            let rowids = conditions
                .iter()
                .filter(|(c, _)| c.starts_with("ROWID"))
                .count();
            let fast = rowids < 2 && conditions.iter().all(|(_, fast)| *fast);
            let joined: Vec<String> = conditions.into_iter().map(|(c, _)| c).collect();
            (format!(" where {}", joined.join(" and ")), fast)
        })
    }

    /// A statement in LogMiner's spelling and whether the fast path must read it.
    fn statement() -> impl Strategy<Value = (String, bool)> {
        let columns = || prop::collection::vec((name(), value()), 1..5);
        prop_oneof![
            (table(), columns(), 0..2usize).prop_map(|(table, columns, extra)| {
                let names: Vec<&str> = columns.iter().map(|(name, _)| name.as_str()).collect();
                let mut values: Vec<&str> = columns
                    .iter()
                    .map(|(_, (value, _))| value.as_str())
                    .collect();
                // Sometimes one value too many or too few.
                match extra {
                    0 => {}
                    _ if values.len() > 1 => {
                        values.pop();
                    }
                    _ => values.push("'x'"),
                }
                let fast = extra == 0 && columns.iter().all(|(_, (_, fast))| *fast);
                let sql = format!(
                    "insert into {table}({}) values ({})",
                    names.join(","),
                    values.join(",")
                );
                (sql, fast)
            }),
            (table(), columns(), where_clause()).prop_map(|(table, set, (where_, where_fast))| {
                let fast = where_fast && set.iter().all(|(_, (_, fast))| *fast);
                let assignments: Vec<String> = set
                    .iter()
                    .map(|(name, (value, _))| format!("{name} = {value}"))
                    .collect();
                let sql = format!("update {table} set {}{where_}", assignments.join(", "));
                (sql, fast)
            }),
            (table(), where_clause()).prop_map(|(table, (where_, fast))| {
                (format!("delete from {table}{where_}"), fast)
            }),
        ]
        .prop_flat_map(|(sql, fast)| (Just(sql), Just(fast), any::<bool>()))
        .prop_map(|(sql, fast, semicolon)| {
            if semicolon {
                (format!("{sql};"), fast)
            } else {
                (sql, fast)
            }
        })
    }

    /// One edit: insert, replace or delete a byte at a position (as a fraction of the length).
    fn edit() -> impl Strategy<Value = Option<(u8, f64, u8)>> {
        let byte = prop_oneof![
            Just(b' '),
            Just(b'\''),
            Just(b'"'),
            Just(b','),
            Just(b'('),
            Just(b')'),
            Just(b';'),
            Just(b'|'),
            Just(b'/'),
            Just(b'*'),
            Just(b'.'),
            Just(b'a'),
            Just(b'N'),
            Just(b'\n'),
            Just(b'='),
        ];
        prop::option::weighted(0.7, (0u8..3, 0.0..1.0f64, byte))
    }

    fn apply(sql: &str, (kind, at, byte): (u8, f64, u8)) -> Option<String> {
        let mut bytes = sql.as_bytes().to_vec();
        let at = ((bytes.len() as f64) * at) as usize;
        match kind {
            0 => bytes.insert(at.min(bytes.len()), byte),
            1 if at < bytes.len() => bytes[at] = byte,
            _ if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => return None,
        }
        String::from_utf8(bytes).ok()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        /// Whatever the fast path reads, the general grammar reads the same; and it reads every
        /// unedited statement in LogMiner's spelling that the general grammar accepts.
        #[test]
        fn the_fast_path_agrees_with_the_general_grammar(
            (sql, fast) in statement(),
            edit in edit(),
        ) {
            let edited = edit.and_then(|edit| apply(&sql, edit));
            let sql = edited.clone().unwrap_or(sql);
            let general = parse_general(&sql);
            match parse(&sql) {
                Some(statement) => prop_assert_eq!(Ok(statement), general, "{}", sql),
                None => prop_assert!(
                    edited.is_some() || !fast || general.is_err(),
                    "fast path refused {}", sql
                ),
            }
        }
    }

    #[test]
    fn the_bench_shapes_take_the_fast_path() {
        for sql in [
            "insert into \"BENCH\".\"T\"(\"C1\",\"C2\") values ('1',NULL);",
            "update \"BENCH\".\"T\" set \"C2\" = 'O''Brien', \"C3\" = TO_DATE('2024-01-02 03:04:05', 'YYYY-MM-DD HH24:MI:SS') where \"C1\" = '1' and \"C2\" IS NULL and ROWID = 'AAAS5KAAEAAAAGFAAA';",
            "delete from \"BENCH\".\"T\" where \"C1\" = TO_TIMESTAMP('2024-01-02 03:04:05.000001') and ROWID = 'AAAS5KAAEAAAAGFAAA';",
        ] {
            assert_eq!(parse(sql), Some(parse_general(sql).unwrap()), "{sql}");
        }
    }
}
