#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! The simulator driven from scenario files: the shipped example, scenario errors (each names
//! line and field), missing redo after an archive purge, a RESETLOGS incarnation change, the log
//! buffer and RAC checkpoint lag, an online log overwritten while mined, steps appended between windows, and
//! the catalog facts `doctor` checks.

use std::io::Cursor;
use std::ops::ControlFlow;

use redoline_capture::simulator::{ScenarioError, Simulator, SimulatorError};
use redoline_capture::source::{
    DatabaseCatalog, LogGroupType, LogMinerRow, LogMode, MinimalLogging, MiningWindow,
    OperationCode, RedoLogKind, RedoMiner, SourceError,
};

const T: &str = r#"{"table":"APP.T","columns":[{"name":"ID","type":"NUMBER(4)","key":true},{"name":"V","type":"NUMBER(4)"},{"name":"S","type":"VARCHAR2(5)"},{"name":"D","type":"DATE"}],"logging":"all"}"#;

fn from_lines(lines: &[&str]) -> Result<Simulator, SimulatorError> {
    Simulator::from_reader(Cursor::new(lines.join("\n")))
}

fn window(sim: &mut Simulator, start: u64, end: u64) -> Result<MiningWindow, SourceError> {
    Ok(MiningWindow {
        start_scn: start,
        end_scn: end,
        logs: sim.logs_covering(start)?.logs,
        objects: Vec::new(),
        tables: vec![("APP".to_owned(), "T".to_owned())],
        pdb: None,
        with_sql_undo: true,
    })
}

