#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! Exactly once through SIGKILL: the real capture writes to the real broker and is killed at
//! random moments, at least 30 times, restarting each time; a `read_committed` consumer then
//! sees every committed transaction exactly once, whole, in commit order, and nothing of a
//! rolled back one. Kills land while a large transaction is spilled and while transactions are
//! journaled (tiny journal thresholds; both confirmed on `/status` before the kill), so restarts
//! rebuild open transactions from the journal, spilled ones included.

use crate::kafka_support;

use std::time::{Duration, Instant};

use kafka_support::{
    Capture, TABLES, Xorshift, bootstrap, free_port, ids, insert, read_values, status,
};

/// Transactions of the workload besides the big one.
const TRANSACTIONS: u32 = 1200;
/// Kills of one run (each restart rebuilds the journaled transactions from the journal topic, which
/// grows with every restart, so later start-ups take seconds).
const KILLS: u32 = 30;
/// Kills stop being attempted after this, so the test stays bounded on a slow machine. The 30
/// kills take about 3 minutes on an idle machine; under the load of the whole suite start-ups
/// grow (each rebuilds a longer journal) and 240 s gave only 23 of them, failing the count
/// below. Ten minutes stays well inside nextest's 16-minute stop.
const KILL_BUDGET: Duration = Duration::from_secs(600);
/// A run not streaming by then is killed anyway.
const START_UP_LIMIT: Duration = Duration::from_secs(30);

/// A deterministic interleaving: small transactions with savepoint rollbacks and rollbacks, one
/// big transaction of 3 KB rows, over the 16 MiB heap budget early on (so it spills), open
/// until near the end, and a long one open from the start to the end with a row now and
/// then (both pass the journal threshold of 20 rows). Returns the scenario and the ids a consumer must see, in
/// commit order.
fn workload() -> (String, Vec<u64>) {
    let mut lines = String::from(TABLES);
    let mut expected = Vec::new();
    let mut random = Xorshift::new(0x9e37_79b9_7f4a_7c15);
    let mut next = || random.next();
    let big_note = "b".repeat(3000);
    let mut big = Vec::new();
    let mut big_done = false;
    let mut long = Vec::new();
    let mut id = 0u64;
    let mut open: Vec<(u32, Vec<u64>)> = Vec::new();
    let mut started = 0;
    while started < TRANSACTIONS || !open.is_empty() {
        if started < TRANSACTIONS && (open.len() < 3 || next() % 3 == 0) {
            open.push((started, Vec::new()));
            started += 1;
        }
        // The big transaction gets its 8,000 rows of 3 KB early, so it is spilled for most of
        // the run, and commits late.
        for _ in 0..100 {
            if !big_done && big.len() < 8000 {
                id += 1;
                lines.push_str(&insert("big", id, &big_note));
                big.push(id);
            }
        }
        let pick = (next() % open.len() as u64) as usize;
        let tx = format!("t{}", open[pick].0);
        match next() % 10 {
            0 if !open[pick].1.is_empty() => {
                lines.push_str(&format!("{{\"tx\":\"{tx}\",\"rollback\":true}}\n"));
                open.remove(pick);
            }
            1 | 2 if !open[pick].1.is_empty() => {
                lines.push_str(&format!("{{\"tx\":\"{tx}\",\"commit\":true}}\n"));
                expected.extend(open.remove(pick).1);
            }
            3 => {
                id += 1;
                lines.push_str(&format!("{{\"tx\":\"{tx}\",\"savepoint\":\"s\"}}\n"));
                lines.push_str(&insert(&tx, id, "undone"));
                lines.push_str(&format!("{{\"tx\":\"{tx}\",\"rollback_to\":\"s\"}}\n"));
            }
            _ => {
                id += 1;
                lines.push_str(&insert(&tx, id, "x"));
                open[pick].1.push(id);
            }
        }
        if started == TRANSACTIONS * 9 / 10 && !big_done {
            lines.push_str("{\"tx\":\"big\",\"commit\":true}\n");
            expected.append(&mut big);
            big_done = true;
        }
        if next() % 15 == 0 {
            id += 1;
            lines.push_str(&insert("long", id, "long"));
            long.push(id);
        }
        if next() % 50 == 0 {
            lines.push_str("{\"log_switch\":true}\n");
        }
    }
    lines.push_str("{\"tx\":\"long\",\"commit\":true}\n");
    expected.append(&mut long);
    (lines, expected)
}

/// What a kill's delay is counted from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KillMoment {
    StartUp,
    Streaming,
    Spilled,
}

/// Whether a spill file exists: `/status` refreshes after pages, the spill directory at once.
fn spilled(capture: &Capture) -> bool {
    std::fs::read_dir(capture.path("spill")).is_ok_and(|entries| {
        entries.flatten().any(|entry| {
            entry.path().extension().and_then(|e| e.to_str())
                == Some(redoline_capture::buffer::SPILL_EXTENSION.trim_start_matches('.'))
        })
    })
}

