"""Files of journal entries: /api/entries/:id/files* and GET /api/v1/entries/:id/files.

Uploads arrive as a raw body (name from X-File-Name or ?name=) or as multipart/form-data (the
field "file"); the type is sniffed from the bytes and checked against JournalUploadTypes; the
bytes are stored under JournalDataDir/files with a random name."""

import hashlib
import os
import re
import struct
import time
import uuid
import zlib

import pytest

from harness import assert_error, assert_json, assert_ok, uniq

NO_SUCH_ID = 9_000_000_000_000
FILE_KEYS = {"id", "entry_id", "name", "size", "content_type", "sha256", "created_at"}
ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
STORED_RE = re.compile(r"^files/([0-9a-f]{2})/([0-9a-f]{32})$")


# ---- payloads (unique bytes per call, so a stored file can be found by its digest) ----------
def pdf_bytes(extra=b""):
    return (b"%PDF-1.4\n% " + uuid.uuid4().hex.encode() + b"\n"
            b"1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
            b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"
            b"trailer<</Root 1 0 R>>\n" + extra + b"%%EOF\n")


def png_bytes():
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    raw = b"\x00" + bytes([200, 30, 30])
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"tEXt", b"Comment\x00" + uuid.uuid4().hex.encode())
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def text_bytes():
    return f"plain notes {uuid.uuid4().hex}\nsecond line\n".encode()


# A 64-bit ELF executable header (libmagic: application/x-executable).
ELF = (b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + struct.pack("<HHI", 2, 62, 1) + b"\x00" * 40)
SHELL = b"#!/bin/sh\necho hello\nrm -rf /tmp/nothing-here\n"  # text/x-shellscript
HTML = b"<!DOCTYPE html><html><body><script>alert(1)</script></body></html>\n"  # text/html


def sha(data):
    return hashlib.sha256(data).hexdigest()


# ---- helpers ---------------------------------------------------------------------------------
def create_entry(srv, group_id, token=None):
    r = srv.api("POST", "/api/entries", token=token or srv.admin_token,
                json={"student_name": uniq("Stu"), "group_id": group_id})
    return assert_json(r, 201)


def get_entry(srv, entry_id):
    return assert_json(srv.api("GET", f"/api/entries/{entry_id}", token=srv.admin_token), 200)


def files_path(entry_id, file_id=None):
    p = f"/api/entries/{entry_id}/files"
    return p if file_id is None else f"{p}/{file_id}"


def upload_raw(srv, entry_id, data, name="file.pdf", ctype="application/pdf", token=None,
               params=None, headers=None):
    h = {}
    if ctype is not None:
        h["Content-Type"] = ctype
    if name is not None:
        h["X-File-Name"] = name
    h.update(headers or {})
    return srv.api("POST", files_path(entry_id), token=token or srv.admin_token, data=data,
                   headers=h, params=params)


def upload_multipart(srv, entry_id, files, data=None, token=None):
    """A multipart/form-data upload exactly as requests builds it."""
    return srv.http.post(srv.base_url + files_path(entry_id), files=files, data=data,
                         headers={"X-Auth-Token": token or srv.admin_token}, timeout=30)


def post_body(srv, path, body, ctype, token=None, extra=None):
    h = {"Content-Type": ctype, "X-Auth-Token": token or srv.admin_token}
    h.update(extra or {})
    return srv.http.post(srv.base_url + path, data=body, headers=h, timeout=30)


def list_files(srv, entry_id, token=None):
    r = srv.api("GET", files_path(entry_id), token=token or srv.admin_token)
    items = assert_json(r, 200)
    assert isinstance(items, list), r.text
    assert int(r.headers["X-Total-Count"]) == len(items), r.headers
    return items


def download(srv, entry_id, file_id, token=None, headers=None, method="GET"):
    h = dict(headers or {})
    h["X-Auth-Token"] = token or srv.admin_token
    return srv.http.request(method, srv.base_url + files_path(entry_id, file_id), headers=h,
                            timeout=30)


def stored(srv, sub="files"):
    """{relative path: sha256} of every file under data_dir/sub."""
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


def stored_with(srv, digest, sub="files"):
    return sorted(p for p, d in stored(srv, sub).items() if d == digest)


def tmp_files(srv):
    t = srv.data_dir / "tmp"
    return sorted(os.listdir(t)) if t.exists() else []


def wait_tmp_empty(srv, timeout=5.0):
    """The request pool removes upload temp files just after the answer went out."""
    deadline = time.monotonic() + timeout
    while tmp_files(srv) and time.monotonic() < deadline:
        time.sleep(0.05)
    return tmp_files(srv)


