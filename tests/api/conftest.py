"""Fixtures of the API suite.

  server        the shared httpd of the whole run (session scoped; use unique data per test).
                Its error log is checked after every test.
  fresh_server  a factory: fresh_server(extra_conf="", start=True) -> Server with its own
                database, stopped (and its error log checked) when the test ends.
"""

import os
import tempfile

import pytest

import harness
from harness import Server

LSAN_FILE_ENV = "JOURNAL_LSAN_NOT_RUN_FILE"


def pytest_configure(config):
    """Processes whose leak check could not run are appended to a file: with pytest-xdist the
    tests run in worker processes, and only a file brings their notes to the summary."""
    if hasattr(config, "workerinput"):
        return
    if not os.environ.get(LSAN_FILE_ENV):
        fd, path = tempfile.mkstemp(prefix="jr-lsan-not-run-")
        os.close(fd)
        os.environ[LSAN_FILE_ENV] = path
        config._jr_lsan_own_file = path
    path = os.environ[LSAN_FILE_ENV]
    # make check shares one file between its steps: this run reports what it appended.
    config._jr_lsan_offset = os.path.getsize(path) if os.path.exists(path) else 0


def pytest_unconfigure(config):
    own = getattr(config, "_jr_lsan_own_file", None)
    if own:
        os.environ.pop(LSAN_FILE_ENV, None)
        os.unlink(own)


def pytest_report_header(config):
    return (f"mod_journal API: db={harness.DB_KIND} build={harness.BUILD_DIR} "
            f"sanitize={'yes' if harness.SANITIZE else 'no'}")


def pytest_terminal_summary(terminalreporter, config):
    """Says where LeakSanitizer could not run (see harness.LSAN_NOT_RUN_RE): never silent."""
    notes = []
    path = os.environ.get(LSAN_FILE_ENV)
    if path and os.path.exists(path):
        with open(path) as f:
            f.seek(getattr(config, "_jr_lsan_offset", 0))
            notes = f.read().splitlines()
    if notes:
        terminalreporter.write_sep("=", f"leak check not run in {len(notes)} "
                                        "processes (LeakSanitizer was refused ptrace)")
        for note in notes[:20]:
            terminalreporter.write_line(f"  {note}")


def _problems_message(srv, problems):
    return (f"unexpected problems in {srv.error_log}:\n  " + "\n  ".join(problems))


@pytest.fixture(scope="session")
def _session_server():
    srv = Server(label="session")
    problems = []
    try:
        srv.start()
        yield srv
    finally:
        problems = srv.finish()
    if problems:
        pytest.fail(_problems_message(srv, problems), pytrace=False)


@pytest.fixture
def server(_session_server):
    """The shared server. Tests may extend server.allowed_log_patterns for themselves."""
    srv = _session_server
    saved = list(srv.allowed_log_patterns)
    yield srv
    try:
        problems = srv.new_log_problems()
    finally:
        srv.allowed_log_patterns[:] = saved
    if problems:
        pytest.fail(_problems_message(srv, problems), pytrace=False)


@pytest.fixture
def fresh_server():
    servers = []

    def make(extra_conf="", start=True):
        srv = Server(extra_conf=extra_conf)
        servers.append(srv)
        if start:
            srv.start()
        return srv

    yield make

    errors = []
    for srv in servers:
        try:
            srv.stop()
        except Exception as e:  # keep stopping the others
            errors.append(f"stopping {srv.root}: {e}")
        problems = srv.new_log_problems()
        if problems:
            errors.append(_problems_message(srv, problems))
        srv.cleanup()
    if errors:
        pytest.fail("\n".join(errors), pytrace=False)
