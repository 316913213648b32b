//! Runs one workload through the real `redoline-capture` binary on one sink, interrupted.
//!
//! The capture gets a growing prefix of the workload's chunks: for each prefix it is started,
//! maybe killed (SIGKILL) or stopped (SIGTERM) at a random moment, maybe more than once, then run
//! with `--exit-at-end` until it exits 0, with every RAC instance switching logs every
//! [`ARCHIVE_LAG_TARGET`] meanwhile, or (drawn) not at all: the capture's flush commits on every
//! instance, so a quiet instance holds neither capture nor the end back. Before the next chunk
//! is written, the purge at its start
//! is kept only when the capture's restart SCN has passed it, as an operator purges archived logs
//! a capture no longer needs (on Kafka the journal lets the restart SCN pass a long transaction).
//! The spec changes between chunks as an operator edits it (each change restarts the pod): from
//! half-way it asks for a re-read of ORDERS, and from its chunk it lists APP.EARLY.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::generator::{ADDED_TO_SPEC, CAPTURED, CREATED_INCLUDE_LIST, Feature, Random, Workload};
use super::kafka_support;
use super::run_support::{BINARY, free_port, status, terminate};

/// Where the events go.
#[derive(Clone, Debug)]
pub enum Sink {
    File,
    /// The broker's bootstrap address.
    Kafka(String),
}

impl Sink {
    pub fn name(&self) -> &'static str {
        match self {
            Sink::File => "file",
            Sink::Kafka(_) => "kafka",
        }
    }
}

/// Capture settings drawn per workload and sink.
#[derive(Clone, Debug)]
pub struct Settings {
    pub heartbeats: bool,
    pub max_scn_window: u64,
    /// Through the real Oracle client over the simulator's SQL door (`through: sql`).
    pub through_sql: bool,
    /// Every instance switches logs every [`ARCHIVE_LAG_TARGET`] while a run goes to its end;
    /// without, the second instance goes quiet after its last write and only the capture's flush
    /// on each instance lets the run end.
    pub archive_lag_target: bool,
}

impl Settings {
    pub fn draw(random: &mut Random) -> Self {
        Self {
            heartbeats: random.percent(50),
            max_scn_window: [2_000, 20_000, 100_000][random.below(3)],
            through_sql: random.percent(50),
            archive_lag_target: random.percent(50),
        }
    }
}

