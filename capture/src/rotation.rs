//! Credential rotation: the capture follows the Secrets mounted under [`MOUNT_ROOT`] and ends
//! cleanly when one of them changes, so that the kubelet starts it again with the new files.
//!
//! Every Secret a capture pod mounts lives under `/var/run/secrets/redoline/<purpose>/` (the
//! database credentials, the wallet, the Kafka configuration and whatever the operator mounts
//! there later). The kubelet refreshes a mounted Secret volume on its own sync (about a minute by
//! default, `syncFrequency`): it writes the new data into a fresh hidden directory, then swaps the
//! `..data` symlink to it atomically; the visible files are symlinks through `..data`.
//!
//! Why a restart rather than reconnecting in place: what reads the files does so once per
//! process or per client: the Oracle client library reads `sqlnet.ora` and the wallet for its
//! environment, librdkafka reads certificate files when a producer is made, and the config is
//! rendered once. A fresh process reads all of them exactly as a first start does, on the path
//! every start takes (the producer fences the old transactional id, the bookmark gives where to
//! resume), so exactly-once needs nothing new. The stop is the one SIGTERM asks for: the
//! transaction being read is finished, the open Kafka transaction committed or aborted, then the
//! process exits with [`crate::exit::CREDENTIALS_CHANGED`].
//!
//! Why a poll rather than inotify: a digest of a few small files every [`POLL_INTERVAL`] costs
//! nothing, sees every kind of change (a `..data` swap, a key added or removed, a file edited in
//! place by hand) without following symlink targets that come and go, and is the same code on
//! every file system. The pure part is [`TreeDigest`] and its comparison; [`read_tree`] and
//! [`watch`] are the thin I/O around it.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use prometheus::Gauge;
use sha2::{Digest, Sha256};

/// Where every Secret of a capture pod is mounted, one directory per purpose.
pub const MOUNT_ROOT: &str = "/var/run/secrets/redoline";
/// How often the mounted files are read again. The kubelet's own refresh is the slower step.
pub const POLL_INTERVAL: Duration = Duration::from_secs(5);

/// The mounts (first directory under the root) whose files changed, as the capture saw them
/// when it decided to stop. Set once per process.
pub type Rotated = Arc<OnceLock<BTreeSet<String>>>;

/// What the mounted tree holds: each visible file's path below the root with a SHA-256 of its
/// content. Never a value: only the digests are kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeDigest {
    files: BTreeMap<PathBuf, [u8; 32]>,
}

impl TreeDigest {
    /// The digest of files given as (path below the root, content).
    pub fn of<'a>(files: impl IntoIterator<Item = (PathBuf, &'a [u8])>) -> Self {
        Self {
            files: files
                .into_iter()
                .map(|(path, content)| (path, Sha256::digest(content).into()))
                .collect(),
        }
    }

    /// How many files it covers.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The mounts whose files differ between `self` and `now`: a file changed, added or removed.
    /// A mount is the first component of a path (`database`, `wallet`, `kafka`, ...); a file
    /// directly under the root is its own mount.
    pub fn changed_mounts(&self, now: &TreeDigest) -> BTreeSet<String> {
        let mut changed = BTreeSet::new();
        let paths: BTreeSet<&PathBuf> = self.files.keys().chain(now.files.keys()).collect();
        for path in paths {
            if self.files.get(path) != now.files.get(path) {
                changed.insert(mount_of(path));
            }
        }
        changed
    }
}

fn mount_of(path: &Path) -> String {
    match path.components().next() {
        Some(Component::Normal(first)) => first.to_string_lossy().into_owned(),
        _ => path.display().to_string(),
    }
}

/// Whether a directory entry is the kubelet's bookkeeping rather than a key: `..data` and the
/// timestamped `..2026_12_05_...` directories. The visible names are symlinks through `..data`,
/// so reading them reads the current data once.
fn is_bookkeeping(name: &std::ffi::OsStr) -> bool {
    name.to_string_lossy().starts_with("..")
}

