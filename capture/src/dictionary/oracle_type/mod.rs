//! Oracle column types, parsed from the type strings of the data dictionary, DDL and scenario
//! files (`NUMBER(10)`, `VARCHAR2(30 CHAR)`, `TIMESTAMP(3) WITH TIME ZONE`, ...).
//!
//! Parsing is case-insensitive and tolerant of spacing; the ANSI synonyms Oracle itself accepts
//! are mapped to the type Oracle stores (`INTEGER` is `NUMBER(*,0)`, `DOUBLE PRECISION` is
//! `FLOAT(126)`, `VARCHAR` is `VARCHAR2`). Ranges are Oracle's: a declaration Oracle would refuse is
//! an [`OracleTypeError`], never a silently clamped type. [`OracleType`]'s `Display` writes the
//! canonical form, which parses back to the same value.
//!
//! | written | parsed as |
//! |---|---|
//! | `NUMBER` | `Number { precision: None, scale: None }` (floating decimal) |
//! | `NUMBER(p)` / `NUMBER(p,s)` | precision 1..=38, scale -84..=127 (`NUMBER(p)` has scale 0) |
//! | `NUMBER(*,s)`, `INTEGER`, `INT`, `SMALLINT`, `DECIMAL`, `NUMERIC` | precision `None` (38), scale `s` / 0 |
//! | `FLOAT[(b)]`, `REAL`, `DOUBLE PRECISION` | binary precision 1..=126 (default 126; `REAL` 63) |
//! | `CHAR[(n [BYTE\|CHAR])]`, `NCHAR[(n)]` | length default 1 |
//! | `VARCHAR2(n [BYTE\|CHAR])`, `VARCHAR(n)`, `NVARCHAR2(n)` | length required |
//! | `TIMESTAMP[(f)] [WITH [LOCAL] TIME ZONE]` | fractional precision 0..=9, default 6 |
//! | `INTERVAL YEAR[(p)] TO MONTH`, `INTERVAL DAY[(p)] TO SECOND[(f)]` | p, f 0..=9, defaults 2 and 6 |
//! | `RAW(n)`, `LONG RAW`, `LONG`, `BLOB`, `CLOB`, `NCLOB`, `DATE`, `ROWID`, `UROWID[(n)]`, `XMLTYPE`, `BINARY_FLOAT`, `BINARY_DOUBLE` | as written (`SYS.XMLTYPE` too) |
//! | `JSON` (21c), `BOOLEAN` (23ai) | as written |
//! | any other name (`SDO_GEOMETRY`, `VECTOR`, object types) | an error; [`OracleType::parse_catalog`] keeps it as `Unsupported` |

use std::fmt;

/// Whether a character length counts bytes or characters (`VARCHAR2(10 BYTE)` / `(10 CHAR)`).
/// `Default` is the database's `NLS_LENGTH_SEMANTICS` (usually bytes), kept distinct so the
/// canonical form round-trips.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LengthSemantics {
    Default,
    Byte,
    Char,
}

/// The kind of LOB a column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LobKind {
    Clob,
    NClob,
    Blob,
}

