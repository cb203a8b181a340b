"""Upgrades with data: a database built at each older schema version (by applying the
migration files of sql/<dialect>/ up to that version, as the migrator does) and filled with
representative rows of every table that version has, is migrated to the latest version, by
`journal-admin migrate` or by the server at startup (JournalMigrate On); the API then serves
the old rows. With JournalMigrate Off the server leaves the schema alone."""

import functools
import hashlib
import os
import re
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest

import harness
from harness import assert_error, assert_json, sql_exec, sql_int, sql_scalar, sql_script

MIGRATION_RE = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
MIGRATE_RE = re.compile(r"migrations: (\d+) applied, schema version (\d+)")
T0, T1 = "2025-09-01T08:00:00Z", "2025-09-02T09:30:00Z"
ADMIN_PASSWORD = "Old-admin-pw-42"
SESSION_TOKEN = "5e" * 32  # a tutor's session from before the upgrade
# An API key in the format of jr_keys.c: "wsk_", 43 base-62 digits, a base-62 CRC-32.
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
BANNED_IP, EXPIRED_BAN_IP = "203.0.113.250", "203.0.113.251"


def migrations(dialect):
    """[(version, name, path)] of sql/<dialect>/, in order."""
    out = []
    for path in sorted((harness.REPO / "sql" / dialect).iterdir()):
        m = MIGRATION_RE.match(path.name)
        if m:
            out.append((int(m.group(1)), path.stem, path))
    return out


LATEST = migrations("sqlite")[-1][0]
assert [m[0] for m in migrations("sqlite")] == [m[0] for m in migrations("pgsql")] == \
    list(range(1, LATEST + 1)), "sql/sqlite and sql/pgsql must hold the same numbers"
OLDER = list(range(1, LATEST))


def api_key():
    body = "".join(B62[(i * 7 + 3) % 62] for i in range(43))
    crc, check = zlib.crc32(("wsk_" + body).encode()), ""
    for _ in range(6):
        check = B62[crc % 62] + check
        crc //= 62
    return "wsk_" + body + check


API_KEY = api_key()


def sha(data):
    return hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()


def png():
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\x10\x80\x10")) + chunk(b"IEND", b""))


FILE_BYTES, PHOTO_BYTES = b"notes from before the upgrade\n", png()
FILE_NAME, PHOTO_NAME = "files/ab/" + "ab" * 16, "photos/cd/" + "cd" * 16


