#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! What the capture asks of the database (issue 32, section 2): statements, LogMiner session
//! starts, logs registered, flush commits and the redo those commits make, for an idle database,
//! a steady load, and a capture that starts behind a backlog.
//!
//! ```sh
//! cargo bench -p redoline-capture --bench database_load
//! ```
//!
//! The capture runs in this process with the real Oracle client over the simulator's SQL door
//! (`database.simulator.through: sql`, `tests/load_support`), default config but for the file
//! sink, whose pages hold many transactions ([`PAGES`]); every statement the client sends is
//! counted from `SimulatorPool::issued`. Workloads:
//! - idle: `REDOLINE_BENCH_LOAD_IDLE_SECONDS` (default 60) of a database where nothing happens,
//!   extrapolated to an hour;
//! - steady: one-row transactions at `REDOLINE_BENCH_LOAD_TPS` (default 2,000) for
//!   `REDOLINE_BENCH_LOAD_STEADY_SECONDS` (default 20), a log switch every 10 s; the records
//!   captured per second are printed, and whether the capture kept up;
//! - behind: `REDOLINE_BENCH_LOAD_BACKLOG` (default 100,000: an hour at 2,000 tx/s scaled down
//!   72 times, the figures per change hold) one-row transactions already in the redo, a log
//!   switch every 5,000, the capture starting from the oldest redo and running until it has
//!   caught up.
//!
//! Redo the capture makes: the flush commits only (the capture writes nothing else). The
//! simulator does not model redo bytes, so the figure is flush commits × an estimate of the redo
//! of a one-row, one-column UPDATE and its commit ([`REDO_PER_FLUSH_BYTES`]), not a measurement.
//!
//! Beside each figure: what Debezium 3.x's loop issues for the same workload, worked out from its
//! code, not measured (`BufferedLogMinerStreamingChangeEventSource.executeLogMiningStreaming`,
//! `AbstractLogMinerStreamingChangeEventSource`, `LogFileCollector.getLogs`,
//! `CommitLogWriterFlushStrategy`). Per iteration, on one instance, with no log switch:
//! `SYSTIMESTAMP` (database time difference), the current log sequences (log switch check), the
//! current SCN, `V$THREAD` (upper bound), the current SCN again and the flush UPDATE (commit),
//! `V$THREAD` again and the log listing (`getLogs`), the redo log status query, START_LOGMNR,
//! the contents query, and four `V$MYSTAT` queries for its UGA/PGA metrics: 15 statements and
//! one flush commit. After a log switch, END_LOGMNR and one ADD_LOGFILE per log of the new set
//! (about one per thread for the online logs plus the archived logs still needed; counted here as
//! 2). After each iteration it sleeps: a fixed 1 s since 3.5 (`pauseBetweenMiningSessions`);
//! up to 3.4 the sleep starts at 1 s, grows by 200 ms per iteration that reached the current
//! SCN, to 3 s, and shrinks by 200 ms per iteration cut by the batch size (`log.mining.sleep.
//! time.*`). Both are printed (3.5+ / 3.0–3.4). Behind: since 3.5 an iteration mines up to the
//! current SCN (`calculateUpperBounds` has no batch bound any more), so one iteration takes the
//! whole backlog; up to 3.4 an iteration mines at most the batch size, 20,000 SCNs growing by
//! `log.mining.batch.size.increment` (20,000) per iteration to 100,000 (`incrementBatchSize`).
//!
//! Targets: idle ≤ 1 flush commit and ≤ 10 statements per poll interval; busy within 1.5× of
//! Debezium's statements per change. Printed, never asserted.

#[path = "../tests/load_support/mod.rs"]
mod load_support;
mod support;

use std::fmt::Write as _;
use std::time::Duration;

use load_support::{Issued, run_capture, run_capture_with};
use redoline_capture::simulator::Simulator;
use support::env_number;

