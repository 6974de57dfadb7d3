"""cluster.assert_shipped(), checked without a cluster: it passes on what cluster.render() makes of
each variant, and fails on each kind of drift (DRIFTS) it exists to catch.

    python3 -m e2e.node.render_check        (needs the control plane's kubectl: build.sh)
"""

import copy
import os
import subprocess
import tempfile
from pathlib import Path

from e2e.node import cluster

REPO = Path(__file__).resolve().parents[2]


class KustomizeOnly:
    """The part of cluster.Node that rendering needs."""

    def __init__(self, bin_dir, tmp):
        self.bin_dir, self.dir = Path(bin_dir), Path(tmp)

    def kubectl(self, *args, input=None, check=True, timeout=120):
        r = subprocess.run([str(self.bin_dir / "kubectl"), *args], input=input,
                           capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(r.stderr)
        return r.stdout


def deployment(docs):
    return next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]


def sidecar(docs):
    spec = deployment(docs)
    return next(c for c in spec.get("initContainers", []) + spec["containers"]
                if c["name"] == "leasehold")


DRIFTS = [
    ("a probe's period", lambda d: sidecar(d)["readinessProbe"].__setitem__("periodSeconds", 1)),
    ("a sidecar env var", lambda d: sidecar(d)["env"].append({"name": "X", "value": "1"})),
    ("the security context", lambda d: sidecar(d)["securityContext"].__setitem__(
        "readOnlyRootFilesystem", False)),
    ("a Role rule", lambda d: next(x for x in d if x["kind"] == "Role")["rules"].append(
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]})),
    ("a setting", lambda d: next(x for x in d if x["kind"] == "ConfigMap")["data"].__setitem__(
        "LEASEHOLD_LEASE_DURATION", "1s")),
    ("the pod's grace period", lambda d: deployment(d).__setitem__(
        "terminationGracePeriodSeconds", 1)),
    ("the sidecar's image, not ours", lambda d: sidecar(d).__setitem__("image", "evil:1")),
    ("an object besides the shipped ones and the operator's RBAC", lambda d: d.append(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "extra"}})),
]


def main():
    bin_dir = os.environ.get("CONTROLPLANE_BIN") or subprocess.run(
        ["bash", str(REPO / "e2e/controlplane/build.sh")], capture_output=True, text=True,
        check=True, env={**os.environ, "SKIP_HELM": "1"}).stdout.strip().splitlines()[-1]
    with tempfile.TemporaryDirectory() as tmp:
        node = KustomizeOnly(bin_dir, tmp)
        for variant in cluster.VARIANTS:
            docs, shipped = cluster.render(node, variant, 3, app_env={"LHAPP_UNIT_MS": 100})
            cluster.assert_shipped(docs, shipped)
            assert sidecar(docs)["image"] == cluster.LEASEHOLD_IMAGE
            for name, drift in DRIFTS:
                bad = copy.deepcopy(docs)
                drift(bad)
                try:
                    cluster.assert_shipped(bad, shipped)
                except AssertionError:
                    continue
                raise AssertionError(f"{variant}: assert_shipped missed a drift of {name}")
            print(f"render check {variant}: {len(docs)} objects as shipped; {len(DRIFTS)} drifts caught")


if __name__ == "__main__":
    main()
