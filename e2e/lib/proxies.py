"""A TLS-terminating proxy in front of the apiserver (one that passes TLS through and injects
faults is e2e.lib.faultproxy's)."""

import os
import shutil
import subprocess
from pathlib import Path

from e2e.lib.common import REPO, wait_until


class TlsProxy:
    """e2e/static/tlsproxy.go: Go's crypto/tls (the apiserver's own stack) with the apiserver's
    certificate, limited to TLS versions [minimum, maximum] ("1.2", "1.3"). `versions()` lists
    the version of each handshake it completed."""

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
