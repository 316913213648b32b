//! Kafka Connect schemas read back from the JSON that [`super::super::schema`] writes for
//! `JsonConverter` (`{"type","optional","name","version","doc","parameters","default","fields",
//! "items","keys","values","field"}`), so that the Avro schemas derive from the very Connect
//! schemas the JSON encoding carries. Member order is kept: Connect keeps field and parameter
//! order, and the Avro schema follows it.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};

/// A JSON value whose objects keep their member order.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Self::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value as JSON text.
    pub fn write(&self, out: &mut String) {
        match self {
            Self::Null => out.push_str("null"),
            Self::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Self::Number(n) => out.push_str(&n.to_string()),
            Self::String(s) => crate::event::json::string(out, s),
            Self::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Self::Object(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    crate::event::json::key(out, key);
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(v)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            members.push((key, value));
        }
        Ok(Json::Object(members))
    }
}

/// A Connect schema type.
#[derive(Clone, Debug, PartialEq)]
pub enum ConnectType {
    Int8,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    Boolean,
    String,
    Bytes,
    Array(Box<ConnectSchema>),
    Map(Box<ConnectSchema>, Box<ConnectSchema>),
    Struct(Vec<(String, ConnectSchema)>),
}

/// A Connect schema: its type and the metadata Kafka Connect keeps beside it.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnectSchema {
    pub type_: ConnectType,
    pub optional: bool,
    pub default: Option<Json>,
    pub name: Option<String>,
    pub version: Option<i64>,
    pub doc: Option<String>,
    pub parameters: Vec<(String, String)>,
}

/// A Connect schema JSON that does not describe a schema; never met with the schemas this crate
/// writes, which tests parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a Kafka Connect schema: {0}")]
pub struct NotASchema(pub String);

impl ConnectSchema {
    /// The schema of JsonConverter's schema JSON `text`.
    pub fn parse(text: &str) -> Result<Self, NotASchema> {
        let json: Json = serde_json::from_str(text).map_err(|e| NotASchema(e.to_string()))?;
        Self::from_json(&json)
    }

    fn from_json(json: &Json) -> Result<Self, NotASchema> {
        let text = |key: &str| json.get(key).and_then(Json::as_str).map(str::to_owned);
        let Some(type_name) = text("type") else {
            return Err(NotASchema("a schema without a type".to_owned()));
        };
        let nested = |key: &str| -> Result<Box<ConnectSchema>, NotASchema> {
            match json.get(key) {
                Some(schema) => Ok(Box::new(Self::from_json(schema)?)),
                None => Err(NotASchema(format!("a {type_name} schema without {key}"))),
            }
        };
        let type_ = match type_name.as_str() {
            "int8" => ConnectType::Int8,
            "int16" => ConnectType::Int16,
            "int32" => ConnectType::Int32,
            "int64" => ConnectType::Int64,
            "float" => ConnectType::Float32,
            "double" => ConnectType::Float64,
            "boolean" => ConnectType::Boolean,
            "string" => ConnectType::String,
            "bytes" => ConnectType::Bytes,
            "array" => ConnectType::Array(nested("items")?),
            "map" => ConnectType::Map(nested("keys")?, nested("values")?),
            "struct" => {
                let Some(Json::Array(fields)) = json.get("fields") else {
                    return Err(NotASchema("a struct schema without fields".to_owned()));
                };
                let fields = fields
                    .iter()
                    .map(|field| {
                        let name = field
                            .get("field")
                            .and_then(Json::as_str)
                            .ok_or_else(|| NotASchema("a struct field without a name".into()))?;
                        Ok((name.to_owned(), Self::from_json(field)?))
                    })
                    .collect::<Result<Vec<_>, NotASchema>>()?;
                ConnectType::Struct(fields)
            }
            other => return Err(NotASchema(format!("unknown type {other}"))),
        };
        let parameters = match json.get("parameters") {
            Some(Json::Object(members)) => members
                .iter()
                .map(|(k, v)| match v {
                    Json::String(v) => Ok((k.clone(), v.clone())),
                    _ => Err(NotASchema(format!("parameter {k} is not a string"))),
                })
                .collect::<Result<Vec<_>, NotASchema>>()?,
            _ => Vec::new(),
        };
        let version = match json.get("version") {
            Some(Json::Number(n)) => n.as_i64(),
            _ => None,
        };
        Ok(Self {
            type_,
            optional: matches!(json.get("optional"), Some(Json::Bool(true))),
            default: json.get("default").filter(|d| **d != Json::Null).cloned(),
            name: text("name"),
            version,
            doc: text("doc"),
            parameters,
        })
    }

    /// The value of parameter `key`.
    pub fn parameter(&self, key: &str) -> Option<&str> {
        self.parameters
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_order_and_metadata_are_kept() {
        let schema = ConnectSchema::parse(
            r#"{"type":"struct","fields":[{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"z":"1","a":"2"},"default":"false","field":"snapshot"},{"type":"array","items":{"type":"int64","optional":false},"optional":true,"field":"list"}],"optional":false,"name":"a.B","version":2}"#,
        )
        .unwrap();
        assert_eq!(schema.name.as_deref(), Some("a.B"));
        assert_eq!(schema.version, Some(2));
        let ConnectType::Struct(fields) = &schema.type_ else {
            panic!("a struct")
        };
        let (name, snapshot) = &fields[0];
        assert_eq!(name, "snapshot");
        assert!(snapshot.optional);
        assert_eq!(snapshot.default, Some(Json::String("false".into())));
        assert_eq!(
            snapshot.parameters,
            [("z".into(), "1".into()), ("a".into(), "2".into())]
        );
        assert!(
            matches!(&fields[1].1.type_, ConnectType::Array(items) if items.type_ == ConnectType::Int64)
        );
    }
}
