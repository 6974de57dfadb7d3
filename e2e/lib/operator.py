"""An operator that elects itself, for observe mode's e2e scenarios (e2e/scenarios/observe.py,
e2e/scenarios/prometheus.py): the real controller-runtime manager (e2e/crmanager: LeaderElection on
a Lease, identity <hostname>_<uuid>), the Pod objects its "pods" are (for the leader label), and
what the Lease, the labels and the Events say. LEASEHOLD_CRMANAGER_BIN: the manager binary or its
bin dir (default: what e2e/crmanager/build.sh builds into ~/.cache/leasehold-e2e)."""

import os
import re
import time
from pathlib import Path

from e2e.lib.agent import Agent
from e2e.lib.common import parse_rfc3339
from e2e.lib.members import _built, _pod_env
from e2e.lib.timings import MIXED

LABEL = "leasehold.io/role"


def manager_binary():
    p = _built("LEASEHOLD_CRMANAGER_BIN", "crmanager/build.sh", "controller-runtime manager")
    b = p / "crmanager" if p.is_dir() else p
    assert b.is_file() and os.access(b, os.X_OK), f"no manager binary at {b}"
    return str(b)


LEADING = re.compile(r"^LEADING (\S+) (\S+) (\S+) (\S+)$", re.M)
STOPPED = re.compile(r"^STOPPED (\S+) (\S+)$", re.M)


class CrManager(Agent):
    """One controller-runtime manager of pod `pod`, as the operator container of that pod: its
    own kubeconfig of the namespace's service account, its host name the pod's name."""

    family = "controller-runtime"
    kind = "controller-runtime v0.25.3"

    def __init__(self, ns, pod, binary, gen=0, timings=MIXED):
        self.ns, self.pod = ns, pod
        self.name = self.identity = f"{pod}-manager{gen}"
        self.port = None
        self.log_path = Path(ns.tmp) / f"{self.name}.log"
        kubeconfig = ns.peer_kubeconfig(self.name)
        lease, renew, retry = timings.strings()
        self.args = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', pod, binary,
                     f"--kubeconfig={kubeconfig}", f"--namespace={ns.name}",
                     f"--lease-id={ns.lock_name}", f"--lease-duration={lease}",
                     f"--renew-deadline={renew}", f"--retry-period={retry}"]
        self.env = _pod_env(ns.tmp)
        self.proc = None
        self.died_at = None  # wall clock of a SIGKILL

    def describe(self):
        return f"{self.name} ({self.kind}, pod {self.pod})"

    def kill(self):
        super().kill()
        self.died_at = time.time()

    def leaderships(self, now):
        """[(holder, acquired, leading, end)] wall clock: from the Lease's acquireTime (or the
        LEADING line) to its STOPPED line, its death, or `now`."""
        text = self.log_text()
        out = []
        for m in LEADING.finditer(text):
            holder, acq, at = m.group(2), m.group(3), parse_rfc3339(m.group(4))
            acquired = parse_rfc3339(acq) if acq != "?" else at
            stop = [parse_rfc3339(s.group(2)) for s in STOPPED.finditer(text)
                    if parse_rfc3339(s.group(2)) >= at]
            end = stop[0] if stop else (self.died_at or now)
            out.append((holder, acquired, at, min(end, self.died_at or end)))
        return out


def create_pods(cp, ns, names, sa):
    """Pod objects (of ServiceAccount `sa`, in namespace `ns`: a name) for the leader label; no
    kubelet runs them."""
    for name in names:
        cp.kubectl("apply", "-n", ns, "-f", "-", input=(
            '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s"},"spec":{'
            '"serviceAccountName":"%s","automountServiceAccountToken":false,'
            '"containers":[{"name":"main","image":"registry.invalid/none:1"}]}}' % (name, sa)))


def labels(cp, ns, label=LABEL):
    """{pod name: its `label`} of every pod in namespace `ns` (a Namespace, or its name)."""
    pods = cp.get_json("pods", "-n", getattr(ns, "name", ns))["items"]
    return {p["metadata"]["name"]: p["metadata"].get("labels", {}).get(label) for p in pods}


def lease_holder(ns):
    try:
        return ns.lease()["spec"].get("holderIdentity") or ""
    except Exception:  # not created yet
        return ""


def pod_of(holder):
    return holder.split("_", 1)[0] if holder else None


def leader_events(cp, ns):
    items = cp.get_json("events", "-n", ns.name)["items"]
    return [e for e in items if e.get("reason") == "LeaderElection"
            and e.get("source", {}).get("component") == "leasehold"]
