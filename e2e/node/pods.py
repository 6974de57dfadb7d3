"""The node's view of one pod: its containers and its cgroup in the v1 freezer hierarchy."""

import os
from pathlib import Path

FREEZER = Path("/sys/fs/cgroup/freezer/leasehold-node")


def pod_uid(run, pod):
    return run.node.kjson("get", "pod", "-n", run.ns, pod)["metadata"]["uid"]


def pod_freezer(run, pod):
    """The pod's cgroup in the v1 freezer hierarchy (kubelet cgroupfs driver: .../pod<uid>)."""
    uid = pod_uid(run, pod)
    for d, dirs, _ in os.walk(FREEZER):
        if Path(d).name == f"pod{uid}":
            return Path(d)
    raise AssertionError(f"no freezer cgroup pod{uid} under {FREEZER}")


def pod_pids(cg):
    pids = []
    for d, _, files in os.walk(cg):
        if "cgroup.procs" in files:
            pids += [int(x) for x in (Path(d) / "cgroup.procs").read_text().split()]
    return pids


def container_id(run, pod, name):
    p = run.node.kjson("get", "pod", "-n", run.ns, pod)
    for c in p["status"].get("initContainerStatuses", []) + p["status"].get("containerStatuses", []):
        if c["name"] == name and c.get("containerID"):
            return c["containerID"].split("://", 1)[1], c.get("restartCount", 0)
    raise AssertionError(f"no container {name} in {pod}")


def signal_container(run, pod, name, sig):
    cid, _ = container_id(run, pod, name)
    run.node.node_sh("enter", "ctr", "--address", "/run/containerd/containerd.sock", "-n",
                     "k8s.io", "tasks", "kill", "-s", sig, cid)


def restarts(run, pod, name):
    return container_id(run, pod, name)[1]
