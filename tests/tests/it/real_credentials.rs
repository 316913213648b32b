#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Credentials on the real node, with an operator that reads no Secret (its roles have no Secret
//! rule): the kubelet mounts them, says when it cannot, and refreshes them; the capture follows
//! the mounted files itself.
//!
//! One story, because each step needs the pod the previous one left:
//! 1. the credentials Secret does not exist yet: the pod sits in ContainerCreating, the kubelet
//!    posts `FailedMount`, and the OracleCapture's status says `SecretNotFound`, naming
//!    `spec.database.credentialsSecret`;
//! 2. the Secret is created: the kubelet's next mount attempt starts the pod, which streams, and
//!    the stall clears;
//! 3. a property of `kafka.configSecret` changes (`linger.ms`; the simulator checks no password,
//!    so a value the capture visibly uses is changed): the kubelet swaps the files, the capture
//!    ends cleanly with exit status 4, naming the mount, and the container that the kubelet
//!    starts again uses the new value; then the database password changes, the same way; then
//!    the KafkaUser Secret gets a new client certificate, as Strimzi's User Operator renews one;
//! 4. read back `read_committed`, Kafka has every order the workload committed exactly once
//!    across the three restarts.
//!
//! The capture reaches Kafka with mutual TLS (the broker's PODMTLS listener), configured by
//! `spec.kafka.tls` and `spec.kafka.authentication` from Secrets shaped as Strimzi makes them: a
//! KafkaUser Secret (`ca.crt`, `user.crt`, `user.key`, `user.p12`, `user.password`) and the
//! cluster CA Secret (`ca.crt`, `ca.p12`, `ca.password`), trusted by the pattern `*.crt`.
//!
//! It prints how long each rotation took from the Secret update to the capture's exit and to the
//! new container being Ready (the kubelet's `syncFrequency` is 5 s on the test node: node.sh).

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Pod, Secret};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::SecretRef;
use redoline_operator::build::CAPTURE_CONTAINER;
use redoline_testenv::kafka_auth::KafkaAuthEnv;
use redoline_tests::k8s::KubeEnv;
use redoline_tests::node::{self, NodeStory};
use redoline_tests::operator::{create_secret, has_condition};
use redoline_tests::process::run_script;
use redoline_tests::wait::eventually;
use serde_json::{Value, json};

