"""The workers' wake-ups after the writers' COMMIT (migration 0015, jr_queue_wake).

On PostgreSQL a transaction that sends a NOTIFY holds a database-wide lock from its commit until
its WAL flush ends, so the module no longer notifies inside the writing transaction (the
triggers of 0006 and 0008 are gone): it notifies after the COMMIT, in a transaction of its own,
and the concurrent commits of a process share one NOTIFY. These tests check that every writer
that queues a job still wakes a LISTENing connection and the real worker, and that sharing
loses no wake-up under concurrent writers. SQLite's workers hear every commit (inotify); the
tests that need no NOTIFY run there too."""

import re
import subprocess
import threading
import time

import pytest

import harness
from harness import uniq
from test_photo_jobs import enhance, entry_with_photo, jpeg
from worker_support import (  # noqa: F401 (fixtures)
    api, fake_llm, get_entry, new_entry, new_group, new_report, rows, set_settings, worker_env)

# The workers' safety poll (JW_SAFETY_POLL, workers/jw.h): a lost wake-up is found by it only.
SAFETY_POLL = 30.0


def pg_only(srv):
    if srv.db_kind != "pgsql":
        pytest.skip("SQLite has no NOTIFY: its workers watch the database's files")


class Listener:
    """A psql session that LISTENs on the workers' channels, as journal-worker does."""

    def __init__(self, srv, channels=("journal_ai", "journal_photo")):
        cmd = [harness.pg_bindir() + "/psql", "-h", "127.0.0.1", "-p", harness.PG_PORT,
               "-U", "postgres", "-d", srv.pg_dbname, "-X", "-A", "-t", "-q"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.send("".join(f"LISTEN {c};\n" for c in channels) + "SELECT 'listening';\n")
        line = self.proc.stdout.readline()
        assert line.strip() == "listening", line

    def send(self, text):
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def received(self, count=1, quiet=0.5, timeout=15.0):
        """The channels of the notifications delivered (psql prints them after each command);
        ends the session. An httpd child's waker thread sends a commit's NOTIFY after the
        request has answered: so this waits until count notifications have come, then quiet
        seconds more for any that should not (count 0: only that), at most timeout."""
        got, deadline, settled = [], time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            self.send("SELECT 'tick';\n")
            while True:
                line = self.proc.stdout.readline()
                if not line or line.strip() == "tick":
                    break
                if line.startswith("Asynchronous notification"):
                    got.append(line.split('"')[1])
            if len(got) >= count:
                settled = settled or time.monotonic() + quiet
                if time.monotonic() >= settled:
                    break
            time.sleep(0.02)
        self.proc.communicate("\\q\n", timeout=30)
        return got

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def listener():
    made = []

    def make(srv):
        made.append(Listener(srv))
        return made[-1]
    yield make
    for li in made:
        li.close()


def test_notify_triggers_are_gone(server):
    """0015 drops the triggers that notified inside the writers' transactions (PostgreSQL);
    SQLite never had them, and both databases are at 0015."""
    assert rows(server, "SELECT COUNT(*) FROM schema_migrations WHERE version = 15") == [["1"]]
    if server.db_kind == "pgsql":
        assert rows(server, "SELECT tgname FROM pg_trigger WHERE tgname LIKE '%notify%'") == []
        assert rows(server, "SELECT proname FROM pg_proc WHERE proname LIKE '%jobs_notify'") == []
    else:
        assert rows(server, "SELECT name FROM sqlite_master WHERE type = 'trigger'"
                            " AND name LIKE '%notify%'") == []


def test_every_writer_of_a_job_notifies_after_commit(fresh_server, listener):
    """An entry with its check, a lesson report, a recheck, a photo job, a requeue and the wake
    operations each send the NOTIFY of their queue; a write that queues nothing sends none."""
    srv = fresh_server()
    pg_only(srv)
    set_settings(srv, lesson_ai_enabled="true")
    g = new_group(srv)
    cases = [
        ("entry", lambda: new_entry(srv, g["id"], f"wake {uniq('e')}"), ["journal_ai"]),
        ("report", lambda: new_report(srv, g["id"], f"wake {uniq('r')}", "2026-03-02"),
         ["journal_ai"]),
        ("ai wake", lambda: api(srv, "POST", "/api/ai/wake", status=200), ["journal_ai"]),
        ("ai requeue", lambda: api(srv, "POST", "/api/ai/requeue-failed", status=200),
         ["journal_ai"]),
        ("photo wake", lambda: api(srv, "POST", "/api/photo-jobs/wake", status=200),
         ["journal_photo"]),
        ("a group, no job", lambda: new_group(srv), []),
    ]
    e = new_entry(srv, g["id"], f"recheck {uniq('e')}")
    cases.append(("recheck", lambda: api(srv, "POST", f"/api/entries/{e['id']}/ai/recheck"),
                  None))
    photo = entry_with_photo(srv, jpeg(40, 30), group=g)
    cases.append(("photo job", lambda: assert_status(enhance(srv, photo["id"], ai=False), 202),
                  ["journal_photo"]))
    for name, action, want in cases:
        li = listener(srv)
        action()
        got = li.received(count=1 if want else 0)
        if want is None:  # a recheck of a job still open queues nothing new, or one job
            assert got in ([], ["journal_ai"]), (name, got)
        else:
            assert got == want, (name, got)


def assert_status(r, status):
    assert r.status_code == status, r.text
    return r


def test_notification_follows_the_commit(server, listener):
    """When the notification arrives, the job it announces is committed and visible."""
    srv = server
    pg_only(srv)
    g = new_group(srv)
    li = listener(srv)
    e = new_entry(srv, g["id"], f"visible {uniq('v')}")
    assert li.received() == ["journal_ai"]
    assert rows(srv, f"SELECT status FROM ai_jobs WHERE entity_type = 'entry'"
                     f" AND entity_id = {e['id']}") == [["pending"]]


def test_the_childs_waker_sends_the_notify_not_the_request(fresh_server, listener):
    """In httpd a commit hands the channels it woke to its child's waker thread (mj_waker.c),
    which sends the NOTIFY: the request runs none of its own (JR12140 lists the statements of
    each request by its id; the waker's lines have none), and the notification arrives."""
    srv = fresh_server("LogLevel warn journal:debug\n")
    pg_only(srv)
    g = new_group(srv)
    key = srv.create_api_key(["read", "write"], 10000)
    li = listener(srv)
    r = srv.api("POST", "/api/v1/entries", headers={"X-Api-Key": key},
                json={"student_name": "W", "group_id": g["id"], "description": "waker"})
    assert r.status_code == 201, r.text
    assert li.received() == ["journal_ai"]
    log = srv.read_error_log()
    rid = re.escape(r.headers["X-Request-Id"])
    mine = re.findall(r"\[id " + rid + r"\s*\].*JR12140: statement (\w+)", log)
    assert "entry_insert" in mine and "signal_notify" not in mine, mine
    assert re.search(r"\[id -\s*\].*JR12140: statement signal_notify", log), log[-3000:]


def test_concurrent_posts_share_notifications_and_lose_none(server, listener):
    """64 checked POSTs from 16 threads: at least one notification, at most one per POST (the
    commits of a process share them), and the last one sent after the last commit."""
    srv = server
    pg_only(srv)
    g = new_group(srv)
    li = listener(srv)
    errors = []

    def post(n):
        for i in range(4):
            r = srv.api("POST", "/api/entries", token=srv.admin_token,
                        json={"student_name": "P", "group_id": g["id"],
                              "description": f"burst {n} {i}"})
            if r.status_code != 201:
                errors.append(r.text)
    threads = [threading.Thread(target=post, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    got = li.received()
    assert 1 <= len(got) <= 64 and set(got) == {"journal_ai"}, got
    print(f"64 concurrent POSTs: {len(got)} notifications")


def test_concurrent_posts_are_all_picked_up_at_once(worker_env):
    """16 parallel checked POSTs, three times with an idle worker in between: every job is
    done well before the safety poll could have found it, on both databases."""
    env = worker_env(concurrency=8)
    srv = env.srv
    g = new_group(srv)
    for rnd in range(3):
        time.sleep(0.5)  # the worker is idle: only a wake-up brings it back
        t0 = time.monotonic()
        made = []

        def post(n):
            made.append(new_entry(srv, g["id"], f"round {rnd} post {n} {uniq('c')}"))
        threads = [threading.Thread(target=post, args=(n,)) for n in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(made) == 16
        ids = ", ".join(str(e["id"]) for e in made)
        # From the last answer: every job exists then. The POSTs of the first round open the
        # children's connections, which under the sanitizers on a loaded machine took seconds
        # (the entries came one a second), and that is not the workers' wake-up.
        answered = time.monotonic()
        deadline = answered + SAFETY_POLL / 3
        while True:
            done = rows(srv, f"SELECT COUNT(*) FROM entries WHERE id IN ({ids})"
                             " AND ai_status = 'done'")[0][0]
            if done == "16" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        took, late = time.monotonic() - t0, time.monotonic() - answered
        assert done == "16", f"round {rnd}: {done} of 16 done {late:.1f} s after the last answer"
        print(f"round {rnd}: 16 checks done {took:.2f} s after the first POST, {late:.2f} s "
              "after the last answer")
