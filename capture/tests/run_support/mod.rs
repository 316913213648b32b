//! A capture run on the simulator and the file sink, in a temporary directory, for the
//! end-to-end tests of `redoline-capture run`; `kafka_support` runs the binary the same way.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

// Not every test binary using this module probes the HTTP face.
#[allow(dead_code, unused_imports)]
#[path = "../http_probe/mod.rs"]
mod http_probe;
#[allow(unused_imports)]
pub use http_probe::{free_port, metric, status};

// Not every test binary using this module keeps a capture running.
#[allow(dead_code)]
mod running;
#[allow(unused_imports)]
pub use running::{Running, STATUS_PATIENCE};

// Not every test binary using this module writes these scenarios.
#[allow(dead_code)]
pub mod lines;

pub const BINARY: &str = env!("CARGO_BIN_EXE_redoline-capture");

/// The longest an `--exit-at-end` run of a test scenario may take (debug build, busy machine).
pub const RUN_LIMIT: std::time::Duration = std::time::Duration::from_secs(180);

/// `redoline-capture run --config <config>`, writing its termination message to
/// `termination_log`, stderr piped, logging warnings (the level the tests that read stderr
/// expect); with `exit_at_end`, the run ends once caught up.
///
/// The temporary directory is the config's directory: a capture without `buffer.spill.dir`
/// keeps its spill files and login guard under `$TMPDIR/redoline-spill/<name>`, and captures of
/// tests running at once (most are named `test`) must not share them.
pub fn run_command(config: &Path, termination_log: &Path, exit_at_end: bool) -> Command {
    let mut command = Command::new(BINARY);
    command
        .args(["run", "--config"])
        .arg(config)
        .env("TMPDIR", config.parent().unwrap_or(Path::new(".")))
        .env("REDOLINE_TERMINATION_LOG", termination_log)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if exit_at_end {
        command.arg("--exit-at-end");
    }
    command
}

#[allow(unused_imports)] // not every test binary using this module generates a workload
pub use redoline_testenv::random::Xorshift;

/// A config, its scenario and its output, in a directory of their own.
pub struct Capture {
    pub dir: tempfile::TempDir,
}

impl Capture {
    /// A compact-format capture of `tables` from the oldest redo, without snapshot; `extra` is
    /// appended to the config. The HTTP port is off unless `extra` sets one (tests run in
    /// parallel).
    pub fn new(tables: &[&str], scenario: &str, extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("scenario.jsonl"), scenario).unwrap();
        let http = if extra.contains("http:") {
            ""
        } else {
            "http: {port: 0}\n"
        };
        std::fs::write(
            dir.path().join("capture.yaml"),
            format!(
                "name: test\n\
                 database: {{simulator: {{scenario: scenario.jsonl}}}}\n\
                 tables: [{}]\n\
                 file: {{path: out.jsonl}}\n\
                 format: {{type: compact}}\n\
                 snapshot: {{mode: never}}\n\
                 startPosition: {{type: earliest}}\n\
                 {http}{extra}",
                tables.join(", ")
            ),
        )
        .unwrap();
        Self { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn command(&self, exit_at_end: bool) -> Command {
        run_command(
            &self.path("capture.yaml"),
            &self.path("termination.log"),
            exit_at_end,
        )
    }

    /// Runs with `--exit-at-end`: exit code and stderr. A run still going after
    /// [`RUN_LIMIT`] is killed and fails the test, so a capture that never reaches its end fails
    /// in minutes instead of hanging the suite.
    #[allow(dead_code)] // not every test binary using this module runs to the end
    pub fn run(&self) -> (i32, String) {
        let mut running = Running::spawn(self.command(true), &self.path("termination.log"));
        let exit = running.wait_exit(RUN_LIMIT);
        (exit.code().unwrap_or(-1), running.stderr())
    }

    /// Starts the capture without `--exit-at-end`, logging at `info` (a few lines a window at
    /// most) so that a failed wait shows the capture's own account.
    #[allow(dead_code)] // not every test binary using this module keeps a capture running
    pub fn start(&self) -> Running {
        self.spawn(false, "info")
    }

    /// Starts the capture, with `--exit-at-end` if `exit_at_end`, at the log level `level`
    /// (`warn` for a test that reads stderr).
    #[allow(dead_code)] // not every test binary using this module chooses these
    pub fn spawn(&self, exit_at_end: bool, level: &str) -> Running {
        let mut command = self.command(exit_at_end);
        command.env("RUST_LOG", level);
        Running::spawn(command, &self.path("termination.log"))
    }

    /// Appends `lines` to the scenario, for a capture that follows it (`follow: true`) or runs
    /// again.
    #[allow(dead_code)] // not every test binary using this module adds to a scenario
    pub fn append(&self, lines: &str) {
        std::io::Write::write_all(
            &mut std::fs::OpenOptions::new()
                .append(true)
                .open(self.path("scenario.jsonl"))
                .unwrap(),
            lines.as_bytes(),
        )
        .unwrap();
    }

    #[allow(dead_code)] // not every test binary using this module reads every line
    pub fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(self.path("out.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// The events of committed pages: the data file up to the `dataBytes` of its bookmark (what a
    /// restart keeps; lines past it belong to a page whose bookmark never landed).
    #[allow(dead_code)] // not every test binary using this module reads it
    pub fn committed_events(&self) -> Vec<Value> {
        let committed = std::fs::read_to_string(self.path("out.jsonl.bookmark"))
            .ok()
            .map_or(0, |text| {
                let stored: Value = serde_json::from_str(&text).unwrap();
                stored["dataBytes"].as_u64().unwrap() as usize
            });
        let data = std::fs::read(self.path("out.jsonl")).unwrap_or_default();
        String::from_utf8(data[..committed.min(data.len())].to_vec())
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    #[allow(dead_code)] // not every test binary using this module reads it
    pub fn termination(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.path("termination.log")).unwrap())
            .unwrap()
    }
}

/// SIGTERM to a capture spawned without [`Running`] (`composed` runs its own), then its exit
/// status (at most [`running::STOP_PATIENCE`] later).
#[allow(dead_code)] // not every test binary using this module stops a capture this way
pub fn terminate(child: &mut std::process::Child) -> std::process::ExitStatus {
    running::sigterm(child).expect("an exit after SIGTERM")
}
