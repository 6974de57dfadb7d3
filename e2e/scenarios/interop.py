#!/usr/bin/env python3
"""Mixed-fleet e2e scenarios: leasehold agents and client-go's real tools/leaderelection (the
peers of e2e/interop, built by its build.sh) contend for one lock on a real etcd +
kube-apiserver, every member asked /leader by e2e.lib.sampler.Sampler. Two "yes" answers at one
instant fail the scenario, unless a client-go release race (RELEASE-RACE in
e2e/interop/README.md) or a paused peer explains them (check_overlaps).

Usage: python3 -m e2e.scenarios.interop NAME [NAME...]   (or `all`, `list`).
Env: LEASEHOLD_BIN, LEASEHOLD_E2E_CP, LEASEHOLD_INTEROP_BIN (peer bin dir; default: the output of
e2e/interop/build.sh), LEASEHOLD_SOAK_SECONDS (length of each soak run, default 45).
"""

import collections
import contextlib
import json
import os
import re
import signal
import sys
import time

from e2e.lib.agent import current_leaders, wait_single_leader
from e2e.lib.timings import DEFAULTS, FAST, MIXED, Timings
from e2e.lib.common import MONO_TO_WALL, log, parse_rfc3339, start_threads, wait_until
from e2e.lib.controlplane import ANNOTATION, Namespace, ns_name
from e2e.lib.lockwatch import LockWatcher
from e2e.lib.members import Fleet, GoPeer, body_of, family_changes, handovers
from e2e.lib.faultproxy import ProxyLoop
from e2e.lib.runner import Registry
from e2e.lib.sampler import Sampler

SCENARIOS = Registry()
scenario = SCENARIOS.add


def lh_agent(s, ns, name, lock_type, release="immediate", timings=MIXED):
    return s.agent(ns, name, lock_type=lock_type, timings=timings, release=release)


def lh_slot(s, ns, lock_type, releases=("immediate",)):
    """A Fleet factory of leasehold agents on `lock_type`; incarnation g releases on shutdown
    with releases[g % len(releases)]."""
    return lambda name, port, gen: lh_agent(s, ns, name, lock_type,
                                            release=releases[gen % len(releases)])


def go_slot(s, ns, which, lock_type, roc=(False,)):
    """A Fleet factory of client-go peers `which` on `lock_type`; incarnation g with
    ReleaseOnCancel roc[g % len(roc)]."""
    return lambda name, port, gen: s.member(GoPeer, ns, name, which=which, lock_type=lock_type,
                                            release_on_cancel=roc[gen % len(roc)])


def sampled(smp, *members):
    """Starts each member and has the sampler `smp` ask it; returns them as a list."""
    for m in members:
        smp.add(m.start())
    return list(members)


@contextlib.contextmanager
def watched(cp, ns, kinds):
    """(a LockWatcher of `ns`'s lock `kinds`, a Sampler), both stopped on the way out."""
    watcher = LockWatcher(cp, ns, kinds).start()
    try:
        with Sampler([]) as smp:
            yield watcher, smp
    finally:
        watcher.stop()


# ------------------------------------------------------------------------------- analysis

RACE_AT = re.compile(r"RELEASE-RACE .* at (\S+Z)")


def release_races(members):
    """Every RELEASE-RACE line of the client-go peers: (monotonic time, peer, line)."""
    out = []
    for m in (m for m in members if isinstance(m, GoPeer)):
        for line in (ln.strip() for ln in m.log_text().splitlines() if "RELEASE-RACE" in ln):
            mt = RACE_AT.search(line)
            out.append((parse_rfc3339(mt.group(1)) - MONO_TO_WALL if mt else 0.0, m, line))
    return out


