"""Support of the worker suites (test_worker_*.py): the fake LLM, journal-worker processes next
to a real httpd, and direct database reads.

Until httpd supervises the workers itself, the suites start `journal-worker --config FILE`
next to the server, with a settings file written from the server's database settings (the
format httpd writes). HTTPD_STARTS_WORKERS switches to workers started by httpd from the
Journal* directives; `WorkerEnv` hides the difference from the tests.
"""

import grp
import os
import pwd
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import requests

import harness
from harness import REPO, BUILD_DIR, Server, assert_json  # noqa: F401 (Server: the bench)

HTTPD_STARTS_WORKERS = False

WORKER_BIN = BUILD_DIR / "journal-worker"
FAKE_LLM = REPO / "tests" / "fakes" / "fake_llm.py"
MODEL = "fake-model-1"
WAIT = 60.0  # generous: the machine is shared


def _owner():
    """uid, gid the server runs as (and the worker with it)."""
    if harness.IS_ROOT:
        return pwd.getpwnam("www-data").pw_uid, grp.getgrnam("www-data").gr_gid
    return os.getuid(), os.getgid()


def write_private(path, text):
    """A file only the server's user can read (mode 0600), like the module's settings file."""
    path = Path(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)
    uid, gid = _owner()
    if harness.IS_ROOT:
        os.chown(path, uid, gid)
    return path


def wait_for(pred, timeout=WAIT, interval=0.05, what="condition"):
    """Polls pred() until it returns a true value, which is returned."""
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


