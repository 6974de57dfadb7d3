"""Observe mode on real pods (CTest label `node`): an operator that elects itself, with the
shipped observing sidecar beside it.

    LEASEHOLD_NODE_DIR=build/e2e-node python3 -m e2e.scenarios.node_observe observe_rollout

The operator is e2e/crmanager (a controller-runtime manager: its own Lease, identity
<hostname>_<uuid>, controller-runtime's default timings 15 s / 10 s / 2 s, no release on
shutdown), in the image e2e/node/images.py builds, in place of the example's `app`
(cluster.operator_container; its own Role for its Lease, cluster.operator_rbac). The Deployment
is the native-sidecar overlay with deploy/components/observe, observe-watch and the leader label,
rendered and checked as every node scenario's (cluster.render, assert_shipped).
"""

import json
import re
import sys
import time

from e2e.lib import judge as verdict
from e2e.lib.common import wait_until
from e2e.lib.lockwatch import LockWatcher
from e2e.lib.runner import Registry
from e2e.lib.timings import DEFAULTS
from e2e.node import judge
from e2e.node.bounds import CLOCK_SLACK, TAKEOVER_SLACK
from e2e.node.cluster import cluster_time, log
from e2e.node.handover import leader_label, sidecar_log_events, wait_gone, wait_settled
from e2e.node.rollout import judge_lifetimes
from e2e.node.run import NodeScenario, Run, repeat

# The shipped timings: deploy/components/observe's 15 s / 10 s (the base's retry-period, 2 s), the
# operator's controller-runtime defaults (the same three).
LEASE, RENEW, RETRY = DEFAULTS
# kObserveMargin (src/election/observer.h): an observer's "yes" ends this long before any rival
# may take over (docs/safety.md, "Observe mode"), by the one clock of the node.
OBSERVE_MARGIN = 2.0
# A takeover after the holder's pod is gone: the operator does not release, so its rivals wait
# out the lease from the last renewal they saw (LEASE), try every RETRY (1.2 x jittered), and the
# new holder's sidecar says yes within two retry-periods of the acquisition (a watch event, then
# Gets); plus a node's startup and scheduling.
TAKEOVER_WAIT = LEASE + 2 * 1.2 * RETRY + 2 * RETRY + 30

SCENARIOS = Registry()
scenario = SCENARIOS.add

LEADING_RE = re.compile(r"LEADING (\S+) (\S+) (\S+) (\S+)")
STOPPED_RE = re.compile(r"STOPPED (\S+) (\S+)")


class ObserveRun(Run):
    """The observe variant: the operator in `app`, its Lease the lock (LEASEHOLD_LOCK_NAME),
    the watcher pod beside the operator's pods (sampled too: it never says yes)."""

    def terms(self, t1):
        """The operator's terms as the Lease holds them: [(pod, holder, start, end)], each from
        its acquireTime (the holder's LEADING line reads it: stamped before the winning write)
        or, without that line, the instant the lock watch saw the new holder, to the next term's
        start or t1. A pod "holds the lease" over its whole term, also after its manager stopped
        (nobody else may take it before the lease ran out)."""
        acquired = {}
        for (pod, c), f in self.followers.items():
            if c == "app":
                for m in LEADING_RE.finditer(f.text()):
                    if m.group(3) != "?":
                        acquired[m.group(2)] = cluster_time(m.group(3))
        hist = [(acquired.get(h, t), h) for t, h in self.watch.history if h]
        out = []
        for (start, h), nxt in zip(hist, hist[1:] + [(t1, None)]):
            pod = judge.pod_of(h, list(self.pod_ips))
            assert pod, f"the Lease names {h!r}, no pod of {sorted(self.pod_ips)}"
            out.append((pod, h, start, nxt[0]))
        return out

    def manager_stopped(self, pod):
        """When the pod's manager logged that it stopped leading (its context ended), or None."""
        f = self.followers.get((pod, "app"))
        m = STOPPED_RE.search(f.text()) if f else None
        return cluster_time(m.group(2)) if m else None

    def renewals_seen(self, pod):
        """When the lock watch saw each version of the record naming `pod` (time.time())."""
        return [t for t, _, typ, _, rec in LockWatcher.history(self.watch, "lease")
                if typ != "DELETED" and rec and judge.pod_of(rec[0], [pod]) == pod]


