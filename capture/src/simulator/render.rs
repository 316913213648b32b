//! SQL_REDO / SQL_UNDO text exactly as LogMiner writes it (logminer.md §3, §6), under the
//! capture's fixed session NLS (`crate::value::nls`).
//!
//! Everything writes into a caller's `String` so the hot path reuses buffers; names arrive
//! pre-quoted (`"APP"."ORDERS"`, `"ID"`) from the table.
//!
//! Shapes:
//! - `insert into "O"."T"("A","B") values ('1',NULL);` (no space before the column list, no ROWID)
//! - `update "O"."T" set "B" = 'x' where "A" = '1' and "B" IS NULL and ROWID = '...';`
//! - `delete from "O"."T" where "A" = '1' and ROWID = '...';`
//! - values: quoted literals for numbers too (`'42'`, `'.05'`), `''` doubled, `NULL`,
//!   `TO_DATE('..', 'YYYY-MM-DD HH24:MI:SS')`, `TO_TIMESTAMP('..')` (nine fraction digits),
//!   `TO_TIMESTAMP_TZ('.. +01:00')`, `HEXTORAW('..')` (lower-case hex), `UNISTR('\0412')` for
//!   national character values with non-ASCII characters (split with ` || ` every
//!   [`UNISTR_PIECE`] escaped characters: the piece size LogMiner uses is UNVERIFIED),
//!   `TO_YMINTERVAL('+05-00')`, `TO_DSINTERVAL('+02 03:04:05.500000')`, `EMPTY_CLOB()`.

use std::fmt::Write as _;

use crate::dictionary::{LobKind, OracleType};
use crate::value::{Value, nls, temporal};

/// Characters of UNISTR text per piece before LogMiner-style ` || ` joining.
pub(crate) const UNISTR_PIECE: usize = 1000;

/// The most bytes of SQL_REDO / SQL_UNDO one row holds; longer text continues (CSF).
pub(crate) const MAX_SQL_BYTES: usize = 4000;

/// `"NAME"`.
pub(crate) fn quoted(name: &str) -> String {
    format!("\"{name}\"")
}

/// Appends one value as SQL_REDO writes it for a column of `data_type`.
pub(crate) fn write_value(out: &mut String, value: &Value, data_type: &OracleType) {
    match value {
        Value::Null => out.push_str("NULL"),
        Value::Number(number) => {
            out.push('\'');
            let start = out.len();
            number.write_plain(out, 0);
            // LogMiner writes `.05` and `-.5`: no zero before the decimal point.
            let digits = &out[start..];
            if digits.starts_with("0.") {
                out.remove(start);
            } else if digits.starts_with("-0.") {
                out.remove(start + 1);
            }
            out.push('\'');
        }
        // Debezium's BOOLEAN converter reads the SQL_REDO text as a byte (zero is false), which
        // is what this writes; not yet compared with a 23ai LogMiner.
        Value::Boolean(b) => out.push_str(if *b { "'1'" } else { "'0'" }),
        Value::BinaryFloat(v) => write_float(out, f64::from(*v), format!("{v}")),
        Value::BinaryDouble(v) => write_float(out, *v, format!("{v}")),
        Value::Text(text) | Value::Xml(text) => {
            let national = matches!(
                data_type,
                OracleType::NChar { .. } | OracleType::NVarchar2 { .. } | OracleType::NClob
            );
            if national && !text.is_ascii() {
                write_unistr(out, text);
            } else {
                write_literal(out, text);
            }
        }
        Value::Bytes(bytes) => {
            out.push_str("HEXTORAW('");
            write_hex(out, bytes);
            out.push_str("')");
        }
        Value::Date(local) => {
            out.push_str("TO_DATE('");
            write_date_time(out, *local, false);
            out.push_str("', '");
            out.push_str(nls::NLS_DATE_FORMAT);
            out.push_str("')");
        }
        Value::Timestamp(local) => {
            out.push_str("TO_TIMESTAMP('");
            write_date_time(out, *local, true);
            out.push_str("')");
        }
        Value::TimestampTz { local, offset } => {
            out.push_str("TO_TIMESTAMP_TZ('");
            write_date_time(out, *local, true);
            out.push(' ');
            temporal::write_offset(out, *offset, false);
            out.push_str("')");
        }
        Value::TimestampLtz(instant) => {
            // Session TIME_ZONE is 00:00: rendered in UTC (shape UNVERIFIED, logminer.md §6).
            out.push_str("TO_TIMESTAMP_TZ('");
            write_date_time(
                out,
                instant.to_zoned(jiff::tz::TimeZone::UTC).datetime(),
                true,
            );
            out.push_str(" +00:00')");
        }
        Value::IntervalYearToMonth { months } => {
            let sign = if *months < 0 { '-' } else { '+' };
            let magnitude = months.unsigned_abs();
            let _ = write!(
                out,
                "TO_YMINTERVAL('{sign}{:02}-{:02}')",
                magnitude / 12,
                magnitude % 12
            );
        }
        Value::IntervalDayToSecond { nanoseconds } => {
            let sign = if *nanoseconds < 0 { '-' } else { '+' };
            let total = nanoseconds.unsigned_abs();
            let seconds = total / 1_000_000_000;
            let _ = write!(
                out,
                "TO_DSINTERVAL('{sign}{:02} {:02}:{:02}:{:02}.{:09}')",
                seconds / 86_400,
                seconds / 3600 % 24,
                seconds / 60 % 60,
                seconds % 60,
                total % 1_000_000_000
            );
        }
        Value::LobPlaceholder(kind) => out.push_str(match kind {
            LobKind::Blob => "EMPTY_BLOB()",
            LobKind::Clob | LobKind::NClob => "EMPTY_CLOB()",
        }),
        Value::Unsupported => out.push_str("Unsupported Type"),
    }
}

