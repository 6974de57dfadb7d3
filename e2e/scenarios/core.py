#!/usr/bin/env python3
"""The e2e scenarios of leasehold on a real etcd + kube-apiserver (to run one: CONTRIBUTING.md,
"Running one e2e scenario")."""

import concurrent.futures
import http.client
import json
import os
import re
import signal
import sys
import tempfile
import time
from pathlib import Path

from e2e.lib.agent import Agent, current_leaders, never_leads, wait_single_leader
from e2e.lib.common import MONO_TO_WALL, REPO, free_port, log, wait_until
from e2e.lib.controlplane import ANNOTATION, Namespace, can_i, lock_kind
from e2e.lib.lockwatch import LockWatcher
from e2e.lib.members import body_of, fleet_in, start_fleet
from e2e.lib.runner import Registry
from e2e.lib.sampler import Sampler
from e2e.lib.timings import FAST

MICRO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
SECONDS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
SCENARIOS = Registry()
scenario = SCENARIOS.add


def assert_no_overlap(smp):
    ov = smp.overlaps()
    assert not ov, f"two leaders at once: {ov[:3]}"
    log(f"no overlap in {smp.count()} samples")


@scenario
def three_agents_on_lease(s):
    cp, ns, agents = fleet_in(s, "e2e-three")
    with Sampler(agents) as smp:
        leader = wait_single_leader(agents, 20)
        log(f"leader: {leader.name}")

        def agree():
            views = [a.view().body for a in agents]
            said = {(v.get("name"), v.get("term")) for v in views}
            return views if len(said) == 1 and said.pop()[0] == leader.name else None

        views = wait_until(agree, 10, what="all agents to agree on name and term")
        time.sleep(2 * FAST.retry + 0.5)  # let it renew a couple of times
        spec = ns.lease()["spec"]
        assert spec["holderIdentity"] == leader.name, spec
        assert MICRO.match(spec["acquireTime"]), spec["acquireTime"]
        assert MICRO.match(spec["renewTime"]), spec["renewTime"]
        assert spec["leaseDurationSeconds"] == int(FAST.lease), spec
        assert spec["leaseTransitions"] == views[0]["term"], (spec, views[0])
        assert [a for a in agents if body_of(a)[1].get("isLeader")] == [leader]
    assert_no_overlap(smp)


def _failover(s, ns_name, how, release="safe", ack=False):
    """Starts a fleet, stops the leader `how` ("kill" or "term"); returns the new leader's first yes
    (s) after the stop, after the old leader's last renew (its last validUntil - renew-deadline),
    and after that last validUntil. The old leader must have released the lock (logged it, and the
    lock went from it through "" to the new one: a LockWatcher's history) exactly when it was sent
    SIGTERM with a release mode other than `off`; else the new leader took it over at expiry."""
    cp, ns, agents = fleet_in(s, ns_name, release=release)
    smp = Sampler(agents).__enter__()
    try:
        old = wait_single_leader(agents, 20)
        kind = LockWatcher.KINDS[lock_kind(cp)]  # the Lease, or v1_11's ConfigMap/Endpoints
        watch = LockWatcher(cp, ns, kinds=(kind,)).start()
        wait_until(lambda: watch.holders(kind), 10,
                   what="the lock's watch to report the current holder")
        time.sleep(1.5)  # a few renews and samples of the settled leader
        _, before = body_of(old)
        t_stop = time.monotonic()
        if ack:
            st, _ = old.request("POST", "/release", 2.0)
            assert st in (200, 202), st
        getattr(old, how)()  # Agent.kill or Agent.term
        rest = [a for a in agents if a is not old]
        new = wait_single_leader(rest, 30)
        _, after = body_of(new)
        if how == "term":
            rc = old.wait(FAST.renew + 5)
            assert rc == 0, f"leader exited with {rc} after SIGTERM"
        time.sleep(0.5)
    finally:
        smp.stop()
        watch.stop()
    holders = [h for _, h, _ in watch.holders(kind)]
    assert_no_overlap(smp)
    assert after["term"] == before["term"] + 1, (before, after)
    first = smp.first_yes_after(t_stop, exclude=(old.name,))
    assert first and first[1] == new.name, first
    released = how == "term" and release != "off"
    logged = "released lease" in old.log_text()
    assert logged == released, f"a release logged: {logged}, expected: {released}"
    assert released_between(holders, old.name, new.name) == released, holders
    after_promise = first[0] + MONO_TO_WALL - smp.last_valid_until(old.name)
    return first[0] - t_stop, after_promise + FAST.renew, after_promise


def released_between(holders, old, new):
    """Whether the holders went from `old` through "" to `new`, in that order."""
    rest = iter(holders)
    return all(want in rest for want in (old, "", new))


