"""Observe mode on real pods (CTest label `node`): an operator that elects itself, with the
shipped observing sidecar beside it, and a Prometheus that finds the pods the way a user's does.

    LEASEHOLD_NODE_DIR=build/e2e-node python3 -m e2e.scenarios.node_observe observe_rollout

The operator (e2e/crmanager) is the example's `app` (cluster.operator_container, operator_rbac)
in the "observe" variant (cluster.VARIANTS), rendered and checked as every node scenario's.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from e2e.lib import judge as verdict
from e2e.lib.common import REPO, free_port, start_threads, wait_until
from e2e.lib.lockwatch import LockWatcher
from e2e.lib.prometheus import Prometheus
from e2e.lib.runner import Registry
from e2e.lib.timings import DEFAULTS
from e2e.node import cluster, judge
from e2e.node.bounds import CLOCK_SLACK, TAKEOVER_SLACK
from e2e.node.cluster import cluster_time, log
from e2e.node.handover import leader_label, sidecar_log_events, wait_gone, wait_settled
from e2e.node.helm import HelmRun
from e2e.node.rollout import judge_lifetimes, replace_all
from e2e.node.run import NodeScenario, Run, repeat

# The shipped timings, which are also the operator's (controller-runtime's defaults).
LEASE, RENEW, RETRY = DEFAULTS
# kObserveMargin (src/election/observer.h): an observer's "yes" ends this long before any rival
# may take over (docs/safety.md, "Observe mode"), by the one clock of the node.
OBSERVE_MARGIN = 2.0
# A takeover after the holder's pod is gone (no release): the lease waited out, two jittered tries,
# the new holder's sidecar's yes within two retry-periods (a watch event, then Gets), and a pod's
# startup and scheduling.
TAKEOVER_WAIT = LEASE + 2 * 1.2 * RETRY + 2 * RETRY + 30

SCENARIOS = Registry()
scenario = SCENARIOS.add

LEADING_RE = re.compile(r"LEADING (\S+) (\S+) (\S+) (\S+)")
STOPPED_RE = re.compile(r"STOPPED (\S+) (\S+)")


class ObserveRun(Run):
    """The observe variant: the operator in `app`, its Lease the lock (LEASEHOLD_LOCK_NAME),
    the watcher pod beside the operator's pods (sampled too: it never says yes)."""

    def terms(self, t1):
        """The operator's terms as the Lease holds them: [(pod, holder, start, end)], from its
        acquireTime (its LEADING line; else when the lock watch saw it) to the next term's start
        or t1, also after its manager stopped (nobody else may take it before the lease ran out)."""
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
    """No sidecar said yes while another pod's operator held the Lease: the other pods' samples
    against each term as two yes points (its start and end), for e2e/lib/judge.py's definite
    rule; answers in flight across a term's edge are logged."""
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
    # On a native sidecar: the operator exits at its SIGTERM without releasing, then the sidecar
    # says "no" from its own SIGTERM on (the observer's stop).
    assert last.send <= term + CLOCK_SLACK, \
        f"{old} said yes {last.send - term:.3f}s after its sidecar's SIGTERM"
    # The bound of any observer (docs/safety.md, "Observe mode"), whatever stops it, from S: the
    # send of a Get that read the version before the last renewal seen (written and seen after S).
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
    nxt = run.next_yes(t_del, leader, TAKEOVER_WAIT, "the next holder's first yes")
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
    old, t_r, new = replace_all(run, run.rollout_restart, f"rollout #{i}", TAKEOVER_WAIT)
    check_follows(run, new)
    changes = [(round(t - t_r, 3), h) for t, h in run.lock_changes(t_r)]
    order = sorted(old, key=lambda p: run.deleted.get(p, float("inf")))
    log(f"rollout #{i}: {leader} -> {new}; Lease changes {changes}; old pods deleted in the "
        f"order {order}; took {time.time() - t_r:.1f}s")
    assert order[-1] == leader, f"rollout #{i}: the holder's pod {leader} was not deleted last"
    assert [p for _, p in changes] == [new], f"rollout #{i}: Lease changes {changes}, not one to {new}"
    nxt = run.sampler.first_yes_after(run.deleted[leader], exclude=(leader,))
    results.append(dict(yes_ended(run, leader, nxt, run.deleted[leader]), what=f"rollout #{i}"))


