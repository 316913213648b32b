//! How large the next mining window may be: a cap on its SCN range that shrinks when a window
//! costs the database too much and grows back once windows are cheap again.
//!
//! What a window costs the database is what it holds while it runs: time (from `START_LOGMNR` to
//! the end of its fetch the LogMiner session and its query are busy, and the work between windows,
//! the lag, the orphan check, the maximum age, heartbeats, waits) and memory in the server process
//! LogMiner runs in (`session pga memory`, read after the window). Both grow with the redo a
//! window covers, so the cap is on its SCN range, between `mining.minScnWindow` and
//! `mining.maxScnWindow` (where it starts):
//! - A breach halves the cap: a window over `mining.windowMaxSeconds`, the session over
//!   `mining.sessionPgaMaxBytes` after it, or ORA-04030 during it. It halves from the window that
//!   breached when that was smaller than the cap (a window the current SCN bounded), since a
//!   window of the cap's size would have cost more still.
//! - After [`GROW_AFTER`] windows in a row that the cap bounded and that used less than half of
//!   each bound, the cap doubles: a window twice as large costs about twice as much, so it stays
//!   within the bounds, and the cap does not swing between a size that breaches and its half.
//!   Windows ended by the current SCN or the written redo (a capture that has caught up) say
//!   nothing about a window of the cap's size: they neither count nor break the run.
//!
//! Debezium sizes its windows too (`log.mining.batch.size.min`, `.max`, `.default`;
//! `calculateUpperBounds` and `updateBatchSize` in its `LogMinerStreamingChangeEventSource`), but
//! by lag alone: the batch steps up by the minimum while the current SCN is more than a default
//! batch beyond the batch's end, and down by the minimum while the batch's end is more than a
//! default batch beyond the current SCN, whatever the window cost. That was the idea taken here,
//! with two changes. The cap follows the cost, since a window the current SCN bounds is
//! already no larger than the lag needs. And it halves rather than stepping down by the minimum:
//! steps of 1,000 SCNs take hundreds of windows to leave a 500,000 SCN window that runs for
//! minutes or exhausts the process's memory, where halving (the multiplicative decrease of TCP's
//! congestion control) reaches a fitting size in a few.
//!
//! A kept session's PGA adds up over its windows, and a server process gives its memory back only
//! when it ends: a PGA breach also asks for the session to be recycled ([`Verdict::recycle`]).
//!
//! Pure: the engine measures the window and reads the session's memory.

use std::time::Duration;

/// Windows in a row, bounded by the cap and within half of each bound, before the cap doubles.
pub const GROW_AFTER: u32 = 4;

/// The configured sizes and bounds (`spec.mining`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeBounds {
    /// The smallest cap (`minScnWindow`, at most `max_scns`).
    pub min_scns: u64,
    /// The largest cap, and the first (`maxScnWindow`).
    pub max_scns: u64,
    /// `windowMaxSeconds`; `None` when off.
    pub max_duration: Option<Duration>,
    /// `sessionPgaMaxBytes`; `None` when off.
    pub max_pga_bytes: Option<u64>,
}

/// What a window cost the database.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowCost {
    /// From `START_LOGMNR` to the end of the fetch, summed over the window's attempts.
    pub duration: Duration,
    /// The mining session's `session pga memory` after the window; `None` when unknown.
    pub pga_bytes: Option<u64>,
    /// Whether the session ran out of memory (ORA-04030) during the window.
    pub out_of_memory: bool,
}

/// A window mined, as the sizer judges it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MinedWindow {
    /// SCNs the window covered (both ends included).
    pub scns: u64,
    /// Whether the cap ended it (rather than the current SCN, the written redo or the run's end).
    pub capped: bool,
    pub cost: WindowCost,
}

/// Why a window was too costly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Breach {
    /// ORA-04030 during the window.
    OutOfMemory,
    /// The session's PGA after the window was above `sessionPgaMaxBytes`.
    Pga { bytes: u64, bound: u64 },
    /// The window took longer than `windowMaxSeconds`.
    Duration { took: Duration, bound: Duration },
}

impl Breach {
    /// The `reason` label of `redoline_capture_window_shrinks_total`.
    pub fn label(&self) -> &'static str {
        match self {
            Self::OutOfMemory => "out_of_memory",
            Self::Pga { .. } => "pga",
            Self::Duration { .. } => "duration",
        }
    }

    /// Every label, for the metric's series to exist from the start.
    pub const LABELS: [&'static str; 3] = ["duration", "pga", "out_of_memory"];
}

/// A change of the cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapChange {
    Shrunk {
        from: u64,
        to: u64,
        /// The SCNs of the window that breached.
        window_scns: u64,
        breach: Breach,
    },
    Grew {
        from: u64,
        to: u64,
    },
}

