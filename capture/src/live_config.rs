//! The config file followed while the capture runs: a change of `snapshot.requests` alone
//! applies without a restart, at the next window boundary; any other change waits for the next
//! start.
//!
//! Why: a restart is costly. The open transactions are mined again from the oldest one's start
//! (hours of redo, at worst) and streaming pauses meanwhile, while a request only queues a read
//! that the engine places between two windows anyway (`engine::incremental`). The operator
//! leaves `snapshot.requests` out of the config hash it puts on the pod template, so such a
//! change rewrites the mounted ConfigMap without rolling the pod; every other change still rolls
//! it.
//!
//! How: the file is read again every [`POLL_INTERVAL`], by its path each time. The kubelet
//! updates a ConfigMap mounted as a directory by writing a fresh hidden directory and swapping
//! the `..data` symlink to it, and the file is a symlink through `..data`: a read by path always
//! sees one whole version. A new content is loaded as at start ([`crate::config::load`]: the same
//! environment overrides, schema and rules), then [`assess`]ed against the config the run
//! started with:
//! - only `snapshot.requests` differ from the requests in force: they replace them
//!   ([`LiveRequests`]); the engine reconciles its queue with them at the next window boundary,
//!   exactly as at start (a new id queued, a removed queued or running one cancelled, a finished
//!   one left finished);
//! - anything else differs: nothing applies now (not even the requests, which may name a table
//!   only the rest of the change captures); logged once, shown on `/status` as
//!   `configFile: {state: restartPending}`;
//! - it does not load: the run goes on with the config in force; a warning names the error once
//!   per content, `/status` shows `configFile: {state: invalid, error}` and the gauge
//!   `redoline_capture_config_file_invalid` is 1 until a loadable content replaces it.
//!
//! Why a poll rather than inotify: as for the mounted credentials ([`crate::rotation`]), a read
//! of one small file every few seconds costs nothing and sees the symlink swap, an edit in
//! place and a rename over the file alike.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jiff::Timestamp;
use prometheus::IntGauge;
use redoline_crds::capture::ConfigFileState;
use redoline_crds::v1alpha1::SnapshotRequest;
use sha2::{Digest, Sha256};

use crate::config::{self, CaptureConfig, ConfigError};
use crate::http::StatusBoard;

/// How often the config file is read again. The kubelet's propagation of a ConfigMap change
/// (its sync period plus its cache's TTL, about a minute each by default) is the slower step.
pub const POLL_INTERVAL: Duration = Duration::from_secs(2);

/// The snapshot requests in force, shared by the config watch (which replaces them) and the
/// engine (which applies them), and kept across the attempts of a run, so an engine started
/// again after a transient fault reconciles with the requests in force, not with those the
/// file held when the process began.
#[derive(Clone, Debug)]
pub struct LiveRequests {
    inner: Arc<Mutex<InForce>>,
}

#[derive(Debug)]
struct InForce {
    /// Counts replacements: the engine compares it with the last one it applied.
    generation: u64,
    requests: Vec<SnapshotRequest>,
}

impl LiveRequests {
    pub fn new(requests: Vec<SnapshotRequest>) -> Self {
        Self {
            inner: Arc::new(Mutex::new(InForce {
                generation: 0,
                requests,
            })),
        }
    }

    /// The requests in force and their generation.
    pub fn current(&self) -> (u64, Vec<SnapshotRequest>) {
        let in_force = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        (in_force.generation, in_force.requests.clone())
    }

    /// Puts `requests` in force (a new generation).
    pub fn replace(&self, requests: Vec<SnapshotRequest>) {
        let mut in_force = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        in_force.generation += 1;
        in_force.requests = requests;
    }
}

/// What a content of the config file means for the run.
#[derive(Clone, Debug, PartialEq)]
pub enum Assessment {
    /// The config in force.
    InForce,
    /// Only `snapshot.requests` differ: these replace the requests in force.
    Requests(Vec<SnapshotRequest>),
    /// Something beyond `snapshot.requests` differs: it applies at the next start.
    RestartPending,
    /// It does not load.
    Invalid(ConfigError),
}

/// What `loaded` (the file as it loads now) means for a run that started with `started` and
/// has `requests` in force.
pub fn assess(
    started: &CaptureConfig,
    requests: &[SnapshotRequest],
    loaded: Result<CaptureConfig, ConfigError>,
) -> Assessment {
    let loaded = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return Assessment::Invalid(error),
    };
    let mut rest = loaded.clone();
    rest.snapshot.requests = started.snapshot.requests.clone();
    if &rest != started {
        Assessment::RestartPending
    } else if loaded.snapshot.requests != requests {
        Assessment::Requests(loaded.snapshot.requests)
    } else {
        Assessment::InForce
    }
}

/// What [`follow`] needs.
#[derive(Clone, Debug)]
pub struct Follow {
    pub path: PathBuf,
    /// The environment the file was loaded with at start (its overrides apply again).
    pub environment: Vec<(String, String)>,
    /// The config the run started with.
    pub started: CaptureConfig,
    pub requests: LiveRequests,
    pub board: StatusBoard,
    /// `redoline_capture_config_file_invalid`.
    pub invalid: IntGauge,
    pub interval: Duration,
}

