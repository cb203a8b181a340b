"""Share links: /api/share-links (admins everywhere, tutors in their branches) and the public
/api/share/:token that families open without an account, with an optional password, the
address's ban after 10 wrong passwords (share-bruteforce) and the link's own throttle."""

import hashlib
import json
import re
from datetime import datetime, timedelta, timezone

from harness import (assert_error, assert_json, assert_ok, random_ip, sql_exec, sql_int,
                     sql_scalar, uniq)
from test_photos import jpeg_bytes
from test_files import pdf_bytes

LINK_KEYS = {"id", "kind", "target_id", "branch_id", "has_password", "expires_at", "created_by",
             "created_at", "revoked_at", "last_opened_at", "open_count"}
TOKEN_RE = re.compile(r"^sl_[0-9a-f]{64}$")
NOT_FOUND = {"error": "share link not found", "code": "not_found"}


# ---- helpers ---------------------------------------------------------------------------------
def iso(dt):
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def create_link(srv, kind, target_id, token=None, status=201, **fields):
    body = {"kind": kind, "target_id": target_id}
    body.update(fields)
    r = srv.api("POST", "/api/share-links", token=token or srv.admin_token, json=body)
    return assert_json(r, status)


def list_links(srv, token=None, **params):
    r = srv.api("GET", "/api/share-links", token=token or srv.admin_token, params=params)
    items = assert_json(r, 200)
    assert isinstance(items, list) and "X-Total-Count" in r.headers, r.text[:300]
    return items


def open_link(srv, token, ip=None, params=None):
    return srv.api("GET", f"/api/share/{token}", ip=ip, params=params)


def unlock(srv, token, password, ip=None):
    return srv.api("POST", f"/api/share/{token}", json={"password": password}, ip=ip)


def fetch(srv, url, ip=None):
    return srv.http.get(srv.base_url + url, headers={"X-Forwarded-For": ip} if ip else {},
                        timeout=30)


def url_name(stored):
    """A stored name as a share address names it: files/ab/ab12... -> files-ab12..."""
    sub, _, name = stored.split("/")
    return f"{sub}-{name}"


def keys_everywhere(value):
    """Every member name in a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from keys_everywhere(v)
    elif isinstance(value, list):
        for v in value:
            yield from keys_everywhere(v)


class Family:
    """A branch, a group, a student with entries (one with a photo and a file, one deleted),
    another student's entry in the same group, and two lesson reports of the group."""

    def __init__(self, srv, branch_id=None):
        a = srv.admin_token
        self.branch = branch_id or srv.create_branch()["id"]
        self.group = srv.create_group(self.branch)
        self.name = uniq("Anna")
        self.student = assert_json(srv.api("POST", "/api/students", token=a, json={
            "name": self.name, "group_id": self.group["id"]}), 201)
        self.module = assert_json(srv.api("POST", "/api/modules", token=a, json={
            "name": uniq("Algebra"), "lessons_count": 8}), 201)
        self.entry = self._entry(srv, self.name, "fractions <b>&</b> decimals", self.module["id"])
        self.photo = jpeg_bytes()
        self.pdf = pdf_bytes()
        assert srv.api("POST", f"/api/entries/{self.entry['id']}/photo", token=a,
                       data=self.photo, headers={"Content-Type": "image/jpeg"}).status_code == 201
        assert_json(srv.api("POST", f"/api/entries/{self.entry['id']}/files", token=a,
                            data=self.pdf, headers={"Content-Type": "application/pdf",
                                                    "X-File-Name": "homework.pdf"}), 201)
        self.deleted = self._entry(srv, self.name, "deleted " + uniq("d"))
        assert_ok(srv.api("DELETE", f"/api/entries/{self.deleted['id']}", token=a))
        self.other = self._entry(srv, uniq("Boris"), "other student " + uniq("o"))
        other_file = assert_json(srv.api(
            "POST", f"/api/entries/{self.other['id']}/files", token=a, data=pdf_bytes(),
            headers={"Content-Type": "application/pdf", "X-File-Name": "other.pdf"}), 201)
        self.other_stored = sql_scalar(
            srv, f"SELECT stored_name FROM entry_files WHERE id = {other_file['id']}")
        self.reports = [assert_json(srv.api("POST", "/api/lesson-reports", token=a, json={
            "group_id": self.group["id"], "lesson_date": d, "lesson_time": "16:30",
            "text": "We practised " + uniq("t"), "topic": "Fractions 2/8"}), 201)
            for d in ("2026-10-01", "2026-10-08")]

    def _entry(self, srv, student, description, module_id=None):
        body = {"student_name": student, "group_id": self.group["id"],
                "description": description}
        if module_id:
            body["module_id"] = module_id
        return assert_json(srv.api("POST", "/api/entries", token=srv.admin_token, json=body), 201)


