"""Lesson reports (spec 2.4, 4.1, 4.3, 8): the administrative /api/lesson-reports endpoints and
the four of /api/v1; record fields, one report per group and date, validation, topic and its
position, list filters, lesson_ai_enabled, branch restriction of tutors and keys, scopes, and
the 21 routes of the external interface."""

import re

import pytest

from harness import REPO, assert_error, assert_json, assert_ok, uniq

ENVELOPE = {"items", "total", "limit", "offset", "has_more", "next_cursor"}
REPORT_KEYS = {"id", "group_id", "branch_id", "lesson_date", "lesson_time", "text", "topic",
               "topic_position", "text_original", "text_ai", "ai_status", "ai_checked_at",
               "ai_error", "created_at", "updated_at", "created_by"}
ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$")
NO_SUCH_ID = 9_000_000_000_000
TEXT_MAX = 20000


# ---- helpers ----------------------------------------------------------------------------------
def create_key(server, scopes=("read", "write"), **fields):
    body = {"name": uniq("lrkey"), "scopes": list(scopes), "rate_limit_per_min": 10000}
    body.update(fields)
    return assert_json(server.api("POST", "/api/api-keys", token=server.admin_token, json=body),
                       201)


def v1(server, key, method, path, body=None, params=None):
    return server.api(method, path, headers={"X-Api-Key": key}, json=body, params=params)


def adm(server, method, path, body=None, params=None, token=None):
    return server.api(method, path, token=token or server.admin_token, json=body, params=params)


def report_body(group_id, lesson_date="2026-03-10", **fields):
    body = {"group_id": group_id, "lesson_date": lesson_date, "lesson_time": "10:30",
            "text": "Covered " + uniq("t")}
    body.update(fields)
    return body


def create_report(server, group_id, lesson_date="2026-03-10", token=None, **fields):
    r = adm(server, "POST", "/api/lesson-reports", report_body(group_id, lesson_date, **fields),
            token=token)
    return assert_json(r, 201)


def get_report(server, report_id, token=None):
    return assert_json(adm(server, "GET", f"/api/lesson-reports/{report_id}", token=token), 200)


def admin_list(server, token=None, **params):
    """(items, X-Total-Count) of GET /api/lesson-reports."""
    params.setdefault("limit", 1000)
    r = adm(server, "GET", "/api/lesson-reports", params=params, token=token)
    items = assert_json(r, 200)
    assert isinstance(items, list), items
    return items, int(r.headers["X-Total-Count"])


def v1_list(server, key, **params):
    body = assert_json(v1(server, key, "GET", "/api/v1/lesson-reports", params=params), 200)
    assert isinstance(body, dict) and set(body) == ENVELOPE, body
    assert isinstance(body["items"], list) and isinstance(body["total"], int)
    return body


def ids(items):
    return [x["id"] for x in items]


def audit_rows(server, report_id, **params):
    params.update({"entity_type": "lesson_report", "entity_id": str(report_id), "limit": 100})
    return assert_json(adm(server, "GET", "/api/audit", params=params), 200)["items"]


def my_user_id(server, token):
    return assert_json(server.api("GET", "/api/auth/me", token=token), 200)["user"]["id"]


@pytest.fixture
def world(server):
    ba, bb = server.create_branch(), server.create_branch()
    return {"ba": ba, "bb": bb, "ga": server.create_group(ba["id"]),
            "ga2": server.create_group(ba["id"]), "gb": server.create_group(bb["id"])}


