//! The test control plane (`env/k8s.sh`, `redoline_tests::k8s`) is a real one: server-side apply
//! conflicts, watches, the status subresource of a CRD, controllers of kube-controller-manager and
//! RBAC all behave as in a cluster.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Pod, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
    WatchEvent, WatchParams,
};
use kube::core::Request;
use redoline_tests::k8s::{KubeEnv, apply_crd};
use redoline_tests::wait;
use serde_json::json;

const STEP: Duration = Duration::from_secs(60);

/// Bounds one step of a test.
async fn within<T>(what: &str, fut: impl Future<Output = T>) -> anyhow::Result<T> {
    tokio::time::timeout(STEP, fut)
        .await
        .map_err(|_| anyhow::anyhow!("timed out after {STEP:?}: {what}"))
}

/// Polls `probe` until it yields `Some`, for at most [`STEP`]; a probe that fails ends it.
async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = anyhow::Result<Option<T>>>,
{
    // `Some(Err(_))` stops the polling as `Some(Ok(_))` does: the error is the answer.
    wait::eventually(what, STEP, Duration::from_millis(100), || {
        let probed = probe();
        async move { probed.await.transpose() }
    })
    .await?
}

fn api_code(err: &kube::Error) -> Option<u16> {
    match err {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

fn config_map(name: &str, data: &[(&str, &str)]) -> serde_json::Value {
    let data: BTreeMap<_, _> = data.iter().copied().collect();
    json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": name }, "data": data })
}

#[tokio::test]
async fn server_side_apply_reports_conflicts_between_managers() {
    let env = KubeEnv::shared().unwrap();
    let ns = env.namespace("ssa-conflicts").await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(env.client().await.unwrap(), &ns.name);

    let alpha = PatchParams::apply("alpha");
    cms.patch(
        "shared",
        &alpha,
        &Patch::Apply(config_map("shared", &[("key", "from-alpha"), ("a", "1")])),
    )
    .await
    .unwrap();

    // Another manager setting the same key to another value, unforced: 409 Conflict, nothing changes.
    let beta = config_map("shared", &[("key", "from-beta")]);
    let err = cms
        .patch("shared", &PatchParams::apply("beta"), &Patch::Apply(&beta))
        .await
        .unwrap_err();
    assert_eq!(api_code(&err), Some(409), "{err}");
    let kube::Error::Api(status) = &err else {
        unreachable!()
    };
    assert_eq!(status.reason, "Conflict", "{status:?}");
    assert!(
        status.message.contains("alpha"),
        "the conflict names the owner: {}",
        status.message
    );
    let cm = cms.get("shared").await.unwrap();
    assert_eq!(cm.data.unwrap()["key"], "from-alpha");

    // Forced, it wins and takes the field over; alpha keeps what nobody contested.
    cms.patch(
        "shared",
        &PatchParams::apply("beta").force(),
        &Patch::Apply(&beta),
    )
    .await
    .unwrap();
    let cm = cms.get("shared").await.unwrap();
    let data = cm.data.clone().unwrap();
    assert_eq!(data["key"], "from-beta");
    assert_eq!(data["a"], "1");
    let managers: Vec<_> = cm
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| Some((m.manager?, m.fields_v1?.0.to_string())))
        .collect();
    let owns_key = |manager: &str| {
        managers
            .iter()
            .any(|(m, f)| m == manager && f.contains("f:key"))
    };
    assert!(owns_key("beta") && !owns_key("alpha"), "{managers:?}");

    ns.delete().await;
}

#[tokio::test]
async fn watches_see_additions_and_modifications() {
    let env = KubeEnv::shared().unwrap();
    let ns = env.namespace("watch").await.unwrap();
    let client = env.client().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns.name);

    // Watch from "now", so that neither this nor the namespace's kube-root-ca.crt is replayed. The
    // server ends the watch after a few seconds, and the whole event stream is the response body:
    // the watch protocol itself, one JSON event per line.
    let version = cms
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let request = Request::new(format!("/api/v1/namespaces/{}/configmaps", ns.name))
        .watch(&WatchParams::default().timeout(4), &version)
        .unwrap();
    let watch = tokio::spawn(async move { client.request_text(request).await });

    let manager = PatchParams::apply("watch-test");
    cms.patch(
        "watched",
        &manager,
        &Patch::Apply(config_map("watched", &[("n", "1")])),
    )
    .await
    .unwrap();
    cms.patch(
        "watched",
        &manager,
        &Patch::Apply(config_map("watched", &[("n", "2")])),
    )
    .await
    .unwrap();

    let body = within("the watch to end", watch)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let seen: Vec<_> = body
        .lines()
        .filter(|line| !line.trim().is_empty())
        .filter_map(
            |line| match serde_json::from_str::<WatchEvent<ConfigMap>>(line).unwrap() {
                WatchEvent::Added(cm) => Some(("ADDED", cm)),
                WatchEvent::Modified(cm) => Some(("MODIFIED", cm)),
                WatchEvent::Bookmark(_) => None,
                other => panic!("unexpected watch event {other:?}"),
            },
        )
        .filter(|(_, cm)| cm.metadata.name.as_deref() == Some("watched"))
        .map(|(kind, cm)| (kind, cm.data.unwrap_or_default()["n"].clone()))
        .collect();
    assert_eq!(
        seen,
        [("ADDED", "1".to_owned()), ("MODIFIED", "2".to_owned())],
        "{body}"
    );

    ns.delete().await;
}

