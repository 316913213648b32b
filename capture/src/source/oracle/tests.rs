use crate::source::RedoLogKind;

use super::*;

#[test]
fn mining_mode_follows_release_and_container() {
    assert_eq!(
        mining_mode("19.0.0.0.0", false, "ORCL", None).unwrap(),
        MiningMode::Classic { container: None }
    );
    assert_eq!(
        mining_mode("19.0.0.0.0", true, "CDB$ROOT", Some("PDB1")).unwrap(),
        MiningMode::Classic {
            container: Some("PDB1".to_owned())
        }
    );
    assert_eq!(
        mining_mode("21.0.0.0.0", true, "PDB1", None).unwrap(),
        MiningMode::PerPdb
    );
    let refused = mining_mode("19.0.0.0.0", true, "PDB1", None).unwrap_err();
    assert!(refused.to_string().contains("CDB$ROOT"), "{refused}");
    assert!(mining_mode("nineteen", true, "PDB1", None).is_err());
}

/// Options for a client test: capture user C##CDC, flush table LOG_MINING_FLUSH.
fn options(connect_string: &str, pdb: Option<&str>) -> ConnectOptions {
    ConnectOptions {
        username: "C##CDC".to_owned(),
        password: "x".to_owned(),
        connect_string: connect_string.to_owned(),
        max_connections: 2,
        statement_timeout: Some(Duration::from_secs(2)),
        pdb: pdb.map(str::to_owned),
        flush_table: "LOG_MINING_FLUSH".to_owned(),
    }
}

#[test]
fn connect_strings_and_secrets() {
    assert_eq!(
        ez_connect("db.example", 1521, "ORCLPDB1"),
        "db.example:1521/ORCLPDB1"
    );
    assert_eq!(ez_connect("fd00::1", 1521, "X"), "[fd00::1]:1521/X");
    let options = ConnectOptions {
        password: "s3cret-value".to_owned(),
        ..options("db:1521/ORCL", None)
    };
    assert!(!format!("{options:?}").contains("s3cret"));
}

/// Without Oracle Instant Client on the machine, connecting is the typed stop CDC-2004,
/// never a panic. (Where a client library is installed the connect fails differently, on
/// the unreachable address; both are typed.)
#[test]
fn connecting_without_a_client_library_or_server_is_typed() {
    let error = OracleClient::connect(options("127.0.0.1:9/NOPE", None)).unwrap_err();
    if std::env::var_os("ORACLE_HOME").is_none() && !client_library_present() {
        assert!(
            matches!(error, SourceError::ClientMissing { .. }),
            "{error}"
        );
        assert_eq!(error.stop().unwrap().code.code(), "CDC-2004");
    }
}

fn client_library_present() -> bool {
    std::env::var("LD_LIBRARY_PATH")
        .unwrap_or_default()
        .split(':')
        .chain(["/usr/lib", "/usr/lib64", "/usr/lib/x86_64-linux-gnu"])
        .any(|dir| std::path::Path::new(dir).join("libclntsh.so").exists())
}

mod over_the_model {
    use super::super::fake::{FakeColumn, FakeContainer, FakeDatabase, FakeOracle, FakeTable};
    use super::*;
    use crate::source::{DatabaseCatalog, FlashbackReader, RedoMiner};
    use crate::value::Value;

    fn orders() -> FakeTable {
        FakeTable {
            owner: "APP",
            name: "ORDERS",
            columns: vec![
                FakeColumn {
                    name: "ID",
                    data_type: "NUMBER",
                    precision: Some(10),
                    scale: Some(0),
                },
                FakeColumn {
                    name: "AMOUNT",
                    data_type: "NUMBER",
                    precision: Some(10),
                    scale: Some(2),
                },
            ],
            key: vec!["ID"],
            rows: vec![vec![Some("1".to_owned()), Some("12.5".to_owned())]],
            index_organized: false,
        }
    }

    fn pdb() -> FakeContainer {
        let mut pdb = FakeContainer::new("ORCLPDB1", 3);
        pdb.tables = vec![orders()];
        pdb.flush_rows = Some(1);
        pdb
    }

