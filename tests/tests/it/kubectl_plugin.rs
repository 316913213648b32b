#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! `kubectl redoline` against the real API server: the built `kubectl-redoline` run as a process
//! on an OracleCapture whose status the test writes, as the operator would.
//!
//! * `status` with no capture pod falls back to the OracleCapture status and says so;
//! * `status` with a pod reads the capture's `/status` through the API server's pod proxy: the
//!   pod never runs (no node), but the test writes its status with the host's address as pod IP
//!   and serves a `StatusReport` there itself, so the proxy path is the real one (the API server
//!   refuses to proxy to loopback addresses, hence the host's address);
//! * a pod whose `/status` does not answer falls back too;
//! * `--output json` parses;
//! * `reposition` and `snapshot` write the spec (field manager `kubectl-redoline`) and refuse
//!   what they must.
//!
//! The two screens are compared with the samples in `docs/kubectl-plugin.md` (volatile parts
//! masked); `REDOLINE_BLESS=1` rewrites them:
//!
//! ```sh
//! cargo build -p kubectl-redoline
//! REDOLINE_BLESS=1 cargo test -p redoline-tests --test it -- kubectl_plugin::
//! ```

use std::collections::BTreeMap;
use std::net::{IpAddr, TcpListener, UdpSocket};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use redoline_crds::OracleCapture;
use redoline_crds::capture::{CaptureState, OldestTransaction, StatusReport, ThreadPosition, Time};
use redoline_crds::v1alpha1::{
    ArchivedRedoStatus, NeededArchivedLog, RepositionState, RepositionStatus,
};
use redoline_tests::k8s::{KubeEnv, apply_crd};
use redoline_tests::operator::StatusServer;
use serde_json::{Value, json};

const BLESS_ENV: &str = "REDOLINE_BLESS";
/// The namespace shown in the samples instead of the test's generated one.
const SAMPLE_NAMESPACE: &str = "sales";

fn plugin() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    redoline_tests::binary_beside(&exe, "kubectl-redoline").expect("kubectl-redoline built")
}

