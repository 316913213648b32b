#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! A capture pod as Kubernetes runs it: the real node of the test environment (kubelet,
//! containerd, runc; `redoline_tests::node`), the operator installed by the Helm chart from its
//! image, the capture image built from images/capture.Dockerfile, on the Oracle simulator fed by
//! a live workload.
//!
//! One story, because each step needs the pod the previous one left:
//! 1. the pod goes Ready through its real probes, its spill volume a local PersistentVolume bound
//!    through the StatefulSet's claim;
//! 2. it runs with the security context the operator sets (non-root, read-only root file system,
//!    no capabilities), checked from inside with `kubectl exec`, and captures in it;
//! 3. `kubectl logs` gives one JSON object per line, with the fields docs/capture.md describes;
//! 4. a spec change rolls the pod: the kubelet stops the old container with SIGTERM and it exits
//!    0 within the grace period; a change of `spec.snapshot.requests` alone does not: the kubelet
//!    updates the mounted config in the running pod and the capture reads the table (up to the
//!    kubelet's sync period plus its cache TTL later);
//! 5. a deleted pod comes back on the same claim and volume and resumes from its bookmark;
//! 6. read back `read_committed`, Kafka has every order the workload committed exactly once across
//!    the rollout and the deletion.
//!
//! The demo (`demo_e2e.rs`) covers the rest on the same node: two operator replicas electing a
//! leader, the lag SLA, and a CDC-4001 stop whose termination message the kubelet reads.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use redoline_crds::OracleCapture;
use redoline_crds::v1alpha1::SnapshotRequestState;
use redoline_operator::build::{CAPTURE_CONTAINER, SPILL_DIR};
use redoline_tests::k8s::KubeEnv;
use redoline_tests::node::{self, NodeStory, Terminated};
use redoline_tests::operator::create_secret;
use redoline_tests::wait::eventually;
use serde_json::{Value, json};

