#!/usr/bin/env python3
"""e2e scenarios for `leasehold gate -- CMD` on a real etcd + kube-apiserver.

Two "pods", each a leasehold sidecar (--release-on-shutdown=safe, as the manifests run it with a
gate) and `leasehold gate` running a program that appends "POD PID TIMESTAMP" to one shared file
every 20 ms and ignores SIGTERM (so every stop ends in SIGKILL). Each scenario leads with one pod,
applies one fault (to the one process it names), waits for the other pod's program to run, and
then checks, from the shared file and the gates' logs:

  * the pods' run intervals never overlap;
  * every line a program wrote came before the validUntil its gate had last received by then,
    and so did the end of its process tree (the gate's "stopping -> ..." line).
"""

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from e2e.lib.common import (leasehold_binary, measured, parse_rfc3339, terminate, text_of,
                            wait_until)
from e2e.lib.controlplane import Namespace
from e2e.lib.runner import Registry, Scenario
from e2e.lib.timings import FAST
from e2e.lib.faultproxy import ProxyLoop

SCENARIOS = Registry()
scenario = SCENARIOS.add
GRACE = "500ms"  # at most (FAST.renew - FAST.retry) / 2 - 250ms: docs/gate.md

PROGRAM = ("trap '' TERM; "
           "while :; do echo \"$POD $$ $(date +%s.%N)\" >> \"$SHARED\"; sleep 0.02; done")
# The same, with a child that leaves the process group (setsid) and appends as POD-daemon.
PROGRAM_SETSID = (
    "trap '' TERM; "
    "setsid sh -c 'trap \"\" TERM; while :; do echo \"$POD-daemon $$ $(date +%s.%N)\" "
    ">> \"$SHARED\"; sleep 0.02; done' & "
    "while :; do echo \"$POD $$ $(date +%s.%N)\" >> \"$SHARED\"; sleep 0.02; done")


