# syntax=docker/dockerfile:1
# redoline-operator: one static binary on distroless "static" (no shell, no libc, no package
# manager), running as the distroless "nonroot" user 65532.
#
# The binary is the release build, static with musl (docs/images.md):
#   cargo build --release --locked -p redoline-operator --target x86_64-unknown-linux-musl
# then, from the repository root:
#   docker build -f images/operator.Dockerfile -t ghcr.io/redoline/redoline-operator:0.1.0 \
#     --build-arg VERSION=0.1.0 --build-arg REVISION=$(git rev-parse HEAD) .
# For arm64 use --build-arg TARGET=aarch64-unknown-linux-musl with a binary built for it.
#
# The test environment (tests/env/build-images.sh, docs/images.md) builds it from the glibc debug
# binary instead: BINARY=<its path in the build context> and, since that binary needs glibc, a
# BASE that has it (a Debian base made with mmdebstrap); org.opencontainers.image.base.name says
# which base an image has.
ARG BASE=gcr.io/distroless/static-debian12:nonroot
FROM ${BASE}

ARG BASE
ARG TARGET=x86_64-unknown-linux-musl
ARG BINARY=target/${TARGET}/release/redoline-operator
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z

LABEL org.opencontainers.image.title="redoline-operator" \
      org.opencontainers.image.description="Kubernetes operator for redoline OracleCapture resources (Oracle LogMiner change data capture to Kafka)" \
      org.opencontainers.image.source="https://github.com/redoline/redoline" \
      org.opencontainers.image.url="https://github.com/redoline/redoline" \
      org.opencontainers.image.documentation="https://github.com/redoline/redoline/blob/main/docs/operator.md" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="redoline" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="${BASE}"

# Root-owned and not writable by the process; the chart also mounts the root filesystem read-only.
COPY --chown=0:0 --chmod=0755 ${BINARY} /usr/local/bin/redoline-operator

# Numeric, so that runAsNonRoot can verify it without reading /etc/passwd.
USER 65532:65532
# /metrics, /healthz, /readyz (--metrics-addr)
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/redoline-operator"]
CMD ["run"]
