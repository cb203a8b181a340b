"""API key management on the administrative interface: /api/api-keys* (admin session only)."""

import itertools
import json
import re

import pytest

from harness import assert_error, assert_json, assert_ok, uniq

KEY_RE = re.compile(r"^wsk_[0-9A-Za-z]{49}$")
RECORD_KEYS = {"id", "name", "prefix", "scopes", "rate_limit_per_min", "branch_ids",
               "expires_at", "created_at", "updated_at", "last_used_at"}
NO_SUCH_BRANCH = 9_000_000_000_000  # a valid id that no branch has
NO_SUCH_KEY = 9_000_000_000_000

_ips = itertools.count(1)


def new_ip():
    """A client address of this module's own (203.0.113.1-99): wrong keys count against it."""
    n = next(_ips)
    assert n < 100, "test_keys ran out of client addresses"
    return f"203.0.113.{n}"


def create_key(server, scopes=("read",), **fields):
    body = {"name": uniq("key"), "scopes": list(scopes)}
    body.update(fields)
    r = server.api("POST", "/api/api-keys", token=server.admin_token, json=body)
    return assert_json(r, 201)


def v1_me(server, key, ip=None):
    return server.api("GET", "/api/v1/me", headers={"X-Api-Key": key}, ip=ip)


def list_keys(server):
    r = server.api("GET", "/api/api-keys", token=server.admin_token)
    keys = assert_json(r, 200)
    assert isinstance(keys, list), r.text
    return keys, r.text


def listed(server, key_id):
    found = [k for k in list_keys(server)[0] if k["id"] == key_id]
    assert len(found) <= 1
    return found[0] if found else None


# ---- access control -------------------------------------------------------------------------
ROUTES = [
    ("GET", "/api/api-keys", None),
    ("GET", "/api/api-keys/meta", None),
    ("POST", "/api/api-keys", {"name": "x", "scopes": ["read"]}),
    ("GET", "/api/api-keys/{id}", None),
    ("PUT", "/api/api-keys/{id}", {"name": "renamed-by-intruder"}),
    ("DELETE", "/api/api-keys/{id}", None),
    ("POST", "/api/api-keys/{id}/rotate", None),
]


def check_untouched(server, key):
    rec = listed(server, key["id"])
    assert rec is not None and rec["name"] == key["name"] and rec["prefix"] == key["prefix"]
    assert v1_me(server, key["key"]).status_code == 200


@pytest.mark.parametrize("method,path,body", ROUTES)
def test_without_session_is_401(server, method, path, body):
    key = create_key(server)
    path = path.format(id=key["id"])
    assert_error(server.api(method, path, json=body), 401)
    check_untouched(server, key)


@pytest.mark.parametrize("method,path,body", ROUTES)
def test_x_admin_token_alone_is_401(server, method, path, body):
    key = create_key(server)
    path = path.format(id=key["id"])
    for value in ("anything", server.admin_token):
        assert_error(server.api(method, path, json=body, headers={"X-Admin-Token": value}), 401)
    check_untouched(server, key)


@pytest.mark.parametrize("method,path,body", ROUTES)
def test_api_key_does_not_authorise_key_management(server, method, path, body):
    key = create_key(server, scopes=["read", "write"])
    path = path.format(id=key["id"])
    for headers in ({"X-Api-Key": key["key"]}, {"Authorization": f"Bearer {key['key']}"}):
        assert_error(server.api(method, path, json=body, headers=headers), 401)
    check_untouched(server, key)


@pytest.mark.parametrize("method,path,body", ROUTES)
def test_tutor_session_is_403(server, method, path, body):
    key = create_key(server)
    _, tutor_token = server.create_tutor()
    path = path.format(id=key["id"])
    assert_error(server.api(method, path, token=tutor_token, json=body), 403)
    check_untouched(server, key)


# ---- list and meta --------------------------------------------------------------------------
def test_list_never_contains_the_secret(server):
    k1 = create_key(server)
    k2 = create_key(server, scopes=["read", "write"], rate_limit_per_min=7)
    keys, text = list_keys(server)
    for k in keys:
        assert "key" not in k, f"listing carries a secret: {k}"
        assert RECORD_KEYS <= set(k), f"record lacks {RECORD_KEYS - set(k)}: {k}"
    for created in (k1, k2):
        assert created["key"] not in text
        rec = [k for k in keys if k["id"] == created["id"]]
        assert len(rec) == 1
        assert rec[0]["prefix"] == created["prefix"]
        assert rec[0]["name"] == created["name"]
        assert rec[0]["scopes"] == created["scopes"]
    assert [k for k in keys if k["id"] == k2["id"]][0]["rate_limit_per_min"] == 7
    # The single-record view has no secret either.
    r = server.api("GET", f"/api/api-keys/{k1['id']}", token=server.admin_token)
    rec = assert_json(r, 200)
    assert "key" not in rec and k1["key"] not in r.text
    assert rec["id"] == k1["id"] and rec["prefix"] == k1["prefix"]


