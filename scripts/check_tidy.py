#!/usr/bin/env python3
"""Every source file of src/ passes clang-tidy with the checks of .clang-tidy (CTest clang_tidy).

Usage: check_tidy.py CLANG_TIDY BUILD_DIR [--jobs N] [--no-cache]. BUILD_DIR holds the
compile_commands.json of a configured build (the top CMakeLists.txt writes it). Pinned to
Debian 12's clang-tidy-14: another version has other checks and other findings. A finding fails;
fix it, or, if a check does not fit this code, turn it off in .clang-tidy with a line saying why.

clang-tidy takes about 2.5 s of CPU per file (most of it matching inside the system headers), so
a file that passed is not checked again while nothing it reads has changed: a pass leaves a
stamp in BUILD_DIR/clang-tidy-passed/ named after the hash of the file preprocessed with its
comments (every header it includes, NOLINTs and line numbers included), its compile command,
.clang-tidy and clang-tidy's version. Findings are never cached. --no-cache checks every file.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def sources():
    """src/'s .cpp files, relative to the root: the tracked ones in a checkout, else all."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "src/*.cpp"], check=True,
                             capture_output=True, text=True).stdout.split()
        if out:
            return out
    except (OSError, subprocess.CalledProcessError):
        pass
    return sorted(os.path.relpath(os.path.join(d, f), ROOT)
                  for d, _, fs in os.walk(os.path.join(ROOT, "src")) for f in fs
                  if f.endswith(".cpp"))


def cache_key(entry, salt):
    """The hash of what clang-tidy's verdict on this file depends on, or None if unknown."""
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    pre, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a != "-c":
            pre.append(a)
    r = subprocess.run(pre + ["-E", "-C", "-o", "-"], cwd=entry["directory"],
                       capture_output=True)
    if r.returncode != 0:
        return None
    h = hashlib.sha256(salt)
    h.update(json.dumps(args).encode())
    h.update(r.stdout)
    return h.hexdigest()


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("clang_tidy")
    ap.add_argument("build")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-cache", action="store_true")
    a = ap.parse_args(argv[1:])
    build = os.path.abspath(a.build)
    db_path = os.path.join(build, "compile_commands.json")
    if not os.path.exists(db_path):
        print(f"check_tidy: no {db_path}: configure the build first")
        return 1
    with open(db_path, encoding="utf-8") as f:
        db = {os.path.normpath(os.path.join(e["directory"], e["file"])): e for e in json.load(f)}
    files = sources()
    if not files:
        print(f"check_tidy: no C++ files found under {ROOT}/src")
        return 1
    # A file the build does not compile would be skipped silently: name it instead.
    missing = [f for f in files if os.path.join(ROOT, f) not in db]
    if missing:
        print(f"check_tidy: not in {db_path} (not built, so not checked): {' '.join(missing)}")
        return 1
    version = subprocess.run([a.clang_tidy, "--version"], capture_output=True).stdout
    with open(os.path.join(ROOT, ".clang-tidy"), "rb") as f:
        salt = f.read() + version
    stamps = os.path.join(build, "clang-tidy-passed")
    os.makedirs(stamps, exist_ok=True)

    def check(rel):
        """(rel, key, whether it passed before, findings or None)."""
        key = None if a.no_cache else cache_key(db[os.path.join(ROOT, rel)], salt)
        if key and os.path.exists(os.path.join(stamps, key)):
            return rel, key, True, None
        r = subprocess.run([a.clang_tidy, "-p", build, "--quiet", "--warnings-as-errors=*",
                            os.path.join(ROOT, rel)], cwd=ROOT, capture_output=True, text=True)
        if r.returncode == 0:
            if key:
                open(os.path.join(stamps, key), "w").close()
            return rel, key, False, None
        return rel, key, False, r.stdout + r.stderr

    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        results = list(pool.map(check, files))
    # Stamps of files as they no longer are go, so the folder does not grow.
    keep = {key for _, key, _, _ in results if key}
    for name in os.listdir(stamps):
        if name not in keep:
            os.remove(os.path.join(stamps, name))
    failed = [(rel, out) for rel, _, _, out in results if out is not None]
    cached = sum(1 for _, _, hit, _ in results if hit)
    lines = sorted({ln.replace(ROOT + "/", "") for _, out in failed for ln in out.splitlines()
                    if " warning: " in ln or " error: " in ln})
    for ln in lines or [out for _, out in failed]:
        print(ln)
    took = f"{time.monotonic() - start:.0f} s"
    if failed:
        print(f"check_tidy: findings in {len(failed)} of {len(files)} files ({took}); .clang-tidy "
              f"says which checks run and why the others do not")
        return 1
    print(f"check_tidy: {len(files)} files of src/ pass .clang-tidy's checks ({took}; {cached} "
          f"unchanged since they last passed, not checked again)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
