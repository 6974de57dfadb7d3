"""Processes of a test fleet, shared by the chaos suite and the benchmarks: a leasehold agent run
as a pod runs it (in-cluster mode, its own service-account directory) with a fixed /leader port
and its API traffic through a given address, the client-go interop peer (e2e/interop) the same
way, and an admin HTTPS client straight to the apiserver."""

import http.client
import json
import os
import ssl
import subprocess
from pathlib import Path

from e2e.lib.agent import Agent
from e2e.lib.common import REPO, log
from e2e.lib.timings import FAST


def interop_binary(which="current"):
    """The client-go interop peer `peer-<which>` (e2e/interop: client-go's real
    tools/leaderelection; `current` is the newest client-go, Lease lock), or None when
    e2e/interop is absent or does not build. $LEASEHOLD_INTEROP_BIN: the peers' bin dir (as
    e2e/interop/build.sh prints it) or one peer binary."""
    env = os.environ.get("LEASEHOLD_INTEROP_BIN")
    if env:
        d = Path(env)
    else:
        build = REPO / "e2e" / "interop" / "build.sh"
        if not build.exists():
            return None
        r = subprocess.run(["bash", str(build)], capture_output=True, text=True)
        out = r.stdout.strip().splitlines()
        if r.returncode != 0 or not out:
            log(f"e2e/interop/build.sh failed ({r.returncode}): {r.stderr[-2000:]}")
            return None
        d = Path(out[-1].strip())
    p = d / f"peer-{which}" if d.is_dir() else d
    return str(p) if os.access(p, os.X_OK) and p.is_file() else None


class LeaseholdProc(Agent):
    """An e2e.lib.agent Agent with a fixed /leader port, a given identity, the API reached at
    127.0.0.1:api_port (the slot's proxy, or the apiserver itself), and its log in logdir."""

    def __init__(self, ns, identity, port, sa_dir, api_port, release, logdir, timings=FAST,
                 lock_name=None, extra=(), log_level="debug", binary=None):
        super().__init__(ns, identity, release=release, sa_dir=sa_dir, timings=timings,
                         extra=extra, env={"KUBERNETES_SERVICE_HOST": "127.0.0.1",
                                           "KUBERNETES_SERVICE_PORT": str(api_port)})
        args = []
        for a in self.args:
            if a.startswith("--http-address="):
                a = f"--http-address=127.0.0.1:{port}"
            elif a.startswith("--lock-name=") and lock_name:
                a = f"--lock-name={lock_name}"
            elif a.startswith("--log-level="):
                a = f"--log-level={log_level}"
            args.append(a)
        if binary:
            args[0] = binary
        self.args = args
        self.port = port
        self.log_path = Path(logdir) / f"{identity}.log"


class ClientGoProc(Agent):
    """The client-go interop peer (e2e/interop), same command-line shape, with a kubeconfig that
    points at 127.0.0.1:api_port with the service account's token."""

    def __init__(self, ns, identity, port, sa_dir, api_port, release_on_cancel, logdir, binary,
                 timings=FAST, lock_name=None, verbosity=None):
        self.ns, self.name, self.identity = ns, identity, identity
        self.port, self.url_host = port, "127.0.0.1"
        self.sa_dir = sa_dir
        self.log_path = Path(logdir) / f"{identity}.log"
        kc = Path(logdir) / f"{identity}.kubeconfig"
        kc.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {
                "server": f"https://127.0.0.1:{api_port}",
                "certificate-authority": str(Path(sa_dir) / "ca.crt")}}],
            "users": [{"name": "u", "user": {"tokenFile": str(Path(sa_dir) / "token")}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u",
                                                   "namespace": ns.name}}]}))
        self.args = [binary, f"--identity={identity}", "--lock-type=leases",
                     f"--namespace={ns.name}", f"--lock-name={lock_name or ns.lock_name}",
                     *timings.flags(),
                     f"--release-on-cancel={'true' if release_on_cancel else 'false'}",
                     f"--http-address=127.0.0.1:{port}", f"--kubeconfig={kc}"]
        if verbosity is not None:
            self.args.append(f"--v={verbosity}")
        base = {k: v for k, v in os.environ.items() if not k.startswith(("KUBE", "LEASEHOLD_"))}
        base["HOME"] = str(ns.tmp)
        self.env = base
        self.proc = None


class Admin:
    """Admin HTTPS client straight to the apiserver (not through any proxy)."""

    def __init__(self, cp):
        self.cp = cp
        self.ctx = ssl.create_default_context(cafile=cp.env["CA_CRT"])
        self.ctx.load_cert_chain(cp.env["ADMIN_CRT"], cp.env["ADMIN_KEY"])

    def request(self, method, path, body=None, timeout=3.0):
        c = http.client.HTTPSConnection(self.cp.host, int(self.cp.port), context=self.ctx,
                                        timeout=timeout)
        try:
            hdr = {"Content-Type": "application/json"} if body is not None else {}
            c.request(method, path, body=None if body is None else json.dumps(body), headers=hdr)
            r = c.getresponse()
            data = r.read()
            try:
                return r.status, json.loads(data)
            except ValueError:
                return r.status, data
        finally:
            c.close()


