//! What several benchmarks share: what they measure about their own process (from
//! `/proc/self`), a capture config and a timed run of it, how a figure is judged against its
//! target, and reproducible random values.
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