# ---- record -----------------------------------------------------------------------------------
def test_admin_create_returns_the_full_record(server, world):
    g = world["ga"]
    text = "We covered fractions " + uniq("x")
    rec = create_report(server, g["id"], "2026-03-10", lesson_time="09:05", text=text,
                        topic="Fractions 3/8")
    assert REPORT_KEYS <= set(rec), f"record lacks {REPORT_KEYS - set(rec)}"
    assert isinstance(rec["id"], int) and rec["id"] > 0
    assert rec["group_id"] == g["id"] and rec["branch_id"] == world["ba"]["id"]
    assert rec["lesson_date"] == "2026-03-10" and rec["lesson_time"] == "09:05"
    assert rec["text"] == text
    assert rec["topic"] == "Fractions 3/8" and rec["topic_position"] == "middle"
    for field in ("text_original", "text_ai", "ai_checked_at", "ai_error"):
        assert rec[field] is None, (field, rec)
    assert rec["ai_status"] is None  # the shared server keeps lesson_ai_enabled 'false'
    assert ISO_RE.match(rec["created_at"]) and ISO_RE.match(rec["updated_at"]), rec
    assert rec["created_by"] == my_user_id(server, server.admin_token)
    assert get_report(server, rec["id"]) == rec
    items, total = admin_list(server, group_id=g["id"])
    assert items == [rec] and total == 1
    # lesson_time and topic are optional
    bare = assert_json(adm(server, "POST", "/api/lesson-reports",
                           {"group_id": g["id"], "lesson_date": "2026-03-11", "text": "t"}), 201)
    assert bare["lesson_time"] is None and bare["topic"] is None
    assert bare["topic_position"] is None
    assert [a["action"] for a in audit_rows(server, rec["id"])] == ["create"]


def test_v1_create_get_list_delete(server, world):
    """Spec 4.1 rule 4: a report created with a group and a date is listed under that group and
    date_from; after DELETE it is not."""
    g = world["ga"]
    k = create_key(server)
    key = k["key"]
    body = report_body(g["id"], "2026-04-02", topic="Decimals 1/4")
    rec = assert_json(v1(server, key, "POST", "/api/v1/lesson-reports", body), 201)
    assert REPORT_KEYS <= set(rec), f"record lacks {REPORT_KEYS - set(rec)}"
    assert rec["group_id"] == g["id"] and rec["branch_id"] == world["ba"]["id"]
    assert rec["lesson_date"] == "2026-04-02" and rec["lesson_time"] == "10:30"
    assert rec["text"] == body["text"] and rec["topic"] == "Decimals 1/4"
    assert rec["topic_position"] == "first"
    assert rec["created_by"] is None and rec["created_by_key"] == k["id"]
    assert assert_json(v1(server, key, "GET", f"/api/v1/lesson-reports/{rec['id']}"), 200) == rec
    assert get_report(server, rec["id"]) == rec

    listed = v1_list(server, key, group_id=g["id"], date_from="2026-04-02", limit=7)
    assert listed["items"] == [rec] and listed["total"] == 1
    assert listed["limit"] == 7 and listed["offset"] == 0
    assert ids(v1_list(server, key, group_id=g["id"], date_from="2026-04-01")["items"]) == \
        [rec["id"]]
    assert v1_list(server, key, group_id=g["id"], date_from="2026-04-03")["total"] == 0

    assert_ok(v1(server, key, "DELETE", f"/api/v1/lesson-reports/{rec['id']}"))
    listed = v1_list(server, key, group_id=g["id"], date_from="2026-04-02")
    assert listed["items"] == [] and listed["total"] == 0
    assert_error(v1(server, key, "GET", f"/api/v1/lesson-reports/{rec['id']}"), 404)
    assert_error(adm(server, "GET", f"/api/lesson-reports/{rec['id']}"), 404)
    assert_error(v1(server, key, "DELETE", f"/api/v1/lesson-reports/{rec['id']}"), 404)
    assert_error(v1(server, key, "GET", f"/api/v1/lesson-reports/{NO_SUCH_ID}"), 404)

    rows = audit_rows(server, rec["id"])
    assert [r["action"] for r in rows] == ["delete", "create"]
    for row in rows:
        assert row["via_api_key"] is True and row["actor"] == f"key:{k['id']}"


