#!/usr/bin/env bash
# build.sh DIR [cmake args...]: configure and build leasehold and its tests into DIR.
# BUILD_TARGETS="t1 t2": build only these targets (e.g. `leasehold`), not everything.
# Every compile goes through ccache when it is installed (scripts/ccache.sh says how it is set).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=$1; shift
# shellcheck source=scripts/ccache.sh
source scripts/ccache.sh
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [[ ! -f "$dir/CMakeCache.txt" ]]; then
  cmake -S . -B "$dir" "${gen[@]}" "${CCACHE_CMAKE_ARGS[@]}" "$@" >/dev/null
else
  cmake -S . -B "$dir" "${CCACHE_CMAKE_ARGS[@]}" "$@" >/dev/null
fi
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
