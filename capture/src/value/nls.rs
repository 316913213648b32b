//! The session NLS settings the capture fixes, and the Oracle datetime format models it reads.
//!
//! LogMiner renders SQL_REDO literals with the mining session's NLS settings, so the capture (and
//! the simulator, which renders as LogMiner would) sets them before mining, with
//! [`ALTER_SESSION_STATEMENTS`]. That makes every literal deterministic:
//!
//! | setting | value | SQL_REDO shape |
//! |---|---|---|
//! | `NLS_DATE_FORMAT` | [`NLS_DATE_FORMAT`] | `TO_DATE(' 2024-01-02 03:04:05', 'SYYYY-MM-DD HH24:MI:SS')` |
//! | `NLS_TIMESTAMP_FORMAT` | [`NLS_TIMESTAMP_FORMAT`] | `TO_TIMESTAMP(' 2024-01-02 03:04:05.123000000')` |
//! | `NLS_TIMESTAMP_TZ_FORMAT` | [`NLS_TIMESTAMP_TZ_FORMAT`] | `TO_TIMESTAMP_TZ(' 2024-01-02 03:04:05.123000000 +01:00')` |
//!
//! The year is `SYYYY`, signed: under `YYYY` Oracle writes 44 BC as `0044`, the same text as
//! 44 AD, so a BC date would come out shifted by millennia without a word. `SYYYY` writes a
//! space before an AD year and `-` before a BC one (`-0044-03-15`).
//! | `NLS_NUMERIC_CHARACTERS` | [`NLS_NUMERIC_CHARACTERS`] | `'29669.9'` |
//! | `TIME_ZONE` | [`SESSION_TIME_ZONE`] | WITH LOCAL TIME ZONE values rendered in UTC |
//!
//! `TO_DATE` carries its format as the second argument, and LogMiner output seen in the wild uses
//! other session settings (`'dd-mon-yyyy hh24:mi:ss'`, `TO_TIMESTAMP('2020-02-01 00:00:00.')`
//! under an `.FF` format), so [`DateTimeFormat`] reads a useful subset of Oracle's format models
//! rather than one fixed shape. Supported elements (case-insensitive): `YYYY`/`SYYYY`/`RRRR`,
//! `MM`, `MON`, `MONTH`, `DD`, `HH24`, `HH`/`HH12` with `AM`/`PM`/`A.M.`/`P.M.`, `MI`, `SS`, `FF`
//! and `FF1`..`FF9`, `TZH`, `TZM`, the punctuation `- / , . ; :`, spaces, `"quoted text"`, and
//! the modifiers `FM`/`FX` (ignored). Two-digit years (`YY`, `RR`) need the current date to
//! resolve, which would make typing depend on the clock, and region names (`TZR`) need a time
//! zone database; both are refused with a typed [`FormatError`]. In a literal, a region name
//! where an offset belongs is refused the same way ([`LiteralError::TimeZoneRegion`]), except
//! the names of UTC itself (`UTC`, `GMT`, `Z`, ...), which are offset zero.
//!
//! Reading is as lenient as LogMiner's output needs and no more: numeric fields take 1 to their
//! width of digits (fractions 0 to 9), a space in the format matches any run of spaces, and a
//! `.` directly followed by a fraction element may be absent together with the fraction.

use super::number::take_sign;
use std::sync::LazyLock;

/// `NLS_DATE_FORMAT` of the mining session.
pub const NLS_DATE_FORMAT: &str = "SYYYY-MM-DD HH24:MI:SS";
/// `NLS_TIMESTAMP_FORMAT` of the mining session (nanosecond digits, always nine).
pub const NLS_TIMESTAMP_FORMAT: &str = "SYYYY-MM-DD HH24:MI:SS.FF9";
/// `NLS_TIMESTAMP_TZ_FORMAT` of the mining session: a numeric offset, never a region name.
pub const NLS_TIMESTAMP_TZ_FORMAT: &str = "SYYYY-MM-DD HH24:MI:SS.FF9 TZH:TZM";
/// `NLS_NUMERIC_CHARACTERS`: decimal separator `.`, group separator `,`.
pub const NLS_NUMERIC_CHARACTERS: &str = ".,";
/// The session `TIME_ZONE`, so TIMESTAMP WITH LOCAL TIME ZONE values are rendered in UTC.
pub const SESSION_TIME_ZONE: &str = "00:00";