def test_admin_update_and_delete(server, world):
    g, g2 = world["ga"], world["ga2"]
    rec = create_report(server, g["id"], "2026-05-01", topic="Shapes 2/6")
    upd = assert_json(adm(server, "PUT", f"/api/lesson-reports/{rec['id']}",
                          {"lesson_time": "18:45", "text": "new text", "group_id": g2["id"],
                           "lesson_date": "2026-05-02"}), 200)
    assert upd["id"] == rec["id"] and upd["group_id"] == g2["id"]
    assert upd["lesson_date"] == "2026-05-02" and upd["lesson_time"] == "18:45"
    assert upd["text"] == "new text" and upd["topic"] == "Shapes 2/6"
    assert upd["created_at"] == rec["created_at"] and upd["created_by"] == rec["created_by"]
    assert get_report(server, rec["id"]) == upd
    # lesson_time null clears it
    upd = assert_json(adm(server, "PUT", f"/api/lesson-reports/{rec['id']}",
                          {"lesson_time": None}), 200)
    assert upd["lesson_time"] is None and upd["text"] == "new text"
    assert_ok(adm(server, "DELETE", f"/api/lesson-reports/{rec['id']}"))
    assert_error(adm(server, "GET", f"/api/lesson-reports/{rec['id']}"), 404)
    assert_error(adm(server, "PUT", f"/api/lesson-reports/{rec['id']}", {"text": "x"}), 404)
    assert_error(adm(server, "DELETE", f"/api/lesson-reports/{rec['id']}"), 404)
    assert admin_list(server, group_id=g2["id"]) == ([], 0)
    assert [a["action"] for a in audit_rows(server, rec["id"])] == \
        ["delete", "update", "update", "create"]


# ---- one per group and date -------------------------------------------------------------------
def test_one_report_per_group_and_date(server, world):
    g, g2 = world["ga"], world["ga2"]
    key = create_key(server)["key"]
    first = create_report(server, g["id"], "2026-06-01", text="first")
    r = adm(server, "POST", "/api/lesson-reports", report_body(g["id"], "2026-06-01"))
    assert_error(r, 409)
    assert_error(v1(server, key, "POST", "/api/v1/lesson-reports",
                    report_body(g["id"], "2026-06-01")), 409)
    assert admin_list(server, group_id=g["id"]) == ([first], 1)
    # the same date in another group, and another date in the same group, are fine
    other_group = create_report(server, g2["id"], "2026-06-01")
    second = create_report(server, g["id"], "2026-06-02", text="second")
    # moving a report onto a taken date (or a taken group and date) is a conflict too
    assert_error(adm(server, "PUT", f"/api/lesson-reports/{second['id']}",
                     {"lesson_date": "2026-06-01"}), 409)
    assert_error(adm(server, "PUT", f"/api/lesson-reports/{other_group['id']}",
                     {"group_id": g["id"]}), 409)
    assert get_report(server, second["id"]) == second
    assert get_report(server, other_group["id"]) == other_group
    # keeping its own date is no conflict
    same = assert_json(adm(server, "PUT", f"/api/lesson-reports/{first['id']}",
                           {"lesson_date": "2026-06-01", "text": "first again"}), 200)
    assert same["lesson_date"] == "2026-06-01" and same["text"] == "first again"
    # a deleted report frees its date
    assert_ok(adm(server, "DELETE", f"/api/lesson-reports/{first['id']}"))
    again = create_report(server, g["id"], "2026-06-01")
    assert again["id"] != first["id"]


# ---- validation -------------------------------------------------------------------------------
BAD_CREATE = [
    ("date_feb_30", {"lesson_date": "2026-02-30"}, "lesson_date"),
    ("date_month_13", {"lesson_date": "2026-13-01"}, "lesson_date"),
    ("date_dotted", {"lesson_date": "21.11.2026"}, "lesson_date"),
    ("date_missing", {"lesson_date": None}, "lesson_date"),
    ("date_not_leap", {"lesson_date": "2025-02-29"}, "lesson_date"),
    ("time_24_00", {"lesson_time": "24:00"}, "lesson_time"),
    ("time_12_60", {"lesson_time": "12:60"}, "lesson_time"),
    ("time_7_30", {"lesson_time": "7:30"}, "lesson_time"),
    ("text_too_long", {"text": "a" * (TEXT_MAX + 1)}, "text"),
    ("text_too_long_multibyte", {"text": "ж" * (TEXT_MAX + 1)}, "text"),
    ("text_missing", {"text": None}, "text"),
    ("topic_301", {"topic": "t" * 301}, "topic"),
    ("topic_301_multibyte", {"topic": "ж" * 301}, "topic"),
    ("group_unknown", {"group_id": NO_SUCH_ID}, "group_id"),
    ("group_missing", {"group_id": None}, "group_id"),
    ("group_not_int", {"group_id": "1"}, "group_id"),
]


