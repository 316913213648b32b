//! A schema registry for the client's tests: a small model of Confluent's Schema Registry,
//! served over HTTP (and HTTPS) in this process. It evaluates rather than answers set text: it
//! keeps the versions of each subject, gives one id per distinct schema across subjects (as the
//! registry does), applies the subject's compatibility rule to a new version, and refuses with
//! the registry's error bodies (`{"error_code", "message"}`: 40401, 40403, 409, 42201, 401, 5xx).
//!
//! The compatibility rule is the one that matters for table changes, on the top record's
//! fields, against the latest version (Confluent's non-transitive levels):
//! - BACKWARD (the registry's default): a reader of the new schema reads data of the old one,
//!   so a field the old schema lacks needs a default in the new one;
//! - FORWARD: a reader of the old schema reads new data, so a field the new schema drops needs a
//!   default in the old one;
//! - FULL: both; NONE: anything.
//!
//! Served under a root (`""` as Confluent serves it, `/apis/ccompat/v7` as Apicurio does).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Method, Response, StatusCode, Uri};
use serde_json::{Value, json};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

/// What the registry holds and how it is set to behave.
#[derive(Debug, Default)]
pub struct Model {
    /// Schema texts by id - 1.
    schemas: Vec<Value>,
    /// Each subject's versions, oldest first, as ids.
    subjects: BTreeMap<String, Vec<u32>>,
    /// Compatibility rules set per subject; the global rule otherwise.
    rules: BTreeMap<String, String>,
    /// The global rule, BACKWARD unless set (Confluent's default).
    pub global_rule: Option<String>,
    /// `GET /config/{subject}` answers `NONE` for a subject without a rule of its own, as
    /// Apicurio's ccompat API does, rather than the global rule Confluent's gives with
    /// `defaultToGlobal=true`.
    pub subject_config_without_default: bool,
    /// The `Authorization` header every request must carry, when set.
    pub authorization: Option<String>,
    /// Every request is answered with this server error while set (an ailing registry).
    pub failing: Option<(u16, u32)>,
    /// The requests received, `METHOD path`.
    pub requests: Vec<String>,
}

impl Model {
    /// Sets `subject`'s compatibility rule, as `PUT /config/{subject}` does.
    pub fn set_rule(&mut self, subject: &str, rule: &str) {
        self.rules.insert(subject.to_owned(), rule.to_owned());
    }

    /// The ids of `subject`'s versions.
    pub fn versions(&self, subject: &str) -> Vec<u32> {
        self.subjects.get(subject).cloned().unwrap_or_default()
    }

    /// The subjects, sorted.
    pub fn subjects(&self) -> Vec<String> {
        self.subjects.keys().cloned().collect()
    }

    fn rule(&self, subject: &str) -> String {
        self.rules
            .get(subject)
            .cloned()
            .unwrap_or_else(|| self.global())
    }

    fn global(&self) -> String {
        self.global_rule
            .clone()
            .unwrap_or_else(|| "BACKWARD".to_owned())
    }

    /// Registers `schema` under `subject`: the id it has there, or a new version after the
    /// compatibility check.
    fn register(&mut self, subject: &str, schema: Value) -> Result<u32, (u16, Value)> {
        let versions = self.subjects.get(subject).cloned().unwrap_or_default();
        if let Some(id) = versions
            .iter()
            .copied()
            .find(|id| self.schema(*id) == Some(&schema))
        {
            return Ok(id);
        }
        if let Some(latest) = versions.last().and_then(|id| self.schema(*id)) {
            let problems = incompatibilities(&self.rule(subject), latest, &schema);
            if !problems.is_empty() {
                return Err((
                    409,
                    error_body(
                        409,
                        &format!(
                            "Schema being registered is incompatible with an earlier schema for \
                             subject \"{subject}\""
                        ),
                    ),
                ));
            }
        }
        let id = match self.schemas.iter().position(|known| *known == schema) {
            Some(index) => index as u32 + 1,
            None => {
                self.schemas.push(schema);
                self.schemas.len() as u32
            }
        };
        self.subjects
            .entry(subject.to_owned())
            .or_default()
            .push(id);
        Ok(id)
    }

