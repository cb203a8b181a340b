"""List answers are written to the client as they are produced: a page of 1000 entries of
20,000 characters does not grow a child's memory with its size; the status and every header
(X-Total-Count included) leave before the first item; answers that fit one buffer keep their
Content-Length; HEAD sends headers only; a database error after the first bytes cuts the
response short instead of completing it."""

import json
import os
import socket
import sqlite3
import time

import pytest

import harness
from harness import assert_json
from test_lesson_versions import sql_exec

PAGE = 1000
TEXT_LEN = 20000
UNIT = ' lorem "ipsum"\n dolor'  # 21 characters, two of them escaped in JSON
# One child with a fixed set of threads: every request lands in the process that is measured.
ONE_CHILD = "StartServers 1\nServerLimit 1\nMaxRequestWorkers 64\n"
RSS_BUDGET_MB = 16


def text_of(i):
    """The description of entry number i: 20,000 characters, unique at the start."""
    return (f"{i:05d}" + UNIT * 1000)[:TEXT_LEN]


def fill_entries(srv, n=PAGE, marked=None):
    """n entries of TEXT_LEN characters in one new group, written by SQL (through the API this
    would take minutes). Entry `marked` gets a text of 'Z' only. Returns (session token,
    group id)."""
    token = srv.admin_token
    branch = srv.create_branch()
    group = srv.create_group(branch["id"])
    g, b = int(group["id"]), int(branch["id"])
    now = "'2026-01-01T00:00:00Z'"
    mark = int(marked or 0)
    if srv.db_kind == "sqlite":
        text = ("substr(printf('%05d', i) || replace(hex(zeroblob(1000)), '00', "
                "' lorem \"ipsum\"' || char(10) || ' dolor'), 1, 20000)")
        rows = f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n})"
        source = "n"
        zs = "replace(hex(zeroblob(10000)), '0', 'Z')"
    else:
        text = ("left(lpad(i::text, 5, '0') || repeat(' lorem \"ipsum\"' || chr(10) || ' dolor',"
                " 1000), 20000)")
        rows = ""
        source = f"generate_series(1, {n}) AS i"
        zs = "repeat('Z', 20000)"
    sql_exec(srv, f"{rows} INSERT INTO entries (student_name, group_id, branch_id, description,"
                  f" created_at, updated_at) SELECT 'student ' || i, {g}, {b},"
                  f" CASE WHEN i = {mark} THEN {zs} ELSE {text} END, {now}, {now} FROM {source}")
    return token, g


def check_page(items, n=PAGE):
    """Every entry of the page, complete, newest first."""
    assert len(items) == n
    ids = [e["id"] for e in items]
    assert ids == sorted(ids, reverse=True)
    for e in items:
        i = int(e["student_name"].split()[1])
        assert e["description"] == text_of(i), f"entry {e['id']} is not complete"


