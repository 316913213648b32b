//! Rows the Oracle simulator produces per second on one thread, through `stream_rows` (the path
//! the capture uses), for a typical insert/update mix.
//!
//! ```sh
//! cargo bench -p redoline-capture --bench simulator
//! taskset -c 1 cargo bench -p redoline-capture --bench simulator   # pinned to one core
//! ```
//!
//! Workload: a 5-column table (NUMBER(10) key, VARCHAR2(40), NUMBER(12,2), DATE, TIMESTAMP(6)),
//! ALL-column supplemental logging, transactions of 10 changes (7 inserts, 3 updates of rows
//! inserted earlier), each a START row, 10 DML rows and a COMMIT row. The steps are built in
//! Rust beforehand (not timed) as [`TypedStep`]s, the path a capture benchmark uses for a
//! generated workload (values already typed, the table resolved once); the window does not ask
//! for SQL_UNDO, as the capture's Oracle client never selects it. Four figures, each the best
//! of several rounds after a warm-up:
//! - `generate + stream`: apply the typed steps to a fresh simulator, flush, mine one window and
//!   stream every row (the end-to-end rate a capture benchmark sees);
//! - `generate`: applying the typed steps only (rendering SQL_REDO, row state, redo);
//! - `generate (JSON)`: applying the same workload as [`Step`]s with JSON values (typed per
//!   row, as scenario files are), for comparison;
//! - `stream`: streaming an already generated window again (the view's filter and row clone).
//!
//! Each figure is given twice: per second of wall-clock time, and per second the thread spent on
//! a CPU (`/proc/thread-self/schedstat`), which is the one-core rate even when other builds share
//! the machine. Figures are printed, never asserted; the target is 1,000,000 rows/s for
//! `generate + stream` on one core.

mod support;

use std::hint::black_box;
use std::ops::ControlFlow;

use jiff::civil;
use redoline_capture::simulator::scenario::{Dml, Step};
use redoline_capture::simulator::{Simulator, TableHandle, TypedStep};
use redoline_capture::source::{DatabaseCatalog, MiningWindow, RedoMiner};
use redoline_capture::value::{OracleNumber, Value};
use redoline_testenv::random::Xorshift;
use serde_json::{Value as Json, json};
use support::{Clock, best_rate};

const TRANSACTIONS: u64 = 20_000;
const CHANGES_PER_TRANSACTION: u64 = 10;
const INSERTS_PER_TRANSACTION: u64 = 7;
const ROUNDS: usize = 5;
const TARGET_ROWS_PER_SECOND: f64 = 1_000_000.0;

const TABLE: &str = r#"{"table":"BENCH.T","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"NAME","type":"VARCHAR2(40)"},{"name":"AMOUNT","type":"NUMBER(12,2)"},{"name":"CREATED","type":"DATE"},{"name":"UPDATED_AT","type":"TIMESTAMP(6)"}],"logging":"all"}"#;

fn dml(tx: &str) -> Dml {
    Dml {
        tx: tx.to_owned(),
        table: "BENCH.T".to_owned(),
        fails: false,
        user: None,
    }
}

/// The workload, independent of how steps are written.
enum Change {
    /// A new row `id` with values from `n`.
    Insert {
        tx: String,
        id: u64,
        n: u64,
    },
    /// `AMOUNT` of row `id` set from `n`.
    Update {
        tx: String,
        id: u64,
        n: u64,
    },
    Commit {
        tx: String,
    },
}

fn changes() -> Vec<Change> {
    let mut random = Xorshift::new(0x5eed_0003_abcd_ef01);
    let mut changes = Vec::new();
    let mut inserted = 0u64;
    for transaction in 0..TRANSACTIONS {
        let tx = format!("t{}", transaction % 64);
        for change in 0..CHANGES_PER_TRANSACTION {
            let n = random.below(1_000_000);
            if change < INSERTS_PER_TRANSACTION || inserted == 0 {
                inserted += 1;
                changes.push(Change::Insert {
                    tx: tx.clone(),
                    id: inserted,
                    n,
                });
            } else {
                // An older row: its transaction committed before this one began.
                let id = 1 + random
                    .below(inserted - (inserted % INSERTS_PER_TRANSACTION).min(inserted - 1));
                changes.push(Change::Update {
                    tx: tx.clone(),
                    id,
                    n,
                });
            }
        }
        changes.push(Change::Commit { tx });
    }
    changes
}

