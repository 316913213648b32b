#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The container images as `tests/env/build-images.sh` builds them on this machine (docs/images.md:
//! a Debian base, the debug binaries, no Oracle Instant Client), read from the OCI archives it
//! writes, the files the node imports into containerd:
//!
//! * the archive names the image by its full reference, which `ctr images import` takes as the
//!   image's name;
//! * the configuration is what Kubernetes and the operator rely on: the numeric non-root user
//!   65532:65532 (`runAsNonRoot` checks it without a passwd file; the operator's pods run as
//!   65532), the entry point that the operator's pod spec passes only arguments to, port 8080;
//! * every label the Dockerfile sets is there, with the Dockerfile's value, or, for the values
//!   that are build arguments, a real one (version, commit, commit time, base) instead of the
//!   Dockerfile's placeholder; the capture image says that it has no Oracle client;
//! * the binaries run in them, unpacked by umoci and run by runc as a kubelet would: `version`
//!   answers with the version of the label, on a read-only root file system, and the capture's
//!   `version` and `--help` write nothing to a root file system that could be written either.
//!
//! The archives come from `REDOLINE_{CAPTURE,OPERATOR}_IMAGE_ARCHIVE` and the references they must
//! hold from `REDOLINE_{CAPTURE,OPERATOR}_IMAGE`, which `make test` exports. Without them each test
//! says so and checks nothing: building the images needs root, buildah and mmdebstrap
//! (`tests/env/build-images.sh && eval "$(tests/env/build-images.sh env)"`). When they are set,
//! a missing umoci, runc or tar fails the test.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

/// Deadline of each tar, umoci and runc call (`timeout` ends them).
const DEADLINE_SECONDS: &str = "120";
/// The user of both images, and of the operator's capture pods.
const USER: &str = "65532:65532";
const OCI_LABEL: &str = "org.opencontainers.image.";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

// ----- the archive ----------------------------------------------------------------------------

/// One image, its OCI archive unpacked into a layout directory of its own.
struct Image {
    reference: String,
    dir: tempfile::TempDir,
    manifest: Value,
    config: Value,
}

impl Image {
    /// The image whose archive `REDOLINE_<NAME>_IMAGE_ARCHIVE` names, or `None` (and a message)
    /// when that variable is unset.
    fn from_env(name: &str) -> Option<Image> {
        let archive_var = format!("REDOLINE_{name}_IMAGE_ARCHIVE");
        let reference_var = format!("REDOLINE_{name}_IMAGE");
        let Some(archive) = std::env::var_os(&archive_var).filter(|v| !v.is_empty()) else {
            eprintln!(
                "skipping: {archive_var} is not set (tests/env/build-images.sh builds the image; \
                 `make test` exports it)"
            );
            return None;
        };
        let reference = std::env::var(&reference_var)
            .unwrap_or_else(|_| panic!("{archive_var} is set but {reference_var} is not"));
        Some(Image::open(Path::new(&archive), reference))
    }

    fn open(archive: &Path, reference: String) -> Image {
        let dir = tempfile::tempdir().unwrap();
        let layout = dir.path().join("layout");
        std::fs::create_dir(&layout).unwrap();
        run_ok(
            Command::new("tar")
                .arg("-xf")
                .arg(archive)
                .arg("-C")
                .arg(&layout),
        );
        let index: Value = read_json(&layout.join("index.json"));
        let named: Vec<&Value> = index["manifests"]
            .as_array()
            .expect("index.json has manifests")
            .iter()
            .filter(|m| m["annotations"]["org.opencontainers.image.ref.name"] == reference)
            .collect();
        assert_eq!(
            named.len(),
            1,
            "{} must name exactly one manifest {reference}: {index}",
            archive.display()
        );
        let manifest = read_json(&blob(&layout, &named[0]["digest"]));
        let config = read_json(&blob(&layout, &manifest["config"]["digest"]));
        Image {
            reference,
            dir,
            manifest,
            config,
        }
    }

    fn label(&self, key: &str) -> Option<&str> {
        self.config["config"]["Labels"][key].as_str()
    }

    fn entrypoint(&self) -> Vec<String> {
        strings(&self.config["config"]["Entrypoint"])
    }

