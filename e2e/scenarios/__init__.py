"""The e2e scenario modules, one per kind: `python3 -m e2e.scenarios.KIND NAME` runs one scenario
(ctest runs each as `e2e_<prefix><name>`; e2e/CMakeLists.txt). A module registers its scenarios
with `@scenario` (e2e.lib.runner.Registry) and imports fixtures from e2e.lib only, never from a
sibling scenario module. The node tier's modules (e2e/node_scenarios.py, e2e/node_faults.py)
are still beside this package."""
