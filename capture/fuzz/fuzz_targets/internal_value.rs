//! Oracle's internal value formats (LogMiner's `HEXTORAW` values of `OBJ# n` rows) on arbitrary
//! bytes: no panic, and every error names the type and the value's hex. The body is shared
//! with the corpus replay test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redoline_capture::fuzz::internal_value_target(data));
