#!/usr/bin/env python3
"""Writes the readable seeds of fuzz/corpus/handler_fuzzer/.

handler_fuzzer.cpp reads its input with FuzzedDataProvider: strings from the front (each ended by
a backslash and one more byte; a seed writes "\\\n"), numbers and flags from the back. This
script mirrors that order, so keep it in step with the harness when the harness changes:
    python3 fuzz/make_handler_seeds.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "handler_fuzzer")
YEAR = 366 * 24 * 3600
NS = 10**9
PHASES = ["candidate", "leader", "heldOff", "stopping", "done"]
CODES = ["ok", "NotFound", "AlreadyExists", "Conflict", "Invalid", "BadRequest", "Unauthorized",
         "Forbidden", "Gone", "TooManyRequests", "Unavailable", "DeadlineExceeded"]
I32 = (-2**31, 2**31 - 1)
I64 = (-2**63, 2**63 - 1)
U64 = (0, 2**64 - 1)
U8 = (0, 255)


class Seed:
    def __init__(self):
        self.front = b""
        self.back = []  # bytes in the order FuzzedDataProvider consumes them (from the end)

    def s(self, text):
        self.front += text.encode().replace(b"\\", b"\\\\") + b"\\\n"

    def i(self, value, lo, hi):
        rng = (hi - lo) % 2**64
        off = (value - lo) % 2**64
        n = 0
        while n < 8 and (rng >> (8 * n)) > 0:
            n += 1
        self.back += list(off.to_bytes(n, "big"))

    def b(self, value):
        self.i(1 if value else 0, *U8)

    def near(self, seconds):
        self.i(seconds * NS, -YEAR * NS, YEAR * NS)

    def data(self):
        return self.front + bytes(reversed(self.back))


def seed(method, path, params=(), identity="pod-a_1a2b", holder=None, lock=("leases", "ns", "lock"),
         error=("ok", ""), phase="leader", observed=True, is_leader=True, valid_for=9,
         last_attempt_ago=1, started_ago=60, lease_duration=15, release=True, term=3,
         metrics=True, probe_only=False):
    s = Seed()
    # Strings, front to back, in the harness's order.
    s.s(method)
    s.s(path)
    for k, v in params:
        s.s(k)
        s.s(v)
    s.s(identity)
    s.s(holder if holder is not None else "")
    for part in lock:
        s.s(part)
    s.s(error[1])
    # Numbers and flags, in the harness's order.
    s.i(len(params), 0, 3)
    s.i(1000, 0, YEAR)                        # clock advance, seconds
    s.i(PHASES.index(phase), 0, 4)
    s.b(observed)
    s.b(holder is None)                       # holder == identity
    s.i(lease_duration, *I32)
    s.b(True); s.i(1767322800 * NS, *I64)     # acquireTime 2026-01-02T03:00:00Z
    s.b(True); s.i(1767323100 * NS, *I64)     # renewTime
    s.i(term, *I64)
    s.b(is_leader)
    if is_leader:
        s.near(valid_for)
    s.i(CODES.index(error[0]), 0, 11)
    s.b(last_attempt_ago is not None)
    if last_attempt_ago is not None:
        s.near(-last_attempt_ago)
    s.b(True); s.near(-2)                     # last_renew_at
    s.i(0, *U64); s.i(1, *U64)                # slowpath_total, acquired_total
    s.b(False)                                # stopping
    s.near(-started_ago)
    s.i(lease_duration, 1, 24 * 3600)
    s.b(release)
    s.b(metrics)
    s.b(probe_only)
    return s.data()


SEEDS = {
    "get_leader_pretty": seed("GET", "/leader", [("pretty", "")]),
    "head_root": seed("HEAD", "/", is_leader=False, holder="pod-b_9f8e", phase="candidate"),
    "get_leader_unobserved": seed("GET", "/leader", observed=False, is_leader=False,
                                  error=("Unavailable", "GET /apis/...: connection refused"),
                                  last_attempt_ago=None),
    "is_leader_yes": seed("GET", "/is-leader"),
    "is_leader_no": seed("GET", "/is-leader", is_leader=False, holder="other", phase="candidate"),
    "release": seed("POST", "/release", [("pretty", "false")]),
    "release_get": seed("GET", "/release"),
    "healthz_wedged": seed("GET", "/healthz", last_attempt_ago=3600),
    "readyz_forbidden": seed("GET", "/readyz", [("pretty", "1"), ("x", "y")],
                             error=("Forbidden", 'leases "lock" is forbidden: User "system:sa"'),
                             is_leader=False),
    "put_leader": seed("PUT", "/leader", identity="pod\u00e9-\u2028"),
    "probe_leader": seed("GET", "/leader", probe_only=True),
    "probe_readyz": seed("GET", "/readyz", probe_only=True, observed=False, is_leader=False),
    "probe_release": seed("POST", "/release", probe_only=True),
    "metrics": seed("GET", "/metrics"),
    "metrics_off": seed("GET", "/metrics", metrics=False),
    "leader_watch": seed("GET", "/leader/watch", [("pretty", "")]),
    "unknown_path": seed("GET", "/metrics/../\x7f\u00ff%2F", [("pretty", "0")]),
}

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(SEEDS)} seeds to {OUT}")
