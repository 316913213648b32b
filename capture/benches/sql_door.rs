#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]
//! How fast the simulator's SQL door answers the contents query, the statement that carries
//! every change (`database.simulator.through: sql`, what `database_load` runs the capture on).
//!
//! ```sh
//! cargo bench -p redoline-capture --bench sql_door
//! ```
//!
//! Workload: `REDOLINE_BENCH_DOOR_TRANSACTIONS` (default 20,000) one-row INSERT transactions on
//! the captured `APP.T`, each followed by one on `APP.OTHER`, which is not captured: LogMiner
//! shows both tables' rows, and the contents query's WHERE clause keeps the captured table's
//! and every transaction's START and COMMIT, so half of the DML rows are rejected by the
//! predicate. One window over all of it. Three figures, each the best of several rounds:
//! - `direct`: the simulator's own `stream_rows`, what LogMiner has to show (the floor);
//! - `door`: the client's contents query run on a door session (`SqlSession::query`, parsed and
//!   evaluated by the SQL model, values handed over as the cells of a fetch), no row mapping;
//! - `client`: the real client's `stream_rows` through the door, cells mapped to rows as for
//!   Oracle: what the capture sees.
//!
//! Rows per second are of rows returned to the caller (for `direct`, rows LogMiner shows), by
//! wall clock and by the thread's time on a CPU. Printed, never asserted; the steady load of
//! `database_load` (2,000 one-row transactions a second, three rows each) needs 6,000 rows a
//! second from `client`.

mod support;

use std::hint::black_box;
use std::ops::ControlFlow;

use redoline_capture::simulator::Simulator;
use redoline_capture::simulator::sql::SimulatorPool;
use redoline_capture::source::oracle::sql::contents_query;
use redoline_capture::source::oracle::{
    Bind, CONTENTS_FETCH_ROWS, ConnectOptions, Fetch, OracleClient, SessionPool, SqlSession,
};
use redoline_capture::source::{DatabaseCatalog, MiningWindow, RedoMiner};
use support::{best_rate_of_whole, env_number};

const ROUNDS: usize = 5;

