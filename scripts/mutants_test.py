#!/usr/bin/env python3
"""Tests of scripts/mutants.py and its catalog (CTest `mutants_selftest`, label unit).

Fast and hermetic: the catalog against this checkout (every patch applies exactly once), the
exactly-once rule and the restore on made-up trees, and one whole run (sync, baseline, mutate,
ctest, restore) on a made-up CMake project with no compiler, where one mutant is killed and one
survives. No C++ build.
"""
import contextlib
import io
import os
import shutil
import sys
import tempfile
import fcntl
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutant_patches  # noqa: E402
import mutants  # noqa: E402
from mutant_patches import Mutant  # noqa: E402


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def read(root, rel):
    with open(os.path.join(root, rel)) as f:
        return f.read()


def call(argv, env):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = mutants.main(argv, env=env)
    return rc, out.getvalue(), err.getvalue()


class Catalog(unittest.TestCase):
    def test_names_unique_and_well_formed(self):
        names = [m.name for m in mutant_patches.MUTANTS]
        self.assertEqual(len(names), len(set(names)))
        for m in mutant_patches.MUTANTS:
            with self.subTest(m.name):
                self.assertRegex(m.name, r"^[a-z0-9]+(-[a-z0-9]+)*$")
                self.assertLessEqual(len(m.name), 36)  # the --list column
                self.assertNotEqual(m.old, m.new)
                self.assertTrue(m.breaks.strip())
                self.assertTrue(m.path.startswith("src/"), m.path)

    def test_every_patch_applies_exactly_once_in_this_checkout(self):
        rc, out, err = call(["--check"], {"MUTANTS_SRC": mutants.ROOT})
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(out, f"all {len(mutant_patches.MUTANTS)} patches apply\n")

    def test_list_names_each_mutant_at_a_real_line(self):
        rc, out, _ = call(["--list"], {"MUTANTS_SRC": mutants.ROOT})
        self.assertEqual(rc, 0)
        lines = out.splitlines()
        self.assertEqual([l.split()[0] for l in lines], [m.name for m in mutant_patches.MUTANTS])
        for line, m in zip(lines, mutant_patches.MUTANTS):
            where = line.split()[1]
            self.assertRegex(where, r"^src/\S+:[1-9][0-9]*$", line)
            self.assertTrue(line.endswith(m.breaks))

    def test_first_tests_exist_for_mutated_files_only(self):
        paths = {m.path for m in mutant_patches.MUTANTS}
        for path in mutant_patches.FIRST:
            self.assertIn(path, paths)


class ExactlyOnce(unittest.TestCase):
    def setUp(self):
        self.tree = tempfile.mkdtemp(prefix="mutants-test-")
        self.addCleanup(shutil.rmtree, self.tree)
        write(self.tree, "src/a.cpp", "one\nguard();\ntwice\ntwice\n")

    def test_counts(self):
        cases = [("occurs once", "guard();", True, None),
                 ("missing", "gone();", False, "occurs 0 times in src/a.cpp"),
                 ("twice", "twice", False, "occurs 2 times in src/a.cpp")]
        for name, old, ok, message in cases:
            with self.subTest(name):
                m = Mutant("m-" + name.replace(" ", "-"), "src/a.cpp", old, "x", "breaks")
                texts, error = mutants.check(self.tree, [m])
                self.assertEqual(texts is not None, ok)
                if message:
                    self.assertIn(message, error)
                    self.assertIn(m.name, error)

    def test_first_bad_patch_stops_the_check(self):
        good = Mutant("good", "src/a.cpp", "one", "two", "b")
        bad = Mutant("bad", "src/a.cpp", "twice", "x", "b")
        texts, error = mutants.check(self.tree, [good, bad])
        self.assertIsNone(texts)
        self.assertTrue(error.startswith("mutant bad:"))

    def test_mutated_replaces_once_and_leaves_the_pristine_text(self):
        m = Mutant("m", "src/a.cpp", "guard();\n", "", "b")
        texts, _ = mutants.check(self.tree, [m])
        self.assertEqual(mutants.mutated(texts, m), "one\ntwice\ntwice\n")
        self.assertEqual(texts["src/a.cpp"], read(self.tree, "src/a.cpp"))

    def test_line_of(self):
        self.assertEqual(mutants.line_of(self.tree, "src/a.cpp", "guard"), 2)
        self.assertEqual(mutants.line_of(self.tree, "src/a.cpp", "gone"), 0)
        self.assertEqual(mutants.line_of(self.tree, "src/none.cpp", "x"), 0)


