"""e2e checks of what leasehold ships: the image, deploy/ (Kustomize), the Helm chart and the
K8up example, on a real etcd + kube-apiserver (how to run: e2e/scenarios/__init__.py).

Every rendering is sent to the apiserver with `kubectl apply --dry-run=server -o json`, which
both proves it is accepted and gives it back as JSON to assert on. Then the sidecar is run as the
rendered Deployment would run it (Ship.sidecar, with the rendering's RBAC applied for real), since
there is no kubelet.
"""

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from e2e.lib.agent import Agent, wait_single_leader
from e2e.lib.common import (DEPLOY, MONO_TO_WALL, REPO, Watch, free_port, leasehold_binary, log,
                             parse_rfc3339, wait_until)
from e2e.lib.controlplane import ANNOTATION, Namespace, can_i
from e2e.lib.operator import LABEL, create_pods, labels
from e2e.lib.runner import Registry, Scenario
from e2e.lib.sampler import Sampler
from e2e.lib.standin import StandInHolder

CHART = DEPLOY / "helm" / "leasehold"
K8UP = DEPLOY / "examples" / "k8up"
NATIVE = DEPLOY / "overlays" / "native-sidecar"
CLASSIC = DEPLOY / "overlays" / "classic-sidecar"
COMPONENTS = DEPLOY / "components"
LOCK = "leasehold-lock"  # deploy/'s lock name
EXAMPLE = "exampleDeployment.enabled=true"
NO_LEASE_API = "--runtime-config=coordination.k8s.io/v1=false,coordination.k8s.io/v1beta1=false"
SCENARIOS = Registry()
scenario = SCENARIOS.add


# ------------------------------------------------------------------------------------- helpers

def helm(cp, *args, check=True, env=()):
    """The pinned helm, its homes in the control plane's dir; `env`: more variables."""
    homes = {f"HELM_{k.upper()}_HOME": str(cp.dir / f"helm-{k}")
             for k in ("cache", "config", "data")}
    r = subprocess.run([f"{cp.env['BIN_DIR']}/helm", *args], capture_output=True, text=True,
                       env={**os.environ, **homes, **dict(env)})
    if check and r.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)} failed ({r.returncode}):\n"
                             f"{r.stdout}\n{r.stderr}")
    return r


def ensure_ns(cp, name):
    cp._sh("ensure-ns", str(cp.dir), name)
    return name


def dry_run(cp, text, namespace):
    """Sends the manifests to the apiserver (server-side dry run); returns them as accepted."""
    out = cp.kubectl("apply", "--dry-run=server", "-n", namespace, "-o", "json", "-f", "-",
                     input=text)
    doc = json.loads(out)
    return doc["items"] if doc.get("kind") == "List" else [doc]


def overlay(tmp, resource, components):
    """A kustomization in tmp: deploy/ directory `resource` with `components` on top."""
    d = Path(tempfile.mkdtemp(dir=tmp, prefix="kust-"))
    (d / "kustomization.yaml").write_text("\n".join([
        "apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization",
        f"resources: [{os.path.relpath(resource, d)}]",
        "components:", *[f"  - {os.path.relpath(c, d)}" for c in components]]) + "\n")
    return d


def kustomized(s, cp, ns, resource, components=()):
    """(ns, `resource` (with `components`: overlay) as the apiserver accepts it in `ns`)."""
    if components:
        resource = overlay(s.tmp, resource, components)
    return ensure_ns(cp, ns), dry_run(cp, cp.kubectl("kustomize", str(resource)), ns)


def one(objs, kind, name=None):
    found = [o for o in objs if o["kind"] == kind and name in (None, o["metadata"]["name"])]
    assert len(found) == 1, \
        f"want one {kind} {name or ''}, got {[o['metadata']['name'] for o in found]}"
    return found[0]


def assert_absent(objs, *refs):
    """No object of `objs` is one of `refs`: a KIND, or a KIND/NAME."""
    found = [f"{o['kind']}/{o['metadata']['name']}" for o in objs
             if o["kind"] in refs or f"{o['kind']}/{o['metadata']['name']}" in refs]
    assert not found, f"must be gone: {found}"


def pod_spec(dep):
    return dep["spec"]["template"]["spec"]


def container(dep, name):
    return sidecar(dep, name)[0]


def args_of(c):
    """{flag: value} of a container's --flag=value args."""
    return dict(a.split("=", 1) for a in c["args"])


def holder_of(cp, ns, kind="configmaps", name=LOCK):
    """The holder that lock `name` of `kind` names ("" when released): a Lease's
    holderIdentity, or a ConfigMap's leader annotation."""
    obj = cp.get_json(kind, name, "-n", ns)
    if kind == "leases":
        return obj["spec"].get("holderIdentity", "")
    return json.loads(obj["metadata"]["annotations"][ANNOTATION])["holderIdentity"]


def sidecar(dep, name="leasehold"):
    """(container, 'initContainers'|'containers') of the sidecar in a Deployment."""
    spec = pod_spec(dep)
    for where in ("initContainers", "containers"):
        for c in spec.get(where) or []:
            if c["name"] == name:
                return c, where
    raise AssertionError(f"no container {name} in Deployment {dep['metadata']['name']}")


def assert_args(objs, where, deployment=None, **want):
    """The sidecar of Deployment `deployment` (by default the one) of `objs` is in `where` (None:
    either) and has each flag of `want` (lock_type: --lock-type) set to its value there (None:
    unset). Returns its args ({flag: value})."""
    c, w = sidecar(one(objs, "Deployment", deployment))
    assert where in (None, w), (where, w)
    args = args_of(c)
    want = {"--" + k.replace("_", "-"): v for k, v in want.items()}
    assert {k: args.get(k) for k in want} == want, (want, args)
    return args


def rules_of(role):
    """{(group, resource, tuple(resourceNames)): frozenset(verbs)} of a Role."""
    out = {}
    for r in role.get("rules", []):
        for g in r.get("apiGroups", []):
            for res in r.get("resources", []):
                key = (g, res, tuple(r.get("resourceNames", [])))
                out[key] = out.get(key, frozenset()) | frozenset(r["verbs"])
    return out


def assert_restricted(dep, where=None):
    """Pod Security "restricted" settings, no runAsUser, and the sidecar's resources; with
    `where`, the sidecar there (a native one restartPolicy Always, a classic one none). Returns
    the sidecar."""
    spec = pod_spec(dep)
    psc = spec.get("securityContext", {})
    assert "runAsUser" not in psc, psc
    for c in (spec.get("initContainers") or []) + spec["containers"]:
        sc = c.get("securityContext", {})
        assert "runAsUser" not in sc, (c["name"], sc)
    c, w = sidecar(dep)
    if where:
        assert w == where and c.get("restartPolicy") == {"initContainers": "Always"}.get(w), (w, c)
    sc = c["securityContext"]
    assert sc.get("runAsNonRoot") is True or psc.get("runAsNonRoot") is True, sc
    assert sc["readOnlyRootFilesystem"] is True, sc
    assert sc["allowPrivilegeEscalation"] is False, sc
    assert sc["capabilities"]["drop"] == ["ALL"], sc
    seccomp = sc.get("seccompProfile") or psc.get("seccompProfile")
    assert seccomp == {"type": "RuntimeDefault"}, (sc, psc)
    res = c["resources"]
    assert "cpu" not in res.get("limits", {}), f"no CPU limit on the sidecar: {res}"
    assert res["limits"]["memory"] and res["requests"]["memory"] and res["requests"]["cpu"], res
    return c


def assert_settings(objs, where, absent=(), deployment=None, **want):
    """A Kustomize rendering: Deployment `deployment` (by default the one) assert_restricted
    with its sidecar in `where`, its envFrom settings as in `want` (LOCK_TYPE: LEASEHOLD_LOCK_TYPE;
    None: unset), none of `absent` (assert_absent). Returns (the Deployment, the settings)."""
    dep = one(objs, "Deployment", deployment)
    ref = assert_restricted(dep, where)["envFrom"][0]["configMapRef"]["name"]
    data = one(objs, "ConfigMap", ref)["data"]
    want = {"LEASEHOLD_" + k: v for k, v in want.items()}
    assert {k: data.get(k) for k in want} == want, (want, data)
    assert_absent(objs, *absent)
    return dep, data


