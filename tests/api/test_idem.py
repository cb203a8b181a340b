"""Idempotency-Key on POST (docs/integrators.md, "Retrying safely"): a repeat replays the first
answer and changes nothing, another request under the same key is 422, a repeat while the
first still runs is 409; answers are kept per caller, in the database."""

import hashlib
import json
import threading

import pytest

from harness import assert_error, assert_json, sql_exec, sql_int, uniq

NO_SUCH_ID = 9_000_000_000_000


def create_key(server, scopes=("read", "write")):
    body = {"name": uniq("idemkey"), "scopes": list(scopes)}
    return assert_json(server.api("POST", "/api/api-keys", token=server.admin_token, json=body),
                       201)


def post(server, key, path, body, idem=None, raw=None):
    headers = {"X-Api-Key": key, "Content-Type": "application/json"}
    if idem is not None:
        headers["Idempotency-Key"] = idem
    data = raw if raw is not None else json.dumps(body)
    return server.api("POST", path, headers=headers, data=data)


def entries_named(server, name):
    return sql_int(server, f"SELECT COUNT(*) FROM entries WHERE student_name = '{name}'")


@pytest.fixture
def world(server):
    branch = server.create_branch()
    return {"group": server.create_group(branch["id"]), "key": create_key(server)}


def test_five_retries_create_one_entry(server, world):
    name = uniq("Idem")
    body = {"student_name": name, "group_id": world["group"]["id"], "description": "once"}
    idem = uniq("retry")
    first = post(server, world["key"]["key"], "/api/v1/entries", body, idem)
    created = assert_json(first, 201)
    assert "Idempotent-Replayed" not in first.headers
    for _ in range(4):
        again = post(server, world["key"]["key"], "/api/v1/entries", body, idem)
        assert assert_json(again, 201) == created
        assert again.headers.get("Idempotent-Replayed") == "true"
        assert again.headers.get("RateLimit-Limit"), "a replay is still a counted request"
    assert entries_named(server, name) == 1


def test_without_the_header_every_post_runs(server, world):
    name = uniq("NoIdem")
    body = {"student_name": name, "group_id": world["group"]["id"]}
    for _ in range(2):
        assert_json(post(server, world["key"]["key"], "/api/v1/entries", body), 201)
    assert entries_named(server, name) == 2


def test_same_key_other_body_is_422_and_changes_nothing(server, world):
    name = uniq("Idem")
    idem = uniq("k")
    g = world["group"]["id"]
    assert_json(post(server, world["key"]["key"], "/api/v1/entries",
                     {"student_name": name, "group_id": g}, idem), 201)
    r = post(server, world["key"]["key"], "/api/v1/entries",
             {"student_name": name + "x", "group_id": g}, idem)
    assert_error(r, 422, "Idempotency-Key")
    assert entries_named(server, name + "x") == 0
    # Another path under the same key is another request too.
    r = post(server, world["key"]["key"], f"/api/v1/entries/{NO_SUCH_ID}/ai/recheck", {}, idem)
    assert_error(r, 422, "Idempotency-Key")


def test_keys_are_per_caller(server, world):
    other = create_key(server)
    idem = uniq("shared")
    g = world["group"]["id"]
    name = uniq("Per")
    for k in (world["key"], other):
        r = post(server, k["key"], "/api/v1/entries", {"student_name": name, "group_id": g}, idem)
        assert_json(r, 201)
        assert "Idempotent-Replayed" not in r.headers
    assert entries_named(server, name) == 2


def test_a_refusal_is_replayed_too(server, world):
    idem = uniq("bad")
    first = post(server, world["key"]["key"], "/api/v1/entries", {"group_id": 1}, idem)
    err = assert_error(first, 400, "student_name")
    again = post(server, world["key"]["key"], "/api/v1/entries", {"group_id": 1}, idem)
    assert assert_json(again, 400) == err
    assert again.headers.get("Idempotent-Replayed") == "true"


def test_malformed_keys_are_400(server, world):
    g = world["group"]["id"]
    name = uniq("Bad")
    for idem in ("x" * 256, "has space", "tab\there"):
        r = post(server, world["key"]["key"], "/api/v1/entries",
                 {"student_name": name, "group_id": g}, idem)
        assert_error(r, 400, "Idempotency-Key")
    assert entries_named(server, name) == 0
    r = post(server, world["key"]["key"], "/api/v1/entries",
             {"student_name": name, "group_id": g}, "x" * 255)
    assert_json(r, 201)


