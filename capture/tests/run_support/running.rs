//! A capture process a test started and keeps running while it probes it: the one way the
//! end-to-end tests (the file sink's here, the broker's in `kafka_support`) hold a capture.
//!
//! What it adds over a bare [`Child`]:
//! * its stderr is drained by a thread into a buffer, so a full pipe never blocks the capture,
//!   and what it said is there for a failure message ([`Running::stderr`]);
//! * every wait fails at once when the process has exited (waiting 40 s for a status a dead
//!   process will never serve told nothing), and any failed wait, exit or timeout, panics with
//!   the whole account: what was awaited, the exit status, the last `/status` seen, the
//!   termination message and the capture's stderr;
//! * [`Drop`] kills and reaps it, so a failing test leaves no capture running behind it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

use super::http_probe::status;

/// How long [`Running::wait_for`] waits for a status (debug build, busy machine).
pub const STATUS_PATIENCE: Duration = Duration::from_secs(40);
/// How long a capture may take to exit after SIGTERM: it finishes its window and exits.
pub const STOP_PATIENCE: Duration = Duration::from_secs(20);
/// How often [`Running::wait_for`] polls.
pub const POLL: Duration = Duration::from_millis(200);

/// A capture process of a test: see the module docs.
pub struct Running {
    child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    reader: Option<JoinHandle<()>>,
    termination_log: PathBuf,
    /// The exit status once observed (a child is reaped once).
    exit: Option<ExitStatus>,
    /// The last `/status` a [`Running::wait_for`] got, for the failure report.
    last_status: Option<Value>,
}

impl Running {
    /// Spawns `command` (built by `run_support::run_command`, stderr piped) whose termination
    /// message goes to `termination_log`.
    pub fn spawn(mut command: Command, termination_log: &Path) -> Self {
        let mut child = command.spawn().expect("spawning the capture");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let reader = child.stderr.take().map(|mut pipe| {
            let buffer = Arc::clone(&stderr);
            std::thread::spawn(move || {
                let mut chunk = [0_u8; 8192];
                loop {
                    match pipe.read(&mut chunk) {
                        // End of file: the capture has exited (or was killed).
                        Ok(0) => break,
                        Ok(read) => buffer
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .extend_from_slice(&chunk[..read]),
                        Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            })
        });
        Self {
            child,
            stderr,
            reader,
            termination_log: termination_log.to_owned(),
            exit: None,
            last_status: None,
        }
    }

    /// What the capture has written to stderr so far (all of it once it has exited and been
    /// waited for).
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(PoisonError::into_inner))
            .into_owned()
    }