def _body_with(group_id, change):
    body = report_body(group_id, "2026-07-01")
    for k, v in change.items():
        if v is None:
            body.pop(k, None)  # "missing"
        else:
            body[k] = v
    return body


@pytest.mark.parametrize("change,field", [(c, f) for _, c, f in BAD_CREATE],
                         ids=[n for n, _, _ in BAD_CREATE])
def test_create_validation_saves_nothing(server, world, change, field):
    g = world["ga"]
    key = create_key(server)["key"]
    body = _body_with(g["id"], change)
    assert_error(adm(server, "POST", "/api/lesson-reports", body), 400, field)
    assert_error(v1(server, key, "POST", "/api/v1/lesson-reports", body), 400, field)
    assert admin_list(server, group_id=g["id"]) == ([], 0)


BAD_UPDATE = [
    ("date_feb_30", {"lesson_date": "2026-02-30"}, "lesson_date"),
    ("date_month_13", {"lesson_date": "2026-13-01"}, "lesson_date"),
    ("date_dotted", {"lesson_date": "21.11.2026"}, "lesson_date"),
    ("date_null", {"lesson_date": None}, "lesson_date"),
    ("time_24_00", {"lesson_time": "24:00"}, "lesson_time"),
    ("time_12_60", {"lesson_time": "12:60"}, "lesson_time"),
    ("time_7_30", {"lesson_time": "7:30"}, "lesson_time"),
    ("text_too_long", {"text": "a" * (TEXT_MAX + 1)}, "text"),
    ("text_null", {"text": None}, "text"),
    ("topic_301", {"topic": "t" * 301}, "topic"),
    ("topic_301_multibyte", {"topic": "ж" * 301}, "topic"),
    ("group_unknown", {"group_id": NO_SUCH_ID}, "group_id"),
]


@pytest.mark.parametrize("change,field", [(c, f) for _, c, f in BAD_UPDATE],
                         ids=[n for n, _, _ in BAD_UPDATE])
def test_update_validation_changes_nothing(server, world, change, field):
    rec = create_report(server, world["ga"]["id"], "2026-07-02", topic="Keep 2/3")
    assert_error(adm(server, "PUT", f"/api/lesson-reports/{rec['id']}", change), 400, field)
    assert get_report(server, rec["id"]) == rec
    versions = assert_json(adm(server, "GET", f"/api/lesson-reports/{rec['id']}/versions"), 200)
    assert len(versions) == 1
    assert [a["action"] for a in audit_rows(server, rec["id"])] == ["create"]


def test_boundaries_are_accepted(server, world):
    g = world["ga"]
    cases = [
        ("2026-08-01", {"text": "a" * TEXT_MAX}),
        ("2026-08-02", {"text": "ж" * TEXT_MAX}),
        ("2026-08-03", {"topic": "t" * 300}),
        ("2026-08-04", {"topic": "ж" * 300}),            # 600 bytes, 300 characters
        ("2026-08-05", {"topic": "\U0001F600" * 300}),   # 1200 bytes, 300 characters
        ("2024-02-29", {"lesson_time": "00:00"}),
        ("2026-08-06", {"lesson_time": "23:59"}),
        ("1900-01-01", {}),
        ("9999-12-31", {}),
    ]
    for date, fields in cases:
        rec = create_report(server, g["id"], date, **fields)
        got = get_report(server, rec["id"])
        assert got["lesson_date"] == date
        for k, v in fields.items():
            assert got[k] == v, (date, k)
    _, total = admin_list(server, group_id=g["id"])
    assert total == len(cases)
    # and on update
    rec = create_report(server, g["id"], "2026-08-10")
    upd = assert_json(adm(server, "PUT", f"/api/lesson-reports/{rec['id']}",
                          {"topic": "ж" * 300, "text": "b" * TEXT_MAX}), 200)
    assert upd["topic"] == "ж" * 300 and upd["text"] == "b" * TEXT_MAX