const TABLES: &str = r#"{"table":"APP.T","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"NAME","type":"VARCHAR2(40)"}],"logging":"all"}
{"table":"APP.OTHER","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"NAME","type":"VARCHAR2(40)"}],"logging":"all"}
"#;

fn simulator(transactions: u64) -> Simulator {
    let mut scenario = String::from(TABLES);
    for id in 1..=transactions {
        for table in ["T", "OTHER"] {
            scenario.push_str(&format!(
                "{{\"tx\":\"{table}{id}\",\"insert\":\"APP.{table}\",\"values\":{{\"ID\":{id},\"NAME\":\"row {id}\"}}}}\n\
                 {{\"tx\":\"{table}{id}\",\"commit\":true}}\n"
            ));
        }
    }
    Simulator::from_reader(scenario.as_bytes()).expect("the workload loads")
}

/// The window over everything, the captured table alone.
fn window(simulator: &mut Simulator) -> MiningWindow {
    let end_scn = simulator.current_scn().expect("the current SCN");
    let _ = simulator.flush_redo();
    MiningWindow {
        start_scn: 0,
        end_scn,
        logs: simulator.logs_covering(0).expect("the logs").logs,
        // As the capture asks: by name and by the table's object number.
        objects: DatabaseCatalog::table(simulator, "APP", "T")
            .expect("the captured table")
            .schema
            .object()
            .map(|object| object.object_id)
            .into_iter()
            .collect(),
        tables: vec![("APP".to_owned(), "T".to_owned())],
        pdb: None,
        with_sql_undo: false,
    }
}

fn client(pool: SimulatorPool) -> OracleClient<SimulatorPool> {
    let username = pool.with_simulator(|simulator| simulator.capture_user());
    OracleClient::over(
        pool,
        ConnectOptions {
            username,
            password: String::new(),
            connect_string: "simulator:1521/SIMULATOR".to_owned(),
            max_connections: 4,
            statement_timeout: None,
            pdb: None,
            flush_table: "REDOLINE_LOGMNR_FLUSH".to_owned(),
        },
    )
    .expect("the client connects through the SQL door")
}

fn main() {
    let transactions = env_number("REDOLINE_BENCH_DOOR_TRANSACTIONS", 20_000);
    let mut direct = simulator(transactions);
    let window = window(&mut direct);

    let (shown, direct_wall, direct_cpu) = best_rate_of_whole(ROUNDS, || {
        direct.start_mining(&window).expect("LogMiner starts");
        let rows = direct
            .stream_rows(&mut |row| {
                black_box(&row);
                ControlFlow::Continue(())
            })
            .expect("the rows stream");
        direct.end_mining().expect("LogMiner ends");
        rows
    });

    // The door alone: the client's statement on a session whose LogMiner session is started.
    let pool = SimulatorPool::new(simulator(transactions));
    let mut session = pool.get("").expect("a session");
    let start = |session: &mut <SimulatorPool as SessionPool>::Session| {
        for log in &window.logs {
            session
                .execute(
                    "BEGIN SYS.DBMS_LOGMNR.ADD_LOGFILE(LOGFILENAME => :1, OPTIONS => SYS.DBMS_LOGMNR.ADDFILE); END;",
                    &[Bind::Text(&log.name)],
                )
                .expect("the log is registered");
        }
        session
            .execute(
                "BEGIN SYS.DBMS_LOGMNR.START_LOGMNR(STARTSCN => :1, ENDSCN => :2, \
                 OPTIONS => SYS.DBMS_LOGMNR.DICT_FROM_ONLINE_CATALOG); END;",
                &[Bind::Number(window.start_scn), Bind::Number(window.end_scn)],
            )
            .expect("LogMiner starts");
    };
    start(&mut session);
    let (query, binds) = contents_query(&window.tables, &window.objects, None);
    let mut params = vec![Bind::Number(window.start_scn), Bind::Number(window.end_scn)];
    params.extend(binds.iter().map(|bind| Bind::Text(bind)));
    let fetch = Fetch {
        array_rows: CONTENTS_FETCH_ROWS,
        byte_columns: &[],
    };
    let (returned, door_wall, door_cpu) = best_rate_of_whole(ROUNDS, || {
        let mut rows = 0u64;
        session
            .query(&query, &params, fetch, &mut |cells| {
                rows += 1;
                black_box(cells);
                ControlFlow::Continue(())
            })
            .expect("the contents query runs");
        rows
    });
    drop(session);

    let mut client = client(SimulatorPool::new(simulator(transactions)));
    let (mapped, client_wall, client_cpu) = best_rate_of_whole(ROUNDS, || {
        client.start_mining(&window).expect("LogMiner starts");
        let rows = client
            .stream_rows(&mut |row| {
                black_box(&row);
                ControlFlow::Continue(())
            })
            .expect("the rows stream");
        client.end_mining().expect("LogMiner ends");
        rows
    });

    println!(
        "sql door: {transactions} one-row transactions on a captured table and as many on another, one window; \
         LogMiner shows {shown} rows, the contents query returns {returned} ({mapped} mapped)"
    );
    println!(
        "              {:>14} {:>14}",
        "wall rows/s", "on-CPU rows/s"
    );
    println!("  direct    : {direct_wall:>14.0} {direct_cpu:>14.0}");
    println!("  door      : {door_wall:>14.0} {door_cpu:>14.0}");
    println!("  client    : {client_wall:>14.0} {client_cpu:>14.0}");
    println!(
        "  the steady 2,000 tx/s of database_load needs 6,000 rows/s from client: {}",
        if client_wall >= 6_000.0 {
            "met"
        } else {
            "MISSED"
        }
    );
}
