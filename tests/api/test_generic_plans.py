"""Generic plans for the hot statements on PostgreSQL (docs/architecture.md §7.24, §7.28): the
key's lookup, the plain entry page and the indexed entry search run with plan_cache_mode =
force_generic_plan, every other statement with the database's default. The setting is the
server session's, so the module changes it only when the next statement wants the other one,
in the same round trip as that statement (JR12141 names the steps sent together). The answers
are the same either way."""

import pytest

import harness
from harness import assert_json, uniq
from test_held_writes import round_trips, statements

# One child with one pooled connection: every request below runs on the same server session,
# whose plan_cache_mode the module tracks.
CONF = ("StartServers 1\nServerLimit 1\nDBDMin 1\nDBDKeep 1\nDBDMax 1\n"
        "LogLevel warn journal:debug\nJournalResponseCache Off\n")
SET = "SET plan_cache_mode = force_generic_plan"
RESET = "RESET plan_cache_mode"

pytestmark = pytest.mark.skipif(harness.DB_KIND != "pgsql",
                                reason="plan_cache_mode is PostgreSQL's")


def get(srv, key, path):
    r = srv.api("GET", path, headers={"X-Api-Key": key})
    assert_json(r, 200)
    return r


def test_the_hot_list_and_an_indexed_search_stay_in_generic_plans_a_scan_leaves_them(fresh_server):
    srv = fresh_server(CONF)
    group = srv.create_group(srv.create_branch()["id"])
    name = uniq("Plan")
    for i in range(3):
        assert_json(srv.api("POST", "/api/entries", token=srv.admin_token,
                            json={"student_name": f"{name} {i}", "group_id": group["id"]}), 201)
    key = srv.create_api_key(["read"], 10000)
    plain = "/api/v1/entries?limit=50"
    first = get(srv, key, plain)  # the key's first use also stamps it
    # Once the session is in generic plans, the list sends no step of its own: each statement
    # is a round trip alone, as before.
    again = get(srv, key, plain)
    assert statements(srv, again) == ["key_auth", "entries_page_plain"]
    assert round_trips(srv, again) == []
    assert again.json()["items"] == first.json()["items"]
    # An indexed search (a term of three characters or more) keeps generic plans too: its
    # statements send no step (§7.28).
    found = get(srv, key, f"/api/v1/entries?limit=50&search={name}")
    assert sorted(e["student_name"] for e in found.json()["items"]) == [
        f"{name} {i}" for i in range(3)]
    assert statements(srv, found) == ["key_auth", "entries_search", "entries_by_ids"]
    assert round_trips(srv, found) == []
    # A term too short for the index is a scan planned for its term: the session goes back to
    # the default with the search's first statement, in its round trip; the key's lookup of
    # the next request sets it again.
    short = get(srv, key, f"/api/v1/entries?limit=50&search={name[:2]}")
    assert {e["student_name"] for e in found.json()["items"]} <= {
        e["student_name"] for e in short.json()["items"]}
    assert statements(srv, short)[1] != "entries_search"
    assert round_trips(srv, short) == [f"{RESET} {statements(srv, short)[1]}"]
    back = get(srv, key, plain)
    assert round_trips(srv, back) == [f"{SET} key_auth"]
    assert back.json()["items"] == first.json()["items"]
    assert round_trips(srv, get(srv, key, plain)) == []


def test_a_write_after_the_list_runs_in_the_default_plans(fresh_server):
    srv = fresh_server(CONF)
    group = srv.create_group(srv.create_branch()["id"])
    assert_json(srv.api("POST", "/api/entries", token=srv.admin_token,
                        json={"student_name": uniq("W"), "group_id": group["id"]}), 201)
    key = srv.create_api_key(["read", "write"], 10000)
    get(srv, key, "/api/v1/entries?limit=50")
    # A page with rows ends on its own statement (an empty one reads the total after it).
    assert statements(srv, get(srv, key, "/api/v1/entries?limit=50")) == [
        "key_auth", "entries_page_plain"]
    r = srv.api("POST", "/api/v1/entries", headers={"X-Api-Key": key},
                json={"student_name": uniq("W"), "group_id": group["id"]})
    assert_json(r, 201)
    trips = round_trips(srv, r)
    assert trips[0] == f"{RESET} key_auth_settings"
    assert not any(SET in t for t in trips)
    # The next POST finds the session in its default: no step for the plans at all.
    r = srv.api("POST", "/api/v1/entries", headers={"X-Api-Key": key},
                json={"student_name": uniq("W"), "group_id": group["id"]})
    assert_json(r, 201)
    assert not any("plan_cache_mode" in t for t in round_trips(srv, r))


def test_the_workers_notify_runs_in_any_plan_mode(fresh_server):
    """A child's waker sends the workers' NOTIFY on the requests' pooled connection, between
    their statements (§7.29). It reads no table, so it never switches the session's mode: no
    round trip carries it with a plan step, however it falls between the requests."""
    srv = fresh_server(CONF)
    group = srv.create_group(srv.create_branch()["id"])
    key = srv.create_api_key(["read", "write"], 10000)
    get(srv, key, "/api/v1/entries?limit=50")
    for i in range(10):
        assert_json(srv.api("POST", "/api/v1/entries", headers={"X-Api-Key": key},
                            json={"student_name": uniq("N"), "group_id": group["id"]}), 201)
        get(srv, key, "/api/v1/entries?limit=50")  # generic plans again, as the NOTIFY runs
    log = srv.read_error_log()
    assert log.count("statement signal_notify") >= 1
    assert not [line for line in log.splitlines()
                if "JR12141" in line and "signal_notify" in line and "plan_cache_mode" in line]
