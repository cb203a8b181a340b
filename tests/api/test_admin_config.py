"""journal-admin finds the database in httpd's own configuration: --config FILE, or the main
configuration file ($APACHE_CONFDIR/apache2.conf here, /etc/apache2/apache2.conf on an installed
system), with the files it includes. Run as root on SQLite, it works as the owner of the
database's directory. These tests use their own SQLite files and configuration trees, whatever
database the suite runs on."""

import grp
import os
import pwd
import sqlite3
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

import harness

SECRET = "s3cret-value-in-params"


@pytest.fixture
def tree():
    """A ServerRoot with apache2.conf including mods-enabled/*.conf, and a data directory.
    Searchable by everybody: journal-admin may work as www-data inside it."""
    root = Path(tempfile.mkdtemp(prefix="jr-admin-conf-"))
    os.chmod(root, 0o755)
    (root / "mods-enabled").mkdir(mode=0o755)
    (root / "data").mkdir(mode=0o755)
    (root / "apache2.conf").write_text(
        f'ServerRoot "{root}"\n'
        "# DBDParams /commented/out.db\n"
        "IncludeOptional mods-enabled/*.load\n"
        "IncludeOptional mods-enabled/*.conf\n"
        "IncludeOptional sites-enabled/*.conf\n")
    yield root
    subprocess.run(["rm", "-rf", str(root)], check=False)


def cli(*args, env=None, password=None):
    e = harness.cli_env()
    for v in ("JOURNAL_DBD_DRIVER", "JOURNAL_DBD_PARAMS", "JOURNAL_DATA_DIR", "APACHE_CONFDIR"):
        e.pop(v, None)
    e.update(env or {})
    if password:
        e["JOURNAL_PASSWORD"] = password
    proc = subprocess.run([str(harness.ADMIN_CLI), *args], capture_output=True, text=True,
                          env=e, timeout=120)
    assert not harness.sanitizer_lines(proc.stderr), proc.stderr
    return proc


def users(db):
    con = sqlite3.connect(db)
    try:
        return [r[0] for r in con.execute("SELECT username FROM users ORDER BY id")]
    finally:
        con.close()


def create(name, *args, env=None):
    return cli("create-user", name, "--role", "admin", "--cost", "4", *args, env=env,
               password="a-long-password")


def test_create_user_from_included_file_not_from_a_virtual_host(tree):
    db, decoy = tree / "data" / "journal.db", tree / "data" / "decoy.db"
    (tree / "mods-enabled" / "journal.conf").write_text(
        "DBDriver sqlite3\n"
        f"DBDParams {db}\n"
        "<VirtualHost *:80>\n"
        "  <IfModule mod_dbd.c>\n"
        "  </IfModule>\n"
        f"  DBDParams {decoy}\n"
        "</VirtualHost>\n")
    proc = create("alice", "--config", str(tree / "apache2.conf"))
    assert proc.returncode == 0, proc.stderr
    assert users(db) == ["alice"]
    assert not decoy.exists()


def test_default_is_the_servers_main_configuration(tree):
    """Without --config, --params or JOURNAL_DBD_PARAMS: $APACHE_CONFDIR/apache2.conf (the
    installed /etc/apache2/apache2.conf when unset), through a mods-enabled symlink."""
    db = tree / "data" / "journal.db"
    (tree / "mods-available").mkdir()
    (tree / "mods-available" / "journal.conf").write_text(
        f'<IfModule mod_journal.c>\nDBDriver "sqlite3"\nDBDParams "{db}"\n</IfModule>\n')
    (tree / "mods-enabled" / "journal.conf").symlink_to("../mods-available/journal.conf")
    proc = create("bob", env={"APACHE_CONFDIR": str(tree)})
    assert proc.returncode == 0, proc.stderr
    assert users(db) == ["bob"]


def test_not_enabled_says_so(tree):
    proc = create("carol", env={"APACHE_CONFDIR": str(tree)})
    assert proc.returncode == 1
    assert "no DBDParams in" in proc.stderr and "a2enmod journal" in proc.stderr


def test_later_directive_wins_and_directories_are_included_in_order(tree):
    """An Include of a directory reads every file in it, in name order; the last value
    counts, as in httpd."""
    first, second = tree / "data" / "first.db", tree / "data" / "second.db"
    d = tree / "extra"
    (d / "sub").mkdir(parents=True)
    (d / "10-a.conf").write_text(f"DBDriver sqlite3\nDBDParams {first}\n")
    (d / "sub" / "20-b.conf").write_text(f"DBDParams {second}\n")
    (tree / "mods-enabled" / "journal.conf").write_text("Include extra\n")
    proc = create("dave", "--config", str(tree / "apache2.conf"))
    assert proc.returncode == 0, proc.stderr
    assert users(second) == ["dave"]
    assert not first.exists()


