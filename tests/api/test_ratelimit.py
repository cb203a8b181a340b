"""Per-key request rate limits on /api/v1 (a rolling minute) and their directives."""

import collections
import itertools
import threading
import urllib.parse

import requests

from harness import HTTP_TIMEOUT, assert_error, assert_json, assert_ok, uniq

_ips = itertools.count(1)


def new_ip():
    """A client address of this module's own (192.0.2.x)."""
    n = next(_ips)
    assert n < 255, "test_ratelimit ran out of client addresses"
    return f"192.0.2.{n}"


def create_key(server, scopes=("read",), **fields):
    body = {"name": uniq("rlkey"), "scopes": list(scopes)}
    body.update(fields)
    return assert_json(server.api("POST", "/api/api-keys", token=server.admin_token, json=body),
                       201)


def me(server, key, ip=None):
    return server.api("GET", "/api/v1/me", headers={"X-Api-Key": key}, ip=ip)


def int_header(r, name):
    v = r.headers.get(name)
    assert v is not None and v.isdigit(), \
        f"{name} {v!r} on {r.request.method} {r.request.path_url} -> {r.status_code}"
    return int(v)


def check_rate_headers(r, limit, remaining):
    assert int_header(r, "RateLimit-Limit") == limit, dict(r.headers)
    assert int_header(r, "RateLimit-Remaining") == remaining, dict(r.headers)
    assert 1 <= int_header(r, "RateLimit-Reset") <= 60, dict(r.headers)
    assert r.headers.get("RateLimit-Policy") == f"{limit};w=60", dict(r.headers)


def test_limit_of_three(server):
    k = create_key(server, rate_limit_per_min=3)
    for remaining in (2, 1, 0):
        r = me(server, k["key"])
        assert_json(r, 200)
        check_rate_headers(r, 3, remaining)
        assert "Retry-After" not in r.headers
    for _ in range(2):
        r = me(server, k["key"])
        assert_error(r, 429)
        check_rate_headers(r, 3, 0)
        retry = int_header(r, "Retry-After")
        assert 1 <= retry <= 60
        assert retry == int_header(r, "RateLimit-Reset")
    # Every /api/v1 route shares the key's budget.
    for path in ("/api/v1/branches", "/api/v1/groups"):
        r = server.api("GET", path, headers={"Authorization": f"Bearer {k['key']}"})
        assert_error(r, 429)
        check_rate_headers(r, 3, 0)
    # Other keys have budgets of their own.
    other = create_key(server, rate_limit_per_min=3)
    r = me(server, other["key"])
    assert_json(r, 200)
    check_rate_headers(r, 3, 2)


def test_rate_limit_is_per_key_not_per_ip(server):
    k = create_key(server, rate_limit_per_min=2)
    assert me(server, k["key"], ip=new_ip()).status_code == 200
    assert me(server, k["key"], ip=new_ip()).status_code == 200
    assert_error(me(server, k["key"], ip=new_ip()), 429)


