use std::collections::BTreeMap;

use proptest::prelude::*;
use redoline_crds::v1alpha1::{SnapshotRequest, SnapshotRequestState, TableName};

use super::*;

fn ranges(n: usize) -> Vec<RowRange> {
    (0..n)
        .map(|i| RowRange::RowId {
            lo: format!("lo{i}"),
            hi: format!("hi{i}"),
        })
        .collect()
}

/// The next chunk, planned as `planned` chunks when its table is not planned yet.
fn next(state: &mut IncrementalState, planned: usize, now: Timestamp) -> Option<NextChunk> {
    let chunk = state.next_chunk()?;
    if chunk.range.is_some() {
        return Some(chunk);
    }
    state.plan(&chunk, ranges(planned), now);
    state.next_chunk()
}

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + second).unwrap()
}

fn request(id: &str, tables: &[&str]) -> SnapshotRequest {
    SnapshotRequest {
        id: id.to_owned(),
        tables: tables.iter().map(|t| TableName((*t).to_owned())).collect(),
        condition: None,
    }
}

/// Reads every chunk of the state's queue, each table planned as one chunk.
fn read_all(state: &mut IncrementalState, now: Timestamp) -> Vec<Transition> {
    let mut transitions = Vec::new();
    while let Some(chunk) = next(state, 1, now) {
        transitions.extend(state.record_chunk(&chunk, 3, now));
    }
    transitions
}

#[test]
fn a_new_id_is_read_once_and_stays_done_when_listed_again() {
    let mut state = IncrementalState::new(["APP.ORDERS".to_owned()]);
    let spec = [request("reread-1", &["APP.ORDERS"])];
    state.reconcile(&spec, at(0));
    let chunk = state.next_chunk().expect("a chunk");
    assert_eq!(
        (chunk.id.as_str(), chunk.table.as_str()),
        ("reread-1", "APP.ORDERS")
    );
    assert_eq!(chunk.range, None, "not planned yet");
    state.plan(&chunk, ranges(2), at(1));
    let chunk = state.next_chunk().expect("the first planned chunk");
    assert_eq!(
        (chunk.index, chunk.range.clone()),
        (0, Some(ranges(2)[0].clone()))
    );
    let first = state.record_chunk(&chunk, 10, at(1));
    assert_eq!(first[0].state, SnapshotRequestState::Running);
    let chunk = state.next_chunk().expect("a second chunk");
    assert_eq!(chunk.index, 1);
    let done = state.record_chunk(&chunk, 0, at(2));
    assert_eq!(
        done.last().map(|t| t.state),
        Some(SnapshotRequestState::Done)
    );
    // The same chunk recorded twice (a replay) counts once.
    assert!(state.record_chunk(&chunk, 4, at(2)).is_empty());
    assert_eq!(state.next_chunk(), None);
    assert_eq!(state.finished["reread-1"].state, SnapshotRequestState::Done);
    // The bookmark round trip, then the same spec: nothing to read.
    let stored = serde_json::to_value(&state).unwrap();
    let mut state: IncrementalState = serde_json::from_value(stored).unwrap();
    assert!(state.reconcile(&spec, at(3)).is_empty());
    assert_eq!(state.next_chunk(), None);
    let shown = state.statuses(&spec, |_| Some(20));
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].state, SnapshotRequestState::Done);
    assert_eq!(shown[0].tables[0].rows_read, 10);
}

#[test]
fn removing_a_running_request_cancels_it_and_putting_it_back_does_not_restart_it() {
    let mut state = IncrementalState::new(["APP.A".to_owned(), "APP.B".to_owned()]);
    state.reconcile(&[request("one", &["APP.A", "APP.B"])], at(0));
    let chunk = next(&mut state, 3, at(1)).unwrap();
    state.record_chunk(&chunk, 5, at(1));
    let cancelled = state.reconcile(&[], at(2));
    assert_eq!(
        cancelled,
        vec![Transition {
            id: "one".into(),
            state: SnapshotRequestState::Cancelled
        }]
    );
    assert_eq!(state.next_chunk(), None);
    assert!(
        state
            .reconcile(&[request("one", &["APP.A"])], at(3))
            .is_empty()
    );
    assert_eq!(state.next_chunk(), None);
}