@functools.lru_cache(maxsize=None)
def password_hash():
    """A bcrypt hash of ADMIN_PASSWORD made by journal-admin itself (on a scratch database)."""
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "donor.db")
        env = harness.cli_env()
        env["JOURNAL_PASSWORD"] = ADMIN_PASSWORD
        proc = subprocess.run([str(harness.ADMIN_CLI), "--driver", "sqlite3", "--params", db,
                               "--cost", "4", "create-user", "donor", "--role", "admin"],
                              capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0 and not harness.sanitizer_lines(proc.stderr), proc.stderr
        import sqlite3
        con = sqlite3.connect(db)
        try:
            return con.execute("SELECT password_hash FROM users").fetchone()[0]
        finally:
            con.close()


# ---- building an old database ---------------------------------------------------------------
def build_schema(srv, version):
    """Applies the migration files up to `version` and records them as jr_migrate.c does."""
    dialect = "sqlite" if srv.db_kind == "sqlite" else "pgsql"
    sql_script(srv, "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
                    " name TEXT NOT NULL, applied_at TEXT NOT NULL);")
    for v, name, path in migrations(dialect):
        if v <= version:
            sql_script(srv, path.read_text() + "\nINSERT INTO schema_migrations (version, name,"
                            f" applied_at) VALUES ({v}, '{name}', '{T0}');\n")
    assert schema_version(srv) == version


def schema_version(srv):
    return sql_int(srv, "SELECT MAX(version) FROM schema_migrations")


def q_id(table, where):
    return f"(SELECT id FROM {table} WHERE {where})"


NORTH, SOUTH = q_id("branches", "name = 'Old North'"), q_id("branches", "name = 'Old South'")
ADMIN, TUTOR = q_id("users", "username = 'admin'"), q_id("users", "username = 'oldtutor'")
GROUP = q_id("study_groups", "name = 'Group One'")
ENTRY = q_id("entries", "description = 'old entry'")


def rows_of_version(version):
    """The representative rows of the tables migration `version` creates."""
    h = password_hash()
    if version == 1:  # accounts, sessions, branches, groups, audit
        return [
            f"INSERT INTO branches (name, created_at, updated_at) VALUES ('Old North', '{T0}', '{T0}')",
            f"INSERT INTO branches (name, created_at, updated_at) VALUES ('Old South', '{T0}', '{T0}')",
            *(f"INSERT INTO users (username, password_hash, role, active, created_at, updated_at)"
              f" VALUES ('{u}', '{h}', '{role}', {active}, '{T0}', '{T0}')"
              for u, role, active in (("admin", "admin", 1), ("oldtutor", "tutor", 1),
                                      ("gone", "tutor", 0))),
            f"INSERT INTO user_branches (user_id, branch_id) VALUES ({TUTOR}, {NORTH})",
            "INSERT INTO sessions (token_hash, user_id, created_at, expires_at, client_ip) VALUES"
            f" ('{sha(SESSION_TOKEN)}', {TUTOR}, '{T0}', '2099-01-01T00:00:00Z', '192.0.2.1')",
            "INSERT INTO study_groups (name, branch_id, tutor_id, created_at, updated_at) VALUES"
            f" ('Group One', {NORTH}, {TUTOR}, '{T0}', '{T0}')",
            "INSERT INTO study_groups (name, branch_id, created_at, updated_at, deleted_at,"
            f" deleted_by) VALUES ('Group Gone', {SOUTH}, '{T0}', '{T0}', '{T1}', {ADMIN})",
            "INSERT INTO audit_log (created_at, actor_user_id, via_api_key, client_ip, action,"
            f" entity_type, entity_id, changes) VALUES ('{T0}', {ADMIN}, 0, '192.0.2.1', 'create',"
            f" 'branch', CAST({NORTH} AS TEXT), '[\"name\"]')",
        ]
    if version == 2:  # API keys, bans
        return [
            "INSERT INTO api_keys (name, prefix, key_hash, scopes, rate_limit_per_min, branch_ids,"
            " created_at, created_by, updated_at) VALUES ('old key', "
            f"'{API_KEY[:12]}', '{sha(API_KEY)}', 'read,write', 100,"
            f" '[' || CAST({NORTH} AS TEXT) || ']', '{T0}', {ADMIN}, '{T0}')",
            "INSERT INTO ip_bans (ip, reason, created_at, expires_at) VALUES"
            f" ('{BANNED_IP}', 'honeypot', '{T0}', '2099-01-01T00:00:00Z')",
            "INSERT INTO ip_bans (ip, reason, created_at, expires_at) VALUES"
            f" ('{EXPIRED_BAN_IP}', 'login-bruteforce', '{T0}', '2020-01-01T00:00:00Z')",
        ]
    if version == 3:  # settings
        return [f"INSERT INTO settings (name, value, updated_at, updated_by) VALUES"
                f" ('{k}', '{v}', '{T0}', {ADMIN})"
                for k, v in (("timezone", "Asia/Tokyo"), ("entry_ai_enabled", "false"))]
    if version == 4:  # students, modules, entries, files, photos, AI jobs
        return [
            "INSERT INTO modules (name, lessons_count, description, created_at, updated_at)"
            f" VALUES ('Old Module', 8, 'from before', '{T0}', '{T0}')",
            "INSERT INTO students (name, name_key, group_id, notes, created_at, updated_at,"
            f" created_by) VALUES ('Ada Old', 'ada old', {GROUP}, 'likes maths', '{T0}', '{T0}',"
            f" {ADMIN})",
            "INSERT INTO entries (student_name, student_id, group_id, branch_id, description,"
            " module_id, ai_status, created_at, updated_at, created_by) VALUES ('Ada Old',"
            f" {q_id('students', 'name_key = ' + repr('ada old'))}, {GROUP}, {NORTH}, 'old entry',"
            f" {q_id('modules', 'name = ' + repr('Old Module'))}, 'failed', '{T0}', '{T0}', {ADMIN})",
            "INSERT INTO entry_files (entry_id, name, stored_name, size, content_type, sha256,"
            f" created_at, created_by) VALUES ({ENTRY}, 'notes.txt', '{FILE_NAME}',"
            f" {len(FILE_BYTES)}, 'text/plain', '{sha(FILE_BYTES)}', '{T0}', {ADMIN})",
            "INSERT INTO photos (owner_type, owner_id, role, stored_name, size, content_type,"
            f" sha256, created_at, created_by) VALUES ('entry', {ENTRY}, 'current', '{PHOTO_NAME}',"
            f" {len(PHOTO_BYTES)}, 'image/png', '{sha(PHOTO_BYTES)}', '{T0}', {ADMIN})",
            "INSERT INTO ai_jobs (entity_type, entity_id, branch_id, status, attempts, last_error,"
            f" created_at, updated_at) VALUES ('entry', {ENTRY}, {NORTH}, 'failed', 3, 'old',"
            f" '{T0}', '{T0}')",
        ]
    if version == 5:  # lesson reports with versions, photo jobs
        report = q_id("lesson_reports", "lesson_date = '2025-09-01'")
        return [
            "INSERT INTO lesson_reports (group_id, branch_id, lesson_date, lesson_time, text,"
            f" topic, created_at, updated_at, created_by) VALUES ({GROUP}, {NORTH}, '2025-09-01',"
            f" '10:00', 'old report, edited', 'Fractions', '{T0}', '{T1}', {ADMIN})",
            "INSERT INTO lesson_report_versions (report_id, text, source, created_at, created_by)"
            f" VALUES ({report}, 'old report', 'create', '{T0}', {ADMIN})",
            "INSERT INTO lesson_report_versions (report_id, text, source, created_at, created_by)"
            f" VALUES ({report}, 'old report, edited', 'edit', '{T1}', {ADMIN})",
            "INSERT INTO photo_jobs (entry_id, branch_id, action, status, attempts, created_at,"
            f" updated_at) VALUES ({ENTRY}, {NORTH}, 'ai', 'queued', 0, '{T0}', '{T0}')",
        ]
    return []  # a newer migration: its tables start empty here


def old_database(fresh_server, version, extra_conf=""):
    """A server (not started) whose database is at `version`, filled."""
    srv = fresh_server(extra_conf, start=False)
    build_schema(srv, version)
    for v in range(1, version + 1):
        statements = rows_of_version(v)
        if statements:
            sql_exec(srv, *statements)
    if version >= 4:
        for name, data in ((FILE_NAME, FILE_BYTES), (PHOTO_NAME, PHOTO_BYTES)):
            path = Path(srv.data_dir, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        srv._chown_tree(srv.data_dir)
    srv.use_existing_admin("admin", ADMIN_PASSWORD)
    return srv


# ---- what the API must serve afterwards -----------------------------------------------------
def get(srv, path, **params):
    return assert_json(srv.api("GET", path, token=srv.admin_token, params=params), 200)


def check_served(srv, version):
    """The rows of versions 1..`version` as the API shows them, and new writes beside them."""
    health = assert_json(srv.api("GET", "/api/health"), 200)
    assert health["schema_version"] == LATEST, health
    branches = {b["name"]: b for b in get(srv, "/api/branches", limit=1000)}
    north, south = branches["Old North"]["id"], branches["Old South"]["id"]
    me = assert_json(srv.api("GET", "/api/auth/me", token=SESSION_TOKEN), 200)["user"]
    assert (me["username"], me["role"], me["branch_ids"]) == ("oldtutor", "tutor", [north])
    assert_error(srv.api("POST", "/api/auth/login", ip="192.0.2.77",
                         json={"username": "gone", "password": ADMIN_PASSWORD}), 401)
    group = get(srv, "/api/groups", branch_id=north)
    assert [(g["name"], g["tutor_id"]) for g in group] == [("Group One", me["id"])]
    group = group[0]
    gone = [t for t in get(srv, "/api/trash", limit=1000) if t["type"] == "group"]
    assert [t["name"] for t in gone] == ["Group Gone"]
    audit = get(srv, "/api/audit", entity_type="branch", entity_id=str(north))["items"]
    assert [(a["action"], a["client_ip"], a["created_at"]) for a in audit] == \
        [("create", "192.0.2.1", T0)]
    if version >= 2:
        key = {"X-Api-Key": API_KEY}
        got = assert_json(srv.api("GET", "/api/v1/me", headers=key), 200)["key"]
        assert got["branch_ids"] == [north] and sorted(got["scopes"]) == ["read", "write"], got
        seen = assert_json(srv.api("GET", "/api/v1/branches", headers=key), 200)["items"]
        assert [b["id"] for b in seen] == [north]
        assert [b["ip"] for b in get(srv, "/api/bans")] == [BANNED_IP]
        assert_error(srv.api("GET", "/api/v1/me", headers=key, ip=BANNED_IP), 403)
        assert_json(srv.api("GET", "/api/v1/me", headers=key, ip=EXPIRED_BAN_IP), 200)
    if version >= 3:
        settings = get(srv, "/api/settings")
        assert (settings["timezone"], settings["entry_ai_enabled"]) == ("Asia/Tokyo", "false")
    if version >= 4:
        student = get(srv, "/api/students", group_id=group["id"])
        assert [(s["name"], s["notes"]) for s in student] == [("Ada Old", "likes maths")]
        modules = [m for m in get(srv, "/api/modules", limit=1000) if m["name"] == "Old Module"]
        assert [m["lessons_count"] for m in modules] == [8]
        entries = get(srv, "/api/entries", group_id=group["id"])
        assert len(entries) == 1, entries
        entry = entries[0]
        assert (entry["student_id"], entry["module_name"], entry["files_count"],
                entry["has_photo"], entry["ai_status"]) == \
            (student[0]["id"], "Old Module", 1, True, "failed"), entry
        files = get(srv, f"/api/entries/{entry['id']}/files")
        assert [(f["name"], f["sha256"]) for f in files] == [("notes.txt", sha(FILE_BYTES))]
        r = srv.api("GET", f"/api/entries/{entry['id']}/files/{files[0]['id']}",
                    token=srv.admin_token)
        assert r.status_code == 200 and r.content == FILE_BYTES
        r = srv.api("GET", f"/api/entries/{entry['id']}/photo", token=srv.admin_token)
        assert r.status_code == 200 and r.content == PHOTO_BYTES
        assert get(srv, "/api/ai/status")["failed"] == 1
    if version >= 5:
        reports = get(srv, "/api/lesson-reports", group_id=group["id"])
        assert [(r["text"], r["topic"]) for r in reports] == [("old report, edited", "Fractions")]
        versions = get(srv, f"/api/lesson-reports/{reports[0]['id']}/versions")
        assert [(v["text"], v["source"]) for v in versions] == \
            [("old report, edited", "edit"), ("old report", "create")]
        assert get(srv, "/api/photo-jobs/status")["queued"] == 1
    # New rows go in beside the old ones (PostgreSQL identities continue after them).
    new_branch = srv.create_branch()
    assert new_branch["id"] not in (north, south)
    new_group = srv.create_group(north)
    assert new_group["id"] != group["id"]
    if version >= 4:
        r = srv.api("POST", "/api/entries", token=srv.admin_token,
                    json={"student_name": "Ada Old", "group_id": group["id"]})
        assert assert_json(r, 201)["student_id"] == student[0]["id"]
        r = srv.api("GET", "/api/entries", token=srv.admin_token, params={"branch_id": north})
        assert assert_json(r, 200) and r.headers["X-Total-Count"] == "2"


# ---- the tests ------------------------------------------------------------------------------
@pytest.mark.parametrize("version", OLDER)
def test_migrate_a_database_with_data(fresh_server, version):
    srv = old_database(fresh_server, version)
    proc = srv.admin_cli("migrate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    m = MIGRATE_RE.search(proc.stdout)
    assert m and (int(m.group(1)), int(m.group(2))) == (LATEST - version, LATEST), proc.stdout
    assert schema_version(srv) == LATEST
    srv.start()
    check_served(srv, version)


def test_server_migrates_at_startup(fresh_server):
    """JournalMigrate On (the default): the server itself upgrades the oldest schema."""
    srv = old_database(fresh_server, 1)
    srv.start()
    assert schema_version(srv) == LATEST
    check_served(srv, 1)


SCHEMA_BEHIND = "database schema is older than this module: run journal-admin migrate"


def schema_behind_log(version):
    """The one problem line a schema older than the module's gives: one per connection."""
    return (rf"\[journal:error\] .*JR01030: database schema version {version} is older than this"
            rf" module's {LATEST}: nothing is served until journal-admin migrate has run$")


def assert_nothing_served(srv, version):
    """Every request answers 503 naming journal-admin migrate; /api/health says why."""
    health = assert_json(srv.api("GET", "/api/health"), 503)
    assert (health["status"], health["db"], health["schema_version"],
            health["schema_needed"]) == ("error", "schema behind", version, LATEST), health
    assert health["database"] == harness.HEALTH_DATABASE[srv.db_kind], health
    for method, path, kw in (
            ("GET", "/api/auth/me", {"token": SESSION_TOKEN}),
            ("POST", "/api/auth/login", {"json": {"username": "admin",
                                                  "password": ADMIN_PASSWORD}}),
            ("GET", "/api/branches", {"token": SESSION_TOKEN}),
            ("GET", "/api/v1/me", {"headers": {"X-Api-Key": API_KEY}}),
            ("GET", "/api/v1/no-such-path", {"headers": {"X-Api-Key": API_KEY}})):
        body = assert_error(srv.api(method, path, **kw), 503)
        assert body["error"] == SCHEMA_BEHIND, (method, path, body)


def test_migrate_off_leaves_the_schema_alone(fresh_server):
    """JournalMigrate Off: no migration at startup; nothing is served until journal-admin
    migrate has run (docs/directives.md), then everything is."""
    version = 3
    srv = old_database(fresh_server, version, "JournalMigrate Off")
    # Each connection reads the schema version when it opens, prepares nothing when it is
    # older than the module's, and says so: that line, and nothing else.
    srv.allowed_log_patterns += [schema_behind_log(version)]
    srv.start(health=503)
    assert schema_version(srv) == version
    assert_nothing_served(srv, version)
    srv.stop()
    assert schema_version(srv) == version
    assert re.search(schema_behind_log(version), srv.read_error_log(), re.M)
    proc = srv.admin_cli("migrate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    srv.start()
    check_served(srv, version)


def test_schema_one_version_behind_is_not_served_until_migrated(fresh_server):
    """The version before the latest: the module's statements may all prepare on it (today's
    last migration only adds an index), yet it is refused all the same. journal-admin migrate
    while the server runs is enough: the next requests find the schema current."""
    version = LATEST - 1
    srv = old_database(fresh_server, version, "JournalMigrate Off")
    srv.allowed_log_patterns += [schema_behind_log(version)]
    srv.start(health=503)
    assert_nothing_served(srv, version)
    proc = srv.admin_cli("migrate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert schema_version(srv) == LATEST
    check_served(srv, version)
    assert "JR01031" in srv.read_error_log()


@pytest.mark.skipif(harness.DB_KIND != "sqlite", reason="SQLite's full-text indexes")
def test_migration_16_optimises_the_search_indexes(fresh_server):
    """Entries written one statement at a time leave the index in several segments (FTS5 merges
    only some of them as it goes); migration 0016 leaves one, so later inserts do not pay for
    working through them (docs/architecture.md §7.20)."""
    srv = old_database(fresh_server, 15)
    for i in range(24):
        sql_exec(srv, "INSERT INTO entries (student_name, group_id, branch_id, description,"
                      f" created_at, updated_at) VALUES ('Upgrade Student {i}', {GROUP}, {NORTH},"
                      f" 'notes number {i} on fractions', '{T0}', '{T0}')")
    segments = "SELECT COUNT(DISTINCT segid) FROM entries_fts_idx"
    assert sql_int(srv, segments) > 1
    proc = srv.admin_cli("migrate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sql_int(srv, segments) == 1
    srv.start()
    found = get(srv, "/api/entries", search="number 17 on frac")
    assert [e["student_name"] for e in found] == ["Upgrade Student 17"]


@pytest.mark.skipif(harness.DB_KIND != "sqlite", reason="SQLite's full-text indexes")
def test_migration_17_indexes_the_names_written_before_it(fresh_server):
    """Entries written before 0017 are found by their names and their descriptions after it:
    the distinct names (in one ASCII case) fill the names' index, the descriptions alone the
    entries' full-text index, and both indexes agree with their tables."""
    srv = old_database(fresh_server, 16)
    for i in range(12):
        name = ("Upgrade Student", "UPGRADE STUDENT", "Other Pupil")[i % 3]
        sql_exec(srv, "INSERT INTO entries (student_name, group_id, branch_id, description,"
                      f" created_at, updated_at) VALUES ('{name} {i % 2}', {GROUP}, {NORTH},"
                      f" 'notes number {i} on fractions', '{T0}', '{T0}')")
    proc = srv.admin_cli("migrate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    keys = "SELECT group_concat(name_key, '|') FROM (SELECT name_key FROM entry_names ORDER BY 1)"
    distinct = ("SELECT group_concat(k, '|') FROM"
                " (SELECT DISTINCT lower(student_name) AS k FROM entries ORDER BY 1)")
    assert sql_scalar(srv, keys) == sql_scalar(srv, distinct)
    assert "upgrade student 0" in sql_scalar(srv, keys).split("|")
    for t in ("entries_fts", "entry_names_fts"):
        sql_exec(srv, f"INSERT INTO {t} ({t}) VALUES ('integrity-check')")
    srv.start()
    by_name = get(srv, "/api/entries", search="grade student 1", limit=100)
    assert sorted(e["description"] for e in by_name) == sorted(
        f"notes number {i} on fractions" for i in range(12) if i % 3 < 2 and i % 2 == 1)
    by_description = get(srv, "/api/entries", search="number 10 on", limit=100)
    assert [e["student_name"] for e in by_description] == ["UPGRADE STUDENT 0"]