# ---- creation and listing --------------------------------------------------------------------
def test_create_shows_token_once_and_stores_only_its_hash(server):
    fam = Family(server)
    link = create_link(server, "student", fam.student["id"])
    token = link.pop("token")
    assert TOKEN_RE.match(token), token
    assert link.pop("url") == f"{server.base_url}/share/{token}"
    assert set(link) == LINK_KEYS
    assert link["kind"] == "student" and link["target_id"] == fam.student["id"]
    assert link["branch_id"] == fam.branch and link["has_password"] is False
    assert link["open_count"] == 0 and link["revoked_at"] is None
    # The default lifetime is 30 days.
    expires = datetime.fromisoformat(link["expires_at"].replace("Z", "+00:00"))
    assert abs(expires - datetime.now(timezone.utc) - timedelta(days=30)) < timedelta(minutes=5)

    stored = sql_scalar(server, f"SELECT token_hash FROM share_links WHERE id = {link['id']}")
    assert stored == hashlib.sha256(token.encode()).hexdigest()
    row = sql_scalar(server, "SELECT kind || target_id || token_hash || expires_at FROM "
                             f"share_links WHERE id = {link['id']}")
    assert token not in row

    listed = list_links(server, kind="student", target_id=fam.student["id"])
    assert [l["id"] for l in listed] == [link["id"]]
    assert set(listed[0]) == LINK_KEYS
    assert token not in json.dumps(listed) and token[3:] not in json.dumps(listed)
    audit = sql_int(server, "SELECT COUNT(*) FROM audit_log WHERE entity_type = 'share_link'"
                            f" AND entity_id = '{link['id']}' AND action = 'create'")
    assert audit == 1


def test_list_filters_by_kind_and_target(server):
    fam = Family(server)
    s = create_link(server, "student", fam.student["id"])
    g = create_link(server, "group", fam.group["id"])
    assert [l["id"] for l in list_links(server, kind="group", target_id=fam.group["id"])] == [g["id"]]
    ids = [l["id"] for l in list_links(server, target_id=fam.student["id"], kind="student")]
    assert ids == [s["id"]]
    assert_error(server.api("GET", "/api/share-links", token=server.admin_token,
                            params={"kind": "family"}), 400, "kind")
    assert_error(server.api("GET", "/api/share-links", token=server.admin_token,
                            params={"target_id": "x1"}), 400, "target_id")
    assert_error(server.api("GET", "/api/share-links"), 401)


def test_bad_input_names_the_field_and_changes_nothing(server):
    fam = Family(server)
    before = sql_int(server, "SELECT COUNT(*) FROM share_links")
    sid = fam.student["id"]
    now = datetime.now(timezone.utc)
    cases = [
        ({"target_id": sid}, "kind"),
        ({"kind": "family", "target_id": sid}, "kind"),
        ({"kind": "student"}, "target_id"),
        ({"kind": "student", "target_id": "7"}, "target_id"),
        ({"kind": "student", "target_id": 9_000_000_000_000}, "target_id"),
        ({"kind": "group", "target_id": sid + 9_000_000}, "target_id"),
        ({"kind": "student", "target_id": sid, "expires_at": "tomorrow"}, "expires_at"),
        ({"kind": "student", "target_id": sid, "expires_at": iso(now - timedelta(hours=1))},
         "expires_at"),
        ({"kind": "student", "target_id": sid, "expires_at": iso(now + timedelta(days=400))},
         "at most 365 days ahead"),
        ({"kind": "student", "target_id": sid, "password": "short"}, "password"),
        ({"kind": "student", "target_id": sid, "password": 123456}, "password"),
        ({"kind": "student", "target_id": sid, "colour": "red"}, "colour"),
    ]
    for body, field in cases:
        r = server.api("POST", "/api/share-links", token=server.admin_token, json=body)
        assert_error(r, 400, field)
    assert sql_int(server, "SELECT COUNT(*) FROM share_links") == before
    # A given expiry within the longest lifetime is kept.
    when = iso(now + timedelta(days=3))
    assert create_link(server, "student", sid, expires_at=when)["expires_at"] == when


