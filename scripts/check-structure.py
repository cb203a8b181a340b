#!/usr/bin/env python3
"""Structure guard: no include cycle among the core's files, no production function longer
than MAX_LINES lines (from its signature to its closing brace).

The include graph joins a file's .c and .h into one node (jr_entries.c and jr_entries.h are
"jr_entries"): a cycle means two parts each need the other, and one of them should hold
what both use. Functions are found by the project's layout: a definition starts at column 0
and its body's braces sit alone at column 0."""
import glob
import os
import re
import sys

MAX_LINES = 60
CORE = "mod_journal/core"
CORE_DIRS = [CORE, f"{CORE}/ops"]
PRODUCTION = ["mod_journal/*.c", "mod_journal/core/*.c", "mod_journal/core/ops/*.c", "tools/*.c",
              "workers/*.c"]


def include_graph():
    graph = {}
    headers = {os.path.basename(h) for d in CORE_DIRS for h in glob.glob(f"{d}/*.h")}
    for path in (p for d in CORE_DIRS for p in glob.glob(f"{d}/*.[ch]")):
        node = os.path.basename(path).rsplit(".", 1)[0]
        with open(path, encoding="utf-8") as f:
            for inc in re.findall(r'^#include "(jr_\w+)\.h"', f.read(), re.M):
                if inc != node and f"{inc}.h" in headers:
                    graph.setdefault(node, set()).add(inc)
    return graph


def cycle_from(graph, start):
    """A path start -> ... -> start, or None."""
    stack, seen = [(start, [start])], set()
    while stack:
        node, path = stack.pop()
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                return path + [start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, path + [nxt]))
    return None


def long_functions():
    for pattern in PRODUCTION:
        for path in sorted(glob.glob(pattern)):
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            for i, line in enumerate(lines[:-1]):
                if not (re.search(r"\)\s*$", line) and lines[i + 1] == "{"):
                    continue
                # the signature may span lines: it starts at the last line at column 0
                start = i
                while start > 0 and re.match(r"^\s", lines[start]):
                    start -= 1
                if not re.match(r"^[a-z]", lines[start]):
                    continue
                end = i + 1
                while end < len(lines) and lines[end] != "}":
                    end += 1
                if end - start + 1 > MAX_LINES:
                    yield path, start + 1, end - start + 1, lines[start].strip()


def main():
    # Paths are the repository's, wherever the guard is run from.
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    bad = 0
    graph, reported = include_graph(), set()
    if not graph:
        print(f"structure: no includes found under {CORE}", file=sys.stderr)
        return 1
    for node in sorted(graph):
        path = cycle_from(graph, node)
        if path and frozenset(path) not in reported:
            reported.add(frozenset(path))
            print("structure: include cycle: " + " -> ".join(path), file=sys.stderr)
            bad += 1
    for path, line, n, sig in long_functions():
        print(f"structure: {path}:{line}: {n} lines (at most {MAX_LINES}): {sig}",
              file=sys.stderr)
        bad += 1
    if bad:
        return 1
    print(f"structure: no include cycle among {len(graph)} core parts, "
          f"no function over {MAX_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
