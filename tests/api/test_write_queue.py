"""The write queue of SQLite (docs/architecture.md §7.4): writers of every httpd process and
thread queue on a lock file next to the database, taken before BEGIN IMMEDIATE and released
after the transaction. Many concurrent writers all succeed; the file is locked from here the
same way (flock) to show that writers wait for it, readers do not, and a killed holder frees
it."""

import concurrent.futures
import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
import requests

from harness import DB_KIND, assert_json, sql_int, uniq

pytestmark = pytest.mark.skipif(DB_KIND != "sqlite", reason="the write queue is SQLite's")


def lock_path(server):
    return os.path.realpath(str(server.db_path)) + "-wq"


def is_held(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@pytest.fixture
def writer(server):
    return make_writer(server)


def make_writer(server):
    """A key with room for every request below, a group, and a function that creates one entry
    through /api/v1 (its own connection) and answers (status, body)."""
    branch = server.create_branch()
    group = server.create_group(branch["id"])
    key = assert_json(server.api("POST", "/api/api-keys", token=server.admin_token,
                                 json={"name": uniq("wq"), "scopes": ["read", "write"],
                                       "rate_limit_per_min": 10000}), 201)["key"]
    tag = uniq("wq")

    def create(n, timeout=60):
        r = requests.post(f"{server.base_url}/api/v1/entries", headers={"X-Api-Key": key},
                          json={"student_name": f"{tag} {n}", "group_id": group["id"],
                                "description": "queued"}, timeout=timeout)
        return r.status_code, (r.json() if r.headers.get("Content-Type", "").startswith(
            "application/json") else r.text)

    def get(entry_id):
        return requests.get(f"{server.base_url}/api/v1/entries/{entry_id}",
                            headers={"X-Api-Key": key}, timeout=30)

    create.get = get
    create.tag = tag
    return create


def test_concurrent_writers_all_succeed_and_stay(fresh_server):
    # A database of its own: the WAL's file keeps the largest size it ever reached, and on the
    # shared server an earlier test's one large transaction (a restore) may have set it.
    server = fresh_server()
    writer = make_writer(server)
    threads, each = 32, 10
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        answers = list(pool.map(writer, range(threads * each)))
    bad = [a for a in answers if a[0] != 201]
    assert not bad, f"{len(bad)} writes failed, e.g. {bad[:3]}"
    ids = {a[1]["id"] for a in answers}
    assert len(ids) == threads * each
    for entry_id in ids:  # every acknowledged write is there
        r = writer.get(entry_id)
        assert r.status_code == 200 and r.json()["student_name"].startswith(writer.tag), r.text
    # The writers queued on the lock file, and left it free.
    assert os.path.exists(lock_path(server))
    assert not is_held(lock_path(server))
    # The WAL started over while they wrote (its file keeps the largest size it reached): 320
    # new entries write some 27 pages each, and checkpoints keep it under twice SQLite's
    # threshold of 1,000 frames and a few transactions (docs/architecture.md §7.19).
    wal = os.path.getsize(os.path.realpath(str(server.db_path)) + "-wal")
    assert wal < 2600 * (4096 + 24), f"the WAL reached {wal} bytes"


def start_writers(writer, n):
    results = []

    def run(i):
        results.append(writer(i))

    ts = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    return ts, results


@contextlib.contextmanager
def held_queue(server):
    """The lock file held from here (flock) for the block; released however it ends."""
    fd = os.open(lock_path(server), os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def test_writers_wait_for_the_lock_file_and_readers_do_not(server, writer):
    assert writer(0)[0] == 201  # the lock file exists
    with held_queue(server):
        ts, results = start_writers(writer, 2)
        # Well within the in-process wait (JournalSQLiteBusyTimeout, 5 s) of a second writer
        # of the same child.
        time.sleep(0.8)
        assert results == [], f"writes went past the held queue: {results}"
        r = requests.get(f"{server.base_url}/api/v1/entries/0", timeout=10,
                         headers={"X-Api-Key": "none"})
        assert r.status_code in (401, 404)  # a request that reads is answered meanwhile
    for t in ts:
        t.join(30)
    assert [s for s, _ in results] == [201, 201], results


def test_a_killed_holder_frees_the_writers(server, writer):
    assert writer(0)[0] == 201
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time\n"
         "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('held', flush=True)\n"
         "time.sleep(600)\n", lock_path(server)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        ts, results = start_writers(writer, 1)
        time.sleep(0.8)
        assert results == [], f"a write went past the held queue: {results}"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    ts[0].join(30)
    assert [s for s, _ in results] == [201], results
    assert not is_held(lock_path(server))


def hold_queue_while_writing(server, writer, n, seconds):
    """Holds the lock file for `seconds` while n writers start; answers their (status, body).
    n exceeds the test profile's two children: in one of them a writer waits for its turn
    behind the one that waits for the file (JournalSQLiteBusyTimeout bounds that turn's wait;
    the file's own wait is the kernel's)."""
    with held_queue(server):
        ts, results = start_writers(writer, n)
        time.sleep(seconds)
    for t in ts:
        t.join(60)
    return results


def test_writers_wait_out_a_held_queue_of_three_seconds(server, writer):
    """Past SQLite's wait of 2 s that writers had before: a stall of the disk or a busy
    machine holds the queue for seconds, and the writers behind it are answered, not
    refused."""
    assert writer(0)[0] == 201
    results = hold_queue_while_writing(server, writer, 4, 3.0)
    assert [s for s, _ in results] == [201] * 4, results


def test_the_busy_timeout_bounds_the_wait_and_the_refused_write_changes_nothing(fresh_server):
    server = fresh_server("JournalSQLiteBusyTimeout 1000")
    server.allowed_log_patterns += [
        r"\[journal:error\] .*JR01006: BEGIN IMMEDIATE failed: the write queue did not move "
        r"within 1000 ms"]
    writer = make_writer(server)
    assert writer(0)[0] == 201
    # Six writers, so that some child has two or more even if a busy machine brings one
    # late; each has 2 s to begin waiting before the hold ends.
    results = hold_queue_while_writing(server, writer, 6, 3.0)
    statuses = sorted(s for s, _ in results)
    assert 503 in statuses and set(statuses) <= {201, 503}, results
    for status, body in results:
        if status == 503:
            assert "busy" in body["error"], body
    log = server.read_error_log()
    assert "the write queue did not move within 1000 ms" in log, log[-2000:]
    # Only the writes that were answered 201 are there.
    assert sql_int(server, "SELECT COUNT(*) FROM entries WHERE student_name LIKE '%s %%'"
                   % writer.tag) == 1 + statuses.count(201)
