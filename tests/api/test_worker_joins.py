"""The module and journal-worker together, through the real httpd: the settings file httpd
writes is the one the worker runs on (every setting, values with spaces and '#'), a worker
that refuses its configuration (exit status 2) is restarted with a growing delay rather than
in a loop, and the status answers count the processes that work."""

import functools
import os
import re
import time
import uuid

from harness import uniq
from worker_support import (  # noqa: F401 (fixtures)
    MODEL, WAIT, api, cmdline, events, fake_llm, get_entry, health, new_entry, new_group,
    parse_settings, rows, wait_for, wait_status, worker_env)

APP_NAME = "journal worker #1"


def odd_dbd_params(srv):
    """DBDParams with spaces and a '#': on SQLite a file so named in a directory so named, on
    PostgreSQL a conninfo with a quoted value."""
    if srv.db_kind == "sqlite":
        d = srv.data_dir / "db #1 dir"
        d.mkdir()
        srv.db_path = d / "journal #1.db"
        srv.dbd_params = str(srv.db_path)
    else:
        srv.dbd_params += f" application_name='{APP_NAME}'"
    (srv.conf_d / "dbd.conf").write_text(f'DBDParams "{srv.dbd_params}"\n')


def tcp_ports(pid):
    """Local ports of the IPv4 TCP sockets a process holds."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    with open(f"/proc/{pid}/net/tcp") as f:
        lines = f.read().splitlines()[1:]
    return {int(c[1].split(":")[1], 16) for c in (line.split() for line in lines)
            if c[9] in inodes}


def test_every_setting_reaches_the_worker(worker_env):
    key = "sk-" + uuid.uuid4().hex
    photo = ("JournalPhotoAIEndpoint http://127.0.0.1:9/photo/\n"
             "JournalPhotoAITimeout 300000\nJournalPhotoUpscaleTimeout 5000\n"
             "JournalMaxUploadSize 2M\n")
    env = worker_env(prepare=odd_dbd_params, key=key, timeout=4, concurrency=3,
                     log_level="debug", extra_conf=photo)
    srv, fake = env.srv, env.fake
    # The file httpd wrote, each value to the end of its line (no quoting, no comment after
    # it) ...
    assert parse_settings(env.config.read_text()) == {
        "db_driver": srv.dbd_driver, "db_params": srv.dbd_params,
        "data_dir": str(srv.data_dir), "runtime_dir": str(srv.run_dir),
        "ai_endpoint": fake.endpoint, "ai_model": MODEL, "ai_key_file": str(env.key_file),
        "ai_timeout": "4", "ai_concurrency": "3", "log_level": "debug",
        "photo_ai_endpoint": "http://127.0.0.1:9/photo", "photo_ai_timeout_ms": "300000",
        "photo_upscale_timeout_ms": "5000", "photo_max_size": str(2 * 1024 * 1024)}
    # ... is the one the worker runs on: its database (PostgreSQL: its own connection carries
    # the quoted value) ...
    if srv.db_kind == "pgsql":
        [pid] = env.pids()
        named = {int(r[0]) for r in rows(srv, "SELECT client_port FROM pg_stat_activity"
                                              f" WHERE application_name = '{APP_NAME}'")}
        assert tcp_ports(pid) & named, (tcp_ports(pid), named)
    g = new_group(srv)
    # ... its concurrency: three requests in flight, not more (held for less than the 4 s of
    # the timeout) ...
    held = [new_entry(srv, g["id"], f"[[hold]] {i} {uniq('c')}") for i in range(5)]
    wait_for(lambda: len(fake.requests()) == 3, what="three requests")
    time.sleep(0.5)  # a fourth slot would have sent the fourth by now
    assert len(fake.requests()) == 3
    fake.release()
    for e in held:
        wait_status(functools.partial(get_entry, srv), e["id"], "done")
    # ... its timeout: the first attempt gives up after 4 s, the retry is answered
    slow = new_entry(srv, g["id"], f"[[hang:30:1]] {uniq('t')}")
    wait_status(functools.partial(get_entry, srv), slow["id"], "done")
    retry = [p for t, p in events(srv, "entry", slow["id"]) if t == "ai_status"][2]
    assert (retry["status"], retry["ai_error"]) == \
        ("pending", "the AI endpoint did not answer within 4 s")
    first, second = [r["t"] for r in fake.for_text(slow["description"])]
    assert second - first >= 4 + 2 - 0.05  # the timeout, then the first back-off
    # ... its endpoint, model and key, and its log level
    for r in fake.requests():
        assert r["path"] == "/v1/chat/completions" and r["body"]["model"] == MODEL
        assert r["headers"]["Authorization"] == "Bearer " + key
    assert "JR06016: claimed" in env.output()
    assert key not in env.output() and key not in env.config.read_text()


def test_a_refused_configuration_backs_off(worker_env):
    """A worker that exits with status 2 (here: the key file holds no valid key) is started
    again after 1, 2, 4 s ...; while it waits out its delay it is not counted as running."""
    key = "not a key"
    env = worker_env(key=key, wait=False)
    env.allow("JR06007")
    srv = env.srv
    wait_for(lambda: re.search(r"JR00108: journal-worker 1 started \(pid \d+, waits 4 s\)",
                               env.output()), timeout=WAIT, what="the third restart")
    [pid] = wait_for(env.pids, what="the waiting process")
    assert cmdline(pid)[-2:] == ["--delay", "4"]
    assert health(srv)["ai"] == {"configured": True, "workers_running": 0}
    workers = api(srv, "GET", "/api/ai/status", status=200)["workers"]
    assert (workers["running"], workers["restarts"]) == (0, 3), workers
    log = env.output()
    waits = re.findall(r"JR00108: journal-worker 1 started \(pid \d+, waits (\d+) s\)", log)
    assert waits == ["0", "1", "2", "4"], log
    assert log.count("(a configuration error: see its messages above); starting it again") == 3
    refused = [line for line in log.splitlines() if line.startswith("[error] JR06007: ")]
    assert len(refused) == 3, log
    assert all("contains a space or control character" in line for line in refused), refused
    assert key not in log
    # the harness counts the worker's error lines as problems (allowed here by their tag)
    assert [line for line in srv.error_log_problems() if "JR06007" in line] == refused
