"""Photos: the photo of an entry (/api/entries/:id/photo, with the first photo ever uploaded
kept as /photo/original) and the cover photo of a group (/api/groups/:id/photo, admins
change it). JPEG, PNG and WebP only, sniffed from the bytes; stored under
JournalDataDir/photos."""

import hashlib
import os
import re
import struct
import uuid
import zlib

import pytest

from harness import assert_error, assert_json, assert_ok, uniq

NO_SUCH_ID = 9_000_000_000_000
ENTRY_PHOTO_KEYS = {"entry_id", "content_type", "size", "sha256", "created_at", "has_original"}
COVER_KEYS = {"group_id", "content_type", "size", "sha256", "created_at"}
ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
STORED_RE = re.compile(r"^photos/([0-9a-f]{2})/([0-9a-f]{32})$")


# ---- images (each call gives different bytes: stored files are found by their digest) -------
def png_bytes(width=2, height=1):
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    raw = b"".join(b"\x00" + bytes([10, 120, 240]) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"tEXt", b"Comment\x00" + uuid.uuid4().hex.encode())
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


# A baseline 1x1 greyscale JFIF; a COM segment makes each copy unique.
_JPEG_HEAD = bytes.fromhex("ffd8ffe000104a46494600010100000100010000")
_JPEG_BODY = bytes.fromhex(
    "ffdb004300" + "01" * 64
    + "ffc0000b080001000101011100"
    + "ffc4001f0000010501010101010100000000000000000102030405060708090a0b"
    + "ffc400b5100002010303020403050504040000017d01020300041105122131410613516107227114"
      "328191a1082342b1c11552d1f02433627282090a161718191a25262728292a3435363738393a4344"
      "45464748494a535455565758595a636465666768696a737475767778797a838485868788898a9293"
      "9495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7"
      "d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9fa"
    + "ffda0008010100003f00d2cf20ffd9")


def jpeg_bytes():
    comment = uuid.uuid4().hex.encode()
    return _JPEG_HEAD + b"\xff\xfe" + struct.pack(">H", len(comment) + 2) + comment + _JPEG_BODY


# A 1x1 lossless WebP (VP8L); an extra chunk at the end makes each copy unique.
_WEBP_VP8L = bytes.fromhex("2f00000010071011118888fe0700")  # 13 bytes + a pad byte


def webp_bytes():
    vp8l = _WEBP_VP8L[:13]
    body = b"WEBP" + b"VP8L" + struct.pack("<I", len(vp8l)) + vp8l + b"\x00"
    extra = uuid.uuid4().bytes
    body += b"XUID" + struct.pack("<I", len(extra)) + extra
    return b"RIFF" + struct.pack("<I", len(body)) + body


GIF = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00"
       b"\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")
PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
       b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")
TEXT = b"just some text, not an image\n"

IMAGES = {"png": (png_bytes, "image/png"), "jpg": (jpeg_bytes, "image/jpeg"),
          "webp": (webp_bytes, "image/webp")}


def sha(data):
    return hashlib.sha256(data).hexdigest()


# ---- helpers ---------------------------------------------------------------------------------
def create_entry(srv, group_id):
    r = srv.api("POST", "/api/entries", token=srv.admin_token,
                json={"student_name": uniq("Stu"), "group_id": group_id})
    return assert_json(r, 201)


def has_photo(srv, entry_id):
    e = assert_json(srv.api("GET", f"/api/entries/{entry_id}", token=srv.admin_token), 200)
    return e["has_photo"]


def post_photo(srv, path, data, token=None, ctype="application/octet-stream"):
    return srv.api("POST", path, token=token or srv.admin_token, data=data,
                   headers={"Content-Type": ctype})


def get(srv, path, token=None, headers=None, method="GET"):
    h = dict(headers or {})
    h["X-Auth-Token"] = token or srv.admin_token
    return srv.http.request(method, srv.base_url + path, headers=h, timeout=30)


def stored(srv, sub="photos"):
    out = {}
    base = srv.data_dir / sub
    if not base.exists():
        return out
    for dirpath, _, names in os.walk(base):
        for n in names:
            path = os.path.join(dirpath, n)
            with open(path, "rb") as f:
                out[os.path.relpath(path, srv.data_dir)] = hashlib.sha256(f.read()).hexdigest()
    return out


def count_stored(srv, data, sub="photos"):
    return sum(1 for d in stored(srv, sub).values() if d == sha(data))


