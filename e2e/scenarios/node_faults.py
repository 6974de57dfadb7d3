"""The faults only a node can make, on real pods of the one-node cluster (CTest label `node`;
how to run: e2e/node/README.md).

Each round applies one fault to the leader's pod, restores it in a `finally` (freezer state,
iptables rules), asserts the round's expected outcome, and ends with the node's health check.
The timings, and the bounds shared with node_disruptions: e2e/node/bounds.py (under the shipped
timings a freeze is longer, still inside the liveness window); every other bound is a named
constant below, derived from them.
"""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from e2e.lib import judge as verdict
from e2e.lib.common import http_request, wait_until
from e2e.lib.runner import Registry
from e2e.lib.timings import DEFAULTS, LONG_RENEW, Timings
from e2e.node import cluster, judge
from e2e.node.bounds import (CLOCK_SLACK, LEASE, RENEW, RETRY, SAMPLE_INTERVAL, SHIPPED,
                             TAKEOVER_MAX, TIMINGS, UNLOADED)
from e2e.node.cluster import cluster_time, log
from e2e.node.lease import GATE_MARGIN, LeaseTracker, lease, record_slack
from e2e.node.pods import container_id, pod_freezer, pod_pids, restarts, signal_container
from e2e.node.run import LogFollower, NodeScenario, as_instrument, repeat
from e2e.node.work import (assert_gated_runs_disjoint, gated_runs, given, running_cmd,
                          wait_cmd_on)

# The gate refuses a stop-grace that does not fit the timings (docs/gate.md); the shipped one
# fits the shipped timings only.
GATE_ENV = None if SHIPPED else {"LEASEHOLD_GATE_STOP_GRACE": "500ms"}
# The shipped liveness probe (deploy/base): period 10 s x failureThreshold 3, timeout 1 s. Its
# first failing probe can come right at the freeze, so the kubelet restarts a frozen sidecar no
# earlier than 2 x period + timeout after the freeze began; freezes stay below it.
LIVENESS_MIN = 2 * 10.0 + 1.0
FREEZE_MAX = LIVENESS_MIN - 0.5
# Whole-pod freeze: after the thaw, the unit the app had begun before the freeze ends as soon as
# the app runs again (its sleep is until an absolute time, long past). Bound on that residual,
# from the thaw's write to the unit's end stamp (measured 0.3-23 ms; the prototype 14-42 ms).
RESIDUAL_BOUND = 0.1 if UNLOADED else 0.3


def metrics(ip):
    """The sidecar's /metrics on the probe port: name -> sum over label sets."""
    status, text = http_request(ip, judge.PROBE_PORT, "GET", "/metrics", 2)
    assert status == 200, f"/metrics of {ip}: {status} {text}"
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            name = name.split("{", 1)[0]
            try:
                out[name] = out.get(name, 0.0) + float(value)
            except ValueError:
                pass
    return out


def last_sample(run, pod):
    ss = run.sampler.by_pod().get(pod, [])
    return ss[-1] if ss else None


def rejoined_as_follower(run, pod, rival, t_restore):
    """Waits until `pod` is back as a Ready follower that read the lock since `t_restore`: it
    says no, its metrics and the Lease name `rival` as holder (the rival's hash and term)."""
    ip, rival_ip = run.pod_ips[pod], run.pod_ips[rival]

    def ok():
        s = last_sample(run, pod)
        if s is None or s.send < t_restore or s.yes or not isinstance(s.status, int):
            return False
        m, r = metrics(ip), metrics(rival_ip)
        return (m.get("leasehold_is_leader") == 0 and m.get("leasehold_holder_is_me") == 0
                and m.get("leasehold_holder_hash") == r.get("leasehold_holder_hash")
                and m.get("leasehold_term") == r.get("leasehold_term")
                and r.get("leasehold_is_leader") == 1
                and pod in run.ready_pods() and judge.pod_of(lease(run)[0], [rival]) == rival)
    wait_until(ok, RENEW + LEASE + 30, 0.2, f"{pod} back as a follower of {rival}")


def restart_counts(run, pod):
    return {c: restarts(run, pod, c) for c in ("leasehold", "app")}


def frozen(pod, t_freeze, t_thaw):
    """The hole of a frozen pod: it answers nothing from the freeze; the sampler's question
    then times out (1 s) and the next goes out up to 2 x interval after the thaw."""
    return verdict.Exemption(pod, t_freeze - SAMPLE_INTERVAL,
                             t_thaw + 1.0 + 2 * SAMPLE_INTERVAL, "frozen")


def assert_holder_sequence(run, results, residual=()):
    """The lock's history from the watch is exactly the expected holders: the first leader,
    then each round's rival (a fault takes over from the leader directly, no release); each
    rival worked; under the gate no two pods' CMD runs intersect but the `residual` ones."""
    if run.variant == "gate":
        assert_gated_runs_disjoint(run, skip=residual)
    seen = run.holder_pods()
    hs = [h for i, h in enumerate(seen) if i == 0 or h != seen[i - 1]]
    want = [results[0]["leader"]] + [r["rival"] for r in results]
    assert hs == want, f"lock history {hs}, expected {want}"
    worked = gated_runs(run) if run.variant == "gate" else run.units()  # CMD runs, or units
    for r in results:
        assert worked.get(r["rival"]), f"{r['rival']} never worked"


