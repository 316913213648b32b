//! What several benchmarks share: what they measure about their own process (from
//! `/proc/self`), a capture config and a timed run of it, how a figure is judged against its
//! target, reproducible random values, and the best rate over timed rounds.
// Each benchmark compiles this module on its own and uses part of it.
#![allow(dead_code)]

use std::path::Path;
use std::time::{Duration, Instant};

use redoline_testenv::usage::{self, Process};

/// Seconds of CPU this process has used, user plus system, all threads.
pub fn cpu_seconds() -> f64 {
    usage::cpu_seconds(Process::This)
}

/// The peak resident set size of this process (`VmHWM`), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    Some(usage::memory(Process::This).peak_kib * 1024).filter(|&bytes| bytes > 0)
}

/// A capture config for the benchmarks' `BENCH.T` table: the simulator replaying `scenario` in
/// `dir`, `sink` (a `file:` or `kafka:` line), `format`, then the `start` lines (snapshot and
/// start position), a 64 MiB heap budget spilling to `dir/spill`, and HTTP port 0.
pub fn bench_config(dir: &Path, scenario: &str, format: &str, sink: &str, start: &str) -> String {
    format!(
        "name: bench\n\
         database: {{simulator: {{scenario: {}}}}}\n\
         tables: [BENCH.T]\n\
         {sink}\n\
         format: {{type: {format}}}\n\
         {start}\
         buffer: {{memoryMaxBytes: 64Mi, spill: {{dir: {}, maxBytes: 1Gi}}}}\n\
         http: {{port: 0}}\n",
        dir.join(scenario).display(),
        dir.join("spill").display()
    )
}

/// Runs the capture with `config` to the end of its scenario (`run --exit-at-end`); its wall time.
#[allow(clippy::panic)] // a failed run leaves nothing to measure
pub fn timed_run(config: &Path) -> Duration {
    let started = Instant::now();
    if let Err(error) = redoline_capture::run::run(config, true) {
        panic!("the run of {} failed: {error}", config.display());
    }
    started.elapsed()
}

/// "met" when `value` reaches `target`, else "MISSED".
pub fn verdict(value: f64, target: f64) -> &'static str {
    if value >= target { "met" } else { "MISSED" }
}

/// The number in environment variable `name`; `default` when it is unset or not a number.
pub fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Time this thread has spent on a CPU (Linux); `None` elsewhere.
pub fn thread_cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanoseconds = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanoseconds))
}

/// Wall-clock and on-CPU duration of a round.
pub struct Clock {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Clock {
    pub fn start() -> Self {
        Self {
            wall: Instant::now(),
            cpu: thread_cpu_time(),
        }
    }

    pub fn stop(&self) -> (Duration, Option<Duration>) {
        let cpu = self
            .cpu
            .zip(thread_cpu_time())
            .map(|(start, end)| end.saturating_sub(start));
        (self.wall.elapsed(), cpu)
    }
}

/// Best rows per second over `rounds` rounds after a warm-up one, by wall clock and by CPU
/// time: `round` gives its rows and the time of what it measured ([`Clock::stop`]).
pub fn best_rate(
    rounds: usize,
    mut round: impl FnMut() -> (u64, (Duration, Option<Duration>)),
) -> (u64, f64, f64) {
    let _ = round();
    let mut result = (0, 0.0f64, 0.0f64);
    for _ in 0..rounds {
        let (rows, (wall, cpu)) = round();
        result.0 = rows;
        result.1 = result.1.max(rows as f64 / wall.as_secs_f64());
        if let Some(cpu) = cpu.filter(|cpu| !cpu.is_zero()) {
            result.2 = result.2.max(rows as f64 / cpu.as_secs_f64());
        }
    }
    result
}

/// [`best_rate`] of rounds timed whole: `round` gives its rows.
pub fn best_rate_of_whole(rounds: usize, mut round: impl FnMut() -> u64) -> (u64, f64, f64) {
    best_rate(rounds, || {
        let clock = Clock::start();
        let rows = round();
        (rows, clock.stop())
    })
}
