//! What a process has used so far, read from `/proc` (Linux): CPU seconds and memory. The
//! benchmarks report these beside their rates (the capture's benches about themselves, the
//! operator's scale bench about the operator it runs).

/// The process to read: this one, or another by pid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Process {
    This,
    Pid(u32),
}

impl Process {
    fn proc_file(self, name: &str) -> String {
        match self {
            Process::This => format!("/proc/self/{name}"),
            Process::Pid(pid) => format!("/proc/{pid}/{name}"),
        }
    }
}

/// User plus system CPU time of `process` so far, all threads, in seconds; 0 when it cannot be
/// read.
pub fn cpu_seconds(process: Process) -> f64 {
    let stat = std::fs::read_to_string(process.proc_file("stat")).unwrap_or_default();
    // The fields after the command name (which may hold spaces) start after the last ')': state
    // is field 0 there, utime 11 and stime 12, in clock ticks (USER_HZ, 100 per second on every
    // Linux this runs on).
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// Resident memory of a process, in KiB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// The peak resident set size (`VmHWM`).
    pub peak_kib: u64,
    /// The resident set size now (`VmRSS`).
    pub resident_kib: u64,
}

/// The memory of `process`; zeros when it cannot be read.
pub fn memory(process: Process) -> Memory {
    let status = std::fs::read_to_string(process.proc_file("status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    Memory {
        peak_kib: field("VmHWM:"),
        resident_kib: field("VmRSS:"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_reads_the_same_by_pid_and_its_cpu_time_grows_with_work() {
        let before = cpu_seconds(Process::This);
        let started = std::time::Instant::now();
        let mut spin = 0u64;
        while started.elapsed() < std::time::Duration::from_millis(300) {
            spin = std::hint::black_box(spin.wrapping_add(1));
        }
        let after = cpu_seconds(Process::Pid(std::process::id()));
        assert!(after > before, "{before} s then {after} s");

        let memory = memory(Process::This);
        assert!(memory.resident_kib > 0, "{memory:?}");
        assert!(memory.peak_kib >= memory.resident_kib, "{memory:?}");
        assert_eq!(
            super::memory(Process::Pid(u32::MAX)),
            Memory::default(),
            "no such process"
        );
    }
}
