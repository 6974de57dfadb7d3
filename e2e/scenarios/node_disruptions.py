"""On real pods (CTest label `node`): evictions, scaling, start and stop order with the leader
label, and the security contexts users run. How to run, and what every scenario samples and
follows: e2e/node/README.md. The timings, and the bounds shared with node_faults:
e2e/node/bounds.py; every other bound is a named constant below, derived from them.

`security` also judges the units from the CRI log files, read from the node's pod log directory
(CriLogs). No pod mounts anything from the host (Pod Security `restricted` forbids hostPath, and
no scenario of the tier needs it).
"""

import copy
import json
import sys
import threading
import time
import uuid
from pathlib import Path

import yaml

from e2e.lib.common import wait_until
from e2e.lib.runner import Registry
from e2e.node import cluster, judge
from e2e.node.bounds import (CLOCK_SLACK, FAILOVER_BOUND, GAP_BOUND, LEASE, MAX_LOCK_CHANGES,
                             RELEASE_TO_YES_BOUND, RENEW, RETRY, SHIPPED, TAKEOVER_MAX, TIMINGS,
                             UNLOADED)
from e2e.node.cluster import cluster_time, log
from e2e.node.handover import acquired_at, delete_leader_round, sidecar_messages, wait_gone
from e2e.node.lock_rules import assert_release_acquire
from e2e.node.pods import container_id, pod_freezer, pod_pids
from e2e.node.rollout import handovers, judge_rollouts, rolling_update
from e2e.node.run import NodeScenario, Run, as_instrument, repeat
from e2e.node.work import wait_working

APP_LABEL = "app.kubernetes.io/name"
APP_NAME = "leasehold-example"
LABEL_KEY = "leasehold.io/role"  # deploy/rbac/leader-label's LEASEHOLD_LEADER_LABEL
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
# The cost the shipped manifests give the leader's pod (deploy/base's LEASEHOLD_DELETION_COST).
SHIPPED_COST = next(line.split("=", 1)[1] for line in
                    (cluster.DEPLOY / "base" / "kustomization.yaml").read_text().split()
                    if line.startswith("LEASEHOLD_DELETION_COST="))

SCENARIOS = Registry()
scenario = SCENARIOS.add


def timings_note():
    return "shipped 15/10/2" if SHIPPED else f"test timings {LEASE:g}/{RENEW:g}/{RETRY:g}"


class WatchedRun(Run):
    """A Run that also keeps, from its pod watch, every pod's leader-label changes and the
    latest object seen (with the time of the event)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.labels, self.seen, self.seen_lock = {}, {}, threading.Lock()

    def _see(self, p):
        super()._see(p)
        t, name = time.time(), p["metadata"]["name"]
        v = (p["metadata"].get("labels") or {}).get(LABEL_KEY, "")
        with self.seen_lock:
            self.seen[name] = p
            ch = self.labels.setdefault(name, [])
            if not ch or ch[-1][1] != v:
                ch.append((t, v))

    def label_seen(self, pod, value, after):
        """When the watch first showed `pod` labelled `value` at or after `after`, else None."""
        with self.seen_lock:
            return next((t for t, v in self.labels.get(pod, []) if v == value and t >= after), None)

    def annotations_seen(self, pod, key, value):
        with self.seen_lock:
            p = self.seen.get(pod)
        return p is not None and (p["metadata"].get("annotations") or {}).get(key) == value


def summary(name, xs, unit="s"):
    xs = [x for x in xs if x is not None]
    if not xs:
        return f"{name}: none"
    return f"{name}: n={len(xs)} min {min(xs):.3f}{unit} max {max(xs):.3f}{unit}"


# ------------------------------------------------------------------ 3. evict

def evict_pod(node, ns, pod):
    """POST of the pod's eviction subresource (policy/v1): (HTTP status, message), 201 evicted."""
    try:
        node.api("POST", f"/api/v1/namespaces/{ns}/pods/{pod}/eviction",
                 body={"apiVersion": "policy/v1", "kind": "Eviction",
                       "metadata": {"name": pod, "namespace": ns}})
        return 201, "evicted"
    except cluster.ApiError as e:
        return e.status, str(e)


class EvictingNode(cluster.Node):
    """The node, whose delete_pod evicts through the Eviction API instead: delete_leader_round
    (e2e/node/handover.py) runs as is, through policy/v1."""

    def delete_pod(self, ns, pod):
        code, msg = evict_pod(self, ns, pod)
        assert code == 201, f"eviction of {pod}: {msg}"


