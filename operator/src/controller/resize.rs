//! A new `spec.buffer.spill.size` (or spill StorageClass): Kubernetes refuses any change to a
//! StatefulSet's `volumeClaimTemplates`, so the StatefulSet is replaced instead of updated.
//!
//! Two ways, chosen per resize ([`plan`]):
//!
//! - **Expand**, when the size grows, the StorageClass is unchanged and allows expansion
//!   (`allowVolumeExpansion: true`), and every existing spill claim is `Bound`: each claim's
//!   `spec.resources.requests.storage` is raised, the StatefulSet's retention policy is switched to
//!   `whenDeleted: Retain` until its controller has removed itself from the claims' owners, then
//!   the StatefulSet is deleted with
//!   `propagationPolicy: Orphan`, so its pod keeps running and keeps its claim, and the next
//!   reconcile applies the StatefulSet with the new template, which adopts the pod and the claims.
//!   The volume grows online where the storage driver can do that.
//! - **Recreate** otherwise (a smaller size, a class that cannot expand or does not exist, a class
//!   change, a claim not yet bound): the StatefulSet is deleted in the foreground, and the garbage
//!   collector deletes its pod and then its spill claims; once they are gone the next reconcile
//!   creates the StatefulSet, and its pod gets a new claim of the new size. Spill holds no durable
//!   state: the capture re-mines what was spilled from its bookmark.
//!
//! The operator never deletes a claim itself, so it needs no `delete` on PersistentVolumeClaims:
//! the StatefulSet's `persistentVolumeClaimRetentionPolicy` (`whenDeleted: Delete`) makes the
//! StatefulSet controller the claims' owner, and they go with it (with the OracleCapture too).
//! A claim not owned yet (just after an expansion replaced the StatefulSet, before the new one
//! adopted it) would survive the deletion, so a recreation waits until every claim is owned, and
//! warns once ([`SPILL_CLAIM_NOT_OWNED`]) should that take longer than [`RESIZE_PATIENCE`].
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
/// Event reason (Warning): a recreation waits for the StatefulSet to own its spill claims.
pub const SPILL_CLAIM_NOT_OWNED: &str = "SpillClaimNotOwned";
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
    /// The StatefulSet is the claim's controlling owner, so the claim is deleted with it.
    pub owned: bool,
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
    /// Spill claims deleted with the StatefulSet by a recreation, which must be gone before the
    /// new StatefulSet.
    pub claims: Vec<String>,
    /// A recreation not started yet: these claims are not owned by the StatefulSet, so deleting
    /// it now would leave them behind.
    pub unowned: Vec<String>,
    /// An expansion not finished yet: these claims are still owned by the StatefulSet, whose
    /// retention policy was switched to `Retain` so that its controller lets go of them before
    /// the StatefulSet is deleted.
    pub releasing: Vec<String>,
    pub since: Instant,
    /// The [`SPILL_CLAIM_NOT_OWNED`] warning was published.
    pub warned: bool,
}

