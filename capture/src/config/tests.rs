use super::secrets::{self, Secret};
use super::*;

const MINIMAL: &str = r#"
name: demo
database: {simulator: {scenario: scenario.jsonl}}
tables: [SALES.ORDERS]
file: {path: out.jsonl}
format: {type: compact}
buffer: {memoryMaxBytes: 64Mi, spill: {dir: ./spill, maxBytes: 10Gi}}
"#;

fn error(text: &str) -> ConfigError {
    parse(text, &[])
        .err()
        .unwrap_or_else(|| panic!("accepted:\n{text}"))
}

/// [`MINIMAL`] in the `debezium` format, with `extra`.
fn debezium(extra: &str) -> String {
    format!(
        "{}{extra}\n",
        MINIMAL.replace("format: {type: compact}", "format: {type: debezium}")
    )
}

fn with(extra: &str) -> String {
    format!("{MINIMAL}{extra}\n")
}

/// [`MINIMAL`] with a Kafka sink whose fields add `fields`.
fn kafka(fields: &str) -> String {
    MINIMAL.replace(
        "file: {path: out.jsonl}",
        &format!("kafka: {{bootstrapServers: 'b:9092', topicPrefix: x, {fields}}}"),
    )
}

#[test]
fn the_contracts_minimal_config_loads_with_defaults() {
    let config = parse(MINIMAL, &[]).unwrap();
    assert_eq!(config.name, "demo");
    assert_eq!(
        config.table_names(),
        [("SALES".to_owned(), "ORDERS".to_owned())]
    );
    assert_eq!(config.buffer.memory_max_bytes.bytes().unwrap(), 64 << 20);
    assert_eq!(config.mining.max_scn_window, 500_000);
    assert_eq!(config.mining.min_scn_window, 1000);
    assert_eq!(config.mining.window_max_seconds, 60);
    assert_eq!(
        config.mining.session_pga_max_bytes.bytes().unwrap(),
        1 << 30
    );
    assert_eq!(config.transactions.max_staged_records, 1_000_000);
    assert_eq!(config.transactions.released_ledger_max_entries, 4096);
    assert_eq!(config.http.port, 8080);
    assert!(config.kafka.is_none());
}

#[test]
fn relative_paths_follow_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capture.yaml");
    std::fs::write(&path, MINIMAL).unwrap();
    let config = load(&path, &[]).unwrap();
    assert_eq!(
        config.database.simulator.unwrap().scenario,
        dir.path().join("scenario.jsonl")
    );
    assert_eq!(config.file.unwrap().path, dir.path().join("out.jsonl"));
    assert_eq!(config.buffer.spill.dir, Some(dir.path().join("./spill")));
    let missing = load(&dir.path().join("nope.yaml"), &[]).unwrap_err();
    assert!(missing.message.contains("cannot read"), "{missing}");
}

#[test]
fn unknown_fields_are_named_with_what_is_accepted() {
    let e = error(&MINIMAL.replace("spill: {dir", "spil: {dir"));
    assert_eq!(e.field, "buffer.spil");
    assert!(e.message.contains("memoryMaxBytes, spill"), "{e}");
    let e = error(&with("colour: blue"));
    assert_eq!(e.field, "colour");
    assert!(e.message.contains("tables"), "{e}");
}

#[test]
fn wrong_types_and_ranges_name_the_field() {
    let e = error(&with("mining: {maxScnWindow: lots}"));
    assert_eq!(e.field, "mining.maxScnWindow");
    let e = error(&with("mining: {maxScnWindow: 5}"));
    assert_eq!(e.field, "mining.maxScnWindow");
    assert!(e.message.contains("1000"), "{e}");
    let e = error(&with("transactions: {orphanAction: shrug}"));
    assert_eq!(e.field, "transactions.orphanAction");
    for entries in [0, 8193] {
        let e = error(&with(&format!(
            "transactions: {{releasedLedgerMaxEntries: {entries}}}"
        )));
        assert_eq!(
            e.field, "transactions.releasedLedgerMaxEntries",
            "{entries}"
        );
    }
    // One session cannot mine and read the dictionary at once.
    let e = error(&MINIMAL.replace("database: {", "database: {maxConnections: 1, "));
    assert_eq!(e.field, "database.maxConnections");
}