def check_overlaps(smp, members, paused=()):
    """Fails on any overlap of two leaders that is not explained; prints every release race and
    returns them. Explained are: an overlap that begins within `window` after a client-go release
    race (RELEASE-RACE in a peer's log), and one in which a client-go peer the scenario paused
    (`paused`: (member, t_stop, t_cont)) answered a question asked before it resumed with its
    pre-pause "yes" (client-go has no fencing: it leads until its renew loop runs again)."""
    races = release_races(members)
    for t, m, line in races:
        log(f"!!! client-go {m.version} release race by {m.name}: {line}")
    by_name = {m.name: m for m in members}
    genuine, explained = [], 0
    for a, s1, b, s2 in smp.overlaps():
        start = max(s1[0], s2[0])
        secs = min(s1[1], s2[1]) - start
        why = None
        for m, t_stop, t_cont in paused:
            sp = s1 if a == m.name else s2 if b == m.name else None
            if sp is not None and t_stop <= sp[0] <= t_cont + 0.01:
                why = f"a stale yes of {m.name}, paused, asked before it resumed ({m.kind})"
        # A client-go leader says "yes" up to renew + retry after its last renewal (timings.py).
        window = MIXED.renew + MIXED.retry + 1.0
        cause = [r for r in races if start - window <= r[0] <= start + 0.5]
        if why is None and cause:
            why = f"follows a client-go release race ({cause[0][1].kind})"
        if why:
            explained += 1
            log(f"!!! overlap {a}/{b} of {secs:.3f}s: {why}; not counted as a leasehold overlap")
        else:
            genuine.append((a, s1, b, s2))
            log(f"OVERLAP: {by_name[a].describe()} {s1} and {by_name[b].describe()} {s2}: "
                f"{secs:.3f}s")
    assert not genuine, f"{len(genuine)} overlap(s) of two leaders: {genuine[:3]}"
    log(f"overlaps: 0 genuine, {explained} explained; "
        f"{smp.count()} samples of {len(smp.agents)} members")
    return races


def transitions(smp, members):
    """Leadership changes seen by the sampler, logged: list of (from, to) members, in order."""
    pairs = handovers([n for _, _, n in smp.leader_spans()], {m.name: m for m in members})
    log(f"leadership changes seen by the sampler: {len(pairs)} {family_changes(pairs)}: "
        + ", ".join(f"{a.name}->{b.name}" for a, b in pairs))
    return pairs


def lock_history(watcher, kind):
    """The lock's holders in order (watcher.holders), logged; a release's holder is ""."""
    holders = watcher.holders(kind)
    log(f"lock history ({kind}): {len(holders)} holder changes incl. releases: "
        + " ".join(h or '""' for _, h, _ in holders))
    return holders


def check_blanks(watcher, kind, members, released_by_self):
    """A lock that a leasehold agent held going to an empty holder must be that agent's own
    release (it was sent SIGTERM or POST /release); anything else is another writer blanking it."""
    blankable = {m.name for m in members if m.family == "leasehold"} - set(released_by_self)
    bad = []
    for (t0, h0, _), (t1, h1, _) in zip(watcher.holders(kind), watcher.holders(kind)[1:]):
        if h1 == "" and h0 in blankable:
            bad.append((t1, h0))
            log(f"!!! the {kind} lock held by leasehold agent {h0} was blanked by another writer "
                f"at +{t1 - watcher.events[0][0]:.2f}s")
    return bad


