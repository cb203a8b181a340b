"""Bans by network for IPv6 clients (a /64 each), per address for IPv4, and the honeypot
checked before anything else in a login body."""

import itertools
import urllib.parse

import pytest

from harness import assert_error, assert_json, assert_ok, uniq

_nets = itertools.count(1)
_ips = itertools.count(1)


def new_net():
    """A /64 of this module's own: 2001:db8:64:N::/64."""
    return f"2001:db8:64:{next(_nets):x}"


def new_ip():
    """An IPv4 client address of this module's own (198.19.0.x, a benchmarking range)."""
    n = next(_ips)
    assert n < 255, "test_bans_subnet ran out of client addresses"
    return f"198.19.0.{n}"


def bans(srv):
    return assert_json(srv.api("GET", "/api/bans", token=srv.admin_token), 200)


def listed(srv, ip):
    return [b for b in bans(srv) if b["ip"] == ip]


def me(srv, key, ip):
    return srv.api("GET", "/api/v1/me", headers={"X-Api-Key": key}, ip=ip)


def unban(srv, form):
    return srv.api("DELETE", "/api/bans/" + urllib.parse.quote(form, safe=""),
                   token=srv.admin_token)


def new_key(srv):
    return assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token,
                               json={"name": uniq("netkey"), "scopes": ["read"]}), 201)["key"]


def guess_from(srv, ips):
    for ip in ips:
        assert_error(me(srv, "wsk_short", ip), 401)


def test_ipv6_is_counted_and_banned_by_64(fresh_server):
    srv = fresh_server("JournalKeyBanThreshold 5")
    good = new_key(srv)
    net = new_net()
    # Five wrong keys, each from another address of one /64: one client.
    guess_from(srv, [f"{net}::{i:x}" for i in range(1, 6)])
    ban = listed(srv, f"{net}::/64")
    assert len(ban) == 1 and ban[0]["reason"] == "apikey-bruteforce", bans(srv)
    assert len(bans(srv)) == 1
    for ip in (f"{net}::1", f"{net}:ffff:ffff:ffff:ffff", f"{net.upper()}:0:0:0:42"):
        assert_error(me(srv, good, ip), 403)
        assert_error(srv.api("POST", "/api/auth/login", ip=ip,
                             json={"username": srv.admin_username,
                                   "password": srv.admin_password}), 403)
    assert_json(me(srv, good, new_net() + "::1"), 200)  # the next /64 is another client

    # IPv4 stays per address: five addresses of one /24 are five clients.
    guess_from(srv, [new_ip() for _ in range(5)])
    assert len(bans(srv)) == 1


def test_lift_a_64_ban_by_its_listed_form_or_an_address_inside(fresh_server):
    # httpd refuses an encoded slash in a path (404) unless told otherwise.
    srv = fresh_server("JournalKeyBanThreshold 2\nAllowEncodedSlashes NoDecode")
    good = new_key(srv)
    net = new_net()
    guess_from(srv, [f"{net}::1", f"{net}::2"])
    assert_error(me(srv, good, f"{net}::3"), 403)
    assert_ok(unban(srv, f"{net}::/64"))
    assert bans(srv) == []
    assert_json(me(srv, good, f"{net}::3"), 200)
    # The counts of the /64 were cleared with the ban: one more wrong key does not ban.
    guess_from(srv, [f"{net}::4"])
    assert bans(srv) == []

    guess_from(srv, [f"{net}::5"])
    assert_error(me(srv, good, f"{net}::6"), 403)
    assert_error(unban(srv, new_net() + "::1"), 404)
    assert_ok(unban(srv, f"{net}:1:2:3:4"))  # any address inside lifts it
    assert bans(srv) == []
    assert_error(unban(srv, f"{net}::/64"), 404)
    assert_json(me(srv, good, f"{net}::6"), 200)


ROBOT_BODIES = [
    {"website": "http://spam.example"},
    {"username": 42, "website": "x"},
    {"username": "admin", "password": ["x"], "website": "x"},
    {"username": "admin", "password": "x", "website": "x", "unknown_field": 1},
    {"password": "", "website": " "},
    {"website": 7},
]


@pytest.mark.parametrize("body", ROBOT_BODIES)
def test_honeypot_bans_whatever_else_the_body_holds(server, body):
    ip = new_ip()
    try:
        assert_error(server.api("POST", "/api/auth/login", json=body, ip=ip), 403)
        ban = listed(server, ip)
        assert len(ban) == 1 and ban[0]["reason"] == "honeypot", bans(server)
        assert_error(server.api("POST", "/api/auth/login", ip=ip,
                                json={"username": server.admin_username,
                                      "password": server.admin_password}), 403)
    finally:
        if listed(server, ip):
            assert_ok(unban(server, ip))


@pytest.mark.parametrize("body,field", [
    ({"website": ""}, "username"),
    ({"website": None, "username": "admin"}, "password"),
])
def test_empty_honeypot_is_a_person(server, body, field):
    ip = new_ip()
    assert_error(server.api("POST", "/api/auth/login", json=body, ip=ip), 400, field)
    assert listed(server, ip) == []
