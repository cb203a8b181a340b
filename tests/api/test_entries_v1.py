"""Journal entries on the external interface (spec 4.1): the six /api/v1/entries endpoints,
scopes, branch restriction and the audit marker of key mutations."""

import pytest

from harness import assert_error, assert_json, assert_ok, uniq

ENVELOPE = {"items", "total", "limit", "offset", "has_more", "next_cursor"}
ENTRY_KEYS = {"id", "student_name", "group_id", "branch_id", "description", "module_id",
              "module_name", "ai_status", "created_at", "updated_at"}
AI_QUEUED = ("pending", "processing")
NO_SUCH_ID = 9_000_000_000_000


def create_key(server, scopes=("read", "write"), **fields):
    body = {"name": uniq("entkey"), "scopes": list(scopes)}
    body.update(fields)
    return assert_json(server.api("POST", "/api/api-keys", token=server.admin_token, json=body),
                       201)


def v1(server, key, method, path, body=None, params=None):
    return server.api(method, path, headers={"X-Api-Key": key}, json=body, params=params)


def v1_list(server, key, **params):
    body = assert_json(v1(server, key, "GET", "/api/v1/entries", params=params), 200)
    assert isinstance(body, dict) and set(body) == ENVELOPE, body
    assert isinstance(body["items"], list) and isinstance(body["total"], int)
    return body


def admin_entry(server, entry_id):
    return server.api("GET", f"/api/entries/{entry_id}", token=server.admin_token)


def admin_create(server, group_id, **fields):
    body = {"student_name": uniq("Stu"), "group_id": group_id, "description": "d"}
    body.update(fields)
    return assert_json(server.api("POST", "/api/entries", token=server.admin_token, json=body),
                       201)


def audit_rows(server, entry_id, **params):
    params.update({"entity_type": "entry", "entity_id": str(entry_id)})
    r = server.api("GET", "/api/audit", token=server.admin_token, params=params)
    return assert_json(r, 200)["items"]


def total_entries(server):
    r = server.api("GET", "/api/entries", token=server.admin_token, params={"limit": 1})
    assert_json(r, 200)
    return int(r.headers["X-Total-Count"])


@pytest.fixture
def world(server):
    ba, bb = server.create_branch(), server.create_branch()
    return {"ba": ba, "bb": bb, "ga": server.create_group(ba["id"]),
            "gb": server.create_group(bb["id"])}


def test_full_lifecycle(server, world):
    g = world["ga"]
    k = create_key(server)
    key = k["key"]
    tag = uniq("v1life")
    # POST
    r = v1(server, key, "POST", "/api/v1/entries",
           {"student_name": f" {tag} Ivan ", "group_id": g["id"], "description": "first"})
    e = assert_json(r, 201)
    assert ENTRY_KEYS <= set(e), f"record lacks {ENTRY_KEYS - set(e)}"
    assert isinstance(e["id"], int) and e["id"] > 0
    assert e["student_name"] == f"{tag} Ivan" and e["group_id"] == g["id"]
    assert e["branch_id"] == world["ba"]["id"] and e["description"] == "first"
    assert e["ai_status"] in AI_QUEUED
    # GET one
    got = assert_json(v1(server, key, "GET", f"/api/v1/entries/{e['id']}"), 200)
    assert got == e
    # GET list with search, limit echoed
    body = v1_list(server, key, search=tag.upper(), limit=5)
    assert body["limit"] == 5 and body["offset"] == 0 and body["total"] == 1
    assert [x["id"] for x in body["items"]] == [e["id"]]
    body = v1_list(server, key, search=tag)
    assert body["limit"] == 50
    # PUT
    u = assert_json(v1(server, key, "PUT", f"/api/v1/entries/{e['id']}",
                       {"description": "second"}), 200)
    assert u["description"] == "second" and u["student_name"] == e["student_name"]
    assert u["id"] == e["id"] and u["group_id"] == g["id"]
    assert assert_json(admin_entry(server, e["id"]), 200)["description"] == "second"
    # recheck
    assert_ok(v1(server, key, "POST", f"/api/v1/entries/{e['id']}/ai/recheck"))
    assert assert_json(admin_entry(server, e["id"]), 200)["ai_status"] in AI_QUEUED
    assert_error(v1(server, key, "POST", f"/api/v1/entries/{NO_SUCH_ID}/ai/recheck"), 404)
    # DELETE
    assert_ok(v1(server, key, "DELETE", f"/api/v1/entries/{e['id']}"))
    body = v1_list(server, key, search=tag)
    assert body["items"] == [] and body["total"] == 0
    assert_error(v1(server, key, "GET", f"/api/v1/entries/{e['id']}"), 404)
    assert_error(admin_entry(server, e["id"]), 404)
    assert_error(v1(server, key, "DELETE", f"/api/v1/entries/{e['id']}"), 404)
    assert_error(v1(server, key, "PUT", f"/api/v1/entries/{e['id']}", {"description": "x"}), 404)
    assert_error(v1(server, key, "POST", f"/api/v1/entries/{e['id']}/ai/recheck"), 404)
    assert_error(v1(server, key, "GET", f"/api/v1/entries/{NO_SUCH_ID}"), 404)

    # every mutation is audited with the key as the actor
    rows = audit_rows(server, e["id"], via_api_key="true")
    assert [r["action"] for r in rows] == ["delete", "recheck", "update", "create"]
    for row in rows:
        assert row["via_api_key"] is True
        assert row["actor"] == f"key:{k['id']}"
        assert row["actor_key_id"] == k["id"]
        assert row["entity_type"] == "entry" and row["entity_id"] == str(e["id"])
    assert audit_rows(server, e["id"], via_api_key="false") == []


