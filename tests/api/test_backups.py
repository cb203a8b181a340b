"""Backups and restores (/api/backups): one tar.gz with manifest.json, one JSON-lines file per
table and the stored files; API keys, sessions and bans are never in it. A restore checks
everything first, replaces the records in one transaction, swaps the file trees, deletes every
API key and ends every session; a refused archive changes nothing."""

import gzip
import hashlib
import io
import json
import os
import stat
import signal
import tarfile
import threading
import time

import pytest

import harness
from harness import assert_error, assert_json, assert_ok, sql_exec, sql_int, uniq
from test_share_links import Family, create_link, open_link

NAME_RE = r"^journal-\d{8}T\d{6}Z-[0-9a-f]{8}\.tar\.gz$"
TABLES = {"branches", "users", "user_branches", "study_groups", "students", "modules",
          "entries", "entry_files", "photos", "lesson_reports", "lesson_report_versions",
          "settings", "share_links", "audit_log", "chat_messages", "chat_reads"}


# ---- helpers ---------------------------------------------------------------------------------
def get(srv, path, token=None, **params):
    return assert_json(srv.api("GET", path, token=token or srv.admin_token, params=params), 200)


def make_key(srv):
    return assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token, json={
        "name": uniq("bk"), "scopes": ["read"]}), 201)["key"]


def key_status(srv, key):
    return srv.api("GET", "/api/v1/me", headers={"X-Api-Key": key}).status_code


def build_data(srv):
    """Every kind of record: branches, a tutor, groups, students, a module, entries with a
    photo and a file (and one in the trash), lesson reports with versions, a setting, a share
    link, a chat thread with a read mark. Returns (family, share token)."""
    fam = Family(srv)
    tutor, tutor_token = srv.create_tutor([fam.branch])
    thread = f"/api/chat/threads/{tutor['id']}"
    assert_json(srv.api("POST", thread + "/messages", token=tutor_token,
                        json={"text": "A question " + uniq("q")}), 201)
    assert_json(srv.api("POST", thread + "/messages", token=srv.admin_token,
                        json={"text": "An answer"}), 201)
    assert srv.api("POST", thread + "/read", token=tutor_token).status_code == 200
    report = fam.reports[0]
    assert_json(srv.api("PUT", f"/api/lesson-reports/{report['id']}", token=srv.admin_token,
                        json={"text": "Edited " + uniq("v")}), 200)
    assert_json(srv.api("PUT", "/api/settings", token=srv.admin_token,
                        json={"timezone": "Europe/Berlin"}), 200)
    link = create_link(srv, "student", fam.student["id"])
    return fam, link["token"]


def snapshot(srv, token=None):
    """What the API shows of every record, with the bytes of every file and photo."""
    t = token or srv.admin_token
    snap = {
        "branches": get(srv, "/api/branches", t),
        "groups": get(srv, "/api/groups", t, limit=1000),
        "students": get(srv, "/api/students", t, limit=1000),
        "modules": get(srv, "/api/modules", t, limit=1000),
        "entries": get(srv, "/api/entries", t, limit=1000),
        "reports": get(srv, "/api/lesson-reports", t, limit=1000),
        "users": get(srv, "/api/users", t),
        "share_links": get(srv, "/api/share-links", t, limit=1000),
        "trash": get(srv, "/api/trash", t, limit=1000),
        "settings": get(srv, "/api/settings", t),
        "chat": get(srv, "/api/chat/threads", t),
        "bytes": {},
    }
    for th in snap["chat"]:
        tid = th.get("tutor_id") or th.get("tutor", {}).get("id")
        snap[f"chat {tid}"] = get(srv, f"/api/chat/threads/{tid}/messages", t)
    for e in snap["entries"]:
        versions = None
        for f in get(srv, f"/api/entries/{e['id']}/files", t):
            r = srv.api("GET", f"/api/entries/{e['id']}/files/{f['id']}", token=t)
            assert r.status_code == 200, r.text
            snap["bytes"][f"file {f['id']}"] = hashlib.sha256(r.content).hexdigest()
        if e.get("has_photo"):
            r = srv.api("GET", f"/api/entries/{e['id']}/photo", token=t)
            assert r.status_code == 200, r.text
            snap["bytes"][f"photo {e['id']}"] = hashlib.sha256(r.content).hexdigest()
        del versions
    for rep in snap["reports"]:
        snap[f"versions {rep['id']}"] = get(srv, f"/api/lesson-reports/{rep['id']}/versions", t,
                                            limit=1000)
    return snap


