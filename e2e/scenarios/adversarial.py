#!/usr/bin/env python3
"""Hostile peers against the real binary on a real etcd + kube-apiserver: what any pod of the
cluster can send to the probe listener, and any container of the pod to the local API, must not
cost the leader its lease, its memory or its probes. Every attack is bounded in count and time
and aims at 127.0.0.1 only; each scenario prints what it measured on MEASURED lines.
"""

import json
import os
import socket
import sys
import threading
import time

from e2e.lib.agent import wait_ready, wait_single_leader
from e2e.lib.common import free_port, measured, parse_rfc3339, start_threads, wait_until
from e2e.lib.controlplane import Namespace
from e2e.lib.members import start_fleet
from e2e.lib.runner import Registry
from e2e.lib.sampler import Sampler
from e2e.lib.timings import FAST

SCENARIOS = Registry()
scenario = SCENARIOS.add


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def proc_count(pid, what):
    """The entries of /proc/PID/`what`: "fd" its open files, "task" its threads."""
    return len(os.listdir(f"/proc/{pid}/{what}"))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))] if xs else float("nan")


def raw_request(port, data, timeout=5.0):
    """Sends `data` on a fresh connection and reads until the server closes it: the bytes
    received. OSError (socket.timeout among them) if a read waits `timeout` s."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        while b := s.recv(65536):
            out += b
        return out


def probe_ms(port, path, timeout=2.0):
    """One probe on a fresh connection, as the kubelet makes it: (ms, status) or (ms, None)."""
    t = time.monotonic()
    try:
        data = raw_request(port, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                           .encode(), timeout)
    except OSError:
        data = b""
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else None
    return (time.monotonic() - t) * 1000, status


class Attacked:
    """The target of an attack: two agents on one Lease, each with a probe listener (members
    start_fleet), the leader among them, and a sampler whose answers prove that the leadership
    did not move while the attack ran, and that the leader renewed (their renewTime)."""

    def __init__(self, s, name, extra=()):
        self.agents = start_fleet(s, Namespace(s.control_plane(), name), 2, probe=True,
                                  extra=extra)
        self.leader = wait_single_leader(self.agents, 30)
        wait_ready(self.agents)
        self.sampler = Sampler(self.agents, interval=0.1, timeout=1.0)

    def __enter__(self):
        self.sampler.__enter__()
        return self

    def __exit__(self, *exc):
        self.sampler.stop()

    def renews(self):
        """The leader's renewTimes as its answers gave them, one per change."""
        out = []
        for b in self.sampler.yes_bodies(self.leader.name):
            if b.get("renewTime") and (not out or out[-1] != b["renewTime"]):
                out.append(b["renewTime"])
        return out

    def check_leadership_kept(self):
        """The leader led throughout, nobody else did, and it renewed every retry period."""
        # A few renews at least, also after a short attack.
        wait_until(lambda: len(self.renews()) >= 5, 15, what="five renews of the leader")
        assert self.sampler.overlaps() == [], self.sampler.overlaps()
        for name, spans in self.sampler.intervals().items():
            if name != self.leader.name:
                assert spans == [], f"{name} led during the attack: {spans}"
        assert self.leader.is_leader(), "the leader lost its lease"
        times = [parse_rfc3339(r) for r in self.renews()]
        gaps = [b - a for a, b in zip(times, times[1:])]
        worst = max(gaps) if gaps else float("nan")
        measured(f"leader renews during the attack: {len(times)}, longest gap between renewTimes "
                 f"{worst:.2f}s (retry-period {FAST.retry:.0f}s)")
        assert len(times) >= 3, times
        # The renew loop runs every retry-period; a missed renew would show as a gap of two.
        assert worst < 2 * FAST.retry, f"a renew was missed: gap {worst:.2f}s"


