//! A new `spec.buffer.spill.size` (or spill StorageClass): Kubernetes refuses any change to a
//! StatefulSet's `volumeClaimTemplates`, so the StatefulSet is replaced instead of updated.
//!
//! Two ways, chosen per resize ([`plan`]):
//!
//! - **Expand**, when the size grows, the StorageClass is unchanged and allows expansion
//!   (`allowVolumeExpansion: true`), and every existing spill claim is `Bound`: each claim's
//!   `spec.resources.requests.storage` is raised, then the StatefulSet is deleted with
//!   `propagationPolicy: Orphan`, so its pod keeps running and keeps its claim, and the next
//!   reconcile applies the StatefulSet with the new template, which adopts the pod and the claims.
//!   The volume grows online where the storage driver can do that.
//! - **Recreate** otherwise (a smaller size, a class that cannot expand or does not exist, a class
//!   change, a claim not yet bound): the StatefulSet is deleted with its pod (foreground) and its
//!   spill claims are deleted; once both are gone the next reconcile creates the StatefulSet, and
//!   its pod gets a new claim of the new size. Spill holds no durable state: the capture re-mines
//!   what was spilled from its bookmark.
//!
//! Why a claim that is not `Bound` is recreated: the API server allows `resources.requests` of a
//! claim to change only once it is bound ("spec is immutable after creation except
//! resources.requests and volumeAttributesClassName for bound claims"); an unbound claim has no
//! volume yet, so recreating it loses nothing. Should the API server still refuse an expansion
//! (for example an admission plugin), the resize falls back to recreating.
//!
//! Each resize publishes one Normal Event, `SpillVolumeExpanded` or `SpillVolumeRecreated`, whose
//! note says what was done and why. While the old StatefulSet or claims are still going away the
//! reconcile holds the StatefulSet back and looks again shortly ([`RESIZE_POLL`]).

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PropagationPolicy};
use kube::{Api, Client};
use redoline_crds::ByteQuantity;

use crate::build::SPILL_VOLUME;
use crate::status::Transition;

/// Event reason: the spill claims were expanded in place.
pub const SPILL_VOLUME_EXPANDED: &str = "SpillVolumeExpanded";
/// Event reason: the StatefulSet and its spill claims were deleted and are created anew.
pub const SPILL_VOLUME_RECREATED: &str = "SpillVolumeRecreated";
/// How soon a reconcile looks again while a resize waits for deletions.
pub const RESIZE_POLL: Duration = Duration::from_secs(1);
/// A resize started longer ago than this is started afresh if the old StatefulSet is still
/// there (its deletion was lost, or the cache missed it).
const RESIZE_PATIENCE: Duration = Duration::from_secs(120);

/// The spill claim template of a StatefulSet: (requested bytes, StorageClass name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpillTemplate {
    /// `None` when the quantity cannot be read.
    pub bytes: Option<u64>,
    pub storage_class: Option<String>,
}

impl SpillTemplate {
    pub fn of(sts: &StatefulSet) -> Option<Self> {
        let claim = sts
            .spec
            .as_ref()?
            .volume_claim_templates
            .as_ref()?
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(SPILL_VOLUME))?;
        let spec = claim.spec.as_ref()?;
        Some(Self {
            bytes: requested_bytes(spec),
            storage_class: spec.storage_class_name.clone(),
        })
    }
}

fn requested_bytes(spec: &k8s_openapi::api::core::v1::PersistentVolumeClaimSpec) -> Option<u64> {
    let quantity = spec.resources.as_ref()?.requests.as_ref()?.get("storage")?;
    ByteQuantity::quantity(&quantity.0).bytes().ok()
}

/// Whether the existing StatefulSet's spill claim template differs from the desired one, which
/// the API server would refuse to apply.
pub fn needed(existing: &StatefulSet, desired: &StatefulSet) -> bool {
    SpillTemplate::of(existing) != SpillTemplate::of(desired)
}

/// A spill claim as the plan sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub name: String,
    pub bound: bool,
    pub storage_class: Option<String>,
}

/// How a resize is done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Raise these claims' requests, then replace the StatefulSet around the running pod.
    Expand,
    /// Delete the StatefulSet (with its pod) and the claims; `why` says why expansion is not
    /// possible, for the Event.
    Recreate { why: String },
}

