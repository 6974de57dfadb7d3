"""A fault-injecting TCP proxy on 127.0.0.1, one per agent, run as asyncio tasks.

The agent connects to the proxy's port (KUBERNETES_SERVICE_HOST/PORT) and the proxy forwards the
bytes to the apiserver unchanged: TLS passes through untouched (the apiserver's serving cert has
SAN IP:127.0.0.1, so verification still succeeds through a loopback proxy). Faults, switchable at
run time from any thread through the thread-safe wrappers at the bottom:

  latency(s)     every chunk is forwarded s seconds after it arrived, in each direction
  blackhole()    accept, but forward nothing and answer nothing (a partition: bytes are held, as
                 TCP would retransmit them, and delivered when the partition heals, if the peer is
                 still there); new connections are accepted and never connected upstream meanwhile
  reset()        abort every open connection with a TCP RST (SO_LINGER 0); with a duration, new
                 connections are reset at once until it ends
  drip(s)        forward one byte every s seconds, each direction
  heal()         back to a clean pipe

Standard library only.
"""

import asyncio
import contextlib
import socket
import struct
import threading
import time

_LINGER0 = struct.pack("ii", 1, 0)


def _rst(writer):
    """Closes a connection with a TCP RST instead of a FIN."""
    try:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER0)
        writer.transport.abort()
    except (OSError, RuntimeError, AttributeError):
        pass


class _Conn:
    def __init__(self, c):
        self.c, self.u, self.aborted = c, None, False

    def abort(self):
        self.aborted = True
        _rst(self.c)
        if self.u is not None:
            _rst(self.u)


class FaultProxy:
    def __init__(self, name, upstream_host, upstream_port):
        self.name = name
        self.upstream = (upstream_host, int(upstream_port))
        self.port = None
        self.server = None
        self.conns = set()          # of _Conn
        self._latency = 0.0
        self._drip = 0.0
        self._reset_until = 0.0
        self._open = None           # asyncio.Event: set = traffic flows, clear = blackholed
        self.stats = {"accepted": 0, "reset": 0, "bytes_up": 0, "bytes_down": 0,
                      "chunks_up": 0, "chunks_down": 0}

    # ---------------------------------------------------------------- in the loop
    async def start(self, port=0):
        self._open = asyncio.Event()
        self._open.set()
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", port,
                                                 reuse_address=True, backlog=256)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def close(self):
        if self.server:
            self.server.close()
        for conn in list(self.conns):
            conn.abort()

    def set_latency(self, s):
        self._latency = float(s)

    def set_drip(self, s):
        self._drip = float(s)

    def blackhole(self):
        self._open.clear()

    def reset(self, duration=0.0):
        self._reset_until = time.monotonic() + duration
        for conn in list(self.conns):
            conn.abort()
            self.stats["reset"] += 1

    def heal(self):
        self._latency = 0.0
        self._drip = 0.0
        self._reset_until = 0.0
        self._open.set()

    async def _handle(self, creader, cwriter):
        self.stats["accepted"] += 1
        if time.monotonic() < self._reset_until:
            _rst(cwriter)
            self.stats["reset"] += 1
            return
        conn = _Conn(cwriter)
        self.conns.add(conn)
        try:
            # Blackholed: accept, then hold the connection without connecting upstream.
            await self._open.wait()
            if conn.aborted:
                return
            try:
                ureader, uwriter = await asyncio.open_connection(*self.upstream)
            except OSError:
                _rst(cwriter)
                return
            conn.u = uwriter
            up = asyncio.ensure_future(self._pipe(creader, uwriter, "up"))
            down = asyncio.ensure_future(self._pipe(ureader, cwriter, "down"))
            done, pending = await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
            # One side ended: let the other finish (a half-close), within reason.
            for t in pending:
                try:
                    await asyncio.wait_for(t, timeout=30)
                except Exception:  # noqa: BLE001
                    t.cancel()
            for w in (cwriter, uwriter):
                with contextlib.suppress(Exception):
                    w.close()
        except Exception:  # noqa: BLE001 - a proxy must not die of one connection
            _rst(cwriter)
        finally:
            self.conns.discard(conn)

    async def _pipe(self, reader, writer, direction):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    with contextlib.suppress(OSError, RuntimeError):
                        if writer.can_write_eof():
                            writer.write_eof()
                    return
                arrived = time.monotonic()
                self.stats["chunks_" + direction] += 1
                self.stats["bytes_" + direction] += len(data)
                if not self._open.is_set():
                    await self._open.wait()
                lat = self._latency
                if lat:
                    wait = arrived + lat - time.monotonic()
                    if wait > 0:
                        await asyncio.sleep(wait)
                if self._drip:
                    i = 0
                    while i < len(data):
                        d = self._drip
                        if not d:  # healed mid-chunk: the rest at once
                            writer.write(data[i:])
                            break
                        if not self._open.is_set():
                            await self._open.wait()
                        writer.write(data[i:i + 1])
                        await writer.drain()
                        i += 1
                        await asyncio.sleep(d)
                else:
                    writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            _rst(writer)
        except asyncio.CancelledError:
            _rst(writer)
            raise


class ProxyLoop:
    """An asyncio event loop in its own thread that runs proxies (and anything else scheduled on
    it, e.g. the sampler). Faults are switched from other threads through call()."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="proxy-loop", daemon=True)
        self.thread.start()
        self.proxies = {}

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro, timeout=30):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def call(self, fn, *args):
        """Runs fn(*args) in the loop and returns its result."""
        async def wrap():
            return fn(*args)
        return self.run(wrap())

    def proxy(self, name, host, port):
        p = self.run(FaultProxy(name, host, port).start())
        self.proxies[name] = p
        return p

    def latency(self, p, s):
        self.call(p.set_latency, s)

    def drip(self, p, s):
        self.call(p.set_drip, s)

    def blackhole(self, p):
        self.call(p.blackhole)

    def reset(self, p, duration=0.0):
        self.call(p.reset, duration)

    def heal(self, p):
        self.call(p.heal)

    def close(self):
        with contextlib.suppress(Exception):
            for p in self.proxies.values():
                self.run(p.close(), 5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
