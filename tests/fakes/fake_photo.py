#!/usr/bin/env python3
"""A fake AI photo service for the worker's tests and benchmarks: the contract of
docs/photos.md ("The photo service"), with Pillow doing real work.

  GET  /health     200 {"ok": true, "models": [...], "device": "cpu"}
  POST /enhance    multipart/form-data with the parts `image` (the photo) and `params` (JSON);
                   answers 200 image/png: the photo upscaled x2 (x4 for general-x4v3), with
                   a light unsharp mask when `face` is not "off"

What it does is chosen by a mode the tests set (POST /_mode with a JSON object):

  {"mode": "ok"}                 the default
  {"mode": "slow", "ms": N}      /enhance waits N ms before answering
  {"mode": "500", "count": N}    HTTP 500 for the next N enhance requests (0: all of them)
  {"mode": "garbage"}            HTTP 200 image/png whose bytes are not an image
  {"mode": "huge"}               HTTP 200 with more bytes than any upload limit in the tests
  {"mode": "hold"}               /enhance waits until POST /_release (at most 120 s)
  {"health": "down"}             GET /health answers 503
  {"health": "slow", "ms": N}    GET /health waits N ms
  {"health": "ok"}

Control endpoints: GET /_requests (every enhance request: {n, path, params, image_size,
image_sha256, content_type}), POST /_release, POST /_reset.

Usage: fake_photo.py [--port N] [--port-file FILE] [--latency MS]
"""

import argparse
import hashlib
import io
import json
import os
import socket
import threading
import time
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from PIL import Image, ImageFilter


class State:
    def __init__(self, latency_ms):
        self.lock = threading.Lock()
        self.latency_ms = latency_ms
        self.reset()

    def reset(self):
        self.mode = {"mode": "ok"}
        self.health = {"health": "ok"}
        self.requests = []
        self.failures = 0
        self.released = threading.Event()


def parse_multipart(content_type, body):
    """{name: (bytes, content type)} of a multipart/form-data body."""
    msg = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
    parts = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        parts[name] = (part.get_payload(decode=True), part.get_content_type())
    return parts


def enhance(data, params):
    img = Image.open(io.BytesIO(data))
    img.load()
    factor = 4 if params.get("model") == "general-x4v3" else 2
    out = img.convert("RGB").resize((img.width * factor, img.height * factor), Image.LANCZOS)
    if params.get("face", "off") != "off":
        out = out.filter(ImageFilter.UnsharpMask(radius=2, percent=80))
    buf = io.BytesIO()
    out.save(buf, "PNG")
    return buf.getvalue()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-photo/1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, status, body, ctype="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_GET(self):
        st = self.server.state
        if self.path == "/health":
            h = st.health
            if h.get("health") == "slow":
                time.sleep(h.get("ms", 0) / 1000)
            if h.get("health") == "down":
                return self.reply(503, {"ok": False})
            return self.reply(200, {"ok": True, "models": ["x2plus", "general-x4v3",
                                                           "animevideo-v3"], "device": "cpu"})
        if self.path == "/_requests":
            with st.lock:
                return self.reply(200, list(st.requests))
        self.reply(404, {"error": "not found"})

    def do_POST(self):
        st = self.server.state
        body = self.body()
        if self.path == "/_mode":
            change = json.loads(body or b"{}")
            with st.lock:
                if "health" in change:
                    st.health = change
                else:
                    st.mode = change
                    st.failures = 0
            return self.reply(200, {"ok": True})
        if self.path == "/_release":
            st.released.set()
            return self.reply(200, {"ok": True})
        if self.path == "/_reset":
            with st.lock:
                st.reset()
            return self.reply(200, {"ok": True})
        if self.path != "/enhance":
            return self.reply(404, {"error": "not found"})
        self.enhance_request(st, body)

    def enhance_request(self, st, body):
        try:
            parts = parse_multipart(self.headers.get("Content-Type", ""), body)
            image, ctype = parts["image"]
            params = json.loads(parts["params"][0])
        except (KeyError, ValueError, TypeError) as e:
            return self.reply(400, {"error": f"bad request: {e}"})
        with st.lock:
            mode = dict(st.mode)
            st.requests.append({"n": len(st.requests) + 1, "path": self.path, "params": params,
                                "image_size": len(image), "content_type": ctype,
                                "image_sha256": hashlib.sha256(image).hexdigest()})
            fail = mode.get("mode") == "500" and (
                not mode.get("count") or st.failures < mode["count"])
            if fail:
                st.failures += 1
        if st.latency_ms:
            time.sleep(st.latency_ms / 1000)
        if mode.get("mode") == "slow":
            time.sleep(mode.get("ms", 0) / 1000)
        if mode.get("mode") == "hold":
            st.released.wait(120)
        if fail:
            return self.reply(500, {"error": "model crashed"})
        if mode.get("mode") == "garbage":
            return self.reply(200, os.urandom(4096), "image/png")
        if mode.get("mode") == "huge":
            return self.reply(200, b"\x89PNG" + os.urandom(3 * 1024 * 1024), "image/png")
        try:
            out = enhance(image, params)
        except Exception as e:  # a photo Pillow cannot read
            return self.reply(422, {"error": f"cannot read the image: {e}"})
        self.reply(200, out, "image/png")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--latency", type=float, default=0.0)
    args = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    srv.state = State(args.latency)
    srv.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(srv.server_address[1]))
        os.replace(args.port_file + ".tmp", args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
