//! `parse_dml` and the `redo parse` line renderer on arbitrary input: no panic, no hang, and every
//! rendered line is one valid JSON object. The body is shared with the corpus replay test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redoline_capture::fuzz::parse_dml_target(data));