fn amount(n: u64) -> String {
    format!("{}.{:02}", n / 100, n % 100)
}

fn number(text: &str) -> Value {
    match OracleNumber::parse(text) {
        Ok(number) => Value::Number(number),
        Err(error) => {
            eprintln!("bad number {text}: {error}");
            std::process::exit(1);
        }
    }
}

fn created(n: u64) -> civil::DateTime {
    civil::date(2024, (n % 12 + 1) as i8, (n % 28 + 1) as i8).at(
        (n % 24) as i8,
        (n % 60) as i8,
        (n / 60 % 60) as i8,
        0,
    )
}

/// The workload as typed steps on `table` (columns in declaration order).
fn typed_workload(table: TableHandle) -> Vec<TypedStep> {
    changes()
        .into_iter()
        .map(|change| match change {
            Change::Insert { tx, id, n } => TypedStep::Insert {
                tx,
                table,
                values: vec![
                    number(&id.to_string()),
                    Value::Text(format!("Customer O'Brien {n}")),
                    number(&amount(n)),
                    Value::Date(created(n)),
                    Value::Timestamp(civil::date(2024, 3, 4).at(5, 6, 7, (n * 1000) as i32)),
                ],
            },
            Change::Update { tx, id, n } => TypedStep::Update {
                tx,
                table,
                where_: vec![(0, number(&id.to_string()))],
                set: vec![(2, number(&amount(n)))],
            },
            Change::Commit { tx } => TypedStep::Commit { tx },
        })
        .collect()
}

/// The workload as scenario steps with JSON values.
fn json_workload() -> Vec<Step> {
    changes()
        .into_iter()
        .map(|change| match change {
            Change::Insert {
                tx,
                id: inserted,
                n,
            } => {
                let values: Vec<(String, Json)> = vec![
                    ("ID".to_owned(), json!(inserted)),
                    ("NAME".to_owned(), json!(format!("Customer O'Brien {n}"))),
                    (
                        "AMOUNT".to_owned(),
                        json!(format!("{}.{:02}", n / 100, n % 100)),
                    ),
                    (
                        "CREATED".to_owned(),
                        json!(format!(
                            "2024-{:02}-{:02}T{:02}:{:02}:{:02}",
                            n % 12 + 1,
                            n % 28 + 1,
                            n % 24,
                            n % 60,
                            n / 60 % 60
                        )),
                    ),
                    (
                        "UPDATED_AT".to_owned(),
                        json!(format!("2024-03-04T05:06:07.{:06}", n)),
                    ),
                ];
                Step::Insert {
                    dml: dml(&tx),
                    values,
                }
            }
            Change::Update { tx, id, n } => Step::Update {
                dml: dml(&tx),
                where_: vec![("ID".to_owned(), json!(id))],
                set: vec![("AMOUNT".to_owned(), json!(amount(n)))],
            },
            Change::Commit { tx } => Step::Commit { tx },
        })
        .collect()
}

fn refused(error: impl std::fmt::Display) -> ! {
    eprintln!("workload step refused: {error}");
    std::process::exit(1);
}

/// A fresh simulator with the bench table; `handle` must be the table's handle in it.
fn simulator(handle: Option<TableHandle>) -> Simulator {
    let mut sim = Simulator::new();
    if let Err(error) = sim.apply_line(TABLE) {
        refused(error);
    }
    if handle.is_some() && sim.table_handle("BENCH", "T") != handle {
        refused("the table handle differs between fresh simulators");
    }
    sim
}

