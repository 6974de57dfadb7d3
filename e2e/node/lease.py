"""The node's view of the lock's record during a fault: the holder and its times as the
apiserver stores them (lease), and the last renew of one holder (LeaseTracker): the upper
estimate of the last validUntil it gave out is that renew + renew-deadline."""

import json

from e2e.node import judge
from e2e.node.cluster import cluster_time

# The gate's teardown margin: SIGKILL this long before validUntil (`leasehold gate`).
GATE_MARGIN = 0.25


def lease(run):
    """(holder identity, renewTime, acquireTime) of the lock, times in epoch seconds: the Lease,
    or for the classic variant the ConfigMap's leader annotation (whole seconds: record_slack)."""
    if run.variant == "classic":
        path = f"/api/v1/namespaces/{run.ns}/configmaps/{run.lock_name}"
        meta = run.node.api("GET", path)["metadata"]
        ann = (meta.get("annotations") or {}).get("control-plane.alpha.kubernetes.io/leader")
        spec = json.loads(ann) if ann else {}
    else:
        path = f"/apis/coordination.k8s.io/v1/namespaces/{run.ns}/leases/{run.lock_name}"
        spec = run.node.api("GET", path)["spec"]
    t = lambda k: cluster_time(spec[k]) if spec.get(k) else None  # noqa: E731
    return spec.get("holderIdentity") or "", t("renewTime"), t("acquireTime")


class LeaseTracker:
    """Polls the Lease (every 0.1 s, one request) during a fault: the last renewTime the
    apiserver stored for `holder` (a renew whose answer a partition dropped still counts: it is
    what the rivals saw), and the first record of another holder."""

    def __init__(self, run, holder_pod):
        self.run, self.pod = run, holder_pod
        self.last_renew = self.taken = None

    def poll(self):
        h, renew, acquire = lease(self.run)
        if judge.pod_of(h, [self.pod]) == self.pod:
            self.last_renew = renew
        elif h and self.taken is None:
            self.taken = (h, acquire)
        return self.taken
