#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The Helm chart `charts/redoline/`, checked with a real helm and the real test apiserver:
//!
//! * its CRD is the generated one byte for byte, and its RBAC rules are operator/rbac/'s;
//! * `helm lint --strict` passes with the defaults and with every optional feature on
//!   (`ci/all-features-values.yaml`);
//! * `helm template` with both value sets renders objects that the apiserver accepts in a
//!   server-side dry run with strict field validation (`kubectl apply --server-side
//!   --dry-run=server --validate=strict`). The ServiceMonitor and PrometheusRule CRDs of the
//!   Prometheus Operator are not part of the test control plane: the test installs minimal stubs of
//!   them (schema-less, so the dry run proves only group, version, kind and names), and checks those
//!   two kinds structurally itself (ports, selectors, every alert and the metric names its
//!   expression uses);
//! * `helm install` into a fresh namespace that enforces the "restricted" Pod Security Standard
//!   creates the operator Deployment (whose pod the admission lets through), its ServiceAccount,
//!   the ClusterRole with its binding and the leader-election Role with its binding;
//! * its NetworkPolicy is accepted and selects the capture pod the operator's StatefulSet makes,
//!   and a capture whose `/status` the operator cannot reach stays Ready from its pod's readiness;
//! * `values.schema.json` refuses values of the wrong type, and the chart refuses several replicas
//!   without leader election.
//!
//! helm comes from `REDOLINE_HELM` (set by tests/env/test-all.sh), else it is built into the cache
//! by tests/env/build-helm.sh, as the control plane binaries are by build-k8s.sh: a missing helm
//! fails the test, it is never skipped.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Output;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Pod, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, Patch, PatchParams};
use redoline_tests::helm::{self, Helm};
use redoline_tests::k8s::{FIELD_MANAGER, KubeEnv, apply_crd};
use redoline_tests::metric_names::{
    capture_families, is_exported, operator_families, redoline_names,
};
use redoline_tests::wait;
use serde::Deserialize;
use serde_json::{Value, json};

/// Upper bound of each wait on the apiserver or the operator.
const WAIT: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_millis(250);

/// The alerts issue 10 asks for, two about the operator itself, one before CDC-7003 and one
/// before CDC-2001.
const ALERTS: [&str; 9] = [
    "RedolineOperatorDown",
    "RedolineOperatorNoLeader",
    "RedolineOperatorReconcileErrors",
    "RedolineCaptureStalled",
    "RedolineCapturePrerequisitesPending",
    "RedolineCaptureLagHigh",
    "RedolineCaptureSpillNearCap",
    "RedolineCaptureReleasedLedgerNearCap",
    "RedolineCaptureArchivedRedoLow",
];
fn repo() -> PathBuf {
    helm::repo()
}

fn chart() -> PathBuf {
    helm::chart()
}

fn all_features() -> PathBuf {
    chart().join("ci/all-features-values.yaml")
}

/// The chart rendered with every optional feature on.
fn all_features_rendered(helm: &Helm) -> Vec<Value> {
    documents(
        &helm
            .template(
                "redoline-system",
                &["--values", all_features().to_str().unwrap()],
            )
            .unwrap(),
    )
}

fn stderr(out: &Output) -> String {
    helm::output_text(out)
}

/// The documents of a multi-document YAML text, empty ones left out.
fn documents(text: &str) -> Vec<Value> {
    serde_norway::Deserializer::from_str(text)
        .map(|doc| Value::deserialize(doc).expect("YAML document"))
        .filter(|doc| !doc.is_null())
        .collect()
}

fn of_kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

fn one_of_kind<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    let found = of_kind(docs, kind);
    assert_eq!(found.len(), 1, "expected one {kind}");
    found[0]
}

/// The rules of the ClusterRoles, the namespaced-resources one first, then the cluster-scoped
/// reads (named `...-cluster`).
fn cluster_role_rules(docs: &[Value]) -> Vec<Value> {
    let mut roles = of_kind(docs, "ClusterRole");
    roles.sort_by_key(|role| {
        role["metadata"]["name"]
            .as_str()
            .unwrap()
            .ends_with("-cluster")
    });
    roles.iter().map(|role| role["rules"].clone()).collect()
}

// --- files -----------------------------------------------------------------------------------

