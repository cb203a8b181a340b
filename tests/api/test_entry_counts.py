"""The live entries per branch (entry_counts, migration 0013): the count the plain lists answer
with as `total` stays equal to COUNT(*) of the branch's live entries while several connections
create, trash, restore and move entries at once, across a backup restore, and through the
migration of a database written before 0013. On PostgreSQL a writer never waits for another
writer of the same branch: each transaction counts in a slot of its own."""

import random
import subprocess
import threading
import time

import pytest
import requests

import harness
from harness import assert_json, sql_int, sql_scalar
from test_upgrades import MIGRATE_RE, old_database

THREADS = 6
OPS = 12


def make_key(srv, branch_ids=None):
    body = {"name": harness.uniq("counts"), "scopes": ["read", "write"],
            "rate_limit_per_min": 10000}
    if branch_ids:
        body["branch_ids"] = branch_ids
    r = srv.api("POST", "/api/api-keys", token=srv.admin_token, json=body)
    return assert_json(r, 201)["key"]


def live(srv, branch_id):
    return sql_int(srv, f"SELECT COUNT(*) FROM entries WHERE branch_id = {branch_id}"
                        " AND deleted_at IS NULL")


def counted(srv, branch_id):
    return sql_int(srv, "SELECT COALESCE(SUM(live), 0) FROM entry_counts WHERE branch_id = "
                        f"{branch_id}")


def api_total(srv, key):
    """`total` of the plain list (no filter: the count comes from entry_counts)."""
    r = srv.api("GET", "/api/v1/entries", headers={"X-Api-Key": key}, params={"limit": 1})
    return assert_json(r, 200)["total"]


def assert_counts_right(srv, branches):
    for b in branches:
        assert counted(srv, b["id"]) == live(srv, b["id"]), f"branch {b['id']}"
        assert api_total(srv, b["key"]) == live(srv, b["id"]), f"branch {b['id']}"


class Journal:
    """Two branches with a group each, and a key per branch (its lists count that branch)."""

    def __init__(self, srv):
        self.srv = srv
        self.branches = []
        for _ in range(2):
            b = srv.create_branch()
            b["group"] = srv.create_group(b["id"])["id"]
            b["key"] = make_key(srv, [b["id"]])
            self.branches.append(b)
        self.key = make_key(srv)
        self.ids = []
        self.lock = threading.Lock()
        self.failures = []

    def create(self, http, branch, timeout=60):
        r = http.post(f"{self.srv.base_url}/api/v1/entries", headers={"X-Api-Key": self.key},
                      json={"student_name": "Count", "group_id": branch["group"]},
                      timeout=timeout)
        if r.status_code == 201:
            with self.lock:
                self.ids.append(r.json()["id"])
        return r.status_code

    def pick(self, rnd):
        with self.lock:
            return rnd.choice(self.ids) if self.ids else None

    def work(self, kind, seed, stop_on_401=False, also_ok=()):
        """One connection's share: OPS creates, trashes, restores or moves."""
        http, rnd = requests.Session(), random.Random(seed)
        base, key = self.srv.base_url, {"X-Api-Key": self.key}
        try:
            for i in range(OPS):
                entry = self.pick(rnd)
                if kind == "create" or entry is None:
                    status = self.create(http, self.branches[i % 2])
                elif kind == "trash":
                    status = http.delete(f"{base}/api/v1/entries/{entry}", headers=key,
                                         timeout=60).status_code
                elif kind == "restore":
                    status = http.post(f"{base}/api/trash/entry/{entry}/restore",
                                       headers={"X-Auth-Token": self.srv.admin_token},
                                       timeout=60).status_code
                else:  # move to the other branch's group
                    status = http.put(f"{base}/api/v1/entries/{entry}", headers=key, timeout=60,
                                      json={"student_name": "Moved", "description": "moved",
                                            "group_id": self.branches[rnd.randrange(2)]["group"]}
                                      ).status_code
                if stop_on_401 and status == 401:
                    return  # a restore ended this key
                # 404: trashed or restored meanwhile, or not in the trash (a live entry).
                if status not in (200, 201, 204, 404) + tuple(also_ok):
                    self.failures.append((kind, entry, status))
        finally:
            http.close()

    def run(self, kinds, stop_on_401=False, during=None, also_ok=()):
        threads = [threading.Thread(target=self.work, args=(k, n, stop_on_401, also_ok))
                   for n, k in enumerate(kinds)]
        for t in threads:
            t.start()
        if during:
            during()
        for t in threads:
            t.join(timeout=300)
        assert not any(t.is_alive() for t in threads), "a writer hung"
        assert not self.failures, self.failures


MIX = ["create", "create", "trash", "restore", "move", "create"][:THREADS]


