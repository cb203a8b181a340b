"""The tutor/admin chat (docs/events.md, "Chat"): one thread per tutor, admins reach every
thread, a tutor only their own (404 otherwise); messages of 1-4000 characters; paging with
before_id; unread counts and read marks; GET /api/chat/stream with chat_message and
chat_read to the thread's tutor and the admins only; the retention purge."""

import json
import time

from harness import assert_error, assert_json
from test_stream import streams  # noqa: F401 (fixture)
from worker_support import execute, rows, set_settings

STREAM = "/api/chat/stream"


def post(srv, token, tutor_id, text):
    return srv.api("POST", f"/api/chat/threads/{tutor_id}/messages", token=token,
                   json={"text": text})


def thread(srv, token, tutor_id):
    got = assert_json(srv.api("GET", "/api/chat/threads", token=token), 200)
    return [t for t in got if t["tutor_id"] == tutor_id]


def test_threads_messages_and_permissions(server):
    srv = server
    admin = srv.admin_token
    b = srv.create_branch()
    t1, tok1 = srv.create_tutor([b["id"]])
    t2, tok2 = srv.create_tutor([b["id"]])
    m1 = assert_json(post(srv, tok1, t1["id"], "  Hello, can I move Tuesday?  "), 201)
    assert m1["text"] == "Hello, can I move Tuesday?" and m1["sender_id"] == t1["id"]
    assert m1["tutor_id"] == t1["id"] and m1["created_at"].endswith("Z")
    m2 = assert_json(post(srv, admin, t1["id"], "Yes"), 201)
    # a tutor sees only their own thread, and cannot reach another's
    mine = assert_json(srv.api("GET", "/api/chat/threads", token=tok1), 200)
    assert [t["tutor_id"] for t in mine] == [t1["id"]]
    assert mine[0]["last_message"]["id"] == m2["id"] and mine[0]["unread"] == 1
    for method, path, body in (("GET", f"/api/chat/threads/{t1['id']}/messages", None),
                               ("POST", f"/api/chat/threads/{t1['id']}/messages", {"text": "x"}),
                               ("POST", f"/api/chat/threads/{t1['id']}/read", None)):
        assert_error(srv.api(method, path, token=tok2, json=body), 404)
    # an admin sees every tutor's thread; a thread of a non-tutor does not exist
    all_threads = assert_json(srv.api("GET", "/api/chat/threads", token=admin), 200)
    ids = [t["tutor_id"] for t in all_threads]
    assert t1["id"] in ids and t2["id"] in ids
    assert thread(srv, admin, t1["id"])[0]["unread"] == 1  # the tutor's message
    assert thread(srv, admin, t2["id"])[0]["last_message"] is None
    admin_id = assert_json(srv.api("GET", "/api/auth/me", token=admin), 200)["user"]["id"]
    assert_error(post(srv, admin, admin_id, "x"), 404)
    assert_error(post(srv, admin, 999999999, "x"), 404)
    # the text is validated
    assert_error(post(srv, tok1, t1["id"], ""), 400, "text")
    assert_error(post(srv, tok1, t1["id"], "   "), 400, "text")
    assert_error(post(srv, tok1, t1["id"], "x" * 4001), 400, "text")
    assert_json(post(srv, tok1, t1["id"], "é" * 4000), 201)
    assert_error(srv.api("POST", f"/api/chat/threads/{t1['id']}/messages", token=tok1,
                         json={"text": "x", "extra": 1}), 400, "extra")
    # read marks: per reader
    r = assert_json(srv.api("POST", f"/api/chat/threads/{t1['id']}/read", token=tok1), 200)
    assert r["last_read_id"] >= m2["id"] and r["user_id"] == t1["id"]
    assert thread(srv, tok1, t1["id"])[0]["unread"] == 0
    assert thread(srv, admin, t1["id"])[0]["unread"] == 2  # the admin has not read


def test_paging_with_before_id(server):
    srv = server
    user, tok = srv.create_tutor([srv.create_branch()["id"]])
    me = user["id"]
    sent = [assert_json(post(srv, tok, me, f"m{i}"), 201)["id"] for i in range(5)]
    page = assert_json(srv.api("GET", f"/api/chat/threads/{me}/messages", token=tok,
                               params={"limit": 2}), 200)
    assert [m["id"] for m in page] == sent[3:]
    page = assert_json(srv.api("GET", f"/api/chat/threads/{me}/messages", token=tok,
                               params={"limit": 2, "before_id": sent[3]}), 200)
    assert [m["id"] for m in page] == sent[1:3]
    assert_error(srv.api("GET", f"/api/chat/threads/{me}/messages", token=tok,
                         params={"before_id": "x"}), 400, "before_id")


def test_chat_stream_reaches_the_thread_only(server, streams):
    srv = server
    b = srv.create_branch()
    t1, tok1 = srv.create_tutor([b["id"]])
    t2, tok2 = srv.create_tutor([b["id"]])
    c1 = streams(srv, token=tok1, path=STREAM)
    c2 = streams(srv, token=tok2, path=STREAM)
    ca = streams(srv, token=srv.admin_token, path=STREAM)
    assert c1.status == c2.status == ca.status == 200
    m = assert_json(post(srv, srv.admin_token, t1["id"], "For t1"), 201)
    for s in (c1, ca):
        got = s.until(lambda e: e["event"] == "chat_message" and
                      json.loads(e["data"])["id"] == m["id"])
        assert json.loads(got[-1]["data"])["text"] == "For t1"
    assert_json(srv.api("POST", f"/api/chat/threads/{t1['id']}/read", token=tok1), 200)
    got = ca.until(lambda e: e["event"] == "chat_read")
    assert json.loads(got[-1]["data"])["tutor_id"] == t1["id"]
    m2 = assert_json(post(srv, tok2, t2["id"], "t2 own"), 201)
    got = c2.until(lambda e: e["event"] == "chat_message")
    assert json.loads(got[-1]["data"])["id"] == m2["id"]  # t1's events never reached t2
    assert all(e["event"] != "chat_message" or json.loads(e["data"])["tutor_id"] == t1["id"]
               for e in c1.quiet(1))


def test_retention_purge(fresh_server):
    srv = fresh_server("JournalHousekeepingInterval 5s")
    set_settings(srv, chat_retention_days=2)
    user, tok = srv.create_tutor([srv.create_branch()["id"]])
    me = user["id"]
    assert_json(post(srv, tok, me, "young"), 201)
    old = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3 * 86400))
    execute(srv, "INSERT INTO chat_messages (tutor_id, sender_id, text, created_at) VALUES"
                 f" ({me}, {me}, 'old', '{old}')")
    deadline = time.monotonic() + 30
    while rows(srv, "SELECT COUNT(*) FROM chat_messages WHERE text = 'old'")[0][0] != "0":
        assert time.monotonic() < deadline, "the old message was not purged within 30 s"
        time.sleep(0.5)
    assert rows(srv, "SELECT COUNT(*) FROM chat_messages WHERE text = 'young'")[0][0] == "1"
