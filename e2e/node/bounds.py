"""The node tier's bounds that more than one module asserts (one module's own stay beside it), and
which of e2e.lib.timings' sets each kind of node scenario runs. Times in seconds."""

import os

from e2e.lib.timings import DEFAULTS, MIXED

# Per pod, one /is-leader sample per interval (s), held to judge.GAP_FACTOR x it without slack: at
# 50 ms, this process's other threads delayed samples past 150 ms under load average 10.
SAMPLE_INTERVAL = 0.1
# Graceful failover, from the leader pod's DELETE to the next pod's first "yes": the kubelet's part
# (its PLEG relist, 1 s; `app` SIGTERMed before the sidecar), then leasehold's from the app's POST
# /release: the release and a follower's acquisition on the watch event, two API writes with no
# configured timing in them, each up to ~1 s on a loaded apiserver (load average 21,
# e2e_node_evict: 0.73 s + 0.83 s). LEASEHOLD_NODE_UNLOADED=1 asserts the 0.5 s for both.
UNLOADED = os.environ.get("LEASEHOLD_NODE_UNLOADED") == "1"
FAILOVER_BOUND = 0.5 if UNLOADED else float(os.environ.get("LEASEHOLD_NODE_FAILOVER_BOUND_LOADED", "3.0"))
RELEASE_TO_YES_BOUND = 0.5 if UNLOADED else float(
    os.environ.get("LEASEHOLD_NODE_RELEASE_TO_YES_BOUND_LOADED", "2.0"))
# Rollouts (maxSurge 1, maxUnavailable 0, checked): the leaderless gap (the sampler's upper
# estimate). The next pod says yes within FAILOVER_BOUND of the old leader's deletion, whose last
# yes was sampled at most 2 x SAMPLE_INTERVAL before it stopped.
GAP_BOUND = FAILOVER_BOUND + 2 * SAMPLE_INTERVAL
# Lock changes per rollout, exactly: a release and one acquisition, as the leader's pod goes last
# (its sidecar's --deletion-cost, on in every shipped variant; the ReplicaSet deletes the cheapest
# first). Without it, an old pod that won the lock handed it over again (4 changes). lock_rules.py.
MAX_LOCK_CHANGES = 2
# Non-vacuity over a pod's whole life (rollout.judge_lifetimes): 3 x interval, not Run.judge's 2 x.
# The sampler is on time (at most 7 ms late at load average 31), but pods being replaced answer
# slowly: at 2 x, rollout_native and rollout_gate failed on single answers of 240 and 349 ms.
LIFETIME_GAP_BOUND = 3 * SAMPLE_INTERVAL
# The faults' and disruptions' timings (node_faults.py, node_disruptions.py; node.py runs the
# shipped ones always): the interop tier's MIXED through the overlay's ConfigMap (TIMINGS), or with
# LEASEHOLD_NODE_SHIPPED_TIMINGS=1 the shipped DEFAULTS (deploy/base's) unchanged.
SHIPPED = os.environ.get("LEASEHOLD_NODE_SHIPPED_TIMINGS") == "1"
LEASE, RENEW, RETRY = DEFAULTS if SHIPPED else MIXED
TIMINGS = None if SHIPPED else MIXED.env()
# Takeover by a rival, from the old leader's last stored renewTime: no earlier than lease-duration
# (client-go's rule), no later than two jittered retry periods after it (the record seen late, the
# next try late) + TAKEOVER_SLACK (requests and scheduling on a loaded machine).
TAKEOVER_SLACK = 0.5 if UNLOADED else 1.5
TAKEOVER_MAX = LEASE + 2 * 1.2 * RETRY + TAKEOVER_SLACK
# renewTime and acquireTime are MicroTime, but written from the pods' own clocks.
CLOCK_SLACK = 0.01
