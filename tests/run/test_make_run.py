"""`make run` (scripts/run.sh) from a fresh clone, as root.

A clone inside a mode-0700 directory (a home directory such as /root) is closed to www-data,
which the server's children and its journal-worker run as: the data directory and the worker
program must then live elsewhere, and the server must still work, AI checks included. Each
test clones the repository under test (its current commit), runs the script with the module
already built (BUILD_DIR), and removes everything it made.

Environment: JOURNAL_BUILD_DIR (default REPO/build) holds mod_journal.so, journal-admin and
journal-worker.
"""

import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
import requests

REPO = Path(__file__).resolve().parents[2]
BUILD_DIR = Path(os.environ.get("JOURNAL_BUILD_DIR") or REPO / "build").resolve()
DEV_BASE = Path("/var/lib/mod_journal-dev")
# Seconds between the last request's connection closing and stopping httpd (Clone.stop).
CLOSE_SETTLE = 0.05
PROBLEM_RE = re.compile(r":(?:error|crit|alert|emerg)\]|^\[error\] |exit signal|Segmentation")
FAKE_LLM = REPO / "tests" / "fakes" / "fake_llm.py"
START_TIMEOUT = 60.0

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="make run drops to www-data only when started as root")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def owner(path):
    return pwd.getpwuid(os.stat(path).st_uid).pw_name