const NAME: &str = "orders";
const POD: &str = "orders-capture-0";
const RELEASE: &str = "redoline";
const KAFKA_SECRET: &str = "orders-kafka-client";
/// Strimzi's names: the KafkaUser's Secret is named as the user, the cluster CA's
/// `<cluster>-cluster-ca-cert`.
const KAFKA_USER_SECRET: &str = "orders-cdc";
const CLUSTER_CA_SECRET: &str = "my-cluster-cluster-ca-cert";
/// The client certificate's subject, a super user of the test broker (tests/env/kafka.sh).
const CLIENT_CN: &str = "redoline-mtls";
/// Bound of each wait: a cold pod start on a loaded 2-core machine is slow, and the kubelet
/// retries a failed mount with a backoff of up to about two minutes.
const WITHIN: Duration = Duration::from_secs(240);
const POLL: Duration = Duration::from_millis(500);
/// The capture's exit status when its mounted credentials changed (docs/capture.md).
const CREDENTIALS_CHANGED: i32 = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubelet_mounts_reports_and_rotates_credentials_the_operator_never_reads() {
    let NodeStory {
        node,
        kafka,
        kube_env,
        namespace,
        scenarios: _scenarios,
        helm,
        workload,
    } = NodeStory::start("real-credentials", RELEASE, NAME)
        .await
        .unwrap();
    let client = kube_env.client().await.unwrap();
    let ns = namespace.name.clone();
    create_secret(&client, &ns, KAFKA_SECRET, json!({"linger.ms": "5"}))
        .await
        .unwrap();
    let auth = tokio::task::spawn_blocking(KafkaAuthEnv::shared)
        .await
        .unwrap()
        .unwrap();
    let pod_mtls = auth
        .pod_mtls
        .clone()
        .expect("the broker has no PODMTLS listener (tests/env/stack.sh starts one)");
    let ca = std::fs::read_to_string(&auth.ca).unwrap();
    create_secret(
        &client,
        &ns,
        CLUSTER_CA_SECRET,
        json!({"ca.crt": ca, "ca.p12": "not PEM", "ca.password": "changeit"}),
    )
    .await
    .unwrap();
    let first_certificate = client_certificate(auth, "first");
    create_secret(
        &client,
        &ns,
        KAFKA_USER_SECRET,
        json!({
            "ca.crt": ca,
            "user.crt": first_certificate.certificate,
            "user.key": first_certificate.key,
            "user.p12": "not PEM",
            "user.password": "changeit",
        }),
    )
    .await
    .unwrap();
    node.local_volume(&client, &ns, &format!("{ns}-spill"), "1Gi")
        .await
        .unwrap();
    let prefix = kafka.unique_prefix("real-credentials");
    let mut capture = node.capture(&ns, &prefix).unwrap();
    capture.spec.kafka.bootstrap_servers = pod_mtls;
    capture.spec.kafka.tls = serde_json::from_value(json!({
        "trustedCertificates": [{"secretName": CLUSTER_CA_SECRET, "pattern": "*.crt"}],
    }))
    .unwrap();
    capture.spec.kafka.authentication = serde_json::from_value(json!({
        "type": "tls",
        "certificateAndKey":
            {"secretName": KAFKA_USER_SECRET, "certificate": "user.crt", "key": "user.key"},
    }))
    .unwrap();
    capture.spec.kafka.config_secret = Some(SecretRef {
        name: KAFKA_SECRET.into(),
    });
    capture.spec.sla = None;
    let captures: Api<OracleCapture> = Api::namespaced(client.clone(), &ns);
    captures
        .create(&PostParams::default(), &capture)
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);

    // 1. No credentials Secret: the kubelet cannot mount it, and the status says which field.
    let stalled = eventually("SecretNotFound in the status", WITHIN, POLL, || async {
        let capture = captures.get(NAME).await.ok()?;
        has_condition(&capture, "Stalled", "True", "SecretNotFound").then_some(capture)
    })
    .await
    .unwrap();
    let message = &stalled
        .status
        .as_ref()
        .unwrap()
        .condition("Stalled")
        .unwrap()
        .message;
    assert_eq!(
        message,
        "Secret \"orders-db-cdc\" named by spec.database.credentialsSecret does not exist"
    );
    let pending = pods.get(POD).await.unwrap();
    assert_eq!(
        pending.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Pending")
    );

    // 2. Created: the pod starts on the kubelet's next attempt, and the stall clears.
    create_secret(
        &client,
        &ns,
        "orders-db-cdc",
        json!({"username": "C##CDC", "password": "first"}),
    )
    .await
    .unwrap();
    let first = node::ready_pod(&pods, POD, None, WITHIN).await.unwrap();
    assert_eq!(
        first.metadata.uid, pending.metadata.uid,
        "the same pod, once mounted"
    );
    eventually("the stall to clear", WITHIN, POLL, || async {
        let capture = captures.get(NAME).await.ok()?;
        has_condition(&capture, "Stalled", "False", "NoStop").then_some(())
    })
    .await
    .unwrap();
    let topic = format!("{prefix}.SALES.ORDERS");
    node::some_order(kafka, &topic, WITHIN).await.unwrap();
    assert_eq!(sink_property(kube_env, &ns, "linger.ms"), "5");
    assert_eq!(sink_property(kube_env, &ns, "security.protocol"), "ssl");

    // 3. Rotations: the files change under the running capture, which restarts with them.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &ns);
    let kafka_rotation = rotate(
        &pods,
        kube_env,
        &ns,
        (&secrets, KAFKA_SECRET, json!({"linger.ms": "20"})),
        "kafka",
    )
    .await;
    assert_eq!(sink_property(kube_env, &ns, "linger.ms"), "20");
    let database_rotation = rotate(
        &pods,
        kube_env,
        &ns,
        (&secrets, "orders-db-cdc", json!({"password": "second"})),
        "database",
    )
    .await;
    let renewed = client_certificate(auth, "renewed");
    let certificate_rotation = rotate(
        &pods,
        kube_env,
        &ns,
        (
            &secrets,
            KAFKA_USER_SECRET,
            json!({
                "user.crt": renewed.certificate,
                "user.key": renewed.key,
            }),
        ),
        "kafka-auth",
    )
    .await;
    for (what, rotation) in [
        ("kafka.configSecret", kafka_rotation),
        ("credentialsSecret", database_rotation),
        ("the KafkaUser's certificate", certificate_rotation),
    ] {
        println!(
            "rotation of {what}: Secret updated -> capture exited {:.1} s -> new container Ready \
             {:.1} s",
            rotation.exited.as_secs_f64(),
            rotation.ready.as_secs_f64()
        );
    }

    // 4. Every committed order once, across both restarts.
    let orders = workload.stop().unwrap();
    node::every_order_once(kafka, &topic, orders, WITHIN)
        .await
        .unwrap_or_else(|e| panic!("{e:#}"));

    helm.uninstall(RELEASE, &ns, kube_env.kubeconfig_path())
        .unwrap();
    namespace.delete().await;
}

/// A client certificate and its key, PEM.
struct ClientCertificate {
    certificate: String,
    key: String,
}

