#!/usr/bin/env bash
# Installs the build and test dependencies from Debian packages. Idempotent: when every package
# is already installed it changes nothing and does not touch the network.
#
# Usage: setup.sh [demo]. With `demo`, only what `make demo` needs (build the agent, run the
# control plane and the Python demo); without, everything `make test` needs as well. Measured in a
# fresh Debian 12 chroot (docs/building.md "Cold start"): the demo's set 6.5 s, the rest 8.5 s;
# prometheus alone is 19 MB of the download and pulls a dozen JavaScript packages the demo does
# not use.
set -euo pipefail

# What `make demo` needs. The test libraries (doctest, cpp-httplib) are here too: the demo
# configures the same build tree as `make test` (tests on), and both are small header packages.
demo_packages=(
  build-essential cmake ninja-build pkg-config
  libcurl4-openssl-dev rapidjson-dev libcpp-httplib-dev libspdlog-dev
  doctest-dev libyaml-cpp-dev
  openssl curl python3 procps
  ccache  # every C++ build goes through it (scripts/ccache.sh): a warm rebuild compiles nothing
)
# What only the tests need, beside the above.
test_packages=(
  python3-venv    # e2e/interop/python_venv.sh (ensurepip for the Python client's venv)
  bzip2 xz-utils  # scripts/static.sh unpacks source packages (.tar.bz2, .tar.xz)
  prometheus      # promtool for the alert rules (Debian 12: 2.42; deploy/monitoring/rules_test.py)
  python3-yaml    # deploy/monitoring/rules.py
  pyflakes3       # the Python lint (CTest python_lint)
  spin            # model/check.sh
  buildah debootstrap  # scripts/image.sh (the image, e2e_ship_image)
  wrk             # bench/ (e2e_bench_smoke's /leader latency phase)
  clang-format-14 # the C++ format check (CTest clang_format, scripts/check_format.sh)
  clang-tidy-14   # the C++ lint (CTest clang_tidy, scripts/check_tidy.py, .clang-tidy)
)
# Installed here, once, before scripts/test.sh starts anything in the background: two apt-get
# at once fail on dpkg's lock. The scripts above install their own when run alone.
case "${1:-}" in
  demo) packages=("${demo_packages[@]}") ;;
  "") packages=("${demo_packages[@]}" "${test_packages[@]}") ;;
  *) echo "usage: setup.sh [demo]" >&2; exit 2 ;;
esac
if [[ "${LEASEHOLD_SETUP_FUZZ:-0}" == 1 ]]; then
  packages+=(clang-14 libclang-rt-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "setup: installing ${missing[*]}" >&2
sudo=""
[[ $(id -u) -eq 0 ]] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The prometheus package's postinst starts its own server (systemd unit or /etc/init.d script,
# on :9090) where an init system runs. Nothing here uses it: promtool runs alone and the e2e
# (e2e/scenarios/prometheus.py) starts the same binary itself on 127.0.0.1 at a free port, with
# a temporary TSDB. Stop and disable it, so that installing leaves no service running.
if [[ " ${missing[*]} " == *" prometheus "* ]]; then
  if [[ -d /run/systemd/system ]]; then
    $sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
  elif [[ -x /etc/init.d/prometheus ]]; then
    $sudo /etc/init.d/prometheus stop >/dev/null 2>&1 || true
    $sudo update-rc.d prometheus disable >/dev/null 2>&1 || true
  fi
fi
