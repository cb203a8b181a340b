"""journal-worker's job mechanics through the real httpd, which starts and supervises the
workers (req-9 section 1): a job is done exactly once whatever happens to the workers (httpd's
stop or graceful restart sends SIGTERM, which finishes or gives back the jobs in flight; a
worker killed with SIGKILL is restarted after its back-off delay and its lease reclaimed),
three workers share one queue of 1,000 jobs, a queued job is picked up at once without
polling. The standalone mode (a worker started from a settings file without httpd) and the
program's exit statuses."""

import functools
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import harness
from harness import REPO, uniq
from worker_support import (  # noqa: F401 (fixtures)
    WORKER_BIN, Worker, api, cmdline, events, execute, fake_llm, get_entry, get_report, job,
    new_entry, new_group, new_report, rows, set_settings, settings_text, started_at, wait_for,
    wait_status, worker_env, write_private)


def entry_waiter(srv):
    return functools.partial(get_entry, srv)


def ai_statuses(srv, entry_id):
    return [p["status"] for t, p in events(srv, "entry", entry_id) if t == "ai_status"]


def rewrites(srv, entity_id):
    """Audit rows of the AI rewrites of a record: one per applied answer."""
    return int(rows(srv, "SELECT COUNT(*) FROM audit_log WHERE action = 'ai_rewrite' AND"
                         f" entity_id = '{entity_id}'")[0][0])


def two_checks_in_flight(srv, fake):
    """Two checks running when this returns: (quick, slow) entries. The fake holds quick's
    request until it is released (release_on_stop: once the worker has its SIGTERM, so it
    ends within the worker's 2 s of grace); slow's first request hangs 30 s, longer than any
    grace (a second one is answered at once)."""
    g = new_group(srv)
    quick = new_entry(srv, g["id"], f"[[hold]] quick {uniq('q')}")
    slow = new_entry(srv, g["id"], f"[[hang:30:1]] slow {uniq('s')}")
    wait_for(lambda: fake.count(quick["description"]) == 1 and
             fake.count(slow["description"]) == 1, what="both requests")
    assert get_entry(srv, slow["id"])["ai_status"] == "processing"
    return quick, slow


def release_on_stop(fake, output):
    """Lets quick's request go as soon as the worker logged its SIGTERM (JR06004)."""
    return fake.release_when(lambda: "JR06004: stopping" in output())


def assert_finished_once(env, quick, slow):
    """quick was finished by the stopping worker; slow was given back (pending at once, the
    attempt refunded) and done by a new worker: each answer applied exactly once."""
    srv, fake = env.srv, env.fake
    for e in (quick, slow):
        got = wait_status(entry_waiter(srv), e["id"], "done")
        assert got["description"] == "AI: " + e["description"]
        assert rewrites(srv, e["id"]) == 1
        assert int(job(srv, "entry", e["id"])["attempts"]) == 1
    assert fake.count(quick["description"]) == 1
    assert fake.count(slow["description"]) == 2
    assert ai_statuses(srv, quick["id"]) == ["pending", "processing", "done"]
    assert ai_statuses(srv, slow["id"]) == ["pending", "processing", "pending", "processing",
                                            "done"]


def test_graceful_restart_with_jobs_in_flight(worker_env):
    env = worker_env(timeout=40)
    quick, slow = two_checks_in_flight(env.srv, env.fake)
    [old] = env.pids()
    releaser = release_on_stop(env.fake, env.output)
    [new] = env.graceful()
    releaser.join()
    assert new != old
    assert "JR06015: stopping: 1 job(s) finished, 1 given back" in env.output()
    assert_finished_once(env, quick, slow)


def test_httpd_stop_finishes_or_gives_back(worker_env):
    env = worker_env(timeout=40)
    srv = env.srv
    quick, slow = two_checks_in_flight(srv, env.fake)
    releaser = release_on_stop(env.fake, env.output)
    env.stop()  # within the supervisor's 5 s: no SIGKILL (checked by env.stop)
    releaser.join()
    assert "JR06015: stopping: 1 job(s) finished, 1 given back" in env.output()
    assert get_entry_db(srv, quick["id"]) == "done"
    j = job(srv, "entry", slow["id"])
    assert (j["status"], j["attempts"], j["lease_owner"], j["lease_until"]) == \
        ("pending", "0", None, None)
    assert get_entry_db(srv, slow["id"]) == "pending"
    env.start(1)  # the next start takes it at once, without waiting for a lease
    assert_finished_once(env, quick, slow)