#[test]
fn chart_crd_is_the_generated_crd() {
    let chart_crd =
        std::fs::read_to_string(chart().join("crds/oraclecaptures.redoline.io.yaml")).unwrap();
    let committed =
        std::fs::read_to_string(repo().join("crds/oraclecaptures.redoline.io.yaml")).unwrap();
    assert!(
        chart_crd == committed,
        "charts/redoline/crds/oraclecaptures.redoline.io.yaml differs from \
         crds/oraclecaptures.redoline.io.yaml: run `make crds` (it copies it into the chart)"
    );
    assert!(
        chart_crd == redoline_crds::crd_yaml().unwrap(),
        "the chart's CRD is stale: run `make crds`"
    );
}

#[test]
fn chart_rbac_source_is_operator_rbac() {
    let copy = std::fs::read_to_string(chart().join("files/rbac/clusterrole.yaml")).unwrap();
    let source = std::fs::read_to_string(repo().join("operator/rbac/clusterrole.yaml")).unwrap();
    assert!(
        copy == source,
        "charts/redoline/files/rbac/clusterrole.yaml differs from operator/rbac/clusterrole.yaml: \
         run `make crds` (it copies it into the chart)"
    );
}

/// The rendered ClusterRole and Role carry exactly the rules of operator/rbac/clusterrole.yaml.
#[test]
fn rendered_rbac_rules_are_operator_rbac() {
    let helm = Helm::new().unwrap();
    let source =
        documents(&std::fs::read_to_string(repo().join("operator/rbac/clusterrole.yaml")).unwrap());
    let rendered = documents(&helm.template("redoline-system", &[]).unwrap());
    assert_eq!(cluster_role_rules(&rendered), cluster_role_rules(&source));
    assert_eq!(cluster_role_rules(&source).len(), 2);
    assert_eq!(
        one_of_kind(&rendered, "Role")["rules"],
        one_of_kind(&source, "Role")["rules"]
    );
    // Another Lease name moves the Role's resourceNames with it, and nothing else.
    let renamed = documents(
        &helm
            .template(
                "redoline-system",
                &["--set", "leaderElection.leaseName=other-lease"],
            )
            .unwrap(),
    );
    let mut expected = one_of_kind(&source, "Role")["rules"].clone();
    expected[0]["resourceNames"] = json!(["other-lease"]);
    assert_eq!(one_of_kind(&renamed, "Role")["rules"], expected);
    let args =
        one_of_kind(&renamed, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
            .clone();
    assert!(
        args.as_array()
            .unwrap()
            .contains(&json!("--lease-name=other-lease")),
        "{args}"
    );
}

// --- helm lint and the schema ----------------------------------------------------------------

#[test]
fn helm_lint_passes_with_defaults_and_all_features() {
    let helm = Helm::new().unwrap();
    let chart = chart();
    for extra in [&[][..], &["--values", all_features().to_str().unwrap()][..]] {
        let mut args = vec!["lint", "--strict", chart.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = helm.run(&args).unwrap();
        assert!(out.status.success(), "helm {args:?}:\n{}", stderr(&out));
    }
}

#[test]
fn values_schema_rejects_bad_values() {
    let helm = Helm::new().unwrap();
    let chart = chart();
    // (arguments, a part of the error helm must print)
    let cases: [(&[&str], &str); 8] = [
        (&["--set", "replicas=two"], "/replicas"),
        (&["--set-json", "replicas=1.5"], "/replicas"),
        (
            &["--set", "image.pullPolicy=Sometimes"],
            "/image/pullPolicy",
        ),
        (
            &["--set", "operator.concurrency=0"],
            "/operator/concurrency",
        ),
        (
            &["--set-json", "watchNamespaces=\"sales\""],
            "/watchNamespaces",
        ),
        (
            &["--set", "leaderElection.enabled=maybe"],
            "/leaderElection/enabled",
        ),
        (&["--set", "replicaCount=2"], "replicaCount"),
        (
            &[
                "--set",
                "replicas=2",
                "--set",
                "leaderElection.enabled=false",
            ],
            "replicas > 1 needs leaderElection.enabled",
        ),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["template", "redoline", chart.to_str().unwrap()];
        args.extend_from_slice(extra);
        let out = helm.run(&args).unwrap();
        let text = stderr(&out);
        assert!(!out.status.success(), "helm {args:?} accepted a bad value");
        assert!(
            text.contains(expected),
            "helm {args:?}: expected {expected:?} in:\n{text}"
        );
    }
    // The all-features values pass the schema (and render; see the dry-run test).
    helm.template(
        "redoline-system",
        &["--values", all_features().to_str().unwrap()],
    )
    .unwrap();
}

// --- NetworkPolicy ---------------------------------------------------------------------------

/// The chart's NetworkPolicy selects the capture pods the operator builds, lets in exactly the
/// operator's pods (and the configured scrapers) on the capture's HTTP port, and lets out only
/// DNS, Oracle and Kafka. (The test control plane has no network plugin to enforce it; the dry
/// run test checks that the apiserver accepts it.)
#[test]
fn the_network_policy_admits_the_operator_to_the_captures_http_port_only() {
    let helm = Helm::new().unwrap();
    let docs = all_features_rendered(&helm);
    let policies = of_kind(&docs, "NetworkPolicy");
    let namespaces: BTreeSet<&str> = policies
        .iter()
        .map(|p| p["metadata"]["namespace"].as_str().unwrap())
        .collect();
    assert_eq!(
        namespaces,
        BTreeSet::from(["hr", "sales"]),
        "one per watched namespace"
    );

    let mut capture = redoline_tests::operator::sample_in("sales").unwrap();
    capture.metadata.uid = Some("0d7c2f4e-8a51-4c2b-9a0e-1f3e5d7c9b11".into());
    let children = redoline_operator::build::build(
        &capture,
        &redoline_operator::build::OperatorSettings {
            default_image: "ghcr.io/redoline/redoline-capture:test".into(),
            simulator_scenarios: None,
        },
    )
    .unwrap();
    let template = children.stateful_set.spec.unwrap().template;
    let pod_labels = template.metadata.unwrap().labels.unwrap();
    let http_port = template.spec.unwrap().containers[0]
        .ports
        .as_ref()
        .unwrap()
        .iter()
        .find(|p| p.name.as_deref() == Some("http"))
        .unwrap()
        .container_port;
    let operator_labels =
        one_of_kind(&docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
            .as_object()
            .unwrap()
            .clone();

    for policy in policies {
        let spec = &policy["spec"];
        for (key, value) in spec["podSelector"]["matchLabels"].as_object().unwrap() {
            assert_eq!(
                pod_labels.get(key).map(String::as_str),
                value.as_str(),
                "the policy selects capture pods by {key}"
            );
        }
        assert_eq!(
            spec["policyTypes"],
            serde_json::json!(["Ingress", "Egress"])
        );
        let ingress = spec["ingress"].as_array().unwrap();
        assert_eq!(ingress.len(), 1);
        assert_eq!(
            ingress[0]["ports"],
            serde_json::json!([{"protocol": "TCP", "port": http_port}])
        );
        let from = ingress[0]["from"].as_array().unwrap();
        assert_eq!(from.len(), 2, "the operator and metricsFrom: {from:?}");
        assert_eq!(
            from[0]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"],
            "redoline-system"
        );
        for (key, value) in from[0]["podSelector"]["matchLabels"].as_object().unwrap() {
            assert_eq!(
                operator_labels.get(key),
                Some(value),
                "operator pods by {key}"
            );
        }
        assert_eq!(
            from[1]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"],
            "monitoring"
        );
        let egress: BTreeSet<(String, u64)> = spec["egress"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|rule| {
                assert!(rule.get("to").is_none(), "ports only: {rule}");
                rule["ports"].as_array().unwrap().clone()
            })
            .map(|p| {
                (
                    p["protocol"].as_str().unwrap().to_owned(),
                    p["port"].as_u64().unwrap(),
                )
            })
            .collect();
        let expected: BTreeSet<(String, u64)> = [
            ("UDP", 53),
            ("TCP", 53),
            ("TCP", 1521),
            ("TCP", 9092),
            ("TCP", 9094),
        ]
        .into_iter()
        .map(|(protocol, port)| (protocol.to_owned(), port))
        .collect();
        assert_eq!(egress, expected);
    }

    // Without namespaces to put them in, the chart refuses instead of guarding nothing.
    let out = helm
        .run(&[
            "template",
            "r",
            chart().to_str().unwrap(),
            "--set",
            "networkPolicy.enabled=true",
        ])
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("networkPolicy.enabled needs watchNamespaces"),
        "{}",
        stderr(&out)
    );
}

/// The chart's NetworkPolicy on the real apiserver, around a capture the operator made: it is
/// accepted, it selects the capture pod the StatefulSet controller created, and a capture whose
/// `/status` never answers (what the operator sees when a policy, a mesh or its place outside the
/// pod network keeps it out; the test control plane has no network plugin, so a port that accepts
/// connections and never replies stands in) is Ready from its pod's readiness, says why in the
/// condition message and a `StatusUnanswered` Warning, and `kubectl wait` succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_whose_status_cannot_be_reached_stays_ready() {
    use k8s_openapi::api::networking::v1::NetworkPolicy;
    use redoline_tests::operator::{self, NAME, ready_pod_status};

    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let h = operator::Harness::start("helm-netpol", |settings| {
        settings.status_poll_interval = Duration::from_millis(500);
        settings.status_port = port;
        settings.status_timeout = Duration::from_millis(500);
    })
    .await
    .expect("controller");
    let ns = h.ns.name.clone();

    let rendered = Helm::new().unwrap().template(
        "redoline-system",
        &[
            "--set",
            "networkPolicy.enabled=true",
            "--set",
            &format!("watchNamespaces={{{ns}}}"),
        ],
    );
    let docs = documents(&rendered.unwrap());
    let policy: NetworkPolicy =
        serde_json::from_value(one_of_kind(&docs, "NetworkPolicy").clone()).unwrap();
    let policies: Api<NetworkPolicy> = h.api();
    let policy = operator::apply(&policies, FIELD_MANAGER, &policy)
        .await
        .expect("the apiserver accepts the chart's NetworkPolicy");

    operator::create_sample_secrets(&h.client, &ns)
        .await
        .unwrap();
    h.create_sample().await.unwrap();
    let pods: Api<Pod> = h.api();
    let selector = policy
        .spec
        .as_ref()
        .and_then(|s| s.pod_selector.as_ref())
        .and_then(|s| s.match_labels.as_ref())
        .expect("a label selector")
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let pods = &pods;
    let selector = &selector;
    let selected = wait::eventually("the capture pod", WAIT, POLL, || async move {
        let list = pods
            .list(&ListParams::default().labels(selector))
            .await
            .ok()?;
        (!list.items.is_empty()).then_some(list.items)
    })
    .await
    .unwrap();
    let names: Vec<_> = selected
        .iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    assert_eq!(
        names,
        ["orders-capture-0"],
        "the policy selects the capture pod"
    );

    // Ready and running, as the kubelet would write it once /readyz passes.
    operator::write_pod_status(pods, "orders-capture-0", ready_pod_status("127.0.0.1"))
        .await
        .expect("pod status");

    let captures = &h.captures;
    let capture = wait::eventually("Ready from the pod", WAIT, POLL, || async move {
        let capture = captures.get(NAME).await.ok()?;
        let status = capture.status.as_ref()?;
        let ready = status.condition("Ready")?;
        (status.observed_generation == capture.metadata.generation
            && ready.status == "True"
            && ready.message.contains("has not answered"))
        .then_some(capture)
    })
    .await
    .unwrap();
    let status = capture.status.as_ref().unwrap();
    let ready = status.condition("Ready").unwrap();
    assert_eq!(ready.reason, "Streaming", "{ready:?}");
    assert!(ready.message.contains("NetworkPolicy"), "{}", ready.message);
    assert_eq!(status.lag_seconds, None, "no lag is made up");
    let lag = status.condition("LagWithinSLA").unwrap();
    assert_eq!(lag.status, "Unknown");
    let harness = &h;
    let warning = wait::eventually("a StatusUnanswered Event", WAIT, POLL, || async move {
        harness.event_with_reason("StatusUnanswered").await.ok()?
    })
    .await
    .unwrap();
    assert_eq!(warning.type_.as_deref(), Some("Warning"));

    KubeEnv::shared()
        .unwrap()
        .kubectl_wait_ready(&ns, NAME)
        .await
        .unwrap();
    drop(silent);
    h.finish().await.unwrap();
}

// --- ServiceMonitor and PrometheusRule, structurally ------------------------------------------

#[test]
fn prometheus_objects_are_well_formed_and_use_exported_metrics() {
    let helm = Helm::new().unwrap();
    let docs = all_features_rendered(&helm);
    let service = one_of_kind(&docs, "Service");
    let service_labels = service["metadata"]["labels"].as_object().unwrap();
    let service_ports: Vec<&str> = service["spec"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();

    let monitors = of_kind(&docs, "ServiceMonitor");
    assert_eq!(monitors.len(), 2, "operator and captures");
    for monitor in &monitors {
        assert_eq!(monitor["apiVersion"], "monitoring.coreos.com/v1");
        assert_eq!(monitor["metadata"]["labels"]["release"], "prometheus");
        let selector = monitor["spec"]["selector"]["matchLabels"]
            .as_object()
            .unwrap();
        let port = monitor["spec"]["endpoints"][0]["port"].as_str().unwrap();
        if monitor["metadata"]["name"]
            .as_str()
            .unwrap()
            .ends_with("-captures")
        {
            // The Service the operator makes for each capture (operator/src/build/service.rs).
            assert_eq!(selector["app.kubernetes.io/name"], "redoline-capture");
            assert_eq!(port, "http");
            assert_eq!(
                monitor["spec"]["namespaceSelector"]["matchNames"],
                json!(["sales", "hr"])
            );
        } else {
            for (k, v) in selector {
                assert_eq!(service_labels.get(k), Some(v), "selector {k}");
            }
            assert!(service_ports.contains(&port), "{port} not a Service port");
        }
    }

    let families = operator_families().unwrap();
    let capture = capture_families().unwrap();
    let rule = one_of_kind(&docs, "PrometheusRule");
    assert_eq!(rule["apiVersion"], "monitoring.coreos.com/v1");
    let mut alerts = BTreeSet::new();
    for group in rule["spec"]["groups"].as_array().unwrap() {
        assert!(group["name"].is_string());
        for r in group["rules"].as_array().unwrap() {
            let name = r["alert"].as_str().expect("alert name");
            alerts.insert(name.to_owned());
            let expr = r["expr"].as_str().expect("expr");
            assert!(
                r["for"].as_str().is_some_and(|f| f.ends_with(['s', 'm'])),
                "{name}: for"
            );
            assert!(
                matches!(
                    r["labels"]["severity"].as_str(),
                    Some("critical" | "warning")
                ),
                "{name}: severity"
            );
            assert_eq!(r["labels"]["team"], "data-platform", "{name}: alertLabels");
            for key in ["summary", "description"] {
                assert!(
                    r["annotations"][key]
                        .as_str()
                        .is_some_and(|s| !s.is_empty()),
                    "{name}: {key}"
                );
            }
            // Balanced brackets: a broken template would show here first.
            for (open, close) in [('(', ')'), ('{', '}'), ('[', ']')] {
                assert_eq!(
                    expr.matches(open).count(),
                    expr.matches(close).count(),
                    "{name}: {expr}"
                );
            }
            let names = redoline_names(expr);
            if names.is_empty() {
                // Only "is the operator scraped at all", from Prometheus' own `up` series of the
                // operator's metrics Service (the ServiceMonitor's job).
                assert!(
                    expr.starts_with("absent(up{job=\"redoline-metrics\","),
                    "{name} uses no redoline metric: {expr}"
                );
            }
            for metric in names {
                assert!(
                    is_exported(&families, &metric) || is_exported(&capture, &metric),
                    "{name}: {metric} is exported neither by the operator nor by the capture"
                );
            }
        }
    }
    assert_eq!(alerts, ALERTS.iter().map(|a| a.to_string()).collect());
}

// --- against the apiserver -------------------------------------------------------------------

/// Minimal CRDs for the two Prometheus Operator kinds the chart can render, without a schema for
/// their spec: enough for the apiserver to accept (and dry-run) the objects.
fn prometheus_operator_stubs() -> Vec<CustomResourceDefinition> {
    [
        ("servicemonitors", "ServiceMonitor", "servicemonitor"),
        ("prometheusrules", "PrometheusRule", "prometheusrule"),
    ]
    .into_iter()
    .map(|(plural, kind, singular)| {
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.monitoring.coreos.com")},
            "spec": {
                "group": "monitoring.coreos.com",
                "scope": "Namespaced",
                "names": {"plural": plural, "singular": singular, "kind": kind, "listKind": format!("{kind}List")},
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {
                        "type": "object",
                        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
                    }}
                }]
            }
        }))
        .unwrap()
    })
    .collect()
}