    fn schema(&self, id: u32) -> Option<&Value> {
        self.schemas.get(id.checked_sub(1)? as usize)
    }

    /// One request, as the registry answers it.
    fn answer(
        &mut self,
        method: &Method,
        path: &str,
        query: &str,
        auth: Option<&str>,
        body: &str,
    ) -> (u16, Value) {
        self.requests.push(format!("{method} {path}"));
        if let Some(expected) = &self.authorization
            && auth != Some(expected.as_str())
        {
            return (401, error_body(401, "Unauthorized"));
        }
        if let Some((status, code)) = self.failing {
            return (status, error_body(code, "Error in the backend datastore"));
        }
        let parts: Vec<String> = path
            .trim_start_matches('/')
            .split('/')
            .map(decode)
            .collect();
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        let schema = || -> Result<Value, (u16, Value)> {
            let request: Value =
                serde_json::from_str(body).map_err(|_| (400, error_body(400, "bad request")))?;
            let text = request["schema"]
                .as_str()
                .ok_or((422, error_body(42201, "Invalid schema: no schema")))?;
            let schema: Value = serde_json::from_str(text)
                .map_err(|e| (422, error_body(42201, &format!("Invalid schema {e}"))))?;
            if schema.get("type").is_none() && !schema.is_string() {
                return Err((422, error_body(42201, "Invalid schema: no type")));
            }
            Ok(schema)
        };
        let result = match (method.as_str(), parts.as_slice()) {
            ("POST", ["subjects", subject, "versions"]) => schema()
                .and_then(|schema| self.register(subject, schema))
                .map(|id| json!({ "id": id })),
            ("POST", ["subjects", subject]) => schema().and_then(|schema| {
                let versions = self
                    .subjects
                    .get(*subject)
                    .ok_or((404, error_body(40401, &format!("Subject '{subject}' not found."))))?;
                versions
                    .iter()
                    .enumerate()
                    .find(|(_, id)| self.schema(**id) == Some(&schema))
                    .map(|(version, id)| {
                        json!({"subject": subject, "version": version + 1, "id": id, "schema": schema.to_string()})
                    })
                    .ok_or((404, error_body(40403, "Schema not found")))
            }),
            ("POST", ["compatibility", "subjects", subject, "versions", "latest"]) => {
                schema().and_then(|schema| {
                    let latest = self
                        .subjects
                        .get(*subject)
                        .and_then(|versions| versions.last())
                        .and_then(|id| self.schema(*id))
                        .ok_or((404, error_body(40401, &format!("Subject '{subject}' not found."))))?;
                    let problems = incompatibilities(&self.rule(subject), latest, &schema);
                    let mut answer = json!({ "is_compatible": problems.is_empty() });
                    if query.contains("verbose=true") {
                        answer["messages"] = json!(problems);
                    }
                    Ok(answer)
                })
            }
            ("GET", ["config", subject]) => {
                let level = match self.rules.get(*subject) {
                    Some(rule) => rule.clone(),
                    None if self.subject_config_without_default => "NONE".to_owned(),
                    None => self.global(),
                };
                Ok(json!({ "compatibilityLevel": level }))
            }
            ("GET", ["config"]) => Ok(json!({ "compatibilityLevel": self.global() })),
            _ => Err((404, error_body(404, "HTTP 404 Not Found"))),
        };
        result.map_or_else(|refusal| refusal, |answer| (200, answer))
    }
}

fn error_body(code: u32, message: &str) -> Value {
    json!({ "error_code": code, "message": message })
}

