"""How a scenario runs: the Scenario context and the Registry of a module's scenarios."""

import time
from pathlib import Path

from e2e.lib.agent import Agent
from e2e.lib.common import log
from e2e.lib.controlplane import ControlPlane


# What an agent logs when leasehold_promise_overtaken_total moves (elector.cpp, "Promises
# overtaken"): another holder took the lock while a "you lead" it handed out still ran.
OVERTAKEN_LOG = "took the lock while this replica's promise to lead runs"


class Scenario:
    """Context manager that stops every agent and owned control plane it was given (and runs
    what at_exit was given), and prints the agents' logs when the scenario fails. A scenario in
    which an agent's promise was overtaken fails, unless it sets `expect_overtaken` (a foreign
    elector made to ignore promises)."""

    def __init__(self, name):
        self.name = name
        self.expect_overtaken = False
        self.agents = []
        self.cps = []
        self.exits = []
        self.start = time.monotonic()

    def agent(self, *a, **kw):
        return self.member(Agent, *a, **kw)

    def member(self, cls, *a, **kw):
        """A member of class `cls` (Agent, or a peer of e2e.lib.members), which this stops."""
        m = cls(*a, **kw)
        self.agents.append(m)
        return m

    def at_exit(self, fn, *args):
        """Calls fn(*args) when the scenario ends, after its agents stopped, the last added
        first (a proxy, a fake server, a directory to remove)."""
        self.exits.append((fn, args))

    def control_plane(self, extra_args=""):
        cp = ControlPlane.shared_or_new(extra_args)
        self.cps.append(cp)
        return cp

    def __enter__(self):
        log(f"=== scenario {self.name}")
        return self

    def _teardown(self, steps):
        """Runs every step even when one raises (a leftover process or directory otherwise
        outlives the test); returns the first error."""
        first = None
        for fn, args in steps:
            try:
                fn(*args)
            except Exception as e:  # every step runs; the first error is kept
                log(f"teardown of {self.name}: {fn.__qualname__} raised {e!r}")
                first = first or e
        return first

    def __exit__(self, exc_type, exc, tb):
        stopped = self._teardown([(a.stop, ()) for a in self.agents])
        overtaken = [a.name for a in self.agents if OVERTAKEN_LOG in a.log_text()]
        if overtaken and not self.expect_overtaken and exc_type is None:
            exc_type, exc = AssertionError, AssertionError(
                f"promise overtaken (leasehold_promise_overtaken_total moved) on "
                f"{', '.join(overtaken)}")
        if overtaken:
            log(f"promise overtaken on {', '.join(overtaken)}")
        if exc_type is not None:
            for a in self.agents:
                print(f"----- log of {a.name} (last 60 lines)")
                print("\n".join(a.log_text().splitlines()[-60:]))
        closed = self._teardown(list(reversed(self.exits)) + [(cp.close, ()) for cp in self.cps])
        teardown_error = stopped or closed
        if teardown_error is not None and exc_type is None:
            exc_type, exc = AssertionError, AssertionError(f"teardown failed: {teardown_error!r}")
        status = "FAILED" if exc_type else "passed"
        log(f"=== scenario {self.name} {status} in {time.monotonic() - self.start:.1f}s")
        if exc is not None and exc_type is AssertionError and tb is None:
            raise exc
        return False


class Registry:
    """The scenarios of one e2e module, by name in the order they are defined, and its command
    line; how a module uses it: CONTRIBUTING.md, "An e2e scenario"."""

    def __init__(self):
        self.scenarios = {}

    def add(self, fn):
        self.scenarios[fn.__name__] = fn
        return fn

    def param(self, factory, *args, name=None, **kw):
        """Adds the scenario `factory(*args, **kw)` returns (a function of the context), named
        `name` or, by default, the factory's name and the arguments joined by "_" (`rollout`,
        "native": rollout_native). The name is the CTest test's: it must not change once tests
        use it."""
        name = name or "_".join([factory.__name__, *map(str, args)])
        assert name not in self.scenarios, f"scenario {name} registered twice"
        self.scenarios[name] = factory(*args, **kw)

    def bind(self, fn, *args, name):
        """Adds the scenario fn(s, *args), named `name` (the CTest test's)."""
        assert name not in self.scenarios, f"scenario {name} registered twice"
        self.scenarios[name] = lambda s: fn(s, *args)

    def main(self, argv=None, context=None, program=None):
        """NAME... or `all`: runs each scenario inside `context(name)` (Scenario by default),
        goes on after a failure, prints "N passed, N failed" and returns 1 if any failed, else
        0. `list`: prints the names, one a line. Anything else: usage, 2."""
        import sys
        import traceback
        argv = sys.argv[1:] if argv is None else list(argv)
        program = program or Path(sys.argv[0]).name
        context = context or Scenario
        if argv == ["list"]:
            print("\n".join(self.scenarios))
            return 0
        names = list(self.scenarios) if argv == ["all"] else argv
        unknown = [n for n in names if n not in self.scenarios]
        if not names or unknown:
            print(f"usage: {program} list | all | {' | '.join(self.scenarios)}", file=sys.stderr)
            return 2
        failed = 0
        for n in names:
            try:
                with context(n) as s:
                    self.scenarios[n](s)
            except Exception:  # noqa: BLE001 - report and go on with the next scenario
                traceback.print_exc()
                failed += 1
        print(f"{len(names) - failed} passed, {failed} failed")
        return 1 if failed else 0
