"""The judge's rules (e2e/lib/judge.py) on made-up samples: each rule must catch what it is for,
for the right reason (a judge that cannot fail proves nothing), and the cases that must pass do.
Then the node tier's own rules (units, lock history) and its sampler's process (node/judge.Sampler,
node/sampler.py) against two answering servers of a process of their own on loopback: it samples
them, a stall of this process does not show in its samples, and its death fails the reader.
Standard library only: runs with the unit tests.

    python3 -m e2e.lib.judge_selftest
"""

import os
import signal
import subprocess
import sys
import time

from e2e.lib import judge
from e2e.lib.common import Watch, wait_until
from e2e.lib.sampler import Sampler
from e2e.node import judge as node_judge
from e2e.node.lock_rules import assert_release_acquire

I = 0.1  # the stated interval of the made-up samplers (s)


def S(pod, send, yes, rtt=0.002, vu=None):
    return judge.Sample(pod, send, send + rtt, yes, vu, 200 if yes else 503)


def every(pod, t0, t1, yes, vu_ahead=None, step=I):
    """pod asked every `step` from t0 up to t1; yes answers carry validUntil send + vu_ahead."""
    out, t = [], t0
    while t <= t1 + 1e-9:
        out.append(S(pod, t, yes, vu=None if vu_ahead is None or not yes else t + vu_ahead))
        t = round(t + step, 6)
    return out


HANDOVER = every("a", 0, 2.0, True) + every("a", 2.1, 4, False) + \
    every("b", 0, 2.0, False) + every("b", 2.1, 4, True)
# b's first yes comes while a's last validUntil still runs
OVERTAKEN = every("a", 0, 1, True, vu_ahead=0.5) + every("a", 1.1, 4, False) + \
    every("b", 0, 1.2, False) + every("b", 1.3, 4, True, vu_ahead=0.5)
PROMISES = {"fail_on": ("definite", "answers", "promise")}

# name, samples, kwargs of judge.judge, the reason kinds it must fail for (empty: must pass),
# and what its message must say beyond its kind (the pod and the cause), where given.
CASES = [
    ("a clean handover", HANDOVER, {}, set()),
    ("a handover required and seen", HANDOVER, {"require_handover": True}, set()),
    ("a definite overlap: b says yes inside a's run",
     every("a", 0, 4, True) + every("b", 0, 0.9, False) + [S("b", 1.0, True)] +
     every("b", 1.1, 4, False), {}, {"definite", "answers"}, "DEFINITE OVERLAP: definite(a, b"),
    ("two answers' spans intersect, none inside a run",
     [S("a", 0.0, True, rtt=0.02), S("b", 0.01, True, rtt=0.02)] +
     every("a", 0.1, 4, False) + every("b", 0.1, 4, False), {}, {"answers"}),
    ("a promise overtaken fails where promises are judged", OVERTAKEN, PROMISES, {"promise"}),
    ("a promise overtaken is reported only where answers are judged", OVERTAKEN, {}, set()),
    ("a promise overtaken inside an exemption with an end", OVERTAKEN,
     {**PROMISES, "exemptions": [judge.Exemption("a", 1.05, 1.5, "released at once")]}, set()),
    ("a pod sampled for half its life",
     every("a", 0, 4, True) + every("b", 0, 2, False), {"ends": {"b": 4}}, {"gap"},
     "b: the sampler stopped"),
    ("a sampler that stops", every("a", 0, 1.5, True), {}, {"gap"}, "a: the sampler stopped"),
    ("a pod whose life ended is not judged after it",
     every("a", 0, 4, True) + every("b", 0, 2, False), {"ends": {"b": 2.05}}, set()),
    ("a pod that came and went is judged over its life",
     every("a", 0, 4, True) + every("b", 1, 1.5, False) + every("b", 1.9, 3, False),
     {"ends": {"b": 3}}, {"gap"}, "b: a gap"),
    ("a frozen pod's gap inside its exemption",
     every("a", 0, 4, True) + every("b", 0, 1, False) + every("b", 3, 4, False),
     {"exemptions": [judge.Exemption("b", 0.95, 3.0, "frozen")]}, set()),
    ("a gap after the exemption's end",
     every("a", 0, 4, True) + every("b", 0, 1, False) + every("b", 3.5, 4, False),
     {"exemptions": [judge.Exemption("b", 0.95, 3.0, "frozen")]}, {"gap"}, "b: a gap"),
    ("no pod judged in the window", every("a", 5, 6, True), {}, {"vacuous"}),
    ("no handover where one was required", every("a", 0, 4, True) + every("b", 0, 4, False),
     {"require_handover": True}, {"no-handover"}),
]


def refused(what, exc, fn, *args, **kw):
    """fn(*args, **kw) must raise `exc`: returns it; raises RuntimeError if `what` passed."""
    try:
        fn(*args, **kw)
    except exc as e:
        return e
    raise RuntimeError(f"{what} was accepted")