def assert_gated(dep, container, command_tail):
    """`container` runs through `leasehold gate`, from the binary that the init container
    leasehold-install copies into the emptyDir leasehold-bin, with gate-probe probes."""
    spec = pod_spec(dep)
    inits = spec.get("initContainers") or []
    inst = next(c for c in inits if c["name"] == "leasehold-install")
    assert inst["command"] == ["/leasehold", "install", "/leasehold-bin"], inst
    assert "restartPolicy" not in inst, inst
    vol = next(v for v in spec["volumes"] if v["name"] == "leasehold-bin")
    assert "emptyDir" in vol, vol
    op = next(c for c in spec["containers"] if c["name"] == container)
    assert op["command"] == ["/leasehold-bin/leasehold", "gate", "--", *command_tail], op["command"]
    assert {"name": "leasehold-bin", "mountPath": "/leasehold-bin"} in op["volumeMounts"], op
    assert op["livenessProbe"]["exec"]["command"] == ["/leasehold-bin/leasehold", "gate-probe"]
    for c in inits:  # the installer first, so the binary is there before anything uses it
        assert c["name"] == "leasehold-install" or inits.index(inst) < inits.index(c), inits


class Ship(Scenario):
    """Scenario plus rendered sidecars (stopped, and judged, as its agents) and a temp dir."""

    def __init__(self, name):
        super().__init__(name)
        self.tmp = Path(tempfile.mkdtemp(prefix=f"leasehold-ship-{name}-"))
        self.at_exit(shutil.rmtree, self.tmp, True)

    def sidecar(self, cp, ns, objs, pod_name, deployment=None):
        """The leasehold container of a rendered Deployment, started as the kubelet would run
        it: its args and env (envFrom ConfigMaps from the same rendering, downward API values
        filled in), in-cluster with a token of the pod's ServiceAccount, unless the pod mounts
        none. Test overrides (flags win over env): the local API and the probe listener on free
        ports."""
        dep = one(objs, "Deployment", deployment)
        c, _ = sidecar(dep)
        spec = pod_spec(dep)
        env = {}
        for ef in c.get("envFrom", []):
            env.update(one(objs, "ConfigMap", ef["configMapRef"]["name"]).get("data", {}))
        for e in c.get("env", []):
            if "value" in e:
                env[e["name"]] = e["value"]
            else:
                path = e["valueFrom"]["fieldRef"]["fieldPath"]
                env[e["name"]] = {"metadata.name": pod_name, "metadata.namespace": ns}[path]
        args = c.get("args", [])
        probe = env.get("LEASEHOLD_PROBE_ADDRESS") or any(
            a.startswith("--probe-address=") for a in args)
        port, probe_port = free_port(), free_port() if probe else None
        args = [a for a in args if not a.startswith(("--http-address", "--probe-address"))]
        args.append(f"--http-address=127.0.0.1:{port}")
        if probe:
            args.append(f"--probe-address=127.0.0.1:{probe_port}")
        sa_dir = self.tmp / f"sa-{pod_name}"
        if spec.get("automountServiceAccountToken") is False:
            # As in such a pod: the kubelet still sets KUBERNETES_SERVICE_*, but there is no
            # token; here they point at a closed port, so any API call would fail.
            sa_dir.mkdir(parents=True, exist_ok=True)
            api = ("127.0.0.1", free_port())
        else:
            cp.sa_dir(ns, spec.get("serviceAccountName") or "default", sa_dir)
            api = (cp.host, cp.port)
        sc = Agent.with_flags(pod_name, [*args, f"--serviceaccount-dir={sa_dir}"], port, sa_dir,
                              self.tmp, api, env=env, probe_port=probe_port, request_timeout=1.0)
        self.agents.append(sc)
        return sc.start()


@contextlib.contextmanager
def session(argv, log_path, env=None):
    """`argv` run in a session of its own, its output in `log_path`; yields the process. On a
    failure, prints the log's tail; at the end, SIGKILLs the session if it still runs."""
    with open(log_path, "ab") as out:
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            yield proc
        except BaseException:
            print(f"----- log of {log_path.name}\n{log_path.read_text(errors='replace')[-3000:]}")
            raise
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


def on_host(text, state, port):
    """The pod's paths and ports in `text` mapped to this host: the app's state in `state`,
    its sidecar on 127.0.0.1:`port`, sh and wget from the host's PATH."""
    return (text.replace("/run/app", str(state)).replace("localhost:4040", f"127.0.0.1:{port}")
            .replace("/busybox/sh", "sh"))


@contextlib.contextmanager
def app_process(s, script, port):
    """The example app's `script` run on this host (on_host, its state in s.tmp/run-app) in a
    session (its log s.tmp/app.log). Yields (process, that log's path, the state dir)."""
    state, path = s.tmp / "run-app", s.tmp / "app.log"
    state.mkdir()
    with session(["sh", "-c", on_host(script, state, port)], path) as proc:
        yield proc, path, state


def apply_for_real(cp, objs, namespace):
    """Creates the rendered objects (all but the Deployment: there is no kubelet to run it)."""
    keep = [o for o in objs if o["kind"] != "Deployment"]
    for o in keep:
        for k in ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"):
            o["metadata"].pop(k, None)
    cp.kubectl("apply", "-n", namespace, "-f", "-",
               input=json.dumps({"apiVersion": "v1", "kind": "List", "items": keep}))


def assert_can(cp, ns, table, sa="leasehold"):
    """Whether ServiceAccount `sa` may: each (verb, resource, want) of `table`."""
    for verb, res, want in table:
        assert can_i(cp, ns, verb, res, sa=sa) == want, (verb, res, want, sa)


def run_and_release(s, cp, ns, objs, pod, lock_kind, leading=None, exit_within=25, can=(),
                    lock_name=LOCK):
    """apply_for_real, assert_can(`can`), the rendered sidecar run until it leads; checks the
    lock object, the probes, and leading(sidecar, its /leader body) if given; then SIGTERM: a
    clean exit within `exit_within` s (safe with no POST /release: up to renew-deadline) and
    (with a Lease) a released lock."""
    apply_for_real(cp, objs, ns)
    assert_can(cp, ns, can)
    sc = s.sidecar(cp, ns, objs, pod)
    body = sc.wait_leader()
    log(f"{pod}: leads, lock {body['lock']}")
    sc.check_probes()
    if lock_kind == "none":
        assert body["lock"]["type"] == "none" and body["name"] == body["identity"], body
    else:
        assert body["lock"]["type"] == lock_kind and body["lock"]["name"] == lock_name, body
        assert holder_of(cp, ns, lock_kind, lock_name) == body["identity"], body
    if leading:
        leading(sc, body)
    sc.term_and_wait(exit_within)
    if lock_kind == "leases":
        left = holder_of(cp, ns, lock_kind, lock_name)
        assert left == "", f"not released on SIGTERM: {left}"


# ------------------------------------------------------------------------------------ scenarios

@scenario
def image(s):
    """scripts/image.sh all: build the image from the Dockerfile with buildah (no Docker), run
    its --version, run one agent from its root filesystem against the control plane."""
    cp = s.control_plane()
    env = {**os.environ, "LEASEHOLD_E2E_CP": str(cp.dir), "CONTROLPLANE_BIN": cp.env["BIN_DIR"]}
    t = time.monotonic()
    r = subprocess.run(["bash", str(REPO / "scripts" / "image.sh"), "all"], env=env,
                       capture_output=True, text=True)
    print(r.stderr[-6000:])
    assert r.returncode == 0, f"scripts/image.sh all failed ({r.returncode})"
    sizes = dict(kv.split("=") for kv in r.stdout.split())
    log(f"image built and smoke-tested in {time.monotonic() - t:.0f}s: {sizes}")
    assert int(sizes["image_bytes"]) <= 30 * 1000 * 1000, sizes


