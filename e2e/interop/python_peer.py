#!/usr/bin/env python3
"""An interop peer for leasehold's e2e tests: the Python client's own leader election (PyPI
`kubernetes`, module `kubernetes.leaderelection`, unchanged) behind the same localhost HTTP API
as leasehold and the client-go peers (GET /leader, GET /is-leader), so the e2e sampler can ask it
who leads exactly as it asks a leasehold agent.

Run it with the interpreter of the venv that e2e/interop/python_venv.sh prints (it holds the
pinned `kubernetes`); it imports nothing from this repository.

    python python_peer.py --identity=ID --lock-name=NAME [--lock-type=configmaps|leases]
        [--namespace=NS] [--lease-duration=5s --renew-deadline=3s --retry-period=1s]
        [--http-address=127.0.0.1:4040] --kubeconfig=FILE

* The durations are whole seconds ("5s" or "5"): LeaseLock writes int(str(lease_duration)), so a
  fractional one would make every write raise. electionconfig.Config validates them as the
  library does (it calls sys.exit on a bad one).
* --kubeconfig: as the client-go peers' (e2e/interop/README.md), read by load_kube_config.

What "yes" means (isLeader): from the call of onstarted_leading of the current
LeaderElection.run() (once acquire() succeeded) until its onstopped_leading (after renew_loop()
returned), where a Python program does its leader's work; "no" as soon as SIGTERM arrives or
run() raises (a connection error that is not an ApiException escapes run() without
onstopped_leading). The library bounds none of this in time: renew_loop() gives up only when a
renew round (started retry-period after the last success) has failed for renew-deadline, and its
requests have no timeout; a paused or cut-off Python leader therefore says "yes" past its lease,
and the scenarios attribute such overlaps to it.

Two things differ from a plain Python program, both as in the client-go peers (README.md): run()
is called in a loop (same identity), as a sidecar contends again; and the lock is wrapped
(ObservingLock, which only forwards calls). /leader reports the holder and the transition count
of the last record read or written (`term`: the annotation's leaderTransitions, which
ConfigMapLock never writes, or the Lease's spec.leaseTransitions, which LeaseLock keeps but never
bumps).

SIGTERM/SIGINT: the library has no release, so the lock stays held until it expires; the peer
turns "no" at once and exits 0.
"""

import argparse
import datetime
import json
import logging
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata

from kubernetes import config
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.configmaplock import ConfigMapLock
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
VERSION = metadata.version("kubernetes")
log = logging.getLogger("python-peer")


def wall_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def seconds(text, flag):
    """'5s' or '5' -> 5 (whole seconds only, see the module doc)."""
    t = text[:-1] if text.endswith("s") else text
    if not t.isdigit() or int(t) < 1:
        sys.exit(f"--{flag}: whole seconds >= 1 expected, got {text!r}")
    return int(t)


class View:
    """What the HTTP API reports: the last record read or written, and whether this run leads."""

    def __init__(self):
        self.mu = threading.Lock()
        self.seen = False
        self.record = None        # LeaderElectionRecord of the last read or write (None: unheld)
        self.term = None          # transitions of the last object read or written
        self.run = 0              # the current LeaderElection.run(), counted from 1
        self.leading_run = 0      # the run between onstarted_leading and onstopped_leading
        self.stopped_run = 0      # the last run whose onstopped_leading was called
        self.last_write = None    # wall clock of the last successful create/update
        self.terminating = False

    def is_leader(self):
        with self.mu:
            return (not self.terminating and self.leading_run == self.run
                    and self.stopped_run != self.run and self.run > 0)


class ObservingLock:
    """Forwards every call to the library's lock and records what passed through."""

    def __init__(self, inner, lock_type, view):
        self.inner, self.lock_type, self.view = inner, lock_type, view

    def __getattr__(self, name):  # identity, name, namespace, ...
        return getattr(self.inner, name)

    def _term(self):
        try:
            if self.lock_type == "leases":
                ref = self.inner.lease_reference
                t = ref.spec.lease_transitions if ref is not None and ref.spec else None
            else:
                ref = self.inner.configmap_reference
                ann = (ref.metadata.annotations or {}) if ref is not None else {}
                t = json.loads(ann.get(ANNOTATION) or "{}").get("leaderTransitions")
            return t if isinstance(t, int) and not isinstance(t, bool) else None
        except (ValueError, AttributeError):
            return None

    def _observe(self, record, wrote):
        with self.view.mu:
            self.view.seen = True
            self.view.record = record
            self.view.term = self._term()
            if wrote:
                self.view.last_write = wall_now()

    def get(self, name, namespace):
        ok, rec = self.inner.get(name, namespace)
        if ok:
            self._observe(rec, False)
        return ok, rec

    def create(self, name, namespace, election_record):
        ok = self.inner.create(name=name, namespace=namespace, election_record=election_record)
        if ok:
            self._observe(election_record, True)
            log.info("created the lock as %s at %s", election_record.holder_identity, wall_now())
        return ok

    def update(self, name, namespace, updated_record):
        ok = self.inner.update(name, namespace, updated_record)
        if ok:
            self._observe(updated_record, True)
            log.debug("wrote %s at %s", updated_record.__dict__, wall_now())
        return ok


