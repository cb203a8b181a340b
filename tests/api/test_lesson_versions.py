"""The text history of lesson reports (spec 2.4, 3.3, 4.3): every change of the text is a
version (the topic is not versioned), newest first; restore of a version, revert of the AI's
rewrite, and the audit records of all of them."""

import re

import pytest

from harness import assert_error, assert_json, assert_ok, sql_exec, sql_scalar, uniq

VERSION_KEYS = {"id", "report_id", "text", "source", "created_at", "created_by"}
ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$")
NO_SUCH_ID = 9_000_000_000_000


# ---- helpers ----------------------------------------------------------------------------------
def adm(server, method, path, body=None, token=None):
    return server.api(method, path, token=token or server.admin_token, json=body)


def create_report(server, group_id, lesson_date="2026-03-10", token=None, **fields):
    body = {"group_id": group_id, "lesson_date": lesson_date, "lesson_time": "10:00",
            "text": "v1 " + uniq("t")}
    body.update(fields)
    return assert_json(adm(server, "POST", "/api/lesson-reports", body, token=token), 201)


def get_report(server, report_id):
    return assert_json(adm(server, "GET", f"/api/lesson-reports/{report_id}"), 200)


def put(server, report_id, body, token=None):
    return assert_json(adm(server, "PUT", f"/api/lesson-reports/{report_id}", body, token=token),
                       200)


def versions(server, report_id, token=None):
    body = assert_json(adm(server, "GET", f"/api/lesson-reports/{report_id}/versions",
                           token=token), 200)
    assert isinstance(body, list), body
    for v in body:
        assert VERSION_KEYS <= set(v), f"version lacks {VERSION_KEYS - set(v)}: {v}"
        assert v["report_id"] == report_id and ISO_RE.match(v["created_at"]), v
    got_ids = [v["id"] for v in body]
    assert got_ids == sorted(got_ids, reverse=True), f"not newest first: {got_ids}"
    return body


def history(server, report_id):
    """[(source, text)] newest first."""
    return [(v["source"], v["text"]) for v in versions(server, report_id)]


def audit_actions(server, report_id):
    r = server.api("GET", "/api/audit", token=server.admin_token,
                   params={"entity_type": "lesson_report", "entity_id": str(report_id),
                           "limit": 100})
    return [a["action"] for a in assert_json(r, 200)["items"]]


def my_user_id(server, token):
    return assert_json(server.api("GET", "/api/auth/me", token=token), 200)["user"]["id"]


def simulate_ai_rewrite(server, report_id, original="orig", rewritten="ai text"):
    """What the worker does when it rewrites a report: the tutor's text is kept as
    text_original and the AI's becomes the text."""
    sql_exec(server, f"UPDATE lesson_reports SET text_original = '{original}',"
                     f" text_ai = '{rewritten}', text = '{rewritten}', ai_status = 'done'"
                     f" WHERE id = {int(report_id)}")


@pytest.fixture
def group(server):
    return server.create_group(server.create_branch()["id"])


# ---- the history ------------------------------------------------------------------------------
def test_edit_restore_revert_history(server, group):
    admin_id = my_user_id(server, server.admin_token)
    rec = create_report(server, group["id"], text="first text", topic="Fractions 3/8")
    rid = rec["id"]
    path = f"/api/lesson-reports/{rid}"

    vs = versions(server, rid)
    assert [(v["source"], v["text"]) for v in vs] == [("create", "first text")]
    assert vs[0]["created_by"] == admin_id
    create_version = vs[0]

    # two edits of the text
    assert put(server, rid, {"text": "second text"})["text"] == "second text"
    assert put(server, rid, {"text": "third text"})["text"] == "third text"
    assert history(server, rid) == [("edit", "third text"), ("edit", "second text"),
                                    ("create", "first text")]

    # restore the first version: the text comes back and the restore is a version itself
    r = adm(server, "POST", f"{path}/versions/{create_version['id']}/restore")
    restored = assert_json(r, 200)
    assert restored["id"] == rid and restored["text"] == "first text"
    assert restored["topic"] == "Fractions 3/8"
    assert get_report(server, rid)["text"] == "first text"
    hist = history(server, rid)
    assert hist == [("restore", "first text"), ("edit", "third text"), ("edit", "second text"),
                    ("create", "first text")]

    # the worker rewrote it (simulated), then the tutor's original comes back with a revert
    simulate_ai_rewrite(server, rid)
    rewritten = get_report(server, rid)
    assert rewritten["text"] == "ai text" and rewritten["text_original"] == "orig"
    assert rewritten["text_ai"] == "ai text" and rewritten["ai_status"] == "done"
    reverted = assert_json(adm(server, "POST", f"{path}/ai/revert"), 200)
    assert reverted["id"] == rid and reverted["text"] == "orig"
    assert get_report(server, rid)["text"] == "orig"
    vs = versions(server, rid)
    assert [(v["source"], v["text"]) for v in vs] == [("revert", "orig")] + hist
    assert all(v["created_by"] == admin_id for v in vs)

    # every step is audited, newest first
    assert audit_actions(server, rid) == ["ai_revert", "restore_version", "update", "update",
                                          "create"]


