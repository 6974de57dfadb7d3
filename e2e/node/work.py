"""The leader-only work the pods' apps logged: units (Run.units) or the gated program's runs."""

import re
import time

from e2e.lib.common import wait_until
from e2e.node import judge
from e2e.node.cluster import cluster_time

START_RE = re.compile(r"LHSTART at=(\d+) mode=gated")
GATE_EXIT_RE = re.compile(r"gate: CMD \(pid \d+\) exited")
_RUNS = {}  # (ns, pod) -> (follower, lines parsed, runs): each line parsed once


def gated_runs(run):
    """pod -> [[start, end or None]]: the gated program's runs, from its LHSTART to its LHEXIT
    stamp or, after a SIGKILL, the CRI stamp of the gate's "CMD exited" line."""
    out = {}
    for (pod, c), f in list(run.followers.items()):
        if c != "app":
            continue
        seen, n, runs = _RUNS.get((run.ns, pod), (None, 0, []))
        if seen is not f:  # a new follower (re-attached after a kubelet restart): from the start
            n, runs = 0, []
        lines = f.lines[n:len(f.lines)]
        for line in lines:
            m = START_RE.search(line)
            if m:
                runs.append([int(m.group(1)) / 1e6, None])
                continue
            if not runs or runs[-1][1] is not None:
                continue
            m = judge.EXIT_RE.search(line)
            if m:
                runs[-1][1] = int(m.group(1)) / 1e6
            elif GATE_EXIT_RE.search(line):
                runs[-1][1] = cluster_time(line.split(" ", 1)[0])
        _RUNS[(run.ns, pod)] = (f, n + len(lines), runs)
        out.setdefault(pod, []).extend([list(r) for r in runs])
    return out


def running_cmd(run):
    return sorted(p for p, rs in gated_runs(run).items() if rs and rs[-1][1] is None)


def wait_cmd_on(run, pod):
    wait_until(lambda: running_cmd(run) == [pod], 30, 0.1, f"CMD on {pod} only")


def assert_gated_runs_disjoint(run, skip=()):
    """No two pods' gated runs intersect (a run still going ends now), except the `skip` ones
    ((pod, start): bounded by the caller)."""
    now = time.time()
    units = {p: [{"start": s, "end": e if e is not None else now} for s, e in rs
                 if (p, s) not in skip] for p, rs in gated_runs(run).items()}
    bad = judge.unit_intersections(units)
    assert not bad, f"gated runs of two pods intersect: {bad[:5]}"


def given(units, before):
    """(lowest, highest) estimate of the last validUntil the app was given by answers asked
    before `before`: ask + validForMs (the app's own rule) and answer + validForMs."""
    us = [u for u in units if u["ask"] < before]
    assert us, "the app did no unit before the fault: nothing to judge"
    return (max(u["ask"] + u["valid_ms"] / 1000 for u in us),
            max(u["ans"] + u["valid_ms"] / 1000 for u in us))


def work_of(run):
    """pod -> units of leader-only work (gated runs under the gate)."""
    if run.variant == "gate":
        return {p: rs for p, rs in gated_runs(run).items() if rs}
    return {p: us for p, us in run.units().items() if us}


def wait_working(run, pod):
    if run.variant == "gate":
        wait_cmd_on(run, pod)
    else:
        run.wait_units(pod, 3)
