"""The event stream GET /api/notifications/stream (docs/events.md): authentication by
X-Auth-Token or a single-use ticket, id/event/data, who sees which events, replay after
Last-Event-ID and the reset past retention, the retry hint and heartbeats, the stream cap
with 503 + Retry-After, streams closed on logout and deactivation, and a graceful restart
that clients resume from with Last-Event-ID."""

import http.client
import json
import queue
import socket
import threading
import time
import urllib.parse

import pytest

from harness import assert_error, assert_json, uniq
from worker_support import apache_k, execute, rows, set_settings  # noqa: F401

PATH = "/api/notifications/stream"
ONE_CHILD = "StartServers 1\nServerLimit 1\nMaxRequestWorkers 64\n"


class Stream:
    """An SSE client on its own connection; parsed messages arrive in .events (a queue of
    dicts with id, event, data, or {"comment": text}); None when the stream ends."""

    def __init__(self, srv, token=None, ticket=None, last_id=None, query_last=None, path=PATH):
        self.conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
        params = {}
        if ticket:
            params["ticket"] = ticket
        if query_last is not None:
            params["last_event_id"] = query_last
        headers = {"Accept": "text/event-stream"}
        if token:
            headers["X-Auth-Token"] = token
        if last_id is not None:
            headers["Last-Event-ID"] = str(last_id)
        url = path + ("?" + urllib.parse.urlencode(params) if params else "")
        self.conn.request("GET", url, headers=headers)
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.headers = self.resp.headers
        self.events = queue.Queue()
        self.raw = []
        if self.status == 200:
            threading.Thread(target=self._read, daemon=True).start()
        else:
            self.body = self.resp.read()

    def _read(self):
        msg = {}
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    break
                line = line.decode().rstrip("\n")
                self.raw.append(line)
                if line == "":
                    if "event" in msg:  # a bare "retry:" is no message
                        self.events.put(msg)
                    msg = {}
                elif line.startswith(":"):
                    self.events.put({"comment": line[1:].strip()})
                else:
                    k, _, v = line.partition(": ")
                    msg[k] = v
        except Exception:  # noqa: BLE001 (closed under the reader by close())
            pass
        self.events.put(None)

    def next(self, timeout=10, skip_comments=True):
        """The next message (comments skipped unless asked); None at the end."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no event within {timeout} s; got {self.raw[-10:]}"
            try:
                m = self.events.get(timeout=left)
            except queue.Empty:
                continue
            if m is None or not (skip_comments and "comment" in m):
                return m

    def until(self, pred, timeout=15):
        """Messages up to and including the first that satisfies pred."""
        seen = []
        deadline = time.monotonic() + timeout
        while True:
            m = self.next(timeout=max(0.1, deadline - time.monotonic()))
            assert m is not None, f"the stream ended before the event; saw {seen}"
            seen.append(m)
            if pred(m):
                return seen

    def ends(self, timeout):
        """True when the stream ends within timeout (messages before the end are skipped)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.events.get(timeout=max(0.05, deadline - time.monotonic())) is None:
                    return True
            except queue.Empty:
                break
        return False

    def quiet(self, seconds):
        """Messages (not comments) arriving within seconds."""
        got = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                m = self.events.get(timeout=max(0.05, deadline - time.monotonic()))
            except queue.Empty:
                break
            if m is None:
                break
            if "comment" not in m:
                got.append(m)
        return got

    def close(self):
        try:
            self.conn.sock and self.conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()


@pytest.fixture
def streams():
    opened = []

    def make(*a, **kw):
        s = Stream(*a, **kw)
        opened.append(s)
        return s
    yield make
    for s in opened:
        s.close()


def data(m):
    return json.loads(m["data"])


def entry_in(srv, group_id, student=None):
    return assert_json(srv.api("POST", "/api/entries", token=srv.admin_token,
                               json={"student_name": student or uniq("S"),
                                     "group_id": group_id}), 201)


def is_note_about(entry_id):
    return lambda m: m.get("event") == "notification" and data(m)["entity_id"] == entry_id


def max_event_id(srv):
    return int(rows(srv, "SELECT COALESCE(MAX(id), 0) FROM events")[0][0])


