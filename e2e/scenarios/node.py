"""Scenarios on real pods (CTest label `node`): the shipped overlays run by a real kubelet on the
one-node cluster of e2e/node (node.sh, started once per run by the e2e_node_start fixture).

    LEASEHOLD_NODE_DIR=build/e2e-node python3 -m e2e.scenarios.node native_delete_leader

Each scenario runs in a NodeScenario and its Runs (e2e/node/run.py: the shipped manifests, the
instruments, the evidence on failure). NODE_REPEAT=N repeats the timed part N times.
"""

import json
import math
import re
import shutil
import sys
import time
from pathlib import Path

from e2e.lib import judge as verdict
from e2e.lib.common import wait_until
from e2e.lib.runner import Registry
from e2e.lib.timings import DEFAULTS
from e2e.node import judge
from e2e.node.bounds import CLOCK_SLACK, FAILOVER_BOUND, RELEASE_TO_YES_BOUND
from e2e.node.cluster import log
from e2e.node.lease import GATE_MARGIN, LeaseTracker
from e2e.node.helm import CHART, HELM_RELEASE, HelmRun, yaml_docs
from e2e.node.handover import (delete_leader_round, delete_settled_leader, leader_label,
                               log_stop_delay, sidecar_log_events, wait_gone)
from e2e.node.pods import restarts, signal_container
from e2e.node.rollout import judge_rollouts, rolling_update
from e2e.node.run import NodeScenario, repeat
from e2e.node.work import assert_gated_runs_disjoint, gated_runs, given, running_cmd, wait_cmd_on

# Shipped timings (deploy/base, the product's defaults): the scenarios run them unchanged.
LEASE, RENEW, RETRY = DEFAULTS

PARENT_CHART = Path(__file__).resolve().parents[1] / "node" / "parent-chart"

SCENARIOS = Registry()
scenario = SCENARIOS.add


@scenario
def native_delete_leader(s):
    with s.run("native") as run:
        t0 = time.time()
        leader = run.single_leader()
        log(f"leader {leader}; label on {leader_label(run, leader)}")
        results = []
        for i in range(repeat()):
            delete_leader_round(run, results)
        holders = judge_deletions(run, t0, results, "native")
        for pod in set(holders):
            assert run.units().get(pod), f"holder {pod} did no unit of work"
        log(f"pods Ready in {run.ready_s:.1f}s; results: " + json.dumps(results))


