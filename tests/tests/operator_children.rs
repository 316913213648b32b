//! The operator's desired state on a real control plane: every child object built for the sample
//! OracleCapture is accepted by kube-apiserver through server-side apply, kube-controller-manager
//! turns the StatefulSet into a capture pod with its spill claim, and deleting the OracleCapture
//! garbage-collects everything it owns.

// Test files may panic: a failed expectation here is a failed test.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Pod, Service, ServiceAccount};
use kube::api::{Api, DeleteParams, PropagationPolicy};
use kube::{Client, Resource};
use redoline_crds::OracleCapture;
use redoline_operator::build::{OperatorSettings, build};
use redoline_tests::operator::{self, CAPTURE_IMAGE};
use serde::Serialize;
use serde::de::DeserializeOwned;

const FIELD_MANAGER: &str = "redoline-operator";

async fn apply<K>(client: &Client, ns: &str, object: &K)
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + Serialize
        + DeserializeOwned,
{
    operator::apply(&Api::namespaced(client.clone(), ns), FIELD_MANAGER, object)
        .await
        .unwrap_or_else(|e| panic!("{e:#}"));
}

/// Polls `get` until it returns `Some`, for at most a minute.
async fn eventually<T, F, Fut>(what: &str, get: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    operator::eventually(
        what,
        Duration::from_secs(60),
        Duration::from_millis(500),
        get,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn children_are_accepted_run_and_are_collected_with_their_owner() {
    let (client, ns) = operator::admin_and_namespace("operator-children")
        .await
        .expect("CRD and namespace");

    let captures: Api<OracleCapture> = Api::namespaced(client.clone(), &ns.name);
    let stored = operator::create_sample(&client, &ns.name)
        .await
        .expect("OracleCapture created");

    let children = build(
        &stored,
        &OperatorSettings {
            default_image: CAPTURE_IMAGE.into(),
            simulator_scenarios: None,
        },
    )
    .expect("desired state");
    apply(&client, &ns.name, &children.service_account).await;
    apply(&client, &ns.name, &children.config_map).await;
    apply(&client, &ns.name, &children.service).await;
    apply(&client, &ns.name, &children.stateful_set).await;

    // kube-controller-manager creates the pod and its spill claim from the StatefulSet.
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let pod = eventually("the capture pod", || async {
        pods.get_opt("orders-capture-0").await.ok().flatten()
    })
    .await;
    let spec = pod.spec.expect("pod spec");
    assert_eq!(spec.containers[0].name, "capture");
    assert_eq!(spec.init_containers.expect("init")[0].name, "doctor");
    assert_eq!(
        spec.security_context.expect("security").run_as_non_root,
        Some(true)
    );
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &ns.name);
    let claim = eventually("the spill claim", || async {
        claims
            .get_opt("spill-orders-capture-0")
            .await
            .ok()
            .flatten()
    })
    .await;
    let requested = claim
        .spec
        .expect("claim spec")
        .resources
        .expect("resources");
    assert_eq!(
        requested.requests.expect("requests")["storage"].0,
        (24u64 << 30).to_string()
    );

    // Deleting the OracleCapture removes what it owns (the garbage collector follows the owner
    // references); the spill claim goes through the StatefulSet's retention policy.
    captures
        .delete(
            "orders",
            &DeleteParams {
                propagation_policy: Some(PropagationPolicy::Foreground),
                ..DeleteParams::default()
            },
        )
        .await
        .expect("deleted");
    let statefulsets: Api<StatefulSet> = Api::namespaced(client.clone(), &ns.name);
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), &ns.name);
    let services: Api<Service> = Api::namespaced(client.clone(), &ns.name);
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), &ns.name);
    eventually("the children to be collected", || async {
        let gone = statefulsets.get_opt("orders-capture").await.ok()?.is_none()
            && config_maps
                .get_opt("orders-capture-config")
                .await
                .ok()?
                .is_none()
            && services.get_opt("orders-capture").await.ok()?.is_none()
            && accounts.get_opt("orders-capture").await.ok()?.is_none();
        gone.then_some(())
    })
    .await;
    ns.delete().await;
}
