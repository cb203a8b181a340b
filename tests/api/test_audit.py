"""The audit log: GET /api/audit (admin only), its rows and its filters."""

import itertools
import json
import urllib.parse

import pytest

from harness import assert_error, assert_json, assert_ok, uniq

ENVELOPE = {"items", "total", "limit", "offset"}
ITEM_KEYS = {"id", "created_at", "actor", "actor_user_id", "actor_key_id", "via_api_key",
             "client_ip", "action", "entity_type", "entity_id", "changes"}

_ip6 = itertools.count(1)


def new_ip():
    """A client address of this module's own, in a /64 of its own (2001:db8:a0:x::1)."""
    return f"2001:db8:a0:{next(_ip6):x}::1"


def audit(server, token=None, **params):
    r = server.api("GET", "/api/audit", token=token or server.admin_token, params=params)
    body = assert_json(r, 200)
    assert isinstance(body, dict) and set(body) == ENVELOPE, r.text[:300]
    assert isinstance(body["items"], list)
    for item in body["items"]:
        assert set(item) == ITEM_KEYS, item
        assert isinstance(item["changes"], list), item
        assert isinstance(item["via_api_key"], bool), item
    ids = [i["id"] for i in body["items"]]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids), "not newest first"
    return body


def admin_id(server):
    return assert_json(server.api("GET", "/api/auth/me", token=server.admin_token),
                       200)["user"]["id"]


def create_key(server, ip=None, **fields):
    body = {"name": uniq("auditkey"), "scopes": ["read"]}
    body.update(fields)
    return assert_json(server.api("POST", "/api/api-keys", token=server.admin_token, json=body,
                                  ip=ip), 201)


# ---- access ---------------------------------------------------------------------------------
def test_audit_needs_an_admin(server):
    assert_error(server.api("GET", "/api/audit"), 401)
    assert_error(server.api("GET", "/api/audit", headers={"X-Admin-Token": "anything"}), 401)
    _, tutor_token = server.create_tutor()
    assert_error(server.api("GET", "/api/audit", token=tutor_token), 403)
    key = create_key(server)
    assert_error(server.api("GET", "/api/audit", headers={"X-Api-Key": key["key"]}), 401)


def test_envelope_defaults(server):
    server.create_branch()
    body = audit(server)
    assert body["limit"] == 50 and body["offset"] == 0
    assert body["total"] >= 1 and 1 <= len(body["items"]) <= 50
    assert len(body["items"]) == min(body["total"], 50)
    # ... checked where more than 50 rows match: one group's own 56 (a create, 55 renames)
    group = server.create_group(server.create_branch()["id"])
    for i in range(55):
        assert_json(server.api("PUT", f"/api/groups/{group['id']}", token=server.admin_token,
                               json={"name": f"{group['name']}-{i}"}), 200)
    mine = {"entity_type": "group", "entity_id": str(group["id"])}
    body = audit(server, **mine)
    assert (body["total"], body["limit"], body["offset"], len(body["items"])) == (56, 50, 0, 50)
    assert [a["action"] for a in body["items"]] == ["update"] * 50
    rest = audit(server, offset=50, **mine)
    assert (rest["total"], len(rest["items"])) == (56, 6)
    assert [a["action"] for a in rest["items"]] == ["update"] * 5 + ["create"]
    assert body["items"][-1]["id"] > rest["items"][0]["id"]


# ---- rows -----------------------------------------------------------------------------------
def test_branch_create_is_audited(server):
    ip = new_ip()
    uid = admin_id(server)
    r = server.api("POST", "/api/branches", token=server.admin_token, ip=ip,
                   json={"name": uniq("AuditBranch")})
    branch = assert_json(r, 201)
    body = audit(server, entity_type="branch", entity_id=str(branch["id"]))
    assert body["total"] == 1 and len(body["items"]) == 1
    row = body["items"][0]
    assert row["action"] == "create"
    assert row["entity_type"] == "branch"
    assert row["entity_id"] == str(branch["id"])
    assert row["actor"] == f"user:{uid}"
    assert row["actor_user_id"] == uid
    assert row["actor_key_id"] is None
    assert row["via_api_key"] is False
    assert row["client_ip"] == ip
    assert row["changes"] == ["name"]
    assert isinstance(row["created_at"], str) and row["created_at"].endswith("Z")
    # The newest row of the whole log right after the change is this one.
    latest = audit(server, limit=1)["items"][0]
    assert latest["id"] >= row["id"]


def test_key_lifecycle_is_audited_without_secrets(server):
    ip = new_ip()
    uid = admin_id(server)
    b = server.create_branch()
    k = create_key(server, ip=ip, rate_limit_per_min=9, branch_ids=[b["id"]])
    secrets = [k["key"]]
    r = server.api("PUT", f"/api/api-keys/{k['id']}", token=server.admin_token, ip=ip,
                   json={"name": uniq("renamed"), "scopes": ["read", "write"]})
    assert_json(r, 200)
    r = server.api("POST", f"/api/api-keys/{k['id']}/rotate", token=server.admin_token, ip=ip)
    secrets.append(assert_json(r, 200)["key"])
    assert_ok(server.api("DELETE", f"/api/api-keys/{k['id']}", token=server.admin_token, ip=ip))

    body = audit(server, entity_type="api_key", entity_id=str(k["id"]))
    assert body["total"] == 4
    rows = body["items"]
    assert [row["action"] for row in rows] == ["delete", "rotate", "update", "create"]
    for row in rows:
        assert row["entity_type"] == "api_key"
        assert row["entity_id"] == str(k["id"])
        assert row["actor"] == f"user:{uid}" and row["actor_user_id"] == uid
        assert row["actor_key_id"] is None and row["via_api_key"] is False
        assert row["client_ip"] == ip
        assert all(isinstance(c, str) for c in row["changes"]), row
    create, update, rotate, delete = rows[3], rows[2], rows[1], rows[0]
    assert sorted(create["changes"]) == sorted(["name", "scopes", "rate_limit_per_min",
                                                "branch_ids"])
    assert sorted(update["changes"]) == ["name", "scopes"]
    assert delete["changes"] == []
    # Rotation changes the secret: at most its visible parts are named, never the value.
    assert set(rotate["changes"]) <= {"key", "prefix", "key_hash", "rotated_at"}, rotate
    text = json.dumps(rows)
    for secret in secrets:
        assert secret not in text
        assert secret[12:] not in text
    # The whole log carries no secret either.
    everything = audit(server, limit=1000)
    dump = json.dumps(everything)
    for secret in secrets:
        assert secret not in dump


