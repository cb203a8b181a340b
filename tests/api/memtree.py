"""The memory of an httpd process tree, as /proc/PID/smaps_rollup tells it.

RSS counts every resident page a process maps, shared ones (the binaries, libraries, the
scoreboard, pages the children inherited from the parent) once per process; PSS divides each
shared page among the processes that map it, so the PSS of a tree is what the tree costs the
machine. Both in KiB.
"""

import os
from pathlib import Path


def _ppid(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def tree_pids(root):
    """root and every descendant (httpd's children, the processes they started)."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                children.setdefault(_ppid(int(name)), []).append(int(name))
            except (OSError, ValueError, IndexError):
                continue
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo += children.get(pid, [])
    return pids


def rollup(pid):
    """{"Rss": kB, "Pss": kB, "Anonymous": kB, ...} of one process; {} once it has gone."""
    out = {}
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return out
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) == 3 and parts[2] == "kB":
            out[parts[0].rstrip(":")] = int(parts[1])
    return out


def sample(root):
    """{pid: rollup} for the tree of root; processes that exit meanwhile are left out."""
    snap = {}
    for pid in tree_pids(root):
        r = rollup(pid)
        if r:
            snap[pid] = r
    return snap


def total(snap, field):
    """The sum of one field over a sample, in KiB."""
    return sum(r.get(field, 0) for r in snap.values())


def describe(snap, root):
    """One line: the tree's RSS and PSS in MB, then each process's (the parent first)."""
    def mb(kb):
        return kb / 1024
    parts = [f"RSS {mb(total(snap, 'Rss')):6.1f} MB  PSS {mb(total(snap, 'Pss')):6.1f} MB  ("]
    for pid in sorted(snap, key=lambda p: (p != root, p)):
        r = snap[pid]
        role = "parent" if pid == root else str(pid)
        parts.append(f"{role} {mb(r.get('Rss', 0)):.1f}/{mb(r.get('Pss', 0)):.1f}"
                     f" anon {mb(r.get('Anonymous', 0)):.1f}; ")
    return "".join(parts).rstrip("; ") + ")"
