//! Shared by the `capture_kafka_*` tests: the real `redoline-capture` binary (Cargo builds it for
//! this crate's integration tests, `CARGO_BIN_EXE_redoline-capture`) run against the real broker
//! of the test environment.
//!
//! The broker: the one `REDOLINE_KAFKA_BOOTSTRAP` names (`tests/env/test-all.sh` starts one for
//! the whole run and exports it), otherwise one started for this test binary by
//! `redoline_testenv::kafka::KafkaEnv`, as the `redoline-tests` tests do (Java and Maven
//! needed; a broker that cannot start fails the test, it is never skipped). These tests live in
//! the capture crate rather than `redoline-tests` because only here does Cargo build and name the
//! binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub mod sink;

// The binary that includes this module declares `run_support` too (`it/main.rs`,
// `composed/main.rs`): one copy of it per binary.
use crate::run_support::{self, run_command};
#[allow(unused_imports)] // not every test binary using this module probes the HTTP face
pub use run_support::{BINARY, RUN_LIMIT, Running, Xorshift, free_port, metric, status};

#[allow(unused_imports)] // not every test binary using this module names its own topics
pub use redoline_testenv::kafka::unique_prefix;
#[allow(unused_imports)] // not every test binary using this module waits
pub use redoline_testenv::wait::wait_until;

use redoline_capture::sink::KafkaClientSettings;
use redoline_capture::sink::kafka::reader::{ReadError, read_to_end};
use serde_json::Value;

/// The broker's address: the one of `REDOLINE_KAFKA_BOOTSTRAP`, or a broker started for this
/// test binary. Panics with the reason when there is none.
pub fn bootstrap() -> String {
    match redoline_testenv::kafka::KafkaEnv::shared() {
        Ok(env) => env.bootstrap_servers().to_owned(),
        Err(error) => panic!("{error:#}"),
    }
}

/// One capture's directory: scenario, config, termination message, spill files.
pub struct Capture {
    pub dir: tempfile::TempDir,
}

impl Capture {
    /// `extra` is YAML appended to the config (buffer, journal, mining...).
    pub fn new(scenario: &str, bootstrap: &str, prefix: &str, extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("scenario.jsonl"), scenario).unwrap();
        let capture = Self { dir };
        capture.write_config("capture.yaml", bootstrap, prefix, 0, extra);
        capture
    }

    /// Writes a config named `file` (several configs share one scenario, e.g. two instances).
    pub fn write_config(&self, file: &str, bootstrap: &str, prefix: &str, port: u16, extra: &str) {
        self.write_config_with(file, bootstrap, prefix, port, "", extra);
    }

    /// [`Self::write_config`] with more `kafka:` fields (`", exactlyOnce: false"`).
    pub fn write_config_with(
        &self,
        file: &str,
        bootstrap: &str,
        prefix: &str,
        port: u16,
        kafka: &str,
        extra: &str,
    ) {
        // The namespace is the test's unique prefix, so the transactional id is the test's own:
        // tests running at once would fence one another's captures.
        std::fs::write(
            self.path(file),
            format!(
                "name: test\n\
                 namespace: {prefix}\n\
                 database: {{simulator: {{scenario: scenario.jsonl}}}}\n\
                 tables: [APP.ITEMS]\n\
                 kafka: {{bootstrapServers: \"{bootstrap}\", topicPrefix: {prefix}{kafka}}}\n\
                 format: {{type: compact}}\n\
                 snapshot: {{mode: never}}\n\
                 startPosition: {{type: earliest}}\n\
                 http: {{port: {port}}}\n\
                 {extra}"
            ),
        )
        .unwrap();
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `run --config <config>`; with `exit_at_end`, the run ends once caught up.
    pub fn command(&self, config: &str, exit_at_end: bool, log: &str) -> Command {
        let termination_log = self.path(&format!("{log}.termination"));
        run_command(&self.path(config), &termination_log, exit_at_end)
    }

    /// Starts `run --config <config>` logging at `info` (a few lines a window at most), so that
    /// a failed wait shows the capture's own account; its termination message is `<log>`'s.
    pub fn spawn(&self, config: &str, exit_at_end: bool, log: &str) -> Running {
        let mut command = self.command(config, exit_at_end, log);
        command.env("RUST_LOG", "info");
        self.start(command, log)
    }

    /// Starts `command` (one of [`Self::command`], maybe with more environment) whose
    /// termination message is `<log>`'s.
    pub fn start(&self, command: Command, log: &str) -> Running {
        Running::spawn(command, &self.path(&format!("{log}.termination")))
    }

    /// Runs to the end (at most [`RUN_LIMIT`]): the exit code and stderr.
    pub fn run(&self, config: &str) -> (i32, String) {
        let mut running = self.start(self.command(config, true, "run"), "run");
        let exit = running.wait_exit(RUN_LIMIT);
        (exit.code().unwrap_or(-1), running.stderr())
    }

    /// For a snapshot killed mid-way: `killed.yaml` (HTTP on `port`, `extra` appended) beside
    /// `capture.yaml`, both with `snapshot` in place of `snapshot: {mode: never}`.
    pub fn write_snapshot_configs(
        &self,
        bootstrap: &str,
        prefix: &str,
        port: u16,
        extra: &str,
        snapshot: &str,
    ) {
        self.write_config("killed.yaml", bootstrap, prefix, port, extra);
        for file in ["capture.yaml", "killed.yaml"] {
            let text = std::fs::read_to_string(self.path(file)).unwrap();
            std::fs::write(
                self.path(file),
                text.replace("snapshot: {mode: never}", snapshot),
            )
            .unwrap();
        }
    }

    /// Runs `killed.yaml` `kills` times, each run SIGKILLed as soon as `progress` (rows read,
    /// from its `/status` on `port`) is 300 past where the run before was killed, at most
    /// `patience` after its start (a run ending first fails the test). The progress at the last
    /// kill.
    pub fn kill_at_progress(
        &self,
        port: u16,
        exit_at_end: bool,
        kills: u64,
        patience: Duration,
        progress: impl Fn(&Value) -> Option<u64>,
    ) -> u64 {
        let mut last_seen = 0;
        for kill in 0..kills {
            let mut child = self.spawn("killed.yaml", exit_at_end, &format!("kill{kill}"));
            // Polled often: a kill at once, before the run gets much further.
            let report = child.wait_for_within(
                port,
                &format!("progress before kill {kill}"),
                patience,
                Duration::from_millis(5),
                |report| progress(report).is_some_and(|rows| rows > last_seen + 300),
            );
            last_seen = progress(&report).unwrap_or_default();
            child.kill();
        }
        last_seen
    }

    pub fn termination(&self, log: &str) -> Option<Value> {
        let text = std::fs::read_to_string(self.path(&format!("{log}.termination"))).ok()?;
        serde_json::from_str(&text).ok()
    }
}

