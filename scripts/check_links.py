#!/usr/bin/env python3
"""Every relative link and anchor in the docs resolves.

Checks, from the repository root:
  * every Markdown link `[text](target)` and reference definition `[id]: target` in every
    Markdown file of the repository (README.md, CONTRIBUTING.md, docs/*.md, the READMEs of
    e2e/, deploy/, model/, ...) whose target is relative (not http:, https:, mailto:): the file
    or directory exists, and a `#anchor` names a heading (GitHub's slugs, `-1`, `-2` for
    repeats) or an `<a id|name="...">` of the target file;
  * every `PATH.md#anchor` written in code, manifests and scripts (comments that point at a
    section, e.g. `docs/runbooks.md#scraping`, and the rules' `runbook_url`s
    `.../blob/main/docs/runbooks.md#leaseholdnoleader`): the file exists and holds the anchor.
  * every source file a comment names (C++ `//`, and `#` comments of Python, shell, CMake,
    YAML, Promela): a repository path such as `src/http/listener.h` or `e2e/lib/judge.py`
    exists (from the root, or from the commenting file's folder), and a bare C++ file name
    such as `listener.h` is the name of some file of the repository (GENERATED lists the ones
    the build writes; an all-capitals stem such as `NAME.cpp` is a placeholder);
  * no line of code, manifests and scripts (comments and docstrings included) names an issue
    (`issue 21`, `Issues 3`, `#21`): a newcomer cannot read it, and the git log keeps it.
    `PKCS#1`, `# 1.` and `$#` are not issue numbers.
Links inside fenced code blocks and inline code are not links and are skipped.

Exit 0 when everything resolves, 1 with one line per broken link (file:line: target: why).
`--self-test` checks the checker on a scratch tree: good links pass, and each kind of breakage
(missing file, missing anchor, missing anchor in the same file, missing anchor from code) fails.
"""
import os
import re
import subprocess
import sys
import tempfile

# Where code and manifests may point at a doc section by path#anchor.
CODE_DIRS = ["src", "deploy", "scripts", "e2e", "test", "bench", "model", "fuzz", "docs"]
CODE_EXT = (".cpp", ".h", ".py", ".sh", ".yaml", ".yml", ".txt", ".cmake", ".tpl", ".pml")

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`+[^`]*`+")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(\s|$)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
# path.md#anchor in code: a repository-relative path (or a GitHub blob URL of this repository).
CODE_REF = re.compile(r"(?:https://github\.com/[\w.-]+/[\w.-]+/blob/[\w.-]+/)?"
                      r"((?:[\w.-]+/)*[\w.-]+\.md)#([\w-]+)")


# A repository path in a comment, and a bare C++ file name (not a path, not <system.h>).
SOURCE_PATH = re.compile(r"(?<![\w./-])((?:src|test|e2e|scripts|deploy|bench|model|fuzz|docs)/"
                         r"[\w./-]*[\w-]\.(?:cpp|h|py|sh|yaml|yml|pml|txt|json|cmake|tpl))\b")
SOURCE_BASE = re.compile(r"(?<![\w./<-])([\w-]+\.(?:cpp|h))\b")
# An issue number: "issue 21", "Issues #3", or GitHub's "#21" (not PKCS#1, `# 1.`, `$#1`).
ISSUE_REF = re.compile(r"\b[Ii]ssues?\s*#?\s*\d+\b|(?<![\w&#$])#\d+\b")
# Files the build writes, which comments may name: name -> where it is made.
GENERATED = {"test_paths.h": "test/fakes/CMakeLists.txt"}


def comment_of(path, line):
    """The comment part of a line of code (from `//` in C++, from `#` elsewhere), or ""."""
    mark = "//" if path.endswith((".cpp", ".h")) else "#"
    i = line.find(mark)
    return line[i:] if i >= 0 else ""


def slug(text):
    """GitHub's heading anchor: lower case, drop punctuation but '-' and '_', spaces to '-'."""
    text = re.sub(r"`([^`]*)`", r"\1", text)  # inline code keeps its text
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags vanish
    text = text.strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
    return text.replace(" ", "-")


def prose_lines(path):
    """(line number, line) outside fenced code blocks."""
    fenced = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m:
                if fenced is None:
                    fenced = m.group(1)
                elif m.group(1) == fenced:
                    fenced = None
                continue
            if fenced is None:
                yield n, line.rstrip("\n")


