use super::*;

fn state() -> SnapshotState {
    SnapshotState::new(100, ["APP.A".to_owned(), "APP.B".to_owned()])
}

#[test]
fn a_fresh_capture_snapshots_unless_the_mode_says_otherwise() {
    let fresh = |mode| decide(mode, Stored::Nothing);
    assert_eq!(fresh(SnapshotMode::Initial), StartAction::Snapshot);
    assert_eq!(fresh(SnapshotMode::InitialOnly), StartAction::Snapshot);
    assert_eq!(fresh(SnapshotMode::WhenNeeded), StartAction::Snapshot);
    assert_eq!(fresh(SnapshotMode::NoData), StartAction::StreamFromCurrent);
    assert_eq!(
        fresh(SnapshotMode::SchemaOnly),
        StartAction::StreamFromCurrent
    );
    assert_eq!(fresh(SnapshotMode::Never), StartAction::Stream);
}

#[test]
fn a_bookmark_decides_by_its_snapshot_and_its_redo() {
    let running = state();
    let mut completed = state();
    completed.record_batch(0, 1, Some("r1".into()), BatchEnd::TableDone);
    completed.record_batch(1, 0, None, BatchEnd::TableDone);
    assert!(completed.completed);
    let with = |snapshot, redo_missing| Stored::Bookmark {
        snapshot,
        redo_missing,
    };
    for mode in [
        SnapshotMode::Initial,
        SnapshotMode::InitialOnly,
        SnapshotMode::NoData,
        SnapshotMode::WhenNeeded,
        SnapshotMode::Never,
    ] {
        assert_eq!(
            decide(mode, with(Some(&running), false)),
            StartAction::Resume,
            "{mode:?}: a snapshot in progress is finished"
        );
    }
    assert_eq!(
        decide(SnapshotMode::Initial, with(Some(&completed), false)),
        StartAction::Stream
    );
    assert_eq!(
        decide(SnapshotMode::Initial, with(Some(&completed), true)),
        StartAction::Stream,
        "initial leaves missing redo to the CDC stop"
    );
    assert_eq!(
        decide(SnapshotMode::WhenNeeded, with(Some(&completed), true)),
        StartAction::Snapshot
    );
    assert_eq!(
        decide(SnapshotMode::WhenNeeded, with(None, false)),
        StartAction::Stream
    );
    assert_eq!(
        decide(SnapshotMode::InitialOnly, with(Some(&completed), false)),
        StartAction::Idle
    );
    assert_eq!(
        decide(SnapshotMode::InitialOnly, with(None, true)),
        StartAction::Idle
    );
}

#[test]
fn batches_move_through_the_tables_and_progress_follows() {
    let mut snapshot = state();
    assert_eq!(snapshot.current(), Some(0));
    snapshot.record_batch(0, 3, Some("r3".into()), BatchEnd::More);
    assert_eq!(snapshot.tables[0].after.as_deref(), Some("r3"));
    let progress = snapshot.progress(&[Some(10), Some(5)]);
    assert_eq!(
        progress,
        SnapshotProgress {
            tables_total: 2,
            tables_done: 0,
            rows_scanned: 3,
            rows_remaining_estimate: Some(12),
        }
    );
    snapshot.record_batch(0, 0, None, BatchEnd::TableDone);
    assert_eq!(
        snapshot.tables[0].after.as_deref(),
        Some("r3"),
        "an empty batch keeps the position"
    );
    assert_eq!(snapshot.current(), Some(1));
    assert_eq!(
        snapshot.progress(&[Some(10), None]).rows_remaining_estimate,
        None
    );
    assert_eq!(
        snapshot
            .progress(&[Some(1), Some(5)])
            .rows_remaining_estimate,
        Some(5),
        "a table done counts for nothing, even when its statistics were low"
    );
    snapshot.record_batch(1, 2, Some("b2".into()), BatchEnd::TableDone);
    assert!(snapshot.completed);
    assert_eq!(snapshot.current(), None);
}

#[test]
fn a_restarted_table_covers_its_changes_up_to_its_own_scn() {
    let mut snapshot = state();
    snapshot.record_batch(0, 4, Some("r4".into()), BatchEnd::More);
    snapshot.restart_table(0, 150);
    assert_eq!(
        (snapshot.tables[0].rows, snapshot.tables[0].after.as_ref()),
        (0, None)
    );
    assert!(snapshot.covers("APP.A", 150));
    assert!(!snapshot.covers("APP.A", 151));
    assert!(snapshot.covers("APP.B", 100));
    assert!(!snapshot.covers("APP.B", 101));
    assert!(!snapshot.covers("APP.C", 1), "not a snapshotted table");
}