def mixed_failover(s, base, lh_lock, go_which, go_lock, min_rounds=6, max_rounds=14):
    """Two leasehold agents and two client-go peers; the leader is SIGKILLed or SIGTERMed in
    turn and replaced, until leadership moved both ways at least twice."""
    cp = s.control_plane()
    ns = Namespace(cp, ns_name(base))
    kind = LockWatcher.KINDS[lh_lock]
    rounds, dirs = [], collections.Counter()
    with watched(cp, ns, (kind,)) as (watcher, smp):
        fleet = Fleet(s, smp)
        # Release-on-shutdown and ReleaseOnCancel alternate with every incarnation.
        fleet.add("lh0", lh_slot(s, ns, lh_lock, ("immediate", "safe")))
        fleet.add("go0", go_slot(s, ns, go_which, go_lock, (False, True)))
        fleet.add("lh1", lh_slot(s, ns, lh_lock, ("safe", "immediate")))
        fleet.add("go1", go_slot(s, ns, go_which, go_lock, (True, False)))
        wait_single_leader(fleet.current(), 30)
        for r in range(max_rounds):
            leader = wait_single_leader(fleet.alive(), 30)
            time.sleep(1.2)  # a few renewals of the settled leader
            how = "SIGKILL" if r % 2 == 0 else "SIGTERM"
            # leasehold followers watch the lock and wake at the exact expiry or release, so they
            # nearly always beat client-go's jittered polls. To move leadership from leasehold to
            # client-go, the other leasehold followers sit this round out (SIGSTOP; a paused
            # follower says nothing, so it cannot add a "yes").
            held = []
            if leader.family == "leasehold" and dirs["leasehold→client-go"] < 2:
                held = [m for m in fleet.alive() if m is not leader and m.family == "leasehold"]
                for m in held:
                    fleet.pause(m)
            t0 = time.monotonic()
            if how == "SIGKILL":
                leader.kill()
            else:
                fleet.terminated.add(leader.name)
                leader.term()
            try:
                new = wait_single_leader([m for m in fleet.alive() if m is not leader], 30)
            finally:
                for m in held:
                    fleet.resume(m)
            took = time.monotonic() - t0
            if how == "SIGTERM":
                rc = leader.wait(MIXED.renew + 10)
                assert rc == 0, f"{leader.name} exited with {rc} after SIGTERM"
            dirs[f"{leader.family}→{new.family}"] += 1
            rounds.append((how, took))
            log(f"round {r + 1}: {how} {leader.describe()} -> {new.describe()} after {took:.2f}s")
            fleet.replace(leader)
            if r + 1 >= min_rounds and dirs["leasehold→client-go"] >= 2 and \
                    dirs["client-go→leasehold"] >= 2:
                break
        time.sleep(1.0)
    pairs = transitions(smp, fleet.members)
    counts = family_changes(pairs)
    for how in ("SIGKILL", "SIGTERM"):
        ts = [took for h, took in rounds if h == how]
        if ts:
            log(f"  {how}: {len(ts)} failovers, {min(ts):.2f}..{max(ts):.2f}s to the next leader")
    holders = lock_history(watcher, kind)
    races = check_overlaps(smp, fleet.members)
    blanks = check_blanks(watcher, kind, fleet.members, fleet.terminated)
    # A client-go release race or a foreign blank lets a rival take the lock while a leasehold
    # promise runs: its leasehold_promise_overtaken_total then rightly moves (the harness would
    # otherwise fail the scenario on it; check_overlaps has explained the overlap).
    s.expect_overtaken = bool(races or blanks)
    log(f"client-go release race: {'SEEN ' + str(len(races)) + 'x' if races else 'not seen'}"
        f"; leasehold locks blanked by others: {len(blanks)}")
    moved = [counts.get(d, 0) for d in ("leasehold→client-go", "client-go→leasehold")]
    assert min(moved) >= 1, f"leadership did not move both ways: {counts}"
    # The lock's own history must agree with what the members said.
    lock_changes = [h for _, h, _ in holders if h]
    missing = [b.name for _, b in pairs if b.name not in lock_changes]
    assert not missing, f"sampler saw leaders the lock never named: {missing}"


SCENARIOS.bind(mixed_failover, "e2e-ix-lease", "leases", "current", "leases", name="mixed_lease")
SCENARIOS.bind(mixed_failover, "e2e-ix-cm", "configmaps", "v0.23", "configmaps",
               name="mixed_configmap")


# ------------------------------------------------------------------------------- migration