/// What a run of a workload produced and went through.
pub struct Outcome {
    /// The compact events the sink holds, in order (per table topic, concatenated, on Kafka).
    pub events: Vec<Value>,
    /// On Kafka, the events of each table's topic.
    pub topics: Vec<(&'static str, Vec<Value>)>,
    /// Each interruption, in words (`SIGKILL 640 ms into run 3, prefix 2/4`).
    pub interruptions: Vec<String>,
    pub purges: usize,
    /// Purges of logs the large transaction started in, while it was open (Kafka: journaled).
    pub purges_behind_journal: usize,
    pub spilled: bool,
    pub journaled: bool,
    /// `r` events per table: the re-read of ORDERS and the reads of the added tables (counted
    /// by the comparison).
    pub reads: BTreeMap<String, usize>,
}

/// SIGTERM's number (Linux).
const SIGTERM: i32 = 15;

/// How long a run to the end may take before the test gives up on it.
const RUN_TIMEOUT: Duration = Duration::from_secs(180);

/// How often every RAC instance switches logs while a run goes to its end (Oracle's
/// `ARCHIVE_LAG_TARGET`, scaled down).
const ARCHIVE_LAG_TARGET: Duration = Duration::from_secs(1);

/// A run that failed: what it said, and the interruptions before.
pub struct Failure {
    pub message: String,
    pub interruptions: Vec<String>,
}

/// Runs `workload` on `sink`; `Err` when a run fails (its stderr and termination message).
pub fn run(
    workload: &Workload,
    sink: &Sink,
    settings: &Settings,
    under_repair: &[Feature],
) -> Result<Outcome, Failure> {
    let mut outcome = Outcome {
        events: Vec::new(),
        topics: Vec::new(),
        interruptions: Vec::new(),
        purges: 0,
        purges_behind_journal: 0,
        spilled: false,
        journaled: false,
        reads: BTreeMap::new(),
    };
    match run_into(workload, sink, settings, under_repair, &mut outcome) {
        Ok(()) => Ok(outcome),
        Err(message) => Err(Failure {
            message,
            interruptions: outcome.interruptions,
        }),
    }
}

fn run_into(
    workload: &Workload,
    sink: &Sink,
    settings: &Settings,
    under_repair: &[Feature],
    outcome: &mut Outcome,
) -> Result<(), String> {
    let temporary = tempfile::Builder::new()
        .prefix(&format!("composed-{}-{}-", workload.seed, sink.name()))
        .tempdir()
        .map_err(|e| e.to_string())?;
    // `REDOLINE_COMPOSED_KEEP=1` keeps the directory (scenario, config, stderr of every run).
    let (dir, _removed_at_end) = if std::env::var_os("REDOLINE_COMPOSED_KEEP").is_some() {
        let dir = temporary.keep();
        eprintln!(
            "composed: seed {} {} in {}",
            workload.seed,
            sink.name(),
            dir.display()
        );
        (dir, None)
    } else {
        (temporary.path().to_owned(), Some(temporary))
    };
    let prefix =
        kafka_support::unique_prefix(&format!("composed-{}-{}", workload.seed, sink.name()));
    let port = free_port();
    let mut stage = None;
    let mut random = Random::new(workload.seed ^ 0x5157_4e41_4c53);
    let mut scenario = String::new();
    let mut restart_scn = 0u64;
    let mut runs = 0;
    for (index, chunk) in workload.chunks.iter().enumerate() {
        let purge = chunk
            .purge_before_scn
            .map(|before| before.min(restart_scn))
            .filter(|&before| before > 0);
        if let Some(before) = purge {
            outcome.purges += 1;
            outcome.purges_behind_journal += usize::from(before > workload.big_start_scn);
        }
        // Half-way, the spec asks for a re-read of ORDERS, and at its chunk APP.EARLY joins
        // spec.tables (the pod restarts on a new config): each read runs under the
        // interruptions that follow, to its end.
        let now = Stage::of(workload, index);
        if stage != Some(now) {
            std::fs::write(
                dir.as_path().join("capture.yaml"),
                config(sink, settings, &prefix, port, now),
            )
            .map_err(|e| e.to_string())?;
            stage = Some(now);
        }
        scenario.push_str(&chunk.render(purge));
        std::fs::write(dir.as_path().join("scenario.jsonl"), &scenario)
            .map_err(|e| e.to_string())?;
        let mut interruptions = random.below(2);
        if runs == 0
            && matches!(sink, Sink::Kafka(_))
            && under_repair.contains(&Feature::InterruptedFirstKafkaStart)
        {
            interruptions = 0;
        }
        for _ in 0..interruptions {
            runs += 1;
            let sigterm = random.percent(50)
                && !(settings.heartbeats && under_repair.contains(&Feature::SigtermWithHeartbeats));
            let delay = Duration::from_millis(50 + random.below(3_000) as u64);
            let mut process = Process::spawn(dir.as_path(), runs)?;
            let ended = process.watch(port, delay, outcome, &mut restart_scn)?;
            if ended {
                continue;
            }
            let what = if sigterm { "SIGTERM" } else { "SIGKILL" };
            outcome.interruptions.push(format!(
                "{what} {} ms into run {runs} (chunks 1..={}/{})",
                delay.as_millis(),
                index + 1,
                workload.chunks.len()
            ));
            if sigterm {
                process.terminate()?;
            } else {
                process.kill()?;
            }
        }
        runs += 1;
        let mut process = Process::spawn(dir.as_path(), runs)?;
        // The end is the current SCN at the run's start, above the last write of thread 2; the
        // capture's flush on each instance writes both threads up to it. With
        // ARCHIVE_LAG_TARGET set, as a RAC may have it, every instance also switches logs now
        // and then while the run goes on (the scenario is followed); the switches take SCNs from
        // the gap before the next chunk's jump and change no data.
        let started = Instant::now();
        let mut ended = false;
        while !ended && started.elapsed() < RUN_TIMEOUT {
            ended = process.watch(port, ARCHIVE_LAG_TARGET, outcome, &mut restart_scn)?;
            if !ended && settings.archive_lag_target {
                const SWITCH: &str = "{\"log_switch\":\"all\"}\n";
                scenario.push_str(SWITCH);
                // Appended in one write: the capture reads complete lines as they come.
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(dir.as_path().join("scenario.jsonl"))
                    .and_then(|mut file| std::io::Write::write_all(&mut file, SWITCH.as_bytes()))
                    .map_err(|e| e.to_string())?;
            }
        }
        restart_scn = stored_restart_scn(sink, &dir, &prefix).unwrap_or(restart_scn);
        if process
            .child
            .try_wait()
            .map_err(|e| e.to_string())?
            .is_none()
        {
            return Err(format!("run {runs} did not end within {RUN_TIMEOUT:?}"));
        }
    }
    match sink {
        Sink::File => {
            let text = std::fs::read_to_string(dir.as_path().join("out.jsonl")).unwrap_or_default();
            for line in text.lines() {
                outcome
                    .events
                    .push(serde_json::from_str(line).map_err(|e| format!("{e}: {line}"))?);
            }
        }
        Sink::Kafka(bootstrap) => {
            let added = workload.added.iter().map(|added| added.table);
            for name in CAPTURED
                .iter()
                .map(|table| name_of(table.trim_start_matches("APP.")))
                .chain(added)
            {
                let topic = format!("{prefix}.APP.{name}");
                // A table the workload committed changes to has a topic: read it patiently (a
                // missing one fails); one without may have none.
                let expected = workload
                    .committed
                    .iter()
                    .any(|c| c.changes.iter().any(|change| change.table == name));
                let events = if expected {
                    kafka_support::read_values(bootstrap, &topic)
                } else {
                    kafka_support::try_read_values(bootstrap, &topic).unwrap_or_default()
                };
                outcome.events.extend(events.iter().cloned());
                outcome.topics.push((name, events));
            }
        }
    }
    Ok(())
}

fn name_of(table: &str) -> &'static str {
    match table {
        "ORDERS" => "ORDERS",
        "DOCS" => "DOCS",
        _ => "TAGS",
    }
}

