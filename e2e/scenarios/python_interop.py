#!/usr/bin/env python3
"""Mixed-fleet e2e scenarios with the Python client's leader election: leasehold agents and
electors of PyPI `kubernetes` (e2e/interop/python_peer.py, in the venv of python_venv.sh) contend
for one lock on a real etcd + kube-apiserver: ConfigMapLock against `--lock-type configmaps`,
LeaseLock against `--lock-type leases`.

Usage: python3 -m e2e.scenarios.python_interop NAME [NAME...]   (or `all`, `list`).
Env: LEASEHOLD_BIN, LEASEHOLD_E2E_CP, LEASEHOLD_PYTHON_PEER_PY (the venv's python; default: the
output of python_venv.sh), LEASEHOLD_E2E_OUT (results root, default e2e/out),
LEASEHOLD_PY_INTEROP_CYCLES (the fault cycles of `mixed`).

Every member is asked /leader every SAMPLE_INTERVAL by e2e/lib/sampler_process.py (its own
process; its doc says when a "yes" counts). Each overlap of two "yes" answers is attributed to the
member that started it, from the lock's own history (a watch with the admin credential):
  * the earlier leader X, if the later one Y took the lock lease-duration or more after X's last
    write (X led past its lease: a paused Python leader resumes and says "yes" until its renew
    round fails), if X's lock was released in between, or if X's last record is one the Python
    elector reads as unheld (it takes such a lock at once);
  * else Y, which took an unexpired lease.
Overlaps started by a Python elector are reported apart; one started by leasehold fails the
scenario. So do a leasehold record that the Python elector reads as unheld and a broken
validUntil promise of a leasehold leader.

Results: e2e/out/python-interop-<scenario>/result.json (overlaps by side, failover times per
direction, fault and lock kind, the rounds), samples.txt and the members' logs.
"""

import json
import os
import shutil
import signal
import sys
import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace

from e2e.lib import agent, analysis, sampler_process
from e2e.lib.agent import Agent, never_leads
from e2e.lib.common import MONO_TO_WALL, REPO, leasehold_binary, log, wait_until
from e2e.lib.controlplane import RUN, Namespace, ns_name
from e2e.lib.timings import MIXED
from e2e.lib.lockwatch import LockWatcher, record_of
from e2e.lib.members import Fleet, PyPeer, body_of, family_changes, handovers
from e2e.lib.runner import Registry

SCENARIOS = Registry()
scenario = SCENARIOS.add

SAMPLE_INTERVAL, CLIENT_TIMEOUT = 0.020, 0.150  # s, as the chaos suite
# The driver waits for states as often as the sampler asks.
wait_single_leader = partial(agent.wait_single_leader, interval=SAMPLE_INTERVAL)
FAILOVER_TIMEOUT = 30.0
# Slack of the lock history's timestamps when deciding whether a takeover came lease-duration
# after the previous holder's last write: both are the watch's arrival times in this process,
# which a loaded machine delays by up to some 100 ms each. (With a 5 s lease, 40 takeovers from
# a stale Python leader measured 4.99-5.12 s after its last write, both cores loaded.)
TAKEOVER_TOLERANCE = 0.5
# The Python members run in zones other than UTC: ConfigMapLock writes local times without a zone,
# which a reader must not mistake for the lease's expiry.
PY_TZ = ("PYT-5:30", "QYT+3:30")

LH, PY = Agent.family, PyPeer.family


# ------------------------------------------------------------------------------- members

def view_of(m):
    """What a member's /leader says, briefly."""
    v = m.view()
    return {"status": v.status, "name": v.holder, "isLeader": v.body.get("isLeader"),
            "term": v.term, **{k: v.body[k] for k in ("reason", "termReliable") if k in v.body}}


def says_no(m):
    """m answered, and not "I lead" (a question that timed out on a loaded machine is no answer)."""
    st, b = body_of(m)
    return st is not None and b.get("isLeader") is not True


# ------------------------------------------------------------------------------- lock history

