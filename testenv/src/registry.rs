//! A real schema registry speaking Confluent's Schema Registry API (Apicurio Registry, run by
//! `tests/env/registry.sh`), for the tests of the Avro encoding.
//!
//! [`RegistryEnv::shared`] gives every test of a test binary the same open registry (HTTP, and
//! HTTPS with a CA of its own), [`RegistryEnv::shared_auth`] one that requires authentication
//! (HTTP basic, and bearer tokens of a real OIDC token endpoint):
//!
//! * with `REDOLINE_SCHEMA_REGISTRY_DIR` (resp. `REDOLINE_SCHEMA_REGISTRY_AUTH_DIR`) set, as
//!   `tests/env/stack.sh` does, the `registry.json` in that directory;
//! * otherwise the first call starts `tests/env/registry.sh` (and for the authenticating one
//!   `tests/env/oidc.sh` first) in a fresh temporary directory on free loopback ports. Their
//!   watchdogs stop them and delete the directories once this test process has exited.
//!
//! Every start is an empty registry (in-memory storage); tests isolate themselves by naming
//! their topics, hence their subjects, after a unique prefix. The helpers below speak the
//! registry's HTTP API through `curl` (installed by `tests/env/install-deps.sh`), so that the
//! test environment shares no HTTP code with the client under test.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::Value;

use crate::process::{ScriptService, free_ports, read_description, shared_service};

/// The directory holding `registry.json` of a running open registry.
pub const DIR_ENV: &str = "REDOLINE_SCHEMA_REGISTRY_DIR";
/// The same for a running registry that requires authentication.
pub const AUTH_DIR_ENV: &str = "REDOLINE_SCHEMA_REGISTRY_AUTH_DIR";
/// The open registry's Confluent API root, for people and other tools (stack.sh sets it too).
pub const URL_ENV: &str = "REDOLINE_SCHEMA_REGISTRY_URL";

/// Starting includes fetching the distribution with Maven when the cache is cold.
const START_TIMEOUT: Duration = Duration::from_secs(900);
/// A Quarkus start takes about 5 s here; a loaded 2-core machine may take many times that.
const READY_TIMEOUT_SECS: u64 = 180;
/// One HTTP call to the registry (curl's own limit).
const CALL_TIMEOUT_SECS: &str = "30";

pub use crate::Credentials;

/// Where a bearer token for the registry comes from (OAuth 2.0 client credentials).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bearer {
    pub token_endpoint: String,
    pub client_id: String,
    pub client_secret: String,
}

/// What `tests/env/registry.sh` wrote to `DATA_DIR/registry.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistryEnv {
    /// The Confluent-compatible API root over HTTP (`.../apis/ccompat/v7`).
    pub url: String,
    /// The same over HTTPS, its certificate signed by [`Self::ca`].
    pub tls_url: String,
    /// Apicurio's own v2 API root (what its Kafka Connect converter speaks).
    pub apicurio_url: String,
    pub ca: PathBuf,
    /// A CA that signed nothing the registry has.
    pub untrusted_ca: PathBuf,
    /// Set when the registry requires authentication.
    #[serde(default)]
    pub basic: Option<Credentials>,
    /// Set when it also accepts bearer tokens of a token endpoint.
    #[serde(default)]
    pub bearer: Option<Bearer>,
}

/// How a helper call authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Auth {
    None,
    Basic,
}