impl CapChange {
    /// The log line for the change.
    pub fn message(&self) -> String {
        const MIB: u64 = 1 << 20;
        match *self {
            Self::Shrunk {
                from,
                to,
                window_scns,
                breach,
            } => {
                let why = match breach {
                    Breach::OutOfMemory => format!(
                        "the mining session ran out of memory (ORA-04030) in a window of \
                         {window_scns} SCNs"
                    ),
                    Breach::Pga { bytes, bound } => format!(
                        "the mining session's PGA was {} MiB after a window of {window_scns} SCNs, \
                         above mining.sessionPgaMaxBytes ({} MiB)",
                        bytes / MIB,
                        bound / MIB
                    ),
                    Breach::Duration { took, bound } => format!(
                        "a window of {window_scns} SCNs took {:.1} s, longer than \
                         mining.windowMaxSeconds ({} s)",
                        took.as_secs_f64(),
                        bound.as_secs()
                    ),
                };
                format!("{why}; mining windows now cover at most {to} SCNs (were {from})")
            }
            Self::Grew { from, to } => format!(
                "{GROW_AFTER} mining windows in a row used less than half of their bounds; \
                 windows now cover at most {to} SCNs (were {from})"
            ),
        }
    }
}

/// What to do after a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// The cap changed.
    pub change: Option<CapChange>,
    /// The session's PGA is above its bound: end it for a fresh one.
    pub recycle: bool,
}

/// The cap on the next window's SCN range.
#[derive(Clone, Debug)]
pub struct WindowSizer {
    bounds: SizeBounds,
    cap: u64,
    /// Capped windows in a row within half of each bound.
    cheap_in_a_row: u32,
}

impl WindowSizer {
    /// Starts at the largest window; a minimum above the maximum is taken as the maximum (the
    /// config refuses it; a config built in code may not).
    pub fn new(bounds: SizeBounds) -> Self {
        let max_scns = bounds.max_scns.max(1);
        let min_scns = bounds.min_scns.clamp(1, max_scns);
        Self {
            bounds: SizeBounds {
                min_scns,
                max_scns,
                ..bounds
            },
            cap: max_scns,
            cheap_in_a_row: 0,
        }
    }

    /// The most SCNs the next window may cover.
    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// Judges a window mined and sets the cap for the next.
    pub fn after_window(&mut self, window: MinedWindow) -> Verdict {
        let cost = window.cost;
        let pga_over = match (cost.pga_bytes, self.bounds.max_pga_bytes) {
            (Some(bytes), Some(bound)) if bytes > bound => Some(Breach::Pga { bytes, bound }),
            _ => None,
        };
        let too_long = match self.bounds.max_duration {
            Some(bound) if cost.duration > bound => Some(Breach::Duration {
                took: cost.duration,
                bound,
            }),
            _ => None,
        };
        let breach = cost
            .out_of_memory
            .then_some(Breach::OutOfMemory)
            .or(pga_over)
            .or(too_long);
        let recycle = pga_over.is_some();
        if let Some(breach) = breach {
            self.cheap_in_a_row = 0;
            let to = (self.cap.min(window.scns) / 2).max(self.bounds.min_scns);
            let change = (to < self.cap).then(|| {
                let from = std::mem::replace(&mut self.cap, to);
                CapChange::Shrunk {
                    from,
                    to,
                    window_scns: window.scns,
                    breach,
                }
            });
            return Verdict { change, recycle };
        }
        if !window.capped {
            return Verdict {
                change: None,
                recycle,
            };
        }
        if !self.well_within(cost) {
            self.cheap_in_a_row = 0;
            return Verdict {
                change: None,
                recycle,
            };
        }
        self.cheap_in_a_row += 1;
        if self.cheap_in_a_row < GROW_AFTER {
            return Verdict {
                change: None,
                recycle,
            };
        }
        self.cheap_in_a_row = 0;
        let to = self.cap.saturating_mul(2).min(self.bounds.max_scns);
        let change = (to > self.cap).then(|| {
            let from = std::mem::replace(&mut self.cap, to);
            CapChange::Grew { from, to }
        });
        Verdict { change, recycle }
    }