def get_entry_db(srv, entry_id):
    return rows(srv, f"SELECT ai_status FROM entries WHERE id = {entry_id}")[0][0]


def test_kill9_mid_job_is_finished_once(worker_env):
    env = worker_env(timeout=20)
    srv, fake = env.srv, env.fake
    set_settings(srv, lesson_ai_enabled="true")
    g = new_group(srv)
    text = f"[[hang:2]] we read {uniq('k')}"
    r = new_report(srv, g["id"], text, "2026-06-01", "Reading 1/2")
    wait_for(lambda: fake.count(text) == 1, what="the first request")
    [pid] = env.pids()
    t0 = time.monotonic()
    new = env.kill9(pid)  # httpd starts another
    # ... after a first back-off delay of 1 s, which the new process waits out itself
    assert cmdline(new)[1:] == ["--config", str(env.config), "--instance", "1", "--delay", "1"]
    got = wait_status(functools.partial(get_report, srv), r["id"], "done", timeout=25)
    # the dead worker's lease is reclaimed at once on its host, not after 30 s
    assert time.monotonic() - t0 < 20
    [first, second] = fake.for_text(text)
    assert second["t"] - started_at(new) >= 1.0 - 0.02, "the delay was not waited out"
    assert got["text"] == "AI: " + text
    assert fake.count(text) == 2  # sent again by the new worker, applied once
    versions = api(srv, "GET", f"/api/lesson-reports/{r['id']}/versions", status=200)
    assert [v["source"] for v in versions] == ["ai", "create"]
    assert rewrites(srv, r["id"]) == 1
    done = [p for typ, p in events(srv, "lesson_report", r["id"])
            if typ == "lesson_report_status" and p["status"] == "done"]
    formatted = [p for typ, p in events(srv, "lesson_report", r["id"])
                 if typ == "lesson.ai.formatted"]
    assert len(done) == 1 and len(formatted) == 1
    assert int(job(srv, "lesson_report", r["id"])["attempts"]) == 2
    status = api(srv, "GET", "/api/ai/status", status=200)["workers"]
    assert (status["running"], status["restarts"]) == (1, 1), status
    assert "JR00101" in env.output()


def queue_sql(srv, group, n, tag):
    """The statements of queue_entries."""
    ent = (f"INSERT INTO entries (student_name, group_id, branch_id, description, ai_status,"
           f" created_at, updated_at) SELECT 'S', {group['id']}, {group['branch_id']},"
           f" '{tag} ' || v, 'pending', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z' FROM ")
    ent += (f"generate_series(1, {n}) v" if srv.db_kind == "pgsql" else
            f"(WITH RECURSIVE k(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM k WHERE v < {n})"
            f" SELECT v FROM k)")
    jobs = ("INSERT INTO ai_jobs (entity_type, entity_id, branch_id, status, attempts,"
            " created_at, updated_at) SELECT 'entry', id, branch_id, 'pending', 0,"
            f" created_at, created_at FROM entries WHERE description LIKE '{tag} %'")
    if srv.db_kind == "pgsql":  # a writer outside the module wakes the workers itself (0015)
        return ent, jobs, "NOTIFY journal_ai"
    return ent, jobs


def queue_entries(srv, group, n, tag):
    """n entries with an open check each, written in one transaction by another client."""
    execute(srv, *queue_sql(srv, group, n, tag))