/// An Oracle column type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum OracleType {
    /// `NUMBER`: `precision` `None` means 38 digits (`NUMBER(*,s)`, `INTEGER`) or, with `scale`
    /// `None` too, Oracle's floating decimal `NUMBER`.
    Number {
        precision: Option<u8>,
        scale: Option<i8>,
    },
    /// `FLOAT(b)`: a NUMBER with a binary precision, decimal text in the redo.
    Float {
        binary_precision: u8,
    },
    BinaryFloat,
    BinaryDouble,
    Char {
        length: u32,
        semantics: LengthSemantics,
    },
    NChar {
        length: u32,
    },
    Varchar2 {
        length: u32,
        semantics: LengthSemantics,
    },
    NVarchar2 {
        length: u32,
    },
    /// `LONG`: character data up to 2 GB.
    Long,
    Clob,
    NClob,
    Blob,
    Raw {
        length: u32,
    },
    LongRaw,
    Date,
    Timestamp {
        fractional_precision: u8,
    },
    TimestampWithTimeZone {
        fractional_precision: u8,
    },
    TimestampWithLocalTimeZone {
        fractional_precision: u8,
    },
    IntervalYearToMonth {
        year_precision: u8,
    },
    IntervalDayToSecond {
        day_precision: u8,
        fractional_precision: u8,
    },
    RowId,
    URowId {
        length: Option<u32>,
    },
    XmlType,
    /// `JSON` (21c): Oracle's native JSON type, stored in its binary OSON form.
    Json,
    /// `BOOLEAN` (23ai).
    Boolean,
    /// A type the capture cannot decode (`SDO_GEOMETRY`, `VECTOR`, an object type, ...), kept by
    /// name so that a table holding such a column still has a dictionary and SQL_REDO naming the
    /// column still parses. Only [`OracleType::parse_catalog`] makes one: the start check stops
    /// the capture unless `spec.filters.columnExcludeList` excludes every such column, and the
    /// values of an excluded one are dropped.
    Unsupported {
        /// The type name as the catalog wrote it, with its owner when it has one
        /// (`MDSYS.SDO_GEOMETRY`).
        name: String,
    },
}

/// The most digits a NUMBER holds.
pub const MAX_NUMBER_PRECISION: u8 = 38;

impl OracleType {
    /// The LOB kind of `CLOB`, `NCLOB` and `BLOB` columns; these are never in a before image.
    pub fn lob_kind(&self) -> Option<LobKind> {
        match self {
            Self::Clob => Some(LobKind::Clob),
            Self::NClob => Some(LobKind::NClob),
            Self::Blob => Some(LobKind::Blob),
            _ => None,
        }
    }

    /// Whether LogMiner leaves this column out of before images (LOBs, and LONG / LONG RAW,
    /// which are never supplementally logged).
    pub fn is_lob_like(&self) -> bool {
        matches!(
            self,
            Self::Clob | Self::NClob | Self::Blob | Self::Long | Self::LongRaw
        )
    }

    /// The declared character (or byte) length of character and RAW types.
    pub fn max_length(&self) -> Option<u32> {
        match self {
            Self::Char { length, .. }
            | Self::NChar { length }
            | Self::Varchar2 { length, .. }
            | Self::NVarchar2 { length }
            | Self::Raw { length } => Some(*length),
            Self::URowId { length } => *length,
            _ => None,
        }
    }

    /// Whether the capture cannot decode values of this type (see [`OracleType::Unsupported`]).
    pub fn is_unsupported(&self) -> bool {
        matches!(self, Self::Unsupported { .. })
    }

    /// Parses a type the database's catalog reported (ALL_TAB_COLS, or the schema history that
    /// recorded it): like [`OracleType::parse`], except that an unknown type name is
    /// [`OracleType::Unsupported`] rather than an error. The catalog names only types that exist,
    /// so an unknown name is a type this capture does not decode, which the start check reports
    /// with the column to exclude; refusing it here made the dictionary load fail with no stop
    /// code, a restart loop.
    pub fn parse_catalog(text: &str) -> Result<Self, OracleTypeError> {
        match Self::parse(text) {
            Err(OracleTypeError {
                kind: OracleTypeErrorKind::UnknownType(_),
                ..
            }) => Ok(Self::Unsupported {
                name: text.trim().to_owned(),
            }),
            other => other,
        }
    }

    /// Parses a type string; see the module docs for the accepted forms.
    pub fn parse(text: &str) -> Result<Self, OracleTypeError> {
        let tokens = tokenize(text).map_err(|kind| OracleTypeError::new(text, kind))?;
        let mut parser = Parser { tokens, at: 0 };
        let parsed = parser
            .oracle_type()
            .and_then(|t| parser.end().map(|()| t))
            .map_err(|kind| OracleTypeError::new(text, kind))?;
        Ok(parsed)
    }
}

