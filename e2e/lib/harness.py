"""End-to-end harness: a real control plane, leasehold agents run as pods would run them, and a
sampler that asks every agent who leads every 50 ms and finds any overlap of two "yes" answers.

Standard library only, so the tests need nothing but python3.
"""

import http.client
import json
import os
import random
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONTROLPLANE_SH = REPO / "e2e" / "controlplane" / "controlplane.sh"
DEPLOY = REPO / "deploy"

# Short timings for e2e, unless a scenario needs others.
LEASE, RENEW, RETRY = 4.0, 3.0, 1.0
TIMINGS = ("4s", "3s", "1s")


def leasehold_binary():
    b = os.environ.get("LEASEHOLD_BIN") or str(REPO / "build" / "leasehold")
    if not os.access(b, os.X_OK):
        raise RuntimeError(f"leasehold binary not found at {b}; build first or set LEASEHOLD_BIN")
    return b


_handed_out = set()  # every port free_port() returned in this process
_handed_out_lock = threading.Lock()


def _ephemeral_low():
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port():
    """A loopback port no one listens on and that this process never handed out before.

    Not bind(0): the kernel picks that from the ephemeral range, where a port just closed comes
    back soon (two agents started one after the other were both given 38203; the second could
    not listen, and the sampler, asking "its" port, heard the first agent twice: a false "two
    leaders") and where every outgoing connection takes its source port. So: below the ephemeral
    range, never twice per process, and free when probed."""
    low = max(1024, _ephemeral_low() - 12000)
    high = max(low + 1000, _ephemeral_low() - 1)
    rng = random.Random()
    with _handed_out_lock:
        for _ in range(1000):
            port = rng.randint(low, high)
            if port in _handed_out:
                continue
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            _handed_out.add(port)
            return port
    raise RuntimeError(f"no free loopback port in [{low}, {high}] after 1000 tries")


def wait_until(pred, timeout, interval=0.05, what="condition"):
    """Polls pred() until it returns a truthy value; returns it, or raises after timeout s."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


# Offset that turns time.monotonic() into wall-clock seconds since the epoch.
MONO_TO_WALL = time.time() - time.monotonic()


def parse_rfc3339(s):
    """'2026-01-02T03:04:05.123456Z' -> seconds since the epoch (float)."""
    import datetime
    s = s.strip()
    frac = 0.0
    main = s.rstrip("Z")
    if "." in main:
        main, f = main.split(".", 1)
        frac = float("0." + f)
    dt = datetime.datetime.strptime(main, "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)
    return dt.timestamp() + frac


def http_request(host, port, method, path, timeout, body=None):
    """One request on a fresh connection: (status, body parsed as JSON, else text), or
    (None, error) when nothing answered."""
    try:
        c = http.client.HTTPConnection(host, port, timeout=timeout)
        c.request(method, path, body=body)
        r = c.getresponse()
        data = r.read().decode()
        c.close()
        try:
            return r.status, json.loads(data)
        except ValueError:
            return r.status, data
    except (OSError, http.client.HTTPException) as e:
        return None, str(e)


def follow_watch(cp, path, stop, on_event, on_connect=None):
    """Follows the watch `path` (with its query) as the cluster admin until the threading.Event
    `stop` is set: calls on_event(type, resource_version, object) once per new resourceVersion of
    an ADDED, MODIFIED or DELETED event, and reconnects after any error or end of stream.
    on_connect(connection) gets each connection, so that a stopper can shut its socket down."""
    seen = set()
    ctx = ssl.create_default_context(cafile=cp.env["CA_CRT"])
    ctx.load_cert_chain(cp.env["ADMIN_CRT"], cp.env["ADMIN_KEY"])
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


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class ControlPlane:
    """etcd + kube-apiserver on 127.0.0.1, driven through controlplane.sh."""

    def __init__(self, directory=None, extra_args=""):
        self.owned = directory is None
        self.dir = Path(directory or tempfile.mkdtemp(prefix="leasehold-cp-"))
        self.extra_args = extra_args
        self.env = {}

    @classmethod
    def shared_or_new(cls, extra_args=""):
        """The control plane the CTest fixture started (LEASEHOLD_E2E_CP), else a new one."""
        d = os.environ.get("LEASEHOLD_E2E_CP")
        if d and not extra_args and (Path(d) / "env").exists():
            cp = cls(d)
            cp.owned = False
            cp._read_env()
            return cp
        cp = cls(None, extra_args)
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
        self._sh("start", str(self.dir), env_extra={"EXTRA_APISERVER_ARGS": self.extra_args})
        self._read_env()
        log(f"control plane up on {self.host}:{self.port} in {time.monotonic() - t:.1f}s")

    def stop(self):
        if self.owned:
            self._sh("stop", str(self.dir), check=False)
            shutil.rmtree(self.dir, ignore_errors=True)

    def close(self):
        self.stop()

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

    def restart(self, component, *args):
        """Stops and starts `component` ("apiserver" or "etcd"); args go to controlplane.sh
        (restart-apiserver takes apiserver flags)."""
        self._sh(f"restart-{component}", str(self.dir), *args)


def rbac_manifests(lock_name="leasehold-lock", role_file=None):
    """The Role, RoleBinding and ServiceAccount shipped in deploy/rbac, for lock `lock_name`."""
    texts = []
    rbac = DEPLOY / "rbac"
    files = [role_file] if role_file else sorted(p for p in rbac.glob("*.yaml")
                                                 if p.name != "kustomization.yaml")
    for p in files:
        texts.append(Path(p).read_text().replace("leasehold-lock", lock_name))
    return "\n---\n".join(texts)


class Namespace:
    """A namespace with the shipped RBAC applied and a service account to run agents as."""

    def __init__(self, cp, name, lock_name="leasehold-lock", sa="leasehold"):
        self.cp, self.name, self.lock_name, self.sa = cp, name, lock_name, sa
        cp.ensure_sa(name, sa)
        cp.apply(rbac_manifests(lock_name), name)
        self.tmp = Path(tempfile.mkdtemp(prefix=f"leasehold-{name}-"))

    def sa_dir(self, tag, sa=None):
        return self.cp.sa_dir(self.name, sa or self.sa, self.tmp / f"sa-{tag}")

    def peer_kubeconfig(self, tag, sa=None, server=None):
        """A kubeconfig for a non-leasehold peer (e.g. a client-go program) that authenticates as
        a pod would: the service-account token (as tokenFile, which client-go re-reads) and CA of
        a fresh sa_dir(tag). Never the admin credential. `server` (host:port) overrides the
        apiserver address, e.g. to put a proxy in between."""
        d = self.sa_dir(tag, sa)
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

    def watch_holders(self):
        """A HolderWatch on this namespace's Lease; use as a context manager."""
        return HolderWatch(self.cp, self.name, self.lock_name)


