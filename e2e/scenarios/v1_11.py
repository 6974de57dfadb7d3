#!/usr/bin/env python3
"""e2e scenarios on a real kube-apiserver v1.11.10: the Kubernetes of OpenShift 3.11, a cluster
without the Lease API, which is what the project exists for (docs/install.md, "Versions tested").
Every control plane here runs v1.11.10 (LEASEHOLD_E2E_VERSION, set below; the shared one is
the CTest fixture e2e_cp_v1_11, whose /version controlplane.sh checks).

The scenarios are today's, run on the old server: core's, announce's and gate's functions are
called with a context (V111Scenario) whose agents use a ConfigMap or Endpoints lock instead of
the Lease, and whose holder watches follow that object; what differs on 1.11 is written here,
and what cannot run on 1.11 is listed in NOT_ON_V1_11 with why (not_on_v1_11 checks each).
"""

import json
import os
import sys
import time

os.environ["LEASEHOLD_E2E_VERSION"] = "v1.11.10"  # before any control plane is made

from e2e.lib.agent import never_leads, wait_ready, wait_single_leader  # noqa: E402
from e2e.lib.common import log, wait_until  # noqa: E402
from e2e.lib.controlplane import V1_11, Namespace  # noqa: E402
from e2e.lib.members import fleet_in  # noqa: E402
from e2e.lib.runner import Registry  # noqa: E402
from e2e.lib.sampler import Sampler  # noqa: E402
from e2e.lib.timings import FAST  # noqa: E402
from e2e.scenarios import announce, core, gate  # noqa: E402

SCENARIOS = Registry()
scenario = SCENARIOS.add


class V111Scenario(gate.GateScenario):
    """A scenario on v1.11.10 (module doc); a GateScenario, so that gate's scenarios run in it too.

    The overlap judge: core's scenarios sample their agents themselves and call own_judge(s). For
    the others (announce's, gate's, those written here) the context is the judge: one Sampler, given
    each agent as it is made, asked at the end. It must have seen a leader (`expect_leader`), or,
    where no agent may lead (a lock the server lacks, a Role without update), none. Never both at
    once: a second sampler would double the questions the agents answer, and widen the windows the
    first one judges by."""

    def __init__(self, name):
        super().__init__(name)
        self.lock_type = "configmaps"
        self.expect_leader = True
        self.start_when_read = False
        self.judge = Sampler([])

    def agent(self, *a, **kw):
        kw.setdefault("lock_type", self.lock_type)
        ag = super().agent(*a, **kw)
        if self.judge:
            self.judge.add(ag)
        if self.start_when_read:
            start = ag.start

            def start_and_read():
                wait_ready([start()])  # it has read the lock
                return ag
            ag.start = start_and_read
        return ag

    def __exit__(self, exc_type, exc, tb):
        if self.judge:
            self.judge.stop()
        if exc_type is None and self.agents and self.judge:
            try:
                yes = sum(len(self.judge.yes_bodies(name)) for name in self.judge.samples)
                assert self.judge.count() > 0, "the judge has no samples"
                assert (yes > 0) == self.expect_leader, \
                    f"{yes} yes answers; a leader expected: {self.expect_leader}"
                core.assert_no_overlap(self.judge)
            except AssertionError as e:
                exc_type, exc, tb = AssertionError, e, None
        return super().__exit__(exc_type, exc, tb)

    def control_plane(self, extra_args=""):
        cp = super().control_plane(extra_args)
        assert cp.version == V1_11 and cp.env.get("K8S_VERSION") == V1_11, cp.env
        cp.lock_kind = self.lock_type
        return cp


def own_judge(s):
    """The scenario judges its agents itself (a Sampler of its own): the context does not."""
    s.judge = None


def requests_made(agent, verb):
    """leasehold_api_requests_total summed over codes for `verb` (GET, PUT, ..., OTHER)."""
    st, m = agent.request("GET", "/metrics")
    assert st == 200, (st, m)
    return sum(int(v) for k, v in announce.parse_prometheus(m)[0].items()
               if k.startswith("leasehold_api_requests_total{") and f'verb="{verb}"' in k)


@scenario
def auto_detect_configmaps(s):
    """--lock-type auto on real 1.11 discovery: GET /apis/coordination.k8s.io/v1 is a plain-text
    404, so auto takes the ConfigMap lock (core's old-cluster scenario, which on v1.34 imitates
    this with coordination.k8s.io switched off, here on the shared old control plane)."""
    own_judge(s)
    core.old_cluster_configmaps(s)
    said = "is 404: the cluster has no Lease API"
    assert any(said in a.log_text() for a in s.agents), "auto did not log why it chose configmaps"


def ported(fn, lock_type="configmaps", own=True, leader=True):
    """Another module's scenario `fn`, its agents on `lock_type`, judged by its own Sampler
    (`own`) or by the context's, which must see a leader, or (not `leader`) none."""
    def run(s):
        if own:
            own_judge(s)
        s.lock_type = lock_type
        s.expect_leader = leader
        fn(s)
    return run


