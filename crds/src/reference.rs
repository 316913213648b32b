//! The OracleCapture reference (`docs/reference.md`), generated from the CRD's OpenAPI schema so
//! that the documentation says exactly what the API server enforces: every field with its type,
//! limits, default and description, and every CEL rule with its message.
//!
//! `cargo run -p redoline-crds --bin refgen > docs/reference.md` (or `make docs`) writes it; a test
//! in `crds/tests/reference.rs` fails when the committed file differs.

use std::fmt::Write;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps, JSONSchemaPropsOrArray,
};

/// The reference page for `crd` (normally [`crate::crd`]) as Markdown.
pub fn markdown(crd: &CustomResourceDefinition) -> String {
    let mut out = String::new();
    let spec = &crd.spec;
    let names = &spec.names;
    out.push_str("<!-- Generated from the CRD schema by `make docs` (crds/src/reference.rs); do not edit. -->\n");
    let _ = writeln!(out, "# {} reference\n", names.kind);
    let _ = writeln!(
        out,
        "The `{}` custom resource, as the API server validates it. Every field below comes from the \
         CRD's OpenAPI schema (`crds/{}.yaml`), which is generated from the Rust types in \
         `crds/src/v1alpha1/`. Defaults are filled in by the API server; rules (CEL) are checked \
         when an object is created or changed, and their message is what `kubectl apply` prints.\n",
        names.kind,
        crd.metadata.name.as_deref().unwrap_or_default()
    );
    out.push_str("| | |\n|---|---|\n");
    let _ = writeln!(out, "| group | `{}` |", spec.group);
    let _ = writeln!(
        out,
        "| kind | `{}` (plural `{}`) |",
        names.kind, names.plural
    );
    if let Some(short) = names.short_names.as_ref().filter(|s| !s.is_empty()) {
        let _ = writeln!(out, "| short names | {} |", code_list(short));
    }
    if let Some(categories) = names.categories.as_ref().filter(|s| !s.is_empty()) {
        let _ = writeln!(out, "| categories | {} |", code_list(categories));
    }
    let _ = writeln!(out, "| scope | {} |", spec.scope);
    out.push('\n');

    for version in &spec.versions {
        let _ = writeln!(
            out,
            "## Version `{}/{}`{}\n",
            spec.group,
            version.name,
            if version.storage {
                " (served, storage)"
            } else {
                ""
            }
        );
        if let Some(columns) = version
            .additional_printer_columns
            .as_ref()
            .filter(|c| !c.is_empty())
        {
            out.push_str("Columns of `kubectl get`:\n\n| column | type | from | meaning |\n|---|---|---|---|\n");
            for c in columns {
                let _ = writeln!(
                    out,
                    "| {} | {} | `{}` | {} |",
                    c.name,
                    c.type_,
                    c.json_path.replace('|', "\\|"),
                    cell(c.description.as_deref().unwrap_or(""))
                );
            }
            out.push('\n');
        }
        if version
            .subresources
            .as_ref()
            .is_some_and(|s| s.status.is_some())
        {
            out.push_str("The status is a subresource: only the operator writes it.\n\n");
        }
        let Some(root) = version
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
        else {
            continue;
        };
        for top in ["spec", "status"] {
            let Some(schema) = root.properties.as_ref().and_then(|p| p.get(top)) else {
                continue;
            };
            let _ = writeln!(out, "### `{top}`\n");
            if let Some(description) = &schema.description {
                let _ = writeln!(out, "{}\n", description.trim());
            }
            section(&mut out, top, schema);
        }
    }
    out
}

/// Fields that hold a Kubernetes core type: documented by Kubernetes, linked rather than expanded.
const KUBERNETES_TYPES: [(&str, &str, &str); 4] = [
    (
        "spec.pod.affinity",
        "Affinity",
        "https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#scheduling",
    ),
    (
        "spec.pod.imagePullSecrets",
        "[]LocalObjectReference",
        "https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/local-object-reference/",
    ),
    (
        "spec.pod.resources",
        "ResourceRequirements",
        "https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#resources",
    ),
    (
        "spec.pod.tolerations",
        "[]Toleration",
        "https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#scheduling",
    ),
];

fn kubernetes_type(path: &str) -> Option<(&'static str, &'static str)> {
    KUBERNETES_TYPES
        .iter()
        .find(|(p, _, _)| *p == path)
        .map(|(_, name, link)| (*name, *link))
}

