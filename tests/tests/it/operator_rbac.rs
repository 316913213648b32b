//! The operator under exactly the permissions of `operator/rbac/`: a ServiceAccount gets the
//! ClusterRole, the leader-election Role and their bindings from those files (renamed and moved
//! into the test's namespace), and the operator runs in this process as that ServiceAccount
//! (impersonation), leader election included.
//!
//! * With the rules as written, a full reconcile of the sample OracleCapture succeeds: the Lease is
//!   taken, all four children appear, the status is written for the current generation, the
//!   kubelet's `FailedMount` Event about the pod (posted here as the kubelet would) becomes a
//!   Warning Event, and no reconcile fails.
//! * No rule of either install (these files, the chart's copy) grants anything on Secrets.
//! * With one verb taken away (`patch` on StatefulSets) the same reconcile fails with a forbidden
//!   error, so the test would notice a rule that is missing.
//! * In the namespace-scoped install (the ClusterRole bound by a RoleBinding), a spill recreation
//!   works, without `delete` on claims: they go with their StatefulSet.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Pod, Service, ServiceAccount};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use redoline_crds::OracleCapture;
use redoline_operator::leader::{LeaderError, LeaderSettings, RoleCell};
use redoline_operator::metrics::{Metrics, Registry};
use redoline_tests::k8s::{FIELD_MANAGER, KubeEnv, TestNamespace};
use redoline_tests::operator::{self, NAME, event_with_reason};
use redoline_tests::wait;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const RULES: &str = include_str!("../../../operator/rbac/clusterrole.yaml");
const CHART_RULES: &str = include_str!("../../../charts/redoline/files/rbac/clusterrole.yaml");
const BINDINGS: &str = include_str!("../../../operator/rbac/bindings.yaml");
const ACCOUNT: &str = "redoline-operator";
const WAIT: Duration = Duration::from_secs(60);

/// The documents of a multi-document YAML file.
fn documents(text: &str) -> Vec<serde_json::Value> {
    serde_norway::Deserializer::from_str(text)
        .map(|doc| serde_json::Value::deserialize(doc).expect("YAML document"))
        .collect()
}

fn of_kind<T: serde::de::DeserializeOwned>(docs: &[serde_json::Value], kind: &str) -> T {
    let doc = docs
        .iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in operator/rbac"));
    serde_json::from_value(doc.clone()).expect(kind)
}

fn named<T: serde::de::DeserializeOwned>(docs: &[serde_json::Value], kind: &str, name: &str) -> T {
    let doc = docs
        .iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in operator/rbac"));
    serde_json::from_value(doc.clone()).expect(kind)
}

/// The objects of `operator/rbac/`, for a ServiceAccount in `namespace`: cluster-scoped names get
/// the namespace as suffix so that tests do not share them.
struct Rbac {
    cluster_role: ClusterRole,
    /// The cluster-scoped reads (StorageClasses), always bound cluster-wide.
    cluster_reads: ClusterRole,
    role: Role,
    service_account: ServiceAccount,
    cluster_role_binding: ClusterRoleBinding,
    /// The namespace-scoped install binds the ClusterRole with this RoleBinding instead.
    scoped_binding: Option<RoleBinding>,
    cluster_reads_binding: ClusterRoleBinding,
    role_binding: RoleBinding,
}

impl Rbac {
    fn load(namespace: &str) -> Rbac {
        let rules = documents(RULES);
        let bindings = documents(BINDINGS);
        let cluster_name = format!("redoline-operator-{namespace}");
        let mut cluster_role: ClusterRole = named(&rules, "ClusterRole", "redoline-operator");
        cluster_role.metadata.name = Some(cluster_name.clone());
        let reads_name = format!("{cluster_name}-cluster");
        let mut cluster_reads: ClusterRole =
            named(&rules, "ClusterRole", "redoline-operator-cluster");
        cluster_reads.metadata.name = Some(reads_name.clone());
        let mut cluster_reads_binding: ClusterRoleBinding =
            named(&bindings, "ClusterRoleBinding", "redoline-operator-cluster");
        cluster_reads_binding.metadata.name = Some(reads_name.clone());
        cluster_reads_binding.role_ref.name = reads_name;
        let mut role: Role = of_kind(&rules, "Role");
        role.metadata.namespace = Some(namespace.to_owned());
        let mut service_account: ServiceAccount = of_kind(&bindings, "ServiceAccount");
        service_account.metadata.namespace = Some(namespace.to_owned());
        let mut cluster_role_binding: ClusterRoleBinding =
            named(&bindings, "ClusterRoleBinding", "redoline-operator");
        cluster_role_binding.metadata.name = Some(cluster_name.clone());
        cluster_role_binding.role_ref.name = cluster_name;
        let mut role_binding: RoleBinding = of_kind(&bindings, "RoleBinding");
        role_binding.metadata.namespace = Some(namespace.to_owned());
        for subject in cluster_role_binding
            .subjects
            .iter_mut()
            .chain(cluster_reads_binding.subjects.iter_mut())
            .chain(role_binding.subjects.iter_mut())
            .flatten()
        {
            assert_eq!(subject.name, ACCOUNT);
            subject.namespace = Some(namespace.to_owned());
        }
        Rbac {
            cluster_role,
            cluster_reads,
            role,
            service_account,
            cluster_role_binding,
            scoped_binding: None,
            cluster_reads_binding,
            role_binding,
        }
    }

