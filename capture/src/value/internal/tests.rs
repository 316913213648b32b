use jiff::civil;
use jiff::tz::Offset;
use proptest::prelude::*;

use super::encode;
use super::*;
use crate::value::OracleNumber;
use crate::value::binary::decode_hex;

fn ty(t: &str) -> OracleType {
    OracleType::parse(t).unwrap()
}

fn utc() -> DatabaseFormats {
    DatabaseFormats::new(Offset::UTC)
}

#[allow(clippy::unwrap_in_result, reason = "the hex is the test's own")]
fn decode(t: &str, hex: &str) -> Result<Value, InternalFormatError> {
    let bytes = decode_hex(hex).unwrap();
    decode_internal(&ty(t), &bytes, &utc())
}

fn reason(t: &str, hex: &str) -> InternalReason {
    decode(t, hex).unwrap_err().reason
}

fn num(s: &str) -> Value {
    Value::Number(OracleNumber::parse(s).unwrap())
}

fn dt(s: &str) -> civil::DateTime {
    s.parse().unwrap()
}

// ---------------------------------------------------------------------------------------------
// Known answers

/// The examples of the OCI Programmer's Guide's NUMBER section (0, 5, -5, 2767, -2767, 100000,
/// 1234567), the bounds of NUMBER's range, and the brief's `c102` / `c10b`.
#[test]
fn numbers_decode_as_documented() {
    for (hex, text) in [
        ("80", "0"),
        ("c102", "1"),
        ("c10b", "10"),
        ("c106", "5"),
        ("3e6066", "-5"),
        ("3e5b66", "-10"),
        ("c21c44", "2767"),
        ("3d4a2266", "-2767"),
        ("c30b", "100000"),
        ("c402182e44", "1234567"),
        ("c033", "0.5"),
        ("c002", "0.01"),
        ("bf0b", "0.001"),
        ("bf02", "0.0001"),
        ("c20b0b", "1010"),
        ("c10233", "1.5"),
        ("3e643366", "-1.5"),
        // 1E-130, Oracle's smallest positive NUMBER (a zero is the exponent byte alone).
        ("8002", "1E-130"),
        ("7f6466", "-1E-130"),
    ] {
        assert_eq!(decode("NUMBER", hex).unwrap(), num(text), "{hex}");
    }
    // The largest: 99 in every one of 20 digits at base-100 exponent 62.
    let max = format!("ff{}", "64".repeat(20));
    let expected = format!("{}E86", "99".repeat(20));
    assert_eq!(decode("NUMBER", &max).unwrap(), num(&expected));
    // The same negated has all 20 digits, hence no terminator.
    let min = format!("00{}", "02".repeat(20));
    assert_eq!(
        decode("NUMBER", &min).unwrap(),
        num(&format!("-{expected}"))
    );
    // INTEGER and FLOAT store the same format.
    assert_eq!(decode("INTEGER", "c20b").unwrap(), num("1000"));
    assert_eq!(decode("FLOAT(63)", "c10233").unwrap(), num("1.5"));
}

#[test]
fn malformed_numbers_are_typed_errors() {
    assert_eq!(
        reason("NUMBER", "ff65"),
        InternalReason::NumberInfinity("positive")
    );
    assert_eq!(
        reason("NUMBER", "00"),
        InternalReason::NumberInfinity("negative")
    );
    assert_eq!(
        reason("NUMBER", "c1"),
        InternalReason::Length {
            expected: "1 to 21 (an exponent byte and 1 to 20 digits)",
            actual: 1
        }
    );
    assert_eq!(
        reason("NUMBER", "c100"),
        InternalReason::NumberDigit { at: 1, byte: 0 }
    );
    assert_eq!(
        reason("NUMBER", "c10265"),
        InternalReason::NumberDigit { at: 2, byte: 0x65 }
    );
    assert_eq!(reason("NUMBER", "3e01"), InternalReason::NumberTerminator);
    // The brief's guess for -10, with 101 (a zero digit) where the terminator belongs.
    assert_eq!(reason("NUMBER", "3e5b65"), InternalReason::NumberTerminator);
    assert_eq!(reason("NUMBER", "3e6601"), InternalReason::NumberTerminator);
    assert!(matches!(
        reason("NUMBER", &format!("c1{}", "02".repeat(21))),
        InternalReason::Length { actual: 22, .. }
    ));
}

