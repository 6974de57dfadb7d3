"""One node scenario's context (NodeScenario, as_instrument, NODE_REPEAT) and its Runs: a
namespace with the shipped overlay, its instruments, the judge's rules, the evidence on failure.
"""

import gc
import json
import os
import subprocess
import threading
import time
import uuid
from pathlib import Path

from e2e.lib import judge as verdict
from e2e.lib.common import wait_until
from e2e.lib.lockwatch import NodeLockWatch, json_objects
from e2e.node import cluster, judge
from e2e.node.bounds import SAMPLE_INTERVAL
from e2e.node.cluster import cluster_time, log


class LogFollower:
    """`kubectl logs -f` of one container, from its start, kept in memory (and dumped on
    failure): the deleted pod's logs are gone from the apiserver once the pod is."""

    def __init__(self, node, ns, pod, container, before=None):
        """`before`: a follower whose stream ended (the kubelet restarted): its lines are kept,
        and this one goes on after its last line's timestamp."""
        self.lines, self.pod, self.container = [], pod, container
        self.after = None
        cmd = [str(node.bin_dir / "kubectl"), "--kubeconfig", str(node.kubeconfig), "logs",
               "-f", "-n", ns, pod, "-c", container, "--timestamps"]
        if before is not None and before.lines:
            self.lines = list(before.lines)
            last = self.lines[-1].split(" ", 1)[0]
            self.after = cluster_time(last)
            cmd.append(f"--since-time={last}")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            if self.after is not None:  # --since-time has whole-second resolution
                try:
                    if cluster_time(line.split(" ", 1)[0]) <= self.after:
                        continue
                except ValueError:
                    pass
                self.after = None
            self.lines.append(line)

    def text(self):
        return "".join(self.lines)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(5)


