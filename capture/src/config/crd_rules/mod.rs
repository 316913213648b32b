//! The CRD's own CEL rules (`x-kubernetes-validations`), evaluated on the capture config.
//!
//! Each rule is written once, on the `redoline_crds` types; the schema with its rules is taken
//! from the generated CRD ([`redoline_crds::crd`]), never copied. The walk follows the
//! apiserver's: the CRD's structural schema (from `spec` down) is walked alongside the config
//! document, each rule is evaluated with `self` bound to the node it is declared on, and a node
//! the document does not hold is not evaluated. The Kubernetes functions the rules call beyond
//! standard CEL are in [`kubernetes`]. A failure is a [`ConfigError`] with the rule's `message`,
//! at the rule's `fieldPath` under its node (the field the apiserver names too); a rule that
//! quantifies over that field (`.all(..)`) is narrowed to the first entry that fails it on its
//! own, so `snapshot.selectOverrides.SALES.ITEMS` is named rather than the whole map. A list the
//! schema declares `x-kubernetes-list-type: set` is refused with a repeated entry, as the
//! apiserver refuses it.
//!
//! The document is the typed config serialized again, so defaults are filled in as the
//! apiserver fills them before it evaluates. It is the operator-RENDERED config, not the spec
//! (`operator/src/build/config_map.rs`), and per rule that means:
//!
//! - Credentials: the spec's Secret references are file paths in the config under other names
//!   (`passwordSecret` is `passwordFile`, ..., see [`COUNTERPARTS`]). The rules only ask whether
//!   they are set (`has(..)`), which a path answers as the reference did, so the document is
//!   given the spec's names for the evaluation, and failures name the config's field.
//!   `krb5Config` has no counterpart (the capture reads `KRB5_CONFIG`): `!has(self.krb5Config)`
//!   holds, and the rule of its own block is never evaluated. Correct: the operator has applied
//!   them to the spec.
//! - Dropped by the operator: the spill volume's `size` and `storageClassName` (see
//!   [`SPEC_ONLY`]). The rule "maxBytes must not exceed size" reads `size`, which the capture
//!   never has (nor a local run, which has a directory instead of a volume): it is the volume's
//!   rule, enforced by the apiserver, and skipped here. Any other rule that reads a field the
//!   document lacks is an evaluation error, reported as a failure of that rule.
//! - Local alternatives, which the CRD does not know: `database.simulator` replaces the
//!   connection, so the rules of `database` (one of serviceName and connectString, host with
//!   serviceName) do not apply with it (the caller passes such nodes in `skip`); the file sink
//!   replaces `kafka`, whose rules are then not evaluated since the node is absent. The capture's
//!   own rules for those alternatives are in `super::validate`, named as the capture's.
//! - Everything else is the spec's field under the spec's name, and its rules apply unchanged.

mod kubernetes;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, LazyLock};

use cel::objects::Value as CelValue;
use cel::{Context, ExecutionError, Program};
use serde_json::Value;

use super::ConfigError;

/// The config's fields that hold a file where the spec holds a Secret reference:
/// `(config name, spec name)`.
pub const COUNTERPARTS: [(&str, &str); 4] = [
    ("passwordFile", "passwordSecret"),
    ("clientSecretFile", "clientSecret"),
    ("keytabFile", "keytabSecret"),
    ("tokenFile", "tokenSecret"),
];

/// Spec fields the operator leaves out of the rendered config, as dotted paths: a rule that
/// reads one of them is not the capture's to evaluate.
pub const SPEC_ONLY: [&str; 2] = ["buffer.spill.size", "buffer.spill.storageClassName"];

/// Evaluates every CRD rule on the config `document`, except those declared on the nodes named
/// in `skip` (dotted paths). The first failure, depth first (a field's rules before those of
/// the object holding it), is returned.
pub fn check(document: &Value, skip: &[&str]) -> Result<(), ConfigError> {
    let schema = SPEC_SCHEMA.as_ref().map_err(Clone::clone)?;
    let mut document = document.clone();
    to_spec_names(&mut document);
    let mut context = Context::default();
    kubernetes::register(&mut context).map_err(|error| ConfigError::new("(crd rules)", error))?;
    let walk = Walk {
        skip,
        context: &context,
    };
    walk.node(schema, &document, &FieldPath::default())
}

/// The schema, read and its rules compiled once.
static SPEC_SCHEMA: LazyLock<Result<Node, ConfigError>> = LazyLock::new(spec_schema);

/// One schema node and what the walk needs of it.
struct Node {
    rules: Vec<Rule>,
    properties: BTreeMap<String, Node>,
    items: Option<Box<Node>>,
    values: Option<Box<Node>>,
    set: bool,
}

struct Rule {
    source: String,
    program: Program,
    message: String,
    field_path: Vec<String>,
}