#[test]
fn the_state_round_trips_through_json() {
    let mut snapshot = state();
    snapshot.record_batch(0, 4, Some("AAAR4".into()), BatchEnd::More);
    let text = serde_json::to_string(&snapshot).unwrap();
    assert_eq!(
        serde_json::from_str::<SnapshotState>(&text).unwrap(),
        snapshot
    );
}

#[test]
fn markers_follow_debezium() {
    use SnapshotMarker::{First, FirstInDataCollection, Last, LastInDataCollection, True};
    let place = |first_table, last_table, first_in_table, last_in_table| RowPlace {
        first_table,
        last_table,
        first_in_table,
        last_in_table,
    };
    let cases = [
        (place(true, false, true, false), First),
        (place(true, true, true, true), Last),
        (place(false, true, false, true), Last),
        (place(true, false, true, true), First),
        (place(false, false, true, true), LastInDataCollection),
        (place(false, false, true, false), FirstInDataCollection),
        (place(true, false, false, true), LastInDataCollection),
        (place(true, true, false, false), True),
    ];
    for (place, expected) in cases {
        assert_eq!(marker(place), expected, "{place:?}");
    }
}

mod model {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A snapshot read batch by batch, with restarts from the stored progress (a crash)
        /// and ORA-01555 restarts of the table being read at any point: every table ends read
        /// whole, each row once since the table's last restart, and the progress adds up.
        #[test]
        fn every_row_is_read_once_since_the_tables_last_restart(
            sizes in proptest::collection::vec(0u64..40, 1..4),
            fetch in 1u64..10,
            interruptions in proptest::collection::vec(0u8..12, 0..300),
        ) {
            let names: Vec<String> = (0..sizes.len()).map(|i| format!("APP.T{i}")).collect();
            let mut state = SnapshotState::new(100, names.clone());
            let mut read: Vec<Vec<u64>> = vec![Vec::new(); sizes.len()];
            let mut interruptions = interruptions.into_iter();
            let mut scn = 100;
            while let Some(index) = state.current() {
                match interruptions.next().unwrap_or(0) {
                    10 => {
                        let stored = serde_json::to_string(&state).unwrap();
                        state = serde_json::from_str(&stored).unwrap();
                        continue;
                    }
                    11 => {
                        scn += 1;
                        state.restart_table(index, scn);
                        read[index].clear();
                        continue;
                    }
                    _ => {}
                }
                // Row ids are the row numbers, zero-padded so text order is ROWID order.
                let first = state.tables[index]
                    .after
                    .as_ref()
                    .map_or(0, |id| id.parse::<u64>().unwrap() + 1);
                let fetched = sizes[index].saturating_sub(first).min(fetch + 1);
                let (written, end) = if fetched > fetch {
                    (fetch, BatchEnd::More)
                } else {
                    (fetched, BatchEnd::TableDone)
                };
                read[index].extend(first..first + written);
                let last = (written > 0).then(|| format!("{:06}", first + written - 1));
                state.record_batch(index, written, last, end);
            }
            prop_assert!(state.completed);
            for (index, size) in sizes.iter().enumerate() {
                prop_assert_eq!(&read[index], &(0..*size).collect::<Vec<u64>>());
                prop_assert_eq!(state.tables[index].rows, *size);
                prop_assert!(state.covers(&names[index], state.tables[index].scn));
                prop_assert!(!state.covers(&names[index], state.tables[index].scn + 1));
            }
            let progress = state.progress(&vec![Some(1_000); sizes.len()]);
            prop_assert_eq!(progress.rows_scanned, sizes.iter().sum::<u64>());
            prop_assert_eq!(progress.tables_done, sizes.len() as u64);
            prop_assert_eq!(progress.rows_remaining_estimate, Some(0));
        }
    }
}

#[test]
fn chunk_sets_stay_compact_ranges() {
    let mut set = ChunkSet::default();
    assert_eq!(set.first_missing(), 0);
    for index in [0, 1, 2, 5, 4, 7] {
        set.insert(index);
    }
    assert_eq!(set, ChunkSet(vec![(0, 2), (4, 5), (7, 7)]));
    assert_eq!(set.first_missing(), 3);
    set.insert(3);
    set.insert(6);
    assert_eq!(set, ChunkSet(vec![(0, 7)]));
    assert!(set.contains(7) && !set.contains(8));
    assert_eq!(serde_json::to_string(&set).unwrap(), "[[0,7]]");
}

