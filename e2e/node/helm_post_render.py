"""helm --post-renderer of the node tier's helm scenarios (helm.POST_RENDER): the chart's example
`app` container becomes the test's app (cluster.app_container, its environment as JSON in
$LHAPP_ENV_JSON); HelmRun.check_manifest checks that nothing else changed."""

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
