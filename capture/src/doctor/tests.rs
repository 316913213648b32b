use super::*;
use crate::simulator::Simulator;

const HEALTHY: &str = r#"{"table":"APP.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"NOTE","type":"VARCHAR2(20)"}],"logging":"all"}
{"table":"APP.NOKEY","columns":[{"name":"A","type":"NUMBER(10)"}],"logging":"all"}
"#;

fn simulator(extra: &str) -> Simulator {
    Simulator::from_reader(format!("{HEALTHY}{extra}").as_bytes()).unwrap()
}

fn request(tables: &[&str]) -> DoctorRequest {
    DoctorRequest {
        user: "C##CDC".to_owned(),
        tables: tables
            .iter()
            .map(|t| ("APP".to_owned(), (*t).to_owned()))
            .collect(),
        flush_table: "LOG_MINING_FLUSH".to_owned(),
        pdb: None,
        snapshots: false,
        read_only: false,
        filters: Filters::default(),
    }
}

fn failing(report: &Report) -> Vec<(&str, &str)> {
    report
        .failures()
        .map(|check| {
            (
                check.name.as_str(),
                check.fix.as_deref().unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn a_prepared_database_passes_every_check() {
    let report = run(&mut simulator(""), &request(&["ORDERS", "NOKEY"]));
    assert!(report.passed(), "{report}");
    assert_eq!(report.stop(), None);
    let names: Vec<_> = report.checks.iter().map(|c| c.name.as_str()).collect();
    for expected in [
        "connection",
        "archivelog",
        "supplemental logging",
        "table APP.ORDERS",
        "privilege LOGMINING",
        "role EXECUTE_CATALOG_ROLE",
        "redo logs visible",
        "open transactions visible",
        "flush table",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} not checked: {names:?}"
        );
    }
}

#[test]
fn each_failing_prerequisite_names_its_fix() {
    let cases = [
        (
            r#"{"database":{"log_mode":"NOARCHIVELOG"}}"#,
            "archivelog",
            "SHUTDOWN IMMEDIATE; STARTUP MOUNT; ALTER DATABASE ARCHIVELOG; ALTER DATABASE OPEN;",
        ),
        (
            r#"{"database":{"supplemental":{"min":"NO"}}}"#,
            "supplemental logging",
            "ALTER DATABASE ADD SUPPLEMENTAL LOG DATA;",
        ),
        (
            r#"{"table_logging":"APP.ORDERS","logging":"none"}"#,
            "table APP.ORDERS",
            r#"ALTER TABLE APP.ORDERS ADD SUPPLEMENTAL LOG DATA (PRIMARY KEY) COLUMNS;"#,
        ),
        (
            r#"{"revoke":"LOGMINING"}"#,
            "privilege LOGMINING",
            "GRANT LOGMINING TO C##CDC;",
        ),
        (
            r#"{"revoke":"SELECT_CATALOG_ROLE"}"#,
            "role SELECT_CATALOG_ROLE",
            "GRANT SELECT_CATALOG_ROLE TO C##CDC;",
        ),
    ];
    for (step, check, fix) in cases {
        let report = run(&mut simulator(&format!("{step}\n")), &request(&["ORDERS"]));
        assert_eq!(failing(&report), [(check, fix)], "after {step}:\n{report}");
    }
}

#[test]
fn a_table_that_logs_no_key_is_rejected_and_a_missing_one_named() {
    let report = run(
        &mut simulator("{\"table_logging\":\"APP.NOKEY\",\"logging\":\"none\"}\n"),
        &request(&["NOKEY", "MISSING"]),
    );
    let failures = failing(&report);
    assert_eq!(failures.len(), 2, "{report}");
    assert_eq!(failures[0].0, "table APP.NOKEY");
    let nokey = report
        .checks
        .iter()
        .find(|c| c.name == "table APP.NOKEY")
        .unwrap();
    assert!(nokey.message.contains("rejected"), "{}", nokey.message);
    assert_eq!(failures[1].0, "table APP.MISSING");
}

#[test]
fn key_logging_passes_with_a_note_about_before_images() {
    let report = run(
        &mut simulator("{\"table_logging\":\"APP.ORDERS\",\"logging\":\"pk\"}\n"),
        &request(&["ORDERS"]),
    );
    assert!(report.passed(), "{report}");
    let table = report
        .checks
        .iter()
        .find(|c| c.name == "table APP.ORDERS")
        .unwrap();
    assert!(
        table.message.contains("key columns are logged"),
        "{}",
        table.message
    );
}

#[test]
fn the_report_is_a_table_json_and_the_cdc_1002_stop() {
    let report = run(
        &mut simulator(
            "{\"revoke\":\"LOGMINING\"}\n{\"database\":{\"log_mode\":\"NOARCHIVELOG\"}}\n",
        ),
        &request(&["ORDERS"]),
    );
    let text = report.to_string();
    assert!(text.starts_with("RESULT"), "{text}");
    assert!(text.contains("FAIL   archivelog"), "{text}");
    assert!(text.contains("fix: GRANT LOGMINING TO C##CDC;"), "{text}");
    assert!(text.ends_with("checks failed"), "{text}");
    let json = report.to_json();
    assert_eq!(json["ok"], false);
    let stop = report.stop().unwrap();
    assert_eq!(stop.code.code(), "CDC-1002");
    let checks = stop.details["checks"].as_array().unwrap();
    assert_eq!(checks[0]["ok"], false, "failures come first");
    assert!(
        checks
            .iter()
            .all(|c| c.get("name").is_some() && c.get("message").is_some())
    );
    let message = stop.termination_message(jiff::Timestamp::UNIX_EPOCH);
    assert!(message.len() <= crate::stop::TERMINATION_MESSAGE_MAX);
    assert!(
        message.contains("\"fix\":\"GRANT LOGMINING TO C##CDC;\""),
        "{message}"
    );
}

#[test]
fn read_only_mode_does_not_write_the_flush_table() {
    let mut request = request(&["ORDERS"]);
    request.read_only = true;
    let report = run(&mut simulator("{\"revoke\":\"CREATE TABLE\"}\n"), &request);
    let flush = report
        .checks
        .iter()
        .find(|c| c.name == "flush table")
        .unwrap();
    assert!(flush.ok && flush.message.contains("readOnly"), "{report}");
    assert!(
        report.passed(),
        "CREATE TABLE is not needed read-only:\n{report}"
    );
}

/// Mining a PDB from the root: doctor wants SET CONTAINER, and every grant it prints reaches
/// the PDB (CONTAINER=ALL for the common user; object grants run in the PDB).
#[test]
fn a_pdb_capture_checks_set_container_and_prints_grants_for_every_container() {
    let mut sim = simulator(
        "{\"database\":{\"pdb\":\"ORCLPDB1\"}}\n{\"revoke\":\"SET CONTAINER\"}\n{\"revoke\":\"LOGMINING\"}\n",
    );
    let mut wanted = request(&["ORDERS", "MISSING"]);
    wanted.pdb = Some("ORCLPDB1".to_owned());
    let report = run(&mut sim, &wanted);
    let failures = failing(&report);
    assert!(
        failures.contains(&(
            "privilege SET CONTAINER",
            "GRANT SET CONTAINER TO C##CDC CONTAINER=ALL;"
        )),
        "{failures:?}"
    );
    assert!(
        failures.contains(&(
            "privilege LOGMINING",
            "GRANT LOGMINING TO C##CDC CONTAINER=ALL;"
        )),
        "{failures:?}"
    );
    assert!(
        failures.contains(&(
            "table APP.MISSING",
            "ALTER SESSION SET CONTAINER = ORCLPDB1; GRANT SELECT ON APP.MISSING TO C##CDC;"
        )),
        "{failures:?}"
    );
    // Without a PDB, neither the privilege nor the container clause.
    let report = run(
        &mut simulator("{\"revoke\":\"LOGMINING\"}\n"),
        &request(&["ORDERS"]),
    );
    assert_eq!(
        failing(&report),
        [("privilege LOGMINING", "GRANT LOGMINING TO C##CDC;")]
    );
}

/// EXECUTE on DBMS_LOGMNR granted directly serves instead of EXECUTE_CATALOG_ROLE; the flush
/// table's quota names the user's default tablespace.
#[test]
fn a_direct_execute_grant_on_dbms_logmnr_passes_and_the_quota_names_the_tablespace() {
    let mut sim = simulator(
        "{\"revoke\":\"EXECUTE_CATALOG_ROLE\"}\n{\"grant\":\"EXECUTE ON SYS.DBMS_LOGMNR\"}\n",
    );
    let report = run(&mut sim, &request(&["ORDERS"]));
    assert!(report.passed(), "{report}");
    let mut sim = simulator("{\"revoke\":\"EXECUTE_CATALOG_ROLE\"}\n");
    let report = run(&mut sim, &request(&["ORDERS"]));
    assert_eq!(
        failing(&report),
        [(
            "role EXECUTE_CATALOG_ROLE",
            "GRANT EXECUTE_CATALOG_ROLE TO C##CDC;"
        )]
    );
    let fix = connection_failed(&SourceError::PdbNotOpen {
        pdb: "ORCLPDB1".to_owned(),
    });
    assert_eq!(
        failing(&fix),
        [(
            "connection",
            "ALTER PLUGGABLE DATABASE ORCLPDB1 OPEN; ALTER PLUGGABLE DATABASE ORCLPDB1 SAVE STATE;"
        )]
    );
}

#[test]
fn the_flush_table_fix_names_the_default_tablespace() {
    let mut wanted = request(&[]);
    assert_eq!(
        flush_table_fix(&wanted, Some("CDC_DATA".to_owned())),
        "GRANT CREATE TABLE TO C##CDC; ALTER USER C##CDC QUOTA 1M ON CDC_DATA;"
    );
    wanted.pdb = Some("ORCLPDB1".to_owned());
    assert_eq!(
        flush_table_fix(&wanted, None),
        "GRANT CREATE TABLE TO C##CDC CONTAINER=ALL; ALTER SESSION SET CONTAINER = ORCLPDB1; \
         ALTER USER C##CDC QUOTA 1M ON USERS;"
    );
}

/// A connection LogMiner can never run on (a PDB service before 21c) is answered with a report
/// naming the fix, like an unreachable database, so doctor says it before the capture starts;
/// other untyped errors still end doctor.
#[test]
fn a_pdb_service_before_21c_is_reported_with_its_fix() {
    let refused = SourceError::MiningInPdbUnsupported {
        version: "19.0.0.0.0".to_owned(),
        container: "ORCLPDB1".to_owned(),
    };
    assert!(reported_at_connect(&refused));
    let report = connection_failed(&refused);
    assert_eq!(
        failing(&report),
        [(
            "connection",
            "connect to the CDB root's service (CDB$ROOT, not the PDB's service) as a common \
             user (C##...) and set spec.database.pdb: ORCLPDB1; or upgrade to 21c"
        )]
    );
    assert_eq!(report.stop().map(|stop| stop.code.code()), Some("CDC-1002"));
    let other = SourceError::Malformed {
        what: "V$DATABASE".to_owned(),
        message: "no row".to_owned(),
    };
    assert!(!reported_at_connect(&other));
}

/// The probe through the real client: a healthy model passes it; an answer changed on purpose
/// (a column another release names differently, an id in another format) is a failed check
/// naming the statement and asking for a report, and the report is the CDC-1002 stop.
#[test]
fn the_first_contact_probe_reads_every_answer_with_the_capture_s_own_mapping() {
    use crate::simulator::sql::{Datum, SimulatorPool};
    use crate::source::oracle::{ConnectOptions, OracleClient};
    let open = "{\"tx\":\"open\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":1}}\n";
    let client = |pool: SimulatorPool| {
        let options = ConnectOptions {
            username: "REDOLINE".to_owned(),
            password: String::new(),
            connect_string: "simulator".to_owned(),
            max_connections: 4,
            statement_timeout: None,
            pdb: None,
            flush_table: "LOG_MINING_FLUSH".to_owned(),
        };
        OracleClient::over(pool, options).unwrap()
    };
    let probe = |report: &Report| -> Vec<String> {
        report
            .checks
            .iter()
            .filter(|check| check.name.starts_with("first-contact probe"))
            .map(|check| format!("{} {} | {}", check.ok, check.name, check.message))
            .collect()
    };

    let healthy = run(
        &mut client(SimulatorPool::new(simulator(open))),
        &request(&["ORDERS"]),
    );
    assert!(healthy.passed(), "{healthy}");
    assert_eq!(probe(&healthy).len(), 1);

    // Another release's name for a V$THREAD column.
    let renamed = SimulatorPool::new(simulator(open));
    renamed.alter_view("V$THREAD", |view| {
        for column in &mut view.columns {
            if column == "LAST_REDO_CHANGE#" {
                *column = "LAST_REDO_SCN".to_owned();
            }
        }
    });
    let report = run(&mut client(renamed), &request(&["ORDERS"]));
    let found = probe(&report);
    assert!(
        found.iter().any(
            |line| line.starts_with("false first-contact probe: redo threads")
                && line.contains(sql::THREADS)
                && line.contains("ORA-00904")
        ),
        "{found:?}"
    );
    assert_eq!(
        report.stop().map(|stop| stop.code),
        Some(redoline_crds::StopCode::PrerequisitesNotMet)
    );

    // The slot of an open transaction in hex, as RAWTOHEX would write it.
    let hex = SimulatorPool::new(simulator(open));
    hex.alter_view("GV$TRANSACTION", |view| {
        let slot = view.columns.iter().position(|c| c == "XIDSLOT").unwrap();
        for row in &mut view.rows {
            row[slot] = Datum::text("0A00");
        }
    });
    let report = run(&mut client(hex), &request(&["ORDERS"]));
    let failed: Vec<String> = report
        .failures()
        .map(|check| {
            format!(
                "{} | {} | {}",
                check.name,
                check.message,
                check.fix.as_deref().unwrap_or_default()
            )
        })
        .collect();
    assert!(
        failed.iter().any(|line| line.contains("GV$TRANSACTION")
            && line.contains("0A00")
            && line.contains("report this check's message")),
        "{failed:?}"
    );
}