def assert_takeover(track, slack=CLOCK_SLACK, late_slack=0.0):
    """The rival took the lock lease-duration after the last renew the apiserver stored (less
    `slack`, how far the record's times may lie), and no later than TAKEOVER_MAX + `late_slack`.
    Returns it (s)."""
    takeover = track.taken[1] - track.last_renew
    assert LEASE - slack <= takeover <= TAKEOVER_MAX + late_slack, \
        f"takeover {takeover:.3f}s after the last renew, expected [{LEASE}, {TAKEOVER_MAX:.1f}]"
    return takeover


def wait_fresh_units(run, pod, n=3):
    n0 = len(run.units().get(pod, []))
    run.wait_units(pod, n0 + n)


def fault_run(s, variant, **kw):
    """A Run of `variant` at the test timings (and, under the gate, GATE_ENV's stop-grace)."""
    kw.setdefault("configmap", TIMINGS)
    return s.run(variant, app_env=GATE_ENV if variant == "gate" else None, **kw)


def judged_rounds(s, run, one, rounds=None, residual=()):
    """one(run, i, results) for each round (NODE_REPEAT, or `rounds`), the fixture's health checked
    after each; then the judge over the whole run, outside the exemptions one() returned and
    the `residual` units. Returns the results."""
    t0, results, holes = time.time(), [], []
    for i in range(rounds or repeat()):
        holes += one(run, i, results)
        s.node.health()
    run.judge(t0 + 1, time.time() - 1, holes, residual=residual)
    return results


def settled_work(run, leader):
    """Waits until `leader` works: under the gate its CMD alone runs (returns the number of its
    runs so far), else it did 3 more units (returns None)."""
    if run.variant != "gate":
        return wait_fresh_units(run, leader)
    wait_cmd_on(run, leader)
    return len(gated_runs(run)[leader])


# ------------------------------------------------------------------ whole-pod freeze

def freezer_state(cg):
    return (cg / "freezer.state").read_text().strip()


def container_freezer(run, pod, container):
    """The container's cgroup inside its pod's (cgroupfs: pod<uid>/<container id>)."""
    cg = pod_freezer(run, pod) / container_id(run, pod, container)[0]
    assert cg.is_dir(), f"no freezer cgroup {cg}"
    return cg


def hold_frozen(run, leader, alone, also=lambda: True, what="takeover"):
    """Freezes `leader`'s whole pod (v1 freezer: app and sidecar stop together), or with `alone`
    its sidecar container only, until a rival took over and also() holds (never past
    FREEZE_MAX), then thaws. Returns track (the Lease's), t_freeze, t_thaw0 and t_thaw (before
    and after the thaw's write), polls (of the freezer state) and also (its last value)."""
    cg = container_freezer(run, leader, "leasehold") if alone else pod_freezer(run, leader)
    assert freezer_state(cg) == "THAWED", f"{cg} is {freezer_state(cg)} before the freeze"
    f = SimpleNamespace(track=LeaseTracker(run, leader), polls=0, also=None)
    assert f.track.last_renew is not None, "the Lease does not name the leader before the freeze"
    f.t_freeze = time.time()
    (cg / "freezer.state").write_text("FROZEN")
    try:
        wait_until(lambda: freezer_state(cg) == "FROZEN", 10, 0.01, f"{cg} FROZEN")
        t_frozen = time.time()
        while True:
            # Something (runc, the kubelet) must not undo the fault while it is applied.
            st = freezer_state(cg)
            assert st == "FROZEN", f"{cg} became {st} {time.time() - t_frozen:.2f}s into the freeze"
            f.polls += 1
            f.track.poll()
            held = time.time() - t_frozen
            f.also = also()
            if f.track.taken and f.also and held >= LEASE + 1.0:
                break
            assert held < FREEZE_MAX, f"no {what} in {held:.1f}s of freeze"
            time.sleep(0.1)
    finally:
        f.t_thaw0 = time.time()
        (cg / "freezer.state").write_text("THAWED")
        f.t_thaw = time.time()
    wait_until(lambda: freezer_state(cg) == "THAWED", 10, 0.01, f"{cg} THAWED")
    return f


