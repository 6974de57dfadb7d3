#!/usr/bin/env python3
"""leasehold benchmarks, each figure measured in the same run as the client-go interop peer
(e2e/interop: client-go's real tools/leaderelection, Lease lock) and shown beside it.

    python3 -m bench.bench                  full run (~85 min): figures for BENCHMARKS.md
    python3 -m bench.bench --smoke          CI smoke run (< 2 min): every phase but the two
                                            long ones, short windows, 3 failovers
    python3 -m bench.bench --phases idle,wrk --out DIR

Phases (see BENCHMARKS.md for the definitions):
  idle      2 leasehold agents on one Lease and 2 client-go peers on another, default timings
            (15s/10s/2s, leasehold's --renew-interval auto): RSS (VmHWM, VmRSS), CPU per hour,
            API requests per minute and writes (Lease updates) per leader-hour (apiserver audit
            log, per service account), leader and follower.
  wrk       /leader latency and throughput with wrk at 1 and 64 connections, against the leaders,
            and at a fixed 5,000 requests/s over 64 connections (bench/openloop, open loop).
  failover  fleets of 3 on their own locks, timings 4s/3s/1s: SIGTERM with
            --release-on-shutdown=immediate and safe, safe after POST /release (timed from the
            POST), SIGKILL; client-go SIGTERM with ReleaseOnCancel and SIGKILL. N runs each
            (full 20, smoke 3).
  failover_default  the same at the default timings (15s/10s/2s), N runs each, the signal at a
            random point of the renew cycle: leasehold with --renew-interval auto (5.5 s) and
            retry-period (2 s), SIGKILL, SIGTERM safe and immediate; client-go SIGKILL and
            SIGTERM with ReleaseOnCancel. From the signal and from the last renew. Not in --smoke.
  scale     100 candidates on one lock, and 100 agents on 100 locks: API QPS (apiserver
            apiserver_request_total) and apiserver + etcd CPU; leasehold, then client-go. The
            100 locks are 100 idle leaders: their writes per leader-hour, and apiserver and
            etcd CPU per 100 of them (smoke: 5 agents, scaled to 100).
  fleets    N locks (--fleet-locks, default 100 and 300) with a leader and two followers each,
            3N processes, default timings, on a fresh control plane per N and implementation:
            apiserver and etcd CPU (net of the control plane's own, measured alone first) and
            RSS after a warm-up, with the load average. Not in --smoke.
  slowapi   a slow API server: K leaders (--slowapi-leaders, 5) per configuration and latency,
            each on its own lock behind its own fault proxy (e2e/lib/faultproxy.py, latency s
            each way, so an answer takes 2 x s + the apiserver's), default timings, for a
            window after all led: leases lost, seconds without a yes, Lease writes per minute,
            failed attempts. leasehold auto, auto built from another commit (--slowapi-old-bin),
            retry-period, and client-go; the latency on from the start ("steady") and switched
            on once all lead ("onset"). Not in --smoke (about 8 minutes).
Writes OUT/results.json and OUT/results.md and prints the tables.
"""

import argparse
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:  # `python3 bench/bench.py` as well as `python3 -m bench.bench`
    sys.path.insert(0, str(REPO))
from e2e.lib.agent import Agent
from e2e.lib.members import GoPeer, peer_binary, peer_version
from e2e.lib.timings import DEFAULTS, FAST
from e2e.lib.common import free_port, leasehold_binary, log, parse_rfc3339
from e2e.lib.controlplane import ControlPlane, Namespace

CLK_TCK = os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------------------------ helpers
def cpu_seconds(pid):
    """utime + stime of a process, in seconds (/proc/PID/stat fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / CLK_TCK


def mem_kib(pid):
    """VmRSS, VmHWM, RssAnon, RssFile (KiB) and Threads from /proc/PID/status, Pss (KiB) from
    smaps_rollup (shared library pages divided among the processes that map them)."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "Threads"):
                out[k] = int(v.split()[0])
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    out["Pss"] = int(line.split()[1])
    except OSError:
        pass
    return out


def mem_available_gib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1048576
    return 0.0


def machine():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = int(line.split()[1])
    return {"nproc": os.cpu_count(), "cpu": model, "mem_gib": round(mem / 1048576, 1),
            "kernel": platform.release(), "loadavg_start": os.getloadavg()}


def leader_body(port, timeout=0.3):
    import http.client
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        c.request("GET", "/leader")
        r = c.getresponse()
        b = json.loads(r.read() or b"{}")
        c.close()
        return r.status, b
    except (OSError, ValueError, http.client.HTTPException):
        return None, {}


def post_release(port, timeout=2.0):
    """POST /release (the main container's "my work has stopped"); the HTTP status or None."""
    import http.client
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        c.request("POST", "/release")
        r = c.getresponse()
        r.read()
        c.close()
        return r.status
    except (OSError, http.client.HTTPException):
        return None


def says_yes(port, timeout=0.3):
    st, b = leader_body(port, timeout)
    return st == 200 and b.get("isLeader") is True