/// NUMBER(p,s) refuses what `typed` refuses, with the same reason.
#[test]
fn numbers_must_fit_the_declared_precision_and_scale() {
    assert_eq!(decode("NUMBER(5,2)", "c10233").unwrap(), num("1.5"));
    assert_eq!(
        reason("NUMBER(5,2)", "c1020206"), // 1.0105
        InternalReason::Declared(InvalidReason::NumberDoesNotFit {
            precision: 5,
            scale: 2
        })
    );
    assert_eq!(
        reason("NUMBER(3)", "c20b"), // 1000
        InternalReason::Declared(InvalidReason::NumberDoesNotFit {
            precision: 3,
            scale: 0
        })
    );
    assert!(decode("INTEGER", "c033").is_err());
    let error = decode("NUMBER(3)", "c20b").unwrap_err();
    assert_eq!(
        error.to_string(),
        "NUMBER(3) value HEXTORAW('c20b') does not fit NUMBER(3,0) without rounding"
    );
}

/// OCI's DATE examples (1992, 4712 BC), 101 BC as a public write-up of that table stores it
/// (century and year both 99), and the DUMP outputs of a TIMESTAMP and a TIMESTAMP WITH TIME
/// ZONE column quoted on public Q&A pages ("How Oracle stores TIMESTAMP WITH TIME ZONE
/// internally"; "Oracle TIMESTAMP internal format", DUMP type 180).
#[test]
fn date_times_decode_as_documented() {
    let hex = |bytes: &[u8]| crate::value::binary::encode_hex(bytes);
    assert_eq!(
        decode("DATE", &hex(&[120, 124, 1, 2, 4, 5, 6])).unwrap(),
        Value::Date(dt("2024-01-02T03:04:05"))
    );
    // The OCI guide's DATE example: 30 November 1992, 3:17 PM.
    assert_eq!(
        decode("DATE", &hex(&[119, 192, 11, 30, 16, 18, 1])).unwrap(),
        Value::Date(dt("1992-11-30T15:17:00"))
    );
    // 1 January 4712 BC, astronomical year -4711.
    assert_eq!(
        decode("DATE", &hex(&[53, 88, 1, 1, 1, 1, 1])).unwrap(),
        Value::Date(civil::date(-4711, 1, 1).at(0, 0, 0, 0))
    );
    // Oracle's last second.
    assert_eq!(
        decode("DATE", &hex(&[199, 199, 12, 31, 24, 60, 60])).unwrap(),
        Value::Date(dt("9999-12-31T23:59:59"))
    );
    // 1 BC (astronomical 0), 100 BC and 101 BC (century and year both 99).
    assert_eq!(
        decode("DATE", &hex(&[100, 99, 12, 31, 24, 60, 60])).unwrap(),
        Value::Date(civil::date(0, 12, 31).at(23, 59, 59, 0))
    );
    assert_eq!(
        decode("DATE", &hex(&[99, 100, 6, 1, 1, 1, 1])).unwrap(),
        Value::Date(civil::date(-99, 6, 1).at(0, 0, 0, 0))
    );
    assert_eq!(
        decode("DATE", &hex(&[99, 99, 6, 1, 1, 1, 1])).unwrap(),
        Value::Date(civil::date(-100, 6, 1).at(0, 0, 0, 0))
    );
    assert_eq!(
        decode(
            "TIMESTAMP",
            &hex(&[120, 115, 7, 31, 10, 56, 7, 9, 92, 88, 216])
        )
        .unwrap(),
        Value::Timestamp(dt("2015-07-31T09:55:06.157047"))
    );
    assert_eq!(
        decode("TIMESTAMP(0)", &hex(&[120, 115, 7, 31, 10, 56, 7])).unwrap(),
        Value::Timestamp(dt("2015-07-31T09:55:06"))
    );
    // 1999-10-29 21:00:00 -07:00 is stored as 1999-10-30 04:00:00 UTC with the offset.
    assert_eq!(
        decode(
            "TIMESTAMP WITH TIME ZONE",
            &hex(&[119, 199, 10, 30, 5, 1, 1, 0, 0, 0, 0, 13, 60])
        )
        .unwrap(),
        Value::TimestampTz {
            local: dt("1999-10-29T21:00:00"),
            offset: Offset::from_seconds(-7 * 3600).unwrap()
        }
    );
    // +05:30 and -03:30: both fields carry the sign.
    assert_eq!(
        decode(
            "TIMESTAMP WITH TIME ZONE",
            &hex(&[120, 124, 1, 1, 1, 1, 1, 0, 0, 0, 0, 25, 90])
        )
        .unwrap(),
        Value::TimestampTz {
            local: dt("2024-01-01T05:30:00"),
            offset: Offset::from_seconds(5 * 3600 + 1800).unwrap()
        }
    );
    assert_eq!(
        decode(
            "TIMESTAMP WITH TIME ZONE",
            &hex(&[120, 124, 1, 1, 1, 1, 1, 0, 0, 0, 0, 17, 30])
        )
        .unwrap(),
        Value::TimestampTz {
            local: dt("2023-12-31T20:30:00"),
            offset: Offset::from_seconds(-(3 * 3600 + 1800)).unwrap()
        }
    );
    // The same instant with the region US/Pacific instead of an offset.
    assert_eq!(
        reason(
            "TIMESTAMP WITH TIME ZONE",
            &hex(&[119, 199, 10, 30, 5, 1, 1, 0, 0, 0, 0, 137, 156])
        ),
        InternalReason::TimeZoneRegion(0x899c)
    );
    // LOCAL TIME ZONE: a reading in DBTIMEZONE.
    let paris = DatabaseFormats::new(Offset::from_seconds(3600).unwrap());
    assert_eq!(
        decode_internal(
            &ty("TIMESTAMP WITH LOCAL TIME ZONE"),
            &[120, 124, 1, 1, 2, 1, 1],
            &paris
        )
        .unwrap(),
        Value::TimestampLtz("2024-01-01T00:00:00Z".parse().unwrap())
    );
}

