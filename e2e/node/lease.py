"""The lock's record during a fault (node_faults.py, node.py's gate rounds), and LeaseTracker."""

import json

from e2e.node import judge
from e2e.node.bounds import CLOCK_SLACK
from e2e.node.cluster import cluster_time

# The gate's teardown margin: SIGKILL this long before validUntil (`leasehold gate`).
GATE_MARGIN = 0.25


def lease(run):
    """(holder identity, renewTime, acquireTime) of the lock, times in epoch seconds: the Lease,
    or for the classic variant the ConfigMap's leader annotation (whole seconds: record_slack)."""
    if run.variant == "classic":
        meta = run.node.api("GET", f"/api/v1/namespaces/{run.ns}/configmaps/{run.lock_name}")[
            "metadata"]
        ann = (meta.get("annotations") or {}).get("control-plane.alpha.kubernetes.io/leader")
        spec = json.loads(ann) if ann else {}
    else:
        spec = run.node.api(
            "GET", f"/apis/coordination.k8s.io/v1/namespaces/{run.ns}/leases/{run.lock_name}")["spec"]
    t = lambda k: cluster_time(spec[k]) if spec.get(k) else None  # noqa: E731
    return spec.get("holderIdentity") or "", t("renewTime"), t("acquireTime")


def record_slack(run):
    """How far a time read from the lock's record may lie from the instant it stands for: the
    Lease's MicroTime is written from the pods' clocks (CLOCK_SLACK); the ConfigMap record's
    times are RFC 3339 in whole seconds, truncated (up to 1 s early)."""
    return 1.0 + CLOCK_SLACK if run.variant == "classic" else CLOCK_SLACK


class LeaseTracker:
    """The last renewTime the apiserver stored for `holder` (a renew whose answer a partition
    dropped counts: the rivals saw it), and the first record of another holder, as polled."""

    def __init__(self, run, holder_pod):
        self.run, self.pod = run, holder_pod
        self.last_renew = self.taken = None
        self.poll()

    def poll(self):
        h, renew, acquire = lease(self.run)
        if judge.pod_of(h, [self.pod]) == self.pod:
            self.last_renew = renew
        elif h and self.taken is None:
            self.taken = (h, acquire)
        return self.taken
