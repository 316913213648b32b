#!/usr/bin/env bash
# The local demo without Kubernetes (`make demo-local`): redoline-capture on the embedded Oracle
# simulator, writing JSON Lines to a file. No Oracle, no Kafka. Every step says what it does; the
# work directory is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "building redoline-capture"
cargo build -q -p redoline-capture
capture=target/debug/redoline-capture

work=$(mktemp -d "${TMPDIR:-/tmp}/redoline-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp examples/capture.yaml examples/orders.jsonl "$work/"
export REDOLINE_TERMINATION_LOG="$work/termination.log"
export RUST_LOG=${RUST_LOG:-warn}

say "the scenario: $(grep -c . examples/orders.jsonl) steps (tables, transactions, a savepoint rollback, a rollback, a failed statement, a DDL, a log switch)"
head -c 600 examples/orders.jsonl; echo " ..."

say "doctor: the database prerequisites, checked through the same boundary the capture mines with"
"$capture" doctor --config "$work/capture.yaml"

say "run: mine the redo, buffer each transaction, write each committed one once, in commit order"
"$capture" run --config "$work/capture.yaml" --exit-at-end

say "the events ($work/out/events.jsonl): rolled-back work never appears"
python3 - "$work/out/events.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    image = e.get("after") or e.get("before") or {}
    detail = e.get("sql") or json.dumps(image)
    print(f"{e['commit_scn']:>8} {e['op']:>4} {e['schema']}.{e['table']:<10} {detail}")
PY

say "the bookmark stored with the data"
cat "$work/out/events.jsonl.bookmark"; echo

say "run again: it resumes from the bookmark and writes nothing twice"
before=$(wc -l <"$work/out/events.jsonl")
"$capture" run --config "$work/capture.yaml" --exit-at-end
after=$(wc -l <"$work/out/events.jsonl")
echo "events before: $before, after the second run: $after"

say "a typed stop: the same capture with a spill cap too small for a large transaction"
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
with open(f"{work}/big.jsonl", "w") as out:
    out.write(open(f"{work}/orders.jsonl").readline())
    out.write(open(f"{work}/orders.jsonl").readlines()[1])
    for i in range(40000):
        out.write(json.dumps({"tx": "big", "insert": "SALES.CUSTOMERS", "values": {"ID": 1000 + i, "NAME": "x" * 100, "EMAIL": "y" * 190}}) + "\n")
    out.write('{"tx":"big","commit":true}\n')
PY
sed -e 's/orders.jsonl/big.jsonl/' -e 's/maxBytes: 1Gi/maxBytes: 1Mi/' -e 's/memoryMaxBytes: 64Mi/memoryMaxBytes: 16Mi/' \
    -e 's|out/events.jsonl|out/big.jsonl|' "$work/capture.yaml" >"$work/small-cap.yaml"
set +e
"$capture" run --config "$work/small-cap.yaml" --exit-at-end 2>/dev/null
status=$?
set -e
echo "exit status $status; the termination message Kubernetes would show:"
cat "$REDOLINE_TERMINATION_LOG"; echo

say "done: the work directory is removed"