def recommended_pdb():
    """The PodDisruptionBudget docs/install.md recommends (its one home: the YAML block after
    the `pdb-example` marker there), for the example's pods."""
    text = (cluster.REPO / "docs" / "install.md").read_text()
    block = text.split("<!-- pdb-example -->", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    pdb = yaml.safe_load(block)
    assert pdb["kind"] == "PodDisruptionBudget" and pdb["spec"].get("maxUnavailable") == 1, pdb
    return pdb


def pdb_allows(run, name, n):
    """Waits until the PDB's status is current and allows exactly n disruptions."""
    def ok():
        p = run.node.kjson("get", "pdb", "-n", run.ns, name)
        st = p.get("status", {})
        return (st.get("observedGeneration") == p["metadata"]["generation"]
                and st.get("disruptionsAllowed") == n and st.get("currentHealthy") == run.replicas)
    wait_until(ok, 60, 0.2, f"PodDisruptionBudget {name} allowing {n}")


def post_to_yes(r):
    """delete_leader_round's result -> the app's POST /release to the next pod's first yes."""
    return r["t_delete"] + r["failover_s"] - r["ack"]["ask"]


@scenario
def evict(s):
    """The leader's pod evicted through the Eviction API (policy/v1), NODE_REPEAT rounds:
    (a) without a PodDisruptionBudget: a graceful deletion, handed over as delete_leader_round
    asserts; (b) with the PodDisruptionBudget docs/install.md recommends: a follower evicted,
    then the leader's eviction refused (429) while the follower's replacement is not Ready (the
    leader keeps leading, the lock unchanged); once it is, the leader's eviction hands over as in
    (a). Once per run: a second PDB over the same pods makes every eviction fail (500; why the
    chart ships none). The node is not drained: a drain cordons the only node, and the
    replacements would stay Pending."""
    with s.run("native", cls=WatchedRun, node=EvictingNode(s.node.dir), configmap=TIMINGS) as run:
        t0 = time.time()
        log(f"evict: {timings_note()}")
        plain, with_pdb, refused = [], [], []
        for i in range(repeat()):
            # (a) no PodDisruptionBudget
            delete_leader_round(run, plain)
            # (b) the recommended PodDisruptionBudget, for this round only
            pdb = recommended_pdb()
            pdb_name = pdb["metadata"]["name"]
            assert pdb["spec"]["selector"]["matchLabels"] == {APP_LABEL: APP_NAME}, pdb
            run.node.kubectl("apply", "-n", run.ns, "-f", "-", input=json.dumps(pdb))
            pdb_allows(run, pdb_name, 1)
            leader = run.single_leader()
            follower = sorted(p for p in run.ready_pods() if p != leader)[0]
            code, msg = evict_pod(run.node, run.ns, follower)
            assert code == 201, f"eviction of follower {follower}: {msg}"
            h0, t_ref = len(run.watch.history), time.time()
            code, msg = evict_pod(run.node, run.ns, leader)
            assert code == 429, f"leader's eviction with a disruption in progress: {code} {msg}"
            log(f"evict #{i + 1}: follower {follower} evicted; the leader's eviction refused "
                f"({code}) while its replacement is not Ready")
            wait_gone(run, follower)
            run.wait_ready(run.replicas)
            pdb_allows(run, pdb_name, 1)
            assert run.single_leader() == leader, "the leader changed after a refused eviction"
            assert len(run.watch.history) == h0, \
                f"the lock changed after a refused eviction: {run.watch.history[h0:]}"
            mine = [s for s in run.sampler.by_pod()[leader] if s.send >= t_ref]
            assert mine and all(s.yes for s in mine), \
                f"{leader} said no after its eviction was refused"
            refused.append(time.time() - t_ref)
            delete_leader_round(run, with_pdb)
            run.node.kubectl("delete", "pdb", "-n", run.ns, pdb_name)
        # Two PDBs over one pod: the Eviction API cannot decide and refuses every eviction.
        for name in ("first", "second"):
            pdb = recommended_pdb()
            pdb["metadata"]["name"] = name
            run.node.kubectl("apply", "-n", run.ns, "-f", "-", input=json.dumps(pdb))
        leader = run.single_leader()
        code, msg = evict_pod(run.node, run.ns, leader)
        log(f"evict: with two PodDisruptionBudgets over the pods: {code} {msg[:160]}")
        assert code == 500 and "more than one" in msg, (code, msg)
        run.node.kubectl("delete", "pdb", "-n", run.ns, "first", "second")
        assert run.single_leader() == leader
        for what, rs in (("no PDB", plain), ("PDB maxUnavailable 1", with_pdb)):
            log(f"evict, {what}: " + summary("failover", [r["failover_s"] for r in rs]) + "; "
                + summary("app's POST /release -> next yes", [post_to_yes(r) for r in rs]))
        log("results: " + json.dumps({"plain": plain, "pdb": with_pdb,
                                      "refused_window_s": refused}))
        holders = judge_rollouts(run, t0)
        log(f"evict: lock history {holders}")
        fo = [r["failover_s"] for r in plain + with_pdb]
        assert max(fo) <= FAILOVER_BOUND, f"failover {max(fo):.3f}s > {FAILOVER_BOUND}s"


# ------------------------------------------------------------------ 4. scale

def set_costs(run, costs):
    """Annotates each pod with its DELETION_COST and waits until the pod watch saw them all (the
    ReplicaSet controller reads them from its own watch, as fast as this one)."""
    for pod, cost in costs.items():
        run.node.kubectl("annotate", "pod", "-n", run.ns, pod, f"{DELETION_COST}={cost}",
                         "--overwrite")
    wait_until(lambda: all(run.annotations_seen(p, DELETION_COST, str(c))
                           for p, c in costs.items()), 10, 0.05, "the deletion costs seen")


def scale_to(run, n):
    run.node.kubectl("scale", "deployment", run.deployment, "-n", run.ns, f"--replicas={n}")


def wait_product_costs(run, leader):
    """The state a scale-down counts from with the shipped --deletion-cost: the leader's pod
    annotated with the shipped cost, every other pod without one (their sidecars removed it)."""
    def costs():
        return {p["metadata"]["name"]: p["metadata"].get("annotations", {}).get(DELETION_COST)
                for p in run.node.pods(run.ns)}
    wait_until(lambda: costs() == {p: (SHIPPED_COST if p == leader else None) for p in costs()},
               10, 0.1, f"only {leader}'s pod to carry the deletion cost {SHIPPED_COST}")


def scale_round(run, keep, results):
    """3 -> 1 -> 3, the leader kept by the sidecars' own deletion costs (keep=True, the shipped
    default), or removed by costs the test sets (keep=False, a run with the cost switched off)."""
    what = "leader kept" if keep else "leader scaled away"
    leader = run.single_leader()
    wait_working(run, leader)
    old = sorted(run.ready_pods())
    others = sorted(p for p in old if p != leader)
    assert len(old) == 3 and len(others) == 2, old
    if keep:
        survivor, costs = leader, "the sidecars' own"
        wait_product_costs(run, leader)
    else:
        survivor, costs = others[1], {leader: -1000, others[0]: 0, others[1]: 1000}
        set_costs(run, costs)
    t_s = time.time()
    scale_to(run, 1)
    wait_until(lambda: run.pod_names() == {survivor}, 90, 0.2,
               f"only {survivor} left (the deletion costs {costs})")
    assert run.single_leader() == survivor
    wait_working(run, survivor)
    if keep:  # its label stays (the leader-label component is on)
        wait_until(lambda: run.label_seen(survivor, "leader", 0) is not None, 10, 0.1,
                   f"{survivor} labelled leader")
    t_down = time.time()
    changes = [h for _, h in run.lock_changes(t_s)]
    hs = handovers(run.sampler.by_pod(), t_s, t_down)
    r = {"what": what, "leader": leader, "survivor": survivor,
         "lock_changes": len(changes), "changes": changes,
         "gaps": [round(g, 3) for _, _, g, _ in hs], "down_s": round(t_down - t_s, 2)}
    if keep:
        assert not changes, f"{what}: the lock changed: {changes}"
        mine = [s for s in run.sampler.by_pod()[leader] if t_s <= s.send <= t_down]
        assert mine and all(s.yes for s in mine), f"{what}: the kept leader said no"
        assert not hs, f"{what}: a handover: {hs}"
        assert any(u["start"] >= t_s for u in run.units()[leader]), "the kept leader stopped work"
    else:
        assert hs, f"{what}: no handover seen by the sampler"
        assert_release_acquire(what, changes, survivor, old, run.replicas)
        worst = max(g for _, _, g, _ in hs)
        assert worst <= GAP_BOUND, f"{what}: leaderless gap {worst:.3f}s > {GAP_BOUND:.2f}s"
    # 1 -> 3: the new pods follow; nothing changes hands.
    t_u = time.time()
    scale_to(run, 3)
    run.wait_ready(3)
    assert run.single_leader() == survivor, "the leader changed at scale-up"
    assert not run.lock_changes(t_u), f"the lock changed at scale-up: {run.lock_changes(t_u)}"
    r["up_s"] = round(time.time() - t_u, 2)
    log(f"scale ({what}): {leader} -> {survivor}; lock changes {r['lock_changes']} "
        f"{r['changes']}; leaderless gaps {r['gaps']}; 3->1 {r['down_s']}s, 1->3 {r['up_s']}s")
    results.append(r)


@scenario
def scale(s):
    """Scale 3 -> 1 -> 3, NODE_REPEAT times each way; the ReplicaSet controller deletes the pods
    of lowest DELETION_COST first. (a) The shipped native variant, whose leader's sidecar gives
    its pod the cost (--deletion-cost): the leader is kept, the lock never changes, the leader
    never says no and goes on working; a `kubectl rollout restart` deletes its pod last
    (MAX_LOCK_CHANGES). (b) The cost switched off and the leader's pod made cheapest by the
    test: it is scaled away, through releases and acquisitions only, leaderless gap <=
    GAP_BOUND. Scaling back to 3 never changes the lock."""
    results, rollouts = [], []
    with s.run("native", cls=WatchedRun, configmap=TIMINGS) as run:
        t0 = time.time()
        log(f"scale: {timings_note()}")
        for i in range(repeat()):
            scale_round(run, True, results)
            wait_product_costs(run, run.single_leader())
            r = rolling_update(run, run.rollout_restart,
                               f"rollout with the leader's deletion cost #{i + 1}")
            assert r["lock_changes"] == MAX_LOCK_CHANGES, \
                f"rollout with the leader's pod deleted last: {r['lock_changes']} lock changes"
            rollouts.append(r)
        log(f"scale: lock history {judge_rollouts(run, t0)}")
    with s.run("native-nocost", cls=WatchedRun, configmap=TIMINGS) as run:
        t0 = time.time()
        for i in range(repeat()):
            scale_round(run, False, results)
        log(f"scale, cost off: lock history {judge_rollouts(run, t0)}")
    away = [g for r in results if r["what"] == "leader scaled away" for g in r["gaps"]]
    log("scale: " + summary("leaderless gap, leader scaled away", away))
    log("scale: " + summary("rollout with cost, leaderless gap",
                            [g for r in rollouts for g in r["gaps"]]))
    log("results: " + json.dumps({"scale": results, "rollouts": rollouts}))


# ------------------------------------------------------------------ 5. order

# A startupProbe's initialDelaySeconds given to the sidecar of the `delayed` pod: the kubelet
# starts `app` only once the probe passed, i.e. no earlier than the sidecar's start + this.
STARTUP_DELAY = 5
# How long a pod whose sidecar cannot start is watched: half the shipped startup window
# (startupProbe period 1 s x failureThreshold 30), longer than the kubelet's first crash-loop
# back-off (10 s) so a crashing sidecar has been restarted at least once.
NEGATIVE_WINDOW = 15.0
# A deleted pod's object is gone from the API within its terminationGracePeriodSeconds + this.
TERMINATION_SLACK = 2.0
# The leader label lags the election by one PATCH (the sidecar's announcer) and one pod-watch
# event: the chain of a release to the next "yes" (one request, one watch event), so its bound.
LABEL_LAG_BOUND = RELEASE_TO_YES_BOUND
# A leader sees a foreign holder at its next renew (one retry-period after the last) + a request.
STEPDOWN_BOUND = RETRY + (0.5 if UNLOADED else 1.0)
INTRUDER = "intruder-not-a-pod"


class GoneWatch:
    """Polls (one request) until `pod` is gone from the API; .gone is the time. Reads its
    terminationGracePeriodSeconds (.grace) first, while the pod exists."""

    def __init__(self, run, pod):
        self.pod, self.gone = pod, None
        self.grace = run.node.kjson("get", "pod", "-n", run.ns, pod)["spec"][
            "terminationGracePeriodSeconds"]
        self.thread = threading.Thread(target=self._poll, args=(run,), daemon=True)
        self.thread.start()

    def _poll(self, run):
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if self.pod not in run.pod_names():
                    self.gone = time.time()
                    return
            except Exception as e:  # the apiserver may be briefly busy
                log(f"gone watch: {e}")
            time.sleep(0.1)

    def wait(self, t_delete):
        """Seconds from the DELETE at `t_delete` until the pod was gone, asserted within its
        grace + TERMINATION_SLACK."""
        self.thread.join(130)
        assert self.gone, f"{self.pod} not gone"
        took = self.gone - t_delete
        assert took <= self.grace + TERMINATION_SLACK, \
            f"pod terminated {took:.3f}s after DELETE > {self.grace} + {TERMINATION_SLACK}s"
        return took


def label_lags(run, old, new, since, last_yes):
    """The leader label's lags at or after `since`, each asserted within LABEL_LAG_BOUND:
    `follower` on `old` after its last yes (sent at `last_yes`), `leader` on `new` after its
    sidecar's acquisition."""
    f_seen = wait_until(lambda: run.label_seen(old, "follower", since), 10, 0.05,
                        f"{old} labelled follower")
    acquired = acquired_at(run, new, since)
    l_seen = wait_until(lambda: run.label_seen(new, "leader", since), 10, 0.05,
                        f"{new} labelled leader")
    lags = {"label_follower_lag_s": f_seen - last_yes, "label_leader_lag_s": l_seen - acquired}
    for k, v in lags.items():
        assert v <= LABEL_LAG_BOUND, f"{k} {v:.3f}s > {LABEL_LAG_BOUND}s"
    return lags


def micro_time(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"


def write_foreign_holder(run):
    """Writes the Lease as a foreign elector would (holder INTRUDER, renewed now, lease-duration
    LEASE). Returns (sent, answered) times of the accepted PUT."""
    path = f"/apis/coordination.k8s.io/v1/namespaces/{run.ns}/leases/{run.lock_name}"
    for _ in range(10):
        obj = run.node.api("GET", path)
        t = time.time()
        obj["spec"].update(holderIdentity=INTRUDER, acquireTime=micro_time(t),
                           renewTime=micro_time(t), leaseDurationSeconds=int(LEASE),
                           leaseTransitions=obj["spec"].get("leaseTransitions", 0) + 1)
        try:
            run.node.api("PUT", path, body=obj)
            return t, time.time()
        except cluster.ApiError as e:
            if e.status != 409:
                raise
    raise AssertionError("the Lease kept changing under the test's PUT")


def stopped_saying_yes(run, pod, after):
    """(send stamp of pod's last yes, receive stamp of its first no) around its first answer
    other than yes to a request sent after `after`, or None yet: when its publication changed,
    which the leader label follows (the sidecar may log why later: measured up to 0.12 s)."""
    last_yes = None
    for s in run.sampler.by_pod().get(pod, []):
        if s.yes:
            last_yes = s
        elif s.send >= after:
            return (last_yes.send if last_yes else after), s.recv
    return None


def stepdown_round(run, out):
    """The leader loses the Lease to a foreign holder: it says no within STEPDOWN_BOUND, its
    label moves to follower (label_lags); a pod takes over after the foreign lease expired,
    within TAKEOVER_MAX."""
    leader = run.single_leader()
    run.wait_units(leader, 3)
    wait_until(lambda: run.label_seen(leader, "leader", 0), 10, 0.1, f"{leader} labelled leader")
    n_lost = len(sidecar_messages(run, leader, "lost lease"))
    t_sent, t_put = write_foreign_holder(run)
    last_yes, first_no = wait_until(lambda: stopped_saying_yes(run, leader, t_sent),
                                    STEPDOWN_BOUND + 10, 0.05, f"{leader} stepping down")
    wait_until(lambda: sidecar_messages(run, leader, "lost lease")[n_lost:], 10, 0.05,
               f"{leader}'s \"lost lease\" line")
    nxt = wait_until(lambda: run.sampler.first_yes_after(first_no), TAKEOVER_MAX + 10, 0.05,
                     "a pod's yes after the foreign lease")
    new = run.single_leader()
    assert new == nxt.pod, (new, nxt.pod)
    # Upper estimates: the first "no" received, the label seen after the last "yes" sent.
    r = {"leader": leader, "new": new, "stepdown_s": first_no - t_sent,
         "takeover_s": nxt.recv - t_sent, **label_lags(run, leader, new, t_sent, last_yes)}
    run.wait_units(new, 3)
    log(f"order/step-down: {leader} said no {r['stepdown_s']:.3f}s after the foreign "
        f"write, labelled follower {r['label_follower_lag_s']:.3f}s later; {new} said yes "
        f"{r['takeover_s']:.3f}s after the write, labelled leader {r['label_leader_lag_s']:.3f}s "
        f"after its acquisition")
    out.append(r)
    assert r["stepdown_s"] <= STEPDOWN_BOUND, f"step-down {r['stepdown_s']:.3f}s > {STEPDOWN_BOUND}s"
    assert nxt.recv >= t_sent + LEASE - CLOCK_SLACK, \
        f"a pod led {t_sent + LEASE - nxt.recv:.3f}s before the foreign lease expired"
    assert r["takeover_s"] <= TAKEOVER_MAX, f"takeover {r['takeover_s']:.3f}s > {TAKEOVER_MAX}s"


def release_round(run, out):
    """delete_leader_round (the graceful handover) with the leader label's lag after the release,
    and the whole pod's termination time."""
    leader = run.single_leader()
    gone = GoneWatch(run, leader)
    results = []
    delete_leader_round(run, results)
    r = results[-1]
    assert r["leader"] == leader
    # The sidecar stops saying yes at the acknowledgement, before its release request: the
    # label may move before the "released" line, so its lag counts from the last yes.
    last_yes, _ = wait_until(lambda: stopped_saying_yes(run, leader, r["t_delete"]), 10, 0.05,
                             f"{leader}'s last yes")
    new = r["next"]
    m = {"leader": leader, "new": new, "failover_s": r["failover_s"],
         "terminated_s": gone.wait(r["t_delete"]), "grace_s": gone.grace,
         **label_lags(run, leader, new, r["t_delete"], last_yes)}
    log(f"order/release: {leader} stopped saying yes, labelled follower "
        f"{m['label_follower_lag_s']:.3f}s later, gone {m['terminated_s']:.3f}s after DELETE "
        f"(grace {gone.grace}s); {new} labelled leader {m['label_leader_lag_s']:.3f}s after "
        f"its acquisition")
    out.append(m)


def follower_delete(run, out):
    leader = run.single_leader()
    pod = sorted(p for p in run.ready_pods() if p != leader)[0]
    gone = GoneWatch(run, pod)
    t = time.time()
    run.node.delete_pod(run.ns, pod)
    out.append(gone.wait(t))
    log(f"order: follower {pod} gone {out[-1]:.3f}s after DELETE (grace {gone.grace}s)")
    run.wait_ready(run.replicas)
    assert run.single_leader() == leader


def app_first_answer(text):
    """(LHSTART time, the HTTP code of the app's first question: 200 for a unit, the LHNO code
    otherwise, -1 for no answer)."""
    start = first = None
    for line in text.splitlines():
        if start is None and "LHSTART" in line:
            start = int(line.split("at=")[1].split()[0]) / 1e6
        elif "LHUNIT" in line:
            return start, 200
        elif "LHNO" in line:
            return start, int(line.split("code=")[1].split()[0])
    return start, first


def check_start_order(run):
    """Every pod of the shipped Deployment: `app` started (its LHSTART stamp) after the sidecar
    logged "starting" (its own stamp, ms, rounded down; logged before it listens), and the app's
    first question to the sidecar got an HTTP answer: the sidecar was serving when `app` began
    (the kubelet started `app` only after the startupProbe passed)."""
    out = {}
    for pod in sorted(run.pod_ips):
        app = run.followers.get((pod, "app"))
        starting = sidecar_messages(run, pod, "leasehold ")
        if not app or not starting:
            continue
        start, code = app_first_answer(app.text())
        if start is None or code is None:
            continue  # a pod just created
        assert code != -1, f"{pod}: app's first question to the sidecar got no answer"
        assert start >= starting[0], f"{pod}: app started {starting[0] - start:.3f}s before the sidecar"
        out[pod] = start - starting[0]
    assert out, "no pod with both containers' logs"
    return out


def negative_docs(node):
    """Three one-replica Deployments from the shipped native overlay, each a named exception:
    `delayed` (the sidecar's startupProbe initialDelaySeconds STARTUP_DELAY), `bad-flag` (an
    invalid LEASEHOLD_LEASE_DURATION: the sidecar exits 2 at start) and `probe-fails` (the
    startupProbe aimed at a port nothing serves: the sidecar runs, its probe never passes)."""
    docs = Run(node, "order", "native", replicas=1).docs()
    base = next(d for d in docs if d["kind"] == "Deployment")
    out = [d for d in docs if d["kind"] != "Deployment"]
    for kind in ("delayed", "bad-flag", "probe-fails"):
        d = copy.deepcopy(base)
        name = f"order-{kind}"
        d["metadata"]["name"] = name
        d["spec"]["selector"]["matchLabels"] = {APP_LABEL: name}
        d["spec"]["template"]["metadata"]["labels"] = {APP_LABEL: name}
        side = next(c for c in d["spec"]["template"]["spec"]["initContainers"]
                    if c["name"] == "leasehold")
        assert side.get("restartPolicy") == "Always" and "startupProbe" in side
        if kind == "delayed":
            side["startupProbe"]["initialDelaySeconds"] = STARTUP_DELAY
        elif kind == "bad-flag":
            side.setdefault("env", []).append({"name": "LEASEHOLD_LEASE_DURATION",
                                               "value": "not-a-duration"})
        else:
            side["startupProbe"]["httpGet"]["port"] = 8082
        out.append(d)
    return out


def statuses(node, ns, name):
    """(pod, the sidecar's status, app's status) of the one pod of Deployment `name`, or None
    before it exists."""
    ps = node.pods(ns, selector=f"{APP_LABEL}={name}")
    assert len(ps) <= 1, [p["metadata"]["name"] for p in ps]
    if not ps:
        return None
    st = ps[0]["status"]
    side = next((c for c in st.get("initContainerStatuses", []) if c["name"] == "leasehold"), {})
    app = next((c for c in st.get("containerStatuses", []) if c["name"] == "app"), {})
    return ps[0], side, app


def app_never_ran(app):
    return (app.get("restartCount", 0) == 0 and "running" not in app.get("state", {})
            and "terminated" not in app.get("state", {}) and not app.get("lastState"))


def order_negative(node):
    """The three Deployments of negative_docs in a namespace of their own: `delayed` starts `app`
    no earlier than STARTUP_DELAY after its sidecar, the others never (NEGATIVE_WINDOW)."""
    ns = f"order-{uuid.uuid4().hex[:6]}"
    try:
        cluster.apply(node, ns, negative_docs(node))
        t_apply = time.time()
        # delayed: app starts, but no earlier than the sidecar's start + STARTUP_DELAY
        pod, side, app = wait_until(
            lambda: (lambda s: s if s and "running" in s[2].get("state", {}) else None)(
                statuses(node, ns, "order-delayed")), 90, 0.5, "the delayed pod's app running")
        logs = node.kubectl("logs", "-n", ns, pod["metadata"]["name"], "-c", "app")
        start, code = app_first_answer(logs)
        side_started = cluster_time(side["state"]["running"]["startedAt"])  # whole seconds
        delayed = start - side_started
        log(f"order: with startupProbe initialDelaySeconds {STARTUP_DELAY}, app started "
            f"{delayed:.3f}s after the sidecar's start (status stamp, rounded down); its first "
            f"question answered {code}")
        assert delayed >= STARTUP_DELAY, f"app started {delayed:.3f}s after the sidecar"
        assert code not in (None, -1), f"the delayed app's first question unanswered: {code}"
        # bad-flag and probe-fails: app never starts during the window
        seen_running = False
        while time.time() < t_apply + NEGATIVE_WINDOW:
            for name in ("order-bad-flag", "order-probe-fails"):
                st = statuses(node, ns, name)
                if st is None:
                    continue
                _, side, app = st
                assert app_never_ran(app), f"{name}: app ran: {app}"
                if name == "order-probe-fails" and "running" in side.get("state", {}):
                    assert not side.get("started"), f"{name}: sidecar started: {side}"
                    seen_running = True
            time.sleep(0.5)

        def restarted():
            _, side, app = statuses(node, ns, "order-bad-flag")
            assert app_never_ran(app), f"order-bad-flag: app ran: {app}"
            term = (side.get("lastState") or {}).get("terminated") or {}
            return side.get("restartCount", 0) >= 1 and term.get("exitCode") == 2 and (side, app)
        # the kubelet's first crash-loop back-off is 10 s: under load the restart may come later
        side, app = wait_until(restarted, 60, 0.5, "the bad sidecar restarted after exiting 2")
        assert app["state"].get("waiting", {}).get("reason") == "PodInitializing", app
        bad_restarts = side.get("restartCount")
        _, side, app = statuses(node, ns, "order-probe-fails")
        assert seen_running and app_never_ran(app), (side, app)
        log(f"order: a sidecar exiting 2 (restarted {bad_restarts}x, {time.time() - t_apply:.0f}s"
            f" after the apply) and a running sidecar whose startupProbe never passes kept `app` "
            f"from starting (PodInitializing; watched every 0.5 s)")
        return delayed
    finally:
        node.kubectl("delete", "namespace", ns, "--wait=true", "--timeout=120s", check=False,
                     timeout=180)


@scenario
def order(s):
    """Start and stop order, the native sidecar (overlays/native-sidecar + rbac/leader-label):
    - start: check_start_order in every pod, and order_negative's three named exceptions;
    - stop: a deleted pod (leader or follower) is gone within its grace + TERMINATION_SLACK;
    - the leader label follows the election (label_lags) at the leader's release (pod
      deletion, release_round) and at its step-down (stepdown_round).
    NODE_REPEAT rounds of step-down, release and follower deletion."""
    with s.run("native", cls=WatchedRun, configmap=TIMINGS) as run:
        t0 = time.time()
        log(f"order: {timings_note()}")
        delayed = order_negative(s.node)
        check_start_order(run)
        stepdowns, releases, followers = [], [], []
        for i in range(repeat()):
            stepdown_round(run, stepdowns)
            release_round(run, releases)
            follower_delete(run, followers)
        starts = list(check_start_order(run).values())
        log("order: " + summary("app's first line after the sidecar's", starts))
        log(f"order: delayed start {delayed:.3f}s (bound >= {STARTUP_DELAY}s)")
        for k in ("stepdown_s", "takeover_s", "label_follower_lag_s", "label_leader_lag_s"):
            log("order/step-down: " + summary(k, [r[k] for r in stepdowns]))
        for k in ("failover_s", "label_follower_lag_s", "label_leader_lag_s", "terminated_s"):
            log("order/release: " + summary(k, [r[k] for r in releases]))
        log("order: " + summary("follower terminated", followers))
        log("results: " + json.dumps({"stepdowns": stepdowns, "releases": releases,
                                      "followers": followers, "delayed": delayed,
                                      "starts": starts}))
        judge_rollouts(run, t0, foreign=(INTRUDER,))


# ------------------------------------------------------------------ 6. security

# The kubelet's pod log directory (/var/log/pods in the node's mount namespace), bind-mounted
# from here (e2e/node/node.sh, NODE_PATHS): <ns>_<pod>_<uid>/<container>/<restart>.log, CRI
# format: "<RFC 3339, ns> <stream> <P|F> <text>".
POD_LOGS = Path("/var/lib/leasehold-node/paths/var-log-pods")
# OpenShift's restricted SCC: a uid from the namespace's range, also fsGroup, no runAsGroup.
OPENSHIFT_UID = 1000680000
IMAGE_UID = 65532  # the images' USER (e2e/node/images.py, the Dockerfile)
PSA = "restricted"


class CriLogs:
    """Keeps each (pod, container)'s lines of one namespace's CRI log files (POD_LOGS). Each
    file is kept open from when it is first seen: the kubelet removes a pod's log directory as
    soon as the pod is gone, and an open file is still read to its end (a deleted leader's last
    units were lost when each poll opened the files anew)."""

    def __init__(self, ns):
        self.ns, self.files, self.lines = ns, {}, {}
        self.partial, self.lock, self.stopping = {}, threading.Lock(), threading.Event()
        self.read_lock = threading.Lock()
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()

    def _poll(self):
        while not self.stopping.is_set():
            self.read()
            self.stopping.wait(0.2)

    def read(self):
        """Reads what was added since the last read (from the poller or a caller)."""
        with self.read_lock:
            for f in sorted(POD_LOGS.glob(f"{self.ns}_*/*/*.log")):
                if f not in self.files:
                    pod_dir = f.parent.parent.name  # NS_POD_UID
                    key = (pod_dir[len(self.ns) + 1:pod_dir.rindex("_")], f.parent.name)
                    try:
                        self.files[f] = [open(f, "rb"), key, b""]
                    except OSError:
                        continue
            for f, entry in list(self.files.items()):
                fh, key, rest = entry
                data = rest + fh.read()
                cut = data.rfind(b"\n") + 1
                entry[2] = data[cut:]
                if not cut:
                    continue
                with self.lock:
                    for raw in data[:cut].decode(errors="replace").splitlines():
                        stamp, stream, tag, text = (raw.split(" ", 3) + ["", "", ""])[:4]
                        part = self.partial.pop((key, stream), "") + text
                        if tag == "P":
                            self.partial[(key, stream)] = part
                            continue
                        self.lines.setdefault(key, []).append((cluster_time(stamp), part))

    def text(self, pod, container):
        with self.lock:
            return "\n".join(t for _, t in self.lines.get((pod, container), []))

    def pods(self):
        with self.lock:
            return sorted({p for p, _ in self.lines})

    def stop(self):
        self.stopping.set()
        self.thread.join(5)
        self.read()
        for fh, _, _ in self.files.values():
            fh.close()


class RestrictedRun(Run):
    """A Run in a namespace that enforces Pod Security `restricted` (enforce, warn and audit),
    the apply's warnings kept (self.warnings), `pod_security` merged into the pod's
    securityContext after the shipped check (a named exception), the units read by CriLogs."""

    def __init__(self, node, name, variant="native", pod_security=None, **kw):
        super().__init__(node, name, variant, **kw)
        self.ns = f"restricted-{uuid.uuid4().hex[:6]}"
        self.pod_security, self.warnings = pod_security or {}, None
        self.cri = CriLogs(self.ns)

    def deploy(self):
        docs = self.docs()
        dep = next(d for d in docs if d["kind"] == "Deployment")
        dep["spec"]["template"]["spec"]["securityContext"].update(self.pod_security)
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.ns, "labels": {
            f"pod-security.kubernetes.io/{m}": PSA for m in ("enforce", "warn", "audit")}}}
        self.node.kubectl("apply", "-f", "-", input=json.dumps(ns))
        self.warnings, _ = kubectl_warnings(self.node, "apply", "-n", self.ns, "-f", "-",
                                            input=yaml.safe_dump_all(docs))
        return dep["metadata"]["name"]

    def units(self):
        return {p: judge.parse_units(self.cri.text(p, "app")) for p in self.cri.pods()}

    def stop(self, failed):
        self.cri.stop()
        super().stop(failed)