def tree(root):
    out = set()
    for dirpath, _, names in os.walk(root):
        for n in names:
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


def audit(srv, entity_id):
    r = srv.api("GET", "/api/audit", token=srv.admin_token,
                params={"entity_type": "entry_file", "entity_id": str(entity_id), "limit": 100})
    return assert_json(r, 200)["items"]


def create_key(srv, scopes=("read",), **fields):
    body = {"name": uniq("fkey"), "scopes": list(scopes)}
    body.update(fields)
    return assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token, json=body), 201)


def check_record(rec, entry_id, name, data, ctype):
    assert set(rec) == FILE_KEYS, rec
    assert isinstance(rec["id"], int) and rec["id"] > 0
    assert rec["entry_id"] == entry_id
    assert rec["name"] == name
    assert rec["size"] == len(data)
    assert rec["content_type"] == ctype
    assert rec["sha256"] == sha(data)
    assert ISO_RE.match(rec["created_at"]), rec["created_at"]


@pytest.fixture
def world(server):
    """Branch A with a group, an entry and a tutor; branch B with a tutor."""
    ba, bb = server.create_branch(), server.create_branch()
    group = server.create_group(ba["id"])
    tutor_a, tok_a = server.create_tutor(branch_ids=[ba["id"]])
    tutor_b, tok_b = server.create_tutor(branch_ids=[bb["id"]])
    return {"ba": ba, "bb": bb, "group": group, "entry": create_entry(server, group["id"]),
            "tok_a": tok_a, "tok_b": tok_b}


# ---- upload ----------------------------------------------------------------------------------
def test_raw_upload_record_listing_and_stored_bytes(server, world):
    eid = world["entry"]["id"]
    data = pdf_bytes()
    before = stored(server)
    rec = assert_json(upload_raw(server, eid, data, name="report.pdf"), 201)
    check_record(rec, eid, "report.pdf", data, "application/pdf")
    assert list_files(server, eid) == [rec]
    assert get_entry(server, eid)["files_count"] == 1

    # Stored once under data_dir/files with a random name, the bytes unchanged.
    new = {p: d for p, d in stored(server).items() if p not in before}
    assert list(new.values()) == [sha(data)], new
    path = next(iter(new))
    m = STORED_RE.match(path)
    assert m and m.group(2).startswith(m.group(1)), path
    assert "report" not in path
    assert (server.data_dir / path).read_bytes() == data
    assert wait_tmp_empty(server) == []

    r = download(server, eid, rec["id"])
    assert r.status_code == 200, r.text
    assert r.content == data
    assert r.headers["Content-Type"].split(";")[0] == "application/pdf"
    assert r.headers["Content-Disposition"] == \
        "attachment; filename=\"report.pdf\"; filename*=UTF-8''report.pdf"
    assert r.headers["ETag"] == f'"{sha(data)}"'
    assert int(r.headers["Content-Length"]) == len(data)


def test_name_from_query_parameter(server, world):
    eid = world["entry"]["id"]
    data = text_bytes()
    r = upload_raw(server, eid, data, name=None, ctype="text/plain",
                   params={"name": "notes from class.txt"})
    rec = assert_json(r, 201)
    check_record(rec, eid, "notes from class.txt", data, "text/plain")
    assert download(server, eid, rec["id"]).content == data


def test_percent_encoded_utf8_name(server, world):
    eid = world["entry"]["id"]
    data = pdf_bytes()
    rec = assert_json(upload_raw(server, eid, data, name="R%C3%A9sum%C3%A9.pdf"), 201)
    check_record(rec, eid, "Résumé.pdf", data, "application/pdf")
    assert list_files(server, eid)[0]["name"] == "Résumé.pdf"
    r = download(server, eid, rec["id"])
    assert r.status_code == 200 and r.content == data
    cd = r.headers["Content-Disposition"]
    assert cd.startswith("attachment; ")
    assert "filename*=UTF-8''R%C3%A9sum%C3%A9.pdf" in cd, cd
    fallback = re.search(r'filename="([^"]*)"', cd).group(1)
    assert fallback.isascii() and fallback.endswith(".pdf"), cd


