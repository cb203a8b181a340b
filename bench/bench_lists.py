#!/usr/bin/python3
"""make bench-lists: the entry list's pages on module builds side by side, at BENCH_ENTRIES
(200,000) entries on SQLite (or JOURNAL_TEST_DB), with the response cache Off where the build
has one (so that every request reads the database):

  first     GET /api/v1/entries?limit=50
  offset    GET /api/v1/entries?limit=50&offset=BENCH_DEEP_OFFSET (100,000)
  cursor    the same page by the cursor of the page before it (builds with cursors)
  me        GET /api/v1/me
  static    a static file of the first page's size, served by the same httpd

BENCH_BUILDS="label=build_dir,label=build_dir" names the builds (bench_writes.py's syntax;
default: this tree's build). One server per build, each with its own database seeded by
bench_search's loader; BENCH_ROUNDS rounds, each running every target on every build in turn,
BENCH_DURATION each at BENCH_CONNECTIONS (16) connections. Prints medians and each round.
"""

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402
import bench_search  # noqa: E402
import bench_writes  # noqa: E402
from bench import harness  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
CONNS = int(os.environ.get("BENCH_CONNECTIONS", "16"))
DEEP = int(os.environ.get("BENCH_DEEP_OFFSET", "100000"))
TARGETS = os.environ.get("BENCH_TARGETS", "first,offset,cursor,me,static").split(",")
# A build from before the response cache does not know the directive.
CONF = bench.EXTRA_CONF + "<IfDirective JournalResponseCache>\nJournalResponseCache Off\n" \
    "</IfDirective>\n"


def start(label, build_dir):
    """A server of build_dir's module on its own seeded database, and its targets' paths."""
    harness.MODULE = build_dir / "mod_journal.so"
    harness.ADMIN_CLI = build_dir / "journal-admin"
    srv = harness.Server(extra_conf=CONF, label=f"bench-lists-{label}")
    try:
        srv.start()
        branch = srv.create_branch()
        group = srv.create_group(branch["id"])
        bench_search.seed(srv, group["id"], branch["id"], bench_search.ENTRIES)
        headers = {"X-Api-Key": bench.read_key(srv)}
    except BaseException:
        bench.stop_all([srv])
        raise
    paths = {"first": "/api/v1/entries?limit=50",
             "offset": f"/api/v1/entries?limit=50&offset={DEEP}",
             "me": "/api/v1/me", "static": "/static-first-page.json"}
    size = len(srv.api("GET", paths["first"], headers=headers).content)
    (srv.doc_root / "static-first-page.json").write_bytes(b"x" * size)
    before = srv.api("GET", f"/api/v1/entries?limit=50&offset={DEEP - 50}", headers=headers)
    cursor = before.json().get("next_cursor")
    if cursor:
        paths["cursor"] = f"/api/v1/entries?limit=50&cursor={cursor}"
        ids = [[e["id"] for e in srv.api("GET", paths[t], headers=headers).json()["items"]]
               for t in ("offset", "cursor")]
        assert ids[0] == ids[1], f"{label}: offset and cursor read different pages"
    return {"label": label, "srv": srv, "headers": headers, "paths": paths,
            "runs": {t: [] for t in paths}}


def main():
    servers = []
    try:
        for label, build_dir in bench_writes.builds():
            servers.append(start(label, build_dir))
        print(f"entry list pages: db={harness.DB_KIND}, {bench_search.ENTRIES} entries, "
              f"{ROUNDS} interleaved rounds of {bench.DURATION} at {CONNS} connections")
        for _ in range(ROUNDS):
            for target in TARGETS:
                for s in servers:
                    if target in s["paths"]:
                        s["runs"][target].append(bench.wrk(s["srv"].base_url + s["paths"][target],
                                                           CONNS, s["headers"]))
        print(f"  {'build':<8} {'target':<7} {'req/s':>8} {'p99 ms':>8}  req/s of the rounds")
        for target in TARGETS:
            for s in servers:
                runs = s["runs"].get(target)
                if runs:
                    print(f"  {s['label']:<8} {target:<7} "
                          f"{statistics.median(r for r, _ in runs):>8.0f} "
                          f"{statistics.median(p for _, p in runs):>8.2f}  "
                          + ", ".join(f"{r:.0f}" for r, _ in runs))
        for url, n in bench.SOCKET_ERRORS.items():
            if n:
                print(f"  socket errors (wrk's 2 s timeout among them): {n} for {url}")
        return max([bench.log_problems(s["srv"], s["label"]) for s in servers], default=0)
    finally:
        bench.stop_all([s["srv"] for s in servers])


if __name__ == "__main__":
    sys.exit(main())
