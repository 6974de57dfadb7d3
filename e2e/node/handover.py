"""A graceful handover: the leader's pod deleted (or evicted: the node's delete_pod decides), the
next pod's first "yes", the evidence read on the way and the bounds (e2e.node.bounds)."""

import json
import re
import time

from e2e.lib.common import wait_until
from e2e.node import judge
from e2e.node.bounds import RELEASE_TO_YES_BOUND
from e2e.node.cluster import cluster_time, log


def leader_label(run, pod):
    """Pods labelled leasehold.io/role=leader."""
    return sorted(p["metadata"]["name"] for p in run.node.pods(run.ns)
                  if p["metadata"].get("labels", {}).get("leasehold.io/role") == "leader"
                  and not p["metadata"].get("deletionTimestamp"))


def sidecar_lines(run, pod):
    """(its own stamp (ms, rounded down) or None, the CRI stamp's text, msg) of each of the
    sidecar's JSON log lines."""
    f = run.followers.get((pod, "leasehold"))
    for line in f.text().splitlines() if f else []:
        ts, _, rest = line.partition(" ")
        try:
            rec = json.loads(rest)
        except ValueError:
            continue
        own = cluster_time(rec["ts"]) if isinstance(rec.get("ts"), str) else None
        yield own, ts, str(rec.get("msg", ""))


def sidecar_log_events(run, pod):
    """(first SIGTERM, first release after it, first release at all) of the sidecar, or None."""
    term = rel = first_rel = None
    for own, ts, msg in sidecar_lines(run, pod):
        t = own if own is not None else cluster_time(ts)  # the CRI stamp is taken later
        if term is None and msg.startswith("received SIGTERM"):
            term = t
        if first_rel is None and msg.startswith("released "):
            first_rel = t
        if term is not None and rel is None and msg.startswith("released "):
            rel = t
    return term, rel, first_rel


def sidecar_messages(run, pod, prefix):
    """The sidecar's own stamps of its JSON log lines whose msg starts with `prefix`."""
    return [own for own, _, msg in sidecar_lines(run, pod)
            if own is not None and msg.startswith(prefix)]


def acquired_at(run, pod, since):
    """When `pod`'s sidecar logged "acquired lease" (its own stamp) at or after `since`."""
    return wait_until(lambda: [t for t in sidecar_messages(run, pod, "acquired lease")
                               if t >= since], 10, 0.05, f"{pod}'s \"acquired lease\" line")[0]


def began_to_lead(run, nxt, since):
    """When the pod of `nxt` (its first "yes" sample after `since`) began to say yes: that
    sample's receive stamp, or if it is the pod's very first sample, its sidecar's "acquired
    lease" line: a replacement pod can win the lock before its IP reaches the sampler (measured:
    acquired 0.06 s after the release, first sampled 0.8 s later)."""
    first = run.sampler.by_pod()[nxt.pod][0]
    if not (first.yes and first.send >= since):
        return nxt.recv
    return min(nxt.recv, acquired_at(run, nxt.pod, since - 0.001))


# A pod synced in the last second or so (it just became Ready) gets its first signal up to ~2 s
# after the DELETE, a settled pod within ms: BENCHMARKS.md#why-the-first-deletion-takes-18-s. The
# deletion rounds count from a leader Ready for SETTLED_S (the condition's stamp has 1 s
# resolution); a periodic resync can still add ~1 s, which kubelet_stop_delay logs per round.
SETTLED_S = 4.0
KUBELET_LINE_RE = re.compile(r"^I(\d{4}) (\d\d:\d\d:\d\d\.\d+) ")


def wait_settled(run, pod):
    """Until `pod` has been Ready for SETTLED_S (its Ready condition's lastTransitionTime)."""
    def settled():
        p = [x for x in run.node.pods(run.ns) if x["metadata"]["name"] == pod]
        cond = [c for c in (p[0].get("status", {}).get("conditions") or [])
                if c["type"] == "Ready" and c["status"] == "True"] if p else []
        return cond and time.time() - cluster_time(cond[0]["lastTransitionTime"]) >= SETTLED_S
    wait_until(settled, 60, 0.2, f"{pod} Ready for {SETTLED_S} s")


def kubelet_stop_delay(run, pod, t_del):
    """The kubelet's part of a deletion, from its -v=2 log: (DELETE seen, first container
    signalled), s after t_del, or None. The pod's first "Killing container with a grace period"
    line is its first signal (a hookless container logs it at once; BENCHMARKS.md)."""
    path = run.node.dir / "logs" / "kubelet.log"
    seen = kill = None
    day = time.strftime("%m%d", time.localtime(t_del))
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        if f'/{pod}' not in line:
            continue
        m = KUBELET_LINE_RE.match(line)
        if not m or m.group(1) != day:
            continue
        t = time.mktime(time.strptime(time.strftime("%Y", time.localtime(t_del)) + m.group(1) +
                                      m.group(2).split(".")[0], "%Y%m%d%H:%M:%S"))
        t += float("0." + m.group(2).split(".")[1])
        if t < t_del - 1:
            continue
        if seen is None and '"SyncLoop DELETE"' in line:
            seen = t - t_del
        if seen is not None and '"Killing container with a grace period" ' in line:
            kill = t - t_del
            break
    return (seen, kill) if seen is not None and kill is not None else None