def fingerprint(method, path, query, body):
    head = "\n".join([method, path, query, "", hashlib.sha256(body).hexdigest()])
    return hashlib.sha256(head.encode()).hexdigest()


def test_repeat_while_the_first_runs_is_409(server, world):
    """The first request's reservation (no answer yet) stands in the database, as while it
    runs in another process: a repeat is refused, not run."""
    idem = uniq("running")
    raw = json.dumps({"student_name": uniq("Run"), "group_id": world["group"]["id"]}).encode()
    fp = fingerprint("POST", "/api/v1/entries", "", raw)
    sql_exec(server, "INSERT INTO idempotency_keys (owner, idem_key, fingerprint, created_at,"
                     f" expires_at) VALUES ('key:{world['key']['id']}', '{idem}', '{fp}',"
                     " '2099-01-01T00:00:00Z', '2099-01-02T00:00:00Z')")
    r = post(server, world["key"]["key"], "/api/v1/entries", None, idem, raw=raw)
    assert_error(r, 409, "still running")
    assert r.headers.get("Retry-After") == "1"
    assert entries_named(server, json.loads(raw)["student_name"]) == 0


def test_abandoned_and_expired_reservations_run_again(server, world):
    owner = f"key:{world['key']['id']}"
    for idem, status, created, expires in (
            (uniq("abandoned"), "NULL", "2000-01-01T00:00:00Z", "2099-01-01T00:00:00Z"),
            (uniq("expired"), "201", "2000-01-01T00:00:00Z", "2000-01-02T00:00:00Z")):
        name = uniq("Again")
        raw = json.dumps({"student_name": name, "group_id": world["group"]["id"]}).encode()
        fp = fingerprint("POST", "/api/v1/entries", "", raw)
        sql_exec(server, "INSERT INTO idempotency_keys (owner, idem_key, fingerprint, status,"
                         f" body, created_at, expires_at) VALUES ('{owner}', '{idem}', '{fp}',"
                         f" {status}, '{{}}', '{created}', '{expires}')")
        r = post(server, world["key"]["key"], "/api/v1/entries", None, idem, raw=raw)
        assert_json(r, 201)
        assert "Idempotent-Replayed" not in r.headers
        assert entries_named(server, name) == 1


def test_concurrent_repeats_create_one_entry(server, world):
    name = uniq("Burst")
    raw = json.dumps({"student_name": name, "group_id": world["group"]["id"]})
    idem = uniq("burst")
    start = threading.Barrier(5)
    answers = []

    def one():
        start.wait()
        answers.append(post(server, world["key"]["key"], "/api/v1/entries", None, idem,
                            raw=raw))

    threads = [threading.Thread(target=one) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = {a.json()["id"] for a in answers if a.status_code == 201}
    assert len(ids) == 1, [(a.status_code, a.text) for a in answers]
    assert all(a.status_code in (201, 409) for a in answers), [a.status_code for a in answers]
    assert entries_named(server, name) == 1


def test_admin_interface_posts_with_a_session(server, world):
    branch_name = uniq("IdemBranch")
    idem = uniq("session")
    headers = {"Idempotency-Key": idem}
    first = server.api("POST", "/api/branches", token=server.admin_token,
                       json={"name": branch_name}, headers=headers)
    created = assert_json(first, 201)
    again = server.api("POST", "/api/branches", token=server.admin_token,
                       json={"name": branch_name}, headers=headers)
    assert assert_json(again, 201) == created
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert sql_int(server, f"SELECT COUNT(*) FROM branches WHERE name = '{branch_name}'") == 1


def test_upload_fingerprint_covers_the_bytes(server, world):
    e = assert_json(post(server, world["key"]["key"], "/api/v1/entries",
                         {"student_name": uniq("Up"), "group_id": world["group"]["id"]}), 201)
    idem = uniq("upload")
    path = f"/api/entries/{e['id']}/files"
    h = {"Idempotency-Key": idem, "Content-Type": "text/plain", "X-File-Name": "a.txt"}
    first = server.api("POST", path, token=server.admin_token, data=b"one", headers=h)
    f = assert_json(first, 201)
    again = server.api("POST", path, token=server.admin_token, data=b"one", headers=h)
    assert assert_json(again, 201) == f
    other = server.api("POST", path, token=server.admin_token, data=b"two", headers=h)
    assert_error(other, 422, "Idempotency-Key")
    assert sql_int(server, f"SELECT COUNT(*) FROM entry_files WHERE entry_id = {e['id']}") == 1