def test_tutors_share_only_in_their_branches(server):
    mine, theirs = Family(server), Family(server)
    tutor, tok = server.create_tutor([mine.branch])
    link = create_link(server, "student", mine.student["id"], token=tok)
    assert link["created_by"] == tutor["id"]
    create_link(server, "group", mine.group["id"], token=tok)
    before = sql_int(server, "SELECT COUNT(*) FROM share_links")
    for kind, target in (("student", theirs.student["id"]), ("group", theirs.group["id"])):
        assert_error(server.api("POST", "/api/share-links", token=tok,
                                json={"kind": kind, "target_id": target}), 400, "target_id")
    assert sql_int(server, "SELECT COUNT(*) FROM share_links") == before
    other = create_link(server, "student", theirs.student["id"])
    seen = {l["id"] for l in list_links(server, token=tok)}
    assert link["id"] in seen and other["id"] not in seen
    assert_error(server.api("DELETE", f"/api/share-links/{other['id']}", token=tok), 404)
    assert open_link(server, other["token"]).status_code == 200
    assert_ok(server.api("DELETE", f"/api/share-links/{link['id']}", token=tok))


# ---- what a family sees --------------------------------------------------------------------
def test_student_link_shows_the_journal_and_the_group_reports(server):
    fam = Family(server)
    link = create_link(server, "student", fam.student["id"])
    r = open_link(server, link["token"])
    body = assert_json(r, 200)
    assert r.headers["Cache-Control"] == "no-store"
    assert set(body) == {"kind", "student_name", "group_name", "entries", "lesson_reports"}
    assert body["kind"] == "student" and body["student_name"] == fam.name
    assert body["group_name"] == fam.group["name"]
    # Only this student's live entries: not the deleted one, not the classmate's.
    assert [e["description"] for e in body["entries"]] == ["fractions <b>&</b> decimals"]
    entry = body["entries"][0]
    assert set(entry) == {"created_at", "description", "module_name", "photo_url", "files"}
    assert entry["module_name"] == fam.module["name"]
    assert [f["name"] for f in entry["files"]] == ["homework.pdf"]
    assert [(x["lesson_date"], x["topic"]) for x in body["lesson_reports"]] == [
        ("2026-10-08", "Fractions 2/8"), ("2026-10-01", "Fractions 2/8")]
    assert body["lesson_reports"][0]["text"] == fam.reports[1]["text"]
    # Names, dates and texts only: no ids, no user names.
    assert not {k for k in keys_everywhere(body) if k == "id" or k.endswith("_id")}
    assert server.admin_username not in r.text
    # The photo and the file, byte for byte, through the link.
    photo = fetch(server, entry["photo_url"])
    assert photo.status_code == 200 and photo.content == fam.photo
    assert photo.headers["Content-Type"].startswith("image/jpeg")
    pdf = fetch(server, entry["files"][0]["url"])
    assert pdf.status_code == 200 and pdf.content == fam.pdf
    assert "attachment" in pdf.headers.get("Content-Disposition", "")
    # The opening is counted.
    listed = list_links(server, kind="student", target_id=fam.student["id"])[0]
    assert listed["open_count"] == 1 and listed["last_opened_at"]


def test_files_of_others_are_not_reachable_through_a_link(server):
    fam = Family(server)
    link = create_link(server, "student", fam.student["id"])
    glink = create_link(server, "group", fam.group["id"])
    base = f"/api/share/{link['token']}/files/"
    assert_error(fetch(server, base + url_name(fam.other_stored)), 404)
    assert_error(fetch(server, base + "files-00" + "0" * 30), 404)
    assert_error(fetch(server, base + "..-..-journal.db"), 404)
    assert_error(fetch(server, base + "files-"), 404)
    mine = sql_scalar(server, "SELECT stored_name FROM entry_files WHERE entry_id = "
                              f"{fam.entry['id']}")
    # A group link shares lesson reports only.
    assert fetch(server, base + url_name(mine)).status_code == 200
    assert_error(fetch(server, f"/api/share/{glink['token']}/files/" + url_name(mine)), 404)


