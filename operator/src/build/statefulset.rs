//! The capture StatefulSet: one pod (none when suspended) with a spill volume of its own.
//!
//! - A StatefulSet rather than a Deployment for the `volumeClaimTemplates` spill volume and for
//!   at-most-one pod identity; `Parallel` pod management because there is only ever one pod and
//!   ordered start-up only slows a replacement down. Two instances never run at once for long:
//!   Kafka fences the older producer (CDC-5001) if they ever overlap.
//! - The spill claims are deleted with the resource (spill files are not durable state) and kept
//!   while suspended.
//! - `redoline-capture doctor` runs as an init container, so a failing prerequisite shows up as
//!   its termination message (CDC-1002) before the capture starts.
//! - Credentials are Secret volumes mounted read-only; environment variables name the files
//!   (Kafka TLS and authentication: the rendered config names them, see `kafka_credentials`).
//! - The Oracle wallet's directory is the Oracle client's configuration directory (`TNS_ADMIN`)
//!   in both containers, so doctor and the capture connect the same way ([`oracle_client_env`]).
//! - Restricted security: non-root, read-only root filesystem (a small emptyDir for /tmp), no
//!   capabilities, no privilege escalation, seccomp RuntimeDefault, no API token.
//! - The termination grace period leaves time to abort the open Kafka transaction cleanly.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetSpec,
};
use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMapVolumeSource, Container, ContainerPort, EnvVar, HTTPGetAction,
    KeyToPath, PersistentVolumeClaim, PersistentVolumeClaimSpec, PodSecurityContext, PodSpec,
    PodTemplateSpec, Probe, SeccompProfile, SecretVolumeSource, SecurityContext, Volume,
    VolumeMount, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::ImagePullPolicy;

use super::config_map::CONFIG_HASH_ANNOTATION;
use super::{
    BuildError, CONFIG_FILE, Identity, OperatorSettings, kafka_credentials, registry_credentials,
    simulator,
};
use k8s_openapi::api::core::v1::ConfigMap;

/// The capture's HTTP port: `/metrics`, `/healthz`, `/readyz`, `/status`.
pub const HTTP_PORT: i32 = 8080;
pub const CAPTURE_CONTAINER: &str = "capture";
pub const DOCTOR_CONTAINER: &str = "doctor";
pub const SPILL_VOLUME: &str = "spill";
/// Where the spill volume is mounted; the rendered config points `buffer.spill.dir` here.
pub const SPILL_DIR: &str = "/var/lib/redoline/spill";

const CONFIG_DIR: &str = "/etc/redoline";
const DATABASE_CREDENTIALS_DIR: &str = "/var/run/secrets/redoline/database";
const WALLET_DIR: &str = "/var/run/secrets/redoline/wallet";
const KAFKA_CONFIG_DIR: &str = "/var/run/secrets/redoline/kafka";
/// A non-root user with no home in the image; the same id owns the spill volume via fsGroup.
const CAPTURE_UID: i64 = 65532;
/// Enough to abort an open Kafka transaction and flush the termination message.
const TERMINATION_GRACE_SECONDS: i64 = 60;

/// The files a capture pod reads its secrets from, as (environment variable, path) pairs: the
/// database user and password always, the wallet and Kafka client settings when referenced.
pub fn mounted_secret_files(capture: &OracleCapture) -> Vec<(&'static str, String)> {
    let mut files = vec![
        (
            "REDOLINE_DATABASE_USERNAME_FILE",
            format!("{DATABASE_CREDENTIALS_DIR}/username"),
        ),
        (
            "REDOLINE_DATABASE_PASSWORD_FILE",
            format!("{DATABASE_CREDENTIALS_DIR}/password"),
        ),
    ];
    if capture.spec.database.wallet_secret.is_some() {
        files.push(("REDOLINE_DATABASE_WALLET_DIR", WALLET_DIR.into()));
    }
    if capture.spec.kafka.config_secret.is_some() {
        files.push(("REDOLINE_KAFKA_CONFIG_DIR", KAFKA_CONFIG_DIR.into()));
    }
    files
}

