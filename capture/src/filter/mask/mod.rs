//! Column masking and source type propagation for the `debezium` format (Debezium's column
//! mappers): `column.mask.hash.v2.<algorithm>.with.salt.<salt>` (any of the JDK's
//! MessageDigest algorithms, see [`HashAlgorithm`]), `column.mask.with.<n>.chars`,
//! `column.truncate.to.<n>.chars`, `column.propagate.source.type` and
//! `datatype.propagate.source.type`.
//!
//! As in Debezium, masks apply to character columns only (CHAR, NCHAR, VARCHAR2, NVARCHAR2, LONG,
//! CLOB, NCLOB; other columns pass through), to value images only (keys keep the real values),
//! and a column takes the first rule that matches it, in Debezium's order: truncate, mask with
//! asterisks, hash. Propagation is independent of masking.

use redoline_crds::v1alpha1::{ColumnsSpec, HashAlgorithm};
use sha2::Digest;

use super::{FilterError, PatternList};
use crate::dictionary::{Column, OracleType};

/// What a masked column's values become.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ColumnMask {
    /// Debezium's v2 hash (debezium-core `relational/mapping/MaskStrings.java`,
    /// `HashValueConverter` with `HashingByteArrayStrategy.V2`): a `MessageDigest` fed the salt's
    /// bytes, then the value's `toString()` bytes, each digest byte written `%02x` (lower-case
    /// hex, two digits), then cut to the column's declared length when it has one
    /// (`TruncateStrings.TruncatingValueConverter`). Java's `getBytes()` uses the JVM's default
    /// charset, UTF-8 from Java 18 on (and in Debezium's images); UTF-8 here.
    Hash {
        algorithm: HashAlgorithm,
        salt: String,
        /// The column's declared length in characters.
        column_length: Option<u32>,
    },
    /// That many asterisks, whatever the value (null included).
    Asterisks(u32),
    /// Values longer than that many characters are cut.
    Truncate(u32),
}

impl ColumnMask {
    /// The masked form of a value: `None` is SQL NULL. A hash or truncation of NULL is NULL; the
    /// asterisks replace NULL too, as Debezium's masking converter ignores the value.
    pub fn apply(&self, value: Option<&str>) -> Option<String> {
        match (self, value) {
            (Self::Asterisks(count), _) => Some("*".repeat(*count as usize)),
            (_, None) => None,
            (
                Self::Hash {
                    algorithm,
                    salt,
                    column_length,
                },
                Some(text),
            ) => {
                let digest = hex_digest(*algorithm, salt, text);
                Some(match column_length {
                    Some(length) => digest.chars().take(*length as usize).collect(),
                    None => digest,
                })
            }
            (Self::Truncate(length), Some(text)) => {
                Some(text.chars().take(*length as usize).collect())
            }
        }
    }

    /// Whether the field schema is marked `masked` (Debezium's `MaskStrings` marks hashed and
    /// asterisk columns; truncation is not a mask).
    pub fn marks_schema(&self) -> bool {
        !matches!(self, Self::Truncate(_))
    }
}

/// The lower-case hex digest of the salt then the text, by the JDK algorithm of the same name.
fn hex_digest(algorithm: HashAlgorithm, salt: &str, text: &str) -> String {
    fn of<D: Digest>(salt: &str, text: &str) -> String {
        let mut digest = D::new();
        digest.update(salt.as_bytes());
        digest.update(text.as_bytes());
        crate::value::binary::encode_hex(&digest.finalize())
    }
    match algorithm {
        HashAlgorithm::Md2 => of::<md2::Md2>(salt, text),
        HashAlgorithm::Md5 => of::<md5::Md5>(salt, text),
        HashAlgorithm::Sha1 => of::<sha1::Sha1>(salt, text),
        HashAlgorithm::Sha224 => of::<sha2::Sha224>(salt, text),
        HashAlgorithm::Sha256 => of::<sha2::Sha256>(salt, text),
        HashAlgorithm::Sha384 => of::<sha2::Sha384>(salt, text),
        HashAlgorithm::Sha512_224 => of::<sha2::Sha512_224>(salt, text),
        HashAlgorithm::Sha512_256 => of::<sha2::Sha512_256>(salt, text),
        HashAlgorithm::Sha512 => of::<sha2::Sha512>(salt, text),
        HashAlgorithm::Sha3_224 => of::<sha3::Sha3_224>(salt, text),
        HashAlgorithm::Sha3_256 => of::<sha3::Sha3_256>(salt, text),
        HashAlgorithm::Sha3_384 => of::<sha3::Sha3_384>(salt, text),
        HashAlgorithm::Sha3_512 => of::<sha3::Sha3_512>(salt, text),
    }
}

