"""The response cache (JournalResponseCache, docs/architecture.md §7.15): list answers kept
per httpd child and never served after a write, wherever the write came from (the API, the
worker, journal-admin, on PostgreSQL any client of the database); never handed to another
caller or scope; Off serves every list from the database.

The servers here run one child process (ServerLimit 1), so a page kept by one request is the
one the next request could be served, and the module logs at debug level: JR12002 says a page
was kept, JR12001 that an answer came from the cache. The counts prove the cache was used, so
a test cannot pass because its requests happened to miss."""

import os
import shutil
import sqlite3
import subprocess
import tempfile

import pytest

import harness
from harness import assert_json, sql_exec, uniq
from test_read_path import statements
from worker_support import (  # noqa: F401 (fixtures)
    fake_llm, get_entry, new_entry, set_settings, wait_for, wait_status, worker_env)

ONE_CHILD = ("StartServers 1\nServerLimit 1\nMaxRequestWorkers 64\n"
             "LogLevel warn journal:debug\n")
sqlite_only = pytest.mark.skipif(harness.DB_KIND != "sqlite",
                                 reason="a write that bypasses the module exists on SQLite only")


@pytest.fixture(scope="module", autouse=True)
def _cluster_of_its_own():
    """On PostgreSQL a kept page is served only while no transaction with an id runs anywhere in
    the cluster. make check runs test files side by side against one cluster, whose writes would
    turn the hits counted below into misses: this file's servers get a cluster of their own."""
    if harness.DB_KIND != "pgsql":
        yield
        return
    top = tempfile.mkdtemp(prefix="jr-cache-pg-")
    os.chmod(top, 0o755)  # the cluster runs as postgres
    data, port = os.path.join(top, "data"), str(harness.free_port())
    script = str(harness.REPO / "scripts" / "pg-cluster.sh")
    subprocess.run(["sh", script, "start", data, port], check=True, timeout=120)
    saved, harness.PG_PORT = harness.PG_PORT, port
    try:
        yield
    finally:
        harness.PG_PORT = saved
        subprocess.run(["sh", script, "stop", data], timeout=120)
        shutil.rmtree(top, ignore_errors=True)


def hits(srv):
    return srv.read_error_log().count("JR12001:")


def kept(srv):
    return srv.read_error_log().count("JR12002:")


@pytest.fixture
def one_child(fresh_server):
    """A server of one child, with the AI checks of new entries off: on PostgreSQL a write that
    queues a check is followed by the workers' NOTIFY, a transaction of its own that the child's
    waker sends after the write has answered (§7.29). Its transaction id moves the generation,
    so the read after it misses, and whether that is the first or the second read after the
    write would depend on timing. Without jobs the counts below do not."""
    def make(extra=""):
        srv = fresh_server(extra_conf=ONE_CHILD + extra)
        set_settings(srv, entry_ai_enabled="false")
        return srv
    return make


def make_key(srv, branch_ids=None, scopes=("read", "write")):
    body = {"name": uniq("ck"), "scopes": list(scopes)}
    if branch_ids is not None:
        body["branch_ids"] = branch_ids
    return assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token, json=body),
                       201)["key"]


def v1(srv, key, path, method="GET", **kw):
    return srv.api(method, path, headers={"X-Api-Key": key}, **kw)


def entry_names(r):
    body = assert_json(r, 200)
    items = body["items"] if isinstance(body, dict) else body
    return sorted(e["student_name"] for e in items)


def twice(get):
    """The same list twice: the second answer comes from the cache (asserted by the caller's
    hit count); both must be equal."""
    first, second = get(), get()
    assert first.status_code == second.status_code == 200
    assert first.content == second.content
    return second


def add_entry(srv, group_id, name):
    return assert_json(srv.api("POST", "/api/entries", token=srv.admin_token,
                               json={"student_name": name, "group_id": group_id}), 201)


