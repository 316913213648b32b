//! The `OracleCapture` API of redoline (`redoline.io/v1alpha1`) and the stop codes it reports.
//!
//! ```text
//! OracleCapture (this crate) ──> operator: validate → build → apply → observe → status
//!                           └──> capture: the spec's fields are the capture config's fields
//! ```
//!
//! The CRD YAML under `crds/` is generated from these types by `cargo run -p redoline-crds --bin
//! crdgen`; a test fails when the committed file drifts from the types.
//! `docs/reference.md` is generated from the same schema by [`reference`] (`make docs`), with the
//! same kind of drift test.
//!
//! Besides the Kubernetes API, what the capture tells the operator directly is API too: the stop
//! codes ([`stop`]), and the `/status` document and the termination message ([`capture`]).

pub mod capture;
#[cfg(feature = "logging")]
pub mod logging;
#[cfg(feature = "metrics-endpoint")]
pub mod metrics_endpoint;
pub mod quantity;
pub mod reference;
pub mod stop;
pub mod v1alpha1;

pub use quantity::{ByteQuantity, Quantity};
pub use stop::{STOP_CODE_PATTERN, StopCode, is_condition_reason, is_stop_code_shaped};
pub use v1alpha1::{OracleCapture, OracleCaptureSpec, OracleCaptureStatus};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};

/// The OracleCapture CustomResourceDefinition, as applied to clusters.
pub fn crd() -> CustomResourceDefinition {
    use kube::CustomResourceExt;
    let mut crd = OracleCapture::crd();
    for version in &mut crd.spec.versions {
        if let Some(schema) = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        {
            drop_null_from_defaulted_sizes(schema);
        }
    }
    crd
}

/// kube-derive marks every optional int-or-string property nullable. Our sizes always have a
/// default, and a nullable field keeps an explicit `null` instead of defaulting it, which the
/// capture would then refuse; without `nullable` the apiserver replaces `null` by the default.
fn drop_null_from_defaulted_sizes(schema: &mut JSONSchemaProps) {
    if schema.x_kubernetes_int_or_string == Some(true) && schema.default.is_some() {
        schema.nullable = None;
    }
    for child in schema.properties.iter_mut().flat_map(|p| p.values_mut()) {
        drop_null_from_defaulted_sizes(child);
    }
    if let Some(k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray::Schema(items)) =
        schema.items.as_mut()
    {
        drop_null_from_defaulted_sizes(items);
    }
}

/// The CustomResourceDefinition of every kind in this crate, as YAML (one document).
pub fn crd_yaml() -> Result<String, serde_norway::Error> {
    serde_norway::to_string(&crd())
}