/// Reads every visible file under `root` (following the kubelet's symlinks) into a digest. A
/// file that vanishes between the listing and the read (a swap under way) is left out: the next
/// poll sees the settled tree, and a difference is a change either way.
pub fn read_tree(root: &Path) -> io::Result<TreeDigest> {
    let mut contents: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        for entry in std::fs::read_dir(root.join(&relative))? {
            let entry = entry?;
            if is_bookkeeping(&entry.file_name()) {
                continue;
            }
            let path = relative.join(entry.file_name());
            let absolute = root.join(&path);
            // `metadata` follows symlinks: a key is a symlink to a file, a mount a directory.
            match std::fs::metadata(&absolute) {
                Ok(meta) if meta.is_dir() => pending.push(path),
                Ok(_) => match std::fs::read(&absolute) {
                    Ok(content) => contents.push((path, content)),
                    Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                    Err(error) => return Err(error),
                },
                Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                Err(error) => return Err(error),
            }
        }
    }
    Ok(TreeDigest::of(
        contents
            .iter()
            .map(|(path, content)| (path.clone(), content.as_slice())),
    ))
}

/// What [`watch`] needs.
#[derive(Clone, Debug)]
pub struct Watch {
    pub root: PathBuf,
    pub interval: Duration,
    /// Set when a change is seen: the same flag SIGTERM sets, so the run ends the same way.
    pub stop: Arc<AtomicBool>,
    /// Given the changed mounts when a change is seen.
    pub rotated: Rotated,
    /// `redoline_capture_credentials_loaded_timestamp_seconds`: set when the tree is first read.
    pub loaded: Gauge,
}

/// Follows the tree under `watch.root` until a change, then asks the run to stop. Returns at
/// once when there is no such directory (a run outside Kubernetes, or without the operator's
/// mounts).
pub async fn watch(watch: Watch) {
    if let Some(known) = first_read(&watch).await {
        follow(watch, known).await;
    }
}

async fn read(root: &Path) -> io::Result<TreeDigest> {
    let root = root.to_owned();
    tokio::task::spawn_blocking(move || read_tree(&root))
        .await
        .unwrap_or_else(|join| Err(io::Error::other(join)))
}

/// The tree as the capture starts with it; `None` when there is none to follow.
async fn first_read(watch: &Watch) -> Option<TreeDigest> {
    let root = &watch.root;
    if !tokio::fs::metadata(root)
        .await
        .is_ok_and(|meta| meta.is_dir())
    {
        tracing::debug!(root = %root.display(), "no mounted credentials to follow");
        return None;
    }
    match read(root).await {
        Ok(digest) => {
            watch
                .loaded
                .set(jiff::Timestamp::now().as_millisecond() as f64 / 1000.0);
            tracing::info!(
                root = %root.display(),
                files = digest.len(),
                interval_seconds = watch.interval.as_secs_f64(),
                "following the mounted credentials"
            );
            Some(digest)
        }
        Err(error) => {
            tracing::warn!(
                root = %root.display(),
                %error,
                "the mounted credentials cannot be read: their changes are not followed"
            );
            None
        }
    }
}

