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
//!
//! A child is sent only when its desired state differs from the one last applied, or when its
//! cached copy is no longer the object that apply returned (someone changed or deleted it); see
//! [`AppliedChildren`].

use k8s_openapi::NamespaceResourceScope;
use kube::api::{Patch, PatchParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client, Resource};
use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::OracleCaptureStatus;
use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

use super::watch::Caches;
use crate::build::CaptureChildren;

/// The field manager of everything the operator writes.
pub const FIELD_MANAGER: &str = "redoline-operator";

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

/// What was last applied for each child of one capture, so that an unchanged child is not sent
/// again: the digest of the desired object, and the version of the object the API server answered
/// with (`resourceVersion`; for the StatefulSet its `generation`, since its status changes all the
/// time). Kept in memory only: after a restart every child is applied once more.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppliedChildren {
    entries: Vec<(&'static str, Applied)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Applied {
    digest: Vec<u8>,
    version: String,
}

impl AppliedChildren {
    fn get(&self, kind: &str) -> Option<&Applied> {
        self.entries
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, a)| a)
    }

    fn set(&mut self, kind: &'static str, applied: Applied) {
        self.entries.retain(|(k, _)| *k != kind);
        self.entries.push((kind, applied));
    }

    /// Forgets the StatefulSet, so the next reconcile applies it whatever the cache says.
    pub fn forget_stateful_set(&mut self) {
        self.entries.retain(|(k, _)| *k != "StatefulSet");
    }
}

/// The version a cached or returned object is compared by (see [`AppliedChildren`]).
fn version<K: Resource<DynamicType = ()>>(object: &K) -> String {
    let meta = object.meta();
    if K::kind(&()) == "StatefulSet" {
        format!("generation {}", meta.generation.unwrap_or(0))
    } else {
        meta.resource_version.clone().unwrap_or_default()
    }
}

/// Applies the children in order, skipping each one whose desired state is the one last applied
/// and whose cached copy is still the object that apply returned. With `with_stateful_set` false
/// the StatefulSet is left as it is (see the controller: a broken Secret reference must not roll
/// the pod, and a spill resize replaces it). Returns how many objects were sent.
pub async fn children(
    client: &Client,
    namespace: &str,
    children: &CaptureChildren,
    with_stateful_set: bool,
    caches: &Caches,
    applied: &mut AppliedChildren,
) -> Result<usize, ApplyError> {
    let CaptureChildren {
        service_account,
        config_map,
        service,
        stateful_set,
    } = children;
    let mut sent = 0;
    let cached = cached_version(&caches.service_accounts, namespace, service_account);
    sent += apply_if_changed(client, namespace, service_account, cached, applied).await?;
    let cached = cached_version(&caches.config_maps, namespace, config_map);
    sent += apply_if_changed(client, namespace, config_map, cached, applied).await?;
    let cached = cached_version(&caches.services, namespace, service);
    sent += apply_if_changed(client, namespace, service, cached, applied).await?;
    if with_stateful_set {
        let cached = cached_version(&caches.stateful_sets, namespace, stateful_set);
        sent += apply_if_changed(client, namespace, stateful_set, cached, applied).await?;
    }
    Ok(sent)
}

/// The version of the cached copy of `desired`, if the cache holds one.
fn cached_version<C, K>(cache: &Store<C>, namespace: &str, desired: &K) -> Option<String>
where
    C: Resource<DynamicType = ()> + Clone,
    K: Resource<DynamicType = ()>,
{
    let name = desired.meta().name.as_deref()?;
    let object = cache.get(&ObjectRef::new(name).within(namespace))?;
    // The cached copy is compared the way the desired object's kind is.
    Some(if K::kind(&()) == "StatefulSet" {
        format!("generation {}", object.meta().generation.unwrap_or(0))
    } else {
        object.meta().resource_version.clone().unwrap_or_default()
    })
}

/// Server-side applies `object` unless it is unchanged since the last apply and the cached copy
/// (`cached`: its version, `None` when the cache has none) is what that apply returned. Returns 1
/// when it was sent, 0 when skipped.
async fn apply_if_changed<K>(
    client: &Client,
    namespace: &str,
    object: &K,
    cached: Option<String>,
    applied: &mut AppliedChildren,
) -> Result<usize, ApplyError>
where
    K: Resource<Scope = NamespaceResourceScope, DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + Serialize
        + DeserializeOwned,
{
    let kind = static_kind::<K>();
    // An object that cannot be serialised has no digest and is always sent (apply then fails
    // with the same error).
    let digest = serde_json::to_vec(object)
        .map(|bytes| Sha256::digest(&bytes).to_vec())
        .unwrap_or_default();
    let unchanged = applied.get(kind).is_some_and(|last| {
        !digest.is_empty() && last.digest == digest && cached.as_ref() == Some(&last.version)
    });
    if unchanged {
        return Ok(0);
    }
    let name = object.meta().name.clone().unwrap_or_default();
    let answer = Api::<K>::namespaced(client.clone(), namespace)
        .patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(object),
        )
        .await
        .map_err(|source| ApplyError { kind, name, source })?;
    applied.set(
        kind,
        Applied {
            digest,
            version: version(&answer),
        },
    );
    Ok(1)
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
    fn applied_children_are_remembered_per_kind() {
        let mut applied = AppliedChildren::default();
        let entry = |version: &str| Applied {
            digest: vec![1, 2],
            version: version.into(),
        };
        applied.set("ConfigMap", entry("5"));
        applied.set("StatefulSet", entry("generation 1"));
        applied.set("ConfigMap", entry("6"));
        assert_eq!(applied.get("ConfigMap"), Some(&entry("6")));
        assert_eq!(applied.entries.len(), 2);
        applied.forget_stateful_set();
        assert_eq!(applied.get("StatefulSet"), None);
        assert_eq!(applied.get("ConfigMap"), Some(&entry("6")));
    }

    #[test]
    fn a_stateful_set_is_compared_by_generation_and_others_by_resource_version() {
        let mut children = build(&fixtures::sample(), &fixtures::settings()).unwrap();
        children.stateful_set.metadata.generation = Some(3);
        children.stateful_set.metadata.resource_version = Some("99".into());
        children.config_map.metadata.resource_version = Some("42".into());
        assert_eq!(version(&children.stateful_set), "generation 3");
        assert_eq!(version(&children.config_map), "42");
    }
}
