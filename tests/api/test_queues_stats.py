"""The worker queues and the statistics (spec 3.4, 4.1, 4.3): wake-ups, requeueing failed AI
checks and photo jobs (limited to a key's branches), the queue status counts, GET
/api/v1/stats and GET /api/dashboard."""

import datetime as dt
import zoneinfo

import pytest

from harness import assert_error, assert_json, assert_ok, sql_exec, sql_int, uniq

AI_STATES = ("pending", "processing", "done", "failed")
PHOTO_STATES = ("queued", "processing", "done", "failed", "rejected")
STATS_KEYS = {"branches", "groups", "students", "entries", "lesson_reports", "ai_jobs",
              "photo_jobs"}
ISO_NOW = "2026-01-01T00:00:00Z"


# ---- helpers ----------------------------------------------------------------------------------
def generation(srv, name):
    return sql_int(srv, f"SELECT generation FROM worker_signals WHERE name = '{name}'")


def add_ai_job(srv, entity_type, entity_id, branch_id, status):
    sql_exec(srv, "INSERT INTO ai_jobs (entity_type, entity_id, branch_id, status, attempts,"
                  f" last_error, created_at, updated_at) VALUES ('{entity_type}', {entity_id},"
                  f" {branch_id}, '{status}', 3, 'boom', '{ISO_NOW}', '{ISO_NOW}')")


def add_photo_job(srv, entry_id, branch_id, status):
    sql_exec(srv, "INSERT INTO photo_jobs (entry_id, branch_id, action, status, attempts,"
                  f" last_error, created_at, updated_at) VALUES ({entry_id}, {branch_id}, 'ai',"
                  f" '{status}', 2, 'boom', '{ISO_NOW}', '{ISO_NOW}')")


def ai_status_count(srv, status, branch_id=None):
    where = f" AND branch_id = {branch_id}" if branch_id is not None else ""
    return sql_int(srv, f"SELECT COUNT(*) FROM ai_jobs WHERE status = '{status}'{where}")


def photo_status_count(srv, status, branch_id=None):
    where = f" AND branch_id = {branch_id}" if branch_id is not None else ""
    return sql_int(srv, f"SELECT COUNT(*) FROM photo_jobs WHERE status = '{status}'{where}")


def create_key(srv, scopes=("read", "write"), **fields):
    body = {"name": uniq("qkey"), "scopes": list(scopes), "rate_limit_per_min": 10000}
    body.update(fields)
    return assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token, json=body),
                       201)["key"]


def v1(srv, key, method, path):
    return srv.api(method, path, headers={"X-Api-Key": key})


def adm(srv, method, path, body=None, token=None):
    return srv.api(method, path, token=token or srv.admin_token, json=body)


def set_settings(srv, **values):
    assert_json(adm(srv, "PUT", "/api/settings", values), 200)


def create_entry(srv, group_id):
    return assert_json(adm(srv, "POST", "/api/entries",
                           {"student_name": uniq("Stu"), "group_id": group_id,
                            "description": "d"}), 201)


def entry_ai_status(srv, entry_id):
    return assert_json(adm(srv, "GET", f"/api/entries/{entry_id}"), 200)["ai_status"]


def create_report(srv, group_id, lesson_date, lesson_time="10:00", token=None):
    return assert_json(adm(srv, "POST", "/api/lesson-reports",
                           {"group_id": group_id, "lesson_date": lesson_date,
                            "lesson_time": lesson_time, "text": "t " + uniq("r")},
                           token=token), 201)


def report_ai_status(srv, report_id):
    return assert_json(adm(srv, "GET", f"/api/lesson-reports/{report_id}"), 200)["ai_status"]


def requeue_count(r):
    body = assert_json(r, 200)
    assert set(body) == {"ok", "count"} and body["ok"] is True, body
    assert isinstance(body["count"], int) and not isinstance(body["count"], bool), body
    return body["count"]


# ---- wake-ups ---------------------------------------------------------------------------------
WAKES = [("ai", "journal_ai", "journal_photo"), ("photo-jobs", "journal_photo", "journal_ai")]


