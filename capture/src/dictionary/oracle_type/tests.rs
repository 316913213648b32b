//! Parsing of Oracle type strings.
use super::*;

fn parse(s: &str) -> OracleType {
    OracleType::parse(s).unwrap()
}

#[test]
fn numbers() {
    assert_eq!(
        parse("NUMBER"),
        OracleType::Number {
            precision: None,
            scale: None
        }
    );
    assert_eq!(
        parse("number(10)"),
        OracleType::Number {
            precision: Some(10),
            scale: Some(0)
        }
    );
    assert_eq!(
        parse("NUMBER( 10 , 2 )"),
        OracleType::Number {
            precision: Some(10),
            scale: Some(2)
        }
    );
    assert_eq!(
        parse("NUMBER(5,-2)"),
        OracleType::Number {
            precision: Some(5),
            scale: Some(-2)
        }
    );
    assert_eq!(
        parse("NUMBER(*,3)"),
        OracleType::Number {
            precision: None,
            scale: Some(3)
        }
    );
    assert_eq!(parse("INTEGER"), parse("NUMBER(*,0)"));
    assert_eq!(
        parse("FLOAT"),
        OracleType::Float {
            binary_precision: 126
        }
    );
    assert_eq!(
        parse("float(63)"),
        OracleType::Float {
            binary_precision: 63
        }
    );
    assert_eq!(parse("DOUBLE PRECISION"), parse("FLOAT(126)"));
}

#[test]
fn characters_and_binary() {
    assert_eq!(
        parse("CHAR(10 BYTE)"),
        OracleType::Char {
            length: 10,
            semantics: LengthSemantics::Byte
        }
    );
    assert_eq!(
        parse("char"),
        OracleType::Char {
            length: 1,
            semantics: LengthSemantics::Default
        }
    );
    assert_eq!(
        parse("varchar2(30 char)"),
        OracleType::Varchar2 {
            length: 30,
            semantics: LengthSemantics::Char
        }
    );
    assert_eq!(parse("NVARCHAR2(5)"), OracleType::NVarchar2 { length: 5 });
    assert_eq!(parse("NCHAR(3)"), OracleType::NChar { length: 3 });
    assert_eq!(parse("RAW(16)"), OracleType::Raw { length: 16 });
    assert_eq!(parse("long raw"), OracleType::LongRaw);
    assert_eq!(parse("LONG"), OracleType::Long);
    assert_eq!(parse("SYS.XMLTYPE"), OracleType::XmlType);
    assert_eq!(
        parse("UROWID(4000)"),
        OracleType::URowId { length: Some(4000) }
    );
}

#[test]
fn temporal() {
    assert_eq!(
        parse("TIMESTAMP"),
        OracleType::Timestamp {
            fractional_precision: 6
        }
    );
    assert_eq!(
        parse("timestamp(3) with time zone"),
        OracleType::TimestampWithTimeZone {
            fractional_precision: 3
        }
    );
    assert_eq!(
        parse("TIMESTAMP WITH LOCAL TIME ZONE"),
        OracleType::TimestampWithLocalTimeZone {
            fractional_precision: 6
        }
    );
    assert_eq!(
        parse("INTERVAL YEAR TO MONTH"),
        OracleType::IntervalYearToMonth { year_precision: 2 }
    );
    assert_eq!(
        parse("INTERVAL DAY(3) TO SECOND(2)"),
        OracleType::IntervalDayToSecond {
            day_precision: 3,
            fractional_precision: 2
        }
    );
}

