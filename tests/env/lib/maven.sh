# shellcheck shell=bash
# Sourced by the scripts that run Java from Maven Central jars: the services (kafka.sh, oidc.sh)
# resolve the runtime dependencies of a pom of theirs once into the shared cache, the converter
# checks (avroconverter/, jsonconverter/) build their own sources. The caller defines die() (and
# log() for maven_fetch).
#
#   maven_fetched RENDER LIBS MARKER
#       Succeeds when LIBS was filled from the pom RENDER prints as it is now (MARKER holds that
#       pom's digest, so an edit of the template fetches anew).
#   maven_fetch RENDER LIBS MARKER WHAT [JAR]
#       Resolves the runtime dependencies of the pom RENDER prints into LIBS with Maven (at most
#       900 s), through LIBS.partial so that a failed or interrupted fetch leaves no half
#       directory behind; checks that JAR is among them; writes the digest to MARKER. WHAT names
#       the artifact in messages; Maven's log is LIBS/../maven/mvn.log.
#   maven_package SRC BUILD [MAVEN_OPTION...]
#       Builds the Maven project of SRC (its pom.xml and src/) in BUILD/project (at most 900 s):
#       classes in target/classes, runtime dependencies in target/lib; then marks BUILD/.complete.
#       Maven's log is BUILD/mvn.log.
#   maven_classpath NAME SRC [MAVEN_OPTION...]
#       Builds the Maven project of SRC once (maven_package, in lib/cache.sh's
#       $CACHE/NAME-<digest of SRC's pom.xml, settings.xml when there is one, and src/>) and
#       prints the class path of its classes and runtime dependencies. Needs lib/cache.sh.

pom_digest_of() { "$1" | sha256sum | cut -d' ' -f1; }

maven_fetched() {
  local render=$1 libs=$2 marker=$3
  [ -f "$marker" ] && [ "$(cat "$marker")" = "$(pom_digest_of "$render")" ] && [ -d "$libs" ]
}

maven_fetch() {
  local render=$1 libs=$2 marker=$3 what=$4 jar=${5:-}
  command -v mvn >/dev/null || die "fetching $what needs Maven (mvn) on PATH"
  log "$what: resolving with Maven into $libs"
  local work
  work="$(dirname "$libs")/maven"
  rm -rf "$work" "$libs.partial"
  mkdir -p "$work"
  "$render" >"$work/pom.xml"
  if ! timeout 900 mvn -B -q -f "$work/pom.xml" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$libs.partial" >"$work/mvn.log" 2>&1; then
    tail -n 40 "$work/mvn.log" >&2
    die "Maven could not resolve $what (log: $work/mvn.log)"
  fi
  if [ -n "$jar" ] && [ ! -f "$libs.partial/$jar" ]; then
    die "Maven finished but $jar is not in $libs.partial"
  fi
  rm -rf "$libs"
  mv "$libs.partial" "$libs"
  pom_digest_of "$render" >"$marker"
}

maven_package() {
  local src=$1 build=$2
  shift 2
  command -v mvn >/dev/null || die "Maven (mvn) is needed to build $src"
  rm -rf "$build/project"
  mkdir -p "$build/project"
  cp -r "$src/pom.xml" "$src/src" "$build/project/"
  if ! timeout 900 mvn -B -q "$@" -f "$build/project/pom.xml" package \
      dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$build/project/target/lib" \
      >"$build/mvn.log" 2>&1; then
    tail -n 40 "$build/mvn.log" >&2
    die "the Maven build of $src failed (log: $build/mvn.log)"
  fi
  touch "$build/.complete"
}

maven_classpath() {
  local name=$1 src=$2 files=(pom.xml)
  shift 2
  [ ! -f "$src/settings.xml" ] || files+=(settings.xml)
  mapfile -t -O "${#files[@]}" files < <(cd "$src" && find src -type f | sort)
  MAVEN_SRC=$src
  MAVEN_BUILD=$(cache_dir "$name" "$src" "${files[@]}")
  MAVEN_OPTIONS=("$@")
  build_once "$MAVEN_BUILD" maven_built maven_build
  echo "$MAVEN_BUILD/project/target/classes:$MAVEN_BUILD/project/target/lib/*"
}

maven_built() { [ -f "$MAVEN_BUILD/.complete" ]; }

maven_build() { maven_package "$MAVEN_SRC" "$MAVEN_BUILD" "${MAVEN_OPTIONS[@]}"; }
