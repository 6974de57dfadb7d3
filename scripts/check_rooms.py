#!/usr/bin/env python3
"""Every `#include "room/..."` keeps to the table "Who may include what" in docs/architecture.md.

The doc is the one home of the arrows; this script only reads it. Checks, from --root (the
repository root by default):
  * every `#include "X/..."` of every .h/.cpp file under src/: X is the file's own room, `base`,
    or named by the file's row (a room, or one header `room/file.h`). A row keyed `room/name`
    (e.g. `app/probe`) governs src/room/name.h and src/room/name.cpp instead of its room's row;
    a row keyed by a plain name that is a file of src/ (`main`) governs src/main.cpp;
  * every file under test/<room>/ (the unit and component tests of a room): it may include what
    src/<room> may, where a listed header counts for its whole room (a test may build the real
    thing its room stands on), plus `fakes/`. test/fakes/ and test/component/ (the shared
    fakes and the cross-room component tests) may include any room;
  * with --complete (the real tree): the rooms of the table, the folders of src/ and the rooms
    the top CMakeLists.txt adds are one set, and test/CMakeLists.txt adds a test folder for
    every room.
An include of a folder that is not a room (`fakes/` from src/, a typo) is a violation too.

Exit 0 when everything keeps to the table, 1 with one line per violation (path:line: why),
2 when the doc's table cannot be read. --expect PATH:LINE (repeatable) inverts the verdict
for a fixture: exit 0 only when the violations found are exactly those, so the negative test
fails if the checker stops seeing a forbidden include, and if it starts seeing others.
"""
import argparse
import os
import re
import sys

HEADING = "## Who may include what"
INCLUDE = re.compile(r'^\s*#\s*include\s*"([A-Za-z0-9_]+)/([^"]+)"')
TICKED = re.compile(r"`([^`]+)`")
SOURCE_EXT = (".h", ".cpp")
# test/ folders that are not a room's tests: they may include any room.
TEST_ANY = {"fakes", "component"}
# test/ folders that hold data, not code (test/testdata/rooms_forbidden is the negative fixture).
TEST_DATA = {"golden", "testdata"}


class TableError(Exception):
    pass


