#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! What a person sees with `kubectl`: the real `kubectl get ocap` and `kubectl describe
//! oraclecapture`, run against the test control plane while the operator runs in this process,
//! for four captures in the states people ask about:
//!
//! | capture | state | how the test gets it there |
//! |---|---|---|
//! | `orders` | Ready, lag within the SLA | a running, ready capture on 127.0.0.1 answering `/status` |
//! | `invoices` | Ready, lag over the SLA | the same on 127.0.0.2, with 500 s of lag (SLA 120 s) |
//! | `payments` | PrerequisitesMet=False | the doctor init container ended with a CDC-1002 report |
//! | `shipments` | Stalled after CDC-4001, lag estimated over the SLA | it streamed on 127.0.0.3, then ended with a CDC-4001 stop |
//!
//! The pods do not run (they do not tolerate the test node's taint): the test writes their status
//! (`pods/status`) and serves `/status` itself, as `operator_reconcile.rs` does, to show every
//! state side by side at once.
//!
//! The test asserts what a reader needs (printer columns with values, conditions whose reasons
//! and messages start with the stop code, fix statements, Events), then compares the output with
//! the samples committed in `docs/kubectl-output.md`, after normalising what changes from run to
//! run (ages, timestamps, UIDs, resourceVersions, column padding). `REDOLINE_BLESS=1` rewrites the
//! samples in that file instead:
//!
//! ```sh
//! REDOLINE_BLESS=1 cargo test -p redoline-tests --test it -- kubectl_output::
//! ```

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::events::v1::Event;
use kube::api::ListParams;
use redoline_crds::OracleCapture;
use redoline_tests::k8s::KubeEnv;
use redoline_tests::operator::{
    self, Harness, container_status, has_condition, observes_its_generation, ready_pod_status,
    terminated,
};
use redoline_tests::wait;
use serde_json::json;

const WAIT: Duration = Duration::from_secs(90);
const POLL: Duration = Duration::from_millis(250);

/// Rewrites the samples in `docs/kubectl-output.md` instead of comparing with them.
const BLESS_ENV: &str = "REDOLINE_BLESS";
/// The namespace shown in the samples instead of the test's generated one.
const SAMPLE_NAMESPACE: &str = "sales";
/// The operator replica recorded in Events (`reportingInstance`), fixed so runs do not differ.
const INSTANCE: &str = "redoline-operator-7c9d4b6f8-x2l5q";

/// A doctor report as `redoline-capture doctor` writes it (failing checks first), with the checks
/// and fix statements of `capture/src/doctor/mod.rs`.
const DOCTOR_REPORT: &str = r#"{"code":"CDC-1002","reason":"PrerequisitesNotMet","message":"prerequisites not met: supplemental logging, table SALES.ORDER_LINES, privilege LOGMINING; run the fix statements in details.checks","at":"2026-11-29T09:12:04Z","details":{"checks":[{"name":"supplemental logging","ok":false,"message":"minimal supplemental logging is off: LogMiner cannot render changes completely","fix":"ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;"},{"name":"table SALES.ORDER_LINES","ok":false,"message":"the table logs no key columns, so updates cannot name their row: it is rejected","fix":"ALTER TABLE SALES.ORDER_LINES ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;"},{"name":"privilege LOGMINING","ok":false,"message":"not granted","fix":"GRANT LOGMINING TO REDOLINE;"},{"name":"connection","ok":true,"message":"connected to ORDERS (DBID 2840129931), Oracle 19.22.0.0.0, a container database"},{"name":"archivelog","ok":true,"message":"the database is in ARCHIVELOG mode"}]}}"#;

/// A CDC-4001 stop as the capture writes it.
const SPILL_STOP: &str = r#"{"code":"CDC-4001","reason":"SpillCapacityExceeded","message":"spill files would exceed spec.buffer.spill.maxBytes (20Gi)","at":"2026-11-29T11:40:27Z","details":{"transactions":[{"xid":"0a001b00c2030000","user":"BATCH","firstScn":7102,"events":5000000,"heapBytes":1048576,"diskBytes":21474836480},{"xid":"04000e00a1120000","user":"APP","firstScn":7290,"events":1200,"heapBytes":262144,"diskBytes":0}]}}"#;