@pytest.mark.parametrize("what,channel,other", WAKES, ids=[w[0] for w in WAKES])
def test_wake_bumps_the_generation(server, what, channel, other):
    key = create_key(server)
    ro = create_key(server, scopes=["read"])
    _, tt = server.create_tutor(branch_ids=[server.create_branch()["id"]])
    g0, o0 = generation(server, channel), generation(server, other)

    assert_ok(v1(server, key, "POST", f"/api/v1/{what}/wake"))
    assert generation(server, channel) == g0 + 1
    assert_ok(adm(server, "POST", f"/api/{what}/wake"))
    assert generation(server, channel) == g0 + 2

    assert_error(v1(server, ro, "POST", f"/api/v1/{what}/wake"), 403, "write")
    assert_error(adm(server, "POST", f"/api/{what}/wake", token=tt), 403)
    assert_error(server.api("POST", f"/api/{what}/wake"), 401)
    assert generation(server, channel) == g0 + 2
    assert generation(server, other) == o0

    # the key's wake-up is audited as made through the key
    r = server.api("GET", "/api/audit", token=server.admin_token,
                   params={"entity_type": "queue", "entity_id": channel, "limit": 2})
    rows = assert_json(r, 200)["items"]
    assert [(a["action"], a["via_api_key"]) for a in rows] == [("wake", False), ("wake", True)]


# ---- requeue ----------------------------------------------------------------------------------
@pytest.fixture
def queue_world(fresh_server):
    """A fresh server without automatic entry checks; two branches with entries and a report."""
    srv = fresh_server()
    set_settings(srv, entry_ai_enabled="false", lesson_ai_enabled="false")
    ba, bb = srv.create_branch(), srv.create_branch()
    ga, gb = srv.create_group(ba["id"]), srv.create_group(bb["id"])
    w = {"srv": srv, "a": ba["id"], "b": bb["id"], "ga": ga, "gb": gb,
         "ea": [create_entry(srv, ga["id"])["id"] for _ in range(2)],
         "eb": [create_entry(srv, gb["id"])["id"]],
         "ra": create_report(srv, ga["id"], "2026-02-02")["id"]}
    assert sql_int(srv, "SELECT COUNT(*) FROM ai_jobs") == 0
    assert sql_int(srv, "SELECT COUNT(*) FROM photo_jobs") == 0
    for e in w["ea"] + w["eb"]:
        assert entry_ai_status(srv, e) is None
    return w