def test_group_link_shows_lesson_reports_only(server):
    fam = Family(server)
    link = create_link(server, "group", fam.group["id"])
    body = assert_json(open_link(server, link["token"]), 200)
    assert set(body) == {"kind", "student_name", "group_name", "lesson_reports"}
    assert body["kind"] == "group" and body["student_name"] is None
    assert len(body["lesson_reports"]) == 2
    assert fam.name not in json.dumps(body)


def test_unknown_expired_revoked_and_deleted_are_the_same_404(server):
    fam = Family(server)
    revoked = create_link(server, "student", fam.student["id"])
    expired = create_link(server, "student", fam.student["id"])
    gone = create_link(server, "group", fam.group["id"])
    alive = create_link(server, "student", fam.student["id"])
    body = assert_json(open_link(server, revoked["token"]), 200)  # opened before the revoke
    file_url = body["entries"][0]["files"][0]["url"]
    assert_ok(server.api("DELETE", f"/api/share-links/{revoked['id']}", token=server.admin_token))
    sql_exec(server, "UPDATE share_links SET expires_at = '2020-01-01T00:00:00Z'"
                     f" WHERE id = {expired['id']}")
    answers = [open_link(server, t) for t in (
        revoked["token"], expired["token"], "sl_" + "0" * 64, "x",
        revoked["token"].upper())]
    for r in answers:
        assert assert_json(r, 404) == NOT_FOUND
    assert fetch(server, file_url).json() == NOT_FOUND
    assert unlock(server, revoked["token"], "whatever").json() == NOT_FOUND
    # Revoking again is harmless; revoked_at stays.
    first = [l for l in list_links(server, target_id=fam.student["id"], kind="student")
             if l["id"] == revoked["id"]][0]["revoked_at"]
    assert first
    assert_ok(server.api("DELETE", f"/api/share-links/{revoked['id']}", token=server.admin_token))
    again = [l for l in list_links(server, target_id=fam.student["id"], kind="student")
             if l["id"] == revoked["id"]][0]["revoked_at"]
    assert again == first
    assert_error(server.api("DELETE", "/api/share-links/9000000000000",
                            token=server.admin_token), 404)
    # A soft-deleted group takes its links (and its students') away.
    assert open_link(server, alive["token"]).status_code == 200
    assert_ok(server.api("DELETE", f"/api/groups/{fam.group['id']}", token=server.admin_token))
    for t in (gone["token"], alive["token"]):
        assert assert_json(open_link(server, t), 404) == NOT_FOUND


# ---- passwords, bans, throttle ---------------------------------------------------------------
def test_password_link(server):
    fam = Family(server)
    password = "open-sesame-" + uniq("p")
    link = create_link(server, "student", fam.student["id"], password=password)
    assert link["has_password"] is True
    stored = sql_scalar(server, f"SELECT password_hash FROM share_links WHERE id = {link['id']}")
    assert stored.startswith("$2") and password not in stored
    ip = random_ip()
    body = assert_error(open_link(server, link["token"], ip=ip), 401, "password")
    assert body["password_required"] is True
    assert_error(unlock(server, link["token"], "wrong-" + password, ip=ip), 401, "password")
    assert_error(server.api("POST", f"/api/share/{link['token']}", json={}, ip=ip), 400,
                 "password")
    ok = assert_json(unlock(server, link["token"], password, ip=ip), 200)
    assert ok["student_name"] == fam.name
    grant = ok["grant"]
    assert re.match(r"^[0-9a-f]{64}$", grant)
    # The grant opens the content and the files; without it they need the password.
    assert assert_json(open_link(server, link["token"], ip=ip, params={"grant": grant}),
                       200)["student_name"] == fam.name
    url = ok["entries"][0]["photo_url"]
    assert url.endswith("?grant=" + grant)
    assert fetch(server, url, ip=ip).content == fam.photo
    assert_error(fetch(server, url.split("?")[0], ip=ip), 401, "password")
    assert_error(open_link(server, link["token"], ip=ip, params={"grant": "0" * 64}), 401)
    for text in (server.read_error_log(),
                 sql_scalar(server, "SELECT COALESCE(MAX(changes), '') FROM audit_log "
                                    f"WHERE entity_type = 'share_link' AND entity_id = '{link['id']}'")):
        assert password not in text and link["token"] not in text and grant not in text


