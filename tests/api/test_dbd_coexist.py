"""The journal next to another mod_dbd user: mod_authn_dbd protects a location with a query on
the same DBDriver/DBDParams, and the same pooled connections serve both."""

import base64
import hashlib
import sqlite3
import threading
import time

import pytest

import harness
from harness import assert_error, assert_json, psql, uniq

WEB_USER = "webuser"
WEB_PASSWORD = "pw-" + "c0exist"
PAGE = "only for web users\n"

# Tiny pools: every request of a child runs on the same one or two connections, and connections
# idle for more than a second are closed while the server runs (their statements are released
# then, not only at shutdown).
EXTRA_CONF = """
LoadModule auth_basic_module /usr/lib/apache2/modules/mod_auth_basic.so
LoadModule authn_core_module /usr/lib/apache2/modules/mod_authn_core.so
LoadModule authn_dbd_module /usr/lib/apache2/modules/mod_authn_dbd.so
LoadModule authz_user_module /usr/lib/apache2/modules/mod_authz_user.so

DBDMin 0
DBDKeep 0
DBDMax 2
DBDExptime 1

<Location /protected>
    AuthType Basic
    AuthName "web users"
    AuthBasicProvider dbd
    AuthDBDUserPWQuery "SELECT pw FROM web_users WHERE name = %s"
    Require valid-user
</Location>
"""

# mod_auth_basic reports refused credentials at level error: expected for the wrong ones here.
AUTH_FAILURES = [r"AH01617: user \S+: authentication failure", r"AH01618: user \S+ not found"]


def htpasswd_sha(password):
    """An htpasswd {SHA} hash, which apr_password_validate understands."""
    return "{SHA}" + base64.b64encode(hashlib.sha1(password.encode()).digest()).decode()


def create_web_users(srv):
    """The table mod_authn_dbd reads. mod_dbd prepares its query when a connection opens, so the
    table exists before httpd starts."""
    ddl = "CREATE TABLE web_users (name TEXT PRIMARY KEY, pw TEXT NOT NULL)"
    row = (WEB_USER, htpasswd_sha(WEB_PASSWORD))
    if srv.db_kind == "sqlite":
        proc = srv.admin_cli("migrate")
        assert proc.returncode == 0, f"migrate: {proc.stdout}{proc.stderr}"
        con = sqlite3.connect(str(srv.db_path))
        try:
            con.execute(ddl)
            con.execute("INSERT INTO web_users (name, pw) VALUES (?, ?)", row)
            con.commit()
        finally:
            con.close()
    else:
        psql(ddl, dbname=srv.pg_dbname)
        psql(f"INSERT INTO web_users (name, pw) VALUES ('{row[0]}', '{row[1]}')",
             dbname=srv.pg_dbname)


@pytest.fixture
def coexisting(fresh_server):
    srv = fresh_server(EXTRA_CONF, start=False)
    (srv.doc_root / "protected").mkdir()
    (srv.doc_root / "protected" / "page.txt").write_text(PAGE)
    create_web_users(srv)
    srv.allowed_log_patterns += AUTH_FAILURES
    srv.start()
    return srv


def get_page(srv, user=WEB_USER, password=WEB_PASSWORD, http=None):
    auth = (user, password) if user is not None else None
    return (http or srv.http).get(srv.base_url + "/protected/page.txt", auth=auth,
                                  timeout=harness.HTTP_TIMEOUT)


def check_page(r):
    assert r.status_code == 200, f"/protected: {r.status_code} {r.text[:300]!r}"
    assert r.text == PAGE


def check_refused(r):
    assert r.status_code == 401, f"/protected: {r.status_code} {r.text[:300]!r}"
    assert "Basic" in r.headers.get("WWW-Authenticate", ""), r.headers


def one_round(srv, token, key, i, http=None):
    """Both users of the pool, one after the other, on the same client connection."""
    check_page(get_page(srv, http=http))
    me = assert_json(srv.api("GET", "/api/auth/me", token=token), 200)
    assert me["user"]["username"] == srv.admin_username
    check_refused(get_page(srv, password="wrong-" + str(i), http=http))
    v1 = assert_json(srv.api("GET", "/api/v1/me", headers={"X-Api-Key": key}), 200)
    assert v1["user"]["role"] == "admin"
    check_refused(get_page(srv, user=uniq("nobody"), http=http))


