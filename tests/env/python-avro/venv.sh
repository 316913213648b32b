#!/usr/bin/env bash
# Builds (once, cached) the Python environment of the Avro consumer (consume.py): Confluent's
# Python client (confluent-kafka, librdkafka inside its wheel) with its schema registry client and
# AvroDeserializer (fastavro), pinned in requirements.txt, from PyPI.
#
#   venv.sh build        build it unless it is there
#   venv.sh python       print its python (building first when needed)
#   venv.sh consume ARGS run consume.py ARGS with it (building first when needed)
#
# The environment lives in $REDOLINE_CACHE/python-avro-<digest of requirements.txt> (default cache
# ~/.cache/redoline).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib/cache.sh
. "$HERE/../lib/cache.sh"
BUILD="$(cache_dir python-avro "$HERE" requirements.txt)"
PYTHON="${PYTHON:-python3}"

die() { echo "venv.sh: $*" >&2; exit 1; }

built() { [ -f "$BUILD/.complete" ] && [ -x "$BUILD/venv/bin/python" ]; }

build() {
  command -v "$PYTHON" >/dev/null || die "python3 is needed"
  rm -rf "$BUILD/venv"
  "$PYTHON" -m venv "$BUILD/venv" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  if ! timeout 900 "$BUILD/venv/bin/pip" install -q --disable-pip-version-check \
      -r "$HERE/requirements.txt" >"$BUILD/pip.log" 2>&1; then
    tail -n 40 "$BUILD/pip.log" >&2
    die "pip could not install requirements.txt (log: $BUILD/pip.log)"
  fi
  touch "$BUILD/.complete"
}

case "${1:-}" in
  build) build_once "$BUILD" built build ;;
  python) build_once "$BUILD" built build; echo "$BUILD/venv/bin/python" ;;
  consume) shift; build_once "$BUILD" built build; exec "$BUILD/venv/bin/python" "$HERE/consume.py" "$@" ;;
  *) die "usage: venv.sh build | python | consume ARGS..." ;;
esac
