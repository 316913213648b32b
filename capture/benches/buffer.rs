//! The transaction buffer's two speed figures, printed, never asserted.
//!
//! ```sh
//! cargo bench -p redoline-capture --bench buffer
//! REDOLINE_BENCH_SPILL_BYTES=268435456 cargo bench -p redoline-capture --bench buffer  # quick
//! ```
//!
//! 1. **One large transaction through a small budget** (runs first, so the peak RSS it reports is
//!    its own): `REDOLINE_BENCH_SPILL_BYTES` (default 4 GiB) of rows with 4000-byte SQL_REDO (the
//!    most LogMiner puts in one row) into a buffer with a 64 MiB heap budget, committed and read
//!    back. Reported: spill write throughput (every push, the final flush at COMMIT and an fsync
//!    of the file, as `dd conv=fdatasync` syncs at its end), read-back throughput (every row
//!    decoded and handed out), and the process's peak RSS (`VmHWM`) against 64 MiB + 48 MiB. Next
//!    to them, `dd` reads the spill file itself and writes a file of the same size in the same
//!    directory (`bs=1M conv=fdatasync`). Before each read, the file's pages are dropped from the
//!    page cache (`dd iflag=nocache count=0`, which is `posix_fadvise(DONTNEED)`; dropping all
//!    caches needs privileges a container lacks), so both reads come from the disk. Then both
//!    read the file once more from the page cache, which shows the CPU cost of checking and
//!    decoding frames apart from the disk.
//!    The directory is `REDOLINE_BENCH_SPILL_DIR` or `target/bench-spill`; files are deleted.
//! 2. **Small transactions in memory**: transactions of 5 changes (200-byte SQL_REDO) pushed,
//!    committed, read and released, one thread; events per second, best of five rounds of 1M
//!    events. Rows are built before each round, so the figure is the buffer's own.

mod support;

use std::error::Error;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use prometheus::Registry;
use redoline_capture::buffer::{
    BufferMetrics, BufferSettings, FrameReader, Pushed, READ_AHEAD_BYTES, ReleasedLedger,
    TransactionBuffer,
};
use redoline_capture::source::{LogMinerRow, OperationCode, Xid};
use redoline_crds::v1alpha1::TransactionsSpec;

const MIB: u64 = 1 << 20;
const HEAP_BUDGET: u64 = 64 * MIB;
const RSS_ALLOWANCE: u64 = 48 * MIB;
const LARGE_SQL_REDO: usize = 4000;
const SMALL_SQL_REDO: usize = 200;
const SMALL_TRANSACTION: u64 = 5;
const SMALL_ROUND_EVENTS: u64 = 1_000_000;
const SMALL_ROUNDS: usize = 5;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

fn main() -> Result<()> {
    let bytes = std::env::var("REDOLINE_BENCH_SPILL_BYTES")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(4 << 30);
    let dir = std::env::var_os("REDOLINE_BENCH_SPILL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-spill"));
    std::fs::create_dir_all(&dir)?;
    // Other processes on the machine skew every figure: say how busy it was.
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "load average {} on {cores} cores",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    large_transaction(&dir, bytes)?;
    small_transactions(&dir)?;
    Ok(())
}

fn template(sql_len: usize) -> LogMinerRow {
    let shared = |s: &str| Some(Arc::<str>::from(s));
    LogMinerRow {
        scn: 0,
        xid: Xid::from_parts(1, 1, 1),
        operation: OperationCode::Insert,
        row_id: Arc::from("AAAR9JAAHAAAACFAAA"),
        rs_id: Arc::from(" 0x000007.000228b9.0010 "),
        seg_owner: shared("APP"),
        table_name: shared("ORDERS"),
        username: shared("APP"),
        session: Some(100),
        serial: Some(7),
        thread: 1,
        sql_redo: Some(format!(
            "insert into \"APP\".\"ORDERS\"(\"V\") values ('{}');",
            "x".repeat(sql_len.saturating_sub(45))
        )),
        src_con_name: shared("PDB1"),
        con_id: Some(3),
        ..Default::default()
    }
}

fn new_buffer(dir: &Path) -> Result<TransactionBuffer> {
    let config = BufferSettings {
        memory_max_bytes: HEAP_BUDGET,
        spill_dir: dir.to_owned(),
        spill_max_bytes: u64::MAX / 2,
        transactions: TransactionsSpec {
            // A 4 GiB transaction of LogMiner-sized rows is about a million rows: past the CRD's
            // default and maximum for one transaction, which is not what is measured here.
            max_staged_records: u64::MAX,
            max_staged_records_total: u64::MAX,
            ..TransactionsSpec::default()
        },
    };
    let metrics = BufferMetrics::new(&Registry::new())?;
    Ok(TransactionBuffer::new(
        config,
        ReleasedLedger::new(),
        metrics,
    )?)
}