def test_get_unknown_key_is_404(server):
    assert_error(server.api("GET", f"/api/api-keys/{NO_SUCH_KEY}", token=server.admin_token),
                 404)


def test_meta(server):
    meta = assert_json(server.api("GET", "/api/api-keys/meta", token=server.admin_token), 200)
    assert isinstance(meta, dict)
    assert meta["scopes"] == {"read": True, "write": True}
    assert meta["rate_limit_per_min"] == {"min": 1, "max": 10000, "default": 60}


# ---- create ---------------------------------------------------------------------------------
def test_create_key(server):
    name = uniq("Key")
    r = server.api("POST", "/api/api-keys", token=server.admin_token,
                   json={"name": name, "scopes": ["read"]})
    k = assert_json(r, 201)
    assert RECORD_KEYS <= set(k), f"record lacks {RECORD_KEYS - set(k)}: {k}"
    assert isinstance(k["id"], int) and k["id"] > 0
    assert isinstance(k["key"], str) and len(k["key"]) == 53, k["key"]
    assert KEY_RE.match(k["key"]), k["key"]
    assert isinstance(k["prefix"], str) and k["prefix"].startswith("wsk_")
    assert len("wsk_") < len(k["prefix"]) < len(k["key"])
    assert k["key"].startswith(k["prefix"])
    assert k["name"] == name
    assert k["scopes"] == ["read"]
    assert k["rate_limit_per_min"] == 60  # the server's default
    assert k["branch_ids"] is None  # every branch
    assert k["expires_at"] is None
    assert k["last_used_at"] is None
    assert isinstance(k["created_at"], str) and k["created_at"].endswith("Z")
    # The secret works at once.
    assert assert_json(v1_me(server, k["key"]), 200)["key"]["id"] == k["id"]


def test_create_key_with_every_field(server):
    b1, b2 = server.create_branch(), server.create_branch()
    k = create_key(server, scopes=["write", "read"], rate_limit_per_min=25,
                   expires_at="2099-06-30T10:00:00+02:00", branch_ids=[b2["id"], b1["id"]])
    assert sorted(k["scopes"]) == ["read", "write"]
    assert k["rate_limit_per_min"] == 25
    assert k["expires_at"] == "2099-06-30T08:00:00Z"  # normalised to UTC
    assert k["branch_ids"] == sorted([b1["id"], b2["id"]])
    rec = listed(server, k["id"])
    assert rec["rate_limit_per_min"] == 25 and rec["expires_at"] == "2099-06-30T08:00:00Z"
    assert rec["branch_ids"] == sorted([b1["id"], b2["id"]])


def test_create_key_trims_name_and_accepts_null_optionals(server):
    name = uniq("Trim")
    k = create_key(server, name=f"  {name}\t", rate_limit_per_min=None, expires_at=None,
                   branch_ids=None)
    assert k["name"] == name
    assert k["rate_limit_per_min"] == 60 and k["expires_at"] is None and k["branch_ids"] is None


def test_keys_are_distinct(server):
    a, b = create_key(server), create_key(server)
    assert a["id"] != b["id"]
    assert a["key"] != b["key"]
    assert a["prefix"] != b["prefix"]


INVALID_CREATE = [
    ({"scopes": None}, "scopes"),  # None: the member is left out
    ({"scopes": []}, "scopes"),
    ({"scopes": ["admin"]}, "scopes"),
    ({"scopes": ["read", "admin"]}, "scopes"),
    ({"scopes": "read"}, "scopes"),
    ({"scopes": [1]}, "scopes"),
    ({"rate_limit_per_min": 0}, "rate_limit_per_min"),
    ({"rate_limit_per_min": -1}, "rate_limit_per_min"),
    ({"rate_limit_per_min": 999999}, "rate_limit_per_min"),
    ({"rate_limit_per_min": 10001}, "rate_limit_per_min"),
    ({"rate_limit_per_min": "10"}, "rate_limit_per_min"),
    ({"rate_limit_per_min": 1.5}, "rate_limit_per_min"),
    ({"rate_limit_per_min": True}, "rate_limit_per_min"),
    ({"branch_ids": [NO_SUCH_BRANCH]}, "branch_ids"),
    ({"branch_ids": [0]}, "branch_ids"),
    ({"branch_ids": ["1"]}, "branch_ids"),
    ({"branch_ids": 1}, "branch_ids"),
    ({"expires_at": "tomorrow"}, "expires_at"),
    ({"expires_at": "2026-13-01T00:00:00Z"}, "expires_at"),
    ({"expires_at": "2099-02-30T00:00:00Z"}, "expires_at"),
    ({"expires_at": "2099-01-01"}, "expires_at"),
    ({"expires_at": "2020-01-01T00:00:00Z"}, "expires_at"),
    ({"expires_at": 4102444800}, "expires_at"),
    ({"name": None}, "name"),
    ({"name": ""}, "name"),
    ({"name": "   "}, "name"),
    ({"name": 5}, "name"),
    ({"colour": "blue"}, "colour"),
    ({"key": "wsk_" + "A" * 49}, "key"),
]


