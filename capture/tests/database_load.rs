#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! What the capture asks of the database (issue 32, section 2), counted from the statements the
//! real Oracle client sends to the simulator's SQL door: on an idle database, at most one flush
//! commit and a handful of statements per poll interval, and logs registered with LogMiner once
//! per log set rather than once per window. Counted per round (flush to flush) and against the
//! number of poll intervals that could have passed, so a slow machine only makes the counts
//! smaller.

mod load_support;

use std::time::Duration;

use load_support::{ONE_TABLE, run_capture};

/// Statements per idle poll interval the capture may send (the target).
const STATEMENTS_PER_IDLE_POLL: usize = 10;

#[test]
fn an_idle_capture_flushes_once_per_poll_interval_and_sends_few_statements() {
    let issued = run_capture(
        ONE_TABLE,
        "APP.T",
        "mining: {pollIntervalSeconds: 1}\n",
        Duration::from_millis(3500),
        None,
    );
    let polls = issued.elapsed.as_secs_f64().ceil() as usize;
    let flushes = issued.flushes();
    assert!(
        flushes <= polls + 1,
        "{flushes} flush commits in {:?} at one poll a second",
        issued.elapsed
    );
    // The first round is start-up (the flush table created, the first lag and orphan checks).
    let rounds = issued.rounds();
    assert!(
        rounds.len() >= 2,
        "too few flushes: {:?}",
        issued.statements
    );
    for round in &rounds[1..] {
        assert!(
            round.len() <= STATEMENTS_PER_IDLE_POLL,
            "{} statements between two flushes of an idle capture: {round:#?}",
            round.len()
        );
    }
}

#[test]
fn logs_are_registered_once_while_the_log_set_stays_the_same() {
    let issued = run_capture(
        ONE_TABLE,
        "APP.T",
        "mining: {pollIntervalSeconds: 1}\n",
        Duration::from_millis(2500),
        None,
    );
    let sessions = issued.sessions_started();
    assert!(
        sessions >= 2,
        "{sessions} LogMiner starts: {:?}",
        issued.statements
    );
    // The simulator's scenario has one online log per thread and no switch: one registration.
    let first_start = issued
        .statements
        .iter()
        .position(|s| s.contains("START_LOGMNR"))
        .unwrap();
    let added_before = issued.statements[..first_start]
        .iter()
        .filter(|s| s.contains("ADD_LOGFILE"))
        .count();
    assert!(added_before >= 1);
    assert_eq!(
        issued.logs_added(),
        added_before,
        "logs registered again after the first START_LOGMNR although no log switched: {:#?}",
        issued.statements
    );
    let last_start = issued
        .statements
        .iter()
        .rposition(|s| s.contains("START_LOGMNR"))
        .unwrap();
    assert!(
        !issued.statements[..last_start]
            .iter()
            .any(|s| s.contains("END_LOGMNR")),
        "END_LOGMNR between windows of one log set: {:#?}",
        issued.statements
    );
}
