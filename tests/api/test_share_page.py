"""The page of a share link (/share/:token): server-rendered HTML for a parent's phone, every
value escaped, a strict Content-Security-Policy, no script; the password form; opened in
headless Chromium at 360 px."""

import html
import random
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from PIL import Image

from harness import assert_json, random_ip
from test_share_links import Family, create_link

CHROMIUM = shutil.which("chromium")


def page(srv, token, method="GET", data=None, ip=None):
    h = {"X-Forwarded-For": ip} if ip else {}
    if data is not None:
        h["Content-Type"] = "application/x-www-form-urlencoded"
    return srv.http.request(method, f"{srv.base_url}/share/{token}", data=data, headers=h,
                            timeout=30)


def assert_page(r, status):
    assert r.status_code == status, f"{r.status_code} {r.text[:300]}"
    assert r.headers["Content-Type"] == "text/html; charset=utf-8"
    csp = r.headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    assert "'unsafe-inline'" not in csp and "form-action 'self'" in csp
    assert r.headers["Referrer-Policy"] == "no-referrer"
    assert "<script" not in r.text.lower()
    return r.text


def test_page_shows_the_journal_escaped(server):
    fam = Family(server)
    link = create_link(server, "student", fam.student["id"])
    # The full address, as the request reached the server (no JournalPublicURL here).
    assert link["url"] == f"{server.base_url}/share/{link['token']}"
    text = assert_page(page(server, link["token"]), 200)
    assert f"<h1>{html.escape(fam.name)}</h1>" in text
    # Every value escaped: the description holds markup.
    assert "fractions &lt;b&gt;&amp;&lt;/b&gt; decimals" in text and "<b>&</b>" not in text
    assert html.escape(fam.module["name"]) in text and "homework.pdf" in text
    assert fam.reports[1]["text"] in text
    photo = re.search(r'<img src="([^"]+)"', text).group(1)
    r = server.http.get(server.base_url + html.unescape(photo), timeout=30)
    assert r.status_code == 200 and r.content == fam.photo
    assert 'name="viewport"' in text


def test_page_dead_links_and_password_form(server):
    fam = Family(server)
    text = assert_page(page(server, "sl_" + "0" * 64), 404)
    assert "does not exist or has expired" in text
    link = create_link(server, "student", fam.student["id"], password="garden-gate-42")
    ip = random_ip()
    text = assert_page(page(server, link["token"], ip=ip), 401)
    assert '<form method="post" action="/share/' in text and fam.name not in text
    text = assert_page(page(server, link["token"], "POST", "password=nope-nope", ip=ip), 401)
    assert "Wrong password." in text and fam.name not in text
    text = assert_page(page(server, link["token"], "POST", "password=garden-gate-42", ip=ip), 200)
    assert html.escape(fam.name) in text
    assert "garden-gate-42" not in text
    assert_page(page(server, link["token"], "POST", "other=1", ip=ip), 400)


def chromium(*args, timeout=90):
    with tempfile.TemporaryDirectory(prefix="jr-chromium-") as profile:
        return subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={profile}", "--window-size=360,900", *args],
            capture_output=True, text=True, timeout=timeout)


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium package is not installed")
def test_chromium_opens_the_page_and_the_password_form(server, tmp_path):
    fam = Family(server)
    link = create_link(server, "student", fam.student["id"], password="kitchen-door-7")
    url = f"{server.base_url}/share/{link['token']}"
    # The form, submitted by the browser: the page it lands on shows the student.
    form = tmp_path / "submit.html"
    form.write_text(f'<form method="post" action="{url}"><input name="password" '
                    f'value="kitchen-door-7"></form><script>document.forms[0].submit()</script>')
    out = chromium("--virtual-time-budget=10000", "--dump-dom", form.as_uri())
    assert html.escape(fam.name) in out.stdout or fam.name in out.stdout, out.stderr[-2000:]
    assert "Content Security Policy" not in out.stderr
    # A screenshot at 360 px: the page renders (not blank) and fits the width.
    plain = create_link(server, "student", fam.student["id"])
    shot = tmp_path / "page.png"
    out = chromium(f"--screenshot={shot}", "--hide-scrollbars",
                   f"{server.base_url}/share/{plain['token']}")
    assert shot.exists(), out.stderr[-2000:]
    img = Image.open(shot).convert("L")
    assert img.size[0] == 360
    dark = sum(1 for v in img.getdata() if v < 100)
    assert dark > 200, "the screenshot shows no text"
    dom = chromium("--dump-dom", f"{server.base_url}/share/{plain['token']}").stdout
    assert html.escape(fam.name) in dom or fam.name in dom
    assert "Refused to" not in out.stderr


# Words that read back unambiguously: no digits, no l/I/1 or O/0 pairs in a short token.
OCR_WORDS = ["Harbor", "Meadow", "Juniper", "Falcon", "Willow", "Copper", "Thunder", "Saffron",
             "Marigold", "Bramble", "Canyon", "Whisper"]


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium package is not installed")
def test_screenshot_of_the_page_shows_the_students_name(server, tmp_path):
    """What a parent sees at 360 px, read back from the pixels by OCR (tesseract)."""
    assert shutil.which("tesseract"), "tesseract-ocr is missing: scripts/deps.sh installs it"
    fam = Family(server)
    name = f"Wilhelmina {random.choice(OCR_WORDS)} {random.choice(OCR_WORDS)}"
    student = assert_json(server.api("POST", "/api/students", token=server.admin_token, json={
        "name": name, "group_id": fam.group["id"]}), 201)
    link = create_link(server, "student", student["id"])
    shot = tmp_path / "page.png"
    # Still a 360 px wide layout, drawn at two device pixels per CSS pixel: at one, tesseract
    # reads the bold heading "Whisper" as "Wh … per" every time; at two, all 144 names read back.
    out = chromium(f"--screenshot={shot}", "--hide-scrollbars", "--force-device-scale-factor=2",
                   f"{server.base_url}/share/{link['token']}")
    assert shot.exists(), out.stderr[-2000:]
    assert Image.open(shot).size[0] == 720
    ocr = subprocess.run(["tesseract", str(shot), "-", "--psm", "3"], capture_output=True,
                         text=True, timeout=120)
    assert ocr.returncode == 0, ocr.stderr[-2000:]
    seen = " ".join(ocr.stdout.split())
    assert name in seen, f"OCR of the screenshot did not show {name!r}: {seen[:800]!r}"


def test_public_url_directive_gives_the_links_address(fresh_server):
    """Behind a proxy the server cannot know the address families use: JournalPublicURL says it
    (a trailing slash is dropped), whatever Host the admin's request carried."""
    srv = fresh_server("JournalPublicURL https://journal.example.org/school/\n")
    fam = Family(srv)
    link = create_link(srv, "student", fam.student["id"])
    assert link["url"] == f"https://journal.example.org/school/share/{link['token']}"
    # The address the link names serves the page (the proxy strips /school).
    assert_page(page(srv, link["token"]), 200)


def test_public_url_directive_refuses_what_is_not_a_base_url(fresh_server):
    srv = fresh_server("JournalPublicURL ftp://journal.example.org\n", start=False)
    out = srv.config_test()
    assert out.returncode != 0
    assert ("JournalPublicURL: 'ftp://journal.example.org' is not valid: use the http:// or "
            "https:// base URL of the server as families reach it") in out.stdout + out.stderr