def python_sees_unheld(rec):
    """Whether the Python elector (kubernetes 37.0.2) takes this record at once: ConfigMapLock.get
    and LeaseLock.get_lock_object keep only truthy fields, and try_acquire_or_renew updates the
    lock at once when any of the four is missing (leaderelection.py:165-172)."""
    if rec is None or rec.get("unparsable"):
        return True
    return not (rec.get("holderIdentity") and rec.get("leaseDurationSeconds")
                and rec.get("acquireTime") and rec.get("renewTime"))


def holder(rec):
    """The holder a record names ("" for none), None for a deleted or unreadable one."""
    if rec is None or rec.get("unparsable"):
        return None
    return rec.get("holderIdentity") or ""


class RecordWatcher(LockWatcher):
    """The LockWatcher of one lock, whose history is (monotonic arrival time, resourceVersion,
    record): record_of's dict, or None for a deleted object."""

    def __init__(self, cp, ns, lock_type):
        super().__init__(cp, ns, (lock_type.rstrip("s"),), parse=record_of)

    def history(self):
        return [(t, rv, None if typ == "DELETED" else rec)
                for t, _, typ, rv, rec in super().history(self.kinds[0])]

    def current(self):
        """The holder of the last version seen (None before any, or if unreadable)."""
        h = self.history()
        return holder(h[-1][2]) if h else None

    def writes_since_acquired(self, identity):
        """Records naming `identity` since the lock last changed to it (0 if it does not hold)."""
        n = 0
        for _, _, rec in self.history():
            n = n + 1 if holder(rec) == identity else 0
        return n


# ------------------------------------------------------------------------------- analysis

def acquisitions(events, identity, until=float("inf")):
    """(index, time) of each version where the lock changed to `identity`, up to `until`."""
    return [(i, t) for i, (t, _, rec) in enumerate(events) if t <= until
            and holder(rec) == identity and (i == 0 or holder(events[i - 1][2]) != identity)]


def left_over(x_ident, y_ident, new_start, events):
    """Whether y's "yes" from new_start belongs to a term that x has since taken from it: y last
    took the lock (up to a second after new_start, for a late watch event, as attribute allows)
    before x last took it (up to new_start). A paused Python leader resumes saying "yes" until its
    renew round fails, and a change of what it reports starts a new span there: that span is
    no takeover from x, so neither x's overlap nor a break of x's promise."""
    ys = acquisitions(events, y_ident, new_start + 1.0)
    xs = acquisitions(events, x_ident, new_start)
    return bool(ys and xs and xs[-1][1] > ys[-1][1])


def attribute(old, new, events, by_ident):
    """(family, why) of the member that started the overlap of claim spans old (began first) and
    new; see the module doc. A newer claim whose first answer came past the client timeout and
    after the older claim's last answer may hold only from after the old one ended: the late
    answerer's doing (a Python peer whose HTTP thread stalled, or leasehold just the same)."""
    x, y = by_ident.get(old["identity"]), by_ident.get(new["identity"])
    late = new.get("first_recv", new["start"]) - new["start"]
    if late > CLIENT_TIMEOUT and new.get("first_recv", new["start"]) > old.get("end", new["start"]):
        return y.family, (f"{y.name}'s first yes came {late:.2f}s after its question, after "
                          f"{x.name}'s last yes: it may be from after it")
    if left_over(x.identity, y.identity, new["start"], events):
        return y.family, f"{y.name} said yes after {x.name} took the lock from it"
    acq = acquisitions(events, y.identity)
    before = [a for a in acq if a[1] <= new["start"] + 1.0]
    pick = before[-1] if before else (acq[0] if acq else None)
    if pick is None:
        return y.family, f"{y.name} said yes, but the lock never named it"
    i_acq, t_acq = pick
    xs = [(i, t, rec) for i, (t, _, rec) in enumerate(events[:i_acq]) if holder(rec) == x.identity]
    if not xs:
        return x.family, f"{x.name} said yes, but the lock never named it before {y.name} took it"
    i_w, t_w, rec_w = xs[-1]
    between = [holder(rec) for _, _, rec in events[i_w + 1:i_acq]]
    if y.family == PY and python_sees_unheld(rec_w):
        return x.family, f"{x.name} wrote a record the Python elector reads as unheld: {rec_w}"
    if "" in between:
        return x.family, f"{x.name} said yes after its lock was released"
    if t_acq - t_w >= MIXED.lease - TAKEOVER_TOLERANCE:
        return x.family, (f"{x.name} led past its lease ({y.name} took the lock "
                          f"{t_acq - t_w:.2f}s after {x.name}'s last write)")
    return y.family, (f"{y.name} took an unexpired lease ({t_acq - t_w:.2f}s after "
                      f"{x.name}'s last write, lease {MIXED.lease:g}s)")


