//! Child processes of the test environment: small, blocking helpers shared by the service
//! modules (`kafka`, `k8s`, …).
//!
//! * [`free_ports`], [`free_port`]: loopback ports nobody listens on right now, reserved for
//!   this test process.
//! * [`run_script`]: run a helper script to completion, bounded by a timeout, and get its
//!   combined stdout+stderr (which is also in the error when it fails).
//! * [`ScriptService`]: a service managed by a script of `tests/env` that follows the
//!   `start | wait | stop` convention below, started on behalf of this test process so that the
//!   script's watchdog stops it when this process exits, however it exits.
//! * [`file_tail`]: the last lines of a log file, for error messages.
//! * [`shared_service`], [`read_description`]: a service started once per test process, and the
//!   JSON file in which its script describes it.
//!
//! # Script convention
//!
//! ```text
//! SCRIPT start DATA_DIR ARGS... OWNER_PID   # starts in the background, returns promptly
//! SCRIPT wait  DATA_DIR ARGS...             # returns once the service is ready, fails loudly
//! SCRIPT stop  DATA_DIR                     # stops it; idempotent
//! ```
//!
//! Everything a script starts in the background must redirect its standard streams away from
//! the script's own (to files in `DATA_DIR`), and should survive the script itself.

use std::ffi::OsStr;
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, SeekFrom};
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde::de::DeserializeOwned;

/// The ports this process has handed out, each with its lock file held (see [`free_ports`]): the
/// locks last as long as the process, so no other test process is handed the same port.
static RESERVED: Mutex<Vec<File>> = Mutex::new(Vec::new());

/// How many ports [`free_ports`] tries before giving up (each one taken by another test process
/// costs a try).
const PORT_TRIES: usize = 1000;

/// `n` distinct TCP ports on 127.0.0.1 that were free when this returned, reserved for this
/// process among the test processes that use this function.
///
/// The kernel finds a free port when a listener binds port 0; the listener is closed again for
/// the caller (a capture, a broker) to bind it. Between the two, another test process asking the
/// kernel for a free port can be given the same one: the kernel picks at random among the free
/// ones, and a port released is free again. Two tests were then given one port, and the second
/// service to bind it failed to start ("address in use"). So every port handed out is also
/// reserved, with an exclusive lock on a file named after it in a directory all test processes
/// share; a port another process holds is skipped. The lock is held until this process exits.
///
/// What remains is a process that binds without asking here, in the window between the close and
/// the caller's bind: not another test (they all ask here), and not an outgoing connection, for
/// which Linux (since 4.6) takes ports of the other parity than the ones it gives to port 0.
pub fn free_ports(n: usize) -> Result<Vec<u16>> {
    let dir = std::env::temp_dir().join("redoline-test-ports");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut listeners = Vec::with_capacity(n);
    let mut ports = Vec::with_capacity(n);
    let mut locks = Vec::with_capacity(n);
    for _ in 0..PORT_TRIES {
        if ports.len() == n {
            break;
        }
        // Kept open until all `n` are found, so the kernel gives `n` different ones.
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .context("binding 127.0.0.1:0 to find a free port")?;
        let port = listener.local_addr()?.port();
        listeners.push(listener);
        let path = dir.join(format!("{port}.lock"));
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        match lock.try_lock() {
            Ok(()) => {
                ports.push(port);
                locks.push(lock);
            }
            // Another test process was handed this port: ask for another.
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(error)) => {
                return Err(error).with_context(|| format!("locking {}", path.display()));
            }
        }
    }
    if ports.len() < n {
        bail!(
            "found {} of {n} free ports in {PORT_TRIES} tries",
            ports.len()
        );
    }
    RESERVED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .extend(locks);
    Ok(ports)
}

/// One free loopback port, as [`free_ports`] finds them (with the same race), for a test to
/// serve on. It panics rather than failing: a test cannot go on without a port, and a machine
/// where 127.0.0.1:0 cannot be bound runs none of them.
#[allow(clippy::panic)]
pub fn free_port() -> u16 {
    match free_ports(1).map(|mut ports| ports.pop()) {
        Ok(Some(port)) => port,
        Ok(None) => panic!("binding 127.0.0.1:0 gave no port"),
        Err(error) => panic!("{error:#}"),
    }
}

/// Runs `script args...` with the extra environment `envs`, waits at most `timeout` for it, and
/// returns its standard output and error, interleaved as written.
///
/// The output goes through an anonymous temporary file rather than pipes, so background
/// processes that the script leaves behind cannot keep this call waiting for an end of file.
/// On a non-zero exit or a timeout (after which the script is killed) the error holds the
/// command line and everything it printed.
pub fn run_script<S: AsRef<OsStr>>(
    script: &Path,
    args: &[S],
    envs: &[(&str, &str)],
    timeout: Duration,
) -> Result<String> {
    let shown = std::iter::once(script.display().to_string())
        .chain(
            args.iter()
                .map(|a| a.as_ref().to_string_lossy().into_owned()),
        )
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = tempfile::tempfile().context("creating a temporary file for script output")?;
    let mut child = Command::new(script)
        .args(args)
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out.try_clone()?)
        .spawn()
        .with_context(|| format!("running `{shown}`"))?;
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if Instant::now() >= deadline {
            // The script may already be gone between the check and the kill: both are fine.
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(50));
    };
    let mut text = String::new();
    out.seek(SeekFrom::Start(0))?;
    out.read_to_string(&mut text)
        .with_context(|| format!("reading the output of `{shown}`"))?;
    match status {
        Some(status) if status.success() => Ok(text),
        Some(status) => bail!("`{shown}` failed ({status}); its output:\n{text}"),
        None => bail!("`{shown}` did not finish within {timeout:?}; its output:\n{text}"),
    }
}

