"""Login, sessions, logout, /api/auth/me."""

import datetime as dt
import time

import pytest

from harness import TOKEN_RE, assert_error, assert_json, assert_ok, random_ip, uniq

USER_KEYS = {"id", "username", "role", "active", "branch_ids"}


def parse_time(value):
    assert isinstance(value, str), f"timestamp {value!r} is not a string"
    t = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    assert t.tzinfo is not None, f"timestamp {value!r} has no UTC offset"
    return t


def login_raw(server, username, password, ip=None, **extra):
    body = {"username": username, "password": password}
    body.update(extra)
    return server.api("POST", "/api/auth/login", json=body, ip=ip or random_ip())


def check_user(user, username, role, active=True, branch_ids=()):
    assert USER_KEYS <= set(user), f"user record lacks {USER_KEYS - set(user)}: {user}"
    assert isinstance(user["id"], int) and user["id"] > 0
    assert user["username"] == username
    assert user["role"] == role
    assert user["active"] is active
    assert sorted(user["branch_ids"]) == sorted(branch_ids)


# ---- login ----------------------------------------------------------------------------------
def test_login_success(server):
    before = dt.datetime.now(dt.timezone.utc)
    r = login_raw(server, server.admin_username, server.admin_password)
    body = assert_json(r, 200)
    assert TOKEN_RE.match(body["token"]), f"token {body['token']!r} is not 64 hex characters"
    assert parse_time(body["expires_at"]) > before
    check_user(body["user"], server.admin_username, "admin")


def test_login_tokens_are_distinct(server):
    t1 = server.login(server.admin_username, server.admin_password)
    t2 = server.login(server.admin_username, server.admin_password)
    assert t1 != t2


def test_login_tutor_returns_branch_ids(server):
    b1, b2 = server.create_branch(), server.create_branch()
    user = server.create_user(role="tutor", branch_ids=[b1["id"], b2["id"]])
    body = assert_json(login_raw(server, user["username"], user["_password"]), 200)
    check_user(body["user"], user["username"], "tutor", branch_ids=[b1["id"], b2["id"]])
    assert body["user"]["id"] == user["id"]


def test_wrong_password_unknown_and_inactive_user_look_the_same(server):
    user = server.create_user()
    inactive = server.create_user(active=False)
    wrong = login_raw(server, user["username"], user["_password"] + "x")
    unknown = login_raw(server, uniq("nobody"), user["_password"])
    sleeping = login_raw(server, inactive["username"], inactive["_password"])
    for r in (wrong, unknown, sleeping):
        assert_error(r, 401)
    assert wrong.content == unknown.content == sleeping.content


@pytest.mark.parametrize("body,field", [
    ({"password": "secret-123"}, "username"),
    ({"username": "admin"}, "password"),
    ({"username": 123, "password": "secret-123"}, "username"),
    ({"username": "admin", "password": ["secret-123"]}, "password"),
    ({"username": None, "password": "secret-123"}, "username"),
])
def test_login_validation(server, body, field):
    r = server.api("POST", "/api/auth/login", json=body, ip=random_ip())
    assert_error(r, 400, field)


def test_login_empty_body_is_400(server):
    r = server.api("POST", "/api/auth/login", json={}, ip=random_ip())
    assert_error(r, 400, "username")


def test_inactive_user_cannot_log_in(server):
    user = server.create_user(active=False)
    assert user["active"] is False
    assert_error(login_raw(server, user["username"], user["_password"]), 401)


def test_username_is_case_insensitive(server):
    name = uniq("MixedCase")
    user = server.create_user(username=name)
    assert user["username"] == name.lower()
    for variant in (name, name.upper(), name.lower()):
        body = assert_json(login_raw(server, variant, user["_password"]), 200)
        assert body["user"]["id"] == user["id"]
        assert body["user"]["username"] == name.lower()
    # The lower-case spelling is the same account.
    r = server.api("POST", "/api/users", token=server.admin_token,
                   json={"username": name.lower(), "password": "another-pw-1", "role": "tutor"})
    assert_error(r, 409)


def test_honeypot_field(server):
    user = server.create_user()
    # Empty honeypot: a normal login.
    assert_json(login_raw(server, user["username"], user["_password"], website=""), 200)
    # Filled honeypot: refused even with the right password, and the address is banned at
    # once (403; test_bans.py covers the ban itself).
    r = login_raw(server, user["username"], user["_password"], website="http://spam.example")
    body = assert_error(r, 403)
    assert "token" not in body


# ---- session use ----------------------------------------------------------------------------
def test_me(server):
    b = server.create_branch()
    user, token = server.create_tutor(branch_ids=[b["id"]])
    body = assert_json(server.api("GET", "/api/auth/me", token=token), 200)
    check_user(body["user"], user["username"], "tutor", branch_ids=[b["id"]])
    assert body["user"]["id"] == user["id"]
    body = assert_json(server.api("GET", "/api/auth/me", token=server.admin_token), 200)
    check_user(body["user"], server.admin_username, "admin")


@pytest.mark.parametrize("token", [None, "", "garbage", "0" * 64, "g" * 64, "A" * 64,
                                   "a" * 63, "a" * 65])
def test_me_without_valid_token_is_401(server, token):
    assert_error(server.api("GET", "/api/auth/me", token=token), 401)


def test_logout(server):
    user, token = server.create_tutor()
    assert_json(server.api("GET", "/api/auth/me", token=token), 200)
    assert_ok(server.api("POST", "/api/auth/logout", token=token))
    assert_error(server.api("GET", "/api/auth/me", token=token), 401)
    # Logging out again with the dead token is refused too.
    assert_error(server.api("POST", "/api/auth/logout", token=token), 401)


def test_logout_ends_only_that_session(server):
    user = server.create_user()
    t1 = server.login(user["username"], user["_password"])
    t2 = server.login(user["username"], user["_password"])
    assert_ok(server.api("POST", "/api/auth/logout", token=t1))
    assert_error(server.api("GET", "/api/auth/me", token=t1), 401)
    me = assert_json(server.api("GET", "/api/auth/me", token=t2), 200)["user"]
    assert me["id"] == user["id"]


def test_logout_without_token_is_401(server):
    assert_error(server.api("POST", "/api/auth/logout"), 401)


# ---- session lifetime -----------------------------------------------------------------------
def test_session_lifetime_directive(fresh_server):
    srv = fresh_server("JournalSessionLifetime 2h")
    now = time.time()
    body = assert_json(login_raw(srv, srv.admin_username, srv.admin_password), 200)
    expires = parse_time(body["expires_at"]).timestamp()
    assert abs(expires - (now + 2 * 3600)) <= 60, \
        f"expires_at {body['expires_at']} is not 2 h ahead (delta {expires - now:.0f} s)"
