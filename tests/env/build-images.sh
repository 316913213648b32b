#!/usr/bin/env bash
# Builds the two container images, redoline-capture and redoline-operator, from the project's
# Dockerfiles on this machine, which has no container engine, no registry and no internet beyond
# Debian's packages (docs/images.md says what differs from the published images):
#   - a Debian base image made with mmdebstrap (bookworm, minbase, plus what the binaries load at
#     run time), since no base image can be pulled;
#   - the glibc debug binaries target/debug/redoline-{capture,operator} (brought up to date here
#     with `cargo build`, a no-op after `cargo test --workspace --no-run` built them), since
#     neither Oracle Linux nor rustup can be fetched in a build;
#   - the capture without Oracle Instant Client (ORACLE_CLIENT=none): it runs the simulator only.
# buildah (daemonless, as root) builds them, with its storage under the cache and a run directory
# of its own, so the machine's container storage is left alone. Each image is written as an OCI
# archive whose index names the full image reference (what `ctr images import` takes as the name).
#
# Cache ($REDOLINE_CACHE, default ~/.cache/redoline, under images/):
#   redoline-debian-base-bookworm-<digest>.oci.tar  the base; digest of suite, packages, options
#   redoline-capture.oci.tar, redoline-operator.oci.tar  (+ .ref: the reference they hold)
#   storage/                                        buildah's image store (the base only, at rest)
# An image's reference is localhost/<name>:<digest of its inputs> (binary, Dockerfile, base,
# labels, BUILD_REV): a warm run with the same inputs does nothing.
#
#   build-images.sh        builds what is missing or stale, then prints what `env` prints
#   build-images.sh env    prints export lines for REDOLINE_{CAPTURE,OPERATOR}_IMAGE and
#                          REDOLINE_{CAPTURE,OPERATOR}_IMAGE_ARCHIVE; fails when they are stale
#   build-images.sh base   only makes (or finds) the base image
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=lib/cache.sh
source tests/env/lib/cache.sh

IMAGES="$CACHE/images"
SUITE=bookworm
# What the binaries load (ldd target/debug/redoline-*): glibc and libgcc_s for both, libssl3 and
# zlib for the capture's librdkafka; CA certificates for TLS to Kafka, as the published base has.
# librdkafka's SASL/GSSAPI needs Cyrus SASL (libsasl2-2) and its GSSAPI plugin
# (libsasl2-modules-gssapi-mit, which brings the MIT Kerberos libraries) and kinit (krb5-user),
# which it runs to get the capture's ticket from its keytab; SASL/OAUTHBEARER with OIDC fetches
# tokens with libcurl (libcurl4).
BASE_PACKAGES=(libssl3 zlib1g libgcc-s1 ca-certificates libsasl2-2 libsasl2-modules-gssapi-mit
  libcurl4 krb5-user)
# Documentation, manual pages and translations are no use in an image (only the copyrights stay).
MMDEBSTRAP_OPTS=(
  --variant=minbase
  --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright'
)
# Bump when the way the base or the images are made changes in a way the digests do not see.
BASE_REV=1
BUILD_REV=1

base_digest=$(printf '%s\n' "suite=$SUITE" "packages=${BASE_PACKAGES[*]}" \
  "mmdebstrap=${MMDEBSTRAP_OPTS[*]}" "rev=$BASE_REV" | sha256sum | cut -c1-16)
BASE_IMAGE="localhost/redoline-debian-base:$SUITE-$base_digest"
BASE_ARCHIVE="$IMAGES/redoline-debian-base-$SUITE-$base_digest.oci.tar"

CAPTURE_BIN=target/debug/redoline-capture
OPERATOR_BIN=target/debug/redoline-operator

# ----- the labels and the references -----------------------------------------------------------

# The version the binary reports, the commit of this tree (-dirty when it has uncommitted changes
# to tracked files) and that commit's time: the labels org.opencontainers.image.{version,revision,
# created}, and part of each image's digest so that the labels never describe another build.
version_of() { timeout 30 "$1" version | awk '{print $2}'; }
REVISION="$(git rev-parse HEAD)$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty)"
EPOCH=$(git log -1 --format=%ct)
CREATED=$(date -u -d "@$EPOCH" +%Y-%m-%dT%H:%M:%SZ)

