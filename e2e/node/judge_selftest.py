"""The judge's rules on made-up samples and units: each rule must catch what it is for (a judge
that cannot fail proves nothing). Standard library only: runs with the unit tests.

    python3 -m e2e.node.judge_selftest
"""

from e2e.node import judge
from e2e.node.lock_rules import assert_release_acquire


def S(pod, send, yes, rtt=0.002):
    return judge.Sample(pod, send, send + rtt, yes, 200 if yes else 503)


def by_pod(samples):
    out = {}
    for s in sorted(samples, key=lambda s: s.send):
        out.setdefault(s.pod, []).append(s)
    return out


CASES = [
    # name, samples, expected definite count > 0, expected possible count > 0
    ("clean handover", [S("a", 0.0, True), S("a", 0.05, True), S("a", 0.10, False),
                        S("b", 0.12, True), S("b", 0.17, True)], False, False),
    ("b inside a's run", [S("a", 0.0, True), S("b", 0.05, True), S("a", 0.10, True)], True, True),
    ("a said no between", [S("a", 0.0, True), S("a", 0.04, False), S("b", 0.05, True),
                           S("a", 0.10, True)], False, False),
    ("spans touch only", [S("a", 0.0, True, rtt=0.02), S("b", 0.01, True, rtt=0.02)], False, True),
]

# The lock's history while pods leave (rollouts, evictions, scale-down): name, holders since the
# first pod began to leave, old pods, the expected last holder, whether the rule accepts it.
LOCK_CASES = [
    ("release, one acquisition", ["", "n1"], {"o1", "o2"}, "n1", True),
    ("through an old pod", ["", "o2", "", "n1"], {"o1", "o2"}, "n1", True),
    ("expiry takeover (pod -> pod)", ["o2", "n1"], {"o1", "o2"}, "n1", False),
    ("a pod acquires twice", ["", "o2", "", "o2", "", "n1"], {"o1", "o2"}, "n1", False),
    ("a new pod hands over", ["", "n2", "", "n1"], {"o1", "o2"}, "n1", False),
    ("ends with another holder", ["", "o2"], {"o1", "o2"}, "n1", False),
    ("two releases in a row", ["", "", "n1"], {"o1", "o2"}, "n1", False),
]


def main():
    for name, holders, old, new, ok in LOCK_CASES:
        try:
            assert_release_acquire(name, holders, new, old, 3)
            accepted = True
        except AssertionError:
            accepted = False
        assert accepted == ok, (name, holders, "accepted" if accepted else "refused")
    for name, samples, want_def, want_pos in CASES:
        d, p = judge.overlaps(by_pod(samples))
        assert bool(d) == want_def, (name, "definite", d)
        assert bool(p) == want_pos, (name, "possible", p)
    units = {"a": [{"start": 1.0, "end": 2.0}], "b": [{"start": 2.0, "end": 3.0}]}
    assert not judge.unit_intersections(units), "touching units do not intersect"
    units["b"].append({"start": 1.5, "end": 1.6})
    assert judge.unit_intersections(units) == [("a", "b", 0.10000000000000009)] or \
        len(judge.unit_intersections(units)) == 1
    units = {"a": [{"start": 1.0, "end": 2.0}, {"start": 1.5, "end": 1.7}]}
    assert not judge.unit_intersections(units), "one pod's own units are not judged"
    gap, n = judge.sample_gaps([S("a", t / 10, True) for t in range(10)] + [S("a", 1.5, True)], 0, 2)
    assert n == 11 and abs(gap - 0.6) < 1e-9, (gap, n)
    line = "LHUNIT ask=1000000 ans=1000100 term=3 valid_ms=9000 start=1000200 end=1100200 cut=0"
    (u,) = judge.parse_units("2026-01-01T00:00:00Z " + line)
    assert u["term"] == 3 and abs(u["end"] - 1.1002) < 1e-9, u
    assert judge.pod_of("web-1_ab12", ["web-1", "web-10"]) == "web-1"
    print("judge selftest: ok")


if __name__ == "__main__":
    main()