def pct(values, p):
    v = sorted(values)
    if not v:
        return None
    k = (len(v) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def dist(values, digits=3):
    if not values:
        return {"n": 0}
    return {"n": len(values), "min": round(min(values), digits),
            "p50": round(pct(values, 50), digits), "p99": round(pct(values, 99), digits),
            "max": round(max(values), digits)}


def apiserver_metrics(admin):
    """{(verb, resource, code): count} from the apiserver's apiserver_request_total."""
    st, text = admin.request("GET", "/metrics", timeout=10)
    if st != 200:
        return {}
    if isinstance(text, bytes):
        text = text.decode()
    out = {}
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels, _, val = line.rpartition(" ")
        lab = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        key = (lab.get("verb"), lab.get("resource"), lab.get("code"))
        out[key] = out.get(key, 0) + float(val)
    return out


def metric_delta(a, b, resources=("leases", "events")):
    tot = 0.0
    by = {}
    for k, v in b.items():
        if k[1] not in resources:
            continue
        d = v - a.get(k, 0.0)
        if d:
            by[f"{k[0]} {k[1]} {k[2]}"] = d
            tot += d
    return tot, by


# ------------------------------------------------------------------------------------ the bench
class Bench:
    def __init__(self, a):
        self.a = a
        self.smoke = a.smoke
        self.out = Path(a.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.logdir = self.out / "logs"
        self.logdir.mkdir(exist_ok=True)
        self.results = {"machine": machine(), "smoke": a.smoke, "argv": sys.argv,
                        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                        "notes": []}
        self.procs = []
        self.cg_bin = None

    def note(self, s):
        log(s)
        self.results["notes"].append(s)

    # ------------------------------------------------------------------ setup
    def setup(self):
        try:
            self.cg_bin = peer_binary(required=False)
        except Exception as e:  # noqa: BLE001
            self.cg_bin = None
            self.note(f"client-go peer unavailable: {e}")
        if self.cg_bin:
            self.results["client_go"] = peer_version(self.cg_bin) or "?"
            log(f"client-go peer: {self.cg_bin} (client-go {self.results['client_go']})")
        else:
            self.note("client-go interop peer not available (e2e/interop/build.sh): "
                      "client-go columns are empty")
        self.lh_bin = leasehold_binary()
        v = subprocess.run([self.lh_bin, "--version"], capture_output=True, text=True)
        self.results["leasehold"] = v.stdout.strip()
        self.ns_idle = f"bench-idle-{os.getpid() % 10000}"
        self.ns_slow = f"bench-slow-{os.getpid() % 10000}"
        policy = self.out / "audit-policy.yaml"
        self.audit_log = self.out / "audit.log"
        policy.write_text(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n"
            f"- level: Metadata\n  namespaces: [\"{self.ns_idle}\", \"{self.ns_slow}\"]\n"
            "- level: None\n")
        self.cp = ControlPlane(None, f"--audit-policy-file={policy} "
                                     f"--audit-log-path={self.audit_log} --audit-log-maxsize=0")
        self.cp.start()

    def namespace(self, name, sas, cp=None):
        """A namespace whose service accounts `sas` may get/update/watch/create every Lease and
        create Events (one Role for any lock name), and their SA directories; on control plane
        `cp` (default: the run's)."""
        cp = cp or self.cp
        ns = Namespace.__new__(Namespace)
        ns.cp, ns.name, ns.lock_name, ns.sa = cp, name, "bench-lock", sas[0]
        import tempfile
        ns.tmp = Path(tempfile.mkdtemp(prefix=f"leasehold-{name}-"))
        for sa in sas:
            cp.ensure_sa(name, sa)
        role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                "metadata": {"name": "bench"},
                "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                           "verbs": ["get", "update", "watch", "create"]},
                          {"apiGroups": ["", "events.k8s.io"], "resources": ["events"],
                           "verbs": ["create"]}]}
        binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                   "metadata": {"name": "bench"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                               "name": "bench"},
                   "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": name}
                                for sa in sas]}
        cp.apply(json.dumps(role) + "\n---\n" + json.dumps(binding), name)
        dirs = {sa: ns.sa_dir(sa, sa=sa) for sa in sas}
        return ns, dirs

    def spawn(self, kind, ns, sa_dir, identity, lock, timings, release=None, port=None,
              quiet=True, extra=(), api=None, binary=None):
        """One leasehold agent (kind "lh", `extra` flags added) or client-go peer ("cg") on
        lock `lock`, against the control plane of `ns` or `api` (host, port: a proxy in front
        of it); `binary`: another leasehold binary than the run's."""
        port = port or free_port()
        api = api or ("127.0.0.1", ns.cp.port)
        if kind == "lh":
            p = Agent(ns, identity, release=release or "safe", sa_dir=sa_dir, timings=timings,
                      port=port, api=api, lock_name=lock,
                      log_level="info" if quiet else "debug", binary=binary or self.lh_bin,
                      logdir=self.logdir, extra=extra)
        else:
            p = GoPeer(ns, identity, release_on_cancel=release == "release", timings=timings,
                       server=f"{api[0]}:{api[1]}", port=port, sa_dir=sa_dir,
                       binary=self.cg_bin, logdir=self.logdir, lock_name=lock,
                       extra=("--v=0",) if quiet else ())
        p.start()
        self.procs.append(p)
        return p

    def kinds(self):
        return ["lh", "cg"] if self.cg_bin else ["lh"]

    # ------------------------------------------------------------------ idle
    def phase_idle(self):
        window = 15.0 if self.smoke else float(self.a.idle_window)
        warm = 8.0 if self.smoke else 40.0
        sas = ["lh-a", "lh-b", "cg-a", "cg-b"]
        ns, dirs = self.namespace(self.ns_idle, sas)
        fleets = {}
        for kind in self.kinds():
            a = self.spawn(kind, ns, dirs[f"{kind}-a"], f"{kind}-a", f"{kind}-idle",
                           DEFAULTS)
            time.sleep(1.0)  # a leads: it started first (no race for the first create)
            b = self.spawn(kind, ns, dirs[f"{kind}-b"], f"{kind}-b", f"{kind}-idle",
                           DEFAULTS)
            fleets[kind] = (a, b)
        log(f"idle: warming up {warm:.0f}s, then a {window:.0f}s window")
        time.sleep(warm)
        roles = {}
        for kind, (a, b) in fleets.items():
            la, lb = says_yes(a.port), says_yes(b.port)
            if la == lb:
                self.note(f"idle {kind}: not exactly one leader at the window start ({la}, {lb})")
            roles[kind] = {"leader": a if la else b, "follower": b if la else a}
        procs = {(k, r): p for k, rs in roles.items() for r, p in rs.items()}
        cpu0 = {k: cpu_seconds(p.proc.pid) for k, p in procs.items()}
        lhm0 = self.lh_metric(roles["lh"])
        w0, m0 = time.time(), time.monotonic()
        time.sleep(window)
        w1, m1 = time.time(), time.monotonic()
        cpu1 = {k: cpu_seconds(p.proc.pid) for k, p in procs.items()}
        lhm1 = self.lh_metric(roles["lh"])
        mem = {k: mem_kib(p.proc.pid) for k, p in procs.items()}
        for kind, rs in roles.items():
            if not says_yes(rs["leader"].port):
                self.note(f"idle {kind}: the leader changed during the window")
        time.sleep(2)  # let the audit log catch up
        counts = self.audit_counts(w0, w1, ns.name)
        res = {"window_s": round(m1 - m0, 1), "timings": DEFAULTS.strings()}
        minutes = (m1 - m0) / 60
        for (kind, role), p in procs.items():
            sa = p.identity  # identity == service account name here
            c = counts.get(sa, {})
            n = sum(c.values())
            mm = mem[(kind, role)]
            r = {"identity": p.identity, "VmRSS_KiB": mm.get("VmRSS"),
                 "VmHWM_KiB": mm.get("VmHWM"), "RssAnon_KiB": mm.get("RssAnon"),
                 "RssFile_KiB": mm.get("RssFile"), "Pss_KiB": mm.get("Pss"),
                 "threads": mm.get("Threads"),
                 "cpu_s_per_hour": round((cpu1[(kind, role)] - cpu0[(kind, role)]) /
                                         (m1 - m0) * 3600, 2),
                 "api_requests": n, "api_requests_per_min": round(n / minutes, 2),
                 "api_requests_by_verb": c}
            if role == "leader":
                # A renew is one Lease update (the audit log's verb), at leasehold's
                # renew-interval or client-go's retry-period.
                writes = c.get("update leases", 0)
                r["writes"] = writes
                r["writes_per_leader_hour"] = round(writes / (m1 - m0) * 3600, 1)
                r["api_requests_per_renew"] = round(n / writes, 3) if writes else None
            if kind == "lh" and lhm0 and lhm1:
                r["self_reported_api_requests"] = lhm1.get(role, 0) - lhm0.get(role, 0)
            res[f"{kind}_{role}"] = r
        lw = (res.get("lh_leader") or {}).get("writes_per_leader_hour")
        cw = (res.get("cg_leader") or {}).get("writes_per_leader_hour")
        if lw is not None and cw:
            res["writes_ratio_lh_to_cg"] = round(lw / cw, 3)
        self.results["idle"] = res
        self.idle = roles
        return res

    def lh_metric(self, roles):
        """leasehold_api_requests_total summed, per role, from each agent's /metrics."""
        import http.client
        out = {}
        for role, p in roles.items():
            try:
                c = http.client.HTTPConnection("127.0.0.1", p.port, timeout=1)
                c.request("GET", "/metrics")
                text = c.getresponse().read().decode()
                c.close()
            except OSError:
                return None
            tot = 0.0
            for line in text.splitlines():
                if line.startswith("leasehold_api_requests_total"):
                    tot += float(line.rsplit(" ", 1)[1])
            out[role] = tot
        return out

    def audit_events(self, w0, w1, ns):
        """The audit log's requests in namespace `ns` received in [w0, w1] (wall clock), one
        event per auditID (its last stage: a watch is one request however long it stays
        open)."""
        seen = {}
        if not self.audit_log.exists():
            return []
        with open(self.audit_log, errors="replace") as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if (e.get("objectRef") or {}).get("namespace") != ns:
                    continue
                t = parse_rfc3339(e["requestReceivedTimestamp"])
                if w0 <= t < w1:
                    seen[e["auditID"]] = e
        return list(seen.values())

    def audit_counts(self, w0, w1, ns):
        """{sa: {verb: n}} of the service accounts' requests the apiserver received in
        [w0, w1] (wall clock)."""
        seen = []
        for e in self.audit_events(w0, w1, ns):
            user = (e.get("user") or {}).get("username", "")
            if not user.startswith(f"system:serviceaccount:{ns}:"):
                continue
            sa = user.rsplit(":", 1)[1]
            verb = e.get("verb")
            res = (e.get("objectRef") or {}).get("resource")
            seen.append((sa, f"{verb} {res}"))
        out = {}
        for sa, vr in seen:
            out.setdefault(sa, {})
            out[sa][vr] = out[sa].get(vr, 0) + 1
        return out

    # ------------------------------------------------------------------ wrk
    def phase_wrk(self):
        secs = 1 if self.smoke else int(self.a.wrk_seconds)
        if not shutil.which("wrk"):
            subprocess.run(["bash", str(HERE / "setup.sh")], capture_output=True)
        if not shutil.which("wrk"):
            self.note("wrk not installed (apt-get install wrk failed): /leader latency skipped")
            return None
        if not getattr(self, "idle", None):
            self.note("wrk needs the idle phase's leaders; skipped")
            return None
        res = {"seconds": secs}
        for kind, roles in self.idle.items():
            port = roles["leader"].port
            for conns, threads in ((1, 1), (64, 2)):
                for close in (False, True):
                    cmd = ["wrk", f"-t{threads}", f"-c{conns}", f"-d{secs}s", "--latency"]
                    if close:
                        cmd += ["-H", "Connection: close"]
                    r = subprocess.run(cmd + [f"http://127.0.0.1:{port}/leader"],
                                       capture_output=True, text=True, timeout=secs + 30)
                    key = f"{kind}_c{conns}" + ("_close" if close else "")
                    res[key] = parse_wrk(r.stdout)
                    res[key]["raw"] = r.stdout[-1500:]
                    log(f"wrk {key}: {res[key]['summary']}")
        # Fixed rate (open loop): wrk is closed-loop, so a slow answer hides the requests it
        # delays; bench/openloop schedules every request and counts from its due time.
        gen = openloop_binary()
        for kind, roles in self.idle.items():
            if gen is None:
                self.note("bench/openloop did not build (go): the fixed-rate row is skipped")
                break
            port = roles["leader"].port
            r = subprocess.run([gen, f"-url=http://127.0.0.1:{port}/leader", "-rate=5000",
                                "-conns=64", f"-duration={max(2, secs)}s"],
                               capture_output=True, text=True, timeout=secs + 60)
            try:
                res[f"{kind}_open5000"] = json.loads(r.stdout)
            except ValueError:
                self.note(f"openloop {kind}: no result ({r.stderr.strip()[-200:]})")
                continue
            o = res[f"{kind}_open5000"]
            log(f"openloop {kind} 5000/s over 64: p50 {o['p50Ms']} ms p99 {o['p99Ms']} ms "
                f"max {o['maxMs']} ms, {o['ok']} ok, {o['errors']} errors")
        # Memory after the load: the HTTP server starts threads on demand (up to its maximum)
        # and lets idle ones go, so the peak depends on the clients.
        for kind, roles in self.idle.items():
            for role, p in roles.items():
                if p.alive():
                    res[f"{kind}_{role}_mem_after"] = mem_kib(p.proc.pid)
        self.results["wrk"] = res
        return res

    # ------------------------------------------------------------------ failover
    def phase_failover(self):
        runs = 3 if self.smoke else int(self.a.failover_runs)
        sas = ["fo"]
        ns, dirs = self.namespace(f"bench-fo-{os.getpid() % 10000}", sas)
        modes = [("lh", "term-immediate"), ("lh", "term-safe"), ("lh", "release-term"),
                 ("lh", "kill")]
        if self.cg_bin:
            modes += [("cg", "term-release"), ("cg", "kill")]
        out = {"runs": runs, "timings": FAST.strings()}
        threads = []
        for kind, mode in modes:
            th = threading.Thread(target=self._failover_fleet,
                                  args=(ns, dirs["fo"], kind, mode, runs, out))
            th.start()
            threads.append(th)
            time.sleep(0.5)
        for th in threads:
            th.join()
        self.results["failover"] = out
        return out

    # The renew interval at the default timings: leasehold with --renew-interval auto (5.5 s at
    # 15s/10s/2s) and retry-period (2 s, as client-go), and client-go, side by side.
    FO_DEFAULT = [("lh", "auto", "kill"), ("lh", "auto", "term-safe"),
                  ("lh", "auto", "term-immediate"), ("lh", "retry-period", "kill"),
                  ("lh", "retry-period", "term-safe"), ("lh", "retry-period", "term-immediate"),
                  ("cg", "", "kill"), ("cg", "", "term-release")]

    def phase_failover_default(self):
        """Failover at the default timings, SIGKILL and SIGTERM, each fleet on its own lock, all
        at once. The signal comes at a random point of the renew cycle (a uniform delay of up to
        `jitter` s after the fleet settled, seeded), so "from the signal" averages over it."""
        runs = int(self.a.failover_runs)
        ns, dirs = self.namespace(f"bench-fod-{os.getpid() % 10000}", ["fo"])
        jitter = 6.0  # s: > the longest renew cycle here (auto: 5.5 s; client-go: 2-4.4 s)
        out = {"runs": runs, "timings": DEFAULTS.strings(), "jitter_s": jitter,
               "loadavg_start": os.getloadavg()}
        threads = []
        for i, (kind, interval, mode) in enumerate(self.FO_DEFAULT):
            if kind == "cg" and not self.cg_bin:
                continue
            extra = (f"--renew-interval={interval}",) if interval else ()
            th = threading.Thread(target=self._failover_fleet,
                                  args=(ns, dirs["fo"], kind, mode, runs, out),
                                  kwargs={"timings": DEFAULTS, "extra": extra,
                                          "variant": interval, "jitter": jitter, "seed": i})
            th.start()
            threads.append(th)
            time.sleep(0.5)
        for th in threads:
            th.join()
        out["loadavg_end"] = os.getloadavg()
        self.results["failover_default"] = out
        return out

    def _failover_fleet(self, ns, sa_dir, kind, mode, runs, out, timings=FAST, extra=(),
                        variant="", jitter=0.0, seed=0):
        """`runs` failovers of a fleet of 3 on its own lock; out[key] gets their distributions,
        key = kind[-variant]_mode. `extra`: leasehold flags; `jitter`: a random delay (up to that
        many s, seeded) between the settled fleet and the signal."""
        import random
        rng = random.Random(seed)
        tag = f"{kind}-{variant}" if variant else kind
        lock = f"fo-{tag}-{mode}"
        release = {"term-immediate": "immediate", "term-safe": "safe", "release-term": "safe",
                   "kill": "safe", "term-release": "release"}[mode]
        kill = mode.startswith("kill")
        lease_s, renew_s = timings.lease, timings.renew
        ports = [free_port() for _ in range(3)]
        gen = [0]

        def start(i):
            gen[0] += 1
            return self.spawn(kind, ns, sa_dir, f"{lock}-{gen[0]}", lock, timings,
                              release=release, port=ports[i], extra=extra)
        fleet = [start(i) for i in range(3)]
        recs = []
        path = f"/apis/coordination.k8s.io/v1/namespaces/{ns.name}/leases/{lock}"
        for run in range(runs):
            # A settled fleet: one leader, both followers agree on it, for 1.5 s.
            deadline = time.monotonic() + 60
            stable_since, leader = None, None
            while time.monotonic() < deadline:
                views = [leader_body(p.port) for p in fleet]
                yes = [i for i, (st, b) in enumerate(views) if st == 200 and b.get("isLeader")]
                names = {b.get("name") for st, b in views}
                if len(yes) == 1 and len(names) == 1:
                    if stable_since is None or leader != yes[0]:
                        stable_since, leader = time.monotonic(), yes[0]
                    if time.monotonic() - stable_since >= 1.5:
                        break
                else:
                    stable_since = None
                time.sleep(0.1)
            else:
                self.note(f"failover {kind} {mode} run {run}: no settled leader; stopping")
                break
            old = fleet[leader]
            rest = [p for i, p in enumerate(fleet) if i != leader]
            if jitter:
                time.sleep(rng.uniform(0, jitter))
            st, body = leader_body(old.port)
            vu = parse_rfc3339(body["validUntil"]) if body.get("validUntil") else None
            sig = signal.SIGKILL if kill else signal.SIGTERM
            # The old leader's last renew before the signal: the Lease read just before it, and
            # (below) just after it, for a renew that landed in between.
            st0, lease0 = self.cp.request("GET", path, timeout=3.0) if not kill else (None, None)
            t_sig_m, t_sig_w = time.monotonic(), time.time()
            if mode == "release-term":
                # Safe mode with the acknowledgement: measured from the POST, which comes first.
                ack = post_release(old.port)
                if ack not in (200, 202):
                    self.note(f"failover {kind} {mode} run {run}: POST /release answered {ack}")
            os.kill(old.proc.pid, sig)
            st, lease = self.cp.request("GET", path, timeout=3.0)
            renews = [parse_rfc3339(le["spec"]["renewTime"])
                      for s_, le in ((st0, lease0), (st, lease))
                      if s_ == 200 and le["spec"].get("holderIdentity") == old.identity
                      and le["spec"].get("renewTime")]
            renews = [r for r in renews if r <= t_sig_w]
            renew = max(renews) if renews else None
            # Poll the two followers every 5 ms until one says yes.
            first = None
            while time.monotonic() - t_sig_m < lease_s * 3 + 10:
                for p in rest:
                    t_q_m, t_q_w = time.monotonic(), time.time()
                    if says_yes(p.port, 0.2):
                        first = (t_q_m, t_q_w, p)
                        break
                if first:
                    break
                time.sleep(0.005)
            if not first:
                self.note(f"failover {kind} {mode} run {run}: no new leader")
                break
            rec = {"from_signal_s": round(first[0] - t_sig_m, 4)}
            if renew:
                rec["after_last_renew_s"] = round(first[1] - renew, 4)
            if vu:
                rec["after_valid_until_s"] = round(first[1] - vu, 4)
            recs.append(rec)
            # Replace the stopped agent (a new identity, same port) and go on.
            old.wait(renew_s + 10)
            if old.alive():
                self.note(f"failover {kind} {mode} run {run}: old leader still running; killed")
                old.stop()
            fleet[leader] = start(leader)
        for p in fleet:
            p.stop()
        key = f"{tag}_{mode}"
        out[key] = {"runs": recs,
                    "from_signal_s": dist([r["from_signal_s"] for r in recs])}
        if any("after_last_renew_s" in r for r in recs):
            out[key]["after_last_renew_s"] = dist([r["after_last_renew_s"] for r in recs
                                                  if "after_last_renew_s" in r])
        if any("after_valid_until_s" in r for r in recs):
            out[key]["after_valid_until_s"] = dist([r["after_valid_until_s"] for r in recs
                                                   if "after_valid_until_s" in r])
        log(f"failover {key}: {out[key]['from_signal_s']}")

    # ------------------------------------------------------------------ scale
    def phase_scale(self):
        n = 5 if self.smoke else int(self.a.scale_agents)
        window = 5.0 if self.smoke else float(self.a.scale_window)
        warm = 5.0 if self.smoke else 45.0
        ns, dirs = self.namespace(f"bench-scale-{os.getpid() % 10000}", ["scale"])
        out = {"agents": n, "window_s": window, "timings": DEFAULTS.strings()}
        for kind in self.kinds():
            for layout in ("one-lock", "own-locks"):
                fleet = []
                for i in range(n):
                    lock = f"{kind}-one" if layout == "one-lock" else f"{kind}-own-{i}"
                    fleet.append(self.spawn(kind, ns, dirs["scale"], f"{kind}-{layout}-{i}",
                                            lock, DEFAULTS))
                time.sleep(warm)
                self.cp._read_env()
                ap, ep = int(self.cp.env["APISERVER_PID"]), int(self.cp.env["ETCD_PID"])
                m0 = apiserver_metrics(self.cp)
                c0 = (cpu_seconds(ap), cpu_seconds(ep))
                a0 = sum(cpu_seconds(p.proc.pid) for p in fleet if p.alive())
                t0 = time.monotonic()
                time.sleep(window)
                t1 = time.monotonic()
                m1 = apiserver_metrics(self.cp)
                c1 = (cpu_seconds(ap), cpu_seconds(ep))
                a1 = sum(cpu_seconds(p.proc.pid) for p in fleet if p.alive())
                rss = [mem_kib(p.proc.pid).get("VmRSS", 0) for p in fleet if p.alive()]
                leaders = sum(1 for p in fleet if says_yes(p.port, 1.0))
                tot, by = metric_delta(m0, m1)
                dt = t1 - t0
                out[f"{kind}_{layout}"] = {
                    "api_qps": round(tot / dt, 2), "by": {k: round(v / dt, 3)
                                                          for k, v in sorted(by.items())},
                    "apiserver_cpu_pct": round(100 * (c1[0] - c0[0]) / dt, 1),
                    "etcd_cpu_pct": round(100 * (c1[1] - c0[1]) / dt, 1),
                    "agents_cpu_pct": round(100 * (a1 - a0) / dt, 1),
                    "agents_rss_total_MiB": round(sum(rss) / 1024, 1),
                    "leaders_at_end": leaders, "alive": len(rss)}
                if layout == "own-locks":
                    # n idle leaders: their writes per leader-hour, and the control plane's CPU
                    # scaled to 100 of them.
                    r = out[f"{kind}_{layout}"]
                    writes = sum(v for k, v in by.items() if k.startswith("PUT leases 2"))
                    r["writes_per_leader_hour"] = round(writes / dt * 3600 / n, 1)
                    r["apiserver_cpu_pct_per_100_leaders"] = round(
                        r["apiserver_cpu_pct"] * 100 / n, 1)
                    r["etcd_cpu_pct_per_100_leaders"] = round(r["etcd_cpu_pct"] * 100 / n, 1)
                log(f"scale {kind} {layout}: {out[f'{kind}_{layout}']}")
                for p in fleet:
                    p.stop()
                time.sleep(0.5 if self.smoke else 2)
        self.results["scale"] = out
        return out

    # ------------------------------------------------------------------ fleets
    def phase_fleets(self):
        """N locks with a leader and two followers each (3N processes, one per member), default
        timings, for each N of --fleet-locks: what the control plane spends while they idle.
        Each (N, implementation) gets a fresh control plane, so that neither inherits the
        other's heap, connections or watch cache."""
        sizes = [int(x) for x in str(self.a.fleet_locks).split(",") if x.strip()]
        out = {"timings": DEFAULTS.strings(), "warm_s": float(self.a.fleet_warm),
               "window_s": float(self.a.fleet_window),
               "baseline_s": float(self.a.fleet_baseline), "runs": {}}
        self.results["fleets"] = out
        kinds = [k for k in self.kinds() if k in self.a.fleet_kinds.split(",")]
        interval = self.a.fleet_renew_interval
        out["lh_renew_interval"] = interval
        for n in sizes:
            for kind in kinds:
                key = f"{kind}_{n}" if kind != "lh" or interval == "auto" else \
                    f"lh-{interval}_{n}"
                pss = [r.get("agent_Pss_KiB_mean") for k, r in out["runs"].items()
                       if k.startswith(kind + "_") and r.get("agent_Pss_KiB_mean")]
                # Before starting 3N processes: do they fit beside what others use now? A
                # guess of 16 MiB each (the client-go peer's PSS, the larger) until measured.
                need = 3 * n * (max(pss) if pss else 16 * 1024) / 1048576 + 4.0  # GiB, + margin
                avail = mem_available_gib()
                if avail < need:
                    self.note(f"fleets {key}: skipped, {3 * n} processes need about {need:.1f} "
                              f"GiB, {avail:.1f} GiB available")
                    continue
                out["runs"][key] = self._fleet(kind, n, out, interval)
                (self.out / "results.partial.json").write_text(
                    json.dumps(self.results, indent=1, default=str))
        return out

    # What a member's log says when it stops leading: leasehold's warning, the client-go peer's
    # callback (e2e/interop/common/peer.go).
    LOST = {"lh": "lost lease", "cg": "OnStoppedLeading"}

    def _fleet(self, kind, n, cfg, interval="auto"):
        cp = ControlPlane(None)
        cp.start()
        fleet = []
        try:
            ap, ep = int(cp.env["APISERVER_PID"]), int(cp.env["ETCD_PID"])
            ns, dirs = self.namespace(f"bench-fleet-{kind}-{n}", ["fleet"], cp=cp)
            r = {"kind": kind, "locks": n, "processes": 3 * n}
            extra = ()
            if kind == "lh":
                r["renew_interval"] = interval
                extra = (f"--renew-interval={interval}",)
            tag = kind if not extra or interval == "auto" else f"{kind}-{interval}"
            # The control plane alone, for the same length of time: its own idle cost.
            time.sleep(5)
            c0 = (cpu_seconds(ap), cpu_seconds(ep))
            t0 = time.monotonic()
            time.sleep(cfg["baseline_s"])
            dt = time.monotonic() - t0
            r["baseline"] = {"apiserver_cpu_pct": round(100 * (cpu_seconds(ap) - c0[0]) / dt, 2),
                             "etcd_cpu_pct": round(100 * (cpu_seconds(ep) - c0[1]) / dt, 2),
                             "apiserver": mem_kib(ap), "etcd": mem_kib(ep)}
            t_spawn = time.monotonic()
            for member in range(3):  # every lock's first member first: it creates the Lease
                for i in range(n):
                    fleet.append(self.spawn(kind, ns, dirs["fleet"], f"{tag}-{n}-{i}-{member}",
                                            f"{kind}-{i}", DEFAULTS, extra=extra))
                    time.sleep(0.02)
            r["spawn_s"] = round(time.monotonic() - t_spawn, 1)
            log(f"fleets {kind} {n}: {len(fleet)} started in {r['spawn_s']} s; warming up "
                f"{cfg['warm_s']:.0f} s")
            time.sleep(cfg["warm_s"])
            lost0 = self.fleet_lost(kind, fleet)
            leases0 = self.fleet_leases(cp, ns.name)
            m0 = apiserver_metrics(cp)
            c0 = (cpu_seconds(ap), cpu_seconds(ep))
            a0 = sum(cpu_seconds(p.proc.pid) for p in fleet if p.alive())
            la, cp_rss = [os.getloadavg()], []
            t0 = time.monotonic()
            while time.monotonic() - t0 < cfg["window_s"]:
                time.sleep(min(10.0, max(0.0, cfg["window_s"] - (time.monotonic() - t0))))
                la.append(os.getloadavg())
                cp_rss.append((mem_kib(ap).get("VmRSS", 0), mem_kib(ep).get("VmRSS", 0)))
            dt = time.monotonic() - t0
            m1 = apiserver_metrics(cp)
            c1 = (cpu_seconds(ap), cpu_seconds(ep))
            a1 = sum(cpu_seconds(p.proc.pid) for p in fleet if p.alive())
            leases1 = self.fleet_leases(cp, ns.name)
            lost1 = self.fleet_lost(kind, fleet)
            mem = [mem_kib(p.proc.pid) for p in fleet if p.alive()]
            tot, by = metric_delta(m0, m1)
            base = r["baseline"]
            r.update({
                "window_s": round(dt, 1),
                "loadavg_window_start": la[0], "loadavg_window_end": la[-1],
                "loadavg1_mean": round(sum(x[0] for x in la) / len(la), 2),
                "api_qps": round(tot / dt, 2),
                "by": {k: round(v / dt, 3) for k, v in sorted(by.items())},
                "apiserver_cpu_pct": round(100 * (c1[0] - c0[0]) / dt, 2),
                "etcd_cpu_pct": round(100 * (c1[1] - c0[1]) / dt, 2),
                "apiserver_VmRSS_MiB_mean": round(sum(x[0] for x in cp_rss) / len(cp_rss) / 1024,
                                                  1),
                "etcd_VmRSS_MiB_mean": round(sum(x[1] for x in cp_rss) / len(cp_rss) / 1024, 1),
                "apiserver_end": mem_kib(ap), "etcd_end": mem_kib(ep),
                "agents_cpu_pct": round(100 * (a1 - a0) / dt, 2),
                "alive": len(mem),
                "agent_VmRSS_KiB_mean": round(sum(m.get("VmRSS", 0) for m in mem) / len(mem)),
                "agent_Pss_KiB_mean": round(sum(m.get("Pss", 0) for m in mem) / len(mem)),
                "agents_Pss_total_MiB": round(sum(m.get("Pss", 0) for m in mem) / 1024, 1),
                "leases": len(leases1),
                "leaderships_lost_in_warmup": lost0, "leaderships_lost_in_window": lost1 - lost0,
                "leases_held_at_end": sum(1 for v in leases1.values() if v["held"]),
                "leader_changes_in_window": sum(
                    leases1[k]["transitions"] - v["transitions"] for k, v in leases0.items()
                    if k in leases1)})
            for c in ("apiserver", "etcd"):
                r[f"{c}_cpu_pct_net"] = round(r[f"{c}_cpu_pct"] - base[f"{c}_cpu_pct"], 2)
                r[f"{c}_cpu_pct_net_per_100_locks"] = round(r[f"{c}_cpu_pct_net"] * 100 / n, 2)
            log(f"fleets {kind} {n}: " + json.dumps({k: v for k, v in r.items() if k != "by"}))
            return r
        finally:
            for p in fleet:
                p.stop()
            cp.stop()

    def fleet_lost(self, kind, fleet):
        """How often the members stopped leading, so far (their logs): leasehold logs a lost
        lease at info level, the client-go peer its OnStoppedLeading at -v=0."""
        return sum(p.log_text().count(self.LOST[kind]) for p in fleet)

    def fleet_leases(self, cp, ns):
        """{lock: {"held": a holder renewed within lease-duration, "transitions": n}} of the
        namespace's Leases, read as the admin."""
        st, body = cp.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
                              timeout=30)
        out = {}
        if st != 200:
            return out
        now = time.time()
        for it in body.get("items", []):
            sp = it.get("spec", {})
            rt = sp.get("renewTime")
            held = bool(sp.get("holderIdentity")) and rt is not None and \
                now - parse_rfc3339(rt) < (sp.get("leaseDurationSeconds") or 15)
            out[it["metadata"]["name"]] = {"held": held,
                                           "transitions": sp.get("leaseTransitions") or 0}
        return out

    # ------------------------------------------------------------------ slowapi
    # (name, kind, --renew-interval, binary): "old" is --slowapi-old-bin, leasehold built from
    # another commit (the rule under test absent), "" the run's.
    SLOW_CONFIGS = (("lh-auto", "lh", "auto", ""), ("lh-auto-old", "lh", "auto", "old"),
                    ("lh-retry-period", "lh", "retry-period", ""), ("cg", "cg", "", ""))
    # A failed attempt in a member's log: leasehold's warning (or error, when refused); the
    # client-go peer's errors at -v=0 (a failed optimistic update that the slow path then
    # completes is logged at -v=2 only, so not counted).
    FAILED = {"lh": re.compile(r"leader election attempt on .* (failed|refused)"),
              "cg": re.compile(r"Error retrieving lease lock|Failed to update lease|"
                               r"Error initially creating lease lock")}

    def phase_slowapi(self):
        """Leaders behind a slow API server: for each configuration and latency, K leaders on
        their own locks, each behind its own fault proxy, over a window once all led. Round
        "steady": the latency is on from the start (they acquire through it); "onset": they
        lead through a clean proxy and the latency comes on as the window starts, as when a
        start-up storm slows a fast apiserver."""
        from e2e.lib.faultproxy import ProxyLoop
        lats = [float(x) for x in str(self.a.slowapi_latency).split(",") if x.strip()]
        k, window = int(self.a.slowapi_leaders), float(self.a.slowapi_window)
        old = self.a.slowapi_old_bin or os.environ.get("LEASEHOLD_OLD_BIN")
        out = {"timings": DEFAULTS.strings(), "leaders": k, "window_s": window,
               "latency_each_way_s": lats, "rounds": {}, "leasehold": self.results["leasehold"]}
        if old:
            v = subprocess.run([old, "--version"], capture_output=True, text=True)
            g = subprocess.run(["git", "-C", str(Path(old).resolve().parent.parent), "log",
                                "-1", "--format=%h %s"], capture_output=True, text=True)
            out["old_binary"] = {"path": old, "version": v.stdout.strip(),
                                 "commit": g.stdout.strip()}
        else:
            self.note("slowapi: no --slowapi-old-bin (or LEASEHOLD_OLD_BIN): lh-auto-old skipped")
        g = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h %s"],
                           capture_output=True, text=True)
        out["commit"] = g.stdout.strip()
        self.results["slowapi"] = out
        ns, dirs = self.namespace(self.ns_slow, ["slow"])
        loop = ProxyLoop()
        try:
            out["probe_get_s"] = {f"{lat:g}": self._probe_round_trip(loop, lat) for lat in lats}
            log(f"slowapi: a Lease GET through the proxy takes {out['probe_get_s']} s")
            for rnd in str(self.a.slowapi_rounds).split(","):
                out["rounds"][rnd] = self._slow_round(rnd, ns, dirs["slow"], loop, lats, k,
                                                      window, old)
                (self.out / "results.partial.json").write_text(
                    json.dumps(self.results, indent=1, default=str))
        finally:
            loop.close()
        return out

    def _probe_round_trip(self, loop, lat, n=5):
        """Seconds for a GET of a Lease list as the admin through a fault proxy at latency
        `lat` each way, on one kept-alive connection after its TLS handshake: the median of n."""
        import http.client
        from e2e.lib.controlplane import admin_context
        px = loop.proxy(f"probe-{lat:g}", self.cp.host, self.cp.port)
        loop.latency(px, lat)
        c = http.client.HTTPSConnection("127.0.0.1", px.port, timeout=60,
                                        context=admin_context(self.cp.env))
        ts = []
        try:
            for i in range(n + 1):
                t = time.monotonic()
                c.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/{self.ns_slow}/leases")
                c.getresponse().read()
                if i:  # the first carries the handshake
                    ts.append(time.monotonic() - t)
        finally:
            c.close()
        return round(pct(ts, 50), 3)

    def lh_renew_stats(self, port):
        """(sum, count) of leasehold_renew_duration_seconds (successful acquire and renew
        writes) from an agent's /metrics, or None."""
        import http.client
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/metrics")
            text = c.getresponse().read().decode()
            c.close()
        except (OSError, http.client.HTTPException):
            return None
        got = {}
        for line in text.splitlines():
            for key in ("leasehold_renew_duration_seconds_sum",
                        "leasehold_renew_duration_seconds_count"):
                if line.startswith(key):
                    got[key] = float(line.rsplit(" ", 1)[1])
        return tuple(got.get(f"leasehold_renew_duration_seconds_{x}", 0.0)
                     for x in ("sum", "count"))

    @staticmethod
    def _count_no_yes(port, stop, acc, i, interval=0.25):
        """Until `stop`: polls GET /leader every `interval` s and adds to acc[i] the time from
        each answer that was not a yes to the next poll."""
        prev = None
        while True:
            t = time.monotonic()
            if prev is not None and not prev[1]:
                acc[i] += t - prev[0]
            if stop.is_set():
                return
            prev = (t, says_yes(port, 0.5))
            stop.wait(max(0.0, interval - (time.monotonic() - t)))

    def _slow_round(self, rnd, ns, sa_dir, loop, lats, k, window, old):
        onset = rnd == "onset"
        members = []
        for cfg, kind, interval, which in self.SLOW_CONFIGS:
            if (which == "old" and not old) or (kind == "cg" and not self.cg_bin):
                continue
            extra = (f"--renew-interval={interval}",) if interval else ()
            for lat in lats:
                for i in range(k):
                    name = f"{rnd}-{cfg}-{lat:g}-{i}".replace(".", "p")
                    px = loop.proxy(name, self.cp.host, self.cp.port)
                    if not onset:
                        loop.latency(px, lat)
                    p = self.spawn(kind, ns, sa_dir, name, name, DEFAULTS,
                                   api=("127.0.0.1", px.port),
                                   binary=old if which == "old" else None, extra=extra)
                    members.append({"cfg": cfg, "kind": kind, "lat": lat, "proxy": px, "p": p})
                    time.sleep(0.05)
        try:
            t = time.monotonic()
            waiting = list(members)
            while waiting and time.monotonic() - t < 180:
                waiting = [m for m in waiting if not says_yes(m["p"].port, 1.0)]
                time.sleep(0.5)
            res = {"all_led_after_s": round(time.monotonic() - t, 1),
                   "never_led": [m["p"].identity for m in waiting]}
            if waiting:
                self.note(f"slowapi {rnd}: {len(waiting)} members never led: "
                          f"{res['never_led']}")
            if onset:
                for m in members:
                    loop.latency(m["proxy"], m["lat"])
            log(f"slowapi {rnd}: {len(members)} members led within {res['all_led_after_s']} s; "
                f"a {window:.0f} s window")

            def lost(m):
                return m["p"].log_text().count(self.LOST[m["kind"]])

            def failed(m):
                return len(self.FAILED[m["kind"]].findall(m["p"].log_text()))
            lost0, fail0 = [lost(m) for m in members], [failed(m) for m in members]
            lh0 = [self.lh_renew_stats(m["p"].port) if m["kind"] == "lh" else None
                   for m in members]
            stop, noyes = threading.Event(), [0.0] * len(members)
            threads = [threading.Thread(target=self._count_no_yes,
                                        args=(m["p"].port, stop, noyes, i))
                       for i, m in enumerate(members)]
            w0, m0 = time.time(), time.monotonic()
            for th in threads:
                th.start()
            la = [os.getloadavg()]
            while time.monotonic() - m0 < window:
                time.sleep(min(10.0, max(0.0, window - (time.monotonic() - m0))))
                la.append(os.getloadavg())
            stop.set()
            for th in threads:
                th.join()
            w1, m1 = time.time(), time.monotonic()
            lost1, fail1 = [lost(m) for m in members], [failed(m) for m in members]
            lh1 = [self.lh_renew_stats(m["p"].port) if m["kind"] == "lh" else None
                   for m in members]
        finally:
            for m in members:
                m["p"].stop()
        time.sleep(2)  # let the audit log catch up
        writes = {}  # lock: [answered 2xx, answered otherwise]
        for e in self.audit_events(w0, w1, ns.name):
            ref = e.get("objectRef") or {}
            if ref.get("resource") != "leases" or e.get("verb") not in ("update", "create"):
                continue
            code = (e.get("responseStatus") or {}).get("code") or 0
            writes.setdefault(ref.get("name"), [0, 0])[0 if 200 <= code < 300 else 1] += 1
        dt = m1 - m0
        res.update({"window_s": round(dt, 1), "loadavg_window_start": la[0],
                    "loadavg_window_end": la[-1],
                    "loadavg1_mean": round(sum(x[0] for x in la) / len(la), 2), "rows": {}})
        for cfg, _, _, _ in self.SLOW_CONFIGS:
            for lat in lats:
                ix = [i for i, m in enumerate(members) if m["cfg"] == cfg and m["lat"] == lat]
                if not ix:
                    continue
                w = [writes.get(members[i]["p"].identity, [0, 0]) for i in ix]
                r = {"config": cfg, "latency_each_way_s": lat, "leaders": len(ix),
                     "never_led": sum(members[i]["p"].identity in res["never_led"] for i in ix),
                     "leases_lost": sum(lost1[i] - lost0[i] for i in ix),
                     "leases_lost_each": [lost1[i] - lost0[i] for i in ix],
                     "no_yes_s": round(sum(noyes[i] for i in ix), 1),
                     "no_yes_s_each": [round(noyes[i], 1) for i in ix],
                     "lease_writes_per_min_per_leader": round(
                         sum(x[0] for x in w) / len(ix) / (dt / 60), 1),
                     "lease_writes_not_2xx": sum(x[1] for x in w),
                     "failed_attempts": sum(fail1[i] - fail0[i] for i in ix)}
                got = [(lh0[i], lh1[i]) for i in ix if lh0[i] and lh1[i]]
                n = sum(b[1] - a[1] for a, b in got)
                if n:
                    r["renew_write_s_mean"] = round(sum(b[0] - a[0] for a, b in got) / n, 3)
                res["rows"][f"{cfg}@{lat:g}"] = r
                log(f"slowapi {rnd} {cfg} at {lat:g} s each way: " + json.dumps(
                    {x: v for x, v in r.items() if not x.endswith("_each")}))
        return res

    def teardown(self):
        for p in self.procs:
            try:
                p.stop()
            except Exception:  # noqa: BLE001
                pass
        if getattr(self, "cp", None):
            shutil.copy(self.cp.dir / "apiserver.log", self.logdir / "apiserver.log")
            self.cp.stop()
        if self.audit_log.exists():
            self.audit_log.unlink()