/// Runs the samples and checks them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_and_describe_read_well_and_match_the_docs() {
    let servers = StatusServers::start();
    let h = Harness::start("kubectl-output", |settings| {
        settings.status_poll_interval = Duration::from_millis(500);
        settings.status_port = servers.port;
        settings.status_timeout = Duration::from_secs(1);
        settings.instance = Some(INSTANCE.to_owned());
    })
    .await
    .expect("controller started over a fresh namespace");
    operator::create_sample_secrets(&h.client, &h.ns.name)
        .await
        .expect("Secrets created");
    for name in ["orders", "invoices", "payments", "shipments"] {
        let mut capture = operator::sample_in(&h.ns.name).expect("sample");
        capture.metadata.name = Some(name.to_owned());
        capture.spec.kafka.topic_prefix = name.to_owned();
        if name == "orders" {
            capture.spec.reposition = Some(redoline_crds::v1alpha1::Reposition {
                id: "restore-2026-11-29".into(),
                scn: 5_100_000,
            });
        }
        operator::create_capture(&h.client, &capture)
            .await
            .expect("OracleCapture created");
    }
    let s = Samples { h: &h };
    for name in ["orders", "invoices", "payments", "shipments"] {
        s.wait_for_pod(name).await;
    }

    // orders: streaming within the SLA, after a reposition this run applied.
    servers.set(1, repositioned(streaming(5_118_204, 5_117_950, 4.5)));
    s.write_pod_status("orders", ready_pod_status("127.0.0.1"))
        .await;
    // invoices: streaming, 500 s behind (SLA 120 s).
    servers.set(2, streaming(5_116_880, 5_116_002, 500.0));
    s.write_pod_status("invoices", ready_pod_status("127.0.0.2"))
        .await;
    // payments: the doctor found three prerequisites missing.
    s.write_pod_status(
        "payments",
        json!({
            "phase": "Pending",
            "initContainerStatuses": [container_status("doctor", terminated(1, DOCTOR_REPORT), false)],
            "containerStatuses": [container_status("capture", json!({"waiting": {"reason": "PodInitializing"}}), false)],
        }),
    )
    .await;
    // shipments: streamed, then stopped with CDC-4001 (the position stays in the status).
    servers.set(3, streaming(5_090_311, 5_089_977, 1.2));
    s.write_pod_status("shipments", ready_pod_status("127.0.0.3"))
        .await;
    s.wait_for("shipments", "Ready=True", |c| {
        has_condition(c, "Ready", "True", "Streaming")
    })
    .await;
    s.write_pod_status(
        "shipments",
        json!({
            "phase": "Running",
            "podIP": "127.0.0.3",
            "podIPs": [{"ip": "127.0.0.3"}],
            "initContainerStatuses": [container_status("doctor", terminated(0, ""), false)],
            "containerStatuses": [container_status("capture", terminated(3, SPILL_STOP), false)],
        }),
    )
    .await;

    // Each capture settles: its conditions, and the Events they call for.
    s.wait_for("orders", "Streaming within the SLA", |c| {
        has_condition(c, "Ready", "True", "Streaming")
            && has_condition(c, "LagWithinSLA", "True", "LagWithinSLA")
    })
    .await;
    s.wait_for("invoices", "LagSLABreached", |c| {
        has_condition(c, "Ready", "True", "Streaming")
            && has_condition(c, "LagWithinSLA", "False", "LagSLABreached")
    })
    .await;
    s.wait_for("payments", "PrerequisitesNotMet", |c| {
        has_condition(c, "PrerequisitesMet", "False", "PrerequisitesNotMet")
    })
    .await;
    // No capture streams: the lag is estimated from the position's time it last reported.
    s.wait_for("shipments", "Stalled=SpillCapacityExceeded", |c| {
        has_condition(c, "Stalled", "True", "SpillCapacityExceeded")
            && has_condition(c, "LagWithinSLA", "False", "LagSLABreached")
    })
    .await;
    let expected_events: [(&str, &[&str]); 4] = [
        ("orders", &["PrerequisitesMet", "RepositionApplied"]),
        ("invoices", &["PrerequisitesMet", "LagSLABreached"]),
        ("payments", &["PrerequisitesNotMet"]),
        (
            "shipments",
            &[
                "PrerequisitesMet",
                "SpillCapacityExceeded",
                "LagSLABreached",
            ],
        ),
    ];
    for (name, reasons) in expected_events {
        s.wait_for_events(name, reasons).await;
    }
    // Every capture's StatefulSet has rolled out, so Reconciling (and its Event) no longer moves.
    for name in ["orders", "invoices", "payments", "shipments"] {
        s.wait_for(name, "Reconciling=False", |c| {
            has_condition(c, "Reconciling", "False", "RolledOut")
        })
        .await;
        s.wait_for_events(name, &["RolledOut"]).await;
    }

    let mut samples = BTreeMap::new();
    let get = s.kubectl(&["get", "ocap"]).await;
    check_get(&get);
    samples.insert("get".to_owned(), get);
    for name in ["orders", "invoices", "payments", "shipments"] {
        let describe = s.kubectl(&["describe", "oraclecapture", name]).await;
        check_describe(name, &describe);
        samples.insert(format!("describe {name}"), describe);
    }
    h.finish().await.expect("controller stopped");

    compare_or_bless(&samples);
}

