//! A new `spec.buffer.spill.size` against a real control plane, both ways the operator handles it
//! (see `operator/src/controller/resize.rs`):
//!
//! - expansion: the spill claim's StorageClass allows expansion and the claim is Bound. There is
//!   no provisioner, so the test makes a PersistentVolume pre-bound to the claim the StatefulSet
//!   will create, and kube-controller-manager's PV controller binds them. The claim keeps its uid
//!   and gets the new request; the StatefulSet is deleted with `propagationPolicy: Orphan` and
//!   its successor takes the pod over.
//!   The new StatefulSet adopts the claim, so shrinking it afterwards recreates it.
//! - recreation: a StorageClass without `allowVolumeExpansion`, and an expandable class whose claim
//!   is not Bound (the API server only lets bound claims grow). The claim goes with its StatefulSet
//!   (the operator does not delete claims) and comes back with a new uid and the new size.
//!
//! Every wait is bounded by [`WAIT`].

// Test files may panic: a failed expectation here is a failed test.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::ops::Deref;
use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use redoline_operator::controller::resize::{
    SPILL_VOLUME_EXPANDED, SPILL_VOLUME_RECREATED, SpillTemplate,
};
use redoline_tests::operator::{self, NAME};
use redoline_tests::wait;
use serde_json::json;

const POD: &str = "orders-capture-0";
const CLAIM: &str = "spill-orders-capture-0";
const WAIT: Duration = Duration::from_secs(90);
const POLL: Duration = Duration::from_millis(250);
const GI: u64 = 1 << 30;

/// A controller running in this process over one fresh namespace.
struct Harness {
    h: operator::Harness,
    /// Cluster-scoped objects to delete at the end.
    classes: Vec<String>,
    volumes: Vec<String>,
}

impl Deref for Harness {
    type Target = operator::Harness;

    fn deref(&self) -> &operator::Harness {
        &self.h
    }
}

impl Harness {
    async fn start(test: &str) -> Harness {
        let h = operator::Harness::start(test, |settings| {
            settings.status_port = 1;
            settings.status_timeout = Duration::from_secs(1);
        })
        .await
        .expect("controller started over a fresh namespace");
        Harness {
            h,
            classes: Vec::new(),
            volumes: Vec::new(),
        }
    }

    /// A StorageClass named after the namespace (StorageClasses are cluster-wide) without a
    /// provisioner, binding claims at once.
    async fn storage_class(&mut self, suffix: &str, expandable: bool) -> String {
        let name = format!("{}-{suffix}", self.ns.name);
        let class: StorageClass = serde_json::from_value(json!({
            "metadata": {"name": name},
            "provisioner": "kubernetes.io/no-provisioner",
            "allowVolumeExpansion": expandable,
            "volumeBindingMode": "Immediate",
            "reclaimPolicy": "Retain",
        }))
        .unwrap();
        Api::<StorageClass>::all(self.client.clone())
            .create(&PostParams::default(), &class)
            .await
            .expect("StorageClass created");
        self.classes.push(name.clone());
        name
    }

