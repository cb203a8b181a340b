"""Machine-readable errors (docs/integrators.md, "Error codes"): every error body keeps
`error`, adds a `code` from the documented table and `param` when one field is at fault; a
duplicate lesson report names the existing report's id."""

import re

import pytest

from harness import REPO, assert_json, uniq

DOC = (REPO / "docs" / "integrators.md").read_text(encoding="utf-8")
SRC = (REPO / "mod_journal" / "core" / "jr_error_codes.c").read_text(encoding="utf-8")


def documented_codes():
    section = DOC.split("### Error codes", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M))


def check(r, status, code, param=None):
    body = assert_json(r, status)
    assert isinstance(body.get("error"), str) and body["error"], body
    assert body.get("code") == code, (r.request.method, r.request.path_url, body)
    assert code in documented_codes(), f"{code} is not in the guide's table"
    if param is None:
        assert "param" not in body, body
    else:
        assert body.get("param") == param, body
    return body


def test_every_code_in_the_source_is_documented():
    in_source = set(re.findall(r'"([a-z]+(?:_[a-z]+)*)"\}', SRC)) | \
        set(re.findall(r'jr_error_code\(res, "([a-z_]+)"\)',
                       "".join(p.read_text() for p in (REPO / "mod_journal" / "core").glob("*.c"))))
    in_source.discard("error")
    assert in_source, "no codes found in the source"
    assert in_source <= documented_codes(), in_source - documented_codes()


@pytest.fixture
def ctx(server):
    b = server.create_branch()
    g = server.create_group(b["id"])
    k = assert_json(server.api("POST", "/api/api-keys", token=server.admin_token,
                               json={"name": uniq("codes"), "scopes": ["read", "write"]}), 201)
    ro = assert_json(server.api("POST", "/api/api-keys", token=server.admin_token,
                                json={"name": uniq("ro"), "scopes": ["read"]}), 201)
    return {"g": g, "h": {"X-Api-Key": k["key"]}, "ro": {"X-Api-Key": ro["key"]}}


def test_codes_of_common_failures(server, ctx):
    h, g = ctx["h"], ctx["g"]
    api = server.api
    check(api("GET", "/api/v1/me"), 401, "unauthorized")
    check(api("POST", "/api/v1/ai/wake", headers=ctx["ro"]), 403, "forbidden")
    check(api("GET", "/api/v1/entries/9000000000000", headers=h), 404, "not_found")
    check(api("GET", "/api/v1/nowhere", headers=h), 404, "not_found")
    check(api("PATCH", "/api/v1/entries", headers=h), 405, "method_not_allowed")
    check(api("GET", "/api/v1/entries", headers=h, params={"limit": 0}), 400, "invalid_field",
          "limit")
    check(api("GET", "/api/v1/entries", headers=h, params={"colour": "red"}), 400,
          "unknown_parameter", "colour")
    check(api("POST", "/api/v1/entries", headers=h,
              json={"student_name": "x", "group_id": g["id"], "mood": 1}), 400,
          "unknown_field", "mood")
    check(api("POST", "/api/v1/entries", headers=h, json={"student_name": "x"}), 400,
          "invalid_field", "group_id")
    check(api("POST", "/api/v1/entries", headers=h,
              json={"student_name": "x", "group_id": 900000000}), 400, "invalid_field",
          "group_id")
    check(api("POST", "/api/v1/entries", headers={**h, "Content-Type": "application/json"},
              data="{nope"), 400, "invalid_request")
    check(api("POST", "/api/v1/entries", headers={**h, "Content-Type": "text/plain"},
              data="x"), 415, "unsupported_media_type")
    check(api("GET", "/api/v1/entries", headers=h, params={"cursor": "zzz"}), 400,
          "invalid_cursor", "cursor")
    check(api("GET", "/api/v1/entries", headers=h,
              params={"updated_since": "soon"}), 400, "invalid_field", "updated_since")


def test_duplicate_lesson_report_names_the_existing_one(server, ctx):
    h, g = ctx["h"], ctx["g"]
    body = {"group_id": g["id"], "lesson_date": "2026-04-01", "lesson_time": "10:00",
            "text": "t"}
    first = assert_json(server.api("POST", "/api/v1/lesson-reports", headers=h, json=body), 201)
    dup = check(server.api("POST", "/api/v1/lesson-reports", headers=h, json=body), 409,
                "duplicate")
    assert dup["id"] == first["id"]


def test_idempotency_and_precondition_codes(server, ctx):
    h, g = ctx["h"], ctx["g"]
    k = {**h, "Idempotency-Key": uniq("c")}
    assert_json(server.api("POST", "/api/v1/entries", headers=k,
                           json={"student_name": "a", "group_id": g["id"]}), 201)
    check(server.api("POST", "/api/v1/entries", headers=k,
                     json={"student_name": "b", "group_id": g["id"]}), 422,
          "idempotency_key_reused")
    check(server.api("POST", "/api/v1/entries", headers={**h, "Idempotency-Key": "a b"},
                     json={"student_name": "b", "group_id": g["id"]}), 400, "invalid_field",
          "Idempotency-Key")
    e = assert_json(server.api("POST", "/api/v1/entries", headers=h,
                               json={"student_name": "c", "group_id": g["id"]}), 201)
    check(server.api("PUT", f"/api/v1/entries/{e['id']}", headers={**h, "If-Match": '"x"'},
                     json={"description": "d"}), 412, "precondition_failed")


def test_rate_limited(server):
    k = assert_json(server.api("POST", "/api/api-keys", token=server.admin_token,
                               json={"name": uniq("rl"), "scopes": ["read"],
                                     "rate_limit_per_min": 1}), 201)
    h = {"X-Api-Key": k["key"]}
    assert_json(server.api("GET", "/api/v1/me", headers=h), 200)
    check(server.api("GET", "/api/v1/me", headers=h), 429, "rate_limited")