@scenario
def migration(s):
    """A rolling migration configmaps -> configmapsleases -> leases, never two leaders.

    Order (each step a rolling change of a mixed leasehold + client-go fleet):
      1. Cluster without the coordination API. Fleet on the ConfigMap lock: leasehold
         --lock-type configmaps and --lock-type auto (which finds no Lease API and uses the
         ConfigMap), client-go v0.23 `configmaps` peers.
      2. The apiserver restarts with coordination.k8s.io served (the cluster upgrade).
      3. New members join: leasehold --lock-type auto (finds the ConfigMap, so holds it and the
         Lease: configmapsleases) and client-go v0.23 `configmapsleases` peers.
      4. The ConfigMap-only members leave one by one (SIGTERM). Leadership moves onto the
         multilock members, which create the Lease.
      5. Lease-only members join: leasehold --lock-type leases and current client-go peers.
      6. The multilock members leave one by one, the last v0.23 multilock peer last. While it is
         still there the ConfigMap is deleted once, and it recreates it (docs/migration.md, 3).
      7. The ConfigMap is deleted for good; the fleet runs on the Lease alone and nobody
         recreates the ConfigMap.
    """
    cp = s.control_plane(
        extra_args="--runtime-config=coordination.k8s.io/v1=false,coordination.k8s.io/v1beta1=false")
    ns = Namespace(cp, ns_name("e2e-ix-migrate"))

    def one_leader(what, timeout=40):
        ldr = wait_single_leader(fleet.alive(), timeout)
        log(f"{what}: leader {ldr.describe()}")
        return ldr

    def join(what, prefix, lh_locks, lh1_release, go_which, go_lock, auto_uses=None):
        """Members join in slots <prefix>-lh0 (release immediate), -go0 (ReleaseOnCancel), -lh1
        and -go1; the `auto` agents among them must settle on `auto_uses`. Returns the leader
        once they had a lease-duration to read the lock."""
        fleet.add(f"{prefix}-lh0", lh_slot(s, ns, lh_locks[0]))
        fleet.add(f"{prefix}-go0", go_slot(s, ns, go_which, go_lock, (True,)))
        fleet.add(f"{prefix}-lh1", lh_slot(s, ns, lh_locks[1], (lh1_release,)))
        fleet.add(f"{prefix}-go1", go_slot(s, ns, go_which, go_lock))
        for slot in [f"{prefix}-lh{i}" for i in (0, 1) if lh_locks[i] == "auto"]:
            wait_until(lambda: body_of(fleet.member(slot))[1].get("lock", {}).get("type")
                       == auto_uses, 15, what=f"{slot} (auto) to use {auto_uses}")
        time.sleep(MIXED.lease)
        return one_leader(what)

    def leave(slot, replace=False):
        """SIGTERM to the member of `slot`, waited for; the slot goes, or (`replace`) gets a new
        incarnation once the next leader leads. Returns that leader."""
        time.sleep(1.0)  # no rolling update stops a member within milliseconds of its election
        m = fleet.member(slot)
        was = m.is_leader()
        fleet.terminated.add(m.name)
        m.term_and_wait(MIXED.renew + 10)
        if not replace:
            fleet.remove(slot)
        ldr = one_leader(f"{m.name} left{' (was leader)' if was else ''}")
        if replace:
            fleet.replace(m)
        return ldr

    with watched(cp, ns, ("configmap", "lease")) as (watcher, smp):
        fleet = Fleet(s, smp)
        join("1. ConfigMap fleet on a cluster without Leases", "cm", ("configmaps", "auto"),
             "immediate", "v0.23", "configmaps", auto_uses="configmaps")
        t0 = time.monotonic()
        cp.restart("apiserver", "--no-extra-args")
        log(f"2. apiserver restarted with coordination.k8s.io in {time.monotonic() - t0:.1f}s")
        assert "leases" in cp.kubectl("get", "--raw", "/apis/coordination.k8s.io/v1")
        one_leader("2. after the apiserver restart")
        join("3. multilock members joined", "ml", ("auto", "auto"), "safe", "v0.23",
             "configmapsleases", auto_uses="configmapsleases")
        for slot in ("cm-go1", "cm-lh1", "cm-go0", "cm-lh0"):
            leave(slot)
        ldr = one_leader("4. ConfigMap-only members gone")
        assert fleet.slots[ldr.slot] and ldr.slot.startswith("ml-"), ldr.name
        # Move leadership around the multilock members once.
        new = leave(ldr.slot, replace=True)
        time.sleep(1.0)
        lease = ns.lease()["spec"]
        cm_rec = json.loads(ns.configmap()["metadata"]["annotations"][ANNOTATION])
        assert lease["holderIdentity"] == cm_rec["holderIdentity"] == new.name, (lease, cm_rec)
        join("5. lease-only members joined", "ls", ("leases", "leases"), "safe", "current",
             "leases")
        for slot in ("ml-lh0", "ml-go0", "ml-lh1"):
            leave(slot)
        ldr = one_leader("6. only ml-go1 left of the multilock members")
        if ldr.slot == "ml-go1":  # let a Lease-only member lead before the ConfigMap goes
            leave("ml-go1", replace=True)
            time.sleep(MIXED.lease)
        cp.kubectl("delete", "configmap", ns.lock_name, "-n", ns.name)
        t_del = time.monotonic()
        cm = wait_until(lambda: _get_or_none(ns.configmap), 4 * MIXED.lease,
                        what="the multilock peer to recreate the ConfigMap")
        rec = json.loads(cm["metadata"]["annotations"][ANNOTATION])
        log(f"6. ConfigMap recreated {time.monotonic() - t_del:.1f}s after its deletion by "
            f"{rec['holderIdentity']} (client-go v0.23 configmapsleases)")
        leave("ml-go1")
        cp.kubectl("delete", "configmap", ns.lock_name, "-n", ns.name)
        ldr = one_leader("7. ConfigMap deleted for good")
        time.sleep(2 * MIXED.lease)
        assert _get_or_none(ns.configmap) is None, "the ConfigMap came back"
        ldr = one_leader("7. fleet on leases alone")
        assert ldr.slot.startswith("ls-")
        lease = ns.lease()["spec"]
        assert lease["holderIdentity"] == ldr.name, lease
        ldr.kill()
        new = wait_single_leader([m for m in fleet.alive() if m is not ldr], 30)
        log(f"7. SIGKILL {ldr.describe()} -> {new.describe()}")
        time.sleep(1.0)
    transitions(smp, fleet.members)
    for kind in ("configmap", "lease"):
        lock_history(watcher, kind)
    check_overlaps(smp, fleet.members)
    check_blanks(watcher, "lease", fleet.members, fleet.terminated)


