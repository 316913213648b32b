//! Spill frames and the row codec on arbitrary bytes: no panic, no unbounded allocation, and
//! whatever decodes re-encodes to a row that decodes the same. The body is shared with the corpus
//! replay test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redoline_capture::fuzz::spill_frame_target(data));
