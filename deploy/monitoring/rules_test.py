#!/usr/bin/env python3
"""Rule tests that can fail: promtool unit tests generated from simulated fleets, and rule
mutants that some test must kill.

    rules_test.py [--keep DIR] [--no-mutants] [--helm PATH | --no-chart]

The chart's rendering needs helm: --helm PATH, else `helm` on PATH, else the one the e2e control
plane's build cached (e2e/controlplane/build.sh). Without any, the run fails, unless --no-chart
says to leave the chart out (printed): a run that skipped it silently passed on two of three
renderings.

1. Takes every rendering as shipped: the plain file (deploy/monitoring/leasehold-rules.yaml,
   absence on `up`), the Kustomize component's PrometheusRule (absence of the base's lock) and
   the chart's (`helm template` with monitoring.rules.enabled, for lock apps/backup-lock),
   checks that the checked-in ones are what rules.py writes, that the chart's is what rules.py
   gives for that lock, and runs `promtool check rules` and the tests below on each: what ships
   is what is tested.
2. Simulates each scenario below: pods with leadership, terms and counters over time, each
   scraped every scrape interval at its own offset (skewed by up to one interval), failed
   scrapes ending their series with staleness markers, as Prometheus does. Writes promtool
   tests in which, at EVERY evaluation step of the scenario, each alert must either not fire,
   or (in a must-fire scenario, once the alert's bound has passed) fire with exactly the
   expected labels and annotations. Runs `promtool test rules`.
3. Mutants: weakens each rule (drops its `for:`, flips each comparison, drops each `or` branch
   and the absent branch, turns max_over_time into an instant vector) and requires that some
   test fails for each. A mutant that survives is a rule no test pins.
Exit status 0 when everything passed and every mutant was killed.
"""
import copy
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rules  # noqa: E402

P = rules.DEFAULTS
SI = P["scrape_interval"]
EI = P["evaluation_interval"]
LD = P["lease_duration"]
RP = P["retry_period"]
TICK = 5  # seconds between input samples; scrape offsets are multiples of it
NS, LOCK = "apps", "backup-lock"
ALERTS = ["LeaseholdNoLeader", "LeaseholdAbsent", "LeaseholdPromiseOvertaken", "LeaseholdFlapping",
          "LeaseholdRenewSlowOrFailing", "LeaseholdNotReady", "LeaseholdForeignWriter"]
# A failover's gap in the cluster: lease-duration plus client-go's largest jitter, rounded up.
FAILOVER = 20


