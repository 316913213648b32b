//! A real Kubernetes control plane for the tests, in the spirit of controller-runtime's envtest:
//! etcd, kube-apiserver and kube-controller-manager run as local processes on loopback (see
//! `env/k8s.sh`). Under `make test` the control plane also has a scheduler and one real node
//! (`env/node.sh`, [`crate::node`]), tainted so that only pods that tolerate it run; every other
//! Pod stays Pending. Everything the API server and the controllers do (server-side apply, watches, admission, RBAC, StatefulSets making Pods and PVCs,
//! garbage collection) is the real implementation.
//!
//! [`KubeEnv::shared`] starts one control plane per test binary, on first use, in a temporary
//! directory; a watchdog stops it (and removes the directory) once the test process has exited.
//! With `REDOLINE_KUBECONFIG=/path/to/kubeconfig` the tests use that cluster instead, e.g. one
//! started by hand with `tests/env/k8s.sh start DIR` to look at it with kubectl while they run.
//! `REDOLINE_K8S_KEEP=1` keeps the temporary directory (logs, etcd data) after the tests.
//!
//! Each test works in its own namespace from [`KubeEnv::namespace`].

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, anyhow, bail};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::wait::{await_condition, conditions};

/// The field manager of everything the test helpers apply.
pub const FIELD_MANAGER: &str = "redoline-tests";

/// Names the kubeconfig of an already running cluster to use instead of starting one.
pub const KUBECONFIG_ENV: &str = "REDOLINE_KUBECONFIG";

/// Keeps the temporary directory of a control plane that the tests started (logs, etcd data).
pub const KEEP_ENV: &str = "REDOLINE_K8S_KEEP";

/// Upper bound for the control plane to become ready, cold start included.
const READY_TIMEOUT: Duration = Duration::from_secs(180);
/// Upper bound for a CRD to become Established.
const CRD_TIMEOUT: Duration = Duration::from_secs(60);
/// Upper bound for a new namespace to get its default ServiceAccount.
const NAMESPACE_TIMEOUT: Duration = Duration::from_secs(60);

/// A Kubernetes API server the tests may use, with admin credentials.
#[derive(Debug)]
pub struct KubeEnv {
    kubeconfig: PathBuf,
    kubectl: PathBuf,
    /// The directory of the control plane this process started; `None` for `REDOLINE_KUBECONFIG`.
    dir: Option<PathBuf>,
    startup: Option<Duration>,
}

static SHARED: OnceLock<Result<KubeEnv, String>> = OnceLock::new();
static NAMESPACES: AtomicU32 = AtomicU32::new(0);

