//! The packed chunk plan of a bookmark on arbitrary bytes: no panic, no unbounded allocation,
//! and whatever decodes encodes back to the same plan. The body is shared with the corpus replay
//! test.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| redoline_capture::fuzz::chunk_plan_target(data));
