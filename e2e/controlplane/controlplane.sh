#!/usr/bin/env bash
# A throw-away Kubernetes control plane (etcd + kube-apiserver, no
# controller-manager, no scheduler, no kubelet) on 127.0.0.1 for leasehold's
# e2e tests. See README.md in this directory.
#
# Usage: controlplane.sh COMMAND DIR [ARGS...]
#
#   start DIR                  certs, free ports, etcd (data on /dev/shm),
#                              kube-apiserver; waits for /readyz (v1.11: /healthz,
#                              which is all it has) and checks /version; returns
#                              with both running in the background (own session).
#   stop DIR                   stop everything started for DIR (TERM, then
#                              KILL), remove the etcd data dir. Idempotent.
#   stop-apiserver DIR [--kill]  stop only the apiserver (--kill: SIGKILL, no
#                              graceful shutdown).
#   start-apiserver DIR [ARGS...]  start it again (same port, certs, etcd).
#   restart-apiserver DIR [ARGS...]
#                              ARGS replace the extra apiserver args; without
#                              ARGS the previous extra args are reused;
#                              --no-extra-args clears them.
#   pause-apiserver DIR / resume-apiserver DIR
#                              SIGSTOP / SIGCONT (a hung, not a dead, server).
#   restart-etcd DIR           stop and start etcd (same data, same ports).
#   status DIR                 exit 0 if etcd and apiserver are running.
#   env DIR                    print DIR/env.
#   ensure-ns DIR NS           create the namespace if missing.
#   ensure-sa DIR NS SA        create namespace and ServiceAccount if missing.
#   token DIR NS SA [DURATION] print a TokenRequest token (default 24h).
#   sa-dir DIR NS SA OUTDIR    write OUTDIR/{token,ca.crt,namespace} like a
#                              pod's /var/run/secrets/kubernetes.io/serviceaccount
#                              (kubelet's ..data symlink layout; calling it
#                              again rotates the token atomically).
#   kubectl DIR ARGS...        kubectl with the admin kubeconfig.
#
# Env:
#   CONTROLPLANE_VERSION       kube-apiserver for `start` (kept in DIR/state):
#                              v1.34 (default: build.sh's v1.34.4) or v1.11.10
#                              (OpenShift 3.11's Kubernetes, built by
#                              build-v1.11.sh; etcd and kubectl stay build.sh's).
#   CONTROLPLANE_APISERVER_BIN the v1.11.10 kube-apiserver's bin dir (default:
#                              output of build-v1.11.sh).
#   CONTROLPLANE_BIN           bin dir with etcd/kube-apiserver/kubectl
#                              (default: output of build.sh, which builds once)
#   EXTRA_APISERVER_ARGS       extra kube-apiserver args for `start`
#                              (word-split), e.g.
#                              --runtime-config=coordination.k8s.io/v1=false,coordination.k8s.io/v1beta1=false
#   CONTROLPLANE_OWNER_PID     if set, a watchdog stops the control plane as
#                              soon as this process is gone (recommended for
#                              test runners: CONTROLPLANE_OWNER_PID=$$).
#   CONTROLPLANE_TTL           watchdog stops the control plane after this many
#                              seconds (default 10800; 0 = never).
#   CONTROLPLANE_START_TIMEOUT seconds to wait for readiness (default 120).
#   CONTROLPLANE_HOST          address etcd and the apiserver bind and advertise
#                              (default 127.0.0.1; kept in DIR/state). The
#                              one-node cluster (e2e/node) runs the control
#                              plane inside the node's network namespace on an
#                              address its pods reach; it is added to the
#                              apiserver certificate's SANs.
#   TOKEN_DURATION             token lifetime for sa-dir (default 24h).
#   CONTROLPLANE_AUTO_FEATURE_GATES=0  do not add
#                              --feature-gates=APIServerIdentity=false when
#                              the extra args disable coordination.k8s.io.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/$(basename "${BASH_SOURCE[0]}")"
HOST=${CONTROLPLANE_HOST:-127.0.0.1}

die() { echo "controlplane.sh: $*" >&2; exit 1; }
log() { echo "controlplane.sh: $*" >&2; }