#[test]
fn hash_algorithms_are_java_messagedigest_names_in_any_case() {
    use redoline_crds::v1alpha1::HashAlgorithm;
    let algorithm = |name: &str| {
        let text = debezium(&format!(
            "columns: {{maskHash: [{{algorithm: '{name}', salt: s, columns: [A]}}]}}"
        ));
        parse(&text, &[]).map(|config| config.columns.mask_hash[0].algorithm)
    };
    assert_eq!(algorithm("MD5").unwrap(), HashAlgorithm::Md5);
    assert_eq!(algorithm("sha1").unwrap(), HashAlgorithm::Sha1);
    assert_eq!(algorithm("sha-512/256").unwrap(), HashAlgorithm::Sha512_256);
    assert_eq!(algorithm("SHA3-384").unwrap(), HashAlgorithm::Sha3_384);
    let e = algorithm("SHA-257").unwrap_err();
    assert_eq!(e.field, "columns.maskHash[0].algorithm");
    assert!(e.message.contains("\"SHA-257\""), "{e}");
    assert!(
        e.message
            .contains("MD2, MD5, SHA-1 (SHA, SHA1), SHA-224 (SHA224), SHA-256 (SHA256)"),
        "{e}"
    );
    assert!(
        e.message.contains("SHA3-224, SHA3-256, SHA3-384, SHA3-512"),
        "{e}"
    );
}