def check_served(r, data, ctype, filename):
    assert r.status_code == 200, r.text
    assert r.content == data
    assert r.headers["Content-Type"].split(";")[0] == ctype
    assert r.headers["Content-Disposition"] == \
        f"inline; filename=\"{filename}\"; filename*=UTF-8''{filename}"
    assert r.headers["ETag"] == f'"{sha(data)}"'


def audit_actions(srv, entity_type, entity_id):
    r = srv.api("GET", "/api/audit", token=srv.admin_token,
                params={"entity_type": entity_type, "entity_id": str(entity_id), "limit": 100})
    return [row["action"] for row in assert_json(r, 200)["items"]]


@pytest.fixture
def world(server):
    ba, bb = server.create_branch(), server.create_branch()
    group = server.create_group(ba["id"])
    _, tok_a = server.create_tutor(branch_ids=[ba["id"]])
    _, tok_b = server.create_tutor(branch_ids=[bb["id"]])
    return {"ba": ba, "bb": bb, "group": group, "entry": create_entry(server, group["id"]),
            "tok_a": tok_a, "tok_b": tok_b}


# ---- entry photos --------------------------------------------------------------------------
def test_images_are_recognised_by_libmagic(tmp_path):
    """The builders above make what libmagic takes for the type (as the server sniffs it)."""
    import subprocess
    for ext, (make, ctype) in IMAGES.items():
        p = tmp_path / f"x.{ext}"
        p.write_bytes(make())
        out = subprocess.run(["file", "--brief", "--mime-type", str(p)], capture_output=True,
                             text=True, check=True).stdout.strip()
        assert out == ctype, (ext, out)


@pytest.mark.parametrize("first,second", [("png", "jpg"), ("jpg", "webp"), ("webp", "png")])
def test_entry_photo_lifecycle(server, world, first, second):
    eid = world["entry"]["id"]
    path = f"/api/entries/{eid}/photo"
    make1, type1 = IMAGES[first]
    make2, type2 = IMAGES[second]
    one, two = make1(), make2()
    assert has_photo(server, eid) is False
    assert_error(get(server, path), 404)
    assert_error(get(server, path + "/original"), 404)

    rec = assert_json(post_photo(server, path, one), 201)
    assert set(rec) == ENTRY_PHOTO_KEYS, rec
    assert rec["entry_id"] == eid and rec["content_type"] == type1
    assert rec["size"] == len(one) and rec["sha256"] == sha(one)
    assert rec["has_original"] is True and ISO_RE.match(rec["created_at"])
    assert has_photo(server, eid) is True
    check_served(get(server, path), one, type1, f"entry-{eid}.{first}")
    check_served(get(server, path + "/original"), one, type1, f"entry-{eid}-original.{first}")
    # The current photo and its original: two stored names (under photos/, not files/).
    names = [p for p, d in stored(server).items() if d == sha(one)]
    assert len(names) == 2 and all(STORED_RE.match(p) for p in names), names
    assert not any(d == sha(one) for d in stored(server, "files").values())

    rec2 = assert_json(post_photo(server, path, two), 200)
    assert set(rec2) == ENTRY_PHOTO_KEYS, rec2
    assert rec2["content_type"] == type2 and rec2["sha256"] == sha(two)
    assert rec2["size"] == len(two) and rec2["has_original"] is True
    assert has_photo(server, eid) is True
    check_served(get(server, path), two, type2, f"entry-{eid}.{second}")
    check_served(get(server, path + "/original"), one, type1, f"entry-{eid}-original.{first}")
    assert count_stored(server, one) == 1  # only the original is left of the first
    assert count_stored(server, two) == 1

    # A third photo replaces the current one again; the original stays the first.
    three = png_bytes()
    assert assert_json(post_photo(server, path, three), 200)["sha256"] == sha(three)
    check_served(get(server, path), three, "image/png", f"entry-{eid}.png")
    check_served(get(server, path + "/original"), one, type1, f"entry-{eid}-original.{first}")
    assert count_stored(server, two) == 0 and count_stored(server, three) == 1

    assert_ok(server.api("DELETE", path, token=server.admin_token))
    assert_error(get(server, path), 404)
    assert_error(get(server, path + "/original"), 404)
    assert has_photo(server, eid) is False
    for data in (one, two, three):
        assert count_stored(server, data) == 0
    assert_error(server.api("DELETE", path, token=server.admin_token), 404)
    assert audit_actions(server, "entry_photo", eid) == ["delete", "update", "update", "create"]

    # After a delete the next photo is a first one again, with a new original.
    four = jpeg_bytes()
    rec4 = assert_json(post_photo(server, path, four), 201)
    assert rec4["has_original"] is True
    check_served(get(server, path + "/original"), four, "image/jpeg",
                 f"entry-{eid}-original.jpg")