def fmt_dist(d):
    return "-" if not d.get("n") else f"{d['p50']:.2f}/{d['max']:.2f}"


def analyse(run):
    """Overlaps by side, failover times, leadership changes of a Run; writes result.json in its
    out dir; returns it."""
    samples = analysis.load_samples(run.smp.path)
    by_ident = run.fleet.by_identity()
    events = run.watcher.history()
    t0, rounds = run.t0, run.rounds
    at = partial(analysis.fmt_span, t0=t0)
    overlaps = []
    for a, b in analysis.overlaps(samples):
        old, new = sorted((a, b), key=lambda sp: sp["start"])
        if old["identity"] not in by_ident or new["identity"] not in by_ident:
            continue
        fam, why = attribute(old, new, events, by_ident)
        secs = min(a["end"], b["end"]) - max(a["start"], b["start"])
        overlaps.append({"started_by": fam, "why": why, "overlap_s": round(secs, 3),
                         "old": at(old), "new": at(new)})
    # Failover: from the fault to the first "yes" (the question's sending) of the next leader.
    failover = {}
    for r in rounds:
        firsts = [s[0] for s in samples.get(r["new_slot"], [])
                  if s[3] and s[6] == r["new"] and s[0] >= r["t_fault"]]
        r["failover_s"] = round(min(firsts) - r["t_fault"], 3) if firsts else None
        others = sorted((s[0], s[6]) for slot, ss in samples.items() for s in ss
                        if s[3] and s[6] not in (r["new"], r["target"]) and r["t_fault"] <= s[0]
                        and (not firsts or s[0] < min(firsts)))
        r["other_yes_before"] = others[0][1] if others else None
        if firsts:
            failover.setdefault(r["direction"], {}).setdefault(r["fault"], []).append(
                r["failover_s"])
    failover_dist = {d: {f: analysis.dist(v) for f, v in sorted(fs.items())}
                     for d, fs in sorted(failover.items())}
    for d, fs in failover.items():
        failover_dist[d]["all"] = analysis.dist([x for v in fs.values() for x in v])
    # Leadership changes: from the lock's history (each takeover once; a release in between
    # does not count), and as the sampler saw them (lead spans: answers within the client
    # timeout; a stale "yes" after a pause counts there as a change too).
    changes = family_changes(handovers([holder(rec) for _, _, rec in events], by_ident))
    lead = analysis.spans(samples, CLIENT_TIMEOUT, by_term=False)
    seen_changes = family_changes(handovers([sp["identity"] for sp in sorted(
        (s for ss in lead.values() for s in ss), key=lambda s: s["start"])], by_ident))
    lh_ids = {m.identity for m in run.fleet.members if m.family == LH}
    unheld = [{"t": round(t - t0, 3), "rv": rv, "record": rec} for t, rv, rec in events
              if holder(rec) in lh_ids and python_sees_unheld(rec)]
    # The fencing token: every acquisition by leasehold writes a count above any seen before.
    term_back, top = [], None
    for i, (t, rv, rec) in enumerate(events):
        tr = rec.get("transitions") if rec and not rec.get("unparsable") else None
        h = holder(rec)
        if h in lh_ids and (i == 0 or holder(events[i - 1][2]) != h) and top is not None \
                and (not isinstance(tr, int) or tr <= top):
            term_back.append({"t": round(t - t0, 3), "holder": h, "transitions": tr,
                              "max_seen_before": top})
        if isinstance(tr, int):
            top = tr if top is None else max(top, tr)
    # validUntil promises of leasehold leaders (analysis.promise_violations): a definite break
    # fails; a possible one (a slow Python answer under load) is reported.
    promises = {True: [], False: []}
    for p in analysis.promise_violations(lead, analysis.spans(samples, None, by_term=False), [],
                                         run.exempt, lambda t: t + MONO_TO_WALL):
        if p["old"]["identity"] in lh_ids and not p["exempt_immediate_release"] and not \
                left_over(p["old"]["identity"], p["new"]["identity"], p["new"]["start"], events):
            promises[p["definite"]].append({"old": at(p["old"]), "new": at(p["new"]),
                                            "by_s": p["by_s"]})
    res = {
        "scenario": run.name, "lock_type": run.lock_type, "run": RUN,
        "leasehold_binary": leasehold_binary(),
        "python_kubernetes": "37.0.2", "timings": MIXED.strings(),
        "members": [m.describe() for m in run.fleet.members],
        "samples": sum(len(v) for v in samples.values()),
        "overlaps_by_side": {side: sum(1 for o in overlaps if o["started_by"] == side)
                             for side in (LH, PY)},
        "overlaps": overlaps,
        "leadership_changes": changes,
        "leadership_changes_seen_by_sampler": seen_changes,
        "failover_s": failover_dist,
        "leasehold_records_unheld_for_python": unheld,
        "leasehold_term_not_above_seen": term_back,
        "promise_violations_leasehold": promises[True],
        "promise_possible_leasehold": promises[False],
        "rounds": [{k: (round(v - t0, 3) if k.startswith("t_") and isinstance(v, float) else v)
                    for k, v in r.items()} for r in rounds],
        "notes": run.notes,
    }
    (run.out / "result.json").write_text(json.dumps(res, indent=1, default=str))
    for m in run.fleet.members:
        try:
            shutil.copy(m.log_path, run.out / "logs" / m.log_path.name)
        except OSError:
            pass
    log(f"{run.name} ({run.lock_type}): {len(rounds)} rounds, {res['samples']} samples; "
        f"leadership changes in the lock: {changes} (seen by the sampler: {seen_changes})")
    log(f"  {'direction':<20}{'fault':<8}{'n':>3}  failover p50/max (s)")
    for d, fs in failover_dist.items():
        for f, dd in fs.items():
            log(f"  {d:<20}{f:<8}{dd['n']:>3}  {fmt_dist(dd)}")
    for o in overlaps:
        log(f"  overlap started by {o['started_by']}: {o['overlap_s']:.3f}s, {o['why']}; "
            f"{o['old']} / {o['new']}")
    log(f"  overlaps: leasehold {res['overlaps_by_side'][LH]}, python "
        f"{res['overlaps_by_side'][PY]}; leasehold records unheld for Python: {len(unheld)}; "
        f"term not above seen: {len(term_back)}; leasehold promise violations: "
        f"{len(promises[True])} (possible, asked before and answered after the validUntil: "
        f"{len(promises[False])})")
    log(f"  result: {run.out / 'result.json'}")
    return res


