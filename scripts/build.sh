#!/usr/bin/env bash
# build.sh DIR [cmake args...]: configure and build leasehold and its tests into DIR.
# BUILD_TARGETS="t1 t2": build only these targets (e.g. `leasehold`), not everything.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=$1; shift
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [[ ! -f "$dir/CMakeCache.txt" ]]; then
  cmake -S . -B "$dir" "${gen[@]}" "$@" >/dev/null
else
  cmake -S . -B "$dir" "$@" >/dev/null
fi
targets=()
for t in ${BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