    /// The image's root file system and runtime configuration, as umoci makes them for runc
    /// (umoci checks every blob against its digest on the way).
    fn unpack(&self) -> Bundle {
        let bundle = self.dir.path().join("bundle");
        run_ok(
            Command::new("umoci")
                .arg("unpack")
                .arg("--image")
                .arg(format!(
                    "{}:{}",
                    self.dir.path().join("layout").display(),
                    self.reference
                ))
                .arg(&bundle),
        );
        Bundle {
            runc_root: self.dir.path().join("runc"),
            path: bundle,
        }
    }
}

/// The path of the blob a descriptor's digest names.
fn blob(layout: &Path, digest: &Value) -> PathBuf {
    let digest = digest.as_str().expect("a digest");
    let hex = digest.strip_prefix("sha256:").expect("a sha256 digest");
    layout.join("blobs/sha256").join(hex)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_slice(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

// ----- running it ------------------------------------------------------------------------------

/// An unpacked image: `rootfs/` and runc's `config.json` (the image's user, environment and
/// working directory; namespaces, /proc, /dev and /sys, as for any container).
struct Bundle {
    path: PathBuf,
    runc_root: PathBuf,
}

impl Bundle {
    /// Runs `argv` (replacing entry point and command) as the image's user, the root file system
    /// read-only or not, and returns what it printed.
    fn run(&self, argv: &[String], read_only: bool) -> Output {
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let config_path = self.path.join("config.json");
        let mut config = read_json(&config_path);
        config["process"]["terminal"] = Value::Bool(false);
        config["process"]["args"] = Value::from(argv.to_vec());
        config["root"]["readonly"] = Value::Bool(read_only);
        std::fs::write(&config_path, serde_json::to_vec(&config).unwrap()).unwrap();
        let id = format!(
            "redoline-images-{}-{}",
            std::process::id(),
            RUNS.fetch_add(1, Ordering::Relaxed)
        );
        let _container = RuncContainer {
            runc_root: &self.runc_root,
            id: &id,
        };
        Command::new("timeout")
            .arg(DEADLINE_SECONDS)
            .arg("runc")
            .arg("--root")
            .arg(&self.runc_root)
            .arg("run")
            .arg("--bundle")
            .arg(&self.path)
            .arg(&id)
            .output()
            .expect("runc (Debian package runc) runs")
    }

    /// Every file of the root file system with its type and mode, owner, size and inode change
    /// time (which a write, a chmod or a chown sets, and nothing sets back): a write anywhere
    /// adds, removes or changes an entry.
    fn snapshot(&self) -> BTreeMap<PathBuf, FileState> {
        fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, FileState>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let meta = std::fs::symlink_metadata(&path).unwrap();
                out.insert(
                    path.clone(),
                    (
                        meta.mode(),
                        meta.uid(),
                        meta.size(),
                        meta.ctime(),
                        meta.ctime_nsec(),
                    ),
                );
                if meta.is_dir() {
                    walk(&path, out);
                }
            }
        }
        let mut files = BTreeMap::new();
        walk(&self.path.join("rootfs"), &mut files);
        files
    }
}

/// Mode, owner, size and inode change time (seconds, nanoseconds) of a file.
type FileState = (u32, u32, u64, i64, i64);

/// Deletes the runc container however the run ended (a run stopped by its deadline leaves it).
struct RuncContainer<'a> {
    runc_root: &'a Path,
    id: &'a str,
}

impl Drop for RuncContainer<'_> {
    fn drop(&mut self) {
        let _ = Command::new("timeout")
            .arg(DEADLINE_SECONDS)
            .arg("runc")
            .arg("--root")
            .arg(self.runc_root)
            .args(["delete", "--force", self.id])
            .output();
    }
}