class Pod:
    """A pod over time. `events` are (t, {attr: value}); attributes hold until changed.
    target: "gone" (no target), "up" (scraped), "down" (scrape fails, up = 0).
    restart: a new process at that instant (counters from 0).
    writes: 0 for an agent in observe mode (--agent-mode observe): it never renews, so its
    renewal counters stay 0 even while it says its pod leads."""

    def __init__(self, name, ip, offset, events):
        self.name, self.ip, self.offset = name, ip, offset
        self.events = sorted(events, key=lambda e: e[0])

    def states(self, duration):
        state = {"target": "gone", "leader": 0, "term": 0, "observed": 1, "ready": 1, "held": 1,
                 "hash": 1111, "reliable": 1, "slow": 0, "fail_every": 0, "overtaken": 0,
                 "writes": 1}
        counters = {"count": 0.0, "fast": 0.0, "failures": 0.0}
        out, i = [], 0
        for tick in range(duration // TICK + 1):
            t = tick * TICK
            while i < len(self.events) and self.events[i][0] <= t:
                ev = dict(self.events[i][1])
                if ev.pop("restart", False):
                    counters = {k: 0.0 for k in counters}
                state.update(ev)
                i += 1
            if state["target"] != "gone" and t > 0:
                if state["leader"] and state["writes"]:
                    counters["count"] += TICK / RP
                    if not state["slow"]:
                        counters["fast"] += TICK / RP
                if state["fail_every"]:
                    counters["failures"] += TICK / state["fail_every"]
            out.append((dict(state), dict(counters)))
        return out


def labels_of(pod, extra=None):
    d = {"job": "leasehold", "instance": f"{pod.ip}:8081", "namespace": NS, "pod": pod.name,
         "lock_namespace": NS, "lock_name": LOCK}
    d.update(extra or {})
    return d


def series_name(name, labels):
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def input_series(pods, duration):
    series = []
    for pod in pods:
        st = pod.states(duration)
        metrics = {
            "leasehold_is_leader": lambda s, c: s["leader"],
            "leasehold_lock_info": lambda s, c: 1,
            "leasehold_term": lambda s, c: s["term"],
            "leasehold_ready": lambda s, c: s["ready"],
            "leasehold_lock_held": lambda s, c: s["held"],
            "leasehold_holder_hash": lambda s, c: s["hash"],
            "leasehold_term_reliable": lambda s, c: s["reliable"],
            "leasehold_promise_overtaken_total": lambda s, c: s["overtaken"],
            "leasehold_renew_failures_total": lambda s, c: int(c["failures"]),
            "leasehold_renew_duration_seconds_count": lambda s, c: int(c["count"]),
            "leasehold_renew_duration_seconds_bucket": lambda s, c: int(c["fast"]),
        }
        extras = {"leasehold_lock_info": {"lock_type": "leases"},
                  "leasehold_renew_duration_seconds_bucket": {
                      "le": rules.fmt_bucket(rules.slow_bound(P))}}
        for name, fn in list(metrics.items()) + [("up", None)]:
            values, was_up = [], False
            for tick, (s, c) in enumerate(st):
                t = tick * TICK
                scrape = t % SI == pod.offset
                if not scrape:
                    values.append("_")
                    continue
                if name == "up":
                    if s["target"] == "gone":
                        values.append("stale" if was_up else "_")
                        was_up = False
                    else:
                        values.append("1" if s["target"] == "up" else "0")
                        was_up = True
                    continue
                if s["target"] == "up":
                    values.append(str(fn(s, c)))
                    was_up = True
                else:
                    values.append("stale" if was_up else "_")
                    was_up = False
            if all(v == "_" for v in values):
                continue
            if name == "up":
                lab = {k: v for k, v in labels_of(pod).items() if not k.startswith("lock_")}
            else:
                lab = labels_of(pod, extras.get(name))
            series.append({"series": series_name(name, lab), "values": " ".join(values)})
    return series


def render_annotations(rule, labels):
    def sub(text):
        text = re.sub(r"\{\{ with \$labels\.pod \}\}\{\{ \. \}\}\{\{ else \}\}"
                      r"\{\{ \$labels\.instance \}\}\{\{ end \}\}",
                      lambda m: labels.get("pod") or labels.get("instance", ""), text)
        return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), text)
    return {k: sub(v) for k, v in rule["annotations"].items()}


def expected(rule, kind, pods, lock_mode):
    """The alerts `rule` fires in a must-fire case: kind "lock" (one per lock), "pods" (one per
    listed pod), or "absent"."""
    base = {"severity": rule["labels"]["severity"]}
    if kind == "lock":
        sets = [{"lock_namespace": NS, "lock_name": LOCK}]
    elif kind == "absent":
        sets = [{}]  # absent() keeps the selector's equality matchers: the rule's labels
    else:
        sets = [labels_of(p) for p in pods]
    out = []
    for s in sets:
        labels = dict(s)
        labels.update(rule["labels"])
        labels.update(base)
        out.append({"exp_labels": labels, "exp_annotations": render_annotations(rule, labels)})
    return out