def test_requeue_failed_ai_checks(queue_world):
    w = queue_world
    srv, a, b = w["srv"], w["a"], w["b"]
    for e in w["ea"]:
        add_ai_job(srv, "entry", e, a, "failed")
    add_ai_job(srv, "lesson_report", w["ra"], a, "failed")
    add_ai_job(srv, "entry", w["eb"][0], b, "failed")
    add_ai_job(srv, "entry", w["eb"][0], b, "done")  # history: never requeued
    key_a = create_key(srv, branch_ids=[a])
    key_all = create_key(srv)
    ro = create_key(srv, scopes=["read"])
    g0 = generation(srv, "journal_ai")

    # a read-only key changes nothing
    assert_error(v1(srv, ro, "POST", "/api/v1/ai/requeue-failed"), 403, "write")
    assert ai_status_count(srv, "failed") == 4

    # a key restricted to A: only A's jobs (spec 4.1 rule 2: still 200 with a count)
    assert requeue_count(v1(srv, key_a, "POST", "/api/v1/ai/requeue-failed")) == 3
    assert ai_status_count(srv, "pending", a) == 3 and ai_status_count(srv, "failed", a) == 0
    assert ai_status_count(srv, "failed", b) == 1 and ai_status_count(srv, "done", b) == 1
    assert ai_status_count(srv, "pending", b) == 0
    for e in w["ea"]:
        assert entry_ai_status(srv, e) == "pending"
    assert report_ai_status(srv, w["ra"]) == "pending"
    assert entry_ai_status(srv, w["eb"][0]) is None
    assert requeue_count(v1(srv, key_a, "POST", "/api/v1/ai/requeue-failed")) == 0

    # an unrestricted key: all of them
    sql_exec(srv, "UPDATE ai_jobs SET status = 'failed' WHERE status = 'pending'")
    assert requeue_count(v1(srv, key_all, "POST", "/api/v1/ai/requeue-failed")) == 4
    assert ai_status_count(srv, "failed") == 0 and ai_status_count(srv, "pending") == 4
    assert ai_status_count(srv, "done") == 1
    assert entry_ai_status(srv, w["eb"][0]) == "pending"
    assert requeue_count(v1(srv, key_all, "POST", "/api/v1/ai/requeue-failed")) == 0
    assert sql_int(srv, "SELECT COUNT(*) FROM ai_jobs WHERE status = 'pending'"
                        " AND (attempts <> 0 OR last_error IS NOT NULL)") == 0

    # the administrative twin: admin only
    sql_exec(srv, "UPDATE ai_jobs SET status = 'failed' WHERE status = 'pending'")
    _, tt = srv.create_tutor(branch_ids=[a])
    assert_error(adm(srv, "POST", "/api/ai/requeue-failed", token=tt), 403)
    assert ai_status_count(srv, "failed") == 4
    assert requeue_count(adm(srv, "POST", "/api/ai/requeue-failed")) == 4
    assert requeue_count(adm(srv, "POST", "/api/ai/requeue-failed")) == 0
    assert ai_status_count(srv, "pending") == 4
    assert generation(srv, "journal_ai") > g0  # the worker is woken


def test_requeue_failed_photo_jobs(queue_world):
    w = queue_world
    srv, a, b = w["srv"], w["a"], w["b"]
    for e in w["ea"]:
        add_photo_job(srv, e, a, "failed")
    add_photo_job(srv, w["ea"][0], a, "done")
    add_photo_job(srv, w["ea"][1], a, "rejected")
    add_photo_job(srv, w["eb"][0], b, "failed")
    key_a = create_key(srv, branch_ids=[a])
    key_all = create_key(srv)
    ro = create_key(srv, scopes=["read"])

    assert_error(v1(srv, ro, "POST", "/api/v1/photo-jobs/requeue-failed"), 403, "write")
    assert photo_status_count(srv, "failed") == 3

    assert requeue_count(v1(srv, key_a, "POST", "/api/v1/photo-jobs/requeue-failed")) == 2
    assert photo_status_count(srv, "queued", a) == 2 and photo_status_count(srv, "failed", a) == 0
    assert photo_status_count(srv, "failed", b) == 1 and photo_status_count(srv, "queued", b) == 0
    assert photo_status_count(srv, "done", a) == 1 and photo_status_count(srv, "rejected", a) == 1
    assert requeue_count(v1(srv, key_a, "POST", "/api/v1/photo-jobs/requeue-failed")) == 0

    sql_exec(srv, "UPDATE photo_jobs SET status = 'failed' WHERE status = 'queued'")
    assert requeue_count(v1(srv, key_all, "POST", "/api/v1/photo-jobs/requeue-failed")) == 3
    assert photo_status_count(srv, "failed") == 0 and photo_status_count(srv, "queued") == 3
    assert requeue_count(v1(srv, key_all, "POST", "/api/v1/photo-jobs/requeue-failed")) == 0

    sql_exec(srv, "UPDATE photo_jobs SET status = 'failed' WHERE status = 'queued'")
    _, tt = srv.create_tutor(branch_ids=[a])
    assert_error(adm(srv, "POST", "/api/photo-jobs/requeue-failed", token=tt), 403)
    assert photo_status_count(srv, "failed") == 3
    assert requeue_count(adm(srv, "POST", "/api/photo-jobs/requeue-failed")) == 3
    assert requeue_count(adm(srv, "POST", "/api/photo-jobs/requeue-failed")) == 0
    assert photo_status_count(srv, "done") == 1 and photo_status_count(srv, "rejected") == 1


