"""Branches (/api/branches) and study groups (/api/groups)."""

import pytest

from harness import assert_error, assert_json, assert_ok, uniq

BRANCH_KEYS = {"id", "name", "created_at", "updated_at"}
GROUP_KEYS = {"id", "name", "branch_id", "tutor_id", "created_at", "updated_at"}


def list_groups(server, token=None, **params):
    r = server.api("GET", "/api/groups", token=token or server.admin_token, params=params)
    groups = assert_json(r, 200)
    assert isinstance(groups, list)
    total = r.headers.get("X-Total-Count")
    assert total is not None and total.isdigit(), f"X-Total-Count {total!r}"
    return groups, int(total)


def branch_ids_visible(server, token):
    branches = assert_json(server.api("GET", "/api/branches", token=token), 200)
    assert isinstance(branches, list)
    return [b["id"] for b in branches]


# =============================== branches ======================================================
def test_create_branch(server):
    name = uniq("Branch")
    r = server.api("POST", "/api/branches", token=server.admin_token, json={"name": name})
    b = assert_json(r, 201)
    assert BRANCH_KEYS <= set(b), f"branch lacks {BRANCH_KEYS - set(b)}: {b}"
    assert isinstance(b["id"], int) and b["id"] > 0
    assert b["name"] == name
    assert isinstance(b["created_at"], str) and b["created_at"]
    assert isinstance(b["updated_at"], str) and b["updated_at"]
    got = assert_json(server.api("GET", f"/api/branches/{b['id']}", token=server.admin_token),
                      200)
    assert got["id"] == b["id"] and got["name"] == name


@pytest.mark.parametrize("body", [{"name": ""}, {"name": "   "}, {"name": "\t\n"}, {},
                                  {"name": None}, {"name": 5}])
def test_create_branch_invalid_name(server, body):
    assert_error(server.api("POST", "/api/branches", token=server.admin_token, json=body), 400,
                 "name")


def test_create_branch_duplicate_is_409(server):
    b = server.create_branch()
    assert_error(server.api("POST", "/api/branches", token=server.admin_token,
                            json={"name": b["name"]}), 409)


def test_branch_write_access(server):
    b = server.create_branch()
    user, token = server.create_tutor(branch_ids=[b["id"]])
    assert_error(server.api("POST", "/api/branches", token=token, json={"name": uniq("b")}), 403)
    assert_error(server.api("PUT", f"/api/branches/{b['id']}", token=token,
                            json={"name": uniq("b")}), 403)
    assert_error(server.api("DELETE", f"/api/branches/{b['id']}", token=token), 403)
    assert_error(server.api("POST", "/api/branches", json={"name": uniq("b")}), 401)
    assert_error(server.api("GET", "/api/branches"), 401)
    assert_error(server.api("GET", f"/api/branches/{b['id']}"), 401)
    # Unchanged.
    got = assert_json(server.api("GET", f"/api/branches/{b['id']}", token=server.admin_token),
                      200)
    assert got["name"] == b["name"]


def test_branch_list_visibility(server):
    b1, b2, b3 = server.create_branch(), server.create_branch(), server.create_branch()
    user, token = server.create_tutor(branch_ids=[b1["id"], b3["id"]])
    assert sorted(branch_ids_visible(server, token)) == sorted([b1["id"], b3["id"]])
    all_ids = branch_ids_visible(server, server.admin_token)
    assert {b1["id"], b2["id"], b3["id"]} <= set(all_ids)
    listed = {b["id"]: b for b in assert_json(server.api("GET", "/api/branches",
                                                         token=server.admin_token), 200)}
    assert BRANCH_KEYS <= set(listed[b2["id"]])
    assert listed[b2["id"]]["name"] == b2["name"]
    # A tutor without branches sees none.
    _, lonely = server.create_tutor()
    assert branch_ids_visible(server, lonely) == []


def test_get_branch_visibility(server):
    mine, other = server.create_branch(), server.create_branch()
    _, token = server.create_tutor(branch_ids=[mine["id"]])
    got = assert_json(server.api("GET", f"/api/branches/{mine['id']}", token=token), 200)
    assert got["name"] == mine["name"]
    assert_error(server.api("GET", f"/api/branches/{other['id']}", token=token), 404)
    assert_error(server.api("GET", "/api/branches/987654321", token=server.admin_token), 404)