def test_api_writes_show_at_once_on_both_interfaces(one_child):
    srv = one_child()
    g = srv.create_group(srv.create_branch()["id"])
    key = make_key(srv)
    a = add_entry(srv, g["id"], uniq("A"))
    path = f"/api/entries?group_id={g['id']}"
    vpath = f"/api/v1/entries?group_id={g['id']}&limit=50"

    def admin():
        return srv.api("GET", path, token=srv.admin_token)

    def integ():
        return v1(srv, key, vpath)

    h0 = hits(srv)
    assert entry_names(twice(admin)) == [a["student_name"]]
    assert entry_names(twice(integ)) == [a["student_name"]]
    assert hits(srv) - h0 == 2
    # POST through /api/v1: both lists show it in the next answer
    b = assert_json(v1(srv, key, "/api/v1/entries", "POST",
                       json={"student_name": uniq("B"), "group_id": g["id"]}), 201)
    assert entry_names(admin()) == sorted([a["student_name"], b["student_name"]])
    assert entry_names(twice(integ)) == sorted([a["student_name"], b["student_name"]])
    # PUT through /api
    renamed = uniq("Renamed")
    assert_json(srv.api("PUT", f"/api/entries/{a['id']}", token=srv.admin_token,
                        json={"student_name": renamed}), 200)
    assert entry_names(twice(integ)) == sorted([renamed, b["student_name"]])
    assert entry_names(twice(admin)) == sorted([renamed, b["student_name"]])
    # DELETE through /api/v1
    assert v1(srv, key, f"/api/v1/entries/{b['id']}", "DELETE").status_code == 200
    assert entry_names(admin()) == [renamed]
    assert entry_names(integ()) == [renamed]
    # the headers the list sets come with a cached answer; the request's own stay its own
    r1, r2 = twice(admin), admin()
    assert r1.headers["X-Total-Count"] == r2.headers["X-Total-Count"] == "1"
    small = f"/api/v1/entries?group_id={g['id']}&limit=1"
    add_entry(srv, g["id"], uniq("C"))
    l1, l2 = v1(srv, key, small), v1(srv, key, small)
    assert l1.content == l2.content and l1.headers["Link"] == l2.headers["Link"]
    assert "rel=\"next\"" in l2.headers["Link"]
    assert int(l2.headers["RateLimit-Remaining"]) < int(l1.headers["RateLimit-Remaining"])
    assert l2.headers["X-Request-Id"] != l1.headers["X-Request-Id"]
    # HEAD is answered from the cache with the same length
    h = srv.api("HEAD", small, headers={"X-Api-Key": key})
    assert h.status_code == 200 and h.content == b""
    assert int(h.headers["Content-Length"]) == len(l2.content)
    assert hits(srv) - h0 >= 9


def test_other_lists_are_cached_and_invalidated(one_child):
    srv = one_child()
    b = srv.create_branch()
    g = srv.create_group(b["id"])
    key = make_key(srv)
    h0 = hits(srv)
    for path in ("/api/v1/branches", "/api/v1/groups", "/api/v1/students", "/api/v1/modules",
                 "/api/v1/lesson-reports"):
        twice(lambda: v1(srv, key, path))
    assert hits(srv) - h0 == 5
    name = uniq("Stu")
    assert_json(srv.api("POST", "/api/students", token=srv.admin_token,
                        json={"name": name, "group_id": g["id"]}), 201)
    students = assert_json(v1(srv, key, "/api/v1/students?limit=1000"), 200)["items"]
    assert name in [s["name"] for s in students]


