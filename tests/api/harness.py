"""Test harness for the mod_journal API suite: one Apache httpd instance per `Server`.

A `Server` owns a temporary ServerRoot (conf.d/, run/, logs/, data/, htdocs/), renders
conf/journal-dev.conf.in into it, creates the first admin with journal-admin, starts
/usr/sbin/apache2 on a free loopback port and talks to it with a requests.Session.

Environment:
  JOURNAL_BUILD_DIR    directory with mod_journal.so and journal-admin (default REPO/build)
  JOURNAL_TEST_DB      sqlite (default) or pgsql
  JOURNAL_TEST_PG_PORT port of a running throwaway PostgreSQL cluster on 127.0.0.1 (pgsql)
  JOURNAL_SANITIZE     1 when the module is an ASan+UBSan build (preloads libasan into httpd)
  JOURNAL_KEEP_TMP     1 keeps every server's temp dir (it is always kept when the error
                       log had unexpected problems)
"""

import fcntl
import functools
import glob
import grp
import os
import pwd
import random
import re
import shutil
import signal
import socket
import sqlite3
import struct
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import requests

import diagnostics

REPO = Path(__file__).resolve().parents[2]
BUILD_DIR = Path(os.environ.get("JOURNAL_BUILD_DIR") or REPO / "build").resolve()
MODULE = BUILD_DIR / "mod_journal.so"
ADMIN_CLI = BUILD_DIR / "journal-admin"
TEMPLATE = REPO / "conf" / "journal-dev.conf.in"
RENDER = REPO / "scripts" / "render-conf.sh"
APACHE = "/usr/sbin/apache2"

DB_KIND = os.environ.get("JOURNAL_TEST_DB", "sqlite")
PG_PORT = os.environ.get("JOURNAL_TEST_PG_PORT", "")
SANITIZE = os.environ.get("JOURNAL_SANITIZE", "") == "1"
KEEP_TMP = os.environ.get("JOURNAL_KEEP_TMP", "") == "1"
IS_ROOT = os.geteuid() == 0

# Under the sanitizers a child that opens its database connections at start (DBDMin 40) on a
# busy machine needed more than 20 s before it answered.
START_TIMEOUT = 60.0 if SANITIZE else 20.0
STOP_TIMEOUT = 20.0
# httpd's stop SIGTERMs a child that has not exited after about 2 s and SIGKILLs it (AH00046)
# after 8: at this point the stacks of a child still there are taken, to tell a hang from a
# slow exit when AH00046 follows.
STUCK_AFTER = 5.0
# Seconds between closing the client's connection and stopping httpd (Server.stop).
CLOSE_SETTLE = 0.05
HTTP_TIMEOUT = 30.0

# Lines of the error log that indicate a problem (httpd's own, and journal-worker's, which
# start with their level: "[error] JR06030: ...").
PROBLEM_RE = re.compile(
    r":(?:error|crit|alert|emerg)\]|^\[error\] "
    r"|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:"
    r"|exit signal|Segmentation|AH00060"
)
# A crash or a sanitizer report: a problem that no test may declare expected.
SANITIZER_RE = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer"
                          r"|runtime error:")
CRASH_RE = re.compile(SANITIZER_RE.pattern + r"|exit signal|Segmentation|AH00060|dumped core")
# LeakSanitizer could not stop the process to look at it (its tracer was refused ptrace): no leak
# was found or missed, the check did not run. Not a finding about the code: such lines are
# counted and reported (pytest's summary, make check's summary) instead of failing the test, with
# the role of the process, so that a machine that refuses the check is visible, never silent.
LSAN_NOT_RUN_RE = re.compile(r"==(\d+)==(?:LeakSanitizer has encountered a fatal error"
                             r"|HINT: (?:LeakSanitizer does not work under ptrace"
                             r"|For debugging, try setting environment variable LSAN_OPTIONS))")
