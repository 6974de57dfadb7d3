"""The one judge of "two leaders", for every tier (control plane: lib/sampler.py; chaos:
lib/analysis.py over lib/sampler_process.py; node: node/judge.py's Sampler). The samplers differ
in where they run; each turns its answers into `Sample`s and asks this module what they prove.

Clock: every time here is wall clock, seconds since the epoch (time.time(), CLOCK_REALTIME), the
clock of validUntil and of the node's apps. A tier that stamps with time.monotonic() converts
through Sample.from_monotonic with its own (monotonic, wall) pairs.

yes span      one "yes" answer covers [send, end], end = the answer's validUntil where it carries
              one (the promise runs until then), else its receive time; never less than the
              receive time (a yes received late was still a yes at some instant before it).
yes run       a pod's consecutive yes answers (ordered by send): [first send, largest end].
definite      a yes of pod B lies strictly between two yes answers of one run of pod A (A's first
overlap       answer arrived before B's question was sent, and A said yes again to a question sent
              after B's answer arrived): two pods said yes at one instant, proven.
possible      two pods' runs intersect. `answers` when their [first send, last receive] parts
overlap       already do (the answers alone cannot rule out two yes at one instant), else only by
              a promise: a yes given while another pod's validUntil still ran.
life          a pod is judged from its first answer to the end its caller gives (the start of its
              deletion or fault), within the window; no pod judged in the window fails.
gap           within its life, outside its exemptions, a pod's questions are at most GAP_FACTOR
              x interval apart (and its life does not outlast its last question by more): a
              sampler that stopped, or looked at half a life, proves nothing.
exemption     a killed or frozen pod: an interval with an end (the fault's start to the last
              validUntil the pod gave out, or the fault's end), in which its gaps are not judged
              and a promise-only overlap it is the old side of is excused. Never a definite or
              an answers overlap.
"""

import bisect
import itertools
import math

GAP_FACTOR = 2  # a gap over GAP_FACTOR x interval fails (the node tier's rule since it began)


class Sample:
    """One question and its answer; times wall clock seconds. `status`: the HTTP code or an
    error's name; `note`: the tier's own (identity, term...), carried for reports."""
    __slots__ = ("pod", "send", "recv", "yes", "valid_until", "status", "note")

    def __init__(self, pod, send, recv, yes, valid_until=None, status=None, note=None):
        self.pod, self.send, self.recv, self.yes = pod, send, recv, yes
        self.valid_until, self.status, self.note = valid_until, status, note

    @classmethod
    def from_monotonic(cls, pod, send, recv, yes, valid_until, to_wall, **kw):
        """send and recv are time.monotonic(); valid_until is already wall clock (as answered);
        to_wall maps the first to the second (analysis.mono_to_wall_fn)."""
        return cls(pod, to_wall(send), to_wall(recv), yes, valid_until, **kw)

    @property
    def answered(self):
        """An HTTP answer came (status None: the tier does not say, taken as answered)."""
        return self.status is None or (isinstance(self.status, int) and self.status > 0)

    @property
    def end(self):
        return self.recv if self.valid_until is None else max(self.recv, self.valid_until)

    def row(self):
        return [self.pod, round(self.send, 6), round(self.recv, 6), self.yes, self.status]


class YesRun:
    __slots__ = ("pod", "samples", "start", "first_recv", "last_send", "answered", "end")

    def __init__(self, samples):
        self.pod, self.samples = samples[0].pod, samples
        self.start, self.first_recv = samples[0].send, samples[0].recv
        self.last_send = samples[-1].send
        self.answered = max(s.recv for s in samples)  # the last receive
        self.end = max(s.end for s in samples)

    def __repr__(self):
        return f"{self.pod}[{self.start:.3f}..{self.end:.3f}]"


class Overlap:
    __slots__ = ("kind", "old", "new", "at", "seconds")

    def __init__(self, kind, old, new, at, seconds):
        self.kind, self.old, self.new, self.at, self.seconds = kind, old, new, at, seconds

    def __repr__(self):
        return f"{self.kind}({self.old.pod}, {self.new.pod}, at {self.at:.3f}, {self.seconds:.4f}s)"