/// A service shared by all tests of this process, kept in `cell`: started by `init` on first
/// use, and a failed start remembered and reported to every later caller, naming `what`.
pub fn shared_service<T>(
    cell: &'static OnceLock<std::result::Result<T, String>>,
    what: &str,
    init: impl FnOnce() -> Result<T>,
) -> Result<&'static T> {
    cell.get_or_init(|| init().map_err(|e| format!("{e:#}")))
        .as_ref()
        .map_err(|e| anyhow!("{what} is not available: {e}"))
}

/// The JSON file at `path` in which a `tests/env` script describes the service it started.
pub fn read_description<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// The last `lines` lines of the file at `path`, or a note saying why there are none.
pub fn file_tail(path: &Path, lines: usize) -> String {
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let all: Vec<&str> = text.lines().collect();
            let start = all.len().saturating_sub(lines);
            format!(
                "----- last {} lines of {} -----\n{}\n-----",
                all.len() - start,
                path.display(),
                all[start..].join("\n")
            )
        }
        Err(e) => format!("(no log at {}: {e})", path.display()),
    }
}

/// A service run by a `tests/env` script following the convention in the module docs, with
/// its state in `data_dir`. Owning one does not stop the service on drop (statics are never
/// dropped anyway): the watchdog that [`ScriptService::start`] asks for does that when this
/// test process exits, and [`ScriptService::stop`] does it at once.
#[derive(Debug, Clone)]
pub struct ScriptService {
    name: String,
    script: PathBuf,
    data_dir: PathBuf,
    envs: Vec<(String, String)>,
}

impl ScriptService {
    /// `name` is only for messages; `script` must be executable.
    pub fn new(name: &str, script: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Self {
        Self {
            name: name.to_owned(),
            script: script.into(),
            data_dir: data_dir.into(),
            envs: Vec::new(),
        }
    }

    /// Adds an environment variable to every run of the script.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.envs.push((key.to_owned(), value.to_owned()));
        self
    }

    /// The service's state directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// `SCRIPT start DATA_DIR args... OWNER_PID`, where OWNER_PID is this process.
    pub fn start(&self, args: &[&str], timeout: Duration) -> Result<String> {
        let owner = std::process::id().to_string();
        let mut all = vec![OsStr::new("start"), self.data_dir.as_os_str()];
        all.extend(args.iter().map(OsStr::new));
        all.push(OsStr::new(&owner));
        self.run(&all, timeout)
            .with_context(|| format!("starting {}", self.name))
    }

    /// `SCRIPT wait DATA_DIR args...`.
    pub fn wait(&self, args: &[&str], timeout: Duration) -> Result<String> {
        let mut all = vec![OsStr::new("wait"), self.data_dir.as_os_str()];
        all.extend(args.iter().map(OsStr::new));
        self.run(&all, timeout)
            .with_context(|| format!("waiting for {}", self.name))
    }

    /// `SCRIPT stop DATA_DIR`.
    pub fn stop(&self, timeout: Duration) -> Result<String> {
        self.run(&[OsStr::new("stop"), self.data_dir.as_os_str()], timeout)
            .with_context(|| format!("stopping {}", self.name))
    }

    fn run(&self, args: &[&OsStr], timeout: Duration) -> Result<String> {
        let envs: Vec<(&str, &str)> = self
            .envs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        run_script(&self.script, args, &envs, timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_are_distinct_and_bindable() {
        let ports = free_ports(3).unwrap();
        assert_eq!(ports.len(), 3);
        assert!(ports[0] != ports[1] && ports[1] != ports[2] && ports[0] != ports[2]);
        assert!(ports.iter().all(|&p| p != 0));
        // Another process may take a port once it is returned (the documented race: the
        // services and clients of a test run open connections from the same range), so only a
        // port that no one can bind is wrong; all three being taken meanwhile is not a race.
        let bindable = ports
            .iter()
            .filter(|&&p| TcpListener::bind((Ipv4Addr::LOCALHOST, p)).is_ok())
            .count();
        assert!(bindable > 0, "none of {ports:?} can be bound");
    }

    #[test]
    fn a_port_handed_out_stays_reserved_for_this_process() {
        let port = free_port();
        // Another test process asking for ports opens the same lock file and is refused.
        let path = std::env::temp_dir()
            .join("redoline-test-ports")
            .join(format!("{port}.lock"));
        let other = File::options().write(true).open(&path).unwrap();
        assert!(
            matches!(other.try_lock(), Err(TryLockError::WouldBlock)),
            "{} is not locked",
            path.display()
        );
    }

    #[test]
    fn run_script_captures_output_and_failures() {
        let sh = Path::new("/bin/sh");
        let out = run_script(
            sh,
            &["-c", "echo out; echo err >&2"],
            &[],
            Duration::from_secs(10),
        )
        .unwrap();
        assert!(out.contains("out") && out.contains("err"), "{out}");
        let err = run_script(
            sh,
            &["-c", "echo boom; exit 3"],
            &[],
            Duration::from_secs(10),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("boom") && err.contains('3'), "{err}");
        let err = run_script(sh, &["-c", "sleep 30"], &[], Duration::from_millis(200))
            .unwrap_err()
            .to_string();
        assert!(err.contains("did not finish"), "{err}");
    }

    #[test]
    fn run_script_does_not_wait_for_background_children() {
        let started = Instant::now();
        run_script(
            Path::new("/bin/sh"),
            &["-c", "sleep 5 & echo started"],
            &[],
            Duration::from_secs(4),
        )
        .unwrap();
        assert!(started.elapsed() < Duration::from_secs(4));
    }
}
