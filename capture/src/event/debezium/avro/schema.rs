//! Avro schemas made from Connect schemas as Kafka Connect's `AvroData.fromConnectSchema` makes
//! them (with its defaults: Connect metadata on, no enhanced schema support, no name scrubbing),
//! written as Avro's Java library prints a schema, so a registry holds the text an
//! `AvroConverter` would have registered:
//!
//! - a struct is a record named after the Connect name split at its last dot (namespace, name);
//!   an unnamed struct is `io.confluent.connect.avro.ConnectDefault` (then `ConnectDefault2`, …);
//!   a record already defined in the schema is referred to by name;
//! - int8 / int16 are Avro `int` with `connect.type`; int32 `int`, int64 `long`, float32
//!   `float`, float64 `double`; arrays `array`, maps with string keys `map`;
//! - every schema but a union carries, in this order, `connect.doc`, `connect.version`,
//!   `connect.parameters` (string values), `connect.default`, `connect.name`, `connect.type`,
//!   then the logical type: Connect `Decimal` is `decimal` with `precision` (the
//!   `connect.decimal.precision` parameter, 64 without one) and `scale` unless the scale is
//!   negative or above the precision (which Avro's decimal cannot express: the schema stays plain
//!   `bytes`), Connect `Timestamp` is `timestamp-millis`, `Date` `date`, `Time` `time-millis`;
//!   Debezium's own time names stay plain `long` / `int` with their `connect.name`;
//! - an optional schema is the union `["null", T]` with field default `null`, or `[T, "null"]`
//!   when it has a default, which becomes the field's `default`.
//!
//! Names Avro does not allow are adjusted as Debezium's `schema.name.adjustment.mode=avro` and
//! `field.name.adjustment.mode=avro` adjust them ([`adjust_full_name`], [`adjust_name`]).

use std::collections::HashSet;

use super::connect::{ConnectSchema, ConnectType};
use crate::event::json;

/// Connect's `Decimal` logical name.
pub const DECIMAL: &str = "org.apache.kafka.connect.data.Decimal";
const TIMESTAMP: &str = "org.apache.kafka.connect.data.Timestamp";
const DATE: &str = "org.apache.kafka.connect.data.Date";
const TIME: &str = "org.apache.kafka.connect.data.Time";
/// `AvroData`'s precision for a Connect `Decimal` without `connect.decimal.precision`.
const DEFAULT_DECIMAL_PRECISION: u32 = 64;
const DEFAULT_NAMESPACE: &str = "io.confluent.connect.avro";
const DEFAULT_NAME: &str = "ConnectDefault";

/// A Connect schema Avro cannot express here.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no Avro schema for this Connect schema: {0}")]
pub struct Unconvertible(pub String);

/// The Avro schema JSON of `connect` (Connect names and field names adjusted to Avro's rules).
pub fn avro_schema(connect: &ConnectSchema) -> Result<String, Unconvertible> {
    let mut writer = Writer {
        out: String::with_capacity(2048),
        space: None,
        defined: HashSet::new(),
        unnamed: 0,
    };
    writer.schema(connect)?;
    Ok(writer.out)
}

/// The Avro full name of the top record of `connect` (as a subject name strategy names it).
pub fn record_name(connect: &ConnectSchema) -> String {
    match &connect.name {
        Some(name) => adjust_full_name(name),
        None => format!("{DEFAULT_NAMESPACE}.{DEFAULT_NAME}"),
    }
}

struct Writer {
    out: String,
    /// The enclosing namespace (Avro's default namespace for names inside a record).
    space: Option<String>,
    /// Full names of the records written so far: later uses refer to them.
    defined: HashSet<String>,
    /// Unnamed structs met so far.
    unnamed: usize,
}

impl Writer {
    fn schema(&mut self, schema: &ConnectSchema) -> Result<(), Unconvertible> {
        if !schema.optional {
            return self.base(schema);
        }
        if schema.default.is_some() {
            self.out.push('[');
            self.base(schema)?;
            self.out.push_str(",\"null\"]");
        } else {
            self.out.push_str("[\"null\",");
            self.base(schema)?;
            self.out.push(']');
        }
        Ok(())
    }

