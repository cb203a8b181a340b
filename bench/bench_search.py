#!/usr/bin/python3
"""make bench-search: searching the entries at the size of a real organisation.

Seeds BENCH_ENTRIES (default 200,000) entries straight into the database (SQLite through
Python's sqlite3 on the server's file, PostgreSQL through COPY), then measures, each beside a
static file of the same size in the same run (bench.py's interleaved rounds):

  list        GET /api/v1/entries?limit=50
  match       the same with a search for one student's full name (a selective term)
  broad       the same with a search for one surname (BENCH_BROAD=0 skips it)
  no match    the same with a search that matches nothing

and prints one table: req/s, p99, the static file's req/s, api/static, and each search's req/s
over the plain list's (the aims: match >= 0.5, no match >= 0.8). The database is the one of
JOURNAL_TEST_DB (sqlite, or pgsql with JOURNAL_TEST_PG_PORT).
"""

import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402
from bench import harness  # noqa: E402

ENTRIES = int(os.environ.get("BENCH_ENTRIES", "200000"))
BROAD = os.environ.get("BENCH_BROAD", "1") != "0"

FIRST = ["Amara", "Ben", "Chloé", "Dmitri", "Elif", "Farah", "Gustav", "Hana", "Ines", "Jonas",
         "Kofi", "Lena", "Mateo", "Nia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq",
         "Uma", "Viktor", "Wen", "Ximena", "Yusuf", "Zoë", "Aiko", "Bruno", "Carla", "Diego",
         "Emil", "Fatima", "Greta", "Hugo", "Ida", "Jakob", "Kira", "Luca", "Maja", "Noah"]
LAST = ["Okafor", "Schmidt", "Nakamura", "Rossi", "Kowalski", "Haddad", "Lindqvist", "Moreau",
        "Papadopoulos", "Novak", "Öztürk", "García", "Mensah", "Ivanova", "Dubois", "Jensen",
        "Fischer", "Costa", "Byrne", "Kim", "Walsh", "Sato", "Horvat", "Nielsen", "Bauer",
        "Silva", "Kaya", "Murphy", "Larsen", "Weber", "Popescu", "Vargas", "Ali", "Chen",
        "Meyer", "Rahman", "Santos", "Kovač", "Berg", "Hoffmann", "Ortiz", "Yilmaz",
        "Andersen", "Hughes", "Mazur", "Ferreira", "Lund", "Kruger", "Tanaka", "Novák",
        "Petrov", "Romero", "Keller", "Dahl", "Adeyemi", "Brennan", "Castro", "Engel",
        "Farouk", "Gallo"]
WORDS = ("fractions decimals percentages ratio algebra equations graphs geometry angles "
         "triangles circles area volume probability statistics mean median reading grammar "
         "spelling essay paragraph vocabulary poem novel chapter summary revision homework "
         "quiz test practice worksheet exercise mistakes progress confident careful quick "
         "slow focused tired cheerful improved struggled explained reviewed finished started "
         "discussed asked answered wrote read drew measured counted solved checked corrected "
         "photosynthesis cells atoms molecules forces energy electricity magnets planets "
         "history timeline empire revolution geography rivers mountains climate map french "
         "german spanish verbs nouns adjectives pronunciation listening speaking").split()

MATCH_TERM = "Amara Okafor"  # one of 2,400 names: ~1 in 2,400 entries
BROAD_TERM = "Okafor"        # one of 60 surnames: ~1 in 60 entries
NOMATCH_TERM = "zzznomatch"


def rows(group_id, branch_id, n):
    rnd = random.Random(20261123)
    for i in range(n):
        name = f"{rnd.choice(FIRST)} {rnd.choice(LAST)}"
        desc = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(8, 16)))
        yield (name, group_id, branch_id, f"{desc.capitalize()}. Lesson {i}.",
               "2026-11-01T10:00:00Z", "2026-11-01T10:00:00Z")