# A restore counts as a change of every record of the synced lists (branches, groups, students,
# modules, entries, lesson reports): their updated_at becomes the restore's time, so an
# incremental sync (updated_since) receives the restored state. Everything else is the backup's.
SYNCED = ("branches", "groups", "students", "modules", "entries", "reports", "trash")


def utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1))


def assert_restored(after, before, since):
    """after equals before, except that each synced record's updated_at is the restore's."""
    assert set(after) == set(before)
    for part in before:
        if part not in SYNCED:
            assert after[part] == before[part], part
            continue
        assert len(after[part]) == len(before[part]), part
        for a, b in zip(after[part], before[part]):
            a, b = dict(a), dict(b)
            if "updated_at" in b:
                assert a.pop("updated_at") >= since, (part, a.get("id"))
                b.pop("updated_at")
            assert a == b, part


def create_backup(srv):
    r = srv.api("POST", "/api/backups", token=srv.admin_token)
    body = assert_json(r, 201)
    assert set(body) == {"name", "size", "counts"}
    return body


def download(srv, name):
    r = srv.api("GET", f"/api/backups/{name}/download", token=srv.admin_token)
    assert r.status_code == 200, r.text[:300]
    assert r.headers["Content-Type"].startswith("application/gzip")
    return r.content


def members(data):
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}