@scenario
def observe_rollout(s):
    """An operator that elects itself beside the shipped observing sidecar: NODE_REPEAT times a
    rollout (rollout_round) and a DELETE of the holder's pod (delete_holder_round), each judged
    by yes_ended; judge_terms and judge_lifetimes over the whole run."""
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


# ------------------------------------------------------------------ Prometheus

class Quiet:
    """A Run without instruments (no sampler, lock watch or log followers): deployed, Ready."""

    def start(self):
        self.deployment = self.deploy()
        self.wait_ready(self.replicas)
        return self


class QuietRun(Quiet, Run):
    pass


class QuietHelmRun(Quiet, HelmRun):
    pass


# The scrape interval here (s), faster than the documented job's; the rule file's own group
# interval wins over the global evaluation interval.
SCRAPE = 5


def documented_job():
    """The pod-role scrape job of docs/runbooks.md ("Scraping"), as the page shows it."""
    text = (REPO / "docs" / "runbooks.md").read_text()
    section = text[text.index("## Scraping"):]
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    job = yaml.safe_load(block)[0]
    assert job["kubernetes_sd_configs"] == [{"role": "pod"}], job
    return job


def seconds(d):
    """A Prometheus duration (1m15s) in seconds."""
    units = {"h": 3600, "m": 60, "s": 1}
    parts = re.findall(r"(\d+)([hms])", d)
    assert "".join(n + u for n, u in parts) == d, d
    return sum(int(n) * units[u] for n, u in parts)


RULES = REPO / "deploy" / "monitoring" / "leasehold-rules.yaml"


def no_leader_rule():
    """(group interval, window, for:) of LeaseholdNoLeader in the shipped rule file (s)."""
    group = yaml.safe_load(RULES.read_text())["groups"][0]
    rule = next(r for r in group["rules"] if r.get("alert") == "LeaseholdNoLeader")
    window = re.search(r"\[(\w+)\]", rule["expr"]).group(1)
    return seconds(group["interval"]), seconds(window), seconds(rule["for"])


def prometheus_binary():
    """LEASEHOLD_NODE_PROMETHEUS (the binary or its bin dir), else e2e/node/prometheus/build.sh's
    (cached; the e2e_node_prometheus fixture builds it first; why not Debian's: build.sh)."""
    p = os.environ.get("LEASEHOLD_NODE_PROMETHEUS")
    if not p:
        r = cluster.host_run(["bash", str(REPO / "e2e" / "node" / "prometheus" / "build.sh")],
                             capture_output=True, text=True)
        out = r.stdout.strip().splitlines()
        assert r.returncode == 0 and out, f"prometheus/build.sh: {r.returncode}: {r.stderr[-2000:]}"
        p = out[-1]
    b = Path(p) / "prometheus" if Path(p).is_dir() else Path(p)
    assert b.is_file() and os.access(b, os.X_OK), f"no prometheus binary at {b}"
    return b


class NodePrometheus(Prometheus):
    """Prometheus in this process's network namespace, discovering pods from the node's apiserver
    with the documented job and a ServiceAccount's token, the shipped rule file unchanged."""

    def __init__(self, node, token_file):
        self.dir = Path(tempfile.mkdtemp(prefix="leasehold-prom-node-"))
        self.port = free_port()
        job = documented_job()
        job["scrape_interval"] = f"{SCRAPE}s"
        env = node.cp_env
        # What in-cluster discovery would take from the pod: the apiserver, its CA, the token.
        job["kubernetes_sd_configs"][0].update({
            "api_server": f"https://{env['APISERVER_HOST']}:{env['APISERVER_PORT']}",
            "authorization": {"credentials_file": str(token_file)},
            "tls_config": {"ca_file": env["CA_CRT"]}})
        (self.dir / "prometheus.yml").write_text(yaml.safe_dump({
            "global": {"scrape_interval": f"{SCRAPE}s", "evaluation_interval": f"{SCRAPE}s"},
            "rule_files": [str(RULES)], "scrape_configs": [job]}))
        self.proc = None

    def start(self, binary):
        self.logf = open(self.dir / "prometheus.log", "wb")
        self.proc = subprocess.Popen(
            [str(binary), f"--config.file={self.dir / 'prometheus.yml'}",
             f"--storage.tsdb.path={self.dir / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--storage.tsdb.retention.time=1h"],
            stdout=self.logf, stderr=subprocess.STDOUT, start_new_session=True)

        def version():  # the build info, once the HTTP API answers
            assert self.proc.poll() is None, f"prometheus exited {self.proc.returncode}: {self.log()}"
            try:
                return self.version()
            except OSError:
                return None
        v = wait_until(version, 60, 0.2, what="prometheus's HTTP API")
        log(f"prometheus {v} in the node's network namespace on "
            f"127.0.0.1:{self.port}")
        return self

    def alerts(self):
        return self.api("alerts")["alerts"]


