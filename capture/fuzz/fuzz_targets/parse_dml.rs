//! `parse_dml` and the `redo parse` line renderer on arbitrary input: no panic, no hang, and every
//! rendered line is one valid JSON object.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redoline_capture::redo::cli::{render_line, render_statement};
use redoline_capture::redo::parse_dml;

fuzz_target!(|data: &[u8]| {
    if let Ok(sql) = std::str::from_utf8(data)
        && let Ok(statement) = parse_dml(sql)
    {
        let mut rendered = Vec::new();
        render_statement(&statement, &mut rendered);
        let json: Result<serde_json::Value, _> = serde_json::from_slice(&rendered);
        assert!(
            json.is_ok_and(|value| value.is_object()),
            "invalid JSON for {sql:?}"
        );
    }
    // The same bytes as a `redo parse` input line (mostly an error line, still valid JSON).
    let mut line = Vec::new();
    render_line(data, &mut line);
    assert!(serde_json::from_slice::<serde_json::Value>(&line).is_ok());
});