/// What the spec holds before a chunk: whether it asks for the re-read of ORDERS, lists
/// APP.EARLY in `spec.tables`, and selects APP.LATER by `filters.tableIncludeList`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stage {
    reread: bool,
    early: bool,
    created: bool,
}

impl Stage {
    fn of(workload: &Workload, chunk: usize) -> Self {
        Self {
            reread: chunk >= workload.chunks.len() / 2,
            early: workload
                .added_by(Feature::TableAddedToSpec)
                .is_some_and(|added| chunk >= added.chunk),
            created: workload.added_by(Feature::TableCreatedMidRun).is_some(),
        }
    }
}

/// The capture's config: compact events, the oldest redo, a 16 MiB heap budget with a spill
/// directory, four connections (the real client's flush takes a session on each of the two
/// instances beside the capture's two), and for Kafka a journal of every transaction past 20
/// changes; the tables and requests of `stage`.
fn config(sink: &Sink, settings: &Settings, prefix: &str, port: u16, stage: Stage) -> String {
    let sink = match sink {
        Sink::File => "file: {path: out.jsonl}\n".to_owned(),
        Sink::Kafka(bootstrap) => format!(
            "kafka: {{bootstrapServers: \"{bootstrap}\", topicPrefix: {prefix}}}\n\
             journal: {{thresholdSeconds: 300, thresholdEvents: 20}}\n"
        ),
    };
    let heartbeat = if settings.heartbeats {
        "heartbeat: {intervalSeconds: 1}\n"
    } else {
        ""
    };
    let door = if settings.through_sql {
        "sql"
    } else {
        "boundary"
    };
    let mut tables = CAPTURED.join(", ");
    if stage.early {
        tables.push_str(&format!(", APP.{ADDED_TO_SPEC}"));
    }
    // The include list selects only the table created later; `spec.tables` names the others.
    let filters = if stage.created {
        format!("filters: {{tableIncludeList: {CREATED_INCLUDE_LIST}}}\n")
    } else {
        String::new()
    };
    let snapshot = if stage.reread {
        "snapshot: {mode: never, fetchSize: 3, requests: [{id: composed-reread, tables: \
         [APP.ORDERS]}]}"
    } else {
        "snapshot: {mode: never, fetchSize: 3}"
    };
    format!(
        "name: {prefix}\n\
         namespace: composed\n\
         database: {{simulator: {{scenario: scenario.jsonl, follow: true, through: {door}}}, \
         maxConnections: 4}}\n\
         tables: [{tables}]\n\
         {filters}\
         {sink}\
         format: {{type: compact}}\n\
         {snapshot}\n\
         startPosition: {{type: earliest}}\n\
         http: {{port: {port}}}\n\
         buffer: {{memoryMaxBytes: 16Mi, spill: {{dir: spill, maxBytes: 1Gi}}}}\n\
         mining: {{maxScnWindow: {}}}\n\
         {heartbeat}",
        settings.max_scn_window,
    )
}