def test_deleted_group_is_refused(server, world):
    g = server.create_group(world["ba"]["id"])
    rec = create_report(server, g["id"], "2026-08-20")
    assert_ok(adm(server, "DELETE", f"/api/groups/{g['id']}"))
    assert_error(adm(server, "POST", "/api/lesson-reports", report_body(g["id"], "2026-08-21")),
                 400, "group_id")
    assert admin_list(server, group_id=g["id"]) == ([rec], 1)


# ---- topic ------------------------------------------------------------------------------------
POSITIONS = [
    ("Fractions 3/8", "middle"),
    ("1/5", "first"),
    ("5/5", "last"),
    ("1/1", "last"),
    ("6/5", None),
    ("0/0", None),
    ("Intro", None),
]


@pytest.mark.parametrize("topic,position", POSITIONS, ids=[t for t, _ in POSITIONS])
def test_topic_position(server, world, topic, position):
    key = create_key(server, scopes=["read"])["key"]
    rec = create_report(server, world["ga"]["id"], "2026-09-01", topic=topic)
    assert rec["topic"] == topic and rec["topic_position"] == position
    assert get_report(server, rec["id"])["topic_position"] == position
    assert v1_list(server, key, group_id=world["ga"]["id"])["items"][0]["topic_position"] == \
        position
    # the same through an update
    other = create_report(server, world["ga"]["id"], "2026-09-02", topic="Other 2/9")
    upd = assert_json(adm(server, "PUT", f"/api/lesson-reports/{other['id']}", {"topic": topic}),
                      200)
    assert upd["topic"] == topic and upd["topic_position"] == position


def test_topic_update_semantics(server, world):
    rec = create_report(server, world["ga"]["id"], "2026-09-10", topic="Fractions 3/8")
    path = f"/api/lesson-reports/{rec['id']}"
    # absent: unchanged
    upd = assert_json(adm(server, "PUT", path, {"text": "other text"}), 200)
    assert upd["topic"] == "Fractions 3/8" and upd["topic_position"] == "middle"
    upd = assert_json(adm(server, "PUT", path, {"lesson_time": "11:00"}), 200)
    assert upd["topic"] == "Fractions 3/8" and upd["topic_position"] == "middle"
    # a new value
    upd = assert_json(adm(server, "PUT", path, {"topic": "Fractions 8/8"}), 200)
    assert upd["topic"] == "Fractions 8/8" and upd["topic_position"] == "last"
    # "" clears it
    upd = assert_json(adm(server, "PUT", path, {"topic": ""}), 200)
    assert upd["topic"] is None and upd["topic_position"] is None
    assert get_report(server, rec["id"])["topic"] is None
    # absent after clearing: stays cleared
    upd = assert_json(adm(server, "PUT", path, {"text": "third text"}), 200)
    assert upd["topic"] is None and upd["topic_position"] is None
    # an empty topic on create is no topic
    empty = create_report(server, world["ga"]["id"], "2026-09-11", topic="")
    assert empty["topic"] is None and empty["topic_position"] is None


