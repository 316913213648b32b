//! The Secrets an OracleCapture references: whether they and the keys the capture reads exist,
//! and a digest of the data the capture uses, put on the pod template so that the pod rolls when a
//! credential changes, and only then (a label or annotation edit changes nothing the capture
//! reads).
//!
//! The operator watches Secrets as metadata only (no values cross the wire or sit in its cache)
//! and reads a referenced Secret with a `get` when its `resourceVersion` moved since the last
//! read. What it keeps of a Secret ([`SecretFacts`]) is its key names and a salted SHA-256 of each
//! value, never a value.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::core::v1::Secret;
use kube::api::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client};
use redoline_crds::v1alpha1::OracleCaptureSpec;
use sha2::{Digest, Sha256};

use crate::status::ConfigurationProblem;

/// What the referenced Secrets look like right now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretCheck {
    /// The first problem found, with a message naming every problem and the spec field that
    /// references the Secret.
    pub problem: Option<ConfigurationProblem>,
    /// SHA-256 over the value digests of what the capture reads: the credentials' two keys, every
    /// key of a wallet or Kafka configuration Secret (mounted whole).
    pub digest: String,
}

/// What the operator keeps of one Secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretFacts {
    /// The version these facts were read at.
    pub resource_version: String,
    /// Each key, with SHA-256 over the Secret's uid and the value: salted, so equal passwords in
    /// two Secrets do not look alike, and no table of common passwords matches.
    pub keys: BTreeMap<String, [u8; 32]>,
}

impl SecretFacts {
    /// The facts of a Secret read from the API server.
    pub fn of(secret: &Secret) -> Self {
        let uid = secret.metadata.uid.as_deref().unwrap_or_default();
        let value_digest = |value: &[u8]| -> [u8; 32] {
            let mut digest = Sha256::new();
            digest.update(uid.as_bytes());
            digest.update([0]);
            digest.update(value);
            digest.finalize().into()
        };
        let mut keys = BTreeMap::new();
        for (key, value) in secret.data.iter().flatten() {
            keys.insert(key.clone(), value_digest(&value.0));
        }
        // Never set by a read, but a Secret built in memory may carry it; it wins over `data`.
        for (key, value) in secret.string_data.iter().flatten() {
            keys.insert(key.clone(), value_digest(value.as_bytes()));
        }
        Self {
            resource_version: secret.metadata.resource_version.clone().unwrap_or_default(),
            keys,
        }
    }
}

/// One Secret the spec names, and the keys the capture needs from it.
struct SecretReference<'a> {
    field: &'static str,
    name: &'a str,
    /// (key, the spec field naming the key); empty when the capture reads the whole Secret.
    keys: Vec<(&'a str, &'static str)>,
}

fn references(spec: &OracleCaptureSpec) -> Vec<SecretReference<'_>> {
    let credentials = &spec.database.credentials_secret;
    let mut references = vec![SecretReference {
        field: "spec.database.credentialsSecret",
        name: &credentials.name,
        keys: vec![
            (
                &credentials.username_key,
                "spec.database.credentialsSecret.usernameKey",
            ),
            (
                &credentials.password_key,
                "spec.database.credentialsSecret.passwordKey",
            ),
        ],
    }];
    if let Some(wallet) = &spec.database.wallet_secret {
        references.push(SecretReference {
            field: "spec.database.walletSecret",
            name: &wallet.name,
            keys: Vec::new(),
        });
    }
    if let Some(kafka) = &spec.kafka.config_secret {
        references.push(SecretReference {
            field: "spec.kafka.configSecret",
            name: &kafka.name,
            keys: Vec::new(),
        });
    }
    references
}

/// The names of the Secrets the spec references.
pub fn referenced_names(spec: &OracleCaptureSpec) -> Vec<&str> {
    references(spec).iter().map(|r| r.name).collect()
}

/// Whether the Secret named `secret` is one the spec references (used to map Secret watch events
/// to the captures that read them).
pub fn references_secret(spec: &OracleCaptureSpec, secret: &str) -> bool {
    references(spec).iter().any(|r| r.name == secret)
}

/// Which problem a Secret has; the first one found is reported with every problem's message.
type ProblemKind = fn(String) -> ConfigurationProblem;

