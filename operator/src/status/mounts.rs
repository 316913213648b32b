//! A missing Secret or key, as the kubelet reports it: the operator reads no Secret, so it learns
//! of one from the capture pod's `FailedMount` Events, which it turns into the configuration
//! problem the status shows ([`ConfigurationProblem::SecretNotFound`] or
//! [`ConfigurationProblem::SecretKeyMissing`]), with a message naming the spec field.
//!
//! The kubelet's messages (pkg/volume/secret in Kubernetes) name the volume, then the cause:
//!
//! ```text
//! MountVolume.SetUp failed for volume "database-credentials" : secret "orders-db-cdc" not found
//! MountVolume.SetUp failed for volume "database-credentials" : couldn't find key password in Secret sales/orders-db-cdc
//! ```
//!
//! The volume is what ties a message to a spec field ([`crate::build::secret_volumes`]); a
//! Secret volume this operator version does not list is still reported, by its volume name and
//! the kubelet's words. Other mount failures (a timeout, a full disk) are not a configuration
//! problem and are left to the pod's own status.

use std::collections::BTreeMap;

use crate::build::SecretVolume;

use super::ConfigurationProblem;

/// What one `FailedMount` message says about a Secret volume.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MountFailure {
    pub volume: String,
    pub cause: Cause,
    /// The kubelet's words after the volume, for a volume not listed.
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    SecretNotFound,
    KeyMissing(String),
}

/// Reads a `FailedMount` message; `None` when it is not about a missing Secret or key.
pub fn parse(message: &str) -> Option<MountFailure> {
    const VOLUME: &str = "for volume \"";
    let after = &message[message.find(VOLUME)? + VOLUME.len()..];
    let (volume, rest) = after.split_once('"')?;
    let detail = rest.trim_start().trim_start_matches(':').trim().to_owned();
    const KEY: &str = "couldn't find key ";
    let cause = if let Some(at) = rest.find(KEY) {
        let key = rest[at + KEY.len()..].split_whitespace().next()?;
        Cause::KeyMissing(key.to_owned())
    } else if rest.contains("not found") {
        Cause::SecretNotFound
    } else {
        return None;
    };
    Some(MountFailure {
        volume: volume.to_owned(),
        cause,
        detail,
    })
}

/// The configuration problem in `messages` (the capture pod's `FailedMount` messages, newest
/// first): per volume the newest message counts (the Secret may have been created since, without
/// the key); the volumes in the order `volumes` lists them, then any other. The first problem
/// gives the reason; the message names every one, as the status has always shown them.
pub fn mount_problem<'a>(
    volumes: &[SecretVolume],
    messages: impl IntoIterator<Item = &'a str>,
) -> Option<ConfigurationProblem> {
    let mut newest: BTreeMap<String, MountFailure> = BTreeMap::new();
    for failure in messages.into_iter().filter_map(parse) {
        newest.entry(failure.volume.clone()).or_insert(failure);
    }
    let mut found: Vec<(usize, &MountFailure)> = newest
        .values()
        .map(|failure| {
            let rank = volumes
                .iter()
                .position(|v| v.volume == failure.volume)
                .unwrap_or(volumes.len());
            (rank, failure)
        })
        .collect();
    found.sort_by_key(|(rank, _)| *rank);
    let problems: Vec<(&Cause, String)> = found
        .into_iter()
        .map(|(_, failure)| (&failure.cause, describe(volumes, failure)))
        .collect();
    let (first, _) = problems.first()?;
    let message = problems
        .iter()
        .map(|(_, message)| message.as_str())
        .collect::<Vec<_>>()
        .join("; ");
    Some(match first {
        Cause::SecretNotFound => ConfigurationProblem::SecretNotFound(message),
        Cause::KeyMissing(_) => ConfigurationProblem::SecretKeyMissing(message),
    })
}