/// The schema of `spec` in the generated CRD, rules compiled.
fn spec_schema() -> Result<Node, ConfigError> {
    let unreadable = |problem: String| ConfigError::new("(crd rules)", problem);
    let crd = serde_json::to_value(redoline_crds::crd())
        .map_err(|error| unreadable(error.to_string()))?;
    let spec = crd
        .pointer("/spec/versions/0/schema/openAPIV3Schema/properties/spec")
        .ok_or_else(|| unreadable("the CRD has no spec schema".to_owned()))?;
    Node::read(spec).map_err(unreadable)
}

impl Node {
    fn read(schema: &Value) -> Result<Self, String> {
        let mut rules = Vec::new();
        for declared in schema
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let source = declared
                .get("rule")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("a validation without a rule: {declared}"))?;
            let program = Program::compile(source)
                .map_err(|error| format!("rule {source:?} does not compile: {error}"))?;
            let message = declared
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| format!("failed rule: {source}"), str::to_owned);
            let field_path = declared
                .get("fieldPath")
                .and_then(Value::as_str)
                .map(|path| {
                    path.split('.')
                        .filter(|part| !part.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            rules.push(Rule {
                source: source.to_owned(),
                program,
                message,
                field_path,
            });
        }
        let mut properties = BTreeMap::new();
        for (name, property) in schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            properties.insert(name.clone(), Node::read(property)?);
        }
        let child = |key: &str| -> Result<Option<Box<Node>>, String> {
            match schema.get(key) {
                Some(inner @ Value::Object(_)) => Ok(Some(Box::new(Node::read(inner)?))),
                _ => Ok(None),
            }
        };
        let node = Self {
            rules,
            properties,
            items: child("items")?,
            values: child("additionalProperties")?,
            set: schema.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("set"),
        };
        // The apiserver refuses a CRD whose fieldPath names no field of the schema; so does this.
        for rule in &node.rules {
            let mut at = &node;
            for name in &rule.field_path {
                at = at
                    .properties
                    .get(name)
                    .ok_or_else(|| format!("rule {:?}: fieldPath names no field", rule.source))?;
            }
        }
        Ok(node)
    }
}

/// Renames the config's counterparts of Secret references to the spec's names.
fn to_spec_names(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (config_name, spec_name) in COUNTERPARTS {
                if let Some(inner) = map.remove(config_name) {
                    map.insert(spec_name.to_owned(), inner);
                }
            }
            map.values_mut().for_each(to_spec_names);
        }
        Value::Array(items) => items.iter_mut().for_each(to_spec_names),
        _ => {}
    }
}

/// A field's path as the config names it: `kafka.authentication.passwordFile`, `tables[1]`,
/// `snapshot.selectOverrides.SALES.ITEMS`.
#[derive(Clone, Debug, Default)]
struct FieldPath(Vec<Segment>);

#[derive(Clone, Debug)]
enum Segment {
    Field(String),
    Index(usize),
}

impl FieldPath {
    fn with(&self, segment: Segment) -> Self {
        let mut path = self.clone();
        path.0.push(segment);
        path
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(top level)");
        }
        for (position, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Field(name) => {
                    let name = COUNTERPARTS
                        .iter()
                        .find(|(_, spec_name)| spec_name == name)
                        .map_or(name.as_str(), |(config_name, _)| config_name);
                    if position > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                }
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// How one rule came out on one node.
enum Outcome {
    Holds,
    Fails,
    /// The rule reads a field the config does not carry ([`SPEC_ONLY`]).
    NotCarried,
    /// The rule could not be evaluated: a failure, as the apiserver counts it.
    Error(String),
}

struct Walk<'a> {
    skip: &'a [&'a str],
    /// Standard CEL and [`kubernetes`]' functions; each evaluation binds `self` in a scope.
    context: &'a Context<'a, 'a>,
}