/// Chooses between expansion and recreation. `expandable` says whether a StorageClass allows
/// volume expansion (`None`: no such class).
pub fn plan(
    old: &SpillTemplate,
    new: &SpillTemplate,
    claims: &[Claim],
    expandable: impl Fn(&str) -> Option<bool>,
) -> Plan {
    let recreate = |why: String| Plan::Recreate { why };
    if old.storage_class != new.storage_class {
        return recreate(format!(
            "the StorageClass changes from {} to {}",
            class_name(&old.storage_class),
            class_name(&new.storage_class)
        ));
    }
    match (old.bytes, new.bytes) {
        (Some(old), Some(new)) if new > old => {}
        (Some(old), Some(new)) if new < old => {
            return recreate("the size shrinks, and a volume cannot shrink".into());
        }
        (Some(_), Some(_)) => return recreate("the claim template changes".into()),
        _ => return recreate("the old size cannot be read".into()),
    }
    if claims.is_empty() {
        return recreate("no spill claim exists yet".into());
    }
    for claim in claims {
        let Some(class) = claim.storage_class.as_deref() else {
            return recreate(format!("claim {} has no StorageClass", claim.name));
        };
        match expandable(class) {
            Some(true) => {}
            Some(false) => {
                return recreate(format!(
                    "StorageClass {class} does not allow volume expansion"
                ));
            }
            None => return recreate(format!("StorageClass {class} does not exist")),
        }
        if !claim.bound {
            return recreate(format!(
                "claim {} is not Bound, and only bound claims can be expanded",
                claim.name
            ));
        }
    }
    Plan::Expand
}

fn class_name(class: &Option<String>) -> String {
    class
        .as_deref()
        .map_or_else(|| "the default class".to_owned(), |c| format!("{c:?}"))
}

fn size(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "an unreadable size".to_owned(), |b| format!("{b} bytes"))
}

/// A resize under way: what the next reconciles wait for.
#[derive(Clone, Debug)]
pub struct Pending {
    /// Spill claims deleted by a recreation, which must be gone before the new StatefulSet.
    pub claims: Vec<String>,
    pub since: Instant,
}

/// What the reconcile does with the StatefulSet this time.
#[derive(Debug)]
pub struct Step {
    /// Apply the desired StatefulSet now.
    pub apply: bool,
    /// The resize to remember for the next reconcile (`None`: none is under way).
    pub pending: Option<Pending>,
    /// The Event to publish.
    pub event: Option<Transition>,
}

/// One reconcile's part of a resize: starts one when the templates differ, waits while the old
/// objects go away, and says when the StatefulSet may be applied.
pub async fn step(
    client: &Client,
    namespace: &str,
    existing: Option<&StatefulSet>,
    desired: &StatefulSet,
    pending: Option<Pending>,
) -> Result<Step, kube::Error> {
    let hold = |pending: Option<Pending>| Step {
        apply: false,
        pending,
        event: None,
    };
    match existing {
        // Being deleted (by a resize, or by someone): nothing can be applied until it is gone.
        Some(sts) if sts.metadata.deletion_timestamp.is_some() => Ok(hold(pending)),
        Some(sts) if needed(sts, desired) => {
            // The cache may not have seen the deletion of a resize just started.
            if let Some(p) = pending.filter(|p| p.since.elapsed() < RESIZE_PATIENCE) {
                return Ok(hold(Some(p)));
            }
            start(client, namespace, sts, desired).await
        }
        Some(_) => Ok(Step {
            apply: true,
            pending: None,
            event: None,
        }),
        None => {
            let Some(pending) = pending else {
                return Ok(Step {
                    apply: true,
                    pending: None,
                    event: None,
                });
            };
            let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), namespace);
            for claim in &pending.claims {
                if claims.get_opt(claim).await?.is_some() {
                    return Ok(hold(Some(pending)));
                }
            }
            Ok(Step {
                apply: true,
                pending: None,
                event: None,
            })
        }
    }
}