#[test]
fn sigkill_at_random_moments_neither_repeats_nor_loses_nor_splits_a_transaction() {
    let bootstrap = bootstrap();
    let (scenario, expected) = workload();
    let prefix = kafka_support::unique_prefix("crash");
    let port = free_port();
    let capture = Capture::new(&scenario, &bootstrap, &prefix, "");
    capture.write_config(
        "capture.yaml",
        &bootstrap,
        &prefix,
        port,
        "buffer: {memoryMaxBytes: 16Mi, spill: {dir: spill, maxBytes: 1Gi}}\n\
         journal: {thresholdSeconds: 300, thresholdEvents: 20}\n\
         mining: {maxScnWindow: 1000}\n",
    );

    let started = Instant::now();
    let mut kills = 0;
    let mut kills_while_spilled = 0;
    let mut kills_while_journaled = 0;
    let mut kills_while_streaming = 0;
    let mut caught_up = 0;
    let mut seed = 0x2545_f491_u64;
    // Three kills in five land 0 .. span after the run reports streaming (mining, spilled and
    // journaled transactions, commits), one 0 .. 100 ms after a spill file appears (the big
    // transaction re-read past the heap budget), one 150 ms .. span after the start (fencing,
    // bookmark, schema history, journal rebuild). Timed from streaming alone, kills landed
    // while spilled only when a run re-read the big transaction within the span: on a busy
    // machine (tests running side by side) once in 30 kills. Timing kills from the start alone missed
    // streaming altogether on a machine whose start-up takes longer than the span. The span
    // shrinks to the length of a run that ended before its kill (once caught up runs are short).
    // Only the first pass streams (a caught-up run reaches the end at once), and a fast machine
    // makes that pass a few seconds long: a span of 2.5 s let it catch up after 5 to 8 kills
    // while streaming; with 1 s, 23 of 30 kills landed there.
    let mut span_ms = 1000u64;
    while kills < KILLS && started.elapsed() < KILL_BUDGET {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let moment = match (seed >> 40) % 5 {
            0 => KillMoment::StartUp,
            1 => KillMoment::Spilled,
            _ => KillMoment::Streaming,
        };
        let delay = match moment {
            KillMoment::StartUp => Duration::from_millis(150 + (seed >> 33) % span_ms),
            KillMoment::Streaming => Duration::from_millis((seed >> 33) % span_ms),
            // Soon after the spill: a run killed late gets far, and the first pass (the only
            // one that streams) would end after fewer kills.
            KillMoment::Spilled => Duration::from_millis((seed >> 33) % 100),
        };
        let mut child = capture.spawn("capture.yaml", true, "killed");
        let spawned = Instant::now();
        let mut streaming_since = None;
        let mut spilled_since = None;
        let mut last_status = None;
        loop {
            if let Some(report) = status(port) {
                if report["state"] == "streaming" && streaming_since.is_none() {
                    streaming_since = Some(Instant::now());
                }
                last_status = Some(report);
            }
            // Once streaming: a start-up removes the spill files a killed run left behind.
            if spilled_since.is_none() && streaming_since.is_some() && spilled(&capture) {
                spilled_since = Some(Instant::now());
            }
            let reference = match moment {
                KillMoment::StartUp => Some(spawned),
                KillMoment::Streaming => streaming_since,
                KillMoment::Spilled => spilled_since,
            };
            if reference.is_some_and(|since| since.elapsed() >= delay)
                || spawned.elapsed() > START_UP_LIMIT
                || child.try_wait().is_some()
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Some(status) = child.try_wait() {
            assert_eq!(status.code(), Some(0), "a run failed: {}", child.stderr());
            // Caught up before the kill; later runs still restart from the bookmark (fencing,
            // re-mining from the restart SCN, skipping what was emitted), so kills go on.
            caught_up += 1;
            let since = streaming_since.unwrap_or(spawned);
            let ran = u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX);
            span_ms = span_ms.min(ran.saturating_sub(150)).max(50);
            continue;
        }
        // The report just before the kill tells what state the kill interrupted.
        if let Some(report) = status(port).or(last_status) {
            if report["state"] == "streaming" {
                kills_while_streaming += 1;
            }
            if report["spilledTransactions"].as_u64().unwrap_or(0) > 0 || spilled(&capture) {
                kills_while_spilled += 1;
            }
            if report["journaledTransactions"].as_u64().unwrap_or(0) > 0 {
                kills_while_journaled += 1;
            }
        }
        child.kill();
        kills += 1;
    }
    let (code, stderr) = capture.run("capture.yaml");
    assert_eq!(code, 0, "{stderr}");
    let elapsed = started.elapsed();
    eprintln!(
        "{kills} kills ({kills_while_streaming} while streaming, {kills_while_spilled} while a \
         transaction was spilled, {kills_while_journaled} while one was journaled), {caught_up} \
         runs ended before their kill, in {elapsed:?}"
    );

    let events = read_values(&bootstrap, &format!("{prefix}.APP.ITEMS"));
    let seen = ids(&events);
    assert_eq!(seen.len(), expected.len(), "every committed change once");
    assert_eq!(seen, expected, "exactly once, whole, in commit order");
    let commit_scns: Vec<u64> = events
        .iter()
        .map(|e| e["commit_scn"].as_u64().unwrap())
        .collect();
    assert!(commit_scns.windows(2).all(|w| w[0] <= w[1]), "commit order");
    assert!(
        kills >= KILLS,
        "only {kills} kills before the capture caught up"
    );
    assert!(
        kills_while_streaming >= 10,
        "kills while streaming: {kills_while_streaming}"
    );
    assert!(
        kills_while_spilled >= 3,
        "kills while spilled: {kills_while_spilled}"
    );
    assert!(
        kills_while_journaled >= 3,
        "kills while journaled: {kills_while_journaled}"
    );
}
