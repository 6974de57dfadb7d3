#!/usr/bin/env bash
# A one-node Kubernetes cluster for leasehold's node tier: etcd + kube-apiserver (controlplane.sh),
# kube-controller-manager, kube-scheduler, kubelet, kube-proxy (iptables mode), containerd + runc
# + the CNI bridge plugin. See README.md in this directory.
#
# Usage: node.sh COMMAND [DIR]
#   up DIR          bring the node up (DIR: configs, logs, the control plane's dir); returns when
#                   the node is Ready and kube-proxy has programmed the kubernetes Service.
#   down [DIR]      tear everything down; needs no DIR and no live process: it works from fixed
#                   names, also after SIGKILL of whatever ran `up`. Idempotent.
#   health DIR      exit 0 if: node Ready, the kubernetes Service's rules in place, the node's
#                   FORWARD drop on top, the host's kubelet sysctls unchanged since `up`.
#   reclaim         take down a node that a killed run left (waits for a live run's node, as up
#                   does); fixture.sh and teardown_test.sh call it before their first snapshot.
#   snapshot FILE   what the node could leave behind on the host (links, netns, iptables of every
#                   table, mounts, the six kubelet sysctls + ip_forward, cgroup dirs, processes,
#                   host paths); `down` must leave the same snapshot as before `up`.
#   enter CMD...    run CMD in the node's network and mount namespaces (as the kubelet sees it).
#   restart COMPONENT DIR   stop and start kubelet|containerd|kube-proxy through this launcher.
#   stop COMPONENT  SIGTERM one component and wait for it (restart brings it back).
#   kubectl DIR ARGS...     kubectl against the node's apiserver (from inside the netns).
#   evidence DIR OUT        copy logs, events, containerd events, iptables-save, pod logs to OUT.
#
# Isolation (why each piece exists):
# - Network: one namespace, lh-node, holding a link (a veth pair with both ends inside) with the node IP 10.250.0.2 and the pod
#   bridge. etcd and the apiserver run in it too, bound to the node IP, so pods reach the
#   apiserver through kube-proxy's DNAT of 10.0.0.1:443 as local traffic: nothing is forwarded,
#   and the namespace has no link to the host at all, so nothing can route off the machine.
#   ip_forward (set by the bridge plugin), the bridge and kube-proxy's rules die with it.
# - Mounts: containerd, the kubelet and kube-proxy run in a private mount namespace (kept in
#   $RUN/mnt) in which files holding the kubelet's expected values are bind-mounted over its six
#   global sysctls, so its setupKernelTunables writes nothing on the host (panic_on_oops=1 would
#   turn any oops on this shared machine into a reboot). The hard-coded host paths
#   (/var/lib/kubelet, /var/log/pods, /run/containerd, ...) are bind-mounted from $STATE there.
#   Every (re)start of a component goes through launch() into that namespace.
# - cgroups: everything the node starts runs under /leasehold-node in every hierarchy (daemons in
#   /leasehold-node/system, pods in the kubelet's cgroupRoot /leasehold-node), so teardown finds
#   every process, even the shims' and containers' that reparented to init.
# - One node per machine: flock on $LOCK, held by a keeper process while the node is up (a second
#   test run waits for it; LEASEHOLD_NODE_LOCK_WAIT seconds, default 1800). The keeper tears the
#   node down after LEASEHOLD_NODE_TTL seconds (default 5400) as a backstop.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SELF="$HERE/node.sh"
REPO="$(cd "$HERE/../.." && pwd)"
CP_SH="$REPO/e2e/controlplane/controlplane.sh"

NETNS=lh-node
NODE_NAME=lh-node
NODE_IP=10.250.0.2
NODE_LINK=lhnode0
BRIDGE=lhcni0
POD_CIDR=10.244.0.0/24
SVC_CIDR=10.0.0.0/24 # controlplane.sh's --service-cluster-ip-range; 10.0.0.1 is in its SANs
STATE=/var/lib/leasehold-node
RUN=/run/leasehold-node
LOCK=/run/leasehold-node.lock
CGROUP=leasehold-node
FWD_CHAIN=LH-NODE-NOFORWARD

