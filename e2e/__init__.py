"""leasehold's end-to-end tests, a package run from the repository root (or with it on
PYTHONPATH, as e2e/CMakeLists.txt does): `python3 -m e2e.scenarios NAME`, `python3 -m e2e.demo`,
`python3 -m e2e.chaos.chaos`. e2e.lib holds the harness, e2e.chaos the chaos suite's tools."""