# image_ref NAME BINARY DOCKERFILE: localhost/NAME:<digest of what the image is made of>
image_ref() {
  local digest
  digest=$({
    sha256sum "$2" "$3" | cut -d' ' -f1
    printf '%s\n' "base=$BASE_IMAGE" "version=$(version_of "$2")" "revision=$REVISION" \
      "created=$CREATED" "rev=$BUILD_REV"
  } | sha256sum | cut -c1-12)
  echo "localhost/$1:$digest"
}

current() { # NAME REF: the archive of NAME holds REF
  [ -f "$IMAGES/$1.oci.tar" ] && [ "$(cat "$IMAGES/$1.ref" 2>/dev/null)" = "$2" ]
}

if [ "${1:-}" != base ]; then
  if [ "${1:-}" = env ]; then
    if [ ! -x "$CAPTURE_BIN" ] || [ ! -x "$OPERATOR_BIN" ]; then
      echo "build-images: the debug binaries are missing: run tests/env/build-images.sh" >&2
      exit 1
    fi
  else
    # Never an image of a stale binary: cargo rebuilds what changed (nothing, usually).
    timeout 3600 cargo build --locked -q -p redoline-capture -p redoline-operator --bins
  fi
  CAPTURE_REF=$(image_ref redoline-capture "$CAPTURE_BIN" images/capture.Dockerfile)
  OPERATOR_REF=$(image_ref redoline-operator "$OPERATOR_BIN" images/operator.Dockerfile)
fi

print_env() {
  echo "export REDOLINE_CAPTURE_IMAGE=$CAPTURE_REF"
  echo "export REDOLINE_CAPTURE_IMAGE_ARCHIVE=$IMAGES/redoline-capture.oci.tar"
  echo "export REDOLINE_OPERATOR_IMAGE=$OPERATOR_REF"
  echo "export REDOLINE_OPERATOR_IMAGE_ARCHIVE=$IMAGES/redoline-operator.oci.tar"
}

if [ "${1:-}" != base ] && current redoline-capture "$CAPTURE_REF" \
  && current redoline-operator "$OPERATOR_REF"; then
  if [ "${1:-}" != env ]; then
    echo "redoline-capture $CAPTURE_REF and redoline-operator $OPERATOR_REF: cached in $IMAGES"
  fi
  print_env
  exit 0
elif [ "${1:-}" = env ]; then
  echo "build-images: the images are missing or older than their inputs: run tests/env/build-images.sh" >&2
  exit 1
fi

# ----- buildah, confined to the cache ----------------------------------------------------------