LSAN_NOT_RUN = []  # "pid P (role) in DIR" of every process whose leak check could not run
# A test allows only the lines it provokes: each allowed pattern names the exact tag of its line
# (the module's JRnnnnn, httpd's AHnnnnn) or, for the few untagged lines of httpd's own modules,
# starts with the line's [module:level]. A pattern that could allow any message is refused.
ALLOWED_PATTERN_RE = re.compile(r"(?:JR|AH)\d{5}|^\\\[(?!journal:)[a-z_]+:[a-z]+\\\]")
LSAN_HTTPD_SUPP = REPO / "tests" / "sanitizers" / "lsan-httpd.supp"

HEALTH_DATABASE = {"sqlite": "sqlite3", "pgsql": "pgsql"}  # /api/health "database" per kind

TOKEN_RE = re.compile(r"^[0-9a-fA-F]{64}$")


def uniq(prefix="x"):
    """A name that is unique for the whole run (test data on the shared server)."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def random_ip():
    """A client address of its own (sent as X-Forwarded-For), so that failed logins of one test
    never count against the loopback address every other test uses."""
    return f"10.{random.randint(0, 255)}.{random.randint(0, 255)}.{random.randint(1, 254)}"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bindir():
    dirs = glob.glob("/usr/lib/postgresql/*/bin")
    if not dirs:
        raise RuntimeError("PostgreSQL client binaries not found under /usr/lib/postgresql/*/bin")

    def version(d):
        return [int(x) if x.isdigit() else 0 for x in Path(d).parent.name.split(".")]

    return sorted(dirs, key=version)[-1]


def pg_run(tool, *args, check=True):
    """Runs a PostgreSQL client tool against the test cluster as user postgres."""
    if not PG_PORT:
        raise RuntimeError("JOURNAL_TEST_DB=pgsql needs JOURNAL_TEST_PG_PORT")
    cmd = [os.path.join(pg_bindir(), tool), "-h", "127.0.0.1", "-p", PG_PORT, "-U", "postgres"]
    cmd += list(args)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return proc


def psql(sql, dbname="postgres", check=True):
    """Runs SQL with psql; returns the CompletedProcess (unaligned, tuples only output)."""
    return pg_run("psql", "-d", dbname, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql,
                  check=check)


@functools.lru_cache(maxsize=None)
def _libasan():
    return subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                          text=True, check=True).stdout.strip()


def apache_env():
    """Environment for every apache2 invocation (start, stop, -t). Under the sanitizers leak
    detection is on; httpd's own leaks at exit are suppressed by name (see the file). The fast
    unwinder records allocation stacks: the slow one, on every malloc of httpd, tripled the
    CPU time of the sanitized runs (docs/testing.md)."""
    env = dict(os.environ)
    if SANITIZE:
        env["LD_PRELOAD"] = _libasan()
        # use_sigaltstack=0: as for the unit tests (scripts/check.sh), GCC 12's libasan reports
        # its own sigaltstack call when a thread the module started ends (the event streams'
        # notifier, at a child's exit) as an overflow in the sanitizer runtime.
        env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:use_sigaltstack=0"
        env["LSAN_OPTIONS"] = f"suppressions={LSAN_HTTPD_SUPP}:print_suppressions=0"
        env["UBSAN_OPTIONS"] = "print_stacktrace=1"
    return env


def _allow_core_dumps():
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def _run_recording_pid(argv, env, timeout, preexec_fn=None):
    """subprocess.run(capture_output=True, text=True) that also tells the child's pid."""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env, preexec_fn=preexec_fn) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            raise
    done = subprocess.CompletedProcess(argv, p.returncode, out, err)
    done.pid = p.pid
    return done


def cli_env():
    """Environment for journal-admin: under the sanitizers, leak detection without any
    suppression (the CLI is our code)."""
    env = dict(os.environ)
    if SANITIZE:
        env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0"
        env.pop("LSAN_OPTIONS", None)
        env["UBSAN_OPTIONS"] = "print_stacktrace=1"
    return env


