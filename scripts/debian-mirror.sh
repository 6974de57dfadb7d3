# debian_mirror [security]: the machine's Debian mirrors, from its apt sources (deb822 *.sources
# URIs: and one-line sources.list entries). Sourced by scripts/image.sh and scripts/static.sh.
# Prints the first main archive (or $DEBIAN_MIRROR), or with `security` the first security one.
debian_mirror() {
  local kind=${1:-main} f all=""
  if [[ "$kind" == main && -n "${DEBIAN_MIRROR:-}" ]]; then echo "$DEBIAN_MIRROR"; return; fi
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] && all+=$(awk 'tolower($1)=="uris:" {for (i = 2; i <= NF; i++) print $i}' "$f")$'\n'
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f "$f" ]] && all+=$(awk '$1=="deb" {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; break}}' "$f")$'\n'
  done
  if [[ "$kind" == security ]]; then
    grep -i 'debian' <<<"$all" | grep -- '-security' | head -1 || true
  else
    grep -i 'debian' <<<"$all" | grep -v -- '-security' | head -1 | grep . ||
      { echo "no Debian mirror in /etc/apt/sources.list{,.d/*}; set DEBIAN_MIRROR" >&2; return 1; }
  fi
}