def pack(files):
    """A tar.gz of {name: bytes}, in order."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o600
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def upload_restore(srv, data, token=None):
    return srv.api("POST", "/api/backups/restore", token=token or srv.admin_token, data=data,
                   headers={"Content-Type": "application/gzip"})


def relogin(srv):
    srv._admin_token = None
    return srv.admin_token


# ---- the archive -----------------------------------------------------------------------------
def test_archive_holds_records_and_files_but_no_keys(fresh_server):
    srv = fresh_server()
    fam, share = build_data(srv)
    key = make_key(srv)
    b = create_backup(srv)
    import re
    assert re.match(NAME_RE, b["name"]), b["name"]
    # Two entry files, and the photo as current and as original.
    assert b["counts"]["entries"] == 3 and b["counts"]["files"] == 4
    listed = get(srv, "/api/backups")
    assert [x["name"] for x in listed] == [b["name"]] and listed[0]["size"] == b["size"]
    path = srv.data_dir / "backups" / b["name"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not [p for p in (srv.data_dir / "backups").iterdir() if p.name.startswith(".")]
    data = download(srv, b["name"])
    assert len(data) == b["size"]
    files = members(data)
    manifest = json.loads(files["manifest.json"])
    assert manifest["format"] == "mod_journal-backup" and manifest["format_version"] == 1
    assert manifest["schema_version"] >= 10
    assert {n[3:-6] for n in files if n.startswith("db/")} == TABLES
    for name, content in files.items():
        if name != "manifest.json":
            assert manifest["sha256"][name] == hashlib.sha256(content).hexdigest(), name
    assert set(manifest["sha256"]) == set(files) - {"manifest.json"}
    for table in TABLES:
        lines = files[f"db/{table}.jsonl"].decode().splitlines()
        assert len(lines) == manifest["counts"][table], table
    # The stored files are there byte for byte; no key, session or ban is.
    assert fam.photo in files.values() and fam.pdf in files.values()
    everything = b"".join(files.values())
    key_hash = hashlib.sha256(key.encode()).hexdigest().encode()
    assert key.encode() not in everything and key_hash not in everything
    assert srv.admin_token.encode() not in everything
    assert hashlib.sha256(srv.admin_token.encode()).hexdigest().encode() not in everything
    assert not any(n.startswith(("db/api_keys", "db/sessions", "db/ip_bans", "db/events"))
                   for n in files)
    # One event and one audit row tell of it.
    assert sql_int(srv, "SELECT COUNT(*) FROM events WHERE type = 'backup.created'") == 1
    assert sql_int(srv, "SELECT COUNT(*) FROM audit_log WHERE entity_type = 'backup'"
                        f" AND entity_id = '{b['name']}' AND action = 'create'") == 1


def test_backups_are_for_admins(server):
    _, tutor = server.create_tutor([server.create_branch()["id"]])
    for method, path in (("POST", "/api/backups"), ("GET", "/api/backups"),
                         ("POST", "/api/backups/restore")):
        assert_error(server.api(method, path, token=tutor), 403)
        assert_error(server.api(method, path), 401)
    for name in ("journal-20261123T100000Z-00000000.tar.gz", "x", "..", "journal-20261123T100000Z-0000000g.tar.gz"):
        assert_error(server.api("GET", f"/api/backups/{name}/download", token=server.admin_token),
                     404)
        assert_error(server.api("DELETE", f"/api/backups/{name}", token=server.admin_token), 404)
        assert_error(server.api("POST", f"/api/backups/{name}/restore",
                                token=server.admin_token), 404)


def test_delete_a_backup(fresh_server):
    srv = fresh_server()
    b = create_backup(srv)
    assert_ok(srv.api("DELETE", f"/api/backups/{b['name']}", token=srv.admin_token))
    assert get(srv, "/api/backups") == []
    assert_error(srv.api("GET", f"/api/backups/{b['name']}/download", token=srv.admin_token), 404)


# ---- restores --------------------------------------------------------------------------------
def test_restore_brings_back_the_records_and_files_and_drops_keys(fresh_server):
    srv = fresh_server()
    fam, share = build_data(srv)
    before = snapshot(srv)
    assert [len(v) for k, v in before.items() if k.startswith("chat ")] == [2]
    counts = [sql_int(srv, f"SELECT COALESCE(SUM(live), -1) FROM entry_counts WHERE branch_id = "
                           f"{br['id']}") for br in before["branches"]]
    old_key = make_key(srv)
    b = create_backup(srv)
    # Changes after the backup: all undone by the restore.
    assert_json(srv.api("POST", "/api/entries", token=srv.admin_token, json={
        "student_name": "After", "group_id": fam.group["id"]}), 201)
    assert_ok(srv.api("DELETE", f"/api/students/{fam.student['id']}", token=srv.admin_token))
    assert_ok(srv.api("DELETE", f"/api/entries/{fam.entry['id']}/photo", token=srv.admin_token))
    new_key = make_key(srv)
    old_token = srv.admin_token
    assert key_status(srv, old_key) == 200 and key_status(srv, new_key) == 200

    since = utc_now()
    r = srv.api("POST", f"/api/backups/{b['name']}/restore", token=old_token)
    body = assert_json(r, 200)
    assert body["ok"] is True and body["counts"] == b["counts"]
    assert "log in again" in body["message"]
    # Every session ended; every key is gone, those older and newer than the backup.
    assert_error(srv.api("GET", "/api/auth/me", token=old_token), 401)
    assert key_status(srv, old_key) == 401 and key_status(srv, new_key) == 401
    assert sql_int(srv, "SELECT COUNT(*) FROM api_keys") == 0
    relogin(srv)
    assert_restored(snapshot(srv), before, since)
    # The counts the triggers keep (entries per branch) match the restored rows.
    assert counts == [sql_int(srv, f"SELECT COALESCE(SUM(live), -1) FROM entry_counts WHERE "
                                   f"branch_id = {br['id']}") for br in before["branches"]]
    assert open_link(srv, share).status_code == 200
    assert sql_int(srv, "SELECT COUNT(*) FROM events WHERE type = 'backup.restored'") == 1
    assert sql_int(srv, "SELECT COUNT(*) FROM audit_log WHERE entity_type = 'backup'"
                        " AND action = 'restore'") == 1
    # The admins are told of both (notifications backup.created and backup.restored).
    notes = assert_json(srv.api("GET", "/api/notifications", token=srv.admin_token), 200)
    told = {n["type"]: n for n in notes if n["type"].startswith("backup.")}
    assert set(told) == {"backup.created", "backup.restored"}
    assert b["name"] in told["backup.restored"]["body"] and told["backup.created"]["level"] == "info"
    assert told["backup.restored"]["entity_type"] == "backup"
    # New records take new ids after the restored ones.
    e = assert_json(srv.api("POST", "/api/entries", token=srv.admin_token, json={
        "student_name": "Later", "group_id": fam.group["id"]}), 201)
    assert e["id"] > max(x["id"] for x in before["entries"])


def test_restore_an_upload_onto_a_fresh_server(fresh_server):
    src = fresh_server()
    fam, share = build_data(src)
    before = snapshot(src)
    data = download(src, create_backup(src)["name"])
    dst = fresh_server()
    since = utc_now()
    body = assert_json(upload_restore(dst, data), 200)
    assert body["counts"]["entries"] == 3
    # The accounts are the backup's now.
    dst.use_existing_admin(src.admin_username, src.admin_password)
    assert_restored(snapshot(dst), before, since)
    assert open_link(dst, share).json()["student_name"] == fam.name


def test_refused_archives_change_nothing(fresh_server):
    srv = fresh_server()
    build_data(srv)
    b = create_backup(srv)
    good = download(srv, b["name"])
    files = members(good)
    key = make_key(srv)
    token = srv.admin_token
    before = snapshot(srv)

    manifest = json.loads(files["manifest.json"])
    newer = dict(files, **{"manifest.json": json.dumps(
        dict(manifest, schema_version=manifest["schema_version"] + 1000)).encode()})
    entries = files["db/entries.jsonl"].replace(b'"description":"', b'"description":"X', 1)
    tampered = dict(files, **{"db/entries.jsonl": entries})
    no_manifest = {n: d for n, d in files.items() if n != "manifest.json"}
    extra = dict(files, **{"db/api_keys.jsonl": b'{"id":"1"}\n'})
    bad_row = files["db/branches.jsonl"] + b'{"id":"x1","name":"n"}\n'
    manifest_bad_row = dict(manifest, counts=dict(manifest["counts"],
                                                  branches=manifest["counts"]["branches"] + 1),
                            sha256=dict(manifest["sha256"], **{
                                "db/branches.jsonl": hashlib.sha256(bad_row).hexdigest()}))
    bad_rows = dict(files, **{"db/branches.jsonl": bad_row,
                              "manifest.json": json.dumps(manifest_bad_row).encode()})
    middle = len(good) // 2
    cases = [
        (good[:middle], "truncated"),
        (good[:middle] + bytes([good[middle] ^ 0xFF]) + good[middle + 1:], "damaged"),
        (b"not an archive at all", "damaged"),
        (gzip.compress(b"x" * 2000), "damaged"),
        (pack(newer), "schema_version"),
        (pack(tampered), "sha256"),
        (pack(no_manifest), "manifest"),
        (pack(extra), "not part of a backup"),
        (pack(bad_rows), "branches.jsonl"),
    ]
    for data, word in cases:
        assert_error(upload_restore(srv, data, token=token), 400, word)
        # Nothing changed: records, files, the session and the key.
        assert key_status(srv, key) == 200
        assert snapshot(srv, token) == before, word
    assert_error(upload_restore(srv, b"", token=token), 400, "body")
    assert not [p for p in (srv.data_dir / "backups").iterdir() if p.name.startswith(".")]
    assert sql_int(srv, "SELECT COUNT(*) FROM events WHERE type = 'backup.restored'") == 0


@pytest.mark.skipif(harness.DB_KIND != "pgsql", reason="needs the PostgreSQL cluster")
def test_across_databases(fresh_server, monkeypatch):
    """PostgreSQL -> SQLite -> PostgreSQL, each restore a fresh server, content equal."""
    src = fresh_server()
    fam, share = build_data(src)
    before = snapshot(src)
    data = download(src, create_backup(src)["name"])
    monkeypatch.setattr(harness, "DB_KIND", "sqlite")
    lite = fresh_server()
    monkeypatch.setattr(harness, "DB_KIND", "pgsql")
    assert lite.db_kind == "sqlite"
    since = utc_now()
    assert_json(upload_restore(lite, data), 200)
    lite.use_existing_admin(src.admin_username, src.admin_password)
    assert_restored(snapshot(lite), before, since)
    data2 = download(lite, create_backup(lite)["name"])
    back = fresh_server()
    assert back.db_kind == "pgsql"
    since = utc_now()
    assert_json(upload_restore(back, data2), 200)
    back.use_existing_admin(src.admin_username, src.admin_password)
    assert_restored(snapshot(back), before, since)
    assert open_link(back, share).json()["student_name"] == fam.name


def test_journal_admin_backup_and_restore(fresh_server):
    """The same code offline: journal-admin backup on one server's database, journal-admin
    restore into another's, which then serves the same records and files."""
    src = fresh_server()
    fam, share = build_data(src)
    key = make_key(src)
    before = snapshot(src)
    proc = src.admin_cli("backup", "--data-dir", str(src.data_dir))
    assert proc.returncode == 0, proc.stderr
    name = proc.stdout.strip().split("/")[-1].split(" ")[0]
    archive = src.data_dir / "backups" / name
    assert archive.exists() and stat.S_IMODE(archive.stat().st_mode) == 0o600
    assert archive.stat().st_uid == (src.data_dir / "backups").stat().st_uid
    assert [b["name"] for b in get(src, "/api/backups")] == [name]

    dst = fresh_server()
    dst.stop()
    copy = dst.root / name
    copy.write_bytes(archive.read_bytes())
    bad = dst.root / "bad.tar.gz"
    bad.write_bytes(archive.read_bytes()[:-40])
    proc = dst.admin_cli("restore", str(bad), "--data-dir", str(dst.data_dir))
    assert proc.returncode == 1 and "damaged or truncated" in proc.stderr, proc.stderr
    since = utc_now()
    proc = dst.admin_cli("restore", str(copy), "--data-dir", str(dst.data_dir))
    assert proc.returncode == 0, proc.stderr
    assert "every API key was deleted" in proc.stdout
    dst.use_existing_admin(src.admin_username, src.admin_password)
    dst.start()
    assert_restored(snapshot(dst), before, since)
    assert key_status(dst, key) == 401
    assert open_link(dst, share).json()["student_name"] == fam.name
    proc = dst.admin_cli("backup")
    assert proc.returncode == 1 and "data directory" in proc.stderr