def kubectl_warnings(node, *args, input=None, check=True):
    """Runs kubectl; returns the apiserver's warnings (stderr lines "Warning: ...")."""
    r = node.kubectl(*args, input=input, check=check, result=True)
    return [line for line in r.stderr.splitlines() if line.startswith("Warning")], r


def proc_status(pid):
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        k, _, v = line.partition(":")
        out[k] = v.split()
    return out


def root_read_only(pid):
    for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines():
        f = line.split()
        if f[4] == "/":
            return "ro" in f[5].split(",")
    raise AssertionError(f"no / mount for pid {pid}")


def check_processes(run, pod, uid, fs_group=None):
    """The processes of each container of `pod`, read from the node's /proc: uid `uid`
    (real, effective, saved, fs), no capabilities (permitted, effective, bounding, ambient),
    no_new_privs (allowPrivilegeEscalation: false), a seccomp filter (RuntimeDefault), the root
    file system read-only; `fs_group` among the supplementary groups."""
    cg = pod_freezer(run, pod)
    seen = {}
    for name in ("leasehold", "app"):
        cid, _ = container_id(run, pod, name)
        dirs = [d for d in cg.iterdir() if d.is_dir() and d.name.startswith(cid)]
        assert len(dirs) == 1, f"{pod}/{name}: cgroup of {cid[:12]}: {dirs}"
        pids = pod_pids(dirs[0])
        assert pids, f"{pod}/{name}: no process"
        for pid in pids:
            st = proc_status(pid)
            assert st["Uid"] == [str(uid)] * 4, f"{pod}/{name}: Uid {st['Uid']}"
            for cap in ("CapPrm", "CapEff", "CapBnd", "CapAmb"):
                assert int(st[cap][0], 16) == 0, f"{pod}/{name}: {cap} {st[cap]}"
            assert st["NoNewPrivs"] == ["1"], f"{pod}/{name}: NoNewPrivs {st['NoNewPrivs']}"
            assert st["Seccomp"] == ["2"], f"{pod}/{name}: Seccomp {st['Seccomp']}"
            assert root_read_only(pid), f"{pod}/{name}: root file system writable"
            if fs_group is not None:
                assert str(fs_group) in st["Groups"], f"{pod}/{name}: Groups {st['Groups']}"
            seen[name] = {"uid": st["Uid"][0], "gid": st["Gid"][0], "groups": st["Groups"]}
    return seen


