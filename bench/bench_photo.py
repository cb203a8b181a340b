#!/usr/bin/python3
"""make bench-photo: the server-side enhancement (action `enhance`, libvips in journal-worker)
of a real 12-megapixel JPEG with an EXIF orientation, through the API and a worker started by
httpd, the worker pinned to one core.

  time   the worker's own figure for each job (JR08011: claim to result stored), and the
         wall time from the API's 202 to the job being done
  RSS    the worker's peak resident memory (VmHWM) before the first job and after the last
  check  the result is 3000x4000 (the 4000x3000 photo turned by orientation 6) with the red
         corner where a viewer shows it

Environment: BENCH_RUNS (5), BENCH_DB (sqlite or pgsql; pgsql needs JOURNAL_TEST_PG_PORT).
"""

import io
import os
import re
import sys
import time
from pathlib import Path

from PIL import Image, ImageChops

TOP = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOP / "tests" / "api"))
import harness  # noqa: E402
import worker_support as ws  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "5"))
DONE_RE = re.compile(r"JR08011: photo job (\d+) \(enhance\) of entry \d+: done in (\d+) ms")


def photo_12mp():
    """4000x3000: gradients and noise (a JPEG of realistic size), a red block in the stored
    top-left corner, EXIF orientation 6 (shown turned 90 degrees clockwise)."""
    w, h = 4000, 3000
    grad = Image.linear_gradient("L").resize((w, h))
    noise = Image.effect_noise((w, h), 40)
    img = Image.merge("RGB", (grad, ImageChops.add(grad, noise, scale=2.0),
                              ImageChops.invert(grad)))
    img.paste((250, 10, 10), (0, 0, 400, 300))
    exif = Image.Exif()
    exif[0x0112] = 6
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=92, exif=exif.tobytes())
    return buf.getvalue()


def vm(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def main():
    harness.DB_KIND = os.environ.get("BENCH_DB", "sqlite")
    data = photo_12mp()
    print(f"photo: 4000x3000 JPEG, orientation 6, {len(data) / 1e6:.1f} MB", flush=True)
    fake = ws.FakeLLM()
    srv = ws.Server(label="bench-photo")
    env = ws.WorkerEnv(srv, fake, endpoint=False, log_level="info")
    try:
        [pid] = env.start(1)
        os.sched_setaffinity(pid, {sorted(os.sched_getaffinity(0))[0]})
        base_peak = vm(pid, "VmHWM")
        group = ws.new_group(srv)
        walls = []
        for _ in range(RUNS):
            e = ws.api(srv, "POST", "/api/entries", {"student_name": "S", "group_id":
                                                     group["id"], "description": ""}, status=201)
            r = srv.api("POST", f"/api/entries/{e['id']}/photo", token=srv.admin_token,
                        data=data, headers={"Content-Type": "image/jpeg"})
            assert r.status_code == 201, r.text
            t0 = time.monotonic()
            job = ws.api(srv, "POST", f"/api/entries/{e['id']}/photo/enhance", {}, status=202)

            def done():
                js = ws.api(srv, "GET", f"/api/entries/{e['id']}/photo/jobs", status=200)
                j = [x for x in js if x["id"] == job["id"]][0]
                assert j["status"] != "failed", j
                return j if j["status"] == "done" else None
            j = ws.wait_for(done, 120, 0.02, "the enhance job")
            walls.append((time.monotonic() - t0) * 1000)
            assert (j["result_width"], j["result_height"]) == (3000, 4000), j
        res = srv.api("GET", f"/api/entries/{e['id']}/photo/jobs/{job['id']}/result",
                      token=srv.admin_token)
        out = Image.open(io.BytesIO(res.content))
        out.load()
        assert out.size == (3000, 4000) and out.getexif().get(0x0112) in (None, 1)
        px = out.getpixel((2900, 100))  # the red block, now top-right
        assert px[0] > 180 and px[1] < 100 and px[2] < 100, px
        peak = vm(pid, "VmHWM")
        own = [int(ms) for _, ms in DONE_RE.findall(env.output())]
        print(f"worker's time per job (ms): {own}")
        print(f"API 202 to done (ms): {[round(w) for w in walls]}")
        print(f"worker peak RSS: {base_peak:.1f} MB before, {peak:.1f} MB after")
        print("\n| photo | runs | worker time p50 (max) | 202 to done p50 | peak RSS |")
        print("|---|---|---|---|---|")
        own.sort()
        walls.sort()
        print(f"| 12 MP JPEG, {len(data) / 1e6:.1f} MB, orientation 6 | {RUNS} |"
              f" {own[len(own) // 2]} ms ({own[-1]} ms) | {walls[len(walls) // 2]:.0f} ms |"
              f" {peak:.1f} MB |")
    finally:
        try:
            srv.stop()
        finally:
            srv.cleanup()
            fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
