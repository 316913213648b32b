#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The schema registry client against a registry model served over HTTP in this process
//! (`registry_model`): the API calls, subject strategies, the id cache, lookup only,
//! compatibility refusals explained, outages and server errors, authentication and TLS.

use crate::registry_model;

use std::path::Path;
use std::sync::Arc;

use redoline_capture::config::kafka_auth::{KafkaTlsConfig, TrustedCertificateFiles};
use redoline_capture::config::schema_registry::{
    RegistryAuthenticationConfig, SchemaRegistryConfig,
};
use redoline_capture::registry::http::HttpRegistry;
use redoline_capture::registry::{RegistryError, SchemaRegistry, SchemaRole, SchemaUse};
use redoline_crds::v1alpha1::{SchemaRegistryAuthenticationType, SubjectNameStrategy};
use registry_model::{Served, test_ca};

const TOPIC: &str = "orders.APP.T";
const RECORD: &str = "orders.APP.T.Envelope";

fn value() -> SchemaUse<'static> {
    SchemaUse {
        topic: TOPIC,
        record_name: RECORD,
        role: SchemaRole::Value,
    }
}

fn key() -> SchemaUse<'static> {
    SchemaUse {
        role: SchemaRole::Key,
        record_name: "orders.APP.T.Key",
        ..value()
    }
}

/// A record schema with these fields; `(name, with a default)`.
fn record(name: &str, fields: &[(&str, bool)]) -> String {
    let fields: Vec<serde_json::Value> = fields
        .iter()
        .map(|(field, default)| {
            let mut field = serde_json::json!({"name": field, "type": ["null", "string"]});
            if *default {
                field["default"] = serde_json::Value::Null;
            }
            field
        })
        .collect();
    serde_json::json!({"type": "record", "name": name, "fields": fields}).to_string()
}

fn config(url: String) -> SchemaRegistryConfig {
    SchemaRegistryConfig {
        url,
        subject_name_strategy: SubjectNameStrategy::TopicName,
        auto_register: true,
        tls: None,
        authentication: None,
    }
}

fn client(config: &SchemaRegistryConfig) -> HttpRegistry {
    HttpRegistry::new(config).unwrap()
}

fn url(served: &Served, root: &str) -> String {
    format!("http://{}{root}", served.addr)
}

#[test]
fn registers_under_each_strategy_and_asks_once_per_subject_and_schema() {
    let served = Served::http("");
    let v1 = record("Envelope", &[("ID", false)]);
    let cases = [
        (
            SubjectNameStrategy::TopicName,
            "orders.APP.T-value",
            "orders.APP.T-key",
        ),
        (SubjectNameStrategy::RecordName, RECORD, "orders.APP.T.Key"),
        (
            SubjectNameStrategy::TopicRecordName,
            "orders.APP.T-orders.APP.T.Envelope",
            "orders.APP.T-orders.APP.T.Key",
        ),
    ];
    let key_schema = record("Key", &[("ID", false)]);
    for (strategy, value_subject, key_subject) in cases {
        let mut registry = client(&SchemaRegistryConfig {
            subject_name_strategy: strategy,
            ..config(url(&served, ""))
        });
        let id = registry.id(value(), &v1).unwrap();
        let key_id = registry.id(key(), &key_schema).unwrap();
        assert_ne!(id, key_id);
        let model = served.model();
        assert_eq!(model.versions(value_subject), [id], "{strategy:?}");
        assert_eq!(model.versions(key_subject), [key_id], "{strategy:?}");
    }
    // One id per schema across subjects, as the registry gives them.
    let model = served.model();
    assert_eq!(model.subjects().len(), 6);
    assert_eq!(model.versions("orders.APP.T-value"), model.versions(RECORD));
    drop(model);

    let mut registry = client(&config(url(&served, "")));
    let before = served.model().requests.len();
    let first = registry.id(value(), &v1).unwrap();
    let again = registry.id(value(), &v1).unwrap();
    assert_eq!(first, again);
    assert_eq!(
        served.model().requests[before..],
        ["POST /subjects/orders.APP.T-value/versions"],
        "the second ask is answered from the cache"
    );
}