# The kubelet's setupKernelTunables: sysctl -> the value it insists on.
KUBELET_SYSCTLS=(
  vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1
  kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000
)
# Hard-coded paths of the kubelet, containerd and the CNI plugins: private per node (bind-mounted
# from $STATE/paths inside the mount namespace). Created on the host (as empty mount points) only
# when missing, and then removed by `down` (recorded in $STATE/created-paths).
NODE_PATHS=(/var/lib/kubelet /var/log/pods /var/log/containers /run/containerd /var/lib/containerd
  /var/lib/cni /etc/cni /run/netns)
COMPONENTS=(containerd kubelet kube-proxy kube-controller-manager kube-scheduler)

log() { echo "node.sh [$(date -u +%T.%3N)]: $*" >&2; }
die() { echo "node.sh: $*" >&2; exit 1; }

abs_dir() { local d=$1; [[ "$d" == /* ]] || d="$PWD/$d"; printf '%s' "${d%/}"; }
path_key() { local p=${1#/}; printf '%s' "${p//\//-}"; }

cgroup_roots() { # every mounted cgroup hierarchy (v1 controllers, name=systemd, unified)
  awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' /proc/self/mounts | sort -u
}

inns() { nsenter --mount="$RUN/mnt" --net="/run/netns/$NETNS" -- "$@"; }
innet() { nsenter --net="/run/netns/$NETNS" -- "$@"; }

# ------------------------------------------------------------------ snapshot

sysctl_lines() {
  local kv
  for kv in "${KUBELET_SYSCTLS[@]}" net/ipv4/ip_forward=; do
    printf '%s=%s\n' "${kv%%=*}" "$(cat "/proc/sys/${kv%%=*}")"
  done
}

snapshot() { # FILE [DIR]
  local sdir=${2:-}
  (
    set +e +o pipefail
    echo "## ip -d link"; ip -d link show | sed -E 's/^[0-9]+: //'
    echo "## ip netns"; ip netns list
    echo "## iptables-save"; iptables-save 2>/dev/null | grep -v '^#' | sed -E 's/\[[0-9]+:[0-9]+\]//'
    echo "## ip6tables-save"; ip6tables-save 2>/dev/null | grep -v '^#' | sed -E 's/\[[0-9]+:[0-9]+\]//'
    # Mount ids change with every mount anywhere; keep what a mount is.
    echo "## mountinfo"; awk '{ $1 = ""; $2 = ""; print }' /proc/self/mountinfo | sort
    echo "## sysctls"; sysctl_lines
    echo "## cgroups"; local r; for r in $(cgroup_roots); do
      find "$r" -maxdepth 1 -mindepth 1 -type d -name "$CGROUP*"
      find "$r" -maxdepth 2 -mindepth 1 -type d -name 'kubepods*'
    done
    # (a zombie holds nothing but its pid, and init reaps it: not listed, see wait_reaped)
    echo "## processes"; ps -eo stat=,comm=,args= | awk '$1 !~ /^Z/ { $1 = ""; print }' |
      grep -E '^ (containerd|kubelet|kube-proxy|kube-controller|kube-scheduler|runc)' || true
    echo "## node processes"; node_pids | tr ' ' '\n' | grep . || true
    echo "## host paths"
    # (other control planes on this machine have their etcd data on /dev/shm too: only the
    # node's own, recorded at `up`, is checked)
    local p etcd=""
    [[ -n "$sdir" && -f "$sdir/etcd-data-dir" ]] && etcd=$(cat "$sdir/etcd-data-dir")
    for p in "${NODE_PATHS[@]}" "$STATE" "$RUN" $etcd; do
      [[ -e "$p" ]] && echo "exists $p"
    done
    true
  ) >"$1"
}

# ------------------------------------------------------------------ teardown

ns_inode() { stat -L -c %i "$1" 2>/dev/null || true; }

node_pids() { # every process of the node: its cgroups, its netns, its mount ns
  local pids=() r f net mnt p
  for r in $(cgroup_roots); do
    [[ -d "$r/$CGROUP" ]] || continue
    while read -r f; do pids+=($(cat "$f" 2>/dev/null)); done < <(find "$r/$CGROUP" -name cgroup.procs)
  done
  net=$(ns_inode "/run/netns/$NETNS"); mnt=""
  [[ -e "$RUN/mnt" ]] && mnt=$(ns_inode "$RUN/mnt")
  # One find over /proc (a stat per process would take seconds).
  [[ -n "$net" ]] && pids+=($(find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/net' \
    -lname "net:\\[$net\\]" 2>/dev/null | cut -d/ -f3))
  [[ -n "$mnt" ]] && pids+=($(find /proc -mindepth 3 -maxdepth 3 -path '/proc/[0-9]*/ns/mnt' \
    -lname "mnt:\\[$mnt\\]" 2>/dev/null | cut -d/ -f3))
  [[ -f "$RUN/keeper.pid" ]] && pids+=($(cat "$RUN/keeper.pid"))
  for p in $(printf '%s\n' "${pids[@]}" | grep -E '^[0-9]+$' | grep -vx "$$" | sort -un); do
    # alive, and not a zombie (its parent reaps it; SIGKILL cannot)
    [[ -r /proc/$p/stat ]] && [[ "$(awk '{ print $3 }' /proc/$p/stat 2>/dev/null)" != Z ]] && printf '%s ' "$p"
  done
  true
}

thaw_all() { # a task in a frozen v1 freezer cgroup cannot die
  local r f
  for r in $(cgroup_roots); do
    [[ -d "$r/$CGROUP" ]] || continue
    while read -r f; do echo THAWED >"$f" 2>/dev/null || true; done < <(find "$r/$CGROUP" -name freezer.state)
    while read -r f; do echo 0 >"$f" 2>/dev/null || true; done < <(find "$r/$CGROUP" -name cgroup.freeze)
  done
}

kill_all() {
  local i pids
  for ((i = 0; i < 100; i++)); do
    thaw_all
    pids=$(node_pids)
    [[ -z "$pids" ]] && return 0
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    sleep 0.1
  done
  die "processes survive SIGKILL: $(node_pids)"
}

# Processes whose parent died with a SIGKILLed launcher are reaped by init, a little later:
# wait (bounded) until none of the node's commands is left as a zombie.
wait_reaped() {
  local i
  for ((i = 0; i < 50; i++)); do
    ps -eo stat=,comm= | awk '$1 ~ /^Z/' |
      grep -qE ' (containerd|kubelet|kube-proxy|kube-controller|kube-scheduler|runc|etcd|kube-apiserver|lhapp|pause|leasehold)' || return 0
    sleep 0.1
  done
  log "zombies left for init to reap: $(ps -eo pid=,stat=,comm= | awk '$2 ~ /^Z/' | tr '\n' ' ')"
}

down() { # [DIR]: with DIR, only the node that DIR's `up` started (another run's node is left alone)
  local dir="${1:-}" t=$SECONDS
  if [[ -n "$dir" ]]; then
    dir=$(abs_dir "$dir")
    if [[ -f "$RUN/dir" && "$(cat "$RUN/dir")" != "$dir" ]]; then
      log "the node belongs to $(cat "$RUN/dir"), not $dir: left alone"; return 0
    fi
  fi
  [[ -z "$dir" && -f "$RUN/dir" ]] && dir=$(cat "$RUN/dir")
  [[ -z "$dir" && -f "$STATE/dir" ]] && dir=$(cat "$STATE/dir")
  # The control plane first: its stop removes etcd's data dir on /dev/shm.
  if [[ -n "$dir" && -f "$dir/cp/state" ]]; then bash "$CP_SH" stop "$dir/cp" >/dev/null 2>&1 || true; fi
  # Graceful stop of the kubelet and containerd is not needed: the whole node goes.
  kill_all
  wait_reaped
  if [[ -n "$dir" && -f "$dir/etcd-data-dir" ]]; then
    local e; e=$(cat "$dir/etcd-data-dir")
    [[ "$e" == /dev/shm/leasehold-etcd.* ]] && rm -rf "$e"
  fi
  # The mount namespace dies with its last process; its bind mounts go with it.
  if [[ -e "$RUN/mnt" ]]; then umount "$RUN/mnt" 2>/dev/null || umount -l "$RUN/mnt" 2>/dev/null || true; fi
  if grep -q " $RUN " /proc/self/mountinfo; then umount "$RUN" 2>/dev/null || umount -l "$RUN" || true; fi
  if ip netns list | grep -qw "^$NETNS"; then ip netns del "$NETNS"; fi
  # The /run/netns mount `ip netns add` made (make_netns), once no namespace is left in it.
  if [[ -f "$STATE/made-run-netns" ]] && mountpoint -q /run/netns && [[ -z "$(ls -A /run/netns)" ]]; then
    umount /run/netns 2>/dev/null || umount -l /run/netns || true
    if [[ "$(cat "$STATE/made-run-netns")" == dir ]]; then rmdir /run/netns 2>/dev/null || true; fi
  fi
  # cgroups, deepest first (a v1 rmdir fails while a child exists).
  local r i
  for r in $(cgroup_roots); do
    [[ -d "$r/$CGROUP" ]] || continue
    for ((i = 0; i < 50; i++)); do
      find "$r/$CGROUP" -depth -type d -exec rmdir {} \; 2>/dev/null || true
      [[ -d "$r/$CGROUP" ]] || break
      sleep 0.1
    done
    [[ -d "$r/$CGROUP" ]] && log "WARNING: cannot remove $r/$CGROUP"
  done
  if [[ -f "$STATE/created-paths" ]]; then
    local p
    while read -r p; do [[ -n "$p" && "$p" == /* ]] && rm -rf --one-file-system "$p"; done <"$STATE/created-paths"
  fi
  rm -rf --one-file-system "$STATE" "$RUN"
  log "down in $((SECONDS - t))s"
}

# ------------------------------------------------------------------ up

# LEASEHOLD_NODE_DIE_AT=STAGE: SIGKILL this launcher there (teardown_test.sh: what does `down`
# find after the runner died at that point?).
die_at() { [[ "${LEASEHOLD_NODE_DIE_AT:-}" != "$1" ]] || { log "SIGKILL at $1"; kill -KILL $$; }; }

# The node lock on fd 8 (waits for a live run's node: its keeper holds the lock).
take_lock() {
  exec 8>>"$LOCK"
  if ! flock -n 8; then
    log "another node run holds $LOCK; waiting"
    flock -w "${LEASEHOLD_NODE_LOCK_WAIT:-1800}" 8 || die "the node is in use by another run ($LOCK)"
  fi
}

# With the lock held: whatever a killed run left behind is nobody's now (its keeper is dead).
clear_leftovers() {
  local r left=""
  [[ -e "$STATE" || -e "$RUN" ]] && left=1
  ip netns list | grep -qw "^$NETNS" && left=1
  for r in $(cgroup_roots); do [[ -d "$r/$CGROUP" ]] && left=1; done
  [[ -n "$left" ]] || return 0
  log "a killed run's node is left on this host: taking it down"
  down "" 2>/dev/null || true
}

# reclaim: before a snapshot that `down` is compared with, the host must hold no killed run's
# node (a CI machine can start with one); a live run's node is waited for, never touched.
reclaim() { take_lock; clear_leftovers; exec 8>&-; }

need() { command -v "$1" >/dev/null || die "$1 not found: run e2e/node/setup.sh"; }

make_cgroups() {
  local r sub
  for r in $(cgroup_roots); do
    for sub in "$CGROUP" "$CGROUP/system"; do
      mkdir -p "$r/$sub"
      # A new v1 cpuset is empty: copy the parent's cpus and mems.
      if [[ -f "$r/$sub/cpuset.cpus" ]]; then
        cat "$(dirname "$r/$sub")/cpuset.cpus" >"$r/$sub/cpuset.cpus"
        cat "$(dirname "$r/$sub")/cpuset.mems" >"$r/$sub/cpuset.mems"
      fi
    done
  done
}

make_mountns() {
  mkdir -p "$RUN" "$STATE/sysctl"
  mount --bind "$RUN" "$RUN"
  mount --make-private "$RUN"
  touch "$RUN/mnt"
  unshare --mount="$RUN/mnt" --propagation private true
  local kv p key
  for kv in "${KUBELET_SYSCTLS[@]}"; do
    key=$(path_key "${kv%%=*}")
    echo "${kv#*=}" >"$STATE/sysctl/$key"
  done
  : >"$STATE/created-paths"
  for p in "${NODE_PATHS[@]}"; do
    mkdir -p "$STATE/paths/$(path_key "$p")"
    if [[ ! -e "$p" ]]; then
      # record the topmost directory this creates
      local top=$p
      while [[ ! -e "$(dirname "$top")" ]]; do top=$(dirname "$top"); done
      echo "$top" >>"$STATE/created-paths"
      mkdir -p "$p"
    fi
  done
  nsenter --mount="$RUN/mnt" -- bash -euc '
    state=$1; shift
    for kv in "$@"; do
      s=${kv%%=*}; key=${s//\//-}
      mount --bind "$state/sysctl/$key" "/proc/sys/$s"
    done' _ "$STATE" "${KUBELET_SYSCTLS[@]}"
  for p in "${NODE_PATHS[@]}"; do
    nsenter --mount="$RUN/mnt" -- mount --bind "$STATE/paths/$(path_key "$p")" "$p"
  done
  # Check: inside, the kubelet reads its values; outside, the host's are untouched.
  for kv in "${KUBELET_SYSCTLS[@]}"; do
    [[ "$(nsenter --mount="$RUN/mnt" -- cat "/proc/sys/${kv%%=*}")" == "${kv#*=}" ]] ||
      die "sysctl ${kv%%=*} not masked inside the node's mount namespace"
  done
}

make_netns() {
  # `ip netns add` makes /run/netns a shared bind mount of itself when it is not a mount point
  # yet (and creates the directory): on a fresh machine that mount is the node's, and `down`
  # undoes it (made-run-netns: "mount", or "dir" when the directory was missing too).
  if ! mountpoint -q /run/netns; then
    if [[ -e /run/netns ]]; then echo mount; else echo dir; fi >"$STATE/made-run-netns"
  fi
  ip netns add "$NETNS"
  innet ip link set lo up
  # The node IP's link: this kernel has no dummy links, so a veth pair with both ends inside.
  innet ip link add "$NODE_LINK" type veth peer name "${NODE_LINK}p"
  innet ip link set "${NODE_LINK}p" up
  innet ip addr add "$NODE_IP/32" dev "$NODE_LINK"
  innet ip link set "$NODE_LINK" up
  # Pods get a default route through the bridge; the node needs one for the kubelet's and
  # kube-proxy's node-IP detection. It points at that link: nothing leaves the namespace.
  innet ip route add default dev "$NODE_LINK"
}

# launch NAME LOGFILE CMD...: start CMD in the node's namespaces and cgroup, own session.
launch() {
  local name=$1 logf=$2; shift 2
  echo "=== $(date -u +%FT%T.%3NZ) starting $name" >>"$logf"
  setsid nsenter --mount="$RUN/mnt" --net="/run/netns/$NETNS" -- bash -c '
    name=$1 run=$2 cg=$3; shift 3
    for r in $(awk '\''$3 == "cgroup" || $3 == "cgroup2" { print $2 }'\'' /proc/self/mounts | sort -u); do
      echo $$ >"$r/$cg/system/cgroup.procs"
    done
    echo $$ >"$run/$name.pid"
    exec "$@"' _ "$name" "$RUN" "$CGROUP" "$@" >>"$logf" 2>&1 </dev/null &
  local i
  for ((i = 0; i < 100; i++)); do [[ -s "$RUN/$name.pid" ]] && return 0; sleep 0.05; done
  die "$name did not start (log $logf)"
}

comp_pid() { cat "$RUN/$1.pid" 2>/dev/null || true; }
comp_alive() { local p; p=$(comp_pid "$1"); [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null; }

stop_comp() { # NAME: SIGTERM, then SIGKILL after 20 s
  local p i
  p=$(comp_pid "$1"); [[ -n "$p" ]] || return 0
  kill -TERM "$p" 2>/dev/null || true
  for ((i = 0; i < 200; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$p" 2>/dev/null || true
  rm -f "$RUN/$1.pid"
}

has_cap_sys_resource() {
  local eff
  eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
  (((0x$eff >> 24) & 1))
}

write_configs() {
  local dir=$1 cfg=$1/config
  mkdir -p "$cfg" "$STATE/paths/$(path_key /etc/cni)/net.d"
  local restrict=false
  # Without CAP_SYS_RESOURCE runc cannot raise a container's oom_score_adj above its parent's
  # ("can't get final child's PID from pipe: EOF"); containerd then must not ask it to.
  has_cap_sys_resource || restrict=true
  cat >"$cfg/containerd.toml" <<EOF
version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
[grpc]
  address = "/run/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "leasehold.local/pause:1"
  restrict_oom_score_adj = $restrict
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    discard_unpacked_layers = false
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "/etc/cni/net.d"
EOF
  # ipMasq off: pods reach only the node's own addresses (the apiserver through kube-proxy's DNAT).
  cat >"$STATE/paths/$(path_key /etc/cni)/net.d/10-lh-node.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "lh-pods", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}
]}
EOF
  cat >"$cfg/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP
failSwapOn: false
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
resolvConf: ""
# No registry: images are imported before the kubelet starts, and must never be collected.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
imageMinimumGCAge: 87600h
evictionHard: {memory.available: "0%", nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%", imagefs.inodesFree: "0%"}
serializeImagePulls: false
syncFrequency: 5s
nodeStatusUpdateFrequency: 2s
fileCheckFrequency: 5s
shutdownGracePeriod: 0s
protectKernelDefaults: false
failCgroupV1: false
localStorageCapacityIsolation: false
EOF
  cat >"$cfg/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: $NODE_NAME
bindAddress: $NODE_IP
clusterCIDR: $POD_CIDR
clientConnection: {kubeconfig: $dir/cp/admin.kubeconfig}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# Global sysctls stay untouched: no conntrack sizing or timeouts, no route_localnet.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false, syncPeriod: 10s, minSyncPeriod: 0s}
EOF
}

kc() { local dir=$1; shift; innet "$BIN/kubectl" --kubeconfig "$dir/cp/admin.kubeconfig" --cache-dir "$dir/.kube-cache" "$@"; }

wait_for() { # SECONDS WHAT CMD...
  local secs=$1 what=$2 i; shift 2
  for ((i = 0; i < secs * 10; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  die "timed out after ${secs}s waiting for $what"
}

node_ready() {
  [[ "$(kc "$1" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" == True ]]
}
service_rules() { innet iptables-save -t nat | grep -q 'KUBE-SVC-.*default/kubernetes:https'; }
drop_on_top() { [[ "$(innet iptables -S FORWARD | sed -n 2p)" == "-A FORWARD -j $FWD_CHAIN" ]]; }

start_component() { # NAME DIR
  local name=$1 dir=$2 L="$2/logs"
  mkdir -p "$L"
  case "$name" in
    containerd)
      launch containerd "$L/containerd.log" containerd --config "$dir/config/containerd.toml" --log-level info
      wait_for 30 "containerd" test -S "$STATE/paths/run-containerd/containerd.sock"
      wait_for 30 "containerd CRI" inns ctr --address /run/containerd/containerd.sock version
      # containerd's events (task exits with ns stamps) for the evidence, for the node's life.
      launch containerd-events "$L/containerd-events.log" ctr --address /run/containerd/containerd.sock events
      ;;
    kubelet)
      # LEASEHOLD_NODE_KUBELET_V: the kubelet's log level (default 2; 4 logs the pod worker's
      # steps, README "Why the first deletion takes ~1.8 s"). The scenarios read -v=2 lines.
      launch kubelet "$L/kubelet.log" "$NBIN/kubelet" --config "$dir/config/kubelet.yaml" \
        --kubeconfig "$dir/cp/admin.kubeconfig" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" -v="${LEASEHOLD_NODE_KUBELET_V:-2}"
      ;;
    kube-proxy)
      launch kube-proxy "$L/kube-proxy.log" "$NBIN/kube-proxy" --config "$dir/config/kube-proxy.yaml" -v=1
      ;;
    kube-controller-manager)
      launch kube-controller-manager "$L/kube-controller-manager.log" "$NBIN/kube-controller-manager" \
        --kubeconfig "$dir/cp/admin.kubeconfig" --leader-elect=false --bind-address=127.0.0.1 \
        --root-ca-file "$dir/cp/ca.crt" --service-account-private-key-file "$dir/cp/pki/sa.key" \
        --use-service-account-credentials=false --controllers='*,-nodeipam' \
        --node-monitor-grace-period=40s -v=1
      ;;
    kube-scheduler)
      launch kube-scheduler "$L/kube-scheduler.log" "$NBIN/kube-scheduler" \
        --kubeconfig "$dir/cp/admin.kubeconfig" --leader-elect=false --bind-address=127.0.0.1 -v=1
      ;;
    *) die "unknown component $name" ;;
  esac
}

import_images() { # DIR: every docker-archive in DIR/images
  local f
  for f in "$1"/images/*.tar; do
    [[ -e "$f" ]] || continue
    inns ctr --address /run/containerd/containerd.sock -n k8s.io images import --no-unpack=false "$f" >&2
  done
}

up() { # DIR
  local dir; dir=$(abs_dir "$1")
  local t0=$SECONDS t
  for c in nsenter unshare ip iptables containerd runc ctr; do need "$c"; done
  [[ -x /usr/lib/cni/bridge ]] || die "CNI plugins not found: run e2e/node/setup.sh"
  mkdir -p "$dir"
  BIN=${CONTROLPLANE_BIN:-$(SKIP_HELM=1 bash "$REPO/e2e/controlplane/build.sh" | tail -1)}
  NBIN=$(bash "$HERE/build.sh" | tail -1)
  echo "$BIN" >"$dir/bin-dir"

  take_lock
  clear_leftovers
  mkdir -p "$dir/logs"
  [[ -f "$dir/before.snapshot" ]] || snapshot "$dir/before.snapshot" "$dir"

  mkdir -p "$STATE" "$RUN"
  echo "$dir" >"$STATE/dir"
  sysctl_lines >"$STATE/host-sysctls"
  make_cgroups
  make_netns
  make_mountns
  echo "$dir" >"$RUN/dir"
  die_at mountns
  write_configs "$dir"
  # Keeper: holds the lock while the node is up (fd 8); TTL backstop. It lives in the node's
  # cgroup, so `down` kills it with its sleep; at TTL it leaves the cgroup and runs `down`.
  setsid bash "$SELF" _keeper "${LEASEHOLD_NODE_TTL:-5400}" </dev/null >>"$dir/logs/keeper.log" 2>&1 &
  wait_for 10 "the keeper" test -s "$RUN/keeper.pid"
  exec 8>&-

  t=$SECONDS
  rm -rf "$dir/cp"
  innet env CONTROLPLANE_BIN="$BIN" CONTROLPLANE_HOST="$NODE_IP" CONTROLPLANE_TTL="${LEASEHOLD_NODE_TTL:-5400}" \
    EXTRA_APISERVER_ARGS="--endpoint-reconciler-type=lease --kubelet-preferred-address-types=InternalIP" bash "$CP_SH" start "$dir/cp" >&2
  (source "$dir/cp/env" && echo "$ETCD_DATA_DIR" >"$dir/etcd-data-dir")
  log "control plane up in $((SECONDS - t))s"
  start_component containerd "$dir"
  import_images "$dir"
  die_at containerd
  for c in kube-controller-manager kube-scheduler kubelet kube-proxy; do start_component "$c" "$dir"; done
  wait_for 90 "node Ready" node_ready "$dir"
  log "node Ready $((SECONDS - t0))s after start"
  wait_for 60 "kube-proxy's rules for the kubernetes Service" service_rules
  # Nothing needs forwarding (pods reach only node-local addresses): drop it all, above
  # kube-proxy's own FORWARD jumps. health checks it stays on top.
  innet iptables -N "$FWD_CHAIN"
  innet iptables -A "$FWD_CHAIN" -j DROP
  innet iptables -I FORWARD 1 -j "$FWD_CHAIN"
  wait_for 60 "default ServiceAccount" kc "$dir" get serviceaccount default -n default
  health "$dir"
  die_at ready
  log "node up in $((SECONDS - t0))s"
}

health() { # DIR
  local dir; dir=$(abs_dir "$1") bad=()
  BIN=${BIN:-$(cat "$dir/bin-dir")}
  for c in "${COMPONENTS[@]}"; do comp_alive "$c" || bad+=("$c not running"); done
  node_ready "$dir" || bad+=("node not Ready")
  service_rules || bad+=("no kube-proxy rules for the kubernetes Service")
  drop_on_top || bad+=("$FWD_CHAIN is not the first FORWARD rule: $(innet iptables -S FORWARD | sed -n 2p)")
  [[ "$(sysctl_lines)" == "$(cat "$STATE/host-sysctls")" ]] || bad+=("host sysctls changed: $(diff <(cat "$STATE/host-sysctls") <(sysctl_lines) | tr '\n' ' ')")
  ((${#bad[@]} == 0)) || { printf 'node unhealthy: %s\n' "${bad[@]}" >&2; return 1; }
  echo "node healthy"
}

evidence() { # DIR OUT
  local dir; dir=$(abs_dir "$1"); local out=$2
  BIN=${BIN:-$(cat "$dir/bin-dir")}
  mkdir -p "$out"
  cp -r "$dir/logs" "$out/node-logs" 2>/dev/null || true
  cp "$dir/cp/apiserver.log" "$out/node-logs/" 2>/dev/null || true
  kc "$dir" get events -A -o wide >"$out/events.txt" 2>&1 || true
  kc "$dir" get pods -A -o wide >"$out/pods.txt" 2>&1 || true
  innet iptables-save >"$out/iptables-save.txt" 2>&1 || true
  cp -r "$STATE/paths/var-log-pods" "$out/pod-logs" 2>/dev/null || true
}

[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0  # sourced (tests): functions only
cmd=${1:-}; shift || true
case "$cmd" in
  up) [[ $# == 1 ]] || die "usage: up DIR"; up "$1" ;;
  down) down "${1:-}" ;;
  health) health "$1" ;;
  snapshot) snapshot "$1" "${2:-}" ;;
  reclaim) reclaim ;;
  enter) inns "$@" ;;
  kubectl) d=$(abs_dir "$1"); shift; BIN=$(cat "$d/bin-dir"); kc "$d" "$@" ;;
  stop) stop_comp "$1" ;;
  restart)
    NBIN=$(bash "$HERE/build.sh" | tail -1); BIN=$(cat "$(abs_dir "$2")/bin-dir")
    stop_comp "$1"; start_component "$1" "$(abs_dir "$2")" ;;
  evidence) evidence "$1" "$2" ;;
  _keeper)
    for r in $(cgroup_roots); do echo $$ >"$r/$CGROUP/system/cgroup.procs"; done
    echo $$ >"$RUN/keeper.pid"
    sleep "$1" 8>&- &
    wait $! || true
    for r in $(cgroup_roots); do echo $$ >"$r/cgroup.procs"; done
    rm -f "$RUN/keeper.pid"
    log "TTL of $1 s reached: tearing the node down"
    down
    ;;
  *) sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