impl KubeEnv {
    /// The control plane of this test process: started on the first call (blocking, up to a few
    /// minutes on a cold machine), shared by every later call. A failed start is reported to every
    /// caller, not retried.
    pub fn shared() -> anyhow::Result<&'static KubeEnv> {
        SHARED
            .get_or_init(|| Self::init().map_err(|e| format!("{e:#}")))
            .as_ref()
            .map_err(|e| anyhow!("no Kubernetes control plane for the tests: {e}"))
    }

    fn init() -> anyhow::Result<KubeEnv> {
        let script = script();
        let bin_dir = PathBuf::from(
            String::from_utf8(run(Command::new("bash").arg(&script).arg("bin-dir"))?.stdout)
                .context("bin-dir output is not UTF-8")?
                .trim(),
        );
        let mut kubectl = bin_dir.join("kubectl");
        if let Some(path) = std::env::var_os(KUBECONFIG_ENV).filter(|p| !p.is_empty()) {
            let kubeconfig = PathBuf::from(path);
            if !kubeconfig.is_file() {
                bail!("{KUBECONFIG_ENV}={} is not a file", kubeconfig.display());
            }
            if !kubectl.is_file() {
                kubectl = PathBuf::from("kubectl");
            }
            return Ok(KubeEnv {
                kubeconfig,
                kubectl,
                dir: None,
                startup: None,
            });
        }

        let keep = std::env::var_os(KEEP_ENV).is_some_and(|v| !v.is_empty() && v != "0");
        let started = Instant::now();
        let mut attempt = 1;
        let dir = loop {
            let dir = tempfile::Builder::new()
                .prefix("redoline-k8s-")
                .tempdir()
                .context("creating the control plane's directory")?
                .keep();
            let Err(e) = start_in(&script, &dir, keep) else {
                break dir;
            };
            // Whatever did start goes now, not when this process exits.
            let _ = Command::new("bash")
                .arg(&script)
                .arg("stop")
                .arg(&dir)
                .output();
            if !keep {
                let _ = std::fs::remove_dir_all(&dir);
            }
            // The ports are picked free, but another process may take one before we bind it.
            if attempt < 3 && format!("{e:#}").contains("address already in use") {
                attempt += 1;
                continue;
            }
            return Err(e);
        };
        let startup = started.elapsed();
        eprintln!(
            "redoline-tests: Kubernetes control plane ready in {:.1} s ({})",
            startup.as_secs_f64(),
            dir.display()
        );
        Ok(KubeEnv {
            kubeconfig: dir.join("kubeconfig"),
            kubectl,
            dir: Some(dir),
            startup: Some(startup),
        })
    }

    /// The admin kubeconfig (group `system:masters`).
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig
    }

    /// The directory of the control plane this process started (logs under `logs/`), if it did.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// How long the control plane took to become ready, if this process started it.
    pub fn startup_time(&self) -> Option<Duration> {
        self.startup
    }

    /// Client configuration from [`Self::kubeconfig_path`] (never from `~/.kube` or `KUBECONFIG`).
    pub async fn config(&self) -> anyhow::Result<kube::Config> {
        let kubeconfig = Kubeconfig::read_from(&self.kubeconfig)
            .with_context(|| format!("reading {}", self.kubeconfig.display()))?;
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .with_context(|| format!("loading {}", self.kubeconfig.display()))
    }

    /// An admin client.
    pub async fn client(&self) -> anyhow::Result<kube::Client> {
        Ok(kube::Client::try_from(self.config().await?)?)
    }

    /// A client that acts as `user` (impersonation by the admin), e.g.
    /// `system:serviceaccount:NAMESPACE:NAME`; the API server adds the groups of a ServiceAccount.
    pub async fn client_as(&self, user: &str) -> anyhow::Result<kube::Client> {
        let mut config = self.config().await?;
        config.auth_info.impersonate = Some(user.to_owned());
        Ok(kube::Client::try_from(config)?)
    }

    /// `kubectl --kubeconfig <admin kubeconfig>`, the kubectl built with the control plane.
    pub fn kubectl(&self) -> Command {
        let mut cmd = Command::new(&self.kubectl);
        // kubectl caches API discovery per host:port under ~/.kube/cache; ports are reused by
        // later control planes, so each control plane gets a cache of its own.
        let cache = self
            .kubeconfig
            .parent()
            .map(|dir| dir.join("kubectl-cache"))
            .unwrap_or_else(|| std::env::temp_dir().join("redoline-kubectl-cache"));
        cmd.env_remove("KUBECONFIG")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(cache);
        cmd
    }

    /// Runs `kubectl <args>` (see [`KubeEnv::kubectl`]) and returns its output; fails with
    /// kubectl's message unless it succeeds.
    pub fn kubectl_stdout(&self, args: &[&str]) -> anyhow::Result<String> {
        let output = self
            .kubectl()
            .args(args)
            .output()
            .context("running kubectl")?;
        if !output.status.success() {
            bail!(
                "kubectl {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        String::from_utf8(output.stdout).context("kubectl's output is not UTF-8")
    }

    /// `kubectl wait --for=condition=Ready` on the OracleCapture `name` in `namespace`, as a GitOps
    /// pipeline runs it (30 s at most); fails with kubectl's message unless it passes.
    pub async fn kubectl_wait_ready(&self, namespace: &str, name: &str) -> anyhow::Result<()> {
        let mut kubectl = self.kubectl();
        kubectl.args([
            "wait",
            "--for=condition=Ready",
            "--timeout=30s",
            "-n",
            namespace,
        ]);
        kubectl.arg(format!("oraclecapture/{name}"));
        let output = tokio::task::spawn_blocking(move || kubectl.output()).await??;
        if !output.status.success() {
            bail!("kubectl wait: {}", String::from_utf8_lossy(&output.stderr));
        }
        Ok(())
    }

    /// A fresh namespace for one test, named after it, once its default ServiceAccount exists (Pods
    /// are refused before that).
    pub async fn namespace(&self, test: &str) -> anyhow::Result<TestNamespace> {
        let client = self.client().await?;
        let namespaces: Api<Namespace> = Api::all(client.clone());
        let slug = slug(test);
        let mut attempt = 0;
        let name = loop {
            let name = format!("{slug}-{}", unique_suffix());
            let namespace = Namespace {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    labels: Some(
                        [
                            (
                                "app.kubernetes.io/managed-by".to_owned(),
                                FIELD_MANAGER.to_owned(),
                            ),
                            ("redoline.io/test".to_owned(), slug.clone()),
                        ]
                        .into(),
                    ),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            };
            match namespaces.create(&PostParams::default(), &namespace).await {
                Ok(_) => break name,
                Err(kube::Error::Api(status)) if status.code == 409 && attempt < 5 => attempt += 1,
                Err(e) => return Err(e).with_context(|| format!("creating namespace {name}")),
            }
        };

        let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), &name);
        let deadline = Instant::now() + NAMESPACE_TIMEOUT;
        while accounts.get_opt("default").await?.is_none() {
            if Instant::now() > deadline {
                bail!(
                    "namespace {name} got no default ServiceAccount within {NAMESPACE_TIMEOUT:?}: \
                     is kube-controller-manager running?"
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(TestNamespace { name, client })
    }
}

/// A namespace that belongs to one test.
pub struct TestNamespace {
    pub name: String,
    client: kube::Client,
}

impl fmt::Debug for TestNamespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestNamespace")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl TestNamespace {
    /// Starts deleting the namespace (the namespace controller removes its contents; this does not
    /// wait for that). A failure is only reported on stderr: cleanup must not fail a test.
    pub async fn delete(self) {
        let namespaces: Api<Namespace> = Api::all(self.client);
        match namespaces
            .delete(&self.name, &DeleteParams::background())
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(e) => eprintln!("redoline-tests: deleting namespace {}: {e}", self.name),
        }
    }
}

