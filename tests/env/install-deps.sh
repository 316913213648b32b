#!/usr/bin/env bash
# Installs the system tools the build and the test environment need, from Debian's packages, when
# they are missing. Rust (rustup), Go and Java come with the machine; their versions are checked.
set -euo pipefail

need=()
command -v cc >/dev/null || need+=(build-essential)
command -v make >/dev/null || need+=(make)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v openssl >/dev/null || need+=(openssl)
command -v python3 >/dev/null || need+=(python3)
command -v java >/dev/null || need+=(openjdk-17-jre-headless)
command -v mvn >/dev/null || need+=(maven)
command -v curl >/dev/null || need+=(curl)
# PostgreSQL (server and psql) for the Debezium JDBC sink pipeline test (tests/env/postgres.sh).
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || need+=(postgresql)
command -v psql >/dev/null || need+=(postgresql-client)
dpkg -s zlib1g-dev >/dev/null 2>&1 || need+=(zlib1g-dev)
# librdkafka is built with OpenSSL (TLS and SASL/SCRAM to Kafka), Cyrus SASL with its GSSAPI
# plugin (SASL/GSSAPI, Kerberos) and libcurl (SASL/OAUTHBEARER with OIDC: the token requests).
dpkg -s libssl-dev >/dev/null 2>&1 || need+=(libssl-dev)
dpkg -s libsasl2-dev >/dev/null 2>&1 || need+=(libsasl2-dev)
dpkg -s libsasl2-modules-gssapi-mit >/dev/null 2>&1 || need+=(libsasl2-modules-gssapi-mit)
dpkg -s libcurl4-openssl-dev >/dev/null 2>&1 || need+=(libcurl4-openssl-dev)
# The test KDC (tests/env/kdc.sh: krb5kdc, kdb5_util; kadmin.local is in the admin server's
# package) and kinit, which librdkafka runs to get the capture's Kerberos ticket.
command -v krb5kdc >/dev/null || need+=(krb5-kdc)
command -v kadmin.local >/dev/null || need+=(krb5-admin-server)
command -v kinit >/dev/null || need+=(krb5-user)
# The container images of the capture and the operator (tests/env/build-images.sh): a Debian base
# made with mmdebstrap, built with buildah (daemonless); umoci unpacks them and runc runs them in
# the image tests (tests/tests/it/images.rs).
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v buildah >/dev/null || need+=(buildah)
command -v umoci >/dev/null || need+=(umoci)
command -v runc >/dev/null || need+=(runc)
# The test node (tests/env/node.sh): the container runtime the kubelet drives, the CNI plugins that
# put pods on a bridge, and the tools that set up its namespaces and links.
command -v containerd >/dev/null || need+=(containerd)
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] || need+=(containernetworking-plugins)
command -v ip >/dev/null || need+=(iproute2)
command -v nsenter >/dev/null || need+=(util-linux)
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

fail() { echo "install-deps: $*" >&2; exit 1; }
command -v cargo >/dev/null || fail "Rust is missing: install rustup (the toolchain is pinned in rust-toolchain.toml)"
command -v go >/dev/null || fail "Go is missing: Go 1.21 or newer is needed to build etcd and kube-apiserver (newer toolchains come from the Go module proxy)"
go_minor=$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
[ "${go_minor:-0}" -ge 21 ] || fail "Go $(go env GOVERSION) is too old: 1.21 or newer switches toolchains by itself"
java_major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
[ "${java_major:-0}" -ge 17 ] || fail "Java ${java_major:-?} is too old: Kafka 4 needs 17 or newer"
# The schema registry (tests/env/registry.sh, Apicurio Registry 3) needs Java 21 or newer beside
# it: on PATH or under /usr/lib/jvm (the machines come with a Temurin JDK there), else Debian's.
registry_java=""
for candidate in java /usr/lib/jvm/*/bin/java; do
  [ -x "$(command -v "$candidate" 2>/dev/null)" ] || continue
  major=$("$candidate" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  if [ "${major:-0}" -ge 21 ]; then registry_java=$candidate; break; fi
done
if [ -z "$registry_java" ]; then
  apt-get update -qq
  if apt-cache show openjdk-21-jre-headless >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openjdk-21-jre-headless
  else
    fail "the schema registry needs Java 21 or newer and this Debian has no openjdk-21: install one under /usr/lib/jvm"
  fi
fi
echo "install-deps: cargo $(cargo --version | cut -d' ' -f2), $(go env GOVERSION), java $java_major, $(mvn -v 2>/dev/null | head -1)"