def check(res):
    """The scenario's verdict on what analyse() found."""
    bad, unheld = [], res["leasehold_records_unheld_for_python"]
    if res["overlaps_by_side"][LH]:
        bad.append(f"{res['overlaps_by_side'][LH]} overlap(s) started by leasehold")
    if unheld:
        bad.append(f"{len(unheld)} record(s) of a leasehold holder that the Python elector reads "
                   f"as unheld, e.g. {unheld[0]}")
    if res["promise_violations_leasehold"]:
        bad.append(f"leasehold validUntil broken: {res['promise_violations_leasehold'][:2]}")
    assert not bad, "; ".join(bad)


# ------------------------------------------------------------------------------- the driver

class Run:
    """One fleet on one lock: the members (`slots`: lh<i> leasehold agents, py<i> Python
    electors; none started yet), the lock's history, the sampler and the rounds."""

    def __init__(self, s, cp, name, lock_type, slots):
        self.name, self.lock_type = name, lock_type
        self.ns = Namespace(cp, ns_name(f"e2e-py-{name.replace('_', '-')}"[:40]))
        root = Path(os.environ.get("LEASEHOLD_E2E_OUT") or REPO / "e2e" / "out")
        self.out = root / f"python-interop-{name}"
        shutil.rmtree(self.out, ignore_errors=True)
        (self.out / "logs").mkdir(parents=True)
        self.fleet = Fleet(s)
        for slot in slots:
            self.fleet.add(slot, self.factory(slot), start=False)
        self.watcher = RecordWatcher(cp, self.ns, lock_type).start()
        self.rounds = []
        self.exempt = {}  # sampler slot -> [SIGTERM times of agents released with immediate]
        self.notes = {}

    def factory(self, slot):
        if slot.startswith("py"):
            tz = PY_TZ[int(slot[2:]) % 2]
            return lambda name, port, gen: PyPeer(self.ns, name, self.lock_type, tz, port=port)
        # Release-on-shutdown alternates with each incarnation (from 1): lh0's first immediate.
        releases = ("safe", "immediate") if slot == "lh0" else ("immediate", "safe")
        return lambda name, port, gen: Agent(self.ns, name, lock_type=self.lock_type,
                                             timings=MIXED, release=releases[gen % 2], port=port)

    def execute(self, body):
        """Runs body() under the sampler (its slots are fixed from here on), analyses the run even
        if body raised, and checks the result; returns it."""
        self.smp = sampler_process.Started(self.out / "samples.txt", SAMPLE_INTERVAL,
                                           CLIENT_TIMEOUT, self.fleet.sampler_slots())
        self.t0 = time.monotonic()
        try:
            body()
        finally:
            self.fleet.resume_all()
            self.smp.stop()
            self.watcher.stop()
            res = analyse(self)
        check(res)
        return res

    def wait_settled(self, leader):
        """The state a fault counts from: `leader` has renewed at least once since it acquired."""
        wait_until(lambda: self.watcher.writes_since_acquired(leader.identity) >= 2, 15,
                   what=f"{leader.name} to renew the lock once")

    def wait_followers_see(self, leader, followers, timeout=10):
        def seen():
            return all(body_of(f)[1].get("name") == leader.identity for f in followers)
        try:
            wait_until(seen, timeout, what="followers to read the leader's record")
        except AssertionError:
            views = {f.name: view_of(f) for f in followers}
            log(f"!!! followers do not see {leader.describe()} as the holder within {timeout}s "
                f"(faulting it all the same): {views}")
            self.notes.setdefault("followers_blind", []).append(views)

    def fault_round(self, fault, want):
        """Faults the current leader (`kill`: SIGKILL, `term`: SIGTERM, `pause`: SIGSTOP until
        the next leader leads, then SIGCONT) while the followers of the other family than `want`
        sit the round out (SIGSTOP), so that a follower of family `want` takes over."""
        fl = self.fleet
        leader = wait_single_leader(fl.alive(), FAILOVER_TIMEOUT, holder=self.watcher.current)
        self.wait_settled(leader)
        takers = [m for m in fl.alive() if m is not leader and m.family == want]
        held = [m for m in fl.alive() if m is not leader and m.family != want]
        assert takers, f"no {want} follower to take over from {leader.name}"
        self.wait_followers_see(leader, takers)
        if leader.family == PY:
            self.notes.setdefault("leasehold_view_of_python_leader", view_of(takers[0]))
        for m in held:
            fl.pause(m)
        t_fault = time.monotonic()
        r = {"fault": fault, "direction": f"{leader.family}→{want}", "target": leader.identity,
             "new": None, "new_slot": None, "t_fault": t_fault}
        if fault == "kill":
            leader.signal(signal.SIGKILL)
        elif fault == "term":
            if leader.family == LH and leader.release == "immediate":
                self.exempt.setdefault(leader.slot, []).append(t_fault)
            leader.term()
        else:
            fl.pause(leader)
        try:
            new = wait_single_leader(takers, FAILOVER_TIMEOUT,
                                     what=f"a {want} follower to lead after {fault} of "
                                          f"{leader.name}", holder=self.watcher.current)
        except AssertionError:
            views = {m.name: view_of(m) for m in takers}
            self.rounds.append({**r, "failed": f"no new leader: {views}"})
            raise AssertionError(f"no {want} follower took over within {FAILOVER_TIMEOUT:g}s "
                                 f"after {fault} of {leader.describe()}; they say: {views}") \
                from None
        took = time.monotonic() - t_fault
        for m in held:
            fl.resume(m)
        r.update(new=new.identity, new_slot=new.slot, driver_saw_s=round(took, 3))
        log(f"round {len(self.rounds) + 1}: {fault} {leader.describe()} -> {new.describe()} "
            f"after {took:.2f}s (as the driver saw it)")
        if fault == "kill":
            leader.wait(10)
        elif fault == "term":
            rc = leader.wait(MIXED.renew + 10)
            assert rc == 0, f"{leader.name} exited with {rc} after SIGTERM"
        else:
            self.wait_settled(new)
            fl.resume(leader)
            r["t_resume"] = time.monotonic()
            # Wait for the resumed one to stop claiming: the Python elector's renew round ends
            # renew-deadline after it began, plus a retry period and a request.
            wait_until(lambda: says_no(leader), MIXED.renew + 2 * MIXED.retry + 5, interval=0.02,
                       what=f"{leader.name} to stop leading after SIGCONT")
            r["stale_yes_after_resume_s"] = round(time.monotonic() - r["t_resume"], 3)
        self.rounds.append(r)
        if fault in ("kill", "term"):
            fl.replace(leader)
        return leader, new


