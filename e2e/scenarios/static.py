#!/usr/bin/env python3
"""e2e checks of the fully static binary (scripts/static.sh, the image's recipe) from a root
filesystem that holds nothing but the binary and what a kubelet mounts into every container
(/etc/hosts, /etc/resolv.conf, the service-account token): no loader, no libraries, no
nsswitch.conf, no CA bundle. On a real etcd + kube-apiserver.

Needs root (chroot) and UDP 127.0.0.1:53 free (the fake DNS server: resolv.conf cannot name a
port). LEASEHOLD_STATIC_BIN names a static binary to test; else scripts/static.sh builds one into
build-static/ (cached libraries: about 1 min for them, 3 min for leasehold on 2 cores).
"""

import json
import os
import shutil
import socket
import socketserver
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from e2e.lib.agent import Agent
from e2e.lib.common import REPO, free_port, log, terminate, wait_until
from e2e.lib.controlplane import Namespace
from e2e.lib.operator import lease_holder as holder
from e2e.lib.proxies import TlsProxy
from e2e.lib.runner import Registry
from e2e.lib.timings import FAST

SCENARIOS = Registry()
scenario = SCENARIOS.add
CHROOT = shutil.which("chroot") or "/usr/sbin/chroot"
SA_PATH = "var/run/secrets/kubernetes.io/serviceaccount"


def static_binary():
    b = os.environ.get("LEASEHOLD_STATIC_BIN")
    if b:
        return Path(b)
    out = REPO / "build-static"
    t = time.monotonic()
    r = subprocess.run(["bash", str(REPO / "scripts" / "static.sh"), str(out)],
                       capture_output=True, text=True)
    print(r.stderr[-4000:])
    assert r.returncode == 0, f"scripts/static.sh failed ({r.returncode})"
    log(f"static binary built in {time.monotonic() - t:.0f}s")
    return out / "leasehold"


def assert_fully_static(binary):
    prog = subprocess.run(["readelf", "-lW", str(binary)], capture_output=True, text=True).stdout
    dyn = subprocess.run(["readelf", "-dW", str(binary)], capture_output=True, text=True).stdout
    assert "INTERP" not in prog, f"{binary} names a program interpreter"
    assert "NEEDED" not in dyn and "RUNPATH" not in dyn, f"{binary} needs libraries:\n{dyn}"


class FakeDns(socketserver.UDPServer):
    """UDP DNS on 127.0.0.1:53: an A record for each name in `names` (NODATA for other types of
    those names), NXDOMAIN for every other name. `asked` lists each (name, qtype) received."""

    def __init__(self, names):
        self.names = names
        self.asked = []
        try:
            super().__init__(("127.0.0.1", 53), _DnsQuestion)
        except OSError as e:
            raise AssertionError(f"cannot bind the fake DNS server to 127.0.0.1:53: {e}")
        threading.Thread(target=self.serve_forever, args=(0.2,), daemon=True).start()

    def answer(self, q):
        if len(q) < 12:
            return None
        qid, _flags, qdcount = struct.unpack(">HHH", q[:6])
        if qdcount != 1:
            return None
        i, labels = 12, []
        while i < len(q) and q[i] != 0:
            n = q[i]
            labels.append(q[i + 1:i + 1 + n].decode("ascii", "replace"))
            i += 1 + n
        qtype = struct.unpack(">H", q[i + 1:i + 3])[0]
        question = q[12:i + 5]
        name = ".".join(labels).lower()
        self.asked.append((name, qtype))
        ip = self.names.get(name)
        rcode = 0 if ip else 3
        answers = b""
        if ip and qtype == 1:
            answers = (b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 5, 4) + socket.inet_aton(ip))
        header = struct.pack(">HHHHHH", qid, 0x8180 | rcode, 1, 1 if answers else 0, 0, 0)
        return header + question + answers

    def close(self):
        self.shutdown()
        self.server_close()


