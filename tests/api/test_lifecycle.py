"""Server lifecycle: restart and persistence, migrations, configuration checks, health when
the database is gone."""

import glob
import os
import re
import signal
import time

import pytest

import harness
from harness import assert_json, psql, sql_int, uniq

MIGRATE_RE = re.compile(r"migrations: (\d+) applied, schema version (\S+)")


def test_data_and_sessions_survive_restart(fresh_server):
    srv = fresh_server()
    token = srv.admin_token
    branch = srv.create_branch()
    tutor, tutor_token = srv.create_tutor(branch_ids=[branch["id"]])
    old_pid = srv.pid

    srv.restart()
    assert srv.pid != old_pid

    got = assert_json(srv.api("GET", f"/api/branches/{branch['id']}", token=token), 200)
    assert got["name"] == branch["name"]
    me = assert_json(srv.api("GET", "/api/auth/me", token=token), 200)["user"]
    assert me["username"] == srv.admin_username
    me = assert_json(srv.api("GET", "/api/auth/me", token=tutor_token), 200)["user"]
    assert me["id"] == tutor["id"] and me["branch_ids"] == [branch["id"]]
    assert srv.login(tutor["username"], tutor["_password"])


def schema_migration_count(srv):
    return sql_int(srv, "SELECT count(*) FROM schema_migrations")


def run_migrate(srv):
    proc = srv.admin_cli("migrate")
    assert proc.returncode == 0, f"migrate exited {proc.returncode}: {proc.stdout}{proc.stderr}"
    m = MIGRATE_RE.search(proc.stdout)
    assert m, f"unexpected migrate output: {proc.stdout!r} {proc.stderr!r}"
    return int(m.group(1)), m.group(2)


def test_migrations_are_idempotent(fresh_server):
    srv = fresh_server(start=False)  # an empty database
    applied1, version1 = run_migrate(srv)
    assert applied1 >= 1
    count1 = schema_migration_count(srv)
    assert count1 >= applied1

    applied2, version2 = run_migrate(srv)
    assert applied2 == 0
    assert version2 == version1
    assert schema_migration_count(srv) == count1

    # The migrated database serves requests.
    srv.start()
    assert assert_json(srv.api("GET", "/api/health"), 200)["db"] == "ok"
    applied3, version3 = run_migrate(srv)
    assert (applied3, version3) == (0, version1)
    assert schema_migration_count(srv) == count1


# ---- configuration checks ---------------------------------------------------------------------
@pytest.mark.parametrize("line,directive", [
    ("JournalSessionLifetime banana", "JournalSessionLifetime"),
    ("JournalSessionLifetime 59", "JournalSessionLifetime"),
    ("JournalSessionLifetime 10s", "JournalSessionLifetime"),
    ("JournalMaxBodySize -5", "JournalMaxBodySize"),
    ("JournalMaxBodySize lots", "JournalMaxBodySize"),
    ("JournalBcryptCost 99", "JournalBcryptCost"),
    ("JournalBcryptCost x", "JournalBcryptCost"),
    ("JournalLoginThrottleThreshold 0", "JournalLoginThrottleThreshold"),
    ("JournalLoginThrottleThreshold many", "JournalLoginThrottleThreshold"),
    ("JournalLoginThrottleWindow 5", "JournalLoginThrottleWindow"),
    ("JournalLoginThrottleWindow 2d", "JournalLoginThrottleWindow"),
    ("JournalLoginThrottleMaxBackoff 0", "JournalLoginThrottleMaxBackoff"),
    ("JournalLoginThrottleMaxBackoff 2h", "JournalLoginThrottleMaxBackoff"),
    ("JournalCounterSlots 63", "JournalCounterSlots"),
    ("JournalCounterSlots 2000000", "JournalCounterSlots"),
    ("JournalSQLiteBusyTimeout 99", "JournalSQLiteBusyTimeout"),
    ("JournalSQLiteBusyTimeout 5s", "JournalSQLiteBusyTimeout"),
])
def test_invalid_directive_fails_config_test(fresh_server, line, directive):
    srv = fresh_server(line, start=False)
    proc = srv.config_test()
    assert proc.returncode != 0, f"apache2 -t accepted {line!r}: {proc.stdout}{proc.stderr}"
    assert directive in proc.stderr + proc.stdout, \
        f"no mention of {directive} in: {proc.stdout}{proc.stderr}"


@pytest.mark.parametrize("line", [
    "",
    "JournalSessionLifetime 2h",
    "JournalSessionLifetime 60",
    "JournalSessionLifetime 7d",
    "JournalMaxBodySize 2K",
    "JournalMaxBodySize 1048576",
    "JournalBcryptCost 10",
    "JournalLoginThrottleThreshold 1",
    "JournalLoginThrottleWindow 1d",
    "JournalLoginThrottleMaxBackoff 1h",
    "JournalCounterSlots 100000",
    "JournalSQLiteBusyTimeout 600000",
])
def test_valid_directive_passes_config_test(fresh_server, line):
    srv = fresh_server(line, start=False)
    proc = srv.config_test()
    assert proc.returncode == 0, f"apache2 -t refused {line!r}: {proc.stdout}{proc.stderr}"


