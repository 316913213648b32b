//! The schema registry over HTTP: Confluent's Schema Registry REST API ([`super::protocol`])
//! behind [`SchemaRegistry`], for Confluent's registry, Apicurio's `ccompat` API and any other
//! that speaks it.
//!
//! The client is blocking, as the engine that asks for ids is: `ureq` 3, a small, well-kept
//! synchronous HTTP client (no async runtime under it; `reqwest`'s blocking client runs a tokio
//! runtime on a thread of its own), with rustls on the `ring` provider, which the workspace's
//! rustls already uses (no aws-lc-sys to build, no OpenSSL). Server certificates are checked by
//! the platform verifier (the system CA store) unless trusted certificates are configured.
//!
//! Credentials and trusted certificates are read from their files once, when the client is
//! made ([`HttpRegistry::new`]); a rotated Secret restarts the capture (`crate::rotation`), which
//! makes a new client. The Authorization header is held as a [`Secret`] and never logged.
//! Each subject's ids are cached for the client's life ([`IdCache`]).
//!
//! A request that is not answered within [`REQUEST_TIMEOUT`] (or not connected within
//! [`CONNECT_TIMEOUT`]) is an [`RegistryError::Unavailable`], as a refused connection or a 5xx
//! is: the run starts again from its bookmark, with backoff, and stops with CDC-5005 once the
//! retry budget is spent (`crate::outage`). Nothing is retried in here: the one budget is the
//! run's.

use std::fmt;
use std::time::Duration;

use base64::Engine as _;
use redoline_crds::v1alpha1::{SchemaRegistryAuthenticationType, SubjectNameStrategy};
use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};

use super::cache::IdCache;
use super::protocol::{self, Call, Failure};
use super::subject::subject;
use super::{RegistryError, SchemaRegistry, SchemaUse};
use crate::config::ConfigError;
use crate::config::certificates::certificates_pem;
use crate::config::schema_registry::SchemaRegistryConfig;
use crate::config::secrets::{Secret, read_secret_file};

/// How long connecting to the registry may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one request may take, connection included. A registry answers in milliseconds; one
/// that takes this long is treated as down.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// A Confluent-compatible schema registry reached over HTTP.
pub struct HttpRegistry {
    agent: ureq::Agent,
    /// The API's root, without a trailing `/`.
    root: String,
    /// The whole `Authorization` header value.
    authorization: Option<Secret>,
    strategy: SubjectNameStrategy,
    auto_register: bool,
    cache: IdCache,
}

impl fmt::Debug for HttpRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpRegistry")
            .field("root", &self.root)
            .field("authorization", &self.authorization)
            .field("strategy", &self.strategy)
            .field("auto_register", &self.auto_register)
            .finish_non_exhaustive()
    }
}

impl HttpRegistry {
    /// A client for `config`, reading its credential and certificate files. A file that cannot
    /// be read or holds nothing usable is a [`ConfigError`] naming the field.
    pub fn new(config: &SchemaRegistryConfig) -> Result<Self, ConfigError> {
        let roots = match &config.tls {
            Some(tls) if !tls.trusted_certificates.is_empty() => {
                RootCerts::from(trusted_certificates(config)?)
            }
            // The image's system CA store, as for Kafka without trusted certificates.
            _ => RootCerts::PlatformVerifier,
        };
        let tls = TlsConfig::builder().root_certs(roots).build();
        let agent_config = ureq::Agent::config_builder()
            // Refusals are answers to read (their error bodies), not transport errors.
            .http_status_as_error(false)
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .timeout_global(Some(REQUEST_TIMEOUT))
            // A redirect would carry the credentials elsewhere; the API root is given, not found.
            .max_redirects(0)
            .tls_config(tls)
            .build();
        Ok(Self {
            agent: ureq::Agent::new_with_config(agent_config),
            root: config.url.trim_end_matches('/').to_owned(),
            authorization: authorization(config)?,
            strategy: config.subject_name_strategy,
            auto_register: config.auto_register,
            cache: IdCache::default(),
        })
    }

    /// Sends a request; the answer's status and text, or why there is none.
    fn send(&self, method: Method, path: &str, body: &str) -> Result<(u16, String), RegistryError> {
        let url = format!("{}{path}", self.root);
        let sent = match method {
            Method::Get => self.with_headers(self.agent.get(&url)).call(),
            Method::Post => self.with_headers(self.agent.post(&url)).send(body),
        };
        let response = sent.map_err(|error| self.transport_error(error))?;
        let status = response.status().as_u16();
        let text = response
            .into_body()
            .read_to_string()
            .map_err(|error| self.transport_error(error))?;
        Ok((status, text))
    }