def _get_or_none(fn):
    try:
        return fn()
    except RuntimeError as e:
        if "NotFound" in str(e) or "not found" in str(e):
            return None
        raise


# ------------------------------------------------------------------------------- soak

def soak_run(s, cp, base, timings, seconds):
    """A leasehold leader renews while client-go followers (current and v0.23, Lease lock)
    watch for `seconds`; none of them may take over."""
    ns = Namespace(cp, ns_name(base))
    with watched(cp, ns, ("lease",)) as (watcher, smp):
        [lh] = sampled(smp, lh_agent(s, ns, f"{base}-lh", "leases", timings=timings))
        wait_until(lh.is_leader, 20, what="the leasehold agent to lead")
        _, b0 = body_of(lh)
        followers = sampled(
            smp, s.member(GoPeer, ns, f"{base}-go0", timings=timings, release_on_cancel=True),
            s.member(GoPeer, ns, f"{base}-go1", timings=timings),
            s.member(GoPeer, ns, f"{base}-go23", which="v0.23", timings=timings))
        wait_until(lambda: all(body_of(f)[1].get("name") == lh.name for f in followers), 20,
                   what="followers to see the leasehold leader")
        log(f"{base}: soaking {seconds}s at {'/'.join(timings.strings())}")
        t_end = time.monotonic() + seconds
        while time.monotonic() < t_end:
            time.sleep(min(5.0, max(0.0, t_end - time.monotonic())))
            assert lh.alive() and all(f.alive() for f in followers), "a member died"
        _, b1 = body_of(lh)
    check_overlaps(smp, [lh, *followers])
    spans = smp.intervals()
    assert all(not spans[f.name] for f in followers), \
        f"a client-go follower led: {[(f.name, spans[f.name]) for f in followers]}"
    # Every answer leasehold gave after its first "yes" must be "yes" (a timed-out question,
    # possible on a loaded machine, is no answer and is only counted).
    with smp._lock:
        ss = list(smp.samples[lh.name])
    first = next(i for i, x in enumerate(ss) if x[2])
    noes = [x for x in ss[first:] if not x[2] and x[4]]
    unanswered = sum(1 for x in ss[first:] if not x[2] and not x[4])
    assert not noes, f"leasehold stopped leading during the soak: {noes[:3]}"
    assert b1.get("isLeader") and b1.get("term") == b0.get("term"), (b0, b1)
    hist = watcher.history("lease")
    holders = {rec[0] for _, _, _, _, rec in hist}
    assert holders == {lh.name}, f"the lease named others: {holders}"
    renews = [parse_rfc3339(rec[3]) for _, _, _, _, rec in hist if rec[3]]
    gaps = [b - a for a, b in zip(renews, renews[1:])]
    log(f"{base}: {len(renews)} renewals written, largest gap {max(gaps):.2f}s "
        f"(retry {timings.retry:g}s); followers never led; {smp.count()} samples, "
        f"{unanswered} of leasehold's unanswered")
    assert max(gaps) < timings.renew, "renewals further apart than renew-deadline"