@scenario
def kustomize(s):
    """Each overlay, and the components on top of them: accepted by the apiserver, restricted
    security, the sidecar where the variant puts it, the RBAC it needs and no more; then run."""
    cp = s.control_plane()
    creates = ("Role/leasehold-create", "RoleBinding/leasehold-create")

    # Native sidecar, Lease (auto), safe (why: native_sidecar_stopped_alone and
    # native_shutdown_acknowledged); the deletion cost on by default, with its Role.
    ns, objs = kustomized(s, cp, "ship-k-native", NATIVE)
    assert_settings(objs, "initContainers", RELEASE_ON_SHUTDOWN="safe", LOCK_TYPE="auto",
                    DELETION_COST="10000")
    assert one(objs, "Role", "leasehold-create")
    assert rules_of(one(objs, "Role", "leasehold-pod")) == {("", "pods", ()): {"get", "patch"}}
    # Switched off: neither the setting nor the Role (pods get/patch) is left.
    assert_settings(kustomized(s, cp, ns, NATIVE, [COMPONENTS / "no-deletion-cost"])[1], None,
                    ("Role/leasehold-pod", "RoleBinding/leasehold-pod"), DELETION_COST=None)
    run_and_release(s, cp, ns, objs, "native-0", "leases", can=(
        ("create", "leases", True), ("get", "leases/other", False), ("patch", "pods", True)))

    # Classic sidecar, ConfigMap lock, preStop POST /release, ConfigMap-only RBAC.
    ns, objs = kustomized(s, cp, "ship-k-classic", CLASSIC)
    dep, _ = assert_settings(objs, "containers", LOCK_TYPE="configmaps", RELEASE_ON_SHUTDOWN="safe")
    hook = " ".join(container(dep, "app")["lifecycle"]["preStop"]["exec"]["command"])
    assert "/release" in hook and "--post-data" in hook, hook
    role = one(objs, "Role", "leasehold")
    assert {res for (_, res, _) in rules_of(role)} <= {"configmaps", "events"}, role

    def pre_stop(sc, _):
        # What the preStop hook does once the app stopped: POST /release. The safe sidecar then
        # releases at once instead of after renew-deadline.
        st, _ = sc.request("POST", "/release")
        assert st in (200, 202), st
        wait_until(lambda: holder_of(cp, ns) == "", 5,
                   what="the ConfigMap lock to be released after POST /release")
    run_and_release(s, cp, ns, objs, "classic-0", "configmaps", pre_stop, exit_within=15,
                    can=(("get", f"leases.coordination.k8s.io/{LOCK}", False),))

    # Leader election off: none, no RBAC, no token, no API server needed.
    ns, objs = kustomized(s, cp, "ship-k-off", DEPLOY / "overlays" / "no-leader-election")
    dep, _ = assert_settings(objs, None, ("Role", "RoleBinding", "ServiceAccount"))
    spec = pod_spec(dep)
    assert spec["automountServiceAccountToken"] is False and dep["spec"]["replicas"] == 1, spec
    assert spec.get("serviceAccountName", "default") == "default", spec
    run_and_release(s, cp, ns, objs, "off-0", "none")

    # Native + the Lease created at install time + the leader label: no namespace-wide create.
    pod = "precreated-0"
    ns, objs = kustomized(s, cp, "ship-k-precreated", NATIVE,
                          [COMPONENTS / "precreated-lease", DEPLOY / "rbac" / "leader-label"])
    assert_settings(objs, "initContainers", creates, LEADER_LABEL="leasehold.io/role")
    assert one(objs, "Lease", LOCK)
    apply_for_real(cp, objs, ns)  # its ServiceAccount first: the Pod object names it
    create_pods(cp, ns, [pod], "leasehold")  # for the label (no kubelet will run it)

    def labelled_and_reapplied(sc, body):
        wait_until(lambda: labels(cp, ns)[pod] == "leader", 10, what="the leader label on the pod")
        log(f"the pod is labelled {LABEL}=leader")
        apply_for_real(cp, objs, ns)  # applying the install again leaves the holder alone
        time.sleep(1)
        assert holder_of(cp, ns, "leases") == body["identity"]
        assert sc.leader_body(), "still leading after the manifests were applied again"
    run_and_release(s, cp, ns, objs, pod, "leases", labelled_and_reapplied, can=(
        ("create", "leases", False), ("create", "configmaps", False), ("patch", "pods", True)))

    # Classic + the ConfigMap created at install time.
    ns, objs = kustomized(s, cp, "ship-k-precreated-cm", CLASSIC,
                          [COMPONENTS / "precreated-configmap"])
    assert_settings(objs, "containers", creates[:1])
    run_and_release(s, cp, ns, objs, "precreated-cm-0", "configmaps",
                    can=(("create", "configmaps", False),))

    # The gate component on both variants: `app` through `leasehold gate`, the sidecar safe.
    # The gate's headroom: a renew every retry-period, not auto's longer interval.
    for variant, where in ((NATIVE, "initContainers"), (CLASSIC, "containers")):
        _, objs = kustomized(s, cp, f"ship-k-gate-{variant.name}", variant, [COMPONENTS / "gate"])
        dep, _ = assert_settings(objs, where, RELEASE_ON_SHUTDOWN="safe",
                                 RENEW_INTERVAL="retry-period")
        assert_gated(dep, "app", ["/busybox/sh", "-c"])
        log(f"components/gate on {variant.name}: accepted, app gated, release safe")


@scenario
def classic_shutdown(s):
    """The classic overlay's pod shutdown, played as the kubelet plays it (there is none here):
    `app` (its own script, from the rendered Deployment) works while leading; then at once the
    sidecar gets SIGTERM and app's preStop hook runs. The hook stops the work, waits for it, and
    POSTs /release: the lock must be free right after the work stopped, long before the
    renew-deadline that --release-on-shutdown=safe would wait without it."""
    cp = s.control_plane()
    ns, objs = kustomized(s, cp, "ship-classic-stop", CLASSIC)
    apply_for_real(cp, objs, ns)
    sc = s.sidecar(cp, ns, objs, "classic-stop-0")
    sc.wait_leader()
    app = container(one(objs, "Deployment"), "app")
    with app_process(s, app["args"][0], sc.port) as (proc, applog, state):
        hook = [on_host(x, state, sc.port) for x in app["lifecycle"]["preStop"]["exec"]["command"]]
        wait_until(lambda: b"leading" in applog.read_bytes(), 10, what="app to do leader-only work")
        t0 = time.monotonic()
        sc.proc.send_signal(signal.SIGTERM)
        pre = subprocess.Popen(hook)
        wait_until(lambda: sc.request("GET", "/is-leader")[0] != 200, 1,
                   what="the sidecar to stop saying yes at SIGTERM")
        t_stopped = wait_until(lambda: (state / "stopped").exists() and time.monotonic(), 10,
                               what="app to stop taking work", interval=0.01)
        wait_until(lambda: holder_of(cp, ns) == "", 10, what="the lock to be released",
                   interval=0.05)
        t_released = time.monotonic()
        assert pre.wait(10) == 0
        assert sc.proc.wait(10) == 0, sc.log_tail()
        log(f"work stopped {t_stopped - t0:.1f}s and lock free {t_released - t0:.1f}s after "
            "SIGTERM (renew-deadline 10s)")
        assert t_released - t0 < 6, \
            "released only when the renew-deadline ran out, not on POST /release"
        assert b"stopped taking work" in applog.read_bytes()
        # After the hook, the kubelet sends SIGTERM to app.
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0


def seconds(duration):
    """A Go-style duration of the shipped settings ("10s", "500ms", "1m") in seconds."""
    for unit, f in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
        if duration.endswith(unit) and duration[:-len(unit)].replace(".", "", 1).isdigit():
            return float(duration[:-len(unit)]) * f
    raise ValueError(f"duration {duration!r}")


def native_pair(s, tag):
    """The shipped native overlay rendered and applied (apply_for_real) in namespace `tag`, two
    of its sidecars run (pods TAG-0, TAG-1). Returns (cp, ns, objs, settings, leader, rival, renew-deadline
    and retry-period in s)."""
    cp = s.control_plane()
    ns, objs = kustomized(s, cp, tag, NATIVE)
    cp.kubectl("delete", "lease,configmap", LOCK, "-n", ns, "--ignore-not-found")
    apply_for_real(cp, objs, ns)
    cfg = one(objs, "ConfigMap")["data"]
    log(f"native overlay: --release-on-shutdown={cfg['LEASEHOLD_RELEASE_ON_SHUTDOWN']}, "
        f"lease {cfg['LEASEHOLD_LEASE_DURATION']}, renew-deadline "
        f"{cfg['LEASEHOLD_RENEW_DEADLINE']}, retry {cfg['LEASEHOLD_RETRY_PERIOD']}")
    pods = [s.sidecar(cp, ns, objs, f"{tag}-{i}") for i in range(2)]
    leader = wait_single_leader(pods, 30)
    rival = next(p for p in pods if p is not leader)
    wait_until(lambda: rival.request("GET", "/leader")[0] == 200, 10, what="the rival's first read")
    # The rival's lock watch starts within one retry-period of its first read (lock_watcher.cpp
    # pauses while `auto` is unresolved); until then it polls. takeover_bound holds either way;
    # this only makes the measured takeover the usual, watched one.
    retry = seconds(cfg["LEASEHOLD_RETRY_PERIOD"])
    time.sleep(retry)
    return cp, ns, objs, cfg, leader, rival, seconds(cfg["LEASEHOLD_RENEW_DEADLINE"]), retry