# ---- list filters -----------------------------------------------------------------------------
def test_list_filters(server, world):
    ga, ga2, gb = world["ga"], world["ga2"], world["gb"]
    key = create_key(server, scopes=["read"])["key"]
    a1 = create_report(server, ga["id"], "2026-10-01", lesson_time="09:00")
    a5 = create_report(server, ga["id"], "2026-10-05", lesson_time="09:00")
    a10 = create_report(server, ga["id"], "2026-10-10", lesson_time="09:00")
    x5 = create_report(server, ga2["id"], "2026-10-05", lesson_time="08:00")
    b5 = create_report(server, gb["id"], "2026-10-05", lesson_time="07:00")

    def both(**params):
        items, total = admin_list(server, **params)
        body = v1_list(server, key, **params)
        assert body["items"] == items and body["total"] == total, params
        return ids(items)

    assert both(group_id=ga["id"]) == [a10["id"], a5["id"], a1["id"]]
    assert both(branch_id=world["ba"]["id"]) == [a10["id"], a5["id"], x5["id"], a1["id"]]
    assert both(branch_id=world["bb"]["id"]) == [b5["id"]]
    assert both(group_id=ga["id"], date_from="2026-10-05") == [a10["id"], a5["id"]]
    assert both(group_id=ga["id"], date_to="2026-10-05") == [a5["id"], a1["id"]]
    assert both(group_id=ga["id"], date_from="2026-10-05", date_to="2026-10-05") == [a5["id"]]
    assert both(group_id=ga["id"], date_from="2026-10-02", date_to="2026-10-09") == [a5["id"]]
    assert both(group_id=ga["id"], date_from="2026-10-11") == []
    assert both(branch_id=world["ba"]["id"], date_from="2026-10-05", date_to="2026-10-05") == \
        [a5["id"], x5["id"]]
    assert both(group_id=ga["id"], branch_id=world["bb"]["id"]) == []
    # paging
    body = v1_list(server, key, group_id=ga["id"], limit=2, offset=1)
    assert ids(body["items"]) == [a5["id"], a1["id"]] and body["total"] == 3
    assert body["limit"] == 2 and body["offset"] == 1
    # bad filter values
    for params, name in (({"date_from": "2026-02-30"}, "date_from"),
                         ({"date_to": "10/05/2026"}, "date_to"),
                         ({"group_id": "abc"}, "group_id"),
                         ({"limit": "0"}, "limit")):
        assert_error(adm(server, "GET", "/api/lesson-reports", params=params), 400, name)
        assert_error(v1(server, key, "GET", "/api/v1/lesson-reports", params=params), 400, name)


# ---- lesson_ai_enabled ------------------------------------------------------------------------
def test_lesson_ai_enabled(fresh_server):
    srv = fresh_server()
    t = srv.admin_token
    b = srv.create_branch()
    g = srv.create_group(b["id"])
    key = create_key(srv)["key"]

    def stats():
        return assert_json(v1(srv, key, "GET", "/api/v1/stats"), 200)

    assert stats()["ai_jobs"]["pending"] == 0
    s = assert_json(srv.api("PUT", "/api/settings", token=t, json={"lesson_ai_enabled": "true"}),
                    200)
    assert s["lesson_ai_enabled"] == "true"
    on = assert_json(v1(srv, key, "POST", "/api/v1/lesson-reports",
                        report_body(g["id"], "2026-11-01")), 201)
    assert on["ai_status"] == "pending"
    assert get_report(srv, on["id"])["ai_status"] == "pending"
    st = stats()
    assert st["ai_jobs"] == {"pending": 1, "processing": 0, "done": 0, "failed": 0}
    assert st["lesson_reports"] == 1
    on2 = create_report(srv, g["id"], "2026-11-02")
    assert on2["ai_status"] == "pending"
    assert stats()["ai_jobs"]["pending"] == 2

    s = assert_json(srv.api("PUT", "/api/settings", token=t, json={"lesson_ai_enabled": "false"}),
                    200)
    assert s["lesson_ai_enabled"] == "false"
    off = create_report(srv, g["id"], "2026-11-03")
    assert off["ai_status"] is None
    assert stats()["ai_jobs"]["pending"] == 2
    # deleting a report removes its queued check
    assert_ok(v1(srv, key, "DELETE", f"/api/v1/lesson-reports/{on['id']}"))
    st = stats()
    assert st["ai_jobs"]["pending"] == 1 and st["lesson_reports"] == 2