/// Configs the CRD refuses, each with the field the capture names when it refuses it too.
fn crd_rule_cases() -> Vec<(String, &'static str)> {
    vec![
        (MINIMAL.replace("64Mi", "8Mi"), "buffer.memoryMaxBytes"),
        (MINIMAL.replace("64Mi", "lots"), "buffer.memoryMaxBytes"),
        (
            with("journal: {chunkMaxBytes: 32Mi}"),
            "journal.chunkMaxBytes",
        ),
        (
            with("mining: {sessionPgaMaxBytes: 1Mi}"),
            "mining.sessionPgaMaxBytes",
        ),
        (
            with("mining: {sessionPgaMaxBytes: 1024}"),
            "mining.sessionPgaMaxBytes",
        ),
        (
            with("mining: {maxScnWindow: 5000, minScnWindow: 6000}"),
            "mining.minScnWindow",
        ),
        (MINIMAL.replace("[SALES.ORDERS]", "[SALES]"), "tables[0]"),
        (
            MINIMAL.replace("[SALES.ORDERS]", "[SALES.ORDERS, SALES.ORDERS]"),
            "tables[1]",
        ),
        (
            with("snapshot: {selectOverrides: {SALES.ITEMS: \"ID > 1\"}}"),
            "snapshot.selectOverrides.SALES.ITEMS",
        ),
        (with("snapshot: {fetchSize: 0}"), "snapshot.fetchSize"),
        (with("snapshot: {maxThreads: 0}"), "snapshot.maxThreads"),
        (with("snapshot: {maxThreads: 2}"), "snapshot.maxThreads"),
        (with("startPosition: {type: scn}"), "startPosition.scn"),
        (
            with("startPosition: {type: current, scn: 5}"),
            "startPosition.scn",
        ),
        (
            with("heartbeat: {actionQuery: UPDATE APP.BEAT SET N = 1}"),
            "heartbeat.actionQuery",
        ),
        (
            with(
                "heartbeat: {intervalSeconds: 5, actionQuery: UPDATE APP.BEAT SET N = 1}\nmining: {readOnly: true}",
            ),
            "heartbeat.actionQuery",
        ),
        (
            with("kafka: {bootstrapServers: b:9092, topicPrefix: x}"),
            "kafka",
        ),
        (MINIMAL.replace("file: {path: out.jsonl}", ""), "kafka"),
        (
            MINIMAL.replace(
                "file: {path: out.jsonl}",
                "kafka: {bootstrapServers: b:9092, topicPrefix: x, transactions: {maxBytes: 2Gi}}",
            ),
            "kafka.transactions.maxBytes",
        ),
        (
            MINIMAL.replace(
                "{simulator: {scenario: scenario.jsonl}}",
                "{serviceName: ORCL}",
            ),
            "database.host",
        ),
        (
            MINIMAL.replace("{simulator: {scenario: scenario.jsonl}}", "{host: db}"),
            "database",
        ),
        (
            MINIMAL.replace("scenario: scenario.jsonl}", "scenario: s.jsonl}, host: db"),
            "database.simulator",
        ),
        (
            MINIMAL.replace(
                "format: {type: compact}",
                "format: {type: compact, skippedOperations: [t, none]}",
            ),
            "format.skippedOperations",
        ),
        (
            with("filters: {usernameIncludeList: [APP], usernameExcludeList: [ETL]}"),
            "filters.usernameIncludeList",
        ),
        (
            debezium("filters: {columnExcludeList: ['APP\\.ORDERS\\.(SSN']}"),
            "filters.columnExcludeList[0]",
        ),
        (
            debezium("columns: {messageKeyColumns: [{table: '*', columns: [ID]}]}"),
            "columns.messageKeyColumns[0].table",
        ),
        (
            with("filters: {columnExcludeList: ['APP\\.ORDERS\\.SSN']}"),
            "filters.columnExcludeList",
        ),
        (
            with("columns: {maskWithChars: [{length: 3, columns: [A]}]}"),
            "columns.maskWithChars",
        ),
        (
            debezium("columns: {maskHash: [{algorithm: SHA-256, salt: s, columns: ['(']}]}"),
            "columns.maskHash[0].columns[0]",
        ),
        (MINIMAL.replace("tables: [SALES.ORDERS]", ""), "tables"),
        (
            with("filters: {schemaIncludeList: [APP], schemaExcludeList: [HR]}"),
            "filters.schemaIncludeList",
        ),
        (
            with("filters: {tableIncludeList: ['APP\\.(']}"),
            "filters.tableIncludeList[0]",
        ),
        (
            debezium("columns: {datatypePropagateSourceType: ['[']}"),
            "columns.datatypePropagateSourceType[0]",
        ),
        (
            kafka("topics: {internal: {replicationFactor: 2, minInsyncReplicas: 3}}"),
            "kafka.topics.internal.minInsyncReplicas",
        ),
        (
            kafka("topics: {data: {creation: external, partitions: 6}}"),
            "kafka.topics.data",
        ),
        (
            kafka("topics: {data: {creation: broker, config: {retention.ms: '1'}}}"),
            "kafka.topics.data",
        ),
        (
            kafka("topics: {data: {replicationFactor: 1, config: {min.insync.replicas: '2'}}}"),
            "kafka.topics.data",
        ),
        (
            // Schema errors under the optional `kafka` are reported at `kafka` (its `anyOf`).
            kafka("topics: {data: {config: {Retention_MS: '1'}}}"),
            "kafka",
        ),
        (kafka("topics: {internal: {replicationFactor: 0}}"), "kafka"),
        (
            MINIMAL.replace(
                "format: {type: compact}",
                "format: {type: compact, encoding: avro}",
            ),
            "format.encoding",
        ),
        (
            kafka("").replace(
                "format: {type: compact}",
                "format: {type: compact, encoding: avro}",
            ) + "schemaRegistry: {url: 'http://r'}\n",
            "format.encoding",
        ),
        (
            MINIMAL.replace(
                "{simulator: {scenario: scenario.jsonl}}",
                "{connectString: x, host: db}",
            ),
            "database.host",
        ),
        (
            with("filters: {tableIncludeList: ['APP\\.A'], tableExcludeList: ['APP\\.B']}"),
            "filters.tableIncludeList",
        ),
        (
            debezium(
                "filters: {columnIncludeList: ['APP\\.A\\.B'], columnExcludeList: ['APP\\.A\\.C']}",
            ),
            "filters.columnIncludeList",
        ),
        (
            MINIMAL.replace(
                "file: {path: out.jsonl}",
                "kafka: {bootstrapServers: b:9092, topicPrefix: 'bad prefix'}",
            ),
            "kafka.topicPrefix",
        ),
        (
            with("buffer: {spill: {maxBytes: lots}}"),
            "buffer.spill.maxBytes",
        ),
        (
            with("journal: {chunkMaxBytes: lots}"),
            "journal.chunkMaxBytes",
        ),
        (
            with("mining: {sessionPgaMaxBytes: lots}"),
            "mining.sessionPgaMaxBytes",
        ),
        (
            kafka("transactions: {maxBytes: lots}"),
            "kafka.transactions.maxBytes",
        ),
        (
            with("snapshot: {requests: [{id: a, tables: [SALES]}]}"),
            "snapshot.requests[0].tables[0]",
        ),
        (
            with("snapshot: {requests: [{id: a, tables: [APP.SALES]}]}"),
            "snapshot.requests[0]",
        ),
        (
            with("filters: {columnIncludeList: ['APP\\.ORDERS\\.ID']}"),
            "filters.columnIncludeList",
        ),
        (
            with("columns: {messageKeyColumns: [{table: APP.ORDERS, columns: [ID]}]}"),
            "columns.messageKeyColumns",
        ),
        (
            with("columns: {maskHash: [{algorithm: SHA-256, salt: s, columns: [A]}]}"),
            "columns.maskHash",
        ),
        (
            with("columns: {truncateToChars: [{length: 3, columns: [A]}]}"),
            "columns.truncateToChars",
        ),
        (
            with("columns: {propagateSourceType: [A]}"),
            "columns.propagateSourceType",
        ),
        (
            with("columns: {datatypePropagateSourceType: [VARCHAR2]}"),
            "columns.datatypePropagateSourceType",
        ),
    ]
}

