"""Query parameters of /api/v1: every endpoint reads a fixed set (docs/integrators.md,
"Query parameters"); any other is 400 and changes nothing, so a filter the server does not
know never returns a wider list than asked for."""

import pytest

from harness import assert_error, assert_json, sql_exec, uniq

# Path -> the parameters it reads (the table of docs/integrators.md).
SYNC = ["cursor", "updated_since", "include_deleted"]
READS = {
    "/api/v1/me": [],
    "/api/v1/branches": ["limit", "offset"] + SYNC,
    "/api/v1/groups": ["branch_id", "limit", "offset"] + SYNC,
    "/api/v1/students": ["group_id", "branch_id", "search", "limit", "offset"] + SYNC,
    "/api/v1/modules": ["search", "limit", "offset"] + SYNC,
    "/api/v1/entries": ["group_id", "branch_id", "module_id", "student_id", "student",
                        "date_from", "date_to", "search", "limit", "offset"] + SYNC,
    "/api/v1/lesson-reports": ["group_id", "branch_id", "date_from", "date_to", "limit",
                               "offset"] + SYNC,
    "/api/v1/stats": [],
}
SAMPLE = {"limit": "2", "offset": "0", "branch_id": "1", "group_id": "1", "module_id": "1",
          "student_id": "1", "student": "x", "search": "x", "date_from": "2026-01-01",
          "date_to": "2026-12-31"}


@pytest.fixture(scope="module")
def key(_session_server):
    srv = _session_server
    body = {"name": uniq("qkey"), "scopes": ["read", "write"]}
    r = srv.api("POST", "/api/api-keys", token=srv.admin_token, json=body)
    return assert_json(r, 201)["key"]


def get(server, key, path, params):
    return server.api("GET", path, headers={"X-Api-Key": key}, params=params)


@pytest.mark.parametrize("path", sorted(READS))
def test_known_parameters_are_read(server, key, path):
    assert_json(get(server, key, path, {n: SAMPLE[n] for n in READS[path] if n in SAMPLE}), 200)


@pytest.mark.parametrize("path", sorted(READS))
@pytest.mark.parametrize("name", ["updated_after", "limt", "Limit", "cursor_x"])
def test_unknown_parameters_are_400(server, key, path, name):
    body = assert_error(get(server, key, path, {name: "1"}), 400, "unknown query parameter",
                        name)
    for known in READS[path]:
        assert known in body["error"], body


@pytest.mark.parametrize("path", ["/api/v1/me", "/api/v1/stats"])
def test_sync_parameters_only_on_lists(server, key, path):
    assert_error(get(server, key, path, {"updated_since": "2020-01-01T00:00:00Z"}), 400,
                 "unknown query parameter", "updated_since")


def test_records_and_mutations_refuse_parameters(server, key):
    b = server.create_branch()
    g = server.create_group(b["id"])
    h = {"X-Api-Key": key}
    e = assert_json(server.api("POST", "/api/v1/entries", headers=h,
                               json={"student_name": uniq("Q"), "group_id": g["id"]}), 201)
    for method, path, body in (("GET", f"/api/v1/entries/{e['id']}", None),
                               ("PUT", f"/api/v1/entries/{e['id']}", {"description": "new"}),
                               ("POST", "/api/v1/ai/wake", None),
                               ("DELETE", f"/api/v1/entries/{e['id']}", None)):
        r = server.api(method, path + "?force=1", headers=h, json=body)
        assert_error(r, 400, "unknown query parameter", "force")
    # Nothing changed: the entry is still there with its text.
    got = assert_json(server.api("GET", f"/api/v1/entries/{e['id']}", headers=h), 200)
    assert got["description"] == e["description"]
    assert_json(server.api("GET", f"/api/v1/entries/{e['id']}/files", headers=h,
                           params={"limit": 5}), 200)


def test_admin_interface_is_not_checked(server):
    r = server.api("GET", "/api/entries", token=server.admin_token, params={"whatever": "1"})
    assert_json(r, 200)


