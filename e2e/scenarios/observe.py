#!/usr/bin/env python3
"""Observe mode (--agent-mode observe) beside a real controller-runtime manager
(e2e/lib/operator.py), on a real etcd + kube-apiserver. Three "pods", each a manager and an
observing leasehold agent (POD_NAME = the pod's name, --leader-label). One fault of the holder's
manager per scenario: SIGKILL, SIGSTOP for longer than the lease (then SIGCONT), SIGTERM
(controller-runtime's default: no release).

Judged by e2e/lib/judge.py: each pod's samples are its agent's /leader answers (with validUntil)
plus its managers' leaderships from their own logs, each from the acquireTime its Lease shows
(stamped before the winning write) until it stopped leading, died, or the next holder's acquireTime
(a frozen manager believes it leads until its renew loop runs again: client-go has no fencing; that
belief is logged, not judged). Any overlap of two pods, promises (validUntil) included, fails: no
agent may say "yes" for its pod while another pod's manager holds the lease. Also checked: every
agent's view moves to the new holder, and the leader label and the LeaderElection Events follow it.
Numbers on MEASURED lines.

Usage: python3 -m e2e.scenarios.observe NAME [NAME...]   (or `all`, `list`).
Env: LEASEHOLD_BIN, LEASEHOLD_E2E_CP, and e2e/lib/operator.py's LEASEHOLD_CRMANAGER_BIN.
"""

import re
import sys
import time

from e2e.lib import judge
from e2e.lib.common import DEPLOY, log, measured, wait_until
from e2e.lib.controlplane import Namespace, ns_name
from e2e.lib.operator import (LABEL, CrManager, create_pods, labels, lease_holder,
                              leader_events, manager_binary, pod_of)
from e2e.lib.runner import Registry
from e2e.lib.sampler import Sampler
from e2e.lib.timings import MIXED

SCENARIOS = Registry()

# The managers' and the observers' timings: the observers' margin (lease-duration -
# renew-deadline) at observe mode's minimum; their --lease-duration equal to the managers'.
TIMINGS = MIXED
PODS = ("op-0", "op-1", "op-2")
INTERVAL = 0.05  # s between two questions to one agent
# The judge's gap rule (no pod unasked for 2 x this) with room for the sampler's own stalls: on
# the shared 2 cores a kubectl call here or a build beside it delays all three samplers' threads
# at once by up to ~150 ms (the judge's report says "sampler late", never "slow answer").
JUDGE_INTERVAL = 0.25


