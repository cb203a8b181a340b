"""Notifications (docs/events.md): the catalogue of types with levels and switches, who
receives what (admins everything, tutors their branches), per-user read marks, removal and
clearing for the caller only, the filters of the list, the switches, and the retention purge."""

import time

import pytest

from harness import assert_error, assert_json, uniq
from worker_support import execute, rows, set_settings  # noqa: F401

TYPES = {"lesson.report": "info", "lesson.ai.formatted": "info", "entry.created": "info",
         "ai.failed": "error", "photo.done": "info", "photo.failed": "error",
         "ban.created": "warning", "backup.created": "info", "backup.restored": "warning"}


def notes(srv, token, **params):
    r = srv.api("GET", "/api/notifications", token=token, params=params)
    return assert_json(r, 200), int(r.headers["X-Total-Count"])


def unread(srv, token):
    return assert_json(srv.api("GET", "/api/notifications/unread-count", token=token),
                       200)["count"]


def new_entry(srv, group_id, student):
    return assert_json(srv.api("POST", "/api/entries", token=srv.admin_token,
                               json={"student_name": student, "group_id": group_id}), 201)


def about(items, entity_type, entity_id):
    return [n for n in items if n["entity_type"] == entity_type and n["entity_id"] == entity_id]


@pytest.fixture
def world(server):
    """Two branches with a group and a tutor each; an entry in branch A."""
    srv = server
    set_settings(srv, notify_enabled=True, notify_entry_created=True,
                 notify_lesson_report=True)
    a, b = srv.create_branch(), srv.create_branch()
    ga, gb = srv.create_group(a["id"]), srv.create_group(b["id"])
    _, ta = srv.create_tutor([a["id"]])
    _, tb = srv.create_tutor([b["id"]])
    return srv, ga, gb, ta, tb


def test_types_are_listed_with_level_and_switch(server):
    got = assert_json(server.api("GET", "/api/notification-types", token=server.admin_token),
                      200)
    assert {t["type"]: t["level"] for t in got} == TYPES
    settings = assert_json(server.api("GET", "/api/settings", token=server.admin_token), 200)
    for t in got:
        assert t["switch"] == "notify_" + t["type"].replace(".", "_")
        assert settings[t["switch"]] is True and isinstance(t["enabled"], bool)
    assert server.api("GET", "/api/notification-types").status_code == 401


def test_recipients_read_marks_and_removal(world):
    srv, ga, gb, ta, tb = world
    admin = srv.admin_token
    student = uniq("Stu")
    e = new_entry(srv, ga["id"], student)
    mine, total = notes(srv, ta, type="entry.created")
    n = about(mine, "entry", e["id"])
    assert len(n) == 1 and total >= 1
    n = n[0]
    assert n["type"] == "entry.created" and n["level"] == "info" and n["read_at"] is None
    assert n["branch_id"] == ga["branch_id"] and student in n["body"] and n["title"]
    assert n["created_at"].endswith("Z")
    # the other branch's tutor neither lists nor reaches it
    theirs, _ = notes(srv, tb)
    assert not about(theirs, "entry", e["id"])
    assert_error(srv.api("POST", f"/api/notifications/{n['id']}/read", token=tb), 404)
    assert_error(srv.api("DELETE", f"/api/notifications/{n['id']}", token=tb), 404)
    # read marks are per user
    before = unread(srv, ta)
    got = assert_json(srv.api("POST", f"/api/notifications/{n['id']}/read", token=ta), 200)
    assert got["id"] == n["id"] and got["read_at"]
    assert unread(srv, ta) == before - 1
    again = assert_json(srv.api("POST", f"/api/notifications/{n['id']}/read", token=ta), 200)
    assert again["read_at"] == got["read_at"]  # the first read stays
    listed, _ = notes(srv, admin, unread=1)
    assert about(listed, "entry", e["id"])  # still unread for the admin
    listed, _ = notes(srv, ta, unread=1)
    assert not about(listed, "entry", e["id"])
    # removal is for the caller only
    assert_json(srv.api("DELETE", f"/api/notifications/{n['id']}", token=ta), 200)
    assert not about(notes(srv, ta)[0], "entry", e["id"])
    assert about(notes(srv, admin, limit=1000)[0], "entry", e["id"])
    assert_error(srv.api("POST", f"/api/notifications/{n['id']}/read", token=ta), 404)
    assert_error(srv.api("POST", "/api/notifications/999999999/read", token=admin), 404)


def test_read_all_and_clear(world):
    srv, ga, gb, ta, tb = world
    new_entry(srv, ga["id"], uniq("A"))
    new_entry(srv, ga["id"], uniq("B"))
    new_entry(srv, gb["id"], uniq("C"))
    assert unread(srv, ta) >= 2
    b_before = unread(srv, tb)
    r = assert_json(srv.api("POST", "/api/notifications/read-all", token=ta), 200)
    assert r["ok"] is True and r["count"] >= 2
    assert unread(srv, ta) == 0 and unread(srv, tb) == b_before
    assert all(n["read_at"] for n in notes(srv, ta)[0])
    r = assert_json(srv.api("DELETE", "/api/notifications", token=ta), 200)
    assert r["count"] >= 2
    assert notes(srv, ta) == ([], 0)
    assert notes(srv, tb)[1] >= 1  # the other tutor's list is untouched
    # a notification that arrives later shows again
    e = new_entry(srv, ga["id"], uniq("D"))
    assert about(notes(srv, ta)[0], "entry", e["id"])