def test_name_with_quotes_cannot_break_the_header(server, world):
    eid = world["entry"]["id"]
    data = pdf_bytes()
    raw = 'a"; filename=evil.sh; x="\\b.pdf'
    encoded = "".join(c if c.isalnum() or c in "._-" else f"%{ord(c):02X}" for c in raw)
    rec = assert_json(upload_raw(server, eid, data, name=encoded), 201)
    assert rec["name"] == "b.pdf"  # the backslash counts as a directory separator
    rec = assert_json(upload_raw(server, eid, data, name="a%22%3B%20filename%3Devil.sh.pdf"), 201)
    assert rec["name"] == 'a"; filename=evil.sh.pdf'
    cd = download(server, eid, rec["id"]).headers["Content-Disposition"]
    assert cd == ('attachment; filename="a_; filename=evil.sh.pdf"; '
                  "filename*=UTF-8''a%22%3B%20filename%3Devil.sh.pdf"), cd


def test_x_file_name_wins_over_query(server, world):
    eid = world["entry"]["id"]
    data = text_bytes()
    rec = assert_json(upload_raw(server, eid, data, name="header.txt", ctype="text/plain",
                                 params={"name": "query.txt"}), 201)
    assert rec["name"] == "header.txt"


def test_multipart_upload_as_requests_sends_it(server, world):
    eid = world["entry"]["id"]
    data = pdf_bytes()
    r = upload_multipart(server, eid, files={"file": ("scan.pdf", data, "application/pdf")},
                         data={"note": "ignored field", "other": "x"})
    rec = assert_json(r, 201)
    check_record(rec, eid, "scan.pdf", data, "application/pdf")
    assert stored_with(server, sha(data)) != []
    d = download(server, eid, rec["id"])
    assert d.status_code == 200 and d.content == data  # no multipart framing kept


def test_multipart_binary_bytes_survive(server, world):
    """Bytes that look like delimiters or CRLFs inside the part are kept as they are."""
    eid = world["entry"]["id"]
    data = pdf_bytes(extra=b"\r\n--\r\n--boundary\r\n\r\n" + bytes(range(256)) + b"\r\n")
    rec = assert_json(upload_multipart(server, eid,
                                       files={"file": ("bin.pdf", data, "application/pdf")}), 201)
    assert rec["sha256"] == sha(data) and rec["size"] == len(data)
    assert download(server, eid, rec["id"]).content == data


def test_content_type_is_sniffed(server, world):
    eid = world["entry"]["id"]
    pdf = pdf_bytes()
    rec = assert_json(upload_raw(server, eid, pdf, name="doc.pdf", ctype="text/plain"), 201)
    assert rec["content_type"] == "application/pdf"
    png = png_bytes()
    rec2 = assert_json(upload_raw(server, eid, png, name="x.pdf", ctype="application/pdf"), 201)
    assert rec2["content_type"] == "image/png"
    assert rec2["name"] == "x.pdf"
    r = download(server, eid, rec2["id"])
    assert r.headers["Content-Type"].split(";")[0] == "image/png"
    assert r.headers.get("X-Content-Type-Options") == "nosniff"
    # Multipart: the part's declared type does not count either.
    mp = assert_json(upload_multipart(server, eid,
                                      files={"file": ("y.txt", png_bytes(), "text/plain")}), 201)
    assert mp["content_type"] == "image/png"
    types = {f["id"]: f["content_type"] for f in list_files(server, eid)}
    assert types == {rec["id"]: "application/pdf", rec2["id"]: "image/png",
                     mp["id"]: "image/png"}


@pytest.mark.parametrize("label,data,sniffed", [
    ("elf", ELF, "application/x-executable"),
    ("shell", SHELL, "text/x-shellscript"),
    ("html", HTML, "text/html"),
])
def test_type_not_allowed_is_415_and_nothing_stored(server, world, label, data, sniffed):
    eid = world["entry"]["id"]
    keep = assert_json(upload_raw(server, eid, pdf_bytes()), 201)
    before_disk = stored(server)
    for r in (upload_raw(server, eid, data, name=f"{label}.txt", ctype="text/plain"),
              upload_multipart(server, eid, files={"file": (f"{label}.pdf", data,
                                                            "application/pdf")})):
        body = assert_error(r, 415, sniffed)
    assert "application/pdf" in body["error"]  # the allowed types are named
    assert list_files(server, eid) == [keep]
    assert get_entry(server, eid)["files_count"] == 1
    assert stored(server) == before_disk
    assert wait_tmp_empty(server) == []


def test_empty_body_is_400(server, world):
    eid = world["entry"]["id"]
    before = stored(server)
    assert_error(upload_raw(server, eid, b"", name="empty.pdf"), 400, "empty")
    assert_error(upload_multipart(server, eid, files={"file": ("empty.pdf", b"",
                                                               "application/pdf")}), 400, "empty")
    assert list_files(server, eid) == []
    assert stored(server) == before