usage() { sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

# ---------------------------------------------------------------- helpers

abs_dir() { # DIR -> absolute path (DIR need not exist)
  local d=$1
  [[ "$d" == /* ]] || d="$PWD/$d"
  # normalise // and trailing /
  d=$(printf '%s' "$d" | sed 's#//*#/#g; s#/$##')
  printf '%s' "${d:-/}"
}

# Is PID alive and is its command line containing MARKER? (guards PID reuse;
# zombies have an empty cmdline and count as dead)
is_ours() { # PID MARKER
  local pid=$1 marker=$2 cmd
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
  [[ -n "$cmd" && "$cmd" == *"$marker"* ]]
}

# An alive PID whose cmdline reads empty is in the middle of an exec (the
# spawn wrapper becoming the server): not yet ours, but not exited either.
execing() { # PID
  local pid=$1
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null &&
    [[ -z "$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")" ]]
}

# Wait (up to 5 s) until the PIDs have vanished from /proc, i.e. have also
# been reaped by init (which may take a second or two), so that a pgrep right
# after `stop` finds nothing.
KILLED=()
wait_reaped() { # PIDS...
  local i p
  for ((i = 0; i < 50; i++)); do
    for p in "$@"; do [[ -e "/proc/$p" ]] && { sleep 0.1; continue 2; }; done
    return 0
  done
}

# TERM, wait, then KILL.
kill_proc() { # PID MARKER NAME [TERM_TIMEOUT_S] [SIGNAL]
  local pid=$1 marker=$2 name=$3 timeout=${4:-15} sig=${5:-TERM} i
  is_ours "$pid" "$marker" || return 0
  kill -CONT "$pid" 2>/dev/null || true
  kill -"$sig" "$pid" 2>/dev/null || true
  for ((i = 0; i < timeout * 10; i++)); do
    is_ours "$pid" "$marker" || { KILLED+=("$pid"); return 0; }
    sleep 0.1
  done
  log "$name (pid $pid) did not exit ${timeout}s after SIG$sig, sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    is_ours "$pid" "$marker" || { KILLED+=("$pid"); return 0; }
    sleep 0.1
  done
  log "WARNING: $name (pid $pid) still alive after SIGKILL"
  return 1
}

# Kill every process whose command line contains MARKER (a string unique to
# this control plane, e.g. its etcd data dir), except this shell.
sweep() { # MARKER
  local marker=$1 p pid
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [[ "$pid" == "$$" || "$pid" == "$BASHPID" ]] && continue
    if is_ours "$pid" "$marker"; then
      log "killing leftover pid $pid ($marker)"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

# Start a command in the background, in its own session, with stdin from
# /dev/null, stdout+stderr appended to LOG and all other fds closed, so that
# the calling script (and a $(...) capturing it) can return. The pid is
# written by the process itself right before exec.
spawn() { # PIDFILE LOG CMD...
  local pidfile=$1 logf=$2 i
  shift 2
  rm -f "$pidfile"
  # shellcheck disable=SC2016
  setsid bash -c '
    for fd in $(ls /proc/$$/fd); do
      if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
    done
    echo $$ >"$0.tmp" && mv "$0.tmp" "$0"
    exec "$@"' "$pidfile" "$@" >>"$logf" 2>&1 </dev/null &
  for ((i = 0; i < 200; i++)); do
    [[ -s "$pidfile" ]] && return 0
    sleep 0.05
  done
  die "could not start ${1##*/} (no pid file $pidfile)"
}

# N distinct free TCP ports on 127.0.0.1, one per line. They are taken from the
# 10,000 ports below e2e.lib.common.free_port's range (which is the 12,000 below
# Linux's ephemeral range, 32768-60999 by default): outgoing connections (e.g.
# apiserver -> etcd) cannot grab them in the meantime, and neither can an e2e
# test's agent when tests run side by side; a collision with a parallel
# control plane is handled by retrying in start.
free_ports() { # N
  local eph low high
  eph=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  high=$((eph - 12001)); low=$((high - 9999))
  ((low >= 1024)) || { low=1024; high=$((low + 9999)); }
  if command -v python3 >/dev/null; then
    python3 - "$1" "$low" "$high" <<'EOF'
import random, socket, sys
ports, socks = [], []
while len(ports) < int(sys.argv[1]):
    p = random.randint(int(sys.argv[2]), int(sys.argv[3]))
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", p))  # no SO_REUSEADDR: also refuses TIME_WAIT ports
    except OSError:
        s.close()
        continue
    socks.append(s)
    ports.append(p)
print("\n".join(map(str, ports)))
EOF
  else
    local n=0 p used=" "
    while ((n < $1)); do
      p=$((low + RANDOM % (high - low + 1)))
      [[ "$used" == *" $p "* ]] && continue
      if ! (exec 3<>"/dev/tcp/$HOST/$p") 2>/dev/null; then
        echo "$p"; used+="$p "; n=$((n + 1))
      fi
    done
  fi
}

# Did the log grow an "address already in use" since byte offset OFF?
port_clash() { # LOG OFF
  tail -c +"$(($2 + 1))" "$1" 2>/dev/null | grep -q 'address already in use'
}
log_size() { stat -c %s "$1" 2>/dev/null || echo 0; }

resolve_bin() {
  if [[ -n "${CONTROLPLANE_BIN:-}" ]]; then
    BIN_DIR=$CONTROLPLANE_BIN
  else
    BIN_DIR=$(bash "$HERE/build.sh" | tail -1)
  fi
  local b
  for b in etcd kube-apiserver kubectl; do
    [[ -x "$BIN_DIR/$b" ]] || die "$BIN_DIR/$b not found (run build.sh or set CONTROLPLANE_BIN)"
  done
  # Only the apiserver changes with the version: the same etcd and kubectl talk to both.
  case "$K8S_VERSION" in
    v1.34) APISERVER_BIN=$BIN_DIR/kube-apiserver ;;
    v1.11.10)
      if [[ -n "${CONTROLPLANE_APISERVER_BIN:-}" ]]; then
        APISERVER_BIN=$CONTROLPLANE_APISERVER_BIN/kube-apiserver
      else
        APISERVER_BIN=$(bash "$HERE/build-v1.11.sh" | tail -1)/kube-apiserver
      fi ;;
    *) die "unknown CONTROLPLANE_VERSION $K8S_VERSION (v1.34 or v1.11.10)" ;;
  esac
  [[ -x "$APISERVER_BIN" ]] || die "$APISERVER_BIN not found (run build-v1.11.sh or set CONTROLPLANE_APISERVER_BIN)"
}

