# shellcheck shell=bash
# Sourced by the scripts that build or fetch a tool once into the shared cache ($REDOLINE_CACHE,
# default ~/.cache/redoline), in a directory named after a digest of what it is built from.
#
#   cache_dir NAME SOURCE_DIR FILE...
#       Prints $CACHE/NAME-<digest of SOURCE_DIR's FILEs>: an edit of any of them builds anew.
#   build_once DIR BUILT BUILD
#       Unless `BUILT` succeeds, runs `BUILD` holding DIR/.lock: several test binaries may ask at
#       once, one builds and the others wait and find it done.
#   fetch_once DIR BUILT BUILD CACHED_MESSAGE
#       The `fetch` command of a service script: logs CACHED_MESSAGE when `BUILT` succeeds,
#       else build_once DIR BUILT BUILD. The caller defines log().

CACHE="${REDOLINE_CACHE:-$HOME/.cache/redoline}"

cache_dir() {
  local name=$1 digest
  digest=$(cd "$2" && shift 2 && cat "$@" | sha256sum | cut -c1-16)
  echo "$CACHE/$name-$digest"
}

build_once() {
  local dir=$1 built=$2 build=$3
  "$built" && return 0
  mkdir -p "$dir"
  exec 9>"$dir/.lock"
  flock 9
  if ! "$built"; then "$build"; fi
  exec 9>&-
}

fetch_once() {
  local dir=$1 built=$2 build=$3 cached=$4
  if "$built"; then
    log "$cached"
    return 0
  fi
  build_once "$dir" "$built" "$build"
}
