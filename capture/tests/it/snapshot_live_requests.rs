#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! `snapshot.requests` changed in the config file of a running `redoline-capture run` (simulator,
//! file sink): the change applies in the same process, without a restart. The file is updated as
//! the kubelet updates a ConfigMap mounted as a directory: the config path is a symlink through
//! `..data`, and each version is a fresh directory `..data` is swapped to. A new request runs, a
//! running one removed from the file is cancelled, a file that does not load leaves the run
//! going with the config in force (and says so on `/status` and `/metrics`), and any other
//! change waits for the next start.

use crate::run_support;

use std::path::Path;

use run_support::{Capture, Running, free_port, metric};
use serde_json::Value;

const TABLES: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"V","type":"NUMBER(10)"}],"logging":"all"}
{"table":"APP.ITEMS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"V","type":"NUMBER(10)"}],"logging":"all"}
"#;

/// Rows in ORDERS, read whole by a request.
const ORDERS: u64 = 500;
/// Rows in ITEMS: enough chunks (the simulator keeps 100 rows to a block, a chunk is at least a
/// block) that a read of it is still running when the file that removes it is seen.
const ITEMS: u64 = 100_000;

fn scenario() -> String {
    let mut lines = String::from(TABLES);
    for (table, rows) in [("ORDERS", ORDERS), ("ITEMS", ITEMS)] {
        for id in 1..=rows {
            lines.push_str(&format!(
                "{{\"tx\":\"load\",\"insert\":\"APP.{table}\",\"values\":{{\"ID\":{id},\"V\":{}}}}}\n",
                id % 1000
            ));
        }
    }
    lines.push_str("{\"tx\":\"load\",\"commit\":true}\n");
    lines
}

/// The config as a ConfigMap volume holds it: `capture.yaml` → `..data/capture.yaml`, `..data`
/// → the current version's directory.
struct MountedConfig<'a> {
    dir: &'a Path,
    base: String,
    versions: u32,
}

impl<'a> MountedConfig<'a> {
    /// Moves the capture's config behind the symlinks; `base` is its text without `snapshot`.
    fn mount(capture: &'a Capture) -> Self {
        let dir = capture.dir.path();
        let text = std::fs::read_to_string(dir.join("capture.yaml")).unwrap();
        // From the current SCN: the load is in the tables, not in the stream.
        let base: String = text
            .lines()
            .filter(|line| !line.starts_with("snapshot:"))
            .map(|line| format!("{line}\n"))
            .collect::<String>()
            .replace(
                "startPosition: {type: earliest}",
                "startPosition: {type: current}",
            );
        std::fs::remove_file(dir.join("capture.yaml")).unwrap();
        let mut mounted = Self {
            dir,
            base,
            versions: 0,
        };
        mounted.write("snapshot: {mode: never, fetchSize: 100}\n");
        std::os::unix::fs::symlink("..data/capture.yaml", dir.join("capture.yaml")).unwrap();
        mounted
    }

    /// A new version with `snapshot` (a YAML line), swapped in as the kubelet does: written in a
    /// directory of its own, then `..data` replaced by a rename.
    fn write(&mut self, snapshot: &str) {
        self.versions += 1;
        let version = format!("..v{}", self.versions);
        std::fs::create_dir(self.dir.join(&version)).unwrap();
        std::fs::write(
            self.dir.join(&version).join("capture.yaml"),
            format!("{}{snapshot}", self.base),
        )
        .unwrap();
        std::os::unix::fs::symlink(&version, self.dir.join("..data_tmp")).unwrap();
        std::fs::rename(self.dir.join("..data_tmp"), self.dir.join("..data")).unwrap();
    }
}

fn requests(ids: &[(&str, &str)]) -> String {
    let listed: Vec<String> = ids
        .iter()
        .map(|(id, table)| format!("{{id: {id}, tables: [APP.{table}]}}"))
        .collect();
    format!(
        "snapshot: {{mode: never, fetchSize: 100, requests: [{}]}}\n",
        listed.join(", ")
    )
}

fn request<'a>(status: &'a Value, id: &str) -> Option<&'a Value> {
    status["snapshot"]["requests"]
        .as_array()?
        .iter()
        .find(|r| r["id"] == id)
}

fn done(status: &Value, id: &str) -> bool {
    request(status, id).is_some_and(|r| r["state"] == "Done")
}

/// The finished requests in the bookmark of the last committed page.
fn finished(capture: &Capture) -> Value {
    let text = std::fs::read_to_string(capture.path("out.jsonl.bookmark")).unwrap();
    let stored: Value = serde_json::from_str(&text).unwrap();
    stored["bookmark"]["incremental"]["finished"].clone()
}