#[test]
fn the_crd_rules_are_evaluated() {
    for (text, field) in crd_rule_cases() {
        assert_eq!(error(&text).field, field, "{text}");
    }
    let quoted = MINIMAL.replace("[SALES.ORDERS]", r#"['"Sales".orders']"#);
    assert_eq!(
        parse(&quoted, &[]).unwrap().table_names(),
        [("Sales".to_owned(), "ORDERS".to_owned())]
    );
}

#[test]
fn the_environment_overrides_any_field() {
    let env = [
        (
            "REDOLINE__MINING__MAX_SCN_WINDOW".to_owned(),
            "600000".to_owned(),
        ),
        ("REDOLINE__TABLES".to_owned(), "[APP.A, APP.B]".to_owned()),
        ("UNRELATED".to_owned(), "x".to_owned()),
    ];
    let config = parse(MINIMAL, &env).unwrap();
    assert_eq!(config.mining.max_scn_window, 600_000);
    assert_eq!(config.tables.len(), 2);
    let bad = [("REDOLINE__NAME__INNER".to_owned(), "x".to_owned())];
    assert_eq!(
        parse(MINIMAL, &bad).unwrap_err().field,
        "REDOLINE__NAME__INNER"
    );
    let unknown = [("REDOLINE__MINING__MAX_WINDOW".to_owned(), "1".to_owned())];
    assert_eq!(
        parse(MINIMAL, &unknown).unwrap_err().field,
        "mining.maxWindow"
    );
}

#[test]
fn avro_with_the_file_sink_is_refused_naming_both() {
    let error = error(&MINIMAL.replace(
        "format: {type: compact}",
        "format: {type: debezium, encoding: avro}",
    ));
    assert_eq!(error.field, "format.encoding");
    assert!(error.message.contains("file sink (file)"), "{error}");
    assert_eq!(error.stop().code.code(), "CDC-1001");
}

#[test]
fn a_config_error_is_cdc_1001_naming_the_field() {
    let stop = error(&with("mining: {maxScnWindow: 5}")).stop();
    assert_eq!(stop.code.code(), "CDC-1001");
    assert_eq!(stop.details["field"], "mining.maxScnWindow");
}

#[test]
fn secrets_come_from_mounted_files_or_the_environment_and_never_print() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("username");
    let password = dir.path().join("password");
    std::fs::write(&user, "C##CDC\n").unwrap();
    std::fs::write(&password, "pa55word").unwrap();
    let vars = [
        (secrets::USERNAME_FILE_VAR, user.display().to_string()),
        (secrets::PASSWORD_FILE_VAR, password.display().to_string()),
    ];
    let lookup = |name: &str| {
        vars.iter()
            .find(|(var, _)| *var == name)
            .map(|(_, v)| v.clone())
    };
    let credentials = secrets::database_credentials(&lookup).unwrap();
    assert_eq!(credentials.username, "C##CDC");
    assert_eq!(credentials.password.expose(), "pa55word");
    assert!(!format!("{credentials:?}").contains("pa55word"));
    assert_eq!(Secret::new("x").to_string(), "<redacted>");

    let env_only = |name: &str| (name == secrets::USERNAME_VAR).then(|| "cdc".to_owned());
    let missing = secrets::database_credentials(&env_only).unwrap_err();
    assert_eq!(missing.field, secrets::PASSWORD_VAR);
    assert!(
        missing.message.contains(secrets::PASSWORD_FILE_VAR),
        "{missing}"
    );

    let gone =
        |name: &str| (name == secrets::USERNAME_FILE_VAR).then(|| "/nonexistent/u".to_owned());
    assert_eq!(
        secrets::database_credentials(&gone).unwrap_err().field,
        secrets::USERNAME_FILE_VAR
    );
}

