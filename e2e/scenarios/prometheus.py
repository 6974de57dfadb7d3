#!/usr/bin/env python3
"""The shipped alert rules on a real Prometheus, scraping real agents on the real control plane
(what it shows: docs/runbooks.md).

Usage: python3 -m e2e.scenarios.prometheus NAME [NAME...]   (or `all`, `list`).

Each scenario starts its own server (e2e/lib/prometheus.py: the pinned one, with the rules of
deploy/monitoring/rules.py scaled) and stops it afterwards. It scrapes the agents' probe
listeners as the shipped PodMonitor does, each target labelled with `namespace` and `pod`. Every
check reads `ALERTS{alertstate="firing"}` as a range over the whole scenario, after the rule group
has been evaluated past the window's end, so an alert that fired and resolved in between is seen.
Each must-fire assertion logs and bounds the measured fault-to-firing time.
"""

import json
import os
import shutil
import sys
import time
from pathlib import Path

from deploy.monitoring import rules  # the one source of the alerts
from e2e.lib.agent import current_leaders, wait_ready, wait_single_leader
from e2e.lib.common import DEPLOY, Watch, log, measured, wait_until
from e2e.lib.controlplane import Namespace
from e2e.lib.members import start_fleet
from e2e.lib.operator import CrManager, lease_holder, manager_binary, pod_of
from e2e.lib.prometheus import OVERRIDES, SCALE, SCRAPE, STEP, Prometheus
from e2e.lib.runner import Registry, Scenario
from e2e.lib.timings import FAST, MIXED

# The scaled windows (rules.py: 5m and 15m of the shipped rules).
FOR_5M = 300 * SCALE      # LeaseholdAbsent, LeaseholdNotReady, LeaseholdRenewSlowOrFailing `for:`
WINDOW_15M = 900 * SCALE  # LeaseholdPromiseOvertaken's and LeaseholdFlapping's window
# LeaseholdNoLeader fires once its window has held no "1", then its `for:`.
NO_LEADER_WINDOW = FAST.lease + 2 * SCRAPE
NO_LEADER_FOR = 2 * SCRAPE
# A scrape, an evaluation, and the query's step, plus load on a shared 2-core machine.
SLACK = 2 * SCRAPE + 2.0
# An out-of-band write of the Lease is seen by the watch at once (or by the next Get, within a
# retry period), then a scrape and an evaluation; no `for:`.
OUT_OF_BAND = FAST.retry + SLACK
SCENARIOS = Registry()
scenario = SCENARIOS.add


def fmt(firing):
    return "; ".join(f"{k[0]}{{{', '.join(f'{a}={b}' for a, b in k[1:])}}} "
                     f"[{sp[0]:.1f}, {sp[1]:.1f}]" for k, sp in sorted(firing.items())) or "none"


def alerts_named(firing, name, **labels):
    """The entries of alert `name` whose labels match; a label given as "" must be missing
    (as in a PromQL selector)."""
    def match(k):
        have = dict(k[1:])
        return all(have.get(lk, "") == lv for lk, lv in labels.items())
    return {k: sp for k, sp in firing.items() if k[0] == name and match(k)}


class PromScenario(Scenario):
    """A Scenario that also stops its Prometheus servers (and prints their logs on failure)."""

    def __init__(self, name):
        super().__init__(name)
        self.proms = []
        self.namespaces = []

    def prometheus(self, ns, agents):
        """A Prometheus server for namespace `ns` that has scraped `agents`."""
        p = Prometheus(ns.name, ns.lock_name)
        self.proms.append(p)
        p.start(agents).wait_scraped(agents)
        return p

    def __exit__(self, exc_type, exc, tb):
        for p in self.proms:
            if exc_type is not None:
                print(f"----- prometheus log\n{p.log()}")
            p.stop()
        try:
            return super().__exit__(exc_type, exc, tb)
        finally:
            # The agents' logs and service-account copies (printed above on failure).
            for ns in self.namespaces:
                shutil.rmtree(ns.tmp, ignore_errors=True)