fn reads_of(events: &[Value], table: &str) -> usize {
    events
        .iter()
        .filter(|e| e["op"] == "r" && e["table"] == table)
        .count()
}

fn still_running(child: &mut Running) {
    if child.try_wait().is_some() {
        child.fail("the capture exited: the change was not applied live");
    }
}

#[test]
fn requests_written_to_the_mounted_config_run_and_cancel_in_the_same_process() {
    let port = free_port();
    let capture = Capture::new(
        &["APP.ORDERS", "APP.ITEMS"],
        &scenario(),
        &format!("http: {{port: {port}}}\n"),
    );
    let mut config = MountedConfig::mount(&capture);
    let mut child = capture.start();
    let streaming = child.wait_for(port, "streaming", |report| report["state"] == "streaming");
    let started_at = streaming["startedAt"].clone();

    // 1. A new request in the file: read by this process.
    config.write(&requests(&[("live-orders-1", "ORDERS")]));
    let report = child.wait_for(port, "live-orders-1 done", |report| {
        done(report, "live-orders-1")
    });
    still_running(&mut child);
    assert_eq!(report["startedAt"], started_at, "the run started again");
    let table = &request(&report, "live-orders-1").unwrap()["tables"][0];
    assert_eq!(table["rowsRead"], ORDERS);
    let events = capture.committed_events();
    assert_eq!(reads_of(&events, "ORDERS") as u64, ORDERS);

    // 2. A file that does not load: the run goes on, and says so.
    config.write("snapshot: {mode: never, requests: [{id: Not_A_Label, tables: [APP.ORDERS]}]}\n");
    let report = child.wait_for(port, "the invalid file reported", |report| {
        report["configFile"]["state"] == "invalid"
    });
    assert!(
        report["configFile"]["error"]
            .as_str()
            .unwrap()
            .contains("snapshot.requests"),
        "{report}"
    );
    assert_eq!(
        metric(port, "redoline_capture_config_file_invalid"),
        Some(1.0)
    );
    still_running(&mut child);

    // 3. A read of ITEMS, removed from the file while it runs: cancelled, live.
    config.write(&requests(&[
        ("live-orders-1", "ORDERS"),
        ("live-items-2", "ITEMS"),
    ]));
    child.wait_for(port, "live-items-2 running", |report| {
        report.get("configFile").is_none()
            && request(report, "live-items-2").is_some_and(|r| {
                r["state"] == "Running" && r["tables"][0]["rowsRead"].as_u64() > Some(0)
            })
    });
    assert_eq!(
        metric(port, "redoline_capture_config_file_invalid"),
        Some(0.0)
    );
    config.write(&requests(&[("live-orders-1", "ORDERS")]));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(40);
    let cancelled = loop {
        let finished = finished(&capture);
        if finished.get("live-items-2").is_some() {
            break finished["live-items-2"].clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "live-items-2 never ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert_eq!(cancelled["state"], "Cancelled", "{cancelled}");
    let rows_read = cancelled["tables"][0][1].as_u64().unwrap();
    assert!(rows_read > 0 && rows_read < ITEMS, "{cancelled}");
    // The next request (read after the cancel) finds no more of ITEMS read than the cancelled
    // request had written: nothing of it ran after the cancel.
    config.write(&requests(&[
        ("live-orders-1", "ORDERS"),
        ("live-orders-3", "ORDERS"),
    ]));
    child.wait_for(port, "live-orders-3 done", |report| {
        done(report, "live-orders-3")
    });
    let events = capture.committed_events();
    assert_eq!(reads_of(&events, "ITEMS") as u64, rows_read);
    assert_eq!(reads_of(&events, "ORDERS") as u64, 2 * ORDERS);

    // 4. Any other change waits for the next start; the requests in force stay.
    config.write(
        "snapshot: {mode: never, fetchSize: 200, requests: [{id: live-orders-1, tables: [APP.ORDERS]}, {id: live-orders-3, tables: [APP.ORDERS]}, {id: live-items-4, tables: [APP.ITEMS]}]}\n",
    );
    let report = child.wait_for(port, "the restart pending", |report| {
        report["configFile"]["state"] == "restartPending"
    });
    assert!(request(&report, "live-items-4").is_none(), "{report}");
    still_running(&mut child);
    assert_eq!(report["startedAt"], started_at);

    assert!(child.terminate().success());
}