#[test]
fn a_column_of_a_type_the_capture_cannot_decode_is_reported_with_its_exclusion() {
    let shapes = r#"{"table":"APP.SHAPES","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"SHAPE","type":"MDSYS.SDO_GEOMETRY"},{"name":"DOC","type":"JSON"}],"logging":"all"}
"#;
    let report = run(&mut simulator(shapes), &request(&["ORDERS", "SHAPES"]));
    let failures = failing(&report);
    assert_eq!(failures.len(), 1, "{report}");
    let (name, fix) = failures[0];
    assert_eq!(name, "column types of APP.SHAPES");
    assert!(
        fix.contains(r"'APP\.SHAPES\.SHAPE'") && fix.contains("spec.filters.columnExcludeList"),
        "{fix}"
    );
    // With the column excluded the table passes; JSON is a decoded type.
    let mut excluded = request(&["ORDERS", "SHAPES"]);
    excluded.filters = Filters::new(
        &redoline_crds::v1alpha1::FiltersSpec {
            column_exclude_list: vec![r"APP\.SHAPES\.SHAPE".to_owned()],
            ..Default::default()
        },
        &redoline_crds::v1alpha1::ColumnsSpec::default(),
    )
    .unwrap();
    let report = run(&mut simulator(shapes), &excluded);
    assert!(report.passed(), "{report}");
}