def run_cases():
    for name, samples, kw, want, *says in CASES:
        try:
            judge.judge(judge.by_pod(samples), 0, 4, I, **kw)
            got = set()
        except judge.Verdict as v:
            got = v.kinds()
            assert want, f"{name}: must pass, failed: {v}"
            assert all(x in str(v) for x in says), f"{name}: the verdict does not say {says}: {v}"
        assert got == want, f"{name}: must fail for {sorted(want)}, failed for {sorted(got)}"
        print(f"judge selftest: {name}: {'fails for ' + ', '.join(sorted(got)) if got else 'passes'}")
    # An exemption without an end is refused (the judge would hold a hole open for ever).
    for end in (None, float("inf")):
        e = refused(f"an exemption ending at {end}", ValueError, judge.Exemption, "a", 1.0, end,
                    "SIGKILL")
        assert "without an end" in str(e), e
    refused("a tuple exemption", TypeError, judge.judge, {}, 0, 1, I,
            exemptions=[("a", 0, float("inf"))])
    print("judge selftest: an exemption without an end: refused")
    # The control plane's in-process sampler: its overlaps are the judge's answers overlaps,
    # and a sampler that got no answer judged nothing.
    smp = Sampler([])
    smp.samples = {"a": [(1.0, 1.01, True, 1, {"isLeader": True}),
                         (1.05, 1.06, True, 1, {"isLeader": True})],
                   "b": [(1.02, 1.03, True, 2, {"isLeader": True})]}
    ((a, _, b, _),) = smp.overlaps()
    assert (a, b) == ("a", "b"), smp.overlaps()
    smp.samples = {"a": [(1.0, 1.3, False, None, {})]}
    v = refused("a sampler without an answer", judge.Verdict, smp.overlaps)
    assert v.kinds() == {"vacuous"}, v
    print("judge selftest: the control plane's sampler: an overlap found, no answer fails")


# The lock's history while pods leave (rollouts, evictions, scale-down): name, holders since the
# first pod began to leave, old pods, the expected last holder, whether the rule accepts it.
LOCK_CASES = [
    ("release, one acquisition", ["", "n1"], {"o1", "o2"}, "n1", True),
    ("through an old pod", ["", "o2", "", "n1"], {"o1", "o2"}, "n1", True),
    ("expiry takeover (pod -> pod)", ["o2", "n1"], {"o1", "o2"}, "n1", False),
    ("a pod acquires twice", ["", "o2", "", "o2", "", "n1"], {"o1", "o2"}, "n1", False),
    ("a new pod hands over", ["", "n2", "", "n1"], {"o1", "o2"}, "n1", False),
    ("ends with another holder", ["", "o2"], {"o1", "o2"}, "n1", False),
    ("two releases in a row", ["", "", "n1"], {"o1", "o2"}, "n1", False),
]


def main():
    run_cases()
    for name, holders, old, new, ok in LOCK_CASES:
        try:
            assert_release_acquire(name, holders, new, old, 3)
            accepted = True
        except AssertionError:
            accepted = False
        assert accepted == ok, (name, holders, "accepted" if accepted else "refused")
    units = {"a": [{"start": 1.0, "end": 2.0}], "b": [{"start": 2.0, "end": 3.0}]}
    assert not node_judge.unit_intersections(units), "touching units do not intersect"
    units["b"].append({"start": 1.5, "end": 1.6})
    assert len(node_judge.unit_intersections(units)) == 1
    units = {"a": [{"start": 1.0, "end": 2.0}, {"start": 1.5, "end": 1.7}]}
    assert not node_judge.unit_intersections(units), "one pod's own units are not judged"
    gap, n = judge.sample_gaps([S("a", t / 10, True) for t in range(10)] + [S("a", 1.5, True)], 0, 2)
    assert n == 11 and abs(gap - 0.6) < 1e-9, (gap, n)
    # lateness: the sampler's part of a gap, not the pod's slow answer
    late = judge.lateness([S("a", 0.0, True), S("a", 0.1, True), S("a", 0.5, True)], 0.1)
    assert abs(late - 0.3) < 1e-9, late
    slow = [S("a", 0.0, True, rtt=0.45), S("a", 0.45, True)]
    assert judge.lateness(slow, 0.1) <= 0, "a slow answer counted as the sampler's lateness"
    assert "1 after a slow answer, 0 sampler late" in judge.gap_report({"a": slow}, 0.1)
    line = "LHUNIT ask=1000000 ans=1000100 term=3 valid_ms=9000 start=1000200 end=1100200 cut=0"
    (u,) = node_judge.parse_units("2026-01-01T00:00:00Z " + line)
    assert u["term"] == 3 and abs(u["end"] - 1.1002) < 1e-9, u
    assert node_judge.pod_of("web-1_ab12", ["web-1", "web-10"]) == "web-1"
    sampler_process()
    print("judge selftest: ok")


