# shellcheck shell=bash
# Sourced by the scripts that package a directory as a container image without a registry or a
# container engine (build-k8s.sh for the pause image, node.sh's selftest for its probe image).
#
#   oci_archive ROOTFS REF OUT USER ENTRYPOINT...
#       Writes OUT: a tar of an OCI image layout (oci-layout, index.json, blobs/sha256/*) holding
#       one image for this machine's platform, made of one uncompressed layer with ROOTFS's files.
#       REF (e.g. localhost/redoline-pause:3.10.1) goes into the index's
#       org.opencontainers.image.ref.name annotation, which `ctr images import` takes as the
#       image's name as long as it is a full reference. USER is the image's default "uid:gid".
#       The archive is reproducible: same files, same bytes (sorted, owner 0, mtime 0).

oci_archive() {
  local rootfs=$1 ref=$2 out=$3 user=$4 work arch
  shift 4
  (($# > 0)) || { echo "oci_archive: no entrypoint" >&2; return 1; }
  arch=$(go env GOARCH 2>/dev/null || dpkg --print-architecture)
  work=$(mktemp -d "${TMPDIR:-/tmp}/redoline-oci.XXXXXX")
  mkdir -p "$work/layout/blobs/sha256"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --format=gnu \
    -C "$rootfs" -cf "$work/layer.tar" .
  # The JSON documents and their digests: Python writes them so that the entrypoint is quoted
  # properly whatever it holds.
  python3 - "$work" "$ref" "$arch" "$user" "$@" <<'PY' || { rm -rf "$work"; return 1; }
import hashlib, json, os, shutil, sys
work, ref, arch, user, entrypoint = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
blobs = os.path.join(work, "layout", "blobs", "sha256")

def put(data: bytes, media_type: str) -> dict:
    digest = hashlib.sha256(data).hexdigest()
    with open(os.path.join(blobs, digest), "wb") as f:
        f.write(data)
    return {"mediaType": media_type, "digest": "sha256:" + digest, "size": len(data)}

def doc(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode()

with open(os.path.join(work, "layer.tar"), "rb") as f:
    layer_bytes = f.read()
# An uncompressed layer: its digest is also its diff_id.
layer = put(layer_bytes, "application/vnd.oci.image.layer.v1.tar")
config = put(doc({
    "architecture": arch,
    "os": "linux",
    "config": {"User": user, "Entrypoint": entrypoint, "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},
    "rootfs": {"type": "layers", "diff_ids": [layer["digest"]]},
}), "application/vnd.oci.image.config.v1+json")
manifest = put(doc({
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": config,
    "layers": [layer],
}), "application/vnd.oci.image.manifest.v1+json")
manifest["platform"] = {"architecture": arch, "os": "linux"}
manifest["annotations"] = {"org.opencontainers.image.ref.name": ref}
with open(os.path.join(work, "layout", "index.json"), "wb") as f:
    f.write(doc({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                 "manifests": [manifest]}))
with open(os.path.join(work, "layout", "oci-layout"), "wb") as f:
    f.write(doc({"imageLayoutVersion": "1.0.0"}))
PY
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --format=gnu \
    -C "$work/layout" -cf "$out.tmp" oci-layout index.json blobs
  mv "$out.tmp" "$out"
  rm -rf "$work"
}