@scenario
def gate_handovers(s):
    """The gate component on the native overlay, exactly one CMD: deletion of the leader pod,
    SIGKILL of the sidecar alone, a liveness restart of a SIGSTOPped sidecar. The gated runs
    never intersect, each stops by the last validUntil its gate received less the gate's margin,
    and the judge covers the whole run (the killed and the stopped sidecar exempt until back)."""
    with s.run("gate") as run:
        t0 = time.time()
        leader = run.single_leader()
        wait_cmd_on(run, leader)
        log(f"gate: leader {leader}, CMD on {running_cmd(run)}, {len(run.ready_pods())} Ready")
        holes, room = [], []  # exemptions; s each CMD stopped before validUntil - margin
        # 1. deletion of the leader pod (NODE_REPEAT times: the timing-bound part)
        results = []
        for i in range(repeat()):
            leader = run.single_leader()
            wait_cmd_on(run, leader)
            track = cmd_stop_tracker(run, leader)
            t_del, nxt = delete_settled_leader(run, leader)
            failover = nxt.recv - t_del
            log(f"gate: deleted {leader}; {nxt.pod} said yes {failover * 1000:.0f} ms later")
            log_stop_delay(run, leader, t_del)
            wait_cmd_on(run, nxt.pod)
            room.append(cmd_stopped_in_time(run, track))
            results.append(("delete", failover))
            wait_gone(run, leader)
            run.wait_ready(run.replicas)
            assert_gated_runs_disjoint(run)
        # 2. SIGKILL of the leader's sidecar alone
        leader = run.single_leader()
        wait_cmd_on(run, leader)
        track = cmd_stop_tracker(run, leader)
        r0 = restarts(run, leader, "leasehold")
        t_kill = time.time()
        signal_container(run, leader, "leasehold", "SIGKILL")
        wait_until(lambda: leader not in running_cmd(run), 10, 0.05, f"CMD stopped on {leader}")
        stop_s = gated_runs(run)[leader][-1][1] - t_kill
        log(f"gate: sidecar SIGKILLed; CMD stopped {stop_s * 1000:.0f} ms later")
        assert stop_s <= 1.0, f"CMD ran {stop_s:.3f}s after its sidecar was killed"
        room.append(cmd_stopped_in_time(run, track))
        wait_until(lambda: restarts(run, leader, "leasehold") > r0, 60, 0.2, "sidecar restarted")
        new = run.single_leader(timeout=LEASE + 30)
        wait_cmd_on(run, new)
        holes.append(verdict.Exemption(leader, t_kill, time.time(), "sidecar SIGKILLed, "
                                       "until restarted and a leader followed"))
        sigkill_stop = stop_s
        assert_gated_runs_disjoint(run)
        # 3. liveness: SIGSTOP the leader's sidecar past period x failureThreshold + timeout
        leader = new
        track = cmd_stop_tracker(run, leader)
        r0 = restarts(run, leader, "leasehold")
        t_stop = time.time()
        signal_container(run, leader, "leasehold", "SIGSTOP")
        def cmd_stopped():  # the Lease polled meanwhile: a renew sent before the SIGSTOP
            track.poll()    # may be stored after it
            return leader not in running_cmd(run)
        wait_until(cmd_stopped, LEASE, 0.1, f"CMD stopped on {leader}")
        log(f"gate: sidecar stopped; CMD stopped {time.time() - t_stop:.1f}s later")
        room.append(cmd_stopped_in_time(run, track))
        wait_until(lambda: restarts(run, leader, "leasehold") > r0, 120, 0.5,
                   "the kubelet's liveness restart of the stopped sidecar")
        log(f"gate: liveness restart {time.time() - t_stop:.1f}s after SIGSTOP")
        new = run.single_leader(timeout=LEASE + 30)
        wait_cmd_on(run, new)
        holes.append(verdict.Exemption(leader, t_stop, time.time(), "sidecar SIGSTOPped, "
                                       "until its liveness restart and a leader followed"))
        assert_gated_runs_disjoint(run)
        run.judge(t0 + 1, time.time() - 1, holes, require_handover=True)
        holders = run.holder_pods()
        log(f"gate: lock history {holders}; results {results}")
        assert len(set(holders)) >= 3, f"expected >= 3 holders, history {holders}"
        log(f"gate: failover (s) {[round(x, 3) for _, x in results]}; CMD stopped "
            f"{sigkill_stop:.3f}s after its sidecar's SIGKILL; before validUntil - margin by "
            f"(s) {[round(x, 3) for x in room]}")
        worst = max(x for _, x in results)
        assert worst <= FAILOVER_BOUND, f"graceful failover {worst:.3f}s > {FAILOVER_BOUND}s"


def cmd_stop_tracker(run, leader):
    """A LeaseTracker of `leader`, with the number of CMD runs so far (its gate stops the last)."""
    track = LeaseTracker(run, leader)
    assert track.last_renew is not None, f"the Lease does not name {leader}"
    track.n_runs = len(gated_runs(run)[leader])
    return track


def cmd_stopped_in_time(run, track):
    """CMD's run on track.pod ended by the last validUntil its gate received (<= the last stored
    renew + renew-deadline) less the gate's margin. Returns the room left (s)."""
    track.poll()
    end = gated_runs(run)[track.pod][track.n_runs - 1][1]
    return verdict.stopped_before(f"CMD of {track.pod}", end,
                                  track.last_renew + RENEW + CLOCK_SLACK, GATE_MARGIN)


def judge_deletions(run, t0, results, what):
    """The judge over the whole run, a handover required, and the rounds' results against the
    lock's history and FAILOVER_BOUND. Returns the lock's holders."""
    run.judge(t0 + 1, time.time() - 1, require_handover=True)
    holders = run.holder_pods()
    log(f"{what}: lock history {holders}")
    for r in results:
        assert r["leader"] in holders and r["next"] in holders, (r, holders)
    fo = [r["failover_s"] for r in results]
    log(f"{what}: failover (s) {[round(x, 3) for x in fo]}")
    assert max(fo) <= FAILOVER_BOUND, f"graceful failover {max(fo):.3f}s > {FAILOVER_BOUND}s"
    return holders


STOPPED_RE = re.compile(r"LHSTOPPED at=(\d+)")