fn kubectl_ok(env: &KubeEnv, args: &[&str], stdin: Option<&str>) -> String {
    use std::io::Write;
    let mut cmd = env.kubectl();
    cmd.args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.unwrap_or("").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "kubectl {args:?}:\n{}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn rendered_objects_pass_server_side_dry_run() {
    let env = KubeEnv::shared().expect("control plane");
    let client = env.client().await.unwrap();
    for crd in prometheus_operator_stubs() {
        apply_crd(&client, &crd).await.unwrap();
    }
    let release_ns = env.namespace("helm-dry-run").await.unwrap();
    let watched = [
        env.namespace("helm-dry-run-a").await.unwrap(),
        env.namespace("helm-dry-run-b").await.unwrap(),
    ];
    let watch_list = format!(
        "watchNamespaces={{{},{}}}",
        watched[0].name, watched[1].name
    );
    let helm = Helm::new().unwrap();
    let all = all_features();
    let value_sets: [(&str, Vec<&str>); 2] = [
        ("defaults", vec![]),
        (
            "all features",
            vec!["--values", all.to_str().unwrap(), "--set", &watch_list],
        ),
    ];
    for (what, extra) in value_sets {
        let rendered = helm.template(&release_ns.name, &extra).unwrap();
        let docs = documents(&rendered);
        let out = kubectl_ok(
            env,
            &[
                "apply",
                "--server-side",
                "--dry-run=server",
                "--validate=strict",
                "--field-manager",
                FIELD_MANAGER,
                "-f",
                "-",
            ],
            Some(&rendered),
        );
        // One line per object: "<kind>.<group>/<name> serverside-applied (server dry run)".
        for doc in &docs {
            let name = doc["metadata"]["name"].as_str().unwrap();
            let kind = doc["kind"].as_str().unwrap().to_ascii_lowercase();
            assert!(
                out.lines().any(|l| l.starts_with(&kind)
                    && l.contains(&format!("/{name} "))
                    && l.contains("server dry run")),
                "{what}: {kind}/{name} not dry-run applied:\n{out}"
            );
        }
        let kinds: BTreeSet<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
        let expected: &[&str] = if what == "defaults" {
            &[
                "ClusterRole",
                "ClusterRoleBinding",
                "Deployment",
                "Role",
                "RoleBinding",
                "Service",
                "ServiceAccount",
            ]
        } else {
            &[
                "ClusterRole",
                "ClusterRoleBinding",
                "Deployment",
                "NetworkPolicy",
                "PodDisruptionBudget",
                "PrometheusRule",
                "Role",
                "RoleBinding",
                "Service",
                "ServiceAccount",
                "ServiceMonitor",
            ]
        };
        assert_eq!(kinds, expected.iter().copied().collect(), "{what}");
        if what != "defaults" {
            // One RoleBinding per watched namespace, plus the leader-election one.
            let bindings: BTreeSet<&str> = of_kind(&docs, "RoleBinding")
                .iter()
                .map(|b| b["metadata"]["namespace"].as_str().unwrap())
                .collect();
            let expected: BTreeSet<&str> = [
                release_ns.name.as_str(),
                watched[0].name.as_str(),
                watched[1].name.as_str(),
            ]
            .into();
            assert_eq!(bindings, expected);
        }
    }
    release_ns.delete().await;
    for ns in watched {
        ns.delete().await;
    }
}

