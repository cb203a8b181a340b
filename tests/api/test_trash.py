"""The trash: GET /api/trash, POST /api/trash/:type/:id/restore, DELETE /api/trash/:type/:id
(admins only), and the automatic purge of what outlived trash_retention_days (housekeeping)."""

import hashlib
import os
import struct
import time
import uuid
import zlib
from datetime import datetime, timedelta, timezone

import pytest

import harness
from harness import assert_error, assert_json, assert_ok, sql_exec, sql_scalar, uniq

NO_SUCH_ID = 9_000_000_000_000
TRASH_KEYS = {"type", "id", "name", "deleted_at", "deleted_by", "purge_at"}


# ---- payloads --------------------------------------------------------------------------------
def pdf_bytes():
    return (b"%PDF-1.4\n% " + uuid.uuid4().hex.encode() + b"\n"
            b"1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
            b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")


def png_bytes():
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"tEXt", b"Comment\x00" + uuid.uuid4().hex.encode())
            + chunk(b"IDAT", zlib.compress(b"\x00\x01\x02\x03")) + chunk(b"IEND", b""))


def sha(data):
    return hashlib.sha256(data).hexdigest()


# ---- helpers ---------------------------------------------------------------------------------
def parse_iso(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


def iso(dt):
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def admin_id(srv):
    return assert_json(srv.api("GET", "/api/auth/me", token=srv.admin_token), 200)["user"]["id"]


def create_entry(srv, group_id):
    r = srv.api("POST", "/api/entries", token=srv.admin_token,
                json={"student_name": uniq("Stu"), "group_id": group_id})
    return assert_json(r, 201)


def create_module(srv):
    r = srv.api("POST", "/api/modules", token=srv.admin_token,
                json={"name": uniq("TrashMod"), "lessons_count": 2})
    return assert_json(r, 201)


def delete(srv, path):
    assert_ok(srv.api("DELETE", path, token=srv.admin_token))


def add_file(srv, entry_id, data=None):
    data = data or pdf_bytes()
    r = srv.api("POST", f"/api/entries/{entry_id}/files", token=srv.admin_token, data=data,
                headers={"Content-Type": "application/pdf", "X-File-Name": "doc.pdf"})
    assert_json(r, 201)
    return data


def add_photo(srv, path, data=None):
    data = data or png_bytes()
    r = srv.api("POST", path, token=srv.admin_token, data=data)
    assert r.status_code in (200, 201), r.text
    return data


def trash(srv, token=None):
    """Every item of the trash, all pages."""
    items, offset = [], 0
    while True:
        r = srv.api("GET", "/api/trash", token=token or srv.admin_token,
                    params={"limit": 1000, "offset": offset})
        page = assert_json(r, 200)
        assert isinstance(page, list), r.text[:300]
        total = int(r.headers["X-Total-Count"])
        items += page
        offset += len(page)
        if not page or offset >= total:
            return items


def in_trash(srv, kind, id_):
    found = [t for t in trash(srv) if t["type"] == kind and t["id"] == id_]
    assert len(found) <= 1, found
    return found[0] if found else None


def restore(srv, kind, id_, token=None):
    return srv.api("POST", f"/api/trash/{kind}/{id_}/restore", token=token or srv.admin_token)


def purge(srv, kind, id_, token=None):
    return srv.api("DELETE", f"/api/trash/{kind}/{id_}", token=token or srv.admin_token)


def entry_ids_of_group(srv, group_id):
    r = srv.api("GET", "/api/entries", token=srv.admin_token,
                params={"group_id": group_id, "limit": 1000})
    return [e["id"] for e in assert_json(r, 200)]


def stored_digests(srv):
    out = []
    for sub in ("files", "photos"):
        base = srv.data_dir / sub
        for dirpath, _, names in os.walk(base):
            for n in names:
                with open(os.path.join(dirpath, n), "rb") as f:
                    out.append(hashlib.sha256(f.read()).hexdigest())
    return out


def on_disk(srv, data):
    return stored_digests(srv).count(sha(data))


def count_rows(srv, table, where):
    return int(sql_scalar(srv, f"SELECT COUNT(*) FROM {table} WHERE {where}"))


def audit_rows(srv, entity_type, entity_id):
    r = srv.api("GET", "/api/audit", token=srv.admin_token,
                params={"entity_type": entity_type, "entity_id": str(entity_id), "limit": 100})
    return assert_json(r, 200)["items"]


@pytest.fixture
def world(server):
    b = server.create_branch()
    return {"branch": b, "group": server.create_group(b["id"])}


# ---- list ------------------------------------------------------------------------------------
def test_deleted_records_are_listed(server, world):
    g = server.create_group(world["branch"]["id"])
    e = create_entry(server, world["group"]["id"])
    m = create_module(server)
    assert in_trash(server, "entry", e["id"]) is None
    assert in_trash(server, "group", g["id"]) is None
    assert in_trash(server, "module", m["id"]) is None
    t0 = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(seconds=2)
    delete(server, f"/api/entries/{e['id']}")
    delete(server, f"/api/groups/{g['id']}")
    delete(server, f"/api/modules/{m['id']}")
    t1 = datetime.now(timezone.utc) + timedelta(seconds=2)
    me = admin_id(server)
    for kind, rec, name in (("entry", e, e["student_name"]), ("group", g, g["name"]),
                            ("module", m, m["name"])):
        item = in_trash(server, kind, rec["id"])
        assert item is not None, (kind, rec)
        assert set(item) == TRASH_KEYS, item
        assert item["name"] == name
        assert item["deleted_by"] == me
        deleted = parse_iso(item["deleted_at"])
        assert t0 <= deleted <= t1, item
        assert parse_iso(item["purge_at"]) == deleted + timedelta(days=30), item
    # Newest first.
    items = trash(server)
    stamps = [i["deleted_at"] for i in items]
    assert stamps == sorted(stamps, reverse=True)
    r = server.api("GET", "/api/trash", token=server.admin_token, params={"limit": 1})
    assert len(assert_json(r, 200)) == 1 and int(r.headers["X-Total-Count"]) == len(items)


def test_purge_at_follows_the_retention_setting(fresh_server):
    srv = fresh_server()
    assert_json(srv.api("PUT", "/api/settings", token=srv.admin_token,
                        json={"trash_retention_days": 7}), 200)
    b = srv.create_branch()
    e = create_entry(srv, srv.create_group(b["id"])["id"])
    delete(srv, f"/api/entries/{e['id']}")
    item = in_trash(srv, "entry", e["id"])
    assert parse_iso(item["purge_at"]) == parse_iso(item["deleted_at"]) + timedelta(days=7)


# ---- restore ---------------------------------------------------------------------------------
def test_restore_entry(server, world):
    gid = world["group"]["id"]
    e = create_entry(server, gid)
    data = add_file(server, e["id"])
    delete(server, f"/api/entries/{e['id']}")
    assert e["id"] not in entry_ids_of_group(server, gid)
    assert_error(server.api("GET", f"/api/entries/{e['id']}", token=server.admin_token), 404)

    back = assert_json(restore(server, "entry", e["id"]), 200)
    assert back["id"] == e["id"] and back["student_name"] == e["student_name"]
    assert back["files_count"] == 1
    assert e["id"] in entry_ids_of_group(server, gid)
    assert assert_json(server.api("GET", f"/api/entries/{e['id']}", token=server.admin_token),
                       200)["id"] == e["id"]
    assert in_trash(server, "entry", e["id"]) is None
    # Its file came back with it.
    files = assert_json(server.api("GET", f"/api/entries/{e['id']}/files",
                                   token=server.admin_token), 200)
    assert [f["sha256"] for f in files] == [sha(data)]
    assert on_disk(server, data) == 1
    assert "restore" in [r["action"] for r in audit_rows(server, "entry", e["id"])]
    # Not in the trash any more.
    assert_error(restore(server, "entry", e["id"]), 404)


def test_restore_entry_of_a_trashed_group_is_409(server, world):
    g = server.create_group(world["branch"]["id"])
    e = create_entry(server, g["id"])
    delete(server, f"/api/entries/{e['id']}")
    delete(server, f"/api/groups/{g['id']}")
    assert_error(restore(server, "entry", e["id"]), 409, "group")
    assert in_trash(server, "entry", e["id"]) is not None
    assert_error(server.api("GET", f"/api/entries/{e['id']}", token=server.admin_token), 404)
    # Group first, then the entry.
    assert assert_json(restore(server, "group", g["id"]), 200)["id"] == g["id"]
    assert assert_json(restore(server, "entry", e["id"]), 200)["id"] == e["id"]
    assert e["id"] in entry_ids_of_group(server, g["id"])


def test_restore_group_and_module(server, world):
    g = server.create_group(world["branch"]["id"])
    m = create_module(server)
    delete(server, f"/api/groups/{g['id']}")
    delete(server, f"/api/modules/{m['id']}")
    assert_error(server.api("GET", f"/api/groups/{g['id']}", token=server.admin_token), 404)
    assert_error(server.api("GET", f"/api/modules/{m['id']}"), 404)

    rg = assert_json(restore(server, "group", g["id"]), 200)
    assert rg["id"] == g["id"] and rg["name"] == g["name"]
    rm = assert_json(restore(server, "module", m["id"]), 200)
    assert rm["id"] == m["id"] and rm["name"] == m["name"]
    assert assert_json(server.api("GET", f"/api/groups/{g['id']}", token=server.admin_token),
                       200)["id"] == g["id"]
    assert assert_json(server.api("GET", f"/api/modules/{m['id']}"), 200)["id"] == m["id"]
    groups = assert_json(server.api("GET", "/api/groups", token=server.admin_token,
                                    params={"branch_id": world["branch"]["id"]}), 200)
    assert g["id"] in [x["id"] for x in groups]
    assert in_trash(server, "group", g["id"]) is None
    assert in_trash(server, "module", m["id"]) is None
    assert_error(restore(server, "group", g["id"]), 404)
    assert_error(restore(server, "module", m["id"]), 404)


def test_restore_with_a_taken_name_is_409(server, world):
    g = server.create_group(world["branch"]["id"])
    m = create_module(server)
    delete(server, f"/api/groups/{g['id']}")
    delete(server, f"/api/modules/{m['id']}")
    twin_g = server.create_group(world["branch"]["id"], name=g["name"])
    twin_m = assert_json(server.api("POST", "/api/modules", token=server.admin_token,
                                    json={"name": m["name"], "lessons_count": 1}), 201)
    assert_error(restore(server, "group", g["id"]), 409)
    assert_error(restore(server, "module", m["id"]), 409)
    assert in_trash(server, "group", g["id"]) is not None
    assert in_trash(server, "module", m["id"]) is not None
    # Once the name is free again the restore works.
    delete(server, f"/api/groups/{twin_g['id']}")
    delete(server, f"/api/modules/{twin_m['id']}")
    assert assert_json(restore(server, "group", g["id"]), 200)["name"] == g["name"]
    assert assert_json(restore(server, "module", m["id"]), 200)["name"] == m["name"]


@pytest.mark.parametrize("params", [{"limit": 0}, {"limit": 1001}, {"limit": "x"},
                                    {"offset": -1}, {"offset": "y"}])
def test_bad_paging_is_400(server, params):
    assert_error(server.api("GET", "/api/trash", token=server.admin_token, params=params), 400)


@pytest.mark.parametrize("kind", ["student", "entries", "user", "branch", "x"])
def test_unknown_type_is_404(server, world, kind):
    e = create_entry(server, world["group"]["id"])
    delete(server, f"/api/entries/{e['id']}")
    assert_error(restore(server, kind, e["id"]), 404)
    assert_error(purge(server, kind, e["id"]), 404)
    assert in_trash(server, "entry", e["id"]) is not None


def test_live_or_unknown_records_are_404(server, world):
    e = create_entry(server, world["group"]["id"])
    g = server.create_group(world["branch"]["id"])
    m = create_module(server)
    for kind, id_ in (("entry", e["id"]), ("group", g["id"]), ("module", m["id"]),
                      ("entry", NO_SUCH_ID), ("group", NO_SUCH_ID), ("module", NO_SUCH_ID)):
        assert_error(restore(server, kind, id_), 404)
        assert_error(purge(server, kind, id_), 404)
    assert_json(server.api("GET", f"/api/entries/{e['id']}", token=server.admin_token), 200)
    assert_json(server.api("GET", f"/api/groups/{g['id']}", token=server.admin_token), 200)
    assert_json(server.api("GET", f"/api/modules/{m['id']}"), 200)


# ---- purge -----------------------------------------------------------------------------------
def test_purge_entry_removes_rows_and_files(server, world):
    e = create_entry(server, world["group"]["id"])
    eid = e["id"]
    f1, f2 = add_file(server, eid), add_file(server, eid)
    p1 = add_photo(server, f"/api/entries/{eid}/photo")
    p2 = add_photo(server, f"/api/entries/{eid}/photo")  # the original stays p1
    keep = create_entry(server, world["group"]["id"])
    kf = add_file(server, keep["id"])
    assert (on_disk(server, f1), on_disk(server, f2), on_disk(server, p1),
            on_disk(server, p2)) == (1, 1, 1, 1)
    delete(server, f"/api/entries/{eid}")
    # In the trash the bytes stay.
    assert (on_disk(server, f1), on_disk(server, p1)) == (1, 1)

    assert_ok(purge(server, "entry", eid))
    assert in_trash(server, "entry", eid) is None
    assert_error(restore(server, "entry", eid), 404)
    assert_error(purge(server, "entry", eid), 404)
    assert_error(server.api("GET", f"/api/entries/{eid}", token=server.admin_token), 404)
    for data in (f1, f2, p1, p2):
        assert on_disk(server, data) == 0
    assert count_rows(server, "entries", f"id = {eid}") == 0
    assert count_rows(server, "entry_files", f"entry_id = {eid}") == 0
    assert count_rows(server, "photos", f"owner_type = 'entry' AND owner_id = {eid}") == 0
    # Other entries keep theirs.
    assert on_disk(server, kf) == 1
    assert count_rows(server, "entry_files", f"entry_id = {keep['id']}") == 1
    rows = audit_rows(server, "entry", eid)
    assert rows[0]["action"] == "purge", rows
    assert rows[0]["actor_user_id"] == admin_id(server)


def test_purge_group_with_live_entries_is_409(server, world):
    g = server.create_group(world["branch"]["id"])
    live = create_entry(server, g["id"])
    gone = create_entry(server, g["id"])
    data = add_file(server, gone["id"])
    delete(server, f"/api/entries/{gone['id']}")
    delete(server, f"/api/groups/{g['id']}")
    assert_error(purge(server, "group", g["id"]), 409, "entries")
    assert in_trash(server, "group", g["id"]) is not None
    assert in_trash(server, "entry", gone["id"]) is not None
    assert count_rows(server, "entries", f"id IN ({live['id']}, {gone['id']})") == 2
    assert on_disk(server, data) == 1
    assert "purge" not in [r["action"] for r in audit_rows(server, "group", g["id"])]


def test_purge_group_takes_its_trashed_entries_along(server, world):
    g = server.create_group(world["branch"]["id"])
    e1, e2 = create_entry(server, g["id"]), create_entry(server, g["id"])
    f1 = add_file(server, e1["id"])
    p1 = add_photo(server, f"/api/entries/{e1['id']}/photo")
    f2 = add_file(server, e2["id"])
    cover = add_photo(server, f"/api/groups/{g['id']}/photo")
    r = server.api("POST", "/api/students", token=server.admin_token,
                   json={"name": uniq("Pupil"), "group_id": g["id"]})
    student = assert_json(r, 201)
    delete(server, f"/api/entries/{e1['id']}")
    delete(server, f"/api/entries/{e2['id']}")
    delete(server, f"/api/groups/{g['id']}")

    assert_ok(purge(server, "group", g["id"]))
    assert in_trash(server, "group", g["id"]) is None
    assert in_trash(server, "entry", e1["id"]) is None
    assert in_trash(server, "entry", e2["id"]) is None
    assert_error(restore(server, "group", g["id"]), 404)
    assert_error(restore(server, "entry", e1["id"]), 404)
    for data in (f1, p1, f2, cover):
        assert on_disk(server, data) == 0
    assert count_rows(server, "study_groups", f"id = {g['id']}") == 0
    assert count_rows(server, "entries", f"group_id = {g['id']}") == 0
    assert count_rows(server, "entry_files", f"entry_id IN ({e1['id']}, {e2['id']})") == 0
    assert count_rows(server, "photos", f"owner_type = 'entry' AND owner_id = {e1['id']}") == 0
    assert count_rows(server, "photos", f"owner_type = 'group' AND owner_id = {g['id']}") == 0
    assert count_rows(server, "students", f"id = {student['id']}") == 0
    assert audit_rows(server, "group", g["id"])[0]["action"] == "purge"


def test_purge_module(server, world):
    m = create_module(server)
    e = create_entry(server, world["group"]["id"])
    r = server.api("PUT", f"/api/entries/{e['id']}", token=server.admin_token,
                   json={"module_id": m["id"]})
    assert assert_json(r, 200)["module_id"] == m["id"]
    delete(server, f"/api/modules/{m['id']}")
    assert_ok(purge(server, "module", m["id"]))
    assert in_trash(server, "module", m["id"]) is None
    assert_error(restore(server, "module", m["id"]), 404)
    assert count_rows(server, "modules", f"id = {m['id']}") == 0
    got = assert_json(server.api("GET", f"/api/entries/{e['id']}", token=server.admin_token), 200)
    assert got["module_id"] is None
    assert audit_rows(server, "module", m["id"])[0]["action"] == "purge"


# ---- access ----------------------------------------------------------------------------------
def test_tutors_are_refused(server, world):
    b = world["branch"]
    _, tok = server.create_tutor(branch_ids=[b["id"]])
    e = create_entry(server, world["group"]["id"])
    delete(server, f"/api/entries/{e['id']}")
    assert_error(server.api("GET", "/api/trash", token=tok), 403)
    assert_error(restore(server, "entry", e["id"], token=tok), 403)
    assert_error(purge(server, "entry", e["id"], token=tok), 403)
    assert_error(purge(server, "x", e["id"], token=tok), 403)
    for method, path in (("GET", "/api/trash"), ("POST", f"/api/trash/entry/{e['id']}/restore"),
                         ("DELETE", f"/api/trash/entry/{e['id']}")):
        assert_error(server.api(method, path), 401)
    key = harness.assert_json(server.api("POST", "/api/api-keys", token=server.admin_token,
                                         json={"name": uniq("tk"), "scopes": ["read", "write"]}),
                              201)
    assert_error(server.api("GET", "/api/trash", headers={"X-Api-Key": key["key"]}), 401)
    assert in_trash(server, "entry", e["id"]) is not None
    assert count_rows(server, "entries", f"id = {e['id']} AND deleted_at IS NOT NULL") == 1


# ---- housekeeping ----------------------------------------------------------------------------
def test_housekeeping_purges_expired_items(fresh_server):
    srv = fresh_server("JournalHousekeepingInterval 5s")
    b = srv.create_branch()
    g = srv.create_group(b["id"])
    old, recent = create_entry(srv, g["id"]), create_entry(srv, g["id"])
    old_file, recent_file = add_file(srv, old["id"]), add_file(srv, recent["id"])
    old_photo = add_photo(srv, f"/api/entries/{old['id']}/photo")
    delete(srv, f"/api/entries/{old['id']}")
    delete(srv, f"/api/entries/{recent['id']}")
    back = iso(datetime.now(timezone.utc) - timedelta(days=40))
    sql_exec(srv, f"UPDATE entries SET deleted_at = '{back}' WHERE id = {old['id']}")
    assert in_trash(srv, "entry", old["id"])["deleted_at"] == back

    deadline = time.monotonic() + 15
    while in_trash(srv, "entry", old["id"]) is not None:
        assert time.monotonic() < deadline, "the expired entry was not purged within 15 s"
        time.sleep(0.5)
    assert count_rows(srv, "entries", f"id = {old['id']}") == 0
    assert count_rows(srv, "entry_files", f"entry_id = {old['id']}") == 0
    assert on_disk(srv, old_file) == 0
    assert on_disk(srv, old_photo) == 0
    rows = audit_rows(srv, "entry", old["id"])
    assert rows[0]["action"] == "purge", rows
    assert rows[0]["client_ip"] == "housekeeping"
    assert rows[0]["actor_user_id"] is None and rows[0]["actor_key_id"] is None
    # What is younger than the retention stays.
    assert in_trash(srv, "entry", recent["id"]) is not None
    assert on_disk(srv, recent_file) == 1
    assert "purge" not in [r["action"] for r in audit_rows(srv, "entry", recent["id"])]
