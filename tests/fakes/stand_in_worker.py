#!/usr/bin/env python3
"""A stand-in for journal-worker, to test how httpd supervises the worker processes.

It accepts the worker's command line (--config FILE --instance N [--delay S]) plus its own
options, which a wrapper script puts first:

  --record DIR   where to write what it saw (required)
  --mode MODE    run   (default) wait for SIGTERM, then exit 0
                 crash exit 1 as soon as the delay is over
                 stubborn  ignore SIGTERM (the supervisor must use SIGKILL)
                 failstop  exit 3 on SIGTERM (a worker that breaks its contract)

At start it writes DIR/<pid>.json: pid, ppid, uid, gid, groups, argv, the settings file's
text, mode and owner, where stdin points, the start time and the delay. A run-mode process
that gets SIGTERM writes DIR/<pid>.exit before it exits. Every file is written atomically.
"""

import argparse
import json
import os
import signal
import sys
import time

# Under the sanitizer build httpd runs with the sanitizer runtime preloaded, and its children
# inherit it. This program is a test fake, not code of ours: run it without the runtime, whose
# leak check would report the interpreter's own allocations at exit.
if "libasan" in os.environ.get("LD_PRELOAD", ""):
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def write_atomic(path, text):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


def settings_info(path):
    try:
        st = os.stat(path)
        with open(path) as f:
            text = f.read()
        return {"text": text, "mode": st.st_mode & 0o7777, "uid": st.st_uid, "gid": st.st_gid}
    except OSError as e:
        return {"error": str(e)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--record", required=True)
    p.add_argument("--mode", default="run", choices=["run", "crash", "stubborn", "failstop"])
    p.add_argument("--config", required=True)
    p.add_argument("--instance", type=int, required=True)
    p.add_argument("--delay", type=int, default=0)
    args = p.parse_args()

    pid = os.getpid()
    stopping = []

    def on_term(signum, frame):
        stopping.append(signum)

    signal.signal(signal.SIGTERM, signal.SIG_IGN if args.mode == "stubborn" else on_term)
    record = {
        "pid": pid, "ppid": os.getppid(), "uid": os.getuid(), "gid": os.getgid(),
        "groups": os.getgroups(), "argv": sys.argv, "instance": args.instance,
        "delay": args.delay, "mode": args.mode, "started": time.time(),
        "stdin": os.readlink("/proc/self/fd/0"), "settings": settings_info(args.config),
    }
    write_atomic(os.path.join(args.record, f"{pid}.json"), json.dumps(record))
    print(f"stand-in worker {args.instance} (pid {pid}) started, mode {args.mode}",
          file=sys.stderr, flush=True)

    deadline = time.monotonic() + args.delay
    while not stopping and time.monotonic() < deadline:
        time.sleep(0.05)
    if args.mode == "crash" and not stopping:
        sys.exit(1)
    while not stopping:
        time.sleep(0.05)
    write_atomic(os.path.join(args.record, f"{pid}.exit"), json.dumps({"signal": stopping[0]}))
    sys.exit(3 if args.mode == "failstop" else 0)


if __name__ == "__main__":
    main()