def openloop_binary():
    """bench/openloop built once into the e2e cache (standard library only: no download)."""
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.access("/usr/local/go/bin/go", os.X_OK)
                                else None)
    if go is None:
        return None
    src = HERE / "openloop"
    out = Path(os.environ.get("LEASEHOLD_E2E_CACHE", Path.home() / ".cache" / "leasehold-e2e"))
    out = out / "openloop"
    out.mkdir(parents=True, exist_ok=True)
    b = out / "openloop"
    if not b.exists() or b.stat().st_mtime < (src / "main.go").stat().st_mtime:
        r = subprocess.run([go, "build", "-o", str(b), "."], cwd=src, capture_output=True,
                           text=True, env={**os.environ, "GOFLAGS": "-mod=mod"})
        if r.returncode != 0:
            log(f"openloop build failed: {r.stderr[-400:]}")
            return None
    return str(b)


def parse_wrk(text):
    """p50/p99 latency (ms) and requests/s from `wrk --latency` output."""
    def ms(v):
        m = re.match(r"([\d.]+)(us|ms|s)", v)
        if not m:
            return None
        x = float(m.group(1))
        return x / 1000 if m.group(2) == "us" else x * 1000 if m.group(2) == "s" else x
    r = {}
    for line in text.splitlines():
        s = line.split()
        if len(s) == 2 and s[0] in ("50%", "75%", "90%", "99%"):
            r["p" + s[0].rstrip("%") + "_ms"] = ms(s[1])
        if line.startswith("Requests/sec:"):
            r["rps"] = float(s[1])
        if "Non-2xx" in line or "Socket errors" in line:
            r.setdefault("errors", []).append(line.strip())
    r["summary"] = (f"p50 {r.get('p50_ms')} ms, p99 {r.get('p99_ms')} ms, "
                    f"{r.get('rps')} req/s")
    return r


