#!/usr/bin/python3
"""POST /api/v1/entries on PostgreSQL, measured in ways that do not depend on the machine's load.

  JOURNAL_TEST_DB=pgsql JOURNAL_TEST_PG_PORT=PORT bench/pg_write_probe.py

Starts one server on its own database (seeded with BENCH_ENTRIES entries), then
  1. sends PROBE_POSTS creates one after another with log_statement=all on that database and
     counts, per POST, the statements the server log shows (by kind and by table written) and
     the transactions (BEGIN ... COMMIT);
  2. runs wrk at BENCH_CONNECTIONS (default 16) for BENCH_DURATION while another connection
     samples pg_stat_activity every 10 ms: the share of the active backends' samples per wait
     event (CPU: active, waiting for nothing), and a third LISTENs as the workers do and counts
     the notifications per POST (the commits of a process share them);
  3. checks that the branch's count agrees with COUNT(*) afterwards.
PROBE_AI=off turns the entries' AI check off first (no ai_jobs row, no NOTIFY per POST).
The cluster should run with PG_FSYNC=on (scripts/pg-cluster.sh) to see the commit waits.
"""

import collections
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402
from bench import harness  # noqa: E402

ENTRIES = int(os.environ.get("BENCH_ENTRIES", "2000"))
POSTS = int(os.environ.get("PROBE_POSTS", "20"))
CONNS = int(os.environ.get("BENCH_CONNECTIONS", "16"))
SAMPLE_MS = 10

LUA = Path(__file__).resolve().parent / "post.lua"

SAMPLER = """
CREATE TEMP TABLE s (w text);
DO $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
  WHILE clock_timestamp() - t0 < interval '%(secs)s seconds' LOOP
    PERFORM pg_stat_clear_snapshot();
    INSERT INTO s SELECT COALESCE(wait_event_type || ':' || wait_event, 'CPU')
      FROM pg_stat_activity WHERE datname = '%(db)s' AND state = 'active'
       AND pid <> pg_backend_pid();
    INSERT INTO s SELECT '  lock awaited: ' || l.locktype || ' ' || COALESCE(l.relation::regclass::text,
        l.classid::regclass::text || ' ' || l.objid, l.mode)
      FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE NOT l.granted AND a.datname = '%(db)s';
    PERFORM pg_sleep(%(sleep)s);
  END LOOP;
END $$;
SELECT w, COUNT(*) FROM s GROUP BY w ORDER BY 2 DESC;
"""


def server_log():
    """The cluster's log file (the harness's cluster is started by scripts/pg-cluster.sh)."""
    d = harness.psql("SHOW data_directory").stdout.strip()
    return Path(d) / "server.log"


def statement_counts(srv, key, group):
    """Statements and commits per POST, from the server log with log_statement=all."""
    log = server_log()
    harness.psql(f"ALTER DATABASE {srv.pg_dbname} SET log_statement = 'all'")
    srv.restart()  # new connections pick the setting up
    srv.api("POST", "/api/v1/entries", headers={"X-Api-Key": key},
            json={"student_name": "Warm", "group_id": group})  # prepares the statements
    start = log.stat().st_size
    for i in range(POSTS):
        r = srv.api("POST", "/api/v1/entries", headers={"X-Api-Key": key},
                    json={"student_name": "Probe", "group_id": group,
                          "description": f"probe {i}"})
        assert r.status_code == 201, r.text
    with open(log, "rb") as f:
        f.seek(start)
        text = f.read().decode("utf-8", "replace")
    harness.psql(f"ALTER DATABASE {srv.pg_dbname} RESET log_statement")
    srv.restart()
    kinds = collections.Counter()
    total = 0
    for m in re.finditer(r"LOG:  (?:statement|execute [^:]*): (.*)", text):
        sql = m.group(1).strip()
        total += 1
        words = sql.split()
        kind = words[0].upper()
        table = ""
        if kind in ("INSERT", "DELETE") and len(words) > 2:
            table = words[2]
        elif kind == "UPDATE":
            table = words[1]
        elif kind == "SELECT":
            f = re.search(r"\bFROM\s+(\w+)", sql, re.I)
            table = f.group(1) if f else ""
        kinds[(kind + " " + table).strip()] += 1
    print(f"per POST over {POSTS} POSTs: {total / POSTS:.1f} statements "
          "(each its own round trip)")
    for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(f"  {n / POSTS:5.2f}  {k}")