def test_concurrent_requests_respect_the_limit(server):
    k = create_key(server, rate_limit_per_min=10)
    threads_n, per_thread = 20, 2
    barrier = threading.Barrier(threads_n)
    statuses = collections.Counter()
    remaining_seen = []
    errors = []
    lock = threading.Lock()

    def worker():
        with requests.Session() as s:
            try:
                barrier.wait(timeout=30)
                for _ in range(per_thread):
                    r = s.get(server.base_url + "/api/v1/me", headers={"X-Api-Key": k["key"]},
                              timeout=HTTP_TIMEOUT)
                    with lock:
                        statuses[r.status_code] += 1
                        if r.status_code == 200:
                            remaining_seen.append(int(r.headers["RateLimit-Remaining"]))
            except Exception as e:  # reported below
                with lock:
                    errors.append(repr(e))

    threads = [threading.Thread(target=worker) for _ in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert dict(statuses) == {200: 10, 429: 30}, dict(statuses)
    # Each admitted request saw its own place in the budget.
    assert sorted(remaining_seen) == list(range(10)), sorted(remaining_seen)


def test_refused_before_authentication_costs_no_quota(server):
    k = create_key(server, rate_limit_per_min=3)
    bad_ip = new_ip()
    # Wrong keys: not this key's requests.
    for bad in ("wsk_short", k["key"][:-1] + ("A" if k["key"][-1] != "A" else "B")):
        for _ in range(3):
            assert_error(me(server, bad, ip=bad_ip), 401)
    # The right key from a banned address (a filled honeypot bans at once).
    banned_ip = new_ip()
    r = server.api("POST", "/api/auth/login", ip=banned_ip,
                   json={"username": uniq("robot"), "password": "x", "website": "spam"})
    assert_error(r, 403)
    try:
        for _ in range(5):
            assert_error(me(server, k["key"], ip=banned_ip), 403)
    finally:
        assert_ok(server.api("DELETE", "/api/bans/" + urllib.parse.quote(banned_ip, safe=""),
                             token=server.admin_token))
    for remaining in (2, 1, 0):
        r = me(server, k["key"], ip=new_ip())
        assert_json(r, 200)
        check_rate_headers(r, 3, remaining)
    assert_error(me(server, k["key"]), 429)


def test_default_limit_on_the_shared_server(server):
    k = create_key(server)
    assert k["rate_limit_per_min"] == 60
    r = me(server, k["key"])
    assert_json(r, 200)
    check_rate_headers(r, 60, 59)


def test_limit_change_applies_to_the_running_budget(server):
    k = create_key(server, rate_limit_per_min=2)
    assert me(server, k["key"]).status_code == 200
    assert me(server, k["key"]).status_code == 200
    assert_error(me(server, k["key"]), 429)
    r = server.api("PUT", f"/api/api-keys/{k['id']}", token=server.admin_token,
                   json={"rate_limit_per_min": 4})
    assert assert_json(r, 200)["rate_limit_per_min"] == 4
    for remaining in (1, 0):
        r = me(server, k["key"])
        assert_json(r, 200)
        check_rate_headers(r, 4, remaining)
    r = me(server, k["key"])
    assert_error(r, 429)
    check_rate_headers(r, 4, 0)


def test_rate_limit_default_directive(fresh_server):
    srv = fresh_server("JournalRateLimitDefault 5")
    meta = assert_json(srv.api("GET", "/api/api-keys/meta", token=srv.admin_token), 200)
    assert meta["rate_limit_per_min"] == {"min": 1, "max": 10000, "default": 5}
    k = create_key(srv)
    assert k["rate_limit_per_min"] == 5
    for remaining in (4, 3, 2, 1, 0):
        r = me(srv, k["key"])
        assert_json(r, 200)
        check_rate_headers(r, 5, remaining)
    r = me(srv, k["key"])
    assert_error(r, 429)
    check_rate_headers(r, 5, 0)
    # An explicit value still wins over the default.
    assert create_key(srv, rate_limit_per_min=100)["rate_limit_per_min"] == 100


def test_rate_limit_max_directive(fresh_server):
    srv = fresh_server("JournalRateLimitMax 50")
    meta = assert_json(srv.api("GET", "/api/api-keys/meta", token=srv.admin_token), 200)
    assert meta["rate_limit_per_min"]["max"] == 50
    # The default (60) is capped by the maximum.
    assert meta["rate_limit_per_min"]["default"] == 50
    assert create_key(srv)["rate_limit_per_min"] == 50
    assert create_key(srv, rate_limit_per_min=50)["rate_limit_per_min"] == 50
    name = uniq("too-fast")
    r = srv.api("POST", "/api/api-keys", token=srv.admin_token,
                json={"name": name, "scopes": ["read"], "rate_limit_per_min": 51})
    assert_error(r, 400, "rate_limit_per_min")
    keys = assert_json(srv.api("GET", "/api/api-keys", token=srv.admin_token), 200)
    assert [k for k in keys if k["name"] == name] == []
    k = create_key(srv, rate_limit_per_min=10)
    assert_error(srv.api("PUT", f"/api/api-keys/{k['id']}", token=srv.admin_token,
                         json={"rate_limit_per_min": 51}), 400, "rate_limit_per_min")
    assert assert_json(srv.api("PUT", f"/api/api-keys/{k['id']}", token=srv.admin_token,
                               json={"rate_limit_per_min": 50}), 200)["rate_limit_per_min"] == 50
