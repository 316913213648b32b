//! The one error type of the SQL_REDO parsers: what went wrong, at which byte, near which text.

use std::fmt;

/// How many characters of the input an error quotes.
const EXCERPT_CHARS: usize = 24;

/// A SQL_REDO text that does not follow the grammar in the module docs of [`crate::redo`].
///
/// Read its [`ParseErrorDetail`] fields through `Deref` (`error.kind`, `error.offset`,
/// `error.excerpt`). The detail is boxed so that `Result<_, ParseError>` is one word wide: every
/// scanner step returns a `Result`, and a wide error type slowed the whole parser by a third.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(Box<ParseErrorDetail>);

/// What a [`ParseError`] says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseErrorDetail {
    pub kind: ParseErrorKind,
    /// Byte offset into the statement text where the parser stopped (on a character boundary).
    pub offset: usize,
    /// The text from `offset`: at most 24 characters, empty at the end of input.
    pub excerpt: String,
}

impl std::ops::Deref for ParseError {
    type Target = ParseErrorDetail;
    fn deref(&self) -> &ParseErrorDetail {
        &self.0
    }
}

impl ParseError {
    /// An error of `kind` at byte `offset` of `source` (clamped to the text, moved back to a
    /// character boundary).
    pub fn new(kind: ParseErrorKind, source: &str, offset: usize) -> Self {
        let mut offset = offset.min(source.len());
        while !source.is_char_boundary(offset) {
            offset -= 1;
        }
        let rest = source.get(offset..).unwrap_or_default();
        let excerpt = rest.chars().take(EXCERPT_CHARS).collect();
        Self(Box::new(ParseErrorDetail {
            kind,
            offset,
            excerpt,
        }))
    }
}

impl fmt::Display for ParseErrorDetail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.excerpt.is_empty() {
            write!(f, "{} at byte {} (end of input)", self.kind, self.offset)
        } else {
            write!(
                f,
                "{} at byte {} near {:?}",
                self.kind, self.offset, self.excerpt
            )
        }
    }
}

/// What kind of mistake the parser found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseErrorKind {
    /// The next token is not one the grammar allows here; names what was expected.
    #[error("expected {0}")]
    Expected(&'static str),
    /// A `'...'` literal without its closing quote.
    #[error("unterminated string literal")]
    UnterminatedString,
    /// A `"..."` identifier without its closing quote.
    #[error("unterminated quoted identifier")]
    UnterminatedIdentifier,
    /// A `/* ...` comment without `*/`.
    #[error("unterminated comment")]
    UnterminatedComment,
    /// An insert whose column list and value list differ in length.
    #[error("{values} values for {columns} columns")]
    ValueCountMismatch { columns: usize, values: usize },
    /// `UNISTR('...')` with a bad `\XXXX` escape or an unpaired UTF-16 surrogate.
    #[error("invalid UNISTR escape")]
    InvalidUnistr,
    /// Function calls nested deeper than the parser allows (it would otherwise recurse without
    /// bound on hostile input).
    #[error("function calls nested deeper than {0}")]
    NestingTooDeep(usize),
    /// `||` joins something other than text (a literal, `UNISTR(..)`, a number or `NULL`).
    #[error("`||` joins a value that is not text")]
    NonTextConcatenation,
    /// `x."C"` where `x` is not the alias given after the table name.
    #[error("unknown table alias")]
    UnknownAlias,
    /// A where clause with two `ROWID = '...'` predicates.
    #[error("ROWID given twice")]
    DuplicateRowid,
    /// A number (LOB amount, offset, length) that is not a non-negative integer fitting 64 bits.
    #[error("invalid integer")]
    InvalidInteger,
    /// Text after the end of the statement (after the optional `;`).
    #[error("unexpected text after the statement")]
    TrailingText,
    /// A statement of a kind the parser does not handle.
    #[error("not {0}")]
    UnknownStatement(&'static str),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_is_cut_at_a_character_boundary() {
        let source = "ab€cd";
        // Byte 3 is inside the euro sign (bytes 2..5).
        let error = ParseError::new(ParseErrorKind::TrailingText, source, 3);
        assert_eq!(error.offset, 2);
        assert_eq!(error.excerpt, "€cd");
    }

    #[test]
    fn display_names_the_offset_and_the_excerpt() {
        let error = ParseError::new(ParseErrorKind::Expected("`values`"), "abc", 1);
        assert_eq!(error.to_string(), "expected `values` at byte 1 near \"bc\"");
        let at_end = ParseError::new(ParseErrorKind::UnterminatedString, "abc", 9);
        assert_eq!(
            at_end.to_string(),
            "unterminated string literal at byte 3 (end of input)"
        );
    }
}