fn restricted(container: &k8s_openapi::api::core::v1::Container, pod_sc: &Value) {
    let sc = serde_json::to_value(container.security_context.as_ref().unwrap()).unwrap();
    assert_eq!(sc["allowPrivilegeEscalation"], false, "{sc}");
    assert_eq!(sc["readOnlyRootFilesystem"], true, "{sc}");
    assert_eq!(sc["runAsNonRoot"], true, "{sc}");
    assert_eq!(sc["capabilities"]["drop"], json!(["ALL"]), "{sc}");
    assert_eq!(sc["seccompProfile"]["type"], "RuntimeDefault", "{sc}");
    assert_eq!(pod_sc["runAsNonRoot"], true, "{pod_sc}");
    assert_eq!(pod_sc["runAsUser"], 65532, "{pod_sc}");
    assert_eq!(
        pod_sc["seccompProfile"]["type"], "RuntimeDefault",
        "{pod_sc}"
    );
}

#[tokio::test]
async fn helm_install_creates_the_operator_and_its_rbac() {
    let env = KubeEnv::shared().expect("control plane");
    let client = env.client().await.unwrap();
    // Helm creates the chart's CRD only when it is absent; other test binaries sharing this
    // control plane apply the same CRD, so it is put in place first to leave no create race.
    apply_crd(&client, &redoline_crds::crd()).await.unwrap();
    let ns = env.namespace("helm-install").await.unwrap();
    // The namespace enforces the "restricted" Pod Security Standard: kube-controller-manager's
    // ReplicaSet controller can create the operator's pod only if the chart's defaults meet it.
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .patch(
            &ns.name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {
                "pod-security.kubernetes.io/enforce": "restricted",
                "pod-security.kubernetes.io/enforce-version": "latest",
            }}})),
        )
        .await
        .unwrap();

    let helm = Helm::new().unwrap();
    let kubeconfig = env.kubeconfig_path().to_owned();
    let release = "redoline";
    let out = helm.install(release, &ns.name, &kubeconfig, &[]).unwrap();
    let notes = String::from_utf8_lossy(&out.stdout);
    assert!(
        notes.contains("redoline-operator") && notes.contains(&ns.name),
        "NOTES:\n{notes}"
    );

    let deployment = Api::<Deployment>::namespaced(client.clone(), &ns.name)
        .get(release)
        .await
        .expect("the operator Deployment");
    let spec = deployment.spec.unwrap().template.spec.unwrap();
    assert_eq!(spec.service_account_name.as_deref(), Some(release));
    let container = &spec.containers[0];
    let pod_sc = serde_json::to_value(spec.security_context.as_ref().unwrap()).unwrap();
    restricted(container, &pod_sc);
    let args = container.args.clone().unwrap();
    assert!(
        args.contains(&"--leader-election=true".to_owned()),
        "{args:?}"
    );
    assert_eq!(args[0], "run");

    Api::<ServiceAccount>::namespaced(client.clone(), &ns.name)
        .get(release)
        .await
        .expect("the ServiceAccount");
    let cluster_name = format!("{}-{release}", ns.name);
    let cluster_name = &cluster_name[..cluster_name.len().min(63)];
    let cluster_role = Api::<ClusterRole>::all(client.clone())
        .get(cluster_name)
        .await
        .expect("the ClusterRole");
    let source =
        documents(&std::fs::read_to_string(repo().join("operator/rbac/clusterrole.yaml")).unwrap());
    assert_eq!(
        serde_json::to_value(cluster_role.rules.unwrap()).unwrap(),
        cluster_role_rules(&source)[0]
    );
    let binding = Api::<ClusterRoleBinding>::all(client.clone())
        .get(cluster_name)
        .await
        .expect("the ClusterRoleBinding");
    assert_eq!(binding.role_ref.name, cluster_name);
    let subject = &binding.subjects.unwrap()[0];
    assert_eq!(
        (subject.kind.as_str(), subject.name.as_str()),
        ("ServiceAccount", release)
    );
    assert_eq!(subject.namespace.as_deref(), Some(ns.name.as_str()));
    let role = Api::<Role>::namespaced(client.clone(), &ns.name)
        .get(&format!("{release}-leader-election"))
        .await
        .expect("the leader-election Role");
    assert_eq!(
        serde_json::to_value(role.rules.unwrap()).unwrap(),
        one_of_kind(&source, "Role")["rules"]
    );
    Api::<RoleBinding>::namespaced(client.clone(), &ns.name)
        .get(&format!("{release}-leader-election"))
        .await
        .expect("the leader-election RoleBinding");

    // The pod passes the restricted admission (it stays Pending: it does not tolerate the test node's taint).
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns.name);
    let selector = format!("app.kubernetes.io/instance={release}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let list = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .unwrap();
        if let Some(pod) = list.items.first() {
            let spec = pod.spec.as_ref().unwrap();
            let pod_sc = serde_json::to_value(spec.security_context.as_ref().unwrap()).unwrap();
            restricted(&spec.containers[0], &pod_sc);
            break;
        }
        if Instant::now() > deadline {
            let events = kubectl_ok(env, &["-n", &ns.name, "get", "events"], None);
            panic!("no operator pod within 60 s (refused by Pod Security admission?):\n{events}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    helm.uninstall(release, &ns.name, &kubeconfig).unwrap();
    assert!(
        Api::<ClusterRole>::all(client.clone())
            .get_opt(cluster_name)
            .await
            .unwrap()
            .is_none(),
        "uninstall leaves no cluster-scoped object behind"
    );
    ns.delete().await;
}

/// `kubectl auth can-i VERB RESOURCE` as `account` (`system:serviceaccount:NS:NAME`), in
/// `namespace` (cluster-wide when `None`).
fn can_i(
    env: &KubeEnv,
    account: &str,
    verb: &str,
    resource: &str,
    namespace: Option<&str>,
) -> bool {
    let mut cmd = env.kubectl();
    // kubectl names a subresource with a flag of its own.
    let (resource, subresource) = match resource.split_once('/') {
        Some((resource, subresource)) if resource.contains('.') => (resource, Some(subresource)),
        _ => (resource, None),
    };
    cmd.args(["auth", "can-i", verb, resource, "--as", account]);
    if let Some(subresource) = subresource {
        cmd.args(["--subresource", subresource]);
    }
    match namespace {
        Some(namespace) => cmd.args(["--namespace", namespace]),
        None => cmd.arg("--all-namespaces"),
    };
    let out = cmd.output().unwrap();
    let answer = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(
        answer == "yes" || answer == "no",
        "kubectl auth can-i {verb} {resource}: {answer} {}",
        stderr(&out)
    );
    answer == "yes"
}

/// The namespace-scoped install, the documented least-privilege option: the operator's account
/// can do in the watched namespace what a reconcile and a spill resize need (the StorageClass
/// read included, which only a ClusterRoleBinding can grant), nothing with Secrets anywhere (not
/// even there), and nothing with claims anywhere else.
#[tokio::test]
async fn a_namespace_scoped_install_grants_a_resize_and_nothing_beyond_its_namespaces() {
    let env = KubeEnv::shared().expect("control plane");
    let client = env.client().await.unwrap();
    apply_crd(&client, &redoline_crds::crd()).await.unwrap();
    let ns = env.namespace("helm-scoped").await.unwrap();
    let watched = env.namespace("helm-scoped-sales").await.unwrap();
    let other = env.namespace("helm-scoped-other").await.unwrap();
    let helm = Helm::new().unwrap();
    let kubeconfig = env.kubeconfig_path().to_owned();
    let release = "redoline";
    let watch_list = format!("watchNamespaces={{{}}}", watched.name);
    helm.install(release, &ns.name, &kubeconfig, &["--set", &watch_list])
        .unwrap();
    let account = format!("system:serviceaccount:{}:{release}", ns.name);
    let account = account.as_str();
    let sales = Some(watched.name.as_str());
    for (verb, resource) in [
        ("watch", "oraclecaptures.redoline.io"),
        ("patch", "oraclecaptures.redoline.io/status"),
        ("patch", "statefulsets.apps"),
        ("delete", "statefulsets.apps"),
        ("list", "events"),
        ("watch", "events"),
        ("patch", "persistentvolumeclaims"),
        ("create", "events.events.k8s.io"),
    ] {
        assert!(
            can_i(env, account, verb, resource, sales),
            "{verb} {resource} in the watched namespace"
        );
    }
    assert!(
        can_i(env, account, "get", "storageclasses.storage.k8s.io", None),
        "the StorageClass read of a spill resize"
    );
    let elsewhere = Some(other.name.as_str());
    for (verb, resource) in [
        ("get", "secrets"),
        ("list", "secrets"),
        ("delete", "persistentvolumeclaims"),
        ("patch", "statefulsets.apps"),
        ("watch", "oraclecaptures.redoline.io"),
    ] {
        assert!(
            !can_i(env, account, verb, resource, elsewhere),
            "{verb} {resource} elsewhere"
        );
        assert!(
            !can_i(env, account, verb, resource, None),
            "{verb} {resource} cluster-wide"
        );
    }
    for (verb, resource) in [
        // The operator reads no Secret: the kubelet mounts them, the capture follows them.
        ("get", "secrets"),
        ("list", "secrets"),
        ("watch", "secrets"),
        // A spill recreation deletes the StatefulSet, which owns its claims.
        ("delete", "persistentvolumeclaims"),
        ("create", "storageclasses.storage.k8s.io"),
        ("create", "pods/exec"),
        ("get", "nodes"),
        ("*", "*"),
    ] {
        assert!(
            !can_i(env, account, verb, resource, sales),
            "{verb} {resource}"
        );
    }

    helm.uninstall(release, &ns.name, &kubeconfig).unwrap();
    ns.delete().await;
    watched.delete().await;
    other.delete().await;
}