/// Debezium's statements per iteration (see the module docs).
const DEBEZIUM_STATEMENTS_PER_ITERATION: f64 = 15.0;
/// Debezium's ADD_LOGFILE calls after a log switch (END_LOGMNR, then the new set).
const DEBEZIUM_LOGS_PER_SWITCH: f64 = 2.0;
/// Debezium's batch (3.0–3.4): the default, the increment and the largest
/// (`log.mining.batch.size.default`, `.increment`, `.max`).
const DEBEZIUM_BATCH_SCNS: (u64, u64, u64) = (20_000, 20_000, 100_000);

/// Debezium 3.0–3.4's iterations to mine `span` SCNs from behind: each a batch, growing.
fn debezium_batches(span: u64) -> f64 {
    let (mut batch, increment, max) = DEBEZIUM_BATCH_SCNS;
    let (mut mined, mut iterations) = (0, 0);
    while mined < span {
        mined += batch;
        iterations += 1;
        batch = (batch + increment).min(max);
    }
    f64::from(iterations.max(1))
}
/// Redo of one flush commit: a one-row UPDATE of a NUMBER column (undo and redo change vectors)
/// and its commit record. An estimate of the order of magnitude Oracle's `redo size` statistic
/// shows for such a transaction; the simulator does not model redo bytes.
const REDO_PER_FLUSH_BYTES: f64 = 1024.0;
/// The capture's poll interval (default config).
const POLL_SECONDS: f64 = 1.0;
/// The file sink's pages: many transactions each, committed at the end of each window
/// (`mining.batchSize: 0`), as the Kafka sink's pages are by default. The file sink's default, a
/// page per transaction, syncs the data file and replaces the bookmark file for every
/// transaction: three `fsync`s each, which on this kind of disk hold the capture to some 500
/// transactions a second whatever the database does, so a bench of what the capture asks of the
/// database at 2,000 a second would measure the disk instead (2026-12-05: 551 a second).
const PAGES: &str = "mining: {batchSize: 0}";

const TABLE: &str = r#"{"table":"APP.T","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"NAME","type":"VARCHAR2(40)"}],"logging":"all"}"#;

fn transaction(id: u64) -> String {
    format!(
        "{{\"tx\":\"t{id}\",\"insert\":\"APP.T\",\"values\":{{\"ID\":{id},\"NAME\":\"row {id}\"}}}}\n\
         {{\"tx\":\"t{id}\",\"commit\":true}}\n"
    )
}

/// Figures per unit of time of one run.
struct Figures {
    seconds: f64,
    statements: f64,
    starts: f64,
    logs: f64,
    flushes: f64,
    records: f64,
}

impl Figures {
    /// The run's figures from its first flush on: what comes before is start-up (the
    /// catalog, privileges and table reads, once per run, Debezium's too), printed apart.
    fn of(issued: &Issued) -> Self {
        let start_up = issued
            .statements
            .iter()
            .position(|s| s.starts_with("UPDATE ") && s.contains("LAST_SCN"))
            .unwrap_or(0);
        let mining = &issued.statements[start_up..];
        let count = |what: &str| mining.iter().filter(|s| s.contains(what)).count() as f64;
        println!("  ({start_up} start-up statements before the first flush, not counted below)");
        Self {
            seconds: issued.elapsed.as_secs_f64(),
            statements: mining.len() as f64,
            starts: count("START_LOGMNR"),
            logs: count("ADD_LOGFILE"),
            flushes: issued.flushes() as f64,
            records: issued.records as f64,
        }
    }

    fn per_second(&self, count: f64) -> f64 {
        count / self.seconds
    }

    fn per_minute(&self, count: f64) -> f64 {
        count * 60.0 / self.seconds
    }

    fn redo_per_hour(&self) -> f64 {
        self.flushes * 3600.0 / self.seconds * REDO_PER_FLUSH_BYTES
    }
}

/// Debezium's figures for a run of `seconds` with `iterations` iterations and `switches` log
/// switches.
struct Debezium {
    seconds: f64,
    iterations: f64,
    switches: f64,
}

impl Debezium {
    fn statements(&self) -> f64 {
        self.iterations * DEBEZIUM_STATEMENTS_PER_ITERATION
            + self.switches * (1.0 + DEBEZIUM_LOGS_PER_SWITCH)
    }

    fn per_second(&self, count: f64) -> f64 {
        count / self.seconds
    }

