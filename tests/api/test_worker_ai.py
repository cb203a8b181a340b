"""The AI checks through the real httpd and journal-worker (req-9 section 2, spec 2.3, 2.4,
3.2, 3.3, 8): the request each check sends, the answer contract for entries and lesson
reports (with the lesson's position in the prompt), every transition of ai_status, retries
with back-off and Retry-After, the refused key, the stale-answer rule, requeueing, revert,
and a bearer key that never leaves its key file except as the Authorization header."""

import functools
import json
import time

import harness
from harness import assert_error, assert_json, uniq
from worker_support import (  # noqa: F401 (fixtures)
    MODEL, api, events, fake_llm, get_entry, get_report, job, messages, new_entry, new_group,
    new_report, rows, set_settings, user_message, wait_for, wait_status, worker_env)

KEY = "sk-live-" + "7f3a9c1e5b" * 4


def entry_waiter(srv):
    return functools.partial(get_entry, srv)


def report_waiter(srv):
    return functools.partial(get_report, srv)


def schema_of(req):
    return req["body"]["response_format"]


# ---- entries -----------------------------------------------------------------------------------
def test_entry_checks(worker_env):
    env = worker_env()
    srv, fake = env.srv, env.fake
    g = new_group(srv)
    text = f"Ann red {uniq('t')} a book"
    done = new_entry(srv, g["id"], text)
    keep = new_entry(srv, g["id"], f"[[keep]] fine {uniq('k')}")
    assert done["ai_status"] == "pending"

    e = wait_status(entry_waiter(srv), done["id"], "done")
    assert e["description"] == "AI: " + text
    assert e["description_original"] == text
    assert e["ai_error"] is None and e["ai_checked_at"]
    k = wait_status(entry_waiter(srv), keep["id"], "skipped")
    assert k["description"] == keep["description"] and k["description_original"] is None
    assert k["ai_checked_at"] and k["ai_error"] is None

    # one POST {endpoint}/chat/completions per check, exactly as the contract says
    [req] = fake.for_text(text)
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Content-Type"] == "application/json"
    assert "Authorization" not in req["headers"]  # no key file, no header
    body = req["body"]
    assert body["model"] == MODEL
    prompt = api(srv, "GET", "/api/settings", status=200)["entry_ai_prompt"]
    assert "spelling" in prompt and "meaning" in prompt
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert messages(req) == {"system": prompt, "user": text}
    assert schema_of(req) == {"type": "json_schema", "json_schema": {
        "name": "entry_check", "strict": True,
        "schema": {"type": "object",
                   "properties": {"changed": {"type": "boolean"}, "text": {"type": "string"}},
                   "required": ["changed", "text"], "additionalProperties": False}}}

    # the fields on the integration interface too
    key = assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token,
                              json={"name": uniq("k"), "scopes": ["read", "write"]}), 201)["key"]
    v1 = assert_json(srv.api("GET", f"/api/v1/entries/{done['id']}",
                             headers={"X-Api-Key": key}), 200)
    for f in ("ai_status", "ai_checked_at", "ai_error", "description_original", "description"):
        assert v1[f] == e[f], f

    # the audit row of the rewrite names the worker, no user
    audit = assert_json(srv.api("GET", "/api/audit", token=srv.admin_token,
                                params={"entity_type": "entry", "entity_id": done["id"]}), 200)
    [rw] = [a for a in audit["items"] if a["action"] == "ai_rewrite"]
    assert rw["client_ip"] == "worker" and rw["actor_user_id"] is None
    assert not any(a["action"] == "ai_rewrite" for a in audit["items"] if a is not rw)

    # a new prompt applies to the next check; a recheck of the rewritten text
    set_settings(srv, entry_ai_prompt="Fix the spelling. Nothing else.")
    api(srv, "POST", f"/api/entries/{done['id']}/ai/recheck", status=200)
    wait_for(lambda: fake.count("AI: " + text) == 1, what="the recheck's request")
    [req] = fake.for_text("AI: " + text)
    assert messages(req)["system"] == "Fix the spelling. Nothing else."
    e = wait_status(entry_waiter(srv), done["id"], "done")
    assert e["description"] == "AI: AI: " + text
    assert e["description_original"] == "AI: " + text