/// A Secret volume of the capture pod, with the spec field naming the Secret and, when the volume
/// lists its keys (`items`, so that a missing key fails the mount), the field naming each key.
/// The operator reads no Secret: the kubelet's `FailedMount` Events about these volumes are how it
/// learns that a Secret or key is missing ([`crate::status::mount_problem`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretVolume {
    pub volume: String,
    pub secret: String,
    pub field: String,
    /// (key, the spec field naming it); empty when the whole Secret is mounted.
    pub keys: Vec<(String, String)>,
}

impl SecretVolume {
    pub fn new(volume: impl Into<String>, secret: &str, field: impl Into<String>) -> Self {
        Self {
            volume: volume.into(),
            secret: secret.to_owned(),
            field: field.into(),
            keys: Vec::new(),
        }
    }

    /// Names a key the volume projects, with the spec field that names it.
    pub fn key(mut self, key: &str, field: impl Into<String>) -> Self {
        self.keys.push((key.to_owned(), field.into()));
        self
    }
}

/// The capture pod's Secret volumes as [`volumes`] builds them.
pub fn secret_volumes(capture: &OracleCapture) -> Vec<SecretVolume> {
    let credentials = &capture.spec.database.credentials_secret;
    let mut found = vec![
        SecretVolume::new(
            "database-credentials",
            &credentials.name,
            "spec.database.credentialsSecret",
        )
        .key(
            &credentials.username_key,
            "spec.database.credentialsSecret.usernameKey",
        )
        .key(
            &credentials.password_key,
            "spec.database.credentialsSecret.passwordKey",
        ),
    ];
    if let Some(wallet) = &capture.spec.database.wallet_secret {
        found.push(SecretVolume::new(
            "wallet",
            &wallet.name,
            "spec.database.walletSecret",
        ));
    }
    if let Some(kafka) = &capture.spec.kafka.config_secret {
        found.push(SecretVolume::new(
            "kafka-config",
            &kafka.name,
            "spec.kafka.configSecret",
        ));
    }
    found.extend(kafka_credentials::build(capture).secret_volumes);
    found.extend(registry_credentials::build(capture).secret_volumes);
    found
}

/// The Oracle client's environment: `TNS_ADMIN` naming the mounted wallet when there is one, so
/// the client reads `sqlnet.ora`, `tnsnames.ora` and the wallet from the Secret.
///
/// Why the environment and not ODPI-C's `dpiContextCreateParams.oracleClientConfigDir` (the
/// `oracle` crate's `InitParams::oracle_client_config_dir`): ODPI-C implements that parameter by
/// calling `setenv("TNS_ADMIN")` when it creates its context, that is at the capture's first
/// connection, when the HTTP runtime and librdkafka's threads already run and may read the
/// environment; `setenv` beside a concurrent `getenv` is undefined behaviour in glibc. Set on the
/// container, the variable is in place before the process starts, the same for the doctor init
/// container and the capture, and visible in `kubectl describe pod`. The capture checks that it
/// names the wallet directory and that the wallet there is the one the client will use.
fn oracle_client_env(capture: &OracleCapture) -> Vec<(&'static str, String)> {
    match capture.spec.database.wallet_secret {
        Some(_) => vec![("TNS_ADMIN", WALLET_DIR.into())],
        None => Vec::new(),
    }
}