/// `kubectl get ocap`: the printer columns, with values.
fn check_get(output: &str) {
    let mut lines = output.lines();
    let header = split_columns(lines.next().expect("a header"));
    assert_eq!(
        header,
        [
            "NAME",
            "READY",
            "REASON",
            "STOP",
            "LAG",
            "COMMIT SCN",
            "AGE"
        ],
        "{output}"
    );
    let rows: BTreeMap<String, String> = lines
        .map(|l| {
            (
                l.split_whitespace().next().unwrap().to_owned(),
                l.to_owned(),
            )
        })
        .collect();
    let row = |name: &str| -> Vec<&str> {
        rows.get(name)
            .unwrap_or_else(|| panic!("no row {name}:\n{output}"))
            .split_whitespace()
            .collect()
    };
    // NAME READY REASON [STOP] [LAG] [COMMIT SCN] AGE: empty cells leave no token.
    assert_eq!(
        row("orders")[..5],
        ["orders", "True", "Streaming", "4.5", "5118204"]
    );
    assert_eq!(
        row("invoices")[..5],
        ["invoices", "True", "Streaming", "500", "5116880"]
    );
    assert_eq!(
        row("payments")[..4],
        ["payments", "False", "PrerequisitesNotMet", "CDC-1002"]
    );
    assert_eq!(
        row("shipments")[..5],
        [
            "shipments",
            "False",
            "SpillCapacityExceeded",
            "CDC-4001",
            "5090311"
        ]
    );
    for (name, tokens) in ["orders", "invoices", "payments", "shipments"].map(|n| (n, row(n))) {
        let age = tokens.last().unwrap();
        assert!(is_age(age), "{name}: AGE {age:?}\n{output}");
    }
}