@scenario
def kill_leader(s):
    took, after_renew, _ = _failover(s, "e2e-kill", "kill")
    bound = FAST.lease + 2 * 2.2 * FAST.retry
    log(f"SIGKILL failover: {after_renew:.2f}s after the last renew (bound {bound}s), "
        f"{took:.2f}s after the kill")
    assert after_renew <= bound, after_renew


@scenario
def term_leader_immediate(s):
    took, _, _ = _failover(s, "e2e-term-imm", "term", release="immediate")
    log(f"SIGTERM (immediate) failover: {took:.2f}s (retry-period {FAST.retry}s)")
    assert took <= 2.2 * FAST.retry + 0.5, took
    # The followers watch the Lease: the release wakes them, not their next poll.
    assert took < FAST.retry, f"released lease taken after {took:.2f}s, not within retry-period"


@scenario
def term_leader_safe_acknowledged(s):
    took, _, _ = _failover(s, "e2e-term-ack", "term", ack=True)
    log(f"POST /release + SIGTERM (safe) failover: {took:.2f}s")
    assert took <= 2.2 * FAST.retry + 0.5, took


@scenario
def term_leader_safe(s):
    took, _, after_promise = _failover(s, "e2e-term-safe", "term")
    log(f"SIGTERM (safe, no ack) failover: {took:.2f}s; new leader {after_promise:+.3f}s "
        "after the last validUntil given")
    assert after_promise >= 0, "a new leader before the old leader's promise ran out"
    assert took <= FAST.renew + 2.2 * FAST.retry + 0.5, took


@scenario
def term_leader_off(s):
    _, took, _ = _failover(s, "e2e-term-off", "term", release="off")
    log(f"SIGTERM (off) failover: {took:.2f}s after the last renew")
    assert took >= FAST.lease - 0.5, f"taken over before expiry: {took}"
    assert took <= FAST.lease + 2 * 2.2 * FAST.retry, took


@scenario
def pause_leader(s):
    cp, ns, agents = fleet_in(s, "e2e-pause")
    with Sampler(agents) as smp:
        old = wait_single_leader(agents, 20)
        old.signal(signal.SIGSTOP)
        t_stop = time.monotonic()
        rest = [a for a in agents if a is not old]
        new = wait_single_leader(rest, 20)
        log(f"{new.name} took over {time.monotonic() - t_stop:.2f}s after the pause")
        # A question asked while paused, answered after the resume.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            answer = pool.submit(old.leader, 15.0)
            time.sleep(max(0.0, FAST.lease + 1 - (time.monotonic() - t_stop)))
            old.signal(signal.SIGCONT)
            st, b = answer.result(20)
        assert st is not None, f"no answer after resume: {b}"
        assert not (isinstance(b, dict) and b.get("isLeader")), f"stale yes after resume: {b}"
        log(f"first answer after resume: {st} isLeader={b.get('isLeader')}")
        wait_until(lambda: body_of(old)[1].get("name") == new.name and
                   not body_of(old)[1].get("isLeader"), 10, what="old leader to follow")
        assert current_leaders(agents) == [new]
    assert_no_overlap(smp)


@scenario
def api_outage(s):
    # It restarts the apiserver: its own control plane.
    cp, ns, agents = fleet_in(s, "e2e-outage", cp=s.control_plane(extra_args=" "))
    with Sampler(agents) as smp:
        old = wait_single_leader(agents, 20)
        # The state the 410 below counts from: each agent's watch has a version to resume
        # from. One that opened no stream before the outage starts afresh after it, rightly.
        def opened():
            return [a for a in agents if ": open at resourceVersion " in a.log_text()]
        log(f"{len(opened())} of {len(agents)} watches open when one led")
        wait_until(lambda: len(opened()) == len(agents), 10, what="every agent's watch to open")
        cp.stop_apiserver()
        t_stop = time.monotonic()
        wait_until(lambda: old.request("GET", "/is-leader")[0] == 503, FAST.renew + 1,
                   what="leader to step down")
        stepped = time.monotonic() - t_stop
        log(f"leader stepped down {stepped:.2f}s into the outage (renew-deadline {FAST.renew}s)")
        assert stepped <= FAST.renew + 0.3, stepped
        time.sleep(2)
        for a in agents:
            st, b = a.request("GET", "/readyz")
            assert st == 200, f"{a.name} not ready during an outage: {st} {b}"
            assert "outage" in json.dumps(b).lower(), f"outage not reported: {b}"
        assert not current_leaders(agents)
        time.sleep(max(0.0, 20 - (time.monotonic() - t_stop)))
        # As a long outage or pause meets the apiserver's own compaction: the versions the
        # followers' watches saw are gone, and resuming from them is answered 410 Gone.
        rev = cp.compact_etcd()
        cp.start_apiserver()
        t_back = time.monotonic()
        leader = wait_single_leader(agents, 30)
        log(f"leader {leader.name} {time.monotonic() - t_back:.2f}s after the apiserver came back")
        time.sleep(2)
        assert current_leaders(agents) == [leader]
        # Each agent's watch resumed from a version before the compaction: it says so once, at
        # info, and counts it, once its backoff's pause (LockWatcher::Run caps it at 16
        # retry-periods) ends.
        expired = 'leasehold_watch_restarts_total{lock_namespace="e2e-outage",' \
            'lock_name="leasehold-lock",reason="expired"} '

        def restarted(a):
            st, m = a.request("GET", "/metrics")
            return st == 200 and expired + "0" not in m and expired in m and \
                "is too old for the API server (410 Gone)" in a.log_text()
        try:
            wait_until(lambda: all(restarted(a) for a in agents), 16 * FAST.retry + 10,
                       what="every agent's watch answered 410 and started over")
        except AssertionError:
            for a in agents:  # what each watch was told instead
                tried = [ln for ln in a.log_text().splitlines() if "watch on " in ln]
                log(f"{a.name}: restarted={restarted(a)}; last watch lines:\n  " +
                    "\n  ".join(tried[-4:]))
            raise
        log(f"etcd compacted at revision {rev}: every agent's watch started over (logged, counted)")
    assert_no_overlap(smp)


