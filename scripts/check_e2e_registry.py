#!/usr/bin/env python3
"""The e2e scenarios that exist and the ones ctest runs are the same.

A scenario is named twice: by its `@scenario` decorator (the module's `SCENARIOS`, a
`e2e.lib.runner.Registry` or a dict of name -> function) and by a CTest test in
e2e/CMakeLists.txt whose command is `python3 -m e2e.scenarios.MODULE NAME`. Without this check a
scenario added only in Python is silently never run by ctest, and one removed from Python leaves a
test that fails only when run.

    scripts/check_e2e_registry.py --build-dir build    # ctest's list of that configured build
    scripts/check_e2e_registry.py --self-test          # the comparison on made-up lists
    scripts/check_e2e_registry.py --names e2e.scenarios.core   # a module's names, `;`-separated

e2e/CMakeLists.txt makes its scenario tests from `--names` (one test per registered scenario, at
configure time), so the two sides agree by construction for those modules; this check still
catches a scenario module with no block in e2e/CMakeLists.txt (the node tier's modules are
listed there by name) and a build configured before a scenario was added or removed. It also
fails when a scenario module imports another (shared pieces belong in e2e/lib, or e2e/node for
the node tier), but for the declared SIBLING_IMPORTS.

Scenario modules are the Python files under e2e/ that assign `SCENARIOS` at top level; each is
imported (not run) to read its names. Exit 0 when both sides agree, 1 with one line per
scenario missing from either side, 2 for usage errors.
"""
import argparse
import ast
import json
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SCENARIOS_LINE = re.compile(r"^SCENARIOS\s*=", re.M)
# Scenarios deliberately not in CTest, each with why. An entry that CTest runs after all, or
# whose scenario is gone, is an error too, so that the list cannot go stale.
NOT_IN_CTEST = {}
# Scenario modules take their fixtures from e2e.lib (the node tier's also from e2e.node), never
# from another scenario module (a change to one kind's scenarios must not break another's).
# Exceptions, each with why; a stale one fails.
SIBLING_IMPORTS = {
    # The scenarios on kube-apiserver v1.11.10 are today's scenarios run on the old server (a
    # context that picks the lock the old server has), not copies that would drift apart.
    ("e2e.scenarios.v1_11", "e2e.scenarios.core"): "runs core's scenarios on v1.11.10",
    ("e2e.scenarios.v1_11", "e2e.scenarios.announce"): "runs announce's scenarios on v1.11.10",
    ("e2e.scenarios.v1_11", "e2e.scenarios.gate"): "runs gate's scenarios on v1.11.10",
}


def scenario_modules(root=ROOT):
    """Dotted names of the modules under e2e/ that define SCENARIOS at top level."""
    out = []
    for d, dirs, files in os.walk(os.path.join(root, "e2e")):
        dirs[:] = sorted(x for x in dirs if not x.startswith((".", "__")))
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            path = os.path.join(d, f)
            with open(path, encoding="utf-8") as fh:
                if not SCENARIOS_LINE.search(fh.read()):
                    continue
            rel = os.path.relpath(path, root)[:-3]
            out.append(rel.replace(os.sep, "."))
    return out


def imports_of(path):
    """The dotted names a Python file imports (`import a.b`, `from a.b import c` gives a.b and
    a.b.c: c may be a module)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def sibling_imports(modules, root=ROOT, exceptions=None):
    """One line per scenario module that imports another (but for the declared exceptions)."""
    exceptions = SIBLING_IMPORTS if exceptions is None else exceptions
    found = set()
    for m in modules:
        for imported in imports_of(os.path.join(root, *m.split(".")) + ".py"):
            if imported in modules and imported != m:
                found.add((m, imported))
    errors = [f"{m} imports the scenario module {i}: move what it shares to e2e/lib "
              f"(the node tier's to e2e/node)"
              for m, i in sorted(found - set(exceptions))]
    errors += [f"SIBLING_IMPORTS lists {m} -> {i}, which no longer happens: drop it"
               for m, i in sorted(set(exceptions) - found)]
    return errors


# Run in a child with PYTHONPATH=root: imports each module and prints {module: [names]}.
_READ_NAMES = r"""
import importlib, json, sys
out = {}
for m in sys.argv[1:]:
    s = importlib.import_module(m).SCENARIOS
    out[m] = list(getattr(s, "scenarios", s))
print(json.dumps(out))
"""


def registered(modules, root=ROOT):
    """{module: set of scenario names} as the modules' SCENARIOS hold them."""
    return {m: set(names) for m, names in registered_in_order(modules, root).items()}


def registered_in_order(modules, root=ROOT):
    """{module: [scenario names in the order the module defines them]}."""
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", _READ_NAMES, *modules], cwd=root, env=env,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit(f"check_e2e_registry: importing the scenario modules failed:\n{p.stderr}")
    return json.loads(p.stdout)