def scenarios():
    """(name, duration, pods, {alert: (kind, onset, must_fire_by, pods[, (fire_until,
    clear_from)])}). Alerts not listed must not fire at any step. The optional pair: it must
    fire until onset + fire_until and have resolved from onset + clear_from (as RESOLVES)."""
    up = {"target": "up"}
    out = []

    def two(off_a, off_b, a_events=(), b_events=()):
        pa = Pod("leasehold-a", "10.0.0.1", off_a,
                 [(0, dict(up, leader=1, term=3, hash=1))] + list(a_events))
        pb = Pod("leasehold-b", "10.0.0.2", off_b,
                 [(0, dict(up, leader=0, term=3, hash=1))] + list(b_events))
        return pa, pb

    # --- clean cases: nothing may fire, at any step --------------------------------------------
    out.append(("steady, with one transient renew failure", 1800,
                two(0, 15, [(900, {"fail_every": 5}), (905, {"fail_every": 0})]), {}))
    for off_a, off_b in ((25, 0), (0, 25)):
        # A handover by release (SIGTERM, safe mode): the new leader takes the free lock within a
        # retry-period; scrapes skewed by up to one interval the unlucky way round.
        pa, pb = two(off_a, off_b,
                     [(600, {"leader": 0, "term": 4, "hash": 2})],
                     [(604, {"leader": 1, "term": 4, "hash": 2})])
        out.append((f"handover by release, scrape offsets a={off_a}s b={off_b}s", 1800,
                    (pa, pb), {}))
    for off_a, off_b in ((25, 0), (0, 25)):
        # The leader's container crashes: its lease runs out, the follower takes over after
        # lease-duration plus jitter; the restarted process is a follower with fresh counters.
        pa, pb = two(off_a, off_b,
                     [(600, {"target": "down", "leader": 0}),
                      # The new process reads the lock only after 40 s (a slow API server):
                      # not ready meanwhile, seen by at least one scrape.
                      (610, {"target": "up", "restart": True, "observed": 0, "ready": 0}),
                      (650, {"observed": 1, "ready": 1})],
                     [(600 + FAILOVER, {"leader": 1, "term": 4, "hash": 2})])
        pa.events.append((600 + FAILOVER, {"term": 4, "hash": 2}))
        pa.events.sort(key=lambda e: e[0])
        out.append((f"leader crash and restart (failover), offsets a={off_a}s b={off_b}s", 1800,
                    (pa, pb), {}))
    # A rolling update of 3 replicas, the worst way: the leader is replaced first and hands over
    # to an old pod, which is replaced next, and so on (3 changes), then a new pod restarts
    # (a 4th) -- below the flapping threshold. Old targets vanish, new ones appear.
    pods = [
        Pod("leasehold-a", "10.0.0.1", 0,
            [(0, dict(up, leader=1, term=3, hash=1)), (600, {"leader": 0}),
             (610, {"target": "gone"})]),
        Pod("leasehold-b", "10.0.0.2", 10,
            [(0, dict(up, term=3, hash=1)), (605, {"leader": 1, "term": 4, "hash": 2}),
             (700, {"leader": 0}), (710, {"target": "gone"})]),
        Pod("leasehold-c", "10.0.0.3", 20,
            [(0, dict(up, term=3, hash=1)), (605, {"term": 4, "hash": 2}),
             (705, {"leader": 1, "term": 5, "hash": 3}), (800, {"leader": 0}),
             (810, {"target": "gone"})]),
        Pod("leasehold-d", "10.0.1.1", 5,
            [(590, dict(up, term=3, hash=1, observed=0, ready=0)), (595, {"observed": 1, "ready": 1}),
             (605, {"term": 4, "hash": 2}), (705, {"term": 5, "hash": 3}),
             (805, {"leader": 1, "term": 6, "hash": 4}),
             (1000, {"target": "down", "leader": 0}),
             (1010, {"target": "up", "restart": True}),
             (1000 + FAILOVER, {"term": 7, "hash": 5})]),
        Pod("leasehold-e", "10.0.1.2", 25,
            [(690, dict(up, term=4, hash=2)), (705, {"term": 5, "hash": 3}),
             (805, {"term": 6, "hash": 4}), (1000 + FAILOVER, {"leader": 1, "term": 7, "hash": 5})]),
        Pod("leasehold-f", "10.0.1.3", 15,
            [(790, dict(up, term=5, hash=3)), (805, {"term": 6, "hash": 4}),
             (1000 + FAILOVER, {"term": 7, "hash": 5})]),
    ]
    out.append(("rolling update of 3 replicas, worst case, then a pod restart", 2100, pods, {}))
    # Scrape gaps: the leader's target fails 3 scrapes in a row; then every target fails 2.
    pa, pb = two(25, 0,
                 [(600, {"target": "down"}), (690, {"target": "up"}),
                  (1200, {"target": "down"}), (1260, {"target": "up"})],
                 [(1200, {"target": "down"}), (1260, {"target": "up"})])
    out.append(("scrape gaps: the leader for 90s, everyone for 60s", 1800, (pa, pb), {}))

    # --- must fire ------------------------------------------------------------------------------
    pa, pb = two(0, 15,
                 [(600, {"ready": 0}), (610, {"leader": 0})], [(600, {"ready": 0})])
    out.append(("RBAC taken away from every replica: no leader, not ready", 1800, (pa, pb), {
        "LeaseholdNoLeader": ("lock", 600, 610 + LD + 2 * SI + 2 * SI + 2 * EI, []),
        "LeaseholdNotReady": ("pods", 600, 600 + 300 + SI + 2 * EI, [pa, pb]),
    }))
    pa, pb = two(0, 15, [(600, {"target": "gone"})], [(600, {"target": "gone"})])
    out.append(("every pod gone", 1800, (pa, pb), {
        "LeaseholdAbsent": ("absent", 600, 600 + SI + 300 + 2 * EI, []),
        "LeaseholdNoLeader": ("skip", 600, 0, []),  # its series are gone: Absent's case
    }))
    pa, pb = two(0, 15, [(600, {"target": "down", "leader": 0})],
                 [(600, {"target": "down"})])
    out.append(("every target down", 1800, (pa, pb), {
        "LeaseholdAbsent": ("absent", 600, 600 + SI + 300 + 2 * EI, []),
        "LeaseholdNoLeader": ("skip", 600, 0, []),
    }))
    pa, pb = two(0, 15, [], [(600, {"overtaken": 1})])
    out.append(("a promise overtaken", 1800, (pa, pb), {
        "LeaseholdPromiseOvertaken": ("pods", 600, 600 + SI + EI, [pb]),
    }))
    pc = Pod("leasehold-c", "10.0.0.3", 5, [(600, dict(up, term=3, hash=1, overtaken=1))])
    out.append(("a promise overtaken before the pod's first scrape", 1800, two(0, 15) + (pc,), {
        "LeaseholdPromiseOvertaken": ("pods", 600, 600 + SI + EI, [pc]),
    }))
    a_ev, b_ev = [], []
    for i in range(6):  # six changes of leader, one a minute
        t = 600 + 60 * i
        term = 4 + i
        a_ev.append((t, {"leader": i % 2, "term": term, "hash": term}))
        b_ev.append((t + 2, {"leader": 1 - i % 2, "term": term, "hash": term}))
    pa, pb = two(0, 15, a_ev, b_ev)
    out.append(("flapping: six changes of leader in five minutes", 2100, (pa, pb), {
        "LeaseholdFlapping": ("lock", 600, 600 + 5 * 60 + SI + 2 * EI, []),
    }))
    pa, pb = two(0, 15, [(300, {"slow": 1})])
    out.append(("renewals slower than half the renew-deadline", 1800, (pa, pb), {
        "LeaseholdRenewSlowOrFailing": ("pods", 300, 300 + 150 + 300 + SI + 2 * EI, [pa]),
    }))
    pa, pb = two(0, 15, [(300, {"fail_every": 10})])
    out.append(("renewals failing", 1800, (pa, pb), {
        "LeaseholdRenewSlowOrFailing": ("pods", 300, 300 + 300 + 2 * SI + 2 * EI, [pa]),
    }))
    pa, pb = two(0, 15, [], [(600, {"ready": 0})])
    out.append(("one replica forbidden (403)", 1800, (pa, pb), {
        "LeaseholdNotReady": ("pods", 600, 600 + 300 + SI + 2 * EI, [pb]),
    }))
    pa, pb = two(0, 15, [], [(600, {"reliable": 0})])
    out.append(("a writer that does not keep the count", 1800, (pa, pb), {
        "LeaseholdForeignWriter": ("pods", 600, 600 + SI + EI, [pb]),
    }))
    pa, pb = two(0, 15, [(600, {"hash": 0, "leader": 0})], [(600, {"hash": 0})])
    out.append(("an opaque holder", 1800, (pa, pb), {
        "LeaseholdForeignWriter": ("pods", 600, 600 + SI + EI, [pa, pb]),
        "LeaseholdNoLeader": ("skip", 600, 0, []),  # it holds the lock: not ours to judge
    }))
    out += observe_scenarios()
    return out