class Exemption:
    """A killed or frozen pod over [start, end]; `why` says which fault."""
    __slots__ = ("pod", "start", "end", "why")

    def __init__(self, pod, start, end, why):
        if end is None or not math.isfinite(end) or start is None or not math.isfinite(start):
            raise ValueError(f"exemption of {pod} ({why}) without an end: [{start}, {end}]")
        if end < start:
            raise ValueError(f"exemption of {pod} ({why}) ends before it starts: [{start}, {end}]")
        self.pod, self.start, self.end, self.why = pod, start, end, why

    def covers(self, t):
        return self.start <= t <= self.end


class Verdict(AssertionError):
    """What failed: reasons [(kind, message)], kind one of definite, answers, promise, gap,
    vacuous, no-handover."""

    def __init__(self, reasons):
        self.reasons = reasons
        super().__init__("; ".join(m for _, m in reasons[:8]) +
                         (f"; ... {len(reasons) - 8} more" if len(reasons) > 8 else ""))

    def kinds(self):
        return {k for k, _ in self.reasons}


def by_pod(samples):
    out = {}
    for s in sorted(samples, key=lambda s: s.send):
        out.setdefault(s.pod, []).append(s)
    return out


def yes_runs(samples):
    """One pod's samples (sorted by send) -> its YesRuns."""
    return [YesRun(list(run)) for yes, run in itertools.groupby(samples, lambda s: s.yes) if yes]


def overlaps(pods):
    """{pod: samples sorted by send} -> (definite, possible): lists of Overlap; possible ones
    are kind "answers" or "promise" (module doc)."""
    pods = {p: sorted(ss, key=lambda s: s.send) for p, ss in pods.items()}
    sends = {p: [s.send for s in ss] for p, ss in pods.items()}
    runs = {p: yes_runs(ss) for p, ss in pods.items()}
    definite, possible = [], []
    names = sorted(runs)
    for a in names:
        for b in names:
            if a == b:
                continue
            for ra in runs[a]:
                # B's questions sent inside (A's first answer, A's last question)
                inside = pods[b][bisect.bisect_right(sends[b], ra.first_recv):
                                 bisect.bisect_left(sends[b], ra.last_send)]
                for s in inside:
                    if s.yes and s.recv < ra.last_send:
                        definite.append(Overlap("definite", ra, YesRun([s]), s.send,
                                                s.recv - s.send))
            if a > b:
                continue
            for ra in runs[a]:
                for rb in runs[b]:
                    lo, hi = max(ra.start, rb.start), min(ra.end, rb.end)
                    if lo >= hi:
                        continue
                    old, new = (ra, rb) if ra.start <= rb.start else (rb, ra)
                    answered = max(ra.start, rb.start) < min(ra.answered, rb.answered)
                    possible.append(Overlap("answers" if answered else "promise", old, new, lo,
                                            hi - lo))
    return definite, possible


def handovers(pods):
    """Changes of the pod saying yes, in the order runs began: [(old run, new run)]."""
    flat = sorted((r for ss in pods.values() for r in yes_runs(ss)), key=lambda r: r.start)
    return [(a, b) for a, b in zip(flat, flat[1:]) if a.pod != b.pod]


def lateness(samples, interval, t0=float("-inf"), t1=float("inf")):
    """The most the sampler was late with a question inside [t0, t1]: its send after the later
    of (the previous send + interval) and (the previous answer): the part of a gap the pod did
    not cause."""
    late = [b.send - max(a.send + interval, a.recv) for a, b in zip(samples, samples[1:])
            if t0 <= b.send <= t1]
    return max(late, default=0.0)


def gap_report(pods, interval):
    """One line: the longest gap between two sends to one pod, and the gaps over
    GAP_FACTOR x interval, told apart by the answer before each: "slow answer" when it took more
    than the interval (the pod or the network was slow: the sampler waited for it), else
    "sampler late" (it answered in time and the next question still went out late)."""
    worst, slow, late, n = (0.0, None, 0.0), 0, 0, 0
    for pod, ss in pods.items():
        n += len(ss)
        for a, b in zip(ss, ss[1:]):
            gap = b.send - a.send
            if gap > worst[0]:
                worst = (gap, pod, a.recv - a.send)
            if gap > GAP_FACTOR * interval:
                if a.recv - a.send > interval:
                    slow += 1
                else:
                    late += 1
    most_late = max((lateness(ss, interval) for ss in pods.values()), default=0.0)
    return (f"{n} samples of {len(pods)} pods; longest gap {worst[0] * 1000:.0f} ms "
            f"({worst[1]}, the answer before it took {worst[2] * 1000:.0f} ms); gaps over "
            f"{GAP_FACTOR * interval * 1000:.0f} ms: {slow} after a slow answer, {late} sampler "
            f"late; the sampler at most {most_late * 1000:.0f} ms late")


