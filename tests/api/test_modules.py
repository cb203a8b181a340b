"""Modules: GET /api/modules is public; changes are for admins and audited; soft delete and
restore; GET /api/v1/modules."""

import pytest

from harness import assert_error, assert_json, assert_ok, uniq

MODULE_KEYS = {"id", "name", "lessons_count", "entries_count"}
ENVELOPE = {"items", "total", "limit", "offset", "has_more", "next_cursor"}
NO_SUCH_ID = 9_000_000_000_000


def create_module(server, name=None, **fields):
    body = {"name": name or uniq("Module")}
    body.update(fields)
    r = server.api("POST", "/api/modules", token=server.admin_token, json=body)
    return assert_json(r, 201)


def list_modules(server, token=None, **params):
    r = server.api("GET", "/api/modules", token=token, params=params)
    items = assert_json(r, 200)
    assert isinstance(items, list), r.text[:300]
    assert "X-Total-Count" in r.headers, r.headers
    return items, int(r.headers["X-Total-Count"])


def find(server, module_id, search):
    found = [m for m in list_modules(server, search=search)[0] if m["id"] == module_id]
    assert len(found) <= 1
    return found[0] if found else None


def get_module(server, module_id):
    return server.api("GET", f"/api/modules/{module_id}")


def audit_rows(server, module_id):
    r = server.api("GET", "/api/audit", token=server.admin_token,
                   params={"entity_type": "module", "entity_id": str(module_id)})
    return assert_json(r, 200)["items"]


def create_entry(server, group_id, module_id=None, **fields):
    body = {"student_name": uniq("Stu"), "group_id": group_id, "description": "d"}
    if module_id is not None:
        body["module_id"] = module_id
    body.update(fields)
    return assert_json(server.api("POST", "/api/entries", token=server.admin_token, json=body),
                       201)


def get_entry(server, entry_id):
    return assert_json(server.api("GET", f"/api/entries/{entry_id}", token=server.admin_token),
                       200)


# ---- public list ----------------------------------------------------------------------------
def test_list_is_public_with_search_and_paging(server):
    tag = uniq("MoDsRch")
    m1 = create_module(server, name=f"{tag} Algebra", lessons_count=8)
    m2 = create_module(server, name=f"{tag} Biology", lessons_count=0)
    m3 = create_module(server, name=f"{tag} Chemistry", lessons_count=1000)
    other = create_module(server)

    # No token at all: 200 array.
    items, total = list_modules(server, search=tag)
    assert [m["id"] for m in items] == [m1["id"], m2["id"], m3["id"]] and total == 3
    for m in items:
        assert MODULE_KEYS <= set(m), m
        assert m["entries_count"] == 0
    assert [m["lessons_count"] for m in items] == [8, 0, 1000]
    # search is case-insensitive
    assert list_modules(server, search=tag.upper())[1] == 3
    assert list_modules(server, search=tag.lower())[1] == 3
    items, total = list_modules(server, search=f"{tag} bIoLoGy".lower())
    assert [m["id"] for m in items] == [m2["id"]] and total == 1
    assert other["id"] not in [m["id"] for m in list_modules(server, search=tag)[0]]
    # paging
    page, total = list_modules(server, search=tag, limit=2)
    assert [m["id"] for m in page] == [m1["id"], m2["id"]] and total == 3
    page, total = list_modules(server, search=tag, limit=2, offset=2)
    assert [m["id"] for m in page] == [m3["id"]] and total == 3
    page, total = list_modules(server, search=tag, offset=3)
    assert page == [] and total == 3
    # with a session too
    assert list_modules(server, token=server.admin_token, search=tag)[1] == 3
    # a single module is public too
    got = assert_json(get_module(server, m1["id"]), 200)
    assert got["name"] == m1["name"] and got["lessons_count"] == 8
    assert_error(get_module(server, NO_SUCH_ID), 404)


def test_search_wildcards_are_literal(server):
    tag = uniq("wild")
    pct = create_module(server, name=f"{tag} 50% off")
    create_module(server, name=f"{tag} 500 off")
    under = create_module(server, name=f"{tag} a_b")
    create_module(server, name=f"{tag} axb")
    assert [m["id"] for m in list_modules(server, search=f"{tag} 50%")[0]] == [pct["id"]]
    assert [m["id"] for m in list_modules(server, search=f"{tag} a_b")[0]] == [under["id"]]


@pytest.mark.parametrize("params", [{"limit": "0"}, {"limit": "1001"}, {"limit": "ten"},
                                    {"offset": "-1"}])
def test_list_bad_paging_is_400(server, params):
    assert_error(server.api("GET", "/api/modules", params=params), 400, next(iter(params)))