def mixed(s, name, lock_type, n_python):
    """2 leasehold agents and n_python Python electors on `lock_type`, leasehold leading first.
    Each of LEASEHOLD_PY_INTEROP_CYCLES cycles (default 2) faults the leader by kill -9, SIGTERM
    and a pause, each once to move leadership either way."""
    cycles = int(os.environ.get("LEASEHOLD_PY_INTEROP_CYCLES", "2"))
    run = Run(s, s.control_plane(), name, lock_type,
              ["lh0", "lh1", *(f"py{i}" for i in range(n_python))])

    def body():
        run.fleet.start("lh0").wait_leader(20)
        for slot in list(run.fleet.slots)[1:]:
            run.fleet.start(slot)
        plan = [("kill", PY), ("kill", LH), ("term", PY), ("term", LH), ("pause", PY),
                ("pause", LH)] * cycles
        for fault, want in plan:
            run.fault_round(fault, want)
        wait_single_leader(run.fleet.alive(), FAILOVER_TIMEOUT, holder=run.watcher.current)
        time.sleep(1.0)  # the last leader's answers after its first (the sampler flushes at 1 s)
    ch = run.execute(body)["leadership_changes"]
    assert ch.get("python→leasehold", 0) >= 3 and ch.get("leasehold→python", 0) >= 3, \
        f"leadership did not move 3 times each way: {ch}"