/// The tables the filter lists choose are checked like those `spec.tables` names.
#[test]
fn the_tables_the_filter_lists_choose_are_checked() {
    use redoline_crds::v1alpha1::{ColumnsSpec, FiltersSpec};
    let spec = FiltersSpec {
        schema_include_list: vec!["APP".to_owned()],
        ..FiltersSpec::default()
    };
    let chosen = DoctorRequest {
        filters: Filters::new(&spec, &ColumnsSpec::default()).unwrap(),
        ..request(&[])
    };
    let report = run(
        &mut simulator("{\"table_logging\":\"APP.NOKEY\",\"logging\":\"none\"}\n"),
        &chosen,
    );
    assert_eq!(
        failing(&report),
        [(
            "table APP.NOKEY",
            "ALTER TABLE APP.NOKEY ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;"
        )],
        "{report}"
    );
    assert!(
        report
            .checks
            .iter()
            .any(|c| c.name == "table APP.ORDERS" && c.ok),
        "{report}"
    );
}

/// A table keyed by a unique index: primary-key logging logs it when it is the table's only
/// unique index on NOT NULL columns; with two, Oracle logs one it does not name.
#[test]
fn a_unique_key_is_logged_by_primary_key_logging_when_it_is_the_only_one() {
    let table = |logging: &str, unique: &str| {
        format!(
            "{{\"table\":\"APP.U\",\"columns\":[{{\"name\":\"A\",\"type\":\"NUMBER(4)\",\"nullable\":false}},{{\"name\":\"B\",\"type\":\"NUMBER(4)\",\"nullable\":false}}],\"unique\":[{unique}],\"logging\":\"{logging}\"}}\n"
        )
    };
    let one = r#"{"name":"UK_A","columns":["A"]}"#;
    let two = r#"{"name":"UK_A","columns":["A"]},{"name":"UK_B","columns":["B"]}"#;
    let check = |logging: &str, unique: &str| {
        let report = run(&mut simulator(&table(logging, unique)), &request(&["U"]));
        let check = report
            .checks
            .iter()
            .find(|c| c.name == "table APP.U")
            .cloned();
        check.unwrap()
    };
    assert!(check("pk", one).ok);
    assert!(check("all", two).ok);
    let unlogged = check("none", one);
    assert_eq!(
        unlogged.fix.as_deref(),
        Some("ALTER TABLE APP.U ADD SUPPLEMENTAL LOG DATA (PRIMARY KEY) COLUMNS;")
    );
    assert!(unlogged.message.contains("UK_A"), "{}", unlogged.message);
    let ambiguous = check("pk", two);
    assert!(!ambiguous.ok);
    assert_eq!(
        ambiguous.fix.as_deref(),
        Some("ALTER TABLE APP.U ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS;")
    );
}

