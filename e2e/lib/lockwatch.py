"""Watches of a lock object and the holder history they keep (the control plane's, the
node's), and the readers of a lock's record and of `kubectl get --watch -o json`'s stream."""

import contextlib
import json
import socket
import threading
import time
from types import SimpleNamespace
from urllib.parse import quote

from e2e.lib.common import start_threads
from e2e.lib.controlplane import ANNOTATION, follow_watch


def record_of(kind, obj):
    """The record of a Lease or annotated object as a dict (None where a field is absent), or
    {"unparsable": raw} for an annotation that is not a JSON object, or None for no record.
    Unlike parse_record, it tells an absent field from an empty one, which is what a client that
    reads only truthy fields (the Python elector) acts on."""
    if kind == "lease":
        r = obj.get("spec")
        if r is None:
            return None
        transitions = r.get("leaseTransitions")
    else:
        raw = ((obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)
        if not raw:
            return None
        try:
            r = json.loads(raw)
        except ValueError:
            r = None
        if not isinstance(r, dict):
            return {"unparsable": raw}
        transitions = r.get("leaderTransitions")
    return {"holderIdentity": r.get("holderIdentity"),
            "leaseDurationSeconds": r.get("leaseDurationSeconds"),
            "acquireTime": r.get("acquireTime"), "renewTime": r.get("renewTime"),
            "transitions": transitions}


def parse_record(kind, obj):
    """(holder, transitions, leaseDurationSeconds, renewTime) of a Lease or annotated object:
    record_of's, with "" for no holder, a Lease's transitions 0 where it has none, and holder
    "<unparsable>" for an annotation that is not a JSON object."""
    if obj is None:
        return None
    r = record_of(kind, obj) or {}
    if "unparsable" in r:
        return ("<unparsable>", None, None, None)
    transitions = r.get("transitions")
    if kind == "lease" and transitions is None:
        transitions = 0
    return (r.get("holderIdentity") or "", transitions, r.get("leaseDurationSeconds"),
            r.get("renewTime"))


class LockWatcher:
    """The control-plane tier's watch of a Namespace's lock object(s), as the admin. `events`:
    every version seen, (clock(), kind, event type, resourceVersion, parse(kind, object)). A
    watch, unlike polling, misses no write: every resourceVersion of the object arrives in order."""

    PATHS = {"lease": "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
             "configmap": "/api/v1/namespaces/{ns}/configmaps",
             "endpoints": "/api/v1/namespaces/{ns}/endpoints"}
    # A control plane's lock_kind (controlplane.lock_kind: a resource name) as a kind here.
    KINDS = {"leases": "lease", "configmaps": "configmap", "endpoints": "endpoints"}

    def __init__(self, cp, ns, kinds=("lease",), parse=parse_record, clock=time.monotonic):
        self.cp, self.ns, self.kinds, self.parse, self.clock = cp, ns, kinds, parse, clock
        self.events = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._conns = {}
        self._threads = []

    def start(self):
        self._threads += start_threads(self._run, [(k,) for k in self.kinds])
        return self

    def _run(self, kind):
        path = (self.PATHS[kind].format(ns=self.ns.name) + "?watch=1&timeoutSeconds=300&"
                "fieldSelector=" + quote(f"metadata.name={self.ns.lock_name}"))

        def on_event(typ, rv, obj):
            rec = self.parse(kind, obj)
            with self._lock:
                self.events.append((self.clock(), kind, typ, rv, rec))

        def on_connect(c):
            self._conns[kind] = c

        follow_watch(self.cp, path, self._stop, on_event, on_connect)

    def stop(self):
        self._stop.set()
        for c in list(self._conns.values()):
            with contextlib.suppress(OSError):
                c.sock and c.sock.shutdown(socket.SHUT_RDWR)
        for t in self._threads:
            t.join(2)

    def history(self, kind):
        with self._lock:
            return [e for e in self.events if e[1] == kind]

    def holders(self, kind):
        """The sequence of (time, holder, transitions) at each change of holder."""
        out = []
        for t, _, typ, _, rec in self.history(kind):
            h = "<deleted>" if typ == "DELETED" else rec[0]
            if not out or out[-1][1] != h:
                out.append((t, h, rec[1] if rec else None))
        return out


class NodeLockWatch(LockWatcher):
    """The node tier's watch of its lock, a LockWatcher on the node's apiserver (the scenario's
    process runs in the node's network namespace, where it answers) that starts at once: `history`
    is [(time.time() seen, holder)] at each change. A deleted object is no change: its last holder
    did not hand the lock on."""

    def __init__(self, node, ns, kind, name):
        env = node.cp_env
        api = SimpleNamespace(host=env["APISERVER_HOST"], port=env["APISERVER_PORT"], env=env)
        super().__init__(api, SimpleNamespace(name=ns, lock_name=name), (kind,), clock=time.time)
        self.start()

    @property
    def history(self):
        out = []
        for t, _, typ, _, rec in super().history(self.kinds[0]):
            if typ != "DELETED" and (not out or out[-1][1] != rec[0]):
                out.append((t, rec[0]))
        return out

    def holders(self):
        return [h for _, h in self.history]


def json_objects(lines):
    """The JSON documents of a stream such as `kubectl get --watch -o json` (pretty-printed,
    one after another, no separator), each as soon as its last line has arrived."""
    dec, buf = json.JSONDecoder(), ""
    for line in lines:
        buf += line
        # A pretty-printed document ends with a "}" in column 0 (nested ones are indented).
        # Decoding only then keeps this linear: trying at every line re-parsed the whole pod
        # object hundreds of times per event, holding the GIL for tens of ms during rollouts
        # and delaying the sampler's threads past 2 x interval.
        if not (line.startswith("}") or (line.startswith("{") and line.rstrip().endswith("}"))):
            continue
        while True:
            buf = buf.lstrip()
            try:
                obj, n = dec.raw_decode(buf)
            except ValueError:
                break
            buf = buf[n:]
            yield obj