    fn options(pdb: Option<&str>) -> ConnectOptions {
        super::options("db:1521/ORCLCDB", pdb)
    }

    fn window() -> MiningWindow {
        MiningWindow {
            start_scn: 4_000,
            end_scn: 4_500,
            logs: vec![RedoLog {
                name: "/u01/oradata/ORCL/redo01.log".to_owned(),
                thread: 1,
                sequence: 7,
                first_scn: 3_000,
                next_scn: None,
                kind: RedoLogKind::Online,
                completion: None,
            }],
            objects: Vec::new(),
            tables: vec![("APP".to_owned(), "ORDERS".to_owned())],
            pdb: Some("ORCLPDB1".to_owned()),
            with_sql_undo: false,
        }
    }

    fn mine(client: &mut OracleClient<FakeOracle>) {
        client.start_mining(&window()).unwrap();
        client
            .stream_rows(&mut |_| ControlFlow::Continue(()))
            .unwrap();
        client.end_mining().unwrap();
    }

    /// The host's offset is read from `SYSTIMESTAMP` as `TZH:TZM`, west of UTC and with half
    /// hours too; anything else is a malformed answer naming the column, never a silent UTC.
    #[test]
    fn the_database_hosts_utc_offset_is_read_from_systimestamp() {
        let oracle = FakeOracle::new(FakeDatabase::non_cdb(vec![orders()]));
        let mut client =
            OracleClient::over(oracle.clone(), super::options("db:1521/ORCL", None)).unwrap();
        for (answer, seconds) in [("+00:00", 0), ("+02:00", 7_200), ("-05:30", -19_800)] {
            oracle.0.lock().unwrap().host_utc_offset = answer;
            let offset = client.database_utc_offset().unwrap();
            assert_eq!(offset.seconds(), seconds, "{answer}");
        }
        for answer in ["", "01:00", "+1:00", "+15:00", "+01:60", "UTC"] {
            oracle.0.lock().unwrap().host_utc_offset = answer;
            let error = client.database_utc_offset().unwrap_err();
            assert!(
                error.to_string().contains("SYSTIMESTAMP"),
                "{answer}: {error}"
            );
        }
    }

    /// Connected to CDB$ROOT with a PDB named, the PDB's dictionary, data, flush table and
    /// heartbeat table are reached in the PDB, and LogMiner runs in the root, however the
    /// pooled sessions were used before.
    #[test]
    fn a_root_connection_works_on_pdb_objects_in_the_pdb_and_mines_in_the_root() {
        let oracle = FakeOracle::new(FakeDatabase::cdb(pdb()));
        let mut client = OracleClient::over(oracle.clone(), options(Some("ORCLPDB1"))).unwrap();
        assert_eq!(
            client.topology().mode,
            MiningMode::Classic {
                container: Some("ORCLPDB1".to_owned())
            }
        );
        for _ in 0..3 {
            let table = client.table("APP", "ORDERS").unwrap();
            assert_eq!(table.schema.key_indexes(), [0]);
            assert_eq!(
                client.list_tables().unwrap(),
                [("APP".to_owned(), "ORDERS".to_owned())]
            );
            client.flush_redo().unwrap();
            client
                .heartbeat_action("UPDATE APP.ORDERS SET AMOUNT = AMOUNT")
                .unwrap();
            mine(&mut client);
            let rows = client
                .flashback_batch(&table.schema, 4_000, None, None, 10)
                .unwrap();
            assert_eq!(rows.len(), 1);
            assert!(client.database().unwrap().cdb);
            assert_eq!(
                client.pdb_incarnation("ORCLPDB1").unwrap().unwrap().con_id,
                3
            );
        }
        let state = oracle.state();
        let pdb_only = BTreeSet::from(["ORCLPDB1".to_owned()]);
        let root_only = BTreeSet::from([ROOT_CONTAINER.to_owned()]);
        assert_eq!(state.containers_of(sql::TABLE_COLUMNS), pdb_only);
        assert_eq!(state.containers_of("SELECT ROWIDTOCHAR(ROWID)"), pdb_only);
        assert_eq!(state.containers_of("UPDATE LOG_MINING_FLUSH"), pdb_only);
        assert_eq!(state.containers_of("UPDATE APP.ORDERS"), pdb_only);
        assert_eq!(state.containers_of(sql::START_LOGMNR), root_only);
        assert_eq!(state.containers_of("SELECT SCN, START_SCN"), root_only);
        assert_eq!(state.containers_of(sql::PDB_INCARNATION), root_only);
        assert_eq!(state.redo_writing_flushes.len(), 3);
        // Two sessions, each set up once: the main one in the root, one pooled in the PDB.
        let switches: Vec<&str> = state
            .issued
            .iter()
            .filter(|issued| issued.sql.starts_with("ALTER SESSION SET CONTAINER"))
            .map(|issued| issued.sql.as_str())
            .collect();
        assert_eq!(
            switches,
            [
                "ALTER SESSION SET CONTAINER = CDB$ROOT",
                "ALTER SESSION SET CONTAINER = ORCLPDB1"
            ]
        );
    }

