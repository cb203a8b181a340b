"""Photo jobs through the real httpd and journal-worker (spec 3.4, 4.3, 8; docs/photos.md):
AI enhancement through the fake photo service, server-side enhancement with libvips, the job
history, the result's preview, apply / reject / rollback / restore-original, the worker
switch, the service's health with its 2000 ms timeout, failed attempts and retries, a worker
killed mid-job, branch isolation, and the events written to the outbox."""

import hashlib
import io
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import requests
from PIL import Image

import harness
import worker_support as ws
from harness import assert_error, assert_json, uniq
from worker_support import (  # noqa: F401 (fixtures)
    WAIT, api, fake_llm, new_group, rows, wait_for, worker_env)

FAKE_PHOTO = harness.REPO / "tests" / "fakes" / "fake_photo.py"
NO_SUCH_ID = 9_000_000_000
JOB_KEYS = {"id", "entry_id", "action", "params", "status", "applied", "attempts", "error",
            "created_at", "updated_at", "started_at", "finished_at", "result_size",
            "result_width", "result_height", "result_type"}


# ---- the fake photo service ---------------------------------------------------------------------
class FakePhoto(ws.FakeLLM):
    """tests/fakes/fake_photo.py in its own process (stopped as the fake LLM is)."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="jr-fake-photo-"))
        port_file = self.dir / "port"
        self.proc = subprocess.Popen([sys.executable, str(FAKE_PHOTO), "--port-file",
                                      str(port_file)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        wait_for(lambda: port_file.exists() or self.proc.poll() is not None, 20,
                 what="the fake photo service")
        if self.proc.poll() is not None:
            raise RuntimeError(f"fake photo service exited: {self.proc.stderr.read().decode()}")
        self.base = f"http://127.0.0.1:{int(port_file.read_text())}"
        self.http = requests.Session()

    def mode(self, **change):
        self.http.post(self.base + "/_mode", json=change, timeout=30).raise_for_status()

    def requests(self):
        return self.http.get(self.base + "/_requests", timeout=30).json()


@pytest.fixture
def fake_photo():
    fake = FakePhoto()
    yield fake
    fake.stop()


@pytest.fixture
def photo_env(worker_env, fake_photo):
    """photo_env(service=True, extra="") -> a started WorkerEnv whose workers know the fake
    photo service (service=False: no JournalPhotoAIEndpoint)."""
    def make(service=True, extra="", **kwargs):
        conf = extra
        if service:
            conf += f"JournalPhotoAIEndpoint {fake_photo.base}\n"
        env = worker_env(extra_conf=conf, endpoint=False, **kwargs)
        env.photo = fake_photo
        return env
    return make


# ---- images ----------------------------------------------------------------------------------
def jpeg(width=64, height=48, orientation=None, color=(40, 90, 160)):
    """A JPEG with a red block in its top-left corner (as stored), and an EXIF orientation."""
    img = Image.new("RGB", (width, height), color)
    img.paste((250, 10, 10), (0, 0, width // 4, height // 4))
    buf = io.BytesIO()
    kwargs = {"quality": 92}
    if orientation:
        exif = Image.Exif()
        exif[0x0112] = orientation
        kwargs["exif"] = exif.tobytes()
    img.save(buf, "JPEG", **kwargs)
    return buf.getvalue()


def sha(data):
    return hashlib.sha256(data).hexdigest()


def image_of(data):
    img = Image.open(io.BytesIO(data))
    img.load()
    return img


# ---- the journal -------------------------------------------------------------------------------
def entry_with_photo(srv, data=None, group=None):
    g = group or new_group(srv)
    e = api(srv, "POST", "/api/entries", {"student_name": uniq("s"), "group_id": g["id"],
                                          "description": ""}, status=201)
    if data is not False:
        put_photo(srv, e["id"], data or jpeg())
    return e


def put_photo(srv, eid, data):
    r = srv.api("POST", f"/api/entries/{eid}/photo", token=srv.admin_token, data=data,
                headers={"Content-Type": "application/octet-stream"})
    assert r.status_code in (200, 201), r.text
    return r.json()


def photo_bytes(srv, eid, which=""):
    r = srv.api("GET", f"/api/entries/{eid}/photo{which}", token=srv.admin_token)
    assert r.status_code == 200, r.text
    return r.content


def post(srv, path, body=None, token=None):
    return srv.api("POST", path, token=token or srv.admin_token, json=body)


def enhance(srv, eid, body=None, ai=True, token=None):
    return post(srv, f"/api/entries/{eid}/photo/{'enhance-ai' if ai else 'enhance'}", body, token)


def jobs(srv, eid, token=None):
    return assert_json(srv.api("GET", f"/api/entries/{eid}/photo/jobs",
                               token=token or srv.admin_token), 200)


def job_of(srv, eid, jid):
    [j] = [j for j in jobs(srv, eid) if j["id"] == jid]
    return j


def wait_job(srv, eid, jid, statuses, timeout=WAIT):
    statuses = (statuses,) if isinstance(statuses, str) else statuses
    last = {}

    def check():
        last["j"] = job_of(srv, eid, jid)
        return last["j"] if last["j"]["status"] in statuses else None
    try:
        return wait_for(check, timeout, 0.1, f"photo job {jid} in {statuses}")
    except AssertionError:
        raise AssertionError(f"photo job {jid} stayed {last['j']}")


def photo_events(srv, jid):
    return [(t, json.loads(p)) for t, p in
            rows(srv, f"SELECT type, payload FROM events WHERE entity_type = 'photo_job'"
                      f" AND entity_id = {jid} ORDER BY id")]


def stored_files(srv):
    base = srv.data_dir / "photos"
    return {p.relative_to(srv.data_dir).as_posix() for p in base.rglob("*") if p.is_file()} \
        if base.exists() else set()


def result_files(srv, jid):
    return [r[0] for r in rows(srv, f"SELECT result_file FROM photo_jobs WHERE id = {jid}")]


def audit_actions(srv, entity_type, entity_id):
    a = assert_json(srv.api("GET", "/api/audit", token=srv.admin_token,
                            params={"entity_type": entity_type, "entity_id": entity_id}), 200)
    return [x["action"] for x in a["items"]]


# ---- AI enhancement, apply, history -------------------------------------------------------------
def test_ai_job_apply_rollback_restore(photo_env):
    env = photo_env()
    srv, fake = env.srv, env.photo
    original = jpeg(80, 60)
    e = entry_with_photo(srv, original)
    eid = e["id"]

    j = assert_json(enhance(srv, eid), 202)
    assert set(j) == JOB_KEYS
    assert (j["action"], j["status"], j["applied"], j["attempts"]) == ("ai", "queued", False, 0)
    # an empty body takes the settings' defaults
    assert j["params"] == {"model": "x2plus", "face": "off", "face_model": "gfpgan",
                           "strength": 0.5, "device": "auto"}
    done = wait_job(srv, eid, j["id"], "done")
    assert (done["result_width"], done["result_height"]) == (160, 120)
    assert done["result_type"] == "image/png" and done["attempts"] == 1
    assert done["started_at"] and done["finished_at"] and done["error"] is None

    # the request the worker sent: multipart with the photo and the params
    [req] = fake.requests()
    assert req["path"] == "/enhance" and req["image_sha256"] == sha(original)
    assert req["params"] == j["params"]

    # the preview before applying: the stored result, with its digest as ETag
    r = srv.api("GET", f"/api/entries/{eid}/photo/jobs/{j['id']}/result", token=srv.admin_token)
    assert r.status_code == 200 and r.headers["Content-Type"] == "image/png"
    assert image_of(r.content).size == (160, 120) and len(r.content) == done["result_size"]
    assert r.headers["ETag"] == f'"{sha(r.content)}"'
    result = r.content

    # the outbox: photo.done with the entry, the job and the branch
    [(kind, payload)] = photo_events(srv, j["id"])
    assert kind == "photo.done"
    [[branch]] = rows(srv, f"SELECT branch_id FROM entries WHERE id = {eid}")
    assert (payload["entry_id"], payload["job_id"], payload["branch_id"]) == \
        (eid, j["id"], int(branch))
    assert payload["status"] == "done"

    # apply: the result becomes the photo, the old one goes onto the history
    a = assert_json(post(srv, f"/api/entries/{eid}/photo/jobs/{j['id']}/apply"), 200)
    assert (a["status"], a["applied"]) == ("done", True)
    assert photo_bytes(srv, eid) == result
    assert photo_bytes(srv, eid, "/original") == original
    assert_error(post(srv, f"/api/entries/{eid}/photo/jobs/{j['id']}/apply"), 409, "applied")
    assert_error(post(srv, f"/api/entries/{eid}/photo/jobs/{j['id']}/reject"), 409)
    assert_error(srv.api("GET", f"/api/entries/{eid}/photo/jobs/{j['id']}/result",
                         token=srv.admin_token), 409)

    # a second enhancement (server-side) applied on top
    j2 = assert_json(enhance(srv, eid, {"strength": 1}, ai=False), 202)
    assert j2["params"] == {"strength": 1.0}
    wait_job(srv, eid, j2["id"], "done")
    assert_json(post(srv, f"/api/entries/{eid}/photo/jobs/{j2['id']}/apply"), 200)
    second = photo_bytes(srv, eid)
    assert second != result and image_of(second).size == (160, 120)

    # rollback pops the history: the AI result, then the first photo; then nothing is left
    r = assert_json(post(srv, f"/api/entries/{eid}/photo/rollback"), 200)
    assert r["history"] == 1 and r["sha256"] == sha(result)
    assert photo_bytes(srv, eid) == result
    r = assert_json(post(srv, f"/api/entries/{eid}/photo/rollback"), 200)
    assert r["history"] == 0 and photo_bytes(srv, eid) == original
    assert_error(post(srv, f"/api/entries/{eid}/photo/rollback"), 409, "previous")

    # restore-original keeps the history: apply, restore, then roll back to the applied one
    j3 = assert_json(enhance(srv, eid, {"model": "general-x4v3", "face": "face",
                                        "face_model": "codeformer", "strength": 0.25}), 202)
    wait_job(srv, eid, j3["id"], "done")
    assert_json(post(srv, f"/api/entries/{eid}/photo/jobs/{j3['id']}/apply"), 200)
    big = photo_bytes(srv, eid)
    assert image_of(big).size == (320, 240)
    r = assert_json(post(srv, f"/api/entries/{eid}/photo/restore-original"), 200)
    assert r["history"] == 2 and photo_bytes(srv, eid) == original
    r = assert_json(post(srv, f"/api/entries/{eid}/photo/rollback"), 200)
    assert photo_bytes(srv, eid) == big and r["history"] == 1

    # newest first; every mutation audited
    assert [x["id"] for x in jobs(srv, eid)] == [j3["id"], j2["id"], j["id"]]
    assert audit_actions(srv, "photo_job", j["id"]).count("apply") == 1
    actions = audit_actions(srv, "entry_photo", eid)
    assert actions.count("rollback") == 3 and actions.count("restore_original") == 1
    assert "create" in audit_actions(srv, "photo_job", j3["id"])


def test_reject_removes_the_result(photo_env):
    env = photo_env()
    srv = env.srv
    e = entry_with_photo(srv)
    eid = e["id"]
    before = photo_bytes(srv, eid)
    j = assert_json(enhance(srv, eid, ai=False), 202)
    wait_job(srv, eid, j["id"], "done")
    [name] = result_files(srv, j["id"])
    assert name in stored_files(srv)
    r = assert_json(post(srv, f"/api/entries/{eid}/photo/jobs/{j['id']}/reject"), 200)
    assert (r["status"], r["applied"]) == ("rejected", False)
    assert name not in stored_files(srv) and result_files(srv, j["id"]) == [None]
    assert photo_bytes(srv, eid) == before
    for action in ("apply", "reject"):
        assert_error(post(srv, f"/api/entries/{eid}/photo/jobs/{j['id']}/{action}"), 409,
                     "rejected")
    assert_error(srv.api("GET", f"/api/entries/{eid}/photo/jobs/{j['id']}/result",
                         token=srv.admin_token), 409)
    assert "reject" in audit_actions(srv, "photo_job", j["id"])
    # unknown jobs, and a job of another entry, are 404
    other = entry_with_photo(srv)
    for path in (f"/api/entries/{eid}/photo/jobs/{NO_SUCH_ID}/apply",
                 f"/api/entries/{other['id']}/photo/jobs/{j['id']}/reject"):
        assert_error(post(srv, path), 404, "job")
    # no original, nothing to roll back to, no photo at all
    bare = entry_with_photo(srv, data=False)
    assert_error(post(srv, f"/api/entries/{bare['id']}/photo/restore-original"), 409, "original")
    assert_error(post(srv, f"/api/entries/{bare['id']}/photo/rollback"), 409)


# ---- server-side enhancement -------------------------------------------------------------------
def test_enhance_applies_exif_orientation(photo_env):
    env = photo_env(service=False)
    srv = env.srv
    # stored 64 wide, 48 high, red block top-left; orientation 6: shown rotated 90° clockwise
    e = entry_with_photo(srv, jpeg(64, 48, orientation=6))
    j = assert_json(enhance(srv, e["id"], ai=False), 202)
    done = wait_job(srv, e["id"], j["id"], "done")
    assert (done["result_width"], done["result_height"]) == (48, 64)
    assert done["result_type"] == "image/jpeg"
    r = srv.api("GET", f"/api/entries/{e['id']}/photo/jobs/{j['id']}/result",
                token=srv.admin_token)
    img = image_of(r.content)
    assert img.size == (48, 64)
    assert img.getexif().get(0x0112) in (None, 1)  # the orientation is in the pixels now
    red = lambda px: px[0] > 180 and px[1] < 90 and px[2] < 90  # noqa: E731
    assert red(img.getpixel((44, 3)))          # rotated clockwise: top-right
    assert not red(img.getpixel((3, 3)))
    assert not red(img.getpixel((3, 60)))


def test_enhance_stretches_levels_by_strength(photo_env):
    env = photo_env(service=False)
    srv = env.srv
    flat = Image.new("RGB", (96, 64))
    flat.putdata([(90 + x * 70 // 95,) * 3 for _ in range(64) for x in range(96)])
    buf = io.BytesIO()
    flat.save(buf, "PNG")
    e = entry_with_photo(srv, buf.getvalue())

    def extremes(strength):
        j = assert_json(enhance(srv, e["id"], {"strength": strength}, ai=False), 202)
        done = wait_job(srv, e["id"], j["id"], "done")
        assert done["result_type"] == "image/png"  # the source's format
        r = srv.api("GET", f"/api/entries/{e['id']}/photo/jobs/{j['id']}/result",
                    token=srv.admin_token)
        return image_of(r.content).convert("L").getextrema()

    lo, hi = extremes(1)
    assert lo <= 8 and hi >= 247, (lo, hi)       # 90..160 stretched to the full range
    lo, hi = extremes(0)
    assert 85 <= lo <= 95 and 155 <= hi <= 165, (lo, hi)  # strength 0 leaves the levels
    lo, hi = extremes(0.5)
    assert 35 <= lo <= 60 and 195 <= hi <= 225, (lo, hi)  # half way


# ---- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize("ai,body,field", [
    (True, {"model": "x8"}, "model"),
    (True, {"face": "eyes"}, "face"),
    (True, {"face_model": "other"}, "face_model"),
    (True, {"strength": 1.5}, "strength"),
    (True, {"strength": "high"}, "strength"),
    (True, {"model": 3}, "model"),
    (True, {"colour": "red"}, "colour"),
    (False, {"strength": -0.1}, "strength"),
    (False, {"model": "x2plus"}, "model"),
])
def test_bad_bodies_are_400_before_the_entry(photo_env, ai, body, field):
    env = photo_env(service=False)
    srv = env.srv
    e = entry_with_photo(srv)
    assert_error(enhance(srv, NO_SUCH_ID, body, ai=ai), 400, field)
    assert_error(enhance(srv, e["id"], body, ai=ai), 400, field)
    assert jobs(srv, e["id"]) == []
    assert rows(srv, "SELECT COUNT(*) FROM photo_jobs") == [["0"]]


def test_unknown_entry_and_entry_without_photo(photo_env):
    env = photo_env(service=False)
    srv = env.srv
    bare = entry_with_photo(srv, data=False)
    for ai in (True, False):
        assert_error(enhance(srv, NO_SUCH_ID, ai=ai), 404, "entry")
        assert_error(enhance(srv, bare["id"], ai=ai), 409, "photo")
    r = srv.api("POST", f"/api/entries/{bare['id']}/photo/enhance", token=srv.admin_token,
                data="{", headers={"Content-Type": "application/json"})
    assert_error(r, 400)
    assert rows(srv, "SELECT COUNT(*) FROM photo_jobs") == [["0"]]
    assert_error(srv.api("GET", f"/api/entries/{NO_SUCH_ID}/photo/jobs",
                         token=srv.admin_token), 404)


# ---- the switch, the status, the service ---------------------------------------------------------
def test_enabled_switch_and_status(photo_env):
    env = photo_env()
    srv = env.srv
    _, tutor = srv.create_tutor()
    status = assert_json(srv.api("GET", "/api/photo-jobs/status", token=srv.admin_token), 200)
    assert status["enabled"] is True and status["service"] == {"configured": True}
    for bad in ({}, {"enabled": "no"}, {"enabled": 0}, {"enabled": True, "x": 1}):
        assert_error(srv.api("PUT", "/api/photo-jobs/enabled", token=srv.admin_token, json=bad),
                     400, "enabled" if "x" not in bad else "x")
    assert_error(srv.api("PUT", "/api/photo-jobs/enabled", token=tutor,
                         json={"enabled": False}), 403)
    assert assert_json(srv.api("PUT", "/api/photo-jobs/enabled", token=srv.admin_token,
                               json={"enabled": False}), 200) == {"enabled": False}
    s = assert_json(srv.api("GET", "/api/settings", token=srv.admin_token), 200)
    assert s["photo_worker_enabled"] is False

    e = entry_with_photo(srv)
    j1 = assert_json(enhance(srv, e["id"]), 202)
    j2 = assert_json(enhance(srv, e["id"], ai=False), 202)
    time.sleep(3)  # the worker looks at once after each commit: they stay queued
    assert [job_of(srv, e["id"], j)["status"] for j in (j1["id"], j2["id"])] == \
        ["queued", "queued"]
    status = assert_json(srv.api("GET", "/api/photo-jobs/status", token=srv.admin_token), 200)
    assert status["enabled"] is False and status["queued"] == 2
    assert env.photo.requests() == []

    assert_json(srv.api("PUT", "/api/photo-jobs/enabled", token=srv.admin_token,
                        json={"enabled": True}), 200)
    wait_job(srv, e["id"], j1["id"], "done")
    wait_job(srv, e["id"], j2["id"], "done")
    assert "update" in [a["action"] for a in assert_json(srv.api(
        "GET", "/api/audit", token=srv.admin_token, params={"entity_type": "settings"}),
        200)["items"]]


def test_without_a_service_ai_jobs_stay_queued(photo_env):
    env = photo_env(service=False)
    srv = env.srv
    e = entry_with_photo(srv)
    ai = assert_json(enhance(srv, e["id"]), 202)
    local = assert_json(enhance(srv, e["id"], ai=False), 202)
    wait_job(srv, e["id"], local["id"], "done")
    time.sleep(1)
    assert job_of(srv, e["id"], ai["id"])["status"] == "queued"
    status = assert_json(srv.api("GET", "/api/photo-jobs/status", token=srv.admin_token), 200)
    assert status["service"] == {"configured": False}
    assert (status["queued"], status["done"]) == (1, 1)
    r = assert_json(srv.api("GET", "/api/photo-ai/health", token=srv.admin_token), 502)
    assert r["ok"] is False and "not configured" in r["error"]


def test_health(photo_env):
    env = photo_env()
    srv, fake = env.srv, env.photo
    _, tutor = srv.create_tutor()
    r = assert_json(srv.api("GET", "/api/photo-ai/health", token=srv.admin_token), 200)
    assert r["ok"] is True and isinstance(r["latency_ms"], int)
    assert r["upstream"]["ok"] is True and r["upstream"]["device"] == "cpu"
    assert_error(srv.api("GET", "/api/photo-ai/health", token=tutor), 403)
    fake.mode(health="down")
    r = assert_json(srv.api("GET", "/api/photo-ai/health", token=srv.admin_token), 502)
    assert r["ok"] is False and "HTTP 503" in r["error"]
    fake.mode(health="slow", ms=1000)  # within the 2000 ms
    assert assert_json(srv.api("GET", "/api/photo-ai/health", token=srv.admin_token),
                       200)["latency_ms"] >= 950
    fake.mode(health="slow", ms=6000)
    t0 = time.monotonic()
    r = assert_json(srv.api("GET", "/api/photo-ai/health", token=srv.admin_token), 504)
    took = time.monotonic() - t0
    assert r["ok"] is False and "2000 ms" in r["error"]
    assert 1.9 <= took < 5.5, took


# ---- failures and retries ------------------------------------------------------------------------
def test_failed_attempts_retry_then_fail_and_requeue(photo_env):
    env = photo_env()
    srv, fake = env.srv, env.photo
    env.allow("JR08010")  # warn lines of failed attempts (not errors, but named)
    e = entry_with_photo(srv)
    eid = e["id"]

    fake.mode(mode="500", count=1)
    j = assert_json(enhance(srv, eid), 202)
    wait_for(lambda: job_of(srv, eid, j["id"])["error"], what="the first failed attempt")
    first = job_of(srv, eid, j["id"])
    assert first["status"] in ("queued", "processing", "done")
    assert first["error"] == "the photo service answered HTTP 500" or first["status"] == "done"
    done = wait_job(srv, eid, j["id"], "done")
    assert done["attempts"] == 2 and len(fake.requests()) == 2

    fake.mode(mode="garbage")
    bad = assert_json(enhance(srv, eid), 202)
    failed = wait_job(srv, eid, bad["id"], "failed", timeout=WAIT + 30)
    assert failed["attempts"] == 3 and "image" in failed["error"]
    assert result_files(srv, bad["id"]) == [None]
    assert [k for k, _ in photo_events(srv, bad["id"])] == ["photo.failed"]
    assert photo_events(srv, bad["id"])[0][1]["error"] == failed["error"]

    fake.mode(mode="ok")
    r = assert_json(srv.api("POST", "/api/photo-jobs/requeue-failed", token=srv.admin_token), 200)
    assert r == {"ok": True, "count": 1}
    again = wait_job(srv, eid, bad["id"], "done")
    assert again["attempts"] == 1 and again["error"] is None
    assert [k for k, _ in photo_events(srv, bad["id"])] == ["photo.failed", "photo.done"]
    # The admins were notified of each outcome (photo.failed at level error).
    notes = [n for n in assert_json(srv.api("GET", "/api/notifications", token=srv.admin_token),
                                    200) if n["entity_type"] == "photo_job"
             and n["entity_id"] == bad["id"]]
    assert sorted(n["type"] for n in notes) == ["photo.done", "photo.failed"]
    failed_note = next(n for n in notes if n["type"] == "photo.failed")
    assert failed_note["level"] == "error" and failed["error"] in failed_note["body"]


def test_upscale_timeout(photo_env):
    env = photo_env(extra="JournalPhotoUpscaleTimeout 1500\n")
    srv, fake = env.srv, env.photo
    env.allow("JR08010")
    e = entry_with_photo(srv)
    fake.mode(mode="slow", ms=5000)
    j = assert_json(enhance(srv, e["id"], {"face": "off"}), 202)
    wait_for(lambda: job_of(srv, e["id"], j["id"])["error"], what="the timed-out attempt")
    assert job_of(srv, e["id"], j["id"])["error"] == \
        "the photo service did not answer within 1500 ms"
    fake.mode(mode="ok")
    assert wait_job(srv, e["id"], j["id"], "done")["attempts"] == 2


def test_worker_killed_during_a_job(photo_env):
    env = photo_env()
    srv, fake = env.srv, env.photo
    [pid] = env.wait_running()
    e = entry_with_photo(srv)
    fake.mode(mode="hold")
    j = assert_json(enhance(srv, e["id"]), 202)
    wait_for(lambda: len(fake.requests()) == 1, what="the held request")
    assert job_of(srv, e["id"], j["id"])["status"] == "processing"
    env.kill9(pid)  # httpd starts another; it takes the job back (its lease holder is gone)
    fake.mode(mode="ok")
    fake.release()
    done = wait_job(srv, e["id"], j["id"], "done")
    assert done["attempts"] == 2 and len(fake.requests()) == 2
    assert [k for k, _ in photo_events(srv, j["id"])] == ["photo.done"]
    assert len([n for n in result_files(srv, j["id"]) if n]) == 1


# ---- branches ----------------------------------------------------------------------------------
def test_branch_isolation(photo_env):
    env = photo_env(service=False)
    srv = env.srv
    ga, gb = new_group(srv), new_group(srv)
    ea, eb = entry_with_photo(srv, group=ga), entry_with_photo(srv, group=gb)
    _, tutor_b = srv.create_tutor(branch_ids=[gb["branch_id"]])
    ja = assert_json(enhance(srv, ea["id"], ai=False), 202)
    wait_job(srv, ea["id"], ja["id"], "done")
    jb = assert_json(enhance(srv, eb["id"], ai=False, token=tutor_b), 202)
    wait_job(srv, eb["id"], jb["id"], "done")
    a, j = ea["id"], ja["id"]
    for method, path in (("POST", f"/api/entries/{a}/photo/enhance-ai"),
                         ("POST", f"/api/entries/{a}/photo/enhance"),
                         ("GET", f"/api/entries/{a}/photo/jobs"),
                         ("GET", f"/api/entries/{a}/photo/jobs/{j}/result"),
                         ("POST", f"/api/entries/{a}/photo/jobs/{j}/apply"),
                         ("POST", f"/api/entries/{a}/photo/jobs/{j}/reject"),
                         ("POST", f"/api/entries/{a}/photo/rollback"),
                         ("POST", f"/api/entries/{a}/photo/restore-original")):
        assert_error(srv.api(method, path, token=tutor_b), 404, "entry")
    assert job_of(srv, a, j)["status"] == "done" and not job_of(srv, a, j)["applied"]
    s = assert_json(srv.api("GET", "/api/photo-jobs/status", token=tutor_b), 200)
    assert s["done"] == 1
    assert assert_json(srv.api("GET", "/api/photo-jobs/status", token=srv.admin_token),
                       200)["done"] == 2
    assert_error(srv.api("PUT", "/api/photo-jobs/enabled", token=tutor_b,
                         json={"enabled": True}), 403)
    assert_error(srv.api("GET", "/api/photo-ai/health", token=tutor_b), 403)
    # Notifications of photo jobs go to the job's branch: tutor B is told of B's job only.
    told = [n["entity_id"] for n in assert_json(srv.api("GET", "/api/notifications",
                                                        token=tutor_b), 200)
            if n["type"] == "photo.done"]
    assert told == [jb["id"]]
    # the tutor's own entry works end to end
    assert_json(post(srv, f"/api/entries/{eb['id']}/photo/jobs/{jb['id']}/apply", token=tutor_b),
                200)


def test_purge_removes_result_files(photo_env):
    env = photo_env(service=False)
    srv = env.srv
    e = entry_with_photo(srv)
    j = assert_json(enhance(srv, e["id"], ai=False), 202)
    wait_job(srv, e["id"], j["id"], "done")
    [name] = result_files(srv, j["id"])
    assert (srv.data_dir / name).stat().st_mode & 0o777 == 0o600
    assert_json(srv.api("DELETE", f"/api/entries/{e['id']}", token=srv.admin_token), 200)
    assert_json(srv.api("DELETE", f"/api/trash/entry/{e['id']}", token=srv.admin_token), 200)
    assert name not in stored_files(srv)
    assert rows(srv, f"SELECT COUNT(*) FROM photo_jobs WHERE entry_id = {e['id']}") == [["0"]]
