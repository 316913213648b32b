#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Transient database faults and stop requests in a running capture: the run starts again from
//! the bookmark and emits exactly what an uninterrupted run emits, and a database that never
//! comes back ends in CDC-2005 once the (shortened) retry budget is spent.

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use jiff::civil;
use prometheus::Registry;
use redoline_capture::config::ConfigError;
use redoline_capture::dictionary::TableSchema;
use redoline_capture::error::CaptureError;
use redoline_capture::run::{RunSettings, run_with};
use redoline_capture::simulator::Simulator;
use redoline_capture::sink::RetryPolicy;
use redoline_capture::source::{
    CatalogTable, DatabaseCatalog, DatabaseInfo, FlashbackReader, FlashbackRow, LogMinerRow,
    MiningWindow, OpenTransaction, OperationCode, PdbIncarnation, RedoLog, RedoMiner, RedoThread,
    RowRange, SessionId, SessionPrivileges, SourceError, StorageSettings,
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
/// while `faults` (shared by every source the run opens) is above zero; with `stop_after`, the
/// first COMMIT row after that many rows of a window raises the run's stop flag (SIGTERM's), and
/// that window's fetch then takes longer than the heartbeat interval.
/// With `at_open_transactions`, those scenario steps are applied just before the read of the open
/// transactions after `open_reads_before` others (activity between two queries of the capture);
/// with `later`, at the second read of the current SCN after that (once a fresh position is taken).
struct FlakySource {
    inner: Simulator,
    faults: Arc<AtomicU32>,
    rows_before_fault: u64,
    stop_after: Option<(u64, Arc<AtomicBool>)>,
    at_open_transactions: Vec<String>,
    later: Vec<String>,
    scn_reads_since_open: Option<u32>,
    open_reads_before: u32,
    /// How long each window's fetch takes at least.
    window_pause: Duration,
    /// While `faults` is above zero, a window's fetch ends after `rows_before_fault` rows with
    /// the online log it reads overwritten by log switches, so the simulator answers the rest
    /// of the fetch with ORA-00310 (`LogSwitched`), instead of failing with `Unavailable`.
    log_switch: bool,
    /// Snapshot chunks this source has read: a fault is injected in a later one, so a restart
    /// has a snapshot to continue.
    chunks_read: u32,
}

impl FlakySource {
    fn apply(&mut self, steps: Vec<String>) {
        for step in steps {
            self.inner.apply_line(&step).unwrap();
        }
    }

    /// Uses up one fault if any is left.
    fn take_fault(&self) -> bool {
        self.faults
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Gives the first `rows_before_fault` rows of the window, then uses up a fault: what is
    /// fetched before a connection drops or a log is overwritten.
    fn stream_up_to_the_fault(
        &mut self,
        visit: &mut dyn FnMut(LogMinerRow) -> ControlFlow<()>,
    ) -> Result<(), SourceError> {
        let mut left = self.rows_before_fault;
        self.inner.stream_rows(&mut |row| {
            if left == 0 {
                return ControlFlow::Break(());
            }
            left -= 1;
            visit(row)
        })?;
        self.faults.fetch_sub(1, Ordering::SeqCst);
        Ok(())
    }
}

/// What a dropped connection gives the source (the fault every test here injects).
fn connection_lost() -> SourceError {
    SourceError::Unavailable {
        message: "ORA-03113: end-of-file on communication channel".into(),
    }
}

/// Longer than the 1 s heartbeat interval of [`a_stop_mid_window_with_heartbeats_loses_nothing`].
const SLOW_FETCH: Duration = Duration::from_millis(1_300);

impl DatabaseCatalog for FlakySource {
    fn database(&mut self) -> Result<DatabaseInfo, SourceError> {
        self.inner.database()
    }
    fn current_scn(&mut self) -> Result<u64, SourceError> {
        if let Some(reads) = &mut self.scn_reads_since_open {
            *reads += 1;
            if *reads == 2 {
                let steps = std::mem::take(&mut self.later);
                self.apply(steps);
            }
        }
        self.inner.current_scn()
    }
    fn pdb_incarnation(&mut self, pdb: &str) -> Result<Option<PdbIncarnation>, SourceError> {
        self.inner.pdb_incarnation(pdb)
    }
    fn threads(&mut self) -> Result<Vec<RedoThread>, SourceError> {
        self.inner.threads()
    }
    fn open_transactions(&mut self) -> Result<Vec<OpenTransaction>, SourceError> {
        if self.open_reads_before > 0 {
            self.open_reads_before -= 1;
        } else if self.scn_reads_since_open.is_none() {
            self.scn_reads_since_open = Some(0);
            let steps = std::mem::take(&mut self.at_open_transactions);
            self.apply(steps);
        }
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
    fn database_utc_offset(&mut self) -> Result<jiff::tz::Offset, SourceError> {
        self.inner.database_utc_offset()
    }
    fn storage_settings(&mut self) -> Result<StorageSettings, SourceError> {
        self.inner.storage_settings()
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
        std::thread::sleep(self.window_pause);
        if let Some((after, stop)) = &self.stop_after {
            let mut seen = 0;
            let fetched = self.inner.stream_rows(&mut |row| {
                seen += 1;
                if seen > *after && row.operation == OperationCode::Commit {
                    stop.store(true, Ordering::SeqCst);
                }
                visit(row)
            })?;
            if stop.load(Ordering::SeqCst) {
                std::thread::sleep(SLOW_FETCH);
            }
            return Ok(fetched);
        }
        if self.faults.load(Ordering::SeqCst) == 0 {
            return self.inner.stream_rows(visit);
        }
        self.stream_up_to_the_fault(visit)?;
        if self.log_switch {
            // As many switches as online groups: the group of the log being read is reused.
            let groups = 3;
            self.apply(vec!["{\"log_switch\":true}".to_owned(); groups]);
            return match self.inner.stream_rows(visit) {
                Err(error @ SourceError::LogSwitched { .. }) => Err(error),
                other => panic!("the simulator should refuse the overwritten log: {other:?}"),
            };
        }
        Err(connection_lost())
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
        after: Option<&str>,
        condition: Option<&str>,
        max_rows: usize,
    ) -> Result<Vec<FlashbackRow>, SourceError> {
        // Mid-table (after a first batch), so a restart has a snapshot to continue.
        if after.is_some() && self.take_fault() {
            return Err(connection_lost());
        }
        self.inner
            .flashback_batch(table, scn, after, condition, max_rows)
    }

    fn table_chunks(
        &mut self,
        table: &TableSchema,
        rows_per_chunk: u64,
    ) -> Result<Vec<RowRange>, SourceError> {
        self.inner.table_chunks(table, rows_per_chunk)
    }

    fn flashback_range(
        &mut self,
        table: &TableSchema,
        scn: u64,
        range: &RowRange,
        condition: Option<&str>,
    ) -> Result<Vec<FlashbackRow>, SourceError> {
        self.chunks_read += 1;
        if self.chunks_read > 1 && self.take_fault() {
            return Err(connection_lost());
        }
        self.inner.flashback_range(table, scn, range, condition)
    }
}

/// A capture of APP.ORDERS into `out.jsonl` in `dir`, a page per transaction, with `snapshot`
/// as its snapshot spec, from the oldest redo unless `extra` (appended) sets `startPosition`.
fn write_config(
    dir: &Path,
    scenario: &str,
    snapshot: &str,
    extra: &str,
) -> redoline_capture::config::CaptureConfig {
    std::fs::write(dir.join("scenario.jsonl"), scenario).unwrap();
    let path = dir.join("capture.yaml");
    let start = if extra.contains("startPosition:") {
        ""
    } else {
        "startPosition: {type: earliest}\n"
    };
    std::fs::write(
        &path,
        format!(
            "name: retry\n\
             database: {{simulator: {{scenario: scenario.jsonl}}}}\n\
             tables: [APP.ORDERS]\n\
             file: {{path: out.jsonl}}\n\
             format: {{type: compact}}\n\
             snapshot: {snapshot}\n\
             {start}\
             buffer: {{memoryMaxBytes: 64Mi, spill: {{dir: {}, maxBytes: 1Gi}}}}\n\
             http: {{port: 0}}\n\
             {extra}",
            dir.join("spill").display()
        ),
    )
    .unwrap();
    redoline_capture::config::load(&path, &[]).unwrap()
}

/// Runs to the end of the scenario; `faults` transient faults, each after `rows_before_fault`
/// rows of a window, or in the snapshot at a chunk after the first a source reads.
fn run(
    dir: &Path,
    scenario: &str,
    snapshot: &str,
    faults: u32,
    rows_before_fault: u64,
    policy: RetryPolicy,
) -> (Result<(), CaptureError>, Registry) {
    let settings = RunSettings {
        database_retry: policy,
        ..RunSettings::new(true)
    };
    let config = write_config(dir, scenario, snapshot, "");
    run_source(
        dir,
        config,
        settings,
        Script {
            faults,
            rows_before_fault,
            ..Script::default()
        },
    )
}

/// What [`FlakySource`] does besides simulating (see its fields).
#[derive(Clone, Default)]
struct Script {
    faults: u32,
    rows_before_fault: u64,
    stop_after: Option<u64>,
    at_open_transactions: Vec<String>,
    later: Vec<String>,
    open_reads_before: u32,
    window_pause: Duration,
    log_switch: bool,
    /// Counts the sources the run opens: one per attempt.
    opens: Arc<AtomicU32>,
}

fn run_source(
    dir: &Path,
    config: redoline_capture::config::CaptureConfig,
    settings: RunSettings,
    script: Script,
) -> (Result<(), CaptureError>, Registry) {
    let Script {
        faults,
        rows_before_fault,
        stop_after,
        at_open_transactions,
        later,
        open_reads_before,
        window_pause,
        log_switch,
        opens,
    } = script;
    let scenario_path = dir.join("scenario.jsonl");
    let faults = Arc::new(AtomicU32::new(faults));
    let registry = settings.registry.clone();
    let stop = Arc::clone(&settings.stop);
    let open = || -> Result<FlakySource, CaptureError> {
        opens.fetch_add(1, Ordering::SeqCst);
        Ok(FlakySource {
            inner: Simulator::from_scenario_file(&scenario_path)
                .map_err(|e| ConfigError::new("database.simulator.scenario", e.to_string()))?,
            faults: Arc::clone(&faults),
            rows_before_fault,
            stop_after: stop_after.map(|rows| (rows, Arc::clone(&stop))),
            at_open_transactions: at_open_transactions.clone(),
            later: later.clone(),
            scn_reads_since_open: None,
            open_reads_before,
            window_pause,
            log_switch,
            chunks_read: 0,
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

/// A run of `scenario` without faults: the events it writes (what a run with faults must write)
/// and its metrics.
fn fault_free(scenario: &str, snapshot: &str) -> (Vec<Value>, Registry) {
    let clean = tempfile::tempdir().unwrap();
    let (outcome, registry) = run(
        clean.path(),
        scenario,
        snapshot,
        0,
        0,
        quick(Duration::from_secs(5)),
    );
    assert!(outcome.is_ok(), "{outcome:?}");
    (events(clean.path()), registry)
}

/// A run of `scenario` with `faults` transient faults, each after `rows_before_fault` rows of a
/// window: it ends well, after one retry per fault, with the events of the run without them.
fn recovers_from_faults(
    scenario: &str,
    snapshot: &str,
    faults: u32,
    rows_before_fault: u64,
    expected: &[Value],
) {
    let flaky = tempfile::tempdir().unwrap();
    let (outcome, registry) = run(
        flaky.path(),
        scenario,
        snapshot,
        faults,
        rows_before_fault,
        quick(Duration::from_secs(5)),
    );
    assert!(outcome.is_ok(), "{outcome:?}");
    assert_eq!(retries(&registry), u64::from(faults));
    assert_eq!(events(flaky.path()), expected);
}

#[test]
fn transient_faults_are_retried_from_the_bookmark_without_duplicates() {
    let scenario = scenario(40);
    let (expected, registry) = fault_free(&scenario, NO_SNAPSHOT);
    assert_eq!(retries(&registry), 0);
    assert_eq!(expected.len(), 80, "two inserts per transaction");

    // Each fault comes mid-window, after some transactions were committed to the sink.
    recovers_from_faults(&scenario, NO_SNAPSHOT, 3, 50, &expected);
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
    let Some(stop) = outcome.as_ref().err().and_then(CaptureError::stop) else {
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
    // 600 rows over six 100-row blocks of the model: six chunks, so faults land mid-table.
    let scenario = scenario(300);
    let snapshot = "{mode: initial, fetchSize: 7}";
    let (expected, _) = fault_free(&scenario, snapshot);
    assert_eq!(expected.len(), 600, "every row once, as a snapshot read");
    assert!(expected.iter().all(|e| e["op"] == "r"));

    recovers_from_faults(&scenario, snapshot, 4, 0, &expected);
}

/// One-row transactions one after another, heartbeats every second, and a stop request (SIGTERM)
/// in the middle of a window whose fetch outlasts the heartbeat interval: a second run on the
/// same output emits everything the first did not, once. (The stopped window used to count as
/// mined to its end, and the heartbeat then moved the stored bookmark there: the rest of the
/// window was never emitted.)
#[test]
fn a_stop_mid_window_with_heartbeats_loses_nothing() {
    let mut sequential = String::from(ORDERS);
    for tx in 0..300 {
        sequential.push_str(&format!(
            "{{\"tx\":\"t{tx}\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{tx},\"STATUS\":\"NEW\"}}}}\n\
             {{\"tx\":\"t{tx}\",\"commit\":true}}\n"
        ));
    }
    let heartbeat = "heartbeat: {intervalSeconds: 1}\n";
    let dir = tempfile::tempdir().unwrap();
    let stopped = RunSettings::new(true);
    let stop = Arc::clone(&stopped.stop);
    let config = write_config(dir.path(), &sequential, NO_SNAPSHOT, heartbeat);
    let script = Script {
        stop_after: Some(120),
        ..Script::default()
    };
    let (outcome, _) = run_source(dir.path(), config, stopped, script);
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(stop.load(Ordering::SeqCst), "the stop was requested");
    let first = events(dir.path()).len();
    assert!(
        (1..300).contains(&first),
        "the first run stopped mid-window after {first} events"
    );

    let config = write_config(dir.path(), &sequential, NO_SNAPSHOT, heartbeat);
    let (outcome, _) = run_source(
        dir.path(),
        config,
        RunSettings::new(true),
        Script::default(),
    );
    assert!(outcome.is_ok(), "{outcome:?}");
    let ids: Vec<u64> = events(dir.path())
        .iter()
        .map(|event| event["after"]["ID"].as_u64().unwrap())
        .collect();
    assert_eq!(
        ids,
        (0..300).collect::<Vec<u64>>(),
        "each transaction once, in order"
    );
}

/// `startPosition: current` and a new snapshot read the current SCN and the open transactions in
/// separate queries. A transaction that began earlier and commits between them (`t`) must not be
/// emitted without its first rows; one still open at the position (`u`) is emitted whole.
#[test]
fn a_transaction_committing_while_a_fresh_position_is_read_is_never_emitted_partly() {
    let mut before = String::from(ORDERS);
    for (tx, id) in [("t", 1), ("u", 10), ("t", 2), ("u", 11)] {
        before.push_str(&format!(
            "{{\"tx\":\"{tx}\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{id},\"STATUS\":\"OLD\"}}}}\n"
        ));
    }
    let step = |tx: &str, id: u32| {
        format!(
            "{{\"tx\":\"{tx}\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{id},\"STATUS\":\"NEW\"}}}}"
        )
    };
    let commit = |tx: &str| format!("{{\"tx\":\"{tx}\",\"commit\":true}}");
    for (start, snapshot) in [("current", NO_SNAPSHOT), ("earliest", "{mode: initial}")] {
        let dir = tempfile::tempdir().unwrap();
        let config = write_config(
            dir.path(),
            &before,
            snapshot,
            &format!("startPosition: {{type: {start}}}\n"),
        );
        let script = Script {
            at_open_transactions: vec![step("t", 3), commit("t")],
            later: vec![step("u", 12), commit("u")],
            ..Script::default()
        };
        let (outcome, _) = run_source(dir.path(), config, RunSettings::new(true), script);
        assert!(outcome.is_ok(), "{outcome:?}");
        let streamed: Vec<u64> = events(dir.path())
            .iter()
            .filter(|event| event["op"] != "r")
            .map(|event| event["after"]["ID"].as_u64().unwrap())
            .collect();
        assert_eq!(
            streamed,
            [10, 11, 12],
            "{start}, snapshot {snapshot}: t committed before the position (the snapshot holds it \
             or it is before the start), u after it, whole"
        );
    }
}

/// The orphan check dates a transaction's first absence from GV$TRANSACTION by an SCN read after
/// the list. `t` commits while a window is mined (just before the second check's list is read,
/// the first comes before `t` is a second old), far above the
/// SCN read before that window; windows are small and slow, so the check after the next window
/// comes before `t`'s COMMIT is mined. Dated by the SCN before the window, `t` was released as an
/// orphan there, and its COMMIT then stopped the capture with CDC-7001.
#[test]
fn a_transaction_committing_during_a_window_is_not_released_as_an_orphan() {
    let mut scenario = String::from(ORDERS);
    scenario.push_str(
        "{\"tx\":\"t\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":1,\"STATUS\":\"OPEN\"}}\n",
    );
    let mut during_window = Vec::new();
    for id in 100..400 {
        during_window.push(format!(
            "{{\"tx\":\"f{id}\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":{id},\"STATUS\":\"F\"}}}}"
        ));
        during_window.push(format!("{{\"tx\":\"f{id}\",\"commit\":true}}"));
    }
    during_window.push("{\"tx\":\"t\",\"commit\":true}".to_owned());
    let dir = tempfile::tempdir().unwrap();
    let mut config = write_config(dir.path(), &scenario, NO_SNAPSHOT, "");
    // Below the CRD's minimums, to keep the test short: checks every second, 50 SCNs a window.
    config.transactions.orphan_check_interval_seconds = 1;
    config.mining.max_scn_window = 50;
    let settings = RunSettings::new(false);
    let stop = Arc::clone(&settings.stop);
    let script = Script {
        at_open_transactions: during_window,
        open_reads_before: 1,
        window_pause: Duration::from_millis(150),
        ..Script::default()
    };
    let out = dir.path().join("out.jsonl");
    let watcher = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        // Until t's row is out (or the run ended by itself).
        while Instant::now() < deadline && !stop.load(Ordering::SeqCst) {
            let text = std::fs::read_to_string(&out).unwrap_or_default();
            if text.contains("\"STATUS\":\"OPEN\"") {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        stop.store(true, Ordering::SeqCst);
    });
    let (outcome, _) = run_source(dir.path(), config, settings, script);
    watcher.join().unwrap();
    assert!(outcome.is_ok(), "{outcome:?}");
    let ids: Vec<u64> = events(dir.path())
        .iter()
        .map(|event| event["after"]["ID"].as_u64().unwrap())
        .collect();
    assert_eq!(ids.len(), 301, "the fillers and t: {ids:?}");
    assert_eq!(ids.last(), Some(&1), "t, committed last, emitted whole");
}

/// An online log overwritten while a window reads it (ORA-00310, provoked in the simulator by
/// log switches that reuse the log's group) is mined again in the same run, from the archived
/// copy, from the SCN of the last row given: the source is opened once (no restart from the
/// bookmark, which dropped the buffer's open transactions and mined them again), and the output
/// is exactly an uninterrupted run's, whatever row the fetch broke after, a row in the middle of
/// an SCN's rows included. Before, the error went to the run, which started again.
#[test]
fn an_online_log_overwritten_mid_window_is_mined_again_in_place() {
    let scenario = scenario(12);
    let (expected, _) = fault_free(&scenario, NO_SNAPSHOT);
    assert_eq!(expected.len(), 24);
    for rows_before_fault in [0, 1, 2, 3, 4, 5, 8, 13, 30] {
        let dir = tempfile::tempdir().unwrap();
        let settings = RunSettings {
            database_retry: quick(Duration::from_secs(5)),
            ..RunSettings::new(true)
        };
        let registry = settings.registry.clone();
        let config = write_config(dir.path(), &scenario, NO_SNAPSHOT, "");
        let opens = Arc::new(AtomicU32::new(0));
        let (outcome, _) = run_source(
            dir.path(),
            config,
            settings,
            Script {
                faults: 1,
                rows_before_fault,
                log_switch: true,
                opens: Arc::clone(&opens),
                ..Script::default()
            },
        );
        assert!(
            outcome.is_ok(),
            "after {rows_before_fault} rows: {outcome:?}"
        );
        assert_eq!(
            opens.load(Ordering::SeqCst),
            1,
            "after {rows_before_fault} rows: mined again in place, not restarted"
        );
        assert_eq!(retries(&registry), 1, "after {rows_before_fault} rows");
        assert_eq!(
            events(dir.path()),
            expected,
            "after {rows_before_fault} rows"
        );
    }
}

/// The pieces of a SQL_REDO longer than 4000 bytes (CSF) share SCN, RS_ID and SSN: a fetch that
/// breaks after the first of them, and mines the SCN again, must skip that piece only. Three
/// long values make three pieces, two of them `CSF = 1`; before, the second was taken for the
/// first and skipped too, and the joined statement lost its middle. A second overwrite while
/// the SCN is mined again must not count the rows met twice either.
#[test]
fn a_log_overwritten_between_continued_pieces_joins_each_piece_once() {
    let long = |c: char| c.to_string().repeat(3_000);
    let scenario = format!(
        "{{\"table\":\"APP.ORDERS\",\"columns\":[{{\"name\":\"ID\",\"type\":\"NUMBER(10)\",\"key\":true}},\
         {{\"name\":\"A\",\"type\":\"VARCHAR2(4000)\"}},{{\"name\":\"B\",\"type\":\"VARCHAR2(4000)\"}},\
         {{\"name\":\"C\",\"type\":\"VARCHAR2(4000)\"}}],\"logging\":\"all\"}}\n\
         {{\"tx\":\"t\",\"insert\":\"APP.ORDERS\",\"values\":{{\"ID\":1,\"A\":\"{}\",\"B\":\"{}\",\"C\":\"{}\"}}}}\n\
         {{\"tx\":\"t\",\"commit\":true}}\n",
        long('a'),
        long('b'),
        long('c')
    );
    let capture = |dir: &Path, faults: u32, rows_before_fault: u64| {
        let config = write_config(dir, &scenario, NO_SNAPSHOT, "");
        run_source(
            dir,
            config,
            RunSettings {
                database_retry: quick(Duration::from_secs(5)),
                ..RunSettings::new(true)
            },
            Script {
                faults,
                rows_before_fault,
                log_switch: true,
                ..Script::default()
            },
        )
        .0
    };
    let clean = tempfile::tempdir().unwrap();
    capture(clean.path(), 0, 0).unwrap();
    let expected = events(clean.path());
    assert_eq!(expected.len(), 1);
    // START, then the INSERT's three pieces: break after the first and after the second, once
    // or twice in the window.
    for faults in [1, 2] {
        for rows_before_fault in [2, 3] {
            let dir = tempfile::tempdir().unwrap();
            capture(dir.path(), faults, rows_before_fault).unwrap();
            assert_eq!(
                events(dir.path()),
                expected,
                "{faults} overwrite(s), each after {rows_before_fault} rows"
            );
        }
    }
}