#[test]
fn requests_run_one_at_a_time_in_order_and_the_status_says_so() {
    let mut state = IncrementalState::new(["APP.A".to_owned(), "APP.B".to_owned()]);
    let spec = [request("first", &["APP.A"]), request("second", &["APP.B"])];
    state.reconcile(&spec, at(0));
    let chunk = next(&mut state, 3, at(1)).unwrap();
    assert_eq!(chunk.id, "first");
    state.record_chunk(&chunk, 5, at(1));
    let shown = state.statuses(&spec, |_| None);
    let states: Vec<_> = shown.iter().map(|s| (s.id.as_str(), s.state)).collect();
    assert_eq!(
        states,
        [
            ("first", SnapshotRequestState::Running),
            ("second", SnapshotRequestState::Pending)
        ]
    );
    assert_eq!(shown[0].tables[0].state, SnapshotRequestState::Running);
    assert_eq!(shown[0].started_at, Some(Time(at(1))));
}

#[test]
fn a_table_that_joins_is_queued_unless_told_to_skip() {
    let mut state = IncrementalState::new(["APP.A".to_owned()]);
    let joined = state.tables_joined(["APP.A".to_owned(), "APP.B".to_owned()], 500, true);
    assert_eq!(joined.map(|t| t.id), Some("tables-added-500".to_owned()));
    let chunk = state.next_chunk().unwrap();
    assert_eq!(chunk.table, "APP.B");
    assert_eq!(
        state.tables_joined(["APP.B".to_owned()], 600, true),
        None,
        "known now"
    );
    assert_eq!(state.tables_joined(["APP.C".to_owned()], 700, false), None);
    assert!(state.known_tables.contains("APP.C"), "skipped, yet known");
    assert_eq!(state.queue.len(), 1);
    // The spec's requests never cancel a tables-added one.
    assert!(state.reconcile(&[], at(1)).is_empty());
    assert_eq!(state.queue.len(), 1);
}

#[test]
fn a_joined_table_is_read_once_every_transaction_open_when_it_joined_has_ended() {
    let mut state = IncrementalState::new(["APP.A".to_owned()]);
    state.tables_joined(["APP.A".to_owned(), "APP.B".to_owned()], 500, true);
    let chunk = state.next_chunk().unwrap();
    assert_eq!(chunk.joined_scn, Some(500));
    // A transaction that began at 420 may have written APP.B before it joined.
    assert!(chunk.waits_for(Some(420)));
    assert!(
        !chunk.waits_for(Some(500)),
        "began as the table joined: mined whole"
    );
    assert!(!chunk.waits_for(None), "nothing open");
    // A request of the spec waits for nothing: its tables were captured all along.
    let mut state = IncrementalState::default();
    state.reconcile(&[request("r1", &["APP.A"])], at(0));
    let chunk = state.next_chunk().unwrap();
    assert_eq!(chunk.joined_scn, None);
    assert!(!chunk.waits_for(Some(1)));
}

#[test]
fn a_failed_request_is_over_with_its_message() {
    let mut state = IncrementalState::default();
    let spec = [request("bad", &["APP.GONE"])];
    state.reconcile(&spec, at(0));
    let failed = state.fail("bad", "ORA-00942".into(), at(1)).unwrap();
    assert_eq!(failed.state, SnapshotRequestState::Failed);
    assert!(state.reconcile(&spec, at(2)).is_empty());
    let shown = state.statuses(&spec, |_| None);
    assert_eq!(shown[0].message.as_deref(), Some("ORA-00942"));
}

#[test]
fn a_bookmark_without_the_member_reads_as_empty() {
    let state: IncrementalState = serde_json::from_str("{}").unwrap();
    assert_eq!(state, IncrementalState::default());
}

/// What happens to the capture between two committed pages.
#[derive(Clone, Debug)]
enum Step {
    /// The spec now lists these ids (of 0..6).
    Spec(Vec<u8>),
    /// A chunk is read and committed with its progress; a table not planned yet gets
    /// `planned` chunks.
    Chunk { planned: usize },
    /// The process dies: what was not committed is lost, the spec is read again at start.
    Kill,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        prop::collection::vec(0u8..6, 0..4).prop_map(Step::Spec),
        (0usize..4).prop_map(|planned| Step::Chunk { planned }),
        Just(Step::Kill),
    ]
}

fn spec_of(ids: &[u8]) -> Vec<SnapshotRequest> {
    let mut seen = Vec::new();
    for id in ids {
        if !seen.contains(id) {
            seen.push(*id);
        }
    }
    seen.iter()
        .map(|id| request(&format!("r{id}"), &["APP.A", "APP.B"]))
        .collect()
}

