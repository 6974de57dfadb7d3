#!/usr/bin/env bash
# static.sh [OUT_DIR]: builds one fully static `leasehold` (static-pie, glibc) into OUT_DIR
# (default build-static/), the recipe the image's Dockerfile runs too. Checks the result:
# `readelf` must show no INTERP and no NEEDED entry, and the binary must run with an empty
# environment.
#
# What it takes from where, and why:
#   - TLS: Mbed TLS 3.6 and libcurl 8.14, both from Debian 13's source packages (pinned below;
#     Debian's patches applied), built static here with Debian 12's GCC and glibc. Measured
#     leading (BENCHMARKS.md): 5.0 MiB VmRSS with Mbed TLS, 8.2 MiB with OpenSSL 3.0 static,
#     whose libcrypto alone was 3.3 MiB of text. Why Debian 13's: Debian 12's libcurl 7.88
#     speaks only TLS 1.2 over Mbed TLS, and its Mbed TLS 2.28 has no TLS 1.3 (an apiserver with
#     --tls-min-version=VersionTLS13, or OpenShift's "Modern" profile, would refuse it). Debian's
#     build enables the threading layer (libcurl and the watch run TLS on two threads); so does
#     this one.
#   - libcurl: HTTP and HTTPS only, the threaded resolver, nothing leasehold never asks for.
#   - yaml-cpp (libyaml-cpp.a), libstdc++ and glibc (libc.a): Debian 12's, as scripts/setup.sh
#     installs them. spdlog and fmt: header-only (Debian ships no libspdlog.a or libfmt.a).
# glibc, static: the NSS "files" and "dns" back-ends are built into libc.a since glibc 2.34, so
# /etc/hosts and resolv.conf (the kubelet mounts both into every container) work without any
# libnss_*.so or nsswitch.conf: /etc/hosts is read first, then DNS with resolv.conf's search path.
# e2e/scenarios/static.py (`rootfs`) checks both from a root that holds nothing else, with a DNS
# server that denies the /etc/hosts name (so DNS-first would fail). Nothing here names an architecture: the
# same script builds arm64 on an arm64 machine (or in `buildah bud --arch arm64`).
#
# Env: LEASEHOLD_STATIC_CACHE (default ~/.cache/leasehold-static): the sources and the static
# libraries, reused while the pins are the same. CMAKE_BUILD_ARGS: more cmake arguments.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-build-static}
cache=${LEASEHOLD_STATIC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/leasehold-static}
start=$SECONDS
log() { echo "static.sh [$((SECONDS - start))s]: $*" >&2; }
die() { echo "static.sh: $*" >&2; exit 1; }
mkdir -p "$cache"
# ccache in front of every compiler below, when installed (the Dockerfile installs it, and
# scripts/image.sh mounts the host's cache): the TLS libraries and leasehold alike.
# shellcheck source=scripts/ccache.sh
source scripts/ccache.sh
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)

# The pins: Debian 13 source package versions. Change them together with BENCHMARKS.md's numbers.
# curl: 8.14.1-2+deb13u7 is listed in trixie and trixie-security as of 2026-12-01, but neither
# archive served its files here (404), so the newest that can be fetched is pinned; the script
# warns when a newer version is listed, so that the pin is raised as soon as it can be.
MBEDTLS_DEB=3.6.6-0.1~deb13u1
CURL_DEB=8.14.1-2+deb13u5
SUITE=trixie

# debian_mirror [security]: the machine's Debian archives (scripts/debian-mirror.sh).
# shellcheck source=scripts/debian-mirror.sh
source scripts/debian-mirror.sh