#[test]
fn kafka_properties_are_one_file_per_property() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sasl.password"), "hunter2\n").unwrap();
    std::fs::write(dir.path().join("security.protocol"), "SASL_SSL").unwrap();
    std::fs::create_dir(dir.path().join("..2026_11_29")).unwrap();
    std::fs::write(dir.path().join("..data"), "").unwrap();
    let path = dir.path().display().to_string();
    let lookup = |name: &str| (name == secrets::KAFKA_CONFIG_DIR_VAR).then(|| path.clone());
    let properties = secrets::kafka_properties(&lookup).unwrap();
    let names: Vec<_> = properties.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["sasl.password", "security.protocol"]);
    assert_eq!(properties[0].1.expose(), "hunter2");
    assert!(!format!("{properties:?}").contains("hunter2"));
    assert!(secrets::kafka_properties(&|_| None).unwrap().is_empty());
}

/// Configs with a Kafka block the CRD refuses, each with the field the capture names.
fn kafka_security_cases() -> Vec<(String, &'static str)> {
    let cases = [
        (
            "authentication: {type: tls, certificateAndKey: {certificate: c, key: k}}",
            "kafka.tls",
        ),
        (
            "tls: {}, authentication: {type: tls}",
            "kafka.authentication.certificateAndKey",
        ),
        (
            "authentication: {type: scram-sha-512, passwordFile: p}",
            "kafka.authentication.username",
        ),
        (
            "authentication: {type: plain, username: u}",
            "kafka.authentication.passwordFile",
        ),
        (
            "authentication: {type: scram-sha-256, username: u, passwordFile: p, principal: x}",
            "kafka.authentication.principal",
        ),
        (
            "authentication: {type: oauth, clientId: c, clientSecretFile: s}",
            "kafka.authentication.tokenEndpointUri",
        ),
        (
            "authentication: {type: oauth, clientId: c, clientSecretFile: s, tokenEndpointUri: 'ftp://x'}",
            "kafka.authentication.tokenEndpointUri",
        ),
        (
            "authentication: {type: oauth, clientId: c, clientSecretFile: s, tokenEndpointUri: 'https://i/t', saslExtensions: {auth: x}}",
            "kafka.authentication.saslExtensions.auth",
        ),
        (
            "authentication: {type: oauth, clientId: c, clientSecretFile: s, tokenEndpointUri: 'https://i/t', saslExtensions: {a: 'x,y'}}",
            "kafka.authentication.saslExtensions.a",
        ),
        (
            "authentication: {type: plain, username: u, passwordFile: p, scope: s}",
            "kafka.authentication.scope",
        ),
        (
            "authentication: {type: gssapi, keytabFile: k}",
            "kafka.authentication.principal",
        ),
        (
            "authentication: {type: gssapi, principal: p}",
            "kafka.authentication.keytabFile",
        ),
        // The schema's pattern refuses it; the schema reports it at `kafka`, the optional
        // member whose `anyOf` (the block or null) failed.
        (
            "authentication: {type: gssapi, principal: 'p\"; rm -rf /', keytabFile: k}",
            "kafka",
        ),
        (
            "authentication: {type: gssapi, principal: p, keytabFile: k, serviceName: kafka/host}",
            "kafka.authentication.serviceName",
        ),
        (
            "authentication: {type: plain, username: u, passwordFile: p, serviceName: kafka}",
            "kafka.authentication.serviceName",
        ),
        (
            "tls: {trustedCertificates: [{}]}",
            "kafka.tls.trustedCertificates[0]",
        ),
        (
            "tls: {trustedCertificates: [{certificate: a, pattern: '*.crt'}]}",
            "kafka.tls.trustedCertificates[0]",
        ),
        (
            "authentication: {type: kerberos}",
            "kafka.authentication.type",
        ),
        (
            "authentication: {type: plain, username: u, passwordFile: p, clientId: c}",
            "kafka.authentication.clientId",
        ),
        (
            "authentication: {type: plain, username: u, passwordFile: p, clientSecretFile: c}",
            "kafka.authentication.clientSecretFile",
        ),
        (
            "authentication: {type: plain, username: u, passwordFile: p, saslExtensions: {a: b}}",
            "kafka.authentication.saslExtensions",
        ),
        (
            "authentication: {type: plain, username: u, passwordFile: p, tlsTrustedCertificates: [{certificate: c}]}",
            "kafka.authentication.tlsTrustedCertificates",
        ),
    ];
    cases
        .into_iter()
        .map(|(block, field)| (kafka(block), field))
        .collect()
}