# ------------------------------------------------------------------------------------ report
def fmt(v, unit="", digits=2):
    if v is None:
        return "–"
    if isinstance(v, float):
        v = round(v, digits)
    return f"{v}{unit}"


def markdown(res):
    L = []
    m = res["machine"]
    L.append(f"Machine: {m['nproc']} cores ({m['cpu']}), {m['mem_gib']} GiB, Linux "
             f"{m['kernel']}; load average at the start {tuple(round(x, 1) for x in m['loadavg_start'])}."
             f" leasehold: `{res.get('leasehold')}`; client-go peer: "
             f"{res.get('client_go', 'not available')}.")
    L.append("")
    idle = res.get("idle")
    if idle:
        L.append(f"### Idle agents (timings {'/'.join(idle['timings'])}, "
                 f"window {idle['window_s']} s)")
        L.append("")
        L.append("| | leasehold leader | client-go leader | leasehold follower | "
                 "client-go follower |")
        L.append("|---|---|---|---|---|")

        def row(name, key, f=lambda x: x):
            cells = []
            for role in ("leader", "follower"):
                for kind in ("lh", "cg"):
                    r = idle.get(f"{kind}_{role}")
                    cells.append(f(r.get(key)) if r and r.get(key) is not None else "–")
            # order: lh leader, cg leader, lh follower, cg follower
            L.append(f"| {name} | " + " | ".join(cells) + " |")
        row("VmRSS (steady)", "VmRSS_KiB", lambda v: f"{v / 1024:.1f} MiB")
        row("VmHWM (peak)", "VmHWM_KiB", lambda v: f"{v / 1024:.1f} MiB")
        row("of VmRSS: anonymous", "RssAnon_KiB", lambda v: f"{v / 1024:.1f} MiB")
        row("of VmRSS: file-backed (binary, shared libraries)", "RssFile_KiB",
            lambda v: f"{v / 1024:.1f} MiB")
        row("PSS", "Pss_KiB", lambda v: f"{v / 1024:.1f} MiB")
        row("threads", "threads", str)
        row("CPU per hour", "cpu_s_per_hour", lambda v: f"{v:.2f} s")
        row("API requests / min", "api_requests_per_min", lambda v: f"{v:.2f}")
        row("API requests / renew", "api_requests_per_renew", lambda v: f"{v:.2f}")
        row("writes (Lease updates) per leader-hour", "writes_per_leader_hour",
            lambda v: f"{v:.0f}")
        row("leasehold_api_requests_total (self-reported, window)", "self_reported_api_requests",
            lambda v: f"{v:.0f}")
        L.append("")
        if idle.get("writes_ratio_lh_to_cg") is not None:
            L.append(f"Writes per leader-hour, leasehold / client-go: "
                     f"**{idle['writes_ratio_lh_to_cg']}×** (same run, same timings).")
            L.append("")
        for role in ("leader", "follower"):
            for kind in ("lh", "cg"):
                r = idle.get(f"{kind}_{role}")
                if r:
                    L.append(f"- {kind} {role} requests in the window by verb: "
                             f"{r['api_requests_by_verb']}")
        L.append("")
    w = res.get("wrk")
    if w:
        L.append(f"### /leader with wrk ({w['seconds']} s each)")
        L.append("")
        L.append("| connections | leasehold p50 | leasehold p99 | leasehold req/s | client-go p50 | "
                 "client-go p99 | client-go req/s |")
        L.append("|---|---|---|---|---|---|---|")
        for c in (1, 64):
            for close in ("", "_close"):
                cells = []
                for kind in ("lh", "cg"):
                    r = w.get(f"{kind}_c{c}{close}") or {}
                    cells += [fmt(r.get("p50_ms"), " ms", 3), fmt(r.get("p99_ms"), " ms", 3),
                              fmt(r.get("rps"), "", 0)]
                label = f"{c}, " + ("new connection per request" if close else "keep-alive")
                L.append(f"| {label} | " + " | ".join(cells) + " |")
        mem = []
        for kind, kn in (("lh", "leasehold"), ("cg", "client-go")):
            for role in ("leader", "follower"):
                m = w.get(f"{kind}_{role}_mem_after")
                if m:
                    mem.append(f"{kn} {role} VmRSS {m.get('VmRSS', 0) / 1024:.1f} MiB, VmHWM "
                               f"{m.get('VmHWM', 0) / 1024:.1f} MiB, {m.get('Threads')} threads")
        if mem:
            L.append("After the wrk runs: " + "; ".join(mem) + ".")
        if w.get("lh_open5000") or w.get("cg_open5000"):
            L.append("")
            L.append("### /leader at a fixed rate (bench/openloop, open loop: latency from each "
                     "request's due time)")
            L.append("")
            L.append("| rate, connections | leasehold p50 | p99 | p99.9 | max | errors | "
                     "client-go p50 | p99 | p99.9 | max | errors |")
            L.append("|---|---|---|---|---|---|---|---|---|---|---|")
            cells = []
            for kind in ("lh", "cg"):
                o = w.get(f"{kind}_open5000") or {}
                cells += [fmt(o.get("p50Ms"), " ms", 3), fmt(o.get("p99Ms"), " ms", 3),
                          fmt(o.get("p999Ms"), " ms", 3), fmt(o.get("maxMs"), " ms", 2),
                          fmt(o.get("errors"), "", 0)]
            L.append("| 5,000/s, 64 | " + " | ".join(cells) + " |")
        L.append("")
    fo = res.get("failover")
    if fo:
        L.append(f"### Failover (timings {'/'.join(fo['timings'])}, {fo['runs']} runs each; "
                 "seconds)")
        L.append("")
        L.append("| case | measured from | n | min | p50 | p99 | max |")
        L.append("|---|---|---|---|---|---|---|")
        names = {"lh_term-immediate": "leasehold SIGTERM, immediate",
                 "lh_term-safe": "leasehold SIGTERM, safe",
                 "lh_release-term": "leasehold POST /release + SIGTERM, safe",
                 "lh_kill": "leasehold SIGKILL",
                 "cg_term-release": "client-go SIGTERM, ReleaseOnCancel",
                 "cg_kill": "client-go SIGKILL"}
        for key, name in names.items():
            r = fo.get(key)
            if not r:
                continue
            first = "the POST /release" if key == "lh_release-term" else "the signal"
            L += failover_rows(name, r, (
                ("from_signal_s", first), ("after_valid_until_s", "the last validUntil given"),
                ("after_last_renew_s", "the last renew (lease renewTime)")))
        L.append("")
    fd = res.get("failover_default")
    if fd:
        L += markdown_failover_default(fd)
    sc = res.get("scale")
    if sc:
        L.append(f"### {sc['agents']} agents (timings {'/'.join(sc['timings'])}, window "
                 f"{sc['window_s']} s)")
        L.append("")
        L.append("| | API QPS | apiserver CPU | etcd CPU | agents' CPU | agents' RSS | "
                 "leaders at the end |")
        L.append("|---|---|---|---|---|---|---|")
        for kind, kn in (("lh", "leasehold"), ("cg", "client-go")):
            for layout, ln in (("one-lock", f"{sc['agents']} on one lock"),
                               ("own-locks", f"{sc['agents']} on {sc['agents']} locks")):
                r = sc.get(f"{kind}_{layout}")
                if r:
                    L.append(f"| {kn}, {ln} | {r['api_qps']} | {r['apiserver_cpu_pct']}% | "
                             f"{r['etcd_cpu_pct']}% | {r['agents_cpu_pct']}% | "
                             f"{r['agents_rss_total_MiB']} MiB | {r['leaders_at_end']} |")
        L.append("")
        if any((sc.get(f"{k}_own-locks") or {}).get("writes_per_leader_hour") is not None
               for k in ("lh", "cg")):
            L.append(f"Idle leaders ({sc['agents']} on their own locks, scaled to 100):")
            L.append("")
            L.append("| | writes per leader-hour | apiserver CPU per 100 leaders | "
                     "etcd CPU per 100 leaders |")
            L.append("|---|---|---|---|")
            for kind, kn in (("lh", "leasehold"), ("cg", "client-go")):
                r = sc.get(f"{kind}_own-locks") or {}
                if r.get("writes_per_leader_hour") is not None:
                    L.append(f"| {kn} | {r['writes_per_leader_hour']:.0f} | "
                             f"{r['apiserver_cpu_pct_per_100_leaders']}% | "
                             f"{r['etcd_cpu_pct_per_100_leaders']}% |")
            L.append("")
    if res.get("fleets"):
        L += markdown_fleets(res["fleets"])
    if res.get("slowapi"):
        L += markdown_slowapi(res["slowapi"])
    if res.get("notes"):
        L.append("Notes: " + "; ".join(res["notes"]))
    return "\n".join(L)