def sample_gaps(samples, t0, t1):
    """Max gap between consecutive sends inside [t0, t1], and the count there."""
    ts = [s.send for s in samples if t0 <= s.send <= t1]
    gaps = [b - a for a, b in zip(ts, ts[1:])]
    return (max(gaps) if gaps else float("inf")), len(ts)


def uncovered(lo, hi, holes):
    """[lo, hi] minus the holes [(a, b)]: [(a, b)] in order."""
    out = []
    for a, b in sorted(holes):
        if a > lo:
            out.append((lo, min(a, hi)))
        lo = max(lo, b)
    if lo < hi:
        out.append((lo, hi))
    return [(a, b) for a, b in out if b > a]


def coverage(pods, t0, t1, interval, ends=None, exemptions=()):
    """Non-vacuity, the module's life and gap rules (`ends`: {pod: end of its life}): returns
    (reasons [(kind, message)], judged pods)."""
    ends = ends or {}
    reasons, judged = [], []
    bound = GAP_FACTOR * interval
    for pod, ss in sorted(pods.items()):
        first = next((s for s in ss if s.answered), None)
        if first is None:
            continue
        lo, hi = max(t0, first.send), min(t1, ends.get(pod, math.inf))
        if hi - lo < bound:
            continue
        judged.append(pod)
        holes = [(e.start, e.end) for e in exemptions if e.pod == pod]
        for a, b in uncovered(lo, hi, holes):
            inside = [s for s in ss if a <= s.send <= b]
            # the edges count: a question must come within the bound of each end of the window
            edges = [a] + [s.send for s in inside] + [b]
            last = len(edges) - 2
            gap, at, i = max((y - x, x, i) for i, (x, y) in enumerate(zip(edges, edges[1:])))
            if gap > bound + 1e-9:
                what = "the sampler stopped" if i == last else "a gap"
                reasons.append(("gap", f"{pod}: {what}: {gap * 1000:.0f} ms without a question "
                                f"from {at:.3f} (life {lo:.3f}..{hi:.3f}, bound "
                                f"{bound * 1000:.0f} ms; {gap_report({pod: inside}, interval)})"))
    if not judged:
        reasons.append(("vacuous", f"no pod was judged in [{t0:.3f}, {t1:.3f}]: no life of at "
                        f"least {bound * 1000:.0f} ms sampled (pods: {sorted(pods)})"))
    return reasons, judged


def judge(pods, t0, t1, interval, ends=None, exemptions=(), fail_on=("definite", "answers"),
          require_handover=False):
    """Every rule over [t0, t1]; raises Verdict with every reason, else returns (definite,
    possible, judged pods). fail_on: the overlap kinds that fail this tier (definite always; an
    exempted promise overlap never, module doc)."""
    for e in exemptions:
        if not isinstance(e, Exemption):
            raise TypeError(f"not an Exemption: {e!r}")
    pods = {p: sorted(ss, key=lambda s: s.send) for p, ss in pods.items()}
    definite, possible = overlaps(pods)
    reasons = [("definite", f"DEFINITE OVERLAP: {o}") for o in definite]
    for o in possible:
        if o.kind not in fail_on:
            continue
        if o.kind == "promise" and any(e.pod == o.old.pod and e.covers(o.new.start)
                                       for e in exemptions):
            continue
        reasons.append((o.kind, f"{'ANSWERS' if o.kind == 'answers' else 'PROMISE'} OVERLAP: {o}"))
    gaps, judged = coverage(pods, t0, t1, interval, ends, exemptions)
    reasons += gaps
    if require_handover and not handovers(pods):
        reasons.append(("no-handover", f"a handover was required in [{t0:.3f}, {t1:.3f}] and "
                        f"none was seen (yes runs: {[r for ss in pods.values() for r in yes_runs(ss)]})"))
    if reasons:
        raise Verdict(reasons)
    return definite, possible, judged


def stopped_before(what, end, valid_until, margin=0.0):
    """Leader-only work (a gated run, a unit) that ended at `end` ended by the last validUntil
    its gate or app was given, less `margin` (the gate's teardown margin): the rule every gated
    run meets, the rival's yes coming only after that validUntil. Returns the room left (s)."""
    assert end is not None, f"{what}: still running"
    room = valid_until - margin - end
    assert room >= 0, f"{what} stopped {-room:.3f}s after validUntil - {margin}s"
    return room
