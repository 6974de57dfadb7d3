"""The node tier's fixtures (e2e/node/README.md), one module per role; its scenario modules are
e2e/scenarios/node.py, node_faults.py, node_disruptions.py and node_observe.py, which import
from here and from e2e.lib, never from each other:

cluster       the one-node cluster: its netns, kubectl and the API, rendering the shipped overlays
judge         the Sampler, the lock watch, the units' rule (what samples prove: e2e/lib/judge.py)
lease         the lock's record during a fault (lease, LeaseTracker, the gate's margin)
sampler       the sampler's own process (judge.Sampler starts it)
lock_rules    the rule a lock's history meets when pods leave gracefully
bounds        which of e2e.lib.timings' sets the tier runs, and the bounds its modules share
lease         the lock's record read during a fault, and LeaseTracker (last renewal, next holder)
run           one scenario's context (NodeScenario, as_instrument, NODE_REPEAT) and its Run
pods          the node's view of one pod: containers (ids, restarts, signals), freezer cgroup
work          the leader-only work the apps logged: units, or the gated program's runs
handover      the graceful handover round (a deletion or eviction) and the evidence it reads
rollout       one rolling update, and the judge's rules over a run whose pods were all replaced
helm          HelmRun: the chart installed for real (helm install, its manifest checked)
images, render_check, helm_post_render   the images (the operator's too), the manifests'
              check, the chart's post-renderer; prometheus/: Prometheus with Kubernetes discovery
"""