const NAME: &str = "orders";
const POD: &str = "orders-capture-0";
const CLAIM: &str = node::DEMO_SPILL_CLAIM;
const RELEASE: &str = "redoline";
/// Bound of each wait: pulls are local, but a cold pod start on a loaded 2-core machine is slow.
const WITHIN: Duration = Duration::from_secs(180);
const POLL: Duration = Duration::from_millis(500);
/// The grace period the operator gives the capture pod.
const GRACE: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_pod_runs_restricted_rolls_and_resumes_on_a_real_node() {
    let NodeStory {
        node,
        kafka,
        kube_env,
        namespace,
        scenarios: _scenarios,
        helm,
        workload,
    } = NodeStory::start("real-pods", RELEASE, NAME).await.unwrap();
    let client = kube_env.client().await.unwrap();
    let ns = namespace.name.clone();
    create_secret(
        &client,
        &ns,
        "orders-db-cdc",
        json!({"username": "C##CDC", "password": "not-used-by-the-simulator"}),
    )
    .await
    .unwrap();
    let volume_name = format!("{ns}-spill");
    let volume_dir = node
        .local_volume(&client, &ns, &volume_name, "1Gi")
        .await
        .unwrap();
    let prefix = kafka.unique_prefix("real-pods");
    let mut capture = node.capture(&ns, &prefix).unwrap();
    capture.spec.sla = None;
    let captures: Api<OracleCapture> = Api::namespaced(client.clone(), &ns);
    captures
        .create(&PostParams::default(), &capture)
        .await
        .unwrap();

    // Every state the pod goes through, for the rollout's SIGTERM below (the old pod's final
    // status lasts only until the kubelet removes it).
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let seen_ends = record_container_ends(pods.clone());

    // 1. Ready through the real probes, the spill claim bound to the local volume.
    let first = node::ready_pod(&pods, POD, None, WITHIN).await.unwrap();
    assert_eq!(
        first.spec.as_ref().unwrap().node_name.as_deref(),
        Some(node.name.as_str())
    );
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &ns);
    let claim = claims.get(CLAIM).await.unwrap();
    assert_eq!(claim.status.unwrap().phase.as_deref(), Some("Bound"));
    assert_eq!(
        claim.spec.unwrap().volume_name.as_deref(),
        Some(volume_name.as_str())
    );
    let topic = format!("{prefix}.SALES.ORDERS");
    node::some_order(kafka, &topic, WITHIN).await.unwrap();

    // 2. The security context, seen from inside the running capture container.
    let status = exec(kube_env, &ns, &["cat", "/proc/self/status"]);
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .unwrap_or_else(|| panic!("no {name} in\n{status}"))
            .to_owned()
    };
    assert_eq!(field("CapEff:"), "0000000000000000");
    assert_eq!(field("CapPrm:"), "0000000000000000");
    assert_eq!(field("NoNewPrivs:"), "1");
    assert!(field("Uid:").starts_with("65532\t"), "{}", field("Uid:"));
    let write_root = kube_env
        .kubectl()
        .args(["exec", "-n", &ns, POD, "-c", CAPTURE_CONTAINER, "--"])
        .args(["sh", "-c", "echo x > /written-to-root"])
        .output()
        .unwrap();
    assert!(!write_root.status.success());
    assert!(
        String::from_utf8_lossy(&write_root.stderr).contains("Read-only file system"),
        "{}",
        String::from_utf8_lossy(&write_root.stderr)
    );
    // The spill volume is writable by the capture's user (fsGroup on the local volume).
    exec(
        kube_env,
        &ns,
        &[
            "sh",
            "-c",
            &format!("touch {SPILL_DIR}/.probe && rm {SPILL_DIR}/.probe"),
        ],
    );

    // 3. kubectl logs: JSON objects, one a line.
    let logs = kube_env
        .kubectl_stdout(&["logs", "-n", &ns, POD, "-c", CAPTURE_CONTAINER])
        .unwrap();
    let lines: Vec<Value> = logs
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    assert!(!lines.is_empty(), "no log lines");
    for line in &lines {
        for key in ["timestamp", "level", "message", "target"] {
            assert!(line.get(key).is_some(), "no {key} in {line}");
        }
    }

    // 4. A spec change rolls the pod: SIGTERM, a clean exit within the grace period.
    let first_uid = first.metadata.uid.clone().unwrap();
    captures
        .patch(
            NAME,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"mining": {"pollIntervalSeconds": 2}}})),
        )
        .await
        .unwrap();
    let second = node::ready_pod(&pods, POD, Some(&first_uid), WITHIN)
        .await
        .unwrap();
    let old_end = eventually("the old capture container's end", GRACE, POLL, || async {
        seen_ends.lock().unwrap().get(&first_uid).cloned()
    })
    .await
    .unwrap();
    assert_eq!(
        (old_end.exit_code, old_end.reason.as_deref()),
        (0, Some("Completed")),
        "the capture did not stop cleanly on SIGTERM: {old_end:?}"
    );

    // A snapshot request alone: no roll, the same container reads the table.
    let second_uid = second.metadata.uid.clone().unwrap();
    let restarts = |pod: &Pod| {
        pod.status
            .as_ref()
            .and_then(|status| status.container_statuses.as_ref())
            .and_then(|statuses| statuses.iter().find(|s| s.name == CAPTURE_CONTAINER))
            .map(|status| status.restart_count)
    };
    let restarts_before = restarts(&second);
    captures
        .patch(
            NAME,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"snapshot": {"requests": [
                {"id": "live-customers-1", "tables": ["SALES.CUSTOMERS"]}
            ]}}})),
        )
        .await
        .unwrap();
    eventually(
        "the request read without a restart",
        WITHIN,
        POLL,
        || async {
            let status = captures.get(NAME).await.ok()?.status?;
            status
                .snapshot?
                .requests
                .iter()
                .any(|r| r.id == "live-customers-1" && r.state == SnapshotRequestState::Done)
                .then_some(())
        },
    )
    .await
    .unwrap();
    let same = pods.get(POD).await.unwrap();
    assert_eq!(
        same.metadata.uid.as_deref(),
        Some(second_uid.as_str()),
        "the request rolled the pod"
    );
    assert_eq!(restarts(&same), restarts_before, "the capture restarted");

    // 5. A deleted pod comes back on the same claim and resumes from its bookmark.
    pods.delete(POD, &DeleteParams::default()).await.unwrap();
    let third = node::ready_pod(&pods, POD, Some(&second_uid), WITHIN)
        .await
        .unwrap();
    let claim_of = |pod: &Pod| {
        pod.spec
            .as_ref()
            .unwrap()
            .volumes
            .as_ref()
            .unwrap()
            .iter()
            .find_map(|v| v.persistent_volume_claim.as_ref())
            .map(|c| c.claim_name.clone())
    };
    assert_eq!(claim_of(&third).as_deref(), Some(CLAIM));
    assert_eq!(
        claims
            .get(CLAIM)
            .await
            .unwrap()
            .spec
            .unwrap()
            .volume_name
            .as_deref(),
        Some(volume_name.as_str())
    );
    // It resumes from the bookmark of what was emitted before, not from where the first pod began.
    let resumed = kube_env
        .kubectl_stdout(&["logs", "-n", &ns, POD, "-c", CAPTURE_CONTAINER])
        .unwrap();
    let resumed: Vec<Value> = resumed
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let (began, resumed_at) = (mining_start(&lines), mining_start(&resumed));
    assert!(
        resumed_at > began,
        "the third pod mined from commit SCN {resumed_at}, the first from {began}"
    );
    assert!(volume_dir.is_dir());

    // 6. Every committed order once, across both restarts.
    let orders = workload.stop().unwrap();
    node::every_order_once(kafka, &topic, orders, WITHIN)
        .await
        .unwrap_or_else(|e| panic!("{e:#}"));

    helm.uninstall(RELEASE, &ns, kube_env.kubeconfig_path())
        .unwrap();
    namespace.delete().await;
}

