"""What the journal writes under its data directory is its own: the SQLite database, its
-wal/-shm files, the writers' queue (-wq) and write generation (-gen), stored uploads and the directories made for them are closed to other users,
whoever created them (journal-admin, the httpd parent while migrating, a child)."""

import os
import stat

import pytest

import harness
from harness import assert_json, uniq

sqlite_only = pytest.mark.skipif(harness.DB_KIND != "sqlite",
                                 reason="the database files exist only on SQLite")


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def db_files(srv):
    return [srv.db_path, srv.db_path.with_name(srv.db_path.name + "-wal"),
            srv.db_path.with_name(srv.db_path.name + "-shm"),
            srv.db_path.with_name(srv.db_path.name + "-wq"),  # the writers' queue
            srv.db_path.with_name(srv.db_path.name + "-gen")]  # the write generation


def make_some_writes(srv):
    """A login, a branch, a group, an entry and an uploaded file."""
    branch = srv.create_branch()
    group = srv.create_group(branch["id"])
    r = srv.api("POST", "/api/entries", token=srv.admin_token,
                json={"student_name": uniq("Stu"), "group_id": group["id"]})
    entry = assert_json(r, 201)
    r = srv.api("POST", f"/api/entries/{entry['id']}/files", token=srv.admin_token,
                data=b"plain notes\n", headers={"Content-Type": "text/plain",
                                                "X-File-Name": "notes.txt"})
    assert_json(r, 201)
    return entry


def assert_private_tree(base):
    """Every directory under base is 0700 and every file 0600."""
    seen = 0
    for dirpath, dirnames, filenames in os.walk(base):
        for d in dirnames:
            p = os.path.join(dirpath, d)
            assert mode(p) == 0o700, f"{p}: {oct(mode(p))}"
        for f in filenames:
            p = os.path.join(dirpath, f)
            assert mode(p) == 0o600, f"{p}: {oct(mode(p))}"
            seen += 1
    return seen


@sqlite_only
def test_database_made_by_journal_admin_is_owner_only(fresh_server):
    srv = fresh_server()
    make_some_writes(srv)
    for f in db_files(srv):
        assert f.exists(), f"{f} does not exist while the server runs"
        assert mode(f) == 0o600, f"{f}: {oct(mode(f))}"
        assert os.stat(f).st_uid == os.stat(srv.db_path).st_uid, f"{f}: another owner"


@sqlite_only
def test_database_made_by_the_module_is_owner_only(fresh_server):
    srv = fresh_server(start=False)
    assert not srv.db_path.exists()
    # No journal-admin: the httpd parent creates and migrates the database at startup.
    srv._admin_created = True
    srv.start()
    assert mode(srv.db_path) == 0o600, oct(mode(srv.db_path))
    srv.admin_cli("create-user", srv.admin_username, "--role", "admin",
                  password=srv.admin_password, check=True)
    make_some_writes(srv)
    for f in db_files(srv):
        assert f.exists(), f"{f} does not exist while the server runs"
        assert mode(f) == 0o600, f"{f}: {oct(mode(f))}"
        assert os.stat(f).st_uid == os.stat(srv.db_path).st_uid, f"{f}: another owner"


def test_stored_files_and_their_directories_are_owner_only(fresh_server):
    srv = fresh_server()
    make_some_writes(srv)
    assert assert_private_tree(srv.data_dir / "files") == 1
    assert mode(srv.data_dir / "tmp") == 0o700
