"""A stand-in for an operator that elects itself (controller-runtime, client-go) where there is
no operator to run: it holds a Lease the way their electors write one (holderIdentity
`<pod>_<uuid>`, leaseDurationSeconds, acquireTime, renewTime in microseconds, leaseTransitions)
and renews it every `retry` seconds, through the admin's REST access. Observe mode's "yes" needs
renewals it can see (docs/safety.md, "Observe mode"): a Lease nobody renews never yields one.

    with StandInHolder(cp, ns_name, "d2ab61da.syn.tools", "k8up-a") as h:
        ...
        h.hand_to("k8up-b")   # stops renewing, waits out the lease, takes it as another pod

The e2e scenarios that need a real elector use e2e/lib/operator.py instead."""

import datetime
import threading
import time
import uuid

from e2e.lib.common import log, start_threads


def micro_now():
    """Now as a Lease's MicroTime (RFC 3339, microseconds, UTC)."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class StandInHolder:
    def __init__(self, cp, namespace, name, pod, lease_seconds=15, retry=1.0):
        self.cp, self.ns, self.name = cp, namespace, name
        self.lease_seconds, self.retry = lease_seconds, retry
        self.path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"
        self.identity = None
        self._stop = threading.Event()
        self._paused = threading.Event()
        self._thread = None
        self._take(pod)

    def _take(self, pod):
        """Writes this pod's identity as a new holder (leaseTransitions + 1 after the first)."""
        self.identity = f"{pod}_{uuid.uuid4()}"
        now = micro_now()
        st, cur = self.cp.request("GET", self.path)
        spec = {"holderIdentity": self.identity, "leaseDurationSeconds": self.lease_seconds,
                "acquireTime": now, "renewTime": now}
        if st == 404:
            spec["leaseTransitions"] = 0
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.ns}, "spec": spec}
            st, b = self.cp.request("POST", self.path.rsplit("/", 1)[0], body)
            assert st == 201, (st, b)
        else:
            assert st == 200, (st, cur)
            spec["leaseTransitions"] = cur["spec"].get("leaseTransitions", 0) + 1
            cur["spec"] = spec
            st, b = self.cp.request("PUT", self.path, cur)
            assert st == 200, (st, b)
        log(f"stand-in holder: {self.ns}/{self.name} held by {self.identity}")

    def _run(self):
        while not self._stop.wait(self.retry):
            if self._paused.is_set():
                continue
            st, cur = self.cp.request("GET", self.path)
            if st != 200:
                continue
            cur["spec"]["renewTime"] = micro_now()
            self.cp.request("PUT", self.path, cur)  # a conflict: the next round renews

    def __enter__(self):
        self._thread = start_threads(self._run, [()])[0]
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread:
            self._thread.join(10)

    def stop_renewing(self):
        """As a holder that died: the Lease stays, naming it, and expires."""
        self._paused.set()

    def hand_to(self, pod):
        """The holder dies, the Lease expires, `pod`'s elector takes it (as controller-runtime's
        followers do: after lease-duration of no change, no release)."""
        self.stop_renewing()
        time.sleep(self.lease_seconds + 1)
        self._take(pod)
        self._paused.clear()