fn now() -> jiff::Timestamp {
    jiff::Timestamp::UNIX_EPOCH
}

fn mb_per_s(bytes: u64, elapsed: Duration) -> f64 {
    bytes as f64 / 1e6 / elapsed.as_secs_f64()
}

/// Drops a file's pages from the page cache so the next read comes from the disk.
fn drop_cached(path: &Path) -> Result<()> {
    time_dd(&[
        &format!("if={}", path.display()),
        "iflag=nocache",
        "count=0",
    ])
    .map(|_| ())
}

/// Runs `dd` with `args` and returns how long it took.
fn time_dd(args: &[&str]) -> Result<Duration> {
    let start = Instant::now();
    let status = Command::new("dd").args(args).arg("status=none").status()?;
    if !status.success() {
        return Err(format!("dd {args:?} failed").into());
    }
    Ok(start.elapsed())
}

fn large_transaction(dir: &Path, target_bytes: u64) -> Result<()> {
    let mut buffer = new_buffer(dir)?;
    let template = template(LARGE_SQL_REDO);
    let rss_before = support::peak_rss_bytes().unwrap_or(0);
    let dd_file = dir.join("dd.bin");
    let count = target_bytes.div_ceil(MIB);
    let dd_write = [
        "if=/dev/zero".to_owned(),
        format!("of={}", dd_file.display()),
        "bs=1M".to_owned(),
        format!("count={count}"),
        "conv=fdatasync".to_owned(),
    ];
    let dd_write: Vec<&str> = dd_write.iter().map(String::as_str).collect();
    // dd writes before and after the buffer does, as it reads before and after.
    let dd_write_before = time_dd(&dd_write)?;
    std::fs::remove_file(&dd_file)?;

    let write_start = Instant::now();
    let mut rows = 0u64;
    while buffer.spilled_bytes() + buffer.heap_bytes() < target_bytes {
        let mut row = template.clone();
        row.scn = rows;
        buffer.push(row, now())?;
        rows += 1;
    }
    let mut commit = template.clone();
    (commit.operation, commit.scn, commit.sql_redo) = (OperationCode::Commit, rows, None);
    let Pushed::Committed(mut committed) = buffer.push(commit, now())? else {
        return Err("the COMMIT handed out nothing".into());
    };
    let file = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "spill"))
        .ok_or("no spill file")?;
    let push_time = write_start.elapsed();
    std::fs::File::open(&file)?.sync_data()?;
    let write_time = write_start.elapsed();
    let file_bytes = std::fs::metadata(&file)?.len();

    // dd reads the very spill file before and after the buffer does, each read after dropping
    // the file's pages: the storage below may cache on its own, which favours later reads.
    let input = format!("if={}", file.display());
    let dd_read_file = [input.as_str(), "of=/dev/null", "bs=1M"];
    drop_cached(&file)?;
    let dd_read_before = time_dd(&dd_read_file)?;
    drop_cached(&file)?;
    let read_start = Instant::now();
    let mut read_rows = 0u64;
    for row in committed.by_ref() {
        black_box(row?);
        read_rows += 1;
    }
    let read_time = read_start.elapsed();
    drop_cached(&file)?;
    let dd_read_after = time_dd(&dd_read_file)?;
    // The same reads from the page cache (dd just filled it): the CPU side of the read-back.
    let dd_warm = time_dd(&dd_read_file)?;
    let warm_start = Instant::now();
    let mut frames = FrameReader::new(
        std::fs::File::open(&file)?,
        &file,
        file_bytes,
        read_rows,
        READ_AHEAD_BYTES,
    )?;
    while let Some(row) = frames.next_row()? {
        black_box(row);
    }
    let warm_time = warm_start.elapsed();
    buffer.release(committed.finish()?)?;
    let peak = support::peak_rss_bytes().unwrap_or(0);

    let dd_write_after = time_dd(&dd_write)?;
    std::fs::remove_file(&dd_file)?;
    let dd_bytes = count * MIB;

    let (write, read) = (
        mb_per_s(file_bytes, write_time),
        mb_per_s(file_bytes, read_time),
    );
    let (dd_w1, dd_w2) = (
        mb_per_s(dd_bytes, dd_write_before),
        mb_per_s(dd_bytes, dd_write_after),
    );
    let dd_w = dd_w1.max(dd_w2);
    let (dd_r1, dd_r2) = (
        mb_per_s(file_bytes, dd_read_before),
        mb_per_s(file_bytes, dd_read_after),
    );
    let dd_r = dd_r1.max(dd_r2);
    let (warm, dd_warm) = (
        mb_per_s(file_bytes, warm_time),
        mb_per_s(file_bytes, dd_warm),
    );
    println!(
        "buffer: one transaction of {rows} rows ({LARGE_SQL_REDO}-byte SQL_REDO), heap budget 64 MiB, in {}",
        dir.display()
    );
    println!(
        "  spill file            {:>10.1} MiB",
        file_bytes as f64 / MIB as f64
    );
    println!(
        "  spill write           {write:>10.1} MB/s  ({:.2} s pushes + {:.2} s fsync)   dd write {dd_w1:>8.1} MB/s before, {dd_w2:.1} MB/s after  = {:.0}% of the faster dd",
        push_time.as_secs_f64(),
        (write_time - push_time).as_secs_f64(),
        100.0 * write / dd_w
    );
    println!(
        "  spill read-back       {read:>10.1} MB/s  ({:.2} s, {read_rows} rows)            dd read  {dd_r1:>8.1} MB/s before, {dd_r2:.1} MB/s after  = {:.0}% of the faster dd",
        read_time.as_secs_f64(),
        100.0 * read / dd_r
    );
    println!(
        "  spill read-back warm  {warm:>10.1} MB/s  (page cache, frames checked and decoded)   dd read  {dd_warm:>8.1} MB/s  = {:.0}% of dd",
        100.0 * warm / dd_warm
    );
    println!(
        "  page cache            dropped per file before each cold read (dd iflag=nocache count=0); dd read the spill file itself"
    );
    println!(
        "  peak RSS (VmHWM)      {:>10.1} MiB   limit 64 MiB + 48 MiB = 112 MiB: {}   (before: {:.1} MiB)",
        peak as f64 / MIB as f64,
        if peak < HEAP_BUDGET + RSS_ALLOWANCE {
            "within"
        } else {
            "EXCEEDED"
        },
        rss_before as f64 / MIB as f64
    );
    Ok(())
}

