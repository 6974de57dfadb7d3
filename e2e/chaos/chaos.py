#!/usr/bin/env python3
"""Chaos suite: leasehold agents (and client-go peers) on a real etcd + kube-apiserver, faults
from a seed, every agent sampled. How to run and reproduce it, the faults, the figures and what
fails a run: e2e/chaos/README.md (and --help).
"""

import argparse
import collections
import gzip
import http.client
import json
import os
import random
import re
import shutil
import sys
import threading
import time
import traceback
from pathlib import Path

from e2e.lib import analysis, sampler_process
from e2e.lib.faultproxy import ProxyLoop
from e2e.lib.agent import Agent
from e2e.lib.members import Fleet, GoPeer, peer_binary
from e2e.lib.common import REPO, log, parse_rfc3339, start_threads
from e2e.lib.controlplane import ControlPlane, Namespace
from e2e.lib.timings import FAST, Timings

# Every member's timings. LEASEHOLD_CHAOS_TIMINGS=LEASE/RENEW/RETRY (seconds) sets others, e.g.
# 8/6/1, where leasehold's renew-interval (auto: 2.5 s) is longer than its retry-period.
TIMINGS = (Timings(*(float(v) for v in os.environ["LEASEHOLD_CHAOS_TIMINGS"].split("/")))
           if os.environ.get("LEASEHOLD_CHAOS_TIMINGS") else FAST)

SAMPLE_INTERVAL, CLIENT_TIMEOUT = 0.020, 0.150
# The interval the judge's gap rule holds the sampler to (the node tier's): at SAMPLE_INTERVAL, its
# process was up to 67 ms late on a shared 2-core machine (seed 873271377, 5 other jobs), a
# failure of the machine, not of a sampler that stops or looks away, which this still catches.
COVERAGE_INTERVAL = 0.100
LOCK = "chaos-lock"

# kind: (weight, targets the leader with this probability; None: a fault of the control plane)
FAULTS = {
    "kill": (3.0, 0.75), "stop": (2.0, 0.8), "term": (1.5, 0.8), "partition": (2.0, 0.8),
    "latency": (1.5, 0.8), "drip": (1.0, 0.8), "reset": (1.0, 0.6),
    "apiserver-restart": (1.0, None), "etcd-restart": (1.0, None),
    "apiserver-pause": (1.0, None), "conflicts": (1.5, None),
}
# Mixed fleets only (why: README.md, the faults' table).
MIXED_FAULTS = {"isolate-leasehold": (2.0, None)}


class Slot:
    """One place in the driver's Fleet (e2e.lib.members): a proxy of its own in front of the
    apiserver, and the kind of member each incarnation runs ("leasehold" or "clientgo")."""

    def __init__(self, drv, name, kind, release):
        self.drv, self.name, self.kind, self.release = drv, name, kind, release
        self.proxy = drv.loop.proxy(name, drv.cp.host, drv.cp.port)
        self.sa = "leasehold" if kind == "leasehold" else f"peer-{name}"
        if kind != "leasehold":
            # The peer's own ServiceAccount (the audit log tells its writes apart), shipped Roles.
            drv.cp.ensure_sa(drv.ns.name, self.sa)
            for role in ("leasehold", "leasehold-create"):
                drv.cp.kubectl("create", "rolebinding", f"{role}-{self.sa}", f"--role={role}",
                               f"--serviceaccount={drv.ns.name}:{self.sa}", "-n", drv.ns.name)
        self.sa_dir = drv.ns.sa_dir(name, sa=self.sa)
        self.busy = threading.Lock()
        drv.fleet.add(name, self.make, start=False)

    def make(self, identity, port, _generation):
        """The Fleet's factory: this slot's kind of member, its API traffic through the proxy."""
        d = self.drv
        if self.kind == "leasehold":
            return Agent(d.ns, identity, release=self.release, sa_dir=self.sa_dir, port=port,
                         timings=TIMINGS, api=("127.0.0.1", self.proxy.port), logdir=d.logdir)
        return GoPeer(d.ns, identity, timings=TIMINGS,
                      release_on_cancel=self.release == "release-on-cancel",
                      server=f"127.0.0.1:{self.proxy.port}", port=port, sa_dir=self.sa_dir,
                      binary=d.peer_bin, logdir=d.logdir)

    @property
    def member(self):
        return self.drv.fleet.member(self.name)

    @property
    def identities(self):
        return [m.identity for m in self.drv.fleet.members if m.slot == self.name]

    def restart(self, new_identity=True):
        """Stopped and started again: the Fleet's next incarnation (a new identity), or the same."""
        m = self.member
        m.stop()
        if new_identity:
            self.drv.fleet.start(self.name)
        else:
            m.start()

    def says_leader(self):
        """A paused member is left out (its answer would come only once it is resumed)."""
        return self.member not in self.drv.fleet.paused and self.member.view(0.3).is_leader