class _DnsQuestion(socketserver.BaseRequestHandler):
    def handle(self):
        data, sock = self.request
        reply = self.server.answer(data)
        if reply:
            sock.sendto(reply, self.client_address)


class Root:
    """A root filesystem with /leasehold alone, then what a kubelet mounts: /etc/hosts,
    /etc/resolv.conf, the service-account directory; plus /cfg for a kubeconfig (a Secret)."""

    def __init__(self, tmp, binary, tag):
        self.dir = Path(tempfile.mkdtemp(dir=tmp, prefix=f"root-{tag}-"))
        os.chmod(self.dir, 0o755)
        shutil.copy2(binary, self.dir / "leasehold")
        os.chmod(self.dir / "leasehold", 0o755)
        listing = sorted(p.name for p in self.dir.iterdir())
        assert listing == ["leasehold"], listing

    def kubelet_files(self, ns, hosts="", resolv=None):
        etc = self.dir / "etc"
        etc.mkdir(exist_ok=True)
        (etc / "hosts").write_text("127.0.0.1 localhost\n" + hosts)
        (etc / "resolv.conf").write_text(resolv or "nameserver 127.0.0.1\noptions timeout:1\n")
        sa = self.dir / SA_PATH
        sa.parent.mkdir(parents=True, exist_ok=True)
        if sa.exists():
            shutil.rmtree(sa)
        ns.cp.sa_dir(ns.name, ns.sa, sa)
        self.open_up()
        return sa

    def kubeconfig(self, cp, server, drop_ca=False):
        """The control plane's admin kubeconfig (embedded CA, client certificate and key: the TLS
        stack parses all three from memory) pointed at `server`, without its CA if `drop_ca`."""
        cfg = (cp.dir / "admin.kubeconfig").read_text().splitlines()
        out = []
        for line in cfg:
            if line.strip().startswith("server:"):
                line = line[:line.index("server:")] + f"server: {server}"
            if drop_ca and line.strip().startswith("certificate-authority-data:"):
                continue
            out.append(line)
        d = self.dir / "cfg"
        d.mkdir(exist_ok=True)
        (d / "kubeconfig").write_text("\n".join(out) + "\n")
        self.open_up()
        return "/cfg/kubeconfig"

    def open_up(self):
        for p in self.dir.rglob("*"):
            os.chmod(p, 0o755 if p.is_dir() else (0o755 if p.name == "leasehold" else 0o644))

    def command(self, args):
        """/leasehold ARGS chrooted in this root as uid 65532."""
        return [CHROOT, "--userspec=65532:65532", str(self.dir), "/leasehold", *args]


class ChrootAgent(Agent):
    """An agent run from `root` with a pod's environment alone (POD_*, the lock's name, `env`):
    no admin credential to find, nothing else there. Started."""

    def __init__(self, root, ns, pod, args, env, logf):
        self.ns, self.name, self.identity = ns, pod, pod
        self.port = free_port()
        self.log_path = Path(logf)
        self.args = root.command([f"--http-address=127.0.0.1:{self.port}", *FAST.flags(),
                                  "--release-on-shutdown=immediate", *args])
        self.env = {"POD_NAME": pod, "POD_NAMESPACE": ns.name,
                    "LEASEHOLD_LOCK_NAME": ns.lock_name, **env}
        self.start()

    def stop(self):
        """SIGTERM (its release), SIGKILL after 10 s; its exit status."""
        rc = terminate(self.proc, 10)
        self.logf.close()
        return rc


def wrong_ca(tmp):
    """A self-signed CA that signed nothing the apiserver serves."""
    d = Path(tempfile.mkdtemp(dir=tmp, prefix="wrong-ca-"))
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=not-the-cluster-ca", "-keyout", str(d / "ca.key"),
                    "-out", str(d / "ca.crt")], check=True, capture_output=True)
    return d / "ca.crt"


SEARCH = ("nameserver 127.0.0.1\nsearch st.svc.cluster.local svc.cluster.local cluster.local\n"
          "options ndots:5 timeout:1 attempts:2\n")