@scenario
def old_cluster_configmaps(s):
    cp = s.control_plane(
        extra_args="--runtime-config=coordination.k8s.io/v1=false,coordination.k8s.io/v1beta1=false")
    ns = Namespace(cp, "e2e-old")
    agents = start_fleet(s, ns, lock_type="auto")
    with Sampler(agents) as smp:
        leader = wait_single_leader(agents, 30)
        _, b = body_of(leader)
        assert b["lock"]["type"] == "configmaps", b
        raw = ns.configmap()["metadata"]["annotations"][ANNOTATION]
        rec = json.loads(raw)
        assert list(rec) == ["holderIdentity", "leaseDurationSeconds", "acquireTime",
                             "renewTime", "leaderTransitions"], raw
        assert rec["holderIdentity"] == leader.name
        assert SECONDS.match(rec["acquireTime"]) and SECONDS.match(rec["renewTime"]), raw
        assert rec["leaseDurationSeconds"] == int(FAST.lease)
        assert "configmaps" in leader.log_text()
        leader.kill()
        new = wait_single_leader([a for a in agents if a is not leader], 20)
        log(f"failover on the ConfigMap lock to {new.name}")
        rec2 = json.loads(ns.configmap()["metadata"]["annotations"][ANNOTATION])
        assert rec2["leaderTransitions"] == rec["leaderTransitions"] + 1, (rec, rec2)
    assert_no_overlap(smp)


@scenario
def rbac(s):
    """deploy/rbac: the ServiceAccount may get/update/watch the named lock and create locks,
    nothing else; an agent whose Role lacks update is not ready, names the refused permission
    and the Role to fix, and never leads. On the control plane's lock kind (lock_kind)."""
    cp = s.control_plane()
    ns = Namespace(cp, "e2e-rbac")
    kind = lock_kind(cp)
    res = {"leases": "leases.coordination.k8s.io", "configmaps": "configmaps"}[kind]

    def can(verb, name=None, res=res):
        return can_i(cp, ns.name, verb, f"{res}/{name}" if name else res)

    for verb in ("get", "update", "watch"):
        assert can(verb, ns.lock_name), verb
    assert can("create")
    assert not can("get", "someone-else")
    assert not can("update", "someone-else")
    assert not can("delete", ns.lock_name)
    assert not can("list")
    assert not can("get", res="secrets")
    # The agents of every other scenario already run with exactly these rights; here one runs
    # with a ServiceAccount that may not update the lock. The lock exists (as one created at
    # install time would): the agent must update, not create.
    limited = REPO / "e2e" / "controlplane" / "testdata" / "rbac-no-update.yaml"
    cp.apply(limited.read_text(), ns.name)
    if kind == "leases":
        cp.kubectl("create", "-n", ns.name, "-f", "-", input=json.dumps({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": ns.lock_name},
            "spec": {"holderIdentity": "", "leaseDurationSeconds": 1, "leaseTransitions": 0}}))
    else:
        cp.kubectl("create", "configmap", ns.lock_name, "-n", ns.name)
    a = s.agent(ns, "limited", sa_dir=ns.sa_dir("limited", sa=_sa_in(limited))).start()
    # The log names the refused permission itself (not only the apiserver's words) and the Role.
    needs = f'needs verb "update" on {kind} "{ns.lock_name}"'
    wait_until(lambda: a.request("GET", "/readyz")[0] == 503 and needs in a.log_text(), 20,
               what="the limited agent to be not ready, naming the permission")
    st, b = a.request("GET", "/readyz")
    log(f"limited agent /readyz: {st} {b}")
    assert "deploy/rbac" in a.log_text(), a.log_tail(2000)
    never_leads(a, FAST.lease + 2 * FAST.retry, FAST.retry / 4)  # a yes would come within it