def freeze_round(run, results, alone=False):
    """The leader frozen (hold_frozen), then thawed: it comes back as a follower, its app began
    nothing past its last validUntil."""
    leader = run.single_leader()
    wait_fresh_units(run, leader)
    rc0 = restart_counts(run, leader)
    f = hold_frozen(run, leader, alone)
    track, t_freeze, t_thaw0, t_thaw, polls = f.track, f.t_freeze, f.t_thaw0, f.t_thaw, f.polls
    rival = judge.pod_of(track.taken[0], list(run.pod_ips))
    nxt = run.next_yes(t_freeze, leader, 10, "the rival's first yes")
    assert nxt.pod == rival, f"first yes from {nxt.pod}, Lease names {rival}"
    rejoined_as_follower(run, leader, rival, t_thaw)
    wait_fresh_units(run, rival)

    # The sidecar answers no "yes" after the thaw (an answer received after the thaw was
    # produced after it: the sampler is not frozen).
    late = [s for s in run.sampler.by_pod()[leader] if s.yes and s.recv >= t_thaw0]
    assert not late, f"{leader} said yes after the thaw: {[(s.send, s.recv) for s in late[:3]]}"
    # The app's last validUntil passed during the freeze; a unit begun before it may end after
    # the thaw (RESIDUAL_BOUND).
    units = [u for u in run.units()[leader] if u["end"] >= t_freeze - 1]
    v_lo, v_hi = given(run.units()[leader], t_freeze)
    assert v_hi < t_thaw0, f"the freeze ended before the last validUntil ({v_hi - t_thaw0:.3f}s)"
    begun = [u for u in units if u["start"] > v_lo]
    assert not begun, f"{leader} began units after its last validUntil: {begun[:3]}"
    after = [u for u in units if u["ans"] >= t_thaw0]
    assert not after, f"{leader} worked on an answer given after the thaw: {after[:3]}"
    spanning = [u for u in units if u["start"] < t_thaw0 < u["end"]]
    assert len(spanning) <= (0 if alone else 1), f"{len(spanning)} units span the thaw: {spanning}"
    # From the thaw's write (upper estimate; the write itself takes up to a few ms).
    residual = spanning[0]["end"] - t_thaw0 if spanning else None
    if spanning:
        assert spanning[0]["start"] <= t_freeze + 0.5, f"unit begun during the freeze: {spanning}"
        assert residual <= RESIDUAL_BOUND, \
            f"the unit begun before the freeze ran {residual * 1000:.0f} ms after the thaw " \
            f"> {RESIDUAL_BOUND * 1000:.0f} ms"
    takeover = assert_takeover(track)
    assert nxt.send >= v_lo, f"the rival's yes came {v_lo - nxt.send:.3f}s before validUntil"
    # Freeze shorter than the liveness window: nothing restarted.
    assert restart_counts(run, leader) == rc0, f"{leader} restarted: {rc0} -> {restart_counts(run, leader)}"
    r = {"leader": leader, "rival": rival, "freeze_s": round(t_thaw0 - t_freeze, 3),
         "freezer_polls": polls, "takeover_after_renew_s": round(takeover, 3),
         "rival_yes_after_validuntil_s": round(nxt.send - v_lo, 3),
         "residual_ms": None if residual is None else round(residual * 1000, 1)}
    log(f"freeze: {json.dumps(r)}")
    results.append(r)
    return frozen(leader, t_freeze, t_thaw), (leader, spanning[0]["start"]) if spanning else None


# ------------------------------------------------------------------ whole-pod freeze, gate

# After the thaw the gate's timer finds validUntil long past and stops CMD at once (stop signal,
# then SIGKILL: kill_at = validUntil - margin is past). Bound from the thaw's write to the CMD's
# end (the gate's "CMD exited" line as containerd stamped it: an upper estimate).
GATE_KILL_BOUND = 0.2 if UNLOADED else 0.5


def gate_freeze_round(run, results, alone=False):
    """The whole pod frozen (the gate with it: its timer fires only after the thaw), or with
    `alone` the sidecar container only (the gate runs on: its timer stops CMD before
    validUntil - margin, during the freeze)."""
    leader = run.single_leader()
    n_runs = settled_work(run, leader)
    rc0 = restart_counts(run, leader)
    f = hold_frozen(run, leader, alone, lambda: [p for p in running_cmd(run) if p != leader],
                    "takeover and rival CMD")
    track, t_freeze, t_thaw0, rival_cmd = f.track, f.t_freeze, f.t_thaw0, f.also
    rival = judge.pod_of(track.taken[0], list(run.pod_ips))
    assert rival_cmd == [rival], f"CMD started on {rival_cmd}, the Lease names {rival}"
    wait_until(lambda: leader not in running_cmd(run), 10, 0.02, f"CMD stopped on {leader}")
    rejoined_as_follower(run, leader, rival, t_thaw0)
    runs = gated_runs(run)
    old = runs[leader][n_runs - 1]
    kill_s = old[1] - t_thaw0
    if alone:
        # validUntil <= the last renew the apiserver stored + renew-deadline
        verdict.stopped_before(f"CMD of {leader}", old[1], track.last_renew + RENEW, GATE_MARGIN)
        assert old[1] < runs[rival][-1][0], "CMD of the frozen sidecar's pod outlived the rival's start"
    else:
        assert 0 <= kill_s <= GATE_KILL_BOUND, \
            f"the thawed gate stopped CMD {kill_s * 1000:.0f} ms after the thaw " \
            f"> {GATE_KILL_BOUND * 1000:.0f} ms"
    assert len(runs[leader]) == n_runs, f"CMD started again on {leader} after the thaw"
    late = [s for s in run.sampler.by_pod()[leader] if s.yes and s.recv >= t_thaw0]
    assert not late, f"{leader} said yes after the thaw"
    # The rival's CMD began while the old one was frozen: that wall-clock intersection is the
    # residual, bounded above; other gated runs never intersect.
    overlap = old[1] - runs[rival][-1][0]
    assert restart_counts(run, leader) == rc0, f"{leader} restarted"
    takeover = assert_takeover(track)
    r = {"leader": leader, "rival": rival, "freeze_s": round(t_thaw0 - t_freeze, 3),
         "cmd_stopped_after_thaw_ms": round(kill_s * 1000, 1),
         "cmd_stopped_before_validuntil_s": round(track.last_renew + RENEW - old[1], 3),
         "takeover_after_renew_s": round(takeover, 3), "frozen_cmd_span_over_rival_s": round(overlap, 3)}
    log(f"gate freeze: {json.dumps(r)}")
    results.append(r)
    return frozen(leader, t_freeze, t_thaw0), None if alone else (leader, old[0])