class HolderWatch:
    """Every holderIdentity the apiserver's watch reports for a Lease, in order ("" = released).
    A real watch (kubectl get -w), so a release that lasts only until the next follower's write
    is still seen: the apiserver delivers every resourceVersion of one object."""

    def __init__(self, cp, namespace, name):
        env = dict(os.environ, CONTROLPLANE_OWNER_PID=str(os.getpid()))
        self.proc = subprocess.Popen(
            ["bash", str(CONTROLPLANE_SH), "kubectl", str(cp.dir), "get", "lease", name, "-n",
             namespace, "--watch", "-o", "jsonpath={.spec.holderIdentity}{\"\\n\"}"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.holders = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        for line in self.proc.stdout:
            self.holders.append(line.rstrip("\n"))

    def __enter__(self):
        wait_until(lambda: self.holders, 10, what="the Lease watch to report the current holder")
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._thread.join(5)

    def released_between(self, old, new):
        """Whether the Lease went from `old` through "" to `new`, in that order."""
        h = self.holders
        for i, x in enumerate(h):
            if x == old and "" in h[i + 1:]:
                j = h.index("", i + 1)
                if new in h[j + 1:]:
                    return True
        return False


class Agent:
    """One leasehold process, run the way a pod runs it: in-cluster mode, its own service-account
    directory, and no admin credential anywhere in its environment.

    Agent(ns, name, ...) runs it with the e2e flags (lock, identity, timings, release, debug log)
    in Namespace `ns`; Agent.with_flags(...) with flags of the caller's, e.g. the leasehold
    container of a rendered Deployment (ship_scenarios.py)."""

    url_host = "127.0.0.1"
    probe_port = None  # the --probe-address port, where the caller set one
    request_timeout = 0.5  # s, the default of request()

    def __init__(self, ns, name, lock_type="leases", timings=TIMINGS, release="safe",
                 extra=(), sa_dir=None, env=None):
        port = free_port()
        sa_dir = sa_dir or ns.sa_dir(name)
        flags = [
            f"--lock-name={ns.lock_name}", f"--namespace={ns.name}", f"--identity={name}",
            f"--lock-type={lock_type}", f"--lease-duration={timings[0]}",
            f"--renew-deadline={timings[1]}", f"--retry-period={timings[2]}",
            f"--release-on-shutdown={release}", f"--http-address=127.0.0.1:{port}",
            f"--serviceaccount-dir={sa_dir}", "--log-level=debug", *extra,
        ]
        self._setup(ns, name, flags, port, sa_dir, ns.tmp, (ns.cp.host, ns.cp.port), env)

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
        # Agents must not find an admin credential: no KUBECONFIG, a HOME without ~/.kube.
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("KUBE", "LEASEHOLD_", "POD_"))}
        base["HOME"] = str(tmp)
        base["KUBERNETES_SERVICE_HOST"] = str(api[0])
        base["KUBERNETES_SERVICE_PORT"] = str(api[1])
        if env:
            base.update(env)
        self.env = base
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

    def is_leader(self):
        st, body = self.leader()
        return st == 200 and isinstance(body, dict) and body.get("isLeader") is True

    def leader_body(self):
        """The /leader body if it says this agent leads, else None."""
        st, b = self.request("GET", "/leader")
        return b if st == 200 and isinstance(b, dict) and b.get("isLeader") is True else None

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
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, chars=4000):
        return self.log_text()[-chars:]

    def stop(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGCONT)
            except OSError:
                pass
            self.signal(signal.SIGKILL)
            self.wait(10)
        if getattr(self, "logf", None):
            self.logf.close()