/// `'1.5'`; specials as `'Inf'`, `'-Inf'`, `'Nan'` (DBZ PR #6846; the finite format is
/// UNVERIFIED).
fn write_float(out: &mut String, value: f64, text: String) {
    out.push('\'');
    if value.is_nan() {
        out.push_str("Nan");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 { "Inf" } else { "-Inf" });
    } else {
        out.push_str(&text);
    }
    out.push('\'');
}

/// `'text'` with `'` doubled; everything else raw.
pub(crate) fn write_literal(out: &mut String, text: &str) {
    out.push('\'');
    for piece in text.split_inclusive('\'') {
        out.push_str(piece);
        if piece.ends_with('\'') {
            out.push('\'');
        }
    }
    out.push('\'');
}

/// `UNISTR('\0412\044B')`: non-ASCII characters (and `\`) as UTF-16 escapes, quotes doubled.
pub(crate) fn write_unistr(out: &mut String, text: &str) {
    out.push_str("UNISTR('");
    let mut in_piece = 0;
    for c in text.chars() {
        if in_piece == UNISTR_PIECE {
            out.push_str("') || UNISTR('");
            in_piece = 0;
        }
        in_piece += 1;
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\005C"),
            c if c.is_ascii() => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\{unit:04X}");
                }
            }
        }
    }
    out.push_str("')");
}

pub(crate) fn write_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
}

/// `YYYY-MM-DD HH24:MI:SS[.FF9]`, digit by digit (the formatter machinery costs more than the
/// rest of a row's rendering).
/// A date-time as the session's `SYYYY-MM-DD HH24:MI:SS[.FF9]` formats write it: a space before
/// an AD year, `-` before a BC one (Oracle's year: astronomical year 0 is 1 BC).
fn write_date_time(out: &mut String, local: jiff::civil::DateTime, fraction: bool) {
    let year = i32::from(local.year());
    if year > 0 {
        out.push(' ');
        push_digits(out, year.unsigned_abs(), 4);
    } else {
        out.push('-');
        push_digits(out, (1 - year).unsigned_abs(), 4);
    }
    out.push('-');
    push_digits(out, local.month().unsigned_abs().into(), 2);
    out.push('-');
    push_digits(out, local.day().unsigned_abs().into(), 2);
    out.push(' ');
    push_digits(out, local.hour().unsigned_abs().into(), 2);
    out.push(':');
    push_digits(out, local.minute().unsigned_abs().into(), 2);
    out.push(':');
    push_digits(out, local.second().unsigned_abs().into(), 2);
    if fraction {
        out.push('.');
        push_digits(out, local.subsec_nanosecond().unsigned_abs(), 9);
    }
}

/// `value` as exactly `width` decimal digits (zero-padded, high digits dropped).
pub(crate) fn push_digits(out: &mut String, value: u32, width: usize) {
    let mut digits = [b'0'; 10];
    let mut rest = value;
    for slot in digits[..width].iter_mut().rev() {
        *slot = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    for &digit in &digits[..width] {
        out.push(char::from(digit));
    }
}

/// One `"C" = v` / `"C" IS NULL` condition of a where clause, with its leading ` and ` when
/// `first` is false.
pub(crate) fn write_condition(
    out: &mut String,
    quoted_column: &str,
    value: &Value,
    data_type: &OracleType,
    first: bool,
) {
    out.push_str(if first { " where " } else { " and " });
    out.push_str(quoted_column);
    if value.is_null() {
        out.push_str(" IS NULL");
    } else {
        out.push_str(" = ");
        write_value(out, value, data_type);
    }
}

/// The bytes [`write_condition`] writes, given the bytes [`write_value`] writes for the value.
pub(crate) fn condition_length(
    quoted_column: &str,
    value: &Value,
    value_length: usize,
    first: bool,
) -> usize {
    let lead = if first { " where " } else { " and " };
    let rest = if value.is_null() {
        " IS NULL".len()
    } else {
        " = ".len() + value_length
    };
    lead.len() + quoted_column.len() + rest
}

/// The bytes [`write_rowid_condition`] writes.
pub(crate) fn rowid_condition_length(row_id: &str, first: bool) -> usize {
    let lead = if first {
        " where ROWID = '"
    } else {
        " and ROWID = '"
    };
    lead.len() + row_id.len() + 1
}

/// ` and ROWID = '...'` (or ` where ROWID = '...'` when no condition came before).
pub(crate) fn write_rowid_condition(out: &mut String, row_id: &str, first: bool) {
    out.push_str(if first {
        " where ROWID = '"
    } else {
        " and ROWID = '"
    });
    out.push_str(row_id);
    out.push('\'');
}

/// Splits text longer than [`MAX_SQL_BYTES`] into row pieces on character boundaries.
pub(crate) fn split_pieces(text: &str) -> Vec<&str> {
    let mut pieces = Vec::with_capacity(text.len() / MAX_SQL_BYTES + 1);
    let mut rest = text;
    while rest.len() > MAX_SQL_BYTES {
        let mut cut = MAX_SQL_BYTES;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (piece, after) = rest.split_at(cut);
        pieces.push(piece);
        rest = after;
    }
    pieces.push(rest);
    pieces
}
