"""Generic HTTP behaviour of /api: routing, methods, bodies, headers, health."""

import json

import pytest

from harness import assert_error, assert_json, uniq

JSON_CT = {"Content-Type": "application/json"}


def check_common_headers(r):
    assert r.headers.get("Cache-Control") == "no-store", \
        f"{r.request.method} {r.request.path_url} ({r.status_code}): Cache-Control " \
        f"{r.headers.get('Cache-Control')!r}"
    assert r.headers.get("X-Content-Type-Options") == "nosniff", \
        f"{r.request.method} {r.request.path_url} ({r.status_code}): X-Content-Type-Options " \
        f"{r.headers.get('X-Content-Type-Options')!r}"
    ctype = r.headers.get("Content-Type", "")
    assert ctype.split(";")[0].strip().lower() == "application/json", \
        f"{r.request.method} {r.request.path_url} ({r.status_code}): Content-Type {ctype!r}"
    r.json()  # the body is JSON


# ---- health ---------------------------------------------------------------------------------
def test_health_ok_without_auth(server):
    r = server.api("GET", "/api/health")
    body = assert_json(r, 200)
    assert body["status"] == "ok"
    assert body["db"] == "ok"
    assert isinstance(body["version"], str) and body["version"]


# ---- routing and methods --------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/api/nope", "/api/auth", "/api/groups/1/nope",
                                  "/api/healthz", "/api/users/1/branches"])
def test_unknown_route_is_404_json(server, path):
    r = server.api("GET", path, token=server.admin_token)
    assert_error(r, 404)


@pytest.mark.parametrize("method,path,allowed", [
    ("POST", "/api/health", {"GET"}),
    ("DELETE", "/api/health", {"GET"}),
    ("GET", "/api/auth/login", {"POST"}),
    ("PUT", "/api/auth/logout", {"POST"}),
    ("DELETE", "/api/users", {"GET", "POST"}),
    ("PATCH", "/api/groups/1", {"GET", "PUT", "DELETE"}),
    ("GET", "/api/groups/1/restore", {"POST"}),
])
def test_wrong_method_is_405_with_allow(server, method, path, allowed):
    r = server.api(method, path, token=server.admin_token)
    assert_error(r, 405)
    allow = {m.strip().upper() for m in r.headers.get("Allow", "").split(",") if m.strip()}
    assert allowed <= allow, f"Allow header {r.headers.get('Allow')!r} lacks {allowed - allow}"
    assert method not in allow


@pytest.mark.parametrize("method,path", [
    ("GET", "/api/groups/abc"),
    ("GET", "/api/groups/0"),
    ("GET", "/api/groups/-1"),
    ("GET", "/api/groups/1.5"),
    ("GET", "/api/groups/1abc"),
    ("GET", "/api/groups/+1"),
    ("GET", "/api/groups/99999999999999999999999"),
    ("POST", "/api/groups/abc/restore"),
    ("GET", "/api/branches/abc"),
    ("GET", "/api/branches/0"),
    ("DELETE", "/api/users/abc"),
    ("DELETE", "/api/users/0"),
    ("DELETE", "/api/users/-1"),
])
def test_non_positive_integer_ids_are_404(server, method, path):
    r = server.api(method, path, token=server.admin_token)
    assert_error(r, 404)


# ---- request bodies -------------------------------------------------------------------------
@pytest.mark.parametrize("body", ['{"username": "admin", ', "{username: 1}", "",
                                  '{"a": 1} trailing', "\xff\xfe"])
def test_malformed_json_is_400(server, body):
    r = server.api("POST", "/api/auth/login", data=body.encode("latin-1"), headers=JSON_CT)
    assert_error(r, 400)


def test_malformed_json_with_auth_is_400(server):
    r = server.api("POST", "/api/branches", token=server.admin_token, data=b'{"name": ',
                   headers=JSON_CT)
    assert_error(r, 400)


@pytest.mark.parametrize("body", ["[]", '"x"', "1", "null", "true", '[{"username": "admin"}]'])
def test_non_object_json_is_400(server, body):
    r = server.api("POST", "/api/auth/login", data=body, headers=JSON_CT)
    assert_error(r, 400)


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded",
                                   "application/jsonp", "text/json"])