# A candidate that polls tries again within retry-period x (1 + 1.2), the jitter of
# elector.cpp; one that watches takes a released lock within a round trip.
def takeover_bound(retry):
    return 2.2 * retry + 0.5


def rival_first_yes(smp, leader, rival, t_term, renew):
    """The rival's first yes after the leader's SIGTERM at `t_term` (monotonic), once the leader
    exited with 0; `smp` stopped, and its samples hold no two leaders at once."""
    first = wait_until(lambda: smp.first_yes_after(t_term, exclude=(leader.name,)),
                       renew + 10, what="the rival's first yes")
    rc = leader.wait(renew + 10)
    time.sleep(0.3)
    smp.stop()
    ov = smp.overlaps()
    assert not ov, f"two leaders at once: {ov[:3]}"
    assert first[1] == rival.name, first
    assert rc == 0, f"sidecar exited with {rc} after SIGTERM:\n{leader.log_tail()}"
    return first[0]


@scenario
def native_sidecar_stopped_alone(s):
    """The shipped native overlay's sidecar gets SIGTERM ALONE (a liveness failure, `crictl
    stop`, an in-place resize restart) while `app` keeps running on a fresh "yes" from GET
    /leader: nobody POSTs /release. The rival's first "yes" must come no earlier than the
    validUntil the app was given (and, the price, no later than renew-deadline after the SIGTERM
    plus a takeover). With --release-on-shutdown=immediate in the overlay it fails: the sidecar
    released at once and the rival led ~renew-deadline too early."""
    _, _, _, cfg, leader, rival, renew, retry = native_pair(s, "ship-native-alone")
    with Sampler([leader, rival]) as smp:
        time.sleep(retry + 0.5)  # a renew or two: the app's yes is as long as they come
        given = leader.leader_body()  # the app's fresh yes
        assert given and given.get("validUntil"), given
        valid_until = parse_rfc3339(given["validUntil"])
        t_term = time.monotonic()
        leader.term()  # the kubelet stops the sidecar alone: `app` got no signal, no POST
        first = rival_first_yes(smp, leader, rival, t_term, renew)
    first_wall = first + MONO_TO_WALL
    took = first - t_term
    log(f"sidecar stopped alone ({cfg['LEASEHOLD_RELEASE_ON_SHUTDOWN']}): the rival's first yes "
        f"{took:.3f}s after the SIGTERM, {first_wall - valid_until:+.3f}s from the validUntil "
        f"the app held ({valid_until - (t_term + MONO_TO_WALL):.3f}s ahead at the SIGTERM)")
    assert first_wall >= valid_until, \
        (f"the rival led {valid_until - first_wall:.3f}s before the validUntil the app was given "
         "(a sidecar stopped alone gave its promise up)")
    assert "released lease" in leader.log_text(), "the sidecar did not release at all"
    # What keeping the promise costs: at most renew-deadline, then one release and one takeover.
    bound = renew + takeover_bound(retry)
    assert took <= bound, f"the rival led {took:.3f}s after the SIGTERM > {bound}s"


@scenario
def native_shutdown_acknowledged(s):
    """Pod deletion under the shipped native overlay, played as the kubelet plays it: `app` (the
    example's own script, from the rendered Deployment, with the host's sh and wget) gets SIGTERM
    first, stops its work and POSTs /release; once it exited, the sidecar gets SIGTERM. The
    sidecar (safe) must release on the acknowledgement, so the rival leads within one release
    and one takeover of the app's SIGTERM (takeover_bound), below the renew-deadline a sidecar
    without the acknowledgement waits."""
    _, _, objs, cfg, leader, rival, renew, retry = native_pair(s, "ship-native-ack")
    app = container(one(objs, "Deployment"), "app")
    with app_process(s, app["args"][0], leader.port) as (proc, applog_path, _):
        with Sampler([leader, rival]) as smp:
            wait_until(lambda: b"leading" in applog_path.read_bytes(), 10,
                       what="app to do leader-only work")
            t_term = time.monotonic()
            proc.send_signal(signal.SIGTERM)  # the kubelet: `app` first
            assert proc.wait(10) == 0
            t_app_exit = time.monotonic()
            leader.term()  # then the native sidecar
            took = rival_first_yes(smp, leader, rival, t_term, renew) - t_term
    text = leader.log_text()
    # The POST is answered 202 and acted on by the election loop; the sidecar's SIGTERM, sent
    # here right after app exited (the kubelet waits for its next relist), may overtake it.
    # Either way the acknowledgement is honoured (StepStopping: acked -> release at once).
    before_term = \
        0 <= text.find("main container released the lock") < text.find("received SIGTERM")
    log(f"native pod shutdown ({cfg['LEASEHOLD_RELEASE_ON_SHUTDOWN']}): app exited "
        f"{t_app_exit - t_term:.3f}s after its SIGTERM; the rival's first yes {took:.3f}s after "
        f"it (retry-period {retry}s, renew-deadline {renew}s); released "
        f"{'on the POST, before' if before_term else 'after'} the sidecar's SIGTERM")
    assert "released lease" in text, "the sidecar never released"
    bound = takeover_bound(retry)
    assert bound < renew - retry, "the bound no longer tells an acknowledged release from none"
    assert took <= bound, f"the rival led {took:.3f}s after the app's SIGTERM > {bound}s"


def session_has(sid, argv):
    """Whether a process of session `sid` runs exactly `argv`."""
    want = ("\0".join(argv) + "\0").encode()
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and os.getsid(int(d.name)) == sid and \
                    (d / "cmdline").read_bytes() == want:
                return True
        except OSError:
            pass
    return False


@scenario
def example_app_valid_until(s):
    """The example app (its own script from the rendered native overlay, on the host's sh, wget
    and timeout) runs each unit only until the validUntil of the "yes" it asked for. The unit
    here is `sleep 60`, not `sleep 2`; once it runs, the leader's sidecar is SIGSTOPped (neither
    renews nor answers, as when frozen). The unit must end before that validUntil, and none may
    start while the sidecar stays silent. The example before this (GET /is-leader, then an
    unbounded unit) ran the unit to its end."""
    cp, ns, objs, _, leader, _, renew, _ = native_pair(s, "ship-app-valid")
    script = container(one(objs, "Deployment"), "app")["args"][0]
    assert script.count("sleep 2 &") == 1, "the example's unit is no longer `sleep 2 &`"
    unit = ["sleep", "60"]
    with app_process(s, script.replace("sleep 2 &", "sleep 60 &"), leader.port) as \
            (proc, applog_path, _):
        wait_until(lambda: session_has(proc.pid, unit), 15, interval=0.01,
                   what="the app's unit to start")
        t_start = time.time()
        leader.signal(signal.SIGSTOP)  # Ship's exit stops it with SIGCONT + SIGKILL
        time.sleep(0.5)  # a renew in flight at the SIGSTOP lands, or not
        spec = cp.get_json("lease", LOCK, "-n", ns)["spec"]
        assert spec["holderIdentity"].startswith(leader.name + "_"), spec  # identity: NAME_suffix
        valid_until = parse_rfc3339(spec["renewTime"]) + renew + 0.01  # an upper bound
        wait_until(lambda: not session_has(proc.pid, unit), renew + 5, interval=0.01,
                   what="the unit to be stopped")
        t_end = time.time()
        log(f"example app: the unit ran {t_end - t_start:.2f}s and was stopped "
            f"{valid_until - t_end:.3f}s before the validUntil of its yes (renew-deadline "
            f"{renew:g}s); app log: {applog_path.read_text().strip().splitlines()[-1]}")
        assert t_end <= valid_until, \
            f"the example app's unit ran {t_end - valid_until:.3f}s past its validUntil"
        # The sidecar stays silent: the app's questions time out (wget's `timeout 2`).
        time.sleep(3)
        assert not session_has(proc.pid, unit), "a unit started while the sidecar was silent"
        leader.signal(signal.SIGCONT)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0