def test_jobs_follow_a_group_to_another_branch(queue_world):
    """Moving a group moves its records' jobs in the same transaction: the old branch's keys
    neither count nor requeue them, the new branch's keys do."""
    w = queue_world
    srv, a, b, ga = w["srv"], w["a"], w["b"], w["ga"]
    stay = srv.create_group(a)  # A keeps this group and its jobs
    e_stay = create_entry(srv, stay["id"])["id"]
    for e in w["ea"]:
        add_ai_job(srv, "entry", e, a, "failed")
        add_photo_job(srv, e, a, "failed")
    add_ai_job(srv, "entry", w["ea"][0], a, "done")
    add_ai_job(srv, "lesson_report", w["ra"], a, "failed")
    add_photo_job(srv, w["ea"][1], a, "queued")
    add_ai_job(srv, "entry", e_stay, a, "failed")
    add_photo_job(srv, e_stay, a, "failed")
    key_a = create_key(srv, branch_ids=[a])
    key_b = create_key(srv, branch_ids=[b])

    def jobs(key):
        body = assert_json(v1(srv, key, "GET", "/api/v1/stats"), 200)
        return ({k: v for k, v in body["ai_jobs"].items() if v},
                {k: v for k, v in body["photo_jobs"].items() if v})

    assert jobs(key_a) == ({"failed": 4, "done": 1}, {"failed": 3, "queued": 1})
    assert jobs(key_b) == ({}, {})

    moved = assert_json(adm(srv, "PUT", f"/api/groups/{ga['id']}", {"branch_id": b}), 200)
    assert moved["branch_id"] == b
    assert jobs(key_a) == ({"failed": 1}, {"failed": 1})
    assert jobs(key_b) == ({"failed": 3, "done": 1}, {"failed": 2, "queued": 1})
    assert ai_status_count(srv, "failed", a) == 1 and ai_status_count(srv, "failed", b) == 3
    assert photo_status_count(srv, "failed", a) == 1 and photo_status_count(srv, "failed", b) == 2

    # The old branch's key requeues only what stayed: not the moved entries' or report's jobs.
    assert requeue_count(v1(srv, key_a, "POST", "/api/v1/ai/requeue-failed")) == 1
    assert requeue_count(v1(srv, key_a, "POST", "/api/v1/photo-jobs/requeue-failed")) == 1
    assert entry_ai_status(srv, e_stay) == "pending"
    for e in w["ea"]:
        assert entry_ai_status(srv, e) is None
    assert report_ai_status(srv, w["ra"]) is None
    assert ai_status_count(srv, "failed", b) == 3 and photo_status_count(srv, "failed", b) == 2
    # The new branch's key does.
    assert requeue_count(v1(srv, key_b, "POST", "/api/v1/ai/requeue-failed")) == 3
    assert requeue_count(v1(srv, key_b, "POST", "/api/v1/photo-jobs/requeue-failed")) == 2
    assert [entry_ai_status(srv, e) for e in w["ea"]] == ["pending", "pending"]
    assert report_ai_status(srv, w["ra"]) == "pending"
    assert sql_int(srv, "SELECT COUNT(*) FROM ai_jobs WHERE status = 'failed'") == 0


