"""Query parameters of /api/v1: every endpoint reads a fixed set (docs/integrators.md,
"Query parameters"); any other is 400 and changes nothing, so a filter the server does not
know never returns a wider list than asked for."""

import pytest

from harness import assert_error, assert_json, uniq

# Path -> the parameters it reads (the table of docs/integrators.md).
READS = {
    "/api/v1/me": [],
    "/api/v1/branches": ["limit", "offset"],
    "/api/v1/groups": ["branch_id", "limit", "offset"],
    "/api/v1/students": ["group_id", "branch_id", "search", "limit", "offset"],
    "/api/v1/modules": ["search", "limit", "offset"],
    "/api/v1/entries": ["group_id", "branch_id", "module_id", "student_id", "student",
                        "date_from", "date_to", "search", "limit", "offset"],
    "/api/v1/lesson-reports": ["group_id", "branch_id", "date_from", "date_to", "limit",
                               "offset"],
    "/api/v1/stats": [],
}
SAMPLE = {"limit": "2", "offset": "0", "branch_id": "1", "group_id": "1", "module_id": "1",
          "student_id": "1", "student": "x", "search": "x", "date_from": "2026-01-01",
          "date_to": "2026-12-31"}


@pytest.fixture(scope="module")
def key(_session_server):
    srv = _session_server
    body = {"name": uniq("qkey"), "scopes": ["read", "write"]}
    r = srv.api("POST", "/api/api-keys", token=srv.admin_token, json=body)
    return assert_json(r, 201)["key"]


def get(server, key, path, params):
    return server.api("GET", path, headers={"X-Api-Key": key}, params=params)


@pytest.mark.parametrize("path", sorted(READS))
def test_known_parameters_are_read(server, key, path):
    assert_json(get(server, key, path, {n: SAMPLE[n] for n in READS[path]}), 200)


@pytest.mark.parametrize("path", sorted(READS))
@pytest.mark.parametrize("name", ["updated_since", "limt", "Limit", "cursor_x"])
def test_unknown_parameters_are_400(server, key, path, name):
    body = assert_error(get(server, key, path, {name: "1"}), 400, "unknown query parameter",
                        name)
    for known in READS[path]:
        assert known in body["error"], body


def test_records_and_mutations_refuse_parameters(server, key):
    b = server.create_branch()
    g = server.create_group(b["id"])
    h = {"X-Api-Key": key}
    e = assert_json(server.api("POST", "/api/v1/entries", headers=h,
                               json={"student_name": uniq("Q"), "group_id": g["id"]}), 201)
    for method, path, body in (("GET", f"/api/v1/entries/{e['id']}", None),
                               ("PUT", f"/api/v1/entries/{e['id']}", {"description": "new"}),
                               ("POST", "/api/v1/ai/wake", None),
                               ("DELETE", f"/api/v1/entries/{e['id']}", None)):
        r = server.api(method, path + "?force=1", headers=h, json=body)
        assert_error(r, 400, "unknown query parameter", "force")
    # Nothing changed: the entry is still there with its text.
    got = assert_json(server.api("GET", f"/api/v1/entries/{e['id']}", headers=h), 200)
    assert got["description"] == e["description"]
    assert_json(server.api("GET", f"/api/v1/entries/{e['id']}/files", headers=h,
                           params={"limit": 5}), 200)


def test_admin_interface_is_not_checked(server):
    r = server.api("GET", "/api/entries", token=server.admin_token, params={"whatever": "1"})
    assert_json(r, 200)


def test_query_string_is_checked_after_the_key_and_counted(server):
    """docs/integrators.md, check order: the query string (step 9) after the key (3-5) and
    the rate limit (6): without a key the answer is 401, with one the 400 counts."""
    assert_error(server.api("GET", "/api/v1/entries?search=%00"), 401)
    assert_error(server.api("GET", "/api/v1/entries?updated_since=x"), 401)
    body = {"name": uniq("qcount"), "scopes": ["read"], "rate_limit_per_min": 5}
    k = assert_json(server.api("POST", "/api/api-keys", token=server.admin_token, json=body),
                    201)["key"]
    h = {"X-Api-Key": k}
    left = []
    for q in ("search=%00", "updated_since=x"):
        r = server.api("GET", "/api/v1/entries?" + q, headers=h)
        assert_error(r, 400)
        left.append(int(r.headers["RateLimit-Remaining"]))
    assert left == [4, 3], left
