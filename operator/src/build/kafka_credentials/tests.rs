use super::super::{build as build_all, fixtures};
use super::*;
use k8s_openapi::api::core::v1::{EnvVar, PodSpec};

/// The sample with `kafka` merged into its `spec.kafka`.
fn capture(kafka: Value) -> OracleCapture {
    let mut capture = fixtures::sample();
    let mut spec = serde_json::to_value(&capture.spec.kafka).unwrap();
    if let (Value::Object(spec), Value::Object(extra)) = (&mut spec, kafka) {
        spec.extend(extra);
    }
    capture.spec.kafka = serde_json::from_value(spec).unwrap();
    capture
}

fn pod(capture: &OracleCapture) -> PodSpec {
    let sts = build_all(capture, &fixtures::settings())
        .unwrap()
        .stateful_set;
    sts.spec.unwrap().template.spec.unwrap()
}

/// A Kafka volume: Secret (or `configmap/<name>`), projected items as (key, path) (`None`: every
/// key), and where it is mounted.
type KafkaVolume = (String, Option<Vec<(String, String)>>, String);

fn kafka_volumes(pod: &PodSpec) -> Vec<KafkaVolume> {
    let mounts = pod.containers[0].volume_mounts.clone().unwrap();
    pod.volumes
        .iter()
        .flatten()
        .filter(|v| v.name.starts_with("kafka-tls-") || v.name.starts_with("kafka-auth-"))
        .map(|v| {
            let (name, items) = match (&v.secret, &v.config_map) {
                (Some(s), _) => (s.secret_name.clone().unwrap(), s.items.clone()),
                (None, Some(c)) => (format!("configmap/{}", c.name), c.items.clone()),
                _ => panic!("{} is neither a Secret nor a ConfigMap", v.name),
            };
            let items = items.map(|items| items.into_iter().map(|i| (i.key, i.path)).collect());
            let mount = mounts.iter().find(|m| m.name == v.name).unwrap();
            assert_eq!(mount.read_only, Some(true), "{}", v.name);
            (name, items, mount.mount_path.clone())
        })
        .collect()
}

fn keys(list: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
    Some(
        list.iter()
            .map(|(k, p)| ((*k).to_owned(), (*p).to_owned()))
            .collect(),
    )
}

/// Mutual TLS with a Strimzi KafkaUser Secret and the cluster CA by pattern: only the user's
/// certificate and key are projected, the CA Secret whole, under /var/run/secrets/redoline.
#[test]
fn strimzi_user_and_cluster_ca_are_mounted_as_named() {
    let capture = capture(json!({
        "tls": {"trustedCertificates": [
            {"secretName": "my-cluster-cluster-ca-cert", "pattern": "*.crt"},
            {"secretName": "corporate-ca", "certificate": "root.pem"},
        ]},
        "authentication": {"type": "tls", "certificateAndKey":
            {"secretName": "capture", "certificate": "user.crt", "key": "user.key"}},
    }));
    let pod = pod(&capture);
    assert_eq!(
        kafka_volumes(&pod),
        [
            (
                "my-cluster-cluster-ca-cert".to_owned(),
                None,
                "/var/run/secrets/redoline/kafka-tls/0".to_owned()
            ),
            (
                "corporate-ca".to_owned(),
                keys(&[("root.pem", "root.pem")]),
                "/var/run/secrets/redoline/kafka-tls/1".to_owned()
            ),
            (
                "capture".to_owned(),
                keys(&[("user.crt", "user.crt"), ("user.key", "user.key")]),
                "/var/run/secrets/redoline/kafka-auth/certificate-and-key".to_owned()
            ),
        ]
    );
    // The doctor init container gets the same files.
    let doctor = &pod.init_containers.as_ref().unwrap()[0];
    assert_eq!(doctor.volume_mounts, pod.containers[0].volume_mounts);
    let fields = config_fields(&capture);
    assert_eq!(
        Value::Object(fields),
        json!({
            "tls": {"trustedCertificates": [
                {"pattern": "/var/run/secrets/redoline/kafka-tls/0/*.crt"},
                {"certificate": "/var/run/secrets/redoline/kafka-tls/1/root.pem"},
            ]},
            "authentication": {"type": "tls", "certificateAndKey": {
                "certificate": "/var/run/secrets/redoline/kafka-auth/certificate-and-key/user.crt",
                "key": "/var/run/secrets/redoline/kafka-auth/certificate-and-key/user.key",
            }},
        })
    );
}