def test_entries_count_counts_live_entries(server):
    branch = server.create_branch()
    group = server.create_group(branch["id"])
    m = create_module(server)
    e1 = create_entry(server, group["id"], m["id"])
    create_entry(server, group["id"], m["id"])
    create_entry(server, group["id"], m["id"])
    create_entry(server, group["id"])  # no module
    assert find(server, m["id"], m["name"])["entries_count"] == 3
    assert assert_json(get_module(server, m["id"]), 200)["entries_count"] == 3
    assert_ok(server.api("DELETE", f"/api/entries/{e1['id']}", token=server.admin_token))
    assert find(server, m["id"], m["name"])["entries_count"] == 2


# ---- admin only -----------------------------------------------------------------------------
def test_changes_need_an_admin(server):
    m = create_module(server)
    branch = server.create_branch()
    _, tutor = server.create_tutor(branch_ids=[branch["id"]])
    name = uniq("Nope")
    for token, status in ((None, 401), (tutor, 403)):
        assert_error(server.api("POST", "/api/modules", token=token, json={"name": name}), status)
        assert_error(server.api("PUT", f"/api/modules/{m['id']}", token=token,
                                json={"name": name}), status)
        assert_error(server.api("DELETE", f"/api/modules/{m['id']}", token=token), status)
        assert_error(server.api("POST", f"/api/modules/{m['id']}/restore", token=token), status)
    assert list_modules(server, search=name) == ([], 0)
    got = assert_json(get_module(server, m["id"]), 200)
    assert got["name"] == m["name"]
    # the tutor may read the public list
    assert list_modules(server, token=tutor, search=m["name"])[1] == 1


# ---- create / update ------------------------------------------------------------------------
def test_create_update_and_audit(server):
    name = uniq("Geometry")
    r = server.api("POST", "/api/modules", token=server.admin_token,
                   json={"name": f"  {name} ", "lessons_count": 12, "description": "shapes"})
    m = assert_json(r, 201)
    assert MODULE_KEYS <= set(m)
    assert m["name"] == name and m["lessons_count"] == 12 and m["entries_count"] == 0
    assert isinstance(m["id"], int) and m["id"] > 0
    # default lessons_count
    assert create_module(server)["lessons_count"] == 0
    # partial update
    u = assert_json(server.api("PUT", f"/api/modules/{m['id']}", token=server.admin_token,
                               json={"lessons_count": 14}), 200)
    assert u["lessons_count"] == 14 and u["name"] == name
    new_name = uniq("Geo2")
    u = assert_json(server.api("PUT", f"/api/modules/{m['id']}", token=server.admin_token,
                               json={"name": new_name}), 200)
    assert u["name"] == new_name and u["lessons_count"] == 14
    assert assert_json(get_module(server, m["id"]), 200)["name"] == new_name
    assert_error(server.api("PUT", f"/api/modules/{NO_SUCH_ID}", token=server.admin_token,
                            json={"name": uniq("x")}), 404)
    assert_ok(server.api("DELETE", f"/api/modules/{m['id']}", token=server.admin_token))
    assert_json(server.api("POST", f"/api/modules/{m['id']}/restore",
                           token=server.admin_token), 200)
    rows = audit_rows(server, m["id"])
    assert [r["action"] for r in rows] == ["restore", "delete", "update", "update", "create"]
    for row in rows:
        assert row["entity_type"] == "module" and row["entity_id"] == str(m["id"])
        assert row["via_api_key"] is False and row["actor"].startswith("user:")


def test_duplicate_name_is_409(server):
    a = create_module(server)
    b = create_module(server)
    n_before = list_modules(server, search=a["name"])[1]
    assert_error(server.api("POST", "/api/modules", token=server.admin_token,
                            json={"name": a["name"]}), 409)
    assert_error(server.api("POST", "/api/modules", token=server.admin_token,
                            json={"name": f" {a['name']} "}), 409)
    assert_error(server.api("PUT", f"/api/modules/{b['id']}", token=server.admin_token,
                            json={"name": a["name"]}), 409)
    assert list_modules(server, search=a["name"])[1] == n_before == 1
    assert assert_json(get_module(server, b["id"]), 200)["name"] == b["name"]
    # renaming a module to its own name is no conflict
    assert_json(server.api("PUT", f"/api/modules/{a['id']}", token=server.admin_token,
                           json={"name": a["name"]}), 200)


