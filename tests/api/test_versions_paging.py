"""The version history of a lesson report is paged like every list (limit, offset,
X-Total-Count) and bounded (JournalReportVersionsMax): a new version beyond the bound drops
the oldest versions that are not the original, in the same transaction."""

import pytest

import harness
from harness import assert_error, assert_json
from test_lesson_versions import (adm, create_report, get_report, put, simulate_ai_rewrite,
                                  sql_scalar)

VERSION_KEYS = ["id", "report_id", "text", "source", "created_at", "created_by",
                "created_by_key"]


def page(srv, rid, **params):
    r = srv.api("GET", f"/api/lesson-reports/{rid}/versions", token=srv.admin_token,
                params=params)
    body = assert_json(r, 200)
    assert isinstance(body, list)
    for v in body:
        assert list(v) == VERSION_KEYS and v["report_id"] == rid, v
    return body, int(r.headers["X-Total-Count"])


def texts(versions):
    return [v["text"] for v in versions]


def stored_count(srv, rid):
    return int(sql_scalar(srv, "SELECT COUNT(*) FROM lesson_report_versions"
                               f" WHERE report_id = {int(rid)}"))


@pytest.fixture
def group(server):
    return server.create_group(server.create_branch()["id"])


def test_versions_are_paged(server, group):
    rid = create_report(server, group["id"], text="t0")["id"]
    for i in range(1, 8):
        put(server, rid, {"text": f"t{i}"})
    everything, total = page(server, rid)
    assert total == 8
    assert texts(everything) == [f"t{i}" for i in range(7, -1, -1)]
    first, total = page(server, rid, limit=3)
    assert (texts(first), total) == (["t7", "t6", "t5"], 8)
    middle, _ = page(server, rid, limit=3, offset=3)
    assert texts(middle) == ["t4", "t3", "t2"]
    last, total = page(server, rid, limit=3, offset=6)
    assert (texts(last), total) == (["t1", "t0"], 8)
    assert last[-1]["source"] == "create"
    beyond, total = page(server, rid, offset=8)
    assert (beyond, total) == ([], 8)


@pytest.mark.parametrize("params,field", [
    ({"limit": 0}, "limit"), ({"limit": 1001}, "limit"), ({"limit": "x"}, "limit"),
    ({"offset": -1}, "offset"), ({"offset": "y"}, "offset"),
])
def test_versions_paging_parameters_are_checked(server, group, params, field):
    rid = create_report(server, group["id"])["id"]
    r = server.api("GET", f"/api/lesson-reports/{rid}/versions", token=server.admin_token,
                   params=params)
    assert_error(r, 400, field)


def test_versions_default_limit_is_50(server, group):
    rid = create_report(server, group["id"], text="e0")["id"]
    for i in range(1, 55):
        put(server, rid, {"text": f"e{i}"})
    versions, total = page(server, rid)
    assert total == 55 and len(versions) == 50
    assert versions[0]["text"] == "e54" and versions[-1]["text"] == "e5"


def test_default_bound_keeps_200_versions(server, group):
    rid = create_report(server, group["id"], text="d0")["id"]
    for i in range(1, 205):
        put(server, rid, {"text": f"d{i}"})
    assert stored_count(server, rid) == 200
    versions, total = page(server, rid, limit=1000)
    assert total == 200
    assert versions[-1]["source"] == "create" and versions[-1]["text"] == "d0"
    assert texts(versions[:-1]) == [f"d{i}" for i in range(204, 205 - 200, -1)]


def test_bound_drops_the_oldest_but_keeps_the_original(fresh_server):
    srv = fresh_server("JournalReportVersionsMax 5")
    group = srv.create_group(srv.create_branch()["id"])
    rid = create_report(srv, group["id"], text="orig")["id"]
    other = create_report(srv, group["id"], "2026-03-11", text="other")["id"]
    put(srv, other, {"text": "other 2"})
    ids = {}
    for i in range(1, 11):
        put(srv, rid, {"text": f"edit {i}"})
        versions, total = page(srv, rid)
        ids.update({v["text"]: v["id"] for v in versions})
        assert total == min(i + 1, 5) == stored_count(srv, rid)
    assert texts(page(srv, rid)[0]) == ["edit 10", "edit 9", "edit 8", "edit 7", "orig"]
    assert texts(page(srv, other)[0]) == ["other 2", "other"]  # another report is untouched

    # Restoring after trimming: the original and a kept version restore; a dropped one is gone.
    path = f"/api/lesson-reports/{rid}"
    assert assert_json(adm(srv, "POST", f"{path}/versions/{ids['orig']}/restore"),
                       200)["text"] == "orig"
    assert texts(page(srv, rid)[0]) == ["orig", "edit 10", "edit 9", "edit 8", "orig"]
    assert assert_json(adm(srv, "POST", f"{path}/versions/{ids['edit 9']}/restore"),
                       200)["text"] == "edit 9"
    assert texts(page(srv, rid)[0]) == ["edit 9", "orig", "edit 10", "edit 9", "orig"]
    assert_error(adm(srv, "POST", f"{path}/versions/{ids['edit 2']}/restore"), 404, "version")
    assert get_report(srv, rid)["text"] == "edit 9"

    # Reverting the AI's rewrite is a version like the others, within the bound.
    simulate_ai_rewrite(srv, rid, original="tutor text", rewritten="ai text")
    assert assert_json(adm(srv, "POST", f"{path}/ai/revert"), 200)["text"] == "tutor text"
    versions, total = page(srv, rid)
    assert total == 5 == stored_count(srv, rid)
    assert [(v["source"], v["text"]) for v in versions] == [
        ("revert", "tutor text"), ("restore", "edit 9"), ("restore", "orig"),
        ("edit", "edit 10"), ("create", "orig")]


@pytest.mark.parametrize("value", ["1", "0", "-3", "100001", "many"])
def test_versions_max_is_validated(fresh_server, value):
    srv = fresh_server(f"JournalReportVersionsMax {value}", start=False)
    proc = srv.config_test()
    assert proc.returncode != 0, f"apache2 -t accepted {value!r}"
    assert "JournalReportVersionsMax" in proc.stderr + proc.stdout
    assert "2 to 100000" in proc.stderr + proc.stdout


@pytest.mark.parametrize("value", ["2", "100000"])
def test_versions_max_bounds_are_accepted(fresh_server, value):
    srv = fresh_server(f"JournalReportVersionsMax {value}", start=False)
    proc = srv.config_test()
    assert proc.returncode == 0, proc.stderr + proc.stdout