# ---- branch restriction -----------------------------------------------------------------------
def test_tutor_sees_only_own_branches(server, world):
    ga, gb = world["ga"], world["gb"]
    tutor, tt = server.create_tutor(branch_ids=[world["ba"]["id"]])
    mine = create_report(server, ga["id"], "2026-12-01")
    theirs = create_report(server, gb["id"], "2026-12-01")
    path = f"/api/lesson-reports/{theirs['id']}"

    items, total = admin_list(server, token=tt, date_from="2026-12-01", date_to="2026-12-01")
    assert theirs["id"] not in ids(items) and mine["id"] in ids(items)
    assert admin_list(server, token=tt, group_id=gb["id"]) == ([], 0)
    assert admin_list(server, token=tt, branch_id=world["bb"]["id"]) == ([], 0)
    assert get_report(server, mine["id"], token=tt) == mine

    assert_error(adm(server, "GET", path, token=tt), 404)
    assert_error(adm(server, "PUT", path, {"text": "hijack"}, token=tt), 404)
    assert_error(adm(server, "DELETE", path, token=tt), 404)
    assert_error(adm(server, "GET", path + "/versions", token=tt), 404)
    assert_error(adm(server, "POST", path + "/ai/revert", token=tt), 404)
    v = assert_json(adm(server, "GET", path + "/versions"), 200)[0]
    assert_error(adm(server, "POST", f"{path}/versions/{v['id']}/restore", token=tt), 404)
    assert get_report(server, theirs["id"]) == theirs

    # creating in (or moving into) another branch's group
    assert_error(adm(server, "POST", "/api/lesson-reports", report_body(gb["id"], "2026-12-02"),
                     token=tt), 400, "group_id")
    assert admin_list(server, group_id=gb["id"])[1] == 1
    assert_error(adm(server, "PUT", f"/api/lesson-reports/{mine['id']}", {"group_id": gb["id"]},
                     token=tt), 400, "group_id")
    assert get_report(server, mine["id"]) == mine

    # in its own branch the tutor works
    own = create_report(server, ga["id"], "2026-12-03", token=tt)
    assert own["created_by"] == tutor["id"] and own["branch_id"] == world["ba"]["id"]
    assert_ok(adm(server, "DELETE", f"/api/lesson-reports/{own['id']}", token=tt))


def test_restricted_key_sees_only_its_branches(server, world):
    ga, gb = world["ga"], world["gb"]
    key = create_key(server, branch_ids=[world["ba"]["id"]])["key"]
    mine = create_report(server, ga["id"], "2026-12-10")
    theirs = create_report(server, gb["id"], "2026-12-10")

    body = v1_list(server, key, date_from="2026-12-10", date_to="2026-12-10")
    assert theirs["id"] not in ids(body["items"]) and mine["id"] in ids(body["items"])
    assert v1_list(server, key, group_id=gb["id"])["total"] == 0
    assert v1_list(server, key, branch_id=world["bb"]["id"])["total"] == 0
    assert_error(v1(server, key, "GET", f"/api/v1/lesson-reports/{theirs['id']}"), 404)
    assert_error(v1(server, key, "DELETE", f"/api/v1/lesson-reports/{theirs['id']}"), 404)
    assert get_report(server, theirs["id"]) == theirs
    assert_error(v1(server, key, "POST", "/api/v1/lesson-reports",
                    report_body(gb["id"], "2026-12-11")), 400, "group_id")
    assert admin_list(server, group_id=gb["id"])[1] == 1
    # its own branch works
    own = assert_json(v1(server, key, "POST", "/api/v1/lesson-reports",
                         report_body(ga["id"], "2026-12-11")), 201)
    assert assert_json(v1(server, key, "GET", f"/api/v1/lesson-reports/{own['id']}"), 200) == own
    assert_ok(v1(server, key, "DELETE", f"/api/v1/lesson-reports/{own['id']}"))


