"""The e2e harness (harness.py): control plane, agents, sampler, scenario registry."""