def test_three_workers_share_a_thousand_jobs(worker_env):
    env = worker_env(workers=3, concurrency=8, log_level="debug")
    srv, fake = env.srv, env.fake
    g = new_group(srv)
    tag = uniq("bulk")
    t0 = time.monotonic()
    queue_entries(srv, g, 1000, tag)
    done = f"SELECT COUNT(*) FROM entries WHERE description LIKE 'AI: {tag} %' AND" \
           " ai_status = 'done'"
    wait_for(lambda: rows(srv, done)[0][0] == "1000", timeout=120, interval=0.2,
             what="1000 jobs done")
    took = time.monotonic() - t0
    counts = {t: c for t, c in fake.counts().items() if t.startswith(tag + " ")}
    assert len(counts) == 1000, len(counts)  # none lost
    assert set(counts.values()) == {1}, {t: c for t, c in counts.items() if c != 1}
    assert rows(srv, "SELECT status, MIN(attempts), MAX(attempts), COUNT(*) FROM ai_jobs"
                     " GROUP BY status") == [["done", "1", "1", "1000"]]
    # each worker logs its claims with its lease owner "host:pid:n" (JR06016, debug)
    per = {}
    for m in re.finditer(r"\] JR06016: claimed (\d+) of \d+ ai job\(s\) as [^:\s]+:(\d+):",
                         env.output()):
        per[int(m.group(2))] = per.get(int(m.group(2)), 0) + int(m.group(1))
    assert sum(per.values()) == 1000 and set(per) <= set(env.pids()), (per, env.pids())
    assert sum(1 for n in per.values() if n > 0) >= 2, per
    for instance in (1, 2, 3):
        assert f"JR06001: worker {instance} started" in env.output()
    print(f"1000 jobs, 3 workers: {took:.1f} s; claims per worker: {sorted(per.values())}")


def picked_up_after(srv, fake, action, text):
    """Seconds from an action's commit to the fake receiving text."""
    t0 = time.time()
    action()
    t1 = time.time()
    wait_for(lambda: fake.count(text) >= 1, timeout=30, interval=0.005, what=text)
    arrived = [r["t"] for r in fake.requests() if r["body"]["messages"][1]["content"] == text]
    return max(arrived[-1] - t1, 0.0), t1 - t0


def test_queued_jobs_are_picked_up_at_once(worker_env):
    env = worker_env()
    srv, fake = env.srv, env.fake
    g = new_group(srv)
    seed = new_entry(srv, g["id"], f"seed {uniq('w')}")
    wait_status(functools.partial(get_entry, srv), seed["id"], "done")
    samples = []
    for i in range(6):
        time.sleep(0.4)  # the worker sleeps: the safety poll is 30 s away
        text, made = f"created {uniq('w')}", {}
        samples.append(picked_up_after(
            srv, fake, lambda: made.update(new_entry(srv, g["id"], text)), text)[0])
        e = made
        wait_status(functools.partial(get_entry, srv), e["id"], "done")
        time.sleep(0.4)
        samples.append(picked_up_after(
            srv, fake, lambda: api(srv, "POST", f"/api/entries/{e['id']}/ai/recheck",
                                   status=200), "AI: " + text)[0])
        wait_status(functools.partial(get_entry, srv), e["id"], "done")
    # a job written by another client, straight into the database
    time.sleep(0.4)
    tag = uniq("direct")
    samples.append(picked_up_after(srv, fake, lambda: queue_entries(srv, g, 1, tag),
                                   f"{tag} 1")[0])
    samples.sort()
    print(f"pick-up after commit: median {statistics.median(samples) * 1000:.1f} ms,"
          f" max {samples[-1] * 1000:.1f} ms over {len(samples)}")
    # the aim is 100 ms at p95; a busy shared machine gets a wide margin, but nothing near
    # the 30 s safety poll passes
    assert samples[-1] < 2.0, samples


def test_standalone_worker_finishes_or_gives_back(fresh_server, fake_llm):
    """Without httpd (as the systemd unit runs it), from a settings file written by hand:
    SIGTERM finishes or gives back the jobs in flight, and the worker exits 0 within 5 s."""
    srv = fresh_server("JournalWorker Off")
    fake = fake_llm
    config = write_private(srv.root / "worker.conf", settings_text(srv, fake.endpoint, timeout=40))
    workers = [Worker(config, srv.log_dir / "worker-1.log", 1).start()]
    try:
        quick, slow = two_checks_in_flight(srv, fake)
        releaser = release_on_stop(fake, workers[0].output)
        rc, took = workers[0].stop()
        releaser.join()
        assert rc == 0 and took < 5, (rc, took)
        assert "JR06015: stopping: 1 job(s) finished, 1 given back" in \
            workers[0].output()
        assert get_entry(srv, quick["id"])["ai_status"] == "done"
        j = job(srv, "entry", slow["id"])
        assert (j["status"], j["attempts"], j["lease_owner"]) == ("pending", "0", None)
        # another worker takes it without waiting for a lease
        workers.append(Worker(config, srv.log_dir / "worker-2.log", 2).start())
        got = wait_status(entry_waiter(srv), slow["id"], "done")
        assert got["description"] == "AI: " + slow["description"]
        assert fake.count(slow["description"]) == 2 and rewrites(srv, slow["id"]) == 1
        assert (workers[1].stop()[0]) == 0
        for w in workers:
            assert "JR06005: worker" in w.output() and not w.problems(), w.output()
    finally:
        for w in workers:
            if w.alive():
                w.kill9()