#[test]
fn scram_mounts_the_password_key_only() {
    let capture = capture(json!({
        "tls": {},
        "authentication": {"type": "scram-sha-512", "username": "capture",
            "passwordSecret": {"secretName": "capture", "password": "password"}},
    }));
    assert_eq!(
        kafka_volumes(&pod(&capture)),
        [(
            "capture".to_owned(),
            keys(&[("password", "password")]),
            "/var/run/secrets/redoline/kafka-auth/password".to_owned()
        )]
    );
    assert_eq!(
        Value::Object(config_fields(&capture)),
        json!({
            "tls": {},
            "authentication": {"type": "scram-sha-512", "username": "capture",
                "passwordFile": "/var/run/secrets/redoline/kafka-auth/password/password"},
        })
    );
}

#[test]
fn oauth_mounts_the_client_secret_and_the_endpoint_cas() {
    let capture = capture(json!({
        "tls": {},
        "authentication": {"type": "oauth", "clientId": "capture",
            "clientSecret": {"secretName": "idp-client", "key": "secret"},
            "tokenEndpointUri": "https://idp.example/token", "scope": "kafka",
            "saslExtensions": {"logicalCluster": "lkc-1"},
            "tlsTrustedCertificates": [{"secretName": "idp-ca", "certificate": "ca.crt"}]},
    }));
    assert_eq!(
        kafka_volumes(&pod(&capture)),
        [
            (
                "idp-client".to_owned(),
                keys(&[("secret", "secret")]),
                "/var/run/secrets/redoline/kafka-auth/client-secret".to_owned()
            ),
            (
                "idp-ca".to_owned(),
                keys(&[("ca.crt", "ca.crt")]),
                "/var/run/secrets/redoline/kafka-auth/tls-trusted/0".to_owned()
            ),
        ]
    );
    assert_eq!(
        Value::Object(config_fields(&capture))["authentication"],
        json!({"type": "oauth", "clientId": "capture",
            "clientSecretFile": "/var/run/secrets/redoline/kafka-auth/client-secret/secret",
            "tokenEndpointUri": "https://idp.example/token", "scope": "kafka",
            "saslExtensions": {"logicalCluster": "lkc-1"},
            "tlsTrustedCertificates": [
                {"certificate": "/var/run/secrets/redoline/kafka-auth/tls-trusted/0/ca.crt"}]})
    );
}