def test_missing_name_is_400(server, world):
    eid = world["entry"]["id"]
    before = stored(server)
    assert_error(upload_raw(server, eid, pdf_bytes(), name=None), 400, "name")
    assert_error(upload_raw(server, eid, pdf_bytes(), name=None, params={"name": ""}), 400,
                 "name")
    assert list_files(server, eid) == []
    assert stored(server) == before


@pytest.mark.parametrize("name", [
    "%20%20%09",        # blank after trimming
    "dir/",             # nothing after the directory part
    "a%01b.pdf",        # a control character
    "a%0Ab.pdf",        # a line feed
    "a%C2%85b.pdf",     # a C1 control character (NEL)
    "%FF%FE.pdf",       # not UTF-8
    "bad%zzname.pdf",   # broken percent-encoding
    "a%00b.pdf",        # NUL
    "x" * 252 + ".pdf", # 256 characters
])
def test_bad_names_are_400(server, world, name):
    eid = world["entry"]["id"]
    before = stored(server)
    assert_error(upload_raw(server, eid, pdf_bytes(), name=name), 400)
    assert list_files(server, eid) == []
    assert stored(server) == before


def test_longest_name_is_accepted(server, world):
    eid = world["entry"]["id"]
    name = "é" * 251 + ".pdf"  # 255 characters, 506 bytes
    encoded = "".join(f"%{b:02X}" for b in name.encode())
    rec = assert_json(upload_raw(server, eid, pdf_bytes(), name=encoded), 201)
    assert rec["name"] == name


# ---- Unicode format characters (general category Cf) ------------------------------------------
# Invisible, and the bidirectional ones reorder the rest of the name on display:
# "invoice\u202efdp.exe" shows as "invoiceexe.pdf".
FORMAT_CHARS = ["\u202e", "\u200b", "\u2066", "\ufeff", "\u00ad", "\u061c", "\U000e0041"]


def pct(name):
    return "".join(f"%{b:02X}" for b in name.encode())


def multipart_named(disposition_name):
    """A multipart body whose file part carries the given (already encoded) filename param."""
    data = pdf_bytes()
    return (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; " + disposition_name
            + b"\r\nContent-Type: application/pdf\r\n\r\n" + data + b"\r\n--XyZ--\r\n")


def uploads_named(server, eid, name):
    """The same PDF uploaded under `name` in each way a client can name a file."""
    mp = "multipart/form-data; boundary=XyZ"
    return {
        "X-File-Name": upload_raw(server, eid, pdf_bytes(), name=pct(name)),
        "?name=": upload_raw(server, eid, pdf_bytes(), name=None, params={"name": name}),
        "filename": post_body(server, files_path(eid), multipart_named(
            b'filename="' + name.encode() + b'"'), mp),
        "filename*": post_body(server, files_path(eid), multipart_named(
            b"filename*=UTF-8''" + pct(name).encode()), mp),
    }


@pytest.mark.parametrize("ch", FORMAT_CHARS, ids=lambda c: f"U+{ord(c):04X}")
def test_format_characters_in_names_are_400(server, world, ch):
    eid = world["entry"]["id"]
    before = stored(server)
    for how, r in uploads_named(server, eid, f"invoice{ch}fdp.exe").items():
        body = assert_error(r, 400, "name", f"U+{ord(ch):04X}")
        assert "format" in body["error"], (how, body)
    assert list_files(server, eid) == []
    assert stored(server) == before


def test_non_ascii_names_without_format_characters_are_accepted(server, world):
    eid = world["entry"]["id"]
    # accents, CJK, Cyrillic, Hebrew and Arabic letters, an emoji, a no-break space, a dash
    name = "R\u00e9sum\u00e9 \u65e5\u672c \u0436 \u05e9 \u0639 \U0001f600\u00a0\u2013 v2.pdf"
    for how, r in uploads_named(server, eid, name).items():
        assert assert_json(r, 201)["name"] == name, how
    assert [f["name"] for f in list_files(server, eid)] == [name] * 4


def test_multipart_without_file_field_is_400(server, world):
    eid = world["entry"]["id"]
    before = stored(server)
    r = upload_multipart(server, eid, files={"attachment": ("a.pdf", pdf_bytes(),
                                                            "application/pdf")},
                         data={"note": "x"})
    assert_error(r, 400, "file")
    r = post_body(server, files_path(eid),
                  b"--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n"
                  b"hello\r\n--XyZ--\r\n", "multipart/form-data; boundary=XyZ")
    assert_error(r, 400, "file")
    assert list_files(server, eid) == []
    assert stored(server) == before


