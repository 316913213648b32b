//! The digests of `columns.maskHash`, named as Debezium users name them.
//!
//! Debezium hands the algorithm of `column.mask.hash.v2.<algorithm>.with.salt.<salt>` to
//! `MessageDigest.getInstance` (debezium-core `relational/mapping/MaskStrings.java`,
//! `HashValueConverter`), so any name the JVM's providers know works there. The JDK's SUN provider
//! is the one that offers message digests (Java Security Standard Algorithm Names, section
//! "MessageDigest Algorithms"); listed from a JDK 17 with `Security.getProviders()`, it registers
//! the thirteen digests below and these aliases: `SHA` and `SHA1` for SHA-1, and the names without
//! the hyphen (`SHA224`, `SHA256`, `SHA384`, `SHA512`, `SHA512/224`, `SHA512/256`) for SHA-2. Its
//! OID aliases (`2.16.840.1.101.3.4.2.1`, ...) are left out: Debezium's property pattern takes the
//! algorithm as `[^.]+` (debezium-core `relational/mapping/ColumnMappers.java`), so a name with a
//! dot never reaches `getInstance`.
//!
//! The provider looks names up case-insensitively, by comparing `toUpperCase(Locale.ENGLISH)`
//! forms (`java.security.Provider`), which is Unicode's full upper-casing: `sha-256` and even
//! `ſha-256` (a long s) name SHA-256, while `SHA-256 ` (a trailing space) names nothing. Names are
//! matched here the same way, and written back in the JDK's standard spelling.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A digest for `maskHash`, one of the JDK's MessageDigest algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HashAlgorithm {
    Md2,
    Md5,
    Sha1,
    Sha224,
    Sha256,
    Sha384,
    Sha512_224,
    Sha512_256,
    Sha512,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
}

impl HashAlgorithm {
    /// Every algorithm, in the order of the JDK's Standard Algorithm Names.
    pub const ALL: [Self; 13] = [
        Self::Md2,
        Self::Md5,
        Self::Sha1,
        Self::Sha224,
        Self::Sha256,
        Self::Sha384,
        Self::Sha512_224,
        Self::Sha512_256,
        Self::Sha512,
        Self::Sha3_224,
        Self::Sha3_256,
        Self::Sha3_384,
        Self::Sha3_512,
    ];

    /// The JDK's standard name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Md2 => "MD2",
            Self::Md5 => "MD5",
            Self::Sha1 => "SHA-1",
            Self::Sha224 => "SHA-224",
            Self::Sha256 => "SHA-256",
            Self::Sha384 => "SHA-384",
            Self::Sha512_224 => "SHA-512/224",
            Self::Sha512_256 => "SHA-512/256",
            Self::Sha512 => "SHA-512",
            Self::Sha3_224 => "SHA3-224",
            Self::Sha3_256 => "SHA3-256",
            Self::Sha3_384 => "SHA3-384",
            Self::Sha3_512 => "SHA3-512",
        }
    }

    /// The SUN provider's other names for it (without the OIDs, see the module comment).
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Self::Sha1 => &["SHA", "SHA1"],
            Self::Sha224 => &["SHA224"],
            Self::Sha256 => &["SHA256"],
            Self::Sha384 => &["SHA384"],
            Self::Sha512_224 => &["SHA512/224"],
            Self::Sha512_256 => &["SHA512/256"],
            Self::Sha512 => &["SHA512"],
            Self::Md2
            | Self::Md5
            | Self::Sha3_224
            | Self::Sha3_256
            | Self::Sha3_384
            | Self::Sha3_512 => &[],
        }
    }

    /// The accepted names for messages: `MD2, MD5, SHA-1 (SHA, SHA1), ...`.
    pub fn accepted() -> String {
        Self::ALL
            .iter()
            .map(|algorithm| match algorithm.aliases() {
                [] => algorithm.name().to_owned(),
                aliases => format!("{} ({})", algorithm.name(), aliases.join(", ")),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// An algorithm name the JDK's providers do not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown hash algorithm {0:?}: use one of Java's MessageDigest names (any case): {accepted}",
    accepted = HashAlgorithm::accepted()
)]
pub struct UnknownHashAlgorithm(pub String);

impl FromStr for HashAlgorithm {
    type Err = UnknownHashAlgorithm;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let upper = text.to_uppercase();
        Self::ALL
            .into_iter()
            .find(|algorithm| {
                algorithm.name() == upper || algorithm.aliases().contains(&upper.as_str())
            })
            .ok_or_else(|| UnknownHashAlgorithm(text.to_owned()))
    }
}