def test_entry_prompt_setting_is_validated(worker_env):
    env = worker_env(endpoint=False)
    srv = env.srv
    before = api(srv, "GET", "/api/settings", status=200)["entry_ai_prompt"]
    for bad, word in ((5, "string"), ("x" * 20001, "20000")):
        assert_error(srv.api("PUT", "/api/settings", token=srv.admin_token,
                             json={"entry_ai_prompt": bad}), 400, "entry_ai_prompt", word)
    assert api(srv, "GET", "/api/settings", status=200)["entry_ai_prompt"] == before


def test_revert_returns_the_tutors_text(worker_env):
    env = worker_env()
    srv = env.srv
    g = new_group(srv)
    text = f"orignal {uniq('r')}"
    e = new_entry(srv, g["id"], text)
    plain = new_entry(srv, g["id"], f"[[keep]] {uniq('p')}")
    wait_status(entry_waiter(srv), e["id"], "done")
    wait_status(entry_waiter(srv), plain["id"], "skipped")
    assert_error(srv.api("POST", f"/api/entries/{plain['id']}/ai/revert",
                         token=srv.admin_token), 409, "original")
    r = api(srv, "POST", f"/api/entries/{e['id']}/ai/revert", status=200)
    assert (r["description"], r["description_original"], r["ai_status"]) == \
        (text, text, "reverted")
    assert events(srv, "entry", e["id"])[-1][1]["status"] == "reverted"
    assert_error(srv.api("POST", "/api/entries/999999/ai/revert", token=srv.admin_token), 404)
    # administrative interface only
    key = assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token,
                              json={"name": uniq("k"), "scopes": ["read", "write"]}), 201)["key"]
    assert srv.api("POST", f"/api/v1/entries/{e['id']}/ai/revert",
                   headers={"X-Api-Key": key}).status_code == 404
    _, tutor = srv.create_tutor(branch_ids=[srv.create_branch()["id"]])
    assert_error(srv.api("POST", f"/api/entries/{e['id']}/ai/revert", token=tutor), 404)


# ---- lesson reports ----------------------------------------------------------------------------
def test_report_checks_with_position(worker_env):
    env = worker_env()
    srv, fake = env.srv, env.fake
    set_settings(srv, lesson_ai_enabled="true")
    prompt = api(srv, "GET", "/api/settings", status=200)["lesson_ai_prompt"]
    assert "template" in prompt
    g = new_group(srv)
    cases = [("Fractions 1/3", "Context: lesson position: first; topic: Fractions 1/3"),
             ("Fractions 2/3", "Context: lesson position: middle; topic: Fractions 2/3"),
             ("Fractions 3/3", "Context: lesson position: last; topic: Fractions 3/3"),
             ("Free conversation", "Context: topic: Free conversation"),
             (None, None)]
    made = []
    for day, (topic, context) in enumerate(cases, start=1):
        text = f"we practised {uniq('r')}"
        made.append((new_report(srv, g["id"], text, f"2026-04-{day:02d}", topic), text, context))
    for r, text, context in made:
        got = wait_status(report_waiter(srv), r["id"], "done")
        assert (got["text"], got["text_ai"], got["text_original"]) == \
            ("AI: " + text, "AI: " + text, text)
        assert got["ai_checked_at"] and got["ai_error"] is None
        [req] = fake.for_text(text)
        want = prompt if context is None else prompt + "\n\n" + context
        assert messages(req) == {"system": want, "user": text}
        assert schema_of(req)["json_schema"]["schema"]["required"] == ["matches_template", "text"]
        assert schema_of(req)["json_schema"]["name"] == "lesson_report_check"
        versions = api(srv, "GET", f"/api/lesson-reports/{r['id']}/versions", status=200)
        assert [(v["source"], v["text"], v["created_by"]) for v in versions] == \
            [("ai", "AI: " + text, None), ("create", text, 1)]

    keep_text = f"[[keep]] Today we continued. {uniq('k')}"
    keep = new_report(srv, g["id"], keep_text, "2026-05-01", "Fractions 2/3")
    got = wait_status(report_waiter(srv), keep["id"], "skipped")
    assert (got["text"], got["text_original"], got["text_ai"]) == (keep_text, None, None)
    versions = api(srv, "GET", f"/api/lesson-reports/{keep['id']}/versions", status=200)
    assert [v["source"] for v in versions] == ["create"]


