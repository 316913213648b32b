//! A capture run in this process on the real Oracle client over the simulator's SQL door, so
//! every statement the client sends is in `SimulatorPool::issued`: what the capture asks of the
//! database, counted (tests/database_load.rs asserts bounds, benches/database_load.rs prints
//! figures).

#![allow(dead_code)] // the test and the bench use different parts

use std::path::Path;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use redoline_capture::config;
use redoline_capture::run::{RunSettings, run_with, through_sql};
use redoline_capture::simulator::Simulator;
use redoline_capture::simulator::sql::SimulatorPool;

/// A captured table and one committed transaction: something to start from.
pub const ONE_TABLE: &str = r#"{"table":"APP.T","columns":[{"name":"ID","type":"NUMBER(10)","key":true}],"logging":"all"}
{"tx":"a","insert":"APP.T","values":{"ID":1}}
{"tx":"a","commit":true}
"#;

/// A workload: called every 10 ms with the simulator and the time since the run began.
pub type Workload<'a> = &'a mut dyn FnMut(&mut Simulator, Duration);

/// What a run issued, how long it ran, and its metrics at the end (Prometheus text).
pub struct Issued {
    pub statements: Vec<String>,
    pub elapsed: Duration,
    pub metrics: String,
    /// Records the capture wrote (lines of its file sink).
    pub records: usize,
}

impl Issued {
    /// The flush-table UPDATEs: one per flush commit.
    pub fn flushes(&self) -> usize {
        self.count(|s| s.starts_with("UPDATE ") && s.contains("LAST_SCN"))
    }

    pub fn count(&self, what: impl Fn(&str) -> bool) -> usize {
        self.statements.iter().filter(|s| what(s)).count()
    }

    /// `DBMS_LOGMNR.ADD_LOGFILE` calls.
    pub fn logs_added(&self) -> usize {
        self.count(|s| s.contains("ADD_LOGFILE"))
    }

    pub fn sessions_started(&self) -> usize {
        self.count(|s| s.contains("START_LOGMNR"))
    }

    pub fn sessions_ended(&self) -> usize {
        self.count(|s| s.contains("END_LOGMNR"))
    }

    /// The statements between one flush and the next (the first round begins at the first
    /// flush: what comes before is start-up).
    pub fn rounds(&self) -> Vec<&[String]> {
        let starts: Vec<usize> = self
            .statements
            .iter()
            .enumerate()
            .filter(|(_, s)| s.starts_with("UPDATE ") && s.contains("LAST_SCN"))
            .map(|(index, _)| index)
            .collect();
        starts
            .windows(2)
            .map(|pair| &self.statements[pair[0]..pair[1]])
            .collect()
    }
}

/// The capture's config over the SQL door, with `extra` appended (`mining: {...}`).
pub fn config_text(dir: &Path, tables: &str, extra: &str) -> String {
    format!(
        "name: load\n\
         database: {{simulator: {{scenario: {scenario}, through: sql}}}}\n\
         tables: [{tables}]\n\
         file: {{path: {out}}}\n\
         format: {{type: compact}}\n\
         snapshot: {{mode: never}}\n\
         startPosition: {{type: earliest}}\n\
         http: {{port: 0}}\n\
         buffer: {{spill: {{dir: {spill}}}}}\n\
         {extra}",
        scenario = dir.join("scenario.jsonl").display(),
        out = dir.join("out.jsonl").display(),
        spill = dir.join("spill").display(),
    )
}

/// Runs a capture of `scenario` for `run_for` (then asks it to stop; a run that has not ended
/// 30 s later fails), with `during` called on the simulator every 10 ms while it runs (a
/// workload; `None` for an idle database).
pub fn run_capture(
    scenario: &str,
    tables: &str,
    extra: &str,
    run_for: Duration,
    during: Option<Workload<'_>>,
) -> Issued {
    run_capture_with(scenario, tables, extra, run_for, None, during, &|_| {})
}

/// [`run_capture`], with `prepare` given the pool before the run starts (faults to inject), and
/// ending as soon as the capture has written `until_records` records when given (`run_for` is
/// then the longest it may take).
pub fn run_capture_with(
    scenario: &str,
    tables: &str,
    extra: &str,
    run_for: Duration,
    until_records: Option<usize>,
    mut during: Option<Workload<'_>>,
    prepare: &dyn Fn(&SimulatorPool),
) -> Issued {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("scenario.jsonl"), scenario).expect("the scenario written");
    let text = config_text(dir.path(), tables, extra);
    let config = config::parse(&text, &[]).expect("the config parses");
    let simulator = Simulator::from_reader(scenario.as_bytes()).expect("the scenario loads");
    let pool = SimulatorPool::new(simulator);
    prepare(&pool);
    let settings = RunSettings::new(false);
    let registry = settings.registry.clone();
    let stop = settings.stop.clone();
    let started = Instant::now();
    let run = {
        let pool = pool.clone();
        let database = config.clone();
        thread::spawn(move || run_with(config, || through_sql(&database, pool.clone()), settings))
    };
    let out = dir.path().join("out.jsonl");
    let records =
        || std::fs::read(&out).map_or(0, |bytes| bytes.iter().filter(|b| **b == b'\n').count());
    while started.elapsed() < run_for {
        if until_records.is_some_and(|wanted| records() >= wanted) {
            break;
        }
        if let Some(step) = during.as_mut() {
            let elapsed = started.elapsed();
            pool.with_simulator(|simulator| step(simulator, elapsed));
        }
        thread::sleep(Duration::from_millis(10));
    }
    stop.store(true, Ordering::Relaxed);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !run.is_finished() {
        assert!(
            Instant::now() < deadline,
            "the capture did not stop within 30 s"
        );
        thread::sleep(Duration::from_millis(20));
    }
    let elapsed = started.elapsed();
    let result = run.join().expect("the run thread");
    assert!(result.is_ok(), "the run failed: {result:?}");
    let metrics = prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .expect("the metrics encode");
    Issued {
        statements: pool.issued(),
        elapsed,
        metrics,
        records: records(),
    }
}