/// The statements that set the session up, in order (issued before `DBMS_LOGMNR.START_LOGMNR`).
pub const ALTER_SESSION_STATEMENTS: [&str; 5] = [
    "ALTER SESSION SET NLS_DATE_FORMAT = 'SYYYY-MM-DD HH24:MI:SS'",
    "ALTER SESSION SET NLS_TIMESTAMP_FORMAT = 'SYYYY-MM-DD HH24:MI:SS.FF9'",
    "ALTER SESSION SET NLS_TIMESTAMP_TZ_FORMAT = 'SYYYY-MM-DD HH24:MI:SS.FF9 TZH:TZM'",
    "ALTER SESSION SET NLS_NUMERIC_CHARACTERS = '.,'",
    "ALTER SESSION SET TIME_ZONE = '00:00'",
];

/// One element of a datetime format model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormatElement {
    Year,
    /// `SYYYY`: a year with its sign, `-` before a BC year and a space (or nothing) before an
    /// AD one. Oracle counts no year 0: `-0044` is 44 BC.
    SignedYear,
    Month,
    MonthAbbreviation,
    MonthName,
    Day,
    Hour24,
    Hour12,
    Meridian,
    Minute,
    Second,
    /// `FF` or `FFn`; reads 0 to 9 digits whatever `n` is.
    Fraction,
    OffsetHour,
    OffsetMinute,
    /// Punctuation that must appear as written.
    Punctuation(char),
    /// One or more spaces (matches any run of spaces, or none).
    Space,
    /// `"quoted text"`, matched case-insensitively.
    Text(String),
}

/// A parsed datetime format model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DateTimeFormat {
    elements: Vec<FormatElement>,
}

/// A format model the capture cannot read values with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("format element {0} is not supported (two-digit years need the clock to resolve)")]
    TwoDigitYear(String),
    #[error("format element {0} is not supported (time zone regions need a time zone database)")]
    TimeZoneRegion(String),
    #[error("format element {0:?} is not supported")]
    Unsupported(String),
    #[error("unterminated quoted text in the format")]
    UnterminatedText,
}

/// The fields read from a datetime literal; ranges are checked when they are turned into a
/// date-time (see [`super::temporal`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DateTimeFields {
    /// As Oracle counts years: negative for BC (`-44` is 44 BC), no year 0.
    pub year: Option<i32>,
    pub month: Option<u8>,
    pub day: Option<u8>,
    pub hour: Option<u8>,
    /// `Some(true)` for PM, with a 12-hour `hour`.
    pub pm: Option<bool>,
    pub hour_is_12h: bool,
    pub minute: Option<u8>,
    pub second: Option<u8>,
    pub nanosecond: u32,
    /// Seconds east of UTC.
    pub offset_seconds: Option<i32>,
}

/// A literal that does not match its format.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LiteralError {
    #[error("expected {expected} at character {at}")]
    Expected { expected: &'static str, at: usize },
    #[error("unexpected text after character {at}")]
    Trailing { at: usize },
    #[error("time zone region {0:?} is not supported, only numeric offsets")]
    TimeZoneRegion(String),
}

/// Region names that are UTC whatever the time zone database says, read as offset zero; every
/// other region name is refused.
const UTC_NAMES: [&str; 6] = ["UTC", "GMT", "Z", "Etc/UTC", "Etc/GMT", "UCT"];

const MONTHS: [&str; 12] = [
    "JANUARY",
    "FEBRUARY",
    "MARCH",
    "APRIL",
    "MAY",
    "JUNE",
    "JULY",
    "AUGUST",
    "SEPTEMBER",
    "OCTOBER",
    "NOVEMBER",
    "DECEMBER",
];

/// The session's `NLS_DATE_FORMAT`, parsed once.
pub static DATE_FORMAT: LazyLock<DateTimeFormat> = LazyLock::new(|| fixed(NLS_DATE_FORMAT));
/// The session's `NLS_TIMESTAMP_FORMAT`, parsed once.
pub static TIMESTAMP_FORMAT: LazyLock<DateTimeFormat> =
    LazyLock::new(|| fixed(NLS_TIMESTAMP_FORMAT));