@scenario
def soak(s):
    """leasehold leads while client-go followers watch, at DEFAULTS (client-go's) and at FAST in
    parallel, LEASEHOLD_SOAK_SECONDS each (>= 300 for a real soak)."""
    seconds = float(os.environ.get("LEASEHOLD_SOAK_SECONDS", "45"))
    cp = s.control_plane()
    errors = []

    def run(name, timings):
        try:
            soak_run(s, cp, name, timings, seconds)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append((name, e))

    for t in start_threads(run, [("e2e-ix-soak2", DEFAULTS), ("e2e-ix-soak1", FAST)]):
        t.join()
    if errors:
        raise AssertionError(f"soak failed: {errors}") from errors[0][1]


# ------------------------------------------------------------------------------- release race

@scenario
def release_race(s):
    """Provokes client-go's release hazard (RELEASE-RACE, e2e/interop/README.md): a current
    client-go leader with ReleaseOnCancel is cut off from the apiserver, so its renewals fail
    without it reading anything new, and paused (SIGSTOP: a GC pause, CPU starvation, a frozen
    VM) in that renew round. leasehold takes the expired lease; the Go process resumes past its
    renew deadline and releases. Reports whether it blanked the leasehold agent's lease and what
    followed; check_overlaps judges the overlaps."""
    cp = s.control_plane()
    ns = Namespace(cp, ns_name("e2e-ix-race"))
    proxies = ProxyLoop()
    proxy = proxies.proxy("race-go", cp.host, cp.port)
    gp = s.member(GoPeer, ns, "race-go", release_on_cancel=True,
                  server=f"127.0.0.1:{proxy.port}")
    try:
        with watched(cp, ns, ("lease",)) as (watcher, smp):
            sampled(smp, gp)
            wait_until(gp.is_leader, 20, what=f"{gp.name} to lead")
            lhs = sampled(smp, *(lh_agent(s, ns, f"race-lh{i}", "leases") for i in range(2)))
            time.sleep(2 * MIXED.retry)
            proxies.reset(proxy, 3600)  # cut off: every connection and each new one, until healed
            t_block = time.monotonic()
            time.sleep(MIXED.retry + 0.5)  # inside a renew round that fails on every attempt
            still = gp.is_leader()
            gp.signal(signal.SIGSTOP)
            t_stop = time.monotonic()
            proxies.heal(proxy)
            log(f"{gp.name} cut off from the apiserver, then paused {t_stop - t_block:.2f}s later "
                f"(still leader: {still})")
            new = wait_single_leader(lhs, 20)
            log(f"{new.name} took over {time.monotonic() - t_stop:.2f}s into the pause")
            members = [gp, *lhs, *sampled(smp, s.member(GoPeer, ns, "race-go-f"))]
            time.sleep(1.0)
            gp.signal(signal.SIGCONT)
            t_cont = time.monotonic()
            log(f"{gp.name} resumed after {t_cont - t_stop:.2f}s")
            time.sleep(MIXED.lease + 2 * MIXED.retry)
            assert current_leaders(members), "nobody leads"
    finally:
        proxies.close()
    hist = watcher.holders("lease")
    with smp._lock:
        gp_yes = [(sent, recv, b.get("run")) for sent, recv, yes, _, b in smp.samples[gp.name] if yes]
    for a, s1, b, s2 in smp.overlaps():
        if gp.name in (a, b):
            lo, hi = max(s1[0], s2[0]), min(s1[1], s2[1])
            runs = sorted({r for sent, recv, r in gp_yes if sent < hi and recv > lo})
            log(f"overlap {a}/{b} {lo - t_cont:+.3f}s..{hi - t_cont:+.3f}s after the resume; "
                f"{gp.name}'s yes came from its run(s) {runs} (run 1 is the paused one: it says yes "
                "until its renew loop notices the deadline; later runs re-acquired the lock)")
    log("lock history: " + " ".join(f"{h or chr(34) * 2}@{t - t_cont:+.2f}s" for t, h, _ in hist))
    races = check_overlaps(smp, members, paused=[(gp, t_stop, t_cont)])
    blanks = check_blanks(watcher, "lease", members, set())
    # As in mixed_failover: a reproduced race rightly moves the overtaken count.
    s.expect_overtaken = bool(races or blanks)
    blanked = [r for r in races if "BLANKED" in r[2]]
    if blanked:
        log(f"!!! REPRODUCED: client-go {gp.version} release() blanked leasehold agent "
            f"{new.name}'s lease {blanked[0][0] - t_cont:+.3f}s after it resumed")
        lost = [ln for ln in new.log_text().splitlines() if "lost lease" in ln]
        log(f"leasehold's reaction: {lost[:2] or 'kept the lock'}")
        spans = smp.intervals()[new.name]
        after = [sp for sp in spans if sp[1] >= blanked[0][0]]
        if after:
            log(f"{new.name} answered yes until {after[0][1] - blanked[0][0]:+.3f}s after the blank")
    else:
        log(f"release race not reproduced this time (client-go {gp.version}); "
            f"blanks of leasehold locks seen by the watcher: {len(blanks)}")