#[test]
fn gssapi_mounts_the_keytab_and_krb5_conf_and_sets_krb5_config() {
    let env_of = |pod: &PodSpec| -> Vec<EnvVar> {
        let doctor = pod.init_containers.as_ref().unwrap()[0]
            .env
            .clone()
            .unwrap();
        let capture = pod.containers[0].env.clone().unwrap();
        assert_eq!(doctor, capture);
        capture
    };
    for (source, volume) in [
        (json!({"configMapName": "krb5"}), "configmap/krb5"),
        (json!({"secretName": "krb5", "key": "realm.conf"}), "krb5"),
    ] {
        let key = source["key"].as_str().unwrap_or("krb5.conf").to_owned();
        let capture = capture(json!({
            "authentication": {"type": "gssapi", "principal": "capture@EXAMPLE.COM",
                "keytabSecret": {"secretName": "capture-keytab", "key": "capture.keytab"},
                "krb5Config": source},
        }));
        let pod = pod(&capture);
        assert_eq!(
            kafka_volumes(&pod),
            [
                (
                    "capture-keytab".to_owned(),
                    keys(&[("capture.keytab", "capture.keytab")]),
                    "/var/run/secrets/redoline/kafka-auth/keytab".to_owned()
                ),
                (
                    volume.to_owned(),
                    keys(&[(&key, &key)]),
                    "/var/run/secrets/redoline/kafka-auth/krb5".to_owned()
                ),
            ]
        );
        let krb5: Vec<_> = env_of(&pod)
            .into_iter()
            .filter(|e| e.name == "KRB5_CONFIG")
            .collect();
        assert_eq!(krb5.len(), 1);
        assert_eq!(
            krb5[0].value.as_deref(),
            Some(format!("/var/run/secrets/redoline/kafka-auth/krb5/{key}").as_str())
        );
        assert_eq!(
            Value::Object(config_fields(&capture))["authentication"],
            json!({"type": "gssapi", "principal": "capture@EXAMPLE.COM",
                "keytabFile": "/var/run/secrets/redoline/kafka-auth/keytab/capture.keytab"})
        );
    }
}

#[test]
fn without_tls_or_authentication_nothing_is_added() {
    let capture = fixtures::sample();
    assert_eq!(build(&capture), MountedCredentials::default());
    assert!(config_fields(&capture).is_empty());
    assert!(
        !pod(&capture).containers[0]
            .env
            .iter()
            .flatten()
            .any(|e| e.name == "KRB5_CONFIG")
    );
}

/// The rendered config names paths, never a Secret.
#[test]
fn the_rendered_config_names_no_secret() {
    let capture = capture(json!({
        "tls": {"trustedCertificates": [{"secretName": "cluster-ca-cert", "pattern": "*.crt"}]},
        "authentication": {"type": "scram-sha-256", "username": "capture",
            "passwordSecret": {"secretName": "kafka-user-secret", "password": "password"}},
    }));
    let yaml = super::super::render_capture_config(&capture).unwrap();
    assert!(!yaml.contains("secretName"), "{yaml}");
    assert!(
        !yaml.contains("kafka-user-secret") && !yaml.contains("cluster-ca-cert"),
        "{yaml}"
    );
    assert!(
        yaml.contains("passwordFile: /var/run/secrets/redoline/kafka-auth/password/password"),
        "{yaml}"
    );
}

/// The operator reads no Secret: a missing one shows only in the kubelet's `FailedMount` Event,
/// which the status turns into a message naming the spec field, so every Secret volume built here
/// is listed with its field, and with the field of each key it projects.
#[test]
fn a_failed_mount_of_a_kafka_secret_names_its_spec_field() {
    let capture = capture(json!({
        "tls": {"trustedCertificates": [
            {"secretName": "my-cluster-cluster-ca-cert", "certificate": "ca.crt"},
        ]},
        "authentication": {"type": "tls", "certificateAndKey":
            {"secretName": "capture", "certificate": "user.crt", "key": "user.key"}},
    }));
    let volumes = crate::build::secret_volumes(&capture);
    let problem = crate::status::mount_problem(
        &volumes,
        [
            "MountVolume.SetUp failed for volume \"kafka-auth-cert-and-key\" : couldn't find key \
             user.key in Secret sales/capture",
            "MountVolume.SetUp failed for volume \"kafka-tls-0\" : secret \
             \"my-cluster-cluster-ca-cert\" not found",
        ],
    )
    .unwrap();
    assert_eq!(problem.reason(), "SecretNotFound");
    assert_eq!(
        problem.message(),
        "Secret \"my-cluster-cluster-ca-cert\" named by spec.kafka.tls.trustedCertificates[0] \
         does not exist; Secret \"capture\" named by \
         spec.kafka.authentication.certificateAndKey has no key \"user.key\" (set by \
         spec.kafka.authentication.certificateAndKey.key)"
    );
}