def test_authn_dbd_and_journal_share_the_connections(coexisting):
    srv = coexisting
    token = srv.admin_token
    key = assert_json(srv.api("POST", "/api/api-keys", token=token,
                              json={"name": uniq("coexist"), "scopes": ["read"]}), 201)["key"]
    check_refused(get_page(srv, user=None))

    for i in range(12):
        one_round(srv, token, key, i)
        # A write in a transaction between the other module's reads.
        branch = srv.create_branch()
        got = assert_json(srv.api("GET", f"/api/branches/{branch['id']}", token=token), 200)
        assert got["name"] == branch["name"]

    # Several clients at once: the two connections of each child serve both modules in turn.
    errors = []

    def client(n):
        import requests
        http = requests.Session()
        try:
            for i in range(6):
                check_page(get_page(srv, http=http))
                r = http.get(srv.base_url + "/api/v1/me", headers={"X-Api-Key": key},
                             timeout=harness.HTTP_TIMEOUT)
                assert_json(r, 200)
                check_refused(get_page(srv, password=f"bad-{n}-{i}", http=http))
        except AssertionError as e:
            errors.append(str(e))
        finally:
            http.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "clients hung"
    assert not errors, errors

    # Idle connections expire (DBDExptime 1, DBDKeep 0) and are closed by the running children;
    # the new ones serve both modules again.
    for i in range(3):
        time.sleep(2.5)
        one_round(srv, token, key, 100 + i)
    assert_json(srv.api("GET", "/api/health"), 200)


def test_journal_errors_do_not_reach_the_other_module(coexisting):
    """A journal request that fails (validation, a rolled-back write) leaves the connection
    usable by mod_authn_dbd."""
    srv = coexisting
    token = srv.admin_token
    for i in range(6):
        assert_error(srv.api("POST", "/api/branches", token=token, json={"name": ""}), 400, "name")
        name = uniq("dup")
        srv.create_branch(name)
        r = srv.api("POST", "/api/branches", token=token, json={"name": name})
        assert r.status_code == 409, r.text
        check_page(get_page(srv))


def rename_table(srv, old, new):
    sql = f"ALTER TABLE {old} RENAME TO {new}"
    if srv.db_kind == "sqlite":
        con = sqlite3.connect(str(srv.db_path), timeout=30)
        try:
            con.execute(sql)
            con.commit()
        finally:
            con.close()
    else:
        psql(sql, dbname=srv.pg_dbname)


def test_other_module_keeps_working_when_the_journal_cannot_prepare(coexisting):
    """The journal's statements are its own business: when they cannot be prepared on a new
    connection (here a table of the journal is missing), mod_authn_dbd still gets the
    connection, the journal answers 503, and recovers on the same connections afterwards."""
    srv = coexisting
    token = srv.admin_token
    assert_json(srv.api("GET", "/api/auth/me", token=token), 200)
    srv.allowed_log_patterns += [
        r"\[journal:error\] .*JR01003: cannot prepare statement [a-z0-9_]+: "
        r"(?:no such table: ip_bans$|ERROR:  relation \"ip_bans\" does not exist)",
        r"\[journal:error\] .*JR00007: cannot prepare statements on a new connection$"]
    rename_table(srv, "ip_bans", "ip_bans_away")
    try:
        time.sleep(2.5)  # the pooled connections expire; new ones open without the table
        for _ in range(4):
            check_page(get_page(srv))
            assert_error(srv.api("GET", "/api/auth/me", token=token), 503, "database")
            check_refused(get_page(srv, password="wrong"))
    finally:
        rename_table(srv, "ip_bans_away", "ip_bans")
    # The journal prepares its statements on the connections it already has.
    for _ in range(4):
        me = assert_json(srv.api("GET", "/api/auth/me", token=token), 200)
        assert me["user"]["username"] == srv.admin_username
    # On SQLite a schema change invalidates the statements of the apr_dbd driver, which it
    # never prepares again: mod_authn_dbd works again on new connections.
    time.sleep(2.5)
    for _ in range(4):
        check_page(get_page(srv))
        assert_json(srv.api("GET", "/api/auth/me", token=token), 200)