impl std::str::FromStr for OracleType {
    type Err = OracleTypeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// A type string that is not an Oracle column type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid Oracle type {text:?}: {kind}")]
pub struct OracleTypeError {
    pub text: String,
    pub kind: OracleTypeErrorKind,
}

impl OracleTypeError {
    fn new(text: &str, kind: OracleTypeErrorKind) -> Self {
        let mut text = text.to_owned();
        if text.len() > 80 {
            let mut cut = 80;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        Self { text, kind }
    }
}

/// Why a type string was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OracleTypeErrorKind {
    #[error("empty type")]
    Empty,
    #[error("unknown type name {0}")]
    UnknownType(String),
    #[error("unexpected character {0:?}")]
    UnexpectedCharacter(char),
    #[error("expected {expected}, found {found}")]
    Expected {
        expected: &'static str,
        found: String,
    },
    #[error("{what} {value} is out of range {min}..={max}")]
    OutOfRange {
        what: &'static str,
        value: i64,
        min: i64,
        max: i64,
    },
    #[error("{0} needs a length")]
    MissingLength(&'static str),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Int(i64),
    Open,
    Close,
    Comma,
    Star,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Word(w) => write!(f, "{w}"),
            Token::Int(i) => write!(f, "{i}"),
            Token::Open => f.write_str("("),
            Token::Close => f.write_str(")"),
            Token::Comma => f.write_str(","),
            Token::Star => f.write_str("*"),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, OracleTypeErrorKind> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' | ')' | ',' | '*' => {
                chars.next();
                tokens.push(match c {
                    '(' => Token::Open,
                    ')' => Token::Close,
                    ',' => Token::Comma,
                    _ => Token::Star,
                });
            }
            '-' | '+' | '0'..='9' => {
                chars.next();
                let mut end = start + c.len_utf8();
                while let Some(&(i, d)) = chars.peek() {
                    if !d.is_ascii_digit() {
                        break;
                    }
                    end = i + 1;
                    chars.next();
                }
                let literal = &text[start..end];
                let value = literal
                    .parse::<i64>()
                    .map_err(|_| OracleTypeErrorKind::Expected {
                        expected: "a number",
                        found: literal.to_owned(),
                    })?;
                tokens.push(Token::Int(value));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut end = start;
                while let Some(&(i, d)) = chars.peek() {
                    if !(d.is_ascii_alphanumeric() || d == '_' || d == '.' || d == '$' || d == '#')
                    {
                        break;
                    }
                    end = i + d.len_utf8();
                    chars.next();
                }
                tokens.push(Token::Word(text[start..end].to_ascii_uppercase()));
            }
            other => return Err(OracleTypeErrorKind::UnexpectedCharacter(other)),
        }
    }
    if tokens.is_empty() {
        return Err(OracleTypeErrorKind::Empty);
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

type Parsed<T> = Result<T, OracleTypeErrorKind>;

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn found(&self) -> String {
        self.peek()
            .map_or_else(|| "end of type".to_owned(), |t| format!("{t:?}"))
    }

    fn next_word(&mut self) -> Option<String> {
        match self.peek() {
            Some(Token::Word(w)) => {
                let w = w.clone();
                self.at += 1;
                Some(w)
            }
            _ => None,
        }
    }

    fn eat(&mut self, token: &Token) -> bool {
        if self.peek() == Some(token) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, word: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(w)) if w == word) && {
            self.at += 1;
            true
        }
    }

    fn expect_word(&mut self, word: &'static str) -> Parsed<()> {
        if self.eat_word(word) {
            Ok(())
        } else {
            Err(OracleTypeErrorKind::Expected {
                expected: word,
                found: self.found(),
            })
        }
    }

    fn expect(&mut self, token: Token, expected: &'static str) -> Parsed<()> {
        if self.eat(&token) {
            Ok(())
        } else {
            Err(OracleTypeErrorKind::Expected {
                expected,
                found: self.found(),
            })
        }
    }

    fn int(&mut self, what: &'static str, min: i64, max: i64) -> Parsed<i64> {
        match self.peek() {
            Some(Token::Int(v)) => {
                let v = *v;
                self.at += 1;
                if v < min || v > max {
                    return Err(OracleTypeErrorKind::OutOfRange {
                        what,
                        value: v,
                        min,
                        max,
                    });
                }
                Ok(v)
            }
            _ => Err(OracleTypeErrorKind::Expected {
                expected: what,
                found: self.found(),
            }),
        }
    }

    /// `(n)` when present.
    fn optional_paren_int(
        &mut self,
        what: &'static str,
        min: i64,
        max: i64,
    ) -> Parsed<Option<i64>> {
        if !self.eat(&Token::Open) {
            return Ok(None);
        }
        let v = self.int(what, min, max)?;
        self.expect(Token::Close, "')'")?;
        Ok(Some(v))
    }

    /// `(n [BYTE|CHAR])` when present.
    fn optional_length(&mut self, max: i64) -> Parsed<Option<(u32, LengthSemantics)>> {
        if !self.eat(&Token::Open) {
            return Ok(None);
        }
        let length = to_u32(self.int("length", 1, max)?);
        let semantics = if self.eat_word("BYTE") {
            LengthSemantics::Byte
        } else if self.eat_word("CHAR") {
            LengthSemantics::Char
        } else {
            LengthSemantics::Default
        };
        self.expect(Token::Close, "')'")?;
        Ok(Some((length, semantics)))
    }

    fn end(&self) -> Parsed<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(OracleTypeErrorKind::Expected {
                expected: "end of type",
                found: self.found(),
            }),
        }
    }

    fn oracle_type(&mut self) -> Parsed<OracleType> {
        let Some(name) = self.next_word() else {
            return Err(OracleTypeErrorKind::Expected {
                expected: "a type name",
                found: self.found(),
            });
        };
        let parsed = match name.as_str() {
            "NUMBER" | "DECIMAL" | "DEC" | "NUMERIC" => self.number(name == "NUMBER")?,
            "INTEGER" | "INT" | "SMALLINT" => OracleType::Number {
                precision: None,
                scale: Some(0),
            },
            "FLOAT" => OracleType::Float {
                binary_precision: to_u8(
                    self.optional_paren_int("FLOAT precision", 1, 126)?
                        .unwrap_or(126),
                ),
            },
            "REAL" => OracleType::Float {
                binary_precision: 63,
            },
            "DOUBLE" => {
                self.expect_word("PRECISION")?;
                OracleType::Float {
                    binary_precision: 126,
                }
            }
            "BINARY_FLOAT" => OracleType::BinaryFloat,
            "BINARY_DOUBLE" => OracleType::BinaryDouble,
            "CHAR" | "CHARACTER" => {
                if self.eat_word("VARYING") {
                    self.varchar2("CHARACTER VARYING")?
                } else {
                    let (length, semantics) = self
                        .optional_length(2000)?
                        .unwrap_or((1, LengthSemantics::Default));
                    OracleType::Char { length, semantics }
                }
            }
            "NCHAR" => self.nchar()?,
            "NATIONAL" => {
                if !(self.eat_word("CHARACTER") || self.eat_word("CHAR")) {
                    return Err(OracleTypeErrorKind::Expected {
                        expected: "CHARACTER",
                        found: self.found(),
                    });
                }
                self.nchar()?
            }
            "VARCHAR2" | "VARCHAR" => self.varchar2("VARCHAR2")?,
            "NVARCHAR2" => self.nvarchar2()?,
            "LONG" => {
                if self.eat_word("RAW") {
                    OracleType::LongRaw
                } else {
                    OracleType::Long
                }
            }
            "CLOB" => OracleType::Clob,
            "NCLOB" => OracleType::NClob,
            "BLOB" => OracleType::Blob,
            "RAW" => match self.optional_paren_int("RAW length", 1, 32767)? {
                Some(length) => OracleType::Raw {
                    length: to_u32(length),
                },
                None => return Err(OracleTypeErrorKind::MissingLength("RAW")),
            },
            "DATE" => OracleType::Date,
            "TIMESTAMP" => self.timestamp()?,
            "INTERVAL" => self.interval()?,
            "ROWID" => OracleType::RowId,
            "UROWID" => OracleType::URowId {
                length: self
                    .optional_paren_int("UROWID length", 1, 4000)?
                    .map(to_u32),
            },
            "XMLTYPE" | "SYS.XMLTYPE" | "PUBLIC.XMLTYPE" => OracleType::XmlType,
            "JSON" => OracleType::Json,
            "BOOLEAN" => OracleType::Boolean,
            other => return Err(OracleTypeErrorKind::UnknownType(other.to_owned())),
        };
        Ok(parsed)
    }

    fn number(&mut self, is_number: bool) -> Parsed<OracleType> {
        if !self.eat(&Token::Open) {
            // NUMBER alone is the floating decimal; DECIMAL and NUMERIC alone are integers,
            // stored by Oracle as NUMBER(*,0).
            return Ok(if is_number {
                OracleType::Number {
                    precision: None,
                    scale: None,
                }
            } else {
                OracleType::Number {
                    precision: None,
                    scale: Some(0),
                }
            });
        }
        let precision = if self.eat(&Token::Star) {
            None
        } else {
            Some(to_u8(self.int("NUMBER precision", 1, 38)?))
        };
        let scale = if self.eat(&Token::Comma) {
            Some(to_i8(self.int("NUMBER scale", -84, 127)?))
        } else if precision.is_none() {
            // NUMBER(*) is the floating NUMBER.
            None
        } else {
            Some(0)
        };
        self.expect(Token::Close, "')'")?;
        Ok(OracleType::Number { precision, scale })
    }

    fn varchar2(&mut self, name: &'static str) -> Parsed<OracleType> {
        match self.optional_length(32767)? {
            Some((length, semantics)) => Ok(OracleType::Varchar2 { length, semantics }),
            None => Err(OracleTypeErrorKind::MissingLength(name)),
        }
    }

    /// After `NCHAR` or `NATIONAL CHARACTER`: `VARYING` makes it an NVARCHAR2.
    fn nchar(&mut self) -> Parsed<OracleType> {
        if self.eat_word("VARYING") {
            return self.nvarchar2();
        }
        let length = self.optional_paren_int("length", 1, 2000)?.unwrap_or(1);
        Ok(OracleType::NChar {
            length: to_u32(length),
        })
    }

    fn nvarchar2(&mut self) -> Parsed<OracleType> {
        match self.optional_paren_int("NVARCHAR2 length", 1, 32767)? {
            Some(length) => Ok(OracleType::NVarchar2 {
                length: to_u32(length),
            }),
            None => Err(OracleTypeErrorKind::MissingLength("NVARCHAR2")),
        }
    }

    fn timestamp(&mut self) -> Parsed<OracleType> {
        let fractional_precision = to_u8(
            self.optional_paren_int("fractional precision", 0, 9)?
                .unwrap_or(6),
        );
        if !self.eat_word("WITH") {
            return Ok(OracleType::Timestamp {
                fractional_precision,
            });
        }
        let local = self.eat_word("LOCAL");
        self.expect_word("TIME")?;
        self.expect_word("ZONE")?;
        Ok(if local {
            OracleType::TimestampWithLocalTimeZone {
                fractional_precision,
            }
        } else {
            OracleType::TimestampWithTimeZone {
                fractional_precision,
            }
        })
    }

    fn interval(&mut self) -> Parsed<OracleType> {
        if self.eat_word("YEAR") {
            let year_precision = to_u8(
                self.optional_paren_int("year precision", 0, 9)?
                    .unwrap_or(2),
            );
            self.expect_word("TO")?;
            self.expect_word("MONTH")?;
            return Ok(OracleType::IntervalYearToMonth { year_precision });
        }
        self.expect_word("DAY")?;
        let day_precision = to_u8(self.optional_paren_int("day precision", 0, 9)?.unwrap_or(2));
        self.expect_word("TO")?;
        self.expect_word("SECOND")?;
        let fractional_precision = to_u8(
            self.optional_paren_int("fractional precision", 0, 9)?
                .unwrap_or(6),
        );
        Ok(OracleType::IntervalDayToSecond {
            day_precision,
            fractional_precision,
        })
    }
}