    /// The namespace-scoped install (the chart's `watchNamespaces`): the ClusterRole is bound in
    /// `namespace` only; the cluster-scoped reads keep their ClusterRoleBinding.
    fn namespace_scoped(mut self, namespace: &str) -> Rbac {
        self.scoped_binding = Some(RoleBinding {
            metadata: kube::api::ObjectMeta {
                name: Some("redoline-operator-watched".into()),
                namespace: Some(namespace.to_owned()),
                ..Default::default()
            },
            role_ref: self.cluster_role_binding.role_ref.clone(),
            subjects: self.cluster_role_binding.subjects.clone(),
        });
        self
    }

    /// Takes `verb` away from the ClusterRole's rule for `resource`.
    fn without(mut self, resource: &str, verb: &str) -> Rbac {
        let rule = self
            .cluster_role
            .rules
            .iter_mut()
            .flatten()
            .find(|r| r.resources.iter().flatten().any(|r| r == resource))
            .unwrap_or_else(|| panic!("no rule for {resource}"));
        let before = rule.verbs.len();
        rule.verbs.retain(|v| v != verb);
        assert_eq!(rule.verbs.len(), before - 1, "{resource} has no {verb}");
        self
    }

    async fn apply(&self, admin: &Client, namespace: &str) {
        async fn ssa<K>(api: Api<K>, object: &K)
        where
            K: kube::Resource<DynamicType = ()>
                + Clone
                + std::fmt::Debug
                + serde::Serialize
                + serde::de::DeserializeOwned,
        {
            operator::apply(&api, FIELD_MANAGER, object)
                .await
                .unwrap_or_else(|e| panic!("applying: {e:#}"));
        }
        ssa(Api::all(admin.clone()), &self.cluster_role).await;
        ssa(Api::all(admin.clone()), &self.cluster_reads).await;
        ssa(Api::namespaced(admin.clone(), namespace), &self.role).await;
        ssa(
            Api::namespaced(admin.clone(), namespace),
            &self.service_account,
        )
        .await;
        match &self.scoped_binding {
            Some(binding) => ssa(Api::namespaced(admin.clone(), namespace), binding).await,
            None => ssa(Api::all(admin.clone()), &self.cluster_role_binding).await,
        }
        ssa(Api::all(admin.clone()), &self.cluster_reads_binding).await;
        ssa(
            Api::namespaced(admin.clone(), namespace),
            &self.role_binding,
        )
        .await;
    }

    async fn delete(&self, admin: &Client) {
        for role in [&self.cluster_role, &self.cluster_reads] {
            let name = role.metadata.name.clone().expect("name");
            let _ = Api::<ClusterRoleBinding>::all(admin.clone())
                .delete(&name, &DeleteParams::default())
                .await;
            let _ = Api::<ClusterRole>::all(admin.clone())
                .delete(&name, &DeleteParams::default())
                .await;
        }
    }
}

/// A namespace with the sample's Secrets and the operator's RBAC, and the operator's client.
struct Setup {
    admin: Client,
    operator: Client,
    ns: TestNamespace,
    rbac: Rbac,
}

async fn setup(test: &str, adjust: impl FnOnce(Rbac) -> Rbac) -> Setup {
    let env = KubeEnv::shared().expect("control plane");
    let (admin, ns) = operator::admin_and_namespace(test)
        .await
        .expect("CRD and namespace");
    let rbac = adjust(Rbac::load(&ns.name));
    rbac.apply(&admin, &ns.name).await;
    operator::create_sample_secrets(&admin, &ns.name)
        .await
        .expect("Secret");
    let operator = env
        .client_as(&format!("system:serviceaccount:{}:{ACCOUNT}", ns.name))
        .await
        .expect("impersonating client");
    // The RBAC authorizer learns about new bindings through a watch: wait until it has.
    let own: Api<OracleCapture> = Api::namespaced(operator.clone(), &ns.name);
    let own = &own;
    wait::eventually(
        "the RBAC rules to take effect",
        WAIT,
        Duration::from_millis(100),
        || async move { own.list(&ListParams::default().limit(1)).await.ok() },
    )
    .await
    .expect("RBAC never took effect");
    Setup {
        admin,
        operator,
        ns,
        rbac,
    }
}