    #[test]
    fn a_pdb_name_that_matches_no_container_is_a_configuration_stop_listing_the_pdbs() {
        let oracle = FakeOracle::new(FakeDatabase::cdb(pdb()));
        let error = OracleClient::over(oracle, options(Some("ORCLPDB2"))).unwrap_err();
        assert!(matches!(error, SourceError::NoSuchPdb { .. }), "{error}");
        let stop = error.stop().unwrap();
        assert_eq!(stop.code.code(), "CDC-1001");
        assert!(
            stop.message.contains("spec.database.pdb"),
            "{}",
            stop.message
        );
        assert!(stop.message.contains("ORCLPDB1"), "{}", stop.message);
        assert!(!stop.message.contains("PDB$SEED"), "{}", stop.message);
    }

    #[test]
    fn a_mounted_pdb_is_waited_for() {
        let mut mounted = pdb();
        mounted.open_mode = "MOUNTED";
        let oracle = FakeOracle::new(FakeDatabase::cdb(mounted));
        let error = OracleClient::over(oracle, options(Some("ORCLPDB1"))).unwrap_err();
        assert!(error.is_transient(), "{error}");
        assert_eq!(
            error,
            SourceError::PdbNotOpen {
                pdb: "ORCLPDB1".to_owned()
            }
        );
    }

    #[test]
    fn a_missing_set_container_grant_is_the_prerequisite_stop_naming_the_grant() {
        let mut database = FakeDatabase::cdb(pdb());
        database.privileges.remove("SET CONTAINER");
        // Refused at connect, where the main session is set up for the root.
        let error =
            OracleClient::over(FakeOracle::new(database), options(Some("ORCLPDB1"))).unwrap_err();
        let stop = error.stop().unwrap();
        assert_eq!(stop.code.code(), "CDC-1002");
        assert!(
            stop.message
                .contains("GRANT SET CONTAINER TO C##CDC CONTAINER=ALL;"),
            "{}",
            stop.message
        );
    }

    /// The flush needs exactly one row: none makes the UPDATE write no redo, several are
    /// repaired to one, a missing table is created with its row.
    #[test]
    fn the_flush_table_is_given_exactly_one_row() {
        for (start, redo_on_first) in [(None, false), (Some(0), false), (Some(3), true)] {
            let mut container = pdb();
            container.flush_rows = start;
            let oracle = FakeOracle::new(FakeDatabase::cdb(container));
            let mut client = OracleClient::over(oracle.clone(), options(Some("ORCLPDB1"))).unwrap();
            client.flush_redo().unwrap();
            assert_eq!(
                oracle.state().container("ORCLPDB1").unwrap().flush_rows,
                Some(1),
                "{start:?}"
            );
            assert_eq!(
                !oracle.state().redo_writing_flushes.is_empty(),
                redo_on_first
            );
            client.flush_redo().unwrap();
            let state = oracle.state();
            assert_eq!(
                state.redo_writing_flushes.last(),
                Some(&("ORCLPDB1".to_owned(), 1)),
                "the second flush writes redo: {start:?}"
            );
        }
    }

