//! The demo's database activity: a scenario file the capture follows
//! (`database.simulator.follow`), written by a thread in real time.
//!
//! Every second the simulated clock moves one second and an order is placed (an ORDERS row and
//! its ORDER_LINES, sometimes an update or a delete), so the capture always has work and its lag
//! is real: the commit time of the database's current SCN minus that of the last emitted commit.
//! The demo asks for events that a real database would have:
//! - [`Incident::QuietInstance`]: a second RAC instance commits once and then stays quiet. The
//!   demo's capture mines read-only (no flush write), so mining never passes what the quiet
//!   instance's log writer last wrote and capture falls behind while orders keep coming on
//!   instance 1.
//! - [`Incident::ArchiveLagTarget`]: the remedy the capture's warning names: every instance switches
//!   logs every few seconds (`ARCHIVE_LAG_TARGET`), which moves the quiet instance's checkpoint.
//! - [`Incident::BatchJob`]: one transaction inserting more than the spill cap holds.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;
use serde_json::json;

/// Something the demo makes happen in the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Incident {
    QuietInstance,
    ArchiveLagTarget { every_seconds: u64 },
    BatchJob { rows: u64, note_bytes: usize },
}

/// The tables of the demo's OracleCapture, as simulator declarations.
const TABLES: [&str; 3] = [
    r#"{"table":"SALES.CUSTOMERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"NAME","type":"VARCHAR2(100)"},{"name":"EMAIL","type":"VARCHAR2(200)"}],"logging":"all"}"#,
    r#"{"table":"SALES.ORDERS","columns":[{"name":"ID","type":"NUMBER(10)","key":true},{"name":"CUSTOMER_ID","type":"NUMBER(10)"},{"name":"STATUS","type":"VARCHAR2(20)"},{"name":"TOTAL","type":"NUMBER(12,2)"},{"name":"NOTE","type":"VARCHAR2(4000)"}],"logging":"all"}"#,
    r#"{"table":"SALES.ORDER_LINES","columns":[{"name":"ORDER_ID","type":"NUMBER(10)","key":true},{"name":"LINE_NO","type":"NUMBER(3)","key":true},{"name":"SKU","type":"VARCHAR2(40)"},{"name":"QTY","type":"NUMBER(6)"}],"logging":"all"}"#,
];

/// Customers created before the first order.
const CUSTOMERS: u64 = 5;
/// The first order id of the batch job's rows.
const BATCH_IDS: u64 = 1_000_000;

/// The workload thread; stops when dropped or [`Workload::stop`]ped.
#[derive(Debug)]
pub struct Workload {
    path: PathBuf,
    incidents: Sender<Incident>,
    stop: Arc<AtomicBool>,
    orders: Arc<AtomicU64>,
    thread: Option<JoinHandle<anyhow::Result<()>>>,
}

impl Workload {
    /// Writes the tables and the first customers to `path`, then starts placing an order every
    /// `tick` (one simulated second each).
    pub fn start(path: &Path, tick: Duration) -> anyhow::Result<Workload> {
        let mut feed = Feed::create(path)?;
        for table in TABLES {
            feed.line(table.to_owned());
        }
        for id in 1..=CUSTOMERS {
            let tx = format!("c{id}");
            feed.step(json!({"tx": tx, "insert": "SALES.CUSTOMERS",
                "values": {"ID": id, "NAME": format!("Customer {id}"), "EMAIL": format!("c{id}@example.com")}}));
            feed.step(json!({"tx": tx, "commit": true}));
        }
        feed.flush()?;
        let (incidents, received) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let orders = Arc::new(AtomicU64::new(0));
        let thread = {
            let stop = Arc::clone(&stop);
            let orders = Arc::clone(&orders);
            std::thread::spawn(move || feed.run(tick, &received, &stop, &orders))
        };
        Ok(Workload {
            path: path.to_owned(),
            incidents,
            stop,
            orders,
            thread: Some(thread),
        })
    }

    /// The scenario file the capture follows.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Orders committed so far.
    pub fn orders(&self) -> u64 {
        self.orders.load(Ordering::Relaxed)
    }

    /// Makes `incident` happen at the next tick.
    pub fn cause(&self, incident: Incident) -> anyhow::Result<()> {
        self.incidents
            .send(incident)
            .context("the workload thread has ended")
    }