def bulk_entries(srv, group, branch, n):
    """n entries written straight into the database (the API would take minutes)."""
    now = "2026-11-01T10:00:00Z"
    cols = ("student_name, group_id, branch_id, description, created_at, updated_at")
    if srv.db_kind == "sqlite":
        sql_exec(srv, f"WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s "
                      f"WHERE i < {n}) INSERT INTO entries ({cols}) SELECT 'Bulk ' || i, "
                      f"{group}, {branch}, 'bulk description number ' || i || ' "
                      f"{'x' * 200}', '{now}', '{now}' FROM s")
    else:  # in steps: each psql call has a time limit, and the row triggers are slow
        for start in range(1, n + 1, 5000):
            sql_exec(srv, f"INSERT INTO entries ({cols}) SELECT 'Bulk ' || i, {group}, "
                          f"{branch}, 'bulk description number ' || i || ' {'x' * 200}', "
                          f"'{now}', '{now}' FROM generate_series({start}, "
                          f"{min(start + 4999, n)}) AS i")


def child_pids(srv):
    """The httpd children (not the parent, not the supervised workers)."""
    parent = srv._read_pid()
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            if int(fields[1]) == parent and b"apache2" in cmd:
                out.append(int(d))
    return out


def test_kill_during_restore_changes_nothing(fresh_server):
    srv = fresh_server()
    srv.allowed_log_patterns.append(r"AH00052: child pid \d+ exit signal Killed")
    fam, share = build_data(srv)
    # Enough rows that the transaction outlasts the kill (PostgreSQL runs its row triggers in
    # PL/pgSQL: fewer rows take as long).
    bulk_entries(srv, fam.group["id"], fam.branch, 60000 if srv.db_kind == "sqlite" else 20000)
    b = create_backup(srv)
    key = make_key(srv)
    marker = assert_json(srv.api("POST", "/api/entries", token=srv.admin_token, json={
        "student_name": "Marker", "group_id": fam.group["id"]}), 201)
    token = srv.admin_token
    result = {}

    def restore():
        try:
            result["r"] = srv.http.__class__().post(
                f"{srv.base_url}/api/backups/{b['name']}/restore",
                headers={"X-Auth-Token": token}, timeout=120)
        except Exception as e:  # the connection dies with the child
            result["e"] = e

    t = threading.Thread(target=restore)
    t.start()
    # The archive is unpacked (its manifest comes last), then the transaction runs.
    deadline = time.time() + 60
    staged = None
    while time.time() < deadline and staged is None:
        staged = next((p for p in (srv.data_dir / "backups").glob(".restore-*/manifest.json")), None)
        time.sleep(0.01)
    assert staged is not None, "the restore never unpacked its archive"
    time.sleep(0.3)
    for pid in child_pids(srv):
        os.kill(pid, signal.SIGKILL)
    t.join(120)
    assert "r" not in result, f"the restore finished before the kill: {result['r'].text[:200]}"
    # httpd starts new children; the records, the key, the session and the files are as before.
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            if srv.api("GET", "/api/health").status_code == 200:
                break
        except Exception:
            pass
        time.sleep(0.2)
    assert get(srv, f"/api/entries/{marker['id']}", token)["student_name"] == "Marker"
    assert key_status(srv, key) == 200
    assert sql_int(srv, "SELECT COUNT(*) FROM events WHERE type = 'backup.restored'") == 0
    photo = srv.api("GET", f"/api/entries/{fam.entry['id']}/photo", token=token)
    assert photo.status_code == 200 and photo.content == fam.photo


