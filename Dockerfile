# leasehold image: one fully static binary (static-pie, glibc; scripts/static.sh) and nothing
# else, FROM scratch: no loader, no libraries, no shell, no passwd, no CA bundle (leasehold
# verifies the apiserver with the service account's ca.crt). An init container can copy the
# binary into an emptyDir with `leasehold install DIR`, and any main image can then run
# `leasehold gate -- CMD` from there.
#
#   buildah bud --pull-never -t leasehold:dev .    (scripts/image.sh does this without Docker)
#   docker build -t leasehold:dev .
#
# Runs as uid/gid 65532 by default (numeric: there is no /etc/passwd) and under any other uid
# (OpenShift's restricted SCC picks one): the binary is root-owned and world-executable, and
# nothing is written at run time (unless --status-file is given), so a read-only root filesystem
# works. Names are resolved through the /etc/hosts and /etc/resolv.conf the kubelet mounts.
# Multi-arch: build natively on each architecture, or `buildah bud --arch`; nothing here names an
# architecture.

ARG DEBIAN_IMAGE=docker.io/library/debian:bookworm-slim

FROM ${DEBIAN_IMAGE} AS build
ENV DEBIAN_FRONTEND=noninteractive
# The build dependencies of scripts/setup.sh, less the test-only ones (doctest, cpp-httplib,
# openssl, curl, python3, procps) and Debian's libcurl: scripts/static.sh builds its own, with
# Mbed TLS, from Debian 13's source packages (bzip2 and xz-utils unpack them). ccache: the
# compiles go through it; empty here unless the builder mounts a cache at /root/.cache/ccache
# (scripts/image.sh mounts the host's, so that a rebuild compiles only what changed).
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      g++ cmake ninja-build pkg-config dpkg-dev bzip2 xz-utils ca-certificates ccache \
      rapidjson-dev libspdlog-dev libfmt-dev libyaml-cpp-dev \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY CMakeLists.txt ./
COPY scripts/static.sh scripts/debian-mirror.sh scripts/ccache.sh ./scripts/
COPY src ./src
# The recipe: TLS libraries from source, then leasehold static; it checks that readelf shows no
# INTERP, no NEEDED and no RUNPATH. Then /rootfs holds the binary alone, and it must run there
# with nothing else, as the image's user and as an arbitrary OpenShift uid.
RUN bash scripts/static.sh /build \
 && mkdir -p /rootfs && cp /build/leasehold /rootfs/leasehold \
 && chmod 0755 /rootfs/leasehold \
 && chroot --userspec=65532:65532 /rootfs /leasehold --version \
 && chroot --userspec=1000680000:0 /rootfs /leasehold --version \
 && ls -l /rootfs

FROM scratch
LABEL org.opencontainers.image.title="leasehold" \
      org.opencontainers.image.description="Leader election sidecar: a Kubernetes Lease or ConfigMap lock, answered over localhost HTTP"
COPY --from=build /rootfs/ /
USER 65532:65532
ENTRYPOINT ["/leasehold"]