# ---- the fake LLM ---------------------------------------------------------------------------
class FakeLLM:
    """tests/fakes/fake_llm.py in its own process."""

    def __init__(self, latency_ms=0):
        self.dir = Path(tempfile.mkdtemp(prefix="jr-fake-llm-"))
        port_file = self.dir / "port"
        cmd = [sys.executable, str(FAKE_LLM), "--port-file", str(port_file)]
        if latency_ms:
            cmd += ["--latency", str(latency_ms)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for(lambda: port_file.exists() or self.proc.poll() is not None, 20,
                 what="the fake LLM")
        if self.proc.poll() is not None:
            raise RuntimeError(f"fake LLM exited: {self.proc.stderr.read().decode()}")
        self.port = int(port_file.read_text())
        self.base = f"http://127.0.0.1:{self.port}"
        self.endpoint = self.base + "/v1"
        self.http = requests.Session()

    def requests(self, since=0):
        return self.http.get(f"{self.base}/_requests", params={"since": since}, timeout=30).json()

    def counts(self):
        return self.http.get(f"{self.base}/_counts", timeout=30).json()

    def count(self, text):
        return self.counts().get(text, 0)

    def for_text(self, text):
        """The requests whose user message is text."""
        return [r for r in self.requests() if user_message(r) == text]

    def stop(self):
        self.http.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        for p in self.dir.iterdir():
            p.unlink()
        self.dir.rmdir()


def messages(req):
    return {m["role"]: m["content"] for m in req["body"]["messages"]}


def user_message(req):
    body = req.get("body")
    return messages(req).get("user") if isinstance(body, dict) else None


# ---- the workers ------------------------------------------------------------------------------
def settings_text(srv, endpoint=None, key_file=None, timeout=3, concurrency=4, log_level="info"):
    """The settings file for srv's database, in the format of docs/worker.md."""
    lines = ["# written by the worker test suite",
             f"db_driver = {srv.dbd_driver}", f"db_params = {srv.dbd_params}",
             f"data_dir = {srv.data_dir}", f"runtime_dir = {srv.run_dir}",
             f"log_level = {log_level}", f"ai_timeout = {timeout}",
             f"ai_concurrency = {concurrency}"]
    if endpoint:
        lines += [f"ai_endpoint = {endpoint}", f"ai_model = {MODEL}"]
    if key_file:
        lines.append(f"ai_key_file = {key_file}")
    return "\n".join(lines) + "\n"


class Worker:
    """One journal-worker process, run as the server's user, stderr to its own log."""

    def __init__(self, config, log_path, instance=0):
        self.config = Path(config)
        self.log_path = Path(log_path)
        self.instance = instance
        self.proc = None

    def start(self):
        uid, gid = _owner()
        log = open(self.log_path, "ab")
        kwargs = {}
        if harness.IS_ROOT:
            kwargs = {"user": uid, "group": gid, "extra_groups": []}
        self.proc = subprocess.Popen(
            [str(WORKER_BIN), "--config", str(self.config), "--instance", str(self.instance)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=harness.apache_env(),
            **kwargs)
        log.close()
        return self

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=15):
        """SIGTERM; returns (exit status, seconds it took)."""
        if not self.alive():
            return (self.proc.returncode if self.proc else None), 0.0
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError(f"worker {self.pid} ignored SIGTERM for {timeout}s")
        return rc, time.monotonic() - t0

    def kill9(self):
        self.proc.kill()
        self.proc.wait(10)

    def output(self):
        try:
            return self.log_path.read_bytes().decode("utf-8", "replace")
        except OSError:
            return ""


class WorkerEnv:
    """A server, the fake LLM and the workers of one test.

    key: the bearer key written to a key file (None: no key file). endpoint=False leaves AI
    unconfigured. The workers log at info level; `problems()` lists their error lines that
    match none of `allowed` (regexes)."""

    def __init__(self, srv, fake, key=None, timeout=3, concurrency=4, endpoint=True):
        self.srv = srv
        self.fake = fake
        self.key = key
        self.timeout = timeout
        self.concurrency = concurrency
        self.endpoint = fake.endpoint if endpoint else None
        self.key_file = write_private(srv.root / "ai.key", key + "\n") if key else None
        self.config = write_private(
            srv.run_dir / "journal-worker.conf",
            settings_text(srv, self.endpoint, self.key_file, timeout, concurrency))
        self.workers = []
        self.allowed = []

    def directives(self, n):
        """The module's directives that make httpd run n workers like ours."""
        lines = [f"JournalWorkerProcesses {n}", f"JournalAITimeout {self.timeout}",
                 f"JournalAIConcurrency {self.concurrency}"]
        if self.endpoint:
            lines += [f"JournalAIEndpoint {self.endpoint}", f"JournalAIModel {MODEL}"]
        if self.key_file:
            lines.append(f"JournalAIKeyFile {self.key_file}")
        return "\n".join(lines) + "\n"

    def start(self, n=1):
        """Starts the server with n workers."""
        if HTTPD_STARTS_WORKERS:
            (self.srv.conf_d / "worker.conf").write_text(self.directives(n))
            self.srv.start()
            wait_for(lambda: len(self.pids()) >= n, what=f"{n} workers started by httpd")
            return
        self.srv.start()
        for _ in range(n):
            self.start_worker()
        time.sleep(0.2)
        for w in self.workers:
            assert w.alive(), f"worker exited: {w.output()}"

    def start_worker(self):
        i = len(self.workers)
        w = Worker(self.config, self.srv.log_dir / f"worker-{i}.log", i).start()
        self.workers.append(w)
        return w

    def pids(self):
        """Process ids of the workers running on this server's settings."""
        out = []
        for d in Path("/proc").iterdir():
            try:
                cmd = (d / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if cmd and cmd[0] == str(WORKER_BIN).encode() and \
                    any(str(self.srv.root).encode() in a for a in cmd):
                out.append(int(d.name))
        return out

    def kill9(self, pid):
        """A worker killed mid-job; the supervisor (httpd, or this test) starts another."""
        os.kill(pid, signal.SIGKILL)
        for w in self.workers:
            if w.alive() and w.pid == pid:
                w.proc.wait(10)
        if not HTTPD_STARTS_WORKERS:
            self.start_worker()

    def stop_workers(self):
        """Stops every worker with SIGTERM: each must exit 0. [(status, seconds)]."""
        results = [w.stop() for w in self.workers if w.alive()]
        for rc, took in results:
            assert rc == 0, f"worker exited {rc} on SIGTERM:\n{self.output()}"
        return results

    def output(self):
        if HTTPD_STARTS_WORKERS:
            return self.srv.read_error_log()
        return "".join(w.output() for w in self.workers)

    def problems(self):
        import re
        allowed = [re.compile(p) for p in self.allowed]
        bad = re.compile(r"^\[error\]|AddressSanitizer|LeakSanitizer|runtime error:")
        return [line for line in self.output().splitlines()
                if bad.search(line) and not any(p.search(line) for p in allowed)]

    def finish(self):
        try:
            self.stop_workers()
        finally:
            for w in self.workers:
                if w.alive():
                    w.kill9()
        problems = self.problems()
        assert not problems, "unexpected errors of the workers:\n  " + "\n  ".join(problems)


@pytest.fixture
def fake_llm():
    fake = FakeLLM()
    yield fake
    fake.stop()


@pytest.fixture
def worker_env(fresh_server, fake_llm):
    """A factory: worker_env(workers=1, extra_conf="", key=None, timeout=3, concurrency=4,
    endpoint=True) -> a started WorkerEnv on a fresh server of its own."""
    envs = []

    def make(workers=1, extra_conf="", **kwargs):
        srv = fresh_server(extra_conf=extra_conf, start=False)
        env = WorkerEnv(srv, fake_llm, **kwargs)
        envs.append(env)
        env.start(workers)
        return env

    yield make
    errors = []
    for env in envs:
        try:
            env.finish()
        except AssertionError as e:
            errors.append(str(e))
    if errors:
        pytest.fail("\n".join(errors), pytrace=False)


# ---- the database, read directly ------------------------------------------------------------
def rows(srv, query):
    """Rows of a query as lists of strings (None for NULL), on either database."""
    if srv.db_kind == "sqlite":
        con = sqlite3.connect(str(srv.db_path), timeout=30)
        try:
            return [[None if v is None else str(v) for v in r] for r in con.execute(query)]
        finally:
            con.close()
    out = harness.pg_run("psql", "-d", srv.pg_dbname, "-X", "-A", "-t", "-F", "\x1f",
                         "-P", "null=\x1e", "-v", "ON_ERROR_STOP=1", "-c", query).stdout
    return [[None if v == "\x1e" else v for v in line.split("\x1f")]
            for line in out.split("\n") if line]


def execute(srv, *statements):
    """Runs statements in one transaction (the queue suite's helper)."""
    from test_queues_stats import sql_exec
    sql_exec(srv, *statements)


def job(srv, entity_type, entity_id):
    """The newest ai_jobs row of a record as a dict."""
    cols = ["id", "status", "attempts", "last_error", "lease_owner", "lease_until", "run_after",
            "text_hash"]
    r = rows(srv, f"SELECT {', '.join(cols)} FROM ai_jobs WHERE entity_type = '{entity_type}'"
                  f" AND entity_id = {entity_id} ORDER BY id DESC LIMIT 1")
    return dict(zip(cols, r[0])) if r else None


def events(srv, entity_type, entity_id):
    """(type, payload) of the events of a record, oldest first."""
    import json
    return [(t, json.loads(p)) for t, p in
            rows(srv, f"SELECT type, payload FROM events WHERE entity_type = '{entity_type}'"
                      f" AND entity_id = {entity_id} ORDER BY id")]


# ---- the journal, through the API -------------------------------------------------------------
def api(srv, method, path, body=None, token=None, status=None):
    r = srv.api(method, path, token=token or srv.admin_token, json=body)
    return assert_json(r, status) if status else r


def set_settings(srv, **values):
    api(srv, "PUT", "/api/settings", values, status=200)


def new_group(srv):
    return srv.create_group(srv.create_branch()["id"])


def new_entry(srv, group_id, description, student="Ann"):
    return api(srv, "POST", "/api/entries",
               {"student_name": student, "group_id": group_id, "description": description},
               status=201)


def get_entry(srv, entry_id):
    return api(srv, "GET", f"/api/entries/{entry_id}", status=200)


def new_report(srv, group_id, text, lesson_date, topic=None):
    body = {"group_id": group_id, "lesson_date": lesson_date, "lesson_time": "10:00",
            "text": text}
    if topic is not None:
        body["topic"] = topic
    return api(srv, "POST", "/api/lesson-reports", body, status=201)


def get_report(srv, report_id):
    return api(srv, "GET", f"/api/lesson-reports/{report_id}", status=200)


def wait_status(getter, record_id, statuses, timeout=WAIT):
    """Waits until the record's ai_status is one of statuses; returns the record."""
    statuses = (statuses,) if isinstance(statuses, str) else statuses
    last = {}

    def check():
        last["r"] = getter(record_id)
        return last["r"] if last["r"]["ai_status"] in statuses else None

    try:
        return wait_for(check, timeout, 0.05, f"ai_status in {statuses}")
    except AssertionError:
        raise AssertionError(f"record {record_id} stayed {last['r']['ai_status']!r}: {last['r']}")
