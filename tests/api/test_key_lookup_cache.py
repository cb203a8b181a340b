"""The key's lookup kept under the write generation (docs/architecture.md §9.2 and §7.15).

A request whose generation has not moved since a key's row was read takes the row from memory
and runs no statement for its key (JR12003 says so at debug level, and JR12140 lists the
statements a request ran). On SQLite the generation is a counter in shared memory; on
PostgreSQL it is read from a snapshot (`rcache_snapshot`), one read shared by the requests of
a process that ask at once (§7.30). Anything written anywhere moves the generation, so every
change to a key, its ban or the settings is seen by the very next request.

The servers run one child process, so the request after one that kept a row can be served
from it; the counts prove it was, so a test cannot pass on misses alone."""

import time
from datetime import datetime, timedelta, timezone

import pytest

import harness
from harness import assert_error, assert_json, uniq
from test_bans import new_ip
from test_read_path import statements
from test_response_cache import ONE_CHILD, _cluster_of_its_own  # noqa: F401 (a fixture:
# on PostgreSQL a page is served only while no other test writes to the cluster)

SQLITE = harness.DB_KIND == "sqlite"
# What a request runs to learn the generation: nothing on SQLite, a snapshot's read on
# PostgreSQL (shared with the requests that ask at the same time; these come one by one).
GENERATION = [] if SQLITE else ["rcache_snapshot"]


def after_generation(stmts):
    """The statements a request ran after it read the generation."""
    assert stmts[:len(GENERATION)] == GENERATION, stmts
    return stmts[len(GENERATION):]


def from_memory(srv):
    return srv.read_error_log().count("JR12003:")


def make_key(srv, **fields):
    body = {"name": uniq("lk"), "scopes": ["read", "write"]}
    body.update(fields)
    return assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token, json=body), 201)


def me(srv, key, ip=None):
    return srv.api("GET", "/api/v1/me", headers={"X-Api-Key": key}, ip=ip)


def warm(srv, key, ip=None):
    """Three requests, the third served with the key's row from memory: the first use
    of a key stamps it (a write), the second reads the row again and keeps it. Returns the
    third answer's body."""
    assert_json(me(srv, key, ip), 200)
    read = me(srv, key, ip)
    assert_json(read, 200)
    n = from_memory(srv)
    again = me(srv, key, ip)
    assert assert_json(again, 200) == read.json()
    assert statements(srv, again) == GENERATION
    assert from_memory(srv) == n + 1
    return again.json()


def test_a_repeated_request_runs_no_statement_for_its_key(fresh_server):
    srv = fresh_server(ONE_CHILD)
    g = srv.create_group(srv.create_branch()["id"])
    key = make_key(srv)["key"]
    warm(srv, key)
    # A list served from the response cache then costs no statement but the generation's.
    path = f"/api/v1/entries?group_id={g['id']}"
    first = srv.api("GET", path, headers={"X-Api-Key": key})
    assert assert_json(first, 200)["total"] == 0
    again = srv.api("GET", path, headers={"X-Api-Key": key})
    assert again.content == first.content
    assert statements(srv, again) == GENERATION
    # A write through the key: the next request reads the key again, and sees the entry.
    assert_json(srv.api("POST", "/api/v1/entries", headers={"X-Api-Key": key},
                        json={"student_name": uniq("S"), "group_id": g["id"]}), 201)
    after = srv.api("GET", path, headers={"X-Api-Key": key})
    assert assert_json(after, 200)["total"] == 1
    assert after_generation(statements(srv, after))[0] == "key_auth"


CHANGES = {
    # name: (how the admin changes the key, what the next request with the old secret gets)
    "scopes": ("PUT", {"scopes": ["read"]}),
    "rate limit": ("PUT", {"rate_limit_per_min": 7}),
    "branches": ("PUT", None),
    "rotation": ("POST", "rotate"),
    "deletion": ("DELETE", None),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_changed_key_counts_from_the_next_request(fresh_server, change):
    srv = fresh_server(ONE_CHILD)
    branch = srv.create_branch()
    g = srv.create_group(branch["id"])
    rec = make_key(srv)
    key, kid = rec["key"], rec["id"]
    assert warm(srv, key)["user"]["branch_ids"] is None
    method, body = CHANGES[change]
    if change == "branches":
        body = {"branch_ids": [branch["id"]]}
    path = f"/api/api-keys/{kid}" + ("/rotate" if body == "rotate" else "")
    r = srv.api(method, path, token=srv.admin_token,
                json=body if isinstance(body, dict) else None)
    assert r.status_code == 200, r.text
    now = me(srv, key)
    if change in ("rotation", "deletion"):
        assert_error(now, 401)
        if change == "rotation":
            assert_json(me(srv, r.json()["key"]), 200)
        return
    assert now.status_code == 200, now.text
    assert after_generation(statements(srv, now))[0] == "key_auth"  # read again, not kept
    if change == "scopes":
        assert_error(srv.api("POST", "/api/v1/entries", headers={"X-Api-Key": key},
                             json={"student_name": uniq("S"), "group_id": g["id"]}), 403)
    elif change == "rate limit":
        assert now.headers["RateLimit-Limit"] == "7"
    else:
        assert now.json()["user"]["branch_ids"] == [branch["id"]]


def test_a_ban_refuses_a_key_read_before_it(fresh_server):
    srv = fresh_server(ONE_CHILD + "JournalKeyBanThreshold 3\n")
    ip, other = new_ip(), new_ip()
    key = make_key(srv, scopes=["read"])["key"]
    warm(srv, key, ip)
    warm(srv, key, other)
    bad = key[:-3] + ("AAA" if key[-3:] != "AAA" else "BBB")
    for _ in range(3):
        assert me(srv, bad, ip).status_code in (401, 403)
    assert_error(me(srv, key, ip), 403)  # banned: the kept row is not served
    assert_json(me(srv, key, other), 200)  # another address is not


def test_a_key_that_expires_is_refused_even_from_memory(fresh_server):
    srv = fresh_server(ONE_CHILD)
    ends = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=4)
    key = make_key(srv, expires_at=ends.strftime("%Y-%m-%dT%H:%M:%SZ"))["key"]
    warm(srv, key)
    time.sleep(max(0.0, (ends - datetime.now(timezone.utc)).total_seconds()) + 1.2)
    n = from_memory(srv)
    r = me(srv, key)
    assert_error(r, 401)
    assert "expired" in r.json()["error"]
    # Nothing was written: the kept row answered, and its expiry was compared.
    assert from_memory(srv) == n + 1


def test_an_unknown_key_is_never_kept(fresh_server):
    srv = fresh_server(ONE_CHILD)
    key = make_key(srv, scopes=["read"])["key"]
    warm(srv, key)
    bad = key[:-3] + ("AAA" if key[-3:] != "AAA" else "BBB")
    n = from_memory(srv)
    for _ in range(3):
        r = me(srv, bad)
        assert_error(r, 401)
    assert from_memory(srv) == n


def test_with_the_cache_off_the_key_is_read_every_time(fresh_server):
    srv = fresh_server(ONE_CHILD + "JournalResponseCache Off\n")
    key = make_key(srv, scopes=["read"])["key"]
    for _ in range(4):
        r = me(srv, key)
        assert_json(r, 200)
        assert statements(srv, r)[0] == "key_auth"  # the first also stamps the key's use
    assert from_memory(srv) == 0
