# syntax=docker/dockerfile:1
# redoline-capture on Oracle Linux 9 with Oracle Instant Client (Basic Light), so that the `oracle`
# crate (ODPI-C) finds libclntsh.so at run time through the loader cache. Non-root (UID 65532).
#
# The capture links glibc dynamically (librdkafka, zlib, OpenSSL, Cyrus SASL, libcurl, and ODPI-C's
# dlopen of libclntsh), so it
# is built on the same Oracle Linux release it runs on: a binary built on a newer distribution
# would need a newer glibc than Oracle Linux 9's 2.34. The build stage is that release build:
#   cargo build --release --locked -p redoline-capture
# From the repository root (docs/images.md):
#   docker build -f images/capture.Dockerfile -t ghcr.io/redoline/redoline-capture:0.1.0 \
#     --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) .
#
# Without build arguments this is the published image. Two arguments make the test environment's
# image (tests/env/build-images.sh, docs/images.md), which cannot reach Oracle's registries:
#   ORACLE_CLIENT=none      a runtime stage on NO_CLIENT_IMAGE without Instant Client; the capture
#                           then reaches no Oracle database, only its embedded simulator. The
#                           image says so in its description and in io.redoline.oracle-client.
#   BINARY_FROM=context     copies a binary already built (path BINARY in the build context)
#                           instead of compiling in the build stage; it must have been built
#                           against a glibc no newer than the runtime stage's.
# Both are chosen with `FROM <stage>-${ARG}`. Buildah before 1.29 resolves such a stage name only
# when the argument is given with --build-arg, not from its default below.
ARG OL_IMAGE=container-registry.oracle.com/os/oraclelinux:9
ARG OL_SLIM_IMAGE=container-registry.oracle.com/os/oraclelinux:9-slim
ARG NO_CLIENT_IMAGE=${OL_SLIM_IMAGE}
ARG ORACLE_CLIENT=instantclient
ARG BINARY_FROM=source

FROM ${OL_IMAGE} AS binary-source
# The Rust toolchain of rust-toolchain.toml; cmake, gcc-c++ and perl build librdkafka (rdkafka-sys),
# zlib-devel its compression, openssl-devel TLS and SCRAM, cyrus-sasl-devel SASL/GSSAPI (Kerberos,
# the `gssapi` feature) and libcurl-devel the OIDC token requests of SASL/OAUTHBEARER (`curl`).
RUN dnf -y install gcc gcc-c++ make cmake perl zlib-devel openssl-devel cyrus-sasl-devel \
      libcurl-devel git && dnf clean all
ENV RUSTUP_HOME=/opt/rustup CARGO_HOME=/opt/cargo PATH=/opt/cargo/bin:$PATH
RUN curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain none
WORKDIR /src
COPY . .
# Installs the toolchain that rust-toolchain.toml names.
RUN rustup toolchain install && cargo build --release --locked -p redoline-capture \
 && install -m 0755 target/release/redoline-capture /redoline-capture

FROM scratch AS binary-context
ARG BINARY=target/release/redoline-capture
COPY ${BINARY} /redoline-capture

FROM binary-${BINARY_FROM} AS binary

FROM ${OL_SLIM_IMAGE} AS runtime-instantclient
ARG OL_SLIM_IMAGE
# Oracle Instant Client from Oracle's yum repository for Oracle Linux 9 (the release package adds
# the repository). Basic Light has the English messages and the character sets a capture needs;
# the RPM registers its directory with ldconfig, where ODPI-C looks for libclntsh.so.
#
# The Kafka client's libraries (ldd redoline-capture): OpenSSL, Cyrus SASL with its GSSAPI plugin
# (cyrus-sasl-gssapi: without it SASL/GSSAPI fails at the first connection, not at start),
# libcurl for OIDC token requests, and MIT Kerberos with kinit (krb5-workstation), which
# librdkafka runs to get and renew the capture's ticket from its keytab.
RUN microdnf -y install oracle-instantclient-release-23ai-el9 \
 && microdnf -y install oracle-instantclient-basiclite zlib libaio \
      openssl-libs cyrus-sasl-lib cyrus-sasl-gssapi libcurl-minimal krb5-libs krb5-workstation \
 && microdnf clean all \
 && ldconfig -p | grep -q libclntsh.so
# The capture writes only to its spill volume, /tmp (an emptyDir in the operator's pod) and the
# termination log; nothing in the image needs to be writable.
RUN groupadd --gid 65532 redoline && useradd --uid 65532 --gid 65532 --no-create-home --shell /sbin/nologin redoline
LABEL org.opencontainers.image.description="Oracle LogMiner change data capture to Kafka (one OracleCapture), with Oracle Instant Client" \
      org.opencontainers.image.base.name="${OL_SLIM_IMAGE}" \
      io.redoline.oracle-client="instantclient-basiclite-23ai"

# No Oracle client: the capture stops with CDC-2004 (DPI-1047) on an Oracle source and runs only
# the embedded simulator. The base needs glibc, libssl3, zlib, libsasl2 with its GSSAPI plugin,
# libcurl and the Kerberos libraries with kinit (ldd redoline-capture; see the stage above), and
# groupadd and useradd. tests/env/build-images.sh makes such a base from Debian's packages.
FROM ${NO_CLIENT_IMAGE} AS runtime-none
ARG NO_CLIENT_IMAGE
RUN groupadd --gid 65532 redoline && useradd --uid 65532 --gid 65532 --no-create-home --shell /sbin/nologin redoline
LABEL org.opencontainers.image.description="Oracle LogMiner change data capture to Kafka (one OracleCapture), WITHOUT Oracle Instant Client: reaches only the embedded Oracle simulator, not an Oracle database" \
      org.opencontainers.image.base.name="${NO_CLIENT_IMAGE}" \
      io.redoline.oracle-client="none"

FROM runtime-${ORACLE_CLIENT}
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.title="redoline-capture" \
      org.opencontainers.image.source="https://github.com/redoline/redoline" \
      org.opencontainers.image.url="https://github.com/redoline/redoline" \
      org.opencontainers.image.documentation="https://github.com/redoline/redoline/blob/main/docs/capture.md" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="redoline" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"

COPY --from=binary --chown=0:0 /redoline-capture /usr/local/bin/redoline-capture
USER 65532:65532
# /metrics, /healthz, /readyz, /status
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/redoline-capture"]
CMD ["--help"]