/// `kubectl describe oraclecapture NAME`: conditions a person can act on, and Events.
fn check_describe(name: &str, output: &str) {
    let d = Describe::parse(output);
    for type_ in ["Ready", "PrerequisitesMet", "Stalled", "Reconciling"] {
        d.condition(type_);
    }
    let events = d.events();
    assert!(!events.is_empty(), "{name}: no Events:\n{output}");
    for e in &events {
        assert_eq!(e.from, "redoline-operator", "{output}");
    }
    let event = |reason: &str| -> &EventRow {
        events
            .iter()
            .find(|e| e.reason == reason)
            .unwrap_or_else(|| panic!("{name}: no Event {reason}:\n{output}"))
    };
    match name {
        "orders" => {
            d.expect_condition("Ready", "True", "Streaming", "the capture is streaming");
            d.expect_condition(
                "LagWithinSLA",
                "True",
                "LagWithinSLA",
                "lag 4.5s is within the SLA of 120s",
            );
            d.expect_condition("Stalled", "False", "NoStop", "");
            assert!(has_line(output, "Commit Scn: 5118204"), "{output}");
            assert_eq!(event("PrerequisitesMet").type_, "Normal");
            // The reposition the capture applied: in the status and as a Normal Event.
            assert!(has_line(output, "Id: restore-2026-11-29"), "{output}");
            assert!(has_line(output, "State: Applied"), "{output}");
            let applied = event("RepositionApplied");
            assert_eq!(applied.type_, "Normal");
            assert!(applied.message.contains("SCN 5100000"), "{output}");
        }
        "invoices" => {
            d.expect_condition(
                "LagWithinSLA",
                "False",
                "LagSLABreached",
                "lag 500.0s exceeds the SLA of 120s",
            );
            let e = event("LagSLABreached");
            assert_eq!(e.type_, "Warning");
            assert!(e.message.contains("exceeds the SLA of 120s"), "{output}");
        }
        "payments" => {
            let message = d.expect_condition(
                "PrerequisitesMet",
                "False",
                "PrerequisitesNotMet",
                "CDC-1002: prerequisites not met",
            );
            for fix in [
                "Fix: ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;",
                "Fix: ALTER TABLE SALES.ORDER_LINES ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;",
                "Fix: GRANT LOGMINING TO REDOLINE;",
            ] {
                assert!(message.contains(fix), "{fix} missing:\n{output}");
            }
            assert!(!message.contains("archivelog"), "{output}");
            d.expect_condition("Stalled", "True", "PrerequisitesNotMet", "CDC-1002: ");
            d.expect_condition("Ready", "False", "PrerequisitesNotMet", "CDC-1002: ");
            let e = event("PrerequisitesNotMet");
            assert_eq!(e.type_, "Warning");
            assert!(e.message.starts_with("CDC-1002: "), "{output}");
        }
        "shipments" => {
            let message = d.expect_condition(
                "Stalled",
                "True",
                "SpillCapacityExceeded",
                "CDC-4001: spill files would exceed spec.buffer.spill.maxBytes (20Gi)",
            );
            assert!(
                message.contains("xid 0a001b00c2030000 user BATCH first SCN 7102"),
                "{output}"
            );
            d.expect_condition("Ready", "False", "SpillCapacityExceeded", "CDC-4001: ");
            d.expect_condition(
                "PrerequisitesMet",
                "True",
                "PrerequisitesMet",
                "redoline-capture doctor passed every check",
            );
            for line in [
                "Last Stop:",
                "Code: CDC-4001",
                "Reason: SpillCapacityExceeded",
                "Phase: Stalled",
                "Commit Scn: 5090311",
            ] {
                assert!(has_line(output, line), "{line:?} missing:\n{output}");
            }
            let e = event("SpillCapacityExceeded");
            assert_eq!(e.type_, "Warning");
            assert!(e.message.starts_with("CDC-4001: "), "{output}");
        }
        other => panic!("unexpected capture {other}"),
    }
}

/// The parts of `kubectl describe` output the checks read.
struct Describe<'a> {
    output: &'a str,
    /// Each condition as its `Key: value` lines (a multi-line message joined by newlines).
    conditions: Vec<BTreeMap<String, String>>,
}

/// One row of the Events table.
#[derive(Debug)]
struct EventRow {
    type_: String,
    reason: String,
    from: String,
    message: String,
}