impl RegistryEnv {
    /// The open registry shared by all tests of this process. Blocking. A failed start is
    /// remembered and reported again to every later caller.
    pub fn shared() -> Result<&'static RegistryEnv> {
        static SHARED: OnceLock<std::result::Result<RegistryEnv, String>> = OnceLock::new();
        shared_service(&SHARED, "the test schema registry", || Self::init(false))
    }

    /// The registry that requires authentication, shared by all tests of this process.
    pub fn shared_auth() -> Result<&'static RegistryEnv> {
        static SHARED: OnceLock<std::result::Result<RegistryEnv, String>> = OnceLock::new();
        shared_service(&SHARED, "the authenticating test schema registry", || {
            Self::init(true)
        })
    }

    /// Reads `registry.json` from `dir`.
    pub fn read(dir: &Path) -> Result<RegistryEnv> {
        read_description(&dir.join("registry.json"))
    }

    /// The version numbers registered under `subject`, oldest first; empty when the subject
    /// does not exist.
    pub fn subject_versions(&self, subject: &str) -> Result<Vec<u32>> {
        let (status, body) = self.call("GET", &format!("/subjects/{subject}/versions"), None)?;
        match status {
            200 => serde_json::from_str(&body)
                .with_context(|| format!("the versions of {subject}: {body}")),
            404 => Ok(Vec::new()),
            _ => bail!("listing the versions of {subject}: HTTP {status}: {body}"),
        }
    }

    /// The schema text of `subject`'s `version`.
    pub fn subject_schema(&self, subject: &str, version: u32) -> Result<String> {
        let (status, body) = self.call(
            "GET",
            &format!("/subjects/{subject}/versions/{version}"),
            None,
        )?;
        if status != 200 {
            bail!("reading {subject} version {version}: HTTP {status}: {body}");
        }
        let value: Value = serde_json::from_str(&body)?;
        value["schema"]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("no schema in {body}"))
    }

    /// The schema text the registry holds under `id`.
    pub fn schema_by_id(&self, id: u32) -> Result<String> {
        let (status, body) = self.call("GET", &format!("/schemas/ids/{id}"), None)?;
        if status != 200 {
            bail!("reading schema {id}: HTTP {status}: {body}");
        }
        let value: Value = serde_json::from_str(&body)?;
        value["schema"]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("no schema in {body}"))
    }

    /// Registers the Avro schema `schema` under `subject` (as a pipeline owner would, ahead of
    /// the capture) and returns its id.
    pub fn register(&self, subject: &str, schema: &str) -> Result<u32> {
        let body = serde_json::json!({ "schema": schema }).to_string();
        let (status, text) = self.call(
            "POST",
            &format!("/subjects/{subject}/versions"),
            Some(&body),
        )?;
        if status != 200 {
            bail!("registering under {subject}: HTTP {status}: {text}");
        }
        let value: Value = serde_json::from_str(&text)?;
        value["id"]
            .as_u64()
            .and_then(|id| u32::try_from(id).ok())
            .with_context(|| format!("no id in {text}"))
    }

    /// Sets `subject`'s compatibility rule (`BACKWARD`, `FULL`, `NONE`, ...).
    pub fn set_compatibility(&self, subject: &str, level: &str) -> Result<()> {
        let body = serde_json::json!({ "compatibility": level }).to_string();
        let (status, text) = self.call("PUT", &format!("/config/{subject}"), Some(&body))?;
        if status != 200 {
            bail!("setting the compatibility of {subject} to {level}: HTTP {status}: {text}");
        }
        Ok(())
    }

    /// A bearer token from the token endpoint (client credentials), for a client of a registry
    /// that accepts them.
    pub fn bearer_token(&self) -> Result<String> {
        let bearer = self
            .bearer
            .as_ref()
            .context("this registry accepts no bearer tokens (REGISTRY_OIDC_DIR was not set)")?;
        let output = Command::new("curl")
            .args(["-sS", "-m", CALL_TIMEOUT_SECS])
            .args(["-d", "grant_type=client_credentials"])
            .arg("-d")
            .arg(format!("client_id={}", bearer.client_id))
            .arg("-d")
            .arg(format!("client_secret={}", bearer.client_secret))
            .arg(&bearer.token_endpoint)
            .output()
            .context("running curl")?;
        if !output.status.success() {
            bail!(
                "the token request failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let value: Value = serde_json::from_slice(&output.stdout).context("the token response")?;
        value["access_token"]
            .as_str()
            .map(str::to_owned)
            .context("no access_token in the token response")
    }

    /// One call to the Confluent API (`path` below [`Self::url`]): its HTTP status and body.
    /// Authenticates with [`Self::basic`] when the registry requires it.
    pub fn call(&self, method: &str, path: &str, body: Option<&str>) -> Result<(u16, String)> {
        let auth = if self.basic.is_some() {
            Auth::Basic
        } else {
            Auth::None
        };
        self.call_as(auth, method, path, body)
    }

    fn call_as(
        &self,
        auth: Auth,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> Result<(u16, String)> {
        let mut command = Command::new("curl");
        command
            .args(["-sS", "-m", CALL_TIMEOUT_SECS, "-X", method])
            .args(["-w", "\n%{http_code}"])
            .args(["-H", "Accept: application/vnd.schemaregistry.v1+json"]);
        if let Some(body) = body {
            command
                .args(["-H", "Content-Type: application/vnd.schemaregistry.v1+json"])
                .args(["--data-binary", body]);
        }
        if auth == Auth::Basic {
            let basic = self.basic.as_ref().context("no basic credentials")?;
            command
                .arg("-u")
                .arg(format!("{}:{}", basic.username, basic.password));
        }
        let output = command
            .arg(format!("{}{path}", self.url))
            .output()
            .context("running curl")?;
        if !output.status.success() {
            bail!(
                "{method} {path}: curl failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let text = String::from_utf8(output.stdout).context("a response that is not UTF-8")?;
        let (body, status) = text
            .rsplit_once('\n')
            .with_context(|| format!("no status in curl's output {text:?}"))?;
        Ok((
            status.trim().parse().context("the HTTP status")?,
            body.to_owned(),
        ))
    }

    fn init(auth: bool) -> Result<RegistryEnv> {
        let var = if auth { AUTH_DIR_ENV } else { DIR_ENV };
        if let Ok(dir) = std::env::var(var) {
            return Self::read(Path::new(&dir));
        }
        if !auth && std::env::var(URL_ENV).is_ok() {
            bail!(
                "{URL_ENV} names a registry but {DIR_ENV} does not say where its registry.json \
                 is (tests/env/stack.sh sets both)"
            );
        }
        let mut dirs = Vec::new();
        let prefixes: &[&str] = if auth {
            &["redoline-registry-oidc-", "redoline-registry-auth-"]
        } else {
            &["redoline-registry-"]
        };
        for prefix in prefixes {
            let dir = tempfile::Builder::new()
                .prefix(prefix)
                .tempdir()
                .context("creating a directory for the test registry")?
                .keep();
            dirs.push(dir);
        }
        let result = Self::start_local(&dirs);
        if result.is_err() {
            for dir in &dirs {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
        result
    }

    /// `dirs`: the registry's directory, after the token endpoint's for an authenticating one.
    fn start_local(dirs: &[PathBuf]) -> Result<RegistryEnv> {
        let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/env");
        let ports = free_ports(2)?;
        let [oidc_port, port] = [ports[0], ports[1]].map(|p| p.to_string());
        let secs = READY_TIMEOUT_SECS.to_string();
        let ready = Duration::from_secs(READY_TIMEOUT_SECS + 30);
        let (registry_dir, oidc) = match dirs {
            [registry] => (registry, None),
            [oidc, registry] => (
                registry,
                Some(
                    ScriptService::new(
                        "the registry's token endpoint",
                        scripts.join("oidc.sh"),
                        oidc,
                    )
                    .env("OIDC_REMOVE_DATA_ON_EXIT", "1"),
                ),
            ),
            _ => bail!("one or two directories expected"),
        };
        let mut registry = ScriptService::new(
            "the test schema registry",
            scripts.join("registry.sh"),
            registry_dir,
        )
        .env("REGISTRY_REMOVE_DATA_ON_EXIT", "1");
        if let Some(oidc) = &oidc {
            registry = registry
                .env("REGISTRY_AUTH", "1")
                .env("REGISTRY_OIDC_DIR", &oidc.data_dir().display().to_string());
        }
        let started = (|| -> Result<()> {
            if let Some(oidc) = &oidc {
                oidc.start(&[&oidc_port], START_TIMEOUT)?;
                oidc.wait(&[&oidc_port, &secs], ready)?;
            }
            registry.start(&[&port], START_TIMEOUT)?;
            registry.wait(&[&port, &secs], ready)?;
            Ok(())
        })();
        if let Err(e) = started {
            let _ = registry.stop(Duration::from_secs(60));
            if let Some(oidc) = &oidc {
                let _ = oidc.stop(Duration::from_secs(60));
            }
            return Err(e);
        }
        Self::read(registry.data_dir())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real registry answers its Confluent API: a schema registered comes back under its
    /// id and as the subject's only version; the authenticating one refuses a call without
    /// credentials and accepts basic and bearer ones.
    #[test]
    fn the_registries_speak_confluents_api() -> Result<()> {
        let registry = RegistryEnv::shared()?;
        let subject = format!("testenv-{}-value", std::process::id());
        let schema = r#"{"type":"record","name":"R","namespace":"testenv","fields":[{"name":"a","type":"int"}]}"#;
        let id = registry.register(&subject, schema)?;
        assert_eq!(registry.subject_versions(&subject)?, vec![1]);
        let back: Value = serde_json::from_str(&registry.schema_by_id(id)?)?;
        assert_eq!(back, serde_json::from_str::<Value>(schema)?);

        let secured = RegistryEnv::shared_auth()?;
        let (status, _) = secured.call_as(Auth::None, "GET", "/subjects", None)?;
        assert_eq!(status, 401);
        let (status, body) = secured.call("GET", "/subjects", None)?;
        assert_eq!(status, 200, "{body}");
        let token = secured.bearer_token()?;
        let output = Command::new("curl")
            .args([
                "-sS",
                "-m",
                CALL_TIMEOUT_SECS,
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
            ])
            .arg("-H")
            .arg(format!("Authorization: Bearer {token}"))
            .arg(format!("{}/subjects", secured.url))
            .output()?;
        assert_eq!(String::from_utf8_lossy(&output.stdout), "200");
        Ok(())
    }
}