def fresh_namespace(s, name):
    """The namespace on the scenario's control plane (ns.cp) with the shipped RBAC and no Lease
    left from an earlier run (whose record a foreign-writer scenario may have made unreliable)."""
    ns = Namespace(s.control_plane(), name)
    s.namespaces.append(ns)
    ns.cp.kubectl("delete", "lease", ns.lock_name, "-n", name, "--ignore-not-found")
    return ns


def scraped_fleet(s, tag, extra=()):
    """(ns, agents, leader, prom): a fresh namespace `tag`, three agents with a leader, and a
    Prometheus that has scraped them."""
    ns = fresh_namespace(s, tag)
    agents = start_fleet(s, ns, 3, extra=extra, probe=True)
    leader = wait_single_leader(agents, 4 * FAST.lease + 10)
    return ns, agents, leader, s.prometheus(ns, agents)


def first_firing(firing, name, after, **labels):
    """The first instant (wall) at or after `after` at which alert `name` fires."""
    starts = [sp[0] for sp in alerts_named(firing, name, **labels).values() if sp[1] >= after]
    return min(starts) if starts else None


def alerts_query(name, labels):
    sel = [f'alertname="{name}"', 'alertstate="firing"'] + [f'{k}="{v}"' for k, v in labels.items()]
    return f"ALERTS{{{','.join(sel)}}}"


def wait_firing(prom, name, since, bound, **labels):
    """Waits (polling the instant query) until alert `name` fires; then returns the firing span
    from the range query, and asserts its fault-to-firing time is within `bound` s."""
    got = wait_until(lambda: prom.query(alerts_query(name, labels)), bound + 10, 0.2,
                     what=f"{name} to fire")
    for attempt in range(3):
        now = time.time()
        firing = prom.firing(since, now)
        t = first_firing(firing, name, since, **labels)
        if t is not None:
            break
        log(f"{name}: the instant query saw it firing ({got}), the range [{since:.3f}, "
            f"{now:.3f}] not yet: {fmt(firing)}; asking again")
        time.sleep(1)
    assert t is not None, (f"{name} fired by the instant query but not in the range "
                           f"[{since:.3f}, {now:.3f}]: {fmt(firing)}; instant: {got}")
    dt = t - since
    assert dt <= bound, f"{name} fired {dt:.1f}s after the fault, bound {bound:.1f}s"
    return dt, firing


def wait_resolved(prom, name, since, bound, **labels):
    """Waits until alert `name` no longer fires; returns the seconds from `since`."""
    wait_until(lambda: not prom.query(alerts_query(name, labels)), bound + 10, 0.2,
               what=f"{name} to resolve")
    now = time.time()
    firing = prom.firing(since, now)
    ends = [sp[1] for sp in alerts_named(firing, name, **labels).values()]
    last = max(ends) if ends else since
    dt = last + STEP - since
    assert dt <= bound, f"{name} resolved {dt:.1f}s after the restore, bound {bound:.1f}s"
    return dt


def assert_only(firing, *names):
    """No alert in `firing` but those named."""
    others = {k: sp for k, sp in firing.items() if k[0] not in names}
    assert not others, f"unexpected alerts: {fmt(others)}"


# ------------------------------------------------------------------------------------ scenarios

