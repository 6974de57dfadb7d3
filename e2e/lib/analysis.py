"""Turns the sampler's answers and the driver's fault log into the chaos report.

Definitions (all times are time.monotonic() of this machine, shared by every process):

claim span    a maximal run of consecutive "yes" answers (ordered by the instant the question was
              sent) of one slot with one identity and one term, from the first such question's
              sending to the last such answer's arrival. Every "yes" counts, however late it
              arrived: a question asked while an agent was paused and answered "yes" after it
              resumed makes the span cover the pause.
overlap       e2e/lib/judge.py's: two slots' runs of yes answers whose [first send, last
              receive] intersect. Must be 0. (A run is not cut where the reported term changes: a
              stale client-go leader that has read the new record still says "yes", and it began
              first.)
lead span     the same, built only from answers that arrived within the client timeout (150 ms):
              what a client with that timeout would have believed. The timeline and the
              leaderless time are made of lead spans.
handover gap  for every change of leader (consecutive lead spans, in time, of a different slot,
              identity or term): from the arrival of the old leader's last "yes" to the sending of
              the question that got the new leader's first "yes".
fault->leader for every fault after whose injection the leader's lead span ended before the fault
              was healed (it cost the leadership): from the injection to the sending of the
              question that got the next lead span's first "yes" (any slot, the same one
              included: a leader cut off from the apiserver may take its own lease back).
leaderless    the time between the first lead span's start and the end of sampling that no lead
              span covers.
promise       a leasehold "yes" carries validUntil. For every handover the new leader's first "yes"
              (sent, wall clock) must come after the largest validUntil the old leader handed out,
              unless the old leader was released on purpose with --release-on-shutdown=immediate.
              A break is definite when that yes also arrived before the validUntil (it held while
              the promise ran), else possible; the tiers fail on definite ones and report the
              others (e2e/lib/judge.py keeps the two apart the same way).
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
    by_term=False keeps one span across changes of the reported term (a process that goes on
    saying "yes" while the record it last read names a newer term is still one claim)."""
    out = {}
    for slot, ss in samples.items():
        res, cur = [], None
        for sent, recv, status, yes, term, vu, name in ss:
            if timeout is not None and recv - sent > timeout:
                # A client with this timeout saw no answer: "not leader". A late "yes" is counted
                # by the claim spans, not here.
                yes = False
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
    """{slot: [judge.Sample]}: the answers as the judge's one sample type. to_wall
    (mono_to_wall_fn) moves the monotonic stamps to the wall clock of validUntil; without it
    they stay monotonic and validUntil is dropped (answers judged alone). timeout: an answer
    that took longer is a "no" (a client with that timeout saw none). Each keeps its raw
    tuple as note."""
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
    res = []
    for a, b in zip(flat, flat[1:]):
        if (a["slot"], a["identity"], a["term"]) == (b["slot"], b["identity"], b["term"]):
            continue
        res.append((a, b, b["start"] - a["end"]))
    return res


def leaderless(lead, t0, t1):
    """Total time in [t0, t1] not covered by any lead span, and the list of gaps (start, end)."""
    iv = sorted((max(s["start"], t0), min(s["end"], t1)) for ss in lead.values() for s in ss
                if s["end"] > t0 and s["start"] < t1)
    gaps, cur = [], t0
    for a, b in iv:
        if a > cur:
            gaps.append((cur, a))
        cur = max(cur, b)
    if cur < t1:
        gaps.append((cur, t1))
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
    largest validUntil. exempt_slots_after_term: {slot: [t_sigterm...]} of agents released with
    `immediate` (their promises are knowingly given up). `definite`: that yes also arrived before
    it, so it held at an instant the promise still ran (e2e/lib/judge.py's words); else the yes
    may have held only from after the validUntil (a possible violation, as the judge's `promise`
    overlap)."""
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