# apt-get source PKG=VERSION from $SUITE, without touching the machine's apt configuration: a
# private sources list and state directory. Each archive is tried alone as well, since an index
# can name a version that only the other archive's pool holds.
fetch_source() {
  local pkg=$1 version=$2 dir=$cache/src/$1-$2
  [[ -f "$dir/.done" ]] && { SRC_DIR=$(find "$dir" -mindepth 1 -maxdepth 1 -type d | head -1); return 0; }
  local apt=$cache/apt main security lists=()
  main=$(debian_mirror) || die "no Debian archive in the apt sources; set DEBIAN_MIRROR"
  security=$(debian_mirror security)
  rm -rf "$apt/parts" && mkdir -p "$apt/parts" "$apt/cache/archives/partial"
  echo "deb-src $main $SUITE main" >"$apt/main.list"
  lists+=("$apt/main.list")
  if [[ -n "$security" ]]; then
    echo "deb-src $security $SUITE-security main" >"$apt/security.list"
    cat "$apt/main.list" "$apt/security.list" >"$apt/all.list"
    lists=("$apt/all.list" "$apt/main.list" "$apt/security.list")
  fi
  local l opts tag newest errors=""
  for l in "${lists[@]}"; do
    tag=$(basename "$l" .list)
    opts=(-o "Dir::Etc::SourceList=$l" -o "Dir::Etc::SourceParts=$apt/parts"
          -o "Dir::State::Lists=$apt/lists-$tag" -o "Dir::Cache=$apt/cache"
          -o "APT::Sandbox::User=root")
    mkdir -p "$apt/lists-$tag/partial"
    if ! apt-get "${opts[@]}" update -qq >"$apt/update-$tag.log" 2>&1; then
      errors+="apt-get update ($tag): $(tail -3 "$apt/update-$tag.log")"$'\n'
      continue
    fi
    newest=$(apt-cache "${opts[@]}" showsrc "$pkg" 2>/dev/null | sed -n 's/^Version: //p' |
             sort -V | tail -1)
    if [[ -n "$newest" && "$newest" != "$version" ]] &&
       [[ $(printf '%s\n%s\n' "$version" "$newest" | sort -V | tail -1) == "$newest" ]]; then
      log "warning: $pkg $newest is listed in $tag, newer than the pin $version: raise the pin if its files are served"
    fi
    rm -rf "$dir" && mkdir -p "$dir"
    if (cd "$dir" && apt-get "${opts[@]}" source -qq "$pkg=$version" >"$dir.log" 2>&1); then
      touch "$dir/.done"
      SRC_DIR=$(find "$dir" -mindepth 1 -maxdepth 1 -type d | head -1)
      log "source $pkg $version from $(tr '\n' ' ' <"$l")"
      return 0
    fi
    errors+="apt-get source ($tag): $(tail -3 "$dir.log")"$'\n'
  done
  printf '%s' "$errors" >&2
  die "apt-get source $pkg=$version ($SUITE) failed"
}

build_tls() {
  [[ -f "$prefix/.done" ]] && return 0
  log "building the TLS libraries into $prefix"
  rm -rf "$prefix" "$cache/build-mbedtls" "$cache/build-curl"
  fetch_source mbedtls "$MBEDTLS_DEB"
  local mbedtls_src=$SRC_DIR
  fetch_source curl "$CURL_DEB"
  local curl_src=$SRC_DIR
  # Debian's configuration (debian/rules): the pthread threading layer on.
  sed -i -e 's|^//\(#define MBEDTLS_THREADING_C\)$|\1|' \
         -e 's|^//\(#define MBEDTLS_THREADING_PTHREAD\)$|\1|' \
      "$mbedtls_src/include/mbedtls/mbedtls_config.h"
  grep -q '^#define MBEDTLS_THREADING_PTHREAD$' "$mbedtls_src/include/mbedtls/mbedtls_config.h" ||
    die "mbedtls: cannot enable MBEDTLS_THREADING_PTHREAD"
  log "building Mbed TLS $MBEDTLS_DEB static"
  cmake -S "$mbedtls_src" -B "$cache/build-mbedtls" "${gen[@]}" "${CCACHE_CMAKE_ARGS[@]}" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DENABLE_TESTING=OFF -DENABLE_PROGRAMS=OFF -DUSE_SHARED_MBEDTLS_LIBRARY=OFF \
    -DUSE_STATIC_MBEDTLS_LIBRARY=ON >"$cache/mbedtls.log" 2>&1 &&
    cmake --build "$cache/build-mbedtls" -j "$(nproc)" >>"$cache/mbedtls.log" 2>&1 &&
    cmake --install "$cache/build-mbedtls" >>"$cache/mbedtls.log" 2>&1 ||
    { tail -30 "$cache/mbedtls.log" >&2; die "mbedtls: build failed"; }
  log "building libcurl $CURL_DEB static (HTTP and HTTPS, Mbed TLS)"
  # What leasehold uses: HTTP/1.1 and HTTPS, the threaded resolver (getaddrinfo), proxies from the
  # environment as client-go honours them. Off: every other protocol, cookies, netrc (its
  # getpwuid would need NSS "passwd"), HSTS, alt-svc, DoH, MIME, NTLM, websockets, compression.
  # No CA bundle or path: leasehold always names the CA (ca.crt or the kubeconfig's).
  cmake -S "$curl_src" -B "$cache/build-curl" "${gen[@]}" "${CCACHE_CMAKE_ARGS[@]}" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_PREFIX_PATH="$prefix" \
    -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON -DBUILD_CURL_EXE=OFF \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_TESTING=OFF -DBUILD_LIBCURL_DOCS=OFF \
    -DBUILD_MISC_DOCS=OFF -DENABLE_CURL_MANUAL=OFF -DHTTP_ONLY=ON \
    -DCURL_USE_OPENSSL=OFF -DCURL_USE_MBEDTLS=ON -DENABLE_THREADED_RESOLVER=ON \
    -DCURL_DISABLE_LDAP=ON -DUSE_NGHTTP2=OFF -DCURL_USE_LIBSSH2=OFF -DUSE_LIBIDN2=OFF \
    -DCURL_USE_LIBPSL=OFF -DUSE_LIBRTMP=OFF -DCURL_ZLIB=OFF -DCURL_ZSTD=OFF -DCURL_BROTLI=OFF \
    -DCURL_USE_GSSAPI=OFF -DCURL_DISABLE_NETRC=ON -DCURL_DISABLE_COOKIES=ON \
    -DCURL_DISABLE_ALTSVC=ON -DCURL_DISABLE_HSTS=ON -DCURL_DISABLE_DOH=ON \
    -DCURL_DISABLE_MIME=ON -DCURL_DISABLE_NTLM=ON -DCURL_DISABLE_WEBSOCKETS=ON \
    -DCURL_CA_BUNDLE=none -DCURL_CA_PATH=none -DCURL_CA_FALLBACK=OFF \
    >"$cache/curl.log" 2>&1 &&
    cmake --build "$cache/build-curl" -j "$(nproc)" >>"$cache/curl.log" 2>&1 &&
    cmake --install "$cache/build-curl" >>"$cache/curl.log" 2>&1 ||
    { tail -30 "$cache/curl.log" >&2; die "curl: build failed"; }
  grep -q 'Enabled SSL backends: mbedTLS' "$cache/curl.log" || die "curl: not built on Mbed TLS"
  rm -rf "$cache/build-mbedtls" "$cache/build-curl"
  touch "$prefix/.done"
}

