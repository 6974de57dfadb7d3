"""The graceful failover on the node, as a benchmark: for each shipped variant (the native,
classic and gate overlays, and the Helm chart), ROUNDS deletions of the leader's pod in one
namespace, each timed from the DELETE and from the release write to the next pod's first "yes".

    bash e2e/node/fixture.sh start /tmp/lh-node      # root; the one-node cluster (e2e/node)
    LEASEHOLD_NODE_DIR=/tmp/lh-node python3 -m bench.node_failover [--rounds 20] \
        [--variants native,classic,gate,chart] [--out DIR]
    bash e2e/node/fixture.sh stop /tmp/lh-node

It prints, it asserts nothing about the figures: the goal (<= 0.5 s max, unloaded) is the
reader's to compare (BENCHMARKS.md, "Graceful failover on the node"); the loaded bound the node
scenarios assert is theirs (e2e/node/bounds.py). It exits 1 only when a variant gave no figure
(it failed on the way: its evidence is kept as a node scenario's is). The rounds, deployments
and measurements are the node scenarios' own (e2e/node/run.py, handover.py, the chart's HelmRun).

Per round:
- DELETE: the instant before the test's DELETE of the leader's pod, once the leader has been
  Ready for handover.SETTLED_S (no probe-driven sync of the kubelet in flight).
- next "yes": handover.began_to_lead: the receive stamp of the next pod's first "yes" sample
  (each pod is sampled every bounds.SAMPLE_INTERVAL, so this is an upper estimate, late by up to
  one interval plus the answer), or the new leader's "acquired lease" line if it won the lock
  before its first sample (a replacement pod not yet sampled).
- release write: the old leader's sidecar's "released" log line (its own stamp, ms, written when
  the release's write was answered). The lock watch's sight of the freed record is kept too.
- acquired: the new leader's "acquired lease" line (its own stamp): the "yes" instant without
  the sampler's interval.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

from bench.bench import dist, machine
from e2e.lib.common import wait_until
from e2e.node import cluster, judge
from e2e.node.bounds import SAMPLE_INTERVAL
from e2e.node.cluster import log
from e2e.node.handover import (began_to_lead, delete_settled_leader, log_stop_delay,
                               sidecar_messages, wait_gone)
from e2e.node.run import Run, as_instrument
from e2e.node.work import running_cmd
from e2e.scenarios.node import HelmRun

VARIANTS = ("native", "classic", "gate", "chart")
# The client-go figure nearest to this one: bench/bench.py's "client-go SIGTERM, ReleaseOnCancel,
# from the signal" (processes on the e2e control plane, timings 4s/3s/1s). No client-go peer runs
# in pods on the node, so nothing is measured beside each variant here.
CLIENT_GO_NOTE = ("not measured on the node (no client-go pod); on the control plane, SIGTERM "
                  "with ReleaseOnCancel -> yes: p50 0.480 s, p99 1.392 s (BENCHMARKS.md, Failover)")


def new_run(node, variant):
    """The variant's Run, deployed (start()) as its node scenario deploys it."""
    if variant == "chart":
        return HelmRun(node, "bench_failover_chart", "native")
    return Run(node, f"bench_failover_{variant}", variant)


def first_after(times, t):
    """The first of `times` at or after t (the sidecars' stamps are ms, rounded down)."""
    return min((x for x in times if x >= t - 0.001), default=None)


def release_seen(run, t):
    """When the lock watch first saw the record free ("" holder) after t, or None."""
    with run.watch.lock:
        return next((when for when, holder in run.watch.history if when >= t and not holder),
                    None)