/// The session's `NLS_TIMESTAMP_TZ_FORMAT`, parsed once.
pub static TIMESTAMP_TZ_FORMAT: LazyLock<DateTimeFormat> =
    LazyLock::new(|| fixed(NLS_TIMESTAMP_TZ_FORMAT));

/// The fixed formats are known to parse (a unit test checks it); an empty format would only make
/// every literal fail with a typed error, never a panic.
fn fixed(text: &str) -> DateTimeFormat {
    DateTimeFormat::parse(text).unwrap_or(DateTimeFormat {
        elements: Vec::new(),
    })
}

impl DateTimeFormat {
    /// Parses a format model; see the module docs for the supported elements.
    pub fn parse(format: &str) -> Result<Self, FormatError> {
        let upper = format.to_ascii_uppercase();
        let mut rest = upper.as_str();
        let mut elements = Vec::new();
        // Longest names first, so `HH24` wins over `HH` and `MONTH` over `MON`/`MM`.
        const NAMED: [(&str, Option<FormatElement>); 24] = [
            ("SYYYY", Some(FormatElement::SignedYear)),
            ("YYYY", Some(FormatElement::Year)),
            ("RRRR", Some(FormatElement::Year)),
            ("MONTH", Some(FormatElement::MonthName)),
            ("MON", Some(FormatElement::MonthAbbreviation)),
            ("MM", Some(FormatElement::Month)),
            ("DD", Some(FormatElement::Day)),
            ("HH24", Some(FormatElement::Hour24)),
            ("HH12", Some(FormatElement::Hour12)),
            ("HH", Some(FormatElement::Hour12)),
            ("MI", Some(FormatElement::Minute)),
            ("SS", Some(FormatElement::Second)),
            ("A.M.", Some(FormatElement::Meridian)),
            ("P.M.", Some(FormatElement::Meridian)),
            ("AM", Some(FormatElement::Meridian)),
            ("PM", Some(FormatElement::Meridian)),
            ("TZH", Some(FormatElement::OffsetHour)),
            ("TZM", Some(FormatElement::OffsetMinute)),
            ("FX", None),
            ("FM", None),
            ("YYY", None),
            ("YY", None),
            ("RR", None),
            ("Y", None),
        ];
        'outer: while let Some(c) = rest.chars().next() {
            if c == ' ' {
                rest = rest.trim_start_matches(' ');
                elements.push(FormatElement::Space);
                continue;
            }
            if matches!(c, '-' | '/' | ',' | '.' | ';' | ':') {
                // `A.M.` starts with a letter, so a leading `.` is always punctuation.
                elements.push(FormatElement::Punctuation(c));
                rest = &rest[1..];
                continue;
            }
            if c == '"' {
                let Some(end) = rest[1..].find('"') else {
                    return Err(FormatError::UnterminatedText);
                };
                elements.push(FormatElement::Text(rest[1..=end].to_owned()));
                rest = &rest[end + 2..];
                continue;
            }
            if let Some(after) = rest.strip_prefix("FF") {
                let digits = after
                    .bytes()
                    .take_while(|b| (b'1'..=b'9').contains(b))
                    .count()
                    .min(1);
                elements.push(FormatElement::Fraction);
                rest = &after[digits..];
                continue;
            }
            if rest.starts_with("TZR") || rest.starts_with("TZD") {
                return Err(FormatError::TimeZoneRegion(rest[..3].to_owned()));
            }
            for (name, element) in &NAMED {
                if let Some(after) = rest.strip_prefix(name) {
                    match element {
                        Some(e) => elements.push(e.clone()),
                        None if matches!(*name, "FX" | "FM") => {}
                        None => return Err(FormatError::TwoDigitYear((*name).to_owned())),
                    }
                    rest = after;
                    continue 'outer;
                }
            }
            let word: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            let shown = if word.is_empty() { c.to_string() } else { word };
            return Err(FormatError::Unsupported(shown));
        }
        Ok(Self { elements })
    }

    pub fn elements(&self) -> &[FormatElement] {
        &self.elements
    }

    /// Reads the fields of `literal` as this format prescribes.
    pub fn read(&self, literal: &str) -> Result<DateTimeFields, LiteralError> {
        let mut reader = Reader {
            elements: &self.elements,
            next: 0,
            literal,
            bytes: literal.as_bytes(),
            at: 0,
            fields: DateTimeFields::default(),
            offset_negative: false,
        };
        let elements = reader.elements;
        while let Some(element) = elements.get(reader.next) {
            reader.next += 1;
            reader.element(element)?;
        }
        if reader.at != literal.len() {
            return Err(LiteralError::Trailing { at: reader.at });
        }
        Ok(reader.fields)
    }
}

