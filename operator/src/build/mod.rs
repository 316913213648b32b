//! Desired state: the Kubernetes objects one `OracleCapture` owns, as pure functions of the
//! resource and the operator's settings. No I/O, no clock: the reconciler applies what these return
//! with server-side apply, and the unit tests read them directly.
//!
//! | object | name | why |
//! |---|---|---|
//! | ServiceAccount | `<name>-capture` | the pod's identity; no API permissions, token not mounted |
//! | ConfigMap | `<name>-capture-config` | the capture config rendered from the spec; never a secret |
//! | Service | `<name>-capture` | the HTTP port: `/metrics`, `/status` for the operator's lag polls |
//! | StatefulSet | `<name>-capture` | one capture pod (zero when suspended) with its spill volume |
//!
//! Every object carries the same labels and a controller owner reference to the OracleCapture, so
//! deleting the resource deletes them all through Kubernetes' garbage collector.

mod config_map;
mod kafka_credentials;
mod registry_credentials;
mod service;
mod service_account;
mod simulator;
mod statefulset;

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Service, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Resource;
use redoline_crds::OracleCapture;

pub use config_map::{CONFIG_FILE, CONFIG_HASH_ANNOTATION, render_capture_config};
pub use kafka_credentials::{KAFKA_AUTH_DIR, KAFKA_TLS_DIR};
pub use simulator::scenario_file_name;
pub use statefulset::{
    CAPTURE_CONTAINER, DOCTOR_CONTAINER, HTTP_PORT, SPILL_DIR, SPILL_VOLUME, SecretVolume,
    mounted_secret_files, secret_volumes,
};

/// Settings of the operator that shape what it builds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperatorSettings {
    /// The capture image used when `spec.image` is unset: the operator's own version.
    pub default_image: String,
    /// A directory on the nodes with the simulator's scenarios: every capture then runs on the
    /// Oracle simulator instead of a database (`simulator.rs`; demos and tests only).
    pub simulator_scenarios: Option<String>,
}

/// The objects one OracleCapture owns.
#[derive(Clone, Debug, PartialEq)]
pub struct CaptureChildren {
    pub service_account: ServiceAccount,
    pub config_map: ConfigMap,
    pub service: Service,
    pub stateful_set: StatefulSet,
}

/// Why the desired state cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("the OracleCapture has no {0} yet; it must be read from the API server first")]
    MissingMetadata(&'static str),
    #[error("spec.buffer.spill.size: {0}")]
    SpillSize(String),
    #[error("cannot render the capture config: {0}")]
    RenderConfig(String),
}

/// Builds every object the capture owns.
pub fn build(
    capture: &OracleCapture,
    settings: &OperatorSettings,
) -> Result<CaptureChildren, BuildError> {
    let identity = Identity::of(capture)?;
    let config_map = config_map::build(capture, &identity, settings)?;
    Ok(CaptureChildren {
        service_account: service_account::build(&identity),
        service: service::build(&identity),
        stateful_set: statefulset::build(capture, &identity, settings, &config_map)?,
        config_map,
    })
}

/// What every child shares: names, namespace, labels and the owner reference.
#[derive(Clone, Debug)]
pub(crate) struct Identity {
    pub capture_name: String,
    pub namespace: String,
    pub owner: OwnerReference,
}

impl Identity {
    fn of(capture: &OracleCapture) -> Result<Self, BuildError> {
        let capture_name = capture
            .metadata
            .name
            .clone()
            .ok_or(BuildError::MissingMetadata("name"))?;
        let namespace = capture
            .metadata
            .namespace
            .clone()
            .ok_or(BuildError::MissingMetadata("namespace"))?;
        let owner = capture
            .controller_owner_ref(&())
            .ok_or(BuildError::MissingMetadata("uid"))?;
        Ok(Self {
            capture_name,
            namespace,
            owner,
        })
    }

    /// Name of the StatefulSet, Service and ServiceAccount.
    pub fn workload_name(&self) -> String {
        format!("{}-capture", self.capture_name)
    }

    pub fn config_map_name(&self) -> String {
        format!("{}-capture-config", self.capture_name)
    }

    /// Labels that select this capture's pods; they never change for a given resource.
    pub fn selector_labels(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("app.kubernetes.io/name".into(), "redoline-capture".into()),
            (
                "app.kubernetes.io/instance".into(),
                self.capture_name.clone(),
            ),
        ])
    }

    pub fn labels(&self) -> BTreeMap<String, String> {
        let mut labels = self.selector_labels();
        labels.insert("app.kubernetes.io/component".into(), "capture".into());
        labels.insert("app.kubernetes.io/part-of".into(), "redoline".into());
        labels.insert(
            "app.kubernetes.io/managed-by".into(),
            "redoline-operator".into(),
        );
        labels
    }

    pub fn metadata(&self, name: String) -> ObjectMeta {
        ObjectMeta {
            name: Some(name),
            namespace: Some(self.namespace.clone()),
            labels: Some(self.labels()),
            owner_references: Some(vec![self.owner.clone()]),
            ..ObjectMeta::default()
        }
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    use redoline_crds::OracleCapture;

    /// The sample OracleCapture of `crds/examples`, as the API server returns it (with a uid).
    pub fn sample() -> OracleCapture {
        let mut capture: OracleCapture =
            serde_norway::from_str(include_str!("../../../crds/examples/oraclecapture.yaml"))
                .expect("sample parses");
        capture.metadata.uid = Some("7b0c2f64-0d61-4b8e-9a39-3d1f1f0a0c11".into());
        capture
    }

    /// The sample as capture `name` with `uid` in `namespace`.
    pub fn sample_at(namespace: &str, name: &str, uid: &str) -> OracleCapture {
        let mut capture = sample();
        capture.metadata.namespace = Some(namespace.into());
        capture.metadata.name = Some(name.into());
        capture.metadata.uid = Some(uid.into());
        capture
    }

    pub fn settings() -> super::OperatorSettings {
        super::OperatorSettings {
            default_image: "ghcr.io/redoline/redoline-capture:0.1.0".into(),
            simulator_scenarios: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_child_is_owned_and_labelled() {
        let children = build(&fixtures::sample(), &fixtures::settings()).unwrap();
        let metas = [
            &children.service_account.metadata,
            &children.config_map.metadata,
            &children.service.metadata,
            &children.stateful_set.metadata,
        ];
        for meta in metas {
            assert_eq!(meta.namespace.as_deref(), Some("sales"));
            let owner = &meta.owner_references.as_ref().unwrap()[0];
            assert_eq!(owner.kind, "OracleCapture");
            assert_eq!(owner.name, "orders");
            assert_eq!(owner.controller, Some(true));
            let labels = meta.labels.as_ref().unwrap();
            assert_eq!(labels["app.kubernetes.io/instance"], "orders");
            assert_eq!(labels["app.kubernetes.io/managed-by"], "redoline-operator");
        }
        assert_eq!(
            children.stateful_set.metadata.name.as_deref(),
            Some("orders-capture")
        );
        assert_eq!(
            children.config_map.metadata.name.as_deref(),
            Some("orders-capture-config")
        );
    }

    #[test]
    fn a_resource_not_yet_stored_is_refused() {
        let mut capture = fixtures::sample();
        capture.metadata.uid = None;
        assert_eq!(
            build(&capture, &fixtures::settings()).unwrap_err(),
            BuildError::MissingMetadata("uid")
        );
    }
}