# The gitVersion /version must report: the fixture proves which server the scenarios ran on.
expected_git_version() {
  case "$K8S_VERSION" in
    v1.34) awk '$1 == "require" && $2 == "k8s.io/kubernetes" { print $3 }' "$HERE/k8s/go.mod" ;;
    *) echo "$K8S_VERSION" ;;
  esac
}

load_state() { # needs DIR
  [[ -f "$DIR/state" ]] || die "$DIR is not a control plane dir (no $DIR/state); run start first"
  # shellcheck disable=SC1091
  source "$DIR/state"
  # A state written before the version axis is a v1.34 control plane.
  K8S_VERSION=${K8S_VERSION:-v1.34}
  APISERVER_BIN=${APISERVER_BIN:-$BIN_DIR/kube-apiserver}
}

save_state() {
  {
    printf 'BIN_DIR=%q\n' "$BIN_DIR"
    printf 'ETCD_PORT=%q\nETCD_PEER_PORT=%q\nAPISERVER_PORT=%q\n' "$ETCD_PORT" "$ETCD_PEER_PORT" "$APISERVER_PORT"
    printf 'ETCD_DATA_DIR=%q\n' "$ETCD_DATA_DIR"
    printf 'HOST=%q\n' "$HOST"
    printf 'K8S_VERSION=%q\nAPISERVER_BIN=%q\n' "$K8S_VERSION" "$APISERVER_BIN"
  } >"$DIR/state.tmp"
  mv "$DIR/state.tmp" "$DIR/state"
}

read_pid() { cat "$DIR/$1.pid" 2>/dev/null || true; }

write_env() {
  local ep ap
  ep=$(read_pid etcd); ap=$(read_pid apiserver)
  is_ours "$ep" "$(etcd_marker)" || ep=""
  is_ours "$ap" "$(apiserver_marker)" || ap=""
  {
    echo "# written by controlplane.sh; shell-sourceable (nothing is exported)"
    printf 'CONTROLPLANE_DIR=%q\n' "$DIR"
    printf 'BIN_DIR=%q\n' "$BIN_DIR"
    printf 'APISERVER_HOST=%q\n' "$HOST"
    printf 'APISERVER_PORT=%q\n' "$APISERVER_PORT"
    printf 'APISERVER_URL=%q\n' "https://$HOST:$APISERVER_PORT"
    printf 'APISERVER_PID=%q\n' "$ap"
    printf 'K8S_VERSION=%q\n' "$K8S_VERSION"
    printf 'ETCD_PORT=%q\n' "$ETCD_PORT"
    printf 'ETCD_PEER_PORT=%q\n' "$ETCD_PEER_PORT"
    printf 'ETCD_URL=%q\n' "http://$HOST:$ETCD_PORT"
    printf 'ETCD_DATA_DIR=%q\n' "$ETCD_DATA_DIR"
    printf 'ETCD_PID=%q\n' "$ep"
    printf 'CA_CRT=%q\n' "$DIR/ca.crt"
    printf 'ADMIN_CRT=%q\n' "$DIR/pki/admin.crt"
    printf 'ADMIN_KEY=%q\n' "$DIR/pki/admin.key"
    printf 'ADMIN_KUBECONFIG=%q\n' "$DIR/admin.kubeconfig"
  } >"$DIR/env.tmp"
  mv "$DIR/env.tmp" "$DIR/env"
}

