"""A child that stops while its housekeeping runs. mod_watchdog's thread outlives a child's
pool (its own stop belongs to the configuration's pool, which a child never destroys), so
without a guard a child would close the database connections under a running purge and exit
in the middle of it. The child's exit waits for the purge; a purge does not start once the
child is stopping."""
import os
import subprocess
import threading
import time

from harness import DB_KIND, pg_bindir, PG_PORT, psql
from worker_support import execute, rows

OLD_EVENT = ("INSERT INTO events (type, entity_type, entity_id, payload, created_at) VALUES"
             " ('entry.created', 'entry', 1, '{}', '2000-01-01T00:00:00Z')")
OLD_COUNT = "SELECT COUNT(*) FROM events WHERE created_at < '2001'"


class WritesBlocked:
    """Holds the database's write lock from outside the server: SQLite's write queue (<db>-wq),
    or on PostgreSQL the lock of the old event's row, which the trim deletes, in a session of
    its own. Not a lock of the whole table: a child still starting prepares its statements
    then, and preparing one that names the table would wait for that lock, so a child holding
    mod_watchdog's singleton could never start its housekeeping."""

    def __init__(self, srv):
        self.srv = srv

    def __enter__(self):
        if DB_KIND == "sqlite":
            import fcntl
            self.path = os.path.realpath(str(self.srv.db_path)) + "-wq"
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        else:
            self.proc = subprocess.Popen(
                [os.path.join(pg_bindir(), "psql"), "-h", "127.0.0.1", "-p", PG_PORT,
                 "-U", "postgres", "-d", self.srv.pg_dbname, "-X", "-q"],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
            self.proc.stdin.write("BEGIN; SELECT id FROM events WHERE created_at < '2001'"
                                  " FOR UPDATE;\n")
            self.proc.stdin.flush()
        return self

    def someone_waits(self):
        """A writer of the server waits for the lock held here."""
        if DB_KIND == "sqlite":
            inode = str(os.stat(self.path).st_ino)
            with open("/proc/locks") as f:
                return any(l.split()[1] == "->" and l.split()[6].endswith(":" + inode)
                           for l in f if len(l.split()) > 6)
        # The trim itself waiting for the row's lock (held by this session's transaction):
        # only a waiting purge proves the housekeeping has started.
        waiting = psql("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()"
                       " AND wait_event_type = 'Lock' AND query LIKE 'DELETE FROM events%'",
                       dbname=self.srv.pg_dbname).stdout.strip()
        return waiting != "0"

    def activity(self):
        """What the database's sessions were doing, for a failure's message."""
        if DB_KIND == "sqlite":
            with open("/proc/locks") as f:
                return f.read()
        return psql("SELECT pid, state, wait_event_type, wait_event, left(query, 100)"
                    " FROM pg_stat_activity WHERE datname = current_database()",
                    dbname=self.srv.pg_dbname).stdout

    def __exit__(self, *exc):
        if DB_KIND == "sqlite":
            os.close(self.fd)  # releases the flock
        else:
            self.proc.communicate("COMMIT;\n", timeout=30)


def access_log(srv):
    try:
        return (srv.log_dir / "access.log").read_text(errors="replace")[-3000:]
    except OSError:
        return "(no access log)"


def test_a_stopping_child_waits_for_its_running_housekeeping(fresh_server):
    srv = fresh_server("JournalHousekeepingInterval 5s\nJournalEventRetention 1h\n"
                       "LogLevel warn watchdog:debug")
    execute(srv, OLD_EVENT)
    stopped = threading.Event()
    stop_error = []

    def stop():
        try:
            srv.stop()
        except Exception as e:  # reported by the assertions below
            stop_error.append(e)
        stopped.set()

    with WritesBlocked(srv) as block:
        deadline = time.monotonic() + 30
        while not block.someone_waits():
            assert time.monotonic() < deadline, (
                "the housekeeping did not start within 30 s\n" + block.activity() +
                "\n" + srv.read_error_log()[-3000:] + "\n" + access_log(srv) + "\n" +
                "\n".join(srv.children_stacks()))
            time.sleep(0.2)
        stopper = threading.Thread(target=stop)
        stopper.start()
        # The child's exit waits for the purge, which waits for the lock held here (httpd
        # kills a child that has not exited after about 8 s: the lock goes well before).
        assert not stopped.wait(2.0), "the server stopped under a running purge"
    stopper.join(30)
    assert stopped.is_set() and not stop_error, stop_error
    # The purge finished before the child went: the old event is gone.
    assert rows(srv, OLD_COUNT)[0][0] == "0"