pub(super) fn build(
    capture: &OracleCapture,
    identity: &Identity,
    settings: &OperatorSettings,
    config_map: &ConfigMap,
) -> Result<StatefulSet, BuildError> {
    let spec = &capture.spec;
    let spill_size = spec
        .buffer
        .spill
        .size
        .bytes()
        .map_err(|e| BuildError::SpillSize(e.to_string()))?;

    let mut pod_labels = spec.pod.labels.clone();
    pod_labels.extend(identity.labels());
    let mut pod_annotations = spec.pod.annotations.clone();
    if let Some(hash) = config_map
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(CONFIG_HASH_ANNOTATION))
    {
        pod_annotations.insert(CONFIG_HASH_ANNOTATION.into(), hash.clone());
    }

    let image = spec
        .image
        .clone()
        .unwrap_or_else(|| settings.default_image.clone());
    let config_path = format!("{CONFIG_DIR}/{CONFIG_FILE}");
    let kafka_credentials = kafka_credentials::build(capture);
    let registry_credentials = registry_credentials::build(capture);
    let env: Vec<EnvVar> = mounted_secret_files(capture)
        .into_iter()
        .chain(oracle_client_env(capture))
        .chain(kafka_credentials.env)
        .map(|(name, value)| env(name, &value))
        .chain([env("REDOLINE_LOG_FORMAT", "json")])
        .collect();
    let mut mounts = volume_mounts(capture);
    mounts.extend(kafka_credentials.mounts);
    mounts.extend(registry_credentials.mounts);
    let mut volumes = volumes(capture, identity);
    volumes.extend(kafka_credentials.volumes);
    volumes.extend(registry_credentials.volumes);
    if let Some(host_dir) = &settings.simulator_scenarios {
        mounts.push(simulator::volume_mount());
        volumes.push(simulator::volume(host_dir));
    }

    let doctor = Container {
        name: DOCTOR_CONTAINER.into(),
        image: Some(image.clone()),
        image_pull_policy: spec.pod.image_pull_policy.map(pull_policy),
        args: Some(vec![
            "doctor".into(),
            "--config".into(),
            config_path.clone(),
        ]),
        env: Some(env.clone()),
        volume_mounts: Some(mounts.clone()),
        resources: spec.pod.resources.clone(),
        security_context: Some(container_security()),
        ..Container::default()
    };
    let capture_container = Container {
        name: CAPTURE_CONTAINER.into(),
        image: Some(image),
        image_pull_policy: spec.pod.image_pull_policy.map(pull_policy),
        args: Some(vec!["run".into(), "--config".into(), config_path]),
        env: Some(env),
        ports: Some(vec![ContainerPort {
            name: Some("http".into()),
            container_port: HTTP_PORT,
            protocol: Some("TCP".into()),
            ..ContainerPort::default()
        }]),
        volume_mounts: Some(mounts),
        resources: spec.pod.resources.clone(),
        liveness_probe: Some(http_probe("/healthz", 10, 6)),
        readiness_probe: Some(http_probe("/readyz", 5, 3)),
        // Re-mining open transactions after a restart can take a while before /healthz answers.
        startup_probe: Some(http_probe("/healthz", 5, 60)),
        termination_message_path: Some("/dev/termination-log".into()),
        termination_message_policy: Some("File".into()),
        security_context: Some(container_security()),
        ..Container::default()
    };

    let pod = PodSpec {
        service_account_name: Some(
            spec.pod
                .service_account_name
                .clone()
                .unwrap_or_else(|| identity.workload_name()),
        ),
        automount_service_account_token: Some(false),
        init_containers: Some(vec![doctor]),
        containers: vec![capture_container],
        volumes: Some(volumes),
        termination_grace_period_seconds: Some(TERMINATION_GRACE_SECONDS),
        security_context: Some(PodSecurityContext {
            run_as_non_root: Some(true),
            run_as_user: Some(CAPTURE_UID),
            run_as_group: Some(CAPTURE_UID),
            fs_group: Some(CAPTURE_UID),
            seccomp_profile: Some(SeccompProfile {
                type_: "RuntimeDefault".into(),
                localhost_profile: None,
            }),
            ..PodSecurityContext::default()
        }),
        node_selector: non_empty(spec.pod.node_selector.clone()),
        tolerations: (!spec.pod.tolerations.is_empty()).then(|| spec.pod.tolerations.clone()),
        affinity: spec.pod.affinity.clone(),
        image_pull_secrets: (!spec.pod.image_pull_secrets.is_empty())
            .then(|| spec.pod.image_pull_secrets.clone()),
        ..PodSpec::default()
    };

    let spill_claim = PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(SPILL_VOLUME.into()),
            labels: Some(identity.labels()),
            ..ObjectMeta::default()
        },
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec!["ReadWriteOnce".into()]),
            storage_class_name: spec.buffer.spill.storage_class_name.clone(),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "storage".into(),
                    Quantity(spill_size.to_string()),
                )])),
                limits: None,
            }),
            ..PersistentVolumeClaimSpec::default()
        }),
        status: None,
    };

    Ok(StatefulSet {
        metadata: identity.metadata(identity.workload_name()),
        spec: Some(StatefulSetSpec {
            replicas: Some(if spec.suspend { 0 } else { 1 }),
            service_name: Some(identity.workload_name()),
            pod_management_policy: Some("Parallel".into()),
            selector: LabelSelector {
                match_labels: Some(identity.selector_labels()),
                match_expressions: None,
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(pod_labels),
                    annotations: non_empty(pod_annotations),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod),
            },
            volume_claim_templates: Some(vec![spill_claim]),
            persistent_volume_claim_retention_policy: Some(
                StatefulSetPersistentVolumeClaimRetentionPolicy {
                    when_deleted: Some("Delete".into()),
                    when_scaled: Some("Retain".into()),
                },
            ),
            ..StatefulSetSpec::default()
        }),
        status: None,
    })
}

