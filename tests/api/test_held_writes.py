"""Writes held for the COMMIT (docs/architecture.md §7.22): on PostgreSQL a transaction's BEGIN
travels with its first statement, and the writes whose outcome only the COMMIT needs (the job,
the audit row, the events) travel with the COMMIT, in one round trip each (libpq's pipeline
mode). Counted from JR12141, which names the statements sent together, and JR12140, which
names every statement run, on the lines of the request's own id. A held write that fails
undoes its whole transaction, on both databases."""

import re

import pytest

import harness
from harness import assert_error, assert_json, sql_exec, sql_int, uniq

CONF = "LogLevel warn journal:debug\nJournalResponseCache Off\n"
PG = harness.DB_KIND == "pgsql"

# What a new entry runs, in order. On PostgreSQL the key's statement brings the settings for a
# route that writes; SQLite reads them in-process.
SETTINGS = [] if PG else ["settings_all"]
CREATE = (["key_auth_settings", "group_scope"] + SETTINGS +
          ["entry_insert", "notif_insert", "ai_job_open", "audit_insert", "event_insert_3"])


def log_of(srv, r, tag):
    rid = r.headers["X-Request-Id"]
    return re.findall(r"\[id " + re.escape(rid) + r"\s*\].*" + tag + r": (.*)$",
                      srv.read_error_log(), re.M)


def round_trips(srv, r):
    return [line.split(": ", 1)[1] for line in log_of(srv, r, "JR12141")]


def statements(srv, r):
    return [line.split(" ", 1)[1] for line in log_of(srv, r, "JR12140")]