/// Server-side applies `crd` (field manager [`FIELD_MANAGER`], forced) and waits until the API
/// server reports it Established, so that its resources can be used right away.
pub async fn apply_crd(
    client: &kube::Client,
    crd: &CustomResourceDefinition,
) -> anyhow::Result<()> {
    let name = crd
        .metadata
        .name
        .clone()
        .context("the CRD has no metadata.name")?;
    let mut crd = crd.clone();
    crd.metadata.managed_fields = None; // refused by apply
    crd.status = None; // not ours to set
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&crd),
    )
    .await
    .with_context(|| format!("applying CRD {name}"))?;
    match tokio::time::timeout(
        CRD_TIMEOUT,
        await_condition(api.clone(), &name, conditions::is_crd_established()),
    )
    .await
    {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e).with_context(|| format!("waiting for CRD {name}")),
        Err(_) => {
            let conditions = api
                .get_opt(&name)
                .await
                .ok()
                .flatten()
                .and_then(|c| c.status)
                .and_then(|s| s.conditions)
                .map(|c| {
                    c.iter()
                        .map(|c| {
                            format!(
                                "{}={} ({})",
                                c.type_,
                                c.status,
                                c.message.as_deref().unwrap_or("")
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            bail!("CRD {name} not Established within {CRD_TIMEOUT:?}; conditions: {conditions}")
        }
    }
}

/// Starts a control plane in `dir`, watched by this process, and waits until it is ready.
fn start_in(script: &Path, dir: &Path, keep: bool) -> anyhow::Result<()> {
    let mut start = Command::new("bash");
    start
        .arg(script)
        .arg("start")
        .arg(dir)
        .arg(std::process::id().to_string());
    start.env("K8S_REMOVE_DIR", if keep { "0" } else { "1" });
    run(&mut start)?;
    run(Command::new("bash")
        .arg(script)
        .arg("wait")
        .arg(dir)
        .arg(READY_TIMEOUT.as_secs().to_string()))?;
    Ok(())
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("env")
        .join("k8s.sh")
}

/// Runs a command to completion; its output becomes the error when it fails.
fn run(cmd: &mut Command) -> anyhow::Result<Output> {
    let output = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    if !output.status.success() {
        bail!(
            "{cmd:?} failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(output)
}

/// A DNS label made from a test name: lower-case alphanumerics and '-', at most 40 characters.
fn slug(test: &str) -> String {
    let mut slug = String::with_capacity(test.len());
    for c in test.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.truncate(40);
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        "test".to_owned()
    } else {
        slug.to_owned()
    }
}

/// Different for every call in this process and, in practice, from earlier processes that used
/// the same cluster (whose namespaces may still be terminating).
fn unique_suffix() -> String {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    let mixed = (micros as u64) ^ u64::from(std::process::id()).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    // The counter comes first and the rest has a fixed width: unique within this process.
    let n = NAMESPACES.fetch_add(1, Ordering::Relaxed);
    format!("{n:x}{:06x}", mixed & 0xff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_dns_labels() {
        assert_eq!(
            slug("control_plane::ssa_conflict"),
            "control-plane-ssa-conflict"
        );
        assert_eq!(slug("__X__"), "x");
        assert_eq!(slug("***"), "test");
        assert_eq!(slug(&"a".repeat(100)).len(), 40);
        let name = format!("{}-{}", slug(&"b_".repeat(50)), unique_suffix());
        assert!(name.len() <= 63, "{name}");
        assert!(!name.contains("--"), "{name}");
    }

    #[test]
    fn suffixes_differ() {
        assert_ne!(unique_suffix(), unique_suffix());
    }
}