def judge_terms(run, t1):
    """No sidecar said yes at an instant another pod's operator held the Lease: per term, the
    other pods' samples against the term given as two yes points (its start and end), so that
    e2e/lib/judge.py's definite rule fails a yes answer sent after the term began and received
    before it ended. Partial ones (an answer in flight across a term's edge) are logged."""
    by_pod = run.sampler.by_pod()
    terms = run.terms(t1)
    possible = []
    for pod, holder, a, b in terms:
        held = f"lease held by {holder}"
        for other, ss in by_pod.items():
            if other == pod:
                continue
            definite, maybe = verdict.overlaps(
                {other: ss, held: [verdict.Sample(held, a, a, True), verdict.Sample(held, b, b, True)]})
            assert not definite, f"DEFINITE: {other} said yes while {holder} held: {definite[:3]}"
            possible += maybe
    log(f"terms: {[(p, round(b - a, 1)) for p, _, a, b in terms]}; answers across a term's "
        f"edge (not judged): {len(possible)}")
    return terms


def check_follows(run, pod, timeout=15):
    """The Lease names `pod`'s operator, and the leader label is on `pod` alone."""
    holder = run.watch.history[-1][1] if run.watch.history else ""
    assert judge.pod_of(holder, [pod]) == pod, f"{pod} says yes; the Lease names {holder!r}"
    wait_until(lambda: leader_label(run, pod) == [pod], timeout, 0.2,
               f"the leader label on {pod} alone")


def yes_ended(run, old, nxt, t_fault):
    """The old holder's "yes" after its pod's deletion at t_fault, against docs/safety.md's
    observe-mode bounds, and the new holder's start. Returns the measurements (s)."""
    samples = run.sampler.by_pod()
    last = max((x for x in samples[old] if x.yes), key=lambda x: x.send)
    term, _, _ = sidecar_log_events(run, old)
    seen = [t for t in run.renewals_seen(old) if t <= nxt.send]
    new_term = [a for p, _, a, _ in run.terms(time.time()) if p == nxt.pod and a >= t_fault - 1]
    assert term is not None, f"no SIGTERM line from {old}'s sidecar"
    assert seen and new_term, (seen, new_term)
    acquired = new_term[0]
    r = {"old": old, "new": nxt.pod, "last_yes_s": last.recv - t_fault,
         "sidecar_sigterm_s": term - t_fault, "operator_stopped_s": (run.manager_stopped(old) or 0) - t_fault,
         "last_renewal_seen_s": seen[-1] - t_fault, "acquired_s": acquired - t_fault,
         "first_yes_after_acquired_s": nxt.recv - acquired, "room_s": acquired - last.recv}
    log("yes ended: " + json.dumps({k: round(v, 3) if isinstance(v, float) else v
                                    for k, v in r.items()}))
    # The bound in force on a native sidecar: the operator (`app`) exits at its SIGTERM without
    # releasing, then the kubelet stops the sidecar, which says "no" from its SIGTERM on (the
    # observer's stop). The question answered last was sent before it.
    assert last.send <= term + CLOCK_SLACK, \
        f"{old} said yes {last.send - term:.3f}s after its sidecar's SIGTERM"
    # The bound of any observer (docs/safety.md, "Observe mode"), whatever stops it: "yes" only
    # before S + min(renew-deadline, lease-duration - 2 s), S the send of a Get that read the
    # version before the last renewal seen, which was written (and then seen by the lock watch)
    # after S.
    assert last.send < seen[-1] + min(RENEW, LEASE - OBSERVE_MARGIN), \
        f"{old}'s yes {last.send - seen[-1]:.3f}s after the last renewal seen"
    # ... and so OBSERVE_MARGIN or more before the rival could take over (one clock: the node's).
    assert r["room_s"] >= OBSERVE_MARGIN - CLOCK_SLACK, \
        f"{nxt.pod} acquired {r['room_s']:.3f}s after {old}'s last yes"
    assert nxt.recv >= acquired, f"{nxt.pod} said yes before its operator acquired"
    assert r["first_yes_after_acquired_s"] <= 2 * RETRY + TAKEOVER_SLACK, \
        f"{nxt.pod}'s first yes {r['first_yes_after_acquired_s']:.3f}s after its acquisition"
    return r