def key_for(srv):
    key = srv.create_api_key(["read", "write"], 10000)
    assert_json(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": key}), 200)  # stamps last use
    return {"X-Api-Key": key}


def test_a_new_entry_sends_its_transaction_in_three_round_trips(fresh_server):
    srv = fresh_server(CONF)
    group = srv.create_group(srv.create_branch()["id"])
    h = key_for(srv)
    r = srv.api("POST", "/api/v1/entries", headers=h,
                json={"student_name": uniq("S"), "group_id": group["id"], "description": "x"})
    entry = assert_json(r, 201)
    # The workers' NOTIFY (PostgreSQL) is sent by the child's waker thread, not the request
    # (test_job_wakeups.py); SQLite's workers hear the file change.
    assert statements(srv, r) == CREATE
    if PG:
        # BEGIN with the entry; the notification alone (its id is in its event); the job, the
        # audit row and the three events with the COMMIT.
        assert round_trips(srv, r) == ["BEGIN entry_insert",
                                       "ai_job_open audit_insert event_insert_3 COMMIT"]
    else:
        assert round_trips(srv, r) == []  # SQLite runs each statement at once
    eid = entry["id"]
    assert sql_int(srv, f"SELECT COUNT(*) FROM ai_jobs WHERE entity_type = 'entry' "
                        f"AND entity_id = {eid} AND status = 'pending'") == 1
    assert sql_int(srv, f"SELECT COUNT(*) FROM audit_log WHERE entity_type = 'entry' "
                        f"AND entity_id = '{eid}' AND action = 'create'") == 1
    assert sql_int(srv, f"SELECT COUNT(*) FROM events WHERE entity_type = 'entry' "
                        f"AND entity_id = {eid}") == 2


def test_a_transaction_that_writes_nothing_sends_no_begin(fresh_server):
    srv = fresh_server(CONF)
    group = srv.create_group(srv.create_branch()["id"])
    h = key_for(srv)
    # A group that does not exist: refused before anything is written.
    r = srv.api("POST", "/api/v1/entries", headers=h,
                json={"student_name": uniq("S"), "group_id": group["id"] + 1000})
    assert_error(r, 400, "group_id")
    assert round_trips(srv, r) == []
    assert not [s for s in statements(srv, r) if "insert" in s]


FAIL_AUDIT = {
    "sqlite": ["CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log "
               "WHEN NEW.entity_type = 'entry' BEGIN SELECT RAISE(ABORT, 'refused'); END"],
    "pgsql": ["CREATE FUNCTION audit_refused() RETURNS trigger LANGUAGE plpgsql AS "
              "$$ BEGIN IF NEW.entity_type = 'entry' THEN RAISE EXCEPTION 'refused'; END IF; "
              "RETURN NEW; END $$",
              "CREATE TRIGGER audit_refused BEFORE INSERT ON audit_log "
              "FOR EACH ROW EXECUTE FUNCTION audit_refused()"],
}
ALLOW_AUDIT = {
    "sqlite": ["DROP TRIGGER audit_refused"],
    "pgsql": ["DROP TRIGGER audit_refused ON audit_log", "DROP FUNCTION audit_refused()"],
}


def counts(srv):
    return [sql_int(srv, f"SELECT COUNT(*) FROM {t}")
            for t in ("entries", "ai_jobs", "audit_log", "events", "notifications")]


@pytest.mark.parametrize("path", ["/api/v1/entries", "/api/entries"])
def test_a_held_write_that_fails_undoes_its_transaction(fresh_server, path):
    srv = fresh_server(CONF)
    group = srv.create_group(srv.create_branch()["id"])
    h = key_for(srv)
    auth = {"headers": h} if path.startswith("/api/v1") else {"token": srv.admin_token}
    srv.allowed_log_patterns.append(r"JR01005: statement audit_insert failed: (ERROR:  )?refused")
    before = counts(srv)
    sql_exec(srv, *FAIL_AUDIT[srv.db_kind])
    name = uniq("S")
    for _ in range(3):  # and the connections stay usable after each failure
        r = srv.api("POST", path, json={"student_name": name, "group_id": group["id"],
                                        "description": "x"}, **auth)
        assert_error(r, 500)
    if PG and path.startswith("/api/v1"):
        # the audit row failed in the COMMIT's round trip
        assert round_trips(srv, r)[-1] == "ai_job_open audit_insert event_insert_3 COMMIT"
    assert counts(srv) == before
    assert sql_int(srv, f"SELECT COUNT(*) FROM entries WHERE student_name = '{name}'") == 0
    sql_exec(srv, *ALLOW_AUDIT[srv.db_kind])
    for _ in range(3):
        assert_json(srv.api("POST", path, json={"student_name": name, "group_id": group["id"]},
                            **auth), 201)
    assert sql_int(srv, f"SELECT COUNT(*) FROM entries WHERE student_name = '{name}'") == 3


def test_more_held_writes_than_one_round_trip_carries(fresh_server):
    """Requeuing 40 failed checks raises 40 events: ten inserts of four, held with the audit
    row. A connection holds eight writes at most: the ninth sends them first."""
    srv = fresh_server(CONF)
    group = srv.create_group(srv.create_branch()["id"])
    ids = [assert_json(srv.api("POST", "/api/entries", token=srv.admin_token,
                               json={"student_name": uniq("S"), "group_id": group["id"],
                                     "description": "x"}), 201)["id"] for _ in range(40)]
    sql_exec(srv, "UPDATE ai_jobs SET status = 'failed' WHERE entity_type = 'entry'",
             "UPDATE entries SET ai_status = 'failed'")
    events_before = sql_int(srv, "SELECT COALESCE(MAX(id), 0) FROM events")
    r = srv.api("POST", "/api/ai/requeue-failed", token=srv.admin_token)
    assert assert_json(r, 200)["count"] == 40
    if PG:
        trips = round_trips(srv, r)
        assert trips[-2] == "audit_insert " + " ".join(["event_insert_4"] * 7)
        assert trips[-1] == " ".join(["event_insert_4"] * 3) + " COMMIT"
    else:
        assert round_trips(srv, r) == []
    # an event for each entry, none twice
    new = f"events WHERE id > {events_before} AND type = 'ai_status'"
    rows = harness.sql_scalar(
        srv, f"SELECT string_agg(entity_id::text, ',') FROM {new}" if PG
        else f"SELECT group_concat(entity_id, ',') FROM {new}")
    assert sorted(int(x) for x in rows.split(",")) == sorted(ids)
    assert sql_int(srv, "SELECT COUNT(*) FROM entries WHERE ai_status = 'pending'") == 40
    assert sql_int(srv, "SELECT COUNT(*) FROM audit_log WHERE action = 'requeue_failed'") == 1


def test_a_write_reads_the_settings_with_the_key_and_sees_every_change(fresh_server):
    """The settings a write route reads (checks on or off, notifications) come with the key's
    statement on PostgreSQL (one read on SQLite): never older than the request."""
    srv = fresh_server(CONF)
    group = srv.create_group(srv.create_branch()["id"])
    h = key_for(srv)

    def create():
        r = srv.api("POST", "/api/v1/entries", headers=h,
                    json={"student_name": uniq("S"), "group_id": group["id"], "description": "x"})
        entry = assert_json(r, 201)
        assert statements(srv, r)[0] == "key_auth_settings"
        assert [s for s in statements(srv, r) if s == "settings_all"] == SETTINGS
        notes = sql_int(srv, "SELECT COUNT(*) FROM notifications WHERE entity_type = 'entry' "
                             f"AND entity_id = {entry['id']}")
        return entry["ai_status"], notes

    assert create() == ("pending", 1)
    for body, want in [({"entry_ai_enabled": "false"}, (None, 1)),
                       ({"notify_enabled": False}, (None, 0)),
                       ({"entry_ai_enabled": "true"}, ("pending", 0)),
                       ({"notify_enabled": True}, ("pending", 1))]:
        assert_json(srv.api("PUT", "/api/settings", token=srv.admin_token, json=body), 200)
        assert create() == want, body
    # A read route does not carry them.
    r = srv.api("GET", "/api/v1/me", headers=h)
    assert_json(r, 200)
    assert statements(srv, r) == ["key_auth"]


@pytest.mark.skipif(not PG, reason="PostgreSQL's round trips: a session that ends in one")
def test_a_session_lost_in_a_held_round_trip_is_replaced(fresh_server):
    """The audit row ends its own server session in the COMMIT's round trip: the request is
    refused as a lost connection (503, retry), nothing of it stays, and the next requests
    get a working connection (reset or replaced by mod_dbd, its statements prepared again)."""
    srv = fresh_server(CONF)
    srv.allowed_log_patterns += [
        r"\[journal:error\] .*JR01005: statement [a-z0-9_]+ failed: ",
        r"\[journal:error\] .*JR01006: (?:BEGIN|COMMIT|ROLLBACK)\b.* failed: ",
        r"\[dbd:error\] .*AH00639: DBD \[pgsql\] Error: ",
        r"JR01008",
    ]
    group = srv.create_group(srv.create_branch()["id"])
    h = key_for(srv)
    before = counts(srv)
    sql_exec(srv,
             "CREATE FUNCTION audit_ends_session() RETURNS trigger LANGUAGE plpgsql AS "
             "$$ BEGIN IF NEW.entity_type = 'entry' THEN "
             "PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(5); END IF; "
             "RETURN NEW; END $$",
             "CREATE TRIGGER audit_ends_session BEFORE INSERT ON audit_log "
             "FOR EACH ROW EXECUTE FUNCTION audit_ends_session()")
    name = uniq("S")
    r = srv.api("POST", "/api/v1/entries", headers=h,
                json={"student_name": name, "group_id": group["id"], "description": "x"})
    assert_error(r, 503, "try again")
    assert round_trips(srv, r)[-1] == "ai_job_open audit_insert event_insert_3 COMMIT"
    assert counts(srv) == before
    sql_exec(srv, "DROP TRIGGER audit_ends_session ON audit_log",
             "DROP FUNCTION audit_ends_session()")
    for _ in range(12):  # more than the pooled connections of a child
        assert_json(srv.api("POST", "/api/v1/entries", headers=h,
                            json={"student_name": name, "group_id": group["id"]}), 201)
    assert sql_int(srv, f"SELECT COUNT(*) FROM entries WHERE student_name = '{name}'") == 12
    # the session did end in that round trip, at the held audit row
    log = srv.read_error_log()
    assert re.search(r"JR01005: statement audit_insert failed: FATAL: +terminating connection",
                     log), log
