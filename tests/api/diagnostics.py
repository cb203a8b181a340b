"""What a test server leaves behind when one of its processes fails to end or crashes: the
thread stacks of a child that does not exit at a stop, and the backtrace of a core file.
Failures of this kind are rare and depend on timing; the stacks in the test's failure text are
what makes one diagnosable after the fact."""
import os
import re
import shutil
import subprocess

GDB = shutil.which("gdb")
GDB_TIMEOUT = 60
FRAME_RE = re.compile(r"^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+)")


def children_of(pid):
    """The pids whose parent is pid."""
    kids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[1] == str(pid):
            kids.append(int(name))
    return kids


def command_of(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return "?"


def _gdb(args):
    if not GDB:
        return "(gdb is not installed: no stacks)"
    try:
        done = subprocess.run([GDB, "-batch", "-nx", "-ex", "set pagination off",
                               "-ex", "thread apply all bt 40"] + args,
                              capture_output=True, text=True, timeout=GDB_TIMEOUT)
        return done.stdout
    except (OSError, subprocess.SubprocessError) as e:
        return f"(gdb failed: {e!r})"


def condense(gdb_output):
    """gdb's `thread apply all bt` as one line per distinct stack (function names only, innermost
    first), with how many threads share it; the crashing thread of a core comes first."""
    stacks, order, current = {}, [], None
    for line in gdb_output.splitlines():
        if line.startswith("Thread "):
            current = []
            order.append(current)
        elif current is not None:
            m = FRAME_RE.match(line)
            if m:
                current.append(m.group(1))
    for frames in order:
        key = " < ".join(frames) or "(no frames)"
        stacks[key] = stacks.get(key, 0) + 1
    if not stacks:
        return [l for l in gdb_output.splitlines() if l.strip()][-20:]
    return [f"{n} thread(s): {key}" for key, n in stacks.items()]


def live_stacks(pid):
    """The condensed stacks of a running process (it is stopped for the moment gdb looks)."""
    return condense(_gdb(["-p", str(pid)]))


def core_stacks(executable, core):
    return condense(_gdb([str(executable), str(core)]))


def core_files(directory):
    try:
        return sorted(p for p in directory.iterdir() if p.name.startswith("core"))
    except OSError:
        return []