def test_ban_and_unban_are_audited(server):
    ip = new_ip()
    uid = admin_id(server)
    r = server.api("POST", "/api/auth/login", ip=ip,
                   json={"username": uniq("robot"), "password": "x", "website": "spam"})
    assert_error(r, 403)
    assert_ok(server.api("DELETE", "/api/bans/" + urllib.parse.quote(ip, safe=""),
                         token=server.admin_token))
    # An IPv6 client is banned by its /64: the audit rows name the network.
    body = audit(server, entity_type="ip", entity_id=ip[:-1] + "/64")
    assert [row["action"] for row in body["items"]] == ["unban", "ban"]
    unban, ban = body["items"]
    assert ban["actor"] is None and ban["actor_user_id"] is None
    assert ban["client_ip"] == ip and ban["via_api_key"] is False
    assert ban["changes"] == ["honeypot"]
    assert unban["actor"] == f"user:{uid}" and unban["via_api_key"] is False


# ---- filters --------------------------------------------------------------------------------
def test_filter_by_actor(server):
    uid = admin_id(server)
    server.create_branch()
    for actor in (f"user:{uid}", str(uid)):
        body = audit(server, actor=actor, limit=1000)
        assert body["items"], actor
        assert all(i["actor"] == f"user:{uid}" and i["actor_user_id"] == uid
                   for i in body["items"])
    # Another admin's actions are not the first admin's.
    other = server.create_user(role="admin")
    other_token = server.login(other["username"], other["_password"])
    r = server.api("POST", "/api/branches", token=other_token, json={"name": uniq("Other")})
    branch = assert_json(r, 201)
    mine = audit(server, actor=f"user:{uid}", entity_type="branch", entity_id=str(branch["id"]))
    assert mine["items"] == [] and mine["total"] == 0
    theirs = audit(server, actor=f"user:{other['id']}")
    assert theirs["total"] == 1
    assert theirs["items"][0]["entity_id"] == str(branch["id"])
    # No key has changed anything (there are no mutations through /api/v1 yet).
    k = create_key(server)
    assert audit(server, actor=f"key:{k['id']}") == {"items": [], "total": 0, "limit": 50,
                                                      "offset": 0}


@pytest.mark.parametrize("value,expected", [("true", True), ("1", True), ("false", False),
                                            ("0", False)])
def test_filter_via_api_key(server, value, expected):
    server.create_branch()
    body = audit(server, via_api_key=value, limit=1000)
    assert all(i["via_api_key"] is expected for i in body["items"]), body["items"][:3]
    assert body["total"] == len(body["items"]) or len(body["items"]) == 1000
    everything = audit(server, limit=1000)
    if everything["total"] <= 1000:
        assert body["total"] == sum(1 for i in everything["items"]
                                    if i["via_api_key"] is expected)
    if not expected:
        assert body["total"] >= 1


def test_filter_by_entity_type(server):
    server.create_branch()
    body = audit(server, entity_type="branch", limit=1000)
    assert body["items"] and all(i["entity_type"] == "branch" for i in body["items"])
    assert audit(server, entity_type="no-such-type")["total"] == 0


def test_limit_and_offset(server):
    b = server.create_branch()
    for _ in range(2):
        assert_json(server.api("PUT", f"/api/branches/{b['id']}", token=server.admin_token,
                               json={"name": uniq("Renamed")}), 200)
    full = audit(server, entity_type="branch", entity_id=str(b["id"]))
    assert full["total"] == 3
    assert [i["action"] for i in full["items"]] == ["update", "update", "create"]
    page = audit(server, entity_type="branch", entity_id=str(b["id"]), limit=2)
    assert page["limit"] == 2 and page["offset"] == 0 and page["total"] == 3
    assert page["items"] == full["items"][:2]
    page = audit(server, entity_type="branch", entity_id=str(b["id"]), limit=2, offset=2)
    assert page["limit"] == 2 and page["offset"] == 2 and page["total"] == 3
    assert page["items"] == full["items"][2:]
    page = audit(server, entity_type="branch", entity_id=str(b["id"]), offset=3)
    assert page["items"] == [] and page["total"] == 3


@pytest.mark.parametrize("params,field", [
    ({"actor": "bob"}, "actor"), ({"actor": "user:abc"}, "actor"), ({"actor": "user:0"}, "actor"),
    ({"actor": "key:"}, "actor"), ({"actor": "-1"}, "actor"),
    ({"via_api_key": "yes"}, "via_api_key"), ({"via_api_key": "2"}, "via_api_key"),
    ({"limit": 0}, "limit"), ({"limit": 1001}, "limit"), ({"limit": "x"}, "limit"),
    ({"offset": -1}, "offset"),
])
def test_bad_filters_are_400(server, params, field):
    assert_error(server.api("GET", "/api/audit", token=server.admin_token, params=params), 400,
                 field)