SLOW_WAL = REPO / "tests" / "fakes" / "slow_wal.c"
WRITER = """import sqlite3, sys
con = sqlite3.connect(sys.argv[1], timeout=30)
with con:
    for st in sys.argv[2:]:
        con.execute(st)
"""


def test_a_commit_published_late_is_picked_up(worker_env, tmp_path):
    """SQLite: a commit that becomes visible well after the write to the -wal file that woke
    the worker (its writer was descheduled in between) is still picked up at once, not by
    the safety poll 30 s later."""
    env = worker_env()
    srv, fake = env.srv, env.fake
    if srv.db_kind != "sqlite":
        pytest.skip("PostgreSQL delivers its notification after the commit")
    shim = tmp_path / "slow_wal.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(shim), str(SLOW_WAL), "-ldl"],
                   check=True)
    g = new_group(srv)
    seed = new_entry(srv, g["id"], f"seed {uniq('w')}")
    wait_status(entry_waiter(srv), seed["id"], "done")
    time.sleep(0.5)  # idle: the later looks after the seed's commits are over
    tag = uniq("late")
    subprocess.run([sys.executable, "-c", WRITER, str(srv.db_path),
                    *queue_sql(srv, g, 1, tag)], check=True, timeout=60,
                   env={**os.environ, "LD_PRELOAD": str(shim)})
    visible = time.time()  # the writer has returned: its commit is visible
    wait_for(lambda: fake.count(f"{tag} 1") == 1, timeout=40, what="the late commit's job")
    [req] = fake.for_text(f"{tag} 1")
    assert req["t"] - visible < 2.0, req["t"] - visible


def run_worker(config, timeout=20):
    return subprocess.run([str(WORKER_BIN), "--config", str(config)], capture_output=True,
                          text=True, timeout=timeout)


def test_exit_statuses():
    d = Path(tempfile.mkdtemp(prefix="jr-worker-conf-"))
    try:
        conf = d / "w.conf"
        conf.write_text("db_driver = sqlite3\ndb_params = /nonexistent/x.db\n"
                        "data_dir = /tmp\nai_timeout = 5\nai_timout = 6\n")
        p = run_worker(conf)
        assert p.returncode == 2, p
        assert "[error] JR06007: configuration error" in p.stderr
        assert "line 5: unknown setting 'ai_timout'" in p.stderr
        conf.write_text("db_driver = sqlite3\ndb_params = x\ndata_dir = /tmp\n"
                        "ai_endpoint = http://127.0.0.1:9/v1\nai_model = m\n"
                        f"ai_key_file = {d}/missing.key\n")
        p = run_worker(conf)
        assert p.returncode == 2 and "missing.key" in p.stderr, p
        p = subprocess.run([str(WORKER_BIN)], capture_output=True, text=True, timeout=20)
        assert p.returncode == 2 and "--config" in p.stderr, p
        p = run_worker(d / "absent.conf")
        assert p.returncode == 2 and "absent.conf" in p.stderr, p
        # a database the module has not migrated: not a configuration error, and no migration
        empty = d / "empty.db"
        conf.write_text(f"db_driver = sqlite3\ndb_params = {empty}\ndata_dir = {d}\n")
        p = run_worker(conf)
        assert p.returncode == 1 and "JR06003" in p.stderr, p
        assert "schema_migrations" not in _tables(empty)
    finally:
        for f in d.iterdir():
            f.unlink()
        d.rmdir()


def _tables(path):
    import sqlite3
    con = sqlite3.connect(str(path))
    try:
        return [r[0] for r in con.execute("SELECT name FROM sqlite_master")]
    finally:
        con.close()