# name, credentials, /etc/hosts, resolv.conf (None: Root's), TLS versions, want: lead | refuse
CASES = [
    ("in-cluster: ca.crt and token", "in-cluster", "", None, None, "lead"),
    ("kubeconfig: a name from /etc/hosts, DNS says no such name", "kubeconfig-hosts",
     "127.0.0.1 kubernetes.default.svc\n", None, None, "lead"),
    ("kubeconfig: a name from DNS through the search path", "kubeconfig-dns", "",
     SEARCH, None, "lead"),
    ("in-cluster through TLS 1.3 only (Go's crypto/tls)", "in-cluster", "", None,
     ("1.3", "1.3"), "lead"),
    ("in-cluster through TLS 1.2 only (Go's crypto/tls)", "in-cluster", "", None,
     ("1.2", "1.2"), "lead"),
    ("a CA that did not sign the apiserver's certificate", "in-cluster-wrong-ca", "",
     None, None, "refuse"),
    ("a name the apiserver's certificate does not hold", "kubeconfig-wrong-name",
     "127.0.0.1 not-the-apiserver.test\n", None, None, "refuse"),
]
# The server name a kubeconfig of each kubeconfig-* credentials names.
SERVERS = {"kubeconfig-hosts": "kubernetes.default.svc",
           "kubeconfig-dns": "kubernetes.default.svc",
           "kubeconfig-wrong-name": "not-the-apiserver.test"}


def credentials(s, cp, binary, tmp, dns, i, name, creds, hosts, resolv, tls, want):
    """Case `i` of CASES, in a root of its own; returns what the report lists of it."""
    log(f"--- {name}")
    ns = Namespace(cp, f"static-{i}")
    root = Root(tmp, binary, f"case{i}")
    sa = root.kubelet_files(ns, hosts, resolv)
    env, args, port, proxy = {}, [], cp.port, None
    if tls:
        proxy = TlsProxy(cp, tmp, minimum=tls[0], maximum=tls[1])
        s.at_exit(proxy.close)
        port = proxy.port
    if creds.startswith("in-cluster"):
        env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(port)}
        if creds == "in-cluster-wrong-ca":
            shutil.copy(wrong_ca(tmp), sa / "ca.crt")
            root.open_up()
    else:
        args = [f"--kubeconfig={root.kubeconfig(cp, f'https://{SERVERS[creds]}:{port}')}"]
    asked_before = len(dns.asked)
    a = s.member(ChrootAgent, root, ns, f"static-{i}", args, env, tmp / f"agent-{i}.log")
    if want == "lead":
        body = a.wait_leader()
        assert holder(ns) == body["identity"], (holder(ns), body)
        assert "validUntil" in body and body["lock"]["type"] == "leases", body
    else:
        wait_until(lambda: a.log_text().count("leader election attempt") >= 2, 20,
                   what=f"2 failed attempts of {a.name}")
        st, b = a.leader()
        assert st in (200, 503) and isinstance(b, dict) and not b.get("isLeader"), (st, b)
        assert holder(ns) == "", holder(ns)
        assert "certificate" in a.log_text().lower() or "x509" in a.log_text().lower(), \
            a.log_tail(2000)
    asked = dns.asked[asked_before:]
    if creds == "kubeconfig-hosts":
        assert not [q for q in asked if q[0].startswith("kubernetes.default.svc")], \
            f"/etc/hosts had the name, yet DNS was asked: {asked}"
    if creds == "kubeconfig-dns":
        assert ("kubernetes.default.svc.cluster.local", 1) in asked, asked
    if proxy:
        assert proxy.versions() and set(proxy.versions()) == {"TLS " + tls[0]}, \
            proxy.versions()
    rc = a.stop()
    assert rc == 0, f"exit {rc} on SIGTERM:\n{a.log_tail(2000)}"
    if want == "lead":
        assert holder(ns) == "", f"not released on SIGTERM: {holder(ns)}"
    tls_seen = sorted(set(proxy.versions())) if proxy else []
    log(f"    {want}: ok (proxy saw {tls_seen or '-'}, DNS queries {len(asked)})")
    return name, want, tls_seen, len(asked)


