"""The hot reads of /api/v1 and their database round trips (docs/architecture.md §7.18): the
first page of the entry list is one statement after the key's on PostgreSQL, /api/v1/me none
after the key's. Counted from
JR12140, which the module writes at debug level for each statement it runs, on the lines of
the request's own id."""

import re

import harness
from harness import assert_json, uniq

CONF = "LogLevel warn journal:debug\nJournalResponseCache Off\n"
# PostgreSQL: the page brings its total. SQLite: the total first (no round trip to save).
FIRST_PAGE = (["key_auth", "entries_page_plain"] if harness.DB_KIND == "pgsql" else
              ["key_auth", "entries_total_plain", "entries_list_plain"])
EMPTY_PAGE = (["key_auth", "entries_page_plain", "entries_total_plain"]
              if harness.DB_KIND == "pgsql" else ["key_auth", "entries_total_plain"])


def statements(srv, r):
    rid = r.headers["X-Request-Id"]
    return re.findall(r"\[id " + re.escape(rid) + r"\s*\].*JR12140: statement (\w+)",
                      srv.read_error_log())


def make_key(srv, branch_ids=None):
    body = {"name": uniq("rp"), "scopes": ["read"]}
    if branch_ids is not None:
        body["branch_ids"] = branch_ids
    key = assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token, json=body),
                      201)["key"]
    # The first request of a key stamps its last use (once a minute): not the request counted.
    assert_json(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": key}), 200)
    return {"X-Api-Key": key}


def add_entries(srv, group_id, n):
    return [assert_json(srv.api("POST", "/api/entries", token=srv.admin_token,
                                json={"student_name": uniq("S"), "group_id": group_id}), 201)["id"]
            for _ in range(n)]


def test_first_page_reads_page_and_total_in_one_statement(fresh_server):
    srv = fresh_server(CONF)
    b1, b2 = srv.create_branch(), srv.create_branch()
    g1, g2 = srv.create_group(b1["id"]), srv.create_group(b2["id"])
    ids1, ids2 = add_entries(srv, g1["id"], 3), add_entries(srv, g2["id"], 2)
    h = make_key(srv)
    r = srv.api("GET", "/api/v1/entries?limit=4", headers=h)
    body = assert_json(r, 200)
    assert statements(srv, r) == FIRST_PAGE
    assert body["total"] == 5 and body["has_more"] is True
    assert [e["id"] for e in body["items"]] == sorted(ids1 + ids2, reverse=True)[:4]
    # The next page by its cursor: the same statement, the same total.
    r = srv.api("GET", f"/api/v1/entries?limit=4&cursor={body['next_cursor']}", headers=h)
    body = assert_json(r, 200)
    assert statements(srv, r) == FIRST_PAGE
    assert body["total"] == 5 and body["has_more"] is False
    assert [e["id"] for e in body["items"]] == [min(ids1 + ids2)]
    # A key of one branch: its page and its total.
    hb = make_key(srv, branch_ids=[b2["id"]])
    body = assert_json(srv.api("GET", "/api/v1/entries", headers=hb), 200)
    assert body["total"] == 2 and [e["id"] for e in body["items"]] == sorted(ids2, reverse=True)
    # /api: the total in X-Total-Count, set before the first row is written.
    r = srv.api("GET", "/api/entries?limit=2", token=srv.admin_token)
    assert r.headers["X-Total-Count"] == "5" and len(assert_json(r, 200)) == 2


def test_an_empty_page_still_has_its_total(fresh_server):
    srv = fresh_server(CONF)
    g = srv.create_group(srv.create_branch()["id"])
    h = make_key(srv)
    r = srv.api("GET", "/api/v1/entries", headers=h)
    assert assert_json(r, 200)["total"] == 0 and r.json()["items"] == []
    assert statements(srv, r) == EMPTY_PAGE
    add_entries(srv, g["id"], 2)
    r = srv.api("GET", "/api/v1/entries?offset=5", headers=h)
    body = assert_json(r, 200)
    assert body["total"] == 2 and body["items"] == [] and body["has_more"] is False
    r = srv.api("GET", "/api/entries?offset=5", token=srv.admin_token)
    assert r.headers["X-Total-Count"] == "2" and assert_json(r, 200) == []


def test_me_reads_nothing_after_the_key(fresh_server):
    srv = fresh_server(CONF)
    h = make_key(srv)
    r = srv.api("GET", "/api/v1/me", headers=h)
    assert assert_json(r, 200)["organisation"] == {"timezone": "UTC", "time_format": "24h"}
    assert statements(srv, r) == ["key_auth"]
    assert_json(srv.api("PUT", "/api/settings", token=srv.admin_token,
                        json={"timezone": "Asia/Tokyo", "time_format": "12h"}), 200)
    r = srv.api("GET", "/api/v1/me", headers=h)
    assert assert_json(r, 200)["organisation"] == {"timezone": "Asia/Tokyo",
                                                   "time_format": "12h"}
    assert statements(srv, r) == ["key_auth"]

