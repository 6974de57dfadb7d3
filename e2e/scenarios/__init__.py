"""The e2e scenario modules, one per kind: `python3 -m e2e.scenarios.KIND NAME` runs one scenario
(ctest runs each as `e2e_<prefix><name>`; e2e/CMakeLists.txt). A module registers its scenarios
with `@scenario` (e2e.lib.runner.Registry) and imports fixtures from e2e.lib only, never from a
sibling scenario module. The node tier's modules (node.py, node_faults.py, node_disruptions.py,
node_observe.py: CTest label `node`, tests `e2e_node_<name>`) also import from e2e.node, and run
each scenario on the running node inside e2e.node.run.NodeScenario (e2e/node/README.md)."""