def test_update_branch(server):
    b = server.create_branch()
    new = uniq("Renamed")
    got = assert_json(server.api("PUT", f"/api/branches/{b['id']}", token=server.admin_token,
                                 json={"name": new}), 200)
    assert got["id"] == b["id"] and got["name"] == new
    assert got["created_at"] == b["created_at"]
    again = assert_json(server.api("GET", f"/api/branches/{b['id']}", token=server.admin_token),
                        200)
    assert again["name"] == new


def test_update_branch_invalid(server):
    b, other = server.create_branch(), server.create_branch()
    path = f"/api/branches/{b['id']}"
    assert_error(server.api("PUT", path, token=server.admin_token, json={"name": " "}), 400,
                 "name")
    assert_error(server.api("PUT", path, token=server.admin_token, json={"name": other["name"]}),
                 409)
    assert_error(server.api("PUT", path, token=server.admin_token, json={"label": "x"}), 400,
                 "label")
    assert_error(server.api("PUT", "/api/branches/987654321", token=server.admin_token,
                            json={"name": uniq("b")}), 404)
    got = assert_json(server.api("GET", path, token=server.admin_token), 200)
    assert got["name"] == b["name"]


def test_delete_branch(server):
    b = server.create_branch()
    assert_ok(server.api("DELETE", f"/api/branches/{b['id']}", token=server.admin_token))
    assert_error(server.api("GET", f"/api/branches/{b['id']}", token=server.admin_token), 404)
    assert b["id"] not in branch_ids_visible(server, server.admin_token)
    assert_error(server.api("DELETE", f"/api/branches/{b['id']}", token=server.admin_token), 404)
    # The name is free again.
    server.create_branch(name=b["name"])


def test_delete_branch_with_groups_is_409(server):
    b = server.create_branch()
    g = server.create_group(b["id"])
    assert_error(server.api("DELETE", f"/api/branches/{b['id']}", token=server.admin_token), 409)
    assert_json(server.api("GET", f"/api/branches/{b['id']}", token=server.admin_token), 200)
    assert_json(server.api("GET", f"/api/groups/{g['id']}", token=server.admin_token), 200)


def test_delete_branch_assigned_to_tutor(server):
    b, keep = server.create_branch(), server.create_branch()
    user = server.create_user(branch_ids=[b["id"], keep["id"]])
    assert_ok(server.api("DELETE", f"/api/branches/{b['id']}", token=server.admin_token))
    token = server.login(user["username"], user["_password"])
    assert branch_ids_visible(server, token) == [keep["id"]]


# =============================== groups ========================================================
def test_create_group(server):
    b = server.create_branch()
    name = uniq("Group")
    r = server.api("POST", "/api/groups", token=server.admin_token,
                   json={"name": name, "branch_id": b["id"]})
    g = assert_json(r, 201)
    assert GROUP_KEYS <= set(g), f"group lacks {GROUP_KEYS - set(g)}: {g}"
    assert isinstance(g["id"], int) and g["id"] > 0
    assert g["name"] == name and g["branch_id"] == b["id"] and g["tutor_id"] is None
    got = assert_json(server.api("GET", f"/api/groups/{g['id']}", token=server.admin_token), 200)
    assert {k: got[k] for k in GROUP_KEYS} == {k: g[k] for k in GROUP_KEYS}


def test_create_group_with_tutor(server):
    b = server.create_branch()
    tutor = server.create_user(branch_ids=[b["id"]])
    g = server.create_group(b["id"], tutor_id=tutor["id"])
    assert g["tutor_id"] == tutor["id"]


@pytest.mark.parametrize("patch,field", [
    ({"name": ""}, "name"),
    ({"name": "  "}, "name"),
    ({"name": None}, "name"),
    ({"branch_id": 987654321}, "branch_id"),
    ({"branch_id": None}, "branch_id"),
    ({"branch_id": "1"}, "branch_id"),
    ({"tutor_id": 987654321}, "tutor_id"),
    ({"tutor_id": "x"}, "tutor_id"),
    ({"room": "101"}, "room"),
])
def test_create_group_validation(server, patch, field):
    b = server.create_branch()
    body = {"name": uniq("g"), "branch_id": b["id"]}
    body.update(patch)
    assert_error(server.api("POST", "/api/groups", token=server.admin_token, json=body), 400,
                 field)
    assert list_groups(server, branch_id=b["id"]) == ([], 0)


