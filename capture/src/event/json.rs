//! The little JSON writing the encoders need, appending to a `String` so encoders control the
//! member order and number forms exactly (and avoid building a tree per event).

use std::fmt::Write;

use crate::dictionary::TableSchema;

/// Appends `text` as a JSON string.
///
/// Only ASCII bytes are ever escaped (`"`, `\` and controls), so the text is scanned as bytes,
/// not decoded as characters, and copied in runs between escapes: in the usual text with no
/// escape at all, one scan and one copy. Every escaped byte is ASCII, so each run ends on a
/// character boundary.
pub fn string(out: &mut String, text: &str) {
    out.reserve(text.len() + 2);
    out.push('"');
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            byte if byte < 0x20 => "",
            _ => continue,
        };
        out.push_str(&text[start..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{byte:04x}");
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&text[start..]);
    out.push('"');
}

/// Appends `"name":`.
pub fn key(out: &mut String, name: &str) {
    string(out, name);
    out.push(':');
}

/// Appends `,"schema":"<owner>","table":"<table>"`: the table a change is on, as both the compact
/// event and the Debezium source block name it.
pub fn schema_and_table(out: &mut String, table: &TableSchema) {
    out.push(',');
    key(out, "schema");
    string(out, table.schema());
    out.push(',');
    key(out, "table");
    string(out, table.table());
}

/// Appends an `f64` as a JSON number in its shortest round-trip form, or the string `"NaN"`,
/// `"Infinity"` / `"-Infinity"` (JSON has no such numbers; Jackson writes the same strings).
pub fn f64_number(out: &mut String, value: f64) {
    if value.is_nan() {
        out.push_str("\"NaN\"");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 {
            "\"Infinity\""
        } else {
            "\"-Infinity\""
        });
    } else {
        let _ = write!(out, "{value:?}");
    }
}

/// [`f64_number`] for an `f32`, in the `f32`'s own shortest form (`0.1`, not
/// `0.10000000149011612`).
pub fn f32_number(out: &mut String, value: f32) {
    if value.is_finite() {
        let _ = write!(out, "{value:?}");
    } else {
        f64_number(out, f64::from(value));
    }
}

/// Appends any integer.
pub fn integer(out: &mut String, value: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(value));
}

/// Appends an integer as a JSON string (`"42"`), as Debezium writes SCNs.
pub fn integer_string(out: &mut String, value: impl itoa::Integer) {
    out.push('"');
    integer(out, value);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped() {
        let mut s = String::new();
        string(&mut s, "a\"b\\c\nd\u{01}é");
        assert_eq!(s, r#""a\"b\\c\nd\u0001é""#);
        let back: String = serde_json::from_str(&s).unwrap();
        assert_eq!(back, "a\"b\\c\nd\u{01}é");
    }

    #[test]
    fn floats() {
        let mut s = String::new();
        f32_number(&mut s, 0.1);
        s.push(',');
        f64_number(&mut s, 1e300);
        s.push(',');
        f64_number(&mut s, f64::NEG_INFINITY);
        s.push(',');
        f64_number(&mut s, -0.0);
        assert_eq!(s, "0.1,1e300,\"-Infinity\",-0.0");
    }
}