    /// A volume of `size` in `class`, reserved for the capture's spill claim.
    async fn volume_for_the_claim(&mut self, class: &str, size: &str) {
        let name = format!("{}-spill", self.ns.name);
        let volume: PersistentVolume = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": size},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": class,
                "persistentVolumeReclaimPolicy": "Retain",
                "hostPath": {"path": format!("/tmp/{name}")},
                "claimRef": {"namespace": self.ns.name, "name": CLAIM},
            },
        }))
        .unwrap();
        Api::<PersistentVolume>::all(self.client.clone())
            .create(&PostParams::default(), &volume)
            .await
            .expect("PersistentVolume created");
        self.volumes.push(name);
    }

    async fn create_secrets(&self) {
        operator::create_sample_secrets(&self.client, &self.ns.name)
            .await
            .expect("Secret created");
    }

    /// The sample, its spill claims in `class`.
    async fn create_capture(&self, class: &str) {
        let mut sample = operator::sample_in(&self.ns.name).expect("sample");
        sample.spec.buffer.spill.storage_class_name = Some(class.to_owned());
        operator::create_capture(&self.client, &sample)
            .await
            .expect("OracleCapture created");
    }

    async fn set_spill_size(&self, size: &str) -> i64 {
        self.h
            .patch_spec(json!({"buffer": {"spill": {"size": size}}}))
            .await
            .expect("spec patched")
    }

    /// Polls `get` until it gives `Some`; on timeout fails naming `what`.
    async fn eventually<T, F, Fut>(&self, what: &str, get: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Option<T>>,
    {
        wait::eventually(what, WAIT, POLL, get)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }

    async fn claim_where(
        &self,
        what: &str,
        accept: impl Fn(&PersistentVolumeClaim) -> bool,
    ) -> PersistentVolumeClaim {
        let claims = self.api::<PersistentVolumeClaim>();
        self.eventually(what, || async {
            claims
                .get_opt(CLAIM)
                .await
                .expect("get claim")
                .filter(|c| accept(c))
        })
        .await
    }

    async fn pod(&self) -> Pod {
        let pods = self.api::<Pod>();
        self.eventually("the capture pod", || async {
            pods.get_opt(POD).await.expect("get pod")
        })
        .await
    }

    /// The StatefulSet once its spill template asks for `bytes`.
    async fn stateful_set_with_spill(&self, bytes: u64) -> StatefulSet {
        let api = self.api::<StatefulSet>();
        self.eventually("the StatefulSet with the new spill size", || async {
            api.get_opt("orders-capture")
                .await
                .expect("get StatefulSet")
                .filter(|s| s.metadata.deletion_timestamp.is_none())
                .filter(|s| SpillTemplate::of(s).and_then(|t| t.bytes) == Some(bytes))
        })
        .await
    }

    async fn event(&self, reason: &str) -> Event {
        self.eventually(&format!("an Event {reason}"), || async {
            self.event_with_reason(reason).await.expect("events")
        })
        .await
    }

    /// Waits until the status describes `generation` and nothing is stalled.
    async fn settled(&self, generation: i64) {
        let captures = self.captures.clone();
        self.eventually("a current status without a stall", || async {
            let capture = captures.get(NAME).await.expect("OracleCapture");
            let status = capture.status?;
            let stalled = status.condition("Stalled")?;
            (status.observed_generation == Some(generation) && stalled.status == "False")
                .then_some(())
        })
        .await;
    }

    async fn finish(self) {
        let client = self.client.clone();
        self.h.finish().await.expect("controller stopped");
        let classes = Api::<StorageClass>::all(client.clone());
        for name in &self.classes {
            let _ = classes.delete(name, &DeleteParams::default()).await;
        }
        let volumes = Api::<PersistentVolume>::all(client);
        for name in &self.volumes {
            let _ = volumes.delete(name, &DeleteParams::default()).await;
        }
    }
}

