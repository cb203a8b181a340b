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

import asyncio
import json
import os
import resource
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
SIZING = ("ServerLimit 2\nThreadLimit 1200\nThreadsPerChild 1200\nMaxRequestWorkers 2400\n"
          "ThreadStackSize 262144\nListenBacklog 4096\nMaxSpareThreads 2400\n"
          "JournalStreamMax 1000\nLogLevel warn\n")


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


async def stream(port, token, arrivals, opened):
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
    writer.write(f"GET /api/notifications/stream HTTP/1.0\r\nX-Auth-Token: {token}\r\n\r\n"
                 .encode())
    await writer.drain()
    status = (await reader.readline()).decode()
    if " 200 " not in status:
        opened.append(False)
        writer.close()
        return
    opened.append(True)
    event = None
    while True:
        line = await reader.readline()
        if not line:
            break
        if line.startswith(b"event: "):
            event = line[7:].strip()
        elif line.startswith(b"data: ") and event == b"notification":
            d = json.loads(line[6:])
            arrivals.setdefault(d["entity_id"], []).append(time.monotonic())


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
    done.set()


async def run(srv, group):
    arrivals, opened, sent, api_times = {}, [], {}, []
    tasks = []
    for i in range(0, STREAMS, 100):
        tasks += [asyncio.create_task(stream(srv.port, srv.admin_token, arrivals, opened))
                  for _ in range(min(100, STREAMS - i))]
        while len(opened) < min(STREAMS, i + 100):
            await asyncio.sleep(0.05)
    await asyncio.sleep(2)
    rss_open = rss_mb(srv.pid)
    done = threading.Event()
    threading.Thread(target=drive, args=(srv, group, sent, api_times, done), daemon=True).start()
    while not done.is_set():
        await asyncio.sleep(0.2)
    for t in tasks:
        t.cancel()
    lat = [(t - sent[e]) * 1000 for e, ts in arrivals.items() if e in sent for t in ts]
    delivered = sum(len(ts) for e, ts in arrivals.items() if e in sent)
    return {"open": sum(opened), "refused": len(opened) - sum(opened), "rss_open": rss_open,
            "delivered": delivered, "expected": sum(opened) * len(sent),
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
        res = asyncio.run(run(srv, group))
        res["idle"] = idle
        print(f"{label:14} streams {res['open']:5} (refused {res['refused']})  "
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