def failover_rows(name, r, froms):
    """The table rows of failover case `r` named `name`: one per (key, label) of `froms` that
    it has figures for (n, min, p50, p99, max)."""
    rows = []
    for frm, label in froms:
        d = r.get(frm)
        if d and d.get("n"):
            rows.append(f"| {name} | {label} | {d['n']} | {d['min']} | {d['p50']} | "
                        f"{d['p99']} | {d['max']} |")
    return rows


def markdown_failover_default(fd):
    L = [f"### Failover at the default timings ({'/'.join(fd['timings'])}, {fd['runs']} runs "
         f"each, signal up to {fd['jitter_s']} s into the renew cycle; seconds)", "",
         "| case | measured from | n | min | p50 | p99 | max |", "|---|---|---|---|---|---|---|"]
    names = {"lh-auto": "leasehold, --renew-interval auto",
             "lh-retry-period": "leasehold, --renew-interval retry-period", "cg": "client-go"}
    modes = {"kill": "SIGKILL", "term-safe": "SIGTERM, safe", "term-immediate":
             "SIGTERM, immediate", "term-release": "SIGTERM, ReleaseOnCancel"}
    for mode, mn in modes.items():
        for tag, tn in names.items():
            r = fd.get(f"{tag}_{mode}")
            if not r:
                continue
            L += failover_rows(f"{tn}, {mn}", r, (
                ("from_signal_s", "the signal"), ("after_last_renew_s", "the last renew before it"),
                ("after_valid_until_s", "the last validUntil given")))
    la = fd.get("loadavg_start"), fd.get("loadavg_end")
    if all(la):
        L.append("")
        L.append(f"Load average at the start {tuple(round(x, 1) for x in la[0])}, at the end "
                 f"{tuple(round(x, 1) for x in la[1])}.")
    L.append("")
    return L


