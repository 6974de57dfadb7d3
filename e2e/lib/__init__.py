"""The e2e suite's shared fixtures, one module per role:

common        the repository, the binary, free ports, wait_until, time conversions, log
timings       every fleet's and tier's election timings (FAST, MIXED, DEFAULTS, LONG_RENEW)
controlplane  the real etcd + kube-apiserver, a test Namespace (RBAC, lock), watches
agent         a leasehold agent run as a pod runs it; who leads
members       the Member protocol (agent, client-go peer, Python peer) and the one Fleet
judge         the one definition of "two leaders" for every tier, and its self-test
sampler       the in-process sampler of a fleet's /leader answers, overlaps found
sampler_process, analysis   the same in its own process for fleets under faults, and its report
faultproxy    a fault-injecting TCP proxy between a member and the apiserver
proxies       a TLS proxy limited to a range of TLS versions
lockwatch     watches of a lock and its holder history (the control plane's API; the node's)
prometheus    the pinned Prometheus server with the shipped rules, scaled
runner        Scenario and a module's Registry (the node tier's NodeScenario is e2e.node.run's)
"""
