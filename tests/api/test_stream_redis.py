"""Event wake-ups through Redis (JournalRedis, docs/events.md): every child subscribes with
the password of JournalRedisPasswordFile, a write publishes, the streams keep receiving
through the in-memory fallback while Redis is down, the children resubscribe by themselves
when it is back, and no event is lost or doubled. A real redis-server, started and stopped
here (scripts/redis.sh)."""

import subprocess
import time
import uuid

import pytest

import harness
from harness import assert_json, free_port
from worker_support import rows
from test_stream import Stream, entry_in, is_note_about, streams  # noqa: F401

CHANNEL = "mod_journal:events"


class Redis:
    def __init__(self, tmp_path):
        self.dir = tmp_path / "redis"
        self.port = free_port()
        self.password = "pw-" + uuid.uuid4().hex
        self.pwfile = tmp_path / "redis.pw"
        self.pwfile.write_text(self.password + "\n")

    def start(self):
        subprocess.run(["sh", str(harness.REPO / "scripts" / "redis.sh"), "start", str(self.dir),
                        str(self.port), str(self.pwfile)], check=True, timeout=60)

    def stop(self):
        subprocess.run(["sh", str(harness.REPO / "scripts" / "redis.sh"), "stop", str(self.dir)],
                       check=True, timeout=60)

    def cli(self, *args, **kw):
        return subprocess.run(["redis-cli", "-p", str(self.port), "--no-auth-warning", "-a",
                               self.password, *args], capture_output=True, text=True,
                              timeout=30, **kw)

    def subscribers(self):
        out = self.cli("PUBSUB", "NUMSUB", CHANNEL).stdout.split()
        return int(out[1]) if len(out) == 2 else -1

    def wait_subscribers(self, n, timeout=20):
        deadline = time.monotonic() + timeout
        while self.subscribers() != n:
            assert time.monotonic() < deadline, f"{self.subscribers()} subscribers, not {n}"
            time.sleep(0.2)


@pytest.fixture
def redis(tmp_path):
    r = Redis(tmp_path)
    r.start()
    yield r
    r.stop()


def conf(r):
    return f"JournalRedis 127.0.0.1:{r.port}\nJournalRedisPasswordFile {r.pwfile}"


def test_children_subscribe_and_writes_publish(fresh_server, redis):
    srv = fresh_server(conf(redis))
    redis.wait_subscribers(2)  # both children of the test profile
    listener = subprocess.Popen(["redis-cli", "-p", str(redis.port), "--no-auth-warning", "-a",
                                 redis.password, "SUBSCRIBE", CHANNEL],
                                stdout=subprocess.PIPE, text=True)
    try:
        redis.wait_subscribers(3)
        g = srv.create_group(srv.create_branch()["id"])
        entry_in(srv, g["id"])
        lines = []
        deadline = time.monotonic() + 10
        while "message" not in lines:
            assert time.monotonic() < deadline, lines
            lines.append(listener.stdout.readline().strip())
    finally:
        listener.kill()
        listener.wait()
    assert redis.password not in srv.read_error_log()


def test_redis_down_and_back(fresh_server, redis, streams):
    srv = fresh_server(conf(redis))
    srv.allowed_log_patterns.append(r"JR09004")
    redis.wait_subscribers(2)
    g = srv.create_group(srv.create_branch()["id"])
    s = streams(srv, token=srv.admin_token)
    ids = []
    entries = [entry_in(srv, g["id"])]
    ids += [m["id"] for m in s.until(is_note_about(entries[-1]["id"]))]
    redis.stop()
    for _ in range(3):  # delivered through the fallback while Redis is down
        entries.append(entry_in(srv, g["id"]))
        ids += [m["id"] for m in s.until(is_note_about(entries[-1]["id"]), timeout=10)]
    assert "JR09004" in srv.read_error_log()
    redis.start()
    redis.wait_subscribers(2)  # resubscribed by themselves
    for _ in range(2):
        entries.append(entry_in(srv, g["id"]))
        ids += [m["id"] for m in s.until(is_note_about(entries[-1]["id"]), timeout=10)]
    ids += [m["id"] for m in s.quiet(1.5)]
    assert len(ids) == len(set(ids)), "an event came twice"
    assert [int(i) for i in ids] == sorted(int(i) for i in ids)
    # nothing the outbox holds for this stream was skipped
    expected = [r[0] for r in rows(srv, "SELECT id FROM events WHERE type IN ('notification',"
                                        " 'ai_status', 'lesson_report_status')"
                                        f" AND id >= {ids[0]} AND id <= {ids[-1]} ORDER BY id")]
    assert ids == expected


@pytest.mark.parametrize("value", ["localhost", "host:0", "host:70000", "a b:1"])
def test_redis_directive_is_validated(fresh_server, value):
    srv = fresh_server(f"JournalRedis {value}", start=False)
    proc = srv.config_test()
    assert proc.returncode != 0 and "JournalRedis" in proc.stderr + proc.stdout


def test_password_file_must_exist(fresh_server, tmp_path):
    srv = fresh_server(f"JournalRedis 127.0.0.1:1\nJournalRedisPasswordFile {tmp_path}/none",
                       start=False)
    proc = srv.config_test()
    assert proc.returncode != 0 and "JournalRedisPasswordFile" in proc.stderr + proc.stdout
