"""The event stream seen by the load client of make bench-sse (bench/sse_client.c, docs/events.md
"Measured"): the events of one commit leave in one flush (one HTTP chunk, not one per event),
and the client, built here, counts every event on every stream it holds, once."""

import json
import select
import socket
import subprocess
import time
from pathlib import Path

from worker_support import rows

REPO = Path(__file__).resolve().parents[2]
PATH = "/api/notifications/stream"


def max_event_id(srv):
    return int(rows(srv, "SELECT COALESCE(MAX(id), 0) FROM events")[0][0])


class ChunkedStream:
    """A stream read at the level of HTTP/1.1 chunks: each flush of the server is one chunk."""

    def __init__(self, srv, last_id=None):
        resume = "" if last_id is None else f"Last-Event-ID: {last_id}\r\n"
        self.sock = socket.create_connection(("127.0.0.1", srv.port), timeout=20)
        self.sock.sendall(f"GET {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\n{resume}"
                          f"X-Auth-Token: {srv.admin_token}\r\n\r\n".encode())
        self.buf = b""
        head = self._until(b"\r\n\r\n").decode()
        assert head.startswith("HTTP/1.1 200"), head
        assert "transfer-encoding: chunked" in head.lower(), head

    def _until(self, sep):
        while sep not in self.buf:
            data = self.sock.recv(65536)
            assert data, f"the stream ended; read {self.buf[-300:]!r}"
            self.buf += data
        part, self.buf = self.buf.split(sep, 1)
        return part

    def chunk(self):
        size = int(self._until(b"\r\n").split(b";")[0], 16)
        while len(self.buf) < size + 2:
            data = self.sock.recv(65536)
            assert data, "the stream ended inside a chunk"
            self.buf += data
        body, self.buf = self.buf[:size], self.buf[size + 2:]
        return body.decode()

    def chunk_with(self, text, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            body = self.chunk()
            if text in body:
                return body
        raise AssertionError(f"no chunk with {text!r} within {timeout} s")

    def close(self):
        self.sock.close()


def new_entry(srv, group_id):
    r = srv.api("POST", "/api/entries", token=srv.admin_token,
                json={"student_name": "Load", "group_id": group_id})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def assert_both_events_of(entry, body):
    """The entry's commit wrote two events (its status and the notification)."""
    assert "event: notification\n" in body and f'"entity_id":{entry},' in body, body
    assert "event: ai_status\n" in body and f'"entry_id":{entry},' in body, body
    assert body.count("\nid: ") + body.startswith("id: ") == 2, body


def test_events_of_one_commit_leave_in_one_chunk(server):
    group = server.create_group(server.create_branch()["id"])
    st = ChunkedStream(server)
    try:
        st.chunk_with("retry: ")  # joined: what is committed from now on is live
        entry = new_entry(server, group["id"])
        # One write and one TCP segment per stream for both, not one each.
        assert_both_events_of(entry, st.chunk_with(f'"entity_id":{entry},'))
    finally:
        st.close()


def test_replayed_events_leave_in_one_chunk(server):
    group = server.create_group(server.create_branch()["id"])
    before = max_event_id(server)
    entry = new_entry(server, group["id"])
    st = ChunkedStream(server, last_id=before)
    try:
        assert st.chunk().startswith("retry: ")
        assert_both_events_of(entry, st.chunk())
    finally:
        st.close()


def build_client(tmp_path):
    exe = tmp_path / "sse_client"
    subprocess.run(["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Wconversion", "-Werror",
                    "-o", str(exe), str(REPO / "bench" / "sse_client.c")], check=True)
    return exe


def read_line(proc, timeout):
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"the client said nothing within {timeout} s"
    return proc.stdout.readline()


def test_load_client_counts_every_event_on_every_stream(server, tmp_path):
    group = server.create_group(server.create_branch()["id"])
    n = 20
    proc = subprocess.Popen([str(build_client(tmp_path)), "--port", str(server.port),
                             "--token", server.admin_token, "--streams", str(n)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        ready = json.loads(read_line(proc, 30))
        assert ready["ready"] == n and ready["other_status"] == 0, ready
        entries = [new_entry(server, group["id"]) for _ in range(3)]
        last = max_event_id(server)
        # The client ends once every stream has received the newest event.
        out, _ = proc.communicate(f"{last}\n", timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    got = json.loads(out)
    assert got["open"] == n and got["chunked"] == n, got
    assert (got["duplicates"], got["out_of_order"], got["closed_by_server"]) == (0, 0, 0), got
    notes = {e["entity_id"]: e for e in got["events"] if e["event"] == "notification"}
    for entry in entries:
        assert entry in notes, (entry, got["events"])
        e = notes[entry]
        assert e["n"] == n and len(e["t"]) == n, e
        assert e["first"] <= e["p50"] <= e["p99"] <= e["last"], e
        assert e["t"] == sorted(e["t"]) and e["t"][0] == e["first"], e
    ids = [e["id"] for e in got["events"]]
    assert ids == sorted(ids) and ids[-1] == last, ids
    assert all(e["n"] == n for e in got["events"]), got["events"]