// The range checks above keep these conversions lossless; saturating keeps them panic-free.
fn to_u8(v: i64) -> u8 {
    u8::try_from(v).unwrap_or(u8::MAX)
}
fn to_i8(v: i64) -> i8 {
    i8::try_from(v).unwrap_or(i8::MAX)
}
fn to_u32(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl fmt::Display for LengthSemantics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Default => Ok(()),
            Self::Byte => f.write_str(" BYTE"),
            Self::Char => f.write_str(" CHAR"),
        }
    }
}

impl fmt::Display for OracleType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number {
                precision: None,
                scale: None,
            } => f.write_str("NUMBER"),
            Self::Number {
                precision: None,
                scale: Some(s),
            } => write!(f, "NUMBER(*,{s})"),
            Self::Number {
                precision: Some(p),
                scale: None | Some(0),
            } => write!(f, "NUMBER({p})"),
            Self::Number {
                precision: Some(p),
                scale: Some(s),
            } => write!(f, "NUMBER({p},{s})"),
            Self::Float { binary_precision } => write!(f, "FLOAT({binary_precision})"),
            Self::BinaryFloat => f.write_str("BINARY_FLOAT"),
            Self::BinaryDouble => f.write_str("BINARY_DOUBLE"),
            Self::Char { length, semantics } => write!(f, "CHAR({length}{semantics})"),
            Self::NChar { length } => write!(f, "NCHAR({length})"),
            Self::Varchar2 { length, semantics } => write!(f, "VARCHAR2({length}{semantics})"),
            Self::NVarchar2 { length } => write!(f, "NVARCHAR2({length})"),
            Self::Long => f.write_str("LONG"),
            Self::Clob => f.write_str("CLOB"),
            Self::NClob => f.write_str("NCLOB"),
            Self::Blob => f.write_str("BLOB"),
            Self::Raw { length } => write!(f, "RAW({length})"),
            Self::LongRaw => f.write_str("LONG RAW"),
            Self::Date => f.write_str("DATE"),
            Self::Timestamp {
                fractional_precision,
            } => write!(f, "TIMESTAMP({fractional_precision})"),
            Self::TimestampWithTimeZone {
                fractional_precision,
            } => write!(f, "TIMESTAMP({fractional_precision}) WITH TIME ZONE"),
            Self::TimestampWithLocalTimeZone {
                fractional_precision,
            } => write!(f, "TIMESTAMP({fractional_precision}) WITH LOCAL TIME ZONE"),
            Self::IntervalYearToMonth { year_precision } => {
                write!(f, "INTERVAL YEAR({year_precision}) TO MONTH")
            }
            Self::IntervalDayToSecond {
                day_precision,
                fractional_precision,
            } => write!(
                f,
                "INTERVAL DAY({day_precision}) TO SECOND({fractional_precision})"
            ),
            Self::RowId => f.write_str("ROWID"),
            Self::URowId { length: None } => f.write_str("UROWID"),
            Self::URowId { length: Some(n) } => write!(f, "UROWID({n})"),
            Self::XmlType => f.write_str("XMLTYPE"),
            Self::Json => f.write_str("JSON"),
            Self::Boolean => f.write_str("BOOLEAN"),
            // As the catalog wrote it, so that `parse_catalog` reads the same value back.
            Self::Unsupported { name } => f.write_str(name),
        }
    }
}

#[cfg(test)]
mod tests;
