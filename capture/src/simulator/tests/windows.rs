//! Golden tests, continued: the window's filter, PDB rows, undo slots, the SCN clock,
//! flashback reads, the whole source and RS_ID text.

use super::*;

#[test]
fn the_window_keeps_control_rows_and_captured_tables_only() {
    let mut sim = simulator(&[
        T,
        r#"{"table":"APP.OTHER","columns":[{"name":"ID","type":"NUMBER(4)","key":true}]}"#,
        r#"{"tx":"a","insert":"APP.OTHER","values":{"ID":1}}"#,
        r#"{"tx":"a","commit":true}"#,
        r#"{"tx":"b","insert":"APP.T","values":{"ID":1,"V":1}}"#,
        r#"{"tx":"b","commit":true}"#,
    ]);
    let rows = mine(&mut sim, &["APP.T"]);
    assert_eq!(
        ops(&rows),
        [
            (Op::Start, false),
            (Op::Commit, false),
            (Op::Start, false),
            (Op::Insert, false),
            (Op::Commit, false)
        ]
    );
    let end = sim.current_scn().unwrap();
    assert!(
        mine_window(&mut sim, FIRST_SCN + 5, end, &["APP.T"])
            .unwrap()
            .iter()
            .all(|r| r.scn >= FIRST_SCN + 5)
    );
}

#[test]
fn pdb_rows_carry_the_container_and_the_window_filters_on_it() {
    let mut sim = simulator(&[
        r#"{"database":{"pdb":"ORCLPDB1","con_id":3}}"#,
        T,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":1}}"#,
        r#"{"tx":"a","commit":true}"#,
    ]);
    let end = sim.current_scn().unwrap();
    sim.flush_redo().unwrap();
    let mut window = MiningWindow {
        start_scn: FIRST_SCN,
        end_scn: end,
        logs: Vec::new(),
        objects: Vec::new(),
        tables: vec![("APP".to_owned(), "T".to_owned())],
        pdb: Some("ORCLPDB1".to_owned()),
        with_sql_undo: true,
    };
    let rows = sim.mined_rows(&window).unwrap();
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter()
            .all(|r| r.src_con_name.as_deref() == Some("ORCLPDB1") && r.con_id == Some(3))
    );
    window.pdb = Some("OTHER".to_owned());
    sim.start_mining(&window).unwrap();
    assert_eq!(
        sim.stream_rows(&mut |_| ControlFlow::Continue(())).unwrap(),
        0
    );
    assert!(sim.database().unwrap().cdb);
    assert_eq!(
        sim.pdb_incarnation("ORCLPDB1")
            .unwrap()
            .unwrap()
            .pdb_incarnation,
        1
    );
    sim.apply_line(r#"{"pdb_incarnation":true}"#).unwrap();
    assert_eq!(
        sim.pdb_incarnation("ORCLPDB1")
            .unwrap()
            .unwrap()
            .pdb_incarnation,
        2
    );
}

