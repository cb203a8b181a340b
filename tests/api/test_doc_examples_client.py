"""docs/examples/journal_sync.py against the real server: a sync with cursors and
updated_since ends equal to the server (deletions included), a POST retried after a lost answer
creates one entry, and 429 is waited out with Retry-After."""

import importlib.util
import time
import urllib.error

from harness import REPO, assert_json, uniq

SETTLE = 5
spec = importlib.util.spec_from_file_location("journal_sync",
                                              REPO / "docs" / "examples" / "journal_sync.py")
journal_sync = importlib.util.module_from_spec(spec)
spec.loader.exec_module(journal_sync)


def restricted_key(server, branch_id, per_min=10000):
    return assert_json(server.api("POST", "/api/api-keys", token=server.admin_token, json={
        "name": uniq("client"), "scopes": ["read", "write"], "branch_ids": [branch_id],
        "rate_limit_per_min": per_min}), 201)["key"]


def test_sync_keeps_a_copy_equal_to_the_server(server):
    b = server.create_branch()
    g = server.create_group(b["id"])
    client = journal_sync.Client(server.base_url, restricted_key(server, b["id"]))
    made = [client.create_entry(uniq("Sync"), g["id"], "v1")["id"] for _ in range(7)]
    state = {}
    time.sleep(SETTLE + 1.5)
    client.sync_entries(state, limit=3)
    assert sorted(map(int, state["entries"])) == sorted(made)
    h = {"X-Api-Key": client.key}
    assert_json(server.api("DELETE", f"/api/v1/entries/{made[0]}", headers=h), 200)
    assert_json(server.api("PUT", f"/api/v1/entries/{made[1]}", headers=h,
                           json={"description": "v2"}), 200)
    time.sleep(SETTLE + 1.5)
    assert client.sync_entries(state, limit=3) == 2
    assert str(made[0]) not in state["entries"]
    assert state["entries"][str(made[1])]["description"] == "v2"
    assert len(state["entries"]) == 6


def test_a_post_whose_answer_was_lost_is_retried_once(server):
    b = server.create_branch()
    g = server.create_group(b["id"])
    client = journal_sync.Client(server.base_url, restricted_key(server, b["id"]),
                                 sleep=lambda s: None)
    real, calls = client.open, []

    def lose_first_answer(req, timeout):
        calls.append(req.get_header("Idempotency-key"))
        answer = real(req, timeout=timeout)
        if len(calls) == 1:
            answer.close()
            raise urllib.error.URLError("connection reset")  # the entry exists already
        return answer

    client.open = lose_first_answer
    name = uniq("Once")
    e = client.create_entry(name, g["id"])
    assert len(calls) == 2 and calls[0] == calls[1], calls
    listed = assert_json(server.api("GET", "/api/v1/entries", headers={"X-Api-Key": client.key},
                                    params={"student": name}), 200)["items"]
    assert [x["id"] for x in listed] == [e["id"]]


def test_rate_limit_is_waited_out(server):
    b = server.create_branch()
    waits = []
    client = journal_sync.Client(server.base_url, restricted_key(server, b["id"], per_min=2),
                                 sleep=waits.append, retries=0)
    client.request("GET", "/api/v1/me")
    client.request("GET", "/api/v1/me")  # the last of the window: RateLimit-Remaining 0
    assert waits and 1 <= waits[-1] <= 60, waits
    try:
        client.request("GET", "/api/v1/me")
    except journal_sync.ApiError as e:
        assert e.status == 429 and e.body["code"] == "rate_limited"
    else:
        raise AssertionError("the third request of the minute was not refused")
    before = len(waits)
    retrying = journal_sync.Client(server.base_url, client.key, sleep=waits.append, retries=1)
    try:
        retrying.request("GET", "/api/v1/me")
    except journal_sync.ApiError as e:
        assert e.status == 429
    assert len(waits) == before + 1 and 1 <= waits[-1] <= 60, waits[before:]