def sanitizer_lines(text):
    """Lines of a sanitizer report in a process's output."""
    return [l for l in text.splitlines() if SANITIZER_RE.search(l)]


def _become_subreaper():
    """Orphaned httpd daemons re-parent to this process (not to an init that may never reap
    them), so stop() can reap them and no zombies are left behind."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:
        pass


_become_subreaper()


def _pid_alive(pid):
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False  # our (adopted) child, now reaped
    except ChildProcessError:
        pass  # not our child
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie nobody reaps (e.g. a container without an init) counts as gone.
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("State:"):
                    return "Z" not in line.split()[1]
    except OSError:
        return False
    return True


class Server:
    """One httpd instance with mod_journal and its own database."""

    def __init__(self, extra_conf="", label="fresh"):
        self.extra_conf = extra_conf
        self.label = label
        self.allowed_log_patterns = []  # regexes of expected problem lines
        self.admin_username = "admin"
        self.admin_password = "Adm1n-" + uuid.uuid4().hex[:16]
        self.started = False
        self.pid = None
        self.had_problems = False  # unexpected problem lines were reported at some point
        self._admin_created = False
        self._admin_token = None
        self._log_offset = 0
        self.control_problems = []  # sanitizer lines of apache2 -k start/stop and -t runs
        self.stuck_stacks = []  # stacks of httpd children that had not exited STUCK_AFTER s into a stop
        self.roles = {}  # pid -> "apache2 -k start" / "httpd parent", for LSAN_NOT_RUN
        self.http = None
        self._prepare()

    # ---- setup --------------------------------------------------------------------------
    def _prepare(self):
        for path in (MODULE, ADMIN_CLI):
            if not path.exists():
                raise FileNotFoundError(
                    f"{path} does not exist: build first (make build) or set JOURNAL_BUILD_DIR")
        self.root = Path(tempfile.mkdtemp(prefix=f"jr-api-{self.label}-"))
        os.chmod(self.root, 0o755)
        self.conf_d = self.root / "conf.d"
        self.run_dir = self.root / "run"
        self.log_dir = self.root / "logs"
        self.data_dir = self.root / "data"
        self.doc_root = self.root / "htdocs"
        self.core_dir = self.root / "cores"
        for d in (self.conf_d, self.run_dir, self.log_dir, self.data_dir, self.doc_root,
                  self.core_dir):
            d.mkdir()
            os.chmod(d, 0o755)
        # A child that crashes leaves its core here (the sanitizers turn core files off):
        # new_log_problems() puts its backtrace into the failure text.
        os.chmod(self.core_dir, 0o1777)
        (self.conf_d / "00-diagnostics.conf").write_text(f'CoreDumpDirectory "{self.core_dir}"\n')
        if IS_ROOT:
            self.user = self.group = "www-data"
            self._chown_tree(self.data_dir)
            self._chown_tree(self.log_dir)
        else:
            self.user = pwd.getpwuid(os.getuid()).pw_name
            self.group = grp.getgrgid(os.getgid()).gr_name
        # httpd loads a private copy of the module: a rebuild that rewrites build/mod_journal.so
        # in place while a server runs would otherwise crash that server.
        self.module = self.root / "mod_journal.so"
        shutil.copy2(MODULE, self.module)
        self.conf_file = self.root / "httpd.conf"
        self.error_log = self.log_dir / "error.log"
        self.pid_file = self.run_dir / "httpd.pid"

        self.db_kind = DB_KIND
        self.pg_dbname = None
        if DB_KIND == "sqlite":
            self.dbd_driver = "sqlite3"
            self.db_path = self.data_dir / "journal.db"
            self.dbd_params = str(self.db_path)
        elif DB_KIND == "pgsql":
            self.dbd_driver = "pgsql"
            self.db_path = None
            self.pg_dbname = "jr_test_" + uuid.uuid4().hex[:12]
            pg_run("createdb", self.pg_dbname)
            self.dbd_params = f"host=127.0.0.1 port={PG_PORT} dbname={self.pg_dbname} user=postgres"
        else:
            raise ValueError(f"JOURNAL_TEST_DB must be sqlite or pgsql, not {DB_KIND!r}")
        (self.conf_d / "extra.conf").write_text(self.extra_conf + "\n")
        self._render(free_port())

    def _render(self, port):
        """Renders httpd.conf for the given port."""
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}"
        env = dict(os.environ)
        env.update({
            "JR_SERVER_ROOT": str(self.root),
            "JR_PORT": str(self.port),
            "JR_RUN_DIR": str(self.run_dir),
            "JR_LOG_DIR": str(self.log_dir),
            "JR_LOG_LEVEL": "warn",
            "JR_MODULE": str(self.module),
            "JR_USER": self.user,
            "JR_GROUP": self.group,
            "JR_DBD_DRIVER": self.dbd_driver,
            "JR_DBD_PARAMS": self.dbd_params,
            "JR_DATA_DIR": str(self.data_dir),
            "JR_DOC_ROOT": str(self.doc_root),
        })
        # The template's header comment mentions the placeholder syntax as "@NAME@", which
        # render-conf.sh also substitutes: keep it as it is.
        env.setdefault("JR_NAME", "@NAME@")
        with open(self.conf_file, "w") as out:
            subprocess.run([str(RENDER), str(TEMPLATE)], stdout=out, env=env, check=True)

    @staticmethod
    def _chown_tree(path):
        if not IS_ROOT:
            return
        uid = pwd.getpwnam("www-data").pw_uid
        gid = grp.getgrnam("www-data").gr_gid
        os.chown(path, uid, gid)
        for dirpath, dirnames, filenames in os.walk(path):
            for name in dirnames + filenames:
                os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)

    def admin_cli(self, *args, password=None, check=False):
        """Runs journal-admin on this server's database."""
        env = cli_env()
        if password is not None:
            env["JOURNAL_PASSWORD"] = password
        cmd = [str(ADMIN_CLI), "--driver", self.dbd_driver, "--params", self.dbd_params, *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        bad = sanitizer_lines(proc.stderr)
        if bad:
            raise RuntimeError(f"{' '.join(cmd)}: sanitizer report:\n{proc.stderr}")
        if check and proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n"
                               f"stdout: {proc.stdout}\nstderr: {proc.stderr}")
        if self.db_kind == "sqlite":
            self._chown_tree(self.data_dir)  # the CLI ran as root and created files
        return proc

    def config_test(self):
        """`apache2 -t` on the rendered configuration."""
        proc = subprocess.run([APACHE, "-t", "-d", str(self.root), "-f", str(self.conf_file)],
                              capture_output=True, text=True, env=apache_env(), timeout=60)
        self.control_problems += sanitizer_lines(proc.stdout + proc.stderr)
        return proc

    # ---- lifecycle ------------------------------------------------------------------------
    def use_existing_admin(self, username, password):
        """The database already has this admin (a test built it): start() creates none."""
        self.admin_username, self.admin_password = username, password
        self._admin_created = True
        self._admin_token = None

    def start(self, health=200):
        """Starts httpd and waits until /api/health answers `health` (200: ready; None: any
        status, for a server that is not expected to be ready)."""
        if self.started:
            return
        if not self._admin_created:
            self.admin_cli("create-user", self.admin_username, "--role", "admin",
                           password=self.admin_password, check=True)
            self._admin_created = True
        if self.db_kind == "sqlite":
            self._chown_tree(self.data_dir)
        for attempt in range(5):
            proc = _run_recording_pid([APACHE, "-d", str(self.root), "-f", str(self.conf_file),
                                       "-k", "start"], env=apache_env(), timeout=60,
                                      preexec_fn=None if SANITIZE else _allow_core_dumps)
            self.roles[proc.pid] = "apache2 -k start, which forks the daemon and exits"
            # The port was free when chosen, but another process may have taken it since.
            if "could not bind" in proc.stderr or "Address already in use" in proc.stderr:
                self._render(free_port())
                continue
            self.control_problems += sanitizer_lines(proc.stdout + proc.stderr)
            if proc.returncode != 0:
                self._adopt_stray_daemon()
                raise RuntimeError(f"apache2 -k start exited {proc.returncode}:\n{proc.stdout}"
                                   f"{proc.stderr}\n--- error.log ---\n{self.read_error_log()}")
            break
        else:
            raise RuntimeError(f"apache2 could not bind a port:\n{proc.stderr}")
        self.started = True  # from here on stop() must run, whatever happens
        self.http = requests.Session()
        deadline = time.monotonic() + START_TIMEOUT
        last = None
        while True:
            try:
                r = self.http.get(self.base_url + "/api/health", timeout=2)
                if health in (r.status_code, None) and self._read_pid():
                    break
                last = f"HTTP {r.status_code}: {r.text[:500]}"
            except requests.RequestException as e:
                last = repr(e)
            if time.monotonic() > deadline:
                raise RuntimeError(f"httpd on port {self.port}: no health {health} after "
                                   f"{START_TIMEOUT}s "
                                   f"(last: {last})\n--- error.log ---\n{self.read_error_log()}")
            time.sleep(0.05)
        self.pid = self._read_pid()
        self.roles[self.pid] = "httpd parent"
        # The server must run on the database the suite was asked for: a PostgreSQL run that
        # quietly ran on SQLite would prove nothing about PostgreSQL.
        database = r.json().get("database")
        if (database is not None or health == 200) and database != HEALTH_DATABASE[self.db_kind]:
            raise RuntimeError(f"/api/health says database {database!r}, the suite runs on "
                               f"{HEALTH_DATABASE[self.db_kind]!r}: {r.text[:300]}")

    def _adopt_stray_daemon(self):
        """After a failed `apache2 -k start` the daemon may run all the same (a sanitizer
        report makes the process that detaches exit non-zero): stop() must then end it."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            pid = self._read_pid()
            if pid and _pid_alive(pid):
                self.started = True
                return
            time.sleep(0.1)

    def _read_pid(self):
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def stop(self):
        if not self.started:
            return
        if self.http is not None:
            # Closing the connection hands its end to a worker of httpd. A hard stop that
            # arrives while a worker ends a connection can crash the child (httpd 2.4.71's
            # close_worker_sockets() reads the socket of a connection whose pool the worker
            # is destroying; docs/operations.md, "Stopping httpd"): the worker is given a
            # moment first. A graceful stop would avoid the race, but httpd's parent looks
            # for its children once a second, and every test server stops.
            self.http.close()
            self.http = None
            time.sleep(CLOSE_SETTLE)
        pid = self._read_pid() or self.pid
        proc = _run_recording_pid([APACHE, "-d", str(self.root), "-f", str(self.conf_file),
                                   "-k", "stop"], env=apache_env(), timeout=60)
        self.roles[proc.pid] = "apache2 -k stop"
        self.control_problems += sanitizer_lines(proc.stdout + proc.stderr)
        if pid is None:
            self.started = False
            raise RuntimeError(f"no pid for httpd in {self.root}; apache2 -k stop said: "
                               f"{proc.stdout}{proc.stderr}")
        if proc.returncode != 0 and _pid_alive(pid):
            os.kill(pid, signal.SIGTERM)
        began = time.monotonic()
        deadline = began + STOP_TIMEOUT
        looked = False
        while _pid_alive(pid):
            if not looked and time.monotonic() > began + STUCK_AFTER:
                looked = True
                self._look_at_stuck_children(pid)
            if time.monotonic() > deadline:
                try:
                    os.killpg(pid, signal.SIGKILL)  # httpd runs in its own session
                except OSError:
                    os.kill(pid, signal.SIGKILL)
                self.started = False
                raise RuntimeError("\n".join([f"httpd pid {pid} did not stop within "
                                               f"{STOP_TIMEOUT}s"] + self.stuck_stacks))
            time.sleep(0.05)
        self.started = False
        self.pid = None

    def _look_at_stuck_children(self, parent):
        self.stuck_stacks += self.children_stacks(
            parent, f"had not exited {STUCK_AFTER:.0f} s into the stop")

    def children_stacks(self, parent=None, why="is running"):
        """The condensed thread stacks of httpd's children, for a failure's message."""
        lines = []
        for kid in diagnostics.children_of(parent or self._read_pid() or self.pid):
            if diagnostics.command_of(kid).startswith(APACHE):
                lines.append(f"httpd child {kid} {why}; its threads:")
                lines += ["    " + l for l in diagnostics.live_stacks(kid)]
        return lines

    def _crash_details(self, problems):
        """Backtraces of the cores of crashed children, and the stacks of children that did
        not end at a stop, when the problems show either."""
        details = []
        if any("exit signal" in l or "dumped core" in l for l in problems):
            for core in diagnostics.core_files(self.core_dir):
                details.append(f"backtrace of {core}:")
                details += ["    " + l for l in diagnostics.core_stacks(APACHE, core)]
        if any("AH00046" in l for l in problems):
            details += self.stuck_stacks
        self.stuck_stacks = []
        return details

    def finish(self):
        """Stops the server; returns the unexpected problem lines of its error log and removes
        its temp dir (kept when there were problems), also when stopping failed."""
        try:
            self.stop()
        finally:
            problems = self.new_log_problems()
            self.cleanup()
        return problems

    def restart(self):
        """Stop and start again; the data (and the sessions) are kept."""
        self.stop()
        self.start()

    def cleanup(self, keep=False):
        """Removes the temp dir and drops the PostgreSQL database, unless kept (asked for, or
        the error log had problems)."""
        if keep or KEEP_TMP or self.had_problems:
            return
        shutil.rmtree(self.root, ignore_errors=True)
        if self.pg_dbname:
            pg_run("dropdb", "--if-exists", "--force", self.pg_dbname, check=False)

    # ---- error log ------------------------------------------------------------------------
    def read_error_log(self):
        try:
            return self.error_log.read_bytes().decode("utf-8", "replace")
        except OSError:
            return "(no error log)"

    def error_log_problems(self):
        """All problem lines of the error log (unfiltered)."""
        return [l for l in self.read_error_log().splitlines() if PROBLEM_RE.search(l)]

    def new_log_problems(self):
        """Problem lines that appeared since the previous call and match no allowed pattern."""
        for p in self.allowed_log_patterns:
            if not ALLOWED_PATTERN_RE.search(p):
                raise ValueError(f"allowed log pattern {p!r} names no exact tag (JRnnnnn, "
                                 "AHnnnnn) nor the [module:level] of an untagged line")
        try:
            data = self.error_log.read_bytes()
        except OSError:
            return []
        chunk = data[self._log_offset:]
        end = chunk.rfind(b"\n") + 1  # only complete lines; the rest is read next time
        self._log_offset += end
        lines = self._set_aside_lsan_not_run(chunk[:end].decode("utf-8", "replace").splitlines())
        allowed = [re.compile(p) for p in self.allowed_log_patterns]
        problems = [l for l in lines if PROBLEM_RE.search(l)
                    and (CRASH_RE.search(l) or not any(p.search(l) for p in allowed))]
        problems += [f"(apache2 control process) {l}"
                     for l in self._set_aside_lsan_not_run(self.control_problems)]
        self.control_problems = []
        problems += self._crash_details(problems)
        self.had_problems = self.had_problems or bool(problems)
        return problems

    def _set_aside_lsan_not_run(self, lines):
        """Removes LeakSanitizer's "could not run" lines, recording each process once."""
        kept = []
        for l in lines:
            m = LSAN_NOT_RUN_RE.search(l)
            if not m:
                kept.append(l)
                continue
            if "fatal error" in l:
                pid = int(m.group(1))
                role = self.roles.get(pid, "an httpd child, a journal-worker or apache2 -t")
                note = f"pid {pid} ({role}) in {self.root}"
                LSAN_NOT_RUN.append(note)
                report = os.environ.get("JOURNAL_LSAN_NOT_RUN_FILE")
                if report:
                    with open(report, "a") as f:
                        f.write(note + "\n")
        return kept

    def crash_lines(self):
        """Every line of the whole error log that tells of a crash or a sanitizer report."""
        return [l for l in self.read_error_log().splitlines()
                if CRASH_RE.search(l) and not LSAN_NOT_RUN_RE.search(l)]

    # ---- HTTP client ----------------------------------------------------------------------
    def api(self, method, path, token=None, json=None, headers=None, data=None, ip=None,
            params=None, timeout=HTTP_TIMEOUT):
        """One request to this server. `token` -> X-Auth-Token, `ip` -> X-Forwarded-For."""
        if self.http is None:
            self.http = requests.Session()
        h = dict(headers or {})
        if token is not None:
            h["X-Auth-Token"] = token
        if ip is not None:
            h["X-Forwarded-For"] = ip
        return self.http.request(method, self.base_url + path, json=json, data=data,
                                 headers=h, params=params, timeout=timeout)

    def login(self, username, password, ip=None):
        r = self.api("POST", "/api/auth/login", json={"username": username, "password": password},
                     ip=ip)
        assert r.status_code == 200, f"login of {username!r} failed: {r.status_code} {r.text}"
        return r.json()["token"]

    @property
    def admin_token(self):
        if self._admin_token is None:
            self._admin_token = self.login(self.admin_username, self.admin_password)
        return self._admin_token

    # ---- test data helpers (all via the API, as admin) -------------------------------------
    def create_branch(self, name=None):
        r = self.api("POST", "/api/branches", token=self.admin_token,
                     json={"name": name or uniq("branch")})
        assert r.status_code == 201, f"create branch: {r.status_code} {r.text}"
        return r.json()

    def create_user(self, role="tutor", branch_ids=(), username=None, password=None,
                    active=None):
        """Creates a user; returns its record with the plain password added as `_password`."""
        password = password or "pw-" + uuid.uuid4().hex[:12]
        body = {"username": username or uniq("user"), "password": password, "role": role,
                "branch_ids": list(branch_ids)}
        if active is not None:
            body["active"] = active
        r = self.api("POST", "/api/users", token=self.admin_token, json=body)
        assert r.status_code == 201, f"create user: {r.status_code} {r.text}"
        user = r.json()
        user["_password"] = password
        return user

    def create_tutor(self, branch_ids=()):
        """A tutor for the given branches and a session token: (user, token)."""
        user = self.create_user(role="tutor", branch_ids=branch_ids)
        return user, self.login(user["username"], user["_password"])

    def create_group(self, branch_id, name=None, tutor_id=None):
        body = {"name": name or uniq("group"), "branch_id": branch_id}
        if tutor_id is not None:
            body["tutor_id"] = tutor_id
        r = self.api("POST", "/api/groups", token=self.admin_token, json=body)
        assert r.status_code == 201, f"create group: {r.status_code} {r.text}"
        return r.json()

    def create_api_key(self, scopes, rate_limit_per_min, name=None):
        """An API key of the admin with these scopes: its secret."""
        r = self.api("POST", "/api/api-keys", token=self.admin_token,
                     json={"name": name or uniq("key"), "scopes": list(scopes),
                           "rate_limit_per_min": rate_limit_per_min})
        assert r.status_code == 201, f"create API key: {r.status_code} {r.text}"
        return r.json()["key"]