def test_quotes_continuations_defines_and_environment(tree):
    spaced = tree / "data" / "with space"
    spaced.mkdir(mode=0o755)
    db = spaced / "journal.db"
    (tree / "mods-enabled" / "journal.conf").write_text(
        "Define JOURNAL_DB_NAME journal.db\n"
        "DBDriver ${JR_TEST_DRIVER}\n"
        "DBDParams \\\n"
        f'    "{spaced}/${{JOURNAL_DB_NAME}}"\n')
    proc = create("erin", "--config", str(tree / "apache2.conf"),
                  env={"JR_TEST_DRIVER": "sqlite3"})
    assert proc.returncode == 0, proc.stderr
    assert users(db) == ["erin"]


def test_undefined_variable_is_refused_without_showing_the_value(tree):
    conf = tree / "mods-enabled" / "journal.conf"
    conf.write_text(f"DBDriver pgsql\n\nDBDParams \"password={SECRET} host=${{NO_SUCH_VAR}}\"\n")
    proc = create("frank", "--config", str(tree / "apache2.conf"))
    assert proc.returncode == 1
    assert f"{conf}:3: DBDParams uses a ${{...}} variable" in proc.stderr, proc.stderr
    assert SECRET not in proc.stderr + proc.stdout


def test_missing_include_is_an_error_optional_is_not(tree):
    (tree / "mods-enabled" / "journal.conf").write_text(
        "IncludeOptional /nonexistent/jr-*.conf\nInclude /nonexistent/jr.conf\n")
    proc = create("gina", "--config", str(tree / "apache2.conf"))
    assert proc.returncode == 1
    assert "journal.conf:2: Include /nonexistent/jr.conf" in proc.stderr, proc.stderr


def test_include_loop_stops(tree):
    (tree / "mods-enabled" / "journal.conf").write_text(f"Include {tree}/apache2.conf\n")
    proc = create("hank", "--config", str(tree / "apache2.conf"))
    assert proc.returncode == 1
    assert "include loop" in proc.stderr


def test_directory_that_contains_itself_stops(tree):
    d = tree / "extra"
    d.mkdir()
    (d / "again").symlink_to(".")
    (tree / "mods-enabled" / "journal.conf").write_text("Include extra\n")
    proc = create("iris", "--config", str(tree / "apache2.conf"))
    assert proc.returncode == 1
    assert "include loop" in proc.stderr


def test_precedence_params_then_config_then_environment(tree):
    from_conf, from_env, from_cli = (tree / "data" / n for n in ("conf.db", "env.db", "cli.db"))
    (tree / "mods-enabled" / "journal.conf").write_text(
        f"DBDriver sqlite3\nDBDParams {from_conf}\n")
    conf = str(tree / "apache2.conf")
    env = {"JOURNAL_DBD_DRIVER": "sqlite3", "JOURNAL_DBD_PARAMS": str(from_env),
           "APACHE_CONFDIR": str(tree)}
    assert create("u1", "--config", conf, "--params", str(from_cli), env=env).returncode == 0
    assert create("u2", "--config", conf, env=env).returncode == 0
    assert create("u3", env=env).returncode == 0
    assert users(from_cli) == ["u1"]
    assert users(from_conf) == ["u2"]
    assert users(from_env) == ["u3"]


def test_check_config_names_the_file_and_checks_its_data_dir(tree):
    db = tree / "data" / "journal.db"
    (tree / "mods-enabled" / "journal.conf").write_text(
        f"DBDriver sqlite3\nDBDParams {db}\nJournalDataDir data\n")
    conf = str(tree / "apache2.conf")
    assert cli("migrate", "--config", conf).returncode == 0
    proc = cli("check-config", "--config", conf)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"configuration: {conf}" in proc.stdout
    assert f"data directory: {tree}/data (writable)" in proc.stdout


@pytest.mark.skipif(not harness.IS_ROOT, reason="needs root: the owner of the directory differs")
def test_as_root_the_database_belongs_to_the_directorys_owner(tree):
    """A fresh install: /var/lib/mod_journal belongs to www-data, root runs create-user, and
    httpd's children (www-data) can open what it created."""
    data = tree / "data"
    www = pwd.getpwnam("www-data")
    os.chown(data, www.pw_uid, grp.getgrnam("www-data").gr_gid)
    os.chmod(data, 0o700)
    db = data / "journal.db"
    (tree / "mods-enabled" / "journal.conf").write_text(f"DBDriver sqlite3\nDBDParams {db}\n")
    proc = create("ivy", "--config", str(tree / "apache2.conf"))
    assert proc.returncode == 0, proc.stderr
    for f in data.iterdir():
        st = os.stat(f)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (www.pw_uid, 0o600), f
    assert users(db) == ["ivy"]
    # A database of root's stays root's: journal-admin does not take it away.
    rootdb = tree / "root.db"
    assert create("jo", "--params", str(rootdb)).returncode == 0
    assert os.stat(rootdb).st_uid == 0
