#!/usr/bin/python3
"""Runs the examples of docs/integrators.md, in the order of the guide, against a fresh server
and compares each answer with the one the guide shows.

An example is marked in the guide by an HTML comment, invisible on the rendered page:

    <!-- example -->            the next ```sh block (a curl command) is the request, the fenced
                                block right after it the answer
    <!-- example: curl ... -->  the request is in the comment, the next fenced block is the
                                answer (the guide shows an answer without repeating its request)
    <!-- example setup=NAME --> runs the step NAME of SETUPS first (a state the interface
                                cannot make: an AI check that finished or failed)

Compared: the status (when the answer starts with its status line), every header the answer
shows, and the body as JSON. Normalised on both sides: timestamps, API keys and their prefixes,
session tokens, cursors, and the numbers of RateLimit-Remaining and RateLimit-Reset (they depend
on the time the run takes); ids are compared as they are (the server is fresh).

A ```sh block with a curl command that carries no marker fails the run, unless it is preceded
by <!-- illustration -->: so an example added to the guide is either run or visibly not.

Standalone: JOURNAL_BUILD_DIR=$PWD/build /usr/bin/python3 tests/docs/run_guide.py [--at-least N]
Exit status 0 when every example matched (and, with --at-least, at least N examples ran: make
check passes its floor, so examples cannot quietly lose their markers)."""

import json
import re
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))
import harness  # noqa: E402
from harness import REPO, Server, assert_json, sql_exec  # noqa: E402

GUIDE = REPO / "docs" / "integrators.md"

# Fenced blocks, also indented ones (inside list items).
FENCE_RE = re.compile(r"^( *)```(?P<lang>[a-z]*)\n(?P<body>.*?)^\1```\n", re.S | re.M)
MARK_RE = re.compile(r"<!-- (example|illustration)\b(?: setup=(\w+))?(?::\s*(.*?))?\s*-->", re.S)
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
KEY_RE = re.compile(r"^wsk_[0-9A-Za-z]{49}$")
# Keys in the guide are placeholders of the right length ("wsk_EXAMPLE2..." and so on).
NORMALISED_MEMBERS = {"key": "<key>", "prefix": "<prefix>", "token": "<token>",
                      "next_cursor": "<cursor>"}
NUMBER_HEADERS = ("RateLimit-Remaining", "RateLimit-Reset", "Retry-After")


# ---- the guide --------------------------------------------------------------------------------
class Example:
    def __init__(self, line, command, answer, setup):
        self.line, self.command, self.answer, self.setup = line, command, answer, setup


def parse_guide(text):
    """The examples in order, and the lines of unmarked curl blocks."""
    examples, unmarked = [], []
    fences = list(FENCE_RE.finditer(text))
    marks = list(MARK_RE.finditer(text))
    used = set()
    for m in marks:
        following = [i for i, f in enumerate(fences) if f.start() > m.end()]
        if not following:
            raise SystemExit(f"guide line {line_of(text, m.start())}: a marker without a block")
        i = following[0]
        if text[m.end():fences[i].start()].strip():
            raise SystemExit(f"guide line {line_of(text, m.start())}: the marker is not right "
                             "before its block")
        kind, setup, inline = m.group(1), m.group(2), m.group(3)
        if kind == "illustration":
            used.add(i)
            continue
        if inline:
            command, answer_index = inline, i
        else:
            if fences[i].group("lang") != "sh":
                raise SystemExit(f"guide line {line_of(text, m.start())}: no sh block")
            command, answer_index = fences[i].group("body"), i + 1
            used.add(i)
        if answer_index >= len(fences) or (
                not inline and text[fences[i].end():fences[answer_index].start()].strip()):
            raise SystemExit(f"guide line {line_of(text, m.start())}: no answer right after "
                             "the request")
        used.add(answer_index)
        examples.append(Example(line_of(text, m.start()), command,
                                fences[answer_index].group("body"), setup))
    for i, f in enumerate(fences):
        if f.group("lang") == "sh" and "curl " in f.group("body") and i not in used:
            unmarked.append(line_of(text, f.start()))
    return examples, unmarked


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def parse_curl(command, env):
    """method, path, headers, body of one curl command line (continuations joined)."""
    command = re.sub(r"\\\n", " ", command).strip()
    for name, value in env.items():
        command = command.replace("$" + name, value)
    words = shlex.split(command, comments=True)
    if not words or words[0] != "curl":
        raise ValueError(f"not a single curl command: {command!r}")
    method, url, headers, body = None, None, {}, None
    it = iter(words[1:])
    for w in it:
        if w in ("-s", "-i"):
            continue
        if w == "-X":
            method = next(it)
        elif w == "-H":
            name, _, value = next(it).partition(":")
            headers[name.strip()] = value.strip()
        elif w == "-d":
            body = next(it)
        elif w.startswith("-"):
            raise ValueError(f"option {w} is not understood: {command!r}")
        else:
            url = w
    method = method or ("POST" if body is not None else "GET")
    if body is not None:
        json.loads(body)  # the guide's bodies are JSON
    return method, url, headers, body


