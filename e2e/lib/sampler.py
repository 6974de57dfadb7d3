"""The in-process sampler: asks every agent who leads every 50 ms and finds any overlap of two
"yes" answers. (e2e/lib/sampler_process.py is the same idea in its own process, for fleets
under faults.)"""

import threading
import time

from e2e.lib.common import parse_rfc3339


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