proptest! {
    /// Requests added, removed and finished across kills: what the bookmark commits says each
    /// id reached Done at most once, no chunk of a cancelled (or finished) id is committed after
    /// it ended, and every id the spec lists from some point on is, at the end, finished.
    #[test]
    fn each_request_runs_to_done_at_most_once(steps in prop::collection::vec(step(), 1..60)) {
        let mut spec = Vec::new();
        // The bookmark: the state the last committed page carried.
        let mut committed = IncrementalState::new(["APP.A".to_owned(), "APP.B".to_owned()]);
        let mut live = committed.clone();
        let mut done_count: BTreeMap<String, u32> = BTreeMap::new();
        let mut ended: BTreeMap<String, SnapshotRequestState> = BTreeMap::new();
        let mut clock = 0;
        for step in steps {
            clock += 1;
            match step {
                Step::Spec(ids) => {
                    spec = spec_of(&ids);
                    // The pod restarts on a spec change: the bookmark is read again.
                    live = committed.clone();
                    live.reconcile(&spec, at(clock));
                }
                Step::Chunk { planned } => {
                    let Some(chunk) = next(&mut live, planned, at(clock)) else { continue };
                    prop_assert!(!ended.contains_key(&chunk.id), "{} read after it ended", chunk.id);
                    let transitions = live.record_chunk(&chunk, 1, at(clock));
                    // The chunk's page commits with the state: the cancellations reconcile made
                    // commit with it.
                    for (id, finished) in &live.finished {
                        if !committed.finished.contains_key(id) {
                            ended.insert(id.clone(), finished.state);
                        }
                    }
                    for transition in transitions {
                        if transition.state == SnapshotRequestState::Done {
                            *done_count.entry(transition.id).or_default() += 1;
                        }
                    }
                    committed = live.clone();
                }
                Step::Kill => {
                    live = committed.clone();
                    live.reconcile(&spec, at(clock));
                }
            }
        }
        for (id, count) in &done_count {
            prop_assert!(*count <= 1, "{id} done {count} times");
        }
        // Enough chunks read everything the spec still lists.
        let mut last = live;
        for _ in 0..100 {
            let Some(chunk) = next(&mut last, 1, at(clock)) else { break };
            last.record_chunk(&chunk, 1, at(clock));
        }
        for request in &spec {
            prop_assert!(last.finished.contains_key(&request.id), "{} never finished", request.id);
        }
        for (id, state) in &ended {
            prop_assert_eq!(last.finished.get(id).map(|f| f.state), Some(*state), "{} changed after it ended", id);
        }
    }
}

#[test]
fn every_read_ends_after_chunks_alone() {
    let mut state = IncrementalState::new(["APP.A".to_owned()]);
    state.reconcile(&[request("x", &["APP.A", "APP.B"])], at(0));
    let transitions = read_all(&mut state, at(1));
    assert_eq!(
        transitions.last().map(|t| t.state),
        Some(SnapshotRequestState::Done)
    );
}

/// A bookmark whose table plan is the JSON list of ranges written before plans were packed
/// resumes at its chunk index, and is written back packed, without the chunks written.
#[test]
fn a_plan_stored_as_a_json_list_resumes_and_is_written_back_packed() {
    let old = r#"{"known_tables":["APP.ORDERS"],"queue":[{"id":"reread-1","origin":"spec",
        "started_at":"2026-12-05T10:00:00Z","tables":[{"table":"APP.ORDERS","chunks":1,"rows":9,
        "ranges":[{"kind":"row_id","lo":"AAAR9JAAHAAAACAAAA","hi":"AAAR9JAAHAAAACHH//"},
                  {"kind":"row_id","lo":"AAAR9JAAHAAAACIAAA","hi":"AAAR9JAAHAAAACPH//"},
                  {"kind":"row_id","lo":"AAAR9JAAHAAAACQAAA","hi":"AAAR9JAAHAAAACXH//"}]}]}]}"#;
    let mut state: IncrementalState = serde_json::from_str(old).unwrap();
    let chunk = state.next_chunk().expect("the second chunk");
    assert_eq!(
        (chunk.index, chunk.range.clone()),
        (
            1,
            Some(RowRange::RowId {
                lo: "AAAR9JAAHAAAACIAAA".to_owned(),
                hi: "AAAR9JAAHAAAACPH//".to_owned(),
            })
        )
    );
    state.record_chunk(&chunk, 4, at(3));
    let text = serde_json::to_string(&state).unwrap();
    let stored: serde_json::Value = serde_json::from_str(&text).unwrap();
    let packed = stored["queue"][0]["tables"][0]["ranges"]
        .as_str()
        .expect("a packed plan");
    let plan = ChunkPlan::decode(packed).unwrap();
    assert_eq!((plan.first(), plan.len()), (2, 3));
    let mut again: IncrementalState = serde_json::from_str(&text).unwrap();
    assert_eq!(again, state);
    let last = again.next_chunk().expect("the third chunk");
    assert_eq!(last.index, 2);
    let done = again.record_chunk(&last, 4, at(4));
    assert_eq!(done[0].state, SnapshotRequestState::Done);
}