def freeze(s, variant, alone):
    """NODE_REPEAT freezes of the leader's whole pod, or with `alone` of its sidecar alone
    (freeze_round, gate_freeze_round). The residual the round bounds (the unit, or the CMD run,
    begun before the freeze) is left out of the units' (or gated runs') rule."""
    gate = variant == "gate"
    with fault_run(s, variant) as run:
        residual = set()

        def one(run, i, results):
            hole, res = (gate_freeze_round if gate else freeze_round)(run, results, alone)
            residual.update([res] if res else [])
            return [hole]
        results = judged_rounds(s, run, one, residual=() if gate else residual)
        assert_holder_sequence(run, results, residual)
        if gate:
            log(f"{s.name}: CMD stopped after the thaw (ms) "
                f"{[r['cmd_stopped_after_thaw_ms'] for r in results]}")
        else:
            res = [r["residual_ms"] for r in results if r["residual_ms"] is not None]
            log(f"{s.name}: {len(results)} rounds; residual (ms) {res}; takeover "
                f"after last renew (s) {[r['takeover_after_renew_s'] for r in results]}")


# ------------------------------------------------------------------ sidecar SIGKILLed

# SIGKILL of the sidecar container: it dies at once, and with it its listeners. Bound from the
# return of `ctr tasks kill` (the signal is delivered by then) to the last "yes" sent: the exit
# itself (closing sockets) on a loaded machine.
ANSWERS_STOP_BOUND = 0.05 if UNLOADED else 0.2
# The gate's CMD: the gate sees its sidecar's watch stream end and stops CMD (measured 0.17-0.23 s
# in e2e_node_gate_handovers); bound from the kill to CMD's end.
CMD_STOP_BOUND = 0.5 if UNLOADED else 1.0


def sidecar_kill_round(run, i, results):
    """The leader's sidecar SIGKILLed: a rival takes over, the kubelet restarts the sidecar and
    it rejoins as a follower. Returns its hole, until then."""
    leader = run.single_leader()
    n_runs = settled_work(run, leader)
    r0 = restarts(run, leader, "leasehold")
    track = LeaseTracker(run, leader)
    t_kill = time.time()
    signal_container(run, leader, "leasehold", "SIGKILL")
    t_killed = time.time()
    wait_until(lambda: track.poll(), LEASE + 10, 0.1, "a rival's takeover")
    rival = judge.pod_of(track.taken[0], list(run.pod_ips))
    nxt = run.next_yes(t_kill, leader, 10, "the rival's first yes")
    assert nxt.pod == rival, f"first yes from {nxt.pod}, Lease names {rival}"
    # The kubelet's crash-loop back-off doubles from 10 s per restart of one
    # container (5 replicas keep it at <= 20 s over 10 rounds).
    wait_until(lambda: restarts(run, leader, "leasehold") > r0, 150, 0.2,
               "the kubelet's restart of the sidecar")
    rejoined_as_follower(run, leader, rival, t_killed)
    hole = verdict.Exemption(leader, t_kill, time.time(),
                             "sidecar SIGKILLed, until back as a follower")
    ss = run.sampler.by_pod()[leader]
    yes = [x for x in ss if x.yes and x.send >= t_kill - 5]
    last_yes = max(x.send for x in yes) if yes else None
    assert last_yes is None or last_yes <= t_killed + ANSWERS_STOP_BOUND, \
        f"{leader} said yes {last_yes - t_killed:.3f}s after its sidecar's SIGKILL"
    r = {"leader": leader, "rival": rival,
         "kill_s": round(t_killed - t_kill, 3),
         "last_yes_after_kill_ms":
             None if last_yes is None else round((last_yes - t_killed) * 1000, 1),
         "takeover_after_renew_s": round(assert_takeover(track), 3)}
    if run.variant == "gate":
        wait_cmd_on(run, rival)
        end = gated_runs(run)[leader][n_runs - 1][1]
        r["cmd_stopped_after_kill_ms"] = round((end - t_kill) * 1000, 1)
        assert end - t_kill <= CMD_STOP_BOUND, \
            f"CMD ran {end - t_kill:.3f}s after its sidecar's SIGKILL > {CMD_STOP_BOUND}s"
    else:
        v_lo, _ = given(run.units()[leader], t_kill)
        late = [u for u in run.units()[leader] if t_killed < u["start"] and u["ask"] > t_killed]
        assert not late, f"{leader}'s app worked on a yes asked after the SIGKILL: {late[:3]}"
        assert nxt.send >= v_lo, f"the rival's yes {v_lo - nxt.send:.3f}s before validUntil"
        wait_fresh_units(run, rival)
    results.append(r)
    log(f"sidecar kill: {json.dumps(r)}")
    return [hole]


