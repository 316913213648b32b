//! The LOB and DDL parsers on arbitrary text: no panic, no hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use redoline_capture::redo::{parse_ddl, parse_lob};

fuzz_target!(|sql: &str| {
    let _ = parse_lob(sql);
    let _ = parse_ddl(sql);
});