def parse_answer(block):
    """(status or None, {header: value}, body text) of an answer block."""
    status, headers = None, {}
    lines = block.split("\n")
    if lines[0].startswith("HTTP/1.1 "):
        status = int(lines[0].split()[1])
        i = 1
        while i < len(lines) and lines[i].strip():
            name, _, value = lines[i].partition(":")
            headers[name.strip()] = value.strip()
            i += 1
        lines = lines[i:]
    return status, headers, "\n".join(lines).strip()


# ---- comparison -------------------------------------------------------------------------------
def normalise(value, member=None):
    if isinstance(value, dict):
        return {k: normalise(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, str):
        if member in NORMALISED_MEMBERS:
            return NORMALISED_MEMBERS[member]
        if TIME_RE.match(value):
            return "<time>"
        if KEY_RE.match(value):
            return "<key>"
    return value


def normalise_header(name, value):
    if name in NUMBER_HEADERS:
        return "<n>" if re.fullmatch(r"[0-9]+", value) else value
    if name == "X-Request-Id":
        return "<id>" if value else value
    return value


def compare(example, r):
    """The differences between the answer the guide shows and the real one."""
    status, headers, body = parse_answer(example.answer)
    diffs = []
    if status is not None and status != r.status_code:
        diffs.append(f"status: guide {status}, server {r.status_code}")
    for name, value in headers.items():
        got = r.headers.get(name)
        if got is None:
            diffs.append(f"header {name}: guide {value!r}, server has none")
        elif normalise_header(name, got) != normalise_header(name, value):
            diffs.append(f"header {name}: guide {value!r}, server {got!r}")
    if body:
        try:
            shown = json.loads(body)
        except ValueError as e:
            return diffs + [f"the guide's body is not JSON: {e}"]
        try:
            real = r.json()
        except ValueError:
            return diffs + [f"the server's body is not JSON: {r.text[:300]!r}"]
        if normalise(shown) != normalise(real):
            diffs.append("body:\n  guide  " + json.dumps(normalise(shown), sort_keys=True) +
                         "\n  server " + json.dumps(normalise(real), sort_keys=True))
    elif r.content and r.request.method != "HEAD":
        diffs.append(f"the guide shows no body, the server answered {r.text[:300]!r}")
    return diffs


# ---- the journal of the examples --------------------------------------------------------------
# Stored files of entry 1: their sizes and SHA-256 sums are shown in the guide.
FILES = [("homework.pdf", "application/pdf",
          b"%PDF-1.4\n%%EOF\nHomework: inclined planes 1-5\n"),
         ("Hausaufgaben M\u00e4rz.txt", "text/plain", b"Aufgaben 1 bis 5, Seite 42, bis Montag\n")]
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f0005000201a5f6d39a0000000049454e44ae426082")


def build_world(srv):
    """The journal the guide describes before its first example; returns the substitutions of
    the commands ($BASE, $KEY, $READ_KEY, $TOKEN)."""
    adm = srv.admin_token

    def post(path, body):
        return assert_json(srv.api("POST", path, token=adm, json=body), 201)

    assert_json(srv.api("PUT", "/api/settings", token=adm, json={
        "timezone": "Europe/Berlin", "lesson_ai_enabled": "true"}), 200)
    for name in ("North", "South", "East"):
        post("/api/branches", {"name": name})
    post("/api/groups", {"name": "Group A1", "branch_id": 1})
    post("/api/groups", {"name": "Group A2", "branch_id": 1})
    post("/api/groups", {"name": "Group S1", "branch_id": 2})
    post("/api/modules", {"name": "Mechanics", "lessons_count": 8,
                          "description": "Kinematics and forces"})
    post("/api/students", {"name": "Anna Berg", "group_id": 1,
                           "notes": "Prefers morning lessons"})
    post("/api/students", {"name": "Jonas Weber", "group_id": 1})
    read_key = post("/api/api-keys", {"name": "Reporting export", "scopes": ["read"]})["key"]
    # The guide shows an expiry in 2027; times are normalised, and this one must stay in the
    # future for as long as the guide is run.
    key = post("/api/api-keys", {"name": "North CRM sync", "scopes": ["read", "write"],
                                 "rate_limit_per_min": 120, "expires_at": "2099-06-30T00:00:00Z",
                                 "branch_ids": [2, 1]})["key"]
    post("/api/entries", {"student_name": "anna berg", "group_id": 1, "module_id": 1,
                          "description": "Solved the inclined-plane problems without help."})
    for name, ctype, data in FILES:
        assert_json(srv.api("POST", "/api/entries/1/files", token=adm, data=data,
                            params={"name": name}, headers={"Content-Type": ctype}), 201)
    assert_json(srv.api("POST", "/api/entries/1/photo", token=adm, data=PNG,
                        headers={"Content-Type": "image/png"}), 201)
    return {"BASE": srv.base_url, "KEY": key, "READ_KEY": read_key, "TOKEN": adm}


REPORT1 = {"group_id": 1, "lesson_date": "2026-11-19", "lesson_time": "15:30",
           "text": "Velocity and acceleration, four examples. All followed.",
           "topic": "Mechanics: kinematics 1/8"}
REPORT1_AI = ("We started the Mechanics module with velocity and acceleration and worked "
              "through four examples together. Everyone followed.")


def sql_now(srv):
    """SQL for the current time as the journal stores it (ISO 8601 UTC, to the second)."""
    if srv.db_kind == "sqlite":
        return "strftime('%Y-%m-%dT%H:%M:%SZ','now')"
    return "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"


def report1_checked(srv, env):
    """Report 1, written with the key, and its AI check finished with a rewrite (as the
    text checker leaves it: text, text_original, text_ai, done; the job done)."""
    assert_json(srv.api("POST", "/api/v1/lesson-reports", json=REPORT1,
                        headers={"X-Api-Key": env["KEY"]}), 201)
    now = sql_now(srv)
    text = REPORT1_AI.replace("'", "''")
    sql_exec(srv,
             f"UPDATE lesson_reports SET text = '{text}', text_original = text, "
             f"text_ai = '{text}', ai_status = 'done', ai_checked_at = {now}, "
             f"updated_at = {now} WHERE id = 1",
             f"UPDATE ai_jobs SET status = 'done', updated_at = {now} "
             "WHERE entity_type = 'lesson_report' AND entity_id = 1")


def entry1_check_failed(srv, env):
    """The AI check of entry 1 gave up after its attempts."""
    now = sql_now(srv)
    sql_exec(srv,
             f"UPDATE ai_jobs SET status = 'failed', attempts = 3, last_error = 'timeout', "
             f"updated_at = {now} WHERE entity_type = 'entry' AND entity_id = 1",
             f"UPDATE entries SET ai_status = 'failed', ai_error = 'timeout', updated_at = {now} "
             "WHERE id = 1")


def ban_203_0_113_7(srv, env):
    """A client at 203.0.113.7 (behind the trusted proxy) sends wrong keys up to the ban
    threshold (JournalKeyBanThreshold, 20)."""
    for _ in range(20):
        r = srv.api("GET", "/api/v1/me", ip="203.0.113.7",
                    headers={"X-Api-Key": "wsk_" + "0" * 49})
        assert r.status_code == 401, r.text


SETUPS = {"report1_checked": report1_checked, "entry1_check_failed": entry1_check_failed,
          "ban_203_0_113_7": ban_203_0_113_7}


# ---- running ----------------------------------------------------------------------------------
def run(srv, examples):
    env = build_world(srv)
    failures = 0
    for ex in examples:
        if ex.setup:
            SETUPS[ex.setup](srv, env)
        method, url, headers, body = parse_curl(ex.command, env)
        if body is not None:
            body = body.encode("utf-8")
        r = srv.http.request(method, url, headers=headers, data=body, timeout=harness.HTTP_TIMEOUT)
        diffs = compare(ex, r)
        where = f"integrators.md:{ex.line} {method} {url[len(env['BASE']):]}"
        if diffs:
            failures += 1
            print(f"FAIL {where}\n  " + "\n  ".join(diffs))
        else:
            print(f"ok   {where} -> {r.status_code}")
    return failures


def main(argv):
    floor = 0
    if argv[:1] == ["--at-least"] and len(argv) == 2 and argv[1].isdigit():
        floor = int(argv[1])
    elif argv:
        print(__doc__)
        return 2
    examples, unmarked = parse_guide(GUIDE.read_text(encoding="utf-8"))
    if unmarked:
        print("curl blocks without <!-- example --> or <!-- illustration --> at lines "
              + ", ".join(map(str, unmarked)))
        return 1
    if len(examples) < max(floor, 1):
        print(f"only {len(examples)} examples in the guide, fewer than the floor of {floor}")
        return 1
    srv = Server(label="guide")
    failures, problems = len(examples), []
    try:
        srv.start()
        failures = run(srv, examples)
    finally:
        problems = srv.finish()
    for p in problems:
        print(f"error log: {p}")
    print(f"run_guide: {len(examples) - failures} of {len(examples)} examples matched")
    return 1 if failures or problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
