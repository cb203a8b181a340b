"""branch_ids of API keys: null (or absent) for every branch, a non-empty list for some; an
empty list is refused, so that "no branch" can never turn into "every branch"."""

import pytest

from harness import assert_error, assert_json, uniq

EMPTY_MSG = "branch_ids: omit branch_ids or send null for an unrestricted key"


def create(server, **fields):
    body = {"name": uniq("bkey"), "scopes": ["read"]}
    body.update(fields)
    return server.api("POST", "/api/api-keys", token=server.admin_token, json=body)


def record(server, key_id):
    return assert_json(server.api("GET", f"/api/api-keys/{key_id}", token=server.admin_token),
                       200)


def listed(server, key_id):
    keys = assert_json(server.api("GET", "/api/api-keys", token=server.admin_token), 200)
    found = [k for k in keys if k["id"] == key_id]
    assert len(found) == 1, found
    return found[0]


def me(server, key):
    return assert_json(server.api("GET", "/api/v1/me", headers={"X-Api-Key": key}), 200)


def names(server):
    return {k["name"] for k in assert_json(server.api("GET", "/api/api-keys",
                                                      token=server.admin_token), 200)}


def test_empty_branch_ids_on_create_is_400(server):
    body = {"name": uniq("empty"), "scopes": ["read", "write"], "branch_ids": []}
    r = server.api("POST", "/api/api-keys", token=server.admin_token, json=body)
    assert assert_error(r, 400)["error"] == EMPTY_MSG
    assert body["name"] not in names(server)


def test_empty_branch_ids_on_update_is_400(server):
    b = server.create_branch()
    k = assert_json(create(server, branch_ids=[b["id"]]), 201)
    before = record(server, k["id"])
    r = server.api("PUT", f"/api/api-keys/{k['id']}", token=server.admin_token,
                   json={"name": uniq("renamed"), "branch_ids": []})
    assert assert_error(r, 400)["error"] == EMPTY_MSG
    assert record(server, k["id"]) == before
    assert me(server, k["key"])["user"] == {"role": "tutor", "branch_ids": [b["id"]],
                                            "can_read": True, "can_write": False}


@pytest.mark.parametrize("fields", [{}, {"branch_ids": None}])
def test_unrestricted_key_shows_null(server, fields):
    k = assert_json(create(server, **fields), 201)
    assert k["branch_ids"] is None
    assert record(server, k["id"])["branch_ids"] is None
    assert listed(server, k["id"])["branch_ids"] is None
    body = me(server, k["key"])
    assert body["user"]["role"] == "admin"
    assert body["user"]["branch_ids"] is None and body["key"]["branch_ids"] is None


def test_restriction_is_set_and_lifted_with_null(server):
    b1, b2 = server.create_branch(), server.create_branch()
    k = assert_json(create(server), 201)
    r = server.api("PUT", f"/api/api-keys/{k['id']}", token=server.admin_token,
                   json={"branch_ids": [b2["id"], b1["id"], b2["id"]]})
    assert assert_json(r, 200)["branch_ids"] == sorted([b1["id"], b2["id"]])
    assert listed(server, k["id"])["branch_ids"] == sorted([b1["id"], b2["id"]])
    assert me(server, k["key"])["user"]["branch_ids"] == sorted([b1["id"], b2["id"]])
    r = server.api("PUT", f"/api/api-keys/{k['id']}", token=server.admin_token,
                   json={"branch_ids": None})
    assert assert_json(r, 200)["branch_ids"] is None
    assert me(server, k["key"])["user"] == {"role": "admin", "branch_ids": None,
                                            "can_read": True, "can_write": False}


def test_users_keep_empty_branch_ids(server):
    """For users an empty list means "member of no branch": a tutor without branches sees
    none (an admin sees every branch through the role, whatever the list)."""
    b = server.create_branch()
    user, token = server.create_tutor(branch_ids=[])
    assert user["branch_ids"] == []
    assert assert_json(server.api("GET", "/api/branches", token=token), 200) == []
    assert_error(server.api("GET", f"/api/branches/{b['id']}", token=token), 404)
