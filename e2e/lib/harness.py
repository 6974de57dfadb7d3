"""The old single-module harness, kept as a re-export for the node tier (e2e/node/cluster.py
imports wait_until from here) until it moves to e2e/lib's role modules (issue 27). New code
imports from the role modules: common, timings, controlplane, agent, sampler, runner, fleet,
faultproxy, sampler_process, analysis."""
from e2e.lib.agent import Agent, current_leaders, wait_single_leader
from e2e.lib.common import (DEPLOY, MONO_TO_WALL, REPO, free_port, http_request,
                            leasehold_binary, log, parse_rfc3339, wait_until)
from e2e.lib.controlplane import (CONTROLPLANE_SH, ControlPlane, HolderWatch,
                                  Namespace, follow_watch, rbac_manifests)
from e2e.lib.runner import OVERTAKEN_LOG, Registry, Scenario
from e2e.lib.sampler import Sampler
from e2e.lib.timings import FAST

LEASE, RENEW, RETRY = FAST
TIMINGS = FAST.strings()

__all__ = ["Agent", "current_leaders", "wait_single_leader", "DEPLOY", "MONO_TO_WALL", "REPO",
           "free_port", "http_request", "leasehold_binary", "log", "parse_rfc3339", "wait_until",
           "CONTROLPLANE_SH", "ControlPlane", "HolderWatch", "Namespace", "follow_watch",
           "rbac_manifests", "OVERTAKEN_LOG", "Registry", "Scenario", "Sampler", "LEASE", "RENEW",
           "RETRY", "TIMINGS"]
