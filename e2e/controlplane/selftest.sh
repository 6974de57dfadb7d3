#!/usr/bin/env bash
# Self-test of controlplane.sh and deploy/rbac against a real kube-apiserver.
# Checks the wire facts documented in README.md. Takes about a minute once the
# binaries are built (build.sh). Prints "N passed, N failed" at the end.
#
#   e2e/controlplane/selftest.sh            # OUTAGE_SECONDS=3 by default
#   OUTAGE_SECONDS=20 e2e/controlplane/selftest.sh
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
CP="$HERE/controlplane.sh"
OUTAGE_SECONDS=${OUTAGE_SECONDS:-3}

PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)); echo "ok   - $*"; }
nok() { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }
check() { # DESC EXPECTED ACTUAL
  if [[ "$3" == "$2" ]]; then ok "$1 ($3)"; else nok "$1: expected '$2', got '$3'"; fi
}
contains() { # DESC NEEDLE HAYSTACK
  if [[ "$3" == *"$2"* ]]; then ok "$1"; else nok "$1: '$2' not in: ${3:0:400}"; fi
}

BIN=$(bash "$HERE/build.sh" | tail -1) || { echo "build failed"; exit 1; }
export CONTROLPLANE_BIN=$BIN

WORK=$(mktemp -d /tmp/leasehold-cp-selftest.XXXXXX)
D=$WORK/cp
cleanup() {
  "$CP" stop "$D" >/dev/null 2>&1 || true
  "$CP" stop "$WORK/cp-fail" >/dev/null 2>&1 || true
  "$CP" stop "$WORK/cp-wd" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

markers_alive() { # DIR -> number of processes carrying this dir's markers
  local n=0 p cmd
  for p in /proc/[0-9]*; do
    cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
    [[ "$cmd" == *"$1/pki/apiserver.crt"* || "$cmd" == *"_watchdog $1 "* ]] && n=$((n + 1))
  done
  echo $n
}

# ------------------------------------------------------------ start (relative DIR, other cwd)
(cd "$WORK" && "$CP" start cp) >"$WORK/start.out" 2>&1
check "start (relative dir, cwd elsewhere)" 0 $?
# shellcheck disable=SC1091
source "$D/env"
check "env has APISERVER_HOST" 127.0.0.1 "$APISERVER_HOST"
etcd_dir=$ETCD_DATA_DIR
contains "etcd data dir on tmpfs" /dev/shm/ "$etcd_dir"

ADM=(curl -s --http1.1 --cacert "$CA_CRT" --cert "$ADMIN_CRT" --key "$ADMIN_KEY"
  -H 'Content-Type: application/json' -H 'Accept: application/json')
code() { "$@" -o /dev/null -w '%{http_code}'; }
body_code() { "$@" -w '\n%{http_code}'; }

check "/version gitVersion" v1.34.4 "$("${ADM[@]}" "$APISERVER_URL/version" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gitVersion"])')"
check "/version minor" 34 "$("${ADM[@]}" "$APISERVER_URL/version" | python3 -c 'import json,sys; print(json.load(sys.stdin)["minor"])')"
r=$(body_code "${ADM[@]}" "$APISERVER_URL/apis/coordination.k8s.io/v1")
check "GET /apis/coordination.k8s.io/v1 (admin)" 200 "${r##*$'\n'}"
contains "discovery lists leases" '"name": "leases"' "$r"
check "kubectl get --raw /readyz" ok "$("$CP" kubectl "$D" get --raw /readyz)"

# ------------------------------------------------------------ Lease wire behaviour
NS=selftest
"$CP" ensure-ns "$D" $NS
U=$APISERVER_URL/apis/coordination.k8s.io/v1/namespaces/$NS/leases
lease() { # NAME RENEWTIME [EXTRA_METADATA] [HOLDER]
  printf '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"%s"%s},"spec":{"holderIdentity":"%s","leaseDurationSeconds":15,"acquireTime":"%s","renewTime":"%s","leaseTransitions":0}}' \
    "$1" "${3:-}" "${4:-a}" "$2" "$2"
}
jget() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