def prometheus_rbac(ns, name):
    """What the pod-role job needs: list and watch on pods, cluster-wide (no `namespaces:`)."""
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "prometheus",
                                                                     "namespace": ns}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": name},
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": name},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
         "subjects": [{"kind": "ServiceAccount", "name": "prometheus", "namespace": ns}]},
    ]


def side_by_side(fn, runs, what):
    """fn(run) for every run at once (each waits on the node, not the CPU); raises with every
    run's error. A run that failed to start is stopped by the scenario's context."""
    errors = []

    def one(r):
        try:
            fn(r)
        except BaseException as e:  # noqa: BLE001 - every run's error, raised below
            errors.append((r.ns, e))
    for t in start_threads(one, [(r,) for r in runs]):
        t.join()
    assert not errors, f"{what}: {errors}"


def all_pods(run):
    """{pod: IP} of the namespace's running pods (the watcher's too)."""
    items = run.node.api("GET", f"/api/v1/namespaces/{run.ns}/pods")["items"]
    return {p["metadata"]["name"]: p["status"].get("podIP") for p in items
            if not p["metadata"].get("deletionTimestamp") and p["status"].get("phase") == "Running"}


def check_scraped(prom, runs):
    """Every running pod of every run is a target that is up, on its pod IP, labelled with its
    namespace and pod; every lock has leasehold_is_leader series. Returns the lock keys."""
    want = {(r.ns, p): ip for r in runs for p, ip in all_pods(r).items()}

    def scraped():
        got = {}
        for x in prom.query("up"):
            m = x["metric"]
            got[(m.get("namespace"), m.get("pod"))] = (m["instance"].rsplit(":", 1)[0], x["value"][1])
        missing = {k: v for k, v in want.items() if got.get(k) != (v, "1")}
        return None if missing else got
    try:
        wait_until(scraped, 60, 1, "every pod a target, up on its pod IP")
    except AssertionError:
        log(f"targets: {json.dumps(prom.api('targets')['activeTargets'])[:3000]}")
        raise
    locks = {(r.ns, r.lock_name) for r in runs}
    series = {(x["metric"]["lock_namespace"], x["metric"]["lock_name"]): x["value"][1]
              for x in prom.query("max by (lock_namespace, lock_name) (leasehold_is_leader)")}
    log(f"up == 1 on {len(want)} pod IPs in {len({n for n, _ in want})} namespaces; "
        f"leasehold_is_leader by lock: { {f'{n}/{l}': v for (n, l), v in series.items() if (n, l) in locks} }")
    assert locks <= set(series), f"no leasehold_is_leader for {locks - set(series)}"
    return locks


def alert_state(prom, name, lock):
    for a in prom.alerts():
        lb = a["labels"]
        if lb["alertname"] == name and (lb.get("lock_namespace"), lb.get("lock_name")) == lock:
            return a["state"]
    return None


def others_firing(prom, runs, allowed):
    """Alerts firing for these runs' locks or pods other than `allowed` (alertname, lock)."""
    mine = {r.ns for r in runs}
    out = []
    for a in prom.alerts():
        lb = a["labels"]
        key = (lb["alertname"], (lb.get("lock_namespace"), lb.get("lock_name")))
        if a["state"] == "firing" and key not in allowed and (
                lb.get("lock_namespace") in mine or lb.get("namespace") in mine):
            out.append(lb)
    return out