def assert_one_copy(app, classic=False):
    """The example app's script, and the classic variant's preStop hook, have two copies each
    (kustomize cannot read the chart's files, nor helm files outside its chart): deploy/base and
    deploy/overlays/classic-sidecar are their homes, and the chart's `app`, rendered with the
    default sidecar.httpAddress, must hold the same text byte for byte."""
    import yaml
    base = yaml.safe_load((DEPLOY / "base" / "deployment.yaml").read_text())
    assert app["args"] == container(base, "app")["args"], \
        "the chart's example app script differs from deploy/base/deployment.yaml's"
    if classic:
        kust = yaml.safe_load((CLASSIC / "kustomization.yaml").read_text())
        patch = next(yaml.safe_load(p["patch"]) for p in kust["patches"]
                     if p["target"]["kind"] == "Deployment")
        assert app["lifecycle"] == container(patch, "app")["lifecycle"], \
            "the chart's classic preStop hook differs from deploy/overlays/classic-sidecar's"


def template(cp, *values, ns="default", kube=None, validate=False, check=True):
    """helm template of the chart, release `t`, in namespace `ns`, with `values` (each --set):
    offline (for Kubernetes `kube`: --kube-version), or with `validate` against the real
    apiserver (its API groups and version)."""
    args = [x for v in values for x in ("--set", v)]
    if kube:
        args += ["--kube-version", kube]
    if validate:
        args += ["--validate", "--kubeconfig", cp.env["ADMIN_KUBECONFIG"]]
    return helm(cp, "template", "t", str(CHART), "-n", ns, *args, check=check)


def refused(cp, words, *values, **kw):
    """template(`values`, `kw`) fails, and its stderr says each of `words` (a tuple)."""
    r = template(cp, *values, check=False, **kw)
    assert r.returncode != 0 and all(w in r.stderr for w in words), (values, r.stderr)
    return r.stderr


def chart(cp, ns, *values, **kw):
    """template(`values`, `kw`) in namespace `ns`, as the apiserver accepts it there."""
    return dry_run(cp, template(cp, *values, ns=ns, **kw).stdout, ns)


@scenario
def helm_offline(s):
    """helm lint, and the renderings whose choice is made by values or --kube-version."""
    cp = s.control_plane()
    ns = ensure_ns(cp, "ship-helm-offline")
    out = helm(cp, "lint", str(CHART), "--strict")
    assert "0 chart(s) failed" in out.stdout, out.stdout
    helm(cp, "lint", str(CHART), "--strict", "--set", EXAMPLE)

    # Off: none, no RBAC, no token; and more than one replica is refused.
    objs = chart(cp, ns, "leaderElection.enabled=false", "replicas=1", EXAMPLE)
    assert_args(objs, None, lock_type="none", lease_duration=None, leader_label=None,
                deletion_cost=None)
    assert_absent(objs, "Role", "ServiceAccount")
    assert pod_spec(one(objs, "Deployment"))["automountServiceAccountToken"] is False
    err = refused(cp, ("leaderElection.enabled=false", "replicas=2"),
                  "leaderElection.enabled=false", "replicas=2")
    log("refused as it should: " + next(line for line in err.splitlines() if "replicas=2" in line))

    # A new cluster: native sidecar, safe (a sidecar stopped alone keeps its promises), and the
    # example's app POSTs /release at SIGTERM itself (no preStop: the kubelet stops it first).
    objs = chart(cp, ns, EXAMPLE, kube="1.34.0")
    assert_args(objs, "initContainers", release_on_shutdown="safe")
    app = pod_spec(one(objs, "Deployment"))["containers"][0]
    assert "lifecycle" not in app and "trap on_term TERM" in app["args"][0] and \
        "--post-data= http://localhost:4040/release" in app["args"][0], app
    assert_one_copy(app)
    r = template(cp, EXAMPLE, "leaderElection.releaseOnShutdown=immediate", kube="1.34.0")
    assert "--release-on-shutdown=immediate" in r.stdout, "immediate is still an option"

    # An old cluster (offline: --kube-version): classic sidecar, safe, preStop /release.
    objs = chart(cp, ns, EXAMPLE, kube="1.28.9")
    assert_args(objs, "containers", release_on_shutdown="safe")
    app = pod_spec(one(objs, "Deployment"))["containers"][0]
    assert "/release" in " ".join(app["lifecycle"]["preStop"]["exec"]["command"]), app
    assert_one_copy(app, classic=True)
    refused(cp, ("1.29",), "sidecar.mode=native", kube="1.28.9")

    # gate.enabled: as components/gate (kustomize), and no preStop (the gate POSTs /release
    # itself); immediate is refused.
    for kube, where in (("1.34.0", "initContainers"), ("1.28.9", "containers")):
        objs = chart(cp, ns, EXAMPLE, "gate.enabled=true", kube=kube)
        assert_args(objs, None, release_on_shutdown="safe", renew_interval="retry-period")
        dep = one(objs, "Deployment")
        assert_gated(dep, "app", ["/busybox/sh", "-c"])
        assert_restricted(dep, where)
        assert "lifecycle" not in pod_spec(dep)["containers"][0]
    refused(cp, ("gate.enabled",), "gate.enabled=true",
            "leaderElection.releaseOnShutdown=immediate")
    log("gate.enabled: app gated, release safe on both variants; immediate refused")

    # Explicit lock types: that lock's RBAC alone, and pods get/patch for the deletion cost (on
    # by default; off, neither flag nor rule).
    for lock, cost, resources in (("configmaps", "10000", {"configmaps", "events", "pods"}),
                                  ("leases", "10000", {"leases", "events", "pods"}),
                                  ("leases", None, {"leases", "events"})):
        objs = chart(cp, ns, f"leaderElection.lockType={lock}", EXAMPLE,
                     f"deletionCost.enabled={'true' if cost else 'false'}")
        rules = rules_of(one(objs, "Role"))
        assert {res for (_, res, _) in rules} == resources, rules
        assert_args(objs, None, lock_type=lock, deletion_cost=cost)
    refused(cp, ("lockType",), "leaderElection.lockType=bogus")

    # The lock created at install time: no create rule. The leader label: pods get/patch.
    objs = chart(cp, ns, "leaderElection.precreateLock=true", "leaderLabel.enabled=true", EXAMPLE)
    rules = rules_of(one(objs, "Role"))
    assert not any("create" in v and res in ("leases", "configmaps")
                   for (_, res, _), v in rules.items()), rules
    assert rules[("", "pods", ())] == {"get", "patch"}, rules
    assert one(objs, "Lease", "t-leasehold")
    assert_args(objs, None, leader_label="leasehold.io/role")

    # For an existing Deployment's ServiceAccount (e.g. K8up's): no ServiceAccount rendered.
    objs = chart(cp, ns, "serviceAccount.create=false", "serviceAccount.name=k8up")
    assert_absent(objs, "ServiceAccount")
    assert one(objs, "RoleBinding")["subjects"][0]["name"] == "k8up"

    # The named template for a parent chart.
    parent = s.tmp / "parent"
    shutil.copytree(CHART, parent / "charts" / "leasehold")
    (parent / "templates").mkdir()
    (parent / "Chart.yaml").write_text("apiVersion: v2\nname: operator\nversion: 0.1.0\n")
    (parent / "values.yaml").write_text("leasehold:\n  leaderElection:\n    lockName: op-lock\n")
    (parent / "templates" / "deployment.yaml").write_text("""\
{{- $lh := dict "Values" .Values.leasehold "Release" .Release "Capabilities" .Capabilities }}
apiVersion: apps/v1
kind: Deployment
metadata: {name: operator}
spec:
  replicas: 2
  selector: {matchLabels: {app: operator}}
  template:
    metadata: {labels: {app: operator}}
    spec:
      serviceAccountName: {{ include "leasehold.serviceAccountName" $lh }}
      {{- if include "leasehold.native" $lh }}
      initContainers:
        {{- include "leasehold.sidecar" $lh | nindent 8 }}
      {{- end }}
      containers:
        - name: operator
          image: operator:1
        {{- if not (include "leasehold.native" $lh) }}
        {{- include "leasehold.sidecar" $lh | nindent 8 }}
        {{- end }}
""")
    objs = dry_run(cp, helm(cp, "template", "op", str(parent), "-n", ns).stdout, ns)
    assert_args(objs, "initContainers", lock_name="op-lock")
    assert one(objs, "Role")["rules"][0]["resourceNames"] == ["op-lock"]