@scenario
def classic_delete_leader(s):
    """The shipped classic overlay (ConfigMap lock, the app's preStop hook: stop file, then POST
    /release): deletion of the leader's pod. The sidecar, SIGTERMed while the hook runs, stops
    saying yes at once and releases only on the hook's POST, after the app stopped."""
    with s.run("classic") as run:
        t0 = time.time()
        results = []
        for i in range(repeat()):
            leader = run.single_leader()
            run.wait_units(leader, 3)
            t_del, nxt = delete_settled_leader(run, leader)
            failover = nxt.recv - t_del
            stop_delay = log_stop_delay(run, leader, t_del)
            wait_gone(run, leader)
            run.wait_ready(run.replicas)
            run.wait_units(run.single_leader(), 3)
            app = run.followers[(leader, "app")].text()
            m = STOPPED_RE.search(app)
            assert m, f"{leader}'s app never saw the preStop hook's stop file"
            stopped = int(m.group(1)) / 1e6
            last_end = max(u["end"] for u in judge.parse_units(app))
            term, rel, _ = sidecar_log_events(run, leader)
            assert term is not None and rel is not None, f"no SIGTERM/release lines from {leader}"
            # safe: the release follows the app's stop (ms stamps against us stamps)
            assert rel + 0.001 >= stopped >= last_end, (rel, stopped, last_end)
            log(f"classic: deleted {leader}; app stopped +{stopped - t_del:.3f}s, released "
                f"+{rel - t_del:.3f}s, {nxt.pod} said yes +{failover:.3f}s")
            results.append({"leader": leader, "next": nxt.pod, "failover_s": failover,
                            "stopped": stopped - t_del, "released": rel - t_del,
                            "kubelet_signal_s": stop_delay[1]})
        judge_deletions(run, t0, results, "classic")


@scenario
def native_sidecar_alone(s):
    """SIGTERM of the native sidecar alone (a liveness failure, `crictl stop`, an in-place resize)
    while `app` works on a "yes" still valid for seconds. No acknowledgement comes, so `safe`
    releases only once the last validUntil has passed (`immediate` let two pods' units intersect
    by 2.1-2.3 s here): the rival's first yes comes after it, and within renew-deadline +
    RELEASE_TO_YES_BOUND of the SIGTERM; the restarted sidecar follows."""
    with s.run("native", app_env={"LHAPP_UNIT_MS": 3000, "LHAPP_MARGIN_MS": 500}) as run:
        leader = run.single_leader()
        run.wait_units(leader, 1, timeout=60)
        n0 = len(run.units()[leader])
        time.sleep(0.5)  # inside the next unit, begun on a fresh yes
        r0 = restarts(run, leader, "leasehold")
        t = time.time()
        signal_container(run, leader, "leasehold", "SIGTERM")
        nxt = run.next_yes(t, leader, RENEW + 30, "a rival's yes")
        log(f"sidecar of {leader} SIGTERMed alone; {nxt.pod} said yes {nxt.recv - t:.3f}s later")
        # The unit in progress at the SIGTERM ends (cut at its validUntil at the latest).
        run.wait_units(leader, n0 + 1, timeout=10)
        wait_until(lambda: restarts(run, leader, "leasehold") > r0, 60, 0.2, "sidecar restarted")
        run.wait_ready(run.replicas)
        new = run.single_leader()
        assert new == nxt.pod, f"leader {new} after the restart, first yes from {nxt.pod}"
        run.wait_units(new, 1)
        bad = judge.unit_intersections(run.units())
        log(f"intersecting units: {[(a, b, round(x, 3)) for a, b, x in bad]}")
        assert not bad, f"units of two pods intersect after the sidecar stopped alone: {bad[:3]}"
        definite, _ = verdict.overlaps(run.sampler.by_pod())
        assert not definite, f"DEFINITE OVERLAP of yes answers: {definite[:5]}"
        valid_lo, valid_hi = given(run.units()[leader], t)  # validUntil in [lo, hi]
        term, rel, _ = sidecar_log_events(run, leader)
        assert term is not None and rel is not None, f"no SIGTERM/release lines from {leader}"
        log(f"sidecar alone: SIGTERM->released {rel - term:.3f}s, SIGTERM->rival's yes "
            f"{nxt.recv - t:.3f}s; rival's first yes sent {nxt.send - valid_lo:+.3f}s after the "
            f"last validUntil given (<= {nxt.send - valid_hi:+.3f}s from the app's answer stamp)")
        assert nxt.send >= valid_lo, \
            f"a rival said yes {valid_lo - nxt.send:.3f}s before the leader's last validUntil"
        assert nxt.recv - t <= RENEW + RELEASE_TO_YES_BOUND, \
            f"rival's yes {nxt.recv - t:.3f}s after the SIGTERM > renew-deadline + {RELEASE_TO_YES_BOUND}s"
        holders = run.holder_pods()
        assert leader in holders and nxt.pod in holders, (leader, nxt.pod, holders)