/// On RAC the flush must reach every instance through a session of its own there: doctor fails
/// the "RAC flush" check with the fix when it cannot (too few connections, a connect string
/// that cannot name an instance), and passes it when it can.
#[test]
fn a_rac_flush_that_cannot_reach_every_instance_is_reported_with_its_fix() {
    use crate::simulator::sql::SimulatorPool;
    use crate::source::oracle::{ConnectOptions, OracleClient};
    let two_instances = "{\"thread\":2}\n\
        {\"tx\":\"b\",\"insert\":\"APP.ORDERS\",\"values\":{\"ID\":1}}\n\
        {\"tx\":\"b\",\"commit\":true}\n";
    let report = |max_connections: u32, connect_string: &str| {
        let options = ConnectOptions {
            username: "REDOLINE".to_owned(),
            password: String::new(),
            connect_string: connect_string.to_owned(),
            max_connections,
            statement_timeout: None,
            pdb: None,
            flush_table: "LOG_MINING_FLUSH".to_owned(),
        };
        let pool = SimulatorPool::new(simulator(two_instances));
        run(
            &mut OracleClient::over(pool, options).unwrap(),
            &request(&["ORDERS"]),
        )
    };
    let rac_flush = |report: &Report| {
        report
            .checks
            .iter()
            .find(|check| check.name == "RAC flush")
            .map(|check| check.fix.clone().unwrap_or_default())
    };
    let tight = report(2, "simulator:1521/SIMULATOR");
    assert_eq!(
        rac_flush(&tight).as_deref(),
        Some("set spec.database.maxConnections to at least 4"),
        "{tight}"
    );
    let alias = report(4, "ORCL_HIGH");
    assert!(
        rac_flush(&alias).is_some_and(|fix| fix.contains("serviceName")),
        "{alias}"
    );
    let roomy = report(4, "simulator:1521/SIMULATOR");
    assert_eq!(rac_flush(&roomy), None, "{roomy}");
    assert!(roomy.passed(), "{roomy}");
}

