#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Transient database faults in a running capture: the run starts again from the bookmark and
//! emits exactly what an uninterrupted run emits, and a database that never comes back ends in
//! CDC-2005 once the (shortened) retry budget is spent.

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use jiff::civil;
use prometheus::Registry;
use redoline_capture::dictionary::TableSchema;
use redoline_capture::engine::EngineError;
use redoline_capture::run::{Outcome, RunSettings, run_with};
use redoline_capture::sink::RetryPolicy;
use redoline_capture::source::simulator::Simulator;
use redoline_capture::source::{
    CatalogTable, DatabaseCatalog, DatabaseInfo, FlashbackReader, FlashbackRow, LogMinerRow,
    MiningWindow, OpenTransaction, PdbIncarnation, RedoLog, RedoMiner, RedoThread, SessionId,
    SessionPrivileges, SourceError,
};
use redoline_crds::StopCode;
use serde_json::Value;

const ORDERS: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"STATUS","type":"VARCHAR2(16)"}],"logging":"all"}
"#;

/// `transactions` committed transactions of two inserts each, two of them open at a time.
fn scenario(transactions: u32) -> String {
    let mut lines = String::from(ORDERS);
    for tx in 0..transactions {
        for id in [tx * 2, tx * 2 + 1] {
            lines.push_str(&format!(
                "{{\"tx\":\"t{tx}\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{id},\"STATUS\":\"NEW\"}}}}\n"
            ));
        }
        if tx > 0 {
            lines.push_str(&format!("{{\"tx\":\"t{}\",\"commit\":true}}\n", tx - 1));
        }
    }
    lines.push_str(&format!(
        "{{\"tx\":\"t{}\",\"commit\":true}}\n",
        transactions - 1
    ));
    lines
}

/// The simulator, but `stream_rows` fails with `Unavailable` after `rows_before_fault` rows
/// while `faults` (shared by every source the run opens) is above zero.
struct FlakySource {
    inner: Simulator,
    faults: Arc<AtomicU32>,
    rows_before_fault: u64,
}

impl DatabaseCatalog for FlakySource {
    fn database(&mut self) -> Result<DatabaseInfo, SourceError> {
        self.inner.database()
    }
    fn current_scn(&mut self) -> Result<u64, SourceError> {
        self.inner.current_scn()
    }
    fn pdb_incarnation(&mut self, pdb: &str) -> Result<Option<PdbIncarnation>, SourceError> {
        self.inner.pdb_incarnation(pdb)
    }
    fn threads(&mut self) -> Result<Vec<RedoThread>, SourceError> {
        self.inner.threads()
    }
    fn open_transactions(&mut self) -> Result<Vec<OpenTransaction>, SourceError> {
        self.inner.open_transactions()
    }
    fn sessions(&mut self) -> Result<Vec<SessionId>, SourceError> {
        self.inner.sessions()
    }
    fn list_tables(&mut self) -> Result<Vec<(String, String)>, SourceError> {
        self.inner.list_tables()
    }
    fn scn_to_timestamp(&mut self, scn: u64) -> Result<Option<civil::DateTime>, SourceError> {
        self.inner.scn_to_timestamp(scn)
    }
    fn table(&mut self, owner: &str, table: &str) -> Result<CatalogTable, SourceError> {
        self.inner.table(owner, table)
    }
    fn privileges(&mut self) -> Result<SessionPrivileges, SourceError> {
        self.inner.privileges()
    }
    fn row_estimate(&mut self, owner: &str, table: &str) -> Result<Option<u64>, SourceError> {
        self.inner.row_estimate(owner, table)
    }
}

impl RedoMiner for FlakySource {
    fn redo_logs(&mut self, from_scn: u64) -> Result<Vec<RedoLog>, SourceError> {
        self.inner.redo_logs(from_scn)
    }
    fn flush_redo(&mut self) -> Result<(), SourceError> {
        self.inner.flush_redo()
    }
    fn heartbeat_action(&mut self, sql: &str) -> Result<(), SourceError> {
        self.inner.heartbeat_action(sql)
    }
    fn start_mining(&mut self, window: &MiningWindow) -> Result<(), SourceError> {
        self.inner.start_mining(window)
    }
    fn stream_rows(
        &mut self,
        visit: &mut dyn FnMut(LogMinerRow) -> ControlFlow<()>,
    ) -> Result<u64, SourceError> {
        if self.faults.load(Ordering::SeqCst) == 0 {
            return self.inner.stream_rows(visit);
        }
        let mut left = self.rows_before_fault;
        self.inner.stream_rows(&mut |row| {
            if left == 0 {
                return ControlFlow::Break(());
            }
            left -= 1;
            visit(row)
        })?;
        self.faults.fetch_sub(1, Ordering::SeqCst);
        Err(SourceError::Unavailable {
            message: "ORA-03113: end-of-file on communication channel".into(),
        })
    }
    fn end_mining(&mut self) -> Result<(), SourceError> {
        self.inner.end_mining()
    }
}

impl FlashbackReader for FlakySource {
    fn flashback_batch(
        &mut self,
        table: &TableSchema,
        scn: u64,
        after_row_id: Option<&str>,
        condition: Option<&str>,
        max_rows: usize,
    ) -> Result<Vec<FlashbackRow>, SourceError> {
        // Mid-table (after a first batch), so a restart has a snapshot to continue.
        if after_row_id.is_some()
            && self
                .faults
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
        {
            return Err(SourceError::Unavailable {
                message: "ORA-03113: end-of-file on communication channel".into(),
            });
        }
        self.inner
            .flashback_batch(table, scn, after_row_id, condition, max_rows)
    }
}

