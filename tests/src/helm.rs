//! A real `helm` for the tests: the chart checks (`tests/tests/it/helm_chart.rs`) and the operator
//! installed from the chart on the real node (`node`, the demo).
//!
//! helm comes from `REDOLINE_HELM` (set by tests/env/test-all.sh), else it is built into the cache
//! by tests/env/build-helm.sh, as the control plane binaries are by build-k8s.sh: a missing helm
//! fails the test, it is never skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{Context, bail};

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The chart `charts/redoline`.
pub fn chart() -> PathBuf {
    repo().join("charts/redoline")
}

/// The helm binary: `REDOLINE_HELM`, else the cache of build-helm.sh (built when missing).
fn helm_path() -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os("REDOLINE_HELM").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        if !path.is_file() {
            bail!("REDOLINE_HELM={} is not a file", path.display());
        }
        return Ok(path);
    }
    let script = repo().join("tests/env/build-helm.sh");
    let build = Command::new("bash")
        .arg(&script)
        .output()
        .context("running tests/env/build-helm.sh")?;
    if !build.status.success() {
        bail!(
            "tests/env/build-helm.sh failed (Go is needed to build helm):\n{}",
            output_text(&build)
        );
    }
    let path = Command::new("bash")
        .arg(&script)
        .arg("path")
        .output()
        .context("running tests/env/build-helm.sh path")?;
    Ok(PathBuf::from(
        String::from_utf8(path.stdout)
            .context("helm's path is not UTF-8")?
            .trim(),
    ))
}

/// stdout and stderr of a command, for a failure message.
pub fn output_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `helm` with its state directories in a temporary directory (nothing under ~).
#[derive(Debug)]
pub struct Helm {
    bin: PathBuf,
    home: tempfile::TempDir,
}

impl Helm {
    pub fn new() -> anyhow::Result<Self> {
        Ok(Helm {
            bin: helm_path()?,
            home: tempfile::tempdir().context("creating helm's home")?,
        })
    }

    pub fn cmd(&self) -> Command {
        let mut cmd = Command::new(&self.bin);
        for (var, dir) in [
            ("HELM_CACHE_HOME", "cache"),
            ("HELM_CONFIG_HOME", "config"),
            ("HELM_DATA_HOME", "data"),
        ] {
            cmd.env(var, self.home.path().join(dir));
        }
        cmd.env_remove("KUBECONFIG");
        cmd
    }

    /// `helm <args>`, whatever its exit status.
    pub fn run(&self, args: &[&str]) -> anyhow::Result<Output> {
        self.cmd()
            .args(args)
            .output()
            .with_context(|| format!("running helm {args:?}"))
    }

    /// `helm <args>`, an error with helm's message when it fails.
    fn succeed(&self, args: &[&str]) -> anyhow::Result<Output> {
        let out = self.run(args)?;
        if !out.status.success() {
            bail!("helm {}:\n{}", args.join(" "), output_text(&out));
        }
        Ok(out)
    }

    /// `helm install` of the chart as `release` into `namespace`, with `extra` arguments. Its
    /// output (the NOTES).
    pub fn install(
        &self,
        release: &str,
        namespace: &str,
        kubeconfig: &Path,
        extra: &[&str],
    ) -> anyhow::Result<Output> {
        let chart = chart();
        let kubeconfig = kubeconfig.to_string_lossy();
        let mut args = vec![
            "install",
            release,
            chart.to_str().context("the chart's path is not UTF-8")?,
            "--namespace",
            namespace,
            "--kubeconfig",
            &kubeconfig,
        ];
        args.extend_from_slice(extra);
        self.succeed(&args)
    }

    pub fn uninstall(
        &self,
        release: &str,
        namespace: &str,
        kubeconfig: &Path,
    ) -> anyhow::Result<()> {
        let kubeconfig = kubeconfig.to_string_lossy();
        self.succeed(&[
            "uninstall",
            release,
            "--namespace",
            namespace,
            "--kubeconfig",
            &kubeconfig,
        ])?;
        Ok(())
    }

    /// `helm template` of the chart.
    pub fn template(&self, namespace: &str, extra: &[&str]) -> anyhow::Result<String> {
        let chart = chart();
        let mut args = vec![
            "template",
            "redoline",
            chart.to_str().context("the chart's path is not UTF-8")?,
            "--namespace",
            namespace,
        ];
        args.extend_from_slice(extra);
        let out = self.succeed(&args)?;
        String::from_utf8(out.stdout).context("helm template's output is not UTF-8")
    }
}
