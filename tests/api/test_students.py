"""Students: /api/students (admins and tutors of the branch) and GET /api/v1/students."""

import pytest

from harness import assert_error, assert_json, assert_ok, uniq

STUDENT_KEYS = {"id", "name", "group_id", "branch_id", "notes", "created_at", "updated_at",
                "created_by"}
ENVELOPE = {"items", "total", "limit", "offset", "has_more", "next_cursor"}
NO_SUCH_ID = 9_000_000_000_000


def create_student(server, group_id, name=None, token=None, **fields):
    body = {"name": name or uniq("Student"), "group_id": group_id}
    body.update(fields)
    r = server.api("POST", "/api/students", token=token or server.admin_token, json=body)
    return assert_json(r, 201)


def list_students(server, token=None, **params):
    r = server.api("GET", "/api/students", token=token or server.admin_token, params=params)
    items = assert_json(r, 200)
    assert isinstance(items, list), r.text[:300]
    assert "X-Total-Count" in r.headers, r.headers
    return items, int(r.headers["X-Total-Count"])


def total_students(server):
    return list_students(server, limit=1)[1]


def admin_id(server):
    return assert_json(server.api("GET", "/api/auth/me", token=server.admin_token),
                       200)["user"]["id"]


def create_key(server, scopes=("read",), **fields):
    body = {"name": uniq("stkey"), "scopes": list(scopes)}
    body.update(fields)
    return assert_json(server.api("POST", "/api/api-keys", token=server.admin_token, json=body),
                       201)


# ---- create ---------------------------------------------------------------------------------
def test_create_student_record(server):
    branch = server.create_branch()
    group = server.create_group(branch["id"])
    name = uniq("Anna")
    r = server.api("POST", "/api/students", token=server.admin_token,
                   json={"name": f"  {name}  ", "group_id": group["id"], "notes": "likes maths"})
    s = assert_json(r, 201)
    assert STUDENT_KEYS <= set(s), f"record lacks {STUDENT_KEYS - set(s)}: {s}"
    assert isinstance(s["id"], int) and s["id"] > 0
    assert s["name"] == name  # trimmed
    assert s["group_id"] == group["id"]
    assert s["branch_id"] == branch["id"]
    assert s["notes"] == "likes maths"
    assert s["created_by"] == admin_id(server)
    assert isinstance(s["created_at"], str) and s["created_at"]
    assert isinstance(s["updated_at"], str) and s["updated_at"]
    # The same record on GET.
    got = assert_json(server.api("GET", f"/api/students/{s['id']}", token=server.admin_token),
                      200)
    assert got == s
    # Without notes.
    s2 = create_student(server, group["id"])
    assert s2["notes"] in ("", None)


def test_create_student_refusals_change_nothing(server):
    branch = server.create_branch()
    group = server.create_group(branch["id"])
    deleted = server.create_group(branch["id"])
    assert_ok(server.api("DELETE", f"/api/groups/{deleted['id']}", token=server.admin_token))
    before = total_students(server)
    t = server.admin_token
    assert_error(server.api("POST", "/api/students", token=t, json={"group_id": group["id"]}),
                 400, "name")
    assert_error(server.api("POST", "/api/students", token=t,
                            json={"name": "   ", "group_id": group["id"]}), 400, "name")
    assert_error(server.api("POST", "/api/students", token=t, json={"name": "X"}), 400,
                 "group_id")
    assert_error(server.api("POST", "/api/students", token=t,
                            json={"name": "X", "group_id": NO_SUCH_ID}), 400, "group_id")
    assert_error(server.api("POST", "/api/students", token=t,
                            json={"name": "X", "group_id": deleted["id"]}), 400, "group_id")
    assert_error(server.api("POST", "/api/students", token=t,
                            json={"name": "X", "group_id": str(group["id"])}), 400, "group_id")
    assert_error(server.api("POST", "/api/students", token=t,
                            json={"name": "X", "group_id": group["id"], "age": 7}), 400, "age")
    assert total_students(server) == before
    assert list_students(server, group_id=group["id"])[1] == 0


