"""Backup and restore of a large journal: time and the httpd child's memory.

    JOURNAL_BUILD_DIR=$PWD/build /usr/bin/python3 bench/bench_backup.py [ENTRIES] [MIB]

Builds a server (SQLite, or PostgreSQL with JOURNAL_TEST_DB=pgsql and JOURNAL_TEST_PG_PORT)
with ENTRIES entries (100000) and MIB MiB of stored files (1024, in 8 MiB files of random
bytes, which gzip cannot shrink), then times POST /api/backups and the restore of that archive
by name, and reports each child's peak RSS growth (VmHWM after minus VmRSS before) and the
archive's size."""

import hashlib
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "api"))

from harness import Server, sql_exec  # noqa: E402
from test_backups import bulk_entries, child_pids  # noqa: E402

FILE_MIB = 8


def status(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])  # kB
    return 0


def add_files(srv, entry_id, mib):
    """mib MiB of random files, stored as the module stores them, and their rows."""
    rows = []
    for i in range(mib // FILE_MIB):
        data = os.urandom(FILE_MIB << 20)
        name_hex = hashlib.md5(f"{i}-{time.time()}".encode()).hexdigest()
        stored = f"files/{name_hex[:2]}/{name_hex}"
        path = srv.data_dir / stored
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        rows.append(f"INSERT INTO entry_files (entry_id, name, stored_name, size, content_type,"
                    f" sha256, created_at) VALUES ({entry_id}, 'big{i}.bin', '{stored}',"
                    f" {len(data)}, 'application/pdf', '{hashlib.sha256(data).hexdigest()}',"
                    f" '2026-11-01T10:00:00Z')")
    sql_exec(srv, *rows)
    srv._chown_tree(srv.data_dir)


def measured(srv, method, path, token):
    pids = child_pids(srv)
    before = {p: status(p, "VmRSS") for p in pids}
    t0 = time.monotonic()
    r = srv.api(method, path, token=token, timeout=3600)
    took = time.monotonic() - t0
    growth = max(status(p, "VmHWM") - before[p] for p in pids if os.path.exists(f"/proc/{p}"))
    return r, took, growth


def main():
    entries = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    mib = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    srv = Server(extra_conf="JournalMaxBodySize 1M", label="bench-backup")
    try:
        srv.start()
        a = srv.admin_token
        branch = srv.create_branch()["id"]
        group = srv.create_group(branch)["id"]
        bulk_entries(srv, group, branch, entries)
        first = srv.api("GET", "/api/entries", token=a, params={"limit": 1}).json()[0]["id"]
        add_files(srv, first, mib)
        r, took, growth = measured(srv, "POST", "/api/backups", a)
        assert r.status_code == 201, r.text
        b = r.json()
        print(f"{srv.db_kind}: {entries} entries, {mib} MiB of files")
        print(f"backup:  {took:.1f} s, archive {b['size'] / 2**20:.0f} MiB, "
              f"child peak RSS growth {growth / 1024:.1f} MiB")
        r, took, growth = measured(srv, "POST", f"/api/backups/{b['name']}/restore", a)
        assert r.status_code == 200, r.text
        print(f"restore: {took:.1f} s, child peak RSS growth {growth / 1024:.1f} MiB")
    finally:
        srv.stop()
        srv.cleanup()


if __name__ == "__main__":
    main()