def test_jobs_follow_an_entry_or_report_to_another_branch(queue_world):
    """An entry or a lesson report moved to a group of another branch takes its jobs along, in
    the same transaction: the old branch's key no longer counts or requeues them."""
    w = queue_world
    srv, a, b, gb = w["srv"], w["a"], w["b"], w["gb"]
    entry, other = w["ea"]
    add_ai_job(srv, "entry", entry, a, "failed")
    add_photo_job(srv, entry, a, "failed")
    add_ai_job(srv, "entry", other, a, "failed")  # stays in A
    add_ai_job(srv, "lesson_report", w["ra"], a, "failed")
    key_a = create_key(srv, branch_ids=[a])
    key_b = create_key(srv, branch_ids=[b])

    moved = assert_json(adm(srv, "PUT", f"/api/entries/{entry}", {"group_id": gb["id"]}), 200)
    assert moved["branch_id"] == b
    report = assert_json(adm(srv, "PUT", f"/api/lesson-reports/{w['ra']}",
                             {"group_id": gb["id"]}), 200)
    assert report["branch_id"] == b
    assert ai_status_count(srv, "failed", a) == 1 and ai_status_count(srv, "failed", b) == 2
    assert photo_status_count(srv, "failed", a) == 0
    assert photo_status_count(srv, "failed", b) == 1

    assert requeue_count(v1(srv, key_a, "POST", "/api/v1/ai/requeue-failed")) == 1
    assert requeue_count(v1(srv, key_a, "POST", "/api/v1/photo-jobs/requeue-failed")) == 0
    assert entry_ai_status(srv, entry) is None and entry_ai_status(srv, other) == "pending"
    assert requeue_count(v1(srv, key_b, "POST", "/api/v1/ai/requeue-failed")) == 2
    assert requeue_count(v1(srv, key_b, "POST", "/api/v1/photo-jobs/requeue-failed")) == 1
    assert entry_ai_status(srv, entry) == "pending"
    assert report_ai_status(srv, w["ra"]) == "pending"


# ---- counts: status, stats, dashboard -----------------------------------------------------------
# Jobs per branch: A and B.
AI_A = {"pending": 1, "processing": 1, "done": 2, "failed": 1}
AI_B = {"pending": 2, "processing": 0, "done": 0, "failed": 1}
PHOTO_A = {"queued": 1, "processing": 1, "done": 1, "failed": 2, "rejected": 1}
PHOTO_B = {"queued": 2, "processing": 0, "done": 0, "failed": 0, "rejected": 1}


def _sum(x, y):
    return {k: x[k] + y[k] for k in x}


def ai_counts(r):
    """The per-status counts of GET /api/ai/status, without the members that describe AI
    itself (configured, model, workers: see test_worker_supervision.py)."""
    body = assert_json(r, 200)
    assert {"configured", "model", "workers"} <= set(body), body
    return {k: v for k, v in body.items() if k not in ("configured", "model", "workers")}


def photo_counts(r):
    """The per-status counts of GET /api/photo-jobs/status, without the members that describe
    the photo worker (enabled, service: see test_photo_jobs.py)."""
    body = assert_json(r, 200)
    assert body["enabled"] is True and body["service"] == {"configured": False}, body
    return {k: v for k, v in body.items() if k not in ("enabled", "service")}


@pytest.fixture
def stats_world(fresh_server):
    """Two branches: A with groups A1, A2 and a deleted A3; B with B1. Students, entries (one
    deleted), lesson reports and jobs of every status in both."""
    srv = fresh_server()
    set_settings(srv, entry_ai_enabled="false", lesson_ai_enabled="false")
    zero_ai = {s: 0 for s in AI_STATES}
    zero_photo = {s: 0 for s in PHOTO_STATES}
    assert ai_counts(adm(srv, "GET", "/api/ai/status")) == zero_ai
    assert photo_counts(adm(srv, "GET", "/api/photo-jobs/status")) == zero_photo
    ba, bb = srv.create_branch(), srv.create_branch()
    a, b = ba["id"], bb["id"]
    a1, a2, a3 = (srv.create_group(a) for _ in range(3))
    b1 = srv.create_group(b)
    for gid, n in ((a1["id"], 2), (b1["id"], 1), (a3["id"], 1)):
        for _ in range(n):
            assert_json(adm(srv, "POST", "/api/students",
                            {"name": uniq("Student"), "group_id": gid}), 201)
    ea = [create_entry(srv, a1["id"])["id"] for _ in range(3)]
    eb = [create_entry(srv, b1["id"])["id"]]
    assert_ok(adm(srv, "DELETE", f"/api/entries/{ea[2]}"))
    ra = [create_report(srv, a1["id"], "2026-01-10")["id"],
          create_report(srv, a2["id"], "2026-01-10")["id"]]
    rb = [create_report(srv, b1["id"], "2026-01-10")["id"]]
    assert_ok(adm(srv, "DELETE", f"/api/groups/{a3['id']}"))

    add_ai_job(srv, "entry", ea[0], a, "pending")
    add_ai_job(srv, "entry", ea[1], a, "processing")
    add_ai_job(srv, "entry", ea[0], a, "done")
    add_ai_job(srv, "lesson_report", ra[0], a, "done")
    add_ai_job(srv, "lesson_report", ra[1], a, "failed")
    add_ai_job(srv, "entry", eb[0], b, "pending")
    add_ai_job(srv, "lesson_report", rb[0], b, "pending")
    add_ai_job(srv, "entry", eb[0], b, "failed")
    for status, n in PHOTO_A.items():
        for _ in range(n):
            add_photo_job(srv, ea[0], a, status)
    for status, n in PHOTO_B.items():
        for _ in range(n):
            add_photo_job(srv, eb[0], b, status)
    return {"srv": srv, "a": a, "b": b}