def test_students_need_a_session(server):
    assert_error(server.api("GET", "/api/students"), 401)
    assert_error(server.api("POST", "/api/students", json={"name": "x", "group_id": 1}), 401)


# ---- list -----------------------------------------------------------------------------------
def test_list_filters_and_paging(server):
    b1, b2 = server.create_branch(), server.create_branch()
    g1, g2, g3 = (server.create_group(b1["id"]), server.create_group(b1["id"]),
                  server.create_group(b2["id"]))
    tag = uniq("Zed").lower()
    s1 = create_student(server, g1["id"], name=f"Alice {tag}")
    s2 = create_student(server, g1["id"], name=f"Bob {tag}")
    s3 = create_student(server, g2["id"], name=f"Carol {tag}")
    s4 = create_student(server, g3["id"], name=f"Dave {tag}")

    items, total = list_students(server, group_id=g1["id"])
    assert {s["id"] for s in items} == {s1["id"], s2["id"]} and total == 2
    items, total = list_students(server, branch_id=b1["id"])
    assert {s["id"] for s in items} == {s1["id"], s2["id"], s3["id"]} and total == 3
    for s in items:
        assert STUDENT_KEYS <= set(s)
        assert s["branch_id"] == b1["id"]
    items, total = list_students(server, branch_id=b2["id"])
    assert [s["id"] for s in items] == [s4["id"]] and total == 1
    # search: case-insensitive substring of the name
    items, total = list_students(server, search=tag.upper())
    assert {s["id"] for s in items} == {s1["id"], s2["id"], s3["id"], s4["id"]} and total == 4
    items, total = list_students(server, search=f"OB {tag}")
    assert [s["id"] for s in items] == [s2["id"]] and total == 1
    items, total = list_students(server, search=f"{tag}", group_id=g2["id"])
    assert [s["id"] for s in items] == [s3["id"]] and total == 1
    assert list_students(server, search=uniq("nobody")) == ([], 0)
    # paging: the total stays, the page moves
    all_ids = [s["id"] for s in list_students(server, search=tag)[0]]
    assert len(all_ids) == 4
    page, total = list_students(server, search=tag, limit=2)
    assert [s["id"] for s in page] == all_ids[:2] and total == 4
    page, total = list_students(server, search=tag, limit=2, offset=2)
    assert [s["id"] for s in page] == all_ids[2:] and total == 4
    page, total = list_students(server, search=tag, offset=4)
    assert page == [] and total == 4


@pytest.mark.parametrize("params", [{"limit": "0"}, {"limit": "1001"}, {"limit": "x"},
                                    {"offset": "-1"}, {"offset": "x"}, {"group_id": "abc"},
                                    {"branch_id": "0"}])
def test_list_bad_params_are_400(server, params):
    name = next(iter(params))
    assert_error(server.api("GET", "/api/students", token=server.admin_token, params=params),
                 400, name)


def test_list_limit_default_and_max(server):
    r = server.api("GET", "/api/students", token=server.admin_token, params={"limit": "1000"})
    assert len(assert_json(r, 200)) <= 1000
    branch = server.create_branch()
    group = server.create_group(branch["id"])
    for _ in range(3):
        create_student(server, group["id"])
    r = server.api("GET", "/api/students", token=server.admin_token)
    items = assert_json(r, 200)
    assert len(items) == min(int(r.headers["X-Total-Count"]), 50)
    # ... checked where more than 50 exist: this group's own 53
    made = {create_student(server, group["id"])["id"] for _ in range(50)}
    items, total = list_students(server, group_id=group["id"])
    assert total == 53 and len(items) == 50
    rest, total = list_students(server, group_id=group["id"], offset=50)
    assert total == 53 and len(rest) == 3
    seen = {s["id"] for s in items} | {s["id"] for s in rest}
    assert len(seen) == 53 and made <= seen
    items, total = list_students(server, group_id=group["id"], limit=1000)
    assert total == 53 and len(items) == 53