def test_query_string_is_checked_after_the_key_and_counted(server):
    """docs/integrators.md, check order: the query string (step 9) after the key (3-5) and
    the rate limit (6): without a key the answer is 401, with one the 400 counts."""
    assert_error(server.api("GET", "/api/v1/entries?search=%00"), 401)
    assert_error(server.api("GET", "/api/v1/entries?updated_after=x"), 401)
    body = {"name": uniq("qcount"), "scopes": ["read"], "rate_limit_per_min": 5}
    k = assert_json(server.api("POST", "/api/api-keys", token=server.admin_token, json=body),
                    201)["key"]
    h = {"X-Api-Key": k}
    left = []
    for q in ("search=%00", "updated_after=x"):
        r = server.api("GET", "/api/v1/entries?" + q, headers=h)
        assert_error(r, 400)
        left.append(int(r.headers["RateLimit-Remaining"]))
    assert left == [4, 3], left


# ---- cursor paging ------------------------------------------------------------------------------
import random
import threading
import time

SETTLE = 5  # JR_SYNC_SETTLE_SECONDS


def branch_key(server, branch_id, scopes=("read", "write")):
    body = {"name": uniq("synckey"), "scopes": list(scopes), "branch_ids": [branch_id],
            "rate_limit_per_min": 10000}
    return assert_json(server.api("POST", "/api/api-keys", token=server.admin_token, json=body),
                       201)["key"]


def walk(server, h, path, params, limit):
    """Every page of a cursor walk: [(items, response)]."""
    pages, cursor = [], None
    while True:
        q = dict(params, limit=limit)
        if cursor:
            q["cursor"] = cursor
        r = server.api("GET", path, headers=h, params=q)
        body = assert_json(r, 200)
        pages.append((body["items"], r))
        assert body["has_more"] == (body["next_cursor"] is not None)
        if not body["has_more"]:
            assert "Link" not in r.headers
            return pages
        assert r.headers["Link"].startswith(f"<{path}?") and 'rel="next"' in r.headers["Link"]
        assert f"cursor={body['next_cursor']}" in r.headers["Link"]
        cursor = body["next_cursor"]


@pytest.fixture
def place(server):
    b = server.create_branch()
    g = server.create_group(b["id"])
    return {"branch": b, "group": g, "h": {"X-Api-Key": branch_key(server, b["id"])}}


def test_every_list_walks_by_cursor_like_its_offset_pages(server, place):
    h, g, b = place["h"], place["group"], place["branch"]
    for i in range(5):
        server.api("POST", "/api/students", token=server.admin_token,
                   json={"name": f"S{i % 2} {uniq()}", "group_id": g["id"]})
        server.api("POST", "/api/v1/entries", headers=h,
                   json={"student_name": uniq("W"), "group_id": g["id"]})
        server.api("POST", "/api/v1/lesson-reports", headers=h,
                   json={"group_id": g["id"], "lesson_date": f"2026-02-0{1 + i % 3}",
                         "lesson_time": None if i % 2 else f"1{i}:00", "text": "x"})
        server.create_group(b["id"])
    for path, params in (("/api/v1/entries", {"group_id": g["id"]}),
                         ("/api/v1/students", {"group_id": g["id"]}),
                         ("/api/v1/lesson-reports", {"group_id": g["id"]}),
                         ("/api/v1/groups", {"branch_id": b["id"]}),
                         ("/api/v1/branches", {}),
                         ("/api/v1/modules", {})):
        whole = assert_json(server.api("GET", path, headers=h,
                                       params=dict(params, limit=1000)), 200)["items"]
        pages = walk(server, h, path, params, 2)
        walked = [i["id"] for items, _ in pages for i in items]
        assert walked == [i["id"] for i in whole], path
        assert all(len(items) <= 2 for items, _ in pages)