class Sampler:
    """Asks every agent /leader every `interval` s, each from its own thread, and records
    (sent, received, isLeader, term, name) answers. A "yes" counts from the moment the question
    was sent to the moment the answer came back."""

    def __init__(self, agents, interval=0.05, timeout=0.3):
        self.agents = list(agents)
        self.interval, self.timeout = interval, timeout
        self.samples = {a.name: [] for a in self.agents}
        self._stop = threading.Event()
        self._threads = []
        self._lock = threading.Lock()

    def add(self, agent):
        with self._lock:
            self.agents.append(agent)
            self.samples.setdefault(agent.name, [])
        self._spawn(agent)

    def _spawn(self, agent):
        t = threading.Thread(target=self._run, args=(agent,), daemon=True)
        t.start()
        self._threads.append(t)

    def _run(self, agent):
        while not self._stop.is_set():
            sent = time.monotonic()
            st, body = agent.leader(self.timeout)
            recv = time.monotonic()
            yes = st == 200 and isinstance(body, dict) and body.get("isLeader") is True
            b = body if isinstance(body, dict) else {}
            with self._lock:
                self.samples[agent.name].append((sent, recv, yes, b.get("term"), b))
            self._stop.wait(max(0.0, self.interval - (recv - sent)))

    def __enter__(self):
        for a in self.agents:
            self._spawn(a)
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(2)

    def intervals(self):
        """Per agent, merged [first sent, last received] spans of consecutive "yes" answers."""
        out = {}
        with self._lock:
            for name, ss in self.samples.items():
                spans, cur = [], None
                for sent, recv, yes, _, _ in ss:
                    if yes:
                        cur = [sent, recv] if cur is None else [cur[0], recv]
                    elif cur is not None:
                        spans.append(tuple(cur))
                        cur = None
                if cur is not None:
                    spans.append(tuple(cur))
                out[name] = spans
        return out

    def overlaps(self):
        """Every pair of spans from different agents that share an instant."""
        iv = self.intervals()
        names = sorted(iv)
        found = []
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                for s1 in iv[a]:
                    for s2 in iv[b]:
                        if s1[0] < s2[1] and s2[0] < s1[1]:
                            found.append((a, s1, b, s2))
        return found

    def leader_spans(self):
        """All yes-spans as (start, end, name), sorted by start."""
        return sorted((s[0], s[1], n) for n, spans in self.intervals().items() for s in spans)

    def first_yes_after(self, t, exclude=()):
        best = None
        with self._lock:
            for name, ss in self.samples.items():
                if name in exclude:
                    continue
                for sent, recv, yes, _, _ in ss:
                    if yes and sent >= t:
                        if best is None or sent < best[0]:
                            best = (sent, name)
                        break
        return best

    def last_valid_until(self, name):
        """The latest validUntil (wall clock, seconds since the epoch) agent `name` handed out."""
        best = None
        with self._lock:
            for _, _, yes, _, b in self.samples.get(name, []):
                if yes and b.get("validUntil"):
                    v = parse_rfc3339(b["validUntil"])
                    best = v if best is None else max(best, v)
        return best

    def count(self):
        with self._lock:
            return sum(len(s) for s in self.samples.values())


