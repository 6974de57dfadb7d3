"""The e2e suite's election timings: the one place they are set.

Timings(lease, renew, retry) in seconds; `.flags()` gives leasehold's (and the interop peers')
--lease-duration/--renew-deadline/--retry-period, `.strings()` the Go durations, `.env()` the
LEASEHOLD_* variables.
"""
from collections import namedtuple


class Timings(namedtuple("Timings", "lease renew retry")):
    def strings(self):
        return tuple(f"{v:g}s" for v in self)

    def flags(self):
        lease, renew, retry = self.strings()
        return [f"--lease-duration={lease}", f"--renew-deadline={renew}", f"--retry-period={retry}"]

    def env(self):
        """The LEASEHOLD_* variables (the shipped overlays' ConfigMap keys)."""
        lease, renew, retry = self.strings()
        return {"LEASEHOLD_LEASE_DURATION": lease, "LEASEHOLD_RENEW_DEADLINE": renew,
                "LEASEHOLD_RETRY_PERIOD": retry}


# Fleets of leasehold agents only: short, so that failovers take seconds. leasehold's own margin
# (lease-duration - renew-deadline) is 1 s, its minimum.
FAST = Timings(4.0, 3.0, 1.0)

# Fleets with client-go or Python peers. client-go keeps answering "leader" up to retry-period +
# renew-deadline after its last successful renewal, and a rival takes over lease-duration after
# it saw that renewal: lease-duration must exceed retry-period + renew-deadline, else a Go leader
# that cannot renew may overlap its successor. FAST leaves 0 s, MIXED 1 s (client-go's defaults,
# DEFAULTS, 3 s). The node tier's faults and disruptions run them too (e2e/node/bounds.py).
MIXED = Timings(5.0, 3.0, 1.0)

# The product's defaults (client-go's too), for the benchmarks' default-timing runs; the
# shipped overlays set the same (deploy/base), and the node tier runs them unchanged
# (e2e/scenarios/node.py; the faults and disruptions with LEASEHOLD_NODE_SHIPPED_TIMINGS=1).
DEFAULTS = Timings(15.0, 10.0, 2.0)

# The node tier's apiserver restart "shorter than renew-deadline" (fault_apiserver_short,
# e2e/scenarios/node_faults.py) needs a renew-deadline longer than an apiserver's restart on the
# node (SIGKILL, start, /readyz: measured 3-6 s loaded).
LONG_RENEW = Timings(30.0, 25.0, 2.0)