#[test]
fn malformed_date_times_are_typed_errors() {
    let hex = |bytes: &[u8]| crate::value::binary::encode_hex(bytes);
    let length = |expected, actual| InternalReason::Length { expected, actual };
    let field = |field, byte| InternalReason::Field { field, byte };
    let field_value = |field, value| InternalReason::FieldValue { field, value };
    for (t, bytes, expected) in [
        ("DATE", vec![120, 124, 1, 2, 4, 5], length("7", 6)),
        ("DATE", vec![120, 124, 13, 2, 4, 5, 6], field("month", 13)),
        ("DATE", vec![120, 124, 1, 0, 4, 5, 6], field("day", 0)),
        ("DATE", vec![120, 124, 1, 2, 25, 5, 6], field("hour", 25)),
        ("DATE", vec![120, 124, 1, 2, 4, 0, 6], field("minute", 0)),
        ("DATE", vec![120, 124, 1, 2, 4, 5, 61], field("second", 61)),
        ("DATE", vec![120, 99, 1, 2, 4, 5, 6], field("year", 99)),
        (
            "DATE",
            vec![100, 100, 1, 1, 1, 1, 1],
            field_value("year", 0),
        ),
        (
            "DATE",
            vec![52, 88, 1, 1, 1, 1, 1],
            field_value("year", -4812),
        ),
        (
            "TIMESTAMP",
            vec![120, 124, 1, 2, 4, 5, 6, 0x3b, 0x9a, 0xca, 0x00],
            field_value("nanoseconds", 1_000_000_000),
        ),
        (
            "TIMESTAMP",
            vec![120, 124, 1, 2, 4, 5, 6, 0],
            length("7 or 11", 8),
        ),
        (
            "TIMESTAMP WITH TIME ZONE",
            vec![120, 124, 1, 2, 4, 5, 6, 0, 0, 0, 0, 20],
            length("13", 12),
        ),
        (
            "TIMESTAMP WITH TIME ZONE",
            vec![120, 124, 1, 2, 4, 5, 6, 0, 0, 0, 0, 35, 60],
            field("time zone hour", 35),
        ),
        (
            "TIMESTAMP WITH TIME ZONE",
            vec![120, 124, 1, 2, 4, 5, 6, 0, 0, 0, 0, 21, 30],
            InternalReason::MixedSigns,
        ),
        (
            "TIMESTAMP WITH TIME ZONE",
            vec![120, 124, 1, 2, 4, 5, 6, 0, 0, 0, 0, 34, 61],
            field_value("time zone offset in minutes", 841),
        ),
    ] {
        assert_eq!(reason(t, &hex(&bytes)), expected, "{t} {bytes:?}");
    }
    // 30 February exists in no calendar.
    assert!(matches!(
        reason("DATE", &hex(&[120, 124, 2, 30, 1, 1, 1])),
        InternalReason::DateTime(_)
    ));
    let error = decode("DATE", &hex(&[120, 124, 13, 2, 4, 5, 6])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "DATE value HEXTORAW('787c0d02040506') has the month byte 13, out of range"
    );
}

