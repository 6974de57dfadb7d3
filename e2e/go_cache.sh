# Sourced by the Go builds of the e2e and node tiers (e2e/controlplane/build.sh, build-v1.11.sh,
# e2e/interop/build.sh, e2e/node/build.sh): each caches its binaries in $OUT/bin with a stamp of
# its inputs and says when they are current with a function of its own.

# go_cache_current PRESENT: when PRESENT (the caller's check of $BIN and its stamp) holds,
# prints $BIN and exits the caller (FORCE=1 always rebuilds). Otherwise returns holding the
# flock on $OUT/.lock (fd 9, until the caller exits), after checking again under it: a second
# builder (a test, the background stage of make test) waits for the first instead of building
# the same binaries beside it.
go_cache_current() {
  local present=$1
  if [[ "${FORCE:-0}" != 1 ]] && "$present"; then echo "$BIN"; exit 0; fi
  mkdir -p "$OUT"
  exec 9>"$OUT/.lock"
  flock 9
  if [[ "${FORCE:-0}" != 1 ]] && "$present"; then echo "$BIN"; exit 0; fi
}

# need_go: Go on PATH, or the usual /usr/local/go (a newer toolchain that a go.mod asks for is
# fetched through the module proxy, GOTOOLCHAIN=auto, Go's default); else exit 1 saying so.
need_go() {
  [[ -x /usr/local/go/bin/go ]] && ! command -v go >/dev/null && export PATH="/usr/local/go/bin:$PATH"
  command -v go >/dev/null || { log "go not found in PATH or /usr/local/go/bin: install Go >= 1.21"; exit 1; }
}

# go_one_binary NAME PKG [LDFLAGS]: builds the one static binary $BIN/NAME (CGO off, stripped,
# plus LDFLAGS) from the package PKG of the module in $HERE, through a stage directory so that a
# killed build leaves no binary, then writes $STAMP to $BIN/.stamp and prints $BIN. For the
# build.sh scripts of one binary (e2e/crmanager, e2e/node/prometheus), after go_cache_current.
go_one_binary() {
  local name=$1 pkg=$2 ldflags="-s -w ${3:-}" start=$SECONDS
  need_go
  mkdir -p "$BIN"
  rm -f "$BIN/.stamp" "$BIN/$name"
  GO_STAGE="$(mktemp -d "$OUT/.stage.XXXXXX")"
  trap 'rm -rf "$GO_STAGE"' EXIT
  # go.sum is committed: -mod=readonly (the default) suffices
  (cd "$HERE" && CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -buildvcs=false" \
    go build -trimpath -ldflags="$ldflags" -o "$GO_STAGE/$name" "$pkg") >&2
  mv -f "$GO_STAGE/$name" "$BIN/$name"
  echo "$STAMP" >"$BIN/.stamp"
  log "built in $((SECONDS - start))s: $BIN"
  echo "$BIN"
}