def observe_scenarios():
    """An operator that elects itself (controller-runtime: its own Lease, released never), with
    an observing sidecar in each of its pods and, with deploy/components/observe-watch, one
    observer in a pod of its own (the watcher, whose pod never holds the lock: always 0). The
    series are the ones observe mode exports: is_leader 1 in the holder's pod only, the
    holder's term and hash everywhere, no renewals and no promise overtaken. The operator
    fails over once (its holder crashes: the Lease expires, another pod takes it), is scaled to
    0 (every sidecar's series vanish with its pod), and comes back (a new pod takes the
    Lease)."""
    up = {"target": "up", "writes": 0}
    out = []
    for watcher in (True, False):
        pods = [
            Pod("k8up-a", "10.0.2.1", 0,
                [(0, dict(up, leader=1, term=3, hash=1)), (300, {"leader": 0}),
                 (300 + FAILOVER, {"term": 4, "hash": 2}), (600, {"target": "gone"})]),
            Pod("k8up-b", "10.0.2.2", 15,
                [(0, dict(up, term=3, hash=1)),
                 (300 + FAILOVER, {"leader": 1, "term": 4, "hash": 2}),
                 (600, {"target": "gone"})]),
            Pod("k8up-c", "10.0.2.3", 10,
                [(1200, dict(up, term=4, hash=2)), (1205, {"leader": 1, "term": 5, "hash": 3})]),
        ]
        if watcher:
            pods.append(Pod("leasehold-watch-x", "10.0.2.9", 25,
                            [(0, dict(up, term=3, hash=1)),
                             (300 + FAILOVER, {"term": 4, "hash": 2}),
                             (1205, {"term": 5, "hash": 3})]))
            # From the last "yes" scraped (before 600) the window and the `for:` run out; the
            # new pod's first scraped "yes" (after 1205) resolves it.
            fires = {"LeaseholdNoLeader": ("lock", 600, 600 + LD + 2 * SI + 2 * SI + 2 * EI, [],
                                           (600, 605 + SI + 2 * EI))}
            name = "observe mode with the watcher: operator scaled to 0 and back"
        else:
            # Without the watcher nothing reports on the lock: only Absent, once every target
            # is gone; it resolves with the new pod's first scrape.
            fires = {"LeaseholdAbsent": ("absent", 600, 600 + SI + 300 + 2 * EI, [],
                                         (595, 600 + SI + 2 * EI)),
                     "LeaseholdNoLeader": ("skip", 600, 0, [])}
            name = "observe mode without the watcher: operator scaled to 0 and back"
        out.append((name, 1800, pods, fires))
    return out


