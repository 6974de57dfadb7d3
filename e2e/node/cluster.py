"""The node tier's view of the one-node cluster that e2e/node/node.sh brings up, and the shipped
overlays rendered for it. A scenario process enters the node's network namespace (enter_netns):
the apiserver listens on the node IP there, and the pods' IPs are reachable without forwarding.
"""

import ctypes
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import yaml

from e2e.lib.common import DEPLOY, REPO, parse_rfc3339

NODE_SH = REPO / "e2e" / "node" / "node.sh"
NETNS = "/run/netns/lh-node"
CLONE_NEWNET = 0x40000000

LEASEHOLD_IMAGE = "leasehold.local/leasehold:dev"
APP_IMAGE = "leasehold.local/lhapp:1"
OPERATOR_IMAGE = "leasehold.local/crmanager:1"  # e2e/node/images.py


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}.{int(time.time() * 1000) % 1000:03d}] {msg}", flush=True)


cluster_time = parse_rfc3339  # kubectl --timestamps (RFC 3339, ns) -> seconds since the epoch


HOST_NETNS_FD = None


def _setns(fd):
    if ctypes.CDLL(None, use_errno=True).setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns")


def host_run(cmd, nice=0, **kw):
    """subprocess.run of `cmd` in the host's network namespace (this process lives in the
    node's, see enter_netns), `nice` below this process's priority."""
    def child():
        if HOST_NETNS_FD is not None:
            _setns(HOST_NETNS_FD)
        os.nice(nice)
    return subprocess.run(cmd, preexec_fn=child, **kw,
                          pass_fds=() if HOST_NETNS_FD is None else (HOST_NETNS_FD,))


def enter_netns():
    """Moves this process, before any thread, into the node's netns; host_run() keeps the host's."""
    global HOST_NETNS_FD
    HOST_NETNS_FD = os.open("/proc/self/ns/net", os.O_RDONLY)
    fd = os.open(NETNS, os.O_RDONLY)
    try:
        _setns(fd)
    finally:
        os.close(fd)


class ApiError(RuntimeError):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Node:
    def __init__(self, node_dir=None):
        self.dir = Path(node_dir or os.environ["LEASEHOLD_NODE_DIR"]).resolve()
        env = {}
        for line in (self.dir / "cp" / "env").read_text().splitlines():
            if "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                env[k] = v.strip("'\"")
        self.cp_env = env
        self.bin_dir = Path(env["BIN_DIR"])
        self.kubeconfig = self.dir / "cp" / "admin.kubeconfig"

    def kubectl(self, *args, input=None, check=True, timeout=120, result=False):
        """kubectl's stdout, or with `result` the CompletedProcess."""
        cmd = [str(self.bin_dir / "kubectl"), "--kubeconfig", str(self.kubeconfig),
               "--cache-dir", str(self.dir / ".kube-cache"), *args]
        r = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)}: {r.returncode}: {r.stderr.strip()}")
        return r if result else r.stdout

    def api(self, method, path, timeout=10, body=None):
        """One request to the apiserver with the admin certificate, no kubectl process (~0.3 s of
        start-up under load, counted into a measured failover). `body`: a JSON object. An
        answer >= 300 raises ApiError (its .status, e.g. 429 for a refused eviction)."""
        import http.client
        import ssl
        env = self.cp_env
        ctx = getattr(self, "_ssl", None)
        if ctx is None:  # once: loading the CA and the key costs ms of CPU (the fault scenarios
            ctx = self._ssl = ssl.create_default_context(cafile=env["CA_CRT"])  # poll at 10 Hz)
            ctx.load_cert_chain(env["ADMIN_CRT"], env["ADMIN_KEY"])
        c = http.client.HTTPSConnection(env["APISERVER_HOST"], int(env["APISERVER_PORT"]),
                                        context=ctx, timeout=timeout)
        try:
            if body is None:
                c.request(method, path)
            else:
                c.request(method, path, body=json.dumps(body),
                          headers={"Content-Type": "application/json"})
            r = c.getresponse()
            answer = r.read()
            if r.status >= 300:
                raise ApiError(r.status, f"{method} {path}: {r.status} {answer[:300]!r}")
            return json.loads(answer or b"null")
        finally:
            c.close()

    def delete_pod(self, ns, pod):
        self.api("DELETE", f"/api/v1/namespaces/{ns}/pods/{pod}")

    def kjson(self, *args):
        return json.loads(self.kubectl(*args, "-o", "json"))

    def health(self):
        r = self.node_sh("health", str(self.dir), check=False)
        if r.returncode != 0:
            raise AssertionError(f"node fixture unhealthy: {(r.stdout + r.stderr).strip()}")

    def node_sh(self, *args, check=True, nice=0):
        """node.sh from the host's network namespace (the health check reads the host's
        sysctls), `nice` below this process's priority."""
        return host_run(["bash", str(NODE_SH), *args], nice, check=check, capture_output=True,
                        text=True, timeout=300)

    def pods(self, ns, selector="app.kubernetes.io/name=leasehold-example"):
        """One request, no kubectl process: polled every 0.2 s, a kubectl start (~0.2 s of CPU)
        that often starved the sampler's threads under load."""
        from urllib.parse import quote
        return self.api("GET", f"/api/v1/namespaces/{ns}/pods?labelSelector={quote(selector)}")["items"]

    def evidence(self, out):
        self.node_sh("evidence", str(self.dir), str(out), check=False)