/// Whether masks apply to a column of this type.
fn is_character(data_type: &OracleType) -> bool {
    matches!(
        data_type,
        OracleType::Char { .. }
            | OracleType::NChar { .. }
            | OracleType::Varchar2 { .. }
            | OracleType::NVarchar2 { .. }
            | OracleType::Long
            | OracleType::Clob
            | OracleType::NClob
    )
}

/// The compiled masking and propagation rules of `spec.columns`.
#[derive(Clone, Debug, Default)]
pub struct ColumnRules {
    truncate: Vec<(PatternList, u32)>,
    asterisks: Vec<(PatternList, u32)>,
    hash: Vec<(PatternList, HashAlgorithm, String)>,
    propagate: PatternList,
    propagate_types: PatternList,
}

impl ColumnRules {
    pub fn new(spec: &ColumnsSpec) -> Result<Self, FilterError> {
        let lengths = |name: &str, rules: &[redoline_crds::v1alpha1::LengthRule]| {
            rules
                .iter()
                .enumerate()
                .map(|(i, rule)| {
                    let field = format!("columns.{name}[{i}].columns");
                    Ok((PatternList::compile(&field, &rule.columns)?, rule.length))
                })
                .collect::<Result<Vec<_>, FilterError>>()
        };
        let hash = spec
            .mask_hash
            .iter()
            .enumerate()
            .map(|(i, rule)| {
                let field = format!("columns.maskHash[{i}].columns");
                Ok((
                    PatternList::compile(&field, &rule.columns)?,
                    rule.algorithm,
                    rule.salt.clone(),
                ))
            })
            .collect::<Result<Vec<_>, FilterError>>()?;
        Ok(Self {
            truncate: lengths("truncateToChars", &spec.truncate_to_chars)?,
            asterisks: lengths("maskWithChars", &spec.mask_with_chars)?,
            hash,
            propagate: PatternList::compile(
                "columns.propagateSourceType",
                &spec.propagate_source_type,
            )?,
            propagate_types: PatternList::compile(
                "columns.datatypePropagateSourceType",
                &spec.datatype_propagate_source_type,
            )?,
        })
    }

    /// The mask of `column` of `schema.table`, if a rule names it and it holds characters.
    pub fn mask(&self, schema: &str, table: &str, column: &Column) -> Option<ColumnMask> {
        if !is_character(&column.data_type) {
            return None;
        }
        let name = format!("{schema}.{table}.{}", column.name);
        let matching = |list: &[(PatternList, u32)]| {
            list.iter()
                .find(|(patterns, _)| patterns.matches(&name))
                .map(|(_, length)| *length)
        };
        if let Some(length) = matching(&self.truncate) {
            return Some(ColumnMask::Truncate(length));
        }
        if let Some(count) = matching(&self.asterisks) {
            return Some(ColumnMask::Asterisks(count));
        }
        self.hash
            .iter()
            .find(|(patterns, _, _)| patterns.matches(&name))
            .map(|(_, algorithm, salt)| ColumnMask::Hash {
                algorithm: *algorithm,
                salt: salt.clone(),
                column_length: column.data_type.max_length(),
            })
    }

