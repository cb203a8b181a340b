"""Automatic IP bans (API key guessing, failed logins, honeypot) and /api/bans."""

import ipaddress
import itertools
import time
import urllib.parse
from datetime import datetime, timedelta, timezone

import pytest

from harness import assert_error, assert_json, assert_ok, sql_exec, sql_int, uniq

_ips = itertools.count(100)
_ip6 = itertools.count(1)

BAN_KEYS = {"ip", "reason", "created_at", "expires_at"}


def new_ip():
    """A client address of this module's own (203.0.113.100-254)."""
    n = next(_ips)
    assert n < 255, "test_bans ran out of client addresses"
    return f"203.0.113.{n}"


def new_ip6():
    """An IPv6 client address in a /64 of its own (IPv6 clients are banned by /64)."""
    return f"2001:db8:ba:{next(_ip6):x}::1"


def net64(ip):
    """The /64 an IPv6 address's ban is listed as."""
    return str(ipaddress.ip_network(f"{ip}/64", strict=False))


def quoted(ip):
    return urllib.parse.quote(ip, safe="")


def parse_time(value):
    assert isinstance(value, str) and value.endswith("Z"), value
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def create_key(server, scopes=("read",), **fields):
    body = {"name": uniq("bankey"), "scopes": list(scopes)}
    body.update(fields)
    return assert_json(server.api("POST", "/api/api-keys", token=server.admin_token, json=body),
                       201)["key"]


def me(server, key, ip):
    return server.api("GET", "/api/v1/me", headers={"X-Api-Key": key}, ip=ip)


def bans(server):
    r = server.api("GET", "/api/bans", token=server.admin_token)
    items = assert_json(r, 200)
    assert isinstance(items, list), r.text
    for b in items:
        assert set(b) == BAN_KEYS, b
    return items


def ban_of(server, ip):
    """The ban listed for ip (for an IPv6 address, the ban of its /64)."""
    if ":" in ip and "/" not in ip:
        ip = net64(ip)
    found = [b for b in bans(server) if b["ip"] == ip]
    assert len(found) <= 1, found
    return found[0] if found else None


def login(server, username, password, ip, **extra):
    body = {"username": username, "password": password}
    body.update(extra)
    return server.api("POST", "/api/auth/login", json=body, ip=ip)


def unban(server, ip):
    assert_ok(server.api("DELETE", f"/api/bans/{quoted(ip)}", token=server.admin_token))


def check_duration(ban, seconds):
    created, expires = parse_time(ban["created_at"]), parse_time(ban["expires_at"])
    now = datetime.now(timezone.utc)
    assert abs((created - now).total_seconds()) < 300, ban
    assert abs((expires - created).total_seconds() - seconds) <= 5, ban
    assert abs((expires - (now + timedelta(seconds=seconds))).total_seconds()) < 300, ban


# ---- access to /api/bans --------------------------------------------------------------------
@pytest.mark.parametrize("method,path", [("GET", "/api/bans"),
                                         ("DELETE", "/api/bans/203.0.113.254")])
def test_bans_endpoints_need_an_admin(server, method, path):
    assert_error(server.api(method, path), 401)
    assert_error(server.api(method, path, headers={"X-Admin-Token": "anything"}), 401)
    _, tutor_token = server.create_tutor()
    assert_error(server.api(method, path, token=tutor_token), 403)


def test_unban_of_an_unbanned_ip_is_404(server):
    ip = new_ip()
    assert_error(server.api("DELETE", f"/api/bans/{quoted(ip)}", token=server.admin_token), 404)
    assert_error(server.api("DELETE", f"/api/bans/{quoted(new_ip6())}",
                            token=server.admin_token), 404)


# ---- API key guessing -----------------------------------------------------------------------
def key_guessing_ban(srv, ip, threshold):
    """Sends wrong keys from ip until the ban; checks it happens at the threshold."""
    good = create_key(srv)
    bad = good[:-3] + ("AAA" if good[-3:] != "AAA" else "BBB")
    for i in range(threshold - 1):
        assert_error(me(srv, bad, ip), 401)
        assert ban_of(srv, ip) is None, f"banned after {i + 1} wrong keys"
    r = me(srv, "wsk_short", ip)  # the threshold-th wrong key
    assert r.status_code in (401, 403), r.text
    assert_error(me(srv, bad, ip), 403)
    return good


