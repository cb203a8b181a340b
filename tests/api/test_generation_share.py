"""The write generation under concurrent requests (docs/architecture.md §7.15 and §7.30).

On PostgreSQL the requests of a child that ask for the generation at the same time share one
read of a snapshot, taken after each of them arrived. These tests run the cache under
concurrent load and check both halves of that: fewer reads than requests, and never a page
older than a write another node had answered before the request was sent."""

import threading

import pytest
import requests

import harness
from harness import assert_json, uniq
from test_read_path import statements
from test_response_cache import ONE_CHILD, _cluster_of_its_own, v1  # noqa: F401
# (_cluster_of_its_own, a fixture: on PostgreSQL a page is served only while no other test
# writes to the cluster)
from worker_support import set_settings

PG = harness.DB_KIND == "pgsql"
# One child, and keys that may make every request of the load.
CONF = ONE_CHILD + "JournalRateLimitMax 1000000\n"


def make_key(srv, scopes=("read", "write")):
    body = {"name": uniq("gs"), "scopes": list(scopes), "rate_limit_per_min": 1000000}
    return assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token, json=body),
                       201)["key"]


def log_count(srv, tag):
    return srv.read_error_log().count(tag)


def snapshot_reads(srv):
    return srv.read_error_log().count("JR12140: statement rcache_snapshot")


def in_threads(n, fn):
    """Runs fn(i) in n threads at once; the first exception, if any, is raised."""
    errors = []

    def run(i):
        try:
            fn(i)
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


@pytest.mark.skipif(not PG, reason="SQLite reads its generation from shared memory")
def test_requests_at_once_share_the_generations_read(fresh_server):
    srv = fresh_server(CONF)
    key = make_key(srv, scopes=("read",))
    for _ in range(3):  # the key's first use stamps it; the next keep its row
        assert_json(v1(srv, key, "/api/v1/me"), 200)
    reads, kept_rows = snapshot_reads(srv), log_count(srv, "JR12003:")
    threads, each = 8, 40

    def client(_):
        with requests.Session() as s:
            for _ in range(each):
                r = s.get(srv.base_url + "/api/v1/me", headers={"X-Api-Key": key}, timeout=30)
                assert r.status_code == 200, r.text

    in_threads(threads, client)
    requests_made = threads * each
    # Every request needed a snapshot taken after it arrived; they came at once, so reads
    # were shared: fewer statements than requests, and the key's row came from memory.
    assert snapshot_reads(srv) - reads < requests_made
    assert log_count(srv, "JR12003:") - kept_rows > requests_made // 2


def test_a_write_answered_by_one_node_shows_at_once_on_another_under_load(fresh_server):
    """Two nodes on one database; the second serves cached lists to readers all the time. Each
    entry the first node has answered for is in the second's very next answer."""
    a = fresh_server(CONF)
    set_settings(a, entry_ai_enabled="false")
    b = fresh_server(CONF, start=False)
    if PG:
        harness.pg_run("dropdb", "--if-exists", b.pg_dbname)
        b.pg_dbname = a.pg_dbname
    b.db_path, b.dbd_params = a.db_path, a.dbd_params
    b._render(b.port)
    b.use_existing_admin(a.admin_username, a.admin_password)
    b.start()
    g = a.create_group(a.create_branch()["id"])
    key = make_key(a)
    path = f"/api/v1/entries?group_id={g['id']}&limit=200"
    stop = threading.Event()
    hits = log_count(b, "JR12001:")

    def reader(_):
        with requests.Session() as s:
            while not stop.is_set():
                r = s.get(b.base_url + path, headers={"X-Api-Key": key}, timeout=30)
                assert r.status_code == 200, r.text

    load = threading.Thread(target=in_threads, args=(4, reader))
    load.start()
    try:
        names = set()
        for i in range(15):
            name = uniq(f"N{i}")
            assert_json(v1(a, key, "/api/v1/entries", method="POST",
                           json={"student_name": name, "group_id": g["id"]}), 201)
            names.add(name)
            seen = assert_json(v1(b, key, path), 200)
            assert {e["student_name"] for e in seen["items"]} == names
            assert seen["total"] == len(names)
            # Between writes the readers are served from the cache again.
            for _ in range(3):
                assert assert_json(v1(b, key, path), 200)["total"] == len(names)
    finally:
        stop.set()
        load.join()
    assert log_count(b, "JR12001:") > hits  # the cache answered: its pages were in play


@pytest.mark.skipif(not PG, reason="SQLite reads its generation from shared memory")
def test_a_write_reads_no_generation_for_its_key(fresh_server):
    """A request that writes moves the generation itself, so a key's row it kept would serve
    no one after it: it reads no snapshot before its key's lookup, which brings one (§7.30)."""
    srv = fresh_server(CONF)
    set_settings(srv, entry_ai_enabled="false")
    g = srv.create_group(srv.create_branch()["id"])
    key = make_key(srv)
    for _ in range(3):  # the key's row for reads is kept
        assert_json(v1(srv, key, "/api/v1/me"), 200)
    assert statements(srv, v1(srv, key, "/api/v1/me")) == ["rcache_snapshot"]
    r = v1(srv, key, "/api/v1/entries", method="POST",
           json={"student_name": uniq("W"), "group_id": g["id"]})
    assert_json(r, 201)
    ran = statements(srv, r)
    assert "rcache_snapshot" not in ran, ran
    assert ran[0] == "key_auth_settings", ran  # the lookup a write makes, with its settings