r=$(body_code "${ADM[@]}" -X POST "$U" -d "$(lease l1 2026-01-02T03:04:05.123456Z)")
check "POST renewTime with 6 fractional digits" 201 "${r##*$'\n'}"
check "renewTime round-trips" 2026-01-02T03:04:05.123456Z "$(printf '%s' "${r%$'\n'*}" | jget 'd["spec"]["renewTime"]')"
rv1=$(printf '%s' "${r%$'\n'*}" | jget 'd["metadata"]["resourceVersion"]')
r=$(body_code "${ADM[@]}" -X POST "$U" -d "$(lease l2 2026-01-02T03:04:05Z)")
check "POST renewTime without fraction" 400 "${r##*$'\n'}"
contains "400 is a Status BadRequest" '"reason": "BadRequest"' "$r"
check "POST renewTime with 3 fractional digits" 400 "$(code "${ADM[@]}" -X POST "$U" -d "$(lease l3 2026-01-02T03:04:05.123Z)")"
check "POST renewTime with 9 fractional digits" 400 "$(code "${ADM[@]}" -X POST "$U" -d "$(lease l4 2026-01-02T03:04:05.123456789Z)")"
r=$(body_code "${ADM[@]}" -X PUT "$U/l1" -d "$(lease l1 2026-01-02T03:04:06.000000Z ",\"resourceVersion\":\"$rv1\"" b)")
check "PUT with current resourceVersion" 200 "${r##*$'\n'}"
r=$(body_code "${ADM[@]}" -X PUT "$U/l1" -d "$(lease l1 2026-01-02T03:04:06.000000Z ",\"resourceVersion\":\"$rv1\"" c)")
check "PUT with stale resourceVersion" 409 "${r##*$'\n'}"
contains "409 stale is reason Conflict" '"reason": "Conflict"' "$r"
r=$(body_code "${ADM[@]}" -X PUT "$U/l1" -d "$(lease l1 2026-01-02T03:04:06.000000Z '' d)")
check "PUT existing without resourceVersion" 422 "${r##*$'\n'}"
contains "422 is reason Invalid" '"reason": "Invalid"' "$r"
r=$(body_code "${ADM[@]}" -X POST "$U" -d "$(lease l1 2026-01-02T03:04:06.000000Z)")
check "POST duplicate" 409 "${r##*$'\n'}"
contains "409 duplicate is reason AlreadyExists" '"reason": "AlreadyExists"' "$r"
r=$(body_code "${ADM[@]}" "$U/missing")
check "GET missing" 404 "${r##*$'\n'}"
contains "404 is reason NotFound (JSON Status)" '"reason": "NotFound"' "$r"
check "PUT missing Lease creates it (AllowCreateOnUpdate)" 201 "$(code "${ADM[@]}" -X PUT "$U/putcreated" -d "$(lease putcreated 2026-01-02T03:04:06.000000Z)")"
check "PUT missing ConfigMap does not create" 404 "$(code "${ADM[@]}" -X PUT "$APISERVER_URL/api/v1/namespaces/$NS/configmaps/nocm" -d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"nocm"}}')"

# watch
"${ADM[@]}" -N --max-time 6 "$U?watch=1&fieldSelector=metadata.name%3Dl1" >"$WORK/watch.out" 2>/dev/null &
wpid=$!
sleep 1.5
rv=$("${ADM[@]}" "$U/l1" | jget 'd["metadata"]["resourceVersion"]')
"${ADM[@]}" -X PUT "$U/l1" -d "$(lease l1 2026-01-02T03:04:07.000000Z ",\"resourceVersion\":\"$rv\"" w)" >/dev/null
"${ADM[@]}" -X PUT "$U/putcreated" -d "$(lease putcreated 2026-01-02T03:04:07.000000Z)" >/dev/null
"${ADM[@]}" -X DELETE "$U/l1" >/dev/null
wait $wpid
check "watch by fieldSelector: events" "ADDED:l1 MODIFIED:l1 DELETED:l1" \
  "$(python3 -c 'import json,sys; print(" ".join(e["type"]+":"+e["object"]["metadata"]["name"] for e in map(json.loads, open(sys.argv[1]))))' "$WORK/watch.out")"