# ---- get / put / delete ---------------------------------------------------------------------
def test_update_student(server):
    b1, b2 = server.create_branch(), server.create_branch()
    g1, g2 = server.create_group(b1["id"]), server.create_group(b2["id"])
    s = create_student(server, g1["id"], notes="first")
    t = server.admin_token
    # partial: only notes
    u = assert_json(server.api("PUT", f"/api/students/{s['id']}", token=t,
                               json={"notes": "second"}), 200)
    assert u["notes"] == "second" and u["name"] == s["name"] and u["group_id"] == g1["id"]
    assert u["created_at"] == s["created_at"]
    # rename (trimmed) and move to another branch's group
    new_name = uniq("Renamed")
    u = assert_json(server.api("PUT", f"/api/students/{s['id']}", token=t,
                               json={"name": f" {new_name} ", "group_id": g2["id"]}), 200)
    assert u["name"] == new_name and u["group_id"] == g2["id"] and u["branch_id"] == b2["id"]
    assert u["notes"] == "second"
    got = assert_json(server.api("GET", f"/api/students/{s['id']}", token=t), 200)
    assert got == u
    # refused updates change nothing
    assert_error(server.api("PUT", f"/api/students/{s['id']}", token=t,
                            json={"group_id": NO_SUCH_ID}), 400, "group_id")
    assert_error(server.api("PUT", f"/api/students/{s['id']}", token=t, json={"name": ""}),
                 400, "name")
    assert_error(server.api("PUT", f"/api/students/{s['id']}", token=t,
                            json={"nickname": "x"}), 400, "nickname")
    assert assert_json(server.api("GET", f"/api/students/{s['id']}", token=t), 200) == u
    # unknown student
    assert_error(server.api("PUT", f"/api/students/{NO_SUCH_ID}", token=t, json={"notes": "x"}),
                 404)
    assert_error(server.api("GET", f"/api/students/{NO_SUCH_ID}", token=t), 404)


def test_delete_student_keeps_entries(server):
    branch = server.create_branch()
    group = server.create_group(branch["id"])
    s = create_student(server, group["id"], name=uniq("Kim"))
    t = server.admin_token
    entry = assert_json(server.api("POST", "/api/entries", token=t,
                                   json={"student_name": s["name"].upper(),
                                         "group_id": group["id"], "description": "d"}), 201)
    assert entry["student_id"] == s["id"]
    assert_ok(server.api("DELETE", f"/api/students/{s['id']}", token=t))
    assert_error(server.api("GET", f"/api/students/{s['id']}", token=t), 404)
    assert_error(server.api("DELETE", f"/api/students/{s['id']}", token=t), 404)
    assert list_students(server, group_id=group["id"]) == ([], 0)
    e = assert_json(server.api("GET", f"/api/entries/{entry['id']}", token=t), 200)
    assert e["student_id"] is None
    assert e["student_name"] == s["name"].upper()
    r = server.api("GET", "/api/entries", token=t, params={"group_id": group["id"]})
    assert [x["id"] for x in assert_json(r, 200)] == [entry["id"]]


