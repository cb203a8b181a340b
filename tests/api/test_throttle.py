"""The login throttle per account: failed logins counted per user name, from any address."""

import itertools
import re
import time

from harness import assert_error, assert_json, uniq

_ips = itertools.count(1)

THROTTLED = re.compile(r"^too many failed logins for this account; retry in (\d+) s$")


def new_ip():
    """A client address of this module's own (198.18.0.x-198.18.199.x, a benchmarking range)."""
    n = next(_ips)
    assert n < 200 * 250, "test_throttle ran out of client addresses"
    return f"198.18.{n // 250}.{n % 250 + 1}"


def login(srv, username, password, ip=None):
    return srv.api("POST", "/api/auth/login", json={"username": username, "password": password},
                   ip=ip or new_ip())


def assert_throttled(r, longest):
    """A 429 of the throttle: JSON error, Retry-After between 1 and longest, both agreeing."""
    body = assert_error(r, 429)
    m = THROTTLED.match(body["error"])
    assert m, body
    retry = r.headers.get("Retry-After", "")
    assert retry.isdigit() and 1 <= int(retry) <= longest, dict(r.headers)
    assert m.group(1) == retry, (body, retry)
    return int(retry)


def bans(srv):
    return assert_json(srv.api("GET", "/api/bans", token=srv.admin_token), 200)


def log_lines(srv, tag):
    return [l for l in srv.read_error_log().splitlines() if tag in l]


# ---- the throttle ---------------------------------------------------------------------------
def test_guessing_from_three_addresses_throttles_the_account(fresh_server):
    """27 wrong passwords for admin from 3 addresses: no address reaches its ban, but the
    account is throttled after 10 and the right password is refused too."""
    srv = fresh_server()
    token = srv.admin_token  # a session from before the attack keeps working
    ips = [new_ip() for _ in range(3)]
    for i in range(27):
        r = login(srv, "Admin" if i % 2 else "admin", "wrong-" + uniq("pw"), ips[i % 3])
        if i < 10:
            assert_error(r, 401)
        else:
            assert_throttled(r, 60)
    assert bans(srv) == [], "an address was banned: the per-address limit is not what stops this"
    for ip in ips + [new_ip()]:
        assert_throttled(login(srv, srv.admin_username, srv.admin_password, ip), 60)
    assert_json(srv.api("GET", "/api/auth/me", token=token), 200)
    lines = log_lines(srv, "JR03010")
    assert len(lines) == 1 and "'admin'" in lines[0] and srv.admin_password not in lines[0], lines


def test_throttle_period_ends_and_success_resets(fresh_server):
    srv = fresh_server("JournalLoginThrottleThreshold 3\nJournalLoginThrottleMaxBackoff 2")
    user = srv.create_user()
    name, pw = user["username"], user["_password"]
    for _ in range(3):
        assert_error(login(srv, name, "wrong-pw"), 401)
    retry = assert_throttled(login(srv, name, pw), 2)
    time.sleep(retry + 0.3)
    assert_json(login(srv, name, pw), 200)
    # The success forgot the failures and the back-off: three more are needed again.
    for _ in range(2):
        assert_error(login(srv, name, "wrong-pw"), 401)
    assert_json(login(srv, name, pw), 200)
    for _ in range(3):
        assert_error(login(srv, name, "wrong-pw"), 401)
    assert_throttled(login(srv, name, "wrong-pw"), 2)


def test_unknown_names_are_throttled_alike(server):
    user = server.create_user()
    answers = {}
    for name, pw in ((user["username"], "wrong-pw"), (uniq("nobody"), "wrong-pw")):
        bodies = [login(server, name, pw) for _ in range(10)]
        for r in bodies:
            assert_error(r, 401)
        assert len({r.content for r in bodies}) == 1
        r = login(server, name, pw)
        assert_throttled(r, 60)
        answers[name] = (bodies[0].content, r.status_code, re.sub(r"\d+", "N", r.json()["error"]))
    first, second = answers.values()
    assert first == second


def test_an_address_that_logged_in_before_passes_the_throttle(fresh_server):
    srv = fresh_server()
    home = new_ip()
    assert_json(login(srv, srv.admin_username, srv.admin_password, home), 200)
    for _ in range(10):
        assert_error(login(srv, srv.admin_username, "wrong-pw"), 401)
    assert_throttled(login(srv, srv.admin_username, srv.admin_password), 60)
    assert_json(login(srv, srv.admin_username, srv.admin_password, home), 200)
    # The success lifted the throttle for everyone.
    assert_json(login(srv, srv.admin_username, srv.admin_password), 200)


def test_throttle_directives_change_behaviour(fresh_server):
    srv = fresh_server("JournalLoginThrottleThreshold 2\nJournalLoginThrottleWindow 15m\n"
                       "JournalLoginThrottleMaxBackoff 45")
    for _ in range(2):
        assert_error(login(srv, "ghost", "wrong-pw"), 401)
    retry = assert_throttled(login(srv, "ghost", "wrong-pw"), 45)
    assert retry > 30  # the first period is the maximum when that is under a minute


# ---- a full table ---------------------------------------------------------------------------
def test_full_account_table_keeps_a_running_throttle(fresh_server):
    srv = fresh_server("JournalCounterSlots 64\nJournalBcryptCost 4")
    for _ in range(10):
        assert_error(login(srv, srv.admin_username, "wrong-pw"), 401)
    assert_throttled(login(srv, srv.admin_username, srv.admin_password), 60)
    for i in range(150):  # names that do not exist, each from an address of its own
        assert_error(login(srv, f"junk{i}", "wrong-pw"), 401)
    assert log_lines(srv, "JR02012")
    assert_throttled(login(srv, srv.admin_username, srv.admin_password), 60)