# ---- failures, retries, requeue -------------------------------------------------------------------
FAILING = {  # marker -> (final status, requests, ai_error contains)
    "[[fail500:1]]": ("done", 2, None),
    "[[429:1:3]]": ("done", 2, None),
    "[[hang:30]]": ("failed", 3, "did not answer within 3 s"),
    "[[malformed]]": ("failed", 3, "invalid answer: the answer is not JSON"),
    "[[badjson]]": ("failed", 3, "invalid answer"),
    "[[schema]]": ("failed", 3, "does not match the schema"),
    "[[empty]]": ("failed", 3, "empty"),
    "[[401]]": ("failed", 1, "the AI endpoint refused the key (HTTP 401)"),
    "[[403]]": ("failed", 1, "the AI endpoint refused the key (HTTP 403)"),
}


def test_failures_retries_and_requeue(worker_env):
    env = worker_env(key=KEY, concurrency=12)
    srv, fake = env.srv, env.fake
    g = new_group(srv)
    made = {m: new_entry(srv, g["id"], f"{m} {uniq('f')}") for m in FAILING}
    final = {m: wait_status(entry_waiter(srv), e["id"], ("done", "failed"), timeout=90)
             for m, e in made.items()}
    for m, (status, n, error) in FAILING.items():
        e, text = final[m], made[m]["description"]
        assert e["ai_status"] == status, (m, e)
        assert fake.count(text) == n, (m, fake.count(text))
        j = job(srv, "entry", e["id"])
        assert j["status"] == status and int(j["attempts"]) == n, (m, j)
        assert j["lease_owner"] is None and j["lease_until"] is None
        if error:
            assert error in e["ai_error"], (m, e["ai_error"])
            assert len(e["ai_error"]) < 120 and KEY not in e["ai_error"]
            assert "{" not in e["ai_error"]  # never the endpoint's body or the model's output
        else:
            assert e["ai_error"] is None and e["description"] == "AI: " + text
    # a retry waits: 2 s of back-off, or the server's Retry-After when longer
    for m, gap in (("[[fail500:1]]", 2), ("[[429:1:3]]", 3)):
        t = [r["t"] for r in fake.for_text(made[m]["description"])]
        assert t[1] - t[0] >= gap - 0.05, (m, t)
    t = [r["t"] for r in fake.for_text(made["[[malformed]]"]["description"])]
    assert t[2] - t[1] >= 4 - 0.05 and t[1] - t[0] >= 2 - 0.05, t
    # while a retry waits the record says so
    seq = [p["status"] for typ, p in events(srv, "entry", made["[[fail500:1]]"]["id"])
           if typ == "ai_status"]
    assert seq == ["pending", "processing", "pending", "processing", "done"], seq
    pending_retry = [p for typ, p in events(srv, "entry", made["[[fail500:1]]"]["id"])
                     if typ == "ai_status"][2]
    assert pending_retry["ai_error"] == "the AI endpoint answered HTTP 500"

    # requeue-failed: fresh attempts for every failed check, picked up at once
    failed = [m for m in FAILING if FAILING[m][0] == "failed"]
    before = {m: fake.count(made[m]["description"]) for m in failed}
    body = assert_json(srv.api("POST", "/api/ai/requeue-failed", token=srv.admin_token), 200)
    assert body == {"ok": True, "count": len(failed)}
    wait_for(lambda: fake.count(made["[[401]]"]["description"]) == 2, what="the requeued check")
    e = wait_status(entry_waiter(srv), made["[[401]]"]["id"], "failed")
    assert int(job(srv, "entry", e["id"])["attempts"]) == 1  # counted from zero again
    assert fake.count(made["[[403]]"]["description"]) == before["[[403]]"] + 1
    # every request carried the key, and only in the Authorization header
    for r in fake.requests():
        assert r["headers"]["Authorization"] == "Bearer " + KEY
        assert KEY not in json.dumps(r["body"])


