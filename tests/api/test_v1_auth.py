"""Authentication, scopes and branch restriction on the external interface /api/v1."""

import itertools
import json
import time
import zlib
from datetime import datetime, timedelta, timezone

import pytest

from harness import TOKEN_RE, assert_error, assert_json, uniq

B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
ENVELOPE = {"items", "total", "limit", "offset", "has_more", "next_cursor"}

_ips = itertools.count(1)


def new_ip():
    """A client address of this module's own (198.51.100.x): wrong keys count against it."""
    n = next(_ips)
    assert n < 255, "test_v1_auth ran out of client addresses"
    return f"198.51.100.{n}"


def create_key(server, scopes=("read",), **fields):
    body = {"name": uniq("v1key"), "scopes": list(scopes)}
    body.update(fields)
    return assert_json(server.api("POST", "/api/api-keys", token=server.admin_token, json=body),
                       201)


def v1(server, path, key=None, method="GET", ip=None, bearer=False, params=None, body=None):
    headers = {}
    if key is not None:
        if bearer:
            headers["Authorization"] = f"Bearer {key}"
        else:
            headers["X-Api-Key"] = key
    return server.api(method, path, headers=headers, ip=ip, params=params, json=body)


def single_json_error(r, status, *mentions):
    """An error answer whose body is exactly one JSON object {"error": ..., "code": ...}
    (and "param" when one field is at fault)."""
    body = assert_error(r, status, *mentions)
    assert json.loads(r.text) == body and {"error", "code"} <= set(body) <= \
        {"error", "code", "param"}, r.text
    return body


def checksum(text):
    """The 6 base62 characters of CRC-32 that end a key (see jr_keys.h)."""
    c = zlib.crc32(text.encode()) & 0xFFFFFFFF
    out = []
    for _ in range(6):
        out.append(B62[c % 62])
        c //= 62
    return "".join(reversed(out))


# ---- no key / unknown paths -----------------------------------------------------------------
@pytest.mark.parametrize("path", ["/api/v1/me", "/api/v1/branches", "/api/v1/groups"])
def test_no_key_is_401(server, path):
    ip = new_ip()
    single_json_error(v1(server, path, ip=ip), 401)
    # An empty header is no key either.
    single_json_error(server.api("GET", path, headers={"X-Api-Key": ""}, ip=ip), 401)
    single_json_error(server.api("GET", path, headers={"Authorization": "Bearer "}, ip=ip), 401)


@pytest.mark.parametrize("path", ["/api/v1/nope", "/api/v1", "/api/v1/entries/1/nope",
                                  "/api/v1/branches/1/nope"])
def test_unknown_v1_path_needs_a_key(server, path):
    ip = new_ip()
    single_json_error(v1(server, path, ip=ip), 401)
    single_json_error(v1(server, path, key="wsk_short", ip=ip), 401)
    key = create_key(server)["key"]
    single_json_error(v1(server, path, key=key), 404)


def test_wrong_method_on_v1_needs_a_key(server):
    ip = new_ip()
    single_json_error(v1(server, "/api/v1/me", method="POST", ip=ip), 401)
    single_json_error(v1(server, "/api/v1/branches", method="DELETE", ip=ip), 401)


def test_v1_does_not_accept_a_session(server):
    r = server.api("GET", "/api/v1/me", token=server.admin_token, ip=new_ip())
    single_json_error(r, 401)


# ---- key formats ----------------------------------------------------------------------------
def test_valid_key_with_x_api_key_and_bearer(server):
    k = create_key(server)
    for r in (v1(server, "/api/v1/me", key=k["key"]),
              v1(server, "/api/v1/me", key=k["key"], bearer=True),
              server.api("GET", "/api/v1/me", headers={"Authorization": f"bearer {k['key']}"})):
        body = assert_json(r, 200)
        assert body["key"]["id"] == k["id"]