@pytest.mark.parametrize("missing", ["name", "branch_id"])
def test_create_group_missing_field(server, missing):
    b = server.create_branch()
    body = {"name": uniq("g"), "branch_id": b["id"]}
    del body[missing]
    assert_error(server.api("POST", "/api/groups", token=server.admin_token, json=body), 400,
                 missing)


def test_group_tutor_must_be_assigned_and_active(server):
    b, other = server.create_branch(), server.create_branch()
    elsewhere = server.create_user(branch_ids=[other["id"]])
    inactive = server.create_user(branch_ids=[b["id"]], active=False)
    for tutor in (elsewhere, inactive):
        r = server.api("POST", "/api/groups", token=server.admin_token,
                       json={"name": uniq("g"), "branch_id": b["id"], "tutor_id": tutor["id"]})
        assert_error(r, 400, "tutor_id")
    assert list_groups(server, branch_id=b["id"]) == ([], 0)
    # Assigning a tutor of another branch on update is refused as well.
    g = server.create_group(b["id"])
    assert_error(server.api("PUT", f"/api/groups/{g['id']}", token=server.admin_token,
                            json={"tutor_id": elsewhere["id"]}), 400, "tutor_id")
    got = assert_json(server.api("GET", f"/api/groups/{g['id']}", token=server.admin_token), 200)
    assert got["tutor_id"] is None


def test_group_name_unique_per_branch(server):
    b1, b2 = server.create_branch(), server.create_branch()
    name = uniq("Same")
    g1 = server.create_group(b1["id"], name=name)
    assert_error(server.api("POST", "/api/groups", token=server.admin_token,
                            json={"name": name, "branch_id": b1["id"]}), 409)
    g2 = server.create_group(b2["id"], name=name)
    assert g2["id"] != g1["id"] and g2["branch_id"] == b2["id"]
    assert [g["id"] for g in list_groups(server, branch_id=b1["id"])[0]] == [g1["id"]]


def test_group_writes_need_auth(server):
    b = server.create_branch()
    g = server.create_group(b["id"])
    assert_error(server.api("POST", "/api/groups",
                            json={"name": uniq("g"), "branch_id": b["id"]}), 401)
    assert_error(server.api("PUT", f"/api/groups/{g['id']}", json={"name": uniq("g")}), 401)
    assert_error(server.api("DELETE", f"/api/groups/{g['id']}"), 401)
    assert_error(server.api("POST", f"/api/groups/{g['id']}/restore"), 401)
    assert_error(server.api("GET", "/api/groups"), 401)
    groups, total = list_groups(server, branch_id=b["id"])
    assert [x["name"] for x in groups] == [g["name"]] and total == 1


# ---- listing ------------------------------------------------------------------------------------
def test_list_groups_pagination(server):
    b = server.create_branch()
    created = [server.create_group(b["id"]) for _ in range(5)]
    ids = [g["id"] for g in created]
    assert ids == sorted(ids)

    groups, total = list_groups(server, branch_id=b["id"])
    assert total == 5 and [g["id"] for g in groups] == ids
    for g in groups:
        assert GROUP_KEYS <= set(g)
        assert g["branch_id"] == b["id"]

    page, total = list_groups(server, branch_id=b["id"], limit=2)
    assert total == 5 and [g["id"] for g in page] == ids[:2]
    page, total = list_groups(server, branch_id=b["id"], limit=2, offset=2)
    assert total == 5 and [g["id"] for g in page] == ids[2:4]
    page, total = list_groups(server, branch_id=b["id"], limit=2, offset=4)
    assert total == 5 and [g["id"] for g in page] == ids[4:]
    page, total = list_groups(server, branch_id=b["id"], offset=10)
    assert total == 5 and page == []


def test_list_groups_default_and_maximum_limit(server):
    b = server.create_branch()
    ids = [server.create_group(b["id"])["id"] for _ in range(52)]
    groups, total = list_groups(server, branch_id=b["id"])
    assert total == 52 and [g["id"] for g in groups] == ids[:50]
    groups, total = list_groups(server, branch_id=b["id"], limit=500)
    assert total == 52 and [g["id"] for g in groups] == ids
    groups, total = list_groups(server, branch_id=b["id"], limit=1000)
    assert total == 52 and [g["id"] for g in groups] == ids