def resolved_strategy(run):
    """(maxSurge, maxUnavailable) of the Deployment, percentages resolved as the Deployment
    controller does (surge rounds up, unavailable down)."""
    d = run.node.kjson("get", "deployment", "-n", run.ns, run.deployment)
    ru = d["spec"]["strategy"].get("rollingUpdate", {})
    n = d["spec"]["replicas"]

    def resolve(v, up):
        if isinstance(v, str) and v.endswith("%"):
            x = int(v[:-1]) * n / 100
            return math.ceil(x) if up else math.floor(x)
        return int(v)
    assert d["spec"]["strategy"]["type"] == "RollingUpdate", d["spec"]["strategy"]
    return resolve(ru.get("maxSurge", "25%"), True), resolve(ru.get("maxUnavailable", "25%"), False)


def rollout(s, variant):
    """`kubectl rollout restart` of the shipped variant, NODE_REPEAT times in one namespace: each
    rolling_update's bounds, then judge_rollouts over the whole run."""
    with s.run(variant) as run:
        t0 = time.time()
        assert resolved_strategy(run) == (1, 0), resolved_strategy(run)
        results = [rolling_update(run, run.rollout_restart, f"rollout {variant} #{i + 1}")
                   for i in range(repeat())]
        log(f"rollout {variant}: lock history {judge_rollouts(run, t0)}")
        log("results: " + json.dumps(results))


def uninstall_leaves_nothing(run):
    """helm uninstall of the run's release: its pods, every object its manifest created and
    helm's own release Secrets are gone. Returns the objects created, (kind, name)."""
    created = [(d["kind"], d["metadata"]["name"]) for d in run.manifest]
    run.helm("uninstall", run.release, "--wait", "--timeout", "120s", post=False)
    wait_until(lambda: not run.node.pods(run.ns), 60, 0.2, "the release's pods gone")
    left = [out.strip() for k, n in created if (out := run.node.kubectl(
        "get", k, n, "-n", run.ns, "--ignore-not-found", "-o", "name")).strip()]
    secrets = run.node.kubectl("get", "secrets", "-n", run.ns, "-l", "owner=helm", "-o", "name")
    assert not left and not secrets.strip(), f"left after helm uninstall: {left} {secrets}"
    return created


def check_chart_choices(run):
    """The sidecar mode and lock type the chart chose for the cluster, against what ran."""
    version = run.node.api("GET", "/version")
    minor = int(re.match(r"\d+", version["minor"]).group(0))
    expect_native = (int(version["major"]), minor) >= (1, 29)
    lease_api = any(r["name"] == "leases" for r in
                    run.node.api("GET", "/apis/coordination.k8s.io/v1").get("resources", []))
    dep = next(d for d in run.manifest if d["kind"] == "Deployment")
    spec = dep["spec"]["template"]["spec"]
    inits = {c["name"]: c for c in spec.get("initContainers", [])}
    mains = {c["name"]: c for c in spec["containers"]}
    native = "leasehold" in inits and inits["leasehold"].get("restartPolicy") == "Always"
    assert native == expect_native and ("leasehold" in mains) != native, \
        f"chart's sidecar mode native={native}, cluster {version['gitVersion']}"
    sidecar = inits.get("leasehold") or mains["leasehold"]
    assert "--lock-type=auto" in sidecar["args"], sidecar["args"]
    rules = [r for d in run.manifest if d["kind"] == "Role" for r in d.get("rules", [])]
    kinds = {res for r in rules for res in r.get("resources", [])}
    assert ("leases" in kinds) == lease_api and "configmaps" in kinds, (kinds, lease_api)
    # What ran: every pod runs the sidecar as a native sidecar (a started init container
    # alongside a running app), the sidecars chose the Lease, and the Lease holds a pod.
    for p in run.node.pods(run.ns):
        if p["metadata"].get("deletionTimestamp"):
            continue
        inits = {c["name"]: c for c in p["status"].get("initContainerStatuses", [])}
        mains = {c["name"]: c for c in p["status"].get("containerStatuses", [])}
        where = inits if native else mains
        assert "running" in where["leasehold"]["state"], (p["metadata"]["name"], where)
        assert "running" in mains["app"]["state"], (p["metadata"]["name"], mains)
    chose = [judge.pod_of(p, list(run.pod_ips)) for (p, c), f in run.followers.items()
             if c == "leasehold" and re.search(r"auto uses leases", f.text())]
    assert chose, "no sidecar logged `auto uses leases`"
    lease = run.node.kjson("get", "lease", "-n", run.ns, HELM_RELEASE)
    assert judge.pod_of(lease["spec"].get("holderIdentity", ""), list(run.pod_ips)), lease["spec"]
    cm = run.node.kubectl("get", "configmap", "-n", run.ns, HELM_RELEASE, check=False)
    assert not cm.strip(), f"a ConfigMap lock exists besides the Lease: {cm}"
    log(f"helm: cluster {version['gitVersion']}, Lease API {lease_api}: chart chose "
        f"{'native' if native else 'classic'} sidecar, --lock-type auto with "
        f"{sorted(kinds)} RBAC; ran native={native}, sidecars logged `auto uses leases` "
        f"({len(chose)} pods), Lease {HELM_RELEASE} held by {lease['spec'].get('holderIdentity')}")


