"""Secrets never reach the logs or the database: API keys, session tokens and passwords are
stored (if at all) only as hashes."""

import hashlib
import uuid

import harness
from harness import assert_error, assert_json, assert_ok, uniq


def database_text(srv):
    """Everything the database holds, as text: the SQLite files (main and -wal) byte for byte,
    or a data-only dump of the PostgreSQL database."""
    if srv.db_kind == "sqlite":
        parts = []
        for suffix in ("", "-wal"):
            path = srv.db_path.parent / (srv.db_path.name + suffix)
            if path.exists():
                parts.append(path.read_bytes().decode("latin-1"))
        assert parts, f"no database file at {srv.db_path}"
        return "\n".join(parts)
    dump = harness.pg_run("pg_dump", "-d", srv.pg_dbname, "--data-only", "--no-owner")
    keys = harness.psql("SELECT id, name, prefix, key_hash FROM api_keys ORDER BY id",
                        dbname=srv.pg_dbname).stdout
    sessions = harness.psql("SELECT * FROM sessions", dbname=srv.pg_dbname).stdout
    return "\n".join([dump.stdout, keys, sessions])


def read(path):
    return path.read_bytes().decode("utf-8", "replace") if path.exists() else ""


def test_no_secret_in_logs_or_database(fresh_server):
    srv = fresh_server("LogLevel debug")
    ip = "2001:db8:5e::1"
    passwords = [srv.admin_password]
    tokens = [srv.admin_token]

    # Users: a tutor who logs in and then changes password; a failed login.
    b = srv.create_branch()
    tutor = srv.create_user(role="tutor", branch_ids=[b["id"]])
    passwords.append(tutor["_password"])
    tokens.append(srv.login(tutor["username"], tutor["_password"], ip=ip))
    new_pw = "new-pw-" + uuid.uuid4().hex
    passwords.append(new_pw)
    assert_json(srv.api("PUT", f"/api/users/{tutor['id']}", token=srv.admin_token,
                        json={"password": new_pw}), 200)
    tokens.append(srv.login(tutor["username"], new_pw, ip=ip))
    wrong_pw = "wrong-pw-" + uuid.uuid4().hex
    passwords.append(wrong_pw)
    assert_error(srv.api("POST", "/api/auth/login", ip=ip,
                         json={"username": tutor["username"], "password": wrong_pw}), 401)

    # Keys: created, used both ways, rotated, deleted, guessed.
    def create(**fields):
        body = {"name": uniq("secret-key"), "scopes": ["read"]}
        body.update(fields)
        return assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token, json=body),
                           201)

    k1, k2, k3 = create(), create(scopes=["read", "write"]), create(branch_ids=[b["id"]])
    secrets = [k1["key"], k2["key"], k3["key"]]
    for k in (k1, k2, k3):
        assert_json(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": k["key"]}, ip=ip), 200)
        assert_json(srv.api("GET", "/api/v1/branches",
                            headers={"Authorization": f"Bearer {k['key']}"}, ip=ip), 200)
    rotated = assert_json(srv.api("POST", f"/api/api-keys/{k2['id']}/rotate",
                                  token=srv.admin_token), 200)["key"]
    secrets.append(rotated)
    assert_json(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": rotated}, ip=ip), 200)
    assert_error(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": k2["key"]}, ip=ip), 401)
    assert_ok(srv.api("DELETE", f"/api/api-keys/{k3['id']}", token=srv.admin_token))
    assert_error(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": k3["key"]}, ip=ip), 401)
    # A session token offered as a key.
    assert_error(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": tokens[1]}, ip=ip), 401)
    assert_json(srv.api("GET", "/api/api-keys", token=srv.admin_token), 200)
    assert_json(srv.api("GET", "/api/audit", token=srv.admin_token), 200)
    # A password change ended the tutor's first session; a logout ends the second. Neither
    # token may linger anywhere.
    assert_error(srv.api("GET", "/api/auth/me", token=tokens[1]), 401)
    assert_ok(srv.api("POST", "/api/auth/logout", token=tokens[2]))

    live_hashes = [hashlib.sha256(s.encode()).hexdigest() for s in (k1["key"], rotated)]

    def check(where, text):
        for s in secrets:
            assert s not in text, f"API key {s[:12]}... found in {where}"
            assert s[12:] not in text, f"body of API key {s[:12]}... found in {where}"
        for t in tokens:
            assert t not in text, f"session token {t[:8]}... found in {where}"
            assert t.lower() not in text.lower(), f"session token {t[:8]}... found in {where}"
        for p in passwords:
            assert p not in text, f"password {p[:4]}... found in {where}"

    def check_all():
        check("the error log", read(srv.error_log))
        access = read(srv.log_dir / "access.log")
        assert "/api/v1/me" in access, "the access log is not written"
        check("the access log", access)
        db = database_text(srv)
        check("the database", db)
        for h in live_hashes:
            assert h in db, f"sha256 {h} of a live key is not in the database"

    check_all()
    # Once stopped, SQLite has folded its write-ahead log into the main file.
    srv.stop()
    check_all()