    fn per_minute(&self, count: f64) -> f64 {
        count * 60.0 / self.seconds
    }
}

fn row(out: &mut String, what: &str, ours: f64, debezium: &[(&str, f64)]) {
    let _ = write!(out, "  {what:<34} {ours:>12.2}");
    for (label, value) in debezium {
        let _ = write!(out, "   Debezium {label}: {value:>10.2}");
    }
    out.push('\n');
}

fn report(title: &str, figures: &Figures, debezium: &[(&str, Debezium)], changes: Option<f64>) {
    let mut out = format!(
        "{title}: {:.1} s, {} statements, {} records\n",
        figures.seconds, figures.statements, figures.records
    );
    let each = |f: &dyn Fn(&Debezium) -> f64| -> Vec<(&str, f64)> {
        debezium.iter().map(|(label, d)| (*label, f(d))).collect()
    };
    row(
        &mut out,
        "statements per second",
        figures.per_second(figures.statements),
        &each(&|d| d.per_second(d.statements())),
    );
    row(
        &mut out,
        "statements per poll interval",
        figures.per_second(figures.statements) * POLL_SECONDS,
        &each(&|d| d.per_second(d.statements()) * POLL_SECONDS),
    );
    row(
        &mut out,
        "LogMiner starts per minute",
        figures.per_minute(figures.starts),
        &each(&|d| d.per_minute(d.iterations)),
    );
    row(
        &mut out,
        "logs registered per minute",
        figures.per_minute(figures.logs),
        &each(&|d| d.per_minute(d.switches * DEBEZIUM_LOGS_PER_SWITCH)),
    );
    row(
        &mut out,
        "flush commits per minute",
        figures.per_minute(figures.flushes),
        &each(&|d| d.per_minute(d.iterations)),
    );
    row(
        &mut out,
        "flush commits per poll interval",
        figures.per_second(figures.flushes) * POLL_SECONDS,
        &each(&|d| d.per_second(d.iterations) * POLL_SECONDS),
    );
    row(
        &mut out,
        "redo made per hour (KiB, estimate)",
        figures.redo_per_hour() / 1024.0,
        &each(&|d| d.per_second(d.iterations) * 3600.0 * REDO_PER_FLUSH_BYTES / 1024.0),
    );
    if let Some(changes) = changes {
        row(
            &mut out,
            "statements per 1,000 changes",
            figures.statements * 1000.0 / changes.max(1.0),
            &each(&|d| d.statements() * 1000.0 / changes.max(1.0)),
        );
    }
    println!("{out}");
}

fn idle() {
    let seconds = env_number("REDOLINE_BENCH_LOAD_IDLE_SECONDS", 60);
    let scenario = format!("{TABLE}\n{}", transaction(1));
    let issued = run_capture(
        &scenario,
        "APP.T",
        PAGES,
        Duration::from_secs(seconds),
        None,
    );
    let figures = Figures::of(&issued);
    let hour = 3600.0;
    report(
        &format!("idle ({seconds} s, figures per second/minute hold for an hour)"),
        &figures,
        &[
            // 3.5+: one iteration per second (the 1 s sleep; an idle iteration takes ms).
            (
                "3.5+",
                Debezium {
                    seconds: hour,
                    iterations: hour,
                    switches: 0.0,
                },
            ),
            // 3.0–3.4: every idle iteration reaches the current SCN, so the sleep grows to 3 s.
            (
                "3.0-3.4",
                Debezium {
                    seconds: hour,
                    iterations: hour / 3.0,
                    switches: 0.0,
                },
            ),
        ],
        None,
    );
    println!(
        "  per hour: {:.0} statements, {:.0} flush commits, {:.0} LogMiner starts, {:.0} logs registered\n",
        figures.statements * hour / figures.seconds,
        figures.flushes * hour / figures.seconds,
        figures.starts * hour / figures.seconds,
        figures.logs * hour / figures.seconds,
    );
}