def test_a_caller_never_gets_another_callers_page(one_child):
    srv = one_child()
    b1, b2 = srv.create_branch(), srv.create_branch()
    g1, g2 = srv.create_group(b1["id"]), srv.create_group(b2["id"])
    e1, e2 = add_entry(srv, g1["id"], uniq("One")), add_entry(srv, g2["id"], uniq("Two"))
    both = sorted([e1["student_name"], e2["student_name"]])
    mine = "/api/entries?limit=1000"  # the same URL for everyone
    _, t1 = srv.create_tutor(branch_ids=[b1["id"]])
    _, t2 = srv.create_tutor(branch_ids=[b2["id"]])

    def names_for(token):
        return [n for n in entry_names(srv.api("GET", mine, token=token)) if n in both]

    h0 = hits(srv)
    assert names_for(srv.admin_token) == both
    assert names_for(srv.admin_token) == both
    assert names_for(t1) == [e1["student_name"]]
    assert names_for(t1) == [e1["student_name"]]
    assert names_for(t2) == [e2["student_name"]]
    assert names_for(srv.admin_token) == both
    assert hits(srv) - h0 == 3  # each caller's second answer, and nobody else's page

    # keys: unrestricted, restricted to b1, restricted to b2; the same URL
    free, only1, only2 = make_key(srv), make_key(srv, [b1["id"]]), make_key(srv, [b2["id"]])
    url = "/api/v1/entries?limit=1000"

    def by_key(k):
        return [n for n in entry_names(v1(srv, k, url)) if n in both]

    assert by_key(free) == both and by_key(free) == both
    assert by_key(only1) == [e1["student_name"]] and by_key(only1) == [e1["student_name"]]
    assert by_key(only2) == [e2["student_name"]]
    assert by_key(free) == both


def test_conditional_requests_still_work(one_child):
    srv = one_child()
    g = srv.create_group(srv.create_branch()["id"])
    e = add_entry(srv, g["id"], uniq("Etag"))
    twice(lambda: srv.api("GET", f"/api/entries?group_id={g['id']}", token=srv.admin_token))
    r = srv.api("GET", f"/api/entries/{e['id']}", token=srv.admin_token)
    tag = r.headers["ETag"]
    r = srv.api("GET", f"/api/entries/{e['id']}", token=srv.admin_token,
                headers={"If-None-Match": tag})
    assert r.status_code == 304 and r.content == b""
    assert_json(srv.api("PUT", f"/api/entries/{e['id']}", token=srv.admin_token,
                        json={"description": "changed"}), 200)
    r = srv.api("GET", f"/api/entries/{e['id']}", token=srv.admin_token,
                headers={"If-None-Match": tag})
    assert r.status_code == 200 and r.headers["ETag"] != tag


def test_sync_answers_are_never_cached(one_child):
    srv = one_child()
    key = make_key(srv)
    h0, k0 = hits(srv), kept(srv)
    for _ in range(3):
        assert v1(srv, key, "/api/v1/entries?updated_since=2020-01-01T00:00:00Z").status_code \
            == 200
    assert (hits(srv), kept(srv)) == (h0, k0)


def test_a_write_from_another_client_of_the_database_shows(one_child):
    """On PostgreSQL another node (here a psql session) writes; on SQLite a writer that raises
    the generation as the module does (the harness)."""
    srv = one_child()
    g = srv.create_group(srv.create_branch()["id"])
    e = add_entry(srv, g["id"], uniq("Node"))
    path = f"/api/entries?group_id={g['id']}"
    h0 = hits(srv)
    assert entry_names(twice(lambda: srv.api("GET", path, token=srv.admin_token))) == \
        [e["student_name"]]
    assert hits(srv) - h0 == 1
    other = uniq("Elsewhere")
    sql_exec(srv, f"UPDATE entries SET student_name = '{other}' WHERE id = {e['id']}")
    assert entry_names(srv.api("GET", path, token=srv.admin_token)) == [other]


def test_journal_admin_writes_show(one_child):
    srv = one_child()
    g = srv.create_group(srv.create_branch()["id"])
    e = add_entry(srv, g["id"], uniq("Kept"))
    proc = srv.admin_cli("backup", "--data-dir", str(srv.data_dir))
    assert proc.returncode == 0, proc.stderr
    archive = srv.data_dir / "backups" / proc.stdout.strip().split("/")[-1].split(" ")[0]
    later = add_entry(srv, g["id"], uniq("Later"))
    path = f"/api/entries?group_id={g['id']}"
    h0 = hits(srv)
    both = sorted([e["student_name"], later["student_name"]])
    assert entry_names(twice(lambda: srv.api("GET", path, token=srv.admin_token))) == both
    assert hits(srv) - h0 == 1
    proc = srv.admin_cli("restore", str(archive), "--data-dir", str(srv.data_dir))
    assert proc.returncode == 0, proc.stderr
    srv._admin_token = None  # the restore ended every session
    assert entry_names(srv.api("GET", path, token=srv.admin_token)) == [e["student_name"]]