fn env(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: Some(value.into()),
        value_from: None,
    }
}

fn pull_policy(policy: ImagePullPolicy) -> String {
    match policy {
        ImagePullPolicy::Always => "Always",
        ImagePullPolicy::IfNotPresent => "IfNotPresent",
        ImagePullPolicy::Never => "Never",
    }
    .into()
}

fn http_probe(path: &str, period_seconds: i32, failure_threshold: i32) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.into()),
            port: IntOrString::String("http".into()),
            ..HTTPGetAction::default()
        }),
        period_seconds: Some(period_seconds),
        failure_threshold: Some(failure_threshold),
        timeout_seconds: Some(2),
        ..Probe::default()
    }
}

fn container_security() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        read_only_root_filesystem: Some(true),
        run_as_non_root: Some(true),
        privileged: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".into()]),
            add: None,
        }),
        ..SecurityContext::default()
    }
}

fn volume_mounts(capture: &OracleCapture) -> Vec<VolumeMount> {
    let mount = |name: &str, path: &str, read_only: bool| VolumeMount {
        name: name.into(),
        mount_path: path.into(),
        read_only: Some(read_only),
        ..VolumeMount::default()
    };
    let mut mounts = vec![
        // A directory, never `subPath`: the kubelet then updates the file in place when the
        // ConfigMap changes, which the capture follows for `snapshot.requests` (a `subPath`
        // mount is never updated).
        mount("config", CONFIG_DIR, true),
        mount("database-credentials", DATABASE_CREDENTIALS_DIR, true),
        mount(SPILL_VOLUME, SPILL_DIR, false),
        mount("tmp", "/tmp", false),
    ];
    if capture.spec.database.wallet_secret.is_some() {
        mounts.push(mount("wallet", WALLET_DIR, true));
    }
    if capture.spec.kafka.config_secret.is_some() {
        mounts.push(mount("kafka-config", KAFKA_CONFIG_DIR, true));
    }
    mounts
}