def listen(srv):
    """A psql session that LISTENs on journal_ai; notifications(proc) ends it and counts."""
    cmd = [harness.pg_bindir() + "/psql", "-h", "127.0.0.1", "-p", harness.PG_PORT, "-U",
           "postgres", "-d", srv.pg_dbname, "-X", "-A", "-t", "-q"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    proc.stdin.write("LISTEN journal_ai;\nSELECT 'listening';\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == "listening"
    return proc


def notifications(proc):
    out, _ = proc.communicate("SELECT 'end';\n\\q\n", timeout=60)
    return sum(1 for line in out.splitlines() if line.startswith("Asynchronous notification"))


def wait_events(srv, key, group, secs):
    out = {}

    def sample():
        sql = SAMPLER % {"secs": secs, "db": srv.pg_dbname, "sleep": SAMPLE_MS / 1000}
        out["text"] = harness.pg_run("psql", "-d", "postgres", "-X", "-A", "-t", "-q",
                                     "-v", "ON_ERROR_STOP=1", "-c", sql).stdout

    listener = listen(srv)
    t = threading.Thread(target=sample)
    t.start()
    cmd = ["wrk", "-t2", f"-c{CONNS}", f"-d{secs}s", "--latency", "-s", str(LUA),
           srv.base_url + "/api/v1/entries", "--", key, str(group)]
    wrk = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    t.join()
    sent = notifications(listener)
    rows = [line.split("|") for line in out["text"].split("\n") if "|" in line]
    n = sum(int(c) for w, c in rows if not w.startswith(" ")) or 1
    rps = re.search(r"Requests/sec:\s+([\d.]+)", wrk).group(1)
    p99 = re.search(r"^\s+99%\s+(\S+)", wrk, re.M).group(1)
    errs = re.search(r"Non-2xx or 3xx responses: (\d+)", wrk)
    print(f"wrk {CONNS} connections {secs}s: {rps} req/s, p99 {p99}, "
          f"{errs.group(1) if errs else 0} error answers")
    posts = int(re.search(r"(\d+) requests in", wrk).group(1))
    print(f"notifications on journal_ai: {sent} for {posts} POSTs"
          f" ({sent / max(posts, 1):.2f} per POST)")
    print(f"wait events of active backends ({n} samples every {SAMPLE_MS} ms):")
    for w, c in rows:
        print(f"  {100 * int(c) / n:5.1f} %  {w}")  # a lock's line: which one the waits were for


def main():
    srv = harness.Server(extra_conf=bench.EXTRA_CONF, label="pg-write-probe")
    try:
        srv.start()
        branch = srv.create_branch()
        group = srv.create_group(branch["id"])
        bench.seed_entries(srv, group["id"], branch["id"], ENTRIES)
        key = bench.api_key(srv, ["read", "write"])
        if os.environ.get("PROBE_AI", "on") == "off":  # no AI check queued per entry
            r = srv.api("PUT", "/api/settings", token=srv.admin_token,
                        json={"entry_ai_enabled": "false"})
            assert r.status_code == 200, r.text
        statement_counts(srv, key, group["id"])
        wait_events(srv, key, group["id"], int(os.environ.get("PROBE_SECONDS", "6")))
        # One snapshot for both, once wrk's last requests have finished.
        srv.stop()
        live, rows = harness.psql(
            "SELECT (SELECT COALESCE(SUM(live), 0) FROM entry_counts),"
            " (SELECT COUNT(*) FROM entries WHERE deleted_at IS NULL)",
            dbname=srv.pg_dbname).stdout.strip().split("|")
        print(f"entry_counts {live}, COUNT(*) {rows}: {'same' if live == rows else 'DIFFERENT'}")
        return 0 if live == rows else 1
    finally:
        bench.stop_all([srv])


if __name__ == "__main__":
    sys.exit(main())
