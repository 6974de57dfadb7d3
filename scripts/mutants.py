#!/usr/bin/env python3
"""mutants.py [--list] [--check] [--skip-baseline] [NAME...]: mutation testing of src/election,
src/locks and the local API's guards (listeners, peers, promises).

Each mutant (scripts/mutant_patches.py) is a named text patch that removes or weakens one safety
guard. It is applied, one at a time, to a COPY of the source tree (the working tree is never
modified), built there incrementally, and run against the non-e2e tests (`ctest -LE e2e`, the most
relevant binaries first, stopping at the first failure). A mutant no test kills is a guard no
test pins.

  scripts/mutants.py                     every mutant (one build and test run each: long)
  scripts/mutants.py NAME...             only these
  scripts/mutants.py --list              names, file:line and what each breaks
  scripts/mutants.py --check             only check that every patch still applies

A patch whose text no longer matches exactly once fails loudly before anything is built: update
it with the code. The unmutated copy must build and pass first. Exit status: 0 all killed, 3 some
survived, 1 error, 2 usage. One run at a time per work dir (a lock). On demand only, not in CI;
about 10 minutes on 2 cores, plus the first full build. While others edit the tree, copy a
stable snapshot instead (MUTANTS_SRC=DIR, e.g. `git archive HEAD | tar -x -C DIR`).
Environment: MUTANTS_WORK (default /tmp/leasehold-mutants: src-copy/, build/, logs/),
MUTANTS_SRC (the tree to copy; default this checkout), MUTANTS_TESTS (a ctest -R regex: only
these tests), MUTANTS_JOBS (default 2), MUTANTS_NICE (default 10).

The machinery is here, the patches in mutant_patches.py; scripts/mutants_test.py tests both
(CTest `mutants_selftest`, label unit).
"""
import fcntl
import os
import shutil
import subprocess
import sys
import time
from collections import namedtuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutant_patches  # noqa: E402  (beside this file, also when imported from elsewhere)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
USAGE = "usage: scripts/mutants.py [--list] [--check] [--skip-baseline] [NAME...]"


class Settings(namedtuple("Settings", "src work jobs nice tests")):
    """Where and how a run works, read once from the environment."""

    @classmethod
    def from_env(cls, env, root=ROOT):
        return cls(src=env.get("MUTANTS_SRC", root),
                   work=env.get("MUTANTS_WORK", "/tmp/leasehold-mutants"),
                   jobs=env.get("MUTANTS_JOBS", "2"),
                   nice=["nice", "-n", env.get("MUTANTS_NICE", "10")],
                   tests=env.get("MUTANTS_TESTS") or None)

    @property
    def copy(self):
        return os.path.join(self.work, "src-copy")

    @property
    def build(self):
        return os.path.join(self.work, "build")

    @property
    def logs(self):
        return os.path.join(self.work, "logs")


def test_groups(path, tests=None, groups=mutant_patches.GROUPS, first=mutant_patches.FIRST):
    """The ctest argument lists to try in order for a mutant of `path`, each stopping at its
    first failure. `tests` (MUTANTS_TESTS) replaces them with that one -R regex."""
    if tests:
        return [["-LE", "e2e|node", "-R", tests]]
    if path not in first:
        return groups
    return [["-R", first[path]]] + groups


def line_of(tree, path, old):
    """The 1-based line where the patched text starts in `tree` (0 when it does not occur)."""
    try:
        with open(os.path.join(tree, path)) as f:
            text = f.read()
    except OSError:
        return 0
    at = text.find(old)
    return text.count("\n", 0, at) + 1 if at >= 0 else 0


def list_lines(tree, mutants):
    """--list: name, file:line (where the patch applies in `tree`), what it breaks."""
    out = []
    for m in mutants:
        where = f"{m.path}:{line_of(tree, m.path, m.old)}"
        out.append(f"{m.name:36} {where:36} {m.breaks}")
    return out


def check(tree, mutants):
    """({path: pristine text}, None) when every patch's old text occurs exactly once in `tree`;
    else (None, the message for the first that does not)."""
    texts = {}
    for m in mutants:
        if m.path not in texts:
            with open(os.path.join(tree, m.path)) as f:
                texts[m.path] = f.read()
        count = texts[m.path].count(m.old)
        if count != 1:
            return None, (f"mutant {m.name}: its text occurs {count} times in {m.path}, not once; "
                          "update the patch")
    return texts, None


def mutated(pristine, m):
    """The text of m.path with the mutant applied (check() made sure `old` occurs once)."""
    return pristine[m.path].replace(m.old, m.new, 1)


