"""X-Request-Id: every answer of the journal carries an id, also written to the access log
and to the error log lines of that request (docs/integrators.md, "Requests and responses";
docs/operations.md, "Logs")."""

import re
import time

from harness import assert_json, uniq

HEX_ID = re.compile(r"^[0-9a-f]{32}$")


def rid(r):
    value = r.headers.get("X-Request-Id")
    assert value, f"{r.request.method} {r.request.path_url} ({r.status_code}) has no X-Request-Id"
    return value


def wait_for(fn, what, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = fn()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"not seen within {timeout} s: {what}")


def test_every_kind_of_answer_has_an_id(server):
    k = assert_json(server.api("POST", "/api/api-keys", token=server.admin_token,
                               json={"name": uniq("rid"), "scopes": ["read", "write"]}), 201)
    h = {"X-Api-Key": k["key"]}
    answers = [
        server.api("GET", "/api/health"),
        server.api("GET", "/api/v1/me"),                                   # 401
        server.api("GET", "/api/v1/me", headers=h),                        # 200
        server.api("HEAD", "/api/v1/entries", headers=h),                  # HEAD
        server.api("GET", "/api/v1/nothing-here", headers=h),              # 404
        server.api("PATCH", "/api/v1/entries", headers=h),                 # 405
        server.api("TRACE", "/api/v1/me"),                                 # 405 before the key
        server.api("GET", "/api/v1/entries?bogus=1", headers=h),           # 400
        server.api("POST", "/api/v1/entries", headers=h, data="x"),       # 415
    ]
    ids = [rid(a) for a in answers]
    assert all(HEX_ID.match(i) for i in ids), ids
    assert len(set(ids)) == len(ids), "ids repeat"


def test_the_id_is_in_the_access_log(server):
    r = server.api("GET", "/api/health")
    i = rid(r)
    access = server.log_dir / "access.log"
    line = wait_for(lambda: [l for l in access.read_text().splitlines() if i in l],
                    f"{i} in the access log")
    assert "GET /api/health" in line[0], line


def test_the_id_is_in_the_error_log_lines_of_the_request(fresh_server):
    """A line of the core (JR03001, the ban of a failed login) written while the request ran
    carries that request's id."""
    srv = fresh_server("JournalLoginBanThreshold 1")
    ip = "198.51.100.91"
    r = srv.api("POST", "/api/auth/login", json={"username": "nobody", "password": "wrong"},
                ip=ip)
    i = rid(r)
    line = wait_for(lambda: [l for l in srv.read_error_log().splitlines() if "JR03001" in l],
                    "the ban's line")
    assert f"[id {i}]" in line[0], line


def test_mod_unique_id_gives_the_id_when_loaded(fresh_server):
    srv = fresh_server("LoadModule unique_id_module /usr/lib/apache2/modules/mod_unique_id.so")
    first, second = rid(srv.api("GET", "/api/health")), rid(srv.api("GET", "/api/health"))
    assert first != second
    assert not HEX_ID.match(first), f"{first} is the module's own id, not mod_unique_id's"
    access = srv.log_dir / "access.log"
    wait_for(lambda: second in access.read_text(), f"{second} in the access log")