def psa_is_enforced(node, ns):
    """Non-vacuity of "no warnings": in the same namespace, a pod without the shipped
    securityContext is refused, and the apply of such a Deployment (server dry run) warns."""
    bad_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "no-context"},
               "spec": {"containers": [{"name": "c", "image": cluster.APP_IMAGE}]}}
    _, r = kubectl_warnings(node, "apply", "--dry-run=server", "-n", ns, "-f", "-",
                            input=json.dumps(bad_pod), check=False)
    assert r.returncode != 0 and "violates PodSecurity" in r.stderr, r.stderr
    bad_dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "no-context"},
               "spec": {"selector": {"matchLabels": {"x": "y"}}, "template": {
                   "metadata": {"labels": {"x": "y"}}, "spec": bad_pod["spec"]}}}
    warnings, _ = kubectl_warnings(node, "apply", "--dry-run=server", "-n", ns, "-f", "-",
                                   input=json.dumps(bad_dep))
    assert any("would violate PodSecurity" in w for w in warnings), warnings
    return warnings


def security_run(s, name, pod_security, uid, fs_group, rounds):
    with s.run("native", cls=RestrictedRun, name=name, pod_security=pod_security,
               configmap=TIMINGS) as run:
        t0 = time.time()
        assert run.warnings == [], f"{name}: the apply warned: {run.warnings}"
        ns = run.node.kjson("get", "namespace", run.ns)["metadata"]["labels"]
        assert ns.get("pod-security.kubernetes.io/enforce") == PSA, ns
        control = psa_is_enforced(run.node, run.ns)
        seen = {pod: check_processes(run, pod, uid, fs_group) for pod in run.ready_pods()}
        log(f"{name}: namespace enforces `{PSA}`; the apply of the shipped manifests gave no "
            f"warning (a pod without the context is refused, and its Deployment warns: "
            f"{control[0][:90]}...); processes {json.dumps(next(iter(seen.values())))}")
        results = []
        for _ in range(rounds):
            delete_leader_round(run, results)
        for pod in run.ready_pods():
            check_processes(run, pod, uid, fs_group)
        log(f"{name}: " + summary("failover", [r["failover_s"] for r in results]) + "; "
            + summary("app's POST /release -> next yes", [post_to_yes(r) for r in results]))
        holders = judge_rollouts(run, t0)
        # The two channels agree: every unit the kubelet's `kubectl logs` stream showed is in the
        # CRI files (read directly), for every pod.
        via_kubectl = {p: {u["start"] for u in us} for p, us in Run.units(run).items()}
        run.cri.read()  # after the snapshot above: the kubelet served those lines from the files
        via_cri = {p: {u["start"] for u in us} for p, us in run.units().items()}
        for p, starts in via_kubectl.items():
            assert starts <= via_cri.get(p, set()), \
                f"{p}: {len(starts - via_cri.get(p, set()))} units not in the CRI log files"
        n = sum(len(us) for us in run.units().values())
        log(f"{name}: lock history {holders}; {n} units judged from the CRI log files")
        return results