def log_stop_delay(run, pod, t_del):
    """Logs kubelet_stop_delay: evidence only, so missing lines are logged, not failed. Returns
    (seen, signalled) or (None, None)."""
    deadline = time.time() + 10
    while (d := kubelet_stop_delay(run, pod, t_del)) is None and time.time() < deadline:
        time.sleep(0.2)
    if d is None:
        log(f"kubelet: no DELETE and Killing lines of {pod} in its log")
        return None, None
    log(f"kubelet: {pod} DELETE seen +{d[0]:.3f}s, first container signalled +{d[1]:.3f}s")
    return d


RELEASE_RE = re.compile(r"LHRELEASE ask=(\d+) ans=(\d+) code=(-?\d+)")


def delete_settled_leader(run, leader):
    """DELETE the leader's pod once settled: (t_del, the next pod's first "yes" sample after it)."""
    wait_settled(run, leader)
    t_del = time.time()
    run.node.delete_pod(run.ns, leader)
    return t_del, run.next_yes(t_del, leader, 30)


def wait_gone(run, pod):
    """Until the deleted pod is gone from the API."""
    wait_until(lambda: pod not in run.pod_names(), 60, 0.2, f"{pod} gone")


def delete_leader_round(run, results):
    """One handover: delete the leader's pod; measure, and check the kubelet's stop order."""
    leader = run.single_leader()
    assert leader_label(run, leader) == [leader], \
        f"leader label on {leader_label(run, leader)}, leader is {leader}"
    run.wait_units(leader, 3)
    t_del, nxt = delete_settled_leader(run, leader)
    led = began_to_lead(run, nxt, t_del)
    failover = led - t_del
    log(f"deleted leader {leader}; {nxt.pod} said yes {failover * 1000:.0f} ms later")
    stop_delay = log_stop_delay(run, leader, t_del)
    wait_gone(run, leader)
    run.wait_ready(run.replicas)
    new = run.single_leader()
    assert new == nxt.pod, f"leader after handover {new}, first yes from {nxt.pod}"
    run.wait_units(new, 3)
    # The kubelet SIGTERMs `app`, which stops its unit, POSTs /release and exits, before the
    # sidecar; the safe sidecar releases on that acknowledgement, not at its SIGTERM.
    f = run.followers.get((leader, "app"))
    text = f.text() if f else ""
    m = judge.EXIT_RE.search(text)
    app_exit = int(m.group(1)) / 1e6 if m else None
    m = RELEASE_RE.search(text)
    ack = m and {"ask": int(m.group(1)) / 1e6, "ans": int(m.group(2)) / 1e6,
                 "code": int(m.group(3))}
    last_end = max((u["end"] for u in judge.parse_units(text)), default=None)
    term, _, rel = sidecar_log_events(run, leader)
    results.append({"leader": leader, "next": nxt.pod, "failover_s": failover,
                    "app_exit": app_exit, "ack": ack, "sidecar_sigterm": term, "release": rel,
                    "t_delete": t_del, "kubelet_signal_s": stop_delay[1]})
    assert app_exit is not None, f"no LHEXIT line from {leader}'s app"
    assert ack is not None and ack["code"] in (200, 202), f"{leader}'s app did not ack: {ack}"
    assert term is not None and rel is not None, f"no SIGTERM/release lines from {leader}'s sidecar"
    # The sidecar's own stamps have ms resolution; the app's us.
    assert app_exit <= term + 0.001, f"the sidecar got SIGTERM {app_exit - term:.3f}s before app exited"
    assert last_end is None or last_end <= ack["ask"], "acknowledged before the last unit ended"
    assert ack["ask"] <= rel + 0.001, "released before the app acknowledged"
    log(f"kubelet: delete->app exit {app_exit - t_del:.3f}s, app exit->sidecar SIGTERM "
        f"{term - app_exit:.3f}s; app: delete->ack {ack['ask'] - t_del:.3f}s; sidecar: "
        f"ack->released {rel - ack['ask']:.3f}s, ack->next yes {led - ack['ask']:.3f}s")
    assert led - ack["ask"] <= RELEASE_TO_YES_BOUND, \
        f"the app's POST /release -> next yes {led - ack['ask']:.3f}s > {RELEASE_TO_YES_BOUND}s"
    return failover