def helm_on_cluster(s, ns, lease_api):
    """The chart rendered against an apiserver with or without the Lease API: RBAC and args as
    detected, accepted, and the rendered sidecar leads. Asking for Leases where there are none
    is refused at render time."""
    cp = s.control_plane(extra_args="" if lease_api else NO_LEASE_API)
    assert cp.kubectl("api-versions").count("coordination.k8s.io/v1\n") == lease_api
    r = template(cp, "leaderElection.lockType=leases", validate=True, check=False)
    assert (r.returncode == 0) == lease_api, r.stderr
    assert ("does not serve" in r.stderr) != lease_api, r.stderr
    objs = chart(cp, ensure_ns(cp, ns), EXAMPLE, validate=True)
    assert_args(objs, None, lock_type="auto", release_on_shutdown="safe")
    assert_restricted(one(objs, "Deployment"), "initContainers")  # v1.34.4: a native sidecar
    rules = rules_of(one(objs, "Role"))
    named = {res for (_, res, names), v in rules.items() if names == ("t-leasehold",)}
    created = {res for (_, res, names), v in rules.items() if not names and "create" in v}
    lock = "leases" if lease_api else "configmaps"  # what `auto` takes here
    assert named == {lock, "configmaps"} and created == {lock, "events"}, rules
    assert ("coordination.k8s.io", "leases", ("t-leasehold",)) in rules or not lease_api
    log(f"rendered against the apiserver: --lock-type=auto, named {sorted(named)}, "
        f"create {sorted(created)}")
    # helm install --dry-run=server agrees.
    r = helm(cp, "install", "t", str(CHART), "-n", ns, "--dry-run=server", "--kubeconfig",
             cp.env["ADMIN_KUBECONFIG"], "--set", EXAMPLE)
    assert ("resources: [\"leases\"]" in r.stdout) == lease_api, r.stdout
    run_and_release(s, cp, ns, objs, f"{ns}-0", lock, lock_name="t-leasehold")


SCENARIOS.bind(helm_on_cluster, "ship-helm-lease", True, name="helm_lease_api")
SCENARIOS.bind(helm_on_cluster, "ship-helm-nolease", False, name="helm_no_lease_api")


def operator_crds():
    """kubectl's -f arguments of the PodMonitor and PrometheusRule CRDs of the pinned Prometheus
    Operator module (e2e/controlplane/prometheus-operator/go.mod, checked against its go.sum)."""
    d = REPO / "e2e" / "controlplane" / "prometheus-operator"
    r = subprocess.run(["go", "mod", "download", "-json",
                        "github.com/prometheus-operator/prometheus-operator"],
                       cwd=d, capture_output=True, text=True, check=True)
    crds = Path(json.loads(r.stdout)["Dir"]) / "example" / "prometheus-operator-crd"
    return [a for k in ("podmonitors", "prometheusrules")
            for a in ("-f", str(crds / f"monitoring.coreos.com_{k}.yaml"))]


@scenario
def monitoring_dry_run(s):
    """The shipped PodMonitor and PrometheusRule, from the Kustomize component and the chart,
    accepted by the apiserver (server-side dry run) with the pinned operator's CRDs installed.
    The CRDs are removed afterwards: other scenarios share the control plane."""
    cp = s.control_plane()
    crds = operator_crds()
    cp.kubectl("apply", "--server-side", *crds)
    try:
        cp.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                   *[f"crd/{k}.monitoring.coreos.com" for k in ("podmonitors", "prometheusrules")])
        ns, objs = kustomized(s, cp, "ship-monitoring", DEPLOY / "base",
                              [COMPONENTS / "monitoring"])
        pm, pr = one(objs, "PodMonitor"), one(objs, "PrometheusRule")
        assert pm["spec"]["podMetricsEndpoints"][0]["port"] == "probes", pm
        alerts = [r["alert"] for r in pr["spec"]["groups"][0]["rules"]]
        assert len(alerts) == 7, alerts
        log(f"Kustomize component: PodMonitor and PrometheusRule ({len(alerts)} alerts) accepted")
        objs = chart(cp, ns, EXAMPLE, "monitoring.podMonitor.enabled=true",
                     "monitoring.rules.enabled=true", validate=True)
        pm, pr = one(objs, "PodMonitor"), one(objs, "PrometheusRule")
        assert pm["spec"]["podMetricsEndpoints"][0]["port"] == "lh-probes", pm
        absent = next(r for r in pr["spec"]["groups"][0]["rules"]
                      if r["alert"] == "LeaseholdAbsent")
        assert f'lock_namespace="{ns}"' in absent["expr"], absent
        log("chart: PodMonitor and PrometheusRule accepted")
    finally:
        cp.kubectl("delete", "--ignore-not-found", *crds)


def post_rendered(s, cp, ns, variant):
    """The K8up example's Helm post-renderer (LEASEHOLD_VARIANT=`variant`) on a stand-in chart
    that renders chart-output/k8up.yaml, as the apiserver accepts it."""
    k8up_chart = s.tmp / "k8up-chart"
    if not k8up_chart.exists():
        (k8up_chart / "templates").mkdir(parents=True)
        (k8up_chart / "Chart.yaml").write_text("apiVersion: v2\nname: k8up\nversion: 4.0.0\n")
        shutil.copy(K8UP / "chart-output" / "k8up.yaml", k8up_chart / "templates" / "k8up.yaml")
    r = helm(cp, "template", "k8up", str(k8up_chart), "-n", ns, "--post-renderer",
             str(K8UP / "helm" / "post-render.sh"), env={
                 "PATH": f"{cp.env['BIN_DIR']}:{os.environ.get('PATH', '')}",
                 "LEASEHOLD_VARIANT": variant})
    return dry_run(cp, r.stdout, ns)


@scenario
def k8up(s):
    """The K8up example: both variants accepted; the Helm post-renderer; and leader-gate.sh
    runs the operator on the leader only, hands over on failover, releases on SIGTERM."""
    cp = s.control_plane()
    ns = "ship-k8up"
    commands = {}
    for variant, kind, where in (("lease", "auto", "initContainers"),
                                 ("no-lease", "configmaps", "containers")):
        _, objs = kustomized(s, cp, ns, K8UP / variant)
        # With a gate, release-on-shutdown is always safe.
        dep, _ = assert_settings(objs, where, deployment="k8up", LOCK_TYPE=kind,
                                 LOCK_NAME="k8up-leader", RELEASE_ON_SHUTDOWN="safe")
        assert dep["spec"]["replicas"] == 2
        assert_gated(dep, "k8up-operator", ["k8up"])
        op = container(dep, "k8up-operator")
        assert {e["name"]: e.get("value") for e in op["env"]}["BACKUP_ENABLE_LEADER_ELECTION"] \
            == "false", op
        rb = one(objs, "RoleBinding", "k8up-leasehold")
        assert rb["subjects"][0]["name"] == pod_spec(dep)["serviceAccountName"]
        commands[variant] = op["command"]
        log(f"k8up/{variant}: accepted; sidecar in {where}, lock {kind}")
        objs = post_rendered(s, cp, ns, variant)
        assert sidecar(one(objs, "Deployment", "k8up"))[1] == where
        log(f"helm --post-renderer (LEASEHOLD_VARIANT={variant}): sidecar in {where}, accepted")

    # The rendered gate (and the fallback leader-gate.sh) with two real agents: only the
    # leader's operator runs, ever.
    for which, command in (("leasehold gate", commands["lease"]), ("leader-gate.sh", None)):
        log(f"--- {which}")
        k8up_gates(s, cp, which.split()[-1].replace(".", "-"), command)