/// The character sets and DBTIMEZONE are shown; a set without an internal-format decoder is
/// named but fails nothing, since only rows LogMiner writes by object number need it.
#[test]
fn the_character_sets_are_shown_and_an_undecodable_one_is_named_without_failing() {
    let shown = |extra: &str| -> (bool, String) {
        let report = run(&mut simulator(extra), &request(&["ORDERS"]));
        let check = report
            .checks
            .iter()
            .find(|c| c.name == "character sets")
            .expect("a character set check");
        (check.ok, check.message.clone())
    };
    let (ok, message) = shown("");
    assert!(ok);
    assert_eq!(
        message,
        "NLS_CHARACTERSET AL32UTF8, NLS_NCHAR_CHARACTERSET AL16UTF16, DBTIMEZONE +00:00"
    );
    let (ok, message) = shown("{\"database\":{\"character_set\":\"JA16SJIS\"}}\n");
    assert!(ok, "{message}");
    assert!(
        message.contains("JA16SJIS") && message.contains("object number"),
        "{message}"
    );
    // A view the user may not read is a failed check with the grant that fixes it.
    let report = run(
        &mut simulator("{\"database\":{\"ungranted_views\":[\"NLS_DATABASE_PARAMETERS\"]}}\n"),
        &request(&["ORDERS"]),
    );
    assert!(
        failing(&report)
            .iter()
            .any(|(name, fix)| *name == "character sets"
                && fix.contains("NLS_DATABASE_PARAMETERS")),
        "{report}"
    );
}

