//! Confluent's Schema Registry REST API, as far as the capture speaks it: the requests' paths
//! and bodies, and what each answer means. Pure; [`super::http`] sends and receives.
//!
//! - `POST /subjects/{subject}/versions` `{"schema": "<Avro schema JSON>"}` registers (or finds)
//!   the schema under the subject and answers `{"id": n}`: Confluent's `auto.register.schemas`.
//! - `POST /subjects/{subject}` with the same body looks the schema up only, answering
//!   `{"subject", "id", "version", "schema"}`, or 404 with error code 40401 (no such subject) or
//!   40403 (the subject has no such schema).
//! - A refusal has the body `{"error_code": n, "message": "..."}`: 409 for a schema the
//!   subject's compatibility rule refuses, 422 (42201) for an invalid schema, 401 / 403 for
//!   credentials, 5xx (50001 store, 50002 timeout, 50003 forwarding) for the registry's own
//!   faults.
//! - Why a schema is incompatible: `POST /compatibility/subjects/{subject}/versions/latest?verbose=true`
//!   answers `{"is_compatible": false, "messages": [...]}`; the rule is
//!   `GET /config/{subject}?defaultToGlobal=true`'s `{"compatibilityLevel": "..."}`, or the
//!   global `GET /config`'s when the subject's says `NONE` (Apicurio answers `NONE` for a subject
//!   without a rule of its own, whatever `defaultToGlobal` asks).
//!
//! Apicurio Registry serves the same API under `/apis/ccompat/v7`; the client is given that root.

use serde::Deserialize;

use super::RegistryError;

/// The media type of requests, as Confluent's client sends it.
pub const CONTENT_TYPE: &str = "application/vnd.schemaregistry.v1+json";
/// The media types accepted, in Confluent's client's order of preference.
pub const ACCEPT: &str = "application/vnd.schemaregistry.v1+json, \
                          application/vnd.schemaregistry+json; qs=0.9, application/json; qs=0.5";

/// Which call a refusal answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    Register,
    LookUp,
}

/// The path under the root that registers a schema under `subject`.
pub fn register_path(subject: &str) -> String {
    format!("/subjects/{}/versions", path_segment(subject))
}

/// The path under the root that looks a schema up under `subject`.
pub fn look_up_path(subject: &str) -> String {
    format!("/subjects/{}", path_segment(subject))
}

/// The path that says why a schema does not fit the subject's latest version.
pub fn compatibility_path(subject: &str) -> String {
    format!(
        "/compatibility/subjects/{}/versions/latest?verbose=true",
        path_segment(subject)
    )
}

/// The path of the subject's compatibility rule (the global rule when it has none of its own).
pub fn config_path(subject: &str) -> String {
    format!("/config/{}?defaultToGlobal=true", path_segment(subject))
}

/// The path of the registry's global compatibility rule.
pub const GLOBAL_CONFIG_PATH: &str = "/config";

/// The request body carrying a schema (Avro, the API's default `schemaType`).
pub fn schema_body(schema: &str) -> String {
    serde_json::json!({ "schema": schema }).to_string()
}

/// `s` as one path segment: every byte but RFC 3986's unreserved ones percent-encoded. Topic and
/// Avro names need none today; a subject is still never allowed to change the path.
fn path_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for byte in s.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The id in a registration's or a lookup's answer.
pub fn id_of(body: &str) -> Option<u32> {
    #[derive(Deserialize)]
    struct Registered {
        id: u32,
    }
    serde_json::from_str::<Registered>(body)
        .ok()
        .map(|answer| answer.id)
}

/// The messages of a verbose compatibility check, when it found the schema incompatible.
pub fn incompatibility_messages(body: &str) -> Option<Vec<String>> {
    #[derive(Deserialize)]
    struct Check {
        is_compatible: bool,
        #[serde(default)]
        messages: Vec<String>,
    }
    let check: Check = serde_json::from_str(body).ok()?;
    (!check.is_compatible).then_some(check.messages)
}

/// The compatibility rule in a config answer (`compatibilityLevel`; `compatibility` is how the
/// rule is written when set, and some registries answer with it).
pub fn compatibility_level(body: &str) -> Option<String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Config {
        compatibility_level: Option<String>,
        compatibility: Option<String>,
    }
    let config: Config = serde_json::from_str(body).ok()?;
    config.compatibility_level.or(config.compatibility)
}

/// A refusal: the HTTP status and, when the registry wrote one, its error body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub status: u16,
    pub error_code: Option<u32>,
    pub message: String,
}

impl Failure {
    /// Reads an error answer; a body that is not the API's error object is kept as its text
    /// (cut to a line's length: an HTML error page says little past its title).
    pub fn parse(status: u16, body: &str) -> Self {
        #[derive(Deserialize)]
        struct ErrorBody {
            error_code: u32,
            #[serde(default)]
            message: String,
        }
        match serde_json::from_str::<ErrorBody>(body) {
            Ok(error) => Self {
                status,
                error_code: Some(error.error_code),
                message: error.message,
            },
            Err(_) => Self {
                status,
                error_code: None,
                message: body.trim().chars().take(200).collect(),
            },
        }
    }