/// Starts a resize: expansion where possible, recreation otherwise.
async fn start(
    client: &Client,
    namespace: &str,
    existing: &StatefulSet,
    desired: &StatefulSet,
) -> Result<Step, kube::Error> {
    let name = existing.metadata.name.clone().unwrap_or_default();
    let old = SpillTemplate::of(existing).unwrap_or(SpillTemplate {
        bytes: None,
        storage_class: None,
    });
    let new = SpillTemplate::of(desired).unwrap_or(SpillTemplate {
        bytes: None,
        storage_class: None,
    });
    let claims_api: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), namespace);
    let claims = spill_claims(&claims_api, existing, &name).await?;
    let classes: Api<StorageClass> = Api::all(client.clone());
    let mut known: Vec<(String, Option<bool>)> = Vec::new();
    for class in claims.iter().filter_map(|c| c.storage_class.clone()) {
        if known.iter().all(|(k, _)| *k != class) {
            let allowed = classes
                .get_opt(&class)
                .await?
                .map(|sc| sc.allow_volume_expansion == Some(true));
            known.push((class, allowed));
        }
    }
    let expandable = |class: &str| known.iter().find(|(k, _)| k == class).and_then(|(_, a)| *a);
    let claim_names = claims.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
    let why = match plan(&old, &new, &claims, expandable) {
        Plan::Recreate { why } => why,
        Plan::Expand => match expand_claims(&claims_api, &claim_names, &new).await {
            Ok(()) => {
                delete_stateful_set(client, namespace, &name, PropagationPolicy::Orphan).await?;
                return Ok(Step {
                    apply: false,
                    pending: Some(Pending {
                        claims: Vec::new(),
                        since: Instant::now(),
                    }),
                    event: Some(Transition {
                        warning: false,
                        reason: SPILL_VOLUME_EXPANDED.into(),
                        note: format!(
                            "spill claim(s) {} expanded from {} to {}; StatefulSet {name} \
                             re-created around the running pod",
                            claim_names.join(", "),
                            size(old.bytes),
                            size(new.bytes)
                        ),
                    }),
                });
            }
            // Refused (admission, or the claim changed since it was read): recreate instead.
            Err(kube::Error::Api(status)) if (400..500).contains(&status.code) => {
                format!("the API server refused the expansion: {}", status.message)
            }
            Err(error) => return Err(error),
        },
    };
    delete_stateful_set(client, namespace, &name, PropagationPolicy::Foreground).await?;
    for claim in &claim_names {
        match claims_api.delete(claim, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error),
        }
    }
    let claims_note = if claim_names.is_empty() {
        "no spill claim existed".to_owned()
    } else {
        format!("spill claim(s) {} deleted", claim_names.join(", "))
    };
    Ok(Step {
        apply: false,
        pending: Some(Pending {
            claims: claim_names,
            since: Instant::now(),
        }),
        event: Some(Transition {
            warning: false,
            reason: SPILL_VOLUME_RECREATED.into(),
            note: format!(
                "spill size {} -> {}: {why}; StatefulSet {name} deleted with its pod and \
                 {claims_note}; both are created anew",
                size(old.bytes),
                size(new.bytes)
            ),
        }),
    })
}

