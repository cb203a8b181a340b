"""Support of the worker suites (test_worker_*.py): the fake LLM, journal-worker processes
started and supervised by a real httpd (and, for the standalone mode, started by the test from a
settings file), and direct database reads."""

import grp
import os
import pwd
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import requests

import harness
from harness import REPO, BUILD_DIR, Server, assert_json  # noqa: F401 (Server: the bench)

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

    def release(self):
        """Lets the requests marked [[hold]] go."""
        self.http.post(f"{self.base}/_release", timeout=30).raise_for_status()

    def release_when(self, pred):
        """Releases the held requests as soon as pred() is true (polled in a thread of its
        own); join() the returned thread, which raises what went wrong."""
        return _Releaser(self, pred)

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


class _Releaser(threading.Thread):
    def __init__(self, fake, pred):
        super().__init__(daemon=True)
        self.fake, self.pred, self.error = fake, pred, None
        self.start()

    def run(self):
        try:
            wait_for(self.pred, timeout=WAIT, interval=0.02, what="the moment to release")
            requests.post(f"{self.fake.base}/_release", timeout=30).raise_for_status()
        except Exception as e:  # reported by join()
            self.error = e

    def join(self, timeout=WAIT):
        super().join(timeout)
        assert not self.is_alive(), "the releasing thread did not end"
        if self.error:
            raise self.error


def messages(req):
    return {m["role"]: m["content"] for m in req["body"]["messages"]}


def user_message(req):
    body = req.get("body")
    return messages(req).get("user") if isinstance(body, dict) else None


# ---- the workers, standalone -----------------------------------------------------------------
def settings_text(srv, endpoint=None, key_file=None, timeout=3, concurrency=4, log_level="info"):
    """A settings file for srv's database, in the format of docs/worker.md, for a worker that
    runs without httpd (as the systemd unit runs it)."""
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
    """One journal-worker process started without httpd, run as the server's user, stderr to
    its own log."""

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

    def problems(self):
        return [line for line in self.output().splitlines() if harness.PROBLEM_RE.search(line)]


# ---- the workers httpd runs -------------------------------------------------------------------
def apache_k(srv, what):
    """apache2 -k WHAT on srv's configuration (graceful, restart, ...)."""
    proc = subprocess.run([harness.APACHE, "-d", str(srv.root), "-f", str(srv.conf_file),
                           "-k", what], capture_output=True, text=True,
                          env=harness.apache_env(), timeout=60)
    assert proc.returncode == 0, f"apache2 -k {what}: {proc.stdout}{proc.stderr}"


def parse_settings(text):
    """A settings file as {name: value}, read as docs/worker.md says the worker reads it."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, value = line.partition("=")
        out[name.strip()] = value.strip()
    return out


def cmdline(pid):
    """The arguments of a process ([] when it is gone or a zombie)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode() for a in f.read().split(b"\0")[:-1]]
    except OSError:
        return []


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def started_at(pid):
    """When a process started, in time.time() seconds (to the clock tick)."""
    with open(f"/proc/{pid}/stat") as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    since_boot = ticks / os.sysconf("SC_CLK_TCK")
    return time.time() - time.clock_gettime(time.CLOCK_BOOTTIME) + since_boot


def health(srv):
    return assert_json(srv.api("GET", "/api/health"), 200)