class Cli(unittest.TestCase):
    def test_arguments(self):
        cases = [(["--list", "--bogus"], "list"), (["--check", "a"], "check"),
                 (["a", "b"], "run"), (["-h"], ("usage", 0)), (["--help"], ("usage", 0)),
                 (["--bogus"], ("usage", 2)), (["--skip-baseline"], "run")]
        for argv, action in cases:
            with self.subTest(argv):
                self.assertEqual(mutants.parse_args(argv)[0], action)
        self.assertEqual(mutants.parse_args(["--skip-baseline", "x", "y"]),
                         ("run", True, ["x", "y"]))

    def test_unknown_name_is_a_usage_error(self):
        rc, out, err = call(["isleader-ignores-holder", "nosuch"], {"MUTANTS_SRC": mutants.ROOT})
        self.assertEqual(rc, 2)
        self.assertEqual(err, "unknown mutant(s): nosuch (see --list)\n")

    def test_usage(self):
        for argv, code in [(["-h"], 0), (["--nope"], 2)]:
            rc, _, err = call(argv, {})
            self.assertEqual(rc, code)
            self.assertTrue(err.startswith("usage: scripts/mutants.py"))

    def test_test_groups(self):
        groups, first = [["-R", "g1"], ["-R", "g2"]], {"src/h.cpp": "^h_test$"}
        self.assertEqual(mutants.test_groups("src/e.cpp", None, groups, first), groups)
        self.assertEqual(mutants.test_groups("src/h.cpp", None, groups, first),
                         [["-R", "^h_test$"]] + groups)
        self.assertEqual(mutants.test_groups("src/h.cpp", "only", groups, first),
                         [["-LE", "e2e|node", "-R", "only"]])

    def test_settings_from_env(self):
        s = mutants.Settings.from_env({"MUTANTS_WORK": "/w", "MUTANTS_NICE": "15"}, root="/r")
        self.assertEqual((s.src, s.copy, s.build, s.logs, s.nice, s.jobs, s.tests),
                         ("/r", "/w/src-copy", "/w/build", "/w/logs", ["nice", "-n", "15"], "2",
                          None))

    def test_killed_by(self):
        cases = [("election_test", "elector / [x] a subcase",
                  "election_test: elector / [x] a subcase"),
                 ("election_test/elector", "elector / [x] a subcase",
                  "election_test/elector: [x] a subcase"),
                 ("localapi_test/POST /release", "POST /release", "localapi_test/POST /release"),
                 ("base_test/a", "", "base_test/a"), ("x_test", "", "x_test")]
        for test, detail, want in cases:
            with self.subTest(test):
                self.assertEqual(mutants.killed_by(test, detail), want)

    def test_failed_detail(self):
        log = ("TEST CASE:  elector\n  [x] a subcase\n\n"
               "test/e.cpp:10: ERROR: CHECK( a ) is NOT correct!\n")
        self.assertEqual(mutants.failed_detail(log), "elector / [x] a subcase")
        self.assertEqual(mutants.failed_detail("all fine\n"), "")