fn volumes(capture: &OracleCapture, identity: &Identity) -> Vec<Volume> {
    let credentials = &capture.spec.database.credentials_secret;
    let key = |key: &str, path: &str| KeyToPath {
        key: key.into(),
        path: path.into(),
        mode: None,
    };
    let mut volumes = vec![
        Volume {
            name: "config".into(),
            config_map: Some(ConfigMapVolumeSource {
                name: identity.config_map_name(),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        },
        secret_volume(
            "database-credentials",
            &credentials.name,
            Some(vec![
                key(&credentials.username_key, "username"),
                key(&credentials.password_key, "password"),
            ]),
        ),
        Volume {
            name: "tmp".into(),
            empty_dir: Some(Default::default()),
            ..Volume::default()
        },
    ];
    if let Some(wallet) = &capture.spec.database.wallet_secret {
        volumes.push(secret_volume("wallet", &wallet.name, None));
    }
    if let Some(kafka) = &capture.spec.kafka.config_secret {
        volumes.push(secret_volume("kafka-config", &kafka.name, None));
    }
    volumes
}

/// A volume of Secret `secret` (only `items` projected; every key when `None`), which a missing
/// Secret fails to mount. Owner and group read only: the capture runs as CAPTURE_UID with that
/// fsGroup.
pub(super) fn secret_volume(volume: &str, secret: &str, items: Option<Vec<KeyToPath>>) -> Volume {
    Volume {
        name: volume.into(),
        secret: Some(SecretVolumeSource {
            secret_name: Some(secret.into()),
            items,
            default_mode: Some(0o440),
            optional: Some(false),
        }),
        ..Volume::default()
    }
}

fn non_empty(map: BTreeMap<String, String>) -> Option<BTreeMap<String, String>> {
    (!map.is_empty()).then_some(map)
}

#[cfg(test)]
mod tests {
    use super::super::{build as build_all, fixtures};
    use super::*;

    fn sts(capture: &OracleCapture) -> StatefulSet {
        build_all(capture, &fixtures::settings())
            .unwrap()
            .stateful_set
    }

    fn pod(sts: &StatefulSet) -> PodSpec {
        sts.spec.as_ref().unwrap().template.spec.clone().unwrap()
    }

    #[test]
    fn one_replica_zero_when_suspended() {
        let mut capture = fixtures::sample();
        assert_eq!(sts(&capture).spec.unwrap().replicas, Some(1));
        capture.spec.suspend = true;
        assert_eq!(sts(&capture).spec.unwrap().replicas, Some(0));
    }

    #[test]
    fn spill_volume_has_the_spec_size_and_class_and_goes_with_the_resource() {
        let spec = sts(&fixtures::sample()).spec.unwrap();
        let claim = &spec.volume_claim_templates.unwrap()[0];
        let claim_spec = claim.spec.as_ref().unwrap();
        assert_eq!(claim.metadata.name.as_deref(), Some(SPILL_VOLUME));
        assert_eq!(claim_spec.storage_class_name.as_deref(), Some("standard"));
        let storage = &claim_spec
            .resources
            .as_ref()
            .unwrap()
            .requests
            .as_ref()
            .unwrap()["storage"];
        assert_eq!(storage.0, (24u64 << 30).to_string());
        let retention = spec.persistent_volume_claim_retention_policy.unwrap();
        assert_eq!(retention.when_deleted.as_deref(), Some("Delete"));
        assert_eq!(spec.pod_management_policy.as_deref(), Some("Parallel"));
    }

    #[test]
    fn doctor_runs_first_then_the_capture_with_probes() {
        let pod = pod(&sts(&fixtures::sample()));
        let doctor = &pod.init_containers.as_ref().unwrap()[0];
        assert_eq!(
            doctor.args.as_deref().unwrap(),
            ["doctor", "--config", "/etc/redoline/capture.yaml"]
        );
        let capture = &pod.containers[0];
        assert_eq!(
            capture.args.as_deref().unwrap(),
            ["run", "--config", "/etc/redoline/capture.yaml"]
        );
        let path = |p: &Option<Probe>| p.as_ref().unwrap().http_get.as_ref().unwrap().path.clone();
        assert_eq!(path(&capture.liveness_probe).as_deref(), Some("/healthz"));
        assert_eq!(path(&capture.readiness_probe).as_deref(), Some("/readyz"));
        assert_eq!(
            capture.image.as_deref(),
            Some("ghcr.io/redoline/redoline-capture:0.1.0")
        );
        assert_eq!(pod.termination_grace_period_seconds, Some(60));
    }

    #[test]
    fn spec_image_overrides_the_default() {
        let mut capture = fixtures::sample();
        capture.spec.image = Some("registry.example/redoline-capture:custom".into());
        let pod = pod(&sts(&capture));
        assert_eq!(pod.containers[0].image, capture.spec.image);
        assert_eq!(pod.init_containers.unwrap()[0].image, capture.spec.image);
    }

    #[test]
    fn pod_is_restricted() {
        let pod = pod(&sts(&fixtures::sample()));
        let ctx = pod.security_context.as_ref().unwrap();
        assert_eq!(ctx.run_as_non_root, Some(true));
        assert_eq!(
            ctx.seccomp_profile.as_ref().unwrap().type_,
            "RuntimeDefault"
        );
        assert_eq!(pod.automount_service_account_token, Some(false));
        for c in pod
            .containers
            .iter()
            .chain(pod.init_containers.as_ref().unwrap())
        {
            let sc = c.security_context.as_ref().unwrap();
            assert_eq!(sc.read_only_root_filesystem, Some(true), "{}", c.name);
            assert_eq!(sc.allow_privilege_escalation, Some(false), "{}", c.name);
            assert_eq!(
                sc.capabilities.as_ref().unwrap().drop.as_deref(),
                Some(&["ALL".to_string()][..])
            );
        }
    }

    #[test]
    fn credentials_are_mounted_files_never_values() {
        let capture = fixtures::sample();
        let pod = pod(&sts(&capture));
        let env = pod.containers[0].env.clone().unwrap();
        assert!(env.iter().all(|e| e.value_from.is_none()));
        let password = env
            .iter()
            .find(|e| e.name == "REDOLINE_DATABASE_PASSWORD_FILE")
            .unwrap();
        assert_eq!(
            password.value.as_deref(),
            Some("/var/run/secrets/redoline/database/password")
        );
        assert!(env.iter().any(|e| e.name == "REDOLINE_KAFKA_CONFIG_DIR"));
        assert!(!env.iter().any(|e| e.name == "REDOLINE_DATABASE_WALLET_DIR"));
        let creds = pod
            .volumes
            .unwrap()
            .into_iter()
            .find(|v| v.name == "database-credentials")
            .unwrap();
        let secret = creds.secret.unwrap();
        assert_eq!(secret.secret_name.as_deref(), Some("orders-db-cdc"));
        let items = secret.items.unwrap();
        assert_eq!(
            (items[1].key.as_str(), items[1].path.as_str()),
            ("password", "password")
        );
    }

    /// The environment variables and mounts of each container, by container name.
    fn containers(pod: &PodSpec) -> Vec<(String, Vec<EnvVar>, Vec<VolumeMount>)> {
        pod.init_containers
            .iter()
            .flatten()
            .chain(&pod.containers)
            .map(|c| {
                (
                    c.name.clone(),
                    c.env.clone().unwrap_or_default(),
                    c.volume_mounts.clone().unwrap_or_default(),
                )
            })
            .collect()
    }

    /// The sample with a database wallet and every kind of Kafka credential volume.
    fn with_every_secret_volume() -> OracleCapture {
        let mut capture = fixtures::sample();
        capture.spec.database.wallet_secret = Some(redoline_crds::v1alpha1::SecretRef {
            name: "orders-db-wallet".into(),
        });
        capture.spec.kafka.tls = serde_json::from_value(serde_json::json!({
            "trustedCertificates": [{"secretName": "cluster-ca", "pattern": "*.crt"}],
        }))
        .unwrap();
        capture.spec.kafka.authentication = serde_json::from_value(serde_json::json!({
            "type": "tls",
            "certificateAndKey": {"secretName": "capture", "certificate": "user.crt", "key": "user.key"},
        }))
        .unwrap();
        capture
    }

    #[test]
    fn a_wallet_is_the_oracle_client_configuration_of_doctor_and_capture() {
        let capture = with_every_secret_volume();
        let pod = pod(&sts(&capture));
        let containers = containers(&pod);
        assert_eq!(
            containers.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
            [DOCTOR_CONTAINER, CAPTURE_CONTAINER]
        );
        for (name, env, mounts) in &containers {
            let value = |var: &str| {
                let found: Vec<_> = env.iter().filter(|e| e.name == var).collect();
                assert_eq!(found.len(), 1, "{name}: {var} once");
                found[0].value.clone()
            };
            assert_eq!(value("TNS_ADMIN").as_deref(), Some(WALLET_DIR), "{name}");
            assert_eq!(
                value("REDOLINE_DATABASE_WALLET_DIR").as_deref(),
                Some(WALLET_DIR),
                "{name}"
            );
            let wallet = mounts.iter().find(|m| m.mount_path == WALLET_DIR);
            let wallet = wallet.unwrap_or_else(|| panic!("{name}: the wallet is mounted"));
            assert_eq!(wallet.name, "wallet");
            assert_eq!(wallet.read_only, Some(true));
        }
        let volume = pod
            .volumes
            .unwrap()
            .into_iter()
            .find(|v| v.name == "wallet")
            .unwrap();
        let secret = volume.secret.unwrap();
        assert_eq!(secret.secret_name.as_deref(), Some("orders-db-wallet"));
        // Every key of the Secret: cwallet.sso, sqlnet.ora, tnsnames.ora, whatever the wallet has.
        assert_eq!(secret.items, None);
    }

    #[test]
    fn without_a_wallet_the_oracle_client_keeps_its_defaults() {
        let capture = fixtures::sample();
        assert!(capture.spec.database.wallet_secret.is_none());
        let pod = pod(&sts(&capture));
        for (name, env, mounts) in containers(&pod) {
            assert!(
                !env.iter()
                    .any(|e| e.name == "TNS_ADMIN" || e.name == "REDOLINE_DATABASE_WALLET_DIR"),
                "{name}"
            );
            assert!(!mounts.iter().any(|m| m.mount_path == WALLET_DIR), "{name}");
        }
        assert!(!pod.volumes.unwrap().iter().any(|v| v.name == "wallet"));
    }

    #[test]
    fn scheduling_settings_and_extra_metadata_pass_through() {
        let capture = fixtures::sample();
        let sts = sts(&capture);
        let template = &sts.spec.as_ref().unwrap().template;
        let pod = template.spec.as_ref().unwrap();
        assert_eq!(
            pod.node_selector.as_ref().unwrap()["kubernetes.io/os"],
            "linux"
        );
        assert_eq!(pod.containers[0].resources, capture.spec.pod.resources);
        let annotations = template
            .metadata
            .as_ref()
            .unwrap()
            .annotations
            .as_ref()
            .unwrap();
        assert_eq!(annotations[CONFIG_HASH_ANNOTATION].len(), 64);
    }

    #[test]
    fn every_secret_volume_is_known_with_its_spec_field() {
        let capture = with_every_secret_volume();
        let pod = pod(&sts(&capture));
        let built: Vec<(String, String, Vec<String>)> = pod
            .volumes
            .unwrap()
            .into_iter()
            .filter_map(|v| {
                let secret = v.secret?;
                let keys = secret.items.unwrap_or_default();
                Some((
                    v.name,
                    secret.secret_name.unwrap_or_default(),
                    keys.into_iter().map(|k| k.key).collect(),
                ))
            })
            .collect();
        let known: Vec<(String, String, Vec<String>)> = secret_volumes(&capture)
            .into_iter()
            .map(|v| {
                (
                    v.volume,
                    v.secret,
                    v.keys.into_iter().map(|(k, _)| k).collect(),
                )
            })
            .collect();
        assert_eq!(built, known);
    }
}