/// The spill claims of the StatefulSet's pods: `spill-<statefulset>-<ordinal>`.
async fn spill_claims(
    claims: &Api<PersistentVolumeClaim>,
    sts: &StatefulSet,
    name: &str,
) -> Result<Vec<Claim>, kube::Error> {
    let selector = sts
        .spec
        .as_ref()
        .and_then(|s| s.selector.match_labels.as_ref())
        .map(|labels| {
            labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default();
    let prefix = format!("{SPILL_VOLUME}-{name}-");
    let list = claims
        .list(&ListParams::default().labels(&selector))
        .await?;
    Ok(list
        .items
        .into_iter()
        .filter(|c| c.metadata.deletion_timestamp.is_none())
        .filter_map(|c| {
            let claim_name = c.metadata.name.clone()?;
            let ordinal = claim_name.strip_prefix(&prefix)?;
            ordinal.parse::<u32>().ok()?;
            Some(Claim {
                bound: c.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound"),
                storage_class: c.spec.as_ref().and_then(|s| s.storage_class_name.clone()),
                name: claim_name,
            })
        })
        .collect())
}

async fn expand_claims(
    claims: &Api<PersistentVolumeClaim>,
    names: &[String],
    new: &SpillTemplate,
) -> Result<(), kube::Error> {
    let Some(bytes) = new.bytes else {
        return Ok(());
    };
    let patch = serde_json::json!({
        "spec": {"resources": {"requests": {"storage": bytes.to_string()}}}
    });
    for name in names {
        claims
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
    }
    Ok(())
}

async fn delete_stateful_set(
    client: &Client,
    namespace: &str,
    name: &str,
    propagation: PropagationPolicy,
) -> Result<(), kube::Error> {
    let api: Api<StatefulSet> = Api::namespaced(client.clone(), namespace);
    let params = DeleteParams {
        propagation_policy: Some(propagation),
        ..DeleteParams::default()
    };
    match api.delete(name, &params).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{build, fixtures};

    fn template(bytes: u64, class: Option<&str>) -> SpillTemplate {
        SpillTemplate {
            bytes: Some(bytes),
            storage_class: class.map(str::to_owned),
        }
    }

    fn claim(bound: bool, class: Option<&str>) -> Claim {
        Claim {
            name: "spill-orders-capture-0".into(),
            bound,
            storage_class: class.map(str::to_owned),
        }
    }

    const GI: u64 = 1 << 30;

    #[test]
    fn growing_on_an_expandable_class_with_bound_claims_expands() {
        let plan = plan(
            &template(24 * GI, Some("fast")),
            &template(30 * GI, Some("fast")),
            &[claim(true, Some("fast"))],
            |_| Some(true),
        );
        assert_eq!(plan, Plan::Expand);
    }

    #[test]
    fn everything_else_recreates_and_says_why() {
        let why = |plan: Plan| match plan {
            Plan::Recreate { why } => why,
            Plan::Expand => panic!("expected a recreation"),
        };
        let old = template(24 * GI, Some("fast"));
        let bound = [claim(true, Some("fast"))];
        let shrink = plan(&old, &template(16 * GI, Some("fast")), &bound, |_| {
            Some(true)
        });
        assert!(why(shrink).contains("shrinks"));
        let fixed = plan(&old, &template(30 * GI, Some("fast")), &bound, |_| {
            Some(false)
        });
        assert!(why(fixed).contains("does not allow volume expansion"));
        let missing = plan(&old, &template(30 * GI, Some("fast")), &bound, |_| None);
        assert!(why(missing).contains("does not exist"));
        let unbound = plan(
            &old,
            &template(30 * GI, Some("fast")),
            &[claim(false, Some("fast"))],
            |_| Some(true),
        );
        assert!(why(unbound).contains("not Bound"));
        let moved = plan(&old, &template(30 * GI, Some("slow")), &bound, |_| {
            Some(true)
        });
        assert!(why(moved).contains("StorageClass changes"));
        let none = plan(&old, &template(30 * GI, Some("fast")), &[], |_| Some(true));
        assert!(why(none).contains("no spill claim"));
        let classless = plan(
            &template(24 * GI, None),
            &template(30 * GI, None),
            &[claim(true, None)],
            |_| Some(true),
        );
        assert!(why(classless).contains("has no StorageClass"));
    }

    #[test]
    fn only_the_claim_template_makes_a_resize() {
        let settings = fixtures::settings();
        let sample = fixtures::sample();
        let existing = build(&sample, &settings).unwrap().stateful_set;
        let mut suspended = sample.clone();
        suspended.spec.suspend = true;
        let same_claims = build(&suspended, &settings).unwrap().stateful_set;
        assert!(!needed(&existing, &same_claims));
        let mut bigger = sample.clone();
        bigger.spec.buffer.spill.size = ByteQuantity::quantity("30Gi");
        let resized = build(&bigger, &settings).unwrap().stateful_set;
        assert!(needed(&existing, &resized));
        assert_eq!(
            SpillTemplate::of(&resized).unwrap().bytes,
            Some(30 * GI),
            "the template's quantity is read back"
        );
        // The API server may write the quantity back in another form.
        assert_eq!(
            ByteQuantity::quantity("24Gi").bytes().unwrap(),
            ByteQuantity::quantity(&(24 * GI).to_string())
                .bytes()
                .unwrap()
        );
    }
}