/// Runs the plugin with the test's kubeconfig: exit status, stdout, stderr.
async fn run(env: &KubeEnv, args: &[&str]) -> (bool, String, String) {
    let mut command = std::process::Command::new(plugin());
    command.env("KUBECONFIG", env.kubeconfig_path()).args(args);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("kubectl-redoline runs");
    (
        output.status.success(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// `kubectl-redoline <command> orders -n <namespace> <args>`: the plugin on the test's
/// OracleCapture.
async fn on_orders(
    env: &KubeEnv,
    namespace: &str,
    command: &str,
    args: &[&str],
) -> (bool, String, String) {
    let mut argv = vec![command, "orders", "-n", namespace];
    argv.extend_from_slice(args);
    run(env, &argv).await
}

/// An address of this host the API server may proxy to (not loopback): the source address of
/// the default route. Connecting a UDP socket sends nothing.
fn host_address() -> IpAddr {
    let socket = UdpSocket::bind("0.0.0.0:0").expect("UDP socket");
    socket
        .connect("198.51.100.1:9")
        .expect("this host needs a route other than loopback for the pod proxy test");
    let ip = socket.local_addr().unwrap().ip();
    assert!(!ip.is_loopback(), "no address other than loopback: {ip}");
    ip
}

/// The capture's `/status` while streaming, written with the capture's own type.
fn live_report() -> String {
    let report = StatusReport {
        state: CaptureState::Streaming,
        commit_scn: Some(5_118_204),
        commit_time: Some(Time("2026-12-05T10:40:20Z".parse().unwrap())),
        restart_scn: Some(5_117_950),
        lag_seconds: Some(4.5),
        open_transactions: 3,
        buffered_events: 120,
        heap_bytes: 1_572_864,
        spilled_transactions: 1,
        spilled_bytes: 3 << 30,
        journaled_transactions: 1,
        started_at: "2026-12-05T09:12:06Z".into(),
        version: "0.1.0",
        producer: None,
        snapshot: Default::default(),
        oldest_transaction: Some(OldestTransaction {
            xid: "0A001B00C2030000".into(),
            first_scn: 5_117_950,
            opened_at: Some(Time("2026-12-05T10:01:00Z".parse().unwrap())),
        }),
        threads: vec![
            ThreadPosition {
                thread: 1,
                sequence: 812,
                first_scn: 5_117_001,
                archived: true,
            },
            ThreadPosition {
                thread: 2,
                sequence: 640,
                first_scn: 5_117_420,
                archived: false,
            },
        ],
        reposition: Some(RepositionStatus {
            id: "restore-1".into(),
            scn: 5_100_000,
            state: RepositionState::Applied,
            at: Some(Time("2026-12-05T09:12:07Z".parse().unwrap())),
            message: Some(
                "moved from commit SCN 5120000 (restart SCN 5119000) to SCN 5100000".into(),
            ),
        }),
        archived_redo: Some(ArchivedRedoStatus {
            retention_hours: Some(24),
            hours_left: Some(17.75),
            deletable_from: Some(Time("2026-12-06T04:25:31Z".parse().unwrap())),
            oldest_needed: Some(NeededArchivedLog {
                thread: 1,
                sequence: 812,
                completed_at: Some(Time("2026-12-05T04:25:31Z".parse().unwrap())),
            }),
        }),
        config_file: None,
    };
    // An incremental snapshot as the capture lists it in `snapshot.requests`.
    let mut json = serde_json::to_value(&report).unwrap();
    json["snapshot"] = json!({"requests": [{
        "id": "reread-orders-1", "state": "Running", "startedAt": "2026-12-05T10:30:00Z",
        "tables": [
            {"table": "SALES.ORDERS", "state": "Done", "rowsRead": 48_210, "rowsEstimate": 48_000},
            {"table": "SALES.ORDER_LINES", "state": "Running", "rowsRead": 120_000, "rowsEstimate": 400_000}
        ]
    }]});
    json.to_string()
}

/// The status the operator would have written: stalled on CDC-2001 earlier, streaming now.
fn operator_status() -> Value {
    json!({
        "observedGeneration": 1,
        "phase": "Streaming",
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "Streaming", "message": "the capture is streaming",
             "lastTransitionTime": "2026-12-05T09:13:00Z", "observedGeneration": 1},
            {"type": "Stalled", "status": "False", "reason": "NoStop", "message": "",
             "lastTransitionTime": "2026-12-05T09:13:00Z", "observedGeneration": 1}
        ],
        "position": {"commitScn": 5_118_000, "restartScn": 5_117_900, "commitTime": "2026-12-05T10:40:00Z"},
        "lagSeconds": 6.0,
        "lastStop": {"code": "CDC-2001", "reason": "RedoMissing",
                     "message": "CDC-2001: redo of thread 1 from SCN 5000000 to SCN 5001000 is not available",
                     "at": "2026-12-05T08:00:00Z"},
        "reposition": {"id": "restore-1", "scn": 5_100_000, "state": "Applied", "at": "2026-12-05T09:12:07Z",
                       "message": "moved from commit SCN 5120000 (restart SCN 5119000) to SCN 5100000"},
        "archivedRedo": {"retentionHours": 24, "hoursLeft": 17.7, "deletableFrom": "2026-12-06T04:25:31Z",
                         "oldestNeeded": {"thread": 1, "sequence": 812, "completedAt": "2026-12-05T04:25:31Z"}}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plugin_reads_the_status_and_edits_the_spec() {
    let env = KubeEnv::shared().expect("control plane");
    let client = env.client().await.expect("client");
    apply_crd(&client, &redoline_crds::crd())
        .await
        .expect("CRD applies and becomes Established");
    let ns = env.namespace("kubectl-plugin").await.expect("namespace");
    let resource = ApiResource::erase::<OracleCapture>(&());
    let captures: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns.name, &resource);
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "redoline.io/v1alpha1",
        "kind": "OracleCapture",
        "metadata": {"name": "orders"},
        "spec": {
            "database": {"host": "db", "serviceName": "PDB1", "credentialsSecret": {"name": "db"}},
            "tables": ["SALES.ORDERS", "SALES.ORDER_LINES"],
            "kafka": {"bootstrapServers": "kafka:9092", "topicPrefix": "orders"},
            "reposition": {"id": "restore-1", "scn": 5_100_000}
        }
    }))
    .unwrap();
    captures
        .create(&PostParams::default(), &object)
        .await
        .expect("OracleCapture created");
    captures
        .patch_status(
            "orders",
            &PatchParams::apply("redoline-operator").force(),
            &Patch::Apply(json!({
                "apiVersion": "redoline.io/v1alpha1", "kind": "OracleCapture",
                "status": operator_status(),
            })),
        )
        .await
        .expect("status written");
    let mut samples = BTreeMap::new();
    let sample = |text: &str| text.replace(&ns.name, SAMPLE_NAMESPACE);

    // No pod: the OracleCapture status alone, and the screen says so.
    let started = Instant::now();
    let (ok, fallback, stderr) = on_orders(env, &ns.name, "status", &[]).await;
    let fallback_time = started.elapsed();
    assert!(ok, "{stderr}");
    assert!(
        fallback.contains(
            "the capture pod orders-capture-0 does not exist; showing the OracleCapture status only"
        ),
        "{fallback}"
    );
    assert!(fallback.contains("Commit SCN:   5118000"), "{fallback}");
    assert!(
        fallback.contains("CDC-2001 RedoMissing (latest, no longer in force"),
        "{fallback}"
    );
    assert!(
        fallback.contains("docs/runbook.md#cdc-2001-redomissing"),
        "{fallback}"
    );
    samples.insert("status fallback".to_owned(), sample(&fallback));

    // A pod whose /status the API server proxies to, on this host's address.
    let ip = host_address();
    let listener = TcpListener::bind((ip, 0)).expect("bind");
    let server = StatusServer::start(listener, Arc::new(Mutex::new(live_report())))
        .unwrap_or_else(|e| panic!("{e:#}"));
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "orders-capture-0"},
        "spec": {"containers": [{"name": "capture", "image": "redoline-capture:test",
                                 "ports": [{"name": "http", "containerPort": server.port()}]}]}
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("pod created");
    pods.patch_status(
        "orders-capture-0",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"phase": "Running", "podIP": ip.to_string(), "podIPs": [{"ip": ip.to_string()}]}})),
    )
    .await
    .expect("pod status written");
    let started = Instant::now();
    let (ok, live, stderr) = on_orders(env, &ns.name, "status", &[]).await;
    let live_time = started.elapsed();
    assert!(ok, "{stderr}");
    assert!(
        live.contains("Live from:   the capture's /status (pod orders-capture-0"),
        "{live}"
    );
    assert!(
        live.contains("Commit SCN:   5118204"),
        "live figures win: {live}"
    );
    assert!(
        live.contains("Thread 2:     log sequence 640 (online"),
        "{live}"
    );
    assert!(
        live.contains("Oldest: 0A001B00C2030000 from SCN 5117950"),
        "{live}"
    );
    assert!(live.contains("Spilled: 1 (3.0 GiB)"), "{live}");
    assert!(live.contains("Applied: restore-1 to SCN 5100000"), "{live}");
    assert!(live.contains("reread-orders-1: Running"), "{live}");
    assert!(live.contains("120000 of ~400000 rows (30%)"), "{live}");
    samples.insert(
        "status live".to_owned(),
        sample(&live).replace(&format!("port {},", server.port()), "port 8080,"),
    );

    let (ok, json_text, stderr) = on_orders(env, &ns.name, "status", &["--output", "json"]).await;
    assert!(ok, "{stderr}");
    let view: Value = serde_json::from_str(&json_text).expect("--output json is JSON");
    assert_eq!(view["source"]["kind"], "capture", "{view}");
    assert_eq!(view["position"]["commitScn"], 5_118_204);
    assert_eq!(view["transactions"]["oldest"]["xid"], "0A001B00C2030000");
    assert_eq!(view["stop"]["inForce"], false);
    assert_eq!(view["reposition"]["decided"]["state"], "Applied");

    // kubectl finds the plugin on PATH and runs it as `kubectl redoline` (global flags may
    // not come before a plugin's name, so the kubeconfig comes from KUBECONFIG).
    let kubectl = env.kubectl().get_program().to_owned();
    let plugin_dir = plugin().parent().unwrap().to_owned();
    let path = std::env::join_paths(std::iter::once(plugin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let mut command = std::process::Command::new(kubectl);
    command
        .env("KUBECONFIG", env.kubeconfig_path())
        .env("PATH", path)
        .args(["redoline", "-n", &ns.name, "status", "orders", "-o", "json"]);
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("kubectl runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let through_kubectl: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(through_kubectl["name"], "orders");

    // The pod's /status stops answering: the fallback again, with the reason.
    drop(server);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (ok, gone, stderr) = on_orders(env, &ns.name, "status", &[]).await;
    assert!(ok, "{stderr}");
    assert!(
        gone.contains("the capture's /status did not answer"),
        "{gone}"
    );
    assert!(
        gone.contains("showing the OracleCapture status only"),
        "{gone}"
    );

    // reposition: a new id is written, a used one refused.
    let (ok, out, stderr) = on_orders(
        env,
        &ns.name,
        "reposition",
        &["--scn", "5000", "--id", "restore-2"],
    )
    .await;
    assert!(ok, "{stderr}");
    assert!(
        out.contains("set spec.reposition restore-2 to SCN 5000"),
        "{out}"
    );
    assert!(
        out.contains("changes committed since SCN 5000 again"),
        "{out}"
    );
    let stored = captures.get("orders").await.unwrap();
    assert_eq!(
        stored.data["spec"]["reposition"],
        json!({"id": "restore-2", "scn": 5000})
    );
    let managers: Vec<String> = stored
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert!(
        managers.iter().any(|m| m == "kubectl-redoline"),
        "{managers:?}"
    );
    let (ok, _, stderr) = on_orders(
        env,
        &ns.name,
        "reposition",
        &["--scn", "6000", "--id", "restore-2"],
    )
    .await;
    assert!(!ok);
    assert!(stderr.contains("already has id restore-2"), "{stderr}");

    // snapshot: a table not captured is refused; a captured one is requested where the CRD
    // has spec.snapshot.requests, and refused clearly where it does not.
    let (ok, _, stderr) = on_orders(env, &ns.name, "snapshot", &["sales.orders"]).await;
    assert!(!ok);
    assert!(stderr.contains("did you mean SALES.ORDERS"), "{stderr}");
    let (ok, out, stderr) = on_orders(
        env,
        &ns.name,
        "snapshot",
        &[
            "SALES.ORDERS",
            "--where",
            "STATUS = 'OPEN'",
            "--id",
            "reread-1",
        ],
    )
    .await;
    let crd_has_requests = serde_json::to_value(redoline_crds::crd())
        .unwrap()
        .pointer("/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/snapshot/properties/requests")
        .is_some();
    if crd_has_requests {
        assert!(ok, "{stderr}");
        assert!(
            out.contains("added spec.snapshot.requests reread-1"),
            "{out}"
        );
        let stored = captures.get("orders").await.unwrap();
        assert_eq!(
            stored.data["spec"]["snapshot"]["requests"],
            json!([{"id": "reread-1", "tables": ["SALES.ORDERS"], "condition": "STATUS = 'OPEN'"}])
        );
    } else {
        assert!(!ok, "{out}");
        assert!(stderr.contains("has no spec.snapshot.requests"), "{stderr}");
    }

    eprintln!(
        "kubectl_plugin: status took {:.0} ms with the pod proxy, {:.0} ms falling back (no pod)",
        live_time.as_secs_f64() * 1000.0,
        fallback_time.as_secs_f64() * 1000.0
    );
    redoline_tests::samples::compare_or_bless(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/kubectl-plugin.md"),
        &samples,
        BLESS_ENV,
        "cargo build -p kubectl-redoline && REDOLINE_BLESS=1 cargo test -p redoline-tests --test it -- kubectl_plugin::",
        |_, text| normalise(text),
    )
    .unwrap_or_else(|e| panic!("{e:#}"));
    ns.delete().await;
}

/// The screens hold no volatile part once the namespace and the port are replaced; trailing
/// blanks do not count.
fn normalise(text: &str) -> String {
    text.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_owned()
}