class Pod:
    """A sidecar agent and the gate in front of the program, as one pod runs them."""

    def __init__(self, s, ns, name, shared, program=PROGRAM, agent_env=None):
        self.name = name
        self.agent = s.agent(ns, name, release="safe", env=agent_env)
        self.gate_log = ns.tmp / f"{name}-gate.log"
        self.status = ns.tmp / f"{name}-gate.json"
        self.args = [leasehold_binary(), "gate", f"--address=127.0.0.1:{self.agent.port}",
                     f"--stop-grace={GRACE}", f"--status-file={self.status}", "--log-level=debug",
                     "--", "/bin/sh", "-c", program]
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("LEASEHOLD_")}
        self.env.update(POD=name, SHARED=str(shared))
        self.gate = None
        self.seen_pids = set()  # of its program's processes, as check_pods found them
        s.pods.append(self)

    def start(self):
        self.agent.start()
        self._logf = open(self.gate_log, "ab")
        self.gate = subprocess.Popen(self.args, env=self.env, stdout=self._logf,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def owns(self, pid):
        """Whether process `pid` runs this pod's program now: its environment names this pod and
        its shared file (the program and its children inherit both from start)."""
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            return False
        return (f"POD={self.name}".encode() in env
                and f"SHARED={self.env['SHARED']}".encode() in env)

    def gate_text(self):
        return text_of(self.gate_log)

    def stop(self):
        terminate(self.gate, 5)
        self.agent.stop()
        # Anything the program left (a setsid child of a gate that was SIGKILLed) by its pid, if
        # that pid is still this pod's program: a pid seen long ago may since belong to anyone
        # (another test's agent or apiserver, when tests run side by side).
        for pid in filter(self.owns, self.seen_pids):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


class GateScenario(Scenario):
    def __init__(self, name):
        super().__init__(name)
        self.pods = []

    def __exit__(self, exc_type, exc, tb):
        for p in self.pods:
            p.stop()
        if exc_type is not None:
            for p in self.pods:
                print(f"----- gate log of {p.name} (last 40 lines)")
                print("\n".join(p.gate_text().splitlines()[-40:]))
        return super().__exit__(exc_type, exc, tb)


def lines_of(shared):
    """[(pod, pid, wall ts)] of complete lines."""
    out = []
    for line in text_of(shared).splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        try:
            out.append((parts[0].removesuffix("-daemon"), int(parts[1]), float(parts[2])))
        except ValueError:
            continue
    return out


def intervals(lines, gap=0.25):
    """Per pod, merged [first, last] spans of its lines (a new span after `gap` s of silence)."""
    out = {}
    for pod, _, t in sorted(lines, key=lambda x: x[2]):
        spans = out.setdefault(pod, [])
        if spans and t - spans[-1][1] <= gap:
            spans[-1][1] = t
        else:
            spans.append([t, t])
    return out


def gate_log_entries(text):
    """[(wall ts, message)] of a gate's log."""
    out = []
    for line in text.splitlines():
        parts = line.split(" ", 2)
        if len(parts) < 3:
            continue
        try:
            out.append((parse_rfc3339(parts[0]), parts[2]))
        except ValueError:
            continue
    return out


def yeses(entries):
    """[(received wall ts, validUntil wall ts or None for a no/loss)] in order."""
    out = []
    for ts, msg in entries:
        if msg.startswith(("gate: event: leader,", "gate: GET /leader: leader,")):
            out.append((ts, float(msg.split("validUntil ", 1)[1].split(" ", 1)[0])))
        elif msg.startswith(("gate: event: not leader", "gate: GET /leader: not leader")):
            out.append((ts, None))
    return out


def last_valid_until(ys, t):
    """The validUntil of the newest yes received at or before t (None if none)."""
    best = None
    for ts, vu in ys:
        if ts > t:
            break
        if vu is not None:
            best = vu
    return best


def check_pods(pods, shared, what=None):
    """The two checks of the module docstring; with `what`, logs the worst margins."""
    lines = lines_of(shared)
    for p in pods:
        p.seen_pids = {pid for pod, pid, _ in lines if pod == p.name}
    iv = intervals(lines)
    for a, b in itertools.combinations(sorted(iv), 2):
        for s1 in iv[a]:
            for s2 in iv[b]:
                assert not (s1[0] <= s2[1] and s2[0] <= s1[1]), f"overlap: {a} {s1} and {b} {s2}"
    line_margins, tree_margins = [], []
    for p in pods:
        entries = gate_log_entries(p.gate_text())
        ys = yeses(entries)
        for pod, _, t in lines:
            if pod != p.name:
                continue
            vu = last_valid_until(ys, t)
            # Log lines have ms resolution: the yes may be logged up to 1 ms after the start.
            if vu is None:
                vu = last_valid_until(ys, t + 0.002)
            assert vu is not None, f"{pod} ran at {t} without any yes received"
            margin = vu - t
            assert margin > 0, f"{pod} ran at {t}, {-margin:.3f}s after its validUntil {vu}"
            line_margins.append(margin)
        # Each stop: from "running -> stopping" to the tree gone ("stopping -> ...").
        stop_began = None
        for ts, msg in entries:
            if msg.startswith("gate: running -> stopping"):
                stop_began = ts
            elif msg.startswith("gate: stopping -> ") and stop_began is not None:
                vu = last_valid_until(ys, stop_began)
                margin = vu - ts
                assert margin > 0, f"{p.name}: tree gone {-margin:.3f}s after validUntil {vu}"
                tree_margins.append(margin)
                stop_began = None
    if what:
        measured(f"{what}: worst margin before validUntil: last line {min(line_margins):.3f}s, "
                 f"process tree gone {min(tree_margins):.3f}s; overlaps 0; runs "
                 + ", ".join(f"{k}={len(v)}" for k, v in sorted(iv.items())))


def running_pod(pods, shared, after=0.0):
    """The pod whose program wrote the newest line after `after`, if any."""
    newest = max((x for x in lines_of(shared) if x[2] > after), key=lambda x: x[2], default=None)
    return newest and next(p for p in pods if p.name == newest[0])


def first_line_of(shared, pod, after):
    return min((t for p, _, t in lines_of(shared) if p == pod.name and t > after), default=None)


def last_line_of(shared, pod):
    return max((t for p, _, t in lines_of(shared) if p == pod.name), default=None)


def two_pods(s, name, program=PROGRAM, proxied=False):
    cp = s.control_plane()
    ns = Namespace(cp, f"e2e-gate-{name.replace('_', '-')}")
    shared = ns.tmp / "shared.log"
    envs, proxies = [None, None], []
    if proxied:
        s.proxies = ProxyLoop()
        s.at_exit(s.proxies.close)
        proxies = [s.proxies.proxy(f"p{i}", cp.host, cp.port) for i in range(2)]
        envs = [{"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(px.port)}
                for px in proxies]
    pods = [Pod(s, ns, f"{ns.name}-{x}", shared, program, env).start()
            for x, env in zip("ab", envs)]
    leader = wait_until(lambda: running_pod(pods, shared), 20, what="one program to run")
    time.sleep(1.0)  # a second of work
    other = next(p for p in pods if p is not leader)
    return pods, shared, leader, other, proxies


def failover(pods, shared, old, new, t_fault, what, timeout=FAST.lease * 3 + 5):
    """Waits for `new`'s program; checks and reports."""
    wall_fault = time.time() - (time.monotonic() - t_fault)
    first = wait_until(lambda: first_line_of(shared, new, wall_fault), timeout,
                       what=f"{new.name}'s program to run after {what}")
    time.sleep(0.5)
    old_last = last_line_of(shared, old)
    measured(f"{what}: failover {first - wall_fault:.2f}s (fault to the new program's first line), "
             f"gap {first - old_last:.2f}s (old program's last line to the new one's first), "
             f"old program's last line {old_last - wall_fault:+.2f}s after the fault")
    check_pods(pods, shared, what)
    return first - wall_fault


@scenario
def kill_sidecar(s):
    """kill -9 of the leader's sidecar: its gate loses the stream and stops the program at once; the
    other pod takes over at expiry. The restarted sidecar's gate then follows."""
    pods, shared, old, new, _ = two_pods(s, "kill_sidecar")
    t = time.monotonic()
    old.agent.kill()
    failover(pods, shared, old, new, t, "kill -9 of the leader's sidecar")
    assert "lost" in old.gate_text() or "ended" in old.gate_text() or "refused" in old.gate_text()
    old.agent.start()
    wait_until(lambda: '"sidecar":"streaming"' in old.status.read_text(), 15,
               what="the restarted sidecar's gate to follow it again")
    time.sleep(1.0)
    assert running_pod(pods, shared, time.time() - 0.5) is new
    check_pods(pods, shared)


@scenario
def stop_sidecar(s):
    """SIGSTOP of the leader's sidecar: the stream stays open and silent; the gate stops the program
    by the clock alone (docs/gate.md)."""
    pods, shared, old, new, _ = two_pods(s, "stop_sidecar")
    t = time.monotonic()
    old.agent.signal(signal.SIGSTOP)
    try:
        failover(pods, shared, old, new, t, "SIGSTOP of the leader's sidecar")
        assert "no fresh validUntil" in old.gate_text(), "the stop was not the clock's"
    finally:
        old.agent.signal(signal.SIGCONT)


@scenario
def api_outage(s):
    """An API outage for both pods (each sidecar reaches the apiserver through its own proxy,
    both blackholed for 8 s): the leader's sidecar cannot renew and says "no" at its validUntil;
    its gate has stopped the program before. After the outage one pod leads again."""
    pods, shared, old, _, proxies = two_pods(s, "api_outage", proxied=True)
    t = time.monotonic()
    wall_t = time.time()
    for px in proxies:
        s.proxies.blackhole(px)
    wait_until(lambda: (last_line_of(shared, old) or 0) < time.time() - 0.5, 10,
               what="the leader's program to stop during the outage")
    stopped = last_line_of(shared, old) - wall_t
    time.sleep(max(0.0, 8 - (time.monotonic() - t)))
    for px in proxies:
        s.proxies.heal(px)
    back = time.time()
    leader = wait_until(lambda: running_pod(pods, shared, back), 30,
                        what="a program to run after the outage")
    first = first_line_of(shared, leader, back)
    time.sleep(0.5)
    measured(f"API outage: the leader's program stopped {stopped:.2f}s into it (renew-deadline "
             f"{FAST.renew:g}s); {leader.name} ran {first - back:.2f}s after it ended")
    check_pods(pods, shared, "API outage")


@scenario
def term_gate(s):
    """SIGTERM of the leader's gate (as the kubelet stops the main container): it stops the program,
    POSTs /release and exits with the program's code; the other pod takes over at once."""
    pods, shared, old, new, _ = two_pods(s, "term_gate")
    t = time.monotonic()
    old.gate.send_signal(signal.SIGTERM)
    code = old.gate.wait(10)
    assert code == 128 + signal.SIGKILL, f"gate exit code {code}"
    assert "POST /release answered 202" in old.gate_text()
    took = failover(pods, shared, old, new, t, "SIGTERM of the leader's gate")
    assert took < 3.0, f"failover after release took {took:.2f}s"


@scenario
def term_sidecar(s):
    """SIGTERM of the leader's sidecar: it says "no" at once, so the gate stops the program, and
    releases once every yes it gave has expired; the other pod takes over then, never before."""
    pods, shared, old, new, _ = two_pods(s, "term_sidecar")
    t = time.monotonic()
    old.agent.term()
    failover(pods, shared, old, new, t, "SIGTERM of the leader's sidecar")
    assert "does not lead" in old.gate_text() or "ended" in old.gate_text()


@scenario
def setsid_child(s):
    """The program forks a child that calls setsid (its own session and process group) and
    appends too; kill -9 of the leader's sidecar: the gate stops the group, then the
    re-parented daemon, and neither writes after the validUntil."""
    pods, shared, old, new, _ = two_pods(s, "setsid_child", program=PROGRAM_SETSID)
    daemon_lines = [x for x in Path(shared).read_text().splitlines() if "-daemon" in x]
    assert daemon_lines, "the setsid child did not run"
    t = time.monotonic()
    old.agent.kill()
    failover(pods, shared, old, new, t, "kill -9 of the sidecar, setsid child")
    time.sleep(0.5)
    late = [x for x in Path(shared).read_text().splitlines()
            if x.startswith(f"{old.name}-daemon") and float(x.split()[2]) > time.time() - 0.4]
    assert not late, f"the setsid child still runs: {late[-1]}"


if __name__ == "__main__":
    sys.exit(SCENARIOS.main(context=GateScenario))
