"""The real control plane (etcd + kube-apiserver, e2e/controlplane/controlplane.sh), a test
namespace with its RBAC and lock, and watches on the apiserver (as its admin)."""

import http.client
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import time
from pathlib import Path

from e2e.lib.common import DEPLOY, REPO, exchange, log

CONTROLPLANE_SH = REPO / "e2e" / "controlplane" / "controlplane.sh"

# The versions of kube-apiserver a control plane can run (controlplane.sh's CONTROLPLANE_VERSION):
# today's, and v1.11.10, the Kubernetes of OpenShift 3.11, which has no Lease API at all.
V1_34, V1_11 = "v1.34", "v1.11.10"
VERSIONS = (V1_34, V1_11)


def wanted_version():
    """The version a scenario's control plane runs: LEASEHOLD_E2E_VERSION (set by a module of
    scenarios for one version, e.g. e2e/scenarios/v1_11.py), else today's."""
    v = os.environ.get("LEASEHOLD_E2E_VERSION") or V1_34
    if v not in VERSIONS:
        raise ValueError(f"LEASEHOLD_E2E_VERSION={v}: not one of {VERSIONS}")
    return v


def _without_coordination_off(extra_args):
    """extra_args without what only switches coordination.k8s.io off, for v1.11.10: the group
    does not exist there (the old cluster those args imitate on v1.34), and a scenario of an old
    cluster then shares the old control plane."""
    kept = []
    for a in extra_args.split():
        if a.startswith("--runtime-config="):
            parts = [p for p in a.split("=", 1)[1].split(",")
                     if not p.startswith("coordination.k8s.io")]
            if not parts:
                continue
            a = "--runtime-config=" + ",".join(parts)
        kept.append(a)
    return " ".join(kept)


def admin_context(env):
    """The TLS context of the cluster admin of a control plane's env (its CA and client cert)."""
    ctx = ssl.create_default_context(cafile=env["CA_CRT"])
    ctx.load_cert_chain(env["ADMIN_CRT"], env["ADMIN_KEY"])
    return ctx


def follow_watch(cp, path, stop, on_event, on_connect=None):
    """Follows the watch `path` (with its query) as the cluster admin until the threading.Event
    `stop` is set: calls on_event(type, resource_version, object) once per new resourceVersion of
    an ADDED, MODIFIED or DELETED event, and reconnects after any error or end of stream.
    on_connect(connection) gets each connection, so that a stopper can shut its socket down."""
    seen = set()
    ctx = admin_context(cp.env)
    while not stop.is_set():
        try:
            c = http.client.HTTPSConnection(cp.host, int(cp.port), timeout=5, context=ctx)
            if on_connect:
                on_connect(c)
            c.request("GET", path)
            r = c.getresponse()
            if r.status != 200:
                r.read()
                c.close()
                stop.wait(0.3)
                continue
            c.sock.settimeout(None)
            while not stop.is_set():
                line = r.readline()
                if not line:
                    break
                ev = json.loads(line)
                obj = ev.get("object") or {}
                rv = (obj.get("metadata") or {}).get("resourceVersion")
                if ev.get("type") not in ("ADDED", "MODIFIED", "DELETED") or rv in seen:
                    continue
                seen.add(rv)
                on_event(ev["type"], rv, obj)
            c.close()
        except (OSError, http.client.HTTPException, ValueError):
            stop.wait(0.3)