def seed(srv, group_id, branch_id, n):
    cols = "student_name, group_id, branch_id, description, created_at, updated_at"
    if harness.DB_KIND == "pgsql":
        # Filling a trigram GIN index row by row costs minutes at 200,000 rows; built once
        # after the load it costs seconds. The indexes are the schema's own, dropped and made
        # again from their definitions in the load's transaction.
        indexes = harness.psql("SELECT indexname || ' ' || indexdef FROM pg_indexes WHERE "
                               "tablename = 'entries' AND indexdef LIKE '%gin_trgm_ops%'",
                               dbname=srv.pg_dbname).stdout.split("\n")
        indexes = [line.split(" ", 1) for line in indexes if line.strip()]
        data = "".join("\t".join(str(v) for v in r) + "\n" for r in rows(group_id, branch_id, n))
        # The per-branch count (trigger entries_counts) is raised once by n, not n times: n
        # updates of one row in one transaction each walk all the row's earlier versions.
        script = ("SET maintenance_work_mem = '256MB';\nBEGIN;\n"
                  + "".join(f"DROP INDEX {name};\n" for name, _ in indexes)
                  + "ALTER TABLE entries DISABLE TRIGGER entries_counts;\n"
                  + f"COPY entries ({cols}) FROM STDIN;\n{data}\\.\n"
                  + "ALTER TABLE entries ENABLE TRIGGER entries_counts;\n"
                  + f"INSERT INTO entry_counts (branch_id, live) VALUES ({branch_id}, {n}) ON "
                  f"CONFLICT (branch_id, slot) DO UPDATE SET live = entry_counts.live + {n};\n"
                  + "".join(f"{definition};\n" for _, definition in indexes) + "COMMIT;\n")
        cmd = [os.path.join(harness.pg_bindir(), "psql"), "-h", "127.0.0.1", "-p",
               harness.PG_PORT, "-U", "postgres", "-d", srv.pg_dbname, "-X", "-q", "-v",
               "ON_ERROR_STOP=1"]
        subprocess.run(cmd, input=script, text=True, check=True, capture_output=True)
        harness.psql("VACUUM ANALYZE entries", dbname=srv.pg_dbname)
    else:
        db = sqlite3.connect(srv.db_path, timeout=60)
        db.executemany(f"INSERT INTO entries ({cols}) VALUES (?,?,?,?,?,?)",
                       rows(group_id, branch_id, n))
        db.commit()
        # New entries join the descriptions' index in batches (migration 0018): the loaded
        # ones are indexed here at once, as the module's passes would.
        db.execute("INSERT INTO entries_fts (rowid, description) SELECT id, description"
                   " FROM entries WHERE id > (SELECT upto FROM entries_fts_state)")
        db.execute("UPDATE entries_fts_state SET upto = (SELECT MAX(id) FROM entries)")
        db.commit()
        # A load in one transaction leaves the full-text index in large segments that FTS5's
        # merges would then work through inside the next writes (docs/operations.md, "Writes"):
        # a journal grown by its writes, or upgraded by migration 0016, is optimised.
        db.execute("INSERT INTO entries_fts (entries_fts) VALUES ('optimize')")
        db.commit()
        db.execute("ANALYZE")
        db.close()


def searches(srv):
    headers = {"X-Api-Key": bench.read_key(srv)}
    branch = srv.create_branch()
    group = srv.create_group(branch["id"])
    seed(srv, group["id"], branch["id"], ENTRIES)
    print(f"mod_journal search benchmark: db={harness.DB_KIND}, {ENTRIES} entries, "
          f"{bench.ROUNDS} interleaved rounds of {bench.DURATION}, connections "
          f"{bench.CONNECTIONS}")
    targets = [("list", None), ("match", MATCH_TERM)]
    if BROAD:
        targets.append(("broad", BROAD_TERM))
    targets.append(("no match", NOMATCH_TERM))
    results = []
    for label, term in targets:
        path = "/api/v1/entries?limit=50" + (f"&search={quote(term)}" if term else "")
        total = srv.api("GET", path, headers=headers).json()["total"]
        results.append((label, term, total, bench.measure(srv, label, path, headers)))
    print(f"\nsummary ({harness.DB_KIND}, {ENTRIES} entries)")
    print(f"  {'target':<9} {'term':<14} {'total':>7} {'conns':>5} {'req/s':>8} "
          f"{'p99 ms':>7} {'static':>8} {'api/static':>10} {'x list':>7}")
    plain = {c: rps for c, rps, *_ in results[0][3]}
    for label, term, total, measured in results:
        for conns, a_rps, a_p99, s_rps, _s_p99, _cost in measured:
            print(f"  {label:<9} {term or '-':<14} {total:>7} {conns:>5} {a_rps:>8.0f} "
                  f"{a_p99:>7.2f} {s_rps:>8.0f} {a_rps / s_rps:>10.2f} "
                  f"{a_rps / plain[conns]:>7.2f}")


def main():
    return bench.run("bench-search", searches)


if __name__ == "__main__":
    sys.exit(main())