#[test]
fn fractions_must_fit_the_declared_precision() {
    let bytes = [120, 115, 7, 31, 10, 56, 7, 9, 92, 88, 216]; // .157047
    assert!(decode_internal(&ty("TIMESTAMP(6)"), &bytes, &utc()).is_ok());
    assert_eq!(
        decode_internal(&ty("TIMESTAMP(3)"), &bytes, &utc())
            .unwrap_err()
            .reason,
        InternalReason::Declared(InvalidReason::FractionTooPrecise(3))
    );
}

#[test]
fn intervals_decode_as_documented() {
    assert_eq!(
        decode("INTERVAL YEAR TO MONTH", "800000013e").unwrap(),
        Value::IntervalYearToMonth { months: 14 }
    );
    assert_eq!(
        decode("INTERVAL YEAR TO MONTH", "7fffffff3a").unwrap(),
        Value::IntervalYearToMonth { months: -14 }
    );
    assert_eq!(
        decode("INTERVAL YEAR TO MONTH", "800000003c").unwrap(),
        Value::IntervalYearToMonth { months: 0 }
    );
    // +02 03:04:05.123456
    assert_eq!(
        decode("INTERVAL DAY TO SECOND", "800000023f4041875bca00").unwrap(),
        Value::IntervalDayToSecond {
            nanoseconds: ((2 * 24 + 3) * 3600 + 4 * 60 + 5) as i128 * 1_000_000_000 + 123_456_000
        }
    );
    // -00 00:00:00.5
    assert_eq!(
        decode("INTERVAL DAY TO SECOND", "800000003c3c3c62329b00").unwrap(),
        Value::IntervalDayToSecond {
            nanoseconds: -500_000_000
        }
    );
    assert_eq!(
        reason("INTERVAL YEAR TO MONTH", "800000013a"),
        InternalReason::MixedSigns
    );
    assert_eq!(
        reason("INTERVAL YEAR TO MONTH", "8000000148"),
        InternalReason::Field {
            field: "months",
            byte: 72
        }
    );
    assert_eq!(
        reason("INTERVAL YEAR TO MONTH", "ffffffff3c"),
        InternalReason::FieldValue {
            field: "years",
            value: 0x7fff_ffff
        }
    );
    assert_eq!(
        reason("INTERVAL DAY TO SECOND", "800000023f4041"),
        InternalReason::Length {
            expected: "11",
            actual: 7
        }
    );
    assert_eq!(
        reason("INTERVAL DAY TO SECOND", "8000000254404180000000"),
        InternalReason::Field {
            field: "hours",
            byte: 84
        }
    );
    // INTERVAL YEAR(2) holds at most 99 years.
    assert_eq!(
        reason("INTERVAL YEAR(2) TO MONTH", "800000643c"),
        InternalReason::Declared(InvalidReason::IntervalTooLarge(2))
    );
}