/// Reads the config file every `follow.interval` for as long as the run lasts (the runtime
/// ends with it).
pub async fn follow(follow: Follow) {
    let mut ticks = tokio::time::interval(follow.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last: Option<Vec<u8>> = None;
    // Every content seen (by digest): an invalid one seen again (an edit undone, then redone)
    // is not warned about twice.
    let mut seen: BTreeSet<[u8; 32]> = BTreeSet::new();
    loop {
        ticks.tick().await;
        let path = follow.path.clone();
        let read = tokio::task::spawn_blocking(move || std::fs::read(path))
            .await
            .unwrap_or_else(|join| Err(std::io::Error::other(join)));
        let content = match read {
            Ok(content) => content,
            // Between an unlink and a rename by an editor: the next poll sees the new file.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => error.to_string().into_bytes(),
        };
        // Each content once: the same file read again changes nothing, and a warning about it
        // is not repeated every poll.
        if last.as_ref() == Some(&content) {
            continue;
        }
        let loaded = config::load(&follow.path, &follow.environment);
        let first_time = seen.insert(Sha256::digest(&content).into());
        last = Some(content);
        apply(&follow, loaded, first_time);
    }
}

/// Acts on one new content of the file; `first_time` when this content was never seen before
/// (an invalid one is warned about only then).
fn apply(follow: &Follow, loaded: Result<CaptureConfig, ConfigError>, first_time: bool) {
    let (_, in_force) = follow.requests.current();
    let assessment = assess(&follow.started, &in_force, loaded);
    let shown = match assessment {
        Assessment::InForce => None,
        Assessment::Requests(requests) => {
            tracing::info!(
                requests = requests.len(),
                "snapshot.requests changed in the config file: applied at the next window \
                 boundary, without a restart"
            );
            follow.requests.replace(requests);
            None
        }
        Assessment::RestartPending => {
            tracing::info!(
                path = %follow.path.display(),
                "the config file changed beyond snapshot.requests: the change applies at the \
                 next restart (the operator rolls the pod for it)"
            );
            Some(ConfigFileState::RestartPending)
        }
        Assessment::Invalid(error) => {
            if first_time {
                tracing::warn!(
                    path = %follow.path.display(),
                    %error,
                    "the config file changed and cannot be loaded: the capture goes on with the \
                     config in force"
                );
            }
            Some(ConfigFileState::Invalid {
                error: error.to_string(),
            })
        }
    };
    follow.invalid.set(i64::from(matches!(
        shown,
        Some(ConfigFileState::Invalid { .. })
    )));
    follow.board.update(Timestamp::now(), |report| {
        report.config_file = shown;
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use redoline_crds::v1alpha1::TableName;

    fn config() -> CaptureConfig {
        config::parse(
            "name: test\n\
             database: {simulator: {scenario: s.jsonl}}\n\
             tables: [APP.ORDERS]\n\
             file: {path: out.jsonl}\n",
            &[],
        )
        .unwrap()
    }

    fn request(id: &str) -> SnapshotRequest {
        SnapshotRequest {
            id: id.to_owned(),
            tables: vec![TableName("APP.ORDERS".to_owned())],
            condition: None,
        }
    }

    #[test]
    fn a_change_of_the_requests_alone_applies_and_anything_else_waits() {
        let started = config();
        assert_eq!(
            assess(&started, &[], Ok(started.clone())),
            Assessment::InForce
        );
        let mut asked = started.clone();
        asked.snapshot.requests = vec![request("reread-1")];
        assert_eq!(
            assess(&started, &[], Ok(asked.clone())),
            Assessment::Requests(vec![request("reread-1")])
        );
        // Once applied, the same file is the config in force; removing the request applies too.
        assert_eq!(
            assess(&started, &[request("reread-1")], Ok(asked.clone())),
            Assessment::InForce
        );
        assert_eq!(
            assess(&started, &[request("reread-1")], Ok(started.clone())),
            Assessment::Requests(Vec::new())
        );
        // Any other field, with or without a request, waits for the restart.
        let mut fetch = asked.clone();
        fetch.snapshot.fetch_size = 7;
        assert_eq!(assess(&started, &[], Ok(fetch)), Assessment::RestartPending);
        let mut tables = started.clone();
        tables.tables.push(TableName("APP.ITEMS".to_owned()));
        assert_eq!(
            assess(&started, &[], Ok(tables)),
            Assessment::RestartPending
        );
        let error = ConfigError::new("snapshot.requests[0].id", "bad");
        assert_eq!(
            assess(&started, &[], Err(error.clone())),
            Assessment::Invalid(error)
        );
    }

    #[test]
    fn replacing_the_requests_moves_the_generation() {
        let live = LiveRequests::new(vec![request("a")]);
        assert_eq!(live.current(), (0, vec![request("a")]));
        live.replace(Vec::new());
        assert_eq!(live.current(), (1, Vec::new()));
    }
}
