#!/usr/bin/env bash
# fuzz/run.sh [SECONDS [TARGET...]]: builds the libFuzzer targets (incrementally, with clang-14,
# in build-fuzz/ or $LEASEHOLD_FUZZ_BUILD) and runs each for SECONDS (default 20, or
# $LEASEHOLD_FUZZ_SECONDS), one process at a time. Exits non-zero if any target crashed, hung,
# leaked, ran out of memory or failed a FUZZ_CHECK; the input that did it is kept in
# <build>/fuzz-artifacts/.
#
# The seeds in fuzz/corpus/<target>/ are only read: what the fuzzer finds goes to a temporary
# working corpus that is deleted at the end (LEASEHOLD_FUZZ_CORPUS=DIR keeps it in DIR/<target>
# instead). See fuzz/README.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-${LEASEHOLD_FUZZ_SECONDS:-20}}
shift || true
build=${LEASEHOLD_FUZZ_BUILD:-build-fuzz}
all=(lock_codec_fuzzer rfc3339_fuzzer kubeconfig_fuzzer status_watch_fuzzer duration_fuzzer
     handler_fuzzer http_head_fuzzer)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")
# The dictionary of each target (fuzz/dict/).
declare -A dict=(
  [lock_codec_fuzzer]=json [status_watch_fuzzer]=json [rfc3339_fuzzer]=rfc3339
  [kubeconfig_fuzzer]=kubeconfig [duration_fuzzer]=duration [handler_fuzzer]=handler
  [http_head_fuzzer]=http
)

LEASEHOLD_SETUP_FUZZ=1 bash scripts/setup.sh

# shellcheck source=scripts/ccache.sh
source scripts/ccache.sh
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  # Debug without NDEBUG keeps RapidJSON's assertions; -O1 keeps it fast enough.
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" "${gen[@]}" "${CCACHE_CMAKE_ARGS[@]}" \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="-O1 -g" -DLEASEHOLD_FUZZ=ON \
    -DLEASEHOLD_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" --target leasehold_fuzzers -j "$(nproc)"

artifacts="$(cd "$build" && pwd)/fuzz-artifacts"
mkdir -p "$artifacts"
if [[ -n "${LEASEHOLD_FUZZ_CORPUS:-}" ]]; then
  work=$LEASEHOLD_FUZZ_CORPUS
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=()
for t in "${targets[@]}"; do
  mkdir -p "$work/$t"
  log="$build/fuzz-$t.log"
  echo "--- $t: ${seconds}s (log $log)"
  # One process (no -jobs/-workers): the machine is shared. The first corpus directory is the
  # writable one; the repo's seeds come second and are only read.
  if "$build/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$artifacts/$t-" \
      -dict="fuzz/dict/${dict[$t]}.dict" "$work/$t" "fuzz/corpus/$t" >"$log" 2>&1; then
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb):' \
      "$log" | tr '\n' ' '
    echo
  else
    failed+=("$t")
    echo "!!! $t FAILED; the end of its log:"
    tail -n 60 "$log"
    echo "!!! reproduce: $build/fuzz/$t $(grep -oE "$artifacts/$t-[a-z-]+[0-9a-f]+" "$log" | tail -1)"
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $artifacts)"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${seconds}s each without a finding"