#[test]
fn binary_floats_decode_as_documented() {
    assert_eq!(
        decode("BINARY_FLOAT", "bf800000").unwrap(),
        Value::BinaryFloat(1.0)
    );
    assert_eq!(
        decode("BINARY_FLOAT", "407fffff").unwrap(),
        Value::BinaryFloat(-1.0)
    );
    assert_eq!(
        decode("BINARY_FLOAT", "80000000").unwrap(),
        Value::BinaryFloat(0.0)
    );
    assert_eq!(
        decode("BINARY_FLOAT", "ff800000").unwrap(),
        Value::BinaryFloat(f32::INFINITY)
    );
    assert_eq!(
        decode("BINARY_FLOAT", "007fffff").unwrap(),
        Value::BinaryFloat(f32::NEG_INFINITY)
    );
    assert!(
        matches!(decode("BINARY_FLOAT", "ffc00000").unwrap(), Value::BinaryFloat(v) if v.is_nan())
    );
    assert_eq!(
        decode("BINARY_DOUBLE", "bff0000000000000").unwrap(),
        Value::BinaryDouble(1.0)
    );
    assert_eq!(
        decode("BINARY_DOUBLE", "3fdbffffffffffff").unwrap(),
        Value::BinaryDouble(-10.0)
    );
    assert_eq!(
        reason("BINARY_DOUBLE", "bff00000"),
        InternalReason::Length {
            expected: "8",
            actual: 4
        }
    );
}

#[test]
fn text_decodes_in_each_character_set() {
    let with = |set| DatabaseFormats {
        character_set: set,
        ..utc()
    };
    let varchar = ty("VARCHAR2(20)");
    let text = |set, bytes: &[u8]| decode_internal(&varchar, bytes, &with(set));
    assert_eq!(
        text(CharacterSet::Al32Utf8, "é€😀".as_bytes()).unwrap(),
        Value::Text("é€😀".into())
    );
    // CESU-8: U+1F600 as the surrogates D83D DE00, three bytes each.
    assert_eq!(
        text(CharacterSet::Utf8, &[0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]).unwrap(),
        Value::Text("😀".into())
    );
    assert_eq!(
        text(CharacterSet::We8MsWin1252, &[0x80, 0x99, 0x9f, 0xe9]).unwrap(),
        Value::Text("€™Ÿé".into())
    );
    assert_eq!(
        text(CharacterSet::We8Iso8859P1, &[0x80, 0xe9]).unwrap(),
        Value::Text("\u{80}é".into())
    );
    assert_eq!(
        text(CharacterSet::Us7Ascii, b"AB ").unwrap(),
        Value::Text("AB ".into())
    );
    for (set, bytes, at) in [
        (CharacterSet::Al32Utf8, vec![b'a', 0xff], 1),
        (CharacterSet::Al32Utf8, vec![0xed, 0xa0, 0xbd], 0),
        (CharacterSet::Utf8, vec![b'a', 0xf0, 0x9f, 0x98, 0x80], 1),
        (CharacterSet::Utf8, vec![b'a', b'b', 0xed, 0xa0, 0xbd], 2),
        (CharacterSet::Utf8, vec![0xe0, 0x81, 0x81], 0),
        (CharacterSet::We8MsWin1252, vec![b'a', 0x81], 1),
        (CharacterSet::Us7Ascii, vec![b'a', 0xe9], 1),
    ] {
        assert_eq!(
            text(set, &bytes).unwrap_err().reason,
            InternalReason::Text {
                charset: set.name(),
                at
            },
            "{set:?} {bytes:?}"
        );
    }
    // National: UTF-16 big-endian, a surrogate pair for U+1F600.
    let nvarchar = ty("NVARCHAR2(10)");
    assert_eq!(
        decode_internal(&nvarchar, &[0x00, 0x41, 0xd8, 0x3d, 0xde, 0x00], &utc()).unwrap(),
        Value::Text("A😀".into())
    );
    // A lone high surrogate, then an odd byte count: both fail at the second unit.
    for bytes in [&[0x00, 0x41, 0xd8, 0x3d][..], &[0x00, 0x41, 0x00]] {
        assert_eq!(
            decode_internal(&nvarchar, bytes, &utc())
                .unwrap_err()
                .reason,
            InternalReason::Text {
                charset: "AL16UTF16",
                at: 2
            },
            "{bytes:?}"
        );
    }
    // CHAR keeps its padding; lengths count characters, as `typed` does.
    assert_eq!(
        decode("CHAR(3)", "612020").unwrap(),
        Value::Text("a  ".into())
    );
    assert_eq!(
        reason("VARCHAR2(2)", "616263"),
        InternalReason::Declared(InvalidReason::TooLong { length: 3, max: 2 })
    );
    assert_eq!(
        CharacterSet::from_name("we8mswin1252"),
        Ok(CharacterSet::We8MsWin1252)
    );
    assert_eq!(
        NationalCharacterSet::from_name("UTF8"),
        Ok(NationalCharacterSet::Utf8)
    );
    assert_eq!(
        CharacterSet::from_name("JA16SJIS").unwrap_err().to_string(),
        "character set JA16SJIS has no decoder for internal-format values (AL32UTF8, UTF8, \
         WE8MSWIN1252, WE8ISO8859P1, US7ASCII; national AL16UTF16, UTF8)"
    );
}