@scenario
def header_flood(s):
    """GET /healthz with 10,000 headers of 8,000 bytes, four at once, at the probe listener: on
    main this took RSS from 14 to 494 MiB and the kernel OOM-killed the leader under its 64Mi
    limit. Now each is cut off at 16 KiB with 431."""
    with Attacked(s, "e2e-adv-flood") as f:
        pid = f.leader.proc.pid
        time.sleep(1.0)
        base = status_kib(pid, "VmRSS")
        peak = base
        answers = []

        def flood():
            head = b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
            header = b"X-Flood: " + b"f" * 8000 + b"\r\n"
            got = b""
            with socket.create_connection(("127.0.0.1", f.leader.probe_port), timeout=10) as c:
                try:
                    c.sendall(head)
                    for _ in range(10000):
                        c.sendall(header)
                except OSError:
                    pass
                try:
                    c.settimeout(2)
                    while b := c.recv(65536):
                        got += b
                except OSError:
                    pass
            answers.append(got)

        rounds = 5
        t0 = time.monotonic()
        for _ in range(rounds):
            threads = start_threads(flood, [()] * 4)
            while any(t.is_alive() for t in threads):
                peak = max(peak, status_kib(pid, "VmRSS"))
                time.sleep(0.01)
        took = time.monotonic() - t0
        time.sleep(1.0)
        after = status_kib(pid, "VmRSS")
        statuses = sorted({a[:12].decode(errors="replace") for a in answers})
        measured(f"header flood, {rounds}x4 requests of 80 MB in {took:.1f}s: VmRSS {base / 1024:.1f} MiB "
                 f"before, peak {peak / 1024:.1f} MiB (+{(peak - base) / 1024:.2f}), after "
                 f"{after / 1024:.1f} MiB; answers seen: {statuses}")
        assert peak - base <= 2 * 1024, f"RSS grew by {(peak - base) / 1024:.2f} MiB"
        assert after - base <= 512, f"RSS did not come back: +{(after - base) / 1024:.2f} MiB"
        # Most floods get their 431 before the reset; a reset is allowed, a 200 never.
        assert any(a.startswith(b"HTTP/1.1 431 ") for a in answers), statuses
        assert not any(a.startswith(b"HTTP/1.1 200 ") for a in answers), statuses
        f.check_leadership_kept()


def hold_connections(port, idle, slow, stop, counters):
    """Holds `idle` connections that send nothing and `slow` ones that send a byte every 500 ms
    and never finish a head; each one shed is opened again, as an attacker would, until `stop`."""
    def connect():
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=2)
            c.setblocking(False)
            return c
        except OSError:
            counters["refused"] += 1
            return None

    def run(n, is_slow):
        conns = [connect() for _ in range(n)]
        while not stop.is_set():
            for i, c in enumerate(conns):
                if stop.is_set():
                    break
                dead = c is None
                if not dead:
                    try:
                        if c.recv(4096) == b"":
                            dead = True
                    except BlockingIOError:
                        pass
                    except OSError:
                        dead = True
                if not dead and is_slow:
                    try:
                        c.send(b"X" if counters.get(id(c)) else b"GET /healthz HTTP/1.1\r\n")
                        counters[id(c)] = 1
                    except OSError:
                        dead = True
                if dead:
                    if c is not None:
                        c.close()
                    conns[i] = connect()
                    counters["reconnects"] += 1
            stop.wait(0.5)
        for c in conns:
            if c is not None:
                c.close()

    return start_threads(run, [(idle, False), (slow, True)])