# ------------------------------------------------------------------------------------ the driver
class Chaos:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.out = Path(args.out)
        if (self.out / "run.json").exists() or (self.out / "samples.txt").exists():
            shutil.rmtree(self.out)  # a previous run's directory
        self.logdir = self.out / "logs"
        self.logdir.mkdir(parents=True, exist_ok=True)
        self.faults = []
        self.faults_lock = threading.Lock()
        self.cp_busy = threading.Lock()
        self.slots = []
        self.fleet = Fleet()
        self.notes = []
        self.peer_bin = None
        self.clock_pairs = []
        threading.Thread(target=self._clock, daemon=True).start()

    def _clock(self):
        """Records (monotonic, wall) pairs: validUntil is wall clock, samples monotonic."""
        while True:
            m0, w = time.monotonic(), time.time()
            self.clock_pairs.append(((m0 + time.monotonic()) / 2, w))
            time.sleep(5.0)

    # ------------------------------------------------------------------ setup
    def setup(self):
        a = self.args
        if a.peers:
            self.peer_bin = peer_binary(required=False)
            if not self.peer_bin:
                raise SystemExit("--peers needs the client-go interop peer (e2e/interop/build.sh)"
                                 " or LEASEHOLD_INTEROP_BIN")
        policy = self.out / "audit-policy.yaml"
        self.audit_log = self.out / "audit.log"
        self.ns_name = f"chaos-{self.args.seed % 100000}-{int(time.time()) % 100000}"
        policy.write_text(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n"
            "- level: RequestResponse\n  namespaces: [\"%s\"]\n"
            "  resources: [{group: coordination.k8s.io, resources: [leases]}]\n"
            "- level: None\n" % self.ns_name)
        extra = (f"--audit-policy-file={policy} --audit-log-path={self.audit_log} "
                 "--audit-log-maxsize=0 --audit-log-format=json")
        self.cp = ControlPlane(None, extra)
        self.cp.start()
        self.ns = Namespace(self.cp, self.ns_name, lock_name=LOCK)
        self.loop = ProxyLoop()
        for i in range(a.agents):
            release = "immediate" if (a.immediate and i == a.agents - 1) else "safe"
            self.slots.append(Slot(self, f"lh{i}", "leasehold", release))
        for i in range(a.peers):
            on = a.peer_release == "on" or (a.peer_release == "mixed" and i % 2 == 1)
            rel = "release-on-cancel" if on else "plain"
            self.slots.append(Slot(self, f"cg{i}", "clientgo", rel))
        self.sampler = sampler_process.Started(self.out / "samples.txt", SAMPLE_INTERVAL,
                                               CLIENT_TIMEOUT, self.fleet.sampler_slots())
        self.t0 = time.monotonic()
        for s in self.slots:
            self.fleet.start(s.name)  # logs what it started

    def leaders(self):
        return [s for s in self.slots if s.says_leader()]

    def wait_leader(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ls = self.leaders()
            if len(ls) == 1:
                return ls[0]
            time.sleep(0.1)
        return None

    # ------------------------------------------------------------------ faults
    def record(self, kind, target, t, params, **kw):
        """Called once the fault is healed: t_heal is now."""
        ev = {"kind": kind, "target": target, "t": t, "params": params,
              "t_heal": time.monotonic(), **kw}
        with self.faults_lock:
            self.faults.append(ev)

    def pick_target(self, p_leader, r):
        """The leader with probability p_leader (by r[0]), else the free slot r[1] picks."""
        free = [s for s in self.slots if not s.busy.locked()]
        if not free:
            return None
        if r[0] < p_leader:
            ls = [s for s in self.leaders() if not s.busy.locked()]
            if ls:
                return ls[0]
        return free[int(r[1] * 1000) % len(free)]

    def run_fault(self, kind, r):
        """r: pre-drawn random numbers (so the fault sequence depends on the seed only)."""
        p_leader = {**FAULTS, **MIXED_FAULTS}[kind][1]
        if p_leader is not None:
            s = self.pick_target(p_leader, r)
            if s is None or not s.busy.acquire(blocking=False):
                return
            try:
                was_leader = s.says_leader()
                getattr(self, "f_" + kind.replace("-", "_"))(s, r, was_leader)
            finally:
                s.busy.release()
        else:
            if not self.cp_busy.acquire(blocking=False):
                return
            try:
                if kind.endswith("-restart"):
                    self.f_restart(kind.removesuffix("-restart"))
                else:
                    getattr(self, "f_" + kind.replace("-", "_"))(r)
            finally:
                self.cp_busy.release()

    def hold(self, kind, target, dur, start, end, params, **kw):
        """start(), `dur` s, end(), then recorded (kw: the record's own fields)."""
        t = time.monotonic()
        start()
        time.sleep(dur)
        end()
        self.record(kind, target, t, params, **kw)

    def f_kill(self, s, r, was_leader):
        delay, same = 0.5 + 4.5 * r[2], r[3] < 0.3
        self.hold("kill", s.name, delay, s.member.kill, lambda: s.restart(new_identity=not same),
                  {"restart_after_s": round(delay, 2), "same_identity": same},
                  identity=s.member.identity, was_leader=was_leader)

    def f_term(self, s, r, was_leader):
        delay = 0.5 + 3 * r[2]
        old = s.member.identity
        t = time.monotonic()
        s.member.term()
        rc = s.member.wait(TIMINGS.renew + 8)
        note = None
        if rc is None:
            note = f"did not exit within {TIMINGS.renew + 8}s of SIGTERM; killed"
            self.notes.append(f"{s.name} ({old}): {note}")
            s.member.kill()
        t_exit = time.monotonic()
        time.sleep(delay)
        s.restart()
        self.record("term", s.name, t, {"restart_after_s": round(delay, 2),
                                        "release": s.release},
                    identity=old, was_leader=was_leader, exit_code=rc,
                    exit_after_s=round(t_exit - t, 3), note=note)

    def f_stop(self, s, r, was_leader):
        dur = TIMINGS.lease + 0.5 + 2.5 * r[2]
        m = s.member
        self.hold("stop", s.name, dur, lambda: self.fleet.pause(m), lambda: self.fleet.resume(m),
                  {"paused_s": round(dur, 2)}, identity=m.identity, was_leader=was_leader)

    def proxy_fault(self, kind, s, was_leader, apply, dur, params):
        """apply() on slot s's proxy, held `dur` s, then healed."""
        self.hold(kind, s.name, dur, apply, lambda: self.loop.heal(s.proxy), params,
                  identity=s.member.identity, was_leader=was_leader)

    def f_partition(self, s, r, was_leader):
        dur = 2 + 8 * r[2]
        self.proxy_fault("partition", s, was_leader, lambda: self.loop.blackhole(s.proxy), dur,
                         {"blackhole_s": round(dur, 2)})

    def f_latency(self, s, r, was_leader):
        lat, dur = TIMINGS.renew + 0.2 + 1.8 * r[2], 4 + 6 * r[3]
        self.proxy_fault("latency", s, was_leader, lambda: self.loop.latency(s.proxy, lat), dur,
                         {"one_way_s": round(lat, 2), "for_s": round(dur, 2)})

    def f_drip(self, s, r, was_leader):
        per_byte, dur = 0.002 + 0.018 * r[2], 3 + 5 * r[3]
        self.proxy_fault("drip", s, was_leader, lambda: self.loop.drip(s.proxy, per_byte), dur,
                         {"s_per_byte": round(per_byte, 4), "for_s": round(dur, 2)})

    def f_reset(self, s, r, was_leader):
        dur = 0 if r[2] < 0.4 else 4 * r[3]
        self.proxy_fault("reset", s, was_leader, lambda: self.loop.reset(s.proxy, dur), dur,
                         {"refuse_new_s": round(dur, 2)})

    def f_restart(self, component):
        """apiserver-restart, etcd-restart: `component` stopped and started again."""
        t = time.monotonic()
        try:
            self.cp.restart(component)
            note = None
        except RuntimeError as e:
            note = f"restart failed: {str(e)[-300:]}"
            self.notes.append(note)
        self.record(f"{component}-restart", component, t, {}, note=note)

    def f_apiserver_pause(self, r):
        dur = 1 + 5 * r[2]
        self.hold("apiserver-pause", "apiserver", dur,
                  lambda: self.cp._sh("pause-apiserver", str(self.cp.dir)),
                  lambda: self.cp._sh("resume-apiserver", str(self.cp.dir)),
                  {"paused_s": round(dur, 2)})

    def f_isolate_leasehold(self, r):
        dur = TIMINGS.lease + 1 + 3 * r[2]
        lh = [x.proxy for x in self.slots if x.kind == "leasehold"]
        t = time.monotonic()
        for p in lh:
            self.loop.blackhole(p)
        time.sleep(dur)
        for p in lh:
            self.loop.heal(p)
        self.record("isolate-leasehold", "all leasehold", t, {"blackhole_s": round(dur, 2)})

    def f_conflicts(self, r):
        """Concurrent writers that bump the lease's resourceVersion without touching its spec
        (an annotation changes), so every agent's next conditional write gets 409."""
        dur, writers = 1 + 4 * r[2], 3 + int(3 * r[3])
        path = f"/apis/coordination.k8s.io/v1/namespaces/{self.ns_name}/leases/{LOCK}"
        counts = collections.Counter()
        lock = threading.Lock()
        stop = time.monotonic() + dur

        def writer(k):
            n = 0
            while time.monotonic() < stop:
                try:
                    st, obj = self.cp.request("GET", path, timeout=3.0)
                    if st != 200 or not isinstance(obj, dict):
                        code = f"get-{st}"
                    else:
                        n += 1
                        ann = obj["metadata"].setdefault("annotations", {})
                        ann["chaos.leasehold.test/writer"] = f"{k}-{n}"
                        code, _ = self.cp.request("PUT", path, obj, timeout=3.0)
                except (OSError, http.client.HTTPException) as e:
                    code = type(e).__name__
                with lock:
                    counts[str(code)] += 1
        t = time.monotonic()
        for th in start_threads(writer, [(k,) for k in range(writers)]):
            th.join(dur + 10)
        self.record("conflicts", "lease", t, {"writers": writers, "for_s": round(dur, 2)},
                    results=dict(counts))

    # ------------------------------------------------------------------ the run
    def run(self):
        a = self.args
        first = self.wait_leader(40)
        log(f"first leader {first and first.name} after {time.monotonic() - self.t0:.1f}s")
        if not first:
            self.notes.append("no leader within 40 s of the start")
        self.t_chaos = time.monotonic()
        t_end = self.t_chaos + a.duration
        mixed = any(x.kind == "clientgo" for x in self.slots)
        table = {**FAULTS, **(MIXED_FAULTS if mixed else {})}
        kinds, weights = list(table), [w for w, _ in table.values()]
        threads = []
        last_report = time.monotonic()
        while time.monotonic() < t_end:
            gap = a.gap_min + (a.gap_max - a.gap_min) * self.rng.random()
            kind = self.rng.choices(kinds, weights)[0]
            r = [self.rng.random() for _ in range(4)]
            if self.rng.random() >= a.concurrency:  # else it may start while others run
                for th in threads:
                    th.join()
            time.sleep(gap)
            if time.monotonic() >= t_end:
                break
            threads = [th for th in threads if th.is_alive()]
            threads += start_threads(self._fault_thread, [(kind, r)])
            if time.monotonic() - last_report > 60:
                last_report = time.monotonic()
                log(f"{time.monotonic() - self.t_chaos:.0f}s: {len(self.faults)} faults done")
        for th in threads:
            th.join(60)
        self.t_chaos_end = time.monotonic()
        log(f"chaos over: {len(self.faults)} faults in {self.t_chaos_end - self.t_chaos:.0f}s")
        self.heal_all()
        self.t_healed = time.monotonic()
        timeout = TIMINGS.lease * 4 + 10
        final = self.wait_leader(timeout)
        self.final_leader = final.name if final else None
        if not final:
            self.notes.append(f"no single leader within {timeout:g} s after every fault was healed")
        log(f"after healing: leader {self.final_leader} in {time.monotonic() - self.t_healed:.1f}s")
        time.sleep(3)

    def _fault_thread(self, kind, r):
        try:
            self.run_fault(kind, r)
        except Exception as e:  # noqa: BLE001 - a failed fault is reported, the run goes on
            self.notes.append(f"fault {kind} raised {e!r}")
            traceback.print_exc()

    def heal_all(self):
        for s in self.slots:
            self.loop.heal(s.proxy)
            if s.member.alive():
                self.fleet.resume(s.member)
            else:
                s.restart()
        if not self.cp._sh("status", str(self.cp.dir), check=False).returncode == 0:
            self.notes.append("control plane not running at the end; restarting the apiserver")
            self.cp._sh("resume-apiserver", str(self.cp.dir), check=False)

    def teardown(self):
        if getattr(self, "sampler", None):
            self.sampler.stop()
        for m in self.fleet.current():
            try:
                m.stop()
            except Exception:  # noqa: BLE001
                pass
        if getattr(self, "loop", None):
            self.loop.close()
        if getattr(self, "cp", None):
            for f in ("apiserver.log", "etcd.log"):
                p = self.cp.dir / f
                if p.exists():
                    shutil.copy(p, self.logdir / f)
            self.cp.stop()
        if getattr(self, "ns", None):
            shutil.rmtree(self.ns.tmp, ignore_errors=True)

    def save_meta(self):
        meta = {
            "seed": self.args.seed, "argv": sys.argv, "namespace": self.ns_name,
            "duration": self.args.duration, "t0": self.t0, "t_chaos": self.t_chaos,
            "t_chaos_end": self.t_chaos_end, "t_healed": self.t_healed,
            "final_leader": self.final_leader, "clock_pairs": self.clock_pairs,
            "notes": self.notes, "timings": TIMINGS.strings(), "interval": SAMPLE_INTERVAL,
            "client_timeout": CLIENT_TIMEOUT,
            "slots": [{"name": s.name, "kind": s.kind, "release": s.release,
                       "identities": s.identities, "sa": s.sa,
                       "proxy_stats": dict(s.proxy.stats)} for s in self.slots],
            "faults": sorted(self.faults, key=lambda f: f["t"]),
        }
        (self.out / "run.json").write_text(json.dumps(meta, indent=1, default=str))
        return meta


# ------------------------------------------------------------------------------------ the report
def audit_summary(path, ns):
    """Requests per user/verb/code from the apiserver's audit log, and every write of holder ""
    with the holder it overwrote (for foreign_releases)."""
    path = Path(path)
    if not path.exists():
        path = path.with_name(path.name + ".gz")  # compressed once the run was over
    if not path.exists():
        return {}
    by = collections.Counter()
    holder_at_rv = {}
    releases = []
    events = []
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", errors="replace") as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            ref = e.get("objectRef") or {}
            if e.get("stage") != "ResponseComplete" or ref.get("namespace") != ns:
                continue
            user = (e.get("user") or {}).get("username", "?").rsplit(":", 1)[-1]
            by[f"{user} {e.get('verb')} {(e.get('responseStatus') or {}).get('code')}"] += 1
            events.append(e)
    for e in events:
        resp = e.get("responseObject") or {}
        if resp.get("kind") == "Lease":
            holder_at_rv[resp["metadata"].get("resourceVersion")] = (
                resp.get("spec") or {}).get("holderIdentity") or ""
    for e in events:
        req = e.get("requestObject") or {}
        code = (e.get("responseStatus") or {}).get("code")
        if (e.get("verb") != "update" or req.get("kind") != "Lease" or code != 200
                or (req.get("spec") or {}).get("holderIdentity")):
            continue
        prev = holder_at_rv.get((req.get("metadata") or {}).get("resourceVersion"))
        releases.append({"user": (e.get("user") or {}).get("username"),
                         "time": e.get("stageTimestamp"), "overwrote_holder": prev,
                         "rv": req["metadata"].get("resourceVersion")})
    return {"requests": dict(sorted(by.items())), "releases": releases}


def log_lines(out, needle):
    """[(log file's stem, line)] of the run's logs (agents, apiserver, etcd) that hold `needle`."""
    return [(p.stem, line) for p in sorted((Path(out) / "logs").glob("*.log"))
            for line in p.read_text(errors="replace").splitlines() if needle in line]


def foreign_releases(out, slots, aud):
    """Release writes by a member that no longer held the lock (client-go's release race), from
    the audit log or the peers' own RELEASE-RACE lines. `time`: when the lease was blanked."""
    ident_of_sa = {}
    for s in slots:
        ident_of_sa.setdefault(s["sa"], set()).update(s["identities"])
    foreign = [r for r in aud.get("releases", []) if r["overwrote_holder"] not in
               ident_of_sa.get((r["user"] or "").rsplit(":", 1)[-1], set()) | {"", None}]
    for stem, line in log_lines(out, "RELEASE-RACE"):
        m = re.search(r'RELEASE-RACE .* BLANKED \S+ held by "([^"]*)"', line)
        if m and not any(r.get("overwrote_holder") == m.group(1) for r in foreign):
            at = re.search(r" at (\S+Z)$", line)
            foreign.append({"user": stem, "overwrote_holder": m.group(1),
                            "time": at and at.group(1), "source": "peer log", "line": line[:300]})
    return foreign


def classify(ovs, kinds, foreign, t0):
    """The sampler's overlaps [(span, span)], each with why (README.md, "Client-go peers")."""
    out = []
    for a, b in ovs:
        old, new = (a, b) if a["start"] <= b["start"] else (b, a)
        why = "leasehold"
        if kinds.get(old["slot"]) == "clientgo":
            why = "client-go stale leader (client-go's yes is not time-bounded)"
        elif any(r["overwrote_holder"] == old["identity"] for r in foreign):
            why = "client-go release race (a client-go peer blanked this leader's lease)"
        elif foreign:
            why = "leasehold (check: a foreign release happened during the run)"
        lo, hi = max(a["start"], b["start"]), min(a["end"], b["end"])
        out.append({"why": why, "overlap_s": round(hi - lo, 4),
                    "at_s": [round(lo - t0, 3), round(hi - t0, 3)],
                    "old": analysis.fmt_span(old, t0), "new": analysis.fmt_span(new, t0)})
    return out


def promise_findings(claim, kinds, term_imm, blanked, to_wall, t0):
    """The promise rule as every tier judges it (README.md, "promise violations"). term_imm: {slot:
    [SIGTERMs with `immediate`]}; blanked: identities whose lease a client-go peer blanked (also
    given up). Returns the report's fields."""
    listed, counts = [], collections.Counter()
    for p in analysis.promise_violations({}, claim, [], term_imm, to_wall):
        race = p["old"]["identity"] in blanked
        if kinds.get(p["old"]["slot"]) == "leasehold" and not (
                p["exempt_immediate_release"] or race):
            counts[p["definite"]] += 1
        listed.append({"old": analysis.fmt_span(p["old"], t0),
                       "new": analysis.fmt_span(p["new"], t0), "by_s": p["by_s"],
                       "definite": p["definite"],
                       "exempt_immediate_release": p["exempt_immediate_release"],
                       "client_go_release_race": race})
    return {"promise_violations_leasehold": counts[True],
            "promise_possible_leasehold": counts[False], "promise_violations": listed}


def overtaken(out, meta, kinds, foreign, term_imm, to_wall):
    """leasehold_promise_overtaken_total moved (elector.cpp, "Promises overtaken"): each logged
    line fails the run, unless it follows its own `immediate` release or a client-go peer's
    blanking of its lease by at most renew-deadline (its promise's reach past its last renew) +
    retry-period (its next read of the record). Returns the report's fields."""
    slot_of = {i: s["name"] for s in meta["slots"] for i in s["identities"]}  # logs: IDENTITY.log
    given_up = [(r["overwrote_holder"], r.get("time") and parse_rfc3339(r["time"]))
                for r in foreign]
    given_up += [(i, to_wall(t)) for i, slot in slot_of.items() for t in term_imm.get(slot, [])]
    logged, unexplained = set(), []
    for ident, line in log_lines(out, "took the lock while this replica's promise to lead runs"):
        logged.add(ident)
        t = parse_rfc3339(line.split(" ", 1)[0])
        if kinds.get(slot_of.get(ident)) == "leasehold" and not any(
                i == ident and tg is not None and tg <= t <= tg + TIMINGS.renew + TIMINGS.retry
                for i, tg in given_up):
            unexplained.append(line[:300])
    return {"promise_overtaken_logged": sorted(logged),
            "promise_overtaken_leasehold": unexplained}


# The timeline's marks (timeline.txt); the faults' in FAULTS' order.
MARKS = "# leads, ~ said yes late, ! no leader, X overlap"
FAULT_MARKS = dict(zip({**FAULTS, **MIXED_FAULTS}, "kstpldrAEPcI"))


def timeline(rows, t1, width=100):
    """rows [(label, [(start, end, mark)])], seconds from the run's start, as text: one
    character a second (a later bar draws over an earlier one), in strips of `width` s."""
    n = int(t1) + 1
    grid = []
    for label, bars in rows:
        cells = [" "] * n
        for a, b, mark in bars:
            i, j = min(n, max(0, int(a))), min(n, int(b) + 1)
            cells[i:j] = mark * (j - i)
        grid.append((label, cells))
    lines = []
    for k in range(0, n, width):
        lines.append(f"{'':14}|{k}s")
        lines += [f"{label:14}|{''.join(cells[k:k + width])}" for label, cells in grid]
    return "\n".join(lines) + "\n"


def dists(pairs):
    """{key: analysis.dist of its values} of [(key, value)], keys sorted."""
    by = {}
    for k, v in pairs:
        by.setdefault(k, []).append(v)
    return {k: analysis.dist(v) for k, v in sorted(by.items())}


def report(out, meta=None):
    out = Path(out)
    meta = meta or json.loads((out / "run.json").read_text())
    samples = analysis.load_samples(out / "samples.txt")
    t0, tc, te = meta["t0"], meta["t_chaos"], meta["t_chaos_end"]
    kinds = {s["name"]: s["kind"] for s in meta["slots"]}
    claim = analysis.spans(samples, by_term=False)
    lead = analysis.spans(samples, meta["client_timeout"])
    t_last = max((s[1] for ss in samples.values() for s in ss), default=te)
    to_wall = analysis.mono_to_wall_fn(meta["clock_pairs"])
    # Non-vacuity (a gap is the sampler's: it asks on its own clock whatever the agent does).
    uncovered, judged = analysis.coverage(samples, tc, te, COVERAGE_INTERVAL)
    first_lead = min((s["start"] for ss in lead.values() for s in ss), default=tc)
    no_leader, gaps = analysis.leaderless(lead, first_lead, t_last)
    hand = analysis.handovers(lead)
    faults = meta["faults"]
    ff = analysis.fault_failovers(lead, faults)
    aud = audit_summary(out / "audit.log", meta.get("namespace") or "")
    foreign = foreign_releases(out, meta["slots"], aud)
    term_imm = {}
    for f in faults:
        if f["kind"] == "term" and f["params"].get("release") == "immediate":
            term_imm.setdefault(f["target"], []).append(f["t"])
    classified = classify(analysis.overlaps(samples, to_wall), kinds, foreign, t0)

    def cause(end):
        """The last fault injected by `end` and healed at most 15 s before it, or "none"."""
        return next((f["kind"] for f in reversed(faults) if f["t"] <= end + 0.05
                     and (f.get("t_heal") or f["t"]) >= end - 15), "none")

    late_yes = sum(1 for ss in samples.values() for s in ss
                   if s[3] and s[1] - s[0] > meta["client_timeout"])
    rtts = [1000 * (s[1] - s[0]) for ss in samples.values() for s in ss if s[2] == 200]
    rep = {
        "seed": meta["seed"], "duration_s": round(te - tc, 1),
        "agents": dict(collections.Counter(kinds.values())),
        "faults": len(faults),
        "faults_by_kind": dict(collections.Counter(f["kind"] for f in faults)),
        "samples": sum(len(v) for v in samples.values()), "late_yes_answers": late_yes,
        "answer_rtt_ms": analysis.dist(rtts),
        "overlaps_total": len(classified), "overlaps": classified,
        "overlaps_leasehold": sum(c["why"].startswith("leasehold") for c in classified),
        **promise_findings(claim, kinds, term_imm, {r["overwrote_holder"] for r in foreign},
                           to_wall, t0),
        "leader_changes": len(hand),
        "handover_gap_s": analysis.dist([g for _, _, g in hand]),
        "handover_gap_by_fault_s": dists((cause(a["end"]), g) for a, _, g in hand),
        "fault_to_new_leader_s": analysis.dist([x[3] for x in ff]),
        "fault_to_new_leader_by_kind_s": dists((f["kind"], secs) for f, _, _, secs in ff),
        "leaderless_s": round(no_leader, 2),
        "leaderless_fraction": round(no_leader / max(1e-9, t_last - first_lead), 4),
        "longest_leaderless_s": round(max((b - a for a, b in gaps), default=0), 2),
        "final_leader": meta["final_leader"], "notes": meta["notes"],
        "foreign_releases": foreign, "api_requests": aud.get("requests", {}),
        **overtaken(out, meta, kinds, foreign, term_imm, to_wall),
        "coverage_failures": [m for _, m in uncovered], "slots_judged": judged,
    }
    (out / "report.json").write_text(json.dumps(rep, indent=1, default=str))

    rows = []
    for s in meta["slots"]:
        late = [(x["start"] - t0, x["end"] - t0, "~") for x in claim.get(s["name"], [])]
        led = [(x["start"] - t0, x["end"] - t0, "#") for x in lead.get(s["name"], [])]
        rows.append((f"{s['name']} {s['kind']}", late + led))
    rows.append(("no leader", [(a - t0, b - t0, "!") for a, b in gaps]))
    rows.append(("faults", [(f["t"] - t0, (f.get("t_heal") or f["t"]) - t0,
                             FAULT_MARKS[f["kind"]]) for f in faults]))
    rows.append(("overlaps", [(*c["at_s"], "X") for c in classified]))
    legend = ", ".join(f"{m} {k}" for k, m in FAULT_MARKS.items())
    (out / "timeline.txt").write_text(f"leasehold chaos seed {meta['seed']}: {MARKS}; faults: "
                                      f"{legend}\n" + timeline(rows, t_last - t0))
    return rep


def print_report(rep, out):
    """The report's headlines, then every overlap, promise break and promise overtaken."""
    for key in ("seed", "faults_by_kind", "samples", "answer_rtt_ms", "late_yes_answers",
                "overlaps_leasehold", "overlaps_total", "promise_violations_leasehold",
                "promise_possible_leasehold", "promise_overtaken_logged", "slots_judged",
                "coverage_failures", "leader_changes", "handover_gap_s", "fault_to_new_leader_s",
                "fault_to_new_leader_by_kind_s", "leaderless_s", "longest_leaderless_s",
                "final_leader", "notes"):
        log(f"{key}: {rep[key]}")
    for key in ("overlaps", "promise_violations", "promise_overtaken_leasehold"):
        for finding in rep[key]:
            log(f"  {key}: {finding}")
    log(f"report: {out}/report.json, timeline: {out}/timeline.txt")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--long", action="store_true", default=os.environ.get(
        "LEASEHOLD_CHAOS_LONG") == "1", help="30 minutes of faults")
    p.add_argument("--duration", type=float, help="seconds of faults (short 120, long 1800)")
    p.add_argument("--seed", type=int, default=int(os.environ.get(
        "LEASEHOLD_CHAOS_SEED") or random.SystemRandom().randrange(1, 2**31)))
    p.add_argument("--agents", type=int, default=5)
    p.add_argument("--peers", type=int, default=0, help="client-go peers (e2e/interop)")
    p.add_argument("--peers-if-available", type=int, default=None, metavar="N",
                   help="N client-go peers if e2e/interop builds, else none (said in the log)")
    p.add_argument("--peer-release", choices=("off", "on", "mixed"), default="off",
                   help="client-go peers with ReleaseOnCancel (on), without (off), or half/half")
    p.add_argument("--immediate", action=argparse.BooleanOptionalAction, default=True,
                   help="the last leasehold agent uses --release-on-shutdown=immediate "
                        "(the others safe); --no-immediate: all safe")
    p.add_argument("--gap-min", type=float, default=2.0)
    p.add_argument("--gap-max", type=float, default=7.0)
    p.add_argument("--concurrency", type=float, default=0.15,
                   help="probability that a fault starts while the previous one still runs")
    p.add_argument("--out", default=None)
    p.add_argument("--replay", default=None, help="re-analyse a finished run directory")
    a = p.parse_args(argv)
    if a.replay:
        return verdict(a.replay)
    if a.duration is None:
        a.duration = 1800.0 if a.long else 120.0
    if a.peers_if_available and peer_binary(required=False):  # else it logs why not
        a.peers = a.peers_if_available
    a.out = a.out or str(REPO / "e2e" / "out" / f"chaos-{time.strftime('%Y%m%d-%H%M%S')}-"
                                                 f"seed{a.seed}")
    log(f"chaos: seed {a.seed}, out {a.out}; reproduce: {sys.executable} -m e2e.chaos.chaos "
        f"--seed {a.seed} --duration {a.duration:.0f} --agents {a.agents} --peers {a.peers} "
        f"--peer-release {a.peer_release}" + ("" if a.immediate else " --no-immediate"))
    drv = Chaos(a)
    try:
        drv.setup()
        drv.run()
    finally:
        drv.teardown()
    status = verdict(drv.out, drv.save_meta())
    if drv.audit_log.exists():
        with open(drv.audit_log, "rb") as src, gzip.open(str(drv.audit_log) + ".gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
        drv.audit_log.unlink()
    return status


def verdict(out, meta=None):
    """Reports the run in `out` and prints it; the exit status (1: failed)."""
    rep = report(out, meta)
    print_report(rep, out)
    bad = failed(rep)
    print(f"{0 if bad else 1} passed, {1 if bad else 0} failed")
    return 1 if bad else 0


def failed(rep):
    """The verdict (README.md, the exit status); an agent's logged witness is definite. A run
    whose faults moved the lock not once judged no promise: it fails too."""
    return bool(rep["overlaps_leasehold"] or rep["promise_violations_leasehold"] or
                rep["promise_overtaken_leasehold"] or rep["coverage_failures"] or
                rep["final_leader"] is None or (rep["faults"] and not rep["leader_changes"]))


if __name__ == "__main__":
    sys.exit(main())