fn widget_crd() -> serde_json::Result<CustomResourceDefinition> {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": { "name": "widgets.tests.redoline.io" },
        "spec": {
            "group": "tests.redoline.io",
            "names": { "kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList" },
            "scope": "Namespaced",
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "subresources": { "status": {} },
                "schema": { "openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": { "type": "object", "properties": { "size": { "type": "integer" } } },
                        "status": { "type": "object", "properties": { "phase": { "type": "string" } } }
                    }
                } }
            }]
        }
    }))
}

#[tokio::test]
async fn crds_get_established_and_have_a_status_subresource() {
    let env = KubeEnv::shared().unwrap();
    let client = env.client().await.unwrap();

    // The project's own CRD is accepted (structural schema, defaults) by a real API server.
    let crd = redoline_crds::crd();
    within("the OracleCapture CRD", apply_crd(&client, &crd))
        .await
        .unwrap()
        .unwrap();
    let crd = widget_crd().unwrap();
    within("the Widget CRD", apply_crd(&client, &crd))
        .await
        .unwrap()
        .unwrap();
    // Applying again changes nothing and is Established at once.
    within("the Widget CRD again", apply_crd(&client, &crd))
        .await
        .unwrap()
        .unwrap();

    let ns = env.namespace("status-subresource").await.unwrap();
    let gvk = GroupVersionKind::gvk("tests.redoline.io", "v1", "Widget");
    let widgets: Api<DynamicObject> =
        Api::namespaced_with(client, &ns.name, &ApiResource::from_gvk(&gvk));
    let widget = |size: i64, phase: &str| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "tests.redoline.io/v1", "kind": "Widget",
            "metadata": { "name": "w" },
            "spec": { "size": size }, "status": { "phase": phase }
        }))
        .unwrap()
    };

    // The main resource ignores status...
    let created = widgets
        .create(&PostParams::default(), &widget(1, "from-create"))
        .await
        .unwrap();
    assert_eq!(created.data.get("status"), None, "{created:?}");
    let generation = created.metadata.generation;

    // ...the status subresource ignores spec, and does not bump the generation.
    let status = PatchParams::apply("widget-status").force();
    let patched = widgets
        .patch_status("w", &status, &Patch::Apply(widget(99, "Ready")))
        .await
        .unwrap();
    assert_eq!(patched.data["status"]["phase"], "Ready");
    assert_eq!(patched.data["spec"]["size"], 1);
    assert_eq!(patched.metadata.generation, generation);

    let spec = PatchParams::apply("widget-spec").force();
    let patched = widgets
        .patch("w", &spec, &Patch::Apply(widget(2, "ignored")))
        .await
        .unwrap();
    assert_eq!(patched.data["spec"]["size"], 2);
    assert_eq!(patched.data["status"]["phase"], "Ready");
    assert_eq!(patched.metadata.generation, generation.map(|g| g + 1));

    ns.delete().await;
}