def test_topic_only_change_records_no_version(server, group):
    rec = create_report(server, group["id"], text="same text", topic="Shapes 1/4")
    rid = rec["id"]
    put(server, rid, {"topic": "Shapes 2/4"})
    put(server, rid, {"topic": ""})
    put(server, rid, {"lesson_time": "12:00", "lesson_date": "2026-03-11"})
    put(server, rid, {"text": "same text"})  # the same text is no change
    assert history(server, rid) == [("create", "same text")]
    # updates are still audited
    assert audit_actions(server, rid) == ["update"] * 4 + ["create"]
    # a text change together with the topic is one version
    put(server, rid, {"text": "new text", "topic": "Shapes 3/4"})
    assert history(server, rid) == [("edit", "new text"), ("create", "same text")]


def test_revert_without_original_is_a_conflict(server, group):
    rec = create_report(server, group["id"], text="plain")
    rid = rec["id"]
    put(server, rid, {"text": "plain 2"})
    before = get_report(server, rid)
    assert before["text_original"] is None
    assert_error(adm(server, "POST", f"/api/lesson-reports/{rid}/ai/revert"), 409)
    assert get_report(server, rid) == before
    assert history(server, rid) == [("edit", "plain 2"), ("create", "plain")]
    assert audit_actions(server, rid) == ["update", "create"]
    assert_error(adm(server, "POST", f"/api/lesson-reports/{NO_SUCH_ID}/ai/revert"), 404)


def test_restore_needs_a_version_of_the_same_report(server, group):
    a = create_report(server, group["id"], "2026-03-10", text="text of a")
    b = create_report(server, group["id"], "2026-03-11", text="text of b")
    put(server, a["id"], {"text": "text of a, edited"})
    a_now = get_report(server, a["id"])
    vb = versions(server, b["id"])[0]
    assert_error(adm(server, "POST", f"/api/lesson-reports/{a['id']}/versions/{vb['id']}/restore"),
                 404)
    assert_error(adm(server, "POST",
                     f"/api/lesson-reports/{a['id']}/versions/{NO_SUCH_ID}/restore"), 404)
    va = versions(server, a["id"])[-1]
    assert_error(adm(server, "POST",
                     f"/api/lesson-reports/{NO_SUCH_ID}/versions/{va['id']}/restore"), 404)
    assert get_report(server, a["id"]) == a_now
    assert history(server, a["id"]) == [("edit", "text of a, edited"), ("create", "text of a")]
    assert audit_actions(server, a["id"]) == ["update", "create"]
    assert_error(adm(server, "GET", f"/api/lesson-reports/{NO_SUCH_ID}/versions"), 404)


def test_versions_record_who_changed_the_text(server):
    b = server.create_branch()
    g = server.create_group(b["id"])
    tutor, tt = server.create_tutor(branch_ids=[b["id"]])
    key = assert_json(server.api("POST", "/api/api-keys", token=server.admin_token,
                                 json={"name": uniq("verkey"), "scopes": ["read", "write"]}),
                      201)
    rec = assert_json(server.api("POST", "/api/v1/lesson-reports",
                                 headers={"X-Api-Key": key["key"]},
                                 json={"group_id": g["id"], "lesson_date": "2026-05-05",
                                       "lesson_time": "10:00", "text": "by key"}), 201)
    put(server, rec["id"], {"text": "by tutor"}, token=tt)
    vs = versions(server, rec["id"], token=tt)
    assert [(v["source"], v["text"], v["created_by"]) for v in vs] == \
        [("edit", "by tutor", tutor["id"]), ("create", "by key", None)]
    assert vs[1].get("created_by_key") == key["id"]


def test_deleting_a_report_deletes_its_history(server, group):
    rec = create_report(server, group["id"], text="x1")
    put(server, rec["id"], {"text": "x2"})
    assert int(sql_scalar(server, "SELECT COUNT(*) FROM lesson_report_versions"
                                  f" WHERE report_id = {rec['id']}")) == 2
    assert_ok(adm(server, "DELETE", f"/api/lesson-reports/{rec['id']}"))
    assert_error(adm(server, "GET", f"/api/lesson-reports/{rec['id']}/versions"), 404)
    assert int(sql_scalar(server, "SELECT COUNT(*) FROM lesson_report_versions"
                                  f" WHERE report_id = {rec['id']}")) == 0