def test_queue_status_counts(stats_world):
    srv, a, b = stats_world["srv"], stats_world["a"], stats_world["b"]
    assert ai_counts(adm(srv, "GET", "/api/ai/status")) == _sum(AI_A, AI_B)
    assert photo_counts(adm(srv, "GET", "/api/photo-jobs/status")) == _sum(PHOTO_A, PHOTO_B)
    # a tutor sees the counts of its branches
    _, ta = srv.create_tutor(branch_ids=[a])
    _, tb = srv.create_tutor(branch_ids=[b])
    assert ai_counts(adm(srv, "GET", "/api/ai/status", token=ta)) == AI_A
    assert photo_counts(adm(srv, "GET", "/api/photo-jobs/status", token=ta)) == PHOTO_A
    assert ai_counts(adm(srv, "GET", "/api/ai/status", token=tb)) == AI_B
    assert photo_counts(adm(srv, "GET", "/api/photo-jobs/status", token=tb)) == PHOTO_B
    assert_error(srv.api("GET", "/api/ai/status"), 401)


def test_v1_stats(stats_world):
    srv, a, b = stats_world["srv"], stats_world["a"], stats_world["b"]

    def stats(key):
        body = assert_json(v1(srv, key, "GET", "/api/v1/stats"), 200)
        assert set(body) == STATS_KEYS, body
        return body

    expected_all = {"branches": 2, "groups": 3, "students": 3, "entries": 3,
                    "lesson_reports": 3, "ai_jobs": _sum(AI_A, AI_B),
                    "photo_jobs": _sum(PHOTO_A, PHOTO_B)}
    assert stats(create_key(srv, scopes=["read"])) == expected_all
    assert stats(create_key(srv, branch_ids=[a, b])) == expected_all
    assert stats(create_key(srv, scopes=["read"], branch_ids=[a])) == \
        {"branches": 1, "groups": 2, "students": 2, "entries": 2, "lesson_reports": 2,
         "ai_jobs": AI_A, "photo_jobs": PHOTO_A}
    assert stats(create_key(srv, branch_ids=[b])) == \
        {"branches": 1, "groups": 1, "students": 1, "entries": 1, "lesson_reports": 1,
         "ai_jobs": AI_B, "photo_jobs": PHOTO_B}
    assert_error(srv.api("GET", "/api/v1/stats", token=srv.admin_token), 401)


def _pick_zone(now_utc):
    """A zone whose date differs from the UTC date now and whose clock is not near midnight."""
    for name in ("Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Tokyo", "America/New_York"):
        local = now_utc.astimezone(zoneinfo.ZoneInfo(name))
        minutes = local.hour * 60 + local.minute
        if local.date() != now_utc.date() and 15 <= minutes <= 24 * 60 - 15:
            return name
    return None


