"""JournalActiveRequests (docs/directives.md): a child runs at most that many of the journal's
requests at once; the others wait their turn in the order they came, at most 10 s, then 503
with Retry-After. Event streams take no turn. A request holds its turn here by sending its
body slowly (the body is read inside the turn, as the database connection is held then)."""

import http.client
import json
import socket
import threading
import time

import pytest

from harness import DB_KIND, assert_error

ONE_CHILD = "StartServers 1\nServerLimit 1\nMaxRequestWorkers 64\n"


class Held:
    """A login whose body is sent only in part: its request waits for the rest, in its turn
    (or in the queue for one)."""

    def __init__(self, srv):
        self.body = json.dumps({"username": "nobody", "password": "not this one"}).encode()
        self.sock = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
        self.sock.sendall(b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Content-Type: application/json\r\nConnection: close\r\n"
                          b"Content-Length: " + str(len(self.body)).encode() + b"\r\n\r\n"
                          + self.body[:5])

    def send_rest(self):
        try:
            self.sock.sendall(self.body[5:])
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered already (a wait that ran out)

    def status(self):
        """The status code of the answer."""
        answer = b""
        while b"\r\n" not in answer:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            answer += chunk
        self.sock.close()
        return int(answer.split(b" ", 2)[1])


def wait_for_waiters(srv, n, limit=30.0):
    """Until the error log says that n requests have begun to wait (JR00123, debug), the
    last with n - 1 ahead of it."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        lines = [ln for ln in srv.error_log.read_text().splitlines() if "JR00123" in ln]
        if len(lines) >= n:
            assert len(lines) == n and f"{n - 1} ahead of it" in lines[-1], lines
            return
        time.sleep(0.02)
    raise AssertionError(f"{n} waiting requests were not logged")


def fill(srv):
    """With JournalActiveRequests 1: two held logins, one in the turn and one waiting for it
    (whichever came first), so that the turn is known to be taken."""
    held = [Held(srv), Held(srv)]
    wait_for_waiters(srv, 1)
    return held


def release(held):
    """Sends the held logins' bodies, then reads their answers (in any order of turns)."""
    for h in held:
        h.send_rest()
    return [h.status() for h in held]


GATE_OF_ONE = ONE_CHILD + "JournalActiveRequests 1\nLogLevel warn journal:debug\n"


def health(srv, done, i):
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    conn.request("GET", "/api/health")
    resp = conn.getresponse()
    resp.read()
    done.append((i, resp.status))
    conn.close()


def create(srv, token, group, done, i):
    """A new entry: ids are given inside the turns, so their order is the turns' order (the
    order in which the answers reach their clients is not: a turn ends before its answer is
    sent). A connection of its own per thread."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    conn.request("POST", "/api/entries",
                 body=json.dumps({"student_name": f"Waiter {i}", "group_id": group}),
                 headers={"Content-Type": "application/json", "X-Auth-Token": token})
    resp = conn.getresponse()
    done.append((i, resp.status, json.loads(resp.read()).get("id")))
    conn.close()


def test_requests_wait_their_turn_in_the_order_they_came(fresh_server):
    srv = fresh_server(GATE_OF_ONE)
    token = srv.admin_token
    group = srv.create_group(srv.create_branch()["id"])["id"]
    held = fill(srv)
    done, threads = [], []
    for i in range(4):
        t = threading.Thread(target=create, args=(srv, token, group, done, i))
        t.start()
        threads.append(t)
        wait_for_waiters(srv, i + 2)  # the next comes after this one is in the queue
    assert done == [], "a request ran while the only turn was taken"
    assert release(held) == [401, 401]
    for t in threads:
        t.join(30)
    assert sorted(status for _, status, _ in done) == [201] * 4, done
    assert [i for i, _, _ in sorted(done, key=lambda d: d[2])] == [0, 1, 2, 3], done


# A wrong login answers 401, or 403 / 429 once the address is banned or limited.
REFUSED_LOGIN = {401, 403, 429}
# Each held login holds one of the child's database connections too: enough of them here.
MANY_CONNECTIONS = ONE_CHILD + "DBDMax 32\nLogLevel warn journal:debug\n"


# The default: 16 at once on SQLite, 4 on PostgreSQL, whose backends do most of a request's
# work on the same cores (docs/directives.md).
DEFAULT_AT_ONCE = {"sqlite": 16, "pgsql": 4}[DB_KIND]


def test_the_default_depends_on_the_database(fresh_server):
    srv = fresh_server(MANY_CONNECTIONS)
    held = [Held(srv) for _ in range(DEFAULT_AT_ONCE + 1)]
    wait_for_waiters(srv, 1)  # one of them waits ...
    time.sleep(1.0)
    wait_for_waiters(srv, 1)  # ... and only one: the default's number run
    assert set(release(held)) <= REFUSED_LOGIN


def test_a_set_value_wins_over_the_databases_default(fresh_server):
    srv = fresh_server(MANY_CONNECTIONS + "JournalActiveRequests 6\n")
    held = [Held(srv) for _ in range(7)]
    wait_for_waiters(srv, 1)
    time.sleep(1.0)
    wait_for_waiters(srv, 1)  # 6 run, whatever the database
    assert set(release(held)) <= REFUSED_LOGIN


def test_without_a_limit_nothing_waits(fresh_server):
    srv = fresh_server(MANY_CONNECTIONS + "JournalActiveRequests 0\n")
    held = [Held(srv) for _ in range(20)]
    time.sleep(0.5)
    done = []
    health(srv, done, 0)
    assert done == [(0, 200)]
    assert set(release(held)) <= REFUSED_LOGIN
    assert "JR00123" not in srv.error_log.read_text()


def test_a_wait_past_ten_seconds_answers_503(fresh_server):
    srv = fresh_server(GATE_OF_ONE)
    srv.allowed_log_patterns.append(r"JR00122")
    held = fill(srv)
    start = time.monotonic()
    r = srv.api("GET", "/api/health")
    waited = time.monotonic() - start
    assert_error(r, 503, "busy")
    assert r.headers["Retry-After"] == "1"
    assert 9.5 <= waited < 15, waited
    assert "JR00122" in srv.error_log.read_text()
    # The held login in the queue ran out of time too (503); the one in the turn answers.
    assert sorted(release(held)) == [401, 503]
    assert srv.api("GET", "/api/health").status_code == 200  # the turns were given back


def test_event_streams_take_no_turn(fresh_server):
    srv = fresh_server(GATE_OF_ONE)
    token = srv.admin_token
    held = fill(srv)
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    conn.request("GET", "/api/notifications/stream",
                 headers={"Accept": "text/event-stream", "X-Auth-Token": token})
    resp = conn.getresponse()
    assert resp.status == 200
    assert resp.getheader("Content-Type").startswith("text/event-stream")
    conn.close()
    assert release(held) == [401, 401]


@pytest.mark.parametrize("value", ["-1", "lots", "100001"])
def test_a_bad_value_is_refused_at_startup(fresh_server, value):
    srv = fresh_server(f"JournalActiveRequests {value}\n", start=False)
    proc = srv.config_test()
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert (f"JournalActiveRequests: '{value}' is not valid: use an integer from 0 to 100000"
            in out), out