/// Runs `command` under the deadline and fails the test, with its output, unless it succeeds.
fn run_ok(command: &mut Command) -> Output {
    let program = command.get_program().to_owned();
    let args: Vec<_> = command.get_args().map(|a| a.to_owned()).collect();
    let output = Command::new("timeout")
        .arg(DEADLINE_SECONDS)
        .arg(&program)
        .args(&args)
        .output()
        .unwrap_or_else(|e| panic!("{program:?}: {e}"));
    assert!(
        output.status.success(),
        "{program:?} {args:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn succeeded(output: &Output, what: &str) -> String {
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

// ----- the Dockerfile's labels -----------------------------------------------------------------

/// A stage of a Dockerfile: its `AS` name (None without one) and the labels it sets, key and
/// value as written (quotes removed, `${ARG}` not expanded).
#[derive(Debug, PartialEq)]
struct Stage {
    name: Option<String>,
    labels: Vec<(String, String)>,
}

/// The stages of a Dockerfile with their LABEL instructions. Enough of the syntax for ours:
/// comments, lines continued with `\`, and `key=value` pairs whose values are either
/// double-quoted (without escaped quotes) or bare words.
fn dockerfile_stages(text: &str) -> Vec<Stage> {
    let mut instructions = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (current.is_empty() && trimmed.is_empty()) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(head) => {
                current.push_str(head);
                current.push(' ');
            }
            None => {
                current.push_str(trimmed);
                instructions.push(std::mem::take(&mut current));
            }
        }
    }
    let mut stages: Vec<Stage> = Vec::new();
    for instruction in instructions {
        let (word, rest) = instruction
            .split_once(char::is_whitespace)
            .unwrap_or((&instruction, ""));
        match word.to_ascii_uppercase().as_str() {
            "FROM" => {
                let words: Vec<&str> = rest.split_whitespace().collect();
                let name = match words.as_slice() {
                    [_, r#as, name] if r#as.eq_ignore_ascii_case("as") => Some((*name).to_owned()),
                    _ => None,
                };
                stages.push(Stage {
                    name,
                    labels: Vec::new(),
                });
            }
            "LABEL" => stages
                .last_mut()
                .expect("LABEL after FROM")
                .labels
                .extend(label_pairs(rest)),
            _ => {}
        }
    }
    stages
}

fn label_pairs(text: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=').expect("LABEL key=value");
        let (value, after) = match after.strip_prefix('"') {
            Some(quoted) => quoted.split_once('"').expect("a closing quote"),
            None => after.split_once(char::is_whitespace).unwrap_or((after, "")),
        };
        pairs.push((key.trim().to_owned(), value.to_owned()));
        rest = after.trim_start();
    }
    pairs
}

/// Checks the labels that the last stage of `dockerfile` and the stages named `from` set against
/// the image's.
fn assert_labels(image: &Image, dockerfile: &str, from: &[&str]) {
    let text = std::fs::read_to_string(repo().join(dockerfile)).unwrap();
    let stages = dockerfile_stages(&text);
    let (last, earlier) = stages.split_last().expect("a FROM");
    let mut expected = last.labels.clone();
    for name in from {
        let stage = earlier
            .iter()
            .find(|s| s.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("{dockerfile} has no stage {name}"));
        expected.extend(stage.labels.iter().cloned());
    }
    assert!(
        expected.iter().any(|(key, _)| key.starts_with(OCI_LABEL)),
        "no OCI labels found in {dockerfile}"
    );
    for (key, written) in &expected {
        let actual = image.label(key).unwrap_or_else(|| {
            panic!(
                "{} has no label {key} ({dockerfile} sets it)",
                image.reference
            )
        });
        if !written.contains("${") {
            assert_eq!(actual, written, "label {key}");
            continue;
        }
        // A build argument: the builder must have passed a real value.
        assert!(
            !actual.is_empty() && !actual.contains("${"),
            "label {key} = {actual:?}"
        );
        let field = key.strip_prefix(OCI_LABEL).unwrap_or(key);
        match field {
            "version" => assert_eq!(actual, env!("CARGO_PKG_VERSION"), "label {key}"),
            "revision" => {
                let commit = actual.strip_suffix("-dirty").unwrap_or(actual);
                assert!(
                    commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
                    "label {key} = {actual:?}: not a commit"
                );
            }
            "created" => {
                assert!(
                    actual.len() == 20 && actual.ends_with('Z') && actual.as_bytes()[10] == b'T',
                    "label {key} = {actual:?}: not an RFC 3339 UTC time"
                );
                assert_ne!(actual, "1970-01-01T00:00:00Z", "label {key}");
            }
            "base.name" => {
                assert!(
                    actual.starts_with("localhost/redoline-debian-base:"),
                    "label {key} = {actual:?}: not the Debian base of build-images.sh"
                );
                // buildah records the base it really started from in the manifest.
                assert_eq!(
                    image.manifest["annotations"]["org.opencontainers.image.base.name"], actual,
                    "the manifest's base"
                );
            }
            _ => {}
        }
    }
}