def child_memory_kb(srv, field):
    """A /proc/PID/status figure (VmRSS, VmHWM: the peak of VmRSS, VmData) summed over the
    httpd children (the one child of ONE_CHILD), in KiB."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid != srv.pid:
                continue
            with open(f"/proc/{pid}/status") as f:
                total += next(int(l.split()[1]) for l in f if l.startswith(field + ":"))
        except (OSError, StopIteration, ValueError, IndexError):
            continue
    return total


@pytest.fixture
def big(fresh_server):
    srv = fresh_server(ONE_CHILD)
    return (srv,) + fill_entries(srv)


@pytest.fixture
def big_measured(fresh_server, monkeypatch):
    """big, for a measure of the child's memory. Under the sanitizers ASan's quarantine keeps
    freed memory resident (256 MB of it by default) instead of reusing it: a list read one row
    at a time, each row allocated and freed (libpq's single-row results on PostgreSQL), would
    look like a page held whole. This server runs without the quarantine; the measure then
    counts what the module holds, as in a build without the sanitizers."""
    if harness.SANITIZE:
        env_of = harness.apache_env

        def without_quarantine():
            env = env_of()
            env["ASAN_OPTIONS"] += ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
            return env
        monkeypatch.setattr(harness, "apache_env", without_quarantine)
    srv = fresh_server(ONE_CHILD)
    return (srv,) + fill_entries(srv)


def test_large_page_is_streamed_complete(big):
    srv, token, _ = big
    r = srv.api("GET", "/api/entries", token=token, params={"limit": PAGE})
    items = assert_json(r, 200)
    # Streamed: no Content-Length, chunked; the total was known before the first item.
    assert r.headers.get("Transfer-Encoding") == "chunked", r.headers
    assert "Content-Length" not in r.headers
    assert r.headers["X-Total-Count"] == str(PAGE)
    assert r.headers["Cache-Control"] == "no-store"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert len(r.content) > PAGE * TEXT_LEN
    check_page(items)

    # /api/v1: the envelope keeps total/limit/offset after the items.
    key = assert_json(srv.api("POST", "/api/api-keys", token=token,
                              json={"name": "stream", "scopes": ["read"]}), 201)["key"]
    r = srv.api("GET", "/api/v1/entries", headers={"X-Api-Key": key},
                params={"limit": PAGE, "offset": 0})
    body = assert_json(r, 200)
    assert r.headers.get("Transfer-Encoding") == "chunked"
    assert r.headers.get("RateLimit-Limit"), r.headers
    assert list(body) == ["items", "total", "limit", "offset", "has_more", "next_cursor"]
    assert (body["total"], body["limit"], body["offset"]) == (PAGE, PAGE, 0)
    check_page(body["items"])


def test_head_of_a_large_page_sends_headers_only(big):
    srv, token, _ = big
    get = srv.api("GET", "/api/entries", token=token, params={"limit": PAGE})
    assert get.status_code == 200
    head = srv.api("HEAD", "/api/entries", token=token, params={"limit": PAGE})
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["X-Total-Count"] == str(PAGE)
    assert head.headers["Content-Type"].startswith("application/json")
    # Nothing was sent, so the length of the body a GET gets is known.
    assert head.headers["Content-Length"] == str(len(get.content))


def test_small_answers_keep_their_content_length(server):
    """The hot path is unchanged: a page that fits one buffer is one body with its length."""
    key = assert_json(server.api("POST", "/api/api-keys", token=server.admin_token,
                                 json={"name": harness.uniq("small"), "scopes": ["read"]}),
                      201)["key"]
    for path in ("/api/v1/entries?limit=50", "/api/v1/me", "/api/entries?limit=50"):
        h = {"X-Api-Key": key} if path.startswith("/api/v1") else {}
        r = server.api("GET", path, headers=h,
                       token=None if path.startswith("/api/v1") else server.admin_token)
        assert_json(r, 200)
        assert r.headers.get("Content-Length") == str(len(r.content)), (path, r.headers)
        assert "Transfer-Encoding" not in r.headers


@pytest.mark.parametrize("filtered", [False, True], ids=["plain", "filtered"])
def test_large_page_memory_is_bounded(big_measured, filtered):
    srv, token, group_id = big_measured
    params = {"limit": PAGE, "group_id": group_id} if filtered else {"limit": PAGE}
    # Warm up the child (connections, statements, thread pools) with small pages only.
    for _ in range(20):
        r = srv.api("GET", "/api/entries", token=token, params=dict(params, limit=10))
        assert r.status_code == 200
    before = child_memory_kb(srv, "VmRSS")
    assert before > 0
    r = srv.api("GET", "/api/entries", token=token, params=params)
    check_page(assert_json(r, 200))
    # The peak: the request's memory is returned when it ends.
    peak = child_memory_kb(srv, "VmHWM")
    grown_mb = (peak - before) / 1024
    print(f"child RSS {before / 1024:.1f} MB, peak {peak / 1024:.1f} MB "
          f"(+{grown_mb:.1f} MB) for a {len(r.content) / 1e6:.1f} MB page")
    assert grown_mb < RSS_BUDGET_MB, \
        f"a {len(r.content) / 1e6:.1f} MB page grew the child by {grown_mb:.1f} MB"


# ---- a failure after the first bytes ---------------------------------------------------------
def corrupt_overflow_of(db_path, marker=b"Z"):
    """Breaks the overflow chain of the one row whose text is all `marker`: the next-page
    pointer of one of its middle overflow pages points past the end of the file."""
    con = sqlite3.connect(str(db_path))
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    with open(db_path, "r+b") as f:
        data = bytearray(f.read())
        page = int.from_bytes(data[16:18], "big") or 65536
        for start in range(page, len(data), page):
            body = data[start + 4:start + page]
            nxt = int.from_bytes(data[start:start + 4], "big")
            if nxt != 0 and body == marker * len(body):
                f.seek(start)
                f.write((0x7FFFFFF0).to_bytes(4, "big"))
                return start // page + 1
    raise AssertionError("no overflow page of the marked row found")


def send_get(s, path, token):
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Auth-Token: {token}\r\n"
              f"\r\n".encode())


def read_until_closed(s, data, timeout=60):
    """Appends what the server sends to data until it closes the connection."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        chunk = s.recv(1 << 16)
        if not chunk:
            return data
        data += chunk
    raise AssertionError("the server did not close the connection")


def read_raw(srv, path, token, timeout=60):
    """GET over a plain socket until the server closes: (head, raw body bytes)."""
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=timeout)
    try:
        send_get(s, path, token)
        data = read_until_closed(s, bytearray(), timeout)
    finally:
        s.close()
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    return head.decode("latin-1"), body