def choose(names, mutants):
    """(the chosen mutants in catalog order, the unknown names). No names: all."""
    known = {m.name for m in mutants}
    unknown = [n for n in names if n not in known]
    return [m for m in mutants if not names or m.name in names], unknown


def parse_args(argv):
    """(action, skip_baseline, names): action is 'list', 'check', 'run', or ('usage', code).
    Like the old scripts/mutants.sh, --list acts at once (later arguments are ignored)."""
    skip_baseline = check_only = False
    names = []
    for a in argv:
        if a == "--list":
            return "list", skip_baseline, names
        elif a == "--skip-baseline":
            skip_baseline = True
        elif a == "--check":
            check_only = True
        elif a in ("-h", "--help"):
            return ("usage", 0), skip_baseline, names
        elif a.startswith("-"):
            return ("usage", 2), skip_baseline, names
        else:
            names.append(a)
    return ("check" if check_only else "run"), skip_baseline, names


def run(cmd, log=None, cwd=None):
    if not log:
        return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                              cwd=cwd).returncode
    with open(log, "a") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        return subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd).returncode


def build(s, log):
    return run(s.nice + ["cmake", "--build", s.build, "-j", s.jobs], log) == 0


def failed_detail(text):
    """The doctest case (and subcase) of the first failed assertion in a log's text, e.g.
    "elector / [x] a case". doctest prints a "TEST CASE:" header before MESSAGEs too."""
    lines = text.splitlines()
    current = ""
    for i, line in enumerate(lines):
        if line.startswith("TEST CASE:"):
            parts = [line[len("TEST CASE:"):].strip()]
            for nxt in lines[i + 1:i + 4]:
                if nxt.startswith("  ") and nxt.strip():
                    parts.append(nxt.strip())
                else:
                    break
            current = " / ".join(parts)
        elif ": ERROR: " in line or ": FATAL ERROR: " in line:
            return current
    return current


def killed_by(test, detail):
    """The killing test and the doctest case/subcase that failed, without saying the case twice
    when the test is one case ("election_test/elector" and "elector / [x] a subcase")."""
    case = test.split("/", 1)[1] if "/" in test else None
    head, _, rest = detail.partition(" / ")
    if case is not None and head == case:
        return test + (f": {rest}" if rest else "")
    return test + (f": {detail}" if detail else "")


def run_tests(s, log, groups):
    """(passed, failing test, detail) of ctest over `groups` in turn."""
    for group in groups:
        failed_log = os.path.join(s.build, "Testing", "Temporary", "LastTestsFailed.log")
        if os.path.exists(failed_log):
            os.remove(failed_log)
        # --no-tests=error: a group that selects nothing (a renamed test) must not pass.
        rc = run(s.nice + ["ctest", "--test-dir", s.build, "--output-on-failure",
                           "--stop-on-failure", "--no-tests=error", "--timeout", "300"] + group,
                 log)
        if rc != 0:
            name = "?"
            if os.path.exists(failed_log):
                with open(failed_log) as f:
                    first = f.readline().strip()  # "N:name"; a case's name has spaces
                if first:
                    name = first.split(":", 1)[-1]
            with open(log, errors="replace") as f:
                return False, name, failed_detail(f.read())
    return True, "", ""


def sync_copy(src, copy):
    """Makes `copy` a copy of `src` (without build dirs and .git). Only files whose content
    differs are written, and with the current time, so ninja rebuilds exactly those (also after an
    interrupted run left a mutant in place); mtimes copied from `src` could be older than the
    objects built from a mutant and hide it."""
    def skip(rel, name):
        return (name == ".git" or name == "__pycache__" or (rel == "" and name.startswith("build"))
                or os.path.join(rel, name) == os.path.join("e2e", "out"))
    wanted = set()
    for dirpath, dirnames, filenames in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        rel = "" if rel == "." else rel
        dirnames[:] = [d for d in dirnames if not skip(rel, d)]
        os.makedirs(os.path.join(copy, rel), exist_ok=True)
        wanted.add(rel)
        for name in filenames:
            from_path = os.path.join(dirpath, name)
            to_path = os.path.join(copy, rel, name)
            wanted.add(os.path.join(rel, name))
            if os.path.islink(from_path):
                target = os.readlink(from_path)
                if not (os.path.islink(to_path) and os.readlink(to_path) == target):
                    if os.path.lexists(to_path):
                        os.remove(to_path)
                    os.symlink(target, to_path)
                continue
            with open(from_path, "rb") as f:
                data = f.read()
            if os.path.islink(to_path) or not os.path.isfile(to_path) or _read(to_path) != data:
                if os.path.lexists(to_path):
                    os.remove(to_path)
                with open(to_path, "wb") as out:
                    out.write(data)
                shutil.copymode(from_path, to_path)
    for dirpath, dirnames, filenames in os.walk(copy, topdown=False):
        rel = os.path.relpath(dirpath, copy)
        rel = "" if rel == "." else rel
        for name in filenames:
            if os.path.join(rel, name) not in wanted:
                os.remove(os.path.join(dirpath, name))
        if rel and rel not in wanted and not os.listdir(dirpath):
            os.rmdir(dirpath)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _write(path, text):
    with open(path, "w") as out:
        out.write(text)