#[test]
fn apicurios_ccompat_root_is_spoken_and_a_wrong_root_is_named() {
    let served = Served::http("/apis/ccompat/v7");
    let schema = record("Envelope", &[("ID", false)]);
    let mut registry = client(&config(url(&served, "/apis/ccompat/v7/")));
    let id = registry.id(value(), &schema).unwrap();
    assert_eq!(served.model().versions("orders.APP.T-value"), [id]);

    // The server's root without the API's path: not a registry's answer.
    let mut wrong = client(&config(url(&served, "")));
    let error = wrong.id(value(), &schema).unwrap_err();
    assert!(
        matches!(error, RegistryError::NotARegistry { .. }),
        "{error}"
    );
    let stop = error.stop().unwrap();
    assert_eq!(stop.code.code(), "CDC-1001");
    assert_eq!(stop.details["field"], "schemaRegistry.url");
}

#[test]
fn lookup_only_finds_registered_schemas_and_names_the_subject_of_a_missing_one() {
    let served = Served::http("");
    let v1 = record("Envelope", &[("ID", false)]);
    let mut looking = client(&SchemaRegistryConfig {
        auto_register: false,
        ..config(url(&served, ""))
    });
    let error = looking.id(value(), &v1).unwrap_err();
    assert_eq!(
        error,
        RegistryError::NotRegistered {
            subject: "orders.APP.T-value".to_owned()
        }
    );
    assert_eq!(error.stop().unwrap().code.code(), "CDC-6004");
    assert!(served.model().subjects().is_empty(), "nothing registered");

    // The pipeline's owner registers v1 (here with a registering client).
    let owner_id = client(&config(url(&served, ""))).id(value(), &v1).unwrap();
    assert_eq!(looking.id(value(), &v1).unwrap(), owner_id);
    // A schema the subject does not have (40403 rather than 40401).
    let v2 = record("Envelope", &[("ID", false), ("NOTE", true)]);
    assert!(matches!(
        looking.id(value(), &v2),
        Err(RegistryError::NotRegistered { .. })
    ));
    assert_eq!(served.model().versions("orders.APP.T-value"), [owner_id]);
}

#[test]
fn an_incompatible_change_names_the_subject_the_rule_and_the_field() {
    let served = Served::http("");
    let mut registry = client(&config(url(&served, "")));
    let v1 = record("Envelope", &[("ID", false), ("NAME", true)]);
    registry.id(value(), &v1).unwrap();
    // BACKWARD (the default): a new column with a default is compatible.
    let with_default = record("Envelope", &[("ID", false), ("NAME", true), ("NOTE", true)]);
    let v2 = registry.id(value(), &with_default).unwrap();
    // A new column without one is not.
    let without = record(
        "Envelope",
        &[
            ("ID", false),
            ("NAME", true),
            ("NOTE", true),
            ("CODE", false),
        ],
    );
    let error = registry.id(value(), &without).unwrap_err();
    let RegistryError::Incompatible {
        subject,
        rule,
        reason,
    } = &error
    else {
        panic!("{error}");
    };
    assert_eq!(subject, "orders.APP.T-value");
    assert_eq!(rule, "BACKWARD");
    assert!(reason.contains("'CODE'"), "{reason}");
    let stop = error.stop().unwrap();
    assert_eq!(stop.code.code(), "CDC-6003");
    assert_eq!(stop.details["compatibility"], "BACKWARD");

    // Under FULL, dropping a column without a default is refused too.
    served.model().set_rule("orders.APP.T-value", "FULL");
    let dropped = record("Envelope", &[("NAME", true), ("NOTE", true)]);
    let error = registry.id(value(), &dropped).unwrap_err();
    assert!(
        matches!(&error, RegistryError::Incompatible { rule, reason, .. }
            if rule == "FULL" && reason.contains("'ID'")),
        "{error}"
    );
    assert_eq!(served.model().versions("orders.APP.T-value").len(), 2);
    assert_ne!(v2, 0);
}