# ------------------------------------------------------------ RBAC (deploy/rbac)
"$CP" kubectl "$D" apply -n $NS -k "$REPO/deploy/rbac" >/dev/null
check "kubectl apply -k deploy/rbac" 0 $?
"$CP" kubectl "$D" apply -n $NS -f "$REPO/deploy/rbac/pod-role.yaml" -f "$REPO/deploy/rbac/pod-rolebinding.yaml" >/dev/null
check "apply the pod role" 0 $?
"$CP" kubectl "$D" apply -n $NS -f "$HERE/testdata/rbac-no-update.yaml" >/dev/null
check "apply testdata/rbac-no-update.yaml" 0 $?
"$CP" sa-dir "$D" $NS leasehold "$WORK/sa"
check "sa-dir" 0 $?
check "sa-dir namespace file" "$NS" "$(cat "$WORK/sa/namespace")"
cmp -s "$CA_CRT" "$WORK/sa/ca.crt"
check "sa-dir ca.crt is the cluster CA" 0 $?
check "sa-dir token has no newline" 0 "$(tr -cd '\n' <"$WORK/sa/token" | wc -c)"
SA=(curl -s --http1.1 --cacert "$WORK/sa/ca.crt" -H "Authorization: Bearer $(cat "$WORK/sa/token")"
  -H 'Content-Type: application/json' -H 'Accept: application/json')