_anchor_cache = {}


def anchors(path):
    path = os.path.normpath(path)
    if path not in _anchor_cache:
        found, seen = set(), {}
        for _, line in prose_lines(path):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                k = seen.get(base, 0)
                seen[base] = k + 1
                found.add(base if k == 0 else f"{base}-{k}")
            for a in HTML_ANCHOR.findall(line):
                found.add(a)
        _anchor_cache[path] = found
    return _anchor_cache[path]


def check_target(src, target, root):
    """None if `target`, written in file `src`, resolves; else why not."""
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # http:, https:, mailto:, ...
        return None
    path, _, anchor = target.partition("#")
    if path:
        base = root if path.startswith("/") else os.path.dirname(src)
        full = os.path.normpath(os.path.join(base, path.lstrip("/")))
        if not os.path.exists(full):
            return f"no such file {os.path.relpath(full, root)}"
    else:
        full = src
    if anchor:
        if not full.endswith(".md") or os.path.isdir(full):
            return None  # anchors into source files (#L12) are GitHub's, not checked
        if anchor not in anchors(full):
            return f"no heading with anchor #{anchor} in {os.path.relpath(full, root)}"
    return None


def tracked(root):
    """The repository's files (tracked, or new and not ignored), relative; None outside git."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                              "--exclude-standard"], check=True, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], capture_output=True,
                         text=True).stdout.strip()
    if os.path.realpath(top) != os.path.realpath(root):
        return None  # a scratch tree inside some other checkout (the self-test)
    return [n for n in out.stdout.split("\n") if n and os.path.exists(os.path.join(root, n))]


def all_files(root):
    names = tracked(root)
    if names is None:
        names = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root)
                 for f in fs]
    return sorted(names)


def md_files(root):
    return [os.path.join(root, n) for n in all_files(root) if n.endswith(".md")]


def code_files(root):
    return [os.path.join(root, n) for n in all_files(root)
            if n.split("/")[0] in CODE_DIRS and n.endswith(CODE_EXT)]


def check(root, counts=None):
    """The broken links under root, one line each; counts (a dict) gets what was checked."""
    root = os.path.abspath(root)
    errors = []
    counts = {} if counts is None else counts
    counts.update(md=0, links=0, code_refs=0, source_refs=0, code_lines=0)
    names = all_files(root)
    bases = {os.path.basename(n) for n in names} | set(GENERATED)
    for md in md_files(root):
        counts["md"] += 1
        for n, line in prose_lines(md):
            targets = [m.group(1) for m in REFDEF.finditer(line)]
            targets += [m.group(1) for m in LINK.finditer(INLINE_CODE.sub("", line))]
            counts["links"] += len(targets)
            for t in targets:
                why = check_target(md, t, root)
                if why:
                    errors.append(f"{os.path.relpath(md, root)}:{n}: {t}: {why}")
    for f in code_files(root):
        if os.path.abspath(f) == os.path.abspath(__file__):
            continue  # this file's own examples
        try:
            text = open(f, encoding="utf-8").read()
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(text.split("\n"), 1):
            counts["code_lines"] += 1
            for m in ISSUE_REF.finditer(line):
                errors.append(f"{os.path.relpath(f, root)}:{n}: {m.group(0)}: an issue number "
                              f"(the git log keeps it; say what it stands for instead)")
            for m in CODE_REF.finditer(line):
                path, anchor = m.group(1), m.group(2)
                counts["code_refs"] += 1
                full = os.path.join(root, path)
                if not os.path.exists(full):  # relative to the file, e.g. ../README.md
                    full = os.path.join(os.path.dirname(f), path)
                why = check_target(os.path.join(root, "x"), os.path.relpath(full, root) +
                                   "#" + anchor, root)
                if why:
                    errors.append(f"{os.path.relpath(f, root)}:{n}: {m.group(0)}: {why}")
            comment = comment_of(f, line)
            for m in SOURCE_PATH.finditer(comment):
                path = m.group(1)
                counts["source_refs"] += 1
                stem = os.path.splitext(os.path.basename(path))[0]
                if stem.isupper() or os.path.exists(os.path.join(root, path)) or \
                        os.path.exists(os.path.join(os.path.dirname(f), path)):
                    continue
                errors.append(f"{os.path.relpath(f, root)}:{n}: {path}: a comment names a file "
                              f"that does not exist")
            for m in SOURCE_BASE.finditer(comment):
                base = m.group(1)
                counts["source_refs"] += 1
                if base in bases or os.path.splitext(base)[0].isupper():
                    continue
                errors.append(f"{os.path.relpath(f, root)}:{n}: {base}: a comment names a source "
                              f"file that no longer exists")
    return errors


def self_test():
    """The checker finds what it must: each case's tree, and whether it must pass."""
    good_docs = {
        "README.md": "# T\n\n## The gate: `leasehold gate -- CMD` for programs\n"
                     "## Twice\n## Twice\n"
                     "[a](docs/a.md) [b](docs/a.md#a-section) [c](#twice-1)\n"
                     "[d](https://x.invalid/y)\n"
                     "[e](#the-gate-leasehold-gate----cmd-for-programs) `[not](a link.md)`\n"
                     "```\n[in a fence](nowhere.md)\n```\n[ref]: docs/a.md#a-section\n",
        "docs/a.md": "# A\n\n## A section\n<a id=\"custom\"></a>\n"
                     "[up](../README.md#twice) [x](#custom)\n",
        "src/x.cpp": "// see docs/a.md#a-section\n",
    }
    cases = [
        ("good links", {}, 0),
        ("missing file", {"docs/a.md": good_docs["docs/a.md"] + "[gone](b.md)\n"}, 1),
        ("missing anchor in another file",
         {"README.md": good_docs["README.md"] + "[z](docs/a.md#no-such)\n"}, 1),
        ("missing anchor in the same file", {"docs/a.md": good_docs["docs/a.md"] + "[z](#nope)\n"},
         1),
        ("a repeated heading has no -2",
         {"README.md": good_docs["README.md"] + "[z](#twice-2)\n"}, 1),
        ("missing anchor from code", {"src/x.cpp": "// docs/a.md#gone\n"}, 1),
        ("a comment names a missing source path",
         {"src/x.cpp": "// see docs/a.md#a-section and src/gone.h\n"}, 1),
        ("a comment names a missing C++ file", {"src/x.cpp": "// see x.cpp, old_server.h\n"}, 1),
        ("placeholders and code outside comments pass",
         {"src/x.cpp": "#include \"y.h\"  // fuzz/NAME.cpp, <vector.h>, x.cpp\n"}, 0),
        ("an issue number in a C++ comment", {"src/x.cpp": "// as issue 21 asked\n"}, 1),
        ("an issue number in a docstring", {"e2e/x.py": "\"\"\"Issues #3: the x.\"\"\"\n"}, 1),
        ("a GitHub issue reference", {"scripts/x.sh": "echo hi  # see #12\n"}, 1),
        ("numbered steps and PKCS#1 are not issue numbers",
         {"e2e/x.py": "# 1. first\nx = '$#1'  # PKCS#1 v1.5, step 2\n"}, 0),
        ("reference definition to a missing file",
         {"README.md": good_docs["README.md"] + "[r2]: docs/none.md\n"}, 1),
    ]
    failed = 0
    for name, override, want in cases:
        with tempfile.TemporaryDirectory() as tmp:
            for rel, text in {**good_docs, **override}.items():
                os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
                with open(os.path.join(tmp, rel), "w", encoding="utf-8") as f:
                    f.write(text)
            _anchor_cache.clear()
            errors = check(tmp)
            got = 1 if errors else 0
            if got != want or (want and len(errors) != 1):
                failed += 1
                print(f"self-test FAILED: {name}: want {want} error(s), got {errors}")
            else:
                print(f"self-test ok: {name}" + (f" ({errors[0]})" if errors else ""))
    _anchor_cache.clear()
    return 1 if failed else 0


def main(argv):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    if argv[1:] == ["--self-test"]:
        return self_test()
    if argv[1:]:
        root = argv[1]
    counts = {}
    errors = check(root, counts)
    for e in errors:
        print(e)
    seen = (f"{counts['links']} links in {counts['md']} Markdown files, {counts['code_refs']} "
            f"PATH.md#anchor references in code, {counts['source_refs']} source files named in "
            f"comments, {counts['code_lines']} lines of code without an issue number")
    print(f"check_links: {len(errors)} broken link(s) of {seen}" if errors else
          f"check_links: every link resolves ({seen})")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
