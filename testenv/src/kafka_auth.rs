//! A real Kafka broker with a listener per authentication, a real KDC and a real OIDC token
//! endpoint, for the tests of each authentication the capture supports.
//!
//! [`KafkaAuthEnv::shared`] gives every test of a test binary the same one:
//!
//! * with `REDOLINE_KAFKA_AUTH_DIR` set (`tests/env/stack.sh` writes it next to
//!   `REDOLINE_KAFKA_BOOTSTRAP`), the `auth.json` in that directory, which `tests/env/kafka.sh`
//!   wrote when it started that broker with `KAFKA_AUTH=1`;
//! * otherwise, unless `REDOLINE_KAFKA_BOOTSTRAP` names a broker (whose listeners would then be
//!   unknown: an error), the first call starts `tests/env/kdc.sh`, `tests/env/oidc.sh` and
//!   `tests/env/kafka.sh` with `KAFKA_AUTH=1` in a fresh temporary directory. Their watchdogs stop
//!   them and delete the directory once this test process has exited.
//!
//! [`Mechanism::properties`] gives the librdkafka properties a client of each listener needs,
//! and [`KafkaAuthEnv::process_env`] the environment variables (Kerberos reads its configuration
//! and ticket cache from the process environment).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::kafka::BOOTSTRAP_ENV;
use crate::process::{ScriptService, free_ports, read_description, run_script, shared_service};

/// The directory holding `auth.json` of an already running broker.
pub const AUTH_DIR_ENV: &str = "REDOLINE_KAFKA_AUTH_DIR";

const START_TIMEOUT: Duration = Duration::from_secs(900);
const READY_TIMEOUT_SECS: u64 = 180;
/// One `kafka-acls.sh` run: a JVM start, and Maven on the first use of a cold cache.
const ACLS_TIMEOUT: Duration = Duration::from_secs(900);

pub use crate::Credentials;

/// The GSSAPI listener and the client principal's keytab.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Kerberos {
    pub listener: String,
    pub krb5_conf: PathBuf,
    pub keytab: PathBuf,
    pub principal: String,
    pub service_name: String,
}

/// The OAUTHBEARER listener and the token endpoint's client credentials.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth {
    pub listener: String,
    pub token_endpoint: String,
    pub client_id: String,
    pub client_secret: String,
    /// The `sub` of the tokens: the principal the broker sees.
    pub principal: String,
}

/// What `tests/env/kafka.sh` wrote to `DATA_DIR/auth/auth.json`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KafkaAuthEnv {
    /// The plaintext listener (principal ANONYMOUS, a super user): for tests to look at what
    /// a client of another listener wrote.
    pub plaintext: String,
    pub ssl: String,
    pub mtls: String,
    /// Mutual TLS on the pods' address, when the broker has a listener for pods.
    #[serde(default)]
    pub pod_mtls: Option<String>,
    pub sasl_ssl: String,
    /// The CA that signed the broker's and the client's certificates.
    pub ca: PathBuf,
    /// Its key, for tests that issue a certificate of their own (a rotated client certificate).
    pub ca_key: PathBuf,
    /// A CA that signed nothing the broker has.
    pub untrusted_ca: PathBuf,
    pub client_certificate: PathBuf,
    pub client_key: PathBuf,
    pub plain: Credentials,
    /// SCRAM-SHA-256 and SCRAM-SHA-512.
    pub scram: Credentials,
    /// The one SCRAM-SHA-512 principal without super-user rights, for the authorization tests.
    pub acl_user: Credentials,
    pub kerberos: Option<Kerberos>,
    pub oauth: Option<OAuth>,
}

/// An authentication to a listener of [`KafkaAuthEnv`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// TLS, the broker verified against the CA.
    Tls,
    /// TLS with a client certificate.
    MutualTls,
    /// SASL/PLAIN over TLS.
    Plain,
    ScramSha256,
    ScramSha512,
    /// SASL/GSSAPI (Kerberos) with the client's keytab.
    Gssapi,
    /// SASL/OAUTHBEARER with OIDC client credentials.
    OAuthBearer,
}

