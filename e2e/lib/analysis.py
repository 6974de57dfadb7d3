"""Turns the sampler's answers and the driver's fault log into the chaos report. The figures
(claim span, overlap, lead span, handover gap, fault -> new leader, leaderless, promise
violations) are defined in e2e/chaos/README.md, "The figures". All times are time.monotonic() of
this machine, shared by every process, but validUntil (wall clock).

An overlap is e2e/lib/judge.py's answers overlap of two slots' yes runs, late answers included,
not cut where the reported term changes: a stale client-go leader that has read the new record
still says "yes", and it began first.
"""

import bisect
import collections

from e2e.lib import judge


def load_samples(path):
    """{slot: [(sent, recv, status, yes, term, validUntil or None, identity)]} sorted by sent."""
    out = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 8:
                continue
            slot, sent, recv, status, yes, term, vu, name = p[:8]
            out[slot].append((float(sent), float(recv), int(status), yes == "1",
                              None if term == "-" else int(term),
                              None if vu == "-" else float(vu), name))
    for ss in out.values():
        ss.sort(key=lambda s: s[0])
    return dict(out)


def spans(samples, timeout=None, by_term=True):
    """Per slot, claim spans (timeout None) or lead spans (answers within timeout only):
    dicts with slot, identity, term, start, end, n (answers), max_vu (largest validUntil).
    by_term=False keeps one span across changes of the reported term (module doc)."""
    out = {}
    for slot, ss in samples.items():
        res, cur = [], None
        for sent, recv, status, yes, term, vu, name in ss:
            if timeout is not None and recv - sent > timeout:
                yes = False  # a client with this timeout saw no answer: "not leader"
            if yes and cur is not None and cur["identity"] == name and (
                    not by_term or cur["term"] == term):
                cur["end"] = max(cur["end"], recv)
                cur["n"] += 1
                if vu is not None:
                    cur["max_vu"] = max(cur["max_vu"] or 0, vu)
                continue
            if cur is not None:
                res.append(cur)
                cur = None
            if yes:
                cur = {"slot": slot, "identity": name, "term": term, "start": sent,
                       "first_recv": recv, "end": recv, "n": 1, "max_vu": vu}
        if cur is not None:
            res.append(cur)
        out[slot] = res
    return out


def judged(samples, to_wall=None, timeout=None):
    """{slot: [judge.Sample]}, each with its raw tuple as note. to_wall (mono_to_wall_fn) moves
    the monotonic stamps to the wall clock of validUntil; without it validUntil is dropped
    (answers judged alone). timeout: a slower answer is a "no", as in spans()."""
    move = to_wall or (lambda t: t)
    return {slot: [judge.Sample(slot, move(r[0]), move(r[1]),
                                r[3] and (timeout is None or r[1] - r[0] <= timeout),
                                r[5] if to_wall else None, r[2], r) for r in ss]
            for slot, ss in samples.items()}


def _span(run):
    """A judge.YesRun as a claim span (module doc), monotonic."""
    raw = [s.note for s in run.samples]
    vus = [r[5] for r in raw if r[5] is not None]
    return {"slot": run.pod, "identity": raw[0][6], "term": raw[0][4], "start": raw[0][0],
            "first_recv": raw[0][1], "end": max(r[1] for r in raw), "n": len(raw),
            "max_vu": max(vus) if vus else None}


def overlaps(samples, to_wall=None, timeout=None):
    """The judge's overlaps that fail this tier: two slots' yes runs whose answers intersect
    (e2e/lib/judge.py; the definite ones among them), as (old, new) claim spans."""
    _, possible = judge.overlaps(judged(samples, to_wall, timeout))
    return [(_span(o.old), _span(o.new)) for o in possible if o.kind == "answers"]


def coverage(samples, t0, t1, interval):
    """The judge's non-vacuity over [t0, t1] (each slot from its first answer; the sampler asks
    on its own clock, so a gap is the sampler's): [(kind, message)], judged slots."""
    return judge.coverage(judged(samples), t0, t1, interval)