fn commit_steps(sim: &mut Simulator, first_id: u32, count: u32) {
    for id in first_id..first_id + count {
        sim.apply_line(&format!(
            r#"{{"tx":"t{id}","insert":"APP.T","values":{{"ID":{id},"V":1}}}}"#
        ))
        .unwrap();
        sim.apply_line(&format!(r#"{{"tx":"t{id}","commit":true}}"#))
            .unwrap();
    }
}

#[test]
fn the_shipped_orders_scenario_runs() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/orders.jsonl");
    let mut sim = Simulator::from_scenario_file(path).unwrap();
    let end = sim.current_scn().unwrap();
    sim.flush_redo().unwrap();
    let mut window = window(&mut sim, 1_000_000, end).unwrap();
    window.tables = vec![
        ("SALES".to_owned(), "ORDERS".to_owned()),
        ("SALES".to_owned(), "CUSTOMERS".to_owned()),
    ];
    let rows = sim.mined_rows(&window).unwrap();
    assert!(rows.iter().any(|r| r.operation == OperationCode::Ddl));
    assert!(rows.iter().any(|r| r.rollback));
    assert!(rows.windows(2).all(|w| w[0].scn <= w[1].scn));
    let orders = sim.committed_rows("SALES", "ORDERS").unwrap();
    assert_eq!(orders.len(), 1, "order 100 deleted, 102 rolled back");
    assert_eq!(sim.committed_rows("SALES", "CUSTOMERS").unwrap().len(), 2);
    assert!(sim.open_transaction_names().is_empty());
}

fn scenario_error(lines: &[&str]) -> ScenarioError {
    match from_lines(lines) {
        Err(SimulatorError::Scenario(error)) => error,
        other => panic!("expected a scenario error, got {other:?}"),
    }
}

#[test]
fn every_malformed_or_impossible_step_names_its_line_and_field() {
    let insert = r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":1}}"#;
    let cases: Vec<(Vec<&str>, usize, &str)> = vec![
        (vec![T, "not json"], 2, "(line)"),
        (vec![T, r#"{"bogus":1}"#], 2, "bogus"),
        (vec![T, r#"{"insert":"APP.T","values":{"ID":1}}"#], 2, "tx"),
        (
            vec![
                T,
                r#"{"tx":"a","insert":"APP.T","values":{"ID":1},"extra":1}"#,
            ],
            2,
            "extra",
        ),
        (
            vec![T, "", r#"{"tx":"a","insert":"APP.NOPE","values":{"ID":1}}"#],
            3,
            "insert",
        ),
        (
            vec![T, r#"{"tx":"a","insert":"APP.T","values":{"NOPE":1}}"#],
            2,
            "values.NOPE",
        ),
        (
            vec![T, r#"{"tx":"a","insert":"APP.T","values":{"ID":12345}}"#],
            2,
            "values.ID",
        ),
        (
            vec![
                T,
                r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":1.5}}"#,
            ],
            2,
            "values.V",
        ),
        (
            vec![
                T,
                r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"S":"toolong"}}"#,
            ],
            2,
            "values.S",
        ),
        (
            vec![
                T,
                r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"D":"yesterday"}}"#,
            ],
            2,
            "values.D",
        ),
        (
            vec![T, r#"{"tx":"a","insert":"APP.T","values":{"V":1}}"#],
            2,
            "values.ID",
        ),
        (
            vec![
                T,
                r#"{"tx":"a","update":"APP.T","where":{"ID":9},"set":{"V":2}}"#,
            ],
            2,
            "where",
        ),
        (
            vec![T, r#"{"tx":"a","delete":"APP.T","where":{"ID":9}}"#],
            2,
            "where",
        ),
        (vec![T, r#"{"tx":"a","commit":true}"#], 2, "commit"),
        (vec![T, r#"{"tx":"a","rollback":true}"#], 2, "rollback"),
        (
            vec![T, insert, r#"{"tx":"a","rollback_to":"nope"}"#],
            3,
            "rollback_to",
        ),
        (
            vec![
                T,
                insert,
                r#"{"tx":"b","update":"APP.T","where":{"ID":1},"set":{"V":2}}"#,
            ],
            3,
            "where",
        ),
        (
            vec![T, insert, r#"{"tx":"a","commit":true}"#, insert],
            4,
            "values",
        ),
        (
            vec![r#"{"table":"APP.X","columns":[{"name":"A","type":"NUMBER(99)"}]}"#],
            1,
            "columns[0].type",
        ),
        (
            vec![T, r#"{"database":{"log_mode":"SOMETIMES"}}"#],
            2,
            "database.log_mode",
        ),
        (
            vec![T, r#"{"ddl":"ALTER TABLE APP.T DROP COLUMN NOPE"}"#],
            2,
            "ddl",
        ),
        (vec![T, r#"{"revoke":"DBA"}"#], 2, "revoke"),
        (
            vec![
                T,
                r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"D":"2024-01-01T00:00:00.5"}}"#,
            ],
            2,
            "values.D",
        ),
        (
            vec![T, r#"{"tx":"a","insert":"APP.T","values":{"ID":"x"}}"#],
            2,
            "values.ID",
        ),
        (
            vec![
                T,
                insert,
                r#"{"tx":"a","update":"APP.T","where":{"ID":1},"set":{"ID":null}}"#,
            ],
            3,
            "set.ID",
        ),
    ];
    for (lines, line, field) in cases {
        let error = scenario_error(&lines);
        assert_eq!(
            (error.line, error.field.as_str()),
            (line, field),
            "{lines:?}: {error}"
        );
        assert!(
            error
                .to_string()
                .starts_with(&format!("scenario line {line}, field `{field}`"))
        );
    }
}

#[test]
fn purged_archives_make_the_window_report_missing_redo() {
    let mut sim = from_lines(&[T]).unwrap();
    commit_steps(&mut sim, 1, 3);
    let old_scn = sim.current_scn().unwrap();
    sim.apply_line(r#"{"log_switch":true}"#).unwrap();
    commit_steps(&mut sim, 10, 3);
    sim.apply_line(r#"{"log_switch":true}"#).unwrap();
    let switched_at = sim.current_scn().unwrap();
    commit_steps(&mut sim, 20, 3);
    // Everything is still there: archive 1 and 2, online 3.
    let plan = sim.logs_covering(1_000_000).unwrap();
    let kinds: Vec<_> = plan.logs.iter().map(|l| (l.sequence, l.kind)).collect();
    assert_eq!(
        kinds,
        [
            (1, RedoLogKind::Archived),
            (2, RedoLogKind::Archived),
            (3, RedoLogKind::Online)
        ]
    );
    let registered = window(&mut sim, 1_000_000, old_scn).unwrap();
    // Two more switches overwrite the online groups that held sequences 1 and 2.
    for _ in 0..2 {
        sim.apply_line(r#"{"log_switch":true}"#).unwrap();
    }
    sim.apply_line(&format!(r#"{{"archive_purge_before_scn":{switched_at}}}"#))
        .unwrap();
    assert!(matches!(
        sim.logs_covering(old_scn),
        Err(SourceError::RedoMissing { thread: 1, from_scn, to_scn }) if from_scn == old_scn && to_scn == switched_at
    ));
    // A window planned before the purge fails when it starts (ORA-00308), naming the log, so
    // the capture lists the logs again and finds the gap.
    assert!(matches!(
        sim.start_mining(&registered),
        Err(SourceError::LogsChanged { log: Some(log), .. }) if log.sequence == 1
    ));
    // Without registered logs (per-PDB mining) START_LOGMNR reports the gap itself.
    let mut unplanned = registered.clone();
    unplanned.logs.clear();
    assert!(matches!(
        sim.start_mining(&unplanned),
        Err(SourceError::RedoMissing { .. })
    ));
    // The redo after the purge point is still minable.
    let end = sim.current_scn().unwrap();
    let later = window(&mut sim, switched_at, end).unwrap();
    assert!(!sim.mined_rows(&later).unwrap().is_empty());
}

#[test]
fn noarchivelog_loses_overwritten_online_logs() {
    let mut sim = from_lines(&[
        T,
        r#"{"database":{"log_mode":"NOARCHIVELOG","online_log_groups":2}}"#,
    ])
    .unwrap();
    commit_steps(&mut sim, 1, 2);
    for _ in 0..2 {
        sim.apply_line(r#"{"log_switch":true}"#).unwrap();
    }
    assert!(matches!(
        sim.logs_covering(1_000_001),
        Err(SourceError::RedoMissing { .. })
    ));
}

#[test]
fn resetlogs_starts_a_new_incarnation() {
    let mut sim = from_lines(&[T]).unwrap();
    commit_steps(&mut sim, 1, 2);
    let before = sim.database().unwrap();
    let old_end = sim.current_scn().unwrap();
    sim.apply_line(r#"{"resetlogs":true}"#).unwrap();
    let after = sim.database().unwrap();
    assert!(after.resetlogs_scn > before.resetlogs_scn);
    assert_eq!(after.resetlogs_scn, old_end + 1);
    let logs = sim.redo_logs(0).unwrap();
    assert!(
        logs.iter()
            .all(|l| l.first_scn >= after.resetlogs_scn && l.sequence == 1)
    );
    assert!(matches!(
        sim.logs_covering(1_000_001),
        Err(SourceError::RedoMissing { .. })
    ));
    commit_steps(&mut sim, 10, 1);
    let end = sim.current_scn().unwrap();
    sim.flush_redo().unwrap();
    let current = window(&mut sim, after.resetlogs_scn, end).unwrap();
    let rows = sim.mined_rows(&current).unwrap();
    assert_eq!(
        rows.iter()
            .filter(|r| r.operation == OperationCode::Insert)
            .count(),
        1
    );
    // The data of the old incarnation remains (a RESETLOGS without recovery loses nothing).
    assert_eq!(sim.committed_rows("APP", "T").unwrap().len(), 3);
}

#[test]
fn a_rac_thread_checkpoint_can_trail_and_hides_its_unwritten_redo() {
    let mut sim = from_lines(&[
        T,
        r#"{"thread":2}"#,
        r#"{"tx":"b","insert":"APP.T","values":{"ID":2,"V":1}}"#,
        r#"{"thread":1}"#,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":1}}"#,
        r#"{"tx":"a","commit":true}"#,
    ])
    .unwrap();
    let end = sim.current_scn().unwrap();
    let threads = sim.threads().unwrap();
    let checkpoint = |n: u16| {
        threads
            .iter()
            .find(|t| t.thread == n)
            .unwrap()
            .checkpoint_scn
    };
    assert_eq!(checkpoint(1), end);
    assert!(
        checkpoint(2) < end - 2,
        "thread 2 has written nothing since it began"
    );
    let window = window(&mut sim, 1_000_000, end).unwrap();
    assert_eq!(window.logs.len(), 2, "one log per thread");
    let before_flush = sim.mined_rows(&window).unwrap();
    assert!(
        before_flush.iter().all(|r| r.thread == 1),
        "thread 2's change is still in its log buffer"
    );
    // A flush committed on instance 1 makes only its log writer write (thread 1).
    sim.flush_redo_on(1);
    let after_flush = sim.mined_rows(&window).unwrap();
    assert!(
        after_flush.iter().all(|r| r.thread == 1),
        "the flush does not write thread 2"
    );
    let threads = sim.threads().unwrap();
    assert!(
        threads
            .iter()
            .find(|t| t.thread == 2)
            .unwrap()
            .checkpoint_scn
            < end - 2
    );
    // A log switch on thread 2 writes its redo.
    sim.apply_line(r#"{"thread":2}"#).unwrap();
    sim.apply_line(r#"{"log_switch":true}"#).unwrap();
    let after_switch = sim.mined_rows(&window).unwrap();
    let threads: Vec<u16> = after_switch.iter().map(|r| r.thread).collect();
    assert_eq!(threads, [2, 2, 1, 1, 1], "both threads merged in SCN order");
    assert!(after_switch.windows(2).all(|w| w[0].scn <= w[1].scn));
    let open = sim.open_transactions().unwrap();
    assert_eq!((open.len(), open[0].instance), (1, 2));
}

/// `V$THREAD.LAST_REDO_CHANGE#` of thread `number`.
fn last_redo(sim: &mut Simulator, number: u16) -> u64 {
    sim.threads()
        .unwrap()
        .iter()
        .find(|t| t.thread == number)
        .unwrap()
        .last_redo_scn
}

fn inserted_ids(rows: &[LogMinerRow]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.operation == OperationCode::Insert)
        .map(|r| r.sql_redo.clone().unwrap())
        .map(|sql| {
            sql.split("values ('")
                .nth(1)
                .unwrap()
                .split('\'')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn redo_reaches_the_online_log_only_when_lgwr_writes_the_buffer() {
    let mut sim =
        from_lines(&[T, r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":1}}"#]).unwrap();
    let first = sim.current_scn().unwrap();
    let written = last_redo(&mut sim, 1);
    assert!(written < first, "a's change is in the log buffer");
    let open = window(&mut sim, 1_000_000, first).unwrap();
    assert!(inserted_ids(&sim.mined_rows(&open).unwrap()).is_empty());

    // Another session's commit makes LGWR write the whole buffer, a's change with it.
    sim.apply_line(r#"{"tx":"b","insert":"APP.T","values":{"ID":2,"V":1}}"#)
        .unwrap();
    sim.apply_line(r#"{"tx":"b","commit":true}"#).unwrap();
    let commit = sim.current_scn().unwrap();
    assert_eq!(last_redo(&mut sim, 1), commit, "written up to b's commit");
    let all = window(&mut sim, 1_000_000, commit).unwrap();
    assert_eq!(inserted_ids(&sim.mined_rows(&all).unwrap()), ["1", "2"]);

    // An empty buffer hides nothing: its position is the current SCN.
    sim.apply_line(r#"{"advance_seconds":1}"#).unwrap();
    assert_eq!(last_redo(&mut sim, 1), commit + 1);

    // A change then waits for LGWR's 3-second timeout on the database's clock.
    sim.apply_line(r#"{"tx":"a","insert":"APP.T","values":{"ID":3,"V":1}}"#)
        .unwrap();
    let third = sim.current_scn().unwrap();
    sim.apply_line(r#"{"advance_seconds":2}"#).unwrap();
    assert_eq!(last_redo(&mut sim, 1), commit + 1, "2 s: still buffered");
    let window_3 = window(&mut sim, third, third).unwrap();
    assert!(inserted_ids(&sim.mined_rows(&window_3).unwrap()).is_empty());
    sim.apply_line(r#"{"advance_seconds":1}"#).unwrap();
    assert_eq!(
        last_redo(&mut sim, 1),
        sim.current_scn().unwrap(),
        "3 s: written"
    );
    assert_eq!(inserted_ids(&sim.mined_rows(&window_3).unwrap()), ["3"]);

    // A rollback writes the buffer as a commit does; a rollback to a savepoint does not.
    sim.apply_line(r#"{"tx":"a","savepoint":"s"}"#).unwrap();
    sim.apply_line(r#"{"tx":"a","insert":"APP.T","values":{"ID":4,"V":1}}"#)
        .unwrap();
    sim.apply_line(r#"{"tx":"a","rollback_to":"s"}"#).unwrap();
    let undone = sim.current_scn().unwrap();
    assert!(last_redo(&mut sim, 1) < undone - 1);
    sim.apply_line(r#"{"tx":"c","insert":"APP.T","values":{"ID":5,"V":1}}"#)
        .unwrap();
    sim.apply_line(r#"{"tx":"c","rollback":true}"#).unwrap();
    assert_eq!(last_redo(&mut sim, 1), sim.current_scn().unwrap());
    let end = sim.current_scn().unwrap();
    let rest = window(&mut sim, third + 1, end).unwrap();
    assert_eq!(inserted_ids(&sim.mined_rows(&rest).unwrap()), ["4", "5"]);
}

/// A flush reaches only the instance it commits on; the capture's flush (`flush_redo`, as the
/// client makes it) commits on every open instance, so every thread is written.
#[test]
fn a_flush_write_reaches_only_the_instance_it_commits_on() {
    let mut sim = from_lines(&[
        T,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":1}}"#,
        r#"{"thread":2}"#,
        r#"{"tx":"b","insert":"APP.T","values":{"ID":2,"V":1}}"#,
    ])
    .unwrap();
    let before = sim.current_scn().unwrap();
    sim.flush_redo_on(1);
    let flush = sim.current_scn().unwrap();
    assert_eq!(
        last_redo(&mut sim, 1),
        flush,
        "thread 1 written up to the flush commit"
    );
    assert!(
        last_redo(&mut sim, 2) < before,
        "thread 2's change is still buffered"
    );
    let all = window(&mut sim, 1_000_000, flush).unwrap();
    assert_eq!(inserted_ids(&sim.mined_rows(&all).unwrap()), ["1"]);
    sim.flush_redo().unwrap();
    let every = sim.current_scn().unwrap();
    assert_eq!(
        last_redo(&mut sim, 2),
        every,
        "the capture's flush writes thread 2"
    );
    assert!(last_redo(&mut sim, 1) > flush);
    let all = window(&mut sim, 1_000_000, every).unwrap();
    assert_eq!(inserted_ids(&sim.mined_rows(&all).unwrap()), ["1", "2"]);
}

#[test]
fn an_online_log_overwritten_while_mined_is_ora_00310() {
    let mut sim = from_lines(&[T]).unwrap();
    commit_steps(&mut sim, 1, 1);
    let end = sim.current_scn().unwrap();
    let mut window = window(&mut sim, 1_000_000, end).unwrap();
    window
        .logs
        .iter_mut()
        .for_each(|l| assert_eq!(l.kind, RedoLogKind::Online));
    sim.start_mining(&window).unwrap();
    for _ in 0..3 {
        sim.apply_line(r#"{"log_switch":true}"#).unwrap();
    }
    let result = sim.stream_rows(&mut |_| ControlFlow::Continue(()));
    let error = result.unwrap_err();
    assert!(matches!(error, SourceError::LogSwitched { .. }) && error.is_transient());
}

#[test]
fn steps_appended_while_mining_show_in_the_next_window() {
    let mut sim = from_lines(&[T]).unwrap();
    commit_steps(&mut sim, 1, 1);
    let first_end = sim.current_scn().unwrap();
    let first = window(&mut sim, 1_000_000, first_end).unwrap();
    sim.start_mining(&first).unwrap();
    commit_steps(&mut sim, 2, 1);
    let mut rows = Vec::new();
    sim.stream_rows(&mut |row| {
        rows.push(row);
        ControlFlow::Break(())
    })
    .unwrap();
    assert_eq!(rows.len(), 1, "the visitor can stop early");
    // A switch after planning leaves the planned online log in place: the window still starts.
    sim.apply_line(r#"{"log_switch":true}"#).unwrap();
    let seen = sim.mined_rows(&first).unwrap();
    assert_eq!(seen.len(), 3);
    let second_end = sim.current_scn().unwrap();
    let next = window(&mut sim, first_end + 1, second_end).unwrap();
    let second = sim.mined_rows(&next).unwrap();
    assert_eq!(second.len(), 3);
    sim.end_mining().unwrap();
    assert!(
        sim.stream_rows(&mut |_| ControlFlow::Continue(())).is_err(),
        "ORA-01306"
    );
}

#[test]
fn catalog_facts_are_settable_for_every_doctor_check() {
    let mut sim = from_lines(&[
        r#"{"table":"APP.T","columns":[{"name":"ID","type":"NUMBER(4)","key":true}],"logging":"none"}"#,
        r#"{"database":{"log_mode":"NOARCHIVELOG","supplemental":{"min":"NO"}}}"#,
        r#"{"revoke":"LOGMINING"}"#,
        r#"{"revoke":"EXECUTE_CATALOG_ROLE"}"#,
    ])
    .unwrap();
    let info = sim.database().unwrap();
    assert_eq!(info.log_mode, LogMode::NoArchivelog);
    assert_eq!(info.supplemental.min, MinimalLogging::No);
    let privileges = sim.privileges().unwrap();
    assert!(!privileges.privileges.contains("LOGMINING"));
    assert!(!privileges.roles.contains("EXECUTE_CATALOG_ROLE"));
    assert!(sim.table("APP", "T").unwrap().log_groups.is_empty());
    sim.apply_line(r#"{"table_logging":"APP.T","logging":"all"}"#)
        .unwrap();
    assert_eq!(
        sim.table("APP", "T").unwrap().log_groups[0].kind,
        LogGroupType::AllColumn
    );
    assert!(matches!(
        sim.table("APP", "NOPE"),
        Err(SourceError::NoSuchTable { .. })
    ));
}