def test_a_worker_write_shows(worker_env):
    env = worker_env(extra_conf=ONE_CHILD, log_level="debug")
    srv, fake = env.srv, env.fake
    g = srv.create_group(srv.create_branch()["id"])
    text = f"[[hold]] Ann red {uniq('t')} a book"
    e = new_entry(srv, g["id"], text)
    path = f"/api/entries?group_id={g['id']}"

    def status_in_list():
        [item] = assert_json(srv.api("GET", path, token=srv.admin_token), 200)
        return item["ai_status"]

    wait_for(lambda: fake.count(text) == 1, what="the worker's request")  # held by the fake
    h0 = hits(srv)
    held = status_in_list()
    assert held in ("pending", "processing")
    assert status_in_list() == held
    assert hits(srv) - h0 == 1
    fake.release()
    landed = wait_status(lambda i: get_entry(srv, i), e["id"], ("done", "skipped"))
    assert status_in_list() == landed["ai_status"]


@sqlite_only
def test_off_reads_every_list_from_the_database(one_child):
    """A write that does not raise the generation (the sqlite3 shell: not supported, see
    docs/operations.md) shows what the cache does: On serves the kept page, Off reads the
    change."""
    for mode in ("On", "Off"):
        srv = one_child(f"JournalResponseCache {mode}\n")
        g = srv.create_group(srv.create_branch()["id"])
        e = add_entry(srv, g["id"], uniq("Raw"))
        path = f"/api/entries?group_id={g['id']}"
        h0, k0 = hits(srv), kept(srv)
        twice(lambda: srv.api("GET", path, token=srv.admin_token))
        other = uniq("Shell")
        con = sqlite3.connect(str(srv.db_path), timeout=30)
        with con:
            con.execute("UPDATE entries SET student_name = ? WHERE id = ?", (other, e["id"]))
        con.close()
        names = entry_names(srv.api("GET", path, token=srv.admin_token))
        if mode == "On":
            assert names == [e["student_name"]]
            assert hits(srv) - h0 == 2
        else:
            assert names == [other]
            assert (hits(srv), kept(srv)) == (h0, k0)
        srv.stop()


def test_a_cached_page_costs_only_the_generations_read(one_child):
    # SQLite reads the generation from a shared counter, PostgreSQL from a snapshot (one read
    # shared by the requests that ask at once, docs/architecture.md §7.30); both keep the
    # key's row under it (test_key_lookup_cache.py). A page served from the cache runs no
    # statement but that read, and a write still makes the next one miss.
    generation = ["rcache_snapshot"] if harness.DB_KIND == "pgsql" else []
    srv = one_child()
    g = srv.create_group(srv.create_branch()["id"])
    add_entry(srv, g["id"], uniq("A"))
    add_entry(srv, g["id"], uniq("B"))
    key = make_key(srv, scopes=("read",))
    assert_json(v1(srv, key, "/api/v1/me"), 200)  # the key's first use stamps it (a write)
    first = v1(srv, key, "/api/v1/entries")
    assert assert_json(first, 200)["total"] == 2
    ran = statements(srv, first)
    assert ran[:len(generation) + 1] == generation + ["key_auth"], ran
    assert len(ran) > len(generation) + 1, ran  # and the page's own statements
    again = v1(srv, key, "/api/v1/entries")
    assert assert_json(again, 200) == first.json()
    assert statements(srv, again) == generation
    add_entry(srv, g["id"], uniq("C"))
    after = v1(srv, key, "/api/v1/entries")
    assert assert_json(after, 200)["total"] == 3
    assert len(statements(srv, after)) > 1
