#!/usr/bin/env bash
# Times Debezium's own SQL_REDO parser (LogMinerDmlParser) over a corpus written by
#   cargo bench -p redoline-capture --bench redo_parse
# Usage: tests/env/debezium-parser/run.sh CORPUS_FILE
# Prints one line per group: `debezium SHAPE COLUMNS STATEMENTS_PER_SECOND FAILED`.
# Needs Java 17+ and Maven (dependencies from Maven Central, cached in ~/.m2).
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 CORPUS_FILE" >&2
  exit 2
fi
corpus=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

mvn -q -B compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt >&2

# One compiler thread and the serial collector keep the JVM close to one core, like the Rust
# bench; the figures are still JIT-warm (two seconds of warm-up per group, then the best of six rounds).
exec java -XX:+UseSerialGC -XX:CICompilerCount=2 -Xms512m -Xmx512m \
  -cp "target/classes:$(cat target/classpath.txt)" \
  io.redoline.bench.DebeziumParserBench "$corpus"