def test_scheduled_backup_keeps_the_newest(fresh_server):
    """httpd takes the day's backup once its time has passed (00:00: at once, at the first
    look at the schedule, ten seconds after the start), then keeps JournalBackupKeep
    archives."""
    srv = fresh_server("JournalBackupSchedule 00:00\nJournalBackupKeep 2\nLogLevel journal:info",
                       start=False)
    backups = srv.data_dir / "backups"
    backups.mkdir(mode=0o700)
    old = [f"journal-2026010{i}T020000Z-0000000{i}.tar.gz" for i in (1, 2, 3)]
    yesterday = time.time() - 2 * 86400
    for name in old:
        (backups / name).write_bytes(b"old")
        os.utime(backups / name, (yesterday, yesterday))
    srv._chown_tree(srv.data_dir)
    srv.start()
    deadline = time.time() + 60  # the first look comes ten seconds after the start
    names = []
    while time.time() < deadline:
        names = sorted(p.name for p in backups.glob("journal-*.tar.gz"))
        if len(names) == 2 and names[0] == old[2]:
            break
        time.sleep(1)
    assert len(names) == 2 and names[0] == old[2], names
    log = srv.read_error_log()
    assert f"JR10006: scheduled backup {names[1]} written" in log
    assert all(f"JR10008: removed the old backup {n}" in log for n in old[:2])
    assert sql_int(srv, "SELECT COUNT(*) FROM events WHERE type = 'backup.created'") == 1