LK=leasehold-lock
check "SA: GET missing lock" 404 "$(code "${SA[@]}" "$U/$LK")"
check "SA: POST lock" 201 "$(code "${SA[@]}" -X POST "$U" -d "$(lease $LK 2026-01-02T03:04:05.000000Z)")"
rv=$("${SA[@]}" "$U/$LK" | jget 'd["metadata"]["resourceVersion"]')
check "SA: GET lock" 200 "$(code "${SA[@]}" "$U/$LK")"
check "SA: PUT lock" 200 "$(code "${SA[@]}" -X PUT "$U/$LK" -d "$(lease $LK 2026-01-02T03:04:06.000000Z ",\"resourceVersion\":\"$rv\"" sa)")"
check "SA: GET other lease" 403 "$(code "${SA[@]}" "$U/l1")"
check "SA: PUT other lease" 403 "$(code "${SA[@]}" -X PUT "$U/putcreated" -d "$(lease putcreated 2026-01-02T03:04:06.000000Z)")"
check "SA: LIST leases" 403 "$(code "${SA[@]}" "$U")"
check "SA: LIST with name fieldSelector" 403 "$(code "${SA[@]}" "$U?fieldSelector=metadata.name%3D$LK")"
check "SA: WATCH with name fieldSelector" 200 "$(code "${SA[@]}" --max-time 2 "$U?watch=1&fieldSelector=metadata.name%3D$LK")"
check "SA: WATCH without fieldSelector" 403 "$(code "${SA[@]}" --max-time 2 "$U?watch=1")"
check "SA: DELETE lock" 403 "$(code "${SA[@]}" -X DELETE "$U/$LK")"
check "SA: lock in another namespace" 403 "$(code "${SA[@]}" "$APISERVER_URL/apis/coordination.k8s.io/v1/namespaces/default/leases/$LK")"
check "SA: discovery /apis/coordination.k8s.io/v1" 200 "$(code "${SA[@]}" "$APISERVER_URL/apis/coordination.k8s.io/v1")"
check "SA: /version" 200 "$(code "${SA[@]}" "$APISERVER_URL/version")"
check "SA: POST core Event" 201 "$(code "${SA[@]}" -X POST "$APISERVER_URL/api/v1/namespaces/$NS/events" -d '{"apiVersion":"v1","kind":"Event","metadata":{"generateName":"leasehold-"},"involvedObject":{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","namespace":"'$NS'","name":"'$LK'"},"reason":"LeaderElection","message":"x","type":"Normal","source":{"component":"leasehold"}}')"
check "SA: POST events.k8s.io Event" 201 "$(code "${SA[@]}" -X POST "$APISERVER_URL/apis/events.k8s.io/v1/namespaces/$NS/events" -d '{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"generateName":"leasehold-"},"regarding":{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","namespace":"'$NS'","name":"'$LK'"},"reason":"LeaderElection","note":"x","type":"Normal","action":"Acquire","reportingController":"leasehold.io/leasehold","reportingInstance":"x","eventTime":"2026-01-02T03:04:05.123456Z"}')"
CM=$APISERVER_URL/api/v1/namespaces/$NS/configmaps
check "SA: POST ConfigMap lock" 201 "$(code "${SA[@]}" -X POST "$CM" -d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"'$LK'"}}')"
rv=$("${SA[@]}" "$CM/$LK" | jget 'd["metadata"]["resourceVersion"]')
check "SA: PUT ConfigMap lock" 200 "$(code "${SA[@]}" -X PUT "$CM/$LK" -d '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"'$LK'","resourceVersion":"'"$rv"'"}}')"
check "SA: GET other ConfigMap" 403 "$(code "${SA[@]}" "$CM/other")"
check "SA: GET pod (the pod role)" 404 "$(code "${SA[@]}" "$APISERVER_URL/api/v1/namespaces/$NS/pods/nopod")"
check "SA: LIST pods" 403 "$(code "${SA[@]}" "$APISERVER_URL/api/v1/namespaces/$NS/pods")"
"$CP" sa-dir "$D" $NS leasehold-noupdate "$WORK/sa-noupdate"
NU=(curl -s --http1.1 --cacert "$CA_CRT" -H "Authorization: Bearer $(cat "$WORK/sa-noupdate/token")" -H 'Content-Type: application/json')
rv=$("${NU[@]}" "$U/$LK" | jget 'd["metadata"]["resourceVersion"]')
check "no-update SA: GET lock" 200 "$(code "${NU[@]}" "$U/$LK")"
check "no-update SA: PUT lock" 403 "$(code "${NU[@]}" -X PUT "$U/$LK" -d "$(lease $LK 2026-01-02T03:04:06.000000Z ",\"resourceVersion\":\"$rv\"" nu)")"
old_token=$(cat "$WORK/sa/token")
"$CP" sa-dir "$D" $NS leasehold "$WORK/sa"
[[ "$(cat "$WORK/sa/token")" != "$old_token" && $(find "$WORK/sa" -maxdepth 1 -name '..2*' | wc -l) == 1 ]]
check "sa-dir again rotates the token atomically" 0 $?

# ------------------------------------------------------------ apiserver stop/start
"${SA[@]}" -N "$U?watch=1&fieldSelector=metadata.name%3D$LK" -o /dev/null 2>/dev/null &
wpid=$!
sleep 1
"$CP" stop-apiserver "$D"
check "stop-apiserver" 0 $?
wait $wpid
check "open watch ends cleanly on graceful stop (curl exit)" 0 $?
code "${ADM[@]}" --max-time 3 "$APISERVER_URL/readyz" >/dev/null
check "apiserver down: connection refused (curl exit 7)" 7 $?
sleep "$OUTAGE_SECONDS"
"$CP" start-apiserver "$D"
check "start-apiserver after ${OUTAGE_SECONDS}s outage" 0 $?
check "same port after restart" 200 "$(code "${SA[@]}" "$U/$LK")"
"${SA[@]}" -N "$U?watch=1&fieldSelector=metadata.name%3D$LK" -o /dev/null 2>/dev/null &
wpid=$!
sleep 1
"$CP" stop-apiserver "$D" --kill
wait $wpid
check "open watch on SIGKILLed apiserver: curl exit 18 (partial)" 18 $?
"$CP" start-apiserver "$D"
check "start-apiserver after --kill" 0 $?

