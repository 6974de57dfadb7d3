"""The node tier's fixtures (e2e/node/README.md), one module per role, each saying what it holds in
its own docstring. Its scenario modules (e2e/scenarios/node*.py) import from here and from e2e.lib,
never from each other; prometheus/ builds Prometheus with Kubernetes discovery.
"""