/// The CRD's rules for `spec.kafka.tls` and `spec.kafka.authentication`, on the config's fields
/// (file paths in place of Secret references).
#[test]
fn kafka_security_rules_are_evaluated() {
    for (text, field) in kafka_security_cases() {
        let found = error(&text);
        assert_eq!(found.field, field, "{text}: {found}");
    }
    for block in [
        "tls: {}",
        "tls: {trustedCertificates: [{pattern: '/certs/*.crt'}]}, authentication: {type: tls, certificateAndKey: {certificate: c, key: k}}",
        "authentication: {type: scram-sha-512, username: u, passwordFile: p}",
        "authentication: {type: gssapi, principal: p, keytabFile: k, serviceName: kafka}",
    ] {
        parse(&kafka(block), &[]).unwrap_or_else(|e| panic!("{block}: {e}"));
    }
}

#[test]
fn kafka_credential_paths_follow_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capture.yaml");
    let text = MINIMAL.replace(
        "file: {path: out.jsonl}",
        "kafka: {bootstrapServers: 'b:9092', topicPrefix: x, \
         tls: {trustedCertificates: [{pattern: 'certs/*.crt'}]}, \
         authentication: {type: plain, username: u, passwordFile: /abs/password}}",
    );
    std::fs::write(&path, text).unwrap();
    let config = load(&path, &[]).unwrap();
    let kafka = config.kafka.unwrap();
    assert_eq!(
        kafka.tls.unwrap().trusted_certificates[0].pattern,
        Some(dir.path().join("certs/*.crt"))
    );
    assert_eq!(
        kafka.authentication.unwrap().password_file,
        Some(std::path::PathBuf::from("/abs/password"))
    );
}

#[test]
fn a_krb5_config_that_is_not_there_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("krb5.conf");
    let missing = file.display().to_string();
    let lookup = |name: &str| (name == secrets::KRB5_CONFIG_VAR).then(|| missing.clone());
    assert_eq!(
        secrets::check_krb5_config(&lookup).unwrap_err().field,
        "KRB5_CONFIG"
    );
    std::fs::write(&file, "[libdefaults]\n").unwrap();
    secrets::check_krb5_config(&lookup).unwrap();
    secrets::check_krb5_config(&|_| None).unwrap();
}

/// A Kafka sink and the Avro encoding with the schema registry `registry`.
fn avro(registry: &str) -> String {
    kafka("").replace(
        "format: {type: compact}",
        "format: {type: debezium, encoding: avro}",
    ) + &format!("schemaRegistry: {{{registry}}}\n")
}

