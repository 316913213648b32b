//! The scanner under every SQL_REDO parser: a byte cursor over the statement text.
//!
//! It never allocates for a token: identifiers, words and numbers are slices of the input, and a
//! string literal is a slice unless it holds a `''` escape (then it is unescaped into a `String`).
//! Every method that reads a token first skips trivia (whitespace and `/* ... */` comments), so
//! the grammar code never sees either. Decisions are made on ASCII bytes only; a multi-byte UTF-8
//! sequence can only be inside a literal, an identifier or a comment, so every slice taken is on a
//! character boundary.
//!
//! The small methods are `#[inline]`: the parser calls them per token from other codegen units.

use std::borrow::Cow;

use super::error::{ParseError, ParseErrorKind};

/// A position in one statement's text.
#[derive(Clone, Debug)]
pub(crate) struct Cursor<'a> {
    source: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

/// Bytes that may appear in an unquoted word (`insert`, `TO_DATE`, `loc_c`, `a`, `OBJ#`).
#[inline]
pub(crate) fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'$' | b'#')
}

#[inline]
fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// The quoted text that opens at byte `*pos` of `source` (`quote` is there): its body with each
/// doubled quote read as one; `*pos` moves past the closing quote. `None` (and `*pos` unmoved)
/// when it never closes. Borrows when there is no doubled quote. Shared by [`Cursor`] and the fast
/// path (`super::fast`) so that both read quotes alike. The position is updated in place rather
/// than returned beside the text: a returned pair went through the stack and stalled the loads
/// after it.
#[inline(always)]
pub(crate) fn scan_quoted<'a>(source: &'a str, pos: &mut usize, quote: u8) -> Option<Cow<'a, str>> {
    let body_start = *pos + 1;
    // Sliced from each end in turn: `str::get` with a two-ended range was not inlined.
    let rest = source.get(body_start..)?;
    let length = find_byte(rest.as_bytes(), quote)?;
    let at = body_start + length;
    if source.as_bytes().get(at + 1) == Some(&quote) {
        let (text, end) = scan_doubled(source, body_start, at, quote)?;
        *pos = end;
        return Some(text);
    }
    // Both ends are next to an ASCII quote, so on character boundaries.
    let body = rest.get(..length)?;
    *pos = at + 1;
    Some(Cow::Borrowed(body))
}

/// The rest of [`scan_quoted`] once a doubled quote is found at `first`: kept out of line so the
/// common borrowed case stays small enough to inline.
#[inline(never)]
fn scan_doubled(
    source: &str,
    body_start: usize,
    first: usize,
    quote: u8,
) -> Option<(Cow<'_, str>, usize)> {
    let bytes = source.as_bytes();
    let mut index = first + 2;
    let close = loop {
        let at = index + find_byte(bytes.get(index..)?, quote)?;
        if bytes.get(at + 1) == Some(&quote) {
            index = at + 2;
        } else {
            break at;
        }
    };
    // Every quote inside the body is the first of a pair: keep it, drop its partner.
    let body = source.get(body_start..close)?;
    let mut text = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = find_byte(rest.as_bytes(), quote) {
        text.push_str(rest.get(..=at)?);
        rest = rest.get(at + 2..)?;
    }
    text.push_str(rest);
    Some((Cow::Owned(text), close + 1))
}

/// The first `byte` in `haystack`. Names and most values close within a few bytes, where a plain
/// loop beats the call and dispatch of `memchr`; longer text goes to `memchr`.
#[inline(always)]
pub(crate) fn find_byte(haystack: &[u8], byte: u8) -> Option<usize> {
    const SHORT: usize = 16;
    match haystack.split_at_checked(SHORT) {
        None => haystack.iter().position(|&b| b == byte),
        Some((head, tail)) => head
            .iter()
            .position(|&b| b == byte)
            .or_else(|| memchr::memchr(byte, tail).map(|at| SHORT + at)),
    }
}

impl<'a> Cursor<'a> {
    #[inline]
    pub(crate) fn new(source: &'a str) -> Self {
        Self {
            source,
            bytes: source.as_bytes(),
            pos: 0,
        }
    }

    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// An error of `kind` at the current position.
    pub(crate) fn error(&self, kind: ParseErrorKind) -> ParseError {
        ParseError::new(kind, self.source, self.pos)
    }

    /// An error of `kind` at byte `offset`.
    pub(crate) fn error_at(&self, kind: ParseErrorKind, offset: usize) -> ParseError {
        ParseError::new(kind, self.source, offset)
    }