# core's failovers on the ConfigMap and Endpoints locks.
for lock, fn in [("configmaps", core.kill_leader), ("endpoints", core.kill_leader),
                 ("configmaps", core.term_leader_immediate),
                 ("endpoints", core.term_leader_immediate), ("configmaps", core.term_leader_safe),
                 ("configmaps", core.term_leader_safe_acknowledged),
                 ("configmaps", core.pause_leader)]:
    SCENARIOS.param(ported, fn, lock, name=f"{lock}_{fn.__name__}")


@scenario
def lease_lock_not_served(s):
    """--lock-type leases where there is no Lease API: every Lease URL is a plain-text 404 (not a
    Status). The agent must not lead, must say it is not ready, and its error must say that the
    server does not serve the API (not merely "not found", which reads like a missing lock)."""
    cp = s.control_plane()
    ns = Namespace(cp, "e2e-v111-nolease")
    st, body = cp.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/{ns.name}/leases/x")
    assert st == 404 and body.strip() == "404 page not found", (st, body)
    s.expect_leader = False
    a = s.agent(ns, "leases-only", lock_type="leases").start()
    wait_until(lambda: a.request("GET", "/readyz")[0] == 503 and
               "does not serve this API" in a.log_text(), 20,
               what="the Lease-only agent to be not ready, saying why")
    st, b = a.request("GET", "/readyz")
    log(f"Lease-only agent on 1.11: /readyz {st} {b}")
    assert "does not serve this API" in json.dumps(b), b
    never_leads(a, FAST.lease + 2 * FAST.retry, FAST.retry / 4)  # a yes would come within it


@scenario
def apiserver_restart_watch_410(s):
    """The apiserver stopped for 20 s, etcd compacted, the apiserver started again (its own old
    control plane): the leader steps down within renew-deadline, every agent stays ready, one
    leads again, and every follower's watch, resumed from a version before the compaction, is
    answered as 1.11 answers it (HTTP 200, then an ERROR event with a 410 Status) and starts
    over, logged and counted as expired (core's api_outage, on 1.11)."""
    own_judge(s)
    # core's scenario stops the apiserver once one agent leads. v1.34 finishes the requests in
    # flight at SIGTERM; 1.11 drops them, so an agent whose first read was in flight would
    # never have read the lock and be rightly "not ready" in the outage. Each agent here has
    # read the lock before the next starts, and so before the apiserver stops.
    s.start_when_read = True
    core.api_outage(s)
    # The same request the agents' watches made, raw: 1.11 answers 200 and puts the 410 in an
    # ERROR event, which the agents read as a Status (src/kube/watch.cpp) like an HTTP 410.
    cp = s.cps[-1]
    st, body = cp.request("GET", "/api/v1/namespaces/e2e-outage/configmaps?watch=true&"
                          "fieldSelector=metadata.name%3Dleasehold-lock&resourceVersion=1&"
                          "timeoutSeconds=1")
    first = json.loads(body.splitlines()[0]) if isinstance(body, str) else body
    assert st == 200 and first["type"] == "ERROR" and first["object"]["code"] == 410, (st, body)
    log(f"a watch from resourceVersion 1: HTTP {st}, then {first['type']} "
        f"{first['object']['code']}: {first['object']['message']}")


# announce's LeaderElection Events (core/v1: 1.11 has events.k8s.io only as v1beta1) and leader
# label (on Pod objects of 1.11) about the ConfigMap lock, through a SIGTERM failover.
SCENARIOS.param(ported, announce.events_recorded, own=False, name="events_configmap")
SCENARIOS.param(ported, announce.leader_label_failover, own=False, name="leader_label_failover")


# core's RBAC scenario on the ConfigMap lock (its one agent never leads).
SCENARIOS.param(ported, core.rbac, own=False, leader=False, name="rbac_configmaps")


# kube-apiserver 1.11's --token-success-cache-ttl default (pkg/kubeapiserver/options/
# authentication.go): how long a revoked token may still be accepted.
TOKEN_SUCCESS_CACHE = 10


@scenario
def rotating_token(s):
    """Service-account tokens from 1.11's TokenRequest (alpha there), rotated in the agents'
    token directories the way the kubelet swaps them (..data). Deleting the ServiceAccount
    revokes its tokens (401): the leader steps down. The ServiceAccount is made again and new
    tokens are put in the agents' directories; the agents read them at their next 401 and one
    leads again, without a restart."""
    cp, ns, agents = fleet_in(s, "e2e-v111-token", 2)
    old = wait_single_leader(agents, 20)
    cp.kubectl("delete", "serviceaccount", ns.sa, "-n", ns.name)
    t_revoked = time.monotonic()
    wait_until(lambda: all("authentication failed" in a.log_text() for a in agents),
               TOKEN_SUCCESS_CACHE + 2 * FAST.retry + 2,
               what="every agent's old token to be refused")
    wait_until(lambda: not old.is_leader(), FAST.renew + 1,
               what="the leader to step down without a valid token")
    log(f"old tokens refused; leader stepped down {time.monotonic() - t_revoked:.2f}s "
        "after the ServiceAccount was deleted")
    cp.ensure_sa(ns.name, ns.sa)
    for a in agents:
        ns.sa_dir(a.name)  # the same directory the agent reads: a rotation
    t_rotated = time.monotonic()
    new = wait_single_leader(agents, FAST.lease + 2 * 2.2 * FAST.retry)
    log(f"{new.name} leads {time.monotonic() - t_rotated:.2f}s after the rotation")
    assert all(a.alive() for a in agents)