    /// A flush table the capture user may not create (no CREATE TABLE) or fill (no quota on
    /// its default tablespace: CREATE works with deferred segment creation, the INSERT fails)
    /// is the CDC-1002 prerequisites stop naming the statement that fixes it, in the PDB for a
    /// common user; before, both were untyped errors and the capture restarted forever.
    #[test]
    fn a_flush_table_that_cannot_be_created_or_filled_names_the_grant_or_quota() {
        let missing_table = || {
            let mut container = pdb();
            container.flush_rows = None;
            FakeDatabase::cdb(container)
        };
        let mut no_privilege = missing_table();
        no_privilege.privileges.remove("CREATE TABLE");
        let mut no_quota = missing_table();
        no_quota.tablespace_quota = false;
        for (database, fix) in [
            (no_privilege, "GRANT CREATE TABLE TO C##CDC CONTAINER=ALL;"),
            (
                no_quota,
                "ALTER SESSION SET CONTAINER = ORCLPDB1; ALTER USER C##CDC QUOTA 1M ON USERS;",
            ),
        ] {
            let oracle = FakeOracle::new(database);
            let mut client = OracleClient::over(oracle, options(Some("ORCLPDB1"))).unwrap();
            let error = client.flush_redo().unwrap_err();
            assert!(!error.is_transient(), "{error}");
            let stop = error.stop().expect("a typed stop, not a restart");
            assert_eq!(stop.code.code(), "CDC-1002", "{}", stop.message);
            assert_eq!(stop.details["fix"], fix, "{}", stop.message);
            assert!(
                stop.message.contains("LOG_MINING_FLUSH"),
                "{}",
                stop.message
            );
        }
    }