def test_key_guessing_ban_with_threshold(fresh_server):
    srv = fresh_server("JournalKeyBanThreshold 5")
    ip, other_ip = new_ip(), new_ip()
    good = key_guessing_ban(srv, ip, 5)
    ban = ban_of(srv, ip)
    assert ban is not None and ban["reason"] == "apikey-bruteforce"
    check_duration(ban, 3600)  # the default JournalKeyBanDuration

    # While banned: even the valid key and a correct login are refused from that address.
    assert_error(me(srv, good, ip), 403)
    assert_error(srv.api("GET", "/api/v1/branches", headers={"Authorization": f"Bearer {good}"},
                         ip=ip), 403)
    assert_error(srv.api("GET", "/api/v1/me", ip=ip), 403)
    assert_error(login(srv, srv.admin_username, srv.admin_password, ip), 403)
    # Other addresses are unaffected.
    assert_json(me(srv, good, other_ip), 200)
    assert srv.login(srv.admin_username, srv.admin_password, ip=other_ip)
    assert ban_of(srv, other_ip) is None

    unban(srv, ip)
    assert ban_of(srv, ip) is None
    assert_json(me(srv, good, ip), 200)
    assert srv.login(srv.admin_username, srv.admin_password, ip=ip)
    assert_error(srv.api("DELETE", f"/api/bans/{quoted(ip)}", token=srv.admin_token), 404)
    # The count starts from zero again after an unban.
    assert_error(me(srv, "wsk_short", ip), 401)
    assert ban_of(srv, ip) is None


def test_key_guessing_ban_ipv6(fresh_server):
    srv = fresh_server("JournalKeyBanThreshold 5")
    ip = new_ip6()
    good = key_guessing_ban(srv, ip, 5)
    ban = ban_of(srv, net64(ip))
    assert ban is not None and ban["reason"] == "apikey-bruteforce"
    assert_error(me(srv, good, ip), 403)
    assert_json(me(srv, good, new_ip6()), 200)
    assert "%3A" in quoted(ip)
    unban(srv, ip)
    assert_json(me(srv, good, ip), 200)
    assert_error(srv.api("DELETE", f"/api/bans/{quoted(ip)}", token=srv.admin_token), 404)


def test_key_guessing_default_threshold(server):
    ip = new_ip()
    try:
        key_guessing_ban(server, ip, 20)
        assert ban_of(server, ip)["reason"] == "apikey-bruteforce"
        assert_error(login(server, server.admin_username, server.admin_password, ip), 403)
    finally:
        if ban_of(server, ip) is not None:
            unban(server, ip)
    assert_json(me(server, create_key(server), ip), 200)


def test_missing_key_does_not_count(fresh_server):
    srv = fresh_server("JournalKeyBanThreshold 2")
    ip = new_ip()
    for _ in range(5):
        assert_error(srv.api("GET", "/api/v1/me", ip=ip), 401)  # no key at all
    assert ban_of(srv, ip) is None
    assert_json(me(srv, create_key(srv), ip), 200)


# ---- failed logins --------------------------------------------------------------------------
def test_login_bruteforce_ban(fresh_server):
    # The account's own throttle (test_throttle.py) is set above the address's threshold
    # here, so that only the address is refused.
    server = fresh_server("JournalLoginThrottleThreshold 11")
    ip, other_ip = new_ip(), new_ip()
    user = server.create_user()
    try:
        for i in range(10):
            assert_error(login(server, user["username"], "wrong-" + uniq("pw"), ip), 401)
        assert_error(login(server, user["username"], user["_password"], ip), 403)
        ban = ban_of(server, ip)
        assert ban is not None and ban["reason"] == "login-bruteforce"
        check_duration(ban, 86400)
        # The user itself is not locked out: other addresses still log in.
        assert server.login(user["username"], user["_password"], ip=other_ip)
        # A key from the banned address is refused too.
        assert_error(me(server, create_key(server), ip), 403)
    finally:
        if ban_of(server, ip) is not None:
            unban(server, ip)
    assert server.login(user["username"], user["_password"], ip=ip)


def test_nine_failed_logins_do_not_ban(server):
    ip = new_ip()
    user = server.create_user()
    for _ in range(9):
        assert_error(login(server, user["username"], "wrong-" + uniq("pw"), ip), 401)
    try:
        assert server.login(user["username"], user["_password"], ip=ip)
        assert ban_of(server, ip) is None
    finally:
        if ban_of(server, ip) is not None:
            unban(server, ip)


