"""The node tier's instruments; what they prove is e2e/lib/judge.py's, as for every tier. Samples
of the probe listener's /is-leader (a peek, not a promise, so sampling cannot delay a safe
release; no validUntil, so a yes span ends at the answer's receipt), and each app's log of its
units of leader-only work (CLOCK_REALTIME us, as the samples: one kernel, one clock): no two
pods' units may intersect.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from e2e.lib.common import log
from e2e.lib.judge import Sample, gap_report


PROBE_PORT = 8081


class Sampler:
    """Samples every pod the `pods` callable lists (name -> IP), until stop(), through
    e2e/node/sampler.py's process: this side tells it new pods and reads the file it appends to
    (the raw evidence: dump). If that process dies before stop(), the next read fails the
    scenario: a sampler that stopped looking proves nothing."""

    def __init__(self, pods, interval=0.05, timeout=1.0, port=PROBE_PORT):
        self.pods_fn, self.interval, self.timeout, self.port = pods, interval, timeout, port
        self.samples, self.lock = [], threading.Lock()
        self.stopping = threading.Event()
        self.told = set()
        fd, path = tempfile.mkstemp(prefix="lh-samples-", suffix=".jsonl")
        os.close(fd)
        self.path, self.offset, self.partial, self.closed = Path(path), 0, b"", False
        self.proc = None
        self.finder = threading.Thread(target=self._find, daemon=True)

    def start(self):
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "e2e.node.sampler", str(self.path), str(self.interval),
             str(self.timeout)], stdin=subprocess.PIPE, text=True, env=env)
        self.finder.start()
        return self

    @property
    def pid(self):
        return self.proc.pid

    def _find(self):
        while not self.stopping.is_set():
            try:
                new = [(n, ip) for n, ip in self.pods_fn().items() if ip and n not in self.told]
                for name, ip in new:
                    self.proc.stdin.write(f"{name} {ip} {self.port}\n")
                    self.told.add(name)
                if new:
                    self.proc.stdin.flush()
            except OSError as e:  # the sampler process is gone: _read says so
                log(f"sampler: telling the sampler process: {e}")
                return
            except Exception as e:  # the apiserver may be briefly busy; keep going
                log(f"sampler: listing pods: {e}")
            self.stopping.wait(0.05)

    def _read(self):
        """Takes the complete lines appended since the last call. Caller holds self.lock."""
        if self.closed:  # stop() read the last of it and removed the file
            return
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        self.offset += len(data)
        data = self.partial + data
        cut = data.rfind(b"\n") + 1
        self.partial = data[cut:]
        for line in data[:cut].splitlines():
            pod, send, recv, yes, status = json.loads(line)
            self.samples.append(Sample(pod, send, recv, yes, status=status))
        if not self.stopping.is_set() and self.proc is not None and self.proc.poll() is not None:
            raise AssertionError(f"the sampler process (pid {self.proc.pid}) exited with "
                                 f"{self.proc.returncode} while sampling")

    def stop(self):
        self.stopping.set()
        self.finder.join(5)
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(self.timeout + 5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        with self.lock:
            if not self.closed:
                self._read()
                self.closed = True
        self.path.unlink(missing_ok=True)
        return self

    def all(self):
        """Every sample so far (read from the sampler's file first)."""
        with self.lock:
            self._read()
            return list(self.samples)

    def by_pod(self):
        out = {}
        for s in sorted(self.all(), key=lambda s: s.send):
            out.setdefault(s.pod, []).append(s)
        return out

    def first_yes_after(self, t, exclude=()):
        ys = [s for s in self.all() if s.yes and s.send >= t and s.pod not in exclude]
        return min(ys, key=lambda s: s.send) if ys else None

    def leaders_now(self, window=0.3):
        """Pods whose latest sample, taken within `window` s, said yes."""
        now, latest = time.time(), {}
        for s in self.all():
            if s.recv >= now - window and (s.pod not in latest or s.send > latest[s.pod].send):
                latest[s.pod] = s
        return sorted(p for p, s in latest.items() if s.yes)

    def dump(self, path):
        with self.lock:
            Path(path).write_text(json.dumps([s.row() for s in self.samples]))

    def report(self):
        """One line on how well the pods were sampled (gap_report)."""
        return gap_report(self.by_pod(), self.interval)


UNIT_RE = re.compile(r"LHUNIT ask=(\d+) ans=(\d+) term=(-?\d+) valid_ms=(\d+) start=(\d+) end=(\d+) cut=(\d)")
EXIT_RE = re.compile(r"LHEXIT at=(\d+) sig=(\d+)")


def parse_units(text):
    units = []
    for m in UNIT_RE.finditer(text):
        ask, ans, term, valid, start, end, cut = (int(x) for x in m.groups())
        units.append({"ask": ask / 1e6, "ans": ans / 1e6, "term": term, "valid_ms": valid,
                      "start": start / 1e6, "end": end / 1e6, "cut": cut})
    return units


def unit_intersections(units_by_pod):
    """[(podA, podB, seconds)] of intersecting units of different pods."""
    allu = sorted(((u["start"], u["end"], p) for p, us in units_by_pod.items() for u in us))
    bad = []
    for i, (s1, e1, p1) in enumerate(allu):
        for s2, e2, p2 in allu[i + 1:]:
            if s2 >= e1:
                break
            if p1 != p2:
                bad.append((p1, p2, min(e1, e2) - s2))
    return bad


def pod_of(identity, pods):
    """The pod whose name the holder identity starts with (identity = POD_NAME_suffix)."""
    for p in pods:
        if identity == p or identity.startswith(p + "_") or identity.startswith(p + "-"):
            return p
    return None