    /// The source type parameters of `column`'s field schema, when a propagation rule names the
    /// column or its type; empty otherwise.
    pub fn source_type_parameters(
        &self,
        schema: &str,
        table: &str,
        column: &Column,
    ) -> Vec<(&'static str, String)> {
        let (type_name, length, scale) = source_type(&column.data_type);
        let named = self
            .propagate
            .matches(&format!("{schema}.{table}.{}", column.name));
        if !named && !self.propagate_types.matches(&type_name) {
            return Vec::new();
        }
        let mut parameters = vec![
            ("__debezium.source.column.type", type_name),
            ("__debezium.source.column.name", column.name.clone()),
        ];
        if let Some(length) = length {
            parameters.push(("__debezium.source.column.length", length.to_string()));
        }
        if let Some(scale) = scale {
            parameters.push(("__debezium.source.column.scale", scale.to_string()));
        }
        parameters
    }
}

/// The type name, length and scale Oracle's dictionary gives a column (`ALL_TAB_COLUMNS`
/// `DATA_TYPE`, then the declared length or precision, and the scale or fractional precision).
pub fn source_type(data_type: &OracleType) -> (String, Option<u32>, Option<i32>) {
    match data_type {
        OracleType::Number { precision, scale } => (
            "NUMBER".to_owned(),
            precision.map(u32::from),
            scale.map(i32::from),
        ),
        OracleType::Float { binary_precision } => {
            ("FLOAT".to_owned(), Some(u32::from(*binary_precision)), None)
        }
        OracleType::BinaryFloat => ("BINARY_FLOAT".to_owned(), None, None),
        OracleType::BinaryDouble => ("BINARY_DOUBLE".to_owned(), None, None),
        OracleType::Char { length, .. } => ("CHAR".to_owned(), Some(*length), None),
        OracleType::NChar { length } => ("NCHAR".to_owned(), Some(*length), None),
        OracleType::Varchar2 { length, .. } => ("VARCHAR2".to_owned(), Some(*length), None),
        OracleType::NVarchar2 { length } => ("NVARCHAR2".to_owned(), Some(*length), None),
        OracleType::Long => ("LONG".to_owned(), None, None),
        OracleType::Clob => ("CLOB".to_owned(), None, None),
        OracleType::NClob => ("NCLOB".to_owned(), None, None),
        OracleType::Blob => ("BLOB".to_owned(), None, None),
        OracleType::Raw { length } => ("RAW".to_owned(), Some(*length), None),
        OracleType::LongRaw => ("LONG RAW".to_owned(), None, None),
        OracleType::Date => ("DATE".to_owned(), None, None),
        OracleType::Timestamp {
            fractional_precision: p,
        } => (format!("TIMESTAMP({p})"), None, Some(i32::from(*p))),
        OracleType::TimestampWithTimeZone {
            fractional_precision: p,
        } => (
            format!("TIMESTAMP({p}) WITH TIME ZONE"),
            None,
            Some(i32::from(*p)),
        ),
        OracleType::TimestampWithLocalTimeZone {
            fractional_precision: p,
        } => (
            format!("TIMESTAMP({p}) WITH LOCAL TIME ZONE"),
            None,
            Some(i32::from(*p)),
        ),
        OracleType::IntervalYearToMonth { year_precision } => (
            format!("INTERVAL YEAR({year_precision}) TO MONTH"),
            None,
            None,
        ),
        OracleType::IntervalDayToSecond {
            day_precision,
            fractional_precision,
        } => (
            format!("INTERVAL DAY({day_precision}) TO SECOND({fractional_precision})"),
            None,
            Some(i32::from(*fractional_precision)),
        ),
        OracleType::RowId => ("ROWID".to_owned(), None, None),
        OracleType::URowId { length } => ("UROWID".to_owned(), *length, None),
        OracleType::XmlType => ("XMLTYPE".to_owned(), None, None),
        OracleType::Json => ("JSON".to_owned(), None, None),
        OracleType::Boolean => ("BOOLEAN".to_owned(), None, None),
        OracleType::Unsupported { name } => (name.clone(), None, None),
    }
}

#[cfg(test)]
mod tests;