def test_a_failed_scheduled_backup_is_tried_again_a_minute_later(fresh_server):
    """A scheduled backup that fails logs JR10007 and is not tried again at the next look at
    the schedule, ten seconds later (only after a minute, which the test does not wait for): a
    full disk is not hammered."""
    srv = fresh_server("JournalBackupSchedule 00:00\nLogLevel journal:info", start=False)
    srv.allowed_log_patterns.append(r"JR10007: the scheduled backup failed")
    (srv.data_dir / "backups").write_bytes(b"a file where the directory should be")
    srv._chown_tree(srv.data_dir)
    srv.start()
    deadline = time.time() + 60
    while time.time() < deadline and "JR10007" not in srv.read_error_log():
        time.sleep(0.5)
    assert "JR10007: the scheduled backup failed" in srv.read_error_log()
    time.sleep(13)  # at least one more look at the schedule (every 10 s)
    log = srv.read_error_log()
    assert log.count("JR10007") == 1, log
    assert "JR10006" not in log


def test_large_tables_are_read_in_pages(fresh_server):
    """Tables are read in pages of 2000 rows after the last id: none lost or repeated."""
    srv = fresh_server()
    group = srv.create_group(srv.create_branch()["id"])
    bulk_entries(srv, group["id"], group["branch_id"], 4500)
    b = create_backup(srv)
    assert b["counts"]["entries"] == 4500
    rows = [json.loads(l) for l in members(download(srv, b["name"]))["db/entries.jsonl"]
            .decode().splitlines()]
    ids = [int(r["id"]) for r in rows]
    assert ids == sorted(set(ids)) and len(ids) == 4500
    assert sql_int(srv, "SELECT MAX(id) FROM entries") == ids[-1]