class Run:
    """The three pods of one scenario: agents (sampled), managers, pods with labels."""

    def __init__(self, s, fault):
        self.s = s
        self.cp = s.control_plane()
        self.ns = Namespace(self.cp, ns_name(f"e2e-observe-{fault}"))
        rbac = DEPLOY / "rbac"  # the pod Role, for the leader label
        self.cp.kubectl("apply", "-n", self.ns.name, "-f", str(rbac / "pod-role.yaml"), "-f",
                        str(rbac / "pod-rolebinding.yaml"))
        self.binary = manager_binary()
        self.agents, self.managers = {}, []
        create_pods(self.cp, self.ns.name, PODS, self.ns.sa)
        for pod in PODS:
            a = s.agent(self.ns, f"{pod}-sidecar", timings=TIMINGS,
                        extra=("--agent-mode=observe", f"--leader-label={LABEL}"),
                        env={"POD_NAME": pod, "POD_NAMESPACE": self.ns.name})
            self.agents[pod] = a.start()
        self.smp = Sampler(list(self.agents.values()), interval=INTERVAL)
        self.t0 = time.time()
        self.smp.__enter__()
        for pod in PODS:
            self.managers.append(s.member(CrManager, self.ns, pod, self.binary,
                                          timings=TIMINGS).start())

    def manager_of(self, pod):
        return [m for m in self.managers if m.pod == pod and m.alive()][-1]

    def wait_holder(self, other_than=None, timeout=30):
        """The pod whose manager holds the Lease (not `other_than`), once its agent says yes."""
        def ready():
            pod = pod_of(lease_holder(self.ns))
            if pod in PODS and pod != other_than and self.agents[pod].is_leader():
                return pod
            return None
        return wait_until(ready, timeout, what="a holder whose agent says yes")

    def check(self, pod, timeout=10):
        """`pod` holds the Lease: every agent's view and every pod's label follow, within
        `timeout` s, and no other pod's agent says yes."""
        holder = lease_holder(self.ns)
        assert pod_of(holder) == pod, holder

        def moved():
            return all(a.view().holder == holder for a in self.agents.values())
        wait_until(moved, timeout, what=f"every agent's view to name {holder}")
        for p, a in self.agents.items():
            assert p == pod or not a.is_leader(), f"{p}'s agent says yes while {holder} holds"
        want = {p: ("leader" if p == pod else "follower") for p in PODS}
        wait_until(lambda: labels(self.cp, self.ns) == want, timeout, what=f"labels {want}")

    def judge(self):
        """Judges the pods' samples (the module doc's); returns them and the manager spans."""
        self.smp.stop()
        t1 = time.time()
        pods = {p: [] for p in PODS}
        for name, ss in self.smp.judged().items():
            pod = name[:-len("-sidecar")]
            for x in ss:
                x.pod = pod
                pods[pod].append(x)
        spans = []
        for m in self.managers:
            for holder, acquired, at, end in m.leaderships(t1):
                spans.append([m.pod, acquired, at, end, holder, m.name])
        spans.sort(key=lambda x: x[1])
        # A manager holds the Lease until the next holder's acquireTime at the latest.
        for cur, nxt in zip(spans, spans[1:]):
            if nxt[0] != cur[0] and nxt[1] < cur[3]:
                log(f"{cur[5]} believed it led {cur[3] - nxt[1]:.2f}s after {nxt[5]} acquired "
                    "the Lease (a paused client-go elector has no fencing): not judged")
                cur[3] = nxt[1]
        for pod, acquired, at, end, holder, name in spans:
            log(f"manager {name} ({holder}) led {acquired:.3f}..{end:.3f} (LEADING logged "
                f"{at - acquired:.3f}s after its acquireTime)")
            pods[pod].append(judge.Sample(pod, acquired, max(end, acquired), True,
                                          note=f"manager {name}"))
        judge.judge(pods, self.t0, t1, JUDGE_INTERVAL,
                    fail_on=("definite", "answers", "promise"))
        log("judge: no agent said yes for its pod while another pod's manager held the Lease "
            f"({judge.gap_report(pods, INTERVAL)})")
        return pods, spans

    def measure(self, pods, spans, fault, holder_pod, t_fault):
        """The numbers of this fault: the old holder's yes against its manager's leadership, the
        room left to the new holder, and the new holder's first yes."""
        old = [x for x in spans if x[0] == holder_pod]
        new = [x for x in spans if x[0] != holder_pod and x[1] > t_fault - 1]
        assert old and new, (old, new)
        acquired_new = new[0][1]
        yes = [x for x in pods[holder_pod] if x.yes and x.valid_until is not None]
        last_yes = max(x.end for x in yes)
        first_new = min(x.send for x in pods[new[0][0]] if x.yes and x.valid_until is not None
                        and x.send >= acquired_new - 1)
        # Every agent's promise against every other pod's manager: the least room left.
        room = min(span[1] - x.end for span in spans for p, ss in pods.items() if p != span[0]
                   for x in ss if x.yes and x.valid_until is not None and x.send < span[1])
        # The bounds of docs/safety.md ("Observe mode"): the old pod's yes ended at most
        # renew-deadline after a Get sent before the last renewal, which came before the fault;
        # the new pod's yes came with the first Get after the takeover's watch event (within a
        # retry-period without the watch).
        assert last_yes <= t_fault + TIMINGS.renew + 0.05, (last_yes - t_fault)
        assert first_new - acquired_new <= 2 * TIMINGS.retry + 0.5, (first_new - acquired_new)
        assert room > 0, room
        measured(f"observe {fault}: {old[-1][5]}'s leadership ended {old[-1][3] - t_fault:+.2f}s "
                 f"from the fault; its pod's last validUntil {last_yes - t_fault:+.2f}s; "
                 f"{new[0][5]} acquired {acquired_new - t_fault:.2f}s after the fault, "
                 f"{acquired_new - last_yes:.2f}s after that validUntil; its pod's first yes "
                 f"{first_new - acquired_new:.2f}s after its acquireTime; least room between any "
                 f"promise and another pod's acquisition: {room:.2f}s")


def one_fault(s, fault):
    """One fault (the module doc's) of the holder's manager; another pod's manager takes the
    Lease once it expires, and the old pod's yes ends first."""
    r = Run(s, fault)
    holder = r.wait_holder(timeout=40)
    log(f"holder: {holder} ({lease_holder(r.ns)})")
    r.check(holder)
    time.sleep(3)  # a few renewals under the agents' eyes
    m = r.manager_of(holder)
    t_fault = time.time()
    if fault == "kill":
        m.kill()
    elif fault == "freeze":
        m.pause()
        time.sleep(TIMINGS.lease + 3)
    elif fault == "term":
        m.term()
        assert m.wait(TIMINGS.renew + 10) is not None, "the manager did not stop after SIGTERM"
    new = r.wait_holder(other_than=holder, timeout=30)
    if fault == "freeze":
        m.resume()
        rc = m.wait(TIMINGS.renew + 10)
        log(f"{m.name} after SIGCONT: exited with {rc} (controller-runtime exits on a lost lease)")
    log(f"new holder: {new} ({lease_holder(r.ns)}), {time.time() - t_fault:.2f}s after the fault")
    r.check(new)
    want = {f"{holder} became leader", f"{holder} stopped leading", f"{new} became leader"}
    wait_until(lambda: {e["message"] for e in leader_events(r.cp, r.ns)} >= want, 10,
               what=f"events {want}")
    time.sleep(2)
    assert re.fullmatch(r"op-\d_[0-9a-f-]{36}", lease_holder(r.ns)), lease_holder(r.ns)
    pods, spans = r.judge()
    r.measure(pods, spans, fault, holder, t_fault)


for fault in ("kill", "freeze", "term"):
    SCENARIOS.bind(one_fault, fault, name=fault)


if __name__ == "__main__":
    sys.exit(SCENARIOS.main())
