//! `redoline-capture redo parse`: JSON Lines of `{"sql_redo":"..."}` in, one JSON line per input
//! line out (contracts.md, "`redoline-capture` command line").
//!
//! Streams: one line is read, parsed and written at a time through buffered reader and writer, so
//! memory is bounded by the longest line. A line that is not JSON, lacks `sql_redo` or does not
//! parse gives `{"error":"..."}` on its line; only an I/O error ends the run early. Columns are
//! written in statement order, by hand (no map type in between).

use std::borrow::Cow;
use std::io::{self, BufRead, Write};

use serde::Deserialize;

use super::ast::{ColumnValue, DmlStatement, RawValue, TableRef};
use super::parse_dml;

/// One input line.
#[derive(Debug, Deserialize)]
struct InputLine<'a> {
    #[serde(borrow)]
    sql_redo: Cow<'a, str>,
}

/// Reads JSON Lines from `input` until it ends and writes one result line each to `output`.
pub fn run_parse(mut input: impl BufRead, output: impl Write) -> io::Result<()> {
    let mut output = io::BufWriter::new(output);
    let mut line = Vec::new();
    let mut rendered = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let mut text = line.as_slice();
        text = text.strip_suffix(b"\n").unwrap_or(text);
        text = text.strip_suffix(b"\r").unwrap_or(text);
        rendered.clear();
        render_line(text, &mut rendered);
        rendered.push(b'\n');
        output.write_all(&rendered)?;
    }
    output.flush()
}

/// The output line (without newline) for one input line.
pub fn render_line(line: &[u8], out: &mut Vec<u8>) {
    match serde_json::from_slice::<InputLine<'_>>(line) {
        Err(error) => render_error(&format!("invalid input line: {error}"), out),
        Ok(input) => match parse_dml(&input.sql_redo) {
            Ok(statement) => render_statement(&statement, out),
            Err(error) => render_error(&error.to_string(), out),
        },
    }
}

/// `{"error":"..."}`.
pub fn render_error(message: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"error\":");
    render_string(message, out);
    out.push(b'}');
}

/// A statement as the contract's JSON object.
pub fn render_statement(statement: &DmlStatement<'_>, out: &mut Vec<u8>) {
    match statement {
        DmlStatement::Insert { table, values } => {
            render_head("INSERT", table, out);
            render_columns("values", values, out);
        }
        DmlStatement::Update {
            table,
            set,
            where_,
            rowid,
        } => {
            render_head("UPDATE", table, out);
            render_columns("set", set, out);
            render_columns("where", where_, out);
            render_rowid(rowid.as_deref(), out);
        }
        DmlStatement::Delete {
            table,
            where_,
            rowid,
        } => {
            render_head("DELETE", table, out);
            render_columns("where", where_, out);
            render_rowid(rowid.as_deref(), out);
        }
    }
    out.push(b'}');
}

fn render_head(op: &str, table: &TableRef<'_>, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"op\":\"");
    out.extend_from_slice(op.as_bytes());
    out.extend_from_slice(b"\",\"schema\":");
    match &table.schema {
        Some(schema) => render_string(schema, out),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"table\":");
    render_string(&table.table, out);
}

fn render_columns(member: &str, columns: &[ColumnValue<'_>], out: &mut Vec<u8>) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(member.as_bytes());
    out.extend_from_slice(b"\":{");
    for (index, (column, value)) in columns.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        render_string(column, out);
        out.push(b':');
        render_value(value, out);
    }
    out.push(b'}');
}

fn render_rowid(rowid: Option<&str>, out: &mut Vec<u8>) {
    if let Some(rowid) = rowid {
        out.extend_from_slice(b",\"rowid\":");
        render_string(rowid, out);
    }
}

/// V of the contract.
pub fn render_value(value: &RawValue<'_>, out: &mut Vec<u8>) {
    match value {
        RawValue::Null => out.extend_from_slice(b"null"),
        RawValue::Text(text) => render_string(text, out),
        RawValue::Unsupported => out.extend_from_slice(b"{\"unsupported\":true}"),
        RawValue::Call { name, args } => {
            out.extend_from_slice(b"{\"fn\":");
            render_string(name, out);
            out.extend_from_slice(b",\"args\":[");
            for (index, arg) in args.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                render_value(arg, out);
            }
            out.extend_from_slice(b"]}");
        }
    }
}

/// A JSON string with the escapes JSON requires (quote, backslash, control characters).
fn render_string(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut run_start = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(bytes.get(run_start..index).unwrap_or_default());
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(byte >> 4)]);
            out.push(HEX[usize::from(byte & 0x0f)]);
        } else {
            out.extend_from_slice(escape);
        }
        run_start = index + 1;
    }
    out.extend_from_slice(bytes.get(run_start..).unwrap_or_default());
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &str) -> String {
        let mut output = Vec::new();
        run_parse(input.as_bytes(), &mut output).unwrap();
        String::from_utf8(output).unwrap()
    }

    #[test]
    fn one_line_out_per_line_in() {
        let output = run(concat!(
            "{\"sql_redo\":\"delete from \\\"A\\\".\\\"T\\\" where \\\"ID\\\" = '1';\"}\n",
            "not json\r\n",
            "{\"sql_redo\":\"drop table x\"}"
        ));
        let lines: Vec<&str> = output.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0],
            r#"{"op":"DELETE","schema":"A","table":"T","where":{"ID":"1"}}"#
        );
        assert!(lines[1].starts_with(r#"{"error":"invalid input line: "#));
        assert!(lines[2].starts_with(r#"{"error":"not an insert, update or delete statement"#));
    }

    #[test]
    fn strings_are_escaped_as_json_requires() {
        let mut out = Vec::new();
        render_string("a\"b\\c\nd\u{1}é", &mut out);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, r#""a\"b\\c\nd\u0001é""#);
        let back: String = serde_json::from_str(&text).unwrap();
        assert_eq!(back, "a\"b\\c\nd\u{1}é");
    }
}