/// Apicurio's ccompat API answers `NONE` for a subject without a rule of its own; the rule that
/// refused the schema is then the global one, which the stop names.
#[test]
fn a_refusal_under_the_global_rule_names_it_when_the_subject_reports_none() {
    let served = Served::http("/apis/ccompat/v7");
    {
        let mut model = served.model();
        model.global_rule = Some("FULL".to_owned());
        model.subject_config_without_default = true;
    }
    let mut registry = client(&config(url(&served, "/apis/ccompat/v7")));
    registry
        .id(value(), &record("Envelope", &[("ID", false)]))
        .unwrap();
    let error = registry
        .id(
            value(),
            &record("Envelope", &[("ID", false), ("CODE", false)]),
        )
        .unwrap_err();
    assert!(
        matches!(&error, RegistryError::Incompatible { rule, reason, .. }
            if rule == "FULL" && reason.contains("'CODE'")),
        "{error}"
    );
}

#[test]
fn an_unreachable_registry_is_transient_and_served_again_it_answers() {
    // A port nothing listens on: the connection is refused.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let mut registry = client(&config(format!("http://{addr}")));
    let schema = record("Envelope", &[("ID", false)]);
    let error = registry.id(value(), &schema).unwrap_err();
    assert!(
        matches!(error, RegistryError::Unavailable { .. }),
        "{error}"
    );
    assert!(error.is_transient());
    assert!(error.stop().is_none());

    // The registry comes up on that address: the same client gets its id.
    let served = Served::start("", Arc::default(), addr, None);
    let id = registry.id(value(), &schema).unwrap();
    assert_eq!(served.model().versions("orders.APP.T-value"), [id]);
}