/// With snapshots, the extents a chunk plan is made from must be visible: a user without
/// DBA_EXTENTS fails the check with the grant that fixes it; without snapshots it is not made.
#[test]
fn snapshots_need_the_table_extents() {
    let with_snapshots = DoctorRequest {
        snapshots: true,
        ..request(&["ORDERS"])
    };
    let report = run(&mut simulator(""), &with_snapshots);
    assert!(
        report
            .checks
            .iter()
            .any(|check| check.name == "table extents visible" && check.ok),
        "{report}"
    );
    let hidden = "{\"database\":{\"ungranted_views\":[\"DBA_EXTENTS\"]}}\n";
    let report = run(&mut simulator(hidden), &with_snapshots);
    assert!(
        failing(&report)
            .iter()
            .any(|(name, fix)| *name == "table extents visible"
                && fix.contains("GRANT SELECT ON SYS.DBA_EXTENTS")),
        "{report}"
    );
    let report = run(&mut simulator(hidden), &request(&["ORDERS"]));
    assert!(
        !report
            .checks
            .iter()
            .any(|check| check.name == "table extents visible"),
        "{report}"
    );
}

/// A wallet the client would not use is doctor's one finding, in the termination message's
/// shape (CDC-1002, `details.checks`), naming the file and the change; a usable one is a passing
/// check naming what the client reads.
#[test]
fn the_wallet_check_names_the_file_and_the_fix() {
    use crate::source::oracle::net_config::{self, NetConfigDir, TNS_ADMIN};
    let dir = tempfile::tempdir().unwrap();
    let mount = dir.path().display().to_string();
    std::fs::write(dir.path().join("cwallet.sso"), "auto-login").unwrap();
    std::fs::write(
        dir.path().join("sqlnet.ora"),
        "WALLET_LOCATION = (SOURCE = (METHOD = file) (METHOD_DATA = (DIRECTORY=\"?/network/admin\")))\n",
    )
    .unwrap();
    let env = |name: &str| (name == TNS_ADMIN).then(|| mount.clone());
    let checked = |dir: &tempfile::TempDir| {
        let listing = NetConfigDir::read(dir.path()).unwrap();
        net_config::check(dir.path(), &env, &listing, "tcps://db:2484/sales")
    };
    let report = wallet_failed(&checked(&dir).unwrap_err());
    let stop = report.stop().unwrap();
    assert_eq!(stop.code.code(), "CDC-1002");
    let check = &stop.details["checks"][0];
    assert_eq!(check["name"], "wallet");
    let message = check["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("WALLET_LOCATION in {mount}/sqlnet.ora")),
        "{message}"
    );
    let fix = check["fix"].as_str().unwrap();
    assert!(fix.contains(&format!("(DIRECTORY = \"{mount}\")")), "{fix}");
    assert!(report.to_string().contains("FAIL   wallet"), "{report}");

    std::fs::write(dir.path().join("sqlnet.ora"), "SSL_SERVER_DN_MATCH=yes\n").unwrap();
    let used = wallet_used(&checked(&dir).unwrap());
    assert!(used.ok);
    assert_eq!(
        used.message,
        format!(
            "TNS_ADMIN={mount} (cwallet.sso, sqlnet.ora); the wallet cwallet.sso there, found \
             through TNS_ADMIN"
        )
    );
}

/// The connect refusal of a PDB service before 21c (source/oracle/tests.rs) is reported with the
/// fix naming the CDB root and spec.database.pdb, before the capture starts.
#[test]
fn a_pdb_service_before_21c_is_reported_with_the_root_service_fix() {
    let error = SourceError::MiningInPdbUnsupported {
        version: "19.0.0.0.0".to_owned(),
        container: "ORCLPDB1".to_owned(),
    };
    let report = connection_failed(&error);
    assert!(!report.passed());
    let fix = report.checks[0].fix.as_deref().unwrap_or_default();
    assert!(
        fix.contains("CDB$ROOT") && fix.contains("spec.database.pdb: ORCLPDB1"),
        "{fix}"
    );
}
