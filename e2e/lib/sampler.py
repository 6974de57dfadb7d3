"""The in-process sampler; e2e/lib/judge.py says what its answers prove (overlaps()).
(e2e/lib/sampler_process.py is the same in its own process, for fleets under faults.)"""

import threading
import time

from e2e.lib import judge
from e2e.lib.agent import LeaderView
from e2e.lib.common import parse_rfc3339, start_threads


class Sampler:
    """Asks every agent /leader every `interval` s, each from its own thread, and records
    (sent, received, isLeader, term, body) answers, monotonic."""

    def __init__(self, agents, interval=0.05, timeout=0.3):
        self.agents = list(agents)
        self.interval, self.timeout = interval, timeout
        self.samples = {a.name: [] for a in self.agents}
        self._stop = threading.Event()
        self._threads = []
        self._lock = threading.Lock()
        self.wall_offset = time.time() - time.monotonic()  # the judge's clock is the wall's

    def add(self, agent):
        with self._lock:
            self.agents.append(agent)
            self.samples.setdefault(agent.name, [])
        self._spawn(agent)

    def _spawn(self, agent):
        self._threads += start_threads(self._run, [(agent,)])

    def _run(self, agent):
        while not self._stop.is_set():
            sent = time.monotonic()
            v = LeaderView.of(*agent.leader(self.timeout))
            recv = time.monotonic()
            with self._lock:
                self.samples[agent.name].append((sent, recv, v.is_leader, v.term, v.body))
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

    def judged(self):
        """{name: [judge.Sample]}, wall clock: the monotonic stamps moved by this sampler's
        offset, taken once so that to_mono undoes the move exactly."""
        def vu(b):
            try:
                return parse_rfc3339(b["validUntil"]) if b.get("validUntil") else None
            except ValueError:
                return None
        with self._lock:
            return {name: [judge.Sample.from_monotonic(name, sent, recv, yes, vu(b), self.to_wall,
                                                       status=None if b else 0, note=b)
                           for sent, recv, yes, _, b in ss]
                    for name, ss in self.samples.items()}

    def to_wall(self, t):
        return t + self.wall_offset

    def to_mono(self, t):
        return t - self.wall_offset

    def intervals(self):
        """Per agent, [first sent, last received] (monotonic) of its runs of consecutive yes."""
        return {name: [(self.to_mono(r.start), self.to_mono(r.answered)) for r in judge.yes_runs(ss)]
                for name, ss in self.judged().items()}

    def overlaps(self):
        """The judge's answers overlaps (the tier fails on them; definite ones among them) as
        (a, (start, end), b, (start, end)), monotonic, a the one that began first. A sampler
        that got no answer at all judged nothing: that fails."""
        pods = self.judged()
        if not any(s.answered for ss in pods.values() for s in ss):
            raise judge.Verdict([("vacuous", f"the sampler got no answer from {sorted(pods)}: "
                                  "no overlap judged")])
        _, possible = judge.overlaps(pods)
        return [(o.old.pod, (self.to_mono(o.old.start), self.to_mono(o.old.answered)),
                 o.new.pod, (self.to_mono(o.new.start), self.to_mono(o.new.answered)))
                for o in possible if o.kind == "answers"]

    def leader_spans(self):
        """All yes-spans as (start, end, name), sorted by start."""
        return sorted((s[0], s[1], n) for n, spans in self.intervals().items() for s in spans)

    def first_yes_after(self, t, exclude=()):
        """(sent, name) of the first yes asked at or after `t` of an agent not in `exclude`."""
        with self._lock:
            return min(((sent, name) for name, ss in self.samples.items() if name not in exclude
                        for sent, _, yes, _, _ in ss if yes and sent >= t), default=None)

    def yes_bodies(self, name):
        """The /leader bodies of agent `name`'s yes answers, in order."""
        with self._lock:
            return [b for _, _, yes, _, b in self.samples.get(name, []) if yes]

    def last_valid_until(self, name):
        """The latest validUntil (wall clock, seconds since the epoch) agent `name` handed out."""
        return max((parse_rfc3339(b["validUntil"]) for b in self.yes_bodies(name)
                    if b.get("validUntil")), default=None)

    def count(self):
        with self._lock:
            return sum(len(s) for s in self.samples.values())
