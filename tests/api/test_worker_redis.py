"""journal-worker announces its events on Redis (docs/events.md, "Redis"): with JournalRedis,
httpd hands the address and the password file to the workers it runs (the settings file), and a
worker publishes on the channel the children subscribe to after it commits events, so the
streams get an AI check's outcome at once. A Redis that is down never stops a job. A real
redis-server (scripts/redis.sh); the channel is watched by a plain RESP client here."""

import functools
import socket
import subprocess
import threading
import time

import pytest

import harness
from harness import free_port, uniq
from test_stream_redis import CHANNEL, Redis
from worker_support import (  # noqa: F401 (fixtures)
    WORKER_BIN, fake_llm, get_entry, new_entry, new_group, parse_settings, rows, wait_for,
    wait_status, worker_env, write_private)


def resp(*args):
    out = f"*{len(args)}\r\n"
    for a in args:
        out += f"${len(a.encode())}\r\n{a}\r\n"
    return out.encode()


class Listener(threading.Thread):
    """SUBSCRIBE on the channel over a socket; each message is recorded with what on_message
    returned when it arrived."""

    def __init__(self, port, password=None, on_message=lambda: None):
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.file = self.sock.makefile("rb")
        self.on_message = on_message
        self.messages = []  # (monotonic time, payload, on_message())
        if password:
            self.sock.sendall(resp("AUTH", password))
            assert self.file.readline() == b"+OK\r\n"
        self.sock.sendall(resp("SUBSCRIBE", CHANNEL))
        assert self.read() == ["subscribe", CHANNEL, 1]
        self.sock.settimeout(None)
        self.start()

    def read(self):
        line = self.file.readline()
        if not line:
            raise EOFError
        kind, rest = line[:1], line[1:-2]
        if kind == b"*":
            return [self.read() for _ in range(int(rest))]
        if kind == b"$":
            data = self.file.read(int(rest) + 2)[:-2]
            return data.decode()
        if kind == b":":
            return int(rest)
        return rest.decode()

    def run(self):
        try:
            while True:
                msg = self.read()
                if msg[0] == "message":
                    self.messages.append((time.monotonic(), msg[2], self.on_message()))
        except (EOFError, OSError, ValueError):
            pass

    def quiet(self, seconds=1.0, timeout=20):
        """Waits until no message came for `seconds`; returns how many came."""
        deadline = time.monotonic() + timeout
        while True:
            n = len(self.messages)
            time.sleep(seconds)
            if len(self.messages) == n:
                return n
            assert time.monotonic() < deadline, "the channel never went quiet"

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.join(10)


class OpenRedis(Redis):
    """A redis-server without a password."""

    def __init__(self, tmp_path):
        super().__init__(tmp_path)
        self.pwfile, self.password = None, None

    def start(self):
        subprocess.run(["sh", str(harness.REPO / "scripts" / "redis.sh"), "start", str(self.dir),
                        str(self.port)], check=True, timeout=60)


def redis_conf(redis, srv):
    """JournalRedis (and the password in a file the server's User can read)."""
    lines = [f"JournalRedis 127.0.0.1:{redis.port}"]
    if redis.password:
        pw = write_private(srv.root / "redis password", redis.password + "\n")
        lines.append(f'JournalRedisPasswordFile "{pw}"')
    (srv.conf_d / "redis.conf").write_text("\n".join(lines) + "\n")


def entry_status(srv, entry_id):
    return rows(srv, f"SELECT ai_status FROM entries WHERE id = {entry_id}")[0][0]


@pytest.mark.parametrize("with_password", [True, False], ids=["password", "no-password"])
def test_worker_publishes_after_its_commit(worker_env, tmp_path, with_password):
    redis = Redis(tmp_path) if with_password else OpenRedis(tmp_path)
    redis.start()
    try:
        env = worker_env(prepare=functools.partial(redis_conf, redis))
        srv = env.srv
        settings = parse_settings(env.config.read_text())
        assert settings["redis"] == f"127.0.0.1:{redis.port}"
        assert ("redis_password_file" in settings) == with_password
        g = new_group(srv)
        text = f"[[hold]] held {uniq('w')}"
        holder = {}
        listener = Listener(redis.port, redis.password,
                            lambda: entry_status(srv, holder["id"]) if holder else None)
        try:
            e = new_entry(srv, g["id"], text)  # the child that served it publishes
            holder["id"] = e["id"]
            wait_for(lambda: env.fake.for_text(text), what="the check at the fake LLM")
            before = listener.quiet()
            assert before >= 1  # the write request's own wake-up
            env.fake.release()
            wait_status(functools.partial(get_entry, srv), e["id"], "done")
            # Nothing but the worker writes now (reads publish nothing): a message after the
            # release is the worker's, sent once its outcome was committed.
            wait_for(lambda: len(listener.messages) > before, timeout=20,
                     what="the worker's message on the channel")
            _, payload, status = listener.messages[before]
            assert status == "done", listener.messages
            assert payload == "1"
        finally:
            listener.close()
        log = env.output()
        assert "JR09050" not in log
        if with_password:
            assert redis.password not in log
    finally:
        redis.stop()


def test_redis_down_does_not_stop_jobs(worker_env, tmp_path):
    redis = Redis(tmp_path)  # not started: nothing listens on its port
    env = worker_env(prepare=functools.partial(redis_conf, redis))
    srv = env.srv
    env.allow("JR09004")  # httpd's children cannot subscribe either
    g = new_group(srv)
    for i in range(3):
        e = new_entry(srv, g["id"], f"checked while Redis is down {i} {uniq('d')}")
        wait_status(functools.partial(get_entry, srv), e["id"], "done", timeout=30)
    assert env.log_count("JR09050:") == 1, env.output()  # once per outage
    assert "JR09051" not in env.output()
    assert redis.password not in env.output()

    # Redis comes back: the worker publishes again once its back-off ends
    redis.start()
    try:
        listener = Listener(redis.port, redis.password)
        try:
            deadline = time.monotonic() + 90
            while not listener.messages or env.log_count("JR09051:") == 0:
                assert time.monotonic() < deadline, env.output()
                e = new_entry(srv, g["id"], f"checked after Redis came back {uniq('b')}")
                wait_status(functools.partial(get_entry, srv), e["id"], "done", timeout=30)
                time.sleep(1)
        finally:
            listener.close()
        assert env.log_count("JR09050:") == 1
        assert env.log_count("JR09051:") == 1
    finally:
        redis.stop()


@pytest.mark.skipif(not harness.IS_ROOT, reason="the server's User differs from root only "
                                               "when httpd starts as root")
def test_password_file_must_be_readable_by_the_user(fresh_server, tmp_path):
    # tmp_path is root's alone (mode 0700): httpd can read the file, its workers could not
    pw = tmp_path / "redis.pw"
    pw.write_text("secret\n")
    conf = (f'JournalWorkerPath "{WORKER_BIN}"\nJournalRedis 127.0.0.1:{free_port()}\n'
            f'JournalRedisPasswordFile "{pw}"\n')
    srv = fresh_server(conf, start=False)
    proc = srv.config_test()
    assert proc.returncode != 0
    assert "JR09052" in proc.stderr + proc.stdout
    assert "JournalRedisPasswordFile" in proc.stderr + proc.stdout
    # without the workers (or with no program to run) httpd alone reads it, as root
    srv2 = fresh_server(conf + "JournalWorker Off\n", start=False)
    proc = srv2.config_test()
    assert proc.returncode == 0, proc.stderr + proc.stdout