/// The commit SCN of the capture's "mining starts" log line.
fn mining_start(lines: &[Value]) -> u64 {
    lines
        .iter()
        .find(|line| line["message"] == "mining starts")
        .and_then(|line| line["commit_scn"].as_u64())
        .unwrap_or_else(|| panic!("no \"mining starts\" line in {lines:?}"))
}

/// Watches the capture pods and records, by pod uid, how their capture container ended.
fn record_container_ends(pods: Api<Pod>) -> Arc<Mutex<BTreeMap<String, Terminated>>> {
    let ends = Arc::new(Mutex::new(BTreeMap::new()));
    let recorded = Arc::clone(&ends);
    tokio::spawn(async move {
        let config = watcher::Config::default().fields(&format!("metadata.name={POD}"));
        let mut events = watcher::watcher(pods, config).boxed();
        while let Some(event) = events.next().await {
            // The deleted object carries the final status too, in case a relist skipped the
            // update that ended the container.
            let (watcher::Event::Apply(pod)
            | watcher::Event::InitApply(pod)
            | watcher::Event::Delete(pod)) = (match event {
                Ok(event) => event,
                Err(_) => continue,
            })
            else {
                continue;
            };
            let ended = node::container_status(&pod, CAPTURE_CONTAINER)
                .and_then(|s| s.state.as_ref()?.terminated.as_ref())
                .is_some();
            if ended
                && let (Some(uid), Some(end)) = (
                    pod.metadata.uid.clone(),
                    node::last_termination(&pod, CAPTURE_CONTAINER),
                )
            {
                recorded.lock().unwrap().insert(uid, end);
            }
        }
    });
    ends
}

/// `kubectl exec` in the capture container; its stdout, or a panic with its stderr.
fn exec(kube_env: &KubeEnv, ns: &str, command: &[&str]) -> String {
    let mut args = vec!["exec", "-n", ns, POD, "-c", CAPTURE_CONTAINER, "--"];
    args.extend_from_slice(command);
    kube_env
        .kubectl_stdout(&args)
        .unwrap_or_else(|e| panic!("{e:#}"))
}