# The libraries' directory is named by everything that shapes them: the pins, this recipe
# (build_tls's text), the compiler and the architecture.
recipe=$(declare -f build_tls | sha256sum | cut -c1-12)
prefix=$cache/tls-mbedtls_${MBEDTLS_DEB}-curl_${CURL_DEB}-$(gcc -dumpfullversion)-$(uname -m)-$recipe
build_tls
log "Mbed TLS $MBEDTLS_DEB and libcurl $CURL_DEB in $prefix"
CURL_PREFIX=$prefix

# -O2 instead of CMake's Release -O3: a smaller binary for a process that idles, and GCC 12
# reports a false -Wmaybe-uninitialized (an error under -Werror) at -O3. -s strips the symbols.
# CURL_DIR is named so that a build directory configured against other pins follows these.
# shellcheck disable=SC2086
cmake -S . -B "$out" "${gen[@]}" "${CCACHE_CMAKE_ARGS[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DLEASEHOLD_BUILD_TESTS=OFF \
  -DLEASEHOLD_STATIC=ON "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DCMAKE_EXE_LINKER_FLAGS=-s \
  -DCMAKE_PREFIX_PATH="$CURL_PREFIX" -DCURL_DIR="$CURL_PREFIX/lib/cmake/CURL" \
  --no-warn-unused-cli ${CMAKE_BUILD_ARGS:-} >/dev/null
# glibc warns at link time that getaddrinfo in a static binary needs "the shared libraries from
# the glibc version used for linking": only for NSS back-ends other than files and dns (above).
if ! cmake --build "$out" -j "$(nproc)" --target leasehold >"$out/static-build.log" 2>&1; then
  grep -v '^\[' "$out/static-build.log" | tail -40 >&2
  die "the leasehold build failed"
fi
bin=$out/leasehold
[[ -x "$bin" ]] || die "no $bin"

# The checks that make it "fully static": no program interpreter, no shared library, and no
# RUNPATH (glibc's static-pie start-up aborts on one).
if readelf -lW "$bin" | grep -q INTERP; then die "$bin has an INTERP header"; fi
if readelf -dW "$bin" | grep -q -e NEEDED -e RUNPATH -e RPATH; then
  die "$bin NEEDs a shared library or names a RUNPATH: $(readelf -dW "$bin" | grep -e NEEDED -e PATH)"
fi
version=$(env -i "$bin" --version) || die "$bin --version failed"
log "$bin: $version; $(stat -c %s "$bin") bytes; $(readelf -hW "$bin" | sed -n 's/ *Type: *//p')"
echo "$bin"