def test_list_groups_without_filter(server):
    b = server.create_branch()
    g = server.create_group(b["id"])
    groups, total = list_groups(server, limit=1000)
    ids = [x["id"] for x in groups]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert total >= len(groups) >= 1
    if total <= 1000:
        assert len(groups) == total and g["id"] in ids


@pytest.mark.parametrize("params,field", [
    ({"limit": 0}, "limit"),
    ({"limit": 1001}, "limit"),
    ({"limit": "abc"}, "limit"),
    ({"limit": -1}, "limit"),
    ({"limit": ""}, "limit"),
    ({"limit": "10x"}, "limit"),
    ({"offset": -1}, "offset"),
    ({"offset": "abc"}, "offset"),
    ({"offset": 1000000001}, "offset"),
    ({"branch_id": "abc"}, "branch_id"),
    ({"branch_id": 0}, "branch_id"),
    ({"branch_id": -3}, "branch_id"),
])
def test_list_groups_bad_paging(server, params, field):
    r = server.api("GET", "/api/groups", token=server.admin_token, params=params)
    assert_error(r, 400, field)


def test_list_groups_tutor_visibility(server):
    mine, other = server.create_branch(), server.create_branch()
    g_mine = server.create_group(mine["id"])
    g_other = server.create_group(other["id"])
    _, token = server.create_tutor(branch_ids=[mine["id"]])

    groups, total = list_groups(server, token=token)
    assert [g["id"] for g in groups] == [g_mine["id"]] and total == 1
    groups, total = list_groups(server, token=token, branch_id=mine["id"])
    assert [g["id"] for g in groups] == [g_mine["id"]] and total == 1
    groups, total = list_groups(server, token=token, branch_id=other["id"])
    assert groups == [] and total == 0
    # The admin sees the other group.
    groups, _ = list_groups(server, branch_id=other["id"])
    assert [g["id"] for g in groups] == [g_other["id"]]


# ---- single group -------------------------------------------------------------------------------
def test_get_group(server):
    mine, other = server.create_branch(), server.create_branch()
    g_mine, g_other = server.create_group(mine["id"]), server.create_group(other["id"])
    _, token = server.create_tutor(branch_ids=[mine["id"]])
    assert assert_json(server.api("GET", f"/api/groups/{g_mine['id']}", token=token),
                       200)["id"] == g_mine["id"]
    assert_error(server.api("GET", f"/api/groups/{g_other['id']}", token=token), 404)
    assert_error(server.api("GET", "/api/groups/987654321", token=server.admin_token), 404)
    assert_error(server.api("GET", f"/api/groups/{g_mine['id']}"), 401)


def test_update_group(server):
    b = server.create_branch()
    tutor = server.create_user(branch_ids=[b["id"]])
    g = server.create_group(b["id"])
    path = f"/api/groups/{g['id']}"
    new = uniq("Renamed")
    got = assert_json(server.api("PUT", path, token=server.admin_token, json={"name": new}), 200)
    assert got["id"] == g["id"] and got["name"] == new
    assert got["branch_id"] == b["id"] and got["tutor_id"] is None

    got = assert_json(server.api("PUT", path, token=server.admin_token,
                                 json={"tutor_id": tutor["id"]}), 200)
    assert got["tutor_id"] == tutor["id"] and got["name"] == new

    again = assert_json(server.api("GET", path, token=server.admin_token), 200)
    assert (again["name"], again["branch_id"], again["tutor_id"]) == (new, b["id"], tutor["id"])



def test_move_group_to_another_branch(server):
    b, b2 = server.create_branch(), server.create_branch()
    g = server.create_group(b["id"])
    got = assert_json(server.api("PUT", f"/api/groups/{g['id']}", token=server.admin_token,
                                 json={"branch_id": b2["id"]}), 200)
    assert got["branch_id"] == b2["id"] and got["name"] == g["name"]
    assert [x["id"] for x in list_groups(server, branch_id=b2["id"])[0]] == [g["id"]]
    assert list_groups(server, branch_id=b["id"]) == ([], 0)