    /// Whether a window used less than half of each bound (an unknown PGA counts as within).
    fn well_within(&self, cost: WindowCost) -> bool {
        let quick = self
            .bounds
            .max_duration
            .is_none_or(|bound| cost.duration < bound / 2);
        let small = match (cost.pga_bytes, self.bounds.max_pga_bytes) {
            (Some(bytes), Some(bound)) => bytes < bound / 2,
            _ => true,
        };
        quick && small
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIB: u64 = 1 << 20;

    fn bounds(min_scns: u64, max_scns: u64) -> SizeBounds {
        SizeBounds {
            min_scns,
            max_scns,
            max_duration: Some(Duration::from_secs(60)),
            max_pga_bytes: Some(1024 * MIB),
        }
    }

    fn window(scns: u64, capped: bool, seconds: u64, pga_mib: u64) -> MinedWindow {
        MinedWindow {
            scns,
            capped,
            cost: WindowCost {
                duration: Duration::from_secs(seconds),
                pga_bytes: Some(pga_mib * MIB),
                out_of_memory: false,
            },
        }
    }

    #[test]
    fn a_long_window_halves_the_cap_and_cheap_capped_windows_double_it_back() {
        let mut sizer = WindowSizer::new(bounds(1000, 8000));
        assert_eq!(sizer.cap(), 8000);
        let verdict = sizer.after_window(window(8000, true, 61, 100));
        assert_eq!(
            verdict.change,
            Some(CapChange::Shrunk {
                from: 8000,
                to: 4000,
                window_scns: 8000,
                breach: Breach::Duration {
                    took: Duration::from_secs(61),
                    bound: Duration::from_secs(60)
                }
            })
        );
        assert!(!verdict.recycle, "time is not memory");
        let message = verdict.change.unwrap().message();
        assert!(message.contains("mining.windowMaxSeconds"), "{message}");
        assert!(
            message.contains("at most 4000 SCNs (were 8000)"),
            "{message}"
        );
        for _ in 1..GROW_AFTER {
            assert_eq!(sizer.after_window(window(4000, true, 29, 100)).change, None);
        }
        assert_eq!(
            sizer.after_window(window(4000, true, 29, 100)).change,
            Some(CapChange::Grew {
                from: 4000,
                to: 8000
            })
        );
        assert_eq!(sizer.cap(), 8000);
    }

    #[test]
    fn a_session_over_its_pga_bound_is_recycled_and_the_cap_halved() {
        let mut sizer = WindowSizer::new(bounds(1000, 8000));
        let verdict = sizer.after_window(window(8000, true, 1, 1025));
        assert!(verdict.recycle);
        let change = verdict.change.unwrap();
        assert!(matches!(
            change,
            CapChange::Shrunk {
                to: 4000,
                breach: Breach::Pga {
                    bytes,
                    bound
                },
                ..
            } if bytes == 1025 * MIB && bound == 1024 * MIB
        ));
        assert!(
            change.message().contains("1025 MiB"),
            "{}",
            change.message()
        );
        // At the floor: still recycled, the cap stays.
        let mut floor = WindowSizer::new(bounds(8000, 8000));
        let verdict = floor.after_window(window(8000, true, 1, 2000));
        assert_eq!((verdict.change, verdict.recycle), (None, true));
    }

    #[test]
    fn out_of_memory_shrinks_whatever_the_bounds() {
        let mut sizer = WindowSizer::new(SizeBounds {
            min_scns: 10,
            max_scns: 1000,
            max_duration: None,
            max_pga_bytes: None,
        });
        let mut mined = window(1000, true, 500, 5000);
        assert_eq!(
            sizer.after_window(mined).change,
            None,
            "no bounds, no breach"
        );
        mined.cost.out_of_memory = true;
        let verdict = sizer.after_window(mined);
        assert!(matches!(
            verdict.change,
            Some(CapChange::Shrunk {
                to: 500,
                breach: Breach::OutOfMemory,
                ..
            })
        ));
        assert!(
            !verdict.recycle,
            "the engine recycled it when the error came"
        );
    }

    #[test]
    fn a_small_window_that_breaches_takes_the_cap_below_itself() {
        let mut sizer = WindowSizer::new(bounds(100, 100_000));
        // The current SCN ended the window at 3,000 SCNs, and it still took too long.
        let verdict = sizer.after_window(window(3000, false, 90, 10));
        assert!(matches!(
            verdict.change,
            Some(CapChange::Shrunk { to: 1500, .. })
        ));
    }

    #[test]
    fn only_capped_windows_well_within_both_bounds_count_toward_growth() {
        let mut sizer = WindowSizer::new(bounds(1000, 8000));
        sizer.after_window(window(8000, true, 61, 10));
        assert_eq!(sizer.cap(), 4000);
        for _ in 0..10 {
            // Caught up: small windows say nothing about the cap.
            assert_eq!(sizer.after_window(window(50, false, 0, 10)).change, None);
        }
        for _ in 0..10 {
            // Capped, but a doubled window would breach.
            assert_eq!(sizer.after_window(window(4000, true, 31, 10)).change, None);
            assert_eq!(sizer.after_window(window(4000, true, 1, 600)).change, None);
        }
        assert_eq!(sizer.cap(), 4000);
        // A run broken by a window near a bound starts again.
        for _ in 1..GROW_AFTER {
            sizer.after_window(window(4000, true, 1, 10));
        }
        sizer.after_window(window(4000, true, 40, 10));
        for _ in 1..GROW_AFTER {
            assert_eq!(sizer.after_window(window(4000, true, 1, 10)).change, None);
        }
        assert!(
            sizer
                .after_window(window(4000, true, 1, 10))
                .change
                .is_some()
        );
    }

    #[test]
    fn a_minimum_above_the_maximum_is_the_maximum() {
        let mut sizer = WindowSizer::new(bounds(1000, 50));
        assert_eq!(sizer.cap(), 50);
        assert_eq!(sizer.after_window(window(50, true, 100, 10)).change, None);
        assert_eq!(sizer.cap(), 50);
    }

    fn cost() -> impl Strategy<Value = WindowCost> {
        (
            0u64..200_000,
            prop::option::of(0u64..4096 * MIB),
            prop::bool::weighted(0.05),
        )
            .prop_map(|(millis, pga_bytes, out_of_memory)| WindowCost {
                duration: Duration::from_millis(millis),
                pga_bytes,
                out_of_memory,
            })
    }

    fn any_bounds() -> impl Strategy<Value = SizeBounds> {
        (
            1u64..5000,
            1u64..2_000_000,
            prop::option::of(1u64..600),
            prop::option::of(16u64..4096),
        )
            .prop_map(|(min_scns, max_scns, seconds, mib)| SizeBounds {
                min_scns,
                max_scns,
                max_duration: seconds.map(Duration::from_secs),
                max_pga_bytes: mib.map(|mib| mib * MIB),
            })
    }

    /// A window the planner could make under `cap`: as large as the cap, or smaller and not
    /// bounded by it.
    fn mined(cap: u64, capped: bool, fraction: u64, cost: WindowCost) -> MinedWindow {
        let scns = if capped {
            cap
        } else {
            (cap * fraction / 100).max(1)
        };
        MinedWindow { scns, capped, cost }
    }

    fn breaches(bounds: &SizeBounds, cost: &WindowCost) -> bool {
        cost.out_of_memory
            || bounds.max_duration.is_some_and(|b| cost.duration > b)
            || matches!((cost.pga_bytes, bounds.max_pga_bytes), (Some(p), Some(b)) if p > b)
    }

    proptest! {
        #[test]
        fn the_cap_stays_within_its_bounds_and_never_grows_on_a_breach(
            bounds in any_bounds(),
            windows in prop::collection::vec((any::<bool>(), 1u64..=100, cost()), 0..200),
        ) {
            let mut sizer = WindowSizer::new(bounds);
            let max = bounds.max_scns;
            let min = bounds.min_scns.min(max);
            for (capped, fraction, cost) in windows {
                let before = sizer.cap();
                let verdict = sizer.after_window(mined(before, capped, fraction, cost));
                let after = sizer.cap();
                prop_assert!((min..=max).contains(&after), "{after} outside [{min}, {max}]");
                if breaches(&bounds, &cost) {
                    prop_assert!(after <= before, "grew from {before} to {after} on a breach");
                    if before > min {
                        prop_assert!(after < before, "a breach at {before} left the cap alone");
                    }
                } else {
                    prop_assert!(after >= before, "shrank from {before} to {after} without a breach");
                }
                prop_assert_eq!(
                    verdict.recycle,
                    matches!((cost.pga_bytes, bounds.max_pga_bytes), (Some(p), Some(b)) if p > b)
                );
                match verdict.change {
                    None => prop_assert_eq!(after, before),
                    Some(CapChange::Shrunk { from, to, .. } | CapChange::Grew { from, to }) => {
                        prop_assert_eq!((from, to), (before, after));
                        prop_assert_ne!(from, to);
                    }
                }
            }
        }

        #[test]
        fn cheap_capped_windows_bring_the_cap_back_to_the_maximum(
            bounds in any_bounds(),
            windows in prop::collection::vec((any::<bool>(), 1u64..=100, cost()), 0..100),
        ) {
            let mut sizer = WindowSizer::new(bounds);
            for (capped, fraction, cost) in windows {
                let cap = sizer.cap();
                sizer.after_window(mined(cap, capped, fraction, cost));
            }
            let max = bounds.max_scns;
            let min = bounds.min_scns.min(max);
            // Doublings from the floor to the maximum, each after GROW_AFTER windows.
            let doublings = u64::BITS - (max / min).leading_zeros();
            let cheap = WindowCost {
                duration: Duration::ZERO,
                pga_bytes: Some(0),
                out_of_memory: false,
            };
            for _ in 0..doublings * GROW_AFTER {
                let cap = sizer.cap();
                sizer.after_window(mined(cap, true, 100, cheap));
            }
            prop_assert_eq!(sizer.cap(), max);
        }
    }
}
