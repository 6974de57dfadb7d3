#!/usr/bin/env python3
"""e2e scenarios of coordinated leader election (KEP-4355) beside leasehold, on a real
kube-apiserver with the CoordinatedLeaderElection feature gate on.

Usage: python3 -m e2e.scenarios.coordinated NAME [NAME...]   (or `all`, `list`).

The gate is beta and off by default from Kubernetes 1.33; with it off the apiserver drops
spec.strategy and spec.preferredHolder from a Lease that had none, so each scenario starts a
control plane of its own with the gate on (about 10 s each; the shared one runs without it).
The test writes the two fields as the apiserver's coordinated-election controller does at the
end of a term (a third-party strategy, which must contain a "/"), and reads every version of
the Lease through a watch. What leasehold keeps of them, and what --preferred-holder yield does,
is argued in src/election/elector.cpp ("Coordinated leader election") and docs/safety.md.
"""

import contextlib
import json
import sys
import time

from e2e.lib.agent import wait_single_leader
from e2e.lib.common import MONO_TO_WALL, log, wait_until
from e2e.lib.controlplane import Namespace
from e2e.lib.lockwatch import LockWatcher
from e2e.lib.members import start_fleet
from e2e.lib.runner import Registry
from e2e.lib.sampler import Sampler
from e2e.lib.timings import FAST

SCENARIOS = Registry()
scenario = SCENARIOS.add

# The gate, and the LeaseCandidate API (coordination.k8s.io/v1beta1) the gate's controller
# watches: beta APIs are off by default too.
GATE_ON = ("--feature-gates=CoordinatedLeaderElection=true "
           "--runtime-config=coordination.k8s.io/v1beta1=true")
STRATEGY = "example.com/test"


def spec_of(kind, obj):
    """The whole spec of a Lease version (LockWatcher's parse)."""
    return dict(obj.get("spec") or {})


@contextlib.contextmanager
def started(s, name, n, extra=()):
    """(ns, agents, watch, smp): `n` agents in Namespace `name` on a control plane with the gate
    on, a watch of every version of their Lease, and a Sampler of their answers. On the way out
    the watch stops, and the overlap judge (e2e/lib/judge.py) rules on every answer sampled."""
    cp = s.control_plane(GATE_ON)
    ns = Namespace(cp, name)
    agents = start_fleet(s, ns, n, extra=list(extra))
    watch = LockWatcher(cp, ns, parse=spec_of).start()
    try:
        with Sampler(agents) as smp:
            yield ns, agents, watch, smp
    finally:
        watch.stop()
    judged = smp.overlaps()
    assert not judged, f"two leaders at once: {judged[:3]} ({smp.count()} samples)"


def mark_end_of_term(ns, preferred):
    """Writes strategy and preferredHolder into the Lease, as the coordinated-election
    controller marks the end of a term; returns the resourceVersion of that write."""
    out = ns.cp.kubectl("patch", "lease", ns.lock_name, "-n", ns.name, "--type=merge", "-o",
                        "json", "-p", json.dumps({"spec": {"strategy": STRATEGY,
                                                           "preferredHolder": preferred}}))
    obj = json.loads(out)
    assert obj["spec"].get("strategy") == STRATEGY, obj["spec"]
    assert obj["spec"].get("preferredHolder") == preferred, obj["spec"]
    return obj["metadata"]["resourceVersion"]


def versions_after(watch, rv):
    """The specs of every version the watch saw after resourceVersion `rv` (the mark's),
    in order."""
    wait_until(lambda: rv in [e[3] for e in watch.history("lease")], 10,
               what=f"the watch to see version {rv}")
    history = watch.history("lease")
    rvs = [e[3] for e in history]
    return [e[4] for e in history[rvs.index(rv) + 1:]]


@scenario
def renews_keep_fields(s):
    """--preferred-holder keep (the default): the leader goes on renewing, and every renewal
    writes strategy and preferredHolder back as it found them (client-go's plain elector drops
    them)."""
    with started(s, "e2e-coord-keep", 2) as (ns, agents, watch, smp):
        leader = wait_single_leader(agents, 20)
        follower = next(a for a in agents if a is not leader)
        rv = mark_end_of_term(ns, follower.name)
        renewals = lambda: [sp for sp in versions_after(watch, rv)  # noqa: E731
                            if sp.get("holderIdentity") == leader.name]
        wait_until(lambda: len({sp.get("renewTime") for sp in renewals()}) >= 3,
                   10 * FAST.retry, what="three renewals after the mark")
        for sp in versions_after(watch, rv):
            assert sp.get("holderIdentity") == leader.name, sp
            assert sp.get("strategy") == STRATEGY, sp
            assert sp.get("preferredHolder") == follower.name, sp
        assert leader.is_leader(), "the leader stopped leading with the default rule"
        log(f"{len(renewals())} renewals after the mark kept strategy and preferredHolder")


@scenario
def yield_hands_over(s):
    """--preferred-holder yield: once the Lease names a follower as preferred holder, the leader
    writes no more renewals, its "yes" ends with its last claim, and the preferred follower (not
    the third agent) takes the Lease when it expires, with the strategy kept and the preferred
    holder cleared; no two agents say "yes" at once (the overlap judge)."""
    fleet = started(s, "e2e-coord-yield", 3, ["--preferred-holder=yield"])
    with fleet as (ns, agents, watch, smp):
        leader = wait_single_leader(agents, 20)
        term = leader.leader()[1]["term"]
        preferred, other = [a for a in agents if a is not leader]
        time.sleep(2 * FAST.retry)  # a few renewals, so the mark lands between two
        t_mark = time.monotonic()
        rv = mark_end_of_term(ns, preferred.name)
        new = wait_single_leader([preferred, other], FAST.renew + 2 * FAST.lease + 5,
                                 what="a follower to lead",
                                 holder=lambda: ns.lease()["spec"].get("holderIdentity"))
        took = time.monotonic() - t_mark
        assert new is preferred, f"{new.name} took over, not the preferred {preferred.name}"
        time.sleep(2 * FAST.retry)  # the new leader renews; the others stay out
        after = versions_after(watch, rv)
    old = [sp for sp in after if sp.get("holderIdentity") == leader.name]
    assert not old, f"the leader wrote after the mark: {old}"
    taken = [sp for sp in after if sp.get("holderIdentity") == preferred.name]
    assert taken, after
    first = taken[0]
    assert first.get("strategy") == STRATEGY, first
    assert "preferredHolder" not in first, first
    assert first.get("leaseTransitions") == term + 1, (term, first)
    assert all(sp.get("holderIdentity") == preferred.name for sp in after), after
    assert not any(a.is_leader() for a in (leader, other))
    t_first, first_yes = smp.first_yes_after(t_mark, exclude=(leader.name,))
    assert first_yes == preferred.name, first_yes
    gap = t_first + MONO_TO_WALL - smp.last_valid_until(leader.name)
    log(f"the old leader's last validUntil came {gap:.2f}s before the new leader's first yes; "
        f"no overlap in {smp.count()} samples")
    assert "as preferred holder: not renewing" in leader.log_text(), "no yield logged"
    assert "yielded lease" in leader.log_text(), "no end of term logged"
    log(f"handed over to the preferred {preferred.name} {took:.2f}s after the mark "
        f"(lease-duration {FAST.lease}s)")


if __name__ == "__main__":
    sys.exit(SCENARIOS.main())