/// Configs with a schema registry the CRD refuses, each with the field the capture names.
fn schema_registry_cases() -> Vec<(String, &'static str)> {
    let cases = [
        ("url: 'ftp://r'", "schemaRegistry.url"),
        ("url: 'http://r:8081?x=1'", "schemaRegistry.url"),
        ("url: 'http://r', tls: {}", "schemaRegistry.tls"),
        (
            "url: 'https://r', tls: {trustedCertificates: [{}]}",
            "schemaRegistry.tls.trustedCertificates[0]",
        ),
        (
            "url: 'http://r', authentication: {type: basic, passwordFile: p}",
            "schemaRegistry.authentication.username",
        ),
        (
            "url: 'http://r', authentication: {type: basic, username: u}",
            "schemaRegistry.authentication.passwordFile",
        ),
        (
            "url: 'http://r', authentication: {type: basic, username: u, passwordFile: p, tokenFile: t}",
            "schemaRegistry.authentication.tokenFile",
        ),
        (
            "url: 'http://r', authentication: {type: bearer}",
            "schemaRegistry.authentication.tokenFile",
        ),
        (
            "url: 'http://r', authentication: {type: bearer, username: u, tokenFile: t}",
            "schemaRegistry.authentication.username",
        ),
        (
            "url: 'http://r', authentication: {type: basic, username: 'a:b', passwordFile: p}",
            "schemaRegistry.authentication.username",
        ),
        (
            "url: 'http://r', subjectNameStrategy: Topic",
            "schemaRegistry.subjectNameStrategy",
        ),
    ];
    let mut cases: Vec<(String, &'static str)> = cases
        .into_iter()
        .map(|(block, field)| (avro(block), field))
        .collect();
    // The registry goes with Avro, and only with it.
    cases.push((
        kafka("") + "schemaRegistry: {url: 'http://r'}\n",
        "schemaRegistry",
    ));
    cases.push((
        kafka("").replace(
            "format: {type: compact}",
            "format: {type: debezium, encoding: avro}",
        ),
        "schemaRegistry",
    ));
    cases
}

/// The CRD's rules for `spec.schemaRegistry`, on the config's fields: present with the Avro
/// encoding only, an http(s) URL, https with TLS, the fields of each authentication type.
#[test]
fn schema_registry_rules_are_evaluated() {
    for (text, field) in schema_registry_cases() {
        let found = error(&text);
        assert_eq!(found.field, field, "{text}: {found}");
    }
    for block in [
        "url: 'http://registry:8081'",
        "url: 'https://r/apis/ccompat/v7', subjectNameStrategy: TopicRecordName, autoRegister: false, tls: {trustedCertificates: [{pattern: '/c/*.crt'}]}",
        "url: 'https://r', authentication: {type: basic, username: u, passwordFile: p}",
        "url: 'https://r', authentication: {type: bearer, tokenFile: t}",
    ] {
        let config = parse(&avro(block), &[]).unwrap_or_else(|e| panic!("{block}: {e}"));
        assert!(config.schema_registry.is_some());
    }
}

#[test]
fn schema_registry_paths_follow_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capture.yaml");
    let text = kafka("").replace(
        "format: {type: compact}",
        "format: {type: debezium, encoding: avro}",
    ) + "schemaRegistry: {url: 'https://r', tls: {trustedCertificates: [{certificate: ca.crt}]}, \
           authentication: {type: bearer, tokenFile: token}}\n";
    std::fs::write(&path, text).unwrap();
    let registry = load(&path, &[]).unwrap().schema_registry.unwrap();
    assert_eq!(
        registry.tls.unwrap().trusted_certificates[0].certificate,
        Some(dir.path().join("ca.crt"))
    );
    assert_eq!(
        registry.authentication.unwrap().token_file,
        Some(dir.path().join("token"))
    );
}