class Run:
    """One scenario's namespace, sampler, lock watch and log followers."""

    lock_name = "leasehold-lock"

    def __init__(self, node, name, variant, replicas=3, configmap=None, app_env=None):
        self.node, self.name, self.variant = node, name, variant
        self.app_env = app_env or {}
        self.ns = f"{variant}-{uuid.uuid4().hex[:6]}"
        self.replicas, self.configmap = replicas, configmap
        self.followers = {}
        self.sampler = self.watch = None
        self.pod_ips = {}
        self.deleted = {}  # pod -> when the pod watch first saw its deletion (time.time())
        self.stopping = threading.Event()
        self.stopped = False

    def __enter__(self):
        """One that fails to start is stopped (its evidence kept)."""
        try:
            return self.start()
        except BaseException:
            self.stop(True)
            raise

    def __exit__(self, exc_type, exc, tb):
        self.stop(exc_type is not None)
        return False

    def app_env_full(self):
        env = {"LHAPP_UNIT_MS": 100, "LHAPP_IDLE_MS": 20, **self.app_env}
        if self.variant == "classic":  # the files of the shipped preStop hook
            env.update(LHAPP_STOP_FILE="/run/app/stop", LHAPP_STOPPED_FILE="/run/app/stopped")
        return env

    def docs(self):
        """The shipped overlay, rendered (checked: only replicas, images and the app differ)."""
        docs, shipped = cluster.render(self.node, self.variant, self.replicas,
                                       app_env=self.app_env_full(), configmap=self.configmap)
        cluster.assert_shipped(docs, shipped, self.configmap)
        return docs

    def deploy(self):
        """Applies docs(); the name of the Deployment with the app (observe-watch's has none)."""
        docs = self.docs()
        cluster.apply(self.node, self.ns, docs)
        return next(d["metadata"]["name"] for d in docs if d["kind"] == "Deployment" and any(
            c["name"] == "app" for c in d["spec"]["template"]["spec"]["containers"]))

    def start(self):
        t = time.time()
        self.deployment = self.deploy()
        kind = "configmap" if self.variant == "classic" else "lease"
        self.watch = NodeLockWatch(self.node, self.ns, kind, self.lock_name)
        self.lister = threading.Thread(target=self._list, daemon=True)
        self.lister.start()
        self.sampler = judge.Sampler(lambda: dict(self.pod_ips), SAMPLE_INTERVAL).start()
        self.wait_ready(self.replicas)
        self.ready_s = time.time() - t
        log(f"{self.replicas} pods Ready {self.ready_s:.1f}s after apply")
        return self

    def _see(self, p):
        name, ip = p["metadata"]["name"], p["status"].get("podIP")
        if ip and name not in self.pod_ips:
            self.pod_ips[name] = ip
        if p["metadata"].get("deletionTimestamp") and name not in self.deleted:
            # Its life's end (deletionTimestamp is the grace period's end, not its start).
            self.deleted[name] = time.time()
        for c in (p["status"].get("containerStatuses", []) +
                  p["status"].get("initContainerStatuses", [])):
            key = (name, c["name"])
            if key not in self.followers and ("running" in c.get("state", {}) or c.get("started")):
                self.followers[key] = LogFollower(self.node, self.ns, name, c["name"])

    def _list(self):
        """Pods from a watch (a new pod is sampled as soon as it has an IP: a replacement pod
        can take the lock within a second of its start), re-listed if the watch ends."""
        while not self.stopping.is_set():
            cmd = [str(self.node.bin_dir / "kubectl"), "--kubeconfig", str(self.node.kubeconfig),
                   "get", "pods", "-n", self.ns, "--watch", "-o", "json"]
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    text=True)
            self.pod_watch = proc
            try:
                for obj in json_objects(proc.stdout):
                    self._see(obj)
            except Exception as e:
                log(f"watching pods: {e}")
            finally:
                if proc.poll() is None:
                    proc.terminate()
                proc.wait(5)
            self.stopping.wait(0.2)

    def pod_names(self):
        return {p["metadata"]["name"] for p in self.node.pods(self.ns)}

    def rollout_restart(self):
        self.node.kubectl("rollout", "restart", f"deployment/{self.deployment}", "-n", self.ns)

    def ready_pods(self):
        out = []
        for p in self.node.pods(self.ns):
            if p["metadata"].get("deletionTimestamp"):
                continue
            conds = {c["type"]: c["status"] for c in p["status"].get("conditions", [])}
            if conds.get("Ready") == "True":
                out.append(p["metadata"]["name"])
        return out

    def wait_ready(self, n, timeout=120):
        return wait_until(lambda: len(self.ready_pods()) == n and self.ready_pods(), timeout,
                          0.2, f"{n} Ready pods in {self.ns}")

    def single_leader(self, timeout=60, stable=1.0):
        """The one pod all samples of the last `stable` s agree leads."""
        def one():
            ls = self.sampler.leaders_now(stable)
            return ls[0] if len(ls) == 1 else None
        return wait_until(one, timeout, 0.1, "exactly one leader")

    def next_yes(self, t, leader, timeout, what="the next pod's first yes"):
        """The first "yes" sample sent at or after `t` by a pod other than `leader`, waited for."""
        return wait_until(lambda: self.sampler.first_yes_after(t, exclude=(leader,)), timeout,
                          0.05, what)

    def holder_pods(self):
        """The lock's holders in order, as pod names (a release's empty holder left out)."""
        return [judge.pod_of(h, list(self.pod_ips)) for h in self.watch.holders() if h]

    def lock_changes(self, since):
        """[(t, holder)] of the lock's history from `since`: a pod's name, "" or an identity."""
        return [(t, judge.pod_of(h, list(self.pod_ips)) or h) for t, h in self.watch.history
                if t >= since]

    def units(self):
        out = {}
        for (pod, c), f in self.followers.items():
            if c == "app":
                out.setdefault(pod, []).extend(judge.parse_units(f.text()))
        return out

    def wait_units(self, pod, n, timeout=30):
        return wait_until(lambda: len(self.units().get(pod, [])) >= n, timeout, 0.1,
                          f"{n} units of work by {pod}")

    def judge(self, t0, t1, exemptions=(), require_handover=False, residual=()):
        """e2e/lib/judge.py's rules over [t0, t1], a pod's life ending where the pod watch saw
        its deletion, outside `exemptions`; no two pods' units intersect, except the `residual`
        ones ((pod, start): bounded by the caller)."""
        definite, possible, judged = verdict.judge(
            self.sampler.by_pod(), t0, t1, SAMPLE_INTERVAL, ends=dict(self.deleted),
            exemptions=exemptions, fail_on=("definite",), require_handover=require_handover)
        log(f"judged {len(judged)} pods over their lives in {t1 - t0:.1f}s: {judged}")
        if possible:
            log(f"possible overlaps: {possible[:10]}")
        units = {p: [u for u in us if (p, u["start"]) not in residual]
                 for p, us in self.units().items()}
        bad = judge.unit_intersections(units)
        assert not bad, f"units of leader-only work of two pods intersect: {bad[:5]}"
        return possible

    def stop(self, failed):
        """Stops what the run started, keeps the evidence, and deletes the namespace whatever
        fails on the way; once, whether its `with` or its NodeScenario stops it."""
        if self.stopped:
            return
        self.stopped = True
        try:
            self._stop(failed)
        finally:
            self.node.kubectl("delete", "namespace", self.ns, "--wait=true", "--timeout=120s",
                              check=False, timeout=180)

    def _stop(self, failed):
        self.stopping.set()
        if getattr(self, "pod_watch", None) is not None and self.pod_watch.poll() is None:
            self.pod_watch.terminate()
        if self.sampler:
            self.sampler.stop()
            keep = os.environ.get("LEASEHOLD_NODE_KEEP_SAMPLES")  # a directory: measurements
            if keep:
                Path(keep).mkdir(parents=True, exist_ok=True)
                self.sampler.dump(Path(keep) / f"{self.name}-{self.ns}.json")
            log(f"sampler (pid {self.sampler.pid}): {self.sampler.report()}")
        if self.watch:
            self.watch.stop()
        for f in self.followers.values():
            f.stop()
        if failed:
            out = Path(os.environ.get("LEASEHOLD_NODE_EVIDENCE",
                                      self.node.dir / "evidence" / self.name))
            out.mkdir(parents=True, exist_ok=True)
            if self.sampler:
                self.sampler.dump(out / "samples.json")
            if self.watch:
                (out / "lock-history.json").write_text(json.dumps(self.watch.history))
            for (pod, c), f in self.followers.items():
                (out / f"{pod}.{c}.log").write_text(f.text())
            self.node.evidence(out)
            log(f"evidence kept in {out}")