def sidecar_kill(s, variant):
    with fault_run(s, variant, replicas=5) as run:
        assert_holder_sequence(run, judged_rounds(s, run, sidecar_kill_round))


# ------------------------------------------------------------------ kubelet stopped

def node_component(node, action, comp):
    """node.sh stop|restart COMPONENT, at the priority the node runs at (this process runs 5
    higher: as_instrument)."""
    r = node.node_sh(action, comp, str(node.dir), check=False, nice=5)
    assert r.returncode == 0, f"node.sh {action} {comp}: {r.stdout}{r.stderr}"


STAMPED = re.compile(r"^\d{4}-\d\d-\d\dT")


def refollow(run, timeout=60):
    """`kubectl logs -f` streams through the kubelet: after its restart, every follower whose
    stream ended (or the apiserver refused while the kubelet came up) goes on from its last line."""
    deadline, quiet = time.time() + timeout, 0
    while quiet < 2:
        assert time.time() < deadline, "log streams do not stay up after the kubelet's restart"
        ended = [k for k, f in run.followers.items() if f.proc.poll() is not None]
        for key in ended:
            f = run.followers[key]
            f.thread.join(5)
            f.lines = [ln for ln in f.lines if STAMPED.match(ln)]  # not kubectl's errors
            run.followers[key] = LogFollower(run.node, run.ns, key[0], key[1], before=f)
        quiet = 0 if ended else quiet + 1
        time.sleep(1)


def shims():
    """pids of the containerd shims (every one on this machine is the node's)."""
    out = set()
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and (d / "comm").read_text().startswith("containerd-shim"):
                out.add(int(d.name))
        except OSError:
            pass
    return out


def outage_round(run, comp, hold, results):
    """`comp` stopped for `hold` s, then started again: the same leader and pods, no restart."""
    leader = run.single_leader()
    wait_fresh_units(run, leader)
    pods = run.ready_pods()
    rc0 = {p: restart_counts(run, p) for p in pods}
    shims0 = shims()
    assert len(shims0) >= len(pods), f"{len(shims0)} shims for {len(pods)} pods"
    t_stop = time.time()
    try:
        node_component(run.node, "stop", comp)
        down = time.time()
        while time.time() - down < hold:
            assert run.sampler.leaders_now(1.0) == [leader], \
                f"leader changed while {comp} was down: {run.sampler.leaders_now(1.0)}"
            time.sleep(0.1)
    finally:
        node_component(run.node, "restart", comp)
    t_up = time.time()
    assert shims() >= shims0, f"shims gone: {sorted(shims0 - shims())}"
    refollow(run)
    wait_until(lambda: sorted(run.ready_pods()) == sorted(pods), 60, 0.2,
               f"the same pods Ready after {comp}'s restart")
    wait_fresh_units(run, leader)
    assert run.single_leader() == leader, "the leader changed"
    rc1 = {p: restart_counts(run, p) for p in pods}
    assert rc1 == rc0, f"containers restarted: {rc0} -> {rc1}"
    # (then judged_rounds' health check: node Ready, rules, host sysctls and ip_forward)
    results.append({"leader": leader, f"{comp}_down_s": round(t_up - t_stop, 2)})
    log(f"{comp} restart: {json.dumps(results[-1])}")
    return []


def component_outage(s, comp, hold):
    """`comp` (kubelet or containerd) stopped for `hold` s, then started again through the node's
    launcher (node.sh, into the node's mount namespace): the pods' processes run on (their
    shims survive), so no change of leader, no container restart, no overlap, and the host's
    sysctls unchanged (a restarted kubelet writes its six into the node's bind mounts)."""
    with fault_run(s, "native") as run:
        results = judged_rounds(s, run, lambda run, i, rs: outage_round(run, comp, hold, rs))
        seen = run.holder_pods()
        assert seen == [results[0]["leader"]], f"lock history {seen}: a change of leader"


# ------------------------------------------------------------------ apiserver restarted

CP_SH = cluster.REPO / "e2e" / "controlplane" / "controlplane.sh"
# fault_apiserver_short's timings (why: e2e.lib.timings.LONG_RENEW). A restart under load may
# exceed the shipped renew-deadline: the test then fails as vacuous.
SHORT_TIMINGS = DEFAULTS if SHIPPED else LONG_RENEW