/// One table for an object's fields, then one subsection per nested object field.
fn section(out: &mut String, path: &str, schema: &JSONSchemaProps) {
    rules(out, path, schema);
    let Some(properties) = schema.properties.as_ref().filter(|p| !p.is_empty()) else {
        return;
    };
    let required = schema.required.clone().unwrap_or_default();
    out.push_str("| field | type | default | description |\n|---|---|---|---|\n");
    for (name, field) in properties {
        let mut kind = match kubernetes_type(&format!("{path}.{name}")) {
            Some((type_name, link)) => format!("[{type_name}]({link}) (Kubernetes)"),
            None => type_text(field),
        };
        if required.contains(name) {
            kind.push_str(", **required**");
        }
        // An object's default is the defaults of its fields, shown in its own section below.
        let default = field
            .default
            .as_ref()
            .filter(|_| object_of(field).is_none() || is_array(field))
            .filter(|d| !d.0.as_object().is_some_and(|o| o.is_empty()))
            .map(|d| format!("`{}`", compact(&d.0)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| `{name}` | {kind} | {default} | {} |",
            cell(field.description.as_deref().unwrap_or(""))
        );
    }
    out.push('\n');
    for (name, field) in properties {
        let child = format!("{path}.{name}");
        if kubernetes_type(&child).is_some() {
            continue;
        }
        if let Some(nested) = object_of(field) {
            let _ = writeln!(
                out,
                "#### `{child}`{}\n",
                if is_array(field) { "[]" } else { "" }
            );
            section(out, &child, nested);
        } else {
            rules(out, &child, field);
        }
    }
}

/// The CEL rules of one schema node, as a list.
fn rules(out: &mut String, path: &str, schema: &JSONSchemaProps) {
    let Some(rules) = schema
        .x_kubernetes_validations
        .as_ref()
        .filter(|r| !r.is_empty())
    else {
        return;
    };
    let _ = writeln!(out, "Rules on `{path}`:\n");
    for rule in rules {
        let _ = writeln!(
            out,
            "- {}",
            rule.message
                .as_deref()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map_or_else(|| format!("`{}`", rule.rule), ToOwned::to_owned)
        );
    }
    out.push('\n');
}

/// The object schema under a field: the field itself, or its array items.
fn object_of(field: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    let target = match field.items.as_ref() {
        Some(JSONSchemaPropsOrArray::Schema(items)) => items.as_ref(),
        _ => field,
    };
    target
        .properties
        .as_ref()
        .is_some_and(|p| !p.is_empty())
        .then_some(target)
}

fn is_array(field: &JSONSchemaProps) -> bool {
    field.type_.as_deref() == Some("array")
}

/// `string (1–253 characters)`, `integer (1–16)`, `one of: a, b`, `quantity`, `[]string`, ...
fn type_text(field: &JSONSchemaProps) -> String {
    if field.x_kubernetes_int_or_string == Some(true) {
        return "quantity (bytes or e.g. `512Mi`)".into();
    }
    let mut text = match field.type_.as_deref() {
        Some("array") => match field.items.as_ref() {
            Some(JSONSchemaPropsOrArray::Schema(items)) => format!("[]{}", type_text(items)),
            _ => "array".into(),
        },
        Some("object") if field.properties.as_ref().is_none_or(|p| p.is_empty()) => {
            if field.x_kubernetes_preserve_unknown_fields == Some(true)
                || field.additional_properties.is_some()
            {
                "map".into()
            } else {
                "object".into()
            }
        }
        Some(t) => t.to_owned(),
        None => "any".into(),
    };
    if let Some(values) = field.enum_.as_ref().filter(|v| !v.is_empty()) {
        // `null` is listed for nullable fields; "optional" says that already.
        let values: Vec<String> = values
            .iter()
            .filter(|v| !v.0.is_null())
            .map(|v| format!("`{}`", compact(&v.0)))
            .collect();
        text = format!("{text}, one of {}", values.join(", "));
    }
    let range = |min: Option<String>, max: Option<String>, unit: &str| match (min, max) {
        (Some(a), Some(b)) => format!(" ({a}–{b}{unit})"),
        (Some(a), None) => format!(" (≥ {a}{unit})"),
        (None, Some(b)) => format!(" (≤ {b}{unit})"),
        (None, None) => String::new(),
    };
    text.push_str(&range(
        field.minimum.map(number),
        field.maximum.map(number),
        "",
    ));
    text.push_str(&range(
        field.min_length.map(|n| n.to_string()),
        field.max_length.map(|n| n.to_string()),
        " characters",
    ));
    text.push_str(&range(
        field.min_items.map(|n| n.to_string()),
        field.max_items.map(|n| n.to_string()),
        " items",
    ));
    if let Some(pattern) = &field.pattern {
        text.push_str(&format!(", pattern `{}`", pattern.replace('|', "\\|")));
    }
    text
}

fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

fn compact(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
    .replace('|', "\\|")
}

fn code_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Text for one table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_field_is_documented() {
        let text = markdown(&crate::crd());
        for field in [
            "`buffer`",
            "`memoryMaxBytes`",
            "#### `spec.buffer.spill`",
            "`credentialsSecret`",
            "`suspend`",
            "### `status`",
            "`lastStop`",
            "Rules on `spec.database`",
            "set exactly one of spec.database.serviceName and spec.database.connectString",
            "| Ready | string |",
        ] {
            assert!(text.contains(field), "{field} missing");
        }
    }

    #[test]
    fn cells_stay_on_one_line() {
        assert_eq!(cell("a\n b | c"), "a b \\| c");
        assert_eq!(number(16.0), "16");
        assert_eq!(number(0.5), "0.5");
    }
}