@scenario
def clean_handovers_fire_nothing(s):
    """A clean failover (SIGTERM of the leader, release on shutdown), a pod restart (the same
    pod's process killed and started again, as the kubelet restarts a container) and a rolling
    update of all three replicas (new pods, new targets, the old ones stopped after the new one
    is ready) fire nothing, over the whole window plus every `for:` after it."""
    ns, agents, leader, prom = scraped_fleet(s, "prom-clean")
    start = prom.started_wall

    t0 = time.monotonic()
    leader.term_and_wait()
    live = [a for a in agents if a is not leader]
    new = wait_single_leader(live, FAST.lease + 5)
    log(f"clean failover: {leader.name} -> {new.name} in {time.monotonic() - t0:.2f}s")
    # The stopped pod comes back (a restart of its container): same name, same target.
    restarted = s.agent(ns, leader.name, probe=leader.probe_port).start()
    live.append(restarted)
    wait_ready([restarted], 10)
    # A crash restart of the current leader: SIGKILL, and the kubelet starts it again.
    cur = wait_single_leader(live, FAST.lease + 5)
    t0 = time.monotonic()
    cur.kill()
    again = s.agent(ns, cur.name, probe=cur.probe_port).start()
    live = [a for a in live if a is not cur] + [again]
    nxt = wait_single_leader(live, 2 * FAST.lease + 5)
    log(f"crash restart of the leader {cur.name}: {nxt.name} leads "
        f"{time.monotonic() - t0:.2f}s later")

    for i, old in enumerate(list(live)):
        fresh = s.agent(ns, f"{ns.name}-r{i}", probe=True).start()
        wait_ready([fresh], 10)
        live.append(fresh)
        prom.set_targets(live)
        prom.wait_scraped([fresh])
        old.term_and_wait()
        live.remove(old)
        prom.set_targets(live)
        wait_single_leader(live, 2 * FAST.lease + 5)
    log(f"rolling update done: {[a.name for a in live]}")
    # Let every `for:` that a transient above could have started run out.
    settle = max(FOR_5M, NO_LEADER_WINDOW + NO_LEADER_FOR) + 2 * SCRAPE
    end = time.time() + settle
    time.sleep(settle)
    firing = prom.firing(start, end)
    assert not firing, f"alerts fired on clean handovers: {fmt(firing)}"
    term = prom.query("max(leasehold_term)")
    measured(f"nothing fired over {end - start:.0f}s of clean failover, pod restart, crash "
             f"restart and rolling update (term rose to {term[0]['value'][1] if term else '?'})")


@scenario
def rbac_removed_fires_no_leader_and_not_ready(s):
    """Every replica's RoleBinding taken away: the leader cannot renew and steps down, nobody
    can acquire; LeaseholdNoLeader and LeaseholdNotReady fire within their bounds, and both
    resolve after the RoleBinding is restored."""
    ns, agents, leader, prom = scraped_fleet(s, "prom-rbac")
    try:
        t_fault = time.time()
        ns.cp.kubectl("delete", "rolebinding", "leasehold", "leasehold-create", "-n", ns.name)
        log("RoleBindings leasehold, leasehold-create deleted")
        # NoLeader: the leader steps down within renew-deadline, then the window and `for:`.
        no_leader_bound = FAST.renew + NO_LEADER_WINDOW + NO_LEADER_FOR + SLACK
        # NotReady: a refused attempt within a retry period (jittered up to 2.2), then `for:`.
        not_ready_bound = 2.2 * FAST.retry + FAST.renew + FOR_5M + SLACK
        dt_nr, _ = wait_firing(prom, "LeaseholdNotReady", t_fault, not_ready_bound)
        dt_nl, _ = wait_firing(prom, "LeaseholdNoLeader", t_fault, no_leader_bound,
                               lock_name=ns.lock_name)
        # Every replica, not just one, is reported not ready.
        def not_ready():
            return {r["metric"]["pod"] for r in prom.query(alerts_query("LeaseholdNotReady", {}))}
        nr = not_ready()
        wait_until(lambda: not_ready() == {a.name for a in agents}, 10, 0.2,
                   what="LeaseholdNotReady on every replica")
        assert not current_leaders(agents)
    finally:
        t_restore = time.time()
        ns.cp.apply((DEPLOY / "rbac" / "rolebinding.yaml").read_text(), ns.name)
    log("RoleBindings restored")
    wait_single_leader(agents, 2 * FAST.lease + 2.2 * FAST.retry + 5)
    t_led = time.time()
    dt_nl_res = wait_resolved(prom, "LeaseholdNoLeader", t_restore,
                              2.2 * FAST.retry + FAST.lease + SLACK)
    dt_nr_res = wait_resolved(prom, "LeaseholdNotReady", t_restore, 2.2 * FAST.retry + SLACK)
    firing = prom.firing(prom.started_wall, time.time())
    assert_only(firing, "LeaseholdNoLeader", "LeaseholdNotReady")
    measured(f"RBAC removed: LeaseholdNotReady fired {dt_nr:.1f}s (bound "
             f"{not_ready_bound:.1f}s, on {sorted(nr)} first), LeaseholdNoLeader "
             f"{dt_nl:.1f}s (bound {no_leader_bound:.1f}s) after the RoleBindings were "
             f"deleted; restored: a leader {t_led - t_restore:.1f}s later, NoLeader resolved "
             f"{dt_nl_res:.1f}s, NotReady {dt_nr_res:.1f}s after the restore")