fn small_transactions(dir: &Path) -> Result<()> {
    let mut buffer = new_buffer(dir)?;
    let template = template(SMALL_SQL_REDO);
    let mut best = Duration::MAX;
    let mut scn = 0u64;
    for _ in 0..SMALL_ROUNDS {
        let mut rows = Vec::with_capacity(
            (SMALL_ROUND_EVENTS + SMALL_ROUND_EVENTS / SMALL_TRANSACTION) as usize,
        );
        for t in 0..SMALL_ROUND_EVENTS / SMALL_TRANSACTION {
            let xid = Xid::from_parts(1, 1, t as u32 + 1);
            for _ in 0..SMALL_TRANSACTION {
                let mut row = template.clone();
                (row.xid, row.scn) = (xid, scn);
                rows.push(row);
                scn += 1;
            }
            let mut commit = template.clone();
            (commit.xid, commit.scn, commit.operation, commit.sql_redo) =
                (xid, scn, OperationCode::Commit, None);
            rows.push(commit);
            scn += 1;
        }
        let start = Instant::now();
        let mut events = 0u64;
        for row in rows {
            if let Pushed::Committed(mut committed) = buffer.push(row, now())? {
                for row in committed.by_ref() {
                    black_box(row?);
                    events += 1;
                }
                buffer.release(committed.finish()?)?;
            }
        }
        best = best.min(start.elapsed());
        if events != SMALL_ROUND_EVENTS {
            return Err(
                format!("{events} events handed out, {SMALL_ROUND_EVENTS} expected").into(),
            );
        }
    }
    let rate = SMALL_ROUND_EVENTS as f64 / best.as_secs_f64();
    println!(
        "buffer: small transactions in memory ({SMALL_TRANSACTION} changes each, {SMALL_SQL_REDO}-byte SQL_REDO), one thread"
    );
    println!(
        "  add + commit + read   {:>10.0} events/s (best of {SMALL_ROUNDS} rounds of {SMALL_ROUND_EVENTS}; target 2,000,000: {})",
        rate,
        support::verdict(rate, 2_000_000.0)
    );
    Ok(())
}
