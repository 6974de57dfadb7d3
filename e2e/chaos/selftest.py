#!/usr/bin/env python3
"""Tests the chaos tools themselves, without a control plane (~10 s): every proxy fault does what
it says, and the sampler + overlap detector catch a stale "yes" given by a paused process after it
resumed (a detector that cannot fail proves nothing). Prints `N passed, N failed`."""

import os
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

from e2e.chaos import chaos
from e2e.lib import analysis, sampler_process
from e2e.lib.common import free_port
from e2e.lib.faultproxy import ProxyLoop

RESULTS = []


def check(name, cond, detail=""):
    RESULTS.append(bool(cond))
    print(f"{'ok  ' if cond else 'FAIL'} {name} {detail}", flush=True)


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        try:
            while d := self.request.recv(65536):
                self.request.sendall(d)
        except OSError:
            pass  # the reset fault's RST


def echo_server():
    """A TCP echo server in a thread; returns its port."""
    srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Echo)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1]


def roundtrip(port, payload=b"hello", timeout=3.0):
    """(seconds, echoed bytes or exception name)."""
    t = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(payload)
            got = b""
            while len(got) < len(payload) and (d := s.recv(65536)):
                got += d
            return time.monotonic() - t, got
    except OSError as e:
        return time.monotonic() - t, type(e).__name__


def test_proxy():
    up = echo_server()
    loop = ProxyLoop()
    p = loop.proxy("t", "127.0.0.1", up)
    dt, got = roundtrip(p.port)
    check("clean pipe echoes", got == b"hello", f"{dt * 1000:.1f} ms")
    loop.latency(p, 0.3)
    dt, got = roundtrip(p.port)
    check("latency 0.3 s each way", got == b"hello" and 0.55 <= dt < 1.5, f"{dt:.2f} s")
    loop.heal(p)
    loop.drip(p, 0.02)
    dt, got = roundtrip(p.port, b"0123456789")
    check("drip 20 ms/byte", got == b"0123456789" and dt >= 0.18, f"{dt:.2f} s")
    loop.heal(p)
    loop.blackhole(p)
    dt, got = roundtrip(p.port, timeout=0.5)
    check("blackhole: accepted, never answered", got == "TimeoutError" or got == "timeout",
          f"{got} after {dt:.2f} s")
    # A connection opened during the blackhole is answered once it heals.
    res = {}
    th = threading.Thread(target=lambda: res.update(r=roundtrip(p.port, timeout=5)))
    th.start()
    time.sleep(0.5)
    loop.heal(p)
    th.join(6)
    check("blackhole heals: held bytes delivered", res.get("r", (0, None))[1] == b"hello",
          str(res.get("r")))
    # Reset: an open connection gets RST, new ones too while the reset lasts.
    s = socket.create_connection(("127.0.0.1", p.port), timeout=2)
    s.sendall(b"x")
    s.recv(10)
    loop.reset(p, 0.5)
    try:
        s.sendall(b"y")
        d = s.recv(10)
        err = f"read {d!r}"
    except OSError as e:
        err = type(e).__name__
    s.close()
    check("reset: open connection reset", err == "ConnectionResetError", err)
    dt, got = roundtrip(p.port)
    check("reset: new connection reset meanwhile", got in ("ConnectionResetError",
                                                           "ConnectionAbortedError"), str(got))
    time.sleep(0.6)
    dt, got = roundtrip(p.port)
    check("reset over: clean again", got == b"hello", str(got))
    loop.close()


FAKE = textwrap.dedent("""
    import http.server, json, os, sys
    flag, ident, port = sys.argv[1:]
    class H(http.server.BaseHTTPRequestHandler):  # HTTP/1.0: closes after each answer
        def do_GET(self):
            yes = os.path.exists(flag)
            b = json.dumps({"isLeader": yes, "term": 1, "identity": ident}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(b)))
            self.end_headers()
            self.wfile.write(b)
        def log_message(self, *a):
            pass
    http.server.ThreadingHTTPServer.request_queue_size = 128  # the questions of a pause
    http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), H).serve_forever()
""")