# ---- health without a database ------------------------------------------------------------------
def _rename_db(old, new, timeout=15.0):
    """Renames a PostgreSQL database, kicking out the pooled connections of httpd first."""
    deadline = time.monotonic() + timeout
    while True:
        psql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{old}'")
        proc = psql(f'ALTER DATABASE "{old}" RENAME TO "{new}"', check=False)
        if proc.returncode == 0:
            return
        if "is being accessed by other users" not in proc.stderr or time.monotonic() > deadline:
            raise RuntimeError(f"rename {old} -> {new} failed: {proc.stderr}")
        time.sleep(0.1)


def _poll_health(srv, want_status, timeout):
    deadline = time.monotonic() + timeout
    while True:
        r = srv.api("GET", "/api/health")
        if r.status_code == want_status or time.monotonic() > deadline:
            return r
        time.sleep(0.1)


# What a database outage may log, and nothing else: mod_dbd failing to open, prepare or check
# a connection (also in a child that is still starting: AH00632/AH00633/AH00636), and the
# module's failed statements and transactions. A crash or a sanitizer report is never among
# them (harness.CRASH_RE lines are problems whatever a test allows).
OUTAGE_LOG_PATTERNS = [
    r"\[dbd:error\] .*AH00629: Can't connect to pgsql: ",
    r"\[dbd:error\] .*AH00632: failed to prepare SQL statements: ",
    r"\[dbd:error\] .*AH00633: failed to initialise$",
    r"\[dbd:crit\] .*AH00636: child init failed!$",
    r"\[dbd:error\] .*AH00639: DBD \[pgsql\] Error: ",
    r"\[dbd:error\] .*AH02655: Failed to acquire DBD connection from pool!",
    r"\[journal:error\] .*JR01005: statement [a-z0-9_]+ failed: ",
    r"\[journal:error\] .*JR01006: (?:BEGIN|COMMIT|ROLLBACK)\b.* failed: ",
    r"\[journal:error\] .*JR01003: cannot prepare statement [a-z0-9_]+: ",
    r"\[journal:error\] .*JR00007: cannot prepare statements on a new connection$",
]


def assert_no_crash(srv):
    crashes = srv.crash_lines()
    assert not crashes, "a child crashed or a sanitizer reported:\n  " + "\n  ".join(crashes)


@pytest.mark.skipif(harness.DB_KIND != "pgsql",
                    reason="needs PostgreSQL: a SQLite database cannot be taken away reliably "
                           "from a running server")
def test_health_reports_database_outage(fresh_server):
    srv = fresh_server()
    srv.allowed_log_patterns += OUTAGE_LOG_PATTERNS
    assert_json(srv.api("GET", "/api/health"), 200)

    hidden = uniq("jr_hidden")
    _rename_db(srv.pg_dbname, hidden)
    try:
        r = _poll_health(srv, 503, timeout=10)
        body = assert_json(r, 503)
        assert body["status"] != "ok" and body["db"] != "ok", body
        assert isinstance(body["version"], str) and body["version"]
        assert r.headers.get("Cache-Control") == "no-store"
    finally:
        _rename_db(hidden, srv.pg_dbname)

    r = _poll_health(srv, 200, timeout=10)
    body = assert_json(r, 200)
    assert (body["status"], body["db"]) == ("ok", "ok")
    # Requests that need the database work again.
    assert_json(srv.api("GET", "/api/auth/me", token=srv.admin_token), 200)
    assert_no_crash(srv)


@pytest.mark.skipif(harness.DB_KIND != "pgsql",
                    reason="needs PostgreSQL: server-side connections are terminated")
def test_recovers_after_database_connections_are_terminated(fresh_server):
    """What a PostgreSQL restart does to the pooled connections: the server must recover."""
    srv = fresh_server()
    srv.allowed_log_patterns += OUTAGE_LOG_PATTERNS
    token = srv.admin_token
    assert_json(srv.api("GET", "/api/auth/me", token=token), 200)

    psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
         f"WHERE datname = '{srv.pg_dbname}'")

    r = _poll_health(srv, 200, timeout=10)
    assert_json(r, 200)
    assert_json(srv.api("GET", "/api/auth/me", token=token), 200)
    branch = srv.create_branch()
    got = assert_json(srv.api("GET", f"/api/branches/{branch['id']}", token=token), 200)
    assert got["name"] == branch["name"]
    assert_no_crash(srv)


def _children(pid):
    kids = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.split("/")[2]))
    return kids


def test_a_crashed_child_is_a_problem_whatever_a_test_allows(fresh_server):
    """httpd replaces a crashed child and the server keeps answering: only the error log tells.
    Its crash line stays a problem even when a test allows that very line."""
    srv = fresh_server()
    srv.allowed_log_patterns += [r"\[core:notice\] .*AH00052: child pid \d+ exit signal "
                                 r"Segmentation fault"]
    assert_json(srv.api("GET", "/api/health"), 200)
    victim = _children(srv.pid)[0]
    os.kill(victim, signal.SIGSEGV)
    deadline = time.monotonic() + 20
    while not srv.crash_lines() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert srv.crash_lines(), srv.read_error_log()
    assert_json(_poll_health(srv, 200, timeout=10), 200)  # the server itself carries on
    problems = srv.new_log_problems()
    assert any(harness.CRASH_RE.search(l) for l in problems), problems
    srv.had_problems = False  # seen and expected here: the temp dir may go


def test_health_names_the_database_of_the_run(server):
    body = assert_json(server.api("GET", "/api/health"), 200)
    assert body["database"] == {"sqlite": "sqlite3", "pgsql": "pgsql"}[harness.DB_KIND]