#[test]
fn server_errors_are_transient_and_nothing_is_cached_from_them() {
    let served = Served::http("");
    served.model().failing = Some((500, 50001));
    let mut registry = client(&config(url(&served, "")));
    let schema = record("Envelope", &[("ID", false)]);
    let error = registry.id(value(), &schema).unwrap_err();
    assert!(error.is_transient(), "{error}");
    assert!(error.to_string().contains("50001"), "{error}");
    served.model().failing = Some((503, 503));
    assert!(registry.id(value(), &schema).unwrap_err().is_transient());
    served.model().failing = None;
    let id = registry.id(value(), &schema).unwrap();
    assert_eq!(served.model().versions("orders.APP.T-value"), [id]);
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn basic_and_bearer_credentials_come_from_their_files_and_a_refusal_stops() {
    let served = Served::http("");
    // "redoline:s3cret" in base64, as HTTP Basic sends it.
    served.model().authorization = Some("Basic cmVkb2xpbmU6czNjcmV0".to_owned());
    let dir = tempfile::tempdir().unwrap();
    let schema = record("Envelope", &[("ID", false)]);
    let basic = |password: &str| SchemaRegistryConfig {
        authentication: Some(RegistryAuthenticationConfig {
            type_: SchemaRegistryAuthenticationType::Basic,
            username: Some("redoline".to_owned()),
            password_file: Some(write(dir.path(), "password", password)),
            token_file: None,
        }),
        ..config(url(&served, ""))
    };

    let error = client(&config(url(&served, "")))
        .id(value(), &schema)
        .unwrap_err();
    assert!(
        matches!(error, RegistryError::AuthenticationFailed { .. }),
        "{error}"
    );
    assert_eq!(error.stop().unwrap().code.code(), "CDC-1005");
    let wrong = client(&basic("guess\n")).id(value(), &schema).unwrap_err();
    assert!(
        matches!(wrong, RegistryError::AuthenticationFailed { .. }),
        "{wrong}"
    );
    // The file's trailing newline is not part of the password.
    let registry = client(&basic("s3cret\n"));
    assert!(!format!("{registry:?}").contains("cmVkb2xpbmU6czNjcmV0"));
    let mut registry = registry;
    registry.id(value(), &schema).unwrap();

    served.model().authorization = Some("Bearer eyJ.token".to_owned());
    let mut bearer = client(&SchemaRegistryConfig {
        authentication: Some(RegistryAuthenticationConfig {
            type_: SchemaRegistryAuthenticationType::Bearer,
            username: None,
            password_file: None,
            token_file: Some(write(dir.path(), "token", "eyJ.token\n")),
        }),
        ..config(url(&served, ""))
    });
    bearer.id(key(), &record("Key", &[("ID", false)])).unwrap();

    // A credential file that cannot be read is the config's fault, named.
    let missing = HttpRegistry::new(&SchemaRegistryConfig {
        authentication: Some(RegistryAuthenticationConfig {
            type_: SchemaRegistryAuthenticationType::Bearer,
            username: None,
            password_file: None,
            token_file: Some(dir.path().join("absent")),
        }),
        ..config(url(&served, ""))
    })
    .unwrap_err();
    assert_eq!(missing.field, "schemaRegistry.authentication.tokenFile");
}

#[test]
fn tls_trusts_the_configured_ca_and_refuses_an_untrusted_registry() {
    let (ca_pem, server_config) = test_ca();
    let served = Served::start(
        "",
        Arc::default(),
        "127.0.0.1:0".parse().unwrap(),
        Some(server_config),
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ca")).unwrap();
    write(&dir.path().join("ca"), "ca.crt", &ca_pem);
    let https = format!("https://localhost:{}", served.addr.port());
    let schema = record("Envelope", &[("ID", false)]);

    let mut trusting = client(&SchemaRegistryConfig {
        tls: Some(KafkaTlsConfig {
            trusted_certificates: vec![TrustedCertificateFiles {
                certificate: None,
                pattern: Some(dir.path().join("ca/*.crt")),
            }],
        }),
        ..config(https.clone())
    });
    let id = trusting.id(value(), &schema).unwrap();
    assert_eq!(served.model().versions("orders.APP.T-value"), [id]);

    // Without the CA (the system store only), the certificate is not trusted: a stop, not a retry.
    let error = client(&config(https)).id(value(), &schema).unwrap_err();
    assert!(
        matches!(error, RegistryError::AuthenticationFailed { .. }),
        "{error}"
    );
    assert_eq!(error.stop().unwrap().code.code(), "CDC-1005");

    // A certificate file holding no certificate is named.
    let not_pem = write(dir.path(), "ca.p12", "binary");
    let refused = HttpRegistry::new(&SchemaRegistryConfig {
        tls: Some(KafkaTlsConfig {
            trusted_certificates: vec![TrustedCertificateFiles {
                certificate: Some(not_pem),
                pattern: None,
            }],
        }),
        ..config(format!("https://localhost:{}", served.addr.port()))
    })
    .unwrap_err();
    assert_eq!(refused.field, "schemaRegistry.tls.trustedCertificates");
}

/// The client the run builds from a capture config file: the registry section read as the
/// operator renders it (paths to the mounted files), JSON needing none.
#[test]
fn the_run_builds_its_client_from_the_config_file() {
    let served = Served::http("/apis/ccompat/v7");
    served.model().authorization = Some("Bearer t0ken".to_owned());
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "token", "t0ken\n");
    let text = format!(
        "name: demo\n\
         database: {{simulator: {{scenario: scenario.jsonl}}}}\n\
         tables: [APP.T]\n\
         kafka: {{bootstrapServers: 'b:9092', topicPrefix: orders}}\n\
         format: {{type: debezium, encoding: avro}}\n\
         schemaRegistry: {{url: 'http://{}/apis/ccompat/v7', subjectNameStrategy: RecordName, \
         authentication: {{type: bearer, tokenFile: token}}}}\n",
        served.addr
    );
    let path = write(dir.path(), "capture.yaml", &text);
    let config = redoline_capture::config::load(&path, &[]).unwrap();
    let mut registry = redoline_capture::run::schema_registry(&config)
        .unwrap()
        .expect("a registry with avro");
    let id = registry
        .id(value(), &record("Envelope", &[("ID", false)]))
        .unwrap();
    assert_eq!(served.model().versions(RECORD), [id]);

    let json = text
        .replace("encoding: avro", "encoding: json")
        .lines()
        .filter(|line| !line.starts_with("schemaRegistry"))
        .collect::<Vec<_>>()
        .join("\n");
    let path = write(dir.path(), "json.yaml", &json);
    let config = redoline_capture::config::load(&path, &[]).unwrap();
    assert!(
        redoline_capture::run::schema_registry(&config)
            .unwrap()
            .is_none()
    );
}