def test_cursor_walk_under_inserts_updates_deletes_sees_each_record_once(server, place):
    """The guide's paging loop lost and repeated entries while others were added and deleted:
    a cursor walk sees every entry that exists throughout exactly once."""
    h, g = place["h"], place["group"]
    start = [assert_json(server.api("POST", "/api/v1/entries", headers=h,
                                    json={"student_name": uniq("C"), "group_id": g["id"]}),
                         201)["id"] for _ in range(60)]
    doomed = set(random.Random(7).sample(start, 15))
    stop = threading.Event()
    errors = []

    def mutate():
        rnd = random.Random(11)
        todo = list(doomed)
        try:
            while not stop.is_set():
                server.api("POST", "/api/v1/entries", headers=h,
                           json={"student_name": uniq("N"), "group_id": g["id"]})
                server.api("PUT", f"/api/v1/entries/{rnd.choice(start)}", headers=h,
                           json={"description": uniq("d")})
                if todo:
                    server.api("DELETE", f"/api/v1/entries/{todo.pop()}", headers=h)
        except Exception as exc:  # reported below: a thread's failure must fail the test
            errors.append(exc)

    t = threading.Thread(target=mutate)
    t.start()
    try:
        seen = []
        for items, _ in walk(server, h, "/api/v1/entries", {"group_id": g["id"]}, 4):
            seen += [i["id"] for i in items]
            time.sleep(0.02)
    finally:
        stop.set()
        t.join()
    assert not errors, errors
    assert len(seen) == len(set(seen)), "an entry was seen twice"
    missing = set(start) - doomed - set(seen)
    assert not missing, f"entries that existed throughout were not seen: {sorted(missing)}"


def test_cursor_errors(server, place):
    h, g = place["h"], place["group"]
    for _ in range(3):
        server.api("POST", "/api/v1/entries", headers=h,
                   json={"student_name": uniq("E"), "group_id": g["id"]})
    body = assert_json(server.api("GET", "/api/v1/entries", headers=h,
                                  params={"group_id": g["id"], "limit": 1}), 200)
    c = body["next_cursor"]
    cases = [({"group_id": g["id"], "cursor": c, "offset": 1}, "offset"),
             ({"group_id": g["id"] + 1, "cursor": c}, "cursor"),
             ({"cursor": c}, "cursor"),
             ({"group_id": g["id"], "cursor": "not-a-cursor!"}, "cursor"),
             ({"group_id": g["id"], "cursor": "e30"}, "cursor")]
    for params, word in cases:
        assert_error(server.api("GET", "/api/v1/entries", headers=h, params=params), 400, word)
    assert_error(server.api("GET", "/api/v1/students", headers=h, params={"cursor": c}), 400,
                 "cursor")


# ---- sync: updated_since ------------------------------------------------------------------------
def sync_all(server, h, path, cursor=None, since=None, deleted=True, limit=5):
    """Pages of a sync until has_more is false: (items, the cursor to resume from)."""
    items = []
    while True:
        if cursor:
            q = {"cursor": cursor, "limit": limit}
        else:
            q = {"updated_since": since, "limit": limit}
            if deleted:
                q["include_deleted"] = "1"
        body = assert_json(server.api("GET", path, headers=h, params=q), 200)
        assert body["next_cursor"], "a sync always answers the cursor to resume from"
        items += body["items"]
        cursor = body["next_cursor"]
        if not body["has_more"]:
            return items, cursor


def apply(state, items):
    for it in items:
        state[it["id"]] = it


def live_entries(server, h, group_id):
    """Every live entry of the group as the server lists it, all pages: a fast writer leaves
    more than one page (at most 1000) behind, and a copy compared with the first page alone
    would seem to hold entries the server no longer has."""
    live, q = {}, {"group_id": group_id, "limit": 1000}
    while True:
        body = assert_json(server.api("GET", "/api/v1/entries", headers=h, params=q), 200)
        live.update((e["id"], e) for e in body["items"])
        if not body["has_more"]:
            return live
        q["cursor"] = body["next_cursor"]  # a page this large has no Link header