impl<'a> Describe<'a> {
    fn parse(output: &'a str) -> Describe<'a> {
        let mut conditions = Vec::new();
        let mut lines = output.lines().skip_while(|l| l.trim() != "Conditions:");
        let _ = lines.next();
        let mut current: BTreeMap<String, String> = BTreeMap::new();
        let mut last_key = String::new();
        let mut indent = None;
        for line in lines {
            let trimmed = line.trim_start();
            let depth = line.len() - trimmed.len();
            // kubectl prints the second and later lines of a multi-line value from column 0.
            let continuation = depth == 0 && !trimmed.starts_with("Events:");
            let item_indent = *indent.get_or_insert(depth);
            if depth < item_indent && !continuation {
                break;
            }
            match trimmed.split_once(':') {
                Some((key, value)) if !continuation && key_is_known(key) => {
                    if key == "Last Transition Time" && !current.is_empty() {
                        conditions.push(std::mem::take(&mut current));
                    }
                    last_key = key.to_owned();
                    current.insert(key.to_owned(), value.trim().to_owned());
                }
                _ => {
                    let value = current.entry(last_key.clone()).or_default();
                    value.push('\n');
                    value.push_str(line.trim());
                }
            }
        }
        if !current.is_empty() {
            conditions.push(current);
        }
        Describe { output, conditions }
    }

    fn condition(&self, type_: &str) -> &BTreeMap<String, String> {
        self.conditions
            .iter()
            .find(|c| c.get("Type").map(String::as_str) == Some(type_))
            .unwrap_or_else(|| panic!("no condition {type_}:\n{}", self.output))
    }

    /// Checks a condition's status and reason, and that its message starts with `message`;
    /// returns the message.
    fn expect_condition(&self, type_: &str, status: &str, reason: &str, message: &str) -> String {
        let c = self.condition(type_);
        let field = |k: &str| c.get(k).cloned().unwrap_or_default();
        assert_eq!(
            (field("Status").as_str(), field("Reason").as_str()),
            (status, reason),
            "condition {type_}:\n{}",
            self.output
        );
        let text = field("Message");
        assert!(
            text.starts_with(message),
            "condition {type_}: message {text:?} should start with {message:?}:\n{}",
            self.output
        );
        text
    }

    fn events(&self) -> Vec<EventRow> {
        let mut rows: Vec<EventRow> = Vec::new();
        for line in event_lines(self.output) {
            if !line.starts_with(' ') {
                let row = rows
                    .last_mut()
                    .expect("a continuation follows an Event row");
                row.message.push('\n');
                row.message.push_str(line.trim());
                continue;
            }
            let cells = split_columns(line);
            assert_eq!(cells.len(), 5, "an Event row has 5 cells: {line:?}");
            rows.push(EventRow {
                type_: cells[0].clone(),
                reason: cells[1].clone(),
                from: cells[3].clone(),
                message: cells[4].clone(),
            });
        }
        rows
    }
}

/// The lines of the Events table below its header (a multi-line message continues on lines that
/// start in column 0; rows are indented).
fn event_lines(output: &str) -> impl Iterator<Item = &str> {
    output
        .lines()
        .skip_while(|l| !l.starts_with("Events:"))
        .skip_while(|l| !l.trim_start().starts_with("----"))
        .skip(1)
        .filter(|l| !l.trim().is_empty())
}

/// Whether `output` has a line reading `line`, padding aside.
fn has_line(output: &str, line: &str) -> bool {
    output
        .lines()
        .any(|l| l.split_whitespace().collect::<Vec<_>>().join(" ") == line)
}

fn key_is_known(key: &str) -> bool {
    matches!(
        key,
        "Last Transition Time" | "Message" | "Observed Generation" | "Reason" | "Status" | "Type"
    )
}

/// Cells of a tabwriter row: separated by two or more spaces.
fn split_columns(line: &str) -> Vec<String> {
    line.trim()
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .collect()
}

/// kubectl's short durations: `5s`, `2m3s`, `4h`, `12d`, `<invalid>`.
fn is_age(text: &str) -> bool {
    text == "<invalid>"
        || (!text.is_empty()
            && text.chars().next().is_some_and(|c| c.is_ascii_digit())
            && text
                .chars()
                .all(|c| c.is_ascii_digit() || "smhdy".contains(c)))
}

// --- the committed samples ----------------------------------------------------------------

fn compare_or_bless(samples: &BTreeMap<String, String>) {
    redoline_tests::samples::compare_or_bless(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/kubectl-output.md"),
        samples,
        BLESS_ENV,
        &format!("{BLESS_ENV}=1 cargo test -p redoline-tests --test it -- kubectl_output::"),
        normalise,
    )
    .unwrap_or_else(|e| panic!("kubectl's output: {e:#}"));
}

/// Output with what changes from run to run replaced: ages, timestamps, UIDs, resourceVersions;
/// padding collapsed (column widths follow the values); Event rows sorted (kubectl lists Events
/// of the same second in the order it finds them).
fn normalise(key: &str, text: &str) -> String {
    // Indentation is kept (it is fixed); runs of spaces inside a line become one.
    let collapse = |line: &str| {
        let indent = &line[..line.len() - line.trim_start().len()];
        format!(
            "{indent}{}",
            line.split_whitespace().collect::<Vec<_>>().join(" ")
        )
    };
    if key == "get" {
        return text
            .lines()
            .enumerate()
            .map(|(i, line)| {
                let mut cells: Vec<&str> = line.split_whitespace().collect();
                if i > 0 && !cells.is_empty() {
                    cells.pop();
                    cells.push("<age>");
                }
                cells.join(" ")
            })
            .collect::<Vec<_>>()
            .join("\n");
    }
    let (head, events) = match text.find("\nEvents:") {
        Some(at) => text.split_at(at + 1),
        None => (text, ""),
    };
    let mut out: Vec<String> = head
        .lines()
        .map(|line| {
            let trimmed = line.trim();
            match trimmed.split_once(':') {
                Some((key, _))
                    if matches!(
                        key,
                        "Creation Timestamp" | "Last Transition Time" | "Resource Version" | "UID"
                    ) =>
                {
                    let indent = &line[..line.len() - line.trim_start().len()];
                    format!("{indent}{key}: <volatile>")
                }
                _ => collapse(line),
            }
        })
        .collect();
    out.extend(
        events
            .lines()
            .take_while(|l| !l.trim_start().starts_with("----"))
            .map(collapse),
    );
    let mut rows: Vec<String> = Vec::new();
    for line in event_lines(events) {
        if !line.starts_with(' ') {
            if let Some(row) = rows.last_mut() {
                row.push('\n');
                row.push_str(&collapse(line));
            }
            continue;
        }
        let mut cells = split_columns(line);
        if cells.len() == 5 {
            cells[2] = "<age>".to_owned();
        }
        rows.push(format!("  {}", cells.join(" ")));
    }
    rows.sort();
    out.extend(rows);
    out.join("\n")
}

// --- driving the captures ------------------------------------------------------------------

struct Samples<'a> {
    h: &'a Harness,
}