impl Pending {
    pub(crate) fn new(claims: Vec<String>) -> Self {
        Self {
            claims,
            unowned: Vec::new(),
            releasing: Vec::new(),
            since: Instant::now(),
            warned: false,
        }
    }
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
        Some(sts) if needed(sts, desired) => match pending {
            // Still waiting for the claims' owner: look again.
            Some(p) if !p.unowned.is_empty() || !p.releasing.is_empty() => {
                start(client, namespace, sts, desired, Some(p)).await
            }
            // The cache may not have seen the deletion of a resize just started.
            Some(p) if p.since.elapsed() < RESIZE_PATIENCE => Ok(hold(Some(p))),
            _ => start(client, namespace, sts, desired, None).await,
        },
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

/// Starts a resize: expansion where possible, recreation otherwise. `waiting`: a recreation
/// that was held back for unowned claims.
async fn start(
    client: &Client,
    namespace: &str,
    existing: &StatefulSet,
    desired: &StatefulSet,
    waiting: Option<Pending>,
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
                // A claim still owned by the StatefulSet (`whenDeleted: Delete`) can lose that
                // owner only through the garbage collector's orphaning, which races the
                // StatefulSet controller setting the owner again; the collector then deletes the
                // claim as a dependent of a deleted owner. The controller lets go of its claims
                // itself under `Retain`: switch, wait for it (within the patience), then delete.
                let held: Vec<String> = claims
                    .iter()
                    .filter(|c| c.owned)
                    .map(|c| c.name.clone())
                    .collect();
                let waited_long = waiting
                    .as_ref()
                    .is_some_and(|p| p.since.elapsed() >= RESIZE_PATIENCE);
                if !held.is_empty() && !waited_long {
                    retain_claims(client, namespace, &name).await?;
                    let mut pending = waiting.unwrap_or_else(|| Pending::new(Vec::new()));
                    pending.releasing = held;
                    return Ok(Step {
                        apply: false,
                        pending: Some(pending),
                        event: None,
                    });
                }
                delete_stateful_set(client, namespace, &name, PropagationPolicy::Orphan).await?;
                return Ok(Step {
                    apply: false,
                    pending: Some(Pending::new(Vec::new())),
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
    let unowned: Vec<String> = claims
        .iter()
        .filter(|c| !c.owned)
        .map(|c| c.name.clone())
        .collect();
    if !unowned.is_empty() {
        return Ok(await_owner(namespace, &name, unowned, waiting));
    }
    delete_stateful_set(client, namespace, &name, PropagationPolicy::Foreground).await?;
    let claims_note = if claim_names.is_empty() {
        "no spill claim existed".to_owned()
    } else {
        format!("its spill claim(s) {}", claim_names.join(", "))
    };
    Ok(Step {
        apply: false,
        pending: Some(Pending::new(claim_names)),
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

/// Holds a recreation until the StatefulSet controller owns the claims; warns once when that
/// takes longer than [`RESIZE_PATIENCE`].
fn await_owner(
    namespace: &str,
    name: &str,
    unowned: Vec<String>,
    waiting: Option<Pending>,
) -> Step {
    let mut pending = waiting.unwrap_or_else(|| Pending::new(Vec::new()));
    let event = (!pending.warned && pending.since.elapsed() >= RESIZE_PATIENCE).then(|| {
        pending.warned = true;
        Transition {
            warning: true,
            reason: SPILL_CLAIM_NOT_OWNED.into(),
            note: format!(
                "the spill resize waits: claim(s) {} are not owned by StatefulSet {name}, so \
                 deleting it would leave them behind. Its persistentVolumeClaimRetentionPolicy \
                 (whenDeleted: Delete) makes the StatefulSet controller set that owner; if it \
                 does not, delete the claims (kubectl delete pvc -n {namespace} {}) and the \
                 resize goes on",
                unowned.join(", "),
                unowned.join(" ")
            ),
        }
    });
    pending.unowned = unowned;
    Step {
        apply: false,
        pending: Some(pending),
        event,
    }
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
    let set_uid = sts.metadata.uid.as_deref();
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
            let owned =
                c.metadata.owner_references.iter().flatten().any(|owner| {
                    owner.controller == Some(true) && Some(owner.uid.as_str()) == set_uid
                });
            Some(Claim {
                bound: c.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound"),
                storage_class: c.spec.as_ref().and_then(|s| s.storage_class_name.clone()),
                name: claim_name,
                owned,
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

/// Sets the StatefulSet's `persistentVolumeClaimRetentionPolicy.whenDeleted` to `Retain`, so its
/// controller removes itself from its claims' owners.
async fn retain_claims(client: &Client, namespace: &str, name: &str) -> Result<(), kube::Error> {
    let api: Api<StatefulSet> = Api::namespaced(client.clone(), namespace);
    let patch = serde_json::json!({
        "spec": {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain"}}
    });
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map(|_| ())
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
            owned: true,
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
    fn a_recreation_waits_for_owned_claims_and_warns_once_when_that_lasts() {
        let unowned = vec!["spill-orders-capture-0".to_owned()];
        let first = await_owner("sales", "orders-capture", unowned.clone(), None);
        assert!(!first.apply);
        assert!(first.event.is_none(), "no warning at once");
        let pending = first.pending.expect("held");
        assert_eq!(pending.unowned, unowned);
        assert!(pending.claims.is_empty(), "nothing deleted yet");

        let long_ago = Pending {
            since: Instant::now()
                .checked_sub(RESIZE_PATIENCE + Duration::from_secs(1))
                .expect("the clock reaches back"),
            ..pending
        };
        let lasting = await_owner("sales", "orders-capture", unowned.clone(), Some(long_ago));
        let warning = lasting.event.expect("a warning after the patience");
        assert!(warning.warning);
        assert_eq!(warning.reason, SPILL_CLAIM_NOT_OWNED);
        assert!(
            warning
                .note
                .contains("kubectl delete pvc -n sales spill-orders-capture-0"),
            "{}",
            warning.note
        );
        let again = await_owner("sales", "orders-capture", unowned, lasting.pending);
        assert!(again.event.is_none(), "warned once");
        assert!(again.pending.is_some_and(|p| p.warned));
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
