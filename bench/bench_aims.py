#!/usr/bin/python3
"""make bench: every performance aim at 200,000 entries in one table, figures from one run.

For each database of the run (BENCH_DBS, else JOURNAL_TEST_DB, else "sqlite pgsql";
PostgreSQL needs JOURNAL_TEST_PG_PORT, which scripts/bench.sh provides with a throwaway
cluster) two servers share one database seeded with BENCH_ENTRIES entries (bench_search's
loader): one with the response cache On (the default), one with `JournalResponseCache Off`.
Every server of the run is up at once, so that the phases below interleave the targets of
both databases round by round and compare figures taken under the same machine load:

  reads   the list, /api/v1/me, a search that matches and one that matches nothing, each
          beside a static file of the same size (BENCH_ROUNDS rounds of BENCH_DURATION,
          BENCH_CONNECTIONS connections, wrk -t2)
  writes  POST /api/v1/entries at 16 connections (BENCH_WRITE_DURATION per round); every
          acknowledged write must be in the database afterwards
  burst   PostgreSQL: BENCH_INSERTS entries through the API, then at once the list on
          PostgreSQL beside SQLite's (the list "at rest" is the one of the reads)
  mixed   64 connections for BENCH_MIXED_SECONDS (bench/mixed.lua: 50% list, 25% search,
          25% create) on the cache-On server of each database in turn, the RSS of the
          server's process tree sampled from /proc

Then one table: each figure beside its aim, met or not met. Error answers of reads fail the
run (bench.wrk); errors under writes and the mixed load are figures of their own.
"""

import datetime
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench  # noqa: E402
import bench_search  # noqa: E402
from bench import harness  # noqa: E402

DBS = (os.environ.get("BENCH_DBS") or os.environ.get("JOURNAL_TEST_DB") or "sqlite pgsql").split()
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
CONNS = int(os.environ.get("BENCH_CONNECTIONS", "16"))
WRITE_DURATION = os.environ.get("BENCH_WRITE_DURATION", "5s")
INSERTS = int(os.environ.get("BENCH_INSERTS", "10000"))
MIXED_SECONDS = int(os.environ.get("BENCH_MIXED_SECONDS", "120"))
ENTRIES = bench_search.ENTRIES
LIST = "/api/v1/entries?limit=50"
SEARCHES = {"match": bench_search.MATCH_TERM, "no match": bench_search.NOMATCH_TERM}


def wrk_cmd(url, conns, duration, script=None, args=(), headers=None):
    cmd = ["wrk", "-t2", f"-c{conns}", f"-d{duration}", "--latency"]
    for k, v in (headers or {}).items():
        cmd += ["-H", f"{k}: {v}"]
    if script:
        cmd += ["-s", str(HERE / script)]
    return cmd + [url] + (["--", *map(str, args)] if args else [])


def wrk(*args, **kwargs):
    """One wrk run: req/s, p50 and p99 in ms, answers, error answers, socket errors."""
    return wrk_report(subprocess.run(wrk_cmd(*args, **kwargs), capture_output=True, text=True,
                                     check=True).stdout)


def wrk_report(out):
    def pct(p):
        m = re.search(rf"\b{p}%\s+([\d.]+)(us|ms|s)\b", out)
        return float(m.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]

    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "p50": pct(50), "p99": pct(99),
            "answers": int(re.search(r"(\d+) requests in", out).group(1)),
            "non2xx": int(non2xx.group(1)) if non2xx else 0,
            "sockerr": sum(map(int, sock.groups())) if sock else 0}