@pytest.mark.parametrize("change,field", INVALID_CREATE,
                         ids=[f"{f}-{i}" for i, (_, f) in enumerate(INVALID_CREATE)])
def test_create_key_validation(server, change, field):
    b = server.create_branch()
    name = uniq("invalid")
    body = {"name": name, "scopes": ["read"], "branch_ids": [b["id"]]}
    for k, v in change.items():
        if v is None and k in ("scopes", "name"):
            body.pop(k)
        else:
            body[k] = v
    r = server.api("POST", "/api/api-keys", token=server.admin_token, json=body)
    assert_error(r, 400, field)
    assert "wsk_" not in r.text
    assert not [k for k in list_keys(server)[0] if k["name"] == name], "a key was created"


def test_create_key_rate_limit_bounds(server):
    assert create_key(server, rate_limit_per_min=1)["rate_limit_per_min"] == 1
    assert create_key(server, rate_limit_per_min=10000)["rate_limit_per_min"] == 10000


# ---- update ---------------------------------------------------------------------------------
def test_update_key(server):
    b1, b2 = server.create_branch(), server.create_branch()
    k = create_key(server, rate_limit_per_min=10)
    new_name = uniq("Renamed")
    r = server.api("PUT", f"/api/api-keys/{k['id']}", token=server.admin_token,
                   json={"name": new_name, "scopes": ["read", "write"], "rate_limit_per_min": 20,
                         "branch_ids": [b1["id"], b2["id"]],
                         "expires_at": "2098-01-02T03:04:05Z"})
    rec = assert_json(r, 200)
    assert "key" not in rec and k["key"] not in r.text
    assert rec["id"] == k["id"]
    assert rec["name"] == new_name
    assert sorted(rec["scopes"]) == ["read", "write"]
    assert rec["rate_limit_per_min"] == 20
    assert rec["branch_ids"] == sorted([b1["id"], b2["id"]])
    assert rec["expires_at"] == "2098-01-02T03:04:05Z"
    assert rec["prefix"] == k["prefix"]
    assert listed(server, k["id"]) == rec

    # The secret is unchanged and the key acts with the new settings.
    me = assert_json(v1_me(server, k["key"]), 200)
    assert me["user"]["role"] == "tutor"
    assert sorted(me["user"]["branch_ids"]) == sorted([b1["id"], b2["id"]])
    assert sorted(me["key"]["scopes"]) == ["read", "write"]

    # Partial update: only the name changes.
    r = server.api("PUT", f"/api/api-keys/{k['id']}", token=server.admin_token,
                   json={"name": k["name"]})
    rec2 = assert_json(r, 200)
    assert rec2["name"] == k["name"]
    assert rec2["rate_limit_per_min"] == 20
    assert rec2["branch_ids"] == sorted([b1["id"], b2["id"]])
    assert rec2["expires_at"] == "2098-01-02T03:04:05Z"

    # expires_at null clears; branch_ids null lifts the restriction.
    r = server.api("PUT", f"/api/api-keys/{k['id']}", token=server.admin_token,
                   json={"expires_at": None, "branch_ids": None, "scopes": ["read"]})
    rec3 = assert_json(r, 200)
    assert rec3["expires_at"] is None
    assert rec3["branch_ids"] is None
    assert rec3["scopes"] == ["read"]
    me = assert_json(v1_me(server, k["key"]), 200)
    assert me["user"]["role"] == "admin" and me["user"]["branch_ids"] is None


INVALID_UPDATE = [
    ({"rate_limit_per_min": 0}, "rate_limit_per_min"),
    ({"rate_limit_per_min": 999999}, "rate_limit_per_min"),
    ({"rate_limit_per_min": "10"}, "rate_limit_per_min"),
    ({"rate_limit_per_min": 1.5}, "rate_limit_per_min"),
    ({"rate_limit_per_min": None}, "rate_limit_per_min"),
    ({"branch_ids": [NO_SUCH_BRANCH]}, "branch_ids"),
    ({"scopes": []}, "scopes"),
    ({"scopes": ["admin"]}, "scopes"),
    ({"scopes": None}, "scopes"),
    ({"expires_at": "2020-01-01T00:00:00Z"}, "expires_at"),
    ({"expires_at": "tomorrow"}, "expires_at"),
    ({"name": ""}, "name"),
    ({"colour": "blue"}, "colour"),
]


