"""A leasehold agent run the way a pod runs it, and who among agents leads."""

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

from e2e.lib.common import free_port, http_request, leasehold_binary, log, text_of, wait_until
from e2e.lib.timings import FAST


def pod_env(tmp, strip=("KUBE", "LEASEHOLD_", "POD_"), **extra):
    """The environment of a member: ours without admin credentials or leasehold settings, HOME
    in `tmp`: no KUBECONFIG, no ~/.kube to find."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(strip)}
    env["HOME"] = str(tmp)
    env.update(extra)
    return env


class LeaderView(NamedTuple):
    """One answer of GET /leader: `status` (None: no answer in time) and the body (a dict, {}
    when there is none). `holder` is who the member thinks leads, `is_leader` whether it says
    it does itself."""

    status: object
    body: dict

    @classmethod
    def of(cls, status, body):
        return cls(status, body if isinstance(body, dict) else {})

    @property
    def holder(self):
        return self.body.get("name")

    @property
    def is_leader(self):
        return self.status == 200 and self.body.get("isLeader") is True

    @property
    def term(self):
        return self.body.get("term")


class Agent:
    """One leasehold process, run the way a pod runs it: in-cluster mode, its own service-account
    directory, and no admin credential anywhere in its environment. Agent(ns, name, ...) runs it
    with the e2e flags (lock, identity, timings, release, debug log) in Namespace `ns`;
    Agent.with_flags(...) with flags of the caller's, e.g. the leasehold container of a rendered
    Deployment (e2e/scenarios/ship.py)."""

    url_host = "127.0.0.1"
    probe_port = None  # the --probe-address port, where the caller set one
    request_timeout = 0.5  # s, the default of request()

    family = "leasehold"  # what e2e.lib.members calls the kind of elector a member runs
    kind = "leasehold"

    def __init__(self, ns, name, lock_type="leases", timings=FAST, release="safe",
                 extra=(), sa_dir=None, env=None, port=None, api=None, lock_name=None,
                 log_level="debug", binary=None, logdir=None, probe=False):
        """`api`: (host, port) of the apiserver or of a proxy in front of it; `logdir`: where its
        log goes (default ns.tmp); `probe`: also serve the probe listener (probe_port) on a free
        port, or on port `probe` (a restarted container keeps its pod's)."""
        port = port or free_port()
        sa_dir = sa_dir or ns.sa_dir(name)
        self.lock_type, self.release = lock_type, release
        flags = [
            f"--lock-name={lock_name or ns.lock_name}", f"--namespace={ns.name}",
            f"--identity={name}", f"--lock-type={lock_type}", *timings.flags(),
            f"--release-on-shutdown={release}", f"--http-address=127.0.0.1:{port}",
            f"--serviceaccount-dir={sa_dir}", f"--log-level={log_level}", *extra,
        ]
        if probe:
            self.probe_port = free_port() if probe is True else probe
            flags.append(f"--probe-address=127.0.0.1:{self.probe_port}")
        self._setup(ns, name, flags, port, sa_dir, ns.tmp, api or (ns.cp.host, ns.cp.port), env)
        if binary:
            self.args[0] = binary
        if logdir:
            self.log_path = Path(logdir) / f"{name}.log"

    def describe(self):
        return (f"{self.name} ({self.kind}, {getattr(self, 'lock_type', '?')}, "
                f"release-on-shutdown={getattr(self, 'release', '?')})")

    @classmethod
    def with_flags(cls, name, flags, port, sa_dir, tmp, api, env=None, probe_port=None,
                   request_timeout=None, ns=None):
        """An agent run with `flags` (after the binary; they must set --http-address to
        127.0.0.1:`port`), HOME and its log in `tmp`, the API at `api` (host, port): what
        KUBERNETES_SERVICE_HOST/PORT say. `env` is added to the environment."""
        a = cls.__new__(cls)
        a._setup(ns, name, flags, port, sa_dir, tmp, api, env)
        if probe_port is not None:
            a.probe_port = probe_port
        if request_timeout is not None:
            a.request_timeout = request_timeout
        return a

    def _setup(self, ns, name, flags, port, sa_dir, tmp, api, env):
        self.ns, self.name = ns, name
        self.identity = name
        self.port = port
        self.sa_dir = sa_dir
        self.log_path = Path(tmp) / f"{name}.log"
        self.args = [leasehold_binary(), *flags]
        self.env = {**pod_env(tmp), "KUBERNETES_SERVICE_HOST": str(api[0]),
                    "KUBERNETES_SERVICE_PORT": str(api[1]), **(env or {})}
        self.proc = None

    def start(self):
        self.logf = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.args, env=self.env, stdout=self.logf,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def request(self, method, path, timeout=None, body=None, port=None):
        """(status, parsed body) or (None, error) if the agent did not answer. `port`: another
        listener of the agent's (e.g. probe_port) than its local API."""
        return http_request(self.url_host, port or self.port, method, path,
                            self.request_timeout if timeout is None else timeout, body)

    def leader(self, timeout=0.5):
        return self.request("GET", "/leader", timeout)

    def view(self, timeout=1.0):
        """What this member's /leader says now."""
        return LeaderView.of(*self.leader(timeout))

    def is_leader(self):
        return self.view(0.5).is_leader

    def leader_body(self):
        """The /leader body if it says this agent leads, else None."""
        v = self.view(self.request_timeout)
        return v.body if v.is_leader else None

    def wait_leader(self, timeout=20):
        """Waits until this agent leads; returns its /leader body. Fails at once if it exits."""
        def lead():
            if self.proc.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.proc.returncode}:\n"
                                     f"{self.log_tail()}")
            return self.leader_body()
        return wait_until(lead, timeout, what=f"{self.name} to lead")

    def check_probes(self):
        """The probe listener (if any) serves /healthz and /readyz, and not POST /release."""
        if self.probe_port is None:
            return
        for path in ("/healthz", "/readyz"):
            st, _ = self.request("GET", path, port=self.probe_port)
            assert st == 200, f"probe listener {path}: {st}"
        st, _ = self.request("POST", "/release", port=self.probe_port)
        assert st != 200 and st != 202, f"the probe listener must not serve POST /release ({st})"
        log(f"probe listener :{self.probe_port} serves /healthz and /readyz, not /release")

    def signal(self, sig):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def kill(self):
        self.signal(signal.SIGKILL)
        self.wait(10)

    def term(self):
        self.signal(signal.SIGTERM)

    def pause(self):
        """SIGSTOP: a GC pause, CPU starvation, a frozen VM."""
        self.signal(signal.SIGSTOP)

    def resume(self):
        self.signal(signal.SIGCONT)

    def term_and_wait(self, timeout=15):
        """SIGTERM; asserts that the agent exits with 0 within `timeout` s."""
        self.term()
        rc = self.proc.wait(timeout)
        assert rc == 0, f"exit {rc} after SIGTERM:\n{self.log_tail()}"

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log_text(self):
        return text_of(self.log_path)

    def log_tail(self, chars=4000):
        return self.log_text()[-chars:]

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.resume()
            self.kill()
        if getattr(self, "logf", None):
            self.logf.close()


def current_leaders(agents):
    return [a for a in agents if a.alive() and a.is_leader()]


def never_leads(agent, seconds, interval=0.1, what=""):
    """Asks `agent` every `interval` s for `seconds` s; fails on any yes, saying `what`."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert not agent.is_leader(), f"{agent.name} leads{what}"
        time.sleep(interval)


def wait_ready(agents, timeout=20):
    """Waits until every agent's /readyz says 200 (each has read the lock)."""
    wait_until(lambda: all(a.request("GET", "/readyz")[0] == 200 for a in agents), timeout,
               what="every agent to be ready")


def wait_single_leader(agents, timeout, what="exactly one leader", holder=None, interval=0.05):
    """The one member of `agents` that says it leads; with `holder` (a function returning the
    lock's current holder) also the one the lock names: a stale "yes" of a resumed leader
    without fencing is not a leader to count from. Polls every `interval` s."""
    def one():
        ls = current_leaders(agents)
        if len(ls) != 1 or (holder is not None and holder() != ls[0].identity):
            return None
        return ls[0]
    return wait_until(one, timeout, interval=interval, what=what)