# ------------------------------------------------------------------ rendering

VARIANTS = {
    # variant -> (overlay, components)
    "native": ("overlays/native-sidecar", ["rbac/leader-label"]),
    "classic": ("overlays/classic-sidecar", []),
    "gate": ("overlays/native-sidecar", ["components/gate", "rbac/leader-label"]),
    # For the scenarios that set the costs themselves (no leader label: it needs the same Role).
    "native-nocost": ("overlays/native-sidecar", ["components/no-deletion-cost"]),
    # Beside an operator that elects itself (operator_container), with the watcher pod.
    "observe": ("overlays/native-sidecar", ["rbac/leader-label", "components/observe",
                                            "components/observe-watch"]),
}


def kustomize(node, variant):
    """The shipped overlay (plus its components) exactly as `kubectl kustomize` renders it."""
    overlay, components = VARIANTS[variant]
    with tempfile.TemporaryDirectory(dir=node.dir) as tmp:
        rel = lambda p: os.path.relpath(DEPLOY / p, tmp)  # noqa: E731
        lines = ["apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization",
                 "resources:", f"  - {rel(overlay)}"]
        if components:
            lines += ["components:"] + [f"  - {rel(c)}" for c in components]
        (Path(tmp) / "kustomization.yaml").write_text("\n".join(lines) + "\n")
        return list(yaml.safe_load_all(node.kubectl("kustomize", tmp)))


def app_container(shipped_app, variant, env):
    """The test's app (lhapp) in place of the example's, its name, mounts, resources and security
    context kept; under the gate, the gate's command prefix too."""
    c = dict(shipped_app)
    c["image"], c["imagePullPolicy"] = APP_IMAGE, "Never"
    c.pop("args", None)
    cmd = shipped_app.get("command", [])
    if variant == "gate":
        c["command"] = cmd[:cmd.index("--") + 1] + ["/lhapp", "gated"]
    else:
        c["command"] = ["/lhapp", "work"]  # the classic overlay's preStop hook is kept
    c["env"] = [{"name": k, "value": str(v)} for k, v in env.items()]
    return c


def observed_lock(shipped):
    """The lock name of a rendering whose sidecar observes (LEASEHOLD_AGENT_MODE), or None."""
    for d in shipped:
        data = d.get("data") or {}
        if d["kind"] == "ConfigMap" and data.get("LEASEHOLD_AGENT_MODE") == "observe":
            return data["LEASEHOLD_LOCK_NAME"]
    return None


