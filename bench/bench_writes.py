#!/usr/bin/python3
"""make bench-writes: POST /api/v1/entries under wrk (bench/post.lua), at 2 and 16 connections.

BENCH_BUILDS="label=build_dir,label=build_dir" compares module builds (default: this tree's
build only): one server per build, each with its own database seeded with BENCH_ENTRIES
entries (default 200,000, by the loader of bench_search.py: varied names and texts, as the
search index holds them), and the runs interleaved (a, b, a, b, ...) so that both see the same
machine; the table shows medians over BENCH_ROUNDS rounds of BENCH_DURATION, and the load
average before and after (the machine may be shared). After the runs every
acknowledged write must be in the database: each server's new entries are counted against the
2xx answers wrk reported. Error answers (503: the database stayed busy) and socket errors
are counted and fail the benchmark, after the table.
"""

import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402
import bench_search  # noqa: E402
from bench import harness  # noqa: E402

ENTRIES = int(os.environ.get("BENCH_ENTRIES", "200000"))
CONNECTIONS = [int(c) for c in os.environ.get("BENCH_CONNECTIONS", "2,16").split(",")]
POST_LUA = Path(__file__).resolve().parent / "post.lua"


def builds():
    spec = os.environ.get("BENCH_BUILDS")
    if not spec:
        return [("this", harness.BUILD_DIR)]
    return [(label, Path(d).resolve()) for label, d in
            (item.split("=", 1) for item in spec.split(","))]


def start(label, build_dir):
    """A server running build_dir's module, with a writing key and a group."""
    harness.MODULE = build_dir / "mod_journal.so"
    harness.ADMIN_CLI = build_dir / "journal-admin"
    srv = harness.Server(extra_conf=bench.EXTRA_CONF, label=f"bench-writes-{label}")
    srv.start()
    branch = srv.create_branch()
    group = srv.create_group(branch["id"])
    bench_search.seed(srv, group["id"], branch["id"], ENTRIES)
    r = srv.api("POST", "/api/api-keys", token=srv.admin_token,
                json={"name": "bench", "scopes": ["read", "write"],
                      "rate_limit_per_min": 10000000})
    assert r.status_code == 201, r.text
    return {"label": label, "srv": srv, "key": r.json()["key"], "group": group["id"],
            "acked": 0, "errors": 0,
            "before": count(srv), "runs": {c: [] for c in CONNECTIONS}}


def count(srv):
    return harness.sql_int(srv, "SELECT COUNT(*) FROM entries")


def wrk(s, conns):
    cmd = ["wrk", "-t2", f"-c{conns}", f"-d{bench.DURATION}", "--latency", "-s", str(POST_LUA),
           s["srv"].base_url + "/api/v1/entries", "--", s["key"], str(s["group"])]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = (int(non2xx.group(1)) if non2xx else 0) + (sum(map(int, sock.groups())) if sock else 0)
    s["errors"] += errors
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}

    def pct(p):
        m = re.search(rf"{p}%\s+([\d.]+)(us|ms|s)", out)
        return float(m.group(1)) * scale[m.group(2)]

    # Requests wrk completed, less the error answers (a timeout is not among them).
    s["acked"] += int(re.search(r"(\d+) requests in", out).group(1)) - (
        int(non2xx.group(1)) if non2xx else 0)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    s["runs"][conns].append((rps, pct(50), pct(99)))


def main():
    servers = []
    try:
        for label, build_dir in builds():
            servers.append(start(label, build_dir))
        load = os.getloadavg()[0]
        print(f"POST /api/v1/entries: db={harness.DB_KIND}, {ENTRIES} entries seeded, "
              f"{bench.ROUNDS} interleaved rounds of {bench.DURATION}, wrk -t2")
        for _ in range(bench.ROUNDS):
            for conns in CONNECTIONS:
                for s in servers:
                    wrk(s, conns)
        print(f"  {'build':<8} {'conns':>5} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} "
              f"{'p99 of rounds (ms)':<30}")
        for conns in CONNECTIONS:
            for s in servers:
                runs = s["runs"][conns]
                print(f"  {s['label']:<8} {conns:>5} "
                      f"{statistics.median(r for r, _, _ in runs):>8.0f} "
                      f"{statistics.median(p for _, p, _ in runs):>8.2f} "
                      f"{statistics.median(p for _, _, p in runs):>8.2f} "
                      f"{', '.join(f'{p:.1f}' for _, _, p in runs):<30}")
        print(f"  load average (1 min): {load:.1f} before the rounds, "
              f"{os.getloadavg()[0]:.1f} after")
        failed = 0
        for s in servers:
            written = count(s["srv"]) - s["before"]
            print(f"  {s['label']}: {s['acked']} writes acknowledged, {written} new entries, "
                  f"{s['errors']} errors (error answers, socket errors, timeouts)")
            failed |= s["errors"] > 0
            if written < s["acked"]:
                print(f"  {s['label']}: acknowledged writes are missing")
                failed = 1
            failed |= bench.log_problems(s["srv"], s["label"])
        return failed
    finally:
        bench.stop_all([s["srv"] for s in servers])


if __name__ == "__main__":
    sys.exit(main())