def test_photo_multipart_upload(server, world):
    eid = world["entry"]["id"]
    data = png_bytes()
    r = server.http.post(server.base_url + f"/api/entries/{eid}/photo",
                         files={"file": ("me.png", data, "image/png")},
                         headers={"X-Auth-Token": server.admin_token}, timeout=30)
    rec = assert_json(r, 201)
    assert rec["sha256"] == sha(data) and rec["content_type"] == "image/png"
    check_served(get(server, f"/api/entries/{eid}/photo"), data, "image/png", f"entry-{eid}.png")


@pytest.mark.parametrize("data,sniffed", [(GIF, "image/gif"), (PDF, "application/pdf"),
                                          (TEXT, "text/plain")])
def test_non_photo_types_are_415(server, world, data, sniffed):
    eid = world["entry"]["id"]
    path = f"/api/entries/{eid}/photo"
    before = stored(server)
    assert_error(post_photo(server, path, data, ctype="image/png"), 415, sniffed)
    assert_error(get(server, path), 404)
    assert has_photo(server, eid) is False
    assert stored(server) == before

    first = png_bytes()
    assert_json(post_photo(server, path, first), 201)
    before = stored(server)
    assert_error(post_photo(server, path, data, ctype="image/jpeg"), 415, sniffed)
    check_served(get(server, path), first, "image/png", f"entry-{eid}.png")
    check_served(get(server, path + "/original"), first, "image/png",
                 f"entry-{eid}-original.png")
    assert stored(server) == before
    assert has_photo(server, eid) is True
    assert audit_actions(server, "entry_photo", eid) == ["create"]


def test_empty_photo_is_400(server, world):
    eid = world["entry"]["id"]
    before = stored(server)
    assert_error(post_photo(server, f"/api/entries/{eid}/photo", b""), 400)
    assert stored(server) == before
    assert has_photo(server, eid) is False


def test_photo_conditional_request(server, world):
    eid = world["entry"]["id"]
    data = jpeg_bytes()
    assert_json(post_photo(server, f"/api/entries/{eid}/photo", data), 201)
    r = get(server, f"/api/entries/{eid}/photo", headers={"If-None-Match": f'"{sha(data)}"'})
    assert r.status_code == 304 and r.content == b""
    r = get(server, f"/api/entries/{eid}/photo", headers={"Range": "bytes=0-3"})
    assert r.status_code == 206 and r.content == data[:4]
    r = get(server, f"/api/entries/{eid}/photo", method="HEAD")
    assert r.status_code == 200 and r.content == b""
    assert r.headers["Content-Length"] == str(len(data))


def test_photos_of_unknown_or_trashed_entries_are_404(server, world):
    for method in ("GET", "DELETE"):
        assert_error(server.api(method, f"/api/entries/{NO_SUCH_ID}/photo",
                                token=server.admin_token), 404)
    assert_error(get(server, f"/api/entries/{NO_SUCH_ID}/photo/original"), 404)
    assert_error(post_photo(server, f"/api/entries/{NO_SUCH_ID}/photo", png_bytes()), 404)
    eid = world["entry"]["id"]
    data = png_bytes()
    assert_json(post_photo(server, f"/api/entries/{eid}/photo", data), 201)
    assert_ok(server.api("DELETE", f"/api/entries/{eid}", token=server.admin_token))
    before = stored(server)
    assert_error(get(server, f"/api/entries/{eid}/photo"), 404)
    assert_error(get(server, f"/api/entries/{eid}/photo/original"), 404)
    assert_error(post_photo(server, f"/api/entries/{eid}/photo", png_bytes()), 404)
    assert_error(server.api("DELETE", f"/api/entries/{eid}/photo", token=server.admin_token), 404)
    assert stored(server) == before
    assert count_stored(server, data) == 2  # kept in the trash, for a restore