def test_dashboard(fresh_server):
    srv = fresh_server()
    now = dt.datetime.now(dt.timezone.utc)
    tz = _pick_zone(now)
    if tz is None:
        pytest.skip("no zone with another date far from midnight right now")
    set_settings(srv, timezone=tz, entry_ai_enabled="false", lesson_ai_enabled="false")
    today = now.astimezone(zoneinfo.ZoneInfo(tz)).date().isoformat()
    utc_day = now.date().isoformat()
    assert today != utc_day

    ba, bb = srv.create_branch(), srv.create_branch()
    ga, gb = srv.create_group(ba["id"]), srv.create_group(bb["id"])
    assert_json(adm(srv, "POST", "/api/students", {"name": "S", "group_id": ga["id"]}), 201)
    entry_a, entry_b = create_entry(srv, ga["id"])["id"], create_entry(srv, gb["id"])["id"]
    made = []  # in creation order
    for day in range(1, 9):
        made.append(create_report(srv, ga["id"], f"2025-05-{day:02d}"))
    made.append(create_report(srv, gb["id"], today, "09:00"))
    made.append(create_report(srv, ga["id"], today, "15:00"))
    made.append(create_report(srv, ga["id"], utc_day, "12:00"))
    made.append(create_report(srv, gb["id"], "2025-05-01"))
    made.append(create_report(srv, gb["id"], utc_day, "08:00"))
    by_id = {r["id"]: r for r in made}
    add_ai_job(srv, "entry", entry_a, ba["id"], "failed")
    add_photo_job(srv, entry_b, bb["id"], "rejected")

    body = assert_json(adm(srv, "GET", "/api/dashboard"), 200)
    assert {"recent_lessons", "today", "counts", "queues"} <= set(body), body
    recent = body["recent_lessons"]
    assert [r["id"] for r in recent] == [r["id"] for r in reversed(made)][:10]
    for r in recent:  # full records
        assert r == assert_json(adm(srv, "GET", f"/api/lesson-reports/{r['id']}"), 200)
    assert body["today"]["date"] == today and body["today"]["timezone"] == tz
    assert [r["id"] for r in body["today"]["lessons"]] == [made[8]["id"], made[9]["id"]]
    assert all(r == by_id[r["id"]] for r in body["today"]["lessons"])
    assert body["counts"] == {"branches": 2, "groups": 2, "students": 1, "entries": 2,
                              "lesson_reports": 13}
    assert body["queues"] == {
        "ai": {"pending": 0, "processing": 0, "done": 0, "failed": 1},
        "photo": {"queued": 0, "processing": 0, "done": 0, "failed": 0, "rejected": 1}}

    # a tutor of A sees A's only
    _, ta = srv.create_tutor(branch_ids=[ba["id"]])
    body = assert_json(adm(srv, "GET", "/api/dashboard", token=ta), 200)
    mine = [r["id"] for r in reversed(made) if r["group_id"] == ga["id"]]
    assert len(mine) == 10
    assert [r["id"] for r in body["recent_lessons"]] == mine
    assert [r["id"] for r in body["today"]["lessons"]] == [made[9]["id"]]
    assert body["today"]["date"] == today and body["today"]["timezone"] == tz
    assert body["counts"] == {"branches": 1, "groups": 1, "students": 1, "entries": 1,
                              "lesson_reports": 10}
    assert body["queues"]["ai"]["failed"] == 1 and body["queues"]["photo"]["rejected"] == 0
    # and a tutor of B
    _, tb = srv.create_tutor(branch_ids=[bb["id"]])
    body = assert_json(adm(srv, "GET", "/api/dashboard", token=tb), 200)
    assert [r["id"] for r in body["recent_lessons"]] == \
        [r["id"] for r in reversed(made) if r["group_id"] == gb["id"]]
    assert [r["id"] for r in body["today"]["lessons"]] == [made[8]["id"]]
    assert body["counts"] == {"branches": 1, "groups": 1, "students": 0, "entries": 1,
                              "lesson_reports": 3}
    assert body["queues"]["ai"]["failed"] == 0 and body["queues"]["photo"]["rejected"] == 1
    assert_error(srv.api("GET", "/api/dashboard"), 401)