def handovers(lead):
    """Consecutive lead spans in time whose leader differs: [(old span, new span, gap)]."""
    flat = sorted((s for ss in lead.values() for s in ss), key=lambda s: s["start"])
    return [(a, b, b["start"] - a["end"]) for a, b in zip(flat, flat[1:])
            if (a["slot"], a["identity"], a["term"]) != (b["slot"], b["identity"], b["term"])]


def leaderless(lead, t0, t1):
    """Total time in [t0, t1] not covered by any lead span, and the list of gaps (start, end)."""
    gaps = judge.uncovered(t0, t1, [(s["start"], s["end"]) for ss in lead.values() for s in ss])
    return sum(b - a for a, b in gaps), gaps


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    k = (len(v) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def dist(values):
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50": round(pct(values, 50), 3), "p99": round(pct(values, 99), 3),
            "max": round(max(values), 3), "min": round(min(values), 3)}


def fault_failovers(lead, faults):
    """For each fault that cost the leadership: (fault, old span, new span, seconds)."""
    flat = sorted((s for ss in lead.values() for s in ss), key=lambda s: s["start"])
    res = []
    for f in faults:
        t, healed = f["t"], f.get("t_heal") or f["t"]
        # The leader at injection: the lead span covering t, or the last one that started before
        # it and ended within 100 ms of it (a kill right between two samples).
        old = None
        for s in flat:
            if s["start"] <= t and s["end"] >= t - 0.1:
                old = s
        if old is None:
            continue
        if old["end"] > max(healed, t) + 0.1:
            continue  # the leader rode the fault out
        new = next((s for s in flat if s["start"] >= old["end"] and s is not old), None)
        if new is None:
            continue
        res.append((f, old, new, new["start"] - t))
    return res


def mono_to_wall_fn(pairs):
    """time.monotonic() -> wall clock, interpolated between (mono, wall) pairs recorded during
    the run (NTP may slew the wall clock against the monotonic one)."""
    pairs = sorted(pairs)

    def f(t):
        if len(pairs) == 1:
            return t + pairs[0][1] - pairs[0][0]
        i = min(max(bisect.bisect_left([p[0] for p in pairs], t), 1), len(pairs) - 1)
        (m0, w0), (m1, w1) = pairs[i - 1], pairs[i]
        off0, off1 = w0 - m0, w1 - m1
        k = 0.0 if m1 == m0 else min(1.0, max(0.0, (t - m0) / (m1 - m0)))
        return t + off0 + (off1 - off0) * k
    return f


def promise_violations(lead, claim, faults, exempt_slots_after_term, to_wall):
    """Handovers where the new leader's first "yes" was sent (wall clock) before the old leader's
    largest validUntil, definite or possible (e2e/chaos/README.md, "promise violations").
    exempt_slots_after_term: {slot: [t_sigterm...]} of agents released with `immediate`."""
    bad = []
    flat = sorted((s for ss in claim.values() for s in ss), key=lambda s: s["start"])
    for i, b in enumerate(flat):
        for a in flat[:i]:
            if a["slot"] == b["slot"] or a["max_vu"] is None or a["start"] >= b["start"]:
                continue
            new_first = to_wall(b["start"])
            if new_first < a["max_vu"] - 0.010:
                # The release's SIGTERM may come while the new leader's first "yes" is on its
                # way: that yes holds at some instant up to its answer's arrival, so it counts as
                # after the release if it arrived after it.
                last = b.get("first_recv", b["start"])
                exempt = any(a["start"] <= t <= last for t in
                             exempt_slots_after_term.get(a["slot"], []))
                definite = to_wall(last) < a["max_vu"] - 0.010
                bad.append({"old": a, "new": b, "by_s": round(a["max_vu"] - new_first, 3),
                            "exempt_immediate_release": exempt, "definite": definite})
    return bad


def fmt_span(s, t0):
    return (f"{s['slot']}[{s['identity']} term {s['term']}] "
            f"{s['start'] - t0:.3f}..{s['end'] - t0:.3f}s ({s['n']} answers)")