#[test]
fn raw_boolean_empty_and_other_types() {
    assert_eq!(
        decode("RAW(4)", "deadbeef").unwrap(),
        Value::Bytes(vec![0xde, 0xad, 0xbe, 0xef])
    );
    assert_eq!(
        reason("RAW(2)", "deadbeef"),
        InternalReason::Declared(InvalidReason::TooLong { length: 4, max: 2 })
    );
    assert_eq!(decode("BOOLEAN", "01").unwrap(), Value::Boolean(true));
    assert_eq!(
        reason("BOOLEAN", "02"),
        InternalReason::Field {
            field: "BOOLEAN",
            byte: 2
        }
    );
    for t in ["NUMBER", "DATE", "VARCHAR2(5)", "RAW(5)", "BINARY_FLOAT"] {
        assert_eq!(decode(t, "").unwrap(), Value::Null, "{t}");
    }
    for t in ["CLOB", "BLOB", "LONG", "ROWID", "XMLTYPE", "JSON"] {
        assert_eq!(reason(t, "00"), InternalReason::NotDecoded, "{t}");
    }
    let long = vec![0xab; 200];
    let error = decode_internal(&ty("NUMBER"), &long, &utc()).unwrap_err();
    assert_eq!(error.hex, format!("{}…", "ab".repeat(60)));
}

// ---------------------------------------------------------------------------------------------
// Round trips: value → bytes (the tests' encoder) → the same value, over each type's domain

fn round_trip(
    t: &OracleType,
    value: &Value,
    formats: &DatabaseFormats,
) -> Result<(), TestCaseError> {
    let bytes =
        encode::encode(t, value, formats).ok_or_else(|| TestCaseError::fail("no encoding"))?;
    let decoded =
        decode_internal(t, &bytes, formats).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&decoded, value, "{} bytes {:02x?}", t, bytes);
    Ok(())
}

/// A NUMBER in Oracle's range, built as text from base-100 digits (first and last non-zero)
/// and the first digit's base-100 exponent: independent of both codecs.
fn any_number() -> impl Strategy<Value = OracleNumber> {
    let digits = prop::collection::vec(0u8..100, 0..19);
    (
        any::<bool>(),
        1u8..100,
        digits,
        1u8..100,
        -65i32..=62,
        any::<bool>(),
    )
        .prop_map(|(negative, first, middle, last, exponent, single)| {
            let mut pairs = vec![first];
            if !single {
                pairs.extend(middle);
                pairs.push(last);
            }
            let mut text = String::from(if negative { "-" } else { "" });
            for d in &pairs {
                text.push_str(&format!("{d:02}"));
            }
            text.push_str(&format!("E{}", 2 * (exponent - (pairs.len() as i32 - 1))));
            OracleNumber::parse(&text).unwrap()
        })
}

/// A civil date-time in Oracle's range (4712 BC to 9999 AD).
fn any_date_time() -> impl Strategy<Value = civil::DateTime> {
    (
        -4711i16..=9999,
        1i8..=12,
        1i8..=31,
        0i8..24,
        0i8..60,
        0i8..60,
        0i32..1_000_000_000,
    )
        .prop_filter_map("no such day", |(y, mo, d, h, mi, s, ns)| {
            civil::DateTime::new(y, mo, d, h, mi, s, ns).ok()
        })
}