def test_headers_retry_and_message_format(server, streams):
    srv = server
    g = srv.create_group(srv.create_branch()["id"])
    s = streams(srv, token=srv.admin_token)
    assert s.status == 200
    assert s.headers["Content-Type"].startswith("text/event-stream")
    assert "no-cache" in s.headers["Cache-Control"] and "Content-Length" not in s.headers
    assert s.headers["X-Accel-Buffering"] == "no"
    e = entry_in(srv, g["id"])
    seen = s.until(is_note_about(e["id"]))
    assert s.raw[0] == "retry: 3000"
    note = data(seen[-1])
    if not any(m["event"] == "ai_status" and data(m)["entry_id"] == e["id"] for m in seen):
        seen += s.until(lambda m: m["event"] == "ai_status" and data(m)["entry_id"] == e["id"])
    assert note["type"] == "entry.created" and note["read_at"] is None
    assert set(note) >= {"id", "type", "level", "title", "body", "entity_type", "entity_id",
                         "branch_id", "created_at", "read_at"}
    ai = [m for m in seen if m["event"] == "ai_status" and data(m)["entry_id"] == e["id"]]
    assert ai and data(ai[0])["status"] == "pending" and "description" in data(ai[0])
    ids = [int(m["id"]) for m in seen]
    assert ids == sorted(ids) and all(set(m) == {"id", "event", "data"} for m in seen)
    # only the kinds of this stream: no raw entry.created rows
    assert {m["event"] for m in seen} <= {"notification", "ai_status", "lesson_report_status"}


def test_authentication(server, streams):
    srv = server
    assert_error(srv.api("GET", PATH), 401)
    assert_error(srv.api("GET", PATH, token="0" * 64), 401)
    assert_error(srv.api("GET", PATH, params={"ticket": "nope"}), 401)
    assert_error(srv.api("POST", PATH, token=srv.admin_token), 405)
    r = srv.api("POST", "/api/auth/stream-ticket")
    assert_error(r, 401)


def test_ticket_is_single_use_and_expires(server, streams):
    srv = server
    g = srv.create_group(srv.create_branch()["id"])
    t = assert_json(srv.api("POST", "/api/auth/stream-ticket", token=srv.admin_token), 201)
    assert t["expires_in"] == 60 and len(t["ticket"]) >= 32
    s = streams(srv, ticket=t["ticket"])
    assert s.status == 200
    e = entry_in(srv, g["id"])
    s.until(is_note_about(e["id"]))
    again = streams(srv, ticket=t["ticket"])
    assert again.status == 401 and b"ticket" in again.body
    # an expired ticket
    t2 = assert_json(srv.api("POST", "/api/auth/stream-ticket", token=srv.admin_token), 201)
    execute(srv, "UPDATE stream_tickets SET expires_at = '2000-01-01T00:00:00Z'")
    assert streams(srv, ticket=t2["ticket"]).status == 401
    # the ticket is never stored in clear
    assert not rows(srv, f"SELECT 1 FROM stream_tickets WHERE ticket_hash = '{t2['ticket']}'")


def test_scope_of_tutors(server, streams):
    srv = server
    a, b = srv.create_branch(), srv.create_branch()
    ga, gb = srv.create_group(a["id"]), srv.create_group(b["id"])
    _, ta = srv.create_tutor([a["id"]])
    sa = streams(srv, token=ta)
    admin = streams(srv, token=srv.admin_token)
    eb = entry_in(srv, gb["id"])
    ea = entry_in(srv, ga["id"])
    seen = sa.until(is_note_about(ea["id"]))
    for m in seen:
        d = data(m)
        assert d.get("entry_id", d.get("entity_id")) != eb["id"], m
        assert d.get("branch_id", a["id"]) == a["id"]
    admin_seen = admin.until(is_note_about(ea["id"]))
    assert any(is_note_about(eb["id"])(m) for m in admin_seen)