#[test]
fn chunks_are_recorded_until_the_table_is_done_and_its_plan_dropped() {
    let range = |n: u32| RowRange::RowId {
        lo: format!("lo{n}"),
        hi: format!("hi{n}"),
    };
    let mut snapshot = state();
    assert_eq!(snapshot.next_chunk(0), None, "not planned yet");
    snapshot.plan_table(0, vec![range(0), range(1), range(2)]);
    assert_eq!(snapshot.next_chunk(0), Some((0, &range(0))));
    snapshot.record_chunks(0, 0..2, 7);
    assert_eq!(snapshot.next_chunk(0), Some((2, &range(2))));
    assert!(!snapshot.tables[0].done);
    snapshot.record_chunks(0, 2..3, 1);
    assert!(snapshot.tables[0].done && snapshot.tables[0].chunks.is_none());
    assert_eq!(snapshot.tables[0].rows, 8);
    assert_eq!(snapshot.current(), Some(1));
    // A table without a chunk (no segment) is done at its first record.
    snapshot.plan_table(1, Vec::new());
    snapshot.record_chunks(1, 0..0, 0);
    assert!(snapshot.completed);
}

/// A bookmark written before chunks (its progress a ROWID to read after) still loads, and one
/// with a plan round-trips.
#[test]
fn old_bookmarks_load_and_plans_round_trip() {
    let old = r#"{"scn":100,"tables":[{"table":"APP.A","scn":100,"after_row_id":"AAAR9JAAHAAAACFAAB","rows":50,"done":false}],"completed":false}"#;
    let state: SnapshotState = serde_json::from_str(old).unwrap();
    assert_eq!(state.tables[0].after.as_deref(), Some("AAAR9JAAHAAAACFAAB"));
    assert!(state.tables[0].chunks.is_none() && state.tables[0].chunks_done.is_empty());
    let mut planned = state.clone();
    planned.tables[0].after = None;
    planned.plan_table(
        0,
        vec![RowRange::RowId {
            lo: "AAAR9JAAHAAAACAAAA".to_owned(),
            hi: "AAAR9JAAHAAAACHH//".to_owned(),
        }],
    );
    planned.tables[0].chunks_done.insert(0);
    let text = serde_json::to_string(&planned).unwrap();
    assert!(text.contains(r#""chunks_done":[[0,0]]"#), "{text}");
    assert_eq!(
        serde_json::from_str::<SnapshotState>(&text).unwrap(),
        planned
    );
}

/// A bookmark whose plan is the JSON list of ranges written before plans were packed still
/// resumes at its first chunk not done, and is written back packed, without the chunks done.
#[test]
fn a_plan_stored_as_a_json_list_resumes_and_is_written_back_packed() {
    let old = r#"{"scn":100,"tables":[{"table":"APP.A","scn":100,"rows":70,"done":false,
        "chunks":[{"kind":"row_id","lo":"AAAR9JAAHAAAACAAAA","hi":"AAAR9JAAHAAAACHH//"},
                  {"kind":"row_id","lo":"AAAR9JAAHAAAACIAAA","hi":"AAAR9JAAHAAAACPH//"},
                  {"kind":"row_id","lo":"AAAR9JAAHAAAACQAAA","hi":"AAAR9JAAHAAAACXH//"}],
        "chunks_done":[[0,0]]}],"completed":false}"#;
    let mut state: SnapshotState = serde_json::from_str(old).unwrap();
    let second = RowRange::RowId {
        lo: "AAAR9JAAHAAAACIAAA".to_owned(),
        hi: "AAAR9JAAHAAAACPH//".to_owned(),
    };
    assert_eq!(state.next_chunk(0), Some((1, &second)));
    state.record_chunks(0, 1..2, 10);
    let text = serde_json::to_string(&state).unwrap();
    let stored: serde_json::Value = serde_json::from_str(&text).unwrap();
    let packed = stored["tables"][0]["chunks"]
        .as_str()
        .expect("a packed plan");
    let plan = crate::source::chunk_plan::ChunkPlan::decode(packed).unwrap();
    assert_eq!((plan.first(), plan.len()), (2, 3));
    let again: SnapshotState = serde_json::from_str(&text).unwrap();
    assert_eq!(again, state);
    assert_eq!(again.next_chunk(0).map(|(index, _)| index), Some(2));
}
