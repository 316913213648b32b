#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! What the capture asks of the database (issue 32, section 2), counted from the statements the
//! real Oracle client sends to the simulator's SQL door: on an idle database, at most one flush
//! commit and a handful of statements per poll interval, and logs registered with LogMiner once
//! per log set rather than once per window. Counted per round (flush to flush) and against the
//! number of poll intervals that could have passed, so a slow machine only makes the counts
//! smaller.

use crate::load_support;

use std::time::Duration;

use load_support::{ONE_TABLE, run_capture, run_capture_with};
use redoline_capture::simulator::sql::OraError;

/// Statements per idle poll interval the capture may send (the target).
const STATEMENTS_PER_IDLE_POLL: usize = 10;

#[test]
fn an_idle_capture_flushes_once_per_poll_interval_and_sends_few_statements() {
    let issued = run_capture(
        ONE_TABLE,
        "APP.T",
        "mining: {pollIntervalSeconds: 1}\n",
        Duration::from_millis(6000),
        None,
    );
    // The pauses after the first window (which mined the scenario's transaction) are 0.1, 0.2,
    // 0.4 and 0.8 s, then a poll interval and more: three flushes more than one per interval.
    let polls = issued.elapsed.as_secs_f64().ceil() as usize;
    let flushes = issued.flushes();
    assert!(
        flushes <= polls + 3,
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

/// The value of a metric line (`name{labels} value`) in Prometheus text.
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find(|line| line.split([' ', '{']).next() == Some(name))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
}

#[test]
fn the_mining_session_is_recycled_at_its_age_bound_and_its_pga_is_reported() {
    let issued = run_capture(
        ONE_TABLE,
        "APP.T",
        "mining: {pollIntervalSeconds: 1, sessionMaxSeconds: 1}\n",
        Duration::from_millis(3500),
        None,
    );
    // A fresh session registers its logs again (ADD_LOGFILE with NEW): once at the first
    // window and once per recycling, with no log switch in between.
    let new_sets = issued.count(|s| s.contains("ADD_LOGFILE") && s.contains(".NEW)"));
    assert!(
        new_sets >= 2,
        "{new_sets} log sets registered in {:?} with sessions of 1 s: {:#?}",
        issued.elapsed,
        issued.statements
    );
    assert!(
        !issued
            .metrics
            .contains("redoline_capture_logminer_sessions_recycled_total{reason=\"age\"} 0"),
        "{}",
        issued.metrics
    );
    let pga = metric(
        &issued.metrics,
        "redoline_capture_logminer_session_pga_bytes",
    );
    let pga_max = metric(
        &issued.metrics,
        "redoline_capture_logminer_session_pga_max_bytes",
    );
    assert!(pga.is_some_and(|b| b > 0.0), "{}", issued.metrics);
    assert!(pga_max >= pga, "{}", issued.metrics);
}

#[test]
fn a_session_out_of_memory_is_recycled_and_the_window_mined_again_without_a_restart() {
    let issued = run_capture_with(
        ONE_TABLE,
        "APP.T",
        "mining: {pollIntervalSeconds: 1}\n",
        Duration::from_millis(2500),
        None,
        None,
        &|pool| {
            pool.fail_next(
                "V$LOGMNR_CONTENTS",
                OraError::new(
                    4030,
                    "out of process memory when trying to allocate 1048 bytes",
                ),
            )
        },
    );
    assert!(
        issued
            .metrics
            .contains("redoline_capture_logminer_sessions_recycled_total{reason=\"memory\"} 1"),
        "{}",
        issued.metrics
    );
    assert!(
        issued
            .metrics
            .contains("redoline_capture_retries_total{cause=\"session_memory\"} 1"),
        "{}",
        issued.metrics
    );
    // Not a restart from the bookmark: the run's start-up (the layout query) happened once.
    let layouts = issued.count(|s| s.contains("SYS_CONTEXT('USERENV', 'CON_NAME')"));
    assert!(layouts <= 1, "{layouts} connects: {:#?}", issued.statements);
}