# ---- honeypot -------------------------------------------------------------------------------
def test_honeypot_bans_for_a_day(server):
    ip = new_ip()
    user = server.create_user()
    r = login(server, user["username"], user["_password"], ip, website="")
    assert assert_json(r, 200)["token"]
    assert ban_of(server, ip) is None
    try:
        r = login(server, user["username"], user["_password"], ip, website="http://spam.example")
        assert_error(r, 403)
        assert "token" not in r.json()
        ban = ban_of(server, ip)
        assert ban is not None and ban["reason"] == "honeypot"
        check_duration(ban, 86400)
        assert_error(login(server, user["username"], user["_password"], ip), 403)
        assert_error(me(server, create_key(server), ip), 403)
    finally:
        if ban_of(server, ip) is not None:
            unban(server, ip)
    assert server.login(user["username"], user["_password"], ip=ip)


def test_ban_survives_restart(fresh_server):
    srv = fresh_server()
    ip = new_ip()
    good = create_key(srv)
    assert_error(login(srv, "someone", "x", ip, website="robot"), 403)
    before = ban_of(srv, ip)
    assert before is not None and before["reason"] == "honeypot"
    srv.restart()
    assert ban_of(srv, ip) == before
    assert_error(login(srv, srv.admin_username, srv.admin_password, ip), 403)
    assert_error(me(srv, good, ip), 403)
    assert_json(me(srv, good, new_ip()), 200)
    unban(srv, ip)
    assert srv.login(srv.admin_username, srv.admin_password, ip=ip)


def test_bans_list_newest_first(server):
    ips = [new_ip(), new_ip6()]
    try:
        for ip in ips:
            assert_error(login(server, "someone", "x", ip, website="robot"), 403)
        items = bans(server)
        listed = [b["ip"] for b in items]
        assert ips[0] in listed and net64(ips[1]) in listed
        created = [b["created_at"] for b in items]
        assert created == sorted(created, reverse=True)
    finally:
        for ip in ips:
            if ban_of(server, ip) is not None:
                unban(server, ip)
    listed = [b["ip"] for b in bans(server)]
    assert ips[0] not in listed and net64(ips[1]) not in listed


def test_ipv6_ban_applies_to_every_spelling_of_the_address(server):
    n = next(_ip6)
    canonical = f"2001:db8:ba:{n:x}::1"
    spelled = f"2001:DB8:BA:{n:X}:0:0:0:1"
    try:
        assert_error(login(server, "someone", "x", spelled, website="robot"), 403)
        ban = ban_of(server, net64(canonical))
        assert ban is not None and ban["reason"] == "honeypot", bans(server)[:5]
        assert_error(me(server, create_key(server), canonical), 403)
        assert_error(login(server, server.admin_username, server.admin_password, canonical), 403)
    finally:
        if ban_of(server, net64(canonical)) is not None:
            unban(server, canonical)
    assert server.login(server.admin_username, server.admin_password, ip=spelled)


