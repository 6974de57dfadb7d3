"""The leader-only work the pods' apps did, as their logs (the followers of e2e.node.run.Run)
tell it: units of work (Run.units) or, under the gate, the gated program's runs."""

import re
import time

from e2e.lib.common import wait_until
from e2e.node import judge

START_RE = re.compile(r"LHSTART at=(\d+) mode=gated")


def gated_runs(run):
    """pod -> [[start, end or None]] of the gated program's runs (its own stamps, in order)."""
    out = {}
    for (pod, c), f in list(run.followers.items()):
        if c != "app":
            continue
        runs = out.setdefault(pod, [])
        for line in f.text().splitlines():
            m = START_RE.search(line)
            if m:
                runs.append([int(m.group(1)) / 1e6, None])
                continue
            m = judge.EXIT_RE.search(line)
            if m and runs and runs[-1][1] is None:
                runs[-1][1] = int(m.group(1)) / 1e6
    return out


def running_cmd(run):
    return sorted(p for p, rs in gated_runs(run).items() if rs and rs[-1][1] is None)


def assert_gated_runs_disjoint(run):
    now = time.time()
    units = {p: [{"start": s, "end": e if e is not None else now} for s, e in rs]
             for p, rs in gated_runs(run).items()}
    bad = judge.unit_intersections(units)
    assert not bad, f"gated runs of two pods intersect: {bad[:5]}"


def work_of(run):
    """pod -> units of leader-only work (gated runs under the gate)."""
    if run.variant == "gate":
        return {p: rs for p, rs in gated_runs(run).items() if rs}
    return {p: us for p, us in run.units().items() if us}


def wait_working(run, pod):
    if run.variant == "gate":
        wait_until(lambda: running_cmd(run) == [pod], 30, 0.1, f"CMD on {pod} only")
    else:
        run.wait_units(pod, 3)