def test_key_with_one_character_changed_is_401(server):
    ip = new_ip()
    k = create_key(server)["key"]
    assert len(k) == 53
    for pos in (4, 20, 46, 47, 52):  # body start, middle, end; checksum start, end
        c = k[pos]
        other = B62[(B62.index(c) + 1) % 62]
        bad = k[:pos] + other + k[pos + 1:]
        assert len(bad) == len(k) and bad != k
        single_json_error(v1(server, "/api/v1/me", key=bad, ip=ip), 401)
        single_json_error(v1(server, "/api/v1/me", key=bad, ip=ip, bearer=True), 401)
    assert v1(server, "/api/v1/me", key=k, ip=ip).status_code == 200


def test_well_formed_unknown_key_is_401(server):
    ip = new_ip()
    real = create_key(server)["key"]
    # The test's idea of the checksum matches the server's...
    assert checksum(real[:47]) == real[47:], "key checksum format changed"
    # ...so this key passes the format check and is refused by the lookup.
    body = real[4:47]
    body = body[1:] + ("A" if body[0] != "A" else "B")
    unknown = "wsk_" + body + checksum("wsk_" + body)
    assert unknown != real and len(unknown) == 53
    single_json_error(v1(server, "/api/v1/me", key=unknown, ip=ip), 401)
    single_json_error(v1(server, "/api/v1/me", key=unknown, ip=ip, bearer=True), 401)


@pytest.mark.parametrize("bad", ["wsk_short", "wsk_", "wsk", "garbage", "WSK_" + "A" * 49,
                                 "xsk_" + "A" * 49, "wsk_" + "!" * 49, "wsk_" + "A" * 60])
def test_malformed_keys_are_401(server, bad):
    ip = new_ip()
    single_json_error(v1(server, "/api/v1/me", key=bad, ip=ip), 401)
    single_json_error(v1(server, "/api/v1/me", key=bad, ip=ip, bearer=True), 401)


def test_session_token_as_api_key_is_401(server):
    ip = new_ip()
    token = server.login(server.admin_username, server.admin_password)
    assert TOKEN_RE.match(token)
    single_json_error(v1(server, "/api/v1/me", key=token, ip=ip), 401)
    single_json_error(v1(server, "/api/v1/me", key=token, ip=ip, bearer=True), 401)
    single_json_error(v1(server, "/api/v1/branches", key=token, ip=ip, bearer=True), 401)


@pytest.mark.parametrize("param", ["api_key", "key", "apikey", "X-Api-Key", "access_token"])
def test_key_in_query_string_is_401(server, param):
    ip = new_ip()
    k = create_key(server)["key"]
    single_json_error(v1(server, "/api/v1/me", ip=ip, params={param: k}), 401)
    single_json_error(v1(server, "/api/v1/branches", ip=ip, params={param: k}), 401)


