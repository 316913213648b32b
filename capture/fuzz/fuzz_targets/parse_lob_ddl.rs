//! The LOB and DDL parsers on arbitrary text: no panic, no hang. The body is shared with the
//! corpus replay test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redoline_capture::fuzz::parse_lob_ddl_target(data));