    fn base(&mut self, schema: &ConnectSchema) -> Result<(), Unconvertible> {
        let (primitive, connect_type) = match &schema.type_ {
            ConnectType::Int8 => ("int", Some("int8")),
            ConnectType::Int16 => ("int", Some("int16")),
            ConnectType::Int32 => ("int", None),
            ConnectType::Int64 => ("long", None),
            ConnectType::Float32 => ("float", None),
            ConnectType::Float64 => ("double", None),
            ConnectType::Boolean => ("boolean", None),
            ConnectType::String => ("string", None),
            ConnectType::Bytes => ("bytes", None),
            ConnectType::Array(items) => {
                self.out.push_str("{\"type\":\"array\",\"items\":");
                self.schema(items)?;
                self.props(schema, None)?;
                self.out.push('}');
                return Ok(());
            }
            ConnectType::Map(keys, values) => {
                if keys.type_ != ConnectType::String || keys.optional {
                    return Err(Unconvertible(
                        "a map whose keys are not required strings".to_owned(),
                    ));
                }
                self.out.push_str("{\"type\":\"map\",\"values\":");
                self.schema(values)?;
                self.props(schema, None)?;
                self.out.push('}');
                return Ok(());
            }
            ConnectType::Struct(fields) => return self.record(schema, fields),
        };
        let start = self.out.len();
        self.out.push_str("{\"type\":\"");
        self.out.push_str(primitive);
        self.out.push('"');
        let before_props = self.out.len();
        self.props(schema, connect_type)?;
        if self.out.len() == before_props {
            // No properties: Avro prints a bare type name.
            self.out.truncate(start);
            self.out.push('"');
            self.out.push_str(primitive);
            self.out.push('"');
        } else {
            self.out.push('}');
        }
        Ok(())
    }