def test_v1_create_validation(server, world):
    key = create_key(server)["key"]
    g = world["ga"]
    before = total_entries(server)
    for body, field in (({"group_id": g["id"], "description": "x"}, "student_name"),
                        ({"student_name": "x", "description": "x"}, "group_id"),
                        ({"student_name": "x", "group_id": str(g["id"])}, "group_id"),
                        ({"student_name": "x", "group_id": g["id"], "description": 1},
                         "description"),
                        ({"student_name": "x", "group_id": NO_SUCH_ID}, "group_id"),
                        ({"student_name": "x", "group_id": g["id"], "module_id": NO_SUCH_ID},
                         "module_id"),
                        ({"student_name": "x", "group_id": g["id"], "extra": 1}, "extra")):
        assert_error(v1(server, key, "POST", "/api/v1/entries", body), 400, field)
    assert total_entries(server) == before


def test_v1_list_paging(server, world):
    key = create_key(server, scopes=["read"])["key"]
    tag = uniq("v1page")
    made = [admin_create(server, world["ga"]["id"], description=f"{tag} {i}")["id"]
            for i in range(3)]
    body = v1_list(server, key, search=tag, limit=2)
    assert [x["id"] for x in body["items"]] == made[::-1][:2]
    assert body["total"] == 3 and body["limit"] == 2 and body["offset"] == 0
    body = v1_list(server, key, search=tag, limit=2, offset=2)
    assert [x["id"] for x in body["items"]] == [made[0]]
    assert body["total"] == 3 and body["limit"] == 2 and body["offset"] == 2
    for params in ({"limit": "0"}, {"limit": "1001"}, {"offset": "-1"}):
        assert_error(v1(server, key, "GET", "/api/v1/entries", params=params), 400,
                     next(iter(params)))


def test_read_only_key_cannot_mutate(server, world):
    ro = create_key(server, scopes=["read"])
    key = ro["key"]
    e = admin_create(server, world["ga"]["id"], description="stays")
    snapshot = assert_json(admin_entry(server, e["id"]), 200)
    audit_before = audit_rows(server, e["id"])
    before = total_entries(server)

    assert_error(v1(server, key, "POST", "/api/v1/entries",
                    {"student_name": "x", "group_id": world["ga"]["id"], "description": "x"}),
                 403, "write")
    assert_error(v1(server, key, "PUT", f"/api/v1/entries/{e['id']}", {"description": "x"}),
                 403, "write")
    assert_error(v1(server, key, "DELETE", f"/api/v1/entries/{e['id']}"), 403, "write")
    assert_error(v1(server, key, "POST", f"/api/v1/entries/{e['id']}/ai/recheck"), 403, "write")

    assert total_entries(server) == before
    assert assert_json(admin_entry(server, e["id"]), 200) == snapshot
    assert audit_rows(server, e["id"]) == audit_before
    r = server.api("GET", "/api/audit", token=server.admin_token,
                   params={"actor": f"key:{ro['id']}"})
    assert assert_json(r, 200)["total"] == 0
    # it still reads
    assert assert_json(v1(server, key, "GET", f"/api/v1/entries/{e['id']}"), 200) == snapshot


def test_branch_restricted_key(server, world):
    ga, gb = world["ga"], world["gb"]
    key = create_key(server, branch_ids=[world["ba"]["id"]])["key"]
    tag = uniq("v1br")
    ea = admin_create(server, ga["id"], description=f"{tag} A")
    eb = admin_create(server, gb["id"], description=f"{tag} B")
    snapshot_b = assert_json(admin_entry(server, eb["id"]), 200)

    body = v1_list(server, key, search=tag)
    assert [x["id"] for x in body["items"]] == [ea["id"]] and body["total"] == 1
    assert v1_list(server, key, branch_id=world["bb"]["id"])["total"] == 0
    assert v1_list(server, key, group_id=gb["id"])["total"] == 0

    assert_error(v1(server, key, "GET", f"/api/v1/entries/{eb['id']}"), 404)
    assert_error(v1(server, key, "PUT", f"/api/v1/entries/{eb['id']}", {"description": "x"}),
                 404)
    assert_error(v1(server, key, "DELETE", f"/api/v1/entries/{eb['id']}"), 404)
    assert_error(v1(server, key, "POST", f"/api/v1/entries/{eb['id']}/ai/recheck"), 404)
    assert assert_json(admin_entry(server, eb["id"]), 200) == snapshot_b

    before = total_entries(server)
    assert_error(v1(server, key, "POST", "/api/v1/entries",
                    {"student_name": "x", "group_id": gb["id"], "description": "x"}),
                 400, "group_id")
    assert_error(v1(server, key, "PUT", f"/api/v1/entries/{ea['id']}", {"group_id": gb["id"]}),
                 400, "group_id")
    assert total_entries(server) == before
    assert assert_json(admin_entry(server, ea["id"]), 200)["group_id"] == ga["id"]

    # in its own branch the key works
    mine = assert_json(v1(server, key, "POST", "/api/v1/entries",
                          {"student_name": "y", "group_id": ga["id"],
                           "description": f"{tag} mine"}), 201)
    assert mine["branch_id"] == world["ba"]["id"]
    body = v1_list(server, key, search=tag)
    assert [x["id"] for x in body["items"]] == [mine["id"], ea["id"]] and body["total"] == 2


def test_v1_needs_a_key_not_a_session(server, world):
    e = admin_create(server, world["ga"]["id"])
    assert_error(server.api("GET", "/api/v1/entries"), 401)
    assert_error(server.api("GET", f"/api/v1/entries/{e['id']}", token=server.admin_token), 401)
    assert_error(server.api("DELETE", f"/api/v1/entries/{e['id']}", token=server.admin_token),
                 401)
    assert assert_json(admin_entry(server, e["id"]), 200)["id"] == e["id"]
