"""The members of a test fleet and the Fleet they run in.

A member is one elector process that answers "who leads?" on a localhost HTTP API (GET /leader):
the leasehold agent (e2e.lib.agent.Agent), the client-go interop peer (GoPeer: client-go's real
tools/leaderelection, e2e/interop) or the Python peer (PyPeer: PyPI `kubernetes`' leaderelection,
e2e/interop/python_peer.py). Each is run as a pod runs it, with its own service account and no
admin credential, and each is driven the same way (the Member protocol), so a sampler, a fleet
and a scenario need not know which one they hold.
"""

import collections
import functools
import itertools
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Protocol

from e2e.lib.agent import Agent, LeaderView
from e2e.lib.agent import pod_env as _pod_env  # e2e/lib/operator.py's name too
from e2e.lib.common import REPO, free_port, log
from e2e.lib.controlplane import Namespace
from e2e.lib.timings import MIXED


class Member(Protocol):
    """What a scenario, a Fleet and a sampler need of any member. `family`: "leasehold",
    "client-go" or "python"; `name` == `identity`; `port`: its /leader port."""

    name: str
    identity: str
    family: str
    port: int

    def start(self): ...            # returns self
    def stop(self): ...             # SIGCONT + SIGKILL if it runs; closes its log
    def kill(self): ...             # SIGKILL, waits for the exit
    def term(self): ...             # SIGTERM, does not wait
    def pause(self): ...            # SIGSTOP
    def resume(self): ...           # SIGCONT
    def alive(self): ...
    def wait(self, timeout): ...    # exit code, None if still running after `timeout` s
    def view(self, timeout=1.0) -> LeaderView: ...  # what its GET /leader says
    def is_leader(self): ...
    def describe(self): ...


def handovers(names, by_name):
    """The changes of leader in a sequence of member names (or identities), as (from, to)
    members in order: names not in `by_name` (a release's empty holder among them) left out,
    repeats merged."""
    seq = [n for n, _ in itertools.groupby(n for n in names if n in by_name)]
    return [(by_name[a], by_name[b]) for a, b in zip(seq, seq[1:])]


def family_changes(pairs):
    """{"from→to" by family: count} of handovers' pairs."""
    return dict(collections.Counter(f"{a.family}→{b.family}" for a, b in pairs))


def body_of(m):
    """(status, /leader body or {}) of member `m`: its LeaderView."""
    return m.view()


def start_fleet(s, ns, n=3, **kw):
    """`n` leasehold agents of scenario `s` in Namespace `ns`, named <ns>-a<i>, started; `kw`
    goes to Agent."""
    return [s.agent(ns, f"{ns.name}-a{i}", **kw).start() for i in range(n)]


def fleet_in(s, name, n=3, cp=None, **kw):
    """(cp, ns, agents): Namespace `name` on `cp` (default: the scenario's control plane) and
    start_fleet's `n` agents in it."""
    cp = cp or s.control_plane()
    ns = Namespace(cp, name)
    return cp, ns, start_fleet(s, ns, n, **kw)


_BUILT = {}


def _built(env_var, script, what, env=None):
    """The path that `script` (a build or setup script under e2e/) prints on its last line,
    or $`env_var` if set; run once per process (the scripts cache their output outside the
    clone). Raises RuntimeError when the script fails."""
    if script not in _BUILT:
        p = os.environ.get(env_var)
        if not p:
            t = time.monotonic()
            r = subprocess.run(["bash", str(REPO / "e2e" / script)],
                               capture_output=True, text=True, env=env)
            out = r.stdout.strip().splitlines()
            if r.returncode != 0 or not out:
                raise RuntimeError(f"e2e/{script} failed ({r.returncode}):\n"
                                   f"{r.stdout}\n{r.stderr[-2000:]}")
            p = out[-1].strip()
            log(f"{what} ready in {time.monotonic() - t:.1f}s: {p}")
        _BUILT[script] = Path(p)
    return _BUILT[script]


def peer_binary(which="current", required=True):
    """The client-go interop peer `peer-<which>` (`current`: the newest client-go; `v0.23`: the
    last with the ConfigMap locks). $LEASEHOLD_INTEROP_BIN: the peers' bin dir (as
    e2e/interop/build.sh prints it) or one peer binary. Without `required`, None when it is not
    available instead of RuntimeError."""
    try:
        d = _built("LEASEHOLD_INTEROP_BIN", "interop/build.sh", "interop peers")
        b = d / f"peer-{which}" if d.is_dir() else d
        if not (b.is_file() and os.access(b, os.X_OK)):
            raise RuntimeError(f"interop peer {b} missing")
    except RuntimeError as e:
        if required:
            raise
        log(f"client-go interop peer unavailable: {e}")
        return None
    return str(b)


@functools.cache
def peer_version(binary):
    return subprocess.run([binary, "--version"], capture_output=True, text=True,
                          check=True).stdout.strip()


def peer_python():
    """The interpreter of the Python peer's venv ($LEASEHOLD_PYTHON_PEER_PY, or what
    e2e/interop/python_venv.sh prints)."""
    # The interpreter running the scenarios is the venv's base, as CTest's fixture passes its
    # own (PYTHON3): both name the same venv.
    env = dict(os.environ)
    env.setdefault("PYTHON3", sys.executable)
    return str(_built("LEASEHOLD_PYTHON_PEER_PY", "interop/python_venv.sh", "python peer venv", env))


