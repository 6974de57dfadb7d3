#!/usr/bin/env python3
"""ctest_times.py JUNIT BUILD_DIR [--top N]: what a ctest run's tests took, by label.

scripts/test.sh runs the e2e and node tiers in one `ctest -j` (--output-junit JUNIT), so the
stage table has one row for both; this prints, under it, each label's number of tests and the
sum of their times (more than the wall time when tests ran side by side), and the slowest
tests with their labels and the CTest properties that keep them apart (RESOURCE_LOCK,
RUN_SERIAL, PROCESSORS). Labels and properties come from `ctest --show-only=json-v1`.
Standard library only. Printed, never asserted (docs/building.md, "Where make test's time goes").
"""

import argparse
import json
import subprocess
import sys
import xml.etree.ElementTree as ET


def properties(build_dir):
    """{test name: {property name: value}} of every test in BUILD_DIR."""
    out = subprocess.run(["ctest", "--test-dir", build_dir, "--show-only=json-v1"],
                         capture_output=True, text=True, check=True).stdout
    return {t["name"]: {p["name"]: p["value"] for p in t.get("properties", [])}
            for t in json.loads(out)["tests"]}


def times(junit):
    """[(test name, seconds, status)] from a CTest JUnit file."""
    root = ET.parse(junit).getroot()
    return [(c.get("name"), float(c.get("time") or 0), c.get("status") or "")
            for c in root.iter("testcase")]


def keep_apart(props):
    parts = []
    locks = props.get("RESOURCE_LOCK") or []
    if locks:
        parts.append("lock " + ",".join(locks))
    if props.get("RUN_SERIAL"):
        parts.append("serial")
    if props.get("PROCESSORS", 1) != 1:
        parts.append(f"processors {props['PROCESSORS']}")
    return "; ".join(parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("junit")
    ap.add_argument("build_dir")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args(argv)
    try:
        rows = times(a.junit)
        props = properties(a.build_dir)
    except (OSError, ET.ParseError, subprocess.CalledProcessError, ValueError) as e:
        print(f"ctest_times: no times ({e})")
        return 0
    by_label = {}
    for name, secs, _ in rows:
        for label in props.get(name, {}).get("LABELS") or ["(no label)"]:
            n, total = by_label.get(label, (0, 0.0))
            by_label[label] = (n + 1, total + secs)
    for label, (n, total) in sorted(by_label.items()):
        print(f"  {label}: {n} tests, {total:.0f} s of test time")
    print(f"  the slowest {min(a.top, len(rows))}:")
    for name, secs, status in sorted(rows, key=lambda r: -r[1])[:a.top]:
        extra = keep_apart(props.get(name, {}))
        print(f"    {secs:6.0f} s  {name}{'  (' + extra + ')' if extra else ''}"
              f"{'' if status == 'run' else '  ' + status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
