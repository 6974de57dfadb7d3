#!/usr/bin/env bash
# Every C++ file of the tree is as .clang-format says (CTest clang_format, label `once`).
# Usage: check_format.sh CLANG_FORMAT [ROOT]. Pinned to Debian 12's clang-format-14: another
# version formats some constructs differently. Fix a finding with `clang-format-14 -i FILE`.
set -euo pipefail
cf=$1 root=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h')
else
  mapfile -t files < <(find src test fuzz bench -name '*.cpp' -o -name '*.h' 2>/dev/null | sort)
fi
((${#files[@]} > 0)) || { echo "check_format: no C++ files found under $root"; exit 1; }
if ! "$cf" --dry-run --Werror "${files[@]}"; then
  echo "check_format: the files above are not formatted: $cf -i FILE..."
  exit 1
fi
echo "check_format: ${#files[@]} files formatted as .clang-format says"