def run_mutants(s, chosen, skip_baseline):
    """Builds and tests the copy unmutated, then each mutant in turn; prints the table."""
    os.makedirs(s.work, exist_ok=True)
    lock = open(os.path.join(s.work, "lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print(f"another mutants run uses {s.work}; set MUTANTS_WORK to run beside it",
              file=sys.stderr)
        return 1
    os.makedirs(s.logs, exist_ok=True)
    sync_copy(s.src, s.copy)
    pristine, error = check(s.copy, chosen)
    if pristine is None:
        print(error, file=sys.stderr)
        return 1

    if not os.path.exists(os.path.join(s.build, "CMakeCache.txt")):
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.run(["cmake", "-S", s.copy, "-B", s.build] + gen +
                       ["-DCMAKE_BUILD_TYPE=RelWithDebInfo"], stdout=subprocess.DEVNULL,
                       check=True)
    log = os.path.join(s.logs, "baseline.log")
    open(log, "w").close()
    t0 = time.time()
    if not build(s, log):
        print(f"the unmutated copy does not build; see {log}", file=sys.stderr)
        return 1
    if not skip_baseline:
        ok, name, detail = run_tests(s, log, test_groups("", s.tests))
        if not ok:
            print(f"the unmutated copy fails {name} ({detail}); see {log}", file=sys.stderr)
            return 1
        print(f"baseline: builds and passes ctest -LE e2e ({time.time() - t0:.0f}s)", flush=True)

    rows = []
    for m in chosen:
        path = os.path.join(s.copy, m.path)
        log = os.path.join(s.logs, m.name + ".log")
        open(log, "w").close()
        start = time.time()
        _write(path, mutated(pristine, m))
        try:
            if not build(s, log):
                result, by = "BUILD-FAILED", "(fix the patch)"
            else:
                ok, name, detail = run_tests(s, log, test_groups(m.path, s.tests))
                result = "survived" if ok else "killed"
                by = killed_by(name, detail)
        finally:
            _write(path, pristine[m.path])
        rows.append((m.name, m.path, result, by))
        print(f"{m.name:36} {result:9} {time.time() - start:5.0f}s  {by}", flush=True)
    build(s, os.path.join(s.logs, "restore.log"))

    print()
    print(f"| {'mutant':36} | {'file':28} | {'result':9} | killed by")
    print(f"|{'-' * 38}|{'-' * 30}|{'-' * 11}|{'-' * 40}")
    for n, f, result, by in rows:
        print(f"| {n:36} | {f:28} | {result:9} | {by[:110]}")
    killed = sum(1 for r in rows if r[2] == "killed")
    print(f"\n{killed} of {len(rows)} mutants killed; logs in {s.logs}")
    return 0 if all(r[2] == "killed" for r in rows) else 3


def main(argv, env=None, mutants=None):
    s = Settings.from_env(os.environ if env is None else env)
    mutants = mutant_patches.MUTANTS if mutants is None else mutants
    action, skip_baseline, names = parse_args(argv)
    if isinstance(action, tuple):
        print(USAGE, file=sys.stderr)
        return action[1]
    if action == "list":
        for line in list_lines(s.src, mutants):
            print(line)
        return 0
    chosen, unknown = choose(names, mutants)
    if unknown:
        print("unknown mutant(s): " + " ".join(unknown) + " (see --list)", file=sys.stderr)
        return 2
    if action == "check":  # reads MUTANTS_SRC only: safe while a run is going
        pristine, error = check(s.src, chosen)
        if pristine is None:
            print(error, file=sys.stderr)
            return 1
        print(f"all {len(chosen)} patches apply")
        return 0
    return run_mutants(s, chosen, skip_baseline)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