impl Walk<'_> {
    fn node(&self, node: &Node, value: &Value, path: &FieldPath) -> Result<(), ConfigError> {
        match value {
            Value::Null => return Ok(()),
            Value::Object(map) => {
                for (key, inner) in map {
                    let child = node.values.as_deref().or_else(|| node.properties.get(key));
                    if let Some(child) = child {
                        self.node(child, inner, &path.with(Segment::Field(key.clone())))?;
                    }
                }
            }
            Value::Array(items) => {
                if node.set
                    && let Some(repeated) =
                        (1..items.len()).find(|&i| items[..i].contains(&items[i]))
                {
                    return Err(ConfigError::new(
                        path.with(Segment::Index(repeated)).to_string(),
                        format!("{} is listed twice", items[repeated]),
                    ));
                }
                if let Some(item) = &node.items {
                    for (index, inner) in items.iter().enumerate() {
                        self.node(item, inner, &path.with(Segment::Index(index)))?;
                    }
                }
            }
            _ => {}
        }
        if self.skip.contains(&path.to_string().as_str()) {
            return Ok(());
        }
        for rule in &node.rules {
            self.rule(rule, value, path)?;
        }
        Ok(())
    }

    fn rule(&self, rule: &Rule, value: &Value, path: &FieldPath) -> Result<(), ConfigError> {
        let mut target = rule.field_path.iter().fold(path.clone(), |at, name| {
            at.with(Segment::Field(name.clone()))
        });
        match self.evaluate(rule, value, path) {
            Outcome::Holds | Outcome::NotCarried => return Ok(()),
            Outcome::Error(error) => {
                return Err(ConfigError::new(
                    target.to_string(),
                    format!(
                        "{} (the rule could not be evaluated: {error})",
                        rule.message
                    ),
                ));
            }
            Outcome::Fails => {}
        }
        if let Some(entry) = self.narrow(rule, value, path) {
            target = target.with(entry);
        }
        Err(ConfigError::new(target.to_string(), rule.message.clone()))
    }

    /// For a rule that quantifies over its field (`.all(..)`): the first entry of the field that
    /// fails the rule when it is the field's only entry.
    fn narrow(&self, rule: &Rule, value: &Value, path: &FieldPath) -> Option<Segment> {
        if !rule.source.contains(".all(") {
            return None;
        }
        let pointer: String = rule
            .field_path
            .iter()
            .map(|name| format!("/{name}"))
            .collect();
        let entries: Vec<(Segment, Value)> = match value.pointer(&pointer)? {
            Value::Object(map) => map
                .iter()
                .map(|(key, inner)| {
                    let single = serde_json::Map::from_iter([(key.clone(), inner.clone())]);
                    (Segment::Field(key.clone()), Value::Object(single))
                })
                .collect(),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(index, inner)| (Segment::Index(index), Value::Array(vec![inner.clone()])))
                .collect(),
            _ => return None,
        };
        entries.into_iter().find_map(|(segment, single)| {
            let mut alone = value.clone();
            *alone.pointer_mut(&pointer)? = single;
            matches!(self.evaluate(rule, &alone, path), Outcome::Fails).then_some(segment)
        })
    }

    fn evaluate(&self, rule: &Rule, value: &Value, path: &FieldPath) -> Outcome {
        let mut scope = self.context.new_inner_scope();
        scope.add_variable_from_value("self", to_cel(value));
        match rule.program.execute(&scope) {
            Ok(CelValue::Bool(true)) => Outcome::Holds,
            Ok(CelValue::Bool(false)) => Outcome::Fails,
            Ok(other) => Outcome::Error(format!("{other:?} is not a bool")),
            Err(ExecutionError::NoSuchKey(key))
                if SPEC_ONLY.contains(
                    &path
                        .with(Segment::Field(key.to_string()))
                        .to_string()
                        .as_str(),
                ) =>
            {
                Outcome::NotCarried
            }
            Err(error) => Outcome::Error(error.to_string()),
        }
    }
}

/// A JSON value as CEL sees it: whole numbers are `int` (`uint` only past `i64`), as the
/// apiserver types an integer field.
fn to_cel(value: &Value) -> CelValue {
    match value {
        Value::Null => CelValue::Null,
        Value::Bool(b) => CelValue::Bool(*b),
        Value::Number(n) => n
            .as_i64()
            .map(CelValue::Int)
            .or_else(|| n.as_u64().map(CelValue::UInt))
            .unwrap_or_else(|| CelValue::Float(n.as_f64().unwrap_or(f64::NAN))),
        Value::String(s) => CelValue::String(Arc::new(s.clone())),
        Value::Array(items) => CelValue::List(Arc::new(items.iter().map(to_cel).collect())),
        Value::Object(map) => {
            let entries: HashMap<String, CelValue> = map
                .iter()
                .map(|(key, inner)| (key.clone(), to_cel(inner)))
                .collect();
            CelValue::Map(entries.into())
        }
    }
}

/// Every rule of the CRD as `(node, message)`, the node dotted (`tables[]` for a list's items,
/// `saslExtensions.*` for a map's values): for the test that pairs each rule with a config.
#[cfg(test)]
pub fn declared() -> Vec<(String, String)> {
    fn collect(node: &Node, path: &str, into: &mut Vec<(String, String)>) {
        for rule in &node.rules {
            into.push((path.to_owned(), rule.message.clone()));
        }
        for (name, child) in &node.properties {
            let child_path = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            collect(child, &child_path, into);
        }
        if let Some(items) = &node.items {
            collect(items, &format!("{path}[]"), into);
        }
        if let Some(values) = &node.values {
            collect(values, &format!("{path}.*"), into);
        }
    }
    let mut rules = Vec::new();
    if let Ok(schema) = SPEC_SCHEMA.as_ref() {
        collect(schema, "", &mut rules);
    }
    rules
}