@scenario
def rootfs(s):
    """The static binary from an empty root: in-cluster and kubeconfig credentials, names from
    /etc/hosts and from DNS through the pod's search path, TLS 1.3 only and TLS 1.2 only, a
    wrong CA and a name the certificate does not hold refused; `install` then `gate` from a
    second empty root."""
    cp = s.control_plane()
    binary = static_binary()
    assert_fully_static(binary)
    tmp = Path(tempfile.mkdtemp(prefix="leasehold-static-"))
    s.at_exit(shutil.rmtree, tmp, True)
    os.chmod(tmp, 0o755)
    dns = FakeDns({"kubernetes.default.svc.cluster.local": "127.0.0.1"})
    s.at_exit(dns.close)
    results = [credentials(s, cp, binary, tmp, dns, i, *case) for i, case in enumerate(CASES)]

    # A kubeconfig that names no CA counts on the system's bundle, which a root holding only
    # the binary does not have: one line at start, exit code of a bad configuration.
    log("--- kubeconfig without a CA, no bundle in the root: refused at start")
    ns = Namespace(cp, "static-noca")
    root = Root(tmp, binary, "noca")
    root.kubelet_files(ns)
    cfg = root.kubeconfig(cp, f"https://127.0.0.1:{cp.port}", drop_ca=True)
    a = s.member(ChrootAgent, root, ns, "static-noca", [f"--kubeconfig={cfg}"], {},
                 tmp / "agent-noca.log")
    rc = a.proc.wait(10)
    assert rc not in (0, None), rc
    assert "names no certificate-authority" in a.log_text(), a.log_tail(2000)
    log(f"    refused at start, exit {rc}")

    # install, then gate from a second root that holds only the copy, as the K8up example
    # runs it: an init container's `leasehold install /leasehold-bin`, then the main
    # container's `/leasehold-bin/leasehold gate -- CMD`.
    log("--- install, then gate from a second empty root")
    ns = Namespace(cp, "static-gate")
    root = Root(tmp, binary, "sidecar")
    root.kubelet_files(ns)
    shared = root.dir / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    assert subprocess.run(root.command(["install", "/shared"]), env={}, timeout=10).returncode == 0
    assert sorted(p.name for p in shared.iterdir()) == ["leasehold"], list(shared.iterdir())
    assert (shared / "leasehold").read_bytes() == Path(binary).read_bytes()
    main_root = Path(tempfile.mkdtemp(dir=tmp, prefix="root-main-"))
    os.chmod(main_root, 0o755)
    os.rename(shared, main_root / "leasehold-bin")
    a = s.member(ChrootAgent, root, ns, "static-gate", [],
                 {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(cp.port)},
                 tmp / "agent-gate.log")
    a.wait_leader()
    g = subprocess.run([CHROOT, "--userspec=65532:65532", str(main_root),
                        "/leasehold-bin/leasehold", "gate", f"--address=127.0.0.1:{a.port}",
                        "--stop-grace=500ms", "--status-file=off", "--",
                        "/leasehold-bin/leasehold", "--version"],
                       env={}, capture_output=True, text=True, timeout=30)
    out = g.stdout + g.stderr
    assert g.returncode == 0, f"gate exited {g.returncode}:\n{out}"
    assert "started CMD" in out and "leasehold " in g.stdout, out
    wait_until(lambda: holder(ns) == "", 5, what="the gate's POST /release")
    assert a.stop() == 0
    log("    gate: started CMD as leader, CMD exited 0, /release, exit 0")
    log("static rootfs: " + json.dumps(results))


if __name__ == "__main__":
    sys.exit(SCENARIOS.main())