def test_sync_under_concurrent_changes_ends_equal_to_the_server(server, place):
    """A client applies every sync page while entries are created, changed and deleted; once
    the writes stop and settle, its copy equals the server's: every live entry with its last
    description, every deletion as a tombstone."""
    h, g = place["h"], place["group"]
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 2))
    ids = [assert_json(server.api("POST", "/api/v1/entries", headers=h,
                                  json={"student_name": uniq("S"), "group_id": g["id"]}),
                       201)["id"] for _ in range(20)]
    stop = threading.Event()
    errors = []

    def mutate():
        rnd = random.Random(5)
        live = list(ids)
        try:
            while not stop.is_set():
                live.append(assert_json(server.api(
                    "POST", "/api/v1/entries", headers=h,
                    json={"student_name": uniq("S"), "group_id": g["id"]}), 201)["id"])
                assert_json(server.api("PUT", f"/api/v1/entries/{rnd.choice(live)}", headers=h,
                                       json={"description": uniq("v")}), 200)
                if rnd.random() < 0.4:
                    victim = live.pop(rnd.randrange(len(live)))
                    assert_json(server.api("DELETE", f"/api/v1/entries/{victim}", headers=h),
                                200)
        except Exception as exc:
            errors.append(exc)

    state = {}
    t = threading.Thread(target=mutate)
    t.start()
    try:
        items, cursor = sync_all(server, h, "/api/v1/entries", since=since)
        apply(state, items)
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            items, cursor = sync_all(server, h, "/api/v1/entries", cursor=cursor)
            apply(state, items)
            time.sleep(0.3)
    finally:
        stop.set()
        t.join()
    assert not errors, errors
    time.sleep(SETTLE + 1.5)
    items, cursor = sync_all(server, h, "/api/v1/entries", cursor=cursor)
    apply(state, items)
    live = live_entries(server, h, g["id"])
    mine = {i: v for i, v in state.items() if "deleted_at" not in v}
    assert set(mine) == set(live), (sorted(set(live) - set(mine)), sorted(set(mine) - set(live)))
    for i, e in live.items():
        assert mine[i]["description"] == e["description"], i
    gone = {i for i, v in state.items() if "deleted_at" in v}
    assert gone, "the writer deleted entries: their tombstones must have arrived"
    assert not gone & set(live)


def test_recent_changes_wait_for_the_settle_time_and_ties_go_by_id(server, place):
    """Records changed in the last seconds are not answered yet (a write that stamped its time
    may still be committing); records of one second come in id order, each once, also when a
    page ends inside that second."""
    h, g = place["h"], place["group"]
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1))
    e = assert_json(server.api("POST", "/api/v1/entries", headers=h,
                               json={"student_name": uniq("T"), "group_id": g["id"]}), 201)
    items, cursor = sync_all(server, h, "/api/v1/entries", since=since)
    assert e["id"] not in [i["id"] for i in items], "a change younger than the settle time"
    time.sleep(SETTLE + 1.5)
    items, _ = sync_all(server, h, "/api/v1/entries", cursor=cursor)
    assert [i["id"] for i in items] == [e["id"]]
    # Five entries stamped with one second: pages of 2 cut that second twice.
    tied = [assert_json(server.api("POST", "/api/v1/entries", headers=h,
                                   json={"student_name": uniq("Tie"), "group_id": g["id"]}),
                        201)["id"] for _ in range(5)]
    sql_exec(server, "UPDATE entries SET updated_at = '2001-02-03T04:05:06Z' WHERE id IN "
                     f"({','.join(map(str, tied))})")
    items, _ = sync_all(server, h, "/api/v1/entries", since="2001-02-03T04:05:06Z", limit=2)
    got = [i["id"] for i in items if i["id"] in tied]
    assert got == sorted(tied)