impl fmt::Display for HashAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for HashAlgorithm {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for HashAlgorithm {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A string checked by a CEL rule rather than an `enum`, which the apiserver would compare with
/// case. RE2's `(?i)` folds case as Java's upper-casing does for these letters (`s`, `S` and `ſ`
/// alike), so the apiserver refuses exactly what the JVM would.
impl JsonSchema for HashAlgorithm {
    fn schema_name() -> Cow<'static, str> {
        "HashAlgorithm".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "maxLength": 16,
            "x-kubernetes-validations": [{
                "rule": name_rule(),
                "message": format!(
                    "must be one of Java's MessageDigest names (any case): {}",
                    HashAlgorithm::accepted()
                ),
            }],
        })
    }
}

/// `self.matches('^(?i:MD2|MD5|SHA-1|SHA|SHA1|...)$')`: no name holds a character special to
/// regular expressions but `-` and `/`, which are plain outside brackets.
fn name_rule() -> String {
    let names: Vec<&str> = HashAlgorithm::ALL
        .iter()
        .flat_map(|algorithm| {
            std::iter::once(algorithm.name()).chain(algorithm.aliases().iter().copied())
        })
        .collect();
    format!("self.matches('^(?i:{})$')", names.join("|"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn names_are_found_as_the_jdk_finds_them() {
        for algorithm in HashAlgorithm::ALL {
            assert_eq!(algorithm.name().parse(), Ok(algorithm));
            assert_eq!(algorithm.name().to_lowercase().parse(), Ok(algorithm));
            for alias in algorithm.aliases() {
                assert_eq!(alias.parse(), Ok(algorithm));
            }
        }
        // Each checked against MessageDigest.getInstance on a JDK 17.
        assert_eq!("sha".parse(), Ok(HashAlgorithm::Sha1));
        assert_eq!("Sha512/256".parse(), Ok(HashAlgorithm::Sha512_256));
        assert_eq!("ſha-256".parse(), Ok(HashAlgorithm::Sha256));
        for unknown in [
            "SHA-256 ",
            "SHA_256",
            "SHA3256",
            "SHA-512-256",
            "MD4",
            "2.16.840.1.101.3.4.2.1",
            "",
        ] {
            assert!(unknown.parse::<HashAlgorithm>().is_err(), "{unknown:?}");
        }
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_accepted_ones() {
        let error = serde_json::from_value::<HashAlgorithm>(serde_json::json!("WHIRLPOOL"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("\"WHIRLPOOL\""), "{error}");
        assert!(
            error.contains("MD2, MD5, SHA-1 (SHA, SHA1), SHA-224 (SHA224)"),
            "{error}"
        );
        assert!(error.contains("SHA3-512"), "{error}");
    }

    #[test]
    fn written_in_the_standard_spelling() {
        let algorithm: HashAlgorithm =
            serde_json::from_value(serde_json::json!("sha512/224")).unwrap();
        assert_eq!(serde_json::to_value(algorithm).unwrap(), "SHA-512/224");
    }

    /// The apiserver's rule accepts what the capture parses. Rust's `regex` folds case with
    /// Unicode's simple case folding, as RE2 (CEL's `matches`) does.
    #[test]
    fn the_cel_rule_accepts_what_the_parser_accepts() {
        let rule = name_rule();
        let pattern = rule
            .strip_prefix("self.matches('")
            .and_then(|rest| rest.strip_suffix("')"))
            .unwrap();
        let regex = regex::Regex::new(pattern).unwrap();
        let mut candidates: Vec<String> = Vec::new();
        for algorithm in HashAlgorithm::ALL {
            for name in std::iter::once(algorithm.name()).chain(algorithm.aliases().iter().copied())
            {
                candidates.push(name.to_owned());
                candidates.push(name.to_lowercase());
                candidates.push(name.to_lowercase().replacen('s', "ſ", 1));
                candidates.push(format!("{name} "));
                candidates.push(format!("x{name}"));
                candidates.push(name.replace('-', "_"));
            }
        }
        candidates.extend(["", "MD4", "SHA-0", "WHIRLPOOL", "SHA3_256"].map(str::to_owned));
        for candidate in candidates {
            assert_eq!(
                regex.is_match(&candidate),
                candidate.parse::<HashAlgorithm>().is_ok(),
                "{candidate:?}"
            );
        }
    }
}