impl Samples<'_> {
    async fn wait_for_pod(&self, name: &str) {
        let pods = self.h.api::<Pod>();
        let pod = format!("{name}-capture-0");
        wait::eventually(&format!("pod {pod}"), WAIT, POLL, || async {
            pods.get_opt(&pod).await.expect("get pod")
        })
        .await
        .expect("the capture pod");
    }

    /// Writes a capture pod's status, as the kubelet would.
    async fn write_pod_status(&self, name: &str, status: serde_json::Value) {
        let pod = format!("{name}-capture-0");
        operator::write_pod_status(&self.h.api::<Pod>(), &pod, status)
            .await
            .unwrap_or_else(|e| panic!("{e:#}"));
    }

    /// Polls the OracleCapture until its status describes its generation and `accept` holds.
    async fn wait_for(
        &self,
        name: &str,
        what: &str,
        accept: impl Fn(&OracleCapture) -> bool,
    ) -> OracleCapture {
        let what = format!("{name}: {what}");
        operator::wait_for_capture(&self.h.captures, name, &what, WAIT, POLL, |c| {
            observes_its_generation(c) && accept(c)
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Waits until Events with each of `reasons` exist about capture `name`.
    async fn wait_for_events(&self, name: &str, reasons: &[&str]) {
        let events = self.h.api::<Event>();
        let (events, name) = (&events, name);
        wait::eventually(
            &format!("{name}: Events {reasons:?}"),
            WAIT,
            POLL,
            || async move {
                let list = events.list(&ListParams::default()).await.expect("Events");
                let all = reasons.iter().all(|reason| {
                    list.items.iter().any(|e| {
                        e.reason.as_deref() == Some(reason)
                            && e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name)
                    })
                });
                all.then_some(())
            },
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Runs kubectl in the test namespace; the output shows the namespace as [`SAMPLE_NAMESPACE`].
    async fn kubectl(&self, args: &[&str]) -> String {
        let env = KubeEnv::shared().expect("control plane");
        let mut cmd = env.kubectl();
        cmd.arg("-n").arg(&self.h.ns.name).args(args);
        let output = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .unwrap()
            .expect("kubectl runs");
        let stdout = String::from_utf8(output.stdout).expect("UTF-8");
        assert!(
            output.status.success(),
            "kubectl {args:?} failed: {}{stdout}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout.replace(&self.h.ns.name, SAMPLE_NAMESPACE)
    }
}

/// The capture's `/status` answer while streaming.
fn streaming(commit_scn: u64, restart_scn: u64, lag_seconds: f64) -> String {
    json!({
        "state": "streaming", "commitScn": commit_scn, "commitTime": "2026-11-29T11:40:20Z",
        "restartScn": restart_scn, "lagSeconds": lag_seconds, "openTransactions": 3, "bufferedEvents": 120,
        "heapBytes": 65536, "spilledTransactions": 0, "spilledBytes": 0,
        "startedAt": "2026-11-29T09:12:06Z", "version": "0.1.0",
    })
    .to_string()
}

/// A `/status` answer with the reposition the capture applied at its start.
fn repositioned(status: String) -> String {
    let mut status: serde_json::Value = serde_json::from_str(&status).unwrap();
    status["reposition"] = json!({
        "id": "restore-2026-11-29", "scn": 5_100_000, "state": "Applied", "at": "2026-11-29T09:12:07Z",
        "message": "moved from commit SCN 5120000 (restart SCN 5119000) to SCN 5100000",
    });
    status.to_string()
}

/// Stand-ins for the captures' `/status`: one listener on each of 127.0.0.1, .2 and .3, all on
/// the same port (the operator polls one port on every pod IP), each answering with its own body.
struct StatusServers {
    port: u16,
    bodies: [Arc<Mutex<String>>; 3],
    _servers: Vec<operator::StatusServer>,
}

impl StatusServers {
    fn start() -> StatusServers {
        for _ in 0..20 {
            let first = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
            let port = first.local_addr().expect("address").port();
            let others: Result<Vec<TcpListener>, _> = [2u8, 3]
                .iter()
                .map(|h| {
                    TcpListener::bind(SocketAddr::new(
                        IpAddr::V4(Ipv4Addr::new(127, 0, 0, *h)),
                        port,
                    ))
                })
                .collect();
            let Ok(others) = others else { continue };
            let bodies: [Arc<Mutex<String>>; 3] = Default::default();
            let servers = std::iter::once(first)
                .chain(others)
                .zip(bodies.iter())
                .map(|(listener, body)| {
                    operator::StatusServer::start(listener, body.clone())
                        .unwrap_or_else(|e| panic!("{e:#}"))
                })
                .collect();
            return StatusServers {
                port,
                bodies,
                _servers: servers,
            };
        }
        panic!("no port free on 127.0.0.1, .2 and .3");
    }

    /// The `/status` answer of 127.0.0.`host`.
    fn set(&self, host: u8, body: String) {
        *self.bodies[usize::from(host) - 1].lock().unwrap() = body;
    }
}
