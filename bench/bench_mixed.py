#!/usr/bin/python3
"""make bench-mixed: the mixed load, and the memory of the httpd tree while it runs.

Seeds BENCH_ENTRIES (default 200,000) entries as bench_search.py does, then runs wrk with
BENCH_MIXED_CONNECTIONS (64) connections for BENCH_MIXED_DURATION (120s): half of the
requests GET /api/v1/entries?limit=50, a quarter the same with a search, a quarter
POST /api/v1/entries. The memory of httpd's parent and children (RSS and PSS, from
/proc/PID/smaps_rollup; tests/api/memtree.py) is printed at start, after a warm-up, at its
peak during the load and after it. BENCH_MIXED_CONF adds directives (an A/B of settings);
BENCH_BUILDS="label=build_dir,..." compares module builds as bench_writes.py does, each on its
own server and database, in BENCH_MIXED_ROUNDS (1) interleaved rounds; BENCH_MIXED_CONF_<label>
adds directives to one of them (two labels on the same build compare settings). Error answers and
socket errors (wrk's timeout is 2 s) fail the benchmark, after the figures. Each server also
logs every request's own time (%D) during the measured rounds, and the figures are printed by
request type (list, search, create): where wrk's latency includes the wait for a thread or a
turn, these do not, and the two together say where a tail comes from.
"""

import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402
import bench_search  # noqa: E402
import bench_writes  # noqa: E402  (its BENCH_BUILDS)
from bench import harness  # noqa: E402
import memtree  # noqa: E402  (tests/api, on the path through bench)

ENTRIES = int(os.environ.get("BENCH_ENTRIES", "200000"))
CONNECTIONS = int(os.environ.get("BENCH_MIXED_CONNECTIONS", "64"))
DURATION = os.environ.get("BENCH_MIXED_DURATION", "120s")
WARMUP = os.environ.get("BENCH_MIXED_WARMUP", "10s")
ROUNDS = int(os.environ.get("BENCH_MIXED_ROUNDS", "1"))
EXTRA = os.environ.get("BENCH_MIXED_CONF", "").replace("\\n", "\n")

# Half lists, a quarter searches (a surname: about one entry in 60 matches), a quarter writes.
LUA = """
local key = "%(key)s"
local list = "/api/v1/entries?limit=50"
local search = "/api/v1/entries?limit=50&search=Okafor"
local body = '{"student_name": "Mixed Writer", "group_id": %(group)d, ' ..
             '"description": "Lesson notes written under the mixed load: ratio and a quiz."}'
local n = 0
request = function()
   n = n + 1
   local k = n %% 4
   if k == 0 or k == 2 then
      return wrk.format("GET", list, {["X-Api-Key"] = key})
   elseif k == 1 then
      return wrk.format("GET", search, {["X-Api-Key"] = key})
   end
   return wrk.format("POST", "/api/v1/entries",
                     {["X-Api-Key"] = key, ["Content-Type"] = "application/json"}, body)
end
"""


# The server's own time of each request, by method and path (relative to the ServerRoot).
TIMES_CONF = 'LogFormat "%m %U%q %D" mixedtimes\nCustomLog logs/mixed-times.log mixedtimes\n'


def request_kind(method, target):
    if method == "POST":
        return "create"
    return "search" if "search=" in target else "list"


def server_times(srv, keep):
    """Per kind, the server times (ms) logged since the last call; kept only if keep."""
    log = srv.log_dir / "mixed-times.log"
    kinds = {}
    if log.exists():
        for line in log.read_text().splitlines():
            parts = line.split()
            if len(parts) == 3 and keep:
                kinds.setdefault(request_kind(parts[0], parts[1]), []).append(
                    int(parts[2]) / 1000.0)
        log.write_text("")  # httpd appends (O_APPEND): the next round starts empty
    return kinds


def wrk(srv, script, duration):
    cmd = ["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{duration}", "--latency", "-s", str(script),
           srv.base_url + "/"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}

    def pct(p):
        m = re.search(rf"{p}%\s+([\d.]+)(us|ms|s)", out)
        return float(m.group(1)) * scale[m.group(2)]

    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    kinds = {"error answers": int(non2xx.group(1)) if non2xx else 0}
    if sock:
        kinds.update(zip(("connect", "read", "write", "timeout (2 s)"), map(int, sock.groups())))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    return {"rps": rps, "p50": pct(50), "p99": pct(99), "errors": kinds}


class Sampler(threading.Thread):
    """Samples the tree every second; keeps the sample with the largest PSS."""

    def __init__(self, root, peak):
        super().__init__(daemon=True)
        self.root, self.peak, self.done = root, peak, threading.Event()

    def run(self):
        while not self.done.wait(1.0):
            snap = memtree.sample(self.root)
            if memtree.total(snap, "Pss") > memtree.total(self.peak, "Pss"):
                self.peak = snap


