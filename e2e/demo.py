#!/usr/bin/env python3
"""The demo behind `make demo`: three agents elect a leader on a real control plane, the leader
is killed with SIGKILL, and a follower takes over once the lease has expired."""

import sys
import time

from e2e.lib.agent import wait_single_leader
from e2e.lib.common import MONO_TO_WALL, wait_until
from e2e.lib.controlplane import ControlPlane, Namespace
from e2e.lib.runner import Scenario
from e2e.lib.sampler import Sampler
from e2e.lib.timings import FAST


def show(agents):
    print(f"   {'agent':<10} {'isLeader':<9} {'leader':<10} {'term':<5} validForMs")
    for a in agents:
        st, b = a.leader(1.0)
        if st is None:
            print(f"   {a.name:<10} (not answering: {b})")
            continue
        print(f"   {a.name:<10} {str(b.get('isLeader')):<9} {b.get('name') or '-':<10} "
              f"{b.get('term')!s:<5} {b.get('validForMs', '-')}")


def main():
    with Scenario("demo") as s:
        print("== starting etcd and kube-apiserver on 127.0.0.1")
        cp = ControlPlane()
        s.cps.append(cp)
        cp.start()
        ns = Namespace(cp, "demo")
        print(f"== namespace demo: ServiceAccount, Role and RoleBinding from deploy/rbac; "
              f"lock Lease demo/{ns.lock_name}")
        print(f"== starting three agents (lease-duration {FAST.lease:g}s, renew-deadline "
              f"{FAST.renew:g}s, retry-period {FAST.retry:g}s), each as a pod would run it: its "
              f"own service-account token")
        agents = [s.agent(ns, name).start() for name in ("alpha", "bravo", "charlie")]
        with Sampler(agents) as smp:
            t0 = time.monotonic()
            leader = wait_single_leader(agents, 30)
            print(f"== {leader.name} leads after {time.monotonic() - t0:.2f}s. "
                  "Each agent's view (GET /leader):")
            time.sleep(1)
            show(agents)
            spec = ns.lease()["spec"]
            print(f"== the Lease, read with kubectl: holderIdentity={spec['holderIdentity']} "
                  f"leaseTransitions={spec['leaseTransitions']} renewTime={spec['renewTime']}")
            print(f"== kill -9 {leader.name} (no release: the others must wait for the lease "
                  "to expire)")
            leader.kill()
            t_kill = time.monotonic()
            rest = [a for a in agents if a is not leader]
            new = wait_single_leader(rest, 30)
            first = wait_until(lambda: smp.first_yes_after(t_kill, exclude=(leader.name,)), 5,
                               what="the sampler to see the new leader")
            last_renew = smp.last_valid_until(leader.name) - FAST.renew
            print(f"== {new.name} took over {first[0] - t_kill:.2f}s after the kill, "
                  f"{first[0] + MONO_TO_WALL - last_renew:.2f}s after the old leader's last renew "
                  f"(lease-duration {FAST.lease:g}s + up to {2.2 * FAST.retry:g}s retry jitter)")
            time.sleep(0.5)
            show(rest)
        overlaps = smp.overlaps()
        print(f"== {smp.count()} samples of /leader every 50 ms: "
              f"{'no two leaders at any instant' if not overlaps else f'OVERLAPS: {overlaps}'}")
        print("== cleaning up: agents, kube-apiserver, etcd")
        return 1 if overlaps else 0


if __name__ == "__main__":
    sys.exit(main())
