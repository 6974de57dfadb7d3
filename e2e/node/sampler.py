"""The judge's sampler, in a process of its own (judge.Sampler starts it and reads its file).

    python3 -m e2e.node.sampler OUT INTERVAL TIMEOUT      # stdin: "POD HOST PORT" lines; EOF: stop

Per pod, one thread: GET http://HOST:PORT/is-leader every INTERVAL s on a kept-alive connection,
stamped on send and receipt (time.time(): the CLOCK_REALTIME the apps stamp with), one JSON line
per sample in OUT: [pod, send, recv, yes, status] (the HTTP code, or the exception's name).

Why a process: in the scenario's, every pod's sampler stalled at once under load (211-743 ms),
and a stall of the instrument read as a pod nobody looked at. The design and its measurements:
BENCHMARKS.md, "The sampler's own process". It exits when its stdin ends.
"""

import gc
import http.client
import json
import os
import sys
import threading
import time


def sample(pod, host, port, interval, timeout, out, stopping):
    conn = None
    next_at = time.monotonic()
    while not stopping.is_set():
        send = time.time()
        yes, status = False, "error"
        try:
            if conn is None:
                conn = http.client.HTTPConnection(host, port, timeout=timeout)
            conn.request("GET", "/is-leader")
            r = conn.getresponse()
            r.read()
            status = r.status
            yes = r.status == 200
        except (OSError, http.client.HTTPException) as e:
            status = type(e).__name__
            if conn is not None:
                conn.close()
            conn = None
        recv = time.time()
        # One write per line, O_APPEND: lines of different threads never interleave.
        os.write(out, (json.dumps([pod, round(send, 6), round(recv, 6), yes, status]) + "\n").encode())
        next_at += interval
        delay = next_at - time.monotonic()
        if delay < 0:
            next_at = time.monotonic()
        else:
            stopping.wait(delay)
    if conn is not None:
        conn.close()


def main():
    path, interval, timeout = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    gc.disable()  # nothing here makes cycles; a full collection would stop every thread at once
    # The lowest real-time priority, inherited by the threads: at nice -5 this process was not run
    # for ~200 ms at once at load average 27. The pods keep theirs: a slow answer still shows.
    try:
        os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(1))
    except OSError as e:  # no CAP_SYS_NICE: sample anyway, at the inherited priority
        print(f"sampler: SCHED_RR refused ({e}); sampling at normal priority", file=sys.stderr)
    out = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    stopping, threads = threading.Event(), []
    for line in sys.stdin:
        pod, host, port = line.split()
        t = threading.Thread(target=sample, args=(pod, host, int(port), interval, timeout, out,
                                                  stopping), daemon=True)
        t.start()
        threads.append(t)
    stopping.set()
    for t in threads:
        t.join(timeout + 1)
    os.close(out)


if __name__ == "__main__":
    main()