# ------------------------------------------------------------------------------- warning

@scenario
def duration_warning(s):
    """A leasehold agent whose --lease-duration differs from the record it observes warns
    exactly once, however often it sees such records."""
    cp = s.control_plane()
    ns = Namespace(cp, ns_name("e2e-ix-warn"))
    with Sampler([]) as smp:
        goes = sampled(smp, *(s.member(GoPeer, ns, f"warn-go{i}", release_on_cancel=bool(i))
                              for i in range(2)))
        go_leader = wait_single_leader(goes, 30)
        [lh] = sampled(smp, lh_agent(s, ns, "warn-lh", "leases", timings=Timings(6.0, 3.0, 1.0)))
        wait_until(lambda: body_of(lh)[1].get("name") == go_leader.name, 15,
                   what="leasehold to observe the client-go leader")
        time.sleep(3 * MIXED.retry)  # several renewals, each a new record with leaseDurationSeconds=5
        go_leader.kill()
        new = wait_single_leader([lh] + [g for g in goes if g is not go_leader], 30)
        log(f"after SIGKILL of {go_leader.name}: {new.name} leads")
        time.sleep(3 * MIXED.retry)
    check_overlaps(smp, [*goes, lh])
    text = lh.log_text()
    n = text.count("every member of a fleet must use the same --lease-duration")
    line = next((ln for ln in text.splitlines() if "same --lease-duration" in ln), "")
    log(f"warning in {lh.name}'s log {n}x: {line}")
    assert n == 1, f"expected the lease-duration warning exactly once, got {n}"
    assert "leaseDurationSeconds=5" in line and "6s" in line, line


if __name__ == "__main__":
    sys.exit(SCENARIOS.main())
