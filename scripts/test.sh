#!/usr/bin/env bash
# Runs every test: unit and component tests (plain, ASan+UBSan, TSan), the SPIN model, the alert
# rules, the fuzz targets, then the e2e scenarios on a real etcd + kube-apiserver and the node
# tier (real pods on a real kubelet), the Go binaries built from pinned modules and cached in
# ~/.cache/leasehold-e2e. Prints a table of its stages and their wall times at the end, passed
# or not (scripts/stages.sh; docs/building.md "Where make test's time goes").
#
# The order is the waiting's, not the listing's (docs/building.md says why and what it saved):
#   - the Go builds start first, in the background (a cold machine's longest steps, needing
#     nothing from the C++ side); the e2e stage waits for them only when it begins;
#   - the sanitizer builds and tests, the model, the rules and the fuzz runs compute, and run in
#     the background beside the e2e and node tiers, which mostly wait (lease expiry, kubelet sync,
#     alert windows); those tiers' bounds hold under a load of both cores by design (CONTRIBUTING);
#   - the e2e and node scenarios run side by side (ctest -j); those that must be alone say so
#     with CTest properties (e2e/CMakeLists.txt, "Running side by side").
# Every C++ build goes through ccache (~/.cache/ccache; scripts/build.sh).
#
# LEASEHOLD_SKIP_E2E=1 skips the e2e part; LEASEHOLD_SKIP_SANITIZERS=1 the sanitizer builds;
# LEASEHOLD_SKIP_FUZZ=1 the bounded libFuzzer runs (clang-14, build-fuzz/); LEASEHOLD_SKIP_MODEL=1
# the SPIN model check (model/check.sh); LEASEHOLD_SKIP_RULES=1 the alert-rule tests
# (deploy/monitoring/rules_test.py); LEASEHOLD_SKIP_NODE=1 the node tier (label `node`, a
# one-node cluster with a real kubelet, needs root; e2e/node/README.md).
# LEASEHOLD_E2E_JOBS (default 4): how many e2e and node tests run at once.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
skip() { [[ "${!1:-0}" == 1 ]]; }
# at_nice N CMD...: run CMD (a function of this script), and all it starts, at niceness N.
at_nice() { renice -n "$1" -p "$BASHPID" >/dev/null && "${@:2}"; }

# Checked first, not after the build.
if ! skip LEASEHOLD_SKIP_NODE && [[ $(id -u) -ne 0 ]]; then
  echo "test.sh: the node tier needs root (namespaces, mounts, iptables): run as root, or set" \
    "LEASEHOLD_SKIP_NODE=1 to leave it out" >&2
  exit 2
fi
source scripts/stages.sh

# The Go builds the e2e and node tiers need, in the background from the start: the control
# plane (etcd, kube-apiserver, kubectl, helm), then the client-go peers; and the node's commands,
# which wait for the control plane's build (its lock) and then build beside the peers. Each
# build.sh does nothing when its stamp matches (warm) and holds a lock while it builds, so a
# test that calls it meanwhile waits for this build instead of starting its own. The e2e stage
# waits for the first two only; the node fixture's build.sh waits for the third.
go_e2e() {
  local t
  t=$SECONDS; bash e2e/controlplane/build.sh | tail -1
  echo "control plane: $((SECONDS - t))s"
  if ! skip LEASEHOLD_SKIP_E2E; then
    t=$SECONDS; bash e2e/interop/build.sh | tail -1
    echo "client-go interop peers: $((SECONDS - t))s"
    # The e2e_v1_11_ scenarios' apiserver (OpenShift 3.11's Kubernetes): cached like the
    # others, so the e2e stage, which waits for this stage, finds it built.
    t=$SECONDS; bash e2e/controlplane/build-v1.11.sh | tail -1
    echo "kube-apiserver v1.11.10: $((SECONDS - t))s"
  fi
}
go_node() {
  local t=$SECONDS
  bash e2e/controlplane/build.sh >/dev/null
  echo "waited for the control plane's build: $((SECONDS - t))s"
  t=$SECONDS; bash e2e/node/build.sh | tail -1
  echo "node binaries: $((SECONDS - t))s"
  # The observe scenarios' operator (its image is made at the node's start) and the Prometheus
  # with Kubernetes discovery of prometheus_discovery.
  t=$SECONDS; bash e2e/crmanager/build.sh | tail -1
  echo "controller-runtime manager: $((SECONDS - t))s"
  t=$SECONDS; bash e2e/node/prometheus/build.sh | tail -1
  echo "prometheus (Kubernetes discovery): $((SECONDS - t))s"
}