SCENARIOS.bind(mixed, "mixed_configmap", "configmaps", 2, name="mixed_configmap")
SCENARIOS.bind(mixed, "mixed_lease", "leases", 1, name="mixed_lease")


# A leasehold follower takes an unexpired lock lease-duration after it last saw the lock change
# (the Python leader renews every retry-period, so at most retry-period before the kill), and it
# may need one more retry-period to notice; 2 s more absorb a loaded machine.
PY_LED_BOUND = MIXED.lease + MIXED.retry + 2.0


@scenario
def python_led_fleet_fails_over(s):
    """For each lock kind: a Python elector leads first; two leasehold agents join; the Python
    leader is killed -9, and a leasehold agent must lead within PY_LED_BOUND. Then a new Python
    elector joins and must not take the lock."""
    failures = []
    cp = s.control_plane()
    for lock_type in ("configmaps", "leases"):
        run = Run(s, cp, f"python_led_{lock_type}", lock_type, ["py0", "lh0", "lh1"])

        def body(run=run, lock_type=lock_type):
            py = run.fleet.start("py0")
            py.wait_leader(20)
            lhs = [run.fleet.start("lh0"), run.fleet.start("lh1")]
            for a in lhs:
                wait_until(lambda a=a: body_of(a)[0] is not None, 10, what=f"{a.name} to answer")
            t_up = time.monotonic()
            # Two more Python renewals after both agents were up: each has had the chance to
            # read the Python record (watch or GET) before the kill.
            wait_until(lambda: sum(1 for t, _, rec in run.watcher.history()
                                   if t > t_up and holder(rec) == py.identity) >= 2,
                       10, what="two Python renewals after the agents started")
            views = {a.name: view_of(a) for a in lhs}
            run.notes["leasehold_view_of_python_leader"] = views
            log(f"{lock_type}: leasehold agents, Python leading: {views}")
            _, lh_leader = run.fault_round("kill", LH)
            took = run.rounds[-1]["driver_saw_s"]
            run.notes["bound_s"] = PY_LED_BOUND
            assert took <= PY_LED_BOUND, \
                f"{lock_type}: leasehold took over after {took}s > {PY_LED_BOUND:g}s"
            # The killed elector's replacement (fault_round started it) reads leasehold's
            # record as held and follows for two lease durations.
            py2 = run.fleet.member("py0")
            wait_until(lambda: body_of(py2)[1].get("name") == lh_leader.identity, 10,
                       what=f"{py2.name} to read {lh_leader.name}'s record")
            never_leads(py2, 2 * MIXED.lease,
                        what=f" ({lock_type}): took the lock from {lh_leader.name}")
            lh_leader.wait_leader(5)
            time.sleep(1.0)
        try:
            f = run.execute(body)["failover_s"].get("python→leasehold", {}).get("kill", {})
            log(f"{lock_type}: Python-led fleet failed over to leasehold in {fmt_dist(f)}s "
                f"(p50/max of the sampler; bound {PY_LED_BOUND:g}s)")
        except (AssertionError, RuntimeError) as e:
            log(f"{lock_type}: FAILED: {e}")
            failures.append(f"{lock_type}: {e}")
    assert not failures, "; ".join(failures)


