//! Avro's binary encoding (Avro 1.11 specification, "Binary Encoding"): `int` and `long` as
//! zig-zag varints, `float` / `double` as little-endian IEEE 754, `bytes` and `string` as a
//! `long` length then the bytes, a union as the `long` index of its branch then the value, a
//! record as its fields in order, an array as blocks (a count, the items) ended by a 0 count.
//!
//! [`write_json`] writes a record given as the JSON payload `JsonConverter` would read (the
//! records written rarely: heartbeats, transaction metadata, schema change events), walking
//! its Connect schema the way the Avro schema of [`super::schema`] lays it out.

use base64::Engine as _;

use super::connect::{ConnectSchema, ConnectType};

/// Appends the zig-zag varint of `value` (an Avro `long`, or an `int` widened).
#[inline]
pub fn long(out: &mut Vec<u8>, value: i64) {
    let mut n = ((value << 1) ^ (value >> 63)) as u64;
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// An Avro `int`.
#[inline]
pub fn int(out: &mut Vec<u8>, value: i32) {
    long(out, i64::from(value));
}

#[inline]
pub fn boolean(out: &mut Vec<u8>, value: bool) {
    out.push(u8::from(value));
}

#[inline]
pub fn float(out: &mut Vec<u8>, value: f32) {
    out.extend_from_slice(&value.to_le_bytes());
}

#[inline]
pub fn double(out: &mut Vec<u8>, value: f64) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// Avro `bytes` (and, given UTF-8, `string`).
#[inline]
pub fn bytes(out: &mut Vec<u8>, value: &[u8]) {
    long(out, value.len() as i64);
    out.extend_from_slice(value);
}

#[inline]
pub fn string(out: &mut Vec<u8>, value: &str) {
    bytes(out, value.as_bytes());
}

/// The branch index of a union.
#[inline]
pub fn branch(out: &mut Vec<u8>, index: u8) {
    out.push(index << 1);
}

/// Appends the `null` branch of an optional schema: index 0 of `["null", T]`, or 1 of
/// `[T, "null"]` (a schema with a default).
#[inline]
pub fn null_of(out: &mut Vec<u8>, schema_has_default: bool) {
    branch(out, u8::from(schema_has_default));
}

/// Appends the value branch of an optional schema.
#[inline]
pub fn some_of(out: &mut Vec<u8>, schema_has_default: bool) {
    branch(out, u8::from(!schema_has_default));
}

/// A JSON payload that does not fit its Connect schema; never met with the payloads this crate
/// writes beside their schemas, which tests check.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the payload does not fit its schema at {0}")]
pub struct Mismatch(pub String);

/// Appends the Avro binary of `value` (the JSON payload of JsonConverter) under `schema`.
pub fn write_json(
    out: &mut Vec<u8>,
    schema: &ConnectSchema,
    value: &serde_json::Value,
    path: &str,
) -> Result<(), Mismatch> {
    let has_default = schema.default.is_some();
    if schema.optional {
        if value.is_null() {
            null_of(out, has_default);
            return Ok(());
        }
        some_of(out, has_default);
    }
    let mismatch = || Mismatch(path.to_owned());
    match (&schema.type_, value) {
        (
            ConnectType::Int8 | ConnectType::Int16 | ConnectType::Int32 | ConnectType::Int64,
            serde_json::Value::Number(n),
        ) => long(out, n.as_i64().ok_or_else(mismatch)?),
        (ConnectType::Float32, serde_json::Value::Number(n)) => {
            float(out, n.as_f64().ok_or_else(mismatch)? as f32)
        }
        (ConnectType::Float64, serde_json::Value::Number(n)) => {
            double(out, n.as_f64().ok_or_else(mismatch)?)
        }
        (ConnectType::Boolean, serde_json::Value::Bool(b)) => boolean(out, *b),
        (ConnectType::String, serde_json::Value::String(s)) => string(out, s),
        (ConnectType::Bytes, serde_json::Value::String(s)) => {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|_| mismatch())?;
            bytes(out, &decoded);
        }
        (ConnectType::Array(items), serde_json::Value::Array(values)) => {
            if !values.is_empty() {
                long(out, values.len() as i64);
                for (i, item) in values.iter().enumerate() {
                    write_json(out, items, item, &format!("{path}[{i}]"))?;
                }
            }
            long(out, 0);
        }
        (ConnectType::Map(_, values), serde_json::Value::Object(members)) => {
            if !members.is_empty() {
                long(out, members.len() as i64);
                for (key, item) in members {
                    string(out, key);
                    write_json(out, values, item, &format!("{path}.{key}"))?;
                }
            }
            long(out, 0);
        }
        (ConnectType::Struct(fields), serde_json::Value::Object(members)) => {
            for (name, field) in fields {
                let item = members.get(name).unwrap_or(&serde_json::Value::Null);
                write_json(out, field, item, &format!("{path}.{name}"))?;
            }
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_zig_zag_like_the_specification() {
        // The specification's table: 0 → 00, -1 → 01, 1 → 02, -2 → 03, 2 → 04, -64 → 7f,
        // 64 → 80 01.
        let encoded = |v: i64| {
            let mut out = Vec::new();
            long(&mut out, v);
            out
        };
        assert_eq!(encoded(0), [0x00]);
        assert_eq!(encoded(-1), [0x01]);
        assert_eq!(encoded(1), [0x02]);
        assert_eq!(encoded(-2), [0x03]);
        assert_eq!(encoded(2), [0x04]);
        assert_eq!(encoded(-64), [0x7f]);
        assert_eq!(encoded(64), [0x80, 0x01]);
        for v in [i64::MIN, i64::MAX, 1 << 40, -(1 << 40)] {
            let bytes = encoded(v);
            let decoded =
                apache_avro::reader::datum::GenericDatumReader::builder(&apache_avro::Schema::Long)
                    .build()
                    .unwrap()
                    .read_value(&mut bytes.as_slice())
                    .unwrap();
            assert_eq!(decoded, apache_avro::types::Value::Long(v));
        }
    }
}