# ---- expiry ---------------------------------------------------------------------------------
def test_expired_key_is_401(server):
    ip = new_ip()
    # 6 s to create the key and use it once: room for a busy machine and a sanitizer build.
    exp = (datetime.now(timezone.utc) + timedelta(seconds=7)).replace(microsecond=0)
    k = create_key(server, expires_at=exp.strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert k["expires_at"] == exp.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert assert_json(v1(server, "/api/v1/me", key=k["key"], ip=ip), 200)["key"]["id"] == k["id"]
    assert datetime.now(timezone.utc) < exp, "too slow to see the key before its expiry"
    wait = (exp - datetime.now(timezone.utc)).total_seconds() + 1.0
    time.sleep(max(wait, 0))
    single_json_error(v1(server, "/api/v1/me", key=k["key"], ip=ip), 401)
    single_json_error(v1(server, "/api/v1/branches", key=k["key"], ip=ip, bearer=True), 401)
    # Renewing the expiry revives it.
    assert_json(server.api("PUT", f"/api/api-keys/{k['id']}", token=server.admin_token,
                           json={"expires_at": None}), 200)
    assert v1(server, "/api/v1/me", key=k["key"], ip=ip).status_code == 200


# ---- scopes ---------------------------------------------------------------------------------
def test_read_only_key_reads(server):
    k = create_key(server, scopes=["read"])
    for path in ("/api/v1/me", "/api/v1/branches", "/api/v1/groups"):
        assert v1(server, path, key=k["key"]).status_code == 200
    r = v1(server, "/api/v1/me", key=k["key"], method="HEAD")
    assert r.status_code == 200 and r.content == b""


@pytest.mark.parametrize("method,path", [
    ("POST", "/api/v1/me"), ("PUT", "/api/v1/me"), ("DELETE", "/api/v1/me"),
    ("POST", "/api/v1/branches"), ("DELETE", "/api/v1/groups"),
    ("POST", "/api/v1/ai/wake"), ("POST", "/api/v1/photo-jobs/wake"),
    ("POST", "/api/v1/ai/requeue-failed"), ("POST", "/api/v1/entries"),
])
def test_read_only_key_mutation_is_403(server, method, path):
    k = create_key(server, scopes=["read"])
    single_json_error(v1(server, path, key=k["key"], method=method, body={}), 403, "write")


def test_write_key_wrong_method_is_405_with_allow(server):
    k = create_key(server, scopes=["read", "write"])
    for method in ("POST", "PUT", "DELETE"):
        r = v1(server, "/api/v1/me", key=k["key"], method=method, body={})
        single_json_error(r, 405)
        assert r.headers.get("Allow") == "GET, HEAD"


def test_write_only_key_can_read(server):
    k = create_key(server, scopes=["write"])
    me = assert_json(v1(server, "/api/v1/me", key=k["key"]), 200)
    assert me["key"]["scopes"] == ["write"]


# ---- /api/v1/me -----------------------------------------------------------------------------
def test_me_unrestricted_key(server):
    k = create_key(server, scopes=["read"], rate_limit_per_min=33)
    r = v1(server, "/api/v1/me", key=k["key"])
    me = assert_json(r, 200)
    assert set(me) == {"user", "key", "organisation"}
    assert me["user"]["role"] == "admin"
    assert me["user"]["branch_ids"] is None  # every branch
    key = me["key"]
    assert "key" not in key
    assert key["id"] == k["id"]
    assert key["name"] == k["name"]
    assert key["prefix"] == k["prefix"]
    assert key["scopes"] == ["read"]
    assert key["rate_limit_per_min"] == 33
    assert key["branch_ids"] is None
    assert k["key"] not in r.text, "the secret is in /api/v1/me"
    assert "wsk_" not in r.text.replace(k["prefix"], ""), r.text


def test_me_restricted_key(server):
    b, other = server.create_branch(), server.create_branch()
    k = create_key(server, scopes=["read", "write"], branch_ids=[b["id"]])
    r = v1(server, "/api/v1/me", key=k["key"], bearer=True)
    me = assert_json(r, 200)
    assert me["user"]["role"] == "tutor"
    assert me["user"]["branch_ids"] == [b["id"]]
    assert me["key"]["branch_ids"] == [b["id"]]
    assert sorted(me["key"]["scopes"]) == ["read", "write"]
    assert "key" not in me["key"] and k["key"] not in r.text
    assert other["id"] not in me["user"]["branch_ids"]


# ---- branch restriction and list envelope --------------------------------------------------
def envelope(r):
    body = assert_json(r, 200)
    assert isinstance(body, dict) and set(body) == ENVELOPE, f"not an envelope: {r.text[:300]}"
    assert isinstance(body["items"], list)
    for f in ("total", "limit", "offset"):
        assert isinstance(body[f], int) and not isinstance(body[f], bool), body
    return body


def test_restricted_key_sees_only_its_branch(server):
    a, b = server.create_branch(), server.create_branch()
    ga1, ga2 = server.create_group(a["id"]), server.create_group(a["id"])
    server.create_group(b["id"])
    k = create_key(server, scopes=["read"], branch_ids=[a["id"]])

    def check():
        br = envelope(v1(server, "/api/v1/branches", key=k["key"]))
        assert [x["id"] for x in br["items"]] == [a["id"]]
        assert br["total"] == 1 and br["offset"] == 0
        gr = envelope(v1(server, "/api/v1/groups", key=k["key"]))
        assert sorted(g["id"] for g in gr["items"]) == sorted([ga1["id"], ga2["id"]])
        assert all(g["branch_id"] == a["id"] for g in gr["items"])
        assert gr["total"] == 2
        # Asking for the other branch's groups yields nothing of it.
        gr = envelope(v1(server, "/api/v1/groups", key=k["key"],
                         params={"branch_id": b["id"]}))
        assert gr["items"] == [] and gr["total"] == 0

    check()
    # Granting write does not widen the restriction.
    r = server.api("PUT", f"/api/api-keys/{k['id']}", token=server.admin_token,
                   json={"scopes": ["read", "write"]})
    assert sorted(assert_json(r, 200)["scopes"]) == ["read", "write"]
    check()


def test_deleted_branch_does_not_widen_a_restricted_key(server):
    a, b = server.create_branch(), server.create_branch()
    server.create_group(b["id"])
    k = create_key(server, branch_ids=[a["id"]])
    assert_json(server.api("DELETE", f"/api/branches/{a['id']}", token=server.admin_token), 200)
    me = assert_json(v1(server, "/api/v1/me", key=k["key"]), 200)
    assert me["user"]["role"] == "tutor" and me["user"]["branch_ids"] == [a["id"]]
    for path in ("/api/v1/branches", "/api/v1/groups"):
        body = envelope(v1(server, path, key=k["key"]))
        assert body["items"] == [] and body["total"] == 0, (path, body)


def test_unrestricted_key_sees_every_branch(server):
    a, b = server.create_branch(), server.create_branch()
    k = create_key(server)
    br = envelope(v1(server, "/api/v1/branches", key=k["key"], params={"limit": 1000}))
    ids = [x["id"] for x in br["items"]]
    assert a["id"] in ids and b["id"] in ids
    admin_list = assert_json(server.api("GET", "/api/branches", token=server.admin_token), 200)
    assert br["total"] == len(admin_list)


def test_list_limit_is_echoed_and_offset_pages(server):
    bs = [server.create_branch() for _ in range(3)]
    ids = sorted(b["id"] for b in bs)
    k = create_key(server, branch_ids=ids)
    body = envelope(v1(server, "/api/v1/branches", key=k["key"], params={"limit": 7}))
    assert body["limit"] == 7 and body["offset"] == 0 and body["total"] == 3
    assert [x["id"] for x in body["items"]] == ids
    body = envelope(v1(server, "/api/v1/branches", key=k["key"]))
    assert body["limit"] == 50  # the default page size
    body = envelope(v1(server, "/api/v1/branches", key=k["key"],
                       params={"limit": 1, "offset": 1}))
    assert body["limit"] == 1 and body["offset"] == 1 and body["total"] == 3
    assert [x["id"] for x in body["items"]] == [ids[1]]
    body = envelope(v1(server, "/api/v1/branches", key=k["key"],
                       params={"limit": 2, "offset": 2}))
    assert [x["id"] for x in body["items"]] == [ids[2]]
    body = envelope(v1(server, "/api/v1/branches", key=k["key"], params={"offset": 3}))
    assert body["items"] == [] and body["total"] == 3
    body = envelope(v1(server, "/api/v1/branches", key=k["key"], params={"limit": 1000}))
    assert body["limit"] == 1000
    groups = [server.create_group(ids[0]) for _ in range(2)]
    body = envelope(v1(server, "/api/v1/groups", key=k["key"], params={"limit": 1, "offset": 1}))
    assert body["limit"] == 1 and body["offset"] == 1 and body["total"] == 2
    assert [g["id"] for g in body["items"]] == [max(g["id"] for g in groups)]


@pytest.mark.parametrize("params,field", [
    ({"limit": 0}, "limit"), ({"limit": 1001}, "limit"), ({"limit": -1}, "limit"),
    ({"limit": "abc"}, "limit"), ({"offset": -1}, "offset"), ({"offset": "x"}, "offset"),
])
@pytest.mark.parametrize("path", ["/api/v1/branches", "/api/v1/groups"])
def test_bad_list_params_are_400(server, path, params, field):
    k = create_key(server)
    single_json_error(v1(server, path, key=k["key"], params=params), 400, field)