/// Checks every Secret the spec references and the keys the capture needs; `facts` gives what is
/// known of a Secret by name (`None`: it does not exist).
pub fn check(spec: &OracleCaptureSpec, facts: impl Fn(&str) -> Option<SecretFacts>) -> SecretCheck {
    let mut problems: Vec<(ProblemKind, String)> = Vec::new();
    let mut digest = Sha256::new();
    for reference in references(spec) {
        let Some(secret) = facts(reference.name) else {
            problems.push((
                ConfigurationProblem::SecretNotFound,
                format!(
                    "Secret {:?} named by {} does not exist",
                    reference.name, reference.field
                ),
            ));
            continue;
        };
        let mut used: Vec<(&str, Option<&[u8; 32]>)> = if reference.keys.is_empty() {
            secret
                .keys
                .iter()
                .map(|(k, v)| (k.as_str(), Some(v)))
                .collect()
        } else {
            reference
                .keys
                .iter()
                .map(|(key, _)| (*key, secret.keys.get(*key)))
                .collect()
        };
        used.sort_unstable();
        for (key, value) in &used {
            digest.update(format!("{}\t{}\t{key}\t", reference.field, reference.name));
            digest.update(value.map_or(&[0u8; 32][..], |v| &v[..]));
            digest.update(b"\n");
        }
        for (key, key_field) in &reference.keys {
            if !secret.keys.contains_key(*key) {
                problems.push((
                    ConfigurationProblem::SecretKeyMissing,
                    format!(
                        "Secret {:?} named by {} has no key {key:?} (set by {key_field})",
                        reference.name, reference.field
                    ),
                ));
            }
        }
    }
    let problem = problems.first().map(|(first, _)| {
        let message = problems
            .iter()
            .map(|(_, message)| message.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        first(message)
    });
    SecretCheck {
        problem,
        digest: digest
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    }
}

/// The facts of the Secrets read so far, by namespace and name.
#[derive(Debug, Default)]
pub struct SecretFactsCache {
    facts: HashMap<(String, String), SecretFacts>,
}

impl SecretFactsCache {
    /// Brings the facts of the Secrets `spec` references up to date with the metadata cache:
    /// a Secret whose `resourceVersion` moved is read again (one `get`), one that is gone is
    /// forgotten. A failed read keeps what was known and is retried by the next reconcile.
    pub async fn refresh(
        cache: &std::sync::Mutex<Self>,
        client: &Client,
        metadata: &Store<PartialObjectMeta<Secret>>,
        namespace: &str,
        spec: &OracleCaptureSpec,
    ) -> Result<(), kube::Error> {
        let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
        for name in referenced_names(spec) {
            let key = (namespace.to_owned(), name.to_owned());
            let Some(meta) = metadata.get(&ObjectRef::new(name).within(namespace)) else {
                lock(cache).facts.remove(&key);
                continue;
            };
            let version = meta.metadata.resource_version.clone().unwrap_or_default();
            let known = lock(cache)
                .facts
                .get(&key)
                .is_some_and(|facts| facts.resource_version == version);
            if known {
                continue;
            }
            match api.get_opt(name).await? {
                Some(secret) => {
                    lock(cache).facts.insert(key, SecretFacts::of(&secret));
                }
                None => {
                    lock(cache).facts.remove(&key);
                }
            }
        }
        Ok(())
    }

    /// Keeps the facts of the Secrets `keep(namespace, name)` still wants (no capture referencing
    /// the others is left).
    pub fn retain(&mut self, keep: impl Fn(&str, &str) -> bool) {
        self.facts
            .retain(|(namespace, name), _| keep(namespace, name));
    }

    /// What is known of Secret `name` in `namespace`.
    pub fn get(&self, namespace: &str, name: &str) -> Option<SecretFacts> {
        self.facts
            .get(&(namespace.to_owned(), name.to_owned()))
            .cloned()
    }
}

/// Whether a Secret the spec references is missing from the metadata cache but exists on the
/// API server: the Secret's watch event can arrive after the OracleCapture's, and reporting
/// SecretNotFound then would be a false alarm (a Warning Event a person would chase). Asked as a
/// metadata-only list by name. A failed lookup counts as "not there", so a real absence is still
/// reported.
pub async fn metadata_cache_behind(
    client: &Client,
    namespace: &str,
    spec: &OracleCaptureSpec,
    metadata: &Store<PartialObjectMeta<Secret>>,
) -> bool {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    for name in referenced_names(spec) {
        if metadata
            .get(&ObjectRef::new(name).within(namespace))
            .is_some()
        {
            continue;
        }
        let by_name = kube::api::ListParams::default().fields(&format!("metadata.name={name}"));
        match api.list_metadata(&by_name).await {
            Ok(found) if !found.items.is_empty() => return true,
            Ok(_) => {}
            Err(error) => {
                tracing::debug!(namespace, secret = name, %error, "Secret lookup failed");
            }
        }
    }
    false
}

fn lock(cache: &std::sync::Mutex<SecretFactsCache>) -> std::sync::MutexGuard<'_, SecretFactsCache> {
    // Plain map updates: a panic elsewhere cannot leave one half-done.
    cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::fixtures;

    fn secret(uid: &str, version: &str, data: &[(&str, &str)]) -> Secret {
        let mut secret = Secret::default();
        secret.metadata.name = Some("orders-db-cdc".into());
        secret.metadata.namespace = Some("sales".into());
        secret.metadata.uid = Some(uid.into());
        secret.metadata.resource_version = Some(version.into());
        secret.metadata.labels = Some([("team".to_owned(), "a".to_owned())].into());
        secret.data = Some(
            data.iter()
                .map(|(k, v)| {
                    (
                        k.to_string(),
                        k8s_openapi::ByteString(v.as_bytes().to_vec()),
                    )
                })
                .collect(),
        );
        secret
    }

    #[test]
    fn every_referenced_secret_is_known() {
        let spec = fixtures::sample().spec;
        assert!(references_secret(&spec, "orders-db-cdc"));
        assert!(references_secret(&spec, "orders-kafka-client"));
        assert!(!references_secret(&spec, "someone-else"));
        let fields: Vec<_> = references(&spec).iter().map(|r| r.field).collect();
        assert_eq!(
            fields,
            ["spec.database.credentialsSecret", "spec.kafka.configSecret"]
        );
    }

    #[test]
    fn the_digest_follows_the_data_the_capture_reads_and_nothing_else() {
        let mut spec = fixtures::sample().spec;
        spec.kafka.config_secret = None;
        let digest_of = |secret: &Secret| {
            let facts = SecretFacts::of(secret);
            let check = check(&spec, |name| {
                (name == "orders-db-cdc").then(|| facts.clone())
            });
            assert_eq!(check.problem, None);
            check.digest
        };
        let base = secret("u1", "7", &[("username", "cdc"), ("password", "s3cret")]);
        let first = digest_of(&base);
        // A label, an annotation or a key the capture does not read: a new resourceVersion, the
        // same digest, no rollout.
        let mut relabelled = secret("u1", "8", &[("username", "cdc"), ("password", "s3cret")]);
        relabelled.metadata.annotations = Some([("note".to_owned(), "x".to_owned())].into());
        assert_eq!(digest_of(&relabelled), first);
        let extra = secret(
            "u1",
            "9",
            &[
                ("username", "cdc"),
                ("password", "s3cret"),
                ("comment", "rotated soon"),
            ],
        );
        assert_eq!(digest_of(&extra), first);
        // A new password rolls the pod.
        let rotated = secret("u1", "10", &[("username", "cdc"), ("password", "n3w")]);
        assert_ne!(digest_of(&rotated), first);
        // No value in the facts, and the salt makes the same value look different elsewhere.
        let facts = SecretFacts::of(&base);
        let other = SecretFacts::of(&secret("u2", "1", &[("password", "s3cret")]));
        assert_ne!(facts.keys["password"], other.keys["password"]);
        assert!(!format!("{facts:?}").contains("s3cret"));
    }

    #[test]
    fn missing_secrets_and_keys_are_named_with_their_spec_fields() {
        let spec = fixtures::sample().spec;
        let facts = SecretFacts::of(&secret("u1", "7", &[("username", "cdc")]));
        let check = check(&spec, |name| {
            (name == "orders-db-cdc").then(|| facts.clone())
        });
        let problem = check.problem.unwrap();
        assert_eq!(problem.reason(), "SecretKeyMissing");
        let message = problem.message();
        assert!(
            message.contains(
                "has no key \"password\" (set by spec.database.credentialsSecret.passwordKey)"
            ),
            "{message}"
        );
        assert!(
            message.contains(
                "Secret \"orders-kafka-client\" named by spec.kafka.configSecret does not exist"
            ),
            "{message}"
        );
    }
}
