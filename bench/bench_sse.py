#!/usr/bin/python3
"""make bench-sse: event streams on one node (docs/events.md, "Capacity").

  streams     BENCH_STREAMS (2000) streams of an admin, opened and read by bench/sse_client
              (C, epoll: one thread holds them all and notes each arrival) on httpd sized as
              docs/events.md says (2 children x 1200 threads, 256 KB stacks,
              JournalStreamMax 1050)
  latency     BENCH_EVENTS (30) entries created through the API at BENCH_RATE (2) a second;
              for each, the time from its acknowledged POST (the commit precedes the answer)
              to each stream receiving its notification: p50/p99/max over every stream x event
              pair; the same from the moment the POST was sent (an upper bound), and the
              spread of one event's arrivals over the streams
  RSS         the httpd tree (parent and every descendant), sum of Rss in
              /proc/PID/smaps_rollup, idle and with the streams open
  API         GET /api/branches five times a second from another connection while the
              streams are open and the entries are written: every answer 200, p50/p99/max

  CPU         httpd's CPU time with the streams idle, and per entry while writing

Run without Redis, then with a redis-server (JournalRedis) started for it. SQLite. The load
average (1 min) is printed before and after each run: the machine may be shared.
BENCH_MODES=without or =with runs one of the two; BENCH_CLIENT names the client binary
(default build/bench/sse_client, made by make bench-sse); BENCH_JSON, when set, is a file
that receives the figures, with each event's first and last arrival.
"""

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

import requests

TOP = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOP / "tests" / "api"))
import harness  # noqa: E402

STREAMS = int(os.environ.get("BENCH_STREAMS", "2000"))
EVENTS = int(os.environ.get("BENCH_EVENTS", "30"))
RATE = float(os.environ.get("BENCH_RATE", "2"))
MODES = os.environ.get("BENCH_MODES", "without,with").split(",")  # without / with Redis
CLIENT = os.environ.get("BENCH_CLIENT", str(TOP / "build" / "bench" / "sse_client"))
SIZING = ("ServerLimit 2\nThreadLimit 1200\nThreadsPerChild 1200\nMaxRequestWorkers 2400\n"
          "ThreadStackSize 262144\nListenBacklog 4096\nMaxSpareThreads 2400\n"
          "JournalStreamMax 1050\nLogLevel warn\n")
AIM_P99_MS = 250
AIM_RSS_MB = 192


def tree_pids(root):
    """root and every process below it."""
    children = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    pids, todo = [], [root]
    while todo:
        p = todo.pop()
        pids.append(p)
        todo.extend(children.get(p, []))
    return pids


def rss_mb(root):
    """Sum of Rss over the httpd tree, from smaps_rollup, in MB."""
    total = 0
    for p in tree_pids(root):
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def cpu_ms(pids):
    """User + system CPU of the processes, in ms (what has ended is not counted)."""
    total = 0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total * 1000 / os.sysconf("SC_CLK_TCK")


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


class Prober(threading.Thread):
    """An ordinary request on its own connection while the streams are open."""

    def __init__(self, srv):
        super().__init__(daemon=True)
        self.url, self.token = srv.base_url + "/api/branches", srv.admin_token
        self.stop, self.times = threading.Event(), []

    def run(self):
        http = requests.Session()
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                status = http.get(self.url, headers={"X-Auth-Token": self.token},
                                  timeout=10).status_code
            except requests.RequestException:
                status = 0
            self.times.append((status, (time.monotonic() - t0) * 1000))
            self.stop.wait(0.2)


def commit(srv, group):
    """BENCH_EVENTS entries at BENCH_RATE a second: {entry id: (sent, acknowledged)}."""
    sent, step = {}, 1.0 / RATE
    due = time.monotonic()
    for _ in range(EVENTS):
        time.sleep(max(0.0, due - time.monotonic()))
        due += step
        t0 = time.monotonic()
        r = srv.api("POST", "/api/entries", token=srv.admin_token,
                    json={"student_name": "Bench", "group_id": group["id"]})
        t1 = time.monotonic()
        assert r.status_code == 201, r.text
        sent[r.json()["id"]] = (t0, t1)
    return sent