impl KafkaAuthEnv {
    /// The environment shared by all tests of this process (see the module docs). Blocking. A
    /// failed start is remembered and reported again to every later caller.
    pub fn shared() -> Result<&'static KafkaAuthEnv> {
        static SHARED: OnceLock<std::result::Result<KafkaAuthEnv, String>> = OnceLock::new();
        shared_service(&SHARED, "the authenticating test Kafka broker", Self::init)
    }

    /// Reads `auth.json` from `dir`.
    pub fn read(dir: &Path) -> Result<KafkaAuthEnv> {
        read_description(&dir.join("auth.json"))
    }

    /// The listener a mechanism connects to, and the librdkafka properties of its client
    /// (besides `bootstrap.servers`). Fails when the environment has no KDC or token endpoint
    /// for it.
    pub fn client(&self, mechanism: Mechanism) -> Result<(String, Vec<(String, String)>)> {
        let ca = path_text(&self.ca);
        let props = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let sasl_ssl = |mechanism: &str, user: &Credentials| {
            props(&[
                ("security.protocol", "sasl_ssl"),
                ("ssl.ca.location", &ca),
                ("sasl.mechanism", mechanism),
                ("sasl.username", &user.username),
                ("sasl.password", &user.password),
            ])
        };
        Ok(match mechanism {
            Mechanism::Tls => (
                self.ssl.clone(),
                props(&[("security.protocol", "ssl"), ("ssl.ca.location", &ca)]),
            ),
            Mechanism::MutualTls => (
                self.mtls.clone(),
                props(&[
                    ("security.protocol", "ssl"),
                    ("ssl.ca.location", &ca),
                    (
                        "ssl.certificate.location",
                        &path_text(&self.client_certificate),
                    ),
                    ("ssl.key.location", &path_text(&self.client_key)),
                ]),
            ),
            Mechanism::Plain => (self.sasl_ssl.clone(), sasl_ssl("PLAIN", &self.plain)),
            Mechanism::ScramSha256 => (
                self.sasl_ssl.clone(),
                sasl_ssl("SCRAM-SHA-256", &self.scram),
            ),
            Mechanism::ScramSha512 => (
                self.sasl_ssl.clone(),
                sasl_ssl("SCRAM-SHA-512", &self.scram),
            ),
            Mechanism::Gssapi => {
                let k = self.kerberos()?;
                (
                    k.listener.clone(),
                    props(&[
                        ("security.protocol", "sasl_plaintext"),
                        ("sasl.mechanism", "GSSAPI"),
                        ("sasl.kerberos.service.name", &k.service_name),
                        ("sasl.kerberos.principal", &k.principal),
                        ("sasl.kerberos.keytab", &path_text(&k.keytab)),
                    ]),
                )
            }
            Mechanism::OAuthBearer => {
                let o = self.oauth()?;
                (
                    o.listener.clone(),
                    props(&[
                        ("security.protocol", "sasl_plaintext"),
                        ("sasl.mechanism", "OAUTHBEARER"),
                        ("sasl.oauthbearer.method", "oidc"),
                        ("sasl.oauthbearer.client.id", &o.client_id),
                        ("sasl.oauthbearer.client.secret", &o.client_secret),
                        ("sasl.oauthbearer.token.endpoint.url", &o.token_endpoint),
                    ]),
                )
            }
        })
    }

    /// The SASL_SSL listener and the librdkafka properties of [`Self::acl_user`] (SCRAM-SHA-512),
    /// the principal `User:acl-capture` that has no rights but the ACLs a test grants it.
    pub fn acl_client(&self) -> (String, Vec<(String, String)>) {
        let ca = path_text(&self.ca);
        let properties = [
            ("security.protocol", "sasl_ssl"),
            ("ssl.ca.location", ca.as_str()),
            ("sasl.mechanism", "SCRAM-SHA-512"),
            ("sasl.username", self.acl_user.username.as_str()),
            ("sasl.password", self.acl_user.password.as_str()),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        (self.sasl_ssl.clone(), properties)
    }

    /// Runs `kafka-acls.sh ARGS...` (`tests/env/kafka.sh acls`) and returns its output. The
    /// arguments name the broker (`--bootstrap-server`); [`Self::plaintext`] is a super user's.
    pub fn kafka_acls(&self, args: &[String]) -> Result<String> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/env/kafka.sh");
        let mut all = vec!["acls".to_owned()];
        all.extend(args.iter().cloned());
        run_script(&script, &all, &[], ACLS_TIMEOUT)
    }

    /// Environment variables a client process of `mechanism` needs, given a directory of its
    /// own: for GSSAPI the realm's `krb5.conf` (`KRB5_CONFIG`) and a ticket cache of the
    /// process's own (`KRB5CCNAME`, where librdkafka's `kinit` puts the ticket).
    pub fn process_env(&self, mechanism: Mechanism, dir: &Path) -> Result<Vec<(String, String)>> {
        Ok(match mechanism {
            Mechanism::Gssapi => {
                let k = self.kerberos()?;
                vec![
                    ("KRB5_CONFIG".to_owned(), path_text(&k.krb5_conf)),
                    (
                        "KRB5CCNAME".to_owned(),
                        format!("FILE:{}", path_text(&dir.join("krb5cc"))),
                    ),
                ]
            }
            _ => Vec::new(),
        })
    }

    fn kerberos(&self) -> Result<&Kerberos> {
        self.kerberos.as_ref().context(
            "this broker has no GSSAPI listener (kafka.sh was started without KAFKA_KDC_DIR)",
        )
    }

    fn oauth(&self) -> Result<&OAuth> {
        self.oauth.as_ref().context(
            "this broker has no OAUTHBEARER listener (kafka.sh was started without KAFKA_OIDC_DIR)",
        )
    }

    fn init() -> Result<KafkaAuthEnv> {
        if let Ok(dir) = std::env::var(AUTH_DIR_ENV) {
            return Self::read(Path::new(&dir));
        }
        if std::env::var(BOOTSTRAP_ENV).is_ok() {
            bail!(
                "{BOOTSTRAP_ENV} names a broker but {AUTH_DIR_ENV} does not say how to \
                 authenticate to it (tests/env/stack.sh sets both)"
            );
        }
        // A directory per service, each deleted by its own watchdog once this process exits.
        let mut dirs = Vec::new();
        for prefix in ["redoline-kdc-", "redoline-oidc-", "redoline-kafka-auth-"] {
            let dir = tempfile::Builder::new()
                .prefix(prefix)
                .tempdir()
                .context("creating a directory of the authentication environment")?
                .keep();
            dirs.push(dir);
        }
        let result = Self::start_local(&dirs[0], &dirs[1], &dirs[2]);
        if result.is_err() {
            for dir in &dirs {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
        result
    }

    /// KDC and token endpoint first (the broker logs in to the one and fetches the keys of the
    /// other while it starts), then the broker.
    fn start_local(kdc_dir: &Path, oidc_dir: &Path, kafka_dir: &Path) -> Result<KafkaAuthEnv> {
        let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/env");
        let ports = free_ports(4)?;
        let [kdc_port, oidc_port, port, controller_port] =
            [ports[0], ports[1], ports[2], ports[3]].map(|p| p.to_string());
        let kdc = ScriptService::new("the test KDC", scripts.join("kdc.sh"), kdc_dir)
            .env("KDC_REMOVE_DATA_ON_EXIT", "1");
        let oidc = ScriptService::new("the test token endpoint", scripts.join("oidc.sh"), oidc_dir)
            .env("OIDC_REMOVE_DATA_ON_EXIT", "1");
        let kdc_dir = path_text(kdc.data_dir());
        let oidc_dir = path_text(oidc.data_dir());
        let broker = ScriptService::new(
            "the authenticating test Kafka broker",
            scripts.join("kafka.sh"),
            kafka_dir,
        )
        .env("KAFKA_REMOVE_DATA_ON_EXIT", "1")
        .env("KAFKA_AUTH", "1")
        .env("KAFKA_KDC_DIR", &kdc_dir)
        .env("KAFKA_OIDC_DIR", &oidc_dir);
        let services = [&broker, &oidc, &kdc];
        let started = (|| -> Result<()> {
            let ready = Duration::from_secs(READY_TIMEOUT_SECS + 30);
            let secs = READY_TIMEOUT_SECS.to_string();
            kdc.start(&[&kdc_port], START_TIMEOUT)?;
            oidc.start(&[&oidc_port], START_TIMEOUT)?;
            kdc.wait(&[&kdc_port, &secs], ready)?;
            oidc.wait(&[&oidc_port, &secs], ready)?;
            broker.start(&[&port, &controller_port], START_TIMEOUT)?;
            broker.wait(&[&port, &secs], ready)?;
            Ok(())
        })();
        if let Err(e) = started {
            for service in services {
                let _ = service.stop(Duration::from_secs(60));
            }
            return Err(e);
        }
        Self::read(&broker.data_dir().join("auth"))
    }
}

fn path_text(path: &Path) -> String {
    path.display().to_string()
}