/// Every value of `topic` as a `read_committed` consumer sees it, in offset order (the data
/// topics have one partition).
pub fn read_values(bootstrap: &str, topic: &str) -> Vec<Value> {
    read_values_with(&KafkaClientSettings::with_bootstrap(bootstrap), topic)
}

/// [`read_values`] through a client of its own (an authenticated one).
///
/// A broker fault during the read (librdkafka's `AllBrokersDown` when its connections drop, a
/// timeout) starts the read again from the beginning, at most three times, as the capture's own
/// read-back does (`KafkaSink::read_topic` retries them): seen once in 100 composed workloads on
/// a loaded broker. A broker that stays down still fails the test.
pub fn read_values_with(settings: &KafkaClientSettings, topic: &str) -> Vec<Value> {
    const ATTEMPTS: u32 = 3;
    let mut attempt = 1;
    loop {
        let mut values = Vec::new();
        let read = read_to_end(settings, topic, Duration::from_secs(60), |record| {
            if let Some(value) = record.value {
                values.push(serde_json::from_slice(&value).unwrap());
            }
            Ok(())
        });
        match read {
            Ok(()) => return values,
            Err(error @ (ReadError::Kafka { .. } | ReadError::Timeout { .. }))
                if attempt < ATTEMPTS =>
            {
                eprintln!("reading {topic} back again (attempt {attempt} failed: {error})");
                attempt += 1;
                std::thread::sleep(Duration::from_secs(1));
            }
            Err(error) => panic!("reading {topic} back: {error}"),
        }
    }
}

/// [`read_values`], or `None` while the topic does not exist yet.
pub fn try_read_values(bootstrap: &str, topic: &str) -> Option<Vec<Value>> {
    let settings = KafkaClientSettings::with_bootstrap(bootstrap);
    let mut values = Vec::new();
    read_to_end(&settings, topic, Duration::from_secs(10), |record| {
        if let Some(value) = record.value {
            values.push(serde_json::from_slice(&value).unwrap());
        }
        Ok(())
    })
    .ok()?;
    Some(values)
}

/// The table every test captures.
pub const TABLES: &str = r#"{"table":"APP.ITEMS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"ORDER_ID","type":"NUMBER(10)"},{"name":"NOTE","type":"VARCHAR2(4000)"}],"logging":"all"}
"#;

pub fn insert(tx: &str, id: u64, note: &str) -> String {
    format!(
        "{{\"tx\":\"{tx}\",\"insert\":\"APP.ITEMS\",\"values\":{{\"ID\":{id},\"ORDER_ID\":1,\"NOTE\":\"{note}\"}}}}\n"
    )
}

/// The inserted ids of compact events, in order.
pub fn ids(events: &[Value]) -> Vec<u64> {
    events
        .iter()
        .map(|e| e["after"]["ID"].as_u64().unwrap())
        .collect()
}

/// How often the tests poll a capture or the broker while they wait.
pub const POLL: Duration = Duration::from_millis(50);

pub fn path_str(path: &Path) -> String {
    path.display().to_string()
}