def measure(srv, group):
    client = subprocess.Popen([CLIENT, "--port", str(srv.port), "--token", srv.admin_token,
                               "--streams", str(STREAMS)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        ready = json.loads(client.stdout.readline())
        pids = tree_pids(srv.pid)
        cpu0 = cpu_ms(pids)
        time.sleep(2)
        cpu_idle = (cpu_ms(pids) - cpu0) / 2
        rss_open = rss_mb(srv.pid)
        prober = Prober(srv)
        prober.start()
        cpu0, client0 = cpu_ms(pids), cpu_ms([client.pid])
        sent = commit(srv, group)
        time.sleep(3)  # the last event's slowest streams
        cpu_run, client_run = cpu_ms(pids) - cpu0, cpu_ms([client.pid]) - client0
        prober.stop.set()
        prober.join()
        out, _ = client.communicate(timeout=120)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    got = json.loads(out)
    mine = [e for e in got["events"]
            if e["event"] == "notification" and e["entity_id"] in sent]
    from_ack = [(t - sent[e["entity_id"]][1]) * 1000 for e in mine for t in e["t"]]
    from_send = [(t - sent[e["entity_id"]][0]) * 1000 for e in mine for t in e["t"]]
    spread = [(e["last"] - e["first"]) * 1000 for e in mine]
    first = [(e["first"] - sent[e["entity_id"]][1]) * 1000 for e in mine]
    post = [(a - s) * 1000 for s, a in sent.values()]
    api = prober.times
    return {
        "streams": ready["ready"], "refused": got["refused"], "chunked": got["chunked"],
        "open_seconds": ready["seconds"], "closed_by_server": got["closed_by_server"],
        "duplicates": got["duplicates"], "out_of_order": got["out_of_order"],
        "rss_open": rss_open, "delivered": len(from_ack), "expected": ready["ready"] * len(sent),
        "p50": percentile(from_ack, 0.5), "p99": percentile(from_ack, 0.99),
        "max": max(from_ack), "min": min(from_ack),
        "send_p50": percentile(from_send, 0.5), "send_p99": percentile(from_send, 0.99),
        "send_max": max(from_send),
        "post_p50": statistics.median(post), "post_max": max(post),
        "spread_p50": statistics.median(spread), "spread_max": max(spread),
        "first_p50": statistics.median(first), "first_max": max(first),
        "cpu_idle": cpu_idle, "cpu_event": cpu_run / len(sent),  # per entry: two events
        "client_cpu_event": client_run / len(sent),
        "api_n": len(api), "api_ok": sum(1 for s, _ in api if s == 200),
        "api_p50": percentile([d for _, d in api], 0.5),
        "api_p99": percentile([d for _, d in api], 0.99),
        "api_max": max(d for _, d in api),
        "per_event": [{"entry": e["entity_id"], "post_ms": (sent[e["entity_id"]][1]
                                                            - sent[e["entity_id"]][0]) * 1000,
                       "first_ms": (e["first"] - sent[e["entity_id"]][1]) * 1000,
                       "last_ms": (e["last"] - sent[e["entity_id"]][1]) * 1000, "n": e["n"]}
                      for e in mine],
    }


def show(label, r):
    met = r["p99"] <= AIM_P99_MS and r["rss_open"] <= AIM_RSS_MB and r["api_ok"] == r["api_n"]
    verdict = ("met" if met else "NOT met") if r["streams"] >= 2000 else "not judged (< 2,000)"
    print(f"{label}: load average {r['load_before']:.2f} -> {r['load_after']:.2f}\n"
          f"  streams {r['streams']} open in {r['open_seconds']:.1f} s (503 then reopened "
          f"{r['refused']}), HTTP/1.1 chunked {r['chunked']}, closed by the server "
          f"{r['closed_by_server']}\n"
          f"  httpd tree RSS idle {r['idle']:.1f} MB, {r['streams']} streams open "
          f"{r['rss_open']:.1f} MB (aim <= {AIM_RSS_MB})\n"
          f"  commit (POST acknowledged) -> client: p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms,"
          f" max {r['max']:.1f} ms, min {r['min']:.1f} ms (aim p99 <= {AIM_P99_MS})\n"
          f"  POST sent -> client: p50 {r['send_p50']:.1f} ms, p99 {r['send_p99']:.1f} ms, "
          f"max {r['send_max']:.1f} ms; the POST itself p50 {r['post_p50']:.1f} ms, "
          f"max {r['post_max']:.1f} ms\n"
          f"  one event's spread over the streams (last - first): p50 {r['spread_p50']:.1f} ms,"
          f" max {r['spread_max']:.1f} ms; its first arrival after the acknowledgement: p50 "
          f"{r['first_p50']:.1f} ms, max {r['first_max']:.1f} ms\n"
          f"  CPU: httpd {r['cpu_idle']:.0f} ms/s with the streams idle, "
          f"{r['cpu_event']:.0f} ms per entry while writing (its two events to every stream, "
          f"with the API probes); the client {r['client_cpu_event']:.1f} ms per entry\n"
          f"  delivered {r['delivered']} of {r['expected']}, duplicates {r['duplicates']}, "
          f"out of order {r['out_of_order']}\n"
          f"  API GET /api/branches during the run: {r['api_ok']} of {r['api_n']} answered 200,"
          f" p50 {r['api_p50']:.1f} ms, p99 {r['api_p99']:.1f} ms, max {r['api_max']:.1f} ms\n"
          f"  aims {verdict}", flush=True)


def one(label, extra):
    srv = harness.Server(extra_conf=SIZING + extra, label="bench-sse")
    try:
        srv.start()
        group = srv.create_group(srv.create_branch()["id"])
        time.sleep(2)
        load_before = os.getloadavg()[0]
        idle = rss_mb(srv.pid)
        res = measure(srv, group)
        res.update(idle=idle, load_before=load_before, load_after=os.getloadavg()[0])
        # Refusals above the cap (JR09002) are expected while the streams open.
        res["log_problems"] = [line for line in srv.error_log_problems()
                               if "JR09002" not in line]
        show(label, res)
        for line in res["log_problems"][:10]:
            print(f"  error log: {line}", flush=True)
        return res
    finally:
        srv.stop()
        srv.cleanup()


def main():
    if not os.access(CLIENT, os.X_OK):
        sys.exit(f"bench-sse: no client at {CLIENT} (make bench-sse builds it)")
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"bench-sse: {STREAMS} streams, {EVENTS} events at {RATE:g}/s, SQLite, "
          f"{os.cpu_count()} CPUs", flush=True)
    results = {}
    if "without" in MODES:
        results["without Redis"] = one("without Redis", "")
    if "with" in MODES:
        results["with Redis"] = with_redis()
    if os.environ.get("BENCH_JSON"):
        Path(os.environ["BENCH_JSON"]).write_text(json.dumps(results, indent=1) + "\n")


def with_redis():
    tmp = Path(tempfile.mkdtemp(prefix="bench-sse-redis-"))
    port = harness.free_port()
    redis = ["sh", str(TOP / "scripts" / "redis.sh")]
    subprocess.run(redis + ["start", str(tmp), str(port)], check=True)
    try:
        return one("with Redis", f"JournalRedis 127.0.0.1:{port}\n")
    finally:
        subprocess.run(redis + ["stop", str(tmp)], check=True)
        subprocess.run(["rm", "-rf", str(tmp)])


if __name__ == "__main__":
    main()