    fn record(
        &mut self,
        schema: &ConnectSchema,
        fields: &[(String, ConnectSchema)],
    ) -> Result<(), Unconvertible> {
        let full = match &schema.name {
            Some(name) => adjust_full_name(name),
            None => {
                self.unnamed += 1;
                match self.unnamed {
                    1 => format!("{DEFAULT_NAMESPACE}.{DEFAULT_NAME}"),
                    n => format!("{DEFAULT_NAMESPACE}.{DEFAULT_NAME}{n}"),
                }
            }
        };
        let (space, name) = match full.rsplit_once('.') {
            Some((space, name)) => (Some(space.to_owned()), name.to_owned()),
            None => (None, full.clone()),
        };
        if self.defined.contains(&full) {
            let qualified = if space == self.space { &name } else { &full };
            json::string(&mut self.out, qualified);
            return Ok(());
        }
        self.defined.insert(full.clone());
        self.out.push_str("{\"type\":\"record\",\"name\":");
        json::string(&mut self.out, &name);
        if space != self.space {
            self.out.push_str(",\"namespace\":");
            json::string(&mut self.out, space.as_deref().unwrap_or(""));
        }
        let saved = std::mem::replace(&mut self.space, space);
        self.out.push_str(",\"fields\":[");
        for (i, (field_name, field)) in fields.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.out.push_str("{\"name\":");
            json::string(&mut self.out, &adjust_name(field_name));
            self.out.push_str(",\"type\":");
            self.schema(field)?;
            match (&field.default, field.optional) {
                (Some(default), _) => {
                    self.out.push_str(",\"default\":");
                    default.write(&mut self.out);
                }
                (None, true) => self.out.push_str(",\"default\":null"),
                (None, false) => {}
            }
            self.out.push('}');
        }
        self.out.push(']');
        self.space = saved;
        self.props(schema, None)?;
        self.out.push('}');
        Ok(())
    }

    /// Appends `AvroData`'s properties of `schema` (each preceded by a comma).
    fn props(
        &mut self,
        schema: &ConnectSchema,
        connect_type: Option<&str>,
    ) -> Result<(), Unconvertible> {
        let out = &mut self.out;
        if let Some(doc) = &schema.doc {
            out.push_str(",\"connect.doc\":");
            json::string(out, doc);
        }
        if let Some(version) = schema.version {
            out.push_str(",\"connect.version\":");
            json::integer(out, version);
        }
        if !schema.parameters.is_empty() {
            out.push_str(",\"connect.parameters\":{");
            for (i, (key, value)) in schema.parameters.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json::key(out, key);
                json::string(out, value);
            }
            out.push('}');
        }
        if let Some(default) = &schema.default {
            out.push_str(",\"connect.default\":");
            default.write(out);
        }
        let name = schema.name.as_deref().map(adjust_full_name);
        if let Some(name) = &name {
            out.push_str(",\"connect.name\":");
            json::string(out, name);
        }
        if let Some(connect_type) = connect_type {
            out.push_str(",\"connect.type\":");
            json::string(out, connect_type);
        }
        match schema.name.as_deref() {
            Some(DECIMAL) => {
                let number = |key: &str, default: i64| -> Result<i64, Unconvertible> {
                    schema.parameter(key).map_or(Ok(default), |v| {
                        v.parse()
                            .map_err(|_| Unconvertible(format!("decimal {key} {v:?}")))
                    })
                };
                let precision = number(
                    "connect.decimal.precision",
                    i64::from(DEFAULT_DECIMAL_PRECISION),
                )?;
                let scale = number("scale", 0)?;
                // Avro's decimal needs 0 <= scale <= precision; AvroData leaves the logical
                // type off otherwise (Oracle's negative scales).
                if precision > 0 && (0..=precision).contains(&scale) {
                    out.push_str(",\"logicalType\":\"decimal\",\"precision\":");
                    json::integer(out, precision);
                    out.push_str(",\"scale\":");
                    json::integer(out, scale);
                }
            }
            Some(TIMESTAMP) => out.push_str(",\"logicalType\":\"timestamp-millis\""),
            Some(DATE) => out.push_str(",\"logicalType\":\"date\""),
            Some(TIME) => out.push_str(",\"logicalType\":\"time-millis\""),
            _ => {}
        }
        Ok(())
    }
}

/// A Connect schema's full name as Debezium's `schema.name.adjustment.mode=avro` makes it a
/// valid Avro full name: every character other than letters, digits, `_` and the dots between
/// names becomes `_`, and a name part that would start with a digit gets a leading `_`.
pub fn adjust_full_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    for (i, part) in name.split('.').enumerate() {
        if i > 0 {
            out.push('.');
        }
        push_adjusted(&mut out, part);
    }
    out
}

/// A field name as Debezium's `field.name.adjustment.mode=avro` makes it a valid Avro name:
/// every character other than letters, digits and `_` becomes `_` (Oracle allows `#` and `$`),
/// and a leading digit gets a `_` before it.
pub fn adjust_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    push_adjusted(&mut out, name);
    out
}

