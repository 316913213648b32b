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
use redoline_tests::wait;
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
    wait::eventually(
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

/// A capture authenticating with a Strimzi KafkaUser (mutual TLS) and trusting the Strimzi cluster
/// CA by pattern, and one using Kerberos: the StatefulSets are accepted by the apiserver, and the
/// pods kube-controller-manager makes from them carry the Secret volumes (only the named keys,
/// the pattern's Secret whole), the krb5.conf ConfigMap and `KRB5_CONFIG`.
#[tokio::test]
async fn kafka_credentials_reach_the_capture_pod() {
    let (client, ns) = operator::admin_and_namespace("operator-kafka-credentials")
        .await
        .expect("CRD and namespace");
    let settings = OperatorSettings {
        default_image: CAPTURE_IMAGE.into(),
        simulator_scenarios: None,
    };
    let blocks = [
        (
            "mtls",
            serde_json::json!({
                "tls": {"trustedCertificates": [
                    {"secretName": "my-cluster-cluster-ca-cert", "pattern": "*.crt"}]},
                "authentication": {"type": "tls", "certificateAndKey":
                    {"secretName": "capture", "certificate": "user.crt", "key": "user.key"}},
            }),
        ),
        (
            "kerberos",
            serde_json::json!({
                "authentication": {"type": "gssapi", "principal": "capture@EXAMPLE.COM",
                    "keytabSecret": {"secretName": "capture-keytab", "key": "capture.keytab"},
                    "krb5Config": {"configMapName": "krb5"}},
            }),
        ),
    ];
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let mut seen = Vec::new();
    for (name, block) in blocks {
        let mut capture = operator::sample_in(&ns.name).expect("sample");
        capture.metadata.name = Some(name.into());
        operator::set_kafka_fields(&mut capture, &block).unwrap();
        let stored = operator::create_capture(&client, &capture)
            .await
            .expect("OracleCapture created");
        let children = build(&stored, &settings).expect("desired state");
        // The pod names its ServiceAccount, which admission wants to exist.
        apply(&client, &ns.name, &children.service_account).await;
        apply(&client, &ns.name, &children.config_map).await;
        apply(&client, &ns.name, &children.stateful_set).await;
        let pod_name = format!("{name}-capture-0");
        let pod = eventually("the capture pod", || async {
            pods.get_opt(&pod_name).await.ok().flatten()
        })
        .await;
        let spec = pod.spec.expect("pod spec");
        let volumes = spec.volumes.unwrap_or_default();
        let mounts = spec.containers[0].volume_mounts.clone().unwrap_or_default();
        let kafka_credentials = |v: &&k8s_openapi::api::core::v1::Volume| {
            v.name.starts_with("kafka-tls-") || v.name.starts_with("kafka-auth-")
        };
        for volume in volumes.iter().filter(kafka_credentials) {
            let mount = mounts
                .iter()
                .find(|m| m.name == volume.name)
                .unwrap_or_else(|| panic!("{} is mounted", volume.name));
            let source = match (&volume.secret, &volume.config_map) {
                (Some(secret), _) => (
                    secret.secret_name.clone().unwrap(),
                    secret.items.clone().map(|i| i.len()),
                ),
                (None, Some(config_map)) => (
                    format!("configmap/{}", config_map.name),
                    config_map.items.clone().map(|i| i.len()),
                ),
                _ => panic!("{}: neither Secret nor ConfigMap", volume.name),
            };
            seen.push((mount.mount_path.clone(), source.0, source.1));
        }
        let env = spec.containers[0].env.clone().unwrap_or_default();
        let krb5 = env.iter().find(|e| e.name == "KRB5_CONFIG");
        assert_eq!(
            krb5.and_then(|e| e.value.as_deref()),
            (name == "kerberos").then_some("/var/run/secrets/redoline/kafka-auth/krb5/krb5.conf"),
            "{name}"
        );
    }
    let expected = [
        (
            "/var/run/secrets/redoline/kafka-tls/0",
            "my-cluster-cluster-ca-cert",
            None,
        ),
        (
            "/var/run/secrets/redoline/kafka-auth/certificate-and-key",
            "capture",
            Some(2),
        ),
        (
            "/var/run/secrets/redoline/kafka-auth/keytab",
            "capture-keytab",
            Some(1),
        ),
        (
            "/var/run/secrets/redoline/kafka-auth/krb5",
            "configmap/krb5",
            Some(1),
        ),
    ];
    let expected: Vec<(String, String, Option<usize>)> = expected
        .iter()
        .map(|(path, name, items)| ((*path).to_owned(), (*name).to_owned(), *items))
        .collect();
    assert_eq!(seen, expected);
    ns.delete().await;
}