/// A new client certificate for [`CLIENT_CN`], signed by the test broker's CA, as a renewal
/// would issue one (a new key each time).
fn client_certificate(auth: &KafkaAuthEnv, name: &str) -> ClientCertificate {
    let dir = tempfile::tempdir().unwrap();
    let path = |file: &str| dir.path().join(format!("{name}.{file}"));
    let openssl = std::path::Path::new("openssl");
    let within = Duration::from_secs(60);
    let subject = format!("/CN={CLIENT_CN}");
    run_script(
        openssl,
        &[
            "req",
            "-new",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            &subject,
            "-keyout",
            path("key").to_str().unwrap(),
            "-out",
            path("csr").to_str().unwrap(),
        ],
        &[],
        within,
    )
    .unwrap();
    std::fs::write(path("ext"), "extendedKeyUsage=clientAuth\n").unwrap();
    run_script(
        openssl,
        &[
            "x509",
            "-req",
            "-days",
            "1",
            "-sha256",
            "-in",
            path("csr").to_str().unwrap(),
            "-CA",
            auth.ca.to_str().unwrap(),
            "-CAkey",
            auth.ca_key.to_str().unwrap(),
            "-extfile",
            path("ext").to_str().unwrap(),
            "-out",
            path("crt").to_str().unwrap(),
        ],
        &[],
        within,
    )
    .unwrap();
    ClientCertificate {
        certificate: std::fs::read_to_string(path("crt")).unwrap(),
        key: std::fs::read_to_string(path("key")).unwrap(),
    }
}

/// How long one rotation took, from the Secret update.
struct Rotation {
    exited: Duration,
    ready: Duration,
}

/// Merges `string_data` into a Secret under the running capture and waits for the capture container to
/// end with [`CREDENTIALS_CHANGED`], having logged that `mount` changed, and for the container the
/// kubelet starts again to be Ready (same pod: no rollout).
async fn rotate(
    pods: &Api<Pod>,
    kube_env: &KubeEnv,
    ns: &str,
    (secrets, secret, string_data): (&Api<Secret>, &str, Value),
    mount: &str,
) -> Rotation {
    let before = pods.get(POD).await.unwrap();
    let restarts = restart_count(&before);
    let started = Instant::now();
    let updated_at = Timestamp::now();
    secrets
        .patch(
            secret,
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": string_data})),
        )
        .await
        .unwrap();
    let after = eventually("the capture container to restart", WITHIN, POLL, || async {
        let pod = pods.get(POD).await.ok()?;
        (restart_count(&pod) > restarts && node::is_ready(&pod)).then_some(pod)
    })
    .await
    .unwrap();
    let ready = started.elapsed();
    // When the old container ended, as the kubelet recorded it (whole seconds).
    let finished_at = node::container_status(&after, CAPTURE_CONTAINER)
        .and_then(|s| {
            s.last_state
                .as_ref()?
                .terminated
                .as_ref()?
                .finished_at
                .clone()
        })
        .unwrap()
        .0;
    let exited = Duration::try_from(finished_at.duration_since(updated_at)).unwrap_or_default();
    assert_eq!(after.metadata.uid, before.metadata.uid, "no new pod");
    let ended = node::last_termination(&after, CAPTURE_CONTAINER).unwrap();
    assert_eq!(
        ended.exit_code, CREDENTIALS_CHANGED,
        "the capture did not end for the credential change: {ended:?}"
    );
    let previous = kube_env
        .kubectl_stdout(&["logs", "-n", ns, POD, "-c", CAPTURE_CONTAINER, "--previous"])
        .unwrap();
    let lines: Vec<Value> = previous
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let changed = lines
        .iter()
        .find(|line| {
            line["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("mounted credentials changed"))
        })
        .unwrap_or_else(|| panic!("no credential change logged in {previous}"));
    assert_eq!(changed["mounts"], mount, "{changed}");
    assert!(
        lines
            .iter()
            .any(|line| line["message"] == "capture stopped"),
        "the run did not end as on SIGTERM: {previous}"
    );
    Rotation { exited, ready }
}

fn restart_count(pod: &Pod) -> i32 {
    node::container_status(pod, CAPTURE_CONTAINER).map_or(0, |s| s.restart_count)
}

/// A librdkafka property as the running capture's Kafka sink took it (its "Kafka sink ready."
/// log line, where non-sensitive properties are shown).
fn sink_property(kube_env: &KubeEnv, ns: &str, name: &str) -> String {
    let logs = kube_env
        .kubectl_stdout(&["logs", "-n", ns, POD, "-c", CAPTURE_CONTAINER])
        .unwrap();
    let ready = logs
        .lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["message"] == "Kafka sink ready.")
        .unwrap_or_else(|| panic!("no \"Kafka sink ready.\" line in {logs}"));
    let settings = ready["settings"].as_str().unwrap_or_default().to_owned();
    let key = format!("\"{name}\": \"");
    let at = settings
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {settings}"));
    settings[at + key.len()..]
        .split('"')
        .next()
        .unwrap_or_default()
        .to_owned()
}