def test_tombstones_of_every_list(server, place):
    h, g, b = place["h"], place["group"], place["branch"]
    tok = server.admin_token
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 2))
    e = assert_json(server.api("POST", "/api/v1/entries", headers=h,
                               json={"student_name": uniq("D"), "group_id": g["id"]}), 201)
    rep = assert_json(server.api("POST", "/api/v1/lesson-reports", headers=h,
                                 json={"group_id": g["id"], "lesson_date": "2026-05-05",
                                       "lesson_time": "09:00", "text": "t"}), 201)
    st = assert_json(server.api("POST", "/api/students", token=tok,
                                json={"name": uniq("Stu"), "group_id": g["id"]}), 201)
    g2 = server.create_group(b["id"])
    m = assert_json(server.api("POST", "/api/modules", token=tok,
                               json={"name": uniq("Mod"), "lessons_count": 3}), 201)
    assert_json(server.api("DELETE", f"/api/v1/entries/{e['id']}", headers=h), 200)
    assert_json(server.api("DELETE", f"/api/v1/lesson-reports/{rep['id']}", headers=h), 200)
    assert_json(server.api("DELETE", f"/api/students/{st['id']}", token=tok), 200)
    assert_json(server.api("DELETE", f"/api/groups/{g2['id']}", token=tok), 200)
    assert_json(server.api("DELETE", f"/api/modules/{m['id']}", token=tok), 200)
    time.sleep(SETTLE + 1.5)
    for path, rid in (("/api/v1/entries", e["id"]), ("/api/v1/lesson-reports", rep["id"]),
                      ("/api/v1/students", st["id"]), ("/api/v1/groups", g2["id"]),
                      ("/api/v1/modules", m["id"])):
        items, _ = sync_all(server, h, path, since=since)
        stone = [i for i in items if i["id"] == rid]
        assert len(stone) == 1 and set(stone[0]) == {"id", "deleted_at"}, (path, stone)
        items, _ = sync_all(server, h, path, since=since, deleted=False)
        assert rid not in [i["id"] for i in items], path
    # A branch deleted for good: its tombstone reaches an unrestricted key.
    nb = server.create_branch()
    assert_json(server.api("DELETE", f"/api/branches/{nb['id']}", token=tok), 200)
    time.sleep(SETTLE + 1.5)
    admin_key = {"X-Api-Key": assert_json(server.api(
        "POST", "/api/api-keys", token=tok,
        json={"name": uniq("all"), "scopes": ["read"], "rate_limit_per_min": 10000}),
        201)["key"]}
    items, _ = sync_all(server, admin_key, "/api/v1/branches", since=since, limit=1000)
    assert {"id": nb["id"]} == {k: v for k, v in next(i for i in items if i["id"] == nb["id"]
                                                      ).items() if k == "id"}
    # A restricted key does not see other branches' tombstones.
    items, _ = sync_all(server, h, "/api/v1/branches", since=since, limit=1000)
    assert nb["id"] not in [i["id"] for i in items]


def test_changes_without_their_own_time_move_updated_at(server, place):
    """The AI status (a recheck) sets no updated_at itself; the record's time moves anyway, so a
    sync sees the change."""
    h, g = place["h"], place["group"]
    e = assert_json(server.api("POST", "/api/v1/entries", headers=h,
                               json={"student_name": uniq("R"), "group_id": g["id"]}), 201)
    sql_exec(server, f"UPDATE entries SET updated_at = '2001-01-01T00:00:00Z' WHERE id = {e['id']}")
    assert_json(server.api("POST", f"/api/v1/entries/{e['id']}/ai/recheck", headers=h), 200)
    got = assert_json(server.api("GET", f"/api/v1/entries/{e['id']}", headers=h), 200)
    assert got["updated_at"] > "2020", got["updated_at"]


def test_sync_parameter_errors(server, place):
    h = place["h"]
    body = assert_json(server.api("GET", "/api/v1/entries", headers=h,
                                  params={"updated_since": "2020-01-01T00:00:00Z"}), 200)
    sc = body["next_cursor"]
    for params, word in (({"updated_since": "yesterday"}, "updated_since"),
                         ({"updated_since": "2020-01-01"}, "updated_since"),
                         ({"updated_since": "2020-01-01T00:00:00Z", "group_id": "1"}, "group_id"),
                         ({"updated_since": "2020-01-01T00:00:00Z", "offset": "5"}, "offset"),
                         ({"updated_since": "2020-01-01T00:00:00Z", "include_deleted": "yes"},
                          "include_deleted"),
                         ({"cursor": sc, "updated_since": "2020-01-01T00:00:00Z"}, "cursor"),
                         ({"cursor": sc, "include_deleted": "1"}, "cursor")):
        assert_error(server.api("GET", "/api/v1/entries", headers=h, params=params), 400, word)
    assert_error(server.api("GET", "/api/v1/students", headers=h, params={"cursor": sc}), 400,
                 "cursor")