def test_stale_answer_is_not_applied(worker_env):
    env = worker_env()
    srv, fake = env.srv, env.fake
    g = new_group(srv)
    first = f"[[hang:1.5]] first {uniq('s')}"
    e = new_entry(srv, g["id"], first)
    wait_for(lambda: fake.count(first) == 1, what="the first request")
    assert get_entry(srv, e["id"])["ai_status"] == "processing"
    second = f"second version {uniq('s')}"
    api(srv, "PUT", f"/api/entries/{e['id']}", {"description": second}, status=200)
    got = wait_status(entry_waiter(srv), e["id"], "done")
    assert got["description"] == "AI: " + second
    assert got["description_original"] == second
    assert fake.count(second) == 1 and fake.count(first) == 1
    j = job(srv, "entry", e["id"])
    assert j["status"] == "done" and int(j["attempts"]) == 1  # the stale round is not an attempt
    texts = [p["description"] for typ, p in events(srv, "entry", e["id"]) if typ == "ai_status"]
    assert "AI: " + first not in texts


def test_without_endpoint_jobs_stay_queued(worker_env):
    env = worker_env(endpoint=False)
    srv = env.srv
    g = new_group(srv)
    e = new_entry(srv, g["id"], f"waiting {uniq('q')}")
    api(srv, "POST", "/api/ai/wake", status=200)
    time.sleep(1.5)
    assert get_entry(srv, e["id"])["ai_status"] == "pending"
    j = job(srv, "entry", e["id"])
    assert j["status"] == "pending" and j["attempts"] == "0" and j["lease_owner"] is None
    assert env.fake.requests() == []
    assert "not configured" in env.output()


def test_key_stays_in_its_file(worker_env):
    env = worker_env(key=KEY)
    srv, fake = env.srv, env.fake
    g = new_group(srv)
    ok = new_entry(srv, g["id"], f"fine {uniq('k')}")
    refused = new_entry(srv, g["id"], f"[[401]] {uniq('k')}")
    wait_status(entry_waiter(srv), ok["id"], "done")
    wait_status(entry_waiter(srv), refused["id"], "failed")
    api(srv, "POST", "/api/ai/wake", status=200)
    assert fake.requests() and all(r["headers"]["Authorization"] == "Bearer " + KEY
                                   for r in fake.requests())
    # not in argv, not in the settings file (which names the key file only)
    for pid in env.pids():
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            assert KEY.encode() not in f.read()
    assert KEY not in env.config.read_text() and str(env.key_file) in env.config.read_text()
    # not in the logs
    assert KEY not in srv.read_error_log()
    assert KEY not in env.output()
    # not in any API answer
    for path in ("/api/entries", f"/api/entries/{refused['id']}", "/api/audit", "/api/settings",
                 "/api/ai/status", "/api/health", "/api/dashboard"):
        assert KEY not in srv.api("GET", path, token=srv.admin_token).text, path
    # not in the database
    if srv.db_kind == "sqlite":
        data = b"".join(p.read_bytes() for p in srv.data_dir.glob("journal.db*"))
    else:
        data = harness.pg_run("pg_dump", "-d", srv.pg_dbname).stdout.encode()
        assert b"ai_jobs" in data
    assert len(data) > 10000 and KEY.encode() not in data
    assert rows(srv, "SELECT COUNT(*) FROM events")[0][0] != "0"