def test_read_only_key_cannot_mutate(server, world):
    ro = create_key(server, scopes=["read"])
    key = ro["key"]
    rec = create_report(server, world["ga"]["id"], "2026-12-20")
    assert_error(v1(server, key, "POST", "/api/v1/lesson-reports",
                    report_body(world["ga"]["id"], "2026-12-21")), 403, "write")
    assert_error(v1(server, key, "DELETE", f"/api/v1/lesson-reports/{rec['id']}"), 403, "write")
    assert admin_list(server, group_id=world["ga"]["id"]) == ([rec], 1)
    assert [a["action"] for a in audit_rows(server, rec["id"])] == ["create"]
    assert assert_json(v1(server, key, "GET", f"/api/v1/lesson-reports/{rec['id']}"), 200) == rec


def test_interfaces_do_not_mix(server, world):
    rec = create_report(server, world["ga"]["id"], "2026-12-30")
    key = create_key(server)["key"]
    assert_error(server.api("GET", "/api/lesson-reports"), 401)
    assert_error(server.api("GET", f"/api/lesson-reports/{rec['id']}",
                            headers={"X-Api-Key": key}), 401)
    assert_error(server.api("GET", "/api/v1/lesson-reports", token=server.admin_token), 401)
    assert_error(server.api("DELETE", f"/api/v1/lesson-reports/{rec['id']}",
                            token=server.admin_token), 401)
    # the external interface has no update of a report (not one of its 21 endpoints)
    r = v1(server, key, "PUT", f"/api/v1/lesson-reports/{rec['id']}", {"text": "x"})
    assert r.status_code == 405, r.text
    assert get_report(server, rec["id"]) == rec


# ---- the 21 endpoints of /api/v1 ----------------------------------------------------------------
V1_ROUTES = {
    ("GET", "/api/v1/me"),
    ("GET", "/api/v1/branches"),
    ("GET", "/api/v1/groups"),
    ("GET", "/api/v1/students"),
    ("GET", "/api/v1/modules"),
    ("GET", "/api/v1/entries"),
    ("GET", "/api/v1/entries/:id"),
    ("GET", "/api/v1/entries/:id/files"),
    ("POST", "/api/v1/entries"),
    ("PUT", "/api/v1/entries/:id"),
    ("DELETE", "/api/v1/entries/:id"),
    ("POST", "/api/v1/entries/:id/ai/recheck"),
    ("GET", "/api/v1/lesson-reports"),
    ("POST", "/api/v1/lesson-reports"),
    ("DELETE", "/api/v1/lesson-reports/:id"),
    ("GET", "/api/v1/stats"),
    ("POST", "/api/v1/ai/wake"),
    ("POST", "/api/v1/photo-jobs/wake"),
    ("POST", "/api/v1/ai/requeue-failed"),
    ("POST", "/api/v1/photo-jobs/requeue-failed"),
    # the one spec 4.1 rule 1 leaves unnamed
    ("GET", "/api/v1/lesson-reports/:id"),
}


def test_v1_route_table_has_the_21_endpoints():
    src = (REPO / "mod_journal" / "core" / "jr_routes.c").read_text()
    m = re.search(r"jr_routes_v1\[\]\s*=\s*\{(.*?)\n\};", src, re.S)
    assert m, "jr_routes_v1 not found in jr_routes.c"
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    pairs = re.findall(r'\{\s*"([A-Z]+)"\s*,\s*"([^"]+)"', body)
    listing = "\n  ".join(f"{a} {b}" for a, b in pairs)
    assert len(pairs) == 21, f"{len(pairs)} routes:\n  {listing}"
    assert len(set(pairs)) == 21, f"duplicates:\n  {listing}"
    assert set(pairs) == V1_ROUTES, \
        f"missing {sorted(V1_ROUTES - set(pairs))}, extra {sorted(set(pairs) - V1_ROUTES)}"
    # the terminator is the only other entry
    assert re.search(r"\{\s*NULL\s*,\s*NULL", body)
