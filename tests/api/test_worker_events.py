"""The event outbox (req-9 section 3): rows written in the transaction of the change they
report, with the payloads docs/architecture.md describes, on both interfaces; the worker's
transitions among them; housekeeping trims what is older than JournalEventRetention."""

import functools
import time

import pytest

from harness import assert_json, uniq
from worker_support import (  # noqa: F401 (fixtures)
    api, events, execute, fake_llm, get_entry, get_report, new_group, rows, set_settings,
    wait_status, worker_env)


def event_rows(srv, entity_type, entity_id):
    return rows(srv, "SELECT id, type, branch_id, entity_type, entity_id, created_at FROM events"
                     f" WHERE entity_type = '{entity_type}' AND entity_id = {entity_id}"
                     " ORDER BY id")


def test_events_of_entries_and_reports(worker_env):
    env = worker_env()
    srv = env.srv
    set_settings(srv, lesson_ai_enabled="true")
    g = new_group(srv)
    key = assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token,
                              json={"name": uniq("k"), "scopes": ["read", "write"]}), 201)["key"]
    v1 = {"X-Api-Key": key}

    # an entry through /api/v1: created, then its check runs
    text = f"entry text {uniq('e')}"
    e = assert_json(srv.api("POST", "/api/v1/entries", headers=v1,
                            json={"student_name": "Bo", "group_id": g["id"],
                                  "description": text}), 201)
    wait_status(functools.partial(get_entry, srv), e["id"], "done")
    got = events(srv, "entry", e["id"])
    assert got[0] == ("entry.created", {"entry_id": e["id"], "group_id": g["id"],
                                        "student_name": "Bo"})
    status = [p for t, p in got[1:]]
    assert [t for t, _ in got[1:]] == ["ai_status"] * 3
    assert [p["status"] for p in status] == ["pending", "processing", "done"]
    assert status[0] == {"entry_id": e["id"], "status": "pending", "description": text,
                         "description_original": None, "ai_error": None, "ai_checked_at": None}
    assert status[2]["description"] == "AI: " + text
    assert status[2]["description_original"] == text and status[2]["ai_checked_at"]
    ids = [int(r[0]) for r in event_rows(srv, "entry", e["id"])]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    for r in event_rows(srv, "entry", e["id"]):
        assert r[2] == str(g["branch_id"]) and r[5].endswith("Z")

    # lesson reports on both interfaces: lesson.report first
    for i, (path, headers, token) in enumerate((("/api/lesson-reports", None, srv.admin_token),
                                                ("/api/v1/lesson-reports", v1, None))):
        rtext = f"report text {uniq('r')}"
        r = assert_json(srv.api("POST", path, headers=headers, token=token,
                                json={"group_id": g["id"], "lesson_date": f"2026-07-0{i + 1}",
                                      "lesson_time": "09:30", "text": rtext,
                                      "topic": "Maps 1/2"}), 201)
        wait_status(functools.partial(get_report, srv), r["id"], "done")
        got = events(srv, "lesson_report", r["id"])
        assert [t for t, _ in got] == ["lesson.report", "lesson_report_status",
                                       "lesson_report_status", "lesson_report_status",
                                       "lesson.ai.formatted"], got
        assert got[0][1] == {"report_id": r["id"], "group_id": g["id"],
                             "lesson_date": f"2026-07-0{i + 1}", "lesson_time": "09:30",
                             "topic": "Maps 1/2", "ai_status": "pending"}
        assert [p["status"] for _, p in got[1:4]] == ["pending", "processing", "done"]
        assert got[3][1]["text"] == got[3][1]["text_ai"] == "AI: " + rtext
        assert got[3][1]["text_original"] == rtext
        assert got[4][1] == {"report_id": r["id"], "group_id": g["id"],
                             "lesson_date": f"2026-07-0{i + 1}", "text": "AI: " + rtext,
                             "text_original": rtext}
    # a revert is a status change too
    api(srv, "POST", f"/api/lesson-reports/{r['id']}/ai/revert", status=200)
    t, p = events(srv, "lesson_report", r["id"])[-1]
    assert (t, p["status"], p["text"]) == ("lesson_report_status", "reverted", rtext)


def test_housekeeping_trims_old_events(fresh_server):
    srv = fresh_server("JournalHousekeepingInterval 5s\nJournalEventRetention 1h")
    execute(srv, "INSERT INTO events (type, entity_type, entity_id, payload, created_at) VALUES"
                 " ('entry.created', 'entry', 1, '{}', '2000-01-01T00:00:00Z')")
    g = new_group(srv)
    api(srv, "POST", "/api/entries", {"student_name": "Y", "group_id": g["id"]}, status=201)
    old = "SELECT COUNT(*) FROM events WHERE created_at < '2001'"
    deadline = time.monotonic() + 20
    while rows(srv, old)[0][0] != "0":
        assert time.monotonic() < deadline, "the old event was not trimmed within 20 s"
        time.sleep(0.5)
    assert int(rows(srv, "SELECT COUNT(*) FROM events")[0][0]) >= 1  # the fresh ones stay


@pytest.mark.parametrize("value", ["10s", "forever", "400d"])
def test_event_retention_is_validated(fresh_server, value):
    srv = fresh_server(f"JournalEventRetention {value}", start=False)
    proc = srv.config_test()
    assert proc.returncode != 0
    assert "JournalEventRetention" in proc.stderr + proc.stdout
