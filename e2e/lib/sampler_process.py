#!/usr/bin/env python3
"""Leadership sampler, run as its own process so that the proxies and the fault driver cannot
delay its questions.

    python3 -m e2e.lib.sampler_process OUT_FILE INTERVAL TIMEOUT SLOT=PORT [SLOT=PORT ...]

Every INTERVAL seconds it asks every slot `GET /leader` on a new connection, without waiting for
the previous question to be answered (at most MAX_OUTSTANDING open questions per slot). Each
question is recorded when its answer arrives, however late (up to LATE_LIMIT s), with the instant
it was sent (what a late "yes" covers: e2e/lib/analysis.py). TIMEOUT is not applied here: the
report applies it to sent and recv (lead spans).

One line per answered or failed question (time.monotonic(), shared with the driver):
    slot sent recv status yes term validUntil name
status is the HTTP status, or 0 for no answer (refused, reset, timeout after LATE_LIMIT).
validUntil is seconds since the epoch or -. Stops on SIGTERM/SIGINT, flushing the file.
"""

import asyncio
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import time

from e2e.lib.common import REPO, parse_rfc3339, terminate

MAX_OUTSTANDING = 600
LATE_LIMIT = 30.0
REQUEST = b"GET /leader HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


class Sampler:
    def __init__(self, out, interval, timeout, slots):
        self.out = out
        self.interval, self.timeout = interval, timeout
        self.slots = slots
        self.outstanding = {s: 0 for s in slots}
        self.stopping = False
        self.lines = []

    async def ask(self, slot, port):
        sent = time.monotonic()
        status, yes, term, vu, name = 0, 0, "-", "-", "-"
        writer = None
        try:
            async def exchange():
                nonlocal writer
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(REQUEST)
                return await reader.read()  # Connection: close -> until EOF
            data = await asyncio.wait_for(exchange(), LATE_LIMIT)
            head, _, body = data.partition(b"\r\n\r\n")
            line = head.split(b"\r\n", 1)[0].split()
            status = int(line[1]) if len(line) > 1 else 0
            if b"chunked" in head.lower():
                body = _unchunk(body)
            try:
                b = json.loads(body)
            except ValueError:
                b = None
            if isinstance(b, dict):
                yes = 1 if (status == 200 and b.get("isLeader") is True) else 0
                if b.get("term") is not None:
                    term = str(b.get("term"))
                if b.get("validUntil"):
                    with contextlib.suppress(ValueError):
                        vu = f"{parse_rfc3339(b['validUntil']):.6f}"
                name = str(b.get("identity") or "-").replace(" ", "_") or "-"
        except (OSError, asyncio.TimeoutError, ValueError, IndexError):
            pass
        finally:
            if writer is not None:
                with contextlib.suppress(Exception):
                    writer.close()
            self.outstanding[slot] -= 1
        recv = time.monotonic()
        self.lines.append(f"{slot} {sent:.6f} {recv:.6f} {status} {yes} {term} {vu} {name}\n")

    async def tick(self, slot, port):
        nxt = time.monotonic()
        while not self.stopping:
            if self.outstanding[slot] < MAX_OUTSTANDING:
                self.outstanding[slot] += 1
                asyncio.ensure_future(self.ask(slot, port))
            nxt += self.interval
            now = time.monotonic()
            if nxt < now:  # fell behind (the machine is busy): do not burst to catch up
                nxt = now
            await asyncio.sleep(nxt - now)

    async def flush(self):
        with open(self.out, "a") as f:
            while not self.stopping:
                await asyncio.sleep(1.0)
                lines, self.lines = self.lines, []
                f.writelines(lines)
                f.flush()
            # The questions still open get a moment (the driver resumes every paused agent before
            # it stops the sampler).
            await asyncio.sleep(min(2.0, LATE_LIMIT))
            f.writelines(self.lines)
            self.lines = []

    async def run(self):
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, lambda: done.done() or done.set_result(None))
        fl = asyncio.ensure_future(self.flush())
        ticks = [asyncio.ensure_future(self.tick(s, p)) for s, p in self.slots.items()]
        await done
        self.stopping = True
        for t in ticks:
            t.cancel()
        await fl


def _unchunk(body):
    out = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        try:
            n = int(size_line.split(b";")[0], 16)
        except ValueError:
            break
        if n == 0:
            break
        out += rest[:n]
        body = rest[n + 2:]
    return out


class Started:
    """This sampler started in its own process by a driver (the chaos suite, the mixed fleets):
    writes OUT_FILE (emptied first) until stop()."""

    def __init__(self, out, interval, timeout, slots):
        self.path = out
        out.write_text("")
        env = dict(os.environ)  # -m needs the repository on the path whatever the cwd
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "e2e.lib.sampler_process", str(out), str(interval),
             str(timeout)] + [f"{k}={p}" for k, p in slots.items()],
            env=env, start_new_session=True)

    def stop(self):
        """SIGTERM (it flushes what is still open), SIGKILL if it has not ended in 15 s."""
        terminate(self.proc, 15)


def main(argv):
    out, interval, timeout = argv[0], float(argv[1]), float(argv[2])
    slots = {s: int(p) for s, p in (a.split("=") for a in argv[3:])}
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    with contextlib.suppress(OSError):
        os.nice(-5)
    asyncio.run(Sampler(out, interval, timeout, slots).run())


if __name__ == "__main__":
    main(sys.argv[1:])