/// The restart SCN of the stored bookmark: the file sink's `<path>.bookmark`, the Kafka
/// sink's last record on `<prefix>.redoline.offsets` (docs/kafka.md).
fn stored_restart_scn(sink: &Sink, dir: &Path, prefix: &str) -> Option<u64> {
    let bookmark = match sink {
        Sink::File => {
            let text = std::fs::read_to_string(dir.join("out.jsonl.bookmark")).ok()?;
            serde_json::from_str::<Value>(&text)
                .ok()?
                .get("bookmark")?
                .clone()
        }
        Sink::Kafka(bootstrap) => {
            let topic = format!("{prefix}.redoline.offsets");
            kafka_support::try_read_values(bootstrap, &topic)?.pop()?
        }
    };
    bookmark["restart_scn"].as_u64()
}

/// One capture process, its stderr in a file (a pipe nobody reads could block it).
struct Process {
    child: Child,
    stderr: PathBuf,
    termination: PathBuf,
    run: usize,
}

impl Process {
    fn spawn(dir: &Path, run: usize) -> Result<Self, String> {
        let stderr = dir.join(format!("run-{run}.stderr"));
        let termination = dir.join(format!("run-{run}.termination"));
        let child = Command::new(BINARY)
            .args(["run", "--exit-at-end", "--config"])
            .arg(dir.join("capture.yaml"))
            .current_dir(dir)
            .env("REDOLINE_TERMINATION_LOG", &termination)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(File::create(&stderr).map_err(|e| e.to_string())?)
            .spawn()
            .map_err(|e| e.to_string())?;
        Ok(Self {
            child,
            stderr,
            termination,
            run,
        })
    }

    /// Watches the process for up to `time`, noting on `outcome` what `/status` shows; `true`
    /// when it exited (0, or an error naming what it said).
    fn watch(
        &mut self,
        port: u16,
        time: Duration,
        outcome: &mut Outcome,
        restart_scn: &mut u64,
    ) -> Result<bool, String> {
        let started = Instant::now();
        while started.elapsed() < time {
            if let Some(report) = status(port) {
                outcome.spilled |= report["spilledTransactions"].as_u64().unwrap_or(0) > 0;
                outcome.journaled |= report["journaledTransactions"].as_u64().unwrap_or(0) > 0;
                if let Some(scn) = report["restartScn"].as_u64() {
                    *restart_scn = scn;
                }
            }
            if let Some(exit) = self.child.try_wait().map_err(|e| e.to_string())? {
                return self.exited(exit.code()).map(|()| true);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(false)
    }

    fn exited(&self, code: Option<i32>) -> Result<(), String> {
        if code == Some(0) {
            return Ok(());
        }
        let stderr = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
        let termination = std::fs::read_to_string(&self.termination).unwrap_or_default();
        Err(format!(
            "run {} exited with {code:?}; termination message: {termination}\nstderr (end):\n{}",
            self.run,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ))
    }

    fn kill(mut self) -> Result<(), String> {
        self.child.kill().map_err(|e| e.to_string())?;
        self.child.wait().map_err(|e| e.to_string())?;
        Ok(())
    }

    /// SIGTERM: the capture finishes the page it writes and exits 0. A SIGTERM that lands
    /// before the capture watches for it (the first milliseconds of start-up) ends it as the
    /// signal does by default, which is as harmless as a SIGKILL.
    fn terminate(mut self) -> Result<(), String> {
        let exit = terminate(&mut self.child);
        if exit.signal() == Some(SIGTERM) {
            return Ok(());
        }
        self.exited(exit.code())
    }
}
