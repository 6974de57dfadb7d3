"""HelmRun: the chart (deploy/helm/leasehold) installed for real on the node."""

import json
import os
import subprocess
import sys

import yaml

from e2e.node import cluster
from e2e.node.run import Run

CHART = cluster.DEPLOY / "helm" / "leasehold"
# The post-renderer, run by helm as a program: this Python, the module (PYTHONPATH: the repo).
POST_RENDER = ["--post-renderer", sys.executable, "--post-renderer-args=-m",
               "--post-renderer-args=e2e.node.helm_post_render"]
HELM_RELEASE = "leasehold"  # full name "leasehold": the Deployment is leasehold-example


class HelmRun(Run):
    """A Run whose objects come from `helm install` of the chart with the cluster's capabilities
    (no --kube-version, lock type or sidecar mode forced), post-rendered (check_manifest)."""

    lock_name = HELM_RELEASE
    release = HELM_RELEASE

    def stop(self, failed):
        """On failure the release goes first (whatever it left would outlive the namespace)."""
        if failed and not self.stopped:
            self.helm("uninstall", self.release, "--wait", "--timeout", "60s", check=False,
                      post=False)
        super().stop(failed)

    def values(self, extra=()):
        return ["--set", "exampleDeployment.enabled=true", "--set", f"replicas={self.replicas}",
                "--set", "image.repository=leasehold.local/leasehold", "--set", "image.tag=dev",
                "--set", "image.pullPolicy=Never",
                "--set", f"exampleDeployment.image={cluster.APP_IMAGE}", *extra]

    def helm(self, *args, check=True, post=True):
        env = {**os.environ, "HELM_CACHE_HOME": str(self.node.dir / "helm-cache"),
               "HELM_CONFIG_HOME": str(self.node.dir / "helm-config"),
               "HELM_DATA_HOME": str(self.node.dir / "helm-data"),
               "LHAPP_ENV_JSON": json.dumps(self.app_env_full()),
               "PYTHONPATH": str(cluster.REPO)}
        cmd = [str(self.node.bin_dir / "helm"), "--kubeconfig", str(self.node.kubeconfig),
               "-n", self.ns, *args]
        if post:
            cmd += POST_RENDER
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=400)
        if check and r.returncode != 0:
            raise AssertionError(f"helm {' '.join(args)}: {r.returncode}\n{r.stdout}\n{r.stderr}")
        return r

    def deploy(self, extra=()):
        self.node.kubectl("create", "namespace", self.ns)
        self.helm("install", HELM_RELEASE, str(CHART), "--wait", "--timeout", "300s",
                  *self.values(extra))
        self.check_manifest(extra)
        return f"{HELM_RELEASE}-example"

    def check_manifest(self, extra=()):
        """The release's manifest (post-rendered) against `helm template` of the same values
        with the cluster's capabilities: only the Deployment's app container differs."""
        got = [d for d in yaml_docs(self.helm("get", "manifest", HELM_RELEASE, post=False).stdout)]
        want = [d for d in yaml_docs(self.helm("template", HELM_RELEASE, str(CHART), "--validate",
                                               *self.values(extra), post=False).stdout)
                if not (d.get("metadata", {}).get("annotations") or {}).get("helm.sh/hook")]
        key = lambda d: (d["kind"], d["metadata"]["name"])  # noqa: E731
        assert sorted(map(key, got)) == sorted(map(key, want)), (list(map(key, got)),
                                                                  list(map(key, want)))
        want = {key(d): d for d in want}
        for d in got:
            w = json.loads(json.dumps(want[key(d)]))
            if d["kind"] == "Deployment":
                d = json.loads(json.dumps(d))
                for x in (d, w):
                    x["spec"]["template"]["spec"]["containers"] = [
                        c for c in x["spec"]["template"]["spec"]["containers"] if c["name"] != "app"]
            assert d == w, f"{key(d)}: the post-renderer changed more than the app container"
        self.manifest = got


def yaml_docs(text):
    return [d for d in yaml.safe_load_all(text) if d]