/// `%XX` escapes decoded (the client escapes every byte outside RFC 3986's unreserved set).
fn decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = (bytes[i] == b'%')
            .then(|| segment.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match hex {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The top record's fields: name and whether it has a default.
fn fields(schema: &Value) -> BTreeMap<String, bool> {
    schema["fields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|field| {
            let name = field["name"].as_str()?;
            Some((name.to_owned(), field.get("default").is_some()))
        })
        .collect()
}

/// Why `new` may not follow `old` under `rule`, one message per offending field.
fn incompatibilities(rule: &str, old: &Value, new: &Value) -> Vec<String> {
    let (old, new) = (fields(old), fields(new));
    let backward = matches!(rule, "BACKWARD" | "FULL");
    let forward = matches!(rule, "FORWARD" | "FULL");
    let mut problems = Vec::new();
    if backward {
        for (name, _) in new
            .iter()
            .filter(|(name, default)| !**default && !old.contains_key(*name))
        {
            problems.push(format!(
                "READER_FIELD_MISSING_DEFAULT_VALUE: the field '{name}' in the new schema has no \
                 default value and is missing in the old schema"
            ));
        }
    }
    if forward {
        for (name, _) in old
            .iter()
            .filter(|(name, default)| !**default && !new.contains_key(*name))
        {
            problems.push(format!(
                "READER_FIELD_MISSING_DEFAULT_VALUE: the field '{name}' in the old schema has no \
                 default value and is missing in the new schema"
            ));
        }
    }
    problems
}

/// A registry served on loopback until dropped.
#[derive(Debug)]
pub struct Served {
    pub addr: SocketAddr,
    pub model: Arc<Mutex<Model>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Served {
    /// Serves a fresh model under `root` on a free port, over HTTP.
    pub fn http(root: &str) -> Self {
        Self::start(root, Arc::default(), "127.0.0.1:0".parse().unwrap(), None)
    }

    /// Serves `model` under `root` on `addr`, over TLS when `tls` is given.
    pub fn start(
        root: &str,
        model: Arc<Mutex<Model>>,
        addr: SocketAddr,
        tls: Option<Arc<rustls::ServerConfig>>,
    ) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(addr))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let root = root.to_owned();
        let router = Router::new()
            .fallback(
                move |State(model): State<Arc<Mutex<Model>>>,
                      method: Method,
                      uri: Uri,
                      headers: HeaderMap,
                      body: String| {
                    let root = root.clone();
                    async move {
                        let auth = headers
                            .get("authorization")
                            .and_then(|value| value.to_str().ok());
                        let (status, answer) = match uri.path().strip_prefix(root.as_str()) {
                            Some(path) => model
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .answer(&method, path, uri.query().unwrap_or(""), auth, &body),
                            None => (404, json!("<html>Not Found</html>")),
                        };
                        Response::builder()
                            .status(StatusCode::from_u16(status).unwrap())
                            .header("content-type", "application/vnd.schemaregistry.v1+json")
                            .body(Body::from(answer.to_string()))
                            .unwrap()
                    }
                },
            )
            .with_state(Arc::clone(&model));
        match tls {
            None => {
                runtime.spawn(async move { axum::serve(listener, router).await });
            }
            Some(config) => {
                let listener = TlsListener {
                    tcp: listener,
                    acceptor: TlsAcceptor::from(config),
                };
                runtime.spawn(async move { axum::serve(listener, router).await });
            }
        }
        Self {
            addr,
            model,
            runtime: Some(runtime),
        }
    }

    pub fn model(&self) -> std::sync::MutexGuard<'_, Model> {
        self.model.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// TLS over the TCP listener; a handshake that fails (a client that does not trust the
/// certificate) drops that connection only.
struct TlsListener {
    tcp: tokio::net::TcpListener,
    acceptor: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else {
                continue;
            };
            if let Ok(tls) = self.acceptor.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// A CA made for the test, and a server configuration with a certificate for `localhost` and
/// 127.0.0.1 that it signed. The CA's PEM goes in the client's trusted certificates.
pub fn test_ca() -> (String, Arc<rustls::ServerConfig>) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "registry test CA");
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
    let server_key = rcgen::KeyPair::generate().unwrap();
    let server_params =
        rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .unwrap();
    let server_cert = server_params.signed_by(&server_key, &ca).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![server_cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(server_key.serialize_der().into()),
        )
        .unwrap();
    (ca.pem(), Arc::new(config))
}