@pytest.mark.parametrize("body,ctype", [
    (b"this is not multipart at all", "multipart/form-data; boundary=XyZ"),
    (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"\r\n\r\n"
     b"%PDF-1.4 no closing delimiter", "multipart/form-data; boundary=XyZ"),
    (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"\r\n"
     b"no blank line, no end", "multipart/form-data; boundary=XyZ"),
    (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nx\r\n--XyZ--\r\n",
     "multipart/form-data"),  # no boundary parameter
    (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nx\r\n--XyZ--\r\n",
     "multipart/form-data; boundary=" + "b" * 71),  # boundary too long
])
def test_malformed_multipart_is_400(server, world, body, ctype):
    eid = world["entry"]["id"]
    before = stored(server)
    r = post_body(server, files_path(eid), body, ctype, extra={"X-File-Name": "a.pdf"})
    assert_error(r, 400)
    assert list_files(server, eid) == []
    assert stored(server) == before
    assert wait_tmp_empty(server) == []


def test_upload_types_directive(fresh_server):
    """JournalUploadTypes replaces the default list; several lines add up; case is ignored."""
    srv = fresh_server("JournalUploadTypes text/plain\nJournalUploadTypes IMAGE/png text/x-shellscript")
    eid = create_entry(srv, srv.create_group(srv.create_branch()["id"])["id"])["id"]
    for data, sniffed in ((pdf_bytes(), "application/pdf"), (HTML, "text/html")):
        body = assert_error(upload_raw(srv, eid, data, name="x.pdf"), 415, sniffed)
        for allowed in ("text/plain", "image/png", "text/x-shellscript"):
            assert allowed in body["error"].lower(), body
        assert "application/pdf" not in body["error"].split("allowed")[1], body
    made = [assert_json(upload_raw(srv, eid, data, name=name, ctype=None), 201)
            for data, name in ((text_bytes(), "a.txt"), (png_bytes(), "b.png"), (SHELL, "c.sh"))]
    assert [f["content_type"] for f in made] == ["text/plain", "image/png", "text/x-shellscript"]
    assert list_files(srv, eid) == made
    # Photos keep their own fixed types, whatever this list says.
    assert_json(srv.api("POST", f"/api/entries/{eid}/photo", token=srv.admin_token,
                        data=png_bytes()), 201)
    assert_error(srv.api("POST", f"/api/entries/{eid}/photo", token=srv.admin_token,
                         data=text_bytes()), 415)


def test_upload_over_the_cap_is_413(fresh_server):
    srv = fresh_server("JournalMaxUploadSize 1K")
    b = srv.create_branch()
    g = srv.create_group(b["id"])
    eid = create_entry(srv, g["id"])["id"]
    big = pdf_bytes(extra=b"%" + b"x" * 2048 + b"\n")
    assert len(big) > 2048
    before = stored(srv)
    assert_error(upload_raw(srv, eid, big, name="big.pdf"), 413)
    # Without Content-Length (chunked): the cap applies while the body streams in.

    def chunks():
        for i in range(0, len(big), 256):
            yield big[i:i + 256]
    assert_error(srv.api("POST", files_path(eid), token=srv.admin_token, data=chunks(),
                         headers={"Content-Type": "application/pdf", "X-File-Name": "big.pdf"}),
                 413)
    assert_error(upload_multipart(srv, eid, files={"file": ("big.pdf", big, "application/pdf")}),
                 413)
    assert_error(srv.api("POST", f"/api/entries/{eid}/photo", token=srv.admin_token,
                         data=png_bytes() + b"\x00" * 2048), 413)
    assert list_files(srv, eid) == []
    assert stored(srv) == before
    assert wait_tmp_empty(srv) == []
    # Just under the cap is fine.
    small = pdf_bytes()
    assert len(small) < 1024
    rec = assert_json(upload_raw(srv, eid, small, name="small.pdf"), 201)
    assert rec["size"] == len(small)
    assert [f["id"] for f in list_files(srv, eid)] == [rec["id"]]


