#!/usr/bin/env python3
"""A fake OpenAI-compatible chat completion server for the worker's tests and benchmarks
(Python standard library only).

It answers POST .../chat/completions. What it answers is chosen per request by markers in the
user message (the text the worker checks), so one server serves every test at once:

  (none)            rewrite: {"changed": true | "matches_template": false, "text": "AI: <text>"}
  [[keep]]          {"changed": false | "matches_template": true, "text": <text>}
  [[fail500:N]]     HTTP 500 for the first N requests with this text, then a rewrite
  [[429:N:S]]       HTTP 429 with Retry-After: S for the first N requests, then a rewrite
  [[hang:S]]        waits S seconds (fractions allowed), then a rewrite
  [[hang:S:N]]      the same for the first N requests with this text; later ones answer at once
  [[hold]]          waits until POST /_release (at most 60 s), then a rewrite
  [[malformed]]     HTTP 200 whose body is not JSON
  [[badjson]]       a chat completion whose message content is not JSON
  [[schema]]        a chat completion whose content does not match the schema
  [[empty]]         a rewrite with an empty text
  [[401]] [[403]]   the endpoint refuses the key

Which schema applies is read from the request's response_format (the flag member it names).

Control endpoints for tests:
  GET  /_requests   every request received: [{n, t, path, headers, body}] (body parsed as JSON
                    when it is JSON); ?since=N returns those with n > N
  GET  /_counts     {"<user text>": number of requests}
  POST /_release    lets every [[hold]] request go, now and from now on
  POST /_reset      forgets everything (and holds again)

Usage: fake_llm.py [--port N] [--latency MS] [--port-file FILE]
  --latency MS     every completion waits this long first (benchmarks)
  --port-file FILE the chosen port is written there once the server listens
"""

import argparse
import json
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

MARK_RE = re.compile(r"\[\[([a-z0-9]+)((?::[0-9.]+)*)\]\]")


class State:
    def __init__(self, latency):
        self.lock = threading.Lock()
        self.latency = latency
        self.requests = []
        self.counts = {}
        self.released = threading.Event()

    def record(self, entry, text):
        with self.lock:
            entry["n"] = len(self.requests) + 1
            self.requests.append(entry)
            self.counts[text] = self.counts.get(text, 0) + 1
            return self.counts[text]

    def reset(self):
        with self.lock:
            self.requests = []
            self.counts = {}
            self.released.clear()


def marks(text):
    """{name: [numbers]} of the markers in a text."""
    out = {}
    for m in MARK_RE.finditer(text or ""):
        args = [float(a) for a in m.group(2).split(":")[1:]]
        out[m.group(1)] = args
    return out


def completion(content):
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "fake",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-llm/1"

    def setup(self):
        super().setup()
        # Headers and body go out in two writes: without this, Nagle's algorithm and the
        # client's delayed ACK add 40 ms to every answer on a kept-alive connection.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):  # quiet
        pass

    def _send(self, status, body, headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up (a timeout test)

    def do_GET(self):
        url = urlparse(self.path)
        state = self.server.state
        if url.path == "/_requests":
            since = int(parse_qs(url.query).get("since", ["0"])[0])
            with state.lock:
                items = [r for r in state.requests if r["n"] > since]
            return self._send(200, items)
        if url.path == "/_counts":
            with state.lock:
                return self._send(200, dict(state.counts))
        self._send(404, {"error": "not found"})

    def do_POST(self):
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path == "/_reset":
            state.reset()
            return self._send(200, {"ok": True})
        if self.path == "/_release":
            state.released.set()
            return self._send(200, {"ok": True})
        if not self.path.endswith("/chat/completions"):
            return self._send(404, {"error": "not found"})
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        user = ""
        flag = "changed"
        if isinstance(body, dict):
            for m in body.get("messages") or []:
                if m.get("role") == "user":
                    user = m.get("content") or ""
            try:
                props = body["response_format"]["json_schema"]["schema"]["properties"]
                flag = next(k for k in props if k != "text")
            except (KeyError, TypeError, StopIteration):
                pass
        entry = {"t": time.time(), "path": self.path, "headers": dict(self.headers.items()),
                 "body": body}
        count = state.record(entry, user)
        if state.latency:
            time.sleep(state.latency / 1000.0)
        self._answer(user, flag, count)

    def _answer(self, user, flag, count):
        mk = marks(user)
        rewrite = flag == "changed"  # the flag's value that means "rewritten"
        if "401" in mk or "403" in mk:
            return self._send(401 if "401" in mk else 403, {"error": {"message": "bad key"}})
        if "fail500" in mk and count <= int((mk["fail500"] or [1])[0]):
            return self._send(500, {"error": {"message": "overloaded"}})
        if "429" in mk:
            args = mk["429"] + [1, 1][len(mk["429"]):]
            if count <= int(args[0]):
                return self._send(429, {"error": {"message": "slow down"}},
                                  {"Retry-After": str(int(args[1]))})
        if "hold" in mk:
            self.server.state.released.wait(60)
        if "hang" in mk:
            args = mk["hang"] or [30]
            if len(args) < 2 or count <= int(args[1]):
                time.sleep(args[0])
        if "malformed" in mk:
            return self._send(200, b"{this is not json")
        if "badjson" in mk:
            return self._send(200, completion("{\"changed\": tru"))
        if "schema" in mk:
            return self._send(200, completion(json.dumps({flag: "yes", "text": 1})))
        if "keep" in mk:
            return self._send(200, completion(json.dumps({flag: not rewrite, "text": user})))
        text = "" if "empty" in mk else "AI: " + user
        return self._send(200, completion(json.dumps({flag: rewrite, "text": text})))


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # listen() backlog: the default 5 drops concurrent connects


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--port-file")
    args = ap.parse_args()
    server = Server(("127.0.0.1", args.port), Handler)
    server.state = State(args.latency)
    port = server.server_address[1]
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(port))
        import os
        os.replace(args.port_file + ".tmp", args.port_file)
    print(f"fake LLM listening on 127.0.0.1:{port}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