# Two /is-leader listeners on loopback, in a process of their own (a server in this process
# would stall with it): the first port answers 200 ("yes"), the second 503.
SERVERS = r"""
import http.server, sys, threading
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(self.server.code)
        self.send_header("Content-Length", "0")
        self.end_headers()
ports = []
for code in (200, 503):
    s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    s.code, s.daemon_threads = code, True
    threading.Thread(target=s.serve_forever, daemon=True).start()
    ports.append(str(s.server_address[1]))
print(" ".join(ports), flush=True)
sys.stdin.read()
"""

INTERVAL = 0.1
STALL = 1.0  # s this process holds the GIL without a break (aimed at)
STALL_MIN = 0.5  # at least (2.5 x the gap rule's GAP_FACTOR x INTERVAL)


def hold_gil(seconds):
    """Holds the GIL: one call into C (sum over a range) runs no bytecode, so no other thread of
    this process runs until it returns. Calibrated in steps, then run for `seconds`."""
    n = 1_000_000
    while True:
        t = time.monotonic()
        sum(range(n))
        took = time.monotonic() - t
        if took > 0.05:
            break
        n *= 4
    sum(range(int(n * seconds / took)))


def sampler_process():
    servers = subprocess.Popen([sys.executable, "-c", SERVERS], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    try:
        yes_port, no_port = (int(p) for p in servers.stdout.readline().split())
        # The pods: name -> "IP"; the port rides along per pod for this test only.
        samplers = [node_judge.Sampler(lambda: {"yes": "127.0.0.1"}, INTERVAL, port=yes_port),
                    node_judge.Sampler(lambda: {"no": "127.0.0.1"}, INTERVAL, port=no_port)]
        for smp in samplers:
            smp.start()
        smp_yes, smp_no = samplers
        try:
            wait_until(lambda: len(smp_yes.by_pod().get("yes", [])) >= 5, 10, 0.05, "5 samples")
            wait_until(lambda: len(smp_no.by_pod().get("no", [])) >= 5, 10, 0.05, "5 samples")
            assert smp_yes.pid != os.getpid()
            # This process's own ticker sees the stall; the sampler's process does not. A stall
            # shorter than STALL_MIN (the calibration ran under another load) is made again.
            for _ in range(5):
                ticker = Watch(lambda: True, 0.01)
                time.sleep(0.2)
                t0 = time.time()
                hold_gil(STALL)
                t1 = time.time()
                time.sleep(0.3)
                ticks = ticker.stop()
                held = max(b - a for a, b in zip(ticks, ticks[1:]))
                if held >= STALL_MIN:
                    break
            assert held >= STALL_MIN, f"the stall did not happen: longest tick gap {held:.3f}s"
            ss = smp_yes.by_pod()["yes"]
            gap, n = judge.sample_gaps(ss, t0, t1)
            print(f"judge selftest: this process stalled {held * 1000:.0f} ms; the sampler's "
                  f"longest gap then {gap * 1000:.0f} ms over {n} samples, at most "
                  f"{judge.lateness(ss, INTERVAL, t0, t1) * 1000:.0f} ms late "
                  f"({judge.gap_report({'yes': ss}, INTERVAL)})")
            # In this process's threads the sampler would be late by the stall itself (>=
            # STALL_MIN; a 1.56 s gap measured with the sampler's loop run in a thread here).
            # Judged on the sampler's lateness, not the gap: the servers, at normal priority,
            # answered one request in 321 ms under load. The bound leaves room for the
            # machine's own scheduling of the sampler's process.
            late = judge.lateness(ss, INTERVAL, t0, t1)
            assert late < STALL_MIN - INTERVAL, \
                f"a stall of the reader ({held:.3f}s) made the sampler {late:.3f}s late"
            assert all(s.yes and s.status == 200 and s.send <= s.recv for s in ss), ss[:3]
            no = smp_no.by_pod()["no"]
            assert all(not s.yes and s.status == 503 for s in no), [s.row() for s in no[:3]]
            assert smp_yes.leaders_now(1.0) == ["yes"] and smp_no.leaders_now(1.0) == []
            # The sampler's process dies: the next read says so.
            os.kill(smp_no.pid, signal.SIGKILL)
            smp_no.proc.wait(5)
            e = refused("the death of the sampler's process", AssertionError, smp_no.by_pod)
            assert "exited" in str(e), e
        finally:
            for smp in samplers:
                smp.stop()
        assert smp_yes.proc.returncode == 0, smp_yes.proc.returncode
        assert not smp_yes.path.exists(), "the samples' file was left behind"
        assert len(smp_yes.by_pod()["yes"]) >= 10 and "longest gap" in smp_yes.report(), \
            "the samples are gone once the sampler stopped"
    finally:
        servers.stdin.close()
        servers.wait(5)


if __name__ == "__main__":
    main()