/// Polls until the tree differs from `known`. A poll that cannot read the tree keeps `known`
/// and tries again.
async fn follow(watch: Watch, known: TreeDigest) {
    let mut ticks = tokio::time::interval(watch.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is immediate.
    ticks.tick().await;
    loop {
        ticks.tick().await;
        let now = match read(&watch.root).await {
            Ok(digest) => digest,
            Err(error) => {
                tracing::warn!(root = %watch.root.display(), %error, "reading the mounted credentials");
                continue;
            }
        };
        let changed = known.changed_mounts(&now);
        if changed.is_empty() {
            continue;
        }
        let mounts: Vec<&str> = changed.iter().map(String::as_str).collect();
        tracing::warn!(
            mounts = mounts.join(","),
            "mounted credentials changed: finishing the current transaction, then exiting so \
             that the container starts again with them"
        );
        let _ = watch.rotated.set(changed);
        watch.stop.store(true, Ordering::Relaxed);
        // One stop is all it takes: the process ends once the run has finished.
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(files: &[(&str, &str)]) -> TreeDigest {
        TreeDigest::of(
            files
                .iter()
                .map(|(path, content)| (PathBuf::from(path), content.as_bytes())),
        )
    }

    #[test]
    fn a_changed_added_or_removed_file_names_its_mount() {
        let before = digest(&[
            ("database/username", "cdc"),
            ("database/password", "s3cret"),
            ("kafka/linger.ms", "5"),
        ]);
        assert!(before.changed_mounts(&before.clone()).is_empty());
        let rotated = digest(&[
            ("database/username", "cdc"),
            ("database/password", "n3w"),
            ("kafka/linger.ms", "5"),
        ]);
        assert_eq!(
            before.changed_mounts(&rotated),
            BTreeSet::from(["database".to_owned()])
        );
        let added = digest(&[
            ("database/username", "cdc"),
            ("database/password", "s3cret"),
            ("kafka/linger.ms", "5"),
            ("kafka-tls/ca.crt", "cert"),
        ]);
        assert_eq!(
            before.changed_mounts(&added),
            BTreeSet::from(["kafka-tls".to_owned()])
        );
        let removed = digest(&[
            ("database/username", "cdc"),
            ("database/password", "s3cret"),
        ]);
        assert_eq!(
            before.changed_mounts(&removed),
            BTreeSet::from(["kafka".to_owned()])
        );
    }

    #[test]
    fn the_digest_keeps_no_value() {
        let before = digest(&[("database/password", "s3cret")]);
        assert!(!format!("{before:?}").contains("s3cret"));
    }

    /// The layout the kubelet's atomic writer makes: keys are symlinks through `..data`, which
    /// points at a timestamped directory and is swapped to a new one on an update.
    struct KubeletVolume {
        dir: PathBuf,
        generation: u32,
    }

    impl KubeletVolume {
        fn new(dir: PathBuf, files: &[(&str, &str)]) -> Self {
            std::fs::create_dir_all(&dir).unwrap();
            let mut volume = Self { dir, generation: 0 };
            volume.write(files);
            for (key, _) in files {
                std::os::unix::fs::symlink(format!("..data/{key}"), volume.dir.join(key)).unwrap();
            }
            volume
        }

        fn write(&mut self, files: &[(&str, &str)]) {
            self.generation += 1;
            let data = self.dir.join(format!("..2026_12_05_{}", self.generation));
            std::fs::create_dir(&data).unwrap();
            for (key, content) in files {
                std::fs::write(data.join(key), content).unwrap();
            }
            let temporary = self.dir.join("..data_tmp");
            std::os::unix::fs::symlink(data.file_name().unwrap(), &temporary).unwrap();
            std::fs::rename(&temporary, self.dir.join("..data")).unwrap();
        }
    }

    #[test]
    fn a_kubelet_swap_is_read_through_the_symlinks() {
        let root = tempfile::tempdir().unwrap();
        let mut database = KubeletVolume::new(
            root.path().join("database"),
            &[("username", "cdc"), ("password", "s3cret")],
        );
        KubeletVolume::new(root.path().join("kafka"), &[("linger.ms", "5")]);
        let before = read_tree(root.path()).unwrap();
        assert_eq!(before.len(), 3, "the visible keys only: {before:?}");
        assert!(
            before
                .changed_mounts(&read_tree(root.path()).unwrap())
                .is_empty()
        );
        database.write(&[("username", "cdc"), ("password", "n3w")]);
        let after = read_tree(root.path()).unwrap();
        assert_eq!(
            before.changed_mounts(&after),
            BTreeSet::from(["database".to_owned()])
        );
    }

    #[tokio::test]
    async fn a_change_stops_the_run_and_no_root_does_nothing() {
        let gauge = || {
            let gauge = Gauge::new("loaded", "test").unwrap();
            gauge.set(-1.0);
            gauge
        };
        // No root: returns at once, nothing set.
        let nothing = Watch {
            root: PathBuf::from("/nonexistent/redoline"),
            interval: Duration::from_millis(10),
            stop: Arc::new(AtomicBool::new(false)),
            rotated: Rotated::default(),
            loaded: gauge(),
        };
        watch(nothing.clone()).await;
        assert!(!nothing.stop.load(Ordering::Relaxed));
        assert!(nothing.rotated.get().is_none());
        assert_eq!(nothing.loaded.get(), -1.0);

        let root = tempfile::tempdir().unwrap();
        let mut database = KubeletVolume::new(
            root.path().join("database"),
            &[("username", "cdc"), ("password", "s3cret")],
        );
        let watched = Watch {
            root: root.path().to_owned(),
            interval: Duration::from_millis(20),
            stop: Arc::new(AtomicBool::new(false)),
            rotated: Rotated::default(),
            loaded: gauge(),
        };
        let known = first_read(&watched).await.expect("a tree to follow");
        // Read at the first look: the timestamp of the credentials this process runs with.
        assert!(watched.loaded.get() > 1.7e9, "{}", watched.loaded.get());
        database.write(&[("username", "cdc"), ("password", "n3w")]);
        tokio::time::timeout(Duration::from_secs(60), follow(watched.clone(), known))
            .await
            .expect("the watch ends after a change");
        assert!(watched.stop.load(Ordering::Relaxed));
        assert_eq!(
            watched.rotated.get(),
            Some(&BTreeSet::from(["database".to_owned()]))
        );
    }
}