class NodeScenario:
    """The context of one node scenario (Registry.main(context=...)): the node's network namespace
    (entered once, before any thread), the fixture's health before and after, the scenario's
    Runs (`with s.run(variant) as run:`), PASS/FAIL. Not in e2e/lib: it imports the tier."""

    entered = False  # the process is in the node's network namespace

    def __init__(self, name, banner=None):
        self.name, self.banner, self.runs = name, banner, []

    def __enter__(self):
        if not NodeScenario.entered:
            cluster.enter_netns()
            NodeScenario.entered = True
        self.node = cluster.Node()
        self.node.health()
        self.t = time.monotonic()
        if self.banner:
            log(self.banner)
        return self

    def run(self, variant, cls=None, node=None, name=None, **kw):
        """A Run (or `cls`, a Run subclass) of `variant` on this scenario's node, named after
        the scenario unless `name` is given; started when entered as a context."""
        run = (cls or Run)(node or self.node, name or self.name, variant, **kw)
        self.runs.append(run)
        return run

    def __exit__(self, exc_type, exc, tb):
        failed = exc_type is not None
        try:
            for run in self.runs:  # those the scenario did not stop (not entered as a context)
                if not run.stopped:
                    run.stop(failed)
            if not failed:
                self.node.health()
        except BaseException:
            failed = True
            raise
        finally:
            log(f"{'FAIL' if failed else 'PASS'} {self.name} "
                f"{'after' if failed else 'in'} {time.monotonic() - self.t:.1f}s")
        return False


def repeat():
    return int(os.environ.get("NODE_REPEAT", "1"))


def as_instrument():
    """The scenario process as the measuring instrument (node_faults, node_disruptions)."""
    # This process still times the faults (freezer, Lease polls, thaws): under load 7-9 a full
    # cyclic collection was the suspect of 420-430 ms stalls every thread saw at once, and a
    # scenario makes no cycles worth collecting. What it starts for the node goes back to the
    # node's priority (host_run).
    gc.disable()
    os.nice(-5)