    /// Stops the thread and reports how it ended: the orders committed in all (the thread may
    /// place one more after the stop is asked for, so only this count is final).
    pub fn stop(mut self) -> anyhow::Result<u64> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result?,
            Some(Err(_)) => anyhow::bail!("the workload thread panicked"),
            None => {}
        }
        Ok(self.orders.load(Ordering::Relaxed))
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The scenario file, written a tick at a time (whole lines only, so the capture never sees
/// half a step).
struct Feed {
    file: std::fs::File,
    pending: String,
    next_order: u64,
    committed_orders: u64,
    next_tx: u64,
    tick: u64,
    log_switch_every: Option<u64>,
}

impl Feed {
    fn create(path: &Path) -> anyhow::Result<Feed> {
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(path)
            .with_context(|| format!("creating the workload file {}", path.display()))?;
        Ok(Feed {
            file,
            pending: String::new(),
            next_order: 1,
            committed_orders: 0,
            next_tx: 1,
            tick: 0,
            log_switch_every: None,
        })
    }

    fn line(&mut self, line: String) {
        self.pending.push_str(&line);
        self.pending.push('\n');
    }

    fn step(&mut self, step: serde_json::Value) {
        self.line(step.to_string());
    }

    fn flush(&mut self) -> anyhow::Result<()> {
        self.file
            .write_all(self.pending.as_bytes())
            .context("writing the workload file")?;
        self.pending.clear();
        Ok(())
    }

    fn transaction(&mut self) -> String {
        let tx = format!("t{}", self.next_tx);
        self.next_tx += 1;
        tx
    }

    fn run(
        mut self,
        tick: Duration,
        incidents: &Receiver<Incident>,
        stop: &AtomicBool,
        orders: &AtomicU64,
    ) -> anyhow::Result<()> {
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(tick);
            self.tick += 1;
            self.step(json!({"advance_seconds": 1}));
            while let Ok(incident) = incidents.try_recv() {
                self.incident(incident);
            }
            if self
                .log_switch_every
                .is_some_and(|every| self.tick.is_multiple_of(every))
            {
                self.step(json!({"log_switch": "all"}));
            }
            self.order();
            self.flush()?;
            orders.store(self.committed_orders, Ordering::Relaxed);
        }
        // The database outlives the workload: its log writer writes out what was committed
        // (Oracle's does at least every three seconds), which a capture mining read-only waits
        // for. A log switch on every instance stands for that, so the last orders can be mined.
        self.step(json!({"log_switch": "all"}));
        self.flush()
    }

    /// An order with two lines; every third order updates the previous one, every fifth
    /// removes a line of it.
    fn order(&mut self) {
        let id = self.next_order;
        self.next_order += 1;
        let tx = self.transaction();
        self.step(json!({"tx": tx, "insert": "SALES.ORDERS", "values": {
            "ID": id, "CUSTOMER_ID": id % CUSTOMERS + 1, "STATUS": "NEW",
            "TOTAL": format!("{}.{:02}", 10 + id % 90, id % 100), "NOTE": null}}));
        for line in 1..=2u64 {
            self.step(json!({"tx": tx, "insert": "SALES.ORDER_LINES", "values": {
                "ORDER_ID": id, "LINE_NO": line, "SKU": format!("SKU-{}", (id + line) % 17), "QTY": line}}));
        }
        if id > 1 && id.is_multiple_of(3) {
            self.step(json!({"tx": tx, "update": "SALES.ORDERS",
                "where": {"ID": id - 1}, "set": {"STATUS": "SHIPPED"}}));
        }
        if id > 1 && id.is_multiple_of(5) {
            self.step(json!({"tx": tx, "delete": "SALES.ORDER_LINES",
                "where": {"ORDER_ID": id - 1, "LINE_NO": 2}}));
        }
        self.step(json!({"tx": tx, "commit": true}));
        self.committed_orders += 1;
    }

    fn incident(&mut self, incident: Incident) {
        match incident {
            Incident::QuietInstance => {
                // Instance 2 registers a customer, then has nothing more to do.
                let tx = self.transaction();
                let id = 1000 + self.tick;
                self.step(json!({"thread": 2}));
                self.step(json!({"tx": tx, "insert": "SALES.CUSTOMERS",
                    "values": {"ID": id, "NAME": "Walk-in", "EMAIL": null}}));
                self.step(json!({"tx": tx, "commit": true}));
                self.step(json!({"thread": 1}));
            }
            Incident::ArchiveLagTarget { every_seconds } => {
                self.log_switch_every = Some(every_seconds.max(1));
            }
            Incident::BatchJob { rows, note_bytes } => {
                // Left open: the capture stops while it is still being buffered.
                let tx = self.transaction();
                let note = "x".repeat(note_bytes);
                for n in 0..rows {
                    // Ids of their own: the orders placed meanwhile must not meet locked rows.
                    let id = BATCH_IDS + n;
                    self.step(json!({"tx": tx, "insert": "SALES.ORDERS", "values": {
                        "ID": id, "CUSTOMER_ID": 1, "STATUS": "IMPORTED", "TOTAL": "0", "NOTE": note}}));
                }
            }
        }
    }
}
