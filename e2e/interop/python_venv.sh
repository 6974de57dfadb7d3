#!/usr/bin/env bash
# Create the venv of the Python interop peer (python_peer.py) in a cache outside the clone, with
# the packages of python-requirements.txt from PyPI:
#
#   ${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}/python-kubernetes-<version>-py<X.Y>-<base>/venv
#
# (<base>: a hash of the base interpreter's prefix and version).
#
# Does nothing when the venv is there and was made from the same requirements and interpreter
# (a few ms). The last line of stdout is always the venv's python:
#   PY=$(e2e/interop/python_venv.sh | tail -1)
#
# Env: LEASEHOLD_E2E_CACHE (cache root), PYTHON3 (base interpreter, default python3),
#      FORCE=1 (rebuild), PIP_INDEX_URL etc. as pip reads them.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "interop/python_venv.sh: $*" >&2; }

REQ="$HERE/python-requirements.txt"
PY3="${PYTHON3:-python3}"
command -v "$PY3" >/dev/null || { log "$PY3 not found"; exit 1; }
KVER="$(sed -n 's/^kubernetes==\([^ ]*\).*/\1/p' "$REQ")"
[[ -n "$KVER" ]] || { log "no kubernetes== pin in $REQ"; exit 1; }
PYID="$("$PY3" -c 'import sys
print("%d.%d" % sys.version_info[:2], sys.base_prefix, sys.version.split()[0])')"
PYVER="${PYID%% *}"
PYKEY="$(echo "$PYID" | sha256sum | cut -c1-8)"

CACHE_ROOT="${LEASEHOLD_E2E_CACHE:-$HOME/.cache/leasehold-e2e}"
OUT="$CACHE_ROOT/python-kubernetes-${KVER}-py${PYVER}-${PYKEY}"
VENV="$OUT/venv"
# Bump RECIPE when the way the venv is made changes. A changed stamp rebuilds.
RECIPE=1
STAMP="recipe=$RECIPE $(sha256sum <"$REQ" | cut -c1-16) $PYID"

ready() { [[ -f "$VENV/.stamp" && "$(cat "$VENV/.stamp")" == "$STAMP" && -x "$VENV/bin/python" ]]; }

if [[ "${FORCE:-0}" != 1 ]] && ready; then echo "$VENV/bin/python"; exit 0; fi

mkdir -p "$OUT"
exec 9>"$OUT/.lock"   # serialise concurrent callers
flock 9
if [[ "${FORCE:-0}" != 1 ]] && ready; then echo "$VENV/bin/python"; exit 0; fi

t=$SECONDS
rm -rf "$VENV"
# Debian's python3 needs the python3-venv package for ensurepip (scripts/setup.sh installs it).
if ! "$PY3" -m venv "$VENV" >&2; then
  rm -rf "$VENV"
  log "'$PY3 -m venv' failed: on Debian/Ubuntu install python3-venv (scripts/setup.sh does)"
  exit 1
fi
log "installing $(grep -v '^#' "$REQ" | xargs) into $VENV ..."
"$VENV/bin/python" -m pip install --disable-pip-version-check --no-input -q -r "$REQ" >&2
"$VENV/bin/python" -c 'import kubernetes.leaderelection.leaderelection
import kubernetes.leaderelection.resourcelock.configmaplock
import kubernetes.leaderelection.resourcelock.leaselock' >&2
echo "$STAMP" >"$VENV/.stamp"
log "venv ready in $((SECONDS - t))s: $VENV"
echo "$VENV/bin/python"
