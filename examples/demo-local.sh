#!/usr/bin/env bash
# The local demo without Kubernetes (`make demo-local`): redoline-capture on the embedded Oracle
# simulator, writing JSON Lines to a file. No Oracle, no Kafka. Every step says what it does; the
# work directory is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# REDOLINE_CAPTURE_BINARY: a capture already built (the test of this demo passes its own).
capture=${REDOLINE_CAPTURE_BINARY:-}
if [ -z "$capture" ]; then
  say "building redoline-capture"
  cargo build -q -p redoline-capture
  capture=target/debug/redoline-capture
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/redoline-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp examples/capture.yaml "$work/"
export REDOLINE_TERMINATION_LOG="$work/termination.log"
export RUST_LOG=${RUST_LOG:-warn}

# The simulator replays its scenario file as the database's history, and LogMiner (online catalog)
# renders redo with the dictionary as it is when mining: a row of SALES.ORDERS written before the
# DDL below, first mined after it, comes by object number, and a captured table's row the capture
# cannot rebuild stops it (CDC-2002, docs/runbook.md). So the demo does what a live database does:
# the capture mines the first part, then the database goes on with the DDL and the rest.
ddl_line=$(grep -n '"ddl"' examples/orders.jsonl | head -1 | cut -d: -f1)
head -n "$((ddl_line - 1))" examples/orders.jsonl >"$work/orders.jsonl"

say "the scenario so far: $(grep -c . "$work/orders.jsonl") steps (tables, transactions, a savepoint rollback, a rollback, a log switch)"
head -c 600 "$work/orders.jsonl"; echo " ..."

say "doctor: the database prerequisites, checked through the same boundary the capture mines with"
"$capture" doctor --config "$work/capture.yaml"

show_events() {
  python3 - "$work/out/events.jsonl" "$1" <<'PY'
import json, sys
for number, line in enumerate(open(sys.argv[1])):
    if number < int(sys.argv[2]):
        continue
    e = json.loads(line)
    image = e.get("after") or e.get("before") or {}
    detail = e.get("sql") or json.dumps(image)
    print(f"{e['commit_scn']:>8} {e['op']:>4} {e['schema']}.{e['table']:<10} {detail}")
PY
}

say "run: mine the redo, buffer each transaction, write each committed one once, in commit order"
"$capture" run --config "$work/capture.yaml" --exit-at-end

say "the events ($work/out/events.jsonl): rolled-back work never appears"
show_events 0

say "the bookmark stored with the data"
cat "$work/out/events.jsonl.bookmark"; echo

say "the database goes on: $(tail -n +"$ddl_line" examples/orders.jsonl | grep -c .) more steps (a DDL adding a column, a failed statement, a delete)"
tail -n +"$ddl_line" examples/orders.jsonl | tee -a "$work/orders.jsonl"

say "run again: it resumes from the bookmark, follows the DDL, and writes nothing twice"
before=$(wc -l <"$work/out/events.jsonl")
"$capture" run --config "$work/capture.yaml" --exit-at-end
show_events "$before"
python3 - "$work/out/events.jsonl" <<'PY'
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
seen = [(e["scn"], e["op"], e["table"]) for e in events]
assert len(seen) == len(set(seen)), "an event was written twice"
print(f"{len(events)} events, none twice")
PY

say "run once more with nothing new: nothing is written"
before=$(wc -l <"$work/out/events.jsonl")
"$capture" run --config "$work/capture.yaml" --exit-at-end
after=$(wc -l <"$work/out/events.jsonl")
echo "events before: $before, after the third run: $after"

say "a typed stop: the same capture with a spill cap too small for a large transaction"
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
with open(f"{work}/big.jsonl", "w") as out:
    scenario = open(f"{work}/orders.jsonl").readlines()
    out.write(scenario[0])
    out.write(scenario[1])
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
