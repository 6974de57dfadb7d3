"""The node tier's timings and the bounds its rules assert, where more than one module uses them.

The election timings themselves are e2e.lib.timings' (their one home): this module says which
set each kind of node scenario runs. Bounds that one scenario module alone asserts stay beside
it (e2e/scenarios/node*.py). LEASEHOLD_NODE_UNLOADED=1 asserts the issues' unloaded bounds.
"""

import os

from e2e.lib.timings import DEFAULTS, MIXED

# Per pod, one /is-leader sample per interval; non-vacuity: no gap longer than 2 x interval. At
# 50 ms, this process's other threads (kubectl output, log followers) delayed a sample past 150 ms
# under load average 10; 100 ms keeps the rule exact (2 x interval, no slack) with room for that.
SAMPLE_INTERVAL = 0.1
# Graceful failover, from the leader pod's DELETE to the next pod's first "yes". Two parts:
# - the kubelet's: it sees the deletion and SIGTERMs `app` (the native sidecar only after `app`
#   exited). No configured timing of leasehold is in it.
# - the app's acknowledgement and leasehold's: the test app (as the shipped example app) stops its
#   unit at once and POSTs /release; the sidecar (--release-on-shutdown=safe, the shipped
#   overlay's) then releases at once (one request), and the followers, which watch the lock, take
#   it in one more round trip: no retry-period, no lease-duration, no renew-deadline, so its
#   bound is a small constant (two apiserver round trips and a watch event), asserted always,
#   from the app's POST to the next "yes": 0.5 s unloaded, 2.0 s loaded: two API writes in a
#   row (the release, then the follower's acquisition), each up to ~1 s on a loaded apiserver
#   (measured up to 0.52 s at load average 15 from the sidecar's SIGTERM under the old
#   `immediate`; at load average 21, e2e_node_evict: release 0.73 s after the POST, the
#   follower's acquisition 0.83 s after it saw the lease free, 1.63 s in all).
# The whole chain's bound is FAILOVER_BOUND unloaded (LEASEHOLD_NODE_UNLOADED=1: the 0.5 s)
# and FAILOVER_BOUND_LOADED otherwise: the kubelet's PLEG relist period (1 s) plus the above.
UNLOADED = os.environ.get("LEASEHOLD_NODE_UNLOADED") == "1"
FAILOVER_BOUND = 0.5 if UNLOADED else float(os.environ.get("LEASEHOLD_NODE_FAILOVER_BOUND_LOADED", "3.0"))
RELEASE_TO_YES_BOUND = 0.5 if UNLOADED else float(
    os.environ.get("LEASEHOLD_NODE_RELEASE_TO_YES_BOUND_LOADED", "2.0"))
# Rollouts and the chart's upgrade: a rolling update of 3 replicas with maxSurge 1,
# maxUnavailable 0 (the shipped Deployments and the chart set no strategy: the default 25 % / 25 %
# resolves to exactly that for 3 replicas, checked). Every old pod is deleted once, gracefully.
# Leaderless gap: between the last "yes" of one pod and the first "yes" of the next (the sampler's
# upper estimate: the next one's receive stamp minus the last one's send stamp). The old leader
# says yes until its pod is deleted and the next pod says yes within FAILOVER_BOUND of that
# deletion (the graceful-failover bound above, the same chain), and its last yes was sampled at
# most 2 x SAMPLE_INTERVAL before it stopped (non-vacuity): gap <= FAILOVER_BOUND + 2 x interval.
GAP_BOUND = FAILOVER_BOUND + 2 * SAMPLE_INTERVAL
# Lock changes per rollout, exactly: the old leader's release (holder -> "") and one new pod's
# acquisition, as the leader's pod is the last old pod deleted. Its sidecar gives it the highest
# controller.kubernetes.io/pod-deletion-cost (--deletion-cost, on in every shipped variant), and
# the ReplicaSet controller deletes the cheapest pods first. Without it the Deployment picked the
# old pods in any order, and an old pod that won the lock handed it over again (measured: 4).
# Also asserted: every change is a release ("") or an acquisition right after one (no expiry
# takeover, no pod -> pod change), no pod acquires twice, and the last holder is a new pod.
MAX_LOCK_CHANGES = 2
# Non-vacuity over a pod's whole life (judge_lifetimes): the longest gap between two samples of
# one pod. 2 x interval is the rule for pods living through a window (Run.judge); over whole
# lives, under rollouts, 3 x interval. First widened because the sampler's threads shared this
# process (delayed up to 257 ms); in its own process (judge.Sampler) the sampler is on time (at
# most 7 ms late at load average 31), but pods being replaced answer slowly under load: with
# 2 x interval, rollout_native and rollout_gate failed on single answers of 240 ms and 349 ms
# (load average 31, sampler on time). The units' check (the apps' own stamps) does not depend
# on sampling.
LIFETIME_GAP_BOUND = 3 * SAMPLE_INTERVAL
# The timings of the faults and disruptions (e2e/scenarios/node_faults.py, node_disruptions.py):
# lease-duration, renew-deadline, retry-period (s). Test timings: the interop tier's 5/3/1
# (e2e.lib.timings.MIXED), set through the overlay's ConfigMap (TIMINGS);
# LEASEHOLD_NODE_SHIPPED_TIMINGS=1 runs the shipped 15/10/2 (DEFAULTS, deploy/base's) unchanged.
# (e2e/scenarios/node.py runs the shipped timings always.)
SHIPPED = os.environ.get("LEASEHOLD_NODE_SHIPPED_TIMINGS") == "1"
LEASE, RENEW, RETRY = DEFAULTS if SHIPPED else MIXED
TIMINGS = None if SHIPPED else MIXED.env()
# Takeover by a rival, counted from the last renewTime the apiserver stored for the old leader:
# no earlier than lease-duration (client-go's rule: the rival saw the record at or after that
# renew, and waits lease-duration from then), no later than lease-duration + two jittered retry
# periods (it sees the record up to 1.2 x retry late, and tries again up to 1.2 x retry after
# the expiry) + TAKEOVER_SLACK for requests and scheduling on a loaded machine.
TAKEOVER_SLACK = 0.5 if UNLOADED else 1.5
TAKEOVER_MAX = LEASE + 2 * 1.2 * RETRY + TAKEOVER_SLACK
# 10 ms: renewTime and acquireTime are MicroTime, but written from the pods' own clocks.
CLOCK_SLACK = 0.01