etcd_marker() { printf -- '--data-dir=%s' "$ETCD_DATA_DIR"; }
apiserver_marker() { printf -- '--tls-cert-file=%s/pki/apiserver.crt' "$DIR"; }
watchdog_marker() { printf -- '_watchdog %s ' "$DIR"; }

# The admin kubectl's command line, in KUBECTL_ADMIN: kubectl_admin runs it, the `kubectl`
# command execs it.
kubectl_admin_argv() {
  KUBECTL_ADMIN=("$BIN_DIR/kubectl" --kubeconfig "$DIR/admin.kubeconfig" --cache-dir "$DIR/.kube-cache")
}
kubectl_admin() {
  kubectl_admin_argv
  "${KUBECTL_ADMIN[@]}" "$@"
}

curl_admin() {
  curl -sS --max-time 5 --cacert "$DIR/ca.crt" --cert "$DIR/pki/admin.crt" --key "$DIR/pki/admin.key" "$@"
}

# ---------------------------------------------------------------- certs

gen_certs() {
  local pki="$DIR/pki"
  if [[ -s "$pki/ca.crt" && -s "$pki/apiserver.crt" && -s "$pki/admin.crt" && -s "$pki/sa.pub" ]]; then
    return 0
  fi
  command -v openssl >/dev/null || die "openssl not found (apt-get install -y openssl)"
  mkdir -p "$pki"
  (
    cd "$pki"
    umask 077
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 \
      -subj "/CN=leasehold-e2e-ca" \
      -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
    cat >apiserver.ext <<EOF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:$HOST,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.0.0.1
EOF
    openssl req -new -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver"
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile apiserver.ext -out apiserver.crt
    cat >admin.ext <<EOF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth
EOF
    openssl req -new -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr \
      -subj "/O=system:masters/CN=kubernetes-admin"
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile admin.ext -out admin.crt
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key
    openssl pkey -in sa.key -pubout -out sa.pub
    rm -f ./*.csr ./*.ext ca.srl
    chmod 644 ./*.crt sa.pub
  ) >>"$DIR/openssl.log" 2>&1 || { cat "$DIR/openssl.log" >&2; die "certificate generation failed"; }
  cp "$pki/ca.crt" "$DIR/ca.crt"
}

write_kubeconfig() {
  local b64='base64 -w0'
  cat >"$DIR/admin.kubeconfig.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: leasehold-e2e
  cluster:
    server: https://$HOST:$APISERVER_PORT
    certificate-authority-data: $($b64 <"$DIR/pki/ca.crt")
users:
- name: admin
  user:
    client-certificate-data: $($b64 <"$DIR/pki/admin.crt")
    client-key-data: $($b64 <"$DIR/pki/admin.key")
contexts:
- name: leasehold-e2e
  context:
    cluster: leasehold-e2e
    user: admin
current-context: leasehold-e2e
EOF
  chmod 600 "$DIR/admin.kubeconfig.tmp"
  mv "$DIR/admin.kubeconfig.tmp" "$DIR/admin.kubeconfig"
}

# ---------------------------------------------------------------- etcd

# returns 0 ok, 2 port already in use, 1 other failure
start_etcd() {
  local pid i off
  off=$(log_size "$DIR/etcd.log")
  echo "=== $(date -u +%FT%TZ) starting etcd" >>"$DIR/etcd.log"
  spawn "$DIR/etcd.pid" "$DIR/etcd.log" "$BIN_DIR/etcd" \
    --name=leasehold-e2e \
    --data-dir="$ETCD_DATA_DIR" \
    --listen-client-urls="http://$HOST:$ETCD_PORT" \
    --advertise-client-urls="http://$HOST:$ETCD_PORT" \
    --listen-peer-urls="http://$HOST:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls="http://$HOST:$ETCD_PEER_PORT" \
    --initial-cluster="leasehold-e2e=http://$HOST:$ETCD_PEER_PORT" \
    --initial-cluster-state=new \
    --unsafe-no-fsync \
    --log-level=warn
  pid=$(read_pid etcd)
  for ((i = 0; i < 300; i++)); do
    if ! is_ours "$pid" "$(etcd_marker)" && execing "$pid"; then
      sleep 0.1
      continue
    fi
    if ! is_ours "$pid" "$(etcd_marker)"; then
      port_clash "$DIR/etcd.log" "$off" && return 2
      tail -n 30 "$DIR/etcd.log" >&2
      log "etcd exited during startup (log: $DIR/etcd.log)"
      return 1
    fi
    if curl -sf --max-time 2 "http://$HOST:$ETCD_PORT/health" 2>/dev/null | grep -q '"health":"true"'; then
      return 0
    fi
    sleep 0.1
  done
  tail -n 30 "$DIR/etcd.log" >&2
  log "etcd not healthy after 30s (log: $DIR/etcd.log)"
  stop_etcd
  return 1
}

stop_etcd() {
  kill_proc "$(read_pid etcd)" "$(etcd_marker)" etcd 10
  rm -f "$DIR/etcd.pid"
}

# ---------------------------------------------------------------- apiserver

# Extra args are kept one per line in DIR/apiserver.extra-args.
read_extra_args() {
  EXTRA=()
  if [[ -f "$DIR/apiserver.extra-args" ]]; then
    mapfile -t EXTRA <"$DIR/apiserver.extra-args"
  fi
}

set_extra_args() { # ARGS... (none: keep previous; --no-extra-args: clear)
  if (($# == 0)); then return 0; fi
  if [[ "$1" == --no-extra-args ]]; then
    : >"$DIR/apiserver.extra-args"
  else
    printf '%s\n' "$@" >"$DIR/apiserver.extra-args"
  fi
}

# True when the extra args switch coordination.k8s.io/v1 off.
coordination_disabled() {
  local a
  for a in "${EXTRA[@]}"; do
    case "$a" in
      --runtime-config=*coordination.k8s.io/v1=false* | --runtime-config=*coordination.k8s.io=false*) return 0 ;;
    esac
  done
  return 1
}

apiserver_cmd() {
  read_extra_args
  local issuer="https://kubernetes.default.svc.cluster.local"
  if [[ "$K8S_VERSION" == v1.11.10 ]]; then
    apiserver_cmd_v1_11 "$issuer"
    return 0
  fi
  APISERVER_CMD=("$APISERVER_BIN"
    --bind-address="$HOST"
    --advertise-address="$HOST"
    --secure-port="$APISERVER_PORT"
    --tls-cert-file="$DIR/pki/apiserver.crt"
    --tls-private-key-file="$DIR/pki/apiserver.key"
    --client-ca-file="$DIR/pki/ca.crt"
    --etcd-servers="http://$HOST:$ETCD_PORT"
    --authorization-mode=RBAC
    --service-account-issuer="$issuer"
    --api-audiences="$issuer"
    --service-account-signing-key-file="$DIR/pki/sa.key"
    --service-account-key-file="$DIR/pki/sa.pub"
    --service-cluster-ip-range=10.0.0.0/24
    # 127.0.0.1 is not a valid Endpoints address; nothing routes to the
    # kubernetes Service here anyway.
    --endpoint-reconciler-type=none
    --profiling=false
    # On SIGTERM close open watches cleanly (end of chunked stream) and exit
    # within ~1 s. With the upstream default (0) the process keeps running
    # until its 60 s shutdown timeout as long as any watch is open. Override
    # with --shutdown-watch-termination-grace-period=0s in the extra args.
    --shutdown-watch-termination-grace-period=2s
    --cert-dir="$DIR/pki/generated"
  )
  if [[ "${CONTROLPLANE_AUTO_FEATURE_GATES:-1}" != 0 ]] && coordination_disabled; then
    # See README.md: with coordination.k8s.io off, the apiserver-identity
    # lease controller cannot work (it is harmless but logs errors forever).
    APISERVER_CMD+=(--feature-gates=APIServerIdentity=false)
  fi
  APISERVER_CMD+=("${EXTRA[@]}")
}

# The same server as apiserver_cmd's, in v1.11.10's flags (see
# /work/shared/reference/k8s-1.11/README.md and k8s-1.11/go.mod):
#   - the audiences flag is --service-account-api-audiences, and TokenRequest (which
#     `token`/`sa-dir` use, through kubectl create token) is an alpha feature to switch on;
#   - an insecure port on 127.0.0.1:8080 is on by default: off, or two control planes clash
#     (and nothing may reach the API unauthenticated);
#   - no --shutdown-watch-termination-grace-period (SIGTERM ends it at once, watches and all),
#     no APIServerIdentity gate (and no coordination.k8s.io to switch off).
apiserver_cmd_v1_11() { # ISSUER
  APISERVER_CMD=("$APISERVER_BIN"
    --bind-address="$HOST"
    --advertise-address="$HOST"
    --secure-port="$APISERVER_PORT"
    --insecure-port=0
    --tls-cert-file="$DIR/pki/apiserver.crt"
    --tls-private-key-file="$DIR/pki/apiserver.key"
    --client-ca-file="$DIR/pki/ca.crt"
    --etcd-servers="http://$HOST:$ETCD_PORT"
    --authorization-mode=RBAC
    --feature-gates=TokenRequest=true
    --service-account-issuer="$1"
    --service-account-api-audiences="$1"
    --service-account-signing-key-file="$DIR/pki/sa.key"
    --service-account-key-file="$DIR/pki/sa.pub"
    --service-cluster-ip-range=10.0.0.0/24
    --endpoint-reconciler-type=none
    --profiling=false
    --cert-dir="$DIR/pki/generated"
  )
  APISERVER_CMD+=("${EXTRA[@]}")
}

# v1.11 has no /readyz (404): its /healthz turns ok once the post-start hooks (RBAC's bootstrap
# roles among them) are done, which is what /readyz waits for on v1.34.
ready_path() { [[ "$K8S_VERSION" == v1.11.10 ]] && echo /healthz || echo /readyz; }

# The server answering is the one asked for (a wrong binary in a cache, a stale bin dir).
check_version() {
  local want got
  want=$(expected_git_version)
  got=$(curl_admin "https://$HOST:$APISERVER_PORT/version" | sed -n 's/^ *"gitVersion": "\(.*\)",$/\1/p')
  [[ -n "$want" && "$got" == "$want" ]] || { log "/version says gitVersion '$got', want '$want'"; return 1; }
}

wait_apiserver_ready() { # LOG_OFFSET
  local pid timeout=${CONTROLPLANE_START_TIMEOUT:-120} deadline out
  pid=$(read_pid apiserver)
  deadline=$((SECONDS + timeout))
  while ((SECONDS < deadline)); do
    if ! is_ours "$pid" "$(apiserver_marker)"; then
      port_clash "$DIR/apiserver.log" "${1:-0}" && return 1
      log "kube-apiserver exited during startup; last lines of $DIR/apiserver.log:"
      tail -n 40 "$DIR/apiserver.log" >&2
      return 1
    fi
    out=$(curl_admin --max-time 2 "https://$HOST:$APISERVER_PORT$(ready_path)" 2>/dev/null || true)
    [[ "$out" == ok ]] && { check_version; return; }
    sleep 0.25
  done
  log "kube-apiserver not ready after ${timeout}s; $(ready_path)?verbose:"
  curl_admin "https://$HOST:$APISERVER_PORT$(ready_path)?verbose" >&2 2>&1 || true
  log "last lines of $DIR/apiserver.log:"
  tail -n 40 "$DIR/apiserver.log" >&2
  return 1
}

start_apiserver() {
  if is_ours "$(read_pid apiserver)" "$(apiserver_marker)"; then
    die "kube-apiserver already running (pid $(read_pid apiserver))"
  fi
  local off
  off=$(log_size "$DIR/apiserver.log")
  apiserver_cmd
  {
    printf '=== %s starting kube-apiserver:' "$(date -u +%FT%TZ)"
    printf ' %q' "${APISERVER_CMD[@]}"
    echo
  } >>"$DIR/apiserver.log"
  spawn "$DIR/apiserver.pid" "$DIR/apiserver.log" "${APISERVER_CMD[@]}"
  write_env
  if ! wait_apiserver_ready "$off"; then
    stop_apiserver 5
    port_clash "$DIR/apiserver.log" "$off" && return 2
    return 1
  fi
}

stop_apiserver() { # [TERM_TIMEOUT] [SIGNAL]
  kill_proc "$(read_pid apiserver)" "$(apiserver_marker)" kube-apiserver "${1:-20}" "${2:-TERM}"
  rm -f "$DIR/apiserver.pid"
}

# ---------------------------------------------------------------- watchdog

watchdog() { # owner-pid ttl
  local owner=$1 ttl=$2 start=$SECONDS ap="" ep=""
  while [[ -f "$DIR/state" ]]; do
    if [[ -n "$owner" ]] && ! kill -0 "$owner" 2>/dev/null; then
      log "watchdog: owner pid $owner is gone, stopping $DIR"
      do_stop; return 0
    fi
    if ((ttl > 0 && SECONDS - start >= ttl)); then
      log "watchdog: TTL ${ttl}s reached, stopping $DIR"
      do_stop; return 0
    fi
    ap=$(read_pid apiserver); ep=$(read_pid etcd)
    sleep 1
  done
  # state is gone: either `stop` ran (then this is a no-op) or DIR was
  # deleted under a running control plane; do not leave the processes behind.
  kill_proc "$ap" "$(apiserver_marker)" kube-apiserver 5 || true
  kill_proc "$ep" "$(etcd_marker)" etcd 5 || true
  sweep "$(apiserver_marker)"
  sweep "$(etcd_marker)"
  case "$ETCD_DATA_DIR" in
    /dev/shm/leasehold-etcd.*) rm -rf "$ETCD_DATA_DIR" ;;
  esac
}

# ---------------------------------------------------------------- commands

do_stop() {
  [[ -d "$DIR" ]] || { log "$DIR does not exist, nothing to stop"; return 0; }
  [[ -f "$DIR/state" ]] || { log "nothing running in $DIR"; return 0; }
  # shellcheck disable=SC1091
  source "$DIR/state"
  local wd
  stop_apiserver 10 || true
  stop_etcd || true
  # anything else that carries this control plane's unique markers
  sweep "$(apiserver_marker)"
  [[ -n "$ETCD_DATA_DIR" ]] && sweep "$(etcd_marker)"
  if [[ -n "$ETCD_DATA_DIR" && -d "$ETCD_DATA_DIR" ]]; then
    case "$ETCD_DATA_DIR" in
      /dev/shm/leasehold-etcd.* | "$DIR"/etcd-data*) rm -rf "$ETCD_DATA_DIR" ;;
      *) log "not removing unexpected data dir $ETCD_DATA_DIR" ;;
    esac
  fi
  rm -f "$DIR/state" "$DIR/env"
  wd=$(cat "$DIR/watchdog.pid" 2>/dev/null || true)
  if [[ -n "$wd" && "$wd" != "$$" && "$wd" != "$BASHPID" ]]; then
    kill_proc "$wd" "$(watchdog_marker)" watchdog 5 || true
  fi
  rm -f "$DIR/watchdog.pid"
  ((${#KILLED[@]} == 0)) || wait_reaped "${KILLED[@]}"
}

cmd_start() {
  if [[ -f "$DIR/state" ]]; then
    # shellcheck disable=SC1091
    source "$DIR/state"
    if is_ours "$(read_pid etcd)" "$(etcd_marker)" || is_ours "$(read_pid apiserver)" "$(apiserver_marker)"; then
      die "a control plane is already running in $DIR (stop it first)"
    fi
    do_stop
  fi
  mkdir -p "$DIR"
  K8S_VERSION=${CONTROLPLANE_VERSION:-v1.34}
  [[ "$K8S_VERSION" == v1.34.* ]] && K8S_VERSION=v1.34
  resolve_bin
  command -v curl >/dev/null || die "curl not found"

  # From here on, any failure or signal tears everything down again.
  trap 'rc=$?; trap - EXIT INT TERM HUP; if ((rc != 0)); then log "start failed, cleaning up"; do_stop; fi; exit $rc' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'exit 129' HUP

  if [[ -d /dev/shm && -w /dev/shm ]]; then
    ETCD_DATA_DIR=$(mktemp -d /dev/shm/leasehold-etcd.XXXXXXXX)
  else
    ETCD_DATA_DIR=$(mktemp -d "$DIR/etcd-data.XXXXXXXX")
  fi
  ETCD_PORT="" ETCD_PEER_PORT="" APISERVER_PORT=""
  save_state
  chmod 700 "$ETCD_DATA_DIR"

  gen_certs
  # shellcheck disable=SC2206
  local extra=(${EXTRA_APISERVER_ARGS:-})
  if ((${#extra[@]})); then set_extra_args "${extra[@]}"; else : >"$DIR/apiserver.extra-args"; fi

  local ports attempt rc
  for attempt in 1 2 3 4 5; do
    mapfile -t ports < <(free_ports 3)
    ETCD_PORT=${ports[0]} ETCD_PEER_PORT=${ports[1]} APISERVER_PORT=${ports[2]}
    save_state
    write_kubeconfig
    rc=0; start_etcd || rc=$?
    if ((rc == 0)); then
      rc=0; start_apiserver || rc=$?
      ((rc == 0)) && break
      stop_etcd
    fi
    ((rc == 2)) || exit 1
    log "port clash (attempt $attempt), retrying with other ports"
    find "$ETCD_DATA_DIR" -mindepth 1 -delete
  done
  ((rc == 0)) || die "could not find free ports"
  write_env

  local ttl=${CONTROLPLANE_TTL:-10800} owner=${CONTROLPLANE_OWNER_PID:-}
  if [[ -n "$owner" || "$ttl" != 0 ]]; then
    spawn "$DIR/watchdog.pid" "$DIR/watchdog.log" bash "$SELF" _watchdog "$DIR" "$owner" "$ttl"
  fi
  trap - EXIT INT TERM HUP
  log "control plane up: https://$HOST:$APISERVER_PORT (etcd pid $(read_pid etcd), apiserver pid $(read_pid apiserver)); env: $DIR/env"
}

ensure_ns() { # NS
  local out
  kubectl_admin get namespace "$1" >/dev/null 2>&1 && return 0
  if ! out=$(kubectl_admin create namespace "$1" 2>&1); then
    [[ "$out" == *AlreadyExists* || "$out" == *"already exists"* ]] || die "create namespace $1: $out"
  fi
}

ensure_sa() { # NS SA
  local out
  ensure_ns "$1"
  kubectl_admin -n "$1" get serviceaccount "$2" >/dev/null 2>&1 && return 0
  if ! out=$(kubectl_admin -n "$1" create serviceaccount "$2" 2>&1); then
    [[ "$out" == *AlreadyExists* || "$out" == *"already exists"* ]] || die "create serviceaccount $1/$2: $out"
  fi
}

get_token() { # NS SA [DURATION]
  kubectl_admin -n "$1" create token "$2" --duration="${3:-${TOKEN_DURATION:-24h}}"
}

# kubelet's AtomicWriter layout: OUTDIR/..<timestamp>/FILES, OUTDIR/..data ->
# ..<timestamp>, OUTDIR/FILE -> ..data/FILE; an update swaps ..data atomically.
write_sa_dir() { # NS SA OUTDIR
  local ns=$1 sa=$2 out=$3 token ts old
  token=$(get_token "$ns" "$sa")
  [[ -n "$token" ]] || die "empty token for $ns/$sa"
  mkdir -p "$out"
  ts="..$(date -u +%Y_%m_%d_%H_%M_%S.%N)"
  mkdir "$out/$ts"
  printf '%s' "$token" >"$out/$ts/token"
  cp "$DIR/ca.crt" "$out/$ts/ca.crt"
  printf '%s' "$ns" >"$out/$ts/namespace"
  chmod 644 "$out/$ts/"*
  old=$(readlink "$out/..data" 2>/dev/null || true)
  ln -sfn "$ts" "$out/..data_tmp"
  mv -T "$out/..data_tmp" "$out/..data"
  local f
  for f in token ca.crt namespace; do
    if [[ ! -L "$out/$f" ]]; then
      rm -f "$out/$f"
      ln -s "..data/$f" "$out/$f"
    fi
  done
  [[ -n "$old" && "$old" != "$ts" && "$old" == ..* ]] && rm -rf "${out:?}/$old"
  return 0
}

main() {
  (($# >= 2)) || usage
  local cmd=$1
  DIR=$(abs_dir "$2")
  shift 2
  case "$cmd" in
    start)
      (($# == 0)) || usage
      cmd_start ;;
    stop)
      do_stop ;;
    stop-apiserver)
      load_state
      if [[ "${1:-}" == --kill ]]; then stop_apiserver 5 KILL; else stop_apiserver 10; fi
      write_env ;;
    start-apiserver)
      load_state
      set_extra_args "$@"
      start_apiserver || die "kube-apiserver did not start (log: $DIR/apiserver.log)"
      write_env ;;
    restart-apiserver)
      load_state
      stop_apiserver 10
      set_extra_args "$@"
      start_apiserver || die "kube-apiserver did not start (log: $DIR/apiserver.log)"
      write_env ;;
    pause-apiserver)
      load_state
      kill -STOP "$(read_pid apiserver)" ;;
    resume-apiserver)
      load_state
      kill -CONT "$(read_pid apiserver)" ;;
    restart-etcd)
      load_state
      stop_etcd
      start_etcd || die "etcd did not start (log: $DIR/etcd.log)"
      write_env ;;
    status)
      load_state
      is_ours "$(read_pid etcd)" "$(etcd_marker)" || { echo "etcd: not running"; exit 1; }
      is_ours "$(read_pid apiserver)" "$(apiserver_marker)" || { echo "kube-apiserver: not running"; exit 1; }
      echo "running: https://$HOST:$APISERVER_PORT" ;;
    env)
      load_state
      cat "$DIR/env" ;;
    ensure-ns)
      (($# == 1)) || usage
      load_state
      ensure_ns "$1" ;;
    ensure-sa)
      (($# == 2)) || usage
      load_state
      ensure_sa "$1" "$2" ;;
    token)
      (($# >= 2)) || usage
      load_state
      ensure_sa "$1" "$2"
      get_token "$@" ;;
    sa-dir)
      (($# == 3)) || usage
      load_state
      ensure_sa "$1" "$2"
      write_sa_dir "$1" "$2" "$3" ;;
    kubectl)
      load_state
      # exec: a caller that stops this command (a `kubectl get --watch`) stops kubectl itself,
      # not a shell that would leave it running.
      kubectl_admin_argv
      exec "${KUBECTL_ADMIN[@]}" "$@" ;;
    _watchdog)
      load_state
      watchdog "$@" ;;
    *) usage ;;
  esac
}

main "$@"
