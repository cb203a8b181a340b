"""User administration: /api/users (admin only)."""

import pytest

from harness import assert_error, assert_json, assert_ok, random_ip, uniq

USER_KEYS = {"id", "username", "role", "active", "branch_ids"}


def no_secret_keys(value, path="$"):
    """Fails when any key anywhere in value mentions a password or hash."""
    if isinstance(value, dict):
        for k, v in value.items():
            assert "pass" not in k.lower() and "hash" not in k.lower(), f"secret field {path}.{k}"
            no_secret_keys(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            no_secret_keys(v, f"{path}[{i}]")


def assert_no_secrets(r):
    no_secret_keys(r.json())
    for marker in ("$2a$", "$2b$", "$2y$"):
        assert marker not in r.text, f"bcrypt hash in response: {r.text[:300]}"


def get_user(server, user_id):
    users = assert_json(server.api("GET", "/api/users", token=server.admin_token), 200)
    found = [u for u in users if u["id"] == user_id]
    return found[0] if found else None


# ---- access control -------------------------------------------------------------------------
@pytest.mark.parametrize("method,path,body", [
    ("GET", "/api/users", None),
    ("POST", "/api/users", {"username": uniq("x-tutor-made"), "password": "long-enough",
                             "role": "admin"}),
    ("PUT", "/api/users/{self}", {"role": "admin"}),
    ("DELETE", "/api/users/{admin}", None),
])
def test_tutor_is_forbidden(server, method, path, body):
    admin_id = assert_json(server.api("GET", "/api/auth/me", token=server.admin_token),
                           200)["user"]["id"]
    user, token = server.create_tutor()
    path = path.format(self=user["id"], admin=admin_id)
    assert_error(server.api(method, path, token=token, json=body), 403)
    # Nothing changed.
    assert get_user(server, user["id"])["role"] == "tutor"
    assert get_user(server, admin_id) is not None
    assert get_user(server, admin_id)["active"] is True


@pytest.mark.parametrize("method,path,body", [
    ("GET", "/api/users", None),
    ("POST", "/api/users", {"username": uniq("x-anon-made"), "password": "long-enough",
                             "role": "admin"}),
    ("PUT", "/api/users/1", {"role": "tutor"}),
    ("DELETE", "/api/users/1", None),
])
def test_no_token_is_401(server, method, path, body):
    assert_error(server.api(method, path, json=body), 401)


# ---- list / create --------------------------------------------------------------------------
def test_list_users(server):
    user = server.create_user()
    r = server.api("GET", "/api/users", token=server.admin_token)
    users = assert_json(r, 200)
    assert isinstance(users, list)
    by_name = {u["username"]: u for u in users}
    assert server.admin_username in by_name and user["username"] in by_name
    for u in users:
        assert USER_KEYS <= set(u), f"user record lacks {USER_KEYS - set(u)}: {u}"
    assert by_name[user["username"]]["id"] == user["id"]
    assert by_name[server.admin_username]["role"] == "admin"
    assert_no_secrets(r)


def test_create_user(server):
    b1, b2 = server.create_branch(), server.create_branch()
    name = uniq("tutor")
    r = server.api("POST", "/api/users", token=server.admin_token,
                   json={"username": name, "password": "s3cret-pass", "role": "tutor",
                         "branch_ids": [b2["id"], b1["id"]]})
    user = assert_json(r, 201)
    assert_no_secrets(r)
    assert USER_KEYS <= set(user)
    assert isinstance(user["id"], int) and user["id"] > 0
    assert user["username"] == name
    assert user["role"] == "tutor"
    assert user["active"] is True  # default
    assert sorted(user["branch_ids"]) == sorted([b1["id"], b2["id"]])
    assert get_user(server, user["id"])["username"] == name
    # The password works.
    assert server.login(name, "s3cret-pass")


def test_create_user_defaults(server):
    name = uniq("admin2")
    user = assert_json(server.api("POST", "/api/users", token=server.admin_token,
                                  json={"username": name, "password": "s3cret-pass",
                                        "role": "admin"}), 201)
    assert user["role"] == "admin"
    assert user["active"] is True
    assert user["branch_ids"] == []


def test_create_inactive_user(server):
    user = server.create_user(active=False)
    assert user["active"] is False
    assert get_user(server, user["id"])["active"] is False


@pytest.mark.parametrize("patch,field", [
    ({"password": "short7!"}, "password"),
    ({"password": ""}, "password"),
    ({"password": None}, "password"),
    ({"role": "superuser"}, "role"),
    ({"role": ""}, "role"),
    ({"role": "Admin "}, "role"),
    ({"username": ""}, "username"),
    ({"username": "   "}, "username"),
    ({"username": 42}, "username"),
    ({"active": "yes"}, "active"),
    ({"branch_ids": [999999999]}, "branch_ids"),
    ({"branch_ids": "1"}, "branch_ids"),
    ({"branch_ids": ["x"]}, "branch_ids"),
])
def test_create_user_validation(server, patch, field):
    body = {"username": uniq("val"), "password": "long-enough-1", "role": "tutor"}
    body.update(patch)
    r = server.api("POST", "/api/users", token=server.admin_token, json=body)
    assert_error(r, 400, field)
    if isinstance(body["username"], str) and body["username"].strip():
        assert body["username"] not in {u["username"] for u in
                                        server.api("GET", "/api/users",
                                                   token=server.admin_token).json()}


@pytest.mark.parametrize("missing", ["username", "password", "role"])
def test_create_user_missing_field(server, missing):
    body = {"username": uniq("miss"), "password": "long-enough-1", "role": "tutor"}
    del body[missing]
    assert_error(server.api("POST", "/api/users", token=server.admin_token, json=body), 400,
                 missing)


def test_password_of_exactly_8_is_accepted(server):
    user = server.create_user(password="12345678")
    assert server.login(user["username"], "12345678")


def test_create_duplicate_username_is_409(server):
    user = server.create_user()
    r = server.api("POST", "/api/users", token=server.admin_token,
                   json={"username": user["username"], "password": "other-pass-1",
                         "role": "tutor"})
    assert_error(r, 409)
    # The original account keeps its password.
    assert server.login(user["username"], user["_password"])


def test_unknown_field_in_user_body(server):
    r = server.api("POST", "/api/users", token=server.admin_token,
                   json={"username": uniq("u"), "password": "long-enough-1", "role": "tutor",
                         "is_superuser": True})
    assert_error(r, 400, "is_superuser")


# ---- update ---------------------------------------------------------------------------------
def test_update_partial(server):
    b1, b2 = server.create_branch(), server.create_branch()
    user = server.create_user(branch_ids=[b1["id"]])
    path = f"/api/users/{user['id']}"
    r = server.api("PUT", path, token=server.admin_token, json={"branch_ids": [b2["id"]]})
    body = assert_json(r, 200)
    assert_no_secrets(r)
    assert body["id"] == user["id"]
    assert body["branch_ids"] == [b2["id"]]
    assert body["username"] == user["username"] and body["role"] == "tutor"
    assert body["active"] is True

    new_name = uniq("Renamed")
    body = assert_json(server.api("PUT", path, token=server.admin_token,
                                  json={"username": new_name}), 200)
    assert body["username"] == new_name.lower()
    assert body["branch_ids"] == [b2["id"]]

    body = assert_json(server.api("PUT", path, token=server.admin_token,
                                  json={"role": "admin"}), 200)
    assert body["role"] == "admin" and body["username"] == new_name.lower()
    listed = get_user(server, user["id"])
    assert listed["role"] == "admin" and listed["username"] == new_name.lower()
    assert listed["branch_ids"] == [b2["id"]]
    # The renamed account logs in with its new name and the unchanged password.
    assert server.login(new_name, user["_password"])


def test_update_branch_ids_changes_visibility(server):
    b1, b2 = server.create_branch(), server.create_branch()
    user = server.create_user(branch_ids=[b1["id"]])
    assert_json(server.api("PUT", f"/api/users/{user['id']}", token=server.admin_token,
                           json={"branch_ids": [b2["id"]]}), 200)
    token = server.login(user["username"], user["_password"])
    me = assert_json(server.api("GET", "/api/auth/me", token=token), 200)["user"]
    assert me["branch_ids"] == [b2["id"]]
    visible = assert_json(server.api("GET", "/api/branches", token=token), 200)
    assert [b["id"] for b in visible] == [b2["id"]]


@pytest.mark.parametrize("patch,field", [
    ({"password": "short"}, "password"),
    ({"role": "root"}, "role"),
    ({"branch_ids": [999999999]}, "branch_ids"),
    ({"active": "yes"}, "active"),
    ({"username": ""}, "username"),
    ({"nickname": "x"}, "nickname"),
])
def test_update_validation(server, patch, field):
    user = server.create_user()
    r = server.api("PUT", f"/api/users/{user['id']}", token=server.admin_token, json=patch)
    assert_error(r, 400, field)
    after = get_user(server, user["id"])
    assert after["role"] == "tutor" and after["username"] == user["username"]
    assert after["active"] is True and after["branch_ids"] == []


def test_update_to_duplicate_username_is_409(server):
    u1, u2 = server.create_user(), server.create_user()
    r = server.api("PUT", f"/api/users/{u2['id']}", token=server.admin_token,
                   json={"username": u1["username"].upper()})
    assert_error(r, 409)
    assert get_user(server, u2["id"])["username"] == u2["username"]


def test_update_unknown_user_is_404(server):
    assert_error(server.api("PUT", "/api/users/987654321", token=server.admin_token,
                            json={"role": "tutor"}), 404)


def test_password_change_revokes_sessions(server):
    user, token = server.create_tutor()
    assert_json(server.api("GET", "/api/auth/me", token=token), 200)
    body = assert_json(server.api("PUT", f"/api/users/{user['id']}", token=server.admin_token,
                                  json={"password": "brand-new-pass"}), 200)
    assert body["id"] == user["id"]
    assert_error(server.api("GET", "/api/auth/me", token=token), 401)
    assert_error(server.api("POST", "/api/auth/login",
                            json={"username": user["username"], "password": user["_password"]},
                            ip=random_ip()), 401)
    assert server.login(user["username"], "brand-new-pass")


def test_deactivation_revokes_sessions(server):
    user, token = server.create_tutor()
    body = assert_json(server.api("PUT", f"/api/users/{user['id']}", token=server.admin_token,
                                  json={"active": False}), 200)
    assert body["active"] is False
    assert_error(server.api("GET", "/api/auth/me", token=token), 401)
    assert_error(server.api("POST", "/api/auth/login",
                            json={"username": user["username"], "password": user["_password"]},
                            ip=random_ip()), 401)
    # Reactivated, the account can log in again (the old session stays dead).
    body = assert_json(server.api("PUT", f"/api/users/{user['id']}", token=server.admin_token,
                                  json={"active": True}), 200)
    assert body["active"] is True
    assert server.login(user["username"], user["_password"])
    assert_error(server.api("GET", "/api/auth/me", token=token), 401)


# ---- delete ---------------------------------------------------------------------------------
def test_delete_user(server):
    user, token = server.create_tutor()
    assert_ok(server.api("DELETE", f"/api/users/{user['id']}", token=server.admin_token))
    assert get_user(server, user["id"]) is None
    assert_error(server.api("GET", "/api/auth/me", token=token), 401)
    assert_error(server.api("DELETE", f"/api/users/{user['id']}", token=server.admin_token), 404)
    assert_error(server.api("PUT", f"/api/users/{user['id']}", token=server.admin_token,
                            json={"role": "tutor"}), 404)


def test_delete_unknown_user_is_404(server):
    assert_error(server.api("DELETE", "/api/users/987654321", token=server.admin_token), 404)


def test_delete_user_who_tutors_a_group(server):
    b = server.create_branch()
    user = server.create_user(branch_ids=[b["id"]])
    group = server.create_group(b["id"], tutor_id=user["id"])
    assert_ok(server.api("DELETE", f"/api/users/{user['id']}", token=server.admin_token))
    after = assert_json(server.api("GET", f"/api/groups/{group['id']}",
                                   token=server.admin_token), 200)
    assert after["tutor_id"] is None


# ---- admin self-protection (own servers: a failure must not break the shared one) -----------
def test_admin_cannot_delete_own_account(fresh_server):
    srv = fresh_server()
    me = assert_json(srv.api("GET", "/api/auth/me", token=srv.admin_token), 200)["user"]
    # Even with another active admin around.
    srv.create_user(role="admin")
    assert_error(srv.api("DELETE", f"/api/users/{me['id']}", token=srv.admin_token), 409)
    assert assert_json(srv.api("GET", "/api/auth/me", token=srv.admin_token),
                       200)["user"]["id"] == me["id"]


def test_last_active_admin_is_protected(fresh_server):
    srv = fresh_server()
    me = assert_json(srv.api("GET", "/api/auth/me", token=srv.admin_token), 200)["user"]
    path = f"/api/users/{me['id']}"
    assert_error(srv.api("PUT", path, token=srv.admin_token, json={"role": "tutor"}), 409)
    assert_error(srv.api("PUT", path, token=srv.admin_token, json={"active": False}), 409)
    assert_json(srv.api("GET", "/api/auth/me", token=srv.admin_token), 200)

    # An inactive second admin does not count.
    other = srv.create_user(role="admin", active=False)
    assert_error(srv.api("PUT", path, token=srv.admin_token, json={"role": "tutor"}), 409)

    # With a second active admin the first may be demoted; then the second is the last one.
    assert_json(srv.api("PUT", f"/api/users/{other['id']}", token=srv.admin_token,
                        json={"active": True}), 200)
    other_token = srv.login(other["username"], other["_password"])
    body = assert_json(srv.api("PUT", path, token=other_token, json={"role": "tutor"}), 200)
    assert body["role"] == "tutor"
    assert_error(srv.api("PUT", f"/api/users/{other['id']}", token=other_token,
                         json={"active": False}), 409)
    assert_error(srv.api("PUT", f"/api/users/{other['id']}", token=other_token,
                         json={"role": "tutor"}), 409)
    users = assert_json(srv.api("GET", "/api/users", token=other_token), 200)
    assert [u["id"] for u in users if u["role"] == "admin" and u["active"]] == [other["id"]]