def test_branch_key_sync_never_answers_other_branches(server, place):
    """A key restricted to one branch syncs that branch only: records of another branch that
    change meanwhile (an edit, the AI status moving updated_at, a soft or a final deletion)
    reach it neither as records nor as tombstones."""
    h, g, tok = place["h"], place["group"], server.admin_token
    ob = server.create_branch()
    og = server.create_group(ob["id"])
    others = [assert_json(server.api("POST", "/api/entries", token=tok,
                                     json={"student_name": uniq("O"), "group_id": og["id"]}),
                          201)["id"] for _ in range(6)]
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 2))
    mine = assert_json(server.api("POST", "/api/v1/entries", headers=h,
                                  json={"student_name": uniq("M"), "group_id": g["id"]}),
                       201)["id"]
    assert_json(server.api("PUT", f"/api/entries/{others[0]}", token=tok,
                           json={"description": uniq("x")}), 200)
    sql_exec(server, f"UPDATE entries SET ai_status = 'failed' WHERE id = {others[1]}")
    assert_json(server.api("DELETE", f"/api/entries/{others[2]}", token=tok), 200)
    sql_exec(server, f"DELETE FROM entries WHERE id = {others[3]}")
    time.sleep(SETTLE + 1.5)
    for limit in (1, 2, 1000):
        items, _ = sync_all(server, h, "/api/v1/entries", since=since, limit=limit)
        assert [i["id"] for i in items] == [mine], (limit, items)


def test_synced_copy_equals_every_page_of_the_server(server, place):
    """More changed entries than one page holds: the sync answers them all in pages of the
    largest limit, and the copy equals the whole list, not its first page."""
    h, g, b = place["h"], place["group"], place["branch"]
    n, at = 1003, "2001-05-06T07:08:09Z"
    sql_exec(server, f"WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s"
                     f" WHERE i < {n}) INSERT INTO entries (student_name, group_id, branch_id,"
                     f" created_at, updated_at) SELECT 'Many ' || i, {g['id']}, {b['id']},"
                     f" '{at}', '{at}' FROM s")
    state = {}
    items, _ = sync_all(server, h, "/api/v1/entries", since=at, limit=1000)
    apply(state, items)
    live = live_entries(server, h, g["id"])
    assert len(live) == n
    assert set(state) == set(live)


def test_a_page_over_64_kib_keeps_its_link_header(server):
    """A page's Link header follows from its last item, and headers leave with the first bytes
    of a streamed answer: /api/v1 pages up to 1 MiB are sent whole, Link included."""
    branch = server.create_branch()
    group = server.create_group(branch["id"])
    text = "0123456789abcdef" * 64  # 1 KiB of text per entry: a page of 200 is about 270 KB
    sql_exec(server, "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 250)"
                     " INSERT INTO entries (student_name, group_id, branch_id, description,"
                     " created_at, updated_at) SELECT 'big ' || n, %s, %s, '%s',"
                     " '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z' FROM s"
             % (group["id"], branch["id"], text))
    h = {"X-Api-Key": branch_key(server, branch["id"])}
    r = server.api("GET", "/api/v1/entries", headers=h,
                   params={"group_id": group["id"], "limit": 200})
    body = assert_json(r, 200)
    assert len(r.content) > 200 * 1024 and len(body["items"]) == 200 and body["has_more"]
    assert r.headers.get("Content-Length") == str(len(r.content))
    assert f"cursor={body['next_cursor']}" in r.headers["Link"]
    rest = assert_json(server.api("GET", "/api/v1/entries", headers=h, params={
        "group_id": group["id"], "limit": 200, "cursor": body["next_cursor"]}), 200)
    assert len(rest["items"]) == 50 and not rest["has_more"]