@scenario
def security(s):
    """Security contexts, in namespaces enforcing Pod Security `restricted` (no warning at apply;
    non-vacuity: psa_is_enforced): (a) the shipped securityContext as is: check_processes under
    the image's uid, one graceful handover; (b) as OpenShift's restricted SCC assigns
    (OPENSHIFT_UID): the same checks under that uid, fsGroup among the groups, and NODE_REPEAT
    graceful handovers. The judge's rules over each, the units read from the CRI log files."""
    log(f"security: {timings_note()}")
    a = security_run(s, "security_shipped", {}, IMAGE_UID, None, 1)
    b = security_run(s, "security_openshift_uid",
                     {"runAsUser": OPENSHIFT_UID, "fsGroup": OPENSHIFT_UID}, OPENSHIFT_UID,
                     OPENSHIFT_UID, repeat())
    fo = [r["failover_s"] for r in a + b]
    log("security: " + summary("failover", fo))
    assert max(fo) <= FAILOVER_BOUND, f"failover {max(fo):.3f}s > {FAILOVER_BOUND}s"


if __name__ == "__main__":
    as_instrument()
    sys.exit(SCENARIOS.main(context=lambda name: NodeScenario(
        name, f"{name}: {timings_note()}, NODE_REPEAT={repeat()}")))