# What computes and does not need the e2e tiers: in the background beside them, one stage
# after another (they would only share the cores), each a row of the table. A failure does not
# stop the ones after it. The builds and the model run at nice 15: beside the e2e and node tiers,
# whose tests wait and measure, they take the cores those leave idle. The tests run at nice 0,
# as they always did: the sanitizer tests' component cases wait in real time, and each fuzz
# target has a wall-clock budget, which a starved process would spend on fewer inputs.
# The sanitizer builds make one CTest test per binary (LEASEHOLD_TEST_PER_CASE=OFF): a process
# per case costs each case a sanitizer start-up and exit, measured 0.15 s (ASan, leak check on)
# and 0.14-0.29 s (TSan) a case under load, ~45-85 s for our ~300 cases per build, for a
# selection nobody needs there (CONTRIBUTING.md, "Running one test"). They leave out the label
# `once`: the tests of the tree rather than of a build (Python, the include rule, the scenario
# registry), which ran in the plain build's pass.
asan_env=(env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
              UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
tsan_env=(env "TSAN_OPTIONS=halt_on_error=1 suppressions=$PWD/test/tsan.supp")
# Each fuzz target's wall-clock budget. Beside the e2e tier a target ran 81-96% of the inputs it
# ran alone in 20 s (fuzz/run.sh's default; measured 2026-12-05, stat::number_of_executed_units),
# so here it gets 25 s: at least as many inputs as before, in a stage that ends before the e2e
# tier does.
fuzz_seconds=${LEASEHOLD_FUZZ_SECONDS:-25}
compute() {
  local rc=0
  if skip LEASEHOLD_SKIP_SANITIZERS; then
    stage_skip "sanitizers" LEASEHOLD_SKIP_SANITIZERS
  else
    stage "build: ASan+UBSan (Debug)" nice -n 15 bash scripts/build.sh build-asan \
      -DCMAKE_BUILD_TYPE=Debug -DLEASEHOLD_SANITIZE=address -DLEASEHOLD_TEST_PER_CASE=OFF &&
      stage "unit and component tests: ASan+UBSan" "${asan_env[@]}" \
        ctest --test-dir build-asan -j 2 -LE 'e2e|node|once' --no-tests=error \
          --output-on-failure || rc=1
    stage "build: TSan (Debug)" nice -n 15 bash scripts/build.sh build-tsan \
      -DCMAKE_BUILD_TYPE=Debug -DLEASEHOLD_SANITIZE=thread -DLEASEHOLD_TEST_PER_CASE=OFF &&
      stage "unit and component tests: TSan" "${tsan_env[@]}" \
        ctest --test-dir build-tsan -j 2 -LE 'e2e|node|once' --no-tests=error \
          --output-on-failure || rc=1
  fi
  if skip LEASEHOLD_SKIP_MODEL; then stage_skip "model" LEASEHOLD_SKIP_MODEL
  else stage "model: SPIN (model/check.sh)" nice -n 15 bash model/check.sh || rc=1
  fi
  if skip LEASEHOLD_SKIP_FUZZ; then stage_skip "fuzz" LEASEHOLD_SKIP_FUZZ
  else
    stage "fuzz: build, then ${fuzz_seconds}s a target (fuzz/run.sh)" \
      bash fuzz/run.sh "$fuzz_seconds" || rc=1
  fi
  if skip LEASEHOLD_SKIP_RULES; then stage_skip "rules" LEASEHOLD_SKIP_RULES
  else
    # The chart's rules are rendered with helm, built with the control plane (warm: nothing to
    # do; while the Go builds run in the background, their lock makes this wait for them, not
    # build twice). Its failure is the rules stage's.
    stage "rules: promtool, rule mutants, dashboard (docs/runbooks.md)" bash -c \
      'set -euo pipefail
       helm="$(bash e2e/controlplane/build.sh | tail -1)/helm"
       promtool --version 2>&1 | sed -n 1p
       python3 deploy/monitoring/rules_test.py --helm "$helm"
       python3 deploy/monitoring/dashboard.py check  # the dashboard JSON and its chart copy' ||
      rc=1
  fi
  # clang-tidy over the plain build's compile commands (CTest clang_tidy, left out of the plain
  # pass below): about 2.5 s of CPU a file when its stamp is missing, as on a fresh clone, so it
  # waits here rather than ahead of the e2e tiers. Not through ctest: a second ctest in build/
  # beside the e2e tiers' would overwrite their LastTest.log.
  stage "clang-tidy: src/ (scripts/check_tidy.py)" \
    nice -n 15 python3 scripts/check_tidy.py clang-tidy-14 build --jobs 2 || rc=1
  return "$rc"
}

# Everything that installs Debian packages, before anything runs in the background: two
# apt-get at once fail on dpkg's lock (and a background sudo could not ask for a password).
setup_env=(env)
skip LEASEHOLD_SKIP_FUZZ || setup_env+=(LEASEHOLD_SETUP_FUZZ=1)  # clang-14 for fuzz/run.sh
stage "setup: Debian packages (scripts/setup.sh)" "${setup_env[@]}" bash scripts/setup.sh
skip LEASEHOLD_SKIP_NODE ||
  stage "setup: the node tier's Debian packages (e2e/node/setup.sh)" bash e2e/node/setup.sh

go_e2e_name="Go builds: control plane, client-go peers, kube-apiserver v1.11.10"
go_node_name="Go builds: node (after the control plane's)"
# At nice 10: beside the C++ build they take what it leaves idle (the e2e stage needs both);
# the node's build is brought back to nice 0 when the e2e stage starts, since node tests then
# wait for it.
if ! skip LEASEHOLD_SKIP_E2E || ! skip LEASEHOLD_SKIP_NODE; then
  stage_bg "$go_e2e_name" at_nice 10 go_e2e
fi
skip LEASEHOLD_SKIP_NODE || stage_bg "$go_node_name" at_nice 10 go_node
stage "docs: links and anchors (scripts/check_links.py)" \
  bash -c 'python3 scripts/check_links.py --self-test >/dev/null && python3 scripts/check_links.py'
stage "build: plain (RelWithDebInfo)" bash scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
stage "unit and component tests, Python tests (plain build)" \
  ctest --test-dir build -j 2 -LE 'e2e|node|tidy' --no-tests=error --output-on-failure

compute_name="sanitizers, model, fuzz, rules"
stage_bg "$compute_name" compute

labels=()
skip LEASEHOLD_SKIP_E2E || labels+=(e2e)
skip LEASEHOLD_SKIP_NODE || labels+=(node)
e2e_rc=0
if ((${#labels[@]})); then
  tiers="$(IFS=+; echo "${labels[*]}")"
  if ! stage_wait "$go_e2e_name"; then
    e2e_rc=1
    stage_skip "$tiers" "the Go builds failed (above)"
  else
    if ! skip LEASEHOLD_SKIP_NODE && [[ -n "${STAGE_PID[$go_node_name]:-}" ]]; then
      renice -n 0 -g "${STAGE_PID[$go_node_name]}" >/dev/null 2>&1 || true
    fi
    # One ctest run for both labels, so that the image e2e_ship_image builds is built once and
    # reused by the node fixture.
    rm -f build/e2e-junit.xml
    stage "$tiers: ctest -j ${LEASEHOLD_E2E_JOBS:-4}" \
      ctest --test-dir build -j "${LEASEHOLD_E2E_JOBS:-4}" -L "$(IFS='|'; echo "${labels[*]}")" \
        --no-tests=error --output-on-failure --output-junit "$PWD/build/e2e-junit.xml" ||
      e2e_rc=1
    { echo "=== $tiers: the tests' own times (they ran side by side)"
      python3 scripts/ctest_times.py build/e2e-junit.xml build || true; } | stage_note
  fi
else
  stage_skip "e2e and node" "LEASEHOLD_SKIP_E2E and LEASEHOLD_SKIP_NODE"
fi
compute_rc=0
stage_wait "$compute_name" || compute_rc=1
skip LEASEHOLD_SKIP_NODE || stage_wait "$go_node_name" || e2e_rc=1
((e2e_rc == 0 && compute_rc == 0))
echo
echo "=== all tests passed"