def dechunk(raw):
    """Decodes a chunked body: (data, 1 when the last chunk arrived)."""
    out, pos = bytearray(), 0
    while True:
        eol = raw.find(b"\r\n", pos)
        if eol < 0:
            return bytes(out), 0
        size = int(raw[pos:eol].split(b";")[0], 16)
        if size == 0:
            return bytes(out), 1
        start = eol + 2
        if start + size > len(raw):
            out += raw[start:]
            return bytes(out), 0
        out += raw[start:start + size]
        pos = start + size + 2


@pytest.mark.skipif(harness.DB_KIND != "sqlite",
                    reason="the failure is made by corrupting a page of the SQLite file")
def test_database_error_after_first_bytes_cuts_the_response(fresh_server):
    srv = fresh_server(ONE_CHILD)
    token, _ = fill_entries(srv, marked=PAGE // 2)  # newest first: half the page precedes it
    srv.stop()
    corrupt_overflow_of(srv.db_path)
    srv.start()
    srv.allowed_log_patterns += [
        r"\[journal:error\] .*JR00050: the answer failed with status 503 after part of it "
        r"was sent; the response is cut short",
        r"\[journal:error\] .*JR01005: statement entries_list_plain failed: "]
    head, raw = read_raw(srv, f"/api/entries?limit={PAGE}", token)
    status = head.split("\r\n")[0]
    assert status == "HTTP/1.1 200 OK", head
    assert "transfer-encoding: chunked" in head.lower(), head
    assert "x-total-count: 1000" in head.lower(), head
    body, complete = dechunk(raw)
    assert not complete, "a failed list must not end like a complete one"
    assert len(body) > 64 * 1024, "the failure was meant to come after the first flush"
    assert body.startswith(b"[{")
    with pytest.raises(ValueError):
        json.loads(body)
    log = srv.read_error_log()
    assert "JR00050" in log and "JR01005" in log, log[-2000:]
    # The server goes on: rows before the broken one still read.
    r = srv.api("GET", "/api/entries", token=token, params={"limit": 5})
    assert len(assert_json(r, 200)) == 5


def backend_waiting_to_send(srv):
    """The pid of the server session that runs the entry list and waits for its client (httpd)
    to take more rows: PostgreSQL reports the wait as ClientWrite. None when there is none."""
    out = harness.psql("SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                       " AND state = 'active' AND wait_event = 'ClientWrite'"
                       " AND query LIKE '%FROM entries e%'", dbname=srv.pg_dbname).stdout
    return int(out.split()[0]) if out.strip() else None


@pytest.mark.skipif(harness.DB_KIND != "pgsql", reason="ends a PostgreSQL server session")
def test_session_ended_mid_list_cuts_the_response(fresh_server):
    """On PostgreSQL the rows are streamed too (libpq's single-row mode): while the client
    reads nothing, the server session waits to send the rest of the page, which a result read
    whole before the first item never does. Ending that session fails the list after its first
    bytes: the answer is cut short, never completed, and the next request is served."""
    srv = fresh_server(ONE_CHILD)
    token, _ = fill_entries(srv)
    srv.allowed_log_patterns += [r"JR00050: the answer failed with status 5\d\d",
                                 r"JR01005: statement entries_page_plain failed: ",
                                 r"JR01008: database session was reset; preparing statements "
                                 r"again"]
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=60)
    try:
        # A small receive buffer: the client holds back little of the page.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        send_get(s, f"/api/entries?limit={PAGE}", token)
        data = bytearray()
        while b"\r\n\r\n" not in data or len(data) < 128 * 1024:
            chunk = s.recv(1 << 16)
            assert chunk, "the server closed before the first bytes"
            data += chunk
        deadline, pid = time.monotonic() + 60, None
        while pid is None and time.monotonic() < deadline:
            pid = backend_waiting_to_send(srv)
            time.sleep(0.2)
        assert pid, "the session finished the select: its rows were not streamed"
        harness.psql(f"SELECT pg_terminate_backend({pid})", dbname=srv.pg_dbname)
        read_until_closed(s, data)
    finally:
        s.close()
    head, _, raw = bytes(data).partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"HTTP/1.1 200 OK", head
    body, complete = dechunk(raw)
    assert not complete, "a failed list must not end like a complete one"
    assert body.startswith(b"[{")
    with pytest.raises(ValueError):
        json.loads(body)
    log = srv.read_error_log()
    assert "JR00050" in log and "JR01005: statement entries_page_plain failed" in log, \
        log[-2000:]
    r = srv.api("GET", "/api/entries", token=token, params={"limit": 5})
    assert len(assert_json(r, 200)) == 5