def test_list_filters_and_paging(world):
    srv, ga, gb, ta, tb = world
    for i in range(3):
        new_entry(srv, ga["id"], uniq("P"))
    assert_json(srv.api("POST", "/api/lesson-reports", token=srv.admin_token,
                        json={"group_id": ga["id"], "lesson_date": "2026-03-04",
                              "lesson_time": "10:00", "text": "We read."}), 201)
    items, total = notes(srv, ta, type="lesson.report")
    assert total == 1 and items[0]["type"] == "lesson.report"
    assert "2026-03-04" in items[0]["body"]
    items, total = notes(srv, ta, limit=2, offset=1)
    assert len(items) == 2 and total == 4
    ids = [n["id"] for n in notes(srv, ta)[0]]
    assert ids == sorted(ids, reverse=True)
    assert notes(srv, ta, level="error") == ([], 0)
    assert notes(srv, ta, level="info")[1] == 4
    for bad, field in (({"unread": "maybe"}, "unread"), ({"type": "no.such"}, "type"),
                       ({"level": "fatal"}, "level"), ({"limit": "-1"}, "limit")):
        assert_error(srv.api("GET", "/api/notifications", token=ta, params=bad), 400, field)


def test_switches(world):
    srv, ga, gb, ta, tb = world
    set_settings(srv, notify_entry_created=False)
    try:
        e = new_entry(srv, ga["id"], uniq("S"))
        assert not about(notes(srv, srv.admin_token, limit=1000)[0], "entry", e["id"])
        r = assert_json(srv.api("POST", "/api/lesson-reports", token=srv.admin_token,
                                json={"group_id": ga["id"], "lesson_date": "2026-05-06",
                                      "lesson_time": "10:00", "text": "x"}), 201)
        assert about(notes(srv, ta)[0], "lesson_report", r["id"])  # other types still on
        types = assert_json(srv.api("GET", "/api/notification-types", token=ta), 200)
        assert [t["enabled"] for t in types if t["type"] == "entry.created"] == [False]
        set_settings(srv, notify_entry_created=True, notify_enabled=False)
        e = new_entry(srv, ga["id"], uniq("S"))
        assert not about(notes(srv, srv.admin_token, limit=1000)[0], "entry", e["id"])
    finally:
        set_settings(srv, notify_enabled=True, notify_entry_created=True)
    e = new_entry(srv, ga["id"], uniq("S"))
    assert about(notes(srv, srv.admin_token, limit=1000)[0], "entry", e["id"])


def test_ban_notification_is_for_admins(server):
    srv = server
    srv.allowed_log_patterns.append(r"JR03001")
    ip = "198.51.100.%d" % (int(time.time() * 1000) % 200 + 20)
    _, tutor = srv.create_tutor([srv.create_branch()["id"]])
    for _ in range(10):
        srv.api("POST", "/api/auth/login", json={"username": uniq("nobody"), "password": "x"},
                ip=ip)
    try:
        items, _ = notes(srv, srv.admin_token, type="ban.created")
        mine = [n for n in items if ip in n["body"]]
        assert len(mine) == 1 and mine[0]["level"] == "warning"
        assert mine[0]["branch_id"] is None
        assert not [n for n in notes(srv, tutor, type="ban.created")[0] if ip in n["body"]]
    finally:
        assert_json(srv.api("DELETE", f"/api/bans/{ip}", token=srv.admin_token), 200)


def test_retention_purge(fresh_server):
    srv = fresh_server("JournalHousekeepingInterval 5s")
    set_settings(srv, notify_retention_days=2)
    old = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3 * 86400))
    young = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1 * 86400))
    execute(srv, "INSERT INTO notifications (type, level, title, body, created_at) VALUES"
                 f" ('backup.created', 'info', 'old', 'b', '{old}')",
            "INSERT INTO notifications (type, level, title, body, created_at) VALUES"
            f" ('backup.created', 'info', 'young', 'b', '{young}')")
    items, _ = notes(srv, srv.admin_token)
    old_id = [n["id"] for n in items if n["title"] == "old"][0]
    assert_json(srv.api("POST", f"/api/notifications/{old_id}/read", token=srv.admin_token), 200)
    deadline = time.monotonic() + 30
    while rows(srv, "SELECT COUNT(*) FROM notifications WHERE title = 'old'")[0][0] != "0":
        assert time.monotonic() < deadline, "the old notification was not purged within 30 s"
        time.sleep(0.5)
    assert rows(srv, "SELECT COUNT(*) FROM notifications WHERE title = 'young'")[0][0] == "1"
    assert rows(srv, "SELECT COUNT(*) FROM notification_marks")[0][0] == "0"
