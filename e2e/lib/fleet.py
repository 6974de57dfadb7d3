"""Admin is e2e.lib.controlplane's; this name stays while e2e/chaos/chaos.py imports it."""

from e2e.lib.controlplane import Admin

__all__ = ["Admin"]
