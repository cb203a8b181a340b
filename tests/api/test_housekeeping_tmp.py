"""Housekeeping removes what a crashed child left in JournalDataDir/tmp: files older than a
day. Uploads in progress are younger (each write refreshes the mtime) and are kept."""

import os
import time

from harness import Server

DAY = 86400


def test_housekeeping_removes_temp_files_older_than_a_day(fresh_server):
    srv = fresh_server("JournalHousekeepingInterval 5s", start=False)
    tmp = srv.data_dir / "tmp"
    tmp.mkdir(mode=0o700)
    now = time.time()
    old = tmp / "upload-Ab12Cd"        # a crashed child's upload, two days old
    stale = tmp / "part-Zz99Yy"        # a multipart part, just over a day old
    fresh = tmp / "upload-Fresh1"      # an upload in progress
    nearly = tmp / "upload-Nearly"     # 23 hours old: not yet
    subdir = tmp / "old-directory"     # not a temp file of the module: left alone
    for f in (old, stale, fresh, nearly):
        f.write_bytes(b"x" * 100)
    subdir.mkdir()
    os.utime(old, (now - 2 * DAY, now - 2 * DAY))
    os.utime(stale, (now - DAY - 120, now - DAY - 120))
    os.utime(nearly, (now - DAY + 3600, now - DAY + 3600))
    os.utime(subdir, (now - 3 * DAY, now - 3 * DAY))
    Server._chown_tree(srv.data_dir)
    srv.start()

    deadline = time.monotonic() + 30
    while old.exists() or stale.exists():
        assert time.monotonic() < deadline, \
            f"old temp files still there after 30 s: {sorted(os.listdir(tmp))}"
        time.sleep(0.25)
    assert fresh.exists() and nearly.exists() and subdir.is_dir(), sorted(os.listdir(tmp))
    # The server keeps serving with the sweeps running.
    assert srv.api("GET", "/api/health").status_code == 200