def controlplane(node, *args):
    """controlplane.sh on the node's control plane, from this process (inside the node's
    network namespace, where the apiserver binds the node IP)."""
    env = dict(os.environ, CONTROLPLANE_BIN=node.cp_env["BIN_DIR"],
               CONTROLPLANE_HOST=node.cp_env["APISERVER_HOST"])
    r = subprocess.run(["bash", str(CP_SH), *args], env=env, capture_output=True, text=True,
                       timeout=120, preexec_fn=lambda: os.nice(5))  # the apiserver: back at 0
    assert r.returncode == 0, f"controlplane.sh {' '.join(args)}: {r.stdout}{r.stderr}"


def apiserver_round(run, kind, timings, results):
    """The apiserver SIGKILLed and started again: see apiserver_restart."""
    _, renew_s, retry_s = timings
    leader = run.single_leader()
    wait_fresh_units(run, leader)
    h0 = run.holder_pods()
    track = LeaseTracker(run, leader)
    cp = str(run.node.dir / "cp")
    t_kill = time.time()
    try:
        controlplane(run.node, "stop-apiserver", cp, "--kill")
        if kind == "long":  # until the leader stepped down, and 1 s more
            wait_until(lambda: (lambda x: x and not x.yes and x.send > t_kill)(
                last_sample(run, leader)), renew_s + 10, 0.05, "the leader's step-down")
            time.sleep(1.0)
    finally:
        t_start = time.time()
        controlplane(run.node, "start-apiserver", cp)
    t_up = time.time()
    outage = t_up - t_kill
    refollow(run)
    run.wait_ready(run.replicas, timeout=60)
    ss = run.sampler.by_pod()[leader]
    r = {"leader": leader, "outage_s": round(outage, 2)}
    if kind == "short":
        assert outage < renew_s - retry_s, \
            f"the restart took {outage:.1f}s >= renew-deadline - retry-period: vacuous"
        wait_fresh_units(run, leader)
        assert run.single_leader() == leader, "the leader changed"
        assert run.holder_pods() == h0, f"lock history changed: {h0} -> {run.holder_pods()}"
        no = [x for x in ss if x.send > t_kill and not x.yes]
        assert not no, f"{leader} said no during a short outage: {len(no)} samples"
        r["rival"] = leader
    else:
        v_lo, v_hi = given(run.units()[leader], t_start)
        # (the old leader may well lead again after the recovery: not counted)
        yes = [x for x in ss if x.yes and t_kill - 5 <= x.send < t_start]
        last_yes = max(yes, key=lambda x: x.send)
        assert_asked_before(last_yes, v_hi, leader)
        assert last_yes.send <= track.last_renew + renew_s + CLOCK_SLACK, \
            "a yes later than renew-deadline after the last renew"
        nxt = wait_until(lambda: run.sampler.first_yes_after(last_yes.recv + 0.001), 60,
                         0.05, "a leader after the recovery")
        assert nxt.send >= t_start, f"a yes during the outage from {nxt.pod}"
        assert nxt.send >= v_lo, "a yes before the old leader's validUntil"
        wait_fresh_units(run, nxt.pod)
        r.update(rival=nxt.pod,
                 step_down_before_validuntil_ms=round((v_lo - last_yes.recv) * 1000, 1),
                 yes_after_restart_s=round(nxt.recv - t_up, 3))
    results.append(r)
    log(f"apiserver {kind}: {json.dumps(r)}")
    return []


def apiserver_restart(s, kind):
    """short: the apiserver SIGKILLed and started again within renew-deadline: no change of
    leader. long: down until the leader stepped down (past renew-deadline): its last yes
    before its validUntil, then a takeover after the recovery, no overlap."""
    timings = SHORT_TIMINGS if kind == "short" else (LEASE, RENEW, RETRY)
    with fault_run(s, "native", configmap=Timings(*timings).env()) as run:
        results = judged_rounds(s, run, lambda run, i, rs: apiserver_round(
            run, kind, timings, rs))
        if kind == "short":
            seen = run.holder_pods()
            assert seen == [results[0]["leader"]], f"lock history {seen}: a change of leader"


# ------------------------------------------------------------------ partition by port

PARTITION_MODES = {  # chain, match on the apiserver's ports (the pod's view: 10.0.0.1:443 DNATed)
    "out": [("OUTPUT", "--dport")],
    "in": [("INPUT", "--sport")],
    "both": [("OUTPUT", "--dport"), ("INPUT", "--sport")],
}
COMMENT = "leasehold-e2e-fault"


def partition_rules(run, mode):
    """iptables argument lists, by port only: the kubernetes Service's 443 and the apiserver's
    own port. Never by address: the node IP is also the source of the probes and the sampler."""
    ports = (443, int(run.node.cp_env["APISERVER_PORT"]))
    return [[chain, "-p", "tcp", match, str(p), "-m", "comment", "--comment", COMMENT, "-j", "DROP"]
            for chain, match in PARTITION_MODES[mode] for p in ports]


