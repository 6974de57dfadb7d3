"""What every e2e module needs: where the repository and the binary are, free loopback ports,
waiting for a condition, time conversions, one HTTP request, the log line."""

import contextlib
import http.client
import json
import os
import random
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


def leasehold_binary():
    b = os.environ.get("LEASEHOLD_BIN") or str(REPO / "build" / "leasehold")
    if not os.access(b, os.X_OK):
        raise RuntimeError(f"leasehold binary not found at {b}; build first or set LEASEHOLD_BIN")
    return b


_handed_out = set()  # every port free_port() returned in this process
_handed_out_lock = threading.Lock()
_reservations = []   # the abstract sockets that hold this process's ports (see free_port)


def _ephemeral_low():
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port_range():
    """[low, high] of free_port(), below the kernel's ephemeral range; controlplane.sh's
    free_ports draws from the ports below these, so the two never meet."""
    low = max(1024, _ephemeral_low() - 12000)
    return low, max(low + 1000, _ephemeral_low() - 1)


def _reserve(port):
    """Holds `port` for this process's life, against every other process that calls free_port:
    an abstract Unix socket named after it, which the kernel frees when the process ends (no
    file to clean up, none left by a killed test). False if another process holds it."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(f"\0leasehold-e2e-port-{port}")
    except OSError:
        s.close()
        return False
    _reservations.append(s)
    return True


def free_port():
    """A loopback port no one listens on, that this process never handed out before and that no
    other e2e process (tests run side by side) holds.

    Not bind(0): the kernel picks that from the ephemeral range, where a port just closed comes
    back soon (two agents started one after the other were both given 38203; the second could
    not listen, and the sampler, asking "its" port, heard the first agent twice: a false "two
    leaders") and where every outgoing connection takes its source port. Reserved (_reserve) from
    the probe on: a port is often bound seconds after it is handed out, or again after a kill."""
    low, high = free_port_range()
    rng = random.Random()
    with _handed_out_lock:
        for _ in range(1000):
            port = rng.randint(low, high)
            if port in _handed_out:
                continue
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            if not _reserve(port):
                continue
            _handed_out.add(port)
            return port
    raise RuntimeError(f"no free loopback port in [{low}, {high}] after 1000 tries")


def wait_until(pred, timeout, interval=0.05, what="condition"):
    """Polls pred() until it returns a truthy value; returns it, or raises after timeout s."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


# Offset that turns time.monotonic() into wall-clock seconds since the epoch.
MONO_TO_WALL = time.time() - time.monotonic()


def parse_rfc3339(s):
    """'2026-01-02T03:04:05.123456Z' (any number of fraction digits; a +HH:MM or -HH:MM zone
    instead of Z, as Prometheus' API writes; none: UTC) -> seconds since the epoch (float)."""
    import datetime
    main, frac, off = s.strip().rstrip("Z"), 0.0, 0
    if len(main) > 19 and main[-6] in "+-" and main[-3] == ":":
        off = (1 if main[-6] == "+" else -1) * (int(main[-5:-3]) * 3600 + int(main[-2:]) * 60)
        main = main[:-6]
    if "." in main:
        main, f = main.split(".", 1)
        frac = float("0." + f)
    dt = datetime.datetime.strptime(main, "%Y-%m-%dT%H:%M:%S").replace(
        tzinfo=datetime.timezone.utc)
    return dt.timestamp() + frac - off


def exchange(c, method, path, body=None, headers=None):
    """One request on the connection `c`, which it then closes: (status, body parsed as JSON,
    else text)."""
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        text = r.read().decode()
    finally:
        c.close()
    try:
        return r.status, json.loads(text)
    except ValueError:
        return r.status, text


def http_request(host, port, method, path, timeout, body=None):
    """exchange() on a fresh connection, or (None, error) when nothing answered."""
    try:
        return exchange(http.client.HTTPConnection(host, port, timeout=timeout), method, path,
                        body)
    except (OSError, http.client.HTTPException) as e:
        return None, str(e)


def start_threads(target, args_list):
    """A daemon thread running target(*args) for each tuple of `args_list`, started."""
    threads = [threading.Thread(target=target, args=args, daemon=True) for args in args_list]
    for t in threads:
        t.start()
    return threads


class Watch:
    """Asks pred() every `interval` s in a daemon thread until stop(); `hits`: the monotonic
    times at which it held."""

    def __init__(self, pred, interval):
        self.hits, self._stop = [], threading.Event()
        self._thread = start_threads(self._run, [(pred, interval)])[0]

    def _run(self, pred, interval):
        while not self._stop.is_set():
            if pred():
                self.hits.append(time.monotonic())
            self._stop.wait(interval)

    def stop(self):
        self._stop.set()
        self._thread.join(2)
        return self.hits


def text_of(path):
    """The text of file `path`, "" while it cannot be read (not written yet)."""
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def measured(msg):
    """Logs a number a scenario measured, on a line starting with "MEASURED"."""
    log(f"MEASURED {msg}")


def terminate(proc, grace, group=False):
    """Ends a child: SIGTERM (to its process group with `group`), SIGKILL if it has not exited
    within `grace` seconds; returns its exit status (None if it had not been started)."""
    if proc is None:
        return None
    if proc.poll() is None:
        def send(sig):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig) if group else proc.send_signal(sig)
        send(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            send(signal.SIGKILL)
            proc.wait()
    return proc.returncode