class Db:
    """The two servers of one database (cache On and Off) and what the run needs of them."""

    def __init__(self, kind):
        self.kind = kind
        harness.DB_KIND = kind
        self.on = harness.Server(extra_conf=bench.EXTRA_CONF, label=f"aims-{kind}")
        self.off = harness.Server(extra_conf=bench.EXTRA_CONF + "JournalResponseCache Off\n",
                                  label=f"aims-{kind}-off")
        self.servers = [self.on, self.off]

    def start(self):
        self.on.start()
        # The second server is a second node on the same database (both databases support
        # several servers on one database: the write queue and the generation are files).
        if self.kind == "pgsql":
            harness.pg_run("dropdb", "--if-exists", self.off.pg_dbname)
            self.off.pg_dbname = self.on.pg_dbname
        self.off.db_path = self.on.db_path
        self.off.dbd_params = self.on.dbd_params
        self.off._render(self.off.port)
        self.off.use_existing_admin(self.on.admin_username, self.on.admin_password)
        branch = self.on.create_branch()
        self.group = self.on.create_group(branch["id"])["id"]
        r = self.on.api("POST", "/api/api-keys", token=self.on.admin_token,
                        json={"name": "bench", "scopes": ["read", "write"],
                              "rate_limit_per_min": 10000000})
        assert r.status_code == 201, r.text
        self.key = r.json()["key"]
        started = time.monotonic()
        harness.DB_KIND = self.kind
        bench_search.seed(self.on, self.group, branch["id"], ENTRIES)
        self.seed_seconds = time.monotonic() - started
        self.off.start()

    def count(self):
        return harness.sql_int(self.on, "SELECT COUNT(*) FROM entries")

    def stop(self):
        bench.stop_all(self.servers)


def read_targets(db, static_root):
    """(name, url) of the read phase for one database: each API target and its static file."""
    headers = {"X-Api-Key": db.key}
    targets = []
    for name, path in (("list", LIST), ("me", "/api/v1/me")):
        body = db.on.api("GET", path, headers=headers).content
        static = static_root.doc_root / f"static-{name}-{db.kind}.json"
        static.write_bytes(body)
        os.chmod(static, 0o644)
        targets.append(((db.kind, "static " + name), f"{static_root.base_url}/{static.name}"))
        caches = ("on", "off") if name == "list" else ("on",)
        targets += [((db.kind, name, c), (db.on if c == "on" else db.off).base_url + path)
                    for c in caches]
    for name, term in SEARCHES.items():
        path = f"{LIST}&search={quote(term)}"
        targets += [((db.kind, name, "on"), db.on.base_url + path),
                    ((db.kind, name, "off"), db.off.base_url + path)]
    return targets


def interleave(targets, headers_of):
    """ROUNDS rounds of every target in turn; the runs of each target by name."""
    runs = {name: [] for name, _ in targets}
    for _ in range(ROUNDS):
        for name, url in targets:
            rps, p99 = bench.wrk(url, CONNS, headers_of(name))
            runs[name].append({"rps": rps, "p99": p99})
    return runs


def writes(dbs):
    """POST at 16 connections, the databases interleaved; acknowledged against present."""
    res = {}
    for db in dbs:
        res[db.kind] = {"runs": [], "before": db.count()}
    for _ in range(ROUNDS):
        for db in dbs:
            res[db.kind]["runs"].append(wrk(db.on.base_url + "/api/v1/entries", 16,
                                            WRITE_DURATION, "post.lua", (db.key, db.group)))
    for db in dbs:
        r = res[db.kind]
        r["acked"] = sum(x["answers"] - x["non2xx"] for x in r["runs"])
        r["errors"] = sum(x["non2xx"] + x["sockerr"] for x in r["runs"])
        r["present"] = db.count() - r["before"]
    return res