# Alerts whose fault is one event: (until when after the onset it must still fire, from when it
# must have resolved), in seconds: its window (15 m) has passed the event(s).
RESOLVES = {
    "LeaseholdPromiseOvertaken": (15 * 60 - 2 * SI, 15 * 60 + 2 * SI + EI),
    # Six changes from the onset to onset + 5 m: the first leaves the window at onset + 15 m.
    "LeaseholdFlapping": (15 * 60, 5 * 60 + 15 * 60 + 2 * SI + EI),
}


def test_file(rule_file, groups, lock_mode, only=None):
    """`only`: the one alert to check (a mutant's rule file holds that rule alone)."""
    by_name = {r["alert"]: r for r in groups[0]["rules"]}
    tests = []
    for name, duration, pods, fires in scenarios():
        steps = []
        for t in range(EI, duration + 1, EI):
            for alert in ALERTS if only is None else [only]:
                kind, onset, by_t, fpods, *resolve = fires.get(alert, (None,) * 4)
                if kind == "skip" and t >= onset:
                    continue
                if kind in (None, "skip") or t < onset:
                    exp = []
                elif t >= by_t:
                    exp = expected(by_name[alert], kind, fpods, lock_mode)
                    # When it must resolve: the scenario's (a fault that ends), else the
                    # alert's own (a fault that passes out of its window).
                    fire_until, clear_from = (resolve[0] if resolve
                                              else RESOLVES.get(alert, (None, None)))
                    if fire_until is not None and t > onset + fire_until:
                        # The fault's window is passing, then has passed: it must resolve.
                        if t < onset + clear_from:
                            continue
                        exp = []
                else:
                    continue  # pending: between the fault and its bound
                steps.append({"eval_time": f"{t}s", "alertname": alert, "exp_alerts": exp})
        tests.append({"name": name, "interval": f"{TICK}s",
                      "input_series": input_series(pods, duration),
                      "alert_rule_test": steps})
    return {"rule_files": [rule_file], "evaluation_interval": f"{EI}s", "tests": tests}