    /// A LONG RAW column is snapshotted: selected bare and fetched as bytes, since RAWTOHEX of a
    /// LONG RAW is ORA-00997 (illegal use of LONG datatype), which stopped the snapshot of such a
    /// table before. A LONG column is selected bare too and read as text.
    #[test]
    fn long_raw_and_long_columns_are_snapshotted() {
        let number = |name| FakeColumn {
            name,
            data_type: "NUMBER",
            precision: Some(10),
            scale: Some(0),
        };
        let long = |name, data_type| FakeColumn {
            name,
            data_type,
            precision: None,
            scale: None,
        };
        // A table holds at most one LONG or LONG RAW column: one table for each.
        let scans = FakeTable {
            owner: "APP",
            name: "SCANS",
            columns: vec![number("ID"), long("IMAGE", "LONG RAW")],
            key: vec!["ID"],
            rows: vec![
                vec![Some("1".to_owned()), Some("CAFE01".to_owned())],
                vec![Some("2".to_owned()), None],
            ],
            index_organized: false,
        };
        let notes = FakeTable {
            owner: "APP",
            name: "NOTES",
            columns: vec![number("ID"), long("BODY", "LONG")],
            key: vec!["ID"],
            rows: vec![vec![Some("1".to_owned()), Some("a long text".to_owned())]],
            index_organized: false,
        };
        let mut container = pdb();
        container.tables.extend([scans, notes]);
        let oracle = FakeOracle::new(FakeDatabase::cdb(container));
        let mut client = OracleClient::over(oracle, options(Some("ORCLPDB1"))).unwrap();
        let scans = client.table("APP", "SCANS").unwrap().schema;
        let rows = client
            .flashback_batch(&scans, 4_000, None, None, 10)
            .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0].values.get(1),
            Some(&Value::Bytes(vec![0xCA, 0xFE, 0x01]))
        );
        assert_eq!(rows[1].values.get(1), Some(&Value::Null));
        let notes = client.table("APP", "NOTES").unwrap().schema;
        let rows = client
            .flashback_batch(&notes, 4_000, None, None, 10)
            .unwrap();
        assert_eq!(
            rows[0].values.get(1),
            Some(&Value::Text("a long text".to_owned()))
        );
    }

    /// A client whose locale writes decimals with a comma still reads `12.5`: every session,
    /// not only the mining one, gets the fixed NLS settings.
    #[test]
    fn flashback_values_do_not_depend_on_the_clients_locale() {
        let mut database = FakeDatabase::cdb(pdb());
        database.decimal_comma_client = true;
        let mut client =
            OracleClient::over(FakeOracle::new(database), options(Some("ORCLPDB1"))).unwrap();
        let table = client.table("APP", "ORDERS").unwrap();
        let rows = client
            .flashback_batch(&table.schema, 4_000, None, None, 10)
            .unwrap();
        let amount = rows[0].values.get(1).map(Value::to_string);
        assert!(
            amount
                .as_deref()
                .is_some_and(|shown| shown.contains("12.5")),
            "{amount:?}"
        );
    }

    #[test]
    fn a_non_cdb_never_switches_containers() {
        let oracle = FakeOracle::new(FakeDatabase::non_cdb(vec![orders()]));
        let mut client = OracleClient::over(oracle.clone(), options(None)).unwrap();
        client.table("APP", "ORDERS").unwrap();
        client.flush_redo().unwrap();
        mine(&mut client);
        assert!(
            !oracle
                .state()
                .issued
                .iter()
                .any(|issued| issued.sql.contains("SET CONTAINER"))
        );
    }

    #[test]
    fn a_pdb_connection_on_21c_must_not_name_another_pdb() {
        let mut database = FakeDatabase::cdb(pdb());
        database.version = "21.0.0.0.0";
        database.connect_container = "ORCLPDB1".to_owned();
        let oracle = FakeOracle::new(database);
        let error = OracleClient::over(oracle.clone(), options(Some("SALES"))).unwrap_err();
        assert_eq!(error.stop().unwrap().code.code(), "CDC-1001");
        let mut client = OracleClient::over(oracle, options(Some("ORCLPDB1"))).unwrap();
        assert_eq!(client.topology().mode, MiningMode::PerPdb);
        client.table("APP", "ORDERS").unwrap();
        mine(&mut client);
    }

    /// A 19c service that connects to a PDB can never mine (ORA-65040): a configuration stop
    /// naming the CDB root's service and spec.database.pdb, found at connect from the release
    /// (LogMiner is not even tried), and doctor's report names the same fix before the capture
    /// starts (doctor/tests.rs). Before, it was an untyped error: the process failed and
    /// restarted forever.
    #[test]
    fn a_pdb_service_before_21c_is_a_configuration_stop_naming_the_root_service() {
        let mut database = FakeDatabase::cdb(pdb());
        database.connect_container = "ORCLPDB1".to_owned();
        let oracle = FakeOracle::new(database);
        let error = OracleClient::over(oracle.clone(), options(None)).unwrap_err();
        let stop = error.stop().expect("a typed stop, not a restart");
        assert_eq!(stop.code.code(), "CDC-1001");
        assert!(
            stop.message.contains("CDB$ROOT")
                && stop.message.contains("spec.database.pdb: ORCLPDB1")
                && stop.message.contains("19.0.0.0.0"),
            "{}",
            stop.message
        );
        assert!(
            !(oracle.state().issued.iter()).any(|issued| issued.sql.contains("DBMS_LOGMNR")),
            "refused from the release, before any LogMiner call"
        );
        assert!(
            matches!(&error, SourceError::MiningInPdbUnsupported { version, container }
                if version == "19.0.0.0.0" && container == "ORCLPDB1"),
            "{error:?}"
        );
    }

    /// Should START_LOGMNR itself refuse the container (ORA-65040: a release the connect-time
    /// check let through), the refusal is the same configuration stop, not a restart.
    #[test]
    fn logminer_refused_inside_a_pdb_at_start_is_the_same_stop() {
        let mut database = FakeDatabase::cdb(pdb());
        database.version = "21.0.0.0.0";
        database.connect_container = "ORCLPDB1".to_owned();
        let oracle = FakeOracle::new(database);
        let mut client = OracleClient::over(oracle.clone(), options(None)).unwrap();
        oracle.state().version = "19.0.0.0.0";
        let error = client.start_mining(&window()).unwrap_err();
        assert!(!error.is_transient(), "{error}");
        let stop = error.stop().expect("a typed stop, not a restart");
        assert_eq!(stop.code.code(), "CDC-1001");
        assert!(
            stop.message.contains("spec.database.pdb: ORCLPDB1"),
            "{}",
            stop.message
        );
    }

    /// What LogMiner says when the listed logs changed under it becomes a retry with a fresh
    /// listing (naming the log when one is known), never an immediate RedoMissing; the failed
    /// session is closed, not pooled with its LogMiner session.
    #[test]
    fn logs_that_changed_since_the_listing_are_retried_not_declared_missing() {
        let mut database = FakeDatabase::cdb(pdb());
        database.missing_logfile_starts = 1;
        database
            .unreadable_logs
            .insert("/u01/oradata/ORCL/gone.arc".to_owned());
        let oracle = FakeOracle::new(database);
        let mut client = OracleClient::over(oracle.clone(), options(Some("ORCLPDB1"))).unwrap();
        let error = client.start_mining(&window()).unwrap_err();
        assert!(
            matches!(error, SourceError::LogsChanged { log: None, .. }),
            "{error}"
        );
        assert_eq!(error.retry_cause(), Some("logs_changed"));
        let mut with_gone = window();
        with_gone.logs.insert(
            0,
            RedoLog {
                name: "/u01/oradata/ORCL/gone.arc".to_owned(),
                thread: 2,
                sequence: 5,
                first_scn: 2_000,
                next_scn: Some(3_000),
                kind: RedoLogKind::Archived,
                completion: None,
            },
        );
        match client.start_mining(&with_gone).unwrap_err() {
            SourceError::LogsChanged { log: Some(log), .. } => assert_eq!(log.thread, 2),
            other => panic!("{other}"),
        }
        // The next window starts on a fresh session and works.
        mine(&mut client);
        let state = oracle.state();
        let ended = state
            .issued
            .iter()
            .filter(|issued| issued.sql == sql::END_LOGMNR)
            .count();
        assert!(ended >= 3, "{ended}");
    }

    /// Read from the root, GV$TRANSACTION lists every container's transactions: a session left
    /// open in another PDB or the root must not hold the start position back.
    #[test]
    fn open_transactions_are_the_captured_pdbs_only() {
        let mut container = pdb();
        container.open_transactions = vec![4_200];
        let mut database = FakeDatabase::cdb(container);
        database.containers[0].open_transactions = vec![10];
        let other = FakeContainer {
            open_transactions: vec![20],
            ..FakeContainer::new("SALES", 4)
        };
        database.containers.push(other);
        let oracle = FakeOracle::new(database);
        let mut client = OracleClient::over(oracle.clone(), options(Some("ORCLPDB1"))).unwrap();
        let open = client.open_transactions().unwrap();
        assert_eq!(
            open.iter()
                .map(|t| (t.start_scn, t.con_id))
                .collect::<Vec<_>>(),
            [(4_200, Some(3))]
        );
        // Without GV$, the local view, narrowed the same way.
        let mut local = FakeDatabase::cdb(pdb());
        local.containers[2].open_transactions = vec![4_300];
        local.containers[0].open_transactions = vec![10];
        local.ungranted.insert(sql::OPEN_TRANSACTIONS_IN_CONTAINER);
        let mut client =
            OracleClient::over(FakeOracle::new(local), options(Some("ORCLPDB1"))).unwrap();
        let open = client.open_transactions().unwrap();
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].start_scn, 4_300);
        // Without a PDB named, the whole list (a non-CDB has one container anyway).
        let mut client = OracleClient::over(oracle, options(None)).unwrap();
        assert_eq!(client.open_transactions().unwrap().len(), 3);
    }

    /// A view the capture user may not read is the prerequisite stop naming the grant (for a
    /// common user, in every container), not an error met again at every restart.
    #[test]
    fn a_view_not_granted_is_the_prerequisite_stop_naming_its_grant() {
        let mut database = FakeDatabase::cdb(pdb());
        database.ungranted.insert(sql::THREADS);
        let mut client =
            OracleClient::over(FakeOracle::new(database), options(Some("ORCLPDB1"))).unwrap();
        let stop = client.threads().unwrap_err().stop().unwrap();
        assert_eq!(stop.code.code(), "CDC-1002");
        assert_eq!(
            stop.details["fix"],
            "GRANT SELECT ON V_$THREAD TO C##CDC CONTAINER=ALL;"
        );
        // A view whose absence is handled stays what it was: the GV$ fallback, the skipped
        // PDB incarnation check.
        let mut database = FakeDatabase::cdb(pdb());
        database.ungranted.insert(sql::PDB_INCARNATION);
        let mut client =
            OracleClient::over(FakeOracle::new(database), options(Some("ORCLPDB1"))).unwrap();
        assert!(
            client
                .pdb_incarnation("ORCLPDB1")
                .unwrap_err()
                .is_not_granted()
        );
    }

    /// Reads `APP.LINES` to its end in batches of `size`, resuming after each batch's last
    /// position, and gives the rows' notes in the order read.
    fn notes_in_batches(client: &mut OracleClient<FakeOracle>, size: usize) -> Vec<String> {
        let table = client.table("APP", "LINES").unwrap().schema;
        let mut notes = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let batch = client
                .flashback_batch(&table, 4_000, after.as_deref(), None, size)
                .unwrap();
            notes.extend(
                batch
                    .iter()
                    .filter_map(|row| row.values.get(0).map(Value::to_string)),
            );
            match batch.last() {
                Some(last) if batch.len() == size => after = Some(last.position.clone()),
                _ => return notes,
            }
        }
    }

    /// A client over a PDB that holds `APP.LINES` besides the usual table.
    fn client_with_lines(index_organized: bool) -> OracleClient<FakeOracle> {
        let mut pdb = pdb();
        pdb.tables.push(lines(index_organized));
        OracleClient::over(
            FakeOracle::new(FakeDatabase::cdb(pdb)),
            options(Some("ORCLPDB1")),
        )
        .unwrap()
    }

    fn lines(index_organized: bool) -> FakeTable {
        let column = |name, data_type, precision| FakeColumn {
            name,
            data_type,
            precision,
            scale: precision.map(|_| 0),
        };
        let row = |order: &str, line: &str, note: &str| {
            vec![
                Some(note.to_owned()),
                Some(order.to_owned()),
                Some(line.to_owned()),
            ]
        };
        FakeTable {
            owner: "APP",
            name: "LINES",
            columns: vec![
                column("NOTE", "VARCHAR2", None),
                column("ORDER_ID", "NUMBER", Some(10)),
                column("LINE", "VARCHAR2", None),
            ],
            key: vec!["ORDER_ID", "LINE"],
            // Stored out of key order, with keys whose text order is not their number order.
            rows: vec![
                row("10", "b", "fifth"),
                row("9", "b", "third"),
                row("10", "a", "fourth"),
                row("2", "z", "first"),
                row("9", "a", "second"),
            ],
            index_organized,
        }
    }

    /// An index-organised table is read in primary-key order, batch after batch, each row once:
    /// its logical ROWIDs cannot be resumed after (CHARTOROWID refuses them, ORA-01410), which
    /// is how the second batch of a ROWID-ordered read failed. A heap table keeps ROWID order.
    #[test]
    fn tables_are_snapshotted_in_their_read_order_across_batches() {
        let in_order = |notes: [&str; 5]| notes.map(|note| format!("{note:?}"));
        let mut iot = client_with_lines(true);
        let mut heap = client_with_lines(false);
        for size in [1, 2, 3, 5, 10] {
            assert_eq!(
                notes_in_batches(&mut iot, size),
                in_order(["first", "second", "third", "fourth", "fifth"]),
                "IOT in batches of {size}"
            );
            assert_eq!(
                notes_in_batches(&mut heap, size),
                in_order(["fifth", "third", "fourth", "first", "second"]),
                "heap table in batches of {size}"
            );
        }
        let table = iot.table("APP", "LINES").unwrap().schema;
        let first = iot.flashback_batch(&table, 4_000, None, None, 1).unwrap();
        assert_eq!(first[0].position, r#"["2","z"]"#);
        let foreign = iot.flashback_batch(&table, 4_000, Some("AAAR000000000001"), None, 1);
        assert!(
            matches!(foreign, Err(SourceError::Malformed { .. })),
            "a ROWID is not a key position: {foreign:?}"
        );
    }
}