for tool in buildah mmdebstrap; do
  command -v "$tool" >/dev/null || { echo "build-images: $tool is missing (tests/env/install-deps.sh installs it)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "build-images: mmdebstrap and buildah run as root here" >&2; exit 1; }

mkdir -p "$IMAGES"
# One build at a time: test binaries or a second shell may ask at once.
exec 9>"$IMAGES/.lock"
flock 9

# The run directory (locks and mount state) lives only as long as this script.
RUNROOT=$(mktemp -d "${TMPDIR:-/tmp}/redoline-buildah.XXXXXX")
work=()
cleanup() {
  local status=$?
  for c in "${work[@]}"; do bh rm "$c" >/dev/null 2>&1 || true; done
  rm -rf "$RUNROOT" "$IMAGES"/.tmp.*
  exit $status
}
trap cleanup EXIT

# Every buildah call with a deadline; chroot isolation because the RUN steps (useradd) need no
# namespaces or network, and it works wherever buildah runs as root.
bh() {
  timeout "${BUILDAH_TIMEOUT:-600}" buildah --root "$IMAGES/storage" --runroot "$RUNROOT" \
    --storage-driver overlay "$@"
}

# ----- the base --------------------------------------------------------------------------------

make_base() {
  if [ -f "$BASE_ARCHIVE" ]; then
    echo "base $BASE_IMAGE: cached in $BASE_ARCHIVE"
  else
    echo "build-images: making $BASE_IMAGE with mmdebstrap ($SUITE, minbase + ${BASE_PACKAGES[*]})"
    local tmp ctr
    tmp=$(mktemp -d "$IMAGES/.tmp.base.XXXXXX")
    timeout 900 mmdebstrap --quiet "${MMDEBSTRAP_OPTS[@]}" \
      --include="$(IFS=,; echo "${BASE_PACKAGES[*]}")" "$SUITE" "$tmp/rootfs.tar"
    ctr=$(bh from --quiet scratch)
    work+=("$ctr")
    # `add` unpacks a local tar archive as it is: owners, modes and links kept.
    bh add --quiet "$ctr" "$tmp/rootfs.tar" /
    bh config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      --cmd /bin/sh --created-by "mmdebstrap ${MMDEBSTRAP_OPTS[*]} $SUITE" \
      --label "io.redoline.debian-suite=$SUITE" \
      --label "io.redoline.debian-packages=${BASE_PACKAGES[*]}" "$ctr"
    bh commit --quiet --rm --identity-label=false "$ctr" "$BASE_IMAGE" >/dev/null
    work=()
    bh push --quiet "$BASE_IMAGE" "oci-archive:$tmp/base.oci.tar:$BASE_IMAGE"
    mv "$tmp/base.oci.tar" "$BASE_ARCHIVE"
    rm -rf "$tmp"
    # Earlier bases (other digests) are no longer used by anything this script makes.
    find "$IMAGES" -maxdepth 1 -name 'redoline-debian-base-*.oci.tar' ! -path "$BASE_ARCHIVE" -delete
    echo "base $BASE_IMAGE: made into $BASE_ARCHIVE"
  fi
  # The store may have been emptied (or made on another machine): the archive restores it.
  if ! bh inspect --type image "$BASE_IMAGE" >/dev/null 2>&1; then
    local id
    id=$(bh pull --quiet "oci-archive:$BASE_ARCHIVE")
    bh tag "$id" "$BASE_IMAGE"
  fi
}

# ----- the images ------------------------------------------------------------------------------

# build_image NAME REF BINARY DOCKERFILE BUILD_ARG...: the image REF from a build context that holds
# only BINARY (the Dockerfiles' own .dockerignore files are for the repository root as context).
build_image() {
  local name=$1 ref=$2 binary=$3 dockerfile=$4
  shift 4
  if current "$name" "$ref"; then
    echo "$name $ref: cached in $IMAGES/$name.oci.tar"
    return 0
  fi
  echo "build-images: building $ref from $dockerfile and $binary"
  local tmp
  tmp=$(mktemp -d "$IMAGES/.tmp.$name.XXXXXX")
  mkdir "$tmp/context"
  cp "$binary" "$tmp/context/$name"
  echo "# the build context holds the binary and nothing else" > "$tmp/ignore"
  bh build --quiet --isolation chroot --pull=never --identity-label=false --timestamp "$EPOCH" \
    --ignorefile "$tmp/ignore" -f "$dockerfile" \
    --build-arg "BINARY=$name" \
    --build-arg "VERSION=$(version_of "$binary")" --build-arg "REVISION=$REVISION" \
    --build-arg "CREATED=$CREATED" "$@" \
    -t "$ref" "$tmp/context" >/dev/null
  bh push --quiet "$ref" "oci-archive:$tmp/image.oci.tar:$ref"
  # Whenever NAME.ref exists, it names what NAME.oci.tar holds.
  rm -f "$IMAGES/$name.ref"
  mv "$tmp/image.oci.tar" "$IMAGES/$name.oci.tar"
  echo "$ref" > "$IMAGES/$name.ref"
  rm -rf "$tmp"
  # The archive is the product: the store keeps only the base between runs.
  bh rmi "$ref" >/dev/null
  echo "$name $ref: built into $IMAGES/$name.oci.tar"
}

make_base
[ "${1:-}" = base ] && exit 0

# Every argument that chooses a stage is given, even at its default: buildah 1.28 resolves
# `FROM stage-${ARG}` only for arguments passed with --build-arg.
build_image redoline-capture "$CAPTURE_REF" "$CAPTURE_BIN" images/capture.Dockerfile \
  --build-arg BINARY_FROM=context --build-arg ORACLE_CLIENT=none \
  --build-arg "NO_CLIENT_IMAGE=$BASE_IMAGE"
build_image redoline-operator "$OPERATOR_REF" "$OPERATOR_BIN" images/operator.Dockerfile \
  --build-arg "BASE=$BASE_IMAGE"
# buildah 1.28 leaves the working container of a stage that is only a FROM (`binary` in the
# capture's Dockerfile) behind; the store is this script's alone, so every container can go.
bh rm --all >/dev/null
bh rmi --prune >/dev/null
print_env
