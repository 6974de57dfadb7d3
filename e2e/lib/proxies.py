"""Proxies in front of the control plane's apiserver: TcpProxy, a TCP pass-through (TLS end to
end) that can cut its clients off; TlsProxy, Go's crypto/tls terminating TLS with the apiserver's
certificate, limited to a range of TLS versions. (faultproxy: the fault-injecting one per agent.)"""

import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

from e2e.lib.common import REPO, wait_until


class TcpProxy:
    """A TCP pass-through to the apiserver (TLS stays end to end) that can cut one client off:
    block() closes every proxied connection and refuses new ones until unblock()."""

    def __init__(self, host, port):
        self.target = (host, int(port))
        self.ls = socket.socket()
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(64)
        self.addr = f"127.0.0.1:{self.ls.getsockname()[1]}"
        self.blocked = False
        self.conns = set()
        self._lock = threading.Lock()

    def start(self):
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def _accept(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            if self.blocked:
                c.close()
                continue
            try:
                u = socket.create_connection(self.target, timeout=5)
            except OSError:
                c.close()
                continue
            with self._lock:
                self.conns.update((c, u))
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data or self.blocked:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def block(self):
        self.blocked = True
        with self._lock:
            conns, self.conns = list(self.conns), set()
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def unblock(self):
        self.blocked = False

    def close(self):
        self.block()
        self.ls.close()


class TlsProxy:
    """e2e/static/tlsproxy.go: Go's crypto/tls (the apiserver's own stack) in front of the
    apiserver, with its certificate, limited to TLS versions [minimum, maximum] ("1.2", "1.3").
    `versions()` lists the version of each handshake it completed."""

    def __init__(self, cp, tmp, minimum="1.2", maximum="1.3"):
        exe = tmp / "tlsproxy"
        if not exe.exists():
            go = shutil.which("go") or "/usr/local/go/bin/go"
            env = {**os.environ, "GO111MODULE": "off"}
            env.setdefault("HOME", str(tmp))
            env.setdefault("GOCACHE", str(Path(env["HOME"]) / ".cache" / "go-build"))
            subprocess.run([go, "build", "-o", str(exe),
                            str(REPO / "e2e" / "static" / "tlsproxy.go")], check=True,
                           cwd=tmp, env=env)
        pki = cp.dir / "pki"
        self.out = tmp / f"tlsproxy-{minimum}-{maximum}.out"
        self.proc = subprocess.Popen(
            [str(exe), "-cert", str(pki / "apiserver.crt"), "-key", str(pki / "apiserver.key"),
             "-ca", str(pki / "ca.crt"), "-upstream", f"{cp.host}:{cp.port}",
             "-min", minimum, "-max", maximum], stdout=open(self.out, "w"))
        try:
            first = wait_until(lambda: self.out.read_text().split("\n")[0].strip()
                               if "\n" in self.out.read_text() else None, 10, what="tlsproxy")
            assert first.startswith("listening "), first
        except BaseException:
            self.close()
            raise
        self.port = int(first.split()[1])

    def versions(self):
        return [line[len("version "):] for line in self.out.read_text().splitlines()
                if line.startswith("version ")]

    def close(self):
        self.proc.kill()
        self.proc.wait()
