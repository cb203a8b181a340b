"""journal-admin's command line: options, the commands and their arguments, exit statuses (0 done,
1 refused or failed, 2 a command line it does not understand, with the usage on standard error).
Each test has its own SQLite file, whatever database the suite runs on."""

import subprocess
import tempfile
from pathlib import Path

import pytest

import harness

PASSWORD = "a-long-password"


@pytest.fixture
def home():
    d = Path(tempfile.mkdtemp(prefix="jr-admin-cli-"))
    (d / "data").mkdir()
    yield d
    subprocess.run(["rm", "-rf", str(d)], check=False)


def cli(*args, password=None):
    env = harness.cli_env()
    for v in ("JOURNAL_DBD_DRIVER", "JOURNAL_DBD_PARAMS", "JOURNAL_DATA_DIR", "JOURNAL_PASSWORD",
              "APACHE_CONFDIR"):
        env.pop(v, None)
    if password:
        env["JOURNAL_PASSWORD"] = password
    proc = subprocess.run([str(harness.ADMIN_CLI), *args], capture_output=True, text=True,
                          env=env, stdin=subprocess.DEVNULL, timeout=120)
    assert not harness.sanitizer_lines(proc.stderr), proc.stderr
    return proc


def db_args(home):
    return ["--driver", "sqlite3", "--params", str(home / "j.db")]


def test_help_is_the_usage_on_standard_output():
    proc = cli("--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: journal-admin")
    assert "check-config" in proc.stdout and proc.stderr == ""


@pytest.mark.parametrize("args", [
    [],                                   # no command
    ["frobnicate"],                       # no such command
    ["frobnicate", "x"],
    ["create-user"],                      # commands that need their argument
    ["set-password"],
    ["restore"],
    ["--bogus", "migrate"],               # an option that does not exist
    ["--params"],                         # an option without its value
])
def test_a_command_line_not_understood_is_2_with_the_usage(home, args):
    proc = cli(*args, *(["--params", str(home / "j.db")] if args and args[0] != "--params" else []))
    assert proc.returncode == 2, proc
    assert "usage: journal-admin" in proc.stderr and proc.stdout == ""
    assert not (home / "j.db").exists()  # refused before the database is looked for


@pytest.mark.parametrize("option, message", [
    (["--branch", "0"], "--branch needs a positive integer, not 0"),
    (["--branch", "two"], "--branch needs a positive integer, not two"),
    (["--cost", "3"], "--cost must be an integer from 4 to 15, not 3"),
    (["--cost", "16"], "--cost must be an integer from 4 to 15, not 16"),
])
def test_a_bad_option_value_is_1_and_named(home, option, message):
    proc = cli("create-user", "ann", "--role", "admin", *option, *db_args(home),
               password=PASSWORD)
    assert proc.returncode == 1, proc
    assert proc.stderr == f"journal-admin: {message}\n"
    assert not (home / "j.db").exists()


def test_without_a_database_it_says_how_to_give_one():
    proc = cli("migrate", "--driver", "sqlite3", "--params", "")
    assert proc.returncode == 1, proc
    assert "no database: give --params or set JOURNAL_DBD_PARAMS" in proc.stderr


def test_accounts_from_migrate_to_set_password(home):
    db = db_args(home)
    proc = cli("migrate", *db)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("migrations: ") and "applied, schema version" in proc.stdout

    proc = cli("create-user", "ann", *db, password=PASSWORD)
    assert proc.returncode == 1 and "create-user needs --role admin|tutor" in proc.stderr, proc

    # options may follow the command; --branch repeats
    proc = cli("create-user", "Ann", "--role", "admin", "--cost", "4", *db, password=PASSWORD)
    assert (proc.returncode, proc.stdout) == (0, "user Ann created\n"), proc.stderr
    proc = cli("--if-missing", "create-user", "ann", "--role", "admin", *db, password=PASSWORD)
    assert (proc.returncode, proc.stdout) == (0, "user ann exists\n"), proc.stderr
    proc = cli("create-user", "ann", "--role", "admin", "--cost", "4", *db, password=PASSWORD)
    assert proc.returncode == 1 and proc.stderr.startswith("journal-admin: "), proc

    proc = cli("create-user", "tom", "--role", "tutor", "--cost", "4", *db, password="short")
    assert proc.returncode == 1, proc
    assert "the password must be at least 8 characters" in proc.stderr

    proc = cli("set-password", "nobody", *db, password=PASSWORD)
    assert (proc.returncode, proc.stderr) == (1, "journal-admin: no user named nobody\n"), proc
    proc = cli("set-password", "ANN", "--cost", "4", *db, password="another-long-one")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "password of ANN changed; their sessions ended\n"


def test_check_config_and_backup_need_what_they_check(home):
    db = db_args(home)
    proc = cli("check-config", *db)
    assert proc.returncode == 1, proc
    assert "database: reachable (sqlite3)" in proc.stdout and "schema: not migrated" in proc.stdout
    assert cli("migrate", *db).returncode == 0
    proc = cli("check-config", "--data-dir", str(home / "data"), *db)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "(current)" in proc.stdout and f"data directory: {home / 'data'} (writable)" in proc.stdout

    proc = cli("backup", *db)
    assert proc.returncode == 1 and "backup and restore need the data directory" in proc.stderr
    proc = cli("restore", str(home / "none.tar.gz"), *db)
    assert proc.returncode == 1 and "backup and restore need the data directory" in proc.stderr