/// Each rule of the CRD is paired with a config the CRD refuses and the capture refuses too,
/// with the rule's own message; the few that are not the capture's to evaluate say why. A rule
/// added to the CRD fails this test until a case pairs with it.
#[test]
fn every_crd_rule_is_paired_with_a_refused_config() {
    // (node, the start of the rule's message, why the capture does not pair with it)
    const NOT_THE_CAPTURES: [(&str, &str, &str); 6] = [
        (
            "buffer.spill.size",
            "spec.buffer.spill.size",
            "the operator drops the volume's size from the config; the config has no such field",
        ),
        (
            "buffer.spill",
            "spec.buffer.spill.maxBytes must not exceed",
            "reads the volume's size, which the config does not carry (crd_rules::SPEC_ONLY)",
        ),
        (
            "kafka.authentication.krb5Config",
            "spec.kafka.authentication.krb5Config",
            "the config has no krb5Config: the capture reads KRB5_CONFIG",
        ),
        (
            "kafka.authentication",
            "spec.kafka.authentication.krb5Config is allowed only",
            "holds for every config, which has no krb5Config",
        ),
        (
            "columns.maskHash[].algorithm",
            "must be one of Java's MessageDigest names",
            "the config's type refuses another name first, with the same list of names \
             (hash_algorithms_are_java_messagedigest_names_in_any_case)",
        ),
        (
            "kafka.topics.data.config",
            "spec.kafka.topics.data.config: names",
            "the config's schema refuses such a name first (its propertyNames pattern)",
        ),
    ];
    let refusals: Vec<ConfigError> = crd_rule_cases()
        .into_iter()
        .chain(kafka_security_cases())
        .chain(schema_registry_cases())
        .map(|(text, _)| error(&text))
        .collect();
    let declared = super::crd_rules::declared();
    assert!(declared.len() > 60, "{declared:?}");
    for (node, message) in declared {
        if NOT_THE_CAPTURES
            .iter()
            .any(|(skipped, start, _)| *skipped == node && message.starts_with(start))
        {
            continue;
        }
        assert!(
            refusals.iter().any(|refusal| refusal.message == message),
            "no case pairs with the rule at {node:?}: {message}"
        );
    }
}

/// The config re-declares the spec's structs where their shapes differ (files for Secret
/// references, local alternatives), and with them the bounds of the fields they share with the
/// spec. Each shared field must carry the CRD's bounds, so a config the capture accepts is one
/// the apiserver accepts there too; a bound changed on one side only fails here.
#[test]
fn shared_fields_carry_the_crds_bounds() {
    const BOUNDS: [&str; 8] = [
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "pattern",
        "minItems",
        "maxItems",
        "enum",
    ];
    /// Compares the bounds of `config` with those of `crd` and of the fields both have below;
    /// pushes each compared field's path to `compared` and each difference to `out`.
    fn walk(
        config: &serde_json::Value,
        crd: &serde_json::Value,
        path: &str,
        compared: &mut Vec<String>,
        out: &mut Vec<String>,
    ) {
        let config = super::validate::resolve(config);
        for bound in BOUNDS {
            // Numbers as numbers: the CRD writes `1.0` where the config's schema writes `1`.
            let same = |a: &serde_json::Value, b: &serde_json::Value| match (a.as_f64(), b.as_f64())
            {
                (Some(a), Some(b)) => a == b,
                _ => a == b,
            };
            let (Some(ours), Some(theirs)) = (config.get(bound), crd.get(bound)) else {
                continue;
            };
            compared.push(path.to_owned());
            if !same(ours, theirs) {
                out.push(format!("{path}: {bound} {ours} vs the CRD's {theirs}"));
            }
        }
        if let (Some(ours), Some(theirs)) = (
            config
                .get("properties")
                .and_then(serde_json::Value::as_object),
            crd.get("properties").and_then(serde_json::Value::as_object),
        ) {
            for (name, node) in ours {
                if let Some(other) = theirs.get(name) {
                    walk(node, other, &format!("{path}.{name}"), compared, out);
                }
            }
        }
        for nested in ["items", "additionalProperties"] {
            if let (Some(ours), Some(theirs)) = (config.get(nested), crd.get(nested))
                && ours.is_object()
                && theirs.is_object()
            {
                walk(ours, theirs, &format!("{path}[]"), compared, out);
            }
        }
    }
    let crd = serde_json::to_value(redoline_crds::crd()).unwrap();
    let spec = crd
        .pointer("/spec/versions/0/schema/openAPIV3Schema/properties/spec")
        .unwrap();
    let (mut compared, mut mismatches) = (Vec::new(), Vec::new());
    walk(
        &super::validate::SCHEMA,
        spec,
        "",
        &mut compared,
        &mut mismatches,
    );
    assert!(mismatches.is_empty(), "{mismatches:#?}");
    // The re-declared structs are reached: database, kafka, the schema registry.
    for field in [
        ".database.host",
        ".database.maxConnections",
        ".kafka.bootstrapServers",
        ".schemaRegistry.url",
        ".schemaRegistry.authentication.username",
    ] {
        assert!(compared.iter().any(|c| c == field), "{field}: {compared:?}");
    }
}