class SyncCopy(unittest.TestCase):
    def test_copies_skips_and_prunes(self):
        with tempfile.TemporaryDirectory() as d:
            src, copy = os.path.join(d, "src"), os.path.join(d, "copy")
            write(src, "a/x.cpp", "x")
            write(src, ".git/HEAD", "ref")
            write(src, "build/CMakeCache.txt", "c")
            write(src, "e2e/out/r.json", "{}")
            os.symlink("a/x.cpp", os.path.join(src, "link"))
            write(copy, "stale/gone.cpp", "old")
            write(copy, "a/x.cpp", "mutated")
            mutants.sync_copy(src, copy)
            self.assertEqual(read(copy, "a/x.cpp"), "x")
            self.assertEqual(os.readlink(os.path.join(copy, "link")), "a/x.cpp")
            for gone in (".git", "build", "e2e/out", "stale"):
                self.assertFalse(os.path.exists(os.path.join(copy, gone)), gone)
            # An unchanged file is not rewritten (ninja must not rebuild it).
            before = os.stat(os.path.join(copy, "a/x.cpp")).st_mtime_ns
            os.utime(os.path.join(copy, "a/x.cpp"), ns=(before - 10**9, before - 10**9))
            mutants.sync_copy(src, copy)
            self.assertEqual(os.stat(os.path.join(copy, "a/x.cpp")).st_mtime_ns, before - 10**9)


@unittest.skipUnless(shutil.which("cmake") and shutil.which("ctest"), "needs cmake")
class WholeRun(unittest.TestCase):
    """A made-up project: src/guard.txt holds a guard; the test fails when it is gone."""

    def test_killed_survived_and_restored(self):
        with tempfile.TemporaryDirectory() as d:
            src, work = os.path.join(d, "src"), os.path.join(d, "work")
            write(src, "CMakeLists.txt",
                  "cmake_minimum_required(VERSION 3.19)\nproject(m NONE)\nenable_testing()\n"
                  "add_test(NAME \"guard_test/the guard, by name\" COMMAND grep -q "
                  "\"if (guard)\" ${CMAKE_SOURCE_DIR}/src/guard.txt)\n")
            write(src, "src/guard.txt", "if (guard) {\n  work();\n}\n")
            catalog = [Mutant("guard-removed", "src/guard.txt", "if (guard) {", "if (true) {",
                              "the guard is gone"),
                       Mutant("work-renamed", "src/guard.txt", "work();", "play();",
                              "nothing a test sees")]
            env = {"MUTANTS_SRC": src, "MUTANTS_WORK": work, "MUTANTS_NICE": "0",
                   "MUTANTS_TESTS": "^guard_test(/|$)"}
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                rc = mutants.main([], env=env, mutants=catalog)
            text = out.getvalue()
            self.assertEqual(rc, 3, text)  # one survived
            # The failing test's whole name (a per-case test's name has spaces).
            self.assertRegex(text, r"(?m)^guard-removed +killed .* guard_test/the guard, by name$")
            self.assertRegex(text, r"(?m)^work-renamed +survived ")
            self.assertIn("1 of 2 mutants killed", text)
            self.assertTrue(text.startswith("baseline: builds and passes"))
            # The copy is pristine again, and the source was never touched.
            self.assertEqual(read(os.path.join(work, "src-copy"), "src/guard.txt"),
                             read(src, "src/guard.txt"))
            self.assertEqual(read(src, "src/guard.txt"), "if (guard) {\n  work();\n}\n")
            # Only the killing mutant, and the lock refuses a second run beside a first.
            with contextlib.redirect_stdout(io.StringIO()) as o:
                rc = mutants.main(["guard-removed"], env=env, mutants=catalog)
            self.assertEqual(rc, 0, o.getvalue())
            # A selection that matches no test is an error, not a pass.
            e = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(e):
                rc = mutants.main(["guard-removed"], env=dict(env, MUTANTS_TESTS="^renamed$"),
                                  mutants=catalog)
            self.assertEqual(rc, 1)
            self.assertIn("the unmutated copy fails", e.getvalue())
            with open(os.path.join(work, "lock"), "w") as held:
                fcntl.flock(held, fcntl.LOCK_EX)
                e = io.StringIO()
                with contextlib.redirect_stderr(e):
                    rc = mutants.main(["guard-removed"], env=env, mutants=catalog)
                self.assertEqual(rc, 1)
                self.assertIn("set MUTANTS_WORK", e.getvalue())


if __name__ == "__main__":
    unittest.main()