#[test]
fn canonical_form_round_trips() {
    for text in [
        "NUMBER",
        "NUMBER(10)",
        "NUMBER(10,2)",
        "NUMBER(5,-2)",
        "NUMBER(*,3)",
        "FLOAT(126)",
        "BINARY_FLOAT",
        "BINARY_DOUBLE",
        "CHAR(10 BYTE)",
        "CHAR(10)",
        "NCHAR(4)",
        "VARCHAR2(30 CHAR)",
        "NVARCHAR2(30)",
        "LONG",
        "CLOB",
        "NCLOB",
        "BLOB",
        "RAW(16)",
        "LONG RAW",
        "DATE",
        "TIMESTAMP(9)",
        "TIMESTAMP(0) WITH TIME ZONE",
        "TIMESTAMP(6) WITH LOCAL TIME ZONE",
        "INTERVAL YEAR(4) TO MONTH",
        "INTERVAL DAY(2) TO SECOND(6)",
        "ROWID",
        "UROWID",
        "XMLTYPE",
    ] {
        let t = parse(text);
        assert_eq!(t.to_string(), text);
        assert_eq!(parse(&t.to_string()), t);
    }
}

#[test]
fn errors_are_typed() {
    let kind = |s: &str| OracleType::parse(s).unwrap_err().kind;
    assert_eq!(kind(""), OracleTypeErrorKind::Empty);
    assert_eq!(
        kind("GEOMETRY"),
        OracleTypeErrorKind::UnknownType("GEOMETRY".into())
    );
    assert!(matches!(
        kind("NUMBER(39)"),
        OracleTypeErrorKind::OutOfRange { .. }
    ));
    assert!(matches!(
        kind("NUMBER(10,-85)"),
        OracleTypeErrorKind::OutOfRange { .. }
    ));
    assert!(matches!(
        kind("TIMESTAMP(10)"),
        OracleTypeErrorKind::OutOfRange { .. }
    ));
    assert_eq!(
        kind("VARCHAR2"),
        OracleTypeErrorKind::MissingLength("VARCHAR2")
    );
    assert_eq!(kind("RAW"), OracleTypeErrorKind::MissingLength("RAW"));
    assert!(matches!(
        kind("NUMBER(10"),
        OracleTypeErrorKind::Expected { .. }
    ));
    assert!(matches!(
        kind("DATE DATE"),
        OracleTypeErrorKind::Expected { .. }
    ));
    assert!(matches!(
        kind("NUMBER[10]"),
        OracleTypeErrorKind::UnexpectedCharacter('[')
    ));
    assert!(matches!(
        kind("INTERVAL DAY TO MONTH"),
        OracleTypeErrorKind::Expected { .. }
    ));
}

#[test]
fn json_and_boolean_are_types() {
    // JSON is the 21c native type, BOOLEAN the 23ai one; both round-trip through Display.
    for (text, parsed) in [
        ("JSON", OracleType::Json),
        ("json", OracleType::Json),
        ("BOOLEAN", OracleType::Boolean),
    ] {
        assert_eq!(OracleType::parse(text).unwrap(), parsed, "{text}");
        assert_eq!(OracleType::parse(&parsed.to_string()).unwrap(), parsed);
    }
}

#[test]
fn catalog_types_the_capture_cannot_decode_are_kept_by_name() {
    for name in [
        "MDSYS.SDO_GEOMETRY",
        "VECTOR",
        "APP.ADDRESS_T",
        "VECTOR(3, FLOAT32)",
    ] {
        let parsed = OracleType::parse_catalog(name).unwrap();
        assert_eq!(
            parsed,
            OracleType::Unsupported {
                name: name.to_owned()
            }
        );
        assert!(parsed.is_unsupported());
        // The schema history stores Display and reads it back with parse_catalog.
        assert_eq!(
            OracleType::parse_catalog(&parsed.to_string()).unwrap(),
            parsed
        );
        // The strict parser (DDL, scenario files) still refuses the name.
        assert!(OracleType::parse(name).is_err());
    }
    // Only an unknown name is kept: a known type with a bad range is still an error.
    assert!(OracleType::parse_catalog("NUMBER(39)").is_err());
    assert_eq!(
        OracleType::parse_catalog("NUMBER(10)").unwrap(),
        OracleType::parse("NUMBER(10)").unwrap()
    );
}
