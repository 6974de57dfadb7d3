#!/usr/bin/env bash
# build.sh DIR [cmake args...]: configure and build leasehold and its tests into DIR.
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
cmake --build "$dir" -j "$(nproc)"