def test_count_follows_parallel_creates_trashes_restores_and_moves(fresh_server):
    srv = fresh_server()
    j = Journal(srv)
    http = requests.Session()
    for i in range(8):
        assert j.create(http, j.branches[i % 2]) == 201
    j.run(MIX)
    assert_counts_right(srv, j.branches)
    assert sql_int(srv, "SELECT COUNT(*) FROM entries WHERE deleted_at IS NOT NULL") > 0
    assert sum(live(srv, b["id"]) for b in j.branches) > 8


def test_count_right_after_a_restore_with_writers_running(fresh_server):
    srv = fresh_server()
    j = Journal(srv)
    j.run(MIX)
    r = srv.api("POST", "/api/backups", token=srv.admin_token)
    name = assert_json(r, 201)["name"]
    backed_up = [live(srv, b["id"]) for b in j.branches]

    def restore():
        time.sleep(0.3)  # the writers are under way
        r = srv.api("POST", f"/api/backups/{name}/restore", token=srv.admin_token, timeout=120)
        assert_json(r, 200)
        srv._admin_token = None  # the restore ended every session: log in again

    # A write checked before the restore and written after it may refer to a record the
    # restore removed (a student made since the backup): 409, and the failed statement's line.
    srv.allowed_log_patterns.append(r"JR01005: statement entry_\w+ failed: (FOREIGN KEY|.*violates foreign key)")
    j.run(["create", "create", "trash", "move"], stop_on_401=True, during=restore, also_ok=(409,))
    # Entries written after the restore stay; the keys (dropped by it) are made again.
    for b in j.branches:
        b["key"] = make_key(srv, [b["id"]])
    assert_counts_right(srv, j.branches)
    assert sum(live(srv, b["id"]) for b in j.branches) >= sum(backed_up) - OPS


def test_migration_0013_keeps_the_counts(fresh_server):
    """A database written at version 12 (one count row per branch, kept by 0004's triggers)."""
    srv = old_database(fresh_server, 12)
    north_q = "SELECT id FROM branches WHERE name = 'Old North'"
    north, south = f"({north_q})", "(SELECT id FROM branches WHERE name = 'Old South')"
    group_q = "SELECT id FROM study_groups WHERE name = 'Group One'"
    for i in range(5):
        harness.sql_exec(srv, "INSERT INTO entries (student_name, group_id, branch_id,"
                              " description, created_at, updated_at) VALUES"
                              f" ('Old {i}', ({group_q}), {north}, 'old', '2025-09-01T08:00:00Z',"
                              " '2025-09-01T08:00:00Z')")
    harness.sql_exec(srv, "UPDATE entries SET deleted_at = '2025-09-02T08:00:00Z'"
                          " WHERE student_name = 'Old 0'")
    harness.sql_exec(srv, f"UPDATE entries SET branch_id = {south} WHERE student_name = 'Old 1'")
    before = {b: counted_by(srv, b) for b in (north, south)}
    assert before == {north: 4, south: 1}  # 'old entry', Old 2-4 / Old 1
    proc = srv.admin_cli("migrate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = MIGRATE_RE.search(proc.stdout)
    assert m and int(m.group(2)) >= 13, proc.stdout
    assert {b: counted_by(srv, b) for b in (north, south)} == before
    assert sql_int(srv, "SELECT COUNT(*) FROM entry_counts WHERE slot <> 0") == 0
    srv.start()
    # The new triggers count on from the migrated rows.
    north_id = sql_int(srv, north_q)
    r = srv.api("POST", "/api/entries", token=srv.admin_token,
                json={"student_name": "New", "group_id": sql_int(srv, group_q)})
    assert_json(r, 201)
    assert counted(srv, north_id) == live(srv, north_id) == 5
    r = srv.api("DELETE", f"/api/entries/{r.json()['id']}", token=srv.admin_token)
    assert r.status_code in (200, 204), r.text
    assert counted(srv, north_id) == live(srv, north_id) == 4


def counted_by(srv, branch_sql):
    return sql_int(srv, f"SELECT COALESCE(SUM(live), 0) FROM entry_counts WHERE branch_id = "
                        f"{branch_sql}")


# ---- PostgreSQL: writers of one branch do not wait for each other ---------------------------
def hold_open(srv, sql):
    """A psql session that runs sql in a transaction and then stays in it (sleeping)."""
    script = f"BEGIN;\n{sql};\nSELECT pg_sleep(120);\nCOMMIT;\n"
    cmd = [harness.pg_bindir() + "/psql", "-h", "127.0.0.1", "-p", harness.PG_PORT, "-U",
           "postgres", "-d", srv.pg_dbname, "-X", "-q", "-v", "ON_ERROR_STOP=1"]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    proc.stdin.write(script)
    proc.stdin.close()
    deadline = time.monotonic() + 60
    while sql_int(srv, "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()"
                       " AND query LIKE 'SELECT pg_sleep(120)%'") == 0:
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the open transaction did not start"
        time.sleep(0.05)
    return proc


def end_held(srv, proc):
    harness.psql("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = "
                 f"'{srv.pg_dbname}' AND query LIKE 'SELECT pg_sleep(120)%'")
    proc.wait(timeout=60)


@pytest.mark.skipif(harness.DB_KIND != "pgsql", reason="PostgreSQL's row locks")
@pytest.mark.parametrize("held", ["insert", "trash"])
def test_pg_writers_of_a_branch_do_not_wait_for_each_other(fresh_server, held):
    """Another transaction has written an entry of the branch and not committed: creating and
    trashing entries of that branch still answer at once (before 0013 they waited for it)."""
    srv = fresh_server()
    j = Journal(srv)
    b = j.branches[0]
    http = requests.Session()
    for _ in range(3):
        assert j.create(http, b) == 201
    victim, target = j.ids[0], j.ids[1]
    sql = (f"INSERT INTO entries (student_name, group_id, branch_id, description, created_at,"
           f" updated_at) VALUES ('Held', {b['group']}, {b['id']}, '', '2026-01-01T00:00:00Z',"
           f" '2026-01-01T00:00:00Z')" if held == "insert" else
           f"UPDATE entries SET deleted_at = '2026-01-01T00:00:00Z' WHERE id = {victim}")
    proc = hold_open(srv, sql)
    try:
        # Each in its own transaction, from several connections at once.
        out = []

        def one(kind):
            s = requests.Session()
            try:
                if kind == "create":
                    out.append(j.create(s, b, timeout=20))
                else:
                    status = s.delete(f"{srv.base_url}/api/v1/entries/{target}",
                                      headers={"X-Api-Key": j.key}, timeout=20).status_code
                    out.append(201 if status in (200, 204) else status)
            except requests.Timeout:
                out.append("timeout")
            finally:
                s.close()

        started = time.monotonic()
        threads = [threading.Thread(target=one, args=(k,))
                   for k in ["create", "create", "create", "trash"]]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=90)
        assert out == [201] * 4, out
        assert time.monotonic() - started < 20
    finally:
        end_held(srv, proc)
    # The held transaction was rolled back: nothing of it is counted.
    assert_counts_right(srv, j.branches)
    assert sql_scalar(srv, "SELECT COUNT(*) FROM entries WHERE student_name = 'Held'") == "0"