fn any_offset() -> impl Strategy<Value = Offset> {
    (-12 * 60..=14 * 60i32).prop_map(|minutes| Offset::from_seconds(minutes * 60).unwrap())
}

fn any_character_set() -> impl Strategy<Value = CharacterSet> {
    prop_oneof![
        Just(CharacterSet::Al32Utf8),
        Just(CharacterSet::Utf8),
        Just(CharacterSet::We8MsWin1252),
        Just(CharacterSet::We8Iso8859P1),
        Just(CharacterSet::Us7Ascii),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn numbers_round_trip(n in any_number()) {
        round_trip(&ty("NUMBER"), &Value::Number(n), &utc())?;
    }

    #[test]
    fn numbers_sort_as_their_bytes(a in any_number(), b in any_number()) {
        // The documented purpose of the format: bytes compare as the numbers do.
        let (x, y) = (encode::number(&a), encode::number(&b));
        let by_value = a.to_f64().partial_cmp(&b.to_f64()).unwrap();
        if by_value != std::cmp::Ordering::Equal {
            prop_assert_eq!(x.cmp(&y), by_value, "{} {}", a, b);
        }
    }

    #[test]
    fn dates_and_timestamps_round_trip(d in any_date_time()) {
        let date = d.with().subsec_nanosecond(0).build().unwrap();
        round_trip(&ty("DATE"), &Value::Date(date), &utc())?;
        round_trip(&ty("TIMESTAMP(9)"), &Value::Timestamp(d), &utc())?;
        round_trip(&ty("TIMESTAMP(0)"), &Value::Timestamp(date), &utc())?;
    }

    #[test]
    fn timestamps_with_time_zone_round_trip(local in any_date_time(), offset in any_offset()) {
        let t = ty("TIMESTAMP(9) WITH TIME ZONE");
        let value = Value::TimestampTz { local, offset };
        // Readings whose UTC time falls outside the years Oracle stores have no encoding.
        if encode::encode(&t, &value, &utc()).is_some() {
            round_trip(&t, &value, &utc())?;
        }
    }

    #[test]
    fn timestamps_with_local_time_zone_round_trip(
        seconds in -62_135_596_800i64..=253_402_200_000,
        nanos in 0i32..1_000_000_000,
        zone in any_offset(),
    ) {
        let instant = jiff::Timestamp::new(seconds, nanos).unwrap();
        let formats = DatabaseFormats::new(zone);
        round_trip(&ty("TIMESTAMP(9) WITH LOCAL TIME ZONE"), &Value::TimestampLtz(instant), &formats)?;
    }

    #[test]
    fn binary_floats_round_trip_every_bit_pattern(bits in any::<u32>(), wide in any::<u64>()) {
        let bytes = encode::binary_float(f32::from_bits(bits));
        let Value::BinaryFloat(v) = decode_internal(&ty("BINARY_FLOAT"), &bytes, &utc()).unwrap() else {
            panic!("not a BINARY_FLOAT");
        };
        prop_assert_eq!(v.to_bits(), bits);
        let bytes = encode::binary_double(f64::from_bits(wide));
        let Value::BinaryDouble(v) = decode_internal(&ty("BINARY_DOUBLE"), &bytes, &utc()).unwrap() else {
            panic!("not a BINARY_DOUBLE");
        };
        prop_assert_eq!(v.to_bits(), wide);
    }

    #[test]
    fn binary_floats_sort_as_their_bytes(a in any::<f64>(), b in any::<f64>()) {
        // NaNs do not compare, and +0 and -0 are equal numbers with different bytes.
        let order = a.partial_cmp(&b).filter(|&o| o != std::cmp::Ordering::Equal);
        if let Some(order) = order {
            prop_assert_eq!(encode::binary_double(a).cmp(&encode::binary_double(b)), order);
        }
    }

    #[test]
    fn intervals_round_trip(
        months in -(1_000_000_000i64 * 12 - 1)..=(1_000_000_000 * 12 - 1),
        nanoseconds in -(1_000_000_000i128 * 86_400 * 1_000_000_000 - 1)..=(1_000_000_000i128 * 86_400 * 1_000_000_000 - 1),
    ) {
        round_trip(&ty("INTERVAL YEAR(9) TO MONTH"), &Value::IntervalYearToMonth { months }, &utc())?;
        round_trip(&ty("INTERVAL DAY(9) TO SECOND(9)"), &Value::IntervalDayToSecond { nanoseconds }, &utc())?;
    }

    #[test]
    fn text_round_trips_in_every_character_set(text in "\\PC{1,40}", set in any_character_set()) {
        let formats = DatabaseFormats { character_set: set, ..utc() };
        let t = ty("VARCHAR2(4000 CHAR)");
        let value = Value::Text(text.clone());
        // A character the set lacks has no encoding; the narrow sets get text they can hold.
        match encode::text(&text, set) {
            Some(_) => round_trip(&t, &value, &formats)?,
            None => {
                let narrowed: String = text.chars().map(|c| if c.is_ascii() { c } else { 'x' }).collect();
                round_trip(&t, &Value::Text(narrowed), &formats)?;
            }
        }
        for national in [NationalCharacterSet::Al16Utf16, NationalCharacterSet::Utf8] {
            let formats = DatabaseFormats { national_character_set: national, ..utc() };
            round_trip(&ty("NVARCHAR2(2000)"), &value, &formats)?;
        }
    }

    #[test]
    fn windows_1252_round_trips_its_repertoire(bytes in prop::collection::vec(any::<u8>(), 1..64)) {
        let formats = DatabaseFormats { character_set: CharacterSet::We8MsWin1252, ..utc() };
        if let Ok(value) = decode_internal(&ty("VARCHAR2(100)"), &bytes, &formats) {
            prop_assert_eq!(encode::encode(&ty("VARCHAR2(100)"), &value, &formats), Some(bytes));
        }
    }

    #[test]
    fn raw_round_trips(bytes in prop::collection::vec(any::<u8>(), 1..2000)) {
        round_trip(&ty("RAW(2000)"), &Value::Bytes(bytes), &utc())?;
    }

    /// Any bytes for any type: a value or a typed error naming the hex, never a panic; and what
    /// decodes is canonical enough that its encoding decodes to the same value.
    #[test]
    fn any_bytes_decode_or_fail_cleanly(
        index in 0usize..TYPES.len(),
        bytes in prop::collection::vec(any::<u8>(), 0..24),
        set in any_character_set(),
    ) {
        let t = ty(TYPES[index]);
        let formats = DatabaseFormats { character_set: set, ..utc() };
        match decode_internal(&t, &bytes, &formats) {
            Ok(value) => {
                if let Some(again) = encode::encode(&t, &value, &formats) {
                    let redecoded = decode_internal(&t, &again, &formats).unwrap();
                    prop_assert!(same(&redecoded, &value), "{} {:02x?}: {:?} then {:?}", t, bytes, value, redecoded);
                }
            }
            Err(error) => prop_assert!(crate::value::binary::encode_hex(&bytes).starts_with(error.hex.trim_end_matches('…'))),
        }
    }
}

const TYPES: &[&str] = &[
    "NUMBER",
    "NUMBER(10,2)",
    "INTEGER",
    "FLOAT",
    "BINARY_FLOAT",
    "BINARY_DOUBLE",
    "CHAR(10)",
    "VARCHAR2(30)",
    "NCHAR(5)",
    "NVARCHAR2(30)",
    "RAW(16)",
    "DATE",
    "TIMESTAMP",
    "TIMESTAMP(9) WITH TIME ZONE",
    "TIMESTAMP WITH LOCAL TIME ZONE",
    "INTERVAL YEAR(9) TO MONTH",
    "INTERVAL DAY(9) TO SECOND(9)",
    "BOOLEAN",
    "CLOB",
];

/// Equality with NaN equal to itself.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::BinaryFloat(x), Value::BinaryFloat(y)) => x.to_bits() == y.to_bits(),
        (Value::BinaryDouble(x), Value::BinaryDouble(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}
