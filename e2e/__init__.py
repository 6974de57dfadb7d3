"""leasehold's end-to-end tests, a package run from the repository root (or with it on
PYTHONPATH, as e2e/CMakeLists.txt does): `python3 -m e2e.scenarios.core NAME`,
`python3 -m e2e.demo`, `python3 -m e2e.chaos.chaos`. e2e.scenarios holds the scenario modules,
e2e.lib the shared fixtures (one module per role), e2e.chaos the chaos suite."""
