"""bench/node_failover.py without a node: its imports of the node tier still resolve (the
benchmark is not run by `make test`, so this is what notices a renamed helper), and its table
and stamp matching on made-up rounds, one named case each.

    python3 -m bench.node_failover_test
"""

import sys

from bench import node_failover as nf

MACHINE = {"nproc": 2, "cpu": "test", "mem_gib": 1.0, "kernel": "6", "loadavg_start": (0, 0, 0)}


def rnd(yes, release=0.05, kubelet=0.01):
    return {"delete_to_yes_s": yes, "release_to_yes_s": release, "delete_to_acquired_s": yes,
            "release_seen_to_yes_s": None, "kubelet_signal_s": kubelet}


def variant(rounds):
    return {"rounds": rounds, "definite_overlaps": 0, "loadavg": [(1.0,), (2.0,)]}


def result(variants):
    return {"date": "today", "machine": MACHINE, "rounds": 2, "variants": variants}


TABLE_CASES = [
    ("the max is the slowest round, in bold",
     result({"native": variant([rnd(0.1), rnd(0.3)])}),
     ["| native | 2 | 0.200 / 0.298 / **0.300** |", "not measured ¹"]),
    ("a variant that failed says so and why",
     result({"gate": {"error": "AssertionError('no leader')", "loadavg": [(1.0,), (2.0,)]}}),
     ["| gate | failed: AssertionError('no leader') |"]),
    ("a column without a figure is a dash, not a zero",
     result({"classic": variant([rnd(0.2, kubelet=None)])}),
     ["0.200 / 0.200 / **0.200** | – | 0 |"]),
    ("the load average of each variant's start and end",
     result({"chart": variant([rnd(0.1)])}), ["chart 1.0-2.0"]),
]

FIRST_AFTER_CASES = [
    ("a stamp rounded down to the ms still counts", [9.9995, 12.0], 10.0, 9.9995),
    ("the first one at or after t", [8.0, 11.0, 10.5], 10.0, 10.5),
    ("none after t", [8.0, 9.0], 10.0, None),
]


def main():
    failed = 0
    for name, res, want in TABLE_CASES:
        md = nf.markdown(res)
        missing = [w for w in want if w not in md]
        if missing:
            failed += 1
            print(f"FAIL {name}: {missing} not in\n{md}")
    for name, times, t, want in FIRST_AFTER_CASES:
        got = nf.first_after(times, t)
        if got != want:
            failed += 1
            print(f"FAIL {name}: first_after({times}, {t}) = {got}, want {want}")
    n = len(TABLE_CASES) + len(FIRST_AFTER_CASES)
    print(f"{n - failed} of {n} cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
