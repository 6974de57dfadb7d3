"""helm --post-renderer of the node tier's `helm` scenario: the chart's example `app` container
becomes the test's app (lhapp, the one the kustomize scenarios run: cluster.app_container), so
its units of leader-only work carry microsecond stamps. Nothing else is touched; the scenario
checks that against `helm template` of the same values (only the app container differs).
The app's environment comes as JSON in $LHAPP_ENV_JSON. helm runs it as
`python3 -m e2e.node.helm_post_render` (--post-renderer-args), PYTHONPATH the repository."""

import json
import os
import sys

import yaml

from e2e.node.cluster import app_container


def main():
    env = json.loads(os.environ.get("LHAPP_ENV_JSON", "{}"))
    docs = [d for d in yaml.safe_load_all(sys.stdin.read()) if d]
    for d in docs:
        if d.get("kind") == "Deployment":
            spec = d["spec"]["template"]["spec"]
            spec["containers"] = [app_container(c, "native", env) if c["name"] == "app" else c
                                  for c in spec["containers"]]
    sys.stdout.write(yaml.safe_dump_all(docs))


if __name__ == "__main__":
    main()
