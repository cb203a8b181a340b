"""The shared counters when a table is full, and when a graceful restart keeps or makes them
again."""

import itertools
import subprocess
import time

import requests

from diagnostics import children_of
from harness import APACHE, apache_env, assert_error, assert_json, uniq

_ips = itertools.count(1)


def new_ip():
    """A client address of this module's own (198.18.200.x-198.18.249.x, a benchmarking range)."""
    n = next(_ips)
    assert n < 50 * 250, "test_counters_shm ran out of client addresses"
    return f"198.18.{200 + n // 250}.{n % 250 + 1}"


def bans(srv):
    return assert_json(srv.api("GET", "/api/bans", token=srv.admin_token), 200)


def log_lines(srv, tag):
    return [l for l in srv.read_error_log().splitlines() if tag in l]


# ---- full tables ----------------------------------------------------------------------------
def test_full_failure_table_still_counts(fresh_server):
    """More addresses failing at once than the table has slots: the newcomer takes the slot of
    the address seen longest ago, so an attacker who arrives then is still banned."""
    srv = fresh_server("JournalCounterSlots 64\nJournalKeyBanThreshold 3")
    started = time.monotonic()
    for _ in range(100):
        assert_error(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": "wsk_short"},
                             ip=new_ip()), 401)
    attacker = new_ip()
    for _ in range(3):
        assert_error(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": "wsk_short"},
                             ip=attacker), 401)
    assert_error(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": "wsk_short"}, ip=attacker),
                 403)
    assert [b["ip"] for b in bans(srv)] == [attacker]
    lines = log_lines(srv, "JR02011")
    assert 1 <= len(lines) <= 1 + int((time.monotonic() - started) // 60), lines


def test_full_rate_table_still_counts(fresh_server):
    """64 keys in use fill the table; six more, a second later, take over the slots of keys
    seen longest ago and are counted (a full table used to let them through uncounted)."""
    srv = fresh_server("JournalCounterSlots 64")
    keys = [assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token,
                                json={"name": uniq("full"), "scopes": ["read"],
                                      "rate_limit_per_min": 1}), 201)["key"]
            for _ in range(70)]
    for k in keys[:64]:
        assert_json(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": k}), 200)
    time.sleep(1.1)  # the slots are stamped by the second
    for k in keys[64:]:
        assert_json(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": k}), 200)
    for k in keys[64:]:
        assert_error(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": k}), 429)
    assert len(log_lines(srv, "JR02010")) == 1


# ---- graceful restarts ----------------------------------------------------------------------
def httpd_children(srv):
    """The httpd children of the server's parent (not the worker processes it supervises)."""
    kids = []
    for pid in children_of(srv.pid):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "apache2":
                    kids.append(pid)
        except OSError:
            pass  # gone meanwhile
    return kids


def graceful(srv, extra_conf):
    """Rewrites the extra configuration and restarts httpd gracefully; returns once only the
    new generation serves: an old child that has not yet stopped accepting could answer the
    next request with the counts of the old region."""
    old = set(httpd_children(srv))
    ready = len(log_lines(srv, "AH00489"))
    (srv.conf_d / "extra.conf").write_text(extra_conf + "\n")
    subprocess.run([APACHE, "-d", str(srv.root), "-f", str(srv.conf_file), "-k", "graceful"],
                   check=True, capture_output=True, env=apache_env(), timeout=60)
    deadline = time.monotonic() + 30
    while len(log_lines(srv, "AH00489")) <= ready:
        assert time.monotonic() < deadline, srv.read_error_log()[-2000:]
        time.sleep(0.1)
    srv.http.close()
    srv.http = requests.Session()  # new connections: served by the new generation
    # The old children end once their connections have (the client's are closed above).
    while old & set(httpd_children(srv)):
        assert time.monotonic() < deadline, f"old children {sorted(old)} still run"
        time.sleep(0.05)


def test_graceful_restart_keeps_or_remakes_the_counters(fresh_server):
    srv = fresh_server("JournalCounterSlots 64")
    k = assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token,
                            json={"name": uniq("gr"), "scopes": ["read"],
                                  "rate_limit_per_min": 2}), 201)["key"]

    def me():
        return srv.api("GET", "/api/v1/me", headers={"X-Api-Key": k})

    assert_json(me(), 200)
    assert_json(me(), 200)
    assert_error(me(), 429)
    graceful(srv, "JournalCounterSlots 64")
    assert_error(me(), 429)  # the same region: the counts survive
    assert not log_lines(srv, "JR02013")
    graceful(srv, "JournalCounterSlots 128")
    # Another size: the region is made again (never a region the children cannot read, which
    # would leave every key without a limit), and the counts start from zero.
    assert len(log_lines(srv, "JR02013")) == 1
    assert_json(me(), 200)
    assert_json(me(), 200)
    assert_error(me(), 429)
