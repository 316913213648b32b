//! Writing desired state: server-side apply of the children and of the status subresource.
//!
//! One field manager, [`FIELD_MANAGER`], owns every field the operator writes, and applies are
//! forced: the operator is the only writer of these objects, so a conflict can only mean someone
//! edited a managed field by hand, and the spec must win. Fields the operator does not set (the
//! StatefulSet's status, defaults the API server fills in) stay with their owners.
//!
//! The order is fixed: ServiceAccount, ConfigMap, Service, StatefulSet. The pod's dependencies
//! exist before the StatefulSet that starts it, so a first pod never waits on a missing
//! ConfigMap or ServiceAccount.

use std::collections::BTreeMap;

use k8s_openapi::NamespaceResourceScope;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client, Resource};
use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::OracleCaptureStatus;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::build::CaptureChildren;

/// The field manager of everything the operator writes.
pub const FIELD_MANAGER: &str = "redoline-operator";

/// Pod template annotation: a digest of the referenced Secrets, so a changed credential rolls the
/// pod (Secret volumes are refreshed in place, but the capture reads its credentials at start).
pub const SECRETS_HASH_ANNOTATION: &str = "redoline.io/secrets-sha256";

/// A write the API server refused.
#[derive(Debug, thiserror::Error)]
#[error("applying {kind} {name}: {source}")]
pub struct ApplyError {
    pub kind: &'static str,
    pub name: String,
    #[source]
    pub source: kube::Error,
}

impl ApplyError {
    /// The API server refused the object as invalid (HTTP 422): the same write will fail again.
    pub fn is_invalid(&self) -> bool {
        matches!(&self.source, kube::Error::Api(status) if status.code == 422)
    }
}

/// Puts the Secrets' digest on the pod template.
pub fn annotate_secrets(children: &mut CaptureChildren, digest: &str) {
    let template = children
        .stateful_set
        .spec
        .get_or_insert_with(Default::default)
        .template
        .metadata
        .get_or_insert_with(Default::default);
    template
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(SECRETS_HASH_ANNOTATION.to_owned(), digest.to_owned());
}

/// Applies the children in order. With `with_stateful_set` false the StatefulSet is left as it is
/// (see the controller: a broken Secret reference must not roll the pod).
pub async fn children(
    client: &Client,
    namespace: &str,
    children: &CaptureChildren,
    with_stateful_set: bool,
) -> Result<(), ApplyError> {
    let CaptureChildren {
        service_account,
        config_map,
        service,
        stateful_set,
    } = children;
    apply(client, namespace, service_account).await?;
    apply(client, namespace, config_map).await?;
    apply(client, namespace, service).await?;
    if with_stateful_set {
        apply(client, namespace, stateful_set).await?;
    }
    Ok(())
}

async fn apply<K>(client: &Client, namespace: &str, object: &K) -> Result<(), ApplyError>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + Serialize
        + DeserializeOwned,
{
    let name = object.meta().name.clone().unwrap_or_default();
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(object),
    )
    .await
    .map(drop)
    .map_err(|source| ApplyError {
        kind: static_kind::<K>(),
        name,
        source,
    })
}

/// The kind of a k8s-openapi type, as a `'static` name for error messages.
fn static_kind<K: Resource<DynamicType = ()>>() -> &'static str {
    match K::kind(&()).as_ref() {
        "ServiceAccount" => "ServiceAccount",
        "ConfigMap" => "ConfigMap",
        "Service" => "Service",
        "StatefulSet" => "StatefulSet",
        _ => "object",
    }
}

/// Server-side applies `status` to the status subresource. Only the status is sent, so the spec
/// and metadata are never touched by this write.
pub async fn status(
    api: &Api<OracleCapture>,
    name: &str,
    status: &OracleCaptureStatus,
) -> Result<(), ApplyError> {
    let patch = serde_json::json!({
        "apiVersion": OracleCapture::api_version(&()),
        "kind": OracleCapture::kind(&()),
        "status": status,
    });
    api.patch_status(
        name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await
    .map(drop)
    .map_err(|source| ApplyError {
        kind: "OracleCapture status",
        name: name.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{build, fixtures};

    #[test]
    fn the_secrets_digest_lands_on_the_pod_template_only() {
        let mut children = build(&fixtures::sample(), &fixtures::settings()).unwrap();
        annotate_secrets(&mut children, "abc");
        let spec = children.stateful_set.spec.as_ref().unwrap();
        let annotations = spec
            .template
            .metadata
            .as_ref()
            .unwrap()
            .annotations
            .as_ref();
        assert_eq!(annotations.unwrap()[SECRETS_HASH_ANNOTATION], "abc");
        assert!(
            children
                .stateful_set
                .metadata
                .annotations
                .as_ref()
                .is_none_or(|a| !a.contains_key(SECRETS_HASH_ANNOTATION))
        );
    }
}
