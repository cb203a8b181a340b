"""A browser: headless Chromium (Debian's chromium) loads a page served by the test's httpd,
takes a stream ticket, opens an EventSource with it, creates an entry through the API and
shows the notification event the stream delivers."""

import shutil
import subprocess

from harness import assert_json

CHROMIUM = shutil.which("chromium")

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>stream</title></head>
<body><pre id="out">waiting</pre>
<script>
const out = document.getElementById("out");
const token = location.hash.slice(1);
const group = Number(new URLSearchParams(location.search).get("group"));
const headers = {"X-Auth-Token": token, "Content-Type": "application/json"};
(async () => {
  const t = await (await fetch("/api/auth/stream-ticket", {method: "POST", headers})).json();
  const es = new EventSource("/api/notifications/stream?ticket=" + t.ticket);
  es.addEventListener("notification", (e) => {
    const n = JSON.parse(e.data);
    if (n.type === "entry.created" && n.body.startsWith("Browser Kid")) {
      out.textContent = "GOT " + e.lastEventId + " " + n.type + " " + n.entity_id;
      es.close();
    }
  });
  es.onopen = () => fetch("/api/entries", {method: "POST", headers,
    body: JSON.stringify({student_name: "Browser Kid", group_id: group})});
  es.onerror = () => { out.textContent += " error"; };
})();
</script></body></html>
"""


def test_event_source_in_headless_chromium(server, tmp_path):
    assert CHROMIUM, "chromium is not installed (scripts/deps.sh installs it)"
    srv = server
    g = srv.create_group(srv.create_branch()["id"])
    (srv.doc_root / "stream.html").write_text(PAGE)
    url = f"{srv.base_url}/stream.html?group={g['id']}#{srv.admin_token}"
    proc = subprocess.run([CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
                           f"--user-data-dir={tmp_path}/profile", "--virtual-time-budget=15000",
                           "--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert "GOT " in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
    got = proc.stdout.split("GOT ", 1)[1].split("<", 1)[0].split()
    entries = assert_json(srv.api("GET", "/api/entries", token=srv.admin_token,
                                  params={"group_id": g["id"]}), 200)
    assert got[1] == "entry.created" and int(got[2]) in [e["id"] for e in entries]
    assert int(got[0]) > 0