def delete_holder_round(run, results):
    """DELETE the holder's pod: the next holder, its sidecar's yes and the label follow."""
    leader = run.single_leader(timeout=TAKEOVER_WAIT)
    check_follows(run, leader)
    wait_settled(run, leader)
    t_del = time.time()
    run.node.delete_pod(run.ns, leader)
    nxt = wait_until(lambda: run.sampler.first_yes_after(t_del, exclude=(leader,)),
                     TAKEOVER_WAIT, 0.1, "the next holder's first yes")
    wait_gone(run, leader)
    run.wait_ready(run.replicas)
    new = run.single_leader()
    assert new == nxt.pod, f"leader {new}, first yes from {nxt.pod}"
    check_follows(run, new)
    results.append(dict(yes_ended(run, leader, nxt, t_del), what="delete"))


def rollout_round(run, results, i):
    """kubectl rollout restart: every old pod replaced; the holder's pod goes last (its sidecar
    sets the deletion cost), so the Lease changes holder exactly once (no release: the old
    operator's lease runs out), to a new pod."""
    leader = run.single_leader(timeout=TAKEOVER_WAIT)
    check_follows(run, leader)
    old = {p["metadata"]["name"] for p in run.node.pods(run.ns)}
    t_r = time.time()
    run.node.kubectl("rollout", "restart", f"deployment/{run.deployment}", "-n", run.ns)
    run.node.kubectl("rollout", "status", f"deployment/{run.deployment}", "-n", run.ns,
                     "--timeout=300s", timeout=330)
    wait_until(lambda: not old & {p["metadata"]["name"] for p in run.node.pods(run.ns)}, 120,
               0.2, "every old pod gone")
    run.wait_ready(run.replicas)
    new = run.single_leader(timeout=TAKEOVER_WAIT)
    assert new not in old, f"rollout #{i}: leader {new} is an old pod"
    check_follows(run, new)
    changes = [(round(t - t_r, 3), judge.pod_of(h, list(run.pod_ips)) or h)
               for t, h in run.watch.history if t >= t_r]
    order = sorted(old, key=lambda p: run.deleted.get(p, float("inf")))
    log(f"rollout #{i}: {leader} -> {new}; Lease changes {changes}; old pods deleted in the "
        f"order {order}; took {time.time() - t_r:.1f}s")
    assert order[-1] == leader, f"rollout #{i}: the holder's pod {leader} was not deleted last"
    assert [p for _, p in changes] == [new], f"rollout #{i}: Lease changes {changes}, not one to {new}"
    nxt = run.sampler.first_yes_after(run.deleted[leader], exclude=(leader,))
    results.append(dict(yes_ended(run, leader, nxt, run.deleted[leader]), what=f"rollout #{i}"))


@scenario
def observe_rollout(s):
    """An operator that elects itself, 3 replicas, each with the shipped observing sidecar:
    NODE_REPEAT times a rollout (kubectl rollout restart) and a DELETE of the holder's pod. The
    Lease's holder (its operator) and the sidecars' yes, the label on the holder's pod alone;
    no sidecar says yes while another pod's operator holds the Lease (judge_terms), each pod
    judged over its life; the old holder's yes ends by its sidecar's SIGTERM and by
    docs/safety.md's bound, 2 s or more before the new holder acquired."""
    with s.run("observe", cls=ObserveRun) as run:
        t0 = time.time()
        results = []
        for i in range(repeat()):
            rollout_round(run, results, i + 1)
            delete_holder_round(run, results)
        t1 = time.time()
        definite, possible = verdict.overlaps(run.sampler.by_pod())
        assert not definite, f"DEFINITE OVERLAP of yes answers: {definite[:5]}"
        terms = judge_terms(run, t1)
        judge_lifetimes(run)
        assert len({p for p, _, _, _ in terms}) >= 1 + 2 * repeat(), terms
        log(f"observe rollout: {t1 - t0:.1f}s; results " + json.dumps(results))


if __name__ == "__main__":
    sys.exit(SCENARIOS.main(context=NodeScenario))