#[tokio::test]
async fn statefulsets_get_pods_and_volume_claims_from_the_controller_manager() {
    let env = KubeEnv::shared().unwrap();
    let ns = env.namespace("statefulset").await.unwrap();
    let client = env.client().await.unwrap();
    let sts: StatefulSet = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": { "name": "db" },
        "spec": {
            "serviceName": "db",
            "replicas": 1,
            "selector": { "matchLabels": { "app": "db" } },
            "template": {
                "metadata": { "labels": { "app": "db" } },
                // Never pulled: there is no node.
                "spec": { "containers": [{
                    "name": "db", "image": "registry.invalid/db:0",
                    "volumeMounts": [{ "name": "data", "mountPath": "/data" }]
                }] }
            },
            "volumeClaimTemplates": [{
                "metadata": { "name": "data" },
                "spec": { "accessModes": ["ReadWriteOnce"], "resources": { "requests": { "storage": "1Gi" } } }
            }]
        }
    }))
    .unwrap();
    Api::<StatefulSet>::namespaced(client.clone(), &ns.name)
        .create(&PostParams::default(), &sts)
        .await
        .unwrap();

    let pvcs: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &ns.name);
    let pvc = eventually("PVC data-db-0", || async {
        Ok(pvcs.get_opt("data-db-0").await?)
    })
    .await
    .unwrap();
    // No StorageClass, no PV: the binder leaves it Pending.
    assert_eq!(pvc.status.and_then(|s| s.phase).as_deref(), Some("Pending"));

    let pods: Api<Pod> = Api::namespaced(client, &ns.name);
    let pod = eventually("Pod db-0", || async { Ok(pods.get_opt("db-0").await?) })
        .await
        .unwrap();
    let owner = pod.metadata.owner_references.unwrap_or_default();
    assert!(
        owner
            .iter()
            .any(|o| o.kind == "StatefulSet" && o.name == "db"),
        "{owner:?}"
    );
    let volumes = pod.spec.unwrap().volumes.unwrap_or_default();
    assert!(
        volumes.iter().any(|v| v
            .persistent_volume_claim
            .as_ref()
            .is_some_and(|c| c.claim_name == "data-db-0")),
        "{volumes:?}"
    );
    // The only node is tainted and this Pod does not tolerate it: it is never bound.
    assert_eq!(pod.status.and_then(|s| s.phase).as_deref(), Some("Pending"));

    ns.delete().await;
}

#[tokio::test]
async fn rbac_is_enforced() {
    let env = KubeEnv::shared().unwrap();
    let ns = env.namespace("rbac").await.unwrap();
    let admin = env.client().await.unwrap();
    let account = "reader";
    Api::<ServiceAccount>::namespaced(admin.clone(), &ns.name)
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({ "metadata": { "name": account } })).unwrap(),
        )
        .await
        .unwrap();
    let user = format!("system:serviceaccount:{}:{account}", ns.name);

    // Without a binding: forbidden, by the API and by kubectl's view of it.
    let as_reader: Api<Secret> = Api::namespaced(env.client_as(&user).await.unwrap(), &ns.name);
    let err = as_reader.list(&ListParams::default()).await.unwrap_err();
    assert_eq!(api_code(&err), Some(403), "{err}");
    let can_i = |verb: &str| {
        let out = env
            .kubectl()
            .args([
                "auth", "can-i", verb, "secrets", "-n", &ns.name, "--as", &user,
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    assert_eq!(can_i("list"), "no");

    // Granted by a Role + RoleBinding: allowed (once the authorizer's cache has it), and only that.
    let role: Role = serde_json::from_value(json!({
        "metadata": { "name": "secret-reader" },
        "rules": [{ "apiGroups": [""], "resources": ["secrets"], "verbs": ["list"] }]
    }))
    .unwrap();
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": { "name": "secret-reader" },
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "secret-reader" },
        "subjects": [{ "kind": "ServiceAccount", "name": account, "namespace": ns.name }]
    }))
    .unwrap();
    Api::<Role>::namespaced(admin.clone(), &ns.name)
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    Api::<RoleBinding>::namespaced(admin, &ns.name)
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    eventually("listing Secrets once bound", || async {
        match as_reader.list(&ListParams::default()).await {
            Ok(_) => Ok(Some(())),
            Err(e) if api_code(&e) == Some(403) => Ok(None),
            Err(e) => Err(e.into()),
        }
    })
    .await
    .unwrap();
    assert_eq!(can_i("list"), "yes");
    assert_eq!(can_i("delete"), "no");
    let err = as_reader
        .delete("anything", &Default::default())
        .await
        .unwrap_err();
    assert_eq!(api_code(&err), Some(403), "{err}");

    ns.delete().await;
}

#[test]
fn kubectl_talks_to_the_control_plane() {
    let env = KubeEnv::shared().unwrap();
    let out = env
        .kubectl()
        .args(["get", "--raw", "/readyz"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok");
    if let Some(startup) = env.startup_time() {
        println!("control plane started in {startup:?}");
    }
}
