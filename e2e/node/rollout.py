"""A rolling update on the node, and the rules over a run whose pods were all replaced."""

import math
import time

from e2e.lib import judge as verdict
from e2e.lib.common import wait_until
from e2e.node import judge
from e2e.node.bounds import GAP_BOUND, LIFETIME_GAP_BOUND, MAX_LOCK_CHANGES, SAMPLE_INTERVAL
from e2e.node.cluster import log
from e2e.node.lock_rules import assert_release_acquire
from e2e.node.work import assert_gated_runs_disjoint, wait_working, work_of


def handovers(by_pod, t0, t1):
    """[(from, to, gap_hi, gap_lo)] where the pod saying yes changes inside [t0, t1]: gap_hi =
    next's first yes received - previous' last yes sent, gap_lo = sent - received."""
    ys = sorted((s for ss in by_pod.values() for s in ss if s.yes and t0 <= s.send <= t1),
                key=lambda s: s.send)
    out = []
    for a, b in zip(ys, ys[1:]):
        if a.pod != b.pod:
            out.append((a.pod, b.pod, b.recv - a.send, b.send - a.recv))
    return out


def judge_lifetimes(run):
    """Non-vacuity for pods that come and go: the coverage rule per life, at LIFETIME_GAP_BOUND."""
    by_pod = run.sampler.by_pod()
    ends = {p: max(s.send for s in ss if s.answered) for p, ss in by_pod.items()
            if any(s.answered for s in ss)}
    gaps, _ = verdict.coverage(by_pod, -math.inf, math.inf,
                               LIFETIME_GAP_BOUND / verdict.GAP_FACTOR, ends)
    assert not gaps, "; ".join(m for _, m in gaps)
    log(verdict.gap_report(by_pod, SAMPLE_INTERVAL))


def replace_all(run, trigger, what, leader_timeout=60):
    """trigger() starts a rolling update; until every old pod is gone, the replicas are Ready
    and a new pod leads. Returns (the old pods, when it started, the new leader)."""
    old = run.pod_names()
    t_r = time.time()
    trigger()
    run.node.kubectl("rollout", "status", f"deployment/{run.deployment}", "-n", run.ns,
                     "--timeout=300s", timeout=330)
    wait_until(lambda: not old & run.pod_names(), 120, 0.2, "every old pod gone")
    run.wait_ready(run.replicas)
    new = run.single_leader(timeout=leader_timeout)
    assert new not in old, f"{what}: leader {new} is an old pod"
    return old, t_r, new


def rolling_update(run, trigger, what):
    """One rolling update (replace_all) under the rollout bounds. Returns the measurements."""
    leader = run.single_leader()
    wait_working(run, leader)
    old, t_r, new = replace_all(run, trigger, what)
    wait_working(run, new)
    holder_is_new = lambda: (run.watch.history and  # noqa: E731
                             judge.pod_of(run.watch.history[-1][1], [new]) == new)
    wait_until(holder_is_new, 10, 0.1, f"the lock's holder {new}")
    t_end = time.time()
    changes = [(round(t - t_r, 3), h) for t, h in run.lock_changes(t_r)]
    hs = handovers(run.sampler.by_pod(), t_r, t_end)
    r = {"what": what, "leader": leader, "new": new, "lock_changes": len(changes),
         "changes": changes, "gaps": [round(g, 3) for _, _, g, _ in hs],
         "gaps_lo": [round(g, 3) for _, _, _, g in hs], "duration_s": round(t_end - t_r, 1)}
    log(f"{what}: {leader} -> {new}; lock changes {len(changes)} {changes}; leaderless gaps "
        f"(s) {r['gaps']} (lower estimates {r['gaps_lo']}); rollout took {r['duration_s']}s")
    assert hs, f"{what}: no handover seen by the sampler"
    acquirers = assert_release_acquire(what, [h for _, h in changes], new, old, run.replicas)
    assert len(changes) == MAX_LOCK_CHANGES, \
        f"{what}: the lock changed {len(changes)} times (exactly {MAX_LOCK_CHANGES}: the " \
        f"leader's pod, the costliest, deleted last): {changes}; acquired by {acquirers}"
    worst = max(g for _, _, g, _ in hs)
    assert worst <= GAP_BOUND, f"{what}: leaderless gap {worst:.3f}s > {GAP_BOUND:.2f}s"
    return r


def judge_rollouts(run, t0, foreign=()):
    """The judge's rules over a scenario whose pods were all replaced; the lock's history may
    also name `foreign` holders (the test's own writes of the Lease)."""
    by_pod = run.sampler.by_pod()
    definite, possible = verdict.overlaps(by_pod)
    assert not definite, f"DEFINITE OVERLAP of yes answers: {definite[:5]}"
    if possible:
        log(f"possible overlaps: {possible[:10]}")
    if run.variant == "gate":
        assert_gated_runs_disjoint(run)
    bad = judge.unit_intersections(run.units())
    assert not bad, f"units of leader-only work of two pods intersect: {bad[:5]}"
    judge_lifetimes(run)
    holders = [judge.pod_of(h, list(run.pod_ips)) for h in run.watch.holders()
               if h and h not in foreign]
    work = work_of(run)
    for pod in set(holders):
        assert pod in work, f"holder {pod} did no unit of work (history {holders})"
    return holders
