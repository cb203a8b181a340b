"""httpd supervises the journal-worker processes: started after the configuration is read (never
under `apache2 -t`), as the server's User with a private settings file, restarted with a growing
delay when they end, stopped when httpd stops, replaced on a restart. A stand-in program
(tests/fakes/stand_in_worker.py) plays the worker and records what it was given.

Also: the worker and AI directives at configuration time, and what /api/health and
/api/ai/status say about AI and the workers."""

import datetime
import grp
import json
import os
import pwd
import re
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

import harness
from harness import APACHE, IS_ROOT, apache_env, assert_json
from worker_support import apache_k, parse_settings

STAND_IN = harness.REPO / "tests" / "fakes" / "stand_in_worker.py"
SETTINGS_NAMES = {"db_driver", "db_params", "data_dir", "runtime_dir", "ai_endpoint", "ai_model",
                  "ai_key_file", "ai_timeout", "ai_concurrency", "log_level",
                  "photo_ai_timeout_ms", "photo_upscale_timeout_ms", "photo_max_size"}
WAIT = 30.0  # generous: the machine may be busy


class StandIn:
    """The stand-in worker of one server: a wrapper script that JournalWorkerPath names, and
    the directory where each started process leaves its record."""

    def __init__(self, srv, mode="run"):
        self.srv = srv
        self.records = srv.root / f"records-{mode}"
        self.records.mkdir()
        os.chmod(self.records, 0o755)
        if IS_ROOT:
            os.chown(self.records, pwd.getpwnam(srv.user).pw_uid, grp.getgrnam(srv.group).gr_gid)
        self.path = srv.root / f"worker-{mode}"
        self.path.write_text(f'#!/bin/sh\nexec /usr/bin/python3 "{STAND_IN}" '
                             f'--record "{self.records}" --mode {mode} "$@"\n')
        os.chmod(self.path, 0o755)
        self.settings_path = srv.run_dir / "journal-worker.conf"

    def configure(self, extra=""):
        """(Re)writes the server's worker configuration: this stand-in plus `extra`."""
        (self.srv.conf_d / "worker.conf").write_text(
            f'JournalWorkerPath "{self.path}"\n{extra}\n')

    def all(self):
        out = []
        for f in sorted(self.records.glob("*.json")):
            out.append(json.loads(f.read_text()))
        return sorted(out, key=lambda r: r["started"])

    def exited(self, pid):
        return (self.records / f"{pid}.exit").exists()

    def wait(self, pred, what, timeout=WAIT):
        deadline = time.monotonic() + timeout
        while True:
            recs = self.all()
            if pred(recs):
                return recs
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; records: {recs}\n"
                                     f"--- error.log ---\n{self.srv.read_error_log()}")
            time.sleep(0.1)

    def wait_count(self, n, timeout=WAIT):
        return self.wait(lambda r: len(r) >= n, f"{n} worker start(s)", timeout)


def worker_args(rec):
    """The arguments httpd gave (after the wrapper's own)."""
    argv = rec["argv"]
    return argv[argv.index("--config"):]


def gone(pid):
    """No such process, not even a zombie (so httpd reaped it)."""
    return not os.path.exists(f"/proc/{pid}")