fn push_adjusted(out: &mut String, name: &str) {
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        out.push('_');
    }
    out.extend(name.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '_'
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn avro(connect: &str) -> String {
        let schema = avro_schema(&ConnectSchema::parse(connect).unwrap()).unwrap();
        apache_avro::Schema::parse_str(&schema).unwrap_or_else(|e| panic!("{e}: {schema}"));
        schema
    }

    #[test]
    fn names_split_at_the_last_dot_and_records_are_defined_once() {
        let value = r#"{"type":"struct","fields":[{"type":"int64","optional":false,"field":"ID"}],"optional":true,"name":"p.S.T.Value","field":"before"}"#;
        let connect = format!(
            r#"{{"type":"struct","fields":[{value},{},{{"type":"struct","fields":[],"optional":false,"name":"other.Source","version":1,"field":"source"}}],"optional":false,"name":"p.S.T.Envelope","version":2}}"#,
            value.replace("before", "after")
        );
        assert_eq!(
            avro(&connect),
            concat!(
                r#"{"type":"record","name":"Envelope","namespace":"p.S.T","fields":["#,
                r#"{"name":"before","type":["null",{"type":"record","name":"Value","fields":[{"name":"ID","type":"long"}],"connect.name":"p.S.T.Value"}],"default":null},"#,
                r#"{"name":"after","type":["null","Value"],"default":null},"#,
                r#"{"name":"source","type":{"type":"record","name":"Source","namespace":"other","fields":[],"connect.version":1,"connect.name":"other.Source"}}"#,
                r#"],"connect.version":2,"connect.name":"p.S.T.Envelope"}"#
            )
        );
    }

    #[test]
    fn logical_types_and_connect_properties() {
        let field = |schema: &str| {
            let record = avro(&format!(
                r#"{{"type":"struct","fields":[{schema}],"optional":false,"name":"a.R"}}"#
            ));
            let start = record.find(r#""type":"#).unwrap() + 7;
            let start = record[start..].find(r#""type":"#).unwrap() + start + 7;
            record[start..record.len() - r#"}],"connect.name":"a.R"}"#.len()].to_owned()
        };
        assert_eq!(
            field(
                r#"{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"A"}"#
            ),
            r#"{"type":"bytes","connect.version":1,"connect.parameters":{"scale":"2","connect.decimal.precision":"10"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal","precision":10,"scale":2}"#
        );
        // Negative scale: no Avro decimal.
        assert_eq!(
            field(
                r#"{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"-2","connect.decimal.precision":"20"},"field":"A"}"#
            ),
            r#"{"type":"bytes","connect.version":1,"connect.parameters":{"scale":"-2","connect.decimal.precision":"20"},"connect.name":"org.apache.kafka.connect.data.Decimal"}"#
        );
        assert_eq!(
            field(r#"{"type":"int8","optional":true,"field":"A"}"#),
            r#"["null",{"type":"int","connect.type":"int8"}],"default":null"#
        );
        assert_eq!(
            field(
                r#"{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"A"}"#
            ),
            r#"{"type":"long","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}"#
        );
        assert_eq!(
            field(
                r#"{"type":"int64","optional":false,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"A"}"#
            ),
            r#"{"type":"long","connect.version":1,"connect.name":"io.debezium.time.MicroTimestamp"}"#
        );
        assert_eq!(
            field(
                r#"{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,false"},"default":"false","field":"A"}"#
            ),
            r#"[{"type":"string","connect.version":1,"connect.parameters":{"allowed":"true,false"},"connect.default":"false","connect.name":"io.debezium.data.Enum"},"null"],"default":"false""#
        );
    }

    #[test]
    fn unnamed_structs_get_connects_default_names() {
        let schema = avro(
            r#"{"type":"struct","fields":[{"type":"struct","fields":[],"optional":false,"field":"a"},{"type":"struct","fields":[],"optional":false,"field":"b"}],"optional":false}"#,
        );
        assert!(schema.starts_with(
            r#"{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":[{"name":"a","type":{"type":"record","name":"ConnectDefault2","fields":[]}}"#
        ), "{schema}");
    }

    #[test]
    fn names_are_adjusted_for_avro() {
        assert_eq!(adjust_name("AMOUNT$#"), "AMOUNT__");
        assert_eq!(adjust_name("1ST"), "_1ST");
        assert_eq!(
            adjust_full_name("server-1.C##APP.9LIVES.Value"),
            "server_1.C__APP._9LIVES.Value"
        );
        let schema = avro(
            r#"{"type":"struct","fields":[{"type":"string","optional":false,"field":"A#B"}],"optional":false,"name":"p-1.C##X.T$.Value"}"#,
        );
        assert!(schema.contains(r#""name":"A_B""#), "{schema}");
        assert!(schema.contains(r#""namespace":"p_1.C__X.T_""#), "{schema}");
    }
}