@scenario
def helm(s):
    """helm install (HelmRun), the chart's choices against what ran, helm upgrade with a changed
    value (rolling_update's bounds), helm uninstall (uninstall_leaves_nothing); judge_rollouts."""
    with s.run("native", cls=HelmRun) as run:
        t0 = time.time()
        leader = run.single_leader()
        run.wait_units(leader, 3)
        wait_until(lambda: sum(1 for (p, c) in run.followers if c == "leasehold") >= run.replicas,
                   30, 0.2, "the sidecars' logs")
        check_chart_choices(run)
        assert resolved_strategy(run) == (1, 0), resolved_strategy(run)
        results = []
        for i in range(repeat()):
            change = ["--set", f"exampleDeployment.resources.requests.cpu={6 + i}m"]
            results.append(rolling_update(run, lambda: run.helm(
                "upgrade", HELM_RELEASE, str(CHART), "--wait", "--timeout", "300s",
                *run.values(change)), f"helm upgrade #{i + 1}"))
            run.check_manifest(change)
            rev = run.helm("history", HELM_RELEASE, "-o", "json", post=False).stdout
            assert json.loads(rev)[-1]["revision"] == i + 2, rev
        holders = judge_rollouts(run, t0)
        log(f"helm: lock history {holders}")
        log("results: " + json.dumps(results))
        created = uninstall_leaves_nothing(run)
        rest = run.node.kubectl("get", "lease,configmap", "-n", run.ns, "-o", "name")
        log(f"helm uninstall: {len(created)} objects created, none left ({created}); the "
            f"namespace still holds: {rest.split()} (the Lease is the sidecars', not the chart's)")


class ParentHelmRun(HelmRun):
    """helm install of a parent chart (e2e/node/parent-chart: deploy/helm/leasehold as its
    dependency, gate on), no post-renderer: the parent's own Deployment is the test's."""

    lock_name = "op-lock"
    release = "op"

    def deploy(self):
        self.node.kubectl("create", "namespace", self.ns)
        self.parent = self.node.dir / f"parent-{self.ns}"
        shutil.rmtree(self.parent, ignore_errors=True)
        shutil.copytree(PARENT_CHART, self.parent)
        shutil.copytree(CHART, self.parent / "charts" / "leasehold")
        self.helm("install", "op", str(self.parent), "--wait", "--timeout", "300s", post=False)
        self.manifest = yaml_docs(self.helm("get", "manifest", "op", post=False).stdout)
        return "leasehold-example"


@scenario
def helm_parent(s):
    """The chart as a parent chart's dependency (ParentHelmRun): the included sidecar and the
    gate's install init container; a `helm upgrade` of the parent (rolling_update), the rollout
    rules (judge_rollouts), `helm uninstall`."""
    with s.run("gate", cls=ParentHelmRun) as run:
        t0 = time.time()
        dep = next(d for d in run.manifest if d["kind"] == "Deployment")
        inits = dep["spec"]["template"]["spec"]["initContainers"]
        assert [c["name"] for c in inits] == ["leasehold-install", "leasehold"], inits
        args = inits[1]["args"]
        assert "--lock-name=op-lock" in args and "--release-on-shutdown=safe" in args, args
        results = [rolling_update(run, lambda: run.helm(
            "upgrade", "op", str(run.parent), "--wait", "--timeout", "300s", "--set",
            "leasehold.gate.stopGrace=2s", post=False), "helm upgrade (parent)")]
        holders = judge_rollouts(run, t0)
        log(f"helm parent: lock history {holders}; results {json.dumps(results)}")
        log(f"helm parent uninstall: {uninstall_leaves_nothing(run)} gone")

for v in ("native", "classic", "gate"):
    SCENARIOS.bind(rollout, v, name=f"rollout_{v}")


if __name__ == "__main__":
    sys.exit(SCENARIOS.main(context=NodeScenario))