@contextlib.contextmanager
def gate(tmp, name, agent, command=None):
    """The K8up example's gate in front of a fake operator that keeps a marker file while it
    runs: `leasehold gate` as the rendered command runs it (`command`, with the emptyDir's
    binary and `k8up` replaced), or the fallback deploy/examples/k8up/leasehold/leader-gate.sh.
    Yields (its process, the marker)."""
    marker = tmp / f"{name}.running"
    fake = f"touch {marker}; trap 'rm -f {marker}; exit 0' TERM; while :; do sleep 0.1; done"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEASEHOLD_")}
    if command:
        assert command[0] == "/leasehold-bin/leasehold" and command[-1] == "k8up", command
        argv = [leasehold_binary(), *command[1:-1], "bash", "-c", fake]
        # The e2e timings (FAST) fit a shorter stop-grace than the shipped one (docs/gate.md).
        env.update(LEASEHOLD_GATE_ADDRESS=f"127.0.0.1:{agent.port}",
                   LEASEHOLD_GATE_STOP_GRACE="500ms",
                   LEASEHOLD_GATE_STATUS_FILE=str(tmp / f"{name}.status.json"))
    else:
        argv = ["bash", str(K8UP / "leasehold" / "leader-gate.sh"), "bash", "-c", fake]
        env["LEADER_GATE_URL"] = f"http://127.0.0.1:{agent.port}"
    with session(argv, tmp / f"{name}.gate.log", env) as proc:
        yield proc, marker


def k8up_gates(s, cp, tag, command):
    """Two agents, each with gate(`command`) in front of its operator: only the leader's runs;
    when the leader's sidecar dies, its operator stops and the other's starts; a gate's SIGTERM
    stops its operator, then releases the lock. Never both at once."""
    ns2 = Namespace(cp, f"ship-k8up-{tag}", lock_name="k8up-leader")
    a, b = (s.agent(ns2, f"k8up-{tag}-{x}", release="safe").start() for x in "ab")
    with gate(s.tmp, f"{tag}-a", a, command) as ga, gate(s.tmp, f"{tag}-b", b, command) as gb:
        gates = {a.name: ga, b.name: gb}
        both = Watch(lambda: ga[1].exists() and gb[1].exists(), 0.02)

        def one_running():
            run = [n for n, (_, marker) in gates.items() if marker.exists()]
            return run[0] if len(run) == 1 else None
        first = wait_until(one_running, 20, what="one gated operator to run")
        leader, other = (a, b) if first == a.name else (b, a)
        assert leader.is_leader() and not other.is_leader()
        log(f"only the leader's operator runs ({first})")
        time.sleep(2)
        assert one_running() == first
        # The leader's sidecar dies: its gate stops the operator; the other one takes over.
        leader.kill()
        t0 = time.monotonic()
        wait_until(lambda: not gates[leader.name][1].exists(), 5,
                   what="the old leader's gate to stop its operator")
        stopped = time.monotonic() - t0
        wait_until(lambda: one_running() == other.name, 30,
                   what="the new leader's operator to start")
        log(f"failover: old operator stopped {stopped:.1f}s after its sidecar died; "
            f"the new leader's ({other.name}) started after {time.monotonic() - t0:.1f}s")
        # SIGTERM to the new leader's gate: stops the operator, then POST /release.
        proc, marker = gates[other.name]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert not marker.exists()
        wait_until(lambda: ns2.lease()["spec"].get("holderIdentity", "") == "", 5,
                   what="the lock to be released after the gate's POST /release")
        log("gate SIGTERM: operator stopped, then the lock released")
        overlap = both.stop()
        assert not overlap, f"both operators ran at once ({len(overlap)} samples)"
    for ag in (a, b):
        ag.stop()
    shutil.rmtree(ns2.tmp, ignore_errors=True)


# --------------------------------------------------------------------------------- observe mode

LOCK_KINDS = ("leases", "configmaps", "endpoints")
WRITES = {"update", "create", "patch", "delete", "deletecollection"}


def assert_read_only(role, lock):
    """Role `role` reads lock `lock` (get, watch by name) and writes no lock object at all."""
    rules = rules_of(role)
    named = {res: v for (_, res, names), v in rules.items() if names == (lock,)}
    assert named and all(v == {"get", "watch"} for v in named.values()), rules
    for (_, res, _), verbs in rules.items():
        assert res not in LOCK_KINDS or not verbs & WRITES, (res, verbs, rules)
    return rules


def observe_metric(agent, name, having=""):
    """The sum of series `name` (those whose labels hold `having`) on the agent's probe
    listener."""
    st, body = agent.request("GET", "/metrics", port=agent.probe_port)
    assert st == 200, st
    found = [float(line.rsplit(" ", 1)[1]) for line in body.splitlines()
             if (line.startswith(name + "{") or line.startswith(name + " ")) and having in line]
    assert found, f"no {name} {having} in /metrics of {agent.name}"
    return sum(found)


def observers_follow(s, cp, ns, objs, lock, pods, main, watcher):
    """The rendering applied; the ServiceAccounts of Deployments `main` and `watcher` may read
    Lease `lock` and not write it. Then the rendered sidecar (of `main`) of each pod in `pods`
    and the rendered watcher beside a stand-in operator holding `lock` as pods[0], then as
    pods[1]: only the holder's sidecar says yes (/leader, /metrics, the label), the watcher
    never does, POST /release is refused with 409, nobody writes the Lease, and SIGTERM releases
    nothing."""
    apply_for_real(cp, objs, ns)
    sa = pod_spec(one(objs, "Deployment", main))["serviceAccountName"]
    lease = f"leases.coordination.k8s.io/{lock}"
    for account in {sa, pod_spec(one(objs, "Deployment", watcher))["serviceAccountName"]}:
        assert_can(cp, ns, (("get", lease, True), ("watch", lease, True), ("update", lease, False),
                            ("create", "leases.coordination.k8s.io", False)), sa=account)
    watch_pod = f"{watcher}-7f9c4-x2v8k"
    create_pods(cp, ns, [*pods, watch_pod], sa)
    with StandInHolder(cp, ns, lock, pods[0]) as holder:
        side = {p: s.sidecar(cp, ns, objs, p, main) for p in pods}
        watch = s.sidecar(cp, ns, objs, watch_pod, watcher)
        wait_until(lambda: watch.view().holder == holder.identity, 15,
                   what="the watcher to name the holder")
        for step, pod in enumerate(pods[:2]):
            if step:
                holder.hand_to(pod)
            body = side[pod].wait_leader(30)
            assert body["leader"] == holder.identity and body["identity"] == pod, body
            for p, a in side.items():
                assert p == pod or not a.is_leader(), f"{p}'s sidecar says yes; {pod} holds"
                assert observe_metric(a, "leasehold_is_leader") == (p == pod), p
            assert not watch.is_leader() and observe_metric(watch, "leasehold_is_leader") == 0
            assert watch.view().holder == holder.identity, watch.view()
            want = {**{p: ("leader" if p == pod else "follower") for p in pods},
                    watch_pod: "follower"}
            wait_until(lambda: labels(cp, ns) == want, 15, what=f"labels {want}")
            log(f"observe: {pod}'s operator holds {lock}: its sidecar says yes (validUntil "
                f"{body['validUntil']}), the others and the watcher no; labels {want}")
        for a in (side[pods[1]], watch):
            a.check_probes()
            st, b = a.request("POST", "/release")
            assert st == 409 and "observe" in b["error"], (st, b)
        renewed = holder.identity
        side[pods[1]].term_and_wait(10)
        assert "nothing is released" in side[pods[1]].log_text(), side[pods[1]].log_tail()
        assert cp.get_json("lease", lock, "-n", ns)["spec"]["holderIdentity"] == renewed
        for a in (side[pods[0]], watch):  # no PUT from an observer, ever
            assert observe_metric(a, "leasehold_api_requests_total", 'verb="PUT"') == 0, a.name
    log("observe: POST /release 409, SIGTERM released nothing, no update request sent")