def test_replay_with_last_event_id(server, streams):
    srv = server
    g = srv.create_group(srv.create_branch()["id"])
    start = max_event_id(srv)
    e1 = entry_in(srv, g["id"])
    e2 = entry_in(srv, g["id"])
    s = streams(srv, token=srv.admin_token, last_id=start)
    seen = s.until(is_note_about(e2["id"]))
    ids = [int(m["id"]) for m in seen]
    assert ids == sorted(ids) and ids[0] > start
    assert any(is_note_about(e1["id"])(m) for m in seen)
    # the ticket form takes last_event_id in the query
    t = assert_json(srv.api("POST", "/api/auth/stream-ticket", token=srv.admin_token), 201)
    s2 = streams(srv, ticket=t["ticket"], query_last=start)
    assert s2.until(is_note_about(e2["id"]))[0]["id"] == seen[0]["id"]
    assert streams(srv, token=srv.admin_token, last_id="x").status == 400


def test_reset_past_retention(fresh_server, streams):
    srv = fresh_server()
    g = srv.create_group(srv.create_branch()["id"])
    entry_in(srv, g["id"])
    first = max_event_id(srv)
    entry_in(srv, g["id"])
    execute(srv, f"DELETE FROM events WHERE id <= {first}")  # as the trim does
    s = streams(srv, token=srv.admin_token, last_id=first - 3)
    m = s.next()
    assert m["event"] == "reset" and int(m["id"]) == max_event_id(srv)
    e = entry_in(srv, g["id"])
    s.until(is_note_about(e["id"]))
    ok = streams(srv, token=srv.admin_token, last_id=first)
    assert ok.quiet(1.5) and all(m["event"] != "reset" for m in ok.quiet(0.1))


def test_heartbeat(fresh_server, streams):
    srv = fresh_server("JournalStreamHeartbeat 1s")
    s = streams(srv, token=srv.admin_token)
    t0 = time.monotonic()
    beats = []
    while len(beats) < 2:
        m = s.next(timeout=10, skip_comments=False)
        if "comment" in m:
            beats.append(time.monotonic() - t0)
    assert beats[1] - beats[0] >= 0.5


def test_stream_cap_answers_503_and_api_keeps_answering(fresh_server, streams):
    srv = fresh_server(ONE_CHILD + "JournalStreamMax 2\nJournalStreamHeartbeat 1s")
    srv.allowed_log_patterns.append(r"JR09002")
    held = [streams(srv, token=srv.admin_token) for _ in range(2)]
    assert [s.status for s in held] == [200, 200]
    over = streams(srv, token=srv.admin_token)
    assert over.status == 503 and over.headers["Retry-After"] == "5"
    assert b"too many" in over.body
    assert_json(srv.api("GET", "/api/branches", token=srv.admin_token), 200)
    held[0].close()
    # the child notices a closed client when it writes to it (the heartbeat)
    deadline = time.monotonic() + 20
    while streams(srv, token=srv.admin_token).status != 200:
        assert time.monotonic() < deadline
        time.sleep(0.5)


def test_logout_and_deactivation_close_streams(server, streams):
    srv = server
    b = srv.create_branch()
    user, token = srv.create_tutor([b["id"]])
    s = streams(srv, token=token)
    assert s.status == 200
    assert_json(srv.api("POST", "/api/auth/logout", token=token), 200)
    assert s.ends(10)  # within seconds
    token = srv.login(user["username"], user["_password"])
    t = assert_json(srv.api("POST", "/api/auth/stream-ticket", token=token), 201)
    s = streams(srv, ticket=t["ticket"])
    assert s.status == 200
    assert_json(srv.api("PUT", f"/api/users/{user['id']}", token=srv.admin_token,
                        json={"active": False}), 200)
    assert s.ends(10)


def test_graceful_restart_resumes_with_last_event_id(fresh_server, streams):
    srv = fresh_server()
    g = srv.create_group(srv.create_branch()["id"])
    s = streams(srv, token=srv.admin_token)
    e1 = entry_in(srv, g["id"])
    last = s.until(is_note_about(e1["id"]))[-1]["id"]
    apache_k(srv, "graceful")
    assert s.ends(20)  # the old child ended the stream
    srv.http.close()
    time.sleep(1)
    e2 = entry_in(srv, g["id"])  # written while no stream is open
    s2 = streams(srv, token=srv.admin_token, last_id=last)
    assert s2.status == 200
    seen = s2.until(is_note_about(e2["id"]))
    assert int(seen[0]["id"]) > int(last)
    assert not any(is_note_about(e1["id"])(m) for m in seen)