def in_pod_netns(pid, *args, check=True):
    return subprocess.run(["nsenter", "-t", str(pid), "-n", *args], capture_output=True, text=True,
                          check=check, timeout=30)


def fault_rules(pid):
    r = in_pod_netns(pid, "iptables", "-w", "-S", check=False)
    # A failed look is not "no rules": it would read as rules gone (or absent) while applied.
    assert r.returncode == 0, f"iptables -S in the netns of pid {pid}: {r.returncode} {r.stderr}"
    return [ln for ln in r.stdout.splitlines() if COMMENT in ln]


def sandbox_pid(cg):
    """The pod's pause process: it holds the pod's network namespace for the pod's whole life.
    Any other process of the pod may come and go (the gate's CMD, exec probes)."""
    for pid in pod_pids(cg):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "pause":
                return pid
        except OSError:
            pass
    raise AssertionError(f"no pause process in {cg}")


def probe_trouble(run, pod, since):
    """The kubelet's probe events for `pod` since `since` that say it could not reach the pod
    (a readiness 503 is an answer; a timeout or a refused connection is not) or a liveness
    failure."""
    ev = run.node.kjson("get", "events", "-n", run.ns, f"--field-selector=involvedObject.name={pod}")
    bad = []
    for e in ev["items"]:
        t = e.get("lastTimestamp") or e.get("eventTime") or ""
        if e.get("reason") != "Unhealthy" or not t or cluster_time(t[:19] + "Z") < int(since):
            continue
        msg = e.get("message", "")
        if "Liveness" in msg or any(w in msg for w in ("timeout", "deadline", "refused", "reset")):
            bad.append(msg)
    return bad


def assert_asked_before(last_yes, v_app, leader):
    """The sidecar's last yes was asked for before the validUntil the app was given (`given`'s
    high estimate: the answer's arrival + validForMs, which is truncated to the ms, so the true
    validUntil is at most 1 ms later). Its send, not its arrival: a yes answered just before
    validUntil may arrive after it (a CI run failed on 0.000 s) and broke no promise."""
    assert last_yes.send < v_app + 0.001, \
        f"{leader}'s last yes asked {last_yes.send - v_app:.3f}s after validUntil"