"$CP" pause-apiserver "$D"
code "${ADM[@]}" --max-time 2 "$APISERVER_URL/readyz" >/dev/null
check "paused apiserver: request times out (curl exit 28)" 28 $?
"$CP" resume-apiserver "$D"
check "resumed apiserver answers" 200 "$(code "${ADM[@]}" --max-time 5 "$APISERVER_URL/readyz")"

# ------------------------------------------------------------ coordination.k8s.io off
"$CP" restart-apiserver "$D" --runtime-config=coordination.k8s.io/v1=false,coordination.k8s.io/v1beta1=false
check "restart-apiserver with coordination.k8s.io off" 0 $?
contains "feature gate APIServerIdentity=false added automatically" "APIServerIdentity=false" "$(tr '\0' ' ' <"/proc/$(cat "$D/apiserver.pid")/cmdline")"
r=$(body_code "${SA[@]}" "$APISERVER_URL/apis/coordination.k8s.io/v1")
check "coordination off: GET /apis/coordination.k8s.io/v1" 404 "${r##*$'\n'}"
check "coordination off: 404 body is plain text, not a Status" "404 page not found" "$(printf '%s' "${r%$'\n'*}" | head -1)"
check "coordination off: GET lease" 404 "$(code "${SA[@]}" "$U/$LK")"
if "${ADM[@]}" "$APISERVER_URL/apis" | grep -q coordination.k8s.io; then nok "coordination off: /apis still lists the group"; else ok "coordination off: /apis does not list the group"; fi
check "coordination off: ConfigMap lock still works" 200 "$(code "${SA[@]}" "$CM/$LK")"
"$CP" restart-apiserver "$D" --no-extra-args
check "restart-apiserver --no-extra-args" 0 $?
check "coordination back on: lease still there" 200 "$(code "${SA[@]}" "$U/$LK")"

# ------------------------------------------------------------ etcd restart
"$CP" restart-etcd "$D"
check "restart-etcd" 0 $?
for _ in $(seq 50); do [[ "$(code "${SA[@]}" --max-time 2 "$U/$LK")" == 200 ]] && break; sleep 0.2; done
check "data survives etcd restart" 200 "$(code "${SA[@]}" "$U/$LK")"

# ------------------------------------------------------------ stop
"$CP" stop "$D"
check "stop" 0 $?
check "no process left for this control plane" 0 "$(markers_alive "$D")"
[[ ! -e "$etcd_dir" ]]
check "etcd tmpfs data dir removed" 0 $?
"$CP" stop "$D" >/dev/null 2>&1
check "stop is idempotent" 0 $?

# ------------------------------------------------------------ failing start cleans up
EXTRA_APISERVER_ARGS=--no-such-flag CONTROLPLANE_START_TIMEOUT=30 "$CP" start "$WORK/cp-fail" >"$WORK/fail.out" 2>&1
rc=$?
[[ $rc != 0 ]]
check "start with a bad apiserver flag fails" 0 $?
check "failed start leaves no process" 0 "$(markers_alive "$WORK/cp-fail")"
[[ ! -f "$WORK/cp-fail/state" ]]
check "failed start removes its state" 0 $?

# ------------------------------------------------------------ watchdog
sleep 300 &
owner=$!
CONTROLPLANE_OWNER_PID=$owner "$CP" start "$WORK/cp-wd" >/dev/null 2>&1
check "start with CONTROLPLANE_OWNER_PID" 0 $?
kill $owner
wait $owner 2>/dev/null
for _ in $(seq 100); do [[ "$(markers_alive "$WORK/cp-wd")" == 0 ]] && break; sleep 0.2; done
check "watchdog stops the control plane when the owner dies" 0 "$(markers_alive "$WORK/cp-wd")"

echo "$PASS passed, $FAIL failed"
((FAIL == 0))