def promtool(*args, cwd):
    return subprocess.run(["promtool", *args], cwd=cwd, capture_output=True, text=True)


def write_rules(path, groups):
    with open(path, "w") as f:
        f.write(rules.dump({"groups": groups}))


def run_suite(work, groups, lock_mode, tag, only=None):
    shipped = groups
    if only is not None:
        groups = copy.deepcopy(groups)
        groups[0]["rules"] = [r for r in groups[0]["rules"] if r["alert"] == only]
    write_rules(os.path.join(work, f"{tag}.rules.yaml"), groups)
    test_path = os.path.join(work, f"{tag}.test.yaml")
    with open(test_path, "w") as f:
        f.write(rules.dump(test_file(f"{tag}.rules.yaml", shipped, lock_mode, only)))
    return promtool("test", "rules", f"{tag}.test.yaml", cwd=work)


COMPARISON = re.compile(r"(?<![=!<>])(==|!=|>=|<=|>|<)(?!=)")
FLIP = {"==": "!=", "!=": "==", ">=": "<", "<=": ">", ">": "<=", "<": ">="}


def split_or(expr):
    """Top-level ` or ` branches of an expression."""
    parts, depth, cur, i = [], 0, "", 0
    while i < len(expr):
        c = expr[i]
        depth += c == "("
        depth -= c == ")"
        if depth == 0 and expr.startswith(" or ", i):
            parts.append(cur)
            cur, i = "", i + 4
            continue
        cur += c
        i += 1
    return parts + [cur]


def mutants(groups):
    """(name, mutated groups) for every weakening of every rule."""
    out = []
    for idx, rule in enumerate(groups[0]["rules"]):
        alert = rule["alert"]

        def mutate(fn, what):
            g = copy.deepcopy(groups)
            fn(g[0]["rules"][idx])
            out.append((alert, f"{alert}: {what}", g))

        if "for" in rule:
            mutate(lambda r: r.pop("for"), "drop for:")
        expr = rule["expr"]
        # Comparisons outside label matchers and strings.
        scrub = re.sub(r"\{[^}]*\}", lambda m: "#" * len(m.group(0)), expr)
        for m in COMPARISON.finditer(scrub):
            new = expr[:m.start()] + FLIP[m.group(1)] + expr[m.end():]
            mutate(lambda r, new=new: r.__setitem__("expr", new),
                   f"flip {m.group(1)} at {m.start()}")
        branches = split_or(expr)
        if len(branches) > 1:
            for i, b in enumerate(branches):
                rest = " or ".join(x for j, x in enumerate(branches) if j != i)
                what = "drop the absent branch" if b.startswith("absent(") else f"drop or-branch {i}"
                mutate(lambda r, rest=rest: r.__setitem__("expr", rest), what)
        elif expr.startswith("absent("):
            mutate(lambda r: r.__setitem__("expr", "vector(1) == 0"), "drop the absent branch")
        if "max_over_time(" in expr:
            new = re.sub(r"max_over_time\(([^\[]+)\[[^\]]+\]\)", r"\1", expr)
            mutate(lambda r, new=new: r.__setitem__("expr", new), "max_over_time -> instant")
        if " unless " in expr:
            new = re.sub(r" unless [^)]*\)", ")", expr)
            mutate(lambda r, new=new: r.__setitem__("expr", new), "drop unless")
    return out


def find_helm(given=None):
    if given:
        return given if os.access(given, os.X_OK) else None
    found = shutil.which("helm")
    if found:
        return found
    cache = os.path.expanduser("~/.cache/leasehold-e2e")
    for d in sorted(os.listdir(cache)) if os.path.isdir(cache) else []:
        cand = os.path.join(cache, d, "bin", "helm")
        if os.path.exists(cand):
            return cand
    return None