@scenario
def all_stopped_fires_absent(s):
    """Every replica stopped: both renderings of LeaseholdAbsent fire (the plain file's on
    `up`, the chart's per-lock absent(leasehold_lock_info))."""
    ns, agents, _, prom = scraped_fleet(s, "prom-absent")
    for a in agents:
        a.term()
    for a in agents:
        assert a.wait(15) == 0, a.log_tail()
    t_fault = time.time()
    log("every replica stopped")
    # The next scrape fails (up 0, the lock's series stale), then `for:`.
    bound = SCRAPE + FOR_5M + SLACK
    dt_up, _ = wait_firing(prom, "LeaseholdAbsent", t_fault, bound, lock_name="")
    dt_lock, firing = wait_firing(prom, "LeaseholdAbsent", t_fault, bound,
                                  lock_name=ns.lock_name)
    assert_only(firing, "LeaseholdAbsent")
    measured(f"all replicas stopped: LeaseholdAbsent (up-based) fired {dt_up:.1f}s, "
             f"per-lock absent(leasehold_lock_info) {dt_lock:.1f}s after (bound {bound:.1f}s)")


def lease_patch(ns, patch, kind="merge"):
    """Writes the Lease out of band; returns the wall clock after the write."""
    ns.cp.kubectl("patch", "lease", ns.lock_name, "-n", ns.name, "--type", kind, "-p",
                  json.dumps(patch))
    return time.time()


@scenario
def foreign_takeover_fires_promise_overtaken(s):
    """An out-of-band write of the Lease naming another holder (with the count raised, as an
    elector that ignores promises would write it) while the leader's promise runs: the leader
    sees its promise overtaken; LeaseholdPromiseOvertaken fires, on the leader's series. (A
    normal handover does not fire it: clean_handovers_fire_nothing.)"""
    s.expect_overtaken = True
    ns, agents, leader, prom = scraped_fleet(s, "prom-overtaken")
    body = leader.leader_body()
    spec = ns.lease()["spec"]
    assert spec["holderIdentity"] == leader.name
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    t_fault = lease_patch(ns, {"spec": {
        "holderIdentity": "foreign-elector", "acquireTime": now, "renewTime": now,
        "leaseTransitions": spec.get("leaseTransitions", 0) + 1,
        "leaseDurationSeconds": int(FAST.lease)}})
    log(f"Lease written out of band: holder foreign-elector, while {leader.name}'s promise "
        f"runs (validUntil {body.get('validUntil')})")
    dt, firing = wait_firing(prom, "LeaseholdPromiseOvertaken", t_fault, OUT_OF_BAND,
                             pod=leader.name)
    wrong = [k for k in alerts_named(firing, "LeaseholdPromiseOvertaken")
             if ("pod", leader.name) not in k[1:]]
    assert not wrong, f"overtaken on a replica that held no promise: {wrong}"
    measured(f"out-of-band takeover during {leader.name}'s promise: LeaseholdPromiseOvertaken "
             f"fired {dt:.2f}s after the write (bound {OUT_OF_BAND:.1f}s)")