@pytest.mark.parametrize("raw,label", [
    ("../../etc/passwd", "passwd"),
    ("..%2F..%2F..%2Ftmp%2Fjr-evil.txt", "jr-evil.txt"),
    ("..\\..\\windows\\evil.txt", "evil.txt"),
    ("/absolute/path/abs.txt", "abs.txt"),
])
def test_path_in_the_name_is_only_a_label(server, world, raw, label):
    eid = world["entry"]["id"]
    data = text_bytes()
    before_root = tree(server.root)
    rec = assert_json(upload_raw(server, eid, data, name=raw, ctype="text/plain"), 201)
    assert rec["name"] == label
    assert wait_tmp_empty(server) == []
    # The one new file is the stored copy under data_dir/files, with a random name.
    new = {p for p in tree(server.root) - before_root
           if not p.startswith("logs/") and not p.startswith("data/journal.db")}
    assert len(new) == 1, new
    rel = os.path.relpath(server.root / next(iter(new)), server.data_dir)
    assert STORED_RE.match(rel), rel
    assert (server.data_dir / rel).read_bytes() == data
    assert not os.path.exists("/tmp/jr-evil.txt")
    r = download(server, eid, rec["id"])
    assert r.content == data
    assert r.headers["Content-Disposition"].startswith(f'attachment; filename="{label}";')


def test_multipart_filename_with_a_path_is_only_a_label(server, world):
    eid = world["entry"]["id"]
    data = text_bytes()
    rec = assert_json(upload_multipart(server, eid, files={
        "file": ("../../etc/cron.d/evil.txt", data, "text/plain")}), 201)
    assert rec["name"] == "evil.txt"
    assert not os.path.exists("/etc/cron.d/evil.txt")
    assert len(stored_with(server, sha(data))) == 1


# ---- list --------------------------------------------------------------------------------------
def test_list_array_and_v1_envelope(server, world):
    eid = world["entry"]["id"]
    assert list_files(server, eid) == []
    a = assert_json(upload_raw(server, eid, pdf_bytes(), name="a.pdf"), 201)
    b = assert_json(upload_raw(server, eid, text_bytes(), name="b.txt", ctype="text/plain"), 201)
    assert list_files(server, eid) == [a, b]  # by id
    r = server.api("GET", files_path(eid), token=server.admin_token,
                   params={"limit": 1, "offset": 1})
    assert assert_json(r, 200) == [b] and r.headers["X-Total-Count"] == "2"

    key = create_key(server)
    r = server.api("GET", f"/api/v1/entries/{eid}/files", headers={"X-Api-Key": key["key"]})
    env = assert_json(r, 200)
    assert env == {"items": [a, b], "total": 2, "limit": 50, "offset": 0}
    r = server.api("GET", f"/api/v1/entries/{eid}/files", headers={"X-Api-Key": key["key"]},
                   params={"limit": 1})
    assert assert_json(r, 200) == {"items": [a], "total": 2, "limit": 1, "offset": 0}
    # Files of other entries are not listed.
    other = create_entry(server, world["group"]["id"])
    assert list_files(server, other["id"]) == []


def test_unknown_or_trashed_entry_is_404(server, world):
    for path in (files_path(NO_SUCH_ID), files_path(NO_SUCH_ID, 1)):
        assert_error(server.api("GET", path, token=server.admin_token), 404)
    assert_error(upload_raw(server, NO_SUCH_ID, pdf_bytes()), 404)
    assert_error(server.api("DELETE", files_path(NO_SUCH_ID, 1), token=server.admin_token), 404)
    eid = world["entry"]["id"]
    assert_error(server.api("GET", files_path(eid, NO_SUCH_ID), token=server.admin_token), 404)
    assert_error(server.api("DELETE", files_path(eid, NO_SUCH_ID), token=server.admin_token),
                 404)
    # An entry in the trash has no files to show or take.
    rec = assert_json(upload_raw(server, eid, pdf_bytes()), 201)
    assert_ok(server.api("DELETE", f"/api/entries/{eid}", token=server.admin_token))
    before = stored(server)
    assert_error(server.api("GET", files_path(eid), token=server.admin_token), 404)
    assert_error(server.api("GET", files_path(eid, rec["id"]), token=server.admin_token), 404)
    assert_error(upload_raw(server, eid, pdf_bytes()), 404)
    assert_error(server.api("DELETE", files_path(eid, rec["id"]), token=server.admin_token), 404)
    assert stored(server) == before
    assert stored_with(server, rec["sha256"]) != []  # kept for a restore


