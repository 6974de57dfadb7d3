#!/usr/bin/env bash
# Runs every test: unit and component tests (plain, ASan+UBSan, TSan), then the e2e scenarios
# on a real etcd + kube-apiserver built from Go modules (cached in ~/.cache/leasehold-e2e).
# LEASEHOLD_SKIP_E2E=1 skips the e2e part; LEASEHOLD_SKIP_SANITIZERS=1 the sanitizer builds;
# LEASEHOLD_SKIP_FUZZ=1 the bounded libFuzzer runs (clang-14, build-fuzz/); LEASEHOLD_SKIP_MODEL=1
# the SPIN model check (model/check.sh); LEASEHOLD_SKIP_RULES=1 the alert-rule tests
# (deploy/monitoring/rules_test.py).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
start=$SECONDS
step() { echo; echo "=== $* ($((SECONDS - start))s)"; }

step "setup"
bash scripts/setup.sh

step "build"
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
step "unit and component tests"
ctest --test-dir build -LE e2e --output-on-failure

if [[ "${LEASEHOLD_SKIP_SANITIZERS:-0}" != 1 ]]; then
  step "ASan+UBSan build and tests"
  bash scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DLEASEHOLD_SANITIZE=address
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -LE e2e --output-on-failure
  step "TSan build and tests"
  bash scripts/build.sh build-tsan -DCMAKE_BUILD_TYPE=Debug -DLEASEHOLD_SANITIZE=thread
  TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/test/tsan.supp" \
    ctest --test-dir build-tsan -LE e2e --output-on-failure
fi

if [[ "${LEASEHOLD_SKIP_MODEL:-0}" != 1 ]]; then
  step "model check of the election (model/README.md)"
  bash model/check.sh
fi

if [[ "${LEASEHOLD_SKIP_RULES:-0}" != 1 ]]; then
  step "alert rules: promtool check/test on every rendering, rule mutants (docs/runbooks.md)"
  promtool --version 2>&1 | head -1
  python3 deploy/monitoring/rules_test.py
  python3 deploy/monitoring/dashboard.py check  # the checked-in dashboard JSON and its chart copy
fi

if [[ "${LEASEHOLD_SKIP_FUZZ:-0}" != 1 ]]; then
  step "libFuzzer targets, ${LEASEHOLD_FUZZ_SECONDS:-20}s each (fuzz/README.md)"
  LEASEHOLD_SETUP_FUZZ=1 bash fuzz/run.sh
fi

if [[ "${LEASEHOLD_SKIP_E2E:-0}" != 1 ]]; then
  step "e2e on a real control plane"
  ctest --test-dir build -L e2e --output-on-failure
fi
step "all tests passed"