def read_table(doc_path):
    """Returns {key: set of allowed entries}; an entry is a room or a `room/file.h`."""
    with open(doc_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    try:
        start = lines.index(HEADING)
    except ValueError:
        raise TableError(f"{doc_path}: no heading {HEADING!r}")
    rows = {}
    in_table = False
    for n, line in enumerate(lines[start + 1:], start + 2):
        if line.startswith("## "):
            break
        if not line.startswith("|"):
            if in_table:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not in_table:
            in_table = True  # the header row
            continue
        if set(cells[0]) <= set("-: "):
            continue  # the separator row
        if len(cells) < 2:
            raise TableError(f"{doc_path}:{n}: a row needs a key and its includes")
        key = TICKED.fullmatch(cells[0])
        if not key:
            raise TableError(f"{doc_path}:{n}: the key {cells[0]!r} is not in backticks")
        # A parenthesis says why; only the ticked names outside one are includes.
        allowed = set(TICKED.findall(re.sub(r"\([^)]*\)", "", cells[1])))
        if not allowed and cells[1] != "nothing":
            raise TableError(f"{doc_path}:{n}: write the includes in backticks, or `nothing`")
        if key.group(1) in rows:
            raise TableError(f"{doc_path}:{n}: {key.group(1)} has two rows")
        rows[key.group(1)] = allowed
    if not rows:
        raise TableError(f"{doc_path}: no table under {HEADING!r}")
    return rows


def sources(top):
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(SOURCE_EXT):
                yield os.path.join(dirpath, name)


def includes(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1), m.group(1) + "/" + m.group(2)


def permits(allowed, folder, header, whole_rooms):
    if header in allowed or folder in allowed:
        return True
    return whole_rooms and any(a.split("/", 1)[0] == folder for a in allowed)


def is_file_row(root, key):
    return any(os.path.isfile(os.path.join(root, "src", key + ext)) for ext in SOURCE_EXT)


def check(root, table, complete):
    # A plain key is a room unless it names a file of src/ itself (`main`).
    rooms = {k for k in table if "/" not in k and not is_file_row(root, k)}
    problems = []

    def rel(path):
        return os.path.relpath(path, root)

    src = os.path.join(root, "src")
    for path in sources(src):
        parts = os.path.relpath(path, src).split(os.sep)
        stem = os.path.splitext(parts[-1])[0]
        if len(parts) == 1:
            key = stem  # a file of src/ itself: main.cpp
            own = None
        elif len(parts) == 2 and parts[0] in rooms:
            own = parts[0]
            key = own + "/" + stem if own + "/" + stem in table else own
        else:
            problems.append((rel(path), 0, f"{parts[0]}/ is not a room of {HEADING!r}"))
            continue
        if key not in table:
            problems.append((rel(path), 0, f"no row {key!r} in {HEADING!r}"))
            continue
        for n, folder, header in includes(path):
            if folder not in rooms:
                problems.append((rel(path), n, f"{header}: {folder}/ is not a room"))
            elif folder not in (own, "base") and not permits(table[key], folder, header, False):
                problems.append((rel(path), n, f"{key} may not include {header}"))

    test = os.path.join(root, "test")
    if os.path.isdir(test):
        for path in sources(test):
            parts = os.path.relpath(path, test).split(os.sep)
            if len(parts) < 2 or parts[0] in TEST_ANY | TEST_DATA:
                continue
            own = parts[0]
            if own not in rooms:
                problems.append((rel(path), 0, f"test/{own}/ is not a room's tests"))
                continue
            for n, folder, header in includes(path):
                if folder == "fakes" or folder in (own, "base"):
                    continue
                if folder not in rooms:
                    problems.append((rel(path), n, f"{header}: {folder}/ is not a room"))
                elif not permits(table[own], folder, header, True):
                    problems.append((rel(path), n, f"tests of {own} may not include {header}"))

    if complete:
        problems += check_complete(root, table, rooms)
    return problems


def check_complete(root, table, rooms):
    problems = []
    src = os.path.join(root, "src")
    folders = {d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))}
    for d in sorted(folders - rooms):
        problems.append((f"src/{d}", 0, f"a folder of src/ with no row in {HEADING!r}"))
    for key in sorted(table):
        room = key.split("/", 1)[0]
        if "/" in key:
            if room not in rooms or not any(
                    os.path.exists(os.path.join(src, key + ext)) for ext in SOURCE_EXT):
                problems.append(("docs/architecture.md", 0, f"row {key!r} names no file of src/"))
        elif key in rooms and not os.path.isdir(os.path.join(src, key)):
            problems.append(("docs/architecture.md", 0, f"row {key!r} names no room of src/"))
        for entry in sorted(table[key]):
            folder = entry.split("/", 1)[0]
            if folder not in rooms or ("/" in entry and
                                       not os.path.exists(os.path.join(src, entry))):
                problems.append(("docs/architecture.md", 0, f"row {key!r}: {entry} does not exist"))
    for cmake, pattern, what in (
            ("CMakeLists.txt", r"foreach\(dir ([a-z_ ]+)\)\s*\n\s*add_subdirectory\(src/", "src"),
            ("test/CMakeLists.txt", r"foreach\(dir ([a-z_ ]+)\)\s*\n\s*add_subdirectory\(",
             "test")):
        with open(os.path.join(root, cmake), encoding="utf-8") as f:
            m = re.search(pattern, f.read())
        if not m:
            problems.append((cmake, 0, f"no `foreach(dir ...) add_subdirectory` of the {what} rooms"))
            continue
        listed = set(m.group(1).split())
        expected = rooms | (TEST_ANY - {"fakes"} if what == "test" else set())
        for d in sorted(expected - listed):
            problems.append((cmake, 0, f"{d} is a room but is not added"))
        for d in sorted(listed - expected):
            problems.append((cmake, 0, f"{d} is added but is not a room of the table"))
    return problems


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", default=os.path.dirname(here), help="the tree to check")
    p.add_argument("--doc", help="the table's doc (default: ROOT/docs/architecture.md)")
    p.add_argument("--complete", action="store_true",
                   help="also check the rooms against src/ and the CMakeLists")
    p.add_argument("--expect", action="append", default=[], metavar="PATH:LINE",
                   help="a fixture: pass only when exactly these violations are found")
    args = p.parse_args()
    doc = args.doc or os.path.join(args.root, "docs", "architecture.md")
    try:
        table = read_table(doc)
    except (TableError, OSError) as e:
        print(f"check_rooms: {e}", file=sys.stderr)
        return 2
    problems = check(args.root, table, args.complete)
    for path, line, why in problems:
        print(f"{path}:{line}: {why}")
    if args.expect:
        found = {f"{path}:{line}" for path, line, _ in problems}
        expected = set(args.expect)
        for miss in sorted(expected - found):
            print(f"check_rooms: expected a violation at {miss}, found none", file=sys.stderr)
        if found != expected:
            return 1
        print(f"check_rooms: the fixture fails as expected ({len(found)} violation(s))")
        return 0
    if not problems:
        print(f"check_rooms: every include keeps to {HEADING!r} ({len(table)} rows)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