def current_leaders(agents):
    return [a for a in agents if a.alive() and a.is_leader()]


def wait_single_leader(agents, timeout):
    def one():
        ls = current_leaders(agents)
        return ls[0] if len(ls) == 1 else None
    return wait_until(one, timeout, what="exactly one leader")


# What an agent logs when leasehold_promise_overtaken_total moves (elector.cpp, "Promises
# overtaken"): another holder took the lock while a "you lead" it handed out still ran.
OVERTAKEN_LOG = "took the lock while this replica's promise to lead runs"


class Scenario:
    """Context manager that stops every agent and owned control plane it was given, and prints
    the agents' logs when the scenario fails. A scenario in which an agent's promise was
    overtaken fails, unless it sets `expect_overtaken` (a foreign elector made to ignore
    promises)."""

    def __init__(self, name):
        self.name = name
        self.expect_overtaken = False
        self.agents = []
        self.cps = []
        self.start = time.monotonic()

    def agent(self, *a, **kw):
        ag = Agent(*a, **kw)
        self.agents.append(ag)
        return ag

    def control_plane(self, extra_args=""):
        cp = ControlPlane.shared_or_new(extra_args)
        self.cps.append(cp)
        return cp

    def __enter__(self):
        log(f"=== scenario {self.name}")
        return self

    def __exit__(self, exc_type, exc, tb):
        for a in self.agents:
            a.stop()
        overtaken = [a.name for a in self.agents if OVERTAKEN_LOG in a.log_text()]
        if overtaken and not self.expect_overtaken and exc_type is None:
            try:
                raise AssertionError(f"promise overtaken (leasehold_promise_overtaken_total "
                                     f"moved) on {', '.join(overtaken)}")
            except AssertionError as e:
                exc_type, exc = AssertionError, e
        if overtaken:
            log(f"promise overtaken on {', '.join(overtaken)}")
        if exc_type is not None:
            for a in self.agents:
                print(f"----- log of {a.name} (last 60 lines)")
                print("\n".join(a.log_text().splitlines()[-60:]))
        for cp in self.cps:
            cp.close()
        status = "FAILED" if exc_type else "passed"
        log(f"=== scenario {self.name} {status} in {time.monotonic() - self.start:.1f}s")
        if exc is not None and exc_type is AssertionError and tb is None:
            raise exc
        return False


class Registry:
    """The scenarios of one e2e module, by name in the order they are defined, and its command
    line. In the module: `SCENARIOS = Registry()`, `scenario = SCENARIOS.add` (a decorator:
    the function's name is the scenario's), and `sys.exit(SCENARIOS.main())`."""

    def __init__(self):
        self.scenarios = {}

    def add(self, fn):
        self.scenarios[fn.__name__] = fn
        return fn

    def main(self, argv=None, context=None, program=None):
        """NAME... or `all`: runs each scenario inside `context(name)` (Scenario by default),
        goes on after a failure, prints "N passed, N failed" and returns 1 if any failed, else
        0. `list`: prints the names, one a line. Anything else: usage, 2."""
        import sys
        import traceback
        argv = sys.argv[1:] if argv is None else list(argv)
        program = program or Path(sys.argv[0]).name
        context = context or Scenario
        if argv == ["list"]:
            print("\n".join(self.scenarios))
            return 0
        names = list(self.scenarios) if argv == ["all"] else argv
        unknown = [n for n in names if n not in self.scenarios]
        if not names or unknown:
            print(f"usage: {program} list | all | {' | '.join(self.scenarios)}", file=sys.stderr)
            return 2
        failed = 0
        for n in names:
            try:
                with context(n) as s:
                    self.scenarios[n](s)
            except Exception:  # noqa: BLE001 - report and go on with the next scenario
                traceback.print_exc()
                failed += 1
        print(f"{len(names) - failed} passed, {failed} failed")
        return 1 if failed else 0