def markdown_fleets(fl):
    L = [f"### Fleets: N locks, a leader and two followers each (timings "
         f"{'/'.join(fl['timings'])}, {fl['warm_s']:.0f} s warm-up, {fl['window_s']:.0f} s "
         "window)", "",
         "| | processes | API QPS | apiserver CPU (net) | etcd CPU (net) | apiserver RSS | "
         "etcd RSS | agents' CPU | agent PSS (mean) | Leases held at the end | leader changes "
         "| load average (1 min, mean) |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, r in fl["runs"].items():
        kn = {"lh": "leasehold", "cg": "client-go"}[r["kind"]]
        b = r["baseline"]
        L.append(f"| {kn}, {r['locks']} locks | {r['alive']} / {r['processes']} | {r['api_qps']} "
                 f"| {r['apiserver_cpu_pct']}% ({r['apiserver_cpu_pct_net']}%) | "
                 f"{r['etcd_cpu_pct']}% ({r['etcd_cpu_pct_net']}%) | "
                 f"{r['apiserver_VmRSS_MiB_mean']} MiB "
                 f"(alone {b['apiserver']['VmRSS'] / 1024:.0f}) | {r['etcd_VmRSS_MiB_mean']} MiB "
                 f"(alone {b['etcd']['VmRSS'] / 1024:.0f}) | "
                 f"{r['agents_cpu_pct']}% | {r['agent_Pss_KiB_mean'] / 1024:.1f} MiB | "
                 f"{r['leases_held_at_end']} / {r['leases']} | {r['leader_changes_in_window']} | "
                 f"{r['loadavg1_mean']} |")
    L.append("")
    return L


def markdown_slowapi(sl):
    names = {"lh-auto": "leasehold auto", "lh-auto-old": "leasehold auto, "
             + (sl.get("old_binary") or {}).get("commit", "old")[:7],
             "lh-retry-period": "leasehold retry-period", "cg": "client-go"}
    L = []
    for rnd, rr in sl["rounds"].items():
        L += [f"### A slow API server, {rnd} (timings {'/'.join(sl['timings'])}, "
              f"{sl['leaders']} leaders each, {rr['window_s']:.0f} s window, load average "
              f"{rr['loadavg1_mean']})", "",
              "| configuration | latency each way | Lease GET through it | renew write (mean) "
              "| leases lost | s without a yes (sum, worst) | Lease writes / min / leader | "
              "failed attempts |", "|---|---|---|---|---|---|---|---|"]
        for r in rr["rows"].values():
            lat = f"{r['latency_each_way_s']:g}"
            L.append(f"| {names.get(r['config'], r['config'])} | {lat} s | "
                     f"{fmt((sl.get('probe_get_s') or {}).get(lat), ' s')} | "
                     f"{fmt(r.get('renew_write_s_mean'), ' s')} | {r['leases_lost']}"
                     + (f" ({r['never_led']} never led)" if r.get("never_led") else "")
                     + f" | {r['no_yes_s']}, {max(r['no_yes_s_each'])} | "
                     f"{r['lease_writes_per_min_per_leader']} | {r['failed_attempts']} |")
        L.append("")
    return L


PHASES = ("idle", "wrk", "failover", "failover_default", "scale", "fleets", "slowapi")
# Full runs only: 10, 40+ and 8 minutes.
NOT_IN_SMOKE = ("failover_default", "fleets", "slowapi")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--smoke", action="store_true", help="CI smoke run (< 2 min)")
    p.add_argument("--phases", default=",".join(PHASES),
                   help="of " + ",".join(PHASES) + "; --smoke skips " + ",".join(NOT_IN_SMOKE))
    p.add_argument("--out", default=None)
    p.add_argument("--idle-window", type=float, default=300)
    p.add_argument("--wrk-seconds", type=int, default=10)
    p.add_argument("--failover-runs", type=int, default=20)
    p.add_argument("--scale-agents", type=int, default=100)
    p.add_argument("--scale-window", type=float, default=60)
    p.add_argument("--fleet-locks", default="100,300",
                   help="fleets: the numbers of locks, each with 3 members")
    p.add_argument("--fleet-warm", type=float, default=180, help="fleets: warm-up, s")
    p.add_argument("--fleet-window", type=float, default=300, help="fleets: window, s")
    p.add_argument("--fleet-kinds", default="lh,cg", help="fleets: lh, cg or both")
    p.add_argument("--fleet-renew-interval", default="auto",
                   help="fleets: leasehold's --renew-interval")
    p.add_argument("--fleet-baseline", type=float, default=60,
                   help="fleets: the control plane alone before the agents, s")
    p.add_argument("--slowapi-latency", default="0.6,0.9,1.25",
                   help="slowapi: the proxies' latencies, s each way")
    p.add_argument("--slowapi-leaders", type=int, default=5,
                   help="slowapi: leaders per configuration and latency")
    p.add_argument("--slowapi-window", type=float, default=120, help="slowapi: window, s")
    p.add_argument("--slowapi-rounds", default="steady,onset",
                   help="slowapi: steady (latency from the start), onset (from the window)")
    p.add_argument("--slowapi-old-bin", default=None,
                   help="slowapi: a leasehold built from another commit, run as "
                        "lh-auto-old (default: $LEASEHOLD_OLD_BIN; none: skipped)")
    a = p.parse_args(argv)
    a.out = a.out or str(REPO / "e2e" / "out" / f"bench-{time.strftime('%Y%m%d-%H%M%S')}")
    phases = a.phases.split(",")
    if a.smoke:
        # The smoke run proves every quick phase produces a figure; these take many minutes.
        phases = [ph for ph in phases if ph not in NOT_IN_SMOKE]
    b = Bench(a)
    t = time.monotonic()
    ok = True
    try:
        b.setup()
        for ph in PHASES:
            if ph in phases:
                log(f"=== phase {ph}")
                getattr(b, f"phase_{ph}")()
    except Exception:  # noqa: BLE001
        import traceback
        traceback.print_exc()
        ok = False
    finally:
        b.teardown()
    b.results["machine"]["loadavg_end"] = os.getloadavg()
    b.results["elapsed_s"] = round(time.monotonic() - t, 1)
    (Path(a.out) / "results.json").write_text(json.dumps(b.results, indent=1, default=str))
    md = markdown(b.results)
    (Path(a.out) / "results.md").write_text(md + "\n")
    print(md)
    log(f"results: {a.out}/results.json, {a.out}/results.md ({b.results['elapsed_s']} s)")
    if a.smoke:
        failed = [] if ok else ["bench raised"]
        idle = b.results.get("idle") or {}
        if "idle" in phases and not idle.get("lh_leader"):
            failed.append("no idle figures")
        fo = b.results.get("failover") or {}
        for k in ("lh_term-immediate", "lh_term-safe", "lh_release-term", "lh_kill"):
            if "failover" in phases and (fo.get(k) or {}).get("from_signal_s", {}).get("n", 0) < 3:
                failed.append(f"failover {k}: fewer than 3 runs")
        for f in failed:
            log(f"SMOKE FAILURE: {f}")
        print(f"{0 if failed else 1} passed, {1 if failed else 0} failed")
        return 1 if failed else 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