fn assert_runtime_config(image: &Image, binary: &str) {
    let config = &image.config["config"];
    assert_eq!(config["User"], USER, "{}: user", image.reference);
    assert_eq!(
        image.entrypoint(),
        [format!("/usr/local/bin/{binary}")],
        "{}: the operator's pod specs give only arguments, so the entry point is the binary",
        image.reference
    );
    assert!(
        config["ExposedPorts"].get("8080/tcp").is_some(),
        "{}: port 8080: {config}",
        image.reference
    );
    assert_eq!(image.config["os"], "linux");
}

/// `<entrypoint> version` on a read-only root file system prints `<binary> <version label>`.
fn assert_version_runs(image: &Image, bundle: &Bundle, binary: &str) {
    let mut argv = image.entrypoint();
    argv.push("version".into());
    let stdout = succeeded(&bundle.run(&argv, true), &format!("{binary} version"));
    let version = image.label("org.opencontainers.image.version").unwrap();
    assert_eq!(stdout.trim(), format!("{binary} {version}"));
}

// ----- the tests --------------------------------------------------------------------------------

#[test]
fn capture_image_configuration_and_labels() {
    let Some(image) = Image::from_env("CAPTURE") else {
        return;
    };
    assert_runtime_config(&image, "redoline-capture");
    // The last stage's labels, and those of the runtime stage without Instant Client below it.
    assert_labels(&image, "images/capture.Dockerfile", &["runtime-none"]);
    assert_eq!(image.label("io.redoline.oracle-client"), Some("none"));
    assert!(
        image
            .label("org.opencontainers.image.description")
            .unwrap()
            .contains("WITHOUT Oracle Instant Client"),
        "the description must say that this is not the published image"
    );
}

#[test]
fn operator_image_configuration_and_labels() {
    let Some(image) = Image::from_env("OPERATOR") else {
        return;
    };
    assert_runtime_config(&image, "redoline-operator");
    assert_labels(&image, "images/operator.Dockerfile", &[]);
}

#[test]
fn capture_image_runs_and_writes_nothing_to_its_root() {
    let Some(image) = Image::from_env("CAPTURE") else {
        return;
    };
    let bundle = image.unpack();
    assert_version_runs(&image, &bundle, "redoline-capture");

    let before = bundle.snapshot();
    for argument in ["version", "--help"] {
        let mut argv = image.entrypoint();
        argv.push(argument.into());
        let read_only = succeeded(&bundle.run(&argv, true), argument);
        let writable = succeeded(&bundle.run(&argv, false), argument);
        assert_eq!(
            read_only, writable,
            "{argument}: the same with a read-only root"
        );
        assert!(
            read_only.contains("redoline-capture"),
            "{argument}: {read_only}"
        );
        assert_eq!(
            bundle.snapshot(),
            before,
            "`redoline-capture {argument}` changed the root file system"
        );
    }

    // The snapshot sees a write where the image's user may write.
    let probe = ["/usr/bin/touch".to_owned(), "/tmp/probe".to_owned()];
    succeeded(&bundle.run(&probe, false), "touch /tmp/probe");
    assert_ne!(bundle.snapshot(), before, "a file written to /tmp");
}

#[test]
fn operator_image_runs_on_a_read_only_root() {
    let Some(image) = Image::from_env("OPERATOR") else {
        return;
    };
    let bundle = image.unpack();
    assert_version_runs(&image, &bundle, "redoline-operator");
}

#[test]
fn dockerfile_stages_follow_names_and_continuations() {
    let text = r#"# a comment
ARG BASE=x
FROM ${BASE} AS first
LABEL a.b="one two" \
      c=bare
FROM first
# LABEL not=this
LABEL d="${ARG}"
"#;
    let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    assert_eq!(
        dockerfile_stages(text),
        [
            Stage {
                name: Some("first".into()),
                labels: vec![pair("a.b", "one two"), pair("c", "bare")],
            },
            Stage {
                name: None,
                labels: vec![pair("d", "${ARG}")],
            },
        ]
    );
}