@scenario
def prometheus_discovery(s):
    """Prometheus finds the pods the way a user's does (NodePrometheus) in every shipped variant,
    each in its own namespace (check_scraped); with the operator scaled to 0, LeaseholdNoLeader
    fires for its lock (the watcher's series) in time; scaled back, it resolves; nothing else
    fires for these locks."""
    runs = [s.run("native", cls=QuietRun, replicas=2), s.run("classic", cls=QuietRun, replicas=2),
            s.run("gate", cls=QuietRun, replicas=2), s.run("native", cls=QuietHelmRun, replicas=2),
            s.run("observe", cls=QuietRun, replicas=2)]
    observe = runs[-1]
    t0 = time.time()
    side_by_side(lambda r: r.start(), runs, "deploying")
    log(f"5 deployments Ready in {time.time() - t0:.1f}s: {[r.ns for r in runs]}")
    prom_ns = f"prom-{observe.ns.split('-')[-1]}"
    cluster_name = f"leasehold-e2e-prometheus-{prom_ns}"  # cluster-scoped: deleted below
    prom, tmp = None, Path(tempfile.mkdtemp(prefix="leasehold-prom-token-"))
    try:
        s.node.kubectl("create", "namespace", prom_ns)
        s.node.kubectl("apply", "-f", "-",
                       input=yaml.safe_dump_all(prometheus_rbac(prom_ns, cluster_name)))
        token = s.node.kubectl("create", "token", "prometheus", "-n", prom_ns, "--duration=1h")
        tok = tmp / "token"
        tok.write_text(token.strip())
        prom = NodePrometheus(s.node, tok)
        prom.start(prometheus_binary())
        t_p = time.time()
        locks = check_scraped(prom, runs)
        log(f"discovered and scraped in {time.time() - t_p:.1f}s")
        lock = (observe.ns, observe.lock_name)
        interval, window, hold = no_leader_rule()
        # Scale the operator to 0: its pods' series go stale; the watcher's 0 stays.
        t_down = time.time()
        s.node.kubectl("scale", f"deployment/{observe.deployment}", "-n", observe.ns, "--replicas=0")
        wait_until(lambda: not observe.node.pods(observe.ns), 120, 0.5, "the operator's pods gone")
        t_gone = time.time()
        # Fires no earlier than the window (after the last 1 scraped) and `for:`, and no later
        # than those plus an evaluation interval and a scrape after the pods were gone.
        fire_max = window + hold + interval + SCRAPE + 15
        wait_until(lambda: alert_state(prom, "LeaseholdNoLeader", lock) == "firing",
                   t_gone - time.time() + fire_max, 1, "LeaseholdNoLeader firing")
        t_fire = time.time()
        log(f"LeaseholdNoLeader fired {t_fire - t_down:.1f}s after the scale to 0 ({t_gone - t_down:.1f}s "
            f"until the pods were gone; rule: window {window}s, for {hold}s, evaluated every {interval}s)")
        # (the last 1 scraped at most a scrape before the scale: yes until the sidecar's SIGTERM)
        assert t_fire - t_down >= window + hold - SCRAPE, \
            f"fired {t_fire - t_down:.1f}s after the scale to 0"
        watcher = [p for p in all_pods(observe) if p.startswith("leasehold-watch")]
        reporters = prom.query(f'leasehold_is_leader{{lock_namespace="{lock[0]}"}}')
        assert [x["metric"]["pod"] for x in reporters] == watcher, reporters
        s.node.kubectl("scale", f"deployment/{observe.deployment}", "-n", observe.ns, "--replicas=2")
        t_up = time.time()
        observe.wait_ready(2)
        resolve_max = LEASE + 2 * RETRY + SCRAPE + interval + 30
        wait_until(lambda: alert_state(prom, "LeaseholdNoLeader", lock) is None, resolve_max, 1,
                   "LeaseholdNoLeader resolved")
        log(f"LeaseholdNoLeader resolved {time.time() - t_up:.1f}s after the scale back to 2")
        others = others_firing(prom, runs, {("LeaseholdNoLeader", lock)})
        assert not others, f"other alerts firing for these locks: {others}"
        log(f"prometheus discovery: {len(locks)} locks; the whole scenario {time.time() - t0:.1f}s")
        side_by_side(lambda r: r.stop(False), runs, "deleting the namespaces")
    finally:
        if prom is not None:
            prom.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        s.node.kubectl("delete", "clusterrolebinding,clusterrole", cluster_name,
                       "--ignore-not-found", check=False)
        s.node.kubectl("delete", "namespace", prom_ns, "--ignore-not-found", "--wait=false",
                       check=False)


if __name__ == "__main__":
    sys.exit(SCENARIOS.main(context=NodeScenario))