def test_ten_wrong_passwords_ban_the_address(server):
    fam = Family(server)
    link = create_link(server, "student", fam.student["id"], password="right-password")
    plain = create_link(server, "group", fam.group["id"])
    ip = random_ip()
    for i in range(9):
        assert_error(unlock(server, link["token"], f"wrong-{i}", ip=ip), 401, "password")
    assert_error(unlock(server, link["token"], "wrong-9", ip=ip), 401, "password")
    # Banned: 403 on share links (even with the right password) and at login.
    assert_error(unlock(server, link["token"], "right-password", ip=ip), 403, "banned")
    assert_error(open_link(server, plain["token"], ip=ip), 403, "banned")
    assert_error(fetch(server, f"/api/share/{plain['token']}/files/x", ip=ip), 403)
    r = server.api("POST", "/api/auth/login", ip=ip,
                   json={"username": server.admin_username, "password": "x"})
    assert_error(r, 403, "banned")
    bans = assert_json(server.api("GET", "/api/bans", token=server.admin_token), 200)
    mine = [b for b in bans if b["ip"] == ip]
    assert [b["reason"] for b in mine] == ["share-bruteforce"]
    until = datetime.fromisoformat(mine[0]["expires_at"].replace("Z", "+00:00"))
    assert abs(until - datetime.now(timezone.utc) - timedelta(hours=24)) < timedelta(minutes=5)
    # Liftable like the other bans; the address starts again from a clean slate.
    assert_ok(server.api("DELETE", f"/api/bans/{ip}", token=server.admin_token))
    assert open_link(server, plain["token"], ip=ip).status_code == 200
    assert_error(unlock(server, create_link(server, "group", fam.group["id"],
                                            password="another-one")["token"], "nope", ip=ip),
                 401, "password")
    assert open_link(server, plain["token"], ip=ip).status_code == 200


def test_wrong_passwords_from_many_addresses_throttle_the_link(server):
    fam = Family(server)
    link = create_link(server, "student", fam.student["id"], password="family-secret")
    for _ in range(10):  # JournalLoginThrottleThreshold: one failure per address, no ban
        assert_error(unlock(server, link["token"], "guess", ip=random_ip()), 401, "password")
    r = unlock(server, link["token"], "family-secret", ip=random_ip())
    assert_error(r, 429, "wrong passwords")
    assert int(r.headers["Retry-After"]) >= 1
    # Other links are not throttled.
    other = create_link(server, "student", fam.student["id"], password="family-secret")
    assert unlock(server, other["token"], "family-secret", ip=random_ip()).status_code == 200


def test_missing_stored_file_is_404_and_logged(server):
    server.allowed_log_patterns.append(r"JR10001: a file shared by link \d+ is missing")
    fam = Family(server)
    link = create_link(server, "student", fam.student["id"])
    entry = assert_json(open_link(server, link["token"]), 200)["entries"][0]
    stored = sql_scalar(server, "SELECT stored_name FROM entry_files WHERE entry_id = "
                                f"{fam.entry['id']}")
    (server.data_dir / stored).unlink()
    assert_error(fetch(server, entry["files"][0]["url"]), 404, "no longer stored")
    log = server.read_error_log()
    assert "JR10001" in log and stored not in log.split("JR10001")[-1].splitlines()[0]


def test_lifetime_directives(fresh_server):
    srv = fresh_server("JournalShareLinkLifetime 2d\nJournalShareLinkMaxLifetime 36h")
    group = srv.create_group(srv.create_branch()["id"])
    link = create_link(srv, "group", group["id"])
    expires = datetime.fromisoformat(link["expires_at"].replace("Z", "+00:00"))
    # The default above the maximum is capped at it.
    assert abs(expires - datetime.now(timezone.utc) - timedelta(hours=36)) < timedelta(minutes=5)
    late = iso(datetime.now(timezone.utc) + timedelta(hours=40))
    assert_error(srv.api("POST", "/api/share-links", token=srv.admin_token, json={
        "kind": "group", "target_id": group["id"], "expires_at": late}), 400, "expires_at")
    assert "at most 36 hours ahead" in srv.api("POST", "/api/share-links", token=srv.admin_token, json={
        "kind": "group", "target_id": group["id"], "expires_at": late}).json()["error"]
