#!/usr/bin/env bash
# Installs what the benchmarks need beyond the e2e tests: wrk (Debian package).
set -euo pipefail
command -v wrk >/dev/null && exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q wrk >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q wrk >/dev/null; }
command -v wrk