def burst_then_lists(pg, sqlite, key_of):
    """INSERTS entries through PostgreSQL's API, then at once its list beside SQLite's."""
    before, started = pg.count(), time.monotonic()
    # Each of wrk's two threads stops after half of INSERTS answers, but wrk itself runs for
    # its whole duration: it ends at SIGINT once the entries are in (and reports then).
    wrk_run = subprocess.Popen(wrk_cmd(pg.on.base_url + "/api/v1/entries", 16, "600s",
                                       "post.lua", (pg.key, pg.group, INSERTS // 2)),
                               stdout=subprocess.PIPE, text=True)
    while wrk_run.poll() is None and pg.count() < before + INSERTS:
        time.sleep(0.5)
    wrk_run.send_signal(signal.SIGINT)
    run = wrk_report(wrk_run.communicate(timeout=60)[0])
    burst = {"inserted": pg.count() - before, "seconds": time.monotonic() - started,
             "errors": run["non2xx"] + run["sockerr"]}
    targets = [(("pgsql", "list", "on"), pg.on.base_url + LIST),
               (("pgsql", "list", "off"), pg.off.base_url + LIST)]
    if sqlite:
        targets += [(("sqlite", "list", "on"), sqlite.on.base_url + LIST),
                    (("sqlite", "list", "off"), sqlite.off.base_url + LIST)]
    return burst, interleave(targets, key_of)


def tree_memory(root_pid):
    """(RSS, PSS) in kB summed over root_pid and its descendants."""
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    rss = pss = 0
    todo = [root_pid]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                text = f.read()
        except OSError:
            continue
        rss += int(re.search(r"^Rss:\s+(\d+)", text, re.M).group(1))
        pss += int(re.search(r"^Pss:\s+(\d+)", text, re.M).group(1))
    return rss, pss


def mixed(db):
    """The mixed load on db's cache-On server, with the peak memory of its process tree."""
    peak = [0, 0]
    done = threading.Event()

    def sample():
        while not done.wait(0.5):
            rss, pss = tree_memory(db.on.pid)
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)

    idle = tree_memory(db.on.pid)
    before = db.count()
    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        res = wrk(db.on.base_url, 64, f"{MIXED_SECONDS}s", "mixed.lua",
                  (db.key, db.group, quote(bench_search.MATCH_TERM)))
    finally:
        done.set()
        sampler.join()
    res.update(rss_idle=idle[0], rss=peak[0], pss=peak[1], created=db.count() - before)
    return res


def med(runs, field="rps"):
    return statistics.median(r[field] for r in runs)


def verdict(ok):
    return "n/a" if ok is None else ("met" if ok else "**not met**")


def read_rows(kind, reads):
    """The rows of the reads of one database: vs the static file, searches vs the list."""
    rows = []
    for name, aim, label in (("list", 0.75, f"`GET {LIST}` vs static file"),
                             ("me", 0.85, "`GET /api/v1/me` vs static file")):
        static = med(reads[(kind, "static " + name)])
        for c in (("on", "off") if name == "list" else ("on",)):
            runs = reads[(kind, name, c)]
            x = med(runs) / static
            rows.append((label, kind, c if name == "list" else "-",
                         f"{med(runs):,.0f} vs {static:,.0f} req/s, p99 {med(runs, 'p99'):.1f} ms",
                         f"{x:.2f}×", f"≥ {aim}×", x >= aim))
    for name, aim in (("match", 0.5), ("no match", 0.8)):
        for c in ("on", "off"):
            runs, plain = reads[(kind, name, c)], med(reads[(kind, "list", c)])
            x = med(runs) / plain
            rows.append((f"search {name} (`{SEARCHES[name]}`) vs the list", kind, c,
                         f"{med(runs):,.0f} vs {plain:,.0f} req/s, p99 {med(runs, 'p99'):.1f} ms",
                         f"{x:.2f}×", f"≥ {aim}×", x >= aim))
    return rows


def write_rows(kind, w):
    rps, p99 = med(w["runs"]), med(w["runs"], "p99")
    label = "`POST /api/v1/entries`, 16 connections"
    return [(label + ": req/s", kind, "on", f"{rps:,.0f} req/s", f"{rps:,.0f}", "≥ 2,500",
             rps >= 2500),
            (label + ": p99", kind, "on", f"p50 {med(w['runs'], 'p50'):.1f} ms",
             f"{p99:.1f} ms", "≤ 50 ms", p99 <= 50),
            (label + ": acknowledged writes present", kind, "on",
             f"{w['acked']:,} acknowledged, {w['present']:,} new, {w['errors']} errors",
             f"{w['present'] - w['acked']:+,}", "≥ 0, 0 errors",
             w["present"] >= w["acked"] and w["errors"] == 0)]


def mixed_rows(kind, m):
    label = f"mixed load, 64 connections, {MIXED_SECONDS} s"
    errors = m["non2xx"] + m["sockerr"]
    return [(label + ": p99", kind, "on",
             f"{m['rps']:,.0f} req/s, p50 {m['p50']:.1f} ms, {m['created']:,} created",
             f"{m['p99']:.1f} ms", "≤ 50 ms", m["p99"] <= 50),
            (label + ": httpd tree RSS peak", kind, "on",
             f"idle {m['rss_idle'] / 1024:.0f} MB; PSS peak {m['pss'] / 1024:.0f} MB",
             f"{m['rss'] / 1024:.0f} MB", "≤ 96 MB", m["rss"] <= 96 * 1024),
            (label + ": errors", kind, "on",
             f"{m['non2xx']} error answers, {m['sockerr']} socket errors", str(errors), "0",
             errors == 0)]


def pg_rows(reads, burst, after):
    rows = []
    for when, runs in (("at rest", reads),
                       (f"right after {burst['inserted']:,} inserts" if burst else None, after)):
        if when is None:
            continue
        for c in ("on", "off"):
            pg = med(runs[("pgsql", "list", c)])
            lite = med(runs[("sqlite", "list", c)]) if ("sqlite", "list", c) in runs else None
            x = pg / lite if lite else None
            rows.append((f"PostgreSQL list {when} vs SQLite's", "pgsql", c,
                         f"{pg:,.0f} vs {lite:,.0f} req/s" if lite else f"{pg:,.0f} req/s",
                         f"{x:.2f}×" if x else "-", "≥ 0.5×", None if x is None else x >= 0.5))
    return rows


def print_table(rows):
    print("\n| aim | db | cache | figures | value | aim | result |")
    print("|---|---|---|---|---|---|---|")
    for label, kind, cache, figures, value, aim, ok in rows:
        print(f"| {label} | {kind} | {cache} | {figures} | {value} | {aim} | {verdict(ok)} |")


def print_rounds(title, runs):
    print(f"\n{title}: req/s of each round, median p99 in ms")
    for name, rs in runs.items():
        print(f"  {' '.join(name):<24} " + "  ".join(f"{r['rps']:>8,.0f}" for r in rs)
              + f"   p99 {med(rs, 'p99'):.1f}")


def headline():
    commit = subprocess.run(["git", "-C", str(HERE), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip()
    print(f"mod_journal aims: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"commit {commit}, databases {' '.join(DBS)}, {ENTRIES:,} entries; reads: {ROUNDS} "
          f"interleaved rounds of {bench.DURATION} at {CONNS} connections (wrk -t2); writes: "
          f"{ROUNDS} rounds of {WRITE_DURATION}; mixed: {MIXED_SECONDS} s; load average "
          f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs", flush=True)
    if "pgsql" in DBS:
        fsync = harness.psql("SHOW fsync").stdout.strip()
        version = harness.psql("SHOW server_version").stdout.strip()
        print(f"PostgreSQL {version}, fsync {fsync}", flush=True)


def measure(dbs):
    by_kind = {db.kind: db for db in dbs}
    key_of = {}
    targets = []
    for db in dbs:
        for name, url in read_targets(db, dbs[0].on):
            key_of[name] = {"X-Api-Key": db.key}
            targets.append((name, url))
    # Each server's pool of database connections opens with its first requests (on
    # PostgreSQL a connection and its prepared statements cost a good part of a second):
    # the rounds measure servers that have served before, as in production.
    for db in dbs:
        for srv in db.servers:
            wrk(srv.base_url + LIST, 64, "3s", headers={"X-Api-Key": db.key})
    reads = interleave(targets, lambda name: key_of[name])
    print_rounds("reads", reads)
    w = writes(dbs)
    burst = after = None
    if "pgsql" in by_kind:
        burst, after = burst_then_lists(by_kind["pgsql"], by_kind.get("sqlite"),
                                        lambda name: {"X-Api-Key": by_kind[name[0]].key})
        print(f"\nburst: {burst['inserted']:,} entries in {burst['seconds']:.0f} s "
              f"({burst['errors']} errors)")
        print_rounds("lists right after the burst", after)
    mix = {db.kind: mixed(db) for db in dbs}
    rows = []
    for db in dbs:
        rows += read_rows(db.kind, reads) + write_rows(db.kind, w[db.kind])
        rows += mixed_rows(db.kind, mix[db.kind])
    if "pgsql" in by_kind:
        rows += pg_rows(reads, burst, after)
    print("\nseeding: " + ", ".join(f"{db.kind} {db.seed_seconds:.0f} s" for db in dbs)
          + f"; load average at the end {os.getloadavg()[0]:.1f}")
    print_table(rows)


def main():
    headline()
    dbs = []
    failed = 0
    try:
        for kind in DBS:
            dbs.append(Db(kind))
            dbs[-1].start()
        measure(dbs)
        for db in dbs:
            for srv in db.servers:
                failed |= bench.log_problems(srv, srv.label)
    finally:
        for db in dbs:
            db.stop()
    return failed


if __name__ == "__main__":
    sys.exit(main())