@pytest.mark.parametrize("body,field", INVALID_UPDATE,
                         ids=[f"{f}-{i}" for i, (_, f) in enumerate(INVALID_UPDATE)])
def test_update_key_validation(server, body, field):
    k = create_key(server, rate_limit_per_min=11)
    before = listed(server, k["id"])
    assert_error(server.api("PUT", f"/api/api-keys/{k['id']}", token=server.admin_token,
                            json=body), 400, field)
    assert listed(server, k["id"]) == before


def test_update_unknown_key_is_404(server):
    assert_error(server.api("PUT", f"/api/api-keys/{NO_SUCH_KEY}", token=server.admin_token,
                            json={"name": "x"}), 404)


# ---- delete ---------------------------------------------------------------------------------
def test_delete_key(server):
    ip = new_ip()
    k = create_key(server)
    other = create_key(server)
    assert v1_me(server, k["key"], ip=ip).status_code == 200
    assert_ok(server.api("DELETE", f"/api/api-keys/{k['id']}", token=server.admin_token))
    assert_error(v1_me(server, k["key"], ip=ip), 401)
    assert listed(server, k["id"]) is None
    assert_error(server.api("GET", f"/api/api-keys/{k['id']}", token=server.admin_token), 404)
    assert_error(server.api("DELETE", f"/api/api-keys/{k['id']}", token=server.admin_token), 404)
    assert_error(server.api("PUT", f"/api/api-keys/{k['id']}", token=server.admin_token,
                            json={"name": "x"}), 404)
    assert_error(server.api("POST", f"/api/api-keys/{k['id']}/rotate", token=server.admin_token),
                 404)
    # Other keys are unaffected.
    assert v1_me(server, other["key"], ip=ip).status_code == 200


def test_delete_unknown_key_is_404(server):
    assert_error(server.api("DELETE", f"/api/api-keys/{NO_SUCH_KEY}", token=server.admin_token),
                 404)


# ---- rotate ---------------------------------------------------------------------------------
def test_rotate_key(server):
    ip = new_ip()
    b = server.create_branch()
    k = create_key(server, scopes=["read", "write"], rate_limit_per_min=17, branch_ids=[b["id"]])
    assert v1_me(server, k["key"], ip=ip).status_code == 200
    r = server.api("POST", f"/api/api-keys/{k['id']}/rotate", token=server.admin_token)
    rot = assert_json(r, 200)
    assert rot["id"] == k["id"]
    assert KEY_RE.match(rot["key"]), rot["key"]
    assert rot["key"] != k["key"]
    assert rot["key"].startswith(rot["prefix"])
    assert isinstance(rot["rotated_at"], str) and rot["rotated_at"]
    assert rot["name"] == k["name"]
    assert sorted(rot["scopes"]) == ["read", "write"]
    assert rot["rate_limit_per_min"] == 17
    assert rot["branch_ids"] == [b["id"]]
    # Old secret refused at once, new one accepted.
    assert_error(v1_me(server, k["key"], ip=ip), 401)
    me = assert_json(v1_me(server, rot["key"], ip=ip), 200)
    assert me["key"]["id"] == k["id"] and me["key"]["prefix"] == rot["prefix"]
    # Listing: no secret, the new prefix.
    rec = listed(server, k["id"])
    assert "key" not in rec and rec["prefix"] == rot["prefix"]
    text = list_keys(server)[1]
    assert rot["key"] not in text and k["key"] not in text
    # A second rotation again invalidates the previous secret.
    rot2 = assert_json(server.api("POST", f"/api/api-keys/{k['id']}/rotate",
                                  token=server.admin_token), 200)
    assert rot2["key"] not in (k["key"], rot["key"])
    assert_error(v1_me(server, rot["key"], ip=ip), 401)
    assert v1_me(server, rot2["key"], ip=ip).status_code == 200


def test_rotate_unknown_key_is_404(server):
    assert_error(server.api("POST", f"/api/api-keys/{NO_SUCH_KEY}/rotate",
                            token=server.admin_token), 404)


# ---- last use -------------------------------------------------------------------------------
def test_last_used_at_is_recorded(server):
    ip = new_ip()
    k = create_key(server)
    rec = listed(server, k["id"])
    assert rec["last_used_at"] is None
    assert v1_me(server, k["key"], ip=ip).status_code == 200
    rec = listed(server, k["id"])
    assert isinstance(rec["last_used_at"], str) and rec["last_used_at"].endswith("Z"), rec
    assert rec["last_used_at"] >= rec["created_at"]
    assert rec.get("last_used_ip") == ip
    # Still no secret anywhere.
    assert "key" not in rec and k["key"] not in json.dumps(rec)