def starve(s, fleet_name, target):
    with Attacked(s, fleet_name) as f:
        pid = f.leader.proc.pid
        port = f.leader.probe_port if target == "probe" else f.leader.port
        fds_before, threads_before = proc_count(pid, "fd"), proc_count(pid, "task")
        stop = threading.Event()
        counters = {"reconnects": 0, "refused": 0}
        holders = hold_connections(port, 1000, 1000, stop, counters)
        time.sleep(2.0)  # every connection opened, the first sheds done
        # The kubelet's probes, and a Prometheus scrape of /metrics.
        lat = {"/healthz": [], "/readyz": [], "/is-leader": [], "/metrics": []}
        failures = []
        fds_max, threads_max = 0, 0
        deadline = time.monotonic() + 20
        for i in range(300):
            if time.monotonic() > deadline:
                break
            path = list(lat)[i % len(lat)]
            ms, st = probe_ms(port, path)
            lat[path].append(ms)
            if st is None:
                failures.append(path)
            if i % 20 == 0:
                fds_max = max(fds_max, proc_count(pid, "fd"))
                threads_max = max(threads_max, proc_count(pid, "task"))
            time.sleep(0.02)
        stop.set()
        for t in holders:
            t.join(10)
        allms = [x for v in lat.values() for x in v]
        measured(f"{target} listener with 2,000 held connections (1,000 idle, 1,000 slow; "
                 f"{counters['reconnects']} reconnects after a shed): "
                 + ", ".join(f"{p} p50 {pct(v, 50):.2f} ms p99 {pct(v, 99):.2f} ms max {max(v):.2f} ms"
                             for p, v in lat.items())
                 + f"; agent fds {fds_before} -> max {fds_max}, threads {threads_before} -> max {threads_max}")
        assert not failures, f"{len(failures)} probes unanswered: {failures[:5]}"
        assert pct(allms, 99) <= 50.0, f"p99 {pct(allms, 99):.2f} ms"
        # 256 connections on the local API, 128 on the probe listener, plus what the agent had.
        assert fds_max <= fds_before + 256 + 128 + 8, fds_max
        assert threads_max == threads_before, (threads_before, threads_max)
        f.check_leadership_kept()


@scenario
def metrics_flood(s):
    """Eight clients scraping /metrics on the leader's probe listener as fast as they can (any
    pod can): the scrapes take no lock the election takes, so the leader keeps renewing every
    retry-period, and a probe still answers."""
    with Attacked(s, "e2e-adv-metrics") as f:
        port = f.leader.probe_port
        stop = threading.Event()
        counts = {"ok": 0, "bad": 0}
        lock = threading.Lock()

        def scrape():
            while not stop.is_set():
                ms, st = probe_ms(port, "/metrics")
                with lock:
                    counts["ok" if st == 200 else "bad"] += 1

        t0 = time.monotonic()
        threads = start_threads(scrape, [()] * 8)
        probes = []
        while time.monotonic() - t0 < 8 * FAST.retry:
            probes.append(probe_ms(port, "/healthz"))
            time.sleep(0.1)
        stop.set()
        for t in threads:
            t.join(10)
        elapsed = time.monotonic() - t0
        ms = [m for m, _ in probes]
        measured(f"/metrics flood on the probe listener: {counts['ok']} scrapes in {elapsed:.1f}s "
                 f"({counts['ok'] / elapsed:.0f}/s), {counts['bad']} not 200; /healthz meanwhile "
                 f"p50 {pct(ms, 50):.2f} ms p99 {pct(ms, 99):.2f} ms")
        # The flooders are the attacker: the listener sheds rather than queues, so a few of their
        # own connections may be cut (15 of 64,408 once, at 8,000 scrapes/s). What must hold is
        # that scrapes are served, every legitimate probe answers, and the lease is kept.
        assert counts["ok"] > 0 and counts["bad"] <= counts["ok"] // 100, counts
        assert all(st == 200 for _, st in probes), probes
        f.check_leadership_kept()


# 2,000 slow or idle connections on the probe listener (any pod can open them): on main eight
# one-byte-a-second connections silenced /healthz, and the kubelet restarted the pod. The same on
# the loopback API: on main 400 slow connections silenced it and 2,000 idle ones delayed
# /is-leader by 10-14 s.
SCENARIOS.bind(starve, "e2e-adv-slow-probe", "probe", name="slow_connections_probe")
SCENARIOS.bind(starve, "e2e-adv-slow-local", "local", name="slow_connections_local")


