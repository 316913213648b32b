#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The fuzz targets without libFuzzer, on stable, in the normal test build: every committed seed
//! (`fuzz/corpus/<target>/`) and every crash a local fuzz run saved (`fuzz/artifacts/<target>/`)
//! goes through the target's body (`redoline_capture::fuzz`, the functions the libFuzzer targets
//! call), then bounded random mutations of the seeds do. `make fuzz` is the coverage-guided search;
//! this keeps its properties checked on every `make test`.

use std::fmt;
use std::fs;
use std::panic;
use std::path::{Path, PathBuf};

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use redoline_capture::fuzz::{TARGETS, Target};

fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The files in `dir` with their bytes, by name; none when `dir` does not exist.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let bytes = fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect()
}

fn target(name: &str) -> Target {
    TARGETS
        .iter()
        .find(|(target, _)| *target == name)
        .map(|(_, body)| *body)
        .unwrap_or_else(|| panic!("no fuzz target {name} in redoline_capture::fuzz::TARGETS"))
}

fn seeds(name: &str) -> Vec<Vec<u8>> {
    let seeds: Vec<Vec<u8>> = files(&fuzz_dir().join("corpus").join(name))
        .into_iter()
        .map(|(_, bytes)| bytes)
        .collect();
    assert!(!seeds.is_empty(), "no seeds in fuzz/corpus/{name}");
    seeds
}

#[test]
fn every_libfuzzer_target_has_a_shared_body_and_seeds() {
    let mut on_disk: Vec<String> = files(&fuzz_dir().join("fuzz_targets"))
        .into_iter()
        .filter_map(|(path, _)| Some(path.file_stem()?.to_str()?.to_owned()))
        .collect();
    on_disk.sort();
    let mut shared: Vec<String> = TARGETS.iter().map(|(name, _)| (*name).to_owned()).collect();
    shared.sort();
    assert_eq!(
        on_disk, shared,
        "fuzz/fuzz_targets/*.rs and fuzz::TARGETS differ"
    );
    for name in &shared {
        seeds(name);
    }
}

#[test]
fn every_seed_and_saved_crash_passes_its_target() {
    let mut failures = Vec::new();
    let mut replayed = 0;
    for (name, body) in TARGETS {
        let mut inputs = files(&fuzz_dir().join("corpus").join(name));
        inputs.extend(files(&fuzz_dir().join("artifacts").join(name)));
        for (path, bytes) in inputs {
            replayed += 1;
            if let Err(panic) = panic::catch_unwind(|| body(&bytes)) {
                let message = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("(no message)");
                failures.push(format!("{name} on {}: {message}", path.display()));
            }
        }
    }
    assert!(replayed > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Bounded random mutations of the seeds (byte edits and splices from other seeds of the target)

/// One change to a seed; positions wrap around the input's length.
#[derive(Debug, Clone)]
enum Edit {
    Set(usize, u8),
    Insert(usize, u8),
    Remove(usize, usize),
    /// Copies `len` bytes from `start` in the donor seed to `at`.
    Splice {
        at: usize,
        start: usize,
        len: usize,
    },
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    // Half the new bytes printable ASCII: the parsers' input is mostly text.
    let byte = prop_oneof![0x20u8..0x7f, any::<u8>()];
    prop_oneof![
        3 => (any::<usize>(), byte.clone()).prop_map(|(at, b)| Edit::Set(at, b)),
        3 => (any::<usize>(), byte).prop_map(|(at, b)| Edit::Insert(at, b)),
        2 => (any::<usize>(), 1usize..16).prop_map(|(at, len)| Edit::Remove(at, len)),
        3 => (any::<usize>(), any::<usize>(), 1usize..64)
            .prop_map(|(at, start, len)| Edit::Splice { at, start, len }),
        1 => any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn mutate(mut input: Vec<u8>, donor: &[u8], edits: &[Edit]) -> Vec<u8> {
    for edit in edits {
        let at = |i: usize| i % (input.len() + 1);
        match *edit {
            Edit::Set(i, b) if !input.is_empty() => {
                let i = i % input.len();
                input[i] = b;
            }
            Edit::Set(..) => {}
            Edit::Insert(i, b) => input.insert(at(i), b),
            Edit::Remove(i, len) => {
                let i = at(i);
                let end = (i + len).min(input.len());
                input.drain(i..end);
            }
            Edit::Splice { at: i, start, len } if !donor.is_empty() => {
                let start = start % donor.len();
                let end = (start + len).min(donor.len());
                let i = at(i);
                input.splice(i..i, donor[start..end].iter().copied());
            }
            Edit::Splice { .. } => {}
            Edit::Truncate(i) => input.truncate(at(i)),
        }
    }
    input
}

/// A fuzz input, shown as text when a case fails.
#[derive(Clone)]
struct Input(Vec<u8>);

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.0))
    }
}

fn mutated(name: &str) -> impl Strategy<Value = Input> + use<> {
    let seeds = seeds(name);
    (select(seeds.clone()), select(seeds), vec(edit(), 1..8))
        .prop_map(|(seed, donor, edits)| Input(mutate(seed, &donor, &edits)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn mutated_parse_dml_seeds_pass(input in mutated("parse_dml")) {
        target("parse_dml")(&input.0);
    }

    #[test]
    fn mutated_parse_lob_ddl_seeds_pass(input in mutated("parse_lob_ddl")) {
        target("parse_lob_ddl")(&input.0);
    }

    #[test]
    fn mutated_spill_frame_seeds_pass(input in mutated("spill_frame")) {
        target("spill_frame")(&input.0);
    }

    #[test]
    fn mutated_internal_value_seeds_pass(input in mutated("internal_value")) {
        target("internal_value")(&input.0);
    }

    #[test]
    fn mutated_chunk_plan_seeds_pass(input in mutated("chunk_plan")) {
        target("chunk_plan")(&input.0);
    }
}