@scenario
def record_without_count_fires_foreign_writer(s):
    """An out-of-band write of the Lease without a transition count (a foreign writer that does
    not keep it), holder unchanged: LeaseholdForeignWriter fires on every replica that sees it,
    and no promise is overtaken."""
    ns, agents, leader, prom = scraped_fleet(s, "prom-foreign")
    t_fault = lease_patch(ns, [{"op": "remove", "path": "/spec/leaseTransitions"}], kind="json")
    log(f"Lease written out of band without leaseTransitions (holder still {leader.name})")
    dt, firing = wait_firing(prom, "LeaseholdForeignWriter", t_fault, OUT_OF_BAND)
    pods = {dict(k[1:]).get("pod") for k in alerts_named(firing, "LeaseholdForeignWriter")}
    assert not alerts_named(firing, "LeaseholdPromiseOvertaken"), fmt(firing)
    measured(f"record without a count: LeaseholdForeignWriter fired {dt:.2f}s after the write "
             f"(bound {OUT_OF_BAND:.1f}s) on {sorted(pods)}")


@scenario
def rapid_leader_changes_fire_flapping(s):
    """Forced rapid changes of leader (POST /release on each new leader, --release-holdoff 2s so
    the released one steps aside): LeaseholdFlapping fires once the term rose by
    `flapping_changes` within the scaled window."""
    ns, agents, leader, prom = scraped_fleet(s, "prom-flap", extra=("--release-holdoff=2s",))
    # The rule compares the term now with the term one window ago: wait until Prometheus holds
    # a sample that old (a Prometheus that has just started sees no change at all).
    wait_until(lambda: prom.query(f"max(leasehold_term offset {int(WINDOW_15M)}s)"),
               WINDOW_15M + 10, 0.2, what="a term sample one flapping window old")
    need = rules.DEFAULTS["flapping_changes"]
    t_first = None
    changes = 0
    cur = leader
    deadline = time.monotonic() + WINDOW_15M * 3
    while not prom.query(alerts_query("LeaseholdFlapping", {})):
        assert time.monotonic() < deadline, "LeaseholdFlapping did not fire"
        if changes < need + 1:
            st, body = cur.request("POST", "/release", timeout=5)
            assert st in (200, 202), f"POST /release on {cur.name}: {st} {body}"
            if t_first is None:
                t_first = time.time()
            nxt = wait_until(lambda: [a for a in current_leaders(agents) if a is not cur],
                             FAST.lease + 5, what="a new leader after the release")[0]
            changes += 1
            if changes == need:
                t_nth = time.time()
            cur = nxt
        else:
            time.sleep(0.2)
    now = time.time()
    firing = prom.firing(prom.started_wall, now)
    t = first_firing(firing, "LeaseholdFlapping", t_first)
    bound = SLACK + 2 * SCRAPE
    assert t is not None and t - t_nth <= bound, (t, t_nth, fmt(firing))
    measured(f"{changes} forced leader changes in {t_nth - t_first:.1f}s (threshold {need} in "
             f"{WINDOW_15M:.0f}s): LeaseholdFlapping fired {t - t_first:.1f}s after the first "
             f"release, {t - t_nth:.1f}s after change #{need} (bound {bound:.1f}s)")