def helm_groups(helm, ns, lock):
    chart = os.path.join(rules.ROOT, "deploy/helm/leasehold")
    r = subprocess.run([helm, "template", "t", chart, "--namespace", ns,
                        "--set", "monitoring.rules.enabled=true",
                        "--set", f"leaderElection.lockName={lock}",
                        "--show-only", "templates/prometheusrule.yaml"],
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit("helm template failed: " + r.stderr)
    return yaml.safe_load(r.stdout)["spec"]["groups"]


def suites(helm):
    """(tag, groups as shipped, lock selector, lock of the test series); the chart's only with
    `helm` (None: left out)."""
    out = []
    with open(os.path.join(rules.ROOT, "deploy/monitoring/leasehold-rules.yaml")) as f:
        out.append(("plain", yaml.safe_load(f)["groups"], None, ("apps", "backup-lock")))
    with open(os.path.join(rules.ROOT, "deploy/components/monitoring/prometheusrule.yaml")) as f:
        kust = yaml.safe_load(f)["spec"]["groups"]
    out.append(("kustomize", kust, rules.KUSTOMIZE_LOCK, ("apps", rules.KUSTOMIZE_LOCK[1])))
    if helm:
        out.append(("helm", helm_groups(helm, "apps", "backup-lock"), ("apps", "backup-lock"),
                    ("apps", "backup-lock")))
    return out


def main(argv):
    keep = None
    if "--keep" in argv:
        keep = argv[argv.index("--keep") + 1]
    do_mutants = "--no-mutants" not in argv
    helm = None
    if "--no-chart" in argv:
        print("--no-chart: the chart's rendering is NOT tested in this run")
    else:
        given = argv[argv.index("--helm") + 1] if "--helm" in argv else None
        helm = find_helm(given)
        if helm is None:
            print(f"helm not found ({'--helm ' + given if given else 'PATH, ~/.cache/leasehold-e2e'}"
                  f"): build it with e2e/controlplane/build.sh, or pass --no-chart to leave the "
                  f"chart's rules untested", file=sys.stderr)
            return 1
    work = keep or tempfile.mkdtemp(prefix="leasehold-rules-")
    os.makedirs(work, exist_ok=True)
    failed = False
    global NS, LOCK
    if rules.main(["check"]) != 0:
        return 1
    all_suites = suites(helm)
    # The shipped renderings are what the source gives (the chart's with its release's lock).
    want = {"plain": rules.groups(), "kustomize": rules.groups({}, rules.KUSTOMIZE_LOCK),
            "helm": rules.groups({}, ("apps", "backup-lock"))}
    for tag, groups, _, _ in all_suites:
        same = groups == want[tag]
        print(f"rendering {tag} is the source's: {'ok' if same else 'FAILED'}")
        failed = failed or not same
    try:
        for tag, groups, lock_mode, (NS, LOCK) in all_suites:
            write_rules(os.path.join(work, f"{tag}.rules.yaml"), groups)
            r = promtool("check", "rules", f"{tag}.rules.yaml", cwd=work)
            print(f"promtool check rules ({tag}): {'ok' if r.returncode == 0 else 'FAILED'}")
            if r.returncode:
                print(r.stdout + r.stderr)
                failed = True
            r = run_suite(work, groups, lock_mode, tag)
            n = len(scenarios())
            print(f"promtool test rules ({tag}, {n} scenarios, every {EI}s step): "
                  f"{'ok' if r.returncode == 0 else 'FAILED'}")
            if r.returncode:
                print(r.stdout[-6000:] + r.stderr[-2000:])
                failed = True
        if do_mutants and not failed:
            survived = 0
            total = 0
            for tag, groups, lock_mode, (NS, LOCK) in all_suites:
                if tag == "helm":
                    continue  # the same rules as "kustomize" but for the lock's selector
                for alert, what, g in mutants(groups):
                    total += 1
                    r = run_suite(work, g, lock_mode, f"mutant-{tag}", only=alert)
                    if r.returncode == 0:
                        survived += 1
                        print(f"  SURVIVED ({tag}) {what}")
                    else:
                        first = next((l.strip() for l in (r.stdout + r.stderr).splitlines()
                                      if "alertname:" in l), "?")
                        print(f"  killed   ({tag}) {what}: {first[:90]}")
            print(f"rule mutants: {total - survived} of {total} killed")
            failed = failed or survived > 0
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
