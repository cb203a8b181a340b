"""Journal entries on the administrative interface: /api/entries*."""

from datetime import date, datetime, timedelta, timezone

import pytest

from harness import assert_error, assert_json, assert_ok, uniq

ENTRY_KEYS = {"id", "student_name", "student_id", "group_id", "branch_id", "description",
              "module_id", "module_name", "ai_status", "created_at", "updated_at", "created_by",
              "files_count", "has_photo"}
AI_QUEUED = ("pending", "processing")  # spec 3.2: pending, or processing once picked up
NO_SUCH_ID = 9_000_000_000_000


def admin_id(server):
    return assert_json(server.api("GET", "/api/auth/me", token=server.admin_token),
                       200)["user"]["id"]


def create_entry(server, group_id, token=None, student_name=None, **fields):
    body = {"student_name": student_name or uniq("Stu"), "group_id": group_id}
    body.update(fields)
    r = server.api("POST", "/api/entries", token=token or server.admin_token, json=body)
    return assert_json(r, 201)


def get_entry(server, entry_id, token=None):
    return server.api("GET", f"/api/entries/{entry_id}", token=token or server.admin_token)


def list_entries(server, token=None, **params):
    r = server.api("GET", "/api/entries", token=token or server.admin_token, params=params)
    items = assert_json(r, 200)
    assert isinstance(items, list), r.text[:300]
    assert "X-Total-Count" in r.headers, r.headers
    return items, int(r.headers["X-Total-Count"])


def ids(items):
    return [e["id"] for e in items]


def total_entries(server):
    return list_entries(server, limit=1)[1]


def create_module(server):
    return assert_json(server.api("POST", "/api/modules", token=server.admin_token,
                                  json={"name": uniq("EntMod"), "lessons_count": 3}), 201)


def create_student(server, group_id, name):
    return assert_json(server.api("POST", "/api/students", token=server.admin_token,
                                  json={"name": name, "group_id": group_id}), 201)


@pytest.fixture
def world(server):
    """Two branches, two groups in A and one in B, a module."""
    ba, bb = server.create_branch(), server.create_branch()
    return {
        "ba": ba, "bb": bb,
        "ga": server.create_group(ba["id"]), "ga2": server.create_group(ba["id"]),
        "gb": server.create_group(bb["id"]),
        "module": create_module(server),
    }