@scenario
def slow_renewals_fire_renew_slow(s):
    """Sustained latency on the leader's API traffic (the chaos suite's fault proxy) that makes
    every renewal slower than the rule's bucket but still survivable:
    LeaseholdRenewSlowOrFailing fires while the leader still leads, throughout.

    Why not renewals of >= half the renew-deadline: a renew starts a retry-period after the
    previous answer and must be answered within renew-deadline of the previous send, so a
    leader survives renewals of at most (renew-deadline - retry-period) / 2 (`survivable`).
    Measured while writing this test: 1.1 s renewals lost the lease at the second renew (1 s
    survivable). The rule's bucket is the largest below that bound (rules.slow_bound); the
    renewals here sit halfway between the two."""
    from e2e.lib.faultproxy import ProxyLoop
    ns = fresh_namespace(s, "prom-slow")
    loop = ProxyLoop()
    try:
        proxy = loop.proxy("slow", ns.cp.host, ns.cp.port)
        a = s.agent(ns, f"{ns.name}-a0", probe=True,
                    env={"KUBERNETES_SERVICE_HOST": "127.0.0.1",
                         "KUBERNETES_SERVICE_PORT": str(proxy.port)}).start()
        a.wait_leader(4 * FAST.lease + 10)
        prom = s.prometheus(ns, [a])
        bucket = rules.slow_bound(rules.params_of(OVERRIDES))
        survivable = (FAST.renew - FAST.retry) / 2
        # A renew is one PUT on a kept-alive connection: one request and one answer, each
        # delayed by `lat`.
        renew = (bucket + survivable) / 2
        lat = renew / 2
        loop.latency(proxy, lat)
        t_fault = time.time()
        log(f"fault proxy: {lat:.2f}s latency each way on {a.name}'s API traffic")
        lost = Watch(lambda: not a.is_leader(), 0.1)
        # The rate over FOR_5M must pass one half, then a scrape, an evaluation and `for:`.
        bound = FOR_5M / 2 + FOR_5M + renew + SLACK
        try:
            dt, firing = wait_firing(prom, "LeaseholdRenewSlowOrFailing", t_fault, bound,
                                     pod=a.name)
        finally:
            lost.stop()
        assert not lost.hits, f"{a.name} stopped leading under the latency at {lost.hits[:3]}"
        st = a.leader_body()
        assert st, f"{a.name} no longer leads"
        slow = prom.query(f'sum(rate(leasehold_renew_duration_seconds_sum[{int(FOR_5M)}s])) / '
                          f'sum(rate(leasehold_renew_duration_seconds_count[{int(FOR_5M)}s]))')
        fails = prom.query("sum(leasehold_renew_failures_total)")
        loop.heal(proxy)
        mean = float(slow[0]["value"][1])
        assert bucket < mean < survivable, (bucket, mean, survivable)
        assert fails and float(fails[0]["value"][1]) == 0, fails
        measured(f"{lat:.3f}s latency each way: LeaseholdRenewSlowOrFailing fired {dt:.1f}s "
                 f"after the fault (bound {bound:.1f}s) while {a.name} led throughout; mean "
                 f"renew {mean:.2f}s ({100 * mean / FAST.renew:.0f}% of renew-deadline "
                 f"{FAST.renew:.0f}s, bucket {bucket}s, survivable {survivable}s), no renew failed")
    finally:
        loop.close()


