#!/usr/bin/python3
"""make bench-worker: journal-worker's throughput, wake-up latency and memory, on SQLite and
on PostgreSQL (a throwaway cluster), against the fake LLM of the test suite.

  throughput  N AI checks of entries queued in one transaction while the workers are idle;
              jobs per second from that commit until the last record is done
              - a zero-latency fake, one worker (concurrency 4 and 16)
              - a fake that answers after 200 ms, one worker at concurrency 16
  wake-up     an idle worker; a recheck through the API; the time from the API's answer (the
              job is committed) to the fake receiving the request. p50/p95/max over samples
              spaced at random, so the worker is asleep each time
  RSS         the worker's resident memory after the runs (VmRSS) and its peak (VmHWM)

Environment: BENCH_DBS (sqlite,pgsql), BENCH_JOBS (3000), BENCH_SLOW_JOBS (800),
BENCH_SAMPLES (60).
"""

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOP / "tests" / "api"))
import harness  # noqa: E402
import worker_support as ws  # noqa: E402

DBS = os.environ.get("BENCH_DBS", "sqlite,pgsql").split(",")
JOBS = int(os.environ.get("BENCH_JOBS", "3000"))
SLOW_JOBS = int(os.environ.get("BENCH_SLOW_JOBS", "800"))
SAMPLES = int(os.environ.get("BENCH_SAMPLES", "60"))
NOW = "2026-01-01T00:00:00Z"


def queue_jobs(srv, group, n, tag):
    """n entries with an open AI check each, committed in one transaction."""
    branch = group["branch_id"]
    if srv.db_kind == "sqlite":  # no generate_series without an extension
        ents = (f"WITH RECURSIVE k(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM k WHERE v < {n})"
                f" INSERT INTO entries (student_name, group_id, branch_id, description,"
                f" ai_status, created_at, updated_at) SELECT 'S', {group['id']}, {branch},"
                f" '{tag} ' || v, 'pending', '{NOW}', '{NOW}' FROM k")
    else:
        ents = (f"INSERT INTO entries (student_name, group_id, branch_id, description, ai_status,"
                f" created_at, updated_at) SELECT 'S', {group['id']}, {branch},"
                f" '{tag} ' || v, 'pending', '{NOW}', '{NOW}' FROM generate_series(1, {n}) v")
    jobs = (f"INSERT INTO ai_jobs (entity_type, entity_id, branch_id, status, attempts,"
            f" created_at, updated_at) SELECT 'entry', id, branch_id, 'pending', 0, '{NOW}',"
            f" '{NOW}' FROM entries WHERE description LIKE '{tag} %'")
    if srv.db_kind == "sqlite":
        ws.execute(srv, ents, jobs)  # one transaction
    else:
        ws.execute(srv, "BEGIN", ents, jobs, "COMMIT")


def done_count(srv, tag):
    return int(ws.rows(srv, f"SELECT COUNT(*) FROM entries WHERE description LIKE 'AI: {tag} %'"
                            f" AND ai_status = 'done'")[0][0])


def throughput(srv, group, n, tag):
    t0 = time.monotonic()
    queue_jobs(srv, group, n, tag)
    ws.wait_for(lambda: done_count(srv, tag) == n, timeout=600, interval=0.02,
                what=f"{n} jobs done")
    return n / (time.monotonic() - t0)


def wakeup(srv, fake, group, samples):
    lat = []
    for i in range(samples):
        text = f"wake {ws.harness.uniq('w')}"
        entry = ws.new_entry(srv, group["id"], text)
        ws.wait_status(lambda e: ws.get_entry(srv, e), entry["id"], "done")
        time.sleep(random.uniform(0.05, 0.3))
        r = srv.api("POST", f"/api/entries/{entry['id']}/ai/recheck", token=srv.admin_token)
        t_committed = time.time()
        assert r.status_code == 200, r.text
        ws.wait_for(lambda: fake.count("AI: " + text) >= 1, timeout=30, interval=0.01,
                    what="the recheck's request")
        req = [q for q in fake.requests() if ws.user_message(q) == "AI: " + text][0]
        lat.append((req["t"] - t_committed) * 1000)
    lat.sort()
    return lat


def rss(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                k, v = line.split(":")
                out[k] = int(v.split()[0]) / 1024
    return out


def run_db(kind, results):
    harness.DB_KIND = kind
    print(f"--- {kind}", flush=True)
    row = {}
    for label, latency, conc, n in (("zero-latency, concurrency 4", 0, 4, JOBS),
                                    ("zero-latency, concurrency 16", 0, 16, JOBS),
                                    ("200 ms fake, concurrency 16", 200, 16, SLOW_JOBS)):
        fake = ws.FakeLLM(latency_ms=latency)
        srv = ws.Server(label="bench-worker", extra_conf="LogLevel warn\n")
        env = ws.WorkerEnv(srv, fake, concurrency=conc, timeout=30, log_level="warn")
        try:
            env.start(1)
            group = ws.new_group(srv)
            rate = throughput(srv, group, n, "bench")
            row[label] = rate
            print(f"  {label}: {n} jobs, {rate:.0f} jobs/s", flush=True)
            if latency == 0 and conc == 4:
                lat = wakeup(srv, fake, group, SAMPLES)
                row["wake"] = lat
                print(f"  wake-up latency over {len(lat)} samples: p50"
                      f" {statistics.median(lat):.1f} ms, p95 {lat[int(len(lat) * 0.95) - 1]:.1f}"
                      f" ms, max {lat[-1]:.1f} ms", flush=True)
            mem = rss(env.pids()[0])
            row.setdefault("rss", []).append(mem)
            print(f"  worker RSS {mem['VmRSS']:.1f} MB (peak {mem['VmHWM']:.1f} MB)", flush=True)
        finally:
            try:
                srv.stop()  # httpd stops its worker
            finally:
                srv.cleanup()
                fake.stop()
    results[kind] = row


def main():
    results = {}
    pg_dir = None
    try:
        for kind in DBS:
            if kind == "pgsql" and not harness.PG_PORT:
                pg_dir = Path(tempfile.mkdtemp(prefix="jr-bench-pg-"))
                os.chmod(pg_dir, 0o755)
                port = str(harness.free_port())
                subprocess.run(["sh", str(TOP / "scripts" / "pg-cluster.sh"), "start",
                                str(pg_dir / "data"), port], check=True)
                harness.PG_PORT = port
            run_db(kind, results)
    finally:
        if pg_dir:
            subprocess.run(["sh", str(TOP / "scripts" / "pg-cluster.sh"), "stop",
                            str(pg_dir / "data")])
            shutil.rmtree(pg_dir, ignore_errors=True)
    print("\n=== summary (one worker)")
    print("| database | zero-latency c=4 | zero-latency c=16 | 200 ms c=16 | wake-up p50 / p95 |"
          " RSS (peak) |")
    print("|---|---|---|---|---|---|")
    for kind, row in results.items():
        lat = row["wake"]
        peak = max(m["VmHWM"] for m in row["rss"])
        cur = max(m["VmRSS"] for m in row["rss"])
        print(f"| {kind} | {row['zero-latency, concurrency 4']:.0f}/s |"
              f" {row['zero-latency, concurrency 16']:.0f}/s |"
              f" {row['200 ms fake, concurrency 16']:.0f}/s |"
              f" {statistics.median(lat):.1f} / {lat[int(len(lat) * 0.95) - 1]:.1f} ms |"
              f" {cur:.1f} MB ({peak:.1f} MB) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