@scenario
def framing(s):
    """Range amplification, pipelining, unread bodies and log forging, on the leader."""
    with Attacked(s, "e2e-adv-framing", extra=("--log-format=json",)) as f:
        port = f.leader.port
        pid = f.leader.proc.pid
        plain = raw_request(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        plain_len = len(plain.split(b"\r\n\r\n", 1)[1])
        ranges = b"bytes=" + b",".join([b"0-"] * 2700)
        req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\nRange: " + ranges + b"\r\n\r\n"
        base = status_kib(pid, "VmRSS")
        outs = []
        for t in start_threads(lambda: outs.append(raw_request(port, req)), [()] * 32):
            t.join()
        assert len(outs) == 32, f"{32 - len(outs)} of 32 requests not answered in full"
        grew = status_kib(pid, "VmRSS") - base
        sizes = sorted({len(o) for o in outs})
        measured(f"32 requests with 2,700 ranges each: answers of {sizes} bytes (plain body "
                 f"{plain_len} bytes), VmRSS +{grew / 1024:.2f} MiB")
        for o in outs:
            assert o.startswith(b"HTTP/1.1 200 "), o[:40]
            assert b"Content-Range" not in o and b"multipart" not in o
            assert len(o) < plain_len + 4096, len(o)

        batch = b"".join(b"GET /is-leader HTTP/1.1\r\nHost: x\r\n\r\n" for _ in range(99))
        batch += b"GET /is-leader HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        out = raw_request(port, batch)
        measured(f"100 pipelined GETs: {out.count(b'HTTP/1.1 200 ')} answered 200")
        assert out.count(b"HTTP/1.1 200 ") == 100

        smuggled = b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
        out = raw_request(port, b"POST /leader HTTP/1.1\r\nHost: x\r\nContent-Length: "
                          + str(len(smuggled)).encode() + b"\r\n\r\n" + smuggled
                          + b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert out.count(b"HTTP/1.1 ") == 2 and b" 404 " not in out, out
        assert out.startswith(b"HTTP/1.1 405 ")

        raw_request(port, b"GET /x%0a[error]%20FAKE%20line%0d%1b[31m HTTP/1.1\r\nHost: x\r\n"
                          b"Connection: close\r\n\r\n")
        bad_json = 0
        for line in f.leader.log_text().splitlines():
            if not line.startswith("{"):
                continue
            try:
                json.loads(line)
            except ValueError:
                bad_json += 1
            assert "FAKE" not in line or "\\\\x0a" in line or "\\x0a" in line, line
        assert not any(line.startswith("[error] FAKE") for line in f.leader.log_text().splitlines())
        assert bad_json == 0, f"{bad_json} log lines are not JSON"
        f.check_leadership_kept()


@scenario
def release_needs_loopback(s):
    """--http-address 0.0.0.0: one warning that says what it exposes; a release from loopback
    still works (a peer off the loopback gets 403: tested in test/localapi, since this machine
    may send test traffic to loopback addresses only)."""
    cp = s.control_plane()
    ns = Namespace(cp, "e2e-adv-release")
    port = free_port()
    a = s.agent(ns, "e2e-adv-release-a0", extra=(f"--http-address=0.0.0.0:{port}",))
    # The harness set --http-address=127.0.0.1:P earlier in the arguments; the last one wins.
    a.port = port
    a.start()
    wait_single_leader([a], 30)
    warnings = [line for line in a.log_text().splitlines() if "not a loopback address" in line]
    assert len(warnings) == 1, warnings
    st, body = a.request("POST", "/release", 2.0)
    assert st == 202 and body.get("released") is True, (st, body)
    measured(f"warning: {warnings[0][:160]}")


if __name__ == "__main__":
    sys.exit(SCENARIOS.main())