def start(label, build_dir):
    """A server running build_dir's module, seeded, with a reading and writing key."""
    harness.MODULE = build_dir / "mod_journal.so"
    harness.ADMIN_CLI = build_dir / "journal-admin"
    own = os.environ.get(f"BENCH_MIXED_CONF_{label}", "").replace("\\n", "\n")
    srv = harness.Server(extra_conf=bench.EXTRA_CONF + EXTRA + "\n" + own + "\n" + TIMES_CONF,
                         label=f"bench-mixed-{label}")
    s = {"label": label, "srv": srv, "runs": [], "errors": {}, "peak": {}, "mem": {}}
    srv.start()
    s["mem"]["start"] = memtree.sample(srv.pid)
    branch = srv.create_branch()
    group = srv.create_group(branch["id"])
    key = srv.create_api_key(["read", "write"], 10000000, name="bench-mixed")
    bench_search.seed(srv, group["id"], branch["id"], ENTRIES)
    s["script"] = Path(tempfile.mkstemp(prefix="bench-mixed-", suffix=".lua")[1])
    s["script"].write_text(LUA % {"key": key, "group": group["id"]})
    return s


def run(s, duration, measured=True):
    srv = s["srv"]
    sampler = Sampler(srv.pid, s["peak"])
    sampler.start()
    res = wrk(srv, s["script"], duration)
    sampler.done.set()
    sampler.join()
    for kind, n in res["errors"].items():
        s["errors"][kind] = s["errors"].get(kind, 0) + n
    for kind, times in server_times(srv, measured).items():
        s.setdefault("times", {}).setdefault(kind, []).extend(times)
    if measured:
        s["peak"] = sampler.peak
        s["runs"].append(res)
    else:
        s["mem"]["warmed up"] = memtree.sample(srv.pid)


def report(servers):
    mb = lambda snap, f: memtree.total(snap, f) / 1024  # noqa: E731
    for s in servers:
        srv = s["srv"]
        print(f"\n{s['label']}:")
        s["mem"]["peak (load)"] = s["peak"]
        s["mem"]["after"] = memtree.sample(srv.pid)
        for when, snap in s["mem"].items():
            print(f"  {when:<12} {memtree.describe(snap, srv.pid)}")
    print(f"\n  {'build':<8} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'RSS MB':>7} {'PSS MB':>7}"
          f"  {'req/s of rounds':<30} errors")
    failed = 0
    for s in servers:
        runs = s["runs"]
        errors = sum(s["errors"].values())
        rounds = ", ".join(f"{r['rps']:.0f}" for r in runs)
        kinds = ", ".join(f"{k} {n}" for k, n in s["errors"].items() if n)
        print(f"  {s['label']:<8} {statistics.median(r['rps'] for r in runs):>8.0f} "
              f"{statistics.median(r['p50'] for r in runs):>8.2f} "
              f"{statistics.median(r['p99'] for r in runs):>8.2f} "
              f"{mb(s['peak'], 'Rss'):>7.1f} {mb(s['peak'], 'Pss'):>7.1f}  "
              f"{rounds:<30} {errors}" + (f" ({kinds})" if errors else ""))
        failed |= errors > 0
        problems = s["srv"].new_log_problems()
        if problems:
            print("error log problems:\n  " + "\n  ".join(problems))
            failed = 1
    print("  (RSS and PSS: the httpd tree at the peak of its PSS during the load; aim: 96 MB)")
    print(f"\n  server time by request (%D, ms)\n  {'build':<8} {'request':<8} {'n':>8} "
          f"{'p50':>8} {'p90':>8} {'p99':>8} {'max':>8}")
    for s in servers:
        for kind, times in sorted(s.get("times", {}).items()):
            times.sort()
            pick = lambda q: times[min(len(times) - 1, int(len(times) * q))]  # noqa: E731
            print(f"  {s['label']:<8} {kind:<8} {len(times):>8} {pick(0.5):>8.2f} "
                  f"{pick(0.9):>8.2f} {pick(0.99):>8.2f} {times[-1]:>8.1f}")
    return failed


def main():
    servers = []
    try:
        for label, build_dir in bench_writes.builds():
            servers.append(start(label, build_dir))
        print(f"mixed load: db={harness.DB_KIND}, {ENTRIES} entries, {CONNECTIONS} connections, "
              f"{ROUNDS} interleaved round(s) of {DURATION} after a warm-up of {WARMUP}; "
              "50% list, 25% search, 25% create", flush=True)
        for s in servers:
            run(s, WARMUP, measured=False)
        for _ in range(ROUNDS):
            for s in servers:
                run(s, DURATION)
        return report(servers)
    finally:
        for s in servers:
            if "script" in s:
                s["script"].unlink()
            s["srv"].stop()
            s["srv"].cleanup()


if __name__ == "__main__":
    sys.exit(main())