# ---- a ban ends when it expires -------------------------------------------------------------
def test_ban_ends_when_it_expires(fresh_server):
    srv = fresh_server()
    ip, other = new_ip(), new_ip()
    good = create_key(srv)
    for addr in (ip, other):
        assert_error(login(srv, "someone", "x", addr, website="robot"), 403)
    assert_error(me(srv, good, ip), 403)
    # A ban lasts a minute at least: move this one's end to a moment ago instead of waiting.
    past = (datetime.now(timezone.utc) - timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    sql_exec(srv, f"UPDATE ip_bans SET expires_at = '{past}' WHERE ip = '{ip}'")

    assert_json(me(srv, good, ip), 200)
    assert srv.login(srv.admin_username, srv.admin_password, ip=ip)
    assert ban_of(srv, ip) is None  # no longer listed
    assert_error(me(srv, good, other), 403)  # the other ban still holds
    assert ban_of(srv, other)["reason"] == "honeypot"
    # The expired row goes when the next ban is written.
    assert sql_int(srv, f"SELECT COUNT(*) FROM ip_bans WHERE ip = '{ip}'") == 1
    assert_error(login(srv, "someone", "x", new_ip(), website="robot"), 403)
    assert sql_int(srv, f"SELECT COUNT(*) FROM ip_bans WHERE ip = '{ip}'") == 0
    assert sql_int(srv, f"SELECT COUNT(*) FROM ip_bans WHERE ip = '{other}'") == 1


# ---- the ban directives change behaviour ----------------------------------------------------
WINDOW = 10  # seconds: the smallest JournalLoginBanWindow and JournalKeyBanWindow


def test_ban_directives(fresh_server):
    srv = fresh_server("\n".join([
        "JournalLoginBanThreshold 3", "JournalLoginBanWindow 10s", "JournalLoginBanDuration 2h",
        "JournalKeyBanThreshold 3", "JournalKeyBanWindow 10s", "JournalKeyBanDuration 3h",
        "JournalHoneypotBanDuration 5h"]))
    user = srv.create_user()
    good = create_key(srv)
    bad = good[:-3] + ("AAA" if good[-3:] != "AAA" else "BBB")
    slow_login, slow_key = new_ip(), new_ip()

    def fail_login(ip):
        assert_error(login(srv, user["username"], "wrong-" + uniq("pw"), ip), 401)

    # Two failures of each kind now, the third after the window has passed: never three
    # within the window, so no ban.
    for _ in range(2):
        fail_login(slow_login)
        assert_error(me(srv, bad, slow_key), 401)
    started = time.monotonic()

    # Meanwhile: the thresholds (3, not 10 and 20) and the durations.
    ip = new_ip()
    for _ in range(3):
        fail_login(ip)
    assert_error(login(srv, user["username"], user["_password"], ip), 403)
    ban = ban_of(srv, ip)
    assert ban["reason"] == "login-bruteforce"
    check_duration(ban, 2 * 3600)
    ip = new_ip()
    for _ in range(3):
        assert me(srv, bad, ip).status_code == 401
    assert_error(me(srv, good, ip), 403)
    ban = ban_of(srv, ip)
    assert ban["reason"] == "apikey-bruteforce"
    check_duration(ban, 3 * 3600)
    ip = new_ip()
    assert_error(login(srv, user["username"], user["_password"], ip, website="robot"), 403)
    check_duration(ban_of(srv, ip), 5 * 3600)

    # The windows: counted failures older than the window (plus one step of 1/30) are gone.
    time.sleep(max(0.0, WINDOW + WINDOW / 30 + 1.0 - (time.monotonic() - started)))
    fail_login(slow_login)
    assert_error(me(srv, bad, slow_key), 401)
    assert ban_of(srv, slow_login) is None and ban_of(srv, slow_key) is None
    assert srv.login(user["username"], user["_password"], ip=slow_login)
    assert_json(me(srv, good, slow_key), 200)
    # ... and within the window, three do ban.
    for _ in range(2):
        fail_login(slow_login)
        assert me(srv, bad, slow_key).status_code in (401, 403)
    assert ban_of(srv, slow_login)["reason"] == "login-bruteforce"
    assert ban_of(srv, slow_key)["reason"] == "apikey-bruteforce"


# ---- the client address behind several proxies ------------------------------------------------
def test_client_ip_through_a_chain_of_trusted_proxies(fresh_server):
    """X-Forwarded-For "client, proxy": mod_remoteip walks it from the right over every trusted
    hop (loopback, then the proxies configured here); the first untrusted address is the
    client, which bans and the audit log then name."""
    internal, trusted, stranger = "192.0.2.10", "198.51.100.20", "192.0.2.99"
    srv = fresh_server(f"RemoteIPInternalProxy {internal}\nRemoteIPTrustedProxy {trusted}")
    good = create_key(srv)
    cases = [  # X-Forwarded-For, the client the server must see
        (f"{{c}}, {internal}", True),
        (f"{{c}}, {trusted}", True),
        (f"{{c}}, {trusted}, {internal}", True),
        (f"{{c}}, {stranger}", False),  # an untrusted hop is itself the client
    ]
    for chain, reaches_client in cases:
        client = new_ip()
        header = chain.format(c=client)
        r = srv.api("POST", "/api/auth/login", headers={"X-Forwarded-For": header},
                    json={"username": "someone", "password": "x", "website": "robot"})
        assert_error(r, 403)
        banned = client if reaches_client else stranger
        assert ban_of(srv, banned) is not None, (header, bans(srv))
        for hop in (internal, trusted):
            assert ban_of(srv, hop) is None, header
        if reaches_client:
            assert_error(me(srv, good, client), 403)  # the address itself, without proxies
        else:
            assert ban_of(srv, client) is None
            assert_json(me(srv, good, client), 200)
        row = assert_json(srv.api("GET", "/api/audit", token=srv.admin_token,
                                  params={"entity_type": "ip", "entity_id": banned}), 200)
        assert [a["client_ip"] for a in row["items"]] == [banned], row
        unban(srv, banned)
    # Without the extra trust (the shared configuration), the proxy is the client.
    plain = fresh_server()
    client = new_ip()
    r = plain.api("POST", "/api/auth/login", headers={"X-Forwarded-For": f"{client}, {internal}"},
                  json={"username": "someone", "password": "x", "website": "robot"})
    assert_error(r, 403)
    assert ban_of(plain, internal) is not None and ban_of(plain, client) is None