class Clone:
    """A clone of the repository under test in its own directory (mode given), with a private
    copy of the build products."""

    def __init__(self, parent_mode):
        self.parent = Path(tempfile.mkdtemp(prefix="jr-run-"))
        os.chmod(self.parent, parent_mode)
        self.top = self.parent / "journal"
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
        subprocess.run(["git", "clone", "-q", "--no-checkout", str(REPO), str(self.top)],
                       check=True)
        subprocess.run(["git", "-C", str(self.top), "checkout", "-q", "--detach", head],
                       check=True)
        # A copy: a rebuild that rewrites build/mod_journal.so would crash a running httpd.
        self.build = self.parent / "build"
        self.build.mkdir()
        for name in ("mod_journal.so", "journal-admin", "journal-worker"):
            shutil.copy2(BUILD_DIR / name, self.build / name)
        self.port = free_port()
        self.password = "Run-" + uuid.uuid4().hex[:16]
        self.proc = None
        self.made = []  # directories outside the clone that the script created
        self.fake = None
        self.dev_base_existed = DEV_BASE.exists()

    def env(self, **extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith("JOURNAL_")}
        env.update({"JOURNAL_PORT": str(self.port), "JOURNAL_ADMIN_PASSWORD": self.password,
                    "BUILD_DIR": str(self.build)})
        env.update(extra)
        return env

    def run_script(self, timeout=60, **extra):
        """Runs scripts/run.sh where it must stop by itself; (status, stdout, stderr). When it
        starts a server instead, the whole process group is stopped and the test fails."""
        proc = subprocess.Popen(["sh", "scripts/run.sh"], cwd=self.top, env=self.env(**extra),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # httpd and its children: one process group
            out, err = proc.communicate(timeout=30)
            raise AssertionError(f"run.sh did not stop within {timeout} s:\n{out}{err}")
        return proc.returncode, out, err

    def start(self, **extra):
        self._close_output()
        self.out = open(self.parent / "run.out", "w+")
        self.err = open(self.parent / "run.err", "w+")
        self.proc = subprocess.Popen(["sh", "scripts/run.sh"], cwd=self.top,
                                     env=self.env(**extra), stdout=self.out, stderr=self.err,
                                     start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"run.sh exited {self.proc.returncode}:\n{self.output()}")
            try:
                r = requests.get(self.url("/api/health"), timeout=2)
                if r.status_code == 200:
                    return r
                last = f"{r.status_code} {r.text[:300]}"
            except requests.RequestException as e:
                last = repr(e)
            time.sleep(0.1)
        raise AssertionError(f"no 200 from /api/health within {START_TIMEOUT}s (last: {last})"
                             f"\n{self.output()}\n{self.error_log()}")

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def output(self):
        parts = []
        for f in (getattr(self, "out", None), getattr(self, "err", None)):
            if f:
                f.flush()
                f.seek(0)
                parts.append(f.read())
        return "".join(parts)

    def error_log(self):
        log = self.top / "var" / "httpd" / "logs" / "error.log"
        return log.read_text(errors="replace") if log.exists() else ""

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        # The test's last request closed its connection, which hands its end to a worker of
        # httpd; SIGTERM is httpd's immediate stop, and one that arrives while a worker ends a
        # connection can crash the child (httpd 2.4.71's event MPM; docs/operations.md,
        # "Stopping httpd"). The worker is given a moment first, as tests/api/harness.py does.
        time.sleep(CLOSE_SETTLE)
        self.proc.send_signal(signal.SIGTERM)  # run.sh exec'd httpd, in the foreground
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
            raise AssertionError("httpd did not stop on SIGTERM within 30 s")

    def _close_output(self):
        for f in (getattr(self, "out", None), getattr(self, "err", None)):
            if f:
                f.close()
        self.out = self.err = None

    def outside(self):
        """Where run.sh put what www-data must reach besides the data, when the clone is
        closed to it: (httpd's runtime directory, the copy of journal-worker). Both are
        recorded for cleanup."""
        out = self.output()
        run = re.search(r"httpd's runtime directory is (\S+)", out)
        copy = re.search(r"httpd runs a copy, (\S+)", out)
        assert run and copy, f"run.sh did not say where the worker's files went:\n{out}"
        run, copy = Path(run.group(1)), Path(copy.group(1))
        assert run.parent == copy.parent.parent, (run, copy)
        if run.parent not in self.made:
            self.made.append(run.parent)
        return run, copy

    def cleanup(self):
        try:
            self.stop()
        finally:
            if self.fake:
                self.fake.terminate()
                self.fake.wait(10)
            self._close_output()
            shutil.rmtree(self.parent, ignore_errors=True)
            for d in self.made:
                shutil.rmtree(d, ignore_errors=True)
            if not self.dev_base_existed and DEV_BASE.exists() and not any(DEV_BASE.iterdir()):
                DEV_BASE.rmdir()


@pytest.fixture
def clone_factory():
    clones = []

    def make(parent_mode):
        c = Clone(parent_mode)
        clones.append(c)
        return c

    yield make
    for c in clones:
        c.cleanup()


def login(c):
    r = requests.post(c.url("/api/auth/login"), timeout=30,
                      json={"username": "admin", "password": c.password})
    assert r.status_code == 200, f"login: {r.status_code} {r.text}"
    return r.json()["token"]


def upload_a_file(c, token):
    """A branch, a group, an entry and a file on it; returns the stored file's path."""
    h = {"X-Auth-Token": token}

    def post(path, body):
        r = requests.post(c.url(path), json=body, headers=h, timeout=30)
        assert r.status_code == 201, f"POST {path}: {r.status_code} {r.text}"
        return r.json()

    branch = post("/api/branches", {"name": "North"})
    group = post("/api/groups", {"name": "Maths", "branch_id": branch["id"]})
    entry = post("/api/entries", {"student_name": "Ada", "group_id": group["id"]})
    r = requests.post(c.url(f"/api/entries/{entry['id']}/files"), data=b"notes\n",
                      headers={**h, "Content-Type": "text/plain", "X-File-Name": "n.txt"},
                      timeout=30)
    assert r.status_code == 201, f"upload: {r.status_code} {r.text}"
    return r.json()["sha256"]


def stored_files(data):
    return [p for p in (data / "files").rglob("*") if p.is_file()]


def check_private_data(data):
    """The data directory 0700 and the database, its -wal/-shm and stored files 0600, all the
    server user's."""
    assert mode(data) == 0o700, oct(mode(data))
    assert owner(data) == "www-data"
    db = data / "journal.db"
    for f in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        assert f.exists(), f"{f} is missing (the server has the database open)"
        assert mode(f) == 0o600, f"{f}: {oct(mode(f))}"
        assert owner(f) == "www-data", f"{f}: {owner(f)}"
    files = stored_files(data)
    assert len(files) == 1, files
    assert mode(files[0]) == 0o600, oct(mode(files[0]))
    for d in (files[0].parent, files[0].parent.parent):
        assert mode(d) == 0o700, f"{d}: {oct(mode(d))}"


def test_make_run_from_a_private_directory(clone_factory):
    c = clone_factory(0o700)
    c.start()
    c.outside()
    out = c.output()
    m = re.search(r"the data lives in (\S+)", out)
    assert m, f"run.sh did not say where the data went:\n{out}"
    data = Path(m.group(1))
    c.made.append(data)
    assert data.parent == DEV_BASE, data
    assert not str(data).startswith(str(c.parent)), data
    assert mode(DEV_BASE) == 0o755
    assert f"data in {data};" in out, out
    token = login(c)
    upload_a_file(c, token)
    check_private_data(data)
    # The private httpd's own files stay in the clone, root's.
    assert (c.top / "var" / "httpd" / "httpd.conf").exists()
    assert owner(c.top / "var" / "httpd" / "conf.d") == "root"
    c.stop()
    problems = [l for l in c.error_log().splitlines() if PROBLEM_RE.search(l)]
    assert not problems, problems

    # A second run finds the same data: the account and its password are kept.
    c.start()
    assert f"the data lives in {data} " in c.output()
    login(c)


def test_make_run_from_an_open_directory_keeps_the_data_in_var(clone_factory):
    c = clone_factory(0o755)
    c.start()
    data = c.top / "var"
    out = c.output()
    assert "the data lives in" not in out, out
    assert "httpd runs a copy" not in out, out  # www-data runs the build's worker ...
    assert "runtime directory is" not in out, out  # ... on its settings in var/httpd/run
    assert f"data in {data};" in out, out
    token = login(c)
    upload_a_file(c, token)
    check_private_data(data)
    assert owner(data / "httpd") == "root"


def start_fake_llm(c):
    """tests/fakes/fake_llm.py on a free port; its base URL."""
    port_file = c.parent / "fake-llm.port"
    c.fake = subprocess.Popen([sys.executable, str(FAKE_LLM), "--port-file", str(port_file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not port_file.exists():
        assert c.fake.poll() is None and time.monotonic() < deadline, "the fake LLM did not start"
        time.sleep(0.05)
    return f"http://127.0.0.1:{port_file.read_text()}"


def test_make_run_checks_entries_with_the_worker(clone_factory):
    """From root's private directory, with an endpoint: httpd starts the worker (a copy that
    www-data can run), and an entry's description comes back rewritten."""
    c = clone_factory(0o700)
    fake = start_fake_llm(c)
    c.start(JOURNAL_AI_ENDPOINT=fake + "/v1", JOURNAL_AI_MODEL="fake-model")
    c.made.append(Path(re.search(r"the data lives in (\S+)", c.output()).group(1)))
    run, copy = c.outside()
    assert run.parent.parent == DEV_BASE, run
    for d in (run.parent, run, copy.parent):
        assert (owner(d), mode(d)) == ("root", 0o755), d
    assert (owner(copy), mode(copy)) == ("root", 0o755)
    assert copy.read_bytes() == (BUILD_DIR / "journal-worker").read_bytes()
    settings = run / "journal-worker.conf"  # written by httpd, read by the worker
    assert (owner(settings), mode(settings)) == ("www-data", 0o600)
    token = login(c)
    h = {"X-Auth-Token": token}
    branch = requests.post(c.url("/api/branches"), json={"name": "East"}, headers=h,
                           timeout=30).json()
    group = requests.post(c.url("/api/groups"), json={"name": "Art", "branch_id": branch["id"]},
                          headers=h, timeout=30).json()
    text = "Ada drawed a cat"
    r = requests.post(c.url("/api/entries"), headers=h, timeout=30,
                      json={"student_name": "Ada", "group_id": group["id"], "description": text})
    assert r.status_code == 201, r.text
    entry = r.json()
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        got = requests.get(c.url(f"/api/entries/{entry['id']}"), headers=h, timeout=30).json()
        if got["ai_status"] not in ("pending", "processing"):
            break
        assert time.monotonic() < deadline, f"still {got['ai_status']}\n{c.error_log()}"
        time.sleep(0.1)
    assert (got["ai_status"], got["description"], got["description_original"]) == \
        ("done", "AI: " + text, text), got
    assert requests.get(fake + "/_counts", timeout=30).json() == {text: 1}
    assert requests.get(c.url("/api/health"), timeout=30).json()["ai"] == \
        {"configured": True, "workers_running": 1}
    c.stop()
    log = c.error_log()
    assert "JR06001" not in log  # the workers log at the module's level: warn
    problems = [line for line in log.splitlines() if PROBLEM_RE.search(line)]
    assert not problems, problems


def test_unreachable_data_dir_stops_before_httpd(clone_factory):
    c = clone_factory(0o700)
    wanted = c.parent / "private-data"
    status, out, err = c.run_script(JOURNAL_DATA_DIR=str(wanted))
    assert status != 0, (status, out, err)
    lines = [l for l in (out + err).splitlines() if l.strip()]
    assert len(lines) == 1, f"expected one line:\n{out}{err}"
    line = lines[0]
    assert f"JOURNAL_DATA_DIR={wanted}" in line and "www-data" in line, line
    assert str(c.parent) in line, f"the line does not name the closed directory: {line}"
    assert re.search(r"e\.g\. JOURNAL_DATA_DIR=/\S+", line), f"no fix named: {line}"
    assert not wanted.exists(), "the data directory was created anyway"
    assert not (c.top / "var" / "httpd" / "run" / "httpd.pid").exists()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", c.port)) != 0, "something listens on the port"