def wait_gone(pids, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while not all(gone(p) for p in pids):
        assert time.monotonic() < deadline, f"still there: {[p for p in pids if not gone(p)]}"
        time.sleep(0.05)


def ai_status(srv):
    return assert_json(srv.api("GET", "/api/ai/status", token=srv.admin_token), 200)


def health(srv):
    return assert_json(srv.api("GET", "/api/health"), 200)


def wait_status(srv, pred, what, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while True:
        body = ai_status(srv)
        if pred(body):
            return body
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {body}"
        time.sleep(0.1)


def server_ids(srv):
    if IS_ROOT:
        return pwd.getpwnam(srv.user).pw_uid, grp.getgrnam(srv.group).gr_gid
    return os.getuid(), os.getgid()


def make_key_file(srv, readable=True):
    key = "sk-secret-" + uuid.uuid4().hex
    path = srv.root / "ai.key"
    path.write_text(key + "\n")
    os.chmod(path, 0o600)
    if IS_ROOT and readable:
        os.chown(path, *server_ids(srv))
    return path, key


@pytest.fixture
def new_server(fresh_server):
    """A stopped fresh server and its stand-in: (srv, stand_in). When the test ends, the server
    is stopped and any worker that outlived it is killed (and fails the test)."""
    made = []

    def make(mode="run"):
        srv = fresh_server(start=False)
        made.append((srv, StandIn(srv, mode)))
        return made[-1]

    yield make
    survivors = []
    for srv, w in made:
        try:
            srv.stop()
        finally:
            for r in w.all():
                if not gone(r["pid"]) and harness._pid_alive(r["pid"]):
                    survivors.append(r["pid"])
                    os.kill(r["pid"], signal.SIGKILL)
    assert not survivors, f"workers outlived httpd: {survivors}"


# ---- start, identity, settings file ---------------------------------------------------------
def test_workers_start_as_user_with_private_settings(new_server):
    srv, w = new_server()
    key_path, key = make_key_file(srv)
    w.configure("JournalWorkerProcesses 2\n"
                "JournalAIEndpoint http://127.0.0.1:9/v1/\n"
                "JournalAIModel test-model:8b\n"
                f'JournalAIKeyFile "{key_path}"\n'
                "JournalAITimeout 2m\n"
                "JournalAIConcurrency 7\n")
    srv.start()
    recs = w.wait_count(2)
    time.sleep(0.5)
    recs = w.all()
    assert len(recs) == 2, recs  # exactly the configured number
    assert sorted(r["instance"] for r in recs) == [1, 2]
    uid, gid = server_ids(srv)
    for r in recs:
        assert r["ppid"] == srv.pid, r  # a child of httpd's parent
        assert (r["uid"], r["gid"]) == (uid, gid), r
        if IS_ROOT:
            assert 0 not in r["groups"], r  # root's supplementary groups were dropped
        assert r["stdin"] == "/dev/null", r
        assert worker_args(r) == ["--config", str(w.settings_path), "--instance",
                                  str(r["instance"])], r
        assert key not in " ".join(r["argv"])
        st = r["settings"]
        assert "error" not in st, st
        assert st["mode"] == 0o600 and (st["uid"], st["gid"]) == (uid, gid), st
        settings = parse_settings(st["text"])
        assert set(settings) == SETTINGS_NAMES, settings
        assert settings == {
            "db_driver": srv.dbd_driver, "db_params": srv.dbd_params,
            "data_dir": str(srv.data_dir), "runtime_dir": str(srv.run_dir),
            "ai_endpoint": "http://127.0.0.1:9/v1", "ai_model": "test-model:8b",
            "ai_key_file": str(key_path), "ai_timeout": "120", "ai_concurrency": "7",
            "log_level": "warn", "photo_ai_timeout_ms": "600000",
            "photo_upscale_timeout_ms": "120000", "photo_max_size": str(20 * 1024 * 1024)}
        assert key not in st["text"]
    # The file on disk, while they run.
    info = os.stat(w.settings_path)
    assert info.st_mode & 0o777 == 0o600 and (info.st_uid, info.st_gid) == (uid, gid)
    assert not [p for p in srv.run_dir.iterdir() if p.name.startswith("journal-worker.conf.")]
    # Their standard error is httpd's error log.
    log = srv.read_error_log()
    for r in recs:
        assert f"stand-in worker {r['instance']} (pid {r['pid']}) started" in log

    status = ai_status(srv)
    assert status["configured"] is True and status["model"] == "test-model:8b"
    assert status["workers"] == {"supervised": True, "processes": 2, "running": 2,
                                 "restarts": 0, "binary": True}, status
    for name in ("pending", "processing", "done", "failed"):
        assert isinstance(status[name], int)
    h = health(srv)
    assert h["ai"] == {"configured": True, "workers_running": 2}, h
    for text in (json.dumps(status), json.dumps(h)):
        assert key not in text and "127.0.0.1:9" not in text and str(key_path) not in text
    srv.stop()
    assert key not in srv.read_error_log()


def test_config_test_and_dumps_start_no_worker(new_server):
    srv, w = new_server()
    w.configure("JournalWorkerProcesses 3")
    for extra in ([], ["-D", "DUMP_RUN_CFG"], ["-S"]):
        proc = subprocess.run([APACHE, "-t", *extra, "-d", str(srv.root), "-f",
                               str(srv.conf_file)], capture_output=True, text=True,
                              env=apache_env(), timeout=60)
        assert proc.returncode == 0, f"apache2 -t {extra}: {proc.stdout}{proc.stderr}"
    time.sleep(2)  # a process started by mistake would have written its record by now
    assert w.all() == []
    assert not w.settings_path.exists()


# ---- restarts and back-off ------------------------------------------------------------------
def test_killed_worker_is_restarted(new_server):
    srv, w = new_server()
    w.configure()
    srv.start()
    first = w.wait_count(1)[0]
    os.kill(first["pid"], signal.SIGKILL)
    recs = w.wait_count(2)
    second = recs[1]
    assert second["pid"] != first["pid"] and second["ppid"] == srv.pid
    # Started again with the first back-off delay, which the new process waits out itself.
    assert worker_args(second) == ["--config", str(w.settings_path), "--instance", "1",
                                   "--delay", "1"], second
    wait_gone([first["pid"]])  # reaped by httpd, no zombie
    body = wait_status(srv, lambda b: b["workers"]["running"] == 1, "one running worker")
    assert body["workers"]["restarts"] == 1, body
    assert "JR00101" in srv.read_error_log()
    time.sleep(1.5)
    assert len(w.all()) == 2  # the new one keeps running: no further start


def test_crashing_worker_backs_off(new_server):
    srv, w = new_server("crash")
    w.configure()
    srv.start()
    recs = w.wait_count(4, timeout=60)
    delays = [r["delay"] for r in recs]
    assert delays[:4] == [0, 1, 2, 4], delays
    starts = [r["started"] for r in recs]
    for i in range(3):
        # The next process starts only after this one waited out its delay and exited.
        assert starts[i + 1] - starts[i] >= delays[i] - 0.05, (starts, delays)
    time.sleep(2)  # the fourth waits 4 s before it fails: no fifth start meanwhile
    assert len(w.all()) == 4, w.all()
    body = ai_status(srv)
    assert body["workers"]["restarts"] >= 3, body
    srv.stop()
    wait_gone([r["pid"] for r in w.all()])


def log_time(line):
    """The time of an httpd error log line, in seconds."""
    stamp = re.match(r"\[(\w{3} \w{3} \d+ [\d:.]+ \d{4})\]", line).group(1)
    return datetime.datetime.strptime(stamp, "%a %b %d %H:%M:%S.%f %Y").timestamp()


def test_program_that_cannot_be_executed_backs_off(fresh_server):
    # Nothing of it runs to wait out the delay: the child that failed to become it waits.
    srv = fresh_server(start=False)
    path = srv.root / "not-a-program"
    path.write_text("not a program\n")  # executable, but no format execv knows
    os.chmod(path, 0o755)
    (srv.conf_d / "worker.conf").write_text(f'JournalWorkerPath "{path}"\n')
    srv.start()
    # one JR00106 line per start: the fourth's comes from the child, just after the parent
    # said it starts it again in 4 s
    line = f"JR00106: journal-worker: cannot execute {path}: errno 8"
    deadline = time.monotonic() + WAIT
    while not ("starting it again in 4 s" in srv.read_error_log() and
               srv.read_error_log().count(line) == 4):
        assert time.monotonic() < deadline, srv.read_error_log()
        time.sleep(0.1)
    log = srv.read_error_log()
    again = {int(m.group(2)): log_time(m.group(1)) for m in re.finditer(
        r"^(.*JR00101: .*ended with status 127 .*starting it again in (\d+) s)$", log, re.M)}
    assert sorted(again) == [1, 2, 4], log
    assert again[2] - again[1] >= 1 - 0.05 and again[4] - again[2] >= 2 - 0.05, again
    assert health(srv)["ai"]["workers_running"] == 0


# ---- stop -----------------------------------------------------------------------------------
def test_stop_ends_every_worker(new_server):
    srv, w = new_server()
    w.configure("JournalWorkerProcesses 3")
    srv.start()
    recs = w.wait_count(3)
    pids = [r["pid"] for r in recs]
    srv.stop()
    wait_gone(pids, timeout=5)
    assert all(w.exited(p) for p in pids), "not every worker was asked to stop with SIGTERM"
    assert not w.settings_path.exists()  # it holds DBDParams
    assert "JR00120" not in srv.read_error_log()  # each exited 0


def test_stop_kills_a_worker_that_ignores_sigterm(new_server):
    srv, w = new_server("stubborn")
    w.configure("JournalWorkerProcesses 2")
    srv.start()
    pids = [r["pid"] for r in w.wait_count(2)]
    t0 = time.monotonic()
    srv.stop()
    elapsed = time.monotonic() - t0
    wait_gone(pids, timeout=5)
    assert 4.0 <= elapsed < 15.0, elapsed  # SIGTERM, 5 s of grace, then SIGKILL
    log = srv.read_error_log()
    for p in pids:
        assert f"(pid {p}) did not stop within 5 s" in log, log


@pytest.mark.parametrize("how", ["stop", "graceful"])
def test_worker_that_does_not_exit_0_on_sigterm_is_reported(new_server, how):
    # Its jobs in flight may not have been finished or given back: worth an error line.
    srv, w = new_server("failstop")
    w.configure()
    srv.start()
    [first] = w.wait_count(1)
    srv.allowed_log_patterns.append(r"\] JR00120: ")
    if how == "stop":
        srv.stop()
    else:
        apache_k(srv, "graceful")
        w.wait_count(2)
    wait_gone([first["pid"]])
    assert w.exited(first["pid"])
    log = srv.read_error_log()
    assert (f"JR00120: journal-worker 1 (pid {first['pid']}) exited with status 3 when asked "
            "to stop") in log, log


# ---- graceful restart and restart -----------------------------------------------------------
@pytest.mark.parametrize("how", ["graceful", "restart"])
def test_restart_replaces_workers_with_new_settings(new_server, how):
    srv, w = new_server()
    w.configure("JournalAIEndpoint http://127.0.0.1:9/v1\nJournalAIModel model-one")
    srv.start()
    old = w.wait_count(1)[0]
    assert parse_settings(old["settings"]["text"])["ai_model"] == "model-one"

    w.configure("JournalAIEndpoint http://127.0.0.1:9/v1\nJournalAIModel model-two\n"
                "JournalWorkerProcesses 2")
    # A hard restart stops the children at once: one holding an idle keep-alive connection
    # exits with the connection's allocator still in use (httpd's event MPM), which the leak
    # check of the sanitizer build reports. Connections are not what this test is about.
    srv.http.close()
    apache_k(srv, how)
    new = w.wait(lambda rs: len([r for r in rs if r["pid"] != old["pid"]]) >= 2,
                 "two new workers")
    new = [r for r in new if r["pid"] != old["pid"]]
    assert w.exited(old["pid"]), "the old worker was not stopped with SIGTERM"
    wait_gone([old["pid"]])
    for r in new:
        assert r["ppid"] == srv.pid
        assert parse_settings(r["settings"]["text"])["ai_model"] == "model-two"
        assert "--delay" not in worker_args(r)  # a fresh start, not a restart after a failure
    assert sorted(r["instance"] for r in new) == [1, 2]
    assert parse_settings(w.settings_path.read_text())["ai_model"] == "model-two"
    body = wait_status(srv, lambda b: b["model"] == "model-two" and b["workers"]["running"] == 2,
                       "the new configuration")
    assert body["workers"]["processes"] == 2 and body["workers"]["restarts"] == 0, body


# ---- off, missing program, not configured ---------------------------------------------------
def test_worker_off_starts_none(new_server):
    srv, w = new_server()
    w.configure("JournalWorker Off\nJournalWorkerProcesses 2")
    w.settings_path.write_text("db_params = left over\n")  # from an earlier run with On
    srv.start()
    time.sleep(2)
    assert w.all() == []
    assert not w.settings_path.exists()
    body = ai_status(srv)
    assert body["workers"] == {"supervised": False, "processes": 0, "running": None,
                               "restarts": 0, "binary": None}, body
    assert health(srv)["ai"] == {"configured": False, "workers_running": None}


def test_missing_program_is_reported_not_fatal(fresh_server):
    srv = fresh_server("JournalWorkerPath /nonexistent/journal-worker\n"
                       "JournalAIEndpoint http://127.0.0.1:9/v1\nJournalAIModel m")
    body = ai_status(srv)
    assert body["configured"] is True
    assert body["workers"] == {"supervised": True, "processes": 1, "running": 0,
                               "restarts": 0, "binary": False}, body
    assert health(srv)["ai"] == {"configured": True, "workers_running": 0}
    log = srv.read_error_log()
    assert "JR00100" in log and "/nonexistent/journal-worker" in log, log


def test_ai_not_configured_by_default(server):
    h = health(server)
    assert h["ai"]["configured"] is False, h
    body = ai_status(server)
    assert body["configured"] is False and body["model"] is None, body
    assert body["workers"]["supervised"] is True and body["workers"]["processes"] == 1, body
    for name in ("pending", "processing", "done", "failed"):
        assert isinstance(body[name], int), body


# ---- configuration checks ---------------------------------------------------------------------
def config_test(srv):
    """`apache2 -t`: (exit status, everything it printed)."""
    proc = srv.config_test()
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("line,directive", [
    ("JournalWorker maybe", "JournalWorker"),
    ("JournalWorkerProcesses 0", "JournalWorkerProcesses"),
    ("JournalWorkerProcesses 17", "JournalWorkerProcesses"),
    ("JournalWorkerProcesses two", "JournalWorkerProcesses"),
    ('JournalWorkerPath ""', "JournalWorkerPath"),
    ("JournalAIEndpoint ftp://127.0.0.1/v1\nJournalAIModel m", "JournalAIEndpoint"),
    ("JournalAIEndpoint 127.0.0.1:11434\nJournalAIModel m", "JournalAIEndpoint"),
    ("JournalAIEndpoint http:///v1\nJournalAIModel m", "JournalAIEndpoint"),
    ("JournalAIEndpoint http://127.0.0.1:11434/v1?x=1\nJournalAIModel m", "JournalAIEndpoint"),
    ("JournalAIEndpoint http://127.0.0.1:11434/v1#top\nJournalAIModel m", "JournalAIEndpoint"),
    ("JournalAIEndpoint http://127.0.0.1:11434/v1", "JournalAIModel"),  # a model is needed
    ('JournalAIModel "llama 3"', "JournalAIModel"),
    ('JournalAIModel ""', "JournalAIModel"),
    ("JournalAIKeyFile /nonexistent/ai.key", "JournalAIKeyFile"),
    ("JournalAITimeout 0", "JournalAITimeout"),
    ("JournalAITimeout 2h", "JournalAITimeout"),
    ("JournalAITimeout soon", "JournalAITimeout"),
    ("JournalAIConcurrency 0", "JournalAIConcurrency"),
    ("JournalAIConcurrency 257", "JournalAIConcurrency"),
    ("<VirtualHost 127.0.0.1:1>\nJournalWorker Off\n</VirtualHost>", "JournalWorker"),
    ("<VirtualHost 127.0.0.1:1>\nJournalAIModel m\n</VirtualHost>", "JournalAIModel"),
])
def test_invalid_worker_directive_fails_config_test(fresh_server, line, directive):
    rc, out = config_test(fresh_server(line, start=False))
    assert rc != 0, f"apache2 -t accepted {line!r}: {out}"
    assert directive in out, f"no mention of {directive} in: {out}"


def test_endpoint_credentials_refused_without_echo(fresh_server):
    rc, out = config_test(fresh_server(
        "JournalAIEndpoint http://user:s3cr3t-pw@127.0.0.1/v1\nJournalAIModel m", start=False))
    assert rc != 0 and "JournalAIEndpoint" in out and "JournalAIKeyFile" in out, out
    assert "s3cr3t-pw" not in out


@pytest.mark.skipif(not IS_ROOT, reason="needs root: the check opens the file as the User")
def test_key_file_unreadable_by_user_fails_config_test(fresh_server):
    srv = fresh_server(start=False)
    key_path, key = make_key_file(srv, readable=False)  # root's, mode 0600
    (srv.conf_d / "key.conf").write_text(f'JournalAIKeyFile "{key_path}"\n')
    rc, out = config_test(srv)
    assert rc != 0, out
    assert "JournalAIKeyFile" in out and "cannot be read by the server's User" in out, out
    assert key not in out
    os.chown(key_path, *server_ids(srv))
    rc, out = config_test(srv)
    assert rc == 0, out


@pytest.mark.parametrize("line", [
    "JournalWorker Off",
    "JournalWorker On\nJournalWorkerProcesses 16",
    "JournalWorkerPath bin/journal-worker",
    "JournalAIEndpoint https://api.example.com/v1\nJournalAIModel gpt-4o-mini",
    "JournalAIEndpoint HTTP://127.0.0.1:11434/v1/\nJournalAIModel llama3.1:8b",
    "JournalAITimeout 90s",
    "JournalAITimeout 1h",
    "JournalAIConcurrency 256",
])
def test_valid_worker_directive_passes_config_test(fresh_server, line):
    rc, out = config_test(fresh_server(line, start=False))
    assert rc == 0, f"apache2 -t refused {line!r}: {out}"
