#!/usr/bin/env bash
# Fuzzes the SQL_REDO parsers, spill frames, internal-format value decoders and the packed chunk
# plan of bookmarks (capture/fuzz, cargo-fuzz + libFuzzer) for a bounded time.
# `make fuzz` runs it (CI: after `make test`, which replays the seeds through the same target bodies,
# redoline_capture::fuzz, without libFuzzer).
#
#   tests/env/fuzz.sh                 # every target, FUZZ_SECONDS (default 60) each
#   FUZZ_SECONDS=300 tests/env/fuzz.sh parse_dml
#
# Needs the nightly toolchain (sanitizer flags). Installs cargo-fuzz once into
# ~/.cache/redoline/cargo-fuzz (cache-friendly: reused while the version matches). The committed
# seed corpus (capture/fuzz/corpus/<target>/) is read, never written: new inputs go to
# target/fuzz-corpus/<target>/, crashes to capture/fuzz/artifacts/<target>/. Exit status is
# non-zero when a target finds a crash.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lib/cache.sh
. "$root/tests/env/lib/cache.sh"
seconds=${FUZZ_SECONDS:-60}
cargo_fuzz_version=0.13.2
tools=$CACHE/cargo-fuzz
work=${FUZZ_WORK_DIR:-$root/target/fuzz-corpus}

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz.sh: the nightly toolchain is missing (rustup toolchain install nightly)" >&2
  exit 1
fi

if ! "$tools/bin/cargo-fuzz" --version 2>/dev/null | grep -q " $cargo_fuzz_version\$"; then
  echo "fuzz.sh: installing cargo-fuzz $cargo_fuzz_version into $tools" >&2
  cargo install --locked --root "$tools" --version "$cargo_fuzz_version" cargo-fuzz
fi
export PATH="$tools/bin:$PATH"

# The fuzz build instruments every dependency (librdkafka and ODPI-C included), which takes minutes
# cold; keep its target directory in the cache, keyed by the nightly compiler, so a warm machine
# rebuilds only what changed.
nightly=$(cargo +nightly --version | tr -c 'A-Za-z0-9.\n-' '_' | tr -d '\n')
export CARGO_TARGET_DIR=$CACHE/fuzz-target/$nightly

cd "$root/capture/fuzz"
if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo +nightly fuzz list)
fi

for target in "${targets[@]}"; do
  mkdir -p "$work/$target"
  echo "fuzz.sh: $target for ${seconds}s" >&2
  start=$(date +%s)
  cargo +nightly fuzz run "$target" "$work/$target" "corpus/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
  echo "fuzz.sh: $target done in $(( $(date +%s) - start ))s" >&2
done