fn generate(handle: TableHandle, steps: Vec<TypedStep>) -> Simulator {
    let mut sim = simulator(Some(handle));
    for step in steps {
        if let Err(error) = sim.apply_typed(step) {
            refused(error);
        }
    }
    sim
}

fn generate_json(steps: Vec<Step>) -> Simulator {
    let mut sim = simulator(None);
    for step in steps {
        if let Err(error) = sim.apply(step) {
            refused(error);
        }
    }
    sim
}

fn stream(sim: &mut Simulator, window: &MiningWindow) -> u64 {
    let _ = sim.start_mining(window);
    let mut bytes = 0usize;
    let rows = sim
        .stream_rows(&mut |row| {
            bytes += row.sql_redo.as_ref().map_or(0, String::len);
            black_box(&row);
            ControlFlow::Continue(())
        })
        .unwrap_or(0);
    black_box(bytes);
    rows
}

fn window(sim: &mut Simulator) -> MiningWindow {
    let end = sim.current_scn().unwrap_or(0);
    let _ = sim.flush_redo();
    MiningWindow {
        start_scn: 0,
        end_scn: end,
        logs: sim
            .logs_covering(0)
            .map(|plan| plan.logs)
            .unwrap_or_default(),
        objects: Vec::new(),
        tables: vec![("BENCH".to_owned(), "T".to_owned())],
        pdb: None,
        with_sql_undo: false,
    }
}

fn main() {
    let Some(handle) = simulator(None).table_handle("BENCH", "T") else {
        refused("the bench table has no handle");
    };
    let steps = typed_workload(handle);
    let json_steps = json_workload();
    let (rows, end_to_end, end_to_end_cpu) = best_rate(ROUNDS, || {
        let steps = steps.clone();
        let clock = Clock::start();
        let mut sim = generate(handle, steps);
        let window = window(&mut sim);
        let rows = stream(&mut sim, &window);
        (rows, clock.stop())
    });
    let (_, generation, generation_cpu) = best_rate(ROUNDS, || {
        let steps = steps.clone();
        let clock = Clock::start();
        let sim = generate(handle, steps);
        let elapsed = clock.stop();
        black_box(&sim);
        ((TRANSACTIONS * (CHANGES_PER_TRANSACTION + 2)), elapsed)
    });
    let (_, json_generation, json_generation_cpu) = best_rate(ROUNDS, || {
        let steps = json_steps.clone();
        let clock = Clock::start();
        let sim = generate_json(steps);
        let elapsed = clock.stop();
        black_box(&sim);
        ((TRANSACTIONS * (CHANGES_PER_TRANSACTION + 2)), elapsed)
    });
    let mut sim = generate(handle, steps.clone());
    let window = window(&mut sim);
    let (_, streaming, streaming_cpu) = best_rate(ROUNDS, || {
        let clock = Clock::start();
        let rows = stream(&mut sim, &window);
        (rows, clock.stop())
    });
    println!(
        "simulator: {TRANSACTIONS} transactions x ({CHANGES_PER_TRANSACTION} changes: {INSERTS_PER_TRANSACTION} inserts, {} updates) = {rows} rows per round, 5-column table, ALL logging",
        CHANGES_PER_TRANSACTION - INSERTS_PER_TRANSACTION
    );
    println!(
        "                     {:>14} {:>14}",
        "wall rows/s", "on-CPU rows/s"
    );
    println!("  generate + stream: {end_to_end:>14.0} {end_to_end_cpu:>14.0}");
    println!("  generate         : {generation:>14.0} {generation_cpu:>14.0}");
    println!("  generate (JSON)  : {json_generation:>14.0} {json_generation_cpu:>14.0}");
    println!("  stream           : {streaming:>14.0} {streaming_cpu:>14.0}");
    println!(
        "  target {TARGET_ROWS_PER_SECOND:.0} rows/s (generate + stream): wall {}, on-CPU {}",
        support::verdict(end_to_end, TARGET_ROWS_PER_SECOND),
        support::verdict(end_to_end_cpu, TARGET_ROWS_PER_SECOND)
    );
}