@scenario
def attribution_selftest(s):
    """The overlap attribution and the Python elector's "unheld" rule on made-up lock histories
    (no control plane): each rule must be able to blame either side."""
    py = SimpleNamespace(name="py", identity="py", family=PY)
    lh = SimpleNamespace(name="lh", identity="lh", family=LH)
    ids = {"py": py, "lh": lh}

    def rec(holder, acquire="a", duration=5):
        return {"holderIdentity": holder, "leaseDurationSeconds": duration,
                "acquireTime": acquire, "renewTime": "r", "transitions": 1}

    def ev(*pairs):
        return [(t, str(i), r) for i, (t, r) in enumerate(pairs)]

    def span(name, start, **kw):
        return {"identity": name, "start": start, **kw}

    cases = [
        ("py led past its lease", py, lh, ev((0.0, rec("py")), (5.0, rec("lh"))), PY),
        ("lh took an unexpired lease", py, lh, ev((0.0, rec("py")), (3.0, rec("lh"))), LH),
        ("lh wrote a null acquireTime", lh, py, ev((0.0, rec("lh", None)), (1.0, rec("py"))), LH),
        ("lh wrote duration 0", lh, py, ev((0.0, rec("lh", duration=0)), (1.0, rec("py"))), LH),
        ("lh said yes after its release", lh, py,
         ev((0.0, rec("lh")), (0.5, rec("")), (0.6, rec("py"))), LH),
        ("py took an unexpired lease", lh, py, ev((0.0, rec("lh")), (2.0, rec("py"))), PY),
        ("lh led past its lease", lh, py, ev((0.0, rec("lh")), (5.2, rec("py"))), LH),
        ("py's yes left over after lh took the lock from it", lh, py,
         ev((0.0, rec("py")), (5.0, rec("lh"))), PY),
    ]
    for what, x, y, events, want in cases:
        got, why = attribute(span(x.name, -1.0), span(y.name, events[-1][0]), events, ids)
        log(f"{what}: started by {got} ({why})")
        assert got == want, f"{what}: attributed to {got}, want {want}: {why}"
    late_cases = [
        ("py's late yes after lh's last", lh, py, dict(end=1.0), dict(first_recv=1.5), PY),
        ("lh's late yes after py's last", py, lh, dict(end=1.0), dict(first_recv=1.5), LH),
        ("py's late yes before lh's last: the history", lh, py, dict(end=2.0),
         dict(first_recv=1.5), LH),
        ("py's prompt yes: the history", lh, py, dict(end=1.0), dict(first_recv=0.6), LH),
    ]
    for what, x, y, old_kw, new_kw, want in late_cases:
        events = ev((0.0, rec(x.name)), (0.5, rec("")), (0.6, rec(y.name)))  # x released
        got, why = attribute(span(x.name, -1.0, **old_kw), span(y.name, 0.5, **new_kw),
                             events, ids)
        log(f"{what}: started by {got} ({why})")
        assert got == want, f"{what}: attributed to {got}, want {want}: {why}"
    # analysis.promise_violations: its exemption of an immediate release, definite or possible.
    def claim(slot, start, first_recv, max_vu=None):
        return {"slot": slot, "identity": slot, "start": start, "first_recv": first_recv,
                "end": first_recv, "max_vu": max_vu}
    ex = "exempt_immediate_release"
    promise_cases = [  # (what, SIGTERMs of the old slot, new yes asked, answered, field, want)
        ("SIGTERM before the new yes was asked", [4.0], 5.0, 5.01, ex, True),
        ("SIGTERM while a late new yes was on its way", [6.0], 5.0, 7.0, ex, True),
        ("SIGTERM after a prompt new yes", [6.0], 5.0, 5.01, ex, False),
        ("no SIGTERM", [], 5.0, 7.0, ex, False),
        ("answered before the validUntil", [], 9.95, 9.9, "definite", True),
        ("asked before, answered after it", [], 9.95, 10.05, "definite", False),
    ]
    for what, terms, asked, answered, key, want in promise_cases:
        bad = analysis.promise_violations(
            {}, {"lh": [claim("lh", 0.0, 0.01, max_vu=10.0)], "py": [claim("py", asked, answered)]},
            [], {"lh": terms}, lambda t: t)
        assert len(bad) == 1 and bad[0][key] == want, (what, bad)
        log(f"promise, {what}: {key} {want}")
    for what, events, want in [
            ("py's span left over from before lh took the lock", ev((0.0, rec("py")),
                                                                   (3.0, rec("lh"))), True),
            ("py took the lock after lh", ev((0.0, rec("lh")), (3.0, rec("py"))), False)]:
        got = left_over("lh", "py", 4.0, events)
        log(f"left over, {what}: {got}")
        assert got == want, (what, got)
    unheld = [None, {"unparsable": "[]"}, rec(""), rec("x", None), rec("x", duration=0),
              rec("x", duration="")]
    assert all(python_sees_unheld(r) for r in unheld), unheld
    assert not python_sees_unheld(rec("x")) and not python_sees_unheld(rec("x", duration="5"))


if __name__ == "__main__":
    sys.exit(SCENARIOS.main())
