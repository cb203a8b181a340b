#!/usr/bin/python3
"""make bench: the journal's hot paths under wrk, beside Apache serving a static file of the
same size from the same server in the same run.

For each target the runs are interleaved (api, static, api, static, ...) so both see the same
machine conditions; the table shows medians over the rounds. "cost" is the static file's
req/s divided by the endpoint's: 1.0 means as cheap as a static file.
"""

import os
import re
import sqlite3
import statistics
import subprocess
import tempfile
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "api"))
import harness  # noqa: E402
import memtree  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
DURATION = os.environ.get("BENCH_DURATION", "3s")
CONNECTIONS = [int(c) for c in os.environ.get("BENCH_CONNECTIONS", "16,64").split(",")]

SOCKET_ERRORS = {}

EXTRA_CONF = """
JournalRateLimitMax 10000000
LogLevel warn
CustomLog /dev/null journal
""" + os.environ.get("BENCH_EXTRA_CONF", "").replace("\\n", "\n") + "\n"


def wrk(url, conns, headers):
    cmd = ["wrk", "-t2", f"-c{conns}", f"-d{DURATION}", "--latency"]
    for k, v in headers.items():
        cmd += ["-H", f"{k}: {v}"]
    out = subprocess.run(cmd + [url], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p99.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise RuntimeError(f"wrk saw error responses for {url}:\n{out}")
    # Socket errors (a connection closed under load) are reported, not hidden.
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    SOCKET_ERRORS[url] = SOCKET_ERRORS.get(url, 0) + (sum(map(int, sock.groups())) if sock else 0)
    return rps, float(p99.group(1)) * scale


def measure(srv, name, path, headers):
    """Runs path and a static file of the same size, interleaved; prints medians."""
    body = srv.api("GET", path, headers=headers).content
    static = srv.doc_root / ("static-" + re.sub(r"[^a-z0-9]+", "-", name) + ".json")
    static.write_bytes(body)
    os.chmod(static, 0o644)
    rows = []
    for conns in CONNECTIONS:
        api, stat = [], []
        for _ in range(ROUNDS):
            api.append(wrk(srv.base_url + path, conns, headers))
            stat.append(wrk(f"{srv.base_url}/{static.name}", conns, headers))
        a_rps = statistics.median(r for r, _ in api)
        s_rps = statistics.median(r for r, _ in stat)
        rows.append((conns, a_rps, statistics.median(p for _, p in api), s_rps,
                     statistics.median(p for _, p in stat),
                     s_rps / a_rps if a_rps else float("inf")))
    print(f"\n{name}: GET {path} ({len(body)} bytes) vs a static file of the same size")
    print(f"  {'conns':>5}  {'api req/s':>10}  {'api p99 ms':>10}  {'static req/s':>12}"
          f"  {'static p99 ms':>13}  {'cost':>5}  {'api/static':>10}")
    for conns, a_rps, a_p99, s_rps, s_p99, cost in rows:
        print(f"  {conns:>5}  {a_rps:>10.0f}  {a_p99:>10.2f}  {s_rps:>12.0f}  {s_p99:>13.2f}"
              f"  {cost:>5.2f}  {1 / cost:>10.2f}")
    return rows


def measure_pair(srv, name, paths, headers):
    """Two requests for the same page, interleaved: which way of reaching it costs less."""
    print(f"\n{name}")
    print(f"  {'conns':>5}  " + "  ".join(f"{label + ' req/s':>14}  {label + ' p99 ms':>15}"
                                          for label, _ in paths))
    for conns in CONNECTIONS:
        runs = {label: [] for label, _ in paths}
        for _ in range(ROUNDS):
            for label, path in paths:
                runs[label].append(wrk(srv.base_url + path, conns, headers))
        print(f"  {conns:>5}  " + "  ".join(
            f"{statistics.median(r for r, _ in runs[label]):>14.0f}"
            f"  {statistics.median(p for _, p in runs[label]):>15.2f}" for label, _ in paths))


SEED_ENTRIES = int(os.environ.get("BENCH_ENTRIES", "10000"))
# The deep page: offset against cursor (BENCH_DEEP_OFFSET=0 skips it).
DEEP_OFFSET = int(os.environ.get("BENCH_DEEP_OFFSET", "100000"))


def seed_entries(srv, group_id, branch_id, n):
    """n entries straight into the database (the API would take minutes), newest last."""
    rows = [(f"Student {i % 400}", group_id, branch_id,
             f"Lesson notes number {i}: fractions, decimals and a short quiz.",
             "2026-11-01T10:00:00Z", "2026-11-01T10:00:00Z") for i in range(n)]
    sql = ("INSERT INTO entries (student_name, group_id, branch_id, description, created_at,"
           " updated_at) VALUES ")
    if harness.DB_KIND == "pgsql":
        values = ",".join("('%s',%d,%d,'%s','%s','%s')" % r for r in rows)
        # From a file: thousands of rows are more than one argument may hold.
        with tempfile.NamedTemporaryFile("w", suffix=".sql") as f:
            f.write(sql + values + ";\n")
            f.flush()
            harness.pg_run("psql", "-d", srv.pg_dbname, "-X", "-q", "-v", "ON_ERROR_STOP=1",
                           "-f", f.name)
    else:
        db = sqlite3.connect(srv.db_path, timeout=30)
        db.executemany(sql + "(?,?,?,?,?,?)", rows)
        db.commit()
        db.close()


def deep_page(srv, group, branch, headers):
    """The page of 50 entries after DEEP_OFFSET others, reached by offset and by cursor."""
    have = SEED_ENTRIES
    if have < DEEP_OFFSET + 50:
        seed_entries(srv, group["id"], branch["id"], DEEP_OFFSET + 50 - have)
    before = srv.api("GET", f"/api/v1/entries?limit=50&offset={DEEP_OFFSET - 50}",
                     headers=headers).json()
    by_offset = f"/api/v1/entries?limit=50&offset={DEEP_OFFSET}"
    by_cursor = f"/api/v1/entries?limit=50&cursor={before['next_cursor']}"
    a = srv.api("GET", by_offset, headers=headers).json()["items"]
    b = srv.api("GET", by_cursor, headers=headers).json()["items"]
    assert [e["id"] for e in a] == [e["id"] for e in b], "the two requests read another page"
    measure_pair(srv, f"entries: the page after {DEEP_OFFSET} ({DEEP_OFFSET + 50} in the "
                      "journal), by offset and by cursor",
                 [("offset", by_offset), ("cursor", by_cursor)], headers)


def read_key(srv):
    """An API key that reads and is never rate limited here."""
    return api_key(srv, ["read"])


def api_key(srv, scopes):
    """An API key with these scopes that is never rate limited here."""
    r = srv.api("POST", "/api/api-keys", token=srv.admin_token,
                json={"name": "bench", "scopes": scopes, "rate_limit_per_min": 10000000})
    assert r.status_code == 201, r.text
    return r.json()["key"]


def log_problems(srv, label=""):
    """Prints the unexpected lines of srv's error log; 1 if there were any, else 0."""
    problems = srv.new_log_problems()
    if problems:
        print(f"error log problems{label and ' (' + label + ')'}:\n  " + "\n  ".join(problems))
    return 1 if problems else 0


def stop_all(servers):
    """Stops and removes every server that was made, whatever state it is in."""
    for srv in servers:
        if srv.started:
            srv.stop()
    for srv in servers:
        srv.cleanup()


def run(label, body):
    """Starts a server, runs body(srv), reports socket errors and error log problems (then
    fails), and stops the server whatever happens."""
    srv = harness.Server(extra_conf=EXTRA_CONF, label=label)
    try:
        srv.start()
        body(srv)
        print(f"\nhttpd tree after the runs: {memtree.describe(memtree.sample(srv.pid), srv.pid)}")
        for url, n in SOCKET_ERRORS.items():
            if n:
                print(f"socket errors (connections closed under load): {n} for {url}")
        problems = srv.new_log_problems()
        if problems:
            print("error log problems:\n  " + "\n  ".join(problems))
            return 1
    finally:
        srv.stop()
        srv.cleanup()
    return 0


def hot_paths(srv):
    key = read_key(srv)
    print(f"mod_journal benchmark: db={harness.DB_KIND}, {ROUNDS} interleaved rounds of "
          f"{DURATION} per target, wrk -t2, connections {CONNECTIONS}")
    measure(srv, "me", "/api/v1/me", {"X-Api-Key": key})
    branch = srv.create_branch()
    group = srv.create_group(branch["id"])
    seed_entries(srv, group["id"], branch["id"], SEED_ENTRIES)
    measure(srv, f"entries ({SEED_ENTRIES} in the journal)", "/api/v1/entries?limit=50",
            {"X-Api-Key": key})
    if DEEP_OFFSET:
        deep_page(srv, group, branch, {"X-Api-Key": key})


def main():
    return run("bench", hot_paths)


if __name__ == "__main__":
    sys.exit(main())