    /// Skips whitespace and `/* ... */` comments.
    #[inline]
    pub(crate) fn skip_trivia(&mut self) -> Result<(), ParseError> {
        loop {
            match self.bytes.get(self.pos) {
                Some(&byte) if is_space(byte) => self.pos += 1,
                Some(b'/') if self.bytes.get(self.pos + 1) == Some(&b'*') => {
                    let start = self.pos;
                    let body = self.bytes.get(start + 2..).unwrap_or_default();
                    match body.windows(2).position(|pair| pair == b"*/") {
                        Some(end) => self.pos = start + 2 + end + 2,
                        None => {
                            return Err(self.error_at(ParseErrorKind::UnterminatedComment, start));
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// The next byte after trivia, not consumed.
    #[inline]
    pub(crate) fn peek(&mut self) -> Result<Option<u8>, ParseError> {
        self.skip_trivia()?;
        Ok(self.bytes.get(self.pos).copied())
    }

    /// True when only trivia is left.
    #[inline]
    pub(crate) fn at_end(&mut self) -> Result<bool, ParseError> {
        Ok(self.peek()?.is_none())
    }

    /// Consumes `byte` if it comes next (after trivia).
    #[inline]
    pub(crate) fn eat(&mut self, byte: u8) -> Result<bool, ParseError> {
        if self.peek()? == Some(byte) {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Consumes `byte` or fails with "expected `what`".
    #[inline]
    pub(crate) fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), ParseError> {
        if self.eat(byte)? {
            Ok(())
        } else {
            Err(self.error(ParseErrorKind::Expected(what)))
        }
    }

    /// Consumes the two bytes `pair` if they come next (after trivia).
    #[inline]
    pub(crate) fn eat_pair(&mut self, pair: &[u8; 2]) -> Result<bool, ParseError> {
        self.skip_trivia()?;
        if self.bytes.get(self.pos..self.pos + 2) == Some(pair.as_slice()) {
            self.pos += 2;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// True when the next word (after trivia) is `keyword`, compared ignoring ASCII case.
    #[inline]
    pub(crate) fn peek_keyword(&mut self, keyword: &str) -> Result<bool, ParseError> {
        self.skip_trivia()?;
        let end = self.pos + keyword.len();
        let matches = self
            .bytes
            .get(self.pos..end)
            .is_some_and(|word| word.eq_ignore_ascii_case(keyword.as_bytes()))
            && !self.bytes.get(end).copied().is_some_and(is_word_byte);
        Ok(matches)
    }

    /// Consumes the word `keyword` (ignoring ASCII case) if it comes next.
    #[inline]
    pub(crate) fn eat_keyword(&mut self, keyword: &str) -> Result<bool, ParseError> {
        if self.peek_keyword(keyword)? {
            self.pos += keyword.len();
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Consumes the word `keyword` or fails with "expected `what`".
    #[inline]
    pub(crate) fn expect_keyword(
        &mut self,
        keyword: &str,
        what: &'static str,
    ) -> Result<(), ParseError> {
        if self.eat_keyword(keyword)? {
            Ok(())
        } else {
            Err(self.error(ParseErrorKind::Expected(what)))
        }
    }

    /// The next unquoted word, not consumed (`None` when the next token is not a word).
    #[inline]
    pub(crate) fn peek_word(&mut self) -> Result<Option<&'a str>, ParseError> {
        self.skip_trivia()?;
        let start = self.pos;
        let mut end = start;
        while self.bytes.get(end).copied().is_some_and(is_word_byte) {
            end += 1;
        }
        Ok(if end > start {
            self.source.get(start..end)
        } else {
            None
        })
    }

    /// Consumes and returns the next unquoted word, if one comes next.
    #[inline]
    pub(crate) fn word(&mut self) -> Result<Option<&'a str>, ParseError> {
        let word = self.peek_word()?;
        if let Some(word) = word {
            self.pos += word.len();
        }
        Ok(word)
    }

    /// A `"..."` identifier, returned without its quotes (`""` inside stands for one `"`).
    #[inline]
    pub(crate) fn quoted_identifier(&mut self) -> Result<Cow<'a, str>, ParseError> {
        if self.peek()? != Some(b'"') {
            return Err(self.error(ParseErrorKind::Expected("a quoted name")));
        }
        self.quoted(b'"', ParseErrorKind::UnterminatedIdentifier)
    }

    /// A `'...'` literal, returned without its quotes and with `''` unescaped.
    #[inline]
    pub(crate) fn string_literal(&mut self) -> Result<Cow<'a, str>, ParseError> {
        if self.peek()? != Some(b'\'') {
            return Err(self.error(ParseErrorKind::Expected("a quoted literal")));
        }
        self.quoted(b'\'', ParseErrorKind::UnterminatedString)
    }

    /// Reads from the opening `quote` (at `pos`) to its closing partner (see [`scan_quoted`]).
    #[inline]
    fn quoted(
        &mut self,
        quote: u8,
        unterminated: ParseErrorKind,
    ) -> Result<Cow<'a, str>, ParseError> {
        match scan_quoted(self.source, &mut self.pos, quote) {
            Some(text) => Ok(text),
            None => Err(self.error(unterminated)),
        }
    }

    /// `source[start..end]`; both ends are next to ASCII bytes, so on character boundaries.
    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.source.get(start..end).unwrap_or_default()
    }

    /// A bare number (`42`, `-1.5`, `.05`, `1e10`), if one comes next.
    #[inline]
    pub(crate) fn number(&mut self) -> Result<Option<&'a str>, ParseError> {
        self.skip_trivia()?;
        let start = self.pos;
        let mut end = start;
        if matches!(self.bytes.get(end), Some(b'-' | b'+')) {
            end += 1;
        }
        let digits_start = end;
        let mut digits = 0;
        while let Some(byte) = self.bytes.get(end) {
            match byte {
                b'0'..=b'9' => digits += 1,
                b'.' if !self.bytes[digits_start..end].contains(&b'.') => {}
                _ => break,
            }
            end += 1;
        }
        if digits == 0 {
            return Ok(None);
        }
        if matches!(self.bytes.get(end), Some(b'e' | b'E')) {
            let mut exponent_end = end + 1;
            if matches!(self.bytes.get(exponent_end), Some(b'-' | b'+')) {
                exponent_end += 1;
            }
            let exponent_digits_start = exponent_end;
            while self.bytes.get(exponent_end).is_some_and(u8::is_ascii_digit) {
                exponent_end += 1;
            }
            if exponent_end > exponent_digits_start {
                end = exponent_end;
            }
        }
        if self.bytes.get(end).copied().is_some_and(is_word_byte) {
            // `12abc` is not a number.
            return Ok(None);
        }
        self.pos = end;
        Ok(Some(self.slice(start, end)))
    }

    /// A non-negative integer that fits 64 bits (LOB amounts, offsets and lengths).
    pub(crate) fn unsigned(&mut self, what: &'static str) -> Result<u64, ParseError> {
        self.skip_trivia()?;
        let start = self.pos;
        let mut end = start;
        while self.bytes.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        if end == start {
            return Err(self.error(ParseErrorKind::Expected(what)));
        }
        let value = self
            .slice(start, end)
            .parse::<u64>()
            .map_err(|_| self.error_at(ParseErrorKind::InvalidInteger, start))?;
        self.pos = end;
        Ok(value)
    }

    /// Skips one token of any kind (used to step over PL/SQL declarations).
    pub(crate) fn skip_token(&mut self) -> Result<(), ParseError> {
        match self.peek()? {
            None => Ok(()),
            Some(b'\'') => self.string_literal().map(drop),
            Some(b'"') => self.quoted_identifier().map(drop),
            Some(byte) if is_word_byte(byte) => self.word().map(drop),
            Some(byte) if byte.is_ascii() => {
                self.pos += 1;
                Ok(())
            }
            Some(_) => Err(self.error(ParseErrorKind::Expected("a declaration"))),
        }
    }

    /// Ends a statement: an optional `;`, then nothing but trivia.
    #[inline]
    pub(crate) fn finish(&mut self) -> Result<(), ParseError> {
        self.eat(b';')?;
        if self.at_end()? {
            Ok(())
        } else {
            Err(self.error(ParseErrorKind::TrailingText))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_without_escapes_borrows() {
        let mut cursor = Cursor::new("  'plain text' rest");
        let literal = cursor.string_literal().unwrap();
        assert!(matches!(literal, Cow::Borrowed("plain text")));
        assert_eq!(cursor.pos(), 14);
    }

    #[test]
    fn doubled_quotes_are_unescaped() {
        let mut cursor = Cursor::new("'Bob''s dog''s ''bone'''");
        let literal = cursor.string_literal().unwrap();
        assert!(matches!(literal, Cow::Owned(_)));
        assert_eq!(literal, "Bob's dog's 'bone'");
        assert!(cursor.at_end().unwrap());
    }

    #[test]
    fn comments_are_trivia() {
        let mut cursor = Cursor::new("/* JSON */ /**/\n  EMPTY_BLOB");
        assert_eq!(cursor.word().unwrap(), Some("EMPTY_BLOB"));
        let mut open = Cursor::new("  /* never closed");
        let error = open.peek().unwrap_err();
        assert_eq!(error.kind, ParseErrorKind::UnterminatedComment);
        assert_eq!(error.offset, 2);
    }

    #[test]
    fn keywords_ignore_case_and_respect_word_ends() {
        let mut cursor = Cursor::new("InSeRt into");
        assert!(cursor.eat_keyword("insert").unwrap());
        assert!(!cursor.peek_keyword("in").unwrap());
        assert!(cursor.eat_keyword("INTO").unwrap());
    }

    #[test]
    fn numbers() {
        for (text, expected) in [
            ("42", Some("42")),
            ("-1.5,", Some("-1.5")),
            (".05)", Some(".05")),
            ("1e10", Some("1e10")),
            ("12abc", None),
            ("-", None),
            (".", None),
        ] {
            assert_eq!(Cursor::new(text).number().unwrap(), expected, "{text}");
        }
    }
}