# ---- create ---------------------------------------------------------------------------------
def test_create_entry_record(server, world):
    g, m = world["ga"], world["module"]
    name = uniq("Olga")
    before = datetime.now(timezone.utc).replace(microsecond=0)
    r = server.api("POST", "/api/entries", token=server.admin_token,
                   json={"student_name": f"  {name}\t", "group_id": g["id"],
                         "description": "worked on fractions", "module_id": m["id"]})
    e = assert_json(r, 201)
    after = datetime.now(timezone.utc)
    assert ENTRY_KEYS <= set(e), f"record lacks {ENTRY_KEYS - set(e)}: {e}"
    assert isinstance(e["id"], int) and e["id"] > 0
    assert e["student_name"] == name
    assert e["student_id"] is None  # no such student in the roster
    assert e["group_id"] == g["id"] and e["branch_id"] == world["ba"]["id"]
    assert e["description"] == "worked on fractions"
    assert e["module_id"] == m["id"] and e["module_name"] == m["name"]
    assert e["ai_status"] in AI_QUEUED  # default settings: entry_ai_enabled 'true'
    assert e["files_count"] == 0 and e["has_photo"] is False
    assert e["created_by"] == admin_id(server)
    created = datetime.strptime(e["created_at"], "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=timezone.utc)
    assert before - timedelta(seconds=1) <= created <= after + timedelta(seconds=1)
    assert isinstance(e["updated_at"], str) and e["updated_at"]
    got = assert_json(get_entry(server, e["id"]), 200)
    assert got == e
    # optional fields absent
    e2 = create_entry(server, g["id"])
    assert e2["description"] in ("", None) and e2["module_id"] is None
    assert e2["module_name"] is None
    e3 = create_entry(server, g["id"], module_id=None, description=None)
    assert e3["module_id"] is None


def test_student_link(server, world):
    g, g2 = world["ga"], world["ga2"]
    name = uniq("Mia Lee")
    s = create_student(server, g["id"], name)
    # same name, other case, extra spaces: linked
    e = create_entry(server, g["id"], student_name=f"  {name.upper()}  ")
    assert e["student_id"] == s["id"] and e["student_name"] == name.upper()
    # a student of another group with that name does not count
    e2 = create_entry(server, g2["id"], student_name=name)
    assert e2["student_id"] is None
    # a different name
    e3 = create_entry(server, g["id"], student_name=name + "x")
    assert e3["student_id"] is None
    # filter by student_id
    items, total = list_entries(server, student_id=s["id"])
    assert ids(items) == [e["id"]] and total == 1
    # moving the entry to the other group drops the link; back again restores it
    u = assert_json(server.api("PUT", f"/api/entries/{e['id']}", token=server.admin_token,
                               json={"group_id": g2["id"]}), 200)
    assert u["student_id"] is None
    u = assert_json(server.api("PUT", f"/api/entries/{e['id']}", token=server.admin_token,
                               json={"group_id": g["id"]}), 200)
    assert u["student_id"] == s["id"]


BAD_CREATES = [
    ({"group_id": "G"}, "student_name"),
    ({"student_name": "Ann"}, "group_id"),
    ({"student_name": "   ", "group_id": "G"}, "student_name"),
    ({"student_name": 5, "group_id": "G"}, "student_name"),
    ({"student_name": "Ann", "group_id": "G5"}, "group_id"),
    ({"student_name": "Ann", "group_id": None}, "group_id"),
    ({"student_name": "Ann", "group_id": "G", "description": 5}, "description"),
    ({"student_name": "Ann", "group_id": "G", "module_id": "1"}, "module_id"),
    ({"student_name": "Ann", "group_id": "G", "module_id": NO_SUCH_ID}, "module_id"),
    ({"student_name": "Ann", "group_id": "G", "module_id": "DELETED"}, "module_id"),
    ({"student_name": "Ann", "group_id": NO_SUCH_ID}, "group_id"),
    ({"student_name": "Ann", "group_id": "DELETED"}, "group_id"),
    ({"student_name": "Ann", "group_id": "G", "mood": "happy"}, "mood"),
    ({"student_name": "Ann", "group_id": "G", "ai_status": "done"}, "ai_status"),
]


def test_create_refusals_change_nothing(server, world):
    g = world["ga"]
    dg = server.create_group(world["ba"]["id"])
    assert_ok(server.api("DELETE", f"/api/groups/{dg['id']}", token=server.admin_token))
    dm = create_module(server)
    assert_ok(server.api("DELETE", f"/api/modules/{dm['id']}", token=server.admin_token))
    subst = {"G": g["id"], "G5": str(g["id"])}
    before = total_entries(server)
    for body, field in BAD_CREATES:
        real = {}
        for k, v in body.items():
            if v == "DELETED":
                v = dg["id"] if k == "group_id" else dm["id"]
            elif isinstance(v, str) and v in subst and k == "group_id":
                v = subst[v]
            real[k] = v
        r = server.api("POST", "/api/entries", token=server.admin_token, json=real)
        assert_error(r, 400, field)
    # not an object
    assert_error(server.api("POST", "/api/entries", token=server.admin_token, json=[1]), 400)
    assert total_entries(server) == before
    assert list_entries(server, group_id=g["id"]) == ([], 0)


def test_entries_need_a_session(server, world):
    e = create_entry(server, world["ga"]["id"])
    assert_error(server.api("GET", "/api/entries"), 401)
    assert_error(server.api("GET", f"/api/entries/{e['id']}"), 401)
    assert_error(server.api("POST", "/api/entries",
                            json={"student_name": "x", "group_id": world["ga"]["id"]}), 401)
    assert_error(server.api("PUT", f"/api/entries/{e['id']}", json={"description": "x"}), 401)
    assert_error(server.api("DELETE", f"/api/entries/{e['id']}"), 401)
    assert_error(server.api("POST", f"/api/entries/{e['id']}/ai/recheck"), 401)
    assert assert_json(get_entry(server, e["id"]), 200) == e


# ---- list -----------------------------------------------------------------------------------
def test_list_order_and_filters(server, world):
    ga, ga2, gb, m = world["ga"], world["ga2"], world["gb"], world["module"]
    alice = uniq("Alice")
    e1 = create_entry(server, ga["id"], student_name=alice, description="first", module_id=m["id"])
    e2 = create_entry(server, ga["id"], student_name=uniq("Bob"), description="second")
    e3 = create_entry(server, ga2["id"], student_name=alice.upper(), description="third")
    e4 = create_entry(server, gb["id"], student_name=alice, description="fourth",
                      module_id=m["id"])

    items, total = list_entries(server, branch_id=world["ba"]["id"])
    assert ids(items) == [e3["id"], e2["id"], e1["id"]] and total == 3  # newest first
    for e in items:
        assert ENTRY_KEYS <= set(e)
    items, total = list_entries(server, group_id=ga["id"])
    assert ids(items) == [e2["id"], e1["id"]] and total == 2
    items, total = list_entries(server, branch_id=world["bb"]["id"])
    assert ids(items) == [e4["id"]] and total == 1
    items, total = list_entries(server, module_id=m["id"])
    assert ids(items) == [e4["id"], e1["id"]] and total == 2
    items, total = list_entries(server, module_id=m["id"], group_id=ga["id"])
    assert ids(items) == [e1["id"]] and total == 1
    # student: the whole name, case-insensitive
    items, total = list_entries(server, student=alice.lower())
    assert ids(items) == [e4["id"], e3["id"], e1["id"]] and total == 3
    items, total = list_entries(server, student=f" {alice.upper()} ", branch_id=world["ba"]["id"])
    assert ids(items) == [e3["id"], e1["id"]] and total == 2
    assert list_entries(server, student=alice[:-1]) == ([], 0)  # not a substring match
    # the unfiltered list is newest first too
    items, total = list_entries(server, limit=4)
    assert ids(items) == [e4["id"], e3["id"], e2["id"], e1["id"]]
    assert total >= 4


def test_list_paging(server, world):
    g = world["ga"]
    made = [create_entry(server, g["id"])["id"] for _ in range(5)]
    newest_first = list(reversed(made))
    items, total = list_entries(server, group_id=g["id"], limit=2)
    assert ids(items) == newest_first[:2] and total == 5
    items, total = list_entries(server, group_id=g["id"], limit=2, offset=2)
    assert ids(items) == newest_first[2:4] and total == 5
    items, total = list_entries(server, group_id=g["id"], limit=2, offset=4)
    assert ids(items) == newest_first[4:] and total == 5
    items, total = list_entries(server, group_id=g["id"], offset=5)
    assert items == [] and total == 5
    items, total = list_entries(server, group_id=g["id"], limit=1000)
    assert ids(items) == newest_first
    # default limit 50
    r = server.api("GET", "/api/entries", token=server.admin_token)
    assert len(assert_json(r, 200)) == min(50, int(r.headers["X-Total-Count"]))
    # ... checked where more than 50 exist: this group's own 55
    made += [create_entry(server, g["id"])["id"] for _ in range(50)]
    items, total = list_entries(server, group_id=g["id"])
    assert total == 55 and ids(items) == list(reversed(made))[:50]
    items, total = list_entries(server, group_id=g["id"], offset=50)
    assert total == 55 and ids(items) == list(reversed(made))[50:]


@pytest.mark.parametrize("params,name", [
    ({"limit": "0"}, "limit"), ({"limit": "1001"}, "limit"), ({"limit": "-5"}, "limit"),
    ({"limit": "abc"}, "limit"), ({"offset": "-1"}, "offset"), ({"offset": "1.5"}, "offset"),
    ({"group_id": "x"}, "group_id"), ({"branch_id": "-1"}, "branch_id"),
    ({"module_id": "0"}, "module_id"), ({"student_id": "1e3"}, "student_id"),
    ({"date_from": "2024-13-01"}, "date_from"), ({"date_from": "2024-02-30"}, "date_from"),
    ({"date_to": "yesterday"}, "date_to"), ({"date_to": "2024-1-01"}, "date_to"),
    ({"date_from": "01.02.2024"}, "date_from"), ({"date_to": "2024-06-01T00:00"}, "date_to"),
])
def test_list_bad_params_are_400(server, params, name):
    assert_error(server.api("GET", "/api/entries", token=server.admin_token, params=params),
                 400, name)


def test_search_substring_and_literal_wildcards(server, world):
    g = world["ga"]
    tag = uniq("srch")
    pct = create_entry(server, g["id"], description=f"{tag}: 50% discount")
    fifty = create_entry(server, g["id"], description=f"{tag}: 500 points")
    five = create_entry(server, g["id"], description=f"{tag}: five hundred")
    under = create_entry(server, g["id"], description=f"{tag}: snake_case")
    snakex = create_entry(server, g["id"], description=f"{tag}: snakeXcase")
    by_name = create_entry(server, g["id"], student_name=f"Pat {tag} Doe", description="other")
    back = create_entry(server, g["id"], description=f"{tag}: back\\slash")

    def search(term, **kw):
        items, total = list_entries(server, search=term, **kw)
        assert len(items) == total
        return sorted(ids(items))

    assert search("50%", group_id=g["id"]) == [pct["id"]]
    assert search(f"{tag}: 50") == sorted([pct["id"], fifty["id"]])
    assert search("snake_case", group_id=g["id"]) == [under["id"]]
    assert search("snake", group_id=g["id"]) == sorted([under["id"], snakex["id"]])
    assert search("e_c", group_id=g["id"]) == [under["id"]]
    assert search("k\\s", group_id=g["id"]) == [back["id"]]
    assert search("%", group_id=g["id"]) == [pct["id"]]
    assert search(": snake_", group_id=g["id"]) == [under["id"]]
    # case-insensitive, in student_name or description
    assert search(tag.upper()) == sorted(e["id"] for e in (pct, fifty, five, under, snakex,
                                                            by_name, back))
    assert by_name["id"] in search(f"PAT {tag}".upper())
    assert search(f"pat {tag} doe") == [by_name["id"]]
    assert search(uniq("none")) == []


def test_search_covers_name_and_description(server, world):
    g = world["ga"]
    tag = uniq("both")
    a = create_entry(server, g["id"], student_name=f"{tag} Name", description="x")
    b = create_entry(server, g["id"], description=f"about {tag}")
    c = create_entry(server, g["id"], description="unrelated")
    items, total = list_entries(server, search=tag.upper())
    assert ids(items) == [b["id"], a["id"]] and total == 2
    assert c["id"] not in ids(list_entries(server, search=tag)[0])


def test_date_filters_utc(server, world):
    """The shared server keeps the default time zone UTC (time zones: test_timezones.py)."""
    tz = assert_json(server.api("GET", "/api/public-settings"), 200)["timezone"]
    if tz != "UTC":
        pytest.fail(f"the shared server's timezone was changed to {tz!r} by another test")
    g = world["ga"]
    e = create_entry(server, g["id"])
    day = date.fromisoformat(e["created_at"][:10])
    d = day.isoformat()
    prev = (day - timedelta(days=1)).isoformat()
    nxt = (day + timedelta(days=1)).isoformat()

    def found(**params):
        items, total = list_entries(server, group_id=g["id"], **params)
        assert len(items) == total
        return ids(items) == [e["id"]]

    assert found(date_from=d, date_to=d)
    assert found(date_from=d)
    assert found(date_to=d)
    assert found(date_from=prev, date_to=nxt)
    assert not found(date_from=nxt)
    assert not found(date_to=prev)
    assert not found(date_from=prev, date_to=prev)
    assert not found(date_from=nxt, date_to=nxt)
    assert not found(date_from=d, date_to=prev)  # empty range


# ---- update ---------------------------------------------------------------------------------
def test_update_partial(server, world):
    ga, gb, m = world["ga"], world["gb"], world["module"]
    m2 = create_module(server)
    e = create_entry(server, ga["id"], description="old", module_id=m["id"])
    t = server.admin_token
    u = assert_json(server.api("PUT", f"/api/entries/{e['id']}", token=t,
                               json={"description": "new"}), 200)
    assert u["description"] == "new"
    for k in ("id", "student_name", "student_id", "group_id", "branch_id", "module_id",
              "module_name", "created_at", "created_by", "files_count", "has_photo"):
        assert u[k] == e[k], k
    assert assert_json(get_entry(server, e["id"]), 200) == u
    # another module
    u = assert_json(server.api("PUT", f"/api/entries/{e['id']}", token=t,
                               json={"module_id": m2["id"]}), 200)
    assert u["module_id"] == m2["id"] and u["module_name"] == m2["name"]
    assert u["description"] == "new"
    # module_id null clears
    u = assert_json(server.api("PUT", f"/api/entries/{e['id']}", token=t,
                               json={"module_id": None}), 200)
    assert u["module_id"] is None and u["module_name"] is None and u["description"] == "new"
    # student_name is trimmed
    u = assert_json(server.api("PUT", f"/api/entries/{e['id']}", token=t,
                               json={"student_name": "  Renamed  "}), 200)
    assert u["student_name"] == "Renamed"
    # moving to another branch's group moves branch_id
    u = assert_json(server.api("PUT", f"/api/entries/{e['id']}", token=t,
                               json={"group_id": gb["id"]}), 200)
    assert u["group_id"] == gb["id"] and u["branch_id"] == world["bb"]["id"]
    items, _ = list_entries(server, branch_id=world["bb"]["id"])
    assert e["id"] in ids(items)
    assert e["id"] not in ids(list_entries(server, branch_id=world["ba"]["id"])[0])
    # refused updates change nothing
    current = assert_json(get_entry(server, e["id"]), 200)
    dg = server.create_group(world["ba"]["id"])
    assert_ok(server.api("DELETE", f"/api/groups/{dg['id']}", token=t))
    for body, field in (({"module_id": NO_SUCH_ID}, "module_id"),
                        ({"module_id": "1"}, "module_id"),
                        ({"group_id": NO_SUCH_ID}, "group_id"),
                        ({"group_id": dg["id"]}, "group_id"),
                        ({"group_id": None}, "group_id"),
                        ({"student_name": ""}, "student_name"),
                        ({"description": 5}, "description"),
                        ({"description": "changed", "module_id": NO_SUCH_ID}, "module_id"),
                        ({"colour": "red"}, "colour")):
        assert_error(server.api("PUT", f"/api/entries/{e['id']}", token=t, json=body), 400,
                     field)
    assert assert_json(get_entry(server, e["id"]), 200) == current
    assert_error(server.api("PUT", f"/api/entries/{NO_SUCH_ID}", token=t,
                            json={"description": "x"}), 404)


# ---- delete ---------------------------------------------------------------------------------
def test_soft_delete(server, world):
    g = world["ga"]
    keep = create_entry(server, g["id"])
    e = create_entry(server, g["id"], description=uniq("gone"))
    t = server.admin_token
    before = total_entries(server)
    assert_ok(server.api("DELETE", f"/api/entries/{e['id']}", token=t))
    assert total_entries(server) == before - 1
    assert ids(list_entries(server, group_id=g["id"])[0]) == [keep["id"]]
    assert list_entries(server, search=e["description"]) == ([], 0)
    assert_error(get_entry(server, e["id"]), 404)
    assert_error(server.api("DELETE", f"/api/entries/{e['id']}", token=t), 404)
    assert_error(server.api("PUT", f"/api/entries/{e['id']}", token=t,
                            json={"description": "x"}), 404)
    assert_error(server.api("POST", f"/api/entries/{e['id']}/ai/recheck", token=t), 404)
    assert_error(server.api("DELETE", f"/api/entries/{NO_SUCH_ID}", token=t), 404)
    assert total_entries(server) == before - 1
    rows = assert_json(server.api("GET", "/api/audit", token=t,
                                  params={"entity_type": "entry", "entity_id": str(e["id"])}),
                       200)["items"]
    assert [r["action"] for r in rows] == ["delete", "create"]


# ---- AI status ------------------------------------------------------------------------------
def test_recheck(server, world):
    e = create_entry(server, world["ga"]["id"], description="text")
    t = server.admin_token
    assert_ok(server.api("POST", f"/api/entries/{e['id']}/ai/recheck", token=t))
    assert assert_json(get_entry(server, e["id"]), 200)["ai_status"] in AI_QUEUED
    assert_error(server.api("POST", f"/api/entries/{NO_SUCH_ID}/ai/recheck", token=t), 404)


def test_ai_status_follows_the_setting(fresh_server):
    srv = fresh_server()
    t = srv.admin_token
    branch = srv.create_branch()
    g = srv.create_group(branch["id"])
    s = assert_json(srv.api("GET", "/api/settings", token=t), 200)
    assert s["entry_ai_enabled"] == "true"
    on = create_entry(srv, g["id"], description="a")
    assert on["ai_status"] == "pending"

    s = assert_json(srv.api("PUT", "/api/settings", token=t,
                            json={"entry_ai_enabled": "false"}), 200)
    assert s["entry_ai_enabled"] == "false"
    off = create_entry(srv, g["id"], description="b")
    assert off["ai_status"] is None
    # an edit does not queue a check while checks are off
    u = assert_json(srv.api("PUT", f"/api/entries/{off['id']}", token=t,
                            json={"description": "b2"}), 200)
    assert u["ai_status"] is None
    # an explicit recheck does
    assert_ok(srv.api("POST", f"/api/entries/{off['id']}/ai/recheck", token=t))
    assert assert_json(get_entry(srv, off["id"]), 200)["ai_status"] == "pending"
    # the earlier entry keeps its status
    assert assert_json(get_entry(srv, on["id"]), 200)["ai_status"] == "pending"

    assert_json(srv.api("PUT", "/api/settings", token=t, json={"entry_ai_enabled": "true"}), 200)
    again = create_entry(srv, g["id"], description="c")
    assert again["ai_status"] == "pending"


# ---- tutor scope ----------------------------------------------------------------------------
def test_tutor_scope(server, world):
    ga, gb = world["ga"], world["gb"]
    _, tutor = server.create_tutor(branch_ids=[world["ba"]["id"]])
    tag = uniq("tut")
    ea = create_entry(server, ga["id"], description=f"{tag} A")
    eb = create_entry(server, gb["id"], description=f"{tag} B")

    mine = create_entry(server, ga["id"], token=tutor, description=f"{tag} mine")
    assert mine["branch_id"] == world["ba"]["id"]
    before = total_entries(server)
    assert_error(server.api("POST", "/api/entries", token=tutor,
                            json={"student_name": "x", "group_id": gb["id"]}), 400, "group_id")
    assert total_entries(server) == before

    items, total = list_entries(server, token=tutor, search=tag)
    assert ids(items) == [mine["id"], ea["id"]] and total == 2
    assert list_entries(server, token=tutor, branch_id=world["bb"]["id"]) == ([], 0)
    assert list_entries(server, token=tutor, group_id=gb["id"]) == ([], 0)

    assert_error(get_entry(server, eb["id"], token=tutor), 404)
    assert_error(server.api("PUT", f"/api/entries/{eb['id']}", token=tutor,
                            json={"description": "hijacked"}), 404)
    assert_error(server.api("DELETE", f"/api/entries/{eb['id']}", token=tutor), 404)
    assert_error(server.api("POST", f"/api/entries/{eb['id']}/ai/recheck", token=tutor), 404)
    assert assert_json(get_entry(server, eb["id"]), 200) == eb
    # A's entry can't be moved into B's group
    assert_error(server.api("PUT", f"/api/entries/{ea['id']}", token=tutor,
                            json={"group_id": gb["id"]}), 400, "group_id")
    assert assert_json(get_entry(server, ea["id"], token=tutor), 200) == ea
    # but the tutor works on A's entries
    u = assert_json(server.api("PUT", f"/api/entries/{ea['id']}", token=tutor,
                               json={"description": f"{tag} A2"}), 200)
    assert u["description"] == f"{tag} A2"
    assert_ok(server.api("POST", f"/api/entries/{ea['id']}/ai/recheck", token=tutor))
    assert_ok(server.api("DELETE", f"/api/entries/{ea['id']}", token=tutor))
    assert_error(get_entry(server, ea["id"]), 404)


def test_student_filter_finds_non_ascii_names_as_written(server, world):
    """An entry is found by `student` with its name exactly as stored, whatever the letters.
    (How non-ASCII letters fold is not asserted, only that the exact name matches.)"""
    g = world["ga"]
    names = ["Łukasz Żak", "ÉMILE Durand", "Zoë", "Ørjan Ås"]
    made = {n: create_entry(server, g["id"], student_name=n)["id"] for n in names}
    for n in names:
        items, total = list_entries(server, group_id=g["id"], student=n)
        assert ids(items) == [made[n]] and total == 1, f"student={n!r}: {ids(items)}"
