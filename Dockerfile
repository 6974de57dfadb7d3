# leasehold image: a Debian bookworm build, shipped FROM scratch with only the binary, its
# shared-library closure (from ldd) and the dynamic loader. No shell, no package manager, no CA
# bundle: leasehold verifies the apiserver with the service account's ca.crt.
#
#   buildah bud --pull-never -t leasehold:dev .    (scripts/image.sh does this without Docker)
#   docker build -t leasehold:dev .
#
# Runs as uid/gid 65532 ("nonroot") by default and under any other uid (OpenShift's restricted
# SCC picks one): every file is root-owned and world-readable, the binary world-executable, and
# nothing is written at run time (unless --status-file is given), so a read-only root
# filesystem works. Multi-arch: build natively on each architecture, or `buildah bud --arch`;
# nothing here names an architecture (ldd finds the loader and the multiarch directories).

ARG DEBIAN_IMAGE=docker.io/library/debian:bookworm-slim

FROM ${DEBIAN_IMAGE} AS build
ENV DEBIAN_FRONTEND=noninteractive
# The build dependencies of scripts/setup.sh, less the test-only ones (doctest, openssl, curl,
# python3, procps), and with Debian's libcurl source instead of libcurl4-openssl-dev (below).
# deb-src entries are derived from the image's own apt sources (deb822 or one-line format).
RUN for f in /etc/apt/sources.list.d/*.sources; do \
      [ -f "$f" ] && sed -i 's/^Types: deb$/Types: deb deb-src/' "$f"; done; \
    if [ -f /etc/apt/sources.list ]; then \
      sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >/etc/apt/sources.list.d/deb-src.list; fi; \
    apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends \
      g++ cmake ninja-build pkg-config dpkg-dev libssl-dev zlib1g-dev \
      rapidjson-dev libcpp-httplib-dev libspdlog-dev libcxxopts-dev libyaml-cpp-dev \
 && mkdir /curl-src && cd /curl-src && apt-get source -qq curl \
 && rm -rf /var/lib/apt/lists/*

# libcurl, from Debian's own source package (upstream release plus Debian's patches), built for
# what leasehold uses: HTTP/1.1 and HTTPS through OpenSSL. Debian's libcurl4 also links nghttp2,
# libidn2, librtmp (and so GnuTLS, nettle, gmp, p11-kit), libssh2, libpsl, Kerberos/GSSAPI,
# OpenLDAP/SASL, zstd and brotli: about 11 MB of the 25 MB the image would otherwise be.
# Installed under /opt/curl, so that it never shadows Debian's libcurl for the build tools.
RUN cmake -S /curl-src/curl-*/ -B /curl-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX=/opt/curl -DBUILD_SHARED_LIBS=ON -DBUILD_CURL_EXE=OFF \
      -DBUILD_TESTING=OFF -DENABLE_MANUAL=OFF -DHTTP_ONLY=ON -DCURL_USE_OPENSSL=ON \
      -DCURL_DISABLE_LDAP=ON -DUSE_NGHTTP2=OFF -DCURL_USE_LIBSSH2=OFF -DUSE_LIBIDN2=OFF \
      -DCURL_USE_LIBPSL=OFF -DCURL_ZSTD=OFF -DCURL_BROTLI=OFF -DCURL_USE_GSSAPI=OFF \
      -DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none >/dev/null \
 && cmake --build /curl-build && cmake --install /curl-build >/dev/null \
 && rm -rf /curl-build /curl-src

WORKDIR /src
COPY CMakeLists.txt ./
COPY src ./src
# Release, with -O2 instead of CMake's -O3: a smaller binary for a process that idles, and GCC 12
# reports a false -Wmaybe-uninitialized (an error under -Werror) in src/locks/codec.cpp at -O3.
# -s strips the symbols. No RPATH: at run time libcurl sits next to libc; until then
# LD_LIBRARY_PATH finds it (only for leasehold and ldd, not for cmake, which uses Debian's).
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLEASEHOLD_BUILD_TESTS=OFF \
      "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DCMAKE_EXE_LINKER_FLAGS=-s \
      -DCMAKE_PREFIX_PATH=/opt/curl -DCMAKE_SKIP_RPATH=ON \
 && cmake --build /build --target leasehold \
 && LD_LIBRARY_PATH=/opt/curl/lib /build/leasehold --version

# The runtime root: /leasehold, the dynamic loader at the path the binary names, every other
# library ldd lists in the directory that holds libc (the loader's default search path, so no
# ld.so.cache is needed), and passwd/group entries for the nonroot user.
RUN set -eu; r=/rootfs; export LD_LIBRARY_PATH=/opt/curl/lib; \
    mkdir -p "$r/etc"; \
    cp /build/leasehold "$r/leasehold"; \
    interp=$(readelf -l /build/leasehold | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p'); \
    libdir=$(dirname "$(ldd /build/leasehold | awk '$1 == "libc.so.6" {print $3}')"); \
    mkdir -p "$r$(dirname "$interp")" "$r$libdir"; \
    cp -L "$interp" "$r$interp"; \
    for f in $(ldd /build/leasehold | awk '$2 == "=>" && $3 ~ /^\// {print $3}'); do \
      cp -L "$f" "$r$libdir/"; \
    done; \
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$r/etc/passwd"; \
    printf 'root:x:0:\nnonroot:x:65532:\n' >"$r/etc/group"; \
    printf 'hosts: files dns\n' >"$r/etc/nsswitch.conf"; \
    chmod -R u=rwX,go=rX "$r"; \
    env -u LD_LIBRARY_PATH chroot --userspec=65532:65532 "$r" /leasehold --version; \
    env -u LD_LIBRARY_PATH chroot --userspec=1000680000:0 "$r" /leasehold --version; \
    ls -l "$r$libdir"; du -sh "$r"

FROM scratch
LABEL org.opencontainers.image.title="leasehold" \
      org.opencontainers.image.description="Leader election sidecar: a Kubernetes Lease or ConfigMap lock, answered over localhost HTTP"
COPY --from=build /rootfs/ /
USER 65532:65532
ENTRYPOINT ["/leasehold"]