def test_update_group_invalid(server):
    b = server.create_branch()
    g1, g2 = server.create_group(b["id"]), server.create_group(b["id"])
    path = f"/api/groups/{g2['id']}"
    assert_error(server.api("PUT", path, token=server.admin_token, json={"name": g1["name"]}), 409)
    assert_error(server.api("PUT", path, token=server.admin_token, json={"name": ""}), 400,
                 "name")
    assert_error(server.api("PUT", path, token=server.admin_token,
                            json={"branch_id": 987654321}), 400, "branch_id")
    assert_error(server.api("PUT", path, token=server.admin_token, json={"colour": "x"}), 400,
                 "colour")
    assert_error(server.api("PUT", "/api/groups/987654321", token=server.admin_token,
                            json={"name": uniq("g")}), 404)
    got = assert_json(server.api("GET", path, token=server.admin_token), 200)
    assert (got["name"], got["branch_id"]) == (g2["name"], b["id"])


# ---- delete / restore ---------------------------------------------------------------------------
def test_delete_and_restore_group(server):
    b = server.create_branch()
    g = server.create_group(b["id"])
    keep = server.create_group(b["id"])
    path = f"/api/groups/{g['id']}"
    assert_ok(server.api("DELETE", path, token=server.admin_token))
    assert_error(server.api("GET", path, token=server.admin_token), 404)
    groups, total = list_groups(server, branch_id=b["id"])
    assert [x["id"] for x in groups] == [keep["id"]] and total == 1
    assert_error(server.api("DELETE", path, token=server.admin_token), 404)
    assert_error(server.api("PUT", path, token=server.admin_token, json={"name": uniq("g")}), 404)

    restored = assert_json(server.api("POST", f"{path}/restore", token=server.admin_token), 200)
    assert restored["id"] == g["id"] and restored["name"] == g["name"]
    assert restored["branch_id"] == b["id"]
    assert_json(server.api("GET", path, token=server.admin_token), 200)
    groups, total = list_groups(server, branch_id=b["id"])
    assert [x["id"] for x in groups] == [g["id"], keep["id"]] and total == 2


def test_restore_conflicting_name_is_409(server):
    b = server.create_branch()
    g = server.create_group(b["id"])
    assert_ok(server.api("DELETE", f"/api/groups/{g['id']}", token=server.admin_token))
    # The name is free while the group is in the trash.
    newer = server.create_group(b["id"], name=g["name"])
    assert_error(server.api("POST", f"/api/groups/{g['id']}/restore", token=server.admin_token),
                 409)
    assert_error(server.api("GET", f"/api/groups/{g['id']}", token=server.admin_token), 404)
    groups, total = list_groups(server, branch_id=b["id"])
    assert [x["id"] for x in groups] == [newer["id"]] and total == 1


def test_restore_unknown_or_active_group_is_404(server):
    assert_error(server.api("POST", "/api/groups/987654321/restore", token=server.admin_token),
                 404)
    b = server.create_branch()
    g = server.create_group(b["id"])
    assert_error(server.api("POST", f"/api/groups/{g['id']}/restore", token=server.admin_token),
                 404)
    assert_json(server.api("GET", f"/api/groups/{g['id']}", token=server.admin_token), 200)


@pytest.mark.parametrize("method,path,body", [
    ("POST", "/api/groups", {"name": "{name}", "branch_id": "{branch}"}),
    ("PUT", "/api/groups/{group}", {"name": "{name}"}),
    ("DELETE", "/api/groups/{group}", None),
    ("POST", "/api/groups/{deleted}/restore", None),
])
def test_group_writes_are_admin_only(server, method, path, body):
    b = server.create_branch()
    g, deleted = server.create_group(b["id"]), server.create_group(b["id"])
    assert_ok(server.api("DELETE", f"/api/groups/{deleted['id']}", token=server.admin_token))
    _, token = server.create_tutor(branch_ids=[b["id"]])
    if body is not None:
        body = {k: (uniq("g") if v == "{name}" else b["id"] if v == "{branch}" else v)
                for k, v in body.items()}
    path = path.format(group=g["id"], deleted=deleted["id"])
    assert_error(server.api(method, path, token=token, json=body), 403)
    groups, total = list_groups(server, branch_id=b["id"])
    assert [(x["id"], x["name"]) for x in groups] == [(g["id"], g["name"])] and total == 1
