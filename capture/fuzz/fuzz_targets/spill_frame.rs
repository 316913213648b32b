//! Spill frames and the row codec on arbitrary bytes: no panic, no unbounded allocation, and
//! whatever decodes re-encodes to a row that decodes the same.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use redoline_capture::buffer::{FrameReader, decode_row, encode_row};

fuzz_target!(|data: &[u8]| {
    // The bytes as one payload.
    if let Ok(row) = decode_row(data) {
        let mut again = Vec::new();
        encode_row(&row, &mut again);
        assert_eq!(decode_row(&again).ok(), Some(row));
    }
    // The bytes as a spill file, with the first byte as the frame count the writer claimed.
    let frames = u64::from(data.first().copied().unwrap_or(0) % 8);
    let Ok(mut reader) =
        FrameReader::new(data, Path::new("fuzz.spill"), data.len() as u64, frames, 64)
    else {
        return;
    };
    while let Ok(Some(_row)) = reader.next_row() {}
});