def partition_round(run, i, results):
    """One partition of the leader's pod (by port, the i-th of PARTITION_MODES). Native: the
    app's units and the sampler's answers against the validUntil the app was given. Gate: CMD,
    which the gate stops by its own timer (the sidecar still answers it on loopback, the cut is
    by port), before validUntil - margin, and before the rival's CMD starts."""
    gate = run.variant == "gate"
    mode = list(PARTITION_MODES)[i % len(PARTITION_MODES)]
    leader = run.single_leader()
    n_runs = settled_work(run, leader)
    rc0 = restart_counts(run, leader)
    cg = pod_freezer(run, leader)
    pid = sandbox_pid(cg)  # was pod_pids(cg)[0]: under the gate an exec probe's, gone mid-fault
    assert not fault_rules(pid), "fault rules in the pod's netns before the fault"
    track = LeaseTracker(run, leader)
    rules = partition_rules(run, mode)
    t_cut = time.time()
    added = []
    try:
        for r in rules:
            in_pod_netns(pid, "iptables", "-w", "-I", *r)
            added.append(r)
        assert len(fault_rules(pid)) == len(rules), fault_rules(pid)
        t_cut = time.time()
        while True:
            # The rules stay while the fault is applied.
            assert len(fault_rules(pid)) == len(rules), f"fault rules changed: {fault_rules(pid)}"
            track.poll()
            s = last_sample(run, leader)
            if track.taken and s and not s.yes and s.send > t_cut:
                nxt = run.sampler.first_yes_after(t_cut, exclude=(leader,))
                if nxt and (not gate or [p for p in running_cmd(run) if p != leader]):
                    break
            assert time.time() - t_cut < LEASE + RENEW + 30, "no takeover during the partition"
            time.sleep(0.1)
        time.sleep(1.0)  # a second more of partition with the rival leading: probes still pass
    finally:
        for r in reversed(added):
            in_pod_netns(pid, "iptables", "-w", "-D", *r, check=False)
        t_restore = time.time()
    assert not fault_rules(pid), f"fault rules left in the pod's netns: {fault_rules(pid)}"
    rival = judge.pod_of(track.taken[0], list(run.pod_ips))
    assert nxt.pod == rival, f"first yes from {nxt.pod}, Lease names {rival}"
    rejoined_as_follower(run, leader, rival, t_restore)
    if gate:
        wait_cmd_on(run, rival)
    else:
        wait_fresh_units(run, rival)

    # The last "yes" (sampler) and the app's last unit (or CMD) come before the last validUntil.
    ss = run.sampler.by_pod()[leader]
    yes = [s for s in ss if s.yes and s.send >= t_cut - 5]
    last_yes = max(yes, key=lambda s: s.send)
    assert not [s for s in ss if s.yes and t_cut + RENEW + 0.5 < s.send < t_restore], \
        "a yes later than renew-deadline into the partition"
    # validUntil = the send of the last renew that succeeded + renew-deadline; its record's
    # renewTime is stamped just before that send, and a renew whose answer the cut dropped
    # (stored, not known to the leader) is later still: validUntil <= v_hi.
    slack = record_slack(run)
    v_hi = track.last_renew + RENEW + slack
    r = {"mode": mode, "leader": leader, "rival": rival}
    if gate:
        runs = gated_runs(run)
        old = runs[leader][n_runs - 1]
        assert old[1] is not None, f"CMD still running on {leader}"
        rival_start = runs[rival][-1][0]
        # CMD gone by validUntil - margin (the gate's timer, docs/gate.md), before the rival led.
        verdict.stopped_before(f"CMD of {leader}", old[1], v_hi, GATE_MARGIN)
        assert old[1] < nxt.send and old[1] < rival_start, \
            f"CMD of {leader} ended {old[1] - min(nxt.send, rival_start):.3f}s after the rival led"
        assert len(runs[leader]) == n_runs, f"CMD started again on {leader} after the cut"
        assert last_yes.send < v_hi, f"{leader}'s last yes sent {last_yes.send - v_hi:.3f}s after validUntil"
        v_lo = v_hi - slack
        r.update(cmd_stopped_before_validuntil_ms=round((v_lo - old[1]) * 1000, 1),
                 cmd_stopped_before_rival_cmd_s=round(rival_start - old[1], 3))
    else:
        v_lo, v_app = given(run.units()[leader], t_restore)
        assert_asked_before(last_yes, v_app, leader)
        late = [u for u in run.units()[leader] if u["start"] > v_lo and u["start"] < t_restore]
        assert not late, f"{leader} began units after its last validUntil: {late[:3]}"
    # The cut is by port: the kubelet's probes and the sampler reached the pod throughout.
    during = [s for s in ss if t_cut <= s.send <= t_restore]
    errs = [s.status for s in during if not isinstance(s.status, int)]
    assert not errs, f"the sampler could not reach {leader} during the partition: {errs[:5]}"
    gap, n = verdict.sample_gaps(ss, t_cut, t_restore)
    assert gap <= 2 * SAMPLE_INTERVAL, f"{leader}: {gap * 1000:.0f} ms without a sample " \
        f"({verdict.gap_report({leader: during}, SAMPLE_INTERVAL)})"
    trouble = probe_trouble(run, leader, t_cut)
    assert not trouble, f"the kubelet's probes did not reach {leader}: {trouble[:3]}"
    assert restart_counts(run, leader) == rc0, f"{leader} restarted during the partition"
    takeover = assert_takeover(track, slack, slack)
    assert nxt.send >= v_lo, f"the rival's yes came {v_lo - nxt.send:.3f}s before validUntil"
    r.update(last_yes_before_validuntil_ms=round((v_lo - last_yes.recv) * 1000, 1),
             takeover_after_renew_s=round(takeover, 3), samples_during=n,
             partition_s=round(t_restore - t_cut, 2))
    log(f"partition: {json.dumps(r)}")
    results.append(r)
    return []


def partition(s, variant):
    with fault_run(s, variant) as run:
        results = judged_rounds(s, run, partition_round, max(repeat(), len(PARTITION_MODES)))
        if variant == "gate":
            log(f"partition (gate): CMD stopped before validUntil (ms) "
                f"{[r['cmd_stopped_before_validuntil_ms'] for r in results]}")
        assert_holder_sequence(run, results)
        log(f"partition ({variant}): last yes before validUntil (ms) "
            f"{[r['last_yes_before_validuntil_ms'] for r in results]}; takeover after last "
            f"renew (s) {[r['takeover_after_renew_s'] for r in results]}")


SCENARIOS = Registry()
for v in ("native", "gate"):
    SCENARIOS.bind(freeze, v, False, name=f"fault_pod_freeze_{v}")
    SCENARIOS.bind(freeze, v, True, name=f"fault_sidecar_freeze_{v}")
    SCENARIOS.bind(sidecar_kill, v, name=f"fault_sidecar_kill_{v}")
for v in ("native", "gate", "classic"):
    SCENARIOS.bind(partition, v, name=f"fault_partition_{v}")
for kind in ("short", "long"):
    SCENARIOS.bind(apiserver_restart, kind, name=f"fault_apiserver_{kind}")
for comp in ("kubelet", "containerd"):
    SCENARIOS.bind(component_outage, comp, LEASE + 2.0, name=f"fault_{comp}_restart")


def context(name):
    return NodeScenario(name, f"{name}: lease-duration {LEASE}s, renew-deadline {RENEW}s, "
                        f"retry-period {RETRY}s ({'shipped' if SHIPPED else 'test'} timings), "
                        f"NODE_REPEAT={repeat()}")


if __name__ == "__main__":
    as_instrument()
    sys.exit(SCENARIOS.main(context=context))
