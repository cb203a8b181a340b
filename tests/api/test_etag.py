"""Conditional requests on single records (docs/integrators.md, "Conditional requests"):
ETag on GET and PUT answers of an entry and a lesson report, If-None-Match -> 304,
If-Match on PUT -> 412 when the record changed since it was read."""

import re

import pytest

from harness import assert_error, assert_json, uniq

TAG = re.compile(r'^"[0-9a-f]{32}"$')


@pytest.fixture
def world(server):
    b = server.create_branch()
    g = server.create_group(b["id"])
    k = assert_json(server.api("POST", "/api/api-keys", token=server.admin_token,
                               json={"name": uniq("etag"), "scopes": ["read", "write"]}), 201)
    h = {"X-Api-Key": k["key"]}
    e = assert_json(server.api("POST", "/api/v1/entries", headers=h,
                               json={"student_name": uniq("E"), "group_id": g["id"]}), 201)
    rep = assert_json(server.api("POST", "/api/v1/lesson-reports", headers=h,
                                 json={"group_id": g["id"], "lesson_date": "2026-03-04",
                                       "lesson_time": "10:00", "text": "t"}), 201)
    return {"h": h, "entry": e, "report": rep}


def get(server, h, path, **extra):
    return server.api("GET", path, headers={**h, **extra})


@pytest.mark.parametrize("kind", ["entries", "lesson-reports"])
def test_get_has_a_stable_etag_and_if_none_match_is_304(server, world, kind):
    rid = world["entry" if kind == "entries" else "report"]["id"]
    path = f"/api/v1/{kind}/{rid}"
    first = get(server, world["h"], path)
    body = assert_json(first, 200)
    tag = first.headers.get("ETag")
    assert tag and TAG.match(tag), tag
    assert get(server, world["h"], path).headers["ETag"] == tag, "same record, same tag"
    for inm in (tag, f'W/{tag}', f'"other", {tag}', "*"):
        r = get(server, world["h"], path, **{"If-None-Match": inm})
        assert r.status_code == 304, (inm, r.status_code, r.text)
        assert r.content == b"" and r.headers.get("ETag") == tag
        assert r.headers.get("X-Request-Id") and r.headers.get("RateLimit-Remaining")
    r = get(server, world["h"], path, **{"If-None-Match": '"0123"'})
    assert assert_json(r, 200) == body
    head = server.api("HEAD", path, headers=world["h"])
    assert head.status_code == 200 and head.headers.get("ETag") == tag


def test_a_change_changes_the_tag_and_if_match_guards_put(server, world):
    h, eid = world["h"], world["entry"]["id"]
    path = f"/api/v1/entries/{eid}"
    old = get(server, h, path).headers["ETag"]
    # A change with the current tag passes and answers the new tag.
    r = server.api("PUT", path, headers={**h, "If-Match": old}, json={"description": "one"})
    assert assert_json(r, 200)["description"] == "one"
    new = r.headers.get("ETag")
    assert new and new != old
    assert get(server, h, path).headers["ETag"] == new
    # The old tag is stale: 412, nothing changed.
    r = server.api("PUT", path, headers={**h, "If-Match": old}, json={"description": "lost"})
    assert_error(r, 412, "If-Match")
    assert r.headers.get("ETag") == new
    assert assert_json(get(server, h, path), 200)["description"] == "one"
    # The old tag no longer answers 304.
    assert get(server, h, path, **{"If-None-Match": old}).status_code == 200
    # "*" passes for an existing record; a weak tag never passes If-Match.
    assert_json(server.api("PUT", path, headers={**h, "If-Match": "*"},
                           json={"description": "two"}), 200)
    cur = get(server, h, path).headers["ETag"]
    assert_error(server.api("PUT", path, headers={**h, "If-Match": f"W/{cur}"},
                            json={"description": "x"}), 412)
    # Without If-Match a PUT is unconditional, as before.
    assert_json(server.api("PUT", path, headers=h, json={"description": "three"}), 200)


def test_if_match_on_a_deleted_record_is_412(server, world):
    h, eid = world["h"], world["entry"]["id"]
    path = f"/api/v1/entries/{eid}"
    tag = get(server, h, path).headers["ETag"]
    assert_json(server.api("DELETE", path, headers=h), 200)
    assert_error(server.api("PUT", path, headers={**h, "If-Match": tag},
                            json={"description": "x"}), 412)


def test_admin_interface_lesson_report_put_is_guarded(server, world):
    rid = world["report"]["id"]
    path = f"/api/lesson-reports/{rid}"
    tok = server.admin_token
    r = server.api("GET", path, token=tok)
    tag = r.headers.get("ETag")
    assert tag and r.headers["ETag"] == get(server, world["h"], f"/api/v1/lesson-reports/{rid}"
                                            ).headers["ETag"], "one record, one tag"
    assert_json(server.api("PUT", path, token=tok, headers={"If-Match": tag},
                           json={"text": "edited"}), 200)
    assert_error(server.api("PUT", path, token=tok, headers={"If-Match": tag},
                            json={"text": "lost"}), 412)


def test_lists_have_no_etag(server, world):
    r = get(server, world["h"], "/api/v1/entries")
    assert_json(r, 200)
    assert "ETag" not in r.headers