def ctest_commands(build_dir):
    """{test name: command list} from `ctest --show-only=json-v1` of a configured build."""
    p = subprocess.run(["ctest", "--test-dir", build_dir, "--show-only=json-v1"],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit(f"check_e2e_registry: ctest --show-only failed in {build_dir}:\n{p.stderr}")
    return {t["name"]: t.get("command", []) for t in json.loads(p.stdout)["tests"]}


def scenario_tests(commands, modules):
    """{(module, scenario): test name} for every test that runs `-m MODULE NAME` of a module."""
    out = {}
    for name, cmd in commands.items():
        for i, arg in enumerate(cmd[:-2]):
            if arg == "-m" and cmd[i + 1] in modules:
                out[(cmd[i + 1], cmd[i + 2])] = name
    return out


def compare(reg, tests, not_in_ctest=None):
    """One line per scenario only one side knows (but for the declared exceptions)."""
    not_in_ctest = NOT_IN_CTEST if not_in_ctest is None else not_in_ctest
    errors = []
    for (m, s), why in sorted(not_in_ctest.items()):
        if (m, s) in tests:
            errors.append(f"{m}: scenario {s!r} is listed in NOT_IN_CTEST ({why}) but CTest test "
                          f"{tests[(m, s)]} runs it: drop it from the list")
        elif s not in reg.get(m, set()):
            errors.append(f"{m}: scenario {s!r} is listed in NOT_IN_CTEST but not registered: "
                          f"drop it from the list")
    for m in sorted(reg):
        for s in sorted(reg[m]):
            if (m, s) not in tests and (m, s) not in not_in_ctest:
                errors.append(f"{m}: scenario {s!r} is registered (@scenario) but no CTest test "
                              f"runs it: reconfigure, or add its module's e2e_scenarios() line "
                              f"(node tier: its module's name) to e2e/CMakeLists.txt")
    for (m, s), test in sorted(tests.items()):
        if s not in reg.get(m, set()):
            errors.append(f"{m}: CTest test {test} runs scenario {s!r}, which the module does not "
                          f"register")
    return errors


def self_test():
    reg = {"e2e.scenarios": {"kill_leader", "pause_leader"}, "e2e.gate_scenarios": {"term_gate"}}
    py = ["/usr/bin/python3", "-m"]
    agree = {"e2e_kill_leader": py + ["e2e.scenarios", "kill_leader"],
             "e2e_pause_leader": py + ["e2e.scenarios", "pause_leader"],
             "e2e_gate_term_gate": py + ["e2e.gate_scenarios", "term_gate"],
             "e2e_chaos_short": py + ["e2e.chaos.chaos", "--peers-if-available", "2"],
             "unit": ["election_test"]}
    only_python = {k: v for k, v in agree.items() if k != "e2e_pause_leader"}
    only_ctest = dict(agree, e2e_gone=py + ["e2e.scenarios", "gone"])
    excused = {("e2e.scenarios", "pause_leader"): "run by hand"}
    cases = [("both sides agree", agree, {}, 0),
             ("a scenario added only in Python", only_python, {}, 1),
             ("a CTest test for a scenario the module lacks", only_ctest, {}, 1),
             ("a scenario only in Python, declared so", only_python, excused, 0),
             ("a declared exception that CTest runs after all", agree, excused, 1),
             ("a declared exception that is gone", agree,
              {("e2e.scenarios", "gone"): "run by hand"}, 1)]
    failed = 0
    for name, commands, exceptions, want in cases:
        errors = compare(reg, scenario_tests(commands, set(reg)), exceptions)
        ok = len(errors) == want
        failed += not ok
        print(f"self-test {'ok' if ok else 'FAILED'}: {name}" + (f" ({errors})" if errors else ""))
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "e2e", "scenarios"))
        files = {"a": "from e2e.lib.agent import Agent\nSCENARIOS = {}\n",
                 "b": "from e2e.scenarios.a import helper\nSCENARIOS = {}\n",
                 "c": "import e2e.scenarios.a\nSCENARIOS = {}\n",
                 "d": "from e2e.scenarios import a\nSCENARIOS = {}\n"}
        for f, text in files.items():
            with open(os.path.join(root, "e2e", "scenarios", f + ".py"), "w") as out:
                out.write(text)
        mods = set(scenario_modules(root))
        excused = {("e2e.scenarios.b", "e2e.scenarios.a"): "why",
                   ("e2e.scenarios.c", "e2e.scenarios.a"): "why",
                   ("e2e.scenarios.d", "e2e.scenarios.a"): "why"}
        cases = [("scenario modules that import a sibling (three ways)", {}, 3),
                 ("the same, declared", excused, 0),
                 ("a declared sibling import that is gone",
                  {**excused, ("e2e.scenarios.a", "e2e.scenarios.b"): "why"}, 1)]
        for name, exceptions, want in cases:
            errors = sibling_imports(mods, root, exceptions)
            ok = len(errors) == want
            failed += not ok
            print(f"self-test {'ok' if ok else 'FAILED'}: {name}"
                  + (f" ({errors})" if errors else ""))
    return 1 if failed else 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", help="a configured CMake build directory")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--names", metavar="MODULE",
                    help="print MODULE's scenario names, ';'-separated")
    a = ap.parse_args(argv)
    if a.names:
        print(";".join(registered_in_order([a.names])[a.names]))
        return 0
    if a.self_test:
        return self_test()
    if not a.build_dir:
        ap.error("--build-dir or --self-test")
    modules = scenario_modules()
    reg = registered(modules)
    tests = scenario_tests(ctest_commands(a.build_dir), set(modules))
    errors = compare(reg, tests) + sibling_imports(set(modules))
    for e in errors:
        print(e)
    n = sum(len(v) for v in reg.values())
    if errors:
        print(f"check_e2e_registry: {len(errors)} disagreement(s)")
        return 1
    print(f"check_e2e_registry: {n} scenarios in {len(modules)} modules, each run by one CTest "
          f"test and every such test registered; no scenario module imports another")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