class _Peer(Agent):
    """A non-leasehold elector with a kubeconfig of its own service-account token
    (Namespace.peer_kubeconfig). Same HTTP API as an Agent, so every Agent helper works."""

    def _flags(self, ns, name, lock_type, timings, port, lock_name=None, logdir=None, **kc):
        """Sets what every member has; returns the flags both peers take alike. `kc` goes to
        peer_kubeconfig (server, sa_dir)."""
        self.ns, self.name, self.identity, self.lock_type = ns, name, name, lock_type
        self.port = port or free_port()
        self.kubeconfig = ns.peer_kubeconfig(name, **kc)
        self.log_path = Path(logdir or ns.tmp) / f"{name}.log"
        self.proc = None
        return [f"--identity={name}", f"--lock-type={lock_type}", f"--namespace={ns.name}",
                f"--lock-name={lock_name or ns.lock_name}", *timings.flags(),
                f"--http-address=127.0.0.1:{self.port}", f"--kubeconfig={self.kubeconfig}"]


class GoPeer(_Peer):
    """One client-go interop peer; arguments as Agent's. `server`: host:port of the apiserver or
    of a proxy in front of it; `sa_dir`: an existing service-account directory."""

    family = "client-go"

    def __init__(self, ns, name, which="current", lock_type="leases", timings=MIXED,
                 release_on_cancel=False, extra=(), server=None, port=None, sa_dir=None,
                 binary=None, logdir=None, lock_name=None):
        self.which = which
        binary = binary or peer_binary(which)
        self.version = peer_version(binary)
        self.kind = f"client-go {self.version}"
        self.release_on_cancel = release_on_cancel
        flags = self._flags(ns, name, lock_type, timings, port, lock_name, logdir,
                            server=server, sa_dir=sa_dir)
        self.args = [binary, *flags,
                     f"--release-on-cancel={'true' if release_on_cancel else 'false'}", *extra]
        self.env = _pod_env(ns.tmp)

    def describe(self):
        return (f"{self.name} ({self.kind}, {self.lock_type}, "
                f"release-on-cancel={self.release_on_cancel})")


class PyPeer(_Peer):
    """One Python elector (e2e/interop/python_peer.py). `tz`: its TZ (ConfigMapLock writes local
    times without a zone)."""

    family = "python"
    kind = "python kubernetes"

    def __init__(self, ns, name, lock_type, tz="UTC0", port=None, timings=MIXED):
        self.tz = tz
        self.args = [peer_python(), str(REPO / "e2e" / "interop" / "python_peer.py"),
                     *self._flags(ns, name, lock_type, timings, port)]
        self.env = _pod_env(ns.tmp, ("KUBE", "LEASEHOLD_", "POD_", "PYTHON"), TZ=tz,
                            PYTHONUNBUFFERED="1")

    def describe(self):
        lock = "ConfigMapLock" if self.lock_type == "configmaps" else "LeaseLock"
        return f"{self.name} (python kubernetes {lock}, TZ={self.tz})"


class Slot:
    """A place in a Fleet: a factory of members, how many it made, the current one, and a
    /leader port of its own that every incarnation serves on (a sampler whose targets are fixed
    when it starts then asks each)."""

    def __init__(self, name, factory):
        self.name, self.factory = name, factory
        self.generation = 0
        self.member = None
        self.port = free_port()


class Fleet:
    """Members in named slots. A stopped member is replaced by a new incarnation in its slot
    (identity <slot>-<generation>, a new identity as a new pod would have; the slot's port), so
    the fleet keeps its size. Each member started goes to the scenario `s` (which stops it) and
    to the sampler `smp` (e2e.lib.sampler.Sampler), where given. A factory is called as
    factory(name, port, generation) and returns an unstarted Member."""

    def __init__(self, s=None, smp=None):
        self.s, self.smp = s, smp
        self.slots = {}          # slot name -> Slot, in the order added
        self.members = []        # every incarnation ever started
        self.terminated = set()  # names sent SIGTERM (their own release is expected)
        self.paused = set()      # members paused with pause()

    def add(self, slot, factory, start=True):
        """A new slot; its first member, started, unless `start` is false."""
        self.slots[slot] = Slot(slot, factory)
        return self.start(slot) if start else None

    def start(self, slot):
        sl = self.slots[slot]
        sl.generation += 1
        m = sl.factory(f"{slot}-{sl.generation}", sl.port, sl.generation)
        m.slot = slot
        sl.member = m
        if self.s is not None and m not in self.s.agents:
            self.s.agents.append(m)
        self.members.append(m)
        m.start()
        if self.smp is not None:
            self.smp.add(m)
        log(f"started {m.describe()} on :{m.port}")
        return m

    def replace(self, m):
        """The next incarnation of `m`'s slot; `m` must have exited."""
        assert not m.alive(), f"{m.name} still runs"
        return self.start(m.slot)

    def remove(self, slot):
        del self.slots[slot]

    def member(self, slot):
        return self.slots[slot].member

    def current(self):
        return [sl.member for sl in self.slots.values() if sl.member is not None]

    def alive(self):
        """The current members that run and are not paused."""
        return [m for m in self.current() if m.alive() and m not in self.paused]

    def by_identity(self):
        return {m.identity: m for m in self.members}

    def pause(self, m):
        m.pause()
        self.paused.add(m)

    def resume(self, m):
        m.resume()
        self.paused.discard(m)

    def resume_all(self):
        for m in list(self.paused):
            self.resume(m)

    def sampler_slots(self):
        """{slot: port}, the targets of e2e.lib.sampler_process."""
        return {k: sl.port for k, sl in self.slots.items()}