# ---- tutor scope ----------------------------------------------------------------------------
def test_tutor_scope(server):
    ba, bb = server.create_branch(), server.create_branch()
    ga, gb = server.create_group(ba["id"]), server.create_group(bb["id"])
    _, tutor = server.create_tutor(branch_ids=[ba["id"]])
    tag = uniq("tsc").lower()
    sa = create_student(server, ga["id"], name=f"A {tag}")
    sb = create_student(server, gb["id"], name=f"B {tag}")

    # the tutor creates in their own branch
    mine = create_student(server, ga["id"], name=f"Mine {tag}", token=tutor)
    assert mine["branch_id"] == ba["id"]
    # ...but not in another branch's group
    before = total_students(server)
    assert_error(server.api("POST", "/api/students", token=tutor,
                            json={"name": f"X {tag}", "group_id": gb["id"]}), 400, "group_id")
    assert total_students(server) == before

    # lists: only branch A
    items, total = list_students(server, token=tutor, search=tag)
    assert {s["id"] for s in items} == {sa["id"], mine["id"]} and total == 2
    assert list_students(server, token=tutor, branch_id=bb["id"]) == ([], 0)
    assert list_students(server, token=tutor, group_id=gb["id"]) == ([], 0)

    # B's student is invisible: 404 on get, put and delete, and it is unchanged
    assert_error(server.api("GET", f"/api/students/{sb['id']}", token=tutor), 404)
    assert_error(server.api("PUT", f"/api/students/{sb['id']}", token=tutor,
                            json={"notes": "hijacked"}), 404)
    assert_error(server.api("DELETE", f"/api/students/{sb['id']}", token=tutor), 404)
    assert assert_json(server.api("GET", f"/api/students/{sb['id']}",
                                  token=server.admin_token), 200) == sb
    # A's student can't be moved into B's group
    assert_error(server.api("PUT", f"/api/students/{sa['id']}", token=tutor,
                            json={"group_id": gb["id"]}), 400, "group_id")
    assert assert_json(server.api("GET", f"/api/students/{sa['id']}", token=tutor), 200) == sa
    # the tutor edits and deletes A's student
    u = assert_json(server.api("PUT", f"/api/students/{sa['id']}", token=tutor,
                               json={"notes": "ok"}), 200)
    assert u["notes"] == "ok"
    assert_ok(server.api("DELETE", f"/api/students/{sa['id']}", token=tutor))
    assert_error(server.api("GET", f"/api/students/{sa['id']}", token=server.admin_token), 404)


# ---- /api/v1/students -----------------------------------------------------------------------
def test_v1_students_envelope_and_branch_restriction(server):
    ba, bb = server.create_branch(), server.create_branch()
    ga, gb = server.create_group(ba["id"]), server.create_group(bb["id"])
    tag = uniq("v1st").lower()
    sa = create_student(server, ga["id"], name=f"A {tag}")
    sb = create_student(server, gb["id"], name=f"B {tag}")

    full = create_key(server)["key"]
    r = server.api("GET", "/api/v1/students", headers={"X-Api-Key": full},
                   params={"search": tag, "limit": 7})
    body = assert_json(r, 200)
    assert set(body) == ENVELOPE, body
    assert body["limit"] == 7 and body["offset"] == 0 and body["total"] == 2
    assert {s["id"] for s in body["items"]} == {sa["id"], sb["id"]}
    for s in body["items"]:
        assert STUDENT_KEYS <= set(s)

    restricted = create_key(server, branch_ids=[ba["id"]])["key"]
    body = assert_json(server.api("GET", "/api/v1/students", headers={"X-Api-Key": restricted},
                                  params={"search": tag}), 200)
    assert set(body) == ENVELOPE
    assert [s["id"] for s in body["items"]] == [sa["id"]] and body["total"] == 1
    assert body["limit"] == 50
    body = assert_json(server.api("GET", "/api/v1/students", headers={"X-Api-Key": restricted},
                                  params={"branch_id": bb["id"]}), 200)
    assert body["items"] == [] and body["total"] == 0
    # no key: 401; no write routes for students on /api/v1
    assert_error(server.api("GET", "/api/v1/students"), 401)
    writer = create_key(server, scopes=["read", "write"])["key"]
    r = server.api("POST", "/api/v1/students", headers={"X-Api-Key": writer},
                   json={"name": "x", "group_id": ga["id"]})
    assert r.status_code in (404, 405), r.text
    assert list_students(server, group_id=ga["id"])[1] == 1
