"""Slow clients: mod_reqtimeout (loaded by the generated configuration) cuts off a client that
sends its headers or its body too slowly, long before httpd's Timeout (60 s) per read."""

import json
import socket
import time

from harness import assert_error

DEFAULT = "RequestReadTimeout header=20-40,MinRate=500 body=20,MinRate=500"
# Short limits for the test server, so that the cut-off comes within seconds.
SHORT = "RequestReadTimeout header=2-4,MinRate=500 body=2,MinRate=500"


def test_generated_config_limits_request_reads(server):
    conf = server.conf_file.read_text()
    assert "LoadModule reqtimeout_module " in conf
    assert f"\n{DEFAULT}\n" in conf, "the generated configuration has no RequestReadTimeout"


def trickle(srv, first, lines, every=1.0, limit=30.0):
    """Sends `first`, then one of `lines` every `every` seconds until the server closes the
    connection; returns (seconds until closed, what the server answered)."""
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=limit)
    start = time.monotonic()
    answer = b""
    try:
        sock.sendall(first)
        for line in lines:
            time.sleep(every)
            try:
                sock.sendall(line)
            except (BrokenPipeError, ConnectionResetError):
                break
            sock.settimeout(0.01)
            try:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
            except socket.timeout:
                pass
            except ConnectionResetError:
                break
            finally:
                sock.settimeout(limit)
            if time.monotonic() - start > limit:
                break
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except (socket.timeout, ConnectionResetError):
            pass
        return time.monotonic() - start, answer
    finally:
        sock.close()


def test_slow_headers_are_cut_off(fresh_server):
    srv = fresh_server(SHORT)
    headers = (f"X-Slow-{i}: {i}\r\n".encode() for i in range(1000))
    elapsed, answer = trickle(srv, b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n", headers)
    # Without mod_reqtimeout one header line a second keeps the connection for good.
    assert elapsed < 15, f"the slow client was held {elapsed:.1f} s"
    assert b" 200 " not in answer.split(b"\r\n", 1)[0], answer[:200]


def test_slow_body_is_cut_off_with_408(fresh_server):
    srv = fresh_server(SHORT)
    body = json.dumps({"username": "nobody", "password": "x" * 200}).encode()
    head = (b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    elapsed, answer = trickle(srv, head, (body[i:i + 1] for i in range(len(body))))
    assert elapsed < 15, f"the slow body was read for {elapsed:.1f} s"
    status_line = answer.split(b"\r\n", 1)[0]
    assert status_line.startswith(b"HTTP/1.1 408"), answer[:300]
    assert b"application/json" in answer and b'"error"' in answer, answer[:300]