# ---- one version of the row per create ------------------------------------------------------
UPDATE_LOG = {
    "sqlite": "CREATE TABLE entry_updates (id INTEGER);"
              " CREATE TRIGGER entry_updates AFTER UPDATE ON entries"
              " BEGIN INSERT INTO entry_updates VALUES (NEW.id); END;",
    "pgsql": "CREATE TABLE entry_updates (id BIGINT);"
             " CREATE FUNCTION entry_updates() RETURNS trigger LANGUAGE plpgsql AS $$"
             " BEGIN INSERT INTO entry_updates VALUES (NEW.id); RETURN NULL; END $$;"
             " CREATE TRIGGER entry_updates AFTER UPDATE ON entries"
             " FOR EACH ROW EXECUTE FUNCTION entry_updates();",
}


@pytest.mark.parametrize("checks", ["true", "false"])
def test_a_created_entry_is_written_once(fresh_server, checks):
    """The entry's AI status is in the INSERT: no UPDATE of the new row in the create's
    transaction (each is another version of the row, its index entries and WAL)."""
    srv = fresh_server()
    r = srv.api("PUT", "/api/settings", token=srv.admin_token, json={"entry_ai_enabled": checks})
    assert_json(r, 200)
    harness.sql_script(srv, UPDATE_LOG[srv.db_kind])
    j = Journal(srv)
    http = requests.Session()
    assert j.create(http, j.branches[0]) == 201
    entry = j.ids[0]
    assert sql_int(srv, "SELECT COUNT(*) FROM entry_updates") == 0
    got = assert_json(srv.api("GET", f"/api/v1/entries/{entry}",
                              headers={"X-Api-Key": j.key}), 200)
    jobs = sql_int(srv, f"SELECT COUNT(*) FROM ai_jobs WHERE entity_id = {entry}"
                        " AND entity_type = 'entry' AND status = 'pending'")
    events = sql_int(srv, f"SELECT COUNT(*) FROM events WHERE entity_id = {entry}"
                          " AND type = 'ai_status'")
    if checks == "true":
        assert (got["ai_status"], jobs, events) == ("pending", 1, 1), got
    else:
        assert (got["ai_status"], jobs, events) == (None, 0, 0), got