class ControlPlane:
    """etcd + kube-apiserver on 127.0.0.1, driven through controlplane.sh."""

    def __init__(self, directory=None, extra_args="", version=None):
        self.owned = directory is None
        self.dir = Path(directory or tempfile.mkdtemp(prefix="leasehold-cp-"))
        self.extra_args = extra_args
        self.version = version or wanted_version()
        self.env = {}

    @classmethod
    def shared_or_new(cls, extra_args="", version=None):
        """The control plane the CTest fixture started (LEASEHOLD_E2E_CP), else a new one, of
        `version`. A shared control plane of another version is an error, not a substitute."""
        version = version or wanted_version()
        if version == V1_11:
            extra_args = _without_coordination_off(extra_args) if extra_args.strip() \
                else extra_args
        d = os.environ.get("LEASEHOLD_E2E_CP")
        if d and not extra_args and (Path(d) / "env").exists():
            cp = cls(d, version=version)
            cp.owned = False
            cp._read_env()
            got = cp.env.get("K8S_VERSION") or V1_34
            if got != version:
                raise RuntimeError(f"shared control plane {d} runs {got}, the scenario wants "
                                   f"{version} (LEASEHOLD_E2E_VERSION)")
            return cp
        cp = cls(None, extra_args, version=version)
        cp.start()
        return cp

    def _sh(self, *args, check=True, input=None, env_extra=None):
        env = dict(os.environ)
        env.setdefault("CONTROLPLANE_OWNER_PID", str(os.getpid()))
        if env_extra:
            env.update(env_extra)
        r = subprocess.run(["bash", str(CONTROLPLANE_SH), *args], input=input, env=env,
                           capture_output=True, text=True)
        if check and r.returncode != 0:
            raise RuntimeError(f"controlplane.sh {' '.join(args[:2])} failed ({r.returncode}):\n"
                               f"{r.stdout}\n{r.stderr}")
        return r

    def _read_env(self):
        self.env = {}
        for line in (self.dir / "env").read_text().splitlines():
            if "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                self.env[k.strip().removeprefix("export ").strip()] = v.strip().strip("'\"")

    @property
    def host(self):
        return self.env["APISERVER_HOST"]

    @property
    def port(self):
        return self.env["APISERVER_PORT"]

    def start(self):
        t = time.monotonic()
        self._sh("start", str(self.dir), env_extra={"EXTRA_APISERVER_ARGS": self.extra_args,
                                                    "CONTROLPLANE_VERSION": self.version})
        self._read_env()
        log(f"control plane {self.version} up on {self.host}:{self.port} in "
            f"{time.monotonic() - t:.1f}s")

    def stop(self):
        if self.owned:
            self._sh("stop", str(self.dir), check=False)
            shutil.rmtree(self.dir, ignore_errors=True)

    def close(self):
        self.stop()

    def request(self, method, path, body=None, timeout=10):
        """One request to the apiserver as the cluster admin, bypassing kubectl (which would
        hide what the server answers: its status and its body as sent, a plain-text 404
        included). Returns (status, the body parsed as JSON, else as text)."""
        if getattr(self, "_ctx", None) is None:
            self._ctx = admin_context(self.env)
        c = http.client.HTTPSConnection(self.host, int(self.port), timeout=timeout,
                                        context=self._ctx)
        data = None if body is None else json.dumps(body)
        return exchange(c, method, path, data,
                        {"Content-Type": "application/json"} if data else None)

    def kubectl(self, *args, input=None, check=True):
        r = self._sh("kubectl", str(self.dir), *args, input=input, check=check)
        return r.stdout if check else r

    def get_json(self, *args):
        return json.loads(self.kubectl("get", *args, "-o", "json"))

    def apply(self, text, namespace):
        return self.kubectl("apply", "-n", namespace, "-f", "-", input=text)

    def ensure_sa(self, namespace, sa):
        self._sh("ensure-sa", str(self.dir), namespace, sa)

    def sa_dir(self, namespace, sa, outdir):
        self._sh("sa-dir", str(self.dir), namespace, sa, str(outdir))
        return Path(outdir)

    def stop_apiserver(self):
        self._sh("stop-apiserver", str(self.dir))

    def start_apiserver(self, *args):
        self._sh("start-apiserver", str(self.dir), *args)

    def compact_etcd(self):
        """Compacts etcd's history up to its current revision (through its v3 JSON gateway), as
        the apiserver's own compaction does every 5 minutes: a watch that resumes from a version
        before it is answered 410 Gone. Returns that revision."""
        import base64
        import urllib.request

        def post(path, body):
            req = urllib.request.Request(self.env["ETCD_URL"] + path, json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as r:
                return json.load(r)
        # A write of a key of no resource first: the newest version a watcher saw is then
        # history too (etcd keeps the revision it compacts at).
        rev = int(post("/v3/kv/put", {"key": base64.b64encode(b"/leasehold-e2e/compacted").decode(),
                                      "value": ""})["header"]["revision"])
        post("/v3/kv/compaction", {"revision": rev, "physical": True})
        return rev

    def restart(self, component, *args):
        """Stops and starts `component` ("apiserver" or "etcd"); args go to controlplane.sh
        (restart-apiserver takes apiserver flags)."""
        self._sh(f"restart-{component}", str(self.dir), *args)


def rbac_manifests(lock_name="leasehold-lock"):
    """The Role, RoleBinding and ServiceAccount shipped in deploy/rbac, for lock `lock_name`."""
    return "\n---\n".join(p.read_text().replace("leasehold-lock", lock_name)
                          for p in sorted((DEPLOY / "rbac").glob("*.yaml"))
                          if p.name != "kustomization.yaml")


class Namespace:
    """A namespace with the shipped RBAC applied and a service account to run agents as."""

    def __init__(self, cp, name, lock_name="leasehold-lock", sa="leasehold"):
        self.cp, self.name, self.lock_name, self.sa = cp, name, lock_name, sa
        cp.ensure_sa(name, sa)
        cp.apply(rbac_manifests(lock_name), name)
        if lock_kind(cp) == "endpoints":
            # deploy/rbac covers Leases and ConfigMaps only; an Endpoints lock needs the same
            # rules on endpoints (docs/install.md's table of lock types; the chart renders them).
            # Added to the ConfigMap rules, not instead of them: a ConfigMap scenario may be
            # using the same namespace's Roles at the same time.
            cp.apply(rbac_manifests(lock_name).replace(
                'resources: ["configmaps"]', 'resources: ["configmaps", "endpoints"]'), name)
        self.tmp = Path(tempfile.mkdtemp(prefix=f"leasehold-{name}-"))

    def sa_dir(self, tag, sa=None):
        return self.cp.sa_dir(self.name, sa or self.sa, self.tmp / f"sa-{tag}")

    def peer_kubeconfig(self, tag, sa=None, server=None, sa_dir=None):
        """A kubeconfig for a non-leasehold peer (e.g. a client-go program) that authenticates as
        a pod would: the service-account token (as tokenFile, which client-go re-reads) and CA of
        `sa_dir` or a fresh sa_dir(tag). Never the admin credential. `server` (host:port)
        overrides the apiserver address, e.g. to put a proxy in between."""
        d = Path(sa_dir) if sa_dir else self.sa_dir(tag, sa)
        path = self.tmp / f"kubeconfig-{tag}"
        cfg = {
            "apiVersion": "v1", "kind": "Config", "current-context": "pod",
            "clusters": [{"name": "cluster", "cluster": {
                "server": f"https://{server or f'{self.cp.host}:{self.cp.port}'}",
                "certificate-authority": str(d / "ca.crt")}}],
            "users": [{"name": "sa", "user": {"tokenFile": str(d / "token")}}],
            "contexts": [{"name": "pod", "context": {
                "cluster": "cluster", "user": "sa", "namespace": self.name}}],
        }
        path.write_text(json.dumps(cfg, indent=1))
        return path

    def lease(self):
        return self.cp.get_json("lease", self.lock_name, "-n", self.name)

    def configmap(self):
        return self.cp.get_json("configmap", self.lock_name, "-n", self.name)


def lock_kind(cp):
    """The kind of lock object the scenarios on `cp` use: "leases", unless a scenario context set
    cp.lock_kind (e2e/scenarios/v1_11.py: "configmaps" or "endpoints", where there is no Lease)."""
    return getattr(cp, "lock_kind", "leases")


# The annotation client-go's ConfigMap and Endpoints locks keep their record in.
ANNOTATION = "control-plane.alpha.kubernetes.io/leader"

# Namespaces cannot be deleted on this control plane (no namespace controller) and a lock outlives
# its run; a per-run suffix keeps a rerun on the same control plane from meeting old locks.
RUN = "".join("0123456789abcdefghijklmnopqrstuvwxyz"[int(time.time() * 10) // 36 ** i % 36]
              for i in range(5))


def can_i(cp, namespace, verb, resource, sa="leasehold"):
    """Whether ServiceAccount `sa` of `namespace` may `verb` `resource` (RESOURCE[/NAME], as
    `kubectl auth can-i` takes it)."""
    r = cp.kubectl("auth", "can-i", verb, resource, "-n", namespace,
                   "--as", f"system:serviceaccount:{namespace}:{sa}", check=False)
    return r.stdout.strip() == "yes"


def ns_name(base):
    """`base` with this run's suffix (RUN): a namespace name no earlier run used."""
    return f"{base}-{RUN}"