@scenario
def dashboard_queries_return_data(s):
    """Every query of every panel of the shipped dashboard (deploy/monitoring/dashboard.py, the
    one source of leasehold-dashboard.json and the chart's ConfigMap), with its template
    variables substituted, returns data from the real Prometheus after a failover, evaluated
    both as an instant and as a range query over the window."""
    from deploy.monitoring import dashboard
    ns, agents, leader, prom = scraped_fleet(s, "prom-dash")
    # A watch stream on one follower, so that the watchers panel counts one.
    follower = [a for a in agents if a is not leader][0]
    import http.client
    watch = http.client.HTTPConnection("127.0.0.1", follower.port, timeout=30)
    watch.request("GET", "/leader/watch")
    resp = watch.getresponse()
    assert resp.status == 200, resp.status
    # Some history before and after the failover, as a dashboard's range would show.
    history = f'min(count_over_time(up{{namespace="{ns.name}"}}[1h])) >= 8'
    try:
        wait_until(lambda: prom.query(history), 30, 0.2, what="8 scrapes of every target")
        t0 = time.monotonic()
        t_failover = time.time()
        leader.term_and_wait()
        new = wait_single_leader([a for a in agents if a is not leader], FAST.lease + 5)
        log(f"failover {leader.name} -> {new.name} in {time.monotonic() - t0:.2f}s")
        wait_until(lambda: prom.query(f'max_over_time(leasehold_term{{namespace="{ns.name}"}}'
                                      f'[1h]) - min_over_time(leasehold_term{{namespace='
                                      f'"{ns.name}"}}[1h]) > 0'), 15, 0.2,
                   what="Prometheus to see the term move")
        t_seen = time.time()
        wait_until(lambda: prom.query(
            f'min(count_over_time(up{{namespace="{ns.name}"}}[{int(time.time() - t_seen) + 1}s]))'
            f' >= 8'), 30, 0.2, what="8 more scrapes after the failover")
        end = time.time()
        rng = max(1, int(end - prom.started_wall))
        subst = {"$namespace": ns.name, "$lock": ns.lock_name,
                 "$__rate_interval": f"{int(4 * SCRAPE)}s", "$__range": f"{rng}s"}
        empty, dump = [], []
        for title, legend, expr in dashboard.QUERIES:
            q = expr
            for k, v in subst.items():
                q = q.replace(k, v)
            assert "$" not in q, q
            inst = prom.query(q, end)
            ranged = prom.query_range(q, prom.started_wall, end, 1)
            values = [float(v) for r in inst for v in [r["value"][1]]]
            real = [v for v in values if v == v]  # not NaN
            if not inst or not ranged or not real:
                empty.append(f"{title} [{legend}]: {q}")
            log(f"{title} [{legend}]: {len(inst)} series, {len(ranged)} in the range")
            dump.append({"panel": title, "legend": legend, "query": q, "range": ranged})
        out = os.environ.get("LEASEHOLD_PROM_OUT")
        if out:  # for e2e/plot_dashboard.py (docs/dashboard-queries.png)
            Path(out).mkdir(parents=True, exist_ok=True)
            (Path(out) / "dashboard-queries.json").write_text(json.dumps(
                {"start": prom.started_wall, "end": end, "failover": t_failover,
                 "queries": dump}))
        assert not empty, "dashboard queries without data:\n" + "\n".join(empty)
        measured(f"all {len(dashboard.QUERIES)} queries of {len(dashboard.PANELS)} panels "
                 f"returned data after a failover")
    finally:
        watch.close()


def observer(s, ns, name, pod):
    """An observing leasehold agent of pod `pod`, with a probe listener (the scrape target), on
    the managers' timings (MIXED; e2e/scenarios/observe.py's TIMINGS says why)."""
    return s.agent(ns, name, extra=("--agent-mode=observe",), timings=MIXED, probe=True,
                   env={"POD_NAME": pod, "POD_NAMESPACE": ns.name}).start()


def observing_pods(s, ns, binary, pods, gen):
    """One "pod" per name: a controller-runtime manager that elects with the namespace's Lease
    (e2e/lib/operator.py) and its observer."""
    agents = [observer(s, ns, f"{p}-sidecar", p) for p in pods]
    managers = [s.member(CrManager, ns, p, binary, gen=gen, timings=MIXED).start() for p in pods]
    return agents, managers


def wait_observed_holder(ns, agents, timeout):
    """The agent that says yes for its pod, once the Lease names that pod."""
    def one():
        pod = pod_of(lease_holder(ns))
        yes = [a for a in agents if a.is_leader()]
        return yes[0] if len(yes) == 1 and yes[0].name == f"{pod}-sidecar" else None
    return wait_until(one, timeout, 0.1, what="one observing agent to say yes for its pod")


