"""Request bodies cost what arrives, not what is declared: the buffer of a JSON body grows as
bytes come in, and a request refused before its body is read (route, method, database,
authentication, role, query, Content-Type, declared size) is answered at once without reading
the body, and its connection closed."""

import json
import socket
import time

import pytest

import harness
from harness import assert_error, assert_json, random_ip
from test_streaming import ONE_CHILD, child_memory_kb

MIB = 1024 * 1024
ANSWER_TIMEOUT = 15  # the server's Timeout is 60 s: reading the body would take that long


def raw_request(srv, method, path, headers, body=b""):
    """Sends a request head (and the first bytes of its body) over a new socket."""
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=ANSWER_TIMEOUT)
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    return s


def read_answer(s):
    """Reads one response with a Content-Length: (status, headers (lower-case names), body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, f"connection closed before an answer: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    length = int(headers["content-length"])
    while len(rest) < length:
        chunk = s.recv(65536)
        assert chunk, "connection closed inside the body"
        rest += chunk
    return int(lines[0].split()[1]), headers, rest[:length]


def closed_by_server(s):
    """1 when the server closes the connection (EOF) without the client sending more."""
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True


def tutor_token(srv):
    return srv.create_tutor()[1]


# (method, path, extra headers given the server, status)
REFUSALS = {
    "401 no session": ("POST", "/api/branches", lambda s: {}, 401),
    "401 bad session": ("POST", "/api/branches", lambda s: {"X-Auth-Token": "0" * 64}, 401),
    "401 bad key": ("POST", "/api/v1/lesson-reports",
                    lambda s: {"X-Api-Key": "wsk_nonsense", "X-Forwarded-For": random_ip()},
                    401),
    "403 role": ("POST", "/api/users", lambda s: {"X-Auth-Token": tutor_token(s)}, 403),
    "415 type": ("POST", "/api/branches",
                 lambda s: {"X-Auth-Token": s.admin_token, "Content-Type": "text/plain"}, 415),
    "404 route": ("POST", "/api/no-such-thing", lambda s: {}, 404),
    "405 method": ("POST", "/api/health", lambda s: {}, 405),
    "400 query": ("POST", "/api/branches?a=%zz", lambda s: {"X-Auth-Token": s.admin_token},
                  400),
    "413 declared": ("POST", "/api/auth/login", lambda s: {"Content-Length": str(2 * MIB)},
                     413),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_refusal_does_not_wait_for_the_body(server, case):
    method, path, extra, status = REFUSALS[case]
    headers = {"Content-Type": "application/json", "Content-Length": str(MIB)}
    headers.update(extra(server))
    s = raw_request(server, method, path, headers, body=b'{"name": ')
    try:
        started = time.monotonic()
        got, h, body = read_answer(s)  # times out when the server waits for the body
        assert got == status, (got, body)
        assert "error" in json.loads(body)
        assert h.get("connection", "").lower() == "close", h
        assert closed_by_server(s)
        assert time.monotonic() - started < ANSWER_TIMEOUT
    finally:
        s.close()


def test_refusal_without_a_body_keeps_the_connection(server):
    s = raw_request(server, "GET", "/api/auth/me", {})
    try:
        status, h, _ = read_answer(s)
        assert status == 401 and h.get("connection", "").lower() != "close", h
        s.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        status, _, body = read_answer(s)
        assert status == 200 and json.loads(body)["status"] == "ok"
    finally:
        s.close()


def test_chunked_body_of_another_type_is_refused_before_reading(server):
    headers = {"X-Auth-Token": server.admin_token, "Content-Type": "text/plain",
               "Transfer-Encoding": "chunked"}
    s = raw_request(server, "POST", "/api/branches", headers, body=b"5\r\nhello\r\n")
    try:
        status, h, _ = read_answer(s)
        assert status == 415 and h.get("connection", "").lower() == "close"
    finally:
        s.close()


@pytest.mark.parametrize("chunked", [False, True])
def test_large_body_grows_to_fit(server, chunked):
    """A body far above the first buffer size (padded with JSON white space) arrives whole."""
    login = json.dumps({"username": "nobody", "password": "wrong-password"})
    big = (login[:-1] + " " * (300_000 - len(login)) + "}").encode()
    data = iter([big[i:i + 7000] for i in range(0, len(big), 7000)]) if chunked else big
    r = server.api("POST", "/api/auth/login", data=data, ip=random_ip(),
                   headers={"Content-Type": "application/json"})
    assert_error(r, 401)


def busy_workers(srv):
    """Workers of the scoreboard in the W state (past reading the request head)."""
    r = srv.api("GET", "/server-status", params={"auto": ""})
    assert r.status_code == 200, r.text[:300]
    board = next(l for l in r.text.splitlines() if l.startswith("Scoreboard:"))
    return board.split(":", 1)[1].strip().count("W")


STATUS_CONF = """LoadModule status_module /usr/lib/apache2/modules/mod_status.so
<Location /server-status>
    SetHandler server-status
    Require all granted
</Location>
"""


def waiting_logins(srv, n, declared, close=True):
    """n logins that declare `declared` bytes and send a few: returns once every one of them
    waits in the handler (closed again and back to idle when `close`)."""
    socks = [raw_request(srv, "POST", "/api/auth/login",
                         {"Content-Type": "application/json", "Content-Length": str(declared)},
                         body=b'{"user') for _ in range(n)]
    deadline = time.monotonic() + 30
    while busy_workers(srv) < n + 1:  # all of them in the handler (and this request)
        assert time.monotonic() < deadline, f"only {busy_workers(srv)} workers busy"
        time.sleep(0.1)
    time.sleep(0.5)
    if close:
        for s in socks:
            s.close()
        while busy_workers(srv) > 1:
            assert time.monotonic() < deadline + 30, f"{busy_workers(srv)} workers still busy"
            time.sleep(0.1)
    return socks


def test_declared_length_is_not_allocated_up_front(fresh_server):
    """Connections that declare a 1 MiB login body and send a few bytes: the server must not
    set aside 1 MiB for each (VmData counts what is allocated, touched or not)."""
    # One child whose database connections all open at its start (a login takes one before
    # it reads the body), so nothing but the bodies' buffers can grow while they wait.
    srv = fresh_server(ONE_CHILD + "DBDMin 40\nDBDKeep 40\nDBDMax 40\n" + STATUS_CONF)
    n = 32
    for _ in range(10):  # warm up: connections, threads, statements
        assert srv.api("GET", "/api/health").status_code == 200
    # Every thread of the child (64, one left for the status page) waiting once on a small body
    # first: what a thread allocates the first time it works (ASan's per-thread allocator
    # caches, about 0.5 MB each) is then in the baseline, whichever threads serve the n below.
    waiting_logins(srv, 63, 64)
    before = child_memory_kb(srv, "VmData")
    socks = []
    try:
        socks = waiting_logins(srv, n, MIB, close=False)
        grown_mb = (child_memory_kb(srv, "VmData") - before) / 1024
        print(f"VmData of the children +{grown_mb:.1f} MB for {n} connections declaring 1 MiB")
        assert grown_mb < n / 2, f"{n} connections declaring 1 MiB took {grown_mb:.1f} MB"
    finally:
        for s in socks:
            s.close()