    /// The exit status, if the process has exited.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        if self.exit.is_none() {
            self.exit = self.child.try_wait().expect("polling the capture");
            if self.exit.is_some() {
                self.join_reader();
            }
        }
        self.exit
    }

    /// Polls `/status` on `port` every 200 ms until `done` holds (at most [`STATUS_PATIENCE`])
    /// and returns that status; fails at once when the capture exits.
    pub fn wait_for(&mut self, port: u16, what: &str, done: impl FnMut(&Value) -> bool) -> Value {
        self.wait_for_within(port, what, STATUS_PATIENCE, POLL, done)
    }

    /// [`Self::wait_for`] with a patience and poll interval of the test's own (a test that
    /// kills the capture at a given progress polls often).
    pub fn wait_for_within(
        &mut self,
        port: u16,
        what: &str,
        patience: Duration,
        every: Duration,
        mut done: impl FnMut(&Value) -> bool,
    ) -> Value {
        let mut seen = None;
        self.poll(what, patience, every, |_| {
            let answer = status(port);
            let ready = answer.as_ref().is_some_and(&mut done);
            if ready {
                seen.clone_from(&answer);
            }
            (ready, answer)
        });
        seen.expect("a status that held")
    }

    /// Polls `ready` (given this capture, to read its stderr) every `every` until it holds, at
    /// most `timeout`; fails at once when the capture exits.
    pub fn wait_until(
        &mut self,
        what: &str,
        timeout: Duration,
        every: Duration,
        mut ready: impl FnMut(&Self) -> bool,
    ) {
        self.poll(what, timeout, every, |running| (ready(running), None));
    }

    /// Polls `ready` until it holds, noting the `/status` it may have got; fails with the
    /// report when the capture exits or `timeout` passes.
    fn poll(
        &mut self,
        what: &str,
        timeout: Duration,
        every: Duration,
        mut ready: impl FnMut(&Self) -> (bool, Option<Value>),
    ) {
        let outcome = redoline_testenv::wait::wait_until(what, timeout, every, || {
            let (done, answer) = ready(self);
            if answer.is_some() {
                self.last_status = answer;
            }
            if done {
                return Ok(true);
            }
            // Checked after the condition: one that held just before the exit still counts.
            if let Some(exit) = self.try_wait() {
                anyhow::bail!("the capture exited ({exit})");
            }
            Ok(false)
        });
        if let Err(error) = outcome {
            self.fail(&format!("{error:#}"));
        }
    }

    /// Waits at most `timeout` for the capture to exit by itself: its exit status.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(exit) = self.try_wait() {
                return exit;
            }
            if std::time::Instant::now() >= deadline {
                self.fail(&format!("the capture did not exit within {timeout:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then the exit status (at most [`STOP_PATIENCE`] later): the capture finishes
    /// what it does and exits.
    pub fn terminate(&mut self) -> ExitStatus {
        if let Some(exit) = self.try_wait() {
            self.fail(&format!("the capture had exited ({exit}) before SIGTERM"));
        }
        match sigterm(&mut self.child) {
            Some(exit) => {
                self.exit = Some(exit);
                self.join_reader();
                exit
            }
            None => self.fail(&format!("no exit within {STOP_PATIENCE:?} after SIGTERM")),
        }
    }

    /// SIGKILL (a crash), then the exit status.
    pub fn kill(&mut self) -> ExitStatus {
        if self.exit.is_none() {
            // It may have exited between the last poll and the kill: the wait tells either way.
            let _ = self.child.kill();
            self.exit = Some(self.child.wait().expect("reaping the capture"));
            self.join_reader();
        }
        self.exit.expect("an exit status")
    }

    /// Panics with `problem` and everything the capture left to explain it.
    pub fn fail(&mut self, problem: &str) -> ! {
        let exit = match self.try_wait() {
            Some(exit) => format!("exited: {exit}"),
            None => "still running (killed now)".to_owned(),
        };
        self.kill();
        let last_status = match &self.last_status {
            Some(status) => status.to_string(),
            None => "none answered (or none was asked)".to_owned(),
        };
        let termination = std::fs::read_to_string(&self.termination_log)
            .unwrap_or_else(|error| format!("none ({error})"));
        panic!(
            "{problem}\n\
             capture: {exit}\n\
             last /status: {last_status}\n\
             termination message: {termination}\n\
             ----- capture stderr -----\n{}-----",
            self.stderr()
        );
    }

    /// The stderr reader ends once the pipe closes, which follows the exit (unless the capture
    /// left a child holding it; it starts none).
    fn join_reader(&mut self) {
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// Sends SIGTERM to `child` and waits at most [`STOP_PATIENCE`] for its exit status (`None`
/// when it is still running then).
pub fn sigterm(child: &mut Child) -> Option<ExitStatus> {
    let pid = child.id().to_string();
    let sent = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("running kill");
    assert!(sent.success(), "kill -TERM {pid}: {sent}");
    let deadline = std::time::Instant::now() + STOP_PATIENCE;
    loop {
        if let Some(exit) = child.try_wait().expect("polling the capture") {
            return Some(exit);
        }
        if std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.exit.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        self.join_reader();
    }
}