def test_entry_photo_scope(server, world):
    eid = world["entry"]["id"]
    path = f"/api/entries/{eid}/photo"
    data = png_bytes()
    # A tutor of the entry's branch may do everything with the photo.
    assert_json(post_photo(server, path, data, token=world["tok_a"]), 201)
    check_served(get(server, path, token=world["tok_a"]), data, "image/png", f"entry-{eid}.png")
    assert get(server, path + "/original", token=world["tok_a"]).content == data
    # A tutor of another branch does not see the entry.
    before = stored(server)
    tok = world["tok_b"]
    assert_error(get(server, path, token=tok), 404)
    assert_error(get(server, path + "/original", token=tok), 404)
    assert_error(post_photo(server, path, png_bytes(), token=tok), 404)
    assert_error(server.api("DELETE", path, token=tok), 404)
    assert stored(server) == before
    check_served(get(server, path), data, "image/png", f"entry-{eid}.png")
    # No session at all.
    assert_error(server.api("GET", path), 401)
    assert_error(server.api("POST", path, data=png_bytes()), 401)
    assert_error(server.api("DELETE", path), 401)
    assert_ok(server.api("DELETE", path, token=world["tok_a"]))
    assert count_stored(server, data) == 0


# ---- group covers ----------------------------------------------------------------------------
def test_group_cover(server, world):
    gid = world["group"]["id"]
    path = f"/api/groups/{gid}/photo"
    one, two = png_bytes(), webp_bytes()
    assert_error(get(server, path), 404)

    rec = assert_json(post_photo(server, path, one), 201)
    assert set(rec) == COVER_KEYS, rec
    assert rec["group_id"] == gid and rec["content_type"] == "image/png"
    assert rec["size"] == len(one) and rec["sha256"] == sha(one)
    check_served(get(server, path), one, "image/png", f"group-{gid}.png")
    assert count_stored(server, one) == 1  # no original for covers

    rec2 = assert_json(post_photo(server, path, two), 200)
    assert set(rec2) == COVER_KEYS and rec2["content_type"] == "image/webp"
    check_served(get(server, path), two, "image/webp", f"group-{gid}.webp")
    assert count_stored(server, one) == 0 and count_stored(server, two) == 1
    assert_error(get(server, path + "/original"), 404)  # no such route for groups

    before = stored(server)
    assert_error(post_photo(server, path, GIF), 415, "image/gif")
    assert stored(server) == before
    check_served(get(server, path), two, "image/webp", f"group-{gid}.webp")

    assert_ok(server.api("DELETE", path, token=server.admin_token))
    assert_error(get(server, path), 404)
    assert count_stored(server, two) == 0
    assert_error(server.api("DELETE", path, token=server.admin_token), 404)
    assert audit_actions(server, "group_cover", gid) == ["delete", "update", "create"]


def test_group_cover_is_changed_by_admins_only(server, world):
    gid = world["group"]["id"]
    path = f"/api/groups/{gid}/photo"
    data = jpeg_bytes()
    assert_json(post_photo(server, path, data), 201)
    before = stored(server)
    # The tutor of the group's branch may look at it, not change it.
    tok = world["tok_a"]
    check_served(get(server, path, token=tok), data, "image/jpeg", f"group-{gid}.jpg")
    assert_error(post_photo(server, path, png_bytes(), token=tok), 403)
    assert_error(server.api("DELETE", path, token=tok), 403)
    # A tutor of another branch does not see it (and may not change it either).
    tok = world["tok_b"]
    assert_error(get(server, path, token=tok), 404)
    assert_error(post_photo(server, path, png_bytes(), token=tok), 403)
    assert_error(server.api("DELETE", path, token=tok), 403)
    assert_error(server.api("GET", path), 401)
    assert stored(server) == before
    check_served(get(server, path), data, "image/jpeg", f"group-{gid}.jpg")
    assert audit_actions(server, "group_cover", gid) == ["create"]


def test_cover_of_unknown_or_deleted_group_is_404(server, world):
    path = f"/api/groups/{NO_SUCH_ID}/photo"
    assert_error(get(server, path), 404)
    assert_error(post_photo(server, path, png_bytes()), 404)
    assert_error(server.api("DELETE", path, token=server.admin_token), 404)
    g = server.create_group(world["ba"]["id"])
    data = png_bytes()
    assert_json(post_photo(server, f"/api/groups/{g['id']}/photo", data), 201)
    assert_ok(server.api("DELETE", f"/api/groups/{g['id']}", token=server.admin_token))
    assert_error(get(server, f"/api/groups/{g['id']}/photo"), 404)
    assert_error(post_photo(server, f"/api/groups/{g['id']}/photo", png_bytes()), 404)
    assert count_stored(server, data) == 1
