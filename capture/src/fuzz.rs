//! The bodies of the fuzz targets in `capture/fuzz`: libFuzzer runs them there (`make fuzz`), and
//! the normal test build replays the committed corpus and mutations of it through the very same
//! functions (`tests/fuzz_corpus.rs`). Each takes the raw fuzz input and panics when a property the
//! target checks does not hold; not for use outside fuzzing and tests.

use std::path::Path;

use crate::buffer::{FrameReader, decode_row, encode_row};
use crate::dictionary::{LengthSemantics, OracleType};
use crate::redo::cli::{render_line, render_statement};
use crate::redo::{parse_ddl, parse_dml, parse_extended_begin, parse_extended_write, parse_lob};
use crate::source::chunk_plan::ChunkPlan;
use crate::value::binary::encode_hex;
use crate::value::internal::{
    CharacterSet, DatabaseFormats, NationalCharacterSet, decode_internal,
};

/// A target's body: the fuzz input in, a panic when a property does not hold.
pub type Target = fn(&[u8]);

/// Every target by its name in `capture/fuzz/fuzz_targets/<name>.rs`.
pub const TARGETS: &[(&str, Target)] = &[
    ("parse_dml", parse_dml_target),
    ("parse_lob_ddl", parse_lob_ddl_target),
    ("spill_frame", spill_frame_target),
    ("internal_value", internal_value_target),
    ("chunk_plan", chunk_plan_target),
];

/// `parse_dml` and the `redo parse` line renderer: no panic, no hang, and every rendered line is
/// one valid JSON object.
pub fn parse_dml_target(data: &[u8]) {
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
}

/// The LOB, extended-string (32K rows) and DDL parsers on the longest valid UTF-8 prefix of the input (what libFuzzer's
/// `&str` argument used to be): no panic, no hang.
pub fn parse_lob_ddl_target(data: &[u8]) {
    let sql = match std::str::from_utf8(data) {
        Ok(sql) => sql,
        Err(error) => data
            .get(..error.valid_up_to())
            .and_then(|valid| std::str::from_utf8(valid).ok())
            .unwrap_or_default(),
    };
    let _ = parse_lob(sql);
    let _ = parse_extended_begin(sql);
    let _ = parse_extended_write(sql);
    let _ = parse_ddl(sql);
}

/// Spill frames and the row codec: no panic, no unbounded allocation, and whatever decodes
/// re-encodes to a row that decodes the same.
pub fn spill_frame_target(data: &[u8]) {
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
}

/// The column types `internal_value` decodes for, chosen by the input's first byte.
fn internal_value_types() -> [OracleType; 22] {
    use OracleType as T;
    let number = |precision, scale| T::Number { precision, scale };
    [
        number(None, None),
        number(Some(10), Some(2)),
        number(Some(5), Some(-2)),
        number(None, Some(0)),
        T::Float {
            binary_precision: 63,
        },
        T::BinaryFloat,
        T::BinaryDouble,
        T::Char {
            length: 10,
            semantics: LengthSemantics::Default,
        },
        T::Varchar2 {
            length: 4000,
            semantics: LengthSemantics::Byte,
        },
        T::NChar { length: 10 },
        T::NVarchar2 { length: 2000 },
        T::Raw { length: 2000 },
        T::Date,
        T::Timestamp {
            fractional_precision: 9,
        },
        T::Timestamp {
            fractional_precision: 3,
        },
        T::TimestampWithTimeZone {
            fractional_precision: 9,
        },
        T::TimestampWithLocalTimeZone {
            fractional_precision: 6,
        },
        T::IntervalYearToMonth { year_precision: 9 },
        T::IntervalDayToSecond {
            day_precision: 9,
            fractional_precision: 9,
        },
        T::IntervalDayToSecond {
            day_precision: 2,
            fractional_precision: 6,
        },
        T::Boolean,
        T::Clob,
    ]
}

/// The internal-format decoders (`value::internal`, LogMiner's `HEXTORAW` values of `OBJ# n`
/// rows): the first byte picks the column type, the second the character sets and the database
/// time zone, the rest is the value. No panic; an error names the type and shows a prefix of
/// the value's hex.
pub fn internal_value_target(data: &[u8]) {
    let [type_byte, format_byte, bytes @ ..] = data else {
        return;
    };
    let types = internal_value_types();
    let data_type = &types[usize::from(*type_byte) % types.len()];
    let sets = [
        CharacterSet::Al32Utf8,
        CharacterSet::Utf8,
        CharacterSet::We8MsWin1252,
        CharacterSet::We8Iso8859P1,
        CharacterSet::Us7Ascii,
    ];
    let offset_hours = i32::from(format_byte >> 4) - 8;
    let formats = DatabaseFormats {
        character_set: sets[usize::from(format_byte & 0x07) % sets.len()],
        national_character_set: if format_byte & 0x08 == 0 {
            NationalCharacterSet::Al16Utf16
        } else {
            NationalCharacterSet::Utf8
        },
        database_time_zone: jiff::tz::Offset::from_seconds(offset_hours * 3600)
            .unwrap_or(jiff::tz::Offset::UTC),
    };
    match decode_internal(data_type, bytes, &formats) {
        Ok(value) => {
            // Only a zero-length value is NULL.
            assert_eq!(
                value.is_null(),
                bytes.is_empty(),
                "{value} from {bytes:02x?}"
            );
            let _ = value.to_string();
        }
        Err(error) => {
            assert_eq!(&error.data_type, data_type);
            let shown = error.hex.trim_end_matches('…');
            assert!(
                encode_hex(bytes).starts_with(shown),
                "the error shows {shown}, not the value's hex"
            );
            let _ = error.to_string();
        }
    }
}

/// The packed chunk plan of a bookmark (`source::chunk_plan`), bytes that come back from Kafka:
/// no panic, no allocation beyond what the input holds, and whatever decodes encodes to bytes
/// that decode to the same plan. The same input is also tried as the stored text (base64) and as
/// the JSON a bookmark holds (the packed string, or an older bookmark's list of ranges).
pub fn chunk_plan_target(data: &[u8]) {
    if let Ok(plan) = ChunkPlan::from_bytes(data) {
        let again = ChunkPlan::from_bytes(&plan.to_bytes());
        assert_eq!(again.as_ref(), Ok(&plan), "{data:02x?}");
        assert_eq!(ChunkPlan::decode(&plan.encode()).as_ref(), Ok(&plan));
        // Every chunk kept is reachable at its index.
        for index in plan.first()..plan.len() {
            assert!(plan.get(index).is_some());
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(plan) = ChunkPlan::decode(text) {
            assert_eq!(ChunkPlan::decode(&plan.encode()), Ok(plan));
        }
        if let Ok(plan) = serde_json::from_str::<ChunkPlan>(text) {
            let json = serde_json::to_string(&plan).unwrap_or_default();
            assert_eq!(serde_json::from_str::<ChunkPlan>(&json).ok(), Some(plan));
        }
    }
}