/// A capture of APP.ORDERS into `out.jsonl` in `dir`, a page per transaction, with `snapshot`
/// as its snapshot spec.
fn write_config(
    dir: &Path,
    scenario: &str,
    snapshot: &str,
) -> redoline_capture::config::CaptureConfig {
    std::fs::write(dir.join("scenario.jsonl"), scenario).unwrap();
    let path = dir.join("capture.yaml");
    std::fs::write(
        &path,
        format!(
            "name: retry\n\
             database: {{simulator: {{scenario: scenario.jsonl}}}}\n\
             tables: [APP.ORDERS]\n\
             file: {{path: out.jsonl}}\n\
             format: {{type: compact}}\n\
             snapshot: {snapshot}\n\
             startPosition: {{type: earliest}}\n\
             buffer: {{memoryMaxBytes: 64Mi, spill: {{dir: {}, maxBytes: 1Gi}}}}\n\
             http: {{port: 0}}\n",
            dir.join("spill").display()
        ),
    )
    .unwrap();
    redoline_capture::config::load(&path, &[]).unwrap()
}

/// Runs to the end of the scenario; `faults` transient faults, each after `rows_before_fault`
/// rows of a window, or in the snapshot at a batch after the first of a table.
fn run(
    dir: &Path,
    scenario: &str,
    snapshot: &str,
    faults: u32,
    rows_before_fault: u64,
    policy: RetryPolicy,
) -> (Outcome, Registry) {
    let config = write_config(dir, scenario, snapshot);
    let scenario_path = dir.join("scenario.jsonl");
    let faults = Arc::new(AtomicU32::new(faults));
    let settings = RunSettings {
        database_retry: policy,
        ..RunSettings::new(true)
    };
    let registry = settings.registry.clone();
    let open = || -> Result<FlakySource, EngineError> {
        Ok(FlakySource {
            inner: Simulator::from_scenario_file(&scenario_path)
                .map_err(|e| EngineError::Failed(e.to_string()))?,
            faults: Arc::clone(&faults),
            rows_before_fault,
        })
    };
    (run_with(config, open, settings), registry)
}

/// The emitted events without the processing and read times, which differ between runs.
fn events(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("out.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let mut event: Value = serde_json::from_str(line).unwrap();
            if let Some(object) = event.as_object_mut() {
                object.remove("ts_ms");
                if object.get("op").is_some_and(|op| op == "r") {
                    object.remove("ts");
                }
            }
            event
        })
        .collect()
}

fn retries(registry: &Registry) -> u64 {
    registry
        .gather()
        .iter()
        .filter(|family| family.name() == "redoline_capture_retries_total")
        .flat_map(|family| family.get_metric())
        .map(|metric| metric.get_counter().get_value() as u64)
        .sum()
}

const NO_SNAPSHOT: &str = "{mode: never}";

fn quick(budget: Duration) -> RetryPolicy {
    RetryPolicy {
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        budget,
    }
}

#[test]
fn transient_faults_are_retried_from_the_bookmark_without_duplicates() {
    let scenario = scenario(40);
    let clean = tempfile::tempdir().unwrap();
    let (outcome, registry) = run(
        clean.path(),
        &scenario,
        NO_SNAPSHOT,
        0,
        0,
        quick(Duration::from_secs(5)),
    );
    assert!(matches!(outcome, Outcome::Done), "{outcome:?}");
    assert_eq!(retries(&registry), 0);
    let expected = events(clean.path());
    assert_eq!(expected.len(), 80, "two inserts per transaction");

    let flaky = tempfile::tempdir().unwrap();
    // Each fault comes mid-window, after some transactions were committed to the sink.
    let (outcome, registry) = run(
        flaky.path(),
        &scenario,
        NO_SNAPSHOT,
        3,
        50,
        quick(Duration::from_secs(5)),
    );
    assert!(matches!(outcome, Outcome::Done), "{outcome:?}");
    assert_eq!(retries(&registry), 3);
    assert_eq!(events(flaky.path()), expected);
}

#[test]
fn a_database_that_never_comes_back_is_cdc_2005_once_the_budget_is_spent() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (outcome, registry) = run(
        dir.path(),
        &scenario(5),
        NO_SNAPSHOT,
        u32::MAX,
        0,
        quick(Duration::from_millis(200)),
    );
    let Outcome::Stopped(stop) = outcome else {
        panic!("expected a typed stop, got {outcome:?}");
    };
    assert_eq!(stop.code, StopCode::DatabaseUnavailable);
    assert!(stop.message.contains("ORA-03113"), "{}", stop.message);
    assert!(started.elapsed() < Duration::from_secs(5));
    let attempts = stop.details["attempts"].as_u64().unwrap();
    assert!(attempts >= 3, "{attempts} restarts");
    assert_eq!(retries(&registry), attempts);
}

#[test]
fn a_snapshot_interrupted_by_transient_faults_continues_without_duplicates() {
    let scenario = scenario(60);
    let snapshot = "{mode: initial, fetchSize: 7}";
    let clean = tempfile::tempdir().unwrap();
    let (outcome, _) = run(
        clean.path(),
        &scenario,
        snapshot,
        0,
        0,
        quick(Duration::from_secs(5)),
    );
    assert!(matches!(outcome, Outcome::Done), "{outcome:?}");
    let expected = events(clean.path());
    assert_eq!(expected.len(), 120, "every row once, as a snapshot read");
    assert!(expected.iter().all(|e| e["op"] == "r"));

    let flaky = tempfile::tempdir().unwrap();
    let (outcome, registry) = run(
        flaky.path(),
        &scenario,
        snapshot,
        4,
        0,
        quick(Duration::from_secs(5)),
    );
    assert!(matches!(outcome, Outcome::Done), "{outcome:?}");
    assert_eq!(retries(&registry), 4);
    assert_eq!(events(flaky.path()), expected);
}
