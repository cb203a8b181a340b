"""The module's log lines: tagged, at the registered level, with their source position, and
tests that expect error lines allow exactly those (mod_journal/core/jr_log_tags.h,
docs/operations.md "Logs")."""

import re
import subprocess

import pytest

from harness import BUILD_DIR, assert_error

# %F is the source file and line of the call that logged the line.
POSITION_FORMAT = 'ErrorLogFormat "[%-m:%l] [pid %P] %F: %M"'


def ban_by_a_failed_login(srv, ip):
    """With JournalLoginBanThreshold 1: the core bans ip (JR03001, a warning)."""
    r = srv.api("POST", "/api/auth/login", json={"username": "nobody", "password": "wrong"},
                ip=ip)
    assert r.status_code in (401, 403), r.text
    assert_error(srv.api("POST", "/api/auth/login", ip=ip,
                         json={"username": srv.admin_username, "password": srv.admin_password}),
                 403)


def lines_with(srv, text):
    return [l for l in srv.read_error_log().splitlines() if text in l]


def test_core_lines_carry_their_own_source_position(fresh_server):
    """A line of the core names the core's file and line, as the glue's lines do, not the
    module's logging sink."""
    srv = fresh_server(f"{POSITION_FORMAT}\nLogLevel warn journal:info\n"
                       "JournalLoginBanThreshold 1")
    ip = "198.51.100.77"
    ban_by_a_failed_login(srv, ip)
    core = lines_with(srv, f"JR03001: banned {ip} until ")
    assert len(core) == 1, srv.read_error_log()[-3000:]
    assert re.search(r"\[journal:warn\] \[pid \d+\] \S*jr_bans\.c\(\d+\): JR03001: ", core[0]), \
        core[0]
    glue = lines_with(srv, "JR00005: schema version ")
    assert glue and re.search(r"\[journal:info\] \[pid \d+\] \S*mj_db\.c\(\d+\): JR00005: ",
                              glue[0]), glue


def test_log_level_of_the_module_applies_to_core_lines(fresh_server):
    """LogLevel journal:error: the core's warning of the ban is not written (nor formatted)."""
    srv = fresh_server("LogLevel warn journal:error\nJournalLoginBanThreshold 1")
    ip = "198.51.100.78"
    ban_by_a_failed_login(srv, ip)
    assert not lines_with(srv, "JR03001"), srv.read_error_log()[-3000:]


@pytest.mark.parametrize("pattern", [r".*", r"ThisIsNotADirective", r"JR0\d{4}: ",
                                     r"\[journal:error\] .*"])
def test_an_allowed_pattern_names_the_exact_tag(server, pattern):
    """A test cannot allow every line, any tag, or any message of the module."""
    server.allowed_log_patterns.append(pattern)
    try:
        with pytest.raises(ValueError, match="names no exact tag"):
            server.new_log_problems()
    finally:
        server.allowed_log_patterns.remove(pattern)


def test_worker_lines_start_with_level_and_tag(tmp_path):
    """journal-worker's own lines, before its settings are read: "[error] JRnnnnn: ..." on
    standard error, then exit status 2 (a configuration error)."""
    p = subprocess.run([str(BUILD_DIR / "journal-worker"), "--instance", "x", "--config",
                        str(tmp_path / "none.conf")], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2, p
    assert p.stderr == "[error] JR06006: --instance: 'x' is not a valid number\n", p.stderr
    p = subprocess.run([str(BUILD_DIR / "journal-worker"), "--config",
                        str(tmp_path / "none.conf")], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2, p
    assert p.stderr.startswith("[error] JR06007: configuration error: "), p.stderr
