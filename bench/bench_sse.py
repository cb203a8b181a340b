#!/usr/bin/python3
"""make bench-sse: event streams on one node (docs/events.md, "Capacity").

  streams     BENCH_STREAMS (2000) streams of an admin open at once on httpd sized as
              docs/events.md says (2 children x 1200 threads, 256 KB stacks,
              JournalStreamMax 1000)
  latency     BENCH_EVENTS (30) entries created through the API, one every 0.5 s; for each,
              the time from sending the POST (the commit happens before its answer) to each
              stream receiving the notification: p50/p99/max over all streams and events
  RSS         httpd's resident memory (parent and children) idle, then with the streams open
  API         GET /api/branches while the streams are open: every answer 200, p50/max

Run without Redis, then with a redis-server (JournalRedis) started for it. SQLite.
"""

import multiprocessing as mp
import os
import resource
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOP / "tests" / "api"))
import harness  # noqa: E402

STREAMS = int(os.environ.get("BENCH_STREAMS", "2000"))
EVENTS = int(os.environ.get("BENCH_EVENTS", "30"))
PROCS = int(os.environ.get("BENCH_CLIENTS", "2"))  # client processes
SIZING = ("ServerLimit 2\nThreadLimit 1200\nThreadsPerChild 1200\nMaxRequestWorkers 2400\n"
          "ThreadStackSize 262144\nListenBacklog 4096\nMaxSpareThreads 2400\n"
          "JournalStreamMax 1050\nLogLevel warn\n")


def rss_mb(pid):
    """VmRSS of httpd's parent and its children, in MB."""
    pids = [pid] + [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)],
                                                   capture_output=True, text=True).stdout.split()]
    total = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def client(port, token, n, ready, stop, out):
    """One client process: n streams on non-blocking sockets; for each notification, the
    arrival time (CLOCK_MONOTONIC, shared by the processes) by entry id."""
    sel = selectors.DefaultSelector()
    socks, opened, arrivals, bufs, retries = [], 0, {}, {}, 0

    def open_one():
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(f"GET /api/notifications/stream HTTP/1.0\r\nX-Auth-Token: {token}\r\n\r\n"
                  .encode())
        return s

    # A stream refused with 503 (its child was full) is opened again, as a page does after
    # Retry-After: each connection lands on whichever child accepts it.
    for _ in range(n):
        s = open_one()
        while b" 200 " not in s.recv(128).split(b"\r\n", 1)[0]:
            s.close()
            retries += 1
            time.sleep(0.2)
            s = open_one()
        opened += 1
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        socks.append(s)
        bufs[s] = b""
    ready.put((opened, retries))
    while not stop.is_set():
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except BlockingIOError:
                continue
            now = time.monotonic()
            if not data:
                sel.unregister(s)
                continue
            buf = bufs[s] + data
            while True:
                i = buf.find(b"event: notification\ndata: ")
                if i < 0:
                    break
                j = buf.find(b"\n", i + 27)
                if j < 0:
                    break
                k = buf.find(b'"entity_id":', i, j)
                e = int(buf[k + 12:buf.find(b",", k)])
                arrivals.setdefault(e, []).append(now)
                buf = buf[j:]
            bufs[s] = buf[-4096:]
    out.put((opened, arrivals))
    for s in socks:
        s.close()


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def drive(srv, group, sent, api_times, done):
    for _ in range(EVENTS):
        t0 = time.monotonic()
        r = srv.api("POST", "/api/entries", token=srv.admin_token,
                    json={"student_name": "Bench", "group_id": group["id"]})
        sent[r.json()["id"]] = t0
        a = time.monotonic()
        api_times.append((srv.api("GET", "/api/branches", token=srv.admin_token).status_code,
                          time.monotonic() - a))
        time.sleep(0.5)
    time.sleep(3)
    done.set()  # (run() calls drive() directly)


def run(srv, group):
    sent, api_times = {}, []
    ready, out, stop = mp.Queue(), mp.Queue(), mp.Event()
    per = [STREAMS // PROCS + (1 if i < STREAMS % PROCS else 0) for i in range(PROCS)]
    procs = [mp.Process(target=client, args=(srv.port, srv.admin_token, n, ready, stop, out))
             for n in per]
    for p in procs:
        p.start()
    counts = [ready.get(timeout=600) for _ in procs]
    opened, retries = sum(c[0] for c in counts), sum(c[1] for c in counts)
    time.sleep(2)
    rss_open = rss_mb(srv.pid)
    done = threading.Event()
    drive(srv, group, sent, api_times, done)
    stop.set()
    arrivals = {}
    for _ in procs:
        _, got = out.get(timeout=60)
        for e, ts in got.items():
            arrivals.setdefault(e, []).extend(ts)
    for p in procs:
        p.join()
    lat = [(t - sent[e]) * 1000 for e, ts in arrivals.items() if e in sent for t in ts]
    delivered = sum(len(ts) for e, ts in arrivals.items() if e in sent)
    return {"open": opened, "refused": retries, "rss_open": rss_open,
            "delivered": delivered, "expected": opened * len(sent),
            "p50": percentile(lat, 0.5), "p99": percentile(lat, 0.99), "max": max(lat),
            "api_ok": all(s == 200 for s, _ in api_times),
            "api_p50": statistics.median(d for _, d in api_times) * 1000,
            "api_max": max(d for _, d in api_times) * 1000}


def one(label, extra):
    srv = harness.Server(extra_conf=SIZING + extra, label="bench-sse")
    try:
        srv.start()
        group = srv.create_group(srv.create_branch()["id"])
        time.sleep(2)
        idle = rss_mb(srv.pid)
        res = run(srv, group)
        res["idle"] = idle
        print(f"{label:14} streams {res['open']:5} (503 and reopened {res['refused']})  "
              f"RSS idle {idle:6.1f} MB, open {res['rss_open']:6.1f} MB  "
              f"commit->client p50 {res['p50']:6.1f} ms p99 {res['p99']:6.1f} ms "
              f"max {res['max']:6.1f} ms  delivered {res['delivered']}/{res['expected']}  "
              f"API {'ok' if res['api_ok'] else 'FAILED'} p50 {res['api_p50']:.1f} ms "
              f"max {res['api_max']:.1f} ms", flush=True)
        return res
    finally:
        srv.stop()
        srv.cleanup()


def main():
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"bench-sse: {STREAMS} streams, {EVENTS} events, SQLite", flush=True)
    one("without Redis", "")
    tmp = Path(tempfile.mkdtemp(prefix="bench-sse-redis-"))
    port = harness.free_port()
    redis = ["sh", str(TOP / "scripts" / "redis.sh")]
    subprocess.run(redis + ["start", str(tmp), str(port)], check=True)
    try:
        one("with Redis", f"JournalRedis 127.0.0.1:{port}\n")
    finally:
        subprocess.run(redis + ["stop", str(tmp)], check=True)
        subprocess.run(["rm", "-rf", str(tmp)])


if __name__ == "__main__":
    main()