fn steady() {
    let tps = env_number("REDOLINE_BENCH_LOAD_TPS", 2_000);
    let seconds = env_number("REDOLINE_BENCH_LOAD_STEADY_SECONDS", 20);
    let mut applied = 1u64;
    let mut switches = 0u64;
    let mut workload = |simulator: &mut Simulator, elapsed: Duration| {
        let due = 1 + (elapsed.as_secs_f64() * tps as f64) as u64;
        while applied < due {
            applied += 1;
            let _ = simulator.apply_reader(transaction(applied).as_bytes());
        }
        if elapsed.as_secs() / 10 > switches {
            switches += 1;
            let _ = simulator.apply_line("{\"log_switch\":true}");
        }
    };
    let scenario = format!("{TABLE}\n{}", transaction(1));
    let issued = run_capture_with(
        &scenario,
        "APP.T",
        PAGES,
        Duration::from_secs(seconds),
        None,
        Some(&mut workload),
        &|_| {},
    );
    let figures = Figures::of(&issued);
    let changes = figures.records;
    println!(
        "steady: {applied} transactions applied at {tps}/s; the capture wrote {:.0} records, {:.0} a second",
        changes,
        figures.per_second(changes)
    );
    if changes < 0.95 * applied as f64 {
        println!(
            "  the capture fell behind ({:.0} of {applied} transactions captured by the end): the \
             figures below are those of a capture mining a growing backlog",
            changes
        );
    } else {
        println!("  the capture kept up");
    }
    // What one window under load sends: the round in the middle of the run, flush to flush.
    let rounds = issued.rounds();
    if let Some(round) = rounds.get(rounds.len() / 2) {
        println!(
            "  a window under load, flush to flush, {} statements:",
            round.len()
        );
        for statement in round.iter() {
            let shown: String = statement.chars().take(90).collect();
            println!("    {shown}");
        }
    }
    report(
        &format!("steady {tps} tx/s"),
        &figures,
        &[
            // 3.5+: an iteration, then 1 s asleep.
            (
                "3.5+",
                Debezium {
                    seconds: figures.seconds,
                    iterations: figures.seconds,
                    switches: switches as f64,
                },
            ),
            // 3.0–3.4: each iteration reaches the current SCN (2,000 tx/s is below its 20,000
            // SCN batch), so its sleep grows to 3 s.
            (
                "3.0-3.4",
                Debezium {
                    seconds: figures.seconds,
                    iterations: figures.seconds / 3.0,
                    switches: switches as f64,
                },
            ),
        ],
        Some(changes),
    );
}

fn behind() {
    let backlog = env_number("REDOLINE_BENCH_LOAD_BACKLOG", 100_000);
    let mut scenario = format!("{TABLE}\n");
    for id in 1..=backlog {
        scenario.push_str(&transaction(id));
        if id % 5_000 == 0 {
            scenario.push_str("{\"log_switch\":true}\n");
        }
    }
    let switches = (backlog / 5_000) as f64;
    // The SCNs the backlog spans: the current SCN once it is loaded, less that of the table alone.
    let current_scn = |text: &str| {
        use redoline_capture::source::DatabaseCatalog;
        Simulator::from_reader(text.as_bytes())
            .ok()
            .and_then(|mut simulator| simulator.current_scn().ok())
            .unwrap_or(0)
    };
    let span = current_scn(&scenario).saturating_sub(current_scn(&format!("{TABLE}\n")));
    let issued = run_capture_with(
        &scenario,
        "APP.T",
        PAGES,
        Duration::from_secs(600),
        Some(backlog as usize),
        None,
        &|_| {},
    );
    let figures = Figures::of(&issued);
    report(
        &format!(
            "behind by {backlog} transactions ({span} SCNs, {switches:.0} log switches), caught up"
        ),
        &figures,
        &[
            // 3.5+: one iteration up to the current SCN takes the backlog.
            (
                "3.5+",
                Debezium {
                    seconds: figures.seconds,
                    iterations: 1.0,
                    switches,
                },
            ),
            // 3.0–3.4: growing batches; iterations cut by the batch size shrink the sleep to 0.
            (
                "3.0-3.4",
                Debezium {
                    seconds: figures.seconds,
                    iterations: debezium_batches(span),
                    switches,
                },
            ),
        ],
        Some(figures.records),
    );
}

fn main() {
    idle();
    steady();
    behind();
}