    fn with_headers<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        let request = request
            .header("Content-Type", protocol::CONTENT_TYPE)
            .header("Accept", protocol::ACCEPT);
        match &self.authorization {
            Some(value) => request.header("Authorization", value.expose()),
            None => request,
        }
    }

    /// A request that got no answer: TLS refusals are the capture's trust or the registry's
    /// certificate, a malformed URL is the config's, anything else may pass. rustls reports a
    /// refused handshake as an I/O error carrying its own error, which ureq passes on.
    fn transport_error(&self, error: ureq::Error) -> RegistryError {
        let url = self.root.clone();
        let reason = error.to_string();
        match error {
            ureq::Error::Tls(_) | ureq::Error::Rustls(_) | ureq::Error::Pem(_) => {
                RegistryError::AuthenticationFailed { url, reason }
            }
            ureq::Error::Io(io)
                if io
                    .get_ref()
                    .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some()) =>
            {
                RegistryError::AuthenticationFailed { url, reason }
            }
            ureq::Error::BadUri(_) | ureq::Error::Http(_) | ureq::Error::RequireHttpsOnly(_) => {
                RegistryError::NotARegistry { url, reason }
            }
            _ => RegistryError::Unavailable { url, reason },
        }
    }

    /// The registry's word on why `schema` does not fit `subject`: the compatibility rule in
    /// force and the verbose check's messages (which name the field and the change). Either
    /// may be missing (a registry without the verbose check): the refusal's own message stays.
    fn explain(&self, subject: String, refusal: String, body: &str) -> RegistryError {
        let answered = |answer: Result<(u16, String), RegistryError>| {
            answer
                .ok()
                .filter(|(status, _)| (200..300).contains(status))
                .map(|(_, text)| text)
        };
        // A refused schema is under some rule: `NONE` is a subject without a rule of its own.
        let level = |path: &str| {
            answered(self.send(Method::Get, path, ""))
                .and_then(|text| protocol::compatibility_level(&text))
                .filter(|level| level != "NONE")
        };
        let rule = level(&protocol::config_path(&subject))
            .or_else(|| level(protocol::GLOBAL_CONFIG_PATH))
            .unwrap_or_else(|| "compatibility rule not reported".to_owned());
        let messages =
            answered(self.send(Method::Post, &protocol::compatibility_path(&subject), body))
                .and_then(|text| protocol::incompatibility_messages(&text))
                .filter(|messages| !messages.is_empty());
        RegistryError::Incompatible {
            subject,
            rule,
            reason: messages.map_or(refusal, |messages| messages.join("; ")),
        }
    }
}

#[derive(Clone, Copy)]
enum Method {
    Get,
    Post,
}

impl SchemaRegistry for HttpRegistry {
    fn id(&mut self, usage: SchemaUse<'_>, schema: &str) -> Result<u32, RegistryError> {
        let subject = subject(self.strategy, usage);
        if let Some(id) = self.cache.get(&subject, schema) {
            return Ok(id);
        }
        let (call, path) = if self.auto_register {
            (Call::Register, protocol::register_path(&subject))
        } else {
            (Call::LookUp, protocol::look_up_path(&subject))
        };
        let body = protocol::schema_body(schema);
        let (status, text) = self.send(Method::Post, &path, &body)?;
        if !(200..300).contains(&status) {
            return Err(
                match Failure::parse(status, &text).error(call, &self.root, &subject) {
                    RegistryError::Incompatible {
                        subject, reason, ..
                    } => self.explain(subject, reason, &body),
                    other => other,
                },
            );
        }
        let id = protocol::id_of(&text).ok_or_else(|| RegistryError::NotARegistry {
            url: self.root.clone(),
            reason: format!("HTTP {status} without a schema id"),
        })?;
        tracing::info!(
            subject,
            id,
            registered = self.auto_register,
            "schema id from the registry"
        );
        self.cache.insert(&subject, schema, id);
        Ok(id)
    }
}

/// The CA certificates of `tls.trustedCertificates`, PEM files read as Kafka's are.
fn trusted_certificates(
    config: &SchemaRegistryConfig,
) -> Result<Vec<Certificate<'static>>, ConfigError> {
    let field = "schemaRegistry.tls.trustedCertificates";
    let sources = config
        .tls
        .as_ref()
        .map(|tls| tls.trusted_certificates.as_slice())
        .unwrap_or_default();
    let pem = certificates_pem(sources).map_err(|message| ConfigError::new(field, message))?;
    let mut certificates = Vec::new();
    for item in ureq::tls::parse_pem(pem.as_bytes()) {
        match item {
            Ok(PemItem::Certificate(certificate)) => certificates.push(certificate),
            Ok(_) => {}
            Err(error) => {
                return Err(ConfigError::new(
                    field,
                    format!("a certificate cannot be read: {error}"),
                ));
            }
        }
    }
    Ok(certificates)
}

/// The `Authorization` header of `authentication`, from its files.
fn authorization(config: &SchemaRegistryConfig) -> Result<Option<Secret>, ConfigError> {
    let Some(auth) = &config.authentication else {
        return Ok(None);
    };
    let read = |field: &str, path: Option<&std::path::PathBuf>| {
        let field = format!("schemaRegistry.authentication.{field}");
        let path = path.ok_or_else(|| ConfigError::new(&field, "is required"))?;
        read_secret_file(path)
            .map_err(|message| ConfigError::new(&field, format!("{}: {message}", path.display())))
            .and_then(|secret| header_safe(&field, path, secret))
    };
    let value = match auth.type_ {
        SchemaRegistryAuthenticationType::Basic => {
            let username = auth.username.as_deref().ok_or_else(|| {
                ConfigError::new("schemaRegistry.authentication.username", "is required")
            })?;
            let password = read("passwordFile", auth.password_file.as_ref())?;
            let pair = format!("{username}:{}", password.expose());
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            )
        }
        SchemaRegistryAuthenticationType::Bearer => {
            let token = read("tokenFile", auth.token_file.as_ref())?;
            format!("Bearer {}", token.expose())
        }
    };
    Ok(Some(Secret::new(value)))
}

/// A credential that can travel in a header: visible ASCII and spaces only (a stray newline in a
/// Secret would otherwise fail every request, or split the header).
fn header_safe(field: &str, path: &std::path::Path, secret: Secret) -> Result<Secret, ConfigError> {
    if secret.expose().bytes().all(|b| (0x20..0x7f).contains(&b)) {
        Ok(secret)
    } else {
        Err(ConfigError::new(
            field,
            format!(
                "{}: holds characters an HTTP header cannot carry (control characters or \
                 non-ASCII)",
                path.display()
            ),
        ))
    }
}