# ---- direct database access: states the API cannot create, checks it cannot show -------------
def _chown_sqlite(srv):
    if IS_ROOT and srv.db_kind == "sqlite":  # the server (www-data) keeps writing its files
        uid = pwd.getpwnam("www-data").pw_uid
        gid = grp.getgrnam("www-data").gr_gid
        for p in srv.data_dir.glob("journal.db*"):
            os.chown(p, uid, gid)


def bump_generation(srv):
    """Raises the SQLite database's write generation (<db>-gen) as the module's writers do,
    holding the write queue (<db>-wq): the response cache then drops what it kept. A write
    made here outside the module is otherwise invisible to it (PostgreSQL sees every write)."""
    base = str(srv.db_path)
    wq = os.open(base + "-wq", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(wq, fcntl.LOCK_EX)
        gen = os.open(base + "-gen", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            raw = os.pread(gen, 8, 0).ljust(8, b"\0")
            os.pwrite(gen, struct.pack("=Q", struct.unpack("=Q", raw)[0] + 1), 0)
        finally:
            os.close(gen)
    finally:
        os.close(wq)  # releases the flock


def sql_exec(srv, *statements):
    """Runs statements in one transaction on the server's database (SQLite file or
    PostgreSQL database)."""
    if srv.db_kind == "sqlite":
        con = sqlite3.connect(str(srv.db_path), timeout=30)
        try:
            with con:
                for st in statements:
                    con.execute(st)
        finally:
            con.close()
        bump_generation(srv)
        _chown_sqlite(srv)
    else:
        psql("; ".join(statements), dbname=srv.pg_dbname)


def sql_script(srv, script):
    """Runs a script of several statements (a migration file, say) in one transaction."""
    if srv.db_kind == "sqlite":
        con = sqlite3.connect(str(srv.db_path), timeout=30)
        try:
            con.executescript("BEGIN;\n" + script + "\nCOMMIT;")
        finally:
            con.close()
        bump_generation(srv)
        _chown_sqlite(srv)
    else:
        psql("BEGIN;\n" + script + "\nCOMMIT;", dbname=srv.pg_dbname)


def sql_scalar(srv, query):
    """The first value of a query, as text (None for SQL NULL or no row)."""
    if srv.db_kind == "sqlite":
        con = sqlite3.connect(str(srv.db_path), timeout=30)
        try:
            row = con.execute(query).fetchone()
        finally:
            con.close()
        return None if row is None or row[0] is None else str(row[0])
    out = psql(query, dbname=srv.pg_dbname).stdout.strip()
    return out if out else None


def sql_int(srv, query):
    return int(sql_scalar(srv, query))


# ---- assertions -----------------------------------------------------------------------------
def _describe(r):
    return f"{r.request.method} {r.request.path_url} -> {r.status_code} {r.text[:600]!r}"


def assert_json(r, status):
    """Asserts the status and a JSON content type; returns the decoded body."""
    assert r.status_code == status, f"expected {status}: {_describe(r)}"
    ctype = r.headers.get("Content-Type", "")
    assert ctype.split(";")[0].strip().lower() == "application/json", \
        f"Content-Type {ctype!r}: {_describe(r)}"
    try:
        return r.json()
    except ValueError:
        raise AssertionError(f"body is not JSON: {_describe(r)}") from None


def assert_error(r, status, *mentions):
    """Asserts an error response {"error": "..."} whose message names every `mentions` word."""
    body = assert_json(r, status)
    assert isinstance(body, dict) and isinstance(body.get("error"), str) and body["error"], \
        f"no error message: {_describe(r)}"
    for word in mentions:
        assert word.lower() in body["error"].lower(), \
            f"error message does not name {word!r}: {_describe(r)}"
    return body


def assert_ok(r):
    """Asserts 200 {"ok": true}."""
    body = assert_json(r, 200)
    assert body == {"ok": True}, _describe(r)

