use super::super::{build as build_all, fixtures, render_capture_config};
use super::*;

/// The sample in the Avro encoding with `registry` as its `spec.schemaRegistry`.
fn capture(registry: Value) -> OracleCapture {
    let mut capture = fixtures::sample();
    capture.spec.format.encoding = redoline_crds::v1alpha1::FormatEncoding::Avro;
    capture.spec.schema_registry = Some(serde_json::from_value(registry).unwrap());
    capture
}

/// The registry's volumes: Secret, projected keys (`None`: every key), mount path.
fn registry_volumes(capture: &OracleCapture) -> Vec<(String, Option<Vec<String>>, String)> {
    let sts = build_all(capture, &fixtures::settings())
        .unwrap()
        .stateful_set;
    let pod = sts.spec.unwrap().template.spec.unwrap();
    let mounts = pod.containers[0].volume_mounts.clone().unwrap();
    let doctor = &pod.init_containers.as_ref().unwrap()[0];
    assert_eq!(
        doctor.volume_mounts.as_ref(),
        Some(&mounts),
        "the doctor sees the same files"
    );
    pod.volumes
        .iter()
        .flatten()
        .filter(|v| v.name.starts_with("schema-registry-"))
        .map(|v| {
            let secret = v.secret.clone().unwrap();
            let mount = mounts.iter().find(|m| m.name == v.name).unwrap();
            assert_eq!(mount.read_only, Some(true));
            let keys = secret
                .items
                .map(|items| items.into_iter().map(|i| i.key).collect());
            (secret.secret_name.unwrap(), keys, mount.mount_path.clone())
        })
        .collect()
}

#[test]
fn basic_credentials_and_a_ca_are_mounted_and_named_by_path_in_the_config() {
    let capture = capture(json!({
        "url": "https://registry:8080/apis/ccompat/v7",
        "tls": {"trustedCertificates": [
            {"secretName": "registry-ca", "certificate": "ca.crt"},
            {"secretName": "my-cluster-cluster-ca-cert", "pattern": "*.crt"},
        ]},
        "authentication": {"type": "basic", "username": "redoline",
            "passwordSecret": {"secretName": "registry-user", "password": "password"}},
    }));
    assert_eq!(
        registry_volumes(&capture),
        [
            (
                "registry-ca".to_owned(),
                Some(vec!["ca.crt".to_owned()]),
                "/var/run/secrets/redoline/schema-registry/tls/0".to_owned()
            ),
            (
                "my-cluster-cluster-ca-cert".to_owned(),
                None,
                "/var/run/secrets/redoline/schema-registry/tls/1".to_owned()
            ),
            (
                "registry-user".to_owned(),
                Some(vec!["password".to_owned()]),
                "/var/run/secrets/redoline/schema-registry/password".to_owned()
            ),
        ]
    );
    let rendered: Value =
        serde_norway::from_str(&render_capture_config(&capture).unwrap()).unwrap();
    assert_eq!(
        rendered["schemaRegistry"],
        json!({
            "url": "https://registry:8080/apis/ccompat/v7",
            "subjectNameStrategy": "TopicName",
            "autoRegister": true,
            "tls": {"trustedCertificates": [
                {"certificate": "/var/run/secrets/redoline/schema-registry/tls/0/ca.crt"},
                {"pattern": "/var/run/secrets/redoline/schema-registry/tls/1/*.crt"},
            ]},
            "authentication": {"type": "basic", "username": "redoline",
                "passwordFile": "/var/run/secrets/redoline/schema-registry/password/password"},
        })
    );
    assert_eq!(rendered["format"]["encoding"], "avro");
}

#[test]
fn a_bearer_token_mounts_its_key_only_and_no_registry_mounts_nothing() {
    let capture = capture(json!({
        "url": "http://registry:8081",
        "subjectNameStrategy": "RecordName",
        "autoRegister": false,
        "authentication": {"type": "bearer",
            "tokenSecret": {"secretName": "registry-token", "key": "token"}},
    }));
    assert_eq!(
        registry_volumes(&capture),
        [(
            "registry-token".to_owned(),
            Some(vec!["token".to_owned()]),
            "/var/run/secrets/redoline/schema-registry/token".to_owned()
        )]
    );
    assert_eq!(
        Value::Object(config_fields(&capture)),
        json!({"authentication": {"type": "bearer",
            "tokenFile": "/var/run/secrets/redoline/schema-registry/token/token"}})
    );
    let json = fixtures::sample();
    assert_eq!(build(&json), MountedCredentials::default());
    assert!(config_fields(&json).is_empty());
}

#[test]
fn a_failed_mount_of_a_registry_secret_names_its_spec_field() {
    let capture = capture(json!({
        "url": "https://registry:8443",
        "tls": {"trustedCertificates": [{"secretName": "registry-ca", "certificate": "ca.crt"}]},
        "authentication": {"type": "bearer",
            "tokenSecret": {"secretName": "registry-token", "key": "token"}},
    }));
    let volumes = crate::build::secret_volumes(&capture);
    let problem = crate::status::mount_problem(
        &volumes,
        [
            "MountVolume.SetUp failed for volume \"schema-registry-token\" : couldn't find key \
             token in Secret sales/registry-token",
        ],
    )
    .unwrap();
    assert_eq!(problem.reason(), "SecretKeyMissing");
    assert_eq!(
        problem.message(),
        "Secret \"registry-token\" named by spec.schemaRegistry.authentication.tokenSecret has \
         no key \"token\" (set by spec.schemaRegistry.authentication.tokenSecret.key)"
    );
}