def leader_body(o, v):
    yes = v.is_leader()
    with v.mu:
        seen, rec, term, run, last_write = v.seen, v.record, v.term, v.run, v.last_write
    body = {"identity": o.identity, "isLeader": yes,
            "lock": {"type": o.lock_type, "namespace": o.namespace, "name": o.lock_name},
            "pythonKubernetes": VERSION, "run": run, "lastWrite": last_write}
    if not seen:
        body.update(name=None, leader=None, term=None, reason="the lock has not been read yet")
        return 503, body
    holder = (rec.holder_identity if rec is not None else None) or ""
    body.update(name=holder, leader=holder, term=term)
    if rec is not None:
        d = rec.lease_duration
        try:
            d = int(float(d))
        except (TypeError, ValueError):
            pass
        body.update(leaseDurationSeconds=d, acquireTime=rec.acquire_time, renewTime=rec.renew_time)
    return 200, body


def serve(o, v):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _send(self, status, payload):
            data = (json.dumps(payload) + "\n").encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except OSError:  # the asker gave up (the sampler's late limit, or it stopped)
                self.close_connection = True

        def do_GET(self):  # noqa: N802 - http.server's name
            path = self.path.split("?", 1)[0]
            if path in ("/leader", "/"):
                self._send(*leader_body(o, v))
            elif path == "/is-leader":
                yes = v.is_leader()
                self._send(200 if yes else 503, yes)
            elif path == "/healthz":
                self._send(200, "ok")
            else:
                self._send(404, {"reason": "not found"})

        def log_message(self, *args):  # the sampler asks every 20 ms
            pass

    host, _, port = o.http_address.rpartition(":")
    ThreadingHTTPServer.daemon_threads = True
    srv = ThreadingHTTPServer((host, int(port)), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--identity", required=True)
    p.add_argument("--lock-name", required=True)
    p.add_argument("--lock-type", default="configmaps", choices=("configmaps", "leases"))
    p.add_argument("--namespace", default="default")
    p.add_argument("--lease-duration", default="15s")
    p.add_argument("--renew-deadline", default="10s")
    p.add_argument("--retry-period", default="2s")
    p.add_argument("--http-address", default="127.0.0.1:4040")
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--version", action="version", version=VERSION)
    o = p.parse_args(argv)
    lease = seconds(o.lease_duration, "lease-duration")
    renew = seconds(o.renew_deadline, "renew-deadline")
    retry = seconds(o.retry_period, "retry-period")

    logging.Formatter.converter = time.gmtime
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s.%(msecs)03dZ %(levelname)s %(name)s: %(message)s",
                        datefmt="%Y-%m-%dT%H:%M:%S")
    config.load_kube_config(config_file=o.kubeconfig)
    v = View()
    srv = serve(o, v)

    def on_signal(sig, _frame):
        with v.mu:
            v.terminating = True
        log.info("%s: no longer leading, exiting without a release (the library has none) at %s",
                 signal.Signals(sig).name, wall_now())
        logging.shutdown()
        os._exit(0)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    log.info("python peer %s: kubernetes %s, lock %s %s/%s, lease %ss renew %ss retry %ss, http %s",
             o.identity, VERSION, o.lock_type, o.namespace, o.lock_name, lease, renew, retry,
             "%s:%s" % srv.server_address)

    run = 0
    while True:
        run += 1
        lock_cls = LeaseLock if o.lock_type == "leases" else ConfigMapLock
        lock = ObservingLock(lock_cls(o.lock_name, o.namespace, o.identity), o.lock_type, v)
        with v.mu:
            v.run = run

        def started(run=run):
            with v.mu:
                if v.stopped_run != run:
                    v.leading_run = run
            log.info("onstarted_leading: %s leads (run %d) at %s", o.identity, run, wall_now())

        def stopped(run=run):
            with v.mu:
                v.stopped_run = run
            log.info("onstopped_leading (run %d) at %s", run, wall_now())

        cfg = electionconfig.Config(lock, lease_duration=lease, renew_deadline=renew,
                                    retry_period=retry, onstarted_leading=started,
                                    onstopped_leading=stopped)
        try:
            leaderelection.LeaderElection(cfg).run()
            log.info("run() returned (leadership lost); contending again as a sidecar would")
        except Exception:  # noqa: BLE001 - the library lets non-API errors escape run()
            with v.mu:
                v.stopped_run = run
            log.exception("run() raised (run %d) at %s; contending again", run, wall_now())
            time.sleep(retry)


if __name__ == "__main__":
    main(sys.argv[1:])