#[test]
fn undo_slots_are_reused_with_the_next_sequence() {
    let mut sim = simulator(&[T]);
    for n in 0..330 {
        sim.apply_line(&format!(
            r#"{{"tx":"t{n}","insert":"APP.T","values":{{"ID":{n},"V":1}}}}"#
        ))
        .unwrap();
        sim.apply_line(&format!(r#"{{"tx":"t{n}","commit":true}}"#))
            .unwrap();
    }
    let rows = mine(&mut sim, &["APP.T"]);
    let starts: Vec<_> = rows
        .iter()
        .filter(|r| r.operation == Op::Start)
        .map(|r| r.xid)
        .collect();
    let first = starts[0];
    let reused: Vec<_> = starts.iter().filter(|x| x.same_slot(&first)).collect();
    assert_eq!(reused.len(), 2);
    assert_eq!(reused[1].sequence(), first.sequence() + 1);
    // XIDs are little-endian (usn, slot, sqn).
    assert_eq!(
        Xid::from_parts(first.usn(), first.slot(), first.sequence()),
        first
    );
}

#[test]
fn scn_to_timestamp_follows_the_clock_and_forgets_old_scns() {
    let mut sim = simulator(&[
        r#"{"database":{"scn_time_retention_seconds":3600}}"#,
        r#"{"advance_seconds":10}"#,
    ]);
    let scn = sim.current_scn().unwrap();
    assert_eq!(
        sim.scn_to_timestamp(scn).unwrap(),
        Some(
            database::FIRST_TIME
                .checked_add(jiff::SignedDuration::from_secs(10))
                .unwrap()
        )
    );
    assert_eq!(sim.scn_to_timestamp(scn + 100).unwrap(), None);
    sim.apply_line(r#"{"advance_seconds":7200}"#).unwrap();
    assert_eq!(
        sim.scn_to_timestamp(scn).unwrap(),
        None,
        "ORA-08181 beyond the retention"
    );
}

/// A host in Europe/Berlin: the clock stays UTC, while SCN_TO_TIMESTAMP, the rows' TIMESTAMP
/// and COMMIT_TIMESTAMP and the host's offset follow the zone, across the autumn switch (the
/// local hour 02:00-03:00 is shown twice); an unknown zone is refused with its line.
#[test]
fn a_host_time_zone_shows_the_utc_clock_in_local_time_across_a_dst_switch() {
    let mut sim = simulator(&[
        r#"{"database":{"time_zone":"Europe/Berlin","time":"2024-10-27T00:59:00"}}"#,
        T,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":1}}"#,
        r#"{"tx":"a","commit":true}"#,
    ]);
    let before = sim.current_scn().unwrap();
    assert_eq!(sim.database_utc_offset().unwrap().seconds(), 7_200);
    let local = |text: &str| Some(text.parse::<civil::DateTime>().unwrap());
    assert_eq!(
        sim.scn_to_timestamp(before).unwrap(),
        local("2024-10-27T02:59:00")
    );
    sim.apply_line(r#"{"advance_seconds":120}"#).unwrap();
    sim.apply_line(r#"{"tx":"b","insert":"APP.T","values":{"ID":2,"V":2}}"#)
        .unwrap();
    sim.apply_line(r#"{"tx":"b","commit":true}"#).unwrap();
    assert_eq!(sim.database_utc_offset().unwrap().seconds(), 3_600);
    let after = sim.current_scn().unwrap();
    assert_eq!(
        sim.scn_to_timestamp(after).unwrap(),
        local("2024-10-27T02:01:00")
    );
    assert_eq!(
        sim.scn_to_timestamp(before).unwrap(),
        local("2024-10-27T02:59:00"),
        "an SCN keeps the local time it had"
    );
    let rows = mine(&mut sim, &["APP.T"]);
    let commits: Vec<_> = rows
        .iter()
        .filter(|row| row.operation == Op::Commit)
        .map(|row| (row.timestamp, row.commit_timestamp))
        .collect();
    assert_eq!(
        commits,
        [
            (local("2024-10-27T02:59:00"), local("2024-10-27T02:59:00")),
            (local("2024-10-27T02:01:00"), local("2024-10-27T02:01:00")),
        ]
    );
    let refused =
        Simulator::from_reader(r#"{"database":{"time_zone":"Mars/Olympus_Mons"}}"#.as_bytes())
            .unwrap_err();
    assert!(
        refused.to_string().contains("database.time_zone"),
        "{refused}"
    );
}

#[test]
fn flashback_reads_rows_as_of_an_scn_in_rowid_order() {
    let mut sim = simulator(&[
        T,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":1}}"#,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":2,"V":1}}"#,
        r#"{"tx":"a","commit":true}"#,
    ]);
    let before_update = sim.current_scn().unwrap();
    sim.apply_line(r#"{"tx":"b","update":"APP.T","where":{"ID":2},"set":{"V":5}}"#)
        .unwrap();
    sim.apply_line(r#"{"tx":"b","insert":"APP.T","values":{"ID":3,"V":1}}"#)
        .unwrap();
    let schema = sim.schema("APP", "T").unwrap();
    let now = sim.current_scn().unwrap();
    let first = sim.flashback_batch(&schema, now, None, None, 1).unwrap();
    assert_eq!(first.len(), 1);
    let rest = sim
        .flashback_batch(&schema, now, Some(&first[0].position), None, 10)
        .unwrap();
    assert_eq!(rest.len(), 1, "uncommitted changes are not visible");
    let five = Value::Number(crate::value::OracleNumber::parse("5").unwrap());
    assert_ne!(rest[0].values.get(1), Some(&five));
    sim.apply_line(r#"{"tx":"b","commit":true}"#).unwrap();
    let now = sim.current_scn().unwrap();
    let all = sim.flashback_batch(&schema, now, None, None, 10).unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[1].values.get(1), Some(&five));
    assert!(
        all.windows(2)
            .all(|w| database::row_number(&w[0].position) < database::row_number(&w[1].position))
    );
    assert_eq!(
        sim.flashback_batch(&schema, before_update, None, None, 10)
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn flashback_reads_honour_a_condition_and_fail_once_their_undo_is_lost() {
    let mut sim = simulator(&[
        T,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":1,"V":1}}"#,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":2,"V":7}}"#,
        r#"{"tx":"a","insert":"APP.T","values":{"ID":3}}"#,
        r#"{"tx":"a","commit":true}"#,
    ]);
    let schema = sim.schema("APP", "T").unwrap();
    let read = sim.current_scn().unwrap();
    let ids = |rows: Vec<crate::source::FlashbackRow>| -> Vec<String> {
        rows.iter()
            .map(|r| format!("{:?}", r.values.get(0)))
            .collect()
    };
    let selected = sim
        .flashback_batch(&schema, read, None, Some("V >= 1 AND ID <> 1"), 10)
        .unwrap();
    assert_eq!(selected.len(), 1, "{:?}", ids(selected));
    let refused = sim
        .flashback_batch(&schema, read, None, Some("V = 1 OR V = 7"), 10)
        .unwrap_err();
    assert!(refused.to_string().contains("joined by AND"), "{refused}");

    sim.apply_line(r#"{"undo_lost":true}"#).unwrap();
    assert_eq!(
        sim.flashback_batch(&schema, read, None, None, 10)
            .unwrap()
            .len(),
        3,
        "nothing changed since the read SCN: no undo is needed"
    );
    sim.apply_line(r#"{"tx":"b","update":"APP.T","where":{"ID":2},"set":{"V":5}}"#)
        .unwrap();
    let too_old = sim
        .flashback_batch(&schema, read, None, None, 10)
        .unwrap_err();
    assert!(
        matches!(too_old, SourceError::SnapshotTooOld { scn, .. } if scn == read),
        "{too_old}"
    );
    let now = sim.current_scn().unwrap();
    assert_eq!(
        sim.flashback_batch(&schema, now, None, None, 10)
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn the_simulator_is_a_whole_oracle_source() {
    fn source<T: crate::source::OracleSource>(_: &T) {}
    source(&Simulator::new());
}

#[test]
fn rs_id_is_logminer_text_from_redo_address() {
    let address = RedoAddress {
        sequence: 7,
        block: 141_495,
        offset: 16,
    };
    assert_eq!(address.to_string(), " 0x000007.000228b7.0010 ");
}