@pytest.mark.parametrize("body,field", [
    ({"lessons_count": -1}, "lessons_count"),
    ({"lessons_count": 1001}, "lessons_count"),
    ({"lessons_count": "x"}, "lessons_count"),
    ({"lessons_count": "5"}, "lessons_count"),
    ({"lessons_count": 2.5}, "lessons_count"),
    ({"name": ""}, "name"),
    ({"name": "   "}, "name"),
    ({"name": 5}, "name"),
    ({"colour": "red"}, "colour"),
])
def test_validation_is_400_and_saves_nothing(server, body, field):
    m = create_module(server, lessons_count=3)
    name = uniq("Val")
    create_body = {"name": name}
    create_body.update(body)
    assert_error(server.api("POST", "/api/modules", token=server.admin_token, json=create_body),
                 400, field)
    assert list_modules(server, search=name) == ([], 0)
    assert_error(server.api("PUT", f"/api/modules/{m['id']}", token=server.admin_token,
                            json=body), 400, field)
    got = assert_json(get_module(server, m["id"]), 200)
    assert got["name"] == m["name"] and got["lessons_count"] == 3


def test_create_without_name_is_400(server):
    assert_error(server.api("POST", "/api/modules", token=server.admin_token,
                            json={"lessons_count": 2}), 400, "name")


# ---- soft delete and restore ----------------------------------------------------------------
def test_soft_delete_unlinks_entries_and_restore(server):
    branch = server.create_branch()
    group = server.create_group(branch["id"])
    m = create_module(server, lessons_count=4)
    keep = create_module(server)
    e1 = create_entry(server, group["id"], m["id"])
    e2 = create_entry(server, group["id"], m["id"])
    e3 = create_entry(server, group["id"], keep["id"])
    assert get_entry(server, e1["id"])["module_name"] == m["name"]

    assert_ok(server.api("DELETE", f"/api/modules/{m['id']}", token=server.admin_token))
    assert list_modules(server, search=m["name"]) == ([], 0)
    assert_error(get_module(server, m["id"]), 404)
    assert_error(server.api("PUT", f"/api/modules/{m['id']}", token=server.admin_token,
                            json={"lessons_count": 5}), 404)
    assert_error(server.api("DELETE", f"/api/modules/{m['id']}", token=server.admin_token), 404)
    for e in (e1, e2):
        got = get_entry(server, e["id"])
        assert got["module_id"] is None and got["module_name"] is None, got
    got = get_entry(server, e3["id"])
    assert got["module_id"] == keep["id"] and got["module_name"] == keep["name"]
    r = server.api("GET", "/api/entries", token=server.admin_token,
                   params={"module_id": m["id"]})
    assert assert_json(r, 200) == [] and r.headers["X-Total-Count"] == "0"
    # the deleted module can't be given to an entry
    assert_error(server.api("PUT", f"/api/entries/{e1['id']}", token=server.admin_token,
                            json={"module_id": m["id"]}), 400, "module_id")
    # restore: back in the list, entries stay unlinked
    r = server.api("POST", f"/api/modules/{m['id']}/restore", token=server.admin_token)
    restored = assert_json(r, 200)
    assert restored["id"] == m["id"] and restored["name"] == m["name"]
    assert restored["lessons_count"] == 4 and restored["entries_count"] == 0
    assert [x["id"] for x in list_modules(server, search=m["name"])[0]] == [m["id"]]
    assert assert_json(get_module(server, m["id"]), 200)["name"] == m["name"]
    for e in (e1, e2):
        got = get_entry(server, e["id"])
        assert got["module_id"] is None and got["module_name"] is None
    # restoring a module that is not deleted, or unknown: 404
    assert_error(server.api("POST", f"/api/modules/{m['id']}/restore",
                            token=server.admin_token), 404)
    assert_error(server.api("POST", f"/api/modules/{NO_SUCH_ID}/restore",
                            token=server.admin_token), 404)


# ---- /api/v1/modules ------------------------------------------------------------------------
def test_v1_modules_envelope(server):
    tag = uniq("v1mod")
    m1 = create_module(server, name=f"{tag} one")
    m2 = create_module(server, name=f"{tag} two")
    key = assert_json(server.api("POST", "/api/api-keys", token=server.admin_token,
                                 json={"name": uniq("k"), "scopes": ["read"]}), 201)["key"]
    r = server.api("GET", "/api/v1/modules", headers={"X-Api-Key": key},
                   params={"search": tag, "limit": 1})
    body = assert_json(r, 200)
    assert set(body) == ENVELOPE
    assert body["total"] == 2 and body["limit"] == 1 and body["offset"] == 0
    assert [m["id"] for m in body["items"]] == [m1["id"]]
    body = assert_json(server.api("GET", "/api/v1/modules", headers={"X-Api-Key": key},
                                  params={"search": tag, "limit": 1, "offset": 1}), 200)
    assert [m["id"] for m in body["items"]] == [m2["id"]] and body["offset"] == 1
    for m in body["items"]:
        assert MODULE_KEYS <= set(m)
    assert_error(server.api("GET", "/api/v1/modules"), 401)