@scenario
def observed_operator_stopped_fires_no_leader(s):
    """Observe mode beside a real controller-runtime operator: three pods (manager + observing
    sidecar) and one watcher (an observer in a pod of its own, deploy/components/observe-watch,
    which never holds the Lease). The operator scaled to 0 (every manager SIGTERMed, without a
    release as controller-runtime does by default, and its sidecar with it; their targets leave
    the scrape config, their series go stale): LeaseholdNoLeader fires from the shipped rules
    through the watcher's 0, and nothing else (not Absent: the watcher reports the lock). Scaled
    up again (new pods): a new manager takes the Lease once it expires, its sidecar says yes,
    and the alert resolves. promise-overtaken stays 0 throughout: an observer makes no promise."""
    ns = fresh_namespace(s, "prom-observe")
    binary = manager_binary()
    watcher = observer(s, ns, "leasehold-watch-0", "leasehold-watch-7f9c4-x2v8k")
    agents, managers = observing_pods(s, ns, binary, ("op-0", "op-1", "op-2"), 0)
    holder = wait_observed_holder(ns, agents, 4 * MIXED.lease + 20)
    log(f"{lease_holder(ns)} holds the Lease; {holder.name} says yes; the watcher "
        f"{'says no' if not watcher.is_leader() else 'SAYS YES'}")
    assert not watcher.is_leader()
    prom = s.prometheus(ns, [watcher, *agents])
    time.sleep(NO_LEADER_WINDOW + NO_LEADER_FOR + 2 * SCRAPE)  # steady: nothing may fire

    # Scaled to 0: the pods go, managers and sidecars together.
    for x in (*managers, *agents):
        x.term()
    for x in (*managers, *agents):
        assert x.wait(MIXED.renew + 10) is not None, f"{x.name} did not stop after SIGTERM"
    t_fault = time.time()
    prom.set_targets([watcher])
    log(f"operator scaled to 0: managers and sidecars stopped, targets left: {watcher.name}")
    # The sidecars stopped at once (their last "1" scraped before t_fault), then NoLeader's
    # window and `for:`.
    bound = NO_LEADER_WINDOW + NO_LEADER_FOR + SLACK
    dt_fire, _ = wait_firing(prom, "LeaseholdNoLeader", t_fault, bound, lock_name=ns.lock_name)
    assert watcher.view().holder.startswith(pod_of(lease_holder(ns)) + "_"), watcher.view()

    t_restore = time.time()
    agents2, managers2 = observing_pods(s, ns, binary, ("op-3", "op-4", "op-5"), 1)
    prom.set_targets([watcher, *agents2])
    # The old holder's Lease expires (lease-duration after its last renewal, before t_fault),
    # a new manager takes it within a retry-period, its sidecar says yes after two reads.
    new = wait_observed_holder(ns, agents2, 2 * MIXED.lease + 4 * MIXED.retry + 10)
    t_led = time.time()
    dt_res = wait_resolved(prom, "LeaseholdNoLeader", t_restore,
                           MIXED.lease + 4 * MIXED.retry + 2 * SCRAPE + SLACK + 5)
    prom.wait_scraped(agents2)
    firing = prom.firing(prom.started_wall, time.time())
    assert_only(firing, "LeaseholdNoLeader")
    spans = alerts_named(firing, "LeaseholdNoLeader")
    assert len(spans) == 1 and min(sp[0] for sp in spans.values()) >= t_fault, fmt(firing)
    overtaken = prom.query("max(max_over_time(leasehold_promise_overtaken_total[1h]))")
    assert overtaken and float(overtaken[0]["value"][1]) == 0, overtaken
    leader = prom.query(f'max(leasehold_is_leader{{lock_name="{ns.lock_name}"}})')
    assert leader and float(leader[0]["value"][1]) == 1, leader
    measured(f"observed operator scaled to 0: LeaseholdNoLeader fired {dt_fire:.1f}s after "
             f"(bound {bound:.1f}s), through the watcher's 0 alone; scaled up: {new.name} "
             f"said yes {t_led - t_restore:.1f}s after the restore, NoLeader resolved "
             f"{dt_res:.1f}s after the restore; promise-overtaken 0; no other alert")


if __name__ == "__main__":
    sys.exit(SCENARIOS.main(context=PromScenario))