def operator_container(shipped_app, lock_name):
    """An operator that elects itself (e2e/crmanager, on the Lease `lock_name`) in place of the
    example's app, keeping its name, mounts and security context; its resources are a Go
    manager's, not the example shell's."""
    c = dict(shipped_app)
    c.pop("args", None)
    c["image"], c["imagePullPolicy"] = OPERATOR_IMAGE, "Never"
    c["command"] = ["/crmanager", "--namespace=$(POD_NAMESPACE)", f"--lease-id={lock_name}"]
    c["env"] = [{"name": "POD_NAMESPACE",
                 "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]
    c["resources"] = {"requests": {"cpu": "10m", "memory": "32Mi"},
                      "limits": {"memory": "128Mi"}}
    return c


def operator_rbac(lock_name):
    """What the operator's own chart grants it for its election, on the pod's ServiceAccount
    (deploy/components/observe leaves it to the operator): the only objects a node scenario may
    add to a shipped rendering (assert_shipped)."""
    meta = {"name": "operator-leader-election",
            "labels": {"app.kubernetes.io/name": "operator"}}
    return [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta,
         "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                    "resourceNames": [lock_name], "verbs": ["get", "update"]},
                   {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                    "verbs": ["create"]},
                   {"apiGroups": ["", "events.k8s.io"], "resources": ["events"],
                    "verbs": ["create", "patch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta,
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                     "name": meta["name"]},
         "subjects": [{"kind": "ServiceAccount", "name": "leasehold"}]},
    ]


def render(node, variant, replicas, app_env=None, configmap=None):
    """(docs, shipped): the objects to apply (as assert_shipped allows: `app` is the operator
    under observe), and the shipped rendering. `configmap` (test timings): a named exception."""
    shipped = kustomize(node, variant)
    docs = json.loads(json.dumps(shipped))
    lock = observed_lock(shipped)
    for d in docs:
        if d["kind"] == "Deployment":
            spec = d["spec"]["template"]["spec"]
            if any(c["name"] == "app" for c in spec["containers"]):
                d["spec"]["replicas"] = replicas
            for c in spec.get("initContainers", []) + spec["containers"]:
                if c["image"].startswith("leasehold"):
                    c["image"], c["imagePullPolicy"] = LEASEHOLD_IMAGE, "Never"
            spec["containers"] = [
                (operator_container(c, lock) if lock else app_container(c, variant, app_env or {}))
                if c["name"] == "app" else c for c in spec["containers"]]
        if d["kind"] == "ConfigMap" and configmap:
            d["data"].update(configmap)
    if lock:
        docs += operator_rbac(lock)
    return docs, shipped


def assert_shipped(docs, shipped, configmap=None):
    """Every object but the Deployments is the shipped one; in the Deployments only replicas,
    images (and imagePullPolicy) and the `app` container differ; under observe, exactly the
    operator's RBAC (operator_rbac) follows the shipped objects."""
    lock = observed_lock(shipped)
    extra = operator_rbac(lock) if lock else []
    assert len(docs) == len(shipped) + len(extra), \
        f"{len(docs)} objects, {len(shipped)} shipped + {len(extra)} of the operator's"
    assert docs[len(shipped):] == extra, "objects besides the shipped ones and the operator's RBAC"
    for d, s in zip(docs, shipped):
        if d["kind"] == "ConfigMap" and configmap:
            s = json.loads(json.dumps(s))
            s["data"].update(configmap)
        if d["kind"] != "Deployment":
            assert d == s, f"{d['kind']}/{d['metadata']['name']} differs from the shipped one"
            continue
        a, b = json.loads(json.dumps(d)), json.loads(json.dumps(s))
        a["spec"].pop("replicas"), b["spec"].pop("replicas")
        ap, bp = a["spec"]["template"].pop("spec"), b["spec"]["template"].pop("spec")
        assert a == b, "Deployment metadata/selector differ from the shipped one"
        for key in set(ap) | set(bp):
            if key in ("containers", "initContainers"):
                continue
            assert ap.get(key) == bp.get(key), f"pod spec field {key} differs"
        for key in ("containers", "initContainers"):
            mine = {c["name"]: c for c in ap.get(key, [])}
            theirs = {c["name"]: c for c in bp.get(key, [])}
            assert mine.keys() == theirs.keys(), f"{key}: {mine.keys()} vs {theirs.keys()}"
            for name, c in theirs.items():
                if name == "app":
                    continue
                m = dict(mine[name])
                image, policy = m.pop("image", None), m.pop("imagePullPolicy", None)
                assert (image, policy) == (LEASEHOLD_IMAGE, "Never"), f"{name}: {image} {policy}"
                c = dict(c)
                c.pop("image")
                assert json.dumps(m, sort_keys=True) == json.dumps(c, sort_keys=True), \
                    f"container {name} differs from the shipped one"


def apply(node, ns, docs):
    node.kubectl("create", "namespace", ns, check=False)
    node.kubectl("apply", "-n", ns, "-f", "-", input=yaml.safe_dump_all(docs))