def one_round(run, variant):
    leader = run.single_leader()
    if variant == "gate":  # a leader at work: its gated CMD running
        wait_until(lambda: running_cmd(run) == [leader], 30, 0.1, f"CMD on {leader} only")
    else:
        run.wait_units(leader, 1)
    t_del, nxt = delete_settled_leader(run, leader)
    led = began_to_lead(run, nxt, t_del)
    released = wait_until(lambda: first_after(sidecar_messages(run, leader, "released "), t_del),
                          10, 0.05, f"{leader}'s \"released\" line")
    acquired = wait_until(lambda: first_after(sidecar_messages(run, nxt.pod, "acquired lease"),
                                              t_del), 10, 0.05, f"{nxt.pod}'s \"acquired\" line")
    _, signalled = log_stop_delay(run, leader, t_del)
    seen = release_seen(run, t_del)
    r = {"leader": leader, "next": nxt.pod, "t_delete": t_del,
         "delete_to_yes_s": led - t_del, "release_to_yes_s": led - released,
         "delete_to_release_s": released - t_del, "delete_to_acquired_s": acquired - t_del,
         "release_seen_to_yes_s": None if seen is None else led - seen,
         "kubelet_signal_s": signalled}
    log(f"{variant}: deleted {leader}; {nxt.pod} said yes +{r['delete_to_yes_s']:.3f}s, "
        f"{r['release_to_yes_s']:.3f}s after the release (+{r['delete_to_release_s']:.3f}s)")
    wait_gone(run, leader)
    run.wait_ready(run.replicas)
    return r


def bench_variant(node, variant, rounds):
    """{"rounds": [...], "definite_overlaps": n, "loadavg": [start, end]} or {"error": ...}."""
    out = {"loadavg": [os.getloadavg()]}
    run, failed = new_run(node, variant), True
    try:
        run.start()
        out["rounds"] = [one_round(run, variant) for _ in range(rounds)]
        definite, _ = judge.overlaps(run.sampler.by_pod())
        out["definite_overlaps"] = len(definite)
        failed = False
    except Exception as e:  # a benchmark: the other variants still run
        log(f"{variant}: FAILED: {e!r}")
        out["error"] = repr(e)
    finally:
        if variant == "chart" and failed:
            run.helm("uninstall", "leasehold", "--wait", "--timeout", "60s", check=False,
                     post=False)
        run.stop(failed)
    out["loadavg"].append(os.getloadavg())
    return out


COLUMNS = (("delete_to_yes_s", "DELETE -> next yes"),
           ("release_to_yes_s", "release write -> next yes"),
           ("delete_to_acquired_s", "DELETE -> new leader's \"acquired\" line"),
           ("kubelet_signal_s", "DELETE -> kubelet's first signal"))


def markdown(res):
    rows = ["| variant | rounds | " + " | ".join(f"{name}: p50 / p99 / max (s)" for _, name in
                                                 COLUMNS) + " | definite overlaps | client-go |",
            "|---" * (len(COLUMNS) + 4) + "|"]
    for v, r in res["variants"].items():
        if "error" in r:
            rows.append(f"| {v} | failed: {r['error'][:120]} |" + " |" * (len(COLUMNS) + 2))
            continue
        cells = []
        for key, _ in COLUMNS:
            d = dist([x[key] for x in r["rounds"] if x[key] is not None])
            cells.append(f"{d['p50']:.3f} / {d['p99']:.3f} / **{d['max']:.3f}**" if d["n"]
                         else "–")
        rows.append(f"| {v} | {len(r['rounds'])} | " + " | ".join(cells) +
                    f" | {r['definite_overlaps']} | not measured ¹ |")
    m = res["machine"]
    loads = ", ".join(f"{v} {r['loadavg'][0][0]:.1f}-{r['loadavg'][1][0]:.1f}"
                      for v, r in res["variants"].items())
    return "\n".join(rows) + (
        f"\n\n¹ client-go: {CLIENT_GO_NOTE}.\n\n{res['date']}, {m['nproc']} cores ({m['cpu']}), {m['mem_gib']} GiB, Linux "
        f"{m['kernel']}; load average (1 min) at each variant's start-end: {loads}. Sampling "
        f"interval {SAMPLE_INTERVAL * 1000:.0f} ms per pod.\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--out", default="build/bench-node", help="results.json and results.md")
    a = ap.parse_args(argv)
    variants = a.variants.split(",")
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        ap.error(f"unknown variants {sorted(unknown)}; known: {', '.join(VARIANTS)}")
    cluster.enter_netns()
    node = cluster.Node()
    node.health()
    as_instrument()
    res = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine(),
           "rounds": a.rounds, "variants": {}}
    for v in variants:
        log(f"{v}: {a.rounds} rounds")
        res["variants"][v] = bench_variant(node, v, a.rounds)
    node.health()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(res, indent=1))
    md = markdown(res)
    (out / "results.md").write_text(md)
    print(md)
    return 1 if any("error" in r for r in res["variants"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