class WorkerEnv:
    """A server whose httpd starts and supervises journal-worker processes (the build's
    program, named by JournalWorkerPath), with the Journal* directives pointing them at the
    fake LLM.

    key: the bearer key written to a key file (None: no key file). endpoint=False leaves AI
    unconfigured. log_level: the journal module's LogLevel, which the workers follow (at info
    they log their starts, stops and outcomes). Their output is httpd's error log, which the
    harness checks: error lines a test expects are allowed by their tag (`allow`)."""

    def __init__(self, srv, fake, key=None, timeout=3, concurrency=4, endpoint=True,
                 log_level="info"):
        self.srv = srv
        self.fake = fake
        self.key = key
        self.timeout = timeout
        self.concurrency = concurrency
        self.log_level = log_level
        self.endpoint = fake.endpoint if endpoint else None
        # A name with a space and a '#': the settings file carries it to the end of its line.
        self.key_file = write_private(srv.root / "ai key #1", key + "\n") if key else None
        self.config = srv.run_dir / "journal-worker.conf"  # written by httpd
        self.n = 0
        self.starts = 0  # worker processes that must have logged their start (JR06001)
        self.killed = 0  # ... of which this many were killed with SIGKILL
        self.logs_starts = log_level in ("info", "debug")  # JR06001 and JR06005 are info

    def directives(self, n):
        """The module's directives that make httpd run n workers."""
        lines = [f'JournalWorkerPath "{WORKER_BIN}"', f"JournalWorkerProcesses {n}",
                 f"JournalAITimeout {self.timeout}", f"JournalAIConcurrency {self.concurrency}",
                 f"LogLevel warn journal:{self.log_level}"]
        if self.endpoint:
            lines += [f"JournalAIEndpoint {self.endpoint}", f"JournalAIModel {MODEL}"]
        if self.key_file:
            lines.append(f'JournalAIKeyFile "{self.key_file}"')
        return "\n".join(lines) + "\n"

    def allow(self, *tags):
        """Error lines of these tags (of a worker or of httpd) are expected: exact tags only."""
        for tag in tags:
            assert re.fullmatch(r"JR\d{5}", tag), tag
            self.srv.allowed_log_patterns.append(rf"\] {tag}: |^\[error\] {tag}: ")

    def start(self, n=1, wait=True):
        """Starts the server, which starts n workers; waits until they work (wait)."""
        (self.srv.conf_d / "worker.conf").write_text(self.directives(n))
        self.n = n
        self.srv.start()
        if not wait:
            return None
        self.starts += n
        return self.wait_running()

    def pids(self):
        """Process ids of the workers running on this server's settings."""
        out = []
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            cmd = cmdline(d.name)
            if cmd and cmd[0] == str(WORKER_BIN) and str(self.config) in cmd:
                out.append(int(d.name))
        return out

    def log_count(self, text):
        return self.output().count(text)

    def wait_running(self, exclude=()):
        """Waits until this server's n workers run (none of `exclude`), children of httpd's
        parent, each past its start (every start logged JR06001), and /api/health counts
        them; returns their pids."""
        def ready():
            pids = [p for p in self.pids() if p not in exclude]
            if len(pids) != self.n or \
                    (self.logs_starts and self.log_count("JR06001:") < self.starts):
                return None
            if health(self.srv)["ai"]["workers_running"] != self.n:
                return None
            return pids

        pids = wait_for(ready, what=f"{self.n} worker(s) started by httpd")
        for p in pids:
            assert parent_of(p) == self.srv.pid, (p, parent_of(p), self.srv.pid)
        return pids

    def kill9(self, pid):
        """A worker killed mid-job: httpd starts another. Returns the new one's pid."""
        others = set(self.pids()) - {pid}
        os.kill(pid, signal.SIGKILL)
        self.killed += 1
        self.starts += 1
        [new] = [p for p in self.wait_running(exclude=(pid,)) if p not in others]
        return new

    def graceful(self):
        """apache2 -k graceful: httpd stops its workers (SIGTERM) and starts new ones with the
        configuration read again. Returns the new pids."""
        old = set(self.pids())
        apache_k(self.srv, "graceful")
        self.starts += self.n
        return self.wait_running(exclude=old)

    def stop(self):
        """Stops httpd, which stops its workers: each finishes or gives back its jobs in flight
        and exits on its own within the supervisor's 5 s (no JR00103)."""
        self.srv.stop()
        assert not self.pids(), "workers outlived httpd"
        self.check_stops()

    def check_stops(self):
        log = self.output()
        assert "JR00103" not in log, "a worker had to be killed:\n" + log
        if not self.logs_starts:
            return
        started, stopped = log.count("JR06001:"), log.count("JR06005:")
        assert stopped == started - self.killed, \
            f"{started} workers started, {self.killed} killed, {stopped} stopped:\n{log}"

    def output(self):
        return self.srv.read_error_log()

    def finish(self):
        if self.srv.started:
            self.stop()
        else:
            self.check_stops()


@pytest.fixture
def fake_llm():
    fake = FakeLLM()
    yield fake
    fake.stop()


@pytest.fixture
def worker_env(fresh_server, fake_llm):
    """A factory: worker_env(workers=1, extra_conf="", prepare=None, wait=True, key=None,
    timeout=3, concurrency=4, endpoint=True, log_level="info") -> a started WorkerEnv on a
    fresh server of its own. prepare(srv) runs before the server starts; wait=False does not
    wait for the workers to work. At the end, httpd is stopped and every worker must have
    stopped cleanly."""
    envs = []

    def make(workers=1, extra_conf="", prepare=None, wait=True, **kwargs):
        srv = fresh_server(extra_conf=extra_conf, start=False)
        if prepare:
            prepare(srv)
        env = WorkerEnv(srv, fake_llm, **kwargs)
        envs.append(env)
        env.start(workers, wait)
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