def test_wrong_content_type_is_415(server, ctype):
    body = json.dumps({"username": server.admin_username, "password": server.admin_password})
    r = server.api("POST", "/api/auth/login", data=body, headers={"Content-Type": ctype})
    assert_error(r, 415)


def test_json_content_type_with_charset_is_accepted(server):
    body = json.dumps({"username": server.admin_username, "password": server.admin_password})
    r = server.api("POST", "/api/auth/login", data=body,
                   headers={"Content-Type": "application/json; charset=utf-8"})
    assert assert_json(r, 200)["user"]["username"] == server.admin_username


def test_body_over_default_cap_is_413(server):
    body = json.dumps({"username": "admin", "password": "x" * (1024 * 1024 + 100)})
    r = server.api("POST", "/api/auth/login", data=body, headers=JSON_CT)
    assert_error(r, 413)


def test_chunked_body_over_default_cap_is_413(server):
    chunk = b"x" * 65536

    def gen():
        yield b'{"username": "admin", "password": "'
        for _ in range(20):  # 1.25 MiB without a Content-Length
            yield chunk
        yield b'"}'

    r = server.api("POST", "/api/auth/login", data=gen(), headers=JSON_CT)
    assert_error(r, 413)


def test_max_body_size_directive(fresh_server):
    srv = fresh_server("JournalMaxBodySize 2K")
    # Valid JSON padded with insignificant white space: only the size matters.
    login = json.dumps({"username": "nobody", "password": "wrong-password"})
    big = login[:-1] + " " * (3000 - len(login)) + "}"
    assert len(big) == 3000
    r = srv.api("POST", "/api/auth/login", data=big, headers=JSON_CT)
    assert_error(r, 413)
    # Under the cap the same request reaches the login logic.
    small = login[:-1] + " " * (2000 - len(login)) + "}"
    assert len(small) == 2000
    r = srv.api("POST", "/api/auth/login", data=small, headers=JSON_CT)
    assert_error(r, 401)


def test_unknown_field_is_400_naming_it(server):
    r = server.api("POST", "/api/auth/login",
                   json={"username": "admin", "password": "whatever1", "bogus_field_x": 1})
    assert_error(r, 400, "bogus_field_x")
    r = server.api("POST", "/api/branches", token=server.admin_token,
                   json={"name": uniq("branch"), "colour_zz": "red"})
    assert_error(r, 400, "colour_zz")


# ---- headers on every kind of response -------------------------------------------------------
def _tutor_token(server):
    return server.create_tutor()[1]


HEADER_CASES = {
    "200 health": lambda s: s.api("GET", "/api/health"),
    "200 me": lambda s: s.api("GET", "/api/auth/me", token=s.admin_token),
    "201 branch": lambda s: s.api("POST", "/api/branches", token=s.admin_token,
                                  json={"name": uniq("branch")}),
    "400 bad json": lambda s: s.api("POST", "/api/auth/login", data="{", headers=JSON_CT),
    "401 no token": lambda s: s.api("GET", "/api/auth/me"),
    "403 tutor": lambda s: s.api("GET", "/api/users", token=_tutor_token(s)),
    "404 route": lambda s: s.api("GET", "/api/nope"),
    "405 method": lambda s: s.api("POST", "/api/health"),
    "409 duplicate": lambda s: s.api("POST", "/api/users", token=s.admin_token,
                                     json={"username": s.admin_username,
                                           "password": "long-enough-1", "role": "tutor"}),
    "413 too large": lambda s: s.api("POST", "/api/auth/login", headers=JSON_CT,
                                     data="{" + " " * (1024 * 1024 + 10) + "}"),
    "415 media type": lambda s: s.api("POST", "/api/auth/login", data="{}",
                                      headers={"Content-Type": "text/plain"}),
}


@pytest.mark.parametrize("case", list(HEADER_CASES))
def test_common_headers_on_every_response(server, case):
    r = HEADER_CASES[case](server)
    expected = int(case.split()[0])
    assert r.status_code == expected, f"{case}: got {r.status_code} {r.text[:300]}"
    check_common_headers(r)