fn describe(volumes: &[SecretVolume], failure: &MountFailure) -> String {
    let Some(volume) = volumes.iter().find(|v| v.volume == failure.volume) else {
        return format!(
            "the Secret volume {:?} cannot be mounted: {}",
            failure.volume, failure.detail
        );
    };
    match &failure.cause {
        Cause::SecretNotFound => format!(
            "Secret {:?} named by {} does not exist",
            volume.secret, volume.field
        ),
        Cause::KeyMissing(key) => {
            let set_by = volume
                .keys
                .iter()
                .find(|(k, _)| k == key)
                .map_or(String::new(), |(_, field)| format!(" (set by {field})"));
            format!(
                "Secret {:?} named by {} has no key {key:?}{set_by}",
                volume.secret, volume.field
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{fixtures, secret_volumes};

    const NOT_FOUND: &str = "MountVolume.SetUp failed for volume \"database-credentials\" : \
                             secret \"orders-db-cdc\" not found";
    const NO_PASSWORD: &str = "MountVolume.SetUp failed for volume \"database-credentials\" : \
                               couldn't find key password in Secret sales/orders-db-cdc";
    const NO_KAFKA: &str = "MountVolume.SetUp failed for volume \"kafka-config\" : \
                            secret \"orders-kafka-client\" not found";

    #[test]
    fn kubelet_messages_are_read() {
        assert_eq!(
            parse(NOT_FOUND),
            Some(MountFailure {
                volume: "database-credentials".into(),
                cause: Cause::SecretNotFound,
                detail: "secret \"orders-db-cdc\" not found".into(),
            })
        );
        assert_eq!(
            parse(NO_PASSWORD).map(|f| f.cause),
            Some(Cause::KeyMissing("password".into()))
        );
        // Not about a Secret: left to the pod's status.
        assert_eq!(
            parse("MountVolume.SetUp failed for volume \"spill\" : mount failed: exit status 32"),
            None
        );
        assert_eq!(parse("Unable to attach or mount volumes: timed out"), None);
    }

    #[test]
    fn a_missing_secret_names_its_spec_field() {
        let capture = fixtures::sample();
        let volumes = secret_volumes(&capture);
        let problem = mount_problem(&volumes, [NOT_FOUND]).unwrap();
        assert_eq!(problem.reason(), "SecretNotFound");
        assert_eq!(
            problem.message(),
            "Secret \"orders-db-cdc\" named by spec.database.credentialsSecret does not exist"
        );
    }

    #[test]
    fn the_newest_message_of_a_volume_counts_and_every_volume_is_named() {
        let capture = fixtures::sample();
        let volumes = secret_volumes(&capture);
        // Created since without the key: the newer message wins for that volume.
        let problem = mount_problem(&volumes, [NO_KAFKA, NO_PASSWORD, NOT_FOUND]).unwrap();
        assert_eq!(problem.reason(), "SecretKeyMissing");
        assert_eq!(
            problem.message(),
            "Secret \"orders-db-cdc\" named by spec.database.credentialsSecret has no key \
             \"password\" (set by spec.database.credentialsSecret.passwordKey); Secret \
             \"orders-kafka-client\" named by spec.kafka.configSecret does not exist"
        );
        assert_eq!(mount_problem(&volumes, ["Pulling image"]), None);
    }

    #[test]
    fn a_volume_this_version_does_not_list_is_still_reported() {
        let capture = fixtures::sample();
        let volumes = secret_volumes(&capture);
        let problem = mount_problem(
            &volumes,
            ["MountVolume.SetUp failed for volume \"kafka-tls\" : secret \"my-cluster-cluster-ca-cert\" not found"],
        )
        .unwrap();
        assert_eq!(problem.reason(), "SecretNotFound");
        assert_eq!(
            problem.message(),
            "the Secret volume \"kafka-tls\" cannot be mounted: secret \
             \"my-cluster-cluster-ca-cert\" not found"
        );
    }
}