/// The operator, elected through the Lease in the test namespace, as the ServiceAccount.
struct Running {
    metrics: Arc<Metrics>,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), LeaderError>>,
}

fn start(setup: &Setup) -> Running {
    let metrics = Metrics::new(&Registry::new()).expect("metrics");
    let mut settings = operator::controller_settings(&setup.ns.name);
    settings.instance = Some("rbac-test".into());
    settings.metrics = Some(metrics.clone());
    let mut election = LeaderSettings::new(setup.ns.name.clone(), "rbac-test".into());
    election.retry_period = Duration::from_millis(500);
    let (stop, task) = operator::elected(
        setup.operator.clone(),
        settings,
        election,
        RoleCell::default(),
        Some(metrics.clone()),
    );
    Running {
        metrics,
        stop,
        task,
    }
}

async fn create_sample(setup: &Setup) {
    operator::create_sample(&setup.admin, &setup.ns.name)
        .await
        .expect("OracleCapture");
}

async fn wait_for<T, F, Fut>(what: &str, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    wait::eventually(what, WAIT, Duration::from_millis(200), check)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Waits for an Event about the sample with this reason.
async fn wait_for_event(setup: &Setup, reason: &str) -> Event {
    wait_for(&format!("an Event {reason}"), || async {
        event_with_reason(&setup.admin, &setup.ns.name, reason)
            .await
            .expect("events")
    })
    .await
}

async fn finish(setup: Setup, running: Running) {
    let _ = running.stop.send(());
    let ended = tokio::time::timeout(Duration::from_secs(30), running.task)
        .await
        .expect("the operator stops")
        .expect("task");
    assert!(ended.is_ok(), "{ended:?}");
    setup.rbac.delete(&setup.admin).await;
    setup.ns.delete().await;
}

/// The operator reads no Secret, so neither install may grant a verb on them, by name or by a
/// wildcard.
#[test]
fn no_rule_of_either_install_touches_secrets() {
    assert_eq!(
        RULES, CHART_RULES,
        "the chart's rules are a copy of operator/rbac/"
    );
    let mut resources = Vec::new();
    for doc in documents(RULES) {
        for rule in doc["rules"].as_array().into_iter().flatten() {
            let groups: Vec<&str> = rule["apiGroups"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g.as_str().unwrap())
                .collect();
            for resource in rule["resources"].as_array().unwrap() {
                let resource = resource.as_str().unwrap();
                resources.push(resource.to_owned());
                let core = groups.iter().any(|g| g.is_empty() || *g == "*");
                assert!(
                    !(core && (resource == "secrets" || resource == "*")),
                    "a rule grants {:?} on {resource} in {groups:?}",
                    rule["verbs"]
                );
            }
        }
    }
    assert!(resources.iter().any(|r| r == "events"), "{resources:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_reconciles_under_exactly_its_rbac() {
    let setup = setup("operator-rbac-full", |rbac| rbac).await;
    let ns = setup.ns.name.clone();
    let admin = setup.admin.clone();
    let running = start(&setup);
    create_sample(&setup).await;

    let leases: Api<Lease> = Api::namespaced(admin.clone(), &ns);
    let leases = &leases;
    wait_for("the Lease", || async move {
        let holder = leases.get_opt("redoline-operator").await.ok()??.spec?;
        (holder.holder_identity.as_deref() == Some("rbac-test")).then_some(())
    })
    .await;
    let names = (&admin, ns.as_str());
    wait_for("the StatefulSet", || async move {
        Api::<StatefulSet>::namespaced(names.0.clone(), names.1)
            .get_opt("orders-capture")
            .await
            .expect("get")
    })
    .await;
    let api = |admin: &Client| -> (Api<ConfigMap>, Api<Service>, Api<ServiceAccount>) {
        (
            Api::namespaced(admin.clone(), &ns),
            Api::namespaced(admin.clone(), &ns),
            Api::namespaced(admin.clone(), &ns),
        )
    };
    let (config_maps, services, accounts) = api(&admin);
    assert!(
        config_maps
            .get_opt("orders-capture-config")
            .await
            .unwrap()
            .is_some()
    );
    assert!(services.get_opt("orders-capture").await.unwrap().is_some());
    assert!(accounts.get_opt("orders-capture").await.unwrap().is_some());
    let captures: Api<OracleCapture> = Api::namespaced(admin.clone(), &ns);
    let captures = &captures;
    let capture = wait_for("a status for the current generation", || async move {
        let capture = captures.get(NAME).await.expect("OracleCapture");
        let status = capture.status.as_ref()?;
        (status.observed_generation == capture.metadata.generation && !status.conditions.is_empty())
            .then_some(capture)
    })
    .await;
    assert!(
        capture
            .status
            .as_ref()
            .unwrap()
            .condition("Ready")
            .is_some()
    );

    // Events: the kubelet's FailedMount Event about the pod is read (list and watch on events)
    // and gives a Warning Event (publishing failures are only logged, so the Event's existence is
    // what shows both permissions).
    let pods: Api<Pod> = Api::namespaced(admin.clone(), &ns);
    let pods = &pods;
    let pod = wait_for("the capture pod", || async move {
        pods.get_opt("orders-capture-0").await.expect("get pod")
    })
    .await;
    operator::post_failed_mount(
        &admin,
        &pod,
        "MountVolume.SetUp failed for volume \"database-credentials\" : couldn't find key password in Secret x/orders-db-cdc",
        k8s_openapi::jiff::Timestamp::now(),
    )
    .await
    .expect("FailedMount posted");
    wait_for_event(&setup, "SecretKeyMissing").await;

    let text = running.metrics.render().expect("render");
    assert!(
        !text.contains("redoline_operator_reconcile_errors_total{"),
        "a reconcile failed under the RBAC rules:\n{text}"
    );
    finish(setup, running).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_patch_on_statefulsets_the_reconcile_is_forbidden() {
    let setup = setup("operator-rbac-missing-verb", |rbac| {
        rbac.without("statefulsets", "patch")
    })
    .await;
    let ns = setup.ns.name.clone();
    let admin = setup.admin.clone();
    let running = start(&setup);
    create_sample(&setup).await;

    let event = wait_for_event(&setup, "ApplyFailed").await;
    let note = event.note.unwrap_or_default();
    assert!(note.contains("forbidden"), "{note}");
    assert!(note.contains("StatefulSet"), "{note}");
    let text = running.metrics.render().expect("render");
    assert!(
        text.contains(r#"redoline_operator_reconcile_errors_total{reason="ApplyFailed"}"#),
        "{text}"
    );
    assert!(
        Api::<StatefulSet>::namespaced(admin.clone(), &ns)
            .get_opt("orders-capture")
            .await
            .unwrap()
            .is_none()
    );
    finish(setup, running).await;
}

/// A spill recreation under exactly the RBAC rules of the namespace-scoped install, which grant
/// no `delete` on claims and reach StorageClasses only through the cluster-scoped reads' binding:
/// the operator deletes the StatefulSet, the claim goes with it (the StatefulSet owns it), and
/// the new StatefulSet's pod gets a new claim of the new size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spill_recreation_in_the_namespace_scoped_install_needs_no_delete_on_claims() {
    const CLAIM: &str = "spill-orders-capture-0";
    let setup = setup("operator-rbac-resize", |rbac| {
        let namespace = rbac.role.metadata.namespace.clone().unwrap_or_default();
        rbac.namespace_scoped(&namespace)
    })
    .await;
    let ns = setup.ns.name.clone();
    let admin = setup.admin.clone();
    let running = start(&setup);
    create_sample(&setup).await;

    let claims: Api<PersistentVolumeClaim> = Api::namespaced(admin.clone(), &ns);
    let claims = &claims;
    let old_claim = wait_for("the spill claim, owned by its StatefulSet", || async move {
        let claim = claims.get_opt(CLAIM).await.expect("get")?;
        let owned = claim
            .metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.kind == "StatefulSet" && o.controller == Some(true));
        owned.then_some(claim)
    })
    .await;
    let sets: Api<StatefulSet> = Api::namespaced(admin.clone(), &ns);
    let old_set = sets.get("orders-capture").await.expect("StatefulSet");

    let captures: Api<OracleCapture> = Api::namespaced(admin.clone(), &ns);
    captures
        .patch(
            NAME,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"buffer": {"spill": {"size": "30Gi"}}}})),
        )
        .await
        .expect("spill size patched");
    let event = wait_for_event(&setup, "SpillVolumeRecreated").await;
    let note = event.note.unwrap_or_default();
    assert!(note.contains(CLAIM), "{note}");
    let old_uid = &old_claim.metadata.uid;
    let new_claim = wait_for("a new claim of 30Gi", || async move {
        let claim = claims.get_opt(CLAIM).await.expect("get")?;
        let bytes = operator::requested_storage(&claim)?;
        (&claim.metadata.uid != old_uid && bytes == 30 << 30).then_some(claim)
    })
    .await;
    assert!(new_claim.metadata.deletion_timestamp.is_none());
    let new_set = sets.get("orders-capture").await.expect("StatefulSet");
    assert_ne!(new_set.metadata.uid, old_set.metadata.uid);

    let text = running.metrics.render().expect("render");
    assert!(
        !text.contains("redoline_operator_reconcile_errors_total{"),
        "a reconcile failed under the RBAC rules:\n{text}"
    );
    finish(setup, running).await;
}