# ---- download ----------------------------------------------------------------------------------
def test_conditional_range_and_head(server, world):
    eid = world["entry"]["id"]
    data = pdf_bytes()
    rec = assert_json(upload_raw(server, eid, data, name="cond.pdf"), 201)
    etag = f'"{rec["sha256"]}"'

    r = download(server, eid, rec["id"], headers={"If-None-Match": etag})
    assert r.status_code == 304, r.text
    assert r.content == b""
    r = download(server, eid, rec["id"], headers={"If-None-Match": '"' + "0" * 64 + '"'})
    assert r.status_code == 200 and r.content == data

    r = download(server, eid, rec["id"], headers={"Range": "bytes=0-9"})
    assert r.status_code == 206, r.text
    assert r.content == data[:10]
    assert r.headers["Content-Range"] == f"bytes 0-9/{len(data)}"
    assert r.headers["Content-Length"] == "10"
    r = download(server, eid, rec["id"], headers={"Range": "bytes=-5"})
    assert r.status_code == 206 and r.content == data[-5:]
    r = download(server, eid, rec["id"], headers={"Range": "bytes=10-", "If-Range": etag})
    assert r.status_code == 206 and r.content == data[10:]
    r = download(server, eid, rec["id"], headers={"Range": f"bytes={len(data) + 10}-"})
    assert r.status_code == 416, r.status_code

    r = download(server, eid, rec["id"], method="HEAD")
    assert r.status_code == 200
    assert r.content == b""
    assert r.headers["Content-Length"] == str(len(data))
    assert r.headers["ETag"] == etag
    assert r.headers["Content-Type"].split(";")[0] == "application/pdf"
    assert r.headers["Content-Disposition"].startswith('attachment; filename="cond.pdf"')
    assert "Last-Modified" in r.headers


# ---- delete ------------------------------------------------------------------------------------
def test_delete_file(server, world):
    eid = world["entry"]["id"]
    data, other_data = pdf_bytes(), pdf_bytes()
    rec = assert_json(upload_raw(server, eid, data, name="gone.pdf"), 201)
    other = assert_json(upload_raw(server, eid, other_data, name="stays.pdf"), 201)
    assert len(stored_with(server, sha(data))) == 1
    assert get_entry(server, eid)["files_count"] == 2

    assert_ok(server.api("DELETE", files_path(eid, rec["id"]), token=server.admin_token))
    assert_error(server.api("GET", files_path(eid, rec["id"]), token=server.admin_token), 404)
    assert list_files(server, eid) == [other]
    assert get_entry(server, eid)["files_count"] == 1
    assert stored_with(server, sha(data)) == []
    assert len(stored_with(server, sha(other_data))) == 1
    assert download(server, eid, other["id"]).content == other_data
    assert_error(server.api("DELETE", files_path(eid, rec["id"]), token=server.admin_token), 404)


def test_another_entrys_file_id_is_404(server, world):
    e1 = world["entry"]["id"]
    e2 = create_entry(server, world["group"]["id"])["id"]
    data = pdf_bytes()
    rec = assert_json(upload_raw(server, e1, data), 201)
    assert_error(server.api("GET", files_path(e2, rec["id"]), token=server.admin_token), 404)
    assert download(server, e2, rec["id"], method="HEAD").status_code == 404
    assert_error(server.api("DELETE", files_path(e2, rec["id"]), token=server.admin_token), 404)
    assert list_files(server, e1) == [rec]
    assert download(server, e1, rec["id"]).content == data
    assert len(stored_with(server, sha(data))) == 1


# ---- access ------------------------------------------------------------------------------------
def test_without_session_is_401(server, world):
    eid = world["entry"]["id"]
    rec = assert_json(upload_raw(server, eid, pdf_bytes()), 201)
    before = stored(server)
    for method, path in (("GET", files_path(eid)), ("GET", files_path(eid, rec["id"])),
                         ("DELETE", files_path(eid, rec["id"]))):
        assert_error(server.api(method, path), 401)
        assert_error(server.api(method, path, token="0" * 64), 401)
    assert_error(server.api("POST", files_path(eid), data=pdf_bytes(),
                            headers={"X-File-Name": "a.pdf"}), 401)
    # An API key is no credential on the administrative interface.
    key = create_key(server, scopes=["read", "write"])
    assert_error(server.api("GET", files_path(eid), headers={"X-Api-Key": key["key"]}), 401)
    assert_error(server.api("POST", files_path(eid), data=pdf_bytes(),
                            headers={"X-Api-Key": key["key"], "X-File-Name": "k.pdf"}), 401)
    assert list_files(server, eid) == [rec]
    assert stored(server) == before


def test_tutor_of_the_branch_may_use_files(server, world):
    eid, tok = world["entry"]["id"], world["tok_a"]
    data = pdf_bytes()
    rec = assert_json(upload_raw(server, eid, data, name="tutor.pdf", token=tok), 201)
    assert list_files(server, eid, token=tok) == [rec]
    assert download(server, eid, rec["id"], token=tok).content == data
    assert_ok(server.api("DELETE", files_path(eid, rec["id"]), token=tok))
    assert list_files(server, eid) == []
    assert stored_with(server, sha(data)) == []