def _sa_in(path):
    text = Path(path).read_text()
    m = re.search(r"kind:\s*ServiceAccount\s*\n(?:.*\n)*?\s*name:\s*(\S+)", text)
    assert m, f"no ServiceAccount in {path}"
    return m.group(1)


@scenario
def manifests_dry_run(s):
    cp = s.control_plane()
    ns = Namespace(cp, "e2e-manifests")
    checked = 0
    deploy = REPO / "deploy"
    kustom_dirs = sorted({p.parent for p in deploy.rglob("kustomization.yaml")})
    # Objects of the prometheus-operator's CRDs (PodMonitor, PrometheusRule) need those CRDs:
    # e2e/scenarios/ship.py monitoring_dry_run installs them and dry-runs this component there.
    # deploy/monitoring/ holds Prometheus's own files (rules, dashboard), not Kubernetes objects.
    needs_crds = {deploy / "components" / "monitoring"}
    not_objects = deploy / "monitoring"
    for d in kustom_dirs:
        if d in needs_crds:
            continue
        target = d
        if re.search(r"^kind:\s*Component\s*$", (d / "kustomization.yaml").read_text(), re.M):
            # A component patches the base's objects: it renders on top of them (one made of
            # patches alone renders nothing by itself).
            target = ns.tmp / f"with-{d.name}"
            target.mkdir(exist_ok=True)
            (target / "kustomization.yaml").write_text(
                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                f"resources: [{os.path.relpath(deploy / 'base', target)}]\n"
                f"components: [{os.path.relpath(d, target)}]\n")
        rendered = cp.kubectl("kustomize", str(target))
        cp.kubectl("apply", "--dry-run=server", "-n", ns.name, "-f", "-", input=rendered)
        checked += 1
    for p in sorted(deploy.rglob("*.yaml")):
        if p.name == "kustomization.yaml" or "helm" in p.parts or p.is_relative_to(
                not_objects) or any(p.is_relative_to(d) for d in kustom_dirs if d != deploy):
            continue
        cp.kubectl("apply", "--dry-run=server", "-n", ns.name, "-f", str(p))
        checked += 1
    log(f"{checked} manifests/kustomizations accepted by the apiserver")
    assert checked > 0


@scenario
def lock_type_none(s):
    """--lock-type none: always leader, no API server, no token, no RBAC."""
    tmp = Path(tempfile.mkdtemp(prefix="leasehold-none-"))
    port, dead = free_port(), free_port()  # nothing listens on `dead`
    status = tmp / "status.json"
    a = Agent.with_flags("solo", ["--lock-name=k8up", "--identity=solo",
                                  f"--http-address=127.0.0.1:{port}", f"--status-file={status}",
                                  f"--serviceaccount-dir={tmp / 'no-such-dir'}"],
                         port, tmp / "no-such-dir", tmp, ("127.0.0.1", dead),
                         env={"LEASEHOLD_LOCK_TYPE": "none"})
    s.agents.append(a.start())
    wait_until(lambda: a.request("GET", "/readyz")[0] == 200, 5,
               what="agent with election off to be ready")
    terms = set()
    for _ in range(5):
        st, b = a.request("GET", "/leader")
        assert st == 200 and b["isLeader"] and b["name"] == "solo", b
        assert b["lock"]["type"] == "none", b
        terms.add(b["term"])
        st, b = a.request("GET", "/is-leader")
        assert st == 200 and b is True, (st, b)
        time.sleep(0.5)
    assert len(terms) == 1, terms
    snap = json.loads(status.read_text())
    assert snap["isLeader"] is True, snap
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    c.request("GET", "/leader/watch")
    r = c.getresponse()
    first = b""
    while b"\n\n" not in first:
        first += r.fp.readline()
    assert b'"isLeader":true' in first, first
    c.close()
    st, metrics = a.request("GET", "/metrics")
    assert st == 200 and "leader_election_master_status" in metrics
    t = time.monotonic()
    a.term()
    assert a.wait(10) == 0
    log(f"election off: always leader, term {terms.pop()}, stopped in "
        f"{time.monotonic() - t:.2f}s")
    text = a.log_text()
    assert "leader election is OFF" in text, text
    assert "apiRequests" not in text
    # Every series exists from the first scrape, so the requests are there at 0.
    made = [ln for ln in metrics.splitlines()
            if ln.startswith("leasehold_api_requests_total{") and not ln.endswith(" 0")]
    assert "leasehold_api_requests_total{" in metrics, "the request series are missing"
    assert not made, f"an API request was made: {made}"


if __name__ == "__main__":
    sys.exit(SCENARIOS.main())