# gate's kill -9 of the leader's sidecar and its API outage, on the ConfigMap lock.
SCENARIOS.param(ported, gate.kill_sidecar, own=False, name="gate_kill_sidecar")
SCENARIOS.param(ported, gate.api_outage, own=False, name="gate_api_outage")


@scenario
def delete_precondition_ignored(s):
    """1.11 deletes an object whose DELETE carries a stale resourceVersion precondition (a uid
    precondition it still enforces). Nothing in leasehold may rely on the former: it never
    deletes a lock (release is a conditional PUT of an empty holder), shown here by the request
    counters of agents through a release and a takeover, while the server's behaviour is
    checked so that this scenario fails the day it changes."""
    cp = s.control_plane()
    ns = Namespace(cp, "e2e-v111-delete")
    path = f"/api/v1/namespaces/{ns.name}/configmaps/precondition"
    st, body = cp.request("POST", f"/api/v1/namespaces/{ns.name}/configmaps",
                          {"metadata": {"name": "precondition"}})
    assert st == 201, (st, body)
    uid, rv = body["metadata"]["uid"], body["metadata"]["resourceVersion"]
    st, body = cp.request("PUT", path, {"metadata": {"name": "precondition",
                                                     "resourceVersion": rv}, "data": {"a": "1"}})
    assert st == 200, (st, body)
    st, body = cp.request("DELETE", path, {"kind": "DeleteOptions", "apiVersion": "v1",
                                           "preconditions": {"uid": "not-" + uid}})
    assert st == 409, f"a wrong uid precondition was not refused: {st} {body}"
    st, body = cp.request("DELETE", path, {"kind": "DeleteOptions", "apiVersion": "v1",
                                           "preconditions": {"resourceVersion": rv}})
    assert st == 200, f"1.11 refused a stale resourceVersion precondition: {st} {body}"
    assert cp.request("GET", path)[0] == 404
    log(f"1.11 deleted the object despite the stale resourceVersion {rv} in the precondition")
    # A release (SIGTERM, immediate), then a takeover at expiry (SIGKILL): the two ways a lock
    # changes hands. Each agent's counters are read while it runs (OTHER counts DELETE).
    agents = core.start_fleet(s, ns, 3, release="immediate")
    old = wait_single_leader(agents, 20)
    old.term_and_wait(FAST.renew + 5)
    assert "released lease" in old.log_text()
    rest = [a for a in agents if a is not old]
    new = wait_single_leader(rest, 20)
    for a in rest:
        assert requests_made(a, "OTHER") == 0, f"{a.name} sent a DELETE (or another verb)"
    new.kill()
    last = wait_single_leader([a for a in rest if a is not new], FAST.lease + 2 * 2.2 *
                              FAST.retry + 1)
    assert requests_made(last, "PUT") > 0
    assert requests_made(last, "OTHER") == 0, f"{last.name} sent a DELETE (or another verb)"


NOT_ON_V1_11 = {
    ("core", "three_agents_on_lease"): "checks the Lease's spec fields: no coordination.k8s.io",
    ("core", "manifests_dry_run"): "kubectl apply --dry-run=server: 1.11 answers dryRun with 400",
    ("announce", "metrics_parse"): "expects the series of lock_type=\"leases\"",
}


@scenario
def not_on_v1_11(s):
    """Each entry of NOT_ON_V1_11 names a registered scenario, and its reason holds on the real
    1.11 server (otherwise the scenario should run here instead)."""
    cp = s.control_plane()
    modules = {"core": core, "announce": announce}
    for (m, name), why in NOT_ON_V1_11.items():
        assert name in modules[m].SCENARIOS.scenarios, f"{m}.{name} is gone: drop it ({why})"
        log(f"not on 1.11: {m}.{name}: {why}")
    st, apis = cp.request("GET", "/apis")
    groups = {g["name"] for g in apis["groups"]}
    assert "coordination.k8s.io" not in groups, groups
    ev = next(g for g in apis["groups"] if g["name"] == "events.k8s.io")
    assert [v["version"] for v in ev["versions"]] == ["v1beta1"], ev
    ns = Namespace(cp, "e2e-v111-absent")
    st, body = cp.request("POST", f"/api/v1/namespaces/{ns.name}/configmaps?dryRun=All",
                          {"metadata": {"name": "dry"}})
    assert st == 400, f"dryRun answered {st}: run manifests_dry_run on 1.11 ({body})"
    for path in ("/readyz", "/livez"):
        assert cp.request("GET", path)[0] == 404, path
    assert cp.request("GET", "/healthz") == (200, "ok")


if __name__ == "__main__":
    sys.exit(SCENARIOS.main(context=V111Scenario))
