use proptest::prelude::*;
use redoline_crds::v1alpha1::{HashMask, LengthRule};

use super::*;
use crate::dictionary::LengthSemantics;

fn varchar(name: &str, length: u32) -> Column {
    Column::new(
        name,
        OracleType::Varchar2 {
            length,
            semantics: LengthSemantics::Byte,
        },
    )
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// `MessageDigest.getInstance(name)`, `update(salt)`, `digest(value)`, each byte `%02x`, run on a
/// JDK 17 for salt `salt` and value `hello` (the ones a hashlib has agree with Python's hashlib).
/// The MD5 and SHA-256 values are also those Debezium's own test expects of its v2 hashing
/// (debezium-core `relational/mapping/MaskStringsTest.java`).
const JDK_DIGESTS: [(HashAlgorithm, &str); 13] = [
    (HashAlgorithm::Md2, "b1e0e74f556cfd1bcd257c2312942471"),
    (HashAlgorithm::Md5, "06decc8b095724f80103712c235586be"),
    (
        HashAlgorithm::Sha1,
        "34cd57acc150672d09d0c5635c06d8c2f094a419",
    ),
    (
        HashAlgorithm::Sha224,
        "e5d2b9250851cf3ccdb47c35cc83a673e718418af983029bf9045ab6",
    ),
    (
        HashAlgorithm::Sha256,
        "cd31b3b98ece60cb739c0bf770b2de892ae0ad133f645513c3d83f08757a843a",
    ),
    (
        HashAlgorithm::Sha384,
        "3867a02f9f0119f6796ffd21ce71d026579b0810796ee64b9e6376f9b4fda0f95f56d0c403df591cb83ef5703665d9ca",
    ),
    (
        HashAlgorithm::Sha512_224,
        "32e1f392b5616e16b729d552214ec3e0e983b0267adea304cc7bb515",
    ),
    (
        HashAlgorithm::Sha512_256,
        "620a6c9a27880b6da6b7de80afee068ec43c53cec63d3764926b1eeb89fb3a48",
    ),
    (
        HashAlgorithm::Sha512,
        "acc3054d59588aeff201e46474f717f84cf925e71123acb5ac83bd1b002c4345c266330d86e79e1dba142e51abfcde0bec4b363d39664d883f08c33584ede7ba",
    ),
    (
        HashAlgorithm::Sha3_224,
        "2a02392297c0b9006eebc3e4fe3f9061f3c0f2d2750f9ada785f2610",
    ),
    (
        HashAlgorithm::Sha3_256,
        "03e21ab7c10d07f9d4ac68705a6e42ea9812c43704eea51814343e1ae462df96",
    ),
    (
        HashAlgorithm::Sha3_384,
        "aa56622484c84400d3dfe4db8eaca941b5d09c12a427087fa4658bcbd8f4fbe488394adea13654278d07d1160f399b06",
    ),
    (
        HashAlgorithm::Sha3_512,
        "8e7dd5ef14bf97f5edcd772c36d7ed7a512bff882218047ffe716225204a62d9b63ddc99eb3d692099cbba22486067287c046389ac59acf8a1c7dd956d8c67b2",
    ),
];

#[test]
fn every_jdk_digest_gives_the_jvms_hex() {
    for (algorithm, expected) in JDK_DIGESTS {
        let mask = ColumnMask::Hash {
            algorithm,
            salt: "salt".to_owned(),
            column_length: None,
        };
        assert_eq!(
            mask.apply(Some("hello")).as_deref(),
            Some(expected),
            "{algorithm}"
        );
    }
    // Also from the JDK: a salt and value beyond ASCII (UTF-8 bytes), and an empty salt and value.
    let utf8 = ColumnMask::Hash {
        algorithm: HashAlgorithm::Sha3_256,
        salt: "sël".to_owned(),
        column_length: None,
    };
    assert_eq!(
        utf8.apply(Some("Zoë")).as_deref(),
        Some("9181b073c0915b0cd7b979d63b92a37c4ef3a95c6350dcdfc80a52c7dfc67cc8")
    );
    let empty = ColumnMask::Hash {
        algorithm: HashAlgorithm::Sha1,
        salt: String::new(),
        column_length: None,
    };
    assert_eq!(
        empty.apply(Some("")).as_deref(),
        Some("da39a3ee5e6b4b0d3255bfef95601890afd80709")
    );
    let cut = ColumnMask::Hash {
        algorithm: HashAlgorithm::Md2,
        salt: "pepper".to_owned(),
        column_length: Some(19),
    };
    assert_eq!(
        cut.apply(Some("4111-1111-1111-1111")).as_deref(),
        Some("24c28b8e54cb1e1ce97"),
        "cut to the column's length"
    );
}

#[test]
fn the_v2_hash_digests_salt_then_value_in_lower_hex() {
    // Digests computed independently (Python's hashlib) over salt bytes then value bytes.
    let sha256 = ColumnMask::Hash {
        algorithm: HashAlgorithm::Sha256,
        salt: "salt".to_owned(),
        column_length: None,
    };
    assert_eq!(sha256.apply(None), None, "NULL stays NULL");
    let cut = ColumnMask::Hash {
        algorithm: HashAlgorithm::Sha512,
        salt: "pepper".to_owned(),
        column_length: Some(19),
    };
    assert_eq!(
        cut.apply(Some("4111-1111-1111-1111")).as_deref(),
        Some("207f46e20065dd1563e"),
        "cut to the column's length"
    );
    let utf8 = ColumnMask::Hash {
        algorithm: HashAlgorithm::Sha384,
        salt: "sël".to_owned(),
        column_length: None,
    };
    assert_eq!(
        utf8.apply(Some("Zoë")).as_deref(),
        Some(
            "2d7b405ec94a378aa7372653aa31eb4a799ffb33b7af5def7ce753519b9a0b32c0b7ab3da7d4dafd86f32979d9ce19cd"
        )
    );
}

#[test]
fn asterisks_replace_every_value_and_truncation_counts_characters() {
    assert_eq!(
        ColumnMask::Asterisks(4).apply(Some("secret")).as_deref(),
        Some("****")
    );
    assert_eq!(ColumnMask::Asterisks(2).apply(None).as_deref(), Some("**"));
    assert_eq!(
        ColumnMask::Asterisks(0).apply(Some("x")).as_deref(),
        Some("")
    );
    let truncate = ColumnMask::Truncate(3);
    assert_eq!(truncate.apply(Some("Zoëlle")).as_deref(), Some("Zoë"));
    assert_eq!(truncate.apply(Some("ab")).as_deref(), Some("ab"));
    assert_eq!(truncate.apply(None), None);
    assert!(ColumnMask::Asterisks(1).marks_schema() && !truncate.marks_schema());
}

#[test]
fn rules_apply_to_character_columns_in_debeziums_order() {
    let spec = ColumnsSpec {
        truncate_to_chars: vec![LengthRule {
            length: 2,
            columns: strings(&["APP\\.T\\.BOTH"]),
        }],
        mask_with_chars: vec![LengthRule {
            length: 5,
            columns: strings(&["APP\\.T\\.(BOTH|STARS)"]),
        }],
        mask_hash: vec![HashMask {
            algorithm: HashAlgorithm::Sha256,
            salt: "s".to_owned(),
            columns: strings(&["APP\\.T\\..*"]),
        }],
        ..ColumnsSpec::default()
    };
    let rules = ColumnRules::new(&spec).unwrap();
    assert_eq!(
        rules.mask("APP", "T", &varchar("BOTH", 10)),
        Some(ColumnMask::Truncate(2))
    );
    assert_eq!(
        rules.mask("APP", "T", &varchar("STARS", 10)),
        Some(ColumnMask::Asterisks(5))
    );
    assert_eq!(
        rules.mask("APP", "T", &varchar("OTHER", 10)),
        Some(ColumnMask::Hash {
            algorithm: HashAlgorithm::Sha256,
            salt: "s".to_owned(),
            column_length: Some(10),
        })
    );
    let number = Column::new(
        "AMOUNT",
        OracleType::Number {
            precision: Some(10),
            scale: Some(2),
        },
    );
    assert_eq!(
        rules.mask("APP", "T", &number),
        None,
        "numbers pass through"
    );
    assert_eq!(rules.mask("HR", "T", &varchar("OTHER", 10)), None);
}

#[test]
fn bad_patterns_name_their_field() {
    let spec = ColumnsSpec {
        mask_with_chars: vec![LengthRule {
            length: 5,
            columns: strings(&["A", "("]),
        }],
        ..ColumnsSpec::default()
    };
    assert_eq!(
        ColumnRules::new(&spec).unwrap_err().field,
        "columns.maskWithChars[0].columns[1]"
    );
}

#[test]
fn source_types_are_propagated_by_column_or_by_type() {
    let spec = ColumnsSpec {
        propagate_source_type: strings(&["APP\\.T\\.NAME"]),
        datatype_propagate_source_type: strings(&["NUMBER"]),
        ..ColumnsSpec::default()
    };
    let rules = ColumnRules::new(&spec).unwrap();
    assert_eq!(
        rules.source_type_parameters("APP", "T", &varchar("NAME", 40)),
        [
            ("__debezium.source.column.type", "VARCHAR2".to_owned()),
            ("__debezium.source.column.name", "NAME".to_owned()),
            ("__debezium.source.column.length", "40".to_owned()),
        ]
    );
    let amount = Column::new(
        "AMOUNT",
        OracleType::Number {
            precision: Some(10),
            scale: Some(2),
        },
    );
    assert_eq!(
        rules.source_type_parameters("HR", "X", &amount),
        [
            ("__debezium.source.column.type", "NUMBER".to_owned()),
            ("__debezium.source.column.name", "AMOUNT".to_owned()),
            ("__debezium.source.column.length", "10".to_owned()),
            ("__debezium.source.column.scale", "2".to_owned()),
        ]
    );
    assert!(
        rules
            .source_type_parameters("APP", "T", &varchar("OTHER", 4))
            .is_empty()
    );
    assert!(
        ColumnRules::default()
            .source_type_parameters("APP", "T", &amount)
            .is_empty()
    );
}

proptest! {
    /// Truncation never lengthens a value and keeps its prefix; asterisks ignore the value.
    #[test]
    fn truncation_keeps_a_prefix(text in "\\PC{0,40}", length in 0u32..50) {
        let cut = ColumnMask::Truncate(length).apply(Some(&text)).unwrap();
        prop_assert!(text.starts_with(&cut));
        prop_assert_eq!(cut.chars().count(), text.chars().count().min(length as usize));
        let stars = ColumnMask::Asterisks(length).apply(Some(&text)).unwrap();
        prop_assert_eq!(stars.len(), length as usize);
    }
}