/// A literal being read along a format: each element read moves `at` past the text it took
/// and fills its field. An element can consume the ones after it (`next`) when the literal
/// leaves them out: a fraction with its `.`, the minutes of an offset given as a UTC name.
struct Reader<'a> {
    elements: &'a [FormatElement],
    /// The element after the one being read.
    next: usize,
    literal: &'a str,
    bytes: &'a [u8],
    at: usize,
    fields: DateTimeFields,
    /// The sign of the offset hour, which applies to its minutes as well.
    offset_negative: bool,
}

impl Reader<'_> {
    fn element(&mut self, element: &FormatElement) -> Result<(), LiteralError> {
        match element {
            FormatElement::Space => self.skip_spaces(),
            FormatElement::Punctuation(p) => self.punctuation(*p)?,
            FormatElement::Text(text) => self.text(text)?,
            FormatElement::Year => {
                self.fields.year = Some(self.number(4, "a year")? as i32);
            }
            FormatElement::SignedYear => self.signed_year()?,
            FormatElement::Month => self.fields.month = Some(self.number(2, "a month")? as u8),
            FormatElement::Day => self.fields.day = Some(self.number(2, "a day")? as u8),
            FormatElement::Hour24 => self.fields.hour = Some(self.number(2, "an hour")? as u8),
            FormatElement::Hour12 => {
                self.fields.hour = Some(self.number(2, "an hour")? as u8);
                self.fields.hour_is_12h = true;
            }
            FormatElement::Minute => self.fields.minute = Some(self.number(2, "minutes")? as u8),
            FormatElement::Second => self.fields.second = Some(self.number(2, "seconds")? as u8),
            FormatElement::Fraction => self.fields.nanosecond = self.fraction(),
            FormatElement::MonthAbbreviation => self.fields.month = Some(self.month(false)?),
            FormatElement::MonthName => self.fields.month = Some(self.month(true)?),
            FormatElement::Meridian => self.fields.pm = Some(self.meridian()?),
            FormatElement::OffsetHour => self.offset_hour()?,
            FormatElement::OffsetMinute => self.offset_minute()?,
        }
        Ok(())
    }

    fn skip_spaces(&mut self) {
        while self.bytes.get(self.at) == Some(&b' ') {
            self.at += 1;
        }
    }

    fn punctuation(&mut self, p: char) -> Result<(), LiteralError> {
        if self.bytes.get(self.at) == Some(&(p as u8)) {
            self.at += 1;
        } else if p == '.' && self.elements.get(self.next) == Some(&FormatElement::Fraction) {
            // No fraction at all: `2024-01-02 03:04:05` under `...SS.FF`.
            self.next += 1;
        } else {
            return Err(self.expected("punctuation"));
        }
        Ok(())
    }

    fn text(&mut self, text: &str) -> Result<(), LiteralError> {
        let end = self.at + text.len();
        match self.literal.get(self.at..end) {
            Some(found) if found.eq_ignore_ascii_case(text) => {
                self.at = end;
                Ok(())
            }
            _ => Err(self.expected("quoted format text")),
        }
    }

    fn signed_year(&mut self) -> Result<(), LiteralError> {
        let before_christ = self.bytes.get(self.at) == Some(&b'-');
        if matches!(self.bytes.get(self.at), Some(b'-' | b' ' | b'+')) {
            self.at += 1;
        }
        let year = self.number(4, "a year")? as i32;
        self.fields.year = Some(if before_christ { -year } else { year });
        Ok(())
    }

    /// 0 to 9 digits, as nanoseconds.
    fn fraction(&mut self) -> u32 {
        let start = self.at;
        while self.at < self.bytes.len()
            && self.at - start < 9
            && self.bytes[self.at].is_ascii_digit()
        {
            self.at += 1;
        }
        let mut nanos: u32 = 0;
        for &b in &self.bytes[start..self.at] {
            nanos = nanos * 10 + u32::from(b - b'0');
        }
        for _ in (self.at - start)..9 {
            nanos *= 10;
        }
        nanos
    }

    /// An English month, its full name or (not `full`) its three-letter abbreviation: 1 to 12.
    fn month(&mut self, full: bool) -> Result<u8, LiteralError> {
        let start = self.at;
        while self.at < self.bytes.len() && self.bytes[self.at].is_ascii_alphabetic() {
            self.at += 1;
        }
        let word = self.literal[start..self.at].to_ascii_uppercase();
        let month = MONTHS.iter().position(|m| {
            if full {
                *m == word
            } else {
                word.len() == 3 && m.starts_with(word.as_str())
            }
        });
        let Some(month) = month else {
            return Err(LiteralError::Expected {
                expected: "an English month name",
                at: start,
            });
        };
        if full {
            // Oracle pads month names to the longest name.
            self.skip_spaces();
        }
        Ok(month as u8 + 1)
    }

    /// Whether it is PM.
    fn meridian(&mut self) -> Result<bool, LiteralError> {
        let rest = self
            .literal
            .get(self.at..)
            .unwrap_or("")
            .to_ascii_uppercase();
        let (pm, len) = if rest.starts_with("A.M.") {
            (false, 4)
        } else if rest.starts_with("P.M.") {
            (true, 4)
        } else if rest.starts_with("AM") {
            (false, 2)
        } else if rest.starts_with("PM") {
            (true, 2)
        } else {
            return Err(self.expected("AM or PM"));
        };
        self.at += len;
        Ok(pm)
    }

    fn offset_hour(&mut self) -> Result<(), LiteralError> {
        let start = self.at;
        let negative = take_sign(self.bytes, &mut self.at);
        if self.bytes.get(self.at).is_some_and(u8::is_ascii_alphabetic) {
            return self.utc_by_name(start);
        }
        let hours = self.number(2, "an offset hour")? as i32;
        self.offset_negative = negative;
        self.fields.offset_seconds = Some(if negative { -hours } else { hours } * 3600);
        Ok(())
    }

    /// A region name where the offset starting at `start` belongs: one of UTC's names is offset
    /// zero, and no minutes follow; any other is refused.
    fn utc_by_name(&mut self, start: usize) -> Result<(), LiteralError> {
        let region = self.literal[start..].trim_end();
        if !UTC_NAMES.iter().any(|n| n.eq_ignore_ascii_case(region)) {
            return Err(LiteralError::TimeZoneRegion(region.to_owned()));
        }
        self.fields.offset_seconds = Some(0);
        self.at = start + region.len();
        while matches!(
            self.elements.get(self.next),
            Some(FormatElement::Punctuation(':') | FormatElement::OffsetMinute)
        ) {
            self.next += 1;
        }
        Ok(())
    }

    fn offset_minute(&mut self) -> Result<(), LiteralError> {
        let minutes = self.number(2, "offset minutes")? as i32;
        // The sign belongs to the whole offset: `-00:30` is half an hour west.
        let minutes = if self.offset_negative {
            -minutes
        } else {
            minutes
        };
        let hours = self.fields.offset_seconds.unwrap_or(0);
        self.fields.offset_seconds = Some(hours + minutes * 60);
        Ok(())
    }

    /// Reads 1 to `width` ASCII digits.
    fn number(&mut self, width: usize, expected: &'static str) -> Result<u32, LiteralError> {
        let start = self.at;
        let mut value: u32 = 0;
        while self.at < self.bytes.len()
            && self.at - start < width
            && self.bytes[self.at].is_ascii_digit()
        {
            value = value * 10 + u32::from(self.bytes[self.at] - b'0');
            self.at += 1;
        }
        if self.at == start {
            return Err(self.expected(expected));
        }
        Ok(value)
    }

    fn expected(&self, expected: &'static str) -> LiteralError {
        LiteralError::Expected {
            expected,
            at: self.at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_formats_parse() {
        assert_eq!(DATE_FORMAT.elements().len(), 11);
        assert!(
            TIMESTAMP_FORMAT
                .elements()
                .contains(&FormatElement::Fraction)
        );
        assert!(
            TIMESTAMP_TZ_FORMAT
                .elements()
                .contains(&FormatElement::OffsetMinute)
        );
        assert!(ALTER_SESSION_STATEMENTS[0].contains(NLS_DATE_FORMAT));
        assert!(ALTER_SESSION_STATEMENTS[1].contains(NLS_TIMESTAMP_FORMAT));
        assert!(ALTER_SESSION_STATEMENTS[2].contains(NLS_TIMESTAMP_TZ_FORMAT));
    }

    #[test]
    fn reads_logminer_literals() {
        let f = DateTimeFormat::parse("dd-mon-yyyy hh24:mi:ss").unwrap();
        let v = f.read("10-jan-2012 13:34:43").unwrap();
        assert_eq!(
            (v.year, v.month, v.day, v.hour, v.minute, v.second),
            (Some(2012), Some(1), Some(10), Some(13), Some(34), Some(43))
        );
        let v = TIMESTAMP_FORMAT.read("2020-02-01 00:00:00.").unwrap();
        assert_eq!(v.nanosecond, 0);
        let v = TIMESTAMP_FORMAT.read("2021-09-14 07:36:46.478").unwrap();
        assert_eq!(v.nanosecond, 478_000_000);
        let v = TIMESTAMP_FORMAT.read("2021-09-14 07:36:46").unwrap();
        assert_eq!(v.second, Some(46));
        let v = TIMESTAMP_TZ_FORMAT
            .read("2024-02-14 10:58:02.202590 +01:00")
            .unwrap();
        assert_eq!((v.nanosecond, v.offset_seconds), (202_590_000, Some(3600)));
        let v = TIMESTAMP_TZ_FORMAT
            .read("2024-02-14 10:58:02 -00:30")
            .unwrap();
        assert_eq!(v.offset_seconds, Some(-1800));
        let v = TIMESTAMP_TZ_FORMAT
            .read("2024-02-14 10:58:02 -05:30")
            .unwrap();
        assert_eq!(v.offset_seconds, Some(-19800));
        let f = DateTimeFormat::parse("DD-MON-YYYY HH.MI.SSXFF AM");
        assert!(f.is_err(), "X is not supported");
        let f = DateTimeFormat::parse("DD-MONTH-YYYY HH12:MI:SS A.M.").unwrap();
        let v = f.read("05-MARCH    -2020 01:02:03 P.M.").unwrap();
        assert_eq!((v.month, v.hour, v.pm), (Some(3), Some(1), Some(true)));
    }

    #[test]
    fn refuses_what_it_cannot_resolve() {
        assert!(matches!(
            DateTimeFormat::parse("DD-MON-RR"),
            Err(FormatError::TwoDigitYear(_))
        ));
        assert!(matches!(
            DateTimeFormat::parse("YYYY-MM-DD HH24:MI:SS TZR"),
            Err(FormatError::TimeZoneRegion(_))
        ));
        let v = TIMESTAMP_TZ_FORMAT
            .read("2024-02-14 10:58:02.5 UTC")
            .unwrap();
        assert_eq!((v.nanosecond, v.offset_seconds), (500_000_000, Some(0)));
        assert!(matches!(
            TIMESTAMP_TZ_FORMAT.read("2024-02-14 10:58:02 Europe/Paris"),
            Err(LiteralError::TimeZoneRegion(_))
        ));
        assert!(matches!(
            DATE_FORMAT.read("2024-02-14 10:58:02 extra"),
            Err(LiteralError::Trailing { .. })
        ));
        assert!(matches!(
            DATE_FORMAT.read("yesterday"),
            Err(LiteralError::Expected { .. })
        ));
    }
}