@scenario
def observe_components(s):
    """deploy/components/observe and observe-watch on top of each overlay: the mode, the Role
    read-only on the lock and no leasehold-create, the watcher Deployment (container leasehold,
    port probes); accepted by the apiserver; on native-sidecar, observers_follow. classic-sidecar's
    ConfigMap-only Role is refused at build time (the component's `test` ops); no-leader-election
    builds, and the agent refuses it."""
    cp = s.control_plane()
    comps = [COMPONENTS / "observe", COMPONENTS / "observe-watch"]
    for ov in ("native-sidecar", "no-leader-election"):
        # With the leader label, so that it is checked too.
        ns, objs = kustomized(s, cp, f"ship-obs-{ov.split('-')[0]}", DEPLOY / "overlays" / ov,
                              comps + [DEPLOY / "rbac" / "leader-label"])
        w, cm = assert_settings(objs, None, deployment="leasehold-watch", AGENT_MODE="observe",
                                OBSERVE_IDENTITY="pod")
        one(objs, "ConfigMap")  # the watcher's settings are the only ones, the sidecar's
        c = container(w, "leasehold")
        assert c["ports"] == [{"name": "probes", "containerPort": 8081, "protocol": "TCP"}], c
        assert w["spec"]["replicas"] == 1, w["spec"]
        if ov == "no-leader-election":
            assert_absent(objs, "Role")
            assert cm["LEASEHOLD_LOCK_TYPE"] == "none", cm
            env = {**{k: v for k, v in os.environ.items() if not k.startswith("LEASEHOLD_")},
                   **cm, "POD_NAME": "example-0", "POD_NAMESPACE": ns}
            r = subprocess.run([leasehold_binary()], env=env, capture_output=True, text=True,
                               timeout=10)
            assert r.returncode == 2 and "observe needs a lock to read" in r.stderr, r
            log(f"{ov} + observe: builds; the agent refuses it: {r.stderr.strip()[-120:]}")
            continue
        assert_restricted(one(objs, "Deployment", "example"), "initContainers")
        assert_absent(objs, "Role/leasehold-create", "RoleBinding/leasehold-create")
        assert_read_only(one(objs, "Role", "leasehold"), LOCK)
        log(f"{ov} + observe + observe-watch: accepted; Role read-only on {LOCK}, no create")
        observers_follow(s, cp, ns, objs, LOCK, ("example-0", "example-1"), "example",
                         "leasehold-watch")
        assert_can(cp, ns, (("create", "configmaps", False), ("patch", "pods", True),
                            ("create", "events", True)))
    r = cp.kubectl("kustomize", str(overlay(s.tmp, CLASSIC, comps)), check=False)
    assert r.returncode != 0 and "test failed" in r.stderr, r.stderr
    log("classic-sidecar + observe: refused at build time (its Role is ConfigMap-only)")


@scenario
def observe_helm(s):
    """The chart with agentMode=observe: the args, the Role read-only on the lock and no create,
    the watcher Deployment and its PodMonitor; accepted by the apiserver; every combination
    validate refuses; each choice --help lists for --agent-mode and --observe-identity renders
    (the registry and the chart agree); then observers_follow."""
    cp = s.control_plane()
    ns = ensure_ns(cp, "ship-obs-helm")
    lock = "op-lock"
    values = ("agentMode=observe", f"leaderElection.lockName={lock}", EXAMPLE,
              "leaderLabel.enabled=true")
    objs = chart(cp, ns, *values, validate=True)
    args = assert_args(objs, "initContainers", "t-leasehold-example", agent_mode="observe",
                       observe_identity="pod", lock_name=lock, release_on_shutdown=None,
                       renew_interval=None)
    watch = one(objs, "Deployment", "t-leasehold-watch")
    wc = assert_restricted(watch)
    assert "restartPolicy" not in wc and watch["spec"]["replicas"] == 1, wc
    assert args_of(wc) == args
    assert wc["ports"][0]["name"] == "lh-probes", wc["ports"]
    rules = assert_read_only(one(objs, "Role"), lock)
    assert rules[("", "pods", ())] == {"get", "patch"}, rules
    log(f"chart, agentMode=observe: args {sorted(args)}; Role read-only on {lock}; watcher")

    # Choices: what --help lists for each setting renders; anything else is refused.
    usage = subprocess.run([leasehold_binary(), "--help"], capture_output=True, text=True).stdout
    for flag, value in (("agent-mode", "agentMode"), ("observe-identity", "observe.identity")):
        para = re.search(rf"\n  --{flag} (\S+)", usage)
        assert para, f"--{flag} not in --help"
        choices = para.group(1).split("|")
        assert len(choices) >= 2, para.group(0)
        for choice in choices:
            template(cp, *values, f"{value}={choice}", ns=ns)
        refused(cp, ("bogus",), *values, f"{value}=bogus")
        log(f"chart {value}: renders {choices} (--{flag}'s choices), refuses others")
    # Refused combinations.
    for extra, words in ((("leaderElection.lockName=",), "needs leaderElection.lockName"),
                         (("gate.enabled=true",), "gate.enabled"),
                         (("leaderElection.precreateLock=true",), "precreateLock"),
                         (("leaderElection.releaseOnShutdown=safe",), "releaseOnShutdown"),
                         (("leaderElection.enabled=false", "replicas=1"),
                          "leaderElection.enabled=true"),
                         (("sidecar.probes.enabled=false",), "sidecar.probes.enabled")):
        refused(cp, (words,), *values, *extra)
    log("chart, agentMode=observe: lockName, gate, precreateLock, releaseOnShutdown, election "
        "off, a watcher without probes: each refused")
    # The watcher off; monitoring on: a second PodMonitor for the watcher.
    off = template(cp, *values, "observe.watcher.enabled=false", ns=ns).stdout
    assert "t-leasehold-watch" not in off
    mon = template(cp, *values, "monitoring.podMonitor.enabled=true", ns=ns).stdout
    assert mon.count("kind: PodMonitor") == 2 and "name: t-leasehold-watch" in mon, mon
    # Elect mode is unchanged by the new values: no watcher, no observe flags.
    elect = template(cp, EXAMPLE, ns=ns).stdout
    assert "agent-mode" not in elect and "-watch" not in elect

    observers_follow(s, cp, ns, objs, lock, ("op-0", "op-1"), "t-leasehold-example",
                     "t-leasehold-watch")


@scenario
def k8up_observe(s):
    """The K8up example's observe variant (and its post-renderer variant): K8up's own election
    on, the native observing sidecar, the Role read-only on d2ab61da.syn.tools for K8up's
    ServiceAccount and the watcher's own; accepted; then observers_follow on two K8up pods."""
    cp = s.control_plane()
    lock = "d2ab61da.syn.tools"
    ns, objs = kustomized(s, cp, "ship-k8up-observe", K8UP / "observe")
    dep, _ = assert_settings(objs, "initContainers", deployment="k8up", AGENT_MODE="observe",
                             LOCK_NAME=lock, OBSERVE_IDENTITY="pod", RELEASE_ON_SHUTDOWN=None)
    assert dep["spec"]["replicas"] == 2
    op = container(dep, "k8up-operator")
    assert {e["name"]: e.get("value") for e in op["env"]}["BACKUP_ENABLE_LEADER_ELECTION"] \
        == "true", op
    assert "command" not in op, op  # K8up runs as it is: no gate
    rules = assert_read_only(one(objs, "Role", "k8up-leasehold"), lock)
    assert rules[("", "pods", ())] == {"get", "patch"}, rules
    subjects = {x["name"] for x in one(objs, "RoleBinding", "k8up-leasehold")["subjects"]}
    assert subjects == {"k8up", "k8up-leasehold-watch"}, subjects
    w = one(objs, "Deployment", "leasehold-watch")
    assert pod_spec(w)["serviceAccountName"] == "k8up-leasehold-watch"
    assert container(w, "leasehold")["envFrom"][0]["configMapRef"]["name"] == \
        sidecar(dep)[0]["envFrom"][0]["configMapRef"]["name"]
    log("k8up/observe: accepted; K8up's election on, native observing sidecar, read-only Role")

    posted = post_rendered(s, cp, ns, "observe")
    assert sorted((o["kind"], o["metadata"]["name"]) for o in posted) == \
        sorted((o["kind"], o["metadata"]["name"]) for o in objs)
    log("helm --post-renderer (LEASEHOLD_VARIANT=observe): the same objects, accepted")

    observers_follow(s, cp, ns, objs, lock, ("k8up-6d4f9c7b8-abcde", "k8up-6d4f9c7b8-fghij"),
                     "k8up", "leasehold-watch")


if __name__ == "__main__":
    sys.exit(SCENARIOS.main(context=Ship))