def test_detector():
    d = Path(tempfile.mkdtemp(prefix="chaos-selftest-"))
    (d / "fake.py").write_text(FAKE)
    fa, fb = d / "a.flag", d / "b.flag"
    pa, pb = free_port(), free_port()
    fa.write_text("")
    procs = [subprocess.Popen([sys.executable, str(d / "fake.py"), str(f), n, str(p)])
             for f, n, p in ((fa, "a", pa), (fb, "b", pb))]
    out = d / "samples.txt"
    time.sleep(0.5)
    smp = sampler_process.Started(out, 0.02, 0.15, {"A": pa, "B": pb})
    try:
        time.sleep(0.7)
        # A is paused while still saying "yes"; B says "yes" meanwhile; A resumes and answers the
        # questions asked during its pause with "yes": each of those covers the pause.
        os.kill(procs[0].pid, signal.SIGSTOP)
        time.sleep(0.3)
        fb.write_text("")
        time.sleep(0.5)
        fb.unlink()
        time.sleep(0.3)
        os.kill(procs[0].pid, signal.SIGCONT)
        time.sleep(1.0)
    finally:
        smp.stop()
        for p in procs:
            os.kill(p.pid, signal.SIGCONT)
            p.kill()
            p.wait()
    samples = analysis.load_samples(out)
    lead = analysis.spans(samples, 0.15)
    late = [s for s in samples.get("A", []) if s[3] and s[1] - s[0] > 0.15]
    check("sampler: questions asked during the pause answered late", len(late) >= 20,
          f"{len(late)} late yes answers")
    ov = analysis.overlaps(samples)
    check("detector: stale yes after resume counts as overlap", len(ov) >= 1,
          f"{len(ov)} overlaps")
    check("detector: in-time answers alone show no overlap",
          not analysis.overlaps(samples, timeout=0.15))
    # Two lead spans of A (before/after) and one of B: the handover list sees A->B->A.
    hs = analysis.handovers(lead)
    check("handovers A->B->A", [(a["slot"], b["slot"]) for a, b, _ in hs] ==
          [("A", "B"), ("B", "A")], str([(a["slot"], b["slot"], round(g, 3)) for a, b, g in hs]))


# The chaos verdict (chaos.failed) on reports: name, the report's findings, must it fail.
CLEAN = {"overlaps_leasehold": 0, "promise_violations_leasehold": 0,
         "promise_possible_leasehold": 0, "promise_overtaken_leasehold": [],
         "coverage_failures": [], "final_leader": "lh0", "faults": 12, "leader_changes": 5}
VERDICTS = [
    ("a clean run", {}, False),
    ("a leasehold overlap", {"overlaps_leasehold": 1}, True),
    ("a definite promise break, seen by the sampler", {"promise_violations_leasehold": 1}, True),
    ("a possible promise break only", {"promise_possible_leasehold": 1}, False),
    ("a promise overtaken, logged by the agent", {"promise_overtaken_leasehold": ["lh1-1"]}, True),
    ("a slot not sampled as stated", {"coverage_failures": ["lh0: the sampler stopped"]}, True),
    ("no leader at the end", {"final_leader": None}, True),
    ("faults but no handover: nothing judged", {"leader_changes": 0}, True),
    ("no faults, no handover", {"faults": 0, "leader_changes": 0}, False),
]


def test_verdict():
    for name, findings, must_fail in VERDICTS:
        check(f"verdict: {name} {'fails' if must_fail else 'passes'}",
              chaos.failed({**CLEAN, **findings}) == must_fail)


# Promise breaks as report() judges them: lh0 promised until 10.0; lh1's first yes was asked at
# 9.95. (what, lh1's answer, lh0's SIGTERMs with `immediate`, identities blanked by a client-go
# peer, leasehold's definite and possible breaks)
PROMISES = [
    ("definite: answered before the validUntil", 9.96, [], set(), 1, 0),
    ("possible: answered after it", 10.05, [], set(), 0, 1),
    ("definite, after a release with immediate", 9.96, [9.9], set(), 0, 0),
    ("definite, after a client-go peer blanked the lease", 9.96, [], {"lh0-1"}, 0, 0),
]


def span(slot, start, first_recv, max_vu=None):
    """A claim span (e2e/lib/analysis.py) of one answer."""
    return {"slot": slot, "identity": f"{slot}-1", "term": 1, "start": start,
            "first_recv": first_recv, "end": first_recv, "n": 1, "max_vu": max_vu}


def test_promises():
    kinds = {"lh0": "leasehold", "lh1": "leasehold"}
    for what, answered, terms, blanked, definite, possible in PROMISES:
        claim = {"lh0": [span("lh0", 0.0, 0.01, 10.0)], "lh1": [span("lh1", 9.95, answered)]}
        found = chaos.promise_findings(claim, kinds, {"lh0": terms}, blanked, lambda t: t, 0.0)
        counted = (found["promise_violations_leasehold"], found["promise_possible_leasehold"])
        check(f"promise: {what} {'fails' if definite else 'passes, reported'}",
              counted == (definite, possible) and len(found["promise_violations"]) == 1
              and chaos.failed({**CLEAN, **found}) == bool(definite), str(counted))


def main():
    test_verdict()
    test_promises()
    test_proxy()
    test_detector()
    passed = sum(RESULTS)
    failed = len(RESULTS) - passed
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