def test_tutor_of_another_branch_gets_404(server, world):
    eid, tok = world["entry"]["id"], world["tok_b"]
    data = pdf_bytes()
    rec = assert_json(upload_raw(server, eid, data), 201)
    before = stored(server)
    assert_error(server.api("GET", files_path(eid), token=tok), 404)
    assert_error(upload_raw(server, eid, pdf_bytes(), token=tok), 404)
    assert_error(upload_multipart(server, eid, files={"file": ("m.pdf", pdf_bytes())}, token=tok),
                 404)
    assert_error(download(server, eid, rec["id"], token=tok), 404)
    assert_error(server.api("DELETE", files_path(eid, rec["id"]), token=tok), 404)
    assert list_files(server, eid) == [rec]
    assert stored(server) == before
    assert download(server, eid, rec["id"]).content == data


def test_key_restricted_to_another_branch_gets_404(server, world):
    eid = world["entry"]["id"]
    rec = assert_json(upload_raw(server, eid, pdf_bytes()), 201)
    other = create_key(server, scopes=["read", "write"], branch_ids=[world["bb"]["id"]])
    own = create_key(server, branch_ids=[world["ba"]["id"]])
    path = f"/api/v1/entries/{eid}/files"
    assert_error(server.api("GET", path, headers={"X-Api-Key": other["key"]}), 404)
    env = assert_json(server.api("GET", path, headers={"X-Api-Key": own["key"]}), 200)
    assert env["items"] == [rec] and env["total"] == 1
    # Nothing else about files exists for keys: no route, whatever the branch.
    before = stored(server)
    assert_error(server.api("POST", path, data=pdf_bytes(),
                            headers={"X-Api-Key": other["key"], "X-File-Name": "k.pdf",
                                     "Content-Type": "application/pdf"}), 405)
    for method in ("GET", "DELETE"):
        assert_error(server.api(method, f"{path}/{rec['id']}",
                                headers={"X-Api-Key": other["key"]}), 404)
    assert list_files(server, eid) == [rec]
    assert stored(server) == before


def test_no_upload_download_or_delete_on_v1(server, world):
    """The external interface only lists files (see jr_routes.c)."""
    eid = world["entry"]["id"]
    rec = assert_json(upload_raw(server, eid, pdf_bytes()), 201)
    key = create_key(server, scopes=["read", "write"])
    before = stored(server)
    h = {"X-Api-Key": key["key"], "Content-Type": "application/pdf", "X-File-Name": "v1.pdf"}
    r = server.api("POST", f"/api/v1/entries/{eid}/files", headers=h, data=pdf_bytes())
    assert_error(r, 405)
    assert "GET" in r.headers.get("Allow", "")
    for method in ("GET", "DELETE"):
        assert_error(server.api(method, f"/api/v1/entries/{eid}/files/{rec['id']}",
                                headers={"X-Api-Key": key["key"]}), 404)
    assert list_files(server, eid) == [rec]
    assert stored(server) == before


# ---- audit -------------------------------------------------------------------------------------
def test_upload_and_delete_are_audited(server, world):
    eid = world["entry"]["id"]
    rec = assert_json(upload_raw(server, eid, pdf_bytes(), name="audited.pdf"), 201)
    rows = audit(server, rec["id"])
    assert [r["action"] for r in rows] == ["create"], rows
    assert rows[0]["entity_type"] == "entry_file"
    assert rows[0]["entity_id"] == str(rec["id"])
    me = assert_json(server.api("GET", "/api/auth/me", token=server.admin_token), 200)["user"]
    assert rows[0]["actor_user_id"] == me["id"]
    assert set(rows[0]["changes"]) == {"entry_id", "name", "size", "content_type"}
    # A refused upload leaves no row.
    def total():
        return assert_json(server.api("GET", "/api/audit", token=server.admin_token,
                                      params={"entity_type": "entry_file", "limit": 1}),
                           200)["total"]
    total_before = total()
    assert_error(upload_raw(server, eid, ELF, name="x.bin"), 415)
    assert total() == total_before
    assert_ok(server.api("DELETE", files_path(eid, rec["id"]), token=server.admin_token))
    rows = audit(server, rec["id"])
    assert [r["action"] for r in rows] == ["delete", "create"], rows
    assert rows[0]["actor_user_id"] == me["id"]