fn phase(claim: &PersistentVolumeClaim) -> &str {
    claim
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_claim_on_an_expandable_class_is_expanded_in_place() {
    let mut h = Harness::start("operator-resize-expand").await;
    let class = h.storage_class("expandable", true).await;
    h.volume_for_the_claim(&class, "24Gi").await;
    h.create_secrets().await;
    h.create_capture(&class).await;

    let bound = h
        .claim_where("the spill claim Bound", |c| phase(c) == "Bound")
        .await;
    h.pod().await;
    let old_sts = h.stateful_set_with_spill(24 * GI).await;

    let generation = h.set_spill_size("30Gi").await;
    let event = h.event(SPILL_VOLUME_EXPANDED).await;
    assert_eq!(event.type_.as_deref(), Some("Normal"));
    let note = event.note.unwrap_or_default();
    assert!(note.contains(CLAIM), "{note}");

    // The same claim, asking for the new size.
    let expanded = h
        .claim_where("the claim's new request", |c| {
            operator::requested_storage(c) == Some(30 * GI)
        })
        .await;
    assert_eq!(expanded.metadata.uid, bound.metadata.uid);
    // A new StatefulSet with the new template, owning the pod that never stopped.
    let new_sts = h.stateful_set_with_spill(30 * GI).await;
    assert_ne!(new_sts.metadata.uid, old_sts.metadata.uid);
    // The pod was orphaned, not deleted, and the new StatefulSet takes it over. (The rendered
    // config carries the spill size, so its hash on the pod template changes too and the
    // StatefulSet then rolls the pod as for any config change; the claim stays the same.)
    let pods = h.api::<Pod>();
    h.eventually("the capture pod owned by the new StatefulSet", || async {
        pods.get_opt(POD).await.expect("get pod").filter(|p| {
            p.metadata.owner_references.as_ref().is_some_and(|o| {
                o.iter()
                    .any(|o| Some(&o.uid) == new_sts.metadata.uid.as_ref())
            })
        })
    })
    .await;
    h.settled(generation).await;

    // The new StatefulSet adopts the claim too, so a later recreation (a smaller size cannot be
    // expanded) deletes it with the StatefulSet.
    let new_uid = new_sts.metadata.uid.clone();
    let adopted = h
        .claim_where("the claim owned by the new StatefulSet", |c| {
            c.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.controller == Some(true) && Some(&o.uid) == new_uid.as_ref())
        })
        .await;
    assert_eq!(adopted.metadata.uid, bound.metadata.uid);
    let generation = h.set_spill_size("22Gi").await;
    let event = h.event(SPILL_VOLUME_RECREATED).await;
    let note = event.note.unwrap_or_default();
    assert!(note.contains("shrinks"), "{note}");
    h.claim_where("a new claim of the smaller size", |c| {
        c.metadata.uid != bound.metadata.uid && operator::requested_storage(c) == Some(22 * GI)
    })
    .await;
    h.stateful_set_with_spill(22 * GI).await;
    h.settled(generation).await;
    h.finish().await;
}

/// Resizes with a claim that cannot be expanded and checks it was recreated; `why` is part of
/// the Event's note.
async fn recreated(test: &str, expandable: bool, why: &str) {
    let mut h = Harness::start(test).await;
    let class = h.storage_class("spill", expandable).await;
    h.create_secrets().await;
    h.create_capture(&class).await;
    // No volume: the claim stays Pending.
    let before = h.claim_where("the spill claim", |_| true).await;
    assert_ne!(phase(&before), "Bound");
    let old_sts = h.stateful_set_with_spill(24 * GI).await;
    if expandable {
        // What the operator relies on: the API server refuses to grow a claim that is not bound,
        // whatever its class allows.
        let refused = h
            .api::<PersistentVolumeClaim>()
            .patch(
                CLAIM,
                &PatchParams::default().dry_run(),
                &Patch::Merge(json!({"spec": {"resources": {"requests": {"storage": "30Gi"}}}})),
            )
            .await
            .expect_err("an unbound claim cannot grow");
        eprintln!("growing an unbound claim: {refused}");
        assert!(
            matches!(&refused, kube::Error::Api(s) if s.code == 422 && s.message.contains("bound claims")),
            "{refused}"
        );
    }

    let generation = h.set_spill_size("30Gi").await;
    let event = h.event(SPILL_VOLUME_RECREATED).await;
    assert_eq!(event.type_.as_deref(), Some("Normal"));
    let note = event.note.unwrap_or_default();
    assert!(note.contains(why), "{note}");

    let new_sts = h.stateful_set_with_spill(30 * GI).await;
    assert_ne!(new_sts.metadata.uid, old_sts.metadata.uid);
    // A new claim (kube-controller-manager makes it for the new pod) of the new size.
    let after = h
        .claim_where("a new claim of the new size", |c| {
            c.metadata.uid != before.metadata.uid && operator::requested_storage(c) == Some(30 * GI)
        })
        .await;
    assert!(after.metadata.deletion_timestamp.is_none());
    h.settled(generation).await;
    h.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_class_without_expansion_recreates_the_claim() {
    recreated(
        "operator-resize-fixed",
        false,
        "does not allow volume expansion",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unbound_claim_is_recreated_even_on_an_expandable_class() {
    recreated("operator-resize-unbound", true, "is not Bound").await;
}