    fn describe(&self) -> String {
        match (self.error_code, self.message.is_empty()) {
            (Some(code), false) => format!("HTTP {}, error {code}: {}", self.status, self.message),
            (Some(code), true) => format!("HTTP {}, error {code}", self.status),
            (None, false) => format!("HTTP {}: {}", self.status, self.message),
            (None, true) => format!("HTTP {}", self.status),
        }
    }

    /// What the refusal of `call` under `subject`, from the registry at `url`, means. A 409's
    /// [`RegistryError::Incompatible`] carries the registry's message and no rule yet: the
    /// client asks the registry for both ([`compatibility_path`], [`config_path`]).
    pub fn error(&self, call: Call, url: &str, subject: &str) -> RegistryError {
        let url = url.to_owned();
        let subject = subject.to_owned();
        match (self.status, self.error_code) {
            (401 | 403, _) => RegistryError::AuthenticationFailed {
                url,
                reason: self.describe(),
            },
            (408 | 429 | 500..=599, _) => RegistryError::Unavailable {
                url,
                reason: self.describe(),
            },
            (409, _) => RegistryError::Incompatible {
                subject,
                rule: String::new(),
                reason: self.message.clone(),
            },
            (422, _) => RegistryError::InvalidSchema {
                subject,
                reason: self.describe(),
            },
            // 40404: a soft-deleted subject, which has no live versions to find.
            (404, Some(40401 | 40403 | 40404)) if call == Call::LookUp => {
                RegistryError::NotRegistered { subject }
            }
            _ => RegistryError::NotARegistry {
                url,
                reason: self.describe(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_keep_the_subject_one_segment() {
        assert_eq!(
            register_path("orders.APP.T-value"),
            "/subjects/orders.APP.T-value/versions"
        );
        assert_eq!(look_up_path("a/b c"), "/subjects/a%2Fb%20c");
        assert_eq!(
            compatibility_path("t-key"),
            "/compatibility/subjects/t-key/versions/latest?verbose=true"
        );
        assert_eq!(config_path("t-key"), "/config/t-key?defaultToGlobal=true");
    }

    #[test]
    fn the_schema_travels_as_a_json_string() {
        let body = schema_body(r#"{"type":"record","name":"K","fields":[]}"#);
        let parsed: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            parsed["schema"],
            r#"{"type":"record","name":"K","fields":[]}"#
        );
    }

    #[test]
    fn answers_are_read_as_the_api_writes_them() {
        assert_eq!(id_of(r#"{"id":42}"#), Some(42));
        assert_eq!(
            id_of(r#"{"subject":"s","version":3,"id":7,"schema":"\"int\""}"#),
            Some(7)
        );
        assert_eq!(id_of("<html>"), None);
        assert_eq!(
            incompatibility_messages(r#"{"is_compatible":false,"messages":["a","b"]}"#),
            Some(vec!["a".to_owned(), "b".to_owned()])
        );
        assert_eq!(incompatibility_messages(r#"{"is_compatible":true}"#), None);
        assert_eq!(
            compatibility_level(r#"{"compatibilityLevel":"FULL"}"#),
            Some("FULL".to_owned())
        );
    }

    #[test]
    fn refusals_mean_what_the_api_says() {
        let url = "http://registry:8081";
        let error = |status, body: &str, call| Failure::parse(status, body).error(call, url, "s");
        assert!(matches!(
            error(
                404,
                r#"{"error_code":40403,"message":"Schema not found"}"#,
                Call::LookUp
            ),
            RegistryError::NotRegistered { .. }
        ));
        assert!(matches!(
            error(
                404,
                r#"{"error_code":40401,"message":"Subject 's' not found."}"#,
                Call::LookUp
            ),
            RegistryError::NotRegistered { .. }
        ));
        // A 404 that is not the API's: the URL is not the API's root.
        assert!(matches!(
            error(404, "<html>Not Found</html>", Call::Register),
            RegistryError::NotARegistry { .. }
        ));
        assert!(matches!(
            error(
                401,
                r#"{"error_code":401,"message":"Unauthorized"}"#,
                Call::Register
            ),
            RegistryError::AuthenticationFailed { .. }
        ));
        assert!(matches!(
            error(403, "", Call::Register),
            RegistryError::AuthenticationFailed { .. }
        ));
        let unavailable = error(
            500,
            r#"{"error_code":50001,"message":"Error in the backend data store"}"#,
            Call::Register,
        );
        assert!(unavailable.is_transient(), "{unavailable}");
        assert!(
            unavailable.to_string().contains("error 50001"),
            "{unavailable}"
        );
        assert!(error(503, "", Call::LookUp).is_transient());
        assert!(matches!(
            error(409, r#"{"error_code":409,"message":"incompatible"}"#, Call::Register),
            RegistryError::Incompatible { reason, .. } if reason == "incompatible"
        ));
        assert!(matches!(
            error(
                422,
                r#"{"error_code":42201,"message":"Invalid schema"}"#,
                Call::Register
            ),
            RegistryError::InvalidSchema { .. }
        ));
    }
}
