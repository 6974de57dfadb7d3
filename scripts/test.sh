#!/usr/bin/env bash
# Runs every test: unit and component tests (plain, ASan+UBSan, TSan), then the e2e scenarios
# on a real etcd + kube-apiserver built from Go modules (cached in ~/.cache/leasehold-e2e).
# LEASEHOLD_SKIP_E2E=1 skips the e2e part; LEASEHOLD_SKIP_SANITIZERS=1 the sanitizer builds;
# LEASEHOLD_SKIP_FUZZ=1 the bounded libFuzzer runs (clang-14, build-fuzz/); LEASEHOLD_SKIP_MODEL=1
# the SPIN model check (model/check.sh); LEASEHOLD_SKIP_RULES=1 the alert-rule tests
# (deploy/monitoring/rules_test.py); LEASEHOLD_SKIP_NODE=1 the node tier (label `node`, a
# one-node cluster with a real kubelet, needs root; e2e/node/README.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
start=$SECONDS
step() { echo; echo "=== $* ($((SECONDS - start))s)"; }

# Checked first, not after the ~40 min before the node tier.
if [[ "${LEASEHOLD_SKIP_NODE:-0}" != 1 && $(id -u) -ne 0 ]]; then
  echo "test.sh: the node tier needs root (namespaces, mounts, iptables): run as root, or set" \
    "LEASEHOLD_SKIP_NODE=1 to leave it out" >&2
  exit 2
fi

step "setup"
bash scripts/setup.sh

step "docs: every Markdown link and anchor resolves (scripts/check_links.py)"
python3 scripts/check_links.py --self-test >/dev/null
python3 scripts/check_links.py

step "build"
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
step "unit and component tests"
ctest --test-dir build -LE 'e2e|node' --output-on-failure

if [[ "${LEASEHOLD_SKIP_SANITIZERS:-0}" != 1 ]]; then
  step "ASan+UBSan build and tests"
  # One CTest test per binary in the sanitizer builds (LEASEHOLD_TEST_PER_CASE=OFF): a process
  # per case costs each case a sanitizer start-up and exit, measured 0.15 s (ASan, leak check
  # on) and 0.14-0.29 s (TSan) a case under load, ~45-85 s for our ~300 cases per build, for a
  # selection nobody needs there (CONTRIBUTING.md, "Running one test").
  bash scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DLEASEHOLD_SANITIZE=address \
    -DLEASEHOLD_TEST_PER_CASE=OFF
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -LE 'e2e|node' --output-on-failure
  step "TSan build and tests"
  bash scripts/build.sh build-tsan -DCMAKE_BUILD_TYPE=Debug -DLEASEHOLD_SANITIZE=thread \
    -DLEASEHOLD_TEST_PER_CASE=OFF
  TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/test/tsan.supp" \
    ctest --test-dir build-tsan -LE 'e2e|node' --output-on-failure
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

# The node tier (e2e/node/README.md: a one-node cluster with a real kubelet, containerd and runc
# in network and mount namespaces of its own; ~15 min warm, its Go binaries ~5-7 min more cold).
# One ctest run for both labels, so that the image e2e_ship_image builds is built once and reused
# by the node fixture.
labels=()
[[ "${LEASEHOLD_SKIP_E2E:-0}" != 1 ]] && labels+=(e2e)
[[ "${LEASEHOLD_SKIP_NODE:-0}" != 1 ]] && labels+=(node)
if ((${#labels[@]})); then
  step "$(IFS=+; echo "${labels[*]}") on a real control plane"
  ctest --test-dir build -L "$(IFS='|'; echo "${labels[*]}")" --output-on-failure
fi
step "all tests passed"
